/* POST /v1/predict: the figures of `pairsight predict` for a batch of
 * queries sent as JSON (docs/serve.md). The queries are read straight from
 * the tokens into a per-thread array; strings point into the body. */
#include "serve/serve.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* This thread's query and output arrays, grown as needed and kept: a
 * steady stream of requests allocates nothing here. */
static _Thread_local struct {
    ps_query_t *q;
    double *out;
    size_t cap;
} tl;

static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;

/* The arrays go with their thread (a server thread that stops leaves no
 * unreachable memory behind). */
static void tl_free(void *unused)
{
    (void)unused;
    free(tl.q);
    free(tl.out);
    tl.q = NULL;
    tl.out = NULL;
    tl.cap = 0;
}

void serve_trim_thread(void)
{
    if (tl.cap > SERVE_KEEP_QUERIES)
        tl_free(NULL);
}

static void tl_key_init(void) { pthread_key_create(&tl_key, tl_free); }

static int reserve(size_t n)
{
    if (n <= tl.cap)
        return 0;
    pthread_once(&tl_once, tl_key_init);
    pthread_setspecific(tl_key, &tl);
    size_t cap = tl.cap ? tl.cap : 64;
    while (cap < n)
        cap *= 2;
    ps_query_t *q = realloc(tl.q, cap * sizeof *q);
    if (q)
        tl.q = q;
    double *o = q ? realloc(tl.out, cap * 6 * sizeof *o) : NULL;
    if (!o)
        return -1;
    tl.out = o;
    tl.cap = cap;
    return 0;
}

/* The key columns of coexec.csv, as ps_query_t holds them, come from the
 * library's one table of them (ps_query_fields; the seen bits below hold
 * 32). Every field is required but gpu, which defaults to the model's GPU. */
static int field_index(const char *name)
{
    int nf;
    const ps_query_field_t *qf = ps_query_fields(&nf);
    for (int f = 0; f < nf; f++)
        if (strcmp(qf[f].name, name) == 0)
            return f;
    return -1;
}

/* Whether a[n] and b[n] are the same bytes: keys are short, and a loop
 * here costs less than a call of memcmp. */
static int same_bytes(const char *a, const char *b, size_t n)
{
    while (n && *a == *b)
        a++, b++, n--;
    return n == 0;
}

/* The field that key token k names, or -1 (other columns are allowed, as in
 * the CLI's queries file). *hint, the field at the same place in the
 * previous object, is tried first: the objects of one request have their
 * keys in one order as a rule, so one comparison finds most keys. */
static int field_of(ps_json_doc_t *d, int k, const size_t *flen, int *hint)
{
    const ps_query_field_t *qf = ps_query_fields(NULL);
    const char *name = ps_json_str(d, k);
    size_t len = (size_t)(d->tok[k].end - d->tok[k].start);
    if (*hint >= 0 && len == flen[*hint] && same_bytes(qf[*hint].name, name, len))
        return *hint;
    return *hint = field_index(name);
}

/* Token t into field f of query i; a 400 naming both when it does not fit. */
static int set_field(serve_req_t *q, serve_reply_t *r, size_t i, int f, int t, const char *where)
{
    const ps_query_field_t *qf = ps_query_fields(NULL);
    ps_json_doc_t *d = q->doc;
    char *dst = (char *)&tl.q[i] + qf[f].offset;
    if (qf[f].is_string) {
        if (d->tok[t].type != PS_JSON_STRING)
            return serve_error(r, 400, "bad_field", "%s[%zu].%s: expected a string, got %s", where, i, qf[f].name,
                               ps_json_type_name(d->tok[t].type));
        *(const char **)dst = ps_json_str(d, t);
        return 0;
    }
    if (ps_json_int(d, t, qf[f].lo, qf[f].hi, (int *)dst) != 0) {
        if (d->tok[t].type == PS_JSON_NUMBER)
            return serve_error(r, 400, "bad_field", "%s[%zu].%s: '%.*s' is not an integer", where, i, qf[f].name,
                               d->tok[t].end - d->tok[t].start, d->text + d->tok[t].start);
        return serve_error(r, 400, "bad_field", "%s[%zu].%s: expected an integer, got %s", where, i, qf[f].name,
                           ps_json_type_name(d->tok[t].type));
    }
    return 0;
}

/* After the fields are set: a missing field is a 400, but gpu. */
static int check_missing(serve_reply_t *r, size_t i, unsigned seen, const char *gpu)
{
    int nf;
    const ps_query_field_t *qf = ps_query_fields(&nf);
    for (int f = 0; f < nf; f++)
        if (!(seen & 1u << f) && qf[f].required)
            return serve_error(r, 400, "missing_field", "queries[%zu]: missing %s", i, qf[f].name);
        else if (!(seen & 1u << f))
            tl.q[i].gpu = gpu;
    return 0;
}

/* "queries": [{...}, ...] */
static int read_rows(serve_req_t *q, serve_reply_t *r, int arr, const char *gpu)
{
    int nf;
    const ps_query_field_t *qf = ps_query_fields(&nf);
    ps_json_doc_t *d = q->doc;
    size_t n = (size_t)d->tok[arr].size;
    int t = arr + 1, hint[32];
    size_t flen[32];
    for (int m = 0; m < 32; m++)
        hint[m] = -1;
    for (int f = 0; f < nf; f++)
        flen[f] = strlen(qf[f].name);
    for (size_t i = 0; i < n; i++, t = d->tok[t].next) {
        if (d->tok[t].type != PS_JSON_OBJECT)
            return serve_error(r, 400, "bad_field", "queries[%zu]: expected an object, got %s", i,
                               ps_json_type_name(d->tok[t].type));
        unsigned seen = 0;
        int k = t + 1;
        for (int m = 0; m < d->tok[t].size; m++, k = d->tok[k + 1].next) {
            int none = -1, f = field_of(d, k, flen, m < 32 ? &hint[m] : &none);
            if (f < 0)
                continue;
            if (seen & 1u << f)
                return serve_error(r, 400, "bad_field", "queries[%zu].%s: given twice", i, qf[f].name);
            seen |= 1u << f;
            if (set_field(q, r, i, f, k + 1, "queries"))
                return r->status;
        }
        if (check_missing(r, i, seen, gpu))
            return r->status;
    }
    return 0;
}

/* "queries": {"hp_model": [...], ...}: one array per column, all as long. */
static int read_columns(serve_req_t *q, serve_reply_t *r, int obj, size_t n, const char *gpu)
{
    int nf;
    const ps_query_field_t *qf = ps_query_fields(&nf);
    ps_json_doc_t *d = q->doc;
    unsigned seen = 0;
    for (int i = 0, k = obj + 1; i < d->tok[obj].size; i++, k = d->tok[k + 1].next) {
        int f = field_index(ps_json_str(d, k));
        if (f >= 0 && seen & 1u << f)
            return serve_error(r, 400, "bad_field", "queries.%s: given twice", qf[f].name);
        if (f >= 0)
            seen |= 1u << f;
    }
    seen = 0;
    for (int f = 0; f < nf; f++) {
        int a = ps_json_get(d, obj, qf[f].name, 0);
        if (a < 0)
            continue;
        if (d->tok[a].type != PS_JSON_ARRAY || (size_t)d->tok[a].size != n)
            return serve_error(r, 400, "bad_field", "queries.%s: expected an array of %zu values (as the first column)",
                               qf[f].name, n);
        seen |= 1u << f;
        int t = a + 1;
        for (size_t i = 0; i < n; i++, t = d->tok[t].next)
            if (set_field(q, r, i, f, t, qf[f].name))
                return r->status;
    }
    for (int f = 0; f < nf; f++)
        if (!(seen & 1u << f) && qf[f].required)
            return serve_error(r, 400, "missing_field", "queries: missing column %s", qf[f].name);
    for (int f = 0; f < nf; f++)
        for (size_t i = 0; i < n && !(seen & 1u << f) && !qf[f].required; i++)
            tl.q[i].gpu = gpu; /* the one optional field */
    return 0;
}

/* The queries of the request into tl.q; their count in *n. */
static int read_queries(serve_req_t *q, serve_reply_t *r, size_t *n)
{
    ps_json_doc_t *d = q->doc;
    int t = serve_required(q, r, "queries", NULL);
    if (t < 0)
        return r->status;
    int type = d->tok[t].type;
    if (type != PS_JSON_ARRAY && type != PS_JSON_OBJECT)
        return serve_error(r, 400, "bad_field", "queries: expected an array of objects or an object of arrays, got %s",
                           ps_json_type_name(type));
    *n = type == PS_JSON_ARRAY ? (size_t)d->tok[t].size : 0;
    if (type == PS_JSON_OBJECT && d->tok[t].size > 0)
        *n = d->tok[t + 2].type == PS_JSON_ARRAY ? (size_t)d->tok[t + 2].size : 0;
    if (*n == 0)
        return serve_error(r, 400, "bad_field", "queries: no query given");
    if (*n > (size_t)q->p->max_queries)
        return serve_error(r, 413, "too_many_queries", "queries: %zu queries, at most %d per request", *n,
                           q->p->max_queries);
    if (reserve(*n) != 0)
        return serve_error(r, 500, "out_of_memory", "out of memory");
    const char *gpu = q->models->info.gpu;
    return type == PS_JSON_ARRAY ? read_rows(q, r, t, gpu) : read_columns(q, r, t, *n, gpu);
}

/* compose and coverage, as the CLI's --compose and --coverage. */
static int read_options(serve_req_t *q, serve_reply_t *r, ps_compose_t *compose, double *coverage)
{
    ps_json_doc_t *d = q->doc;
    *compose = PS_COMPOSE_OVERLAP;
    *coverage = 0;
    int t = ps_json_get(d, 0, "compose", 0);
    if (t >= 0 && (d->tok[t].type != PS_JSON_STRING || ps_compose_from_name(ps_json_str(d, t), compose) != PS_OK))
        return serve_error(r, 400, "bad_field", "compose: expected \"overlap\" or \"index\"");
    t = ps_json_get(d, 0, "coverage", 0);
    if (t >= 0 && d->tok[t].type != PS_JSON_NULL)
        return serve_num_member(q, r, "coverage", 0.5, 0.999, coverage);
    return 0;
}

/* Predicts; a 400 naming the first query that cannot be predicted. */
static int predict(serve_req_t *q, serve_reply_t *r, size_t n, ps_compose_t compose, double coverage)
{
    const serve_models_t *m = q->models;
    double *o = tl.out;
    if (ps_model_predict_compose(m->model, m->ops, tl.q, n, compose, o, o + n, o + 2 * n, o + 3 * n) != PS_OK) {
        for (size_t i = 0; i < n; i++)
            if (ps_model_check_query(m->model, m->ops, &tl.q[i]) != PS_OK)
                return serve_error(r, 400, "bad_query", "queries[%zu]: %s", i, ps_last_error());
        return serve_error(r, 400, "bad_query", "%s", ps_last_error());
    }
    if (coverage > 0 && ps_model_predict_bound(m->model, m->ops, tl.q, n, coverage, o + 4 * n, o + 5 * n) != PS_OK)
        return serve_error(r, 400, "bad_field", "coverage: %s", ps_last_error());
    for (size_t i = 0; i < n; i++) {
        o[2 * n + i] = o[i] / o[2 * n + i]; /* the deltas, as `pairsight predict` divides */
        o[3 * n + i] = o[n + i] / o[3 * n + i];
    }
    return 0;
}

static void put_column(ps_buf_t *b, const char *name, const double *v, size_t n)
{
    ps_buf_printf(b, "%s\"%s\":[", b->s[b->len - 1] == '{' ? "" : ",", name);
    ps_buf_json_nums(b, v, n);
    ps_buf_putn(b, "]", 1);
}

int serve_predict(serve_req_t *q, serve_reply_t *r)
{
    size_t n = 0;
    ps_compose_t compose;
    double coverage;
    if (serve_parse_body(q, r) || read_options(q, r, &compose, &coverage) || read_queries(q, r, &n) ||
        predict(q, r, n, compose, coverage))
        return r->status;
    const double *o = tl.out;
    serve_metrics_predictions(q->metrics, n, o + 2 * n, o + 3 * n);
    serve_reply_open(r, "predict");
    ps_buf_t *b = &r->body;
    ps_buf_printf(b, "\"n\":%zu,\"compose\":\"%s\",\"fingerprint\":\"%s\"", n, ps_compose_name(compose),
                  q->models->fp_model);
    if (coverage > 0)
        ps_buf_printf(b, ",\"coverage\":%.17g", coverage);
    ps_buf_puts(b, ",\"predictions\":{");
    put_column(b, "hp_ns_pred", o, n);
    put_column(b, "lp_ns_pred", o + n, n);
    put_column(b, "hp_delta_pred", o + 2 * n, n);
    put_column(b, "lp_delta_pred", o + 3 * n, n);
    if (coverage > 0) {
        put_column(b, "hp_ns_upper", o + 4 * n, n);
        put_column(b, "lp_ns_upper", o + 5 * n, n);
    }
    ps_buf_puts(b, "}}\n");
    return r->status = 200;
}
