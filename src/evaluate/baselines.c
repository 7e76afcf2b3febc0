/*
 * The baselines of the paper's Section IV-A, each trained on measured
 * co-executions and predicting the latency of both sides of a query:
 *
 *  intensity_rule   T_share = sum_i f[side][class(i)] * d_i(p): every
 *                   operator's standalone latency d_i at its TPCs scaled by
 *                   one fixed factor per side and intensity class (Orion,
 *                   Usher), as the paper defines it: the factors come from
 *                   single-operator characterization (Fig. 1c), the median
 *                   slowdown of the training co-executions whose segment on
 *                   that side is one operator of that class.
 *  intensity_rule_fit  the same form with the factors fitted by least
 *                   squares on the relative error of whole segments.
 *  fixed_cost       the fitted rule plus what co-execution costs whatever
 *                   the operators (dispatch, synchronization): T_share =
 *                   sum_c f_c t_c + a + b * len, per side, least squares on
 *                   the relative error.
 *  complementarity  T_share = T_solo * median delta of the training samples
 *                   with the same (HP class, LP class, hp_tpcs, lp_tpcs); the
 *                   class of a segment is the one holding most of its
 *                   standalone time.
 *  abacus_mlp       model identity (one-hot), batch size, segment positions,
 *                   the SM split and the standalone latencies into an MLP
 *                   that predicts log delta of both sides (Abacus).
 *  linear           ridge regression of log delta on the PairSight input,
 *                   one per side, solved in closed form.
 *  pairsight_mlp    the PairSight input into a three-layer perceptron, one
 *                   per side.
 */
#include "common/common.h"
#include "evaluate/evaluate.h"
#include "evaluate/mlp.h"
#include "evaluate/scale.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* LAPACK's Cholesky solve, from OpenBLAS (gfortran calling convention: the
 * hidden length of the character argument comes last). */
extern void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda,
                   double *b, const int *ldb, int *info, size_t uplo_len);

enum { CLS_COMPUTE = 0, CLS_MEMORY = 1, CLS_OTHER = 2, N_CLS = 3 };
/* Columns of the linear rules: the standalone time per class, then (for
 * fixed_cost) a constant and the operator count, both in microseconds so that
 * the normal equations stay well scaled. */
enum { COL_FIXED = N_CLS, COL_PER_OP = N_CLS + 1, N_COLS = N_CLS + 2 };
#define RULE_UNIT_NS 1000.0
/* Single-operator samples a class needs before its characterized factor is
 * their median (else: the segments that class dominates). */
#define CHAR_MIN_SAMPLES 5
/* The role of a row in training (tuning_roles). */
enum { ROLE_FIT = 1, ROLE_TUNE = 2 };

typedef struct {
    int hp_cls, lp_cls, hp_tpcs, lp_tpcs;
    double delta[2]; /* median delta of each side */
} comp_cell_t;

typedef struct {
    psi_scaler_t scale;
    double *w; /* [scale.n] */
    double b;
    double lambda;
} ridge_t;

struct ps_baseline {
    ps_method_t method;
    double train_seconds;
    double factor[2][N_COLS]; /* the linear rules (intensity, fixed cost) */
    comp_cell_t *cells;      /* complementarity */
    size_t n_cells;
    double global_delta[2];
    char **models; /* abacus vocabulary */
    int n_models;
    psi_mlp_t *mlp[2]; /* abacus: mlp[0] with two outputs; pairsight_mlp: one per side */
    ridge_t ridge[2];
    psi_feature_layout_t layout;
};

static const char *const method_names[PS_METHOD_COUNT] = {
    "pairsight",     "intensity_rule", "complementarity",    "abacus_mlp",
    "linear",        "pairsight_mlp",  "intensity_rule_fit", "fixed_cost"};

const char *ps_method_name(ps_method_t m)
{
    return (int)m >= 0 && m < PS_METHOD_COUNT ? method_names[m] : "?";
}

int ps_method_from_name(const char *name, ps_method_t *out)
{
    int k;
    int rc = psi_name_index("method", name, method_names, PS_METHOD_COUNT, &k);
    if (rc == PS_OK)
        *out = (ps_method_t)k;
    return rc;
}

ps_baseline_params_t ps_baseline_default_params(void)
{
    return (ps_baseline_params_t){.seed = 1, .mlp_epochs = 100, .mlp_seconds = 0, .ridge_lambda = -1};
}

ps_method_t ps_baseline_method(const ps_baseline_t *b) { return b->method; }
double psi_baseline_train_seconds(const ps_baseline_t *b) { return b->train_seconds; }

void ps_baseline_free(ps_baseline_t *b)
{
    if (!b)
        return;
    free(b->cells);
    for (int i = 0; i < b->n_models; i++)
        free(b->models[i]);
    free(b->models);
    for (int s = 0; s < 2; s++) {
        psi_mlp_free(b->mlp[s]);
        psi_scaler_clear(&b->ridge[s].scale);
        free(b->ridge[s].w);
    }
    free(b);
}

/* ---- per-segment quantities from the standalone profile ---- */

static int cls_of(psi_intensity_t t)
{
    return t == PS_INTENSITY_COMPUTE ? CLS_COMPUTE : t == PS_INTENSITY_MEMORY ? CLS_MEMORY : CLS_OTHER;
}

/* Standalone time of one side's segment split by intensity class: out[c] is
 * the sum of d_i(tpcs) over its operators of class c. */
static int segment_by_class(const ps_ops_t *ops, const ps_query_t *q, int side, double out[N_CLS])
{
    const char *model = side == PS_SIDE_HP ? q->hp_model : q->lp_model;
    int batch = side == PS_SIDE_HP ? q->hp_batch : q->lp_batch;
    int start = side == PS_SIDE_HP ? q->hp_start : q->lp_start;
    int len = side == PS_SIDE_HP ? q->hp_len : q->lp_len;
    int tpcs = side == PS_SIDE_HP ? q->hp_tpcs : q->lp_tpcs;
    const psi_op_group_t *g = psi_ops_find(ops, q->gpu, model, batch);
    char known[512];
    if (!g)
        return psi_error(PS_E_INPUT, "no standalone profile of %s batch %d on %s (ops has: %s)", model, batch, q->gpu,
                         psi_ops_groups_text(ops, q->gpu, known, sizeof known));
    int k = psi_group_tpcs_index(g, tpcs);
    if (k < 0)
        return psi_error(PS_E_INPUT, "%s batch %d has no standalone profile at %d TPCs (ops has it at %s TPCs)", model,
                         batch, tpcs, psi_group_tpcs_text(g, known, sizeof known));
    if (!segment_fits(start, len, g->n_ops))
        return psi_error(PS_E_INPUT, "%s batch %d: segment [%d, %lld) outside its %d operators", model, batch, start,
                         (long long)start + len, g->n_ops);
    out[0] = out[1] = out[2] = 0;
    for (int i = start; i < start + len; i++) {
        double d = g->duration_ns[(size_t)i * (size_t)g->n_tpcs + (size_t)k];
        if (isnan(d))
            return psi_error(PS_E_INPUT, "%s batch %d: operator %d not profiled at %d TPCs", model, batch, i, tpcs);
        out[cls_of(g->intensity[i])] += d;
    }
    return 0;
}

static int dominant_class(const double t[N_CLS])
{
    int c = 0;
    for (int k = 1; k < N_CLS; k++)
        if (t[k] > t[c])
            c = k;
    return c;
}

/* ---- small dense solve ---- */

/* Solve the symmetric positive definite system a x = b (a is d x d, row
 * major, overwritten; b[d] receives x). */
static int spd_solve(double *a, double *b, int d)
{
    int n = d, nrhs = 1, info = 0;
    dposv_("L", &n, &nrhs, a, &n, b, &n, &info, 1);
    if (info != 0)
        return psi_error(PS_E_BACKEND, "dposv: system not positive definite (info %d)", info);
    return 0;
}

/* ---- the linear rules ---- */

/* The columns of one side of a query: standalone time per class, then the
 * constant and the operator count (in RULE_UNIT_NS). */
static int rule_columns(const ps_ops_t *ops, const ps_query_t *q, int side, double col[N_COLS])
{
    int rc = segment_by_class(ops, q, side, col);
    col[COL_FIXED] = RULE_UNIT_NS;
    col[COL_PER_OP] = RULE_UNIT_NS * (side == PS_SIDE_HP ? q->hp_len : q->lp_len);
    return rc;
}

static double rule_predict(const double f[N_COLS], const double col[N_COLS])
{
    double t = 0;
    for (int c = 0; c < N_COLS; c++)
        t += f[c] * col[c];
    return t;
}

/* Minimize sum_i ((sum_c f_c col_ic - y_i) / y_i)^2 over the first n_cols
 * factors: the normal equations of the rows col_i / y_i against 1. A class
 * absent from training keeps f = 1 (the constant and per-operator terms 0). */
static int fit_rule(ps_baseline_t *b, const ps_ops_t *ops, const psi_dataset_t *d, const unsigned char *use, int n_cols)
{
    double ata[2][N_COLS][N_COLS] = {{{0}}}, atb[2][N_COLS] = {{0}};
    for (size_t i = 0; i < d->n; i++) {
        if (use[i] != ROLE_FIT)
            continue;
        ps_query_t q = psi_query_of_row(d->rows[i]);
        for (int s = 0; s < 2; s++) {
            double t[N_COLS];
            int rc = rule_columns(ops, &q, s, t);
            if (rc != 0)
                return rc;
            double y = s == PS_SIDE_HP ? d->hp_ns[i] : d->lp_ns[i];
            for (int r = 0; r < n_cols; r++) {
                atb[s][r] += t[r] / y;
                for (int c = 0; c < n_cols; c++)
                    ata[s][r][c] += t[r] * t[c] / (y * y);
            }
        }
    }
    for (int s = 0; s < 2; s++) {
        int present[N_COLS], k = 0;
        for (int c = 0; c < n_cols; c++)
            if (ata[s][c][c] > 0)
                present[k++] = c;
        for (int c = 0; c < N_COLS; c++)
            b->factor[s][c] = c < N_CLS ? 1 : 0;
        if (k == 0)
            continue;
        double a[N_COLS * N_COLS], x[N_COLS];
        for (int r = 0; r < k; r++) {
            x[r] = atb[s][present[r]];
            for (int c = 0; c < k; c++)
                a[r * k + c] = ata[s][present[r]][present[c]] * (r == c ? 1 + 1e-12 : 1);
        }
        int rc = spd_solve(a, x, k);
        if (rc != 0)
            return rc;
        for (int r = 0; r < k; r++)
            b->factor[s][present[r]] = x[r];
    }
    return 0;
}

/* The intensity rule's factors from single-operator characterization: per
 * side and class, the median delta of the used co-executions whose segment on
 * that side is one operator of that class (the paper's Fig. 1c measures
 * exactly these). A class with fewer than CHAR_MIN_SAMPLES such samples takes
 * the median delta of the segments it dominates; a class never seen keeps 1. */
static int fit_characterized(ps_baseline_t *b, const ps_ops_t *ops, const psi_dataset_t *d, const unsigned char *use)
{
    size_t n = d->n ? d->n : 1;
    double *single = psi_malloc(n * sizeof *single), *dom = psi_malloc(n * sizeof *dom);
    int rc = single && dom ? 0 : PS_E_NOMEM;
    for (int s = 0; rc == 0 && s < 2; s++) {
        for (int c = 0; c < N_CLS; c++) {
            size_t ns = 0, nd = 0;
            for (size_t i = 0; rc == 0 && i < d->n; i++) {
                if (use[i] != ROLE_FIT)
                    continue;
                ps_query_t q = psi_query_of_row(d->rows[i]);
                double t[N_CLS];
                if ((rc = segment_by_class(ops, &q, s, t)) != 0)
                    break;
                if (dominant_class(t) != c)
                    continue;
                double delta = s == PS_SIDE_HP ? d->hp_ns[i] / d->hp_solo_ns[i] : d->lp_ns[i] / d->lp_solo_ns[i];
                dom[nd++] = delta;
                if ((s == PS_SIDE_HP ? q.hp_len : q.lp_len) == 1)
                    single[ns++] = delta;
            }
            b->factor[s][c] = ns >= CHAR_MIN_SAMPLES ? psi_median(single, ns) : nd ? psi_median(dom, nd) : 1;
        }
        b->factor[s][COL_FIXED] = b->factor[s][COL_PER_OP] = 0;
    }
    free(single);
    free(dom);
    return rc;
}

/* ---- complementarity table ---- */

static int cmp_cell_key(const comp_cell_t *a, const comp_cell_t *b)
{
    if (a->hp_cls != b->hp_cls)
        return a->hp_cls - b->hp_cls;
    if (a->lp_cls != b->lp_cls)
        return a->lp_cls - b->lp_cls;
    if (a->hp_tpcs != b->hp_tpcs)
        return a->hp_tpcs - b->hp_tpcs;
    return a->lp_tpcs - b->lp_tpcs;
}

typedef struct {
    comp_cell_t key;
    double d_hp, d_lp;
} comp_sample_t;

static int cmp_sample(const void *x, const void *y)
{
    return cmp_cell_key(&((const comp_sample_t *)x)->key, &((const comp_sample_t *)y)->key);
}

static int sample_key(const ps_ops_t *ops, const ps_query_t *q, comp_cell_t *key)
{
    double t[2][N_CLS];
    for (int s = 0; s < 2; s++) {
        int rc = segment_by_class(ops, q, s, t[s]);
        if (rc != 0)
            return rc;
    }
    key->hp_cls = dominant_class(t[0]);
    key->lp_cls = dominant_class(t[1]);
    key->hp_tpcs = q->hp_tpcs;
    key->lp_tpcs = q->lp_tpcs;
    return 0;
}

static int fit_complementarity(ps_baseline_t *b, const ps_ops_t *ops, const psi_dataset_t *d, const unsigned char *use)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += use[i] == ROLE_FIT;
    comp_sample_t *smp = psi_malloc(n * sizeof *smp);
    double *tmp = psi_malloc(2 * n * sizeof *tmp);
    b->cells = psi_malloc(n * sizeof *b->cells);
    int rc = PS_E_NOMEM;
    if (!smp || !tmp || !b->cells)
        goto done;
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++) {
        if (use[i] != ROLE_FIT)
            continue;
        ps_query_t q = psi_query_of_row(d->rows[i]);
        if ((rc = sample_key(ops, &q, &smp[k].key)) != 0)
            goto done;
        smp[k].d_hp = d->hp_ns[i] / d->hp_solo_ns[i];
        smp[k].d_lp = d->lp_ns[i] / d->lp_solo_ns[i];
        tmp[k] = smp[k].d_hp;
        tmp[n + k] = smp[k].d_lp;
        k++;
    }
    b->global_delta[0] = psi_median(tmp, n);
    b->global_delta[1] = psi_median(tmp + n, n);
    qsort(smp, n, sizeof *smp, cmp_sample);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && cmp_cell_key(&smp[j].key, &smp[i].key) == 0)
            j++;
        for (size_t t = i; t < j; t++) {
            tmp[t - i] = smp[t].d_hp;
            tmp[n + t - i] = smp[t].d_lp;
        }
        comp_cell_t *c = &b->cells[b->n_cells++];
        *c = smp[i].key;
        c->delta[0] = psi_median(tmp, j - i);
        c->delta[1] = psi_median(tmp + n, j - i);
        i = j;
    }
    rc = 0;
done:
    free(smp);
    free(tmp);
    return rc;
}

/* The cell of key; for an SM split absent from training, the nearest split
 * (in TPCs) of the same intensity pair; for an unseen intensity pair, the
 * nearest split of any pair. */
static int cmp_cell(const void *a, const void *b) { return cmp_cell_key(a, b); }

static const comp_cell_t *comp_lookup(const ps_baseline_t *b, const comp_cell_t *key)
{
    /* Cells are sorted by key: an exact hit first. */
    const comp_cell_t *hit = bsearch(key, b->cells, b->n_cells, sizeof *b->cells, cmp_cell);
    if (hit)
        return hit;
    const comp_cell_t *best = NULL;
    long best_score = 0;
    for (size_t i = 0; i < b->n_cells; i++) {
        const comp_cell_t *c = &b->cells[i];
        long dist = labs((long)c->hp_tpcs - key->hp_tpcs) + labs((long)c->lp_tpcs - key->lp_tpcs);
        long score = dist + ((c->hp_cls != key->hp_cls || c->lp_cls != key->lp_cls) ? 1000000L : 0);
        if (!best || score < best_score) {
            best = c;
            best_score = score;
        }
    }
    return best;
}

/* ---- Abacus-style features ---- */

static int abacus_n_in(const ps_baseline_t *b) { return 2 * b->n_models + 10; }

static int model_index(const ps_baseline_t *b, const char *name)
{
    for (int i = 0; i < b->n_models; i++)
        if (strcmp(b->models[i], name) == 0)
            return i;
    return -1;
}

static int add_model(ps_baseline_t *b, const char *name)
{
    if (model_index(b, name) >= 0)
        return 0;
    char **m = psi_realloc(b->models, (size_t)(b->n_models + 1) * sizeof *m);
    if (!m)
        return PS_E_NOMEM;
    b->models = m;
    if (!(m[b->n_models] = psi_strdup(name)))
        return PS_E_NOMEM;
    b->n_models++;
    return 0;
}

/* One Abacus input row: one-hot HP and LP model (all zero for a model absent
 * from training), log2 batch sizes, segment starts and lengths, TPCs and the
 * log standalone latencies. */
static void abacus_row(const ps_baseline_t *b, const ps_query_t *q, double hp_solo, double lp_solo, float *x)
{
    int M = b->n_models;
    memset(x, 0, (size_t)abacus_n_in(b) * sizeof *x);
    int h = model_index(b, q->hp_model), l = model_index(b, q->lp_model);
    if (h >= 0)
        x[h] = 1;
    if (l >= 0)
        x[M + l] = 1;
    float *r = x + 2 * M;
    r[0] = (float)log2(q->hp_batch);
    r[1] = (float)log2(q->lp_batch);
    r[2] = (float)q->hp_start;
    r[3] = (float)q->hp_len;
    r[4] = (float)q->lp_start;
    r[5] = (float)q->lp_len;
    r[6] = (float)q->hp_tpcs;
    r[7] = (float)q->lp_tpcs;
    r[8] = (float)log(hp_solo);
    r[9] = (float)log(lp_solo);
}

static void mlp_params_of(const ps_baseline_params_t *p, psi_mlp_params_t *mp)
{
    *mp = psi_mlp_default_params();
    mp->epochs = p->mlp_epochs;
    mp->max_seconds = p->mlp_seconds;
    mp->seed = p->seed;
}

/* The rows of ROLE_TUNE (0: the learner holds out rows of its own). */
static size_t n_tune_rows(const psi_dataset_t *d, const unsigned char *role)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += role[i] == ROLE_TUNE;
    return n;
}

static int fit_abacus(ps_baseline_t *b, const psi_dataset_t *d, const unsigned char *use, const ps_baseline_params_t *p)
{
    size_t n = 0;
    int rc;
    for (size_t i = 0; i < d->n; i++)
        if (use[i]) {
            n++;
            if ((rc = add_model(b, d->rows[i]->hp_model)) != 0 || (rc = add_model(b, d->rows[i]->lp_model)) != 0)
                return rc;
        }
    int din = abacus_n_in(b);
    float *x = psi_malloc(n * (size_t)din * sizeof *x);
    double *y = psi_malloc(2 * n * sizeof *y);
    rc = PS_E_NOMEM;
    if (x && y) {
        /* Fitting rows first, then the tuning rows: early stopping on them. */
        size_t k = 0;
        for (int r = ROLE_FIT; r <= ROLE_TUNE; r++)
            for (size_t i = 0; i < d->n; i++) {
                if (use[i] != r)
                    continue;
                ps_query_t q = psi_query_of_row(d->rows[i]);
                abacus_row(b, &q, d->hp_solo_ns[i], d->lp_solo_ns[i], x + k * (size_t)din);
                y[2 * k] = d->y_hp[i];
                y[2 * k + 1] = d->y_lp[i];
                k++;
            }
        psi_mlp_params_t mp;
        mlp_params_of(p, &mp);
        mp.valid_tail = n_tune_rows(d, use);
        rc = psi_mlp_train(x, n, din, y, 2, &mp, &b->mlp[0]);
    }
    free(x);
    free(y);
    return rc;
}

/* ---- learned methods on the PairSight input ---- */

/* Gather the rows of one side's features of the used samples: the fitting
 * rows, then the *n_tune tuning rows. */
static int gather_side(const psi_dataset_t *d, const unsigned char *use, int side, float **x, double **y, size_t *n_out,
                       size_t *n_tune)
{
    int f = d->layout.n_features;
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += use[i] != 0;
    *x = psi_malloc(n * (size_t)f * sizeof **x);
    *y = psi_malloc(n * sizeof **y);
    if (!*x || !*y) {
        free(*x);
        free(*y);
        *x = NULL;
        *y = NULL;
        return PS_E_NOMEM;
    }
    const float *src = side == PS_SIDE_HP ? d->x_hp : d->x_lp;
    const double *ys = side == PS_SIDE_HP ? d->y_hp : d->y_lp;
    size_t k = 0;
    for (int r = ROLE_FIT; r <= ROLE_TUNE; r++)
        for (size_t i = 0; i < d->n; i++) {
            if (use[i] != r)
                continue;
            memcpy(*x + k * (size_t)f, src + i * (size_t)f, (size_t)f * sizeof **x);
            (*y)[k++] = ys[i];
        }
    *n_out = n;
    *n_tune = n_tune_rows(d, use);
    return 0;
}

/* Ridge regression on standardized inputs: w = (Z^T Z + lambda n I)^-1 Z^T
 * (y - mean y), b = mean y, with the Gram matrix from OpenBLAS (dsyrk) and the
 * Cholesky solve from LAPACK (dposv). */
static int ridge_solve(const double *gram, const double *zty, int f, size_t n, double lambda, double *w)
{
    double *a = psi_malloc((size_t)f * (size_t)f * sizeof *a);
    if (!a)
        return PS_E_NOMEM;
    memcpy(a, gram, (size_t)f * (size_t)f * sizeof *a);
    for (int j = 0; j < f; j++)
        a[(size_t)j * (size_t)f + (size_t)j] += lambda * (double)n + 1e-9;
    memcpy(w, zty, (size_t)f * sizeof *w);
    int rc = spd_solve(a, w, f);
    free(a);
    return rc;
}

/* Z^T Z and Z^T y over rows [lo, hi) of x scaled by s (y already centred). */
static int ridge_moments(const psi_scaler_t *s, const float *x, const double *y, size_t lo, size_t hi, double *gram,
                         double *zty)
{
    int f = s->n;
    enum { CHUNK = 512 };
    float *zf = psi_malloc((size_t)CHUNK * (size_t)f * sizeof *zf);
    double *z = psi_malloc((size_t)CHUNK * (size_t)f * sizeof *z);
    if (!zf || !z) {
        free(zf);
        free(z);
        return PS_E_NOMEM;
    }
    memset(gram, 0, (size_t)f * (size_t)f * sizeof *gram);
    memset(zty, 0, (size_t)f * sizeof *zty);
    for (size_t off = lo; off < hi; off += CHUNK) {
        size_t B = hi - off < CHUNK ? hi - off : CHUNK;
        for (size_t i = 0; i < B; i++) {
            psi_scaler_row(s, x + (off + i) * (size_t)f, zf + i * (size_t)f);
            for (int j = 0; j < f; j++)
                z[i * (size_t)f + (size_t)j] = zf[i * (size_t)f + (size_t)j];
        }
        cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, f, (int)B, 1.0, z, f, 1.0, gram, f);
        cblas_dgemv(CblasRowMajor, CblasTrans, (int)B, f, 1.0, z, f, y + off, 1, 1.0, zty, 1);
    }
    /* dsyrk filled the lower triangle; mirror it for clarity of use. */
    for (int r = 0; r < f; r++)
        for (int c = r + 1; c < f; c++)
            gram[(size_t)r * (size_t)f + (size_t)c] = gram[(size_t)c * (size_t)f + (size_t)r];
    free(zf);
    free(z);
    return 0;
}

static double ridge_predict_row(const ridge_t *r, const float *x, float *tmp)
{
    psi_scaler_row(&r->scale, x, tmp);
    double v = r->b;
    for (int j = 0; j < r->scale.n; j++)
        v += r->w[j] * tmp[j];
    return v;
}

/* Fit one side; with lambda < 0 choose lambda among a few decades by the
 * error on the last n_tune rows (whole experiments: tuning_roles), then
 * refit on all rows. */
static int fit_ridge(ridge_t *r, const float *x, double *y, size_t n, size_t n_tune, int f, double lambda)
{
    int rc = psi_scaler_fit(&r->scale, x, n, f);
    if (rc != 0)
        return rc;
    double ymean = 0;
    for (size_t i = 0; i < n; i++)
        ymean += y[i];
    ymean /= (double)n;
    for (size_t i = 0; i < n; i++)
        y[i] -= ymean;
    double *gram = psi_malloc((size_t)f * (size_t)f * sizeof *gram);
    double *zty = psi_malloc((size_t)f * sizeof *zty);
    float *tmp = psi_malloc((size_t)f * sizeof *tmp);
    r->w = psi_malloc((size_t)f * sizeof *r->w);
    rc = PS_E_NOMEM;
    if (!gram || !zty || !tmp || !r->w)
        goto done;
    r->b = ymean;
    if (lambda < 0) {
        size_t n_fit = n_tune > 0 && n_tune < n ? n - n_tune : n - n / 10;
        static const double grid[] = {1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1};
        double best = INFINITY;
        if ((rc = ridge_moments(&r->scale, x, y, 0, n_fit, gram, zty)) != 0)
            goto done;
        for (size_t g = 0; g < PS_ARRAY_LEN(grid); g++) {
            if (ridge_solve(gram, zty, f, n_fit, grid[g], r->w) != 0)
                continue;
            double se = 0;
            for (size_t i = n_fit; i < n; i++) {
                double e = ridge_predict_row(r, x + i * (size_t)f, tmp) - ymean - y[i];
                se += e * e;
            }
            if (se < best) {
                best = se;
                lambda = grid[g];
            }
        }
        if (lambda < 0)
            lambda = 1;
    }
    r->lambda = lambda;
    if ((rc = ridge_moments(&r->scale, x, y, 0, n, gram, zty)) != 0)
        goto done;
    rc = ridge_solve(gram, zty, f, n, lambda, r->w);
done:
    free(gram);
    free(zty);
    free(tmp);
    return rc;
}

static int fit_pairsight_input(ps_baseline_t *b, const psi_dataset_t *d, const unsigned char *use,
                               const ps_baseline_params_t *p)
{
    if (d->layout.variant != PS_FEAT_FULL)
        return psi_error(PS_E_ARG, "%s needs the full PairSight input", ps_method_name(b->method));
    b->layout = d->layout;
    for (int s = 0; s < 2; s++) {
        float *x;
        double *y;
        size_t n, n_tune;
        int rc = gather_side(d, use, s, &x, &y, &n, &n_tune);
        if (rc != 0)
            return rc;
        if (b->method == PS_METHOD_LINEAR) {
            rc = fit_ridge(&b->ridge[s], x, y, n, n_tune, d->layout.n_features, p->ridge_lambda);
        } else {
            psi_mlp_params_t mp;
            mlp_params_of(p, &mp);
            mp.seed = p->seed + (uint64_t)s;
            mp.valid_tail = n_tune;
            rc = psi_mlp_train(x, n, d->layout.n_features, y, 1, &mp, &b->mlp[s]);
        }
        free(x);
        free(y);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---- training entry points ---- */

/* What each row does in training (role[i]): 0 nothing, ROLE_FIT fits every
 * method, ROLE_TUNE tunes the learned ones (early stopping, ridge lambda). With the data set's own split (use NULL)
 * the training split fits and the validation split tunes, as PairSight's
 * early stopping does; with a caller's mask, the used rows of the last tenth
 * of its experiments in the data set's seeded order tune. Either way tuning
 * rows are whole experiments, never other runs of a fitted one. */
static int tuning_roles(const psi_dataset_t *d, const unsigned char *use, unsigned char *role)
{
    if (!use) {
        for (size_t i = 0; i < d->n; i++)
            role[i] = d->split[i] == PS_SPLIT_TRAIN ? ROLE_FIT : d->split[i] == PS_SPLIT_VALID ? ROLE_TUNE : 0;
        return 0;
    }
    unsigned char *seen = psi_calloc(d->n_experiments ? d->n_experiments : 1, 1);
    if (!seen)
        return PS_E_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++)
        if (use[i] && !seen[d->experiment[i]]) {
            seen[d->experiment[i]] = 1;
            k++;
        }
    /* The experiment ids are ranks of a seeded hash: the highest k/10 used
     * ones are a random tenth of the experiments. */
    size_t n_tune = k >= 2 ? (k / 10 ? k / 10 : 1) : 0, first_tune = d->n_experiments;
    for (size_t e = d->n_experiments, left = n_tune; e-- > 0 && left;)
        if (seen[e]) {
            first_tune = e;
            left--;
        }
    for (size_t i = 0; i < d->n; i++)
        role[i] = !use[i] ? 0 : (size_t)d->experiment[i] >= first_tune ? ROLE_TUNE : ROLE_FIT;
    free(seen);
    return 0;
}

int psi_baseline_fit(ps_method_t method, const ps_ops_t *ops, const psi_dataset_t *d, const unsigned char *use,
                     const ps_baseline_params_t *p, ps_baseline_t **out)
{
    *out = NULL;
    if (method <= PS_METHOD_PAIRSIGHT || method >= PS_METHOD_COUNT)
        return psi_error(PS_E_ARG, "not a baseline: %d", (int)method);
    ps_baseline_params_t defaults;
    if (!p) {
        defaults = ps_baseline_default_params();
        p = &defaults;
    }
    unsigned char *role = psi_malloc(d->n ? d->n : 1);
    if (!role)
        return PS_E_NOMEM;
    int rc = tuning_roles(d, use, role);
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += role[i] != 0;
    ps_baseline_t *b = NULL;
    if (rc != 0)
        goto done;
    if (n < 2) {
        rc = psi_error(PS_E_INPUT, "%s: need at least 2 training samples, have %zu", ps_method_name(method), n);
        goto done;
    }
    b = psi_calloc(1, sizeof *b);
    if (!b) {
        rc = PS_E_NOMEM;
        goto done;
    }
    b->method = method;
    double t0 = psi_now();
    switch (method) {
    case PS_METHOD_INTENSITY_RULE: rc = fit_characterized(b, ops, d, role); break;
    case PS_METHOD_INTENSITY_RULE_FIT: rc = fit_rule(b, ops, d, role, N_CLS); break;
    case PS_METHOD_FIXED_COST: rc = fit_rule(b, ops, d, role, N_COLS); break;
    case PS_METHOD_COMPLEMENTARITY: rc = fit_complementarity(b, ops, d, role); break;
    case PS_METHOD_ABACUS_MLP: rc = fit_abacus(b, d, role, p); break;
    default: rc = fit_pairsight_input(b, d, role, p); break;
    }
    b->train_seconds = psi_now() - t0;
done:
    free(role);
    if (rc != 0) {
        psi_error_prefix(rc, ps_method_name(method));
        ps_baseline_free(b);
    } else {
        *out = b;
    }
    return rc;
}

int ps_baseline_train(ps_method_t method, const ps_ops_t *ops, const ps_coexec_t *train,
                      const ps_baseline_params_t *p, ps_baseline_t **out)
{
    *out = NULL;
    if (!ops || !train)
        return psi_error(PS_E_ARG, "baseline: no ops or coexec table");
    psi_feature_layout_t l;
    int rc = psi_features_layout(PS_FEAT_FULL, PS_WINDOW, &l);
    if (rc != 0)
        return rc;
    psi_dataset_t *d = NULL;
    if ((rc = psi_dataset_build(&l, ops, train, p ? p->seed : 1, &d)) != 0)
        return rc;
    unsigned char *use = psi_malloc(d->n ? d->n : 1);
    if (!use) {
        psi_dataset_free(d);
        return PS_E_NOMEM;
    }
    memset(use, 1, d->n);
    rc = psi_baseline_fit(method, ops, d, use, p, out);
    free(use);
    psi_dataset_free(d);
    return rc;
}

/* ---- prediction ---- */

/* Predict one side's log delta for n queries from their feature rows. */
static int predict_side_x(const ps_baseline_t *b, int side, const float *x, size_t n, double *out)
{
    if (b->method == PS_METHOD_PAIRSIGHT_MLP)
        return psi_mlp_predict(b->mlp[side], x, n, out);
    int f = b->ridge[side].scale.n;
    float *tmp = psi_malloc((size_t)f * sizeof *tmp);
    if (!tmp)
        return PS_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        out[i] = ridge_predict_row(&b->ridge[side], x + i * (size_t)f, tmp);
    free(tmp);
    return 0;
}

/* Predict n queries; x_hp/x_lp are their PairSight feature rows when the
 * caller has them (NULL: built here), solo[2][n] their standalone latencies
 * when known (NULL: computed here). */
/* The rule methods: one factor per intensity class and side (and the fixed
 * costs), applied to the query's class columns. */
static int predict_rules(const ps_baseline_t *b, const ps_ops_t *ops, const ps_query_t *q, size_t n, double *hp,
                         double *lp)
{
    for (size_t i = 0; i < n; i++) {
        double t[N_COLS];
        int rc = rule_columns(ops, &q[i], PS_SIDE_HP, t);
        if (rc != 0)
            return rc;
        hp[i] = rule_predict(b->factor[0], t);
        if ((rc = rule_columns(ops, &q[i], PS_SIDE_LP, t)) != 0)
            return rc;
        lp[i] = rule_predict(b->factor[1], t);
    }
    return 0;
}

/* Abacus: its own input row per query into the MLP, in chunks. */
static int predict_abacus(const ps_baseline_t *b, const ps_query_t *q, size_t n, const double *hs, const double *ls,
                          double *hp, double *lp)
{
    int din = abacus_n_in(b);
    enum { CHUNK = 1024 };
    float *xa = psi_malloc((size_t)CHUNK * (size_t)din * sizeof *xa);
    double *o = psi_malloc(2 * CHUNK * sizeof *o);
    int rc = (!xa || !o) ? PS_E_NOMEM : 0;
    for (size_t off = 0; off < n && rc == 0; off += CHUNK) {
        size_t B = n - off < CHUNK ? n - off : CHUNK;
        for (size_t i = 0; i < B; i++)
            abacus_row(b, &q[off + i], hs[off + i], ls[off + i], xa + i * (size_t)din);
        rc = psi_mlp_predict(b->mlp[0], xa, B, o);
        for (size_t i = 0; rc == 0 && i < B; i++) {
            hp[off + i] = hs[off + i] * exp(o[2 * i]);
            lp[off + i] = ls[off + i] * exp(o[2 * i + 1]);
        }
    }
    free(o);
    free(xa);
    return rc;
}

/* Each query's standalone latencies into hs and ls: from the caller when it
 * has them, else from the profile by intensity class. */
static int solo_latencies(const ps_ops_t *ops, const ps_query_t *q, size_t n, const double *hp_solo_in,
                          const double *lp_solo_in, double *hs, double *ls)
{
    for (size_t i = 0; i < n; i++) {
        if (hp_solo_in && lp_solo_in) {
            hs[i] = hp_solo_in[i];
            ls[i] = lp_solo_in[i];
            continue;
        }
        double t[N_CLS];
        int rc = segment_by_class(ops, &q[i], PS_SIDE_HP, t);
        if (rc != 0)
            return rc;
        hs[i] = t[0] + t[1] + t[2];
        if ((rc = segment_by_class(ops, &q[i], PS_SIDE_LP, t)) != 0)
            return rc;
        ls[i] = t[0] + t[1] + t[2];
    }
    return 0;
}

static int predict_queries(const ps_baseline_t *b, const ps_ops_t *ops, const ps_query_t *q, size_t n,
                           const float *x_hp, const float *x_lp, const double *hp_solo_in, const double *lp_solo_in,
                           double *hp, double *lp)
{
    int rc = 0;
    double *hs = psi_malloc((n ? n : 1) * sizeof *hs), *ls = psi_malloc((n ? n : 1) * sizeof *ls);
    float *xb = NULL;
    if (!hs || !ls) {
        rc = PS_E_NOMEM;
        goto done;
    }
    int needs_x = b->method == PS_METHOD_LINEAR || b->method == PS_METHOD_PAIRSIGHT_MLP;
    if (needs_x && (!x_hp || !x_lp)) {
        /* The PairSight input of both sides, with the standalone latencies. */
        int f = b->layout.n_features;
        if (!(xb = psi_malloc((n ? n : 1) * 2 * (size_t)f * sizeof *xb))) {
            rc = PS_E_NOMEM;
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            if ((rc = psi_features_build_pair(&b->layout, ops, &q[i], xb + i * (size_t)f, xb + (n + i) * (size_t)f,
                                              &hs[i], &ls[i])) != 0)
                goto done;
        x_hp = xb;
        x_lp = xb + n * (size_t)f;
    } else if ((rc = solo_latencies(ops, q, n, hp_solo_in, lp_solo_in, hs, ls)) != 0) {
        goto done;
    }
    switch (b->method) {
    case PS_METHOD_INTENSITY_RULE:
    case PS_METHOD_INTENSITY_RULE_FIT:
    case PS_METHOD_FIXED_COST: rc = predict_rules(b, ops, q, n, hp, lp); break;
    case PS_METHOD_COMPLEMENTARITY:
        for (size_t i = 0; i < n && rc == 0; i++) {
            comp_cell_t key;
            if ((rc = sample_key(ops, &q[i], &key)) != 0)
                break;
            const comp_cell_t *c = comp_lookup(b, &key);
            hp[i] = hs[i] * (c ? c->delta[0] : b->global_delta[0]);
            lp[i] = ls[i] * (c ? c->delta[1] : b->global_delta[1]);
        }
        break;
    case PS_METHOD_ABACUS_MLP: rc = predict_abacus(b, q, n, hs, ls, hp, lp); break;
    default:
        if ((rc = predict_side_x(b, PS_SIDE_HP, x_hp, n, hp)) != 0 ||
            (rc = predict_side_x(b, PS_SIDE_LP, x_lp, n, lp)) != 0)
            break;
        for (size_t i = 0; i < n; i++) {
            hp[i] = hs[i] * exp(hp[i]);
            lp[i] = ls[i] * exp(lp[i]);
        }
        break;
    }
done:
    free(hs);
    free(ls);
    free(xb);
    return rc;
}

int ps_baseline_predict(const ps_baseline_t *b, const ps_ops_t *ops, const ps_query_t *q, size_t n,
                        double *out_hp_ns, double *out_lp_ns)
{
    if (!b || !ops || (n && (!q || !out_hp_ns || !out_lp_ns)))
        return psi_error(PS_E_ARG, "baseline predict: missing argument");
    return predict_queries(b, ops, q, n, NULL, NULL, NULL, NULL, out_hp_ns, out_lp_ns);
}

int psi_baseline_predict_dataset(const ps_baseline_t *b, const ps_ops_t *ops, const psi_dataset_t *d, const size_t *idx,
                                 size_t n, double *hp, double *lp)
{
    int f = d->layout.n_features;
    int use_x = d->layout.variant == PS_FEAT_FULL &&
                (b->method == PS_METHOD_LINEAR || b->method == PS_METHOD_PAIRSIGHT_MLP);
    ps_query_t *q = psi_malloc((n ? n : 1) * sizeof *q);
    double *solo = psi_malloc((n ? n : 1) * 2 * sizeof *solo);
    float *x = use_x ? psi_malloc((n ? n : 1) * 2 * (size_t)f * sizeof *x) : NULL;
    int rc = PS_E_NOMEM;
    if (q && solo && (x || !use_x)) {
        for (size_t i = 0; i < n; i++) {
            q[i] = psi_query_of_row(d->rows[idx[i]]);
            solo[i] = d->hp_solo_ns[idx[i]];
            solo[n + i] = d->lp_solo_ns[idx[i]];
            if (use_x) {
                memcpy(x + i * (size_t)f, d->x_hp + idx[i] * (size_t)f, (size_t)f * sizeof *x);
                memcpy(x + (n + i) * (size_t)f, d->x_lp + idx[i] * (size_t)f, (size_t)f * sizeof *x);
            }
        }
        rc = predict_queries(b, ops, q, n, use_x ? x : NULL, use_x ? x + n * (size_t)f : NULL, solo,
                             solo + n, hp, lp);
    }
    free(q);
    free(solo);
    free(x);
    return rc;
}
