/* pairsight features: the exact feature rows the model reads for candidates
 * of one window, so that the exported boosters can be checked outside. */
#include "cli/cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void put_float(FILE *o, float v)
{
    if (isnan(v))
        fputs(",nan", o);
    else
        fprintf(o, ",%.9g", (double)v);
}

/* The feature rows of every query and its standalone latencies: HP rows at
 * x, LP rows at x + n * nf; HP latencies at solo, LP at solo + n (n =
 * max(queries, 1)). two: the HP and LP regressors read different rows (the
 * variant no-corunner), so both are written. */
typedef struct {
    float *x;
    double *solo;
    size_t n, nf;
    int two;
} rows_t;

static void write_rows(FILE *o, const ps_model_t *m, const ps_queries_t *f, const rows_t *r)
{
    int two = r->two;
    size_t nf = r->nf;
    const float *xh = r->x, *xl = r->x + r->n * nf;
    const double *hs = r->solo, *ls = r->solo + r->n;
    for (int c = 0; c < ps_queries_ncols(f); c++) {
        ps_csv_put_field(o, ps_queries_header(f, c));
        fputc(',', o);
    }
    fputs("hp_solo_ns,lp_solo_ns", o);
    for (int side = 0; side < (two ? 2 : 1); side++)
        for (size_t c = 0; c < nf; c++) {
            char name[64];
            ps_model_feature_name(m, (int)c, name, sizeof name);
            fprintf(o, ",%s%s", two ? (side == 0 ? "hp:" : "lp:") : "", name);
        }
    fputc('\n', o);
    for (size_t i = 0; i < ps_queries_count(f); i++) {
        for (int c = 0; c < ps_queries_ncols(f); c++) {
            ps_csv_put_field(o, ps_queries_cell(f, i, c));
            fputc(',', o);
        }
        fprintf(o, "%.17g,%.17g", hs[i], ls[i]);
        for (size_t c = 0; c < nf; c++)
            put_float(o, xh[i * nf + c]);
        for (size_t c = 0; two && c < nf; c++)
            put_float(o, xl[i * nf + c]);
        fputc('\n', o);
    }
}

/* Every query's feature rows and standalone latencies into r. Checked one
 * by one so that the message names the line, not the library's batch index. */
static int build_rows(const ps_model_t *m, const ps_ops_t *ops, const ps_model_info_t *info, const ps_queries_t *f,
                      const char *q_path, const rows_t *r)
{
    size_t nq = ps_queries_count(f), n = r->n, nf = r->nf;
    float *x = r->x;
    double *solo = r->solo;
    for (size_t i = 0; i < nq; i++) {
        const ps_query_t *q = &ps_queries_array(f)[i];
        if (q->hp_len > info->window || q->lp_len > info->window)
            return cli_fail(CLI_BAD_INPUT, "features",
                            "%s:%zu: segments of %d and %d operators: a feature row is "
                            "one window, at most %d operators per side (pairsight predict composes longer ones)",
                            cli_user_path(q_path), ps_queries_line(f, i), q->hp_len, q->lp_len, info->window);
        if (ps_model_check_query(m, ops, q) != 0 ||
            ps_model_features(m, ops, q, 1, x + i * nf, x + (n + i) * nf, solo + i, solo + n + i) != 0)
            return cli_fail(CLI_BAD_INPUT, "features", "%s:%zu: %s", cli_user_path(q_path), ps_queries_line(f, i),
                            ps_last_error());
    }
    return CLI_OK;
}

/* The rows to out (atomically) or, for NULL, to standard output. */
static int write_output(const char *out, const ps_model_t *m, const ps_queries_t *f, const rows_t *r)
{
    if (!out) {
        write_rows(stdout, m, f, r);
        return CLI_OK;
    }
    ps_outfile_t *a = NULL;
    if (ps_outfile_open(out, &a) != 0)
        return cli_fail(CLI_BAD_INPUT, "features", "%s", ps_last_error());
    write_rows(ps_outfile_stream(a), m, f, r);
    if (ps_outfile_commit(a) != 0)
        return cli_fail(CLI_BAD_INPUT, "features", "%s", ps_last_error());
    return CLI_OK;
}

static const char *const examples[] = {
    "pairsight features --model out/model.psm --ops out/ops.csv --queries out/coexec.csv --out out/rows.csv", NULL};

int cmd_features(int argc, char **argv)
{
    const char *model_path = NULL, *ops_path = NULL, *q_path = NULL, *out = NULL;
    cli_opt_t opts[] = {
        {"--model", CLI_STR, &model_path, "FILE", "trained model", .flags = CLI_REQ | CLI_IN},
        {"--ops", CLI_STR, &ops_path, "FILE", "standalone operator profile", .flags = CLI_REQ | CLI_IN},
        {"--queries", CLI_STR, &q_path, "FILE", "candidates, at most one window per side", .flags = CLI_REQ | CLI_IN},
        {"--out", CLI_STR, &out, "FILE", "output CSV", .def = "standard output", .flags = CLI_OUT},
        {NULL}};
    cli_spec_t spec = {.cmd = "features",
                       .synopsis = "--model FILE --ops FILE --queries FILE [--out FILE]",
                       .about = "For every candidate of the queries file (the columns of pairsight predict)\n"
                                "whose segments fit in the model's window, writes the input columns,\n"
                                "hp_solo_ns and lp_solo_ns (standalone latencies, %.17g) and the feature row\n"
                                "the model's regressors read, one column per feature named as in `pairsight\n"
                                "model info --json` (%.9g, exact floats; nan = missing counter). With the\n"
                                "variant no-corunner the two regressors read different rows: the HP row's\n"
                                "columns are prefixed hp: and the LP row's lp:. For these candidates pairsight\n"
                                "predict gives hp_ns = hp_solo_ns * exp(margin of hp.ubj on the row), and the\n"
                                "same for LP (pairsight model export). Counters come, for each operator and\n"
                                "counter, from the ops.csv row with the most TPCs that gives them.\n",
                       .opts = opts,
                       .examples = examples,
                       .exit_status = "0 written, 1 bad input (the message names the file and line), 2 usage error.",
                       .max_pos = 0};
    int code;
    if (cli_parse(&spec, argc, argv, NULL, &code))
        return code;
    if (out && strcmp(cli_user_path(out), "-") == 0)
        out = NULL; /* standard output, written directly */
    if (out) {
        const char *inputs[] = {model_path, ops_path, q_path};
        code = cli_check_out("features", out, inputs, 3);
        if (code != CLI_OK)
            return code;
    }
    ps_model_t *m = NULL;
    ps_ops_t *ops = NULL;
    ps_queries_t *f = NULL;
    rows_t r = {0};
    code = CLI_BAD_INPUT;
    ps_model_info_t info;
    if (ps_model_load(model_path, &m) != 0 || ps_ops_load(ops_path, &ops) != 0 || ps_model_info(m, &info) != 0 ||
        ps_queries_load(q_path, info.gpu, &f) != 0) {
        cli_fail(CLI_BAD_INPUT, "features", "%s", ps_last_error());
        goto done;
    }
    r.n = ps_queries_count(f) ? ps_queries_count(f) : 1;
    r.nf = (size_t)info.n_features;
    r.two = info.variant == PS_FEAT_NO_CORUNNER;
    r.x = malloc(2 * r.n * r.nf * sizeof *r.x);
    r.solo = malloc(2 * r.n * sizeof *r.solo);
    if (!r.x || !r.solo) {
        cli_fail(CLI_BAD_INPUT, "features", "out of memory");
        goto done;
    }
    if (build_rows(m, ops, &info, f, q_path, &r) != CLI_OK)
        goto done;
    if (write_output(out, m, f, &r) != CLI_OK)
        goto done;
    code = CLI_OK;
done:
    free(r.x);
    free(r.solo);
    ps_queries_free(f);
    ps_ops_free(ops);
    ps_model_free(m);
    return code;
}
