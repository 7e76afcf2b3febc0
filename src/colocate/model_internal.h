/* The layout of a co-location model, shared by model.c and modelio.c. */
#ifndef PS_COLOCATE_MODEL_INTERNAL_H
#define PS_COLOCATE_MODEL_INTERNAL_H

#include "colocate/colocate.h"

struct fann;

struct ps_coloc_model {
    ps_coloc_kind_t kind;
    ps_coloc_params_t p;
    int nf;
    double mu[CL_MPS_NF], sd[CL_MPS_NF], beta[CL_MPS_NF + 1]; /* LR and MLP scaling */
    double ymu, ysd;                                          /* MLP target scaling */
    void *booster;                                            /* forests, mps */
    struct fann *ann;                                         /* MLP */
    int n_ratio;                                              /* ratio table (ratio, mps) */
    char **ratio_name;
    double *ratio_med;
    double ratio_global;
};

int cl_model_nf(ps_coloc_kind_t kind);
double cl_model_ratio(const ps_coloc_model_t *m, const char *workload);
/* ps_coloc_model_load on a file held in memory; path names it in messages. */
int cl_model_load_mem(const char *path, const unsigned char *buf, size_t n, ps_coloc_model_t **out);

#endif
