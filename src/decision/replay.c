/*
 * Replay (docs/planner.md, "Replay"): decisions measured end to end. An HP
 * request stream (Poisson arrivals at utilization `load` of the dedicated
 * GPU, served in order) runs beside an always-backlogged LP task; every
 * step a policy decides is timed by the simulator's co-execution physics
 * (psi_sim_coexec plus the dispatch cost and the per-run log-normal noise of a
 * simulated campaign), the ground truth here. Predictors never see it; only
 * the oracle does.
 *
 * Execution model. A request is a sequence of steps. A co-run step starts
 * an HP segment and an LP segment together under an SM split and ends when
 * both are done (the runtime waits for the LP segment before the next HP
 * segment), so its time is max(T_hp, T_lp); an alone step runs HP
 * operators on the whole GPU. Between requests LP runs alone on the whole
 * GPU; an LP operator cut off by an arrival is lost and runs again.
 * LP throughput counts the whole-GPU alone time of the LP operators done
 * per unit of wall time: 1 is LP alone on the whole GPU all the time.
 */
#include "decision/decision.h"

#include "common/common.h"
#include "model/model.h"
#include "simulate/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const policy_names[PS_REPLAY_N] = {"dedicated", "static",          "orion", "intensity",
                                                      "pairsight", "pairsight_bound", "oracle"};

const char *ps_replay_policy_name(ps_replay_policy_t policy)
{
    return (int)policy >= 0 && policy < PS_REPLAY_N ? policy_names[policy] : "?";
}

int ps_replay_policies_parse(const char *list, unsigned *out_mask)
{
    if (!list || !out_mask)
        return psi_error(PS_E_ARG, "ps_replay_policies_parse: NULL argument");
    unsigned mask = 0;
    if (strcmp(list, "all") == 0) {
        *out_mask = (1u << PS_REPLAY_N) - 1;
        return PS_OK;
    }
    const char *s = list;
    while (*s) {
        size_t n = strcspn(s, ",");
        int found = -1;
        for (int i = 0; i < PS_REPLAY_N; i++)
            if (strlen(policy_names[i]) == n && strncmp(s, policy_names[i], n) == 0)
                found = i;
        if (found < 0)
            return psi_error(PS_E_ARG,
                             "unknown policy '%.*s' (dedicated, static, orion, intensity, pairsight, "
                             "pairsight_bound, oracle, or all)",
                             (int)n, s);
        mask |= 1u << found;
        s += n;
        if (*s == ',')
            s++;
    }
    if (!mask)
        return psi_error(PS_E_ARG, "no policy named");
    *out_mask = mask;
    return PS_OK;
}

ps_replay_params_t ps_replay_default_params(void)
{
    ps_replay_params_t p;
    memset(&p, 0, sizeof p);
    p.requests = 500;
    p.load = 0.5;
    p.slo_factor = 1.2;
    p.coverage = 0.95;
    p.seed = 1;
    p.policies = (1u << PS_REPLAY_N) - 1;
    p.warmup = 1000;
    p.noise = 0.02;
    p.time_value = 1;
    p.goal_ratio = 1.5;
    return p;
}

void ps_replay_result_free(ps_replay_result_t *r)
{
    if (!r)
        return;
    for (int i = 0; i < PS_REPLAY_N; i++)
        free(r->pol[i].latency_ns);
    memset(r, 0, sizeof *r);
}

/* One step of a request: HP operators [a, a+len) on th TPCs beside LP
 * operators [b, b+l) on the rest (l = 0: HP alone on th TPCs). */
typedef struct {
    int a, len, th, b, l;
} step_t;

/* ---- a memo of a step -> (hp, lp) ---- */

typedef struct {
    uint64_t *key; /* 0 = empty */
    double *v;     /* [2 * cap] */
    size_t cap, n;
} memo_t;

static uint64_t memo_key(const step_t *s)
{
    /* 12 + 12 + 10 + 14 + 12 bits: operators < 4096, TPCs < 1024. */
    return 1 + ((uint64_t)s->a | (uint64_t)s->len << 12 | (uint64_t)s->th << 24 | (uint64_t)s->b << 34 |
                (uint64_t)s->l << 48);
}

static void memo_free(memo_t *m)
{
    free(m->key);
    free(m->v);
    memset(m, 0, sizeof *m);
}

static double *memo_find(memo_t *m, uint64_t k)
{
    if (!m->cap)
        return NULL;
    for (size_t i = psi_mix64(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == k)
            return &m->v[2 * i];
        if (m->key[i] == 0)
            return NULL;
    }
}

static int memo_put(memo_t *m, uint64_t k, double hp, double lp)
{
    if (2 * (m->n + 1) > m->cap) {
        memo_t g = {.cap = m->cap ? 2 * m->cap : 4096};
        g.key = psi_calloc(g.cap, sizeof *g.key);
        g.v = psi_malloc(2 * g.cap * sizeof *g.v);
        if (!g.key || !g.v) {
            memo_free(&g);
            return PS_E_NOMEM;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->key[i])
                memo_put(&g, m->key[i], m->v[2 * i], m->v[2 * i + 1]);
        memo_free(m);
        *m = g;
    }
    size_t i = psi_mix64(k) & (m->cap - 1);
    while (m->key[i] && m->key[i] != k)
        i = (i + 1) & (m->cap - 1);
    if (!m->key[i])
        m->n++;
    m->key[i] = k;
    m->v[2 * i] = hp;
    m->v[2 * i + 1] = lp;
    return PS_OK;
}

/* ---- the twin ---- */

typedef struct {
    const psi_gpu_t *g;
    sim_physics_t ph;
    sim_workload_t hw, lw;
    sim_placed_t *hp_placed, *lp_placed; /* [(tpcs) * n + op], tpcs 0..total */
    int total;
    double *hp_alone, *lp_alone; /* per operator, whole GPU, with launch gap */
    memo_t truth;                /* noiseless step latencies */
    double noise;
    uint64_t seed;
} twin_t;

static void twin_free(twin_t *t)
{
    psi_sim_workload_free(&t->hw);
    psi_sim_workload_free(&t->lw);
    free(t->hp_placed);
    free(t->lp_placed);
    free(t->hp_alone);
    free(t->lp_alone);
    memo_free(&t->truth);
}

static int twin_init(twin_t *t, const char *gpu, const ps_replay_params_t *p, const ps_ops_t *ops)
{
    memset(t, 0, sizeof *t);
    t->g = psi_sim_gpu_find(gpu);
    if (!t->g)
        return PS_E_ARG;
    t->ph = psi_sim_physics_default();
    t->total = t->g->tpcs;
    t->noise = p->noise;
    t->seed = p->seed;
    sim_shape_opts_t o = psi_sim_shape_default();
    int rc = psi_sim_workload_build(p->hp_model, p->hp_batch, &o, &t->hw);
    if (rc == PS_OK)
        rc = psi_sim_workload_build(p->lp_model, p->lp_batch, &o, &t->lw);
    if (rc != PS_OK)
        return rc;
    const psi_op_group_t *hg = psi_ops_find(ops, t->g->name, p->hp_model, p->hp_batch);
    const psi_op_group_t *lg = psi_ops_find(ops, t->g->name, p->lp_model, p->lp_batch);
    if (!hg || !lg || hg->n_ops != t->hw.n || lg->n_ops != t->lw.n)
        return psi_error(PS_E_INPUT,
                         "the profile's %s and %s are not the simulator's (replay needs ops.csv "
                         "of `pairsight simulate` on %s)",
                         p->hp_model, p->lp_model, t->g->name);
    size_t nt = (size_t)t->total + 1;
    t->hp_placed = psi_malloc(nt * (size_t)t->hw.n * sizeof *t->hp_placed);
    t->lp_placed = psi_malloc(nt * (size_t)t->lw.n * sizeof *t->lp_placed);
    t->hp_alone = psi_malloc((size_t)t->hw.n * sizeof(double));
    t->lp_alone = psi_malloc((size_t)t->lw.n * sizeof(double));
    if (!t->hp_placed || !t->lp_placed || !t->hp_alone || !t->lp_alone)
        return PS_E_NOMEM;
    for (int tp = 1; tp <= t->total; tp++) {
        for (int k = 0; k < t->hw.n; k++)
            psi_sim_place(t->g, &t->hw.k[k], tp, &t->hp_placed[(size_t)tp * t->hw.n + k]);
        for (int k = 0; k < t->lw.n; k++)
            psi_sim_place(t->g, &t->lw.k[k], tp, &t->lp_placed[(size_t)tp * t->lw.n + k]);
    }
    /* Per operator: device time and launch gap, what an operator adds to a
     * stream that the host keeps fed (eq. 8c hides the host behind long
     * kernels), so these are the gated figures under either launch model. */
    sim_physics_t op_ph = t->ph;
    op_ph.launch = SIM_LAUNCH_GATED;
    for (int k = 0; k < t->hw.n; k++)
        t->hp_alone[k] = psi_sim_coexec(t->g, &op_ph, &t->hp_placed[(size_t)t->total * t->hw.n + k], 1, NULL, 0).a_ns;
    for (int k = 0; k < t->lw.n; k++)
        t->lp_alone[k] = psi_sim_coexec(t->g, &op_ph, &t->lp_placed[(size_t)t->total * t->lw.n + k], 1, NULL, 0).a_ns;
    return PS_OK;
}

/* Noiseless latencies (ns, dispatch included) of step s. */
static int twin_step(twin_t *t, const step_t *s, double *hp, double *lp)
{
    uint64_t k = memo_key(s);
    const double *v = memo_find(&t->truth, k);
    if (v) {
        *hp = v[0];
        *lp = v[1];
        return PS_OK;
    }
    sim_coexec_t co = psi_sim_coexec(t->g, &t->ph, &t->hp_placed[(size_t)s->th * t->hw.n + s->a], s->len,
                                     s->l ? &t->lp_placed[(size_t)(t->total - s->th) * t->lw.n + s->b] : NULL, s->l);
    *hp = co.a_ns + t->ph.dispatch_ns;
    *lp = s->l ? co.b_ns + t->ph.dispatch_ns : 0;
    return memo_put(&t->truth, k, *hp, *lp);
}

/* The run's noise factors of a step of request r, a function of the step
 * (so that every policy and the oracle see the same run). As in the
 * campaign (eq. 9): a shared factor and one per side. */
static void twin_noise(const twin_t *t, long r, uint64_t key, double *nh, double *nl)
{
    psi_rng_t g = {.s = psi_mix64(t->seed * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)r + 1) * 0xD1B54A32D192ED03ULL) ^ key};
    psi_rng_next(&g);
    double shared = 0.5 * t->noise * psi_rng_normal(&g);
    *nh = exp(shared + t->noise * psi_rng_normal(&g));
    *nl = exp(shared + t->noise * psi_rng_normal(&g));
}

/* Measured (noisy) latencies of step s of request r. */
static int twin_run(twin_t *t, long r, const step_t *s, double *hp, double *lp)
{
    int rc = twin_step(t, s, hp, lp);
    double nh, nl;
    twin_noise(t, r, memo_key(s), &nh, &nl);
    *hp *= nh;
    *lp *= nl;
    return rc;
}

/* ---- the replay state ---- */

typedef struct {
    twin_t tw;
    const ps_model_t *m;
    const ps_ops_t *ops;
    const ps_replay_params_t *p;
    const char *gpu;
    const psi_op_group_t *hg, *lg;
    ps_baseline_t *intensity;
    memo_t pred[PS_REPLAY_N]; /* per predictor policy */
    int splits[64], n_splits; /* HP TPC counts profiled for both sides */
    double dedicated_ns;
    long req;       /* request being planned (the oracle's noise) */
    int policy;     /* predictor in use */
    double stretch; /* planners: service budget cap, x dedicated */
} replay_t;

/* LP state across the stream. */
typedef struct {
    int pos;
    double carry; /* progress into operator pos while alone */
} lp_state_t;

/* A stream of HP requests (arrivals and latencies of n, scratch of n for
 * percentiles) and what a policy made of it: the LP task's state and the
 * sums replay_stream keeps. */
typedef struct {
    const double *arrival;
    double *lat, *tmp;
    long n;
    lp_state_t lp;
    double lp_work, busy, wall, plan_s;
    double lp_idle; /* the part of lp_work done while HP was idle */
    long kept;      /* planned requests whose service stayed within the planner's budget */
} stream_t;

/* Predictor behind the planner, memoized per policy over the replay. */
static int predict_cb(void *user, const ps_query_t *q, size_t n, double *hp, double *lp)
{
    replay_t *rp = user;
    memo_t *mm = &rp->pred[rp->policy];
    for (size_t i = 0; i < n; i++) {
        step_t st = {q[i].hp_start, q[i].hp_len, q[i].hp_tpcs, q[i].lp_start, q[i].lp_len};
        uint64_t k = memo_key(&st);
        if (rp->policy == PS_REPLAY_ORACLE) {
            int rc = twin_run(&rp->tw, rp->req, &st, &hp[i], &lp[i]);
            if (rc != PS_OK)
                return rc;
            continue;
        }
        const double *v = memo_find(mm, k);
        if (v) {
            hp[i] = v[0];
            lp[i] = v[1];
            continue;
        }
        int rc;
        if (rp->policy == PS_REPLAY_INTENSITY)
            rc = ps_baseline_predict(rp->intensity, rp->ops, &q[i], 1, &hp[i], &lp[i]);
        else if (rp->policy == PS_REPLAY_PAIRSIGHT_BOUND)
            rc = ps_model_predict_bound(rp->m, rp->ops, &q[i], 1, rp->p->coverage, &hp[i], &lp[i]);
        else
            rc = ps_model_predict(rp->m, rp->ops, &q[i], 1, &hp[i], &lp[i]);
        if (rc == PS_OK)
            rc = memo_put(mm, k, hp[i], lp[i]);
        if (rc != PS_OK)
            return rc;
    }
    return PS_OK;
}

static double op_ns(const psi_op_group_t *g, int op, int tpcs)
{
    int k = psi_group_tpcs_index(g, tpcs);
    return k < 0 ? NAN : g->duration_ns[(size_t)op * (size_t)g->n_tpcs + (size_t)k];
}

static void lp_advance(const twin_t *t, lp_state_t *s, int n)
{
    s->pos += n;
    if (s->pos >= t->lw.n)
        s->pos = 0;
}

static double lp_segment_work(const twin_t *t, int b, int l)
{
    double w = 0;
    for (int j = b; j < b + l; j++)
        w += t->lp_alone[j];
    return w;
}

/* LP segment of a rule policy: operators from pos while the rule admits them
 * and their standalone time at lp_tpcs stays within limit_ns; with profile
 * >= 0 an operator of that intensity stops it (Orion). */
static int rule_lp_len(const replay_t *rp, int pos, int lp_tpcs, double limit_ns, int profile, int at_least_one)
{
    double sum = 0;
    int l = 0;
    for (int j = pos; j < rp->lg->n_ops && l < 64; j++) {
        if (profile > 0 && rp->lg->intensity[j] == profile)
            break;
        double d = op_ns(rp->lg, j, lp_tpcs);
        if (!(d >= 0) || (sum + d > limit_ns && !(at_least_one && l == 0)))
            break;
        sum += d;
        l++;
    }
    return l;
}

/* The dominant intensity (by standalone time at tpcs) of HP [a, a+len);
 * unknown when no operator of it is classed. */
static int hp_profile(const replay_t *rp, int a, int len, int tpcs)
{
    double c = 0, m = 0;
    for (int op = a; op < a + len; op++) {
        double d = op_ns(rp->hg, op, tpcs);
        if (rp->hg->intensity[op] == PS_INTENSITY_COMPUTE)
            c += d;
        else if (rp->hg->intensity[op] == PS_INTENSITY_MEMORY)
            m += d;
    }
    if (c == 0 && m == 0)
        return PS_INTENSITY_UNKNOWN; /* Orion co-runs beside an unprofiled kernel */
    return c >= m ? PS_INTENSITY_COMPUTE : PS_INTENSITY_MEMORY;
}

/* Execute step st (an alone step on the whole GPU whatever its th) for
 * request r of stream s; alone steps of consecutive segments are merged by
 * the caller. Returns the step's wall time. */
static int run_step(replay_t *rp, long r, step_t st, stream_t *s, double *dt)
{
    double h, x;
    if (!st.l)
        st.th = rp->tw.total;
    int rc = twin_run(&rp->tw, r, &st, &h, &x);
    *dt = h > x ? h : x;
    if (st.l) {
        s->lp_work += lp_segment_work(&rp->tw, st.b, st.l);
        lp_advance(&rp->tw, &s->lp, st.l);
    }
    return rc;
}

/* Serve request r under a rule policy: segments of the model window, each
 * beside the LP operators the rule admits at split th (th = 0: alone). */
static int serve_rule(replay_t *rp, int policy, int th, long r, stream_t *s, double *service)
{
    lp_state_t *lps = &s->lp;
    int n = rp->tw.hw.n, W = rp->m ? rp->m->layout.window : PS_WINDOW, K = (n + W - 1) / W;
    double t = 0;
    int alone_from = -1;
    for (int k = 0; k <= K; k++) {
        int a = k < K ? (int)((long long)k * n / K) : n, b = k < K ? (int)((long long)(k + 1) * n / K) : n;
        int l = 0;
        if (k < K && th > 0) {
            int lt = rp->tw.total - th;
            double hp_solo = 0;
            for (int op = a; op < b; op++)
                hp_solo += op_ns(rp->hg, op, th);
            int profile = policy == PS_REPLAY_ORION ? hp_profile(rp, a, b - a, th) : -1;
            l = rule_lp_len(rp, lps->pos, lt, hp_solo, profile, policy == PS_REPLAY_STATIC);
        }
        if (l == 0 && k < K) {
            if (alone_from < 0)
                alone_from = a;
            continue;
        }
        double dt;
        int rc;
        if (alone_from >= 0) {
            if ((rc = run_step(rp, r, (step_t){alone_from, a - alone_from, 0, 0, 0}, s, &dt)) != PS_OK)
                return rc;
            t += dt;
            alone_from = -1;
        }
        if (k == K)
            break;
        lps->carry = 0;
        if ((rc = run_step(rp, r, (step_t){a, b - a, th, lps->pos, l}, s, &dt)) != PS_OK)
            return rc;
        t += dt;
    }
    *service = t;
    return PS_OK;
}

/* Serve request r under a planner policy within budget (ns). */
static int serve_plan(replay_t *rp, int policy, long r, double budget, stream_t *s, double *service)
{
    lp_state_t *lps = &s->lp;
    ps_plan_params_t pp = ps_plan_default_params();
    pp.gpu = rp->gpu;
    pp.hp_model = rp->p->hp_model;
    pp.hp_batch = rp->p->hp_batch;
    pp.lp_model = rp->p->lp_model;
    pp.lp_batch = rp->p->lp_batch;
    pp.lp_start = lps->pos;
    pp.budget_ns = budget > 1 ? budget : 1;
    pp.coverage = policy == PS_REPLAY_PAIRSIGHT_BOUND ? rp->p->coverage : 0;
    pp.alone_op_ns = rp->tw.hp_alone;
    /* An alone step's fixed cost: dispatch, and with host-fed launches the
     * wait for its first kernel's launch after its start event (eq. 8c). */
    pp.alone_run_ns = rp->tw.ph.dispatch_ns + (rp->tw.ph.launch == SIM_LAUNCH_HOST ? rp->tw.ph.host_ns : 0.0);
    pp.time_value = rp->p->time_value; /* 1: LP runs alone on the whole GPU while HP is idle */
    pp.predict = predict_cb;
    pp.predict_user = rp;
    rp->req = r;
    rp->policy = policy;
    ps_plan_t *plan = NULL;
    int rc = ps_plan(rp->m, rp->ops, &pp, &plan);
    if (rc != PS_OK)
        return rc;
    s->plan_s += plan->seconds;
    double t = 0;
    for (size_t i = 0; i < plan->n_steps && rc == PS_OK; i++) {
        const ps_plan_step_t *ps = &plan->steps[i];
        double dt;
        if (ps->lp_len)
            lps->carry = 0;
        rc = run_step(rp, r, (step_t){ps->hp_start, ps->hp_len, ps->hp_tpcs, ps->lp_start, ps->lp_len}, s, &dt);
        t += dt;
    }
    ps_plan_free(plan);
    *service = t;
    return rc;
}

/* Replay stream s (its arrivals) under a policy into s's latencies and
 * sums; th is the split of the rule policies. slo <= 0: no budget known yet
 * (dedicated). */
static int replay_stream(replay_t *rp, int policy, int th, double slo, stream_t *s)
{
    const double *arr = s->arrival;
    long n = s->n;
    lp_state_t *lps = &s->lp;
    *lps = (lp_state_t){0, 0};
    s->lp_work = s->lp_idle = s->busy = s->plan_s = 0;
    s->kept = 0;
    double t = 0;
    for (long i = 0; i < n; i++) {
        double start = arr[i] > t ? arr[i] : t;
        if (start > t) {
            /* LP alone on the whole GPU while HP is idle. */
            double idle = start - t;
            s->lp_work += idle;
            s->lp_idle += idle;
            lps->carry += idle;
            while (lps->carry >= rp->tw.lp_alone[lps->pos]) {
                lps->carry -= rp->tw.lp_alone[lps->pos];
                lp_advance(&rp->tw, lps, 1);
            }
        }
        /* An LP operator cut off by the arrival is lost when a co-run step
         * restarts it. */
        double lost = lps->carry;
        double work_before = s->lp_work;
        double service = 0;
        int rc;
        if (policy == PS_REPLAY_DEDICATED)
            rc = run_step(rp, i, (step_t){0, rp->tw.hw.n, 0, 0, 0}, s, &service);
        else if (policy == PS_REPLAY_STATIC || policy == PS_REPLAY_ORION)
            rc = serve_rule(rp, policy, th, i, s, &service);
        else {
            /* Budget: this request's deadline, and every queued request's
             * deadline if it were then served alone (future arrivals are
             * not known). */
            double budget = slo - (start - arr[i]);
            /* Stretch only a request with no queue behind it: a queue
             * drains fastest alone. */
            double cap = rp->stretch * rp->dedicated_ns;
            if (i + 1 < n && arr[i + 1] <= start)
                cap = rp->dedicated_ns;
            if (cap < budget)
                budget = cap;
            for (long j = i + 1; j < n && arr[j] <= start; j++) {
                double b = arr[j] + slo - start - (double)(j - i) * rp->dedicated_ns;
                if (b < budget)
                    budget = b;
            }
            rc = serve_plan(rp, policy, i, budget, s, &service);
            s->kept += service <= (budget > rp->dedicated_ns ? budget : rp->dedicated_ns);
        }
        if (rc != PS_OK)
            return rc;
        if (s->lp_work > work_before && lost > 0) {
            s->lp_work -= lost;
            s->lp_idle -= lost;
            lps->carry = 0;
        }
        t = start + service;
        s->busy += service;
        s->lat[i] = t - arr[i];
    }
    s->wall = t;
    return PS_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of v[n] (sorted copy). */
static double percentile(const double *v, long n, double p, double *tmp)
{
    memcpy(tmp, v, (size_t)n * sizeof *tmp);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    long k = (long)ceil(p * (double)n) - 1;
    return tmp[k < 0 ? 0 : k >= n ? n - 1 : k];
}

static void arrivals(uint64_t seed, double mean_gap, long n, double *arr)
{
    uint64_t s = seed * 0xA24BAED4963EE407ULL + 0x9FB21C651E98DF25ULL;
    double t = 0;
    for (long i = 0; i < n; i++) {
        double u = (double)(psi_splitmix64(&s) >> 11) * (1.0 / 9007199254740992.0);
        t += -log(1.0 - u) * mean_gap;
        arr[i] = t;
    }
}

/* A warm-up stream: p->warmup arrivals of another seed, and run noise of
 * another seed too (a tuned knob never sees the reported stream's runs),
 * with the goal a knob is tuned to: the latency quantile q within slo. */
typedef struct {
    stream_t s;
    double *arr;
    double slo, q;
} warmup_t;

static void warmup_free(warmup_t *w)
{
    free(w->arr);
    free(w->s.lat);
    free(w->s.tmp);
}

static int warmup_init(const replay_t *rp, double slo, double q, warmup_t *w)
{
    long n = rp->p->warmup;
    w->slo = slo;
    w->q = q;
    w->s.n = n;
    w->arr = psi_malloc((size_t)n * sizeof *w->arr);
    w->s.lat = psi_malloc((size_t)n * sizeof *w->s.lat);
    w->s.tmp = psi_malloc((size_t)n * sizeof *w->s.tmp);
    w->s.arrival = w->arr;
    if (!w->arr || !w->s.lat || !w->s.tmp)
        return PS_E_NOMEM;
    arrivals(rp->p->seed ^ 0x5DEECE66DULL, rp->dedicated_ns / rp->p->load, n, w->arr);
    return PS_OK;
}

/* Whether policy (split th) meets the warm-up's goal. */
static int warmup_meets(replay_t *rp, warmup_t *w, int policy, int th, int *ok)
{
    uint64_t seed = rp->tw.seed;
    rp->tw.seed = seed ^ 0x2545F4914F6CDD1DULL;
    int rc = replay_stream(rp, policy, th, w->slo, &w->s);
    rp->tw.seed = seed;
    *ok = rc == PS_OK && percentile(w->s.lat, w->s.n, w->q, w->s.tmp) <= w->slo;
    return rc;
}

/* Orion's SM threshold: Orion adapts it by binary search against the HP
 * latency limit; here on the warm-up stream, the largest LP share whose
 * warm-up p99 stays within the budget (index -1: none). */
static int orion_tune(replay_t *rp, double slo, int *out_th)
{
    warmup_t w = {0};
    int rc = warmup_init(rp, slo, 0.99, &w);
    /* LP shares ascending = HP TPCs descending. */
    int lo = -1, hi = rp->n_splits - 1; /* lo meets the budget (-1: no co-location) */
    while (rc == PS_OK && lo < hi) {
        int mid = (lo + hi + 1) / 2, ok;
        rc = warmup_meets(rp, &w, PS_REPLAY_ORION, rp->splits[rp->n_splits - 1 - mid], &ok);
        if (ok)
            lo = mid;
        else
            hi = mid - 1;
    }
    *out_th = lo < 0 ? 0 : rp->splits[rp->n_splits - 1 - lo];
    warmup_free(&w);
    return rc;
}

/* A planner's service cap (x dedicated) for a request with no queue behind
 * it: p->stretch when given, else tuned as Orion's threshold is, on the
 * warm-up stream: the largest of the grid whose warm-up p99.5 stays within
 * the budget (1: never stretched, when none does). p99.5, not p99: a knob
 * tuned to exactly 99% on the warm-up misses 99% on about half of the other
 * streams, and the goal is >= 99% on them. */
static int stretch_tune(replay_t *rp, int policy, double slo, double *out)
{
    static const double grid[] = {1e9, 4, 2, 1.5, 1.2};
    if (rp->p->stretch > 0) {
        *out = rp->p->stretch;
        return PS_OK;
    }
    warmup_t w = {0};
    int rc = warmup_init(rp, slo, 0.995, &w), ok = 0;
    *out = 1;
    for (size_t i = 0; rc == PS_OK && !ok && i < sizeof grid / sizeof grid[0]; i++) {
        rp->stretch = grid[i];
        rc = warmup_meets(rp, &w, policy, 0, &ok);
        if (ok)
            *out = grid[i];
    }
    warmup_free(&w);
    return rc;
}

static int check_params(const ps_replay_params_t *p)
{
    if (!p->hp_model || !p->lp_model || p->hp_batch < 1 || p->lp_batch < 1)
        return psi_error(PS_E_ARG, "replay: both models and batch sizes are required");
    if (p->requests < 10 || p->requests > 1000000)
        return psi_error(PS_E_ARG, "requests %d outside 10..1000000", p->requests);
    if (!(p->load > 0 && p->load < 1))
        return psi_error(PS_E_ARG, "load %g outside (0, 1)", p->load);
    if (!(p->slo_factor >= 1 && p->slo_factor <= 100))
        return psi_error(PS_E_ARG, "slo factor %g outside 1..100", p->slo_factor);
    if (!(p->coverage >= 0.5 && p->coverage <= 0.999))
        return psi_error(PS_E_ARG, "coverage %g outside 0.5..0.999", p->coverage);
    if (!(p->stretch == 0 || (p->stretch >= 1 && p->stretch <= 1e9)))
        return psi_error(PS_E_ARG, "stretch %g: 0 or 1..1e9", p->stretch);
    if (!(p->time_value >= 0 && p->time_value <= 100))
        return psi_error(PS_E_ARG, "time value %g outside 0..100", p->time_value);
    if (!(p->goal_ratio > 0 && p->goal_ratio <= 100))
        return psi_error(PS_E_ARG, "goal ratio %g outside (0, 100]", p->goal_ratio);
    if (p->warmup < 10 || p->warmup > 100000 || !(p->noise >= 0 && p->noise < 1))
        return psi_error(PS_E_ARG, "warmup 10..100000, noise in [0, 1)");
    if (!p->policies || p->policies >= 1u << PS_REPLAY_N)
        return psi_error(PS_E_ARG, "no valid policy selected");
    return PS_OK;
}

/* The replay's state beside the twin: splits, the intensity rule, the
 * dedicated latency. */
static int replay_setup(replay_t *rp, const ps_model_t *m, const ps_ops_t *ops, const char *gpu,
                        const ps_replay_params_t *p)
{
    memset(rp, 0, sizeof *rp);
    rp->m = m;
    rp->ops = ops;
    rp->p = p;
    unsigned need_model = 1u << PS_REPLAY_PAIRSIGHT | 1u << PS_REPLAY_PAIRSIGHT_BOUND;
    if ((p->policies & need_model) && !m)
        return psi_error(PS_E_ARG, "the pairsight policies need a model");
    if ((p->policies & 1u << PS_REPLAY_INTENSITY) && !p->intensity_train)
        return psi_error(PS_E_ARG, "the intensity policy needs training co-executions (--coexec)");
    const psi_gpu_t *g = psi_sim_gpu_find(gpu ? gpu : m ? m->gpu : NULL);
    if (!g)
        return PS_E_ARG;
    rp->gpu = g->name;
    if (m && strcmp(m->gpu, g->name) != 0)
        return psi_error(PS_E_MISMATCH, "the model is for '%s', the replay for '%s'", m->gpu, g->name);
    int rc = twin_init(&rp->tw, g->name, p, ops);
    if (rc != PS_OK)
        return rc;
    rp->hg = psi_ops_find(ops, g->name, p->hp_model, p->hp_batch);
    rp->lg = psi_ops_find(ops, g->name, p->lp_model, p->lp_batch);
    for (int i = 0; i < rp->hg->n_tpcs && rp->n_splits < 64; i++) {
        int t = rp->hg->tpcs[i];
        if (t >= 1 && t < rp->tw.total && psi_group_tpcs_index(rp->lg, rp->tw.total - t) >= 0)
            rp->splits[rp->n_splits++] = t;
    }
    if (rp->n_splits == 0)
        return psi_error(PS_E_INPUT, "no SM split is profiled for both %s and %s", p->hp_model, p->lp_model);
    if ((p->policies & 1u << PS_REPLAY_INTENSITY) &&
        (rc = ps_baseline_train(PS_METHOD_INTENSITY_RULE, ops, p->intensity_train, NULL, &rp->intensity)) != PS_OK)
        return rc;
    rp->dedicated_ns = rp->tw.ph.dispatch_ns;
    if (rp->tw.ph.launch == SIM_LAUNCH_HOST) { /* a dedicated request, fed by the host (eq. 8c) */
        const sim_placed_t *hp = &rp->tw.hp_placed[(size_t)rp->tw.total * rp->tw.hw.n];
        rp->dedicated_ns += psi_sim_coexec(rp->tw.g, &rp->tw.ph, hp, rp->tw.hw.n, NULL, 0).a_ns;
    } else {
        for (int k = 0; k < rp->tw.hw.n; k++)
            rp->dedicated_ns += rp->tw.hp_alone[k];
    }
    return PS_OK;
}

/* Tune a policy's knob (static: the profiled split nearest even; orion: its
 * SM threshold; planners: the stretch) into *th and r. */
static int policy_knob(replay_t *rp, int pol, double slo, int *th, ps_replay_policy_result_t *r)
{
    *th = 0;
    if (pol == PS_REPLAY_STATIC) {
        for (int i = 0; i < rp->n_splits; i++)
            if (*th == 0 || abs(2 * rp->splits[i] - rp->tw.total) < abs(2 * *th - rp->tw.total))
                *th = rp->splits[i];
    } else if (pol == PS_REPLAY_ORION && rp->p->orion_lp_tpcs > 0) {
        for (int i = 0; i < rp->n_splits && !*th; i++)
            if (rp->tw.total - rp->splits[i] == rp->p->orion_lp_tpcs)
                *th = rp->splits[i];
        if (!*th)
            return psi_error(
                PS_E_ARG, "orion LP TPCs %d: no split of %d TPCs with LP %d is profiled for both %s and %s",
                rp->p->orion_lp_tpcs, rp->tw.total, rp->p->orion_lp_tpcs, rp->p->hp_model, rp->p->lp_model);
        r->orion_tpcs = rp->p->orion_lp_tpcs;
    } else if (pol == PS_REPLAY_ORION) {
        int rc = orion_tune(rp, slo, th);
        if (rc != PS_OK)
            return rc;
        r->orion_tpcs = *th ? rp->tw.total - *th : 0;
    } else if (pol >= PS_REPLAY_INTENSITY) {
        int rc = stretch_tune(rp, pol, slo, &rp->stretch);
        if (rc != PS_OK)
            return rc;
        r->stretch = rp->stretch;
    }
    return PS_OK;
}

/* Run one policy on stream s (its arrivals and scratch; its latencies go to
 * r) into r; the dedicated policy sets the budget *slo. */
static int run_policy(replay_t *rp, int pol, stream_t *s, double *slo, ps_replay_policy_result_t *r)
{
    long n = s->n;
    r->latency_ns = psi_malloc((size_t)n * sizeof *r->latency_ns);
    if (!r->latency_ns)
        return PS_E_NOMEM;
    int th, rc = policy_knob(rp, pol, *slo, &th, r);
    if (rc != PS_OK)
        return rc;
    s->lat = r->latency_ns;
    if ((rc = replay_stream(rp, pol, th, *slo, s)) != PS_OK)
        return rc;
    if (pol == PS_REPLAY_DEDICATED)
        *slo = rp->p->slo_factor * percentile(s->lat, n, 0.99, s->tmp);
    long ok = 0;
    for (long i = 0; i < n; i++)
        ok += s->lat[i] <= *slo;
    r->ran = 1;
    r->slo_attainment = (double)ok / (double)n;
    r->hp_p50_ns = percentile(s->lat, n, 0.50, s->tmp);
    r->hp_p99_ns = percentile(s->lat, n, 0.99, s->tmp);
    r->lp_throughput = s->wall > 0 ? s->lp_work / s->wall : 0;
    r->lp_idle = s->wall > 0 ? s->lp_idle / s->wall : 0;
    r->lp_colo = r->lp_throughput - r->lp_idle;
    r->gpu_busy = s->wall > 0 ? s->busy / s->wall : 0;
    r->plan_us = 1e6 * s->plan_s / (double)n;
    r->budget_kept = pol >= PS_REPLAY_INTENSITY ? (double)s->kept / (double)n : NAN;
    return PS_OK;
}

void psi_replay_ceiling(ps_replay_result_t *r, double goal)
{
    const ps_replay_policy_result_t *o = &r->pol[PS_REPLAY_ORION], *d = &r->pol[PS_REPLAY_DEDICATED];
    r->lp_ceiling = r->lp_rate_needed = NAN;
    if (!o->ran || !(o->lp_throughput > 0))
        return;
    /* Every policy: lp_throughput = lp_idle + lp_colo, lp_idle <= 1 - busy,
     * lp_colo = rate x busy with rate <= 1 (an LP operator beside HP on
     * part of the GPU is never faster than alone on all of it); and its
     * busy share is at least dedicated's (HP is never faster than alone). */
    r->lp_ceiling = 1 / o->lp_throughput;
    if (d->ran && d->gpu_busy > 0)
        r->lp_rate_needed = 1 - (1 - goal * o->lp_throughput) / d->gpu_busy;
}

int ps_replay_run(const ps_model_t *m, const ps_ops_t *ops, const char *gpu, const ps_replay_params_t *p,
                  ps_replay_result_t *out)
{
    if (!ops || !p || !out)
        return psi_error(PS_E_ARG, "ps_replay_run: NULL argument");
    memset(out, 0, sizeof *out);
    int rc = check_params(p);
    if (rc != PS_OK)
        return rc;
    replay_t rp;
    long n = p->requests;
    double *arr = psi_malloc((size_t)n * sizeof *arr), *tmp = psi_malloc((size_t)n * sizeof *tmp);
    rc = replay_setup(&rp, m, ops, gpu, p);
    if (rc == PS_OK && (!arr || !tmp))
        rc = PS_E_NOMEM;
    if (rc == PS_OK) {
        out->dedicated_ns = rp.dedicated_ns;
        out->requests = (size_t)n;
        arrivals(p->seed, rp.dedicated_ns / p->load, n, arr);
    }
    /* The dedicated policy runs first, always: it sets the budget. */
    double slo = 0;
    stream_t s = {.arrival = arr, .tmp = tmp, .n = n};
    for (int pol = 0; rc == PS_OK && pol < PS_REPLAY_N; pol++)
        if (pol == PS_REPLAY_DEDICATED || (p->policies & 1u << pol))
            rc = run_policy(&rp, pol, &s, &slo, &out->pol[pol]);
    out->slo_ns = slo;
    if (rc == PS_OK)
        psi_replay_ceiling(out, p->goal_ratio);
    if (rc == PS_OK && !(p->policies & 1u << PS_REPLAY_DEDICATED)) {
        free(out->pol[PS_REPLAY_DEDICATED].latency_ns);
        memset(&out->pol[PS_REPLAY_DEDICATED], 0, sizeof out->pol[0]);
    }
    free(arr);
    free(tmp);
    twin_free(&rp.tw);
    for (int i = 0; i < PS_REPLAY_N; i++)
        memo_free(&rp.pred[i]);
    ps_baseline_free(rp.intensity);
    if (rc != PS_OK)
        ps_replay_result_free(out);
    return rc;
}
