/*
 * The rows pairsight learns from (docs/overlap.md): the solo table of range
 * times fitted on single-active experiments,
 *     t(range [s, e)) = c + sum_{g in [s, e)} t_g,
 * least squares with a ridge pull toward the uniform prior c = t_g = u,
 * u = mean over its experiments of time / (e - s + 1), and the feature row
 * of an experiment (its feature groups, psi_ov_feature_names).
 */
#include "evaluate/overlap_internal.h"

#include "common/common.h"
#include "common/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const psi_ov_feature_names[PSI_OVF_N] = {"times", "ratios", "active", "share", "batch", "ops", "grain"};

/* Columns [lo, hi) of each feature group in pairsight's row. */
static const int feature_cols[PSI_OVF_N][2] = {{0, 5}, {5, 7}, {7, 8}, {8, 10}, {10, 14}, {14, 22}, {22, 24}};

int psi_ov_features_parse(const char *list, unsigned *mask)
{
    char buf[256];
    unsigned m = 0;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < PSI_OVF_N && strcmp(psi_ov_feature_names[k], p) != 0)
            k++;
        if (k == PSI_OVF_N)
            return -1;
        m |= 1u << k;
    }
    *mask = m;
    return 0;
}

/* ---- the solo table ---- */

void psi_ov_solo_free(solo_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->k[i].beta);
    free(s->k);
    memset(s, 0, sizeof *s);
}

solo_key_t *psi_ov_solo_find(const solo_t *s, const char *setting, const psi_ov_slot_t *x)
{
    for (size_t i = 0; i < s->n; i++) {
        solo_key_t *k = &s->k[i];
        if (k->batch == x->batch && k->seq_len == x->seq_len &&
            (k->model == x->model || strcmp(k->model, x->model) == 0) &&
            (k->setting == setting || strcmp(k->setting, setting) == 0))
            return k;
    }
    return NULL;
}

/* The one active slot of a single-active experiment, or -1. */
int psi_ov_single_slot(const psi_ov_exp_t *e)
{
    int a = -1;
    for (int s = 0; s < e->k; s++)
        if (e->slot[s].op_end > e->slot[s].op_start) {
            if (a >= 0)
                return -1;
            a = s;
        }
    return a;
}

/* The prior of key k from the dedicated key d of the same model, batch and
 * sequence length: d's times scaled by the mean ratio of k's single runs to
 * d's prediction of their ranges. 0 where there is none. */
static double dedicated_scale(const psi_overlap_t *t, const size_t *idx, size_t n, const solo_key_t *k,
                              const solo_key_t *d)
{
    double r = 0;
    size_t cnt = 0;
    for (size_t i = 0; d && d->groups == k->groups && i < n; i++) {
        const psi_ov_exp_t *e = &t->exps[idx[i]];
        int s = psi_ov_single_slot(e);
        if (s < 0 || psi_ov_solo_find(&(solo_t){(solo_key_t *)k, 1, 1}, e->setting, &e->slot[s]) != k)
            continue;
        double v = psi_ov_solo_of(&(solo_t){(solo_key_t *)d, 1, 1}, "dedicated", &e->slot[s]);
        if (v > 0) {
            r += e->median_us / v;
            cnt++;
        }
    }
    return cnt ? r / (double)cnt : 0;
}

/* Fit key k on the single-active experiments of t in idx[n] that run it;
 * the ridge pulls toward d's times scaled (a dedicated prior, d not NULL)
 * or else toward the uniform prior. */
static int solo_fit_key(const psi_overlap_t *t, const size_t *idx, size_t n, solo_key_t *k, double ridge,
                        const solo_key_t *d)
{
    double scale = dedicated_scale(t, idx, n, k, d);
    int m = k->groups + 1;
    double *a = psi_calloc((size_t)m * m, sizeof *a), *b = psi_calloc((size_t)m, sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return PS_E_NOMEM;
    }
    double u = 0;
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++) {
        const psi_ov_exp_t *e = &t->exps[idx[i]];
        int s = psi_ov_single_slot(e);
        if (s < 0 || psi_ov_solo_find(&(solo_t){k, 1, 1}, e->setting, &e->slot[s]) != k)
            continue;
        const psi_ov_slot_t *x = &e->slot[s];
        u += e->median_us / (x->op_end - x->op_start + 1);
        cnt++;
        for (int r = 0; r < m; r++) {
            int in_r = r == 0 || (r - 1 >= x->op_start && r - 1 < x->op_end);
            if (!in_r)
                continue;
            b[r] += e->median_us;
            for (int c = 0; c < m; c++)
                a[r * m + c] += c == 0 || (c - 1 >= x->op_start && c - 1 < x->op_end);
        }
    }
    u = cnt ? u / (double)cnt : 0;
    double lam = ridge * (double)(cnt ? cnt : 1);
    for (int r = 0; r < m; r++) {
        a[r * m + r] += lam;
        b[r] += lam * (scale > 0 ? scale * d->beta[r] : u);
    }
    /* A group no experiment covers leaves the system singular at ridge 0:
     * its weight is then 0 (the minimum-norm solution). */
    int rc = psi_solve_sym(a, b, m, 1, "solo table");
    free(a);
    if (rc != PS_OK) {
        free(b);
        return rc;
    }
    k->beta = b;
    return PS_OK;
}

/* The solo table of every (setting, model, batch, seq_len) that has a
 * single-active experiment among idx[n]. */
int psi_ov_solo_fit(const psi_overlap_t *t, const size_t *idx, size_t n, double ridge, solo_t *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        const psi_ov_exp_t *e = &t->exps[idx[i]];
        int s = psi_ov_single_slot(e);
        if (s < 0 || psi_ov_solo_find(out, e->setting, &e->slot[s]))
            continue;
        if (out->n == out->cap) {
            size_t nc = out->cap ? 2 * out->cap : 64;
            solo_key_t *k = psi_realloc(out->k, nc * sizeof *k);
            if (!k)
                return PS_E_NOMEM;
            out->k = k;
            out->cap = nc;
        }
        const psi_ov_slot_t *x = &e->slot[s];
        out->k[out->n++] = (solo_key_t){e->setting, x->model, x->batch, x->seq_len, x->model_ops, NULL};
    }
    /* The dedicated keys first: the others' prior. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t j = 0; j < out->n; j++) {
            solo_key_t *k = &out->k[j];
            int ded = strcmp(k->setting, "dedicated") == 0;
            if (ded != (pass == 0))
                continue;
            psi_ov_slot_t x = {k->model, k->batch, k->seq_len, 0, 1, k->groups};
            const solo_key_t *d = ded ? NULL : psi_ov_solo_find(out, "dedicated", &x);
            int rc = solo_fit_key(t, idx, n, k, ridge, d && d->beta ? d : NULL);
            if (rc)
                return rc;
        }
    return PS_OK;
}

double psi_ov_solo_of(const solo_t *s, const char *setting, const psi_ov_slot_t *x)
{
    if (x->op_end <= x->op_start)
        return 0;
    const solo_key_t *k = psi_ov_solo_find(s, setting, x);
    if (!k || x->op_end > k->groups)
        return NAN;
    double v = k->beta[0];
    for (int g = x->op_start; g < x->op_end; g++)
        v += k->beta[1 + g];
    return v;
}

int psi_ov_by_time_desc(const void *a, const void *b)
{
    double x = ((const psi_ov_ts_t *)a)->t, y = ((const psi_ov_ts_t *)b)->t;
    return x < y ? 1 : x > y ? -1 : ((const psi_ov_ts_t *)a)->s - ((const psi_ov_ts_t *)b)->s;
}

/* PairSight's row of experiment e; *max_solo and *sum_solo as side outputs. */
void psi_ov_ps_features(const psi_ov_exp_t *e, const psi_ov_pred_ctx_t *c, double *f, double *mx, double *sum)
{
    const solo_t *s = c->solo;
    const psi_ov_ops_t *ops = c->ops;
    unsigned mask = c->mask;
    psi_ov_ts_t v[PSI_OV_MAX_K];
    double tot = 0;
    for (int i = 0; i < e->k; i++) {
        v[i] = (psi_ov_ts_t){psi_ov_solo_of(s, e->setting, &e->slot[i]), i};
        tot += v[i].t;
    }
    qsort(v, (size_t)e->k, sizeof *v, psi_ov_by_time_desc); /* NAN sorts last: tot is NAN then */
    for (int j = 0; j < NF_PS; j++)
        f[j] = NAN;
    *mx = isnan(tot) ? NAN : v[0].t;
    *sum = tot;
    for (int j = 0; j < 4; j++)
        f[j] = j < e->k ? v[j].t : 0;
    f[4] = tot;
    f[5] = v[0].t > 0 ? (tot - v[0].t) / v[0].t : NAN;
    f[6] = v[0].t > 0 && e->k > 1 ? v[1].t / v[0].t : NAN;
    f[7] = psi_ov_active(e);
    for (int j = 0; j < 2 && j < e->k; j++) {
        const psi_ov_slot_t *x = &e->slot[v[j].s];
        f[8 + j] = (double)(x->op_end - x->op_start) / x->model_ops;
        f[10 + j] = x->batch;
        f[12 + j] = x->seq_len;
        f[22 + j] = v[j].t / (x->op_end - x->op_start);
        double fl, by, kn;
        if (ops && psi_ov_ops_range(ops, x, &fl, &by, &kn) == 0) {
            f[14 + j] = fl;
            f[16 + j] = by;
            f[18 + j] = kn;
            f[20 + j] = v[j].t > 0 ? fl / v[j].t : NAN;
        }
    }
    for (int g = 0; g < PSI_OVF_N; g++)
        for (int j = feature_cols[g][0]; j < feature_cols[g][1] && !(mask >> g & 1u); j++)
            f[j] = NAN;
}

/* The XGBoost settings of the overlap predictor, as the key-value list
 * that psi_xgb_train takes; kv and bufs are the caller's. */
const char *const *psi_ov_xgb_params(const psi_ov_params_t *p, char bufs[4][32], const char *kv[PSI_OV_XGB_KV])
{
    snprintf(bufs[0], 32, "%d", p->depth);
    snprintf(bufs[1], 32, "%g", p->eta);
    snprintf(bufs[2], 32, "%d", p->threads);
    snprintf(bufs[3], 32, "%llu", (unsigned long long)p->seed);
    const char *const v[] = {
        "max_depth",        bufs[0],     "eta", bufs[1],     "nthread", bufs[2],       "seed", bufs[3], "objective",
        "reg:squarederror", "subsample", "0.8", "verbosity", "0",       "tree_method", "hist", NULL};
    memcpy(kv, v, sizeof v);
    return kv;
}
