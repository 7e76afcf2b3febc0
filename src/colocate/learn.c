/* Small learners shared by the co-location predictors: a random generator,
 * least squares, and the XGBoost calls. */
#include "colocate/colocate.h"

#include "common/common.h"
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>

void psi_cl_zscore(const double *x, int n, int d, double *mu, double *sd)
{
    for (int j = 0; j < d; j++) {
        double s = 0, s2 = 0;
        int k = 0;
        for (int i = 0; i < n; i++)
            if (!isnan(x[i * d + j])) {
                s += x[i * d + j];
                k++;
            }
        mu[j] = k ? s / k : 0;
        for (int i = 0; i < n; i++)
            if (!isnan(x[i * d + j]))
                s2 += (x[i * d + j] - mu[j]) * (x[i * d + j] - mu[j]);
        sd[j] = k > 1 ? sqrt(s2 / k) : 0;
    }
}

/* Solve a (m x m) by Gaussian elimination with partial pivoting; a[] and b[]
 * are overwritten, the solution is left in b. */
static int solve(double *a, double *b, int m)
{
    for (int i = 0; i < m; i++) {
        int p = i;
        for (int r = i + 1; r < m; r++)
            if (fabs(a[r * m + i]) > fabs(a[p * m + i]))
                p = r;
        if (fabs(a[p * m + i]) < 1e-300)
            return psi_error(PS_E_INPUT, "least squares: singular system");
        if (p != i) {
            for (int c = 0; c < m; c++) {
                double t = a[i * m + c];
                a[i * m + c] = a[p * m + c];
                a[p * m + c] = t;
            }
            double t = b[i];
            b[i] = b[p];
            b[p] = t;
        }
        for (int r = 0; r < m; r++) {
            if (r == i)
                continue;
            double f = a[r * m + i] / a[i * m + i];
            if (f == 0)
                continue;
            for (int c = i; c < m; c++)
                a[r * m + c] -= f * a[i * m + c];
            b[r] -= f * b[i];
        }
    }
    for (int i = 0; i < m; i++)
        b[i] /= a[i * m + i];
    return 0;
}

/*
 * Least squares y ~ beta0 + sum_j beta_j z_j with z_j = (x_j - mu_j) / sd_j,
 * from the normal equations (Z'Z + lambda I) beta = Z'y, the intercept not
 * penalised. KACE normalizes its features before its linear regression; the
 * fit itself does not depend on it, the conditioning does.
 */
int psi_cl_ols(const double *x, const double *y, int n, int d, double lambda, double *mu, double *sd, double *beta)
{
    int m = d + 1, rc = 0;
    psi_cl_zscore(x, n, d, mu, sd);
    for (int j = 0; j < d; j++) {
        if (!(sd[j] > 1e-12 * (1 + fabs(mu[j]))))
            sd[j] = 0; /* constant or missing: left out */
    }
    double *a = psi_calloc((size_t)m * m, sizeof *a), *z = psi_malloc((size_t)m * sizeof *z);
    if (!a || !z) {
        rc = PS_E_NOMEM;
        goto done;
    }
    memset(beta, 0, (size_t)m * sizeof *beta);
    for (int i = 0; i < n; i++) {
        z[0] = 1;
        for (int j = 0; j < d; j++) {
            double v = x[i * d + j];
            z[j + 1] = (sd[j] == 0 || isnan(v)) ? 0 : (v - mu[j]) / sd[j];
        }
        for (int r = 0; r < m; r++) {
            beta[r] += z[r] * y[i];
            for (int c = 0; c < m; c++)
                a[r * m + c] += z[r] * z[c];
        }
    }
    for (int j = 1; j < m; j++)
        a[j * m + j] += sd[j - 1] == 0 ? 1.0 : lambda;
    rc = solve(a, beta, m);
done:
    free(a);
    free(z);
    return rc;
}

double psi_cl_ols_eval(const double *x, int d, const double *mu, const double *sd, const double *beta)
{
    double s = beta[0];
    for (int j = 0; j < d; j++)
        if (sd[j] > 0 && !isnan(x[j]))
            s += beta[j + 1] * (x[j] - mu[j]) / sd[j];
    return s;
}

static int make_dmatrix(const double *x, const double *margin, int n, int d, DMatrixHandle *out)
{
    float *xf = psi_malloc((size_t)n * d * sizeof *xf + 1);
    if (!xf)
        return PS_E_NOMEM;
    for (long i = 0; i < (long)n * d; i++)
        xf[i] = (float)x[i];
    int rc = XGDMatrixCreateFromMat(xf, (bst_ulong)n, (bst_ulong)d, NAN, out) ? psi_xgb_error("matrix") : 0;
    free(xf);
    if (!rc && margin) {
        float *mf = psi_malloc((size_t)n * sizeof *mf + 1);
        if (!mf)
            return PS_E_NOMEM;
        for (int i = 0; i < n; i++)
            mf[i] = (float)margin[i];
        if (XGDMatrixSetFloatInfo(*out, "base_margin", mf, (bst_ulong)n))
            rc = psi_xgb_error("base_margin");
        free(mf);
    }
    return rc;
}

int psi_cl_xgb_train(const double *x, const double *y, const double *margin, int n, int d, const char *const *kv,
                     int rounds, void **out_booster)
{
    DMatrixHandle dm = NULL;
    BoosterHandle b = NULL;
    *out_booster = NULL;
    int rc = make_dmatrix(x, margin, n, d, &dm);
    if (rc)
        return rc;
    float *yf = psi_malloc((size_t)n * sizeof *yf + 1);
    if (!yf) {
        XGDMatrixFree(dm);
        return PS_E_NOMEM;
    }
    for (int i = 0; i < n; i++)
        yf[i] = (float)y[i];
    if (XGDMatrixSetFloatInfo(dm, "label", yf, (bst_ulong)n) || XGBoosterCreate(&dm, 1, &b)) {
        rc = psi_xgb_error("create");
        goto done;
    }
    for (int i = 0; kv[i]; i += 2)
        if (XGBoosterSetParam(b, kv[i], kv[i + 1])) {
            rc = psi_xgb_error(kv[i]);
            goto done;
        }
    for (int it = 0; it < rounds; it++)
        if (XGBoosterUpdateOneIter(b, it, dm)) {
            rc = psi_xgb_error("train");
            goto done;
        }
    *out_booster = b;
    b = NULL;
done:
    free(yf);
    if (b)
        XGBoosterFree(b);
    XGDMatrixFree(dm);
    return rc;
}

int psi_cl_xgb_predict(void *booster, const double *x, const double *margin, int n, int d, double *out)
{
    return psi_cl_xgb_predict_limit(booster, x, margin, n, d, 0, out);
}

int psi_cl_xgb_predict_limit(void *booster, const double *x, const double *margin, int n, int d, int rounds,
                             double *out)
{
    DMatrixHandle dm = NULL;
    int rc = make_dmatrix(x, margin, n, d, &dm);
    if (rc)
        return rc;
    bst_ulong len = 0;
    const float *res = NULL;
    if (XGBoosterPredict((BoosterHandle)booster, dm, 0, (unsigned)rounds, 0, &len, &res) || len != (bst_ulong)n)
        rc = psi_xgb_error("predict");
    else
        for (int i = 0; i < n; i++)
            out[i] = res[i];
    XGDMatrixFree(dm);
    return rc;
}

void psi_cl_xgb_free(void *booster)
{
    if (booster)
        XGBoosterFree((BoosterHandle)booster);
}
