/*
 * The mps predictor (docs/colocate.md): each workload's own throughput for
 * any k and shares,
 *
 *     log(tput / solo(w, s)) = M + g x f(x)
 *
 * M, the margin, is the lowrank predictor's pairwise interference summed over
 * the co-runners (for a training row: its out-of-fold prediction, 4 folds by
 * workload set, so that f learns the residual it meets on unseen
 * co-locations); where lowrank cannot be fitted on a fold, the workload's
 * median ratio over its other training co-locations. g is the co-runners'
 * activity at their shares; f is a boosted tree ensemble on the 34 features
 * (psi_cl_mps_features and the pairwise encoding of pairenc.c), trained on
 * (log(tput / solo) - M) / g. The number of boosting rounds is chosen from
 * 25, 50, 100, ... up to --rounds by cross-validation over the same folds
 * (squared error of log(tput / solo), the fitted objective; ties: fewer).
 *
 * Trained on pairs only, the model is the 2-way one of before the encoding
 * (issue 31): the 32 features of psi_cl_mps_features, without the encoding's
 * two. A training pair's encoding leaves out its workload set, which for a
 * pair is every co-location of the pair, so pair(w, j) is agg(j) on every
 * training row and the trees cannot learn what it says; on a pair measured
 * at other shares it then carried a value they never saw (kace-v100, eval
 * --unseen-splits: MAPE 6.55 / 6.25 / 6.59 % at seeds 5-7 with it,
 * 5.65 / 5.46 / 6.86 % without, a008ea1's figures). The margin of pairs
 * was the median ratio already; k-way training sets keep everything above.
 */
#include "colocate/model_internal.h"

#include "common/common.h"
#include "model/xgb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MPS_FOLDS 4
#define MPS_MAX_CHECKS 16

typedef struct {
    int n, nf;
    const wrow_t *r;
    int *fold;
    double *x, *y, *mg, *g, *lr;   /* lr: log(tput / solo) */
    double *mg_ratio, *mg_lowrank; /* the two candidate margins */
    double *gs;                    /* the residual's scale: g, or 1 over the lowrank margin */
} mps_rows_t;

/* 1 when some training row is of a co-location of more than two. */
static int kway_rows(const cl_data_t *d, const wrow_t *r, int n)
{
    for (int i = 0; i < n; i++)
        if (d->c[r[i].c].k > 2)
            return 1;
    return 0;
}

static int row_fold(const cl_data_t *d, int ci, uint64_t seed)
{
    uint64_t h = (uint64_t)d->c[ci].set * 0x9E3779B97F4A7C15ull + seed * 0xD1B54A32D192ED03ull;
    return (int)(psi_splitmix64(&h) % MPS_FOLDS);
}

/* The margin of every row: lowrank fitted on the other folds (the full fit
 * goes to m->lowrank); rows whose fold could not be fitted keep mg. */
static int oof_margin(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train, mps_rows_t *t)
{
    if (!kway_rows(d, t->r, t->n)) /* pairs only: no row uses the lowrank margin, kept for k >= 3 queries */
        return psi_cl_lowrank_fit(d, train, n_train, m->p.seed, &m->lowrank);
    int *sub = psi_malloc((size_t)n_train * sizeof *sub + 1), rc = 0;
    if (!sub)
        return PS_E_NOMEM;
    for (int f = 0; f < MPS_FOLDS && !rc; f++) {
        int ns = 0;
        for (int i = 0; i < n_train; i++)
            if (row_fold(d, train[i], m->p.seed) != f)
                sub[ns++] = train[i];
        cl_lowrank_t *lr = NULL;
        if (ns == 0 || ns == n_train)
            continue;
        if ((rc = psi_cl_lowrank_fit(d, sub, ns, m->p.seed, &lr))) {
            rc = rc == PS_E_NOMEM ? rc : 0; /* too little to fit: the median ratio stays */
            continue;
        }
        for (int i = 0; i < t->n; i++)
            if (t->fold[i] == f)
                t->mg_lowrank[i] = psi_cl_lowrank_predict(lr, d, &d->c[t->r[i].c], t->r[i].s);
        psi_cl_lowrank_free(lr);
    }
    free(sub);
    return rc ? rc : psi_cl_lowrank_fit(d, train, n_train, m->p.seed, &m->lowrank);
}

/* XGBoost's parameters of f: shallow trees with shrinkage, as measured in
 * docs/colocate.md's tuning record. */
static void mps_kv(const ps_coloc_model_t *m, char *seed, size_t n, const char **kv)
{
    snprintf(seed, n, "%llu", (unsigned long long)(m->p.seed % 2147483647ull));
    const char *v[] = {"booster",
                       "gbtree",
                       "objective",
                       "reg:squarederror",
                       "tree_method",
                       "hist",
                       "nthread",
                       "1",
                       "max_depth",
                       "3",
                       "eta",
                       "0.05",
                       "subsample",
                       "0.8",
                       "colsample_bynode",
                       "0.8",
                       "min_child_weight",
                       "2",
                       "lambda",
                       "1",
                       "base_score",
                       "0",
                       "seed",
                       seed,
                       NULL};
    memcpy(kv, v, sizeof v);
}

/* A contiguous copy of some of the rows: features x[k x nf], targets y[k],
 * margins mg[k], and each one's row idx[k]. */
typedef struct {
    double *x, *y, *mg;
    int *idx;
} mps_part_t;

/* The rows outside (in = 0) or inside (1) fold f into part; returns k. */
static int take(const mps_rows_t *t, int f, int in, const mps_part_t *part)
{
    int k = 0;
    for (int i = 0; i < t->n; i++)
        if ((t->fold[i] == f) == in) {
            memcpy(part->x + (size_t)k * t->nf, t->x + (size_t)i * t->nf, (size_t)t->nf * sizeof *part->x);
            part->y[k] = t->y[i];
            part->mg[k] = t->mg[i];
            part->idx[k++] = i;
        }
    return k;
}

/* Squared error of log(tput / solo) per checkpoint, summed over the folds
 * (err[c] += ...); 0 when every fold could be scored. */
static int cv_errors(const ps_coloc_model_t *m, const mps_rows_t *t, const int *checks, int nch, double *err)
{
    size_t n = (size_t)t->n;
    double *x = psi_malloc(n * t->nf * sizeof *x + 1), *y = psi_malloc(n * sizeof *y + 1);
    double *mg = psi_malloc(n * sizeof *mg + 1), *f = psi_malloc(n * sizeof *f + 1);
    int *idx = psi_malloc(n * sizeof *idx + 1), rc = 0;
    if (!x || !y || !mg || !f || !idx)
        rc = PS_E_NOMEM;
    const mps_part_t part = {x, y, mg, idx};
    char seed[32];
    const char *kv[32];
    mps_kv(m, seed, sizeof seed, kv);
    for (int fo = 0; fo < MPS_FOLDS && !rc; fo++) {
        int ntr = take(t, fo, 0, &part);
        if (ntr == 0 || ntr == t->n) {
            rc = 1; /* a fold without held-out or training rows: no CV */
            break;
        }
        void *b = NULL;
        if ((rc = psi_xgb_train(&(psi_xgb_rows_t){.x = x, .y = y, .margin = mg, .n = ntr, .d = t->nf}, kv,
                                checks[nch - 1], &b)))
            break;
        int nte = take(t, fo, 1, &part);
        for (int c = 0; c < nch && !rc; c++) {
            rc = psi_xgb_predict_limit(b, &(psi_xgb_rows_t){.x = x, .margin = mg, .n = nte, .d = t->nf}, checks[c], f);
            for (int i = 0; i < nte && !rc; i++) {
                double e = mg[i] + (f[i] - mg[i]) * t->gs[idx[i]] - t->lr[idx[i]];
                err[c] += e * e;
            }
        }
        psi_xgb_free(b);
    }
    free(x);
    free(y);
    free(mg);
    free(f);
    free(idx);
    return rc;
}

static void set_margin(mps_rows_t *t, const cl_data_t *d)
{
    for (int i = 0; i < t->n; i++) {
        int lowrank = d->c[t->r[i].c].k > 2;
        double mg = lowrank ? t->mg_lowrank[i] : t->mg_ratio[i];
        t->gs[i] = lowrank ? 1 : t->g[i];
        t->mg[i] = mg;
        t->y[i] = mg + (t->lr[i] - mg) / t->gs[i];
    }
}

/* The number of rounds: the checkpoint with the least cross-validated
 * error (ties: fewer rounds); --rounds where the folds cannot be scored. */
static int choose_rounds(const ps_coloc_model_t *m, const mps_rows_t *t, int *rounds)
{
    int checks[MPS_MAX_CHECKS], nch = 0, max = m->p.boost_rounds;
    for (int c = 25; c < max && nch < MPS_MAX_CHECKS - 1; c *= 2)
        checks[nch++] = c;
    checks[nch++] = max;
    double err[MPS_MAX_CHECKS] = {0};
    *rounds = max;
    int rc = cv_errors(m, t, checks, nch, err);
    if (rc)
        return rc == 1 ? 0 : rc;
    int best = 0;
    for (int c = 1; c < nch; c++)
        if (err[c] < err[best])
            best = c;
    *rounds = checks[best];
    return 0;
}

static int fill_rows(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train, mps_rows_t *t)
{
    double *buf = psi_malloc((size_t)t->n * sizeof *buf + 1);
    if (!buf)
        return PS_E_NOMEM;
    for (int i = 0; i < t->n; i++) {
        const wrow_t *r = &t->r[i];
        double *xi = t->x + (size_t)i * t->nf;
        psi_cl_mps_features(d, &d->c[r->c], r->s, xi);
        if (t->nf == CL_MPS_NF)
            psi_pairenc_train_features(m, &(cl_train_t){d, train, n_train}, r->c, r->s, xi + CL_MPS_BASE_NF);
        t->mg_ratio[i] = t->mg_lowrank[i] = log(psi_loo_ratio(t->r, t->n, i, m->ratio_global, buf));
        t->g[i] = psi_cl_mps_corunner_activity(d, &d->c[r->c], r->s);
        t->lr[i] = log(r->ratio);
        t->fold[i] = row_fold(d, r->c, m->p.seed);
    }
    free(buf);
    return 0;
}

int psi_mps_fit(ps_coloc_model_t *m, const cl_data_t *d, const wrow_t *r, int n, const int *train, int n_train)
{
    mps_rows_t t = {.n = n, .nf = kway_rows(d, r, n) ? CL_MPS_NF : CL_MPS_BASE_NF, .r = r};
    m->nf = t.nf;
    size_t sz = (size_t)n * sizeof(double) + 1;
    double **v[] = {&t.y, &t.mg, &t.g, &t.lr, &t.mg_ratio, &t.mg_lowrank, &t.gs};
    int rc = 0, rounds = 0, nv = (int)(sizeof v / sizeof v[0]);
    t.x = psi_malloc(sz * CL_MPS_NF);
    t.fold = psi_malloc((size_t)n * sizeof *t.fold + 1);
    for (int i = 0; i < nv; i++)
        if (!(*v[i] = psi_malloc(sz)))
            rc = PS_E_NOMEM;
    if (!t.x || !t.fold)
        rc = PS_E_NOMEM;
    if (!rc)
        rc = psi_pairenc_fit(m, d, train, n_train);
    if (!rc)
        rc = fill_rows(m, d, train, n_train, &t);
    if (!rc)
        rc = oof_margin(m, d, train, n_train, &t);
    if (!rc)
        set_margin(&t, d);
    if (!rc)
        rc = choose_rounds(m, &t, &rounds);
    if (!rc) {
        char seed[32];
        const char *kv[32];
        mps_kv(m, seed, sizeof seed, kv);
        rc = psi_xgb_train(&(psi_xgb_rows_t){.x = t.x, .y = t.y, .margin = t.mg, .n = n, .d = t.nf}, kv, rounds,
                           &m->booster);
    }
    for (int i = 0; i < nv; i++)
        free(*v[i]);
    free(t.x);
    free(t.fold);
    return rc;
}

/* A model of pairs only, asked about k > 2 (docs/colocate.md, "k beyond
 * pairs"): the composition of docs/overlap.md at the workload level. The
 * time per item of slot s is its solo time plus, over each co-runner j, the
 * time that j alone adds in the pair (s, j) at the same shares:
 *     solo / tput = 1 + sum over j != s of max(exp(-lr_j) - 1, 0),
 * lr_j the pair's predicted log(tput / solo) (a pair predicted above solo
 * adds nothing: KACE's 2-way model predicts some, and their negative sums
 * sent 3-way throughputs to 1,000 times solo). No parameter is fitted on
 * k > 2 data; with one co-runner it is the pair's prediction. */
static int compose_pairs(const ps_coloc_model_t *m, const cl_data_t *d, const cl_coloc_t *c, int s, double *out)
{
    double slow = 1;
    for (int j = 0; j < c->k; j++) {
        if (j == s)
            continue;
        int a = s < j ? s : j, b = s < j ? j : s;
        int w[2] = {c->w[a], c->w[b]}, share[2] = {c->share[a], c->share[b]}, slot[2] = {1, 2};
        double tput[2] = {NAN, NAN}, lr = 0;
        cl_coloc_t p = {c->id, 2, w, share, tput, slot, 0, c->origin, c->set};
        int rc = psi_mps_predict(m, d, &p, s < j ? 0 : 1, &lr);
        if (rc)
            return rc;
        slow += fmax(exp(-lr) - 1, 0); /* a co-runner takes time, it gives none */
    }
    *out = -log(slow);
    return 0;
}

int psi_mps_predict(const ps_coloc_model_t *m, const cl_data_t *d, const cl_coloc_t *c, int s, double *out_log_ratio)
{
    if (c->k > 2 && m->nf == CL_MPS_BASE_NF)
        return compose_pairs(m, d, c, s, out_log_ratio);
    double x[CL_MPS_NF], f = 0;
    int lowrank = c->k > 2;
    double mg = lowrank ? psi_cl_lowrank_predict(m->lowrank, d, c, s) : log(psi_cl_model_ratio(m, d->w[c->w[s]].name));
    psi_cl_mps_features(d, c, s, x);
    if (m->nf == CL_MPS_NF)
        psi_pairenc_features(m, d, c, s, x + CL_MPS_BASE_NF);
    int rc = psi_xgb_predict(m->booster, &(psi_xgb_rows_t){.x = x, .margin = &mg, .n = 1, .d = m->nf}, &f);
    /* f = M + residual; the residual, learned per unit of co-runner
     * activity, shrinks with the co-runners' shares. */
    *out_log_ratio = mg + (f - mg) * (lowrank ? 1 : psi_cl_mps_corunner_activity(d, c, s));
    return rc;
}
