/*
 * The four experiments of the paper's evaluation (Section IV) on one
 * profiling campaign, the tables they print, their JSON and the HTML report:
 *
 *  1. accuracy and cost (Table I)     PairSight and every baseline on the
 *                                     test split
 *  2. ablation (Fig. 4)               PairSight retrained on each input variant
 *  3. generalization (Table II)       train on the classic models at default
 *                                     batch sizes, test on Llama and batch 16
 *                                     and 64, then continued training on k new
 *                                     experiments per held-out group
 *  4. long segments                   segments beyond the window under SM
 *                                     splits absent from training: index
 *                                     against time-aligned composition against
 *                                     the intensity rule
 */
#ifndef PS_EVALUATE_EXPERIMENTS_H
#define PS_EVALUATE_EXPERIMENTS_H

#include "model/calib.h"
#include "evaluate/evaluate.h"

#include <stdio.h>

/* Parse "accuracy,ablation,generalization,long" or "all" into a mask. */
int psi_experiments_parse(const char *list, int *mask);

/* The public ps_eval_params_t (pairsight_eval.h) under its internal name. */
typedef ps_eval_params_t psi_eval_config_t;

psi_eval_config_t psi_eval_default_params(void);

/* One row of a result table. NAN where not measured. */
typedef struct {
    char name[40];
    size_t n, n_llama;
    double hp_mape, lp_mape, hp_within10, llama_hp_mape;
    double train_seconds, query_us; /* query: per candidate, batches of 1k */
} psi_eval_row_t;

#define PS_GEN_GROUPS 3 /* llama, batch16, batch64 */
#define PS_GEN_ROWS (PS_METHOD_COUNT + 3)
#define PS_ABL_ROWS 5
#define PS_LONG_ROWS 3
#define PS_COV_SETS 3   /* test, long, unseen */
#define PS_COV_LEVELS 3 /* 0.90, 0.95, 0.99 */

typedef struct {
    int done; /* PS_EXP_* mask of the experiments that ran */
    /* 1. Table I, one row per method, and the test predictions per method
     *    (NULL where the method failed) for the report's figures. */
    psi_eval_row_t table1[PS_METHOD_COUNT];
    size_t n_test;
    double *meas_hp, *meas_lp;
    double *pred_hp[PS_METHOD_COUNT], *pred_lp[PS_METHOD_COUNT];
    ps_query_t *test_q; /* the test rows' keys (strings borrowed from the campaign) */
    /* 2. Fig. 4: full, no co-runner, summed, durations only, utilization. */
    psi_eval_row_t ablation[PS_ABL_ROWS];
    /* 3. Table II: rows are the methods then PairSight after k = ks[0..2];
     *    columns the held-out groups. */
    psi_eval_row_t gen[PS_GEN_ROWS][PS_GEN_GROUPS];
    int ks[3];
    /* 4. long segments: index, overlap, intensity rule; all and asymmetric. */
    psi_eval_row_t long_all[PS_LONG_ROWS], long_asym[PS_LONG_ROWS];
    /* Calibrated bounds (docs/planner.md): coverage and width at 0.9, 0.95,
     * 0.99 on the test split, the long segments and the unseen (Llama)
     * models of the generalization experiment; n 0 where not measured. */
    bound_cov_t cov[PS_COV_SETS][PS_COV_LEVELS];
    /* What the pairsight row was trained on. */
    size_t n_train;
    double model_train_seconds;
} psi_eval_results_t;

/* Run the selected experiments. A baseline that fails to train leaves its
 * row NAN with a warning through psi_log; a failure of PairSight or of the
 * inputs fails the call. *r is the caller's; release with psi_eval_results_clear. */
int psi_eval_run(const psi_eval_config_t *c, psi_eval_results_t *r);
void psi_eval_results_clear(psi_eval_results_t *r);

/* The tables as text, the paper's layout (report.c). */
void psi_eval_print(const psi_eval_results_t *r, FILE *f);
/* The results as JSON: {"methods": {...}, "ablation": {...}, ...}. Returns a
 * malloc'd string. */
char *psi_eval_json(const psi_eval_results_t *r);

/* Where a report's data came from, named in its header and under every
 * figure: read from campaign.json beside coexec.csv (written by simulate),
 * else the GPU of the rows and an unknown source. */
typedef struct {
    char gpu[64];
    char source[160];         /* "the twin (simulated, no GPU measured)", ... */
    char brief[200];          /* "A100-SXM4-40GB, twin, seed 1, 15000 co-executions" */
    char seed[32];            /* "1", or "unknown" */
    const char *latency_word; /* "simulated" or "measured" */
} psi_report_meta_t;

/* m from coexec_path's campaign.json and the rows of cx. */
void psi_report_meta_read(const char *coexec_path, const ps_coexec_t *cx, psi_report_meta_t *m);

/* The self-contained HTML report (inline SVG) of r and the campaign, written
 * atomically to path. m NULL: what cx's rows tell. */
int psi_report_write(const psi_eval_results_t *r, const ps_ops_t *ops, const ps_coexec_t *cx,
                     const psi_report_meta_t *m, const char *path);

#endif
