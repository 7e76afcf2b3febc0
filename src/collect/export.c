/*
 * Export: the campaign database's rows as ops.csv and coexec.csv, through the
 * table writers of src/profile. Kept apart from the store so that the
 * campaign logic links without the table writers.
 */
#include "collect/store.h"

#include "common/common.h"
#include "profile/profile_internal.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One column of an export query: the table it comes from, its name, and the
 * storage class it must hold (as `check` reads a cell of the CSV). */
typedef struct {
    const char *table, *name;
    psi_coltype_t type;
    int optional;
} cell_t;

/* Why cell i of the current row cannot be exported, or NULL: SQLite keeps
 * what it is given ('abc' or a blob in a REAL column, 99999999999 in an
 * INTEGER one), which the table writers would turn into 0 or a wrapped int. */
static const char *cell_why(sqlite3_stmt *st, int i, const cell_t *c, char *buf, size_t n)
{
    int t = sqlite3_column_type(st, i);
    if (t == SQLITE_NULL)
        return c->optional ? NULL : "is empty (NULL)";
    if (t == SQLITE_BLOB)
        return "holds a blob, not a value";
    if (c->type == PS_COL_TEXT)
        return t == SQLITE_TEXT ? NULL : "holds a number where text belongs";
    if (t == SQLITE_TEXT) {
        snprintf(buf, n, "holds the text '%.40s', not a number", (const char *)sqlite3_column_text(st, i));
        return buf;
    }
    if (c->type == PS_COL_INT && t != SQLITE_INTEGER) {
        snprintf(buf, n, "holds %.17g, not an integer", sqlite3_column_double(st, i));
        return buf;
    }
    sqlite3_int64 v = sqlite3_column_int64(st, i);
    if (c->type == PS_COL_INT && (v < INT_MIN || v > INT_MAX)) {
        snprintf(buf, n, "holds %lld, out of the range of an integer column", (long long)v);
        return buf;
    }
    return NULL;
}

/* Each cell of the current row checked: the first bad one is named by
 * table, row (rowid, at column `rowid`, and its key in `what`) and column. */
static int check_cells(psi_store_t *s, sqlite3_stmt *st, const cell_t *cells, int n, int rowid, const char *what)
{
    char buf[160];
    for (int i = 0; i < n; i++) {
        const char *why = cells[i].table ? cell_why(st, i, &cells[i], buf, sizeof buf) : NULL;
        if (why)
            return psi_error(PS_E_INPUT, "%s: table %s, row %lld (%s), column %s %s: not exported", psi_store_path(s),
                             cells[i].table, (long long)sqlite3_column_int64(st, rowid), what, cells[i].name, why);
    }
    return 0;
}

/* A rule of the table (psi_schema_t) broken by an exported row: named by
 * its table, rowid and column as above. */
static int rule_error(psi_store_t *s, const char *table, const sqlite3_int64 *rowids, const psi_rowerr_t *e)
{
    char other[64] = "";
    if (e->other != SIZE_MAX)
        snprintf(other, sizeof other, " (against row %lld)", (long long)rowids[e->other]);
    return psi_error(PS_E_INPUT, "%s: table %s, row %lld, column %s: %s%s: not exported", psi_store_path(s), table,
                     (long long)rowids[e->row], e->column ? e->column : "?", e->msg, other);
}

/* Appends the rowid of the next exported row to *ids (grown as needed). */
static int keep_rowid(sqlite3_int64 **ids, size_t n, sqlite3_int64 id)
{
    if ((n & (n - 1)) == 0) {
        sqlite3_int64 *g = psi_realloc(*ids, sizeof **ids * (n ? 2 * n : 16));
        if (!g)
            return PS_E_NOMEM;
        *ids = g;
    }
    (*ids)[n] = id;
    return 0;
}

static double col_num(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

#define OP(name, type)                                                                                                 \
    {                                                                                                                  \
        "ops", #name, type, 0                                                                                          \
    }
#define CT(table, name)                                                                                                \
    {                                                                                                                  \
        table, #name, PS_COL_FLOAT, 1                                                                                  \
    }
#define CTRS(table)                                                                                                    \
    CT(table, dram_bytes), CT(table, l2_bytes), CT(table, stall_long_scoreboard), CT(table, stall_lg_throttle),        \
        CT(table, stall_mio_throttle), CT(table, sm_pct), CT(table, mem_pct)
static const cell_t ops_cells[] = {OP(gpu, PS_COL_TEXT),
                                   OP(model, PS_COL_TEXT),
                                   OP(batch, PS_COL_INT),
                                   OP(op, PS_COL_INT),
                                   OP(name, PS_COL_TEXT),
                                   OP(tpcs, PS_COL_INT),
                                   OP(duration_ns, PS_COL_FLOAT),
                                   CTRS("counters"),
                                   {NULL, "at_max", PS_COL_INT, 0},
                                   CTRS("counters_tpc"),
                                   {NULL, "has_tpc", PS_COL_INT, 0},
                                   {NULL, "rowid", PS_COL_INT, 0}};
#undef OP
#undef CT
#undef CTRS

/* The current row of the ops query, its cells checked, appended to t. */
static int ops_row(psi_store_t *s, sqlite3_stmt *st, ps_ops_t *t)
{
    char what[300];
    snprintf(what, sizeof what, "%.80s %.80s batch %lld op %lld at %lld TPCs", col_text(st, 0), col_text(st, 1),
             (long long)sqlite3_column_int64(st, 2), (long long)sqlite3_column_int64(st, 3),
             (long long)sqlite3_column_int64(st, 5));
    int rc = check_cells(s, st, ops_cells, (int)PS_ARRAY_LEN(ops_cells), 23, what);
    if (rc)
        return rc;
    psi_op_row_t row;
    memset(&row, 0, sizeof row);
    row.gpu = col_text(st, 0);
    row.model = col_text(st, 1);
    row.batch = sqlite3_column_int(st, 2);
    row.op = sqlite3_column_int(st, 3);
    row.name = col_text(st, 4);
    row.tpcs = sqlite3_column_int(st, 5);
    row.duration_ns = sqlite3_column_double(st, 6);
    psi_counters_t c = {col_num(st, 7),  col_num(st, 8),  col_num(st, 9), col_num(st, 10),
                        col_num(st, 11), col_num(st, 12), col_num(st, 13)};
    /* Roofline class from the counters: whichever of compute and memory
     * throughput is closer to its peak (empty when not measured). */
    row.intensity = isnan(c.sm_pct) || isnan(c.mem_pct) ? PS_INTENSITY_NONE
                    : c.sm_pct >= c.mem_pct             ? PS_INTENSITY_COMPUTE
                                                        : PS_INTENSITY_MEMORY;
    if (sqlite3_column_int(st, 14)) {
        row.c = c;
    } else if (sqlite3_column_int(st, 22)) {
        /* Counters measured on this row's partition (collect counters
         * --tpcs): validated and kept, FORMATS.md. */
        psi_counters_t p = {col_num(st, 15), col_num(st, 16), col_num(st, 17), col_num(st, 18),
                            col_num(st, 19), col_num(st, 20), col_num(st, 21)};
        row.c = p;
    } else {
        row.c.dram_bytes = row.c.l2_bytes = row.c.stall_long_scoreboard = NAN;
        row.c.stall_lg_throttle = row.c.stall_mio_throttle = row.c.sm_pct = row.c.mem_pct = NAN;
    }
    return ps_ops_append(t, &row);
}

/* The rows read, then validated as `check` validates ops.csv (ranges, keys,
 * gaps in the operators), each violation named by table, row and column. */
static int psi_store_export_ops(psi_store_t *s, ps_ops_t **out)
{
    *out = NULL;
    static const char sql[] = "SELECT o.gpu, o.model, o.batch, o.op, o.name, o.tpcs, o.duration_ns,"
                              " c.dram_bytes, c.l2_bytes, c.stall_long_scoreboard, c.stall_lg_throttle,"
                              " c.stall_mio_throttle, c.sm_pct, c.mem_pct,"
                              " o.tpcs = (SELECT MAX(tpcs) FROM ops m WHERE m.gpu=o.gpu AND m.model=o.model"
                              "           AND m.batch=o.batch AND m.op=o.op),"
                              " t.dram_bytes, t.l2_bytes, t.stall_long_scoreboard, t.stall_lg_throttle,"
                              " t.stall_mio_throttle, t.sm_pct, t.mem_pct, t.tpcs IS NOT NULL, o.rowid"
                              " FROM ops o LEFT JOIN counters c ON c.gpu=o.gpu AND c.model=o.model AND c.batch=o.batch"
                              " AND c.op=o.op LEFT JOIN counters_tpc t ON t.gpu=o.gpu AND t.model=o.model"
                              " AND t.batch=o.batch AND t.op=o.op AND t.tpcs=o.tpcs"
                              " ORDER BY o.gpu, o.model, o.batch, o.op, o.tpcs";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(psi_store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    ps_ops_t *t = ps_ops_new();
    sqlite3_int64 *ids = NULL;
    int rc = t ? 0 : PS_E_NOMEM, r = SQLITE_DONE;
    while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
        rc = keep_rowid(&ids, t->n, sqlite3_column_int64(st, 23));
        if (rc == 0)
            rc = ops_row(s, st, t);
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = psi_store_error(s, "export ops");
    sqlite3_finalize(st);
    psi_rowerr_t e = {0};
    if (rc == 0 && psi_schema_get(PS_TABLE_OPS)->validate(t, &e) != 0)
        rc = rule_error(s, "ops", ids, &e);
    free(ids);
    if (rc) {
        ps_ops_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

#define CX(name, type)                                                                                                 \
    {                                                                                                                  \
        "coexec", #name, type, 0                                                                                       \
    }
static const cell_t coexec_cells[] = {
    CX(experiment, PS_COL_TEXT),    CX(gpu, PS_COL_TEXT),     CX(hp_model, PS_COL_TEXT),
    CX(hp_batch, PS_COL_INT),       CX(hp_start, PS_COL_INT), CX(hp_len, PS_COL_INT),
    CX(lp_model, PS_COL_TEXT),      CX(lp_batch, PS_COL_INT), CX(lp_start, PS_COL_INT),
    CX(lp_len, PS_COL_INT),         CX(hp_tpcs, PS_COL_INT),  CX(lp_tpcs, PS_COL_INT),
    CX(hp_ns, PS_COL_FLOAT),        CX(lp_ns, PS_COL_FLOAT),  {"coexec", "mechanism", PS_COL_TEXT, 1},
    {NULL, "rowid", PS_COL_INT, 0}, CX(run, PS_COL_INT)};
#undef CX

/* The current row of the coexec query, its cells checked, appended to t. */
static int coexec_row(psi_store_t *s, sqlite3_stmt *st, ps_coexec_t *t)
{
    char what[300];
    snprintf(what, sizeof what, "experiment %.200s, run %lld", col_text(st, 0),
             (long long)sqlite3_column_int64(st, 16));
    int rc = check_cells(s, st, coexec_cells, (int)PS_ARRAY_LEN(coexec_cells), 15, what);
    if (rc)
        return rc;
    psi_coexec_row_t row = {
        .experiment = col_text(st, 0),
        .gpu = col_text(st, 1),
        .hp_model = col_text(st, 2),
        .hp_batch = sqlite3_column_int(st, 3),
        .hp_start = sqlite3_column_int(st, 4),
        .hp_len = sqlite3_column_int(st, 5),
        .lp_model = col_text(st, 6),
        .lp_batch = sqlite3_column_int(st, 7),
        .lp_start = sqlite3_column_int(st, 8),
        .lp_len = sqlite3_column_int(st, 9),
        .hp_tpcs = sqlite3_column_int(st, 10),
        .lp_tpcs = sqlite3_column_int(st, 11),
        .hp_ns = sqlite3_column_double(st, 12),
        .lp_ns = sqlite3_column_double(st, 13),
        .mechanism = sqlite3_column_type(st, 14) == SQLITE_NULL ? NULL : col_text(st, 14),
    };
    return ps_coexec_append(t, &row);
}

/* The rows read, then validated as `check` validates coexec.csv (ranges,
 * keys, the GPU's TPCs), each violation named by table, row and column. */
static int psi_store_export_coexec(psi_store_t *s, ps_coexec_t **out)
{
    *out = NULL;
    static const char sql[] = "SELECT experiment, gpu, hp_model, hp_batch, hp_start, hp_len, lp_model, lp_batch,"
                              " lp_start, lp_len, hp_tpcs, lp_tpcs, hp_ns, lp_ns, mechanism, rowid, run FROM coexec"
                              " ORDER BY experiment, run";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(psi_store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    ps_coexec_t *t = ps_coexec_new();
    sqlite3_int64 *ids = NULL;
    int rc = t ? 0 : PS_E_NOMEM, r = SQLITE_DONE;
    while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
        rc = keep_rowid(&ids, t->n, sqlite3_column_int64(st, 15));
        if (rc == 0)
            rc = coexec_row(s, st, t);
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = psi_store_error(s, "export coexec");
    sqlite3_finalize(st);
    psi_rowerr_t e = {0};
    if (rc == 0 && psi_coexec_validate(t, &e) != 0)
        rc = rule_error(s, "coexec", ids, &e);
    free(ids);
    if (rc) {
        ps_coexec_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* Both tables are read and checked before either file is written, so an
 * export that fails leaves no half of its output. */
int ps_campaign_export(ps_campaign_t *c, const char *ops_path, const char *coexec_path)
{
    psi_store_t *s = psi_campaign_store(c);
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    int rc = ops_path ? psi_store_export_ops(s, &ops) : 0;
    if (rc == 0 && ops && ops->n == 0)
        rc = psi_error(PS_E_INPUT, "%s: the campaign has no profile rows to export (run collect profile first)",
                       psi_store_path(s));
    if (rc == 0 && coexec_path)
        rc = psi_store_export_coexec(s, &cx);
    if (rc == 0 && cx && cx->n == 0)
        rc = psi_error(PS_E_INPUT, "%s: the campaign has no co-execution rows to export (run collect coexec first)",
                       psi_store_path(s));
    if (rc == 0 && ops)
        rc = ps_ops_save(ops, ops_path);
    if (rc == 0 && cx)
        rc = ps_coexec_save(cx, coexec_path);
    ps_ops_free(ops);
    ps_coexec_free(cx);
    return rc;
}
