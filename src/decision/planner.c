/*
 * The SLO-safe co-location planner (docs/planner.md, "Planner").
 *
 * The HP request (every operator of the HP model) is cut at boundaries every
 * u = W/2 operators (W the model window) into segments of 1, 2 or 4 units
 * (W/2, W or 2W operators; a segment longer than W is predicted by window
 * composition). A segment either runs alone on the whole GPU, costing A (its
 * operators' alone latencies; a run of consecutive alone segments costs the
 * fixed alone_run_ns once), or beside the next l operators of the LP stream
 * under an HP/LP split, costing t = max(U_hp, U_lp), the budgeted latency of
 * the step (upper bounds, or points); the LP work gained is the standalone
 * whole-GPU time of those l operators (l = ceil(h k / L), k = 1..L, for an HP
 * segment of h operators).
 *
 * Dynamic programming over the boundaries, for a price mu of HP time: the
 * state is (boundary i, whether an alone run is under way); its value is the
 * best sum over the steps so far of
 *     gain - (time_value + mu) (t - A),
 * carried with the cost (budget spent) and the LP position of its best path.
 * A co-run step to boundary j is admitted only under the guard
 *     C + t + sum_{segments after j} A + alone_run_ns <= budget,
 * an alone step always (the invariant C + rest(i) [+ alone_run_ns] <= budget
 * holds on every state, so every plan fits whenever HP alone does). Exact
 * when the predictions do not depend on the LP position and the guard never
 * binds (then mu = 0 is the unconstrained optimum and the other prices are
 * skipped); otherwise the prices of the grid are tried in ascending order
 * until two in a row do not improve the net LP work (net of time_value x
 * the HP time the co-runs add), and the best feasible plan is kept.
 *
 * Cost: at most 2 B 3 S L candidate predictions per price (B = 2K + 1
 * boundaries, S splits, L LP lengths); candidates met again at the same LP
 * position are predicted once.
 */
#include "decision/decision.h"

#include "common/common.h"
#include "model/model.h"
#include "profile/gpu.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double mu_grid[] = {0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 4.0, 8.0};
#define N_MU ((int)(sizeof mu_grid / sizeof mu_grid[0]))

/* Segment lengths in boundary units. */
static const int seg_units[] = {1, 2, 4};
#define N_SEG ((int)(sizeof seg_units / sizeof seg_units[0]))

ps_plan_params_t ps_plan_default_params(void)
{
    ps_plan_params_t p;
    memset(&p, 0, sizeof p);
    p.coverage = 0.95;
    p.lp_lengths = 4;
    return p;
}

void ps_plan_free(ps_plan_t *p)
{
    if (!p)
        return;
    free(p->steps);
    free(p);
}

/* A candidate's predicted latencies at the LP position it was predicted at;
 * two per (boundary, length, split, LP length), one per DP flag. */
typedef struct {
    int pos; /* -1: empty */
    double hp, lp;
} slot_t;

/* A DP state: best value, its cost, LP position, LP work and back pointer. */
typedef struct {
    int live;
    double value, cost, gain;
    int pos;
    int prev, prev_f, d, s, li, len; /* d < 0: alone step from prev */
    double hp, lp, t;
} state_t;

typedef struct {
    const ps_model_t *m;
    const ps_ops_t *ops;
    const ps_plan_params_t *p;
    const char *gpu;
    const psi_op_group_t *hg, *lg;
    int total, S, L, W, u, nb; /* nb boundaries at min(i u, n) */
    int *bpos;                 /* [nb] */
    double *acc;               /* [nb] alone latency of operators before boundary i */
    int *split;                /* [S] HP TPCs */
    double *lp_acc;            /* [lg->n_ops + 1] prefix sums of LP standalone whole-GPU ns */
    double *hp_solo;           /* [S * nb] HP standalone ns before boundary i on split s (floor) */
    double *lp_solo;           /* [S * (lg->n_ops + 1)] LP standalone prefix sums on split s's LP side */
    slot_t *cache;             /* [nb * N_SEG * S * L * 2] */
    state_t *st;               /* [nb * 2] */
    ps_query_t *q;             /* [N_SEG * S * L] */
    int *qi;
    double *qh, *ql;
    long n_pred;
    int guard_hit;
    int floor;       /* 1: a step's budgeted latencies are at least each side's standalone time on its
                        share, so a candidate whose floor already misses the guard or the state's
                        value is never predicted (the model path; a caller's predictor is taken as is) */
    double deadline; /* psi_now() past which planning stops (0: none) */
    double budget;   /* budget_ns, or slo_factor x the alone estimate */
    /* The model path: window pairs through the model's memo, across plans. */
    psi_pair_ctx_t pairs;
} planner_t;

static void planner_free(planner_t *pl)
{
    free(pl->bpos);
    free(pl->acc);
    free(pl->split);
    free(pl->lp_acc);
    free(pl->hp_solo);
    free(pl->lp_solo);
    free(pl->cache);
    free(pl->st);
    free(pl->q);
    free(pl->qi);
    free(pl->qh);
    free(pl->ql);
}

static int end_of(const planner_t *pl, int i, int d) { return i + d < pl->nb ? i + d : pl->nb - 1; }

static int lp_len_of(const planner_t *pl, int h, int li, int pos)
{
    int l = (h * (li + 1) + pl->L - 1) / pl->L;
    int left = pl->lg->n_ops - pos;
    return l < left ? l : left;
}

static double lp_gain(const planner_t *pl, int pos, int len) { return pl->lp_acc[pos + len] - pl->lp_acc[pos]; }

/* What the plan still needs after boundary j: the alone latency of the rest,
 * and one alone run's fixed cost unless nothing is left. */
static double need_after(const planner_t *pl, int j)
{
    double rest = pl->acc[pl->nb - 1] - pl->acc[j];
    return j < pl->nb - 1 ? rest + pl->p->alone_run_ns : rest;
}

/* The standalone times of a co-run step's sides on their shares: HP
 * boundaries i..j on split s, LP operators [pos, pos + len) beside it. */
static double hp_floor(const planner_t *pl, int s, int i, int j)
{
    const double *a = pl->hp_solo + (size_t)s * (size_t)pl->nb;
    return a[j] - a[i];
}

static double lp_floor(const planner_t *pl, int s, int pos, int len)
{
    const double *a = pl->lp_solo + (size_t)s * (size_t)(pl->lg->n_ops + 1);
    return a[pos + len] - a[pos];
}

/* A co-run candidate out of a state: the HP segment from boundary i to j on
 * split s, beside the next len LP operators. */
typedef struct {
    int i, j, s, len;
} cand_t;

/* Whether candidate c out of state from can be skipped before it is
 * predicted: its floor misses the guard (*guard set) or cannot beat, at
 * price lambda, the value state (j, 0) already holds. */
static int skip_by_floor(const planner_t *pl, const state_t *from, const cand_t *c, double lambda, int *guard)
{
    if (!pl->floor)
        return 0;
    double lo_h = hp_floor(pl, c->s, c->i, c->j), lo_l = lp_floor(pl, c->s, from->pos, c->len);
    double lo = lo_h > lo_l ? lo_h : lo_l;
    if (from->cost + lo > pl->budget - need_after(pl, c->j)) {
        *guard = 1;
        return 1;
    }
    const state_t *t = &pl->st[2 * c->j];
    double best = from->value + lp_gain(pl, from->pos, c->len) - lambda * (lo - (pl->acc[c->j] - pl->acc[c->i]));
    return t->live && best < t->value - 1e-9 * fabs(t->value) - 1e-9;
}

static int model_predict(const planner_t *pl, const ps_query_t *q, size_t n, double *hp, double *lp)
{
    if (pl->p->predict)
        return pl->p->predict(pl->p->predict_user, q, n, hp, lp);
    return psi_model_predict_memo(&pl->pairs, q, n, hp, lp);
}

static slot_t *slot(const planner_t *pl, int i, int di, int s, int li, int f)
{
    return &pl->cache[((((size_t)i * N_SEG + (size_t)di) * (size_t)pl->S + (size_t)s) * (size_t)pl->L + (size_t)li) *
                          2 +
                      (size_t)f];
}

/* The slot holding candidate (i, di, s, li) at LP position pos, or NULL. */
static const slot_t *cached(const planner_t *pl, int i, int di, int s, int li, int pos)
{
    for (int f = 0; f < 2; f++) {
        const slot_t *c = slot(pl, i, di, s, li, f);
        if (c->pos == pos)
            return c;
    }
    return NULL;
}

/* Make sure every candidate out of state (i, f) at price lambda is predicted
 * (into the slots of flag f when new), but those its floor rules out. */
static int fill(planner_t *pl, int i, int f, double lambda)
{
    const state_t *from = &pl->st[2 * i + f];
    int n = 0, pos = from->pos, guard = 0;
    for (int di = 0; di < N_SEG; di++) {
        int j = end_of(pl, i, seg_units[di]);
        if (j == i || (di > 0 && j == end_of(pl, i, seg_units[di - 1])))
            continue;
        for (int s = 0; s < pl->S; s++)
            for (int li = 0; li < pl->L; li++) {
                int h = pl->bpos[j] - pl->bpos[i];
                if (cached(pl, i, di, s, li, pos) ||
                    skip_by_floor(pl, from, &(cand_t){i, j, s, lp_len_of(pl, h, li, pos)}, lambda, &guard))
                    continue;
                pl->q[n] = (ps_query_t){.gpu = pl->gpu,
                                        .hp_model = pl->p->hp_model,
                                        .hp_batch = pl->p->hp_batch,
                                        .hp_start = pl->bpos[i],
                                        .hp_len = h,
                                        .lp_model = pl->p->lp_model,
                                        .lp_batch = pl->p->lp_batch,
                                        .lp_start = pos,
                                        .lp_len = lp_len_of(pl, h, li, pos),
                                        .hp_tpcs = pl->split[s],
                                        .lp_tpcs = pl->total - pl->split[s]};
                pl->qi[n++] = ((di * pl->S + s) * pl->L + li);
            }
    }
    if (n == 0)
        return PS_OK;
    int rc = model_predict(pl, pl->q, (size_t)n, pl->qh, pl->ql);
    if (rc != PS_OK)
        return rc;
    pl->n_pred += n;
    for (int k = 0; k < n; k++) {
        int li = pl->qi[k] % pl->L, s = pl->qi[k] / pl->L % pl->S, di = pl->qi[k] / (pl->L * pl->S);
        *slot(pl, i, di, s, li, f) = (slot_t){.pos = pos, .hp = pl->qh[k], .lp = pl->ql[k]};
    }
    return PS_OK;
}

static void relax(planner_t *pl, int j, int f, const state_t *c)
{
    state_t *t = &pl->st[2 * j + f];
    if (!t->live || c->value > t->value + 1e-9 * fabs(t->value) ||
        (fabs(c->value - t->value) <= 1e-9 * fabs(t->value) && c->cost < t->cost))
        *t = *c;
}

/* The co-run steps out of state (i, f) at price lambda (time_value + mu). */
static void corun_steps(planner_t *pl, int i, int f, double lambda)
{
    const state_t *from = &pl->st[2 * i + f];
    for (int di = 0; di < N_SEG; di++) {
        int j = end_of(pl, i, seg_units[di]);
        if (j == i || (di > 0 && j == end_of(pl, i, seg_units[di - 1])))
            continue;
        double a = pl->acc[j] - pl->acc[i], keep = pl->budget - need_after(pl, j);
        for (int s = 0; s < pl->S; s++)
            for (int li = 0; li < pl->L; li++) {
                int len = lp_len_of(pl, pl->bpos[j] - pl->bpos[i], li, from->pos);
                if (skip_by_floor(pl, from, &(cand_t){i, j, s, len}, lambda, &pl->guard_hit))
                    continue;
                const slot_t *c = cached(pl, i, di, s, li, from->pos);
                if (!c)
                    continue; /* ruled out by its floor when the boundary was filled */
                double hp = c->hp, lp = c->lp;
                if (pl->floor) {
                    double lo_h = hp_floor(pl, s, i, j), lo_l = lp_floor(pl, s, from->pos, len);
                    hp = hp > lo_h ? hp : lo_h;
                    lp = lp > lo_l ? lp : lo_l;
                }
                double t = hp > lp ? hp : lp;
                if (!(t > 0))
                    continue;
                if (from->cost + t > keep) {
                    pl->guard_hit = 1;
                    continue;
                }
                double g = lp_gain(pl, from->pos, len);
                int np = from->pos + len;
                state_t n = {.live = 1,
                             .value = from->value + g - lambda * (t - a),
                             .cost = from->cost + t,
                             .gain = from->gain + g,
                             .pos = np >= pl->lg->n_ops ? 0 : np,
                             .prev = i,
                             .prev_f = f,
                             .d = di,
                             .s = s,
                             .li = li,
                             .len = len,
                             .hp = hp,
                             .lp = lp,
                             .t = t};
                relax(pl, j, 0, &n);
            }
    }
}

/* One DP pass at price mu; the best final state into *end (index 2 i + f). */
static int pass(planner_t *pl, double mu, int *end)
{
    double lambda = pl->p->time_value + mu;
    for (int k = 0; k < 2 * pl->nb; k++)
        pl->st[k].live = 0;
    pl->st[0] = (state_t){.live = 1, .pos = pl->p->lp_start % pl->lg->n_ops, .prev = -1};
    pl->guard_hit = 0;
    for (int i = 0; i + 1 < pl->nb; i++)
        for (int f = 0; f < 2; f++) {
            const state_t *from = &pl->st[2 * i + f];
            if (!from->live)
                continue;
            if (pl->deadline > 0 && psi_now() > pl->deadline)
                return psi_error(PS_E_INPUT, "planning stopped at its time limit of %g s (time_limit_s)",
                                 pl->p->time_limit_s);
            int rc = fill(pl, i, f, lambda);
            if (rc != PS_OK)
                return rc;
            corun_steps(pl, i, f, lambda);
            double ar = f ? 0 : pl->p->alone_run_ns, a = pl->acc[i + 1] - pl->acc[i];
            state_t n = *from;
            n.value -= lambda * ar;
            n.cost += a + ar;
            n.prev = i;
            n.prev_f = f;
            n.d = -1;
            n.t = a + ar;
            relax(pl, i + 1, 1, &n);
        }
    int last = pl->nb - 1;
    const state_t *s0 = &pl->st[2 * last], *s1 = &pl->st[2 * last + 1];
    *end = !s0->live || (s1->live && s1->value > s0->value) ? 2 * last + 1 : 2 * last;
    return PS_OK;
}

static int check_params(const planner_t *pl, const ps_model_t *m, const ps_ops_t *ops, const ps_plan_params_t *p)
{
    if (!ops || !p->hp_model || !p->lp_model || !pl->gpu || (!m && !p->predict))
        return psi_error(PS_E_ARG, "ps_plan: needs ops, both models, and a model or a predictor with a GPU");
    if (p->slo_factor > 0 ? !(p->slo_factor >= 1 && p->slo_factor <= 100) || p->budget_ns != 0
                          : !(p->budget_ns > 0) || !isfinite(p->budget_ns))
        return psi_error(PS_E_ARG, "give the budget in ns (a positive number) or slo_factor in 1..100, not both");
    if (!(p->time_limit_s >= 0) || !isfinite(p->time_limit_s))
        return psi_error(PS_E_ARG, "time_limit_s must be 0 (none) or a number of seconds");
    if (!p->predict && p->coverage > 0 && !(p->coverage >= 0.5 && p->coverage <= 0.999))
        return psi_error(PS_E_ARG, "coverage %g is outside 0.5..0.999", p->coverage);
    if (p->lp_lengths < 1 || p->lp_lengths > 8 || p->window < 0 || p->window > 64 || p->lp_start < 0 ||
        !(p->alone_run_ns >= 0) || !(p->time_value >= 0))
        return psi_error(PS_E_ARG, "lp_lengths 1..8, window 0..64, lp_start, alone_run_ns and time_value >= 0");
    return PS_OK;
}

/* Boundaries, alone latencies and LP work (setup's second half). */
static int setup_tables(planner_t *pl, int kt_h, int kt_l)
{
    const ps_plan_params_t *p = pl->p;
    int n = pl->hg->n_ops, nl = pl->lg->n_ops;
    /* The LP stream stands at one of its operators; a start past the last
     * was taken modulo the count, a silent wrap round the model. */
    if (p->lp_start >= nl)
        return psi_error(PS_E_ARG, "lp_start %d is outside %s's %d operators (0..%d)", p->lp_start, p->lp_model, nl,
                         nl - 1);
    pl->u = pl->W / 2 > 0 ? pl->W / 2 : 1;
    pl->nb = (n + pl->u - 1) / pl->u + 1;
    pl->bpos = psi_malloc((size_t)pl->nb * sizeof(int));
    pl->acc = psi_malloc((size_t)pl->nb * sizeof(double));
    pl->lp_acc = psi_malloc((size_t)(nl + 1) * sizeof(double));
    if (!pl->bpos || !pl->acc || !pl->lp_acc)
        return PS_E_NOMEM;
    double t = 0;
    for (int i = 0, op = 0; i < pl->nb; i++) {
        pl->bpos[i] = i * pl->u < n ? i * pl->u : n;
        for (; op < pl->bpos[i]; op++)
            t += p->alone_op_ns ? p->alone_op_ns[op]
                                : pl->hg->duration_ns[(size_t)op * (size_t)pl->hg->n_tpcs + (size_t)kt_h];
        if (!(t >= 0))
            return psi_error(PS_E_INPUT, "%s: no alone latency for operators before %d", p->hp_model, pl->bpos[i]);
        pl->acc[i] = t;
    }
    pl->lp_acc[0] = 0;
    for (int j = 0; j < nl; j++) {
        double w = pl->lg->duration_ns[(size_t)j * (size_t)pl->lg->n_tpcs + (size_t)kt_l];
        pl->lp_acc[j + 1] = pl->lp_acc[j] + (w >= 0 ? w : 0);
    }
    return PS_OK;
}

/* Each side's standalone prefix sums on every split's share: the floors of
 * a co-run step (a side co-running on its share is no faster than alone on
 * it). Without a duration on a share, its floor is 0. */
static int setup_floors(planner_t *pl)
{
    int nl = pl->lg->n_ops;
    pl->hp_solo = psi_malloc((size_t)pl->S * (size_t)pl->nb * sizeof(double));
    pl->lp_solo = psi_malloc((size_t)pl->S * (size_t)(nl + 1) * sizeof(double));
    if (!pl->hp_solo || !pl->lp_solo)
        return PS_E_NOMEM;
    for (int s = 0; s < pl->S; s++) {
        int kh = psi_group_tpcs_index(pl->hg, pl->split[s]),
            kl = psi_group_tpcs_index(pl->lg, pl->total - pl->split[s]);
        double *h = pl->hp_solo + (size_t)s * (size_t)pl->nb, *l = pl->lp_solo + (size_t)s * (size_t)(nl + 1), t = 0;
        for (int i = 0, op = 0; i < pl->nb; i++) {
            for (; op < pl->bpos[i]; op++) {
                double d = pl->hg->duration_ns[(size_t)op * (size_t)pl->hg->n_tpcs + (size_t)kh];
                t += d > 0 ? d : 0;
            }
            h[i] = t;
        }
        l[0] = 0;
        for (int j = 0; j < nl; j++) {
            double d = pl->lg->duration_ns[(size_t)j * (size_t)pl->lg->n_tpcs + (size_t)kl];
            l[j + 1] = l[j] + (d > 0 ? d : 0);
        }
    }
    return PS_OK;
}

/* Splits (HP TPC counts both sides were profiled at) and the work arrays. */
static int setup_splits(planner_t *pl)
{
    pl->split = psi_malloc((size_t)pl->hg->n_tpcs * sizeof(int));
    if (!pl->split)
        return PS_E_NOMEM;
    for (int i = 0; i < pl->hg->n_tpcs; i++) {
        int t = pl->hg->tpcs[i];
        if (t >= 1 && t < pl->total && psi_group_tpcs_index(pl->lg, pl->total - t) >= 0 && pl->S < 64)
            pl->split[pl->S++] = t;
    }
    if (pl->S == 0)
        return psi_error(PS_E_INPUT, "no SM split has a standalone profile of both %s and %s", pl->p->hp_model,
                         pl->p->lp_model);
    int rc = setup_floors(pl);
    if (rc != PS_OK)
        return rc;
    size_t nq = (size_t)N_SEG * (size_t)pl->S * (size_t)pl->L, nc = (size_t)pl->nb * nq * 2;
    pl->cache = psi_malloc(nc * sizeof *pl->cache);
    pl->st = psi_malloc(2 * (size_t)pl->nb * sizeof *pl->st);
    pl->q = psi_malloc(nq * sizeof *pl->q);
    pl->qi = psi_malloc(nq * sizeof *pl->qi);
    pl->qh = psi_malloc(nq * sizeof *pl->qh);
    pl->ql = psi_malloc(nq * sizeof *pl->ql);
    if (!pl->cache || !pl->st || !pl->q || !pl->qi || !pl->qh || !pl->ql)
        return PS_E_NOMEM;
    for (size_t i = 0; i < nc; i++)
        pl->cache[i].pos = -1;
    return PS_OK;
}

static int setup(planner_t *pl, const ps_model_t *m, const ps_ops_t *ops, const ps_plan_params_t *p)
{
    memset(pl, 0, sizeof *pl);
    pl->m = m;
    pl->ops = ops;
    pl->p = p;
    pl->gpu = p->gpu ? p->gpu : m ? m->gpu : NULL;
    int rc = check_params(pl, m, ops, p);
    if (rc != PS_OK)
        return rc;
    pl->W = p->window ? p->window : m ? m->layout.window : PS_WINDOW;
    pl->floor = !p->predict;
    pl->deadline = p->time_limit_s > 0 ? psi_now() + p->time_limit_s : 0;
    pl->L = p->lp_lengths;
    pl->hg = psi_ops_find(ops, pl->gpu, p->hp_model, p->hp_batch);
    pl->lg = psi_ops_find(ops, pl->gpu, p->lp_model, p->lp_batch);
    char known[512];
    if (!pl->hg || !pl->lg)
        return psi_error(PS_E_INPUT, "%s batch %d: not in the standalone profile of %s (ops has: %s)",
                         !pl->hg ? p->hp_model : p->lp_model, !pl->hg ? p->hp_batch : p->lp_batch, pl->gpu,
                         psi_ops_groups_text(ops, pl->gpu, known, sizeof known));
    pl->total = psi_model_gpu_tpcs(ops, pl->gpu);
    int kt_h = psi_group_tpcs_index(pl->hg, pl->total), kt_l = psi_group_tpcs_index(pl->lg, pl->total);
    if (pl->total < 2 || kt_h < 0 || kt_l < 0)
        return psi_error(PS_E_INPUT, "the profile lacks the whole GPU (%d TPCs) for %s or %s", pl->total, p->hp_model,
                         p->lp_model);
    if ((rc = setup_tables(pl, kt_h, kt_l)) != PS_OK)
        return rc;
    if (!p->predict) {
        ps_query_t q = {.gpu = pl->gpu,
                        .hp_model = p->hp_model,
                        .hp_batch = p->hp_batch,
                        .lp_model = p->lp_model,
                        .lp_batch = p->lp_batch};
        psi_pair_ctx_bind(m, ops, &q, p->coverage, &pl->pairs);
    }
    return setup_splits(pl);
}

/* The steps of the path ending at state e, in order, into out; consecutive
 * alone steps merge into one run. */
static int build(const planner_t *pl, const state_t *path, int e, ps_plan_t *out)
{
    int n = 0;
    for (int k = e; path[k].prev >= 0; k = 2 * path[k].prev + path[k].prev_f)
        n++;
    int *order = psi_malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    out->steps = psi_calloc((size_t)(n > 0 ? n : 1), sizeof *out->steps);
    if (!order || !out->steps) {
        free(order);
        return PS_E_NOMEM;
    }
    int k = e;
    for (int i = n - 1; i >= 0; i--, k = 2 * path[k].prev + path[k].prev_f)
        order[i] = k;
    size_t m = 0;
    for (int i = 0; i < n; i++) {
        const state_t *c = &path[order[i]];
        int a = pl->bpos[c->prev], b = pl->bpos[order[i] / 2];
        ps_plan_step_t *st = &out->steps[m];
        if (c->d < 0 && m > 0 && out->steps[m - 1].lp_len == 0) {
            st = &out->steps[m - 1];
            st->hp_len += b - a;
            st->hp_ns += c->t;
        } else if (c->d < 0) {
            *st = (ps_plan_step_t){.hp_start = a, .hp_len = b - a, .hp_tpcs = pl->total, .hp_ns = c->t};
            m++;
        } else {
            *st = (ps_plan_step_t){.hp_start = a,
                                   .hp_len = b - a,
                                   .hp_tpcs = pl->split[c->s],
                                   .lp_tpcs = pl->total - pl->split[c->s],
                                   .lp_start = path[2 * c->prev + c->prev_f].pos,
                                   .lp_len = c->len,
                                   .hp_bound_ns = c->hp,
                                   .lp_bound_ns = c->lp,
                                   .step_ns = c->t,
                                   .lp_work_ns = lp_gain(pl, path[2 * c->prev + c->prev_f].pos, c->len)};
            m++;
        }
        if (st->lp_len == 0)
            st->hp_bound_ns = st->step_ns = st->hp_ns;
    }
    free(order);
    out->n_steps = m;
    return PS_OK;
}

/* Search the price grid; the best path's states into best (2 nb), its final
 * state into *best_end (-1: HP alone is best). */
static int search(planner_t *pl, ps_plan_t *plan, state_t *best, int *best_end)
{
    double best_net = 0;
    int worse = 0;
    *best_end = -1;
    for (int i = 0; plan->feasible && i < N_MU; i++) {
        int e = 0, rc = pass(pl, mu_grid[i], &e);
        if (rc != PS_OK)
            return rc;
        const state_t *s = &pl->st[e];
        double net = s->gain - pl->p->time_value * (s->cost - plan->alone_ns);
        if (net > best_net + 1e-9 * fabs(best_net)) {
            best_net = net;
            worse = 0;
            *best_end = e;
            plan->mu = mu_grid[i];
            memcpy(best, pl->st, 2 * (size_t)pl->nb * sizeof *best);
        } else if (*best_end >= 0 && ++worse == 2) {
            break; /* two prices past the best: higher ones cut more co-runs */
        }
        if (!pl->guard_hit)
            break; /* the unconstrained optimum of this price; higher prices only cut */
    }
    return PS_OK;
}

/* Point predictions of the co-run steps, for the record (or the budgeted
 * figures when the plan ran on points or a caller's predictor). */
static int record_points(const planner_t *pl, ps_plan_t *plan)
{
    const ps_plan_params_t *p = pl->p;
    for (size_t i = 0; i < plan->n_steps; i++) {
        ps_plan_step_t *st = &plan->steps[i];
        if (st->lp_len == 0)
            continue;
        if (p->predict || p->coverage <= 0) {
            st->hp_ns = st->hp_bound_ns;
            st->lp_ns = st->lp_bound_ns;
            continue;
        }
        ps_query_t q = {pl->gpu,     p->hp_model,  p->hp_batch, st->hp_start, st->hp_len, p->lp_model,
                        p->lp_batch, st->lp_start, st->lp_len,  st->hp_tpcs,  st->lp_tpcs};
        int rc = ps_model_predict(pl->m, pl->ops, &q, 1, &st->hp_ns, &st->lp_ns);
        if (rc != PS_OK)
            return rc;
    }
    return PS_OK;
}

static int plan_with(planner_t *pl, ps_plan_t *plan)
{
    const ps_plan_params_t *p = pl->p;
    plan->alone_ns = pl->acc[pl->nb - 1] + p->alone_run_ns;
    plan->budget_ns = pl->budget = p->slo_factor > 0 ? p->slo_factor * plan->alone_ns : p->budget_ns;
    plan->feasible = plan->alone_ns <= pl->budget;
    plan->coverage = p->coverage;
    plan->total_tpcs = pl->total;
    const psi_gpu_t *g = psi_gpu_find(pl->gpu);
    plan->sms_per_tpc = g && g->tpcs > 0 && g->sms % g->tpcs == 0 ? g->sms / g->tpcs : 2;
    state_t *best = psi_malloc(2 * (size_t)pl->nb * sizeof *best);
    if (!best)
        return PS_E_NOMEM;
    int e, rc = search(pl, plan, best, &e);
    if (rc == PS_OK && e < 0) {
        /* HP alone in one run. */
        plan->steps = psi_calloc(1, sizeof *plan->steps);
        if (!plan->steps)
            rc = PS_E_NOMEM;
        else {
            plan->steps[0] = (ps_plan_step_t){.hp_len = pl->hg->n_ops, .hp_tpcs = pl->total, .hp_ns = plan->alone_ns};
            plan->steps[0].hp_bound_ns = plan->steps[0].step_ns = plan->alone_ns;
            plan->n_steps = 1;
            plan->lp_end = p->lp_start % pl->lg->n_ops;
        }
    } else if (rc == PS_OK) {
        rc = build(pl, best, e, plan);
        plan->lp_end = best[e].pos;
    }
    free(best);
    if (rc == PS_OK)
        rc = record_points(pl, plan);
    for (size_t i = 0; rc == PS_OK && i < plan->n_steps; i++) {
        plan->planned_ns += plan->steps[i].step_ns;
        plan->lp_work_ns += plan->steps[i].lp_work_ns;
    }
    return rc;
}

int ps_plan(const ps_model_t *m, const ps_ops_t *ops, const ps_plan_params_t *p, ps_plan_t **out)
{
    if (!out || !p)
        return psi_error(PS_E_ARG, "ps_plan: NULL argument");
    *out = NULL;
    double t0 = psi_now();
    planner_t pl;
    int rc = setup(&pl, m, ops, p);
    ps_plan_t *plan = rc == PS_OK ? psi_calloc(1, sizeof *plan) : NULL;
    if (rc == PS_OK && !plan)
        rc = PS_E_NOMEM;
    if (rc == PS_OK)
        rc = plan_with(&pl, plan);
    planner_free(&pl);
    if (rc != PS_OK) {
        ps_plan_free(plan);
        return rc;
    }
    plan->n_predictions = plan->n_predictions_all = pl.n_pred;
    plan->seconds = psi_now() - t0;
    snprintf(plan->hp_model, sizeof plan->hp_model, "%s", p->hp_model);
    snprintf(plan->lp_model, sizeof plan->lp_model, "%s", p->lp_model);
    plan->hp_batch = p->hp_batch;
    plan->lp_batch = p->lp_batch;
    *out = plan;
    return PS_OK;
}

int ps_model_batch_parse(const char *text, char *name, int *batch)
{
    if (!text || !name || !batch)
        return psi_error(PS_E_ARG, "ps_model_batch_parse: NULL argument");
    const char *c = strrchr(text, ':'), *d = c ? c + 1 + (c[1] == '+') : NULL;
    long b = 0;
    for (const char *e = d; e && *e >= '0' && *e <= '9' && b <= 1000000; e++)
        b = 10 * b + (*e - '0');
    if (!c || c == text || c - text > 63 || !*d || d[strspn(d, "0123456789")] || b < 1 || b > 1000000)
        return psi_error(PS_E_ARG, "'%s' is not MODEL:BATCH (a name of 1..63 bytes, a batch in 1..1000000)", text);
    memcpy(name, text, (size_t)(c - text));
    name[c - text] = 0;
    *batch = (int)b;
    return PS_OK;
}

int ps_plan_best(const ps_model_t *m, const ps_ops_t *ops, const ps_plan_params_t *p, const char *const *lp,
                 size_t n_lp, ps_plan_t **out)
{
    if (!out || !p || (n_lp && !lp))
        return psi_error(PS_E_ARG, "ps_plan_best: NULL argument");
    *out = NULL;
    if (n_lp < 1 || n_lp > PS_PLAN_MAX_LP)
        return psi_error(PS_E_ARG, "%zu LP candidates: plan beside 1..%d at a time", n_lp, PS_PLAN_MAX_LP);
    double t0 = psi_now();
    long n_pred = 0;
    ps_plan_params_t q = *p;
    char name[64];
    for (size_t i = 0; i < n_lp; i++) {
        int rc = ps_model_batch_parse(lp[i], name, &q.lp_batch);
        ps_plan_t *pl = NULL;
        q.lp_model = name;
        if (rc == PS_OK && p->time_limit_s > 0 && !((q.time_limit_s = p->time_limit_s - (psi_now() - t0)) > 0))
            rc = psi_error(PS_E_INPUT, "planning stopped at its time limit of %g s (time_limit_s)", p->time_limit_s);
        if (rc == PS_OK)
            rc = ps_plan(m, ops, &q, &pl);
        if (rc != PS_OK) {
            ps_plan_free(*out);
            *out = NULL;
            return rc;
        }
        n_pred += pl->n_predictions;
        if (!*out || pl->lp_work_ns > (*out)->lp_work_ns) {
            ps_plan_free(*out);
            *out = pl;
        } else {
            ps_plan_free(pl);
        }
    }
    (*out)->n_predictions_all = n_pred;
    return PS_OK;
}

/* The plan's SM splits as a runtime applies them (docs/planner.md):
 * per segment, green-context SM counts (hp_sms, lp_sms: a green context is
 * made from an SM count, cuDevSmResourceSplitByCount); and one split for a
 * CUDA MPS static SM partition (nvidia-cuda-mps-control -S, CUDA 13.1+;
 * a client picks its partition with CUDA_MPS_SM_PARTITION), which holds for
 * a process's lifetime, so it is the split of the co-run steps that carry
 * the most LP work (null when HP always runs alone). */
static void add_sm_split(cJSON *o, const ps_plan_t *p)
{
    cJSON *s = cJSON_AddObjectToObject(o, "sm_split");
    int per = p->sms_per_tpc > 0 ? p->sms_per_tpc : 2;
    cJSON_AddNumberToObject(s, "total_tpcs", p->total_tpcs);
    cJSON_AddNumberToObject(s, "total_sms", p->total_tpcs * per);
    cJSON_AddNumberToObject(s, "sms_per_tpc", per);
    double work[256] = {0}, total = 0;
    int best = -1;
    for (size_t i = 0; i < p->n_steps; i++) {
        const ps_plan_step_t *st = &p->steps[i];
        if (st->lp_len > 0 && st->hp_tpcs >= 0 && st->hp_tpcs < 256) {
            work[st->hp_tpcs] += st->lp_work_ns;
            total += st->lp_work_ns;
            if (best < 0 || work[st->hp_tpcs] > work[best])
                best = st->hp_tpcs;
        }
    }
    if (best < 0) {
        cJSON_AddNullToObject(s, "mps_static_partition");
        return;
    }
    cJSON *m = cJSON_AddObjectToObject(s, "mps_static_partition");
    cJSON_AddStringToObject(m, "control", "nvidia-cuda-mps-control -S (--static-partitioning), CUDA 13.1+");
    cJSON_AddStringToObject(m, "client_env", "CUDA_MPS_SM_PARTITION");
    cJSON_AddNumberToObject(m, "hp_sms", best * per);
    cJSON_AddNumberToObject(m, "lp_sms", (p->total_tpcs - best) * per);
    cJSON_AddNumberToObject(m, "lp_work_share", total > 0 ? work[best] / total : 0);
}

int ps_plan_to_json(const ps_plan_t *p, char **out)
{
    if (!p || !out)
        return psi_error(PS_E_ARG, "ps_plan_to_json: NULL argument");
    *out = NULL;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return PS_E_NOMEM;
    cJSON_AddStringToObject(o, "schema", "pairsight.plan.v1");
    /* the plan's figures, then each step's, in the schema's order (feasible a boolean) */
    static const char *const top[] = {"budget_ns",  "planned_ns", "alone_ns", "feasible",    "coverage",
                                      "lp_work_ns", "lp_end",     "mu",       "predictions", "plan_seconds"};
    const double tv[] = {p->budget_ns, p->planned_ns, p->alone_ns,
                         p->feasible,  p->coverage,   p->lp_work_ns,
                         p->lp_end,    p->mu,         (double)p->n_predictions,
                         p->seconds};
    for (int k = 0; k < (int)(sizeof top / sizeof top[0]); k++)
        if (strcmp(top[k], "feasible") == 0)
            cJSON_AddBoolToObject(o, top[k], p->feasible);
        else
            cJSON_AddNumberToObject(o, top[k], tv[k]);
    add_sm_split(o, p);
    static const char *const step[] = {"hp_start",    "hp_len",      "hp_tpcs", "lp_start",   "lp_len",
                                       "lp_tpcs",     "hp_sms",      "lp_sms",  "hp_ns_pred", "lp_ns_pred",
                                       "hp_ns_upper", "lp_ns_upper", "step_ns", "lp_work_ns"};
    int sms = p->sms_per_tpc > 0 ? p->sms_per_tpc : 2;
    cJSON *a = cJSON_AddArrayToObject(o, "segments");
    for (size_t i = 0; a && i < p->n_steps; i++) {
        const ps_plan_step_t *s = &p->steps[i];
        const double sv[] = {s->hp_start,    s->hp_len,        s->hp_tpcs,       s->lp_start,  s->lp_len,
                             s->lp_tpcs,     s->hp_tpcs * sms, s->lp_tpcs * sms, s->hp_ns,     s->lp_ns,
                             s->hp_bound_ns, s->lp_bound_ns,   s->step_ns,       s->lp_work_ns};
        cJSON *e = cJSON_CreateObject();
        for (int k = 0; k < (int)(sizeof step / sizeof step[0]); k++)
            cJSON_AddNumberToObject(e, step[k], sv[k]);
        cJSON_AddItemToArray(a, e);
    }
    if (p->hp_model[0]) {
        cJSON_AddStringToObject(o, "hp_model", p->hp_model);
        cJSON_AddNumberToObject(o, "hp_batch", p->hp_batch);
        cJSON_AddStringToObject(o, "lp_model", p->lp_model);
        cJSON_AddNumberToObject(o, "lp_batch", p->lp_batch);
    }
    char *s = psi_json_print(o, 0);
    cJSON_Delete(o);
    if (!s)
        return PS_E_NOMEM;
    *out = s;
    return PS_OK;
}
