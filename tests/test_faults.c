/* Error paths under fault injection (built with PS_FAULT_INJECTION, as
 * scripts/test.sh --sanitize does; ASan then finds any leak). Failed one at
 * a time: the n-th allocation (ours, cJSON's and SQLite's, routed through
 * the hook here; XGBoost's C++ operator new, interposed by faults_new.cpp),
 * the n-th write to an output stream, its flush, fsync, rename, and the
 * n-th write or sync of SQLite (a VFS that wraps the default one). In load,
 * save, train, co-location model save and load and the collector's store,
 * each call returns PS_E_NOMEM or PS_E_IO with a message, gives no
 * half-made handle and leaves no partial output: the old file stays byte
 * for byte, and a campaign database keeps whole tasks only. */
#include "common/common.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testhelp.h" /* after sqlite3.h: th_query_long */

/* faults_new.cpp's operator new asks here whether to fail. */
int fault_new_now(void);
int fault_new_now(void) { return psi_fault(PSI_FAULT_NEW); }

/* ---- cJSON's and SQLite's allocators through the hook ---- */

static void *cj_malloc(size_t n) { return psi_fault(PSI_FAULT_ALLOC) ? NULL : malloc(n); }

/* SQLite wants the size of each allocation back: it is kept in front. */
static void *sq_malloc(int n)
{
    sqlite3_int64 *p = psi_fault(PSI_FAULT_ALLOC) ? NULL : malloc((size_t)n + 8);
    if (!p)
        return NULL;
    p[0] = n;
    return p + 1;
}
static void sq_free(void *p)
{
    if (p)
        free((sqlite3_int64 *)p - 1);
}
static void *sq_realloc(void *p, int n)
{
    sqlite3_int64 *q = psi_fault(PSI_FAULT_ALLOC) ? NULL : realloc((sqlite3_int64 *)p - 1, (size_t)n + 8);
    if (!q)
        return NULL;
    q[0] = n;
    return q + 1;
}
static int sq_size(void *p) { return p ? (int)((sqlite3_int64 *)p)[-1] : 0; }
static int sq_roundup(int n) { return (n + 7) & ~7; }
static int sq_init(void *u) { return (void)u, SQLITE_OK; }
static void sq_shutdown(void *u) { (void)u; }

/* ---- a VFS that fails the n-th write or sync (PSI_FAULT_IO) ---- */

typedef struct {
    sqlite3_file base;
    sqlite3_file *real; /* right after this struct */
} ffile_t;
static sqlite3_vfs *real_vfs;
#define REAL(f) (((ffile_t *)(f))->real)
#define FWD(f, m, ...) REAL(f)->pMethods->m(REAL(f), __VA_ARGS__)

static int f_close(sqlite3_file *f) { return REAL(f)->pMethods->xClose(REAL(f)); }
static int f_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o) { return FWD(f, xRead, b, n, o); }
static int f_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
    return psi_fault(PSI_FAULT_IO) ? SQLITE_IOERR_WRITE : FWD(f, xWrite, b, n, o);
}
static int f_truncate(sqlite3_file *f, sqlite3_int64 n) { return FWD(f, xTruncate, n); }
static int f_sync(sqlite3_file *f, int flags)
{
    return psi_fault(PSI_FAULT_IO) ? SQLITE_IOERR_FSYNC : FWD(f, xSync, flags);
}
static int f_size(sqlite3_file *f, sqlite3_int64 *n) { return FWD(f, xFileSize, n); }
static int f_lock(sqlite3_file *f, int l) { return FWD(f, xLock, l); }
static int f_unlock(sqlite3_file *f, int l) { return FWD(f, xUnlock, l); }
static int f_reserved(sqlite3_file *f, int *r) { return FWD(f, xCheckReservedLock, r); }
static int f_control(sqlite3_file *f, int op, void *a) { return FWD(f, xFileControl, op, a); }
static int f_sector(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int f_device(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int f_shm_map(sqlite3_file *f, int i, int sz, int ext, void volatile **p)
{
    return FWD(f, xShmMap, i, sz, ext, p);
}
static int f_shm_lock(sqlite3_file *f, int o, int n, int fl) { return FWD(f, xShmLock, o, n, fl); }
static void f_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int f_shm_unmap(sqlite3_file *f, int del) { return FWD(f, xShmUnmap, del); }
static const sqlite3_io_methods fault_io = {.iVersion = 2,
                                            .xClose = f_close,
                                            .xRead = f_read,
                                            .xWrite = f_write,
                                            .xTruncate = f_truncate,
                                            .xSync = f_sync,
                                            .xFileSize = f_size,
                                            .xLock = f_lock,
                                            .xUnlock = f_unlock,
                                            .xCheckReservedLock = f_reserved,
                                            .xFileControl = f_control,
                                            .xSectorSize = f_sector,
                                            .xDeviceCharacteristics = f_device,
                                            .xShmMap = f_shm_map,
                                            .xShmLock = f_shm_lock,
                                            .xShmBarrier = f_shm_barrier,
                                            .xShmUnmap = f_shm_unmap};

static int v_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
    (void)v;
    ffile_t *p = (ffile_t *)f;
    p->real = (sqlite3_file *)(p + 1);
    int rc = real_vfs->xOpen(real_vfs, name, p->real, flags, out_flags);
    f->pMethods = p->real->pMethods ? &fault_io : NULL;
    return rc;
}
static int v_delete(sqlite3_vfs *v, const char *n, int sync) { return (void)v, real_vfs->xDelete(real_vfs, n, sync); }
static int v_access(sqlite3_vfs *v, const char *n, int fl, int *r)
{
    return (void)v, real_vfs->xAccess(real_vfs, n, fl, r);
}
static int v_full(sqlite3_vfs *v, const char *n, int k, char *o)
{
    return (void)v, real_vfs->xFullPathname(real_vfs, n, k, o);
}
static int v_random(sqlite3_vfs *v, int n, char *o) { return (void)v, real_vfs->xRandomness(real_vfs, n, o); }
static int v_sleep(sqlite3_vfs *v, int us) { return (void)v, real_vfs->xSleep(real_vfs, us); }
static int v_time(sqlite3_vfs *v, double *t) { return (void)v, real_vfs->xCurrentTime(real_vfs, t); }
static int v_error(sqlite3_vfs *v, int n, char *o) { return (void)v, real_vfs->xGetLastError(real_vfs, n, o); }
static int v_time64(sqlite3_vfs *v, sqlite3_int64 *t) { return (void)v, real_vfs->xCurrentTimeInt64(real_vfs, t); }
static sqlite3_vfs fault_vfs;

/* Before anything else: SQLite takes its allocator before it starts. */
static void test_install_hooks(void)
{
    /* No OpenMP pool in this process, so that its children (in_child) fork
     * from one thread (a child of a process with libgomp's pool hung in
     * XGBoost's model load). libgomp reads the variable when it is loaded:
     * the program starts again with it. */
    if (!getenv("OMP_NUM_THREADS") || strcmp(getenv("OMP_NUM_THREADS"), "1") != 0) {
        setenv("OMP_NUM_THREADS", "1", 1);
        fflush(NULL);
        execl("/proc/self/exe", "test_faults", (char *)NULL);
        CHECK_MSG(0, "cannot start again with OMP_NUM_THREADS=1");
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    cJSON_Hooks h = {cj_malloc, free};
    cJSON_InitHooks(&h);
    static const sqlite3_mem_methods mm = {sq_malloc,  sq_free, sq_realloc,  sq_size,
                                           sq_roundup, sq_init, sq_shutdown, NULL};
    CHECK(sqlite3_config(SQLITE_CONFIG_MALLOC, &mm) == SQLITE_OK);
    CHECK(sqlite3_initialize() == SQLITE_OK);
    real_vfs = sqlite3_vfs_find(NULL);
    CHECK(real_vfs && real_vfs->iVersion >= 2);
    fault_vfs = (sqlite3_vfs){.iVersion = 2,
                              .szOsFile = (int)sizeof(ffile_t) + real_vfs->szOsFile,
                              .mxPathname = real_vfs->mxPathname,
                              .zName = "psi-faults",
                              .xOpen = v_open,
                              .xDelete = v_delete,
                              .xAccess = v_access,
                              .xFullPathname = v_full,
                              .xRandomness = v_random,
                              .xSleep = v_sleep,
                              .xCurrentTime = v_time,
                              .xGetLastError = v_error,
                              .xCurrentTimeInt64 = v_time64};
    CHECK(sqlite3_vfs_register(&fault_vfs, 1) == SQLITE_OK);
}

/* The n of a sweep over the events of a call: every one up to 64, then
 * steps of an eighth, so that a call of many thousands is swept in a few
 * hundred tries (the last event always among them). */
static long sweep_next(long n, long total)
{
    long next = n < 64 ? n + 1 : n + n / 8;
    return n < total && next > total ? total : next;
}

/* C++ allocations fail in a child process, one per try: XGBoost calls
 * std::terminate for some (an allocation inside its noexcept code, such as
 * the CPU count it reads from cgroups for every DMatrix and booster it
 * creates), which faults_new.cpp turns into exit 42, counted here apart.
 * Anything else the child does wrong (a check, a leak, a crash) fails. */
static long new_tries, new_terminated, new_slice_leaks;
/* Set by a child whose failure came from XGBoosterSlice: XGBoost leaks the
 * half-copied booster when an allocation fails inside it (its own objects;
 * every other child is checked for leaks at exit). */
static int xgb_slice_failed;
static void in_child(const char *what, long nth, void (*body)(void *ctx, long nth), void *ctx)
{
    fflush(NULL);
    int before = th_failed;
    pid_t pid = fork();
    if (pid == 0) {
        alarm(120); /* a child that hangs fails */
        body(ctx, nth);
        fflush(NULL);
        if (xgb_slice_failed && th_failed == before)
            _exit(43);
        exit(th_failed != before);
    }
    int st = 0;
    new_tries++;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        st = -1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 42)
        new_terminated++;
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 43)
        new_slice_leaks++;
    else
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s, C++ allocation #%ld: child status %d", what, nth, st);
}

static const char *OUT = "/tmp/psi_test_faults.out";

/* No "OUT.tmp.<pid>" beside OUT. */
static int no_temp(void)
{
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", OUT, (long)getpid());
    return access(tmp, F_OK) != 0;
}

/* Nothing at OUT and no temporary file. */
static int no_output(void) { return access(OUT, F_OK) != 0 && no_temp(); }

static int failed_well(int rc) { return (rc == PS_E_NOMEM || rc == PS_E_IO) && ps_last_error()[0] != '\0'; }

static void disarm(void) { psi_fault_inject(0, 0); }

/* The bytes of path (NULL when it cannot be read); *n their count. */
static unsigned char *slurp(const char *path, size_t *n)
{
    unsigned char *b = NULL;
    *n = 0;
    return psi_file_read_all(path, &b, n) == 0 ? b : NULL;
}

typedef int (*save_fn)(const void *obj, const char *path);
typedef int (*load_fn)(const char *path, void **out);
typedef void (*free_fn)(void *obj);

/* OUT holds exactly old[n]. */
static int is_old(const unsigned char *old, size_t n)
{
    size_t m = 0;
    unsigned char *b = slurp(OUT, &m);
    int same = b && m == n && memcmp(b, old, n) == 0;
    free(b);
    return same;
}

/* One save of obj over OUT (which holds old[n]) with the nth event of kind
 * failing: PS_E_NOMEM/PS_E_IO with a message naming the step, and OUT still
 * old byte for byte; or PS_OK, and OUT the same bytes (a failure must not
 * give a shorter file that saves "fine"). The fsync of the folder (FSYNC
 * 2) comes after the rename: the file is then whole and the call says so. */
static void save_once(const char *what, save_fn save, const void *obj, const unsigned char *old, size_t n,
                      psi_fault_t kind, long nth, const char *step)
{
    psi_fault_arm(kind, nth);
    if (kind == PSI_FAULT_WRITE || nth == LONG_MAX)
        psi_fault_arm(PSI_FAULT_WRITE, kind == PSI_FAULT_WRITE ? nth : LONG_MAX); /* unbuffered */
    int rc = save(obj, OUT);
    disarm();
    if (rc == PS_OK)
        CHECK_MSG(is_old(old, n) && no_temp(), "%s: event %d #%ld failed, yet saved a different file", what, kind, nth);
    else
        CHECK_MSG(failed_well(rc) && (!step || strstr(ps_last_error(), step)) && is_old(old, n) && no_temp(),
                  "%s: event %d #%ld: rc %d: %s", what, kind, nth, rc, ps_last_error());
}

typedef struct {
    const char *what;
    save_fn save;
    const void *obj;
    const unsigned char *old;
    size_t n;
} save_ctx_t;
static void save_new_body(void *ctx, long nth)
{
    save_ctx_t *c = ctx;
    save_once(c->what, c->save, c->obj, c->old, c->n, PSI_FAULT_NEW, nth, NULL);
}

/* Every failing step of a save, one at a time. */
static void save_faults(const char *what, save_fn save, const void *obj)
{
    remove(OUT);
    CHECK_OK(save(obj, OUT));
    size_t n = 0;
    unsigned char *old = slurp(OUT, &n);
    CHECK(old != NULL && n > 0);
    if (!old)
        return;
    long total[PSI_FAULT_KINDS];
    psi_fault_arm(PSI_FAULT_ALLOC, LONG_MAX);
    psi_fault_arm(PSI_FAULT_NEW, LONG_MAX);
    psi_fault_arm(PSI_FAULT_WRITE, LONG_MAX);
    CHECK_OK(save(obj, OUT));
    for (int k = 0; k < PSI_FAULT_KINDS; k++)
        total[k] = psi_fault_seen((psi_fault_t)k);
    disarm();
    CHECK(is_old(old, n));
    long tries = 0;
    static const psi_fault_t sweep[] = {PSI_FAULT_ALLOC, PSI_FAULT_WRITE};
    static const char *const sweep_step[] = {NULL, "write failed"};
    for (size_t s = 0; s < PS_ARRAY_LEN(sweep); s++)
        for (long k = 1; k <= total[sweep[s]]; k = sweep_next(k, total[sweep[s]]), tries++)
            save_once(what, save, obj, old, n, sweep[s], k, sweep_step[s]);
    save_ctx_t c = {what, save, obj, old, n};
    for (long k = 1; k <= total[PSI_FAULT_NEW]; k = sweep_next(k, total[PSI_FAULT_NEW]), tries++)
        in_child(what, k, save_new_body, &c);
    save_once(what, save, obj, old, n, PSI_FAULT_FLUSH, 1, "flush failed");
    save_once(what, save, obj, old, n, PSI_FAULT_FSYNC, 1, "fsync failed");
    save_once(what, save, obj, old, n, PSI_FAULT_RENAME, 1, "rename");
    psi_fault_arm(PSI_FAULT_FSYNC, 2);
    int rc = save(obj, OUT);
    disarm();
    CHECK_MSG(rc == PS_E_IO && strstr(ps_last_error(), "folder") && is_old(old, n) && no_temp(), "%s: folder fsync",
              what);
    printf("  %s save: %ld allocations, %ld C++ allocations, %ld writes; %ld failures tried, then flush, fsync, "
           "rename, folder fsync\n",
           what, total[PSI_FAULT_ALLOC], total[PSI_FAULT_NEW], total[PSI_FAULT_WRITE], tries);
    free(old);
    remove(OUT);
}

typedef struct {
    const char *what;
    load_fn load;
    free_fn release;
    const char *path;
    psi_fault_t kind;
} load_ctx_t;
static void load_once(void *ctx, long nth)
{
    load_ctx_t *c = ctx;
    void *obj = (void *)1;
    psi_fault_arm(c->kind, nth);
    int rc = c->load(c->path, &obj);
    disarm();
    if (rc == PS_OK)
        c->release(obj);
    else
        CHECK_MSG(failed_well(rc) && obj == NULL, "%s load, event %d #%ld: rc %d: %s", c->what, c->kind, nth, rc,
                  ps_last_error());
}

/* Every failing allocation of a load (ours, cJSON's, SQLite's, C++'s). */
static void load_faults(const char *what, load_fn load, free_fn release, const char *path)
{
    void *obj = NULL;
    psi_fault_arm(PSI_FAULT_ALLOC, LONG_MAX);
    psi_fault_arm(PSI_FAULT_NEW, LONG_MAX);
    CHECK_OK(load(path, &obj));
    long total[2] = {psi_fault_seen(PSI_FAULT_ALLOC), psi_fault_seen(PSI_FAULT_NEW)}, tries = 0;
    disarm();
    release(obj);
    load_ctx_t c = {what, load, release, path, PSI_FAULT_ALLOC};
    for (long k = 1; k <= total[0]; k = sweep_next(k, total[0]), tries++)
        load_once(&c, k);
    c.kind = PSI_FAULT_NEW;
    for (long k = 1; k <= total[1]; k = sweep_next(k, total[1]), tries++)
        in_child(what, k, load_once, &c);
    printf("  %s load: %ld allocations, %ld C++ allocations; %ld failures tried\n", what, total[0], total[1], tries);
}

static int ops_save(const void *t, const char *path) { return ps_ops_save(t, path); }
static int ops_load(const char *path, void **out) { return ps_ops_load(path, (ps_ops_t **)out); }
static void ops_free(void *t) { ps_ops_free(t); }
static int model_save(const void *m, const char *path) { return ps_model_save(m, path); }
static int model_load(const char *path, void **out) { return ps_model_load(path, (ps_model_t **)out); }
static void model_free(void *m) { ps_model_free(m); }
static int coloc_save(const void *m, const char *path) { return ps_coloc_model_save(m, path); }
static int coloc_load(const char *path, void **out) { return ps_coloc_model_load(path, (ps_coloc_model_t **)out); }
static void coloc_free(void *m) { ps_coloc_model_free(m); }

static void test_table_load_and_save(void)
{
    load_faults("ops", ops_load, ops_free, "tests/data/ops_small.csv");
    ps_ops_t *t = NULL;
    CHECK_OK(ps_ops_load("tests/data/ops_small.csv", &t));
    /* A save to a new path that fails leaves nothing. */
    remove(OUT);
    psi_fault_inject(0, 1);
    CHECK(t && ps_ops_save(t, OUT) == PS_E_IO && strstr(ps_last_error(), "write failed") && no_output());
    disarm();
    if (t)
        save_faults("ops", ops_save, t);
    ps_ops_free(t);
}

typedef struct {
    const ps_ops_t *ops;
    const ps_coexec_t *cx;
    const ps_train_params_t *p;
    psi_fault_t kind;
} train_ctx_t;
static void train_once(void *ctx, long nth)
{
    train_ctx_t *c = ctx;
    ps_model_t *m = (ps_model_t *)1;
    psi_fault_arm(c->kind, nth);
    int rc = ps_model_train(c->ops, c->cx, c->p, &m);
    disarm();
    if (rc == PS_OK)
        ps_model_free(m);
    else
        CHECK_MSG(failed_well(rc) && m == NULL, "train, event %d #%ld: rc %d: %s", c->kind, nth, rc, ps_last_error());
    xgb_slice_failed = rc != PS_OK && strstr(ps_last_error(), "keeping the best rounds") != NULL;
}

static void test_model_train_save_load(void)
{
    ps_sim_params_t sp = ps_sim_default_params();
    sp.experiments = 8;
    sp.runs = 2;
    sp.threads = 1;
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    CHECK_OK(ps_sim_run(&sp, &ops, &cx));
    ps_train_params_t p = ps_train_default_params();
    p.nthread = 1;
    p.max_rounds = 3;
    p.n_depths = 1;
    p.n_etas = 1;
    ps_model_t *m = NULL;
    long total[2];
    psi_fault_arm(PSI_FAULT_ALLOC, LONG_MAX);
    psi_fault_arm(PSI_FAULT_NEW, LONG_MAX);
    CHECK_OK(ps_model_train(ops, cx, &p, &m));
    total[0] = psi_fault_seen(PSI_FAULT_ALLOC);
    total[1] = psi_fault_seen(PSI_FAULT_NEW);
    disarm();
    ps_model_free(m);
    train_ctx_t c = {ops, cx, &p, PSI_FAULT_ALLOC};
    long tried = 0;
    for (long n = 1; n <= total[0] && ops; n = sweep_next(n, total[0]), tried++)
        train_once(&c, n);
    c.kind = PSI_FAULT_NEW;
    for (long n = 1; n <= total[1] && ops; n = sweep_next(n, total[1]), tried++)
        in_child("train", n, train_once, &c);
    printf("  train: %ld allocations, %ld C++ allocations; %ld failures tried\n", total[0], total[1], tried);
    m = NULL;
    CHECK_OK(ps_model_train(ops, cx, &p, &m));
    if (m) {
        save_faults("model", model_save, m);
        CHECK_OK(ps_model_save(m, OUT));
        load_faults("model", model_load, model_free, OUT);
        remove(OUT);
    }
    ps_model_free(m);
    ps_ops_free(ops);
    ps_coexec_free(cx);
}

/* Co-location models of the kinds with their own back end: mps (XGBoost),
 * kace_mlp (model/mlp.c), kace_rf (our forest), ratio (a table). */
static void test_coloc_model_save_load(void)
{
    const char *dir = "tests/data/colocate";
    char path[3][256];
    snprintf(path[0], sizeof path[0], "%s/workloads.csv", dir);
    snprintf(path[1], sizeof path[1], "%s/workload_scaling.csv", dir);
    snprintf(path[2], sizeof path[2], "%s/colocations3.csv", dir);
    ps_workloads_t *w = NULL;
    ps_scaling_t *sc = NULL;
    ps_colocations_t *c = NULL;
    CHECK_OK(ps_workloads_load(path[0], &w));
    CHECK_OK(ps_scaling_load(path[1], &sc));
    CHECK_OK(ps_colocations_load(path[2], &c));
    static const ps_coloc_kind_t kinds[] = {PS_COLOC_MPS, PS_COLOC_KACE_MLP, PS_COLOC_KACE_RF, PS_COLOC_RATIO};
    for (size_t k = 0; k < PS_ARRAY_LEN(kinds) && w && sc && c; k++) {
        ps_coloc_params_t p = ps_coloc_default_params();
        p.kind = kinds[k];
        p.trees = 5;
        p.mlp_epochs = 5;
        p.boost_rounds = 10;
        ps_coloc_model_t *m = NULL;
        CHECK_OK(ps_coloc_train(w, sc, c, &p, &m));
        if (!m)
            continue;
        save_faults(ps_coloc_kind_name(kinds[k]), coloc_save, m);
        CHECK_OK(ps_coloc_model_save(m, OUT));
        load_faults(ps_coloc_kind_name(kinds[k]), coloc_load, coloc_free, OUT);
        remove(OUT);
        ps_coloc_model_free(m);
    }
    ps_workloads_free(w);
    ps_scaling_free(sc);
    ps_colocations_free(c);
}

/* ---- the collector's store ---- */

static const char *DB = "/tmp/psi_test_faults.db";

static void remove_db(void)
{
    static const char *const ext[] = {"", "-wal", "-shm", "-journal", ".lock"};
    char p[128];
    for (size_t i = 0; i < PS_ARRAY_LEN(ext); i++) {
        snprintf(p, sizeof p, "%s%s", DB, ext[i]);
        remove(p);
    }
}

static int campaign(void)
{
    static const int tpcs[] = {6, 20};
    ps_collect_params_t p = ps_collect_default_params();
    p.backend = "fake";
    p.profile_runs = 2;
    p.seq_len = 32;
    ps_campaign_t *c = NULL;
    int rc = ps_campaign_open(DB, &p, &c);
    if (rc == 0)
        rc = ps_campaign_profile(c, "resnet50", 2, tpcs, 2, NULL, NULL);
    if (rc == 0)
        rc = ps_campaign_profile(c, "bert-base", 2, tpcs, 2, NULL, NULL);
    if (rc == 0) {
        ps_coexec_plan_t plan = ps_coexec_default_plan();
        plan.hp_model = "resnet50";
        plan.hp_batch = 2;
        plan.lp_model = "bert-base";
        plan.lp_batch = 2;
        plan.experiments = 4;
        plan.runs = 2;
        plan.tpcs = tpcs;
        plan.n_tpcs = 2;
        plan.seed = 7;
        rc = ps_campaign_coexec(c, &plan, NULL, NULL);
    }
    ps_campaign_free(c);
    return rc;
}

/* What a failed campaign left: whole tasks only (each co-execution with
 * both runs and marked done, or absent). 1 when so, or when it left no
 * database or an empty one. */
static int whole_tasks(void)
{
    sqlite3 *db = NULL;
    if (access(DB, F_OK) != 0)
        return 1;
    int ok = sqlite3_open_v2(DB, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK;
    long tables = ok ? th_query_long(db, "SELECT COUNT(*) FROM sqlite_master WHERE name='coexec'") : -1;
    if (ok && tables == 1) {
        long rows = th_query_long(db, "SELECT COUNT(*) FROM coexec");
        long done = th_query_long(db, "SELECT COUNT(*) FROM tasks WHERE kind='coexec' AND done=1");
        long odd = th_query_long(db, "SELECT COUNT(*) FROM (SELECT experiment FROM coexec GROUP BY experiment "
                                     "HAVING COUNT(*) != 2)");
        ok = rows >= 0 && rows == 2 * done && odd == 0;
    }
    sqlite3_close(db);
    return ok;
}

static void store_sweep(psi_fault_t kind, long total, long *tries)
{
    for (long k = 1; k <= total; k = sweep_next(k, total), (*tries)++) {
        remove_db();
        psi_fault_arm(kind, k);
        int rc = campaign();
        disarm();
        CHECK_MSG(rc == PS_OK || failed_well(rc), "campaign, event %d #%ld: rc %d: %s", kind, k, rc, ps_last_error());
        CHECK_MSG(rc == PS_OK || strstr(ps_last_error(), "SQLite") == NULL || strstr(ps_last_error(), DB),
                  "campaign, event %d #%ld: %s", kind, k, ps_last_error());
        CHECK_MSG(whole_tasks(), "campaign, event %d #%ld left a partial task", kind, k);
        /* And the next run finishes it. */
        if (rc != PS_OK)
            CHECK_MSG(campaign() == PS_OK, "resume after event %d #%ld: %s", kind, k, ps_last_error());
    }
}

/* A small campaign (fake back end) with the n-th allocation (ours and
 * SQLite's) or the n-th write or sync of SQLite failing. */
static void test_collect_store(void)
{
    remove_db();
    psi_fault_arm(PSI_FAULT_ALLOC, LONG_MAX);
    psi_fault_arm(PSI_FAULT_IO, LONG_MAX);
    CHECK_OK(campaign());
    long allocs = psi_fault_seen(PSI_FAULT_ALLOC), ios = psi_fault_seen(PSI_FAULT_IO), tries = 0;
    disarm();
    CHECK(allocs > 100 && ios > 10);
    store_sweep(PSI_FAULT_ALLOC, allocs, &tries);
    store_sweep(PSI_FAULT_IO, ios, &tries);
    printf("  C++ allocations failed: %ld; XGBoost called std::terminate for %ld and leaked inside its Slice for "
           "%ld (each alone in a child process)\n",
           new_tries, new_terminated, new_slice_leaks);
    CHECK(new_tries > 100 && new_terminated < new_tries / 4);
    printf("  campaign: %ld allocations, %ld SQLite writes and syncs; %ld failures tried, each resumed\n", allocs, ios,
           tries);
    remove_db();
}

TH_MAIN(TEST(test_install_hooks), TEST(test_table_load_and_save), TEST(test_model_train_save_load),
        TEST(test_coloc_model_save_load), TEST(test_collect_store))
