/* `pairsight eval`: PairSight against every baseline and the paper's four
 * experiments on one campaign; `pairsight report` (cmd_report.c) runs the
 * same through cli_eval_main and writes the HTML page. */
#include "cli/cli.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

static int parse_experiments(const char *v, void *dest) { return ps_experiments_parse(v, dest) == 0 ? 0 : -1; }

static const char *const eval_examples[] = {"pairsight eval --model out/model.psm --ops out/ops.csv --coexec "
                                            "out/coexec.csv --mlp-epochs 5 --json-out out/e.json",
                                            NULL};
static const char *const report_examples[] = {
    "pairsight report --model out/model.psm --ops out/ops.csv --coexec out/coexec.csv --mlp-epochs 5 --out out/r.html",
    NULL};

/* What eval and report were asked to do. */
typedef struct {
    const char *cmd; /* "eval" or "report" */
    int report_mode, json, quiet, n_ks;
    const char *ops_path, *cx_path, *model_path, *train_path, *long_path, *long_ops_path, *json_out, *report_path;
    uint64_t seed;
    ps_eval_params_t c;
} eval_args_t;

/* The library's defaults, with "the trainer's" spelled out so that --help
 * shows them. */
static void eval_defaults(eval_args_t *a, int report_mode)
{
    memset(a, 0, sizeof *a);
    a->cmd = report_mode ? "report" : "eval";
    a->report_mode = report_mode;
    a->n_ks = 3;
    a->c = ps_eval_default_params();
    ps_train_params_t tp = ps_train_default_params();
    a->c.max_rounds = tp.max_rounds;
    a->c.n_depths = tp.n_depths;
    memcpy(a->c.depths, tp.depths, sizeof a->c.depths);
    a->c.n_etas = tp.n_etas;
    memcpy(a->c.etas, tp.etas, sizeof a->c.etas);
    a->seed = a->c.seed;
}

/* The option table of eval into opts (room for 32); report has --out for
 * the page in place of --report and prints no JSON. */
static void eval_table(eval_args_t *a, cli_opt_t *opts)
{
    ps_eval_params_t *c = &a->c;
    const cli_opt_t all[] = {
        {"--ops", CLI_STR, &a->ops_path, "FILE", "standalone profile, ops.csv", .flags = CLI_REQ | CLI_IN},
        {"--coexec", CLI_STR, &a->cx_path, "FILE",
         "co-executions, coexec.csv: split by experiment (70/10/10/10: train, calibration, validation, test); "
         "baselines train on the training split and "
         "all methods are scored on the test split",
         .flags = CLI_REQ | CLI_IN},
        {"--model", CLI_STR, &a->model_path, "FILE", "PairSight model from `pairsight train`",
         .def = "train one here on the training split"},
        {"--train", CLI_STR, &a->train_path, "FILE",
         "train baselines (and a model when --model is absent) on the training split of FILE and score on every "
         "row of --coexec"},
        {"--long", CLI_STR, &a->long_path, "FILE",
         "co-executions of segments longer than the window under SM splits absent from training, for the "
         "`long` experiment"},
        {"--long-ops", CLI_STR, &a->long_ops_path, "FILE",
         "standalone profile of the long co-executions, with their TPC counts", .def = "--ops"},
        {"--experiments", CLI_FN, &c->experiments, "LIST",
         "comma-separated: accuracy, ablation, generalization, long, or all", .def = "accuracy",
         .parse = parse_experiments,
         .accepts = "a comma-separated list of accuracy, ablation, generalization, long, or all"},
        {"--seed", CLI_U64, &a->seed, "N", "experiment split seed", .lo = 0, .hi = 4294967295.0,
         .def = "the model's, else 1"},
        {"--threads", CLI_INT, &c->nthread, "N", "XGBoost threads when training here, 0 = all", .lo = 0,
         .hi = ps_thread_limit()},
        {"--rounds", CLI_INT, &c->max_rounds, "N", "most trees per regressor when training here", .lo = 1,
         .hi = 100000},
        {"--depths", CLI_INTS, c->depths, "LIST", "max_depth grid when training here", .lo = 1, .hi = 20,
         .count = &c->n_depths, .max = 4},
        {"--etas", CLI_DBLS, c->etas, "LIST", "learning-rate grid when training here", .lo = 0, .hi = 1,
         .flags = CLI_LO_OPEN, .count = &c->n_etas, .max = 4},
        {"--mlp-epochs", CLI_INT, &c->bp.mlp_epochs, "N", "most epochs per MLP baseline", .lo = 1, .hi = 100000},
        {"--ks", CLI_INTS, c->ks, "A,B,C",
         "continued-training sizes of the generalization experiment, in experiments per held-out group", .lo = 1,
         .hi = 1000000, .count = &a->n_ks, .max = 3},
        CLI_OPT_JSON(&a->json, "print the results as JSON instead of tables"),
        {"--json-out", CLI_STR, &a->json_out, "FILE", "also write the JSON to FILE", .flags = CLI_OUT},
        {"--report", CLI_STR, &a->report_path, "FILE", "also write the HTML report to FILE"},
        CLI_OPT_QUIET(&a->quiet),
    };
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const char *name = all[i].name;
        if (a->report_mode && (strcmp(name, "--json") == 0 || strcmp(name, "--json-out") == 0))
            continue;
        if (a->report_mode && strcmp(name, "--report") == 0)
            opts[n++] =
                (cli_opt_t){"--out", CLI_STR, &a->report_path, "FILE", "the HTML page to write", .flags = CLI_REQ};
        else
            opts[n++] = all[i];
    }
    opts[n] = (cli_opt_t){NULL};
}

static int parse_eval_args(int argc, char **argv, eval_args_t *a, cli_spec_t *spec, cli_opt_t *opts, int *code)
{
    eval_table(a, opts);
    int r = a->report_mode;
    *spec = (cli_spec_t){.cmd = a->cmd,
                         .synopsis =
                             r ? "--ops FILE --coexec FILE --out FILE [options]" : "--ops FILE --coexec FILE [options]",
                         .about = r ? "Run the evaluation of `pairsight eval` and write one self-contained HTML page:\n"
                                      "the tables, predicted against measured latency per method, error CDFs, the\n"
                                      "slowdown heat map of HP segments against co-runners and each counter's\n"
                                      "correlation with delta for target and co-runner. scripts/render_report.sh\n"
                                      "renders it to a PNG.\n"
                                    : "Train every baseline on the model's training data and compare them with the\n"
                                      "PairSight model on the test co-executions; optionally run the ablation, the\n"
                                      "generalization and the long-segment experiments. Prints the tables (or JSON).\n",
                         .opts = opts,
                         .examples = r ? report_examples : eval_examples,
                         .exit_status = r ? "0 written, 1 bad input or unwritable --out, 2 usage error."
                                          : "0 ok, 1 bad input or a failed evaluation, 2 usage error.",
                         .max_pos = 0};
    return cli_parse(spec, argc, argv, NULL, code);
}

/* The usage errors the table cannot see, and the outputs checked now rather
 * than after minutes of training. */
static int check_eval_args(const eval_args_t *a)
{
    const char *cmd = a->cmd;
    if (a->n_ks != 3)
        return cli_fail(CLI_USAGE, cmd, "--ks: bad value: expected three integers A,B,C in 1..1000000");
    if ((a->c.experiments & PS_EXP_LONG) && !a->long_path)
        return cli_fail(CLI_USAGE, cmd, "the long experiment needs --long FILE");
    if (a->long_ops_path && !a->long_path)
        return cli_fail(CLI_USAGE, cmd, "--long-ops needs --long FILE");
    const char *in[] = {a->ops_path,  a->cx_path,       a->model_path, a->train_path,
                        a->long_path, a->long_ops_path, a->json_out};
    if (a->json_out && a->report_path && strcmp(a->json_out, a->report_path) == 0)
        return cli_fail(CLI_USAGE, cmd, "--json-out and --report name the same file %s", a->json_out);
    int rc = a->json_out ? cli_check_out(cmd, a->json_out, in, 6) : CLI_OK;
    if (rc == CLI_OK && a->report_path)
        rc = cli_check_out(cmd, a->report_path, in, 7);
    return rc;
}

/* The tables and the model eval reads. */
typedef struct {
    ps_ops_t *ops, *long_ops;
    ps_coexec_t *cx, *train, *lx;
    ps_model_t *model;
} eval_inputs_t;

static void eval_inputs_free(eval_inputs_t *in)
{
    ps_model_free(in->model);
    ps_ops_free(in->ops);
    ps_ops_free(in->long_ops);
    ps_coexec_free(in->cx);
    ps_coexec_free(in->train);
    ps_coexec_free(in->lx);
}

static int load_eval_inputs(const eval_args_t *a, eval_inputs_t *in)
{
    memset(in, 0, sizeof *in);
    if (ps_ops_load(a->ops_path, &in->ops) != 0 || ps_coexec_load(a->cx_path, &in->cx) != 0 ||
        (a->train_path && ps_coexec_load(a->train_path, &in->train) != 0) ||
        (a->long_path && ps_coexec_load(a->long_path, &in->lx) != 0) ||
        (a->long_ops_path && ps_ops_load(a->long_ops_path, &in->long_ops) != 0) ||
        (a->model_path && ps_model_load(a->model_path, &in->model) != 0))
        return cli_fail(CLI_BAD_INPUT, a->cmd, "%s", ps_last_error());
    return CLI_OK;
}

/* The HTML page, naming the campaign that campaign.json beside coexec.csv
 * describes. */
static int write_report(const eval_args_t *a, const eval_inputs_t *in, const ps_eval_t *r)
{
    return ps_eval_report_write(r, in->ops, in->cx, a->cx_path, a->report_path);
}

/* The results as asked: JSON file, HTML page, then tables, JSON or the
 * page's path on stdout. */
static int write_eval_results(const eval_args_t *a, const eval_inputs_t *in, const ps_eval_t *r)
{
    char *js = NULL;
    int code = CLI_BAD_INPUT;
    if ((a->json || a->json_out) && ps_eval_json(r, &js) != 0) {
        cli_fail(CLI_BAD_INPUT, a->cmd, "%s", ps_last_error());
        goto done;
    }
    if (a->json_out && cli_write_json(a->cmd, a->json_out, js) != CLI_OK)
        goto done;
    if (a->report_path && write_report(a, in, r) != 0) {
        cli_fail(CLI_BAD_INPUT, a->cmd, "%s", ps_last_error());
        goto done;
    }
    if (a->report_mode && !a->quiet)
        fprintf(stderr, "wrote %s\n", a->report_path);
    else if (a->json)
        printf("%s\n", js);
    else if (!a->report_mode)
        ps_eval_print(r, stdout);
    code = fflush(stdout) == 0 ? CLI_OK : CLI_BAD_INPUT;
done:
    ps_free(js);
    return code;
}

int cli_eval_main(int argc, char **argv, int report_mode)
{
    eval_args_t a;
    cli_opt_t opts[32];
    cli_spec_t spec;
    int code;
    eval_defaults(&a, report_mode);
    if (parse_eval_args(argc, argv, &a, &spec, opts, &code))
        return code;
    if ((code = check_eval_args(&a)) != CLI_OK)
        return code;
    eval_inputs_t in;
    ps_eval_t *r = NULL;
    if ((code = load_eval_inputs(&a, &in)) != CLI_OK)
        goto done;
    ps_model_info_t info;
    if (in.model && !cli_given(&spec, "--seed") && ps_model_info(in.model, &info) == 0)
        a.seed = info.seed; /* the model's split, which eval must reproduce */
    ps_eval_params_t *c = &a.c;
    c->seed = a.seed;
    /* The MLP baselines multiply small matrices (minibatches of 32), which
     * run several times faster on one BLAS thread than on many that wait for
     * each other; XGBoost keeps its own threads (--threads). */
    openblas_set_num_threads(1);
    c->ops = in.ops;
    c->cx = in.cx;
    c->train_cx = in.train;
    c->long_cx = in.lx;
    c->long_ops = in.long_ops;
    c->model = in.model;
    c->progress = cli_progress_cb;
    c->progress_user = &a.quiet;
    int rc = ps_eval_run(c, &r);
    cli_progress_end(a.quiet);
    code = rc != 0 ? cli_fail(CLI_BAD_INPUT, a.cmd, "%s", cli_locate_coexec_error(a.cx_path, in.ops))
                   : write_eval_results(&a, &in, r);
done:
    ps_eval_free(r);
    eval_inputs_free(&in);
    return code;
}

int cmd_eval(int argc, char **argv) { return cli_eval_main(argc, argv, 0); }
