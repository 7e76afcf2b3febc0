/*
 * The fake backend: a simulated A100-like GPU with a roofline cost per
 * operator and a memory-contention slowdown under co-execution. It exists so
 * that the whole campaign path (planning, the store, resume after a kill,
 * export) runs and is tested on machines without a GPU; its rows carry the
 * mechanism "sim" and its device is named "FAKE-GPU", so they cannot pass for
 * measurements.
 *
 * Every number is a pure function of the operator, the allocation and the run
 * index, so that a campaign resumed after a kill produces exactly the rows of
 * an uninterrupted one.
 */
#include "collect/backend.h"

#include "common/common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_TPCS 54
#define FAKE_FLOPS_PER_TPC 5.8e12 /* fp16 tensor peak / 54 TPCs, flop/s */
#define FAKE_DRAM_BW 1.5e12       /* bytes/s of the whole device */
#define FAKE_BW_SAT_TPCS 20.0     /* TPCs that saturate DRAM bandwidth */
#define FAKE_LAUNCH_NS 4000.0
#define FAKE_CONTENTION 0.6       /* slowdown of a fully memory-bound op
                                     beside a fully memory-bound co-runner */
#define FAKE_COEXEC_FIXED_NS 6000.0 /* what every co-execution adds to each
                                       side (events, the start gate) */
#define FAKE_CLOCK_MHZ 1410.0
#define FAKE_ARENA_BASE 0x7f0000000000ULL /* made-up device addresses */

typedef struct {
    psi_backend_t base;
    unsigned delay_us;
    int throttle, no_permission;
    long runs_seen; /* timed runs so far, for fake_throttle */
    int *trace;     /* operator order of the last profile call */
    int n_trace;
    size_t cap_trace;
} fake_t;

/* The clock of the next timed run: 20% low where fake_throttle says. */
static double fake_clock(fake_t *f)
{
    long r = ++f->runs_seen;
    int low = f->throttle > 0 ? r >= f->throttle : f->throttle < 0 ? r == -f->throttle : 0;
    return low ? 0.8 * FAKE_CLOCK_MHZ : FAKE_CLOCK_MHZ;
}

static int trace_push(fake_t *f, int op)
{
    void *grown = f->trace;
    if (psi_array_grow(&grown, (size_t)f->n_trace, &f->cap_trace, sizeof *f->trace, 1024) != PS_OK)
        return PS_E_NOMEM;
    f->trace = grown;
    f->trace[f->n_trace++] = op;
    return 0;
}

int psi_backend_fake_trace(psi_backend_t *b, const int **ops, int *n)
{
    if (strcmp(b->name, "fake") != 0)
        return psi_error(PS_E_ARG, "only the fake backend keeps a trace");
    const fake_t *f = (const fake_t *)b;
    *ops = f->trace;
    *n = f->n_trace;
    return 0;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = mix(h ^ (unsigned char)*s);
    return h;
}

/* A deterministic multiplicative noise of about 2% (sum of three uniforms). */
static double noise(uint64_t key)
{
    double u = 0;
    for (int i = 0; i < 3; i++) {
        key = mix(key + 0x9e3779b97f4a7c15ULL);
        u += (double)(key >> 11) / 9007199254740992.0;
    }
    return 1.0 + 0.02 * (u - 1.5);
}

static void fake_sleep(const fake_t *f)
{
    if (f->delay_us == 0)
        return;
    struct timespec ts = {(time_t)(f->delay_us / 1000000u), (long)(f->delay_us % 1000000u) * 1000L};
    nanosleep(&ts, NULL);
}

/* Roofline time of op on tpcs TPCs, split into its compute and memory parts. */
static void op_time(const psi_opdesc_t *op, int tpcs, double *t_ns, double *mem_share)
{
    double tc = psi_op_flops(op) / ((double)tpcs * FAKE_FLOPS_PER_TPC) * 1e9;
    double bw = FAKE_DRAM_BW * ((double)tpcs >= FAKE_BW_SAT_TPCS ? 1.0 : (double)tpcs / FAKE_BW_SAT_TPCS);
    double tm = psi_op_bytes(op) / bw * 1e9;
    double body = tc > tm ? tc : tm;
    *t_ns = FAKE_LAUNCH_NS + body;
    *mem_share = body > 0 ? tm / body * (body / *t_ns) : 0.0;
    if (*mem_share > 1.0)
        *mem_share = 1.0;
}

/* Model order, as on the device: every run executes op 0..n-1 once (the
 * trace records it); the time of each is a pure function of the operator,
 * the allocation and the run, so that a resumed campaign writes the same
 * rows as an uninterrupted one. */
static int fake_profile(psi_backend_t *b, const psi_oplist_t *l, int tpcs, const psi_runs_t *rs, double *out_ns)
{
    int runs = rs->runs;
    fake_t *f = (fake_t *)b;
    fake_sleep(f);
    f->n_trace = 0;
    uint64_t key = hash_str(hash_str(0, l->model), "profile");
    for (int r = -rs->warmup; r < runs; r++) {
        for (int i = 0; i < l->n; i++) {
            int rc = trace_push(f, i);
            if (rc)
                return rc;
            if (r < 0)
                continue;
            double t, m;
            op_time(&l->ops[i], tpcs, &t, &m);
            out_ns[(size_t)i * (size_t)runs + (size_t)r] =
                t * noise(mix(key ^ ((uint64_t)l->batch << 40) ^ ((uint64_t)tpcs << 32) ^
                              ((uint64_t)i << 8) ^ (uint64_t)r));
        }
        if (r >= 0)
            rs->clock_mhz[r] = fake_clock(f);
    }
    return 0;
}

/* Mean memory share of a segment, weighted by time: the pressure it puts on
 * the shared L2/DRAM path. */
static void segment_cost(const psi_segment_t *s, double *t_ns, double *pressure, double *mem_time)
{
    double tot = 0, mem = 0;
    for (int i = s->start; s->list && i < s->start + s->len; i++) {
        double t, m;
        op_time(&s->list->ops[i], s->tpcs, &t, &m);
        tot += t;
        mem += t * m;
    }
    *t_ns = tot;
    *mem_time = mem;
    *pressure = tot > 0 ? mem / tot : 0;
}

static int fake_coexec(psi_backend_t *b, const psi_segment_t *hp, const psi_segment_t *lp, const psi_runs_t *rs,
                       double *hp_ns, double *lp_ns)
{
    fake_t *f = (fake_t *)b;
    if (hp->tpcs + lp->tpcs > b->dev.tpc_count)
        return psi_error(PS_E_ARG, "fake: %d + %d TPCs exceed the device's %d", hp->tpcs, lp->tpcs, b->dev.tpc_count);
    fake_sleep(f);
    double th, ph, mh, tl, pl, ml;
    segment_cost(hp, &th, &ph, &mh);
    segment_cost(lp, &tl, &pl, &ml);
    /* Each side's memory-bound time stretches by the co-runner's pressure,
     * for the part of it that overlaps the co-runner. */
    double overlap_h = th > 0 ? (tl < th ? tl / th : 1.0) : 0;
    double overlap_l = tl > 0 ? (th < tl ? th / tl : 1.0) : 0;
    double sh = FAKE_COEXEC_FIXED_NS + th + FAKE_CONTENTION * mh * pl * overlap_h;
    double sl = FAKE_COEXEC_FIXED_NS + tl + FAKE_CONTENTION * ml * ph * overlap_l;
    uint64_t key = hash_str(hash_str(hash_str(0, hp->list ? hp->list->model : ""),
                                     lp->list ? lp->list->model : ""),
                            "coexec");
    key = mix(key ^ ((uint64_t)hp->start << 48) ^ ((uint64_t)hp->len << 36) ^
              ((uint64_t)lp->start << 20) ^ ((uint64_t)lp->len << 8) ^ (uint64_t)hp->tpcs);
    key = mix(key ^ ((uint64_t)lp->tpcs << 24) ^ ((uint64_t)(hp->list ? hp->list->batch : 0) << 12) ^
              (uint64_t)(lp->list ? lp->list->batch : 0));
    for (int r = 0; r < rs->runs; r++) {
        hp_ns[r] = sh * noise(mix(key ^ (2 * (uint64_t)r)));
        lp_ns[r] = sl * noise(mix(key ^ (2 * (uint64_t)r + 1)));
        rs->clock_mhz[r] = fake_clock(f);
    }
    return 0;
}

/* Counters of the roofline: DRAM bytes as estimated, L2 traffic twice that,
 * and utilisations from the compute and memory parts of the time. */
static int fake_counters(psi_backend_t *b, const psi_oplist_t *l, int tpcs, psi_counters_t *out)
{
    fake_t *f = (fake_t *)b;
    if (f->no_permission)
        return psi_counters_permission_error("cuptiProfilerHostInitialize");
    fake_sleep(f);
    for (int i = 0; i < l->n; i++) {
        const psi_opdesc_t *op = &l->ops[i];
        double t, m;
        op_time(op, tpcs, &t, &m);
        double tc = psi_op_flops(op) / ((double)tpcs * FAKE_FLOPS_PER_TPC) * 1e9;
        out[i].dram_bytes = psi_op_bytes(op);
        out[i].l2_bytes = 2.0 * psi_op_bytes(op);
        out[i].stall_long_scoreboard = 60.0 * m;
        out[i].stall_lg_throttle = 10.0 * m;
        out[i].stall_mio_throttle = 5.0 * (1.0 - m);
        out[i].sm_pct = 100.0 * tc / t;
        out[i].mem_pct = 100.0 * m;
    }
    return 0;
}

/* Whole iterations at the share of the device this process was given
 * (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, as under MPS): the roofline time of
 * every operator on that share of the TPCs. Nothing runs, so co-located
 * fake jobs do not slow each other down. */
static int fake_throughput(psi_backend_t *b, const psi_oplist_t *l, int warmup, double seconds, psi_ready_t ready,
                           double *iters_per_s)
{
    (void)warmup;
    (void)seconds;
    const char *env = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    int share = env ? atoi(env) : 100;
    if (share < 1 || share > 100)
        share = 100;
    int tpcs = (int)((double)b->dev.tpc_count * share / 100.0 + 0.5);
    tpcs = tpcs < 1 ? 1 : tpcs;
    double total = 0;
    for (int i = 0; i < l->n; i++) {
        double t, m;
        op_time(&l->ops[i], tpcs, &t, &m);
        total += t;
    }
    ready.fn(ready.user);
    fake_sleep((fake_t *)b);
    *iters_per_s = 1e9 / total;
    return 0;
}

/* The layout the CUDA backend would use, from a made-up base address. */
static int fake_buffers(psi_backend_t *b, const psi_oplist_t *l, psi_memplan_t *out)
{
    (void)b;
    return psi_memplan_make(l, (uintptr_t)FAKE_ARENA_BASE, out);
}

static void fake_free(psi_backend_t *b)
{
    fake_t *f = (fake_t *)b;
    free(f->trace);
    free(f);
}

/* A driver that rounds a green context down to a multiple of `step` SMs
 * (step > 0): what it grants for every count, probed as the CUDA backend
 * probes. The whole device is always granted whole. */
static void fake_grants(ps_collect_device_t *d, int step)
{
    if (step <= 0)
        return;
    for (int t = 1; t <= FAKE_TPCS && t < (int)PS_ARRAY_LEN(d->granted_sms); t++) {
        int got = t == FAKE_TPCS ? 2 * t : 2 * t / step * step;
        if (got < d->min_partition_sms)
            got = 0;
        d->granted_sms[t] = (short)got;
        if (got == 2 * t)
            d->valid_sms_mask[got / 64] |= 1ULL << (got % 64);
    }
}

int psi_backend_fake_open(const ps_collect_params_t *p, psi_backend_t **out)
{
    /* psi_backend_t in its order: name, mechanism, dev (set below), then the
     * calls, each of its own type (a call out of order does not compile). */
    static const psi_backend_t fake_backend = {"fake",        "sim",        {.gpu = ""},     fake_profile, fake_coexec,
                                               fake_counters, fake_buffers, fake_throughput, fake_free};
    fake_t *f = psi_calloc(1, sizeof *f);
    if (!f)
        return PS_E_NOMEM;
    f->base = fake_backend;
    snprintf(f->base.dev.gpu, sizeof f->base.dev.gpu, "FAKE-GPU");
    f->base.dev.sm_count = 2 * FAKE_TPCS;
    f->base.dev.tpc_count = FAKE_TPCS;
    f->base.dev.min_partition_sms = 4;
    f->base.dev.sm_alignment = 2;
    f->base.dev.cc_major = 8;
    f->base.dev.cc_minor = 0;
    f->base.dev.mechanism = "sim";
    f->base.dev.sm_clock_mhz = FAKE_CLOCK_MHZ;
    f->base.dev.sm_clock_max_mhz = FAKE_CLOCK_MHZ;
    /* Under MPS a context gets its active thread percentage of the SMs,
     * rounded to whole SMs. */
    const char *share = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    int pct = share ? atoi(share) : 100;
    f->base.dev.exec_sms = pct >= 1 && pct <= 100 ? (int)(2 * FAKE_TPCS * pct / 100.0 + 0.5) : 2 * FAKE_TPCS;
    fake_grants(&f->base.dev, p->fake_grant_sms);
    f->throttle = p->fake_throttle;
    f->no_permission = p->fake_no_permission;
    f->delay_us = p->fake_delay_us;
    *out = &f->base;
    return 0;
}
