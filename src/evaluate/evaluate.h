/*
 * Internal interface of the evaluation stage: metrics, the baselines trained
 * on a built data set (src/features) and the report writer.
 */
#ifndef PS_EVALUATE_H
#define PS_EVALUATE_H

#include "features/features.h"
#include "pairsight.h"

#include <stdio.h>

/* ---- metrics (metrics.c) ---- */

/* Absolute percentage error of one prediction: 100 |pred - meas| / meas. */
double psi_ape(double pred, double meas);
/* MAPE in percent over n pairs (NAN when n is 0). */
double psi_mape(const double *pred, const double *meas, size_t n);
/* Share (percent) of predictions with |pred - meas| / meas <= tol. */
double psi_within(const double *pred, const double *meas, size_t n, double tol);
/* Sort the absolute percentage errors of n pairs into out[n] (ascending):
 * out[i] is the error at cumulative share (i + 1) / n, the error CDF. */
void psi_error_cdf(const double *pred, const double *meas, size_t n, double *out);
/* Pearson correlation of n pairs, NAN pairs skipped (NAN when undefined). */
double psi_pearson(const double *a, const double *b, size_t n);

/* ---- baselines on a data set (baselines.c) ---- */

/* Train method on the samples i of d with use[i] != 0 (use NULL: the
 * PS_SPLIT_TRAIN samples). d must have the PS_FEAT_FULL layout for the
 * methods on the PairSight input. */
int psi_baseline_fit(ps_method_t method, const ps_ops_t *ops, const psi_dataset_t *d, const unsigned char *use,
                     const ps_baseline_params_t *p, ps_baseline_t **out);

/* Predict samples idx[0..n) of d into out[2 * n] (ns: HP in out[0..n), LP
 * in out[n..2n)), using the feature vectors already in d where the method
 * reads them. */
int psi_baseline_predict_dataset(const ps_baseline_t *b, const ps_ops_t *ops, const psi_dataset_t *d, const size_t *idx,
                                 size_t n, double *out);

/* Seconds spent in training. */
double psi_baseline_train_seconds(const ps_baseline_t *b);

#endif
