/* The handler of the routes to a library operation (serve_route_t.op):
 * the request body is given whole to ps_op_run, which reads it through the
 * operation's parameter table (include/pairsight_core.h), and its result is
 * the reply. An endpoint for an operation the library already declares is
 * then one row of server.c's route table. */
#include "serve/serve_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The most seconds a request may give a time budget (a PS_PARAM_BUDGET
 * row, such as colocate_place's time_limit): the budget bounds the work of
 * a server thread. */
#define MAX_BUDGET_S 10.0

/* Each time budget of the request's operation: none (0) and more than
 * MAX_BUDGET_S are refused (absent: the operation's default). */
static int bound_budgets(serve_req_t *q, serve_reply_t *r)
{
    int n = 0;
    const ps_param_t *rows = ps_op_params(q->route->op, &n);
    for (int i = 0; i < n; i++) {
        double v = NAN;
        if (!(rows[i].flags & PS_PARAM_BUDGET))
            continue;
        if (serve_num_member(q, r, rows[i].name, rows[i].lo, rows[i].hi, &v))
            return r->status;
        if (!isnan(v) && !(v > 0 && v <= MAX_BUDGET_S))
            return serve_error(r, 400, "bad_field",
                               "%s: bad value '%g': the service takes a budget in seconds above 0 and at most %g "
                               "(it bounds a request's work)",
                               rows[i].name, v, MAX_BUDGET_S);
    }
    return 0;
}

int serve_op(serve_req_t *q, serve_reply_t *r)
{
    /* the tokenizer unescapes strings in place: the library gets a copy */
    char *text = q->body_len ? strndup(q->body, q->body_len) : NULL;
    if (q->body_len && !text)
        return serve_error(r, 500, "out_of_memory", "out of memory");
    if (serve_parse_body(q, r) || bound_budgets(q, r)) {
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
