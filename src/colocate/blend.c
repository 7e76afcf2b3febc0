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

/* G = mean a a^T and b = mean a over the rows with use[row] (NULL: all). */
static int moments(const double *a, int n, int K, const char *use, double *G, double *b)
{
    int m = 0;
    memset(G, 0, (size_t)K * K * sizeof *G);
    memset(b, 0, (size_t)K * sizeof *b);
    for (int i = 0; i < n; i++) {
        if (use && !use[i])
            continue;
        const double *r = a + (size_t)i * K;
        for (int j = 0; j < K; j++) {
            b[j] += r[j];
            for (int l = 0; l < K; l++)
                G[j * K + l] += r[j] * r[l];
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
static double fold_loss(const double *a, const int *fold, int n, int K, int f, const double *w)
{
    double s = 0;
    for (int i = 0; i < n; i++) {
        if (fold[i] != f)
            continue;
        double e = 1;
        for (int j = 0; j < K; j++)
            e -= w[j] * a[(size_t)i * K + j];
        s += e * e;
    }
    return s;
}

/* The within-target part of the within rule over the rows with use[i]
 * (NULL: all), added to A[K x K], B[K] and *C (sums, not means): for each
 * (target, k) group with at least two such rows, the means of y and of each
 * kind's predicted sum p = a y over them; each row of the group adds x x^T,
 * t x and t^2, x = (p - mean p) / mean y, t = (y - mean y) / mean y. sc
 * holds ng x (K + 2) doubles. */
static void within_moments(const cl_stack_rows_t *r, int n, int K, const char *use, double *A, double *B, double *C,
                           double *sc)
{
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
 * r->grp, the within-target part; *c the constant term. Returns the rows. */
static int all_moments(const cl_stack_rows_t *r, int n, int K, const char *use, double *G, double *b, double *c,
                       double *sc)
{
    int m = moments(r->a, n, K, use, G, b);
    *c = m ? 1 : 0;
    if (!r->grp || !m)
        return m;
    double A[PS_COLOC_KIND_COUNT * PS_COLOC_KIND_COUNT] = {0}, B[PS_COLOC_KIND_COUNT] = {0}, C = 0;
    within_moments(r, n, K, use, A, B, &C, sc);
    for (int j = 0; j < K * K; j++)
        G[j] += A[j] / m;
    for (int j = 0; j < K; j++)
        b[j] += B[j] / m;
    *c += C / m;
    return m;
}

/* The held-out loss of fold f under weights w: the sums' squared relative
 * errors (as the blend rule has always summed them), plus with r->grp the
 * within-target part over the groups among fold f's rows. */
static double heldout_loss(const cl_stack_rows_t *r, const int *fold, int n, int K, int f, const double *w,
                           const char *in_f, double *sc)
{
    double s = fold_loss(r->a, fold, n, K, f, w);
    if (!r->grp)
        return s;
    double A[PS_COLOC_KIND_COUNT * PS_COLOC_KIND_COUNT] = {0}, B[PS_COLOC_KIND_COUNT] = {0}, C = 0;
    within_moments(r, n, K, in_f, A, B, &C, sc);
    s += C;
    for (int j = 0; j < K; j++) {
        s -= 2 * w[j] * B[j];
        for (int l = 0; l < K; l++)
            s += w[j] * A[j * K + l] * w[l];
    }
    return s;
}

int psi_cl_stack_weights_rows(const cl_stack_rows_t *r, const int *fold, int n, int K, int nfolds, double *w,
                              double *g_out)
{
    double G[PS_COLOC_KIND_COUNT * PS_COLOC_KIND_COUNT], b[PS_COLOC_KIND_COUNT], c, loss[STACK_NG] = {0};
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
        all_moments(r, n, K, use, G, b, &c, sc);
        for (int q = 0; q < STACK_NG; q++) {
            double wq[PS_COLOC_KIND_COUNT];
            solve_weights(G, b, K, stack_grid[q], wq);
            loss[q] += heldout_loss(r, fold, n, K, f, wq, in_f, sc);
        }
    }
    int best = STACK_NG - 1; /* equal weights */
    for (int q = STACK_NG - 2; q >= 0 && folds_with_rows >= 2; q--)
        if (loss[q] < loss[best])
            best = q;
    all_moments(r, n, K, NULL, G, b, &c, sc);
    free(use);
    free(sc);
    solve_weights(G, b, K, stack_grid[best], w);
    *g_out = stack_grid[best];
    return PS_OK;
}

int psi_cl_stack_weights(const double *a, const int *fold, int n, int K, int nfolds, double *w, double *g_out)
{
    cl_stack_rows_t r = {.a = a};
    return psi_cl_stack_weights_rows(&r, fold, n, K, nfolds, w, g_out);
}

/* ---- the blend model ---- */

int psi_blend_fit(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train, const ps_coloc_params_t *p,
                  const double *w, ps_coloc_model_t **have)
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
            int rc = psi_cl_model_fit_base(d, train, n_train, &q, &m->blend[j]);
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
