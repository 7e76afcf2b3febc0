/*
 * GPU physics that only the simulator uses: the share of peak DRAM bandwidth
 * a streaming kernel reaches, the DRAM bandwidth one SM achieves alone, the
 * idle memory latency and the fixed device time of a kernel. They are
 * estimates (sources below), not datasheet figures, which is why they are
 * derived here rather than typed into the GPU catalog (src/profile/gpu.c)
 * that every stage reads. They come from a catalog row's clock, TPCs and
 * DRAM bandwidth (sm_dram_gbs where the row sets one), so every catalog GPU
 * simulates and adding a GPU adds no line here.
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
 *         and latency and therefore its per-SM figure (its row's
 *         sm_dram_gbs is H100's 3350 GB/s); it needs more SMs to saturate
 *         its faster HBM3e. An estimate, documented in docs/simulator.md.
 * [FIX]   Fixed device time of a kernel: the shortest kernels in the Orion
 *         V100 profiles (../shared/data/orion-v100) last 2.8 us under Nsight
 *         Compute; we take 2.5 us on V100 and scale it down with the clock.
 */
#include "simulate/sim.h"

#include "common/common.h"

#define DRAM_EFF 0.90             /* [EFF] */
#define LATENCY_CYCLES 500.0      /* [LAT], at the boost clock */
#define FIXED_NS_V100 2500.0      /* [FIX] on V100 ... */
#define FIXED_CLOCK_V100_GHZ 1.53 /* ... at V100's boost clock */

int psi_sim_gpu_physics_derive(const psi_gpu_t *g, sim_gpu_physics_t *out)
{
    if (!g)
        return psi_error(PS_E_ARG, "simulator: no GPU");
    double dram = g->sm_dram_gbs > 0 ? g->sm_dram_gbs : g->dram_gbs;
    if (!(g->clock_ghz > 0) || g->tpcs <= 0 || !(dram > 0))
        return psi_error(PS_E_ARG,
                         "simulator: the catalog row of %s lacks the figures its physics is derived from "
                         "(clock %g GHz, %d TPCs, DRAM %g GB/s; src/profile/gpu.c)",
                         g->name ? g->name : "(unnamed)", g->clock_ghz, g->tpcs, dram);
    /* [SMBW]: a streaming kernel saturates the DRAM at about half the SMs. */
    *out = (sim_gpu_physics_t){.dram_eff = DRAM_EFF,
                               .sm_gbs = dram * DRAM_EFF / g->tpcs,
                               .mem_latency_ns = LATENCY_CYCLES / g->clock_ghz,
                               .kernel_fixed_ns = FIXED_NS_V100 * FIXED_CLOCK_V100_GHZ / g->clock_ghz};
    return 0;
}

const sim_gpu_physics_t *psi_sim_gpu_physics(const psi_gpu_t *g)
{
    /* The physics runs this for every kernel: remember the last GPU. */
    static _Thread_local const psi_gpu_t *last;
    static _Thread_local sim_gpu_physics_t last_p;
    if (g && g == last)
        return &last_p;
    sim_gpu_physics_t p;
    if (!g || psi_sim_gpu_physics_derive(g, &p) != 0)
        return NULL;
    last_p = p;
    last = g;
    return &last_p;
}

const psi_gpu_t *psi_sim_gpu_find(const char *name)
{
    const psi_gpu_t *g = psi_gpu_find(name);
    if (!g) {
        char known[1024];
        psi_gpu_names(known, sizeof known);
        psi_error(PS_E_ARG, "unknown GPU '%s' (known: %s)", name ? name : "(null)", known);
        return NULL;
    }
    sim_gpu_physics_t p;
    return psi_sim_gpu_physics_derive(g, &p) == 0 ? g : NULL;
}
