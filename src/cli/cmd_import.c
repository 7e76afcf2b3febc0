/* SCAFFOLD: replaced by the real `pairsight import`. */
#include "cli/cli.h"

const char cmd_import_usage[] = "usage: pairsight import (not built yet)\n";

int cmd_import(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(CLI_USAGE, "import", "not built yet");
}
