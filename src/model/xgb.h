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
 * label[n]; nthread 0 = all cores. *out is the caller's to XGDMatrixFree
 * (NULL on failure). */
int psi_xgb_matrix(const float *x, const float *label, size_t n, int nf, int nthread, DMatrixHandle *out);

/* XGBoosterSetParam with a message naming name=value. */
int psi_xgb_set_param(BoosterHandle b, const char *name, const char *value);

/* The rows of the small learners: n rows of d doubles, row-major (x[n *
 * d], NAN = missing), their labels y[n] (NULL where only predicted) and
 * optional base margins margin[n] (NULL: none). Borrowed from the caller. */
typedef struct {
    const double *x, *y, *margin;
    int n, d;
} psi_xgb_rows_t;

/* Train `rounds` rounds on the rows r (labels needed) with the given "key",
 * "value" pairs (NULL-terminated). *out_booster is released with
 * psi_xgb_free. */
int psi_xgb_train(const psi_xgb_rows_t *r, const char *const *kv, int rounds, void **out_booster);

/* Predict the r->n rows of r (r->y unused) into out[r->n] (caller-owned). */
int psi_xgb_predict(void *booster, const psi_xgb_rows_t *r, double *out);

/* The same with the first `rounds` boosting rounds only (0: all). */
int psi_xgb_predict_limit(void *booster, const psi_xgb_rows_t *r, int rounds, double *out);

/* A booster from the bytes data[len] of a model file at path: checked by
 * psi_xgb_check against n_features first (PS_E_INPUT "PATH: the WHAT is not
 * a valid XGBoost model: WHY"), then loaded by XGBoost ("PATH: XGBoost:
 * loading the WHAT: ..."). *out is the caller's to XGBoosterFree. */
int psi_xgb_load(const char *path, const char *what, const unsigned char *data, size_t len, int n_features,
                 BoosterHandle *out);

/* Release a booster of psi_xgb_train; NULL is a no-op. */
void psi_xgb_free(void *booster);

#endif
