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

typedef struct ps_store ps_store_t;

int ps_store_open(const char *path, ps_store_t **out);
/* The connection, for export.c's queries. */
sqlite3 *ps_store_db(ps_store_t *s);
/* The file name it was opened with (the merge's messages, shard.c). */
const char *ps_store_path(const ps_store_t *s);
/* Record the database's current error message ("path: what: message"). */
int ps_store_error(ps_store_t *s, const char *what);
void ps_store_close(ps_store_t *s);

/* Record value under key on first use; later, refuse another value with
 * PS_E_MISMATCH (what names the setting in the message). */
int ps_store_meta_pin(ps_store_t *s, const char *key, const char *value, const char *what);
/* Value of key into buf: 1 found, 0 absent, < 0 error. */
int ps_store_meta_get(ps_store_t *s, const char *key, char *buf, size_t size);

/* Add a task to the plan unless present (PS_E_MISMATCH if present with
 * another spec); *done tells whether it already finished. */
int ps_store_task_plan(ps_store_t *s, const char *key, const char *kind, const char *spec, int *done);

int ps_store_begin(ps_store_t *s);
int ps_store_commit(ps_store_t *s);
void ps_store_rollback(ps_store_t *s);
int ps_store_task_done(ps_store_t *s, const char *key);

int ps_store_put_op(ps_store_t *s, const char *gpu, const char *model, int batch, int op, const char *name, int tpcs,
                    double duration_ns);
int ps_store_put_counters(ps_store_t *s, const char *gpu, const char *model, int batch, int op, int tpcs,
                          const ps_counters_t *c);
int ps_store_put_coexec(ps_store_t *s, const ps_coexec_row_t *row, int run);

int ps_store_status(ps_store_t *s, ps_campaign_status_t *out);

/* Bind a double, or NULL for NAN; step a prepared statement once and
 * finalize it (for the other files of the store). */
void ps_store_bind_num(sqlite3_stmt *st, int i, double v);
int ps_store_step_once(ps_store_t *s, sqlite3_stmt *st, const char *what);

/* store_runs.c: how measurements were taken. ps_store_open calls init. */
int ps_store_runs_init(ps_store_t *s);
/* One timed run's SM clock (NAN unknown), refused or kept; written at once,
 * outside any task transaction, so that refused runs stay on record. */
int ps_store_put_clock(ps_store_t *s, const char *task, int run, double sm_mhz, int refused);
int ps_store_put_model(ps_store_t *s, const char *gpu, const char *model, int batch, double weight_bytes,
                       double activation_bytes);
typedef void (*ps_store_model_fn)(const char *model, int batch, double weight_bytes, double activation_bytes,
                                  void *user);
int ps_store_models(ps_store_t *s, ps_store_model_fn fn, void *user);
/* Counters measured on a partition of tpcs TPCs (ps_store_put_counters
 * keeps those of the whole device). */
int ps_store_put_counters_at(ps_store_t *s, const char *gpu, const char *model, int batch, int op, int tpcs,
                             const ps_counters_t *c);
int ps_store_clock_status(ps_store_t *s, ps_campaign_status_t *out);

/* The store of an open campaign (campaign.c). */
ps_store_t *ps_campaign_store(ps_campaign_t *c);

/* All rows as tables (caller frees). Counters and the intensity derived
 * from them go on the row of each operator with the most TPCs. */
int ps_store_export_ops(ps_store_t *s, ps_ops_t **out);
int ps_store_export_coexec(ps_store_t *s, ps_coexec_t **out);

#endif
