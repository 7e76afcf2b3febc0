/* POST /v1/colocate/score (ps_coloc_score_json, which reads the request
 * and writes the reply) and the co-location model's per-thread copies. */
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
    int rc = ps_coloc_set_score(model, m->w, m->scaling, gpu, s);
    pthread_mutex_unlock(lock);
    return rc == PS_OK ? 0 : -1;
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

int serve_coloc_score(serve_req_t *q, serve_reply_t *r)
{
    /* the tokenizer unescapes strings in place: the library gets a copy */
    char *text = q->body_len ? strndup(q->body, q->body_len) : NULL;
    if (q->body_len && !text)
        return serve_error(r, 500, "out_of_memory", "out of memory");
    ps_json_doc_t *d = q->doc;
    int tt = -1, ct = -1;
    if (!serve_parse_body(q, r)) {
        tt = ps_json_get(d, 0, "target", 0);
        ct = ps_json_get(d, 0, "candidates", 0);
    }
    if (!r->status && (tt < 0 || d->tok[tt].type != PS_JSON_STRING))
        serve_error(r, 400, "missing_field", "target: expected a workload name (a row of workloads.csv)");
    if (!r->status && (ct < 0 || d->tok[ct].type != PS_JSON_ARRAY || d->tok[ct].size < 1 || d->tok[ct].size > 256))
        serve_error(r, 400, "missing_field", "candidates: expected an array of 1..256 candidates");
    if (r->status) {
        free(text);
        return r->status;
    }
    serve_models_t *m = q->models;
    ps_coloc_model_t *model;
    pthread_mutex_t *lock = serve_coloc_take(m, &model);
    ps_coloc_score_names_t names = {m->fp_coloc, q->p->workloads_path};
    char *reply = NULL;
    int rc = ps_coloc_score_json(model, m->w, m->scaling, text, &names, &reply);
    pthread_mutex_unlock(lock);
    free(text);
    if (rc == PS_E_ARG)
        return serve_error(r, 400, "bad_field", "%s", ps_last_error());
    if (rc == PS_E_INPUT)
        return serve_error(r, 400, "unknown_workload", "%s", ps_last_error());
    if (rc != PS_OK)
        return serve_error(r, 500, rc == PS_E_NOMEM ? "out_of_memory" : "internal", "%s", ps_last_error());
    r->body.len = 0;
    ps_buf_puts(&r->body, reply);
    ps_buf_putn(&r->body, "\n", 1);
    ps_free(reply);
    return r->status = 200;
}
