/*
 * Calibrated upper bounds (docs/planner.md, "Bounds"): split-conformal
 * quantiles of the residual of log delta (Vovk et al. 2005; Romano et al.
 * 2019 for the conditional use), one table per side, conditioned on
 * Mondrian bins (SM split range x HP memory-boundedness).
 *
 * With r_i = y_i - yhat_i the residuals of the n calibration samples of a
 * bin sorted ascending, the upper bound at coverage c is
 *     yhat + r_(k),  k = ceil((n + 1) c),
 * which covers a new exchangeable sample with probability >= c (and < c +
 * 1/(n+1) without ties). k > n has no finite bound: the bin is then too
 * small for c and a coarser bin is used.
 */
#include "model/calib.h"

#include "common/common.h"
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_BIN 300

static double level_at(int i)
{
    if (i < 50)
        return 0.50 + 0.01 * i;
    return i == 50 ? 0.995 : 0.999;
}

/* The stored level for coverage c: the lowest level >= c (-1 outside). */
static int level_index(double c)
{
    for (int i = 0; i < CALIB_NLEVELS; i++)
        if (level_at(i) >= c - 1e-12)
            return i;
    return -1;
}

/* The bin key of a query: SM split range and memory-bound share of the HP
 * segment's standalone time at its TPCs (PS_INTENSITY_MEMORY operators). */
static int bin_key(const ps_ops_t *ops, const ps_query_t *q, int *s, int *m)
{
    double share = (double)q->hp_tpcs / (double)(q->hp_tpcs + q->lp_tpcs);
    *s = share < 0.35 ? 0 : share < 0.65 ? 1 : 2;
    const psi_op_group_t *g = psi_ops_find(ops, q->gpu, q->hp_model, q->hp_batch);
    int k = g ? psi_group_tpcs_index(g, q->hp_tpcs) : -1;
    if (k < 0 || q->hp_start < 0 || q->hp_start + q->hp_len > g->n_ops)
        return psi_error(PS_E_INPUT, "%s batch %d: no standalone profile at %d TPCs", q->hp_model, q->hp_batch,
                         q->hp_tpcs);
    double all = 0, mem = 0;
    for (int op = q->hp_start; op < q->hp_start + q->hp_len; op++) {
        double t = g->duration_ns[(size_t)op * (size_t)g->n_tpcs + (size_t)k];
        all += t;
        if (g->intensity[op] == PS_INTENSITY_MEMORY)
            mem += t;
    }
    *m = all > 0 && mem / all >= 0.5;
    return PS_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Quantiles of one side of a bin from its n residuals (sorted here). */
static void bin_fill(calib_bin_t *b, int side, double *r, int n)
{
    qsort(r, (size_t)n, sizeof *r, cmp_double);
    b->n = n;
    for (int i = 0; i < CALIB_NLEVELS; i++) {
        double k = ceil((n + 1) * level_at(i) - 1e-9);
        b->q[side][i] = n > 0 && k <= n ? r[(int)k - 1] : INFINITY;
    }
}

int calib_fit(const ps_model_t *m, const ps_ops_t *ops, const psi_dataset_t *d, psi_calib_t **out)
{
    *out = NULL;
    size_t n = 0, nf = (size_t)d->layout.n_features;
    for (size_t i = 0; i < d->n; i++)
        n += d->split[i] == PS_SPLIT_CALIB;
    if (n == 0)
        return PS_OK;
    int rc = PS_E_NOMEM;
    psi_calib_t *c = psi_calloc(1, sizeof *c);
    float *x = psi_malloc(n * nf * sizeof *x);
    double *pred = psi_malloc(n * sizeof *pred), *res = psi_malloc(2 * n * sizeof *res);
    double *tmp = psi_malloc(n * sizeof *tmp);
    int *key = psi_malloc(n * sizeof *key);
    if (!c || !x || !pred || !res || !tmp || !key)
        goto done;
    c->min_bin = MIN_BIN;
    c->n_rows = n;
    int last_exp = -1;
    size_t j = 0;
    for (size_t i = 0; i < d->n; i++) {
        if (d->split[i] != PS_SPLIT_CALIB)
            continue;
        ps_query_t q = psi_query_of_row(d->rows[i]);
        int s, mb;
        if ((rc = bin_key(ops, &q, &s, &mb)) != PS_OK)
            goto done;
        key[j] = s * CALIB_NMEM + mb;
        if (d->experiment[i] != last_exp)
            c->n_experiments++;
        last_exp = d->experiment[i];
        j++;
    }
    for (int side = 0; side < 2; side++) {
        const double *y = side == PS_SIDE_HP ? d->y_hp : d->y_lp;
        j = 0;
        /* A lean data set (training's) keeps no feature vectors: built here. */
        for (size_t i = 0; i < d->n; i++)
            if (d->split[i] == PS_SPLIT_CALIB && (rc = psi_dataset_features(d, ops, i, side, x + nf * j++)) != PS_OK)
                goto done;
        psi_model_predict_rows(m, side, x, n, pred);
        j = 0;
        for (size_t i = 0; i < d->n; i++)
            if (d->split[i] == PS_SPLIT_CALIB) {
                res[side * n + j] = y[i] - pred[j];
                j++;
            }
        /* Pooled, per SM-split range, per cell. */
        memcpy(tmp, res + side * n, n * sizeof *tmp);
        bin_fill(&c->all, side, tmp, (int)n);
        for (int s = 0; s < CALIB_NSPLIT; s++) {
            int k = 0;
            for (size_t i = 0; i < n; i++)
                if (key[i] / CALIB_NMEM == s)
                    tmp[k++] = res[side * n + i];
            bin_fill(&c->split[s], side, tmp, k);
            for (int mb = 0; mb < CALIB_NMEM; mb++) {
                k = 0;
                for (size_t i = 0; i < n; i++)
                    if (key[i] == s * CALIB_NMEM + mb)
                        tmp[k++] = res[side * n + i];
                bin_fill(&c->cell[s][mb], side, tmp, k);
            }
        }
    }
    rc = PS_OK;
done:
    free(x);
    free(pred);
    free(res);
    free(tmp);
    free(key);
    if (rc != PS_OK) {
        free(c);
        return rc;
    }
    *out = c;
    return PS_OK;
}

static int bin_ok(const psi_calib_t *c, const calib_bin_t *b, int li)
{
    return b->n >= c->min_bin && isfinite(b->q[0][li]) && isfinite(b->q[1][li]);
}

/* The bin that serves (s, mb) at level li. The bins in use must partition
 * the queries (a cell that borrowed its SM-split row's quantile while its
 * sibling kept its own would be under-covered): the split rows are used
 * only when every one of them is large enough, and a split row's cells only
 * when both are; otherwise the coarser bin serves all of them. */
static const calib_bin_t *pick(const psi_calib_t *c, int s, int mb, int li)
{
    for (int k = 0; k < CALIB_NSPLIT; k++)
        if (!bin_ok(c, &c->split[k], li))
            return isfinite(c->all.q[0][li]) && isfinite(c->all.q[1][li]) ? &c->all : NULL;
    for (int k = 0; k < CALIB_NMEM; k++)
        if (!bin_ok(c, &c->cell[s][k], li))
            return &c->split[s];
    return &c->cell[s][mb];
}

int calib_offsets(const psi_calib_t *c, const ps_ops_t *ops, const ps_query_t *w, int gpu_tpcs, double coverage,
                  double *off_hp, double *off_lp)
{
    (void)gpu_tpcs;
    int li = level_index(coverage);
    if (li < 0)
        return psi_error(PS_E_ARG, "coverage %g is outside 0.5..0.999", coverage);
    int s, mb;
    int rc = bin_key(ops, w, &s, &mb);
    if (rc != PS_OK)
        return rc;
    const calib_bin_t *b = pick(c, s, mb, li);
    if (!b)
        return psi_error(PS_E_INPUT, "the calibration's %d samples are too few for coverage %g", c->all.n, coverage);
    *off_hp = b->q[PS_SIDE_HP][li];
    *off_lp = b->q[PS_SIDE_LP][li];
    return PS_OK;
}

/* ---- JSON: {"min_bin", "n_rows", "n_experiments", "levels": [...],
 * "bins": [{"split": s|-1, "mem": m|-1, "n", "hp": [...], "lp": [...]}]} ---- */

/* Both NULL when an allocation inside cJSON failed (a calibration missing a
 * bin must not be saved as if whole). */
static cJSON *bin_json(const calib_bin_t *b, int s, int mb)
{
    cJSON *o = cJSON_CreateObject();
    int ok = o && cJSON_AddNumberToObject(o, "split", s) && cJSON_AddNumberToObject(o, "mem", mb) &&
             cJSON_AddNumberToObject(o, "n", b->n);
    for (int side = 0; side < 2 && ok; side++) {
        cJSON *a = cJSON_AddArrayToObject(o, side == 0 ? "hp" : "lp");
        ok = a != NULL;
        for (int i = 0; i < CALIB_NLEVELS && ok; i++) {
            cJSON *e = isfinite(b->q[side][i]) ? cJSON_CreateNumber(b->q[side][i]) : cJSON_CreateNull();
            ok = e && cJSON_AddItemToArray(a, e);
        }
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Add item to array a: 0 (item freed) when either is NULL. */
static int add_to(cJSON *a, cJSON *item)
{
    if (a && item && cJSON_AddItemToArray(a, item))
        return 1;
    cJSON_Delete(item);
    return 0;
}

cJSON *calib_to_json(const psi_calib_t *c)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    int ok = cJSON_AddNumberToObject(o, "min_bin", c->min_bin) &&
             cJSON_AddNumberToObject(o, "n_rows", (double)c->n_rows) &&
             cJSON_AddNumberToObject(o, "n_experiments", (double)c->n_experiments);
    cJSON *lv = ok ? cJSON_AddArrayToObject(o, "levels") : NULL;
    for (int i = 0; i < CALIB_NLEVELS && ok; i++)
        ok = add_to(lv, cJSON_CreateNumber(level_at(i)));
    cJSON *bins = ok ? cJSON_AddArrayToObject(o, "bins") : NULL;
    ok = ok && add_to(bins, bin_json(&c->all, -1, -1));
    for (int s = 0; s < CALIB_NSPLIT && ok; s++)
        ok = add_to(bins, bin_json(&c->split[s], s, -1));
    for (int s = 0; s < CALIB_NSPLIT && ok; s++)
        for (int mb = 0; mb < CALIB_NMEM && ok; mb++)
            ok = add_to(bins, bin_json(&c->cell[s][mb], s, mb));
    if (ok && c->composed.n > 0) {
        cJSON *k = bin_json(&c->composed, -1, -1);
        ok = k && cJSON_AddNumberToObject(k, "window", c->composed_window);
        ok = ok && cJSON_AddItemToObject(o, "composed", k);
        if (!ok)
            cJSON_Delete(k);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int json_int(const cJSON *o, const char *k, int lo, int hi, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi)
        return -1;
    *out = (int)v->valuedouble;
    return 0;
}

/* The quantile arrays of one bin (n samples) from its JSON; nonzero when
 * malformed. */
static int bin_from_json(const cJSON *b, calib_bin_t *dst, int n)
{
    dst->n = n;
    for (int side = 0; side < 2; side++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(b, side == 0 ? "hp" : "lp");
        if (cJSON_GetArraySize(a) != CALIB_NLEVELS)
            return 1;
        for (int i = 0; i < CALIB_NLEVELS; i++) {
            const cJSON *e = cJSON_GetArrayItem(a, i);
            if (cJSON_IsNull(e))
                dst->q[side][i] = INFINITY;
            else if (cJSON_IsNumber(e) && isfinite(e->valuedouble))
                dst->q[side][i] = e->valuedouble;
            else
                return 1;
        }
    }
    return 0;
}

int calib_from_json(const cJSON *o, psi_calib_t **out)
{
    *out = NULL;
    if (!o)
        return PS_OK;
    psi_calib_t *c = psi_calloc(1, sizeof *c);
    if (!c)
        return PS_E_NOMEM;
    int nrows = 0, nexp = 0;
    const cJSON *bins = cJSON_GetObjectItemCaseSensitive(o, "bins");
    const cJSON *lv = cJSON_GetObjectItemCaseSensitive(o, "levels");
    int bad = !cJSON_IsObject(o) || json_int(o, "min_bin", 1, 1 << 30, &c->min_bin) ||
              json_int(o, "n_rows", 0, 1 << 30, &nrows) || json_int(o, "n_experiments", 0, 1 << 30, &nexp) ||
              !cJSON_IsArray(bins) || cJSON_GetArraySize(lv) != CALIB_NLEVELS;
    for (int i = 0; !bad && i < CALIB_NLEVELS; i++) {
        const cJSON *e = cJSON_GetArrayItem(lv, i);
        bad = !cJSON_IsNumber(e) || fabs(e->valuedouble - level_at(i)) > 1e-9;
    }
    const cJSON *b;
    cJSON_ArrayForEach(b, bins)
    {
        if (bad)
            break;
        int s, mb, n;
        if (json_int(b, "split", -1, CALIB_NSPLIT - 1, &s) || json_int(b, "mem", -1, CALIB_NMEM - 1, &mb) ||
            json_int(b, "n", 0, 1 << 30, &n) || (s < 0 && mb >= 0)) {
            bad = 1;
            break;
        }
        bad = bin_from_json(b, s < 0 ? &c->all : mb < 0 ? &c->split[s] : &c->cell[s][mb], n);
    }
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "composed");
    if (!bad && k) {
        int n = 0, w = 0;
        bad = json_int(k, "n", 1, 1 << 30, &n) || json_int(k, "window", 1, 1 << 20, &w) ||
              bin_from_json(k, &c->composed, n);
        c->composed_window = w;
    }
    if (bad) {
        free(c);
        return psi_error(PS_E_INPUT, "model header: malformed calibration section");
    }
    c->n_rows = (size_t)nrows;
    c->n_experiments = (size_t)nexp;
    *out = c;
    return PS_OK;
}

int bound_coverage(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, const double *meas_hp,
                   const double *meas_lp, size_t n, double level, bound_cov_t *out)
{
    memset(out, 0, sizeof *out);
    out->level = level;
    out->hp_cover = out->lp_cover = out->hp_width = out->lp_width = NAN;
    const psi_calib_t *c = m->calib;
    int li = level_index(level);
    if (n == 0 || !c || li < 0 || !isfinite(c->all.q[0][li]) || !isfinite(c->all.q[1][li]))
        return PS_OK; /* no calibration, or too few samples for the level */
    double *b = psi_malloc(4 * n * sizeof *b);
    if (!b)
        return PS_E_NOMEM;
    int rc = ps_model_predict(m, ops, q, n, b, b + n);
    if (rc == PS_OK)
        rc = ps_model_predict_bound(m, ops, q, n, level, b + 2 * n, b + 3 * n);
    if (rc == PS_OK) {
        double ch = 0, cl = 0, wh = 0, wl = 0;
        for (size_t i = 0; i < n; i++) {
            ch += meas_hp[i] <= b[2 * n + i];
            cl += meas_lp[i] <= b[3 * n + i];
            wh += b[2 * n + i] / b[i] - 1;
            wl += b[3 * n + i] / b[n + i] - 1;
        }
        out->n = n;
        out->hp_cover = 100 * ch / (double)n;
        out->lp_cover = 100 * cl / (double)n;
        out->hp_width = 100 * wh / (double)n;
        out->lp_width = 100 * wl / (double)n;
    }
    free(b);
    return rc;
}

int calib_composed(const psi_calib_t *c, double coverage, double *off_hp, double *off_lp)
{
    *off_hp = *off_lp = 0;
    int li = level_index(coverage);
    if (!c || c->composed.n == 0 || li < 0 || !isfinite(c->composed.q[0][li]) || !isfinite(c->composed.q[1][li]))
        return 0;
    *off_hp = c->composed.q[PS_SIDE_HP][li];
    *off_lp = c->composed.q[PS_SIDE_LP][li];
    return 1;
}

/* Rows of cx longer than the window on a side, as queries and measures. */
static int composed_rows(const ps_coexec_t *cx, int W, ps_query_t **q, double **meas, int *n)
{
    *q = psi_malloc((cx->n ? cx->n : 1) * sizeof **q);
    *meas = psi_malloc(2 * (cx->n ? cx->n : 1) * sizeof **meas);
    if (!*q || !*meas)
        return PS_E_NOMEM;
    *n = 0;
    for (size_t i = 0; i < cx->n; i++) {
        const psi_coexec_row_t *r = &cx->rows[i];
        if (r->hp_len <= W && r->lp_len <= W)
            continue;
        (*q)[*n] = psi_query_of_row(r);
        (*meas)[2 * *n] = r->hp_ns;
        (*meas)[2 * *n + 1] = r->lp_ns;
        (*n)++;
    }
    return PS_OK;
}

/* Quantiles at every level of log(measured / window-composed bound). */
static int composed_fit(ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, const double *meas, int n,
                        calib_bin_t *out)
{
    double *b = psi_malloc(4 * (size_t)n * sizeof *b), *r = b + 2 * n;
    if (!b)
        return PS_E_NOMEM;
    int rc = PS_OK;
    for (int li = 0; li < CALIB_NLEVELS && rc == PS_OK; li++) {
        rc = ps_model_predict_bound(m, ops, q, (size_t)n, level_at(li), b, b + n);
        if (rc == PS_E_INPUT && li > 0 && !isfinite(m->calib->all.q[0][li] + m->calib->all.q[1][li])) {
            /* The windows' calibration is too small for this level and the
             * higher ones: no composed bound there either. */
            for (; li < CALIB_NLEVELS; li++)
                out->q[0][li] = out->q[1][li] = INFINITY;
            rc = PS_OK;
            break;
        }
        for (int side = 0; side < 2 && rc == PS_OK; side++) {
            for (int i = 0; i < n; i++)
                r[i] = log(meas[2 * i + side] / b[side * n + i]);
            calib_bin_t tmp;
            bin_fill(&tmp, side, r, n);
            out->q[side][li] = tmp.q[side][li];
        }
    }
    out->n = n;
    free(b);
    return rc;
}

int ps_model_calibrate_composed(ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *cx)
{
    if (!m || !ops || !cx)
        return psi_error(PS_E_ARG, "ps_model_calibrate_composed: NULL argument");
    if (!m->calib)
        return psi_error(PS_E_ARG, "the model has no calibration (train it again with this version)");
    int W = m->layout.window, n = 0;
    ps_query_t *q = NULL;
    double *meas = NULL;
    int rc = composed_rows(cx, W, &q, &meas, &n);
    if (rc == PS_OK && n < 20)
        rc = psi_error(PS_E_INPUT, "%d co-executions longer than the window (%d operators): at least 20 needed", n, W);
    if (rc == PS_OK) {
        calib_bin_t fit, old = m->calib->composed;
        memset(&fit, 0, sizeof fit);
        m->calib->composed.n = 0; /* the residuals are of the window-composed bound */
        rc = composed_fit(m, ops, q, meas, n, &fit);
        m->calib->composed = rc == PS_OK ? fit : old;
        if (rc == PS_OK)
            m->calib->composed_window = W;
    }
    free(q);
    free(meas);
    return rc;
}

/* Every row of d becomes a calibration row: cx is a campaign of its own. */
static void mark_all_calib(psi_dataset_t *d)
{
    for (size_t i = 0; i < d->n; i++)
        d->split[i] = PS_SPLIT_CALIB;
}

int ps_model_calibrate_windows(ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *cx)
{
    if (!m || !ops || !cx)
        return psi_error(PS_E_ARG, "ps_model_calibrate_windows: NULL argument");
    uint64_t fp = 0;
    int rc = psi_coexec_fingerprint(cx, m->layout.window, &fp);
    if (rc != PS_OK)
        return rc;
    if (m->info.split_fingerprint && fp == m->info.split_fingerprint)
        return psi_error(PS_E_INPUT, "this is the campaign the model was trained on: calibrate on a campaign "
                                     "disjoint from training (another seed)");
    psi_dataset_t *d = NULL;
    if ((rc = psi_dataset_build_lean(&m->layout, ops, cx, m->info.seed, &d)) != PS_OK)
        return rc;
    mark_all_calib(d);
    psi_calib_t *c = NULL;
    rc = calib_fit(m, ops, d, &c);
    psi_dataset_free(d);
    if (rc != PS_OK)
        return rc;
    if (!c || c->n_experiments < PS_CALIB_MIN_EXPERIMENTS) {
        rc = psi_error(PS_E_INPUT, "%zu experiments within the window (%d operators): at least %d needed",
                       c ? c->n_experiments : 0, m->layout.window, PS_CALIB_MIN_EXPERIMENTS);
        free(c);
        return rc;
    }
    /* The composed offsets were residuals of the old window bounds: they no
     * longer hold (ps_model_calibrate_composed again on a long campaign). */
    free(m->calib);
    m->calib = c;
    m->info.n_calib = c->n_rows;
    return PS_OK;
}
