#ifdef PS_FAULT_INJECTION
#define _GNU_SOURCE /* fopencookie */
#endif
#include "common/common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Fault injection (built with PS_FAULT_INJECTION, tests only): per kind of
 * event (an allocation, one write of an output stream, its flush, an fsync,
 * the rename), the n-th event from psi_fault_arm on fails. */
#ifdef PS_FAULT_INJECTION
static _Thread_local long fault_next[PSI_FAULT_KINDS], fault_count[PSI_FAULT_KINDS];
void psi_fault_arm(psi_fault_t kind, long nth)
{
    fault_next[kind] = nth;
    fault_count[kind] = 0;
}
long psi_fault_seen(psi_fault_t kind) { return fault_count[kind]; }
void psi_fault_inject(long nth_alloc, long nth_write)
{
    for (int k = 0; k < PSI_FAULT_KINDS; k++)
        psi_fault_arm((psi_fault_t)k, 0);
    psi_fault_arm(PSI_FAULT_ALLOC, nth_alloc);
    psi_fault_arm(PSI_FAULT_WRITE, nth_write);
}
int psi_fault(psi_fault_t kind)
{
    fault_count[kind]++;
    return fault_next[kind] > 0 && --fault_next[kind] == 0;
}
#define FAIL_ALLOC() psi_fault(PSI_FAULT_ALLOC)
#define FAIL(kind) (psi_fault(PSI_FAULT_##kind) ? (errno = EIO, 1) : 0)
#else
#define FAIL_ALLOC() 0
#define FAIL(kind) 0
#endif

static _Thread_local char last_error[1024] = "no error";

const char *ps_version(void) { return PS_VERSION_STRING; }

int ps_thread_limit(void) { return psi_thread_limit(); }

int ps_outfile_open(const char *path, ps_outfile_t **out)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return psi_error(PS_E_ARG, "ps_outfile_open: NULL argument");
    return psi_atomic_open(path, out);
}

FILE *ps_outfile_stream(ps_outfile_t *f) { return f ? psi_atomic_stream(f) : NULL; }

int ps_outfile_commit(ps_outfile_t *f)
{
    return f ? psi_atomic_commit(f) : psi_error(PS_E_ARG, "ps_outfile_commit: NULL file");
}

void ps_outfile_abort(ps_outfile_t *f) { psi_atomic_abort(f); }

int ps_outlock_acquire(const char *path, int wait, ps_outlock_t **out)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return psi_error(PS_E_ARG, "ps_outlock_acquire: NULL argument");
    return psi_out_lock_acquire(path, wait, out);
}

void ps_outlock_release(ps_outlock_t *l) { psi_out_lock_release(l); }

double ps_now(void) { return psi_now(); }

const char *ps_errstr(int code)
{
    switch (code) {
    case PS_OK: return "ok";
    case PS_E_INPUT: return "bad input";
    case PS_E_IO: return "input/output error";
    case PS_E_NOMEM: return "out of memory";
    case PS_E_ARG: return "invalid argument";
    case PS_E_BACKEND: return "backend library error";
    case PS_E_MISMATCH: return "mismatched artefact";
    default: return "unknown error";
    }
}

const char *ps_last_error(void) { return last_error; }

int psi_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

int psi_error_prefix(int code, const char *prefix)
{
    char tmp[sizeof last_error];
    size_t n = strlen(prefix);
    if (n > sizeof tmp - 3)
        n = sizeof tmp - 3;
    memcpy(tmp, prefix, n);
    tmp[n] = ':';
    tmp[n + 1] = ' ';
    size_t rest = strlen(last_error);
    if (rest > sizeof tmp - n - 3)
        rest = sizeof tmp - n - 3;
    memcpy(tmp + n + 2, last_error, rest);
    tmp[n + 2 + rest] = '\0';
    memcpy(last_error, tmp, sizeof last_error);
    return code;
}

static void default_log(ps_log_level_t level, const char *msg, void *user)
{
    (void)user;
    if (level >= PS_LOG_WARN)
        fprintf(stderr, "pairsight: %s%s\n", level == PS_LOG_WARN ? "warning: " : "", msg);
}

static ps_log_fn log_fn = default_log;
static void *log_user;

void ps_log_set(ps_log_fn fn, void *user)
{
    log_fn = fn ? fn : default_log;
    log_user = fn ? user : NULL;
}

void psi_log(ps_log_level_t level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_fn(level, msg, log_user);
}

/* ---- output locks ---- */

/* Locks this process holds, by path: flock() conflicts between two open
 * files even in one process, so a path locked twice here (the CLI locks
 * --out before training, psi_atomic_open locks it again to save) counts up. */
struct ps_outlock {
    char *path, *lock_path;
    int fd, refs;
    struct ps_outlock *next;
};
static struct ps_outlock *held;
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;

/* The pid written in the lock file open at fd, or 0. */
static long lock_owner(int fd)
{
    char buf[32] = "";
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    return strtol(buf, NULL, 10);
}

/* The pid of the writer holding the lock file at fd. A writer that has just
 * taken the lock writes its pid a moment later (a second train started
 * with the first read an empty file, "pid 0"), so an empty file is read
 * again for up to a second. 0: no pid came (a holder that is not pairsight,
 * or one that finished and unlinked the file). */
static long lock_owner_wait(int fd)
{
    for (int k = 0; k < 40; k++) {
        long pid = lock_owner(fd);
        struct stat st;
        if (pid > 0 || (fstat(fd, &st) == 0 && st.st_nlink == 0))
            return pid;
        struct timespec ts = {0, 25 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* Opens (creating it) the lock file without following a symbolic link: a
 * link planted at OUT.lock had its target truncated and overwritten with a
 * pid (as SQLite opens its journals, O_NOFOLLOW). A plain file with several
 * names (a hard link to another file) is refused for the same reason. */
static int open_lock_file(const char *path, const char *lock_path, int *fd)
{
    *fd = open(lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (*fd < 0 && errno == ELOOP)
        return psi_error(PS_E_IO, "%s: cannot write: its lock file %s is a symbolic link (remove it)", path, lock_path);
    if (*fd < 0)
        return psi_error(PS_E_IO, "%s: cannot write (lock file %s): %s", path, lock_path, strerror(errno));
    struct stat st;
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink > 1) {
        close(*fd);
        *fd = -1;
        return psi_error(PS_E_IO, "%s: cannot write: its lock file %s is not a plain file of one name (remove it)",
                         path, lock_path);
    }
    return PS_OK;
}

static void lock_free(out_lock_t *l)
{
    free(l->path);
    free(l->lock_path);
    free(l);
}

int psi_out_lock_acquire(const char *path, int wait, out_lock_t **out)
{
    *out = NULL;
    pthread_mutex_lock(&held_mu);
    for (out_lock_t *l = held; l; l = l->next)
        if (strcmp(l->path, path) == 0) {
            l->refs++;
            *out = l;
            pthread_mutex_unlock(&held_mu);
            return PS_OK;
        }
    pthread_mutex_unlock(&held_mu);
    out_lock_t *l = psi_calloc(1, sizeof *l);
    size_t n = strlen(path) + 8;
    if (!l || !(l->path = psi_strdup(path)) || !(l->lock_path = psi_malloc(n))) {
        if (l)
            free(l->path);
        free(l);
        return PS_E_NOMEM;
    }
    snprintf(l->lock_path, n, "%s.lock", path);
    int warned = 0;
    for (;;) {
        int rc = open_lock_file(path, l->lock_path, &l->fd);
        if (rc != PS_OK) {
            lock_free(l);
            return rc;
        }
        if (flock(l->fd, LOCK_EX | LOCK_NB) != 0) {
            long pid = lock_owner_wait(l->fd);
            struct stat st;
            if (pid == 0 && fstat(l->fd, &st) == 0 && st.st_nlink == 0) {
                close(l->fd); /* the writer finished meanwhile: try again */
                continue;
            }
            if (!wait) {
                close(l->fd);
                rc = pid > 0
                         ? psi_error(PS_E_IO, "%s is being written by pid %ld (lock file %s)", path, pid, l->lock_path)
                         : psi_error(PS_E_IO, "%s is being written by another process (lock file %s holds no pid)",
                                     path, l->lock_path);
                lock_free(l);
                return rc;
            }
            if (!warned++)
                psi_log(PS_LOG_WARN, "%s is being written by pid %ld: waiting", path, pid);
            flock(l->fd, LOCK_EX);
        }
        /* The holder unlinks the lock file before it unlocks it: a file
         * locked after that is no longer the lock, so try again. */
        struct stat a, b;
        if (fstat(l->fd, &a) == 0 && lstat(l->lock_path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
            break;
        close(l->fd);
    }
    char pid[32];
    int k = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    /* Written before the truncation, so that a reader never sees it empty. */
    if (pwrite(l->fd, pid, (size_t)k, 0) != k || ftruncate(l->fd, k) != 0) {
        /* The pid is only for the message of a second writer. */
    }
    l->refs = 1;
    pthread_mutex_lock(&held_mu);
    l->next = held;
    held = l;
    pthread_mutex_unlock(&held_mu);
    *out = l;
    return PS_OK;
}

void psi_out_lock_release(out_lock_t *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&held_mu);
    int last = --l->refs == 0;
    if (last)
        for (out_lock_t **p = &held; *p; p = &(*p)->next)
            if (*p == l) {
                *p = l->next;
                break;
            }
    pthread_mutex_unlock(&held_mu);
    if (!last)
        return;
    unlink(l->lock_path);
    close(l->fd);
    lock_free(l);
}

/* ---- atomic output files ---- */

struct ps_outfile {
    FILE *f;
    int fd;
    char *path;
    char *tmp;
    out_lock_t *lock;
    long pause_ms;
    dev_t dev; /* the temporary file's, checked before the rename */
    ino_t ino;
};

/* Test hook: PS_TEST_SAVE_PAUSE_MS=N makes every save sleep N ms at each of
 * its steps (temporary file open, before the flush of its last writes,
 * before the rename, after it), so that a test can kill a writer at each
 * moment of a save (tests/test_kill_save.sh). */
static void save_pause(const psi_atomic_t *a)
{
    if (a->pause_ms > 0) {
        struct timespec ts = {a->pause_ms / 1000, (a->pause_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

#ifdef PS_FAULT_INJECTION
/* Fault builds write through a cookie stream, so that each write can fail
 * (PSI_FAULT_WRITE); armed, the stream is unbuffered and every fprintf,
 * fwrite or fputc of a writer is one write. */
static ssize_t fault_cookie_write(void *c, const char *buf, size_t n)
{
    if (FAIL(WRITE)) {
        errno = EIO;
        return -1;
    }
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(*(int *)c, buf + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return done ? (ssize_t)done : -1;
        done += (size_t)k;
    }
    return (ssize_t)done;
}
static int fault_cookie_close(void *c) { return close(*(int *)c); }
static FILE *atomic_stream_open(psi_atomic_t *a)
{
    cookie_io_functions_t io = {.write = fault_cookie_write, .close = fault_cookie_close};
    FILE *f = fopencookie(&a->fd, "wb", io);
    if (f && fault_next[PSI_FAULT_WRITE] > 0)
        setvbuf(f, NULL, _IONBF, 0);
    return f;
}
#else
static FILE *atomic_stream_open(psi_atomic_t *a) { return fdopen(a->fd, "wb"); }
#endif

/* Remove "<base>.tmp.<pid>" files beside path whose writer is dead: a save
 * killed between its open and its rename leaves one (28 of 40 kills of
 * train did). Called with path locked, so no live writer is mid-save. */
static void remove_stale_temps(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    const char *base = slash ? slash + 1 : path;
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) > 0 ? (int)(slash - path) : 1, path);
    else
        snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t bl = strlen(base);
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, base, bl) != 0 || strncmp(e->d_name + bl, ".tmp.", 5) != 0)
            continue;
        char *end;
        long pid = strtol(e->d_name + bl + 5, &end, 10);
        if (*end == '.' && end[1]) /* "<base>.tmp.<pid>.<k>", open_temp's retries */
            strtol(end + 1, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid() || (kill((pid_t)pid, 0) != 0 && errno != ESRCH))
            continue;
        if (kill((pid_t)pid, 0) == 0)
            continue; /* alive */
        char full[8192];
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        if (unlink(full) == 0)
            psi_log(PS_LOG_INFO, "removed %s, left by a writer (pid %ld) that died", full, pid);
    }
    closedir(d);
}

/* Creates the temporary file "<path>.tmp.<pid>" (then ".<pid>.1", ".2", ...
 * while a name is taken) with O_EXCL and O_NOFOLLOW: a symbolic link
 * planted at the name had the model written through it to its target, and
 * the rename then made the output itself a link (Redis and SQLite create
 * their temporary files the same way). */
static int open_temp(psi_atomic_t *a, size_t n)
{
    for (int k = 0; k < 100; k++) {
        if (k == 0)
            snprintf(a->tmp, n, "%s.tmp.%ld", a->path, (long)getpid());
        else
            snprintf(a->tmp, n, "%s.tmp.%ld.%d", a->path, (long)getpid(), k);
        a->fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        struct stat st;
        if (a->fd >= 0 && fstat(a->fd, &st) == 0) {
            a->dev = st.st_dev;
            a->ino = st.st_ino;
            return PS_OK;
        }
        if (a->fd >= 0)
            close(a->fd);
        else if (errno != EEXIST)
            break;
    }
    return psi_error(PS_E_IO, "%s: cannot write (temporary file %s): open: %s", a->path, a->tmp, strerror(errno));
}

int psi_atomic_open(const char *path, psi_atomic_t **out)
{
    *out = NULL;
    psi_atomic_t *a = psi_calloc(1, sizeof *a);
    if (!a)
        return PS_E_NOMEM;
    size_t n = strlen(path) + 40;
    a->path = psi_strdup(path);
    a->tmp = psi_malloc(n);
    const char *pause = getenv("PS_TEST_SAVE_PAUSE_MS");
    a->pause_ms = pause ? strtol(pause, NULL, 10) : 0;
    int rc = a->path && a->tmp ? psi_out_lock_acquire(path, 0, &a->lock) : PS_E_NOMEM;
    if (rc == PS_OK) {
        remove_stale_temps(path);
        rc = open_temp(a, n);
        if (rc == PS_OK && !(a->f = atomic_stream_open(a))) {
            rc = psi_error(PS_E_NOMEM, "%s: out of memory (stream of %s)", path, a->tmp);
            close(a->fd);
            remove(a->tmp);
        }
    }
    if (rc != PS_OK) {
        psi_out_lock_release(a->lock);
        free(a->path);
        free(a->tmp);
        free(a);
        return rc;
    }
    save_pause(a);
    *out = a;
    return PS_OK;
}

/* Whether the temporary name still holds the file open_temp created: the
 * rename moves a name, not a file, and one swapped for a link meanwhile
 * would make the output a link. */
static int temp_is_ours(const psi_atomic_t *a)
{
    struct stat st;
    return lstat(a->tmp, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == a->dev && st.st_ino == a->ino;
}

FILE *psi_atomic_stream(psi_atomic_t *a) { return a->f; }

static void atomic_release(psi_atomic_t *a)
{
    psi_out_lock_release(a->lock);
    free(a->path);
    free(a->tmp);
    free(a);
}

/* fsync of the folder holding path, so that a rename survives a crash. */
static int fsync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Each failing step is named: write (the stream's buffered writes), flush,
 * fsync, close, rename, and the fsync of the folder after the rename. */
int psi_atomic_commit(psi_atomic_t *a)
{
    int rc = PS_OK;
    save_pause(a);
    if (ferror(a->f))
        rc = psi_error(PS_E_IO, "%s: write failed (temporary file %s)", a->path, a->tmp);
    else if (FAIL(FLUSH) || fflush(a->f) != 0)
        rc = psi_error(PS_E_IO, "%s: flush failed: %s", a->path, strerror(errno));
    else if (FAIL(FSYNC) || fsync(a->fd) != 0)
        rc = psi_error(PS_E_IO, "%s: fsync failed: %s", a->path, strerror(errno));
    if (fclose(a->f) != 0 && rc == PS_OK)
        rc = psi_error(PS_E_IO, "%s: close failed: %s", a->path, strerror(errno));
    if (rc == PS_OK)
        save_pause(a);
    if (rc == PS_OK && !temp_is_ours(a))
        rc = psi_error(PS_E_IO, "%s: the temporary file %s was replaced during the save: not renamed", a->path, a->tmp);
    else if (rc == PS_OK && (FAIL(RENAME) || rename(a->tmp, a->path) != 0))
        rc = psi_error(PS_E_IO, "%s: rename of %s failed: %s", a->path, a->tmp, strerror(errno));
    if (rc != PS_OK)
        remove(a->tmp);
    else if (save_pause(a), FAIL(FSYNC) || fsync_dir(a->path) != 0)
        rc = psi_error(PS_E_IO, "%s: fsync of its folder after the rename failed: %s", a->path, strerror(errno));
    atomic_release(a);
    return rc;
}

void psi_atomic_abort(psi_atomic_t *a)
{
    if (!a)
        return;
    fclose(a->f);
    remove(a->tmp);
    atomic_release(a);
}

double psi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void *psi_malloc(size_t n)
{
    void *p = FAIL_ALLOC() ? NULL : malloc(n ? n : 1);
    if (!p)
        psi_error(PS_E_NOMEM, "out of memory (%zu bytes)", n);
    return p;
}

void *psi_calloc(size_t n, size_t size)
{
    void *p = FAIL_ALLOC() ? NULL : calloc(n ? n : 1, size ? size : 1);
    if (!p)
        psi_error(PS_E_NOMEM, "out of memory (%zu x %zu bytes)", n, size);
    return p;
}

void *psi_realloc(void *p, size_t n)
{
    void *q = FAIL_ALLOC() ? NULL : realloc(p, n ? n : 1);
    if (!q)
        psi_error(PS_E_NOMEM, "out of memory (%zu bytes)", n);
    return q;
}

int psi_array_grow(void **arr, size_t n, size_t *cap, size_t elem, size_t first_cap)
{
    if (n < *cap)
        return PS_OK;
    size_t nc = *cap ? *cap * 2 : first_cap;
    void *p = psi_realloc(*arr, nc * elem);
    if (!p)
        return PS_E_NOMEM;
    *arr = p;
    *cap = nc;
    return PS_OK;
}

char *psi_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = psi_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double psi_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double psi_rng_normal(psi_rng_t *r)
{
    /* u1 in (0, 1] so that the log is finite. */
    double u1 = 1.0 - psi_rng_uniform(r);
    double u2 = psi_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void psi_rng_shuffle(psi_rng_t *r, size_t *idx, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(psi_rng_next(r) % i);
        size_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
}

uint64_t psi_experiment_hash(const char *name, uint64_t seed)
{
    uint64_t h = 1469598103934665603ULL ^ (seed * 0x9E3779B97F4A7C15ULL);
    for (const char *s = name; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return psi_mix64(h);
}

int psi_name_index(const char *what, const char *name, const char *const *names, int n, int *out)
{
    for (int k = 0; k < n; k++)
        if (strcmp(name, names[k]) == 0) {
            *out = k;
            return PS_OK;
        }
    char known[512];
    size_t len = 0;
    known[0] = '\0';
    for (int k = 0; k < n && len < sizeof known; k++)
        len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", k ? ", " : "", names[k]);
    return psi_error(PS_E_ARG, "unknown %s '%s' (known: %s)", what, name, known);
}

int psi_thread_limit(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long lim = (cores > 0 ? cores : 1) * THREADS_PER_CORE;
    return lim < THREADS_MIN_LIMIT ? THREADS_MIN_LIMIT : lim > 65536 ? 65536 : (int)lim;
}

int psi_thread_check(const char *what, long n)
{
    int lim = psi_thread_limit();
    if (n < 0 || n > lim)
        return psi_error(PS_E_ARG, "%s %ld is outside 0..%d (%d per core, 0 = all cores)", what, n, lim,
                         THREADS_PER_CORE);
    return PS_OK;
}

int psi_file_read_all(const char *path, unsigned char **out, size_t *n)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return psi_error(PS_E_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = psi_malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap)
            break;
        unsigned char *nb = psi_realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f) ? errno : 0;
    fclose(f);
    if (!buf)
        return PS_E_NOMEM;
    if (bad) {
        free(buf);
        return psi_error(PS_E_IO, "%s: read error: %s", path, strerror(bad));
    }
    *out = buf;
    *n = len;
    return PS_OK;
}

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void make_c_locale(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

locale_t psi_c_numeric_begin(void)
{
    pthread_once(&c_locale_once, make_c_locale);
    return c_locale ? uselocale(c_locale) : (locale_t)0;
}

void psi_c_numeric_end(locale_t old)
{
    if (old)
        uselocale(old);
}

/* ---- the did-you-mean suggestion ---- */

/* Optimal string alignment distance: insertions, deletions, substitutions
 * and transpositions of neighbours ("trian" is one step from "train"). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return (size_t)-1;
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *ps_nearest(const char *s, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1, len = strlen(s);
    /* The "--" costs nothing: --out is not near --ops. */
    size_t limit = len > 5 ? (len - 2) / 3 : 1;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(s, names[i]);
        /* A prefix of a longer name ("--dep" of "--depths") is near too. */
        if (len >= 4 && strncmp(s, names[i], len) == 0 && d > 1)
            d = 1;
        /* So is a name that starts with all of s but its last letter: a
         * singular of a plural ("--query" of "--queries"). */
        if (len >= 7 && strlen(names[i]) > len && strncmp(s, names[i], len - 1) == 0 && d > 1)
            d = 1;
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    return best_d <= limit ? best : NULL;
}
