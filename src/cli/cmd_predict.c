/* SCAFFOLD: replaced by the real `pairsight predict`. */
#include "cli/cli.h"

const char cmd_predict_usage[] = "usage: pairsight predict (not built yet)\n";

int cmd_predict(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(CLI_USAGE, "predict", "not built yet");
}
