/*
 * The device side of the collector as a small function table, so that the
 * campaign logic (planning, the store, resume, export) is the same for the
 * CUDA backend (device_cuda.c, built with PS_CUDA) and for the fake backend
 * (fake.c), a deterministic simulated GPU that the tests kill and resume.
 */
#ifndef PS_COLLECT_BACKEND_H
#define PS_COLLECT_BACKEND_H

#include "collect/oplist.h"
#include "profile/tables.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Operators [start, start+len) of one list, run on `tpcs` TPCs. */
typedef struct {
    const ps_oplist_t *list;
    int start, len;
    int tpcs;
} ps_segment_t;

typedef struct ps_backend ps_backend_t;

struct ps_backend {
    const char *name;      /* "cuda", "fake" */
    const char *mechanism; /* coexec.csv mechanism column: "green-ctx", "sim" */
    ps_collect_device_t dev;

    /* Device time of every operator of l on tpcs TPCs: `warmup` untimed
     * launches, then `runs` timed ones. out_ns[op * runs + r], op-major. */
    int (*profile)(ps_backend_t *b, const ps_oplist_t *l, int tpcs, int warmup, int runs,
                   double *out_ns);

    /* Run hp and lp together on disjoint SM partitions, `runs` times after
     * `warmup` untimed runs; each side timed on its own stream. */
    int (*coexec)(ps_backend_t *b, const ps_segment_t *hp, const ps_segment_t *lp, int warmup,
                  int runs, double *hp_ns, double *lp_ns);

    /* Hardware counters of every operator of l on tpcs TPCs (NAN where not
     * measured). NULL when the backend has no counters. */
    int (*counters)(ps_backend_t *b, const ps_oplist_t *l, int tpcs, ps_counters_t *out);

    /* Whole iterations of l (every operator in order, then a synchronise)
     * on the whole device as this process sees it (under MPS: its active
     * thread percentage): `warmup` iterations, then ready(user) - which may
     * block - then as many as fit in `seconds`; *iters_per_s gets their rate. */
    int (*throughput)(ps_backend_t *b, const ps_oplist_t *l, int warmup, double seconds,
                      void (*ready)(void *user), void *user, double *iters_per_s);

    void (*free)(ps_backend_t *b);
};

/* Open a backend by name ("cuda" or "fake"). "cuda" loads the CUDA module
 * (module.h) on first use and fails with PS_E_BACKEND and a message saying
 * why when the module or a CUDA library is missing, or there is no driver
 * or no device. */
int ps_backend_open(const ps_collect_params_t *p, ps_backend_t **out);

int ps_backend_fake_open(const ps_collect_params_t *p, ps_backend_t **out);

/* The gpu column's name for a device name: "NVIDIA A100-SXM4-40GB" ->
 * "A100-SXM4-40GB" (vendor prefix dropped, spaces become '-'). */
void ps_gpu_column_name(const char *device_name, char *out, size_t size);

#ifdef __cplusplus
}
#endif

#endif
