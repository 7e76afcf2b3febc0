/*
 * pairsight_overlap.h - the overlap predictor of co-running operator groups
 * (issue 28, docs/overlap.md): the table overlap.csv of measured co-runs of k
 * processes, its import from the Abacus artefact, the makespan predictors
 * (train, predict, and their scoring under the protocols of
 * docs/overlap.md) and the GPU twin scored against the same co-runs. These
 * are the calls of `pairsight import abacus`, `pairsight overlap
 * train|predict|eval` and `pairsight overlap twin`. Included by pairsight.h;
 * needs pairsight_core.h.
 */
#ifndef PAIRSIGHT_OVERLAP_H
#define PAIRSIGHT_OVERLAP_H

#include "pairsight_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================== */
/* The overlap table (src/profile)                                           */
/* ======================================================================== */
/*
 * Contract: overlap.csv of docs/FORMATS.md, measured co-runs of
 * operator-group ranges of k processes that start together and share one
 * time (the makespan). The loader checks every row and names
 * FILE:LINE:COLUMN on the first error; a loaded table is read-only and may
 * be read from several threads at once.
 */

/** An overlap.csv table; opaque. */
typedef struct ps_overlap ps_overlap_t;

/** Reads and checks an overlap.csv.
 *  @param path the file to read.
 *  @param out receives the table (caller-owned, ps_overlap_free); NULL on
 *  failure.
 *  @return 0, PS_E_ARG (NULL), PS_E_IO (cannot be read), PS_E_INPUT (not
 *  an overlap.csv, a bad row, no experiments; the message names
 *  FILE:LINE:COLUMN) or PS_E_NOMEM. */
PS_API int ps_overlap_load(const char *path, ps_overlap_t **out);

/** Writes t to path atomically (temp file, fsync, rename), numbers in the C
 *  locale.
 *  @param t the table.
 *  @param path the file to write.
 *  @return 0, PS_E_ARG (NULL), PS_E_IO or PS_E_NOMEM. */
PS_API int ps_overlap_save(const ps_overlap_t *t, const char *path);

/** Frees a table; NULL is a no-op. @return nothing. */
PS_API void ps_overlap_free(ps_overlap_t *t);

/** @param t the table.
 *  @return its experiments (0 for NULL). */
PS_API size_t ps_overlap_count(const ps_overlap_t *t);

/** @param t the table.
 *  @return its rows: one per process of each experiment (0 for NULL). */
PS_API size_t ps_overlap_rows(const ps_overlap_t *t);

/** One experiment of an overlap table; the strings live as long as the
 *  table. */
typedef struct {
    const char *id, *gpu, *setting, *mechanism;
    int k;            /* processes */
    int active;       /* processes whose range of groups is not empty */
    double median_us; /* the measured makespan */
    double mean_us;   /* NAN where the table does not give it */
    double std_us;    /* NAN where the table does not give it */
} ps_ov_experiment_t;

/** Experiment i of t, in the table's order (first seen first).
 *  @param t the table.
 *  @param i 0 .. ps_overlap_count(t) - 1.
 *  @param out receives the experiment.
 *  @return 0, or PS_E_ARG (NULL, i out of range). */
PS_API int ps_overlap_experiment(const ps_overlap_t *t, size_t i, ps_ov_experiment_t *out);

/* ======================================================================== */
/* Import of the Abacus artefact (src/profile)                               */
/* ======================================================================== */

/** What ps_abacus_import read. */
typedef struct {
    char rev[48];       /* the commit read, or "worktree" */
    int files;          /* profile files read */
    size_t experiments; /* rows of the artefact taken */
    char skipped[512];  /* files that could not be read (absent blobs, LFS pointers), space-separated */
} ps_abacus_info_t;

/** Reads the measured co-runs of data/profile/{A100,mig}/ of the Abacus
 *  artefact (SC'21, github Raphael-Hao/Abacus) into an overlap table.
 *  @param repo a work tree (read when rev is NULL and it holds
 *  data/profile/A100) or any git repository, bare or not, read through
 *  `git ls-tree` and `git cat-file` (git on PATH).
 *  @param rev the commit, or NULL for the work tree or else the newest
 *  commit that holds data/profile/A100.
 *  @param out receives the table (caller-owned, ps_overlap_free); NULL on
 *  failure.
 *  @param info receives what was read.
 *  @return 0, PS_E_ARG (NULL repo, out or info), PS_E_INPUT (no commit
 *  holds the profiles, a bad row: the message names
 *  REPO@REV:PATH:LINE:COLUMN), PS_E_IO (git cannot run or read) or
 *  PS_E_NOMEM. */
PS_API int ps_abacus_import(const char *repo, const char *rev, ps_overlap_t **out, ps_abacus_info_t *info);

/* ======================================================================== */
/* The makespan predictors (src/evaluate)                                    */
/* ======================================================================== */
/*
 * Contract: pairsight's predictor (XGBoost on what each range costs alone
 * and how the co-runners compare), Abacus's features with an MLP and with
 * XGBoost, and the baselines max(solo) and sum(solo), scored by MAPE of the
 * median time under the protocols of docs/overlap.md. A trained predictor is
 * read-only; use it from one thread at a time (its XGBoost booster is
 * shared).
 */

typedef enum {
    PS_OVM_PAIRSIGHT = 0,
    PS_OVM_ABACUS_MLP,
    PS_OVM_ABACUS_XGB,
    PS_OVM_MAX_SOLO,
    PS_OVM_SUM_SOLO,
    PS_OVM_COUNT
} ps_ov_method_t;

typedef enum {
    PS_OVP_RANDOM = 0, /* a random 80/20 split of the 2-way dedicated experiments */
    PS_OVP_LEAVE_PAIR, /* each 2-way dedicated combination held out in turn */
    PS_OVP_KWAY,       /* train on 2-way dedicated, score the 3- and 4-way */
    PS_OVP_LEAVE_MODEL,
    PS_OVP_MIG,
    PS_OVP_COUNT
} ps_ov_protocol_t;

/** @param m a method.
 *  @return "pairsight", "abacus_mlp", "abacus_xgb", "max_solo" or
 *  "sum_solo" ("unknown" for an invalid value); static. */
PS_API const char *ps_ov_method_name(ps_ov_method_t m);

/** @param p a protocol.
 *  @return "random", "leave-pair", "k-way", "leave-model" or "mig"
 *  ("unknown" for an invalid value); static. */
PS_API const char *ps_ov_protocol_name(ps_ov_protocol_t p);

/** The protocol of a name.
 *  @param name as ps_ov_protocol_name gives it.
 *  @param out receives the protocol.
 *  @return 0, or PS_E_ARG (NULL, unknown name; *out untouched). */
PS_API int ps_ov_protocol_from_name(const char *name, ps_ov_protocol_t *out);

/** pairsight's default feature groups (docs/overlap.md). */
#define PS_OV_FEATURES_DEFAULT "times,ratios,active,share,batch,ops,grain"

/** pairsight's feature groups from a list.
 *  @param list comma-separated names of times, ratios, active, share,
 *  batch, ops, grain.
 *  @param mask receives the groups, bit i for the i-th name above.
 *  @return 0, or PS_E_ARG (NULL, an unknown name; *mask untouched). */
PS_API int ps_ov_features_parse(const char *list, unsigned *mask);

typedef struct {
    int rounds;          /* XGBoost rounds of both XGBoost predictors (600) */
    int depth;           /* their tree depth (8) */
    double eta;          /* their learning rate (0.05) */
    int mlp_epochs;      /* Abacus MLP: passes (30; 0 skips it) */
    double ridge;        /* solo table: ridge weight per experiment toward the uniform prior (0.01) */
    int threads;         /* XGBoost threads (2) */
    uint64_t seed;       /* the random split and the MLP's initialisation (1) */
    const char *oplists; /* folder of operator lists (FLOPs, bytes, kernels per range), or NULL */
    unsigned features;   /* pairsight's feature groups (ps_ov_features_parse; all by default) */
    int pairsight_only;  /* eval: skip abacus_mlp and abacus_xgb (a sweep's speed) */
    int setting_model;   /* eval: pairsight predicts every row with its setting model (scale-free features,
                            demand over the setting's capacity), not only the rows of a setting without
                            training co-runs: how its features were chosen by leave-pair (0) */
    int floors;          /* eval: 1 scores each protocol's floor too, 2 the floor alone, 0 none (1) */
} ps_ov_params_t;

/** @return the default parameters (the values in brackets above). */
PS_API ps_ov_params_t ps_ov_default_params(void);

/** The score of every method under one protocol. */
typedef struct {
    double mape[PS_OVM_COUNT];  /* percent; NAN where the method cannot predict the protocol */
    size_t n[PS_OVM_COUNT];     /* experiments scored */
    double worst[PS_OVM_COUNT]; /* leave-pair, leave-model: the worst held-out group's MAPE */
    char worst_name[PS_OVM_COUNT][96];
    double floor;   /* pairsight trained on the protocol's target data itself (a random 80/20 split of the
                       experiments it scores), percent; NAN when not run (floors 0) */
    size_t floor_n; /* experiments the floor scored */
} ps_ov_result_t;

/** Scores every method under protocol p on t, every setting fixed
 *  beforehand; progress per held-out group goes to the log (PS_LOG_INFO).
 *  @param t the table to learn from and score on.
 *  @param p the protocol.
 *  @param prm the parameters.
 *  @param out receives the scores.
 *  @return 0 (a method that cannot score the protocol has n 0 and mape
 *  NAN), PS_E_ARG (NULL, an invalid protocol), PS_E_IO (prm->oplists
 *  cannot be read), PS_E_INPUT (a bad operator list), PS_E_NOMEM or
 *  PS_E_BACKEND. */
PS_API int ps_ov_eval(const ps_overlap_t *t, ps_ov_protocol_t p, const ps_ov_params_t *prm, ps_ov_result_t *out);

/** A trained makespan predictor; opaque. */
typedef struct ps_ov_model ps_ov_model_t;

/** Fits the solo range times on t's single-active experiments and the
 *  predictor on every experiment whose solo times are known.
 *  @param t the table.
 *  @param p the parameters (oplists, rounds, depth, eta, ridge, threads,
 *  seed, features).
 *  @param out receives the predictor (caller-owned, ps_ov_model_free); NULL
 *  on failure.
 *  @return 0, PS_E_ARG (NULL), PS_E_INPUT (no experiment has known solo
 *  times, a bad operator list), PS_E_IO (p->oplists cannot be read),
 *  PS_E_NOMEM or PS_E_BACKEND. */
PS_API int ps_ov_train(const ps_overlap_t *t, const ps_ov_params_t *p, ps_ov_model_t **out);

/** Predicts the makespan of every experiment of t. An experiment with more
 *  active processes than any training experiment had is composed from
 *  pairs: the longest solo range time T_L plus, over each other active
 *  process j, (the prediction of L with j alone - T_L) (docs/overlap.md);
 *  with two active processes that is the 2-way prediction itself.
 *  @param m the predictor.
 *  @param t the experiments.
 *  @param oplists the operator lists given to train, or NULL for none.
 *  @param out receives ps_overlap_count(t) makespans in microseconds
 *  (caller-owned array), NAN where a slot's solo time is unknown to m.
 *  @return 0, PS_E_ARG (NULL; oplists given where m was trained without
 *  them or the reverse), PS_E_IO, PS_E_INPUT (a bad operator list),
 *  PS_E_NOMEM or PS_E_BACKEND. */
PS_API int ps_ov_predict(const ps_ov_model_t *m, const ps_overlap_t *t, const char *oplists, double *out);

/** Writes m atomically; the file starts "pairsight-overlap-model 4".
 *  @param m the predictor.
 *  @param path the file to write.
 *  @return 0, PS_E_ARG (NULL), PS_E_IO, PS_E_NOMEM or PS_E_BACKEND. */
PS_API int ps_ov_model_save(const ps_ov_model_t *m, const char *path);

/** Reads a predictor that ps_ov_model_save wrote.
 *  @param path the file.
 *  @param out receives the predictor (caller-owned, ps_ov_model_free); NULL
 *  on failure.
 *  @return 0, PS_E_IO (cannot be read), PS_E_INPUT (not an overlap model,
 *  another feature layout, cut short), PS_E_NOMEM or PS_E_BACKEND. */
PS_API int ps_ov_model_load(const char *path, ps_ov_model_t **out);

/** @param m the predictor.
 *  @return the (setting, model, batch, seq_len) keys of its solo table (0
 *  for NULL). */
PS_API size_t ps_ov_model_solo_keys(const ps_ov_model_t *m);

/** Frees a predictor; NULL is a no-op. @return nothing. */
PS_API void ps_ov_model_free(ps_ov_model_t *m);

/* ======================================================================== */
/* The GPU twin against overlap.csv (src/evaluate)                           */
/* ======================================================================== */
/*
 * Contract: every experiment's k processes are simulated under MPS on all
 * SMs of the twin of a GPU, each launching the kernels of its range of
 * operator groups from captured operator lists (tools/abacus_oplists.py),
 * and the twin's makespan is scored against the measured median
 * (docs/simulator.md, "The twin against Abacus's A100"). A twin is used by
 * one thread at a time (it places kernels lazily).
 */

/** The twin's launch and sharing parameters under MPS (docs/simulator.md,
 *  eq. 13-16). */
typedef struct {
    double launch_ns;  /* host time one process spends per kernel launch */
    double start_ns;   /* fixed time of one measured run: sends, synchronize, barrier */
    double stagger_ns; /* delay of process p's first launch: p x stagger */
    double sm_pack;    /* SMs hold co-running grids up to S (1 + sm_pack) SMs of demand before they share;
                          > -1, negative: co-running costs capacity */
    double flop_scale; /* share of the twin's compute rate the kernels reach */
} ps_mps_params_t;

/** The twin of one GPU with the kernels of a folder of operator lists;
 *  opaque. */
typedef struct ps_ovt ps_ovt_t;

/** Reads every operator list of dir (`# pairsight oplist 1`; lists of models
 *  Abacus did not run are ignored) and builds its kernels on gpu.
 *  @param dir the folder of operator lists.
 *  @param gpu a catalog name or alias.
 *  @param out receives the twin (caller-owned, ps_ovt_free); NULL on
 *  failure.
 *  @return 0, PS_E_ARG (NULL, unknown GPU), PS_E_IO (dir cannot be read),
 *  PS_E_INPUT (a bad list, groups out of order; the message names the file)
 *  or PS_E_NOMEM. */
PS_API int ps_ovt_load(const char *dir, const char *gpu, ps_ovt_t **out);

/** Frees a twin; NULL is a no-op. @return nothing. */
PS_API void ps_ovt_free(ps_ovt_t *tw);

/** @param tw the twin.
 *  @param unmatched receives the operators that fell in no group (counted in
 *  the group before them); may be NULL.
 *  @return the operator lists read (0 for NULL). */
PS_API int ps_ovt_lists(const ps_ovt_t *tw, long *unmatched);

typedef struct {
    const char *setting; /* experiments of this setting ("dedicated") */
    int every;           /* score every Nth experiment of each file (1: all) */
    int fit_every;       /* calibrate on every Nth 2-way experiment of each file (40) */
    int calibrate;       /* fit launch_ns, sm_pack, stagger_ns and start_ns on the 2-way experiments (0) */
    int fit_flops;       /* calibrate flop_scale too (0) */
    ps_mps_params_t mps; /* the twin's parameters before calibration */
} ps_ovt_params_t;

/** @return the default parameters (in brackets above; mps: the
 *  uncalibrated twin's). */
PS_API ps_ovt_params_t ps_ovt_default_params(void);

/** One line of a score: every experiment of a k, or of one file (a pair or a
 *  triple, "resnet50_vgg16"). */
typedef struct {
    char name[96];
    int k;             /* processes of the file (2, 3, 4); 0 for a line by k */
    size_t n;          /* experiments scored (two or more active slots) */
    double mape;       /* percent */
    double bias;       /* mean of (twin - real) / real, percent */
    double real_alpha; /* median of (real - max) / (sum - max), solos fitted from the real single-active runs */
    double twin_alpha; /* the same for the twin, with its own solo times */
    size_t n_solo;     /* single-active experiments of the line */
    double solo_mape;  /* the twin's MAPE on them: its error alone */
} ps_ovt_line_t;

/** A score: its lines are owned by it (ps_ovt_score_free). */
typedef struct {
    ps_ovt_line_t *line; /* [n]: by k first (k ascending), then by file */
    int n, n_k;
    ps_mps_params_t mps; /* the parameters scored */
} ps_ovt_score_t;

/** Frees the lines of a score and empties it; NULL is a no-op.
 *  @return nothing. */
PS_API void ps_ovt_score_free(ps_ovt_score_t *s);

/** Scores the twin on t's experiments of p->setting (every p->every-th of
 *  each file).
 *  @param tw the twin.
 *  @param t the measured co-runs.
 *  @param p the setting and the sampling.
 *  @param mps the twin's parameters.
 *  @param out receives the score (ps_ovt_score_free).
 *  @return 0 (a line without experiments has n 0), PS_E_ARG (NULL,
 *  p->every < 1) or PS_E_NOMEM. */
PS_API int ps_ovt_score(ps_ovt_t *tw, const ps_overlap_t *t, const ps_ovt_params_t *p, const ps_mps_params_t *mps,
                        ps_ovt_score_t *out);

/** Fits launch_ns, stagger_ns and sm_pack on grids (and flop_scale with
 *  p->fit_flops) and start_ns exactly on the 2-way experiments of
 *  p->setting (every p->fit_every-th), from p->mps; steps go to the log
 *  (PS_LOG_INFO).
 *  @param tw the twin.
 *  @param t the measured co-runs.
 *  @param p the setting, the sampling and the starting parameters.
 *  @param out receives the fitted parameters.
 *  @param mape receives their 2-way MAPE in percent.
 *  @return 0, PS_E_ARG (NULL, p->fit_every < 1) or PS_E_NOMEM. */
PS_API int ps_ovt_calibrate(ps_ovt_t *tw, const ps_overlap_t *t, const ps_ovt_params_t *p, ps_mps_params_t *out,
                            double *mape);

#ifdef __cplusplus
}
#endif

#endif /* PAIRSIGHT_OVERLAP_H */
