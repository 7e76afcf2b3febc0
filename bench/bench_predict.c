/*
 * Prediction speed of our flattened forest (src/model/forest.c) against
 * XGBoost's in-place dense predictor on the same booster and the same rows,
 * in the same run: time per candidate at batches of 1, 1k and 100k rows on 1
 * and 2 threads, and the ratio. Our time is given with the AVX-512 kernels
 * (where the CPU has them) and with the portable scalar kernels. The booster
 * is trained on synthetic data with the segment model's feature count (2
 * sides x 16 operator slots x 6 token fields + p, q and both standalone
 * latencies = 196).
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
 *
 * The end-to-end part trains the segment model (ps_model_train, one depth 8,
 * eta 0.3, up to 300 rounds) on a simulated campaign and times, per query of
 * one window: ps_model_predict as it stands (features, regressors,
 * composition); feature building alone; features + XGBoost's predictor; and
 * features + our forests built from the model's boosters. model/xgb is the
 * ratio of the first to the third.
 */
#include "common/common.h"
#include "model/forest.h"
#include "model/model.h"

#include "../tests/xgbhelp.h"

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
    int trees, depth, rows, features, reps;
    long campaign;
    double missing;
    const char *save, *load;
} options_t;

static void usage(FILE *to)
{
    fputs("Usage: bench_predict [options]\n"
          "  -t trees  : boosting rounds (default 300)\n"
          "  -d depth  : max_depth (default 8)\n"
          "  -n rows   : training rows (default 20000)\n"
          "  -f feats  : features (default 196)\n"
          "  -r reps   : repetitions per cell, the fastest is kept (default 3)\n"
          "  -m frac   : fraction of missing (NaN) features (default 0.1)\n"
          "  -s file   : save the trained booster to file (default: not saved)\n"
          "  -l file   : load a booster from file instead of training (default: train)\n"
          "  -c exps   : experiments of the simulated campaign for the end-to-end part,\n"
          "              0 = skip it (default 1000)\n",
          to);
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
/* End to end: queries -> features -> regressors                            */
/* ------------------------------------------------------------------------ */

typedef struct {
    const ps_model_t *m;
    const ps_ops_t *ops;
    psi_forest_t *forest[2];
    float *xh, *xl;  /* features of the batch, per side */
    double *lh, *ll; /* log delta per side */
    double *oh, *ol; /* ps_model_predict's latencies */
} e2e_t;

typedef int (*e2e_fn)(e2e_t *c, const ps_query_t *q, size_t n);

static int e2e_model(e2e_t *c, const ps_query_t *q, size_t n)
{
    return ps_model_predict(c->m, c->ops, q, n, c->oh, c->ol);
}

/* Feature vectors of both sides, on the OpenMP threads for large batches as
 * ps_model_predict does. */
static int e2e_features(e2e_t *c, const ps_query_t *q, size_t n)
{
    size_t nf = (size_t)c->m->layout.n_features;
    int rc = 0;
#pragma omp parallel for schedule(static) if (n >= 256) reduction(| : rc)
    for (long i = 0; i < (long)n; i++)
        rc |= psi_features_build_pair(&c->m->layout, c->ops, &q[i], c->xh + (size_t)i * nf, c->xl + (size_t)i * nf,
                                      NULL, NULL);
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

static int e2e_forest(e2e_t *c, const ps_query_t *q, size_t n)
{
    int rc = e2e_features(c, q, n);
    size_t nf = (size_t)c->m->layout.n_features;
    if (!rc) {
        psi_forest_predict(c->forest[0], c->xh, n, nf, c->lh);
        psi_forest_predict(c->forest[1], c->xl, n, nf, c->ll);
    }
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

static int end_to_end(const options_t *o)
{
    enum { N_QUERIES = 100000 };
    ps_sim_params_t sp = ps_sim_default_params();
    sp.gpu = "a100";
    sp.experiments = o->campaign;
    sp.runs = 2;
    sp.threads = 2;
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    ps_model_t *m = NULL;
    ps_query_t *q = NULL;
    e2e_t c = {0};
    int rc = 1;
    double t0 = psi_now();
    if (ps_sim_run(&sp, &ops, &cx))
        goto fail;
    double t_sim = psi_now() - t0;
    ps_train_params_t tp = ps_train_default_params();
    tp.n_depths = 1;
    tp.depths[0] = 8;
    tp.n_etas = 1;
    tp.etas[0] = 0.3;
    tp.max_rounds = 300;
    tp.nthread = 2;
    t0 = psi_now();
    if (ps_model_train(ops, cx, &tp, &m))
        goto fail;
    double t_train = psi_now() - t0;
    ps_model_info_t info;
    ps_model_info(m, &info);
    for (int s = 0; s < 2; s++)
        if (psi_forest_from_booster(m->booster[s], &c.forest[s]))
            goto fail;
    printf("\nend to end: simulated A100 campaign of %ld experiments (%zu rows, %.1f s), "
           "model trained in %.1f s: %d features, HP %d trees, LP %d trees, depth %d\n",
           o->campaign, cx->n, t_sim, t_train, info.n_features, info.n_trees[0], info.n_trees[1], info.depth[0]);

    /* Queries: the campaign's co-executions over and over. */
    size_t nf = (size_t)info.n_features;
    q = malloc(N_QUERIES * sizeof *q);
    c.xh = malloc(N_QUERIES * nf * sizeof *c.xh);
    c.xl = malloc(N_QUERIES * nf * sizeof *c.xl);
    c.lh = malloc(N_QUERIES * sizeof *c.lh);
    c.ll = malloc(N_QUERIES * sizeof *c.ll);
    c.oh = malloc(N_QUERIES * sizeof *c.oh);
    c.ol = malloc(N_QUERIES * sizeof *c.ol);
    if (!q || !c.xh || !c.xl || !c.lh || !c.ll || !c.oh || !c.ol)
        goto fail;
    for (size_t i = 0; i < N_QUERIES; i++) {
        const psi_coexec_row_t *r = &cx->rows[(i * 7919) % cx->n];
        q[i] = (ps_query_t){r->gpu,      r->hp_model, r->hp_batch, r->hp_start, r->hp_len, r->lp_model,
                            r->lp_batch, r->lp_start, r->lp_len,   r->hp_tpcs,  r->lp_tpcs};
    }
    c.m = m;
    c.ops = ops;

    /* Both regressors through both predictors: the same log deltas. */
    double *ref = malloc(2 * N_QUERIES * sizeof *ref);
    if (!ref || e2e_xgb(&c, q, N_QUERIES)) {
        free(ref);
        goto fail;
    }
    memcpy(ref, c.lh, N_QUERIES * sizeof *ref);
    memcpy(ref + N_QUERIES, c.ll, N_QUERIES * sizeof *ref);
    if (e2e_forest(&c, q, N_QUERIES)) {
        free(ref);
        goto fail;
    }
    size_t differ = 0;
    for (size_t i = 0; i < N_QUERIES; i++)
        differ += (float)c.lh[i] != (float)ref[i] || (float)c.ll[i] != (float)ref[N_QUERIES + i];
    free(ref);
    printf("agreement on %d queries x 2 regressors: %zu differ in any bit\n", N_QUERIES, differ);

    static const size_t batches[] = {1, 1000, 100000};
    /* model/xgb: ps_model_predict end to end against features + XGBoost's
     * predictor on the same boosters; speedup: xgb against our forests. Wall
     * clock, then CPU time (see cpu_now). */
    printf("kernel: %s; per query (both sides), wall | cpu\n", psi_forest_kernel_name(psi_forest_kernel(c.forest[0])));
    printf("%7s %7s %11s %11s %11s %11s %8s %8s | %11s %11s %11s %8s\n", "batch", "threads", "model us/q", "feat us/q",
           "feat+xgb", "feat+ours", "model/x", "speedup", "cpu model", "cpu x", "cpu ours", "speedup");
    for (size_t k = 0; k < PS_ARRAY_LEN(batches); k++)
        for (int th = 1; th <= 2; th++) {
            size_t batch = batches[k], total = batch == 1 ? 2000 : N_QUERIES;
#ifdef _OPENMP
            omp_set_num_threads(th);
#endif
            char nt[16];
            snprintf(nt, sizeof nt, "%d", th);
            for (int s = 0; s < 2; s++)
                XGBoosterSetParam(m->booster[s], "nthread", nt);
            times_t t_model = time_e2e(e2e_model, &c, q, total, batch, o->reps);
            times_t t_feat = time_e2e(e2e_features, &c, q, total, batch, o->reps);
            times_t t_xgb = time_e2e(e2e_xgb, &c, q, total, batch, o->reps);
            times_t t_ours = time_e2e(e2e_forest, &c, q, total, batch, o->reps);
            if (t_model.wall < 0 || t_feat.wall < 0 || t_xgb.wall < 0 || t_ours.wall < 0)
                goto fail;
            printf("%7zu %7d %11.3f %11.3f %11.3f %11.3f %8.2f %7.1fx | %11.3f %11.3f %11.3f %7.1fx\n", batch, th,
                   1e6 * t_model.wall, 1e6 * t_feat.wall, 1e6 * t_xgb.wall, 1e6 * t_ours.wall,
                   t_model.wall / t_xgb.wall, t_xgb.wall / t_ours.wall, 1e6 * t_model.cpu, 1e6 * t_xgb.cpu,
                   1e6 * t_ours.cpu, t_xgb.cpu / t_ours.cpu);
            fflush(stdout);
        }
    rc = 0;
fail:
    if (rc)
        fprintf(stderr, "bench_predict: end to end: %s\n", ps_last_error());
    psi_forest_free(c.forest[0]);
    psi_forest_free(c.forest[1]);
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

int main(int argc, char **argv)
{
    options_t o = {300, 8, 20000, 196, 3, 1000, 0.1, NULL, NULL};
    int c;
    while ((c = getopt(argc, argv, "t:d:n:f:r:m:s:l:c:h")) != -1) {
        switch (c) {
        case 't': o.trees = atoi(optarg); break;
        case 'd': o.depth = atoi(optarg); break;
        case 'n': o.rows = atoi(optarg); break;
        case 'f': o.features = atoi(optarg); break;
        case 'r': o.reps = atoi(optarg); break;
        case 'm': o.missing = atof(optarg); break;
        case 's': o.save = optarg; break;
        case 'l': o.load = optarg; break;
        case 'c': o.campaign = atol(optarg); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (o.trees < 1 || o.depth < 1 || o.rows < 10 || o.features < 1 || o.reps < 1 || o.campaign < 0 ||
        !(o.missing >= 0 && o.missing < 1)) {
        fprintf(stderr, "bench_predict: bad option value\n");
        usage(stderr);
        return 2;
    }

    enum { N_TEST = 100000 };
    int nf = o.features;
    float *x = malloc((size_t)o.rows * nf * sizeof *x), *y = malloc((size_t)o.rows * sizeof *y);
    float *xt = malloc((size_t)N_TEST * nf * sizeof *xt), *ref = malloc(N_TEST * sizeof *ref);
    double *ours = malloc(N_TEST * sizeof *ours);
    if (!x || !y || !xt || !ref || !ours) {
        fprintf(stderr, "bench_predict: out of memory\n");
        return 1;
    }
    xh_synth(11, (size_t)o.rows, nf, o.missing, x, NULL);
    make_target(x, (size_t)o.rows, nf, y);
    xh_synth(12, N_TEST, nf, o.missing, xt, NULL);

    double t0 = psi_now();
    BoosterHandle b = NULL;
    if (o.load ? XGBoosterCreate(NULL, 0, &b) || XGBoosterLoadModel(b, o.load)
               : xh_train(x, y, (size_t)o.rows, nf, o.depth, o.trees, 2, &b)) {
        fprintf(stderr, "bench_predict: %s\n", XGBGetLastError());
        return 1;
    }
    if (o.save && XGBoosterSaveModel(b, o.save)) {
        fprintf(stderr, "bench_predict: %s\n", XGBGetLastError());
        return 1;
    }
    double t_train = psi_now() - t0;
    t0 = psi_now();
    psi_forest_t *f;
    if (psi_forest_from_booster(b, &f)) {
        fprintf(stderr, "bench_predict: %s\n", ps_last_error());
        return 1;
    }
    double t_flat = psi_now() - t0;
    if (psi_forest_n_features(f) > nf) {
        fprintf(stderr, "bench_predict: the model has %d features, -f gives %d\n", psi_forest_n_features(f), nf);
        return 1;
    }
    if (o.load)
        printf("model: %s, %d trees, %d features, %.0f%% missing\n", o.load, psi_forest_n_trees(f), nf,
               100 * o.missing);
    else
        printf("model: %d trees, max_depth %d, %d features, %d training rows, %.0f%% missing\n", psi_forest_n_trees(f),
               o.depth, nf, o.rows, 100 * o.missing);
    printf("%s %.1f s, flattening %.1f ms\n", o.load ? "loading" : "training", t_train, 1e3 * t_flat);

    /* The same numbers, or the timings mean nothing. */
    set_threads(b, 2);
    const float *p = xh_predict(b, xt, N_TEST, nf);
    if (!p)
        return 1;
    memcpy(ref, p, N_TEST * sizeof *ref);
    psi_forest_predict(f, xt, N_TEST, (size_t)nf, ours);
    double worst = 0;
    size_t differ = 0;
    for (size_t i = 0; i < N_TEST; i++) {
        double d = fabs(ours[i] - (double)ref[i]);
        worst = d > worst ? d : worst;
        differ += (float)ours[i] != ref[i];
    }
    printf("agreement on %d rows: max |ours - xgboost| = %.3g, %zu rows differ in any bit\n\n", N_TEST, worst, differ);

    static const size_t batches[] = {1, 1000, 100000};
    /* Every kernel this CPU can run, each forced; "best" is the one a new
     * forest picks (CPUID, or PAIRSIGHT_FOREST_KERNEL), and the speedup is
     * XGBoost's time over the best's. */
    static const int kernels[] = {PS_FOREST_SCALAR, PS_FOREST_AVX2, PS_FOREST_AVX512};
    int best = psi_forest_set_kernel(f, PS_FOREST_BEST), have[3];
    printf("kernels:");
    for (int k = 0; k < 3; k++) {
        have[k] = psi_forest_set_kernel(f, kernels[k]) == kernels[k];
        printf(" %s %s", psi_forest_kernel_name(kernels[k]), have[k] ? "yes" : "no (CPU lacks it)");
    }
    printf("; best: %s\n", psi_forest_kernel_name(best));
    printf("us per row, wall clock | CPU time (see cpu_now); x/K: XGBoost's time over kernel K's\n");
    printf("%7s %7s %9s %9s %9s %9s %7s %7s %7s | %9s %9s %9s %9s %7s %7s %7s\n", "batch", "threads", "scalar", "avx2",
           "avx512", "xgb", "x/scal", "x/avx2", "x/avx512", "scalar", "avx2", "avx512", "xgb", "x/scal", "x/avx2",
           "x/avx512");
    for (size_t k = 0; k < PS_ARRAY_LEN(batches); k++) {
        for (int th = 1; th <= 2; th++) {
            size_t batch = batches[k];
            /* Enough rows that every cell takes a measurable time. */
            size_t total = batch == 1 ? 3000 : N_TEST;
            set_threads(b, th);
            xh_predict(b, xt, batch, nf); /* warm-up */
            times_t xg = time_xgb(b, xt, total, batch, nf, ref, o.reps);
            times_t us[3] = {{0, 0}, {0, 0}, {0, 0}};
            for (int kk = 0; kk < 3; kk++)
                if (have[kk]) {
                    psi_forest_set_kernel(f, kernels[kk]);
                    us[kk] = time_ours(f, xt, total, batch, nf, ours, o.reps);
                }
            printf("%7zu %7d", batch, th);
            for (int clock = 0; clock < 2; clock++) {
                double x = 1e6 * (clock ? xg.cpu : xg.wall);
                for (int kk = 0; kk < 3; kk++)
                    if (have[kk])
                        printf(" %9.3f", 1e6 * (clock ? us[kk].cpu : us[kk].wall));
                    else
                        printf(" %9s", "-");
                printf(" %9.3f", x);
                for (int kk = 0; kk < 3; kk++)
                    if (have[kk])
                        printf(" %6.1fx", x / (1e6 * (clock ? us[kk].cpu : us[kk].wall)));
                    else
                        printf(" %7s", "-");
                if (!clock)
                    printf(" |");
            }
            printf("\n");
            fflush(stdout);
        }
    }
    psi_forest_free(f);
    XGBoosterFree(b);
    free(x);
    free(y);
    free(xt);
    free(ref);
    free(ours);
    return o.campaign > 0 ? end_to_end(&o) : 0;
}
