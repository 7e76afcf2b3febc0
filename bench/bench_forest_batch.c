/*
 * The forest's cost per call at small batches (docs/planner.md, "A request
 * that meets an empty memo"): both regressors of a trained model over n rows
 * of real window-pair features (random windows of the two models' profiles,
 * seed 1), for each n, on one thread; the CPU time per call, the least over
 * 40 windows of 10 ms (a shared machine's load only adds). Where the rows
 * past the last whole vector of 16 go by row walks and AVX2 vectors
 * (src/model/forest.c, avx512_tail); PAIRSIGHT_FOREST_KERNEL=avx2 (or
 * scalar) times that kernel alone.
 *
 * Usage: bench_forest_batch MODEL OPS HP:BATCH LP:BATCH [n ...]
 *        (default n: 1 2 3 4 5 8 16 17 22 32 64)
 */
#include "common/common.h"
#include "features/features.h"
#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define ROWS 4096

static double thread_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ROWS feature vectors of random window pairs of groups h and l at splits
 * both were profiled at, into x (the shared vector of both regressors). */
static int make_rows(const ps_model_t *m, const ps_ops_t *ops, const psi_op_group_t *h, const psi_op_group_t *l,
                     float *x)
{
    int total = psi_model_gpu_tpcs(ops, m->gpu), W = m->layout.window;
    uint64_t seed = 1;
    size_t nf = (size_t)m->layout.n_features;
    float *spare = malloc(nf * sizeof *spare);
    if (!spare)
        return -1;
    for (size_t k = 0; k < ROWS; k++) {
        int t = h->tpcs[psi_splitmix64(&seed) % (uint64_t)h->n_tpcs];
        if (t >= total || psi_group_tpcs_index(l, total - t) < 0) {
            k--;
            continue;
        }
        int hl = 1 + (int)(psi_splitmix64(&seed) % (uint64_t)W), ll = 1 + (int)(psi_splitmix64(&seed) % (uint64_t)W);
        ps_query_t q = {m->gpu, h->model, h->batch, 0, hl, l->model, l->batch, 0, ll, t, total - t};
        q.hp_start = (int)(psi_splitmix64(&seed) % (uint64_t)(h->n_ops - hl + 1));
        q.lp_start = (int)(psi_splitmix64(&seed) % (uint64_t)(l->n_ops - ll + 1));
        if (psi_features_build_pair(&m->layout, ops, &q, x + k * nf, spare, NULL) != PS_OK) {
            free(spare);
            return -1;
        }
    }
    free(spare);
    return 0;
}

int main(int argc, char **argv)
{
    ps_model_t *m = NULL;
    ps_ops_t *ops = NULL;
    char hp[64], lp[64];
    int hb = 0, lb = 0;
    if (argc < 5 || ps_model_batch_parse(argv[3], hp, &hb) || ps_model_batch_parse(argv[4], lp, &lb)) {
        fprintf(stderr, "usage: bench_forest_batch MODEL OPS HP:BATCH LP:BATCH [n ...]\n");
        return 2;
    }
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    if (ps_model_load(argv[1], &m) || ps_ops_load(argv[2], &ops)) {
        fprintf(stderr, "bench_forest_batch: %s\n", ps_last_error());
        return 1;
    }
    const psi_op_group_t *h = psi_ops_find(ops, m->gpu, hp, hb), *l = psi_ops_find(ops, m->gpu, lp, lb);
    size_t nf = (size_t)m->layout.n_features;
    float *x = h && l ? malloc(ROWS * nf * sizeof *x) : NULL;
    if (!x || make_rows(m, ops, h, l, x) != 0) {
        fprintf(stderr, "bench_forest_batch: %s\n", !h || !l ? "a model:batch is not in the profile" : ps_last_error());
        return 1;
    }
    static const size_t dflt[] = {1, 2, 3, 4, 5, 8, 16, 17, 22, 32, 64};
    size_t n_sizes = argc > 5 ? (size_t)(argc - 5) : PS_ARRAY_LEN(dflt);
    for (size_t a = 0; a < n_sizes; a++) {
        size_t n = argc > 5 ? (size_t)atoi(argv[5 + a]) : dflt[a], off = 0;
        if (n < 1 || n > 256) {
            fprintf(stderr, "bench_forest_batch: n %s is outside 1..256\n", argv[5 + a]);
            return 2;
        }
        double out_h[256], out_l[256], best = 1e9;
        for (int w = 0; w < 40; w++) {
            long calls = 0;
            double t0 = thread_now(), t;
            while ((t = thread_now() - t0) < 0.01) {
                off = off + n > ROWS ? 0 : off;
                psi_model_predict_rows_pair(m, x + off * nf, x + off * nf, n, out_h, out_l);
                off += n;
                calls++;
            }
            best = t / (double)calls < best ? t / (double)calls : best;
        }
        printf("n %3zu: %7.2f us per call (both regressors), %.3f us per row\n", n, 1e6 * best, 1e6 * best / (double)n);
    }
    free(x);
    ps_model_free(m);
    ps_ops_free(ops);
    return 0;
}
