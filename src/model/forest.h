/*
 * A flattened tree ensemble evaluated by our own code: the contract between
 * the fast-prediction engineer (src/model/forest.c) and the segment model
 * (src/model/). Built from a trained XGBoost booster; its output must equal
 * XGBoost's own prediction (output margin, base_score included) to float
 * rounding.
 */
#ifndef PS_MODEL_FOREST_H
#define PS_MODEL_FOREST_H

#include <stddef.h>

typedef struct psi_forest psi_forest_t;

/* Build from an XGBoost booster handle (a `BoosterHandle`, passed as void *
 * so that this header carries no XGBoost type). The booster must be a gbtree
 * regression model. Uses the booster's JSON model. */
int psi_forest_from_booster(void *booster, psi_forest_t **out);

/* Build from the text of an XGBoost 1.7 JSON model (what
 * XGBoosterSaveModelToBuffer writes with {"format": "json"}, or a model saved
 * as .json); len bytes at json, no terminating NUL needed. Fails with
 * PS_E_INPUT and a message naming the tree and field for a malformed or
 * unsupported model (gblinear, dart, categorical splits, vector leaves,
 * several output groups, a non-identity objective). */
int psi_forest_from_json(const char *json, size_t len, psi_forest_t **out);

/* Raw predictions (margin, base_score included; for reg:squarederror this is
 * the prediction) of n rows of x, row i at x + i * stride, each with at least
 * psi_forest_n_features() floats; NAN is a missing value. out[n] is owned by
 * the caller. Thread-safe for concurrent calls on one forest. */
void psi_forest_predict(const psi_forest_t *f, const float *x, size_t n, size_t stride, double *out);
/* psi_forest_predict of forests f[0] and f[1] over the same rows into
 * out[0] and out[1], each row read once for both where the kernels allow
 * (small batches on AVX-512: one column-major copy walked by both); the
 * same numbers bit for bit. */
void psi_forest_predict_pair(psi_forest_t *const *f, const float *x, size_t n, size_t stride, double *const *out);

int psi_forest_n_features(const psi_forest_t *f);
int psi_forest_n_trees(const psi_forest_t *f);
void psi_forest_free(psi_forest_t *f);

/* The evaluation kernels; all give identical results (XGBoost's, bit for
 * bit). Traversal: SCALAR (node walk), AVX2 and AVX512 (perfect layout).
 * PS_FOREST_BEST: the fastest this CPU has (CPUID at run time), unless the
 * environment variable PAIRSIGHT_FOREST_KERNEL names another (scalar, avx2,
 * avx512) that it and the forest can run. */
enum { PS_FOREST_BEST = -1, PS_FOREST_SCALAR = 0, PS_FOREST_AVX2 = 1, PS_FOREST_AVX512 = 2, PS_FOREST_N_KERNELS = 3 };

/* Selects the kernel (PS_FOREST_*) for f; one the CPU or the forest cannot
 * run (AVX2 needs trees of depth <= 12)
 * gives the scalar kernel. Returns the
 * kernel now used. A new forest starts with PS_FOREST_BEST. Not to be called
 * while another thread predicts with f. */
int psi_forest_set_kernel(psi_forest_t *f, int kernel);
int psi_forest_kernel(const psi_forest_t *f);
/* "scalar", "avx2", "avx512" (static string). */
const char *psi_forest_kernel_name(int kernel);

/* For tests and measurements: the AVX2 and AVX-512 block kernels walk tiles
 * of `blocks` blocks of 32 rows through blocks of `trees` trees (blocks = 0
 * or trees <= 0: the sizes from the L2 rule, docs/prediction.md "Tiles").
 * Same thread rule as psi_forest_set_kernel. */
void psi_forest_set_tiles(psi_forest_t *f, size_t blocks, int trees);

#endif
