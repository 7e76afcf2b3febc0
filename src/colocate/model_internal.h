/* The layout of a co-location model, shared by model.c and modelio.c. */
#ifndef PS_COLOCATE_MODEL_INTERNAL_H
#define PS_COLOCATE_MODEL_INTERNAL_H

#include "colocate/colocate.h"

struct psi_mlp;

struct ps_coloc_model {
    ps_coloc_kind_t kind;
    ps_coloc_params_t p;
    int nf; /* features (mps: CL_MPS_BASE_NF when trained on pairs only) */
    double mu[CL_MPS_NF], sd[CL_MPS_NF], beta[CL_MPS_NF + 1]; /* LR and MLP scaling */
    double ymu, ysd;                                          /* MLP target scaling */
    void *booster;                                            /* forests, mps */
    struct psi_mlp *mlp;                                      /* MLP (model/mlp.c) */
    int n_ratio;                                              /* ratio table (ratio, mps) */
    char **ratio_name;
    double *ratio_med;
    double ratio_global;
    double *enc_pair, *enc_agg; /* mps: pairwise encoding (pairenc.c), sum and count per cell */
    struct cl_lowrank *lowrank; /* lowrank */
    char *gpu;                  /* trained on */
    unsigned ks;                /* bit k: a k-way training set (bit 31: 31 or more); 0: unknown */
    int autosel;                /* made by auto */
    /* auto's stacked blend (kind PS_COLOC_AUTO): n_blend fitted kinds and
     * their weights (blend.c); 0 for every other model. */
    int n_blend;
    struct ps_coloc_model *blend[PS_COLOC_KIND_COUNT];
    double blend_w[PS_COLOC_KIND_COUNT];
};

int psi_cl_model_nf(ps_coloc_kind_t kind);

/* A predictor kind as one row (model.c's table, indexed by ps_coloc_kind_t):
 * every per-kind difference of fitting, prediction, the model file and auto
 * is a field here, not a branch on the kind. */
typedef struct {
    ps_coloc_kind_t kind; /* its index in the table (test_kind_rows checks it) */
    const char *name;
    int nf, nf_alt;    /* features; nf_alt another count a file may hold (0: none) */
    int predicts_sum;  /* 1: the throughput sum of a co-location; 0: each workload's own */
    int in_auto;       /* 1: auto's candidate by default (when it can run) */
    int needs_metrics; /* 1: runs only on data with sm_busy, mem_busy or memcap */
    const char *body;  /* the model file's body section: booster, mlp, lowrank or none */
    /* Fit m (kind, params, nf, gpu and ks set) on train. */
    int (*fit)(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train);
    /* Predict co-location ci: each slot (NAN for a sum kind) and the sum. */
    int (*predict)(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum);
    /* Its fitted parameters on d, nominal for trees and networks: the order of
     * simplicity that auto's one-standard-error rule prefers. */
    double (*n_params)(const cl_data_t *d, const ps_coloc_params_t *p);
} psi_cl_kind_t;

/* Every kind's row, registered once, in ps_coloc_kind_t's order: the row
 * psi_cl_kind_NAME is defined by the kind's own file (model.c for the kinds
 * that share its learners). */
#define PSI_CL_KINDS(X) X(kace_lr) X(kace_rf) X(kace_mlp) X(xu_rf) X(ratio) X(mps) X(lowrank) X(auto)
#define PSI_CL_KIND_DECLARE(name) extern const psi_cl_kind_t psi_cl_kind_##name;
PSI_CL_KINDS(PSI_CL_KIND_DECLARE)

/* The row of kind k (NULL outside 0..PS_COLOC_KIND_COUNT - 1). */
const psi_cl_kind_t *psi_cl_kind(ps_coloc_kind_t k);

/* One predictor of a base kind (model.c): what psi_cl_model_fit, psi_cl_model_predict
 * and psi_cl_model_slots (fit.c) do for every kind but auto and the blend, which
 * are made of these. */
int psi_cl_model_fit_base(const cl_data_t *d, const int *train, int n_train, const ps_coloc_params_t *p,
                          ps_coloc_model_t **out);
int psi_cl_model_predict_base(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum);
int psi_cl_model_slots_base(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot);
/* The GPUs ("A100,H100") and the mask of co-location sizes k of train. */
char *psi_cl_train_gpus(const cl_data_t *d, const int *train, int n_train);
unsigned psi_cl_train_ks(const cl_data_t *d, const int *train, int n_train);

/* The median ratio of row i's workload over the other training
 * co-locations (global where it has none); buf holds n doubles. */
double psi_loo_ratio(const wrow_t *r, int n, int i, double global, double *buf);

/* The mps predictor (mps.c): fitted on the rows r[n] of the training
 * co-locations (the ratio table already in m); log(tput / solo) of slot s. */
int psi_mps_fit(ps_coloc_model_t *m, const cl_data_t *d, const wrow_t *r, int n, const int *train, int n_train);
int psi_mps_predict(const ps_coloc_model_t *m, const cl_data_t *d, const cl_coloc_t *c, int s, double *out_log_ratio);
/* The mps predictor's pairwise-interference encoding (pairenc.c): tables
 * over the ratio table's workloads, from the training co-locations; the two
 * features of a slot (out[2]), leaving out its workload set for a
 * training slot. */
int psi_pairenc_alloc(ps_coloc_model_t *m);
int psi_pairenc_fit(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train);
void psi_pairenc_train_features(ps_coloc_model_t *m, const cl_train_t *t, int ci, int slot, double *out);
void psi_pairenc_features(const ps_coloc_model_t *m, const cl_data_t *d, const cl_coloc_t *c, int slot, double *out);
double psi_cl_model_ratio(const ps_coloc_model_t *m, const char *workload);
/* auto's blend (blend.c): fit the kinds with w[kind] > 0 into m (taking
 * have[kind] instead where not NULL, which is then set NULL), and predict
 * each workload's blended throughput. */
int psi_blend_fit(ps_coloc_model_t *m, const cl_train_t *t, const ps_coloc_params_t *p, const double *w,
                  ps_coloc_model_t **have);
int psi_blend_predict(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum);
/* ps_coloc_model_load on a file held in memory; path names it in messages. */
int psi_cl_model_load_mem(const char *path, const unsigned char *buf, size_t n, ps_coloc_model_t **out);

#endif
