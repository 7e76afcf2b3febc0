/*
 * pairsight_eval.h - evaluating the segment model: the baselines, the
 * accuracy metrics, and the replay of request streams that measures the
 * planner's plans on the simulator's physics. Included by pairsight.h;
 * needs pairsight_core.h.
 */
#ifndef PAIRSIGHT_EVAL_H
#define PAIRSIGHT_EVAL_H

#include "pairsight_core.h"

#ifdef __cplusplus
extern "C" {
#endif

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
/* Replay (src/decision)                                                     */
/* ======================================================================== */
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
PS_API const char *ps_replay_policy_name(ps_replay_policy_t policy);
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
    int orion_lp_tpcs;                  /* orion: the LP side's TPCs fixed (HP gets the rest;
                                           a split profiled for both) instead of tuned on
                                           the warm-up (0: tuned) */
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
 *  holds the results (release with ps_replay_result_free). The result is
 *  the same for a seed on every run.
 *  @return 0; PS_E_ARG for bad parameters or a policy without its input
 *  (model, intensity_train); PS_E_INPUT when ops is not the simulator's
 *  profile of both models; PS_E_MISMATCH for a model of another GPU. */
PS_API int ps_replay_run(const ps_model_t *m, const ps_ops_t *ops, const char *gpu, const ps_replay_params_t *p,
                         ps_replay_result_t *out);
/** Release the latencies of r and zero it; NULL is a no-op. @return nothing. */
PS_API void ps_replay_result_free(ps_replay_result_t *r);

/* Bindings (see pairsight_core.h): the replay with JSON parameters. */
/** ps_replay_run with JSON parameters ("replay"; gpu defaults to the
 *  model's; intensity_train may be NULL, which drops the intensity policy).
 *  *out (caller-owned, ps_free): schema "pairsight.replay_result.v1", requests,
 *  dedicated_ns, slo_ns, lp_ceiling, lp_rate_needed and, per policy run,
 *  the fields of ps_replay_policy_result_t but the latencies. */
PS_API int ps_replay_json(const ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *intensity_train,
                          const char *config, char **out);
/** A replay's result as JSON into *out (caller-owned, ps_free), both of its
 *  documents written by this one call: with p NULL what ps_replay_json and
 *  the replay operation answer (schema "pairsight.replay_result.v1": every
 *  field of every policy run but the latencies, null where not finite);
 *  with p, the parameters it ran with, what `pairsight replay --json`
 *  prints (schema "pairsight.replay.v1": hp, hp_batch, lp, lp_batch,
 *  requests, load, seed, coverage, dedicated_ns, slo_ns, stretch_fixed
 *  (null: tuned, "none": no cap), time_value, goal_ratio, lp_ceiling,
 *  lp_rate_needed, and per policy run its figures, budget_kept when
 *  finite, orion_lp_tpcs for orion, stretch for the planners).
 *  @return 0, PS_E_ARG (NULL r or out, p without its models) or PS_E_NOMEM. */
PS_API int ps_replay_result_json(const ps_replay_result_t *r, const ps_replay_params_t *p, char **out);

/* ======================================================================== */
/* Experiments and report (src/evaluate): `pairsight eval` and `report`      */
/* ======================================================================== */
/* The paper's four experiments on one profiling campaign (docs/evaluation):
 * accuracy and cost of PairSight and every baseline, the ablation, the
 * generalization to unseen models and batches, and the long segments; their
 * tables, JSON and the self-contained HTML report. */

enum { PS_EXP_ACCURACY = 1, PS_EXP_ABLATION = 2, PS_EXP_GENERALIZATION = 4, PS_EXP_LONG = 8, PS_EXP_ALL = 15 };

/** "accuracy,ablation,generalization,long" or "all" into *out_mask (PS_EXP_*
 *  bits). @return 0, or PS_E_ARG naming the unknown experiment. */
PS_API int ps_experiments_parse(const char *list, int *out_mask);

/* What ps_eval_run evaluates; the tables are borrowed for the call. */
typedef struct {
    const ps_ops_t *ops;
    const ps_coexec_t *cx;       /* the campaign, split 70/10/10/10 by experiment */
    const ps_coexec_t *train_cx; /* NULL: train on cx's train split and test on its
                                    test split; else train on train_cx's train
                                    split and test on every row of cx */
    const ps_coexec_t *long_cx;  /* long-segment co-executions (experiment 4) */
    const ps_ops_t *long_ops;    /* their standalone profile (NULL: ops) */
    const ps_model_t *model;     /* NULL: trained here on the training data */
    int experiments;             /* PS_EXP_* mask (PS_EXP_ACCURACY) */
    uint64_t seed;               /* split seed (the model's when it is given) (1) */
    int nthread;                 /* XGBoost threads (0 = all) */
    int max_rounds;              /* trees per regressor when training here (0 = default) */
    int n_depths, depths[4];     /* max_depth grid when training here (0: the trainer's) */
    int n_etas;                  /* learning-rate grid when training here (0: the trainer's) */
    double etas[4];
    int ks[3];               /* continued-training sizes (10, 50, 100) */
    ps_baseline_params_t bp; /* the baselines' (ps_baseline_default_params) */
    ps_progress_fn progress; /* NULL: none */
    void *progress_user;
} ps_eval_params_t;

/** @return the defaults documented beside each field. */
PS_API ps_eval_params_t ps_eval_default_params(void);

/* The results of one evaluation (opaque). */
typedef struct ps_eval ps_eval_t;

/** Run the experiments of p->experiments. A baseline that fails to train
 *  leaves its row NAN with a warning through the log; a failure of PairSight
 *  or of the inputs fails the call. *out owns its memory (ps_eval_free) and
 *  borrows the campaign's strings: free it before p->cx.
 *  @return 0, PS_E_ARG (p, p->ops or p->cx NULL, bad parameters), PS_E_INPUT
 *  (tables that do not fit), PS_E_NOMEM; *out is NULL on failure. */
PS_API int ps_eval_run(const ps_eval_params_t *p, ps_eval_t **out);

/** The results as JSON ({"schema": "pairsight.eval.v1", "methods": {...},
 *  "ablation": {...}, ...}, what `pairsight eval --json` prints) into *out
 *  (caller-owned, ps_free). @return 0, PS_E_ARG (NULL e) or PS_E_NOMEM. */
PS_API int ps_eval_json(const ps_eval_t *e, char **out);

/** Print the results' tables as text, the paper's layout, to f.
 *  @return 0, or PS_E_ARG for NULL e or f. */
PS_API int ps_eval_print(const ps_eval_t *e, FILE *f);

/** Write the self-contained HTML report (inline SVG) of e to path,
 *  atomically. ops and cx are the tables e ran on; the page names the
 *  campaign that campaign.json beside coexec_path describes (coexec_path
 *  NULL, or no such file: what cx's rows tell).
 *  @return 0, PS_E_ARG (NULL e, ops, cx or path), PS_E_IO or PS_E_NOMEM. */
PS_API int ps_eval_report_write(const ps_eval_t *e, const ps_ops_t *ops, const ps_coexec_t *cx, const char *coexec_path,
                                const char *path);

/** Release the results; NULL is a no-op. @return nothing. */
PS_API void ps_eval_free(ps_eval_t *e);

#ifdef __cplusplus
}
#endif

#endif /* PAIRSIGHT_EVAL_H */
