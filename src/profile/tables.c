/*
 * The five tables of FORMATS.md in memory: creation, appending, freeing, the
 * column schemas, and the table-level rules (unique keys, operator indices
 * without gaps, experiments and co-locations that agree with themselves).
 */
#include "common/common.h"
#include "profile/gpu.h"
#include "profile/profile_internal.h"

#include <float.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

const char *ps_table_name(ps_table_kind_t kind)
{
    switch (kind) {
    case PS_TABLE_OPS: return "ops";
    case PS_TABLE_COEXEC: return "coexec";
    case PS_TABLE_WORKLOADS: return "workloads";
    case PS_TABLE_SCALING: return "workload_scaling";
    case PS_TABLE_COLOCATIONS: return "colocations";
    default: return "unknown";
    }
}

/* ------------------------------------------------------------------------ */
/* Schemas: FORMATS.md as data                                               */
/* ------------------------------------------------------------------------ */

#define INF DBL_MAX
#define TEXT(st, f)                                                                                                    \
    {                                                                                                                  \
#f, PS_COL_TEXT, 0, 0, 0, 0, offsetof(st, f)                                                                   \
    }
#define OPT_TEXT(st, f)                                                                                                \
    {                                                                                                                  \
#f, PS_COL_TEXT, 1, 0, 0, 0, offsetof(st, f)                                                                   \
    }
/* An int or float in [lo, hi], or (lo, hi] when open. */
#define INT(st, f, lo, hi, open)                                                                                       \
    {                                                                                                                  \
#f, PS_COL_INT, 0, lo, hi, open, offsetof(st, f)                                                               \
    }
#define FLT(st, f, lo, hi, open)                                                                                       \
    {                                                                                                                  \
#f, PS_COL_FLOAT, 0, lo, hi, open, offsetof(st, f)                                                             \
    }
#define OPT_FLT(st, f, lo, hi)                                                                                         \
    {                                                                                                                  \
#f, PS_COL_FLOAT, 1, lo, hi, 0, offsetof(st, f)                                                                \
    }
#define OPT_FLT_POS(st, f)                                                                                             \
    {                                                                                                                  \
#f, PS_COL_FLOAT, 1, 0, INF, 1, offsetof(st, f)                                                                \
    }
#define OPT_CTR(f, lo, hi)                                                                                             \
    {                                                                                                                  \
#f, PS_COL_FLOAT, 1, lo, hi, 0, offsetof(psi_op_row_t, c.f)                                                    \
    }

static const psi_column_t ops_cols[] = {
    TEXT(psi_op_row_t, gpu),
    TEXT(psi_op_row_t, model),
    INT(psi_op_row_t, batch, 0, INT_MAX, 1),
    INT(psi_op_row_t, op, 0, INT_MAX, 0),
    TEXT(psi_op_row_t, name),
    INT(psi_op_row_t, tpcs, 0, INT_MAX, 1),
    FLT(psi_op_row_t, duration_ns, 0, PSI_MAX_OP_NS, 1),
    {"intensity", PS_COL_INTENSITY, 1, 0, 0, 0, offsetof(psi_op_row_t, intensity)},
    OPT_CTR(dram_bytes, 0, INF),
    OPT_CTR(l2_bytes, 0, INF),
    OPT_CTR(stall_long_scoreboard, 0, INF),
    OPT_CTR(stall_lg_throttle, 0, INF),
    OPT_CTR(stall_mio_throttle, 0, INF),
    OPT_CTR(sm_pct, 0, 100),
    OPT_CTR(mem_pct, 0, 100),
    OPT_TEXT(psi_op_row_t, source),
};

static const psi_column_t coexec_cols[] = {
    TEXT(psi_coexec_row_t, experiment),
    TEXT(psi_coexec_row_t, gpu),
    TEXT(psi_coexec_row_t, hp_model),
    INT(psi_coexec_row_t, hp_batch, 0, INT_MAX, 1),
    INT(psi_coexec_row_t, hp_start, 0, INT_MAX, 0),
    INT(psi_coexec_row_t, hp_len, 0, INT_MAX, 1),
    TEXT(psi_coexec_row_t, lp_model),
    INT(psi_coexec_row_t, lp_batch, 0, INT_MAX, 1),
    INT(psi_coexec_row_t, lp_start, 0, INT_MAX, 0),
    INT(psi_coexec_row_t, lp_len, 0, INT_MAX, 1),
    INT(psi_coexec_row_t, hp_tpcs, 0, INT_MAX, 1),
    INT(psi_coexec_row_t, lp_tpcs, 0, INT_MAX, 1),
    FLT(psi_coexec_row_t, hp_ns, 0, INF, 1),
    FLT(psi_coexec_row_t, lp_ns, 0, INF, 1),
    OPT_TEXT(psi_coexec_row_t, mechanism),
};

static const psi_column_t workload_cols[] = {
    TEXT(psi_workload_row_t, gpu),
    TEXT(psi_workload_row_t, workload),
    FLT(psi_workload_row_t, exclusive_tput, 0, INF, 1),
    OPT_FLT(psi_workload_row_t, threads, 0, INF),
    OPT_FLT(psi_workload_row_t, registers, 0, INF),
    OPT_FLT(psi_workload_row_t, static_smem, 0, INF),
    OPT_FLT(psi_workload_row_t, sm_tput_pct, -INF, INF),
    OPT_FLT(psi_workload_row_t, dram_tput_pct, -INF, INF),
    OPT_FLT(psi_workload_row_t, mem_tput_pct, -INF, INF),
    OPT_FLT(psi_workload_row_t, sm_busy_pct, -INF, INF),
    OPT_FLT(psi_workload_row_t, mem_busy_pct, -INF, INF),
    OPT_FLT(psi_workload_row_t, memcap_gb, -INF, INF),
    OPT_FLT(psi_workload_row_t, stall_long_scoreboard, -INF, INF),
    OPT_FLT(psi_workload_row_t, stall_lg_throttle, -INF, INF),
    OPT_FLT(psi_workload_row_t, stall_mio_throttle, -INF, INF),
};

static const psi_column_t scaling_cols[] = {
    TEXT(psi_scaling_row_t, gpu),
    TEXT(psi_scaling_row_t, workload),
    INT(psi_scaling_row_t, share_pct, 0, 100, 1),
    FLT(psi_scaling_row_t, tput, 0, INF, 1),
};

static const psi_column_t colocation_cols[] = {
    TEXT(psi_colocation_row_t, colocation),          TEXT(psi_colocation_row_t, gpu),
    INT(psi_colocation_row_t, slot, 1, INT_MAX, 0),  TEXT(psi_colocation_row_t, workload),
    INT(psi_colocation_row_t, share_pct, 0, 100, 1), OPT_FLT_POS(psi_colocation_row_t, tput),
};

static const char *col_name(const psi_column_t *c) { return c->name; }

int psi_schema_check_row(const psi_schema_t *s, const void *row, psi_rowerr_t *e)
{
    const char *base = row;
    for (size_t i = 0; i < s->ncols; i++) {
        const psi_column_t *c = &s->cols[i];
        const void *f = base + c->offset;
        double v;
        switch (c->type) {
        case PS_COL_TEXT: {
            const char *t = *(const char *const *)f;
            if (!c->optional && (!t || !*t))
                goto empty;
            continue;
        }
        case PS_COL_INTENSITY: {
            int k = (int)*(const psi_intensity_t *)f;
            if (k < PS_INTENSITY_NONE || k > PS_INTENSITY_MEMORY) {
                e->column = col_name(c);
                snprintf(e->msg, sizeof e->msg, "%s: invalid intensity %d", c->name, k);
                return PS_E_INPUT;
            }
            continue;
        }
        case PS_COL_INT: v = *(const int *)f; break;
        default:
            v = *(const double *)f;
            if (isnan(v) && c->optional)
                continue;
            if (!isfinite(v)) {
                e->column = col_name(c);
                snprintf(e->msg, sizeof e->msg, "%s: %s is not allowed", c->name, isnan(v) ? "NaN" : "infinity");
                return PS_E_INPUT;
            }
            break;
        }
        if (v < c->lo || (c->lo_open && v == c->lo) || v > c->hi) {
            char lo[32], hi[32];
            snprintf(lo, sizeof lo, "%g", c->lo);
            snprintf(hi, sizeof hi, "%g", c->hi);
            e->column = col_name(c);
            if (c->hi >= INT_MAX && c->hi != PSI_MAX_OP_NS)
                snprintf(e->msg, sizeof e->msg, "%s: %.17g: must be %s %s", c->name, v, c->lo_open ? ">" : ">=", lo);
            else
                snprintf(e->msg, sizeof e->msg, "%s: %.17g: must be in %s%s, %s]%s", c->name, v, c->lo_open ? "(" : "[",
                         lo, hi,
                         c->hi == PSI_MAX_OP_NS ? " (one hour: no operator of a profiled step runs longer)" : "");
            return PS_E_INPUT;
        }
        continue;
    empty:
        e->column = col_name(c);
        snprintf(e->msg, sizeof e->msg, "%s: missing value", c->name);
        return PS_E_INPUT;
    }
    return PS_OK;
}

static int check_rows(const psi_schema_t *s, const void *rows, size_t n, psi_rowerr_t *e)
{
    for (size_t i = 0; i < n; i++)
        if (psi_schema_check_row(s, (const char *)rows + i * s->row_size, e) != PS_OK) {
            e->row = i;
            e->other = SIZE_MAX;
            return PS_E_INPUT;
        }
    return PS_OK;
}

/* The TPC count of a catalogued GPU, 0 when the catalog does not know it.
 * Rows hold pooled names, so the last answer is kept by pointer. */
typedef struct {
    const char *gpu;
    int tpcs;
} gpu_cache_t;

static int gpu_tpcs(gpu_cache_t *c, const char *gpu)
{
    if (gpu != c->gpu) {
        const psi_gpu_t *g = psi_gpu_find(gpu);
        c->gpu = gpu;
        c->tpcs = g ? g->tpcs : 0;
    }
    return c->tpcs;
}

/* ------------------------------------------------------------------------ */
/* Creating, appending, freeing                                              */
/* ------------------------------------------------------------------------ */

/* Copy row into slot dst, interning its text columns in pool. */
static int intern_row(const psi_schema_t *s, psi_strpool_t *pool, void *dst, const void *row)
{
    memcpy(dst, row, s->row_size);
    for (size_t i = 0; i < s->ncols; i++) {
        if (s->cols[i].type != PS_COL_TEXT)
            continue;
        const char **f = (const char **)((char *)dst + s->cols[i].offset);
        if (!*f) {
            if (!s->cols[i].optional)
                return psi_error(PS_E_ARG, "%s: required text column %s is NULL", s->name, s->cols[i].name);
            continue;
        }
        if (!(*f = psi_strpool_intern(pool, *f)))
            return PS_E_NOMEM;
    }
    return PS_OK;
}

/* Each table has rows, n, cap and pool; these macros give the five the same
 * new/append/free without casting between their struct types. */
#define TABLE_FUNCS(T, R, prefix, kind, extra_free)                                                                    \
    T *prefix##_new(void)                                                                                              \
    {                                                                                                                  \
        T *t = psi_calloc(1, sizeof *t);                                                                               \
        if (t && !(t->pool = psi_strpool_new())) {                                                                     \
            free(t);                                                                                                   \
            t = NULL;                                                                                                  \
        }                                                                                                              \
        return t;                                                                                                      \
    }                                                                                                                  \
    int prefix##_append(T *t, const R *row)                                                                            \
    {                                                                                                                  \
        if (!t || !row)                                                                                                \
            return psi_error(PS_E_ARG, #prefix "_append: NULL argument");                                              \
        void *rows = t->rows;                                                                                          \
        int rc = psi_array_grow(&rows, t->n, &t->cap, sizeof *t->rows, 256);                                           \
        t->rows = rows;                                                                                                \
        if (rc == PS_OK)                                                                                               \
            rc = intern_row(psi_schema_get(kind), t->pool, &t->rows[t->n], row);                                       \
        if (rc == PS_OK)                                                                                               \
            t->n++;                                                                                                    \
        return rc;                                                                                                     \
    }                                                                                                                  \
    void prefix##_free(T *t)                                                                                           \
    {                                                                                                                  \
        if (!t)                                                                                                        \
            return;                                                                                                    \
        extra_free;                                                                                                    \
        free(t->rows);                                                                                                 \
        psi_strpool_free(t->pool);                                                                                     \
        free(t);                                                                                                       \
    }

static void free_groups(ps_ops_t *t);

size_t ps_ops_estimated(const ps_ops_t *t)
{
    size_t n = 0;
    for (size_t i = 0; t && i < t->n; i++)
        n += t->rows[i].source != NULL;
    return n;
}

TABLE_FUNCS(ps_ops_t, psi_op_row_t, ps_ops, PS_TABLE_OPS, free_groups(t))
TABLE_FUNCS(ps_coexec_t, psi_coexec_row_t, ps_coexec, PS_TABLE_COEXEC, (void)0)
TABLE_FUNCS(ps_workloads_t, psi_workload_row_t, ps_workloads, PS_TABLE_WORKLOADS, (void)0)
TABLE_FUNCS(ps_scaling_t, psi_scaling_row_t, ps_scaling, PS_TABLE_SCALING, (void)0)
TABLE_FUNCS(ps_colocations_t, psi_colocation_row_t, ps_colocations, PS_TABLE_COLOCATIONS, (void)0)

size_t ps_ops_rows(const ps_ops_t *t) { return t ? t->n : 0; }
size_t ps_coexec_rows(const ps_coexec_t *t) { return t ? t->n : 0; }
size_t ps_workloads_rows(const ps_workloads_t *t) { return t ? t->n : 0; }
size_t ps_colocations_rows(const ps_colocations_t *t) { return t ? t->n : 0; }
size_t ps_scaling_rows(const ps_scaling_t *t) { return t ? t->n : 0; }

const ps_colocation_row_t *ps_colocations_row(const ps_colocations_t *t, size_t i)
{
    return t && i < t->n ? &t->rows[i] : NULL;
}

const ps_scaling_row_t *ps_scaling_row(const ps_scaling_t *t, size_t i) { return t && i < t->n ? &t->rows[i] : NULL; }

/* ------------------------------------------------------------------------ */
/* ops.csv: keys, operator indices, groups                                   */
/* ------------------------------------------------------------------------ */

static void free_group(psi_op_group_t *g)
{
    free(g->tpcs);
    free(g->duration_ns);
    free(g->names);
    free(g->intensity);
    free(g->counters);
}

static void free_groups(ps_ops_t *t)
{
    for (size_t i = 0; i < t->n_groups; i++)
        free_group(&t->groups[i]);
    free(t->groups);
    t->groups = NULL;
    t->n_groups = 0;
}

static uint64_t hash_group(const psi_op_row_t *r)
{
    return psi_hash_mix(psi_hash_ptr(psi_hash_ptr(0, r->gpu), r->model), (uint64_t)r->batch);
}

static int eq_group(const void *ctx, size_t a, size_t b)
{
    const psi_op_row_t *x = (const psi_op_row_t *)ctx + a, *y = (const psi_op_row_t *)ctx + b;
    return x->gpu == y->gpu && x->model == y->model && x->batch == y->batch;
}

static int eq_op_key(const void *ctx, size_t a, size_t b)
{
    const psi_op_row_t *x = (const psi_op_row_t *)ctx + a, *y = (const psi_op_row_t *)ctx + b;
    return eq_group(ctx, a, b) && x->op == y->op && x->tpcs == y->tpcs;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Most duration cells of one (gpu, model, batch): 512 MB of doubles. */
#define MAX_GROUP_CELLS (1 << 26)

/* Per group while indexing: the rows' group ids are known; collect the
 * operator count and the distinct TPC counts. */
typedef struct {
    int max_op;
    size_t n_tpcs, cap_tpcs;
    int *tpcs;
    size_t first_row, rows;
} group_scan_t;

/* How many operator indices of a group to mark: 0..max_op, but no more than
 * rows + 1 (the smallest missing index cannot lie beyond that). */
static size_t span(const group_scan_t *s)
{
    size_t all = (size_t)s->max_op + 1;
    return all < s->rows + 1 ? all : s->rows + 1;
}

static int scan_add_tpcs(group_scan_t *s, int tpcs)
{
    for (size_t i = 0; i < s->n_tpcs; i++)
        if (s->tpcs[i] == tpcs)
            return PS_OK;
    void *p = s->tpcs;
    int rc = psi_array_grow(&p, s->n_tpcs, &s->cap_tpcs, sizeof *s->tpcs, 8);
    s->tpcs = p;
    if (rc == PS_OK)
        s->tpcs[s->n_tpcs++] = tpcs;
    return rc;
}

static void group_label(const psi_op_row_t *r, char *buf, size_t n)
{
    snprintf(buf, n, "(gpu, model, batch) = (%s, %s, %d)", r->gpu, r->model, r->batch);
}

/* Fill group g (its tpcs already sorted) from the rows with group id gi. */
static int fill_group(ps_ops_t *t, const size_t *gid, size_t gi, psi_op_group_t *g)
{
    size_t nops = (size_t)g->n_ops, nt = (size_t)g->n_tpcs;
    g->duration_ns = psi_malloc(sizeof *g->duration_ns * nops * nt);
    g->names = psi_calloc(nops, sizeof *g->names);
    g->intensity = psi_malloc(sizeof *g->intensity * nops);
    g->counters = psi_malloc(sizeof *g->counters * nops);
    /* For each operator and counter (and intensity, slot 7): the TPC count of
     * the row its value came from, so that the row with the most TPCs wins. */
    int *src = psi_malloc(sizeof *src * nops * 8);
    if (!g->duration_ns || !g->names || !g->intensity || !g->counters || !src) {
        free(src);
        return PS_E_NOMEM;
    }
    for (size_t i = 0; i < nops * nt; i++)
        g->duration_ns[i] = NAN;
    for (size_t i = 0; i < nops; i++) {
        g->intensity[i] = PS_INTENSITY_NONE;
        double *c = &g->counters[i].dram_bytes;
        for (int k = 0; k < 7; k++)
            c[k] = NAN;
    }
    for (size_t i = 0; i < nops * 8; i++)
        src[i] = 0;
    for (size_t r = 0; r < t->n; r++) {
        if (gid[r] != gi)
            continue;
        const psi_op_row_t *row = &t->rows[r];
        int k = psi_group_tpcs_index(g, row->tpcs);
        size_t op = (size_t)row->op;
        g->duration_ns[op * nt + (size_t)k] = row->duration_ns;
        if (!g->names[op])
            g->names[op] = row->name;
        int *s = &src[op * 8];
        const double *rc = &row->c.dram_bytes;
        double *gc = &g->counters[op].dram_bytes;
        for (int m = 0; m < 7; m++)
            if (!isnan(rc[m]) && row->tpcs > s[m]) {
                gc[m] = rc[m];
                s[m] = row->tpcs;
            }
        if (row->intensity != PS_INTENSITY_NONE && row->tpcs > s[7]) {
            g->intensity[op] = row->intensity;
            s[7] = row->tpcs;
        }
    }
    free(src);
    return PS_OK;
}

/* The ops rules of FORMATS.md: values in range, (gpu, model, batch, op,
 * tpcs) unique, and op indices 0..n-1 per (gpu, model, batch) with no gap.
 * Builds t->groups on success. */
/* Every row's tpcs within its GPU's (when the catalog knows the GPU). */
static int check_tpcs_bounds(const ps_ops_t *t, psi_rowerr_t *e)
{
    gpu_cache_t cache = {0};
    for (size_t r = 0; r < t->n; r++) {
        int max = gpu_tpcs(&cache, t->rows[r].gpu);
        if (max && t->rows[r].tpcs > max) {
            e->row = r;
            e->other = SIZE_MAX;
            e->column = "tpcs";
            snprintf(e->msg, sizeof e->msg, "tpcs: %d exceeds the %d TPCs of %s", t->rows[r].tpcs, max, t->rows[r].gpu);
            return PS_E_INPUT;
        }
    }
    return PS_OK;
}

/* The groups of the rows: gid[r] is row r's group, (*scan)[0..*ng) what each
 * holds. Fails on a key (gpu, model, batch, op, tpcs) given twice. */
static int scan_groups(const ps_ops_t *t, psi_rowerr_t *e, size_t *gid, group_scan_t **scan, size_t *ng)
{
    psi_keyset_t gset = {0}, kset = {0};
    size_t cap = 0;
    int rc = PS_OK;
    if (psi_keyset_init(&gset, t->n) != PS_OK || psi_keyset_init(&kset, t->n) != PS_OK) {
        rc = PS_E_NOMEM;
        goto done;
    }
    for (size_t r = 0; r < t->n; r++) {
        const psi_op_row_t *row = &t->rows[r];
        uint64_t h = hash_group(row);
        size_t dup = psi_keyset_insert(&kset, r, psi_hash_mix(psi_hash_mix(h, (uint64_t)row->op), (uint64_t)row->tpcs),
                                       eq_op_key, t->rows);
        if (dup != SIZE_MAX) {
            e->row = r;
            e->other = dup;
            e->column = "op";
            snprintf(e->msg, sizeof e->msg, "duplicate key (gpu, model, batch, op, tpcs) = (%s, %s, %d, %d, %d)",
                     row->gpu, row->model, row->batch, row->op, row->tpcs);
            rc = PS_E_INPUT;
            goto done;
        }
        size_t first = psi_keyset_insert(&gset, r, h, eq_group, t->rows);
        if (first == SIZE_MAX) {
            void *p = *scan;
            rc = psi_array_grow(&p, *ng, &cap, sizeof **scan, 8);
            *scan = p;
            if (rc != PS_OK)
                goto done;
            (*scan)[*ng] = (group_scan_t){.max_op = -1, .first_row = r};
            gid[r] = (*ng)++;
        } else {
            gid[r] = gid[first];
        }
        group_scan_t *s = &(*scan)[gid[r]];
        s->rows++;
        if (row->op > s->max_op)
            s->max_op = row->op;
        if ((rc = scan_add_tpcs(s, row->tpcs)) != PS_OK)
            goto done;
    }
done:
    psi_keyset_free(&gset);
    psi_keyset_free(&kset);
    return rc;
}

/* Gaps: the smallest missing operator index of a group is at most its row
 * count, so marking the indices up to that bound finds it without trusting
 * max_op for the size (a stray op 2000000000 must not make a 2 GB bitmap).
 * The first row (in file order) beyond a gap takes the blame. */
static int find_gaps(const ps_ops_t *t, psi_rowerr_t *e, const size_t *gid, const group_scan_t *scan, size_t ng)
{
    size_t total = 0;
    for (size_t g = 0; g < ng; g++)
        total += span(&scan[g]);
    size_t *base = psi_malloc(sizeof *base * (ng ? ng : 1));
    unsigned char *seen = psi_calloc(total ? total : 1, 1);
    int rc = (!base || !seen) ? PS_E_NOMEM : PS_OK;
    for (size_t g = 0, b = 0; rc == PS_OK && g < ng; g++) {
        base[g] = b;
        b += span(&scan[g]);
    }
    for (size_t r = 0; rc == PS_OK && r < t->n; r++)
        if ((size_t)t->rows[r].op < span(&scan[gid[r]]))
            seen[base[gid[r]] + (size_t)t->rows[r].op] = 1;
    for (size_t g = 0; g < ng && rc == PS_OK; g++) {
        int missing = -1;
        for (size_t op = 0; op < span(&scan[g]); op++)
            if (!seen[base[g] + op]) {
                missing = (int)op;
                break;
            }
        if (missing < 0)
            continue;
        for (size_t r = scan[g].first_row; r < t->n; r++)
            if (gid[r] == g && t->rows[r].op > missing) {
                char label[300];
                group_label(&t->rows[r], label, sizeof label);
                e->row = r;
                e->other = SIZE_MAX;
                e->column = "op";
                snprintf(e->msg, sizeof e->msg, "op %d: gap in the operator indices of %s: op %d is missing",
                         t->rows[r].op, label, missing);
                break;
            }
        rc = PS_E_INPUT;
    }
    free(base);
    free(seen);
    return rc;
}

/* t->groups from the scan: each group's TPC counts (sorted, taken from the
 * scan) and its dense matrix, refused when it would be too large. */
static int build_groups(ps_ops_t *t, psi_rowerr_t *e, const size_t *gid, group_scan_t *scan, size_t ng)
{
    t->groups = psi_calloc(ng ? ng : 1, sizeof *t->groups);
    if (!t->groups)
        return PS_E_NOMEM;
    t->n_groups = ng;
    int rc = PS_OK;
    for (size_t g = 0; g < ng && rc == PS_OK; g++) {
        psi_op_group_t *grp = &t->groups[g];
        const psi_op_row_t *r0 = &t->rows[scan[g].first_row];
        grp->gpu = r0->gpu;
        grp->model = r0->model;
        grp->batch = r0->batch;
        grp->n_ops = scan[g].max_op + 1;
        grp->n_tpcs = (int)scan[g].n_tpcs;
        grp->tpcs = scan[g].tpcs;
        scan[g].tpcs = NULL;
        qsort(grp->tpcs, (size_t)grp->n_tpcs, sizeof *grp->tpcs, cmp_int);
        /* The dense matrix has n_ops x n_tpcs cells; a sparse table with
         * thousands of TPC counts would not fit. */
        if ((size_t)grp->n_ops * (size_t)grp->n_tpcs > MAX_GROUP_CELLS) {
            char label[300];
            group_label(r0, label, sizeof label);
            e->row = scan[g].first_row;
            e->other = SIZE_MAX;
            e->column = "tpcs";
            snprintf(e->msg, sizeof e->msg, "tpcs: %s has %d operators at %d TPC counts: more than %d cells", label,
                     grp->n_ops, grp->n_tpcs, MAX_GROUP_CELLS);
            rc = PS_E_INPUT;
            break;
        }
        rc = fill_group(t, gid, g, grp);
    }
    if (rc != PS_OK)
        free_groups(t);
    return rc;
}

static int ops_validate(ps_ops_t *t, psi_rowerr_t *e)
{
    int rc = check_rows(psi_schema_get(PS_TABLE_OPS), t->rows, t->n, e);
    if (rc != PS_OK || (rc = check_tpcs_bounds(t, e)) != PS_OK)
        return rc;
    free_groups(t);
    size_t *gid = psi_malloc(sizeof *gid * (t->n ? t->n : 1));
    group_scan_t *scan = NULL;
    size_t ng = 0;
    rc = gid ? scan_groups(t, e, gid, &scan, &ng) : PS_E_NOMEM;
    if (rc == PS_OK)
        rc = find_gaps(t, e, gid, scan, ng);
    if (rc == PS_OK)
        rc = build_groups(t, e, gid, scan, ng);
    for (size_t g = 0; g < ng; g++)
        free(scan[g].tpcs);
    free(scan);
    free(gid);
    return rc;
}

/* Turn a rule violation into the message of an in-memory check, which names
 * 1-based rows where the loader names lines. */
static int row_error(int rc, const char *table, const psi_rowerr_t *e)
{
    if (rc != PS_E_INPUT)
        return rc;
    if (e->other != SIZE_MAX)
        return psi_error(rc, "%s row %zu: %s (first at row %zu)", table, e->row + 1, e->msg, e->other + 1);
    return psi_error(rc, "%s row %zu: %s", table, e->row + 1, e->msg);
}

int psi_ops_index(ps_ops_t *t)
{
    psi_rowerr_t e;
    return row_error(ops_validate(t, &e), "ops", &e);
}

const psi_op_group_t *psi_ops_find(const ps_ops_t *t, const char *gpu, const char *model, int batch)
{
    if (!t || !gpu || !model)
        return NULL;
    gpu = psi_gpu_canonical(gpu);
    for (size_t i = 0; i < t->n_groups; i++) {
        const psi_op_group_t *g = &t->groups[i];
        if (g->batch == batch && strcmp(g->model, model) == 0 && strcmp(g->gpu, gpu) == 0)
            return g;
    }
    return NULL;
}

/* Appends text to buf[n] at *len, ending it with "..." when it is full. */
static void append_text(char *buf, size_t n, size_t *len, const char *text)
{
    if (*len + strlen(text) + 4 >= n) {
        if (*len + 4 < n && !strstr(buf, "..."))
            *len += (size_t)snprintf(buf + *len, n - *len, "...");
        return;
    }
    *len += (size_t)snprintf(buf + *len, n - *len, "%s", text);
}

const char *psi_ops_groups_text(const ps_ops_t *t, const char *gpu, char *buf, size_t n)
{
    size_t len = 0, shown = 0;
    buf[0] = '\0';
    int any_of_gpu = 0;
    for (size_t i = 0; t && gpu && i < t->n_groups; i++)
        any_of_gpu |= strcmp(t->groups[i].gpu, gpu) == 0;
    for (size_t i = 0; t && i < t->n_groups; i++) {
        const psi_op_group_t *g = &t->groups[i];
        if (any_of_gpu && strcmp(g->gpu, gpu) != 0)
            continue;
        char item[256];
        snprintf(item, sizeof item, "%s%s batch %d%s%s", shown ? ", " : "", g->model, g->batch,
                 any_of_gpu ? "" : " on ", any_of_gpu ? "" : g->gpu);
        append_text(buf, n, &len, item);
        shown++;
    }
    if (!shown)
        snprintf(buf, n, "none");
    return buf;
}

const char *psi_group_tpcs_text(const psi_op_group_t *g, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < g->n_tpcs; k++) {
        char item[32];
        snprintf(item, sizeof item, "%s%d", k ? ", " : "", g->tpcs[k]);
        append_text(buf, n, &len, item);
    }
    return buf;
}

int psi_group_tpcs_index(const psi_op_group_t *g, int tpcs)
{
    int lo = 0, hi = g->n_tpcs - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (g->tpcs[mid] == tpcs)
            return mid;
        if (g->tpcs[mid] < tpcs)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

double psi_group_segment_ns(const psi_op_group_t *g, int start, int len, int tpcs)
{
    int k = psi_group_tpcs_index(g, tpcs);
    if (k < 0 || start < 0 || len < 0 || start > g->n_ops - len)
        return NAN;
    double sum = 0;
    for (int op = start; op < start + len; op++)
        sum += g->duration_ns[(size_t)op * (size_t)g->n_tpcs + (size_t)k];
    return sum; /* NAN propagates when any operator lacks this TPC count */
}

/* ------------------------------------------------------------------------ */
/* coexec, workloads, scaling, colocations: keys and consistency             */
/* ------------------------------------------------------------------------ */

/* The columns that define a co-execution setting: all rows of one
 * experiment must agree on them. */
const char *psi_coexec_key_diff(const psi_coexec_row_t *a, const psi_coexec_row_t *b)
{
    if (a->gpu != b->gpu)
        return "gpu";
    if (a->hp_model != b->hp_model)
        return "hp_model";
    if (a->hp_batch != b->hp_batch)
        return "hp_batch";
    if (a->hp_start != b->hp_start)
        return "hp_start";
    if (a->hp_len != b->hp_len)
        return "hp_len";
    if (a->lp_model != b->lp_model)
        return "lp_model";
    if (a->lp_batch != b->lp_batch)
        return "lp_batch";
    if (a->lp_start != b->lp_start)
        return "lp_start";
    if (a->lp_len != b->lp_len)
        return "lp_len";
    if (a->hp_tpcs != b->hp_tpcs)
        return "hp_tpcs";
    if (a->lp_tpcs != b->lp_tpcs)
        return "lp_tpcs";
    return NULL;
}

static int eq_experiment(const void *ctx, size_t a, size_t b)
{
    const psi_coexec_row_t *r = ctx;
    return r[a].experiment == r[b].experiment;
}

int psi_coexec_validate(ps_coexec_t *t, psi_rowerr_t *e)
{
    int rc = check_rows(psi_schema_get(PS_TABLE_COEXEC), t->rows, t->n, e);
    if (rc != PS_OK)
        return rc;
    /* FORMATS.md: hp_tpcs + lp_tpcs <= the GPU's TPCs (checked where the
     * catalog knows the GPU). */
    gpu_cache_t cache = {0};
    for (size_t r = 0; r < t->n; r++) {
        const psi_coexec_row_t *row = &t->rows[r];
        int max = gpu_tpcs(&cache, row->gpu);
        if (max && (long)row->hp_tpcs + row->lp_tpcs > max) {
            e->row = r;
            e->other = SIZE_MAX;
            e->column = "lp_tpcs";
            snprintf(e->msg, sizeof e->msg, "lp_tpcs: hp_tpcs + lp_tpcs = %ld exceeds the %d TPCs of %s",
                     (long)row->hp_tpcs + row->lp_tpcs, max, row->gpu);
            return PS_E_INPUT;
        }
    }
    psi_keyset_t set = {0};
    if (psi_keyset_init(&set, t->n) != PS_OK)
        return PS_E_NOMEM;
    for (size_t r = 0; r < t->n && rc == PS_OK; r++) {
        size_t first = psi_keyset_insert(&set, r, psi_hash_ptr(0, t->rows[r].experiment), eq_experiment, t->rows);
        const char *col = first == SIZE_MAX ? NULL : psi_coexec_key_diff(&t->rows[first], &t->rows[r]);
        if (col) {
            e->row = r;
            e->other = first;
            e->column = col;
            snprintf(e->msg, sizeof e->msg,
                     "%s: differs from an earlier row of experiment '%s' (rows of one experiment "
                     "share gpu, models, batches, segments and TPCs)",
                     col, t->rows[r].experiment);
            rc = PS_E_INPUT;
        }
    }
    psi_keyset_free(&set);
    return rc;
}

/* The key a workload table's rows must not repeat: how to hash and
 * compare two rows by it and print it, the column an error points at and
 * what the message calls the key. */
typedef struct {
    uint64_t (*hash)(const void *rows, size_t i);
    psi_row_eq_fn eq;
    void (*label)(const void *rows, size_t i, char *buf, size_t n);
    const char *column, *what;
} unique_key_t;

/* Duplicate-key check shared by the workload tables: rows[0..n) by key k;
 * the message names the key. */
static int check_unique(const unique_key_t *k, const void *rows, size_t n, psi_rowerr_t *e)
{
    psi_keyset_t set = {0};
    if (psi_keyset_init(&set, n) != PS_OK)
        return PS_E_NOMEM;
    int rc = PS_OK;
    for (size_t r = 0; r < n; r++) {
        size_t dup = psi_keyset_insert(&set, r, k->hash(rows, r), k->eq, rows);
        if (dup != SIZE_MAX) {
            char key[300];
            k->label(rows, r, key, sizeof key);
            e->row = r;
            e->other = dup;
            e->column = k->column;
            snprintf(e->msg, sizeof e->msg, "duplicate key %s = %s", k->what, key);
            rc = PS_E_INPUT;
            break;
        }
    }
    psi_keyset_free(&set);
    return rc;
}

static uint64_t workload_hash(const void *rows, size_t i)
{
    const psi_workload_row_t *r = (const psi_workload_row_t *)rows + i;
    return psi_hash_ptr(psi_hash_ptr(0, r->gpu), r->workload);
}
static int workload_eq(const void *rows, size_t a, size_t b)
{
    const psi_workload_row_t *r = rows;
    return r[a].gpu == r[b].gpu && r[a].workload == r[b].workload;
}
static void workload_label(const void *rows, size_t i, char *buf, size_t n)
{
    const psi_workload_row_t *r = (const psi_workload_row_t *)rows + i;
    snprintf(buf, n, "(%s, %s)", r->gpu, r->workload);
}

static int psi_workloads_validate(ps_workloads_t *t, psi_rowerr_t *e)
{
    int rc = check_rows(psi_schema_get(PS_TABLE_WORKLOADS), t->rows, t->n, e);
    if (rc == PS_OK)
        rc = check_unique(&(unique_key_t){workload_hash, workload_eq, workload_label, "workload", "(gpu, workload)"},
                          t->rows, t->n, e);
    return rc;
}

static uint64_t scaling_hash(const void *rows, size_t i)
{
    const psi_scaling_row_t *r = (const psi_scaling_row_t *)rows + i;
    return psi_hash_mix(psi_hash_ptr(psi_hash_ptr(0, r->gpu), r->workload), (uint64_t)r->share_pct);
}
static int scaling_eq(const void *rows, size_t a, size_t b)
{
    const psi_scaling_row_t *r = rows;
    return r[a].gpu == r[b].gpu && r[a].workload == r[b].workload && r[a].share_pct == r[b].share_pct;
}
static void scaling_label(const void *rows, size_t i, char *buf, size_t n)
{
    const psi_scaling_row_t *r = (const psi_scaling_row_t *)rows + i;
    snprintf(buf, n, "(%s, %s, %d)", r->gpu, r->workload, r->share_pct);
}

static int psi_scaling_validate(ps_scaling_t *t, psi_rowerr_t *e)
{
    int rc = check_rows(psi_schema_get(PS_TABLE_SCALING), t->rows, t->n, e);
    if (rc == PS_OK)
        rc = check_unique(
            &(unique_key_t){scaling_hash, scaling_eq, scaling_label, "share_pct", "(gpu, workload, share_pct)"},
            t->rows, t->n, e);
    return rc;
}

static uint64_t colo_hash(const void *rows, size_t i)
{
    const psi_colocation_row_t *r = (const psi_colocation_row_t *)rows + i;
    return psi_hash_mix(psi_hash_ptr(0, r->colocation), (uint64_t)r->slot);
}
static int colo_eq(const void *rows, size_t a, size_t b)
{
    const psi_colocation_row_t *r = rows;
    return r[a].colocation == r[b].colocation && r[a].slot == r[b].slot;
}
static void colo_label(const void *rows, size_t i, char *buf, size_t n)
{
    const psi_colocation_row_t *r = (const psi_colocation_row_t *)rows + i;
    snprintf(buf, n, "(%s, %d)", r->colocation, r->slot);
}

static int psi_colocations_validate(ps_colocations_t *t, psi_rowerr_t *e)
{
    int rc = check_rows(psi_schema_get(PS_TABLE_COLOCATIONS), t->rows, t->n, e);
    if (rc == PS_OK)
        rc = check_unique(&(unique_key_t){colo_hash, colo_eq, colo_label, "slot", "(colocation, slot)"}, t->rows, t->n,
                          e);
    if (rc != PS_OK)
        return rc;
    psi_keyset_t set = {0};
    if (psi_keyset_init(&set, t->n) != PS_OK)
        return PS_E_NOMEM;
    for (size_t r = 0; r < t->n && rc == PS_OK; r++) {
        size_t first = psi_keyset_insert(&set, r, psi_hash_ptr(0, t->rows[r].colocation), psi_colo_eq_id, t->rows);
        if (first != SIZE_MAX && t->rows[first].gpu != t->rows[r].gpu) {
            e->row = r;
            e->other = first;
            e->column = "gpu";
            snprintf(e->msg, sizeof e->msg, "gpu: co-location '%s' is on %s here but on %s in an earlier row",
                     t->rows[r].colocation, t->rows[r].gpu, t->rows[first].gpu);
            rc = PS_E_INPUT;
        }
    }
    psi_keyset_free(&set);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The schema table                                                          */
/* ------------------------------------------------------------------------ */

/* The schema's operations for table type T with functions prefix_*. */
#define SCHEMA_OPS(T, p, prefix, validate_fn)                                                                          \
    static void *p##_create(void) { return prefix##_new(); }                                                           \
    static void p##_destroy(void *t) { prefix##_free(t); }                                                             \
    static int p##_append(void *t, const void *r) { return prefix##_append(t, r); }                                    \
    static int p##_valid(void *t, psi_rowerr_t *e) { return validate_fn(t, e); }                                       \
    static const void *p##_rows(const void *t, size_t *n)                                                              \
    {                                                                                                                  \
        *n = ((const T *)t)->n;                                                                                        \
        return ((const T *)t)->rows;                                                                                   \
    }

SCHEMA_OPS(ps_ops_t, ops, ps_ops, ops_validate)
SCHEMA_OPS(ps_coexec_t, cx, ps_coexec, psi_coexec_validate)
SCHEMA_OPS(ps_workloads_t, wl, ps_workloads, psi_workloads_validate)
SCHEMA_OPS(ps_scaling_t, sc, ps_scaling, psi_scaling_validate)
SCHEMA_OPS(ps_colocations_t, co, ps_colocations, psi_colocations_validate)

/* The group counts of `pairsight check` (tables_groups.c). (gpu,
 * workload) is the key of workloads.csv, so every row is one workload. */
static size_t ops_groups(const void *t) { return ((const ps_ops_t *)t)->n_groups; }
static size_t cx_groups(const void *t) { return psi_coexec_groups(t); }
static size_t wl_groups(const void *t) { return ((const ps_workloads_t *)t)->n; }
static size_t sc_groups(const void *t) { return psi_scaling_groups(t); }
static size_t co_groups(const void *t) { return psi_colocations_groups(t); }

#define SCHEMA(kind, name, cols, row_t, p)                                                                             \
    {                                                                                                                  \
        kind, name, cols, PS_ARRAY_LEN(cols), sizeof(row_t), p##_create, p##_destroy, p##_append, p##_valid, p##_rows, \
            p##_groups                                                                                                 \
    }

static const psi_schema_t schemas[] = {
    SCHEMA(PS_TABLE_OPS, "ops", ops_cols, psi_op_row_t, ops),
    SCHEMA(PS_TABLE_COEXEC, "coexec", coexec_cols, psi_coexec_row_t, cx),
    SCHEMA(PS_TABLE_WORKLOADS, "workloads", workload_cols, psi_workload_row_t, wl),
    SCHEMA(PS_TABLE_SCALING, "workload_scaling", scaling_cols, psi_scaling_row_t, sc),
    SCHEMA(PS_TABLE_COLOCATIONS, "colocations", colocation_cols, psi_colocation_row_t, co),
};

const psi_schema_t *psi_schema_get(ps_table_kind_t kind)
{
    for (size_t i = 0; i < PS_ARRAY_LEN(schemas); i++)
        if (schemas[i].kind == kind)
            return &schemas[i];
    return NULL;
}
