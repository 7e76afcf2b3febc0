/*
 * One co-location predictor of a base kind (kace_*, xu_rf, ratio, mps,
 * lowrank): fitting on a subset of a data set and prediction. auto, the
 * blend and the public train/predict calls are fit.c. docs/colocate.md gives
 * the equations.
 */
#include "colocate/colocate.h"

#include "common/common.h"
#include "model/mlp.h"
#include "model/xgb.h"

#include "colocate/model_internal.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ps_coloc_kind_name(ps_coloc_kind_t kind)
{
    const psi_cl_kind_t *r = psi_cl_kind(kind);
    return r ? r->name : "unknown";
}

int ps_coloc_kind_from_name(const char *name, ps_coloc_kind_t *out)
{
    const char *names[PS_COLOC_KIND_COUNT];
    for (int j = 0; j < PS_COLOC_KIND_COUNT; j++)
        names[j] = psi_cl_kind((ps_coloc_kind_t)j)->name;
    int k;
    int rc = psi_name_index("predictor", name, names, PS_COLOC_KIND_COUNT, &k);
    if (rc == PS_OK)
        *out = (ps_coloc_kind_t)k;
    return rc;
}

int ps_coloc_kind_predicts_sum(ps_coloc_kind_t kind)
{
    const psi_cl_kind_t *r = psi_cl_kind(kind);
    return r ? r->predicts_sum : 0;
}

ps_coloc_params_t ps_coloc_default_params(void)
{
    ps_coloc_params_t p = {.kind = PS_COLOC_MPS,
                           .seed = 0,
                           .trees = 100,
                           .mlp_epochs = 400,
                           .boost_rounds = 400,
                           .auto_rule = PS_COLOC_AUTO_WITHIN};
    return p;
}

ps_coloc_kind_t ps_coloc_model_kind(const ps_coloc_model_t *m) { return m->kind; }

const char *ps_coloc_model_gpu(const ps_coloc_model_t *m) { return m->gpu ? m->gpu : ""; }

unsigned ps_coloc_model_ks(const ps_coloc_model_t *m) { return m->ks; }

int ps_coloc_model_auto(const ps_coloc_model_t *m) { return m->autosel; }

int ps_coloc_model_blend(const ps_coloc_model_t *m, double *out_w)
{
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        out_w[k] = 0;
    for (int j = 0; j < m->n_blend; j++)
        out_w[m->blend[j]->kind] += m->blend_w[j];
    return m->n_blend;
}

void ps_coloc_model_free(ps_coloc_model_t *m)
{
    if (!m)
        return;
    for (int j = 0; j < m->n_blend; j++)
        ps_coloc_model_free(m->blend[j]);
    psi_xgb_free(m->booster);
    psi_cl_lowrank_free(m->lowrank);
    free(m->enc_pair);
    free(m->enc_agg);
    free(m->gpu);
    psi_mlp_free(m->mlp);
    for (int i = 0; i < m->n_ratio; i++)
        free(m->ratio_name[i]);
    free(m->ratio_name);
    free(m->ratio_med);
    free(m);
}

int psi_cl_model_nf(ps_coloc_kind_t kind)
{
    const psi_cl_kind_t *r = psi_cl_kind(kind);
    return r ? r->nf : CL_SUM_NF;
}

/* ---- the ratio table: each workload's median co-located / solo ratio ---- */

static int fit_ratio_table(ps_coloc_model_t *m, const cl_data_t *d, const wrow_t *r, int n)
{
    double *v = psi_malloc((size_t)n * sizeof *v + 1);
    m->ratio_name = psi_calloc((size_t)d->nw + 1, sizeof *m->ratio_name);
    m->ratio_med = psi_calloc((size_t)d->nw + 1, sizeof *m->ratio_med);
    if (!v || !m->ratio_name || !m->ratio_med) {
        free(v);
        return PS_E_NOMEM;
    }
    for (int i = 0; i < n; i++)
        v[i] = r[i].ratio;
    m->ratio_global = n ? psi_median(v, (size_t)n) : 1.0;
    for (int w = 0; w < d->nw; w++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (r[i].w == w)
                v[k++] = r[i].ratio;
        if (!k)
            continue;
        if (!(m->ratio_name[m->n_ratio] = psi_strdup(d->w[w].name))) {
            free(v);
            return PS_E_NOMEM;
        }
        m->ratio_med[m->n_ratio++] = psi_median(v, (size_t)k);
    }
    free(v);
    return 0;
}

/* ---- fitting ---- */

static int fit_forest(ps_coloc_model_t *m, const double *x, const double *y, int n, int nf)
{
    double mean = 0;
    for (int i = 0; i < n; i++)
        mean += y[i] / n;
    char seed[32], trees[32], base[64];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)(m->p.seed % 2147483647ull));
    snprintf(trees, sizeof trees, "%d", m->p.trees > 0 ? m->p.trees : 100);
    snprintf(base, sizeof base, "%.17g", mean);
    /* XGBoost's random-forest mode: one round of num_parallel_tree trees,
     * each on a row subsample with features drawn per node, no shrinkage. */
    const char *kv[] = {"booster",
                        "gbtree",
                        "objective",
                        "reg:squarederror",
                        "tree_method",
                        "exact",
                        "nthread",
                        "1",
                        "num_parallel_tree",
                        trees,
                        "subsample",
                        "0.8",
                        "colsample_bynode",
                        "0.8",
                        "eta",
                        "1",
                        "max_depth",
                        "6",
                        "min_child_weight",
                        "1",
                        "base_score",
                        base,
                        "seed",
                        seed,
                        NULL};
    return psi_xgb_train(&(psi_xgb_rows_t){.x = x, .y = y, .n = n, .d = nf}, kv, 1, &m->booster);
}

static float zval(double v, double mu, double sd) { return (sd > 0 && !isnan(v)) ? (float)((v - mu) / sd) : 0.0f; }

/* KACE's network: three hidden layers of 128, 64 and 32 units (tanh),
 * linear output, on z-scored inputs (a missing value is the mean), trained
 * by the project's MLP (model/mlp.c: minibatch Adam, early stopping on 10%
 * of the rows) for at most mlp_epochs epochs; the model seed gives one
 * network. It replaced FANN's RPROP network of the same shape: on kace-v100
 * (20 % training, 3 x 20 splits) its selection scored 0.863-0.869 against
 * FANN's 0.847-0.865, at 4 s instead of 52-78 s (docs/colocate.md). */
static int fit_mlp(ps_coloc_model_t *m, const double *x, const double *y, int n, int nf)
{
    psi_cl_zscore(x, n, nf, m->mu, m->sd);
    psi_cl_zscore(y, n, 1, &m->ymu, &m->ysd);
    float *xf = psi_malloc((size_t)n * nf * sizeof *xf + 1);
    if (!xf)
        return PS_E_NOMEM;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < nf; j++)
            xf[i * nf + j] = zval(x[i * nf + j], m->mu[j], m->sd[j]);
    psi_mlp_params_t mp = psi_mlp_default_params();
    mp.hidden[0] = 128;
    mp.hidden[1] = 64;
    mp.hidden[2] = 32;
    mp.tanh_hidden = 1;
    mp.epochs = m->p.mlp_epochs > 0 ? m->p.mlp_epochs : 1;
    mp.seed = m->p.seed * 2654435761u + 1;
    int rc = psi_mlp_train(&(psi_mlp_rows_t){xf, y, (size_t)n, nf, 1}, &mp, &m->mlp);
    free(xf);
    return rc;
}

/* The distinct gpu values of the training co-locations' workloads. */
char *psi_cl_train_gpus(const cl_data_t *d, const int *train, int n_train)
{
    size_t cap = 1;
    for (int i = 0; i < d->nw; i++)
        cap += (d->w[i].gpu ? strlen(d->w[i].gpu) : 0) + 1;
    char *s = psi_calloc(cap, 1);
    if (!s)
        return NULL;
    for (int i = 0; i < n_train; i++) {
        const cl_coloc_t *c = &d->c[train[i]];
        for (int j = 0; j < c->k; j++) {
            const char *g = d->w[c->w[j]].gpu;
            if (!g || !*g)
                continue;
            int dup = 0;
            for (const char *p = s; *p && !dup;) {
                size_t l = strcspn(p, ",");
                dup = l == strlen(g) && strncmp(p, g, l) == 0;
                p += l + (p[l] == ',');
            }
            if (!dup) {
                if (*s)
                    strcat(s, ",");
                strcat(s, g);
            }
        }
    }
    return s;
}

/* Bit k for each k of the training co-locations (bit 31: 31 or more). */
unsigned psi_cl_train_ks(const cl_data_t *d, const int *train, int n_train)
{
    unsigned ks = 0;
    for (int i = 0; i < n_train; i++)
        ks |= 1u << (d->c[train[i]].k < 31 ? d->c[train[i]].k : 31);
    return ks;
}

/* ratio, mps, lowrank: from the measured slots of the training set, the
 * ratio table and then extra's state (NULL: none). */
typedef int (*per_workload_fit_fn)(ps_coloc_model_t *m, const cl_data_t *d, const wrow_t *r, int n, const int *train,
                                   int n_train);

static int fit_per_workload(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train,
                            per_workload_fit_fn extra)
{
    wrow_t *r = NULL;
    int n = 0, rc = psi_cl_measured_rows(d, train, n_train, &r, &n);
    if (!rc && n < 1)
        rc = psi_error(PS_E_INPUT, "colocate: no measured throughput to train on");
    if (!rc)
        rc = fit_ratio_table(m, d, r, n);
    if (!rc && extra)
        rc = extra(m, d, r, n, train, n_train);
    free(r);
    return rc;
}

/* KACE's and Xu's kinds: feat's row of each complete training co-location
 * and its throughput sum, given to learn. */
typedef void (*sum_features_fn)(const cl_data_t *d, const cl_coloc_t *c, double *out);
typedef int (*sum_learn_fn)(ps_coloc_model_t *m, const double *x, const double *y, int n, int nf);

static int fit_sum(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train, sum_features_fn feat,
                   sum_learn_fn learn)
{
    int nf = m->nf, n = 0, rc = 0;
    double *x = psi_malloc((size_t)n_train * nf * sizeof *x + 1), *y = psi_malloc((size_t)n_train * sizeof *y + 1);
    if (!x || !y)
        rc = PS_E_NOMEM;
    for (int i = 0; i < n_train && !rc; i++) {
        const cl_coloc_t *c = &d->c[train[i]];
        if (!c->complete)
            continue;
        feat(d, c, x + (size_t)n * nf);
        y[n] = 0;
        for (int s = 0; s < c->k; s++)
            y[n] += c->tput[s];
        n++;
    }
    if (!rc && n < 1)
        rc = psi_error(PS_E_INPUT, "colocate: %s needs a co-location whose every throughput was measured",
                       ps_coloc_kind_name(m->kind));
    if (!rc)
        rc = learn(m, x, y, n, nf);
    free(x);
    free(y);
    return rc;
}

static int learn_ols(ps_coloc_model_t *m, const double *x, const double *y, int n, int nf)
{
    const cl_ols_t ols = {m->mu, m->sd, m->beta};
    return psi_cl_ols(x, y, n, nf, 1e-8, &ols);
}

/* One predictor of a base kind (not auto) on train; psi_cl_model_fit checks
 * the parameters first. */
int psi_cl_model_fit_base(const cl_data_t *d, const int *train, int n_train, const ps_coloc_params_t *p,
                          ps_coloc_model_t **out)
{
    *out = NULL;
    ps_coloc_model_t *m = psi_calloc(1, sizeof *m);
    if (!m)
        return PS_E_NOMEM;
    m->kind = p->kind;
    m->p = *p;
    m->nf = psi_cl_model_nf(p->kind);
    m->ks = psi_cl_train_ks(d, train, n_train);
    if (!(m->gpu = psi_cl_train_gpus(d, train, n_train))) {
        free(m);
        return PS_E_NOMEM;
    }
    const psi_cl_kind_t *row = psi_cl_kind(p->kind);
    int rc = row && row->fit ? row->fit(m, d, train, n_train)
                             : psi_error(PS_E_ARG, "colocate: %s is not a base kind", ps_coloc_kind_name(p->kind));
    if (rc) {
        ps_coloc_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

/* ---- prediction ---- */

typedef int (*sum_eval_fn)(const ps_coloc_model_t *m, const double *x, double *out_sum);

/* How a sum kind predicts: its features of a co-location, valued by its
 * learner. */
typedef struct {
    sum_features_fn feat;
    sum_eval_fn eval;
} sum_predictor_t;

/* A sum kind's prediction of co-location ci: sp's features, valued by sp's
 * learner, into *out_sum; every slot NAN. */
static int predict_sum(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum,
                       const sum_predictor_t *sp)
{
    const cl_coloc_t *c = &d->c[ci];
    double x[CL_MPS_NF];
    *out_sum = 0;
    for (int s = 0; s < c->k; s++)
        out_slot[s] = NAN;
    sp->feat(d, c, x);
    return sp->eval(m, x, out_sum);
}

static int eval_ols(const ps_coloc_model_t *m, const double *x, double *out_sum)
{
    *out_sum = psi_cl_ols_eval(x, m->nf, m->mu, m->sd, m->beta);
    return 0;
}

static int eval_mlp(const ps_coloc_model_t *m, const double *x, double *out_sum)
{
    float in[CL_MPS_NF];
    for (int j = 0; j < m->nf; j++)
        in[j] = zval(x[j], m->mu[j], m->sd[j]);
    return psi_mlp_predict(m->mlp, in, 1, out_sum);
}

static int eval_forest(const ps_coloc_model_t *m, const double *x, double *out_sum)
{
    return psi_xgb_predict(m->booster, &(psi_xgb_rows_t){.x = x, .n = 1, .d = m->nf}, out_sum);
}

/* A per-workload kind's prediction: each slot's solo throughput times
 * factor's co-located / solo ratio (NULL: the ratio table's). */
typedef int (*slot_factor_fn)(const ps_coloc_model_t *m, const cl_data_t *d, const cl_coloc_t *c, int s, double *out);

static int predict_slots(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum,
                         slot_factor_fn factor)
{
    const cl_coloc_t *c = &d->c[ci];
    *out_sum = 0;
    for (int s = 0; s < c->k; s++) {
        double solo = psi_cl_solo(d, c->w[s], c->share[s]);
        double f = psi_cl_model_ratio(m, d->w[c->w[s]].name);
        if (factor) {
            int rc = factor(m, d, c, s, &f);
            if (rc)
                return rc;
        }
        double t = solo * f;
        out_slot[s] = t;
        *out_sum += t;
    }
    return 0;
}

static int factor_mps(const ps_coloc_model_t *m, const cl_data_t *d, const cl_coloc_t *c, int s, double *out)
{
    double lr = 0;
    int rc = psi_mps_predict(m, d, c, s, &lr);
    *out = exp(lr);
    return rc;
}

static int factor_lowrank(const ps_coloc_model_t *m, const cl_data_t *d, const cl_coloc_t *c, int s, double *out)
{
    *out = exp(psi_cl_lowrank_predict(m->lowrank, d, c, s));
    return 0;
}

int psi_cl_model_predict_base(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum)
{
    const psi_cl_kind_t *row = psi_cl_kind(m->kind);
    if (!row || !row->predict)
        return psi_error(PS_E_ARG, "colocate: %s is not a base kind", ps_coloc_kind_name(m->kind));
    return row->predict(m, d, ci, out_slot, out_sum);
}

int psi_cl_model_slots_base(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot)
{
    double sum = 0;
    int rc = psi_cl_model_predict_base(m, d, ci, out_slot, &sum);
    if (rc || !ps_coloc_kind_predicts_sum(m->kind))
        return rc;
    const cl_coloc_t *c = &d->c[ci];
    double solo = 0;
    for (int s = 0; s < c->k; s++)
        solo += psi_cl_solo(d, c->w[s], c->share[s]);
    for (int s = 0; s < c->k; s++)
        out_slot[s] = sum * psi_cl_solo(d, c->w[s], c->share[s]) / solo;
    return 0;
}

/* ---- the kinds: one row each ---- */

static int fit_kace_lr(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train)
{
    return fit_sum(m, d, train, n_train, psi_cl_sum_features, learn_ols);
}

static int fit_kace_rf(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train)
{
    return fit_sum(m, d, train, n_train, psi_cl_sum_features, fit_forest);
}

static int fit_kace_mlp(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train)
{
    return fit_sum(m, d, train, n_train, psi_cl_sum_features, fit_mlp);
}

static int fit_xu_rf(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train)
{
    return fit_sum(m, d, train, n_train, psi_cl_xu_features, fit_forest);
}

static int fit_ratio(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train)
{
    return fit_per_workload(m, d, train, n_train, NULL);
}

static int fit_mps(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train)
{
    return fit_per_workload(m, d, train, n_train, psi_mps_fit);
}

static int lowrank_extra(ps_coloc_model_t *m, const cl_data_t *d, const wrow_t *r, int n, const int *train, int n_train)
{
    (void)r;
    (void)n;
    return psi_cl_lowrank_fit(d, train, n_train, m->p.seed, &m->lowrank);
}

static int fit_lowrank(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train)
{
    return fit_per_workload(m, d, train, n_train, lowrank_extra);
}

static int predict_kace_lr(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum)
{
    static const sum_predictor_t sp = {psi_cl_sum_features, eval_ols};
    return predict_sum(m, d, ci, out_slot, out_sum, &sp);
}

static int predict_kace_rf(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum)
{
    static const sum_predictor_t sp = {psi_cl_sum_features, eval_forest};
    return predict_sum(m, d, ci, out_slot, out_sum, &sp);
}

static int predict_kace_mlp(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum)
{
    static const sum_predictor_t sp = {psi_cl_sum_features, eval_mlp};
    return predict_sum(m, d, ci, out_slot, out_sum, &sp);
}

static int predict_xu_rf(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum)
{
    static const sum_predictor_t sp = {psi_cl_xu_features, eval_forest};
    return predict_sum(m, d, ci, out_slot, out_sum, &sp);
}

static int predict_ratio(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum)
{
    return predict_slots(m, d, ci, out_slot, out_sum, NULL);
}

static int predict_mps(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum)
{
    return predict_slots(m, d, ci, out_slot, out_sum, factor_mps);
}

static int predict_lowrank(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum)
{
    return predict_slots(m, d, ci, out_slot, out_sum, factor_lowrank);
}

static double np_kace_lr(const cl_data_t *d, const ps_coloc_params_t *p)
{
    (void)p;
    int nm = 0;
    for (int j = 0; j < CW_N; j++)
        nm += d->has[j];
    return 1 + nm;
}

static double np_forest(const cl_data_t *d, const ps_coloc_params_t *p)
{
    (void)d;
    return 64.0 * (p->trees > 0 ? p->trees : 100);
}

static double np_mlp(const cl_data_t *d, const ps_coloc_params_t *p)
{
    (void)d;
    (void)p;
    return 13.0 * 128 + 128 * 64 + 64 * 32 + 32;
}

static double np_ratio(const cl_data_t *d, const ps_coloc_params_t *p)
{
    (void)p;
    return 1 + d->nw;
}

static double np_mps(const cl_data_t *d, const ps_coloc_params_t *p)
{
    (void)d;
    return 8.0 * p->boost_rounds;
}

static double np_lowrank(const cl_data_t *d, const ps_coloc_params_t *p)
{
    (void)p;
    return 4 + 6.0 * d->nw;
}

/* The rows of the kinds above; model_internal.h's PSI_CL_KINDS lists every
 * row in ps_coloc_kind_t's order (auto's row names it; fit.c and blend.c
 * make it from the others). */
const psi_cl_kind_t psi_cl_kind_kace_lr = {.kind = PS_COLOC_KACE_LR,
                                           .name = "kace_lr",
                                           .nf = CL_SUM_NF,
                                           .predicts_sum = 1,
                                           .in_auto = 1,
                                           .body = "none",
                                           .fit = fit_kace_lr,
                                           .predict = predict_kace_lr,
                                           .n_params = np_kace_lr};
const psi_cl_kind_t psi_cl_kind_kace_rf = {.kind = PS_COLOC_KACE_RF,
                                           .name = "kace_rf",
                                           .nf = CL_SUM_NF,
                                           .predicts_sum = 1,
                                           .in_auto = 1,
                                           .body = "booster",
                                           .fit = fit_kace_rf,
                                           .predict = predict_kace_rf,
                                           .n_params = np_forest};
const psi_cl_kind_t psi_cl_kind_kace_mlp = {.kind = PS_COLOC_KACE_MLP,
                                            .name = "kace_mlp",
                                            .nf = CL_SUM_NF,
                                            .predicts_sum = 1,
                                            .body = "mlp",
                                            .fit = fit_kace_mlp,
                                            .predict = predict_kace_mlp,
                                            .n_params = np_mlp};
const psi_cl_kind_t psi_cl_kind_xu_rf = {.kind = PS_COLOC_XU_RF,
                                         .name = "xu_rf",
                                         .nf = CL_XU_NF,
                                         .predicts_sum = 1,
                                         .in_auto = 1,
                                         .needs_metrics = 1,
                                         .body = "booster",
                                         .fit = fit_xu_rf,
                                         .predict = predict_xu_rf,
                                         .n_params = np_forest};
const psi_cl_kind_t psi_cl_kind_ratio = {.kind = PS_COLOC_RATIO,
                                         .name = "ratio",
                                         .nf = CL_MPS_NF,
                                         .in_auto = 1,
                                         .body = "none",
                                         .fit = fit_ratio,
                                         .predict = predict_ratio,
                                         .n_params = np_ratio};
const psi_cl_kind_t psi_cl_kind_mps = {.kind = PS_COLOC_MPS,
                                       .name = "mps",
                                       .nf = CL_MPS_NF,
                                       .nf_alt = CL_MPS_BASE_NF,
                                       .in_auto = 1,
                                       .body = "booster",
                                       .fit = fit_mps,
                                       .predict = predict_mps,
                                       .n_params = np_mps};
const psi_cl_kind_t psi_cl_kind_lowrank = {.kind = PS_COLOC_LOWRANK,
                                           .name = "lowrank",
                                           .nf = CL_SUM_NF,
                                           .in_auto = 1,
                                           .body = "lowrank",
                                           .fit = fit_lowrank,
                                           .predict = predict_lowrank,
                                           .n_params = np_lowrank};
const psi_cl_kind_t psi_cl_kind_auto = {.kind = PS_COLOC_AUTO, .name = "auto", .nf = CL_SUM_NF, .body = "none"};

/* As Lua's linit.c, the order is asserted: the count here, each row's kind
 * by test_colocate (test_kind_rows). */
#define PSI_CL_KIND_PTR(name) &psi_cl_kind_##name,
static const psi_cl_kind_t *const kinds[] = {PSI_CL_KINDS(PSI_CL_KIND_PTR)};
_Static_assert(sizeof kinds / sizeof kinds[0] == PS_COLOC_KIND_COUNT, "one row per ps_coloc_kind_t, in its order");

const psi_cl_kind_t *psi_cl_kind(ps_coloc_kind_t k) { return (unsigned)k < PS_COLOC_KIND_COUNT ? kinds[k] : NULL; }
