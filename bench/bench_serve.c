/*
 * The in-process reference of bench/serve.sh: ps_model_predict on the same
 * queries that the HTTP benchmark sends to `pairsight serve`, in batches of
 * 1 and of 1,000, on 1 OpenMP thread (the server answers each request on
 * one thread) and on 2. Prints predictions/s per cell as
 *   inproc batch=B threads=T preds_per_s=X
 * (wall clock, the fastest of 3 runs of at least 1 s each: the machine is
 * shared, and the fastest run is the one the others disturbed least).
 *
 * Then the handler alone, without sockets: serve_handle (tokenizer, query
 * reading, prediction, reply) on the 1- and 1,000-query bodies that the
 * HTTP run sends, against ps_model_predict on the same queries, both in CPU
 * time of the process (the least disturbed measure on a shared machine):
 *   handler batch=B preds_per_s=X inproc_cpu=Y ratio=X/Y
 *
 * Usage: bench_serve MODEL OPS QUERIES.csv [ONE.json THOUSAND.json]
 */
#include "common/common.h"
#include "profile/queries.h"
#include "serve/serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A whole file, NUL-terminated; exits when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *b = f ? malloc(64u << 20) : NULL;
    *len = b ? fread(b, 1, (64u << 20) - 1, f) : 0;
    if (f)
        fclose(f);
    if (!b || !*len) {
        fprintf(stderr, "bench_serve: cannot read %s\n", path);
        exit(1);
    }
    b[*len] = 0;
    return b;
}

/* Predictions per CPU second: serve_handle on body (b queries) when srv,
 * else ps_model_predict on the first b queries; best of 3 runs of 1 s. */
static double cpu_rate(serve_t *srv, const char *body, size_t len, const ps_model_t *m, const ps_ops_t *ops,
                       const queries_t *f, size_t b, double *buf)
{
    double best = 0;
    char *copy = malloc(len + 1);
    for (int rep = 0; rep < 3; rep++) {
        size_t done = 0;
        double t0 = cpu_now(), t;
        do {
            if (srv) {
                memcpy(copy, body, len + 1); /* the handler unescapes in place */
                serve_reply_t r = {0};
                if (serve_handle(srv, "POST", "/v1/predict", copy, len, &r) != 200) {
                    fprintf(stderr, "bench_serve: %s\n", r.body.s);
                    exit(1);
                }
                ps_buf_free(&r.body);
            } else if (ps_model_predict(m, ops, f->q, b, buf, buf + b) != PS_OK) {
                exit(1);
            }
            done += b;
        } while ((t = cpu_now() - t0) < 1.0);
        best = (double)done / t > best ? (double)done / t : best;
    }
    free(copy);
    return best;
}

/* The handler against the in-process call, in CPU time. */
static void handler_rates(const char *model, const char *ops_path, const ps_model_t *m, const ps_ops_t *ops,
                          const queries_t *f, char **bodies, double *buf)
{
    serve_params_t p = ps_serve_default_params();
    p.model_path = model;
    p.ops_path = ops_path;
    serve_t *srv = NULL;
    char err[1024];
    if (serve_init(&p, &srv, err, sizeof err) != 0) {
        fprintf(stderr, "bench_serve: %s\n", err);
        exit(1);
    }
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    for (int k = 0; k < 2; k++) {
        size_t len, b = k ? 1000 : 1;
        char *body = slurp(bodies[k], &len);
        double h = cpu_rate(srv, body, len, m, ops, f, b, buf), ref = cpu_rate(NULL, NULL, 0, m, ops, f, b, buf);
        printf("handler batch=%zu preds_per_s=%.0f inproc_cpu=%.0f ratio=%.2f\n", b, h, ref, h / ref);
        free(body);
    }
    serve_free(srv);
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: bench_serve MODEL OPS QUERIES.csv [ONE.json THOUSAND.json]\n");
        return 2;
    }
    ps_model_t *m = NULL;
    ps_ops_t *ops = NULL;
    ps_model_info_t info;
    queries_t f;
    if (ps_model_load(argv[1], &m) || ps_ops_load(argv[2], &ops) || ps_model_info(m, &info) ||
        psi_queries_load(argv[3], info.gpu, &f)) {
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
    if (argc == 6)
        handler_rates(argv[1], argv[2], m, ops, &f, argv + 4, buf);
    free(buf);
    psi_queries_free(&f);
    ps_ops_free(ops);
    ps_model_free(m);
    return 0;
}
