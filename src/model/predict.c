/*
 * Prediction of candidate co-executions, with window composition for
 * segments longer than the model's window (PairSight Sec. III, Eq. 4).
 *
 * Each segment of length L is divided into n = ceil(L / W) windows of
 * near-equal length (window k covers operators [floor(k L / n), floor((k+1)
 * L / n)) of the segment). The segment model predicts every HP window i
 * against every LP window j: log delta_h(i,j) and log delta_l(i,j). With w_i
 * the standalone time of window i:
 *
 * Index pairing (published): T_hp = sum_i w_i delta_h(i, min(i, n_lp - 1)),
 * and symmetrically for LP.
 *
 * Time-aligned pairing: a pair prediction delta_h(i,j) is the slowdown of a
 * window that ran beside the co-runner window only while the shorter of the
 * two lasted. With D_h = w_i delta_h and D_l the co-runner's predicted time,
 * if D_h > D_l the HP window ran contended for D_l and alone for the rest,
 * so its slowdown while contended is
 *     kappa_h(i,j) = D_l / (w_i - D_h + D_l)
 * (kappa_h = delta_h when D_h <= D_l; capped, see contended()). The timelines of
 * both sides are then laid out from predicted window times D; a window
 * progresses at 1/kappa(i,j)
 * while it overlaps co-runner window j and at full standalone speed where it
 * outlasts the co-runner, so its progress over its predicted span is
 *     P_i = sum_j o(i,j) / kappa(i,j) + (D_i - sum_j o(i,j))
 * with o(i,j) the time overlap. D_i is rescaled by w_i / P_i (damped by
 * half), and the timelines are rebuilt until no window moves by more than a
 * part in 1e9 (at most 500 passes). With one window per side this returns the
 * pair prediction unchanged.
 *
 * Both methods are served from the same table of all n_hp x n_lp pair
 * predictions (index pairing reads n_hp + n_lp of them); the extra rows only
 * arise for segments longer than the window.
 */
#include "model/model.h"

#include "common/common.h"
#include "model/calib.h"
#include "profile/gpu.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdlib.h>
#include <string.h>

/* Queries per slice: bounds the feature memory of huge batches. */
#define SLICE 1024
/* Window pairs whose features are built, then predicted, together: two
 * blocks of the forest's AVX-512 kernel (src/model/forest.c). */
#define PREDICT_BLOCK 64

/* Window pairs from which a batch is split over the OpenMP threads. Starting
 * and joining a team costs a scheduler tick or more (8-16 ms) when the
 * machine is oversubscribed, so one region per call, and none for small
 * batches. On 2 cores with 2 busy loops beside, 200 queries of one window
 * took 1.0-2.4 us each on one thread against 1.7-22 us with a region from
 * 128; with the machine quiet, 0.78 us against 0.45 us. */
#define PARALLEL_MIN 256

static const char *const compose_names[PS_COMPOSE_COUNT] = {"index", "overlap"};

const char *ps_compose_name(ps_compose_t c) { return (int)c >= 0 && c < PS_COMPOSE_COUNT ? compose_names[c] : "?"; }

int ps_compose_from_name(const char *name, ps_compose_t *out)
{
    int k;
    int rc = psi_name_index("composition", name, compose_names, PS_COMPOSE_COUNT, &k);
    if (rc == PS_OK)
        *out = (ps_compose_t)k;
    return rc;
}

static int n_windows(int len, int w)
{
    return len / w + (len % w != 0); /* ceil(len / w) without len + w - 1, which overflows */
}

static void window_range(int start, int len, int n, int k, int *ws, int *wl)
{
    int a = (int)((long long)k * len / n), b = (int)((long long)(k + 1) * len / n);
    *ws = start + a;
    *wl = b - a;
}

/* Build the features of every window pair of query q into rows starting at
 * x + row0 * nf. Solo times of the windows go to wh[nh], wl[nl]. */
static int build_pairs(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, int nh, int nl,
                       psi_features_memo_t *memo, float *xh, float *xl, double *wh, double *wl)
{
    size_t nf = (size_t)m->layout.n_features;
    ps_query_t w = *q;
    for (int i = 0; i < nh; i++) {
        window_range(q->hp_start, q->hp_len, nh, i, &w.hp_start, &w.hp_len);
        for (int j = 0; j < nl; j++) {
            window_range(q->lp_start, q->lp_len, nl, j, &w.lp_start, &w.lp_len);
            size_t r = (size_t)i * (size_t)nl + (size_t)j;
            int rc = psi_features_build_pair_memo(&m->layout, ops, &w, memo, xh + r * nf, xl + r * nf, &wh[i], &wl[j]);
            if (rc != PS_OK)
                return rc;
        }
    }
    return PS_OK;
}

static void compose_index(int nh, int nl, const double *lh, const double *ll, const double *wh, const double *wl,
                          double *th, double *tl)
{
    *th = 0;
    *tl = 0;
    for (int i = 0; i < nh; i++)
        *th += wh[i] * exp(lh[(size_t)i * nl + (i < nl ? i : nl - 1)]);
    for (int j = 0; j < nl; j++)
        *tl += wl[j] * exp(ll[(size_t)(j < nh ? j : nh - 1) * nl + j]);
}

/* Slowdown while contended, from one pair prediction (see the top). The
 * estimate divides by a difference, so it is capped at 3 delta, and taken
 * as delta where the denominator nearly vanishes (the pair prediction then
 * says the window ran slower than contention alone explains). Measured on
 * simulated A100 campaigns of 8-96 and 17-96 operators (1600 and 1000 runs),
 * with models trained on 3k and 728k samples, this beat both the index
 * pairing and a variant shrinking kappa toward delta by the co-runner's
 * coverage share (e.g. 728k model, 8-96 ops: HP 4.80% vs 5.34% index and
 * 5.54% shrunk; LP 4.78% vs 5.04% and 5.43%). */
static double contended(double w, double d, double d_other)
{
    double delta = d / w;
    if (d <= d_other)
        return delta;
    double denom = w - d + d_other;
    if (denom <= 0.02 * w)
        return delta;
    double k = d_other / denom, cap = 3.0 * delta;
    return k < cap ? k : cap;
}

/* One side's update: new window times from the overlap-weighted progress. */
static double relax(int n, const double *w, double *d, int n_other, const double *d_other, const double *kappa,
                    int stride_i, int stride_j)
{
    double change = 0, a = 0;
    for (int i = 0; i < n; i++) {
        double b = a + d[i], progress = 0, covered = 0, c = 0;
        for (int j = 0; j < n_other; j++) {
            double e = c + d_other[j];
            double o = fmin(b, e) - fmax(a, c);
            if (o > 0) {
                progress += o / kappa[(size_t)i * stride_i + (size_t)j * stride_j];
                covered += o;
            }
            c = e;
        }
        progress += d[i] - covered;
        double next = progress > 0 ? d[i] * w[i] / progress : w[i];
        next = 0.5 * (d[i] + next);
        double rel = fabs(next - d[i]) / d[i];
        if (rel > change)
            change = rel;
        a = b;
        d[i] = next;
    }
    return change;
}

static int compose_overlap(int nh, int nl, const double *lh, const double *ll, const double *wh, const double *wl,
                           double *th, double *tl)
{
    if (nh == 1 && nl == 1) {
        compose_index(nh, nl, lh, ll, wh, wl, th, tl);
        return PS_OK;
    }
    size_t np = (size_t)nh * (size_t)nl;
    double *kh = psi_malloc(np * sizeof *kh), *kl = psi_malloc(np * sizeof *kl);
    double *dh = psi_malloc((size_t)nh * sizeof *dh), *dl = psi_malloc((size_t)nl * sizeof *dl);
    if (!kh || !kl || !dh || !dl) {
        free(kh);
        free(kl);
        free(dh);
        free(dl);
        return PS_E_NOMEM;
    }
    for (int i = 0; i < nh; i++)
        for (int j = 0; j < nl; j++) {
            size_t r = (size_t)i * nl + j;
            double ph = wh[i] * exp(lh[r]), pl = wl[j] * exp(ll[r]);
            kh[r] = contended(wh[i], ph, pl);
            kl[r] = contended(wl[j], pl, ph);
        }
    /* Start from the index pairing. */
    for (int i = 0; i < nh; i++)
        dh[i] = wh[i] * exp(lh[(size_t)i * nl + (i < nl ? i : nl - 1)]);
    for (int j = 0; j < nl; j++)
        dl[j] = wl[j] * exp(ll[(size_t)(j < nh ? j : nh - 1) * nl + j]);
    for (int pass = 0; pass < 500; pass++) {
        double c1 = relax(nh, wh, dh, nl, dl, kh, nl, 1);
        double c2 = relax(nl, wl, dl, nh, dh, kl, 1, nl);
        if (c1 < 1e-9 && c2 < 1e-9)
            break;
    }
    *th = 0;
    *tl = 0;
    for (int i = 0; i < nh; i++)
        *th += dh[i];
    for (int j = 0; j < nl; j++)
        *tl += dl[j];
    free(kh);
    free(kl);
    free(dh);
    free(dl);
    return PS_OK;
}

int psi_compose_windows(ps_compose_t method, int nh, int nl, const double *lh, const double *ll, const double *wh,
                        const double *wl, double *t_hp, double *t_lp)
{
    if (method == PS_COMPOSE_INDEX) {
        compose_index(nh, nl, lh, ll, wh, wl, t_hp, t_lp);
        return PS_OK;
    }
    return compose_overlap(nh, nl, lh, ll, wh, wl, t_hp, t_lp);
}

/* Checks that need the whole query, before any feature is built. */
static int check_query(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, int gpu_tpcs)
{
    if (!q->gpu || strcmp(psi_gpu_canonical(q->gpu), m->gpu) != 0)
        return psi_error(PS_E_MISMATCH, "GPU '%s', the model is for '%s'", q->gpu ? q->gpu : "(none)", m->gpu);
    if (q->hp_tpcs < 1 || q->lp_tpcs < 1)
        return psi_error(PS_E_INPUT, "hp_tpcs %d, lp_tpcs %d: each side needs at least one TPC", q->hp_tpcs,
                         q->lp_tpcs);
    if (gpu_tpcs > 0 && q->hp_tpcs + q->lp_tpcs > gpu_tpcs)
        return psi_error(PS_E_INPUT, "hp_tpcs %d + lp_tpcs %d = %d TPCs, more than the %d TPCs of %s", q->hp_tpcs,
                         q->lp_tpcs, q->hp_tpcs + q->lp_tpcs, gpu_tpcs, m->gpu);
    if (q->hp_len < 1 || q->lp_len < 1)
        return psi_error(PS_E_INPUT, "hp_len %d, lp_len %d: segments need an operator", q->hp_len, q->lp_len);
    /* A segment past its model's end is refused here, before its windows
     * are counted and their rows allocated. */
    for (int s = 0; s < 2; s++) {
        const char *model = s ? q->lp_model : q->hp_model;
        int batch = s ? q->lp_batch : q->hp_batch, start = s ? q->lp_start : q->hp_start,
            len = s ? q->lp_len : q->hp_len;
        const psi_op_group_t *g = model ? psi_ops_find(ops, q->gpu, model, batch) : NULL;
        if (g && !segment_fits(start, len, g->n_ops))
            return psi_error(PS_E_INPUT, "%s: segment [%d, %lld) of %s batch %d is outside its %d operators",
                             s ? "lp" : "hp", start, (long long)start + len, model, batch, g->n_ops);
    }
    return PS_OK;
}

int ps_model_check_query(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q)
{
    if (!m || !ops || !q)
        return psi_error(PS_E_ARG, "ps_model_check_query: NULL argument");
    int rc = check_query(m, ops, q, psi_model_gpu_tpcs(ops, m->gpu));
    if (rc != PS_OK)
        return rc;
    /* Every window pair must resolve; the first window of the other side is
     * enough to check each window of one side. */
    size_t nf = (size_t)m->layout.n_features;
    int W = m->layout.window, nh = n_windows(q->hp_len, W), nl = n_windows(q->lp_len, W);
    float *x = psi_malloc(2 * nf * sizeof *x);
    if (!x)
        return PS_E_NOMEM;
    ps_query_t w = *q;
    window_range(q->lp_start, q->lp_len, nl, 0, &w.lp_start, &w.lp_len);
    for (int i = 0; i < nh && rc == PS_OK; i++) {
        window_range(q->hp_start, q->hp_len, nh, i, &w.hp_start, &w.hp_len);
        rc = psi_features_build_pair(&m->layout, ops, &w, x, x + nf, NULL, NULL);
    }
    window_range(q->hp_start, q->hp_len, nh, 0, &w.hp_start, &w.hp_len);
    for (int j = 0; j < nl && rc == PS_OK; j++) {
        window_range(q->lp_start, q->lp_len, nl, j, &w.lp_start, &w.lp_len);
        rc = psi_features_build_pair(&m->layout, ops, &w, x, x + nf, NULL, NULL);
    }
    free(x);
    return rc;
}

/* Names query first + k in the message of rc. */
static int query_error(int rc, size_t k)
{
    char where[48];
    snprintf(where, sizeof where, "query %zu", k);
    return psi_error_prefix(rc, where);
}

/* The rows and solo times of one slice: query k's window pairs are rows
 * [row0[k], row0[k+1]) of lh, ll; its windows' solo times
 * wsolo[win0[k]...] (HP windows, then LP). xh, xl: the features of one
 * block of rows (slice_predict), reused block after block so that they stay
 * in cache. */
typedef struct {
    size_t *row0, *win0;
    float *xh, *xl;
    double *lh, *ll, *wsolo;
    psi_features_memo_t *memo; /* consecutive queries sharing a side share its features */
} slice_t;

static void slice_free(slice_t *s)
{
    free(s->row0);
    free(s->win0);
    free(s->xh);
    free(s->xl);
    free(s->lh);
    free(s->ll);
    free(s->wsolo);
    psi_features_memo_free(s->memo);
}

static int slice_alloc(const ps_model_t *m, const ps_query_t *q, size_t n, slice_t *s)
{
    size_t nf = (size_t)m->layout.n_features;
    int W = m->layout.window;
    *s = (slice_t){.row0 = psi_malloc((n + 1) * sizeof *s->row0), .win0 = psi_malloc((n + 1) * sizeof *s->win0)};
    if (!s->row0 || !s->win0)
        return PS_E_NOMEM;
    s->row0[0] = s->win0[0] = 0;
    for (size_t k = 0; k < n; k++) {
        size_t nh = (size_t)n_windows(q[k].hp_len, W), nl = (size_t)n_windows(q[k].lp_len, W);
        s->row0[k + 1] = s->row0[k] + nh * nl;
        s->win0[k + 1] = s->win0[k] + nh + nl;
    }
    /* n >= 1 and every query has a window per side: no size is 0. A block
     * ends with the query that brings it to PREDICT_BLOCK rows or more. */
    size_t R = s->row0[n], NW = s->win0[n], most = 0;
    for (size_t k = 0; k < n; k++)
        most = s->row0[k + 1] - s->row0[k] > most ? s->row0[k + 1] - s->row0[k] : most;
    size_t B = PREDICT_BLOCK - 1 + most < R ? PREDICT_BLOCK - 1 + most : R;
    s->xh = psi_malloc(B * nf * sizeof *s->xh);
    s->xl = psi_malloc(B * nf * sizeof *s->xl);
    s->lh = psi_malloc(R * sizeof *s->lh);
    s->ll = psi_malloc(R * sizeof *s->ll);
    s->wsolo = psi_malloc(NW * sizeof *s->wsolo);
    s->memo = psi_features_memo_new(&m->layout);
    return s->xh && s->xl && s->lh && s->ll && s->wsolo && s->memo ? PS_OK : PS_E_NOMEM;
}

/* Features of both sides, built once per window pair, a block of about
 * PREDICT_BLOCK rows at a time; each block goes through both regressors
 * while its rows are still in cache. */
static int slice_predict(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n, size_t first,
                         slice_t *s)
{
    size_t nf = (size_t)m->layout.n_features;
    int W = m->layout.window;
    for (size_t k = 0, k0 = 0; k < n; k++) {
        int nh = n_windows(q[k].hp_len, W), nl = n_windows(q[k].lp_len, W);
        size_t r = s->row0[k] - s->row0[k0];
        int rc = build_pairs(m, ops, &q[k], nh, nl, s->memo, s->xh + r * nf, s->xl + r * nf, s->wsolo + s->win0[k],
                             s->wsolo + s->win0[k] + nh);
        if (rc != PS_OK)
            return query_error(rc, first + k);
        if (s->row0[k + 1] - s->row0[k0] >= PREDICT_BLOCK || k + 1 == n) {
            size_t r0 = s->row0[k0], nr = s->row0[k + 1] - r0;
            psi_model_predict_rows(m, PS_SIDE_HP, s->xh, nr, s->lh + r0);
            psi_model_predict_rows(m, PS_SIDE_LP, s->xl, nr, s->ll + r0);
            k0 = k + 1;
        }
    }
    return PS_OK;
}

/* Upper bounds: every window pair's log delta moves up by its bin's
 * conformal quantile before composition (docs/planner.md). */
static int slice_bounds(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n, size_t first,
                        double coverage, slice_t *s)
{
    int W = m->layout.window;
    for (size_t k = 0; k < n; k++) {
        int nh = n_windows(q[k].hp_len, W), nl = n_windows(q[k].lp_len, W);
        ps_query_t w = q[k];
        for (int i = 0; i < nh; i++) {
            window_range(q[k].hp_start, q[k].hp_len, nh, i, &w.hp_start, &w.hp_len);
            for (int j = 0; j < nl; j++) {
                window_range(q[k].lp_start, q[k].lp_len, nl, j, &w.lp_start, &w.lp_len);
                double a, b;
                int rc = psi_calib_offsets(m->calib, ops, &w, 0, coverage, &a, &b);
                if (rc != PS_OK)
                    return query_error(rc, first + k);
                s->lh[s->row0[k] + (size_t)i * nl + j] += a;
                s->ll[s->row0[k] + (size_t)i * nl + j] += b;
            }
        }
    }
    return PS_OK;
}

/* Each query's windows composed into its latencies oh, ol, and its solo
 * times sh, sl (either NULL: not wanted). */
static int slice_compose(const ps_model_t *m, const ps_query_t *q, size_t n, ps_compose_t method, const slice_t *s,
                         double *oh, double *ol, double *sh, double *sl)
{
    int W = m->layout.window;
    for (size_t k = 0; k < n; k++) {
        int nh = n_windows(q[k].hp_len, W), nl = n_windows(q[k].lp_len, W);
        const double *wh = s->wsolo + s->win0[k], *wl = wh + nh;
        int rc = psi_compose_windows(method, nh, nl, s->lh + s->row0[k], s->ll + s->row0[k], wh, wl, &oh[k], &ol[k]);
        if (rc != PS_OK)
            return psi_error(rc, "out of memory composing windows");
        double a = 0, b = 0;
        for (int i = 0; i < nh; i++)
            a += wh[i];
        for (int j = 0; j < nl; j++)
            b += wl[j];
        if (sh)
            sh[k] = a;
        if (sl)
            sl[k] = b;
    }
    return PS_OK;
}

/* One slice of queries [0, n), n >= 1, on the calling thread: features,
 * regressors, bounds (coverage > 0), composition. first is the index of q[0]
 * in the caller's batch. */
static int predict_slice(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n, size_t first,
                         ps_compose_t method, double coverage, double *oh, double *ol, double *sh, double *sl)
{
    slice_t s;
    int rc = slice_alloc(m, q, n, &s);
    if (rc == PS_OK)
        rc = slice_predict(m, ops, q, n, first, &s);
    if (rc == PS_OK && coverage > 0)
        rc = slice_bounds(m, ops, q, n, first, coverage, &s);
    if (rc == PS_OK)
        rc = slice_compose(m, q, n, method, &s, oh, ol, sh, sl);
    /* Composed segments: the conformal step on the composition (bounds.c). */
    for (size_t k = 0; rc == PS_OK && coverage > 0 && k < n; k++) {
        double ch, cl;
        int W = m->layout.window;
        if ((q[k].hp_len > W || q[k].lp_len > W) && psi_calib_composed(m->calib, coverage, &ch, &cl)) {
            oh[k] *= exp(ch);
            ol[k] *= exp(cl);
        }
    }
    slice_free(&s);
    return rc;
}

/* A batch cut into slices of per queries. */
typedef struct {
    const ps_model_t *m;
    const ps_ops_t *ops;
    const ps_query_t *q;
    size_t n, per;
    ps_compose_t method;
    double coverage; /* > 0: upper bounds at this coverage */
    double *oh, *ol, *sh, *sl;
} batch_t;

static int run_slice(const batch_t *b, size_t s)
{
    size_t at = s * b->per;
    if (at >= b->n)
        return PS_OK;
    return predict_slice(b->m, b->ops, b->q + at, b->n - at < b->per ? b->n - at : b->per, at, b->method, b->coverage,
                         b->oh + at, b->ol + at, b->sh ? b->sh + at : NULL, b->sl ? b->sl + at : NULL);
}

static int predict_batch(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n, ps_compose_t method,
                         double coverage, double *out_hp_ns, double *out_lp_ns, double *out_hp_solo_ns,
                         double *out_lp_solo_ns)
{
    if (!m || !ops || (n && (!q || !out_hp_ns || !out_lp_ns)))
        return psi_error(PS_E_ARG, "ps_model_predict: NULL argument");
    if (method != PS_COMPOSE_INDEX && method != PS_COMPOSE_OVERLAP)
        return psi_error(PS_E_ARG, "unknown composition method %d", (int)method);
    int gpu_tpcs = psi_model_gpu_tpcs(ops, m->gpu);
    size_t rows = 0;
    for (size_t k = 0; k < n; k++) {
        int rc = check_query(m, ops, &q[k], gpu_tpcs);
        if (rc != PS_OK)
            return query_error(rc, k);
        rows += (size_t)n_windows(q[k].hp_len, m->layout.window) * (size_t)n_windows(q[k].lp_len, m->layout.window);
    }
    /* Slices of at most SLICE queries. From PARALLEL_MIN window pairs, a
     * multiple of the thread count, in one parallel region: each thread
     * builds, predicts and composes its own slices, so that the threads meet
     * only at its end (a barrier costs milliseconds when the machine is
     * oversubscribed). */
    int threads = 1;
#ifdef _OPENMP
    if (rows >= PARALLEL_MIN)
        threads = omp_get_max_threads();
#endif
    size_t n_slices = (n + SLICE - 1) / SLICE;
    n_slices = (n_slices + (size_t)threads - 1) / (size_t)threads * (size_t)threads;
    size_t per = n_slices ? (n + n_slices - 1) / n_slices : 0;
    batch_t bt = {m, ops, q, n, per, method, coverage, out_hp_ns, out_lp_ns, out_hp_solo_ns, out_lp_solo_ns};
    if (threads == 1) {
        for (size_t s = 0; s < n_slices; s++) {
            int rc = run_slice(&bt, s);
            if (rc != PS_OK)
                return rc;
        }
        return PS_OK;
    }
    int *rcs = psi_calloc(n_slices, sizeof *rcs);
    if (!rcs)
        return PS_E_NOMEM;
#pragma omp parallel for schedule(dynamic, 1)
    for (long long s = 0; s < (long long)n_slices; s++)
        rcs[s] = run_slice(&bt, (size_t)s);
    /* Messages are thread-local: a slice that failed runs again on this
     * thread, so that ps_last_error() names the query. */
    int rc = PS_OK;
    for (size_t s = 0; s < n_slices && rc == PS_OK; s++)
        if (rcs[s] != PS_OK)
            rc = run_slice(&bt, s);
    free(rcs);
    return rc;
}

int ps_model_predict_compose(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n,
                             ps_compose_t method, double *out_hp_ns, double *out_lp_ns, double *out_hp_solo_ns,
                             double *out_lp_solo_ns)
{
    return predict_batch(m, ops, q, n, method, 0, out_hp_ns, out_lp_ns, out_hp_solo_ns, out_lp_solo_ns);
}

int ps_model_predict_bound(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n, double coverage,
                           double *out_hp_upper_ns, double *out_lp_upper_ns)
{
    if (!m)
        return psi_error(PS_E_ARG, "ps_model_predict_bound: NULL model");
    if (!m->calib)
        return psi_error(PS_E_ARG, "the model has no calibration (train it again with this version; "
                                   "adapted models lose theirs)");
    if (!(coverage >= 0.5 && coverage <= 0.999))
        return psi_error(PS_E_ARG, "coverage %g is outside 0.5..0.999", coverage);
    return predict_batch(m, ops, q, n, PS_COMPOSE_OVERLAP, coverage, out_hp_upper_ns, out_lp_upper_ns, NULL, NULL);
}

int ps_model_predict(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n, double *out_hp_ns,
                     double *out_lp_ns)
{
    return ps_model_predict_compose(m, ops, q, n, PS_COMPOSE_OVERLAP, out_hp_ns, out_lp_ns, NULL, NULL);
}
