/* The request path of `pairsight serve` without sockets: routing, errors,
 * the loaded set and its reload, /v1/models and the health endpoints
 * (http.c puts it on libmicrohttpd). */
#include "serve/serve_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

ps_serve_params_t ps_serve_default_params(void)
{
    serve_params_t p;
    memset(&p, 0, sizeof p);
    p.listen = "127.0.0.1:8470";
    p.threads = 2;
    p.max_body = 8u << 20;
    p.max_queries = 100000;
    p.max_depth = 32;
    p.timeout_s = 10;
    p.max_conns = 256;
    p.request_timeout_s = 30;
    p.max_conns_per_ip = 64;
    p.max_work = 5000;
    return p;
}

/* The set requests start on now, referenced; NULL when none is loaded. */
static serve_models_t *current(serve_t *s)
{
    pthread_mutex_lock(&s->lock);
    serve_models_t *m = s->cur;
    if (m)
        serve_models_ref(m);
    pthread_mutex_unlock(&s->lock);
    return m;
}

int serve_reload(serve_t *s, char fp[24], char *err, size_t errsize)
{
    serve_models_t *m = NULL;
    pthread_mutex_lock(&s->reload_lock);
    if (serve_models_load(&s->p, &m, err, errsize) != 0) {
        serve_metrics_reload(s->metrics, 0);
        pthread_mutex_lock(&s->lock);
        snprintf(s->last_error, sizeof s->last_error, "%s", err);
        pthread_mutex_unlock(&s->lock);
        pthread_mutex_unlock(&s->reload_lock);
        return -1;
    }
    if (fp)
        memcpy(fp, m->fp_model, 24);
    pthread_mutex_lock(&s->lock);
    serve_models_t *old = s->cur;
    s->cur = m;
    s->last_error[0] = 0;
    pthread_mutex_unlock(&s->lock);
    serve_metrics_reload(s->metrics, 1);
    pthread_mutex_unlock(&s->reload_lock);
    serve_models_unref(old); /* freed when its last request ends */
    return 0;
}

int serve_init(const serve_params_t *p, serve_t **out, char *err, size_t errsize)
{
    *out = NULL;
    serve_t *s = calloc(1, sizeof *s);
    if (!s || !(s->metrics = serve_metrics_new(serve_routes, serve_n_routes))) {
        free(s);
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    s->p = *p;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->reload_lock, NULL);
    if (serve_models_load(p, &s->cur, err, errsize) != 0) {
        serve_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

void serve_free(serve_t *s)
{
    if (!s)
        return;
    serve_models_unref(s->cur);
    serve_metrics_free(s->metrics);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->reload_lock);
    free(s);
}

static void file_json(ps_buf_t *b, const char *key, const char *path, const char *fp)
{
    ps_buf_printf(b, "\"%s\":{\"path\":", key);
    ps_buf_json_str(b, path ? path : "");
    ps_buf_printf(b, ",\"fingerprint\":\"%s\"}", fp);
}

static void coloc_json(const serve_t *s, const serve_models_t *m, ps_buf_t *b)
{
    if (!m->coloc) {
        ps_buf_puts(b, ",\"colocate\":null");
        return;
    }
    ps_buf_puts(b, ",\"colocate\":{");
    file_json(b, "model", s->p.coloc_path, m->fp_coloc);
    ps_buf_puts(b, ",\"kind\":");
    ps_buf_json_str(b, ps_coloc_kind_name(ps_coloc_model_kind(m->coloc)));
    ps_buf_puts(b, ",\"gpu\":");
    ps_buf_json_str(b, ps_coloc_model_gpu(m->coloc));
    ps_buf_puts(b, ",\"k\":[");
    unsigned ks = ps_coloc_model_ks(m->coloc);
    for (int k = 0, first = 1; k < 32; k++)
        if (ks >> k & 1)
            ps_buf_printf(b, "%s%d", first ? "" : ",", k), first = 0;
    ps_buf_printf(b, "],\"workload_rows\":%zu,", ps_workloads_rows(m->w));
    file_json(b, "workloads", s->p.workloads_path, m->fp_workloads);
    if (s->p.scaling_path) {
        ps_buf_puts(b, ",");
        file_json(b, "scaling", s->p.scaling_path, m->fp_scaling);
    }
    ps_buf_puts(b, "}");
}

int serve_models_reply(serve_req_t *q, serve_reply_t *r)
{
    const serve_models_t *m = q->models;
    const ps_model_info_t *i = &m->info;
    serve_reply_open(r, "models");
    ps_buf_t *b = &r->body;
    ps_buf_puts(b, "\"model\":{");
    file_json(b, "file", q->p->model_path, m->fp_model);
    ps_buf_puts(b, ",\"gpu\":");
    ps_buf_json_str(b, i->gpu);
    ps_buf_printf(b,
                  ",\"window\":%d,\"n_features\":%d,\"n_samples\":%zu,\"n_train\":%zu,\"n_valid\":%zu,\"n_test\":%zu,"
                  "\"n_calib\":%zu,\"trees\":[%d,%d],\"n_adapt\":%d,",
                  i->window, i->n_features, i->n_samples, i->n_train, i->n_valid, i->n_test, i->n_calib, i->n_trees[0],
                  i->n_trees[1], i->n_adapt);
    file_json(b, "ops", q->p->ops_path, m->fp_ops);
    ps_buf_printf(b, ",\"ops_rows\":%zu}", ps_ops_rows(m->ops));
    coloc_json(q->srv, m, b);
    ps_buf_printf(b, ",\"loaded_at\":%.0f,\"version\":\"%s\"}\n", m->loaded_at, ps_version());
    return r->status = 200;
}

static int reload_reply(serve_req_t *q, serve_reply_t *r)
{
    char err[1024], fp[24];
    if (!q->p->token_file && !q->p->allow_reload)
        return serve_error(r, 403, "reload_disabled",
                           "POST /v1/reload needs --token-file (or --allow-reload); SIGHUP reloads too");
    if (serve_reload(q->srv, fp, err, sizeof err) != 0) {
        serve_log(q->srv, "reload failed, the old model keeps serving: %s", err);
        return serve_error(r, 500, "reload_failed", "reload failed, the old model keeps serving: %s", err);
    }
    serve_log(q->srv, "reloaded: model %s", fp);
    serve_reply_open(r, "reload");
    ps_buf_printf(&r->body, "\"reloaded\":true,\"fingerprint\":\"%s\"}\n", fp);
    return r->status = 200;
}

static int healthz_reply(serve_req_t *q, serve_reply_t *r)
{
    (void)q;
    serve_reply_open(r, "health");
    ps_buf_puts(&r->body, "\"status\":\"ok\"}\n");
    return r->status = 200;
}

static int metrics_reply(serve_req_t *q, serve_reply_t *r)
{
    r->body.len = 0;
    serve_metrics_text(q->metrics, q->models, __atomic_load_n(&q->srv->inflight, __ATOMIC_RELAXED), &r->body);
    r->content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r->status = 200;
}

/* The routes, one row each: method, path (the endpoint label of its
 * metrics too), its handler, what it needs and, for serve_op, the
 * library's operation it runs. An endpoint for an operation of the library
 * (ps_op_name) is one row here: {"POST", "/v1/NAME", serve_op, flags,
 * "OPERATION"} (docs/ARCHITECTURE.md, "Adding an endpoint"). */
const serve_route_t serve_routes[] = {
    {"POST", "/v1/predict", serve_predict, SERVE_NEEDS_MODEL, NULL},
    {"POST", "/v1/plan", serve_plan, SERVE_NEEDS_MODEL, NULL},
    {"POST", "/v1/colocate/score", serve_coloc_score, SERVE_NEEDS_COLOC, NULL},
    {"GET", "/v1/models", serve_models_reply, SERVE_NEEDS_MODEL, NULL},
    {"POST", "/v1/reload", reload_reply, 0, NULL},
    {"GET", "/healthz", healthz_reply, SERVE_OPEN | SERVE_INLINE, NULL},
    {"GET", "/readyz", healthz_reply, SERVE_NEEDS_MODEL | SERVE_OPEN | SERVE_INLINE, NULL},
    {"GET", "/metrics", metrics_reply, SERVE_INLINE, NULL},
    {"POST", "/k8s/filter", serve_k8s_filter, SERVE_NEEDS_COLOC, NULL},
    {"POST", "/k8s/prioritize", serve_k8s_prioritize, SERVE_NEEDS_COLOC, NULL},
    {"POST", "/v1/colocate/shares", serve_op, SERVE_NEEDS_COLOC, "colocate_shares"},
    {"POST", "/v1/explain", serve_op, SERVE_NEEDS_MODEL, "explain"},
    {"POST", "/v1/colocate/select", serve_op, SERVE_NEEDS_COLOC, "colocate_select"},
    {"POST", "/v1/colocate/place", serve_op, SERVE_NEEDS_COLOC, "colocate_place"},
};
#define N_ROUTES (int)(sizeof serve_routes / sizeof serve_routes[0])
const int serve_n_routes = N_ROUTES;
_Static_assert(N_ROUTES < SERVE_MAX_ROUTES, "the metrics keep SERVE_MAX_ROUTES rows (the last is \"other\")");

int serve_route(const char *path)
{
    int i = 0;
    while (i < N_ROUTES && strcmp(serve_routes[i].path, path) != 0)
        i++;
    return i;
}

unsigned serve_route_flags(int ep) { return ep >= 0 && ep < N_ROUTES ? serve_routes[ep].flags : SERVE_INLINE; }

/* This thread's tokenizer, reused across requests, and freed with its
 * thread. */
static _Thread_local ps_json_doc_t tl_doc;
static pthread_key_t doc_key;
static pthread_once_t doc_once = PTHREAD_ONCE_INIT;

static void doc_free(void *unused)
{
    (void)unused;
    ps_json_doc_free(&tl_doc);
}

static void doc_key_init(void) { pthread_key_create(&doc_key, doc_free); }

static ps_json_doc_t *thread_doc(void)
{
    if (!tl_doc.cap) {
        pthread_once(&doc_once, doc_key_init);
        pthread_setspecific(doc_key, &tl_doc);
    }
    return &tl_doc;
}

static int dispatch(const serve_route_t *rt, serve_req_t *q, serve_reply_t *r)
{
    if (rt->flags & (SERVE_NEEDS_MODEL | SERVE_NEEDS_COLOC) && !q->models)
        return serve_error(r, 503, "no_model", "no model is loaded");
    if (rt->flags & SERVE_NEEDS_COLOC && !q->models->coloc)
        return serve_error(r, 503, "no_model",
                           "no co-location model is loaded (start serve with --coloc and --workloads)");
    return rt->fn(q, r);
}

int serve_handle(serve_t *s, const char *method, const char *path, char *body, size_t body_len, serve_reply_t *r)
{
#ifdef _OPENMP
    static _Thread_local int omp_set;
    if (!omp_set) { /* concurrency comes from the server's threads; one OpenMP thread per request */
        omp_set_num_threads(1);
        omp_set = 1;
    }
#endif
    r->status = 0;
    r->content_type = NULL;
    int ep = serve_route(path);
    if (ep == N_ROUTES)
        return serve_error(r, 404, "not_found", "no endpoint %s (see docs/serve.md)", path);
    const serve_route_t *rt = &serve_routes[ep];
    if (strcmp(rt->method, method) != 0)
        return serve_error(r, 405, "method_not_allowed", "%s takes %s, not %s", path, rt->method, method);
    serve_req_t q = {rt, s, &s->p, current(s), s->metrics, thread_doc(), body, body_len};
    int status = dispatch(rt, &q, r);
    if (r->body.oom)
        status = serve_error(r, 500, "out_of_memory", "out of memory");
    serve_models_unref(q.models);
    if (tl_doc.cap > SERVE_KEEP_TOKENS) /* a large request's tokens are not kept for the thread's life */
        ps_json_doc_free(&tl_doc);
    serve_trim_thread();
    return status;
}

void serve_log(serve_t *s, const char *fmt, ...)
{
    (void)s;
    char msg[1200], out[4 * sizeof msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* control bytes as \xNN: what a client sent cannot forge a line or
     * write terminal escapes */
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == '\\')
            w += (size_t)snprintf(out + w, sizeof out - w, "\\x%02x", *p);
        else
            out[w++] = (char)*p;
    out[w] = 0;
    fprintf(stderr, "pairsight: serve: %s\n", out);
}
