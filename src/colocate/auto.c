/*
 * `auto`: a predictor per data set from cross-validation on the training
 * co-locations only. The training co-locations are cut into four folds by
 * workload set (every co-location of the same workloads, at any shares,
 * falls in one fold); each candidate kind is fitted on three folds and
 * predicts the fourth. From the out-of-fold predictions come both of
 * auto's rules (docs/colocate.md):
 *
 * - blend: the stacked blend's weights (blend.c), from the out-of-fold
 *   predicted sums of the complete training co-locations;
 * - within: the same blend with the loss on the sums plus the loss on each
 *   sum's difference from the mean of its target's other training
 *   candidates (what the selection figure depends on);
 * - pick: the one-standard-error rule of cross-validation (Breiman et al.
 *   1984; Hastie, Tibshirani and Friedman, ESL section 7.10), applied
 *   twice: the out-of-fold predictions are scored per target and k with the
 *   selection metric over the training co-locations as candidates (a
 *   target's k-way candidates among themselves), and by the MAPE of the
 *   throughput sum; of the kinds within one standard error of the best on
 *   the first, those within one standard error of the lowest on the
 *   second, and of those the simplest.
 *
 * Both were stated before they were measured; no constant of either was
 * set on a data set.
 */
#include "colocate/colocate.h"
#include "colocate/model_internal.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AUTO_FOLDS 4

unsigned psi_cl_auto_default_kinds(const cl_data_t *d)
{
    int metrics = d->has[CW_SM_BUSY] || d->has[CW_MEM_BUSY] || d->has[CW_MEMCAP];
    unsigned k = 0;
    for (int j = 0; j < PS_COLOC_KIND_COUNT; j++) {
        const psi_cl_kind_t *r = psi_cl_kind((ps_coloc_kind_t)j); /* mlp's cost is 20x the others' */
        if (r->in_auto && (metrics || !r->needs_metrics))
            k |= 1u << j;
    }
    return k;
}

typedef struct {
    const cl_data_t *d;
    const int *train;
    int n_train;
    const ps_coloc_params_t *p;
    int *fold, *sub;
    char *is_cand, *tmask;
    int n_units;   /* (target, k) units: nw x (PS_COLOC_MAXK - 1) */
    double *score; /* [kind][unit], NAN where not scored */
    double *pred;  /* [kind][nc] out-of-fold predicted sums */
    double *ape;   /* [kind][n_train] out-of-fold APE of the sum, NAN where none */
    double mape[PS_COLOC_KIND_COUNT];
} auto_ctx_t;

/* Fit kind k on the training folds but f and predict fold f into pred;
 * adds to the sum's absolute percentage error. 1: the kind sits out. */
static int oof_fold(auto_ctx_t *a, int k, int f, double *sape, int *nape)
{
    const cl_data_t *d = a->d;
    int ns = 0, held = 0, complete = 0, rc = 0;
    for (int i = 0; i < a->n_train; i++) {
        if (a->fold[i] != f) {
            a->sub[ns++] = a->train[i];
            complete += d->c[a->train[i]].complete;
        } else {
            held++;
        }
    }
    if (!held || !ns)
        return 0;
    if (!complete && ps_coloc_kind_predicts_sum((ps_coloc_kind_t)k))
        return 1;
    ps_coloc_params_t mp = *a->p;
    mp.kind = (ps_coloc_kind_t)k;
    ps_coloc_model_t *m = NULL;
    if (psi_cl_model_fit_base(d, a->sub, ns, &mp, &m))
        return 1; /* a kind this fold cannot train sits out */
    double slot[64];
    for (int i = 0; i < a->n_train && !rc; i++) {
        int ci = a->train[i];
        if (a->fold[i] != f)
            continue;
        double *pk = a->pred + (size_t)k * d->nc;
        rc = psi_cl_model_predict_base(m, d, ci, slot, &pk[ci]);
        const cl_coloc_t *c = &d->c[ci];
        if (!rc && c->complete) {
            double y = 0;
            for (int s = 0; s < c->k; s++)
                y += c->tput[s];
            a->ape[(size_t)k * a->n_train + i] = fabs(pk[ci] - y) / y;
            *sape += a->ape[(size_t)k * a->n_train + i];
            (*nape)++;
        }
    }
    ps_coloc_model_free(m);
    return rc;
}

/* Kind k's selection figure per (target, k) unit from its out-of-fold
 * predictions, into a->score. */
static int score_units(auto_ctx_t *a, int k)
{
    const cl_data_t *d = a->d;
    double *pv[PS_COLOC_KIND_COUNT] = {0};
    pv[k] = a->pred + (size_t)k * d->nc;
    memset(a->is_cand, 0, (size_t)d->nc);
    for (int i = 0; i < a->n_train; i++)
        a->is_cand[a->train[i]] = !isnan(pv[k][a->train[i]]);
    for (int t = 0; t < d->nw; t++) {
        memset(a->tmask, 0, (size_t)d->nw);
        a->tmask[t] = 1;
        for (int kk = 2; kk <= PS_COLOC_MAXK; kk++) {
            double acc[PS_POL_COUNT] = {0};
            int nt = psi_cl_score_policies(d, a->is_cand, a->tmask, kk, pv, acc);
            if (nt < 0)
                return PS_E_NOMEM;
            a->score[(size_t)k * a->n_units + (size_t)t * (PS_COLOC_MAXK - 1) + (kk - 2)] =
                nt ? acc[PS_POL_OF_KIND(k)] : NAN;
        }
    }
    return 0;
}

/* Out-of-fold figures of kind k: per-unit scores and the sum MAPE (NAN
 * when it sat out). */
static int run_kind(auto_ctx_t *a, int k)
{
    int nape = 0, out = 0, rc = 0;
    double sape = 0;
    for (int f = 0; f < AUTO_FOLDS && !out && !rc; f++) {
        int r = oof_fold(a, k, f, &sape, &nape);
        if (r == 1)
            out = 1;
        else
            rc = r;
    }
    if (rc || out || !nape)
        return rc;
    a->mape[k] = sape / nape;
    return score_units(a, k);
}

/* Mean and standard error of x - y over the units both scored. */
static void paired(const double *x, const double *y, int n, double *mean, double *se, int *cnt)
{
    double s = 0, ss = 0;
    int c = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i]) && !isnan(y[i])) {
            double v = x[i] - y[i];
            s += v;
            ss += v * v;
            c++;
        }
    *cnt = c;
    *mean = c ? s / c : 0;
    *se = c > 1 ? sqrt(fmax(0, (ss - c * *mean * *mean) / (c - 1)) / c) : INFINITY;
}

/* Mean of kind k's scored units (NAN with fewer than two). */
static double mean_score(const auto_ctx_t *a, int k)
{
    const double *v = a->score + (size_t)k * a->n_units;
    double s = 0;
    int n = 0;
    for (int u = 0; u < a->n_units; u++)
        if (!isnan(v[u])) {
            s += v[u];
            n++;
        }
    return n >= 2 ? s / n : NAN;
}

/* The number of fitted parameters of kind k on d, nominal for the trees
 * and the network (rounds or trees x leaves, weights): the order of
 * simplicity that the one-standard-error rule prefers. */
static double n_params(const auto_ctx_t *a, int k)
{
    const psi_cl_kind_t *r = psi_cl_kind((ps_coloc_kind_t)k);
    return r && r->n_params ? r->n_params(a->d, a->p) : 0;
}

/* 1 when kind k is within one standard error of kind b on v ([kind][n]
 * per-unit figures, higher better when up, else lower better). */
static int near_of(const double *v, int n, int b, int k, int up)
{
    double m, se;
    int c;
    if (up)
        paired(v + (size_t)b * n, v + (size_t)k * n, n, &m, &se, &c);
    else
        paired(v + (size_t)k * n, v + (size_t)b * n, n, &m, &se, &c);
    return k == b || c < 2 || m <= se;
}

/* The one-standard-error rule, twice: the kinds within one standard error
 * of the best selection figure, of those the ones within one standard
 * error of the lowest MAPE, and of those the simplest (ties: lower MAPE). */
static int pick(const auto_ctx_t *a)
{
    int bs = -1, bm = -1, out = -1;
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        double m = isnan(a->mape[k]) ? NAN : mean_score(a, k);
        if (!isnan(m) && (bs < 0 || m > mean_score(a, bs)))
            bs = k;
    }
    char near[PS_COLOC_KIND_COUNT] = {0};
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        near[k] = !isnan(a->mape[k]) && (bs < 0 || near_of(a->score, a->n_units, bs, k, 1));
        if (near[k] && (bm < 0 || a->mape[k] < a->mape[bm]))
            bm = k;
    }
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        if (!near[k] || !near_of(a->ape, a->n_train, bm, k, 0))
            continue;
        double pk = n_params(a, k), po = out < 0 ? 0 : n_params(a, out);
        if (out < 0 || pk < po || (pk == po && a->mape[k] < a->mape[out]))
            out = k;
    }
    return out;
}

/* The buffers of the stacked blends' rows, one row a training co-location:
 * x[n x K] (predicted sum over the measured one), y[n], fold[n] and
 * grp[n x PS_COLOC_MAXK] (the (target, k) groups each is a candidate of). */
typedef struct {
    double *x, *y;
    int *fold, *grp;
} stack_buf_t;

/* The rows of the stacked blends into b, over the complete training
 * co-locations that every kind that ran (kinds[0..K)) predicted. Returns
 * their count. */
static int stack_rows(const auto_ctx_t *a, const int *kinds, int K, const stack_buf_t *b)
{
    const cl_data_t *d = a->d;
    double *x = b->x, *y = b->y;
    int *fold = b->fold, *grp = b->grp;
    int n = 0;
    for (int i = 0; i < a->n_train; i++) {
        const cl_coloc_t *c = &d->c[a->train[i]];
        double s = 0;
        int ok = c->complete;
        for (int j = 0; j < c->k; j++)
            s += c->tput[j];
        for (int j = 0; j < K && ok; j++) {
            double v = a->pred[(size_t)kinds[j] * d->nc + a->train[i]];
            ok = isfinite(v) && s > 0;
            x[(size_t)n * K + j] = v / s;
        }
        if (!ok)
            continue;
        for (int j = 0; j < PS_COLOC_MAXK; j++) { /* each distinct workload once */
            int dup = j >= c->k || c->k > PS_COLOC_MAXK;
            for (int l = 0; l < j && !dup; l++)
                dup = c->w[l] == c->w[j];
            grp[(size_t)n * PS_COLOC_MAXK + j] = dup ? -1 : c->w[j] * (PS_COLOC_MAXK + 1) + c->k;
        }
        y[n] = s;
        fold[n++] = a->fold[i];
    }
    return n;
}

/* The stacked blends' weights over the kinds that ran (blend.c): the blend
 * rule's (the sums' loss) and the within rule's (plus the within-target
 * differences), from their out-of-fold sums. */
static int stack(const auto_ctx_t *a, cl_auto_choice_t *out)
{
    const cl_data_t *d = a->d;
    int kinds[PS_COLOC_KIND_COUNT], K = 0, rc = PS_E_NOMEM;
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        if (!isnan(a->mape[k]))
            kinds[K++] = k;
    if (!K)
        return 0;
    size_t n0 = (size_t)a->n_train;
    double w[PS_COLOC_KIND_COUNT];
    stack_buf_t b = {psi_malloc(n0 * K * sizeof *b.x + 1), psi_malloc(n0 * sizeof *b.y + 1),
                     psi_malloc(n0 * sizeof *b.fold + 1), psi_malloc(n0 * PS_COLOC_MAXK * sizeof *b.grp + 1)};
    if (b.x && b.y && b.fold && b.grp) {
        int n = stack_rows(a, kinds, K, &b);
        cl_stack_rows_t r = {.a = b.x, .n = n, .K = K, .fold = b.fold, .nfolds = AUTO_FOLDS};
        rc = psi_cl_stack_weights(&r, w, &out->g); /* the blend rule: the sums' loss */
        for (int j = 0; j < K && !rc; j++)
            out->w[kinds[j]] = w[j];
        r.y = b.y;
        r.grp = b.grp;
        r.gm = PS_COLOC_MAXK;
        r.ng = d->nw * (PS_COLOC_MAXK + 1);
        if (!rc)
            rc = psi_cl_stack_weights(&r, w, &out->g_within);
        for (int j = 0; j < K && !rc; j++)
            out->w_within[kinds[j]] = w[j];
    }
    free(b.x);
    free(b.y);
    free(b.fold);
    free(b.grp);
    return rc;
}

/* When no kind has out-of-fold figures (every training co-location in one
 * fold, so no fold has both training and held-out rows), the rules'
 * fallbacks apply as documented: the blend's weights are equal, the pick
 * is the simplest, over the candidates that can be fitted on all the
 * training co-locations (marked with an infinite MAPE, no rows). */
static void no_folds(auto_ctx_t *a, unsigned kinds)
{
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        if (!isnan(a->mape[k]))
            return;
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        if (!(kinds & (1u << k)) || k == PS_COLOC_AUTO)
            continue;
        ps_coloc_params_t mp = *a->p;
        mp.kind = (ps_coloc_kind_t)k;
        ps_coloc_model_t *m = NULL;
        if (!psi_cl_model_fit_base(a->d, a->train, a->n_train, &mp, &m))
            a->mape[k] = INFINITY;
        ps_coloc_model_free(m);
    }
}

static void ctx_free(auto_ctx_t *a)
{
    free(a->fold);
    free(a->sub);
    free(a->pred);
    free(a->score);
    free(a->ape);
    free(a->is_cand);
    free(a->tmask);
}

int psi_cl_auto_choose(const cl_data_t *d, const int *train, int n_train, const ps_coloc_params_t *p, unsigned kinds,
                       cl_auto_choice_t *out)
{
    memset(out, 0, sizeof *out);
    out->pick = -1;
    auto_ctx_t a = {.d = d, .train = train, .n_train = n_train, .p = p, .n_units = d->nw * (PS_COLOC_MAXK - 1)};
    size_t np = (size_t)PS_COLOC_KIND_COUNT * d->nc;
    a.fold = psi_malloc((size_t)n_train * sizeof *a.fold + 1);
    a.sub = psi_malloc((size_t)n_train * sizeof *a.sub + 1);
    a.pred = psi_malloc(np * sizeof *a.pred + 1);
    a.score = psi_malloc((size_t)PS_COLOC_KIND_COUNT * a.n_units * sizeof *a.score + 1);
    a.ape = psi_malloc((size_t)PS_COLOC_KIND_COUNT * n_train * sizeof *a.ape + 1);
    a.is_cand = psi_calloc((size_t)d->nc + 1, 1);
    a.tmask = psi_calloc((size_t)d->nw + 1, 1);
    int rc = !a.fold || !a.sub || !a.pred || !a.score || !a.ape || !a.is_cand || !a.tmask ? PS_E_NOMEM : 0;
    for (size_t i = 0; !rc && i < (size_t)PS_COLOC_KIND_COUNT * n_train; i++)
        a.ape[i] = NAN;
    for (size_t i = 0; !rc && i < (size_t)PS_COLOC_KIND_COUNT * a.n_units; i++)
        a.score[i] = NAN;
    for (size_t i = 0; !rc && i < np; i++)
        a.pred[i] = NAN;
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        a.mape[k] = NAN;
    for (int i = 0; i < n_train && !rc; i++) {
        uint64_t h = (uint64_t)d->c[train[i]].set * 0x9E3779B97F4A7C15ull + p->seed * 0xBF58476D1CE4E5B9ull;
        a.fold[i] = (int)(psi_splitmix64(&h) % AUTO_FOLDS);
    }
    for (int k = 0; k < PS_COLOC_KIND_COUNT && !rc; k++)
        if ((kinds & (1u << k)) && k != PS_COLOC_AUTO)
            rc = run_kind(&a, k);
    if (!rc)
        no_folds(&a, kinds);
    if (!rc) {
        out->pick = pick(&a);
        rc = stack(&a, out);
    }
    ctx_free(&a);
    return rc;
}
