/* The per-operator state the CUDA backend prepares before timing
 * (device_cuda.h): cuBLASLt matmuls for plain GEMMs and cuDNN plans or
 * legacy descriptors for convolutions. */
#include "collect/device_cuda.h"

#include "common/common.h"

#include <stdlib.h>

void psi_cuda_prep_free(prep_t *p, int n)
{
    for (int i = 0; p && i < n; i++) {
        if (p[i].mm)
            (void)cublasLtMatmulDescDestroy(p[i].mm);
        if (p[i].la)
            (void)cublasLtMatrixLayoutDestroy(p[i].la);
        if (p[i].lb)
            (void)cublasLtMatrixLayoutDestroy(p[i].lb);
        if (p[i].lc)
            (void)cublasLtMatrixLayoutDestroy(p[i].lc);
        psi_conv_plan_free(p[i].graph);
        if (p[i].x)
            (void)cudnnDestroyTensorDescriptor(p[i].x);
        if (p[i].y)
            (void)cudnnDestroyTensorDescriptor(p[i].y);
        if (p[i].w)
            (void)cudnnDestroyFilterDescriptor(p[i].w);
        if (p[i].conv)
            (void)cudnnDestroyConvolutionDescriptor(p[i].conv);
    }
    free(p);
}

/* A cuBLASLt matmul for a plain (batch 1) GEMM with the side's SM target;
 * 0 with p->mm NULL when the heuristic has nothing (cuBLAS then runs it). */
int psi_cuda_prep_gemm(const side_t *s, const psi_opdesc_t *op, prep_t *p)
{
    const long long *v = op->p;
    if (v[PG_BATCH] != 1)
        return 0;
    uint64_t n = (uint64_t)v[PG_N], m = (uint64_t)v[PG_M], k = (uint64_t)v[PG_K];
    int32_t sms = (int32_t)s->sms;
    uint64_t ws = LT_WORKSPACE;
    BLAS(cublasLtMatmulDescCreate(&p->mm, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul desc");
    BLAS(cublasLtMatmulDescSetAttribute(p->mm, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sms, sizeof sms),
         "SM count target");
    /* Row-major C[m,n] = A[m,k] B[k,n] as column-major C^T = B^T A^T. */
    BLAS(cublasLtMatrixLayoutCreate(&p->la, CUDA_R_16F, n, k, (int64_t)n), "layout");
    BLAS(cublasLtMatrixLayoutCreate(&p->lb, CUDA_R_16F, k, m, (int64_t)k), "layout");
    BLAS(cublasLtMatrixLayoutCreate(&p->lc, CUDA_R_16F, n, m, (int64_t)n), "layout");
    cublasLtMatmulPreference_t pref = NULL;
    BLAS(cublasLtMatmulPreferenceCreate(&pref), "preference");
    cublasLtMatmulHeuristicResult_t res;
    int got = 0;
    cublasStatus_t st =
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulAlgoGetHeuristic(s->lt, p->mm, p->la, p->lb, p->lc, p->lc, pref, 1, &res, &got);
    (void)cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || got == 0) {
        (void)cublasLtMatmulDescDestroy(p->mm);
        p->mm = NULL;
        return 0;
    }
    p->lt_algo = res.algo;
    p->lt_ws = res.workspaceSize;
    return 0;
}

int psi_cuda_prep_conv(const side_t *s, const psi_opdesc_t *op, prep_t *p)
{
    /* The graph API first, for its SM target; the legacy API where no
     * engine plans the convolution. */
    if (psi_conv_plan_make(s->dnn, op, (int)s->sms, &p->graph, &p->ws) == 0)
        return 0;
    psi_log(PS_LOG_DEBUG, "%s: legacy cuDNN API (%s)", op->name, ps_last_error());
    const long long *v = op->p;
    int n = (int)v[PC_N], c = (int)v[PC_C], h = (int)v[PC_H], w = (int)v[PC_W], k = (int)v[PC_K];
    int g = (int)v[PC_GROUPS];
    DNN(cudnnCreateTensorDescriptor(&p->x), "tensor descriptor");
    DNN(cudnnCreateTensorDescriptor(&p->y), "tensor descriptor");
    DNN(cudnnCreateFilterDescriptor(&p->w), "filter descriptor");
    DNN(cudnnCreateConvolutionDescriptor(&p->conv), "convolution descriptor");
    DNN(cudnnSetTensor4dDescriptor(p->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, n, c, h, w), "x");
    DNN(cudnnSetFilter4dDescriptor(p->w, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, k, c / g, (int)v[PC_R], (int)v[PC_S]),
        "w");
    DNN(cudnnSetConvolution2dDescriptor(p->conv, (int)v[PC_PAD], (int)v[PC_PAD], (int)v[PC_STRIDE], (int)v[PC_STRIDE],
                                        1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        "conv");
    DNN(cudnnSetConvolutionGroupCount(p->conv, g), "groups");
    DNN(cudnnSetConvolutionMathType(p->conv, CUDNN_TENSOR_OP_MATH), "math type");
    int on, oc, oh, ow;
    DNN(cudnnGetConvolution2dForwardOutputDim(p->conv, p->x, p->w, &on, &oc, &oh, &ow), "output dim");
    DNN(cudnnSetTensor4dDescriptor(p->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, on, oc, oh, ow), "y");
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int got = 0;
    DNN(cudnnGetConvolutionForwardAlgorithm_v7(s->dnn, p->x, p->w, p->conv, p->y, 8, &got, perf),
        "algorithm heuristic");
    int pick = -1;
    for (int i = 0; i < got && pick < 0; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS)
            pick = i;
    if (pick < 0)
        return psi_error(PS_E_BACKEND, "cudnn: no algorithm for %s", op->name);
    p->algo = perf[pick].algo;
    DNN(cudnnGetConvolutionForwardWorkspaceSize(s->dnn, p->x, p->w, p->conv, p->y, p->algo, &p->ws), "workspace size");
    return 0;
}
