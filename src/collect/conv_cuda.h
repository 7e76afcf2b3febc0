/* Convolutions through cuDNN's graph API, which takes an SM-count target
 * (CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET for the heuristic and
 * CUDNN_ATTR_ENGINE_SM_COUNT_TARGET for the engine) so that cuDNN plans for
 * the green context's SMs as cuBLAS does with cublasSetSmCountTarget. Built
 * only with PS_CUDA. */
#ifndef PS_COLLECT_CONV_CUDA_H
#define PS_COLLECT_CONV_CUDA_H

#include "profile/oplist.h"

#include <cudnn.h>
#include <stddef.h>

typedef struct psi_conv_plan psi_conv_plan_t;

/* Plan op (a PS_OPK_CONV, NCHW fp16, fp32 accumulation) for sm_target SMs;
 * *workspace gets the bytes it needs. PS_E_BACKEND when no engine of the
 * heuristic's list builds a plan (the caller then uses the legacy API). */
int psi_conv_plan_make(cudnnHandle_t h, const psi_opdesc_t *op, int sm_target, psi_conv_plan_t **out,
                       size_t *workspace);
/* Fix the buffers the plan runs on (a variant pack), so that running it
 * costs no host work beyond the launch. */
int psi_conv_plan_bind(psi_conv_plan_t *p, void *x, void *w, void *y, void *workspace);
int psi_conv_plan_run(cudnnHandle_t h, const psi_conv_plan_t *p);
void psi_conv_plan_free(psi_conv_plan_t *p);

#endif
