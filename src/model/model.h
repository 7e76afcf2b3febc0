/* Internals of the segment model shared by the files of src/model: the handle, the
 * XGBoost helpers and the per-row predictor. */
#ifndef PS_MODEL_MODEL_H
#define PS_MODEL_MODEL_H

#include "features/features.h"
#include "model/forest.h"

#include "model/xgb.h"

#include <xgboost/c_api.h>

/* Version of the model file written by ps_model_save. */
#define PS_MODEL_FORMAT_VERSION 2

struct ps_model {
    psi_feature_layout_t layout;
    char *gpu;
    BoosterHandle booster[2];        /* PS_SIDE_HP, PS_SIDE_LP: regressors on log delta */
    psi_forest_t *forest[2];         /* flattened copies of the boosters for prediction */
    ps_model_info_t info;            /* info.gpu points at gpu */
    struct psi_calib *calib;         /* upper-bound calibration (src/model/calib.c), NULL = none */
    struct psi_pair_memo *pair_memo; /* window pairs the planner met (pair_memo.c); made by psi_model_finish */
};

/* Allocate an empty model with layout l for gpu. */
int psi_model_alloc(const psi_feature_layout_t *l, const char *gpu, ps_model_t **out);

/* Load a model file held in memory (buf[n]); path names it in messages. */
int psi_model_load_mem(const char *path, const unsigned char *buf, size_t n, ps_model_t **out);

/* The loaders of every model kind (ps_model_t here, ps_coloc_model_t in
 * src/colocate) share their public entry points through these. A reader
 * makes a model of its kind from the bytes buf[n] (path names them in
 * messages) into dst, the caller's T ** (NULL on failure). */
typedef int (*psi_model_reader_t)(const char *path, const unsigned char *buf, size_t n, void *dst);
/* ps_*_load: the file at path read whole and handed to read; fn names the
 * public call in the message of a NULL path. */
int psi_model_load_file(const char *fn, const char *path, psi_model_reader_t read, void *dst);
/* ps_*_load_mem: PS_E_ARG "fn: NULL out" or "fn: NULL buffer", else
 * read(what, buf, n, dst). The caller sets its *out to NULL first. */
int psi_model_load_buffer(const char *fn, const char *what, const unsigned char *buf, size_t n, psi_model_reader_t read,
                          void *dst);

/* Build the flattened forests from the boosters (after train, adapt, load). */
int psi_model_finish(ps_model_t *m);

/* Raw output (log delta) of the regressor of side for n rows of x
 * (stride n_features), through the flattened forest of a finished model.
 * out[n] is the caller's. */
void psi_model_predict_rows(const ps_model_t *m, int side, const float *x, size_t n, double *out);
/* Both regressors over n rows, x_hp's and x_lp's; where the layout gives
 * both sides the same vector (all variants but no-corunner), x_hp's rows are
 * read once for both (psi_forest_predict_pair) and x_lp is not read. */
void psi_model_predict_rows_pair(const ps_model_t *m, const float *x_hp, const float *x_lp, size_t n, double *out_hp,
                                 double *out_lp);

/* Same through XGBoost's own predictor (XGBoosterPredictFromDense): the
 * reference for tests and benchmarks. type 0 = values (out[n]); type 2 =
 * SHAP contributions (out[n * (n_features + 1)], bias last). */
int psi_model_predict_xgb(const ps_model_t *m, int side, const float *x, size_t n, int type, double *out);

/* The window pairs of one query (see predict.c): lh[i * nl + j] and
 * ll[i * nl + j] are the log deltas of HP window i beside LP window j,
 * wh[nh] and wl[nl] the windows' standalone times. */
typedef struct {
    int nh, nl;
    const double *lh, *ll;
    const double *wh, *wl;
} psi_windows_t;

/* Compose the window pairs of one query into its latencies *t_hp, *t_lp. */
int psi_compose_windows(ps_compose_t method, const psi_windows_t *w, double *t_hp, double *t_lp);

/* The window-pair memo of a model (src/model/pair_memo.c): a window pair's
 * coordinates (hp_start, hp_len, lp_start, lp_len, hp_tpcs, lp_tpcs) and its
 * prediction (both log deltas, with the offsets of a bound, and the two
 * windows' standalone times), under the hash of a context. Thread-safe and
 * bounded; a full set replaces its entries in turn. */
typedef struct psi_pair_memo psi_pair_memo_t;
typedef struct {
    int32_t k[6];
} psi_pair_key_t;
typedef struct {
    double lh, ll, wh, wl;
} psi_pair_val_t;
psi_pair_memo_t *psi_pair_memo_new(void);
void psi_pair_memo_free(psi_pair_memo_t *t);
void psi_pair_memo_clear(psi_pair_memo_t *t);
/* Values of the n pairs k under context ctx into v where hit[i] is set. */
void psi_pair_memo_get(psi_pair_memo_t *t, uint64_t ctx, const psi_pair_key_t *k, size_t n, psi_pair_val_t *v,
                       unsigned char *hit);
void psi_pair_memo_put(psi_pair_memo_t *t, uint64_t ctx, const psi_pair_key_t *k, size_t n, const psi_pair_val_t *v);
/* The hash of pair k under context ctx (the memo's set and tag; a batch's
 * own table of its pairs, predict.c). */
uint64_t psi_pair_key_hash(uint64_t ctx, const psi_pair_key_t *k);
/* Hashes folding n bytes at p, or what one group of a profile holds, into h. */
uint64_t psi_pair_memo_hash(uint64_t h, const void *p, size_t n);
uint64_t psi_pair_memo_hash_group(uint64_t h, const psi_op_group_t *g);

/* What the window pairs of one (HP, LP) pair of groups depend on: model m
 * (its memo), the ops groups of q's gpu, models and batches, and the
 * coverage (> 0: upper bounds, as ps_model_predict_bound; 0: points, as
 * ps_model_predict). memo is NULL where the model has none or q names a
 * group the profile lacks: then the queries are predicted without it. */
typedef struct {
    const ps_model_t *m;
    const ps_ops_t *ops;
    double coverage;
    ps_query_t q;
    uint64_t key;
    psi_pair_memo_t *memo;
} psi_pair_ctx_t;
int psi_pair_ctx_bind(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, double coverage,
                      psi_pair_ctx_t *out);

/* ps_model_predict_bound (c->coverage > 0) or ps_model_predict of n queries
 * of c's groups, the same numbers bit for bit, through c's memo: a window
 * pair met before is read, not predicted. */
int psi_model_predict_memo(const psi_pair_ctx_t *c, const ps_query_t *q, size_t n, double *out_hp_ns,
                           double *out_lp_ns);

/* Latency MAPE (%) of log-delta predictions pred against the measured
 * latency, over the rows i with split[i] == which (all rows when which < 0). */
double psi_latency_mape(const double *pred_log_delta, const double *solo_ns, const double *measured_ns,
                        const unsigned char *split, int which, size_t n);

/* The total TPCs of gpu: from the GPU table when it knows the GPU, else the
 * largest allocation profiled for that GPU in ops; 0 when neither knows. */
int psi_model_gpu_tpcs(const ps_ops_t *ops, const char *gpu);

/* The model's info as JSON, the one writer of it: the model file's header
 * and `pairsight train --json` both print this object (NULL when out of
 * memory; the caller deletes it). */
struct cJSON;
struct cJSON *psi_model_info_json(const ps_model_info_t *i);

#endif
