/*
 * The low-rank pairwise-interaction predictor `lowrank`: for tables that
 * carry only each workload's exclusive throughput (cluster schedulers'
 * throughput matrices), each workload's own throughput beside co-runners C
 * from workload identity and solo throughput alone:
 *
 *   log(tput_w / solo(w, s_w)) = A_w + sum over j in C of g_j (B_j + <U_w, V_j>)
 *   A_w = a0 + a1 z_w + a_w,   B_j = b0 + b1 z_j + b_j,   z = log exclusive_tput - mean
 *
 * g_j = solo(j, s_j) / solo(j, 100) (the co-runner's activity at its share,
 * 1 at 100 %). a0, a1, b0, b1 are shared (a workload never trained on falls
 * back to them, i.e. to its solo throughput); a_w, b_j and the rank-2
 * vectors U, V are per workload, L2-penalized with lambda, fitted by exact
 * coordinate descent on the training rows. lambda is chosen from
 * {0.1, 1, 10} by 3-fold cross-validation over the training co-locations.
 */
#include "colocate/colocate.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LR_RANK 2
#define LR_NP (2 + 2 * LR_RANK) /* a, b, u[R], v[R] */
#define LR_SWEEPS 60

struct cl_lowrank {
    int n;
    char **name;
    double *par; /* [n * LR_NP] */
    double glob[4];
    double zmu, lambda;
};

void psi_cl_lowrank_free(cl_lowrank_t *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n; i++)
        free(m->name[i]);
    free(m->name);
    free(m->par);
    free(m);
}

/* One measured training row: workload, target, its co-runners and their g. */
typedef struct {
    int w, nco;
    int co[63];
    double g[63];
    double y, r;
} lrow_t;

/* The rows of the measured slots of co-locations cidx[nc] (model.c's, with
 * each slot's co-runners and their shares' solo scaling). */
static int make_rows(const cl_data_t *d, const int *cidx, int nc, lrow_t **out, int *n_out)
{
    wrow_t *m = NULL;
    int n = 0, rc = psi_cl_measured_rows(d, cidx, nc, &m, &n);
    if (rc)
        return rc;
    lrow_t *r = psi_malloc((size_t)n * sizeof *r + 1);
    if (!r) {
        free(m);
        return PS_E_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        const cl_coloc_t *c = &d->c[m[i].c];
        lrow_t *x = &r[i];
        x->w = m[i].w;
        x->y = log(m[i].ratio);
        x->nco = 0;
        for (int j = 0; j < c->k && x->nco < 63; j++)
            if (j != m[i].s) {
                x->co[x->nco] = c->w[j];
                x->g[x->nco++] = psi_cl_solo(d, c->w[j], c->share[j]) / psi_cl_solo(d, c->w[j], 100);
            }
    }
    free(m);
    *out = r;
    *n_out = n;
    return 0;
}

/* Parameters indexed by the data set's workloads. */
typedef struct {
    double glob[4];
    double *p; /* [nw * LR_NP] */
    double *z; /* [nw] */
} lpar_t;

static double row_pred(const lpar_t *q, const lrow_t *x)
{
    const double *pw = q->p + (size_t)x->w * LR_NP;
    double v = q->glob[0] + q->glob[1] * q->z[x->w] + pw[0];
    for (int j = 0; j < x->nco; j++) {
        const double *pj = q->p + (size_t)x->co[j] * LR_NP;
        double t = q->glob[2] + q->glob[3] * q->z[x->co[j]] + pj[1];
        for (int r = 0; r < LR_RANK; r++)
            t += pw[2 + r] * pj[2 + LR_RANK + r];
        v += x->g[j] * t;
    }
    return v;
}

/* Coefficient of parameter (kind, of workload j) in row x: kind 0 a0, 1 a1,
 * 2 b0, 3 b1, 4 a_j, 5 b_j, 6+r U_j[r], 6+R+r V_j[r]. */
static double coef(const lpar_t *q, const lrow_t *x, int kind, int j)
{
    double c = 0;
    switch (kind) {
    case 0: return 1;
    case 1: return q->z[x->w];
    case 4: return x->w == j;
    default: break;
    }
    if (kind >= 6 && kind < 6 + LR_RANK) { /* U_j[r]: own */
        if (x->w != j)
            return 0;
        for (int i = 0; i < x->nco; i++)
            c += x->g[i] * q->p[(size_t)x->co[i] * LR_NP + 2 + LR_RANK + (kind - 6)];
        return c;
    }
    for (int i = 0; i < x->nco; i++) {
        int o = x->co[i];
        if (kind == 2)
            c += x->g[i];
        else if (kind == 3)
            c += x->g[i] * q->z[o];
        else if (o == j && kind == 5)
            c += x->g[i];
        else if (o == j)
            c += x->g[i] * q->p[(size_t)x->w * LR_NP + 2 + (kind - 6 - LR_RANK)];
    }
    return c;
}

/* The rows a parameter appears in: rows[idx[0..n)] (idx NULL: rows[0..n)). */
typedef struct {
    lrow_t *rows;
    const int *idx;
    int n;
} lrow_set_t;

/* Exact minimization over one parameter *th (penalty lam) given the
 * residuals of the rows it appears in. */
static void update(const lpar_t *q, const lrow_set_t *rs, int kind, int j, double lam, double *th)
{
    lrow_t *rows = rs->rows;
    const int *idx = rs->idx, n = rs->n;
    double num = 0, den = 0;
    for (int t = 0; t < n; t++) {
        int i = idx ? idx[t] : t;
        double c = coef(q, &rows[i], kind, j);
        if (c != 0) {
            num += c * (rows[i].r + c * *th);
            den += c * c;
        }
    }
    if (!(den + lam > 1e-12))
        return;
    double nv = num / (den + lam), dl = nv - *th;
    if (dl == 0)
        return;
    for (int t = 0; t < n; t++) {
        int i = idx ? idx[t] : t;
        double c = coef(q, &rows[i], kind, j);
        if (c != 0)
            rows[i].r -= c * dl;
    }
    *th = nv;
}

static void fit_core(const cl_data_t *d, lrow_t *rows, int n, double lam, uint64_t seed, lpar_t *q)
{
    memset(q->glob, 0, sizeof q->glob);
    memset(q->p, 0, (size_t)d->nw * LR_NP * sizeof *q->p);
    /* The rows each workload appears in (own or co-runner), by workload. */
    int *start = psi_calloc((size_t)d->nw + 2, sizeof *start), *idx = psi_malloc((size_t)n * 64 * sizeof *idx + 1);
    char *seen = psi_calloc((size_t)d->nw + 1, 1);
    if (!seen || !start || !idx) {
        free(seen);
        free(start);
        free(idx);
        return;
    }
    int m = 0;
    for (int w = 0; w < d->nw; w++) {
        start[w] = m;
        for (int i = 0; i < n; i++) {
            int in = rows[i].w == w;
            for (int j = 0; j < rows[i].nco && !in; j++)
                in = rows[i].co[j] == w;
            if (in)
                idx[m++] = i;
        }
        seen[w] = m > start[w];
    }
    start[d->nw] = m;
    uint64_t st = seed * 0x9E3779B97F4A7C15ull + 7;
    for (int w = 0; w < d->nw; w++)
        for (int r = 0; r < 2 * LR_RANK; r++)
            q->p[(size_t)w * LR_NP + 2 + r] =
                seen[w] ? 0.05 * ((double)(psi_splitmix64(&st) >> 11) / 9007199254740992.0 - 0.5) : 0;
    for (int i = 0; i < n; i++)
        rows[i].r = rows[i].y - row_pred(q, &rows[i]);
    for (int sweep = 0; sweep < LR_SWEEPS; sweep++) {
        const lrow_set_t all = {rows, NULL, n};
        for (int g = 0; g < 4; g++)
            update(q, &all, g, -1, 0, &q->glob[g]);
        for (int w = 0; w < d->nw; w++) {
            if (!seen[w])
                continue;
            double *pw = q->p + (size_t)w * LR_NP;
            const lrow_set_t rw = {rows, idx + start[w], start[w + 1] - start[w]};
            update(q, &rw, 4, w, lam, &pw[0]);
            update(q, &rw, 5, w, lam, &pw[1]);
            for (int r = 0; r < 2 * LR_RANK; r++)
                update(q, &rw, 6 + r, w, lam, &pw[2 + r]);
        }
    }
    free(seen);
    free(start);
    free(idx);
}

/* choose_lambda's cross-validation: the training co-locations train[n_train]
 * of d in folds fold[n_train] of 0..2, a buffer sub[n_train], the seed and
 * the parameters each fit writes. */
typedef struct {
    const cl_data_t *d;
    const int *train;
    int n_train;
    const int *fold;
    int *sub;
    uint64_t seed;
    lpar_t *q;
} lr_cv_t;

/* The CV error (squared, summed) of lambda lam over cv's 3 folds. */
static int cv_sse(const lr_cv_t *cv, double lam, double *sse)
{
    const cl_data_t *d = cv->d;
    const int *train = cv->train, n_train = cv->n_train, *fold = cv->fold;
    int *sub = cv->sub;
    lpar_t *q = cv->q;
    *sse = 0;
    for (int f = 0; f < 3; f++) {
        int ns = 0, nt = 0, nte = 0, rc;
        for (int i = 0; i < n_train; i++)
            if (fold[i] != f)
                sub[ns++] = train[i];
        lrow_t *fr = NULL;
        if ((rc = make_rows(d, sub, ns, &fr, &nt)))
            return rc;
        fit_core(d, fr, nt, lam, cv->seed, q);
        free(fr);
        for (int i = 0; i < n_train; i++)
            if (fold[i] == f)
                sub[nte++] = train[i];
        if ((rc = make_rows(d, sub, nte, &fr, &nt)))
            return rc;
        for (int i = 0; i < nt; i++) {
            double e = fr[i].y - row_pred(q, &fr[i]);
            *sse += e * e;
        }
        free(fr);
    }
    return 0;
}

/* lambda by 3-fold cross-validation over the training co-locations (1
 * with fewer than 6). */
static int choose_lambda(const cl_data_t *d, const int *train, int n_train, uint64_t seed, lpar_t *q, double *out)
{
    static const double lams[] = {0.1, 1, 10};
    int *fold = psi_malloc((size_t)n_train * sizeof *fold + 1), *sub = psi_malloc((size_t)n_train * sizeof *sub + 1);
    int rc = fold && sub ? 0 : PS_E_NOMEM;
    double best = INFINITY;
    *out = 1;
    uint64_t st = seed + 0x51ED;
    for (int i = 0; i < n_train && !rc; i++)
        fold[i] = (int)(psi_splitmix64(&st) % 3);
    const lr_cv_t cv = {d, train, n_train, fold, sub, seed, q};
    for (unsigned l = 0; l < sizeof lams / sizeof lams[0] && n_train >= 6 && !rc; l++) {
        double sse = 0;
        rc = cv_sse(&cv, lams[l], &sse);
        if (!rc && sse < best) {
            best = sse;
            *out = lams[l];
        }
    }
    free(fold);
    free(sub);
    return rc;
}

/* The per-workload parameters of q that are not all 0, by name, into m. */
static int keep_params(const cl_data_t *d, const lpar_t *q, cl_lowrank_t *m)
{
    memcpy(m->glob, q->glob, sizeof m->glob);
    m->name = psi_calloc((size_t)d->nw + 1, sizeof *m->name);
    m->par = psi_calloc((size_t)d->nw * LR_NP + 1, sizeof *m->par);
    if (!m->name || !m->par)
        return PS_E_NOMEM;
    for (int w = 0; w < d->nw; w++) {
        const double *pw = q->p + (size_t)w * LR_NP;
        int any = 0;
        for (int j = 0; j < LR_NP; j++)
            any |= pw[j] != 0;
        if (!any)
            continue;
        if (!(m->name[m->n] = psi_strdup(d->w[w].name)))
            return PS_E_NOMEM;
        memcpy(m->par + (size_t)m->n * LR_NP, pw, LR_NP * sizeof *pw);
        m->n++;
    }
    return 0;
}

int psi_cl_lowrank_fit(const cl_data_t *d, const int *train, int n_train, uint64_t seed, cl_lowrank_t **out)
{
    *out = NULL;
    lrow_t *rows = NULL;
    int n = 0, rc = make_rows(d, train, n_train, &rows, &n);
    if (rc)
        return rc;
    if (n < 1) {
        free(rows);
        return psi_error(PS_E_INPUT, "colocate: lowrank: no measured throughput to train on");
    }
    lpar_t q = {
        {0}, psi_calloc((size_t)d->nw * LR_NP + 1, sizeof(double)), psi_calloc((size_t)d->nw + 1, sizeof(double))};
    cl_lowrank_t *m = psi_calloc(1, sizeof *m);
    rc = q.p && q.z && m ? 0 : PS_E_NOMEM;
    if (!rc) {
        /* z: log exclusive throughput, centred over the trained rows. */
        double zs = 0;
        for (int i = 0; i < n; i++)
            zs += log(d->w[rows[i].w].f[CW_EXCL]);
        m->zmu = zs / n;
        for (int w = 0; w < d->nw; w++)
            q.z[w] = log(d->w[w].f[CW_EXCL]) - m->zmu;
        rc = choose_lambda(d, train, n_train, seed, &q, &m->lambda);
    }
    if (!rc) {
        fit_core(d, rows, n, m->lambda, seed, &q);
        rc = keep_params(d, &q, m);
    }
    free(rows);
    free(q.p);
    free(q.z);
    if (rc) {
        psi_cl_lowrank_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

static const double *find(const cl_lowrank_t *m, const char *name)
{
    static const double zero[LR_NP];
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->name[i], name) == 0)
            return m->par + (size_t)i * LR_NP;
    return zero;
}

double psi_cl_lowrank_predict(const cl_lowrank_t *m, const cl_data_t *d, const cl_coloc_t *c, int s)
{
    const cl_workload_t *me = &d->w[c->w[s]];
    const double *pw = find(m, me->name);
    double v = m->glob[0] + m->glob[1] * (log(me->f[CW_EXCL]) - m->zmu) + pw[0];
    for (int j = 0; j < c->k; j++) {
        if (j == s)
            continue;
        const cl_workload_t *o = &d->w[c->w[j]];
        const double *pj = find(m, o->name);
        double t = m->glob[2] + m->glob[3] * (log(o->f[CW_EXCL]) - m->zmu) + pj[1];
        for (int r = 0; r < LR_RANK; r++)
            t += pw[2 + r] * pj[2 + LR_RANK + r];
        v += psi_cl_solo(d, c->w[j], c->share[j]) / psi_cl_solo(d, c->w[j], 100) * t;
    }
    return v;
}

/* Text: "lowrank R n zmu lambda g0 g1 g2 g3", then n lines of LR_NP numbers
 * and the name (the rest of the line, so names may hold spaces). */
int psi_cl_lowrank_save(const cl_lowrank_t *m, FILE *f)
{
    fprintf(f, "lowrank %d %d %.17g %.17g", LR_RANK, m->n, m->zmu, m->lambda);
    for (int g = 0; g < 4; g++)
        fprintf(f, " %.17g", m->glob[g]);
    fputc('\n', f);
    for (int i = 0; i < m->n; i++) {
        for (int j = 0; j < LR_NP; j++)
            fprintf(f, "%.17g ", m->par[(size_t)i * LR_NP + j]);
        fprintf(f, "%s\n", m->name[i]);
    }
    return ferror(f) ? PS_E_IO : 0;
}

int psi_cl_lowrank_load(FILE *f, cl_lowrank_t **out)
{
    *out = NULL;
    int rank = 0, n = 0;
    cl_lowrank_t *m = psi_calloc(1, sizeof *m);
    if (!m)
        return PS_E_NOMEM;
    if (fscanf(f, " lowrank %d %d %lf %lf %lf %lf %lf %lf", &rank, &n, &m->zmu, &m->lambda, &m->glob[0], &m->glob[1],
               &m->glob[2], &m->glob[3]) != 8 ||
        rank != LR_RANK || n < 0 || n > 10000000) {
        free(m);
        return -1;
    }
    m->name = psi_calloc((size_t)n + 1, sizeof *m->name);
    m->par = psi_calloc((size_t)n * LR_NP + 1, sizeof *m->par);
    if (!m->name || !m->par) {
        psi_cl_lowrank_free(m);
        return PS_E_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < LR_NP; j++)
            if (fscanf(f, "%lf", &m->par[(size_t)i * LR_NP + j]) != 1) {
                psi_cl_lowrank_free(m);
                return -1;
            }
        char buf[4096];
        if (fgetc(f) != ' ' || !fgets(buf, sizeof buf, f)) {
            psi_cl_lowrank_free(m);
            return -1;
        }
        buf[strcspn(buf, "\n")] = 0;
        if (!(m->name[i] = psi_strdup(buf))) {
            psi_cl_lowrank_free(m);
            return PS_E_NOMEM;
        }
        m->n++;
    }
    *out = m;
    return 0;
}
