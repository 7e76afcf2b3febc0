/* `pairsight eval`: PairSight against every baseline and the paper's four
 * experiments on one campaign; `pairsight report` (cmd_report.c) runs the
 * same through cli_eval_main and writes the HTML page. */
#include "cli/cli.h"
#include "common/common.h"
#include "evaluate/experiments.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

const char cmd_eval_usage[] =
    "usage: pairsight eval --ops FILE --coexec FILE [options]\n"
    "\n"
    "Train every baseline on the model's training data and compare them with the\n"
    "PairSight model on the test co-executions; optionally run the ablation, the\n"
    "generalization and the long-segment experiments. Prints the tables (or JSON).\n"
    "\n"
    "options:\n"
    "  --ops FILE          standalone profile, ops.csv (required)\n"
    "  --coexec FILE       co-executions, coexec.csv (required): split 80/10/10 by\n"
    "                      experiment; baselines train on the training split and all\n"
    "                      methods are scored on the test split\n"
    "  --model FILE        PairSight model from `pairsight train` (default: train one\n"
    "                      here on the training split)\n"
    "  --train FILE        train baselines (and a model when --model is absent) on the\n"
    "                      training split of FILE and score on every row of --coexec\n"
    "                      (default: none)\n"
    "  --long FILE         co-executions of segments longer than the window under SM\n"
    "                      splits absent from training, for the `long` experiment\n"
    "                      (default: none)\n"
    "  --long-ops FILE     standalone profile of the long co-executions, with their\n"
    "                      TPC counts (default: --ops)\n"
    "  --experiments LIST  comma-separated: accuracy, ablation, generalization, long,\n"
    "                      or all (default accuracy)\n"
    "  --seed N            experiment split seed (default: the model's, else 1)\n"
    "  --threads N         XGBoost threads when training here, 0 = all (default 0)\n"
    "  --rounds N          most trees per regressor when training here (default: the\n"
    "                      trainer's, 400)\n"
    "  --depths LIST       max_depth grid when training here, up to 4 values\n"
    "                      (default: the trainer's, 6,8)\n"
    "  --etas LIST         learning-rate grid when training here, up to 4 values\n"
    "                      (default: the trainer's, 0.1,0.3)\n"
    "  --mlp-epochs N      most epochs per MLP baseline (default 100)\n"
    "  --ks A,B,C          continued-training sizes of the generalization experiment,\n"
    "                      in experiments per held-out group (default 10,50,100)\n"
    "  --json              print the results as JSON instead of tables (default off)\n"
    "  --json-out FILE     also write the JSON to FILE (default: none)\n"
    "  --report FILE       also write the HTML report to FILE (default: none)\n"
    "  -q                  no progress on stderr (default: progress on a terminal)\n"
    "  -h, --help          this text\n"
    "\n"
    "Exit status: 0 ok, 1 bad input or a failed evaluation, 2 usage.\n";

typedef struct {
    int quiet;
    char last[80];
} progress_state_t;

static void on_progress(const char *stage, double done, double total, void *user)
{
    progress_state_t *s = user;
    if (strcmp(s->last, stage) != 0) {
        if (s->last[0])
            cli_progress_end(s->quiet);
        snprintf(s->last, sizeof s->last, "%s", stage);
    }
    cli_progress(s->quiet, stage, done, total);
}


static int write_text(const char *path, const char *text)
{
    ps_atomic_t *a = NULL;
    int rc = ps_atomic_open(path, &a);
    if (rc != 0)
        return rc;
    fputs(text, ps_atomic_stream(a));
    fputc('\n', ps_atomic_stream(a));
    return ps_atomic_commit(a);
}

/* The flags of eval and of report that take a value. */
#define COMMON_VALUE_FLAGS                                                                                        \
    "--ops", "--coexec", "--model", "--train", "--long", "--long-ops", "--depths", "--etas", "--experiments",      \
        "--seed", "--threads", "--rounds", "--mlp-epochs", "--ks"
static const char *const eval_value_flags[] = {COMMON_VALUE_FLAGS, "--json-out", "--report", NULL};
static const char *const report_value_flags[] = {COMMON_VALUE_FLAGS, "--out", NULL};

int cli_eval_main(int argc, char **argv, int report_mode)
{
    const char *cmd = report_mode ? "report" : "eval";
    if (cli_wants_help(argc, argv)) {
        cli_print_usage(cmd, stdout);
        return CLI_OK;
    }
    const char *ops_path = NULL, *cx_path = NULL, *model_path = NULL, *train_path = NULL, *long_path = NULL;
    const char *long_ops_path = NULL;
    const char *json_out = NULL, *report_path = NULL;
    int json = 0, quiet = 0, seed = -1;
    ps_eval_config_t c;
    ps_eval_default_config(&c);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int rc = cli_next_option(cmd, argc, argv, &i, report_mode ? report_value_flags : eval_value_flags,
                                 report_mode ? NULL : &json, &quiet, &v);
        if (rc != CLI_OK)
            return rc;
        if (!v)
            continue;
        if (strcmp(a, "--ops") == 0)
            ops_path = v;
        else if (strcmp(a, "--coexec") == 0)
            cx_path = v;
        else if (strcmp(a, "--model") == 0)
            model_path = v;
        else if (strcmp(a, "--train") == 0)
            train_path = v;
        else if (strcmp(a, "--long") == 0)
            long_path = v;
        else if (strcmp(a, "--long-ops") == 0)
            long_ops_path = v;
        else if (strcmp(a, "--depths") == 0) {
            double d[4];
            if (cli_parse_list(v, 1, 20, 1, d, &c.n_depths) != 0)
                return cli_fail(CLI_USAGE, cmd, "--depths: expected up to 4 integers in 1..20: %s", v);
            for (int k = 0; k < c.n_depths; k++)
                c.depths[k] = (int)d[k];
        } else if (strcmp(a, "--etas") == 0) {
            if (cli_parse_list(v, 1e-6, 1, 0, c.etas, &c.n_etas) != 0)
                return cli_fail(CLI_USAGE, cmd, "--etas: expected up to 4 numbers in (0, 1]: %s", v);
        } else if (strcmp(a, "--json-out") == 0 && !report_mode)
            json_out = v;
        else if ((strcmp(a, "--report") == 0 && !report_mode) || (strcmp(a, "--out") == 0 && report_mode))
            report_path = v;
        else if (strcmp(a, "--experiments") == 0) {
            if (ps_experiments_parse(v, &c.experiments) != 0)
                return cli_fail(CLI_USAGE, cmd, "%s", ps_last_error());
        } else if (strcmp(a, "--seed") == 0) {
            if (cli_parse_int(v, 0, 1000000000L, &seed) != 0)
                return cli_fail(CLI_USAGE, cmd, "--seed: not a non-negative integer: %s", v);
        } else if (strcmp(a, "--threads") == 0) {
            if (cli_parse_int(v, 0, thread_limit(), &c.nthread) != 0)
                return cli_fail(CLI_USAGE, cmd, "--threads: not an integer in 0..%d: %s", thread_limit(), v);
        } else if (strcmp(a, "--rounds") == 0) {
            if (cli_parse_int(v, 1, 100000, &c.max_rounds) != 0)
                return cli_fail(CLI_USAGE, cmd, "--rounds: not a positive integer: %s", v);
        } else if (strcmp(a, "--mlp-epochs") == 0) {
            if (cli_parse_int(v, 1, 100000, &c.bp.mlp_epochs) != 0)
                return cli_fail(CLI_USAGE, cmd, "--mlp-epochs: not a positive integer: %s", v);
        } else if (strcmp(a, "--ks") == 0) {
            double d[4];
            int n = 0;
            if (cli_parse_list(v, 1, 1000000, 1, d, &n) != 0 || n != 3)
                return cli_fail(CLI_USAGE, cmd, "--ks: expected three integers A,B,C in 1..1000000: %s", v);
            for (int k = 0; k < 3; k++)
                c.ks[k] = (int)d[k];
        } else
            return cli_bad_option(cmd, a, NULL);
    }
    if (!ops_path || !cx_path)
        return cli_fail(CLI_USAGE, cmd, "--ops and --coexec are required (see pairsight %s --help)", cmd);
    if (report_mode && !report_path)
        return cli_fail(CLI_USAGE, cmd, "--out is required (see pairsight report --help)");
    if ((c.experiments & PS_EXP_LONG) && !long_path)
        return cli_fail(CLI_USAGE, cmd, "the long experiment needs --long FILE");
    if (long_ops_path && !long_path)
        return cli_fail(CLI_USAGE, cmd, "--long-ops needs --long FILE");
    /* Fail on an unwritable output now, not after minutes of training. */
    const char *in[] = {ops_path, cx_path, model_path, train_path, long_path, long_ops_path, json_out};
    if (json_out && report_path && strcmp(json_out, report_path) == 0)
        return cli_fail(CLI_USAGE, cmd, "--json-out and --report name the same file %s", json_out);
    int out_rc = json_out ? cli_check_out(cmd, json_out, in, 6) : CLI_OK;
    if (out_rc == CLI_OK && report_path)
        out_rc = cli_check_out(cmd, report_path, in, 7);
    if (out_rc != CLI_OK)
        return out_rc;

    int code = CLI_BAD_INPUT;
    ps_ops_t *ops = NULL, *long_ops = NULL;
    ps_coexec_t *cx = NULL, *train = NULL, *lx = NULL;
    ps_model_t *model = NULL;
    ps_eval_results_t r;
    memset(&r, 0, sizeof r);
    char *js = NULL;
    if (ps_ops_load(ops_path, &ops) != 0 || ps_coexec_load(cx_path, &cx) != 0 ||
        (train_path && ps_coexec_load(train_path, &train) != 0) ||
        (long_path && ps_coexec_load(long_path, &lx) != 0) ||
        (long_ops_path && ps_ops_load(long_ops_path, &long_ops) != 0) || (model_path && ps_model_load(model_path, &model) != 0)) {
        cli_fail(CLI_BAD_INPUT, cmd, "%s", ps_last_error());
        goto done;
    }
    if (model) {
        ps_model_info_t info;
        if (ps_model_info(model, &info) == 0 && seed < 0)
            seed = (int)info.seed;
    }
    c.seed = seed < 0 ? 1u : (unsigned)seed;
    /* The MLP baselines multiply small matrices (minibatches of 32), which
     * run several times faster on one BLAS thread than on many that wait for
     * each other; XGBoost keeps its own threads (--threads). */
    openblas_set_num_threads(1);
    c.ops = ops;
    c.cx = cx;
    c.train_cx = train;
    c.long_cx = lx;
    c.long_ops = long_ops;
    c.model = model;
    progress_state_t ps = {.quiet = quiet};
    c.progress = on_progress;
    c.progress_user = &ps;
    int rc = ps_eval_run(&c, &r);
    if (ps.last[0])
        cli_progress_end(quiet);
    if (rc != 0) {
        cli_fail(CLI_BAD_INPUT, cmd, "%s", ps_last_error());
        goto done;
    }
    if (json || json_out) {
        js = ps_eval_json(&r);
        if (!js) {
            cli_fail(CLI_BAD_INPUT, cmd, "out of memory");
            goto done;
        }
        if (json_out && write_text(json_out, js) != 0) {
            cli_fail(CLI_BAD_INPUT, cmd, "%s", ps_last_error());
            goto done;
        }
    }
    if (report_path && ps_report_write(&r, ops, cx, report_path) != 0) {
        cli_fail(CLI_BAD_INPUT, cmd, "%s", ps_last_error());
        goto done;
    }
    if (report_mode)
        printf("wrote %s\n", report_path);
    else if (json)
        printf("%s\n", js);
    else
        ps_eval_print(&r, stdout);
    code = fflush(stdout) == 0 ? CLI_OK : CLI_BAD_INPUT;
done:
    free(js);
    ps_eval_results_clear(&r);
    ps_model_free(model);
    ps_ops_free(ops);
    ps_ops_free(long_ops);
    ps_coexec_free(cx);
    ps_coexec_free(train);
    ps_coexec_free(lx);
    return code;
}

int cmd_eval(int argc, char **argv) { return cli_eval_main(argc, argv, 0); }
