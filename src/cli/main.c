/* pairsight: one binary, one table of subcommands. */
#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const cli_command_t commands[] = {
    {"check", cmd_check, "validate CSV tables (ops, coexec, workloads, ...)", NULL},
    {"import", cmd_import, "convert an Nsight Compute CSV or PyTorch trace to ops.csv", NULL},
    {"simulate", cmd_simulate, "write a simulated profiling campaign (ops.csv, coexec.csv)", NULL},
    {"train", cmd_train, "train the PairSight segment model", NULL},
    {"predict", cmd_predict, "predict co-execution latencies of candidate segments", NULL},
    {"adapt", cmd_adapt, "continue training a model on a few new experiments", NULL},
    {"explain", cmd_explain, "show which operators drive one prediction", NULL},
    {"features", cmd_features, "write the exact feature rows the model reads for candidates", NULL},
    {"model", cmd_model, "a model's metadata (info) and its regressors for XGBoost (export)", NULL},
    {"eval", cmd_eval, "compare PairSight with the baselines; run the experiments", NULL},
    {"report", cmd_report, "write a self-contained HTML evaluation report", NULL},
    {"colocate", cmd_colocate, "workload-level co-location: train, predict, select, eval", NULL},
    {"plan", cmd_plan, "plan one HP request beside an LP task within a latency budget", NULL},
    {"replay", cmd_replay, "replay an HP request stream under each co-location policy", NULL},
    {"overlap", cmd_overlap, "learn and score makespans of overlapped operator groups (Abacus's data)", NULL},
    {"calibrate", cmd_calibrate, "calibrate the bounds on a campaign of their own (window-sized or composed)", NULL},
    {"collect", cmd_collect, "measure profiles and co-executions on a real GPU", NULL},
    {"serve", cmd_serve, "serve predictions over HTTP to schedulers (Kubernetes extender, Prometheus metrics)", NULL},
};

static const cli_command_t *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* A row's command, or the library operation it names. */
static int run_command(const cli_command_t *c, int argc, char **argv)
{
    return c->op ? cli_op_command(c->op, argc, argv) : c->fn(argc, argv);
}

static void print_help(FILE *f)
{
    fputs("pairsight " PS_VERSION_STRING " - predict interference between deep-learning tasks sharing a GPU\n"
          "\n"
          "usage: pairsight COMMAND [OPTIONS]\n"
          "       pairsight help COMMAND [SUBCOMMAND] | pairsight COMMAND [SUBCOMMAND] --help\n"
          "       pairsight --version\n"
          "\n"
          "The data's way, one folder of src/ per stage: profile (check, import;\n"
          "simulate in src/simulate, collect in src/collect) -> features (features) ->\n"
          "model (train, adapt, model) -> prediction (predict, explain) -> decision\n"
          "(src/decision: plan, replay, calibrate), measured by eval and report\n"
          "(src/evaluate). Workload-level co-location (colocate) is src/colocate, the\n"
          "HTTP server (serve) src/serve, the operations by name and parameters as JSON\n"
          "for bindings src/ops.\n"
          "\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\nExit status: 0 ok, 1 bad input or failure, 2 usage error.\n", f);
}

/* "unknown command 'trian'; did you mean 'train'?" */
static int unknown_command(const char *where, const char *name)
{
    const char *names[sizeof commands / sizeof commands[0]];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        names[i] = commands[i].name;
    const char *near = ps_nearest(name, names, sizeof names / sizeof names[0]);
    fprintf(stderr, "pairsight: %s%sunknown command '%s'", where ? where : "", where ? ": " : "", name);
    if (near)
        fprintf(stderr, "; did you mean '%s'?", near);
    fputs(" (see pairsight --help)\n", stderr);
    return CLI_USAGE;
}

/* Runs the command that argv names; *name receives it for messages. */
static int dispatch(int argc, char **argv, const char **name)
{
    if (argc < 2) {
        print_help(stderr);
        return CLI_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        print_help(stdout);
        return CLI_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("pairsight %s\n", ps_version());
        return CLI_OK;
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc < 3) {
            print_help(stdout);
            return CLI_OK;
        }
        /* `pairsight help CMD [SUB]` is `pairsight CMD [SUB] --help`. */
        const cli_command_t *c = find_command(argv[2]);
        if (!c)
            return unknown_command("help", argv[2]);
        char help[] = "--help";
        char *args[] = {argv[2], argc > 3 ? argv[3] : help, help, NULL};
        return run_command(c, argc > 3 ? 3 : 2, args);
    }
    const cli_command_t *c = find_command(cmd);
    if (!c)
        return unknown_command(NULL, cmd);
    *name = c->name;
    return run_command(c, argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
    const char *name = "help";
    int rc = dispatch(argc, argv, &name);
    rc = cli_io_finish(rc);
    /* A result that did not reach stdout (a full disk, a closed pipe) is a
     * failure, whichever command printed it: scripts read that output. */
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int e = errno;
        if (rc == CLI_OK)
            rc = cli_fail(CLI_BAD_INPUT, name, "stdout: write failed%s%s", e ? ": " : "", e ? strerror(e) : "");
    }
    return rc;
}
