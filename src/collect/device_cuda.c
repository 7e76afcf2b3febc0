/*
 * The CUDA backend: replays operator lists on an NVIDIA GPU with the SMs
 * split by green contexts.
 *
 * - SM partitions: cuDeviceGetDevResource gives the device's SMs with their
 *   minSmPartitionSize and smCoscheduledAlignment; cuDevSmResourceSplitByCount
 *   carves one group of 2p SMs (and for a co-execution a second group from
 *   the remainder); each group becomes a green context with its own stream
 *   (cuGreenCtxStreamCreate). Green contexts share the primary context's
 *   memory, so buffers are allocated once.
 * - Operators: GEMMs through cuBLAS with cublasSetSmCountTarget set to the
 *   partition's SMs, convolutions through cuDNN, the rest through kernels.cu.
 * - Timing: CUDA events around each launch (profile), or around each side's
 *   whole segment on its own stream (co-execution). Both sides of a
 *   co-execution wait on one flag in mapped host memory
 *   (cuStreamWaitValue32) until everything is enqueued, so that they start
 *   together and host launch overhead is not timed.
 *
 * The driver API is reached through cudaGetDriverEntryPointByVersion rather
 * than by linking libcuda, so that the module loads where there is no
 * driver and reports that instead. This file is part of the CUDA module
 * libpairsight_cuda.so (module.h), which the host loads on first use.
 */
#include "collect/backend.h"
#include "collect/conv_cuda.h"
#include "collect/cupti_cuda.h"
#include "collect/kernels.h"
#include "collect/module.h"

#include "common/common.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARTS 64
#define MAX_GATED_OPS 512 /* launches both sides may queue behind the gate */
#define LT_WORKSPACE (32u << 20) /* cuBLASLt workspace, bytes */

typedef struct {
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetDevResource)(CUdevice, CUdevResource *, CUdevResourceType);
    CUresult (*DevSmResourceSplitByCount)(CUdevResource *, unsigned int *, const CUdevResource *,
                                          CUdevResource *, unsigned int, unsigned int);
    CUresult (*DevResourceGenerateDesc)(CUdevResourceDesc *, CUdevResource *, unsigned int);
    CUresult (*GreenCtxCreate)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned int);
    CUresult (*GreenCtxDestroy)(CUgreenCtx);
    CUresult (*CtxFromGreenCtx)(CUcontext *, CUgreenCtx);
    CUresult (*GreenCtxStreamCreate)(CUstream *, CUgreenCtx, unsigned int, int);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxGetCurrent)(CUcontext *);
    CUresult (*StreamWaitValue32)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*GetErrorString)(CUresult, const char **);
} driver_t;

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

/* A partition of the device: one side (profile) or two (co-execution). */
typedef struct {
    unsigned sms[2]; /* sms[1] == 0: one side */
    side_t side[2];
} part_t;

/* Device buffers of one side, grown to the largest operator seen. */
typedef struct {
    void *in, *w, *out, *ws;
    size_t in_bytes, w_bytes, out_bytes, ws_bytes;
} bufs_t;

/* Per-operator state prepared before timing: a cuBLASLt matmul (plain
 * GEMMs), a cuDNN graph plan or, where that fails, legacy descriptors. */
typedef struct {
    cublasLtMatmulDesc_t mm;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t lt_algo;
    size_t lt_ws;
    ps_conv_plan_t *graph;
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnConvolutionFwdAlgo_t algo;
    size_t ws;
} prep_t;

typedef struct {
    ps_backend_t base;
    driver_t drv;
    int ordinal;
    CUdevice dev;
    CUdevResource sm_all;
    part_t parts[MAX_PARTS];
    int n_parts;
    side_t primary; /* the whole device, for the counters (no green context) */
    bufs_t bufs[2];
    volatile unsigned *gate;   /* mapped host memory */
    CUdeviceptr gate_dev;
    unsigned gate_seq;
} cuda_t;

static int cu_fail(const cuda_t *b, CUresult r, const char *what)
{
    const char *s = NULL;
    if (b->drv.GetErrorString)
        b->drv.GetErrorString(r, &s);
    return ps_error(PS_E_BACKEND, "cuda: %s: %s (%d)", what, s ? s : "unknown error", (int)r);
}

static int rt_fail(cudaError_t e, const char *what)
{
    return ps_error(PS_E_BACKEND, "cuda: %s: %s", what, cudaGetErrorString(e));
}

#define CU(call, what)                                                                             \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS)                                                                    \
            return cu_fail(b, r_, what);                                                           \
    } while (0)
#define RT(call, what)                                                                             \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return rt_fail(e_, what);                                                              \
    } while (0)
#define BLAS(call, what)                                                                           \
    do {                                                                                           \
        cublasStatus_t s_ = (call);                                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                           \
            return ps_error(PS_E_BACKEND, "cublas: %s: %s", what, cublasGetStatusString(s_));     \
    } while (0)
#define DNN(call, what)                                                                            \
    do {                                                                                           \
        cudnnStatus_t s_ = (call);                                                                 \
        if (s_ != CUDNN_STATUS_SUCCESS)                                                            \
            return ps_error(PS_E_BACKEND, "cudnn: %s: %s", what, cudnnGetErrorString(s_));        \
    } while (0)

static int load_driver(driver_t *d)
{
    static const struct {
        const char *name;
        size_t offset;
    } syms[] = {
        {"cuDeviceGet", offsetof(driver_t, DeviceGet)},
        {"cuDeviceGetDevResource", offsetof(driver_t, DeviceGetDevResource)},
        {"cuDevSmResourceSplitByCount", offsetof(driver_t, DevSmResourceSplitByCount)},
        {"cuDevResourceGenerateDesc", offsetof(driver_t, DevResourceGenerateDesc)},
        {"cuGreenCtxCreate", offsetof(driver_t, GreenCtxCreate)},
        {"cuGreenCtxDestroy", offsetof(driver_t, GreenCtxDestroy)},
        {"cuCtxFromGreenCtx", offsetof(driver_t, CtxFromGreenCtx)},
        {"cuGreenCtxStreamCreate", offsetof(driver_t, GreenCtxStreamCreate)},
        {"cuCtxSetCurrent", offsetof(driver_t, CtxSetCurrent)},
        {"cuCtxGetCurrent", offsetof(driver_t, CtxGetCurrent)},
        {"cuStreamWaitValue32", offsetof(driver_t, StreamWaitValue32)},
        {"cuStreamDestroy", offsetof(driver_t, StreamDestroy)},
        {"cuGetErrorString", offsetof(driver_t, GetErrorString)},
    };
    for (size_t i = 0; i < PS_ARRAY_LEN(syms); i++) {
        void *fn = NULL;
        enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        cudaError_t e = cudaGetDriverEntryPointByVersion(syms[i].name, &fn, CUDART_VERSION,
                                                         cudaEnableDefault, &q);
        if (e != cudaSuccess)
            return rt_fail(e, "loading the driver API");
        if (q != cudaDriverEntryPointSuccess || !fn)
            return ps_error(PS_E_BACKEND,
                            "cuda: the driver lacks %s (green contexts need driver 550 / CUDA "
                            "12.4 or newer)",
                            syms[i].name);
        memcpy((char *)d + syms[i].offset, &fn, sizeof fn);
    }
    return 0;
}

static void side_destroy(cuda_t *b, side_t *s)
{
    if (!s->ctx)
        return;
    b->drv.CtxSetCurrent(s->ctx);
    if (s->blas)
        cublasDestroy(s->blas);
    if (s->lt)
        cublasLtDestroy(s->lt);
    if (s->dnn)
        cudnnDestroy(s->dnn);
    if (s->stream)
        b->drv.StreamDestroy(s->stream);
    if (s->green)
        b->drv.GreenCtxDestroy(s->green);
    memset(s, 0, sizeof *s);
    cudaSetDevice(b->ordinal);
}

static int side_handles(cuda_t *b, side_t *s);

/* A green context on the SMs of res, with its stream and library handles. */
static int side_create(cuda_t *b, CUdevResource *res, side_t *s)
{
    CUdevResourceDesc desc;
    s->sms = res->sm.smCount;
    CU(b->drv.DevResourceGenerateDesc(&desc, res, 1), "cuDevResourceGenerateDesc");
    CU(b->drv.GreenCtxCreate(&s->green, desc, b->dev, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
    CU(b->drv.CtxFromGreenCtx(&s->ctx, s->green), "cuCtxFromGreenCtx");
    CU(b->drv.GreenCtxStreamCreate(&s->stream, s->green, CU_STREAM_NON_BLOCKING, 0),
       "cuGreenCtxStreamCreate");
    return side_handles(b, s);
}

/* cuBLAS, cuBLASLt and cuDNN handles for side s, on its stream. The SM
 * targets (cublasSetSmCountTarget here, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET
 * and cuDNN's engine SM_COUNT_TARGET per operator) make the libraries plan
 * for the side's SMs rather than the device's. */
static int side_handles(cuda_t *b, side_t *s)
{
    CU(b->drv.CtxSetCurrent(s->ctx), "cuCtxSetCurrent");
    BLAS(cublasCreate(&s->blas), "cublasCreate");
    BLAS(cublasSetStream(s->blas, (cudaStream_t)s->stream), "cublasSetStream");
    BLAS(cublasSetSmCountTarget(s->blas, (int)s->sms), "cublasSetSmCountTarget");
    BLAS(cublasSetMathMode(s->blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    BLAS(cublasLtCreate(&s->lt), "cublasLtCreate");
    DNN(cudnnCreate(&s->dnn), "cudnnCreate");
    DNN(cudnnSetStream(s->dnn, (cudaStream_t)s->stream), "cudnnSetStream");
    return 0;
}

/* Split `sms` SMs off `from`; the driver rounds to its granularity, and a
 * rounded group would measure another allocation than the one asked for. */
static int split(cuda_t *b, const CUdevResource *from, unsigned sms, CUdevResource *group,
                 CUdevResource *rest)
{
    unsigned n = 1;
    CUdevResource in = *from;
    CU(b->drv.DevSmResourceSplitByCount(group, &n, &in, rest, 0, sms), "cuDevSmResourceSplitByCount");
    if (n != 1 || group->sm.smCount != sms)
        return ps_error(PS_E_BACKEND,
                        "cuda: asked for %u SMs, the driver gave %u (minSmPartitionSize %u, "
                        "smCoscheduledAlignment %u)",
                        sms, n ? group->sm.smCount : 0, b->sm_all.sm.minSmPartitionSize,
                        b->sm_all.sm.smCoscheduledAlignment);
    return 0;
}

/* The partition of sms_a (and sms_b, when not 0) SMs, created on first use
 * and kept: creating handles costs far more than any operator. */
static int get_part(cuda_t *b, unsigned sms_a, unsigned sms_b, part_t **out)
{
    for (int i = 0; i < b->n_parts; i++)
        if (b->parts[i].sms[0] == sms_a && b->parts[i].sms[1] == sms_b) {
            *out = &b->parts[i];
            return 0;
        }
    if (b->n_parts == MAX_PARTS) {
        for (int i = 0; i < b->n_parts; i++)
            for (int k = 0; k < 2; k++)
                side_destroy(b, &b->parts[i].side[k]);
        b->n_parts = 0;
    }
    part_t *p = &b->parts[b->n_parts];
    memset(p, 0, sizeof *p);
    p->sms[0] = sms_a;
    p->sms[1] = sms_b;
    CUdevResource ga, gb, rest, rest2;
    int rc = 0;
    if (sms_a / 2 == b->sm_all.sm.smCount / 2 && !sms_b)
        ga = b->sm_all; /* the whole device (an odd SM left over stays in) */
    else
        rc = split(b, &b->sm_all, sms_a, &ga, &rest);
    if (rc == 0 && sms_b)
        rc = split(b, &rest, sms_b, &gb, &rest2);
    if (rc == 0)
        rc = side_create(b, &ga, &p->side[0]);
    if (rc == 0 && sms_b)
        rc = side_create(b, &gb, &p->side[1]);
    if (rc) {
        side_destroy(b, &p->side[0]);
        side_destroy(b, &p->side[1]);
        return rc;
    }
    b->n_parts++;
    *out = p;
    return 0;
}

static int grow(void **buf, size_t *have, size_t need, unsigned seed)
{
    if (need <= *have)
        return 0;
    if (*buf)
        cudaFree(*buf);
    *buf = NULL;
    *have = 0;
    RT(cudaMalloc(buf, need), "cudaMalloc");
    *have = need;
    RT(ps_kernel_fill(*buf, need / 2, seed, 0), "fill");
    return 0;
}

static void prep_free(prep_t *p, int n)
{
    for (int i = 0; p && i < n; i++) {
        if (p[i].mm)
            cublasLtMatmulDescDestroy(p[i].mm);
        if (p[i].la)
            cublasLtMatrixLayoutDestroy(p[i].la);
        if (p[i].lb)
            cublasLtMatrixLayoutDestroy(p[i].lb);
        if (p[i].lc)
            cublasLtMatrixLayoutDestroy(p[i].lc);
        ps_conv_plan_free(p[i].graph);
        if (p[i].x)
            cudnnDestroyTensorDescriptor(p[i].x);
        if (p[i].y)
            cudnnDestroyTensorDescriptor(p[i].y);
        if (p[i].w)
            cudnnDestroyFilterDescriptor(p[i].w);
        if (p[i].conv)
            cudnnDestroyConvolutionDescriptor(p[i].conv);
    }
    free(p);
}

/* A cuBLASLt matmul for a plain (batch 1) GEMM with the side's SM target;
 * 0 with p->mm NULL when the heuristic has nothing (cuBLAS then runs it). */
static int prep_gemm(const side_t *s, const ps_opdesc_t *op, prep_t *p)
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
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                             &ws, sizeof ws);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulAlgoGetHeuristic(s->lt, p->mm, p->la, p->lb, p->lc, p->lc, pref, 1, &res, &got);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || got == 0) {
        cublasLtMatmulDescDestroy(p->mm);
        p->mm = NULL;
        return 0;
    }
    p->lt_algo = res.algo;
    p->lt_ws = res.workspaceSize;
    return 0;
}

static int prep_conv(const side_t *s, const ps_opdesc_t *op, prep_t *p)
{
    /* The graph API first, for its SM target; the legacy API where no
     * engine plans the convolution. */
    if (ps_conv_plan_make(s->dnn, op, (int)s->sms, &p->graph, &p->ws) == 0)
        return 0;
    ps_log(PS_LOG_DEBUG, "%s: legacy cuDNN API (%s)", op->name, ps_last_error());
    const long long *v = op->p;
    int n = (int)v[PC_N], c = (int)v[PC_C], h = (int)v[PC_H], w = (int)v[PC_W], k = (int)v[PC_K];
    int g = (int)v[PC_GROUPS];
    DNN(cudnnCreateTensorDescriptor(&p->x), "tensor descriptor");
    DNN(cudnnCreateTensorDescriptor(&p->y), "tensor descriptor");
    DNN(cudnnCreateFilterDescriptor(&p->w), "filter descriptor");
    DNN(cudnnCreateConvolutionDescriptor(&p->conv), "convolution descriptor");
    DNN(cudnnSetTensor4dDescriptor(p->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, n, c, h, w), "x");
    DNN(cudnnSetFilter4dDescriptor(p->w, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, k, c / g, (int)v[PC_R],
                                   (int)v[PC_S]),
        "w");
    DNN(cudnnSetConvolution2dDescriptor(p->conv, (int)v[PC_PAD], (int)v[PC_PAD], (int)v[PC_STRIDE],
                                        (int)v[PC_STRIDE], 1, 1, CUDNN_CROSS_CORRELATION,
                                        CUDNN_DATA_FLOAT),
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
        return ps_error(PS_E_BACKEND, "cudnn: no algorithm for %s", op->name);
    p->algo = perf[pick].algo;
    DNN(cudnnGetConvolutionForwardWorkspaceSize(s->dnn, p->x, p->w, p->conv, p->y, p->algo, &p->ws),
        "workspace size");
    return 0;
}

/* Buffers and cuDNN plans for ops [start, start+len) on side s. */
static int prepare(cuda_t *b, const side_t *s, bufs_t *buf, const ps_oplist_t *l, int start, int len,
                   prep_t **out)
{
    *out = NULL;
    size_t in = 0, w = 0, o = 0, ws = 0;
    for (int i = start; i < start + len; i++) {
        long long a, bb, c;
        ps_op_tensor_elems(&l->ops[i], &a, &bb, &c);
        in = (size_t)a * 2 > in ? (size_t)a * 2 : in;
        w = (size_t)bb * 2 > w ? (size_t)bb * 2 : w;
        o = (size_t)c * 2 > o ? (size_t)c * 2 : o;
    }
    prep_t *p = ps_calloc((size_t)len, sizeof *p);
    if (!p)
        return PS_E_NOMEM;
    int rc = b->drv.CtxSetCurrent(s->ctx) == CUDA_SUCCESS ? 0 : ps_error(PS_E_BACKEND, "cuda: set context");
    for (int i = 0; i < len && rc == 0; i++) {
        if (l->ops[start + i].kind == PS_OPK_CONV)
            rc = prep_conv(s, &l->ops[start + i], &p[i]);
        else if (l->ops[start + i].kind == PS_OPK_GEMM)
            rc = prep_gemm(s, &l->ops[start + i], &p[i]);
        ws = p[i].ws > ws ? p[i].ws : ws;
        ws = p[i].lt_ws > ws ? p[i].lt_ws : ws;
    }
    cudaSetDevice(b->ordinal);
    if (rc == 0)
        rc = grow(&buf->in, &buf->in_bytes, in + 256, 1);
    if (rc == 0)
        rc = grow(&buf->w, &buf->w_bytes, w + 256, 2);
    if (rc == 0)
        rc = grow(&buf->out, &buf->out_bytes, o + 256, 3);
    if (rc == 0)
        rc = grow(&buf->ws, &buf->ws_bytes, ws + 256, 4);
    if (rc == 0 && cudaDeviceSynchronize() != cudaSuccess)
        rc = rt_fail(cudaGetLastError(), "buffer fill");
    for (int i = 0; i < len && rc == 0; i++)
        if (p[i].graph)
            rc = ps_conv_plan_bind(p[i].graph, buf->in, buf->w, buf->out, buf->ws);
    if (rc) {
        prep_free(p, len);
        return rc;
    }
    *out = p;
    return 0;
}

/* Enqueue one operator on side s (its context current). */
static int enqueue(const side_t *s, const bufs_t *buf, const ps_opdesc_t *op, const prep_t *p)
{
    const float one = 1.0f, zero = 0.0f;
    const long long *v = op->p;
    if (op->kind == PS_OPK_GEMM && p->mm) {
        BLAS(cublasLtMatmul(s->lt, p->mm, &one, buf->w, p->la, buf->in, p->lb, &zero, buf->out, p->lc,
                            buf->out, p->lc, &p->lt_algo, buf->ws, p->lt_ws, (cudaStream_t)s->stream),
             op->name);
        return 0;
    }
    if (op->kind == PS_OPK_GEMM) {
        /* Row-major C[m,n] = A[m,k] B[k,n] is column-major C^T = B^T A^T. */
        int m = (int)v[PG_M], n = (int)v[PG_N], k = (int)v[PG_K];
        BLAS(cublasGemmStridedBatchedEx(s->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, buf->w,
                                        CUDA_R_16F, n, (long long)k * n, buf->in, CUDA_R_16F, k,
                                        (long long)m * k, &zero, buf->out, CUDA_R_16F, n,
                                        (long long)m * n, (int)v[PG_BATCH], CUBLAS_COMPUTE_32F,
                                        CUBLAS_GEMM_DEFAULT),
             op->name);
        return 0;
    }
    if (op->kind == PS_OPK_CONV && p->graph)
        return ps_conv_plan_run(s->dnn, p->graph);
    if (op->kind == PS_OPK_CONV) {
        DNN(cudnnConvolutionForward(s->dnn, &one, p->x, buf->in, p->w, buf->w, p->conv, p->algo,
                                    buf->ws, p->ws, &zero, p->y, buf->out),
            op->name);
        return 0;
    }
    cudaError_t e = ps_kernel_launch(op, buf->in, buf->w, buf->out, (cudaStream_t)s->stream);
    return e == cudaSuccess ? 0 : rt_fail(e, op->name);
}

int ps_backend_cuda_counters(ps_backend_t *base, const ps_oplist_t *l, int tpcs, ps_counters_t *out);

static int cuda_profile(ps_backend_t *base, const ps_oplist_t *l, int tpcs, int warmup, int runs,
                        double *out_ns)
{
    cuda_t *b = (cuda_t *)base;
    part_t *part = NULL;
    prep_t *prep = NULL;
    int rc = get_part(b, 2u * (unsigned)tpcs, 0, &part);
    if (rc)
        return rc;
    side_t *s = &part->side[0];
    rc = prepare(b, s, &b->bufs[0], l, 0, l->n, &prep);
    if (rc)
        return rc;
    cudaEvent_t *ev = ps_calloc(2 * (size_t)runs, sizeof *ev);
    if (!ev) {
        prep_free(prep, l->n);
        return PS_E_NOMEM;
    }
    if (b->drv.CtxSetCurrent(s->ctx) != CUDA_SUCCESS)
        rc = ps_error(PS_E_BACKEND, "cuda: set context");
    for (int r = 0; r < 2 * runs && rc == 0; r++)
        if (cudaEventCreate(&ev[r]) != cudaSuccess)
            rc = rt_fail(cudaGetLastError(), "cudaEventCreate");
    cudaStream_t st = (cudaStream_t)s->stream;
    for (int i = 0; i < l->n && rc == 0; i++) {
        /* Warm up in the open (first launches may load modules or allocate
         * library workspaces, which must not wait behind the gate), then
         * hold the stream at the gate while the host enqueues every timed
         * run, so that the runs execute back to back and no launch latency
         * falls between an operator's events. */
        for (int r = 0; r < warmup && rc == 0; r++)
            rc = enqueue(s, &b->bufs[0], &l->ops[i], &prep[i]);
        if (rc == 0 && cudaStreamSynchronize(st) != cudaSuccess)
            rc = rt_fail(cudaGetLastError(), l->ops[i].name);
        unsigned gate = ++b->gate_seq;
        if (rc == 0 &&
            b->drv.StreamWaitValue32(s->stream, b->gate_dev, gate, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS)
            rc = ps_error(PS_E_BACKEND, "cuda: cuStreamWaitValue32 failed");
        for (int r = 0; r < runs && rc == 0; r++) {
            cudaEventRecord(ev[2 * r], st);
            rc = enqueue(s, &b->bufs[0], &l->ops[i], &prep[i]);
            cudaEventRecord(ev[2 * r + 1], st);
        }
        __atomic_store_n(b->gate, gate, __ATOMIC_SEQ_CST);
        if (rc == 0 && cudaStreamSynchronize(st) != cudaSuccess)
            rc = rt_fail(cudaGetLastError(), l->ops[i].name);
        for (int r = 0; r < runs && rc == 0; r++) {
            float ms = 0;
            if (cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]) != cudaSuccess)
                rc = rt_fail(cudaGetLastError(), "cudaEventElapsedTime");
            out_ns[(size_t)i * (size_t)runs + (size_t)r] = (double)ms * 1e6;
        }
    }
    for (int r = 0; r < 2 * runs; r++)
        if (ev[r])
            cudaEventDestroy(ev[r]);
    free(ev);
    prep_free(prep, l->n);
    cudaSetDevice(b->ordinal);
    return rc;
}

/* Enqueue one side of a co-execution behind the gate, timed by two events. */
static int enqueue_side(cuda_t *b, const side_t *s, const bufs_t *buf, const ps_segment_t *seg,
                        const prep_t *prep, unsigned gate, cudaEvent_t start, cudaEvent_t end)
{
    CU(b->drv.CtxSetCurrent(s->ctx), "cuCtxSetCurrent");
    CU(b->drv.StreamWaitValue32(s->stream, b->gate_dev, gate, CU_STREAM_WAIT_VALUE_GEQ),
       "cuStreamWaitValue32");
    RT(cudaEventRecord(start, (cudaStream_t)s->stream), "cudaEventRecord");
    for (int i = 0; i < seg->len; i++) {
        int rc = enqueue(s, buf, &seg->list->ops[seg->start + i], &prep[i]);
        if (rc)
            return rc;
    }
    RT(cudaEventRecord(end, (cudaStream_t)s->stream), "cudaEventRecord");
    return 0;
}

static int cuda_coexec(ps_backend_t *base, const ps_segment_t *hp, const ps_segment_t *lp, int warmup,
                       int runs, double *hp_ns, double *lp_ns)
{
    cuda_t *b = (cuda_t *)base;
    if (hp->len + lp->len > MAX_GATED_OPS)
        return ps_error(PS_E_ARG, "cuda: segments of %d operators together exceed %d", hp->len + lp->len,
                        MAX_GATED_OPS);
    part_t *part = NULL;
    int rc = get_part(b, 2u * (unsigned)hp->tpcs, 2u * (unsigned)lp->tpcs, &part);
    if (rc)
        return rc;
    const ps_segment_t *seg[2] = {hp, lp};
    prep_t *prep[2] = {NULL, NULL};
    cudaEvent_t ev[2][2] = {{NULL, NULL}, {NULL, NULL}};
    for (int k = 0; k < 2 && rc == 0; k++) {
        rc = prepare(b, &part->side[k], &b->bufs[k], seg[k]->list, seg[k]->start, seg[k]->len, &prep[k]);
        if (rc == 0 && b->drv.CtxSetCurrent(part->side[k].ctx) != CUDA_SUCCESS)
            rc = ps_error(PS_E_BACKEND, "cuda: set context");
        for (int j = 0; j < 2 && rc == 0; j++)
            if (cudaEventCreate(&ev[k][j]) != cudaSuccess)
                rc = rt_fail(cudaGetLastError(), "cudaEventCreate");
    }
    /* Each side once alone and in the open first: module loads and library
     * workspaces happen here, not while both streams wait at the gate. */
    for (int k = 0; k < 2 && rc == 0; k++) {
        if (b->drv.CtxSetCurrent(part->side[k].ctx) != CUDA_SUCCESS)
            rc = ps_error(PS_E_BACKEND, "cuda: set context");
        for (int i = 0; i < seg[k]->len && rc == 0; i++)
            rc = enqueue(&part->side[k], &b->bufs[k], &seg[k]->list->ops[seg[k]->start + i], &prep[k][i]);
        if (rc == 0 && cudaStreamSynchronize((cudaStream_t)part->side[k].stream) != cudaSuccess)
            rc = rt_fail(cudaGetLastError(), "warm-up");
    }
    for (int r = -warmup; r < runs && rc == 0; r++) {
        unsigned gate = ++b->gate_seq;
        for (int k = 0; k < 2 && rc == 0; k++)
            rc = enqueue_side(b, &part->side[k], &b->bufs[k], seg[k], prep[k], gate, ev[k][0], ev[k][1]);
        /* Open the gate: both streams start together. */
        __atomic_store_n(b->gate, gate, __ATOMIC_SEQ_CST);
        if (rc) {
            cudaDeviceSynchronize();
            break;
        }
        for (int k = 0; k < 2 && rc == 0; k++)
            if (cudaStreamSynchronize((cudaStream_t)part->side[k].stream) != cudaSuccess)
                rc = rt_fail(cudaGetLastError(), "co-execution");
        float ms[2] = {0, 0};
        for (int k = 0; k < 2 && rc == 0; k++)
            if (cudaEventElapsedTime(&ms[k], ev[k][0], ev[k][1]) != cudaSuccess)
                rc = rt_fail(cudaGetLastError(), "cudaEventElapsedTime");
        if (rc == 0 && r >= 0) {
            hp_ns[r] = (double)ms[0] * 1e6;
            lp_ns[r] = (double)ms[1] * 1e6;
        }
    }
    for (int k = 0; k < 2; k++) {
        for (int j = 0; j < 2; j++)
            if (ev[k][j])
                cudaEventDestroy(ev[k][j]);
        prep_free(prep[k], seg[k]->len);
    }
    cudaSetDevice(b->ordinal);
    return rc;
}

/* The counters of ps_counters_t, in its order (FORMATS.md's ops.csv). */
static const char *const counter_metrics[] = {
    "dram__bytes.sum",
    "lts__t_bytes.sum",
    "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
};
#define N_METRICS ((int)PS_ARRAY_LEN(counter_metrics))

/* The primary context as a side: the whole device, a stream of its own. */
static int primary_side(cuda_t *b, side_t **out)
{
    side_t *s = &b->primary;
    if (!s->ctx) {
        RT(cudaSetDevice(b->ordinal), "cudaSetDevice");
        CUcontext ctx = NULL;
        CU(b->drv.CtxGetCurrent(&ctx), "cuCtxGetCurrent");
        cudaStream_t st = NULL;
        RT(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate");
        s->ctx = ctx;
        s->stream = (CUstream)st;
        s->sms = b->sm_all.sm.smCount;
        int rc = side_handles(b, s);
        if (rc) {
            side_destroy(b, s);
            return rc;
        }
    }
    *out = s;
    return 0;
}

/* One pass of the user replay: every operator in its own range. */
static int counter_pass(cuda_t *b, side_t *s, const ps_oplist_t *l, const prep_t *prep,
                        ps_cupti_t *cp, int *all_done)
{
    int rc = ps_cupti_pass_begin(cp);
    for (int i = 0; i < l->n && rc == 0; i++) {
        rc = ps_cupti_range_push(cp, l->ops[i].name);
        if (rc == 0)
            rc = enqueue(s, &b->bufs[0], &l->ops[i], &prep[i]);
        if (rc == 0)
            rc = ps_cupti_range_pop(cp);
    }
    if (cudaStreamSynchronize((cudaStream_t)s->stream) != cudaSuccess && rc == 0)
        rc = rt_fail(cudaGetLastError(), "counter pass");
    int end = ps_cupti_pass_end(cp, all_done);
    return rc ? rc : end;
}

int ps_backend_cuda_counters(ps_backend_t *base, const ps_oplist_t *l, int tpcs, ps_counters_t *out)
{
    cuda_t *b = (cuda_t *)base;
    (void)tpcs; /* counters come from the whole device: the row with most TPCs */
    side_t *s = NULL;
    prep_t *prep = NULL;
    ps_cupti_t *cp = NULL;
    int rc = primary_side(b, &s);
    if (rc == 0)
        rc = prepare(b, s, &b->bufs[0], l, 0, l->n, &prep);
    if (rc == 0 && b->drv.CtxSetCurrent(s->ctx) != CUDA_SUCCESS)
        rc = ps_error(PS_E_BACKEND, "cuda: set context");
    /* One untimed round first, so that the passes see warm libraries. */
    for (int i = 0; i < l->n && rc == 0; i++)
        rc = enqueue(s, &b->bufs[0], &l->ops[i], &prep[i]);
    if (rc == 0 && cudaStreamSynchronize((cudaStream_t)s->stream) != cudaSuccess)
        rc = rt_fail(cudaGetLastError(), "warm-up");
    if (rc == 0)
        rc = ps_cupti_open(s->ctx, b->ordinal, counter_metrics, N_METRICS, l->n, &cp);
    int all_done = 0, passes = 0;
    while (rc == 0 && !all_done) {
        rc = counter_pass(b, s, l, prep, cp, &all_done);
        if (++passes > 256 && !all_done)
            rc = ps_error(PS_E_BACKEND, "cupti: more than 256 replay passes");
    }
    double *v = rc ? NULL : ps_calloc((size_t)l->n * N_METRICS, sizeof *v);
    if (rc == 0 && !v)
        rc = PS_E_NOMEM;
    int n_ranges = 0;
    if (rc == 0)
        rc = ps_cupti_results(cp, v, l->n, &n_ranges);
    if (rc == 0 && n_ranges != l->n)
        rc = ps_error(PS_E_BACKEND, "cupti: %d ranges profiled for %d operators", n_ranges, l->n);
    for (int i = 0; i < l->n && rc == 0; i++) {
        const double *m = v + (size_t)i * N_METRICS;
        ps_counters_t c = {m[0], m[1], m[2], m[3], m[4], m[5], m[6]};
        out[i] = c;
    }
    free(v);
    ps_cupti_close(cp);
    prep_free(prep, l->n);
    cudaSetDevice(b->ordinal);
    return rc;
}

/* Whole iterations of l on the primary context: this process's share of
 * the device, which under MPS is its active thread percentage. */
static int cuda_throughput(ps_backend_t *base, const ps_oplist_t *l, int warmup, double seconds,
                           void (*ready)(void *user), void *user, double *iters_per_s)
{
    cuda_t *b = (cuda_t *)base;
    side_t *s = NULL;
    prep_t *prep = NULL;
    int rc = primary_side(b, &s);
    if (rc == 0)
        rc = prepare(b, s, &b->bufs[0], l, 0, l->n, &prep);
    if (rc)
        return rc;
    cudaStream_t st = (cudaStream_t)s->stream;
    long iters = 0;
    double t0 = 0, el = 0;
    for (int it = -warmup; rc == 0; it++) {
        if (it == 0) {
            ready(user);
            t0 = ps_now();
        }
        for (int i = 0; i < l->n && rc == 0; i++)
            rc = enqueue(s, &b->bufs[0], &l->ops[i], &prep[i]);
        if (rc == 0 && cudaStreamSynchronize(st) != cudaSuccess)
            rc = rt_fail(cudaGetLastError(), "iteration");
        if (it >= 0) {
            iters++;
            el = ps_now() - t0;
            if (el >= seconds)
                break;
        }
    }
    prep_free(prep, l->n);
    if (rc == 0)
        *iters_per_s = (double)iters / el;
    return rc;
}

static void cuda_free(ps_backend_t *base)
{
    cuda_t *b = (cuda_t *)base;
    cudaDeviceSynchronize();
    if (b->primary.ctx) {
        /* The primary context and its stream belong to the runtime and to us
         * respectively; only the handles and the stream go. */
        b->drv.CtxSetCurrent(b->primary.ctx);
        if (b->primary.blas)
            cublasDestroy(b->primary.blas);
        if (b->primary.lt)
            cublasLtDestroy(b->primary.lt);
        if (b->primary.dnn)
            cudnnDestroy(b->primary.dnn);
        cudaStreamDestroy((cudaStream_t)b->primary.stream);
        memset(&b->primary, 0, sizeof b->primary);
    }
    for (int i = 0; i < b->n_parts; i++)
        for (int k = 0; k < 2; k++)
            side_destroy(b, &b->parts[i].side[k]);
    for (int k = 0; k < 2; k++) {
        cudaFree(b->bufs[k].in);
        cudaFree(b->bufs[k].w);
        cudaFree(b->bufs[k].out);
        cudaFree(b->bufs[k].ws);
    }
    if (b->gate)
        cudaFreeHost((void *)b->gate);
    free(b);
}

static int cuda_init(cuda_t *b, const ps_collect_params_t *p)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
        return ps_error(PS_E_BACKEND,
                        "cuda: no usable GPU (%s): is the NVIDIA driver (CUDA 13 or newer) "
                        "installed and a GPU visible?",
                        cudaGetErrorString(e));
    if (p->device < 0 || p->device >= n)
        return ps_error(PS_E_ARG, "cuda: no device %d (%d present)", p->device, n);
    b->ordinal = p->device;
    RT(cudaSetDevice(p->device), "cudaSetDevice");
    RT(cudaFree(NULL), "initialising the primary context");
    int rc = load_driver(&b->drv);
    if (rc)
        return rc;
    CU(b->drv.DeviceGet(&b->dev, p->device), "cuDeviceGet");
    CU(b->drv.DeviceGetDevResource(b->dev, &b->sm_all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
    struct cudaDeviceProp prop;
    RT(cudaGetDeviceProperties(&prop, p->device), "cudaGetDeviceProperties");
    ps_collect_device_t *d = &b->base.dev;
    ps_gpu_column_name(prop.name, d->gpu, sizeof d->gpu);
    d->sm_count = (int)b->sm_all.sm.smCount;
    d->tpc_count = d->sm_count / 2;
    d->min_partition_sms = (int)b->sm_all.sm.minSmPartitionSize;
    d->sm_alignment = (int)b->sm_all.sm.smCoscheduledAlignment;
    d->cc_major = prop.major;
    d->cc_minor = prop.minor;
    void *gate = NULL;
    RT(cudaHostAlloc(&gate, 64, cudaHostAllocMapped), "cudaHostAlloc");
    b->gate = gate;
    *b->gate = 0;
    void *dev_ptr = NULL;
    RT(cudaHostGetDevicePointer(&dev_ptr, gate, 0), "cudaHostGetDevicePointer");
    b->gate_dev = (CUdeviceptr)(uintptr_t)dev_ptr;
    return 0;
}

int ps_backend_cuda_open(const ps_collect_params_t *p, ps_backend_t **out)
{
    *out = NULL;
    cuda_t *b = ps_calloc(1, sizeof *b);
    if (!b)
        return PS_E_NOMEM;
    b->base.name = "cuda";
    b->base.mechanism = "green-ctx";
    b->base.profile = cuda_profile;
    b->base.coexec = cuda_coexec;
    b->base.counters = ps_backend_cuda_counters;
    b->base.throughput = cuda_throughput;
    b->base.free = cuda_free;
    int rc = cuda_init(b, p);
    if (rc) {
        if (b->ordinal >= 0 && b->gate)
            cudaFreeHost((void *)b->gate);
        free(b);
        return rc;
    }
    *out = &b->base;
    return 0;
}
