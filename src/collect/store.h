/*
 * The campaign database (SQLite). Work is cut into tasks (one profile at one
 * TPC count, one counter pass, one co-execution experiment); a task's rows
 * and the mark that it is done are written in one transaction, so a process
 * killed at any instant leaves each task either whole or absent, and the
 * next run redoes exactly the absent ones. Primary keys on every table make
 * a duplicated row an error rather than a silent copy.
 */
#ifndef PS_COLLECT_STORE_H
#define PS_COLLECT_STORE_H

#include "profile/tables.h"

#include <sqlite3.h>
#include <stddef.h>

typedef struct psi_store psi_store_t;

int psi_store_open(const char *path, psi_store_t **out);
/* The connection, for export.c's queries. */
sqlite3 *psi_store_db(psi_store_t *s);
/* The file name it was opened with (the merge's messages, shard.c). */
const char *psi_store_path(const psi_store_t *s);
/* Record the database's current error message ("path: what: message"). */
int psi_store_error(psi_store_t *s, const char *what);
void psi_store_close(psi_store_t *s);

/* Record value under key on first use; later, refuse another value with
 * PS_E_MISMATCH (what names the setting in the message). */
int psi_store_meta_pin(psi_store_t *s, const char *key, const char *value, const char *what);
/* Value of key into buf: 1 found, 0 absent, < 0 error. */
int psi_store_meta_get(psi_store_t *s, const char *key, char *buf, size_t size);

/* Add a task to the plan unless present (PS_E_MISMATCH if present with
 * another spec); *done tells whether it already finished. */
int psi_store_task_plan(psi_store_t *s, const char *key, const char *kind, const char *spec, int *done);

int psi_store_begin(psi_store_t *s);
int psi_store_commit(psi_store_t *s);
void psi_store_rollback(psi_store_t *s);
int psi_store_task_done(psi_store_t *s, const char *key);

/* Which measurement of one operator a row of ops, counters or counters_tpc
 * holds: operator op of model at batch on gpu, on tpcs TPCs. */
typedef struct {
    const char *gpu, *model;
    int batch, op, tpcs;
} psi_op_key_t;

int psi_store_put_op(psi_store_t *s, const psi_op_key_t *k, const char *name, double duration_ns);
int psi_store_put_counters(psi_store_t *s, const psi_op_key_t *k, const psi_counters_t *c);
/* Counters measured on a partition of k->tpcs TPCs, in the table
 * counters_tpc of store_runs.c (psi_store_put_counters keeps those of the
 * whole device). */
int psi_store_put_counters_at(psi_store_t *s, const psi_op_key_t *k, const psi_counters_t *c);
int psi_store_put_coexec(psi_store_t *s, const psi_coexec_row_t *row, int run);

int psi_store_status(psi_store_t *s, ps_campaign_status_t *out);

/* Bind a double, or NULL for NAN; step a prepared statement once and
 * finalize it (for the other files of the store). */
void psi_store_bind_num(sqlite3_stmt *st, int i, double v);
int psi_store_step_once(psi_store_t *s, sqlite3_stmt *st, const char *what);

/* store_runs.c: how measurements were taken (psi_store_open makes its
 * tables). */
/* One timed run's SM clock (NAN unknown), refused or kept; written at once,
 * outside any task transaction, so that refused runs stay on record. */
int psi_store_put_clock(psi_store_t *s, const char *task, int run, double sm_mhz, int refused);
int psi_store_put_model(psi_store_t *s, const char *gpu, const char *model, int batch, double weight_bytes,
                        double activation_bytes);
typedef ps_campaign_model_fn psi_store_model_fn; /* public (pairsight_collect.h) */
int psi_store_models(psi_store_t *s, psi_store_model_fn fn, void *user);

/* The store of an open campaign (campaign.c). */
psi_store_t *psi_campaign_store(ps_campaign_t *c);

/* The tasks of main with fewer rows than their spec promises (ops=N
 * operators, runs=N runs): a done mark without its rows is not done. The
 * rows of each task are found by the key they make (campaign.c). */
#define PSI_STORE_SHORT_TASKS                                                                                          \
    "WITH have(key, n) AS ("                                                                                           \
    "SELECT 'profile/' || model || '/b' || batch || '/t' || tpcs, count(*) FROM main.ops GROUP BY 1 "                  \
    "UNION ALL SELECT 'counters/' || model || '/b' || batch, count(*) FROM main.counters GROUP BY 1 "                  \
    "UNION ALL SELECT 'counters/' || model || '/b' || batch || '/t' || tpcs, count(*) FROM main.counters_tpc "         \
    "GROUP BY 1 UNION ALL SELECT 'coexec/' || experiment, count(*) FROM main.coexec GROUP BY 1) "                      \
    "SELECT t.key FROM main.tasks t LEFT JOIN have h ON h.key = t.key WHERE coalesce(h.n, 0) < CASE t.kind "           \
    "WHEN 'coexec' THEN CAST(substr(t.spec, instr(t.spec, 'runs=') + 5) AS INTEGER) "                                  \
    "ELSE CAST(substr(t.spec, instr(t.spec, 'ops=') + 4) AS INTEGER) END"

#endif
