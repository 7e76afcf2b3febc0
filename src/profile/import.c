/* What the two importers (Nsight Compute CSV, PyTorch trace) share: their
 * parameters, the GPU the rows name, the tallies behind "what was taken and
 * what was left", the rows they make, how an import ends, and the merge of
 * several imports of one model. The entry points that pick an importer are
 * import_run.c. */
#include "common/common.h"
#include "profile/gpu.h"
#include "profile/profile_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

ps_import_params_t ps_import_default_params(void) { return (ps_import_params_t){.batch = 1}; }

int psi_import_check_params(const ps_import_params_t *p)
{
    if (!p || (p->gpu && !*p->gpu) || !p->model || !*p->model)
        return psi_error(PS_E_ARG, "import: the model name is required (and a GPU name, when "
                                   "given, must not be empty)");
    if (p->batch <= 0)
        return psi_error(PS_E_ARG, "import: batch must be > 0 (got %d)", p->batch);
    if (p->tpcs <= 0)
        return psi_error(PS_E_ARG, "import: tpcs must be > 0 (got %d)", p->tpcs);
    return PS_OK;
}

int psi_import_open(const char *path, const ps_import_params_t *p, ps_ops_t **out, FILE **f)
{
    *out = NULL;
    *f = NULL;
    int rc = psi_import_check_params(p);
    if (rc != PS_OK)
        return rc;
    *f = fopen(path, "rb");
    if (!*f)
        return psi_error(PS_E_IO, "%s: cannot open: %s", path, strerror(errno));
    return PS_OK;
}

PS_PRINTF(4, 0) static void note_v(char *buf, size_t n, const char *sep, const char *fmt, va_list ap)
{
    if (!buf || n == 0)
        return;
    size_t used = strlen(buf);
    if (used + 1 >= n)
        return;
    if (used && used + 3 < n) {
        memcpy(buf + used, sep, 3);
        used += 2;
    }
    vsnprintf(buf + used, n - used, fmt, ap);
}

void psi_import_note(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note_v(buf, n, "; ", fmt, ap);
    va_end(ap);
}

PS_PRINTF(4, 5) static void note_sep(char *buf, size_t n, const char *sep, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note_v(buf, n, sep, fmt, ap);
    va_end(ap);
}

void psi_import_list(char *buf, size_t n, const char *item) { note_sep(buf, n, ", ", "%s", item); }

/* A duration as "12.3 us", "4.56 ms". */
static const char *psi_import_fmt_ns(double ns, char *buf, size_t n)
{
    if (ns >= 1e9)
        snprintf(buf, n, "%.3g s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, n, "%.3g ms", ns / 1e6);
    else if (ns >= 1e3)
        snprintf(buf, n, "%.3g us", ns / 1e3);
    else
        snprintf(buf, n, "%.3g ns", ns);
    return buf;
}

int psi_import_tally_add(import_tallies_t *ts, const char *key, double ns, int comm)
{
    size_t i = 0;
    while (i < ts->n && ts->t[i].key != key)
        i++;
    if (i == ts->n) {
        void *grown = ts->t;
        int rc = psi_array_grow(&grown, ts->n, &ts->cap, sizeof *ts->t, 8);
        ts->t = grown;
        if (rc != PS_OK)
            return rc;
        ts->t[ts->n++] = (import_tally_t){.key = key};
    }
    import_tally_t *t = &ts->t[i];
    t->n++;
    t->ns += ns;
    if (comm) {
        t->n_comm++;
        t->ns_comm += ns;
    }
    return PS_OK;
}

size_t psi_import_tally_busiest(const import_tallies_t *ts, int compute_only)
{
    size_t best = SIZE_MAX;
    double best_ns = -1;
    for (size_t i = 0; i < ts->n; i++) {
        double ns = compute_only ? ts->t[i].ns - ts->t[i].ns_comm : ts->t[i].ns;
        size_t n = compute_only ? ts->t[i].n - ts->t[i].n_comm : ts->t[i].n;
        if (n && ns > best_ns) {
            best_ns = ns;
            best = i;
        }
    }
    return best;
}

void psi_import_tally_left(const import_tallies_t *ts, const char *what, const int *taken, ps_import_info_t *info)
{
    if (!info)
        return;
    size_t shown = 0, hidden = 0;
    for (size_t i = 0; i < ts->n; i++) {
        if (taken[i])
            continue;
        if (shown == 6) {
            hidden++;
            continue;
        }
        char t[32];
        const import_tally_t *x = &ts->t[i];
        psi_import_note(info->skipped, sizeof info->skipped, "%s%s%s: %zu kernels, %s%s", what ? what : "",
                        what ? " " : "", x->key, x->n, psi_import_fmt_ns(x->ns, t, sizeof t),
                        x->n_comm == x->n ? " (communication)" : "");
        shown++;
    }
    if (hidden)
        psi_import_note(info->skipped, sizeof info->skipped, "%zu more", hidden);
}

void psi_import_tallies_free(import_tallies_t *ts)
{
    free(ts->t);
    ts->t = NULL;
    ts->n = ts->cap = 0;
}

int psi_import_resolve_gpu(const ps_import_params_t *p, const char *file_gpu, ps_import_params_t *q,
                           ps_import_info_t *info)
{
    *q = *p;
    const psi_gpu_t *fg = file_gpu && *file_gpu ? psi_gpu_from_device_name(file_gpu) : NULL;
    const psi_gpu_t *g = NULL;
    if (p->gpu) {
        g = psi_gpu_find(p->gpu);
        if (!g)
            g = psi_gpu_from_device_name(p->gpu);
        q->gpu = g ? g->name : p->gpu;
        /* A file of a GPU outside the catalog is not one of the catalog's. */
        int differ = file_gpu && *file_gpu && (fg || g) && fg != g;
        if (differ && !p->force_gpu)
            return psi_error(PS_E_INPUT,
                             "the file was profiled on %s, not on %s: give the file's GPU, or force %s "
                             "(--force-gpu)",
                             file_gpu, q->gpu, q->gpu);
        if (differ)
            psi_log(PS_LOG_WARN, "import: the file was profiled on %s; the rows name %s as forced", file_gpu, q->gpu);
    } else if (file_gpu && *file_gpu) {
        g = fg;
        q->gpu = g ? g->name : file_gpu;
        if (!g)
            psi_log(PS_LOG_WARN,
                    "import: GPU '%s' is not in the catalog: the rows name it as the "
                    "file does, and no TPC limit is checked",
                    file_gpu);
    } else {
        return psi_error(PS_E_ARG, "the file names no GPU: give --gpu");
    }
    if (g && p->tpcs > g->tpcs)
        return psi_error(PS_E_ARG, "--tpcs: %d exceeds the %d TPCs of %s%s%s%s", p->tpcs, g->tpcs, g->name,
                         file_gpu && !p->gpu ? " (the file names " : "", file_gpu && !p->gpu ? file_gpu : "",
                         file_gpu && !p->gpu ? ")" : "");
    if (info) {
        snprintf(info->gpu, sizeof info->gpu, "%s", q->gpu);
        snprintf(info->gpu_in_file, sizeof info->gpu_in_file, "%s", file_gpu ? file_gpu : "");
    }
    return PS_OK;
}

int psi_import_add(ps_ops_t *t, const ps_import_params_t *p, int op, const char *name, double duration_ns,
                   const psi_counters_t *c)
{
    if (!(duration_ns <= PSI_MAX_OP_NS))
        return psi_error(PS_E_INPUT,
                         "kernel %d (%.60s): duration %g ns is over one hour (%.0f ns), longer than any "
                         "kernel of a profiled step",
                         op, name, duration_ns, PSI_MAX_OP_NS);
    psi_op_row_t r = {.gpu = p->gpu,
                      .model = p->model,
                      .batch = p->batch,
                      .op = op,
                      .name = name,
                      .tpcs = p->tpcs,
                      .duration_ns = duration_ns,
                      .intensity = PS_INTENSITY_NONE};
    r.c = c ? *c : (psi_counters_t){NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    return ps_ops_append(t, &r);
}

int psi_import_finish(ps_ops_t **tp, const char *path, ps_ops_t **out, ps_import_info_t *info)
{
    ps_ops_t *t = *tp;
    *tp = NULL;
    int rc = PS_OK;
    if (t->n == 0)
        rc = psi_error(PS_E_INPUT, "%s: no kernels found: nothing to import", path);
    else if ((rc = psi_ops_index(t)) != PS_OK)
        psi_error_prefix(rc, path);
    if (rc != PS_OK) {
        ps_ops_free(t);
        return rc;
    }
    if (info) {
        info->ops = t->n;
        info->total_ns = 0;
        for (size_t i = 0; i < t->n; i++)
            info->total_ns += t->rows[i].duration_ns;
    }
    *out = t;
    return PS_OK;
}

/* The part of a kernel name that Nsight Compute and a PyTorch trace write
 * alike: without a leading "void ", template arguments and parameters
 * ("void at::native::f<4, T2>(int, T2)" and "at::native::f<4, Functor<float>
 * >(int, ...)" are both "at::native::f"). "(anonymous namespace)" stays. */
static size_t kernel_base(const char *s, const char **start)
{
    if (strncmp(s, "void ", 5) == 0)
        s += 5;
    *start = s;
    size_t i = 0;
    for (;;) {
        if (strncmp(s + i, "(anonymous namespace)", 21) == 0) {
            i += 21;
            continue;
        }
        if (!s[i] || s[i] == '<' || s[i] == '(' || s[i] == ' ')
            return i;
        i++;
    }
}

static int same_kernel(const char *a, const char *b)
{
    const char *sa, *sb;
    size_t na = kernel_base(a, &sa), nb = kernel_base(b, &sb);
    return na == nb && memcmp(sa, sb, na) == 0;
}

/* Row index of each (op, tpcs index) of group g in t: idx[op * g->n_tpcs + k],
 * SIZE_MAX where the op has no row at that count. */
static int group_rows(const ps_ops_t *t, const psi_op_group_t *g, size_t **out)
{
    size_t n = (size_t)g->n_ops * (size_t)g->n_tpcs;
    size_t *idx = psi_malloc(sizeof *idx * (n ? n : 1));
    if (!idx)
        return PS_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        idx[i] = SIZE_MAX;
    for (size_t i = 0; i < t->n; i++) {
        const psi_op_row_t *r = &t->rows[i];
        if (r->batch != g->batch || strcmp(r->gpu, g->gpu) || strcmp(r->model, g->model))
            continue;
        int k = psi_group_tpcs_index(g, r->tpcs);
        if (k >= 0 && r->op >= 0 && r->op < g->n_ops)
            idx[(size_t)r->op * (size_t)g->n_tpcs + (size_t)k] = i;
    }
    *out = idx;
    return PS_OK;
}

static void fill_counter(double *dst, double src, size_t *filled)
{
    if (isnan(*dst) && !isnan(src)) {
        *dst = src;
        (*filled)++;
    }
}

/* Every group of more that base has too profiles the same kernels: a merge
 * checks this before changing anything. */
static int check_sequences(const ps_ops_t *base, const ps_ops_t *more)
{
    for (size_t gi = 0; gi < more->n_groups; gi++) {
        const psi_op_group_t *m = &more->groups[gi];
        const psi_op_group_t *b = psi_ops_find(base, m->gpu, m->model, m->batch);
        if (!b)
            continue;
        int n = b->n_ops < m->n_ops ? b->n_ops : m->n_ops;
        int op = 0;
        while (op < n && same_kernel(b->names[op], m->names[op]))
            op++;
        if (op == n && b->n_ops == m->n_ops)
            continue;
        if (op < n)
            return psi_error(PS_E_MISMATCH,
                             "%s batch %d on %s: the kernel sequences differ at op %d: "
                             "'%.60s' there, '%.60s' in the import (%d and %d operators; import the "
                             "same run and stream, or give another --model)",
                             m->model, m->batch, m->gpu, op, b->names[op], m->names[op], b->n_ops, m->n_ops);
        return psi_error(PS_E_MISMATCH,
                         "%s batch %d on %s: %d operators there, %d in the import: "
                         "the first %d match (import the same run and stream, or give another "
                         "--model)",
                         m->model, m->batch, m->gpu, b->n_ops, m->n_ops, n);
    }
    return PS_OK;
}

/* The empty counters (and intensity) of dst from src: the number filled. */
static size_t fill_row(psi_op_row_t *dst, const psi_op_row_t *src)
{
    size_t n = 0;
    psi_counters_t *c = &dst->c;
    const psi_counters_t *s = &src->c;
    fill_counter(&c->dram_bytes, s->dram_bytes, &n);
    fill_counter(&c->l2_bytes, s->l2_bytes, &n);
    fill_counter(&c->stall_long_scoreboard, s->stall_long_scoreboard, &n);
    fill_counter(&c->stall_lg_throttle, s->stall_lg_throttle, &n);
    fill_counter(&c->stall_mio_throttle, s->stall_mio_throttle, &n);
    fill_counter(&c->sm_pct, s->sm_pct, &n);
    fill_counter(&c->mem_pct, s->mem_pct, &n);
    if (dst->intensity == PS_INTENSITY_NONE && src->intensity != PS_INTENSITY_NONE) {
        dst->intensity = src->intensity;
        n++;
    }
    return n;
}

/* The rows of group m of more into t (a copy of base): a row base lacks is
 * added; one it has keeps its values and gets its empty counters filled. */
static int merge_group(ps_ops_t *t, const ps_ops_t *base, const ps_ops_t *more, const psi_op_group_t *m,
                       size_t *n_added, size_t *n_filled)
{
    const psi_op_group_t *b = psi_ops_find(base, m->gpu, m->model, m->batch);
    size_t *idx = NULL;
    int rc = b ? group_rows(base, b, &idx) : PS_OK;
    for (size_t i = 0; i < more->n && rc == PS_OK; i++) {
        const psi_op_row_t *r = &more->rows[i];
        if (r->batch != m->batch || strcmp(r->gpu, m->gpu) || strcmp(r->model, m->model))
            continue;
        int k = b ? psi_group_tpcs_index(b, r->tpcs) : -1;
        size_t at = k >= 0 ? idx[(size_t)r->op * (size_t)b->n_tpcs + (size_t)k] : SIZE_MAX;
        if (at == SIZE_MAX) {
            rc = ps_ops_append(t, r);
            (*n_added)++;
        } else if (fill_row(&t->rows[at], r) > 0) {
            (*n_filled)++;
        }
    }
    free(idx);
    return rc;
}

int ps_ops_merge(const ps_ops_t *base, const ps_ops_t *more, ps_ops_t **out, size_t *added, size_t *filled)
{
    *out = NULL;
    size_t n_added = 0, n_filled = 0;
    ps_ops_t *t = ps_ops_new();
    if (!t)
        return PS_E_NOMEM;
    int rc = PS_OK;
    for (size_t i = 0; i < base->n && rc == PS_OK; i++)
        rc = ps_ops_append(t, &base->rows[i]);
    if (rc == PS_OK)
        rc = check_sequences(base, more);
    for (size_t gi = 0; gi < more->n_groups && rc == PS_OK; gi++)
        rc = merge_group(t, base, more, &more->groups[gi], &n_added, &n_filled);
    if (rc == PS_OK)
        rc = psi_ops_index(t);
    if (rc != PS_OK) {
        ps_ops_free(t);
        return rc;
    }
    if (added)
        *added = n_added;
    if (filled)
        *filled = n_filled;
    *out = t;
    return PS_OK;
}
