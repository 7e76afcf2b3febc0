/* Error metrics of the paper's evaluation (Section IV): MAPE, the share
 * within 10%, error CDFs and the Pearson correlations of Fig. 2. */
#include "common/common.h"
#include "evaluate/evaluate.h"

#include <math.h>
#include <stdlib.h>

double psi_ape(double pred, double meas) { return 100.0 * fabs(pred - meas) / meas; }

double psi_mape(const double *pred, const double *meas, size_t n)
{
    if (n == 0)
        return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += psi_ape(pred[i], meas[i]);
    return s / (double)n;
}

double psi_within(const double *pred, const double *meas, size_t n, double tol)
{
    if (n == 0)
        return NAN;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += fabs(pred[i] - meas[i]) <= tol * meas[i];
    return 100.0 * (double)k / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void psi_error_cdf(const double *pred, const double *meas, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = psi_ape(pred[i], meas[i]);
    qsort(out, n, sizeof *out, cmp_double);
}

double psi_pearson(const double *a, const double *b, size_t n)
{
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i]))
            continue;
        sa += a[i];
        sb += b[i];
        k++;
    }
    if (k < 2)
        return NAN;
    double ma = sa / (double)k, mb = sb / (double)k;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i]))
            continue;
        double da = a[i] - ma, db = b[i] - mb;
        saa += da * da;
        sbb += db * db;
        sab += da * db;
    }
    if (saa <= 0 || sbb <= 0)
        return NAN;
    return sab / sqrt(saa * sbb);
}

int ps_accuracy(const double *pred_hp_ns, const double *pred_lp_ns, const double *hp_ns,
                const double *lp_ns, size_t n, ps_accuracy_t *out)
{
    if (!pred_hp_ns || !pred_lp_ns || !hp_ns || !lp_ns || !out || n == 0)
        return psi_error(PS_E_ARG, "accuracy: no predictions");
    for (size_t i = 0; i < n; i++)
        if (!(hp_ns[i] > 0) || !(lp_ns[i] > 0))
            return psi_error(PS_E_ARG, "accuracy: measurement %zu is not positive", i);
    out->n = n;
    out->hp_mape = psi_mape(pred_hp_ns, hp_ns, n);
    out->lp_mape = psi_mape(pred_lp_ns, lp_ns, n);
    out->hp_within10 = psi_within(pred_hp_ns, hp_ns, n, 0.10);
    return 0;
}
