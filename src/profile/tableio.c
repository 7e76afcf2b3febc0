/*
 * Reading and writing the tables of FORMATS.md, driven by their schemas: one
 * loader and one saver serve all five. The loader streams the file through
 * the tokenizer, matches columns by name, checks every cell and then the
 * table-level rules, and keeps nothing when anything is wrong.
 */
#include "common/common.h"
#include "profile/gpu.h"
#include "profile/profile_internal.h"
#include "profile/tables.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Any row of any table, so that the loader can fill one on the stack. */
typedef union {
    psi_op_row_t op;
    psi_coexec_row_t cx;
    psi_workload_row_t wl;
    psi_scaling_row_t sc;
    psi_colocation_row_t co;
} any_row_t;

static const ps_table_kind_t all_kinds[] = {PS_TABLE_OPS, PS_TABLE_COEXEC, PS_TABLE_WORKLOADS, PS_TABLE_SCALING,
                                            PS_TABLE_COLOCATIONS};

/* ---- cells ---- */

static int parse_int(const char *s, int *out)
{
    const char *p = s;
    int neg = 0;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    if (!*p)
        return -1;
    long long v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
        if (v > (long long)INT_MAX + 1)
            return -2;
    }
    v = neg ? -v : v;
    if (v > INT_MAX || v < INT_MIN)
        return -2;
    *out = (int)v;
    return 0;
}

/* Clinger's fast path: a plain decimal with at most 15 significant digits
 * and at most 22 after the point is m / 10^k with both exact doubles, so one
 * correctly rounded division gives exactly what strtod gives. Returns 0 when
 * the text needs the general path. */
static int fast_decimal(const char *s, double *out)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *p = s;
    int neg = 0, digits = 0, frac = 0, any = 0, point = 0;
    uint64_t m = 0;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    for (;; p++) {
        if (*p >= '0' && *p <= '9') {
            if (m || *p != '0')
                digits++;
            m = m * 10 + (uint64_t)(*p - '0');
            frac += point;
            any = 1;
            if (digits > 15 || frac > 22)
                return 0;
        } else if (*p == '.' && !point) {
            point = 1;
        } else {
            break;
        }
    }
    if (!any || *p)
        return 0;
    double v = (double)m / pow10[frac];
    *out = neg ? -v : v;
    return 1;
}

/* A decimal number in the C locale; NaN, infinities and hex are refused. */
int psi_parse_double(const char *s, double *out, const char **why)
{
    if (fast_decimal(s, out))
        return 0;
    if (!*s) {
        *why = "not a number";
        return -1;
    }
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '+' || *p == 'e' || *p == 'E')) {
            const char *q = *s == '-' || *s == '+' ? s + 1 : s;
            if (strcasecmp(q, "nan") == 0)
                *why = "NaN is not allowed";
            else if (strcasecmp(q, "inf") == 0 || strcasecmp(q, "infinity") == 0)
                *why = "infinity is not allowed";
            else
                *why = "not a number";
            return -1;
        }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || end == s) {
        *why = "not a number";
        return -1;
    }
    if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1)) {
        *why = "out of range";
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_intensity(const char *s, psi_intensity_t *out)
{
    if (strcmp(s, "compute") == 0)
        *out = PS_INTENSITY_COMPUTE;
    else if (strcmp(s, "memory") == 0)
        *out = PS_INTENSITY_MEMORY;
    else if (strcmp(s, "unknown") == 0)
        *out = PS_INTENSITY_UNKNOWN;
    else
        return -1;
    return 0;
}

/* Parse cell s of column c into the row; on error write a message (without
 * position) to msg. Text is borrowed from the tokenizer (append interns it). */
static int parse_cell(const psi_column_t *c, const char *s, void *row, char *msg, size_t n)
{
    void *f = (char *)row + c->offset;
    const char *why = "not a number";
    if (!*s) {
        if (c->optional)
            return PS_OK; /* the default (NULL, NAN, NONE) is already there */
        snprintf(msg, n, "%s: missing value", c->name);
        return PS_E_INPUT;
    }
    switch (c->type) {
    case PS_COL_TEXT: *(const char **)f = s; return PS_OK;
    case PS_COL_INTENSITY:
        if (parse_intensity(s, f) == 0)
            return PS_OK;
        why = "expected compute, memory, unknown or an empty cell";
        break;
    case PS_COL_INT: {
        int r = parse_int(s, f);
        if (r == 0)
            return PS_OK;
        why = r == -2 ? "integer out of range" : "not an integer";
        break;
    }
    case PS_COL_FLOAT:
        if (psi_parse_double(s, f, &why) == 0)
            return PS_OK;
        break;
    }
    /* The cell is shown cut to 40 bytes. */
    snprintf(msg, n, "%s: '%.40s%s': %s", c->name, s, strlen(s) > 40 ? "..." : "", why);
    return PS_E_INPUT;
}

static void row_defaults(const psi_schema_t *s, void *row)
{
    memset(row, 0, s->row_size);
    for (size_t i = 0; i < s->ncols; i++) {
        void *f = (char *)row + s->cols[i].offset;
        if (s->cols[i].type == PS_COL_FLOAT)
            *(double *)f = NAN;
        else if (s->cols[i].type == PS_COL_INTENSITY)
            *(psi_intensity_t *)f = PS_INTENSITY_NONE;
    }
}

/* ---- header ---- */

/* Columns of the widest table schema, with room to spare. */
#define MAX_COLS 32

static int required_present(psi_csv_t *csv, const psi_schema_t *s, const char **missing)
{
    int k = 0;
    *missing = NULL;
    for (size_t i = 0; i < s->ncols; i++) {
        if (s->cols[i].optional)
            continue;
        if (psi_csv_find(csv, s->cols[i].name) >= 0)
            k++;
        else if (!*missing)
            *missing = s->cols[i].name;
    }
    return k;
}

/* The table whose required columns are all in the header; when several
 * are, the one that needs the most (colocations over workload_scaling). */
static int detect_kind(psi_csv_t *csv, ps_table_kind_t *kind)
{
    const psi_schema_t *best = NULL, *near = NULL;
    int best_k = -1, near_k = 0;
    const char *near_missing = NULL;
    for (size_t i = 0; i < PS_ARRAY_LEN(all_kinds); i++) {
        const psi_schema_t *s = psi_schema_get(all_kinds[i]);
        const char *missing;
        int k = required_present(csv, s, &missing);
        if (!missing && k > best_k) {
            best = s;
            best_k = k;
        } else if (missing && k > near_k) {
            near = s;
            near_k = k;
            near_missing = missing;
        }
    }
    if (best) {
        *kind = best->kind;
        return PS_OK;
    }
    if (near && near_k >= 2)
        return psi_error(PS_E_INPUT,
                         "%s:%zu:1: missing required column '%s' (the header looks like "
                         "table %s)",
                         psi_csv_path(csv), psi_csv_line(csv), near_missing, near->name);
    return psi_error(PS_E_INPUT,
                     "%s:%zu:1: unknown table: the header matches none of ops, coexec, "
                     "workloads, workload_scaling, colocations%s",
                     psi_csv_path(csv), psi_csv_line(csv), psi_csv_separator_hint(csv));
}

/* A required column is absent. When the header is another table's, say so:
 * two files given in each other's place (--ops with a coexec.csv) is the
 * common cause. */
static int missing_column(psi_csv_t *csv, const psi_schema_t *s, const char *col)
{
    ps_table_kind_t other;
    if (detect_kind(csv, &other) == PS_OK && other != s->kind)
        return psi_error(PS_E_INPUT,
                         "%s:%zu:1: this is a %s table, not %s (missing column '%s'): were two files "
                         "given in each other's place?",
                         psi_csv_path(csv), psi_csv_line(csv), ps_table_name(other), s->name, col);
    char what[64];
    snprintf(what, sizeof what, "table %s", s->name);
    return psi_csv_missing(csv, col, what);
}

/* Map the schema's columns to header fields (-1 = absent) through the one
 * header matcher (psi_csv_match_header). */
static int map_header(psi_csv_t *csv, const psi_schema_t *s, int *idx)
{
    const char *names[MAX_COLS];
    int optional[MAX_COLS], missing;
    if (s->ncols > MAX_COLS)
        return psi_error(PS_E_ARG, "table %s: %zu columns, at most %d", s->name, s->ncols, MAX_COLS);
    for (size_t c = 0; c < s->ncols; c++) {
        names[c] = s->cols[c].name;
        optional[c] = s->cols[c].optional;
    }
    int rc = psi_csv_match_header(csv, names, optional, s->ncols, idx, &missing);
    if (rc == PS_OK && missing >= 0)
        rc = missing_column(csv, s, names[missing]);
    return rc;
}

/* ---- loading ---- */

/* The header field (0-based) of the schema column named name. */
static int field_of(const psi_schema_t *s, const int *idx, const char *name)
{
    for (size_t c = 0; c < s->ncols; c++)
        if (strcmp(s->cols[c].name, name) == 0)
            return idx[c];
    return -1;
}

/* The current record of csv into row: every cell parsed, then the row's own
 * rules; errors name path:line:column. */
static int read_row(psi_csv_t *csv, const psi_schema_t *s, const int *idx, any_row_t *row)
{
    const char *path = psi_csv_path(csv);
    char msg[300];
    row_defaults(s, row);
    for (size_t c = 0; c < s->ncols; c++) {
        if (idx[c] < 0)
            continue;
        if (parse_cell(&s->cols[c], psi_csv_field(csv, idx[c]), row, msg, sizeof msg) != PS_OK)
            return psi_error(PS_E_INPUT, "%s:%zu:%d: %s", path, psi_csv_field_line(csv, idx[c]), idx[c] + 1, msg);
    }
    psi_rowerr_t e;
    if (psi_schema_check_row(s, row, &e) != PS_OK) {
        int f = field_of(s, idx, e.column);
        return psi_error(PS_E_INPUT, "%s:%zu:%d: %s", path, f >= 0 ? psi_csv_field_line(csv, f) : psi_csv_line(csv),
                         f + 1, e.msg);
    }
    return PS_OK;
}

/* How a file's header lays out schema s: its column c is field idx[c] (-1
 * where absent) of the nfields of every record. */
typedef struct {
    const psi_schema_t *s;
    int idx[MAX_COLS];
    int nfields;
} layout_t;

/* The current record, with as many fields as the header, into row as
 * read_row does. */
static int read_record(psi_csv_t *csv, const layout_t *lay, any_row_t *row)
{
    int nfields = lay->nfields;
    if (psi_csv_nfields(csv) != nfields)
        return psi_error(PS_E_INPUT, "%s:%zu:%d: expected %d fields as in the header, found %d", psi_csv_path(csv),
                         psi_csv_line(csv), psi_csv_nfields(csv) < nfields ? psi_csv_nfields(csv) + 1 : nfields + 1,
                         nfields, psi_csv_nfields(csv));
    return read_row(csv, lay->s, lay->idx, row);
}

static int load_csv(psi_csv_t *csv, ps_table_kind_t kind, ps_table_kind_t *kind_out, void **out)
{
    *out = NULL;
    const char *path = psi_csv_path(csv);
    int rc = psi_csv_next(csv);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return psi_error(PS_E_INPUT, "%s:1:1: empty file: no header", path);
    if (kind == PS_TABLE_UNKNOWN && (rc = detect_kind(csv, &kind)) != PS_OK)
        return rc;
    const psi_schema_t *s = psi_schema_get(kind);
    if (!s)
        return psi_error(PS_E_ARG, "unknown table kind %d", (int)kind);
    if (kind_out)
        *kind_out = kind;
    layout_t lay = {.s = s};
    if ((rc = map_header(csv, s, lay.idx)) != PS_OK)
        return rc;
    lay.nfields = psi_csv_nfields(csv);
    size_t header_line = psi_csv_line(csv);

    void *t = s->create();
    size_t *lines = NULL, n = 0, cap = 0;
    if (!t)
        return PS_E_NOMEM;
    any_row_t row;
    while ((rc = psi_csv_next(csv)) == 1) {
        size_t line = psi_csv_line(csv);
        if ((rc = read_record(csv, &lay, &row)) != PS_OK)
            goto fail;
        void *p = lines;
        rc = psi_array_grow(&p, n, &cap, sizeof *lines, 1024);
        lines = p;
        if (rc != PS_OK)
            goto fail;
        lines[n++] = line;
        if ((rc = s->append(t, &row)) != PS_OK)
            goto fail;
    }
    if (rc < 0)
        goto fail;
    if (n == 0) {
        rc = psi_error(PS_E_INPUT, "%s:%zu:1: header only: no data rows", path, header_line + 1);
        goto fail;
    }
    psi_rowerr_t e;
    if ((rc = s->validate(t, &e)) != PS_OK) {
        if (rc == PS_E_INPUT) {
            int col = field_of(s, lay.idx, e.column);
            if (e.other != SIZE_MAX)
                psi_error(rc, "%s:%zu:%d: %s (first at line %zu)", path, lines[e.row], col + 1, e.msg, lines[e.other]);
            else
                psi_error(rc, "%s:%zu:%d: %s", path, lines[e.row], col + 1, e.msg);
        }
        goto fail;
    }
    free(lines);
    *out = t;
    return PS_OK;
fail:
    free(lines);
    s->destroy(t);
    return rc;
}

static int load_path(const char *path, ps_table_kind_t kind, ps_table_kind_t *kind_out, void **out)
{
    *out = NULL;
    psi_csv_t *csv = NULL;
    int rc = psi_csv_open(path, &csv);
    if (rc == PS_OK)
        rc = psi_table_load_csv(csv, kind, kind_out, out);
    psi_csv_close(csv);
    return rc;
}

/* ps_ops_load, ps_coexec_load, ps_workloads_load, ps_scaling_load and
 * ps_colocations_load. */
#define LOADER(T, stem, kind)                                                                                          \
    int ps_##stem##_load(const char *path, T **out)                                                                    \
    {                                                                                                                  \
        void *t = NULL;                                                                                                \
        int rc = load_path(path, kind, NULL, &t);                                                                      \
        *out = t;                                                                                                      \
        return rc;                                                                                                     \
    }

PSI_TABLE_KINDS(LOADER)

/* ---- checking: coexec.csv streamed, against ops.csv where given ---- */

/* A growable open-addressing map from a key (two pooled pointers and an
 * int, compared by value) to an index into the caller's array. */
typedef struct {
    const void *a, *b;
    int c;
    size_t idx; /* SIZE_MAX = empty */
} slot_t;
typedef struct {
    slot_t *s;
    size_t mask, n;
} pmap_t;

static uint64_t pmap_hash(const void *a, const void *b, int c)
{
    return psi_hash_final(psi_hash_mix(psi_hash_ptr(psi_hash_ptr(0, a), b), (uint64_t)(unsigned)c));
}

/* The index stored under (a, b, c), or, when absent, idx is stored and
 * SIZE_MAX returned; *rc is PS_E_NOMEM when the map could not grow. */
static size_t pmap_get_or_put(pmap_t *m, const void *a, const void *b, int c, size_t idx, int *rc)
{
    if (2 * (m->n + 1) > m->mask + 1) {
        size_t cap = m->mask ? 2 * (m->mask + 1) : 1024;
        slot_t *ns = psi_malloc(cap * sizeof *ns);
        if (!ns) {
            *rc = PS_E_NOMEM;
            return SIZE_MAX;
        }
        for (size_t i = 0; i < cap; i++)
            ns[i].idx = SIZE_MAX;
        for (size_t i = 0; m->s && i <= m->mask; i++) {
            if (m->s[i].idx == SIZE_MAX)
                continue;
            size_t j = pmap_hash(m->s[i].a, m->s[i].b, m->s[i].c) & (cap - 1);
            while (ns[j].idx != SIZE_MAX)
                j = (j + 1) & (cap - 1);
            ns[j] = m->s[i];
        }
        free(m->s);
        m->s = ns;
        m->mask = cap - 1;
    }
    size_t j = pmap_hash(a, b, c) & m->mask;
    for (; m->s[j].idx != SIZE_MAX; j = (j + 1) & m->mask)
        if (m->s[j].a == a && m->s[j].b == b && m->s[j].c == c)
            return m->s[j].idx;
    m->s[j] = (slot_t){a, b, c, idx};
    m->n++;
    return SIZE_MAX;
}

/* The first row of each experiment, in 24 bytes: a hash of the experiment
 * name, a hash of the key columns that every row of the experiment shares,
 * and its line. The row itself is read again from the file only when a
 * later row's key hash differs, to name the column at fault. */
typedef struct {
    uint64_t name, key;
    size_t line; /* 0 = empty slot */
} first_row_t;

/* The key columns' hash; gpu and model names are pooled, so their
 * pointers stand for them. */
static uint64_t key_hash(const psi_coexec_row_t *r)
{
    uint64_t h = psi_hash_ptr(psi_hash_ptr(psi_hash_ptr(0, r->gpu), r->hp_model), r->lp_model);
    const int v[] = {r->hp_batch, r->hp_start, r->hp_len, r->lp_batch, r->lp_start, r->lp_len, r->hp_tpcs, r->lp_tpcs};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        h = psi_hash_mix(h, (uint64_t)(unsigned)v[i]);
    return psi_hash_final(h);
}

/* An open-addressing set of first rows keyed by the name hash, at most
 * three quarters full; the stream keeps FIRST_SHARDS of them, chosen by the
 * hash's top byte, so that growing one copies a small part of the whole
 * (peak memory stays near the live slots, 24 bytes / 0.375..0.75). */
typedef struct {
    first_row_t *s;
    size_t mask, n;
} first_set_t;
enum { FIRST_SHARDS = 256 };

/* The first row of the experiment whose name hashes to name, or, when
 * absent, (name, key, line) is stored and NULL returned; *rc is PS_E_NOMEM
 * when the set could not grow. */
static const first_row_t *first_get_or_put(first_set_t *m, uint64_t name, uint64_t key, size_t line, int *rc)
{
    if (4 * (m->n + 1) > 3 * (m->mask + 1)) {
        size_t cap = m->mask ? 2 * (m->mask + 1) : 16;
        first_row_t *ns = psi_calloc(cap, sizeof *ns);
        if (!ns) {
            *rc = PS_E_NOMEM;
            return NULL;
        }
        for (size_t i = 0; m->s && i <= m->mask; i++) {
            if (!m->s[i].line)
                continue;
            size_t j = m->s[i].name & (cap - 1);
            while (ns[j].line)
                j = (j + 1) & (cap - 1);
            ns[j] = m->s[i];
        }
        free(m->s);
        m->s = ns;
        m->mask = cap - 1;
    }
    size_t j = name & m->mask;
    for (; m->s[j].line; j = (j + 1) & m->mask)
        if (m->s[j].name == name)
            return &m->s[j];
    m->s[j] = (first_row_t){name, key, line};
    m->n++;
    return NULL;
}

/* One side of row r against ops: its profile exists, the segment lies
 * inside it and the TPC count was profiled. Returns the column at fault
 * and the message in msg, or NULL. */
static const char *side_vs_ops(const ps_ops_t *const *ops, int n_ops, const psi_coexec_row_t *r, int lp, char *msg,
                               size_t n)
{
    const char *model = lp ? r->lp_model : r->hp_model;
    int batch = lp ? r->lp_batch : r->hp_batch, start = lp ? r->lp_start : r->hp_start,
        len = lp ? r->lp_len : r->hp_len, tpcs = lp ? r->lp_tpcs : r->hp_tpcs;
    /* The profile of the model in one of the ops files, preferring one that
     * has the row's TPC count (a campaign and its long-segment campaign
     * profile one model at other counts). */
    const psi_op_group_t *g = NULL;
    for (int i = 0; i < n_ops; i++) {
        const psi_op_group_t *h = psi_ops_find(ops[i], r->gpu, model, batch);
        if (h && (!g || (psi_group_tpcs_index(g, tpcs) < 0 && psi_group_tpcs_index(h, tpcs) >= 0)))
            g = h;
    }
    if (!g) {
        snprintf(msg, n, "%s_model: no profile of %s batch %d on %s in the ops file", lp ? "lp" : "hp", model, batch,
                 r->gpu);
        return lp ? "lp_model" : "hp_model";
    }
    if (!segment_fits(start, len, g->n_ops)) {
        const char *col = start >= 0 && start < g->n_ops ? (lp ? "lp_len" : "hp_len") : (lp ? "lp_start" : "hp_start");
        snprintf(msg, n, "%s: segment [%d, %lld) is outside the %d operators of %s batch %d", col, start,
                 (long long)start + len, g->n_ops, model, batch);
        return col;
    }
    if (psi_group_tpcs_index(g, tpcs) < 0) {
        snprintf(msg, n, "%s_tpcs: %s batch %d has no standalone profile at %d TPCs", lp ? "lp" : "hp", model, batch,
                 tpcs);
        return lp ? "lp_tpcs" : "hp_tpcs";
    }
    return NULL;
}

/* The column at fault in a coexec row that passed its own rules (the GPU's
 * TPCs, then each side against the ops files), with the message in msg;
 * NULL when the row is sound. */
static const char *coexec_row_fault(const psi_coexec_row_t *r, const ps_ops_t *const *ops, int n_ops, char *msg,
                                    size_t n)
{
    const psi_gpu_t *g = psi_gpu_find(r->gpu);
    if (g && (long)r->hp_tpcs + r->lp_tpcs > g->tpcs) {
        snprintf(msg, n, "lp_tpcs: hp_tpcs + lp_tpcs = %ld exceeds the %d TPCs of %s", (long)r->hp_tpcs + r->lp_tpcs,
                 g->tpcs, r->gpu);
        return "lp_tpcs";
    }
    const char *col = NULL;
    for (int lp = 0; n_ops > 0 && !col && lp < 2; lp++)
        col = side_vs_ops(ops, n_ops, r, lp, msg, n);
    return col;
}

/* What the stream keeps: the first row of each experiment (as hashes) and
 * the distinct sides, with their names pooled. */
typedef struct {
    psi_strpool_t *pool;
    pmap_t sides;
    first_set_t exps[FIRST_SHARDS];
} coexec_seen_t;

/* The row at line of the file at path (the first row of an experiment,
 * read again to compare its columns), into row; its strings are pooled. */
static int reread_row(const char *path, const layout_t *lay, size_t line, psi_strpool_t *pool, psi_coexec_row_t *row)
{
    psi_csv_t *csv = NULL;
    int rc = psi_csv_open(path, &csv);
    while (rc >= 0 && (rc = psi_csv_next(csv)) == 1 && psi_csv_line(csv) < line)
        ;
    any_row_t r;
    if (rc == 1 && psi_csv_line(csv) == line && (rc = read_record(csv, lay, &r)) == PS_OK) {
        *row = r.cx;
        if (!(row->experiment = psi_strpool_intern(pool, r.cx.experiment)) ||
            !(row->gpu = psi_strpool_intern(pool, r.cx.gpu)) ||
            !(row->hp_model = psi_strpool_intern(pool, r.cx.hp_model)) ||
            !(row->lp_model = psi_strpool_intern(pool, r.cx.lp_model)))
            rc = PS_E_NOMEM;
    } else if (rc >= 0) {
        rc = psi_error(PS_E_IO, "%s: changed while it was checked (line %zu is gone)", path, line);
    }
    psi_csv_close(csv);
    return rc;
}

/* Row r differs by its key hash from the first row of its experiment, at
 * line first: read that row again and name the column at fault. Two
 * experiment names with one hash (about 1 in 10^6 for millions of
 * experiments) are not an error. */
static int key_mismatch(psi_csv_t *csv, const layout_t *lay, coexec_seen_t *seen, const psi_coexec_row_t *r,
                        size_t line, size_t first)
{
    psi_coexec_row_t f;
    int rc = reread_row(psi_csv_path(csv), lay, first, seen->pool, &f);
    if (rc != PS_OK)
        return rc;
    const char *col = psi_coexec_key_diff(&f, r);
    if (strcmp(f.experiment, r->experiment) != 0 || !col)
        return PS_OK;
    return psi_error(PS_E_INPUT,
                     "%s:%zu:%d: %s: differs from an earlier row of experiment '%s' (rows of one experiment "
                     "share gpu, models, batches, segments and TPCs) (first at line %zu)",
                     psi_csv_path(csv), line, field_of(lay->s, lay->idx, col) + 1, col, r->experiment, first);
}

/* Row r (at line) against the first row of its experiment, which it becomes
 * when it is the first; its sides are counted. */
static int coexec_note_row(coexec_seen_t *seen, psi_csv_t *csv, const layout_t *lay, psi_coexec_row_t *r, size_t line)
{
    /* Pool the names that the key hash stands for; the experiment's own
     * name is kept only as a hash. */
    if (!(r->gpu = psi_strpool_intern(seen->pool, r->gpu)) ||
        !(r->hp_model = psi_strpool_intern(seen->pool, r->hp_model)) ||
        !(r->lp_model = psi_strpool_intern(seen->pool, r->lp_model)))
        return PS_E_NOMEM;
    r->mechanism = NULL;
    int rc = PS_OK;
    uint64_t key = key_hash(r), name = psi_hash_bytes(r->experiment, strlen(r->experiment));
    const first_row_t *first = first_get_or_put(&seen->exps[name >> 56], name, key, line, &rc);
    if (rc != PS_OK)
        return rc;
    if (first && first->key != key && (rc = key_mismatch(csv, lay, seen, r, line, first->line)) != PS_OK)
        return rc;
    for (int lp = 0; lp < 2 && rc == PS_OK; lp++)
        pmap_get_or_put(&seen->sides, r->gpu, lp ? r->lp_model : r->hp_model, lp ? r->lp_batch : r->hp_batch,
                        seen->sides.n, &rc);
    return rc;
}

/* Validate coexec rows as psi_table_load_csv and psi_coexec_validate do, but
 * holding about 48 bytes per experiment (for the experiment rule) and the
 * distinct sides (for the count), not every row: a 1 GB file is checked in
 * a fraction of its size. */
static int check_coexec_stream(psi_csv_t *csv, const layout_t *lay, const ps_ops_t *const *ops, int n_ops,
                               ps_check_result_t *out)
{
    const char *path = psi_csv_path(csv);
    size_t header_line = psi_csv_line(csv);
    coexec_seen_t seen = {.pool = psi_strpool_new()};
    size_t rows = 0;
    char msg[sizeof(((psi_rowerr_t *)0)->msg)];
    int rc = seen.pool ? PS_OK : PS_E_NOMEM;
    while (rc == PS_OK && (rc = psi_csv_next(csv)) == 1) {
        size_t line = psi_csv_line(csv);
        any_row_t row;
        if ((rc = read_record(csv, lay, &row)) != PS_OK)
            break;
        const char *col = coexec_row_fault(&row.cx, ops, n_ops, msg, sizeof msg);
        if (col) {
            int f = field_of(lay->s, lay->idx, col);
            rc = psi_error(PS_E_INPUT, "%s:%zu:%d: %s", path, f >= 0 ? psi_csv_field_line(csv, f) : line, f + 1, msg);
            break;
        }
        if ((rc = coexec_note_row(&seen, csv, lay, &row.cx, line)) != PS_OK)
            break;
        rows++;
    }
    if (rc == PS_OK && rows == 0)
        rc = psi_error(PS_E_INPUT, "%s:%zu:1: header only: no data rows", path, header_line + 1);
    if (rc == PS_OK) {
        out->rows = rows;
        out->groups = seen.sides.n;
    }
    for (int i = 0; i < FIRST_SHARDS; i++)
        free(seen.exps[i].s);
    free(seen.sides.s);
    psi_strpool_free(seen.pool);
    return rc;
}

int ps_table_detect(const char *path, ps_table_kind_t *out)
{
    *out = PS_TABLE_UNKNOWN;
    psi_csv_t *csv = NULL;
    int rc = psi_csv_open(path, &csv);
    if (rc == PS_OK && (rc = psi_csv_next(csv)) == 0)
        rc = psi_error(PS_E_INPUT, "%s:1:1: empty file: no header", path);
    if (rc > 0)
        rc = detect_kind(csv, out);
    psi_csv_close(csv);
    return rc < 0 ? rc : PS_OK;
}

int ps_table_check_with(const char *path, const ps_ops_t *const *ops, int n_ops, ps_check_result_t *out)
{
    memset(out, 0, sizeof *out);
    psi_csv_t *csv = NULL;
    int rc = psi_csv_open(path, &csv);
    if (rc != PS_OK)
        return rc;
    ps_table_kind_t kind = PS_TABLE_UNKNOWN;
    if ((rc = psi_csv_next(csv)) <= 0) {
        if (rc == 0)
            rc = psi_error(PS_E_INPUT, "%s:1:1: empty file: no header", path);
        goto done;
    }
    if ((rc = detect_kind(csv, &kind)) != PS_OK)
        goto done;
    out->kind = kind;
    const psi_schema_t *s = psi_schema_get(kind);
    if (kind == PS_TABLE_COEXEC) {
        layout_t lay = {.s = s, .nfields = psi_csv_nfields(csv)};
        if ((rc = map_header(csv, s, lay.idx)) == PS_OK)
            rc = check_coexec_stream(csv, &lay, ops, n_ops, out);
        goto done;
    }
    /* The other tables are small: load whole, from the top. */
    psi_csv_close(csv);
    csv = NULL;
    void *t = NULL;
    if ((rc = load_path(path, kind, NULL, &t)) == PS_OK) {
        s->rows(t, &out->rows);
        out->groups = s->groups(t);
        s->destroy(t);
    }
done:
    psi_csv_close(csv);
    if (rc != PS_OK)
        out->kind = PS_TABLE_UNKNOWN;
    return rc;
}

int ps_table_check(const char *path, ps_check_result_t *out) { return ps_table_check_with(path, NULL, 0, out); }

/* ---- saving ---- */

/* The shortest of %.15g..%.17g that reads back as the same double. */
static void put_double(FILE *f, double v)
{
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (prec == 17 || strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, f);
}

/* Whether column c holds a value in any row (optional columns that are empty
 * everywhere are left out of the file). */
static int column_used(const psi_column_t *c, const char *rows, size_t n, size_t sz)
{
    if (!c->optional)
        return 1;
    for (size_t i = 0; i < n; i++) {
        const void *f = rows + i * sz + c->offset;
        if ((c->type == PS_COL_TEXT && *(const char *const *)f) ||
            (c->type == PS_COL_FLOAT && !isnan(*(const double *)f)) ||
            (c->type == PS_COL_INTENSITY && *(const psi_intensity_t *)f != PS_INTENSITY_NONE))
            return 1;
    }
    return 0;
}

static void put_cell(FILE *f, const psi_column_t *c, const void *row)
{
    const void *v = (const char *)row + c->offset;
    switch (c->type) {
    case PS_COL_TEXT: psi_csv_put_field(f, *(const char *const *)v); break;
    case PS_COL_INT: fprintf(f, "%d", *(const int *)v); break;
    case PS_COL_FLOAT:
        if (!isnan(*(const double *)v))
            put_double(f, *(const double *)v);
        break;
    case PS_COL_INTENSITY: {
        static const char *const names[] = {"unknown", "compute", "memory"};
        int k = (int)*(const psi_intensity_t *)v;
        if (k >= 0 && k <= 2)
            fputs(names[k], f);
        break;
    }
    }
}

static int save_any(const psi_schema_t *s, const void *t, const char *path)
{
    if (!t || !path)
        return psi_error(PS_E_ARG, "save: NULL table or path");
    size_t n;
    const char *rows = s->rows(t, &n);
    int used[32], first = 1;
    psi_atomic_t *a = NULL;
    int rc = psi_atomic_open(path, &a);
    if (rc != PS_OK)
        return rc;
    FILE *f = psi_atomic_stream(a);
    for (size_t c = 0; c < s->ncols; c++) {
        used[c] = column_used(&s->cols[c], rows, n, s->row_size);
        if (used[c]) {
            fprintf(f, "%s%s", first ? "" : ",", s->cols[c].name);
            first = 0;
        }
    }
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        const void *row = rows + i * s->row_size;
        first = 1;
        for (size_t c = 0; c < s->ncols; c++) {
            if (!used[c])
                continue;
            if (!first)
                fputc(',', f);
            first = 0;
            put_cell(f, &s->cols[c], row);
        }
        fputc('\n', f);
    }
    return psi_atomic_commit(a);
}

int ps_ops_save(const ps_ops_t *t, const char *path)
{
    return psi_table_save_any(psi_schema_get(PS_TABLE_OPS), t, path);
}
int ps_coexec_save(const ps_coexec_t *t, const char *path)
{
    return psi_table_save_any(psi_schema_get(PS_TABLE_COEXEC), t, path);
}
int ps_workloads_save(const ps_workloads_t *t, const char *path)
{
    return psi_table_save_any(psi_schema_get(PS_TABLE_WORKLOADS), t, path);
}
int ps_scaling_save(const ps_scaling_t *t, const char *path)
{
    return psi_table_save_any(psi_schema_get(PS_TABLE_SCALING), t, path);
}
int ps_colocations_save(const ps_colocations_t *t, const char *path)
{
    return psi_table_save_any(psi_schema_get(PS_TABLE_COLOCATIONS), t, path);
}

int psi_table_load_csv(psi_csv_t *csv, ps_table_kind_t kind, ps_table_kind_t *kind_out, void **out)
{
    locale_t old = psi_c_numeric_begin();
    int rc = load_csv(csv, kind, kind_out, out);
    psi_c_numeric_end(old);
    return rc;
}

int psi_table_save_any(const psi_schema_t *s, const void *t, const char *path)
{
    locale_t old = psi_c_numeric_begin();
    int rc = save_any(s, t, path);
    psi_c_numeric_end(old);
    return rc;
}
