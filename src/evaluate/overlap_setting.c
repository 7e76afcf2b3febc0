/*
 * pairsight's setting model (docs/overlap.md, "A new setting"): a row of
 * scale-free features, so that a predictor learnt on the dedicated GPU
 * carries to a setting (a MIG slice, another GPU) whose co-runs it never
 * saw.
 *
 * A setting's capacity is measured from its own single-active runs: the
 * 0.9 quantile of the achieved FLOP, byte and kernel rates (an operator
 * list's sums over the range / the measured time). A range's demand is its
 * rate alone (its FLOPs / its solo time) over the capacity: a 2g.10gb slice
 * reaches about 45% of the dedicated rate, not its 2/7 of the SMs. Times
 * enter only as ratios to the longest.
 */
#include "evaluate/overlap_internal.h"

#include "common/common.h"
#include "model/xgb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CAP_QUANTILE 0.9

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_dbl);
    return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

/* The capacity of one setting from the single-active runs among idx[n]. */
static int cap_of(const psi_overlap_t *t, const size_t *idx, size_t n, const psi_ov_ops_t *ops, const char *setting,
                  psi_ov_cap_t *out)
{
    double *v[3];
    size_t m = 0;
    for (int j = 0; j < 3; j++)
        v[j] = psi_malloc(n * sizeof(double) + 1);
    int rc = v[0] && v[1] && v[2] ? PS_OK : PS_E_NOMEM;
    for (size_t i = 0; rc == PS_OK && i < n; i++) {
        const psi_ov_exp_t *e = &t->exps[idx[i]];
        int s = psi_ov_single_slot(e);
        double fl, by, kn;
        if (s < 0 || strcmp(e->setting, setting) != 0 || !(e->median_us > 0) ||
            psi_ov_ops_range(ops, &e->slot[s], &fl, &by, &kn) != 0)
            continue;
        v[0][m] = fl / e->median_us;
        v[1][m] = by / e->median_us;
        v[2][m++] = kn / e->median_us;
    }
    out->setting = setting;
    for (int j = 0; j < 3; j++) {
        out->rate[j] = rc == PS_OK ? quantile(v[j], m, CAP_QUANTILE) : NAN;
        free(v[j]);
    }
    return rc;
}

void psi_ov_caps_free(psi_ov_caps_t *c)
{
    free(c->c);
    memset(c, 0, sizeof *c);
}

const psi_ov_cap_t *psi_ov_caps_find(const psi_ov_caps_t *c, const char *setting)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (c->c[i].setting == setting || strcmp(c->c[i].setting, setting) == 0)
            return &c->c[i];
    return NULL;
}

int psi_ov_caps_fit(const psi_overlap_t *t, const size_t *idx, size_t n, const psi_ov_ops_t *ops, psi_ov_caps_t *out)
{
    memset(out, 0, sizeof *out);
    if (!ops)
        return PS_OK;
    int rc = PS_OK;
    for (size_t i = 0; rc == PS_OK && i < n; i++) {
        const psi_ov_exp_t *e = &t->exps[idx[i]];
        if (psi_ov_single_slot(e) < 0 || psi_ov_caps_find(out, e->setting))
            continue;
        psi_ov_cap_t *c = psi_realloc(out->c, (out->n + 1) * sizeof *c);
        if (!c)
            return PS_E_NOMEM;
        out->c = c;
        rc = cap_of(t, idx, n, ops, e->setting, &out->c[out->n++]);
    }
    return rc;
}

/* The demand columns of the two longest ranges and the sums over every
 * active range: rate / capacity and share of the experiment's total. */
static void demand(const psi_ov_exp_t *e, const psi_ov_ts_t *v, const psi_ov_ops_t *ops, const psi_ov_cap_t *cap,
                   double *f)
{
    double tot[3] = {0, 0, 0}, use[3] = {0, 0, 0}, mine[2][3];
    for (int j = 0; j < e->k; j++) {
        double q[3];
        if (!(v[j].t > 0))
            continue;
        if (psi_ov_ops_range(ops, &e->slot[v[j].s], &q[0], &q[1], &q[2]) != 0)
            return;
        for (int c = 0; c < 3; c++) {
            tot[c] += q[c];
            use[c] += q[c] / v[j].t / cap->rate[c];
            if (j < 2)
                mine[j][c] = q[c];
        }
    }
    for (int j = 0; j < 2 && j < e->k && v[j].t > 0; j++)
        for (int c = 0; c < 3; c++) {
            f[c * 2 + j] = mine[j][c] / v[j].t / cap->rate[c];
            f[6 + c * 2 + j] = tot[c] > 0 ? mine[j][c] / tot[c] : NAN;
        }
    for (int c = 0; c < 3; c++)
        f[12 + c] = use[c];
}

void psi_ov_sf_features(const psi_ov_exp_t *e, const solo_t *s, const psi_ov_ops_t *ops, const psi_ov_caps_t *caps,
                        double *f, double *mx)
{
    psi_ov_ts_t v[PSI_OV_MAX_K];
    double tot = 0;
    for (int i = 0; i < e->k; i++) {
        v[i] = (psi_ov_ts_t){psi_ov_solo_of(s, e->setting, &e->slot[i]), i};
        tot += v[i].t;
    }
    qsort(v, (size_t)e->k, sizeof *v, psi_ov_by_time_desc);
    for (int j = 0; j < NF_SF; j++)
        f[j] = NAN;
    *mx = isnan(tot) ? NAN : v[0].t;
    if (!(v[0].t > 0))
        return;
    f[0] = (tot - v[0].t) / v[0].t;
    for (int j = 1; j < 4; j++)
        f[j] = j < e->k ? v[j].t / v[0].t : 0;
    f[4] = psi_ov_active(e);
    for (int j = 0; j < 2 && j < e->k; j++) {
        const psi_ov_slot_t *x = &e->slot[v[j].s];
        f[5 + j] = (double)(x->op_end - x->op_start) / x->model_ops;
        f[7 + j] = x->batch;
        f[9 + j] = x->seq_len;
    }
    const psi_ov_cap_t *cap = psi_ov_caps_find(caps, e->setting);
    if (ops && cap && !isnan(tot))
        demand(e, v, ops, cap, f + 11);
}

size_t psi_ov_seen_settings(const psi_overlap_t *t, const size_t *idx, size_t n, const char **out, size_t max)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const psi_ov_exp_t *e = &t->exps[idx ? idx[i] : i];
        if (psi_ov_active(e) < 2 || psi_ov_setting_in(e->setting, out, m))
            continue;
        if (m < max)
            out[m++] = e->setting;
    }
    return m;
}

int psi_ov_setting_in(const char *setting, const char *const *list, size_t n)
{
    for (size_t j = 0; j < n; j++)
        if (list[j] == setting || strcmp(list[j], setting) == 0)
            return 1;
    return 0;
}

int psi_ov_sf_train(const psi_overlap_t *t, const psi_ov_params_t *p, const psi_ov_pred_ctx_t *c, const size_t *tr,
                    size_t ntr, void **booster)
{
    double *x = psi_malloc(ntr * NF_SF * sizeof *x + 1), *y = psi_malloc(ntr * sizeof *y + 1), mx;
    int rc = x && y ? PS_OK : PS_E_NOMEM;
    size_t n = 0;
    for (size_t i = 0; rc == PS_OK && i < ntr; i++) {
        const psi_ov_exp_t *e = &t->exps[tr ? tr[i] : i];
        psi_ov_sf_features(e, c->solo, c->ops, c->caps, x + n * NF_SF, &mx);
        if (mx > 0)
            y[n++] = e->median_us / mx;
    }
    char bufs[4][32];
    const char *kv[PSI_OV_XGB_KV];
    if (rc == PS_OK && n == 0)
        rc = psi_error(PS_E_INPUT, "overlap: no training experiment has known solo times");
    if (rc == PS_OK)
        rc = psi_xgb_train(&(psi_xgb_rows_t){.x = x, .y = y, .n = (int)n, .d = NF_SF}, psi_ov_xgb_params(p, bufs, kv),
                           p->rounds, booster);
    free(x);
    free(y);
    return rc;
}
