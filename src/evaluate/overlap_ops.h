/*
 * FLOPs, bytes and kernels of operator-group ranges, from captured operator
 * lists (`# pairsight oplist 1`, src/collect/oplist.h) whose operator names
 * are module paths (`layer3.4.conv2`): group g of a model holds the
 * operators under the module paths psi_abacus_group_paths gives.
 */
#ifndef PS_EVALUATE_OVERLAP_OPS_H
#define PS_EVALUATE_OVERLAP_OPS_H

#include "profile/overlap.h"

typedef struct psi_ov_ops psi_ov_ops_t;

/* Read every operator list in dir (each names its model, batch and seq_len
 * in its header comment). An error names the file, line and column. */
int psi_ov_ops_load(const char *dir, psi_ov_ops_t **out);
void psi_ov_ops_free(psi_ov_ops_t *o);

/* The operator group of model (of groups, psi_abacus_model_ops) whose
 * module paths hold the operator name, or -1. */
int psi_ov_op_group(const char *model, int groups, const char *name);

/* Sums over the slot's range; -1 when no list of its (model, batch,
 * seq_len) was given. */
int psi_ov_ops_range(const psi_ov_ops_t *o, const psi_ov_slot_t *x, double *flops, double *bytes, double *kernels);

#endif
