/*
 * The SLO-safe co-location planner (docs/planner.md, "Planner").
 *
 * The HP request (every operator of the HP model) is cut into K segments of
 * at most W operators (near-equal lengths, as window composition cuts
 * segments). Segment k either runs alone on the whole GPU, costing A_k (its
 * operators' alone latencies; a run of consecutive alone segments costs the
 * fixed alone_run_ns once), or beside the next l operators of the LP stream
 * under an HP/LP split, costing t = max(U_hp, U_lp), the budgeted latency of
 * the step (upper bounds, or points); the LP work gained is the standalone
 * whole-GPU time of those l operators.
 *
 * The LP position after a step depends on every earlier choice, so the
 * problem is not a knapsack over independent items. The planner is a
 * Lagrangian greedy with a feasibility guard: for a price mu of HP time, it
 * walks the segments in order and takes the option of highest
 *     score = gain - mu (t - A_k)
 * among those that keep the guard
 *     R_k - t >= sum_{j > k} A_j + alone_run_ns,
 * R_k being the budget left. Running alone always keeps it, so by induction
 * every plan of every mu fits the budget whenever the all-alone plan does
 * (the guard's invariant: R_k >= sum_{j >= k} A_j plus alone_run_ns unless
 * an alone run is under way). Among the plans of the mu grid the one with the
 * most LP work is kept, net of time_value x the HP time its co-runs add
 * (time_value 1 when LP would otherwise run alone in that time).
 *
 * Cost: at most |mu| K S L predictions (S splits, L LP lengths): 7 x 19 x
 * 9 x 4 = 4788 for a 300-operator request; candidates met again at the same
 * LP position (every pass starts from the same one) are predicted once.
 */
#include "decision/decision.h"

#include "common/common.h"
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double mu_grid[] = {0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 4.0, 8.0};
#define N_MU ((int)(sizeof mu_grid / sizeof mu_grid[0]))

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

/* A candidate's predicted latencies, cached per (segment, split, length) for
 * the LP position it was predicted at. */
typedef struct {
    int pos; /* -1: empty */
    double hp, lp;
} slot_t;

typedef struct {
    const ps_model_t *m;
    const ps_ops_t *ops;
    const ps_plan_params_t *p;
    const char *gpu;
    const psi_op_group_t *hg, *lg;
    int total, K, S, L, W;
    int *seg_start, *seg_len; /* [K] */
    double *alone;            /* [K] A_k */
    double *rest;             /* [K] sum_{j > k} A_j */
    int *split;               /* [S] HP TPCs */
    double *lp_work;          /* [lg->n_ops] standalone whole-GPU ns */
    slot_t *cache;            /* [K * S * L] */
    long n_pred;
} planner_t;

static void planner_free(planner_t *pl)
{
    free(pl->seg_start);
    free(pl->seg_len);
    free(pl->alone);
    free(pl->rest);
    free(pl->split);
    free(pl->lp_work);
    free(pl->cache);
}

static int lp_len_of(const planner_t *pl, int li, int pos)
{
    int l = (pl->W * (li + 1) + pl->L - 1) / pl->L;
    int left = pl->lg->n_ops - pos;
    return l < left ? l : left;
}

static int model_predict(const planner_t *pl, const ps_query_t *q, size_t n, double *hp, double *lp)
{
    if (pl->p->predict)
        return pl->p->predict(pl->p->predict_user, q, n, hp, lp);
    if (pl->p->coverage > 0)
        return ps_model_predict_bound(pl->m, pl->ops, q, n, pl->p->coverage, hp, lp);
    return ps_model_predict(pl->m, pl->ops, q, n, hp, lp);
}

static ps_query_t query(const planner_t *pl, int k, int s, int pos, int len)
{
    ps_query_t q = {.gpu = pl->gpu,
                    .hp_model = pl->p->hp_model,
                    .hp_batch = pl->p->hp_batch,
                    .hp_start = pl->seg_start[k],
                    .hp_len = pl->seg_len[k],
                    .lp_model = pl->p->lp_model,
                    .lp_batch = pl->p->lp_batch,
                    .lp_start = pos,
                    .lp_len = len,
                    .hp_tpcs = pl->split[s],
                    .lp_tpcs = pl->total - pl->split[s]};
    return q;
}

/* Make sure every candidate of segment k at LP position pos is predicted. */
static int fill(planner_t *pl, int k, int pos)
{
    ps_query_t q[64 * 8];
    int idx[64 * 8], n = 0;
    for (int s = 0; s < pl->S; s++)
        for (int li = 0; li < pl->L; li++) {
            int i = (k * pl->S + s) * pl->L + li;
            if (pl->cache[i].pos == pos)
                continue;
            q[n] = query(pl, k, s, pos, lp_len_of(pl, li, pos));
            idx[n++] = i;
        }
    if (n == 0)
        return PS_OK;
    double hp[64 * 8], lp[64 * 8];
    int rc = model_predict(pl, q, (size_t)n, hp, lp);
    if (rc != PS_OK)
        return rc;
    pl->n_pred += n;
    for (int i = 0; i < n; i++) {
        pl->cache[idx[i]].pos = pos;
        pl->cache[idx[i]].hp = hp[i];
        pl->cache[idx[i]].lp = lp[i];
    }
    return PS_OK;
}

/* One greedy pass at price mu into steps[K] (choice per segment: s = -1
 * alone). Returns the LP work. */
typedef struct {
    int s, li, pos, len;
    double hp, lp, t;
} choice_t;

static int pass(planner_t *pl, double mu, choice_t *ch, double *work, int *end_pos)
{
    double R = pl->p->budget_ns, gain = 0;
    int pos = pl->p->lp_start % pl->lg->n_ops, in_alone_run = 0;
    for (int k = 0; k < pl->K; k++) {
        if (pos >= pl->lg->n_ops)
            pos = 0;
        int rc = fill(pl, k, pos);
        if (rc != PS_OK)
            return rc;
        double alone_cost = pl->alone[k] + (in_alone_run ? 0 : pl->p->alone_run_ns);
        choice_t best = {.s = -1, .t = alone_cost};
        double best_score = 0, keep = pl->rest[k] + pl->p->alone_run_ns;
        for (int s = 0; s < pl->S; s++)
            for (int li = 0; li < pl->L; li++) {
                const slot_t *c = &pl->cache[(k * pl->S + s) * pl->L + li];
                double t = c->hp > c->lp ? c->hp : c->lp;
                if (!(t > 0) || R - t < keep)
                    continue;
                int len = lp_len_of(pl, li, pos);
                double g = 0;
                for (int j = pos; j < pos + len; j++)
                    g += pl->lp_work[j];
                double score = g - mu * (t - pl->alone[k]);
                if (score > best_score) {
                    best_score = score;
                    best = (choice_t){.s = s, .li = li, .pos = pos, .len = len, .hp = c->hp, .lp = c->lp, .t = t};
                }
            }
        ch[k] = best;
        R -= best.t;
        if (best.s >= 0) {
            for (int j = pos; j < pos + best.len; j++)
                gain += pl->lp_work[j];
            pos += best.len;
            in_alone_run = 0;
        } else {
            in_alone_run = 1;
        }
    }
    *work = gain;
    *end_pos = pos >= pl->lg->n_ops ? 0 : pos;
    return PS_OK;
}

static int setup(planner_t *pl, const ps_model_t *m, const ps_ops_t *ops, const ps_plan_params_t *p)
{
    memset(pl, 0, sizeof *pl);
    pl->m = m;
    pl->ops = ops;
    pl->p = p;
    pl->gpu = p->gpu ? p->gpu : m ? m->gpu : NULL;
    if (!ops || !p->hp_model || !p->lp_model || !pl->gpu || (!m && !p->predict))
        return psi_error(PS_E_ARG, "ps_plan: needs ops, both models, and a model or a predictor with a GPU");
    if (!(p->budget_ns > 0) || !isfinite(p->budget_ns))
        return psi_error(PS_E_ARG, "the budget must be a positive number of ns");
    if (!p->predict && p->coverage > 0 && !(p->coverage >= 0.5 && p->coverage <= 0.999))
        return psi_error(PS_E_ARG, "coverage %g is outside 0.5..0.999", p->coverage);
    if (p->lp_lengths < 1 || p->lp_lengths > 8 || p->window < 0 || p->window > 64 || p->lp_start < 0 ||
        !(p->alone_run_ns >= 0))
        return psi_error(PS_E_ARG, "lp_lengths 1..8, window 0..64, lp_start and alone_run_ns >= 0");
    pl->W = p->window ? p->window : m ? m->layout.window : PS_WINDOW;
    pl->L = p->lp_lengths;
    pl->hg = psi_ops_find(ops, pl->gpu, p->hp_model, p->hp_batch);
    pl->lg = psi_ops_find(ops, pl->gpu, p->lp_model, p->lp_batch);
    if (!pl->hg || !pl->lg)
        return psi_error(PS_E_INPUT, "%s batch %d: not in the standalone profile of %s",
                         !pl->hg ? p->hp_model : p->lp_model, !pl->hg ? p->hp_batch : p->lp_batch, pl->gpu);
    pl->total = psi_model_gpu_tpcs(ops, pl->gpu);
    int kt_h = psi_group_tpcs_index(pl->hg, pl->total), kt_l = psi_group_tpcs_index(pl->lg, pl->total);
    if (pl->total < 2 || kt_h < 0 || kt_l < 0)
        return psi_error(PS_E_INPUT, "the profile lacks the whole GPU (%d TPCs) for %s or %s", pl->total, p->hp_model,
                         p->lp_model);
    int n = pl->hg->n_ops;
    pl->K = (n + pl->W - 1) / pl->W;
    pl->seg_start = psi_malloc((size_t)pl->K * sizeof(int));
    pl->seg_len = psi_malloc((size_t)pl->K * sizeof(int));
    pl->alone = psi_malloc((size_t)pl->K * sizeof(double));
    pl->rest = psi_malloc((size_t)pl->K * sizeof(double));
    pl->split = psi_malloc((size_t)pl->hg->n_tpcs * sizeof(int));
    pl->lp_work = psi_malloc((size_t)pl->lg->n_ops * sizeof(double));
    if (!pl->seg_start || !pl->seg_len || !pl->alone || !pl->rest || !pl->split || !pl->lp_work)
        return PS_E_NOMEM;
    for (int k = 0; k < pl->K; k++) {
        int a = (int)((long long)k * n / pl->K), b = (int)((long long)(k + 1) * n / pl->K);
        pl->seg_start[k] = a;
        pl->seg_len[k] = b - a;
        double t = 0;
        for (int op = a; op < b; op++)
            t += p->alone_op_ns ? p->alone_op_ns[op]
                                : pl->hg->duration_ns[(size_t)op * (size_t)pl->hg->n_tpcs + (size_t)kt_h];
        if (!(t >= 0))
            return psi_error(PS_E_INPUT, "%s: no alone latency for operators %d..%d", p->hp_model, a, b - 1);
        pl->alone[k] = t;
    }
    for (int k = pl->K - 1; k >= 0; k--)
        pl->rest[k] = k == pl->K - 1 ? 0 : pl->rest[k + 1] + pl->alone[k + 1];
    for (int j = 0; j < pl->lg->n_ops; j++) {
        pl->lp_work[j] = pl->lg->duration_ns[(size_t)j * (size_t)pl->lg->n_tpcs + (size_t)kt_l];
        if (!(pl->lp_work[j] >= 0))
            pl->lp_work[j] = 0;
    }
    /* Splits: HP TPC counts both sides were profiled at (hp + lp = total). */
    for (int i = 0; i < pl->hg->n_tpcs; i++) {
        int t = pl->hg->tpcs[i];
        if (t >= 1 && t < pl->total && psi_group_tpcs_index(pl->lg, pl->total - t) >= 0 && pl->S < 64)
            pl->split[pl->S++] = t;
    }
    if (pl->S == 0)
        return psi_error(PS_E_INPUT, "no SM split has a standalone profile of both %s and %s", p->hp_model,
                         p->lp_model);
    size_t nc = (size_t)pl->K * (size_t)pl->S * (size_t)pl->L;
    pl->cache = psi_malloc(nc * sizeof *pl->cache);
    if (!pl->cache)
        return PS_E_NOMEM;
    for (size_t i = 0; i < nc; i++)
        pl->cache[i].pos = -1;
    return PS_OK;
}

/* The plan of choices ch: consecutive alone segments merge into one run. */
static int build(const planner_t *pl, const choice_t *ch, ps_plan_t *out)
{
    out->steps = psi_calloc((size_t)pl->K, sizeof *out->steps);
    if (!out->steps)
        return PS_E_NOMEM;
    size_t n = 0;
    for (int k = 0; k < pl->K; k++) {
        ps_plan_step_t *st;
        if (ch[k].s < 0 && n > 0 && out->steps[n - 1].lp_len == 0) {
            st = &out->steps[n - 1];
            st->hp_len += pl->seg_len[k];
            st->hp_ns += pl->alone[k];
        } else {
            st = &out->steps[n++];
            st->hp_start = pl->seg_start[k];
            st->hp_len = pl->seg_len[k];
            if (ch[k].s < 0) {
                st->hp_tpcs = pl->total;
                st->hp_ns = pl->alone[k] + pl->p->alone_run_ns;
            } else {
                st->hp_tpcs = pl->split[ch[k].s];
                st->lp_tpcs = pl->total - st->hp_tpcs;
                st->lp_start = ch[k].pos;
                st->lp_len = ch[k].len;
                st->hp_bound_ns = ch[k].hp;
                st->lp_bound_ns = ch[k].lp;
                for (int j = ch[k].pos; j < ch[k].pos + ch[k].len; j++)
                    st->lp_work_ns += pl->lp_work[j];
            }
        }
        if (st->lp_len == 0) {
            st->hp_bound_ns = st->hp_ns;
            st->step_ns = st->hp_ns;
        } else {
            st->step_ns = st->hp_bound_ns > st->lp_bound_ns ? st->hp_bound_ns : st->lp_bound_ns;
        }
    }
    out->n_steps = n;
    return PS_OK;
}

int ps_plan(const ps_model_t *m, const ps_ops_t *ops, const ps_plan_params_t *p, ps_plan_t **out)
{
    if (!out || !p)
        return psi_error(PS_E_ARG, "ps_plan: NULL argument");
    *out = NULL;
    double t0 = psi_now();
    planner_t pl;
    int rc = setup(&pl, m, ops, p);
    choice_t *ch = NULL, *best = NULL;
    ps_plan_t *plan = psi_calloc(1, sizeof *plan);
    if (rc == PS_OK && !plan)
        rc = PS_E_NOMEM;
    if (rc == PS_OK) {
        ch = psi_malloc((size_t)pl.K * sizeof *ch);
        best = psi_malloc((size_t)pl.K * sizeof *best);
        if (!ch || !best)
            rc = PS_E_NOMEM;
    }
    if (rc != PS_OK)
        goto done;
    plan->budget_ns = p->budget_ns;
    plan->alone_ns = pl.rest[0] + pl.alone[0] + p->alone_run_ns;
    plan->feasible = plan->alone_ns <= p->budget_ns;
    plan->coverage = p->coverage;
    /* The all-alone plan (net gain 0) unless a pass does better. */
    double best_work = 0;
    int best_end = p->lp_start % pl.lg->n_ops;
    for (int k = 0; k < pl.K; k++)
        best[k] = (choice_t){.s = -1};
    for (int i = 0; plan->feasible && i < N_MU; i++) {
        double work;
        int end;
        if ((rc = pass(&pl, mu_grid[i], ch, &work, &end)) != PS_OK)
            goto done;
        /* Net of the HP time the co-runs add, at time_value. */
        double planned = 0;
        for (int k = 0; k < pl.K; k++)
            planned += ch[k].t;
        work -= p->time_value * (planned - plan->alone_ns);
        if (work > best_work + 1e-9 * fabs(best_work)) {
            best_work = work;
            best_end = end;
            plan->mu = mu_grid[i];
            memcpy(best, ch, (size_t)pl.K * sizeof *ch);
        }
    }
    if ((rc = build(&pl, best, plan)) != PS_OK)
        goto done;
    /* Point predictions of the co-run steps, for the record. */
    if (!p->predict && p->coverage > 0) {
        for (size_t i = 0; i < plan->n_steps && rc == PS_OK; i++) {
            ps_plan_step_t *st = &plan->steps[i];
            if (st->lp_len == 0)
                continue;
            ps_query_t q = {pl.gpu,      p->hp_model,  p->hp_batch, st->hp_start, st->hp_len, p->lp_model,
                            p->lp_batch, st->lp_start, st->lp_len,  st->hp_tpcs,  st->lp_tpcs};
            rc = ps_model_predict(m, ops, &q, 1, &st->hp_ns, &st->lp_ns);
        }
        if (rc != PS_OK)
            goto done;
    } else {
        for (size_t i = 0; i < plan->n_steps; i++)
            if (plan->steps[i].lp_len > 0) {
                plan->steps[i].hp_ns = plan->steps[i].hp_bound_ns;
                plan->steps[i].lp_ns = plan->steps[i].lp_bound_ns;
            }
    }
    for (size_t i = 0; i < plan->n_steps; i++)
        plan->planned_ns += plan->steps[i].step_ns;
    plan->lp_work_ns = 0;
    for (size_t i = 0; i < plan->n_steps; i++)
        plan->lp_work_ns += plan->steps[i].lp_work_ns;
    plan->lp_end = best_end;
    plan->n_predictions = pl.n_pred;
    plan->seconds = psi_now() - t0;
done:
    free(ch);
    free(best);
    planner_free(&pl);
    if (rc != PS_OK) {
        ps_plan_free(plan);
        return rc;
    }
    *out = plan;
    return PS_OK;
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
    cJSON_AddNumberToObject(o, "budget_ns", p->budget_ns);
    cJSON_AddNumberToObject(o, "planned_ns", p->planned_ns);
    cJSON_AddNumberToObject(o, "alone_ns", p->alone_ns);
    cJSON_AddBoolToObject(o, "feasible", p->feasible);
    cJSON_AddNumberToObject(o, "coverage", p->coverage);
    cJSON_AddNumberToObject(o, "lp_work_ns", p->lp_work_ns);
    cJSON_AddNumberToObject(o, "lp_end", p->lp_end);
    cJSON_AddNumberToObject(o, "mu", p->mu);
    cJSON_AddNumberToObject(o, "predictions", (double)p->n_predictions);
    cJSON_AddNumberToObject(o, "plan_seconds", p->seconds);
    cJSON *a = cJSON_AddArrayToObject(o, "segments");
    for (size_t i = 0; a && i < p->n_steps; i++) {
        const ps_plan_step_t *s = &p->steps[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "hp_start", s->hp_start);
        cJSON_AddNumberToObject(e, "hp_len", s->hp_len);
        cJSON_AddNumberToObject(e, "hp_tpcs", s->hp_tpcs);
        cJSON_AddNumberToObject(e, "lp_start", s->lp_start);
        cJSON_AddNumberToObject(e, "lp_len", s->lp_len);
        cJSON_AddNumberToObject(e, "lp_tpcs", s->lp_tpcs);
        cJSON_AddNumberToObject(e, "hp_ns_pred", s->hp_ns);
        cJSON_AddNumberToObject(e, "lp_ns_pred", s->lp_ns);
        cJSON_AddNumberToObject(e, "hp_ns_upper", s->hp_bound_ns);
        cJSON_AddNumberToObject(e, "lp_ns_upper", s->lp_bound_ns);
        cJSON_AddNumberToObject(e, "step_ns", s->step_ns);
        cJSON_AddNumberToObject(e, "lp_work_ns", s->lp_work_ns);
        cJSON_AddItemToArray(a, e);
    }
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    if (!s)
        return PS_E_NOMEM;
    *out = s;
    return PS_OK;
}
