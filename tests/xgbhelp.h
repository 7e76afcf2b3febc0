/* XGBoost helpers shared by tests/test_forest.c and bench/bench_predict.c:
 * train a small booster on synthetic data and predict with XGBoost's own
 * in-place dense predictor, the reference our forest is checked and timed
 * against. Header-only so that both programs stay single files. */
#ifndef PS_XGBHELP_H
#define PS_XGBHELP_H

#include <xgboost/c_api.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A small deterministic generator (splitmix64), so that data sets are the same
 * on every machine. */
static inline uint64_t xh_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline double xh_uniform(uint64_t *s) { return (double)(xh_next(s) >> 11) * 0x1p-53; }

/* n rows of nf features in [-1, 1), a fraction nan_frac of them NAN, and a
 * nonlinear target of the first features (x as 0 where missing). */
static inline void xh_synth(uint64_t seed, size_t n, int nf, double nan_frac, float *x, float *y)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        float *r = x + i * (size_t)nf;
        for (int j = 0; j < nf; j++)
            r[j] = xh_uniform(&s) < nan_frac ? NAN : (float)(2 * xh_uniform(&s) - 1);
        if (y) {
            double v[4];
            for (int j = 0; j < 4; j++)
                v[j] = j < nf && !isnan(r[j]) ? r[j] : 0;
            y[i] = (float)(3 * v[0] * v[1] + sin(3 * v[2]) + (v[3] > 0.2 ? 1.5 : -0.5) +
                           0.1 * xh_uniform(&s));
        }
    }
}

/* Trains `rounds` trees of reg:squarederror with tree_method hist and the
 * given max_depth on nthread threads; base_score is set to the label mean, as
 * the project does. Returns 0 or -1 (message on stderr). */
static inline int xh_train(const float *x, const float *y, size_t n, int nf, int max_depth,
                           int rounds, int nthread, BoosterHandle *out)
{
    DMatrixHandle dm = NULL;
    BoosterHandle b = NULL;
    char buf[64];
    double mean = 0;
    for (size_t i = 0; i < n; i++)
        mean += y[i];
    mean /= (double)(n ? n : 1);
    if (XGDMatrixCreateFromMat(x, (bst_ulong)n, (bst_ulong)nf, NAN, &dm) ||
        XGDMatrixSetFloatInfo(dm, "label", y, (bst_ulong)n) || XGBoosterCreate(&dm, 1, &b))
        goto fail;
    snprintf(buf, sizeof buf, "%d", max_depth);
    if (XGBoosterSetParam(b, "max_depth", buf))
        goto fail;
    snprintf(buf, sizeof buf, "%d", nthread);
    if (XGBoosterSetParam(b, "nthread", buf))
        goto fail;
    snprintf(buf, sizeof buf, "%.9g", mean);
    if (XGBoosterSetParam(b, "base_score", buf) ||
        XGBoosterSetParam(b, "objective", "reg:squarederror") ||
        XGBoosterSetParam(b, "tree_method", "hist") || XGBoosterSetParam(b, "eta", "0.1") ||
        XGBoosterSetParam(b, "seed", "7") || XGBoosterSetParam(b, "verbosity", "0"))
        goto fail;
    for (int it = 0; it < rounds; it++)
        if (XGBoosterUpdateOneIter(b, it, dm))
            goto fail;
    XGDMatrixFree(dm);
    *out = b;
    return 0;
fail:
    fprintf(stderr, "xgboost: %s\n", XGBGetLastError());
    if (b)
        XGBoosterFree(b);
    if (dm)
        XGDMatrixFree(dm);
    return -1;
}

/* XGBoost's in-place prediction of n dense rows of nf floats (NAN missing).
 * Returns a pointer owned by the booster, valid until its next call, or NULL
 * (message on stderr). */
static inline const float *xh_predict(BoosterHandle b, const float *x, size_t n, int nf)
{
    char arr[256];
    snprintf(arr, sizeof arr,
             "{\"data\": [%llu, true], \"shape\": [%llu, %d], \"typestr\": \"<f4\", "
             "\"version\": 3}",
             (unsigned long long)(uintptr_t)x, (unsigned long long)n, nf);
    static const char cfg[] = "{\"type\": 0, \"training\": false, \"iteration_begin\": 0, "
                              "\"iteration_end\": 0, \"strict_shape\": false, "
                              "\"missing\": NaN, \"cache_id\": 0}";
    const bst_ulong *shape;
    bst_ulong dim;
    const float *res;
    if (XGBoosterPredictFromDense(b, arr, cfg, NULL, &shape, &dim, &res)) {
        fprintf(stderr, "xgboost: %s\n", XGBGetLastError());
        return NULL;
    }
    return res;
}

#endif
