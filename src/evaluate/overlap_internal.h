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

/* Solo time of one slot's range: 0 for an empty range, NAN when unknown. */
double psi_ov_solo_of(const solo_t *s, const char *setting, const psi_ov_slot_t *x);

/* What pairsight's makespan needs besides the experiments: the solo table,
 * the operator lists (or NULL), the feature groups, the booster of
 * makespan / max(solo) and kmax, the most active slots of its training rows
 * (overlap_compose.c: beyond it, pairs are composed). */
typedef struct {
    const solo_t *solo;
    const psi_ov_ops_t *ops;
    unsigned mask;
    int kmax;
    void *booster;
} psi_ov_pred_ctx_t;

/* Whether e is composed from pairs (more active slots than kmax >= 2). */
int psi_ov_composes(const psi_ov_exp_t *e, int kmax);

/* pairsight's makespans out[n] of t's experiments idx[n] (idx NULL: the
 * first n), NAN where a solo time is unknown. */
int psi_ov_ps_predict(const psi_ov_pred_ctx_t *c, const psi_overlap_t *t, const size_t *idx, size_t n, double *out);

/* PairSight's row f[NF_PS] of e, the groups outside mask missing (NAN);
 * *max_solo, *sum_solo as side outputs. */
void psi_ov_ps_features(const psi_ov_exp_t *e, const solo_t *s, const psi_ov_ops_t *ops, unsigned mask, double *f,
                        double *max_solo, double *sum_solo);

/* The XGBoost parameters of p as key/value pairs in kv (NULL-ended), their
 * values written into bufs; returns kv. */
#define PSI_OV_XGB_KV 17
const char *const *psi_ov_xgb_params(const psi_ov_params_t *p, char bufs[4][32], const char *kv[PSI_OV_XGB_KV]);

#endif
