/* The operators the collector runs with kernels of its own (kernels.cu):
 * normalisation, softmax, elementwise, pooling, fused attention, embedding.
 * Built only with PS_CUDA. */
#ifndef PS_COLLECT_KERNELS_H
#define PS_COLLECT_KERNELS_H

#include "profile/oplist.h"

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueue op on stream over fp16 buffers sized by psi_op_tensor_elems (in,
 * weight, out). Returns cudaSuccess or the launch error. GEMM and conv are
 * not here (cuBLAS, cuDNN). */
cudaError_t psi_kernel_launch(const psi_opdesc_t *op, void *in, void *weight, void *out, cudaStream_t stream);

/* Fill elems fp16 values with small deterministic numbers in [-1, 1), so that
 * no operator runs on zeros, NaNs or denormals. */
cudaError_t psi_kernel_fill(void *buf, size_t elems, unsigned seed, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
