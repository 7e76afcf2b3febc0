/*
 * Fitting the calibration of upper bounds (calib.h): the conformal
 * quantiles of a trained model's residuals on the calibration split, the
 * composed-segment quantiles and the empirical coverage of the bounds. The
 * table itself, its JSON and its lookups are calib.c.
 */
#include "model/calib.h"

#include "common/common.h"
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_BIN 300

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
        double k = ceil((n + 1) * psi_calib_level_at(i) - 1e-9);
        b->q[side][i] = n > 0 && k <= n ? r[(int)k - 1] : INFINITY;
    }
}

int psi_calib_fit(const ps_model_t *m, const ps_ops_t *ops, const psi_dataset_t *d, psi_calib_t **out)
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
        if ((rc = psi_calib_bin_key(ops, &q, &s, &mb)) != PS_OK)
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

int psi_bound_coverage(const ps_model_t *m, const ps_ops_t *ops, const psi_measured_t *set, double level,
                       bound_cov_t *out)
{
    const ps_query_t *q = set->q;
    const double *meas_hp = set->hp_ns, *meas_lp = set->lp_ns;
    size_t n = set->n;
    memset(out, 0, sizeof *out);
    out->level = level;
    out->hp_cover = out->lp_cover = out->hp_width = out->lp_width = NAN;
    const psi_calib_t *c = m->calib;
    int li = psi_calib_level_index(level);
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
        rc = ps_model_predict_bound(m, ops, q, (size_t)n, psi_calib_level_at(li), b, b + n);
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
    rc = psi_calib_fit(m, ops, d, &c);
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
    if (m->pair_memo) /* its bounds hold the old offsets */
        psi_pair_memo_clear(m->pair_memo);
    return PS_OK;
}
