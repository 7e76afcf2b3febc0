/* A tiny test harness in the manner of Redis's testhelp.h: each test file is
 * one program with a table of test functions; a failed check prints where and
 * why, and the program's exit status counts the failures. */
#ifndef PS_TESTHELP_H
#define PS_TESTHELP_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int th_failed, th_checks, th_skipped;
/* The skipped tests and why, for the last line (which scripts/ctest_skips.sh
 * reports as the reason a skipped program gave). */
static const char *th_current;
static char th_skips[1024];

/* A test that cannot run here (its data is absent) says why and returns; the
 * program then exits 77, which ctest reports as skipped, never as passed. */
static inline void th_skip(const char *why)
{
    th_skipped++;
    printf("skip: %s\n", why);
    size_t len = strlen(th_skips);
    if (len < sizeof th_skips - 1)
        snprintf(th_skips + len, sizeof th_skips - len, "%s%s (%s)", len ? "; " : "", th_current ? th_current : "?",
                 why);
}

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        th_checks++;                                                                     \
        if (!(cond)) {                                                                   \
            th_failed++;                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
        }                                                                                \
    } while (0)

#define CHECK_MSG(cond, ...)                                                             \
    do {                                                                                 \
        th_checks++;                                                                     \
        if (!(cond)) {                                                                   \
            th_failed++;                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
        }                                                                                \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                            \
    CHECK_MSG(fabs((double)(a) - (double)(b)) <= (tol), "%.17g vs %.17g (tol %g)",       \
              (double)(a), (double)(b), (double)(tol))

/* Checks that a call returned 0, printing ps_last_error() when it did not. */
#define CHECK_OK(call)                                                                   \
    do {                                                                                 \
        int th_rc_ = (call);                                                             \
        CHECK_MSG(th_rc_ == 0, "%s returned %d: %s", #call, th_rc_, ps_last_error());    \
    } while (0)

/* A fresh folder /tmp/<prefix>XXXXXX into dir[n] (the program aborts when
 * none can be made), and its removal with everything in it. */
static inline void th_tmpdir_make(char *dir, size_t n, const char *prefix)
{
    snprintf(dir, n, "/tmp/%sXXXXXX", prefix);
    if (!mkdtemp(dir))
        abort();
}

/* dir/name, in one of 8 buffers used in turn, so that one call can take
 * several paths. */
static inline const char *th_path(const char *dir, const char *name)
{
    static char buf[8][256];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static inline void th_tmpdir_remove(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

#ifdef SQLITE_VERSION /* sqlite3.h included before this header */
/* The first column of the first row of sql, or -1. */
static inline long th_query_long(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}
#endif

typedef struct {
    const char *name;
    void (*fn)(void);
} th_test_t;

static int th_run(const th_test_t *tests, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int before = th_failed, skipped = th_skipped;
        th_current = tests[i].name;
        tests[i].fn();
        printf("[%s] %s\n", th_failed != before ? "FAIL" : th_skipped != skipped ? "skip" : " ok ",
               tests[i].name);
    }
    if (th_skipped)
        printf("%d checks, %d failed, %d tests skipped: %s\n", th_checks, th_failed, th_skipped, th_skips);
    else
        printf("%d checks, %d failed, 0 tests skipped\n", th_checks, th_failed);
    return th_failed ? 1 : th_skipped ? 77 : 0;
}

#define TH_MAIN(...)                                                                     \
    int main(void)                                                                       \
    {                                                                                    \
        static const th_test_t tests[] = {__VA_ARGS__};                                  \
        return th_run(tests, sizeof tests / sizeof tests[0]);                            \
    }

#define TEST(fn) {#fn, fn}

#endif
