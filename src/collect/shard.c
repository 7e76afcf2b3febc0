/* Shards of a campaign plan and the merge of campaign databases (see
 * shard.h). */
#include "collect/shard.h"

#include "common/common.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int shard_parse(const char *s, int *index, int *count)
{
    char *end;
    long k = strtol(s, &end, 10);
    if (end == s || *end != '/')
        return -1;
    const char *q = end + 1;
    long n = strtol(q, &end, 10);
    if (end == q || *end != '\0' || k < 0 || n < 1 || k >= n || n > INT_MAX)
        return -1;
    *index = (int)k;
    *count = (int)n;
    return 0;
}

int shard_mine(const ps_collect_params_t *p, int i)
{
    return p->shard_count <= 1 || i % p->shard_count == p->shard_index;
}

int shard_open(psi_store_t *s, const ps_collect_params_t *p)
{
    if (p->shard_count <= 0)
        return 0;
    if (p->shard_index < 0 || p->shard_index >= p->shard_count)
        return psi_error(PS_E_ARG, "shard %d/%d: need 0 <= K < N", p->shard_index, p->shard_count);
    char v[48];
    snprintf(v, sizeof v, "%d/%d", p->shard_index, p->shard_count);
    return psi_store_meta_pin(s, "shard", v, "shard");
}

int shard_pin_profile(psi_store_t *s, const ps_collect_params_t *p, const char *model, int batch, const int *tpcs,
                      int n)
{
    if (p->shard_count <= 0)
        return 0;
    char key[160], v[2048];
    snprintf(key, sizeof key, "plan/profile/%s/b%d", model, batch);
    size_t len = (size_t)snprintf(v, sizeof v, "runs=%d warmup=%d tpcs=", p->profile_runs, p->warmup);
    for (int i = 0; i < n && len < sizeof v; i++)
        len += (size_t)snprintf(v + len, sizeof v - len, "%s%d", i ? "," : "", tpcs[i]);
    return psi_store_meta_pin(s, key, v, "plan");
}

int shard_pin_coexec(psi_store_t *s, const ps_collect_params_t *p, const ps_coexec_plan_t *plan)
{
    if (p->shard_count <= 0)
        return 0;
    char key[200], v[2048];
    snprintf(key, sizeof key, "plan/coexec/%s.b%d+%s.b%d.s%llu", plan->hp_model, plan->hp_batch, plan->lp_model,
             plan->lp_batch, (unsigned long long)plan->seed);
    size_t len = (size_t)snprintf(v, sizeof v, "experiments=%d runs=%d seg=%d-%d warmup=%d tpcs=", plan->experiments,
                                  plan->runs, plan->seg_min, plan->seg_max, p->warmup);
    if (!plan->tpcs)
        snprintf(v + len, sizeof v - len, "all");
    for (int i = 0; plan->tpcs && i < plan->n_tpcs && len < sizeof v; i++)
        len += (size_t)snprintf(v + len, sizeof v - len, "%s%d", i ? "," : "", plan->tpcs[i]);
    return psi_store_meta_pin(s, key, v, "plan");
}

/* ------------------------------------------------------------------------ */
/* Merge                                                                     */
/* ------------------------------------------------------------------------ */

static int exec(psi_store_t *s, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(psi_store_db(s), sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    int rc = psi_error(PS_E_BACKEND, "%s: %s", psi_store_path(s), msg ? msg : "?");
    sqlite3_free(msg);
    return rc;
}

/* The first row of a query of up to three text columns, "" when absent;
 * returns 1 found, 0 not, < 0 error. */
static int first_row(psi_store_t *s, const char *sql, char out[3][256])
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(psi_store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    int r = sqlite3_step(st), found = r == SQLITE_ROW;
    for (int i = 0; i < 3; i++) {
        const unsigned char *t = found && i < sqlite3_column_count(st) ? sqlite3_column_text(st, i) : NULL;
        snprintf(out[i], 256, "%s", t ? (const char *)t : "");
    }
    sqlite3_finalize(st);
    if (r != SQLITE_ROW && r != SQLITE_DONE)
        return psi_store_error(s, "query");
    return found;
}

static long count(psi_store_t *s, const char *sql)
{
    char v[3][256];
    return first_row(s, sql, v) == 1 ? atol(v[0]) : -1;
}

static long rows_of(psi_store_t *s)
{
    return count(s, "SELECT (SELECT count(*) FROM main.ops) + (SELECT count(*) FROM main.counters) + "
                    "(SELECT count(*) FROM main.coexec)");
}

/* One source, attached as "src": checked, then copied in one transaction. */
static int merge_one(psi_store_t *d, const char *path, shard_merge_stats_t *st)
{
    char v[3][256];
    int rc = first_row(d, "SELECT value FROM src.meta WHERE key='magic'", v);
    if (rc == 0)
        return psi_error(PS_E_INPUT, "%s: not a campaign database", path);
    if (rc < 0)
        return psi_error(PS_E_INPUT, "%s: not a campaign database: %s", path, ps_last_error());
    /* Settings (gpu, seq_len, format, plans) must agree; the shard may not. */
    rc = first_row(d,
                   "SELECT a.key, a.value, b.value FROM main.meta a JOIN src.meta b ON a.key = b.key "
                   "WHERE a.value <> b.value AND a.key <> 'shard' LIMIT 1",
                   v);
    if (rc > 0)
        return psi_error(PS_E_MISMATCH, "%s: %s is '%s' there but '%s' in %s: not the same campaign", path, v[0], v[2],
                         v[1], psi_store_path(d));
    if (rc == 0)
        rc = first_row(d,
                       "SELECT a.key, a.spec, b.spec FROM main.tasks a JOIN src.tasks b ON a.key = b.key "
                       "WHERE a.spec <> b.spec OR a.kind <> b.kind LIMIT 1",
                       v);
    if (rc > 0)
        return psi_error(PS_E_MISMATCH, "%s: task %s is '%s' there but '%s' in %s: another plan", path, v[0], v[2],
                         v[1], psi_store_path(d));
    if (rc < 0)
        return rc;
    long done0 = count(d, "SELECT count(*) FROM main.tasks WHERE done = 1"), rows0 = rows_of(d);
    rc = psi_store_begin(d);
    if (rc)
        return rc;
    /* A task's rows exist only with its done mark (store.h), and the primary
     * keys reject a second copy: a task done in both keeps dest's rows. */
    static const char *const copy[] = {
        "INSERT OR IGNORE INTO main.meta SELECT key, value FROM src.meta WHERE key <> 'shard'",
        "INSERT OR IGNORE INTO main.tasks(key, kind, spec, done) SELECT key, kind, spec, 0 FROM src.tasks",
        "INSERT OR IGNORE INTO main.ops SELECT * FROM src.ops",
        "INSERT OR IGNORE INTO main.counters SELECT * FROM src.counters",
        "INSERT OR IGNORE INTO main.coexec SELECT * FROM src.coexec",
        "UPDATE main.tasks SET done = 1 WHERE done = 0 AND key IN (SELECT key FROM src.tasks WHERE done = 1)"};
    for (size_t i = 0; i < PS_ARRAY_LEN(copy) && rc == 0; i++)
        rc = exec(d, copy[i]);
    if (rc) {
        psi_store_rollback(d);
        return rc;
    }
    rc = psi_store_commit(d);
    if (rc == 0) {
        st->tasks_added += count(d, "SELECT count(*) FROM main.tasks WHERE done = 1") - done0;
        st->rows_added += rows_of(d) - rows0;
    }
    return rc;
}

int shard_merge(const char *dest, const char *const *src, int n, shard_merge_stats_t *st)
{
    memset(st, 0, sizeof *st);
    for (int i = 0; i < n; i++)
        if (access(src[i], R_OK) != 0)
            return psi_error(PS_E_IO, "%s: cannot read", src[i]);
    psi_store_t *d = NULL;
    int rc = psi_store_open(dest, &d);
    for (int i = 0; i < n && rc == 0; i++) {
        if (strcmp(src[i], dest) == 0) {
            rc = psi_error(PS_E_ARG, "%s is both a source and the destination", dest);
            break;
        }
        sqlite3_stmt *at = NULL;
        if (sqlite3_prepare_v2(psi_store_db(d), "ATTACH DATABASE ?1 AS src", -1, &at, NULL) != SQLITE_OK) {
            rc = psi_store_error(d, "attach");
            break;
        }
        sqlite3_bind_text(at, 1, src[i], -1, SQLITE_TRANSIENT);
        int r = sqlite3_step(at);
        sqlite3_finalize(at);
        if (r != SQLITE_DONE) {
            rc = psi_error(PS_E_IO, "%s: cannot open: %s", src[i], sqlite3_errmsg(psi_store_db(d)));
            break;
        }
        rc = merge_one(d, src[i], st);
        int drc = exec(d, "DETACH DATABASE src");
        rc = rc ? rc : drc;
    }
    if (rc == 0) {
        st->tasks_total = count(d, "SELECT count(*) FROM main.tasks");
        st->tasks_done = count(d, "SELECT count(*) FROM main.tasks WHERE done = 1");
    }
    psi_store_close(d);
    return rc;
}
