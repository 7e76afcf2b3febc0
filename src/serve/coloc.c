/* POST /v1/colocate/score: a target workload and candidate co-runner sets,
 * each predicted as `colocate select` predicts it (ps_coloc_predict_set),
 * with each workload's throughput normalized to its exclusive throughput
 * and the model's k check. */
#include "serve/serve_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Thread_local int serve_thread_index, serve_thread_worker;

pthread_mutex_t *serve_coloc_take(serve_models_t *m, ps_coloc_model_t **model)
{
    /* this thread's copy of the model: threads do not wait for each other */
    int c = m->n_coloc > 1 ? serve_thread_index % m->n_coloc : 0;
    pthread_mutex_t *lock = c ? &m->coloc_clone[c].lock : &m->coloc_lock;
    pthread_mutex_lock(lock);
    *model = c ? m->coloc_clone[c].model : m->coloc;
    return lock;
}

int serve_coloc_set(serve_models_t *m, const char *gpu, serve_set_t *s)
{
    ps_coloc_model_t *model;
    pthread_mutex_t *lock = serve_coloc_take(m, &model);
    int rc = ps_coloc_predict_set(model, m->w, m->scaling, gpu, s->names, s->shares, s->k, s->tput, &s->sum);
    pthread_mutex_unlock(lock);
    if (rc != PS_OK)
        return -1;
    double excl_sum = 0;
    s->norm_sum = 0;
    for (int i = 0; i < s->k; i++) {
        double excl = ps_coloc_solo(m->w, m->scaling, gpu, s->names[i], 100);
        excl_sum += excl;
        s->norm[i] = s->tput[i] / excl;
        s->norm_sum += s->norm[i];
    }
    if (ps_coloc_kind_predicts_sum(ps_coloc_model_kind(m->coloc))) {
        s->norm_sum = s->sum / (excl_sum / s->k); /* the sum over the mean exclusive throughput */
        for (int i = 0; i < s->k; i++)
            s->norm[i] = s->norm_sum / s->k;
    }
    return 0;
}

void serve_ks_json(ps_buf_t *b, unsigned ks)
{
    ps_buf_putn(b, "[", 1);
    for (int k = 0, first = 1; k < 32; k++)
        if (ks >> k & 1) {
            ps_buf_printf(b, "%s%d", first ? "" : ",", k);
            first = 0;
        }
    ps_buf_putn(b, "]", 1);
}

#define MAXK SERVE_MAXK

typedef serve_set_t cand_t;

/* What every candidate of a score request shares: the target workload and
 * the request's shares (the CLI's --shares), ns of them. */
typedef struct {
    const char *target;
    int shares[MAXK], ns;
} score_req_t;

/* Shares array token t into c->shares (the CLI's --shares: the last one
 * repeats for the slots beyond it). */
static int read_shares(serve_req_t *q, serve_reply_t *r, int t, int *shares, int *ns, const char *where)
{
    ps_json_doc_t *d = q->doc;
    if (d->tok[t].type != PS_JSON_ARRAY || d->tok[t].size < 1 || d->tok[t].size > MAXK)
        return serve_error(r, 400, "bad_field", "%s.shares: expected 1..%d integers in 1..100", where, MAXK);
    *ns = d->tok[t].size;
    for (int i = 0, e = t + 1; i < *ns; i++, e = d->tok[e].next)
        if (ps_json_int(d, e, 1, 100, &shares[i]) != 0)
            return serve_error(r, 400, "bad_field", "%s.shares[%d]: expected an integer in 1..100", where, i);
    return 0;
}

/* Candidate token t ("a+b", or {"workloads": [...], "shares": [...]}) into c,
 * the target first. */
static int read_candidate(serve_req_t *q, serve_reply_t *r, int t, int i, const score_req_t *a, cand_t *c)
{
    ps_json_doc_t *d = q->doc;
    char where[32];
    snprintf(where, sizeof where, "candidates[%d]", i);
    c->names[0] = a->target;
    c->k = 1;
    int shares[MAXK], ns = a->ns, own = 0;
    memcpy(shares, a->shares, sizeof shares);
    if (d->tok[t].type == PS_JSON_STRING) {
        char *save = NULL;
        for (char *w = strtok_r((char *)ps_json_str(d, t), "+", &save); w; w = strtok_r(NULL, "+", &save)) {
            if (c->k == MAXK)
                return serve_error(r, 400, "bad_field", "%s: more than %d co-runners", where, MAXK - 1);
            c->names[c->k++] = w;
        }
    } else if (d->tok[t].type == PS_JSON_OBJECT) {
        int ws = ps_json_get(d, t, "workloads", 0), sh = ps_json_get(d, t, "shares", 0);
        if (ws < 0 || d->tok[ws].type != PS_JSON_ARRAY || d->tok[ws].size < 1 || d->tok[ws].size >= MAXK)
            return serve_error(r, 400, "bad_field", "%s.workloads: expected 1..%d workload names", where, MAXK - 1);
        for (int j = 0, e = ws + 1; j < d->tok[ws].size; j++, e = d->tok[e].next) {
            if (d->tok[e].type != PS_JSON_STRING)
                return serve_error(r, 400, "bad_field", "%s.workloads[%d]: expected a string", where, j);
            c->names[c->k++] = ps_json_str(d, e);
        }
        if (sh >= 0 && read_shares(q, r, sh, shares, &ns, where))
            return r->status;
        own = sh >= 0;
    } else {
        return serve_error(r, 400, "bad_field", "%s: expected \"a+b\" or an object, got %s", where,
                           ps_json_type_name(d->tok[t].type));
    }
    if (c->k == 1)
        return serve_error(r, 400, "bad_field", "%s: no co-runner", where);
    /* A candidate's own list must fit it; the request's default list, as
     * the CLI's --shares, need only fit the largest candidate (checked by
     * the caller), and a smaller one takes its first shares. */
    if (own && ns > c->k)
        return serve_error(r, 400, "bad_field", "%s: %d shares for %d workloads (the target and its co-runners)", where,
                           ns, c->k);
    for (int s = 0; s < c->k; s++)
        c->shares[s] = ns > s ? shares[s] : (ns > 0 ? shares[ns - 1] : 100);
    return 0;
}

/* The GPU the target is scored on: the request's, else the first of the
 * model's GPUs that workloads.csv has the target on. */
static int target_gpu(serve_req_t *q, serve_reply_t *r, const char *target, char *gpu, size_t size)
{
    ps_json_doc_t *d = q->doc;
    serve_models_t *m = q->models;
    int t = ps_json_get(d, 0, "gpu", 0);
    if (t >= 0) {
        if (d->tok[t].type != PS_JSON_STRING)
            return serve_error(r, 400, "bad_field", "gpu: expected a string");
        snprintf(gpu, size, "%s", ps_json_str(d, t));
        if (isnan(ps_coloc_solo(m->w, m->scaling, gpu, target, 100)))
            return serve_error(r, 400, "unknown_workload", "target '%s' on gpu %s is not in %s", target, gpu,
                               q->p->workloads_path);
        return 0;
    }
    const char *list = ps_coloc_model_gpu(m->coloc);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        snprintf(gpu, size, "%.*s", (int)n, p);
        if (!isnan(ps_coloc_solo(m->w, m->scaling, gpu, target, 100)))
            return 0;
        p += n + (p[n] == ',');
    }
    return serve_error(r, 400, "unknown_workload", "target '%s' is not in %s on the model's GPU (%s): give gpu", target,
                       q->p->workloads_path, list);
}

static int k_trained(const cand_t *c, unsigned ks) { return !ks || (ks >> (c->k < 31 ? c->k : 31) & 1); }

static void cand_json(ps_buf_t *b, const cand_t *c, unsigned ks)
{
    ps_buf_puts(b, "{\"workloads\":[");
    for (int s = 0; s < c->k; s++) {
        if (s)
            ps_buf_putn(b, ",", 1);
        ps_buf_json_str(b, c->names[s]);
    }
    ps_buf_puts(b, "],\"shares\":[");
    for (int s = 0; s < c->k; s++)
        ps_buf_printf(b, "%s%d", s ? "," : "", c->shares[s]);
    ps_buf_printf(b, "],\"k\":%d,\"tput\":[", c->k);
    for (int s = 0; s < c->k; s++) {
        if (s)
            ps_buf_putn(b, ",", 1);
        ps_buf_json_num(b, c->tput[s]);
    }
    ps_buf_puts(b, "],\"norm_tput\":[");
    for (int s = 0; s < c->k; s++) {
        if (s)
            ps_buf_putn(b, ",", 1);
        ps_buf_json_num(b, c->norm[s]);
    }
    ps_buf_puts(b, "],\"tput_sum\":");
    ps_buf_json_num(b, c->sum);
    ps_buf_puts(b, ",\"norm_sum\":");
    ps_buf_json_num(b, c->norm_sum);
    ps_buf_printf(b, ",\"k_trained\":%s}", k_trained(c, ks) ? "true" : "false");
}

/* Whether candidate x ranks before y: trained k first, then a finite
 * larger norm_sum. */
static int rank_before(const cand_t *x, const cand_t *y, unsigned ks)
{
    int tx = k_trained(x, ks), ty = k_trained(y, ks);
    if (tx != ty)
        return tx > ty;
    return isfinite(x->norm_sum) && (!isfinite(y->norm_sum) || x->norm_sum > y->norm_sum);
}

static void score_reply(serve_req_t *q, serve_reply_t *r, const char *target, const char *gpu, const cand_t *c, int nc)
{
    unsigned ks = ps_coloc_model_ks(q->models->coloc);
    serve_reply_open(r, "colocate_score");
    ps_buf_t *b = &r->body;
    ps_buf_puts(b, "\"target\":");
    ps_buf_json_str(b, target);
    ps_buf_puts(b, ",\"gpu\":");
    ps_buf_json_str(b, gpu);
    ps_buf_puts(b, ",\"model\":");
    ps_buf_json_str(b, ps_coloc_kind_name(ps_coloc_model_kind(q->models->coloc)));
    ps_buf_printf(b, ",\"fingerprint\":\"%s\",\"trained_k\":", q->models->fp_coloc);
    serve_ks_json(b, ks);
    ps_buf_puts(b, ",\"candidates\":[");
    for (int i = 0; i < nc; i++) {
        if (i)
            ps_buf_putn(b, ",", 1);
        cand_json(b, &c[i], ks);
    }
    ps_buf_puts(b, "],\"ranked_by\":\"norm_sum\",\"ranking\":[");
    /* Decreasing norm_sum (normalised throughputs summed: raw throughputs
     * of different workloads do not add up to one scale), the candidates
     * of a k the model was trained on before the others (an untrained k
     * extrapolates, and a 3-way sum is not comparable with a pair's); not
     * finite last. */
    int used[256] = {0};
    for (int n = 0; n < nc; n++) {
        int best = -1;
        for (int i = 0; i < nc; i++)
            if (!used[i] && (best < 0 || rank_before(&c[i], &c[best], ks)))
                best = i;
        used[best] = 1;
        ps_buf_printf(b, "%s%d", n ? "," : "", best);
    }
    ps_buf_puts(b, "]}\n");
    r->status = 200;
}

int serve_coloc_score(serve_req_t *q, serve_reply_t *r)
{
    if (serve_parse_body(q, r))
        return r->status;
    ps_json_doc_t *d = q->doc;
    int tt = ps_json_get(d, 0, "target", 0), ct = ps_json_get(d, 0, "candidates", 0),
        st = ps_json_get(d, 0, "shares", 0);
    if (tt < 0 || d->tok[tt].type != PS_JSON_STRING)
        return serve_error(r, 400, "missing_field", "target: expected a workload name (a row of workloads.csv)");
    if (ct < 0 || d->tok[ct].type != PS_JSON_ARRAY || d->tok[ct].size < 1 || d->tok[ct].size > 256)
        return serve_error(r, 400, "missing_field", "candidates: expected an array of 1..256 candidates");
    score_req_t a = {.target = ps_json_str(d, tt)};
    char gpu[128];
    if ((st >= 0 && read_shares(q, r, st, a.shares, &a.ns, "request")) || target_gpu(q, r, a.target, gpu, sizeof gpu))
        return r->status;
    int nc = d->tok[ct].size;
    cand_t *c = calloc((size_t)nc, sizeof *c);
    if (!c)
        return serve_error(r, 500, "out_of_memory", "out of memory");
    for (int i = 0, t = ct + 1; i < nc; i++, t = d->tok[t].next) {
        if (read_candidate(q, r, t, i, &a, &c[i]))
            break;
        if (serve_coloc_set(q->models, gpu, &c[i]) != 0) {
            serve_error(r, 400, "unknown_workload", "candidates[%d]: %s", i, ps_last_error());
            break;
        }
    }
    int most = 0;
    for (int i = 0; !r->status && i < nc; i++)
        most = c[i].k > most ? c[i].k : most;
    if (!r->status && a.ns > most)
        serve_error(r, 400, "bad_field", "shares: %d shares for at most %d workloads (the target and %d co-runner%s)",
                    a.ns, most, most - 1, most == 2 ? "" : "s");
    if (!r->status)
        score_reply(q, r, a.target, gpu, c, nc);
    free(c);
    return r->status;
}
