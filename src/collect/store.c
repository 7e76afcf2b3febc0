/* The campaign database (see store.h). */
#include "collect/store.h"

#include "common/common.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define STORE_MAGIC "pairsight-campaign"
#define STORE_VERSION "1"

struct psi_store {
    sqlite3 *db;
    char *path;
    int fresh; /* no table yet when opened: a new database */
};

sqlite3 *psi_store_db(psi_store_t *s) { return s->db; }

const char *psi_store_path(const psi_store_t *s) { return s->path; }

static const char schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS tasks(key TEXT PRIMARY KEY, kind TEXT NOT NULL,"
    " spec TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS ops(gpu TEXT NOT NULL, model TEXT NOT NULL, batch INTEGER NOT NULL,"
    " op INTEGER NOT NULL, name TEXT NOT NULL, tpcs INTEGER NOT NULL, duration_ns REAL NOT NULL,"
    " PRIMARY KEY(gpu, model, batch, op, tpcs));"
    "CREATE TABLE IF NOT EXISTS counters(gpu TEXT NOT NULL, model TEXT NOT NULL,"
    " batch INTEGER NOT NULL, op INTEGER NOT NULL, tpcs INTEGER NOT NULL, dram_bytes REAL,"
    " l2_bytes REAL, stall_long_scoreboard REAL, stall_lg_throttle REAL, stall_mio_throttle REAL,"
    " sm_pct REAL, mem_pct REAL, PRIMARY KEY(gpu, model, batch, op));"
    "CREATE TABLE IF NOT EXISTS coexec(experiment TEXT NOT NULL, run INTEGER NOT NULL,"
    " gpu TEXT NOT NULL, hp_model TEXT NOT NULL, hp_batch INTEGER NOT NULL,"
    " hp_start INTEGER NOT NULL, hp_len INTEGER NOT NULL, lp_model TEXT NOT NULL,"
    " lp_batch INTEGER NOT NULL, lp_start INTEGER NOT NULL, lp_len INTEGER NOT NULL,"
    " hp_tpcs INTEGER NOT NULL, lp_tpcs INTEGER NOT NULL, hp_ns REAL NOT NULL,"
    " lp_ns REAL NOT NULL, mechanism TEXT, PRIMARY KEY(experiment, run));";

/* SQLite's failures in our words: what happened to the campaign, not the
 * engine's text ("UNIQUE constraint failed: tasks.key"). */
static const char *sqlite_words(int code)
{
    switch (code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return "the database is busy: another process holds it (a second collector?)";
    case SQLITE_CONSTRAINT: return "a record is already there (another collector wrote it at the same time?)";
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return "the file is damaged or not a campaign database";
    case SQLITE_FULL: return "the disk is full";
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN: return "the database cannot be written (permissions or a read-only folder)";
    case SQLITE_IOERR: return "an input/output error";
    case SQLITE_NOMEM: return "out of memory";
    default: return "the database engine failed";
    }
}

int psi_store_error(psi_store_t *s, const char *what)
{
    int code = sqlite3_extended_errcode(s->db);
    return psi_error((code & 0xff) == SQLITE_NOMEM ? PS_E_NOMEM : PS_E_IO, "%s: %s: %s (SQLite code %d)", s->path, what,
                     sqlite_words(code), code);
}

/* Run one statement with text parameters: 1 when it returned a row (the
 * first column of the first one into first, unless first is NULL), 0 when
 * none, < 0 on error. */
static int exec_text(psi_store_t *s, const char *sql, const char *const *args, int n_args, char *first,
                     size_t first_size)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    for (int i = 0; i < n_args; i++)
        sqlite3_bind_text(st, i + 1, args[i], -1, SQLITE_TRANSIENT);
    int found = 0, r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        if (first && !found) {
            const unsigned char *t = sqlite3_column_text(st, 0);
            snprintf(first, first_size, "%s", t ? (const char *)t : "");
        }
        found = 1;
    }
    int rc = found;
    if (r != SQLITE_DONE)
        rc = psi_store_error(s, sql);
    sqlite3_finalize(st);
    return rc;
}

int psi_store_meta_get(psi_store_t *s, const char *key, char *buf, size_t size)
{
    const char *args[] = {key};
    return exec_text(s, "SELECT value FROM meta WHERE key=?1", args, 1, buf, size);
}

int psi_store_meta_pin(psi_store_t *s, const char *key, const char *value, const char *what)
{
    char old[256];
    int rc = psi_store_meta_get(s, key, old, sizeof old);
    if (rc < 0)
        return rc;
    if (rc == 1)
        return strcmp(old, value) == 0 ? 0
                                       : psi_error(PS_E_MISMATCH, "%s: the campaign was made with %s %s, not %s",
                                                   s->path, what, old, value);
    const char *args[] = {key, value};
    return exec_text(s, "INSERT INTO meta(key, value) VALUES(?1, ?2)", args, 2, NULL, 0);
}

static int not_a_db(psi_store_t *s)
{
    int code = sqlite3_errcode(s->db);
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
        return psi_error(PS_E_INPUT, "%s: not a campaign database (not an SQLite file, or a damaged one)", s->path);
    return psi_store_error(s, "cannot read");
}

/* An SQLite database of another program (tables, but no campaign meta) is
 * refused before the schema is added to it: 0, or PS_E_INPUT. */
static int foreign_check(psi_store_t *s)
{
    sqlite3_stmt *st = NULL;
    const char *q = "SELECT (SELECT count(*) FROM sqlite_master),"
                    " (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta')";
    if (sqlite3_prepare_v2(s->db, q, -1, &st, NULL) != SQLITE_OK)
        return not_a_db(s);
    int r = sqlite3_step(st), objects = 0, meta = 0;
    if (r == SQLITE_ROW) {
        objects = sqlite3_column_int(st, 0);
        meta = sqlite3_column_int(st, 1);
    }
    sqlite3_finalize(st);
    if (r != SQLITE_ROW)
        return not_a_db(s);
    if (objects > 0 && !meta)
        return psi_error(PS_E_INPUT, "%s: not a campaign database: an SQLite database without pairsight's tables",
                         s->path);
    s->fresh = objects == 0;
    return 0;
}

/* The tables of store_runs.c, added to a database of an earlier version. */
static const char runs_schema[] =
    "CREATE TABLE IF NOT EXISTS clocks(task TEXT NOT NULL, run INTEGER NOT NULL,"
    " sm_mhz REAL, refused INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS models(gpu TEXT NOT NULL, model TEXT NOT NULL,"
    " batch INTEGER NOT NULL, weight_bytes REAL NOT NULL, activation_bytes REAL NOT NULL,"
    " PRIMARY KEY(gpu, model, batch));"
    "CREATE TABLE IF NOT EXISTS counters_tpc(gpu TEXT NOT NULL, model TEXT NOT NULL,"
    " batch INTEGER NOT NULL, op INTEGER NOT NULL, tpcs INTEGER NOT NULL, dram_bytes REAL,"
    " l2_bytes REAL, stall_long_scoreboard REAL, stall_lg_throttle REAL, stall_mio_throttle REAL,"
    " sm_pct REAL, mem_pct REAL, PRIMARY KEY(gpu, model, batch, op, tpcs));";

static int runs_init(psi_store_t *s)
{
    if (sqlite3_exec(psi_store_db(s), runs_schema, NULL, NULL, NULL) == SQLITE_OK)
        return 0;
    return psi_store_error(s, "not a campaign database");
}

int psi_store_open(const char *path, psi_store_t **out)
{
    *out = NULL;
    psi_store_t *s = psi_calloc(1, sizeof *s);
    if (!s)
        return PS_E_NOMEM;
    s->path = psi_strdup(path);
    int rc = s->path ? 0 : PS_E_NOMEM;
    if (rc == 0 && sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
        rc = s->db ? psi_store_error(s, "cannot open") : psi_error(PS_E_NOMEM, "%s: out of memory", path);
    if (rc == 0) {
        /* Another process (a status query, a second collector) may hold the
         * lock for a moment. */
        sqlite3_busy_timeout(s->db, 10000);
        rc = foreign_check(s);
    }
    /* A meta table with rows but no magic is another program's, refused
     * before the schema touches it; an empty one is ours, left by a process
     * killed between the schema and the first pin (the next open finishes
     * it). */
    if (rc == 0 && !s->fresh) {
        char magic[64];
        int found = psi_store_meta_get(s, "magic", magic, sizeof magic);
        if (found == 0) {
            int rows = exec_text(s, "SELECT 1 FROM meta LIMIT 1", NULL, 0, NULL, 0);
            rc = rows < 0 ? rows : 0;
            if (rows > 0)
                rc = psi_error(PS_E_INPUT, "%s: not a campaign database: its meta table has no pairsight magic", path);
        } else if (found < 0)
            rc = found;
    }
    if (rc == 0) {
        char *msg = NULL;
        int e = sqlite3_exec(s->db, schema, NULL, NULL, &msg);
        sqlite3_free(msg);
        if (e == SQLITE_NOTADB || e == SQLITE_CORRUPT || e == SQLITE_ERROR)
            rc = psi_error(PS_E_INPUT, "%s: not a campaign database", path);
        else if (e != SQLITE_OK)
            rc = psi_store_error(s, "opening");
    }
    if (rc == 0)
        rc = psi_store_meta_pin(s, "magic", STORE_MAGIC, "magic");
    if (rc == 0)
        rc = psi_store_meta_pin(s, "version", STORE_VERSION, "format version");
    if (rc == 0)
        rc = runs_init(s);
    if (rc) {
        psi_store_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void psi_store_close(psi_store_t *s)
{
    if (!s)
        return;
    sqlite3_close(s->db);
    free(s->path);
    free(s);
}

int psi_store_task_plan(psi_store_t *s, const char *key, const char *kind, const char *spec, int *done)
{
    sqlite3_stmt *st = NULL;
    *done = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT spec, done FROM tasks WHERE key=?1", -1, &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    int r = sqlite3_step(st), rc = 0;
    if (r == SQLITE_ROW) {
        const char *old = (const char *)sqlite3_column_text(st, 0);
        if (!old || strcmp(old, spec) != 0)
            rc = psi_error(PS_E_MISMATCH,
                           "%s: task %s was planned as '%s', now '%s' (another campaign with the "
                           "same names: use another seed or database)",
                           s->path, key, old ? old : "", spec);
        *done = sqlite3_column_int(st, 1);
    } else if (r != SQLITE_DONE) {
        rc = psi_store_error(s, "tasks");
    }
    sqlite3_finalize(st);
    if (rc || r == SQLITE_ROW)
        return rc;
    const char *args[] = {key, kind, spec};
    return exec_text(s, "INSERT INTO tasks(key, kind, spec) VALUES(?1, ?2, ?3)", args, 3, NULL, 0);
}

int psi_store_begin(psi_store_t *s)
{
    return sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 : psi_store_error(s, "begin");
}

int psi_store_commit(psi_store_t *s)
{
    return sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : psi_store_error(s, "commit");
}

void psi_store_rollback(psi_store_t *s) { sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL); }

int psi_store_task_done(psi_store_t *s, const char *key)
{
    const char *args[] = {key};
    int rc = exec_text(s, "UPDATE tasks SET done=1 WHERE key=?1", args, 1, NULL, 0);
    if (rc == 0 && sqlite3_changes(s->db) != 1)
        rc = psi_error(PS_E_BACKEND, "%s: task %s is not planned", s->path, key);
    return rc;
}

/* Bind a double, or NULL for NAN (an unmeasured counter). */
static void bind_num(sqlite3_stmt *st, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_double(st, i, v);
}

static int step_once(psi_store_t *s, sqlite3_stmt *st, const char *what)
{
    int r = sqlite3_step(st);
    int rc = r == SQLITE_DONE ? 0 : psi_store_error(s, what);
    sqlite3_finalize(st);
    return rc;
}

void psi_store_bind_num(sqlite3_stmt *st, int i, double v) { bind_num(st, i, v); }

int psi_store_step_once(psi_store_t *s, sqlite3_stmt *st, const char *what) { return step_once(s, st, what); }

/* Prepare an insert whose ?1..?5 are the operator row k (gpu, model,
 * batch, op, tpcs), and bind them. */
static int prepare_op_row(psi_store_t *s, const char *sql, const psi_op_key_t *k, sqlite3_stmt **st)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(*st, 1, k->gpu, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(*st, 2, k->model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(*st, 3, k->batch);
    sqlite3_bind_int(*st, 4, k->op);
    sqlite3_bind_int(*st, 5, k->tpcs);
    return 0;
}

int psi_store_put_op(psi_store_t *s, const psi_op_key_t *k, const char *name, double duration_ns)
{
    sqlite3_stmt *st = NULL;
    if (prepare_op_row(s,
                       "INSERT INTO ops(gpu, model, batch, op, tpcs, name, duration_ns)"
                       " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                       k, &st) != 0)
        return psi_store_error(s, "prepare");
    sqlite3_bind_text(st, 6, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 7, duration_ns);
    return step_once(s, st, "insert into ops");
}

/* One operator's counters into table: counters (measured on the whole
 * device) or counters_tpc (on a partition), which have the same columns. */
static int put_counters_into(psi_store_t *s, const char *table, const psi_op_key_t *k, const psi_counters_t *c)
{
    char sql[400], what[64];
    snprintf(sql, sizeof sql,
             "INSERT INTO %s(gpu, model, batch, op, tpcs, dram_bytes, l2_bytes,"
             " stall_long_scoreboard, stall_lg_throttle, stall_mio_throttle, sm_pct,"
             " mem_pct) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
             table);
    snprintf(what, sizeof what, "insert into %s", table);
    sqlite3_stmt *st = NULL;
    if (prepare_op_row(s, sql, k, &st) != 0)
        return psi_store_error(s, "prepare");
    /* In the order of the columns, psi_counter_metrics' order. */
    const double v[] = {
        c->dram_bytes, c->l2_bytes, c->stall_long_scoreboard, c->stall_lg_throttle, c->stall_mio_throttle,
        c->sm_pct,     c->mem_pct};
    for (int i = 0; i < (int)PS_ARRAY_LEN(v); i++)
        bind_num(st, 6 + i, v[i]);
    return step_once(s, st, what);
}

int psi_store_put_counters(psi_store_t *s, const psi_op_key_t *k, const psi_counters_t *c)
{
    return put_counters_into(s, "counters", k, c);
}

int psi_store_put_counters_at(psi_store_t *s, const psi_op_key_t *k, const psi_counters_t *c)
{
    return put_counters_into(s, "counters_tpc", k, c);
}

int psi_store_put_coexec(psi_store_t *s, const psi_coexec_row_t *row, int run)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO coexec(experiment, run, gpu, hp_model, hp_batch, hp_start,"
                           " hp_len, lp_model, lp_batch, lp_start, lp_len, hp_tpcs, lp_tpcs, hp_ns,"
                           " lp_ns, mechanism) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
                           " ?12, ?13, ?14, ?15, ?16)",
                           -1, &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    sqlite3_bind_text(st, 1, row->experiment, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 2, run);
    sqlite3_bind_text(st, 3, row->gpu, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, row->hp_model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 5, row->hp_batch);
    sqlite3_bind_int(st, 6, row->hp_start);
    sqlite3_bind_int(st, 7, row->hp_len);
    sqlite3_bind_text(st, 8, row->lp_model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 9, row->lp_batch);
    sqlite3_bind_int(st, 10, row->lp_start);
    sqlite3_bind_int(st, 11, row->lp_len);
    sqlite3_bind_int(st, 12, row->hp_tpcs);
    sqlite3_bind_int(st, 13, row->lp_tpcs);
    sqlite3_bind_double(st, 14, row->hp_ns);
    sqlite3_bind_double(st, 15, row->lp_ns);
    if (row->mechanism)
        sqlite3_bind_text(st, 16, row->mechanism, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 16);
    return step_once(s, st, "insert into coexec");
}
