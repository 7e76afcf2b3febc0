/*
 * The device side of the collector as a small function table, so that the
 * campaign logic (planning, the store, resume, export) is the same for the
 * CUDA backend (device_cuda.c, built with PS_CUDA) and for the fake backend
 * (fake.c), a deterministic simulated GPU that the tests kill and resume.
 */
#ifndef PS_COLLECT_BACKEND_H
#define PS_COLLECT_BACKEND_H

#include "collect/memplan.h"
#include "profile/oplist.h"
#include "profile/tables.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Operators [start, start+len) of one list, run on `tpcs` TPCs. */
typedef struct {
    const psi_oplist_t *list;
    int start, len;
    int tpcs;
} psi_segment_t;

/* The runs of one measurement: `warmup` untimed runs, then `runs` timed
 * ones; clock_mhz[r] (the caller's, `runs` long) gets the SM clock during
 * timed run r, NAN where the backend cannot read it. */
typedef struct {
    int warmup, runs;
    double *clock_mhz;
} psi_runs_t;

/* What a backend calls once a measurement is warm and may start: user is
 * passed back to fn, which may block (an MPS child waits there for the
 * others). */
typedef struct {
    void (*fn)(void *user);
    void *user;
} psi_ready_t;

typedef struct psi_backend psi_backend_t;

struct psi_backend {
    const char *name;      /* "cuda", "fake" */
    const char *mechanism; /* coexec.csv mechanism column: "green-ctx", "sim" */
    ps_collect_device_t dev;

    /* Device time of every operator of l on tpcs TPCs, measured in model
     * order: each run of r executes the whole list once (op 0, 1, ..., n-1,
     * each reading its predecessor's output, memplan.h), every operator
     * between two events; with flush_l2 the L2 is flushed before every run,
     * as before every co-execution run. out_ns[op * r->runs + run],
     * op-major. */
    int (*profile)(psi_backend_t *b, const psi_oplist_t *l, int tpcs, const psi_runs_t *r, double *out_ns);

    /* Run hp and lp together on disjoint SM partitions, the runs of r; each
     * side timed on its own stream (hp_ns[run], lp_ns[run]); the same cache
     * state as profile. A segment of len 0 (list may then be NULL) times an
     * empty side: the fixed cost of a co-execution. */
    int (*coexec)(psi_backend_t *b, const psi_segment_t *hp, const psi_segment_t *lp, const psi_runs_t *r,
                  double *hp_ns, double *lp_ns);

    /* Hardware counters (psi_counter_metrics, FORMATS.md) of every operator
     * of l on tpcs TPCs (the whole device or one green context), NAN where
     * not measured. NULL when the backend has no counters. */
    int (*counters)(psi_backend_t *b, const psi_oplist_t *l, int tpcs, psi_counters_t *out);

    /* The device buffers of every operator of l as this backend lays them
     * out for a measurement (memplan.h with the arena's address), allocated
     * if need be. out->op is the caller's (psi_memplan_free). */
    int (*buffers)(psi_backend_t *b, const psi_oplist_t *l, psi_memplan_t *out);

    /* Whole iterations of l (every operator in order, then a synchronise)
     * on the whole device as this process sees it (under MPS: its active
     * thread percentage): `warmup` iterations, then ready, then as many as
     * fit in `seconds`; *iters_per_s gets their rate. */
    int (*throughput)(psi_backend_t *b, const psi_oplist_t *l, int warmup, double seconds, psi_ready_t ready,
                      double *iters_per_s);

    void (*free)(psi_backend_t *b);
};

/* The CUPTI / Nsight Compute metrics of psi_counters_t, in its order: the
 * ops.csv counter columns of FORMATS.md. */
extern const char *const psi_counter_metrics[7];

/* The error for a profiler that lacks permission (CUPTI's
 * CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): PS_E_BACKEND, saying how to enable
 * it. what names the failing call. */
int psi_counters_permission_error(const char *what);

/* Fake backend only: the operator indices its last profile call executed,
 * in order (warm-up runs included), so that tests can check model order.
 * *ops is the backend's; valid until the next call. */
int psi_backend_fake_trace(psi_backend_t *b, const int **ops, int *n);

/* Open a backend by name ("cuda" or "fake"). "cuda" loads the CUDA module
 * (module.h) on first use and fails with PS_E_BACKEND and a message saying
 * why when the module or a CUDA library is missing, or there is no driver
 * or no device. */
int psi_backend_open(const ps_collect_params_t *p, psi_backend_t **out);

int psi_backend_fake_open(const ps_collect_params_t *p, psi_backend_t **out);

/* The gpu column's name for a device name, as the driver reports it: the
 * catalog's name where the catalog knows the device (psi_gpu_canonical:
 * "NVIDIA H100 80GB HBM3" -> "H100-SXM", "Tesla V100-SXM2-16GB" ->
 * "V100-SXM2-16GB"), else the name cleaned ("NVIDIA " and "Tesla " dropped,
 * spaces and commas become '-') with a warning that the twin and the
 * presets do not know it. */
void psi_gpu_column_name(const char *device_name, char *out, size_t size);

#ifdef __cplusplus
}
#endif

#endif
