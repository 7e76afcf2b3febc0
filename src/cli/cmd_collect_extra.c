/* pairsight collect twin | score | fixed-cost: the pieces that turn a
 * measured campaign into a validation (scripts/device_validate.sh): the
 * twin's predictions for the very segment pairs measured, the table of
 * measured against predicted slowdown, and the fixed cost of a
 * co-execution measured with empty segments. */
#include "cli/cli.h"
#include "cli/opt.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define CMD "collect"
#define MAX_PREDS 8
#define MAX_SPLITS 64

/* The message of the failure the commands found themselves (empty: the
 * library's, ps_last_error). */
static char err_msg[1024];

static int fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_msg, sizeof err_msg, fmt, ap);
    va_end(ap);
    return code;
}

/* calloc(n ? n : 1, size), or NULL with the message of an exhausted heap. */
static void *alloc_zero(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        fail(PS_E_NOMEM, "out of memory (%zu x %zu bytes)", n, size);
    return p;
}

/* The exit of a command: CLI_OK, or its failure reported. */
static int finish(int rc)
{
    int code = rc ? cli_fail(CLI_BAD_INPUT, CMD, "%s", err_msg[0] ? err_msg : ps_last_error()) : CLI_OK;
    err_msg[0] = '\0';
    return code;
}

/* ---- collect twin ---- */

/* The key of an experiment's segment pair and split, without the GPU (the
 * predictors name theirs). */
static void pair_key(const ps_coexec_row_t *r, char *out, size_t size)
{
    snprintf(out, size, "%s:%d:%d:%d|%s:%d:%d:%d|%d/%d", r->hp_model, r->hp_batch, r->hp_start, r->hp_len,
             r->lp_model, r->lp_batch, r->lp_start, r->lp_len, r->hp_tpcs, r->lp_tpcs);
}

/* The distinct segment pairs of t (first row of each), in order. */
static int distinct_pairs(const ps_coexec_t *t, ps_coexec_row_t **out, size_t *n_out)
{
    size_t rows = ps_coexec_rows(t);
    ps_coexec_row_t *u = alloc_zero(rows ? rows : 1, sizeof *u), row;
    if (!u)
        return PS_E_NOMEM;
    size_t n = 0;
    char a[512], b[512];
    for (size_t i = 0; i < rows && ps_coexec_row(t, i, &row) == 0; i++) {
        pair_key(&row, a, sizeof a);
        int seen = 0;
        /* Runs of one experiment are adjacent; look back a little first. */
        for (size_t j = n; j-- > 0 && !seen;) {
            pair_key(&u[j], b, sizeof b);
            seen = strcmp(a, b) == 0;
        }
        if (!seen)
            u[n++] = row;
    }
    *out = u;
    *n_out = n;
    return 0;
}

int cmd_collect_twin(int argc, char **argv)
{
    const char *queries = NULL, *gpu = "h200", *out = NULL;
    int seq_len = 128, quiet = 0;
    cli_opt_t opts[] = {
        {"--queries", CLI_STR, &queries, "FILE", "coexec.csv whose segment pairs and splits to predict",
         .flags = CLI_REQ | CLI_IN},
        {"--gpu", CLI_STR, &gpu, "NAME", "a GPU of the simulator's catalog (pairsight simulate --list)"},
        {"--seq-len", CLI_INT, &seq_len, "N", "tokens per sequence, as the campaign's", .lo = 1, .hi = 1 << 20},
        {"--out", CLI_STR, &out, "FILE", "output CSV", .def = "standard output", .flags = CLI_OUT},
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    cli_spec_t spec = {.cmd = CMD,
                       .sub = "twin",
                       .synopsis = "--queries COEXEC_CSV [options]",
                       .about = "The twin's latency and slowdown for every distinct segment pair and split of a\n"
                                "coexec.csv (segments index the collector's operator lists): the key columns,\n"
                                "hp_ns_pred, lp_ns_pred, hp_delta_pred, lp_delta_pred (against the twin's own\n"
                                "standalone sums hp_solo_ns_pred, lp_solo_ns_pred).\n",
                       .opts = opts};
    int code;
    if (cli_parse(&spec, argc - 1, argv + 1, NULL, &code))
        return code;
    ps_gpu_info_t gi, *g = &gi;
    if (ps_gpu_find(gpu, g) != 0)
        return cli_fail(CLI_USAGE, CMD, "--gpu: unknown GPU '%s' (see pairsight simulate --list)", gpu);
    ps_coexec_t *t = NULL;
    ps_coexec_row_t *q = NULL;
    ps_twin_pred_t *pr = NULL;
    size_t n = 0;
    ps_outfile_t *at = NULL;
    int rc = ps_coexec_load(queries, &t);
    if (rc == 0)
        rc = distinct_pairs(t, &q, &n);
    if (rc == 0 && !(pr = alloc_zero(n ? n : 1, sizeof *pr)))
        rc = PS_E_NOMEM;
    if (rc == 0)
        rc = ps_sim_twin_predict(gpu, seq_len, q, n, pr);
    if (rc == 0 && out)
        rc = ps_outfile_open(out, &at);
    FILE *f = at ? ps_outfile_stream(at) : stdout;
    if (rc == 0) {
        fprintf(f, "experiment,gpu,hp_model,hp_batch,hp_start,hp_len,lp_model,lp_batch,lp_start,lp_len,"
                   "hp_tpcs,lp_tpcs,hp_ns_pred,lp_ns_pred,hp_delta_pred,lp_delta_pred,hp_solo_ns_pred,"
                   "lp_solo_ns_pred\n");
        for (size_t i = 0; i < n; i++) {
            const ps_coexec_row_t *r = &q[i];
            ps_csv_put_field(f, r->experiment);
            fputc(',', f);
            ps_csv_put_field(f, g->name);
            fputc(',', f);
            ps_csv_put_field(f, r->hp_model);
            fprintf(f, ",%d,%d,%d,", r->hp_batch, r->hp_start, r->hp_len);
            ps_csv_put_field(f, r->lp_model);
            fprintf(f, ",%d,%d,%d,%d,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", r->lp_batch, r->lp_start,
                    r->lp_len, r->hp_tpcs, r->lp_tpcs, pr[i].hp_ns, pr[i].lp_ns, pr[i].hp_ns / pr[i].hp_solo_ns,
                    pr[i].lp_ns / pr[i].lp_solo_ns, pr[i].hp_solo_ns, pr[i].lp_solo_ns);
        }
    }
    if (rc == 0 && at)
        rc = ps_outfile_commit(at);
    else if (at)
        ps_outfile_abort(at);
    if (rc == 0 && !quiet)
        fprintf(stderr, "pairsight: collect: twin (%s) predicted %zu segment pairs%s%s\n", g->name, n,
                out ? " into " : "", out ? out : "");
    free(pr);
    free(q);
    ps_coexec_free(t);
    return finish(rc);
}

/* ---- collect score ---- */

typedef struct {
    char key[512];
    double hp_delta, lp_delta; /* measured: mean over the runs */
    int runs;
    double pred_hp[MAX_PREDS], pred_lp[MAX_PREDS];
} exp_t;

static int find_exp(exp_t *e, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(e[i].key, key) == 0)
            return (int)i;
    return -1;
}

/* Measured slowdown of every experiment of cx against the standalone sums
 * of ops (delta = T_share / T_solo, FORMATS.md). */
static int measured(const ps_ops_t *ops, const ps_coexec_t *cx, exp_t **out, size_t *n_out)
{
    size_t rows = ps_coexec_rows(cx);
    exp_t *e = alloc_zero(rows ? rows : 1, sizeof *e);
    if (!e)
        return PS_E_NOMEM;
    size_t n = 0;
    ps_coexec_row_t row, *r = &row;
    for (size_t i = 0; i < rows && ps_coexec_row(cx, i, r) == 0; i++) {
        double sh = NAN, sl = NAN;
        ps_ops_segment_ns(ops, r->gpu, r->hp_model, r->hp_batch, r->hp_start, r->hp_len, r->hp_tpcs, &sh);
        ps_ops_segment_ns(ops, r->gpu, r->lp_model, r->lp_batch, r->lp_start, r->lp_len, r->lp_tpcs, &sl);
        if (!(sh > 0) || !(sl > 0)) {
            free(e);
            return fail(PS_E_INPUT, "coexec row %zu (%s): no standalone profile of its segments at %d/%d TPCs", i + 1,
                        r->experiment, r->hp_tpcs, r->lp_tpcs);
        }
        char key[512];
        pair_key(r, key, sizeof key);
        int k = n && strcmp(e[n - 1].key, key) == 0 ? (int)n - 1 : find_exp(e, n, key);
        if (k < 0) {
            k = (int)n++;
            snprintf(e[k].key, sizeof e[k].key, "%s", key);
            for (int p = 0; p < MAX_PREDS; p++)
                e[k].pred_hp[p] = e[k].pred_lp[p] = NAN;
        }
        e[k].hp_delta += r->hp_ns / sh;
        e[k].lp_delta += r->lp_ns / sl;
        e[k].runs++;
    }
    for (size_t k = 0; k < n; k++) {
        e[k].hp_delta /= e[k].runs;
        e[k].lp_delta /= e[k].runs;
    }
    *out = e;
    *n_out = n;
    return 0;
}

/* Read hp_delta_pred and lp_delta_pred of predictor p from path. */
static int read_pred(const char *path, exp_t *e, size_t n, int p, size_t *matched)
{
    static const char *const cols[] = {"hp_model", "hp_batch", "hp_start", "hp_len", "lp_model", "lp_batch",
                                       "lp_start", "lp_len", "hp_tpcs",  "lp_tpcs", "hp_delta_pred",
                                       "lp_delta_pred"};
    enum { NC = 12 };
    ps_csv_t *c = NULL;
    int rc = ps_csv_open(path, &c), at[NC];
    if (rc)
        return rc;
    *matched = 0;
    int r = ps_csv_next(c);
    if (r <= 0) {
        ps_csv_close(c);
        return r < 0 ? r : fail(PS_E_INPUT, "%s: empty", path);
    }
    for (int k = 0; k < NC && rc == 0; k++)
        if ((at[k] = ps_csv_find(c, cols[k])) < 0)
            rc = fail(PS_E_INPUT, "%s: no column %s", path, cols[k]);
    while (rc == 0 && (r = ps_csv_next(c)) == 1) {
        const char *f[NC];
        for (int k = 0; k < NC; k++)
            f[k] = at[k] < ps_csv_nfields(c) ? ps_csv_field(c, at[k]) : "";
        char key[512], *end1, *end2;
        snprintf(key, sizeof key, "%s:%s:%s:%s|%s:%s:%s:%s|%s/%s", f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7],
                 f[8], f[9]);
        double h = strtod(f[10], &end1), l = strtod(f[11], &end2);
        if (end1 == f[10] || end2 == f[11] || !(h > 0) || !(l > 0)) {
            rc = fail(PS_E_INPUT, "%s:%zu: hp_delta_pred/lp_delta_pred: not a positive number", path, ps_csv_line(c));
            break;
        }
        int k = find_exp(e, n, key);
        if (k >= 0 && isnan(e[k].pred_hp[p])) {
            e[k].pred_hp[p] = h;
            e[k].pred_lp[p] = l;
            (*matched)++;
        }
    }
    if (rc == 0 && r < 0)
        rc = r;
    ps_csv_close(c);
    return rc;
}

/* How a predictor's deltas agree with the measured ones: MAPE (percent) and
 * Pearson correlation over the experiments where it predicts. */
typedef struct {
    double mape, r;
} agree_t;

/* Predictor p's agreement (p -1: no interference, a delta of 1) on the LP
 * side when lp, else the HP side. */
static agree_t agreement(const exp_t *e, size_t n, int p, int lp)
{
    double s = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        double y = lp ? e[i].lp_delta : e[i].hp_delta;
        double x = p < 0 ? 1.0 : lp ? e[i].pred_lp[p] : e[i].pred_hp[p];
        if (isnan(x))
            continue;
        s += fabs(x - y) / y;
        sx += x;
        sy += y;
        sxx += x * x;
        syy += y * y;
        sxy += x * y;
        k++;
    }
    agree_t a = {.mape = k ? 100.0 * s / k : NAN};
    double vx = sxx - sx * sx / k, vy = syy - sy * sy / k;
    a.r = k > 1 && vx > 0 && vy > 0 ? (sxy - sx * sy / k) / sqrt(vx * vy) : NAN;
    return a;
}

/* NAME=FILE of --pred into the next slot of the predictors. */
typedef struct {
    const char *file[MAX_PREDS];
    char name[MAX_PREDS][64];
    int n;
} preds_t;

/* "NAME=FILE,NAME=FILE": the file names point into v (argv). */
static int fn_pred(const char *v, void *dest)
{
    static char buf[4096];
    preds_t *p = dest;
    if (strlen(v) >= sizeof buf)
        return -1;
    memcpy(buf, v, strlen(v) + 1);
    p->n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1] || (size_t)(eq - tok) >= sizeof p->name[0] || p->n == MAX_PREDS)
            return -1;
        *eq = '\0';
        snprintf(p->name[p->n], sizeof p->name[0], "%s", tok);
        p->file[p->n++] = eq + 1;
    }
    return p->n ? 0 : -1;
}

/* The score table (text, or JSON with json) of the n experiments (of
 * n_runs runs): no-interference, then each predictor. */
static void print_score(const exp_t *e, size_t n, size_t n_runs, const preds_t *pr, int json)
{
    double mh = 0, ml = 0;
    for (size_t i = 0; i < n; i++) {
        mh += e[i].hp_delta / n;
        ml += e[i].lp_delta / n;
    }
    cJSON *j = json ? cli_json_new("collect-score", 1) : NULL, *arr = NULL;
    if (j) {
        cJSON_AddNumberToObject(j, "experiments", (double)n);
        cJSON_AddNumberToObject(j, "runs", (double)n_runs);
        cJSON_AddNumberToObject(j, "measured_hp_delta", mh);
        cJSON_AddNumberToObject(j, "measured_lp_delta", ml);
        arr = cJSON_AddArrayToObject(j, "predictors");
    } else {
        printf("%zu experiments, %zu runs; measured delta: HP %.4f, LP %.4f (mean)\n\n"
               "%-18s %11s %11s %8s %8s\n",
               n, n_runs, mh, ml, "predictor", "HP MAPE %", "LP MAPE %", "HP r", "LP r");
    }
    for (int p = -1; p < pr->n; p++) {
        agree_t hp = agreement(e, n, p, 0), lp = agreement(e, n, p, 1);
        const char *name = p < 0 ? "no-interference" : pr->name[p];
        if (j) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", name);
            cJSON_AddNumberToObject(o, "hp_mape_pct", hp.mape);
            cJSON_AddNumberToObject(o, "lp_mape_pct", lp.mape);
            cJSON_AddNumberToObject(o, "hp_r", hp.r); /* null where undefined (no-interference) */
            cJSON_AddNumberToObject(o, "lp_r", lp.r);
            cJSON_AddItemToArray(arr, o);
        } else {
            printf("%-18s %11.2f %11.2f %8.3f %8.3f\n", name, hp.mape, lp.mape, hp.r, lp.r);
        }
    }
    if (j)
        cli_json_print(j, stdout);
}

int cmd_collect_score(int argc, char **argv)
{
    const char *ops_path = NULL, *cx_path = NULL;
    preds_t pr = {.n = 0};
    int json = 0, quiet = 0;
    cli_opt_t opts[] = {
        {"--ops", CLI_STR, &ops_path, "FILE", "measured standalone profile", .flags = CLI_REQ | CLI_IN},
        {"--coexec", CLI_STR, &cx_path, "FILE", "measured co-executions", .flags = CLI_REQ | CLI_IN},
        {"--pred", CLI_FN, &pr, "LIST", "predictors' outputs (predict, collect twin) as NAME=FILE,NAME=FILE",
         .def = "none", .parse = fn_pred, .accepts = "NAME=FILE,... with at most 8 predictors"},
        CLI_OPT_JSON(&json, "print the table as JSON on stdout"),
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    cli_spec_t spec = {.cmd = CMD,
                       .sub = "score",
                       .synopsis = "--ops OPS_CSV --coexec COEXEC_CSV --pred NAME=FILE,... [--json]",
                       .about = "Measured slowdown (delta = co-execution / standalone sum, mean over the runs of\n"
                                "each experiment) against each predictor's hp_delta_pred and lp_delta_pred:\n"
                                "MAPE per side and Pearson r over the experiments; the row no-interference\n"
                                "predicts delta = 1.\n",
                       .opts = opts};
    int code;
    if (cli_parse(&spec, argc - 1, argv + 1, NULL, &code))
        return code;
    int n_pred = pr.n;
    const char *const *pred = pr.file;
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    exp_t *e = NULL;
    size_t n = 0, matched[MAX_PREDS] = {0};
    int rc = ps_ops_load(ops_path, &ops);
    if (rc == 0)
        rc = ps_coexec_load(cx_path, &cx);
    if (rc == 0)
        rc = measured(ops, cx, &e, &n);
    for (int p = 0; p < n_pred && rc == 0; p++)
        rc = read_pred(pred[p], e, n, p, &matched[p]);
    for (int p = 0; p < n_pred && rc == 0; p++)
        if (matched[p] != n)
            rc = fail(PS_E_INPUT, "%s: predicts %zu of the %zu experiments of %s", pred[p], matched[p], n, cx_path);
    if (rc == 0)
        print_score(e, n, ps_coexec_rows(cx), &pr, json);
    free(e);
    ps_ops_free(ops);
    ps_coexec_free(cx);
    return finish(rc);
}

/* ---- collect fixed-cost ---- */

typedef struct {
    int hp[MAX_SPLITS], lp[MAX_SPLITS], n;
} splits_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorted in place), NAN for none. */
static double median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* "20/34,27/27" */
static int fn_splits(const char *v, void *dest)
{
    splits_t *sp = dest;
    sp->n = 0;
    for (const char *s = v; *s;) {
        char *end;
        long h = strtol(s, &end, 10);
        if (end == s || *end != '/' || sp->n == MAX_SPLITS)
            return -1;
        s = end + 1;
        long l = strtol(s, &end, 10);
        if (end == s || (*end && *end != ',') || h < 1 || l < 1 || h > 4096 || l > 4096)
            return -1;
        sp->hp[sp->n] = (int)h;
        sp->lp[sp->n++] = (int)l;
        s = *end ? end + 1 : end;
    }
    return sp->n ? 0 : -1;
}

int cmd_collect_fixed_cost(int argc, char **argv)
{
    ps_collect_params_t p = ps_collect_default_params();
    splits_t sp = {.n = 0};
    int runs = 30, json = 0, quiet = 0;
    cli_opt_t opts[] = {
        {"--splits", CLI_FN, &sp, "LIST", "SM splits HP/LP in TPCs", .flags = CLI_REQ, .parse = fn_splits,
         .accepts = "HP/LP,... like 20/34,27/27"},
        {"--runs", CLI_INT, &runs, "N", "runs per split", .lo = 1, .hi = 1 << 20},
        {"--warmup", CLI_INT, &p.warmup, "N", "untimed runs first", .lo = 0, .hi = 1 << 20},
        {"--backend", CLI_STR, &p.backend, "NAME", "cuda or fake, a simulated GPU for tests"},
        {"--device", CLI_INT, &p.device, "N", "CUDA device ordinal", .lo = 0, .hi = 1024},
        CLI_OPT_JSON(&json, "print the result as JSON on stdout"),
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    cli_spec_t spec = {.cmd = CMD,
                       .sub = "fixed-cost",
                       .synopsis = "--splits HP/LP,... [options]",
                       .about = "The fixed cost of a co-execution: each side timed with nothing between its\n"
                                "events, both sides started together, R runs per split; prints the median per\n"
                                "side and split.\n",
                       .opts = opts};
    int code;
    if (cli_parse(&spec, argc - 1, argv + 1, NULL, &code))
        return code;
    int n = sp.n, *hp = sp.hp, *lp = sp.lp;
    ps_campaign_t *c = NULL;
    double *h = alloc_zero((size_t)runs, sizeof *h), *l = h ? alloc_zero((size_t)runs, sizeof *l) : NULL;
    int rc = h && l ? ps_campaign_open(":memory:", &p, &c) : PS_E_NOMEM;
    ps_collect_device_t d;
    if (rc == 0)
        rc = ps_campaign_device(c, &d);
    cJSON *j = rc == 0 && json ? cli_json_new("collect-fixed-cost", 1) : NULL, *arr = NULL;
    if (j) {
        cJSON_AddStringToObject(j, "gpu", d.gpu);
        cJSON_AddNumberToObject(j, "runs", runs);
        arr = cJSON_AddArrayToObject(j, "splits");
    } else if (rc == 0) {
        printf("fixed co-execution cost on %s (empty segments, median of %d runs)\n%-8s %10s %10s\n", d.gpu, runs,
               "split", "HP us", "LP us");
    }
    for (int k = 0; k < n && rc == 0; k++) {
        rc = ps_campaign_fixed_cost(c, hp[k], lp[k], runs, h, l);
        if (rc)
            break;
        double mh = median(h, (size_t)runs), ml = median(l, (size_t)runs);
        if (j) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "hp_tpcs", hp[k]);
            cJSON_AddNumberToObject(o, "lp_tpcs", lp[k]);
            cJSON_AddNumberToObject(o, "hp_ns", mh);
            cJSON_AddNumberToObject(o, "lp_ns", ml);
            cJSON_AddItemToArray(arr, o);
        } else {
            printf("%3d/%-4d %10.2f %10.2f\n", hp[k], lp[k], mh * 1e-3, ml * 1e-3);
        }
    }
    if (j && rc == 0)
        cli_json_print(j, stdout);
    else if (j)
        cJSON_Delete(j);
    free(h);
    free(l);
    ps_campaign_free(c);
    return finish(rc);
}
