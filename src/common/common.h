/* Internal helpers shared by every stage: errors, logging, atomic files. */
#ifndef PS_COMMON_H
#define PS_COMMON_H

#include "pairsight.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__GNUC__)
#define PS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PS_PRINTF(a, b)
#endif

/* Record a message for ps_last_error() and return code, so that a failing
 * path reads `return psi_error(PS_E_INPUT, "%s:%zu:%d: ...", ...);`. */
int psi_error(int code, const char *fmt, ...) PS_PRINTF(2, 3);

/* Prefix the current error message with "prefix: " (used to add context such
 * as the file name when an inner call failed). Returns code. */
int psi_error_prefix(int code, const char *prefix);

void psi_log(ps_log_level_t level, const char *fmt, ...) PS_PRINTF(2, 3);

/* Atomic output file: write to "<path>.tmp.<pid>", then psi_atomic_commit
 * flushes, fsyncs and renames it over path; psi_atomic_abort removes it. Either
 * call closes the stream and frees the handle. */
/* Output locks: an exclusive flock() on "<path>.lock" (removed at release)
 * for as long as a command writes path, so that a second writer is told
 * "PATH is being written by pid N" (PS_E_IO) instead of one of two results
 * being silently lost; with wait, it waits instead. A path this process
 * already holds is counted, not locked again. psi_atomic_open takes the lock
 * of its path. */
typedef struct ps_outlock out_lock_t; /* ps_outlock_t of the public API */
int psi_out_lock_acquire(const char *path, int wait, out_lock_t **out);
void psi_out_lock_release(out_lock_t *l);

/* Atomic output files also remove stale "<path>.tmp.<pid>" files of dead
 * writers at open, fsync the folder after the rename and name the failing
 * step (write, flush, fsync, close, rename) in their error. */
typedef struct ps_outfile psi_atomic_t; /* ps_outfile_t of the public API */
int psi_atomic_open(const char *path, psi_atomic_t **out);
FILE *psi_atomic_stream(psi_atomic_t *a);
int psi_atomic_commit(psi_atomic_t *a);
void psi_atomic_abort(psi_atomic_t *a);

/* Monotonic wall clock in seconds, for timings and progress. */
double psi_now(void);

/* Allocation that records PS_E_NOMEM on failure (returns NULL). */
void *psi_malloc(size_t n);
void *psi_calloc(size_t n, size_t size);
void *psi_realloc(void *p, size_t n);
char *psi_strdup(const char *s);

/* Make room for element n of *arr, an array of elem-byte elements: once n
 * has reached *cap, *arr is reallocated to twice its capacity (first_cap
 * elements the first time) and *cap updated. PS_OK, or PS_E_NOMEM with *arr
 * untouched and still the caller's. */
int psi_array_grow(void **arr, size_t n, size_t *cap, size_t elem, size_t first_cap);

/* splitmix64 (Steele, Lea and Flood 2014). psi_mix64 is its finalizer, an
 * avalanche of all 64 bits (hash tables, seeded orders); psi_splitmix64
 * advances *state and returns the next number of its stream, the same on
 * every platform, so that a seed names one campaign, split or init
 * everywhere. */
static inline uint64_t psi_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static inline uint64_t psi_splitmix64(uint64_t *state) { return psi_mix64(*state += 0x9E3779B97F4A7C15ULL); }

/* The one random generator of the library: a splitmix64 stream. The same
 * numbers on every platform, so that a seed names one campaign, split or
 * initialization everywhere. psi_rng_seed scrambles a user seed into the
 * state; code that derives its own state (one stream per experiment) may set
 * .s directly. */
typedef struct {
    uint64_t s;
} psi_rng_t;

static inline void psi_rng_seed(psi_rng_t *r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ULL + 1; }
static inline uint64_t psi_rng_next(psi_rng_t *r) { return psi_splitmix64(&r->s); }
/* Uniform in [0, 1). */
static inline double psi_rng_uniform(psi_rng_t *r) { return (double)(psi_rng_next(r) >> 11) * 0x1.0p-53; }
/* Uniform integer in [lo, hi]. */
static inline int psi_rng_int(psi_rng_t *r, int lo, int hi)
{
    return lo + (int)(psi_rng_uniform(r) * (double)(hi - lo + 1));
}
/* Standard normal (Box-Muller; two uniforms per number). */
double psi_rng_normal(psi_rng_t *r);
/* Fisher-Yates shuffle of idx[n]. */
void psi_rng_shuffle(psi_rng_t *r, size_t *idx, size_t n);

/* The one experiment hash: 64 bits of an experiment name mixed with a seed
 * (FNV-1a, then the splitmix64 finalizer so that nearby seeds give
 * unrelated orders). Splits and held-out orders rank experiments by it. */
uint64_t psi_experiment_hash(const char *name, uint64_t seed);

/* The index of name in names[0..n) into *out: 0, or PS_E_ARG with "unknown
 * <what> '<name>' (known: a, b, c)". */
int psi_name_index(const char *what, const char *name, const char *const *names, int n, int *out);

/* Median of v[n] (sorts v); NAN when n is 0. */
double psi_median(double *v, size_t n);

#ifdef PS_FAULT_INJECTION
/* Tests only: psi_fault_arm(kind, n) makes the n-th event of kind of this thread
 * from now fail (0 = never): an allocation (psi_malloc and friends, and what
 * a test routes through psi_fault: cJSON's and SQLite's allocators), one
 * write to an atomic output stream (each fprintf/fwrite/fputc once armed:
 * the stream is then unbuffered), its flush, an fsync (the file's, then its
 * folder's) or the rename. psi_fault_seen counts the events of kind since it was
 * armed. psi_fault_inject(a, w) arms ALLOC with a and WRITE with w, the rest 0. */
typedef enum {
    PSI_FAULT_ALLOC,
    PSI_FAULT_WRITE,
    PSI_FAULT_FLUSH,
    PSI_FAULT_FSYNC,
    PSI_FAULT_RENAME,
    PSI_FAULT_NEW, /* C++ operator new (tests/faults_new.cpp) */
    PSI_FAULT_IO,  /* SQLite's writes and syncs (the test's VFS) */
    PSI_FAULT_KINDS
} psi_fault_t;
void psi_fault_arm(psi_fault_t kind, long nth);
long psi_fault_seen(psi_fault_t kind);
void psi_fault_inject(long nth_alloc, long nth_write);
/* Count an event of kind; 1 when it is the one to fail. */
int psi_fault(psi_fault_t kind);
#endif

/* Numbers are read and written in the C locale whatever the process's
 * locale (an application embedding the library may set another; "%g" and
 * strtod follow LC_NUMERIC): psi_c_numeric_begin switches the calling thread to
 * the C locale with uselocale (thread-safe, unlike setlocale) and returns
 * the thread's previous locale, which psi_c_numeric_end restores. Every reader
 * and writer of a file calls them around its work. */
#include <locale.h>
locale_t psi_c_numeric_begin(void);
void psi_c_numeric_end(locale_t old);

/* A copy of text[len] (a const text: the reader writes into its text)
 * parsed into d (zeroed by the caller; max_depth 0 is cJSON's 1000):
 * PS_OK, PS_E_INPUT ("WHAT is not valid JSON (WHY near byte N)") or
 * PS_E_NOMEM; psi_json_unload frees the copy and the tokens, after a
 * failure too. */
int psi_json_load(const char *text, size_t len, const char *what, ps_json_doc_t *d);
void psi_json_unload(ps_json_doc_t *d);
/* Members of object token obj read with the one JSON reader
 * (ps_json_parse): the string, or NULL when key is absent or not a string
 * (or obj not an object); the finite number into *out: 0, or -1 when key is
 * absent or not such a number. */
const char *psi_json_get_str(ps_json_doc_t *d, int obj, const char *key);
int psi_json_get_num(ps_json_doc_t *d, int obj, const char *key, double *out);

/* cJSON_ParseWithLength into *out, telling its two failures apart: a text
 * that is not JSON is PS_E_INPUT ("WHAT is not valid JSON (WHY near byte
 * N)"), an allocation that failed inside cJSON PS_E_NOMEM (cJSON returns
 * NULL for both; ps_json_parse checks the text). */
struct cJSON;
int psi_json_parse(const char *text, size_t len, const char *what, struct cJSON **out);
/* v as JSON text (malloc'ed; NULL after PS_E_NOMEM), compact or, with
 * pretty, one member or element per line indented by two spaces: the one
 * writer of the library's JSON (numbers by ps_json_number, strings as
 * ps_json_write writes them). */
char *psi_json_print(const struct cJSON *v, int pretty);

/* The length of the valid UTF-8 sequence at p (of at most avail bytes;
 * 4 for a NUL-terminated string), or 0 when it is not one (RFC 3629). */
int psi_utf8_len(const unsigned char *p, size_t avail);

/* s as a JSON string, quotes included, through put (the one string writer
 * of ps_buf_json_str and psi_json_print): \" \\ \n \t, \u00XX for other
 * control bytes, \ufffd for a byte that is not UTF-8; NULL as "". */
void psi_json_escape(const char *s, void (*put)(void *sink, const char *p, size_t n), void *sink);

/* Read the whole file at path into *out (malloc'ed, the caller frees it;
 * one byte past *n is allocated) and its size into *n. PS_E_IO names the
 * path and the failing call. */
int psi_file_read_all(const char *path, unsigned char **out, size_t *n);

/* What write puts on a stream, into a malloc'ed buffer *out[*out_len] (the
 * caller frees it) instead of a file; what names the call in messages.
 * PS_E_ARG for a NULL obj, PS_E_NOMEM, or write's own code. */
#include <stdio.h>
int psi_write_mem(int (*write)(const void *obj, FILE *f), const void *obj, const char *what, unsigned char **out,
                  size_t *out_len);

/* Thread counts: more than THREADS_PER_CORE threads per online core (and at
 * least THREADS_MIN_LIMIT) is refused as a usage error; 100000 threads
 * crashed libgomp and 20000 took 2 GB of stacks. psi_thread_check returns
 * PS_E_ARG naming `what` when n is negative or above psi_thread_limit(). */
#define THREADS_PER_CORE 4
#define THREADS_MIN_LIMIT 16
int psi_thread_limit(void);
int psi_thread_check(const char *what, long n);

/* Whether operators [start, start + len) are a non-empty segment of a model
 * of n operators. Written without start + len, which overflows for a start
 * or length near INT_MAX (a row with hp_start 2147483647 crashed train). */
static inline int segment_fits(int start, int len, int n)
{
    return start >= 0 && len >= 1 && len <= n && start <= n - len;
}

#define PS_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Whether a section's checksum matches. The fuzz build (PS_FUZZ, which
 * defines PS_FUZZ_NO_CHECKSUM) takes every checksum as right, so that
 * mutated model files reach the parsers behind the checksums (cJSON, the
 * tree check, the parameters) instead of all being refused at the first. */
#ifdef PS_FUZZ_NO_CHECKSUM
#define PSI_CHECKSUM_OK(got, want) ((void)(got), (void)(want), 1)
#else
#define PSI_CHECKSUM_OK(got, want) ((got) == (want))
#endif

#endif
