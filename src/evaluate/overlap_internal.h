/* Shared between overlap.c (features, protocols) and overlap_model.c (a
 * saved predictor): the solo table and PairSight's feature row. */
#ifndef PS_EVALUATE_OVERLAP_INTERNAL_H
#define PS_EVALUATE_OVERLAP_INTERNAL_H

#include "evaluate/overlap.h"
#include "evaluate/overlap_ops.h"

#define NF_PS 24

typedef struct {
    const char *setting, *model; /* interned in a table's pool */
    int batch, seq_len, groups;
    double *beta; /* [groups + 1]: c, t_0 .. t_{G-1} */
} solo_key_t;

typedef struct {
    solo_key_t *k;
    size_t n, cap;
} solo_t;

/* The table of every (setting, model, batch, seq_len) with a single-active
 * experiment among idx[n]; release with psi_ov_solo_free. */
int psi_ov_solo_fit(const psi_overlap_t *t, const size_t *idx, size_t n, double ridge, solo_t *out);
void psi_ov_solo_free(solo_t *s);
/* Key of slot x in setting (compared by string content), or NULL. */
solo_key_t *psi_ov_solo_find(const solo_t *s, const char *setting, const psi_ov_slot_t *x);

/* The one active slot of a single-active experiment, or -1. */
int psi_ov_single_slot(const psi_ov_exp_t *e);

/* A slot and its solo time; sorted longest first (ties: slot order). */
typedef struct {
    double t;
    int s;
} psi_ov_ts_t;
int psi_ov_by_time_desc(const void *a, const void *b);

/* Solo time of one slot's range: 0 for an empty range, NAN when unknown. */
double psi_ov_solo_of(const solo_t *s, const char *setting, const psi_ov_slot_t *x);

/* ---- the setting model (overlap_setting.c) ---- */

#define NF_SF 26

/* A setting's capacity: the high quantile of the FLOP, byte and kernel
 * rates its single-active runs achieve (per microsecond). */
typedef struct {
    const char *setting; /* the table's string, or owned by a model */
    double rate[3];
} psi_ov_cap_t;

typedef struct {
    psi_ov_cap_t *c;
    size_t n;
} psi_ov_caps_t;

/* The capacity of every setting with a single-active run among idx[n]
 * (none without operator lists). */
int psi_ov_caps_fit(const psi_overlap_t *t, const size_t *idx, size_t n, const psi_ov_ops_t *ops, psi_ov_caps_t *out);
const psi_ov_cap_t *psi_ov_caps_find(const psi_ov_caps_t *c, const char *setting);
void psi_ov_caps_free(psi_ov_caps_t *c);

/* The scale-free row f[NF_SF] of e (solo-time ratios, shares, demand over
 * the setting's capacity); *mx its max(solo). */
void psi_ov_sf_features(const psi_ov_exp_t *e, const solo_t *s, const psi_ov_ops_t *ops, const psi_ov_caps_t *caps,
                        double *f, double *mx);

/* What pairsight's makespan needs besides the experiments: the solo table,
 * the operator lists (or NULL), the feature groups, the booster of
 * makespan / max(solo) and kmax, the most active slots of its training rows
 * (overlap_compose.c: beyond it, pairs are composed). With caps, the
 * booster is the setting model's, on psi_ov_sf_features. */
typedef struct {
    const solo_t *solo;
    const psi_ov_ops_t *ops;
    unsigned mask;
    int kmax;
    void *booster;
    const psi_ov_caps_t *caps;
} psi_ov_pred_ctx_t;

/* The row of e under c (pairsight's or the setting model's); its width. */
int psi_ov_row(const psi_ov_exp_t *e, const psi_ov_pred_ctx_t *c, double *x, double *mx);

/* Whether e is composed from pairs (more active slots than kmax >= 2). */
int psi_ov_composes(const psi_ov_exp_t *e, int kmax);

/* pairsight's makespans out[n] of t's experiments idx[n] (idx NULL: the
 * first n), NAN where a solo time is unknown. */
int psi_ov_ps_predict(const psi_ov_pred_ctx_t *c, const psi_overlap_t *t, const size_t *idx, size_t n, double *out);

/* PairSight's row f[NF_PS] of e from c's solo table and operator lists,
 * the groups outside c->mask missing (NAN); *max_solo, *sum_solo as side
 * outputs. */
void psi_ov_ps_features(const psi_ov_exp_t *e, const psi_ov_pred_ctx_t *c, double *f, double *max_solo,
                        double *sum_solo);

/* The XGBoost parameters of p as key/value pairs in kv (NULL-ended), their
 * values written into bufs; returns kv. */
#define PSI_OV_XGB_KV 17
const char *const *psi_ov_xgb_params(const psi_ov_params_t *p, char bufs[4][32], const char *kv[PSI_OV_XGB_KV]);

/* The settings of idx[n] (NULL: the first n) with a co-run (two or more
 * active slots), at most max into out; the count. */
size_t psi_ov_seen_settings(const psi_overlap_t *t, const size_t *idx, size_t n, const char **out, size_t max);
int psi_ov_setting_in(const char *setting, const char *const *list, size_t n);

/* The setting model's booster on the experiments tr[ntr] (NULL: the first
 * ntr) whose solo times c knows; c->caps the capacities. */
int psi_ov_sf_train(const psi_overlap_t *t, const psi_ov_params_t *p, const psi_ov_pred_ctx_t *c, const size_t *tr,
                    size_t ntr, void **booster);

#endif
