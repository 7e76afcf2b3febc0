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
 * is kept. docs/colocate.md.
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
/* Every job runs when the GPUs have room: a waiting job costs this much
 * (more than any group can be worth), unless waiting is allowed. */
#define PLACE_WAIT_PENALTY 1e6
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

int psi_cl_place_solve(int n, const int *gtype, int ng, int ntypes, int max_per_gpu, uint64_t seed, double wait_penalty,
                       cl_group_value_fn val, void *ctx, int *assign, int *share, double *objective, int *exact,
                       cl_place_budget_t *budget)
{
    if (n < 0 || n > 64 || ng < 0 || ntypes < 1 || ntypes > 16 || max_per_gpu < 1)
        return psi_error(PS_E_ARG, "place: 0..64 jobs, up to 16 GPU types, K >= 1");
    solver_t s = {.n = n,
                  .ng = ng,
                  .ntypes = ntypes,
                  .K = max_per_gpu,
                  .wait = wait_penalty,
                  .gtype = gtype,
                  .val = val,
                  .ctx = ctx,
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
        int jobs[64], k = 0, sh[64];
        for (int i = 0; i < n; i++)
            if (assign[i] == g)
                jobs[k++] = i;
        if (!k)
            continue;
        for (int i = 0; i < k; i++)
            sh[i] = 100;
        val(ctx, gtype[g], jobs, k, sh);
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
    if (!rc)
        rc = psi_cl_place_solve(n_jobs, gtype, n_gpus, ntypes, p->max_per_gpu, p->seed,
                                p->allow_wait ? 0 : PLACE_WAIT_PENALTY, model_val, &x, out->gpu, out->share,
                                &out->objective, &out->exact, &budget);
    out->stopped = budget.stopped;
    if (!rc)
        rc = x.rc;
    if (!rc) {
        /* per-job values of the chosen groups */
        out->objective = 0;
        for (int g = 0; g < n_gpus; g++) {
            int js[64], k = 0, sh[64];
            for (int j = 0; j < n_jobs; j++)
                if (out->gpu[j] == g)
                    js[k++] = j;
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

/* ---- eval --place: placements scored with the measured table ---- */

typedef struct {
    const cl_data_t *d;
    const int *job;      /* [n] workload index */
    const double *score; /* [nc] value of each co-location (measured or
                            predicted normalized sum); NAN = not allowed */
    int *pick;           /* out: for the last group, the co-location used */
} ectx_t;

static int same_set(const cl_coloc_t *c, const int *w, int k)
{
    if (c->k != k)
        return 0;
    int used[64] = {0};
    for (int i = 0; i < k; i++) {
        int f = 0;
        for (int s = 0; s < k && !f; s++)
            if (!used[s] && c->w[s] == w[i])
                f = used[s] = 1;
        if (!f)
            return 0;
    }
    return 1;
}

/* The best-scored complete co-location of these jobs' workloads. */
static double table_val(void *ctx, int t, const int *jobs, int k, int *shares)
{
    (void)t;
    ectx_t *x = ctx;
    int w[64];
    for (int i = 0; i < k; i++)
        w[i] = x->job[jobs[i]];
    if (k == 1) {
        shares[0] = 100;
        *x->pick = -1;
        return psi_cl_solo(x->d, w[0], 100) / x->d->w[w[0]].f[CW_EXCL];
    }
    double best = -INFINITY;
    int bi = -1;
    for (int i = 0; i < x->d->nc; i++)
        if (!isnan(x->score[i]) && x->score[i] > best && same_set(&x->d->c[i], w, k)) {
            best = x->score[i];
            bi = i;
        }
    *x->pick = bi;
    if (bi >= 0) {
        /* shares in job order */
        const cl_coloc_t *c = &x->d->c[bi];
        int used[64] = {0};
        for (int i = 0; i < k; i++)
            for (int s = 0; s < k; s++)
                if (!used[s] && c->w[s] == w[i]) {
                    used[s] = 1;
                    shares[i] = c->share[s];
                    break;
                }
    }
    return best;
}

/* Measured normalized sum of a co-location. */
static double measured_norm(const cl_data_t *d, const cl_coloc_t *c)
{
    double v = 0;
    for (int s = 0; s < c->k; s++)
        v += c->tput[s] / d->w[c->w[s]].f[CW_EXCL];
    return v;
}

/* The measured value of assignment a: each GPU's group at the co-location
 * that `score` picks for it. */
static double measured_of(const cl_data_t *d, const int *job, int n, int ng, const int *a, const double *score,
                          const double *meas)
{
    double v = 0;
    int pick = -1;
    ectx_t x = {d, job, score, &pick};
    for (int g = 0; g < ng; g++) {
        int js[64], k = 0, sh[64];
        for (int j = 0; j < n; j++)
            if (a[j] == g)
                js[k++] = j;
        if (!k)
            continue;
        double pv = table_val(&x, 0, js, k, sh);
        if (k == 1)
            v += pv;
        else if (pick >= 0)
            v += meas[pick];
    }
    return v;
}

/* The state of eval --place over one table. */
typedef struct {
    const cl_data_t *d;
    int max_per_gpu;
    double *meas;                      /* [nc] measured normalized sums */
    double *pred[PS_COLOC_KIND_COUNT]; /* [nc] predicted, per kind */
    int *pool, npool;                  /* workloads in a complete co-location */
    unsigned ran;                      /* kinds fitted in this seed */
} eplace_t;

/* Kind m's predicted normalized sum of every complete co-location. */
static int kind_norms(const ps_coloc_model_t *m, const cl_data_t *d, double *out)
{
    double slot[64];
    int rc = 0;
    for (int i = 0; i < d->nc && !rc; i++) {
        out[i] = NAN;
        if (!d->c[i].complete)
            continue;
        double v = 0;
        rc = psi_cl_model_slots(m, d, i, slot);
        const cl_coloc_t *cc = &d->c[i];
        for (int s = 0; s < cc->k; s++)
            v += fmax(0, slot[s]) / d->w[cc->w[s]].f[CW_EXCL];
        out[i] = v;
    }
    return rc;
}

/* Every kind fitted on the split predicts every complete co-location. */
static int predict_kinds(eplace_t *e, const ps_coloc_eval_params_t *ep, uint64_t seed, const int *train, int ntr)
{
    const cl_data_t *d = e->d;
    int rc = 0;
    e->ran = 0;
    for (int k = 0; k < PS_COLOC_KIND_COUNT && !rc; k++) {
        if (!(ep->kinds & (1u << k)))
            continue;
        if (k == PS_COLOC_XU_RF && !d->has[CW_SM_BUSY] && !d->has[CW_MEM_BUSY] && !d->has[CW_MEMCAP])
            continue;
        ps_coloc_params_t mp = ep->model;
        mp.kind = (ps_coloc_kind_t)k;
        mp.seed = seed;
        ps_coloc_model_t *m = NULL;
        if (psi_cl_model_fit(d, train, ntr, &mp, &m))
            continue; /* e.g. a sum kind without a complete training co-location */
        rc = kind_norms(m, d, e->pred[k]);
        ps_coloc_model_free(m);
        e->ran |= 1u << k;
    }
    return rc;
}

/* The job mix: n distinct workloads (with repeats when the table has
 * fewer), drawn from st by a partial Fisher-Yates over the pool. */
static void draw_mix(eplace_t *e, int n, uint64_t *st, int *job)
{
    int np = e->npool, *pool = e->pool;
    for (int j = 0; j < n; j++) {
        int lim = np - (j < np ? j : 0);
        int pick = (int)(psi_splitmix64(st) % (uint64_t)(lim > 0 ? lim : 1));
        if (j < np) {
            int t = pool[np - 1 - j];
            pool[np - 1 - j] = pool[pick];
            pool[pick] = t;
            job[j] = pool[np - 1 - j];
        } else {
            job[j] = pool[pick];
        }
    }
}

/* One random placement into a: each job in random order to a random GPU
 * whose group stays measured and within K (waiting when none). */
static void random_place(const eplace_t *e, ectx_t *xm, int n, int ng, uint64_t *st, int *a)
{
    int order[64], sh[64];
    for (int j = 0; j < n; j++)
        order[j] = j, a[j] = -1;
    for (int j = n - 1; j > 0; j--) {
        int i2 = (int)(psi_splitmix64(st) % (uint64_t)(j + 1)), t = order[j];
        order[j] = order[i2];
        order[i2] = t;
    }
    for (int oi = 0; oi < n; oi++) {
        int j = order[oi], okg[64], nok = 0;
        for (int g = 0; g < ng; g++) {
            int js[64], k = 0;
            for (int i = 0; i < n; i++)
                if (a[i] == g)
                    js[k++] = i;
            if (k >= e->max_per_gpu)
                continue;
            js[k++] = j;
            if (table_val(xm, 0, js, k, sh) > -INFINITY)
                okg[nok++] = g;
        }
        if (nok)
            a[j] = okg[psi_splitmix64(st) % (uint64_t)nok];
    }
}

/* Case cs for one seed: the measured optimum, every kind's placement and
 * 20 random ones, added to cs. */
static int score_case(eplace_t *e, ps_coloc_place_case_t *cs, uint64_t seed, int q)
{
    const cl_data_t *d = e->d;
    int n = cs->n_jobs, ng = cs->n_gpus, job[64], a[64], sh[64], gt[64] = {0}, exact = 0, pk = -1, rc = 0;
    if (n < 1 || n > 64 || ng < 1 || ng > 64)
        return psi_error(PS_E_ARG, "eval --place: a case needs 1..64 jobs and GPUs");
    uint64_t st = seed * 0xD1B54A32D192ED03ull + (uint64_t)q;
    draw_mix(e, n, &st, job);
    ectx_t xm = {d, job, e->meas, &pk};
    double best = 0;
    if ((rc = psi_cl_place_solve(n, gt, ng, 1, e->max_per_gpu, seed, PLACE_WAIT_PENALTY, table_val, &xm, a, sh, &best,
                                 &exact, NULL)))
        return rc;
    best = measured_of(d, job, n, ng, a, e->meas, e->meas);
    if (!(best > 0))
        return 0;
    cs->mixes++;
    cs->exact += exact;
    cs->ratio[PS_POL_ORACLE] += 1;
    cs->norm[PS_POL_ORACLE] += best;
    for (int k = 0; k < PS_COLOC_KIND_COUNT && !rc; k++) {
        if (!(e->ran & (1u << k)))
            continue;
        ectx_t xp = {d, job, e->pred[k], &pk};
        double obj = 0;
        int ex = 0;
        if ((rc = psi_cl_place_solve(n, gt, ng, 1, e->max_per_gpu, seed, PLACE_WAIT_PENALTY, table_val, &xp, a, sh,
                                     &obj, &ex, NULL)))
            break;
        double v = measured_of(d, job, n, ng, a, e->pred[k], e->meas);
        cs->ratio[PS_POL_KACE_LR + k] += v / best;
        cs->norm[PS_POL_KACE_LR + k] += v;
    }
    double rs = 0;
    for (int rr = 0; rr < 20; rr++) {
        random_place(e, &xm, n, ng, &st, a);
        rs += measured_of(d, job, n, ng, a, e->meas, e->meas);
    }
    cs->ratio[PS_POL_RANDOM] += rs / 20 / best;
    cs->norm[PS_POL_RANDOM] += rs / 20;
    return rc;
}

/* Sums to means over the mixes; NAN for policies not run in every seed. */
static void finish_cases(ps_coloc_place_case_t *cases, int n_cases, unsigned done_kinds)
{
    for (int q = 0; q < n_cases; q++)
        for (int p = 0; p < PS_POL_COUNT; p++) {
            int on = p == PS_POL_ORACLE || p == PS_POL_RANDOM ||
                     (p >= PS_POL_KACE_LR && (done_kinds & (1u << (p - PS_POL_KACE_LR))));
            int m = cases[q].mixes;
            cases[q].ratio[p] = on && m ? cases[q].ratio[p] / m : NAN;
            cases[q].norm[p] = on && m ? cases[q].norm[p] / m : NAN;
        }
}

/* meas, pool and npool of e. */
static int eplace_init(eplace_t *e, const cl_data_t *d)
{
    int nc = d->nc, rc = 0;
    e->meas = psi_malloc((size_t)nc * sizeof *e->meas + 1);
    e->pool = psi_malloc((size_t)d->nw * sizeof *e->pool + 1);
    char *in = psi_calloc((size_t)d->nw + 1, 1);
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        if (!(e->pred[k] = psi_malloc((size_t)nc * sizeof *e->pred[k] + 1)))
            rc = PS_E_NOMEM;
    if (!e->meas || !e->pool || !in)
        rc = PS_E_NOMEM;
    for (int i = 0; i < nc && !rc; i++) {
        e->meas[i] = d->c[i].complete ? measured_norm(d, &d->c[i]) : NAN;
        for (int s = 0; s < d->c[i].k && d->c[i].complete; s++)
            in[d->c[i].w[s]] = 1;
    }
    for (int i = 0; i < d->nw && !rc; i++)
        if (in[i])
            e->pool[e->npool++] = i;
    free(in);
    if (!rc && e->npool == 0)
        rc = psi_error(PS_E_INPUT, "eval --place: no co-location has every throughput measured");
    return rc;
}

int ps_coloc_eval_place(const ps_workloads_t *w, const ps_scaling_t *scaling, const ps_colocations_t *c,
                        const ps_coloc_eval_params_t *ep, int max_per_gpu, ps_coloc_place_case_t *cases, int n_cases)
{
    if (!ep || ep->seeds < 1 || !(ep->train_frac > 0 && ep->train_frac < 1) || max_per_gpu < 1)
        return psi_error(PS_E_ARG, "colocate eval --place: need seeds >= 1, 0 < train_frac < 1, K >= 1");
    cl_data_t *d = NULL;
    int rc = psi_cl_data_build(w, scaling, c, NULL, &d);
    if (rc)
        return rc;
    eplace_t e = {.d = d, .max_per_gpu = max_per_gpu};
    int *train = psi_malloc((size_t)d->nc * sizeof *train + 1);
    rc = eplace_init(&e, d);
    if (!rc && !train)
        rc = PS_E_NOMEM;
    for (int q = 0; q < n_cases; q++) {
        for (int p = 0; p < PS_POL_COUNT; p++)
            cases[q].ratio[p] = cases[q].norm[p] = 0;
        cases[q].mixes = cases[q].exact = 0;
    }
    unsigned done_kinds = 0;
    for (int r = 0; r < ep->seeds && !rc; r++) {
        uint64_t seed = ep->seed + (uint64_t)r;
        int ntr = psi_cl_random_split(d, ep->train_frac, seed, train);
        rc = predict_kinds(&e, ep, seed, train, ntr);
        done_kinds = r == 0 ? e.ran : done_kinds & e.ran;
        for (int q = 0; q < n_cases && !rc; q++)
            rc = score_case(&e, &cases[q], seed, q);
    }
    finish_cases(cases, n_cases, done_kinds);
    free(e.meas);
    free(train);
    free(e.pool);
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        free(e.pred[k]);
    psi_cl_data_free(d);
    return rc;
}
