/*
 * The baselines of the paper's Section IV-A, each trained on measured
 * co-executions and predicting the latency of both sides of a query:
 *
 *  intensity_rule   T_share = sum_i f[side][class(i)] * d_i(p): every
 *                   operator's standalone latency d_i at its TPCs scaled by
 *                   one fixed factor per side and intensity class (Orion,
 *                   Usher), as the paper defines it: the factors come from
 *                   single-operator characterization (Fig. 1c), the median
 *                   slowdown of the training co-executions whose segment on
 *                   that side is one operator of that class.
 *  intensity_rule_fit  the same form with the factors fitted by least
 *                   squares on the relative error of whole segments.
 *  fixed_cost       the fitted rule plus what co-execution costs whatever
 *                   the operators (dispatch, synchronization): T_share =
 *                   sum_c f_c t_c + a + b * len, per side, least squares on
 *                   the relative error.
 *  complementarity  T_share = T_solo * median delta of the training samples
 *                   with the same (HP class, LP class, hp_tpcs, lp_tpcs); the
 *                   class of a segment is the one holding most of its
 *                   standalone time.
 *  abacus_mlp       model identity (one-hot), batch size, segment positions,
 *                   the SM split and the standalone latencies into an MLP
 *                   that predicts log delta of both sides (Abacus).
 *  linear           ridge regression of log delta on the PairSight input,
 *                   one per side, solved in closed form.
 *  pairsight_mlp    the PairSight input into a three-layer perceptron, one
 *                   per side.
 */
#include "evaluate/baseline_internal.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const method_names[PS_METHOD_COUNT] = {"pairsight",          "intensity_rule", "complementarity",
                                                          "abacus_mlp",         "linear",         "pairsight_mlp",
                                                          "intensity_rule_fit", "fixed_cost"};

const char *ps_method_name(ps_method_t m) { return (int)m >= 0 && m < PS_METHOD_COUNT ? method_names[m] : "?"; }

int ps_method_from_name(const char *name, ps_method_t *out)
{
    int k;
    int rc = psi_name_index("method", name, method_names, PS_METHOD_COUNT, &k);
    if (rc == PS_OK)
        *out = (ps_method_t)k;
    return rc;
}

ps_baseline_params_t ps_baseline_default_params(void)
{
    return (ps_baseline_params_t){.seed = 1, .mlp_epochs = 100, .mlp_seconds = 0, .ridge_lambda = -1};
}

ps_method_t ps_baseline_method(const ps_baseline_t *b) { return b->method; }
double psi_baseline_train_seconds(const ps_baseline_t *b) { return b->train_seconds; }

void ps_baseline_free(ps_baseline_t *b)
{
    if (!b)
        return;
    free(b->cells);
    for (int i = 0; i < b->n_models; i++)
        free(b->models[i]);
    free(b->models);
    for (int s = 0; s < 2; s++) {
        psi_mlp_free(b->mlp[s]);
        psi_scaler_clear(&b->ridge[s].scale);
        free(b->ridge[s].w);
    }
    free(b);
}

/* ---- training entry points ---- */

/* What each row does in training (role[i]): 0 nothing, ROLE_FIT fits every
 * method, ROLE_TUNE tunes the learned ones (early stopping, ridge lambda). With the data set's own split (use NULL)
 * the training split fits and the validation split tunes, as PairSight's
 * early stopping does; with a caller's mask, the used rows of the last tenth
 * of its experiments in the data set's seeded order tune. Either way tuning
 * rows are whole experiments, never other runs of a fitted one. */
static int tuning_roles(const psi_dataset_t *d, const unsigned char *use, unsigned char *role)
{
    if (!use) {
        for (size_t i = 0; i < d->n; i++)
            role[i] = d->split[i] == PS_SPLIT_TRAIN ? ROLE_FIT : d->split[i] == PS_SPLIT_VALID ? ROLE_TUNE : 0;
        return 0;
    }
    unsigned char *seen = psi_calloc(d->n_experiments ? d->n_experiments : 1, 1);
    if (!seen)
        return PS_E_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++)
        if (use[i] && !seen[d->experiment[i]]) {
            seen[d->experiment[i]] = 1;
            k++;
        }
    /* The experiment ids are ranks of a seeded hash: the highest k/10 used
     * ones are a random tenth of the experiments. */
    size_t n_tune = k >= 2 ? (k / 10 ? k / 10 : 1) : 0, first_tune = d->n_experiments;
    for (size_t e = d->n_experiments, left = n_tune; e-- > 0 && left;)
        if (seen[e]) {
            first_tune = e;
            left--;
        }
    for (size_t i = 0; i < d->n; i++)
        role[i] = !use[i] ? 0 : (size_t)d->experiment[i] >= first_tune ? ROLE_TUNE : ROLE_FIT;
    free(seen);
    return 0;
}

/* The PairSight input that linear and pairsight_mlp learn from. */
static int full_input(ps_baseline_t *b, const psi_dataset_t *d)
{
    if (d->layout.variant != PS_FEAT_FULL)
        return psi_error(PS_E_ARG, "%s needs the full PairSight input", ps_method_name(b->method));
    b->layout = d->layout;
    return 0;
}

/* Fit b (its method set) on the rows of role: each baseline's own file. */
static int fit_method(ps_baseline_t *b, const ps_ops_t *ops, const psi_dataset_t *d, const unsigned char *role,
                      const ps_baseline_params_t *p)
{
    switch (b->method) {
    case PS_METHOD_INTENSITY_RULE: return psi_bl_fit_characterized(b, ops, d, role);
    case PS_METHOD_INTENSITY_RULE_FIT: return psi_bl_fit_rule(b, ops, d, role, N_CLS);
    case PS_METHOD_FIXED_COST: return psi_bl_fit_rule(b, ops, d, role, N_COLS);
    case PS_METHOD_COMPLEMENTARITY: return psi_bl_fit_complementarity(b, ops, d, role);
    case PS_METHOD_ABACUS_MLP: return psi_bl_fit_abacus(b, d, role, p);
    case PS_METHOD_LINEAR: return full_input(b, d) ? PS_E_ARG : psi_bl_fit_linear(b, d, role, p);
    default: return full_input(b, d) ? PS_E_ARG : psi_bl_fit_pairsight_mlp(b, d, role, p);
    }
}

int psi_baseline_fit(ps_method_t method, const ps_ops_t *ops, const psi_dataset_t *d, const unsigned char *use,
                     const ps_baseline_params_t *p, ps_baseline_t **out)
{
    *out = NULL;
    if (method <= PS_METHOD_PAIRSIGHT || method >= PS_METHOD_COUNT)
        return psi_error(PS_E_ARG, "not a baseline: %d", (int)method);
    ps_baseline_params_t defaults;
    if (!p) {
        defaults = ps_baseline_default_params();
        p = &defaults;
    }
    unsigned char *role = psi_malloc(d->n ? d->n : 1);
    if (!role)
        return PS_E_NOMEM;
    int rc = tuning_roles(d, use, role);
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += role[i] != 0;
    ps_baseline_t *b = NULL;
    if (rc != 0)
        goto done;
    if (n < 2) {
        rc = psi_error(PS_E_INPUT, "%s: need at least 2 training samples, have %zu", ps_method_name(method), n);
        goto done;
    }
    b = psi_calloc(1, sizeof *b);
    if (!b) {
        rc = PS_E_NOMEM;
        goto done;
    }
    b->method = method;
    double t0 = psi_now();
    rc = fit_method(b, ops, d, role, p);
    b->train_seconds = psi_now() - t0;
done:
    free(role);
    if (rc != 0) {
        psi_error_prefix(rc, ps_method_name(method));
        ps_baseline_free(b);
    } else {
        *out = b;
    }
    return rc;
}

int ps_baseline_train(ps_method_t method, const ps_ops_t *ops, const ps_coexec_t *train, const ps_baseline_params_t *p,
                      ps_baseline_t **out)
{
    *out = NULL;
    if (!ops || !train)
        return psi_error(PS_E_ARG, "baseline: no ops or coexec table");
    psi_feature_layout_t l;
    int rc = psi_features_layout(PS_FEAT_FULL, PS_WINDOW, &l);
    if (rc != 0)
        return rc;
    psi_dataset_t *d = NULL;
    if ((rc = psi_dataset_build(&l, ops, train, p ? p->seed : 1, &d)) != 0)
        return rc;
    unsigned char *use = psi_malloc(d->n ? d->n : 1);
    if (!use) {
        psi_dataset_free(d);
        return PS_E_NOMEM;
    }
    memset(use, 1, d->n);
    rc = psi_baseline_fit(method, ops, d, use, p, out);
    free(use);
    psi_dataset_free(d);
    return rc;
}

/* ---- prediction ---- */

/* Each query's standalone latencies into hs and ls: from the caller when it
 * has them, else from the profile by intensity class. */
static int solo_latencies(const ps_ops_t *ops, const psi_bl_queries_t *in, double *hs, double *ls)
{
    const ps_query_t *q = in->q;
    const double *hp_solo_in = in->hs, *lp_solo_in = in->ls;
    for (size_t i = 0; i < in->n; i++) {
        if (hp_solo_in && lp_solo_in) {
            hs[i] = hp_solo_in[i];
            ls[i] = lp_solo_in[i];
            continue;
        }
        double t[N_CLS];
        int rc = psi_bl_segment_by_class(ops, &q[i], PS_SIDE_HP, t);
        if (rc != 0)
            return rc;
        hs[i] = t[0] + t[1] + t[2];
        if ((rc = psi_bl_segment_by_class(ops, &q[i], PS_SIDE_LP, t)) != 0)
            return rc;
        ls[i] = t[0] + t[1] + t[2];
    }
    return 0;
}

/* One side's log delta of linear or pairsight_mlp from its PairSight input
 * rows. */
static int predict_side_x(const ps_baseline_t *b, int side, const float *x, size_t n, double *out)
{
    if (b->method == PS_METHOD_PAIRSIGHT_MLP)
        return psi_mlp_predict(b->mlp[side], x, n, out);
    return psi_bl_predict_linear(b, side, x, n, out);
}

/* Predict the queries of in into hp, lp; what in lacks (feature rows,
 * standalone latencies) is computed here. */
static int predict_queries(const ps_baseline_t *b, const ps_ops_t *ops, const psi_bl_queries_t *in, double *hp,
                           double *lp)
{
    const ps_query_t *q = in->q;
    size_t n = in->n;
    const float *x_hp = in->x_hp, *x_lp = in->x_lp;
    int rc = 0;
    double *hs = psi_malloc((n ? n : 1) * sizeof *hs), *ls = psi_malloc((n ? n : 1) * sizeof *ls);
    float *xb = NULL;
    if (!hs || !ls) {
        rc = PS_E_NOMEM;
        goto done;
    }
    int needs_x = b->method == PS_METHOD_LINEAR || b->method == PS_METHOD_PAIRSIGHT_MLP;
    if (needs_x && (!x_hp || !x_lp)) {
        /* The PairSight input of both sides, with the standalone latencies. */
        int f = b->layout.n_features;
        if (!(xb = psi_malloc((n ? n : 1) * 2 * (size_t)f * sizeof *xb))) {
            rc = PS_E_NOMEM;
            goto done;
        }
        for (size_t i = 0; i < n; i++) {
            psi_solo_t solo;
            if ((rc = psi_features_build_pair(&b->layout, ops, &q[i], xb + i * (size_t)f, xb + (n + i) * (size_t)f,
                                              &solo)) != 0)
                goto done;
            hs[i] = solo.hp_ns;
            ls[i] = solo.lp_ns;
        }
        x_hp = xb;
        x_lp = xb + n * (size_t)f;
    } else if ((rc = solo_latencies(ops, in, hs, ls)) != 0) {
        goto done;
    }
    const psi_bl_queries_t known = {.q = q, .n = n, .hs = hs, .ls = ls, .x_hp = x_hp, .x_lp = x_lp};
    switch (b->method) {
    case PS_METHOD_INTENSITY_RULE:
    case PS_METHOD_INTENSITY_RULE_FIT:
    case PS_METHOD_FIXED_COST: rc = psi_bl_predict_rules(b, ops, q, n, hp, lp); break;
    case PS_METHOD_COMPLEMENTARITY: rc = psi_bl_predict_complementarity(b, ops, &known, hp, lp); break;
    case PS_METHOD_ABACUS_MLP: rc = psi_bl_predict_abacus(b, &known, hp, lp); break;
    default:
        if ((rc = predict_side_x(b, PS_SIDE_HP, x_hp, n, hp)) != 0 ||
            (rc = predict_side_x(b, PS_SIDE_LP, x_lp, n, lp)) != 0)
            break;
        for (size_t i = 0; i < n; i++) {
            hp[i] = hs[i] * exp(hp[i]);
            lp[i] = ls[i] * exp(lp[i]);
        }
        break;
    }
done:
    free(hs);
    free(ls);
    free(xb);
    return rc;
}

int ps_baseline_predict(const ps_baseline_t *b, const ps_ops_t *ops, const ps_query_t *q, size_t n, double *out_hp_ns,
                        double *out_lp_ns)
{
    if (!b || !ops || (n && (!q || !out_hp_ns || !out_lp_ns)))
        return psi_error(PS_E_ARG, "baseline predict: missing argument");
    return predict_queries(b, ops, &(psi_bl_queries_t){.q = q, .n = n}, out_hp_ns, out_lp_ns);
}

int psi_baseline_predict_dataset(const ps_baseline_t *b, const ps_ops_t *ops, const psi_dataset_t *d, const size_t *idx,
                                 size_t n, double *out)
{
    int f = d->layout.n_features;
    int use_x =
        d->layout.variant == PS_FEAT_FULL && (b->method == PS_METHOD_LINEAR || b->method == PS_METHOD_PAIRSIGHT_MLP);
    ps_query_t *q = psi_malloc((n ? n : 1) * sizeof *q);
    double *solo = psi_malloc((n ? n : 1) * 2 * sizeof *solo);
    float *x = use_x ? psi_malloc((n ? n : 1) * 2 * (size_t)f * sizeof *x) : NULL;
    int rc = PS_E_NOMEM;
    if (q && solo && (x || !use_x)) {
        for (size_t i = 0; i < n; i++) {
            q[i] = psi_query_of_row(d->rows[idx[i]]);
            solo[i] = d->hp_solo_ns[idx[i]];
            solo[n + i] = d->lp_solo_ns[idx[i]];
            if (use_x) {
                memcpy(x + i * (size_t)f, d->x_hp + idx[i] * (size_t)f, (size_t)f * sizeof *x);
                memcpy(x + (n + i) * (size_t)f, d->x_lp + idx[i] * (size_t)f, (size_t)f * sizeof *x);
            }
        }
        psi_bl_queries_t in = {.q = q,
                               .n = n,
                               .hs = solo,
                               .ls = solo + n,
                               .x_hp = use_x ? x : NULL,
                               .x_lp = use_x ? x + n * (size_t)f : NULL};
        rc = predict_queries(b, ops, &in, out, out + n);
    }
    free(q);
    free(solo);
    free(x);
    return rc;
}
