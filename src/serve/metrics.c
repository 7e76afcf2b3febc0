/* Prometheus metrics of `pairsight serve` (text exposition format 0.0.4;
 * docs/serve.md lists them). One mutex guards everything: a request takes
 * it twice (its predictions' slowdowns, merged per request, and its count
 * and duration), never per prediction. */
#include "serve/serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Status codes counted separately; any other counts as its own bucket. */
static const int codes[] = {200, 400, 401, 403, 404, 405, 408, 413, 415, 421, 500, 503};
#define N_CODES (int)(sizeof codes / sizeof codes[0])

static const double dur_le[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};
#define N_DUR (int)(sizeof dur_le / sizeof dur_le[0])
static const double slow_le[] = {1, 1.05, 1.1, 1.2, 1.3, 1.5, 1.75, 2, 3, 5, 10};
#define N_SLOW (int)(sizeof slow_le / sizeof slow_le[0])

typedef struct {
    unsigned long long bucket[16], count; /* bucket[i]: observations <= le[i] (not yet cumulative) */
    double sum;
} hist_t;

struct serve_metrics {
    pthread_mutex_t lock;
    const serve_route_t *routes; /* the endpoints: routes[n_routes], then "other" */
    int n_routes;
    unsigned long long requests[SERVE_MAX_ROUTES][N_CODES + 1];
    hist_t duration[SERVE_MAX_ROUTES];
    hist_t slowdown[2];
    unsigned long long predictions, reloads_ok, reloads_failed;
    int last_reload_failed;
};

serve_metrics_t *serve_metrics_new(const serve_route_t *routes, int n_routes)
{
    serve_metrics_t *m = n_routes >= 0 && n_routes < SERVE_MAX_ROUTES ? calloc(1, sizeof *m) : NULL;
    if (!m)
        return NULL;
    pthread_mutex_init(&m->lock, NULL);
    m->routes = routes;
    m->n_routes = n_routes;
    return m;
}

/* Endpoint e's label: its route's path, "other" past the routes. */
static const char *label(const serve_metrics_t *m, int e) { return e < m->n_routes ? m->routes[e].path : "other"; }

void serve_metrics_free(serve_metrics_t *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static void observe(hist_t *h, const double *le, int n, double v)
{
    int i = 0;
    while (i < n && !(v <= le[i]))
        i++;
    if (i < n)
        h->bucket[i]++;
    h->count++;
    h->sum += v;
}

void serve_metrics_request(serve_metrics_t *m, int ep, int code, double seconds)
{
    int c = 0;
    while (c < N_CODES && codes[c] != code)
        c++;
    pthread_mutex_lock(&m->lock);
    m->requests[ep][c]++;
    observe(&m->duration[ep], dur_le, N_DUR, seconds);
    pthread_mutex_unlock(&m->lock);
}

void serve_metrics_predictions(serve_metrics_t *m, size_t n, const double *hp_delta, const double *lp_delta)
{
    hist_t local[2];
    memset(local, 0, sizeof local);
    for (size_t i = 0; hp_delta && i < n; i++) {
        observe(&local[0], slow_le, N_SLOW, hp_delta[i]);
        observe(&local[1], slow_le, N_SLOW, lp_delta[i]);
    }
    pthread_mutex_lock(&m->lock);
    m->predictions += n;
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < N_SLOW; i++)
            m->slowdown[s].bucket[i] += local[s].bucket[i];
        m->slowdown[s].count += local[s].count;
        m->slowdown[s].sum += local[s].sum;
    }
    pthread_mutex_unlock(&m->lock);
}

void serve_metrics_reload(serve_metrics_t *m, int ok)
{
    pthread_mutex_lock(&m->lock);
    if (ok)
        m->reloads_ok++;
    else
        m->reloads_failed++;
    m->last_reload_failed = !ok;
    pthread_mutex_unlock(&m->lock);
}

/* One histogram's lines, labels (without braces) given. */
static void hist_text(ps_buf_t *b, const char *name, const char *labels, const hist_t *h, const double *le, int n)
{
    unsigned long long cum = 0;
    for (int i = 0; i < n; i++) {
        cum += h->bucket[i];
        ps_buf_printf(b, "%s_bucket{%s,le=\"%g\"} %llu\n", name, labels, le[i], cum);
    }
    ps_buf_printf(b, "%s_bucket{%s,le=\"+Inf\"} %llu\n", name, labels, h->count);
    ps_buf_printf(b, "%s_sum{%s} %.17g\n", name, labels, h->sum);
    ps_buf_printf(b, "%s_count{%s} %llu\n", name, labels, h->count);
}

static void requests_text(const serve_metrics_t *m, ps_buf_t *b)
{
    ps_buf_puts(b, "# HELP pairsight_requests_total HTTP requests answered, by endpoint and status code.\n"
                   "# TYPE pairsight_requests_total counter\n");
    for (int e = 0; e <= m->n_routes; e++)
        for (int c = 0; c <= N_CODES; c++)
            if ((m->requests[e][c] || (c == 0 && e != m->n_routes)) && c < N_CODES)
                ps_buf_printf(b, "pairsight_requests_total{endpoint=\"%s\",code=\"%d\"} %llu\n", label(m, e), codes[c],
                              m->requests[e][c]);
            else if (m->requests[e][c])
                ps_buf_printf(b, "pairsight_requests_total{endpoint=\"%s\",code=\"other\"} %llu\n", label(m, e),
                              m->requests[e][c]);
}

void serve_metrics_text(serve_metrics_t *m, const serve_models_t *cur, int inflight, ps_buf_t *b)
{
    pthread_mutex_lock(&m->lock);
    requests_text(m, b);
    ps_buf_puts(b, "# HELP pairsight_request_duration_seconds Time from the request's headers to its reply.\n"
                   "# TYPE pairsight_request_duration_seconds histogram\n");
    for (int e = 0; e <= m->n_routes; e++) {
        char l[64];
        snprintf(l, sizeof l, "endpoint=\"%s\"", label(m, e));
        hist_text(b, "pairsight_request_duration_seconds", l, &m->duration[e], dur_le, N_DUR);
    }
    ps_buf_printf(b,
                  "# HELP pairsight_predictions_total Segment-pair predictions made (/v1/predict and /v1/plan).\n"
                  "# TYPE pairsight_predictions_total counter\npairsight_predictions_total %llu\n",
                  m->predictions);
    ps_buf_puts(b, "# HELP pairsight_predicted_slowdown Predicted co-located / standalone latency of /v1/predict "
                   "queries, per side.\n# TYPE pairsight_predicted_slowdown histogram\n");
    hist_text(b, "pairsight_predicted_slowdown", "side=\"hp\"", &m->slowdown[0], slow_le, N_SLOW);
    hist_text(b, "pairsight_predicted_slowdown", "side=\"lp\"", &m->slowdown[1], slow_le, N_SLOW);
    ps_buf_printf(b,
                  "# HELP pairsight_reloads_total Model reloads (SIGHUP, POST /v1/reload), by result.\n"
                  "# TYPE pairsight_reloads_total counter\npairsight_reloads_total{result=\"ok\"} %llu\n"
                  "pairsight_reloads_total{result=\"error\"} %llu\n"
                  "# HELP pairsight_reload_failed 1 when the last reload failed (the old model still serves).\n"
                  "# TYPE pairsight_reload_failed gauge\npairsight_reload_failed %d\n",
                  m->reloads_ok, m->reloads_failed, m->last_reload_failed);
    pthread_mutex_unlock(&m->lock);
    ps_buf_printf(b,
                  "# HELP pairsight_inflight_requests Requests being answered.\n"
                  "# TYPE pairsight_inflight_requests gauge\npairsight_inflight_requests %d\n",
                  inflight);
    ps_buf_puts(b, "# HELP pairsight_model_info The segment model being served (value 1).\n"
                   "# TYPE pairsight_model_info gauge\n");
    if (cur) {
        ps_buf_puts(b, "pairsight_model_info{fingerprint=\"");
        ps_buf_puts(b, cur->fp_model);
        ps_buf_puts(b, "\",gpu=");
        ps_buf_json_str(b, cur->info.gpu); /* a JSON string is a valid label value */
        ps_buf_puts(b, "} 1\n");
    }
}
