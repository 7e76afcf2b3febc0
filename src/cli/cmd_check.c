/* SCAFFOLD: replaced by the real `pairsight check`. */
#include "cli/cli.h"

const char cmd_check_usage[] = "usage: pairsight check (not built yet)\n";

int cmd_check(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(CLI_USAGE, "check", "not built yet");
}
