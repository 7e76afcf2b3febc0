/*
 * pairsight_serve.h - `pairsight serve` as its front ends call it: the
 * library as an HTTP/1.1 service with JSON bodies for cluster schedulers
 * and Prometheus (src/serve, docs/serve.md). The CLI's serve command fills
 * the parameters from its options and runs the server.
 *
 * The server is a front end, not part of libpairsight: it is built into
 * libpairsight_serve.a (on libmicrohttpd) beside the CLI and is not
 * installed; it uses include/pairsight.h alone, as any program would.
 */
#ifndef PAIRSIGHT_SERVE_H
#define PAIRSIGHT_SERVE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What the server is asked to do; ps_serve_default_params() fills the
 *  defaults that `pairsight serve --help` prints. Strings are borrowed for
 *  the duration of ps_serve_run. */
typedef struct {
    const char *model_path, *ops_path;                      /* segment model and its ops.csv (required) */
    const char *coloc_path, *workloads_path, *scaling_path; /* co-location model (optional) */
    const char *nodes_path;                                 /* node name -> pairsight.io/gpus, for NodeNames */
    const char *listen;                                     /* HOST:PORT (127.0.0.1:8470) */
    int threads;                                            /* server threads (2) */
    const char *token_file;                                 /* bearer token (none) */
    const char *tls_cert, *tls_key;                         /* PEM files (none: plain HTTP) */
    size_t max_body;                                        /* bytes (8 MiB) */
    int max_queries;                                        /* per request (100000) */
    int max_depth;                                          /* JSON nesting (32) */
    int timeout_s;                                          /* idle connection timeout (10) */
    int max_conns;                                          /* connections at once (256) */
    int quiet;                                              /* no request log */
    int check;                                              /* start, report, stop */
    int request_timeout_s;                                  /* a whole request, headers to reply (30) */
    int max_conns_per_ip;                                   /* connections at once from one address (64) */
    long max_work;                                          /* extender predictions per request (5000) */
    int allow_reload;                                       /* POST /v1/reload without a token file */
    const char *allow_hosts;                                /* more Host names, comma-separated (none) */
} ps_serve_params_t;

/** @return the defaults (listen 127.0.0.1:8470, 2 threads, 8 MiB bodies,
 *  100000 queries, depth 32, 10 s idle and 30 s request timeouts, 256
 *  connections, 64 per address, 5000 extender predictions per request). */
ps_serve_params_t ps_serve_default_params(void);

/**
 * Load the files of p, listen, and serve until SIGINT or SIGTERM (SIGHUP
 * reloads the files); with p->check, load, bind, report the address and
 * stop. Messages go to stderr as "pairsight: serve: ...", the request log
 * to stdout unless p->quiet.
 * @return 0 after a clean stop; 1 when the files cannot be loaded, the
 * token read, the signals caught, TLS is missing from libmicrohttpd or the
 * address cannot be bound; 2 for a listen address that is not IPV4:PORT.
 */
int ps_serve_run(const ps_serve_params_t *p);

#ifdef __cplusplus
}
#endif

#endif /* PAIRSIGHT_SERVE_H */
