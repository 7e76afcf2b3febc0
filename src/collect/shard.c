/* Shards of a campaign plan and the merge of campaign databases (see
 * shard.h). */
#include "collect/shard.h"

#include "common/common.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */
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
static int first_row(psi_store_t *s, const char *sql, char out[4][256])
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(psi_store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
        return psi_store_error(s, "prepare");
    int r = sqlite3_step(st), found = r == SQLITE_ROW;
    for (int i = 0; i < 4; i++) {
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
    char v[4][256];
    return first_row(s, sql, v) == 1 ? atol(v[0]) : -1;
}

static long rows_of(psi_store_t *s)
{
    return count(s, "SELECT (SELECT count(*) FROM main.ops) + (SELECT count(*) FROM main.counters) + "
                    "(SELECT count(*) FROM main.counters_tpc) + (SELECT count(*) FROM main.coexec)");
}

int psi_shard_parse(const char *s, int *index, int *n_shards)
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
    *n_shards = (int)n;
    return 0;
}

int psi_shard_mine(const ps_collect_params_t *p, int i)
{
    return p->shard_count <= 1 || i % p->shard_count == p->shard_index;
}

int psi_shard_open(psi_store_t *s, const ps_collect_params_t *p)
{
    char old[64];
    int had = psi_store_meta_get(s, "shard", old, sizeof old);
    if (had < 0)
        return had;
    /* A shard's database resumes only as that shard: without --shard it
     * would run the whole plan into it. */
    if (p->shard_count <= 0)
        return had ? psi_error(PS_E_MISMATCH, "%s holds shard %s of a campaign: resume it with --shard %s",
                               psi_store_path(s), old, old)
                   : 0;
    if (p->shard_index < 0 || p->shard_index >= p->shard_count)
        return psi_error(PS_E_ARG, "shard %d/%d: need 0 <= K < N", p->shard_index, p->shard_count);
    /* Nor does a database of the whole plan (or of merged shards) become a
     * shard: its tasks are not the shard's. */
    long tasks = had ? 0 : count(s, "SELECT count(*) FROM main.tasks");
    if (tasks != 0)
        return tasks < 0 ? PS_E_IO
                         : psi_error(PS_E_MISMATCH,
                                     "%s holds %ld tasks made without --shard (the whole plan or merged shards): "
                                     "run --shard K/N into a new database",
                                     psi_store_path(s), tasks);
    char v[48];
    snprintf(v, sizeof v, "%d/%d", p->shard_index, p->shard_count);
    return psi_store_meta_pin(s, "shard", v, "shard");
}

int psi_shard_pin_profile(psi_store_t *s, const ps_collect_params_t *p, const char *model, int batch, const int *tpcs,
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

int psi_shard_pin_coexec(psi_store_t *s, const ps_collect_params_t *p, const ps_coexec_plan_t *plan)
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

/* A source's identity: the GPU in its meta table, which its rows name too.
 * Without it, its rows could join another GPU's campaign. 0, or the error. */
static int check_identity(psi_store_t *d, const char *path)
{
    char v[4][256], w[4][256];
    int rc = first_row(d, "SELECT value FROM src.meta WHERE key = 'gpu' AND value <> ''", v);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return psi_error(PS_E_INPUT,
                         "%s: the campaign database has no gpu in its meta table: without its identity it "
                         "cannot be merged",
                         path);
    static const char *const tables[] = {"ops", "counters", "counters_tpc", "coexec", "models"};
    for (size_t i = 0; i < PS_ARRAY_LEN(tables) && rc >= 0; i++) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "SELECT gpu FROM src.%s WHERE gpu IS NOT (SELECT value FROM src.meta WHERE key = 'gpu') LIMIT 1",
                 tables[i]);
        rc = first_row(d, sql, w);
        if (rc == 1)
            return psi_error(PS_E_MISMATCH, "%s: table %s holds rows of gpu '%s' in a campaign of gpu '%s'", path,
                             tables[i], w[0], v[0]);
    }
    return rc < 0 ? rc : 0;
}

/* Whether the source attached as "src" may be merged into d: a campaign
 * database of the same GPU, seq_len and plans, whose tasks of the same name
 * have the same spec. 0, or the error. */
static int check_source(psi_store_t *d, const char *path)
{
    char v[4][256];
    int rc = first_row(d, "SELECT value FROM src.meta WHERE key='magic'", v);
    if (rc == 0 || (rc == 1 && strcmp(v[0], "pairsight-campaign") != 0))
        return psi_error(PS_E_INPUT, "%s: not a campaign database (no pairsight magic in its meta table)", path);
    if (rc < 0)
        return psi_error(PS_E_INPUT, "%s: not a campaign database (it has no meta table)", path);
    rc = check_identity(d, path);
    if (rc)
        return rc;
    /* Settings (gpu, seq_len, format, plans) must agree, the shard may not;
     * and so must every task both have planned. Each query returns the
     * first disagreement: key, value here, value there. */
    static const struct {
        const char *sql, *what, *verdict;
    } same[] = {
        {"SELECT a.key, a.value, b.value FROM main.meta a JOIN src.meta b ON a.key = b.key "
         "WHERE a.value <> b.value AND a.key <> 'shard' LIMIT 1",
         "", "not the same campaign"},
        {"SELECT a.key, a.spec, b.spec FROM main.tasks a JOIN src.tasks b ON a.key = b.key "
         "WHERE a.spec <> b.spec OR a.kind <> b.kind LIMIT 1",
         "task ", "another plan"},
    };
    for (size_t i = 0; i < PS_ARRAY_LEN(same) && rc == 0; i++) {
        rc = first_row(d, same[i].sql, v);
        if (rc > 0)
            return psi_error(PS_E_MISMATCH, "%s: %s%s is '%s' there but '%s' in %s: %s", path, same[i].what, v[0], v[2],
                             v[1], psi_store_path(d), same[i].verdict);
    }
    return rc < 0 ? rc : 0;
}

#define OPS_COLS "gpu, model, batch, op, name, tpcs, duration_ns"
#define CTR_COLS                                                                                                       \
    "gpu, model, batch, op, tpcs, dram_bytes, l2_bytes, stall_long_scoreboard, stall_lg_throttle, "                    \
    "stall_mio_throttle, sm_pct, mem_pct"
#define COEXEC_COLS                                                                                                    \
    "experiment, run, gpu, hp_model, hp_batch, hp_start, hp_len, lp_model, lp_batch, lp_start, lp_len, hp_tpcs, "      \
    "lp_tpcs, hp_ns, lp_ns, mechanism"
#define MODEL_COLS "gpu, model, batch, weight_bytes, activation_bytes"
#define CLOCK_COLS "task, run, sm_mhz, refused"
#define COPY(table, cols) "INSERT OR IGNORE INTO main." table "(" cols ") SELECT " cols " FROM src." table

/* The tasks the source marks done whose rows are not all there stay not
 * done (counted and the first named in st), and the rows they have are
 * dropped, so that collect runs them again whole. 0, or the error. */
static int drop_short(psi_store_t *d, shard_merge_stats_t *st)
{
    char v[4][256];
    int rc = first_row(d,
                       "SELECT count(*), coalesce(min(key), '') FROM src.tasks WHERE done = 1 AND key IN "
                       "(SELECT key FROM main.tasks WHERE done = 0)",
                       v);
    if (rc < 0)
        return rc;
    if (atol(v[0]) > 0) {
        st->tasks_short += atol(v[0]);
        if (!st->short_first[0])
            snprintf(st->short_first, sizeof st->short_first, "%s", v[1]);
    }
#define NOT_DONE " IN (SELECT key FROM main.tasks WHERE done = 0)"
    static const char *const drop[] = {
        "DELETE FROM main.ops WHERE 'profile/' || model || '/b' || batch || '/t' || tpcs" NOT_DONE,
        "DELETE FROM main.counters WHERE 'counters/' || model || '/b' || batch" NOT_DONE,
        "DELETE FROM main.counters_tpc WHERE 'counters/' || model || '/b' || batch || '/t' || tpcs" NOT_DONE,
        "DELETE FROM main.coexec WHERE 'coexec/' || experiment" NOT_DONE};
#undef NOT_DONE
    for (size_t i = 0; i < PS_ARRAY_LEN(drop) && rc >= 0; i++)
        rc = exec(d, drop[i]);
    return rc < 0 ? rc : 0;
}

/* One source, attached as "src": checked, then copied in one transaction. */
static int merge_one(psi_store_t *d, const char *path, shard_merge_stats_t *st)
{
    int rc = check_source(d, path);
    if (rc)
        return rc;
    long done0 = count(d, "SELECT count(*) FROM main.tasks WHERE done = 1"), rows0 = rows_of(d);
    rc = psi_store_begin(d);
    if (rc)
        return rc;
    /* A task's rows exist only with its done mark (store.h), and the primary
     * keys reject a second copy: a task done in both keeps dest's rows. The
     * shards merged are recorded (merged/shard/K/N), so that a missing one
     * is told. */
    static const char *const copy[] = {
        "INSERT OR IGNORE INTO main.meta(key, value) SELECT key, value FROM src.meta WHERE key <> 'shard'",
        "INSERT OR IGNORE INTO main.meta(key, value) SELECT 'merged/shard/' || value, 'merged' FROM src.meta "
        "WHERE key = 'shard'",
        "INSERT OR IGNORE INTO main.tasks(key, kind, spec, done) SELECT key, kind, spec, 0 FROM src.tasks",
        /* Columns by name in every copy: a source whose table has the same
         * columns in another order is copied column to column. */
        COPY("ops", OPS_COLS), COPY("counters", CTR_COLS), COPY("coexec", COEXEC_COLS),
        /* Counters on partitions (ops.csv's *_tpc columns), device memory
         * of each model, and the clock of each timed run: the clocks of a
         * task come from one database, so a second merge adds none. A task
         * not done here takes the source's clocks whole: its refused runs
         * are committed before it is done (campaign.c), so a merge of an
         * unfinished shard may have copied some of them already. */
        COPY("counters_tpc", CTR_COLS), COPY("models", MODEL_COLS),
        ("DELETE FROM main.clocks WHERE task IN (SELECT task FROM src.clocks)"
         " AND task IN (SELECT key FROM main.tasks WHERE done = 0)"), /* one statement in two lines */
        "INSERT INTO main.clocks(" CLOCK_COLS ") SELECT " CLOCK_COLS " FROM src.clocks WHERE task NOT IN "
        "(SELECT task FROM main.clocks)",
        /* A task is done where the source says so and its rows are here. */
        "UPDATE main.tasks SET done = 1 WHERE done = 0 AND key IN (SELECT key FROM src.tasks WHERE done = 1)"
        " AND key NOT IN (" PSI_STORE_SHORT_TASKS ")"};
    for (size_t i = 0; i < PS_ARRAY_LEN(copy) && rc == 0; i++)
        rc = exec(d, copy[i]);
    if (rc == 0)
        rc = drop_short(d, st);
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

/* The settings of the sources checked so far, in the temporary table
 * temp.seen: a source that disagrees with an earlier one is refused before
 * either is copied (0, or PS_E_MISMATCH naming both). */
static int check_across(psi_store_t *d, const char *path)
{
    char v[4][256];
    int rc = exec(d, "CREATE TEMP TABLE IF NOT EXISTS seen(key TEXT PRIMARY KEY, value TEXT, path TEXT)");
    if (rc == 0)
        rc = first_row(d,
                       "SELECT s.key, b.value, s.value, s.path FROM temp.seen s JOIN src.meta b ON s.key = b.key "
                       "WHERE s.value <> b.value AND b.key <> 'shard' LIMIT 1",
                       v);
    if (rc > 0)
        return psi_error(PS_E_MISMATCH, "%s: %s is '%s' there but '%s' in %s: not the same campaign", path, v[0], v[1],
                         v[2], v[3]);
    sqlite3_stmt *st = NULL;
    if (rc == 0 && sqlite3_prepare_v2(psi_store_db(d),
                                      "INSERT OR IGNORE INTO temp.seen SELECT key, value, ?1 FROM src.meta "
                                      "WHERE key <> 'shard'",
                                      -1, &st, NULL) != SQLITE_OK)
        return psi_store_error(d, "prepare");
    if (rc == 0) {
        sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
        rc = psi_store_step_once(d, st, "check");
    }
    return rc < 0 ? rc : 0;
}

/* Attach src as "src", run merge_one (merge) or the checks, detach. */
static int with_source(psi_store_t *d, const char *src, int merge, shard_merge_stats_t *st)
{
    sqlite3_stmt *at = NULL;
    if (sqlite3_prepare_v2(psi_store_db(d), "ATTACH DATABASE ?1 AS src", -1, &at, NULL) != SQLITE_OK)
        return psi_store_error(d, "attach");
    sqlite3_bind_text(at, 1, src, -1, SQLITE_TRANSIENT);
    int r = sqlite3_step(at);
    sqlite3_finalize(at);
    if (r != SQLITE_DONE)
        return psi_error(PS_E_INPUT, "%s: cannot open it as a campaign database: %s", src,
                         sqlite3_errmsg(psi_store_db(d)));
    int rc = merge ? merge_one(d, src, st) : check_source(d, src);
    if (rc == 0 && !merge)
        rc = check_across(d, src);
    int drc = exec(d, "DETACH DATABASE src");
    return rc ? rc : drc;
}

/* Each source readable, a file, and not dest itself (by device and inode,
 * so that ./ALL.db or a link to it is caught too), before anything is
 * written. */
static int check_paths(const char *dest, const char *const *src, int n)
{
    struct stat ds, ss;
    int have_dest = stat(dest, &ds) == 0;
    for (int i = 0; i < n; i++) {
        if (stat(src[i], &ss) != 0)
            return psi_error(PS_E_IO, "%s: cannot read: %s", src[i], strerror(errno));
        if (S_ISDIR(ss.st_mode))
            return psi_error(PS_E_IO, "%s: cannot read: it is a folder, not a campaign database", src[i]);
        if (access(src[i], R_OK) != 0)
            return psi_error(PS_E_IO, "%s: cannot read: %s", src[i], strerror(errno));
        if (have_dest && ss.st_dev == ds.st_dev && ss.st_ino == ds.st_ino)
            return psi_error(PS_E_ARG, "%s is both a source and the destination (%s): give --db a new file", src[i],
                             dest);
    }
    return 0;
}

/* "K/N, ..." for the shards of each count N recorded in d (its own and
 * those merged) that are not there; none when the shards of some N are all
 * there (shards of 3 and of 4 of one plan, merged: those of 3 make it). */
void psi_shard_missing(psi_store_t *d, shard_merge_stats_t *st)
{
    sqlite3_stmt *q = NULL;
    st->missing[0] = '\0';
    st->n_missing = 0;
    const char *sql = "WITH s(v) AS (SELECT substr(key, 14) FROM main.meta WHERE key LIKE 'merged/shard/%' "
                      "UNION SELECT value FROM main.meta WHERE key = 'shard'), "
                      "p(k, n) AS (SELECT CAST(substr(v, 1, instr(v, '/') - 1) AS INTEGER), "
                      "CAST(substr(v, instr(v, '/') + 1) AS INTEGER) FROM s) "
                      "SELECT n, count(DISTINCT k) FROM p GROUP BY n ORDER BY n";
    if (sqlite3_prepare_v2(psi_store_db(d), sql, -1, &q, NULL) != SQLITE_OK)
        return;
    size_t len = 0;
    int complete = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        long n = sqlite3_column_int64(q, 0), have = sqlite3_column_int64(q, 1);
        complete |= have >= n;
        st->n_missing += have < n ? n - have : 0;
        /* The first few missing by name: at most 16 + have lookups. */
        for (long k = 0, named = 0; k < n && named < 16 && have < n; k++) {
            char key[64], sqlk[256], v[4][256];
            snprintf(key, sizeof key, "%ld/%ld", k, n);
            snprintf(sqlk, sizeof sqlk,
                     "SELECT 1 FROM main.meta WHERE key = 'merged/shard/%s' OR (key = 'shard' AND value = '%s')", key,
                     key);
            if (first_row(d, sqlk, v) != 0)
                continue;
            named++;
            if (len < sizeof st->missing)
                len += (size_t)snprintf(st->missing + len, sizeof st->missing - len, "%s%s", len ? ", " : "", key);
        }
    }
    sqlite3_finalize(q);
    if (complete) {
        st->n_missing = 0;
        st->missing[0] = '\0';
    } else if (st->n_missing > 16 && len < sizeof st->missing)
        snprintf(st->missing + len, sizeof st->missing - len, ", ...");
}

int psi_shard_merge(const char *dest, const char *const *src, int n, shard_merge_stats_t *st)
{
    memset(st, 0, sizeof *st);
    int rc = check_paths(dest, src, n);
    if (rc)
        return rc;
    struct stat ds;
    int created = stat(dest, &ds) != 0;
    out_lock_t *lock = NULL;
    rc = psi_out_lock_acquire(dest, 0, &lock);
    psi_store_t *d = NULL;
    if (rc == 0)
        rc = psi_store_open(dest, &d);
    /* Every source is checked against dest first: a bad or foreign one
     * stops the merge before anything is written. */
    for (int i = 0; i < n && rc == 0; i++)
        rc = with_source(d, src[i], 0, st);
    int merged = 0;
    for (; merged < n && rc == 0; merged++)
        rc = with_source(d, src[merged], 1, st);
    if (rc && merged > 1 && !created) {
        char why[1024];
        snprintf(why, sizeof why, "%s", ps_last_error());
        rc = psi_error(rc, "%s (the %d sources before it were merged into %s)", why, merged - 1, dest);
    }
    if (rc == 0) {
        st->tasks_total = count(d, "SELECT count(*) FROM main.tasks");
        st->tasks_done = count(d, "SELECT count(*) FROM main.tasks WHERE done = 1");
        psi_shard_missing(d, st);
    }
    psi_store_close(d);
    /* A database this merge created and could not fill is not left behind. */
    if (rc && created && d) {
        static const char *const tail[] = {"", "-wal", "-shm", "-journal"};
        for (size_t i = 0; i < PS_ARRAY_LEN(tail); i++) {
            char f[4096];
            snprintf(f, sizeof f, "%s%s", dest, tail[i]);
            unlink(f);
        }
    }
    psi_out_lock_release(lock);
    return rc;
}
