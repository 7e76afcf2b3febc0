/*
 * auto's stacked blend (docs/colocate.md, "Sparse tables and auto"): the
 * weights of a convex combination of the candidates' predictions, learned
 * from their out-of-fold predictions on the training co-locations only
 * (stacked regression, Wolpert 1992, Breiman 1996; the super learner of van
 * der Laan, Polley and Hubbard 2007), shrunk toward equal weights; and the
 * blend model that predicts with them.
 *
 * The weights minimize, over w >= 0 with sum w = 1,
 *
 *     mean_c (1 - sum_k w_k p_kc / y_c)^2 + lambda sum_k (w_k - 1/K)^2,
 *
 * p_kc kind k's out-of-fold predicted sum of co-location c, y_c its measured
 * sum (relative errors: sums of 2- and 4-way co-locations share one scale).
 * lambda = g x trace(G) / K, G the mean of a a^T (a_k = p_kc / y_c), and g
 * is chosen from {0, 0.001, 0.01, 0.1, 1, equal weights} by cross-validation
 * over auto's folds (weights fitted on the others' rows, the squared
 * relative error of the held-out fold's rows; ties to the stronger
 * shrinkage). With rows in fewer than two folds the weights are equal.
 */
#include "colocate/model_internal.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STACK_ITERS 4000

static const double stack_grid[] = {0, 0.001, 0.01, 0.1, 1, INFINITY};
#define STACK_NG ((int)(sizeof stack_grid / sizeof stack_grid[0]))

/* Euclidean projection of v[K] onto the simplex (Duchi et al. 2008). */
static void simplex_project(double *v, int K)
{
    double u[PS_COLOC_KIND_COUNT], css = 0, theta = 0;
    memcpy(u, v, (size_t)K * sizeof *u);
    for (int i = 1; i < K; i++) /* insertion sort, descending */
        for (int j = i; j > 0 && u[j] > u[j - 1]; j--) {
            double t = u[j];
            u[j] = u[j - 1];
            u[j - 1] = t;
        }
    for (int i = 0; i < K; i++) {
        css += u[i];
        double t = (css - 1) / (i + 1);
        if (u[i] - t > 0)
            theta = t;
    }
    for (int i = 0; i < K; i++)
        v[i] = fmax(0, v[i] - theta);
}

/* A quadratic loss in the blend's weights w[K]: c - 2 b.w + w^T G w (G is
 * K x K, row-major). */
typedef struct {
    double G[PS_COLOC_KIND_COUNT * PS_COLOC_KIND_COUNT];
    double b[PS_COLOC_KIND_COUNT];
    double c;
} stack_loss_t;

/* q->G = mean a a^T and q->b = mean a over the rows of r with use[row]
 * (NULL: all). */
static int moments(const cl_stack_rows_t *r, const char *use, stack_loss_t *q)
{
    const int n = r->n, K = r->K;
    double *G = q->G, *b = q->b;
    int m = 0;
    memset(G, 0, (size_t)K * K * sizeof *G);
    memset(b, 0, (size_t)K * sizeof *b);
    for (int i = 0; i < n; i++) {
        if (use && !use[i])
            continue;
        const double *ai = r->a + (size_t)i * K;
        for (int j = 0; j < K; j++) {
            b[j] += ai[j];
            for (int l = 0; l < K; l++)
                G[j * K + l] += ai[j] * ai[l];
        }
        m++;
    }
    for (int j = 0; m && j < K * K; j++)
        G[j] /= m;
    for (int j = 0; m && j < K; j++)
        b[j] /= m;
    return m;
}

/* The weights for G, b and shrinkage g (INFINITY: equal), by accelerated
 * projected gradient (FISTA) from equal weights. */
static void solve_weights(const double *G, const double *b, int K, double g, double *w)
{
    for (int j = 0; j < K; j++)
        w[j] = 1.0 / K;
    if (isinf(g) || K < 2)
        return;
    double tr = 0;
    for (int j = 0; j < K; j++)
        tr += G[j * K + j];
    double lam = g * tr / K, step = 1 / (2 * (tr + lam) + 1e-300), y[PS_COLOC_KIND_COUNT], prev[PS_COLOC_KIND_COUNT];
    double t = 1;
    memcpy(y, w, (size_t)K * sizeof *y);
    for (int it = 0; it < STACK_ITERS; it++) {
        memcpy(prev, w, (size_t)K * sizeof *prev);
        for (int j = 0; j < K; j++) {
            double gr = -2 * b[j] + 2 * lam * (y[j] - 1.0 / K);
            for (int l = 0; l < K; l++)
                gr += 2 * G[j * K + l] * y[l];
            w[j] = y[j] - step * gr;
        }
        simplex_project(w, K);
        double tn = (1 + sqrt(1 + 4 * t * t)) / 2;
        for (int j = 0; j < K; j++)
            y[j] = w[j] + (t - 1) / tn * (w[j] - prev[j]);
        t = tn;
    }
}

/* Squared relative error of the rows of fold f under weights w. */
static double fold_loss(const cl_stack_rows_t *r, int f, const double *w)
{
    double s = 0;
    for (int i = 0; i < r->n; i++) {
        if (r->fold[i] != f)
            continue;
        double e = 1;
        for (int j = 0; j < r->K; j++)
            e -= w[j] * r->a[(size_t)i * r->K + j];
        s += e * e;
    }
    return s;
}

/* The within-target part of the within rule over the rows with use[i]
 * (NULL: all), added to q's A = G[K x K], B = b[K] and C = c (sums, not
 * means): for each
 * (target, k) group with at least two such rows, the means of y and of each
 * kind's predicted sum p = a y over them; each row of the group adds x x^T,
 * t x and t^2, x = (p - mean p) / mean y, t = (y - mean y) / mean y. sc
 * holds ng x (K + 2) doubles. */
static void within_moments(const cl_stack_rows_t *r, const char *use, stack_loss_t *q, double *sc)
{
    const int n = r->n, K = r->K;
    double *A = q->G, *B = q->b, *C = &q->c;
    int w = K + 2;
    memset(sc, 0, (size_t)r->ng * w * sizeof *sc);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            if (use && !use[i])
                continue;
            const double *ai = r->a + (size_t)i * K;
            for (int m = 0; m < r->gm; m++) {
                int gi = r->grp[(size_t)i * r->gm + m];
                if (gi < 0)
                    continue;
                double *g = sc + (size_t)gi * w;
                if (pass == 0) { /* count, sum y, sum p_k */
                    g[0]++;
                    g[1] += r->y[i];
                    for (int k = 0; k < K; k++)
                        g[2 + k] += ai[k] * r->y[i];
                    continue;
                }
                if (g[0] < 2)
                    continue;
                double my = g[1] / g[0], x[PS_COLOC_KIND_COUNT], t = (r->y[i] - my) / my;
                for (int k = 0; k < K; k++)
                    x[k] = (ai[k] * r->y[i] - g[2 + k] / g[0]) / my;
                *C += t * t;
                for (int j = 0; j < K; j++) {
                    B[j] += t * x[j];
                    for (int l = 0; l < K; l++)
                        A[j * K + l] += x[j] * x[l];
                }
            }
        }
}

/* The loss's moments over the rows with use[i] (NULL: all), as means over
 * those rows: G, b as moments() (the sums' relative errors), plus, with
 * r->grp, the within-target part; c the constant term. Returns the rows. */
static int all_moments(const cl_stack_rows_t *r, const char *use, stack_loss_t *q, double *sc)
{
    const int K = r->K;
    int m = moments(r, use, q);
    q->c = m ? 1 : 0;
    if (!r->grp || !m)
        return m;
    stack_loss_t wq = {{0}, {0}, 0};
    within_moments(r, use, &wq, sc);
    for (int j = 0; j < K * K; j++)
        q->G[j] += wq.G[j] / m;
    for (int j = 0; j < K; j++)
        q->b[j] += wq.b[j] / m;
    q->c += wq.c / m;
    return m;
}

/* The held-out loss of fold f under weights w: the sums' squared relative
 * errors (as the blend rule has always summed them), plus with r->grp the
 * within-target part over the groups among fold f's rows. */
static double heldout_loss(const cl_stack_rows_t *r, int f, const double *w, const char *in_f, double *sc)
{
    const int K = r->K;
    double s = fold_loss(r, f, w);
    if (!r->grp)
        return s;
    stack_loss_t wq = {{0}, {0}, 0};
    within_moments(r, in_f, &wq, sc);
    s += wq.c;
    for (int j = 0; j < K; j++) {
        s -= 2 * w[j] * wq.b[j];
        for (int l = 0; l < K; l++)
            s += w[j] * wq.G[j * K + l] * w[l];
    }
    return s;
}

int psi_cl_stack_weights(const cl_stack_rows_t *r, double *w, double *g_out)
{
    const int *fold = r->fold, n = r->n, K = r->K, nfolds = r->nfolds;
    stack_loss_t q;
    double loss[STACK_NG] = {0};
    char *use = psi_malloc(2 * (size_t)n + 1), *in_f = use + n;
    double *sc = r->grp ? psi_malloc((size_t)r->ng * (K + 2) * sizeof *sc + 1) : NULL;
    if (!use || (r->grp && !sc)) {
        free(use);
        free(sc);
        return PS_E_NOMEM;
    }
    int folds_with_rows = 0;
    for (int f = 0; f < nfolds; f++) {
        int in = 0, out = 0;
        for (int i = 0; i < n; i++) {
            use[i] = fold[i] != f;
            in_f[i] = !use[i];
            in += fold[i] == f;
            out += use[i];
        }
        if (!in || !out)
            continue;
        folds_with_rows++;
        all_moments(r, use, &q, sc);
        for (int gi = 0; gi < STACK_NG; gi++) {
            double wq[PS_COLOC_KIND_COUNT];
            solve_weights(q.G, q.b, K, stack_grid[gi], wq);
            loss[gi] += heldout_loss(r, f, wq, in_f, sc);
        }
    }
    int best = STACK_NG - 1; /* equal weights */
    for (int gi = STACK_NG - 2; gi >= 0 && folds_with_rows >= 2; gi--)
        if (loss[gi] < loss[best])
            best = gi;
    all_moments(r, NULL, &q, sc);
    free(use);
    free(sc);
    solve_weights(q.G, q.b, K, stack_grid[best], w);
    *g_out = stack_grid[best];
    return PS_OK;
}

/* ---- the blend model ---- */

int psi_blend_fit(ps_coloc_model_t *m, const cl_train_t *t, const ps_coloc_params_t *p, const double *w,
                  ps_coloc_model_t **have)
{
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        if (!(w[k] > 0))
            continue;
        int j = m->n_blend;
        m->blend_w[j] = w[k];
        if (have && have[k]) {
            m->blend[j] = have[k];
            have[k] = NULL;
        } else {
            ps_coloc_params_t q = *p;
            q.kind = (ps_coloc_kind_t)k;
            int rc = psi_cl_model_fit_base(t->d, t->idx, t->n, &q, &m->blend[j]);
            if (rc)
                return rc;
        }
        m->n_blend++;
    }
    return m->n_blend ? PS_OK : psi_error(PS_E_INPUT, "colocate: auto: no candidate predictor could be fitted");
}

/* Each workload's blended throughput: sum_k w_k slot_k, where a sum kind's
 * slot is its predicted sum split in proportion to the slots' solo
 * throughputs (psi_cl_model_slots, as placement splits it); *out_sum is their
 * sum. */
int psi_blend_predict(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum)
{
    const cl_coloc_t *c = &d->c[ci];
    double slot[64];
    for (int s = 0; s < c->k; s++)
        out_slot[s] = 0;
    for (int j = 0; j < m->n_blend; j++) {
        int rc = psi_cl_model_slots_base(m->blend[j], d, ci, slot);
        if (rc)
            return rc;
        for (int s = 0; s < c->k; s++)
            out_slot[s] += m->blend_w[j] * slot[s];
    }
    *out_sum = 0;
    for (int s = 0; s < c->k; s++)
        *out_sum += out_slot[s];
    return PS_OK;
}
