/* The one XGBoost wrapper (xgb.h): the error helper of every XGBoost call,
 * and the matrix, parameter, train and predict calls that the segment
 * model's trainer, the co-location learners and the overlap model share. */
#include "model/xgb.h"

#include "common/common.h"
#include "model/xgbcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* XGBoost reports a failed C++ allocation as its exception's text. */
int psi_xgb_error(const char *what)
{
    const char *e = XGBGetLastError();
    int oom = strstr(e, "bad_alloc") || strstr(e, "bad_array_new_length");
    return psi_error(oom ? PS_E_NOMEM : PS_E_BACKEND, "XGBoost: %s: %s", what, oom ? "out of memory" : e);
}

/* The float column field ("label", "base_margin") of *dm from v[n] (NULL:
 * left unset); on failure *dm is freed and NULL, and the message names what. */
static int set_info(DMatrixHandle *dm, const char *field, const float *v, size_t n, const char *what)
{
    if (!v || XGDMatrixSetFloatInfo(*dm, field, v, (bst_ulong)n) == 0)
        return PS_OK;
    int rc = psi_xgb_error(what);
    XGDMatrixFree(*dm);
    *dm = NULL;
    return rc;
}

int psi_xgb_matrix(const float *x, const float *label, size_t n, int nf, int nthread, DMatrixHandle *out)
{
    *out = NULL;
    if (XGDMatrixCreateFromMat_omp(x, (bst_ulong)n, (bst_ulong)nf, NAN, out, nthread) != 0)
        return psi_xgb_error("creating a matrix");
    return set_info(out, "label", label, n, "setting labels");
}

int psi_xgb_set_param(BoosterHandle b, const char *name, const char *value)
{
    if (XGBoosterSetParam(b, name, value) != 0) {
        char what[128];
        snprintf(what, sizeof what, "setting %s=%s", name, value);
        return psi_xgb_error(what);
    }
    return PS_OK;
}

/* v[n] in single precision (XGBoost's), NULL for NULL; *rc is set on a
 * failed allocation. */
static float *to_float(const double *v, size_t n, int *rc)
{
    if (!v)
        return NULL;
    float *f = psi_malloc(n * sizeof *f + 1);
    if (!f) {
        *rc = PS_E_NOMEM;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        f[i] = (float)v[i];
    return f;
}

/* A matrix of the rows r (see psi_xgb_matrix), with their base margins,
 * built on one thread: the small learners predict a row at a time, and an
 * OpenMP team per row cost 72 s instead of a few in test_place_budget's
 * 64-job placement (mps). */
static int matrix_of_doubles(const psi_xgb_rows_t *r, DMatrixHandle *out)
{
    int rc = PS_OK;
    size_t n = (size_t)r->n;
    *out = NULL;
    float *xf = to_float(r->x, n * (size_t)r->d, &rc), *yf = to_float(r->y, n, &rc);
    float *mf = to_float(r->margin, n, &rc);
    if (rc == PS_OK)
        rc = psi_xgb_matrix(xf, yf, n, r->d, 1, out);
    if (rc == PS_OK)
        rc = set_info(out, "base_margin", mf, n, "setting base margins");
    free(xf);
    free(yf);
    free(mf);
    return rc;
}

int psi_xgb_train(const psi_xgb_rows_t *r, const char *const *kv, int rounds, void **out_booster)
{
    DMatrixHandle dm = NULL;
    BoosterHandle b = NULL;
    *out_booster = NULL;
    int rc = matrix_of_doubles(r, &dm);
    if (rc)
        return rc;
    if (XGBoosterCreate(&dm, 1, &b))
        rc = psi_xgb_error("creating a booster");
    for (int i = 0; rc == PS_OK && kv[i]; i += 2)
        rc = psi_xgb_set_param(b, kv[i], kv[i + 1]);
    for (int it = 0; rc == PS_OK && it < rounds; it++)
        if (XGBoosterUpdateOneIter(b, it, dm))
            rc = psi_xgb_error("boosting");
    if (rc == PS_OK) {
        *out_booster = b;
        b = NULL;
    }
    if (b)
        XGBoosterFree(b);
    XGDMatrixFree(dm);
    return rc;
}

int psi_xgb_predict(void *booster, const psi_xgb_rows_t *r, double *out)
{
    return psi_xgb_predict_limit(booster, r, 0, out);
}

int psi_xgb_predict_limit(void *booster, const psi_xgb_rows_t *r, int rounds, double *out)
{
    DMatrixHandle dm = NULL;
    psi_xgb_rows_t unlabelled = *r;
    unlabelled.y = NULL;
    int n = r->n;
    int rc = matrix_of_doubles(&unlabelled, &dm);
    if (rc)
        return rc;
    bst_ulong len = 0;
    const float *res = NULL;
    if (XGBoosterPredict((BoosterHandle)booster, dm, 0, (unsigned)rounds, 0, &len, &res) || len != (bst_ulong)n)
        rc = psi_xgb_error("predicting");
    else
        for (int i = 0; i < n; i++)
            out[i] = res[i];
    XGDMatrixFree(dm);
    return rc;
}

void psi_xgb_free(void *booster)
{
    if (booster)
        XGBoosterFree((BoosterHandle)booster);
}

int psi_xgb_load(const char *path, const char *what, const unsigned char *data, size_t len, int n_features,
                 BoosterHandle *out)
{
    *out = NULL;
    char why[160];
    int bad = psi_xgb_check(data, len, n_features, why, sizeof why);
    if (bad == PS_E_NOMEM)
        return psi_error(PS_E_NOMEM, "%s: out of memory", path);
    if (bad != 0)
        return psi_error(PS_E_INPUT, "%s: the %s is not a valid XGBoost model: %s", path, what, why);
    char msg[128];
    snprintf(msg, sizeof msg, "loading the %s", what);
    if (XGBoosterCreate(NULL, 0, out) != 0)
        return psi_error_prefix(psi_xgb_error(msg), path);
    if (XGBoosterLoadModelFromBuffer(*out, data, (bst_ulong)len) != 0) {
        int rc = psi_error_prefix(psi_xgb_error(msg), path);
        XGBoosterFree(*out);
        *out = NULL;
        return rc;
    }
    return PS_OK;
}
