/*
 * Workloads of the simulator: the classic models re-timed from the Orion V100
 * kernel profiles (data/orion_kernels.inc, derived by `pairsight simulate
 * --derive`), and BERT-base and Llama-3.2-1B/3B built from their published
 * shapes with FLOPs and bytes computed from the shapes (docs/simulator.md,
 * "Workloads").
 */
#include "simulate/sim.h"
#include "simulate/derive.h"
#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const psi_sim_model_names[] = {
    "resnet50",     "resnet101",  "mobilenetv2",    "bert-base", "llama-3.2-1b",
    "llama-3.2-3b", "bert-large", "transformer-xl", NULL,
};

int psi_sim_model_check(const char *model)
{
    if (psi_oplist_user(model))
        return PS_OK;
    int n = 0, k;
    while (psi_sim_model_names[n])
        n++;
    return psi_name_index("model", model, psi_sim_model_names, n, &k);
}

/* ---- Builder: a growing array of kernels ---- */

typedef struct {
    sim_kernel_t *k;
    int n, cap;
    int failed;
} builder_t;

static sim_kernel_t *push(builder_t *b)
{
    if (b->failed)
        return NULL;
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 256;
        sim_kernel_t *k = psi_realloc(b->k, (size_t)cap * sizeof *k);
        if (!k) {
            b->failed = 1;
            return NULL;
        }
        b->k = k;
        b->cap = cap;
    }
    sim_kernel_t *k = &b->k[b->n++];
    memset(k, 0, sizeof *k);
    return k;
}

/* FP16 GEMM C[M,N] = A[M,K] B[K,N] with B the weights (2 bytes an element).
 * Large GEMMs run 128x128 tiles, one resident per SM, reading a K x 128 panel
 * of A and of B from L2 per tile; skinny ones (M < 64, the decode step) run
 * as GEMV-like kernels with 16 output columns per block. */
static void gemm(builder_t *b, const char *name, double m, double n, double kk)
{
    sim_kernel_t *k = push(b);
    if (!k)
        return;
    double dram = 2.0 * (m * kk + kk * n + m * n);
    k->name = name;
    k->flops = 2.0 * m * n * kk;
    k->dram_bytes = dram;
    k->tensor = SIM_FP16;
    k->lat_rounds = 1.0;
    if (m >= 64) {
        k->ctas = ceil(m / 128.0) * ceil(n / 128.0);
        k->ctas_per_sm = 1;
        k->flop_eff = 0.7;
        double l2 = 2.0 * kk * 256.0 * k->ctas + 2.0 * m * n;
        k->l2_bytes = l2 > dram ? l2 : dram;
    } else {
        /* GEMV-like: blocks of 256 threads, 16 output columns each (two a
         * warp, reading the weight columns with unrolled vector loads, two
         * in flight a thread), eight resident an SM. */
        k->ctas = ceil(n / 16.0);
        k->ctas_per_sm = 8;
        k->threads = 256;
        k->ilp = 2;
        k->flop_eff = 0.3;
        k->l2_bytes = 1.1 * dram;
    }
}

/* Elementwise kernel over `elems` FP16 elements reading nin and writing nout
 * tensors: 2048 elements a block, eight blocks resident per SM. */
static void elementwise(builder_t *b, const char *name, double elems, int nin, int nout, double flops_per)
{
    sim_kernel_t *k = push(b);
    if (!k)
        return;
    k->name = name;
    k->flops = elems * flops_per;
    k->dram_bytes = 2.0 * elems * (nin + nout);
    k->l2_bytes = k->dram_bytes;
    k->ctas = ceil(elems / 2048.0);
    k->ctas_per_sm = 8;
    k->lat_rounds = 0.5;
    k->flop_eff = 0.5;
}

/* Row-wise normalization or softmax over rows x cols: one block a row; the
 * row is read twice (statistics, then normalize; the second read hits L2)
 * and the reductions add dependent round trips. */
static void rowwise(builder_t *b, const char *name, double rows, double cols, double weights)
{
    sim_kernel_t *k = push(b);
    if (!k)
        return;
    k->name = name;
    k->flops = 8.0 * rows * cols;
    k->dram_bytes = 2.0 * rows * cols * 2.0 + 2.0 * weights;
    k->l2_bytes = 1.5 * k->dram_bytes;
    k->ctas = rows;
    k->ctas_per_sm = 8;
    k->lat_rounds = 2.0;
    k->flop_eff = 0.5;
}

/* Gather of `rows` embedding rows of width h: each block first loads the
 * index, then the row, so the kernel waits on two dependent round trips. */
static void embedding(builder_t *b, const char *name, double rows, double h)
{
    sim_kernel_t *k = push(b);
    if (!k)
        return;
    k->name = name;
    k->flops = rows * h;
    k->dram_bytes = 2.0 * rows * h * 2.0;
    k->l2_bytes = k->dram_bytes;
    k->ctas = rows;
    k->ctas_per_sm = 8;
    k->lat_rounds = 2.0;
    k->flop_eff = 0.5;
}

/* Batched GEMM of the attention (QK^T or AV): count matrices of m x n x kk
 * with no weights; both operands are activations. */
static void bmm(builder_t *b, const char *name, double count, double m, double n, double kk)
{
    sim_kernel_t *k = push(b);
    if (!k)
        return;
    k->name = name;
    k->flops = 2.0 * count * m * n * kk;
    k->dram_bytes = 2.0 * count * (m * kk + kk * n + m * n);
    k->ctas = count * ceil(m / 128.0) * ceil(n / 128.0);
    k->ctas_per_sm = 1;
    k->flop_eff = 0.55;
    k->tensor = SIM_FP16;
    k->lat_rounds = 1.0;
    double l2 = 2.0 * count * kk * 256.0 * ceil(m / 128.0) * ceil(n / 128.0) + 2.0 * count * m * n;
    k->l2_bytes = l2 > k->dram_bytes ? l2 : k->dram_bytes;
}

/* BERT-base (Devlin et al. 2019; HF bert-base-uncased config.json): 12
 * layers, hidden 768, 12 heads, intermediate 3072, vocabulary 30522; the
 * eager PyTorch attention (two batched GEMMs around a softmax). */
static void build_bert_base(builder_t *b, int batch, int seq)
{
    const double h = 768, heads = 12, inter = 3072, d = h / heads;
    double tok = (double)batch * seq, bs = batch;
    embedding(b, "embedding", tok, h);
    elementwise(b, "add_position_type", tok * h, 3, 1, 2);
    rowwise(b, "layer_norm", tok, h, 2 * h);
    for (int l = 0; l < 12; l++) {
        gemm(b, "linear_qkv", tok, 3 * h, h);
        bmm(b, "bmm_qk", bs * heads, seq, seq, d);
        rowwise(b, "softmax", bs * heads * seq, seq, 0);
        bmm(b, "bmm_av", bs * heads, seq, d, seq);
        gemm(b, "linear_out", tok, h, h);
        elementwise(b, "add_residual", tok * h, 2, 1, 1);
        rowwise(b, "layer_norm", tok, h, 2 * h);
        gemm(b, "linear_ffn1", tok, inter, h);
        elementwise(b, "gelu", tok * inter, 1, 1, 8);
        gemm(b, "linear_ffn2", tok, h, inter);
        elementwise(b, "add_residual", tok * h, 2, 1, 1);
        rowwise(b, "layer_norm", tok, h, 2 * h);
    }
    gemm(b, "linear_pooler", bs, h, h);
    elementwise(b, "tanh", bs * h, 1, 1, 4);
}

/* Llama-3.2-1B and -3B (Meta, model cards and config.json of
 * meta-llama/Llama-3.2-1B and -3B): hidden 2048/3072, 16/28 layers, 32/24
 * heads, 8 KV heads, head dim 64/128, intermediate 8192, vocabulary 128256.
 * One row of their config.json each. */
typedef struct {
    const char *model;
    int layers;
    double hidden, heads, kv_heads, head_dim, inter;
} llama_config_t;

static const llama_config_t llama_configs[] = {
    {"llama-3.2-1b", 16, 2048, 32, 8, 64, 8192},
    {"llama-3.2-3b", 28, 3072, 24, 8, 128, 8192},
};

/* One prefill step over the prompt (fused causal attention) or one decode
 * step whose attention reads the KV cache of the prompt: tok_per_seq new
 * tokens of each of batch sequences, attending to kv_len positions. */
static void llama_step(builder_t *b, const llama_config_t *c, double batch, double tok_per_seq, double kv_len,
                       int decode)
{
    const double vocab = 128256;
    const double h = c->hidden, heads = c->heads, kv_heads = c->kv_heads, hd = c->head_dim, inter = c->inter;
    const int layers = c->layers;
    double tok = batch * tok_per_seq;
    double qkv = (heads + 2 * kv_heads) * hd;
    embedding(b, decode ? "embedding_decode" : "embedding", tok, h);
    for (int l = 0; l < layers; l++) {
        rowwise(b, "rms_norm", tok, h, h);
        gemm(b, decode ? "linear_qkv_decode" : "linear_qkv", tok, qkv, h);
        elementwise(b, "rotary_emb", tok * (heads + kv_heads) * hd, 2, 1, 6);
        if (!decode) {
            sim_kernel_t *k = push(b);
            if (k) {
                /* Causal flash attention: half of the s x s scores, Q, K, V
                 * read once and O written once. */
                k->name = "flash_attn_prefill";
                k->flops = 4.0 * batch * heads * tok_per_seq * tok_per_seq * hd / 2.0;
                k->dram_bytes = 2.0 * tok * (2 * heads + 2 * kv_heads) * hd;
                k->l2_bytes = k->dram_bytes * (1.0 + tok_per_seq / 128.0);
                k->ctas = batch * heads * ceil(tok_per_seq / 128.0);
                k->ctas_per_sm = 1;
                k->flop_eff = 0.45;
                k->tensor = SIM_FP16;
                k->lat_rounds = 1.0;
            }
        } else {
            sim_kernel_t *k = push(b);
            if (k) {
                /* Decode attention: every query head reads the K and V cache
                 * of its KV head; split over the sequence in 256-token
                 * chunks. */
                k->name = "attn_decode";
                k->flops = 4.0 * batch * heads * kv_len * hd;
                k->dram_bytes = 2.0 * batch * (2.0 * kv_heads * kv_len * hd + 2.0 * heads * hd);
                k->l2_bytes = k->dram_bytes * heads / kv_heads;
                k->ctas = batch * heads * ceil(kv_len / 256.0);
                k->ctas_per_sm = 4;
                k->flop_eff = 0.3;
                k->tensor = SIM_FP16;
                k->lat_rounds = 2.0;
            }
        }
        gemm(b, decode ? "linear_o_decode" : "linear_o", tok, h, heads * hd);
        elementwise(b, "add_residual", tok * h, 2, 1, 1);
        rowwise(b, "rms_norm", tok, h, h);
        gemm(b, decode ? "linear_gate_up_decode" : "linear_gate_up", tok, 2 * inter, h);
        elementwise(b, "silu_mul", tok * inter, 2, 1, 6);
        gemm(b, decode ? "linear_down_decode" : "linear_down", tok, h, inter);
        elementwise(b, "add_residual", tok * h, 2, 1, 1);
    }
    rowwise(b, "rms_norm", tok, h, h);
    /* Logits of the last position of each sequence only. */
    gemm(b, decode ? "lm_head_decode" : "lm_head", batch, vocab, h);
}

static void build_llama(builder_t *b, const llama_config_t *c, int batch, int prompt)
{
    llama_step(b, c, batch, prompt, prompt, 0);
    llama_step(b, c, batch, 1, prompt + 1, 1);
}

static const llama_config_t *llama_config(const char *model)
{
    for (size_t i = 0; i < PS_ARRAY_LEN(llama_configs); i++)
        if (strcmp(llama_configs[i].model, model) == 0)
            return &llama_configs[i];
    return NULL;
}

/* Classic models: the derived Orion kernels, scaled from the profiled batch
 * (eq. 10): FLOPs and activation bytes in proportion to the batch, weight
 * bytes fixed, blocks with the work. */
static int build_derived(builder_t *b, const char *model, int batch)
{
    size_t n;
    const sim_derived_t *d = psi_sim_derived_table(&n);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(d[i].model, model) != 0)
            continue;
        found = 1;
        sim_kernel_t *k = push(b);
        if (!k)
            return PS_E_NOMEM;
        double r = (double)batch / d[i].batch;
        double act = d[i].dram_bytes - d[i].weight_bytes;
        k->name = d[i].name;
        k->flops = d[i].flops * r;
        k->dram_bytes = d[i].weight_bytes + act * r;
        k->l2_bytes = d[i].l2_bytes * (k->dram_bytes / d[i].dram_bytes);
        k->ctas = fmax(1.0, ceil(d[i].ctas * r));
        k->ctas_per_sm = d[i].ctas_per_sm;
        k->lat_rounds = d[i].lat_rounds;
        k->flop_eff = d[i].flop_eff;
        k->threads = d[i].threads;
        /* cuDNN convolutions run on TF32 tensor cores by default on GPUs
         * that have them (PyTorch's allow_tf32 for cuDNN); FP32 GEMMs
         * (volta_sgemm) stay on the CUDA cores. */
        k->tensor = strcmp(d[i].name, "Conv") == 0 ? SIM_TF32 : SIM_FP32;
    }
    return found ? 0 : psi_error(PS_E_ARG, "no derived kernels for model '%s'", model);
}

sim_shape_opts_t psi_sim_shape_default(void) { return (sim_shape_opts_t){.bert_seq = 128, .llama_prompt = 128}; }

int psi_sim_workload_build(const char *model, int batch, const sim_shape_opts_t *o, sim_workload_t *out)
{
    memset(out, 0, sizeof *out);
    if (!model)
        return psi_error(PS_E_ARG, "no model named");
    const psi_oplist_t *user = psi_oplist_user(model);
    if (user) { /* a captured list: the twin's kernels of its operators (twin_oplist.c) */
        if (batch != user->batch)
            return psi_error(PS_E_ARG, "%s: its operator list was captured at batch %d, not %d", model, user->batch,
                             batch);
        return psi_sim_workload_from_oplist(user, out);
    }
    int rc = psi_sim_model_check(model);
    if (rc != PS_OK)
        return rc;
    if (batch <= 0 || batch > 4096)
        return psi_error(PS_E_ARG, "%s: batch %d out of range 1..4096", model, batch);
    if (o->bert_seq <= 0 || o->llama_prompt <= 0)
        return psi_error(PS_E_ARG, "sequence lengths must be positive");
    builder_t b = {0};
    const llama_config_t *llama = llama_config(model);
    rc = 0;
    if (strcmp(model, "bert-base") == 0)
        build_bert_base(&b, batch, o->bert_seq);
    else if (llama)
        build_llama(&b, llama, batch, o->llama_prompt);
    else
        rc = build_derived(&b, model, batch);
    if (rc == 0 && b.failed)
        rc = PS_E_NOMEM;
    if (rc != 0) {
        free(b.k);
        return rc;
    }
    snprintf(out->model, sizeof out->model, "%s", model);
    out->batch = batch;
    out->n = b.n;
    out->k = b.k;
    return 0;
}
