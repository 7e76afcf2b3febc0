/* SCAFFOLD: replaced by the real `pairsight train`. */
#include "cli/cli.h"

const char cmd_train_usage[] = "usage: pairsight train (not built yet)\n";

int cmd_train(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(CLI_USAGE, "train", "not built yet");
}
