/*
 * Internal pieces of the workload-level co-location stage: the data set built
 * from workloads.csv, workload_scaling.csv and colocations.csv, the feature
 * builders of each predictor, and the small learners they share.
 * docs/colocate.md explains the predictors and the metric.
 */
#ifndef PS_COLOCATE_H
#define PS_COLOCATE_H

#include "pairsight.h"
#include "profile/tables.h"

#include <stdint.h>
#include <stdio.h>

/* Per-workload metrics, in the order of workloads.csv. */
enum {
    CW_THREADS,
    CW_REGISTERS,
    CW_STATIC_SMEM,
    CW_SM_TPUT,
    CW_DRAM_TPUT,
    CW_MEM_TPUT,
    CW_SM_BUSY,
    CW_MEM_BUSY,
    CW_MEMCAP,
    CW_STALL_LS,
    CW_STALL_LG,
    CW_STALL_MIO,
    CW_EXCL,
    CW_N
};

typedef struct {
    const char *name;  /* borrowed from the workloads table */
    const char *gpu;   /* borrowed; may be NULL */
    const char *group; /* model without batch size ("bert-base-cased-inf"), owned */
    double f[CW_N];    /* NAN where not measured */
    int n_scal;
    int *scal_share; /* ascending */
    double *scal_tput;
} cl_workload_t;

typedef struct {
    const char *id; /* borrowed from the colocations table */
    int k;
    int *w;       /* [k] workload index per slot (slot order) */
    int *share;   /* [k] share_pct */
    double *tput; /* [k] NAN when not measured */
    int *slot;    /* [k] the slot column, ascending */
    int complete; /* every tput measured */
    int origin;   /* 0 = first table, 1 = second (eval --test) */
    int set;      /* index of its workload multiset (same workloads, any shares) */
} cl_coloc_t;

typedef struct {
    cl_workload_t *w;
    int nw;
    cl_coloc_t *c;
    int nc;
    int n_sets;
    int has[CW_N]; /* 1 when some workload has the metric (else it is dropped) */
} cl_data_t;

/* Build from the tables (scaling and c2 may be NULL). Every workload of a
 * co-location must be in w. Co-location rows are grouped by id; slots are
 * sorted. */
int psi_cl_data_build(const ps_workloads_t *w, const ps_scaling_t *scaling, const ps_colocations_t *c,
                      const ps_colocations_t *c2, cl_data_t **out);
void psi_cl_data_free(cl_data_t *d);

/* A training set: co-locations idx[0..n) of d. */
typedef struct {
    const cl_data_t *d;
    const int *idx;
    int n;
} cl_train_t;

/* Throughput of workload wi alone at share_pct: linear interpolation in
 * workload_scaling.csv, proportional below its smallest share, its largest
 * share's value above it; without scaling rows exclusive_tput x share / 100. */
double psi_cl_solo(const cl_data_t *d, int wi, int share_pct);

/* One measured (co-location, slot) of a training set. */
typedef struct {
    int c, s, w;
    double ratio; /* tput / solo(share) */
} wrow_t;

/* Every measured (co-location, slot) of train[n_train] into *out (the
 * caller frees it), in order, with its ratio; *n_out rows. */
int psi_cl_measured_rows(const cl_data_t *d, const int *train, int n_train, wrow_t **out, int *n_out);

/* Feature vectors. */
#define CL_SUM_NF 13 /* KACE: combined features of a co-location */
#define CL_XU_NF 5   /* Xu et al.: system metrics */
#define CL_MPS_NF 34 /* our per-workload features: CL_MPS_BASE_NF, then 2 of pairenc.c */
#define CL_MPS_BASE_NF 32
void psi_cl_sum_features(const cl_data_t *d, const cl_coloc_t *c, double *out);
void psi_cl_xu_features(const cl_data_t *d, const cl_coloc_t *c, double *out);
double psi_cl_mps_corunner_activity(const cl_data_t *d, const cl_coloc_t *c, int slot);
void psi_cl_mps_features(const cl_data_t *d, const cl_coloc_t *c, int slot, double *out);

/* Learners. */
/* A linear model of d columns on z-scored columns, in the caller's arrays:
 * mu[d], sd[d] (0: the column is left out), beta[d + 1], beta[0] the
 * intercept. */
typedef struct {
    double *mu, *sd, *beta;
} cl_ols_t;
/* Ordinary least squares of y[n] on x[n x d], z-scored columns (NAN cells
 * take the column mean, constant columns get weight 0), with ridge lambda
 * on the weights, into out's arrays. */
int psi_cl_ols(const double *x, const double *y, int n, int d, double lambda, const cl_ols_t *out);
double psi_cl_ols_eval(const double *x, int d, const double *mu, const double *sd, const double *beta);

/* Column means and population standard deviations of x[n*d], NAN cells
 * left out. */
void psi_cl_zscore(const double *x, int n, int d, double *mu, double *sd);

/* Model internals (fit.c; one base kind: model.c). */
int psi_cl_model_fit(const cl_data_t *d, const int *train, int n_train, const ps_coloc_params_t *p,
                     ps_coloc_model_t **out);
/* Predict co-location ci: out_slot[k] (NAN for sum kinds) and *out_sum. */
int psi_cl_model_predict(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum);
/* Each workload's predicted throughput in co-location ci into out_slot[k]:
 * its slot, or for a sum kind the predicted sum split in proportion to the
 * workloads' solo throughputs at their shares. */
int psi_cl_model_slots(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot);

/* The low-rank pairwise-interaction predictor (lowrank.c). */
typedef struct cl_lowrank cl_lowrank_t;
int psi_cl_lowrank_fit(const cl_data_t *d, const int *train, int n_train, uint64_t seed, cl_lowrank_t **out);
/* log(tput / solo) of slot s of co-location c. */
double psi_cl_lowrank_predict(const cl_lowrank_t *m, const cl_data_t *d, const cl_coloc_t *c, int s);
void psi_cl_lowrank_free(cl_lowrank_t *m);
int psi_cl_lowrank_save(const cl_lowrank_t *m, FILE *f);
int psi_cl_lowrank_load(FILE *f, cl_lowrank_t **out);

/* The sum of c's measured throughputs; whether c holds workload w
 * (score.c). */
double psi_cl_coloc_sum(const cl_coloc_t *c);
int psi_cl_coloc_holds(const cl_coloc_t *c, int w);

/* Policy scores (score.c): every target's score over the complete
 * co-locations flagged in is_cand (of k workloads when kk > 0), targets
 * NULL = all; pred[kind] NULL for kinds not run. Adds to acc[PS_POL_COUNT] and
 * returns the number of targets (-1: out of memory). */
int psi_cl_score_policies(const cl_data_t *d, const char *is_cand, const char *targets, int kk, double *const *pred,
                          double *acc);

/* The random split of eval (seed shuffles the co-locations with splitmix64,
 * the first round(frac x nc) train): fills train, returns their count. */
int psi_cl_random_split(const cl_data_t *d, double frac, uint64_t seed, int *train);

/* auto (auto.c): 4-fold cross-validation over the training co-locations
 * of the candidate kinds (bit mask). pick: the simplest within one standard
 * error of the best out-of-fold selection figure and of the lowest
 * out-of-fold sum MAPE (-1 when none could be fitted); w: the stacked
 * blend's weights over the kinds (blend.c), g its shrinkage. */
typedef struct {
    int pick;
    double w[PS_COLOC_KIND_COUNT];
    double g;
    double w_within[PS_COLOC_KIND_COUNT]; /* the within rule's weights */
    double g_within;
} cl_auto_choice_t;
unsigned psi_cl_auto_default_kinds(const cl_data_t *d); /* all but mlp, auto; xu when it has metrics */
int psi_cl_auto_choose(const cl_data_t *d, const int *train, int n_train, const ps_coloc_params_t *p, unsigned kinds,
                       cl_auto_choice_t *out);
/* The rows of a stacked blend: a[n x K], each kind's out-of-fold
 * prediction over the measured value, in folds fold[n] of 0..nfolds-1; for
 * the within rule also y[n], the measured sums, and grp[n x gm], the
 * (target, k) groups, 0..ng-1, that each row is a candidate of (-1: none);
 * grp NULL: the blend rule's loss alone. */
typedef struct {
    const double *a, *y;
    int n, K;
    const int *fold;
    int nfolds;
    const int *grp;
    int gm, ng;
} cl_stack_rows_t;
/* The stacked blend's weights w[K] from the rows r, with the loss of r (the
 * within-target part added when r->grp is set); *g gets the shrinkage
 * chosen (INFINITY: equal weights). */
int psi_cl_stack_weights(const cl_stack_rows_t *r, double *w, double *g);
/* auto's model from a choice: the blend (rule PS_COLOC_AUTO_BLEND) or the
 * picked kind, fitted on t (have as for psi_blend_fit; may be NULL). */
int psi_cl_auto_build(const cl_train_t *t, const ps_coloc_params_t *p, const cl_auto_choice_t *ch, int rule,
                      ps_coloc_model_t **have, ps_coloc_model_t **out);

/* Placement (place.c): val(ctx, type, jobs, k, shares_out) the value of a
 * group of jobs on a GPU of a type (-INFINITY when not allowed). */
typedef double (*cl_group_value_fn)(void *ctx, int type, const int *jobs, int k, int *shares);
/* Every job runs when the GPUs have room: a waiting job costs this much
 * (more than any group can be worth), unless waiting is allowed. */
#define PLACE_WAIT_PENALTY 1e6

/* The search's budget (NULL: none): time_limit_s (0: none), progress;
 * stopped is set when the limit ended the search. */
typedef struct {
    double time_limit_s;
    ps_progress_fn progress;
    void *user;
    int stopped;
} cl_place_budget_t;
/* A placement problem: jobs 0..n-1 (n <= 64) on the GPUs gtype[ng], each
 * GPU's type index (0..ntypes-1, ntypes <= 16), at most max_per_gpu jobs a
 * GPU; groups valued by val(ctx, ...); a job left waiting costs
 * wait_penalty (0: free). */
typedef struct {
    int n;
    const int *gtype;
    int ng, ntypes, max_per_gpu;
    double wait_penalty;
    cl_group_value_fn val;
    void *ctx;
} cl_place_problem_t;
/* A placement: the caller's assign[n] (each job's GPU, -1: waiting) and
 * share[n] (its share), objective the sum of the group values, exact 1
 * when the exact search found it. */
typedef struct {
    int *assign, *share;
    double objective;
    int exact;
} cl_placement_t;
/* The jobs on GPU g under assign[n], in job order, into jobs[]; returns
 * their count. */
int psi_cl_gpu_jobs(const int *assign, int n, int g, int *jobs);
/* The best placement of pb that the search finds within budget (NULL:
 * none) into out; seed orders the heuristic's restarts. */
int psi_cl_place_solve(const cl_place_problem_t *pb, uint64_t seed, cl_place_budget_t *budget, cl_placement_t *out);

#endif
