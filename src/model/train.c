/*
 * Training and continued training of the segment model (PairSight Sec. III):
 * two XGBoost regressors on log delta, `hist` trees, early stopping on the
 * validation split, max_depth and learning rate chosen on validation MAPE.
 */
#include "model/model.h"

#include "common/common.h"
#include "model/calib.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Rows of the training split handed to XGBoost per callback. */
#define FEED_ROWS 16384

ps_train_params_t ps_train_default_params(void)
{
    ps_train_params_t p;
    memset(&p, 0, sizeof p);
    p.variant = PS_FEAT_FULL;
    p.window = PS_WINDOW;
    p.seed = 1;
    p.nthread = 0;
    p.max_rounds = 400;
    p.early_stopping = 20;
    p.n_depths = 2;
    p.depths[0] = 6;
    p.depths[1] = 8;
    p.n_etas = 2;
    p.etas[0] = 0.1;
    p.etas[1] = 0.3;
    p.subsample = 1.0;
    p.grid_rows = 60000;
    p.adapt_rounds = 30;
    p.adapt_eta = 0.05;
    p.adapt_depth = 0;
    return p;
}

/* Trees per regressor: far beyond what early stopping lets a model grow to,
 * small enough that a typo does not run for days. */
#define MAX_ROUNDS 100000

static int check_params(const ps_train_params_t *p)
{
    if (p->max_rounds < 1 || p->early_stopping < 1)
        return psi_error(PS_E_ARG, "max_rounds and early_stopping must be >= 1");
    if (p->n_depths < 1 || p->n_depths > 4 || p->n_etas < 1 || p->n_etas > 4)
        return psi_error(PS_E_ARG, "the depth and learning-rate grids need 1 to 4 values each");
    for (int i = 0; i < p->n_depths; i++)
        if (p->depths[i] < 1 || p->depths[i] > 20)
            return psi_error(PS_E_ARG, "max_depth %d is outside 1..20", p->depths[i]);
    for (int i = 0; i < p->n_etas; i++)
        if (!(p->etas[i] > 0 && p->etas[i] <= 1))
            return psi_error(PS_E_ARG, "learning rate %g is outside (0, 1]", p->etas[i]);
    if (p->grid_rows < 0)
        return psi_error(PS_E_ARG, "grid_rows %d is negative", p->grid_rows);
    if (!(p->subsample > 0 && p->subsample <= 1))
        return psi_error(PS_E_ARG, "subsample %g is outside (0, 1]", p->subsample);
    if (p->adapt_rounds < 1 || !(p->adapt_eta > 0 && p->adapt_eta <= 1) || p->adapt_depth < 0 || p->adapt_depth > 20)
        return psi_error(PS_E_ARG, "adapt_rounds must be >= 1, adapt_eta in (0, 1], adapt_depth in 0..20");
    if (p->max_rounds > MAX_ROUNDS || p->early_stopping > MAX_ROUNDS || p->adapt_rounds > MAX_ROUNDS)
        return psi_error(PS_E_ARG, "max_rounds, early_stopping and adapt_rounds must be <= %d", MAX_ROUNDS);
    if (psi_thread_check("nthread", p->nthread) != PS_OK)
        return PS_E_ARG;
    return PS_OK;
}

/* Rows of one split gathered into contiguous arrays. */
typedef struct {
    size_t n;
    float *x[2];
    float *y[2];
    double *solo[2], *measured[2];
} subset_t;

static void subset_free(subset_t *s)
{
    for (int k = 0; k < 2; k++) {
        free(s->x[k]);
        free(s->y[k]);
        free(s->solo[k]);
        free(s->measured[k]);
    }
    memset(s, 0, sizeof *s);
}

/* which < 0 takes every row. Features come from psi_dataset_features (a lean
 * data set builds them again from ops). */
static int subset_make(const psi_dataset_t *d, const ps_ops_t *ops, int which, subset_t *s)
{
    size_t nf = (size_t)d->layout.n_features, n = 0;
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < d->n; i++)
        n += which < 0 || d->split[i] == which;
    size_t m = n ? n : 1;
    for (int k = 0; k < 2; k++) {
        s->x[k] = psi_malloc(m * nf * sizeof(float));
        s->y[k] = psi_malloc(m * sizeof(float));
        s->solo[k] = psi_malloc(m * sizeof(double));
        s->measured[k] = psi_malloc(m * sizeof(double));
        if (!s->x[k] || !s->y[k] || !s->solo[k] || !s->measured[k]) {
            subset_free(s);
            return PS_E_NOMEM;
        }
    }
    size_t j = 0;
    for (size_t i = 0; i < d->n; i++) {
        if (which >= 0 && d->split[i] != which)
            continue;
        int rc = psi_dataset_features(d, ops, i, PS_SIDE_HP, s->x[0] + j * nf);
        if (rc == PS_OK)
            rc = psi_dataset_features(d, ops, i, PS_SIDE_LP, s->x[1] + j * nf);
        if (rc != PS_OK) {
            subset_free(s);
            return rc;
        }
        s->y[0][j] = (float)d->y_hp[i];
        s->y[1][j] = (float)d->y_lp[i];
        s->solo[0][j] = d->hp_solo_ns[i];
        s->solo[1][j] = d->lp_solo_ns[i];
        s->measured[0][j] = d->hp_ns[i];
        s->measured[1][j] = d->lp_ns[i];
        j++;
    }
    s->n = n;
    return PS_OK;
}

/* One training run: its parameters, the data set and the state of its
 * progress report. */
typedef struct {
    const ps_train_params_t *p;
    const psi_feature_layout_t *l;
    const psi_dataset_t *d; /* lean: the training split is fed by index */
    const ps_ops_t *ops;
    const size_t *train_idx; /* rows of the training split */
    size_t n_train;
    int nthread;
    /* Progress in boosting rounds. total is re-estimated after each grid
     * point from the rounds early stopping let the finished points run
     * (expected_rounds), never from max_rounds once one has finished. */
    double done, total;
    int points;                   /* grid points trained per side (grid_points) */
    int points_left;              /* grid points of both sides not yet finished */
    double fin_rounds, fin_count; /* finished points: the sum of rounds x eta, their count */
} train_ctx_t;

/* The training split of one side, handed to XGBoost through its data
 * iterator (XGQuantileDMatrixCreateFromCallback): features are built in
 * float32, FEED_ROWS rows at a time, into one chunk buffer, so that the
 * quantized matrix XGBoost keeps (one byte per value) is the only full copy
 * of the split. XGBoost walks the iterator more than once (cuts, then
 * quantization); every walk builds the same values. */
typedef struct {
    const psi_dataset_t *d;
    const ps_ops_t *ops;
    int side, nthread;
    const size_t *idx; /* the split's rows */
    size_t n, pos;
    float *x, *y; /* the chunk: [FEED_ROWS * n_features], [FEED_ROWS] */
    DMatrixHandle proxy;
    int rc; /* the first failure; the iterator then ends early */
} feed_t;

static int feed_next(DataIterHandle h)
{
    feed_t *f = h;
    if (f->rc != PS_OK || f->pos >= f->n)
        return 0;
    size_t m = f->n - f->pos < FEED_ROWS ? f->n - f->pos : FEED_ROWS;
    size_t nf = (size_t)f->d->layout.n_features;
    const double *y = f->side == PS_SIDE_HP ? f->d->y_hp : f->d->y_lp;
    int rc = PS_OK;
#ifdef _OPENMP
    int nt = f->nthread > 0 ? f->nthread : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(nt) reduction(min : rc) if (m >= 256)
#endif
    for (long i = 0; i < (long)m; i++) {
        size_t k = f->idx[f->pos + (size_t)i];
        int r = psi_dataset_features(f->d, f->ops, k, f->side, f->x + (size_t)i * nf);
        rc = r < rc ? r : rc;
        f->y[i] = (float)y[k];
    }
    if (rc != PS_OK) {
        f->rc = psi_error(rc, "building training features");
        return 0;
    }
    char iface[256];
    snprintf(iface, sizeof iface,
             "{\"data\": [%llu, false], \"shape\": [%zu, %zu], \"typestr\": \"<f4\", \"version\": 3}",
             (unsigned long long)(uintptr_t)f->x, m, nf);
    if (XGProxyDMatrixSetDataDense(f->proxy, iface) != 0 ||
        XGDMatrixSetFloatInfo(f->proxy, "label", f->y, (bst_ulong)m) != 0) {
        f->rc = psi_xgb_error("passing a chunk of training rows");
        return 0;
    }
    f->pos += m;
    return 1;
}

static void feed_reset(DataIterHandle h) { ((feed_t *)h)->pos = 0; }

/* The quantized training matrix of one side (see feed_t); the chunk buffers
 * are freed before it is returned, ahead of boosting. */
static int make_quantile_dmatrix(const train_ctx_t *c, int side, DMatrixHandle *out)
{
    *out = NULL;
    int nthread = c->nthread;
    size_t nf = (size_t)c->d->layout.n_features;
    feed_t f = {.d = c->d, .ops = c->ops, .side = side, .nthread = nthread, .idx = c->train_idx, .n = c->n_train};
    f.x = psi_malloc(FEED_ROWS * nf * sizeof *f.x);
    f.y = psi_malloc(FEED_ROWS * sizeof *f.y);
    int rc = f.x && f.y ? PS_OK : PS_E_NOMEM;
    if (rc == PS_OK && XGProxyDMatrixCreate(&f.proxy) != 0)
        rc = psi_xgb_error("creating a data proxy");
    char config[128];
    /* XGBoost's JSON reads NaN; max_bin is the booster's default (256). */
    snprintf(config, sizeof config, "{\"missing\": NaN, \"nthread\": %d, \"max_bin\": 256}", nthread);
    if (rc == PS_OK && XGQuantileDMatrixCreateFromCallback(&f, f.proxy, NULL, feed_reset, feed_next, config, out) != 0)
        rc = f.rc != PS_OK ? f.rc : psi_xgb_error("creating the quantized training matrix");
    if (rc == PS_OK && f.rc != PS_OK)
        rc = f.rc;
    if (f.proxy)
        XGDMatrixFree(f.proxy);
    free(f.x);
    free(f.y);
    if (rc != PS_OK && *out) {
        XGDMatrixFree(*out);
        *out = NULL;
    }
    return rc;
}

/* The learner parameters every booster of ours needs set, also after a load
 * (a loaded model forgets tree_method and nthread). */
static int set_common_params(BoosterHandle b, int nthread, int depth, double eta, double subsample)
{
    char threads[16], max_depth[16], rate[32], share[32];
    snprintf(threads, sizeof threads, "%d", nthread);
    snprintf(max_depth, sizeof max_depth, "%d", depth);
    snprintf(rate, sizeof rate, "%.17g", eta);
    snprintf(share, sizeof share, "%.17g", subsample);
    const char *const kv[][2] = {
        {"validate_parameters", "1"}, {"objective", "reg:squarederror"},
        {"tree_method", "hist"},      {"nthread", threads},
        {"max_depth", max_depth},     {"eta", rate},
        {"subsample", share},         {"seed", "0"},
        {"verbosity", "0"},
    };
    int rc = PS_OK;
    for (size_t i = 0; rc == PS_OK && i < PS_ARRAY_LEN(kv); i++)
        rc = psi_xgb_set_param(b, kv[i][0], kv[i][1]);
    return rc;
}

/* The last number of an evaluation string "[3]\tvalid-rmse:0.0123". */
static double eval_value(const char *s)
{
    const char *c = strrchr(s, ':');
    return c ? strtod(c + 1, NULL) : NAN;
}

/* Latency MAPE of a candidate booster on subset s, through XGBoost's
 * predictor (a candidate has no flattened forest); tmp wraps it as a model. */
static double booster_mape(const psi_feature_layout_t *l, BoosterHandle b, int side, const subset_t *s)
{
    ps_model_t tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.layout = *l;
    tmp.booster[side] = b;
    double *pred = psi_malloc((s->n ? s->n : 1) * sizeof *pred);
    if (!pred)
        return NAN;
    double mape = NAN;
    if (psi_model_predict_xgb(&tmp, side, s->x[side], s->n, 0, pred) == PS_OK)
        mape = psi_latency_mape(pred, s->solo[side], s->measured[side], NULL, -1, s->n);
    free(pred);
    return mape;
}

/* Rounds a grid point of learning rate eta is expected to run: the mean of
 * the finished points (rounds x eta, so that a point of a third of the rate
 * is expected to run three times as long), max_rounds before any finished. */
static double expected_rounds(const train_ctx_t *c, double eta)
{
    if (c->fin_count == 0)
        return c->p->max_rounds;
    double r = c->fin_rounds / c->fin_count / eta;
    return r < c->p->max_rounds ? r : c->p->max_rounds;
}

/* After round `it` (0-based) of the running point, whose best round so far
 * is best_iter: the total so far plus the running point's rounds (at least
 * until early stopping could end it) and the points left, each at its
 * expected length. */
static void progress_round(train_ctx_t *c, int it, int best_iter, double eta)
{
    c->done += 1;
    double cur = expected_rounds(c, eta), least = best_iter + 1 + c->p->early_stopping;
    if (least < it + 2)
        least = it + 2;
    if (cur < least)
        cur = least < c->p->max_rounds ? least : c->p->max_rounds;
    c->total = c->done - (it + 1) + cur + (c->points_left - 1) * expected_rounds(c, eta);
    if (c->total < c->done)
        c->total = c->done;
    if (c->p->progress)
        c->p->progress("training", c->done, c->total, c->p->progress_user);
}

/* A grid point ended after `rounds` rounds: the total again, without the
 * running point (after the last point, total == done). */
static void progress_point(train_ctx_t *c, int rounds, double eta)
{
    c->fin_rounds += rounds * eta;
    c->fin_count += 1;
    c->points_left--;
    c->total = c->done + c->points_left * expected_rounds(c, eta);
    if (c->p->progress)
        c->p->progress("training", c->done, c->total, c->p->progress_user);
}

/* One point of the grid of ps_train_params_t (depths x etas). */
typedef struct {
    int depth;
    double eta;
} grid_point_t;

/* Train one regressor at grid point g with early stopping; *out holds the
 * rounds up to the best validation RMSE. */
static int train_one(train_ctx_t *c, DMatrixHandle dtrain, DMatrixHandle dvalid, double base_score, grid_point_t g,
                     BoosterHandle *out)
{
    const int depth = g.depth;
    const double eta = g.eta;
    *out = NULL;
    BoosterHandle b = NULL, best_b = NULL;
    DMatrixHandle cache[2] = {dtrain, dvalid};
    if (XGBoosterCreate(cache, 2, &b) != 0)
        return psi_xgb_error("creating a booster");
    int rc = set_common_params(b, c->nthread, depth, eta, c->p->subsample);
    char buf[64];
    snprintf(buf, sizeof buf, "%.17g", base_score);
    if (rc == PS_OK)
        rc = psi_xgb_set_param(b, "base_score", buf);
    if (rc == PS_OK)
        rc = psi_xgb_set_param(b, "eval_metric", "rmse");
    double best = INFINITY;
    int best_iter = -1, rounds = 0;
    for (int it = 0; rc == PS_OK && it < c->p->max_rounds; it++) {
        if (XGBoosterUpdateOneIter(b, it, dtrain) != 0) {
            rc = psi_xgb_error("boosting");
            break;
        }
        const char *names[1] = {"valid"};
        const char *res = NULL;
        if (XGBoosterEvalOneIter(b, it, &cache[1], names, 1, &res) != 0) {
            rc = psi_xgb_error("evaluating on the validation split");
            break;
        }
        double v = eval_value(res);
        rounds = it + 1;
        if (v < best) {
            best = v;
            best_iter = it;
        }
        progress_round(c, it, best_iter, eta);
        if (it - best_iter >= c->p->early_stopping)
            break;
    }
    progress_point(c, rounds, eta);
    if (rc == PS_OK && best_iter < 0)
        rc = psi_error(PS_E_BACKEND, "training produced no finite validation error");
    if (rc == PS_OK && XGBoosterSlice(b, 0, best_iter + 1, 1, &best_b) != 0)
        rc = psi_xgb_error("keeping the best rounds");
    XGBoosterFree(b);
    if (rc != PS_OK) {
        if (best_b)
            XGBoosterFree(best_b);
        return rc;
    }
    *out = best_b;
    return PS_OK;
}

static int count_rounds(BoosterHandle b)
{
    int r = 0;
    if (XGBoosterBoostedRounds(b, &r) != 0)
        return -1;
    return r;
}

/* One side: every grid point, keep the lowest validation MAPE. */
static int train_side(train_ctx_t *c, ps_model_t *m, int side, const subset_t *va)
{
    DMatrixHandle dtrain = NULL, dvalid = NULL;
    int nf = c->l->n_features;
    int rc = make_quantile_dmatrix(c, side, &dtrain);
    if (rc == PS_OK)
        rc = psi_xgb_matrix(va->x[side], va->y[side], va->n, nf, c->nthread, &dvalid);
    /* XGBoost 1.7 does not estimate base_score; the label mean (of the
     * float labels XGBoost sees) starts the trees at the average slowdown. */
    const double *yd = side == PS_SIDE_HP ? c->d->y_hp : c->d->y_lp;
    double base = 0;
    for (size_t i = 0; i < c->n_train; i++)
        base += (float)yd[c->train_idx[i]];
    base = c->n_train ? base / (double)c->n_train : 0;
    double best_mape = INFINITY;
    for (int i = 0, k = 0; rc == PS_OK && i < c->p->n_depths; i++) {
        for (int j = 0; rc == PS_OK && j < c->p->n_etas && k++ < c->points; j++) {
            BoosterHandle b = NULL;
            rc = train_one(c, dtrain, dvalid, base, (grid_point_t){c->p->depths[i], c->p->etas[j]}, &b);
            if (rc != PS_OK)
                break;
            double mape = booster_mape(c->l, b, side, va);
            if (mape < best_mape || !m->booster[side]) {
                if (m->booster[side])
                    XGBoosterFree(m->booster[side]);
                m->booster[side] = b;
                best_mape = mape;
                m->info.depth[side] = c->p->depths[i];
                m->info.eta[side] = c->p->etas[j];
            } else {
                XGBoosterFree(b);
            }
        }
    }
    if (rc == PS_OK) {
        m->info.valid_mape[side] = best_mape;
        m->info.n_trees[side] = count_rounds(m->booster[side]);
    }
    if (dtrain)
        XGDMatrixFree(dtrain);
    if (dvalid)
        XGDMatrixFree(dvalid);
    return rc;
}

/* Grid points trained per side: grid_rows / training rows of them, at least
 * one, at most the whole grid (ps_train_params_t.grid_rows). */
static int grid_points(const ps_train_params_t *p, size_t n_train)
{
    int all = p->n_depths * p->n_etas;
    if (p->grid_rows == 0 || n_train == 0)
        return all;
    size_t k = (size_t)p->grid_rows / n_train;
    return k < 1 ? 1 : k < (size_t)all ? (int)k : all;
}

/* All rows must be of one GPU, the model's. */
static int check_gpu(const psi_dataset_t *d, const char *gpu)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->rows[i]->gpu, gpu) != 0)
            return psi_error(PS_E_INPUT, "coexec rows of GPU '%s' and '%s': a model is for one GPU", gpu,
                             d->rows[i]->gpu);
    return PS_OK;
}

/* Below this many rows, nthread 0 trains on one thread: XGBoost's OpenMP
 * threads spin while they wait, and on small matrices (a round of 2,100 rows
 * takes milliseconds) the waiting costs more than the parallel histograms
 * gain; on a loaded machine it multiplied the CPU time by ten (docs/model.md,
 * "Training time"). */
#define ONE_THREAD_ROWS 20000

static int resolve_nthread(int nthread, size_t rows)
{
    if (nthread > 0)
        return nthread;
    return rows < ONE_THREAD_ROWS ? 1 : 0;
}

/* The data set has rows, of one GPU; rows with longer segments than the
 * window were left out (a warning). */
static int check_dataset(const psi_dataset_t *d, int window)
{
    if (d->n == 0)
        return psi_error(PS_E_INPUT, "no co-execution rows with segments of at most %d operators", window);
    if (d->n_skipped)
        psi_log(PS_LOG_WARN, "train: %zu coexec rows with segments longer than %d operators left out", d->n_skipped,
                window);
    return check_gpu(d, d->rows[0]->gpu);
}

/* The indices of the training split's rows (*n of them). */
static int training_rows(const psi_dataset_t *d, size_t **out, size_t *n)
{
    *n = 0;
    if (!(*out = psi_malloc(d->n * sizeof **out)))
        return PS_E_NOMEM;
    for (size_t i = 0; i < d->n; i++)
        if (d->split[i] == PS_SPLIT_TRAIN)
            (*out)[(*n)++] = i;
    return PS_OK;
}

/* After both sides of c are trained: test MAPE (on te, built here), the
 * split's counts and fingerprint, then the calibration of the upper
 * bounds. */
static int finish_model(const train_ctx_t *c, ps_model_t *m, const ps_coexec_t *cx, const subset_t *va, subset_t *te)
{
    const psi_dataset_t *d = c->d;
    const ps_ops_t *ops = c->ops;
    int rc = subset_make(d, ops, PS_SPLIT_TEST, te);
    if (rc != PS_OK)
        return rc;
    for (int side = 0; side < 2; side++)
        m->info.test_mape[side] = te->n ? booster_mape(&d->layout, m->booster[side], side, te) : NAN;
    m->info.n_samples = d->n;
    m->info.n_train = c->n_train;
    m->info.n_valid = va->n;
    m->info.n_test = te->n;
    m->info.n_experiments = d->n_experiments;
    m->info.seed = c->p->seed;
    if ((rc = psi_coexec_fingerprint(cx, d->layout.window, &m->info.split_fingerprint)) != PS_OK)
        return rc;
    rc = psi_model_finish(m);
    if (rc == PS_OK)
        rc = psi_calib_fit(m, ops, d, &m->calib);
    m->info.n_calib = m->calib ? m->calib->n_rows : 0;
    return rc;
}

/* The end of ps_model_train and ps_model_adapt: the data set d released,
 * and the model m given to *out when rc is PS_OK, freed otherwise. */
static int hand_out(int rc, psi_dataset_t *d, ps_model_t *m, ps_model_t **out)
{
    psi_dataset_free(d);
    if (rc != PS_OK) {
        ps_model_free(m);
        return rc;
    }
    *out = m;
    return PS_OK;
}

int ps_model_train(const ps_ops_t *ops, const ps_coexec_t *cx, const ps_train_params_t *params, ps_model_t **out)
{
    *out = NULL;
    ps_train_params_t p = params ? *params : ps_train_default_params();
    if (!ops || !cx)
        return psi_error(PS_E_ARG, "ps_model_train: NULL table");
    int rc = check_params(&p);
    if (rc != PS_OK)
        return rc;
    double t0 = psi_now();
    psi_feature_layout_t l;
    rc = psi_features_layout(p.variant, p.window, &l);
    if (rc != PS_OK)
        return rc;
    /* Lean: no feature matrix of all samples. The training split goes to
     * XGBoost in chunks (make_quantile_dmatrix); the validation split is
     * kept (each grid point scores on it), the test split built at the end. */
    psi_dataset_t *d = NULL;
    rc = psi_dataset_build_lean(&l, ops, cx, p.seed, &d);
    if (rc != PS_OK)
        return rc;
    ps_model_t *m = NULL;
    subset_t va, te;
    size_t *train_idx = NULL, n_train = 0;
    memset(&va, 0, sizeof va);
    memset(&te, 0, sizeof te);
    if ((rc = check_dataset(d, l.window)) != PS_OK || (rc = training_rows(d, &train_idx, &n_train)) != PS_OK ||
        (rc = subset_make(d, ops, PS_SPLIT_VALID, &va)) != PS_OK)
        goto done;
    if (n_train == 0 || va.n == 0) {
        rc = psi_error(PS_E_INPUT, "%zu experiments: training needs at least 3 (80/10/10 split)", d->n_experiments);
        goto done;
    }
    if ((rc = psi_model_alloc(&l, d->rows[0]->gpu, &m)) != PS_OK)
        goto done;
    train_ctx_t c = {.p = &p,
                     .l = &l,
                     .d = d,
                     .ops = ops,
                     .train_idx = train_idx,
                     .n_train = n_train,
                     .nthread = resolve_nthread(p.nthread, n_train)};
    c.points = grid_points(&p, n_train);
    c.points_left = 2 * c.points;
    c.total = (double)c.points_left * p.max_rounds;
    for (int side = 0; side < 2 && rc == PS_OK; side++)
        rc = train_side(&c, m, side, &va);
    if (rc == PS_OK)
        rc = finish_model(&c, m, cx, &va, &te);
    m->info.train_seconds = psi_now() - t0;
done:
    free(train_idx);
    subset_free(&va);
    subset_free(&te);
    return hand_out(rc, d, m, out);
}

/* A booster's copy through its serialized model (XGBoost has no clone). */
static int booster_copy(BoosterHandle src, BoosterHandle *out)
{
    *out = NULL;
    bst_ulong len = 0;
    const char *buf = NULL;
    if (XGBoosterSaveModelToBuffer(src, "{\"format\": \"ubj\"}", &len, &buf) != 0)
        return psi_xgb_error("serializing a booster");
    if (XGBoosterCreate(NULL, 0, out) != 0)
        return psi_xgb_error("creating a booster");
    if (XGBoosterLoadModelFromBuffer(*out, buf, len) != 0) {
        XGBoosterFree(*out);
        *out = NULL;
        return psi_xgb_error("copying a booster");
    }
    return PS_OK;
}

/* A copy of base with p->adapt_rounds more trees of depth p->adapt_depth
 * (not 0: chosen already) fitted on dm; side counts the progress. */
static int adapt_booster(BoosterHandle base, DMatrixHandle dm, const ps_train_params_t *p, int nthread, int side,
                         BoosterHandle *out)
{
    int rc = booster_copy(base, out);
    if (rc == PS_OK)
        rc = set_common_params(*out, nthread, p->adapt_depth, p->adapt_eta, 1.0);
    int start = rc == PS_OK ? count_rounds(*out) : 0;
    for (int it = 0; rc == PS_OK && it < p->adapt_rounds; it++) {
        if (XGBoosterUpdateOneIter(*out, start + it, dm) != 0)
            rc = psi_xgb_error("continued training");
        else if (p->progress)
            p->progress("adapting", side * p->adapt_rounds + it + 1, 2.0 * p->adapt_rounds, p->progress_user);
    }
    if (rc != PS_OK && *out) {
        XGBoosterFree(*out);
        *out = NULL;
    }
    return rc;
}

/* The depths adapt_depth 0 chooses among, and the experiments that needs. */
static const int adapt_depths[] = {1, 2, 3};
#define ADAPT_CHOICE_MIN_EXPERIMENTS 5

/* adapt_depth 0: for one side, the depth of adapt_depths whose added trees,
 * fitted on the training split of the adaptation data, give the lowest
 * latency MAPE on its validation and test splits (held-out experiments of
 * the new data, never an evaluation's test set). Fewer than
 * ADAPT_CHOICE_MIN_EXPERIMENTS experiments: depth 1, the shallowest. */
static int choose_adapt_depth(const ps_model_t *m, const psi_dataset_t *d, const ps_train_params_t *p, int nthread,
                              int side, int *depth)
{
    *depth = adapt_depths[0];
    if (d->n_experiments < ADAPT_CHOICE_MIN_EXPERIMENTS)
        return PS_OK;
    subset_t fit, va, te;
    DMatrixHandle dm = NULL;
    ps_train_params_t quiet = *p;
    quiet.progress = NULL;
    int rc = subset_make(d, NULL, PS_SPLIT_TRAIN, &fit);
    if (rc == PS_OK && (rc = subset_make(d, NULL, PS_SPLIT_VALID, &va)) != PS_OK)
        subset_free(&fit);
    if (rc == PS_OK && (rc = subset_make(d, NULL, PS_SPLIT_TEST, &te)) != PS_OK) {
        subset_free(&fit);
        subset_free(&va);
    }
    if (rc != PS_OK)
        return rc;
    rc = psi_xgb_matrix(fit.x[side], fit.y[side], fit.n, m->layout.n_features, nthread, &dm);
    double best = INFINITY;
    for (size_t k = 0; rc == PS_OK && k < PS_ARRAY_LEN(adapt_depths); k++) {
        BoosterHandle b = NULL;
        quiet.adapt_depth = adapt_depths[k];
        if ((rc = adapt_booster(m->booster[side], dm, &quiet, nthread, side, &b)) != PS_OK)
            break;
        double e = (booster_mape(&m->layout, b, side, &va) * (double)va.n +
                    booster_mape(&m->layout, b, side, &te) * (double)te.n) /
                   (double)(va.n + te.n);
        XGBoosterFree(b);
        if (e < best) {
            best = e;
            *depth = adapt_depths[k];
        }
    }
    if (dm)
        XGDMatrixFree(dm);
    subset_free(&fit);
    subset_free(&va);
    subset_free(&te);
    return rc;
}

int ps_model_adapt(const ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *cx, const ps_train_params_t *params,
                   ps_model_t **out)
{
    *out = NULL;
    ps_train_params_t p = params ? *params : ps_train_default_params();
    if (!m || !ops || !cx)
        return psi_error(PS_E_ARG, "ps_model_adapt: NULL argument");
    int rc = check_params(&p);
    if (rc != PS_OK)
        return rc;
    double t0 = psi_now();
    psi_dataset_t *d = NULL;
    rc = psi_dataset_build(&m->layout, ops, cx, p.seed, &d);
    if (rc != PS_OK)
        return rc;
    ps_model_t *n = NULL;
    subset_t all;
    memset(&all, 0, sizeof all);
    DMatrixHandle dm[2] = {NULL, NULL};
    if (d->n == 0) {
        rc = psi_error(PS_E_INPUT, "no co-execution rows with segments of at most %d operators", m->layout.window);
        goto done;
    }
    if ((rc = check_gpu(d, m->gpu)) != PS_OK || (rc = subset_make(d, ops, -1, &all)) != PS_OK ||
        (rc = psi_model_alloc(&m->layout, m->gpu, &n)) != PS_OK)
        goto done;
    n->info = m->info;
    n->info.gpu = n->gpu;
    n->info.n_calib = 0; /* the calibration does not hold for the adapted trees */
    int nthread = resolve_nthread(p.nthread, d->n);
    for (int side = 0; side < 2 && rc == PS_OK; side++) {
        int depth = p.adapt_depth;
        if (depth == 0 && (rc = choose_adapt_depth(m, d, &p, nthread, side, &depth)) != PS_OK)
            break;
        rc = psi_xgb_matrix(all.x[side], all.y[side], all.n, m->layout.n_features, nthread, &dm[side]);
        ps_train_params_t at_depth = p;
        at_depth.adapt_depth = depth;
        if (rc == PS_OK)
            rc = adapt_booster(m->booster[side], dm[side], &at_depth, nthread, side, &n->booster[side]);
        if (rc == PS_OK) {
            n->info.n_trees[side] = count_rounds(n->booster[side]);
            n->info.adapt_depth[side] = depth;
        }
    }
    if (rc != PS_OK)
        goto done;
    rc = psi_model_finish(n);
    n->info.n_adapt = m->info.n_adapt + 1;
    n->info.adapt_samples = d->n;
    n->info.adapt_seconds = psi_now() - t0;
done:
    for (int side = 0; side < 2; side++)
        if (dm[side])
            XGDMatrixFree(dm[side]);
    subset_free(&all);
    return hand_out(rc, d, n, out);
}
