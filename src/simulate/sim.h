/*
 * The simulator's internals: kernels, workloads, the standalone timing model
 * and the event-driven co-execution model. docs/simulator.md gives every
 * equation with its source; the comments here name the equation numbers.
 *
 * A workload is a sequence of kernels (one per operator). A kernel is
 * described by the work it does, not by a time: FLOPs, DRAM bytes, L2 bytes,
 * thread blocks and unhidden memory round trips; the timing model turns that
 * into a duration on p TPCs of a GPU of the catalog (src/profile/gpu.h).
 */
#ifndef PS_SIMULATE_SIM_H
#define PS_SIMULATE_SIM_H

#include "common/common.h"
#include "pairsight.h"
#include "profile/gpu.h"
#include "profile/tables.h"
#include "profile/oplist.h"

#include <stdint.h>

/* Constants of the physics that are not GPU figures (docs/simulator.md,
 * "Parameters"). Defaults come from psi_sim_physics_default(). */
typedef struct {
    double lat_linear;     /* a: latency growth per unit of DRAM utilization (eq. 5) */
    double lat_queue;      /* kappa: queueing term U/(1-U) of the latency (eq. 5) */
    double overlap;        /* epsilon: share of the shorter of compute/memory time not hidden (eq. 1) */
    double l2_share;       /* gamma: most of a target's L2 hits a co-runner's footprint can evict (eq. 7) */
    double dispatch_ns;    /* fixed cost every co-execution adds to each side (eq. 9) */
    double gap_ns;         /* launch gap before each kernel of a co-executed stream (eq. 8) */
    double counter_noise;  /* log-sd of the replay noise of ops.csv's counters (eq. 12) */
    double duration_noise; /* log-sd of the noise of ops.csv's standalone durations (eq. 12) */
    int launch;            /* SIM_LAUNCH_GATED or SIM_LAUNCH_HOST: who feeds the streams (eq. 8c) */
    double host_ns;        /* host time one launch or event record costs the feeding thread (eq. 8c) */
} sim_physics_t;

/* How the launches reach the GPU (docs/simulator.md, eq. 8c): queued on the
 * GPU behind a gate before the run (our collector), or issued during the run
 * by one host thread that feeds both streams in turn (a co-location runtime,
 * e.g. Orion's scheduler). */
enum { SIM_LAUNCH_GATED = 0, SIM_LAUNCH_HOST = 1 };

/* The GPU figures only the simulator uses (src/simulate/gpu_physics.c). */
typedef struct {
    double dram_eff;        /* share of dram_gbs the DRAM can deliver at most (the ceiling of eq. 5) */
    double sm_gbs;          /* achievable DRAM bandwidth of one SM alone, GB/s */
    double mem_latency_ns;  /* idle DRAM load latency */
    double kernel_fixed_ns; /* device time of an empty kernel (launch, ramp-up, drain) */
} sim_gpu_physics_t;

/* Those figures, derived from a catalog row (its clock, TPCs and DRAM
 * bandwidth); PS_E_ARG with a message naming what the row lacks. */
int psi_sim_gpu_physics_derive(const psi_gpu_t *g, sim_gpu_physics_t *out);
/* The same for the physics' inner loops, or NULL where the row lacks them:
 * every entry point of the simulator checks a GPU with
 * psi_sim_gpu_physics_derive first (static, per thread). */
const sim_gpu_physics_t *psi_sim_gpu_physics(const psi_gpu_t *g);
/* The catalog GPU of a name or alias that the simulator can run: NULL with
 * PS_E_ARG set (the message lists the catalog, or names what the row lacks)
 * for any other. The simulator's entry points take their GPU from here. */
const psi_gpu_t *psi_sim_gpu_find(const char *name);

sim_physics_t psi_sim_physics_default(void);

/* The unit a kernel's FLOPs run on. TF32 (convolutions under cuDNN's default
 * allow_tf32) falls back to FP32 on GPUs without TF32 tensor cores. */
enum { SIM_FP32 = 0, SIM_FP16 = 1, SIM_TF32 = 2 };

typedef struct {
    const char *name;
    double flops;       /* floating-point operations */
    double dram_bytes;  /* DRAM bytes read + written alone (compulsory misses) */
    double l2_bytes;    /* L2 traffic, >= dram_bytes */
    double ctas;        /* thread blocks of the grid */
    double ctas_per_sm; /* blocks resident on one SM at a time */
    double lat_rounds;  /* dependent DRAM round trips the kernel cannot hide */
    double flop_eff;    /* share of the peak rate reached when compute-bound */
    double threads;     /* threads per block; 0: ctas_per_sm blocks fill an SM (eq. 3b) */
    double ilp;         /* independent loads in flight per thread, relative to one (eq. 3b); 0 = 1 */
    int tensor;         /* SIM_FP32, SIM_FP16 or SIM_TF32: the unit its FLOPs run on */
} sim_kernel_t;

/* A workload: one model at one batch size on the simulated GPU. */
typedef struct {
    char model[32];
    int batch;
    int n;
    sim_kernel_t *k; /* [n], names point to static strings */
} sim_workload_t;

/* Options of the workload builders. */
typedef struct {
    int bert_seq;     /* BERT-base sequence length */
    int llama_prompt; /* Llama prompt length (prefill) = KV length of the decode step */
} sim_shape_opts_t;

/* Names of the models the builders know, NULL-terminated. */
extern const char *const psi_sim_model_names[];
int psi_sim_model_check(const char *model);
/* The shapes built by default (a campaign's, the replay's): 128 tokens of
 * BERT sequence and of Llama prompt. */
sim_shape_opts_t psi_sim_shape_default(void);
/* Build a workload. Fails with PS_E_ARG for an unknown model or a batch <= 0. */
int psi_sim_workload_build(const char *model, int batch, const sim_shape_opts_t *o, sim_workload_t *out);
void psi_sim_workload_free(sim_workload_t *w);

/* ---- Timing model ---- */

/* A kernel prepared for one GPU and one allocation: the parts of eq. 1 that do
 * not depend on the co-runner. */
typedef struct {
    const sim_kernel_t *k;
    double t_fixed;    /* fixed device time, ns */
    double t_compute;  /* wave-quantized compute time, ns (eq. 2) */
    double sms_active; /* SMs the grid occupies (eq. 3) */
    double bw_sm;      /* bytes/ns one SM sustains at idle latency: its memory-level parallelism (eq. 3b) */
    double bw_l2;      /* bytes/ns of L2 bandwidth its SMs can draw (eq. 4b) */
    double footprint;  /* bytes it reuses from L2 within a wave, min(dram_bytes, L2 size) / waves (eq. 7) */
    double rate_solo;  /* DRAM bytes/ns it moves alone (eq. 7) */
} sim_placed_t;

void psi_sim_place(const psi_gpu_t *g, const sim_kernel_t *k, int tpcs, sim_placed_t *out);

/* The state of a kernel under given memory conditions. */
typedef struct {
    double t_ns;       /* duration */
    double t_mem;      /* memory time (eq. 4) */
    double t_l2;       /* L2 time (eq. 4b) */
    double t_lat;      /* unhidden latency time */
    double dram_bytes; /* DRAM bytes including those the co-runner's L2 footprint adds */
    double dram_rate;  /* bytes/ns averaged over the duration */
} sim_state_t;

/* The kernels running at one instant, which share the memory system
 * (eq. 5-6): each one's placement and the DRAM bytes it moves there, the
 * launch gap before each (0 for a kernel timed alone, gap_ns in a stream),
 * and the state the solver writes for each. */
typedef struct {
    int n;
    const sim_placed_t *const *pk; /* [n] */
    const double *dram;            /* [n] */
    double gap;                    /* ns */
    sim_state_t *st;               /* [n], written */
} sim_running_t;

/* Standalone duration and counters of a placed kernel. */
typedef struct {
    double duration_ns;
    psi_intensity_t intensity;
    psi_counters_t c;
} sim_solo_t;

void psi_sim_solo(const psi_gpu_t *g, const sim_physics_t *ph, const sim_placed_t *pk, sim_solo_t *out);

/* The times, in ns, two co-executed sides finish (psi_sim_coexec). */
typedef struct {
    double a_ns, b_ns;
} sim_coexec_t;

/*
 * Co-execute two segments (kernels a[0..na) on one side, b[0..nb) on the
 * other, already placed on their TPCs), both starting at time 0. Returns the
 * time each side finishes, without dispatch cost or noise, in ns; a side with
 * no kernels finishes at 0. nb may be 0 (the a side runs alone). With ph->launch == SIM_LAUNCH_HOST one host
 * thread issues both sides' start events, kernels and end events in turn,
 * a side first (eq. 8c), and each side's time runs from its start event.
 */
sim_coexec_t psi_sim_coexec(const psi_gpu_t *g, const sim_physics_t *ph, const sim_placed_t *a, int na,
                            const sim_placed_t *b, int nb);

/* ---- The twin of the collector's operator lists (twin_oplist.c) ---- */

/* One kernel per operator of a collector list (src/profile/oplist.h); the
 * kernels' names point into l, which must outlive out. */
int psi_sim_workload_from_oplist(const psi_oplist_t *l, sim_workload_t *out);

/* The public ps_twin_pred_t (pairsight_collect.h) under its internal name. */
typedef ps_twin_pred_t sim_twin_pred_t;

/* The twin's prediction for each of q[0..n) (the key columns of coexec.csv;
 * segments index the collector's lists of psi_zoo_build at seq_len) on gpu
 * (a catalog name or alias). out[0..n) is the caller's. */
int psi_sim_twin_predict(const char *gpu, int seq_len, const psi_coexec_row_t *q, size_t n, sim_twin_pred_t *out);

/* ---- One trace, other TPC counts from the twin (twin_scale.c) ---- */

/* What one scaling writes: the rows of (model, batch) traced at `traced`
 * TPCs, aligned with l's operators, at every count of at[0..n_at). */
typedef struct {
    const char *model;
    int batch;
    int traced;
    const psi_oplist_t *l;
    const int *at;
    int n_at;
} sim_twin_scale_t;

/* ops.csv of sc's model at every count of sc->at: its rows at the traced
 * TPCs in `in` (kernels, launch order) aligned with sc->l's operators,
 * measured there and measured x twin ratio elsewhere (source "twin-ratio"). */
int psi_ops_twin_scale(const ps_ops_t *in, const sim_twin_scale_t *sc, ps_ops_t **out);

/* Random numbers: psi_rng_t (src/common/common.h), one stream per experiment. */

#endif
