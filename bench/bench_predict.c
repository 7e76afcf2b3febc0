/*
 * Prediction speed of our flattened forest (src/model/forest.c) against
 * XGBoost's in-place dense predictor on the same booster and the same rows,
 * in the same run: time per row at batches of 1, 1k and 100k rows on 1 and 2
 * threads for every kernel this CPU can run (traversal: scalar, avx2,
 * avx512), and XGBoost's time over each. The
 * booster is trained on synthetic data with the segment model's feature
 * count (2 sides x 16 operator slots x 6 token fields + p, q and both
 * standalone latencies = 196), or loaded (-l).
 *
 * Usage: bench_predict [options]
 *   -t trees  : boosting rounds (default 300)
 *   -d depth  : max_depth (default 8)
 *   -n rows   : training rows (default 20000)
 *   -f feats  : features (default 196)
 *   -r reps   : repetitions per cell, the fastest is kept (default 3)
 *   -m frac   : fraction of missing (NaN) features (default 0.1)
 *   -s file   : save the trained booster to file (default: not saved)
 *   -l file   : load a booster from file instead of training (default: train)
 *   -c exps   : experiments of the simulated A100 campaign for the end-to-end
 *               part, 0 = skip it (default 1000)
 *   -E rounds : trees per regressor of the end-to-end model (default 400)
 *   -M file   : the end-to-end model: loaded from file if it exists, else
 *               trained and saved there (default: trained, not saved)
 *   -k list   : kernels timed per row, comma-separated names (default: all)
 *
 * The end-to-end part trains the segment model (ps_model_train, depth 8,
 * eta 0.05, exactly -E rounds: early stopping is off) on a simulated
 * campaign, so that each regressor has the paper's size, and times per
 * candidate (one window per side, both sides, composition included):
 * ps_model_predict with each traversal kernel forced on the model's forests;
 * feature building alone; and features + XGBoost's predictor on the same
 * boosters.
 *
 * Times are CPU time of the process (CLOCK_PROCESS_CPUTIME_ID) unless marked
 * wall: on a loaded, shared machine the wall clock mostly measures the other
 * jobs.
 */
#include "common/common.h"
#include "model/forest.h"
#include "model/model.h"

#include "../tests/xgbhelp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* CPU seconds of the process, all threads: on a machine shared with other
 * work, the figure their load does not inflate (at 1 thread it is the time
 * on the CPU; at 2, the sum over both, spinning included). */
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Fastest wall and CPU seconds of the repetitions of a cell. */
typedef struct {
    double wall, cpu;
} times_t;

typedef struct {
    int trees, depth, rows, features, reps, e2e_rounds;
    long campaign;
    double missing;
    const char *save, *load, *e2e_file, *kernel_list;
} options_t;

static void usage(FILE *to)
{
    fputs("Usage: bench_predict [options]\n"
          "Times our forest traversal kernels against XGBoost's predictor on the same\n"
          "booster and rows, in one run (batches 1, 1k, 100k at 1 and 2 threads, the\n"
          "ratio printed beside each), then a segment model end to end per candidate.\n"
          "Run it from a Release build on an otherwise idle machine.\n\n"
          "options:\n"
          "  -t trees  : boosting rounds, 1..100000 (default 300)\n"
          "  -d depth  : max_depth, 1..20 (default 8)\n"
          "  -n rows   : training rows, 10..100000000 (default 20000)\n"
          "  -f feats  : features, 1..100000 (default 196)\n"
          "  -r reps   : repetitions per cell, the fastest is kept, 1..1000 (default 3)\n"
          "  -m frac   : fraction of missing (NaN) features, in [0, 1) (default 0.1)\n"
          "  -s file   : save the trained booster to file (default: not saved)\n"
          "  -l file   : load a booster from file instead of training (default: train)\n"
          "  -c exps   : experiments of the simulated campaign for the end-to-end part,\n"
          "              0 = skip it, 0..100000000 (default 1000)\n"
          "  -E rounds : trees per regressor of the end-to-end model, 1..100000 (default 400)\n"
          "  -M file   : end-to-end model: loaded from file if it exists, else trained\n"
          "              and saved there (default: trained, not saved)\n"
          "  -k list   : kernels timed per row, comma-separated, of scalar, avx2, avx512\n"
          "              (default: all this CPU runs)\n"
          "  -h        : this help\n\n"
          "examples:\n"
          "  bench_predict -t 400 -d 8 -r 3          # the issue's 400-tree depth-8 regressor\n"
          "  bench_predict -t 50 -r 1 -c 0 -k scalar,avx2   # a quick look, no end-to-end part\n"
          "  bench_predict -c 1000 -M /tmp/e2e.psm   # end to end, the model kept for the next run\n",
          to);
}

/* An integer option in lo..hi, or a message naming it: 0, or -1. */
static int int_opt(int c, const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi) {
        fprintf(stderr, "bench_predict: -%c: bad value '%s': expected an integer in %ld..%ld (see -h)\n", c, v, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

/* Each name of a -k list is a kernel's: 0, or -1 with a message. */
static int check_kernels(const char *list)
{
    static const char *const names[] = {"scalar", "avx2", "avx512"};
    for (const char *p = list; p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int ok = 0;
        for (size_t i = 0; i < PS_ARRAY_LEN(names); i++)
            ok |= strlen(names[i]) == n && strncmp(p, names[i], n) == 0;
        if (!ok) {
            fprintf(stderr,
                    "bench_predict: -k: unknown kernel '%.*s' in '%s': expected names of scalar, avx2, "
                    "avx512\n",
                    (int)n, p, list);
            return -1;
        }
        p = e ? e + 1 : NULL;
    }
    return 0;
}

/* A target that depends on many features, so that the trees split on many of
 * them as the segment model's do: a sum over the first 48 features of smooth
 * and step terms, plus interactions of neighbours. */
static void make_target(const float *x, size_t n, int nf, float *y)
{
    int k = nf < 48 ? nf : 48;
    for (size_t i = 0; i < n; i++) {
        const float *r = x + i * (size_t)nf;
        double s = 0;
        for (int j = 0; j < k; j++) {
            double v = isnan(r[j]) ? 0 : r[j];
            double w = isnan(r[(j + 1) % k]) ? 0 : r[(j + 1) % k];
            s += (j % 3 == 0 ? sin(2 * v) : j % 3 == 1 ? (v > 0.1 * (j % 7) ? 1 : -1) : v * w) / (1 + j % 5);
        }
        y[i] = (float)s;
    }
}

static void set_threads(BoosterHandle b, int t)
{
#ifdef _OPENMP
    omp_set_num_threads(t);
#endif
    char buf[16];
    snprintf(buf, sizeof buf, "%d", t);
    XGBoosterSetParam(b, "nthread", buf);
}

/* Seconds per row of the fastest of reps passes over `total` rows in calls of
 * `batch` rows, by the wall clock and by CPU time. */
static times_t time_ours(const psi_forest_t *f, const float *x, size_t total, size_t batch, int nf, double *out,
                         int reps)
{
    times_t best = {1e30, 1e30};
    for (int r = 0; r < reps; r++) {
        double t0 = psi_now(), c0 = cpu_now();
        for (size_t i = 0; i + batch <= total; i += batch)
            psi_forest_predict(f, x + i * (size_t)nf, batch, (size_t)nf, out + i);
        double rows = (double)(total / batch * batch);
        double dt = (psi_now() - t0) / rows, dc = (cpu_now() - c0) / rows;
        best.wall = dt < best.wall ? dt : best.wall;
        best.cpu = dc < best.cpu ? dc : best.cpu;
    }
    return best;
}

static times_t time_xgb(BoosterHandle b, const float *x, size_t total, size_t batch, int nf, float *out, int reps)
{
    times_t best = {1e30, 1e30};
    for (int r = 0; r < reps; r++) {
        double t0 = psi_now(), c0 = cpu_now();
        for (size_t i = 0; i + batch <= total; i += batch) {
            const float *p = xh_predict(b, x + i * (size_t)nf, batch, nf);
            if (!p)
                return (times_t){-1, -1};
            memcpy(out + i, p, batch * sizeof *p);
        }
        double rows = (double)(total / batch * batch);
        double dt = (psi_now() - t0) / rows, dc = (cpu_now() - c0) / rows;
        best.wall = dt < best.wall ? dt : best.wall;
        best.cpu = dc < best.cpu ? dc : best.cpu;
    }
    return best;
}

/* ------------------------------------------------------------------------ */
/* Per row: every kernel against XGBoost                                    */
/* ------------------------------------------------------------------------ */

static const int kernels[] = {PS_FOREST_SCALAR, PS_FOREST_AVX2, PS_FOREST_AVX512};
enum { N_KERNELS = PS_ARRAY_LEN(kernels), N_TEST = 100000 };
static const size_t batches[] = {1, 1000, 100000};

/* The booster, our forest of it, the test rows and the reference. */
typedef struct {
    BoosterHandle b;
    psi_forest_t *f;
    const float *xt;
    int nf, reps;
    double *ours;
    float *ref;
    const char *list; /* kernels to time (-k), NULL: all */
} rows_t;

/* Whether name is one of the comma-separated names of list (NULL: all). */
static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == 0))
            return 1;
    return !list;
}

/* Rows timed per cell: enough that every cell takes a measurable time. */
static size_t cell_rows(size_t batch, int kernel)
{
    (void)kernel;
    return batch == 1 ? 3000 : N_TEST;
}

static void print_row_table(const char *title, times_t t[][2][N_KERNELS + 1], const int *have, int cpu)
{
    printf("%s, us per row; x/K: XGBoost's time over kernel K's\n%7s %7s", title, "batch", "threads");
    for (int k = 0; k <= N_KERNELS; k++)
        printf(" %9s", k < N_KERNELS ? psi_forest_kernel_name(kernels[k]) : "xgb");
    for (int k = 0; k < N_KERNELS; k++)
        printf(" %7s%-3s", "x/", psi_forest_kernel_name(kernels[k]));
    printf("\n");
    for (size_t bi = 0; bi < PS_ARRAY_LEN(batches); bi++)
        for (int th = 0; th < 2; th++) {
            times_t *c = t[bi][th];
            double x = cpu ? c[N_KERNELS].cpu : c[N_KERNELS].wall;
            printf("%7zu %7d", batches[bi], th + 1);
            for (int k = 0; k <= N_KERNELS; k++)
                if (k == N_KERNELS || have[k])
                    printf(" %9.3f", 1e6 * (cpu ? c[k].cpu : c[k].wall));
                else
                    printf(" %9s", "-");
            for (int k = 0; k < N_KERNELS; k++)
                if (have[k])
                    printf(" %9.1fx", x / (cpu ? c[k].cpu : c[k].wall));
                else
                    printf(" %10s", "-");
            printf("\n");
        }
}

/* Times every kernel this CPU can run and XGBoost at each batch and thread
 * count, then prints the tables by CPU time and by the wall clock. */
static void row_tables(rows_t *r)
{
    times_t t[PS_ARRAY_LEN(batches)][2][N_KERNELS + 1];
    int best = psi_forest_set_kernel(r->f, PS_FOREST_BEST), have[N_KERNELS];
    printf("kernels:");
    for (int k = 0; k < N_KERNELS; k++) {
        have[k] = psi_forest_set_kernel(r->f, kernels[k]) == kernels[k] &&
                  in_list(r->list, psi_forest_kernel_name(kernels[k]));
        printf(" %s %s", psi_forest_kernel_name(kernels[k]), have[k] ? "yes" : "no");
    }
    printf("; best (picked by CPUID): %s\n", psi_forest_kernel_name(best));
    memset(t, 0, sizeof t);
    for (size_t bi = 0; bi < PS_ARRAY_LEN(batches); bi++)
        for (int th = 0; th < 2; th++) {
            size_t batch = batches[bi];
            set_threads(r->b, th + 1);
            xh_predict(r->b, r->xt, batch, r->nf); /* warm-up */
            t[bi][th][N_KERNELS] = time_xgb(r->b, r->xt, cell_rows(batch, -1), batch, r->nf, r->ref, r->reps);
            for (int k = 0; k < N_KERNELS; k++)
                if (have[k]) {
                    psi_forest_set_kernel(r->f, kernels[k]);
                    t[bi][th][k] = time_ours(r->f, r->xt, cell_rows(batch, kernels[k]), batch, r->nf, r->ours, r->reps);
                }
            fprintf(stderr, "bench_predict: batch %zu, %d threads timed\n", batch, th + 1);
        }
    print_row_table("CPU time", t, have, 1);
    printf("\n");
    print_row_table("wall clock", t, have, 0);
}

/* Our forest against XGBoost on N_TEST rows: the same numbers, or the
 * timings mean nothing. Returns the rows that differ in any bit, or -1. */
static long agreement(rows_t *r)
{
    set_threads(r->b, 2);
    const float *p = xh_predict(r->b, r->xt, N_TEST, r->nf);
    if (!p)
        return -1;
    memcpy(r->ref, p, N_TEST * sizeof *r->ref);
    long differ = 0;
    for (int k = 0; k < N_KERNELS; k++) {
        if (psi_forest_set_kernel(r->f, kernels[k]) != kernels[k] ||
            !in_list(r->list, psi_forest_kernel_name(kernels[k])))
            continue;
        psi_forest_predict(r->f, r->xt, N_TEST, (size_t)r->nf, r->ours);
        long d = 0;
        for (size_t i = 0; i < N_TEST; i++)
            d += (float)r->ours[i] != r->ref[i];
        printf("agreement on %d rows, kernel %s: %ld rows differ in any bit\n", N_TEST,
               psi_forest_kernel_name(kernels[k]), d);
        differ += d;
    }
    return differ;
}

/* ------------------------------------------------------------------------ */
/* End to end: queries -> features -> regressors -> composition             */
/* ------------------------------------------------------------------------ */

typedef struct {
    const ps_model_t *m;
    const ps_ops_t *ops;
    float *xh, *xl;  /* features of the batch, per side */
    double *lh, *ll; /* log delta per side */
    double *oh, *ol; /* ps_model_predict's latencies */
} e2e_t;

typedef int (*e2e_fn)(e2e_t *c, const ps_query_t *q, size_t n);

static int e2e_model(e2e_t *c, const ps_query_t *q, size_t n)
{
    return ps_model_predict(c->m, c->ops, q, n, c->oh, c->ol);
}

/* Feature vectors of both sides, built together once per candidate, on the
 * OpenMP threads for large batches as ps_model_predict does. */
static int e2e_features(e2e_t *c, const ps_query_t *q, size_t n)
{
    size_t nf = (size_t)c->m->layout.n_features;
    int rc = 0;
#pragma omp parallel for schedule(static) if (n >= 256) reduction(| : rc)
    for (long i = 0; i < (long)n; i++)
        rc |=
            psi_features_build_pair(&c->m->layout, c->ops, &q[i], c->xh + (size_t)i * nf, c->xl + (size_t)i * nf, NULL);
    return rc;
}

static int e2e_xgb(e2e_t *c, const ps_query_t *q, size_t n)
{
    int rc = e2e_features(c, q, n);
    if (!rc)
        rc = psi_model_predict_xgb(c->m, PS_SIDE_HP, c->xh, n, 0, c->lh);
    if (!rc)
        rc = psi_model_predict_xgb(c->m, PS_SIDE_LP, c->xl, n, 0, c->ll);
    return rc;
}

/* Seconds per query, fastest of reps passes over total queries in calls of
 * batch, wall and CPU; negative on error. */
static times_t time_e2e(e2e_fn fn, e2e_t *c, const ps_query_t *q, size_t total, size_t batch, int reps)
{
    times_t best = {1e30, 1e30};
    for (int r = 0; r < reps; r++) {
        double t0 = psi_now(), c0 = cpu_now();
        for (size_t i = 0; i + batch <= total; i += batch)
            if (fn(c, q + i, batch))
                return (times_t){-1, -1};
        double n = (double)(total / batch * batch);
        double dt = (psi_now() - t0) / n, dc = (cpu_now() - c0) / n;
        best.wall = dt < best.wall ? dt : best.wall;
        best.cpu = dc < best.cpu ? dc : best.cpu;
    }
    return best;
}

enum { N_QUERIES = 100000 };

/* A simulated A100 campaign and the segment model trained on it with
 * exactly o->e2e_rounds trees per regressor (early stopping off). */
static int e2e_train(const options_t *o, ps_ops_t **ops, ps_coexec_t **cx, ps_model_t **m)
{
    ps_sim_params_t sp = ps_sim_default_params();
    sp.gpu = "a100";
    sp.experiments = o->campaign;
    sp.runs = 2;
    sp.threads = 2;
    double t0 = psi_now();
    if (ps_sim_run(&sp, ops, cx))
        return 1;
    double t_sim = psi_now() - t0;
    ps_train_params_t tp = ps_train_default_params();
    tp.n_depths = 1;
    tp.depths[0] = 8;
    tp.n_etas = 1;
    tp.etas[0] = 0.05;
    tp.max_rounds = o->e2e_rounds;
    tp.early_stopping = o->e2e_rounds;
    tp.nthread = 2;
    t0 = psi_now();
    int loaded = o->e2e_file && access(o->e2e_file, R_OK) == 0;
    if (loaded ? ps_model_load(o->e2e_file, m) : ps_model_train(*ops, *cx, &tp, m))
        return 1;
    if (!loaded && o->e2e_file && ps_model_save(*m, o->e2e_file))
        return 1;
    ps_model_info_t info;
    ps_model_info(*m, &info);
    printf("\nend to end: simulated A100 campaign of %ld experiments (%zu rows, %.1f s), model %s %s in %.1f s: "
           "%d features, HP %d trees, LP %d trees, depth %d\n",
           o->campaign, (*cx)->n, t_sim, loaded ? "loaded from" : "trained", loaded ? o->e2e_file : "here",
           psi_now() - t0, info.n_features, info.n_trees[0], info.n_trees[1], info.depth[0]);
    return 0;
}

/* N_QUERIES candidates: the campaign's co-executions over and over. */
static ps_query_t *e2e_queries(const ps_coexec_t *cx)
{
    ps_query_t *q = malloc(N_QUERIES * sizeof *q);
    for (size_t i = 0; q && i < N_QUERIES; i++) {
        const psi_coexec_row_t *r = &cx->rows[(i * 7919) % cx->n];
        q[i] = (ps_query_t){r->gpu,      r->hp_model, r->hp_batch, r->hp_start, r->hp_len, r->lp_model,
                            r->lp_batch, r->lp_start, r->lp_len,   r->hp_tpcs,  r->lp_tpcs};
    }
    return q;
}

/* ps_model_predict (our forests, each kernel) against XGBoost on the same
 * boosters: log deltas equal in every bit, latencies equal. */
static int e2e_agreement(e2e_t *c, ps_model_t *m, const ps_query_t *q)
{
    if (e2e_xgb(c, q, N_QUERIES))
        return 1;
    size_t differ = 0;
    for (int k = 0; k < 3; k++) {
        psi_forest_set_kernel(m->forest[0], kernels[k]);
        psi_forest_set_kernel(m->forest[1], kernels[k]);
        size_t nf = (size_t)m->layout.n_features;
        double *a = malloc(2 * N_QUERIES * sizeof *a);
        if (!a)
            return 1;
        psi_forest_predict(m->forest[0], c->xh, N_QUERIES, nf, a);
        psi_forest_predict(m->forest[1], c->xl, N_QUERIES, nf, a + N_QUERIES);
        for (size_t i = 0; i < N_QUERIES; i++)
            differ += (float)a[i] != (float)c->lh[i] || (float)a[N_QUERIES + i] != (float)c->ll[i];
        free(a);
    }
    printf("agreement on %d candidates x 2 regressors x kernels scalar, avx2, avx512: %zu differ in any bit\n",
           N_QUERIES, differ);
    return 0;
}

/* One line of the end-to-end table: batch, threads. */
static int e2e_line(e2e_t *c, ps_model_t *m, const ps_query_t *q, size_t batch, int th, int reps)
{
    size_t total = batch == 1 ? 2000 : N_QUERIES;
#ifdef _OPENMP
    omp_set_num_threads(th);
#endif
    char nt[16];
    snprintf(nt, sizeof nt, "%d", th);
    for (int s = 0; s < 2; s++)
        XGBoosterSetParam(m->booster[s], "nthread", nt);
    times_t feat = time_e2e(e2e_features, c, q, total, batch, reps);
    times_t xgb = time_e2e(e2e_xgb, c, q, total, batch, reps), model[3];
    for (int k = 0; k < 3; k++) {
        psi_forest_set_kernel(m->forest[0], kernels[k]);
        psi_forest_set_kernel(m->forest[1], kernels[k]);
        model[k] = time_e2e(e2e_model, c, q, total, batch, reps);
        if (model[k].cpu < 0)
            return 1;
    }
    if (feat.cpu < 0 || xgb.cpu < 0)
        return 1;
    printf("%7zu %7d %9.3f %9.3f %9.3f %9.3f %9.3f %9.1fx %9.1fx %9.1fx | %9.3f %9.3f\n", batch, th, 1e6 * feat.cpu,
           1e6 * xgb.cpu, 1e6 * model[0].cpu, 1e6 * model[1].cpu, 1e6 * model[2].cpu, xgb.cpu / model[0].cpu,
           xgb.cpu / model[1].cpu, xgb.cpu / model[2].cpu, 1e6 * model[1].wall, 1e6 * model[2].wall);
    fflush(stdout);
    return 0;
}

static int end_to_end(const options_t *o)
{
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    ps_model_t *m = NULL;
    ps_query_t *q = NULL;
    e2e_t c = {0};
    int rc = 1;
    if (e2e_train(o, &ops, &cx, &m))
        goto fail;
    size_t nf = (size_t)m->layout.n_features;
    q = e2e_queries(cx);
    c.xh = malloc(N_QUERIES * nf * sizeof *c.xh);
    c.xl = malloc(N_QUERIES * nf * sizeof *c.xl);
    c.lh = malloc(N_QUERIES * sizeof *c.lh);
    c.ll = malloc(N_QUERIES * sizeof *c.ll);
    c.oh = malloc(N_QUERIES * sizeof *c.oh);
    c.ol = malloc(N_QUERIES * sizeof *c.ol);
    if (!q || !c.xh || !c.xl || !c.lh || !c.ll || !c.oh || !c.ol)
        goto fail;
    c.m = m;
    c.ops = ops;
    if (e2e_agreement(&c, m, q))
        goto fail;
    printf("per candidate (features of both sides, both regressors, composition), us, CPU time unless marked wall;\n"
           "model K: ps_model_predict with kernel K; x/K: features + XGBoost over model K\n");
    printf("%7s %7s %9s %9s %9s %9s %9s %10s %10s %10s | %9s %9s\n", "batch", "threads", "features", "feat+xgb",
           "m scalar", "m avx2", "m avx512", "x/scalar", "x/avx2", "x/avx512", "wall avx2", "wall 512");
    for (size_t k = 0; k < PS_ARRAY_LEN(batches); k++)
        for (int th = 1; th <= 2; th++)
            if (e2e_line(&c, m, q, batches[k], th, o->reps))
                goto fail;
    rc = 0;
fail:
    if (rc)
        fprintf(stderr, "bench_predict: end to end: %s\n", ps_last_error());
    free(c.xh);
    free(c.xl);
    free(c.lh);
    free(c.ll);
    free(c.oh);
    free(c.ol);
    free(q);
    ps_model_free(m);
    ps_coexec_free(cx);
    ps_ops_free(ops);
    return rc;
}

/* ------------------------------------------------------------------------ */

static int parse_options(int argc, char **argv, options_t *o)
{
    *o = (options_t){300, 8, 20000, 196, 3, 400, 1000, 0.1, NULL, NULL, NULL, NULL};
    int c, bad = 0;
    long v = 0;
    opterr = 0;
    while (!bad && (c = getopt(argc, argv, ":t:d:n:f:r:m:s:l:c:E:M:k:h")) != -1) {
        switch (c) {
        case 't': bad = int_opt(c, optarg, 1, 100000, &v), o->trees = (int)v; break;
        case 'd': bad = int_opt(c, optarg, 1, 20, &v), o->depth = (int)v; break;
        case 'n': bad = int_opt(c, optarg, 10, 100000000, &v), o->rows = (int)v; break;
        case 'f': bad = int_opt(c, optarg, 1, 100000, &v), o->features = (int)v; break;
        case 'r': bad = int_opt(c, optarg, 1, 1000, &v), o->reps = (int)v; break;
        case 'c': bad = int_opt(c, optarg, 0, 100000000, &v), o->campaign = v; break;
        case 'E': bad = int_opt(c, optarg, 1, 100000, &v), o->e2e_rounds = (int)v; break;
        case 'm': {
            char *end;
            o->missing = strtod(optarg, &end);
            if (end == optarg || *end || !(o->missing >= 0 && o->missing < 1)) {
                fprintf(stderr, "bench_predict: -m: bad value '%s': expected a fraction in [0, 1) (see -h)\n", optarg);
                bad = -1;
            }
            break;
        }
        case 's': o->save = optarg; break;
        case 'l': o->load = optarg; break;
        case 'M': o->e2e_file = optarg; break;
        case 'k': o->kernel_list = optarg, bad = check_kernels(optarg); break;
        case 'h': usage(stdout); exit(0);
        case ':': fprintf(stderr, "bench_predict: -%c needs a value (see -h)\n", optopt), bad = -1; break;
        default: fprintf(stderr, "bench_predict: unknown option -%c (see -h)\n", optopt), bad = -1; break;
        }
    }
    if (!bad && optind < argc) {
        fprintf(stderr, "bench_predict: unexpected argument '%s' (options only, see -h)\n", argv[optind]);
        bad = -1;
    }
    if (!bad && o->load && access(o->load, R_OK) != 0) {
        fprintf(stderr, "bench_predict: -l %s: cannot read: %s\n", o->load, strerror(errno));
        bad = -1;
    }
    return bad ? 2 : 0;
}

/* The booster: trained on synthetic rows, or loaded; saved if asked. */
static int get_booster(const options_t *o, BoosterHandle *b)
{
    int nf = o->features;
    float *x = malloc((size_t)o->rows * nf * sizeof *x), *y = malloc((size_t)o->rows * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        fprintf(stderr, "bench_predict: out of memory\n");
        return 1;
    }
    xh_synth(11, (size_t)o->rows, nf, o->missing, x, NULL);
    make_target(x, (size_t)o->rows, nf, y);
    int bad = o->load ? XGBoosterCreate(NULL, 0, b) || XGBoosterLoadModel(*b, o->load)
                      : xh_train(x, y, (size_t)o->rows, nf, o->depth, o->trees, 2, b);
    free(x);
    free(y);
    if (bad || (o->save && XGBoosterSaveModel(*b, o->save))) {
        fprintf(stderr, "bench_predict: %s\n", XGBGetLastError());
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    options_t o;
    if (parse_options(argc, argv, &o))
        return 2;
    rows_t r = {.nf = o.features, .reps = o.reps, .list = o.kernel_list};
    float *xt = malloc((size_t)N_TEST * o.features * sizeof *xt);
    r.ref = malloc(N_TEST * sizeof *r.ref);
    r.ours = malloc(N_TEST * sizeof *r.ours);
    if (!xt || !r.ref || !r.ours) {
        fprintf(stderr, "bench_predict: out of memory\n");
        return 1;
    }
    xh_synth(12, N_TEST, o.features, o.missing, xt, NULL);
    r.xt = xt;
    double t0 = psi_now();
    if (get_booster(&o, &r.b))
        return 1;
    double t_train = psi_now() - t0;
    t0 = psi_now();
    if (psi_forest_from_booster(r.b, &r.f)) {
        fprintf(stderr, "bench_predict: %s\n", ps_last_error());
        return 1;
    }
    if (psi_forest_n_features(r.f) > o.features) {
        fprintf(stderr, "bench_predict: the model has %d features, -f gives %d\n", psi_forest_n_features(r.f),
                o.features);
        return 1;
    }
    printf("model: %s, %d trees, max_depth %d, %d features, %.0f%% missing; %s %.1f s, flattening %.1f ms\n",
           o.load ? o.load : "trained here", psi_forest_n_trees(r.f), o.depth, o.features, 100 * o.missing,
           o.load ? "loading" : "training", t_train, 1e3 * (psi_now() - t0));
    if (agreement(&r) != 0)
        return 1;
    printf("\n");
    row_tables(&r);
    psi_forest_free(r.f);
    XGBoosterFree(r.b);
    free(xt);
    free(r.ref);
    free(r.ours);
    return o.campaign > 0 ? end_to_end(&o) : 0;
}
