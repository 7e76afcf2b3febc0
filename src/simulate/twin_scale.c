/*
 * One trace at one TPC count, the other counts from the twin
 * (`pairsight import ... --oplist L --tpcs-from twin`, docs/profile.md):
 * the kernels of a profile measured at T TPCs are aligned with the
 * operators of the model's list, by launch order and kernel-name classes;
 * each operator's duration at p TPCs is then its measured duration times
 * the twin's ratio t(p) / t(T) for that operator (twin_oplist.c's kernel on
 * the simulator's standalone model). Rows at T are measured; the others
 * carry source = "twin-ratio".
 */
#include "simulate/sim.h"

#include "profile/oplist.h"
#include "common/common.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Kernel-name classes: the operator kinds, plus helpers (cuDNN's layout
 * transforms and offsets, split-K reductions: part of the conv or GEMM next
 * to them), reductions and unknown names (which fit any operator). */
enum { KC_HELPER = PS_OPK_COUNT, KC_REDUCE, KC_UNKNOWN };

typedef struct {
    int cls;
    const char *const pat[10];
} kclass_t;

static const kclass_t kclasses[] = {
    {KC_HELPER,
     {"nchwtonhwc", "nhwctonchw", "computeoffsets", "splitkreduce", "op_generic_tensor", "scalepackedtensor", NULL}},
    {PS_OPK_SOFTMAX, {"softmax", NULL}},
    {PS_OPK_NORM, {"norm", "bn_fw", NULL}},
    {PS_OPK_POOL, {"pool", NULL}},
    {PS_OPK_EMBED, {"embedding", "indexselect", "index_select", NULL}},
    {PS_OPK_ATTN, {"flash", "fmha", "attention", "sdpa", NULL}},
    {PS_OPK_CONV, {"conv", "winograd", "fprop", "cudnn", NULL}}, /* after cuDNN's helpers and norms */
    {PS_OPK_GEMM, {"gemm", "gemv", "cublas", "cutlass", NULL}},
    {KC_REDUCE, {"reduce", NULL}},
    {PS_OPK_ELTWISE, {"elementwise", "copy", "fill", "catarray", "relu", "gelu", "silu", "tanh", NULL}},
};

/* The class of a kernel name: a psi_opkind_t, or a helper, reduction or
 * unknown class above PS_OPK_COUNT. */
static int psi_kernel_class(const char *name)
{
    char low[256];
    size_t n = 0;
    for (; name && name[n] && n + 1 < sizeof low; n++)
        low[n] = (char)tolower((unsigned char)name[n]);
    low[n] = '\0';
    for (size_t c = 0; c < PS_ARRAY_LEN(kclasses); c++)
        for (int i = 0; kclasses[c].pat[i]; i++)
            if (strstr(low, kclasses[c].pat[i]))
                return kclasses[c].cls;
    return KC_UNKNOWN;
}

static const char *class_name(int c)
{
    static const char *const extra[] = {"helper", "reduction", "unknown"};
    return c < PS_OPK_COUNT ? (c == PS_OPK_GEMM      ? "gemm"
                               : c == PS_OPK_CONV    ? "conv"
                               : c == PS_OPK_NORM    ? "norm"
                               : c == PS_OPK_SOFTMAX ? "softmax"
                               : c == PS_OPK_ELTWISE ? "eltwise"
                               : c == PS_OPK_POOL    ? "pool"
                               : c == PS_OPK_ATTN    ? "attn"
                                                     : "embed")
                            : extra[c - PS_OPK_COUNT];
}

/* Whether a kernel of class c can be the main kernel of an operator of kind k. */
static int fits(psi_opkind_t k, int c)
{
    if (c == KC_UNKNOWN || c == (int)k)
        return 1;
    if (k == PS_OPK_CONV)
        return c == PS_OPK_GEMM;
    if (k == PS_OPK_POOL || k == PS_OPK_ELTWISE)
        return c == KC_REDUCE;
    return 0;
}

/* The kernels of a trace, in launch order: their names and classes. */
typedef struct {
    const char *const *names;
    const int *cls;
    int n;
} trace_kernels_t;

/* Kernels [*j, ...) of operator i of l: helpers or elementwise kernels before
 * the main one of a conv, GEMM or norm (PyTorch's addmm copies the bias first
 * where cuBLAS has no bias epilogue; PyTorch 2's batch norm in inference
 * copies and computes 1/sqrt(var) first), the main kernel, helpers after a
 * conv's or GEMM's. */
static int align_op(const psi_oplist_t *l, int i, const trace_kernels_t *tk, int *j, int *first)
{
    const psi_opdesc_t *op = &l->ops[i];
    int next_is_norm = i + 1 < l->n && l->ops[i + 1].kind == PS_OPK_NORM;
    const int *cls = tk->cls, nk = tk->n;
    const char *const *names = tk->names;
    int tiled = op->kind == PS_OPK_CONV || op->kind == PS_OPK_GEMM;
    int pre = tiled || op->kind == PS_OPK_NORM; /* PyTorch 2's inference batch norm: a copy, 1/sqrt(var), then it */
    *first = *j;
    while (*j < nk && pre && !fits(op->kind, cls[*j]) && (cls[*j] == KC_HELPER || cls[*j] == PS_OPK_ELTWISE) &&
           *j + 1 < nk)
        (*j)++;
    if (*j >= nk)
        return psi_error(PS_E_MISMATCH, "align: the trace's %d kernels end at operator %d '%s' (%s)", nk, i, op->name,
                         class_name(op->kind));
    if (!fits(op->kind, cls[*j]))
        return psi_error(PS_E_MISMATCH,
                         "align: kernel %d '%.80s' (%s) does not fit operator %d '%s' (%s); kernels and operators "
                         "agree up to there",
                         *j, names[*j], class_name(cls[*j]), i, op->name, class_name(op->kind));
    (*j)++;
    while (*j < nk && tiled && cls[*j] == KC_HELPER)
        (*j)++;
    /* a norm in several kernels (statistics, then the transform), unless the next operator is a norm too */
    while (*j < nk && op->kind == PS_OPK_NORM && cls[*j] == PS_OPK_NORM && !next_is_norm)
        (*j)++;
    return 0;
}

/* Align nk kernels (names, in launch order) with l's operators: kernel_op[k]
 * is kernel k's operator. PS_E_MISMATCH names the first kernel that fits no
 * operator (or the first left over). */
static int psi_twin_align(const psi_oplist_t *l, const char *const *names, int nk, int *kernel_op)
{
    int *cls = psi_malloc((size_t)(nk > 0 ? nk : 1) * sizeof *cls);
    if (!cls)
        return PS_E_NOMEM;
    for (int k = 0; k < nk; k++)
        cls[k] = psi_kernel_class(names[k]);
    const trace_kernels_t tk = {names, cls, nk};
    int j = 0, rc = 0;
    for (int i = 0; i < l->n && rc == 0; i++) {
        int first;
        rc = align_op(l, i, &tk, &j, &first);
        for (int k = first; rc == 0 && k < j; k++)
            kernel_op[k] = i;
    }
    if (rc == 0 && j < nk)
        rc = psi_error(PS_E_MISMATCH, "align: %d kernels left after the list's %d operators, from kernel %d '%.80s'",
                       nk - j, l->n, j, names[j]);
    free(cls);
    return rc;
}

/* ratio[i * n_at + a]: the twin's standalone time of operator i at at[a]
 * TPCs over its time at traced TPCs, on gpu. */
static int psi_twin_ratio(const char *gpu, const sim_twin_scale_t *sc, double *ratio)
{
    const psi_oplist_t *l = sc->l;
    const int traced = sc->traced, *at = sc->at, n_at = sc->n_at;
    const psi_gpu_t *g = psi_sim_gpu_find(gpu);
    if (!g)
        return psi_error_prefix(PS_E_ARG, "twin");
    if (traced < 1 || traced > g->tpcs)
        return psi_error(PS_E_ARG, "twin: %d TPCs outside the %s's 1..%d", traced, g->name, g->tpcs);
    for (int a = 0; a < n_at; a++)
        if (at[a] < 1 || at[a] > g->tpcs)
            return psi_error(PS_E_ARG, "twin: %d TPCs outside the %s's 1..%d", at[a], g->name, g->tpcs);
    sim_workload_t wl;
    int rc = psi_sim_workload_from_oplist(l, &wl);
    if (rc != 0)
        return rc;
    sim_physics_t ph = psi_sim_physics_default();
    for (int i = 0; i < l->n; i++) {
        sim_placed_t pk;
        sim_solo_t s;
        psi_sim_place(g, &wl.k[i], traced, &pk);
        psi_sim_solo(g, &ph, &pk, &s);
        double base = s.duration_ns;
        for (int a = 0; a < n_at; a++) {
            psi_sim_place(g, &wl.k[i], at[a], &pk);
            psi_sim_solo(g, &ph, &pk, &s);
            ratio[(size_t)i * n_at + a] = s.duration_ns / base;
        }
    }
    psi_sim_workload_free(&wl);
    return 0;
}

/* The measured rows of (model, batch) at traced TPCs, in op order. */
static int measured_rows(const ps_ops_t *in, const sim_twin_scale_t *sc, const psi_op_row_t ***out, int *n)
{
    const char *model = sc->model;
    const int batch = sc->batch, traced = sc->traced;
    *n = 0;
    const psi_op_row_t **r = psi_malloc((in->n ? in->n : 1) * sizeof *r);
    if (!r)
        return PS_E_NOMEM;
    for (size_t i = 0; i < in->n; i++) {
        const psi_op_row_t *x = &in->rows[i];
        if (strcmp(x->model, model) == 0 && x->batch == batch && x->tpcs == traced)
            r[(*n)++] = x;
    }
    for (int i = 1; i < *n; i++) /* insertion sort by op: the rows mostly come sorted */
        for (int k = i; k > 0 && r[k - 1]->op > r[k]->op; k--) {
            const psi_op_row_t *t = r[k];
            r[k] = r[k - 1];
            r[k - 1] = t;
        }
    *out = r;
    if (*n == 0)
        return psi_error(PS_E_INPUT, "twin: no rows of %s batch %d at %d TPCs", model, batch, traced);
    return 0;
}

/* Row of operator i at the traced count: kernels [a, b) summed; byte counts
 * summed, rates and the class from the longest kernel. */
static void op_row(const psi_op_row_t *const *k, int a, int b, const psi_opdesc_t *op, int i, psi_op_row_t *r)
{
    int longest = a;
    double dur = 0, dram = 0, l2 = 0;
    for (int x = a; x < b; x++) {
        dur += k[x]->duration_ns;
        dram += k[x]->c.dram_bytes; /* NAN stays NAN: a counter missing on one kernel is missing */
        l2 += k[x]->c.l2_bytes;
        if (k[x]->duration_ns > k[longest]->duration_ns)
            longest = x;
    }
    *r = *k[longest];
    r->op = i;
    r->name = op->name;
    r->duration_ns = dur;
    r->c.dram_bytes = dram;
    r->c.l2_bytes = l2;
    r->source = NULL;
}

/* Into t: each operator's row at the traced count (base[i]), then its rows
 * at the other counts, base[i] times the twin's ratio. */
static int emit(ps_ops_t *t, const sim_twin_scale_t *sc, const psi_op_row_t *base, const double *ratio)
{
    const psi_oplist_t *l = sc->l;
    const int traced = sc->traced, *at = sc->at, n_at = sc->n_at;
    for (int i = 0; i < l->n; i++) {
        int rc = ps_ops_append(t, &base[i]);
        for (int a = 0; rc == 0 && a < n_at; a++) {
            if (at[a] == traced)
                continue;
            psi_op_row_t r = base[i];
            r.tpcs = at[a];
            r.duration_ns = base[i].duration_ns * ratio[(size_t)i * n_at + a];
            r.intensity = PS_INTENSITY_NONE;
            r.c = (psi_counters_t){NAN, NAN, NAN, NAN, NAN, NAN, NAN}; /* counters: the traced row's */
            r.source = "twin-ratio";
            rc = ps_ops_append(t, &r);
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

int psi_ops_twin_scale(const ps_ops_t *in, const sim_twin_scale_t *sc, ps_ops_t **out)
{
    *out = NULL;
    const psi_oplist_t *l = sc->l;
    const psi_op_row_t **k = NULL;
    int nk = 0;
    int rc = measured_rows(in, sc, &k, &nk);
    int *kop = psi_malloc((size_t)(nk ? nk : 1) * sizeof *kop);
    const char **names = psi_malloc((size_t)(nk ? nk : 1) * sizeof *names);
    psi_op_row_t *base = psi_calloc((size_t)l->n, sizeof *base);
    double *ratio = psi_malloc((size_t)l->n * (size_t)(sc->n_at ? sc->n_at : 1) * sizeof *ratio);
    if (rc == 0 && (!kop || !names || !base || !ratio))
        rc = PS_E_NOMEM;
    for (int x = 0; rc == 0 && x < nk; x++)
        names[x] = k[x]->name;
    if (rc == 0)
        rc = psi_twin_align(l, names, nk, kop);
    if (rc == 0)
        rc = psi_twin_ratio(k[0]->gpu, sc, ratio);
    for (int i = 0, a = 0; rc == 0 && i < l->n; i++) {
        int b = a;
        while (b < nk && kop[b] == i)
            b++;
        op_row(k, a, b, &l->ops[i], i, &base[i]);
        a = b;
    }
    ps_ops_t *t = rc == 0 ? ps_ops_new() : NULL;
    if (rc == 0 && !t)
        rc = PS_E_NOMEM;
    if (rc == 0)
        rc = emit(t, sc, base, ratio);
    if (rc == 0)
        rc = psi_ops_index(t); /* validated and grouped, as an importer's table */
    if (rc == 0)
        *out = t;
    else
        ps_ops_free(t);
    free(k);
    free(kop);
    free(names);
    free(base);
    free(ratio);
    return rc;
}
