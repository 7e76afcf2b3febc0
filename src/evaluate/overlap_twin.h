/*
 * The twin against overlap.csv (Abacus's real A100 co-runs; docs/simulator.md,
 * "The twin against Abacus's A100"): every experiment's k processes are
 * simulated under MPS on all SMs of the A100 twin (src/simulate/mps.h), each
 * running the kernels of its range of operator groups, taken from captured
 * operator lists (tools/abacus_oplists.py) whose names are module paths.
 *
 *     psi_ovt_t *tw;
 *     psi_ovt_load("oplists/", "a100", &tw);
 *     sim_mps_params_t p = psi_sim_mps_default();
 *     double us;
 *     psi_ovt_predict(tw, &table->exps[0], &p, &us, NULL, NULL);
 *     psi_ovt_free(tw);
 */
#ifndef PS_EVALUATE_OVERLAP_TWIN_H
#define PS_EVALUATE_OVERLAP_TWIN_H

#include "profile/overlap.h"
#include "simulate/mps.h"

typedef struct ps_ovt psi_ovt_t; /* the public ps_ovt_t */

/* Read every operator list of dir (`# pairsight oplist 1`, model, batch and
 * seq_len in its header; lists of models Abacus did not run are ignored) and
 * build its kernels on gpu (a catalog name or alias). An error names the
 * file; a list whose groups are out of order is refused. */
int psi_ovt_load(const char *dir, const char *gpu, psi_ovt_t **out);
void psi_ovt_free(psi_ovt_t *tw);

/* Lists read, and operators that fell in no group (counted in the group
 * before them). */
int psi_ovt_lists(const psi_ovt_t *tw, long *unmatched);

/* The twin's makespan of e in microseconds under p; with max_solo and
 * sum_solo (either may be NULL) the largest and the sum of its active
 * slots' times alone. *us is NAN when a slot's list is missing. */
int psi_ovt_predict(psi_ovt_t *tw, const psi_ov_exp_t *e, const sim_mps_params_t *p, double *us, double *max_solo,
                    double *sum_solo);

/* ---- scoring and calibration ---- */

/* The setting, sampling and calibration (include/pairsight_overlap.h;
 * fit_flops: the kernels' device speed, not launch or sharing). */
typedef ps_ovt_params_t psi_ovt_params_t;

psi_ovt_params_t psi_ovt_default_params(void);

/* One line of a score: every experiment of a k, or of one file (a pair or a
 * triple, "resnet50_vgg16"). */
typedef ps_ovt_line_t psi_ovt_line_t; /* include/pairsight_overlap.h */
typedef ps_ovt_score_t psi_ovt_score_t;

void psi_ovt_score_free(psi_ovt_score_t *s);

/* Score the twin on t's experiments of p->setting (every p->every-th of each
 * file) with the parameters mps. */
int psi_ovt_score(psi_ovt_t *tw, const psi_overlap_t *t, const psi_ovt_params_t *p, const sim_mps_params_t *mps,
                  psi_ovt_score_t *out);

/* Fit launch_ns and sm_pack on a grid and start_ns exactly (weighted median)
 * on the 2-way experiments of p->setting (every p->fit_every-th), from p->mps;
 * writes the fitted parameters and their 2-way MAPE. */
int psi_ovt_calibrate(psi_ovt_t *tw, const psi_overlap_t *t, const psi_ovt_params_t *p, sim_mps_params_t *out,
                      double *mape);

#endif
