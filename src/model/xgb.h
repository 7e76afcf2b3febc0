/* The one XGBoost wrapper of the library: its error helper, matrices from
 * row-major arrays, a booster's parameters, and train/predict for the small
 * learners (the co-location predictors, the overlap model). The segment
 * model's trainer (train.c) builds on the same calls. */
#ifndef PS_MODEL_XGB_H
#define PS_MODEL_XGB_H

#include <stddef.h>
#include <xgboost/c_api.h>

/* Record XGBoost's last error as a PS_E_BACKEND message about what
 * (PS_E_NOMEM when a C++ allocation inside it failed). */
int psi_xgb_error(const char *what);

/* A matrix of n rows of nf float columns (NAN = missing) with optional
 * labels[n] and base_margin[n]; nthread 0 = all cores. *out is the
 * caller's to XGDMatrixFree (NULL on failure). */
int psi_xgb_matrix(const float *x, const float *label, const float *margin, size_t n, int nf, int nthread,
                   DMatrixHandle *out);

/* XGBoosterSetParam with a message naming name=value. */
int psi_xgb_set_param(BoosterHandle b, const char *name, const char *value);

/* Train `rounds` rounds on x[n*d] (doubles, NAN = missing) with the given
 * "key", "value" pairs (NULL-terminated), optional base_margin[n].
 * *out_booster is released with psi_xgb_free. */
int psi_xgb_train(const double *x, const double *y, const double *margin, int n, int d, const char *const *kv,
                  int rounds, void **out_booster);

/* Predict n rows of x[n*d] into out[n] (caller-owned), optional margin[n]. */
int psi_xgb_predict(void *booster, const double *x, const double *margin, int n, int d, double *out);

/* The same with the first `rounds` boosting rounds only (0: all). */
int psi_xgb_predict_limit(void *booster, const double *x, const double *margin, int n, int d, int rounds, double *out);

/* A booster from the bytes data[len] of a model file at path: checked by
 * psi_xgb_check against n_features first (PS_E_INPUT "PATH: the WHAT is not
 * a valid XGBoost model: WHY"), then loaded by XGBoost ("PATH: XGBoost:
 * loading the WHAT: ..."). *out is the caller's to XGBoosterFree. */
int psi_xgb_load(const char *path, const char *what, const unsigned char *data, size_t len, int n_features,
                 BoosterHandle *out);

/* Release a booster of psi_xgb_train; NULL is a no-op. */
void psi_xgb_free(void *booster);

#endif
