/* What several baselines read (baseline_internal.h): the per-class split of a
 * segment's standalone time, the MLP parameters and the tuning rows. */
#include "evaluate/baseline_internal.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cls_of(psi_intensity_t t)
{
    return t == PS_INTENSITY_COMPUTE ? CLS_COMPUTE : t == PS_INTENSITY_MEMORY ? CLS_MEMORY : CLS_OTHER;
}

/* Standalone time of one side's segment split by intensity class: out[c] is
 * the sum of d_i(tpcs) over its operators of class c. */
int psi_bl_segment_by_class(const ps_ops_t *ops, const ps_query_t *q, int side, double out[N_CLS])
{
    const char *model = side == PS_SIDE_HP ? q->hp_model : q->lp_model;
    int batch = side == PS_SIDE_HP ? q->hp_batch : q->lp_batch;
    int start = side == PS_SIDE_HP ? q->hp_start : q->lp_start;
    int len = side == PS_SIDE_HP ? q->hp_len : q->lp_len;
    int tpcs = side == PS_SIDE_HP ? q->hp_tpcs : q->lp_tpcs;
    const psi_op_group_t *g = psi_ops_find(ops, q->gpu, model, batch);
    char known[512];
    if (!g)
        return psi_error(PS_E_INPUT, "no standalone profile of %s batch %d on %s (ops has: %s)", model, batch, q->gpu,
                         psi_ops_groups_text(ops, q->gpu, known, sizeof known));
    int k = psi_group_tpcs_index(g, tpcs);
    if (k < 0)
        return psi_error(PS_E_INPUT, "%s batch %d has no standalone profile at %d TPCs (ops has it at %s TPCs)", model,
                         batch, tpcs, psi_group_tpcs_text(g, known, sizeof known));
    if (!segment_fits(start, len, g->n_ops))
        return psi_error(PS_E_INPUT, "%s batch %d: segment [%d, %lld) outside its %d operators", model, batch, start,
                         (long long)start + len, g->n_ops);
    out[0] = out[1] = out[2] = 0;
    for (int i = start; i < start + len; i++) {
        double d = g->duration_ns[(size_t)i * (size_t)g->n_tpcs + (size_t)k];
        if (isnan(d))
            return psi_error(PS_E_INPUT, "%s batch %d: operator %d not profiled at %d TPCs", model, batch, i, tpcs);
        out[cls_of(g->intensity[i])] += d;
    }
    return 0;
}

int psi_bl_dominant_class(const double t[N_CLS])
{
    int c = 0;
    for (int k = 1; k < N_CLS; k++)
        if (t[k] > t[c])
            c = k;
    return c;
}

void psi_bl_mlp_params(const ps_baseline_params_t *p, psi_mlp_params_t *mp)
{
    *mp = psi_mlp_default_params();
    mp->epochs = p->mlp_epochs;
    mp->max_seconds = p->mlp_seconds;
    mp->seed = p->seed;
}

/* The rows of ROLE_TUNE (0: the learner holds out rows of its own). */
size_t psi_bl_n_tune_rows(const psi_dataset_t *d, const unsigned char *role)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += role[i] == ROLE_TUNE;
    return n;
}

/* Gather the rows of one side's features of the used samples into *r: the
 * fitting rows, then the tuning rows. */
static int gather_side(const psi_dataset_t *d, const unsigned char *use, int side, psi_bl_rows_t *r)
{
    int f = d->layout.n_features;
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += use[i] != 0;
    *r = (psi_bl_rows_t){.side = side, .f = f};
    r->x = psi_malloc(n * (size_t)f * sizeof *r->x);
    r->y = psi_malloc(n * sizeof *r->y);
    if (!r->x || !r->y) {
        free(r->x);
        free(r->y);
        r->x = NULL;
        r->y = NULL;
        return PS_E_NOMEM;
    }
    const float *src = side == PS_SIDE_HP ? d->x_hp : d->x_lp;
    const double *ys = side == PS_SIDE_HP ? d->y_hp : d->y_lp;
    size_t k = 0;
    for (int role = ROLE_FIT; role <= ROLE_TUNE; role++)
        for (size_t i = 0; i < d->n; i++) {
            if (use[i] != role)
                continue;
            memcpy(r->x + k * (size_t)f, src + i * (size_t)f, (size_t)f * sizeof *r->x);
            r->y[k++] = ys[i];
        }
    r->n = n;
    r->n_tune = psi_bl_n_tune_rows(d, use);
    return 0;
}

int psi_bl_fit_sides(ps_baseline_t *b, const psi_dataset_t *d, const unsigned char *use, const ps_baseline_params_t *p,
                     psi_bl_side_fit_fn fit)
{
    for (int s = 0; s < 2; s++) {
        psi_bl_rows_t r;
        int rc = gather_side(d, use, s, &r);
        if (rc != 0)
            return rc;
        rc = fit(b, &r, p);
        free(r.x);
        free(r.y);
        if (rc != 0)
            return rc;
    }
    return 0;
}
