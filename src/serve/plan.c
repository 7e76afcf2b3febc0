/* POST /v1/plan: `pairsight plan` as a request (its flags as members) and
 * its reply (the plan JSON, schema pairsight.plan.v1, with the HP model and
 * the chosen LP task), through the public ps_plan. */
#include "serve/serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    ps_plan_params_t p;
    double slo_ns, slo_factor;
    char hp_model[64];
    char *lp[64]; /* the LP candidates, MODEL:BATCH */
    int n_lp;
} plan_req_t;

/* "MODEL:BATCH" (as the CLI's --hp and --lp) into name[64] and *batch. */
static int model_batch(const char *s, char *name, int *batch)
{
    const char *colon = strrchr(s, ':');
    char *end;
    if (!colon || colon == s || colon - s > 63)
        return -1;
    long b = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || b < 1 || b > 1000000)
        return -1;
    memcpy(name, s, (size_t)(colon - s));
    name[colon - s] = 0;
    *batch = (int)b;
    return 0;
}

/* A number member in lo..hi into *out (left alone when absent). */
static int num_member(serve_req_t *q, serve_reply_t *r, const char *key, double lo, double hi, double *out)
{
    sj_doc_t *d = q->doc;
    int t = sj_get(d, 0, key, 0);
    if (t < 0)
        return 0;
    double v;
    if (sj_num(d, t, &v) != 0 || v < lo || v > hi)
        return serve_error(r, 400, "bad_field", "%s: bad value '%.*s': expected a number in %g..%g", key,
                           d->tok[t].end - d->tok[t].start, d->text + d->tok[t].start, lo, hi);
    *out = v;
    return 0;
}

static int read_lp(serve_req_t *q, serve_reply_t *r, plan_req_t *a)
{
    sj_doc_t *d = q->doc;
    int t = sj_get(d, 0, "lp", 0);
    if (t < 0)
        return serve_error(r, 400, "missing_field", "missing lp: LP candidates [\"MODEL:BATCH\", ...]");
    if (d->tok[t].type == SJ_STRING) { /* "A:8,B:8", as the CLI's --lp */
        char *save = NULL;
        for (char *s = strtok_r((char *)sj_str(d, t), ",", &save); s; s = strtok_r(NULL, ",", &save)) {
            if (a->n_lp == 64)
                return serve_error(r, 400, "bad_field", "lp: more than 64 LP tasks");
            a->lp[a->n_lp++] = s;
        }
        return a->n_lp ? 0 : serve_error(r, 400, "bad_field", "lp: no LP task given");
    }
    if (d->tok[t].type != SJ_ARRAY || d->tok[t].size < 1 || d->tok[t].size > 64)
        return serve_error(r, 400, "bad_field", "lp: expected 1..64 strings MODEL:BATCH");
    for (int i = 0, e = t + 1; i < d->tok[t].size; i++, e = d->tok[e].next) {
        if (d->tok[e].type != SJ_STRING)
            return serve_error(r, 400, "bad_field", "lp[%d]: expected a string MODEL:BATCH, got %s", i,
                               sj_type_name(d->tok[e].type));
        a->lp[a->n_lp++] = (char *)sj_str(d, e);
    }
    return 0;
}

static int read_plan(serve_req_t *q, serve_reply_t *r, plan_req_t *a)
{
    sj_doc_t *d = q->doc;
    int t = sj_get(d, 0, "hp", 0);
    if (t < 0)
        return serve_error(r, 400, "missing_field", "missing hp: the HP model as \"MODEL:BATCH\"");
    if (d->tok[t].type != SJ_STRING || model_batch(sj_str(d, t), a->hp_model, &a->p.hp_batch) != 0)
        return serve_error(r, 400, "bad_field", "hp: bad value: expected MODEL:BATCH, e.g. resnet50:8");
    a->p.hp_model = a->hp_model;
    double lp_start = a->p.lp_start;
    if (read_lp(q, r, a) || num_member(q, r, "slo_ns", 1, 1e15, &a->slo_ns) ||
        num_member(q, r, "slo_factor", 1, 100, &a->slo_factor) ||
        num_member(q, r, "coverage", 0, 0.999, &a->p.coverage) || num_member(q, r, "lp_start", 0, 1000000, &lp_start) ||
        num_member(q, r, "alone_run_ns", 0, 1e12, &a->p.alone_run_ns) ||
        num_member(q, r, "time_value", 0, 100, &a->p.time_value))
        return r->status;
    if (lp_start != (double)(int)lp_start)
        return serve_error(r, 400, "bad_field", "lp_start: bad value '%g': expected an integer (a kernel index)",
                           lp_start);
    a->p.lp_start = (int)lp_start;
    if ((a->slo_ns > 0) == (a->slo_factor > 0))
        return serve_error(r, 400, "bad_field", "give one of slo_ns and slo_factor");
    if (a->p.coverage > 0 && a->p.coverage < 0.5)
        return serve_error(r, 400, "bad_field", "coverage: bad value '%g': expected 0 or a number in 0.5..0.999",
                           a->p.coverage);
    return 0;
}

/* As the CLI's plan_one: with slo_factor a first plan with a huge budget
 * gives the alone estimate. */
static int plan_one(const serve_models_t *m, plan_req_t *a, ps_plan_t **out, long *n_pred)
{
    a->p.budget_ns = a->slo_ns > 0 ? a->slo_ns : 1e18;
    int rc = ps_plan(m->model, m->ops, &a->p, out);
    if (rc != 0 || a->slo_factor <= 0)
        return rc;
    *n_pred += (*out)->n_predictions;
    a->p.budget_ns = a->slo_factor * (*out)->alone_ns;
    ps_plan_free(*out);
    *out = NULL;
    return ps_plan(m->model, m->ops, &a->p, out);
}

/* The plan with the most LP work over the candidates, as `pairsight plan`. */
static int plan_best(serve_req_t *q, serve_reply_t *r, plan_req_t *a, ps_plan_t **best, char *lp_name, int *lp_batch)
{
    long n_pred = 0;
    for (int i = 0; i < a->n_lp; i++) {
        char name[64];
        int batch;
        if (model_batch(a->lp[i], name, &batch) != 0)
            return serve_error(r, 400, "bad_field", "lp: bad value '%s': expected MODEL:BATCH[,...]", a->lp[i]);
        a->p.lp_model = name;
        a->p.lp_batch = batch;
        ps_plan_t *pl = NULL;
        if (plan_one(q->models, a, &pl, &n_pred) != 0)
            return serve_error(r, 400, "bad_plan", "%s", ps_last_error());
        n_pred += pl->n_predictions;
        if (!*best || pl->lp_work_ns > (*best)->lp_work_ns) {
            ps_plan_free(*best);
            *best = pl;
            memcpy(lp_name, name, sizeof name);
            *lp_batch = batch;
        } else {
            ps_plan_free(pl);
        }
    }
    serve_metrics_predictions(q->metrics, (size_t)n_pred, NULL, NULL);
    return 0;
}

int serve_plan(serve_req_t *q, serve_reply_t *r)
{
    plan_req_t a;
    memset(&a, 0, sizeof a);
    a.p = ps_plan_default_params();
    ps_plan_t *best = NULL;
    char lp_name[64];
    int lp_batch = 0;
    char *json = NULL;
    if (serve_parse_body(q, r) || read_plan(q, r, &a) || plan_best(q, r, &a, &best, lp_name, &lp_batch))
        goto done;
    if (ps_plan_to_json(best, &json) != PS_OK) {
        serve_error(r, 500, "internal", "%s", ps_last_error());
        goto done;
    }
    size_t n = strlen(json);
    while (n && json[n - 1] != '}')
        n--;
    r->body.len = 0;
    sb_putn(&r->body, json, n ? n - 1 : 0);
    sb_puts(&r->body, ",\"hp_model\":");
    sb_str(&r->body, a.hp_model);
    sb_printf(&r->body, ",\"hp_batch\":%d,\"lp_model\":", a.p.hp_batch);
    sb_str(&r->body, lp_name);
    sb_printf(&r->body, ",\"lp_batch\":%d}\n", lp_batch);
    r->status = 200;
done:
    free(json);
    ps_plan_free(best);
    return r->status;
}
