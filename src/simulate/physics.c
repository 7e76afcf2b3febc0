/*
 * The timing model of the simulator: the standalone duration of a kernel on p
 * TPCs and the event-driven fluid model of two co-executing kernel streams.
 * Equation numbers refer to docs/simulator.md.
 */
#include "simulate/sim.h"

#include <math.h>

/* The constants of eq. 1, 5, 7, 8, 9 and 12 (docs/simulator.md,
 * "Parameters", which gives the source of each). The derived kernels
 * (data/orion_kernels.inc) depend on them: change one, re-derive. */
sim_physics_t psi_sim_physics_default(void)
{
    sim_physics_t ph = {
        .lat_linear = 0.5,
        .lat_queue = 0.038,
        .overlap = 0.15,
        .l2_share = 0.4,
        .dispatch_ns = 1500.0,
        .gap_ns = 500.0,
        .counter_noise = 0.03,
        .duration_noise = 0.01,
        .launch = SIM_LAUNCH_HOST,
        .host_ns = 3800.0,
    };
    return ph;
}

/* Peak FLOP rate of one SM in FLOP/ns for the kernel's unit. */
static double sm_flop_rate(const psi_gpu_t *g, const sim_kernel_t *k)
{
    double tflops = g->fp32_tflops;
    if (k->tensor == SIM_FP16)
        tflops = g->tensor_tflops;
    else if (k->tensor == SIM_TF32 && g->tf32_tflops > 0)
        tflops = g->tf32_tflops;
    return tflops * 1e3 / g->sms;
}

static double solve_latency(const psi_gpu_t *g, const sim_physics_t *ph, const sim_running_t *r);

/*
 * Eq. 2 and 3: wave quantization. Blocks spread over the SMs first, so a grid
 * of C blocks occupies min(n, C) SMs; with b blocks resident per SM a wave
 * holds b*n blocks, and every wave lasts as long as its most loaded SM.
 * Eq. 3b: the bytes an SM keeps in flight follow the warps resident on it
 * (occupancy) and the independent loads of each warp; a full SM of a
 * streaming kernel sustains B_sm at the idle latency.
 * Eq. 4b: the L2 bandwidth its SMs can draw, 64 bytes a clock per SM.
 */
void psi_sim_place(const psi_gpu_t *g, const sim_kernel_t *k, int tpcs, sim_placed_t *out)
{
    double n = 2.0 * tpcs;
    double c = k->ctas < 1.0 ? 1.0 : k->ctas;
    double b = k->ctas_per_sm < 1.0 ? 1.0 : k->ctas_per_sm;
    double waves = ceil(c / (b * n));
    double per_sm = ceil(c / n);
    double b_eff = per_sm < b ? per_sm : b;
    double rate = sm_flop_rate(g, k) * (k->flop_eff > 0 ? k->flop_eff : 1.0);
    /* Blocks in flight: min(C, b n), each with its share of a full SM's
     * warps; an SM holds at most one full SM's worth of loads. */
    double full = k->threads > 0 ? fmin(1.0, b * k->threads / 2048.0) : 1.0;
    double active = c < n ? c : n;
    double mlp = fmin(1.0, full * fmin(c, b * n) / (b * active) * (k->ilp > 0 ? k->ilp : 1.0));
    out->k = k;
    out->t_fixed = psi_sim_gpu_physics(g)->kernel_fixed_ns;
    out->t_compute = k->flops > 0 ? waves * b_eff * (k->flops / c) / rate : 0.0;
    out->sms_active = active;
    out->bw_sm = psi_sim_gpu_physics(g)->sm_gbs * mlp; /* GB/s = bytes/ns */
    out->bw_l2 = out->sms_active * 64.0 * g->clock_ghz;
    double l2 = g->l2_mb * 1048576.0;
    out->footprint = (k->dram_bytes < l2 ? k->dram_bytes : l2) / waves;
    /* Eq. 7 needs its DRAM rate alone, under the default physics. */
    sim_physics_t ph = psi_sim_physics_default();
    sim_state_t st;
    const sim_placed_t *one = out;
    double dram = k->dram_bytes;
    out->rate_solo = 0;
    solve_latency(g, &ph, &(sim_running_t){.n = 1, .pk = &one, .dram = &dram, .gap = 0.0, .st = &st});
    out->rate_solo = st.dram_rate > 0 ? st.dram_rate : 0.0;
}

/* Eq. 5: memory latency as a function of DRAM utilization U. */
static double latency(const psi_gpu_t *g, const sim_physics_t *ph, double u)
{
    if (u > 0.99)
        u = 0.99;
    if (u < 0)
        u = 0;
    return psi_sim_gpu_physics(g)->mem_latency_ns * (1.0 + ph->lat_linear * u + ph->lat_queue * u / (1.0 - u));
}

/*
 * Eq. 1 and 4: duration of running kernel i of r at memory latency lat,
 * moving r->dram[i] bytes, with the share l2_avail of the L2 bandwidth its
 * SMs could draw; into r->st[i]. By Little's law an SM that keeps a fixed
 * number of bytes in flight sustains bw_sm * L0 / L bytes/ns.
 */
static void kernel_state(const psi_gpu_t *g, const sim_physics_t *ph, const sim_running_t *r, int i, double lat,
                         double l2_avail)
{
    const sim_placed_t *pk = r->pk[i];
    double dram = r->dram[i], gap = r->gap;
    sim_state_t *s = &r->st[i];
    double bw = pk->sms_active * pk->bw_sm * psi_sim_gpu_physics(g)->mem_latency_ns / lat;
    double tm = dram > 0 ? dram / bw : 0.0;
    double tc = pk->t_compute;
    double tl2 = pk->k->l2_bytes / (pk->bw_l2 * l2_avail);
    double hi = tm > tc ? tm : tc, lo = tm > tc ? tc : tm;
    if (tl2 > hi)
        hi = tl2;
    s->t_mem = tm;
    s->t_l2 = tl2;
    s->t_lat = pk->k->lat_rounds * lat;
    s->t_ns = gap + pk->t_fixed + hi + ph->overlap * lo + s->t_lat;
    s->dram_bytes = dram;
    /* The traffic flows while the kernel runs, not during its launch gap. */
    s->dram_rate = dram / (s->t_ns - gap);
}

/*
 * Eq. 5-6: the latency L at which the DRAM traffic of the running kernels and
 * the latency agree, L = L0 g(sum_i X_i(L) / B). The right side falls as L
 * grows, so the root is unique; bisection finds it.
 */
static double solve_latency(const psi_gpu_t *g, const sim_physics_t *ph, const sim_running_t *r)
{
    const sim_placed_t *const *pk = r->pk;
    const int n = r->n;
    const double gap = r->gap;
    sim_state_t *st = r->st;
    double bmax = g->dram_gbs * psi_sim_gpu_physics(g)->dram_eff;
    double lo = psi_sim_gpu_physics(g)->mem_latency_ns, hi;
    double u = 0, l2_demand = 0, l2a = 1.0;
    /* Eq. 4b: when the running kernels draw more L2 bandwidth than the L2
     * delivers, each gets that share of what its SMs could draw. */
    for (int i = 0; i < n; i++) {
        kernel_state(g, ph, r, i, lo, 1.0);
        l2_demand += pk[i]->k->l2_bytes / (st[i].t_ns - gap);
    }
    if (l2_demand > g->l2_gbs)
        l2a = g->l2_gbs / l2_demand;
    for (int i = 0; i < n; i++) {
        kernel_state(g, ph, r, i, lo, l2a);
        u += st[i].dram_rate;
    }
    hi = latency(g, ph, u / bmax);
    if (hi <= lo * (1.0 + 1e-9))
        return lo;
    for (int it = 0; it < 40 && hi - lo > 1e-4 * lo; it++) {
        double mid = 0.5 * (lo + hi);
        u = 0;
        for (int i = 0; i < n; i++) {
            kernel_state(g, ph, r, i, mid, l2a);
            u += st[i].dram_rate;
        }
        if (mid < latency(g, ph, u / bmax))
            lo = mid;
        else
            hi = mid;
    }
    double l = 0.5 * (lo + hi);
    for (int i = 0; i < n; i++)
        kernel_state(g, ph, r, i, l, l2a);
    return l;
}

static double clamp01(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

/*
 * Standalone duration and the counters of ops.csv, from the same state
 * (docs/simulator.md, "Counters").
 */
void psi_sim_solo(const psi_gpu_t *g, const sim_physics_t *ph, const sim_placed_t *pk, sim_solo_t *out)
{
    sim_state_t s;
    const sim_placed_t *one = pk;
    double dram = pk->k->dram_bytes;
    double lat = solve_latency(g, ph, &(sim_running_t){.n = 1, .pk = &one, .dram = &dram, .gap = 0.0, .st = &s});
    double t = s.t_ns, tc = pk->t_compute, tm = s.t_mem;
    double busy = tc > tm ? tc : tm;
    double u = s.dram_rate / (g->dram_gbs * psi_sim_gpu_physics(g)->dram_eff);

    out->duration_ns = t;
    if (pk->t_fixed + s.t_lat > busy)
        out->intensity = PS_INTENSITY_UNKNOWN;
    else
        out->intensity = tc >= tm ? PS_INTENSITY_COMPUTE : PS_INTENSITY_MEMORY;

    /* Share of the duration spent waiting on memory: the memory time when it
     * dominates, a small part of it when compute hides it. */
    double mem_wait = (tm > tc ? tm - ph->overlap * tc : ph->overlap * tm) / t;
    double lat_wait = s.t_lat / t;
    out->c.dram_bytes = pk->k->dram_bytes;
    out->c.l2_bytes = pk->k->l2_bytes;
    out->c.stall_long_scoreboard = 100.0 * clamp01(0.7 * mem_wait + 0.9 * lat_wait);
    out->c.stall_lg_throttle = 100.0 * clamp01(0.35 * mem_wait * u * (lat / psi_sim_gpu_physics(g)->mem_latency_ns));
    out->c.stall_mio_throttle = 100.0 * clamp01((pk->k->tensor != SIM_FP32 ? 0.18 : 0.08) * tc / t + 0.02 * mem_wait);
    out->c.sm_pct = 100.0 * clamp01(0.9 * tc / t + 0.25 * tm / t);
    double l2u = (pk->k->l2_bytes / t) / g->l2_gbs;
    out->c.mem_pct = 100.0 * clamp01(u > l2u ? u * psi_sim_gpu_physics(g)->dram_eff : l2u);
}

/*
 * Eq. 7: the DRAM bytes of a kernel beside a co-runner. A shared LRU cache
 * holds each stream's lines in proportion to the rate at which it inserts
 * them, its DRAM rate: the target keeps S_t = S r_t / (r_t + r_c) of the L2.
 * Its hits reuse, within a wave, a set of W bytes; the share 1 - S_t / W of
 * them that no longer fits turns into misses, at most gamma of the hits
 * (the rest come back within microseconds, before any eviction).
 */
static double dram_beside(const psi_gpu_t *g, const sim_physics_t *ph, const sim_placed_t *pk, const sim_placed_t *co)
{
    double s = g->l2_mb * 1048576.0;
    double hits = pk->k->l2_bytes - pk->k->dram_bytes;
    double rt = pk->rate_solo, rc = co->rate_solo;
    if (hits <= 0 || rc <= 0 || pk->footprint <= 0)
        return pk->k->dram_bytes;
    double st = s * rt / (rt + rc);
    double lost = 1.0 - st / pk->footprint;
    if (lost <= 0)
        return pk->k->dram_bytes;
    return pk->k->dram_bytes + fmin(lost, ph->l2_share) * hits;
}

/* Eq. 5-6 and 7 for the k-process MPS model (mps_share.c): the shared
 * latency of n running kernels, and a kernel's DRAM bytes beside co-runners
 * that insert lines at co_rate bytes/ns in all. */
double psi_sim_share_solve(const psi_gpu_t *g, const sim_physics_t *ph, const sim_running_t *r)
{
    return solve_latency(g, ph, r);
}

double psi_sim_dram_beside_rate(const psi_gpu_t *g, const sim_physics_t *ph, const sim_placed_t *pk, double co_rate)
{
    sim_placed_t co = {.rate_solo = co_rate};
    return dram_beside(g, ph, pk, &co);
}

/* One side of eq. 8: its kernels, the one running (i) and the fraction of it
 * left (f); with host-fed launches (eq. 8c) the host thread's issue order. */
typedef struct {
    const sim_placed_t *k;
    int n, i;
    double f, end;
    int first;       /* its items are issued before the other side's of the same rank */
    int other_items; /* the other side's start event, kernels and end event */
} side_t;

/*
 * Eq. 8c: the time the host thread has issued item r of a side (0 the start
 * event, 1..n its kernels, n + 1 its end event). One thread issues the two
 * sides' items in turn, the first side first, each taking host_ns; when one
 * side has issued all its items the other goes on alone.
 */
static double host_issue(const sim_physics_t *ph, const side_t *s, int r)
{
    int before = s->first ? r : r + 1;
    int other = before < s->other_items ? before : s->other_items;
    return (double)(r + 1 + other) * ph->host_ns;
}

/* When kernel i of side s can start: at once when the launches are queued on
 * the GPU, else once the host has issued it. */
static double side_ready(const sim_physics_t *ph, const side_t *s)
{
    return ph->launch == SIM_LAUNCH_HOST ? host_issue(ph, s, s->i + 1) : 0.0;
}

/* Advance side s by dt of a kernel whose state is st; t is the time after dt. */
static void side_advance(side_t *s, const sim_state_t *st, double dt, double dt_s, double t)
{
    if (dt_s <= dt) {
        s->i++;
        s->f = 1.0;
        if (s->i == s->n)
            s->end = t;
    } else {
        s->f -= dt / st->t_ns;
    }
}

/* Eq. 8 for sides sd[0..2): the running kernels share the memory system until
 * the first finishes or a waiting side's launch arrives. */
static void coexec_sides(const psi_gpu_t *g, const sim_physics_t *ph, side_t *sd)
{
    double t = 0.0;
    while (sd[0].i < sd[0].n || sd[1].i < sd[1].n) {
        const sim_placed_t *run[2];
        double dram[2], dts[2] = {INFINITY, INFINITY}, next = INFINITY;
        sim_state_t st[2] = {{0}};
        int slot[2] = {-1, -1}, n = 0;
        for (int s = 0; s < 2; s++) {
            if (sd[s].i >= sd[s].n)
                continue;
            double ready = side_ready(ph, &sd[s]);
            if (ready > t) {
                next = ready < next ? ready : next;
                continue;
            }
            slot[s] = n;
            run[n++] = &sd[s].k[sd[s].i];
        }
        for (int s = 0; s < 2; s++)
            if (slot[s] >= 0)
                dram[slot[s]] =
                    slot[1 - s] >= 0 ? dram_beside(g, ph, run[slot[s]], run[slot[1 - s]]) : run[slot[s]]->k->dram_bytes;
        if (n > 0)
            solve_latency(g, ph, &(sim_running_t){.n = n, .pk = run, .dram = dram, .gap = ph->gap_ns, .st = st});
        for (int s = 0; s < 2; s++)
            if (slot[s] >= 0)
                dts[s] = sd[s].f * st[slot[s]].t_ns;
        double dt = dts[0] < dts[1] ? dts[0] : dts[1];
        if (next - t < dt) { /* a launch arrives first: run up to it exactly */
            dt = next - t;
            t = next;
        } else {
            t += dt;
        }
        for (int s = 0; s < 2; s++)
            if (slot[s] >= 0)
                side_advance(&sd[s], &st[slot[s]], dt, dts[s], t);
    }
}

/*
 * Eq. 8: the event-driven fluid model. Each side runs its kernels in order,
 * each after a launch gap (the measured latency includes it, the standalone
 * sum of device times does not);
 * at every instant the two running kernels progress at rate 1/T under the
 * shared latency solved for both, and the next event is the first kernel to
 * finish. A side whose kernels are all done leaves the other running alone.
 * Eq. 8c: with host-fed launches a kernel starts only once the host thread
 * has issued it, and a side's time runs from its start event to its end
 * event (which waits for its last kernel and for its own issue).
 */
sim_coexec_t psi_sim_coexec(const psi_gpu_t *g, const sim_physics_t *ph, const sim_placed_t *a, int na,
                            const sim_placed_t *b, int nb)
{
    side_t sd[2] = {{.k = a, .n = na, .f = 1.0, .first = 1, .other_items = nb > 0 ? nb + 2 : 0},
                    {.k = b, .n = nb, .f = 1.0, .first = 0, .other_items = na > 0 ? na + 2 : 0}};
    coexec_sides(g, ph, sd);
    sim_coexec_t r;
    double *out[2] = {&r.a_ns, &r.b_ns};
    for (int s = 0; s < 2; s++) {
        *out[s] = sd[s].n > 0 ? sd[s].end : 0.0;
        if (ph->launch == SIM_LAUNCH_HOST && sd[s].n > 0) {
            double end_issue = host_issue(ph, &sd[s], sd[s].n + 1);
            *out[s] = (sd[s].end > end_issue ? sd[s].end : end_issue) - host_issue(ph, &sd[s], 0);
        }
    }
    return r;
}
