/*
 * Operator lists: the GPU work the collector replays for one (model, batch).
 *
 * Each operator is one GPU kernel in the model's execution order, with the
 * shape that decides its cost. The text form (one operator a line) is what
 * `pairsight collect ops` prints and `--ops-file` reads:
 *
 *     # pairsight oplist 1
 *     conv  layer1.0.conv1  n=8 c=64 h=56 w=56 k=64 r=1 s=1 stride=1 pad=0 groups=1
 *     norm  layer1.0.bn1    variant=batch n=8 c=64 hw=3136
 *     eltwise layer1.0.relu variant=relu elems=1605632 inputs=1
 *
 * Every kind has a fixed set of integer parameters (below); a missing one
 * takes its default, an unknown one is an error naming file:line:column.
 * Any kind may also carry `params=N`, the learned parameters the operator
 * reads (written by python -m pairsight.capture; not used for its cost).
 */
#ifndef PS_PROFILE_OPLIST_H
#define PS_PROFILE_OPLIST_H

#include "pairsight.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    PS_OPK_GEMM = 0, /* C[m,n] = A[m,k] B[k,n], `batch` independent products */
    PS_OPK_CONV,     /* NCHW convolution through cuDNN */
    PS_OPK_NORM,     /* batch/layer/RMS normalisation */
    PS_OPK_SOFTMAX,  /* row-wise softmax */
    PS_OPK_ELTWISE,  /* activations, residual adds, scaling, rotary */
    PS_OPK_POOL,     /* max/average/global-average pooling */
    PS_OPK_ATTN,     /* fused scaled-dot-product attention */
    PS_OPK_EMBED,    /* embedding gather */
    PS_OPK_COUNT
} psi_opkind_t;

/* Variants (the `variant=` key) of the kinds that have them. */
enum {
    PS_NORM_BATCH = 0,
    PS_NORM_LAYER,
    PS_NORM_RMS,
};
enum {
    PS_ELT_RELU = 0,
    PS_ELT_RELU6,
    PS_ELT_GELU,
    PS_ELT_SILU,
    PS_ELT_TANH,
    PS_ELT_SCALE,
    PS_ELT_ADD,
    PS_ELT_MUL,
    PS_ELT_SILU_MUL,
    PS_ELT_ROPE,
};
enum { PS_POOL_MAX = 0, PS_POOL_AVG, PS_POOL_GLOBAL };

#define PS_OP_MAX_PARAMS 10
#define PS_OP_NAME_MAX 64

/* Parameter slots of each kind, in this order (the names of the text form). */
enum { PG_M, PG_N, PG_K, PG_BATCH };
enum { PC_N, PC_C, PC_H, PC_W, PC_K, PC_R, PC_S, PC_STRIDE, PC_PAD, PC_GROUPS };
enum { PN_N, PN_C, PN_HW };   /* norm: n rows of c features x hw */
enum { PS_ROWS, PS_COLS };    /* softmax */
enum { PE_ELEMS, PE_INPUTS }; /* eltwise */
enum { PP_N, PP_C, PP_H, PP_W, PP_WINDOW, PP_STRIDE };
enum { PA_BATCH, PA_HEADS, PA_KV_HEADS, PA_SEQ_Q, PA_SEQ_KV, PA_HEAD_DIM, PA_CAUSAL };
enum { PM_ROWS, PM_DIM, PM_VOCAB }; /* embed */

typedef struct {
    psi_opkind_t kind;
    int variant;
    long long p[PS_OP_MAX_PARAMS];
    char name[PS_OP_NAME_MAX];
    long long params; /* learned parameters it reads (`params=`, optional; 0 = none or unknown) */
} psi_opdesc_t;

/* struct ps_oplist: ps_oplist_t of the public API (pairsight_collect.h). */
typedef struct ps_oplist {
    char model[64];
    int batch;
    int seq_len; /* tokens per sequence for transformers, 0 for CNNs */
    int fp32;    /* header `dtype=fp32`: the model runs in FP32 (the twin's kernels; the collector replays FP16) */
    psi_opdesc_t *ops;
    int n;
    size_t cap;
} psi_oplist_t;

psi_oplist_t *psi_oplist_new(const char *model, int batch, int seq_len);
void psi_oplist_free(psi_oplist_t *l);
int psi_oplist_push(psi_oplist_t *l, const psi_opdesc_t *op);

/* The name of a variant. */
const char *psi_opvariant_name(psi_opkind_t k, int variant);

/* The model's operator list, built from the published architecture (zoo.c).
 * seq_len <= 0 takes the model's default (128 tokens). */
int psi_zoo_build(const char *model, int batch, int seq_len, psi_oplist_t **out);

/* Users' lists registered under a model name (oplist_user.c): the list of
 * name, or NULL. */
const psi_oplist_t *psi_oplist_user(const char *name);
const char *psi_oplist_user_name(int i); /* the i-th registered list, NULL past the last */

/* Text form (above). The reader names path:line:column on error. */
int psi_oplist_write(const psi_oplist_t *l, FILE *f);
int psi_oplist_read(const char *path, psi_oplist_t **out);

/* Cost of one operator in floating-point operations and in bytes moved to
 * and from DRAM at fp16 when nothing stays in cache. Used by the fake backend
 * and for buffer sizing; not a measurement. */
double psi_op_flops(const psi_opdesc_t *op);
double psi_op_bytes(const psi_opdesc_t *op);

/* Element counts of an operator's input, weight and output tensors (for
 * buffer sizes; weight is 0 where there is none). */
void psi_op_tensor_elems(const psi_opdesc_t *op, long long *in, long long *weight, long long *out);

/* Output spatial size of a conv or pool along one axis. */
long long psi_conv_out(long long in, long long window, long long stride, long long pad);

#ifdef __cplusplus
}
#endif

#endif
