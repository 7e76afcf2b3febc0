/* SCAFFOLD: replaced by the real `pairsight report`. */
#include "cli/cli.h"

const char cmd_report_usage[] = "usage: pairsight report (not built yet)\n";

int cmd_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(CLI_USAGE, "report", "not built yet");
}
