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

typedef struct psi_ovt psi_ovt_t;

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

typedef struct {
    const char *setting;  /* experiments of this setting ("dedicated") */
    int every;            /* score every Nth experiment of each file (1: all) */
    int fit_every;        /* calibrate on every Nth 2-way experiment of each file */
    int calibrate;        /* fit launch_ns, sm_pack, stagger_ns and start_ns on the 2-way experiments, then score */
    int fit_flops;        /* calibrate flop_scale too (the kernels' device speed, not launch or sharing) */
    sim_mps_params_t mps; /* the twin's parameters before calibration */
} psi_ovt_params_t;

psi_ovt_params_t psi_ovt_default_params(void);

/* One line of a score: every experiment of a k, or of one file (a pair or a
 * triple, "resnet50_vgg16"). */
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
} psi_ovt_line_t;

typedef struct {
    psi_ovt_line_t *line; /* by k first (k ascending), then by file */
    int n, n_k;
    sim_mps_params_t mps; /* the parameters scored */
} psi_ovt_score_t;

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
