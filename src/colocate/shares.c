/*
 * Shares (`colocate shares`, POST /v1/colocate/shares): each workload's MPS
 * active-thread percentage for a set of workloads on one GPU.
 *
 * Every candidate split is one co-location of the set at those shares,
 * predicted as `colocate predict` predicts it (psi_cl_model_slots: a
 * per-workload kind's own slots, a sum kind's sum split in proportion to
 * the workloads' solo throughputs at their shares). A workload's
 * normalised throughput is its predicted throughput over its exclusive
 * throughput (workloads.csv), as placement scores it; the objective is
 *
 *     sum:       sum_i norm_i
 *     min:       min_i norm_i
 *     weighted:  sum_i weight_i norm_i
 *
 * maximised over the candidates that meet every floor (norm_i >= floor_i)
 * and latency SLO (batch_i / tput_i x 1000 <= slo_i ms). Ties go to the
 * smaller share total (it leaves the GPU more room), then to the first
 * candidate met. docs/colocate.md.
 */
#include "colocate/colocate.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ps_coloc_shares_params_t ps_coloc_shares_default_params(void)
{
    ps_coloc_shares_params_t p;
    memset(&p, 0, sizeof p);
    p.step = 10;
    p.max_total = 100;
    p.objective = PS_SHARES_SUM;
    for (int i = 0; i < PS_SHARES_MAXK; i++) {
        p.weight[i] = 1;
        p.floor[i] = NAN;
        p.slo_ms[i] = NAN;
    }
    return p;
}

/* The batch of a workload id: its "_batch<n>", 1 without one (as `colocate
 * predict --as time`). */
static double id_batch(const char *name)
{
    const char *b = strstr(name, "_batch");
    long v = b ? strtol(b + 6, NULL, 10) : 0;
    return v > 0 ? (double)v : 1;
}

/* The candidates of the grid into cand (room for PS_SHARES_MAXCAND), their
 * count into *n; PS_E_ARG when the grid is larger. */
static int grid(int k, int step, int max_total, int (*cand)[PS_SHARES_MAXK], int *n)
{
    int idx[PS_SHARES_MAXK], levels = 100 / step;
    for (int i = 0; i < k; i++)
        idx[i] = 1;
    *n = 0;
    for (;;) {
        int total = 0;
        for (int i = 0; i < k; i++)
            total += idx[i] * step;
        if (total <= max_total) {
            if (*n == PS_SHARES_MAXCAND)
                return psi_error(PS_E_ARG,
                                 "shares: the grid of step %d for %d workloads has more than %d candidates: raise "
                                 "step or give candidates",
                                 step, k, PS_SHARES_MAXCAND);
            for (int i = 0; i < k; i++)
                cand[*n][i] = idx[i] * step;
            ++*n;
        }
        int i = k - 1;
        while (i >= 0 && ++idx[i] > levels)
            idx[i--] = 1;
        if (i < 0)
            return 0;
    }
}

static int check_params(const ps_coloc_shares_params_t *p, const char *const *names, int k)
{
    if (k < 2 || k > PS_SHARES_MAXK)
        return psi_error(PS_E_ARG, "shares: a set of %d workloads: 2..%d", k, PS_SHARES_MAXK);
    for (int i = 0; i < k; i++) {
        if (!names[i] || !*names[i])
            return psi_error(PS_E_ARG, "shares: workload %d of the set: empty name", i + 1);
    }
    if (p->step < 1 || p->step > 100)
        return psi_error(PS_E_ARG, "shares: step %d outside 1..100", p->step);
    if (p->max_total < 2 || p->max_total > 100 * k)
        return psi_error(PS_E_ARG, "shares: max_total %d outside 2..%d (100 per workload)", p->max_total, 100 * k);
    if (p->n_candidates < 0 || p->n_candidates > PS_SHARES_MAXCAND)
        return psi_error(PS_E_ARG, "shares: %d candidates: 0..%d", p->n_candidates, PS_SHARES_MAXCAND);
    for (int c = 0; c < p->n_candidates; c++) {
        int total = 0;
        for (int i = 0; i < k; i++) {
            if (p->candidates[c][i] < 1 || p->candidates[c][i] > 100)
                return psi_error(PS_E_ARG, "shares: candidate %d: share %d of '%s' outside 1..100", c + 1,
                                 p->candidates[c][i], names[i]);
            total += p->candidates[c][i];
        }
        if (total > p->max_total)
            return psi_error(PS_E_ARG, "shares: candidate %d sums to %d, above max_total %d", c + 1, total,
                             p->max_total);
    }
    for (int i = 0; i < k; i++)
        if (!(p->weight[i] >= 0) || !(isnan(p->floor[i]) || p->floor[i] >= 0) ||
            !(isnan(p->slo_ms[i]) || p->slo_ms[i] > 0))
            return psi_error(PS_E_ARG, "shares: '%s': weights and floors must be >= 0, SLOs > 0", names[i]);
    return PS_OK;
}

/* Candidate table: candidates 0..n-1, then the uniform split and 100 each. */
static int build_query(const char *gpu, const char *const *names, int k, int (*cand)[PS_SHARES_MAXK], int n,
                       ps_colocations_t **out)
{
    ps_colocations_t *q = ps_colocations_new();
    int err = q ? PS_OK : psi_error(PS_E_NOMEM, "out of memory");
    char id[32];
    for (int c = 0; c < n + 2 && !err; c++) {
        snprintf(id, sizeof id, "shares/%d", c);
        for (int i = 0; i < k && !err; i++) {
            int s = c < n ? cand[c][i] : c == n ? 100 / k : 100;
            ps_colocation_row_t row = {
                .colocation = id, .gpu = gpu, .slot = i + 1, .workload = names[i], .share_pct = s, .tput = NAN};
            err = ps_colocations_append(q, &row);
        }
    }
    if (err)
        ps_colocations_free(q);
    *out = err ? NULL : q;
    return err;
}

static void score(const ps_coloc_shares_params_t *p, int k, const double *excl, const double *batch,
                  ps_coloc_split_t *s)
{
    double sum = 0, wsum = 0, mn = INFINITY;
    s->feasible = 1;
    for (int i = 0; i < k; i++) {
        s->norm[i] = s->tput[i] / excl[i];
        s->latency_ms[i] = s->tput[i] > 0 ? batch[i] / s->tput[i] * 1000 : INFINITY;
        sum += s->norm[i];
        wsum += p->weight[i] * s->norm[i];
        mn = fmin(mn, s->norm[i]);
        if (!(s->norm[i] >= p->floor[i]) && !isnan(p->floor[i]))
            s->feasible = 0;
        if (!(s->latency_ms[i] <= p->slo_ms[i]) && !isnan(p->slo_ms[i]))
            s->feasible = 0;
        if (!isfinite(s->norm[i]))
            s->feasible = 0;
    }
    s->objective = p->objective == PS_SHARES_MIN ? mn : p->objective == PS_SHARES_WEIGHTED ? wsum : sum;
}

static int total_share(const ps_coloc_split_t *s, int k)
{
    int t = 0;
    for (int i = 0; i < k; i++)
        t += s->share[i];
    return t;
}

/* Why nothing is feasible: the first constraint that no candidate meets
 * on its own, else "jointly". */
static void diagnose(const ps_coloc_shares_params_t *p, int k, const ps_coloc_split_t *all, int n,
                     ps_coloc_shares_t *out)
{
    out->failing = -1;
    out->constraint = "jointly";
    out->failing_best = NAN;
    for (int i = 0; i < k; i++) {
        double best_norm = -INFINITY, best_lat = INFINITY;
        for (int c = 0; c < n; c++) {
            best_norm = fmax(best_norm, all[c].norm[i]);
            best_lat = fmin(best_lat, all[c].latency_ms[i]);
        }
        if (!isnan(p->floor[i]) && !(best_norm >= p->floor[i])) {
            out->failing = i;
            out->constraint = "floor";
            out->failing_best = best_norm;
            return;
        }
        if (!isnan(p->slo_ms[i]) && !(best_lat <= p->slo_ms[i])) {
            out->failing = i;
            out->constraint = "slo";
            out->failing_best = best_lat;
            return;
        }
    }
}

/* Predict every split of q's co-locations into all[0..n+1] (the last two:
 * uniform, 100 each). */
static int predict_all(const ps_coloc_model_t *m, const cl_data_t *d, int k, int (*cand)[PS_SHARES_MAXK], int n,
                       ps_coloc_split_t *all)
{
    double slot[64];
    for (int ci = 0; ci < d->nc; ci++) {
        int c = atoi(d->c[ci].id + strlen("shares/")); /* its row of all[] */
        int rc = c >= 0 && c < n + 2 ? psi_cl_model_slots(m, d, ci, slot) : psi_error(PS_E_INPUT, "shares: bad id");
        if (rc)
            return rc;
        for (int i = 0; i < k; i++) {
            all[c].share[i] = c < n ? cand[c][i] : c == n ? 100 / k : 100;
            all[c].tput[i] = fmax(0, slot[i]);
        }
    }
    return PS_OK;
}

static void choose(const ps_coloc_shares_params_t *p, int k, ps_coloc_split_t *all, int n, ps_coloc_shares_t *out)
{
    int best = -1;
    for (int c = 0; c < n; c++) {
        if (!all[c].feasible)
            continue;
        out->n_feasible++;
        if (best < 0 || all[c].objective > all[best].objective + 1e-12 ||
            (all[c].objective > all[best].objective - 1e-12 && total_share(&all[c], k) < total_share(&all[best], k)))
            best = c;
    }
    for (int i = 0; i < k; i++) {
        out->slo_min_share[i] = 0;
        for (int c = 0; c < n && !isnan(p->slo_ms[i]); c++)
            if (all[c].latency_ms[i] <= p->slo_ms[i] &&
                (!out->slo_min_share[i] || all[c].share[i] < out->slo_min_share[i]))
                out->slo_min_share[i] = all[c].share[i];
    }
    out->feasible = best >= 0;
    if (best >= 0)
        out->best = all[best];
    else
        diagnose(p, k, all, n, out);
}

int ps_coloc_shares(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling, const char *gpu,
                    const char *const *workloads, int k, const ps_coloc_shares_params_t *p, ps_coloc_shares_t *out)
{
    if (!m || !w || !gpu || !workloads || !out)
        return psi_error(PS_E_ARG, "ps_coloc_shares: NULL argument");
    memset(out, 0, sizeof *out);
    ps_coloc_shares_params_t def = ps_coloc_shares_default_params();
    if (!p)
        p = &def;
    int rc = check_params(p, workloads, k);
    if (rc)
        return rc;
    for (int i = 0; i < k; i++)
        if (isnan(ps_coloc_solo(w, scaling, gpu, workloads[i], 100)))
            return psi_error(PS_E_INPUT, "shares: workload '%s' (gpu %s) is not in workloads.csv", workloads[i], gpu);
    int(*cand)[PS_SHARES_MAXK] = psi_malloc(sizeof(int[PS_SHARES_MAXCAND][PS_SHARES_MAXK]));
    ps_coloc_split_t *all = psi_calloc(PS_SHARES_MAXCAND + 2, sizeof *all);
    int n = p->n_candidates;
    if (!cand || !all)
        rc = PS_E_NOMEM;
    else if (n)
        memcpy(cand, p->candidates, (size_t)n * sizeof *cand);
    else
        rc = grid(k, p->step, p->max_total, cand, &n);
    ps_colocations_t *q = NULL;
    cl_data_t *d = NULL;
    if (!rc)
        rc = build_query(gpu, workloads, k, cand, n, &q);
    if (!rc)
        rc = psi_cl_data_build(w, scaling, q, NULL, &d);
    if (!rc)
        rc = predict_all(m, d, k, cand, n, all);
    if (!rc) {
        double excl[PS_SHARES_MAXK], batch[PS_SHARES_MAXK];
        for (int i = 0; i < k; i++) {
            excl[i] = d->w[d->c[0].w[i]].f[CW_EXCL];
            batch[i] = id_batch(workloads[i]);
        }
        for (int c = 0; c < n + 2; c++)
            score(p, k, excl, batch, &all[c]);
        out->k = k;
        out->n_candidates = n;
        out->uniform = all[n];
        out->full = all[n + 1];
        unsigned ks = ps_coloc_model_ks(m);
        out->k_trained = !ks || (ks >> (k < 31 ? k : 31) & 1);
        choose(p, k, all, n, out);
    }
    psi_cl_data_free(d);
    ps_colocations_free(q);
    free(cand);
    free(all);
    return rc;
}
