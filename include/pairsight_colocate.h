/*
 * pairsight_colocate.h - workload-level co-location under MPS: predictors of
 * a workload's slowdown beside co-runners, their evaluation, and placement
 * of jobs on GPUs. Included by pairsight.h; needs pairsight_core.h.
 */
#ifndef PAIRSIGHT_COLOCATE_H
#define PAIRSIGHT_COLOCATE_H

#include "pairsight_core.h"

#ifdef __cplusplus
extern "C" {
#endif

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
PS_API double ps_coloc_solo(const ps_workloads_t *w, const ps_scaling_t *scaling, const char *gpu, const char *name,
                            int share_pct);

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
    /* Then one policy per predictor kind, in the kinds' order: derived from
     * ps_coloc_kind_t, so the two cannot drift (PS_POL_OF_KIND). */
    PS_POL_KINDS,
    PS_POL_KACE_LR = PS_POL_KINDS + PS_COLOC_KACE_LR,
    PS_POL_KACE_RF = PS_POL_KINDS + PS_COLOC_KACE_RF,
    PS_POL_KACE_MLP = PS_POL_KINDS + PS_COLOC_KACE_MLP,
    PS_POL_XU_RF = PS_POL_KINDS + PS_COLOC_XU_RF,
    PS_POL_RATIO = PS_POL_KINDS + PS_COLOC_RATIO,
    PS_POL_MPS = PS_POL_KINDS + PS_COLOC_MPS,
    PS_POL_LOWRANK = PS_POL_KINDS + PS_COLOC_LOWRANK,
    PS_POL_AUTO = PS_POL_KINDS + PS_COLOC_AUTO,
    PS_POL_COUNT = PS_POL_KINDS + PS_COLOC_KIND_COUNT
} ps_coloc_policy_t;

/* The selection policy of predictor kind k. */
#define PS_POL_OF_KIND(k) ((ps_coloc_policy_t)(PS_POL_KINDS + (int)(k)))

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
    uint64_t seed;           /* heuristic restarts (default 0) */
    int allow_wait;          /* 1: a job may wait when that raises the sum;
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
    int mixes;                  /* job mixes scored */
    int exact;                  /* mixes whose best placement is proven */
} ps_coloc_place_case_t;

/** cases[n_cases] carry n_jobs and n_gpus on entry; the rest is filled.
 *  ep gives the split (train_frac, seeds = mixes, seed, kinds).
 *  @return 0 or a negative PS_E_* (PS_E_INPUT when the table holds no
 *  complete co-location). */
PS_API int ps_coloc_eval_place(const ps_workloads_t *w, const ps_scaling_t *scaling, const ps_colocations_t *c,
                               const ps_coloc_eval_params_t *ep, int max_per_gpu, ps_coloc_place_case_t *cases,
                               int n_cases);

/* Shares (`colocate shares`, POST /v1/colocate/shares; docs/colocate.md):
 * each workload's MPS active-thread percentage for a set of workloads on
 * one GPU, chosen by the model's predictions. Every candidate split (a grid
 * of step..100 per workload whose sum is at most max_total, or the given
 * candidates) is predicted; the chosen one maximises the objective over the
 * workloads' normalised throughputs (predicted tput / exclusive_tput) among
 * the candidates that meet every floor and latency SLO. */
#define PS_SHARES_MAXK 8       /* workloads in a set */
#define PS_SHARES_MAXCAND 4096 /* candidates given or on the grid */

typedef enum { PS_SHARES_SUM = 0, PS_SHARES_MIN, PS_SHARES_WEIGHTED } ps_shares_objective_t;

typedef struct {
    int step;                                          /* grid step in percent (10): shares step, 2 step, .. <= 100 */
    int max_total;                                     /* most the shares may sum to (100: no two clients'
                      thread limits overlap, the range the split data
                      measure; up to 100 x k lets them overlap) */
    ps_shares_objective_t objective;                   /* sum (default), min or weighted */
    double weight[PS_SHARES_MAXK];                     /* weighted: per workload (1) */
    double floor[PS_SHARES_MAXK];                      /* normalised-throughput floors (NAN: none) */
    double slo_ms[PS_SHARES_MAXK];                     /* latency SLOs, batch / tput in ms (NAN: none) */
    int n_candidates;                                  /* 0: the grid */
    int candidates[PS_SHARES_MAXCAND][PS_SHARES_MAXK]; /* shares per candidate, set order */
} ps_coloc_shares_params_t;

/** @return the defaults: step 10, max_total 100, objective sum, weights 1,
 *  no floors or SLOs, the grid. */
PS_API ps_coloc_shares_params_t ps_coloc_shares_default_params(void);

/* One split and its predictions (set order). */
typedef struct {
    int share[PS_SHARES_MAXK];
    double tput[PS_SHARES_MAXK];       /* predicted throughput (a sum kind's
                                          sum split by solo throughput) */
    double norm[PS_SHARES_MAXK];       /* tput / exclusive_tput */
    double latency_ms[PS_SHARES_MAXK]; /* batch / tput x 1000 (batch from
                                          the id's _batch<n>, else 1) */
    double objective;
    int feasible; /* meets every floor and SLO */
} ps_coloc_split_t;

typedef struct {
    int k, feasible;          /* feasible: some candidate meets every constraint */
    ps_coloc_split_t best;    /* the choice (when feasible) */
    ps_coloc_split_t uniform; /* 100 / k each (floored to whole percent) */
    ps_coloc_split_t full;    /* 100 each */
    int n_candidates, n_feasible;
    /* infeasible: the workload whose floor (constraint "floor") or SLO
     * ("slo") no candidate meets, with the best value any candidate
     * reaches; -1 with constraint "jointly" when each can be met alone */
    int failing;
    const char *constraint;
    double failing_best;
    int slo_min_share[PS_SHARES_MAXK]; /* smallest share meeting the SLO (0: none or no SLO) */
    int k_trained;                     /* the model was trained on k-way sets (or does not say) */
} ps_coloc_shares_t;

/** Choose the shares of workloads[k] (k in 2..PS_SHARES_MAXK; a name may
 *  repeat: replicas of one service) on gpu. An infeasible request is not an error: out->feasible is 0
 *  and failing/constraint say why. Thread safety as ps_coloc_predict.
 *  @return 0, PS_E_ARG (k, a candidate outside 1..100 or
 *  above max_total, a bad step), PS_E_INPUT (a workload absent from w on
 *  gpu), PS_E_BACKEND or PS_E_NOMEM. */
PS_API int ps_coloc_shares(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                           const char *gpu, const char *const *workloads, int k, const ps_coloc_shares_params_t *p,
                           ps_coloc_shares_t *out);

/** ps_coloc_shares with a JSON request, as `colocate shares` and POST
 *  /v1/colocate/shares take it: {"set": "A,B" or ["A","B"], "gpu"
 *  (optional: the model's GPU, else the workloads' row), "candidates":
 *  "10/90,30/70" or [[10,90],..], "step", "max_total", "objective": "sum",
 *  "min" or "weighted:A=2,B=1", "floor": "A=0.8" or {"A":0.8}, "slo":
 *  "A=50" or {"A":50} (ms)}. A name that repeats in the set is "A#2" from
 *  its second place on, in the request's maps and the reply (plain "A" in
 *  a map means every A). *out (caller-owned, ps_free) is the reply,
 *  schema "pairsight.shares.v1" (docs/colocate.md), also when infeasible
 *  ("feasible": false, "failing": {...}, "shares": null).
 *  @return 0, PS_E_ARG (the message names the field), PS_E_INPUT,
 *  PS_E_BACKEND or PS_E_NOMEM. */
PS_API int ps_coloc_shares_json(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                                const char *request, char **out);

/** One co-location scored: names[k] at shares[k] percent (given), and
 *  what the model predicts for them on a GPU: each workload's throughput
 *  tput[i] and normalized throughput norm[i] (over its exclusive
 *  throughput, solo at 100%), their sums. Kinds that predict only the sum
 *  give each workload norm_sum / k and tput NAN. */
#define PS_COLOC_SET_MAXK 64
typedef struct {
    const char *names[PS_COLOC_SET_MAXK];
    int shares[PS_COLOC_SET_MAXK], k;
    double tput[PS_COLOC_SET_MAXK], norm[PS_COLOC_SET_MAXK], sum, norm_sum;
} ps_coloc_set_t;

/** Set s (names, shares, k given) predicted on gpu into its outputs, as
 *  ps_coloc_predict_set predicts it. Thread safety as ps_coloc_predict.
 *  @return 0, or ps_coloc_predict_set's codes. */
PS_API int ps_coloc_set_score(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                              const char *gpu, ps_coloc_set_t *s);

/** What a score reply names: the model file's fingerprint (NULL: the
 *  reply's "fingerprint" is null) and the workloads file, in messages
 *  (NULL: "workloads.csv"). */
typedef struct {
    const char *fingerprint, *workloads;
} ps_coloc_score_names_t;

/** A target workload scored beside candidate co-runner sets (POST
 *  /v1/colocate/score, docs/serve.md): request {"target": NAME,
 *  "candidates": ["a+b", {"workloads": [...], "shares": [...]}, ...],
 *  "shares": [...]?, "gpu": NAME?}; each candidate predicted by
 *  ps_coloc_set_score, the reply (schema "pairsight.colocate_score.v1")
 *  ranking them by norm_sum, a k the model was trained on first. names may
 *  be NULL. *out caller-owned (ps_free). @return 0, PS_E_ARG (the message
 *  names the field), PS_E_INPUT (not JSON, a workload absent from w) or
 *  PS_E_NOMEM. */
PS_API int ps_coloc_score_json(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                               const char *request, const ps_coloc_score_names_t *names, char **out);

/** `colocate select`: candidate co-runners of a target ranked by the
 *  predicted throughput sum (docs/colocate.md). The lists are written as
 *  the command line writes them. */
typedef struct {
    const char *target;         /* the target workload */
    const char *candidates;     /* "b,c+d": comma-separated candidates, a candidate's
                                   co-runners joined by '+' (at most 63) */
    const char *shares;         /* "A/B/..": the target's share, then each co-runner's,
                                   the last repeated (NULL: 100 each) */
    const char *gpu;            /* the query's gpu (NULL: the target's row's; refused
                                   when it has rows on several GPUs) */
    const char *workloads_name; /* in messages: the workloads table's file
                                   (NULL: "workloads.csv") */
    const char *flag;           /* in messages, before a parameter's name
                                   ("--" for a command line; NULL: none) */
} ps_coloc_select_params_t;

/** One candidate predicted: the target and its co-runners. */
typedef struct {
    const char *candidate;          /* as given ("c+d") */
    int k;                          /* workloads, the target first */
    double sum;                     /* predicted throughput sum (not finite: none) */
    double tput[PS_COLOC_SET_MAXK]; /* each one's (NAN for kinds that predict the sum) */
} ps_coloc_choice_t;

typedef struct {
    const char *gpu;            /* the GPU predicted on (a string of w) */
    int n;                      /* candidates */
    ps_coloc_choice_t *ranking; /* [n], by decreasing sum, a non-finite one last */
    char *text;                 /* the candidates' names */
} ps_coloc_selection_t;

/** Rank p's candidates beside p->target: each predicted by
 *  ps_coloc_predict_set on the target's GPU. out's arrays are the caller's
 *  (ps_coloc_selection_free, also after an error). Thread safety as
 *  ps_coloc_predict. @return 0, PS_E_ARG (a list or a share count: the
 *  message names the parameter), PS_E_INPUT (the target or a candidate
 *  absent from w, with the nearest name; a target on several GPUs without
 *  gpu), PS_E_BACKEND or PS_E_NOMEM. */
PS_API int ps_coloc_select(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                           const ps_coloc_select_params_t *p, ps_coloc_selection_t *out);
/** Release a selection's arrays; NULL is a no-op. @return nothing. */
PS_API void ps_coloc_selection_free(ps_coloc_selection_t *s);
/** A selection as JSON (schema "pairsight.colocate-select.v1": target,
 *  model (m's kind), ranking [{candidate, tput_sum, reason (when not
 *  finite), tput}]), as `colocate select --json` prints it, into *out
 *  (caller-owned, ps_free). @return 0, PS_E_ARG or PS_E_NOMEM. */
PS_API int ps_coloc_selection_json(const ps_coloc_model_t *m, const char *target, const ps_coloc_selection_t *s,
                                   char **out);

/** The cluster of `colocate place`, as the command line writes it. */
typedef struct {
    const char *jobs;           /* "a,b*3,c": workload names, name*N repeating a job (64 jobs at most) */
    const char *gpus;           /* "8" (GPUs of each job's own row's type) or "4:v100,4:p100" (TYPE: the
                                   gpu column of workloads.csv; 64 GPUs at most) */
    const char *shares;         /* "100,50": the allowed shares of a co-located job, up to 4 (NULL: 100) */
    const char *workloads_name; /* in messages: the workloads table's file (NULL: "workloads.csv") */
    const char *flag;           /* in messages, before a parameter's name ("--"; NULL: none) */
} ps_coloc_cluster_spec_t;

/** A cluster read: jobs, GPU types (NULL: the jobs' own rows') and shares,
 *  as ps_coloc_place takes them; the names point into text. */
typedef struct {
    const char *jobs[64], *types[64];
    int n_jobs, n_gpus, shares[4], n_shares;
    char *text;
} ps_coloc_cluster_t;

/** Read spec into out and check it against w: every GPU type named has
 *  rows in w, every job a row on one of the types (any for an untyped
 *  GPU). out->text is the caller's (ps_coloc_cluster_free, also after an
 *  error). Thread-safe. @return 0, PS_E_ARG (a list: the message names the
 *  parameter and what it expects), PS_E_INPUT (a type or a job without a
 *  row) or PS_E_NOMEM. */
PS_API int ps_coloc_cluster_parse(const ps_workloads_t *w, const ps_coloc_cluster_spec_t *spec,
                                  ps_coloc_cluster_t *out);
/** Release a cluster's text; NULL is a no-op. @return nothing. */
PS_API void ps_coloc_cluster_free(ps_coloc_cluster_t *c);
/** Placement pl of cluster c as JSON (schema "pairsight.colocate-place.v1":
 *  model (m's kind), objective, exact, stopped_by_time_limit, max_per_gpu,
 *  gpus [{gpu, type, jobs [{job, workload, share_pct, norm_tput}]}],
 *  waiting [names]), as `colocate place --json` prints it, into *out
 *  (caller-owned, ps_free). @return 0, PS_E_ARG or PS_E_NOMEM. */
PS_API int ps_coloc_placement_json(const ps_coloc_model_t *m, const ps_coloc_cluster_t *c,
                                   const ps_coloc_placement_t *pl, int max_per_gpu, char **out);

/** What a cluster applies, from a "pairsight.shares.v1" reply: format "dra"
 *  (a resource.k8s.io/v1 ResourceClaimTemplate whose opaque config is the
 *  NVIDIA DRA driver's GpuConfig with sharing.strategy MPS, and a Pod with
 *  one container per workload carrying CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
 *  where the shares differ), "env" (the env lines alone) or "yaml" (the
 *  reply as YAML). *out caller-owned (ps_free). @return 0, PS_E_ARG (an
 *  unknown format) or PS_E_INPUT (not a feasible shares reply). */
PS_API int ps_coloc_shares_emit(const char *reply, const char *format, char **out);

/* Bindings (see pairsight_core.h): co-location models with JSON parameters
 * and as bytes (as ps_model_save_mem / ps_model_load_mem). */
/** ps_coloc_train with JSON parameters ("coloc"). */
PS_API int ps_coloc_train_json(const ps_workloads_t *w, const ps_scaling_t *scaling, const ps_colocations_t *c,
                               const char *config, ps_coloc_model_t **out);
/** ps_coloc_place with JSON parameters ("place"; jobs, a list of workload
 *  names, and gpus, a list of GPU types or nulls, are required). *out
 *  (caller-owned, ps_free): schema "pairsight.place.v1", objective, exact
 *  and per job {job, gpu (index or null: waits), share, norm_tput}. */
PS_API int ps_coloc_place_json(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                               const char *config, char **out);
PS_API int ps_coloc_model_save_mem(const ps_coloc_model_t *m, unsigned char **out, size_t *out_len);
PS_API int ps_coloc_model_load_mem(const unsigned char *buf, size_t len, ps_coloc_model_t **out);

#ifdef __cplusplus
}
#endif

#endif /* PAIRSIGHT_COLOCATE_H */
