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

/* "pairsight: serve: MESSAGE" on stderr. */
void serve_log(serve_t *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* One co-location predicted (include/pairsight_colocate.h). */
#define SERVE_MAXK PS_COLOC_SET_MAXK
typedef ps_coloc_set_t serve_set_t;

/* This thread's copy of m's co-location model into *model, locked (a
 * co-location model is used by one thread at a time); the lock to release
 * when done. */
pthread_mutex_t *serve_coloc_take(serve_models_t *m, ps_coloc_model_t **model);

/* Set s (names, shares, k given) predicted on gpu with m's co-location
 * model into its outputs. Returns 0, or -1 with ps_last_error. */
int serve_coloc_set(serve_models_t *m, const char *gpu, serve_set_t *s);

/* The co-location sizes k of bit mask ks as a JSON array into b. */
void serve_ks_json(ps_buf_t *b, unsigned ks);

#endif
