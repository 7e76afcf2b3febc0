/*
 * pairsight's makespan of k co-running ranges from a booster of
 * makespan / max(solo) (docs/overlap.md, "k beyond the training k").
 *
 * An experiment with no more active slots than the training data had
 * (kmax) is one feature row. One with more is composed from pairs: with L
 * the active slot of the longest solo time T_L and P_j the predicted
 * makespan of L running with the other active slot j alone (the same
 * setting, batch and range; slot order kept),
 *
 *     makespan = T_L + sum over j != L of (P_j - T_L).
 *
 * Each co-runner adds the delay it adds to the longest range in a pair. No
 * parameter is fitted on k >= 3 data, and with two active slots the one pair
 * is the experiment itself, so the composition is the 2-way model there
 * (an idle slot has solo time 0, the pair's row equals the experiment's).
 */
#include "evaluate/overlap_internal.h"

#include "common/common.h"
#include "model/xgb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The active slot of the longest solo time (the first on ties), or -1 when
 * some active slot's solo time is unknown. */
static int longest_slot(const psi_ov_exp_t *e, const solo_t *s, double *tl)
{
    int l = -1;
    *tl = 0;
    for (int i = 0; i < e->k; i++) {
        if (e->slot[i].op_end <= e->slot[i].op_start)
            continue;
        double v = psi_ov_solo_of(s, e->setting, &e->slot[i]);
        if (!(v > 0))
            return -1;
        if (l < 0 || v > *tl) {
            l = i;
            *tl = v;
        }
    }
    return l;
}

int psi_ov_composes(const psi_ov_exp_t *e, int kmax) { return kmax >= 2 && psi_ov_active(e) > kmax; }

int psi_ov_row(const psi_ov_exp_t *e, const psi_ov_pred_ctx_t *c, double *x, double *mx)
{
    double sum;
    if (c->caps) {
        psi_ov_sf_features(e, c->solo, c->ops, c->caps, x, mx);
        return NF_SF;
    }
    psi_ov_ps_features(e, c, x, mx, &sum);
    return NF_PS;
}

/* The pair of slots a < b of e, as a 2-way experiment of e's setting. */
static psi_ov_exp_t pair_of(const psi_ov_exp_t *e, int a, int b)
{
    psi_ov_exp_t p = *e;
    p.k = 2;
    p.slot[0] = e->slot[a];
    p.slot[1] = e->slot[b];
    return p;
}

/* Feature rows of e into x (one, or one per pair with the longest); mx[r]
 * the row's max(solo). Returns the rows written. */
static size_t rows_of(const psi_ov_exp_t *e, const psi_ov_pred_ctx_t *c, int nf, double *x, double *mx)
{
    if (!psi_ov_composes(e, c->kmax)) {
        psi_ov_row(e, c, x, &mx[0]);
        return 1;
    }
    double tl;
    int l = longest_slot(e, c->solo, &tl);
    size_t r = 0;
    for (int j = 0; j < e->k; j++) {
        if (j == l || e->slot[j].op_end <= e->slot[j].op_start)
            continue;
        psi_ov_exp_t p = pair_of(e, l < 0 ? 0 : (l < j ? l : j), l < 0 ? j : (l < j ? j : l));
        psi_ov_row(&p, c, x + r * nf, &mx[r]);
        if (l < 0)
            mx[r] = NAN;
        r++;
    }
    return r;
}

/* The makespan of e from its rows' predicted ratios f[] and max(solo) mx[]. */
static double combine(const psi_ov_exp_t *e, const psi_ov_pred_ctx_t *c, const double *f, const double *mx, size_t nr)
{
    if (!psi_ov_composes(e, c->kmax))
        return isfinite(mx[0]) ? f[0] * mx[0] : NAN; /* 0 with no active slot, as before */
    double tl;
    if (longest_slot(e, c->solo, &tl) < 0)
        return NAN;
    double v = tl;
    for (size_t r = 0; r < nr; r++)
        v += f[r] * mx[r] - tl;
    return v;
}

int psi_ov_ps_predict(const psi_ov_pred_ctx_t *c, const psi_overlap_t *t, const size_t *idx, size_t n, double *out)
{
    size_t rows = 0;
    for (size_t i = 0; i < n; i++) {
        const psi_ov_exp_t *e = &t->exps[idx ? idx[i] : i];
        rows += psi_ov_composes(e, c->kmax) ? (size_t)psi_ov_active(e) : 1;
    }
    int nf = c->caps ? NF_SF : NF_PS;
    double *x = psi_malloc(rows * nf * sizeof *x + 1), *mx = psi_malloc(rows * sizeof *mx + 1);
    double *f = psi_malloc(rows * sizeof *f + 1);
    size_t *first = psi_malloc((n + 1) * sizeof *first);
    int rc = x && mx && f && first ? PS_OK : PS_E_NOMEM;
    size_t r = 0;
    for (size_t i = 0; rc == PS_OK && i < n; i++) {
        first[i] = r;
        r += rows_of(&t->exps[idx ? idx[i] : i], c, nf, x + r * nf, mx + r);
    }
    if (rc == PS_OK) {
        first[n] = r;
        rc = r ? psi_xgb_predict(c->booster, &(psi_xgb_rows_t){.x = x, .n = (int)r, .d = nf}, f) : PS_OK;
    }
    for (size_t i = 0; rc == PS_OK && i < n; i++)
        out[i] = combine(&t->exps[idx ? idx[i] : i], c, f + first[i], mx + first[i], first[i + 1] - first[i]);
    free(x);
    free(mx);
    free(f);
    free(first);
    return rc;
}
