/*
 * Scoring and calibrating the twin on overlap.csv (overlap_twin.h): MAPE of
 * the median time by k and by file, the shape of the errors (where the real
 * and the twin's makespans sit between max(solo) and sum(solo)), and a fit
 * of the launch and sharing parameters on the 2-way experiments.
 */
#include "evaluate/overlap_internal.h"
#include "evaluate/overlap_twin.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OVT_RIDGE 0.05 /* the solo table's ridge weight, as `pairsight overlap` (docs/overlap.md) */

psi_ovt_params_t psi_ovt_default_params(void)
{
    psi_ovt_params_t p = {
        .setting = "dedicated", .every = 1, .fit_every = 40, .calibrate = 0, .mps = psi_sim_mps_default()};
    return p;
}

void psi_ovt_score_free(psi_ovt_score_t *s)
{
    if (!s)
        return;
    free(s->line);
    s->line = NULL;
    s->n = s->n_k = 0;
}

/* The file of an experiment id "A100/2in7/resnet50_vgg16:12": resnet50_vgg16. */
static void file_of(const char *id, char *buf, size_t n)
{
    const char *b = strrchr(id, '/');
    b = b ? b + 1 : id;
    const char *c = strrchr(b, ':');
    size_t len = c ? (size_t)(c - b) : strlen(b);
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), b);
}

/* Experiments of setting, every every-th of each file, into idx (caller
 * frees); k_only > 0 keeps that k alone. */
static int select_exps(const psi_overlap_t *t, const char *setting, int every, int k_only, size_t **idx, size_t *n)
{
    char names[64][96];
    size_t seen[64] = {0};
    int nf = 0;
    *n = 0;
    if (!(*idx = psi_malloc((t->n + 1) * sizeof **idx)))
        return PS_E_NOMEM;
    for (size_t i = 0; i < t->n; i++) {
        const psi_ov_exp_t *e = &t->exps[i];
        if (strcmp(e->setting, setting) != 0 || (k_only > 0 && e->k != k_only))
            continue;
        char f[96];
        file_of(e->id, f, sizeof f);
        int j = 0;
        while (j < nf && strcmp(names[j], f) != 0)
            j++;
        if (j == nf && nf < 64)
            snprintf(names[nf++], sizeof names[0], "%s", f);
        if (j < 64 && seen[j]++ % (size_t)every != 0)
            continue;
        (*idx)[(*n)++] = i;
    }
    return PS_OK;
}

/* The real solo time of slot x from the table (0 for an empty range, NAN
 * when unknown). */
static double real_solo(const solo_t *s, const char *setting, const psi_ov_slot_t *x)
{
    if (x->op_end <= x->op_start)
        return 0;
    const solo_key_t *key = psi_ov_solo_find(s, setting, x);
    if (!key || x->op_end > key->groups)
        return NAN;
    double v = key->beta[0];
    for (int g = x->op_start; g < x->op_end; g++)
        v += key->beta[1 + g];
    return v;
}

typedef struct {
    int line_k, line_f; /* its lines */
    int active;
    double real, pred, alpha_real, alpha_twin;
} rec_t;

/* The records of a score: r[n]. */
typedef struct {
    rec_t *r;
    size_t n;
} recs_t;

/* The experiments idx[n] of t that a score or a calibration runs (idx
 * from select_exps, owned by whoever selected them). */
typedef struct {
    const psi_overlap_t *t;
    size_t *idx;
    size_t n;
} exps_t;

/* The lines a score holds at most. */
enum { OVT_LINES = 96 };

static double alpha(double m, double mx, double sum) { return sum - mx > 1e-9 * mx ? (m - mx) / (sum - mx) : NAN; }

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of the finite values of v[0..n) (sorted in place), NAN if none. */
static double median(double *v, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            v[m++] = v[i];
    if (m == 0)
        return NAN;
    qsort(v, m, sizeof *v, cmp_dbl);
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

/* The line named name (k for a line by k), added when new. */
static int line_of(psi_ovt_score_t *s, const char *name, int k, int cap)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->line[i].name, name) == 0)
            return i;
    if (s->n == cap)
        return -1;
    psi_ovt_line_t *l = &s->line[s->n];
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "%s", name);
    l->k = k;
    return s->n++;
}

/* Fill line li's figures from recs. */
static void line_figures(psi_ovt_line_t *l, int li, const rec_t *r, size_t n, double *buf)
{
    double ape = 0, bias = 0, sape = 0;
    size_t m = 0, ms = 0, na = 0, nt = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].line_k != li && r[i].line_f != li)
            continue;
        double e = (r[i].pred - r[i].real) / r[i].real;
        if (r[i].active < 2) {
            sape += fabs(e);
            ms++;
            continue;
        }
        ape += fabs(e);
        bias += e;
        m++;
        buf[na++] = r[i].alpha_real;
    }
    l->real_alpha = median(buf, na);
    for (size_t i = 0; i < n; i++)
        if ((r[i].line_k == li || r[i].line_f == li) && r[i].active >= 2)
            buf[nt++] = r[i].alpha_twin;
    l->twin_alpha = median(buf, nt);
    l->n = m;
    l->mape = m ? 100.0 * ape / (double)m : NAN;
    l->bias = m ? 100.0 * bias / (double)m : NAN;
    l->n_solo = ms;
    l->solo_mape = ms ? 100.0 * sape / (double)ms : NAN;
}

/* One record per experiment of x into out (room for x->n), the twin under
 * s->mps, the real solo times from solo's fit in setting; their lines go
 * into s. */
static int simulate_recs(psi_ovt_t *tw, const exps_t *x, const solo_t *solo, const char *setting, psi_ovt_score_t *s,
                         recs_t *out)
{
    const int cap = OVT_LINES;
    rec_t *r = out->r;
    size_t *nr = &out->n;
    *nr = 0;
    for (size_t i = 0; i < x->n; i++) {
        const psi_ov_exp_t *e = &x->t->exps[x->idx[i]];
        double us, mx, sum, rmx = 0, rsum = 0;
        int rc = psi_ovt_predict(tw, e, &s->mps, &us, &mx, &sum);
        if (rc != PS_OK)
            return rc;
        if (!isfinite(us))
            continue;
        for (int q = 0; q < e->k; q++) {
            double v = real_solo(solo, setting, &e->slot[q]);
            rmx = v > rmx ? v : rmx;
            rsum += v;
        }
        char f[96], kn[16];
        file_of(e->id, f, sizeof f);
        snprintf(kn, sizeof kn, "k=%d", e->k);
        rec_t *o = &r[(*nr)++];
        o->line_k = line_of(s, kn, 0, cap);
        o->line_f = line_of(s, f, e->k, cap);
        o->active = psi_ov_active(e);
        o->real = e->median_us;
        o->pred = us;
        o->alpha_real = alpha(e->median_us, rmx, rsum);
        o->alpha_twin = alpha(us, mx, sum);
    }
    return PS_OK;
}

static int cmp_line(const void *a, const void *b)
{
    const psi_ovt_line_t *x = a, *y = b;
    int gx = x->k != 0, gy = y->k != 0;
    if (gx != gy)
        return gx - gy;
    if (x->k != y->k)
        return x->k - y->k;
    return strcmp(x->name, y->name);
}

int psi_ovt_score(psi_ovt_t *tw, const psi_overlap_t *t, const psi_ovt_params_t *p, const sim_mps_params_t *mps,
                  psi_ovt_score_t *out)
{
    size_t *all = NULL, *idx = NULL, na = 0, n = 0;
    solo_t solo = {0};
    recs_t rs = {NULL, 0};
    double *buf = NULL;
    memset(out, 0, sizeof *out);
    out->mps = *mps;
    int rc = select_exps(t, p->setting, 1, 0, &all, &na);
    if (rc == PS_OK)
        rc = select_exps(t, p->setting, p->every, 0, &idx, &n);
    if (rc == PS_OK)
        rc = psi_ov_solo_fit(t, all, na, OVT_RIDGE, &solo);
    if (rc == PS_OK && (!(rs.r = psi_malloc((n + 1) * sizeof *rs.r)) || !(buf = psi_malloc((n + 1) * sizeof *buf)) ||
                        !(out->line = psi_calloc(OVT_LINES, sizeof *out->line))))
        rc = PS_E_NOMEM;
    if (rc == PS_OK)
        rc = simulate_recs(tw, &(exps_t){t, idx, n}, &solo, p->setting, out, &rs);
    for (int i = 0; rc == PS_OK && i < out->n; i++)
        line_figures(&out->line[i], i, rs.r, rs.n, buf);
    if (rc == PS_OK) {
        qsort(out->line, (size_t)out->n, sizeof *out->line, cmp_line);
        while (out->n_k < out->n && out->line[out->n_k].k == 0)
            out->n_k++;
    }
    free(all);
    free(idx);
    free(rs.r);
    free(buf);
    psi_ov_solo_free(&solo);
    if (rc != PS_OK)
        psi_ovt_score_free(out);
    return rc;
}

/* ---- calibration ---- */

typedef struct {
    double r, w; /* real - predicted, weight 1 / real */
} resid_t;

static int cmp_resid(const void *a, const void *b)
{
    double x = ((const resid_t *)a)->r, y = ((const resid_t *)b)->r;
    return x < y ? -1 : x > y;
}

/* The start_ns >= 0 that minimizes the MAPE of pred + start against real
 * (a weighted median), and that MAPE. */
static double best_start(const double *pred, const double *real, size_t n, resid_t *tmp, double *mape)
{
    double wsum = 0, acc = 0, c = 0, e = 0;
    for (size_t i = 0; i < n; i++) {
        tmp[i] = (resid_t){real[i] - pred[i], 1.0 / real[i]};
        wsum += tmp[i].w;
    }
    qsort(tmp, n, sizeof *tmp, cmp_resid);
    for (size_t i = 0; i < n; i++)
        if ((acc += tmp[i].w) >= 0.5 * wsum) {
            c = tmp[i].r;
            break;
        }
    c = c > 0 ? c : 0;
    for (size_t i = 0; i < n; i++)
        e += fabs(pred[i] + c - real[i]) / real[i];
    *mape = n ? 100.0 * e / (double)n : NAN;
    return c;
}

/* The calibration's experiments (it owns x.idx) and its scratch for their
 * predicted and real makespans and residuals (n + 1 each). */
typedef struct {
    exps_t x;
    double *pred, *real;
    resid_t *tmp;
} fitset_t;

static void fitset_free(fitset_t *f)
{
    free(f->x.idx);
    free(f->pred);
    free(f->real);
    free(f->tmp);
}

/* The 2-way experiments of p->setting the calibration fits (every
 * p->fit_every-th), and the scratch. */
static int fitset_init(fitset_t *f, const psi_overlap_t *t, const psi_ovt_params_t *p)
{
    memset(f, 0, sizeof *f);
    f->x.t = t;
    int rc = select_exps(t, p->setting, p->fit_every, 2, &f->x.idx, &f->x.n);
    size_t n = f->x.n;
    if (rc == PS_OK &&
        (!(f->pred = psi_malloc((n + 1) * sizeof *f->pred)) || !(f->real = psi_malloc((n + 1) * sizeof *f->real)) ||
         !(f->tmp = psi_malloc((n + 1) * sizeof *f->tmp))))
        rc = PS_E_NOMEM;
    return rc;
}

/* MAPE on f's experiments under m with the best start; sets m->start_ns. */
static int try_params(psi_ovt_t *tw, const fitset_t *f, sim_mps_params_t *m, double *mape)
{
    const psi_overlap_t *t = f->x.t;
    sim_mps_params_t z = *m;
    size_t k = 0;
    z.start_ns = 0;
    for (size_t i = 0; i < f->x.n; i++) {
        double us;
        int rc = psi_ovt_predict(tw, &t->exps[f->x.idx[i]], &z, &us, NULL, NULL);
        if (rc != PS_OK)
            return rc;
        if (!isfinite(us))
            continue;
        f->pred[k] = us;
        f->real[k++] = t->exps[f->x.idx[i]].median_us;
    }
    m->start_ns = 1e3 * best_start(f->pred, f->real, k, f->tmp, mape);
    return PS_OK;
}

static const double launch_grid_us[] = {2, 3.8, 6, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 70, 80, 100};
static const double pack_grid[] = {0, 0.25, 0.5, 1, 2, 4, 1e9};
static const double stagger_grid_us[] = {0, 25, 50, 100, 200, 400, 800, 1600, 3200};
static const double flop_grid[] = {1, 0.5, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05};

/* Coordinate descent over the grids of launch, sm_pack, stagger (and
 * flop_scale with p->fit_flops), twice,
 * from p's values; start by weighted median at every point. */
int psi_ovt_calibrate(psi_ovt_t *tw, const psi_overlap_t *t, const psi_ovt_params_t *p, sim_mps_params_t *out,
                      double *mape)
{
    fitset_t fs;
    int rc = fitset_init(&fs, t, p);
    sim_mps_params_t best = p->mps;
    double best_e = INFINITY;
    if (rc == PS_OK)
        rc = try_params(tw, &fs, &best, &best_e);
    const double *grid[4] = {launch_grid_us, pack_grid, stagger_grid_us, flop_grid};
    const int len[4] = {
        (int)(sizeof launch_grid_us / sizeof *launch_grid_us), (int)(sizeof pack_grid / sizeof *pack_grid),
        (int)(sizeof stagger_grid_us / sizeof *stagger_grid_us), (int)(sizeof flop_grid / sizeof *flop_grid)};
    int dims = p->fit_flops ? 4 : 3;
    for (int pass = 0; rc == PS_OK && pass < 2 * dims; pass++) {
        int c = pass % dims;
        sim_mps_params_t base = best;
        for (int i = 0; rc == PS_OK && i < len[c]; i++) {
            sim_mps_params_t m = base;
            double e;
            double *dst[4] = {&m.launch_ns, &m.sm_pack, &m.stagger_ns, &m.flop_scale};
            *dst[c] = grid[c][i] * (c == 0 || c == 2 ? 1e3 : 1.0);
            rc = try_params(tw, &fs, &m, &e);
            psi_log(PS_LOG_INFO,
                    "twin calibration: launch %.1f us, sm_pack %g, stagger %.0f us, flop_scale %g, start %.1f us: "
                    "2-way MAPE %.2f%%",
                    m.launch_ns / 1e3, m.sm_pack, m.stagger_ns / 1e3, m.flop_scale, m.start_ns / 1e3, e);
            if (rc == PS_OK && e < best_e) {
                best_e = e;
                best = m;
            }
        }
    }
    fitset_free(&fs);
    if (rc == PS_OK) {
        *out = best;
        *mape = best_e;
    }
    return rc;
}
