/*
 * pairsight.h - predict how much deep-learning tasks slow each other down when
 * they share one NVIDIA GPU, and choose which tasks to co-locate.
 *
 * Overview
 * --------
 * The data goes one way through the stages below; each is a folder of src/
 * and a section of this header, in this order:
 *
 *   tables      src/profile    the CSV tables of docs/FORMATS.md: per-operator
 *                              standalone profiles (ops.csv), measured
 *                              co-executions (coexec.csv) and the
 *                              workload-level tables; readers and writers
 *   import      src/profile    Nsight Compute and PyTorch traces -> ops.csv
 *   simulate    src/simulate   a GPU twin that writes a whole campaign
 *   features    src/features   segment pairs -> fixed-layout feature vectors
 *   model       src/model      the PairSight segment model: two XGBoost
 *                              regressors, training, adaptation, files
 *   prediction  src/model      window composition, fast batch prediction,
 *                              explanations
 *   evaluation  src/evaluate   the baselines and the published experiments
 *   co-location src/colocate   workload-level co-location under MPS
 *   decision    src/decision   calibrated upper bounds, the co-location
 *                              planner, replay of request streams on the twin
 *   collector   src/collect    measuring ops.csv and coexec.csv on a GPU
 * (src/common holds errors, logging, memory and atomic files; src/cli the
 * `pairsight` program.)
 *
 * Conventions
 * -----------
 * - Every function that can fail returns 0 (PS_OK) or a negative PS_E_* code
 *   and leaves a thread-local message for ps_last_error(); outputs come last.
 *   The few functions that return a count, a name or a flag say so.
 * - Handles are opaque (ps_model_t, ps_ops_t, ...), created by _load, _train,
 *   _open or _run and released by _free, which accepts NULL. On failure an
 *   output handle is set to NULL and nothing is kept.
 * - Parameter structs come from a `_default_params()` function that returns
 *   them by value; change the fields you need and pass a pointer.
 * - Strings and tables passed in are borrowed for the duration of the call
 *   unless a function says otherwise; strings returned are owned by the
 *   library (static, or living as long as the handle they come from).
 * - Seeds are uint64_t; long work reports through one ps_progress_fn.
 * - The library never exits and never prints except through the log
 *   callback (ps_log_set).
 * - Thread safety is stated per type: loaded tables, models, baselines and
 *   co-location models are read-only and may be read from several threads
 *   at once unless their section says otherwise; a campaign is used by one
 *   thread at a time.
 *
 * Example
 * -------
 * Predict the HP and LP latency of one candidate pair of segments, on the
 * files that scripts/run.sh writes (out/ops.csv and out/model.psm); 27/27 is
 * one of the SM splits of that campaign. tests/test_header_example.sh
 * compiles and runs this program.
 *
 *     #include <pairsight.h>
 *     #include <stdio.h>
 *
 *     int main(void)
 *     {
 *         ps_ops_t *ops = NULL;
 *         ps_model_t *model = NULL;
 *         int rc = ps_ops_load("out/ops.csv", &ops);
 *         if (rc == PS_OK)
 *             rc = ps_model_load("out/model.psm", &model);
 *         ps_query_t q = {.gpu = "A100-SXM4-40GB",
 *                         .hp_model = "resnet50", .hp_batch = 8, .hp_start = 0, .hp_len = 16,
 *                         .lp_model = "bert-base", .lp_batch = 8, .lp_start = 40, .lp_len = 16,
 *                         .hp_tpcs = 27, .lp_tpcs = 27};
 *         double hp_ns = 0, lp_ns = 0;
 *         if (rc == PS_OK)
 *             rc = ps_model_predict(model, ops, &q, 1, &hp_ns, &lp_ns);
 *         if (rc == PS_OK)
 *             printf("HP %.0f ns, LP %.0f ns\n", hp_ns, lp_ns);
 *         else
 *             fprintf(stderr, "%s\n", ps_last_error());
 *         ps_model_free(model);
 *         ps_ops_free(ops);
 *         return rc == PS_OK ? 0 : 1;
 *     }
 *
 * End of example.
 */
#ifndef PAIRSIGHT_H
#define PAIRSIGHT_H

#include <stddef.h>
#include <stdint.h>

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

/* ======================================================================== */
/* Import (src/profile)                                                      */
/* ======================================================================== */
/*
 * Contract: an importer turns the profile of one model run alone into an
 * ops.csv table, one operator per kernel launch in launch order, all at
 * p->tpcs TPCs (docs/profile.md). It refuses a file without kernels. The
 * result is a new table owned by the caller; p's strings are copied.
 * Nsight Compute CSV: the raw page (one row per launch) or the details page
 * (one row per metric, pivoted by launch ID); PyTorch/Kineto Chrome traces,
 * plain or gzip. Initialize the parameters with ps_import_default_params()
 * or designated initializers: fields may be added at the end.
 * Thread safety: importers share no state; calls may run concurrently.
 */

typedef struct {
    const char *gpu;     /* gpu column: a catalog name, alias or any name; NULL = the one the file names */
    const char *model;   /* model column */
    int batch;           /* batch column (>= 1) */
    int tpcs;            /* TPCs the profile ran on (>= 1) */
    const char *stream;  /* torch-trace: NULL = the busiest stream of compute kernels,
                            "all" = every compute stream merged by time, else one stream */
    const char *process; /* ncu: NULL = the process with the most kernel time, else its PID */
    const char *device;  /* NULL = the device with the most kernel time, else its index */
    int drop_zero;       /* torch-trace: drop kernels whose dur is 0 instead of keeping them
                            at half the trace's time resolution */
    int force_gpu;       /* 1: gpu wins over another GPU that the file names; 0: that is
                            PS_E_INPUT (a B200 profile written as an A100's) */
} ps_import_params_t;

/** @return the defaults: batch 1, every other field NULL or 0. */
PS_API ps_import_params_t ps_import_default_params(void);

/** What an import read, took and left: filled by ps_import_run (caller-owned,
 *  plain text, NUL-terminated; cut to fit). */
typedef struct {
    char format[96];      /* e.g. "ncu details page", "PyTorch trace schemaVersion 1, gzip" */
    char gpu[96];         /* GPU written to the rows */
    char gpu_in_file[96]; /* as the file names it; "" when it names none */
    size_t ops;           /* operators written */
    double total_ns;      /* their summed duration */
    size_t zero_dur;      /* trace kernels with dur 0 (kept or dropped, see drop_zero) */
    double zero_dur_ns;   /* the duration each kept one was given */
    size_t text_lines;    /* ncu: lines of other text ignored (program output, ==PROF==) */
    char taken[192];      /* the process, device and stream(s) taken */
    char skipped[512];    /* what was left: kernels and time per process, device, stream */
} ps_import_info_t;

/** Import one file. format is "ncu" or "torch-trace". On success *out is
 *  the caller's (ps_ops_free) and *info (may be NULL) says what was read.
 *  @return 0, PS_E_ARG for bad parameters (tpcs beyond the GPU's TPCs, no
 *  GPU named anywhere), PS_E_INPUT for a bad file (path:line:col in the
 *  message), PS_E_IO, PS_E_NOMEM. Warnings (an unknown GPU, kernels with dur
 *  0, ncu's ==ERROR== lines) go to the log callback. */
PS_API int ps_import_run(const char *format, const char *path, const ps_import_params_t *p, ps_ops_t **out,
                         ps_import_info_t *info);
/** ps_import_run("ncu", ...) without the summary.
 *  @return as ps_import_run. */
PS_API int ps_import_ncu(const char *report_csv, const ps_import_params_t *p, ps_ops_t **out);
/** ps_import_run("torch-trace", ...) without the summary.
 *  @return as ps_import_run. */
PS_API int ps_import_torch_trace(const char *trace_json, const ps_import_params_t *p, ps_ops_t **out);

/** Merge the rows of `more` into a copy of `base`: one ops table for one
 *  model from several imports (several TPC counts, a trace plus counters).
 *  A (gpu, model, batch) group in both must hold the same kernel sequence
 *  (same count, same kernel at each op, names compared without template
 *  arguments and parameters), else PS_E_MISMATCH names the first difference.
 *  A row at a TPC count new to the group is added; a row whose key is
 *  already there keeps its values and only fills its empty counters.
 *  *added and *filled (may be NULL) count both kinds. *out is the caller's
 *  (ps_ops_free); base and more (indexed, as loaders and importers return
 *  them) are only read. @return 0, PS_E_MISMATCH or
 *  PS_E_NOMEM. */
PS_API int ps_ops_merge(const ps_ops_t *base, const ps_ops_t *more, ps_ops_t **out, size_t *added, size_t *filled);

/* ======================================================================== */
/* Simulate (src/simulate)                                                   */
/* ======================================================================== */
/*
 * Contract: the simulator stands in for a measurement campaign on a GPU: it
 * writes the per-operator profiles (ops.csv) and the co-execution
 * measurements (coexec.csv, mechanism "sim") that a real campaign writes,
 * from a physical model of the shared L2 and DRAM path (docs/simulator.md).
 * The result is the same for a seed whatever the thread count. String
 * parameters are borrowed for the duration of the call.
 * Thread safety: ps_sim_run shares no state; calls may run concurrently.
 *
 *     ps_sim_params_t p = ps_sim_default_params();
 *     p.gpu = "a100";
 *     p.experiments = 1000;
 *     ps_ops_t *ops = NULL;
 *     ps_coexec_t *cx = NULL;
 *     if (ps_sim_run(&p, &ops, &cx) == PS_OK) {
 *         ps_ops_save(ops, "ops.csv");
 *         ps_coexec_save(cx, "coexec.csv");
 *     }
 *     ps_ops_free(ops);
 *     ps_coexec_free(cx);
 */

/* Who feeds the simulated streams (docs/simulator.md, eq. 8c): one host
 * thread that issues both tasks' launches in turn during the run (a
 * co-location runtime), or launches queued on the GPU behind a gate before
 * the run (pairsight's collector). */
typedef enum { PS_SIM_LAUNCH_GATED = 0, PS_SIM_LAUNCH_HOST = 1 } ps_sim_launch_t;

typedef struct {
    const char *gpu;         /* catalog name or alias: "A100-SXM4-40GB", "a100", "h100", "h200", "v100" */
    const char *pairs;       /* ordered HP/LP pairs "hp:batch/lp:batch,..." (e.g.
                                "resnet50:8/bert-base:8"); NULL = derived from models */
    const char *models;      /* comma-separated models; with pairs NULL: the default
                                20 pairs restricted to these models, or, when none
                                remains, every ordered pair of them; NULL = the six
                                models of the published evaluation */
    const char *batches;     /* batch sizes where pairs do not give them: "16" for
                                every model, or "resnet50:16,bert-base:32"; NULL =
                                the default batch of each model (8) */
    const char *splits;      /* SM splits "hp/lp,...", e.g. "10/44,20/34", or "all"
                                (every hp/lp with hp + lp = the GPU's TPCs); NULL =
                                hp = round(k * TPCs / 10), k = 1..9 */
    int min_len, max_len;    /* operators per segment, both sides (1, PS_WINDOW) */
    long experiments;        /* co-execution settings (1000) */
    int runs;                /* runs per experiment (14) */
    uint64_t seed;           /* (1) */
    int threads;             /* worker threads, 0 = the machine's cores (0) */
    int bert_seq;            /* BERT sequence length (128) */
    int llama_prompt;        /* Llama prompt length; the decode step reads its KV cache (128) */
    double noise;            /* sigma of the per-run log-normal noise of each side (0.02) */
    int launch;              /* ps_sim_launch_t (PS_SIM_LAUNCH_HOST) */
    ps_progress_fn progress; /* experiments done out of total; NULL = none */
    void *progress_user;
} ps_sim_params_t;

/** @return the defaults documented beside each field. */
PS_API ps_sim_params_t ps_sim_default_params(void);

/**
 * Register operator lists of users' models ("NAME=FILE[,NAME=FILE...]", the
 * text form of `pairsight collect ops`, e.g. from python -m pairsight.capture)
 * under model names that the simulator, the twin, replay and the collector
 * then take like a built-in model's, at the batch in the list's header. Not
 * thread safe: call it before any run. ps_oplist_clear drops them all.
 * @return 0, PS_E_ARG (a bad spec, or a built-in model's name), PS_E_IO or
 * PS_E_INPUT (the file, with its line and column).
 */
PS_API int ps_oplist_register(const char *spec);
PS_API void ps_oplist_clear(void);

/**
 * Simulate a campaign. On success *out_ops holds every operator of every
 * model the campaign uses at every TPC count it uses plus the whole GPU
 * (standalone durations and counters), *out_coexec one row per run; the
 * caller owns both (ps_ops_free, ps_coexec_free). On error both are NULL.
 * @return 0, PS_E_ARG (the message says which parameter is wrong: an unknown
 * GPU lists the known ones) or PS_E_NOMEM.
 */
PS_API int ps_sim_run(const ps_sim_params_t *p, ps_ops_t **out_ops, ps_coexec_t **out_coexec);

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
    int nthread;                  /* XGBoost threads; 0 = all cores (default 0) */
    int max_rounds;               /* most trees per regressor (default 400) */
    int early_stopping;           /* stop after this many rounds without a better
                                     validation RMSE on log delta (default 20) */
    int n_depths;                 /* grid of max_depth, chosen on validation MAPE */
    int depths[4];                /* (default {6, 8}) */
    int n_etas;                   /* grid of learning rates */
    double etas[4];               /* (default {0.1, 0.3}) */
    double subsample;             /* row subsample per tree (default 1.0) */
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
PS_API int ps_model_predict_ex(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n,
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
/* Evaluation (src/evaluate)                                                 */
/* ======================================================================== */
/*
 * Contract: the predictors that `pairsight eval` compares, PairSight and seven
 * baselines. Every baseline trains on measured co-executions and predicts
 * the latency of each side of a query through the same calls; the learned
 * ones fit log(measured / standalone), as PairSight does. Accuracy is
 * scored as in the paper's Table I.
 * Thread safety: a trained baseline is read-only, but its prediction uses
 * scratch memory of its own: use one baseline from one thread at a time.
 */

typedef enum {
    PS_METHOD_PAIRSIGHT = 0,          /* the segment model (ps_model_t) */
    PS_METHOD_INTENSITY_RULE = 1,     /* one slowdown factor per (side, operator intensity class) */
    PS_METHOD_COMPLEMENTARITY = 2,    /* median slowdown per (HP class, LP class, SM split) */
    PS_METHOD_ABACUS_MLP = 3,         /* model identity, batch, positions, split, latencies -> MLP */
    PS_METHOD_LINEAR = 4,             /* ridge regression on the PairSight input */
    PS_METHOD_PAIRSIGHT_MLP = 5,      /* the PairSight input into a three-layer perceptron */
    PS_METHOD_INTENSITY_RULE_FIT = 6, /* the intensity rule with least-squares factors */
    PS_METHOD_FIXED_COST = 7,         /* the fitted rule plus a fixed co-execution cost per segment and per operator */
    PS_METHOD_COUNT = 8
} ps_method_t;

/** @return the method's key as in `pairsight eval --json`: "pairsight",
 *  "intensity_rule", "complementarity", "abacus_mlp", "linear",
 *  "pairsight_mlp", "intensity_rule_fit", "fixed_cost" ("?" for an invalid
 *  value); static. */
PS_API const char *ps_method_name(ps_method_t m);
/** The method of a key into *out. @return 0, or PS_E_ARG when name is none
 *  of the above (the message lists them). */
PS_API int ps_method_from_name(const char *name, ps_method_t *out);

typedef struct ps_baseline ps_baseline_t;

typedef struct {
    uint64_t seed;       /* MLP initialization and shuffles (1) */
    int mlp_epochs;      /* at most this many epochs per MLP (100) */
    double mlp_seconds;  /* wall-clock cap per MLP, 0 = none (0: a cap makes the
                            result depend on the machine's load, so that two
                            runs of the same seed differ) */
    double ridge_lambda; /* ridge penalty on standardized inputs; < 0 = chosen
                            on held-out rows (-1) */
} ps_baseline_params_t;

/** @return the defaults documented beside each field. */
PS_API ps_baseline_params_t ps_baseline_default_params(void);

/** Train a baseline (not PS_METHOD_PAIRSIGHT) on every row of train, with
 *  standalone profiles from ops. *out owns its memory (ps_baseline_free); it
 *  keeps no pointer into ops or train.
 *  @return 0, PS_E_ARG (PS_METHOD_PAIRSIGHT or bad parameters), PS_E_INPUT
 *  (train and ops do not fit) or PS_E_NOMEM. */
PS_API int ps_baseline_train(ps_method_t method, const ps_ops_t *ops, const ps_coexec_t *train,
                             const ps_baseline_params_t *p, ps_baseline_t **out);

/** Predicted co-execution latency of each side of n queries into the
 *  caller's out_hp_ns[n] and out_lp_ns[n]. The methods on the PairSight input
 *  (linear, pairsight_mlp) accept segments of at most PS_WINDOW operators.
 *  @return 0, PS_E_INPUT (as ps_model_predict) or PS_E_NOMEM. */
PS_API int ps_baseline_predict(const ps_baseline_t *b, const ps_ops_t *ops, const ps_query_t *q, size_t n,
                               double *out_hp_ns, double *out_lp_ns);

/** @return the method of b. */
PS_API ps_method_t ps_baseline_method(const ps_baseline_t *b);
/** Release a baseline; NULL is a no-op. @return nothing. */
PS_API void ps_baseline_free(ps_baseline_t *b);

/** Accuracy of n predictions against measurements, the figures of the
 *  paper's Table I. */
typedef struct {
    size_t n;
    double hp_mape, lp_mape; /* mean absolute percentage error, in percent */
    double hp_within10;      /* share of HP predictions within 10%, in percent */
} ps_accuracy_t;

/** Score n predictions into *out. @return 0, or PS_E_ARG when n is 0 or a
 *  measurement is not positive. */
PS_API int ps_accuracy(const double *pred_hp_ns, const double *pred_lp_ns, const double *hp_ns, const double *lp_ns,
                       size_t n, ps_accuracy_t *out);

/* ======================================================================== */
/* Co-location (src/colocate)                                                */
/* ======================================================================== */
/*
 * Contract: given a target workload and candidate co-runners, predict each
 * co-location's throughput under CUDA MPS and pick the best
 * (docs/colocate.md). Inputs are the tables workloads.csv,
 * workload_scaling.csv (optional: NULL means solo throughput scales linearly
 * with the share) and colocations.csv, any number of workloads per
 * co-location.
 *
 * Predictors: KACE's linear regression, random forest and MLP of the
 * throughput sum from combined workload features; Xu et al.'s random forest
 * on system metrics; the `ratio` baseline (solo throughput at the share x the
 * workload's median co-located/solo ratio); and `mps`, our interference
 * predictor of each workload's own throughput for any k and any shares.
 * Thread safety: a trained or loaded co-location model is read-only; use it
 * from one thread at a time (its XGBoost booster is shared). ps_coloc_eval
 * shares no state between calls.
 */
typedef enum {
    PS_COLOC_KACE_LR = 0,
    PS_COLOC_KACE_RF,
    PS_COLOC_KACE_MLP,
    PS_COLOC_XU_RF,
    PS_COLOC_RATIO,
    PS_COLOC_MPS,
    PS_COLOC_LOWRANK, /* pairwise interactions over workload identity and
                         solo throughput (for tables without metrics) */
    PS_COLOC_AUTO,    /* the candidates' blend (or one candidate) by
                         cross-validation on the training co-locations
                         (docs/colocate.md) */
    PS_COLOC_KIND_COUNT
} ps_coloc_kind_t;

/** @return "kace_lr", "kace_rf", "kace_mlp", "xu_rf", "ratio", "mps",
 *  "lowrank" or "auto" ("unknown" for an invalid value); static. */
PS_API const char *ps_coloc_kind_name(ps_coloc_kind_t kind);
/** The kind of a name into *out. @return 0, or PS_E_ARG (the message lists
 *  the kinds). */
PS_API int ps_coloc_kind_from_name(const char *name, ps_coloc_kind_t *out);
/** @return 1 when the kind predicts the throughput sum of a co-location, 0
 *  when it predicts each workload's own throughput. */
PS_API int ps_coloc_kind_predicts_sum(ps_coloc_kind_t kind);

typedef struct {
    ps_coloc_kind_t kind;
    uint64_t seed;    /* random forests and the MLP (0) */
    int trees;        /* random forests: parallel trees (default 100) */
    int mlp_epochs;   /* MLP training epochs (default 400) */
    int boost_rounds; /* mps: boosting rounds (default 400) */
    int auto_rule;    /* auto: PS_COLOC_AUTO_WITHIN (default), _BLEND or _PICK */
} ps_coloc_params_t;

/* auto's rule (docs/colocate.md): the stacked blend of the candidates
 * fitted to the sums (blend) or to the sums and their within-target
 * differences (within), or the one candidate the one-standard-error rule
 * picks. */
enum { PS_COLOC_AUTO_BLEND = 0, PS_COLOC_AUTO_PICK = 1, PS_COLOC_AUTO_WITHIN = 2, PS_COLOC_AUTO_RULES = 3 };

/** @return the defaults: kind mps, seed 0, 100 trees, 400 epochs, 400
 *  rounds, auto rule within. */
PS_API ps_coloc_params_t ps_coloc_default_params(void);

typedef struct ps_coloc_model ps_coloc_model_t;

/** Train on every co-location of c whose throughputs are measured (sum
 *  kinds need every slot measured; per-workload kinds use each measured
 *  row). scaling may be NULL. On success *out is owned by the caller
 *  (ps_coloc_model_free).
 *  @return 0, PS_E_ARG, PS_E_INPUT (too few measured co-locations, or a
 *  workload absent from w), PS_E_BACKEND or PS_E_NOMEM. */
PS_API int ps_coloc_train(const ps_workloads_t *w, const ps_scaling_t *scaling, const ps_colocations_t *c,
                          const ps_coloc_params_t *p, ps_coloc_model_t **out);

/** Predict for every row of q (its tput column is ignored). out_tput
 *  (caller-owned, q's row count) receives each row's own predicted
 *  throughput, or for sum kinds its co-location's predicted throughput sum.
 *  @return 0, PS_E_INPUT (a workload absent from w) or PS_E_BACKEND. */
PS_API int ps_coloc_predict(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                            const ps_colocations_t *q, double *out_tput);

/** @return the kind of m. */
PS_API ps_coloc_kind_t ps_coloc_model_kind(const ps_coloc_model_t *m);

/** Save atomically, with magic, format version and feature layout.
 *  @return 0, PS_E_IO or PS_E_BACKEND. */
PS_API int ps_coloc_model_save(const ps_coloc_model_t *m, const char *path);
/** Load into *out (owned by the caller). @return 0, PS_E_IO, PS_E_INPUT
 *  (not a co-location model: a segment model file says so) or
 *  PS_E_MISMATCH (another format version or feature layout). */
PS_API int ps_coloc_model_load(const char *path, ps_coloc_model_t **out);
/** Release a co-location model; NULL is a no-op. @return nothing. */
PS_API void ps_coloc_model_free(ps_coloc_model_t *m);

/** Predict one co-location without a table: workloads[k] (k in 1..64) on
 *  gpu at shares[k] percent (NULL: 100 each). out_tput[k] (caller-owned)
 *  receives each workload's own predicted throughput (NAN for kinds that
 *  predict the sum) and *out_sum the predicted throughput sum; the figures
 *  are ps_coloc_predict's on a table of this one co-location (as `colocate
 *  select` ranks). Thread safety as ps_coloc_predict.
 *  @return 0, PS_E_ARG (k, a share outside 1..100, NULL), PS_E_INPUT (a
 *  workload absent from w on gpu) or PS_E_BACKEND. */
PS_API int ps_coloc_predict_set(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                                const char *gpu, const char *const *workloads, const int *shares, int k,
                                double *out_tput, double *out_sum);

/** Throughput of workload (gpu, name) alone at share_pct: interpolated in
 *  scaling (may be NULL: exclusive_tput x share / 100), as every predictor
 *  uses it. @return that throughput, NAN when the workload is unknown.
 *  Thread-safe. */
PS_API double ps_coloc_solo(const ps_workloads_t *w, const ps_scaling_t *scaling, const char *gpu,
                     const char *name, int share_pct);

/** The GPU(s) the model was trained on (the gpu column of its training
 *  co-locations, comma-joined; "" when unknown). @return that string, owned
 *  by m. */
PS_API const char *ps_coloc_model_gpu(const ps_coloc_model_t *m);
/** The sizes of the model's training co-locations: bit k is set when it was
 *  trained on k-way sets (bit 31: 31 workloads or more). @return that mask,
 *  0 when unknown (a model file written before it was recorded). */
PS_API unsigned ps_coloc_model_ks(const ps_coloc_model_t *m);
/** @return 1 for a model made with kind PS_COLOC_AUTO, 0 otherwise. With
 *  the pick rule ps_coloc_model_kind(m) is the kind it chose; a blend's kind
 *  is PS_COLOC_AUTO (see ps_coloc_model_blend). */
PS_API int ps_coloc_model_auto(const ps_coloc_model_t *m);
/** The blend weights of an auto blend per kind into out_w[PS_COLOC_KIND_COUNT]
 *  (caller-owned; all 0 for any other model). @return the number of kinds
 *  blended (0: not a blend). */
PS_API int ps_coloc_model_blend(const ps_coloc_model_t *m, double *out_w);

/* Selection policies, scored with KACE's metric: the chosen co-location's
 * measured throughput sum / the best one's, per target, averaged over the
 * targets that have at least two candidates (co-locations holding the target
 * whose every throughput was measured). */
typedef enum {
    PS_POL_ORACLE = 0,
    PS_POL_RANDOM,    /* mean over the candidates */
    PS_POL_MEMCAP,    /* co-runners with the smallest total memcap_gb */
    PS_POL_SM,        /* co-runners with the highest mean sm_busy_pct */
    PS_POL_MEM,       /* co-runners with the lowest mean mem_busy_pct */
    PS_POL_BEST_RULE, /* per target, the best of the three rules (offline) */
    PS_POL_KACE_LR,
    PS_POL_KACE_RF,
    PS_POL_KACE_MLP,
    PS_POL_XU_RF,
    PS_POL_RATIO,
    PS_POL_MPS,
    PS_POL_LOWRANK,
    PS_POL_AUTO,
    PS_POL_COUNT
} ps_coloc_policy_t;

/** @return "oracle", "random", "memcap", "sm", "mem", "best_rule", then the
 *  kind names ("unknown" for an invalid value); static. */
PS_API const char *ps_coloc_policy_name(ps_coloc_policy_t p);

/** The rule policies over every co-location of c (no training).
 *  out_score[PS_POL_COUNT] receives the normalized throughput sum of the
 *  policies ORACLE..BEST_RULE (the others NAN); *out_targets the count.
 *  @return 0, PS_E_INPUT or PS_E_NOMEM. */
PS_API int ps_coloc_rules(const ps_workloads_t *w, const ps_colocations_t *c, double *out_score, int *out_targets);

#define PS_COLOC_MAXK 8 /* per-k policy figures cover k = 2..8 */

typedef struct {
    double train_frac;            /* share of co-locations used for training (0.2) */
    int seeds;                    /* repetitions with different splits (20) */
    uint64_t seed;                /* first seed (0) */
    int unseen;                   /* 1: hold out every co-location of one model (all
                                     its batch sizes) in turn instead of random splits */
    const ps_colocations_t *test; /* not NULL: leave-one-workload-set-out on
                                     these co-locations (see docs/colocate.md) */
    int test_alone;               /* with test: train on the first table only, never
                                     on any co-location of the test table */
    int unseen_pairs;             /* 1: hold out, per fold, every co-location that
                                     holds one of a fifth of the workload pairs */
    int transfer;                 /* with test: one fold, train on c, test on test
                                     (another GPU's table; docs/colocate.md) */
    unsigned kinds;               /* bit mask of kinds to run (default: all) */
    unsigned auto_kinds;          /* candidates of auto (default 0: all but kace_mlp
                                     and auto) */
    ps_coloc_params_t model;      /* model parameters (kind ignored) */
    ps_progress_fn progress;      /* runs done out of total; NULL = none */
    void *progress_user;
    int unseen_splits; /* with test (a table of share splits): per seed, train
                          on c plus a random half of test's co-locations, score
                          the other half (last, so that the fields before it
                          keep their offsets) */
} ps_coloc_eval_params_t;

/** @return the defaults documented beside each field. */
PS_API ps_coloc_eval_params_t ps_coloc_eval_default_params(void);

typedef struct {
    /* per kind, averaged over seeds; NAN when not run. Per-workload kinds
     * score each workload's throughput, sum kinds the throughput sum. */
    double r2[PS_COLOC_KIND_COUNT], rmse[PS_COLOC_KIND_COUNT], mape[PS_COLOC_KIND_COUNT];
    double policy_mean[PS_POL_COUNT], policy_sd[PS_POL_COUNT]; /* over seeds */
    double targets;                                            /* mean number of scored targets per seed */
    int runs;                                                  /* seeds (or folds) run */
    /* MAPE (percent) of each workload's iteration time (batch / tput) for
     * per-workload kinds; NAN for sum kinds. */
    double time_mape[PS_COLOC_KIND_COUNT];
    /* Policies scored over the k-way candidates only, k = 2..PS_COLOC_MAXK
     * (NAN where no target has two k-way candidates). */
    double policy_k[PS_COLOC_MAXK + 1][PS_POL_COUNT];
    double targets_k[PS_COLOC_MAXK + 1];
    int auto_chosen[PS_COLOC_KIND_COUNT]; /* runs in which auto's pick rule chose a kind */
    unsigned dropped;                     /* bit mask of policies not run because every
                                             workload lacks their metrics */
    /* auto's rule (model.auto_rule), each kind's mean weight over the runs
     * under each rule (pick: the share of runs that chose it), and auto
     * under each rule in the same runs, the rule's own included (NAN when
     * auto was not run). auto_weight is rule_weight[auto_rule]. */
    int auto_rule;
    double auto_weight[PS_COLOC_KIND_COUNT];
    double rule_weight[PS_COLOC_AUTO_RULES][PS_COLOC_KIND_COUNT];
    double rule_mean[PS_COLOC_AUTO_RULES], rule_k[PS_COLOC_AUTO_RULES][PS_COLOC_MAXK + 1];
} ps_coloc_eval_result_t;

/** Train and score every predictor and policy (docs/colocate.md) into *out.
 *  @return 0, PS_E_ARG, PS_E_INPUT or PS_E_BACKEND. */
PS_API int ps_coloc_eval(const ps_workloads_t *w, const ps_scaling_t *scaling, const ps_colocations_t *c,
                         const ps_coloc_eval_params_t *p, ps_coloc_eval_result_t *out);

/* Placement over a cluster (Gavel's space sharing): assign jobs (workload
 * ids, repeats allowed) to GPUs, alone or up to max_per_gpu per GPU at
 * shares from an allowed set, maximizing the sum of predicted normalized
 * throughputs (each job's throughput over its exclusive throughput on that
 * GPU; a job alone counts solo(100)/exclusive, a waiting job 0). Exact
 * (dynamic programming over job subsets) while 2^jobs x the GPU-count
 * states stay under 2^22, else a documented greedy + local-search heuristic
 * (docs/colocate.md). */
typedef struct {
    int max_per_gpu;   /* K (default 2) */
    const int *shares; /* allowed shares per job, n_shares of them (default
                          NULL: 100 only) */
    int n_shares;
    uint64_t seed;     /* heuristic restarts (default 0) */
    int allow_wait;    /* 1: a job may wait when that raises the sum;
                          0 (default): every job runs while the GPUs have
                          room (K x GPUs), as in Gavel */
    double time_limit_s;     /* search budget in seconds (default 5; 0: none):
                                the exact search gets half of it, the
                                heuristic the rest; past it the best placement
                                found is returned with stopped set (the first
                                greedy placement always completes) */
    ps_progress_fn progress; /* seconds spent out of time_limit_s, four
                                times a second; NULL = none */
    void *progress_user;
} ps_coloc_place_params_t;

/** @return the defaults documented beside each field of ps_coloc_place_params_t. */
PS_API ps_coloc_place_params_t ps_coloc_place_default_params(void);

typedef struct {
    int n_jobs;
    int *gpu;          /* [n_jobs] GPU index, -1 when the job waits */
    int *share;        /* [n_jobs] share_pct (0 when waiting) */
    double *norm_tput; /* [n_jobs] predicted tput / exclusive tput */
    double objective;  /* their sum */
    int exact;         /* 1: proven optimal for the predictions */
    int stopped;       /* 1: the time limit ended the search; the best
                          placement found */
} ps_coloc_placement_t;

/** Place jobs[n_jobs] on n_gpus GPUs whose types (the gpu column of
 *  workloads.csv) are gpu_types[n_gpus] (NULL entries: each job's own
 *  row). On success out holds arrays owned by the caller
 *  (ps_coloc_placement_free). Not thread-safe with the same model.
 *  @return 0, PS_E_ARG for bad parameters (job, GPU or type counts),
 *  PS_E_INPUT for a job that workloads.csv lacks on every GPU type, or
 *  PS_E_NOMEM. */
PS_API int ps_coloc_place(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                   const char *const *jobs, int n_jobs, const char *const *gpu_types, int n_gpus,
                   const ps_coloc_place_params_t *p, ps_coloc_placement_t *out);
/** Release the arrays of a placement; NULL is a no-op. @return nothing. */
PS_API void ps_coloc_placement_free(ps_coloc_placement_t *pl);

/* `colocate eval --place`: per case (jobs, GPUs) and job mix (distinct
 * workloads drawn per seed), train every kind on a random split, place with
 * its predictions over the groups measured in c, and score the placement by
 * its measured normalized-throughput sum: over the best placement found
 * with the measured values (oracle) and, for random, the mean of random
 * feasible placements. */
typedef struct {
    int n_jobs, n_gpus;
    double ratio[PS_POL_COUNT]; /* mean over mixes of measured / best found;
                               NAN for policies that do not place */
    double norm[PS_POL_COUNT];  /* mean measured normalized-throughput sum */
    int mixes;              /* job mixes scored */
    int exact;              /* mixes whose best placement is proven */
} ps_coloc_place_case_t;

/** cases[n_cases] carry n_jobs and n_gpus on entry; the rest is filled.
 *  ep gives the split (train_frac, seeds = mixes, seed, kinds).
 *  @return 0 or a negative PS_E_* (PS_E_INPUT when the table holds no
 *  complete co-location). */
PS_API int ps_coloc_eval_place(const ps_workloads_t *w, const ps_scaling_t *scaling,
                        const ps_colocations_t *c, const ps_coloc_eval_params_t *ep,
                        int max_per_gpu, ps_coloc_place_case_t *cases, int n_cases);

/* ======================================================================== */
/* Decision: bounds, planner, replay (src/decision)                          */
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
} ps_plan_t;

/**
 * Plan one HP request beside the LP task (docs/planner.md): the HP model's
 * operators are cut into segments of at most window operators; each runs
 * alone or beside an LP segment under an SM split, chosen to maximize LP
 * work subject to the sum of the steps' budgeted latencies (upper bounds at
 * coverage, or points) staying within budget_ns. m may be NULL when
 * p->predict and p->gpu are given. On success *out is the caller's
 * (ps_plan_free). Thread-safe on distinct outputs.
 * @return 0; PS_E_ARG for missing or out-of-range parameters; PS_E_INPUT
 * when ops lacks a model, the whole GPU or a split profiled for both sides;
 * the predictor's code when it fails.
 */
PS_API int ps_plan(const ps_model_t *m, const ps_ops_t *ops, const ps_plan_params_t *p, ps_plan_t **out);
/** The plan as one JSON object (schema "pairsight.plan.v1"); *out is
 *  malloc'd, the caller frees it. @return 0, PS_E_ARG or PS_E_NOMEM. */
PS_API int ps_plan_to_json(const ps_plan_t *p, char **out);
/** Release a plan; NULL is a no-op. @return nothing. */
PS_API void ps_plan_free(ps_plan_t *p);

/* Replay (docs/planner.md): an HP request stream beside an always-backlogged
 * LP task through the simulator's co-execution physics, per policy. */
typedef enum {
    PS_REPLAY_DEDICATED = 0,   /* HP alone; LP only while HP is idle */
    PS_REPLAY_STATIC,          /* an even split all the time */
    PS_REPLAY_ORION,           /* Orion's rule on the profiles, SM threshold by binary search */
    PS_REPLAY_INTENSITY,       /* the planner on the intensity rule */
    PS_REPLAY_PAIRSIGHT,       /* the planner on point predictions */
    PS_REPLAY_PAIRSIGHT_BOUND, /* the planner on calibrated upper bounds */
    PS_REPLAY_ORACLE,          /* the planner on the twin's true latencies */
    PS_REPLAY_N
} ps_replay_policy_t;

/** @return the policy's name: "dedicated", "static", "orion", "intensity",
 *  "pairsight", "pairsight_bound", "oracle"; static, "?" when out of range. */
PS_API const char *ps_replay_policy_name(int policy);
/** "a,b,..." or "all" to a bit mask of policies.
 *  @return 0, or PS_E_ARG naming the unknown policy. */
PS_API int ps_replay_policies_parse(const char *list, unsigned *out_mask);

typedef struct {
    const char *hp_model;
    int hp_batch;
    const char *lp_model;
    int lp_batch;
    int requests;                       /* HP requests replayed (500) */
    double load;                        /* HP utilization of the dedicated GPU, in (0, 1) (0.5) */
    double slo_factor;                  /* budget = slo_factor x dedicated p99 latency (1.2) */
    double coverage;                    /* pairsight_bound's coverage (0.95) */
    uint64_t seed;                      /* arrivals and noise (1) */
    unsigned policies;                  /* bit mask of 1 << PS_REPLAY_* (all) */
    int warmup;                         /* orion and the planners' stretch: warm-up requests per
                                           probe (1000) */
    double noise;                       /* per-run log-normal sigma, as the simulator's (0.02) */
    double stretch;                     /* planners: a request with no queue behind it is budgeted at
                             most stretch x its dedicated latency (1e9: no cap, the planner
                             plans to the request's deadline); 0 = tuned per planner on
                             the warm-up stream, as orion's threshold (0) */
    double time_value;                  /* planners: LP work an HP nanosecond is worth (ps_plan_params_t;
                                           1: LP runs alone while HP is idle; 0: the most LP work
                                           the budget allows) (1) */
    double goal_ratio;                  /* the LP-throughput goal over orion's that the ceiling
                                           fields check (1.5) */
    const ps_coexec_t *intensity_train; /* training rows of the intensity rule
                                           (NULL: the intensity policy is skipped) */
} ps_replay_params_t;

/** The defaults in brackets above. @return them by value. */
PS_API ps_replay_params_t ps_replay_default_params(void);

typedef struct {
    int ran;
    double slo_attainment; /* share of requests within the budget */
    double hp_p50_ns, hp_p99_ns;
    double lp_throughput; /* LP work / wall time; 1 = LP alone on the whole GPU */
    double lp_idle;       /* the part of lp_throughput earned while HP was idle */
    double lp_colo;       /* the part earned beside HP (lp_idle + lp_colo = lp_throughput) */
    double gpu_busy;      /* share of wall time the GPU serves an HP request */
    double plan_us;       /* mean planning time per request */
    double budget_kept;   /* planners: share of requests whose service stayed within
                                the budget they were planned for (NAN for the others) */
    int orion_tpcs;       /* orion: the SM threshold found, in TPCs */
    double stretch;       /* planners: the service cap used, x dedicated (1e9: none) */
    double *latency_ns;   /* [requests] per request, arrival order */
} ps_replay_policy_result_t;

typedef struct {
    size_t requests;
    double dedicated_ns; /* HP request alone, noiseless */
    double slo_ns;       /* the budget */
    ps_replay_policy_result_t pol[PS_REPLAY_N];
    /* The ceiling of the LP-throughput goal (docs/planner.md, "The
     * ceiling"), NAN without orion. No policy's LP throughput exceeds 1, so
     * no policy's ratio over orion's exceeds lp_ceiling = 1 / orion's; a
     * policy reaches goal_ratio x orion's only with an LP rate beside HP
     * (lp_colo / gpu_busy) of at least lp_rate_needed = 1 - (1 - goal_ratio
     * x orion's) / dedicated's gpu_busy (> 1: unreachable). */
    double lp_ceiling, lp_rate_needed;
} ps_replay_result_t;

/** Run the replay. m is needed by the pairsight policies. On success *out
 *  holds the results (release with ps_replay_result_clear). The result is
 *  the same for a seed on every run.
 *  @return 0; PS_E_ARG for bad parameters or a policy without its input
 *  (model, intensity_train); PS_E_INPUT when ops is not the simulator's
 *  profile of both models; PS_E_MISMATCH for a model of another GPU. */
PS_API int ps_replay_run(const ps_model_t *m, const ps_ops_t *ops, const char *gpu, const ps_replay_params_t *p,
                         ps_replay_result_t *out);
/** Release the latencies of r and zero it; NULL is a no-op. @return nothing. */
PS_API void ps_replay_result_clear(ps_replay_result_t *r);

/* ======================================================================== */
/* Bindings: tables built in memory, parameters as JSON, models as bytes     */
/* (src/profile/builder.c, src/bind/config.c, docs/python.md)                */
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
/** ps_coloc_train with JSON parameters ("coloc"). */
PS_API int ps_coloc_train_json(const ps_workloads_t *w, const ps_scaling_t *scaling, const ps_colocations_t *c,
                               const char *config, ps_coloc_model_t **out);
/** ps_plan with JSON parameters ("plan"); *out is the plan as
 *  ps_plan_to_json writes it (caller-owned, ps_free). */
PS_API int ps_plan_json(const ps_model_t *m, const ps_ops_t *ops, const char *config, char **out);
/** ps_replay_run with JSON parameters ("replay"; gpu defaults to the
 *  model's; intensity_train may be NULL, which drops the intensity policy).
 *  *out (caller-owned, ps_free): schema "pairsight.replay_result.v1", requests,
 *  dedicated_ns, slo_ns, lp_ceiling, lp_rate_needed and, per policy run,
 *  the fields of ps_replay_policy_result_t but the latencies. */
PS_API int ps_replay_json(const ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *intensity_train,
                          const char *config, char **out);
/** ps_coloc_place with JSON parameters ("place"; jobs, a list of workload
 *  names, and gpus, a list of GPU types or nulls, are required). *out
 *  (caller-owned, ps_free): schema "pairsight.place.v1", objective, exact
 *  and per job {job, gpu (index or null: waits), share, norm_tput}. */
PS_API int ps_coloc_place_json(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                               const char *config, char **out);
/** An explanation as JSON (schema "pairsight.explanation.v1": hp_ns, lp_ns,
 *  hp_solo_ns, lp_solo_ns, bias {hp, lp}, items [{side, owner, op, name,
 *  contribution}]) into *out (caller-owned, ps_free).
 *  @return 0, PS_E_ARG or PS_E_NOMEM. */
PS_API int ps_explanation_json(const ps_explanation_t *e, char **out);
/** The layout of ps_query_t as the compiler laid it out (schema
 *  "pairsight.layout.v1": size, fields [{name, type, offset}] in order),
 *  for bindings that fill arrays of queries, into *out (ps_free).
 *  @return 0 or PS_E_NOMEM. */
PS_API int ps_query_layout_json(char **out);

/* A model as the bytes of its file, and back (pickling, caches, a database
 * column). The image is the file ps_model_save / ps_coloc_model_save would
 * write; the loaders check it as the file loaders do and name it "model in
 * memory" in their messages. *out of the savers is owned by the caller
 * (ps_free). @return as the file calls, PS_E_NOMEM in place of PS_E_IO. */
PS_API int ps_model_save_mem(const ps_model_t *m, unsigned char **out, size_t *out_len);
PS_API int ps_model_load_mem(const unsigned char *buf, size_t len, ps_model_t **out);
PS_API int ps_coloc_model_save_mem(const ps_coloc_model_t *m, unsigned char **out, size_t *out_len);
PS_API int ps_coloc_model_load_mem(const unsigned char *buf, size_t len, ps_coloc_model_t **out);

/* ======================================================================== */
/* Collector (src/collect)                                                   */
/* ======================================================================== */
/*
 * Contract: the collector measures ops.csv and coexec.csv on a real NVIDIA
 * GPU: it replays each model's operators (cuBLAS, cuDNN and kernels of our
 * own), splits the SMs with CUDA green contexts and keeps every result in a
 * SQLite campaign database, committed one task at a time, so that a
 * campaign that is killed resumes where it stopped when the same call is
 * made again. The "fake" backend is a deterministic simulated GPU for tests;
 * the CUDA backend is a module loaded at run time (docs/collector.md).
 * Thread safety: a campaign (its database connection and device) is used by
 * one thread at a time; separate campaigns may run in separate threads.
 *
 *     ps_collect_params_t p = ps_collect_default_params();
 *     ps_campaign_t *c = NULL;
 *     if (ps_campaign_open("campaign.db", &p, &c) != PS_OK) ... ps_last_error()
 *     ps_campaign_profile(c, "resnet50", 8, NULL, 0, NULL, NULL);
 *     ps_campaign_profile(c, "bert-base", 8, NULL, 0, NULL, NULL);
 *     ps_coexec_plan_t plan = ps_coexec_default_plan();
 *     plan.hp_model = "resnet50"; plan.hp_batch = 8;
 *     plan.lp_model = "bert-base"; plan.lp_batch = 8;
 *     ps_campaign_coexec(c, &plan, NULL, NULL);
 *     ps_campaign_export(c, "ops.csv", "coexec.csv");
 *     ps_campaign_free(c);
 */

typedef struct ps_campaign ps_campaign_t;

/** What the backend reports about its device. */
typedef struct {
    char gpu[PS_GPU_NAME_MAX]; /* the gpu column, e.g. "A100-SXM4-40GB" */
    int sm_count;              /* SMs of the whole device */
    int tpc_count;             /* sm_count / 2 */
    int min_partition_sms;     /* green contexts: minSmPartitionSize */
    int sm_alignment;          /* green contexts: smCoscheduledAlignment */
    int cc_major, cc_minor;
    /* What the driver gives: bit s of valid_sms_mask set when a green
     * context of s SMs can be carved (probed with
     * cuDevSmResourceSplitByCount); all zero where not probed (the fake
     * backend): min_partition_sms and sm_alignment decide. */
    unsigned long long valid_sms_mask[4];
    const char *mechanism;   /* how SMs are split: "green-ctx", "sim" (static) */
    double sm_clock_mhz;     /* SM clock when opened (NVML), NAN if unknown */
    double sm_clock_max_mhz; /* its maximum (NVML), NAN if unknown */
    int exec_sms;            /* SMs this process's context may use (under
                                MPS: its active thread percentage) */
} ps_collect_device_t;

typedef struct {
    const char *backend;    /* "cuda" (the GPU) or "fake" (a deterministic
                               simulated GPU for tests); default "cuda" */
    int device;             /* CUDA device ordinal; default 0 */
    int warmup;             /* untimed launches before timing; default 3 */
    int profile_runs;       /* timed runs per operator, the median is kept;
                               default 10 */
    int seq_len;            /* tokens per sequence of transformer models;
                               default 128 (fixed per campaign database) */
    unsigned fake_delay_us; /* fake backend: sleep per measurement (tests
                               kill a campaign mid-way); default 0 */
    int flush_l2;           /* flush the L2 before every timed run, standalone
                               and co-execution alike; default 1 */
    double clock_tol_pct;   /* a run whose SM clock differs from the
                               campaign's by more is refused and its task
                               measured again (twice at most); 0 = no check;
                               default 3 */
    int fake_throttle;      /* fake backend: report a clock 20% low on run
                               N > 0 and every later run, or on run -N only;
                               default 0 (never) */
    int fake_no_permission; /* fake backend: counters fail as without
                               profiling permission; default 0 */
    int shard_index;        /* run only tasks i with i % shard_count ==
                               shard_index of each campaign plan (0-based); */
    int shard_count;        /* 0 = the whole plan (default); pinned in the
                               database, merged with pairsight collect merge */
} ps_collect_params_t;

/** @return the defaults above. */
PS_API ps_collect_params_t ps_collect_default_params(void);

/**
 * Open the campaign database at db_path (created if absent) and, unless p is
 * NULL, the device backend that p names. With p NULL only status and export
 * work. On success *out is owned by the caller (ps_campaign_free).
 * @return 0, PS_E_IO (the database), PS_E_BACKEND (no device, no CUDA
 * module: the message says which), PS_E_MISMATCH (a database made on another
 * GPU, with another seq_len, as another shard, as a shard when p asks for
 * the whole plan, or of the whole plan when p asks for a shard), PS_E_INPUT
 * (the file is not a campaign database: not SQLite, damaged, or another
 * program's SQLite database) or PS_E_ARG.
 */
PS_API int ps_campaign_open(const char *db_path, const ps_collect_params_t *p, ps_campaign_t **out);

/** Close the database and the device; NULL is a no-op. @return nothing. */
PS_API void ps_campaign_free(ps_campaign_t *c);

/** The device of an opened backend into *out. @return 0, or PS_E_ARG when
 *  the campaign was opened without one. */
PS_API int ps_campaign_device(const ps_campaign_t *c, ps_collect_device_t *out);

/** The TPC counts the device can give one side: 2*tpcs SMs, at least
 *  min_partition_sms and a multiple of sm_alignment (ascending). Writes at
 *  most cap values to out.
 *  @return how many counts there are (may exceed cap). */
PS_API int ps_collect_valid_tpcs(const ps_collect_device_t *dev, int *out, int cap);

/**
 * Standalone profile: the device time of every operator of model at batch on
 * each of tpcs[0..n_tpcs) TPCs (NULL: every valid count), median of
 * profile_runs after warmup. One task (one transaction) per TPC count; tasks
 * already in the database are skipped. fn (may be NULL) gets tasks done out
 * of planned after each task.
 * @return 0, PS_E_ARG (an unknown model lists the known ones; a TPC count
 * the device cannot partition lists the valid ones), PS_E_BACKEND or PS_E_IO.
 */
PS_API int ps_campaign_profile(ps_campaign_t *c, const char *model, int batch, const int *tpcs, int n_tpcs,
                               ps_progress_fn fn, void *user);

/** A co-execution campaign: `experiments` random segment pairs and SM
 *  splits, each run `runs` times. Strings are borrowed for the call. */
typedef struct {
    const char *hp_model;
    int hp_batch;
    const char *lp_model;
    int lp_batch;
    int experiments; /* default 100 */
    int runs;        /* rows per experiment (R); default 30 */
    int seg_min;     /* segment length in operators, drawn uniformly from */
    int seg_max;     /* [seg_min, seg_max]; default 1..PS_WINDOW */
    const int *tpcs; /* HP allocations to draw from (LP gets the largest
                        of them that fits beside); NULL = every valid count */
    int n_tpcs;
    uint64_t seed; /* default 1; part of each experiment's name */
} ps_coexec_plan_t;

/** @return the defaults above (models NULL: the caller sets them). */
PS_API ps_coexec_plan_t ps_coexec_default_plan(void);

/**
 * Run the co-execution campaign of plan: one task (one transaction with its
 * `runs` rows) per experiment; experiments already done are skipped, so the
 * same call after a crash or kill finishes the campaign with no lost or
 * duplicated row. fn (may be NULL) gets tasks done out of planned.
 * @return 0, PS_E_ARG, PS_E_MISMATCH (the plan's experiment names clash
 * with different experiments in the database), PS_E_BACKEND or PS_E_IO.
 */
PS_API int ps_campaign_coexec(ps_campaign_t *c, const ps_coexec_plan_t *plan, ps_progress_fn fn, void *user);

/** Hardware counters of every operator (CUPTI range profiler) at the
 *  largest TPC count, for the ops.csv counter columns.
 *  @return 0, PS_E_BACKEND (also where the backend has no counters) or
 *  PS_E_IO. */
PS_API int ps_campaign_counters(ps_campaign_t *c, const char *model, int batch);

/** The same on one partition of tpcs TPCs (a green context; 0 or the
 *  device's count: the whole device, as ps_campaign_counters). Partition
 *  counters go on the ops.csv rows of that TPC count. @return as
 *  ps_campaign_counters. */
PS_API int ps_campaign_counters_at(ps_campaign_t *c, const char *model, int batch, int tpcs);

/** The same counters from an Nsight Compute CSV (`ncu --csv --page raw
 *  --metrics ...` of a run of model at batch, one kernel per operator, as
 *  ps_import_ncu reads it) instead of CUPTI: the report must hold exactly
 *  one launch per operator of the model's list. Works without a device; the
 *  database must already know its GPU.
 *  @return 0, PS_E_INPUT (the report does not fit the model), PS_E_IO. */
PS_API int ps_campaign_import_counters(ps_campaign_t *c, const char *model, int batch, const char *ncu_csv);

typedef struct {
    long tasks_total, tasks_done;
    long op_rows, counter_rows, coexec_rows;
    int seq_len;
    char gpu[PS_GPU_NAME_MAX];           /* empty until a backend has opened the database */
    double sm_clock_mhz;                 /* the campaign's SM clock (NAN before the
                                      first measurement or when unknown) */
    double clock_min_mhz, clock_max_mhz; /* over every stored run (NAN: none) */
    long clock_refused;                  /* runs refused for their clock */
} ps_campaign_status_t;

/** Tasks and rows of the database into *out. @return 0 or PS_E_IO. */
PS_API int ps_campaign_status(ps_campaign_t *c, ps_campaign_status_t *out);

/* Workload-level mode: whole models under an MPS active-thread percentage,
 * for workloads.csv, workload_scaling.csv and colocations.csv. Each job runs
 * in a process of its own (the percentage is fixed when a process creates
 * its CUDA context); with the cuda backend the MPS daemon must be running. */
typedef struct {
    const char *model; /* borrowed for the call */
    int batch;
    int share_pct; /* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, 1..100 */
} ps_mps_job_t;

/**
 * Run jobs[0..n) together, each in its own process at its share: warm-up
 * iterations, then all start at once and run whole inference iterations for
 * `seconds`. out_tput[i] gets job i's throughput in items (batch x
 * iterations) per second, and out_gpu (may be NULL; gpu_size bytes, at most
 * PS_GPU_NAME_MAX needed) the gpu column name. p names the backend as for
 * ps_campaign_open.
 * @return 0, PS_E_ARG (n < 1, a bad share or an unknown model), or
 * PS_E_BACKEND (no MPS daemon, a job that failed: the message says which).
 */
PS_API int ps_collect_mps_run(const ps_collect_params_t *p, const ps_mps_job_t *jobs, int n, double seconds,
                              double *out_tput, char *out_gpu, size_t gpu_size);

/** The same, recording the active thread percentage each job ran at as the
 *  driver applied it: out_exec_sms[i] (may be NULL) gets the SMs job i's
 *  context was given (cuCtxGetExecAffinity); a share below 100% that left
 *  a job every SM, or a count far from its share, is logged as a warning.
 *  @return as ps_collect_mps_run. */
PS_API int ps_collect_mps_run_sms(const ps_collect_params_t *p, const ps_mps_job_t *jobs, int n, double seconds,
                                  double *out_tput, char *out_gpu, size_t gpu_size, int *out_exec_sms);

/**
 * The fixed cost of a co-execution on this device: `runs` co-executions of
 * two empty segments (nothing between each side's events) on hp_tpcs and
 * lp_tpcs TPCs, after warmup. out_hp_ns and out_lp_ns ([runs], caller's)
 * get each side's time. Not stored in the database. Not thread-safe on one
 * campaign.
 * @return 0, PS_E_ARG (a split the device cannot give), PS_E_BACKEND.
 */
PS_API int ps_campaign_fixed_cost(ps_campaign_t *c, int hp_tpcs, int lp_tpcs, int runs, double *out_hp_ns,
                                  double *out_lp_ns);

/** Device memory of model at batch as the collector lays it out (every
 *  operator its own weights and output, memplan): bytes of weights and of
 *  activations. Needs a device (the backend's layout; the cuda backend
 *  allocates it).
 *  @return 0, PS_E_ARG (no device, an unknown model), PS_E_BACKEND. */
PS_API int ps_campaign_model_memory(ps_campaign_t *c, const char *model, int batch, double *out_weight_bytes,
                                    double *out_activation_bytes);

/** Write the database's measurements as ops.csv and coexec.csv (atomically;
 *  either path may be NULL to skip that table). Counters go on the row of
 *  each operator with the most TPCs (docs/FORMATS.md).
 *  @return 0, PS_E_INPUT (nothing measured yet) or PS_E_IO. */
PS_API int ps_campaign_export(ps_campaign_t *c, const char *ops_path, const char *coexec_path);

#ifdef __cplusplus
}
#endif

#endif /* PAIRSIGHT_H */
