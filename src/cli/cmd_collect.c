/* SCAFFOLD: replaced by the real `pairsight collect`. */
#include "cli/cli.h"

const char cmd_collect_usage[] = "usage: pairsight collect (not built yet)\n";

int cmd_collect(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(CLI_USAGE, "collect", "not built yet");
}
