/*
 * GPU physics that only the simulator uses: the share of peak DRAM bandwidth
 * a streaming kernel reaches, the DRAM bandwidth one SM achieves alone, the
 * idle memory latency and the fixed device time of a kernel. They are
 * estimates (sources below), not datasheet figures, which is why they live
 * here and not in the GPU catalog (src/profile/gpu.c) that every stage reads.
 *
 * [LAT]   Idle DRAM latency: published measurements range from about 400
 *         core cycles (Table 3 of the paper cited as [L2BW] in src/profile/gpu.c) to about 600 cycles (H100 HBM3); we
 *         take 500 cycles at the boost clock. An estimate, not a datasheet
 *         figure.
 * [EFF]   The DRAM's ceiling: the best streaming copies reach about 90 % of
 *         peak DRAM bandwidth on these parts (BabelStream/STREAM-like
 *         copies: about 1.40 of 1.555 TB/s on an A100-40GB); we take 0.90.
 *         With the latency of eq. 5 a streaming kernel on the whole GPU
 *         settles at 0.85 of peak (docs/simulator.md).
 * [SMBW]  Achievable DRAM bandwidth of one SM: by Little's law it is the
 *         bytes one SM keeps in flight over the memory latency. We choose it
 *         so that a streaming kernel saturates DRAM at about half of the SMs
 *         (sm_gbs = dram_gbs x dram_eff / (sms / 2)), the shape of published
 *         bandwidth-versus-SM-count microbenchmarks. H200 shares H100's SMs
 *         and latency and therefore its per-SM figure; it needs more SMs to
 *         saturate its faster HBM3e. An estimate, documented in
 *         docs/simulator.md.
 * [FIX]   Fixed device time of a kernel: the shortest kernels in the Orion
 *         V100 profiles (../shared/data/orion-v100) last 2.8 us under Nsight
 *         Compute; we take 2.5 us on V100 and scale it down with the clock.
 */
#include "simulate/sim.h"

#include <string.h>

typedef struct {
    const char *gpu; /* catalog name */
    sim_gpu_physics_t p;
} entry_t;

/* {gpu, dram_eff [EFF], sm_gbs [SMBW], mem_latency_ns [LAT], kernel_fixed_ns [FIX]} */
static const entry_t table[] = {
    {"A100-SXM4-40GB",
     {0.90, 1555.0 * 0.90 / 54.0, 500.0 / 1.41, 2500.0 * 1.53 / 1.41}},             /* 25.9 GB/s, 355 ns, 2.7 us */
    {"H100-SXM", {0.90, 3350.0 * 0.90 / 66.0, 500.0 / 1.98, 2500.0 * 1.53 / 1.98}}, /* 45.7 GB/s, 253 ns, 1.9 us */
    {"H200", {0.90, 3350.0 * 0.90 / 66.0, 500.0 / 1.98, 2500.0 * 1.53 / 1.98}},     /* as H100 */
    {"V100-SXM2-16GB", {0.90, 900.0 * 0.90 / 40.0, 500.0 / 1.53, 2500.0}},          /* 20.2 GB/s, 327 ns */
    {"V100-SXM2-32GB", {0.90, 900.0 * 0.90 / 40.0, 500.0 / 1.53, 2500.0}},
    {"A100-SXM4-80GB", {0.90, 2039.0 * 0.90 / 54.0, 500.0 / 1.41, 2500.0 * 1.53 / 1.41}}, /* 34.0 GB/s */
    {"A100-PCIE-80GB", {0.90, 1935.0 * 0.90 / 54.0, 500.0 / 1.41, 2500.0 * 1.53 / 1.41}}, /* 32.2 GB/s */
    {"H100-PCIE", {0.90, 2000.0 * 0.90 / 57.0, 500.0 / 1.75, 2500.0 * 1.53 / 1.75}},      /* 31.6 GB/s, 286 ns */
    {"H100-NVL", {0.90, 3900.0 * 0.90 / 66.0, 500.0 / 1.78, 2500.0 * 1.53 / 1.78}},       /* 53.2 GB/s, 281 ns */
    {"B200", {0.90, 8000.0 * 0.90 / 74.0, 500.0 / 2.11, 2500.0 * 1.53 / 2.11}},           /* 97.3 GB/s, 237 ns */
};

const sim_gpu_physics_t *psi_sim_gpu_physics(const psi_gpu_t *g)
{
    /* The physics runs this for every kernel: remember the last GPU. */
    static _Thread_local const psi_gpu_t *last;
    static _Thread_local const sim_gpu_physics_t *last_p;
    if (g == last && last_p)
        return last_p;
    for (size_t i = 0; g && i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].gpu, g->name) == 0) {
            last = g;
            return last_p = &table[i].p;
        }
    return NULL;
}
