/*
 * k processes under MPS on all the SMs of one GPU (docs/simulator.md, "k
 * processes under MPS"): each process runs its kernels in order, launched by
 * its own host thread; the kernels that run at one instant share the SMs as
 * well as the L2 and the DRAM. The twin of Abacus's experiments
 * (src/evaluate/overlap_twin.c).
 *
 *     sim_mps_params_t p = psi_sim_mps_default();
 *     sim_mps_seg_t seg[2] = {{&m50, 0, 40}, {&m16, 10, 20}};
 *     double makespan_ns;
 *     psi_sim_mps_run(&ph, &p, seg, 2, &makespan_ns);
 */
#ifndef PS_SIMULATE_MPS_H
#define PS_SIMULATE_MPS_H

#include "simulate/sim.h"

/* Launch and sharing parameters (docs/simulator.md, eq. 13-15): the public
 * ps_mps_params_t of include/pairsight_overlap.h. launch_ns: eq. 13;
 * start_ns: eq. 15; stagger_ns: the parent sends in turn (eq. 13); sm_pack:
 * eq. 14, a kernel alone is never scaled; flop_scale: eq. 16, the caller
 * applies it to the kernels' flop_eff (overlap_twin.c), psi_sim_mps_run does
 * not read it. */
typedef ps_mps_params_t sim_mps_params_t;

/* The uncalibrated twin's values: the host-fed twin's 3.8 us a launch, its
 * 1.5 us dispatch cost, no stagger, strict sharing of the SMs. */
sim_mps_params_t psi_sim_mps_default(void);

/* A model's kernels on one GPU, with their placements at every TPC count
 * made when first needed. */
typedef struct {
    const psi_gpu_t *g;
    const sim_kernel_t *k; /* [n], the caller's (a sim_workload_t) */
    int n;
    sim_placed_t *pl; /* [n * tpcs], lazily */
    double *alone_ns; /* [n * tpcs]: duration alone with the launch gap; 0 = not placed */
} sim_mps_model_t;

int psi_sim_mps_model_init(sim_mps_model_t *m, const psi_gpu_t *g, const sim_kernel_t *k, int n);
void psi_sim_mps_model_free(sim_mps_model_t *m);

/* One process: kernels [start, start + len) of a model. */
typedef struct {
    sim_mps_model_t *m;
    int start, len;
} sim_mps_seg_t;

/* The makespan of k processes started together (eq. 13-15): the last
 * process's end plus start_ns; processes with len 0 run nothing. */
int psi_sim_mps_run(const sim_physics_t *ph, const sim_mps_params_t *p, const sim_mps_seg_t *seg, int k,
                    double *makespan_ns);

/* physics.c: eq. 5-6 for n running kernels, and eq. 7 beside co-runners
 * inserting co_rate bytes/ns in all. */
double psi_sim_share_solve(const psi_gpu_t *g, const sim_physics_t *ph, const sim_running_t *r);
double psi_sim_dram_beside_rate(const psi_gpu_t *g, const sim_physics_t *ph, const sim_placed_t *pk, double co_rate);

#endif
