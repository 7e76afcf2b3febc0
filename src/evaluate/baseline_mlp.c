/* The pairsight_mlp baseline: the PairSight input into a three-layer
 * perceptron (evaluate/mlp.c), one per side, early stopping on the tuning
 * rows. */
#include "evaluate/baseline_internal.h"

#include "common/common.h"

#include <stdlib.h>

static int fit_side(ps_baseline_t *b, const psi_bl_rows_t *r, const ps_baseline_params_t *p)
{
    psi_mlp_params_t mp;
    psi_bl_mlp_params(p, &mp);
    mp.seed = p->seed + (uint64_t)r->side;
    mp.valid_tail = r->n_tune;
    return psi_mlp_train(&(psi_mlp_rows_t){r->x, r->y, r->n, r->f, 1}, &mp, &b->mlp[r->side]);
}

int psi_bl_fit_pairsight_mlp(ps_baseline_t *b, const psi_dataset_t *d, const unsigned char *use,
                             const ps_baseline_params_t *p)
{
    return psi_bl_fit_sides(b, d, use, p, fit_side);
}
