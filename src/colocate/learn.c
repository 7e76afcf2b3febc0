/* Small learners shared by the co-location predictors: z-scores and least
 * squares (the XGBoost calls are model/xgb.c). */
#include "colocate/colocate.h"

#include "common/common.h"
#include "common/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * Least squares y ~ beta0 + sum_j beta_j z_j with z_j = (x_j - mu_j) / sd_j,
 * from the normal equations (Z'Z + lambda I) beta = Z'y, the intercept not
 * penalised. KACE normalizes its features before its linear regression; the
 * fit itself does not depend on it, the conditioning does.
 */
int psi_cl_ols(const double *x, const double *y, int n, int d, double lambda, const cl_ols_t *out)
{
    double *mu = out->mu, *sd = out->sd, *beta = out->beta;
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
    rc = psi_solve_sym(a, beta, m, 0, "least squares");
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
