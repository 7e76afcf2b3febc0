#include "model/scale.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>

/* A column is compressed with log1p when it never goes negative and spans
 * more than three decades: DRAM and L2 byte counts and durations in
 * nanoseconds do, flags, stall percentages and TPC counts do not. */
#define PS_SCALE_LOG_SPAN 1000.0

int psi_scaler_fit(psi_scaler_t *s, const float *x, size_t n, int d)
{
    s->n = d;
    s->log1p = psi_calloc((size_t)d, 1);
    s->mean = psi_calloc((size_t)d, sizeof *s->mean);
    s->inv_sd = psi_calloc((size_t)d, sizeof *s->inv_sd);
    if (!s->log1p || !s->mean || !s->inv_sd) {
        psi_scaler_clear(s);
        return PS_E_NOMEM;
    }
    for (int j = 0; j < d; j++) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            double v = x[i * (size_t)d + (size_t)j];
            if (isnan(v))
                continue;
            if (v < lo)
                lo = v;
            if (v > hi)
                hi = v;
        }
        s->log1p[j] = lo >= 0 && hi > PS_SCALE_LOG_SPAN && hi > PS_SCALE_LOG_SPAN * (lo + 1e-30);
        double sum = 0, sum2 = 0;
        size_t cnt = 0;
        for (size_t i = 0; i < n; i++) {
            double v = x[i * (size_t)d + (size_t)j];
            if (isnan(v))
                continue;
            if (s->log1p[j])
                v = log1p(v);
            sum += v;
            sum2 += v * v;
            cnt++;
        }
        double mean = cnt ? sum / (double)cnt : 0;
        double var = cnt ? sum2 / (double)cnt - mean * mean : 0;
        s->mean[j] = mean;
        /* A constant column carries nothing: scale it to 0. */
        s->inv_sd[j] = var > 1e-12 * (1 + mean * mean) ? 1 / sqrt(var) : 0;
    }
    return 0;
}

void psi_scaler_row(const psi_scaler_t *s, const float *in, float *out)
{
    for (int j = 0; j < s->n; j++) {
        double v = in[j];
        if (isnan(v)) {
            out[j] = 0;
            continue;
        }
        if (s->log1p[j])
            v = log1p(v > 0 ? v : 0);
        out[j] = (float)((v - s->mean[j]) * s->inv_sd[j]);
    }
}

void psi_scaler_clear(psi_scaler_t *s)
{
    free(s->log1p);
    free(s->mean);
    free(s->inv_sd);
    s->log1p = NULL;
    s->mean = s->inv_sd = NULL;
    s->n = 0;
}
