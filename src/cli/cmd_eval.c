/* `pairsight eval`: PairSight against every baseline and the paper's four
 * experiments on one campaign; `pairsight report` (cmd_report.c) runs the
 * same through cli_eval_main and writes the HTML page. */
#include "cli/cli.h"
#include "common/common.h"
#include "evaluate/experiments.h"

#include <cblas.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static int write_json(const char *path, const cJSON *o)
{
    ps_atomic_t *a = NULL;
    int rc = ps_atomic_open(path, &a);
    if (rc != 0)
        return rc;
    cli_json_write(o, ps_atomic_stream(a));
    fputc('\n', ps_atomic_stream(a));
    return ps_atomic_commit(a);
}

/* The library's results JSON under the CLI's schema field. */
static cJSON *results_json(const ps_eval_results_t *r)
{
    char *js = ps_eval_json(r);
    cJSON *in = js ? cJSON_Parse(js) : NULL, *o = cli_json_new("eval", 1);
    free(js);
    if (!in || !o) {
        cJSON_Delete(in);
        cJSON_Delete(o);
        return NULL;
    }
    while (in->child) {
        cJSON *it = cJSON_DetachItemViaPointer(in, in->child);
        cJSON_AddItemToObject(o, it->string, it);
    }
    cJSON_Delete(in);
    return o;
}

static int parse_experiments(const char *v, void *dest)
{
    return ps_experiments_parse(v, dest) == 0 ? 0 : -1;
}

static const char *const eval_examples[] = {
    "pairsight eval --model out/model.psm --ops out/ops.csv --coexec out/coexec.csv --mlp-epochs 5 --json-out out/e.json",
    NULL};
static const char *const report_examples[] = {
    "pairsight report --model out/model.psm --ops out/ops.csv --coexec out/coexec.csv --mlp-epochs 5 --out out/r.html",
    NULL};

int cli_eval_main(int argc, char **argv, int report_mode)
{
    const char *cmd = report_mode ? "report" : "eval";
    const char *ops_path = NULL, *cx_path = NULL, *model_path = NULL, *train_path = NULL, *long_path = NULL;
    const char *long_ops_path = NULL;
    const char *json_out = NULL, *report_path = NULL;
    int json = 0, quiet = 0;
    ps_eval_config_t c;
    ps_eval_default_config(&c);
    /* "The trainer's" defaults, spelled out so that --help shows them. */
    ps_train_params_t tp = ps_train_default_params();
    c.max_rounds = tp.max_rounds;
    c.n_depths = tp.n_depths;
    memcpy(c.depths, tp.depths, sizeof c.depths);
    c.n_etas = tp.n_etas;
    memcpy(c.etas, tp.etas, sizeof c.etas);
    uint64_t seed = c.seed;
    int n_ks = 3;
    cli_opt_t opts[] = {
        {"--ops", CLI_STR, &ops_path, "FILE", "standalone profile, ops.csv", .flags = CLI_REQ | CLI_IN},
        {"--coexec", CLI_STR, &cx_path, "FILE",
         "co-executions, coexec.csv: split 80/10/10 by experiment; baselines train on the training split and "
         "all methods are scored on the test split",
         .flags = CLI_REQ | CLI_IN},
        {"--model", CLI_STR, &model_path, "FILE", "PairSight model from `pairsight train`",
         .def = "train one here on the training split"},
        {"--train", CLI_STR, &train_path, "FILE",
         "train baselines (and a model when --model is absent) on the training split of FILE and score on every "
         "row of --coexec"},
        {"--long", CLI_STR, &long_path, "FILE",
         "co-executions of segments longer than the window under SM splits absent from training, for the "
         "`long` experiment"},
        {"--long-ops", CLI_STR, &long_ops_path, "FILE",
         "standalone profile of the long co-executions, with their TPC counts", .def = "--ops"},
        {"--experiments", CLI_FN, &c.experiments, "LIST",
         "comma-separated: accuracy, ablation, generalization, long, or all", .def = "accuracy",
         .parse = parse_experiments, .accepts = "a comma-separated list of accuracy, ablation, generalization, "
                                                "long, or all"},
        {"--seed", CLI_U64, &seed, "N", "experiment split seed", .lo = 0, .hi = 4294967295.0,
         .def = "the model's, else 1"},
        {"--threads", CLI_INT, &c.nthread, "N", "XGBoost threads when training here, 0 = all", .lo = 0,
         .hi = thread_limit()},
        {"--rounds", CLI_INT, &c.max_rounds, "N", "most trees per regressor when training here", .lo = 1,
         .hi = 100000},
        {"--depths", CLI_INTS, c.depths, "LIST", "max_depth grid when training here", .lo = 1, .hi = 20,
         .count = &c.n_depths, .max = 4},
        {"--etas", CLI_DBLS, c.etas, "LIST", "learning-rate grid when training here", .lo = 0, .hi = 1,
         .flags = CLI_LO_OPEN, .count = &c.n_etas, .max = 4},
        {"--mlp-epochs", CLI_INT, &c.bp.mlp_epochs, "N", "most epochs per MLP baseline", .lo = 1, .hi = 100000},
        {"--ks", CLI_INTS, c.ks, "A,B,C",
         "continued-training sizes of the generalization experiment, in experiments per held-out group", .lo = 1,
         .hi = 1000000, .count = &n_ks, .max = 3},
        CLI_OPT_JSON(&json, "print the results as JSON instead of tables"),
        {"--json-out", CLI_STR, &json_out, "FILE", "also write the JSON to FILE", .flags = CLI_OUT},
        {"--report", CLI_STR, &report_path, "FILE", "also write the HTML report to FILE"},
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    if (report_mode) {
        /* report: --out is the page, and it prints no JSON. */
        cli_opt_t *o = opts;
        while (strcmp(o->name, "--json") != 0)
            o++;
        for (cli_opt_t *d = o; d->name; d++)
            *d = d[1];
        while (strcmp(o->name, "--json-out") != 0)
            o++;
        for (cli_opt_t *d = o; d->name; d++)
            *d = d[1];
        while (strcmp(o->name, "--report") != 0)
            o++;
        *o = (cli_opt_t){"--out", CLI_STR, &report_path, "FILE", "the HTML page to write", .flags = CLI_REQ};
    }
    cli_spec_t spec = {
        .cmd = cmd,
        .synopsis = report_mode ? "--ops FILE --coexec FILE --out FILE [options]" : "--ops FILE --coexec FILE [options]",
        .about = report_mode
                     ? "Run the evaluation of `pairsight eval` and write one self-contained HTML page:\n"
                       "the tables, predicted against measured latency per method, error CDFs, the\n"
                       "slowdown heat map of HP segments against co-runners and each counter's\n"
                       "correlation with delta for target and co-runner. scripts/render_report.sh\n"
                       "renders it to a PNG.\n"
                     : "Train every baseline on the model's training data and compare them with the\n"
                       "PairSight model on the test co-executions; optionally run the ablation, the\n"
                       "generalization and the long-segment experiments. Prints the tables (or JSON).\n",
        .opts = opts,
        .examples = report_mode ? report_examples : eval_examples,
        .exit_status = report_mode ? "0 written, 1 bad input or unwritable --out, 2 usage error."
                                   : "0 ok, 1 bad input or a failed evaluation, 2 usage error.",
        .max_pos = 0};
    int code0;
    if (cli_parse(&spec, argc, argv, NULL, &code0))
        return code0;
    if (n_ks != 3)
        return cli_fail(CLI_USAGE, cmd, "--ks: bad value: expected three integers A,B,C in 1..1000000");
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
    cJSON *js = NULL;
    if (ps_ops_load(ops_path, &ops) != 0 || ps_coexec_load(cx_path, &cx) != 0 ||
        (train_path && ps_coexec_load(train_path, &train) != 0) ||
        (long_path && ps_coexec_load(long_path, &lx) != 0) ||
        (long_ops_path && ps_ops_load(long_ops_path, &long_ops) != 0) || (model_path && ps_model_load(model_path, &model) != 0)) {
        cli_fail(CLI_BAD_INPUT, cmd, "%s", ps_last_error());
        goto done;
    }
    if (model && !cli_given(&spec, "--seed")) {
        ps_model_info_t info;
        if (ps_model_info(model, &info) == 0)
            seed = info.seed;
    }
    c.seed = (unsigned)seed;
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
    c.progress = cli_progress_cb;
    c.progress_user = &quiet;
    int rc = ps_eval_run(&c, &r);
    cli_progress_end(quiet);
    if (rc != 0) {
        cli_fail(CLI_BAD_INPUT, cmd, "%s", ps_last_error());
        goto done;
    }
    if (json || json_out) {
        js = results_json(&r);
        if (!js) {
            cli_fail(CLI_BAD_INPUT, cmd, "out of memory");
            goto done;
        }
        if (json_out && write_json(json_out, js) != 0) {
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
        cli_json_write(js, stdout), putchar('\n');
    else
        ps_eval_print(&r, stdout);
    code = fflush(stdout) == 0 ? CLI_OK : CLI_BAD_INPUT;
done:
    cJSON_Delete(js);
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
