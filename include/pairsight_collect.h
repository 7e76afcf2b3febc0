/*
 * pairsight_collect.h - making the tables: importers of Nsight Compute and
 * PyTorch traces, the simulator (a GPU twin) and the collector that measures
 * on a real GPU. Included by pairsight.h; needs pairsight_core.h.
 */
#ifndef PAIRSIGHT_COLLECT_H
#define PAIRSIGHT_COLLECT_H

#include "pairsight_core.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * plain or gzip; Nsight Systems SQLite exports (nsys export --type sqlite:
 * one row per kernel of a pass, its median over the passes the report
 * holds, found from NVTX ranges or the kernel-name period). Initialize the parameters with ps_import_default_params()
 * or designated initializers: fields may be added at the end.
 * Thread safety: importers share no state; calls may run concurrently.
 */

typedef struct {
    const char *gpu;     /* gpu column: a catalog name, alias or any name; NULL = the one the file names */
    const char *model;   /* model column */
    int batch;           /* batch column (>= 1) */
    int tpcs;            /* TPCs the profile ran on (>= 1) */
    const char *stream;  /* torch-trace, nsys: NULL = the busiest stream of compute kernels,
                            "all" = every compute stream merged by time, else one stream */
    const char *process; /* ncu, nsys: NULL = the process with the most kernel time, else its PID */
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

/** Import one file. format is "ncu", "torch-trace" or "nsys". On success *out is
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
/** ps_import_run("nsys", ...) without the summary: an Nsight Systems SQLite
 *  export; a report without a CUPTI_ACTIVITY_KIND_KERNEL table, or a row
 *  that is not a kernel (messages name the table and the row), is
 *  PS_E_INPUT. @return as ps_import_run. */
PS_API int ps_import_nsys(const char *report_sqlite, const ps_import_params_t *p, ps_ops_t **out);

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
    /* What the driver grants a green context asked for 2t SMs: granted_sms[t]
     * SMs (another count where it rounds, as PyTorch #195378's 114 for 120
     * on an L40S; 0 where it refuses), for 1 <= t < 128; all zero where not
     * probed. A campaign asked for such a count measures at the granted one. */
    short granted_sms[128];
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
    int fake_grant_sms;     /* fake backend: a green context gets the SMs
                               asked for rounded down to a multiple of this,
                               as a driver that grants fewer than asked
                               (granted_sms); default 0 (exactly) */
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

/* ======================================================================== */
/* Collector front end (issue 25: cmd_collect): operator lists, a campaign's  */
/* metadata and models, shards and their merge                                */
/* ======================================================================== */

/* An operator list: the GPU work the collector replays for one (model,
 * batch), one operator a line in its text form (`pairsight collect ops`,
 * docs/collector.md). Opaque; read it with the calls below. */
typedef struct ps_oplist ps_oplist_t;

/** What an operator list is of (plain data). */
typedef struct {
    char model[64];
    int batch;
    int seq_len; /* tokens per sequence of transformers, 0 for CNNs */
    int n_ops;   /* operators, in launch order */
} ps_oplist_info_t;

/** The operator list of a built-in model, or of a list registered with
 *  ps_oplist_register (at its own batch only), at batch; seq_len <= 0 takes
 *  the model's default (128 tokens). On success *out is the caller's
 *  (ps_oplist_free); on error it is NULL.
 *  @return 0, PS_E_ARG (an unknown model lists the known ones; a bad batch
 *  or seq_len; a registered list's other batch) or PS_E_NOMEM. */
PS_API int ps_oplist_build(const char *model, int batch, int seq_len, ps_oplist_t **out);

/** Read an operator list in its text form. On success *out is the caller's
 *  (ps_oplist_free); on error it is NULL.
 *  @return 0, PS_E_IO (path cannot be read), PS_E_INPUT (path:line:column
 *  in the message) or PS_E_NOMEM. */
PS_API int ps_oplist_read(const char *path, ps_oplist_t **out);

/** Write l in its text form to f (not closed).
 *  @return 0, PS_E_IO (a write failed) or PS_E_ARG (NULL). */
PS_API int ps_oplist_write(const ps_oplist_t *l, FILE *f);

/** Release a list; NULL is a no-op. @return nothing. */
PS_API void ps_oplist_free(ps_oplist_t *l);

/** What l is of into *out. @return 0, or PS_E_ARG for a NULL argument. */
PS_API int ps_oplist_info(const ps_oplist_t *l, ps_oplist_info_t *out);

/** The cost of operator i of l (0-based): floating-point operations into
 *  *out_flops and bytes moved to and from DRAM at fp16 when nothing stays in
 *  cache into *out_bytes (either may be NULL). A model of the work, not a
 *  measurement. @return 0, or PS_E_ARG for i past the last operator or a
 *  NULL list. */
PS_API int ps_oplist_op_cost(const ps_oplist_t *l, int i, double *out_flops, double *out_bytes);

/** Whether name is a list registered with ps_oplist_register.
 *  @return 1 with its batch in *out_batch (may be NULL), or 0 (also for
 *  NULL). */
PS_API int ps_oplist_registered(const char *name, int *out_batch);

/** The name of the i-th list registered with ps_oplist_register (0-based,
 *  in the order registered). @return it, or NULL past the last. */
PS_API const char *ps_oplist_name(int i);

/** A value of the campaign database's metadata (e.g. "shard": "K/N" in a
 *  shard's database, "gpu", "seq_len") into buf (size bytes, cut to fit).
 *  @return 1 when the key is there, 0 when not (buf unchanged), PS_E_ARG
 *  (NULL), PS_E_IO (SQLite failed reading it) or PS_E_NOMEM. */
PS_API int ps_campaign_meta_get(ps_campaign_t *c, const char *key, char *buf, size_t size);

/** One model the campaign laid out on its device: its device memory
 *  (ps_campaign_model_memory) as stored when it was measured. */
typedef void (*ps_campaign_model_fn)(const char *model, int batch, double weight_bytes, double activation_bytes,
                                     void *user);

/** Call fn for each model of the campaign database, by model then batch.
 *  @return 0, PS_E_ARG (NULL), PS_E_IO (SQLite failed) or PS_E_NOMEM. */
PS_API int ps_campaign_models(ps_campaign_t *c, ps_campaign_model_fn fn, void *user);

/** "K/N" (0 <= K < N) into *index and *count, as
 *  ps_collect_params_t's shard_index and shard_count.
 *  @return 0, or PS_E_ARG for anything else. */
PS_API int ps_collect_shard_parse(const char *s, int *index, int *count);

/** What a merge did (plain data; filled by ps_collect_merge, missing and
 *  n_missing also by ps_campaign_shards_missing). */
typedef struct {
    long tasks_added;             /* tasks that became done in the destination */
    long rows_added;              /* op, counter and coexec rows copied */
    long tasks_total, tasks_done; /* of the destination afterwards */
    long n_missing;               /* shards K/N of a count N it holds that are not merged */
    char missing[512];            /* the first of them, "1/4, 3/4" ("" none) */
    long tasks_short;             /* marked done in a source without all their rows */
    char short_first[256];        /* the first of them ("" none) */
} ps_collect_merge_stats_t;

/**
 * Merge the campaign databases src[0..n) (shards, or databases of one
 * campaign) into dest, created if absent: every task and row of each source
 * that dest lacks, one transaction per source; a task done in both keeps
 * dest's rows, so merging a source twice adds nothing. Every source is
 * checked before any is copied: a refused one stops the merge with nothing
 * written (a dest it created is removed). *st (caller's) says what was done.
 * @return 0, PS_E_MISMATCH (a source of another GPU, seq_len or plan),
 * PS_E_INPUT (a source that is not a campaign database), PS_E_IO (a source
 * that cannot be read, dest that cannot be written or is locked by another
 * writer), PS_E_ARG (dest among the sources, n < 1, NULL), PS_E_BACKEND
 * (SQLite failed copying) or PS_E_NOMEM.
 */
PS_API int ps_collect_merge(const char *dest, const char *const *src, int n, ps_collect_merge_stats_t *st);

/** The shards of a campaign that a merged database lacks: st->n_missing
 *  and st->missing (the other fields are set to 0 and ""); a database of
 *  no shard lacks none. @return 0, or PS_E_ARG for a NULL argument. */
PS_API int ps_campaign_shards_missing(ps_campaign_t *c, ps_collect_merge_stats_t *st);

/* ======================================================================== */
/* Collector workflow (src/collect/workflow.c, workflow_mps.c): what       */
/* `pairsight collect profile|counters|coexec|scaling|colocate` does, for  */
/* the CLI, Python and any program                                           */
/* ======================================================================== */
/*
 * Contract: a job is one action. profile, counters and coexec run on one
 * campaign database, or, with devices, one shard per device: shard k of n
 * runs in a child process of its own on device devices[k] into
 * "DB.shardK-of-N", and when every shard succeeded their databases are
 * merged into db (ps_collect_merge). Every task commits with its rows in one
 * transaction, so the same job after a crash or kill resumes where it
 * stopped; a failed shard leaves its database to resume. scaling and
 * colocate run whole models under MPS shares and add their rows to CSV
 * tables (scaling_path and workloads_path, or colocations_path), each read,
 * added to and written atomically under its lock (a second collector
 * waits); a row already there is refused, not measured twice, and a scaling
 * run killed between its two tables is finished from the first. The library
 * prints nothing: the shards' outcomes (and a failed shard's message) reach
 * the caller through note. Not for a request handler: a job holds its
 * device and runs for minutes to hours (docs/collector.md).
 * Thread safety: as ps_campaign_open; the devices fork the calling process.
 */

typedef struct {
    const char *action; /* "profile", "counters", "coexec", "scaling" or "colocate" */
    const char *db;     /* the campaign database ("campaign.db") */
    const char *model;  /* profile, counters: the model (required) */
    int batch;          /* profile, counters (8) */
    /* profile, coexec: the TPC counts (NULL: every valid one); counters:
     * one partition each (NULL: the whole device) */
    const int *tpcs;
    int n_tpcs;
    const char *ncu;            /* counters: from this Nsight Compute CSV, no device */
    ps_coexec_plan_t plan;      /* coexec: hp/lp set by the caller; tpcs the job's */
    ps_collect_params_t params; /* the backend, the device and the shard */
    /* profile, coexec: one shard per device, each in a process of its own
     * (NULL: params.device alone) */
    const int *devices;
    int n_devices;
    ps_progress_fn progress; /* tasks done out of planned; not from shards (NULL) */
    void *progress_user;
    /* One line (no newline) per shard: PS_LOG_INFO done, PS_LOG_ERROR its
     * failure and why (NULL: none). */
    ps_log_fn note;
    void *note_user;
    /* scaling and colocate: whole models under MPS shares (docs/collector.md,
     * "Workload level"), their rows added to CSV tables under the tables'
     * locks (a second collector waits), each table written atomically. */
    const int *shares; /* scaling: MPS percentages (NULL: 10, 20, ..., 100) */
    int n_shares;
    const ps_mps_job_t *jobs; /* colocate: run together, each at its share */
    int n_jobs;
    double seconds;               /* timed seconds per run (5) */
    const char *scaling_path;     /* scaling ("workload_scaling.csv") */
    const char *workloads_path;   /* scaling: its 100% row ("workloads.csv") */
    const char *colocations_path; /* colocate ("colocations.csv") */
    const char *id;               /* colocate: the co-location's id (NULL: from the jobs) */
} ps_collect_job_t;

/** What a job's devices did (plain data). */
#define PS_COLLECT_MAX_ROWS 512

typedef struct {
    int shards;        /* n_devices (0 without devices) */
    int shards_failed; /* each told through note; their databases resume */
    /* scaling, colocate: what was measured, also when a later row failed */
    char gpu[PS_GPU_NAME_MAX];         /* the gpu column */
    char id[512];                      /* the workload ("resnet50_batch8-inf") or the co-location */
    int n_rows;                        /* shares (scaling) or jobs (colocate) measured, in order; 0
                                  when a scaling run killed between its two tables
                                  was finished from the first (told through note) */
    double tput[PS_COLLECT_MAX_ROWS];  /* items per second */
    int exec_sms[PS_COLLECT_MAX_ROWS]; /* SMs the driver gave the job's context */
} ps_collect_job_result_t;

/** @return the defaults documented beside each field (action NULL, db
 *  "campaign.db", batch 8, ps_collect_default_params(),
 *  ps_coexec_default_plan()). */
PS_API ps_collect_job_t ps_collect_default_job(void);

/**
 * Run job (borrowed for the call). *out (may be NULL) says what its shards
 * did, or what scaling and colocate measured (also when they failed after
 * some rows); it is zeroed first, so it is whole on every return. @return 0, PS_E_ARG (an unknown action, a missing model or hp/lp,
 * devices with counters or with a shard, a device twice: the message says
 * which), PS_E_BACKEND (shards failed: out->shards_failed of them, each
 * told through note), or what ps_campaign_open, the action and
 * ps_collect_merge return.
 */
PS_API int ps_collect_job_run(const ps_collect_job_t *job, ps_collect_job_result_t *out);

/** The id of a co-location of jobs[0..n) in colocations.csv, as `pairsight
 *  collect colocate` names it: "MODEL_batchB-inf@SHARE+..." into out (size
 *  bytes). @return 0, or PS_E_ARG (NULL, n < 1, or an id longer than
 *  size - 1 bytes). */
PS_API int ps_collect_colocation_id(const ps_mps_job_t *jobs, int n, char *out, size_t size);

/** A list of TPC counts "8,16,32", "4-52:4" or a mix ("2,4-16:4"; each
 *  count in 1..INT_MAX, empty items skipped) into out[0..*n), at most cap.
 *  @return 0, or PS_E_ARG naming the text. */
PS_API int ps_collect_tpcs_parse(const char *s, int *out, int cap, int *n);

/* ======================================================================== */
/* Operator lists, the twin's calls and the ops format (src/profile,         */
/* src/simulate): cli simulate, import --tpcs-from twin, collect twin        */
/* ======================================================================== */

/** @return the name of built-in model i of the simulator (0, 1, ... in the
 *  order of `pairsight simulate --list`), or NULL past the last one; static. */
PS_API const char *ps_sim_model_name(size_t i);

/** Derive the kernels of the rows of a measured profile (one GPU, one TPC
 *  count: the whole GPU) and write them to f as the initializer lines of
 *  data/orion_kernels.inc (`pairsight simulate --derive`). gpu names the GPU
 *  of the rows in the catalog (e.g. "V100-SXM2-16GB").
 *  @return 0, PS_E_ARG (a NULL argument, a GPU outside the catalog), PS_E_INPUT
 *  (a row the twin cannot fit) or PS_E_IO (writing f failed). */
PS_API int ps_sim_derive_write(const ps_ops_t *ops, const char *gpu, FILE *f);

/* The twin's prediction for one segment pair and split. */
typedef struct {
    double hp_ns, lp_ns;           /* co-execution, with the dispatch cost (eq. 9), no noise */
    double hp_solo_ns, lp_solo_ns; /* standalone sums at each side's TPCs */
} ps_twin_pred_t;

/** The twin's prediction for each of q[0..n) (the key columns of coexec.csv
 *  rows; segments index the collector's operator lists at seq_len tokens)
 *  on gpu (a catalog name or alias) into the caller's out[0..n).
 *  @return 0, PS_E_ARG (NULL argument, unknown GPU or model, seq_len < 1, a
 *  segment outside its model) or PS_E_NOMEM. */
PS_API int ps_sim_twin_predict(const char *gpu, int seq_len, const ps_coexec_row_t *q, size_t n, ps_twin_pred_t *out);

/** One trace of model at batch, measured at traced TPCs (one row per
 *  kernel, in launch order), into ops with one row per operator of l at
 *  each of at[0..n_at) TPC counts: measured durations at traced, elsewhere
 *  measured x the twin's ratio for the operator, marked source=twin-ratio
 *  (docs/profile.md). *out is a new table (ps_ops_free).
 *  @return 0, PS_E_ARG (a NULL argument, n_at < 1), PS_E_MISMATCH (a kernel
 *  that fits no operator of l), PS_E_INPUT or PS_E_NOMEM. */
PS_API int ps_ops_twin_scale(const ps_ops_t *in, const char *model, int batch, int traced, const ps_oplist_t *l,
                             const int *at, int n_at, ps_ops_t **out);

/** The `ops` import format: the measured rows (no source) of p->model at
 *  p->batch and p->tpcs TPCs of the ops.csv at path, as a new table *out
 *  (ps_ops_free); *info receives the counts, the GPU and format "ops.csv".
 *  @return 0, PS_E_ARG (NULL argument), PS_E_INPUT (an unreadable table,
 *  or no such rows), PS_E_NOMEM. */
PS_API int ps_import_ops(const char *path, const ps_import_params_t *p, ps_ops_t **out, ps_import_info_t *info);

#ifdef __cplusplus
}
#endif

#endif /* PAIRSIGHT_COLLECT_H */
