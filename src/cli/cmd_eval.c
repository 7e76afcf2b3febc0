/* SCAFFOLD: replaced by the real `pairsight eval`. */
#include "cli/cli.h"

const char cmd_eval_usage[] = "usage: pairsight eval (not built yet)\n";

int cmd_eval(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(CLI_USAGE, "eval", "not built yet");
}
