/* pairsight predict: co-execution latencies of candidate segment pairs. */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The predicted columns of the n queries, n values each, in one buffer of 6 x
 * n: the HP and LP latencies, their standalone latencies, and with
 * --coverage the calibrated upper bounds (hu and lu NULL without). */
typedef struct {
    double *hp, *lp, *hs, *ls, *hu, *lu;
} columns_t;

static columns_t columns(double *buf, size_t n, int bounds)
{
    columns_t c = {buf, buf + n, buf + 2 * n, buf + 3 * n, NULL, NULL};
    if (bounds) {
        c.hu = buf + 4 * n;
        c.lu = buf + 5 * n;
    }
    return c;
}

static void write_predictions(FILE *o, const ps_queries_t *f, const columns_t *p)
{
    const double *hp = p->hp, *lp = p->lp, *hs = p->hs, *ls = p->ls, *hu = p->hu, *lu = p->lu;
    for (int c = 0; c < ps_queries_ncols(f); c++) {
        ps_csv_put_field(o, ps_queries_header(f, c));
        fputc(',', o);
    }
    fputs(hu ? "hp_ns_pred,lp_ns_pred,hp_delta_pred,lp_delta_pred,hp_ns_upper,lp_ns_upper\n"
             : "hp_ns_pred,lp_ns_pred,hp_delta_pred,lp_delta_pred\n",
          o);
    for (size_t i = 0; i < ps_queries_count(f); i++) {
        for (int c = 0; c < ps_queries_ncols(f); c++) {
            ps_csv_put_field(o, ps_queries_cell(f, i, c));
            fputc(',', o);
        }
        fprintf(o, "%.17g,%.17g,%.17g,%.17g", hp[i], lp[i], hp[i] / hs[i], lp[i] / ls[i]);
        if (hu)
            fprintf(o, ",%.17g,%.17g", hu[i], lu[i]);
        fputc('\n', o);
    }
}

static const char *const examples[] = {
    "pairsight predict --model out/model.psm --ops out/ops.csv --queries out/coexec.csv --out out/pred.csv",
    "head -5 out/coexec.csv | pairsight predict --model=out/model.psm --ops=out/ops.csv --queries -", NULL};

/* What predict was asked to do. */
typedef struct {
    const char *model_path, *ops_path, *q_path, *out; /* out NULL: standard output */
    int json, quiet, compose;
    double coverage; /* > 0: also the calibrated upper bounds */
} predict_args_t;

static int parse_predict_args(int argc, char **argv, predict_args_t *a, int *code)
{
    memset(a, 0, sizeof *a);
    a->compose = PS_COMPOSE_OVERLAP;
    const char *compose_names[PS_COMPOSE_COUNT + 1] = {NULL};
    for (int k = 0; k < PS_COMPOSE_COUNT; k++)
        compose_names[k] = ps_compose_name((ps_compose_t)k);
    cli_opt_t opts[] = {
        {"--model", CLI_STR, &a->model_path, "FILE", "trained model", .flags = CLI_REQ | CLI_IN},
        {"--ops", CLI_STR, &a->ops_path, "FILE", "standalone operator profile", .flags = CLI_REQ | CLI_IN},
        {"--queries", CLI_STR, &a->q_path, "FILE", "candidates", .flags = CLI_REQ | CLI_IN},
        {"--out", CLI_STR, &a->out, "FILE", "predictions CSV", .def = "standard output", .flags = CLI_OUT},
        {"--compose", CLI_ENUM, &a->compose, "NAME",
         "window composition for segments longer than the window: overlap (time-aligned) or index (published)",
         .choices = compose_names},
        {"--coverage", CLI_DBL, &a->coverage, "C",
         "also write calibrated upper bounds hp_ns_upper and lp_ns_upper at coverage C (time-aligned composition)",
         .lo = 0.5, .hi = 0.999, .def = "none"},
        CLI_OPT_JSON(&a->json, "print a summary (rows, seconds, microseconds per query) as JSON on standard output; "
                               "needs --out FILE"),
        CLI_OPT_QUIET(&a->quiet),
        {NULL}};
    cli_spec_t spec = {.cmd = "predict",
                       .synopsis = "--model FILE --ops FILE --queries FILE [options]",
                       .about = "Predict the HP and LP latency of every candidate in the queries file: the key\n"
                                "columns of coexec.csv (gpu, hp_model, hp_batch, hp_start, hp_len, lp_model,\n"
                                "lp_batch, lp_start, lp_len, hp_tpcs, lp_tpcs; gpu may be left out and is\n"
                                "then the model's; other columns are kept). The output repeats every input\n"
                                "column and adds hp_ns_pred, lp_ns_pred, hp_delta_pred and lp_delta_pred,\n"
                                "and with --coverage hp_ns_upper and lp_ns_upper.\n",
                       .opts = opts,
                       .examples = examples,
                       .exit_status = "0 predicted, 1 bad input (the message names the file and line), 2 usage error.",
                       .max_pos = 0};
    if (cli_parse(&spec, argc, argv, NULL, code))
        return 1;
    if (a->out && strcmp(cli_user_path(a->out), "-") == 0 && !a->json)
        a->out = NULL; /* standard output, written directly */
    if (a->json && (!a->out || strcmp(cli_user_path(a->out), "-") == 0)) {
        *code = cli_fail(CLI_USAGE, "predict",
                         "--json prints a summary on standard output and needs --out FILE for "
                         "the predictions");
        return 1;
    }
    const char *inputs[] = {a->model_path, a->ops_path, a->q_path};
    *code = a->out ? cli_check_out("predict", a->out, inputs, 3) : CLI_OK;
    return *code != CLI_OK;
}

/* The predictions to a->out (atomically) or to standard output. */
static int write_output(const predict_args_t *a, const ps_queries_t *f, const columns_t *p)
{
    if (!a->out) {
        write_predictions(stdout, f, p);
        if (fflush(stdout) != 0 || ferror(stdout))
            return cli_fail(CLI_BAD_INPUT, "predict", "writing standard output failed");
        return CLI_OK;
    }
    ps_outfile_t *at = NULL;
    if (ps_outfile_open(a->out, &at) != 0)
        return cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
    write_predictions(ps_outfile_stream(at), f, p);
    if (ps_outfile_commit(at) != 0)
        return cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
    return CLI_OK;
}

/* Predicts every query into p's columns; a failure names the line of the
 * first query that cannot be predicted. */
static int predict_all(const predict_args_t *a, const ps_model_t *m, const ps_ops_t *ops, const ps_queries_t *f,
                       const columns_t *p)
{
    size_t n = ps_queries_count(f);
    const ps_query_t *q = ps_queries_array(f);
    if (ps_model_predict_compose(m, ops, q, n, (ps_compose_t)a->compose, p->hp, p->lp, p->hs, p->ls) == 0) {
        if (p->hu && ps_model_predict_bound(m, ops, q, n, a->coverage, p->hu, p->lu))
            return cli_fail(CLI_BAD_INPUT, "predict", "--coverage: %s", ps_last_error());
        return CLI_OK;
    }
    for (size_t i = 0; i < n; i++)
        if (ps_model_check_query(m, ops, &q[i]) != 0)
            return cli_fail(CLI_BAD_INPUT, "predict", "%s:%zu: %s", cli_user_path(a->q_path), ps_queries_line(f, i),
                            ps_last_error());
    return cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
}

static void print_summary(const predict_args_t *a, size_t n, double secs)
{
    cJSON *o = cli_json_new("predict", 1);
    cJSON_AddStringToObject(o, "out", cli_user_path(a->out));
    cJSON_AddNumberToObject(o, "rows", (double)n);
    cJSON_AddStringToObject(o, "compose", ps_compose_name((ps_compose_t)a->compose));
    cJSON_AddNumberToObject(o, "seconds", secs);
    cJSON_AddNumberToObject(o, "us_per_query", n ? 1e6 * secs / (double)n : 0);
    cli_json_print(o, stdout);
}

int cmd_predict(int argc, char **argv)
{
    predict_args_t a;
    int code;
    if (parse_predict_args(argc, argv, &a, &code))
        return code;
    ps_model_t *m = NULL;
    ps_ops_t *ops = NULL;
    ps_queries_t *f = NULL;
    double *buf = NULL;
    ps_model_info_t info;
    code = CLI_BAD_INPUT;
    if (ps_model_load(a.model_path, &m) != 0 || ps_ops_load(a.ops_path, &ops) != 0 || ps_model_info(m, &info) != 0 ||
        ps_queries_load(a.q_path, info.gpu, &f) != 0) {
        cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
        goto done;
    }
    size_t n = ps_queries_count(f);
    if (!(buf = malloc((n ? n : 1) * 6 * sizeof *buf))) {
        cli_fail(CLI_BAD_INPUT, "predict", "out of memory");
        goto done;
    }
    size_t est = ps_ops_estimated(ops);
    if (est && !a.quiet)
        fprintf(stderr,
                "pairsight: predict: note: %zu of %s's rows are estimated, not measured (source=twin-ratio): the "
                "standalone latencies at those TPC counts carry the estimate's error (docs/profile.md)\n",
                est, cli_user_path(a.ops_path));
    double t0 = ps_now();
    columns_t cols = columns(buf, n, a.coverage > 0);
    if ((code = predict_all(&a, m, ops, f, &cols)) != CLI_OK)
        goto done;
    double secs = ps_now() - t0;
    cli_progress(a.quiet, "predicted", (double)n, (double)n);
    cli_progress_end(a.quiet);
    if ((code = write_output(&a, f, &cols)) == CLI_OK && a.json)
        print_summary(&a, n, secs);
done:
    free(buf);
    ps_queries_free(f);
    ps_ops_free(ops);
    ps_model_free(m);
    return code;
}
