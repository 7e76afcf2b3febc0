/*
 * The twin of a collector operator list: one simulator kernel per operator
 * of src/profile/zoo.c's lists (the lists the collector replays), so that
 * the twin predicts the very segments and splits a collector campaign
 * measured. The simulator's own workloads (workloads.c) describe the same
 * models with other kernel boundaries and cannot be indexed by the
 * collector's operator numbers.
 *
 * FLOPs and DRAM bytes are psi_op_flops and psi_op_bytes (fp16, compulsory
 * traffic); thread blocks, residency and L2 traffic follow the conventions
 * of workloads.c: 128x128 tiles for GEMMs and convolutions as implicit
 * GEMMs (docs/simulator.md, "Workloads"), 2048 elements a block for
 * elementwise kernels, a block a row for row-wise ones. Batch norm in
 * inference is an elementwise affine map per channel (cuDNN's and PyTorch's
 * inference kernels spread it over every element), not a row-wise kernel.
 * A list whose header says dtype=fp32 moves 4 bytes an element, its
 * convolutions run TF32 (cuDNN's default; FP32 where the GPU has no TF32) and
 * its GEMMs and attention FP32 (PyTorch's default since 1.12).
 */
#include "simulate/sim.h"

#include "profile/oplist.h"
#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A GEMM-like kernel of m x n outputs over depth kk (count independent
 * products) on the tensor cores. */
static void tiled(sim_kernel_t *k, double count, double m, double n, double kk, double eff)
{
    k->tensor = SIM_FP16;
    k->lat_rounds = 1.0;
    if (m >= 64) {
        k->ctas = count * ceil(m / 128.0) * ceil(n / 128.0);
        k->ctas_per_sm = 1;
        k->flop_eff = eff;
        double l2 = 2.0 * count * kk * 256.0 * ceil(m / 128.0) * ceil(n / 128.0) + 2.0 * count * m * n;
        k->l2_bytes = l2 > k->dram_bytes ? l2 : k->dram_bytes;
    } else {
        k->ctas = count * ceil(n / 64.0);
        k->ctas_per_sm = 4;
        k->flop_eff = 0.3;
        k->l2_bytes = 1.1 * k->dram_bytes;
    }
}

static void streaming(sim_kernel_t *k, double elems, double per_sm, double lat, double l2_factor)
{
    k->ctas = fmax(1.0, ceil(elems / 2048.0));
    k->ctas_per_sm = per_sm;
    k->lat_rounds = lat;
    k->flop_eff = 0.5;
    k->l2_bytes = l2_factor * k->dram_bytes;
}

static void op_kernel(const psi_opdesc_t *op, sim_kernel_t *k)
{
    const long long *p = op->p;
    long long in, w, out;
    psi_op_tensor_elems(op, &in, &w, &out);
    memset(k, 0, sizeof *k);
    k->name = op->name;
    k->flops = psi_op_flops(op);
    k->dram_bytes = psi_op_bytes(op);
    switch (op->kind) {
    case PS_OPK_GEMM:
        tiled(k, (double)p[PG_BATCH], (double)p[PG_M], (double)p[PG_N], (double)p[PG_K], p[PG_BATCH] > 1 ? 0.55 : 0.7);
        break;
    case PS_OPK_CONV:
        if (p[PC_GROUPS] > 1) { /* depthwise / grouped: no tensor-core tiles */
            streaming(k, (double)out, 8, 1.0, 1.5);
            k->flop_eff = 0.3;
        } else {
            double oh = (double)psi_conv_out(p[PC_H], p[PC_R], p[PC_STRIDE], p[PC_PAD]);
            double ow = (double)psi_conv_out(p[PC_W], p[PC_S], p[PC_STRIDE], p[PC_PAD]);
            tiled(k, 1.0, (double)p[PC_N] * oh * ow, (double)p[PC_K], (double)(p[PC_C] * p[PC_R] * p[PC_S]), 0.6);
        }
        break;
    case PS_OPK_NORM:
    case PS_OPK_SOFTMAX: {
        if (op->kind == PS_OPK_NORM && op->variant == PS_NORM_BATCH) { /* layer and RMS norms are row-wise */
            streaming(k, (double)out, 8, 0.5, 1.0);
            break;
        }
        double rows = op->kind == PS_OPK_SOFTMAX ? (double)p[PS_ROWS] : (double)p[PN_N];
        k->ctas = fmax(1.0, rows);
        k->ctas_per_sm = 8;
        k->lat_rounds = 2.0;
        k->flop_eff = 0.5;
        k->l2_bytes = 1.5 * k->dram_bytes;
        break;
    }
    case PS_OPK_ATTN:
        k->ctas = (double)(p[PA_BATCH] * p[PA_HEADS]) * ceil((double)p[PA_SEQ_Q] / 64.0);
        k->ctas_per_sm = 2;
        k->lat_rounds = 1.0;
        k->flop_eff = 0.4;
        k->tensor = SIM_FP16;
        k->l2_bytes = 2.0 * k->dram_bytes;
        break;
    case PS_OPK_EMBED:
        k->ctas = fmax(1.0, (double)p[PM_ROWS]);
        k->ctas_per_sm = 8;
        k->lat_rounds = 2.0;
        k->flop_eff = 0.5;
        k->l2_bytes = k->dram_bytes;
        break;
    default: /* eltwise, pool */ streaming(k, (double)out, 8, 0.5, 1.0); break;
    }
}

/* An FP32 model's kernel: twice the bytes, FP32 units (TF32 for convolutions). */
static void to_fp32(const psi_opdesc_t *op, sim_kernel_t *k)
{
    k->dram_bytes *= 2.0;
    k->l2_bytes *= 2.0;
    if (k->tensor == SIM_FP16)
        k->tensor = op->kind == PS_OPK_CONV ? SIM_TF32 : SIM_FP32;
}

void psi_sim_workload_free(sim_workload_t *w)
{
    if (!w)
        return;
    free(w->k);
    w->k = NULL;
    w->n = 0;
}

int psi_sim_workload_from_oplist(const psi_oplist_t *l, sim_workload_t *out)
{
    memset(out, 0, sizeof *out);
    sim_kernel_t *k = psi_calloc((size_t)l->n, sizeof *k);
    if (!k)
        return PS_E_NOMEM;
    for (int i = 0; i < l->n; i++) {
        op_kernel(&l->ops[i], &k[i]);
        if (l->fp32)
            to_fp32(&l->ops[i], &k[i]);
    }
    snprintf(out->model, sizeof out->model, "%.31s", l->model);
    out->batch = l->batch;
    out->n = l->n;
    out->k = k;
    return 0;
}

/* A model of the twin: its list (the kernels' names point into it). */
typedef struct {
    psi_oplist_t *list;
    sim_workload_t wl;
} twin_model_t;

#define TWIN_MODELS 32

/* The twin of one GPU for one call: its catalog row, its physics and the
 * models it has built so far from the collector's lists at seq_len. */
typedef struct {
    const psi_gpu_t *g;
    sim_physics_t ph;
    int seq_len;
    int n_models;
    twin_model_t models[TWIN_MODELS];
} twin_t;

static int twin_model(twin_t *t, const char *model, int batch, twin_model_t **out)
{
    for (int i = 0; i < t->n_models; i++)
        if (strcmp(t->models[i].list->model, model) == 0 && t->models[i].list->batch == batch) {
            *out = &t->models[i];
            return 0;
        }
    if (t->n_models == TWIN_MODELS)
        return psi_error(PS_E_ARG, "twin: more than %d models", TWIN_MODELS);
    twin_model_t *m = &t->models[t->n_models];
    int rc = psi_zoo_build(model, batch, t->seq_len, &m->list);
    if (rc == 0)
        rc = psi_sim_workload_from_oplist(m->list, &m->wl);
    if (rc) {
        psi_oplist_free(m->list);
        m->list = NULL;
        return rc;
    }
    t->n_models++;
    *out = m;
    return 0;
}

static int check_segment(const twin_model_t *m, int start, int len)
{
    if (start < 0 || len <= 0 || start + len > m->wl.n)
        return psi_error(PS_E_ARG, "twin: %s segment [%d, %d) outside its %d operators", m->wl.model, start,
                         start + len, m->wl.n);
    return 0;
}

/* Place ops [start, start+len) of m (a segment check_segment accepts) on
 * tpcs TPCs into pk[0..len) and return the sum of their standalone times. */
static double place(const twin_t *t, const twin_model_t *m, int start, int len, int tpcs, sim_placed_t *pk)
{
    double solo_ns = 0;
    for (int i = 0; i < len; i++) {
        psi_sim_place(t->g, &m->wl.k[start + i], tpcs, &pk[i]);
        sim_solo_t s;
        psi_sim_solo(t->g, &t->ph, &pk[i], &s);
        solo_ns += s.duration_ns;
    }
    return solo_ns;
}

int psi_sim_twin_predict(const char *gpu, int seq_len, const psi_coexec_row_t *q, size_t n, sim_twin_pred_t *out)
{
    const psi_gpu_t *g = psi_sim_gpu_find(gpu);
    if (!g)
        return psi_error_prefix(PS_E_ARG, "twin");
    twin_t tw = {.g = g, .seq_len = seq_len, .ph = psi_sim_physics_default()};
    twin_t *t = &tw;
    t->ph.launch = SIM_LAUNCH_GATED; /* the twin of the collector, which queues every launch behind a gate */
    int rc = 0;
    sim_placed_t *a = NULL, *b = NULL;
    int cap = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        twin_model_t *hm = NULL, *lm = NULL;
        if (q[i].hp_tpcs <= 0 || q[i].lp_tpcs <= 0 || q[i].hp_tpcs + q[i].lp_tpcs > g->tpcs)
            rc = psi_error(PS_E_ARG, "twin: split %d/%d does not fit the %s's %d TPCs", q[i].hp_tpcs, q[i].lp_tpcs,
                           g->name, g->tpcs);
        if (rc == 0)
            rc = twin_model(t, q[i].hp_model, q[i].hp_batch, &hm);
        if (rc == 0)
            rc = twin_model(t, q[i].lp_model, q[i].lp_batch, &lm);
        int need = q[i].hp_len > q[i].lp_len ? q[i].hp_len : q[i].lp_len;
        if (rc == 0 && need > cap) {
            free(a);
            free(b);
            cap = need;
            a = psi_malloc((size_t)cap * sizeof *a);
            b = psi_malloc((size_t)cap * sizeof *b);
            if (!a || !b)
                rc = PS_E_NOMEM;
        }
        if (rc == 0)
            rc = check_segment(hm, q[i].hp_start, q[i].hp_len);
        if (rc == 0)
            rc = check_segment(lm, q[i].lp_start, q[i].lp_len);
        if (rc == 0) {
            sim_twin_pred_t *o = &out[i];
            o->hp_solo_ns = place(t, hm, q[i].hp_start, q[i].hp_len, q[i].hp_tpcs, a);
            o->lp_solo_ns = place(t, lm, q[i].lp_start, q[i].lp_len, q[i].lp_tpcs, b);
            sim_coexec_t co = psi_sim_coexec(g, &t->ph, a, q[i].hp_len, b, q[i].lp_len);
            o->hp_ns = co.a_ns + t->ph.dispatch_ns; /* eq. 9, without the per-run noise */
            o->lp_ns = co.b_ns + t->ph.dispatch_ns;
        }
    }
    free(a);
    free(b);
    for (int i = 0; i < t->n_models; i++) {
        psi_sim_workload_free(&t->models[i].wl);
        psi_oplist_free(t->models[i].list);
    }
    return rc;
}
