/* SCAFFOLD: replaced by the real `pairsight adapt`. */
#include "cli/cli.h"

const char cmd_adapt_usage[] = "usage: pairsight adapt (not built yet)\n";

int cmd_adapt(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(CLI_USAGE, "adapt", "not built yet");
}
