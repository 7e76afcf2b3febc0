#include "common/common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Thread_local char last_error[1024] = "no error";

const char *ps_version(void) { return PS_VERSION_STRING; }

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

int ps_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

int ps_error_prefix(int code, const char *prefix)
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

void ps_log(ps_log_level_t level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_fn(level, msg, log_user);
}

struct ps_atomic {
    FILE *f;
    char *path;
    char *tmp;
};

int ps_atomic_open(const char *path, ps_atomic_t **out)
{
    *out = NULL;
    ps_atomic_t *a = ps_calloc(1, sizeof *a);
    if (!a)
        return PS_E_NOMEM;
    size_t n = strlen(path) + 32;
    a->path = ps_strdup(path);
    a->tmp = ps_malloc(n);
    if (!a->path || !a->tmp) {
        free(a->path);
        free(a->tmp);
        free(a);
        return PS_E_NOMEM;
    }
    snprintf(a->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    a->f = fopen(a->tmp, "wb");
    if (!a->f) {
        int rc = ps_error(PS_E_IO, "%s: cannot write (temporary file %s): %s", path, a->tmp,
                          strerror(errno));
        free(a->path);
        free(a->tmp);
        free(a);
        return rc;
    }
    *out = a;
    return PS_OK;
}

FILE *ps_atomic_stream(ps_atomic_t *a) { return a->f; }

static void atomic_release(ps_atomic_t *a)
{
    free(a->path);
    free(a->tmp);
    free(a);
}

int ps_atomic_commit(ps_atomic_t *a)
{
    int rc = PS_OK;
    if (fflush(a->f) != 0 || ferror(a->f) || fsync(fileno(a->f)) != 0)
        rc = ps_error(PS_E_IO, "%s: write failed: %s", a->path, strerror(errno));
    if (fclose(a->f) != 0 && rc == PS_OK)
        rc = ps_error(PS_E_IO, "%s: close failed: %s", a->path, strerror(errno));
    if (rc == PS_OK && rename(a->tmp, a->path) != 0)
        rc = ps_error(PS_E_IO, "%s: rename failed: %s", a->path, strerror(errno));
    if (rc != PS_OK)
        remove(a->tmp);
    atomic_release(a);
    return rc;
}

void ps_atomic_abort(ps_atomic_t *a)
{
    if (!a)
        return;
    fclose(a->f);
    remove(a->tmp);
    atomic_release(a);
}

double ps_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void *ps_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        ps_error(PS_E_NOMEM, "out of memory (%zu bytes)", n);
    return p;
}

void *ps_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        ps_error(PS_E_NOMEM, "out of memory (%zu x %zu bytes)", n, size);
    return p;
}

void *ps_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        ps_error(PS_E_NOMEM, "out of memory (%zu bytes)", n);
    return q;
}

char *ps_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ps_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ps_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double ps_rng_normal(ps_rng_t *r)
{
    /* u1 in (0, 1] so that the log is finite. */
    double u1 = 1.0 - ps_rng_uniform(r);
    double u2 = ps_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void ps_rng_shuffle(ps_rng_t *r, size_t *idx, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(ps_rng_next(r) % i);
        size_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
}

uint64_t ps_experiment_hash(const char *name, uint64_t seed)
{
    uint64_t h = 1469598103934665603ULL ^ (seed * 0x9E3779B97F4A7C15ULL);
    for (const char *s = name; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return ps_mix64(h);
}

int ps_name_index(const char *what, const char *name, const char *const *names, int n, int *out)
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
    return ps_error(PS_E_ARG, "unknown %s '%s' (known: %s)", what, name, known);
}

int thread_limit(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long lim = (cores > 0 ? cores : 1) * THREADS_PER_CORE;
    return lim < THREADS_MIN_LIMIT ? THREADS_MIN_LIMIT : lim > 65536 ? 65536 : (int)lim;
}

int thread_check(const char *what, long n)
{
    int lim = thread_limit();
    if (n < 0 || n > lim)
        return ps_error(PS_E_ARG, "%s %ld is outside 0..%d (%d per core, 0 = all cores)", what, n, lim,
                        THREADS_PER_CORE);
    return PS_OK;
}

int file_read_all(const char *path, unsigned char **out, size_t *n)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ps_error(PS_E_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = ps_malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap)
            break;
        unsigned char *nb = ps_realloc(buf, cap * 2);
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
        return ps_error(PS_E_IO, "%s: read error: %s", path, strerror(bad));
    }
    *out = buf;
    *n = len;
    return PS_OK;
}
