/* What the pieces of src/serve share beyond serve.h: the server's state. */
#ifndef PS_SERVE_INTERNAL_H
#define PS_SERVE_INTERNAL_H

#include "serve/serve.h"

struct serve {
    serve_params_t p;
    pthread_mutex_t lock;        /* guards cur and last_error */
    pthread_mutex_t reload_lock; /* one reload at a time */
    serve_models_t *cur;         /* the set new requests start on (one reference) */
    serve_metrics_t *metrics;
    int inflight; /* atomic */
    char last_error[1024];
};

/* The endpoint of a path (EP_OTHER when none). */
int serve_route(const char *path);

/* "pairsight: serve: MESSAGE" on stderr. */
void serve_log(serve_t *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* One co-location of k workloads (names[k] at shares[k] percent, on gpu)
 * predicted with the loaded co-location model: each workload's throughput
 * tput[k] and normalized throughput norm[k] (over its exclusive throughput,
 * solo at 100%), their sums. Kinds that predict only the sum give each
 * workload norm_sum / k and tput NAN. Returns 0, or -1 with ps_last_error. */
int serve_coloc_set(serve_models_t *m, const char *gpu, const char *const *names, const int *shares, int k,
                    double *tput, double *norm, double *sum, double *norm_sum);

/* The co-location sizes k of bit mask ks as a JSON array into b. */
void serve_ks_json(sb_t *b, unsigned ks);

#endif
