/*
 * Internals of the baselines (ps_baseline_*): the trained handle and the
 * calls between their files. baselines.c trains and predicts through one
 * file per baseline:
 *   baseline_rules.c   intensity_rule, intensity_rule_fit, fixed_cost (one
 *                      linear form of the per-class standalone times)
 *   baseline_comp.c    complementarity
 *   baseline_abacus.c  abacus_mlp
 *   baseline_linear.c  linear
 *   baseline_mlp.c     pairsight_mlp
 * and baseline_common.c holds what several of them read.
 */
#ifndef PS_EVALUATE_BASELINE_INTERNAL_H
#define PS_EVALUATE_BASELINE_INTERNAL_H

#include "evaluate/evaluate.h"
#include "model/mlp.h"
#include "model/scale.h"

enum { CLS_COMPUTE = 0, CLS_MEMORY = 1, CLS_OTHER = 2, N_CLS = 3 };
/* Columns of the linear rules: the standalone time per class, then (for
 * fixed_cost) a constant and the operator count, both in microseconds so that
 * the normal equations stay well scaled. */
enum { COL_FIXED = N_CLS, COL_PER_OP = N_CLS + 1, N_COLS = N_CLS + 2 };
#define RULE_UNIT_NS 1000.0
/* Single-operator samples a class needs before its characterized factor is
 * their median (else: the segments that class dominates). */
#define CHAR_MIN_SAMPLES 5
/* The role of a row in training (tuning_roles). */
enum { ROLE_FIT = 1, ROLE_TUNE = 2 };

typedef struct {
    int hp_cls, lp_cls, hp_tpcs, lp_tpcs;
    double delta[2]; /* median delta of each side */
} comp_cell_t;

typedef struct {
    psi_scaler_t scale;
    double *w; /* [scale.n] */
    double b;
    double lambda;
} ridge_t;

struct ps_baseline {
    ps_method_t method;
    double train_seconds;
    double factor[2][N_COLS]; /* the linear rules (intensity, fixed cost) */
    comp_cell_t *cells;       /* complementarity */
    size_t n_cells;
    double global_delta[2];
    char **models; /* abacus vocabulary */
    int n_models;
    psi_mlp_t *mlp[2]; /* abacus: mlp[0] with two outputs; pairsight_mlp: one per side */
    ridge_t ridge[2];
    psi_feature_layout_t layout;
};

/* ---- baseline_common.c ---- */

/* Standalone time of one side's segment split by intensity class: out[c] is
 * the sum of d_i(tpcs) over its operators of class c. */
int psi_bl_segment_by_class(const ps_ops_t *ops, const ps_query_t *q, int side, double out[N_CLS]);
/* The class holding most of t. */
int psi_bl_dominant_class(const double t[N_CLS]);
/* The MLP parameters of the baseline parameters p. */
void psi_bl_mlp_params(const ps_baseline_params_t *p, psi_mlp_params_t *mp);
/* The rows of ROLE_TUNE (0: the learner holds out rows of its own). */
size_t psi_bl_n_tune_rows(const psi_dataset_t *d, const unsigned char *role);
/* One side's training rows (PS_SIDE_HP or PS_SIDE_LP): its PairSight input
 * rows x[n * f] and targets y[n] (log delta, which a fit may change in
 * place); the last n_tune rows tune. */
typedef struct {
    int side;
    float *x;
    double *y;
    size_t n, n_tune;
    int f;
} psi_bl_rows_t;
/* Fit one side of linear or pairsight_mlp on its rows. */
typedef int (*psi_bl_side_fit_fn)(ps_baseline_t *b, const psi_bl_rows_t *r, const ps_baseline_params_t *p);
/* fit on each side's rows of the used samples: the fitting rows, then the
 * tuning rows. */
int psi_bl_fit_sides(ps_baseline_t *b, const psi_dataset_t *d, const unsigned char *use, const ps_baseline_params_t *p,
                     psi_bl_side_fit_fn fit);

/* Queries to predict and what is known of them beforehand: the n queries q,
 * their standalone latencies hs[n], ls[n] (ns) and their PairSight input
 * rows x_hp, x_lp [n * n_features]. Where the caller does not have them
 * (NULL), baselines.c computes them before a baseline reads them. */
typedef struct {
    const ps_query_t *q;
    size_t n;
    const double *hs, *ls;
    const float *x_hp, *x_lp;
} psi_bl_queries_t;

/* ---- one file per baseline: fit on the rows of role ROLE_FIT (and
 * ROLE_TUNE), predict queries (standalone latencies known) into hp, lp ---- */

int psi_bl_fit_rule(ps_baseline_t *b, const ps_ops_t *ops, const psi_dataset_t *d, const unsigned char *use,
                    int n_cols);
int psi_bl_fit_characterized(ps_baseline_t *b, const ps_ops_t *ops, const psi_dataset_t *d, const unsigned char *use);
int psi_bl_predict_rules(const ps_baseline_t *b, const ps_ops_t *ops, const ps_query_t *q, size_t n, double *hp,
                         double *lp);

int psi_bl_fit_complementarity(ps_baseline_t *b, const ps_ops_t *ops, const psi_dataset_t *d, const unsigned char *use);
int psi_bl_predict_complementarity(const ps_baseline_t *b, const ps_ops_t *ops, const psi_bl_queries_t *in, double *hp,
                                   double *lp);

int psi_bl_fit_abacus(ps_baseline_t *b, const psi_dataset_t *d, const unsigned char *use,
                      const ps_baseline_params_t *p);
int psi_bl_predict_abacus(const ps_baseline_t *b, const psi_bl_queries_t *in, double *hp, double *lp);

/* linear and pairsight_mlp: log delta of one side from its PairSight input
 * rows x[n * n_features] into out[n]. */
int psi_bl_fit_linear(ps_baseline_t *b, const psi_dataset_t *d, const unsigned char *use,
                      const ps_baseline_params_t *p);
int psi_bl_predict_linear(const ps_baseline_t *b, int side, const float *x, size_t n, double *out);
int psi_bl_fit_pairsight_mlp(ps_baseline_t *b, const psi_dataset_t *d, const unsigned char *use,
                             const ps_baseline_params_t *p);

#endif
