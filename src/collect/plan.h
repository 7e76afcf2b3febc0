/* Campaign planning: which TPC counts a device can give a side, and which
 * segment pairs and SM splits a co-execution campaign measures. Pure
 * functions of their inputs, so that a resumed campaign plans the same. */
#ifndef PS_COLLECT_PLAN_H
#define PS_COLLECT_PLAN_H

#include "pairsight.h"

typedef struct {
    char name[160]; /* the experiment column */
    int hp_start, hp_len, lp_start, lp_len;
    int hp_tpcs, lp_tpcs;
} psi_experiment_t;

/* Check that every one of tpcs[0..n) is a valid count for dev (see
 * ps_collect_valid_tpcs); the message names the first that is not. */
int psi_plan_check_tpcs(const ps_collect_device_t *dev, const int *tpcs, int n);

/* Each of tpcs[0..n) that the driver grants as another count (granted_sms
 * of dev: fewer SMs, or more where it rounds up) replaced, with a warning,
 * by the TPCs it grants, so that rows name the SMs a green context
 * actually got; then psi_plan_check_tpcs. */
int psi_plan_grant_tpcs(const ps_collect_device_t *dev, int *tpcs, int n);

/* The SM splits of a TPC list: for each count h of the list, the HP side
 * gets h and the LP side the largest count l of the list with h + l <= the
 * device's TPCs; counts with no such l are left out. Writes up to cap pairs
 * and returns how many there are. */
int psi_plan_splits(const ps_collect_device_t *dev, const int *tpcs, int n, int *hp, int *lp, int cap);

/* The experiments of plan for models of n_hp and n_lp operators. *out is
 * owned by the caller (free). */
int psi_plan_coexec(const ps_coexec_plan_t *plan, const ps_collect_device_t *dev, int n_hp, int n_lp,
                    psi_experiment_t **out, int *n_out);

#endif
