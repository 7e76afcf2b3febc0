/*
 * `pairsight serve`: pairsight as an HTTP/1.1 service with JSON bodies, for
 * cluster schedulers (a Kubernetes scheduler extender among them) and
 * Prometheus. Built on libmicrohttpd (its thread pool; GnuTLS for TLS) and
 * the public API of include/pairsight.h only, as any other front end would
 * be. docs/serve.md is the user's guide.
 *
 * The pieces: the library's JSON tokenizer and text buffer (ps_json_parse,
 * ps_buf_t of pairsight_core.h) for requests and replies, models (the
 * loaded files, shared by reference count so that a reload never pulls a
 * model from under a request), metrics (Prometheus text), the handlers of
 * each endpoint (predict.c, plan.c, coloc.c, k8s.c) and server.c (routing,
 * limits, auth, TLS, signals).
 */
#ifndef PS_SERVE_H
#define PS_SERVE_H

#include "pairsight.h"
#include "pairsight_serve.h"

#include <pthread.h>
#include <signal.h>
#include <stddef.h>

/* What `pairsight serve` was asked to do (include/pairsight_serve.h). */
typedef ps_serve_params_t serve_params_t;

/* One loaded set of files. Requests hold a reference while they run; a
 * reload puts a new set in place and the old one is freed when its last
 * request ends. */
typedef struct {
    ps_model_t *model;
    ps_ops_t *ops;
    ps_model_info_t info;
    ps_coloc_model_t *coloc; /* NULL when serve was started without one */
    ps_workloads_t *w;
    ps_scaling_t *scaling;
    pthread_mutex_t coloc_lock; /* a co-location model is used by one thread at a time */
    struct {                    /* copies 1..n_coloc-1 of coloc, one per server thread (0 is coloc) */
        ps_coloc_model_t *model;
        pthread_mutex_t lock;
    } * coloc_clone;
    int n_coloc;
    char fp_model[24], fp_ops[24], fp_coloc[24], fp_workloads[24], fp_scaling[24];
    char **node_names, **node_gpus; /* --nodes: each node's pairsight.io/gpus JSON text */
    int n_nodes;
    double loaded_at; /* unix seconds */
    int refs;         /* atomic */
} serve_models_t;

/* The largest file a set is loaded from, and the time its reading may
 * take: larger files and slower reads fail the load (docs/serve.md). */
#define SERVE_MAX_FILE ((size_t)256 << 20)
#define SERVE_READ_DEADLINE_S 30.0

/* The index of the server thread answering on this thread (0 elsewhere):
 * which copy of the co-location model it predicts with; serve_thread_worker
 * is 1 on the compute threads. */
extern _Thread_local int serve_thread_index, serve_thread_worker;

/* Co-location model copies go back to the compute thread that predicted
 * with them to be freed (models.c says why). serve_gc_wake, set by the
 * server while its compute threads run, wakes them; each calls
 * serve_gc_collect(0) when woken (serve_gc_pending) and after each request;
 * serve_gc_collect(1) frees every thread's, once they have stopped. */
#define SERVE_MAX_THREADS 256
extern void (*serve_gc_wake)(void);
int serve_gc_pending(void);
void serve_gc_collect(int all);

/* Set by SIGINT and SIGTERM: reads in progress give up. */
extern volatile sig_atomic_t serve_stop_requested;

/* A file read whole: its bytes (NUL-terminated, the caller frees) and,
 * when keep_fd was set, its open descriptor (the caller closes; -1 else). */
typedef struct {
    unsigned char *buf;
    size_t len;
    int keep_fd, fd;
} serve_file_t;
/* A regular file of at most max bytes, read whole within deadline_s
 * seconds into f. Never blocks on a FIFO or device. 0, or -1 with err. */
int serve_read_fd(const char *path, size_t max, double deadline_s, serve_file_t *f, char *err, size_t errsize);
/* FNV-1a 64 of buf[n] as 16 hex digits. */
void serve_fingerprint(const unsigned char *buf, size_t n, char out[24]);

/* Load the files of p into a new set (one reference, the caller's).
 * Returns 0, or -1 with the error message in err[errsize]. */
int serve_models_load(const serve_params_t *p, serve_models_t **out, char *err, size_t errsize);
/* The --nodes file (a JSON object: node name -> its pairsight.io/gpus
 * value, an object or its JSON text) into m. 0, or -1 with err. */
int serve_nodes_load(const char *path, serve_models_t *m, char *err, size_t errsize);
void serve_models_ref(serve_models_t *m);
void serve_models_unref(serve_models_t *m);

/* ---- metrics ---- */
/* The endpoints counted: serve_routes' rows (routes and labels in one
 * table), then "other"; server.c asserts that the table fits. */
#define SERVE_MAX_ROUTES 32

typedef struct serve_metrics serve_metrics_t;
typedef struct serve_route serve_route_t;
/* Metrics of the endpoints routes[n_routes] (their paths are the labels)
 * and "other" (index n_routes); NULL when out of memory or when n_routes
 * is not under SERVE_MAX_ROUTES. */
serve_metrics_t *serve_metrics_new(const serve_route_t *routes, int n_routes);
void serve_metrics_free(serve_metrics_t *m);
/* One request of endpoint ep (serve_route) answered with status code after seconds. */
void serve_metrics_request(serve_metrics_t *m, int ep, int code, double seconds);
/* n predictions with their slowdowns (co-located / standalone) per side. */
void serve_metrics_predictions(serve_metrics_t *m, size_t n, const double *hp_delta, const double *lp_delta);
void serve_metrics_reload(serve_metrics_t *m, int ok);
/* The Prometheus text exposition (format 0.0.4) into b. */
void serve_metrics_text(serve_metrics_t *m, const serve_models_t *cur, int inflight, ps_buf_t *b);

/* ---- the server ---- */
typedef struct serve serve_t;

/* A reply: status, JSON body (sb), and for errors a code word. */
typedef struct {
    int status;
    ps_buf_t body;
    const char *content_type; /* NULL: application/json */
} serve_reply_t;

/* The context a handler runs in. */
typedef struct {
    const serve_route_t *route; /* the route being answered */
    serve_t *srv;
    const serve_params_t *p;
    serve_models_t *models; /* referenced for the request; NULL when none loaded */
    serve_metrics_t *metrics;
    ps_json_doc_t *doc; /* this thread's tokenizer */
    char *body;         /* the request body, NUL-terminated, writable */
    size_t body_len;
} serve_req_t;

/* Set r to the error reply {"schema", "error": {"code", "message"}}.
 * Returns status, for `return serve_error(r, 400, "bad_field", ...)`. */
int serve_error(serve_reply_t *r, int status, const char *code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Parse the request body into q->doc; a 400 reply when it is not JSON, is
 * nested too deep, or is not an object. Returns 0 or the status. */
int serve_parse_body(serve_req_t *q, serve_reply_t *r);
/* The body's member key, a number in lo..hi, into *out (left alone when
 * absent); a 400 naming the member and its bounds when it is not. */
int serve_num_member(serve_req_t *q, serve_reply_t *r, const char *key, double lo, double hi, double *out);
/* The token of the body's member key; -1 with a 400 "missing KEY: WHAT"
 * (what may be NULL) when the body has none. */
int serve_required(serve_req_t *q, serve_reply_t *r, const char *key, const char *what);
/* The members of the body that are number parameters of operation op (its
 * table, ps_op_params) into its parameter struct p, each checked against its
 * bounds (a 400 naming the member and the bounds); absent ones are left
 * alone. Returns 0 or the status. */
int serve_read_params(serve_req_t *q, serve_reply_t *r, const char *op, void *p);
/* The reply's opening: {"schema":"pairsight.NAME.v1", */
void serve_reply_open(serve_reply_t *r, const char *schema);

/* The handlers: each fills r and returns its status. */
int serve_predict(serve_req_t *q, serve_reply_t *r);
int serve_plan(serve_req_t *q, serve_reply_t *r);
int serve_coloc_score(serve_req_t *q, serve_reply_t *r);
int serve_k8s_filter(serve_req_t *q, serve_reply_t *r);
int serve_k8s_prioritize(serve_req_t *q, serve_reply_t *r);
int serve_models_reply(serve_req_t *q, serve_reply_t *r);
/* The handler of a route to a library operation (route->op): the body given
 * whole to ps_op_run on the loaded models (the co-location model as this
 * thread's copy), its result the reply; PS_E_ARG is a 400 bad_field,
 * PS_E_INPUT a 400 unknown_workload (SERVE_NEEDS_COLOC) or bad_input, any
 * other error a 500. */
int serve_op(serve_req_t *q, serve_reply_t *r);

/* ---- the routes (server.c) ---- */
enum {
    SERVE_NEEDS_MODEL = 1u << 0, /* 503 while no segment model is loaded */
    SERVE_NEEDS_COLOC = 1u << 1, /* 503 while no co-location model is loaded */
    SERVE_OPEN = 1u << 2,        /* answered without the bearer token (the probes) */
    SERVE_INLINE = 1u << 3       /* cheap: answered on the HTTP thread, whatever the load */
};
/* A route: method, path (also the endpoint label of its metrics), the
 * handler that answers it, SERVE_* flags, and the library's operation
 * (ps_op_run, include/pairsight_core.h) that serve_op runs for it. */
struct serve_route {
    const char *method, *path;
    int (*fn)(serve_req_t *q, serve_reply_t *r);
    unsigned flags;
    const char *op;
};
extern const serve_route_t serve_routes[];
extern const int serve_n_routes;
/* The route index of a path; serve_n_routes (the endpoint "other") when
 * no route has it. */
int serve_route(const char *path);
/* Route ep's SERVE_* flags; SERVE_INLINE for "other" (a 404 is cheap). */
unsigned serve_route_flags(int ep);

/* What a server thread keeps between requests: the tokens and query
 * arrays of requests up to this size; a larger request's are freed after
 * it (one 8 MiB request would otherwise hold ~80 MB per thread). */
#define SERVE_KEEP_TOKENS (1 << 16)
#define SERVE_KEEP_QUERIES (1 << 13)
/* Free this thread's query arrays when over SERVE_KEEP_QUERIES. */
void serve_trim_thread(void);

/* One request as the HTTP layer gives it (method, path, body); the whole
 * handler path without sockets, for the fuzz target and tests. models may
 * be NULL (503 for the endpoints that need them). */
int serve_handle(serve_t *srv, const char *method, const char *path, char *body, size_t body_len, serve_reply_t *r);

/* A server without sockets on the files of p (for the fuzz target): loads
 * them; 0 or -1 with err. */
int serve_init(const serve_params_t *p, serve_t **out, char *err, size_t errsize);
void serve_free(serve_t *s);
/* Reload the files, one reload at a time (a reload that starts later
 * installs later); 0 with the installed model's fingerprint in fp (when not
 * NULL), or -1 with err (the old set keeps serving). */
int serve_reload(serve_t *s, char fp[24], char *err, size_t errsize);

/* ps_serve_run (include/pairsight_serve.h) runs the server: http.c. */

#endif
