/*
 * pairsight_core.h - the core of the pairsight API: errors, the tables, the
 * features, the segment model, prediction, calibrated bounds, the planner
 * and what language bindings need. The overview, the conventions and a
 * worked example open include/pairsight.h, the umbrella header that
 * includes this one and the headers of the other audiences
 * (pairsight_collect.h, pairsight_eval.h, pairsight_colocate.h).
 */
#ifndef PAIRSIGHT_CORE_H
#define PAIRSIGHT_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* PS_API marks the functions that the shared library exports; it is built
 * with hidden visibility, so nothing else (internal helpers, XGBoost's
 * symbols) is visible to a program that links it. */
#if defined(__GNUC__) || defined(__clang__)
#define PS_API __attribute__((visibility("default")))
#else
#define PS_API
#endif

#define PS_VERSION_MAJOR 0
#define PS_VERSION_MINOR 1
#define PS_VERSION_PATCH 0
#define PS_VERSION_STRING "0.1.0"

/** Operator slots per side of the segment model's input window (the default
 *  of ps_train_params_t.window, and the most operators per side that the
 *  PairSight-input baselines and ps_model_explain accept). */
#define PS_WINDOW 16

/** Size of the GPU name buffers the API fills (terminator included), e.g.
 *  ps_collect_device_t.gpu. GPU names are the gpu column of the tables. */
#define PS_GPU_NAME_MAX 64

/** @return the library's version string, e.g. "0.1.0" (static storage). */
PS_API const char *ps_version(void);

/** @return the most threads a call of the library accepts (4 per online
 *  core, at least 16, at most 65536); a thread count above it is PS_E_ARG,
 *  and a command-line tool states it as the bound of its --threads. */
PS_API int ps_thread_limit(void);

/** The did-you-mean suggestion: the nearest of the n names to s (optimal
 *  string alignment distance at most a third of its length, at least 1; a
 *  prefix of four or more letters, or a singular of a plural, counts as
 *  one step). @return that name (one of names), or NULL when none is near.
 *  Thread-safe. */
PS_API const char *ps_nearest(const char *s, const char *const *names, size_t n);

/**
 * Progress of long work (simulation, training, evaluation, co-location
 * evaluation, collection campaigns): stage is a short constant string naming
 * the step ("simulate", "HP depth 6 eta 0.3", ...), done and total count its
 * units (total 0 when unknown). Called on the thread that made the call.
 */
typedef void (*ps_progress_fn)(const char *stage, double done, double total, void *user);

/* ======================================================================== */
/* Errors and logging (src/common)                                           */
/* ======================================================================== */
/*
 * Contract: a failing call returns one of the codes below and records a
 * message for the calling thread; the message names the file, line and
 * column for input errors, the failing call and path for I/O errors, and
 * carries XGBoost's, CUDA's or SQLite's own message for theirs. Messages of
 * other threads are never mixed in. The log callback receives warnings (a
 * skipped row, a baseline that failed to train) that do not fail the call.
 */

enum {
    PS_OK = 0,
    PS_E_INPUT = -1,   /* malformed or inconsistent input data */
    PS_E_IO = -2,      /* a file could not be read or written */
    PS_E_NOMEM = -3,   /* out of memory */
    PS_E_ARG = -4,     /* invalid argument from the caller */
    PS_E_BACKEND = -5, /* XGBoost, CUDA, SQLite or another library failed */
    PS_E_MISMATCH = -6 /* artefact built for another layout, GPU or version */
};

/** @return a short constant description of a PS_E_* code ("unknown error"
 *  for another value). */
PS_API const char *ps_errstr(int code);

/**
 * @return the message of the last failed call on this thread, e.g.
 * "ops.csv:12:7: duration_ns: not a number"; "no error" before any failure.
 * Valid until the next failing call on the same thread; never NULL.
 */
PS_API const char *ps_last_error(void);

typedef enum { PS_LOG_DEBUG, PS_LOG_INFO, PS_LOG_WARN, PS_LOG_ERROR } ps_log_level_t;
typedef void (*ps_log_fn)(ps_log_level_t level, const char *msg, void *user);

/** Route library messages to fn (NULL restores the default: warnings and
 *  errors to stderr). Set it before starting threads that call the library:
 *  it is not synchronized with concurrent logging. @return nothing. */
PS_API void ps_log_set(ps_log_fn fn, void *user);

/** An output file written atomically, as the library writes its own files:
 *  the text goes to a temporary file beside path, ps_outfile_commit flushes,
 *  fsyncs and renames it over path (a crash never leaves half a file), and
 *  ps_outfile_abort removes it; either call closes the stream and frees the
 *  handle. While it is open, another writer of path (in any process) is
 *  refused with "PATH is being written by pid N". Symbolic links planted at
 *  the lock or temporary names are refused, never followed.
 *  @return ps_outfile_open: 0, PS_E_ARG (NULL), PS_E_IO (cannot create,
 *  locked by another writer) or PS_E_NOMEM; ps_outfile_commit: 0 or PS_E_IO
 *  naming the failed step (write, flush, fsync, close, rename). */
typedef struct ps_outfile ps_outfile_t;
PS_API int ps_outfile_open(const char *path, ps_outfile_t **out);
/** @return the stream to write to, owned by f. */
PS_API FILE *ps_outfile_stream(ps_outfile_t *f);
PS_API int ps_outfile_commit(ps_outfile_t *f);
/** Removes the temporary file; NULL is a no-op. @return nothing. */
PS_API void ps_outfile_abort(ps_outfile_t *f);

/** An output lock: an exclusive lock on "<path>.lock" for as long as a
 *  command writes path, so that a second writer (in any process) is told
 *  "PATH is being written by pid N" instead of one of two results being
 *  silently lost; with wait nonzero it waits for the other writer instead.
 *  ps_outfile_open takes the same lock, and a path this process already
 *  holds is counted, not locked again. The lock file is removed at the last
 *  release; a symbolic link planted at its name is refused.
 *  @return 0, PS_E_ARG (NULL), PS_E_IO (held by another writer, or the lock
 *  file cannot be made) or PS_E_NOMEM. */
typedef struct ps_outlock ps_outlock_t;
PS_API int ps_outlock_acquire(const char *path, int wait, ps_outlock_t **out);
/** Releases one hold of the lock; NULL is a no-op. @return nothing. */
PS_API void ps_outlock_release(ps_outlock_t *l);

/** Writes s to f as one CSV field (RFC 4180: quoted, with quotes doubled,
 *  when it holds a comma, a quote or a line break), as the tables' savers
 *  do; NULL writes nothing. @return nothing. */
PS_API void ps_csv_put_field(FILE *f, const char *s);

/** The text of a JSON number as every JSON text of pairsight writes it:
 *  an integer below 2^53 without a point, any other finite double with 17
 *  significant digits (which read back as the same double), and null for
 *  NaN and infinities. buf needs 32 bytes.
 *  @return 0, or PS_E_ARG for a NULL or short buffer. */
PS_API int ps_json_number(double v, char *buf, size_t n);
/** Writes a cJSON tree (a `cJSON *` of <cjson/cJSON.h>, the parser the
 *  library links) to f as compact JSON, as the library writes its own:
 *  numbers by ps_json_number, strings escaped with any invalid UTF-8 byte
 *  as U+FFFD. For front ends that build their replies with cJSON.
 *  @return 0, PS_E_ARG (NULL f) or PS_E_IO when f reports an error. */
struct cJSON;
PS_API int ps_json_write(const struct cJSON *v, FILE *f);

/* ---- the one JSON reader (src/common/sjson.c) ----
 * A strict RFC 8259 tokenizer that parses a text in place into one flat
 * array of tokens: no allocation per value (the array is kept across calls
 * and grows by doubling), strings unescaped in place when read, numbers
 * converted when read. The library reads every JSON text it is given with
 * it, and `pairsight serve` its request bodies: cJSON would allocate a node
 * and a string per value, about 15,000 allocations for a 1,000-query
 * /v1/predict body. */
typedef enum {
    PS_JSON_NULL,
    PS_JSON_FALSE,
    PS_JSON_TRUE,
    PS_JSON_NUMBER,
    PS_JSON_STRING,
    PS_JSON_ARRAY,
    PS_JSON_OBJECT
} ps_json_type_t;

/** One value. For a string, start..end is its text between the quotes (raw
 *  until ps_json_str unescapes it); for other values the whole value. size
 *  counts an array's elements or an object's members; next is the index of
 *  the token after this value's subtree (an object member's key is a string
 *  token followed by its value's subtree). Token 0 is the whole text. */
typedef struct {
    unsigned char type, escaped;
    int start, end, size, next;
} ps_json_tok_t;

/** A parsed text. Zero it before the first ps_json_parse; max_depth (0:
 *  64) bounds nesting; with allow_trailing, text after the value is left
 *  unread (from byte end on) instead of refused. */
typedef struct {
    char *text; /* the text, modified in place by ps_json_str */
    size_t len;
    ps_json_tok_t *tok;
    int n, cap;
    int max_depth;      /* containers nested deeper are refused */
    int allow_trailing; /* text after the value is not an error */
    size_t end;         /* after a parse: the byte after the value and its white space */
    size_t err_at;      /* after a refusal: the byte where the text stops being JSON */
    char err[160];      /* why the text was refused ("... near byte err_at") */
} ps_json_doc_t;

/** Tokenizes text[len] into d (d->tok kept from earlier calls and grown as
 *  needed). The text must stay alive and writable while the tokens are
 *  used. The library's last error is left alone: the message is d->err
 *  ("not valid JSON near byte N", "expected ':' near byte N", "nested
 *  deeper than D", "out of memory").
 *  @return 0, PS_E_INPUT (not JSON, too deep, longer than 1 GiB) or
 *  PS_E_NOMEM. */
PS_API int ps_json_parse(ps_json_doc_t *d, char *text, size_t len);
/** Releases d's token array (d may be parsed again). @return nothing. */
PS_API void ps_json_doc_free(ps_json_doc_t *d);
/** @return the token of the value of member key of object token obj (key
 *  compared ignoring ASCII case when nocase; of duplicate keys the last, as
 *  Go's encoding/json and so kube-scheduler read them), or -1. */
PS_API int ps_json_get(ps_json_doc_t *d, int obj, const char *key, int nocase);
/** @return the first child of array or object token t (an object's first
 *  key), or -1 when it is empty; the others follow by ps_json_next. */
PS_API int ps_json_child(const ps_json_doc_t *d, int t);
/** @return the sibling after t within its container (for a key, with
 *  is_key set, the next key); the container's size says how many. */
PS_API int ps_json_next(const ps_json_doc_t *d, int t, int is_key);
/** @return string token t, unescaped and NUL-terminated in place
 *  (idempotent; \u0000 becomes U+FFFD). */
PS_API const char *ps_json_str(ps_json_doc_t *d, int t);
/** Number token t as a double into *out; finite numbers only (1e400 is
 *  refused). @return 0, or PS_E_INPUT when t is not such a number. */
PS_API int ps_json_num(const ps_json_doc_t *d, int t, double *out);
/** Number token t as an int in lo..hi into *out. @return 0, or PS_E_INPUT
 *  when t is not an integer in that range. */
PS_API int ps_json_int(const ps_json_doc_t *d, int t, long lo, long hi, int *out);
/** @return "an object", "a string", ... (of a ps_json_type_t) for
 *  messages. */
PS_API const char *ps_json_type_name(int type);

/* ---- a growing text buffer, for JSON replies ---- */
/** On an allocation failure oom is set and the rest is dropped. Zero it
 *  before use. */
typedef struct {
    char *s;
    size_t len, cap;
    int oom;
} ps_buf_t;

/** Appends s[n]. @return nothing. */
PS_API void ps_buf_putn(ps_buf_t *b, const char *s, size_t n);
/** Appends the string s. @return nothing. */
PS_API void ps_buf_puts(ps_buf_t *b, const char *s);
/** Appends printf's text. @return nothing. */
PS_API void ps_buf_printf(ps_buf_t *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** Appends s as a JSON string, quotes included; bytes that are not UTF-8
 *  become U+FFFD, so that the text is JSON whatever s holds.
 *  @return nothing. */
PS_API void ps_buf_json_str(ps_buf_t *b, const char *s);
/** Appends v as ps_json_number writes it. @return nothing. */
PS_API void ps_buf_json_num(ps_buf_t *b, double v);
/** Appends v[0..n) as ps_json_number writes them, joined by commas (no
 *  brackets). @return nothing. */
PS_API void ps_buf_json_nums(ps_buf_t *b, const double *v, size_t n);
/** Releases the text and zeroes b. @return nothing. */
PS_API void ps_buf_free(ps_buf_t *b);

/** @return a monotonic wall clock in seconds, for timings and progress. */
PS_API double ps_now(void);

/* ======================================================================== */
/* Tables (src/profile)                                                      */
/* ======================================================================== */
/*
 * Contract: the five tables of docs/FORMATS.md. A loader validates the whole
 * file (header, types, keys, gaps) before it returns, so that a table handle
 * always holds a valid table; an error names path:line:column. Saves are
 * atomic (temp file, fsync, rename): a crash never leaves half a file.
 * Thread safety: a loaded table is read-only and may be read from any number
 * of threads at once; the functions that change a table are internal.
 */

/** Which table a CSV file holds, detected from its header. */
typedef enum {
    PS_TABLE_UNKNOWN = 0,
    PS_TABLE_OPS,
    PS_TABLE_COEXEC,
    PS_TABLE_WORKLOADS,
    PS_TABLE_SCALING,
    PS_TABLE_COLOCATIONS,
    PS_TABLE_COUNT
} ps_table_kind_t;

/** @return the name of a table kind: "ops", "coexec", "workloads",
 *  "workload_scaling", "colocations" ("unknown" otherwise); static. */
PS_API const char *ps_table_name(ps_table_kind_t kind);

typedef struct ps_ops ps_ops_t;                 /* ops.csv */
typedef struct ps_coexec ps_coexec_t;           /* coexec.csv */
typedef struct ps_workloads ps_workloads_t;     /* workloads.csv */
typedef struct ps_scaling ps_scaling_t;         /* workload_scaling.csv */
typedef struct ps_colocations ps_colocations_t; /* colocations.csv */

/** Summary of a validated file, for `pairsight check`. */
typedef struct {
    ps_table_kind_t kind;
    size_t rows;
    size_t groups; /* (gpu, model, batch) for ops and coexec, workloads or
                      co-locations for the others */
} ps_check_result_t;

/** Detect the table in path and validate it whole into *out.
 *  @return 0, PS_E_IO when path cannot be read, PS_E_INPUT (path:line:column
 *  in the message) when it is not a valid table. */
PS_API int ps_table_check(const char *path, ps_check_result_t *out);
/** The same, and a coexec file is also checked against the n_ops ops
 *  tables (borrowed; none when n_ops is 0): every row's models and batches
 *  have a profile in one of them, its segments lie inside it and its TPC
 *  counts were profiled (path:line:column names the first row that fails).
 *  coexec files are streamed: memory holds the first row of each experiment,
 *  not every row. @return as ps_table_check. */
PS_API int ps_table_check_with(const char *path, const ps_ops_t *const *ops, int n_ops, ps_check_result_t *out);
/** The table kind of path from its header alone into *out. @return 0,
 *  PS_E_IO when path cannot be read, PS_E_INPUT when no table's header
 *  matches. */
PS_API int ps_table_detect(const char *path, ps_table_kind_t *out);
/** A colocations or workload_scaling file of the given kind (as
 *  ps_table_check found it; any other kind passes), valid alone, checked
 *  against the n_w workloads tables (borrowed): every row's (gpu, workload)
 *  has a row in one of them (not checked when n_w is 0) and every
 *  co-location's slots are 1..k. @return 0, PS_E_ARG (NULL path, or NULL w
 *  with n_w > 0), PS_E_IO, or PS_E_INPUT naming path:line:column. */
PS_API int ps_table_check_workloads(const char *path, ps_table_kind_t kind, const ps_workloads_t *const *w, int n_w);
/** @return 1 when path's first record is an overlap.csv header (the table
 *  of co-running operator groups, FORMATS.md), 0 when not, PS_E_ARG (NULL)
 *  or PS_E_IO when path cannot be read. */
PS_API int ps_table_is_overlap(const char *path);
/** @return how many of t's rows are estimated, not measured (a source
 *  column such as twin-ratio, from import --tpcs-from twin); 0 for NULL. */
PS_API size_t ps_ops_estimated(const ps_ops_t *t);
/** @return the catalog name of a GPU named by its name or an alias ("a100"
 *  -> "A100-SXM4-40GB") or the name its driver reports ("NVIDIA H100 80GB
 *  HBM3" -> "H100-SXM"), name itself when the catalog does not know it (a
 *  measured GPU outside it), NULL for NULL. Compare GPU names by these, so
 *  that an alias works everywhere. */
PS_API const char *ps_gpu_canonical(const char *name);

/* Load a table. On success *out owns all its memory (release with the
 * matching _free); on error *out is NULL.
 * @return 0, PS_E_IO, PS_E_INPUT (the message names path:line:column and,
 * when the file holds another table, which one), or PS_E_NOMEM. */
PS_API int ps_ops_load(const char *path, ps_ops_t **out);
PS_API int ps_coexec_load(const char *path, ps_coexec_t **out);
PS_API int ps_workloads_load(const char *path, ps_workloads_t **out);
PS_API int ps_scaling_load(const char *path, ps_scaling_t **out);
PS_API int ps_colocations_load(const char *path, ps_colocations_t **out);

/* Save atomically (temp file, fsync, rename); t is unchanged.
 * @return 0 or PS_E_IO (the message names the failing call and path). */
PS_API int ps_ops_save(const ps_ops_t *t, const char *path);
PS_API int ps_coexec_save(const ps_coexec_t *t, const char *path);
PS_API int ps_workloads_save(const ps_workloads_t *t, const char *path);
PS_API int ps_scaling_save(const ps_scaling_t *t, const char *path);
PS_API int ps_colocations_save(const ps_colocations_t *t, const char *path);

/* Release a table; NULL is a no-op. @return nothing. */
PS_API void ps_ops_free(ps_ops_t *t);
PS_API void ps_coexec_free(ps_coexec_t *t);
PS_API void ps_workloads_free(ps_workloads_t *t);
PS_API void ps_scaling_free(ps_scaling_t *t);
PS_API void ps_colocations_free(ps_colocations_t *t);

/** @return the number of rows of a loaded table (0 for NULL). */
PS_API size_t ps_ops_rows(const ps_ops_t *t);
PS_API size_t ps_coexec_rows(const ps_coexec_t *t);
PS_API size_t ps_workloads_rows(const ps_workloads_t *t);
PS_API size_t ps_colocations_rows(const ps_colocations_t *t);

/** One row of colocations.csv (FORMATS.md), plain data: a workload in slot
 *  slot of co-location colocation on gpu at share_pct % of the GPU, with
 *  its measured throughput tput (NAN when not measured). */
typedef struct {
    const char *colocation, *gpu;
    int slot;
    const char *workload;
    int share_pct;
    double tput;
} ps_colocation_row_t;
/** @return row i of t, borrowed from t (its strings too), or NULL for NULL
 *  t or i past the last row. */
PS_API const ps_colocation_row_t *ps_colocations_row(const ps_colocations_t *t, size_t i);
/** An empty colocations table, to fill row by row in memory (queries for
 *  ps_coloc_predict); release with ps_colocations_free. @return it, or NULL
 *  when out of memory. */
PS_API ps_colocations_t *ps_colocations_new(void);
/** Appends a copy of *row (its strings copied) to t, unchecked: a
 *  co-location's rows must be appended together, slot 1 first.
 *  @return 0, PS_E_ARG (NULL) or PS_E_NOMEM. */
PS_API int ps_colocations_append(ps_colocations_t *t, const ps_colocation_row_t *row);
/** The sizes k of t's co-locations (their numbers of slots) as a bit mask
 *  into *out: bit k set when one has k slots (k >= 31 sets bit 31).
 *  @return 0, PS_E_ARG (NULL) or PS_E_NOMEM. */
PS_API int ps_colocations_ks(const ps_colocations_t *t, unsigned *out);

/* ======================================================================== */
/* Features (src/features)                                                   */
/* ======================================================================== */
/*
 * Contract: a pair of segments becomes a fixed-layout vector: one token per
 * operator slot of each side (PS_WINDOW slots by default), the SM split and
 * both standalone latencies. The variant and the layout version are stored
 * with every model, which refuses inputs of another layout. The split of a
 * campaign into train, validation and test is by experiment, never by run.
 * Thread safety: these functions share no state.
 */

/** Input variants: the full PairSight input and the ablations of the paper's
 *  Fig. 4. The variant is part of the feature layout stored with a model. */
typedef enum {
    PS_FEAT_FULL = 0,        /* tokens of both sides, counters, p, q, standalone latencies */
    PS_FEAT_NO_CORUNNER = 1, /* the co-runner's tokens left out */
    PS_FEAT_SUMMED = 2,      /* each side's tokens summed into one */
    PS_FEAT_DURATIONS = 3,   /* durations (and presence) only, no counters */
    PS_FEAT_UTILIZATION = 4, /* sm_pct and mem_pct in place of DRAM and stall counters */
    PS_FEAT_COUNT = 5
} ps_feature_variant_t;

/** @return the variant's name: "full", "no-corunner", "summed", "durations",
 *  "utilization" ("?" for an invalid value); static. */
PS_API const char *ps_feature_variant_name(ps_feature_variant_t v);
/** The variant of a name into *out. @return 0, or PS_E_ARG (the message
 *  lists the names) when name is none of them. */
PS_API int ps_feature_variant_from_name(const char *name, ps_feature_variant_t *out);

/** The two sides of a co-execution, also the index of per-side arrays. */
enum { PS_SIDE_HP = 0, PS_SIDE_LP = 1 };

/** The split of a coexec.csv row, by experiment, never by run: 80% train,
 *  10% validation, 10% test; with PS_CALIB_MIN_EXPERIMENTS experiments or
 *  more, the last eighth of the training experiments (10% of all) is the
 *  calibration split of the upper bounds, so that 70% train. */
enum { PS_SPLIT_TRAIN = 0, PS_SPLIT_VALID = 1, PS_SPLIT_TEST = 2, PS_SPLIT_CALIB = 3 };
#define PS_CALIB_MIN_EXPERIMENTS 20

/**
 * Assign every row of cx to a split (out_split[ps_coexec_rows(cx)], owned by
 * the caller). All runs of one experiment share a split. The split of an
 * experiment depends only on its name, seed and the set of experiment names
 * in cx (experiments are ranked by a seeded hash of their name; the first 80%
 * train, the next 10% validate, the rest test), never on row order. This is
 * the split ps_model_train uses with the same seed.
 * @return 0, PS_E_ARG for a NULL argument, or PS_E_NOMEM.
 */
PS_API int ps_coexec_split(const ps_coexec_t *cx, uint64_t seed, unsigned char *out_split);

/* ======================================================================== */
/* Model (src/model)                                                         */
/* ======================================================================== */
/*
 * Contract: the segment model. Two XGBoost regressors, one per side, predict
 * log(delta) of a pair of segments of at most `window` operators each,
 * delta = co-executed latency / standalone latency. Every call that takes
 * ops reads the standalone profile of the segments from it; ops and cx are
 * borrowed for the call only. A model file carries a magic, a format
 * version, the feature layout, the GPU and the window, and is refused
 * (PS_E_MISMATCH) when any of them does not match.
 * Thread safety: a trained or loaded model is read-only; prediction,
 * explanation and ps_model_info may run concurrently on one model.
 * Training uses params->nthread XGBoost threads.
 */

typedef struct ps_model ps_model_t;

/** Training and adaptation parameters; start from ps_train_default_params(). */
typedef struct {
    ps_feature_variant_t variant; /* input variant (default PS_FEAT_FULL) */
    int window;                   /* operator slots per side (default PS_WINDOW) */
    uint64_t seed;                /* experiment split seed (default 1) */
    int nthread;                  /* XGBoost threads; 0 (default) = one below 20,000
                                     rows (XGBoost's waiting threads cost more than
                                     they gain there), else all cores */
    int max_rounds;               /* most trees per regressor (default 400) */
    int early_stopping;           /* stop after this many rounds without a better
                                     validation RMSE on log delta (default 20) */
    int n_depths;                 /* grid of max_depth, chosen on validation MAPE */
    int depths[4];                /* (default {6, 8}) */
    int n_etas;                   /* grid of learning rates */
    double etas[4];               /* (default {0.1, 0.3}) */
    double subsample;             /* row subsample per tree (default 1.0) */
    /* The grid scales with the data: of the depth-major grid points
     * (depths[0] with each eta, then depths[1] ...), the first
     * max(1, grid_rows / training rows) are trained, so that a large data
     * set trains the shallowest, slowest-learning points only. 0 = every
     * point (default 60000: the whole default grid up to 15,000 training
     * rows, depth 6 with both rates up to 30,000, then depth 6, eta 0.1). */
    int grid_rows;
    /* Adaptation (ps_model_adapt): trees added per regressor and their
     * learning rate; all rows given to adapt are used for training. */
    int adapt_rounds;        /* (default 30) */
    double adapt_eta;        /* (default 0.05) */
    int adapt_depth;         /* max_depth of the added trees, or 0 (default):
                                per side, the one of 1, 2, 3 with the lowest
                                MAPE on held-out experiments of the new rows
                                (their validation and test splits by seed),
                                1 with fewer than 5 experiments */
    ps_progress_fn progress; /* NULL = none */
    void *progress_user;
} ps_train_params_t;

/** @return the default parameters described in ps_train_params_t. */
PS_API ps_train_params_t ps_train_default_params(void);

/**
 * Train a model on the rows of cx (segments of at most params->window
 * operators; longer rows are skipped with a warning), split by experiment
 * (ps_coexec_split with params->seed: PS_SPLIT_*). For each side, every grid
 * point trains with early stopping on the validation split and the one with
 * the lowest validation latency MAPE is kept. All rows of cx must be of one
 * GPU. params NULL = defaults. On success *out is owned by the caller
 * (ps_model_free); on error *out is NULL.
 * @return 0, PS_E_ARG (bad parameters), PS_E_INPUT (cx and ops do not fit:
 * the message names the row and what is missing), PS_E_BACKEND (XGBoost's
 * message) or PS_E_NOMEM.
 */
PS_API int ps_model_train(const ps_ops_t *ops, const ps_coexec_t *cx, const ps_train_params_t *params,
                          ps_model_t **out);

/**
 * Continued training: a new model equal to m plus params->adapt_rounds trees
 * per regressor fitted at params->adapt_eta on every row of cx (a few
 * experiments of an unseen model or batch size). m is unchanged. On success
 * *out is owned by the caller.
 * @return as ps_model_train; PS_E_INPUT when cx is of another GPU than m.
 */
PS_API int ps_model_adapt(const ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *cx,
                          const ps_train_params_t *params, ps_model_t **out);

/** Save atomically: magic, format version, feature layout, GPU, window,
 *  training metadata and both regressors in one file.
 *  @return 0, PS_E_IO or PS_E_BACKEND. */
PS_API int ps_model_save(const ps_model_t *m, const char *path);
/** Load a model file into *out (owned by the caller).
 *  @return 0, PS_E_IO, PS_E_INPUT (not a model file), PS_E_MISMATCH (another
 *  format or feature layout version) or PS_E_NOMEM. */
PS_API int ps_model_load(const char *path, ps_model_t **out);
/** Release a model; NULL is a no-op. @return nothing. */
PS_API void ps_model_free(ps_model_t *m);

/** What a model is and how it was trained. Strings point into the model and
 *  live as long as it. */
typedef struct {
    int format_version; /* of the model file */
    int layout_version; /* of the feature layout */
    ps_feature_variant_t variant;
    int window, n_features;
    const char *gpu;
    size_t n_samples;                /* co-execution rows used */
    size_t n_train, n_valid, n_test; /* rows per split */
    size_t n_experiments;
    uint64_t seed;              /* experiment split seed */
    uint64_t split_fingerprint; /* of the training campaign's experiment set;
                                   0 when the file does not record it */
    double train_seconds;
    int depth[2];         /* chosen max_depth per side (PS_SIDE order: HP, LP) */
    double eta[2];        /* chosen learning rate per side */
    int n_trees[2];       /* trees per side (adaptation included) */
    double valid_mape[2]; /* validation latency MAPE (%) per side */
    double test_mape[2];  /* held-out test latency MAPE (%) per side */
    int n_adapt;          /* continued-training passes applied */
    size_t adapt_samples; /* rows used by the last one */
    int adapt_depth[2];   /* depth of its trees per side (0: none) */
    double adapt_seconds; /* time of the last one */
    size_t n_calib;       /* rows of the calibration split of the bounds (0: none) */
} ps_model_info_t;

/** What m is, into *out. @return 0, or PS_E_ARG for a NULL argument. */
PS_API int ps_model_info(const ps_model_t *m, ps_model_info_t *out);

/* ======================================================================== */
/* Prediction (src/model)                                                    */
/* ======================================================================== */
/*
 * Contract: a query names one candidate co-execution by the key columns of
 * coexec.csv. Segments longer than the model's window are divided into
 * windows whose predictions are composed (ps_compose_t). Outputs go into
 * the caller's arrays; on failure the message names the query index and
 * what is missing, and the outputs are unspecified.
 * Thread safety: as for models; a batch uses the OpenMP threads of the
 * calling thread (omp_set_num_threads / OMP_NUM_THREADS).
 */

/** One candidate co-execution: the key columns of coexec.csv. Strings are
 *  borrowed for the duration of the call. */
typedef struct {
    const char *gpu;
    const char *hp_model;
    int hp_batch, hp_start, hp_len;
    const char *lp_model;
    int lp_batch, lp_start, lp_len;
    int hp_tpcs, lp_tpcs;
} ps_query_t;

/** One field of ps_query_t: its name (coexec.csv's column, the queries
 *  file's, `--query`'s key, the service's JSON member, Python's), whether
 *  it is a string (const char *) or an int, its offset in ps_query_t,
 *  whether it is required (every field but gpu, which defaults to the
 *  model's GPU), and an int's bounds. */
typedef struct {
    const char *name;
    int is_string;
    size_t offset;
    int required;
    long lo, hi;
} ps_query_field_t;
/** The one table of ps_query_t's fields, in coexec.csv's column order;
 *  every reader of a query (the queries file, ps_query_parse, the service,
 *  ps_query_layout_json) is derived from it. @return the table, its length
 *  (11) in *n (n may be NULL). */
PS_API const ps_query_field_t *ps_query_fields(int *n);

/** One query written as key=value pairs joined by commas, as `pairsight
 *  explain --query` takes it ("hp_model=resnet50,hp_batch=8,..."): every
 *  field but gpu is required, each once at most. buf is cut up in place and
 *  the strings of *out point into it. @return 0, or PS_E_ARG naming the
 *  pair at fault (an unknown or repeated key, a bad number, a missing key)
 *  or for a NULL argument. */
PS_API int ps_query_parse(char *buf, ps_query_t *out);

/** A queries file (FORMATS.md, `pairsight predict --queries`): a header
 *  naming every key column of coexec.csv once, in any order, with other
 *  columns kept as they are (to echo beside the predictions), then one
 *  query per record. gpu may be left out: then every query is on
 *  default_gpu (copied; the model's GPU, from ps_model_info). On error
 *  *out is NULL and the message names file:line[:column].
 *  @return 0, PS_E_ARG (NULL), PS_E_IO, PS_E_INPUT or PS_E_NOMEM. */
typedef struct ps_queries ps_queries_t;
PS_API int ps_queries_load(const char *path, const char *default_gpu, ps_queries_t **out);
/** NULL is a no-op. @return nothing. */
PS_API void ps_queries_free(ps_queries_t *q);
/** @return the number of queries (0 for NULL). */
PS_API size_t ps_queries_count(const ps_queries_t *q);
/** @return the queries, an array of ps_queries_count, owned by q (their
 *  strings too); NULL for NULL or an empty file. */
PS_API const ps_query_t *ps_queries_array(const ps_queries_t *q);
/** @return the file's line of query i (the header is line 1; a quoted
 *  field may span lines), 0 for i out of range. */
PS_API size_t ps_queries_line(const ps_queries_t *q, size_t i);
/** @return the number of the file's columns (0 for NULL). */
PS_API int ps_queries_ncols(const ps_queries_t *q);
/** @return the name of column c, or the text of query i in column c, owned
 *  by q; NULL out of range. */
PS_API const char *ps_queries_header(const ps_queries_t *q, int c);
PS_API const char *ps_queries_cell(const ps_queries_t *q, size_t i, int c);

/** How window predictions are composed for segments longer than the window. */
typedef enum {
    /* Published composition (PairSight Eq. 4): window i of one side is
     * paired with window i of the other (a side with more windows pairs its
     * extra windows with the other side's last window); a side's latency is
     * the sum of its windows' predictions. */
    PS_COMPOSE_INDEX = 0,
    /* Time-aligned: build both sides' predicted timelines, give each window
     * the overlap-weighted slowdown of the co-runner windows that overlap it
     * (a window's part that outlasts the co-runner runs at its standalone
     * speed), rebuild the timelines and iterate until they settle. */
    PS_COMPOSE_OVERLAP = 1,
    PS_COMPOSE_COUNT = 2
} ps_compose_t;

/** @return "index" or "overlap" ("?" for an invalid value); static. */
PS_API const char *ps_compose_name(ps_compose_t c);
/** The composition of a name into *out. @return 0, or PS_E_ARG. */
PS_API int ps_compose_from_name(const char *name, ps_compose_t *out);

/**
 * Predict the co-execution latency (ns) of n queries into the caller's
 * arrays out_hp_ns[n] and out_lp_ns[n], composing windows with
 * PS_COMPOSE_OVERLAP.
 * @return 0, or PS_E_INPUT when a query names a GPU other than the model's,
 * an operator, model or batch absent from ops (the message lists the models
 * ops holds), a TPC count without a standalone duration (the message lists
 * the TPC counts ops has), or more TPCs than the GPU has.
 */
PS_API int ps_model_predict(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n, double *out_hp_ns,
                            double *out_lp_ns);

/**
 * As ps_model_predict with a choice of composition, and optionally each
 * side's standalone latency at its TPCs (out_hp_solo_ns, out_lp_solo_ns may
 * be NULL; delta = out_hp_ns / out_hp_solo_ns). @return as ps_model_predict.
 */
PS_API int ps_model_predict_compose(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n,
                                    ps_compose_t method, double *out_hp_ns, double *out_lp_ns, double *out_hp_solo_ns,
                                    double *out_lp_solo_ns);

/**
 * Check one query as ps_model_predict would, without predicting.
 * @return 0 when it can be predicted, else the error code with a message
 * that names what is missing (no "query N" prefix; callers add their own).
 */
PS_API int ps_model_check_query(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q);

/** One operator's (or input's) part in a prediction, in log delta. */
typedef struct {
    int side;            /* regressor: PS_SIDE_HP (0) or PS_SIDE_LP (1) */
    int owner;           /* whose input: 0 = HP segment, 1 = LP segment, -1 = neither (p, q, ...) */
    int op;              /* operator index in ops.csv, or -1 */
    const char *name;    /* operator name (borrowed from ops) or input name (static) */
    double contribution; /* SHAP value summed over the operator's token, in log delta */
} ps_contribution_t;

/** A prediction taken apart. Owned by the caller: ps_explanation_free. */
typedef struct {
    double hp_ns, lp_ns; /* predicted latency */
    double hp_solo_ns, lp_solo_ns;
    double bias[2]; /* expected log delta per side (SHAP bias) */
    size_t n;       /* items, HP regressor first, each side sorted by
                       decreasing |contribution| */
    ps_contribution_t *items;
} ps_explanation_t;

/** Explain one query whose segments fit in one window: XGBoost SHAP
 *  contributions folded back to the named operators of both segments, into
 *  *out (owned by the caller). Operator names are borrowed from ops, which
 *  must outlive *out.
 *  @return as ps_model_predict; PS_E_ARG for a segment longer than the
 *  window; PS_E_BACKEND (XGBoost's message). */
PS_API int ps_model_explain(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, ps_explanation_t **out);
/** Release an explanation; NULL is a no-op. @return nothing. */
PS_API void ps_explanation_free(ps_explanation_t *e);

/* The model outside pairsight (docs/model.md "Export"): its regressors for
 * XGBoost itself, its metadata, and the exact rows the regressors read. */

/**
 * Write dir/hp.ubj and dir/lp.ubj, the two regressors as XGBoost UBJSON
 * (loadable by XGBoost's Booster(model_file=...); their raw output, the
 * margin, is log delta), and dir/meta.json (ps_model_meta_json). dir must
 * exist; each file is written atomically. Thread-safe on one model.
 * @return 0, PS_E_IO naming the file, or PS_E_BACKEND.
 */
PS_API int ps_model_export(const ps_model_t *m, const char *dir);

/**
 * The model's metadata as JSON text (schema "pairsight.model_meta.v1"):
 * GPU, feature layout with the name of every column, target transform,
 * booster files, training summary.
 * @return 0 with *out a NUL-terminated string owned by the caller
 * (ps_free), or PS_E_NOMEM with *out NULL.
 */
PS_API int ps_model_meta_json(const ps_model_t *m, char **out);

/** The same document on one line, without a newline, as `pairsight model
 *  info --json` prints it. @return as ps_model_meta_json. */
PS_API int ps_model_meta_json_compact(const ps_model_t *m, char **out);

/** Release memory the library handed out (ps_model_meta_json); NULL is a
 *  no-op. @return nothing. */
PS_API void ps_free(void *p);

/** The name of feature column i, e.g. "hp.op3.dram_bytes" or "p_tpcs", into
 *  buf[size] (64 bytes always suffice). @return 0, or PS_E_ARG for i outside
 *  0..n_features-1. */
PS_API int ps_model_feature_name(const ps_model_t *m, int i, char *buf, size_t size);

/**
 * The rows the two regressors read for n queries whose segments fit in one
 * window each: out_x_hp[n * n_features] and out_x_lp[n * n_features]
 * (caller-owned; NAN is a missing counter) and each side's standalone
 * latency (out_hp_solo_ns[n], out_lp_solo_ns[n]; either may be NULL). For
 * these queries ps_model_predict returns solo * exp(margin), margin the
 * regressor's raw output on its row. Thread-safe on one model.
 * @return 0; PS_E_ARG (naming the query) for a longer segment, or what
 * ps_model_predict returns for a query it cannot predict.
 */
PS_API int ps_model_features(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n, float *out_x_hp,
                             float *out_x_lp, double *out_hp_solo_ns, double *out_lp_solo_ns);

/* ======================================================================== */
/* Decision: bounds and planner (src/decision; the replay: pairsight_eval.h) */
/* ======================================================================== */
/*
 * Contract: calibrated upper bounds on a model's predictions, a planner that
 * turns them into co-location plans within an HP latency budget, and a
 * replay that measures the plans on the simulator's physics
 * (docs/planner.md). Thread safety: ps_model_predict_bound as
 * ps_model_predict; ps_plan and ps_replay_run keep no state between calls
 * and may run concurrently on distinct outputs.
 */

/**
 * Upper bounds on the co-execution latency (ns) of n queries at a coverage
 * in [0.5, 0.999]: each window pair's predicted log delta plus the split-
 * conformal quantile of its Mondrian bin (SM split range x HP
 * memory-boundedness), stored in the model at training from a calibration
 * split of experiments disjoint from train, validation and test; windows are
 * then composed as ps_model_predict does. Outputs are caller-owned [n].
 * PS_E_ARG when the model has no calibration (models of older versions,
 * adapted models). Thread safety as ps_model_predict.
 * @return as ps_model_predict; PS_E_ARG for a coverage outside [0.5, 0.999]
 * or a model without calibration; PS_E_INPUT when the calibration holds too
 * few samples for the coverage.
 */
PS_API int ps_model_predict_bound(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n,
                                  double coverage, double *out_hp_upper_ns, double *out_lp_upper_ns);

/**
 * Calibrate the bounds of segments longer than the model's window (composed
 * from windows) on cx, a campaign of such co-executions disjoint from the
 * one reported on: per side and coverage level, the split-conformal
 * quantile of log(measured / window-composed bound at that level) over the
 * rows longer than the window on a side. ps_model_predict_bound then
 * multiplies a composed segment's bound by exp of it (levels the rows are
 * too few for keep the window-composed bound). Stored with the model
 * (ps_model_save). ops and cx are only read during the call, not kept.
 * Not thread-safe on m.
 * @return 0; PS_E_ARG for a NULL argument or a model without calibration;
 * PS_E_INPUT when cx holds fewer than 20 rows longer than the window or a
 * row the profile lacks; PS_E_NOMEM.
 */
PS_API int ps_model_calibrate_composed(ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *cx);

/**
 * Calibrate the bounds of window-sized segments again on cx, a campaign of
 * its own (another seed, disjoint from training and from any reported set):
 * every row of cx within the window on both sides becomes a calibration row,
 * and the split-conformal quantiles of the residual of log delta (pooled,
 * per SM-split range, per cell, as at training) replace the model's. A
 * larger calibration set than training's held-out share makes the quantiles
 * steadier. The composed-segment calibration is dropped with the old bins
 * (its offsets were residuals of them): call ps_model_calibrate_composed
 * after this one. ops and cx are only read during the call, not kept.
 * Not thread-safe on m.
 * @return 0; PS_E_ARG for a NULL argument; PS_E_INPUT when cx is the
 * campaign the model was trained on (same fingerprint), holds fewer than
 * PS_CALIB_MIN_EXPERIMENTS experiments within the window, or a row the
 * profile lacks; PS_E_NOMEM.
 */
PS_API int ps_model_calibrate_windows(ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *cx);

/** A predictor for the planner: co-execution latencies (ns) of n candidates
 *  into out_hp_ns[n], out_lp_ns[n]; 0 or a negative PS_E_* code. */
typedef int (*ps_plan_predict_fn)(void *user, const ps_query_t *q, size_t n, double *out_hp_ns, double *out_lp_ns);

typedef struct {
    const char *gpu;      /* NULL = the model's */
    const char *hp_model; /* the HP request: every operator of this model */
    int hp_batch;
    const char *lp_model; /* the always-backlogged LP task */
    int lp_batch;
    int lp_start;               /* LP operator the LP stream stands at (0) */
    double budget_ns;           /* latency budget of the whole HP request (required) */
    double coverage;            /* > 0: plan on upper bounds at this coverage; 0:
                                on point predictions (0.95) */
    int window;                 /* operators per HP segment, 0 = the model's window (0) */
    const double *alone_op_ns;  /* [HP operators] each HP operator's latency alone on the
                                whole GPU; NULL = its standalone duration in ops (NULL) */
    double alone_run_ns;        /* fixed cost of each run of HP alone (0) */
    double time_value;          /* LP work an HP nanosecond is otherwise worth: 1 when LP runs
                                alone on the whole GPU whenever HP is idle, so a co-run
                                must gain more LP work than the HP time it adds; 0 =
                                maximize LP work alone (0) */
    int lp_lengths;             /* LP segment lengths tried per split: window*k/lp_lengths,
                                k = 1..lp_lengths (4) */
    ps_plan_predict_fn predict; /* NULL = the model (point or bound); else this
                                predictor, and coverage only labels the plan */
    void *predict_user;
    double slo_factor;   /* > 0: the budget is slo_factor x the HP request alone
                                (alone_ns), in 1..100, and budget_ns stays 0 (0) */
    double time_limit_s; /* planning stops with PS_E_INPUT past this many
                                seconds (0: no limit) (0) */
} ps_plan_params_t;

/** The defaults in brackets above. @return them by value. */
PS_API ps_plan_params_t ps_plan_default_params(void);

/** One step of a plan: an HP segment and what runs beside it. */
typedef struct {
    int hp_start, hp_len, hp_tpcs;
    int lp_start, lp_len, lp_tpcs;   /* lp_len 0: HP alone on the whole GPU */
    double hp_ns, lp_ns;             /* point predictions (alone: the alone estimate) */
    double hp_bound_ns, lp_bound_ns; /* what was budgeted (bounds, or the points) */
    double step_ns;                  /* max(hp_bound_ns, lp_bound_ns) */
    double lp_work_ns;               /* standalone whole-GPU time of the LP operators run */
} ps_plan_step_t;

typedef struct {
    size_t n_steps;
    ps_plan_step_t *steps;
    double budget_ns, planned_ns, alone_ns; /* budget, sum of step_ns, HP alone */
    double lp_work_ns;                      /* LP work of the plan */
    int feasible;                           /* 0: HP alone already exceeds the budget (plan = alone) */
    int lp_end;                             /* LP operator after the plan */
    double coverage, mu;                    /* coverage planned at (0: points); chosen price of time */
    long n_predictions;                     /* candidates predicted */
    double seconds;                         /* planning time */
    char hp_model[64], lp_model[64];        /* the request and the LP task planned beside it */
    int hp_batch, lp_batch;
    long n_predictions_all;      /* ps_plan_best: over every LP candidate (else n_predictions) */
    int total_tpcs, sms_per_tpc; /* the GPU's TPCs and SMs per TPC (the
                                               catalog's, else 2): a split of t TPCs
                                               is t x sms_per_tpc SMs */
} ps_plan_t;

/**
 * Plan one HP request beside the LP task (docs/planner.md): the HP model's
 * operators are cut into segments of at most window operators; each runs
 * alone or beside an LP segment under an SM split, chosen to maximize LP
 * work subject to the sum of the steps' budgeted latencies (upper bounds at
 * coverage, or points) staying within budget_ns (or slo_factor x alone).
 * With the model, a side's budgeted latency is at least its standalone time
 * on its share, and candidates that this floor rules out are not predicted. m may be NULL when
 * p->predict and p->gpu are given. On success *out is the caller's
 * (ps_plan_free). Thread-safe on distinct outputs.
 * @return 0; PS_E_ARG for missing or out-of-range parameters; PS_E_INPUT
 * when ops lacks a model, the whole GPU or a split profiled for both sides,
 * or past time_limit_s; the predictor's code when it fails.
 */
PS_API int ps_plan(const ps_model_t *m, const ps_ops_t *ops, const ps_plan_params_t *p, ps_plan_t **out);
/** The most LP candidates ps_plan_best takes. */
#define PS_PLAN_MAX_LP 64

/**
 * Plan the request beside each of n_lp LP candidates ("MODEL:BATCH" texts;
 * p->lp_model and p->lp_batch are not read) and keep the plan with the most
 * LP work, the first on a tie (what `pairsight plan --lp A:8,B:8` and POST
 * /v1/plan write). p->time_limit_s bounds the whole call. On success *out
 * is the caller's (ps_plan_free); its lp_model and lp_batch name the task
 * chosen. @return 0; PS_E_ARG for a NULL argument, no candidate, more than
 * PS_PLAN_MAX_LP, or a text that is not MODEL:BATCH; else as ps_plan.
 */
PS_API int ps_plan_best(const ps_model_t *m, const ps_ops_t *ops, const ps_plan_params_t *p, const char *const *lp,
                        size_t n_lp, ps_plan_t **out);

/** "MODEL:BATCH" (e.g. "resnet50:8": the name before the last ':', 1..63
 *  bytes; the batch a whole number in 1..1000000) into name[64] and *batch,
 *  the one reading of this form for the CLI, the service and the library.
 *  @return 0, or PS_E_ARG with a message naming the text. */
PS_API int ps_model_batch_parse(const char *text, char *name, int *batch);

/** The plan as one JSON object (schema "pairsight.plan.v1"); *out is
 *  malloc'd, the caller frees it. @return 0, PS_E_ARG or PS_E_NOMEM. */
PS_API int ps_plan_to_json(const ps_plan_t *p, char **out);
/** Release a plan; NULL is a no-op. @return nothing. */
PS_API void ps_plan_free(ps_plan_t *p);

/* ======================================================================== */
/* Bindings: tables built in memory, parameters as JSON, models as bytes     */
/* (src/profile/builder.c, src/ops/config.c, docs/python.md)                 */
/* ======================================================================== */
/*
 * Contract: what a language binding needs so that it writes no temporary
 * file and mirrors no C struct but the query (whose layout it reads from
 * ps_query_layout_json). JSON texts and byte images the library hands out
 * are owned by the caller (ps_free). Thread safety: as the calls they wrap.
 */

/** A table being built in memory, row by row, then read by the same loader
 *  and checks as a file (ps_ops_load and the others). */
typedef struct ps_table_builder ps_table_builder_t;

/** Start a table of kind whose rows have the n_columns (1 to 32) named
 *  columns[] (any order; optional columns may be left out, as in a file's
 *  header). source names the table in error messages (NULL: the kind's
 *  name) as a file's path would: "source:LINE:COLUMN", line 1 being the
 *  header and line k + 1 the k-th row appended. On success *out is owned by
 *  the caller (ps_table_builder_free).
 *  @return 0, PS_E_ARG (unknown kind, no or unnamed columns) or PS_E_NOMEM. */
PS_API int ps_table_builder_create(ps_table_kind_t kind, const char *source, const char *const *columns, int n_columns,
                                   ps_table_builder_t **out);
/** Append one row: values[n_columns] as text, in the columns' order (NULL or
 *  "" is an empty cell; any text is kept, commas and quotes included). Cells
 *  are checked when the table is finished. @return 0, PS_E_ARG or PS_E_NOMEM. */
PS_API int ps_table_builder_append(ps_table_builder_t *b, const char *const *values);
/** @return the rows appended so far (0 for NULL). */
PS_API size_t ps_table_builder_rows(const ps_table_builder_t *b);
/* Validate the rows appended so far as the loader of the kind validates a
 * file and hand out the table (owned by the caller; *out NULL on error). The
 * builder is unchanged: more rows may follow and be finished again.
 * @return 0, PS_E_ARG (NULL, or a builder of another kind), PS_E_INPUT
 * ("source:LINE:COLUMN: ...") or PS_E_NOMEM. */
PS_API int ps_table_builder_finish_ops(ps_table_builder_t *b, ps_ops_t **out);
PS_API int ps_table_builder_finish_coexec(ps_table_builder_t *b, ps_coexec_t **out);
PS_API int ps_table_builder_finish_workloads(ps_table_builder_t *b, ps_workloads_t **out);
PS_API int ps_table_builder_finish_scaling(ps_table_builder_t *b, ps_scaling_t **out);
PS_API int ps_table_builder_finish_colocations(ps_table_builder_t *b, ps_colocations_t **out);
/** Release a builder; NULL is a no-op. @return nothing. */
PS_API void ps_table_builder_free(ps_table_builder_t *b);

/** The key of row i of w: its gpu and workload columns (borrowed from w).
 *  @return 0, or PS_E_ARG for i past the last row. */
PS_API int ps_workloads_key(const ps_workloads_t *w, size_t i, const char **out_gpu, const char **out_workload);

/**
 * The default parameters of one call as a JSON object, every key that the
 * matching _json call accepts with its default: which is "train"
 * (ps_train_params_t; variant by name), "coloc" (ps_coloc_params_t; kind and
 * auto_rule by name), "plan" (ps_plan_params_t), "replay"
 * (ps_replay_params_t and the gpu of ps_replay_run; policies as a list of
 * names) or "place" (ps_coloc_place_params_t, jobs and gpus). Progress
 * callbacks and borrowed tables are not parameters here.
 * @return 0 with *out owned by the caller (ps_free), PS_E_ARG for another
 * name, or PS_E_NOMEM.
 */
PS_API int ps_params_json(const char *which, char **out);
/* The calls below take their parameters as a JSON object (NULL or "" = the
 * defaults) over the defaults: an unknown key, a value of the wrong type or
 * an integer outside the C type's range is PS_E_ARG naming the key (and, for
 * an unknown key, listing the known ones). Integers above 2^53 (seeds) may
 * be given as decimal strings. Otherwise each returns what the call it wraps
 * returns. */
/** ps_model_train with JSON parameters ("train"). */
PS_API int ps_model_train_json(const ps_ops_t *ops, const ps_coexec_t *cx, const char *config, ps_model_t **out);
/** ps_model_adapt with JSON parameters ("train"). */
PS_API int ps_model_adapt_json(const ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *cx, const char *config,
                               ps_model_t **out);
/** ps_plan with JSON parameters ("plan"); *out is the plan as
 *  ps_plan_to_json writes it (caller-owned, ps_free). */
PS_API int ps_plan_json(const ps_model_t *m, const ps_ops_t *ops, const char *config, char **out);
/** An explanation as JSON (schema "pairsight.explanation.v1": hp_ns, lp_ns,
 *  hp_solo_ns, lp_solo_ns, bias {hp, lp}, items [{side, owner, op, name,
 *  contribution}]) into *out (caller-owned, ps_free).
 *  @return 0, PS_E_ARG or PS_E_NOMEM. */
PS_API int ps_explanation_json(const ps_explanation_t *e, char **out);
/** A model's info as the model file records it, as one JSON object (layout
 *  {version, variant, window, n_features}, gpu, library_version, the sample
 *  counts, the chosen hyper-parameters, ...) into *out (caller-owned,
 *  ps_free). @return 0, PS_E_ARG for a NULL argument, or PS_E_NOMEM. */
PS_API int ps_model_info_json(const ps_model_info_t *info, char **out);
/** What `pairsight train --json` prints of a model it trained, as one JSON
 *  object: schema "pairsight.train.v1", model (model_path as given; left
 *  out when NULL), n_trees [HP, LP], then ps_model_info_json's members,
 *  into *out (caller-owned, ps_free).
 *  @return 0, PS_E_ARG for a NULL info or out, or PS_E_NOMEM. */
PS_API int ps_model_train_summary_json(const ps_model_info_t *info, const char *model_path, char **out);
/** The layout of ps_query_t as the compiler laid it out (schema
 *  "pairsight.layout.v1": size, fields [{name, type, offset}] in order),
 *  for bindings that fill arrays of queries, into *out (ps_free).
 *  @return 0 or PS_E_NOMEM. */
PS_API int ps_query_layout_json(char **out);

/* ======================================================================== */
/* Operations: each declared once (src/ops/op.c, docs/ARCHITECTURE.md)      */
/* ======================================================================== */
/*
 * An operation (plan, predict, colocate_shares, ...) is declared once in the
 * library: its name, one table of its parameters (name, type, bounds, help;
 * the defaults are those of its parameter struct's _default_params call),
 * the call that runs it and the schema of its result. The front ends read
 * their input through the table: the CLI builds its options from it (the
 * option of parameter slo_factor is --slo-factor), the service reads the
 * members of a request body with it, and Python passes keyword arguments to
 * ps_op_run. Thread safety: the table is constant; ps_op_run as the call it
 * wraps.
 */

/** A parameter's type: an int, a double or a uint64_t at offset of the
 *  parameter struct, or a member of the request that the operation reads itself (a
 *  string such as "resnet50:8", or what its help says; offset unused). */
typedef enum { PS_PARAM_INT, PS_PARAM_DBL, PS_PARAM_STR, PS_PARAM_U64 } ps_param_type_t;

/** Flags of a parameter: a bound that is not itself accepted; a time
 *  budget in seconds that bounds the call's work (0: none), which a
 *  service caps (pairsight serve refuses 0 and more than its cap). */
enum { PS_PARAM_LO_OPEN = 1u << 0, PS_PARAM_HI_OPEN = 1u << 1, PS_PARAM_BUDGET = 1u << 2 };

/** One parameter of an operation. */
typedef struct {
    const char *name;     /* JSON member and Python keyword; the CLI's option is --name with '-' for '_' */
    ps_param_type_t type; /* the value's C type */
    size_t offset;        /* of the value in the operation's parameter struct */
    double lo, hi;        /* the values accepted, both included unless flags open them */
    const char *arg;      /* the value's name in a usage line (N, X, F) */
    const char *none;     /* the default in words when the struct's 0 means "not given" ("none"), else NULL */
    const char *help;     /* one sentence */
    unsigned flags;       /* PS_PARAM_LO_OPEN, PS_PARAM_HI_OPEN, PS_PARAM_BUDGET */
} ps_param_t;

/** What an operation runs on; an operation uses the members it needs and
 *  refuses (PS_E_ARG) a NULL one of those. */
typedef struct {
    const ps_model_t *model;            /* the segment model */
    const ps_ops_t *ops;                /* its standalone operator profile */
    const struct ps_coloc_model *coloc; /* a co-location model (pairsight_colocate.h) */
    const ps_workloads_t *workloads;    /* with its workloads.csv */
    const ps_scaling_t *scaling;        /* and workload_scaling.csv (may be NULL) */
    const ps_coexec_t *coexec;          /* co-executions (replay: the intensity rule's training rows) */
} ps_op_inputs_t;

/** The members of ps_op_inputs_t in their order, comma-separated
 *  ("model,ops,coloc,workloads,scaling,coexec"): the struct holds pointers alone,
 *  so a binding passes an array of that many pointers filled by name and
 *  mirrors no struct. @return the list (static). */
PS_API const char *ps_op_inputs_names(void);
/** The parameter table of operation op, its rows in *n (when n is not NULL).
 *  @return the rows (static), or NULL (with *n 0) for an unknown name. */
PS_API const ps_param_t *ps_op_params(const char *op, int *n);
/** What operation op does, one paragraph (ps_op_params_json's "help").
 *  @return it (static), or NULL for an unknown name. */
PS_API const char *ps_op_help(const char *op);
/** Operation op's parameter struct, holding its defaults, into params[size]
 *  (the rows of ps_op_params read it at their offsets), when size is at
 *  least the struct's; with params NULL it only tells the size.
 *  @return the struct's size in bytes (0 for an unknown name, or an
 *  operation that reads its request itself). */
PS_API size_t ps_op_defaults(const char *op, void *params, size_t size);
/** The name of operation i (0, 1, ...). @return it, or NULL past the last. */
PS_API const char *ps_op_name(int i);
/** The inputs operation op runs on, comma-separated names of
 *  ps_op_inputs_t's members ("model,ops"); an optional one ends with '?'
 *  ("scaling?"). @return the list (static), or NULL for an unknown name. */
PS_API const char *ps_op_needs(const char *op);
/** The checks of operation op's parameter struct that no single row's
 *  bounds say (plan: one of slo_ns and slo_factor; a coverage of 0 or at
 *  least 0.5), for a front end that reads the table into the struct itself.
 *  @return 0, or PS_E_ARG with the message naming the parameters. */
PS_API int ps_op_check(const char *op, const void *params);
/** Operation op as a JSON object (schema "pairsight.op.v1": name, result
 *  (the schema of its result), help, needs (its inputs), params [{name,
 *  type ("int", "number" or "string"), min, max, default, help}] and
 *  members (the names of its "string" params))
 *  into *out (caller-owned, ps_free).
 *  @return 0, PS_E_ARG for an unknown name, or PS_E_NOMEM. */
PS_API int ps_op_params_json(const char *op, char **out);
/** Run operation op on in with its request as a JSON object (params: the
 *  table's members, each checked against its bounds, and the operation's
 *  own; NULL or "" is {}) and its result as JSON text into *out
 *  (caller-owned, ps_free; NULL on error).
 *  @return 0, PS_E_ARG (unknown operation, an unknown or bad member, a
 *  missing input), or what the call it wraps returns. */
PS_API int ps_op_run(const char *op, const ps_op_inputs_t *in, const char *params, char **out);

/* A model as the bytes of its file, and back (pickling, caches, a database
 * column). The image is the file ps_model_save / ps_coloc_model_save would
 * write; the loaders check it as the file loaders do and name it "model in
 * memory" in their messages. *out of the savers is owned by the caller
 * (ps_free). @return as the file calls, PS_E_NOMEM in place of PS_E_IO. */
PS_API int ps_model_save_mem(const ps_model_t *m, unsigned char **out, size_t *out_len);
PS_API int ps_model_load_mem(const unsigned char *buf, size_t len, ps_model_t **out);

/* ======================================================================== */
/* Tables row by row (issue 25: the collector's front end, cmd_collect)      */
/* ======================================================================== */
/* Plain rows of workloads.csv and workload_scaling.csv (FORMATS.md), as
 * ps_colocation_row_t is of colocations.csv. The strings of a row given to
 * an _append call are copied; those of a row read back are borrowed from
 * the table. NAN is an empty cell. */
typedef struct {
    const char *gpu, *workload;
    double exclusive_tput;
    double threads, registers, static_smem;
    double sm_tput_pct, dram_tput_pct, mem_tput_pct;
    double sm_busy_pct, mem_busy_pct, memcap_gb;
    double stall_long_scoreboard, stall_lg_throttle, stall_mio_throttle;
} ps_workload_row_t;

typedef struct {
    const char *gpu, *workload;
    int share_pct;
    double tput;
} ps_scaling_row_t;

/** An empty table, to fill row by row and save; release with the matching
 *  _free. @return it, or NULL when out of memory. */
PS_API ps_workloads_t *ps_workloads_new(void);
PS_API ps_scaling_t *ps_scaling_new(void);

/** Appends a copy of *row (its strings copied) to t, unchecked until the
 *  table is saved or checked. @return 0, PS_E_ARG (NULL) or PS_E_NOMEM. */
PS_API int ps_workloads_append(ps_workloads_t *t, const ps_workload_row_t *row);
PS_API int ps_scaling_append(ps_scaling_t *t, const ps_scaling_row_t *row);

/** @return the number of rows of a workload_scaling table (0 for NULL). */
PS_API size_t ps_scaling_rows(const ps_scaling_t *t);
/** @return row i of t, borrowed from t (its strings too), or NULL for NULL
 *  t or i past the last row. */
PS_API const ps_scaling_row_t *ps_scaling_row(const ps_scaling_t *t, size_t i);

/* ======================================================================== */
/* GPU catalog, table rows and CSV reading (src/profile): cli simulate,      */
/* import and collect                                                        */
/* ======================================================================== */

/* A GPU of the catalog the simulator and the other stages know (published
 * figures; `pairsight simulate --list`). The strings are static. */
typedef struct {
    const char *name;     /* as written in ops.csv/coexec.csv, e.g. "A100-SXM4-40GB" */
    const char *alias;    /* the first lower-case short name ("a100"), NULL if none */
    int sms;              /* streaming multiprocessors enabled on the product */
    int tpcs;             /* texture processing clusters = sms / 2: the unit of an SM split */
    double clock_ghz;     /* boost clock */
    double tensor_tflops; /* dense FP16/BF16 tensor-core peak */
    double fp32_tflops;   /* FP32 CUDA-core peak */
    double dram_gbs;      /* DRAM peak bandwidth, GB/s */
    double l2_mb;         /* L2 cache size, MiB */
} ps_gpu_info_t;

/** The GPU whose name or alias equals name_or_alias (case-insensitive:
 *  "A100-SXM4-40GB", "a100", "h100", ...) into *out.
 *  @return 0, or PS_E_ARG for a NULL argument or a GPU the catalog does not
 *  know. */
PS_API int ps_gpu_find(const char *name_or_alias, ps_gpu_info_t *out);
/** @return the number of GPUs in the catalog. */
PS_API size_t ps_gpu_count(void);
/** GPU i (0 <= i < ps_gpu_count(), catalog order) into *out.
 *  @return 0, or PS_E_ARG when i is out of range or out is NULL. */
PS_API int ps_gpu_at(size_t i, ps_gpu_info_t *out);
/** The catalog's GPUs for a message, "A100-SXM4-40GB (a100), H100-SXM
 *  (h100), ..." in catalog order, into buf (cut to size and terminated when
 *  size > 0), so that no message keeps its own list.
 *  @return the length of the whole list, as snprintf. */
PS_API size_t ps_gpu_names(char *buf, size_t size);

/* One row of coexec.csv (FORMATS.md). The strings belong to the table the
 * row was read from and live as long as it. */
typedef struct {
    const char *experiment, *gpu;
    const char *hp_model;
    int hp_batch, hp_start, hp_len;
    const char *lp_model;
    int lp_batch, lp_start, lp_len;
    int hp_tpcs, lp_tpcs;
    double hp_ns, lp_ns;
    const char *mechanism; /* NULL when empty */
} ps_coexec_row_t;

/** Row i (0-based) of t into *out. @return 0, or PS_E_ARG for a NULL
 *  argument or i >= ps_coexec_rows(t). */
PS_API int ps_coexec_row(const ps_coexec_t *t, size_t i, ps_coexec_row_t *out);

/** The standalone time of operators [start, start + len) of (gpu, model,
 *  batch) at tpcs TPCs, the sum of their duration_ns in ops, into *out_ns.
 *  @return 0, PS_E_ARG for a NULL argument, or PS_E_INPUT when ops lacks
 *  the group, the count or one of the operators (*out_ns is NAN then). */
PS_API int ps_ops_segment_ns(const ps_ops_t *ops, const char *gpu, const char *model, int batch, int start, int len,
                             int tpcs, double *out_ns);

/* Reading any CSV file (RFC 4180) record by record. */
typedef struct ps_csv ps_csv_t;
/** Open path for reading into *out (ps_csv_close).
 *  @return 0, PS_E_ARG (NULL argument), PS_E_IO (cannot open, message names
 *  the file) or PS_E_NOMEM. */
PS_API int ps_csv_open(const char *path, ps_csv_t **out);
/** Read the next record. @return 1 with a record, 0 at the end of the file,
 *  or PS_E_INPUT (malformed quoting, with file and line) or PS_E_IO. */
PS_API int ps_csv_next(ps_csv_t *c);
/** @return the number of fields of the current record. */
PS_API int ps_csv_nfields(const ps_csv_t *c);
/** @return field i (0-based) of the current record, NUL-terminated, valid
 *  until the next ps_csv_next; "" when i is out of range. */
PS_API const char *ps_csv_field(const ps_csv_t *c, int i);
/** @return the index of the first field of the current record equal to
 *  name (a header's column), or -1. */
PS_API int ps_csv_find(const ps_csv_t *c, const char *name);
/** @return the line (1-based) on which the current record starts. */
PS_API size_t ps_csv_line(const ps_csv_t *c);
/** Close the file; NULL is a no-op. @return nothing. */
PS_API void ps_csv_close(ps_csv_t *c);

#ifdef __cplusplus
}
#endif

#endif /* PAIRSIGHT_CORE_H */
