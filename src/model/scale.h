/*
 * Column scaling shared by the learned baselines (ridge and the MLPs):
 * heavy-tailed non-negative columns (byte counts, durations) are first
 * compressed with log1p, then every column is standardized with the mean and
 * standard deviation of the training rows. Missing values (NAN) become 0 after
 * standardization, i.e. the training mean.
 */
#ifndef PS_MODEL_SCALE_H
#define PS_MODEL_SCALE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int n;
    unsigned char *log1p;  /* [n] 1 when the column is compressed with log1p */
    double *mean, *inv_sd; /* [n] after the optional log1p */
} psi_scaler_t;

/* Fit on n rows of d columns (row i at x + i * d). 0 or PS_E_NOMEM. */
int psi_scaler_fit(psi_scaler_t *s, const float *x, size_t n, int d);
/* Scale one row of s->n columns from in to out (may alias). */
void psi_scaler_row(const psi_scaler_t *s, const float *in, float *out);
void psi_scaler_clear(psi_scaler_t *s);

/* The random generator is psi_rng_t of src/common/common.h. */

#endif
