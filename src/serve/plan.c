/* POST /v1/plan: `pairsight plan` as a request (its flags as members) and
 * its reply (the plan JSON, schema pairsight.plan.v1, with the HP model and
 * the chosen LP task), through the public ps_plan_best, as the CLI. */
#include "serve/serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A request's planning stops past this many seconds, a 400 naming the
 * limit: a server thread is not held by one request for longer. */
#define PLAN_TIME_LIMIT_S 2.0

typedef struct {
    ps_plan_params_t p;
    char hp_model[64];
    const char *lp[PS_PLAN_MAX_LP]; /* the LP candidates, MODEL:BATCH */
    int n_lp;
} plan_req_t;

/* One LP candidate, checked as MODEL:BATCH. */
static int add_lp(serve_reply_t *r, plan_req_t *a, const char *s)
{
    char name[64];
    int batch;
    if (a->n_lp == PS_PLAN_MAX_LP)
        return serve_error(r, 400, "bad_field", "lp: more than %d LP tasks (the limit of one request)", PS_PLAN_MAX_LP);
    if (ps_model_batch_parse(s, name, &batch) != 0)
        return serve_error(r, 400, "bad_field", "lp: bad value '%s': expected MODEL:BATCH[,...]", s);
    a->lp[a->n_lp++] = s;
    return 0;
}

/* The LP candidates, member token t. */
static int read_lp(serve_req_t *q, serve_reply_t *r, int t, plan_req_t *a)
{
    ps_json_doc_t *d = q->doc;
    if (d->tok[t].type == PS_JSON_STRING) { /* "A:8,B:8", as the CLI's --lp */
        char *save = NULL;
        for (char *s = strtok_r((char *)ps_json_str(d, t), ",", &save); s; s = strtok_r(NULL, ",", &save))
            if (add_lp(r, a, s))
                return r->status;
        return a->n_lp ? 0 : serve_error(r, 400, "bad_field", "lp: no LP task given");
    }
    if (d->tok[t].type != PS_JSON_ARRAY || d->tok[t].size < 1 || d->tok[t].size > PS_PLAN_MAX_LP)
        return serve_error(r, 400, "bad_field", "lp: expected 1..%d strings MODEL:BATCH", PS_PLAN_MAX_LP);
    for (int i = 0, e = t + 1; i < d->tok[t].size; i++, e = d->tok[e].next) {
        if (d->tok[e].type != PS_JSON_STRING)
            return serve_error(r, 400, "bad_field", "lp[%d]: expected a string MODEL:BATCH, got %s", i,
                               ps_json_type_name(d->tok[e].type));
        if (add_lp(r, a, ps_json_str(d, e)))
            return r->status;
    }
    return 0;
}

static int read_plan(serve_req_t *q, serve_reply_t *r, plan_req_t *a)
{
    ps_json_doc_t *d = q->doc;
    int t = serve_required(q, r, "hp", "the HP model as \"MODEL:BATCH\"");
    if (t < 0)
        return r->status;
    if (d->tok[t].type != PS_JSON_STRING || ps_model_batch_parse(ps_json_str(d, t), a->hp_model, &a->p.hp_batch) != 0)
        return serve_error(r, 400, "bad_field", "hp: bad value: expected MODEL:BATCH, e.g. resnet50:8");
    a->p.hp_model = a->hp_model;
    int g = ps_json_get(d, 0, "gpu", 0);
    if (g >= 0 && d->tok[g].type != PS_JSON_STRING)
        return serve_error(r, 400, "bad_field", "gpu: expected a GPU's name");
    a->p.gpu = g >= 0 ? ps_json_str(d, g) : NULL;
    int lp = serve_required(q, r, "lp", "LP candidates [\"MODEL:BATCH\", ...]");
    if (lp < 0 || read_lp(q, r, lp, a) || serve_read_params(q, r, "plan", &a->p))
        return r->status;
    if (ps_op_check("plan", &a->p) != PS_OK) /* what no single member's bounds say */
        return serve_error(r, 400, "bad_field", "%s", ps_last_error());
    return 0;
}

int serve_plan(serve_req_t *q, serve_reply_t *r)
{
    plan_req_t a;
    memset(&a, 0, sizeof a);
    a.p = ps_plan_default_params();
    a.p.time_limit_s = PLAN_TIME_LIMIT_S;
    ps_plan_t *best = NULL;
    char *json = NULL;
    if (serve_parse_body(q, r) || read_plan(q, r, &a))
        goto done;
    if (ps_plan_best(q->models->model, q->models->ops, &a.p, a.lp, (size_t)a.n_lp, &best) != PS_OK) {
        serve_error(r, 400, "bad_plan", "%s", ps_last_error());
        goto done;
    }
    serve_metrics_predictions(q->metrics, (size_t)best->n_predictions_all, NULL, NULL);
    if (ps_plan_to_json(best, &json) != PS_OK) {
        serve_error(r, 500, "internal", "%s", ps_last_error());
        goto done;
    }
    r->body.len = 0;
    ps_buf_puts(&r->body, json);
    ps_buf_puts(&r->body, "\n");
    r->status = 200;
done:
    free(json);
    ps_plan_free(best);
    return r->status;
}
