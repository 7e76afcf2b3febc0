/* SCAFFOLD: replaced by the real `pairsight simulate`. */
#include "cli/cli.h"

const char cmd_simulate_usage[] = "usage: pairsight simulate (not built yet)\n";

int cmd_simulate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(CLI_USAGE, "simulate", "not built yet");
}
