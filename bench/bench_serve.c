/*
 * The in-process reference of bench/serve.sh: ps_model_predict on the same
 * queries that the HTTP benchmark sends to `pairsight serve`, in batches of
 * 1 and of 1,000, on 1 OpenMP thread (the server answers each request on
 * one thread) and on 2. Prints predictions/s per cell as
 *   inproc batch=B threads=T preds_per_s=X
 * (wall clock, the fastest of 3 runs of at least 1 s each: the machine is
 * shared, and the fastest run is the one the others disturbed least).
 *
 * Usage: bench_serve MODEL OPS QUERIES.csv
 */
#include "common/common.h"
#include "profile/queries.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Predictions per second of batches of b queries (cycling through f). */
static double rate(const ps_model_t *m, const ps_ops_t *ops, const queries_t *f, size_t b, double *buf)
{
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        size_t done = 0, at = 0;
        double t0 = psi_now(), t;
        do {
            if (at + b > f->n)
                at = 0;
            if (ps_model_predict(m, ops, f->q + at, b, buf, buf + b) != PS_OK) {
                fprintf(stderr, "bench_serve: %s\n", ps_last_error());
                exit(1);
            }
            at += b;
            done += b;
        } while ((t = psi_now() - t0) < 1.0);
        if (done / t > best)
            best = (double)done / t;
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_serve MODEL OPS QUERIES.csv\n");
        return 2;
    }
    ps_model_t *m = NULL;
    ps_ops_t *ops = NULL;
    ps_model_info_t info;
    queries_t f;
    if (ps_model_load(argv[1], &m) || ps_ops_load(argv[2], &ops) || ps_model_info(m, &info) ||
        queries_load(argv[3], info.gpu, &f)) {
        fprintf(stderr, "bench_serve: %s\n", ps_last_error());
        return 1;
    }
    if (f.n < 1000) {
        fprintf(stderr, "bench_serve: %s: needs 1000 queries at least\n", argv[3]);
        return 1;
    }
    double *buf = malloc(2000 * sizeof *buf);
    for (int threads = 1; threads <= 2; threads++) {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        for (size_t b = 1; b <= 1000; b *= 1000)
            printf("inproc batch=%zu threads=%d preds_per_s=%.0f\n", b, threads, rate(m, ops, &f, b, buf));
    }
    free(buf);
    queries_free(&f);
    ps_ops_free(ops);
    ps_model_free(m);
    return 0;
}
