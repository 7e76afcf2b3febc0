/*
 * The makespan of k co-running operator-group ranges: predictors and
 * protocols (issue 28; docs/overlap.md).
 *
 * What carries over to a new pair or a new model is what each range costs
 * alone and how the co-runners compare, not the model's name. Each slot's
 * solo range time comes from a table fitted on the single-active
 * experiments (one slot runs a range, the others run nothing) of the
 * training data: for each (setting, model, batch, seq_len)
 *     t(range [s, e)) = c + sum_{g in [s, e)} t_g,
 * least squares with a ridge pull toward the uniform prior c = t_g = u,
 * u = mean over its experiments of time / (e - s + 1).
 * The predictor (XGBoost) learns makespan / max(solo) from the sorted solo
 * times, their ratios, the number of active slots, the ranges' shares of
 * their models, batch and sequence length, and (with --oplists) the ranges'
 * FLOPs, bytes and kernels.
 */
#include "evaluate/overlap.h"
#include "evaluate/overlap_internal.h"

#include "colocate/colocate.h"
#include "common/common.h"
#include "model/mlp.h"
#include "evaluate/overlap_ops.h"
#include "model/xgb.h"
#include "profile/abacus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const psi_ov_method_names[PSI_OVM_N] = {"pairsight", "abacus_mlp", "abacus_xgb", "max_solo", "sum_solo"};
const char *const psi_ov_protocol_names[PSI_OVP_N] = {"random", "leave-pair", "k-way", "leave-model", "mig"};

psi_ov_params_t psi_ov_default_params(void)
{
    unsigned features = 0;
    psi_ov_features_parse(PSI_OV_FEATURES_DEFAULT, &features);
    return (psi_ov_params_t){.rounds = 600,
                             .depth = 8,
                             .eta = 0.05,
                             .mlp_epochs = 30,
                             .ridge = 0.01,
                             .threads = 2,
                             .seed = 1,
                             .oplists = NULL,
                             .features = features,
                             .pairsight_only = 0,
                             .setting_model = 0,
                             .floors = 1};
}

/* ---- features ---- */

#define NF_AB (7 * 5)

/* Abacus's features (dataloader.py get_feature_latency): a count per model,
 * then start, end, batch and seq_len per model in Abacus's model order. Laid
 * out here for all seven models (zeros where absent), which holds the same
 * information as its layout (which keeps only the k present models) and
 * takes any k. */
static void ab_features(const psi_ov_exp_t *e, double *f)
{
    static const char *const order[7] = {"resnet50", "resnet101", "resnet152", "inception_v3",
                                         "vgg16",    "vgg19",     "bert"};
    memset(f, 0, NF_AB * sizeof *f);
    for (int i = 0; i < e->k; i++)
        for (int m = 0; m < 7; m++)
            if (strcmp(e->slot[i].model, order[m]) == 0) {
                f[m] += 1;
                f[7 + 4 * m] = e->slot[i].op_start;
                f[8 + 4 * m] = e->slot[i].op_end;
                f[9 + 4 * m] = e->slot[i].batch;
                f[10 + 4 * m] = e->slot[i].seq_len;
            }
}

/* ---- one fold: train on tr, fit solo times on so, predict te ---- */

typedef struct {
    const psi_overlap_t *t;
    const psi_ov_params_t *p;
    const psi_ov_ops_t *ops;
} ctx_t;

static int xgb_fit(const ctx_t *c, const double *xtr, const double *ytr, size_t ntr, int d, void **b)
{
    char bufs[4][32];
    const char *kv[PSI_OV_XGB_KV];
    psi_ov_xgb_params(c->p, bufs, kv);
    return psi_xgb_train(&(psi_xgb_rows_t){.x = xtr, .y = ytr, .n = (int)ntr, .d = d}, kv, c->p->rounds, b);
}

/* Feature rows of a set of experiments: PairSight's (xps, its target yps,
 * the max and sum of the solo times; n of them, those whose solo time is
 * known where the set trains) and Abacus's (xab, yab; one per experiment,
 * nab of them). */
typedef struct {
    double *xps, *yps, *xab, *yab, *mx, *sum;
    size_t n, nab;
    int kmax; /* training rows: the most active slots */
} rows_t;

/* Abacus's rows through XGBoost: trained on tr, te's predictions (ms) into
 * out. */
static int xgb_fit_predict(const ctx_t *c, const rows_t *tr, const rows_t *te, double *out)
{
    void *b = NULL;
    int rc = xgb_fit(c, tr->xab, tr->yab, tr->nab, NF_AB, &b);
    if (rc == PS_OK)
        rc = psi_xgb_predict(b, &(psi_xgb_rows_t){.x = te->xab, .n = (int)te->nab, .d = NF_AB}, out);
    psi_xgb_free(b);
    return rc;
}

/* Abacus's MLP (mlp.py MLPregression: three hidden layers of 32, ReLU, MSE
 * on milliseconds) on Abacus's rows, trained on tr, te's predictions into
 * out; trained here by the project's trainer (Adam, inputs and target
 * standardised, early stopping) rather than SGD with a cosine rate. */
static int mlp_fit_predict(const ctx_t *c, const rows_t *tr, const rows_t *te, double *out)
{
    const double *xtr = tr->xab, *ytr = tr->yab, *xte = te->xab;
    size_t ntr = tr->nab, nte = te->nab;
    psi_mlp_params_t mp = psi_mlp_default_params();
    mp.hidden[0] = mp.hidden[1] = mp.hidden[2] = 32;
    mp.epochs = c->p->mlp_epochs;
    mp.batch = 128;
    mp.weight_decay = 0;
    mp.seed = c->p->seed;
    float *ftr = psi_malloc(ntr * NF_AB * sizeof *ftr + 1), *fte = psi_malloc(nte * NF_AB * sizeof *fte + 1);
    psi_mlp_t *m = NULL;
    int rc = ftr && fte ? PS_OK : PS_E_NOMEM;
    for (size_t i = 0; rc == PS_OK && i < ntr * NF_AB; i++)
        ftr[i] = (float)xtr[i];
    for (size_t i = 0; rc == PS_OK && i < nte * NF_AB; i++)
        fte[i] = (float)xte[i];
    if (rc == PS_OK)
        rc = psi_mlp_train(&(psi_mlp_rows_t){ftr, ytr, ntr, NF_AB, 1}, &mp, &m);
    if (rc == PS_OK)
        rc = psi_mlp_predict(m, fte, nte, out);
    psi_mlp_free(m);
    free(ftr);
    free(fte);
    return rc;
}

static void rows_free(rows_t *r)
{
    free(r->xps);
    free(r->yps);
    free(r->xab);
    free(r->yab);
    free(r->mx);
    free(r->sum);
}

/* Feature rows of idx[n]; with train set, rows whose solo time is unknown
 * are dropped from PairSight's rows (r->n counts those kept). */
static int rows_make(const ctx_t *c, const solo_t *s, const size_t *idx, size_t n, int train, rows_t *r)
{
    memset(r, 0, sizeof *r);
    r->xps = psi_malloc(n * NF_PS * sizeof(double) + 1);
    r->yps = psi_malloc(n * sizeof(double) + 1);
    r->mx = psi_malloc(n * sizeof(double) + 1);
    r->sum = psi_malloc(n * sizeof(double) + 1);
    r->xab = psi_malloc(n * NF_AB * sizeof(double) + 1);
    r->yab = psi_malloc(n * sizeof(double) + 1);
    if (!r->xps || !r->yps || !r->mx || !r->sum || !r->xab || !r->yab)
        return PS_E_NOMEM;
    const psi_ov_pred_ctx_t pc = {.solo = s, .ops = c->ops, .mask = c->p->features};
    for (size_t i = 0; i < n; i++) {
        const psi_ov_exp_t *e = &c->t->exps[idx[i]];
        ab_features(e, r->xab + i * NF_AB);
        r->yab[i] = e->median_us / 1000.0;
        double mx, sum;
        psi_ov_ps_features(e, &pc, r->xps + r->n * NF_PS, &mx, &sum);
        if (train && !(mx > 0))
            continue;
        r->mx[r->n] = mx;
        r->sum[r->n] = sum;
        r->yps[r->n] = e->median_us / mx;
        r->n++;
        if (psi_ov_active(e) > r->kmax)
            r->kmax = psi_ov_active(e);
    }
    r->nab = n;
    return PS_OK;
}

/* A fold's experiments: the training rows tr, the rows whose single-active
 * runs fit the solo table so, and the test rows te. */
typedef struct {
    size_t *tr, *so, *te;
    size_t ntr, nso, nte;
} split_t;

/* Fold f's rows te[i] of a setting without co-runs among tr (all with
 * p->setting_model): trained on tr, capacities from the single-active runs
 * of so, their makespans into out[i]. */
static int sf_fold(const ctx_t *cx, const psi_ov_pred_ctx_t *main_ctx, const split_t *f, double *out)
{
    const psi_overlap_t *t = cx->t;
    const psi_ov_params_t *p = cx->p;
    const size_t *tr = f->tr, *so = f->so, *te = f->te;
    size_t ntr = f->ntr, nso = f->nso, nte = f->nte;
    const char *seen[32];
    size_t ns = psi_ov_seen_settings(t, tr, ntr, seen, 32), nsub = 0;
    size_t *sub = psi_malloc(nte * sizeof *sub + 1), *pos = psi_malloc(nte * sizeof *pos + 1);
    double *v = psi_malloc(nte * sizeof *v + 1);
    int rc = sub && pos && v ? PS_OK : PS_E_NOMEM;
    for (size_t i = 0; rc == PS_OK && i < nte; i++)
        if (p->setting_model || !psi_ov_setting_in(t->exps[te[i]].setting, seen, ns)) {
            pos[nsub] = i;
            sub[nsub++] = te[i];
        }
    psi_ov_caps_t caps = {NULL, 0};
    psi_ov_pred_ctx_t c = *main_ctx;
    c.booster = NULL;
    c.caps = &caps;
    if (rc == PS_OK && nsub)
        rc = psi_ov_caps_fit(t, so, nso, main_ctx->ops, &caps);
    if (rc == PS_OK && nsub)
        rc = psi_ov_sf_train(t, p, &c, tr, ntr, &c.booster);
    if (rc == PS_OK && nsub)
        rc = psi_ov_ps_predict(&c, t, sub, nsub, v);
    for (size_t j = 0; rc == PS_OK && j < nsub; j++)
        out[pos[j]] = v[j];
    psi_xgb_free(c.booster);
    psi_ov_caps_free(&caps);
    free(sub);
    free(pos);
    free(v);
    return rc;
}

/* Predictions pred[m * nte + i] of every method for fold f's te[nte]. */
static int fold(const ctx_t *c, const split_t *f, double *pred)
{
    const size_t *te = f->te;
    size_t nte = f->nte;
    solo_t s;
    rows_t a = {0}, b = {0};
    int rc = psi_ov_solo_fit(c->t, f->so, f->nso, c->p->ridge, &s);
    if (rc == PS_OK)
        rc = rows_make(c, &s, f->tr, f->ntr, 1, &a);
    if (rc == PS_OK)
        rc = rows_make(c, &s, te, nte, 0, &b);
    double *ps = pred + PSI_OVM_PAIRSIGHT * nte;
    psi_ov_pred_ctx_t pc = {&s, c->ops, c->p->features, 0, NULL, NULL};
    if (rc == PS_OK && !c->p->setting_model)
        rc = xgb_fit(c, a.xps, a.yps, a.n, NF_PS, &pc.booster);
    pc.kmax = a.kmax;
    if (rc == PS_OK && !c->p->setting_model)
        rc = psi_ov_ps_predict(&pc, c->t, te, nte, ps);
    psi_xgb_free(pc.booster);
    /* Rows of a setting without training co-runs: the setting model. */
    if (rc == PS_OK)
        rc = sf_fold(c, &pc, f, ps);
    int ab = !c->p->pairsight_only;
    if (rc == PS_OK && ab)
        rc = xgb_fit_predict(c, &a, &b, pred + PSI_OVM_ABACUS_XGB * nte);
    if (rc == PS_OK && ab && c->p->mlp_epochs > 0)
        rc = mlp_fit_predict(c, &a, &b, pred + PSI_OVM_ABACUS_MLP * nte);
    for (size_t i = 0; rc == PS_OK && i < nte; i++) {
        pred[PSI_OVM_ABACUS_XGB * nte + i] = ab ? pred[PSI_OVM_ABACUS_XGB * nte + i] * 1000.0 : NAN;
        pred[PSI_OVM_ABACUS_MLP * nte + i] =
            ab && c->p->mlp_epochs > 0 ? pred[PSI_OVM_ABACUS_MLP * nte + i] * 1000.0 : NAN;
        pred[PSI_OVM_MAX_SOLO * nte + i] = b.mx[i];
        pred[PSI_OVM_SUM_SOLO * nte + i] = b.sum[i];
    }
    rows_free(&a);
    rows_free(&b);
    psi_ov_solo_free(&s);
    return rc;
}

/* ---- protocols ---- */

static int is_ded(const psi_ov_exp_t *e, int k) { return strcmp(e->setting, "dedicated") == 0 && e->k == k; }

static int has_model(const psi_ov_exp_t *e, const char *m)
{
    for (int s = 0; s < e->k; s++)
        if (e->slot[s].model == m)
            return 1;
    return 0;
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* "bert_resnet101": the experiment's models, sorted, joined by '_'. */
static void combo(const psi_ov_exp_t *e, char *buf, size_t n)
{
    const char *m[PSI_OV_MAX_K];
    for (int s = 0; s < e->k; s++)
        m[s] = e->slot[s].model;
    qsort(m, (size_t)e->k, sizeof *m, cmp_cstr);
    buf[0] = '\0';
    for (int s = 0; s < e->k; s++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", s ? "_" : "", m[s]);
}

typedef struct {
    double err[PSI_OVM_N];
    size_t n[PSI_OVM_N];
} acc_t;

static void acc_add(acc_t *a, const double *pred, size_t nte, size_t i, double y)
{
    for (int m = 0; m < PSI_OVM_N; m++) {
        double p = pred[m * nte + i];
        if (isfinite(p)) {
            a->err[m] += fabs(p - y) / y;
            a->n[m]++;
        }
    }
}

/* Run fold f and add its errors to the pooled *all and, for the worst
 * group, compare its own MAPE with out->worst. */
static int fold_score(const ctx_t *c, const split_t *f, const char *group, acc_t *all, psi_ov_result_t *out)
{
    const size_t *te = f->te;
    size_t nte = f->nte;
    if (nte == 0 || f->ntr == 0)
        return PS_OK;
    double *pred = psi_malloc(PSI_OVM_N * nte * sizeof *pred);
    if (!pred)
        return PS_E_NOMEM;
    int rc = fold(c, f, pred);
    acc_t mine = {{0}, {0}};
    for (size_t i = 0; rc == PS_OK && i < nte; i++) {
        double y = c->t->exps[te[i]].median_us;
        acc_add(all, pred, nte, i, y);
        acc_add(&mine, pred, nte, i, y);
    }
    for (int m = 0; rc == PS_OK && group && m < PSI_OVM_N; m++) {
        double mape = mine.n[m] ? 100.0 * mine.err[m] / (double)mine.n[m] : NAN;
        if (mine.n[m] && !(mape <= out->worst[m])) {
            out->worst[m] = mape;
            snprintf(out->worst_name[m], sizeof out->worst_name[m], "%s", group);
        }
    }
    free(pred);
    if (group)
        psi_log(PS_LOG_INFO, "overlap: held out %s (%zu experiments): pairsight %.2f%%, max_solo %.2f%%", group, nte,
                mine.n[0] ? 100.0 * mine.err[0] / (double)mine.n[0] : NAN,
                mine.n[3] ? 100.0 * mine.err[3] / (double)mine.n[3] : NAN);
    return rc;
}

static int split_init(split_t *s, size_t n)
{
    memset(s, 0, sizeof *s);
    s->tr = psi_malloc(n * sizeof(size_t) + 1);
    s->so = psi_malloc(n * sizeof(size_t) + 1);
    s->te = psi_malloc(n * sizeof(size_t) + 1);
    return s->tr && s->so && s->te ? PS_OK : PS_E_NOMEM;
}

static void split_free(split_t *s)
{
    free(s->tr);
    free(s->so);
    free(s->te);
}

/* random: Abacus's protocol, a random 80/20 split of the 2-way dedicated
 * experiments (dataloader.py random_split), every test row scored. */
static int proto_random(const ctx_t *c, split_t *s, acc_t *all, psi_ov_result_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < c->t->n; i++)
        if (is_ded(&c->t->exps[i], 2))
            s->so[n++] = i;
    psi_rng_t r;
    psi_rng_seed(&r, c->p->seed);
    psi_rng_shuffle(&r, s->so, n);
    size_t ntr = (size_t)(0.8 * (double)n);
    memcpy(s->tr, s->so, ntr * sizeof *s->tr);
    memcpy(s->te, s->so + ntr, (n - ntr) * sizeof *s->te);
    split_t f = {.tr = s->tr, .so = s->tr, .te = s->te, .ntr = ntr, .nso = ntr, .nte = n - ntr};
    return fold_score(c, &f, NULL, all, out);
}

/* The distinct combinations of the k-way dedicated experiments. */
static int combos(const psi_overlap_t *t, char (*names)[96], int max)
{
    int n = 0;
    char buf[96];
    for (size_t i = 0; i < t->n; i++) {
        if (!is_ded(&t->exps[i], 2))
            continue;
        combo(&t->exps[i], buf, sizeof buf);
        int j = 0;
        while (j < n && strcmp(names[j], buf) != 0)
            j++;
        if (j == n && n < max)
            snprintf(names[n++], sizeof names[0], "%s", buf);
    }
    return n;
}

/* leave-pair: each 2-way dedicated combination held out in turn. */
static int proto_leave_pair(const ctx_t *c, split_t *s, acc_t *all, psi_ov_result_t *out)
{
    char names[64][96], buf[96];
    int np = combos(c->t, names, 64), rc = PS_OK;
    for (int p = 0; p < np && rc == PS_OK; p++) {
        s->ntr = s->nte = 0;
        for (size_t i = 0; i < c->t->n; i++) {
            if (!is_ded(&c->t->exps[i], 2))
                continue;
            combo(&c->t->exps[i], buf, sizeof buf);
            if (strcmp(buf, names[p]) == 0)
                s->te[s->nte++] = i;
            else
                s->tr[s->ntr++] = i;
        }
        split_t f = {.tr = s->tr, .so = s->tr, .te = s->te, .ntr = s->ntr, .nso = s->ntr, .nte = s->nte};
        rc = fold_score(c, &f, names[p], all, out);
    }
    return rc;
}

/* leave-model: each model held out in turn; its single-active runs (its
 * solo profile) may fit the solo table and are not scored. */
static int proto_leave_model(const ctx_t *c, split_t *s, acc_t *all, psi_ov_result_t *out)
{
    const char *models[32];
    int nm = 0, rc = PS_OK;
    for (size_t i = 0; i < c->t->n; i++)
        for (int k = 0; k < c->t->exps[i].k && is_ded(&c->t->exps[i], 2); k++) {
            int j = 0;
            while (j < nm && models[j] != c->t->exps[i].slot[k].model)
                j++;
            if (j == nm && nm < 32)
                models[nm++] = c->t->exps[i].slot[k].model;
        }
    for (int m = 0; m < nm && rc == PS_OK; m++) {
        s->ntr = s->nso = s->nte = 0;
        for (size_t i = 0; i < c->t->n; i++) {
            const psi_ov_exp_t *e = &c->t->exps[i];
            if (!is_ded(e, 2))
                continue;
            int single = psi_ov_single_slot(e);
            if (!has_model(e, models[m]))
                s->tr[s->ntr++] = s->so[s->nso++] = i;
            else if (single >= 0 && e->slot[single].model == models[m])
                s->so[s->nso++] = i;
            else
                s->te[s->nte++] = i;
        }
        rc = fold_score(c, s, models[m], all, out);
    }
    return rc;
}

/* k-way (train on 2-way, score 3- and 4-way dedicated) and mig (train on
 * 2-way dedicated, score 2-way in a MIG 2g.10gb whose single-active runs
 * fit the solo table). */
static int proto_transfer(const ctx_t *c, int mig, split_t *s, acc_t *all, psi_ov_result_t *out)
{
    s->ntr = s->nso = s->nte = 0;
    for (size_t i = 0; i < c->t->n; i++) {
        const psi_ov_exp_t *e = &c->t->exps[i];
        if (is_ded(e, 2))
            s->tr[s->ntr++] = s->so[s->nso++] = i;
        else if (!mig && strcmp(e->setting, "dedicated") == 0)
            s->te[s->nte++] = i;
        else if (mig && strcmp(e->setting, "mig-2g.10gb") == 0 && e->k == 2 && psi_ov_single_slot(e) >= 0)
            s->so[s->nso++] = i;
        else if (mig && strcmp(e->setting, "mig-2g.10gb") == 0 && e->k == 2)
            s->te[s->nte++] = i;
    }
    return fold_score(c, s, NULL, all, out);
}

/* Whether e is among the experiments protocol p scores. */
static int target_of(const psi_ov_exp_t *e, int p)
{
    if (p == PSI_OVP_KWAY)
        return strcmp(e->setting, "dedicated") == 0 && e->k > 2;
    if (p == PSI_OVP_MIG)
        return strcmp(e->setting, "mig-2g.10gb") == 0 && e->k == 2;
    return is_ded(e, 2);
}

/* The floor of protocol p: pairsight trained on a random 80% of the
 * experiments p scores (their single-active runs fitting the solo table),
 * scored on the other 20%, as the random protocol on them. */
static int proto_floor(const ctx_t *c, int p, split_t *s, psi_ov_result_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < c->t->n; i++)
        if (target_of(&c->t->exps[i], p))
            s->so[n++] = i;
    psi_rng_t r;
    psi_rng_seed(&r, c->p->seed);
    psi_rng_shuffle(&r, s->so, n);
    size_t ntr = (size_t)(0.8 * (double)n);
    psi_ov_params_t q = *c->p;
    q.pairsight_only = 1;
    q.setting_model = 0;
    ctx_t cf = {c->t, &q, c->ops};
    acc_t all = {{0}, {0}};
    psi_ov_result_t tmp;
    split_t f = {.tr = s->so, .so = s->so, .te = s->so + ntr, .ntr = ntr, .nso = ntr, .nte = n - ntr};
    int rc = fold_score(&cf, &f, NULL, &all, &tmp);
    out->floor_n = all.n[PSI_OVM_PAIRSIGHT];
    out->floor = out->floor_n ? 100.0 * all.err[PSI_OVM_PAIRSIGHT] / (double)out->floor_n : NAN;
    return rc;
}

int psi_ov_eval(const psi_overlap_t *t, int p, const psi_ov_params_t *prm, psi_ov_result_t *out)
{
    out->floor = NAN;
    out->floor_n = 0;
    for (int m = 0; m < PSI_OVM_N; m++) {
        out->mape[m] = out->worst[m] = NAN;
        out->n[m] = 0;
        out->worst_name[m][0] = '\0';
    }
    psi_ov_ops_t *ops = NULL;
    int rc = prm->oplists ? psi_ov_ops_load(prm->oplists, &ops) : PS_OK;
    ctx_t c = {t, prm, ops};
    split_t s = {NULL, NULL, NULL, 0, 0, 0};
    acc_t all = {{0}, {0}};
    if (rc == PS_OK)
        rc = split_init(&s, t->n);
    if (rc == PS_OK && prm->floors)
        rc = proto_floor(&c, p, &s, out);
    if (rc == PS_OK && prm->floors != 2) {
        switch (p) {
        case PSI_OVP_RANDOM: rc = proto_random(&c, &s, &all, out); break;
        case PSI_OVP_LEAVE_PAIR: rc = proto_leave_pair(&c, &s, &all, out); break;
        case PSI_OVP_LEAVE_MODEL: rc = proto_leave_model(&c, &s, &all, out); break;
        default: rc = proto_transfer(&c, p == PSI_OVP_MIG, &s, &all, out); break;
        }
    }
    for (int m = 0; rc == PS_OK && m < PSI_OVM_N; m++) {
        out->n[m] = all.n[m];
        out->mape[m] = all.n[m] ? 100.0 * all.err[m] / (double)all.n[m] : NAN;
    }
    split_free(&s);
    psi_ov_ops_free(ops);
    return rc;
}
