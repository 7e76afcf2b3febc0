/* The handler of the routes to a library operation (serve_route_t.op):
 * the request body is given whole to ps_op_run, which reads it through the
 * operation's parameter table (include/pairsight_core.h), and its result is
 * the reply. An endpoint for an operation the library already declares is
 * then one row of server.c's route table. */
#include "serve/serve_internal.h"

#include <stdlib.h>
#include <string.h>

int serve_op(serve_req_t *q, serve_reply_t *r)
{
    /* the tokenizer unescapes strings in place: the library gets a copy */
    char *text = q->body_len ? strndup(q->body, q->body_len) : NULL;
    if (q->body_len && !text)
        return serve_error(r, 500, "out_of_memory", "out of memory");
    if (serve_parse_body(q, r)) {
        free(text);
        return r->status;
    }
    serve_models_t *m = q->models;
    ps_op_inputs_t in = {0};
    ps_coloc_model_t *coloc = NULL;
    pthread_mutex_t *lock = m && m->coloc && q->route->flags & SERVE_NEEDS_COLOC ? serve_coloc_take(m, &coloc) : NULL;
    if (m)
        in = (ps_op_inputs_t){m->model, m->ops, coloc, m->w, m->scaling, NULL};
    char *reply = NULL;
    int rc = ps_op_run(q->route->op, &in, text, &reply);
    if (lock)
        pthread_mutex_unlock(lock);
    free(text);
    if (rc == PS_E_ARG)
        return serve_error(r, 400, "bad_field", "%s", ps_last_error());
    if (rc == PS_E_INPUT) /* on the co-location model: a workload absent from workloads.csv */
        return serve_error(r, 400, q->route->flags & SERVE_NEEDS_COLOC ? "unknown_workload" : "bad_input", "%s",
                           ps_last_error());
    if (rc != PS_OK)
        return serve_error(r, 500, "internal", "%s", ps_last_error());
    r->body.len = 0;
    ps_buf_puts(&r->body, reply);
    ps_buf_putn(&r->body, "\n", 1);
    ps_free(reply);
    return r->status = 200;
}
