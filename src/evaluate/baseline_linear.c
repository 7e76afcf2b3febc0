/* The linear baseline: ridge regression of log delta on the PairSight input,
 * one per side, solved in closed form. */
#include "evaluate/baseline_internal.h"

#include "common/common.h"
#include "common/linalg.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Ridge regression on standardized inputs: w = (Z^T Z + lambda n I)^-1 Z^T
 * (y - mean y), b = mean y, with the Gram matrix from OpenBLAS (dsyrk) and the
 * Cholesky solve from LAPACK (psi_solve_sym). */
static int ridge_solve(const double *gram, const double *zty, int f, size_t n, double lambda, double *w)
{
    double *a = psi_malloc((size_t)f * (size_t)f * sizeof *a);
    if (!a)
        return PS_E_NOMEM;
    memcpy(a, gram, (size_t)f * (size_t)f * sizeof *a);
    for (int j = 0; j < f; j++)
        a[(size_t)j * (size_t)f + (size_t)j] += lambda * (double)n + 1e-9;
    memcpy(w, zty, (size_t)f * sizeof *w);
    int rc = psi_solve_sym(a, w, f, 0, "ridge regression");
    free(a);
    return rc;
}

/* Z^T Z and Z^T y over the first hi rows of x scaled by s (y already
 * centred). */
static int ridge_moments(const psi_scaler_t *s, const float *x, const double *y, size_t hi, double *gram, double *zty)
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
    for (size_t off = 0; off < hi; off += CHUNK) {
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

/* Fit one side on rows (their targets centred in place); with lambda < 0
 * choose lambda among a few decades by the error on the last n_tune rows
 * (whole experiments: tuning_roles), then refit on all rows. */
static int fit_ridge(ridge_t *r, const psi_bl_rows_t *rows, double lambda)
{
    const float *x = rows->x;
    double *y = rows->y;
    size_t n = rows->n, n_tune = rows->n_tune;
    int f = rows->f;
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
        if ((rc = ridge_moments(&r->scale, x, y, n_fit, gram, zty)) != 0)
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
    if ((rc = ridge_moments(&r->scale, x, y, n, gram, zty)) != 0)
        goto done;
    rc = ridge_solve(gram, zty, f, n, lambda, r->w);
done:
    free(gram);
    free(zty);
    free(tmp);
    return rc;
}

static int fit_side(ps_baseline_t *b, const psi_bl_rows_t *r, const ps_baseline_params_t *p)
{
    return fit_ridge(&b->ridge[r->side], r, p->ridge_lambda);
}

int psi_bl_fit_linear(ps_baseline_t *b, const psi_dataset_t *d, const unsigned char *use, const ps_baseline_params_t *p)
{
    return psi_bl_fit_sides(b, d, use, p, fit_side);
}

int psi_bl_predict_linear(const ps_baseline_t *b, int side, const float *x, size_t n, double *out)
{
    int f = b->ridge[side].scale.n;
    float *tmp = psi_malloc((size_t)f * sizeof *tmp);
    if (!tmp)
        return PS_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        out[i] = ridge_predict_row(&b->ridge[side], x + i * (size_t)f, tmp);
    free(tmp);
    return 0;
}
