/*
 * k processes under MPS on all SMs (mps.h; docs/simulator.md, eq. 13-15).
 *
 * Eq. 13: process q's host thread launches its kernels one after another,
 * each costing launch_ns, the first after q x stagger_ns; kernel i starts at
 * max(end of kernel i - 1, q stagger + (i + 1) launch).
 * Eq. 14: the running kernels share the SMs. A grid of C blocks asks for
 * d = min(S, C) SMs; when the demands of the running kernels exceed
 * S (1 + sm_pack), each gets d S (1 + sm_pack) / sum d, and runs as it would
 * on that many SMs alone (eq. 1-4, at the nearest TPC count). sm_pack = 0
 * is strict sharing; larger values let blocks of different kernels fill the
 * same SMs without slowing each other.
 * Eq. 5-7 as for two streams: the running kernels share the memory latency,
 * the L2 bandwidth and the L2 capacity (a kernel's co-runners insert lines at
 * the sum of their DRAM rates).
 * Eq. 15: the makespan is the last process's end plus start_ns.
 */
#include "simulate/mps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MPS_MAX 8

sim_mps_params_t psi_sim_mps_default(void)
{
    sim_physics_t ph = psi_sim_physics_default();
    sim_mps_params_t p = {
        .launch_ns = ph.host_ns, .start_ns = ph.dispatch_ns, .stagger_ns = 0.0, .sm_pack = 0.0, .flop_scale = 1.0};
    return p;
}

int psi_sim_mps_model_init(sim_mps_model_t *m, const psi_gpu_t *g, const sim_kernel_t *k, int n)
{
    memset(m, 0, sizeof *m);
    size_t cells = (size_t)(n > 0 ? n : 1) * (size_t)g->tpcs;
    m->pl = psi_malloc(cells * sizeof *m->pl);
    m->alone_ns = psi_calloc(cells, sizeof *m->alone_ns);
    if (!m->pl || !m->alone_ns) {
        psi_sim_mps_model_free(m);
        return PS_E_NOMEM;
    }
    m->g = g;
    m->k = k;
    m->n = n;
    return PS_OK;
}

void psi_sim_mps_model_free(sim_mps_model_t *m)
{
    if (!m)
        return;
    free(m->pl);
    free(m->alone_ns);
    m->pl = NULL;
    m->alone_ns = NULL;
}

/* Kernel i of m placed on tpcs TPCs, and its duration alone there. */
static const sim_placed_t *placed(sim_mps_model_t *m, const sim_physics_t *ph, int i, int tpcs, double *alone)
{
    size_t j = (size_t)i * (size_t)m->g->tpcs + (size_t)(tpcs - 1);
    if (m->alone_ns[j] == 0) {
        psi_sim_place(m->g, &m->k[i], tpcs, &m->pl[j]);
        sim_state_t st;
        const sim_placed_t *one = &m->pl[j];
        double d = m->k[i].dram_bytes;
        psi_sim_share_solve(m->g, ph, &(sim_running_t){.n = 1, .pk = &one, .dram = &d, .gap = ph->gap_ns, .st = &st});
        m->alone_ns[j] = st.t_ns > 0 ? st.t_ns : 1e-3;
    }
    *alone = m->alone_ns[j];
    return &m->pl[j];
}

typedef struct {
    const sim_mps_seg_t *s;
    int i;    /* next kernel of the segment */
    double f; /* share of kernel i left */
    double t0, end;
} proc_t;

/* Eq. 14: the TPC count of each of the n running kernels. */
static void sm_shares(const psi_gpu_t *g, const sim_mps_params_t *p, const sim_kernel_t *const *k, int n, int *tpcs)
{
    double d[MPS_MAX], tot = 0;
    for (int j = 0; j < n; j++) {
        double c = k[j]->ctas < 1.0 ? 1.0 : k[j]->ctas;
        d[j] = c < g->sms ? c : (double)g->sms;
        tot += d[j];
    }
    double cap = g->sms * (1.0 + p->sm_pack), sc = n > 1 && tot > cap ? cap / tot : 1.0;
    for (int j = 0; j < n; j++) {
        long t = lround(d[j] * sc / 2.0);
        tpcs[j] = t < 1 ? 1 : t > g->tpcs ? g->tpcs : (int)t;
    }
}

/* Durations tn[0..n) of the running kernels of processes run[0..n) at this
 * instant (eq. 5-7, 14). */
static void durations(const sim_physics_t *ph, const sim_mps_params_t *p, proc_t *pr, const int *run, int n, double *tn)
{
    const sim_kernel_t *k[MPS_MAX];
    const sim_placed_t *pk[MPS_MAX];
    int tpcs[MPS_MAX];
    const psi_gpu_t *g = pr[run[0]].s->m->g;
    for (int j = 0; j < n; j++)
        k[j] = &pr[run[j]].s->m->k[pr[run[j]].s->start + pr[run[j]].i];
    sm_shares(g, p, k, n, tpcs);
    for (int j = 0; j < n; j++)
        pk[j] = placed(pr[run[j]].s->m, ph, pr[run[j]].s->start + pr[run[j]].i, tpcs[j], &tn[j]);
    if (n == 1)
        return;
    double dram[MPS_MAX], rates = 0;
    sim_state_t st[MPS_MAX];
    for (int j = 0; j < n; j++)
        rates += pk[j]->rate_solo;
    for (int j = 0; j < n; j++)
        dram[j] = psi_sim_dram_beside_rate(g, ph, pk[j], rates - pk[j]->rate_solo);
    psi_sim_share_solve(g, ph, &(sim_running_t){.n = n, .pk = pk, .dram = dram, .gap = ph->gap_ns, .st = st});
    for (int j = 0; j < n; j++)
        tn[j] = st[j].t_ns > 0 ? st[j].t_ns : 1e-3;
}

/* One event of eq. 13-14 from time t; returns the time after it. */
static double step(const sim_physics_t *ph, const sim_mps_params_t *p, proc_t *pr, int k, double t)
{
    int run[MPS_MAX], n = 0;
    double next = INFINITY, tn[MPS_MAX];
    for (int q = 0; q < k; q++) {
        if (pr[q].i >= pr[q].s->len)
            continue;
        double ready = pr[q].t0 + (pr[q].i + 1) * p->launch_ns;
        if (ready > t)
            next = ready < next ? ready : next;
        else
            run[n++] = q;
    }
    if (n == 0)
        return next;
    durations(ph, p, pr, run, n, tn);
    double dt = INFINITY;
    for (int j = 0; j < n; j++)
        dt = fmin(dt, pr[run[j]].f * tn[j]);
    if (next - t < dt)
        dt = next - t;
    for (int j = 0; j < n; j++) {
        proc_t *q = &pr[run[j]];
        if (q->f * tn[j] <= dt * (1.0 + 1e-12)) {
            q->f = 1.0;
            if (++q->i == q->s->len)
                q->end = t + dt;
        } else {
            q->f -= dt / tn[j];
        }
    }
    return t + dt;
}

int psi_sim_mps_run(const sim_physics_t *ph, const sim_mps_params_t *p, const sim_mps_seg_t *seg, int k,
                    double *makespan_ns)
{
    proc_t pr[MPS_MAX];
    if (k < 1 || k > MPS_MAX)
        return psi_error(PS_E_ARG, "mps: %d processes (1 to %d)", k, MPS_MAX);
    int active = 0;
    for (int q = 0; q < k; q++) {
        if (seg[q].len > 0 && (seg[q].start < 0 || seg[q].start + seg[q].len > seg[q].m->n))
            return psi_error(PS_E_ARG, "mps: kernels [%d, %d) outside the model's %d", seg[q].start,
                             seg[q].start + seg[q].len, seg[q].m->n);
        pr[q] = (proc_t){.s = &seg[q], .f = 1.0, .t0 = active * p->stagger_ns};
        active += seg[q].len > 0;
    }
    double t = 0.0, end = 0.0;
    for (int q = 0; q < k; q++)
        while (pr[q].i < pr[q].s->len)
            t = step(ph, p, pr, k, t);
    for (int q = 0; q < k; q++)
        end = pr[q].end > end ? pr[q].end : end;
    *makespan_ns = end + p->start_ns;
    return PS_OK;
}
