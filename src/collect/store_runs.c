/*
 * The campaign database's record of how each measurement was taken, beside
 * the rows of store.c: the SM clock of every timed run (refused ones too),
 * the device memory of every model laid out, and counters measured on a
 * partition rather than the whole device. Tables are added with CREATE
 * TABLE IF NOT EXISTS, so a database of an earlier version gains them.
 */
#include "collect/store.h"

#include "common/common.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS clocks(task TEXT NOT NULL, run INTEGER NOT NULL,"
    " sm_mhz REAL, refused INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS models(gpu TEXT NOT NULL, model TEXT NOT NULL,"
    " batch INTEGER NOT NULL, weight_bytes REAL NOT NULL, activation_bytes REAL NOT NULL,"
    " PRIMARY KEY(gpu, model, batch));"
    "CREATE TABLE IF NOT EXISTS counters_tpc(gpu TEXT NOT NULL, model TEXT NOT NULL,"
    " batch INTEGER NOT NULL, op INTEGER NOT NULL, tpcs INTEGER NOT NULL, dram_bytes REAL,"
    " l2_bytes REAL, stall_long_scoreboard REAL, stall_lg_throttle REAL, stall_mio_throttle REAL,"
    " sm_pct REAL, mem_pct REAL, PRIMARY KEY(gpu, model, batch, op, tpcs));";

int psi_store_runs_init(psi_store_t *s)
{
    if (sqlite3_exec(psi_store_db(s), schema, NULL, NULL, NULL) == SQLITE_OK)
        return 0;
    return psi_store_error(s, "not a campaign database");
}

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
int psi_store_clock_status(psi_store_t *s, ps_campaign_status_t *out)
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
