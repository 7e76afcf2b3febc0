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
 */
#include "common/common.h"
#include "model/forest.h"

#include "../tests/xgbhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct {
    int trees, depth, rows, features, reps;
    double missing;
} options_t;

static void usage(FILE *to)
{
    fputs("Usage: bench_predict [options]\n"
          "  -t trees  : boosting rounds (default 300)\n"
          "  -d depth  : max_depth (default 8)\n"
          "  -n rows   : training rows (default 20000)\n"
          "  -f feats  : features (default 196)\n"
          "  -r reps   : repetitions per cell, the fastest is kept (default 3)\n"
          "  -m frac   : fraction of missing (NaN) features (default 0.1)\n",
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
            s += (j % 3 == 0 ? sin(2 * v) : j % 3 == 1 ? (v > 0.1 * (j % 7) ? 1 : -1) : v * w) /
                 (1 + j % 5);
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
 * `batch` rows. */
static double time_ours(const ps_forest_t *f, const float *x, size_t total, size_t batch, int nf,
                        double *out, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = ps_now();
        for (size_t i = 0; i + batch <= total; i += batch)
            ps_forest_predict(f, x + i * (size_t)nf, batch, (size_t)nf, out + i);
        double dt = (ps_now() - t0) / (double)(total / batch * batch);
        if (dt < best)
            best = dt;
    }
    return best;
}

static double time_xgb(BoosterHandle b, const float *x, size_t total, size_t batch, int nf,
                       float *out, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = ps_now();
        for (size_t i = 0; i + batch <= total; i += batch) {
            const float *p = xh_predict(b, x + i * (size_t)nf, batch, nf);
            if (!p)
                return -1;
            memcpy(out + i, p, batch * sizeof *p);
        }
        double dt = (ps_now() - t0) / (double)(total / batch * batch);
        if (dt < best)
            best = dt;
    }
    return best;
}

int main(int argc, char **argv)
{
    options_t o = {300, 8, 20000, 196, 3, 0.1};
    int c;
    while ((c = getopt(argc, argv, "t:d:n:f:r:m:h")) != -1) {
        switch (c) {
        case 't': o.trees = atoi(optarg); break;
        case 'd': o.depth = atoi(optarg); break;
        case 'n': o.rows = atoi(optarg); break;
        case 'f': o.features = atoi(optarg); break;
        case 'r': o.reps = atoi(optarg); break;
        case 'm': o.missing = atof(optarg); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (o.trees < 1 || o.depth < 1 || o.rows < 10 || o.features < 1 || o.reps < 1 ||
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

    double t0 = ps_now();
    BoosterHandle b;
    if (xh_train(x, y, (size_t)o.rows, nf, o.depth, o.trees, 2, &b))
        return 1;
    double t_train = ps_now() - t0;
    t0 = ps_now();
    ps_forest_t *f;
    if (ps_forest_from_booster(b, &f)) {
        fprintf(stderr, "bench_predict: %s\n", ps_last_error());
        return 1;
    }
    double t_flat = ps_now() - t0;
    printf("model: %d trees, max_depth %d, %d features, %d training rows, %.0f%% missing\n",
           ps_forest_n_trees(f), o.depth, nf, o.rows, 100 * o.missing);
    printf("training %.1f s, flattening %.1f ms\n", t_train, 1e3 * t_flat);

    /* The same numbers, or the timings mean nothing. */
    set_threads(b, 2);
    const float *p = xh_predict(b, xt, N_TEST, nf);
    if (!p)
        return 1;
    memcpy(ref, p, N_TEST * sizeof *ref);
    ps_forest_predict(f, xt, N_TEST, (size_t)nf, ours);
    double worst = 0;
    size_t differ = 0;
    for (size_t i = 0; i < N_TEST; i++) {
        double d = fabs(ours[i] - (double)ref[i]);
        worst = d > worst ? d : worst;
        differ += (float)ours[i] != ref[i];
    }
    printf("agreement on %d rows: max |ours - xgboost| = %.3g, %zu rows differ in any bit\n\n",
           N_TEST, worst, differ);

    static const size_t batches[] = {1, 1000, 100000};
    /* "ours" uses the AVX-512 kernels where the CPU has them; "scalar" is
     * the portable kernel every machine runs. */
    int simd = ps_forest_use_simd(f, 1);
    printf("AVX-512 kernels: %s\n", simd ? "yes" : "no (CPU lacks AVX-512F)");
    printf("%7s %7s %12s %12s %12s %9s\n", "batch", "threads", "ours us/row", "scalar us/row",
           "xgb us/row", "speedup");
    for (size_t k = 0; k < PS_ARRAY_LEN(batches); k++) {
        for (int th = 1; th <= 2; th++) {
            size_t batch = batches[k];
            /* Enough rows that every cell takes a measurable time. */
            size_t total = batch == 1 ? 3000 : N_TEST;
            set_threads(b, th);
            xh_predict(b, xt, batch, nf); /* warm-up */
            double us_xgb = 1e6 * time_xgb(b, xt, total, batch, nf, ref, o.reps);
            ps_forest_use_simd(f, 0);
            double us_scalar = 1e6 * time_ours(f, xt, total, batch, nf, ours, o.reps);
            ps_forest_use_simd(f, 1);
            double us_ours = 1e6 * time_ours(f, xt, total, batch, nf, ours, o.reps);
            printf("%7zu %7d %12.3f %12.3f %12.3f %8.1fx\n", batch, th, us_ours, us_scalar,
                   us_xgb, us_xgb / us_ours);
            fflush(stdout);
        }
    }
    ps_forest_free(f);
    XGBoosterFree(b);
    free(x);
    free(y);
    free(xt);
    free(ref);
    free(ours);
    return 0;
}
