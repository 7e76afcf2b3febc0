/* pairsight train: fit the PairSight segment model on a profiling campaign. */
#include "cli/cli.h"

#include <math.h>
#include <signal.h>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --out's lock file (cli_check_out), removed by interrupted. */
static char lock_path[4096];

/* Ctrl-C (or SIGTERM) while reading or training: nothing was written yet,
 * the old --out stands; say so, remove the lock file that atexit would have
 * (the lock's holder unlinks it, then the exit unlocks it) and stop with
 * 128 + the signal, as a shell reports it (130 SIGINT, 143 SIGTERM). Only
 * async-signal-safe calls. */
static void interrupted(int sig)
{
    static const char msg_int[] = "\npairsight: train: interrupted (SIGINT); --out left as it was\n";
    static const char msg_term[] = "\npairsight: train: interrupted (SIGTERM); --out left as it was\n";
    ssize_t w = sig == SIGTERM ? write(2, msg_term, sizeof msg_term - 1) : write(2, msg_int, sizeof msg_int - 1);
    (void)w;
    if (lock_path[0])
        unlink(lock_path);
    _exit(128 + sig);
}

/* The handlers of SIGINT and SIGTERM before catch_interrupts, put back by
 * restore_handlers once --out is written or the inputs failed to load. */
typedef struct {
    struct sigaction old_int, old_term;
} handlers_t;

static void catch_interrupts(const char *out, handlers_t *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = interrupted;
    if ((size_t)snprintf(lock_path, sizeof lock_path, "%s.lock", out) >= sizeof lock_path)
        lock_path[0] = '\0';
    sigaction(SIGINT, &sa, &old->old_int);
    sigaction(SIGTERM, &sa, &old->old_term);
}

static void restore_handlers(const handlers_t *old)
{
    sigaction(SIGINT, &old->old_int, NULL);
    sigaction(SIGTERM, &old->old_term, NULL);
}

/* The summary: JSON on stdout with --json (data), else text on stderr
 * (a message) unless -q. */
static void print_summary(const ps_model_info_t *i, const char *out, int json, int quiet)
{
    if (json) {
        /* The model's info as its file records it, with the file's name. */
        char *text = NULL;
        if (ps_model_train_summary_json(i, cli_user_path(out), &text) == PS_OK)
            printf("%s\n", text);
        ps_free(text);
        return;
    }
    if (quiet)
        return;
    fprintf(stderr, "model %s: GPU %s, variant %s, window %d\n", out, i->gpu, ps_feature_variant_name(i->variant),
            i->window);
    fprintf(stderr, "samples %zu (train %zu, calibration %zu, valid %zu, test %zu) from %zu experiments, %.2f s\n",
            i->n_samples, i->n_train, i->n_calib, i->n_valid, i->n_test, i->n_experiments, i->train_seconds);
    for (int s = 0; s < 2; s++)
        fprintf(stderr, "%s: depth %d, eta %g, %d trees, validation MAPE %.2f%%, test MAPE %.2f%%\n", s ? "LP" : "HP",
                i->depth[s], i->eta[s], i->n_trees[s], i->valid_mape[s], i->test_mape[s]);
}

/* Saves m to out when training succeeded (rc, training's result, is 0) and
 * puts back the old handlers. Ctrl-C stopped training (interrupted, caught
 * since the inputs were read); here it waits while the model is saved, so
 * that out is either the old file or the new. */
static int save_model(int rc, const ps_model_t *m, const char *out, const handlers_t *old)
{
    /* The model is written to a temporary file renamed over --out; a signal
     * in that window waits until the rename is done. */
    sigset_t block, prev;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &prev);
    if (rc == 0)
        rc = ps_model_save(m, out);
    /* A signal held while the model was written: say what --out holds and
     * stop as the signal asked (exit's handlers remove the lock file). */
    sigset_t pend;
    if (sigpending(&pend) == 0 && (sigismember(&pend, SIGINT) == 1 || sigismember(&pend, SIGTERM) == 1)) {
        int sig = sigismember(&pend, SIGTERM) == 1 ? SIGTERM : SIGINT;
        fprintf(stderr, "\npairsight: train: interrupted (%s) while --out was written; %s\n",
                sig == SIGTERM ? "SIGTERM" : "SIGINT", rc == 0 ? "--out holds the new model" : "--out left as it was");
        exit(128 + sig);
    }
    restore_handlers(old);
    sigprocmask(SIG_SETMASK, &prev, NULL);
    return rc;
}

static const char *const examples[] = {
    "pairsight train --ops out/ops.csv --coexec out/coexec.csv --out out/m.psm --depths 6 --etas 0.3 --rounds 50",
    "pairsight train --ops=out/ops.csv --coexec=out/coexec.csv --out=out/m.psm --variant summed --json -q", NULL};

int cmd_train(int argc, char **argv)
{
    const char *ops_path = NULL, *cx_path = NULL, *out = NULL;
    int json = 0, quiet = 0;
    ps_train_params_t p = ps_train_default_params();
    int variant = (int)p.variant;
    const char *variant_names[PS_FEAT_COUNT + 1] = {NULL};
    for (int k = 0; k < PS_FEAT_COUNT; k++)
        variant_names[k] = ps_feature_variant_name((ps_feature_variant_t)k);
    uint64_t seed = p.seed;
    cli_opt_t opts[] = {
        {"--ops", CLI_STR, &ops_path, "FILE", "standalone operator profile, ops.csv", .flags = CLI_REQ | CLI_IN},
        {"--coexec", CLI_STR, &cx_path, "FILE", "measured co-executions, segments of at most --window operators",
         .flags = CLI_REQ | CLI_IN},
        {"--out", CLI_STR, &out, "FILE", "model file to write, atomically", .flags = CLI_REQ},
        {"--variant", CLI_ENUM, &variant, "NAME", "model input", .choices = variant_names},
        {"--window", CLI_INT, &p.window, "N", "operator slots per side", .lo = 1, .hi = 256},
        {"--seed", CLI_U64, &seed, "N", "experiment split seed", .lo = 0, .hi = 4294967295.0},
        {"--threads", CLI_INT, &p.nthread, "N", "training threads, 0 = one below 20,000 rows, else all cores", .lo = 0,
         .hi = ps_thread_limit()},
        {"--rounds", CLI_INT, &p.max_rounds, "N", "most trees per regressor", .lo = 1, .hi = 100000},
        {"--early-stop", CLI_INT, &p.early_stopping, "N", "rounds without validation gain before stopping", .lo = 1,
         .hi = 100000},
        {"--depths", CLI_INTS, p.depths, "LIST", "max_depth grid", .lo = 1, .hi = 20, .count = &p.n_depths, .max = 4},
        {"--etas", CLI_DBLS, p.etas, "LIST", "learning-rate grid", .lo = 0, .hi = 1, .flags = CLI_LO_OPEN,
         .count = &p.n_etas, .max = 4},
        {"--grid-rows", CLI_INT, &p.grid_rows, "N",
         "train the first max(1, N / training rows) grid points (depth-major), 0 = all; --depths or --etas "
         "given: 0 unless given",
         .lo = 0, .hi = 2000000000},
        CLI_OPT_JSON(&json, "print the training summary as JSON on stdout (default: text on stderr)"),
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    cli_spec_t spec = {.cmd = "train",
                       .synopsis = "--ops FILE --coexec FILE --out FILE [options]",
                       .about = "Train the segment model: two XGBoost regressors (HP and LP side) on log\n"
                                "slowdown, split by experiment into train, calibration of the upper bounds,\n"
                                "validation and test (70/10/10/10), early stopping on the validation split,\n"
                                "depth and learning rate chosen on validation MAPE. The defaults train the\n"
                                "3,000-row campaign of docs/own-model.md in about 20 CPU-seconds and run.sh's\n"
                                "15,000 rows in about 45 (one thread below 20,000 rows; --grid-rows shrinks\n"
                                "the grid on larger data); the progress line's ETA follows early stopping.\n",
                       .opts = opts,
                       .examples = examples,
                       .exit_status = "0 trained and written, 1 bad input or training failed, 2 usage error.",
                       .max_pos = 0};
    int code;
    if (cli_parse(&spec, argc, argv, NULL, &code))
        return code;
    /* A grid the user wrote is trained whole. */
    if ((cli_given(&spec, "--depths") || cli_given(&spec, "--etas")) && !cli_given(&spec, "--grid-rows"))
        p.grid_rows = 0;
    p.variant = (ps_feature_variant_t)variant;
    p.seed = seed; /* at most 2^32 - 1: the model file keeps it as a JSON number */
    const char *inputs[] = {ops_path, cx_path};
    int out_code = cli_check_out("train", out, inputs, 2);
    if (out_code != CLI_OK)
        return out_code;
    p.progress = cli_progress_cb;
    p.progress_user = &quiet;

    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    ps_model_t *m = NULL;
    code = CLI_BAD_INPUT;
    handlers_t old;
    catch_interrupts(out, &old);
    if (ps_ops_load(ops_path, &ops) != 0 || ps_coexec_load(cx_path, &cx) != 0) {
        restore_handlers(&old);
        cli_fail(CLI_BAD_INPUT, "train", "%s", ps_last_error());
        goto done;
    }
    int rc = ps_model_train(ops, cx, &p, &m);
    cli_progress_end(quiet);
    rc = save_model(rc, m, out, &old);
    if (rc != 0) {
        cli_fail(CLI_BAD_INPUT, "train", "%s", cli_locate_coexec_error(cx_path, ops));
        goto done;
    }
    ps_model_info_t info;
    ps_model_info(m, &info);
    print_summary(&info, out, json, quiet);
    code = CLI_OK;
done:
    ps_model_free(m);
    ps_coexec_free(cx);
    ps_ops_free(ops);
    return code;
}
