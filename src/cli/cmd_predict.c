/* pairsight predict: co-execution latencies of candidate segment pairs. */
#include "cli/cli.h"

#include "common/common.h"
#include "profile/csv.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    C_GPU,
    C_HP_MODEL,
    C_HP_BATCH,
    C_HP_START,
    C_HP_LEN,
    C_LP_MODEL,
    C_LP_BATCH,
    C_LP_START,
    C_LP_LEN,
    C_HP_TPCS,
    C_LP_TPCS,
    N_KEYS
};

static const char *const key_names[N_KEYS] = {"gpu",      "hp_model", "hp_batch", "hp_start",
                                              "hp_len",   "lp_model", "lp_batch", "lp_start",
                                              "lp_len",   "hp_tpcs",  "lp_tpcs"};

/* The query file held in memory: every cell (to echo) and the queries. */
typedef struct {
    int ncol;
    char **header; /* [ncol] */
    char **cells;  /* [n * ncol] */
    size_t *line;  /* [n] line of each record */
    ps_query_t *q; /* [n], strings point into cells or the model's GPU */
    size_t n, cap;
} qfile_t;

static void qfile_free(qfile_t *f)
{
    for (int c = 0; f->header && c < f->ncol; c++)
        free(f->header[c]);
    for (size_t i = 0; i < f->n * (size_t)f->ncol; i++)
        free(f->cells[i]);
    free(f->header);
    free(f->cells);
    free(f->line);
    free(f->q);
    memset(f, 0, sizeof *f);
}

static int parse_int_cell(ps_csv_t *c, int col, int *out)
{
    const char *s = ps_csv_field(c, col);
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < -2147483647L || v > 2147483647L)
        return ps_error(PS_E_INPUT, "%s:%zu:%d: '%s' is not an integer", ps_csv_path(c),
                        ps_csv_field_line(c, col), col + 1, s);
    *out = (int)v;
    return PS_OK;
}

static int grow(qfile_t *f)
{
    if (f->n < f->cap)
        return PS_OK;
    size_t cap = f->cap ? 2 * f->cap : 256;
    char **cells = ps_realloc(f->cells, cap * (size_t)f->ncol * sizeof *cells);
    if (!cells)
        return PS_E_NOMEM;
    f->cells = cells;
    size_t *line = ps_realloc(f->line, cap * sizeof *line);
    if (!line)
        return PS_E_NOMEM;
    f->line = line;
    ps_query_t *q = ps_realloc(f->q, cap * sizeof *q);
    if (!q)
        return PS_E_NOMEM;
    f->q = q;
    f->cap = cap;
    return PS_OK;
}

static int read_queries(const char *path, const char *model_gpu, qfile_t *f)
{
    memset(f, 0, sizeof *f);
    ps_csv_t *c = NULL;
    int rc = ps_csv_open(path, &c);
    if (rc != PS_OK)
        return rc;
    int col[N_KEYS];
    rc = ps_csv_next(c);
    if (rc == 0)
        rc = ps_error(PS_E_INPUT, "%s: empty file, expected a header", path);
    if (rc < 0)
        goto done;
    f->ncol = ps_csv_nfields(c);
    f->header = ps_calloc((size_t)f->ncol, sizeof *f->header);
    if (!f->header) {
        rc = PS_E_NOMEM;
        goto done;
    }
    for (int k = 0; k < N_KEYS; k++)
        col[k] = -1;
    for (int i = 0; i < f->ncol; i++) {
        if (!(f->header[i] = ps_strdup(ps_csv_field(c, i)))) {
            rc = PS_E_NOMEM;
            goto done;
        }
        for (int k = 0; k < N_KEYS; k++)
            if (strcmp(f->header[i], key_names[k]) == 0)
                col[k] = i;
    }
    for (int k = 1; k < N_KEYS; k++)
        if (col[k] < 0) {
            rc = ps_error(PS_E_INPUT, "%s:%zu: missing column %s", path, ps_csv_line(c), key_names[k]);
            goto done;
        }
    while ((rc = ps_csv_next(c)) == 1) {
        if (ps_csv_nfields(c) != f->ncol) {
            rc = ps_error(PS_E_INPUT, "%s:%zu: %d fields, the header has %d", path, ps_csv_line(c),
                          ps_csv_nfields(c), f->ncol);
            goto done;
        }
        if ((rc = grow(f)) != PS_OK)
            goto done;
        char **cells = f->cells + f->n * (size_t)f->ncol;
        for (int i = 0; i < f->ncol; i++)
            cells[i] = NULL;
        f->n++;
        for (int i = 0; i < f->ncol; i++)
            if (!(cells[i] = ps_strdup(ps_csv_field(c, i)))) {
                rc = PS_E_NOMEM;
                goto done;
            }
        ps_query_t *q = &f->q[f->n - 1];
        f->line[f->n - 1] = ps_csv_line(c);
        q->gpu = col[C_GPU] >= 0 ? cells[col[C_GPU]] : model_gpu;
        q->hp_model = cells[col[C_HP_MODEL]];
        q->lp_model = cells[col[C_LP_MODEL]];
        int *ints[] = {&q->hp_batch, &q->hp_start, &q->hp_len, NULL, &q->lp_batch, &q->lp_start,
                       &q->lp_len, &q->hp_tpcs, &q->lp_tpcs};
        for (int k = C_HP_BATCH; k < N_KEYS; k++) {
            if (k == C_LP_MODEL)
                continue;
            if ((rc = parse_int_cell(c, col[k], ints[k - C_HP_BATCH])) != PS_OK)
                goto done;
        }
    }
done:
    ps_csv_close(c);
    if (rc < 0) {
        qfile_free(f);
        return rc;
    }
    return PS_OK;
}

static void put_field(FILE *o, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, o);
        return;
    }
    fputc('"', o);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', o);
        fputc(*s, o);
    }
    fputc('"', o);
}

static void write_predictions(FILE *o, const qfile_t *f, const double *hp, const double *lp, const double *hs,
                              const double *ls)
{
    for (int c = 0; c < f->ncol; c++) {
        put_field(o, f->header[c]);
        fputc(',', o);
    }
    fputs("hp_ns_pred,lp_ns_pred,hp_delta_pred,lp_delta_pred\n", o);
    for (size_t i = 0; i < f->n; i++) {
        for (int c = 0; c < f->ncol; c++) {
            put_field(o, f->cells[i * (size_t)f->ncol + (size_t)c]);
            fputc(',', o);
        }
        fprintf(o, "%.17g,%.17g,%.17g,%.17g\n", hp[i], lp[i], hp[i] / hs[i], lp[i] / ls[i]);
    }
}

static const char *const compose_names[] = {"overlap", "index", NULL};

static const char *const examples[] = {
    "pairsight predict --model out/model.psm --ops out/ops.csv --queries out/coexec.csv --out out/pred.csv",
    "head -5 out/coexec.csv | pairsight predict --model=out/model.psm --ops=out/ops.csv --queries -",
    NULL};

int cmd_predict(int argc, char **argv)
{
    const char *model_path = NULL, *ops_path = NULL, *q_path = NULL, *out = NULL;
    int json = 0, quiet = 0, compose = 0;
    cli_opt_t opts[] = {
        {"--model", CLI_STR, &model_path, "FILE", "trained model", .flags = CLI_REQ | CLI_IN},
        {"--ops", CLI_STR, &ops_path, "FILE", "standalone operator profile", .flags = CLI_REQ | CLI_IN},
        {"--queries", CLI_STR, &q_path, "FILE", "candidates", .flags = CLI_REQ | CLI_IN},
        {"--out", CLI_STR, &out, "FILE", "predictions CSV", .def = "standard output", .flags = CLI_OUT},
        {"--compose", CLI_ENUM, &compose, "NAME",
         "window composition for segments longer than the window: overlap (time-aligned) or index (published)",
         .choices = compose_names},
        CLI_OPT_JSON(&json, "print a summary (rows, seconds, microseconds per query) as JSON on standard output; "
                            "needs --out FILE"),
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    cli_spec_t spec = {
        .cmd = "predict",
        .synopsis = "--model FILE --ops FILE --queries FILE [options]",
        .about = "Predict the HP and LP latency of every candidate in the queries file: the key\n"
                 "columns of coexec.csv (gpu, hp_model, hp_batch, hp_start, hp_len, lp_model,\n"
                 "lp_batch, lp_start, lp_len, hp_tpcs, lp_tpcs; gpu may be left out and is\n"
                 "then the model's; other columns are kept). The output repeats every input\n"
                 "column and adds hp_ns_pred, lp_ns_pred, hp_delta_pred and lp_delta_pred.\n",
        .opts = opts,
        .examples = examples,
        .exit_status = "0 predicted, 1 bad input (the message names the file and line), 2 usage error.",
        .max_pos = 0};
    int code;
    if (cli_parse(&spec, argc, argv, NULL, &code))
        return code;
    ps_compose_t method = compose ? PS_COMPOSE_INDEX : PS_COMPOSE_OVERLAP;
    if (out && strcmp(cli_user_path(out), "-") == 0 && !json)
        out = NULL; /* standard output, written directly */
    if (json && (!out || strcmp(cli_user_path(out), "-") == 0))
        return cli_fail(CLI_USAGE, "predict", "--json prints a summary on standard output and needs --out FILE for "
                                              "the predictions");
    if (out) {
        const char *inputs[] = {model_path, ops_path, q_path};
        int out_code = cli_check_out("predict", out, inputs, 3);
        if (out_code != CLI_OK)
            return out_code;
    }

    ps_model_t *m = NULL;
    ps_ops_t *ops = NULL;
    qfile_t f;
    memset(&f, 0, sizeof f);
    double *buf = NULL;
    code = CLI_BAD_INPUT;
    ps_model_info_t info;
    if (ps_model_load(model_path, &m) != 0 || ps_ops_load(ops_path, &ops) != 0 || ps_model_info(m, &info) != 0 ||
        read_queries(q_path, info.gpu, &f) != 0) {
        cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
        goto done;
    }
    buf = ps_malloc((f.n ? f.n : 1) * 4 * sizeof *buf);
    if (!buf) {
        cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
        goto done;
    }
    double *hp = buf, *lp = buf + f.n, *hs = buf + 2 * f.n, *ls = buf + 3 * f.n;
    double t0 = ps_now();
    if (ps_model_predict_ex(m, ops, f.q, f.n, method, hp, lp, hs, ls) != 0) {
        /* Name the line of the first query that cannot be predicted. */
        for (size_t i = 0; i < f.n; i++)
            if (ps_model_check_query(m, ops, &f.q[i]) != 0) {
                cli_fail(CLI_BAD_INPUT, "predict", "%s:%zu: %s", cli_user_path(q_path), f.line[i], ps_last_error());
                goto done;
            }
        cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
        goto done;
    }
    double secs = ps_now() - t0;
    cli_progress(quiet, "predicted", (double)f.n, (double)f.n);
    cli_progress_end(quiet);
    if (out) {
        ps_atomic_t *a = NULL;
        if (ps_atomic_open(out, &a) != 0) {
            cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
            goto done;
        }
        write_predictions(ps_atomic_stream(a), &f, hp, lp, hs, ls);
        if (ps_atomic_commit(a) != 0) {
            cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
            goto done;
        }
    } else {
        write_predictions(stdout, &f, hp, lp, hs, ls);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            cli_fail(CLI_BAD_INPUT, "predict", "writing standard output failed");
            goto done;
        }
    }
    if (json) {
        cJSON *o = cli_json_new("predict", 1);
        cJSON_AddStringToObject(o, "out", cli_user_path(out));
        cJSON_AddNumberToObject(o, "rows", (double)f.n);
        cJSON_AddStringToObject(o, "compose", method == PS_COMPOSE_INDEX ? "index" : "overlap");
        cJSON_AddNumberToObject(o, "seconds", secs);
        cJSON_AddNumberToObject(o, "us_per_query", f.n ? 1e6 * secs / (double)f.n : 0);
        cli_json_print(o, stdout);
    }
    code = CLI_OK;
done:
    free(buf);
    qfile_free(&f);
    ps_ops_free(ops);
    ps_model_free(m);
    return code;
}
