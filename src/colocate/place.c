/*
 * Placement over a cluster (`colocate place`, `colocate eval --place`):
 * assign jobs to GPUs, alone or up to K per GPU, maximizing the sum of
 * normalized throughputs (Gavel's space-sharing objective).
 *
 * Exact: dynamic programming over job subsets S and the GPUs still free of
 * each type, f(S, c) = max( f(S - i, c),  max over groups T holding i,
 * |T| <= K, types t with c_t > 0 of val_t(T) + f(S - T, c - e_t) ), i the
 * lowest job of S (so every partition is met once; a job may wait, value
 * 0). Used while 2^n x prod(c_t + 1) <= 2^21. Beyond, a heuristic: greedy
 * (each job to the GPU with the largest gain), then local search (move one
 * job, or swap two, while the objective rises), from 4 job orders; the best
 * is kept. docs/colocate.md. The scoring of placements with the measured
 * table (`colocate eval --place`) is place_eval.c.
 *
 * Cost: the unit is a group's value, one prediction per choice of shares
 * (3^k for k jobs and 3 shares: 81 at K = 4, about 2 ms each for mps on
 * one core), kept per GPU type and workloads so that jobs of one workload
 * share them. A time budget (ps_coloc_place_params_t.time_limit_s, 5 s by
 * default) gives the exact search half of it and the heuristic the rest;
 * past it the best placement found is returned, marked stopped. The
 * greedy placement that starts the heuristic always completes.
 */
#include "colocate/colocate.h"
#include "colocate/model_internal.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_STATES (1u << 21)
/* Groups of up to MV_K jobs have their model values kept (model_val). */
#define MV_K 8

typedef struct {
    int n, ng, ntypes, K;
    double wait; /* penalty of a waiting job (0: waiting is free) */
    const int *gtype;
    cl_group_value_fn val;
    void *ctx;
    double *memo; /* [2^n * ntypes] for the DP, NAN = not computed */
    /* the heuristic's group values by (jobs, type): an open-addressing
     * table of cap entries (a power of 2), used of them taken */
    struct gv {
        uint64_t jobs;
        int type; /* -1: empty */
        double v;
    } * gv;
    size_t gv_cap, gv_used;
    /* the budget (NULL: none): deadlines of the exact search and of the
     * whole search (0: none), the next progress report */
    cl_place_budget_t *b;
    double start, dp_deadline, deadline, next_report;
    const char *stage;
} solver_t;

/* Whether the search is past deadline d (0: none); reports the seconds
 * spent four times a second. Called between group evaluations, the unit of
 * the search's cost (a model's value is a prediction per share choice). */
static int past(solver_t *s, double d)
{
    if (!s->b)
        return 0;
    double now = psi_now();
    if (s->b->progress && now >= s->next_report) {
        s->b->progress(s->stage, now - s->start, s->b->time_limit_s, s->b->user);
        s->next_report = now + 0.25;
    }
    return d > 0 && now > d;
}

static double group_val(solver_t *s, int t, unsigned mask)
{
    double *m = s->memo ? &s->memo[(size_t)mask * s->ntypes + t] : NULL;
    if (m && !isnan(*m))
        return *m;
    int jobs[64] = {0}, k = 0, sh[64];
    for (int i = 0; i < s->n; i++)
        if (mask >> i & 1)
            jobs[k++] = i;
    double v = s->val(s->ctx, t, jobs, k, sh);
    if (m)
        *m = v;
    return v;
}

/* Enumerate subsets U of rest with |U| <= left, calling back with i | U. */
typedef struct {
    solver_t *s;
    double *f;
    int C, *radix, *stride;
    unsigned S;
    int c;
    double best;
    unsigned best_t;
    int best_type;
} dpctx_t;

static void try_group(dpctx_t *x, unsigned T)
{
    for (int t = 0; t < x->s->ntypes; t++) {
        int ct = x->c / x->stride[t] % x->radix[t];
        if (ct == 0)
            continue;
        double v = group_val(x->s, t, T);
        if (!(v > -INFINITY))
            continue;
        v += x->f[(size_t)(x->S & ~T) * x->C + (x->c - x->stride[t])];
        if (v > x->best + 1e-12) {
            x->best = v;
            x->best_t = T;
            x->best_type = t;
        }
    }
}

static void enum_groups(dpctx_t *x, unsigned T, unsigned rest, int left)
{
    try_group(x, T);
    if (left == 0)
        return;
    while (rest) {
        unsigned b = rest & -rest;
        rest &= ~b;
        enum_groups(x, T | b, rest, left - 1);
    }
}

static void dp_free(solver_t *s, double *f, unsigned *ch, signed char *cht)
{
    free(f);
    free(ch);
    free(cht);
    free(s->memo);
    s->memo = NULL;
}

static int solve_exact(solver_t *s, const int *count, int *assign, double *obj, int *group_type)
{
    int radix[16], stride[16], C = 1;
    for (int t = 0; t < s->ntypes; t++) {
        radix[t] = count[t] + 1;
        stride[t] = C;
        C *= radix[t];
    }
    size_t ns = (size_t)1 << s->n;
    double *f = psi_malloc(ns * C * sizeof *f);
    unsigned *ch = psi_malloc(ns * C * sizeof *ch);
    signed char *cht = psi_malloc(ns * C);
    s->memo = psi_malloc(ns * s->ntypes * sizeof *s->memo);
    if (!f || !ch || !cht || !s->memo)
        return dp_free(s, f, ch, cht), PS_E_NOMEM;
    for (size_t i = 0; i < ns * s->ntypes; i++)
        s->memo[i] = NAN;
    for (int c = 0; c < C; c++) {
        f[c] = 0;
        ch[c] = 0;
    }
    dpctx_t x = {.s = s, .f = f, .C = C, .radix = radix, .stride = stride};
    for (size_t S = 1; S < ns; S++) {
        unsigned lo = (unsigned)(S & -S);
        if ((S & 15) == 0 && past(s, s->dp_deadline)) /* out of time: the heuristic takes over */
            return dp_free(s, f, ch, cht), 1;
        for (int c = 0; c < C; c++) {
            x.S = (unsigned)S;
            x.c = c;
            x.best = f[(S & ~lo) * C + c] - s->wait; /* the lowest job waits */
            x.best_t = 0;
            x.best_type = -1;
            enum_groups(&x, lo, (unsigned)S & ~lo, s->K - 1);
            f[S * C + c] = x.best;
            ch[S * C + c] = x.best_t;
            cht[S * C + c] = (signed char)x.best_type;
        }
    }
    /* Follow the choices from every job and every GPU free. */
    unsigned S = (unsigned)(ns - 1);
    int c = C - 1, g = 0;
    *obj = f[(size_t)S * C + c];

    int used[16] = {0};
    for (int i = 0; i < s->n; i++)
        assign[i] = -1;
    while (S) {
        unsigned T = ch[(size_t)S * C + c];
        int t = cht[(size_t)S * C + c];
        if (!T) {
            S &= ~(S & -S);
            continue;
        }
        /* the next unused GPU of type t */
        int gi = -1, seen = 0;
        for (int k = 0; k < s->ng && gi < 0; k++)
            if (s->gtype[k] == t && seen++ == used[t])
                gi = k;
        used[t]++;
        group_type[g++] = t;
        for (int i = 0; i < s->n; i++)
            if (T >> i & 1)
                assign[i] = gi;
        S &= ~T;
        c -= stride[t];
    }
    dp_free(s, f, ch, cht);
    return 0;
}

/* The slot of (jobs, t) in the table: its entry, or the empty one where it
 * goes. */
static struct gv *gv_slot(const solver_t *s, uint64_t jobs, int t)
{
    uint64_t h = (jobs ^ (uint64_t)t * 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
    for (size_t i = (size_t)(h >> 17) & (s->gv_cap - 1);; i = (i + 1) & (s->gv_cap - 1))
        if (s->gv[i].type < 0 || (s->gv[i].jobs == jobs && s->gv[i].type == t))
            return &s->gv[i];
}

/* Keeps v as the value of (jobs, t), growing the table at half full (the
 * value is only not kept when memory runs out). */
static void gv_put(solver_t *s, uint64_t jobs, int t, double v)
{
    if (2 * (s->gv_used + 1) > s->gv_cap) {
        size_t cap = s->gv_cap ? 2 * s->gv_cap : 4096;
        struct gv *old = s->gv, *nt = psi_malloc(cap * sizeof *nt);
        if (!nt)
            return;
        for (size_t i = 0; i < cap; i++)
            nt[i].type = -1;
        size_t oc = s->gv_cap;
        s->gv = nt;
        s->gv_cap = cap;
        for (size_t i = 0; i < oc; i++)
            if (old[i].type >= 0)
                *gv_slot(s, old[i].jobs, old[i].type) = old[i];
        free(old);
    }
    struct gv *e = gv_slot(s, jobs, t);
    s->gv_used += e->type < 0;
    *e = (struct gv){jobs, t, v};
}

/* Value of GPU g's group under assignment a (0 when empty); each group's
 * value is computed once (the local search asks for the same groups again
 * and again, and a model's value is a prediction). */
static double gpu_val(solver_t *s, const int *a, int g, int extra, int without)
{
    int jobs[64] = {0}, k = 0, sh[64];
    uint64_t mask = 0;
    for (int i = 0; i < s->n; i++)
        if ((a[i] == g && i != without) || i == extra) {
            jobs[k++] = i;
            mask |= 1ull << i;
        }
    if (!k)
        return 0;
    if (k > s->K)
        return -INFINITY;
    struct gv *e = s->gv_cap ? gv_slot(s, mask, s->gtype[g]) : NULL;
    if (e && e->type >= 0)
        return e->v;
    double v = s->val(s->ctx, s->gtype[g], jobs, k, sh);
    gv_put(s, mask, s->gtype[g], v);
    return v;
}

static double total(solver_t *s, const int *a)
{
    double v = 0;
    for (int g = 0; g < s->ng; g++)
        v += gpu_val(s, a, g, -1, -1);
    for (int i = 0; i < s->n; i++)
        v -= a[i] < 0 ? s->wait : 0;
    return v;
}

static void local_search(solver_t *s, int *a, const int *order)
{
    for (int i = 0; i < s->n; i++)
        a[i] = -1;
    for (int oi = 0; oi < s->n; oi++) {
        int j = order[oi], best_g = -1;
        past(s, 0); /* progress only: the greedy placement always completes */
        double best = 1e-12 - s->wait;
        for (int g = 0; g < s->ng; g++) {
            double gain = gpu_val(s, a, g, j, -1) - gpu_val(s, a, g, -1, -1);
            if (gain > best) {
                best = gain;
                best_g = g;
            }
        }
        a[j] = best_g;
    }
    for (int pass = 0; pass < 100 && !past(s, s->deadline); pass++) {
        int improved = 0;
        for (int j = 0; j < s->n && !past(s, s->deadline); j++) {
            int from = a[j];
            double lose = from >= 0 ? gpu_val(s, a, from, -1, j) - gpu_val(s, a, from, -1, -1) : s->wait;
            for (int g = -1; g < s->ng; g++) {
                if (g == from)
                    continue;
                double gain = g >= 0 ? gpu_val(s, a, g, j, -1) - gpu_val(s, a, g, -1, -1) : -s->wait;
                if (gain + lose > 1e-9) {
                    a[j] = g;
                    improved = 1;
                    break;
                }
            }
        }
        for (int i = 0; i < s->n && !past(s, s->deadline); i++)
            for (int j = i + 1; j < s->n; j++) {
                if (a[i] == a[j])
                    continue;
                double before = total(s, a);
                int t = a[i];
                a[i] = a[j];
                a[j] = t;
                if (total(s, a) > before + 1e-9) {
                    improved = 1;
                } else {
                    a[j] = a[i];
                    a[i] = t;
                }
            }
        if (!improved)
            break;
    }
}

/* Greedy + local search from 4 job orders (the first the given one), the
 * best kept in assign; later orders are skipped past the deadline. */
static int solve_heuristic(solver_t *s, uint64_t seed, int *assign, double *objective)
{
    int n = s->n;
    int *a = psi_malloc((size_t)n * sizeof *a + 1), *order = psi_malloc((size_t)n * sizeof *order + 1);
    if (!a || !order) {
        free(a);
        free(order);
        return PS_E_NOMEM;
    }
    uint64_t st = seed;
    *objective = -INFINITY;
    s->stage = "placement: local search (s of the time limit)";
    for (int r = 0; r < 4; r++) {
        if (r > 0 && past(s, s->deadline)) {
            s->b->stopped = 1;
            break;
        }
        for (int i = 0; i < n; i++)
            order[i] = i;
        for (int i = n - 1; i > 0 && r > 0; i--) {
            int j = (int)(psi_splitmix64(&st) % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        local_search(s, a, order);
        double v = total(s, a);
        if (v > *objective) {
            *objective = v;
            memcpy(assign, a, (size_t)n * sizeof *a);
        }
    }
    if (past(s, s->deadline))
        s->b->stopped = 1;
    free(a);
    free(order);
    free(s->gv);
    s->gv = NULL;
    return 0;
}

int psi_cl_gpu_jobs(const int *assign, int n, int g, int *jobs)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (assign[i] == g)
            jobs[k++] = i;
    return k;
}

int psi_cl_place_solve(const cl_place_problem_t *pb, uint64_t seed, cl_place_budget_t *budget, cl_placement_t *out)
{
    const int n = pb->n, ng = pb->ng, ntypes = pb->ntypes, max_per_gpu = pb->max_per_gpu, *gtype = pb->gtype;
    const double wait_penalty = pb->wait_penalty;
    int *assign = out->assign, *share = out->share, *exact = &out->exact;
    double *objective = &out->objective;
    if (n < 0 || n > 64 || ng < 0 || ntypes < 1 || ntypes > 16 || max_per_gpu < 1)
        return psi_error(PS_E_ARG, "place: 0..64 jobs, up to 16 GPU types, K >= 1");
    solver_t s = {.n = n,
                  .ng = ng,
                  .ntypes = ntypes,
                  .K = max_per_gpu,
                  .wait = wait_penalty,
                  .gtype = gtype,
                  .val = pb->val,
                  .ctx = pb->ctx,
                  .b = budget,
                  .start = psi_now(),
                  .stage = "placement: exact search (s of the time limit)"};
    if (budget) {
        double lim = budget->time_limit_s > 0 ? budget->time_limit_s : 0;
        s.dp_deadline = lim > 0 ? s.start + lim / 2 : 0;
        s.deadline = lim > 0 ? s.start + lim : 0;
        s.next_report = s.start;
        budget->stopped = 0;
    }
    int count[16] = {0};
    for (int g = 0; g < ng; g++)
        count[gtype[g]]++;
    double states = ldexp(1.0, n);
    for (int t = 0; t < ntypes; t++)
        states *= count[t] + 1;
    int rc = 0, gt[64];
    *exact = n <= 20 && states <= EXACT_STATES;
    if (*exact && (rc = solve_exact(&s, count, assign, objective, gt)) == 1) {
        *exact = 0; /* the exact search ran out of its half of the time */
        budget->stopped = 1;
    }
    if (rc < 0)
        return rc;
    if (!*exact && (rc = solve_heuristic(&s, seed, assign, objective)) != 0)
        return rc;
    /* The objective without the waiting penalty. */
    for (int i = 0; i < n; i++)
        *objective += assign[i] < 0 ? wait_penalty : 0;
    /* The shares of each group, as its value chose them. */
    for (int i = 0; i < n; i++)
        share[i] = 0;
    for (int g = 0; g < ng; g++) {
        int jobs[64], sh[64], k = psi_cl_gpu_jobs(assign, n, g, jobs);
        if (!k)
            continue;
        for (int i = 0; i < k; i++)
            sh[i] = 100;
        pb->val(pb->ctx, gtype[g], jobs, k, sh);
        for (int i = 0; i < k; i++)
            share[jobs[i]] = sh[i];
    }
    return 0;
}

/* ---- placement with a model ---- */

ps_coloc_place_params_t ps_coloc_place_default_params(void)
{
    ps_coloc_place_params_t p = {.max_per_gpu = 2, .shares = NULL, .n_shares = 0, .seed = 0, .time_limit_s = 5};
    return p;
}

void ps_coloc_placement_free(ps_coloc_placement_t *pl)
{
    if (!pl)
        return;
    free(pl->gpu);
    free(pl->share);
    free(pl->norm_tput);
    memset(pl, 0, sizeof *pl);
}

typedef struct {
    const ps_coloc_model_t *m;
    cl_data_t *d;
    int ntypes;
    int *wi;           /* [n_jobs * ntypes] workload index, -1 when missing */
    const int *shares; /* allowed shares */
    int n_shares;
    double *norm; /* [n_jobs] last group's per-job values (scratch) */
    int rc;
    /* model_val's results by (type, the group's workloads in job order):
     * jobs of one workload give equal groups, and a group's value costs a
     * prediction per share choice (81 for K = 4 and 3 shares) */
    struct mv {
        int t, k, w[MV_K], sh[MV_K];
        double v, each[MV_K];
    } * mv;
    size_t mv_cap, mv_used;
} mctx_t;

/* Normalized throughputs of jobs[k] on type t at shares sh: per-slot
 * predictions (sum kinds: the predicted sum split in proportion to solo
 * throughput at the share) over each job's exclusive throughput. */
static double model_group(mctx_t *x, int t, const int *jobs, int k, const int *sh, double *each)
{
    int w[64], share[64];
    double tput[64], slot[64];
    int slots[64];
    for (int i = 0; i < k; i++) {
        w[i] = x->wi[jobs[i] * x->ntypes + t];
        if (w[i] < 0)
            return -INFINITY;
        share[i] = sh[i];
        tput[i] = NAN;
        slots[i] = i + 1;
    }
    if (k == 1) {
        each[0] = psi_cl_solo(x->d, w[0], sh[0]) / x->d->w[w[0]].f[CW_EXCL];
        return each[0];
    }
    cl_coloc_t c = {.id = "place", .k = k, .w = w, .share = share, .tput = tput, .slot = slots};
    cl_data_t d2 = *x->d;
    d2.c = &c;
    d2.nc = 1;
    int rc = psi_cl_model_slots(x->m, &d2, 0, slot);
    if (rc) {
        x->rc = rc;
        return -INFINITY;
    }
    double v = 0;
    for (int i = 0; i < k; i++) {
        each[i] = fmax(0, slot[i]) / x->d->w[w[i]].f[CW_EXCL];
        v += each[i];
    }
    return v;
}

/* The slot of group (t, w[k]) in x->mv: its entry, or the empty one
 * (k = 0) where it goes; the table is grown at half full. */
static struct mv *mv_slot(mctx_t *x, int t, const int *w, int k)
{
    if (2 * (x->mv_used + 1) > x->mv_cap) {
        size_t cap = x->mv_cap ? 2 * x->mv_cap : 1024, oc = x->mv_cap;
        struct mv *old = x->mv, *nt = psi_calloc(cap, sizeof *nt);
        if (!nt)
            return NULL;
        x->mv = nt;
        x->mv_cap = cap;
        x->mv_used = 0;
        for (size_t i = 0; i < oc; i++)
            if (old[i].k) {
                *mv_slot(x, old[i].t, old[i].w, old[i].k) = old[i];
                x->mv_used++;
            }
        free(old);
    }
    uint64_t h = (uint64_t)t * 0x9E3779B97F4A7C15ull + (uint64_t)k;
    for (int i = 0; i < k; i++)
        h = (h ^ (uint64_t)w[i]) * 0xBF58476D1CE4E5B9ull;
    for (size_t i = (size_t)(h >> 17) & (x->mv_cap - 1);; i = (i + 1) & (x->mv_cap - 1)) {
        struct mv *e = &x->mv[i];
        if (!e->k || (e->t == t && e->k == k && memcmp(e->w, w, (size_t)k * sizeof *w) == 0))
            return e;
    }
}

static double model_val_search(mctx_t *x, int t, const int *jobs, int k, int *shares);

static double model_val(void *ctx, int t, const int *jobs, int k, int *shares)
{
    mctx_t *x = ctx;
    int w[MV_K];
    struct mv *e = NULL;
    for (int i = 0; i < k && k <= MV_K; i++)
        w[i] = x->wi[jobs[i] * x->ntypes + t];
    if (k <= MV_K && (e = mv_slot(x, t, w, k)) && e->k) {
        for (int i = 0; i < k; i++) {
            shares[i] = e->sh[i];
            x->norm[jobs[i]] = e->each[i];
        }
        return e->v;
    }
    double v = model_val_search(x, t, jobs, k, shares);
    if (e && !x->rc && v > -INFINITY) {
        *e = (struct mv){.t = t, .k = k, .v = v};
        memcpy(e->w, w, (size_t)k * sizeof *w);
        for (int i = 0; i < k; i++) {
            e->sh[i] = shares[i];
            e->each[i] = x->norm[jobs[i]];
        }
        x->mv_used++;
    }
    return v;
}

/* A group's best value over every assignment of the allowed shares. */
static double model_val_search(mctx_t *x, int t, const int *jobs, int k, int *shares)
{
    static const int hundred = 100;
    /* the allowed shares are a co-located job's: a job alone has the GPU */
    const int *al = x->n_shares && k > 1 ? x->shares : &hundred;
    int na = x->n_shares && k > 1 ? x->n_shares : 1, sh[64], idx[64] = {0};
    double best = -INFINITY, each[64];
    /* every assignment of allowed shares (at most 4096 tried) */
    for (int tries = 0; tries < 4096; tries++) {
        for (int i = 0; i < k; i++)
            sh[i] = al[idx[i]];
        double v = model_group(x, t, jobs, k, sh, each);
        if (v > best) {
            best = v;
            for (int i = 0; i < k; i++) {
                shares[i] = sh[i];
                x->norm[jobs[i]] = each[i];
            }
        }
        int i = 0;
        while (i < k && ++idx[i] == na)
            idx[i++] = 0;
        if (i == k)
            break;
    }
    return best;
}

/* GPU types: the distinct names of gpu_types (NULL: "any"), gtype[g] the
 * index of GPU g's. */
static int gpu_type_index(const char *const *gpu_types, int n_gpus, const char **tname, int *ntypes, int *gtype)
{
    for (int g = 0; g < n_gpus; g++) {
        const char *nm = gpu_types ? gpu_types[g] : NULL;
        int t = -1;
        for (int i = 0; i < *ntypes && t < 0; i++)
            if ((!nm && !tname[i]) || (nm && tname[i] && strcmp(nm, tname[i]) == 0))
                t = i;
        if (t < 0) {
            if (*ntypes == 16)
                return psi_error(PS_E_ARG, "place: more than 16 GPU types");
            tname[t = (*ntypes)++] = nm;
        }
        gtype[g] = t;
    }
    return 0;
}

static int same_gpu(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* A GPU of no type named takes the jobs' own rows: refused where that does
 * not say which GPU (a job with rows on several, or jobs on different
 * ones), rather than taking the first row's. */
static int untyped_rows(const cl_data_t *d, const char *const *jobs, int n_jobs, int t, int ntypes, const int *wi)
{
    int first = -1;
    for (int j = 0; j < n_jobs; j++) {
        int w = wi[j * ntypes + t];
        if (w < 0)
            continue;
        for (int i = w + 1; i < d->nw; i++)
            if (strcmp(d->w[i].name, jobs[j]) == 0 && !same_gpu(d->w[i].gpu, d->w[w].gpu))
                return psi_error(PS_E_INPUT,
                                 "place: job '%s' has rows on several GPUs in workloads.csv (%s, %s): give "
                                 "--gpus N:TYPE",
                                 jobs[j], d->w[w].gpu ? d->w[w].gpu : "-", d->w[i].gpu ? d->w[i].gpu : "-");
        if (first < 0)
            first = j;
        else if (!same_gpu(d->w[w].gpu, d->w[wi[first * ntypes + t]].gpu))
            return psi_error(PS_E_INPUT,
                             "place: jobs '%s' (on %s) and '%s' (on %s) are on different GPUs in workloads.csv: "
                             "give --gpus N:TYPE",
                             jobs[first], d->w[wi[first * ntypes + t]].gpu, jobs[j], d->w[w].gpu);
    }
    return 0;
}

/* wi[j * ntypes + t]: job j's workload on GPU type t (-1: none). */
static int job_workloads(const cl_data_t *d, const char *const *jobs, int n_jobs, const char **tname, int ntypes,
                         int *wi)
{
    for (int j = 0; j < n_jobs; j++) {
        int any = 0;
        for (int t = 0; t < ntypes; t++) {
            int w = -1;
            for (int i = 0; i < d->nw && w < 0; i++)
                if (strcmp(d->w[i].name, jobs[j]) == 0 &&
                    (!tname[t] || (d->w[i].gpu && strcmp(d->w[i].gpu, tname[t]) == 0)))
                    w = i;
            wi[j * ntypes + t] = w;
            any |= w >= 0;
        }
        if (!any)
            return psi_error(PS_E_INPUT, "place: job '%s' is not in workloads.csv on any of the GPU types", jobs[j]);
    }
    for (int t = 0; t < ntypes; t++)
        if (!tname[t] && untyped_rows(d, jobs, n_jobs, t, ntypes, wi))
            return PS_E_INPUT;
    return 0;
}

int ps_coloc_place(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                   const char *const *jobs, int n_jobs, const char *const *gpu_types, int n_gpus,
                   const ps_coloc_place_params_t *p, ps_coloc_placement_t *out)
{
    memset(out, 0, sizeof *out);
    ps_coloc_place_params_t def = ps_coloc_place_default_params();
    if (!p)
        p = &def;
    if (n_jobs < 1 || n_jobs > 64 || n_gpus < 1 || n_gpus > 64)
        return psi_error(PS_E_ARG, "place: need 1..64 jobs and 1..64 GPUs");
    ps_colocations_t *none = ps_colocations_new();
    cl_data_t *d = NULL;
    int rc = none ? psi_cl_data_build(w, scaling, none, NULL, &d) : PS_E_NOMEM;
    ps_colocations_free(none);
    if (rc)
        return rc;
    const char *tname[16];
    int ntypes = 0, gtype[64];
    rc = gpu_type_index(gpu_types, n_gpus, tname, &ntypes, gtype);
    mctx_t x = {.m = m, .d = d, .ntypes = ntypes, .shares = p->shares, .n_shares = p->n_shares};
    x.wi = psi_malloc((size_t)n_jobs * (ntypes ? ntypes : 1) * sizeof *x.wi + 1);
    x.norm = psi_calloc((size_t)n_jobs + 1, sizeof *x.norm);
    out->gpu = psi_malloc((size_t)n_jobs * sizeof *out->gpu + 1);
    out->share = psi_malloc((size_t)n_jobs * sizeof *out->share + 1);
    out->norm_tput = psi_calloc((size_t)n_jobs + 1, sizeof *out->norm_tput);
    if (!rc && (!x.wi || !x.norm || !out->gpu || !out->share || !out->norm_tput))
        rc = PS_E_NOMEM;
    if (!rc)
        rc = job_workloads(d, jobs, n_jobs, tname, ntypes, x.wi);
    cl_place_budget_t budget = {p->time_limit_s, p->progress, p->progress_user, 0};
    const cl_place_problem_t pb = {.n = n_jobs,
                                   .gtype = gtype,
                                   .ng = n_gpus,
                                   .ntypes = ntypes,
                                   .max_per_gpu = p->max_per_gpu,
                                   .wait_penalty = p->allow_wait ? 0 : PLACE_WAIT_PENALTY,
                                   .val = model_val,
                                   .ctx = &x};
    cl_placement_t pl = {.assign = out->gpu, .share = out->share};
    if (!rc)
        rc = psi_cl_place_solve(&pb, p->seed, &budget, &pl);
    out->objective = pl.objective;
    out->exact = pl.exact;
    out->stopped = budget.stopped;
    if (!rc)
        rc = x.rc;
    if (!rc) {
        /* per-job values of the chosen groups */
        out->objective = 0;
        for (int g = 0; g < n_gpus; g++) {
            int js[64], sh[64], k = psi_cl_gpu_jobs(out->gpu, n_jobs, g, js);
            if (!k)
                continue;
            out->objective += model_val(&x, gtype[g], js, k, sh);
            for (int i = 0; i < k; i++)
                out->norm_tput[js[i]] = x.norm[js[i]];
        }
        out->n_jobs = n_jobs;
    }
    free(x.wi);
    free(x.norm);
    free(x.mv);
    psi_cl_data_free(d);
    if (rc)
        ps_coloc_placement_free(out);
    return rc;
}
