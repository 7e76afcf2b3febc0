/*
 * The CUDA backend: replays operator lists on an NVIDIA GPU with the SMs
 * split by green contexts.
 *
 * - SM partitions: cuDeviceGetDevResource gives the device's SMs with their
 *   minSmPartitionSize and smCoscheduledAlignment; the valid group sizes are
 *   probed once with cuDevSmResourceSplitByCount (collect info lists them).
 *   A partition carves one group of 2p SMs; for a co-execution the
 *   remainder first becomes a green context, whose resource
 *   (cuGreenCtxGetDevResource) is split for the second group, because the
 *   driver does not split a split's output again. Each group becomes a
 *   green context with its own stream (cuGreenCtxStreamCreate). Green
 *   contexts share the primary context's memory.
 * - Memory: every operator has its own weights and output in one arena per
 *   side and reads its predecessor's output (memplan.h), so a model moves
 *   the bytes the real one moves.
 * - Operators: GEMMs through cuBLAS with cublasSetSmCountTarget set to the
 *   partition's SMs, convolutions through cuDNN, the rest through kernels.cu.
 * - Timing: a standalone run executes the whole model in order, every
 *   operator between two events; a co-execution run times each side's
 *   segment between two events on its own stream. Launches wait behind
 *   flags in mapped host memory (cuStreamWaitValue32) until the host has
 *   enqueued them, so that host launch latency is not timed and both sides
 *   of a co-execution start together. With flush_l2 the L2 is flushed (a
 *   memset of twice its size) before every timed run of either kind.
 * - Clocks: NVML (loaded at run time, like the driver) reads the SM clock
 *   during every timed run.
 * - Every CUDA, cuBLAS, cuDNN, CUPTI and NVML result is checked and the
 *   failing call named in the error; cleanup paths discard theirs with an
 *   explicit (void), which tests/test_collect_checked.sh enforces.
 *
 * The driver API is reached through cudaGetDriverEntryPointByVersion rather
 * than by linking libcuda, so that the module loads where there is no
 * driver and reports that instead. This file is part of the CUDA module
 * libpairsight_cuda.so (module.h), which the host loads on first use.
 */
#include "collect/backend.h"
#include "collect/conv_cuda.h"
#include "collect/cupti_cuda.h"
#include "collect/device_cuda.h"
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

#include <dlfcn.h>
#include <math.h>

#define MAX_PARTS 64
#define MAX_GATED_OPS 512 /* launches both sides of a co-execution may queue behind the gate */
#define CHUNK_OPS 64      /* operators of a standalone run enqueued behind one gate */

typedef struct {
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetDevResource)(CUdevice, CUdevResource *, CUdevResourceType);
    CUresult (*DevSmResourceSplitByCount)(CUdevResource *, unsigned int *, const CUdevResource *, CUdevResource *,
                                          unsigned int, unsigned int);
    CUresult (*DevResourceGenerateDesc)(CUdevResourceDesc *, CUdevResource *, unsigned int);
    CUresult (*GreenCtxCreate)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned int);
    CUresult (*GreenCtxDestroy)(CUgreenCtx);
    CUresult (*GreenCtxGetDevResource)(CUgreenCtx, CUdevResource *, CUdevResourceType);
    CUresult (*CtxFromGreenCtx)(CUcontext *, CUgreenCtx);
    CUresult (*GreenCtxStreamCreate)(CUstream *, CUgreenCtx, unsigned int, int);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxGetCurrent)(CUcontext *);
    CUresult (*CtxGetExecAffinity)(CUexecAffinityParam *, CUexecAffinityType);
    CUresult (*StreamWaitValue32)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*GetErrorString)(CUresult, const char **);
} driver_t;

/* A partition of the device: one side (profile) or two (co-execution);
 * rest is the green context of the remainder the second side came from. */
typedef struct {
    unsigned sms[2]; /* sms[1] == 0: one side */
    side_t side[2];
    CUgreenCtx rest;
} part_t;

/* The device memory of one side: the arena of one model (memplan.h) and a
 * library workspace. */
typedef struct {
    char key[128]; /* model/batch/seq_len/n of the list laid out */
    void *base;
    psi_memplan_t plan;
    void *ws;
    size_t ws_bytes;
} arena_t;

typedef struct {
    psi_backend_t base;
    driver_t drv;
    nvml_t nvml;
    int ordinal;
    CUdevice dev;
    CUdevResource sm_all;
    part_t parts[MAX_PARTS];
    int n_parts;
    side_t primary; /* the whole device, for the counters (no green context) */
    arena_t arena[2];
    void *flush; /* L2 flush buffer */
    size_t flush_bytes;
    int flush_l2;
    volatile unsigned *gate; /* mapped host memory */
    CUdeviceptr gate_dev;
    unsigned gate_seq;
} cuda_t;

/* What one stream runs in a measurement: side s (its context and stream),
 * arena a (the buffers of seg's list), the segment of that list and the
 * library plans of its operators, prep[i] for operator seg.start + i. */
typedef struct {
    side_t *s;
    arena_t *a;
    psi_segment_t seg;
    prep_t *prep;
} lane_t;

static int cu_fail(const cuda_t *b, CUresult r, const char *what)
{
    const char *s = NULL;
    if (b->drv.GetErrorString && b->drv.GetErrorString(r, &s) != CUDA_SUCCESS)
        s = NULL;
    return psi_error(PS_E_BACKEND, "cuda: %s: %s (%d)", what, s ? s : "unknown error", (int)r);
}

static int rt_fail(cudaError_t e, const char *what)
{
    return psi_error(PS_E_BACKEND, "cuda: %s: %s (%d)", what, cudaGetErrorString(e), (int)e);
}

/* 0, or the named error of a failed driver (cu_) or runtime (rt_) call. */
static int cu_check(const cuda_t *b, CUresult r, const char *what)
{
    return r == CUDA_SUCCESS ? 0 : cu_fail(b, r, what);
}
static int rt_check(cudaError_t e, const char *what) { return e == cudaSuccess ? 0 : rt_fail(e, what); }

#define RETURN_IF_FAILED(check)                                                                                        \
    do {                                                                                                               \
        int rc_ = (check);                                                                                             \
        if (rc_)                                                                                                       \
            return rc_;                                                                                                \
    } while (0)
#define CU(call, what) RETURN_IF_FAILED(cu_check(b, (call), what))
#define RT(call, what) RETURN_IF_FAILED(rt_check((call), what))
/* rc = call's outcome, named, unless rc already holds an error (then call
 * is not made). */
#define RT_RC(rc, call, what) ((rc) = (rc) ? (rc) : rt_check((call), what))
#define CU_RC(rc, call, what) ((rc) = (rc) ? (rc) : cu_check(b, (call), what))

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
        {"cuGreenCtxGetDevResource", offsetof(driver_t, GreenCtxGetDevResource)},
        {"cuCtxFromGreenCtx", offsetof(driver_t, CtxFromGreenCtx)},
        {"cuGreenCtxStreamCreate", offsetof(driver_t, GreenCtxStreamCreate)},
        {"cuCtxSetCurrent", offsetof(driver_t, CtxSetCurrent)},
        {"cuCtxGetCurrent", offsetof(driver_t, CtxGetCurrent)},
        {"cuCtxGetExecAffinity", offsetof(driver_t, CtxGetExecAffinity)},
        {"cuStreamWaitValue32", offsetof(driver_t, StreamWaitValue32)},
        {"cuStreamDestroy", offsetof(driver_t, StreamDestroy)},
        {"cuGetErrorString", offsetof(driver_t, GetErrorString)},
    };
    for (size_t i = 0; i < PS_ARRAY_LEN(syms); i++) {
        void *fn = NULL;
        enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        cudaError_t e = cudaGetDriverEntryPointByVersion(syms[i].name, &fn, CUDART_VERSION, cudaEnableDefault, &q);
        if (e != cudaSuccess)
            return rt_fail(e, "cudaGetDriverEntryPointByVersion");
        if (q != cudaDriverEntryPointSuccess || !fn)
            return psi_error(PS_E_BACKEND,
                             "cuda: the driver lacks %s (green contexts need driver 550 / CUDA "
                             "12.4 or newer)",
                             syms[i].name);
        memcpy((char *)d + syms[i].offset, &fn, sizeof fn);
    }
    return 0;
}

/* Cleanup: every result is discarded on purpose, the first error having
 * been reported already. */
static void side_destroy(cuda_t *b, side_t *s)
{
    if (!s->ctx)
        return;
    (void)b->drv.CtxSetCurrent(s->ctx);
    if (s->blas)
        (void)cublasDestroy(s->blas);
    if (s->lt)
        (void)cublasLtDestroy(s->lt);
    if (s->dnn)
        (void)cudnnDestroy(s->dnn);
    if (s->stream)
        (void)b->drv.StreamDestroy(s->stream);
    if (s->green)
        (void)b->drv.GreenCtxDestroy(s->green);
    memset(s, 0, sizeof *s);
    (void)cudaSetDevice(b->ordinal);
}

static void part_destroy(cuda_t *b, part_t *p)
{
    for (int k = 0; k < 2; k++)
        side_destroy(b, &p->side[k]);
    if (p->rest)
        (void)b->drv.GreenCtxDestroy(p->rest);
    p->rest = NULL;
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
    CU(b->drv.GreenCtxStreamCreate(&s->stream, s->green, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate");
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

/* Split `sms` SMs off `from` (a resource of the device or of a green
 * context); the driver rounds to its granularity, and a rounded group
 * would measure another allocation than the one asked for. */
static int split(cuda_t *b, const CUdevResource *from, unsigned sms, CUdevResource *group, CUdevResource *rest)
{
    unsigned n = 1;
    CU(b->drv.DevSmResourceSplitByCount(group, &n, from, rest, 0, sms), "cuDevSmResourceSplitByCount");
    if (n != 1 || group->sm.smCount != sms)
        return psi_error(PS_E_BACKEND,
                         "cuda: asked for %u SMs, the driver gave %u (minSmPartitionSize %u, "
                         "smCoscheduledAlignment %u; `collect info` lists the valid counts)",
                         sms, n ? group->sm.smCount : 0, from->sm.minSmPartitionSize, from->sm.smCoscheduledAlignment);
    return 0;
}

/* The partition of sms_a (and sms_b, when not 0) SMs, created on first use
 * and kept: creating handles costs far more than any operator. The second
 * group comes from the remainder through a green context of its own, as the
 * driver API requires (a split's output is not split again). */
static int get_part(cuda_t *b, unsigned sms_a, unsigned sms_b, part_t **out)
{
    for (int i = 0; i < b->n_parts; i++)
        if (b->parts[i].sms[0] == sms_a && b->parts[i].sms[1] == sms_b) {
            *out = &b->parts[i];
            return 0;
        }
    if (b->n_parts == MAX_PARTS) {
        for (int i = 0; i < b->n_parts; i++)
            part_destroy(b, &b->parts[i]);
        b->n_parts = 0;
    }
    part_t *p = &b->parts[b->n_parts];
    memset(p, 0, sizeof *p);
    p->sms[0] = sms_a;
    p->sms[1] = sms_b;
    CUdevResource ga, gb, rest, rest_res, rest2;
    int rc = 0;
    if (sms_a / 2 == b->sm_all.sm.smCount / 2 && !sms_b)
        ga = b->sm_all; /* the whole device (an odd SM left over stays in) */
    else
        rc = split(b, &b->sm_all, sms_a, &ga, &rest);
    if (rc == 0 && sms_b) {
        CUdevResourceDesc desc;
        CU_RC(rc, b->drv.DevResourceGenerateDesc(&desc, &rest, 1), "cuDevResourceGenerateDesc (remainder)");
        CU_RC(rc, b->drv.GreenCtxCreate(&p->rest, desc, b->dev, CU_GREEN_CTX_DEFAULT_STREAM),
              "cuGreenCtxCreate (remainder)");
        CU_RC(rc, b->drv.GreenCtxGetDevResource(p->rest, &rest_res, CU_DEV_RESOURCE_TYPE_SM),
              "cuGreenCtxGetDevResource");
        if (rc == 0)
            rc = split(b, &rest_res, sms_b, &gb, &rest2);
    }
    if (rc == 0)
        rc = side_create(b, &ga, &p->side[0]);
    if (rc == 0 && sms_b)
        rc = side_create(b, &gb, &p->side[1]);
    if (rc) {
        part_destroy(b, p);
        return rc;
    }
    b->n_parts++;
    *out = p;
    return 0;
}

/* The group sizes the driver gives one side, probed: a split of s SMs that
 * comes back with exactly s SMs is valid; what it gives for every s is
 * granted_sms[s / 2] (`collect info`). Nothing is created. */
static void probe_valid_sms(cuda_t *b, ps_collect_device_t *d)
{
    memset(d->valid_sms_mask, 0, sizeof d->valid_sms_mask);
    memset(d->granted_sms, 0, sizeof d->granted_sms);
    unsigned all = b->sm_all.sm.smCount;
    for (unsigned s = 2; s <= all && s < 256; s += 2) {
        CUdevResource g, rest;
        unsigned n = 1, got = s;
        if (s / 2 != all / 2) {
            /* A size the driver refuses is simply not valid. */
            CUresult r = b->drv.DevSmResourceSplitByCount(&g, &n, &b->sm_all, &rest, 0, s);
            got = r == CUDA_SUCCESS && n == 1 ? g.sm.smCount : 0;
            if (r != CUDA_SUCCESS)
                psi_log(PS_LOG_DEBUG, "cuDevSmResourceSplitByCount(%u SMs): %d", s, (int)r);
        }
        d->granted_sms[s / 2] = (short)got;
        if (got == s)
            d->valid_sms_mask[s / 64] |= 1ULL << (s % 64);
    }
}

/* The arena of list l on side k, laid out (memplan.h), allocated and filled
 * with small values on first use of that list; another list replaces it. */
static int arena_get(cuda_t *b, int k, const psi_oplist_t *l, arena_t **out)
{
    arena_t *a = &b->arena[k];
    char key[sizeof a->key];
    snprintf(key, sizeof key, "%s/%d/%d/%d", l->model, l->batch, l->seq_len, l->n);
    *out = a;
    if (a->base && strcmp(a->key, key) == 0)
        return 0;
    if (a->base) {
        RT(cudaFree(a->base), "cudaFree (arena)");
        psi_memplan_free(&a->plan);
        a->base = NULL;
        a->key[0] = '\0';
    }
    psi_memplan_t sizes;
    int rc = psi_memplan_make(l, 0, &sizes);
    if (rc)
        return rc;
    /* In the primary context, whose memory every green context shares. */
    RT(cudaSetDevice(b->ordinal), "cudaSetDevice");
    size_t total = sizes.total_bytes;
    psi_memplan_free(&sizes);
    void *base = NULL;
    cudaError_t e = cudaMalloc(&base, total);
    if (e != cudaSuccess)
        return psi_error(PS_E_BACKEND, "cuda: cudaMalloc of %.3g GB for %s at batch %d: %s", total * 1e-9, l->model,
                         l->batch, cudaGetErrorString(e));
    rc = psi_memplan_make(l, (uintptr_t)base, &a->plan);
    RT_RC(rc, psi_kernel_fill(base, total / 2, 1u + (unsigned)k, 0), "filling the arena");
    RT_RC(rc, cudaDeviceSynchronize(), "filling the arena");
    if (rc) {
        (void)cudaFree(base);
        psi_memplan_free(&a->plan);
        return rc;
    }
    a->base = base;
    snprintf(a->key, sizeof a->key, "%s", key);
    return 0;
}

static int grow_ws(arena_t *a, size_t need)
{
    if (need <= a->ws_bytes)
        return 0;
    if (a->ws)
        RT(cudaFree(a->ws), "cudaFree (workspace)");
    a->ws = NULL;
    a->ws_bytes = 0;
    RT(cudaMalloc(&a->ws, need), "cudaMalloc (workspace)");
    a->ws_bytes = need;
    return 0;
}

/* Library plans for the operators of ln's segment on its side, bound to
 * their buffers in its arena: ln->prep, NULL for an empty segment. */
static int prepare(cuda_t *b, lane_t *ln)
{
    const psi_segment_t *g = &ln->seg;
    ln->prep = NULL;
    if (g->len == 0)
        return 0;
    prep_t *p = psi_calloc((size_t)g->len, sizeof *p);
    if (!p)
        return PS_E_NOMEM;
    size_t ws = 0;
    int rc = 0;
    CU_RC(rc, b->drv.CtxSetCurrent(ln->s->ctx), "cuCtxSetCurrent");
    for (int i = 0; i < g->len && rc == 0; i++) {
        const psi_opdesc_t *op = &g->list->ops[g->start + i];
        if (op->kind == PS_OPK_CONV)
            rc = psi_cuda_prep_conv(ln->s, op, &p[i]);
        else if (op->kind == PS_OPK_GEMM)
            rc = psi_cuda_prep_gemm(ln->s, op, &p[i]);
        ws = p[i].ws > ws ? p[i].ws : ws;
        ws = p[i].lt_ws > ws ? p[i].lt_ws : ws;
    }
    RT_RC(rc, cudaSetDevice(b->ordinal), "cudaSetDevice");
    if (rc == 0)
        rc = grow_ws(ln->a, ws + 256);
    for (int i = 0; i < g->len && rc == 0; i++) {
        const psi_opbuf_t *o = &ln->a->plan.op[g->start + i];
        if (p[i].graph)
            rc = psi_conv_plan_bind(p[i].graph, (void *)o->in, (void *)o->w, (void *)o->out, ln->a->ws);
    }
    if (rc) {
        psi_cuda_prep_free(p, g->len);
        return rc;
    }
    ln->prep = p;
    return 0;
}

/* Enqueue operator seg.start + i of lane ln on its stream (its context
 * current). */
static int enqueue(const lane_t *ln, int i)
{
    const float one = 1.0f, zero = 0.0f;
    const side_t *s = ln->s;
    const arena_t *a = ln->a;
    const psi_opdesc_t *op = &ln->seg.list->ops[ln->seg.start + i];
    const prep_t *p = &ln->prep[i];
    const long long *v = op->p;
    const psi_opbuf_t *o = &a->plan.op[ln->seg.start + i];
    void *in = (void *)o->in, *w = (void *)o->w, *out = (void *)o->out;
    if (op->kind == PS_OPK_GEMM && p->mm) {
        BLAS(cublasLtMatmul(s->lt, p->mm, &one, w, p->la, in, p->lb, &zero, out, p->lc, out, p->lc, &p->lt_algo, a->ws,
                            p->lt_ws, (cudaStream_t)s->stream),
             op->name);
        return 0;
    }
    if (op->kind == PS_OPK_GEMM) {
        /* Row-major C[m,n] = A[m,k] B[k,n] is column-major C^T = B^T A^T. */
        int m = (int)v[PG_M], n = (int)v[PG_N], k = (int)v[PG_K];
        BLAS(cublasGemmStridedBatchedEx(s->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, w, CUDA_R_16F, n,
                                        (long long)k * n, in, CUDA_R_16F, k, (long long)m * k, &zero, out, CUDA_R_16F,
                                        n, (long long)m * n, (int)v[PG_BATCH], CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
             op->name);
        return 0;
    }
    if (op->kind == PS_OPK_CONV && p->graph)
        return psi_conv_plan_run(s->dnn, p->graph);
    if (op->kind == PS_OPK_CONV) {
        DNN(cudnnConvolutionForward(s->dnn, &one, p->x, in, p->w, w, p->conv, p->algo, a->ws, p->ws, &zero, p->y, out),
            op->name);
        return 0;
    }
    cudaError_t e = psi_kernel_launch(op, in, w, out, (cudaStream_t)s->stream);
    return e == cudaSuccess ? 0 : rt_fail(e, op->name);
}

/* The cache state every timed run starts from (flush_l2): an L2 that holds
 * none of the run's data, as after Nsight Compute's --cache-control all. A
 * memset of twice the L2's size on the run's stream, finished before the
 * run is enqueued, so that it is never timed. */
static int flush_l2(cuda_t *b, const side_t *s)
{
    if (!b->flush_l2)
        return 0;
    CU(b->drv.CtxSetCurrent(s->ctx), "cuCtxSetCurrent");
    RT(cudaMemsetAsync(b->flush, 0, b->flush_bytes, (cudaStream_t)s->stream), "cudaMemsetAsync (L2 flush)");
    RT(cudaStreamSynchronize((cudaStream_t)s->stream), "cudaStreamSynchronize (L2 flush)");
    return 0;
}

static int gate_wait(cuda_t *b, const side_t *s, unsigned value)
{
    CU(b->drv.StreamWaitValue32(s->stream, b->gate_dev, value, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue32");
    return 0;
}

static void gate_open(cuda_t *b, unsigned value) { __atomic_store_n(b->gate, value, __ATOMIC_SEQ_CST); }

/* One run of ln's whole list, in model order, every operator between
 * ev[2i] and ev[2i+1]. Chunks of CHUNK_OPS operators wait behind their own
 * gate value, opened once the next chunk is enqueued, so that the stream
 * never waits on the host inside an operator's events (at most between two
 * operators) and the host never queues more than two chunks ahead. gated =
 * 0 runs in the open (the priming run: first launches may load modules,
 * which must not happen behind a gate). *mhz gets the SM clock read while
 * the run executes. */
static int model_run(cuda_t *b, const lane_t *ln, cudaEvent_t *ev, int gated, double *mhz)
{
    const side_t *s = ln->s;
    int n = ln->seg.len;
    cudaStream_t st = (cudaStream_t)s->stream;
    int rc = flush_l2(b, s);
    unsigned g0 = b->gate_seq + 1;
    int chunks = (n + CHUNK_OPS - 1) / CHUNK_OPS;
    for (int c = 0; c < chunks && rc == 0; c++) {
        if (gated)
            rc = gate_wait(b, s, g0 + (unsigned)c);
        for (int i = c * CHUNK_OPS; i < n && i < (c + 1) * CHUNK_OPS && rc == 0; i++) {
            RT_RC(rc, cudaEventRecord(ev[2 * i], st), "cudaEventRecord");
            if (rc == 0)
                rc = enqueue(ln, i);
            RT_RC(rc, cudaEventRecord(ev[2 * i + 1], st), "cudaEventRecord");
        }
        if (gated && c > 0)
            gate_open(b, g0 + (unsigned)c - 1);
    }
    if (gated) {
        /* Open every gate, also after a failure, so that nothing waits. */
        gate_open(b, g0 + (unsigned)chunks - 1);
        b->gate_seq = g0 + (unsigned)chunks - 1;
    }
    if (rc == 0)
        rc = psi_nvml_sm_clock(&b->nvml, 0, mhz);
    cudaError_t e = cudaStreamSynchronize(st);
    if (rc == 0 && e != cudaSuccess)
        rc = rt_fail(e, "cudaStreamSynchronize (standalone run)");
    return rc;
}

/* The timed runs of profile: one priming run in the open, `warmup` gated
 * untimed ones, then the timed runs, the whole model each time, as it runs
 * in service; ev holds two events per operator. */
static int profile_runs(cuda_t *b, const lane_t *ln, cudaEvent_t *ev, const psi_runs_t *rs, double *out_ns)
{
    int rc = 0, n = ln->seg.len;
    for (int r = -rs->warmup - 1; r < rs->runs && rc == 0; r++) {
        double mhz = NAN;
        rc = model_run(b, ln, ev, r >= -rs->warmup, &mhz);
        if (rc || r < 0)
            continue;
        rs->clock_mhz[r] = mhz;
        for (int i = 0; i < n && rc == 0; i++) {
            float ms = 0;
            RT_RC(rc, cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]), "cudaEventElapsedTime");
            out_ns[(size_t)i * (size_t)rs->runs + (size_t)r] = (double)ms * 1e6;
        }
    }
    return rc;
}

static int cuda_profile(psi_backend_t *base, const psi_oplist_t *l, int tpcs, const psi_runs_t *rs, double *out_ns)
{
    cuda_t *b = (cuda_t *)base;
    part_t *part = NULL;
    lane_t ln = {NULL, NULL, {l, 0, l->n, tpcs}, NULL};
    int rc = get_part(b, 2u * (unsigned)tpcs, 0, &part);
    if (rc == 0) {
        ln.s = &part->side[0];
        rc = arena_get(b, 0, l, &ln.a);
    }
    if (rc == 0)
        rc = prepare(b, &ln);
    if (rc)
        return rc;
    cudaEvent_t *ev = psi_calloc(2 * (size_t)l->n, sizeof *ev);
    if (!ev) {
        psi_cuda_prep_free(ln.prep, l->n);
        return PS_E_NOMEM;
    }
    CU_RC(rc, b->drv.CtxSetCurrent(ln.s->ctx), "cuCtxSetCurrent");
    for (int i = 0; i < 2 * l->n && rc == 0; i++)
        RT_RC(rc, cudaEventCreate(&ev[i]), "cudaEventCreate");
    if (rc == 0)
        rc = profile_runs(b, &ln, ev, rs, out_ns);
    for (int i = 0; i < 2 * l->n; i++)
        if (ev[i])
            (void)cudaEventDestroy(ev[i]);
    free(ev);
    psi_cuda_prep_free(ln.prep, l->n);
    if (cudaSetDevice(b->ordinal) != cudaSuccess && rc == 0)
        rc = rt_fail(cudaGetLastError(), "cudaSetDevice");
    return rc;
}

/* Enqueue one lane of a co-execution behind the gate, timed by ev[0] and
 * ev[1] (nothing between them for an empty segment). */
static int enqueue_side(cuda_t *b, const lane_t *ln, unsigned gate, cudaEvent_t ev[2])
{
    CU(b->drv.CtxSetCurrent(ln->s->ctx), "cuCtxSetCurrent");
    int rc = gate_wait(b, ln->s, gate);
    if (rc)
        return rc;
    RT(cudaEventRecord(ev[0], (cudaStream_t)ln->s->stream), "cudaEventRecord");
    for (int i = 0; i < ln->seg.len; i++) {
        rc = enqueue(ln, i);
        if (rc)
            return rc;
    }
    RT(cudaEventRecord(ev[1], (cudaStream_t)ln->s->stream), "cudaEventRecord");
    return 0;
}

/* One co-execution run of both lanes: both wait at one gate, opened once
 * both are enqueued, so that they start together. ms[k] gets lane k's time,
 * *mhz the SM clock read while they run. */
static int coexec_run(cuda_t *b, const lane_t ln[2], cudaEvent_t ev[2][2], float ms[2], double *mhz)
{
    int rc = flush_l2(b, ln[0].s);
    unsigned gate = ++b->gate_seq;
    for (int k = 0; k < 2 && rc == 0; k++)
        rc = enqueue_side(b, &ln[k], gate, ev[k]);
    /* Open the gate (also after a failure, so that nothing waits). */
    gate_open(b, gate);
    if (rc == 0)
        rc = psi_nvml_sm_clock(&b->nvml, 0, mhz);
    for (int k = 0; k < 2; k++) {
        cudaError_t e = cudaStreamSynchronize((cudaStream_t)ln[k].s->stream);
        if (rc == 0 && e != cudaSuccess)
            rc = rt_fail(e, "cudaStreamSynchronize (co-execution)");
    }
    for (int k = 0; k < 2 && rc == 0; k++)
        RT_RC(rc, cudaEventElapsedTime(&ms[k], ev[k][0], ev[k][1]), "cudaEventElapsedTime");
    return rc;
}

/* Lane k of a co-execution on side k of part: its arena, its plans and
 * its two events. */
static int coexec_lane(cuda_t *b, part_t *part, int k, lane_t *ln, cudaEvent_t ev[2])
{
    int rc = 0;
    ln->s = &part->side[k];
    ln->a = &b->arena[k];
    if (ln->seg.len > 0)
        rc = arena_get(b, k, ln->seg.list, &ln->a);
    if (rc == 0)
        rc = prepare(b, ln);
    CU_RC(rc, b->drv.CtxSetCurrent(ln->s->ctx), "cuCtxSetCurrent");
    for (int j = 0; j < 2 && rc == 0; j++)
        RT_RC(rc, cudaEventCreate(&ev[j]), "cudaEventCreate");
    return rc;
}

static int cuda_coexec(psi_backend_t *base, const psi_segment_t *hp, const psi_segment_t *lp, const psi_runs_t *rs,
                       double *hp_ns, double *lp_ns)
{
    cuda_t *b = (cuda_t *)base;
    if (hp->len + lp->len > MAX_GATED_OPS)
        return psi_error(PS_E_ARG, "cuda: segments of %d operators together exceed %d", hp->len + lp->len,
                         MAX_GATED_OPS);
    part_t *part = NULL;
    int rc = get_part(b, 2u * (unsigned)hp->tpcs, 2u * (unsigned)lp->tpcs, &part);
    if (rc)
        return rc;
    lane_t ln[2] = {{NULL, NULL, *hp, NULL}, {NULL, NULL, *lp, NULL}};
    cudaEvent_t ev[2][2] = {{NULL, NULL}, {NULL, NULL}};
    for (int k = 0; k < 2 && rc == 0; k++)
        rc = coexec_lane(b, part, k, &ln[k], ev[k]);
    /* Each side once alone and in the open first: module loads and library
     * workspaces happen here, not while both streams wait at the gate. */
    for (int k = 0; k < 2 && rc == 0; k++) {
        CU_RC(rc, b->drv.CtxSetCurrent(ln[k].s->ctx), "cuCtxSetCurrent");
        for (int i = 0; i < ln[k].seg.len && rc == 0; i++)
            rc = enqueue(&ln[k], i);
        RT_RC(rc, cudaStreamSynchronize((cudaStream_t)ln[k].s->stream), "cudaStreamSynchronize (warm-up)");
    }
    for (int r = -rs->warmup; r < rs->runs && rc == 0; r++) {
        float ms[2] = {0, 0};
        double mhz = NAN;
        rc = coexec_run(b, ln, ev, ms, &mhz);
        if (rc == 0 && r >= 0) {
            hp_ns[r] = (double)ms[0] * 1e6;
            lp_ns[r] = (double)ms[1] * 1e6;
            rs->clock_mhz[r] = mhz;
        }
    }
    for (int k = 0; k < 2; k++) {
        for (int j = 0; j < 2; j++)
            if (ev[k][j])
                (void)cudaEventDestroy(ev[k][j]);
        psi_cuda_prep_free(ln[k].prep, ln[k].seg.len);
    }
    if (cudaSetDevice(b->ordinal) != cudaSuccess && rc == 0)
        rc = rt_fail(cudaGetLastError(), "cudaSetDevice");
    return rc;
}

/* The primary context as a side: the whole device, a stream of its own. */
static int primary_side(cuda_t *b, side_t **out)
{
    side_t *s = &b->primary;
    if (!s->ctx) {
        RT(cudaSetDevice(b->ordinal), "cudaSetDevice");
        CUcontext ctx = NULL;
        CU(b->drv.CtxGetCurrent(&ctx), "cuCtxGetCurrent");
        cudaStream_t st = NULL;
        RT(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
        s->ctx = ctx;
        s->stream = (CUstream)st;
        s->sms = b->sm_all.sm.smCount;
        int rc = side_handles(b, s);
        if (rc)
            return rc;
    }
    *out = s;
    return 0;
}

/* One pass of the user replay: every operator in its own range, in model
 * order from the same cache state as a timed run. */
static int counter_pass(cuda_t *b, const lane_t *ln, psi_cupti_t *cp, int *all_done)
{
    int rc = flush_l2(b, ln->s);
    if (rc == 0)
        rc = psi_cupti_pass_begin(cp);
    for (int i = 0; i < ln->seg.len && rc == 0; i++) {
        rc = psi_cupti_range_push(cp, ln->seg.list->ops[ln->seg.start + i].name);
        if (rc == 0)
            rc = enqueue(ln, i);
        if (rc == 0)
            rc = psi_cupti_range_pop(cp);
    }
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)ln->s->stream);
    if (e != cudaSuccess && rc == 0)
        rc = rt_fail(e, "cudaStreamSynchronize (counter pass)");
    int end = psi_cupti_pass_end(cp, all_done);
    return rc ? rc : end;
}

#define N_METRICS 7

/* Counters of every operator on the whole device (the primary context) or
 * on a green context of tpcs TPCs. */
static int cuda_counters(psi_backend_t *base, const psi_oplist_t *l, int tpcs, psi_counters_t *out)
{
    cuda_t *b = (cuda_t *)base;
    lane_t ln = {NULL, NULL, {l, 0, l->n, tpcs}, NULL};
    psi_cupti_t *cp = NULL;
    part_t *part = NULL;
    int rc = 0;
    if (tpcs >= b->base.dev.tpc_count)
        rc = primary_side(b, &ln.s);
    else if ((rc = get_part(b, 2u * (unsigned)tpcs, 0, &part)) == 0)
        ln.s = &part->side[0];
    if (rc == 0)
        rc = arena_get(b, 0, l, &ln.a);
    if (rc == 0)
        rc = prepare(b, &ln);
    CU_RC(rc, b->drv.CtxSetCurrent(ln.s ? ln.s->ctx : NULL), "cuCtxSetCurrent");
    /* One untimed round first, so that the passes see warm libraries. */
    for (int i = 0; i < l->n && rc == 0; i++)
        rc = enqueue(&ln, i);
    RT_RC(rc, cudaStreamSynchronize((cudaStream_t)ln.s->stream), "cudaStreamSynchronize (warm-up)");
    if (rc == 0)
        rc = psi_cupti_open(ln.s->ctx, b->ordinal, psi_cuda_counter_metrics(), N_METRICS, l->n, &cp);
    int all_done = 0, passes = 0;
    while (rc == 0 && !all_done) {
        rc = counter_pass(b, &ln, cp, &all_done);
        if (++passes > 256 && !all_done)
            rc = psi_error(PS_E_BACKEND, "cupti: more than 256 replay passes");
    }
    double *v = rc ? NULL : psi_calloc((size_t)l->n * N_METRICS, sizeof *v);
    if (rc == 0 && !v)
        rc = PS_E_NOMEM;
    int n_ranges = 0;
    if (rc == 0)
        rc = psi_cupti_results(cp, v, l->n, &n_ranges);
    if (rc == 0 && n_ranges != l->n)
        rc = psi_error(PS_E_BACKEND, "cupti: %d ranges profiled for %d operators", n_ranges, l->n);
    for (int i = 0; i < l->n && rc == 0; i++) {
        const double *m = v + (size_t)i * N_METRICS;
        psi_counters_t c = {m[0], m[1], m[2], m[3], m[4], m[5], m[6]};
        out[i] = c;
    }
    free(v);
    psi_cupti_close(cp);
    psi_cuda_prep_free(ln.prep, l->n);
    if (cudaSetDevice(b->ordinal) != cudaSuccess && rc == 0)
        rc = rt_fail(cudaGetLastError(), "cudaSetDevice");
    return rc;
}

/* Whole iterations of l on the primary context: this process's share of
 * the device, which under MPS is its active thread percentage. */
static int cuda_throughput(psi_backend_t *base, const psi_oplist_t *l, int warmup, double seconds, psi_ready_t ready,
                           double *iters_per_s)
{
    cuda_t *b = (cuda_t *)base;
    lane_t ln = {NULL, NULL, {l, 0, l->n, b->base.dev.tpc_count}, NULL};
    int rc = primary_side(b, &ln.s);
    if (rc == 0)
        rc = arena_get(b, 0, l, &ln.a);
    if (rc == 0)
        rc = prepare(b, &ln);
    if (rc)
        return rc;
    cudaStream_t st = (cudaStream_t)ln.s->stream;
    long iters = 0;
    double t0 = 0, el = 0;
    for (int it = -warmup; rc == 0; it++) {
        if (it == 0) {
            ready.fn(ready.user);
            t0 = psi_now();
        }
        for (int i = 0; i < l->n && rc == 0; i++)
            rc = enqueue(&ln, i);
        RT_RC(rc, cudaStreamSynchronize(st), "cudaStreamSynchronize (iteration)");
        if (it >= 0) {
            iters++;
            el = psi_now() - t0;
            if (el >= seconds)
                break;
        }
    }
    psi_cuda_prep_free(ln.prep, l->n);
    if (rc == 0)
        *iters_per_s = (double)iters / el;
    return rc;
}

static int cuda_buffers(psi_backend_t *base, const psi_oplist_t *l, psi_memplan_t *out)
{
    cuda_t *b = (cuda_t *)base;
    arena_t *a = NULL;
    int rc = arena_get(b, 0, l, &a);
    return rc ? rc : psi_memplan_make(l, (uintptr_t)a->base, out);
}

/* Cleanup: results discarded on purpose. */
static void cuda_free(psi_backend_t *base)
{
    cuda_t *b = (cuda_t *)base;
    (void)cudaDeviceSynchronize();
    if (b->primary.ctx) {
        /* The primary context belongs to the runtime; only our handles and
         * stream go. */
        (void)b->drv.CtxSetCurrent(b->primary.ctx);
        if (b->primary.blas)
            (void)cublasDestroy(b->primary.blas);
        if (b->primary.lt)
            (void)cublasLtDestroy(b->primary.lt);
        if (b->primary.dnn)
            (void)cudnnDestroy(b->primary.dnn);
        (void)cudaStreamDestroy((cudaStream_t)b->primary.stream);
        memset(&b->primary, 0, sizeof b->primary);
    }
    for (int i = 0; i < b->n_parts; i++)
        part_destroy(b, &b->parts[i]);
    for (int k = 0; k < 2; k++) {
        if (b->arena[k].base)
            (void)cudaFree(b->arena[k].base);
        if (b->arena[k].ws)
            (void)cudaFree(b->arena[k].ws);
        psi_memplan_free(&b->arena[k].plan);
    }
    if (b->flush)
        (void)cudaFree(b->flush);
    if (b->gate)
        (void)cudaFreeHost((void *)b->gate);
    psi_nvml_close(&b->nvml);
    free(b);
}

static int cuda_init(cuda_t *b, const ps_collect_params_t *p)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
        return psi_error(PS_E_BACKEND,
                         "cuda: no usable GPU (cudaGetDeviceCount: %s): is the NVIDIA driver (CUDA 13 "
                         "or newer) installed and a GPU visible?",
                         cudaGetErrorString(e));
    if (p->device < 0 || p->device >= n)
        return psi_error(PS_E_ARG, "cuda: no device %d (%d present)", p->device, n);
    b->ordinal = p->device;
    b->flush_l2 = p->flush_l2;
    RT(cudaSetDevice(p->device), "cudaSetDevice");
    RT(cudaFree(NULL), "cudaFree (initialising the primary context)");
    int rc = load_driver(&b->drv);
    if (rc)
        return rc;
    CU(b->drv.DeviceGet(&b->dev, p->device), "cuDeviceGet");
    CU(b->drv.DeviceGetDevResource(b->dev, &b->sm_all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
    struct cudaDeviceProp prop;
    RT(cudaGetDeviceProperties(&prop, p->device), "cudaGetDeviceProperties");
    ps_collect_device_t *d = &b->base.dev;
    psi_gpu_column_name(prop.name, d->gpu, sizeof d->gpu);
    d->sm_count = (int)b->sm_all.sm.smCount;
    d->tpc_count = d->sm_count / 2;
    d->min_partition_sms = (int)b->sm_all.sm.minSmPartitionSize;
    d->sm_alignment = (int)b->sm_all.sm.smCoscheduledAlignment;
    d->cc_major = prop.major;
    d->cc_minor = prop.minor;
    d->mechanism = "green-ctx";
    probe_valid_sms(b, d);
    /* The SMs this context may use: fewer than the device's under an MPS
     * active thread percentage. */
    CUexecAffinityParam aff;
    memset(&aff, 0, sizeof aff);
    CUresult ar = b->drv.CtxGetExecAffinity(&aff, CU_EXEC_AFFINITY_TYPE_SM_COUNT);
    if (ar == CUDA_SUCCESS)
        d->exec_sms = (int)aff.param.smCount.val;
    else {
        d->exec_sms = d->sm_count;
        if (ar != CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY)
            psi_log(PS_LOG_WARN, "cuCtxGetExecAffinity: error %d; taking every SM as this process's", (int)ar);
    }
    char bus[32];
    RT(cudaDeviceGetPCIBusId(bus, (int)sizeof bus, p->device), "cudaDeviceGetPCIBusId");
    rc = psi_nvml_open(&b->nvml, bus);
    if (rc == 0)
        rc = psi_nvml_sm_clock(&b->nvml, 0, &d->sm_clock_mhz);
    if (rc == 0)
        rc = psi_nvml_sm_clock(&b->nvml, 1, &d->sm_clock_max_mhz);
    if (rc)
        return rc;
    int l2 = 0;
    RT(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, p->device), "cudaDeviceGetAttribute (L2 size)");
    b->flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : 1 << 20);
    RT(cudaMalloc(&b->flush, b->flush_bytes), "cudaMalloc (L2 flush buffer)");
    void *gate = NULL;
    RT(cudaHostAlloc(&gate, 64, cudaHostAllocMapped), "cudaHostAlloc");
    b->gate = gate;
    *b->gate = 0;
    void *dev_ptr = NULL;
    RT(cudaHostGetDevicePointer(&dev_ptr, gate, 0), "cudaHostGetDevicePointer");
    b->gate_dev = (CUdeviceptr)(uintptr_t)dev_ptr;
    return 0;
}

int psi_backend_cuda_open(const ps_collect_params_t *p, psi_backend_t **out)
{
    /* psi_backend_t in its order: name, mechanism, dev (set below), then the
     * calls, each of its own type (a call out of order does not compile). */
    static const psi_backend_t cuda_backend = {"cuda",        "green-ctx",  {.gpu = ""},     cuda_profile, cuda_coexec,
                                               cuda_counters, cuda_buffers, cuda_throughput, cuda_free};
    *out = NULL;
    cuda_t *b = psi_calloc(1, sizeof *b);
    if (!b)
        return PS_E_NOMEM;
    b->base = cuda_backend;
    int rc = cuda_init(b, p);
    if (rc) {
        cuda_free(&b->base);
        return rc;
    }
    *out = &b->base;
    return 0;
}
