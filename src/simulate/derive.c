/*
 * Deriving kernels from measured durations (docs/simulator.md, eq. 11).
 *
 * A profile gives each kernel's duration d on the source GPU and its roofline
 * class. The class fixes the kernel's shape: how many FLOPs and L2 bytes it
 * does per DRAM byte, how large its blocks are, how many dependent memory
 * round trips it waits on. The one free quantity, its DRAM bytes D, is then
 * chosen so that the twin's standalone time on the source GPU equals d:
 * T_src(D) = d, solved by bisection on log D (T is increasing in D). For a
 * memory-bound kernel this is about d x the achieved bandwidth of the
 * source; for a compute-bound one, d x its achieved FLOP rate / intensity.
 */
#include "simulate/derive.h"
#include "simulate/sim.h"
#include "common/common.h"

#include <math.h>
#include <string.h>

static const sim_derived_t derived[] = {
#include "../../data/orion_kernels.inc"
};

/* Orion's SM_usage of each row of ../shared/data/orion-v100/ops.csv
 * (tools/orion_sm_usage.py). */
typedef struct {
    const char *model;
    int op;
    int sm_usage;
} sm_usage_t;

static const sm_usage_t sm_usage[] = {
#include "../../data/orion_sm_usage.inc"
};

static int sm_usage_of(const char *model, int op)
{
    for (size_t i = 0; i < sizeof sm_usage / sizeof sm_usage[0]; i++)
        if (sm_usage[i].op == op && strcmp(sm_usage[i].model, model) == 0)
            return sm_usage[i].sm_usage;
    return 0;
}

const sim_derived_t *psi_sim_derived_table(size_t *n)
{
    *n = sizeof derived / sizeof derived[0];
    return derived;
}

/* Kernels that reduce over a row (normalizations, softmax, reductions) read
 * their input twice and wait on the reduction. */
static int is_rowwise(const char *name)
{
    static const char *const keys[] = {"BatchNorm", "batch_norm", "layer_norm", "softmax", "reduce", NULL};
    for (int i = 0; keys[i]; i++)
        if (strstr(name, keys[i]))
            return 1;
    return 0;
}

/* Share of a compute-bound kernel's DRAM bytes that are weights (eq. 10):
 * about 0.3 for the convolutions of the CNNs at batch 4, 0.4 for the linear
 * layers of the transformers (a 1024 x 1024 FP32 weight is 4 MiB against
 * 3 MiB of activations in and out at 768 tokens). */
static double weight_share(const char *model)
{
    if (strstr(model, "bert") || strstr(model, "transformer"))
        return 0.4;
    return 0.3;
}

/* The launch configuration of a kernel by its kind: threads per block and
 * the blocks one V100 SM holds at 2048 threads (the limit Orion's
 * get_num_blocks.py applies first). From the PyTorch 1.12 and cuDNN
 * sources of the kernels: elementwise kernels run 128 threads a block
 * (at::native's num_threads() = 4 warps), max pooling and softmax 1024
 * (maxThreadsPerBlock), batch and layer normalization and reductions 512,
 * GEMMs and convolutions 256 with registers for two blocks an SM. */
static void launch_config(char cls, const char *name, double *threads, double *per_sm)
{
    *threads = 256;
    if (cls != 'c' && strstr(name, "elementwise"))
        *threads = 128;
    else if (cls != 'c' && (strstr(name, "pool") || strstr(name, "softmax")))
        *threads = 1024;
    else if (cls != 'c' && is_rowwise(name))
        *threads = 512;
    *per_sm = cls == 'c' ? 2 : 2048.0 / *threads;
}

/* The shape of a kernel with D DRAM bytes, by class (docs/simulator.md,
 * table "Derived kernel shapes"). lat is the cap on dependent round trips;
 * ctas > 0 fixes the number of blocks instead of deriving it from the work
 * (Orion's SM_usage times the blocks an SM holds, or a first pass). */
static void shape(char cls, const char *name, double d, double lat_cap, double ctas, sim_derived_t *k)
{
    k->dram_bytes = d;
    switch (cls) {
    case 'c': /* FP32 GEMM/convolution, 100 FLOP per DRAM byte (a 3x3, 256-channel
                 convolution at 14x14 and batch 8 does about 330; the Orion
                 knee is 9.72) and 40 per L2 byte (128x64 tiles: 2*128*64
                 FLOPs per (128+64)*4 bytes of a K step);
                 without SM_usage the blocks (output tiles) grow with the
                 square root of the work */
        k->flops = 100.0 * d;
        k->l2_bytes = 2.5 * d;
        k->ctas = fmax(1.0, ceil(16.0 * sqrt(k->flops / 1.05e6)));
        k->lat_rounds = fmin(1.0, lat_cap);
        k->flop_eff = 0.75;
        break;
    case 'm': /* streaming kernel, without SM_usage 16 KiB a block */
        k->flops = 0.5 * d;
        k->l2_bytes = (is_rowwise(name) ? 1.5 : 1.0) * d;
        k->ctas = fmax(1.0, ceil(d / 16384.0));
        k->lat_rounds = fmin(is_rowwise(name) ? 2.0 : 0.5, lat_cap);
        k->flop_eff = 0.5;
        break;
    default: /* neither bound: small, latency-bound kernels (gathers, copies,
                index kernels), without SM_usage 8 KiB a block */
        k->flops = 0.25 * d;
        k->l2_bytes = 1.5 * d;
        k->ctas = fmax(1.0, ceil(d / 8192.0));
        k->lat_rounds = fmin(4.0, lat_cap);
        k->flop_eff = 0.5;
        break;
    }
    launch_config(cls, name, &k->threads, &k->ctas_per_sm);
    if (ctas > 0)
        k->ctas = ctas;
}

static double solo_ns(const psi_gpu_t *g, const sim_physics_t *ph, const sim_derived_t *d)
{
    sim_kernel_t k = {
        .name = d->name,
        .flops = d->flops,
        .dram_bytes = d->dram_bytes,
        .l2_bytes = d->l2_bytes,
        .ctas = d->ctas,
        .ctas_per_sm = d->ctas_per_sm,
        .lat_rounds = d->lat_rounds,
        .flop_eff = d->flop_eff,
        .threads = d->threads,
        .tensor = 0,
    };
    sim_placed_t pk;
    sim_solo_t s;
    psi_sim_place(g, &k, g->tpcs, &pk);
    psi_sim_solo(g, ph, &pk, &s);
    return s.duration_ns;
}

int psi_sim_derive_kernel(const psi_op_row_t *row, const char *gpu, sim_derived_t *out)
{
    const psi_gpu_t *g = psi_sim_gpu_find(gpu);
    if (!g)
        return PS_E_ARG;
    if (row->tpcs != g->tpcs)
        return psi_error(PS_E_INPUT, "%s op %d: profiled on %d TPCs; deriving needs the whole %s (%d TPCs)", row->model,
                         row->op, row->tpcs, g->name, g->tpcs);
    if (!(row->duration_ns > 0))
        return psi_error(PS_E_INPUT, "%s op %d: duration must be positive", row->model, row->op);
    sim_physics_t ph = psi_sim_physics_default();
    char cls = row->intensity == PS_INTENSITY_COMPUTE ? 'c' : row->intensity == PS_INTENSITY_MEMORY ? 'm' : 'u';
    memset(out, 0, sizeof *out);
    out->model = row->model;
    out->batch = row->batch;
    out->name = row->name;
    out->cls = cls;
    out->v100_ns = row->duration_ns;
    /* At most half of the time beyond the fixed cost may be unhidden
     * latency, so that every kernel keeps some work. */
    double spare = row->duration_ns - psi_sim_gpu_physics(g)->kernel_fixed_ns;
    double lat_cap = spare > 0 ? 0.5 * spare / psi_sim_gpu_physics(g)->mem_latency_ns : 0.0;
    out->sm_usage = sm_usage_of(row->model, row->op);
    shape(cls, row->name, 1.0, lat_cap, 0, out);
    /* SM_usage = ceil(grid / blocks an SM holds): the grid, to a block. */
    double ctas = out->sm_usage > 0 ? out->sm_usage * out->ctas_per_sm : 0;
    if (ctas > 0)
        shape(cls, row->name, 1.0, lat_cap, ctas, out);
    if (solo_ns(g, &ph, out) >= row->duration_ns) {
        /* Shorter than an empty kernel: keep the least work. */
        return 0;
    }
    /* Without SM_usage first with the blocks following the work; then,
     * because the wave quantization makes T jump where the block count
     * crosses a wave, again with the blocks found held fixed, where T is
     * continuous in D. With SM_usage the blocks are known. */
    for (int pass = ctas > 0 ? 1 : 0; pass < 2; pass++) {
        double lo = log(1.0), hi = log(1e13);
        for (int it = 0; it < 100 && hi - lo > 1e-9; it++) {
            double mid = 0.5 * (lo + hi);
            shape(cls, row->name, exp(mid), lat_cap, ctas, out);
            if (solo_ns(g, &ph, out) < row->duration_ns)
                lo = mid;
            else
                hi = mid;
        }
        shape(cls, row->name, exp(0.5 * (lo + hi)), lat_cap, ctas, out);
        ctas = out->ctas;
    }
    out->weight_bytes = cls == 'c' ? weight_share(row->model) * out->dram_bytes : 0.0;
    return 0;
}

/* Escape a kernel name for a C string literal. */
static void put_cstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int psi_sim_derive_write(const psi_op_row_t *rows, size_t n, const char *gpu, FILE *f)
{
    fprintf(f,
            "/* Generated by `pairsight simulate --derive` from %zu measured kernels on %s.\n"
            " * Do not edit: regenerate with\n"
            " *   pairsight simulate --derive ../shared/data/orion-v100/ops.csv > data/orion_kernels.inc\n"
            " * Columns: model, profiled batch, name, class, measured ns, FLOPs, DRAM bytes,\n"
            " * weight bytes, L2 bytes, blocks, blocks per SM, unhidden round trips, FLOP efficiency,\n"
            " * threads per block, Orion's SM_usage (0: unknown).\n"
            " * Source data: Orion (Strati et al., EuroSys 2024), MIT licence, see\n"
            " * docs/simulator.md. */\n",
            n, gpu);
    for (size_t i = 0; i < n; i++) {
        sim_derived_t d;
        int rc = psi_sim_derive_kernel(&rows[i], gpu, &d);
        if (rc != 0)
            return rc;
        fputc('{', f);
        put_cstr(f, d.model);
        fprintf(f, ", %d, ", d.batch);
        put_cstr(f, d.name);
        fprintf(f, ", '%c', %.9g, %.9g, %.9g, %.9g, %.9g, %.9g, %.9g, %.9g, %.9g, %.9g, %.9g},\n", d.cls, d.v100_ns,
                d.flops, d.dram_bytes, d.weight_bytes, d.l2_bytes, d.ctas, d.ctas_per_sm, d.lat_rounds, d.flop_eff,
                d.threads, d.sm_usage);
    }
    if (ferror(f))
        return psi_error(PS_E_IO, "write failed");
    return 0;
}
