/*
 * The calibration of upper bounds (docs/planner.md, "Bounds"): conformal
 * quantiles that training fits on the calibration split and stores in the
 * model file; prediction reads them to give upper bounds, and the decision
 * stage only reads them through the model.
 */
#ifndef PS_MODEL_CALIB_H
#define PS_MODEL_CALIB_H

#include "features/features.h"
#include "pairsight.h"
#include "profile/tables.h"

#include <cjson/cJSON.h>

/* Coverage levels at which quantiles are stored: 0.50, 0.51, ..., 0.99, then
 * 0.995 and 0.999. A coverage between two levels uses the higher one. */
#define CALIB_NLEVELS 52

/* Mondrian bins: HP share of the SM split (three ranges) x memory-bound share
 * of the HP segment's standalone time (two ranges). */
#define CALIB_NSPLIT 3
#define CALIB_NMEM 2

/* One bin: n residuals of log delta per side; q[side][level] the
 * conformal quantile (+INFINITY where n is too small for the level). */
typedef struct {
    int n;
    double q[2][CALIB_NLEVELS];
} calib_bin_t;

/* The calibration of a model: cells, SM-split rows or the pooled bin, the
 * finest partition whose bins all hold at least min_bin samples (bounds.c). */
typedef struct psi_calib {
    int min_bin;
    size_t n_rows, n_experiments;
    calib_bin_t all, split[CALIB_NSPLIT], cell[CALIB_NSPLIT][CALIB_NMEM];
    /* Composed segments (more than one window on a side): quantiles of
     * log(measured / window-composed bound at the level) on a campaign of
     * long segments (ps_model_calibrate_composed); n = 0: none. */
    calib_bin_t composed;
    int composed_window;
} psi_calib_t;

/* The stored level of index i (0.50 .. 0.999), the index of the lowest
 * stored level >= c (-1 outside), and the bin key of a window query (SM
 * split range s, memory-bound HP segment mb) (calib.c). */
double psi_calib_level_at(int i);
int psi_calib_level_index(double c);
int psi_calib_bin_key(const ps_ops_t *ops, const ps_query_t *q, int *s, int *mb);

/* Training hook (src/model/train.c): psi_calib_fit
 * computes the quantiles of the finished model on those rows into *out
 * (NULL when there are none). */
int psi_calib_fit(const ps_model_t *m, const ps_ops_t *ops, const psi_dataset_t *d, psi_calib_t **out);

/* The calibration in the model's JSON header, and back (NULL when absent;
 * a malformed section is an error). */
cJSON *psi_calib_to_json(const psi_calib_t *c);
int psi_calib_from_json(ps_json_doc_t *d, int o, psi_calib_t **out);

/* The bin key of one window query and the upper offsets (log delta) of each
 * side at coverage. Fails when no bin has enough samples for coverage. */
int psi_calib_offsets(const psi_calib_t *c, const ps_ops_t *ops, const ps_query_t *w, double coverage, double *off_hp,
                      double *off_lp);

/* The composed-segment offsets (log) of each side at coverage; 0 when the
 * calibration has none for that level (the window-composed bound stands). */
int psi_calib_composed(const psi_calib_t *c, double coverage, double *off_hp, double *off_lp);

/* Empirical coverage (% of measurements at or under the bound) and mean
 * bound width (% above the point prediction) of each side at level on n
 * queries; NAN when the model has no calibration. */
typedef struct {
    size_t n;
    double level, hp_cover, lp_cover, hp_width, lp_width;
} bound_cov_t;
/* Queries with their measured latencies (ns), borrowed: q[n], hp_ns[n],
 * lp_ns[n]. */
typedef struct {
    const ps_query_t *q;
    const double *hp_ns, *lp_ns;
    size_t n;
} psi_measured_t;
int psi_bound_coverage(const ps_model_t *m, const ps_ops_t *ops, const psi_measured_t *set, double level,
                       bound_cov_t *out);

/* The model's calibration or NULL (src/model/model.c). */
const psi_calib_t *psi_model_calib(const ps_model_t *m);

#endif
