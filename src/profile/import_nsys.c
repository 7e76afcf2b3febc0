/*
 * Nsight Systems SQLite export to ops.csv (`nsys export --type sqlite`,
 * schema: NVIDIA's "SQLite Export Schema Reference" of the nsys export
 * documentation). Read, by column name so that column order and the columns
 * other versions add do not matter:
 *
 *   CUPTI_ACTIVITY_KIND_KERNEL  start, end (ns), deviceId, streamId,
 *                               globalPid (absent: one process),
 *                               correlationId, and the name as a StringIds
 *                               id: demangledName, else shortName, else
 *                               mangledName
 *   StringIds                   id, value
 *   TARGET_INFO_GPU             id, name (through TARGET_INFO_CUDA_DEVICE's
 *                               cudaId -> gpuId where that table exists)
 *   NVTX_EVENTS                 start, end, eventType (59 push/pop range, 60
 *                               start/end range), text or textId, globalTid
 *   CUPTI_ACTIVITY_KIND_RUNTIME correlationId, start, globalTid (the CPU
 *                               launch of each kernel, to place it in an
 *                               NVTX range)
 *
 * One process (globalPid >> 24 & 0xFFFFFF is its PID), one device and one
 * stream (or --stream all) are taken: by default those with the most kernel
 * time. The report holds several passes of the model (one a request or an
 * iteration); they are found from the NVTX ranges where the process has
 * them (the range name repeated at least twice whose ranges hold the most
 * kernel launches), else from the period of the kernel-name sequence (the
 * longest tail of the sequence that is one pass repeated: kernels before it
 * are warm-up). Passes of another kernel sequence than the most common one
 * are left out and counted. Each kernel of the pass becomes one operator
 * whose duration is its median over the passes.
 */
#include "common/common.h"
#include "profile/profile_internal.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KERNEL_TABLE "CUPTI_ACTIVITY_KIND_KERNEL"

typedef struct {
    long long rowid, start, end, corr, launch; /* launch: CPU time of the launch call, or -1 */
    long long pid;                             /* PID (from globalPid), 0 when the table has none */
    const char *name, *dev, *stream, *proc;    /* pooled */
    int pass;                                  /* pass index, -1 outside every pass */
} nkernel_t;

typedef struct {
    const char *path;
    sqlite3 *db;
    psi_strpool_t *pool;
    nkernel_t *k;
    size_t n;
} nsys_t;

static int db_error(const nsys_t *r, const char *what)
{
    return psi_error(PS_E_INPUT, "%s: %s: %s", r->path, what, sqlite3_errmsg(r->db));
}

static int has_table(const nsys_t *r, const char *table)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?", -1, &st,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

static int has_column(const nsys_t *r, const char *table, const char *col)
{
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name = ?", table);
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, col, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return found;
}

/* Column c of the row as an integer, or an error naming the table, the
 * row and the column where it is not one (NULL, text, a real). */
static int column_int(const nsys_t *r, sqlite3_stmt *st, int c, const char *table, long long rowid, long long *out)
{
    if (sqlite3_column_type(st, c) != SQLITE_INTEGER)
        return psi_error(PS_E_INPUT, "%s: %s row %lld: %s is not an integer", r->path, table, rowid,
                         sqlite3_column_name(st, c));
    *out = sqlite3_column_int64(st, c);
    return PS_OK;
}

/* One kernel row into r->k[r->n], checked. */
static int read_kernel(nsys_t *r, sqlite3_stmt *st, nkernel_t *k)
{
    long long rowid = sqlite3_column_int64(st, 0), dev = 0, stream = 0, gpid = 0, name_id = 0;
    int rc = column_int(r, st, 1, KERNEL_TABLE, rowid, &k->start);
    if (rc == PS_OK)
        rc = column_int(r, st, 2, KERNEL_TABLE, rowid, &k->end);
    if (rc == PS_OK)
        rc = column_int(r, st, 3, KERNEL_TABLE, rowid, &dev);
    if (rc == PS_OK)
        rc = column_int(r, st, 4, KERNEL_TABLE, rowid, &stream);
    if (rc == PS_OK && sqlite3_column_type(st, 5) != SQLITE_NULL)
        rc = column_int(r, st, 5, KERNEL_TABLE, rowid, &gpid);
    if (rc == PS_OK)
        rc = column_int(r, st, 7, KERNEL_TABLE, rowid, &name_id);
    if (rc != PS_OK)
        return rc;
    k->rowid = rowid;
    k->corr = sqlite3_column_type(st, 6) == SQLITE_INTEGER ? sqlite3_column_int64(st, 6) : -1;
    k->launch = -1;
    k->pass = -1;
    if (k->start < 0 || k->end < k->start || (double)(k->end - k->start) > PSI_MAX_OP_NS)
        return psi_error(PS_E_INPUT,
                         "%s: %s row %lld: start %lld, end %lld: the duration must be in 0..%.0f ns (one hour: no "
                         "kernel of a profiled pass runs longer)",
                         r->path, KERNEL_TABLE, rowid, k->start, k->end, PSI_MAX_OP_NS);
    const unsigned char *name = sqlite3_column_text(st, 8);
    if (!name || !*name)
        return psi_error(PS_E_INPUT, "%s: %s row %lld: %s %lld is not in StringIds", r->path, KERNEL_TABLE, rowid,
                         sqlite3_column_name(st, 7), name_id);
    k->pid = (gpid >> 24) & 0xFFFFFF;
    char d[32], s[32], p[32];
    snprintf(d, sizeof d, "%lld", dev);
    snprintf(s, sizeof s, "%lld", stream);
    snprintf(p, sizeof p, "%lld", k->pid);
    k->name = psi_strpool_intern(r->pool, (const char *)name);
    k->dev = psi_strpool_intern(r->pool, d);
    k->stream = psi_strpool_intern(r->pool, s);
    k->proc = psi_strpool_intern(r->pool, p);
    return k->name && k->dev && k->stream && k->proc ? PS_OK : PS_E_NOMEM;
}

/* Every kernel of the report, in start order. */
static int read_kernels(nsys_t *r, char *name_col, size_t n)
{
    if (!has_table(r, KERNEL_TABLE))
        return psi_error(PS_E_INPUT,
                         "%s: no %s table: the report holds no CUDA kernels (profile with nsys profile --trace=cuda, "
                         "then nsys export --type sqlite)",
                         r->path, KERNEL_TABLE);
    if (!has_table(r, "StringIds"))
        return psi_error(PS_E_INPUT, "%s: no StringIds table: the kernel names cannot be read", r->path);
    static const char *const names[] = {"demangledName", "shortName", "mangledName"};
    const char *nc = NULL;
    for (size_t i = 0; i < PS_ARRAY_LEN(names) && !nc; i++)
        if (has_column(r, KERNEL_TABLE, names[i]))
            nc = names[i];
    static const char *const need[] = {"start", "end", "deviceId", "streamId"};
    for (size_t i = 0; i < PS_ARRAY_LEN(need); i++)
        if (!has_column(r, KERNEL_TABLE, need[i]))
            return psi_error(PS_E_INPUT, "%s: %s has no column %s", r->path, KERNEL_TABLE, need[i]);
    if (!nc)
        return psi_error(PS_E_INPUT, "%s: %s has no kernel name column (demangledName, shortName or mangledName)",
                         r->path, KERNEL_TABLE);
    snprintf(name_col, n, "%s", nc);
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT k.rowid, k.start, k.\"end\", k.deviceId, k.streamId, %s, %s, k.%s, s.value FROM " KERNEL_TABLE
             " AS k LEFT JOIN StringIds AS s ON s.id = k.%s ORDER BY k.start, k.rowid",
             has_column(r, KERNEL_TABLE, "globalPid") ? "k.globalPid" : "NULL",
             has_column(r, KERNEL_TABLE, "correlationId") ? "k.correlationId" : "NULL", nc, nc);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_error(r, "reading " KERNEL_TABLE);
    size_t cap = 0;
    int rc = PS_OK, step;
    while (rc == PS_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        void *grown = r->k;
        if ((rc = psi_array_grow(&grown, r->n, &cap, sizeof *r->k, 1024)) != PS_OK)
            break;
        r->k = grown;
        if ((rc = read_kernel(r, st, &r->k[r->n])) == PS_OK)
            r->n++;
    }
    if (rc == PS_OK && step != SQLITE_DONE)
        rc = db_error(r, "reading " KERNEL_TABLE);
    sqlite3_finalize(st);
    if (rc == PS_OK && r->n == 0)
        rc = psi_error(PS_E_INPUT, "%s: %s is empty: no kernels to import", r->path, KERNEL_TABLE);
    return rc;
}

/* The tally of want (by key), or the busiest; an error listing the keys when
 * want names none of them. */
static int pick(const nsys_t *r, const import_tallies_t *ts, const char *what, const char *want, size_t *out)
{
    *out = SIZE_MAX;
    if (!want) {
        *out = psi_import_tally_busiest(ts, 0);
        return PS_OK;
    }
    for (size_t i = 0; i < ts->n; i++)
        if (strcmp(ts->t[i].key, want) == 0)
            *out = i;
    if (*out != SIZE_MAX)
        return PS_OK;
    char have[200] = "";
    for (size_t i = 0; i < ts->n; i++)
        psi_import_list(have, sizeof have, ts->t[i].key);
    return psi_error(PS_E_INPUT, "%s: no kernels of %s %s (%ss: %s)", r->path, what, want, what, have);
}

/* Keep the kernels of one process, device and stream(s) (the others are
 * counted in info->skipped): r->k is compacted to them. */
static int choose(nsys_t *r, const ps_import_params_t *p, ps_import_info_t *info)
{
    import_tallies_t procs = {0}, devs = {0}, streams = {0};
    int rc = PS_OK, all = p->stream && strcmp(p->stream, "all") == 0;
    size_t pi = SIZE_MAX, di = SIZE_MAX, si = SIZE_MAX;
    for (size_t i = 0; i < r->n && rc == PS_OK; i++)
        rc = psi_import_tally_add(&procs, r->k[i].proc, (double)(r->k[i].end - r->k[i].start), 0);
    if (rc == PS_OK)
        rc = pick(r, &procs, "process", p->process, &pi);
    for (size_t i = 0; i < r->n && rc == PS_OK; i++)
        if (r->k[i].proc == procs.t[pi].key)
            rc = psi_import_tally_add(&devs, r->k[i].dev, (double)(r->k[i].end - r->k[i].start), 0);
    if (rc == PS_OK)
        rc = pick(r, &devs, "device", p->device, &di);
    for (size_t i = 0; i < r->n && rc == PS_OK; i++)
        if (r->k[i].proc == procs.t[pi].key && r->k[i].dev == devs.t[di].key)
            rc = psi_import_tally_add(&streams, r->k[i].stream, (double)(r->k[i].end - r->k[i].start), 0);
    if (rc == PS_OK && !all)
        rc = pick(r, &streams, "stream", p->stream, &si);
    int *taken = rc == PS_OK ? psi_calloc(procs.n + devs.n + streams.n + 1, sizeof *taken) : NULL;
    if (rc == PS_OK && !taken)
        rc = PS_E_NOMEM;
    if (rc == PS_OK) {
        size_t m = 0;
        for (size_t i = 0; i < r->n; i++)
            if (r->k[i].proc == procs.t[pi].key && r->k[i].dev == devs.t[di].key &&
                (all || r->k[i].stream == streams.t[si].key))
                r->k[m++] = r->k[i];
        r->n = m;
        if (info) {
            snprintf(info->taken, sizeof info->taken, "process %s device %s stream %s", procs.t[pi].key, devs.t[di].key,
                     all ? "all" : streams.t[si].key);
            for (size_t s = 0; s < streams.n; s++)
                taken[s] = all || s == si;
            psi_import_tally_left(&streams, "stream", taken, info);
            memset(taken, 0, (streams.n + 1) * sizeof *taken);
            taken[di] = 1;
            psi_import_tally_left(&devs, "device", taken, info);
            memset(taken, 0, (devs.n + 1) * sizeof *taken);
            taken[pi] = 1;
            psi_import_tally_left(&procs, "process", taken, info);
        }
    }
    free(taken);
    psi_import_tallies_free(&procs);
    psi_import_tallies_free(&devs);
    psi_import_tallies_free(&streams);
    return rc;
}

/* The GPU name TARGET_INFO_GPU gives device dev (TARGET_INFO_CUDA_DEVICE's
 * cudaId -> gpuId, else TARGET_INFO_GPU.id = dev, else its only row) into
 * buf; "" when the report names none. */
static void gpu_name(const nsys_t *r, const char *dev, char *buf, size_t n)
{
    *buf = '\0';
    if (!has_table(r, "TARGET_INFO_GPU") || !has_column(r, "TARGET_INFO_GPU", "name"))
        return;
    static const char *const sql[] = {
        ("SELECT g.name FROM TARGET_INFO_CUDA_DEVICE AS d JOIN TARGET_INFO_GPU AS g ON g.id = d.gpuId "
         "WHERE d.cudaId = ?1 LIMIT 1"),
        "SELECT name FROM TARGET_INFO_GPU WHERE id = ?1 LIMIT 1",
        "SELECT name FROM TARGET_INFO_GPU WHERE (SELECT COUNT(*) FROM TARGET_INFO_GPU) = 1",
    };
    for (size_t i = 0; i < PS_ARRAY_LEN(sql) && !*buf; i++) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(r->db, sql[i], -1, &st, NULL) != SQLITE_OK) {
            sqlite3_finalize(st); /* TARGET_INFO_CUDA_DEVICE absent, or another layout */
            continue;
        }
        sqlite3_bind_int64(st, 1, strtoll(dev, NULL, 10));
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            snprintf(buf, n, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
}

/* The passes: pass p is kernels idx[off[p] .. off[p+1]) of r->k, in time
 * order, all of the most common kernel sequence. */
typedef struct {
    size_t *idx, *off;
    size_t n, len;
} passes_t;

static void passes_free(passes_t *ps)
{
    free(ps->idx);
    free(ps->off);
    memset(ps, 0, sizeof *ps);
}

/* A range of NVTX_EVENTS: its name (pooled), times and how many launches it holds. */
typedef struct {
    long long rowid, start, end;
    const char *name;
    size_t kernels;
} nrange_t;

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* The first index of sorted v[0..n) whose value is >= x. */
static size_t lower_bound(const long long *v, size_t n, long long x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* k->launch for each kernel: the CPU start of the runtime call of the same
 * correlationId (CUPTI_ACTIVITY_KIND_RUNTIME), of the taken process. */
static int read_launches(nsys_t *r)
{
    const char *rt = "CUPTI_ACTIVITY_KIND_RUNTIME";
    if (!has_table(r, rt) || !has_column(r, rt, "correlationId") || !has_column(r, rt, "start"))
        return PS_OK;
    int by_tid = has_column(r, rt, "globalTid");
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT correlationId, start FROM %s%s ORDER BY correlationId", rt,
             by_tid ? " WHERE ((globalTid >> 24) & 16777215) = ?1" : "");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_error(r, "reading CUPTI_ACTIVITY_KIND_RUNTIME");
    if (by_tid)
        sqlite3_bind_int64(st, 1, r->k[0].pid);
    long long *cs = NULL; /* pairs: correlationId, start */
    size_t n = 0, cap = 0;
    int rc = PS_OK, step;
    while (rc == PS_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        void *grown = cs;
        if ((rc = psi_array_grow(&grown, n, &cap, 2 * sizeof *cs, 1024)) != PS_OK)
            break;
        cs = grown;
        if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || sqlite3_column_type(st, 1) != SQLITE_INTEGER)
            continue; /* not a launch we can place */
        cs[2 * n] = sqlite3_column_int64(st, 0);
        cs[2 * n + 1] = sqlite3_column_int64(st, 1);
        n++;
    }
    if (rc == PS_OK && step != SQLITE_DONE)
        rc = db_error(r, "reading CUPTI_ACTIVITY_KIND_RUNTIME");
    sqlite3_finalize(st);
    for (size_t i = 0; rc == PS_OK && i < r->n; i++) {
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cs[2 * mid] < r->k[i].corr)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < n && cs[2 * lo] == r->k[i].corr && r->k[i].corr >= 0)
            r->k[i].launch = cs[2 * lo + 1];
    }
    free(cs);
    return rc;
}

/* One NVTX_EVENTS row, checked: 1 taken, 0 skipped (unterminated), or an error. */
static int read_range(const nsys_t *r, sqlite3_stmt *st, nrange_t *g)
{
    g->rowid = sqlite3_column_int64(st, 0);
    if (sqlite3_column_type(st, 2) == SQLITE_NULL)
        return 0; /* still open when the profile stopped */
    int rc = column_int(r, st, 1, "NVTX_EVENTS", g->rowid, &g->start);
    if (rc == PS_OK)
        rc = column_int(r, st, 2, "NVTX_EVENTS", g->rowid, &g->end);
    if (rc != PS_OK)
        return rc;
    if (g->end < g->start)
        return psi_error(PS_E_INPUT, "%s: NVTX_EVENTS row %lld: end %lld before start %lld", r->path, g->rowid, g->end,
                         g->start);
    const unsigned char *t = sqlite3_column_text(st, 3);
    g->name = psi_strpool_intern(r->pool, t && *t ? (const char *)t : "(unnamed)");
    g->kernels = 0;
    return g->name ? 1 : PS_E_NOMEM;
}

/* The push/pop and start/end ranges (eventType 59, 60) of the process. */
static int read_ranges(nsys_t *r, nrange_t **out, size_t *n_out)
{
    const char *t = "NVTX_EVENTS";
    *out = NULL;
    *n_out = 0;
    if (!has_table(r, t) || !has_column(r, t, "start") || !has_column(r, t, "end") || !has_column(r, t, "eventType") ||
        !has_column(r, t, "text"))
        return PS_OK;
    int by_tid = has_column(r, t, "globalTid"), ids = has_column(r, t, "textId");
    char sql[400];
    snprintf(sql, sizeof sql,
             "SELECT n.rowid, n.start, n.\"end\", COALESCE(n.text, %s) FROM NVTX_EVENTS AS n%s WHERE n.eventType IN "
             "(59, 60)%s ORDER BY n.start, n.rowid",
             ids ? "s.value" : "NULL", ids ? " LEFT JOIN StringIds AS s ON s.id = n.textId" : "",
             by_tid ? " AND ((n.globalTid >> 24) & 16777215) = ?1" : "");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_error(r, "reading NVTX_EVENTS");
    if (by_tid)
        sqlite3_bind_int64(st, 1, r->k[0].pid);
    nrange_t *g = NULL;
    size_t n = 0, cap = 0;
    int rc = PS_OK, step;
    while (rc == PS_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        void *grown = g;
        if ((rc = psi_array_grow(&grown, n, &cap, sizeof *g, 256)) != PS_OK)
            break;
        g = grown;
        int got = read_range(r, st, &g[n]);
        if (got < 0)
            rc = got;
        n += got > 0;
    }
    if (rc == PS_OK && step != SQLITE_DONE)
        rc = db_error(r, "reading NVTX_EVENTS");
    sqlite3_finalize(st);
    if (rc != PS_OK) {
        free(g);
        return rc;
    }
    *out = g;
    *n_out = n;
    return PS_OK;
}

/* Passes from NVTX: the name, held by at least two ranges with launches,
 * whose ranges hold the most launches (the fewest ranges on a tie: the
 * outer of nested names). k->pass is set; *name is NULL when no name fits. */
static int nvtx_passes(nsys_t *r, const char **name)
{
    *name = NULL;
    nrange_t *g = NULL;
    size_t ng = 0, nl = 0;
    int rc = read_launches(r);
    if (rc == PS_OK)
        rc = read_ranges(r, &g, &ng);
    long long *launch = rc == PS_OK && ng ? psi_malloc(r->n * sizeof *launch) : NULL;
    for (size_t i = 0; launch && i < r->n; i++)
        if (r->k[i].launch >= 0)
            launch[nl++] = r->k[i].launch;
    if (launch)
        qsort(launch, nl, sizeof *launch, cmp_ll);
    for (size_t i = 0; launch && i < ng; i++)
        g[i].kernels = lower_bound(launch, nl, g[i].end + 1) - lower_bound(launch, nl, g[i].start);
    size_t best_cover = 0, best_ranges = 0;
    for (size_t i = 0; launch && i < ng; i++) {
        size_t cover = 0, ranges = 0;
        for (size_t j = 0; j < ng; j++)
            if (g[j].name == g[i].name && g[j].kernels) {
                cover += g[j].kernels;
                ranges++;
            }
        if (ranges >= 2 && (cover > best_cover || (cover == best_cover && ranges < best_ranges))) {
            *name = g[i].name;
            best_cover = cover;
            best_ranges = ranges;
        }
    }
    int pass = 0;
    for (size_t j = 0; *name && j < ng; j++) {
        if (g[j].name != *name || !g[j].kernels)
            continue;
        for (size_t i = 0; i < r->n; i++)
            if (r->k[i].pass < 0 && r->k[i].launch >= g[j].start && r->k[i].launch <= g[j].end)
                r->k[i].pass = pass;
        pass++;
    }
    free(launch);
    free(g);
    return rc;
}

/* Passes from the kernel names alone: the longest tail of the sequence that
 * is one block repeated at least twice (prefix function of the reversed
 * sequence); the kernels before it are warm-up. A tail under half the
 * kernels is no evidence: then the whole report is one pass. */
static int period_passes(nsys_t *r, size_t *per_out)
{
    size_t n = r->n, *pi = psi_malloc(n * sizeof *pi);
    if (!pi)
        return PS_E_NOMEM;
#define REV(i) (r->k[n - 1 - (i)].name)
    pi[0] = 0;
    for (size_t i = 1; i < n; i++) {
        size_t j = pi[i - 1];
        while (j > 0 && REV(i) != REV(j))
            j = pi[j - 1];
        pi[i] = j + (REV(i) == REV(j));
    }
#undef REV
    size_t len = n, per = n;
    for (size_t L = n; L >= 2; L--) {
        size_t p = L - pi[L - 1];
        if (L % p == 0 && L / p >= 2) {
            len = L;
            per = p;
            break;
        }
    }
    if (len * 2 < n) {
        len = n;
        per = n;
    }
    for (size_t i = n - len; i < n; i++)
        r->k[i].pass = (int)((i - (n - len)) / per);
    free(pi);
    *per_out = per;
    return PS_OK;
}

static uint64_t pass_hash(const nsys_t *r, const size_t *idx, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint64_t)(uintptr_t)r->k[idx[i]].name) * 1099511628211ULL;
    return h ^ len;
}

static int same_pass(const nsys_t *r, const size_t *a, size_t na, const size_t *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (r->k[a[i]].name != r->k[b[i]].name)
            return 0;
    return 1;
}

/* Group the kernels by k->pass (ids 0..np) and keep the passes of the most
 * common kernel sequence (the latest on a tie) in *ps. */
static int keep_common(const nsys_t *r, int np, passes_t *ps, size_t *dropped)
{
    size_t *idx = psi_malloc((r->n + 1) * sizeof *idx), *off = psi_calloc((size_t)np + 2, sizeof *off);
    uint64_t *h = psi_malloc(((size_t)np + 1) * sizeof *h);
    int rc = idx && off && h ? PS_OK : PS_E_NOMEM;
    for (size_t i = 0; rc == PS_OK && i < r->n; i++)
        if (r->k[i].pass >= 0)
            off[r->k[i].pass + 1]++;
    for (int p = 0; rc == PS_OK && p < np; p++)
        off[p + 1] += off[p];
    size_t *fill = rc == PS_OK ? psi_malloc(((size_t)np + 1) * sizeof *fill) : NULL;
    if (rc == PS_OK && !fill)
        rc = PS_E_NOMEM;
    for (int p = 0; rc == PS_OK && p < np; p++)
        fill[p] = off[p];
    for (size_t i = 0; rc == PS_OK && i < r->n; i++)
        if (r->k[i].pass >= 0)
            idx[fill[r->k[i].pass]++] = i;
    int best = -1;
    size_t best_count = 0;
    for (int p = 0; rc == PS_OK && p < np; p++)
        h[p] = pass_hash(r, idx + off[p], off[p + 1] - off[p]);
    for (int p = 0; rc == PS_OK && p < np; p++) {
        size_t count = 0;
        for (int q = 0; q < np; q++)
            count += h[q] == h[p] && same_pass(r, idx + off[p], off[p + 1] - off[p], idx + off[q], off[q + 1] - off[q]);
        if (count >= best_count) {
            best = p;
            best_count = count;
        }
    }
    if (rc == PS_OK) {
        /* compact the kept passes to the front of idx */
        size_t len = off[best + 1] - off[best], m = 0;
        ps->n = 0;
        ps->len = len;
        for (int p = 0; p < np; p++) {
            if (!(h[p] == h[best] && same_pass(r, idx + off[p], off[p + 1] - off[p], idx + off[best], len)))
                continue;
            memmove(idx + m, idx + off[p], len * sizeof *idx);
            m += len;
            ps->n++;
        }
        for (size_t p = 0; p <= ps->n; p++)
            off[p] = p * len;
        *dropped = (size_t)np - ps->n;
        ps->idx = idx;
        ps->off = off;
        idx = NULL;
        off = NULL;
    }
    free(idx);
    free(off);
    free(h);
    free(fill);
    return rc;
}

/* Find the passes (NVTX, else the period) and keep those of the most common
 * kernel sequence; how says which, for info->format. */
static int find_passes(nsys_t *r, passes_t *ps, char *how, size_t n, ps_import_info_t *info)
{
    const char *range = NULL;
    size_t per = 0, dropped = 0, outside = 0;
    int rc = nvtx_passes(r, &range);
    if (rc == PS_OK && !range)
        rc = period_passes(r, &per);
    int np = 0;
    for (size_t i = 0; i < r->n; i++) {
        np = r->k[i].pass + 1 > np ? r->k[i].pass + 1 : np;
        outside += r->k[i].pass < 0;
    }
    if (rc == PS_OK)
        rc = keep_common(r, np, ps, &dropped);
    if (rc != PS_OK)
        return rc;
    if (range)
        snprintf(how, n, "NVTX range '%.40s': %zu passes of %zu kernels", range, ps->n, ps->len);
    else
        snprintf(how, n, "kernel-name period %zu: %zu pass%s", per, ps->n, ps->n == 1 ? "" : "es");
    if (info && outside)
        psi_import_note(info->skipped, sizeof info->skipped, "%zu kernels %s", outside,
                        range ? "outside the passes' NVTX ranges" : "before the repeated passes (warm-up)");
    if (info && dropped)
        psi_import_note(info->skipped, sizeof info->skipped, "%zu passes of another kernel sequence", dropped);
    return PS_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One operator per kernel of the pass: its median duration over the passes. */
static int emit_medians(const nsys_t *r, const passes_t *ps, const ps_import_params_t *q, ps_ops_t *t)
{
    double *d = psi_malloc((ps->n ? ps->n : 1) * sizeof *d);
    int rc = d ? PS_OK : PS_E_NOMEM;
    for (size_t j = 0; rc == PS_OK && j < ps->len; j++) {
        for (size_t p = 0; p < ps->n; p++) {
            const nkernel_t *k = &r->k[ps->idx[ps->off[p] + j]];
            d[p] = (double)(k->end - k->start);
        }
        qsort(d, ps->n, sizeof *d, cmp_double);
        double med = ps->n % 2 ? d[ps->n / 2] : (d[ps->n / 2 - 1] + d[ps->n / 2]) / 2;
        rc = psi_import_add(t, q, (int)j, r->k[ps->idx[j]].name, med, NULL);
    }
    free(d);
    return rc;
}

static int import_nsys(nsys_t *r, const ps_import_params_t *p, ps_ops_t **out, ps_import_info_t *info)
{
    char name_col[32], gpu[96], how[128];
    int rc = read_kernels(r, name_col, sizeof name_col);
    if (rc == PS_OK)
        rc = choose(r, p, info);
    ps_import_params_t q = *p;
    if (rc == PS_OK) {
        gpu_name(r, r->k[0].dev, gpu, sizeof gpu);
        rc = psi_import_resolve_gpu(p, gpu, &q, info);
    }
    passes_t ps = {0};
    if (rc == PS_OK)
        rc = find_passes(r, &ps, how, sizeof how, info);
    ps_ops_t *t = rc == PS_OK ? ps_ops_new() : NULL;
    if (rc == PS_OK && !t)
        rc = PS_E_NOMEM;
    if (rc == PS_OK)
        rc = emit_medians(r, &ps, &q, t);
    passes_free(&ps);
    if (rc != PS_OK) {
        ps_ops_free(t);
        return rc;
    }
    if (info)
        snprintf(info->format, sizeof info->format, "nsys SQLite, %.13s, %.64s", name_col, how);
    return psi_import_finish(&t, r->path, out, info);
}

int psi_import_nsys_file(const char *path, const ps_import_params_t *p, ps_ops_t **out, ps_import_info_t *info)
{
    FILE *f = NULL;
    int rc = psi_import_open(path, p, out, &f);
    if (rc != PS_OK)
        return rc;
    char magic[16] = {0};
    size_t got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    if (got < sizeof magic || memcmp(magic, "SQLite format 3", 16) != 0)
        return psi_error(PS_E_INPUT,
                         "%s: not an SQLite database: give the export of nsys export --type sqlite REPORT.nsys-rep, "
                         "not the .nsys-rep itself",
                         path);
    nsys_t r = {.path = path, .pool = psi_strpool_new()};
    if (!r.pool)
        return PS_E_NOMEM;
    if (sqlite3_open_v2(path, &r.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        rc = db_error(&r, "cannot open");
    if (rc == PS_OK)
        rc = import_nsys(&r, p, out, info);
    sqlite3_close(r.db);
    psi_strpool_free(r.pool);
    free(r.k);
    return rc;
}
