/* SCAFFOLD: replaced by the real `pairsight colocate`. */
#include "cli/cli.h"

const char cmd_colocate_usage[] = "usage: pairsight colocate (not built yet)\n";

int cmd_colocate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(CLI_USAGE, "colocate", "not built yet");
}
