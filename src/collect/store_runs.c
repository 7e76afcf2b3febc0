/*
 * The campaign database's record of how each measurement was taken, beside
 * the rows of store.c: the SM clock of every timed run (refused ones too),
 * the device memory of every model laid out, and counters measured on a
 * partition rather than the whole device. Their tables are made by
 * psi_store_open (store.c) with CREATE TABLE IF NOT EXISTS, so a database
 * of an earlier version gains them.
 */
#include "collect/store.h"

#include "common/common.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

int psi_store_put_clock(psi_store_t *s, const char *task, int run, double sm_mhz, int refused)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(psi_store_db(s), "INSERT INTO clocks(task, run, sm_mhz, refused) VALUES(?1, ?2, ?3, ?4)", -1,
                           &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    sqlite3_bind_text(st, 1, task, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 2, run);
    psi_store_bind_num(st, 3, sm_mhz);
    sqlite3_bind_int(st, 4, refused);
    return psi_store_step_once(s, st, "insert into clocks");
}

int psi_store_put_model(psi_store_t *s, const char *gpu, const char *model, int batch, double weight_bytes,
                        double activation_bytes)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(psi_store_db(s),
                           "INSERT OR REPLACE INTO models(gpu, model, batch, weight_bytes, activation_bytes)"
                           " VALUES(?1, ?2, ?3, ?4, ?5)",
                           -1, &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    sqlite3_bind_text(st, 1, gpu, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 3, batch);
    sqlite3_bind_double(st, 4, weight_bytes);
    sqlite3_bind_double(st, 5, activation_bytes);
    return psi_store_step_once(s, st, "insert into models");
}

int psi_store_models(psi_store_t *s, psi_store_model_fn fn, void *user)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(psi_store_db(s),
                           "SELECT model, batch, weight_bytes, activation_bytes FROM models ORDER BY model, batch", -1,
                           &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *m = sqlite3_column_text(st, 0);
        fn(m ? (const char *)m : "", sqlite3_column_int(st, 1), sqlite3_column_double(st, 2),
           sqlite3_column_double(st, 3), user);
    }
    int rc = r == SQLITE_DONE ? 0 : psi_store_error(s, "models");
    sqlite3_finalize(st);
    return rc;
}

/* The clock figures of ps_campaign_status_t. */
static int psi_store_clock_status(psi_store_t *s, ps_campaign_status_t *out)
{
    char buf[64];
    out->sm_clock_mhz = out->clock_min_mhz = out->clock_max_mhz = NAN;
    int r = psi_store_meta_get(s, "sm_clock_mhz", buf, sizeof buf);
    if (r < 0)
        return r;
    if (r == 1)
        out->sm_clock_mhz = atof(buf);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(psi_store_db(s),
                           "SELECT MIN(CASE WHEN refused=0 THEN sm_mhz END), MAX(CASE WHEN refused=0 THEN"
                           " sm_mhz END), SUM(refused) FROM clocks",
                           -1, &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    int rc = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) != SQLITE_NULL)
            out->clock_min_mhz = sqlite3_column_double(st, 0);
        if (sqlite3_column_type(st, 1) != SQLITE_NULL)
            out->clock_max_mhz = sqlite3_column_double(st, 1);
        out->clock_refused = (long)sqlite3_column_int64(st, 2);
    } else {
        rc = psi_store_error(s, "clocks");
    }
    sqlite3_finalize(st);
    return rc;
}

/* The status of the whole campaign: task and row counts (store.c's tables)
 * and the clocks of psi_store_clock_status. */
static int count(psi_store_t *s, const char *sql, long *out)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(psi_store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    int rc = 0;
    if (sqlite3_step(st) == SQLITE_ROW)
        *out = (long)sqlite3_column_int64(st, 0);
    else
        rc = psi_store_error(s, sql);
    sqlite3_finalize(st);
    return rc;
}

int psi_store_status(psi_store_t *s, ps_campaign_status_t *out)
{
    memset(out, 0, sizeof *out);
    int rc = count(s, "SELECT COUNT(*) FROM tasks", &out->tasks_total);
    if (rc == 0)
        /* A done mark without its rows (a damaged or hand-edited store) is not
         * counted as done. */
        rc = count(s, "SELECT COUNT(*) FROM tasks WHERE done=1 AND key NOT IN (" PSI_STORE_SHORT_TASKS ")",
                   &out->tasks_done);
    if (rc == 0)
        rc = count(s, "SELECT COUNT(*) FROM ops", &out->op_rows);
    if (rc == 0)
        rc = count(s, "SELECT COUNT(*) FROM counters", &out->counter_rows);
    if (rc == 0)
        rc = count(s, "SELECT COUNT(*) FROM coexec", &out->coexec_rows);
    char buf[64];
    if (rc == 0 && psi_store_meta_get(s, "gpu", out->gpu, sizeof out->gpu) < 0)
        rc = PS_E_BACKEND;
    if (rc == 0) {
        int r = psi_store_meta_get(s, "seq_len", buf, sizeof buf);
        if (r < 0)
            rc = r;
        else if (r == 1)
            out->seq_len = atoi(buf);
    }
    if (rc == 0)
        rc = psi_store_clock_status(s, out);
    return rc;
}
