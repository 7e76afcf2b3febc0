/*
 * PyTorch profiler (Kineto) Chrome trace to ops.csv: `export_chrome_trace`
 * or `tensorboard_trace_handler`, plain or gzip (`use_gzip=True`, read
 * through zlib whatever the file is called). The trace is {"traceEvents":
 * [...]} (or a bare array); kernels are complete events ("ph": "X") with
 * "cat": "kernel" (PyTorch 1.8/1.9: "Kernel", integer microseconds, "tid":
 * "stream 7"), "ts" and "dur" in microseconds, the device in args.device
 * (else pid) and the CUDA stream in args.stream (else tid). Other events
 * (CPU ops, memcpy, runtime calls, "ac2g" flow events) are ignored.
 *
 * One device and its stream(s) become one operator sequence ordered by ts.
 * Communication kernels (NCCL, RCCL) never decide which: the default is the
 * device, then the stream, with the most compute-kernel time; "all" merges
 * every stream with compute kernels. A dur of 0 (kernels shorter than the
 * time resolution of integer-microsecond traces) is kept as half the
 * resolution, or dropped on request, and counted in a warning.
 */
#include "common/common.h"
#include "profile/profile_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

typedef struct {
    double ts, dur_us;
    size_t seq;
    const char *name;   /* borrowed from the trace's text (unescaped in place) */
    const char *stream; /* pooled */
    const char *dev;    /* pooled */
    int comm, zero;
} kernel_t;

/* The kernels of a trace, k[0..n) (in time order once sorted), and which
 * of them are taken: take[k[i].seq] for the kernel read seq-th. */
typedef struct {
    kernel_t *k;
    size_t n;
    int *take;
} kernels_t;

/* A trace as read: its JSON text (decompressed; ours to write into), the
 * name its messages give it, and whether it came gzipped. */
typedef struct {
    char *text;
    size_t len;
    const char *name;
    int gzipped;
} trace_text_t;

/* The trace's tokens (ps_json_parse, the one JSON reader). */
static int member(ps_json_doc_t *d, int obj, const char *key) { return ps_json_get(d, obj, key, 0); }

static int is(const ps_json_doc_t *d, int t, int type) { return t >= 0 && d->tok[t].type == type; }

/* String token t, or NULL when t is not a string. */
static const char *str_of(ps_json_doc_t *d, int t) { return is(d, t, PS_JSON_STRING) ? ps_json_str(d, t) : NULL; }

/* Number token t into *v (an infinity when it overflows a double): 1, or
 * 0 when t is not a number. */
static int num_of(const ps_json_doc_t *d, int t, double *v)
{
    if (!is(d, t, PS_JSON_NUMBER))
        return 0;
    if (ps_json_num(d, t, v) != 0)
        *v = d->text[d->tok[t].start] == '-' ? -INFINITY : INFINITY;
    return 1;
}

static int cmp_kernel(const void *a, const void *b)
{
    const kernel_t *x = a, *y = b; /* ts is finite (collect_kernels) */
    return psi_import_order((x->ts > y->ts) - (x->ts < y->ts), x->seq, y->seq);
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

/* A number or string member as text ("7", "stream 7" -> "7"), or NULL. */
static const char *member_text(ps_json_doc_t *d, int t, char *buf, size_t n)
{
    double v;
    if (num_of(d, t, &v)) {
        snprintf(buf, n, "%.17g", v);
        return buf;
    }
    const char *s = str_of(d, t);
    if (s) {
        if (strncasecmp(s, "stream ", 7) == 0)
            s += 7;
        snprintf(buf, n, "%s", s);
        return buf;
    }
    return NULL;
}

static int is_kernel(ps_json_doc_t *d, int ev, int *old_cat)
{
    const char *cat = str_of(d, member(d, ev, "cat"));
    int ph = member(d, ev, "ph");
    if (!cat || strcasecmp(cat, "kernel") != 0)
        return 0;
    if (ph >= 0 && !(is(d, ph, PS_JSON_STRING) && strcmp(ps_json_str(d, ph), "X") == 0))
        return 0;
    *old_cat |= strcmp(cat, "Kernel") == 0;
    return 1;
}

/* NCCL/RCCL collectives and send/receive: their time is waiting on peers. */
static int is_comm(const char *name)
{
    for (const char *s = name; *s; s++)
        if ((tolower((unsigned char)s[0]) == 'n' || tolower((unsigned char)s[0]) == 'r') &&
            strncasecmp(s + 1, "ccl", 3) == 0)
            return 1;
    return 0;
}

/* Kernel event ev (the idx-th) as k: 0, or PS_E_INPUT naming it. */
static int read_kernel(ps_json_doc_t *d, int ev, size_t idx, const char *name, kernel_t *k)
{
    double ts, dur;
    const char *nm = str_of(d, member(d, ev, "name"));
    if (!num_of(d, member(d, ev, "ts"), &ts) || !num_of(d, member(d, ev, "dur"), &dur) || !nm || !*nm)
        return psi_error(PS_E_INPUT, "%s: event %zu: a kernel event needs a name, \"ts\" and \"dur\"", name, idx);
    if (!isfinite(ts) || !isfinite(dur) || dur < 0 || dur * 1e3 > PSI_MAX_OP_NS)
        return psi_error(PS_E_INPUT,
                         "%s: event %zu (%.60s): dur %g us: must be in 0..%.0f (one hour: no kernel "
                         "of a profiled step runs longer)",
                         name, idx, nm, dur, PSI_MAX_OP_NS / 1e3);
    *k = (kernel_t){ts, dur, 0, nm, NULL, NULL, is_comm(nm), dur == 0};
    return PS_OK;
}

/* Collect the kernel events of array token events into *out (n of them). */
static int collect_kernels(ps_json_doc_t *d, int events, const char *name, psi_strpool_t *pool, kernels_t *ks,
                           int *old_cat)
{
    kernel_t *k = NULL;
    size_t n = 0, cap = 0, idx = 0;
    int rc = PS_OK;
    for (int i = 0, ev = ps_json_child(d, events); i < d->tok[events].size; i++, ev = ps_json_next(d, ev, 0)) {
        idx++;
        if (!is(d, ev, PS_JSON_OBJECT) || !is_kernel(d, ev, old_cat))
            continue;
        void *grown = k;
        if ((rc = psi_array_grow(&grown, n, &cap, sizeof *k, 256)) != PS_OK)
            break;
        k = grown;
        if ((rc = read_kernel(d, ev, idx, name, &k[n])) != PS_OK)
            break;
        int args = member(d, ev, "args");
        int s = is(d, args, PS_JSON_OBJECT) ? member(d, args, "stream") : -1;
        int dv = is(d, args, PS_JSON_OBJECT) ? member(d, args, "device") : -1;
        char sb[64], db[64];
        const char *stream = member_text(d, s >= 0 ? s : member(d, ev, "tid"), sb, sizeof sb);
        const char *dev = member_text(d, dv >= 0 ? dv : member(d, ev, "pid"), db, sizeof db);
        k[n].seq = n;
        k[n].stream = psi_strpool_intern(pool, stream ? stream : "?");
        k[n].dev = psi_strpool_intern(pool, dev ? dev : "?");
        if (!k[n].stream || !k[n].dev) {
            rc = PS_E_NOMEM;
            break;
        }
        n++;
    }
    if (rc != PS_OK) {
        free(k);
        return rc;
    }
    ks->k = k;
    ks->n = n;
    return PS_OK;
}

/* The time resolution of the kernel durations, in us: the coarsest of 1,
 * 0.1, 0.01 and 0.001 that every dur is a multiple of. */
static double time_resolution(const kernel_t *k, size_t n)
{
    double res = 1;
    for (int digits = 0; digits <= 3; digits++, res /= 10) {
        int all = 1;
        for (size_t i = 0; i < n && all; i++) {
            double v = k[i].dur_us / res;
            all = fabs(v - nearbyint(v)) < 1e-6 * (v > 1 ? v : 1);
        }
        if (all)
            return res;
    }
    return 0.001;
}

/* The GPU name deviceProperties gives the device (by "id"; a lone entry
 * when the device is not numbered), or NULL. */
static const char *device_name(ps_json_doc_t *d, const char *dev)
{
    int props = is(d, 0, PS_JSON_OBJECT) ? member(d, 0, "deviceProperties") : -1;
    if (!is(d, props, PS_JSON_ARRAY))
        return NULL;
    char *end;
    double id = strtod(dev, &end), pid;
    int numbered = *dev && !*end;
    const char *only = NULL;
    int count = 0;
    for (int i = 0, p = ps_json_child(d, props); i < d->tok[props].size; i++, p = ps_json_next(d, p, 0)) {
        const char *nm = is(d, p, PS_JSON_OBJECT) ? str_of(d, member(d, p, "name")) : NULL;
        if (!nm)
            continue;
        count++;
        only = nm;
        if (numbered && num_of(d, member(d, p, "id"), &pid) && pid == id)
            return nm;
    }
    return count == 1 ? only : NULL;
}

/* The tally whose key is want, or with want NULL the one with the most
 * compute-kernel time (the most time when all are communication); SIZE_MAX
 * when none has the key. */
static size_t pick_tally(const import_tallies_t *ts, const char *want)
{
    if (want) {
        for (size_t i = 0; i < ts->n; i++)
            if (strcmp(ts->t[i].key, want) == 0)
                return i;
        return SIZE_MAX;
    }
    size_t busiest = psi_import_tally_busiest(ts, 1);
    return busiest != SIZE_MAX ? busiest : psi_import_tally_busiest(ts, 0);
}

/* "no kernels on device 3 (devices: 0, 1)", with what "device" or "stream". */
static int no_kernels_on(const char *name, const char *what, const char *want, const import_tallies_t *ts)
{
    char have[200] = "";
    for (size_t i = 0; i < ts->n; i++)
        psi_import_list(have, sizeof have, ts->t[i].key);
    return psi_error(PS_E_INPUT, "%s: no kernels on %s %s (%ss: %s)", name, what, want, what, have);
}

/* taken[s] for the streams of device dev (stream one, or with all every
 * stream with compute kernels, or every stream when none has any), then
 * ks->take[i] for the kernels (in the order read). */
static void mark_taken(const kernels_t *ks, const import_tallies_t *streams, const char *dev, int all, size_t one,
                       int *taken)
{
    const kernel_t *k = ks->k;
    int any = 0;
    for (size_t s = 0; s < streams->n; s++) {
        taken[s] = all ? streams->t[s].n > streams->t[s].n_comm : s == one;
        any |= taken[s];
    }
    if (all && !any)
        for (size_t s = 0; s < streams->n; s++)
            taken[s] = 1; /* only communication kernels: take them all */
    for (size_t i = 0; i < ks->n; i++) {
        ks->take[i] = 0;
        for (size_t s = 0; s < streams->n && k[i].dev == dev; s++)
            if (streams->t[s].key == k[i].stream)
                ks->take[i] = taken[s];
    }
}

/* The taken and skipped notes of info; taken has room for the devices
 * after the streams. */
static void note_taken(ps_import_info_t *info, const import_tallies_t *devs, size_t dev,
                       const import_tallies_t *streams, int *taken)
{
    char list[160] = "";
    int count = 0;
    for (size_t s = 0; s < streams->n; s++)
        if (taken[s]) {
            psi_import_list(list, sizeof list, streams->t[s].key);
            count++;
        }
    if (devs->n > 1)
        snprintf(info->taken, sizeof info->taken, "device %s stream%s %s", devs->t[dev].key, count > 1 ? "s" : "",
                 list);
    else
        snprintf(info->taken, sizeof info->taken, "stream%s %s", count > 1 ? "s" : "", list);
    psi_import_tally_left(streams, "stream", taken, info);
    int *dev_taken = taken + streams->n;
    dev_taken[dev] = 1;
    psi_import_tally_left(devs, "device", dev_taken, info);
}

/* Which kernels to take: ks->take[i] for kernel i (in the order read).
 * Fills the taken and skipped notes of info. */
static int choose_kernels(const char *name, const kernels_t *ks, const ps_import_params_t *p, ps_import_info_t *info,
                          const char **dev_out)
{
    const kernel_t *k = ks->k;
    size_t n = ks->n;
    if (n == 0)
        return PS_OK;
    import_tallies_t devs = {0}, streams = {0};
    int *taken = NULL, rc = PS_OK;
    for (size_t i = 0; i < n && rc == PS_OK; i++)
        rc = psi_import_tally_add(&devs, k[i].dev, k[i].dur_us * 1e3, k[i].comm);
    size_t dev = pick_tally(&devs, p->device);
    if (rc == PS_OK && dev == SIZE_MAX)
        rc = no_kernels_on(name, "device", p->device, &devs);
    for (size_t i = 0; i < n && rc == PS_OK; i++)
        if (k[i].dev == devs.t[dev].key)
            rc = psi_import_tally_add(&streams, k[i].stream, k[i].dur_us * 1e3, k[i].comm);
    if (rc == PS_OK && !(taken = psi_calloc(devs.n + streams.n + 1, sizeof *taken)))
        rc = PS_E_NOMEM;
    int all = p->stream && strcmp(p->stream, "all") == 0;
    size_t one = SIZE_MAX;
    if (rc == PS_OK && !all) {
        one = pick_tally(&streams, p->stream);
        if (one == SIZE_MAX && p->stream)
            rc = no_kernels_on(name, "stream", p->stream, &streams);
    }
    if (rc == PS_OK) {
        mark_taken(ks, &streams, devs.t[dev].key, all, one, taken);
        *dev_out = devs.t[dev].key;
        if (info)
            note_taken(info, &devs, dev, &streams, taken);
    }
    free(taken);
    psi_import_tallies_free(&devs);
    psi_import_tallies_free(&streams);
    return rc;
}

/* The trace's JSON into d, or an error at the line and column where it
 * stops being JSON. */
static int parse_trace(const trace_text_t *tr, ps_json_doc_t *d)
{
    const char *name = tr->name, *in_gz = tr->gzipped ? " (in the decompressed text)" : "";
    size_t line, col;
    d->max_depth = 1000;   /* cJSON's nesting limit, which read traces before */
    d->allow_trailing = 1; /* warned about below */
    int rc = ps_json_parse(d, tr->text, tr->len);
    if (rc == PS_E_NOMEM)
        return psi_error(PS_E_NOMEM, "%s: out of memory reading its JSON", name);
    if (rc != PS_OK && tr->len > (size_t)1 << 30)
        return psi_error(PS_E_INPUT, "%s: %zu bytes of JSON%s: more than the 1 GiB the JSON reader takes", name,
                         tr->len, in_gz);
    if (rc != PS_OK) {
        text_position(tr->text, d->err_at > tr->len ? tr->len : d->err_at, &line, &col);
        return psi_error(PS_E_INPUT, "%s:%zu:%zu: not valid JSON (%s)%s", name, line, col, d->err, in_gz);
    }
    if (d->end < tr->len) {
        text_position(tr->text, d->end, &line, &col);
        psi_log(PS_LOG_WARN, "%s:%zu:%zu: %zu bytes after the trace's JSON ignored%s", name, line, col,
                tr->len - d->end, tr->gzipped ? " (in the decompressed text: a second gzip member?)" : "");
    }
    return PS_OK;
}

/* The taken kernels, in time order, as operators of t; *zero counts the
 * taken kernels of dur 0 (dropped with drop_zero). */
static int add_kernels(ps_ops_t *t, const ps_import_params_t *q, const kernels_t *ks, int drop_zero, size_t *zero)
{
    const kernel_t *k = ks->k;
    int op = 0, rc = PS_OK;
    *zero = 0;
    for (size_t i = 0; i < ks->n && rc == PS_OK; i++) {
        if (!ks->take[k[i].seq])
            continue;
        if (k[i].zero) {
            (*zero)++;
            if (drop_zero)
                continue;
        }
        rc = psi_import_add(t, q, op++, k[i].name, k[i].dur_us * 1e3, NULL);
    }
    return rc;
}

/* info->format: "PyTorch trace schemaVersion 1, gzip" and the like. */
static void describe_trace(ps_import_info_t *info, ps_json_doc_t *d, int old_cat, int gzipped)
{
    int sv = is(d, 0, PS_JSON_OBJECT) ? member(d, 0, "schemaVersion") : -1;
    char ver[40];
    double v;
    if (num_of(d, sv, &v))
        snprintf(ver, sizeof ver, "schemaVersion %g", v);
    else if (is(d, sv, PS_JSON_STRING))
        snprintf(ver, sizeof ver, "schemaVersion %.16s", ps_json_str(d, sv));
    else
        snprintf(ver, sizeof ver, "no schemaVersion");
    snprintf(info->format, sizeof info->format, "PyTorch trace %s%s%s", ver,
             old_cat ? ", cat Kernel (PyTorch 1.8/1.9)" : "", gzipped ? ", gzip" : "");
}

/* Frees what ks holds (not ks). */
static void kernels_free(kernels_t *ks)
{
    free(ks->k);
    free(ks->take);
}

static int import_torch_text(const trace_text_t *tr, const ps_import_params_t *p, ps_ops_t **out,
                             ps_import_info_t *info)
{
    const char *name = tr->name;
    ps_json_doc_t doc = {0}, *d = &doc;
    int rc = parse_trace(tr, d);
    if (rc != PS_OK) {
        ps_json_doc_free(d);
        return rc;
    }
    int events = is(d, 0, PS_JSON_ARRAY) ? 0 : is(d, 0, PS_JSON_OBJECT) ? member(d, 0, "traceEvents") : -1;
    psi_strpool_t *pool = psi_strpool_new();
    ps_ops_t *t = ps_ops_new();
    kernels_t ks = {NULL, 0, NULL};
    int old_cat = 0;
    if (!pool || !t) {
        rc = PS_E_NOMEM;
        goto done;
    }
    if (!is(d, events, PS_JSON_ARRAY)) {
        rc = psi_error(PS_E_INPUT, "%s: not a Chrome trace: no \"traceEvents\" array", name);
        goto done;
    }
    if ((rc = collect_kernels(d, events, name, pool, &ks, &old_cat)) != PS_OK)
        goto done;
    size_t n = ks.n;
    double half_res_us = time_resolution(ks.k, n) / 2;
    for (size_t i = 0; i < n; i++)
        if (ks.k[i].dur_us == 0 && !p->drop_zero)
            ks.k[i].dur_us = half_res_us;
    if (!(ks.take = psi_calloc(n ? n : 1, sizeof *ks.take))) {
        rc = PS_E_NOMEM;
        goto done;
    }
    const char *dev = NULL;
    if (n && (rc = choose_kernels(name, &ks, p, info, &dev)) != PS_OK)
        goto done;
    ps_import_params_t q = *p;
    if (n && (rc = psi_import_resolve_gpu(p, device_name(d, dev), &q, info)) != PS_OK)
        goto done;
    if (n)
        qsort(ks.k, n, sizeof *ks.k, cmp_kernel);
    /* qsort moved the kernels: take[] follows their original order. */
    size_t zero;
    if ((rc = add_kernels(t, &q, &ks, p->drop_zero, &zero)) != PS_OK)
        goto done;
    if (zero)
        psi_log(PS_LOG_WARN,
                "import: %s: %zu kernels have dur 0 (shorter than the trace's time "
                "resolution, %g us): %s",
                name, zero, half_res_us * 2,
                p->drop_zero ? "dropped (--drop-zero)" : "each kept as half of it (--drop-zero drops them)");
    if (info) {
        describe_trace(info, d, old_cat, tr->gzipped);
        info->zero_dur = zero;
        info->zero_dur_ns = p->drop_zero ? 0 : half_res_us * 1e3;
    }
    rc = psi_import_finish(&t, name, out, info);
done:
    ps_ops_free(t);
    psi_strpool_free(pool);
    kernels_free(&ks);
    ps_json_doc_free(d);
    return rc;
}

/* Inflate gzip data (one or more members) into a new buffer. */
static int gunzip(const unsigned char *in, size_t n, const char *name, char **out, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        return psi_error(PS_E_NOMEM, "%s: gzip: cannot start zlib", name);
    size_t cap = n < ((size_t)1 << 20) ? ((size_t)1 << 16) : n * 4, len = 0, used = 0;
    char *buf = psi_malloc(cap + 1);
    int rc = buf ? PS_OK : PS_E_NOMEM;
    while (rc == PS_OK) {
        if (len == cap) {
            if (cap > SIZE_MAX / 4) {
                rc = psi_error(PS_E_INPUT, "%s: gzip: decompressed text too large", name);
                break;
            }
            char *g = psi_realloc(buf, cap * 2 + 1);
            if (!g) {
                rc = PS_E_NOMEM;
                break;
            }
            buf = g;
            cap *= 2;
        }
        size_t in_left = n - used, out_left = cap - len;
        z.next_in = (Bytef *)(uintptr_t)(in + used);
        z.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
        z.next_out = (Bytef *)(buf + len);
        z.avail_out = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
        uInt avail_in = z.avail_in, avail_out = z.avail_out;
        int zr = inflate(&z, Z_NO_FLUSH);
        used += avail_in - z.avail_in;
        len += avail_out - z.avail_out;
        if (zr == Z_STREAM_END) {
            /* Another member may follow (concatenated gzip files). */
            if (used < n && in[used] != 0x1f)
                psi_log(PS_LOG_WARN, "%s: %zu bytes after the gzip data ignored", name, n - used);
            if (used == n || in[used] != 0x1f)
                break;
            inflateReset(&z);
        } else if (zr == Z_BUF_ERROR && used == n && z.avail_out) {
            rc = psi_error(PS_E_INPUT, "%s: gzip: the file is cut short (%zu bytes decompressed)", name, len);
        } else if (zr != Z_OK && zr != Z_BUF_ERROR) {
            rc = psi_error(PS_E_INPUT, "%s: gzip: %s", name, z.msg ? z.msg : "corrupt data");
        }
    }
    inflateEnd(&z);
    if (rc != PS_OK) {
        free(buf);
        return rc;
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    return PS_OK;
}

/* The trace in data[len] (ours to write into: the JSON reader unescapes
 * strings in place), gzipped or not. */
static int import_torch_own(char *data, size_t len, const char *name, const ps_import_params_t *p, ps_ops_t **out,
                            ps_import_info_t *info)
{
    const unsigned char *u = (const unsigned char *)data;
    if (len >= 2 && u[0] == 0x1f && u[1] == 0x8b) {
        char *text = NULL;
        size_t n = 0;
        int rc = gunzip(u, len, name, &text, &n);
        if (rc != PS_OK)
            return rc;
        rc = import_torch_text(&(trace_text_t){text, n, name, 1}, p, out, info);
        free(text);
        return rc;
    }
    return import_torch_text(&(trace_text_t){data, len, name, 0}, p, out, info);
}

int psi_import_torch_bytes(const char *data, size_t len, const char *name, const ps_import_params_t *p, ps_ops_t **out,
                           ps_import_info_t *info)
{
    *out = NULL;
    int rc = psi_import_check_params(p);
    if (rc != PS_OK)
        return rc;
    char *copy = psi_malloc(len + 1); /* the caller's bytes stay as they are */
    if (!copy)
        return PS_E_NOMEM;
    memcpy(copy, data, len);
    rc = import_torch_own(copy, len, name, p, out, info);
    free(copy);
    return rc;
}

int psi_import_torch_file(const char *path, const ps_import_params_t *p, ps_ops_t **out, ps_import_info_t *info)
{
    FILE *f = NULL;
    int rc = psi_import_open(path, p, out, &f);
    if (rc != PS_OK)
        return rc;
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        void *grown = text;
        if ((rc = psi_array_grow(&grown, len, &cap, 1, 1 << 16)) != PS_OK)
            break;
        text = grown;
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                rc = psi_error(PS_E_IO, "%s: read error: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc == PS_OK && (rc = psi_import_check_params(p)) == PS_OK)
        rc = import_torch_own(text, len, path, p, out, info);
    free(text);
    return rc;
}
