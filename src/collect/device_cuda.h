/* What the CUDA backend's files share (device_cuda.c, nvml_cuda.c,
 * prep_cuda.c): NVML for the SM clock, one side of a partition and the
 * per-operator state prepared before timing. Module side only. */
#ifndef PS_COLLECT_DEVICE_CUDA_H
#define PS_COLLECT_DEVICE_CUDA_H

#include "collect/conv_cuda.h"
#include "profile/oplist.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cudnn.h>

#define LT_WORKSPACE (32u << 20) /* cuBLASLt workspace, bytes */

/* Return a named PS_E_BACKEND error when a cuBLAS or cuDNN call fails. */
#define BLAS(call, what)                                                                                               \
    do {                                                                                                               \
        cublasStatus_t s_ = (call);                                                                                    \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                                               \
            return psi_error(PS_E_BACKEND, "cublas: %s: %s", what, cublasGetStatusString(s_));                         \
    } while (0)
#define DNN(call, what)                                                                                                \
    do {                                                                                                               \
        cudnnStatus_t s_ = (call);                                                                                     \
        if (s_ != CUDNN_STATUS_SUCCESS)                                                                                \
            return psi_error(PS_E_BACKEND, "cudnn: %s: %s", what, cudnnGetErrorString(s_));                            \
    } while (0)

/* NVML, from the driver's libnvidia-ml.so.1 at run time (the toolkit ships
 * no nvml.h here; these are the stable C signatures of nvml.h). */
typedef int nvml_ret_t; /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct nvml_device *nvml_device_t;
#define NVML_CLOCK_SM 1 /* nvmlClockType_t */
typedef struct {
    void *lib;
    nvml_device_t dev;
    nvml_ret_t (*Init)(void);
    nvml_ret_t (*Shutdown)(void);
    nvml_ret_t (*DeviceGetHandleByPciBusId)(const char *, nvml_device_t *);
    nvml_ret_t (*DeviceGetClockInfo)(nvml_device_t, int, unsigned *);
    nvml_ret_t (*DeviceGetMaxClockInfo)(nvml_device_t, int, unsigned *);
    const char *(*ErrorString)(nvml_ret_t);
} nvml_t;

/* NVML for the device with PCI bus id bus (nvml_cuda.c); the SM clock
 * (max: the maximum, else the current), NAN where NVML is missing. */
int psi_nvml_open(nvml_t *n, const char *bus);
int psi_nvml_sm_clock(const nvml_t *n, int max, double *mhz);
void psi_nvml_close(nvml_t *n);

/* One side: a green context, its stream and its library handles. */
typedef struct {
    unsigned sms;
    CUgreenCtx green;
    CUcontext ctx;
    CUstream stream;
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    cudnnHandle_t dnn;
} side_t;

/* Per-operator state prepared before timing: a cuBLASLt matmul (plain
 * GEMMs), a cuDNN graph plan or, where that fails, legacy descriptors. */
typedef struct {
    cublasLtMatmulDesc_t mm;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t lt_algo;
    size_t lt_ws;
    psi_conv_plan_t *graph;
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnConvolutionFwdAlgo_t algo;
    size_t ws;
} prep_t;

/* prep_cuda.c: free n prepared operators; a cuBLASLt matmul for a plain
 * GEMM and a cuDNN plan for a convolution on side s. */
void psi_cuda_prep_free(prep_t *p, int n);
int psi_cuda_prep_gemm(const side_t *s, const psi_opdesc_t *op, prep_t *p);
int psi_cuda_prep_conv(const side_t *s, const psi_opdesc_t *op, prep_t *p);

#endif
