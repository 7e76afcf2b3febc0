/* The error reply, the opening of a reply and the parse of a request body,
 * which every endpoint file uses (serve.h); apart from server.c so that the
 * endpoints and the server that routes to them call one way. */
#include "serve/serve_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

int serve_error(serve_reply_t *r, int status, const char *code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->body.len = 0;
    ps_buf_puts(&r->body, "{\"schema\":\"pairsight.error.v1\",\"error\":{\"code\":");
    ps_buf_json_str(&r->body, code);
    ps_buf_puts(&r->body, ",\"message\":");
    ps_buf_json_str(&r->body, msg);
    ps_buf_puts(&r->body, "}}\n");
    return r->status = status;
}

void serve_reply_open(serve_reply_t *r, const char *schema)
{
    r->body.len = 0;
    ps_buf_printf(&r->body, "{\"schema\":\"pairsight.%s.v1\",", schema);
}

int serve_parse_body(serve_req_t *q, serve_reply_t *r)
{
    q->doc->max_depth = q->p->max_depth;
    if (q->body_len == 0)
        return serve_error(r, 400, "bad_json", "empty body: expected a JSON object");
    if (ps_json_parse(q->doc, q->body, q->body_len) != 0)
        return serve_error(r, 400, "bad_json", "the body is not valid JSON: %s", q->doc->err);
    if (q->doc->tok[0].type != PS_JSON_OBJECT)
        return serve_error(r, 400, "bad_json", "the body is %s, expected a JSON object",
                           ps_json_type_name(q->doc->tok[0].type));
    return 0;
}

int serve_num_member(serve_req_t *q, serve_reply_t *r, const char *key, double lo, double hi, double *out)
{
    ps_json_doc_t *d = q->doc;
    int t = ps_json_get(d, 0, key, 0);
    if (t < 0)
        return 0;
    double v;
    if (ps_json_num(d, t, &v) != 0 || v < lo || v > hi)
        return serve_error(r, 400, "bad_field", "%s: bad value '%.*s': expected a number in %g..%g", key,
                           d->tok[t].end - d->tok[t].start, d->text + d->tok[t].start, lo, hi);
    *out = v;
    return 0;
}

int serve_required(serve_req_t *q, serve_reply_t *r, const char *key, const char *what)
{
    int t = ps_json_get(q->doc, 0, key, 0);
    if (t < 0)
        serve_error(r, 400, "missing_field", "missing %s%s%s", key, what ? ": " : "", what ? what : "");
    return t;
}

int serve_read_params(serve_req_t *q, serve_reply_t *r, const char *op, void *p)
{
    int n = 0;
    const ps_param_t *rows = ps_op_params(op, &n);
    for (int i = 0; i < n; i++) {
        double v = NAN;
        if (rows[i].type == PS_PARAM_STR)
            continue; /* the handler's own */
        if (serve_num_member(q, r, rows[i].name, rows[i].lo, rows[i].hi, &v))
            return r->status;
        char *at = (char *)p + rows[i].offset;
        if (isnan(v))
            continue; /* absent: the default stays */
        if ((rows[i].flags & PS_PARAM_LO_OPEN && v == rows[i].lo) ||
            (rows[i].flags & PS_PARAM_HI_OPEN && v == rows[i].hi))
            return serve_error(r, 400, "bad_field", "%s: bad value '%g': the bound itself is excluded", rows[i].name,
                               v);
        if (rows[i].type == PS_PARAM_DBL)
            *(double *)(void *)at = v;
        else if (v != floor(v))
            return serve_error(r, 400, "bad_field", "%s: bad value '%g': expected an integer (%s)", rows[i].name, v,
                               rows[i].help);
        else if (rows[i].type == PS_PARAM_U64)
            *(uint64_t *)(void *)at = (uint64_t)v;
        else
            *(int *)(void *)at = (int)v;
    }
    return 0;
}
