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
    BoosterHandle booster[2]; /* PS_SIDE_HP, PS_SIDE_LP: regressors on log delta */
    psi_forest_t *forest[2];  /* flattened copies of the boosters for prediction */
    ps_model_info_t info;     /* info.gpu points at gpu */
    struct psi_calib *calib;  /* upper-bound calibration (src/model/calib.c), NULL = none */
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
