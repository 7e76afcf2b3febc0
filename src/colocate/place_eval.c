/*
 * `colocate eval --place`: placements of random job mixes scored with the
 * measured table (the solver of place.c run on measured and on predicted
 * group values), per predictor kind. docs/colocate.md.
 */
#include "colocate/colocate.h"
#include "colocate/model_internal.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* The measured value of assignment a of n jobs to ng GPUs: each GPU's
 * group at the co-location that by's score picks for it (by's data and
 * jobs). */
static double measured_of(const ectx_t *by, int n, int ng, const int *a, const double *meas)
{
    double v = 0;
    int pick = -1;
    ectx_t x = {by->d, by->job, by->score, &pick};
    for (int g = 0; g < ng; g++) {
        int js[64], sh[64], k = psi_cl_gpu_jobs(a, n, g, js);
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
        if (psi_cl_kind((ps_coloc_kind_t)k)->needs_metrics && !d->has[CW_SM_BUSY] && !d->has[CW_MEM_BUSY] &&
            !d->has[CW_MEMCAP])
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
            int js[64], k = psi_cl_gpu_jobs(a, n, g, js);
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
    int n = cs->n_jobs, ng = cs->n_gpus, job[64], a[64], sh[64], gt[64] = {0}, pk = -1, rc = 0;
    if (n < 1 || n > 64 || ng < 1 || ng > 64)
        return psi_error(PS_E_ARG, "eval --place: a case needs 1..64 jobs and GPUs");
    uint64_t st = seed * 0xD1B54A32D192ED03ull + (uint64_t)q;
    draw_mix(e, n, &st, job);
    ectx_t xm = {d, job, e->meas, &pk};
    cl_place_problem_t pb = {.n = n,
                             .gtype = gt,
                             .ng = ng,
                             .ntypes = 1,
                             .max_per_gpu = e->max_per_gpu,
                             .wait_penalty = PLACE_WAIT_PENALTY,
                             .val = table_val,
                             .ctx = &xm};
    cl_placement_t pl = {.assign = a, .share = sh};
    if ((rc = psi_cl_place_solve(&pb, seed, NULL, &pl)))
        return rc;
    double best = measured_of(&xm, n, ng, a, e->meas);
    if (!(best > 0))
        return 0;
    cs->mixes++;
    cs->exact += pl.exact;
    cs->ratio[PS_POL_ORACLE] += 1;
    cs->norm[PS_POL_ORACLE] += best;
    for (int k = 0; k < PS_COLOC_KIND_COUNT && !rc; k++) {
        if (!(e->ran & (1u << k)))
            continue;
        ectx_t xp = {d, job, e->pred[k], &pk};
        pb.ctx = &xp;
        if ((rc = psi_cl_place_solve(&pb, seed, NULL, &pl)))
            break;
        double v = measured_of(&xp, n, ng, a, e->meas);
        cs->ratio[PS_POL_OF_KIND(k)] += v / best;
        cs->norm[PS_POL_OF_KIND(k)] += v;
    }
    double rs = 0;
    for (int rr = 0; rr < 20; rr++) {
        random_place(e, &xm, n, ng, &st, a);
        rs += measured_of(&xm, n, ng, a, e->meas);
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
                     (p >= PS_POL_KINDS && (done_kinds & (1u << (p - PS_POL_KINDS))));
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
