/*
 * Export: the campaign database's rows as ops.csv and coexec.csv, through the
 * table writers of src/profile. Kept apart from the store so that the
 * campaign logic links without the table writers.
 */
#include "collect/store.h"

#include "common/common.h"

#include <string.h>

static double col_num(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

int psi_store_export_ops(psi_store_t *s, ps_ops_t **out)
{
    *out = NULL;
    static const char sql[] = "SELECT o.gpu, o.model, o.batch, o.op, o.name, o.tpcs, o.duration_ns,"
                              " c.dram_bytes, c.l2_bytes, c.stall_long_scoreboard, c.stall_lg_throttle,"
                              " c.stall_mio_throttle, c.sm_pct, c.mem_pct,"
                              " o.tpcs = (SELECT MAX(tpcs) FROM ops m WHERE m.gpu=o.gpu AND m.model=o.model"
                              "           AND m.batch=o.batch AND m.op=o.op),"
                              " t.dram_bytes, t.l2_bytes, t.stall_long_scoreboard, t.stall_lg_throttle,"
                              " t.stall_mio_throttle, t.sm_pct, t.mem_pct, t.tpcs IS NOT NULL"
                              " FROM ops o LEFT JOIN counters c ON c.gpu=o.gpu AND c.model=o.model AND c.batch=o.batch"
                              " AND c.op=o.op LEFT JOIN counters_tpc t ON t.gpu=o.gpu AND t.model=o.model"
                              " AND t.batch=o.batch AND t.op=o.op AND t.tpcs=o.tpcs"
                              " ORDER BY o.gpu, o.model, o.batch, o.op, o.tpcs";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(psi_store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    ps_ops_t *t = ps_ops_new();
    int rc = t ? 0 : PS_E_NOMEM, r = SQLITE_DONE;
    while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
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
        int at_max = sqlite3_column_int(st, 14);
        if (at_max) {
            row.c = c;
        } else if (sqlite3_column_int(st, 22)) {
            /* Counters measured on this row's partition (collect counters
             * --tpcs): validated and kept, FORMATS.md. */
            psi_counters_t t = {col_num(st, 15), col_num(st, 16), col_num(st, 17), col_num(st, 18),
                                col_num(st, 19), col_num(st, 20), col_num(st, 21)};
            row.c = t;
        } else {
            row.c.dram_bytes = row.c.l2_bytes = row.c.stall_long_scoreboard = NAN;
            row.c.stall_lg_throttle = row.c.stall_mio_throttle = row.c.sm_pct = row.c.mem_pct = NAN;
        }
        rc = ps_ops_append(t, &row);
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = psi_store_error(s, "export ops");
    sqlite3_finalize(st);
    if (rc) {
        ps_ops_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int psi_store_export_coexec(psi_store_t *s, ps_coexec_t **out)
{
    *out = NULL;
    static const char sql[] = "SELECT experiment, gpu, hp_model, hp_batch, hp_start, hp_len, lp_model, lp_batch,"
                              " lp_start, lp_len, hp_tpcs, lp_tpcs, hp_ns, lp_ns, mechanism FROM coexec"
                              " ORDER BY experiment, run";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(psi_store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    ps_coexec_t *t = ps_coexec_new();
    int rc = t ? 0 : PS_E_NOMEM, r = SQLITE_DONE;
    while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
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
        rc = ps_coexec_append(t, &row);
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = psi_store_error(s, "export coexec");
    sqlite3_finalize(st);
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
