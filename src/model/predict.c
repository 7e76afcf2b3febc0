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

static void compose_index(const psi_windows_t *w, double *th, double *tl)
{
    int nh = w->nh, nl = w->nl;
    *th = 0;
    *tl = 0;
    for (int i = 0; i < nh; i++)
        *th += w->wh[i] * exp(w->lh[(size_t)i * nl + (i < nl ? i : nl - 1)]);
    for (int j = 0; j < nl; j++)
        *tl += w->wl[j] * exp(w->ll[(size_t)(j < nh ? j : nh - 1) * nl + j]);
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

/* One side's timeline in compose_overlap: its n windows' standalone times
 * w and predicted times d (what relax updates), and the slowdown of its
 * window i while beside co-runner window j, kappa[i * stride_i + j *
 * stride_j] (the table is HP-major for both sides). */
typedef struct {
    int n;
    const double *w;
    double *d;
    const double *kappa;
    size_t stride_i, stride_j;
} timeline_t;

/* fmin and fmax without the library call (relax runs them some 10^5 times
 * a plan): the number beside a NaN, else the lesser (greater) operand, the
 * second where they compare equal, which are the same number here (window
 * times and their sums from +0 are never -0). */
static inline double min_of(double x, double y) { return x != x ? y : y != y ? x : x < y ? x : y; }
static inline double max_of(double x, double y) { return x != x ? y : y != y ? x : x > y ? x : y; }

/* One side's update: new window times from the overlap-weighted progress
 * beside the other side's current timeline. */
static double relax(const timeline_t *me, const timeline_t *other)
{
    const double *w = me->w, *kappa = me->kappa, *d_other = other->d;
    double *d = me->d;
    size_t stride_i = me->stride_i, stride_j = me->stride_j;
    int n = me->n, n_other = other->n;
    double change = 0, a = 0;
    for (int i = 0; i < n; i++) {
        double b = a + d[i], progress = 0, covered = 0, c = 0;
        for (int j = 0; j < n_other; j++) {
            double e = c + d_other[j];
            double o = min_of(b, e) - max_of(a, c);
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

/* Queries whose overlap relaxations run side by side (compose_group): each
 * pass is a chain of dependent divisions, and independent chains overlap in
 * the CPU. */
#define COMPOSE_GROUP 4

/* One query's relaxation in compose_group: its two timelines, its tables
 * (buf: the stack's or an allocation), and whether it has settled. */
typedef struct {
    timeline_t hp, lp;
    double *buf;
    int done;
} overlap_t;

/* The tables and starting timelines of w (two windows or more) in stack
 * (64 doubles) or, past it, an allocation. */
static int overlap_start(const psi_windows_t *w, double *stack, overlap_t *o)
{
    int nh = w->nh, nl = w->nl;
    const double *lh = w->lh, *ll = w->ll, *wh = w->wh, *wl = w->wl;
    size_t np = (size_t)nh * (size_t)nl, need = 2 * np + (size_t)nh + (size_t)nl;
    /* The planner's segments have at most a few windows a side: their
     * tables fit on the stack, a longer query's take one allocation. */
    double *kh = need <= 64 ? stack : psi_malloc(need * sizeof *kh);
    if (!kh)
        return PS_E_NOMEM;
    double *kl = kh + np, *dh = kl + np, *dl = dh + nh;
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
    *o = (overlap_t){{nh, wh, dh, kh, (size_t)nl, 1}, {nl, wl, dl, kl, 1, (size_t)nl}, kh, 0};
    return PS_OK;
}

/* Queries w[n] (n <= COMPOSE_GROUP) composed by overlap, each exactly as
 * alone: passes until both sides move by less than a part in 1e9, at most
 * 500; one window a side is the pair prediction (compose_index). */
static int compose_group(const psi_windows_t *w, int n, double *th, double *tl)
{
    double stack[COMPOSE_GROUP][64];
    overlap_t o[COMPOSE_GROUP];
    int rc = PS_OK, live = 0;
    for (int k = 0; k < n; k++) {
        o[k] = (overlap_t){.done = 1};
        if (w[k].nh == 1 && w[k].nl == 1)
            compose_index(&w[k], &th[k], &tl[k]);
        else if (rc == PS_OK && (rc = overlap_start(&w[k], stack[k], &o[k])) == PS_OK)
            live++;
    }
    for (int pass = 0; rc == PS_OK && live > 0 && pass < 500; pass++)
        for (int k = 0; k < n; k++) {
            if (o[k].done)
                continue;
            double c1 = relax(&o[k].hp, &o[k].lp);
            double c2 = relax(&o[k].lp, &o[k].hp);
            if (c1 < 1e-9 && c2 < 1e-9) {
                o[k].done = 1;
                live--;
            }
        }
    for (int k = 0; k < n; k++) {
        if (!o[k].buf)
            continue;
        th[k] = 0;
        tl[k] = 0;
        for (int i = 0; i < o[k].hp.n; i++)
            th[k] += o[k].hp.d[i];
        for (int j = 0; j < o[k].lp.n; j++)
            tl[k] += o[k].lp.d[j];
        if (o[k].buf != stack[k])
            free(o[k].buf);
    }
    return rc;
}

int psi_compose_windows(ps_compose_t method, const psi_windows_t *w, double *t_hp, double *t_lp)
{
    if (method == PS_COMPOSE_INDEX) {
        compose_index(w, t_hp, t_lp);
        return PS_OK;
    }
    return compose_group(w, 1, t_hp, t_lp);
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
        rc = psi_features_build_pair(&m->layout, ops, &w, x, x + nf, NULL);
    }
    window_range(q->hp_start, q->hp_len, nh, 0, &w.hp_start, &w.hp_len);
    for (int j = 0; j < nl && rc == PS_OK; j++) {
        window_range(q->lp_start, q->lp_len, nl, j, &w.lp_start, &w.lp_len);
        rc = psi_features_build_pair(&m->layout, ops, &w, x, x + nf, NULL);
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

/* One call's batch: queries q[n] of model m on ops, composed by method,
 * cut into slices of per queries. Outputs (caller's, [n] each): the
 * latencies oh, ol and the solo times sh, sl (either NULL: not wanted). */
typedef struct {
    const ps_model_t *m;
    const ps_ops_t *ops;
    const ps_query_t *q;
    size_t n, per;
    ps_compose_t method;
    double coverage; /* > 0: upper bounds at this coverage */
    double *oh, *ol, *sh, *sl;
    const psi_pair_ctx_t *pairs; /* non-NULL: window pairs through its memo (slice_memo) */
} batch_t;

/* One slice: queries [first, first + n) of the batch, n >= 1, and their
 * rows and solo times: query k's window pairs are rows [row0[k], row0[k+1])
 * of lh, ll; its windows' solo times wsolo[win0[k]...] (HP windows, then
 * LP). xh, xl: the features of one block of rows (slice_predict), reused
 * block after block so that they stay in cache. */
typedef struct {
    size_t first, n;
    const ps_query_t *q; /* the batch's q + first */
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

/* Slice [first, first + n) of b's queries, its buffers allocated. */
static int slice_alloc(const batch_t *b, size_t first, size_t n, slice_t *s)
{
    size_t nf = (size_t)b->m->layout.n_features;
    int W = b->m->layout.window;
    const ps_query_t *q = b->q + first;
    *s = (slice_t){.first = first,
                   .n = n,
                   .q = q,
                   .row0 = psi_malloc((n + 1) * sizeof *s->row0),
                   .win0 = psi_malloc((n + 1) * sizeof *s->win0)};
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
    s->memo = psi_features_memo_new(&b->m->layout);
    return s->xh && s->xl && s->lh && s->ll && s->wsolo && s->memo ? PS_OK : PS_E_NOMEM;
}

/* The window pairs of the slice's query k as read from its tables. */
static psi_windows_t slice_windows(const slice_t *s, size_t k, int W)
{
    int nh = n_windows(s->q[k].hp_len, W), nl = n_windows(s->q[k].lp_len, W);
    const double *wh = s->wsolo + s->win0[k];
    return (psi_windows_t){nh, nl, s->lh + s->row0[k], s->ll + s->row0[k], wh, wh + nh};
}

/* Where the LP regressor's rows are built: the HP rows themselves where the
 * layout gives both sides one vector (psi_model_predict_rows_pair reads
 * them once), else their own block. */
static float *lp_rows(const batch_t *b, const slice_t *s)
{
    return b->m->layout.variant == PS_FEAT_NO_CORUNNER ? s->xl : s->xh;
}

/* The features of every window pair of the slice's query k into the block
 * rows from r (xh, xl), and the solo times of its windows. */
static int build_pairs(const batch_t *b, slice_t *s, size_t k, size_t r)
{
    const ps_model_t *m = b->m;
    size_t nf = (size_t)m->layout.n_features;
    const ps_query_t *q = &s->q[k];
    int nh = n_windows(q->hp_len, m->layout.window), nl = n_windows(q->lp_len, m->layout.window);
    double *wh = s->wsolo + s->win0[k], *wl = wh + nh;
    ps_query_t w = *q;
    for (int i = 0; i < nh; i++) {
        window_range(q->hp_start, q->hp_len, nh, i, &w.hp_start, &w.hp_len);
        for (int j = 0; j < nl; j++) {
            window_range(q->lp_start, q->lp_len, nl, j, &w.lp_start, &w.lp_len);
            size_t at = (r + (size_t)i * (size_t)nl + (size_t)j) * nf;
            psi_solo_t solo;
            int rc = psi_features_build_pair_memo(s->memo, b->ops, &w, s->xh + at, lp_rows(b, s) + at, &solo);
            if (rc != PS_OK)
                return rc;
            wh[i] = solo.hp_ns;
            wl[j] = solo.lp_ns;
        }
    }
    return PS_OK;
}

/* Features of both sides, built once per window pair, a block of about
 * PREDICT_BLOCK rows at a time; each block goes through both regressors
 * while its rows are still in cache. */
static int slice_predict(const batch_t *b, slice_t *s)
{
    for (size_t k = 0, k0 = 0; k < s->n; k++) {
        int rc = build_pairs(b, s, k, s->row0[k] - s->row0[k0]);
        if (rc != PS_OK)
            return query_error(rc, s->first + k);
        if (s->row0[k + 1] - s->row0[k0] >= PREDICT_BLOCK || k + 1 == s->n) {
            size_t r0 = s->row0[k0], nr = s->row0[k + 1] - r0;
            psi_model_predict_rows_pair(b->m, s->xh, s->xl, nr, s->lh + r0, s->ll + r0);
            k0 = k + 1;
        }
    }
    return PS_OK;
}

/* Upper bounds: every window pair's log delta moves up by its bin's
 * conformal quantile before composition (docs/planner.md). A bin depends on
 * the HP window and the split alone (psi_calib_bin_key), so each HP window's
 * offsets serve all its LP windows. */
static int slice_bounds(const batch_t *b, slice_t *s)
{
    int W = b->m->layout.window;
    for (size_t k = 0; k < s->n; k++) {
        const ps_query_t *q = &s->q[k];
        int nh = n_windows(q->hp_len, W), nl = n_windows(q->lp_len, W);
        ps_query_t w = *q;
        for (int i = 0; i < nh && nl > 0; i++) {
            window_range(q->hp_start, q->hp_len, nh, i, &w.hp_start, &w.hp_len);
            double oh, ol;
            int rc = psi_calib_offsets(b->m->calib, b->ops, &w, b->coverage, &oh, &ol);
            if (rc != PS_OK)
                return query_error(rc, s->first + k);
            for (int j = 0; j < nl; j++) {
                s->lh[s->row0[k] + (size_t)i * nl + j] += oh;
                s->ll[s->row0[k] + (size_t)i * nl + j] += ol;
            }
        }
    }
    return PS_OK;
}

/* The window pairs of a slice through the model's memo (slice_memo): row
 * r's key, value, whether the memo held it, its query, and the row whose
 * value it takes (itself, or the first row of the slice with its key). */
typedef struct {
    psi_pair_key_t *key;
    psi_pair_val_t *val;
    unsigned char *hit;
    size_t *kq, *src, *miss; /* miss[n_miss]: the rows to predict */
    size_t n_miss;
} pairs_t;

static void pairs_free(pairs_t *p)
{
    free(p->key);
    free(p->val);
    free(p->hit);
    free(p->kq);
    free(p->src);
    free(p->miss);
}

/* The keys and queries of the slice's R rows, in row order. */
static int pairs_alloc(const slice_t *s, int W, size_t R, pairs_t *p)
{
    *p = (pairs_t){.key = psi_malloc(R * sizeof *p->key),
                   .val = psi_malloc(R * sizeof *p->val),
                   .hit = psi_malloc(R),
                   .kq = psi_malloc(R * sizeof *p->kq),
                   .src = psi_malloc(R * sizeof *p->src),
                   .miss = psi_malloc(R * sizeof *p->miss)};
    if (!p->key || !p->val || !p->hit || !p->kq || !p->src || !p->miss)
        return PS_E_NOMEM;
    for (size_t k = 0, r = 0; k < s->n; k++) {
        const ps_query_t *q = &s->q[k];
        int nh = n_windows(q->hp_len, W), nl = n_windows(q->lp_len, W), a[2], b[2];
        for (int i = 0; i < nh; i++) {
            window_range(q->hp_start, q->hp_len, nh, i, &a[0], &a[1]);
            for (int j = 0; j < nl; j++, r++) {
                window_range(q->lp_start, q->lp_len, nl, j, &b[0], &b[1]);
                p->key[r] = (psi_pair_key_t){{a[0], a[1], b[0], b[1], q->hp_tpcs, q->lp_tpcs}};
                p->kq[r] = k;
            }
        }
    }
    return PS_OK;
}

/* Rows the memo lacks, each key once: src[r] names the first row with r's
 * key (an open-addressing table of rows + 1 over the keys' hashes). */
static int pairs_misses(pairs_t *p, size_t R)
{
    size_t cap = 16;
    while (cap < 2 * R)
        cap *= 2;
    size_t *t = psi_calloc(cap, sizeof *t);
    if (!t)
        return PS_E_NOMEM;
    p->n_miss = 0;
    for (size_t r = 0; r < R; r++) {
        p->src[r] = r;
        if (p->hit[r])
            continue;
        size_t at = (size_t)psi_pair_key_hash(0, &p->key[r]) & (cap - 1);
        while (t[at] && memcmp(&p->key[t[at] - 1], &p->key[r], sizeof p->key[r]) != 0)
            at = (at + 1) & (cap - 1);
        if (t[at])
            p->src[r] = t[at] - 1;
        else {
            t[at] = r + 1;
            p->miss[p->n_miss++] = r;
        }
    }
    free(t);
    return PS_OK;
}

/* Misses [m0, m1) of p built into the slice's block, walked through both
 * regressors and moved up by their bins' offsets (a bound), as slice_predict
 * and slice_bounds do for every row. */
static int pairs_predict(const batch_t *b, slice_t *s, pairs_t *p, size_t m0, size_t m1)
{
    size_t nf = (size_t)b->m->layout.n_features;
    double lh[PREDICT_BLOCK], ll[PREDICT_BLOCK], oh = 0, ol = 0;
    /* A bound's offsets depend on the HP window and the split only (the
     * groups are the batch's): kept from one pair to the next while those
     * stay. */
    int last[4] = {-1, -1, -1, -1};
    for (size_t t = m0; t < m1; t++) {
        size_t r = p->miss[t];
        const psi_pair_key_t *k = &p->key[r];
        ps_query_t w = s->q[p->kq[r]];
        w.hp_start = k->k[0];
        w.hp_len = k->k[1];
        w.lp_start = k->k[2];
        w.lp_len = k->k[3];
        psi_solo_t solo;
        int rc = psi_features_build_pair_memo(s->memo, b->ops, &w, s->xh + (t - m0) * nf, lp_rows(b, s) + (t - m0) * nf,
                                              &solo);
        int bin[4] = {w.hp_start, w.hp_len, w.hp_tpcs, w.lp_tpcs};
        if (rc == PS_OK && b->coverage > 0 && memcmp(bin, last, sizeof bin) != 0) {
            rc = psi_calib_offsets(b->m->calib, b->ops, &w, b->coverage, &oh, &ol);
            memcpy(last, bin, sizeof bin);
        }
        if (rc != PS_OK)
            return query_error(rc, s->first + p->kq[r]);
        p->val[r] = (psi_pair_val_t){oh, ol, solo.hp_ns, solo.lp_ns};
    }
    psi_model_predict_rows_pair(b->m, s->xh, s->xl, m1 - m0, lh, ll);
    for (size_t t = m0; t < m1; t++) {
        psi_pair_val_t *v = &p->val[p->miss[t]];
        if (b->coverage > 0) {
            v->lh = lh[t - m0] + v->lh;
            v->ll = ll[t - m0] + v->ll;
        } else {
            v->lh = lh[t - m0];
            v->ll = ll[t - m0];
        }
    }
    return PS_OK;
}

/* The memo's new pairs, stored in one call. */
static int pairs_store(const psi_pair_ctx_t *c, const pairs_t *p)
{
    psi_pair_key_t *k = psi_malloc((p->n_miss ? p->n_miss : 1) * sizeof *k);
    psi_pair_val_t *v = psi_malloc((p->n_miss ? p->n_miss : 1) * sizeof *v);
    if (k && v) {
        for (size_t t = 0; t < p->n_miss; t++) {
            k[t] = p->key[p->miss[t]];
            v[t] = p->val[p->miss[t]];
        }
        psi_pair_memo_put(c->memo, c->key, k, p->n_miss, v);
    }
    free(k);
    free(v);
    return k && v ? PS_OK : PS_E_NOMEM;
}

/* slice_predict and slice_bounds through b->pairs' memo: pairs met before
 * are read, the others predicted once each and stored. */
static int slice_memo(const batch_t *b, slice_t *s)
{
    int W = b->m->layout.window;
    size_t R = s->row0[s->n];
    pairs_t p;
    int rc = pairs_alloc(s, W, R, &p);
    if (rc == PS_OK) {
        psi_pair_memo_get(b->pairs->memo, b->pairs->key, p.key, R, p.val, p.hit);
        rc = pairs_misses(&p, R);
    }
    for (size_t m0 = 0; rc == PS_OK && m0 < p.n_miss; m0 += PREDICT_BLOCK)
        rc = pairs_predict(b, s, &p, m0, m0 + PREDICT_BLOCK < p.n_miss ? m0 + PREDICT_BLOCK : p.n_miss);
    if (rc == PS_OK)
        rc = pairs_store(b->pairs, &p);
    for (size_t k = 0, r = 0; rc == PS_OK && k < s->n; k++) {
        int nh = n_windows(s->q[k].hp_len, W), nl = n_windows(s->q[k].lp_len, W);
        double *wh = s->wsolo + s->win0[k], *wl = wh + nh;
        for (int i = 0; i < nh; i++)
            for (int j = 0; j < nl; j++, r++) {
                const psi_pair_val_t *v = &p.val[p.src[r]];
                s->lh[r] = v->lh;
                s->ll[r] = v->ll;
                wh[i] = v->wh;
                wl[j] = v->wl;
            }
    }
    pairs_free(&p);
    return rc;
}

/* Each query's windows composed into its latencies and solo times. */
static int slice_compose(const batch_t *b, const slice_t *s)
{
    int W = b->m->layout.window;
    for (size_t k0 = 0; k0 < s->n; k0 += COMPOSE_GROUP) {
        size_t n = s->n - k0 < COMPOSE_GROUP ? s->n - k0 : COMPOSE_GROUP, at = s->first + k0;
        psi_windows_t w[COMPOSE_GROUP];
        for (size_t k = 0; k < n; k++)
            w[k] = slice_windows(s, k0 + k, W);
        int rc = b->method == PS_COMPOSE_INDEX ? PS_OK : compose_group(w, (int)n, &b->oh[at], &b->ol[at]);
        if (rc != PS_OK)
            return psi_error(rc, "out of memory composing windows");
        for (size_t k = 0; k < n; k++) {
            double sum_h = 0, sum_l = 0;
            if (b->method == PS_COMPOSE_INDEX)
                compose_index(&w[k], &b->oh[at + k], &b->ol[at + k]);
            for (int i = 0; i < w[k].nh; i++)
                sum_h += w[k].wh[i];
            for (int j = 0; j < w[k].nl; j++)
                sum_l += w[k].wl[j];
            if (b->sh)
                b->sh[at + k] = sum_h;
            if (b->sl)
                b->sl[at + k] = sum_l;
        }
    }
    return PS_OK;
}

/* Slice s (queries [s * per, ...) of the batch) on the calling thread:
 * features, regressors, bounds (coverage > 0), composition. */
static int run_slice(const batch_t *b, size_t s)
{
    size_t at = s * b->per;
    if (at >= b->n)
        return PS_OK;
    slice_t sl;
    int rc = slice_alloc(b, at, b->n - at < b->per ? b->n - at : b->per, &sl);
    if (rc == PS_OK)
        rc = b->pairs ? slice_memo(b, &sl) : slice_predict(b, &sl);
    if (rc == PS_OK && b->coverage > 0 && !b->pairs)
        rc = slice_bounds(b, &sl);
    if (rc == PS_OK)
        rc = slice_compose(b, &sl);
    /* Composed segments: the conformal step on the composition (bounds.c). */
    int W = b->m->layout.window;
    for (size_t k = at; rc == PS_OK && b->coverage > 0 && k < at + sl.n; k++) {
        double ch, cl;
        if ((b->q[k].hp_len > W || b->q[k].lp_len > W) && psi_calib_composed(b->m->calib, b->coverage, &ch, &cl)) {
            b->oh[k] *= exp(ch);
            b->ol[k] *= exp(cl);
        }
    }
    slice_free(&sl);
    return rc;
}

/* The whole batch b (b->per set here). */
static int predict_batch(batch_t *b)
{
    const ps_model_t *m = b->m;
    if (!m || !b->ops || (b->n && (!b->q || !b->oh || !b->ol)))
        return psi_error(PS_E_ARG, "ps_model_predict: NULL argument");
    if (b->method != PS_COMPOSE_INDEX && b->method != PS_COMPOSE_OVERLAP)
        return psi_error(PS_E_ARG, "unknown composition method %d", (int)b->method);
    int gpu_tpcs = psi_model_gpu_tpcs(b->ops, m->gpu);
    size_t rows = 0, n = b->n;
    for (size_t k = 0; k < n; k++) {
        int rc = check_query(m, b->ops, &b->q[k], gpu_tpcs);
        if (rc != PS_OK)
            return query_error(rc, k);
        rows +=
            (size_t)n_windows(b->q[k].hp_len, m->layout.window) * (size_t)n_windows(b->q[k].lp_len, m->layout.window);
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
    b->per = n_slices ? (n + n_slices - 1) / n_slices : 0;
    if (threads == 1) {
        for (size_t s = 0; s < n_slices; s++) {
            int rc = run_slice(b, s);
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
        rcs[s] = run_slice(b, (size_t)s);
    /* Messages are thread-local: a slice that failed runs again on this
     * thread, so that ps_last_error() names the query. */
    int rc = PS_OK;
    for (size_t s = 0; s < n_slices && rc == PS_OK; s++)
        if (rcs[s] != PS_OK)
            rc = run_slice(b, s);
    free(rcs);
    return rc;
}

int ps_model_predict_compose(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n,
                             ps_compose_t method, double *out_hp_ns, double *out_lp_ns, double *out_hp_solo_ns,
                             double *out_lp_solo_ns)
{
    batch_t b = {m, ops, q, n, 0, method, 0, out_hp_ns, out_lp_ns, out_hp_solo_ns, out_lp_solo_ns, NULL};
    return predict_batch(&b);
}

/* Whether m can bound at coverage (ps_model_predict_bound's checks). */
static int bound_ok(const ps_model_t *m, double coverage)
{
    if (!m)
        return psi_error(PS_E_ARG, "ps_model_predict_bound: NULL model");
    if (!m->calib)
        return psi_error(PS_E_ARG, "the model has no calibration (train it again with this version; "
                                   "adapted models lose theirs)");
    if (!(coverage >= 0.5 && coverage <= 0.999))
        return psi_error(PS_E_ARG, "coverage %g is outside 0.5..0.999", coverage);
    return PS_OK;
}

int ps_model_predict_bound(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n, double coverage,
                           double *out_hp_upper_ns, double *out_lp_upper_ns)
{
    int rc = bound_ok(m, coverage);
    if (rc != PS_OK)
        return rc;
    batch_t b = {m, ops, q, n, 0, PS_COMPOSE_OVERLAP, coverage, out_hp_upper_ns, out_lp_upper_ns, NULL, NULL, NULL};
    return predict_batch(&b);
}

int ps_model_predict(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n, double *out_hp_ns,
                     double *out_lp_ns)
{
    return ps_model_predict_compose(m, ops, q, n, PS_COMPOSE_OVERLAP, out_hp_ns, out_lp_ns, NULL, NULL);
}

int psi_pair_ctx_bind(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, double coverage,
                      psi_pair_ctx_t *out)
{
    *out = (psi_pair_ctx_t){.m = m, .ops = ops, .coverage = coverage, .q = *q, .memo = m ? m->pair_memo : NULL};
    const psi_op_group_t *h = q->gpu ? psi_ops_find(ops, q->gpu, q->hp_model, q->hp_batch) : NULL,
                         *l = q->gpu ? psi_ops_find(ops, q->gpu, q->lp_model, q->lp_batch) : NULL;
    if (!out->memo || !h || !l) {
        out->memo = NULL; /* predicted as ps_model_predict(_bound) does, without the memo */
        return PS_OK;
    }
    int total = psi_model_gpu_tpcs(ops, m->gpu);
    uint64_t k = psi_pair_memo_hash(0x70616972736d656dULL, &m->layout, sizeof m->layout);
    k = psi_pair_memo_hash(k, m->gpu, strlen(m->gpu));
    k = psi_pair_memo_hash(k, &total, sizeof total);
    k = psi_pair_memo_hash(k, &coverage, sizeof coverage);
    k = psi_pair_memo_hash_group(psi_pair_memo_hash_group(k, h), l);
    out->key = k ? k : 1;
    return PS_OK;
}

/* Whether q names c's GPU, models and batches (the memo's context). */
static int same_groups(const ps_query_t *q, const ps_query_t *c)
{
    return q->gpu && q->hp_model && q->lp_model && q->hp_batch == c->hp_batch && q->lp_batch == c->lp_batch &&
           strcmp(q->gpu, c->gpu) == 0 && strcmp(q->hp_model, c->hp_model) == 0 &&
           strcmp(q->lp_model, c->lp_model) == 0;
}

/* The queries a batch of psi_model_predict_memo must predict: those whose
 * answer the memo lacks (under the context's key with a query tag: a
 * query met before costs one look-up, no pair and no composition). */
typedef struct {
    psi_pair_key_t *key; /* [n] */
    psi_pair_val_t *val; /* [n]: lh, ll hold the answer */
    unsigned char *hit;
    ps_query_t *q; /* [n_miss] */
    size_t *at;    /* [n_miss]: its index in the caller's batch */
    double *oh, *ol;
    size_t n_miss;
} query_memo_t;

static void query_memo_free(query_memo_t *t)
{
    free(t->key);
    free(t->val);
    free(t->hit);
    free(t->q);
    free(t->at);
    free(t->oh);
    free(t->ol);
}

static uint64_t query_tag(const psi_pair_ctx_t *c) { return psi_mix64(c->key ^ 0x7175657279ULL) | 1; }

/* Looks up q[n]; the answers found into oh, ol, the others listed. */
static int query_memo_get(const psi_pair_ctx_t *c, const ps_query_t *q, size_t n, query_memo_t *t, double *oh,
                          double *ol)
{
    *t = (query_memo_t){.key = psi_malloc(n * sizeof *t->key),
                        .val = psi_malloc(n * sizeof *t->val),
                        .hit = psi_malloc(n),
                        .q = psi_malloc(n * sizeof *t->q),
                        .at = psi_malloc(n * sizeof *t->at),
                        .oh = psi_malloc(n * sizeof *t->oh),
                        .ol = psi_malloc(n * sizeof *t->ol)};
    if (!t->key || !t->val || !t->hit || !t->q || !t->at || !t->oh || !t->ol)
        return PS_E_NOMEM;
    for (size_t k = 0; k < n; k++)
        t->key[k] =
            (psi_pair_key_t){{q[k].hp_start, q[k].hp_len, q[k].lp_start, q[k].lp_len, q[k].hp_tpcs, q[k].lp_tpcs}};
    psi_pair_memo_get(c->memo, query_tag(c), t->key, n, t->val, t->hit);
    for (size_t k = 0; k < n; k++) {
        if (t->hit[k]) {
            oh[k] = t->val[k].lh;
            ol[k] = t->val[k].ll;
        } else {
            t->q[t->n_miss] = q[k];
            t->at[t->n_miss++] = k;
        }
    }
    return PS_OK;
}

int psi_model_predict_memo(const psi_pair_ctx_t *c, const ps_query_t *q, size_t n, double *out_hp_ns, double *out_lp_ns)
{
    if (!c->memo || n == 0)
        return c->coverage > 0 ? ps_model_predict_bound(c->m, c->ops, q, n, c->coverage, out_hp_ns, out_lp_ns)
                               : ps_model_predict(c->m, c->ops, q, n, out_hp_ns, out_lp_ns);
    int rc = c->coverage > 0 ? bound_ok(c->m, c->coverage) : PS_OK;
    for (size_t k = 0; rc == PS_OK && k < n; k++)
        if (!same_groups(&q[k], &c->q))
            rc = psi_error(PS_E_ARG, "query %zu: not the GPU, models and batches the memo was bound to", k);
    query_memo_t t = {0};
    if (rc == PS_OK)
        rc = query_memo_get(c, q, n, &t, out_hp_ns, out_lp_ns);
    batch_t b = {c->m, c->ops, t.q, t.n_miss, 0, PS_COMPOSE_OVERLAP, c->coverage, t.oh, t.ol, NULL, NULL, c};
    if (rc == PS_OK && t.n_miss > 0 && (rc = predict_batch(&b)) != PS_OK) {
        /* Again over the caller's batch, so that the message names its query. */
        b = (batch_t){c->m, c->ops, q, n, 0, PS_COMPOSE_OVERLAP, c->coverage, out_hp_ns, out_lp_ns, NULL, NULL, c};
        rc = predict_batch(&b);
    } else if (rc == PS_OK && t.n_miss > 0) {
        for (size_t k = 0; k < t.n_miss; k++) {
            out_hp_ns[t.at[k]] = t.oh[k];
            out_lp_ns[t.at[k]] = t.ol[k];
            t.key[k] = t.key[t.at[k]];
            t.val[k] = (psi_pair_val_t){t.oh[k], t.ol[k], 0, 0};
        }
        psi_pair_memo_put(c->memo, query_tag(c), t.key, t.n_miss, t.val);
    }
    query_memo_free(&t);
    return rc;
}
