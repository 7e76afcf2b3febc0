/*
 * Predicting the makespan of k co-running operator-group ranges (overlap.csv)
 * and scoring the predictors under the protocols of issue 28
 * (docs/overlap.md): the new predictor (XGBoost on what each range costs
 * alone and how the co-runners compare), Abacus's own features with an MLP
 * and with XGBoost, and the baselines max(solo) and sum(solo).
 */
#ifndef PS_EVALUATE_OVERLAP_H
#define PS_EVALUATE_OVERLAP_H

#include "pairsight.h"
#include "profile/overlap.h"

#include <stdint.h>

/* The methods and protocols of include/pairsight_overlap.h. */
enum {
    PSI_OVM_PAIRSIGHT = PS_OVM_PAIRSIGHT,
    PSI_OVM_ABACUS_MLP = PS_OVM_ABACUS_MLP,
    PSI_OVM_ABACUS_XGB = PS_OVM_ABACUS_XGB,
    PSI_OVM_MAX_SOLO = PS_OVM_MAX_SOLO,
    PSI_OVM_SUM_SOLO = PS_OVM_SUM_SOLO,
    PSI_OVM_N = PS_OVM_COUNT
};
enum {
    PSI_OVP_RANDOM = PS_OVP_RANDOM,
    PSI_OVP_LEAVE_PAIR = PS_OVP_LEAVE_PAIR,
    PSI_OVP_KWAY = PS_OVP_KWAY,
    PSI_OVP_LEAVE_MODEL = PS_OVP_LEAVE_MODEL,
    PSI_OVP_MIG = PS_OVP_MIG,
    PSI_OVP_N = PS_OVP_COUNT
};

extern const char *const psi_ov_method_names[PSI_OVM_N];
extern const char *const psi_ov_protocol_names[PSI_OVP_N];

/* The parameters (features: bit i = psi_ov_feature_names[i]); the public
 * struct of include/pairsight_overlap.h. */
typedef ps_ov_params_t psi_ov_params_t;

/* pairsight's feature groups (docs/overlap.md), and the default chosen by
 * the leave-pair sweep of docs/overlap.md. */
enum { PSI_OVF_N = 7 };
extern const char *const psi_ov_feature_names[PSI_OVF_N];
#define PSI_OV_FEATURES_DEFAULT PS_OV_FEATURES_DEFAULT

/* "times,ratios" into a mask of psi_ov_feature_names; 0 or -1 (an unknown
 * name; *mask untouched). */
int psi_ov_features_parse(const char *list, unsigned *mask);

psi_ov_params_t psi_ov_default_params(void);

/* The scores of one protocol (include/pairsight_overlap.h). */
typedef ps_ov_result_t psi_ov_result_t;

/* Score every method under protocol p on t. */
int psi_ov_eval(const psi_overlap_t *t, int p, const psi_ov_params_t *prm, psi_ov_result_t *out);

/* ---- a trained predictor (`pairsight overlap train|predict`) ---- */

typedef struct ps_ov_model psi_ov_model_t; /* the public ps_ov_model_t */

/* Fit the solo table on t's single-active experiments and the predictor on
 * every experiment whose solo times are known. *out owns its memory. */
int psi_ov_train(const psi_overlap_t *t, const psi_ov_params_t *p, psi_ov_model_t **out);

/* Predicted makespans out[t->n] (caller-owned), NAN where a slot's solo time
 * is unknown to the model. oplists: as given to train (NULL for none). */
int psi_ov_predict(const psi_ov_model_t *m, const psi_overlap_t *t, const char *oplists, double *out);

/* Atomic write; the file starts "pairsight-overlap-model 1" and is refused
 * by the loader otherwise. */
int psi_ov_model_save(const psi_ov_model_t *m, const char *path);
int psi_ov_model_load(const char *path, psi_ov_model_t **out);
size_t psi_ov_model_solo_keys(const psi_ov_model_t *m);
void psi_ov_model_free(psi_ov_model_t *m);

#endif
