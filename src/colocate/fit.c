/*
 * The co-location predictors as users meet them (colocate.h): checking the
 * parameters, auto (cross-validated choice, then the pick or the blend of
 * the candidate kinds), prediction through a blend, and the public
 * train/predict calls. One predictor of a base kind is model.c.
 */
#include "colocate/colocate.h"

#include "common/common.h"
#include "colocate/model_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The picked kind's model: have[kind] when given, else fitted on t. */
static int build_pick(const cl_train_t *t, const ps_coloc_params_t *p, int k, ps_coloc_model_t **have,
                      ps_coloc_model_t **out)
{
    if (k < 0)
        return psi_error(PS_E_INPUT, "colocate: auto: no candidate predictor could be fitted");
    if (have && have[k]) {
        *out = have[k];
        have[k] = NULL;
    } else {
        ps_coloc_params_t q = *p;
        q.kind = (ps_coloc_kind_t)k;
        int rc = psi_cl_model_fit(t->d, t->idx, t->n, &q, out);
        if (rc)
            return rc;
    }
    (*out)->autosel = 1;
    return 0;
}

int psi_cl_auto_build(const cl_train_t *t, const ps_coloc_params_t *p, const cl_auto_choice_t *ch, int rule,
                      ps_coloc_model_t **have, ps_coloc_model_t **out)
{
    *out = NULL;
    if (rule == PS_COLOC_AUTO_PICK)
        return build_pick(t, p, ch->pick, have, out);
    ps_coloc_model_t *m = psi_calloc(1, sizeof *m);
    if (!m)
        return PS_E_NOMEM;
    m->kind = PS_COLOC_AUTO;
    m->p = *p;
    m->p.kind = PS_COLOC_AUTO;
    m->autosel = 1;
    m->ks = psi_cl_train_ks(t->d, t->idx, t->n);
    int rc = (m->gpu = psi_cl_train_gpus(t->d, t->idx, t->n)) ? 0 : PS_E_NOMEM;
    if (!rc)
        rc = psi_blend_fit(m, t, p, rule == PS_COLOC_AUTO_WITHIN ? ch->w_within : ch->w, have);
    if (rc) {
        ps_coloc_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

/* auto: cross-validation on train, then the blend or the pick (p->auto_rule)
 * fitted on all of train. */
static int fit_auto(const cl_data_t *d, const int *train, int n_train, const ps_coloc_params_t *p,
                    ps_coloc_model_t **out)
{
    cl_auto_choice_t ch;
    int rc = psi_cl_auto_choose(d, train, n_train, p, psi_cl_auto_default_kinds(d), &ch);
    return rc ? rc : psi_cl_auto_build(&(cl_train_t){d, train, n_train}, p, &ch, p->auto_rule, NULL, out);
}

int psi_cl_model_fit(const cl_data_t *d, const int *train, int n_train, const ps_coloc_params_t *p,
                     ps_coloc_model_t **out)
{
    *out = NULL;
    /* Sizes bounded so that a typo is a message, not hours or gigabytes. */
    if (p->trees < 0 || p->trees > 10000 || p->mlp_epochs < 0 || p->mlp_epochs > 100000 || p->boost_rounds < 0 ||
        p->boost_rounds > 100000 || (unsigned)p->auto_rule >= PS_COLOC_AUTO_RULES)
        return psi_error(PS_E_ARG,
                         "colocate: trees %d, epochs %d, rounds %d, auto rule %d: need trees <= 10000, "
                         "epochs and rounds <= 100000, a known rule",
                         p->trees, p->mlp_epochs, p->boost_rounds, p->auto_rule);
    if (p->kind == PS_COLOC_AUTO)
        return fit_auto(d, train, n_train, p, out);
    return psi_cl_model_fit_base(d, train, n_train, p, out);
}

/* ---- prediction ---- */

int psi_cl_model_predict(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum)
{
    if (m->n_blend) {
        *out_sum = 0;
        return psi_blend_predict(m, d, ci, out_slot, out_sum);
    }
    return psi_cl_model_predict_base(m, d, ci, out_slot, out_sum);
}

int psi_cl_model_slots(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot)
{
    double sum = 0;
    if (m->n_blend)
        return psi_blend_predict(m, d, ci, out_slot, &sum);
    return psi_cl_model_slots_base(m, d, ci, out_slot);
}

/* ---- public calls ---- */

int ps_coloc_train(const ps_workloads_t *w, const ps_scaling_t *scaling, const ps_colocations_t *c,
                   const ps_coloc_params_t *p, ps_coloc_model_t **out)
{
    *out = NULL;
    cl_data_t *d = NULL;
    int rc = psi_cl_data_build(w, scaling, c, NULL, &d);
    if (rc)
        return rc;
    int *idx = psi_malloc((size_t)d->nc * sizeof *idx + 1);
    if (!idx) {
        psi_cl_data_free(d);
        return PS_E_NOMEM;
    }
    for (int i = 0; i < d->nc; i++)
        idx[i] = i;
    ps_coloc_params_t def = ps_coloc_default_params();
    rc = psi_cl_model_fit(d, idx, d->nc, p ? p : &def, out);
    free(idx);
    psi_cl_data_free(d);
    return rc;
}

int ps_coloc_predict(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                     const ps_colocations_t *q, double *out_tput)
{
    cl_data_t *d = NULL;
    int rc = psi_cl_data_build(w, scaling, q, NULL, &d);
    if (rc)
        return rc;
    double slot[64];
    for (size_t i = 0; i < q->n && !rc; i++) {
        /* Find the row's co-location and slot (ids are unique per table). */
        const psi_colocation_row_t *r = &q->rows[i];
        int ci = -1;
        for (int j = 0; j < d->nc && ci < 0; j++)
            if (strcmp(d->c[j].id, r->colocation) == 0)
                ci = j;
        int s = 0;
        while (s < d->c[ci].k && d->c[ci].slot[s] != r->slot)
            s++;
        double sum = 0;
        rc = psi_cl_model_predict(m, d, ci, slot, &sum);
        out_tput[i] = ps_coloc_kind_predicts_sum(m->kind) ? sum : slot[s];
    }
    psi_cl_data_free(d);
    return rc;
}
