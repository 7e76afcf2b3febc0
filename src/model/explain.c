/*
 * Explaining one prediction: XGBoost's SHAP contributions (exact TreeSHAP,
 * in log delta) of every input column, folded back to the operators they
 * describe. A token's columns (duration, counters, presence) sum into one
 * item for that operator, so the HP regressor's items answer "which
 * co-runner operator costs the HP side most". Empty slots sum into one item
 * per side; p, q and the standalone latencies stay items of their own.
 */
#include "model/model.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const global_names[] = {"p_tpcs", "q_tpcs", "hp_solo_ns", "lp_solo_ns"};

void ps_explanation_free(ps_explanation_t *e)
{
    if (!e)
        return;
    free(e->items);
    free(e);
}

static int cmp_abs(const void *a, const void *b)
{
    double x = fabs(((const ps_contribution_t *)a)->contribution);
    double y = fabs(((const ps_contribution_t *)b)->contribution);
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Items of one regressor: [W] HP operators, [W] LP operators, one summed or
 * empty-slot item per owner, then the globals. Returns the count kept. */
static size_t fold_side(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, int side,
                        const double *phi, ps_contribution_t *items)
{
    const psi_feature_layout_t *l = &m->layout;
    int W = l->window, n_glob = (int)(sizeof global_names / sizeof global_names[0]);
    int n_items = 2 * W + 2 + n_glob;
    const psi_op_group_t *g[2] = {psi_ops_find(ops, q->gpu, q->hp_model, q->hp_batch),
                                  psi_ops_find(ops, q->gpu, q->lp_model, q->lp_batch)};
    int start[2] = {q->hp_start, q->lp_start}, len[2] = {q->hp_len, q->lp_len};
    static const char *const rest_names[2][2] = {{"hp (empty slots)", "lp (empty slots)"},
                                                 {"hp (segment, summed)", "lp (segment, summed)"}};
    int summed = l->variant == PS_FEAT_SUMMED;
    for (int k = 0; k < n_items; k++) {
        ps_contribution_t *c = &items[k];
        c->side = side;
        c->contribution = 0;
        c->op = -1;
        if (k < 2 * W) {
            int owner = k / W, slot = k % W;
            c->owner = owner;
            c->op = start[owner] + slot;
            c->name = slot < len[owner] && g[owner] ? g[owner]->names[c->op] : NULL;
        } else if (k < 2 * W + 2) {
            c->owner = k - 2 * W;
            c->name = rest_names[summed][c->owner];
        } else {
            c->owner = -1;
            c->name = global_names[k - 2 * W - 2];
        }
    }
    int n_tok_glob = l->n_features - n_glob;
    for (int i = 0; i < l->n_features; i++) {
        int slot, owner = psi_feature_owner(l, side, i, &slot);
        int k;
        if (owner < 0)
            k = 2 * W + 2 + (i - n_tok_glob);
        else if (slot < 0 || slot >= len[owner])
            k = 2 * W + owner;
        else
            k = owner * W + slot;
        items[k].contribution += phi[i];
    }
    /* Keep operators in the segments and any other item that has a say. */
    size_t kept = 0;
    for (int k = 0; k < n_items; k++) {
        int is_op = k < 2 * W;
        if (is_op && (k % W) >= len[k / W])
            continue;
        if (!is_op && items[k].contribution == 0)
            continue;
        if (!items[k].name)
            items[k].name = "?";
        items[kept++] = items[k];
    }
    qsort(items, kept, sizeof *items, cmp_abs);
    return kept;
}

int ps_model_explain(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, ps_explanation_t **out)
{
    *out = NULL;
    if (!m || !ops || !q)
        return psi_error(PS_E_ARG, "ps_model_explain: NULL argument");
    const psi_feature_layout_t *l = &m->layout;
    if (q->hp_len > l->window || q->lp_len > l->window)
        return psi_error(PS_E_ARG,
                         "explain takes segments of at most %d operators (hp_len %d, lp_len %d); explain "
                         "one window at a time",
                         l->window, q->hp_len, q->lp_len);
    double hp_ns, lp_ns, hs, ls;
    int rc = ps_model_predict_compose(m, ops, q, 1, PS_COMPOSE_INDEX, &hp_ns, &lp_ns, &hs, &ls);
    if (rc != PS_OK)
        return rc;
    size_t nf = (size_t)l->n_features;
    float *x = psi_malloc(2 * nf * sizeof *x);
    double *phi = psi_malloc(2 * (nf + 1) * sizeof *phi);
    size_t cap = 2 * (2 * (size_t)l->window + 2 + 4);
    ps_explanation_t *e = psi_calloc(1, sizeof *e);
    ps_contribution_t *items = psi_calloc(cap, sizeof *items);
    if (!x || !phi || !e || !items) {
        rc = PS_E_NOMEM;
        goto fail;
    }
    if ((rc = psi_features_build_pair(l, ops, q, x, x + nf, NULL)) != PS_OK)
        goto fail;
    size_t n = 0;
    for (int side = 0; side < 2; side++) {
        if ((rc = psi_model_predict_xgb(m, side, x + side * nf, 1, 2, phi + side * (nf + 1))) != PS_OK)
            goto fail;
        e->bias[side] = phi[side * (nf + 1) + nf];
        n += fold_side(m, ops, q, side, phi + side * (nf + 1), items + n);
    }
    e->hp_ns = hp_ns;
    e->lp_ns = lp_ns;
    e->hp_solo_ns = hs;
    e->lp_solo_ns = ls;
    e->n = n;
    e->items = items;
    free(x);
    free(phi);
    *out = e;
    return PS_OK;
fail:
    free(x);
    free(phi);
    free(items);
    free(e);
    return rc;
}
