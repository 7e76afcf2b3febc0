/* SCAFFOLD: replaced by the real `pairsight explain`. */
#include "cli/cli.h"

const char cmd_explain_usage[] = "usage: pairsight explain (not built yet)\n";

int cmd_explain(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(CLI_USAGE, "explain", "not built yet");
}
