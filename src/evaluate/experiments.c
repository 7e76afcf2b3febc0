/* The four experiments of the paper's Section IV on one campaign. See
 * experiments.h for what each measures and docs/evaluation.md for how. */
#include "evaluate/experiments.h"

#include "common/common.h"

#include <ctype.h>
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define QUERY_BATCH 1000
#define QUERY_REPEATS 3

static const char *const gen_group_names[PS_GEN_GROUPS] = {"llama", "batch16", "batch64"};
static const char *const ablation_names[PS_ABL_ROWS] = {"full", "no_corunner", "summed", "durations", "utilization"};
static const char *const long_names[PS_LONG_ROWS] = {"pairsight_index", "pairsight_overlap", "intensity_rule"};

int psi_experiments_parse(const char *list, int *mask)
{
    static const struct {
        const char *name;
        int bit;
    } names[] = {{"accuracy", PS_EXP_ACCURACY},
                 {"ablation", PS_EXP_ABLATION},
                 {"generalization", PS_EXP_GENERALIZATION},
                 {"long", PS_EXP_LONG},
                 {"all", PS_EXP_ALL}};
    *mask = 0;
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        int found = 0;
        for (size_t i = 0; i < PS_ARRAY_LEN(names); i++)
            if (strlen(names[i].name) == len && strncmp(p, names[i].name, len) == 0) {
                *mask |= names[i].bit;
                found = 1;
            }
        if (!found)
            return psi_error(PS_E_ARG, "unknown experiment '%.*s' (accuracy, ablation, generalization, long, all)",
                             (int)len, p);
        p += len;
        if (*p == ',')
            p++;
    }
    if (!*mask)
        return psi_error(PS_E_ARG, "no experiment selected");
    return 0;
}

psi_eval_config_t psi_eval_default_params(void)
{
    psi_eval_config_t d, *c = &d;
    memset(c, 0, sizeof *c);
    c->experiments = PS_EXP_ACCURACY;
    c->seed = 1;
    c->ks[0] = 10;
    c->ks[1] = 50;
    c->ks[2] = 100;
    c->bp = ps_baseline_default_params();
    return d;
}

static void row_init(psi_eval_row_t *r, const char *name)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->hp_mape = r->lp_mape = r->hp_within10 = r->llama_hp_mape = NAN;
    r->train_seconds = r->query_us = NAN;
}

void psi_eval_results_clear(psi_eval_results_t *r)
{
    free(r->meas_hp);
    free(r->meas_lp);
    free(r->test_q);
    for (int m = 0; m < PS_METHOD_COUNT; m++) {
        free(r->pred_hp[m]);
        free(r->pred_lp[m]);
    }
    memset(r, 0, sizeof *r);
}

static void results_init(psi_eval_results_t *r, const psi_eval_config_t *c)
{
    memset(r, 0, sizeof *r);
    for (int m = 0; m < PS_METHOD_COUNT; m++)
        row_init(&r->table1[m], ps_method_name((ps_method_t)m));
    for (int a = 0; a < PS_ABL_ROWS; a++)
        row_init(&r->ablation[a], ablation_names[a]);
    for (int m = 0; m < PS_GEN_ROWS; m++)
        for (int g = 0; g < PS_GEN_GROUPS; g++) {
            char name[40];
            if (m < PS_METHOD_COUNT)
                snprintf(name, sizeof name, "%s", ps_method_name((ps_method_t)m));
            else
                snprintf(name, sizeof name, "pairsight_k%d", c->ks[m - PS_METHOD_COUNT]);
            row_init(&r->gen[m][g], name);
        }
    for (int i = 0; i < PS_LONG_ROWS; i++) {
        row_init(&r->long_all[i], long_names[i]);
        row_init(&r->long_asym[i], long_names[i]);
    }
    memcpy(r->ks, c->ks, sizeof r->ks);
    r->model_train_seconds = NAN;
}

static void progress(const psi_eval_config_t *c, const char *stage, double done, double total)
{
    if (c->progress)
        c->progress(stage, done, total, c->progress_user);
}

/* ---- predictors behind one call ---- */

typedef struct {
    const ps_model_t *model; /* PairSight when non-NULL */
    ps_compose_t compose;
    const ps_baseline_t *base;
} predictor_t;

/* A set of test rows as queries and measurements. */
typedef struct {
    size_t n;
    ps_query_t *q;
    double *hp, *lp;
} testset_t;

/* One pass over n queries in batches of QUERY_BATCH. */
static int predict_pass(const predictor_t *p, const ps_ops_t *ops, const ps_query_t *q, size_t n, double *hp,
                        double *lp)
{
    for (size_t off = 0; off < n; off += QUERY_BATCH) {
        size_t b = n - off < QUERY_BATCH ? n - off : QUERY_BATCH;
        int rc = p->model
                     ? ps_model_predict_compose(p->model, ops, q + off, b, p->compose, hp + off, lp + off, NULL, NULL)
                     : ps_baseline_predict(p->base, ops, q + off, b, hp + off, lp + off);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Predict n queries in batches of QUERY_BATCH; *seconds gets the wall time
 * of the steady state: one batch runs first untimed, so that one-time costs
 * (thread pools, lazily built tables) are not charged to every query. Timed
 * runs use one thread whatever the method (PairSight's prediction would take
 * every OpenMP thread, the baselines one), so that query times compare the
 * same work on the same resources. */
static int predict_all(const predictor_t *p, const ps_ops_t *ops, const testset_t *t, double *hp, double *lp,
                       double *seconds)
{
    const ps_query_t *q = t->q;
    size_t n = t->n;
    if (!seconds)
        return predict_pass(p, ops, q, n, hp, lp);
#ifdef _OPENMP
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
#endif
    int rc = predict_pass(p, ops, q, n < QUERY_BATCH ? n : QUERY_BATCH, hp, lp);
    /* On a shared machine one pass can be slowed by others' work: the
     * fastest of QUERY_REPEATS passes is the figure. */
    double best = INFINITY;
    for (int rep = 0; rc == 0 && rep < QUERY_REPEATS; rep++) {
        double t0 = psi_now();
        rc = predict_pass(p, ops, q, n, hp, lp);
        double t = psi_now() - t0;
        if (t < best)
            best = t;
    }
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    *seconds = best;
    return rc;
}

static int contains_llama(const char *s)
{
    static const char pat[] = "llama";
    for (; *s; s++) {
        size_t k = 0;
        while (pat[k] && tolower((unsigned char)s[k]) == pat[k])
            k++;
        if (!pat[k])
            return 1;
    }
    return 0;
}

static int query_is_llama(const ps_query_t *q) { return contains_llama(q->hp_model) || contains_llama(q->lp_model); }

/* Fill the accuracy fields of row from the predictions hp[n], lp[n] of the
 * n rows of t. */
static void score(psi_eval_row_t *row, const testset_t *t, const double *hp, const double *lp)
{
    const ps_query_t *q = t->q;
    const double *meas_hp = t->hp, *meas_lp = t->lp;
    size_t n = t->n;
    row->n = n;
    if (n == 0)
        return;
    row->hp_mape = psi_mape(hp, meas_hp, n);
    row->lp_mape = psi_mape(lp, meas_lp, n);
    row->hp_within10 = psi_within(hp, meas_hp, n, 0.10);
    double s = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (query_is_llama(&q[i])) {
            s += psi_ape(hp[i], meas_hp[i]);
            k++;
        }
    row->n_llama = k;
    row->llama_hp_mape = k ? s / (double)k : NAN;
}

static void testset_free(testset_t *t)
{
    free(t->q);
    free(t->hp);
    free(t->lp);
    memset(t, 0, sizeof *t);
}

static int testset_alloc(testset_t *t, size_t n)
{
    memset(t, 0, sizeof *t);
    t->q = psi_malloc((n ? n : 1) * sizeof *t->q);
    t->hp = psi_malloc((n ? n : 1) * sizeof *t->hp);
    t->lp = psi_malloc((n ? n : 1) * sizeof *t->lp);
    if (!t->q || !t->hp || !t->lp) {
        testset_free(t);
        return PS_E_NOMEM;
    }
    return 0;
}

static void testset_add(testset_t *t, const psi_coexec_row_t *r)
{
    t->q[t->n] = psi_query_of_row(r);
    t->hp[t->n] = r->hp_ns;
    t->lp[t->n] = r->lp_ns;
    t->n++;
}

/* Evaluate predictor p on t into row; keep the predictions when keep_hp is
 * non-NULL (ownership passes to the caller). A failure is returned. */
static int eval_on(const predictor_t *p, const ps_ops_t *ops, const testset_t *t, psi_eval_row_t *row, double **keep_hp,
                   double **keep_lp)
{
    double *hp = psi_malloc((t->n ? t->n : 1) * sizeof *hp), *lp = psi_malloc((t->n ? t->n : 1) * sizeof *lp);
    if (!hp || !lp) {
        free(hp);
        free(lp);
        return PS_E_NOMEM;
    }
    double secs = 0;
    int rc = predict_all(p, ops, t, hp, lp, &secs);
    if (rc == 0) {
        score(row, t, hp, lp);
        row->query_us = t->n ? 1e6 * secs / (double)t->n : NAN;
    }
    if (rc == 0 && keep_hp) {
        *keep_hp = hp;
        *keep_lp = lp;
    } else {
        free(hp);
        free(lp);
    }
    return rc;
}

/* ---- helpers on tables ---- */

static int subset(const ps_coexec_t *cx, const unsigned char *take, ps_coexec_t **out)
{
    ps_coexec_t *t = ps_coexec_new();
    if (!t)
        return PS_E_NOMEM;
    for (size_t i = 0; i < cx->n; i++) {
        if (!take[i])
            continue;
        int rc = ps_coexec_append(t, &cx->rows[i]);
        if (rc != 0) {
            ps_coexec_free(t);
            return rc;
        }
    }
    *out = t;
    return 0;
}

static ps_train_params_t train_params(const psi_eval_config_t *c, ps_feature_variant_t variant)
{
    ps_train_params_t tp = ps_train_default_params();
    tp.variant = variant;
    tp.seed = c->seed;
    tp.nthread = c->nthread;
    if (c->max_rounds > 0)
        tp.max_rounds = c->max_rounds;
    if (c->n_depths > 0) {
        tp.n_depths = c->n_depths;
        memcpy(tp.depths, c->depths, sizeof tp.depths);
    }
    if (c->n_etas > 0) {
        tp.n_etas = c->n_etas;
        memcpy(tp.etas, c->etas, sizeof tp.etas);
    }
    return tp;
}

typedef struct {
    const psi_eval_config_t *c;
    const char *stage;
} train_progress_t;

static void forward_progress(const char *stage, double done, double total, void *user)
{
    const train_progress_t *tp = user;
    (void)stage;
    progress(tp->c, tp->stage, done, total);
}

static int train_model(const psi_eval_config_t *c, const ps_coexec_t *cx, ps_feature_variant_t variant,
                       const char *stage, ps_model_t **out, double *seconds)
{
    ps_train_params_t tp = train_params(c, variant);
    train_progress_t up = {c, stage};
    if (c->progress) {
        tp.progress = forward_progress;
        tp.progress_user = &up;
    }
    double t0 = psi_now();
    int rc = ps_model_train(c->ops, cx, &tp, out);
    if (seconds)
        *seconds = psi_now() - t0;
    if (rc != 0)
        psi_error_prefix(rc, stage);
    return rc;
}

/* ---- experiment 1: accuracy and cost (Table I) ---- */

typedef struct {
    const psi_eval_config_t *c;
    psi_eval_results_t *r;
    const ps_coexec_t *train_src; /* what models and baselines train on */
    unsigned char *train_split;   /* [train_src->n] */
    psi_dataset_t *dtrain;        /* FULL layout, split by seed */
    testset_t test;
    const ps_model_t *model;
    ps_model_t *own_model;
    ps_baseline_t *base[PS_METHOD_COUNT];
} run_t;

static void run_free(run_t *u)
{
    free(u->train_split);
    psi_dataset_free(u->dtrain);
    testset_free(&u->test);
    ps_model_free(u->own_model);
    for (int m = 0; m < PS_METHOD_COUNT; m++)
        ps_baseline_free(u->base[m]);
}

static int run_prepare(run_t *u)
{
    const psi_eval_config_t *c = u->c;
    u->train_src = c->train_cx ? c->train_cx : c->cx;
    psi_feature_layout_t l;
    int rc = psi_features_layout(PS_FEAT_FULL, PS_WINDOW, &l);
    if (rc != 0)
        return rc;
    progress(c, "features", 0, 1);
    if ((rc = psi_dataset_build(&l, c->ops, u->train_src, c->seed, &u->dtrain)) != 0)
        return rc;
    u->train_split = psi_malloc(u->train_src->n ? u->train_src->n : 1);
    if (!u->train_split)
        return PS_E_NOMEM;
    if ((rc = ps_coexec_split(u->train_src, c->seed, u->train_split)) != 0)
        return rc;
    /* The test rows: the test split of the campaign, or all of cx when the
     * training data came from elsewhere. Rows beyond the window belong to
     * experiment 4, not here. */
    if ((rc = testset_alloc(&u->test, c->cx->n)) != 0)
        return rc;
    for (size_t i = 0; i < c->cx->n; i++) {
        const psi_coexec_row_t *row = &c->cx->rows[i];
        if (row->hp_len > PS_WINDOW || row->lp_len > PS_WINDOW)
            continue;
        if (!c->train_cx && u->train_split[i] != PS_SPLIT_TEST)
            continue;
        testset_add(&u->test, row);
    }
    if (u->test.n == 0)
        return psi_error(PS_E_INPUT, "no test co-executions of at most %d operators per side", PS_WINDOW);
    for (size_t i = 0; i < u->dtrain->n; i++)
        u->r->n_train += u->dtrain->split[i] == PS_SPLIT_TRAIN;
    progress(c, "features", 1, 1);
    return 0;
}

/* PS_E_MISMATCH naming the first row of cx measured on another GPU than
 * the model's, so that a model of one GPU is refused before any prediction
 * (what names the table: "coexec", "long coexec"). */
static int check_model_gpu(const char *model_gpu, const ps_coexec_t *cx, const char *what)
{
    for (size_t i = 0; cx && i < cx->n; i++)
        if (strcmp(cx->rows[i].gpu, model_gpu) != 0)
            return psi_error(PS_E_MISMATCH, "the model is for GPU '%s' but %s row %zu (experiment %s) is on '%s'",
                             model_gpu, what, i + 1, cx->rows[i].experiment, cx->rows[i].gpu);
    return 0;
}

/* PS_E_MISMATCH unless the model was split from the campaign eval splits,
 * with the same seed: otherwise its training rows would be scored as test
 * rows (a seed of 2 on a model split with 1 scored 0.5% instead of 4.9%). */
static int check_model_split(const ps_model_info_t *info, const psi_eval_config_t *c, const ps_coexec_t *src)
{
    if (!info->split_fingerprint)
        return psi_error(PS_E_MISMATCH, "the model does not record the experiment split it was trained on "
                                        "(an older model file): retrain it, or evaluate without a model");
    if (info->seed != c->seed)
        return psi_error(PS_E_MISMATCH,
                         "the model was split with seed %llu but eval splits with seed %llu, so the model would "
                         "be scored on its own training rows: use seed %llu",
                         (unsigned long long)info->seed, (unsigned long long)c->seed, (unsigned long long)info->seed);
    uint64_t f;
    int rc = psi_coexec_fingerprint(src, info->window, &f);
    if (rc != 0)
        return rc;
    if (f != info->split_fingerprint)
        return psi_error(PS_E_MISMATCH,
                         "the model was trained on another set of experiments than the %s given to eval, so its "
                         "test split is not this one's: evaluate it on the campaign it was trained on",
                         c->train_cx ? "--train table" : "coexec table");
    return 0;
}

static int run_model(run_t *u)
{
    if (u->c->model) {
        u->model = u->c->model;
        ps_model_info_t info;
        int rc = ps_model_info(u->model, &info);
        if (rc != 0)
            return rc;
        u->r->model_train_seconds = info.train_seconds;
        if ((rc = check_model_gpu(info.gpu, u->c->cx, "coexec")) != 0 ||
            (rc = check_model_gpu(info.gpu, u->c->long_cx, "long coexec")) != 0 ||
            (rc = check_model_split(&info, u->c, u->train_src)) != 0)
            return rc;
        return 0;
    }
    int rc =
        train_model(u->c, u->train_src, PS_FEAT_FULL, "train pairsight", &u->own_model, &u->r->model_train_seconds);
    u->model = u->own_model;
    return rc;
}

static int run_baselines(run_t *u)
{
    for (int m = PS_METHOD_INTENSITY_RULE; m < PS_METHOD_COUNT; m++) {
        progress(u->c, "train baselines", m - 1, PS_METHOD_COUNT - 1);
        int rc = psi_baseline_fit((ps_method_t)m, u->c->ops, u->dtrain, NULL, &u->c->bp, &u->base[m]);
        if (rc == PS_E_NOMEM)
            return rc;
        if (rc != 0)
            psi_log(PS_LOG_WARN, "baseline %s not trained: %s", ps_method_name((ps_method_t)m), ps_last_error());
    }
    progress(u->c, "train baselines", PS_METHOD_COUNT - 1, PS_METHOD_COUNT - 1);
    return 0;
}

/* Coverage of the calibrated bounds of model on t into row[PS_COV_LEVELS];
 * a model without calibration leaves the rows empty. */
static int coverage_rows(const ps_model_t *model, const ps_ops_t *ops, const testset_t *t, bound_cov_t *row)
{
    static const double levels[PS_COV_LEVELS] = {0.90, 0.95, 0.99};
    for (int k = 0; k < PS_COV_LEVELS; k++) {
        int rc = psi_bound_coverage(model, ops, &(psi_measured_t){t->q, t->hp, t->lp, t->n}, levels[k], &row[k]);
        if (rc != 0)
            return psi_error_prefix(rc, "bounds");
    }
    return 0;
}

static int exp_accuracy(run_t *u)
{
    psi_eval_results_t *r = u->r;
    r->n_test = u->test.n;
    r->meas_hp = psi_malloc(u->test.n * sizeof *r->meas_hp);
    r->meas_lp = psi_malloc(u->test.n * sizeof *r->meas_lp);
    if (!r->meas_hp || !r->meas_lp)
        return PS_E_NOMEM;
    memcpy(r->meas_hp, u->test.hp, u->test.n * sizeof *r->meas_hp);
    memcpy(r->meas_lp, u->test.lp, u->test.n * sizeof *r->meas_lp);
    if (!(r->test_q = psi_malloc((u->test.n ? u->test.n : 1) * sizeof *r->test_q)))
        return PS_E_NOMEM;
    memcpy(r->test_q, u->test.q, u->test.n * sizeof *r->test_q);
    for (int m = 0; m < PS_METHOD_COUNT; m++) {
        progress(u->c, "accuracy", m, PS_METHOD_COUNT);
        predictor_t p = {
            .model = m == PS_METHOD_PAIRSIGHT ? u->model : NULL, .compose = PS_COMPOSE_OVERLAP, .base = u->base[m]};
        if (!p.model && !p.base)
            continue;
        int rc = eval_on(&p, u->c->ops, &u->test, &r->table1[m], &r->pred_hp[m], &r->pred_lp[m]);
        if (rc != 0) {
            if (m == PS_METHOD_PAIRSIGHT || rc == PS_E_NOMEM)
                return psi_error_prefix(rc, "pairsight model");
            psi_log(PS_LOG_WARN, "%s: %s", ps_method_name((ps_method_t)m), ps_last_error());
            continue;
        }
        r->table1[m].train_seconds =
            m == PS_METHOD_PAIRSIGHT ? r->model_train_seconds : psi_baseline_train_seconds(u->base[m]);
    }
    progress(u->c, "accuracy", PS_METHOD_COUNT, PS_METHOD_COUNT);
    int rc = coverage_rows(u->model, u->c->ops, &u->test, r->cov[0]);
    if (rc != 0)
        return rc;
    r->done |= PS_EXP_ACCURACY;
    return 0;
}

/* ---- experiment 2: ablation (Fig. 4) ---- */

static int exp_ablation(run_t *u)
{
    psi_eval_results_t *r = u->r;
    predictor_t full = {.model = u->model, .compose = PS_COMPOSE_OVERLAP};
    int rc = eval_on(&full, u->c->ops, &u->test, &r->ablation[0], NULL, NULL);
    if (rc != 0)
        return rc;
    r->ablation[0].train_seconds = r->model_train_seconds;
    for (int a = 1; a < PS_ABL_ROWS; a++) {
        char stage[64];
        snprintf(stage, sizeof stage, "ablation %s", ablation_names[a]);
        ps_model_t *m = NULL;
        double secs = 0;
        if ((rc = train_model(u->c, u->train_src, (ps_feature_variant_t)a, stage, &m, &secs)) != 0)
            return rc;
        predictor_t p = {.model = m, .compose = PS_COMPOSE_OVERLAP};
        rc = eval_on(&p, u->c->ops, &u->test, &r->ablation[a], NULL, NULL);
        r->ablation[a].train_seconds = secs;
        ps_model_free(m);
        if (rc != 0)
            return psi_error_prefix(rc, stage);
    }
    r->done |= PS_EXP_ABLATION;
    return 0;
}

/* ---- experiment 3: generalization (Table II) ---- */

/* Held-out group of a row: 0 Llama on either side, 1 batch 16, 2 batch 64 on
 * either side, -1 the classic models at default batch sizes (training). */
static int gen_group(const psi_coexec_row_t *r)
{
    if (contains_llama(r->hp_model) || contains_llama(r->lp_model))
        return 0;
    if (r->hp_batch == 16 || r->lp_batch == 16)
        return 1;
    if (r->hp_batch == 64 || r->lp_batch == 64)
        return 2;
    return -1;
}

typedef struct {
    uint64_t h;
    const char *name; /* interned: equal names have equal pointers */
} exp_key_t;

static int cmp_exp_key(const void *a, const void *b)
{
    const exp_key_t *x = a, *y = b;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The adaptation pool of group g: rank of each experiment of the group by a
 * seeded hash; the first `pool` experiments adapt, the rest test. rank[i] is
 * the rank of row i's experiment (or -1 outside the group). */
static int group_ranks(const ps_coexec_t *cx, int g, uint64_t seed, long *rank, size_t *n_exp)
{
    exp_key_t *keys = psi_malloc((cx->n ? cx->n : 1) * sizeof *keys);
    if (!keys)
        return PS_E_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < cx->n; i++)
        if (gen_group(&cx->rows[i]) == g && cx->rows[i].hp_len <= PS_WINDOW && cx->rows[i].lp_len <= PS_WINDOW)
            keys[k++] = (exp_key_t){psi_experiment_hash(cx->rows[i].experiment, seed), cx->rows[i].experiment};
    qsort(keys, k, sizeof *keys, cmp_exp_key);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || strcmp(keys[u - 1].name, keys[i].name) != 0)
            keys[u++] = keys[i];
    for (size_t i = 0; i < cx->n; i++) {
        rank[i] = -1;
        const psi_coexec_row_t *r = &cx->rows[i];
        if (gen_group(r) != g || r->hp_len > PS_WINDOW || r->lp_len > PS_WINDOW)
            continue;
        exp_key_t key = {psi_experiment_hash(r->experiment, seed), r->experiment};
        exp_key_t *hit = bsearch(&key, keys, u, sizeof *keys, cmp_exp_key);
        rank[i] = hit ? (long)(hit - keys) : -1;
    }
    *n_exp = u;
    free(keys);
    return 0;
}

/* Table II's method rows for held-out group g: every method trained on the
 * classic models, scored on the group's test rows t. */
static void score_methods(run_t *u, const ps_model_t *model, ps_baseline_t *const *base, int g, const testset_t *t)
{
    for (int m = 0; m < PS_METHOD_COUNT; m++) {
        predictor_t p = {
            .model = m == PS_METHOD_PAIRSIGHT ? model : NULL, .compose = PS_COMPOSE_OVERLAP, .base = base[m]};
        if (!p.model && !p.base)
            continue;
        if (eval_on(&p, u->c->ops, t, &u->r->gen[m][g], NULL, NULL) != 0)
            psi_log(PS_LOG_WARN, "generalization %s: %s: %s", gen_group_names[g], ps_method_name((ps_method_t)m),
                    ps_last_error());
    }
}

/* A held-out group g of Table II: the rank of each training row's
 * experiment within the group (-1: another group), the pool of ranks the
 * model may adapt on, and the test rows t (ranks from pool on). */
typedef struct {
    int g;
    const long *rank;
    long pool;
    testset_t t;
} heldout_t;

/* Table II's row "PairSight after k = ks[k]": the model adapted on the first
 * min(ks[k], pool) experiments of group h->g by rank, scored on h->t. take
 * is the caller's scratch of one flag per row. A failed adaptation leaves the
 * row unmeasured with a warning. */
static int adapt_and_score(run_t *u, const ps_model_t *model, const heldout_t *h, int k, unsigned char *take)
{
    const psi_eval_config_t *c = u->c;
    const long *rank = h->rank, pool = h->pool;
    const testset_t *t = &h->t;
    int g = h->g;
    const ps_coexec_t *cx = u->train_src;
    char stage[64];
    snprintf(stage, sizeof stage, "generalization: adapt %s k=%d", gen_group_names[g], c->ks[k]);
    progress(c, stage, 0, 1);
    long kk = c->ks[k] < pool ? c->ks[k] : pool;
    for (size_t i = 0; i < cx->n; i++)
        take[i] = rank[i] >= 0 && rank[i] < kk;
    ps_coexec_t *few = NULL;
    ps_model_t *adapted = NULL;
    int rc = subset(cx, take, &few);
    if (rc != 0)
        return rc;
    ps_train_params_t tp = train_params(c, PS_FEAT_FULL);
    double t0 = psi_now();
    rc = few->n ? ps_model_adapt(model, c->ops, few, &tp, &adapted)
                : psi_error(PS_E_INPUT, "no experiments to adapt on");
    double secs = psi_now() - t0;
    ps_coexec_free(few);
    if (rc != 0) {
        psi_log(PS_LOG_WARN, "%s: %s", stage, ps_last_error());
        return 0;
    }
    predictor_t p = {.model = adapted, .compose = PS_COMPOSE_OVERLAP};
    psi_eval_row_t *row = &u->r->gen[PS_METHOD_COUNT + k][g];
    rc = eval_on(&p, c->ops, t, row, NULL, NULL);
    row->train_seconds = secs;
    ps_model_free(adapted);
    return rc;
}

static int exp_generalization(run_t *u)
{
    const psi_eval_config_t *c = u->c;
    psi_eval_results_t *r = u->r;
    const ps_coexec_t *cx = u->train_src;
    size_t n = cx->n;
    unsigned char *take = psi_malloc(n ? n : 1);
    long *rank = psi_malloc((n ? n : 1) * sizeof *rank);
    ps_coexec_t *classic = NULL;
    ps_model_t *model = NULL;
    psi_dataset_t *d = NULL;
    ps_baseline_t *base[PS_METHOD_COUNT] = {0};
    heldout_t h = {.rank = rank};
    int rc = PS_E_NOMEM;
    if (!take || !rank)
        goto done;
    for (size_t i = 0; i < n; i++)
        take[i] = gen_group(&cx->rows[i]) < 0;
    if ((rc = subset(cx, take, &classic)) != 0)
        goto done;
    if (classic->n == 0) {
        rc = psi_error(PS_E_INPUT, "generalization: no co-executions of the classic models at default batch sizes");
        goto done;
    }
    if ((rc = train_model(c, classic, PS_FEAT_FULL, "generalization: train", &model, NULL)) != 0)
        goto done;
    psi_feature_layout_t l;
    if ((rc = psi_features_layout(PS_FEAT_FULL, PS_WINDOW, &l)) != 0 ||
        (rc = psi_dataset_build(&l, c->ops, classic, c->seed, &d)) != 0)
        goto done;
    for (int m = PS_METHOD_INTENSITY_RULE; m < PS_METHOD_COUNT; m++) {
        progress(c, "generalization: baselines", m - 1, PS_METHOD_COUNT - 1);
        if (psi_baseline_fit((ps_method_t)m, c->ops, d, NULL, &c->bp, &base[m]) != 0)
            psi_log(PS_LOG_WARN, "generalization: %s: %s", ps_method_name((ps_method_t)m), ps_last_error());
    }
    int kmax = 0;
    for (int k = 0; k < 3; k++)
        if (c->ks[k] > kmax)
            kmax = c->ks[k];
    for (int g = 0; g < PS_GEN_GROUPS; g++) {
        size_t n_exp = 0;
        if ((rc = group_ranks(cx, g, c->seed, rank, &n_exp)) != 0)
            goto done;
        if (n_exp < 2)
            continue;
        /* Keep at least half of a small group for testing. */
        h.g = g;
        h.pool = kmax < (long)(n_exp / 2) ? kmax : (long)(n_exp / 2);
        testset_free(&h.t);
        if ((rc = testset_alloc(&h.t, n)) != 0)
            goto done;
        for (size_t i = 0; i < n; i++)
            if (rank[i] >= h.pool)
                testset_add(&h.t, &cx->rows[i]);
        score_methods(u, model, base, g, &h.t);
        if (g == 0 && (rc = coverage_rows(model, c->ops, &h.t, r->cov[2])) != 0)
            goto done;
        for (int k = 0; k < 3; k++)
            if ((rc = adapt_and_score(u, model, &h, k, take)) != 0)
                goto done;
    }
    r->done |= PS_EXP_GENERALIZATION;
    rc = 0;
done:
    free(take);
    free(rank);
    ps_coexec_free(classic);
    ps_model_free(model);
    psi_dataset_free(d);
    for (int m = 0; m < PS_METHOD_COUNT; m++)
        ps_baseline_free(base[m]);
    testset_free(&h.t);
    return rc;
}

/* ---- experiment 4: long segments ---- */

/* Asymmetric: the side with fewer windows runs longer alone (standalone
 * latencies at the row's TPCs, known before co-execution; never the measured
 * outcome, which would choose the subset by the answer), so the windows that
 * index pairing puts together do not coincide in time. */
static int is_asymmetric(const psi_coexec_row_t *r, int window, double hp_solo_ns, double lp_solo_ns)
{
    int wh = (r->hp_len + window - 1) / window, wl = (r->lp_len + window - 1) / window;
    if (wh == wl)
        return 0;
    return wh < wl ? hp_solo_ns > lp_solo_ns : lp_solo_ns > hp_solo_ns;
}

/* Standalone latencies of both sides of every row of lx (sol[2 * i] HP,
 * sol[2 * i + 1] LP), as the model's composition sums them. */
static int long_solo(const ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *lx, double *sol)
{
    size_t n = lx->n;
    ps_query_t *q = psi_malloc((n ? n : 1) * sizeof *q);
    double *tmp = psi_malloc((n ? n : 1) * 4 * sizeof *tmp);
    int rc = q && tmp ? 0 : PS_E_NOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++)
        q[i] = psi_query_of_row(&lx->rows[i]);
    if (rc == 0)
        rc = ps_model_predict_compose(m, ops, q, n, PS_COMPOSE_INDEX, tmp, tmp + n, tmp + 2 * n, tmp + 3 * n);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        sol[2 * i] = tmp[2 * n + i];
        sol[2 * i + 1] = tmp[3 * n + i];
    }
    free(q);
    free(tmp);
    return rc;
}

static int exp_long(run_t *u)
{
    const ps_coexec_t *lx = u->c->long_cx;
    const ps_ops_t *lops = u->c->long_ops ? u->c->long_ops : u->c->ops;
    psi_eval_results_t *r = u->r;
    ps_model_info_t info;
    int rc = ps_model_info(u->model, &info);
    if (rc != 0)
        return rc;
    testset_t all = {0}, asym = {0};
    double *sol = psi_malloc((lx->n ? lx->n : 1) * 2 * sizeof *sol);
    if (!sol) {
        rc = PS_E_NOMEM;
        goto done;
    }
    if ((rc = testset_alloc(&all, lx->n)) != 0 || (rc = testset_alloc(&asym, lx->n)) != 0 ||
        (rc = long_solo(u->model, lops, lx, sol)) != 0)
        goto done;
    for (size_t i = 0; i < lx->n; i++) {
        testset_add(&all, &lx->rows[i]);
        if (is_asymmetric(&lx->rows[i], info.window, sol[2 * i], sol[2 * i + 1]))
            testset_add(&asym, &lx->rows[i]);
    }
    if (!u->base[PS_METHOD_INTENSITY_RULE] &&
        (rc = psi_baseline_fit(PS_METHOD_INTENSITY_RULE, u->c->ops, u->dtrain, NULL, &u->c->bp,
                               &u->base[PS_METHOD_INTENSITY_RULE])) != 0)
        goto done;
    predictor_t p[PS_LONG_ROWS] = {{.model = u->model, .compose = PS_COMPOSE_INDEX},
                                   {.model = u->model, .compose = PS_COMPOSE_OVERLAP},
                                   {.base = u->base[PS_METHOD_INTENSITY_RULE]}};
    for (int i = 0; i < PS_LONG_ROWS; i++) {
        progress(u->c, "long segments", i, PS_LONG_ROWS);
        if ((rc = eval_on(&p[i], lops, &all, &r->long_all[i], NULL, NULL)) != 0 ||
            (asym.n && (rc = eval_on(&p[i], lops, &asym, &r->long_asym[i], NULL, NULL)) != 0))
            goto done;
    }
    if ((rc = coverage_rows(u->model, lops, &all, r->cov[1])) != 0)
        goto done;
    r->done |= PS_EXP_LONG;
done:
    free(sol);
    testset_free(&all);
    testset_free(&asym);
    if (rc != 0)
        psi_error_prefix(rc, "long segments");
    return rc;
}

int psi_eval_run(const psi_eval_config_t *c, psi_eval_results_t *r)
{
    results_init(r, c);
    if (!c->ops || !c->cx)
        return psi_error(PS_E_ARG, "eval: no ops or coexec table");
    if ((c->experiments & PS_EXP_LONG) && !c->long_cx)
        return psi_error(PS_E_ARG, "eval: the long-segment experiment needs a table of long co-executions");
    run_t u = {.c = c, .r = r};
    int rc;
    if ((rc = run_prepare(&u)) != 0 || (rc = run_model(&u)) != 0)
        goto done;
    if ((c->experiments & PS_EXP_ACCURACY) && ((rc = run_baselines(&u)) != 0 || (rc = exp_accuracy(&u)) != 0))
        goto done;
    if ((c->experiments & PS_EXP_ABLATION) && (rc = exp_ablation(&u)) != 0)
        goto done;
    if ((c->experiments & PS_EXP_GENERALIZATION) && (rc = exp_generalization(&u)) != 0)
        goto done;
    if ((c->experiments & PS_EXP_LONG) && (rc = exp_long(&u)) != 0)
        goto done;
done:
    run_free(&u);
    return rc;
}
