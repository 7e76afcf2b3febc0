/*
 * PyTorch profiler Chrome trace (`prof.export_chrome_trace(path)`) to
 * ops.csv. The trace is {"traceEvents": [...]} (or a bare array); kernels are
 * complete events ("ph": "X") with "cat": "kernel" (older PyTorch: "Kernel"),
 * "ts" and "dur" in microseconds, and the CUDA stream in args.stream (else
 * "tid"). One stream becomes one operator sequence ordered by ts: the stream
 * with the most kernel time unless the caller names one. Other events
 * (CPU ops, memcpy, runtime calls) are ignored.
 */
#include "common/common.h"
#include "profile/profile_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    double ts, dur_us;
    size_t seq;
    const char *name;   /* borrowed from the JSON tree */
    const char *stream; /* pooled */
} kernel_t;

static int cmp_kernel(const void *a, const void *b)
{
    const kernel_t *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Line and column (1-based, in bytes) of offset off in text. */
static void text_position(const char *text, size_t off, size_t *line, size_t *col)
{
    *line = 1;
    size_t start = 0;
    for (size_t i = 0; i < off; i++)
        if (text[i] == '\n') {
            (*line)++;
            start = i + 1;
        }
    *col = off - start + 1;
}

/* The stream of a kernel event as text: args.stream, else tid. */
static const char *event_stream(const cJSON *ev, char *buf, size_t n)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(args, "stream");
    if (!s)
        s = cJSON_GetObjectItemCaseSensitive(ev, "tid");
    if (cJSON_IsNumber(s))
        snprintf(buf, n, "%.17g", s->valuedouble);
    else if (cJSON_IsString(s))
        snprintf(buf, n, "%s", s->valuestring);
    else
        snprintf(buf, n, "?");
    return buf;
}

static int is_kernel(const cJSON *ev)
{
    const cJSON *cat = cJSON_GetObjectItemCaseSensitive(ev, "cat");
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
    if (!cJSON_IsString(cat) || strcasecmp(cat->valuestring, "kernel") != 0)
        return 0;
    return !ph || (cJSON_IsString(ph) && strcmp(ph->valuestring, "X") == 0);
}

/* The stream with the most kernel time (first seen wins a tie). */
static const char *busiest_stream(const kernel_t *k, size_t n)
{
    const char *best = NULL;
    double best_us = -1;
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = k[j].stream == k[i].stream;
        if (seen)
            continue;
        double sum = 0;
        for (size_t j = i; j < n; j++)
            if (k[j].stream == k[i].stream)
                sum += k[j].dur_us;
        if (sum > best_us) {
            best_us = sum;
            best = k[i].stream;
        }
    }
    return best;
}

/* Collect the kernel events of the trace into *out (n of them). */
static int collect_kernels(const cJSON *events, const char *name, ps_strpool_t *pool,
                           kernel_t **out, size_t *n_out)
{
    kernel_t *k = NULL;
    size_t n = 0, cap = 0, idx = 0;
    int rc = PS_OK;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        idx++;
        if (!cJSON_IsObject(ev) || !is_kernel(ev))
            continue;
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
        const cJSON *dur = cJSON_GetObjectItemCaseSensitive(ev, "dur");
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name");
        if (!cJSON_IsNumber(ts) || !cJSON_IsNumber(dur) || !cJSON_IsString(nm) ||
            !*nm->valuestring) {
            rc = ps_error(PS_E_INPUT, "%s: event %zu: a kernel event needs a name, \"ts\" and "
                          "\"dur\"", name, idx);
            break;
        }
        if (!isfinite(ts->valuedouble) || !isfinite(dur->valuedouble) || dur->valuedouble <= 0) {
            rc = ps_error(PS_E_INPUT, "%s: event %zu (%s): dur %g: must be > 0", name, idx,
                          nm->valuestring, dur->valuedouble);
            break;
        }
        void *grown = k;
        if ((rc = ps_array_grow(&grown, n, &cap, sizeof *k, 256)) != PS_OK)
            break;
        k = grown;
        char buf[64];
        k[n] = (kernel_t){ts->valuedouble, dur->valuedouble, n, nm->valuestring,
                          ps_strpool_intern(pool, event_stream(ev, buf, sizeof buf))};
        if (!k[n].stream) {
            rc = PS_E_NOMEM;
            break;
        }
        n++;
    }
    if (rc != PS_OK) {
        free(k);
        return rc;
    }
    *out = k;
    *n_out = n;
    return PS_OK;
}

int ps_import_torch_json(const char *text, size_t len, const char *name,
                         const ps_import_params_t *p, ps_ops_t **out)
{
    *out = NULL;
    int rc = ps_import_check_params(p);
    if (rc != PS_OK)
        return rc;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        size_t line, col, off = end && end >= text ? (size_t)(end - text) : 0;
        text_position(text, off > len ? len : off, &line, &col);
        return ps_error(PS_E_INPUT, "%s:%zu:%zu: not valid JSON", name, line, col);
    }
    const cJSON *events = cJSON_IsArray(root) ? root
                                              : cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    ps_strpool_t *pool = ps_strpool_new();
    ps_ops_t *t = ps_ops_new();
    kernel_t *k = NULL;
    size_t n = 0;
    if (!pool || !t) {
        rc = PS_E_NOMEM;
        goto done;
    }
    if (!cJSON_IsArray(events)) {
        rc = ps_error(PS_E_INPUT, "%s: not a Chrome trace: no \"traceEvents\" array", name);
        goto done;
    }
    if ((rc = collect_kernels(events, name, pool, &k, &n)) != PS_OK)
        goto done;
    const char *stream = NULL;
    if (p->stream) {
        stream = ps_strpool_intern(pool, p->stream);
        size_t found = 0;
        for (size_t i = 0; i < n; i++)
            found += k[i].stream == stream;
        if (!found && n) {
            rc = ps_error(PS_E_INPUT, "%s: no kernels on stream %s (the busiest stream is %s)",
                          name, p->stream, busiest_stream(k, n));
            goto done;
        }
    } else if (n) {
        stream = busiest_stream(k, n);
    }
    if (n)
        qsort(k, n, sizeof *k, cmp_kernel);
    int op = 0;
    for (size_t i = 0; i < n && rc == PS_OK; i++)
        if (k[i].stream == stream)
            rc = ps_import_add(t, p, op++, k[i].name, k[i].dur_us * 1e3, NULL);
    if (rc == PS_OK) {
        rc = ps_import_finish(t, name, out);
        t = NULL;
    }
done:
    ps_ops_free(t);
    ps_strpool_free(pool);
    free(k);
    cJSON_Delete(root);
    return rc;
}

int ps_import_torch_trace(const char *trace_json, const ps_import_params_t *p, ps_ops_t **out)
{
    *out = NULL;
    FILE *f = fopen(trace_json, "rb");
    if (!f)
        return ps_error(PS_E_IO, "%s: cannot open: %s", trace_json, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc = PS_OK;
    for (;;) {
        void *grown = text;
        if ((rc = ps_array_grow(&grown, len, &cap, 1, 1 << 16)) != PS_OK)
            break;
        text = grown;
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                rc = ps_error(PS_E_IO, "%s: read error: %s", trace_json, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc == PS_OK)
        rc = ps_import_torch_json(text, len, trace_json, p, out);
    free(text);
    return rc;
}
