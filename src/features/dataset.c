/*
 * Co-execution rows -> a training data set: feature vectors of both sides,
 * targets log delta, and the 80/10/10 split by experiment (PairSight,
 * Sec. IV-A: runs of one experiment never straddle two splits).
 */
#include "features/features.h"

#include "common/common.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t h;
    const char *name;
    size_t row;
} exp_key_t;

static int cmp_key(const void *a, const void *b)
{
    const exp_key_t *x = a, *y = b;
    if (x->h != y->h)
        return x->h < y->h ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* Dense experiment ids (by rank of the seeded hash) and splits of every row:
 * the first 80% of the ranked experiments train, the next 10% validate, the
 * rest test; with three or more experiments, validation and test get at
 * least one each. With PS_CALIB_MIN_EXPERIMENTS or more, the last eighth of the
 * training experiments (10% of all) is the calibration split of the upper
 * bounds instead (src/decision), so every method fits on the same 70%. */
static int assign_experiments(const ps_coexec_t *cx, uint64_t seed, int *exp_id, unsigned char *split,
                              size_t *n_exp)
{
    size_t n = cx->n;
    exp_key_t *keys = psi_malloc((n ? n : 1) * sizeof *keys);
    if (!keys)
        return PS_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        keys[i].name = cx->rows[i].experiment ? cx->rows[i].experiment : "";
        keys[i].h = psi_experiment_hash(keys[i].name, seed);
        keys[i].row = i;
    }
    qsort(keys, n, sizeof *keys, cmp_key);
    size_t ne = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(keys[i].name, keys[i - 1].name) != 0)
            ne++;
        exp_id[keys[i].row] = (int)ne;
    }
    if (n)
        ne++;
    size_t n_valid = 0, n_test = 0;
    if (ne >= 3) {
        n_valid = (ne + 5) / 10;
        n_test = (ne + 5) / 10;
        if (n_valid < 1)
            n_valid = 1;
        if (n_test < 1)
            n_test = 1;
    }
    size_t n_train = ne - n_valid - n_test;
    size_t n_fit = ne >= PS_CALIB_MIN_EXPERIMENTS ? n_train - (ne + 5) / 10 : n_train;
    for (size_t i = 0; i < n; i++) {
        size_t e = (size_t)exp_id[i];
        split[i] = e < n_fit     ? PS_SPLIT_TRAIN
                   : e < n_train ? PS_SPLIT_CALIB
                   : e < n_train + n_valid ? PS_SPLIT_VALID
                                           : PS_SPLIT_TEST;
    }
    *n_exp = ne;
    free(keys);
    return PS_OK;
}

int ps_coexec_split(const ps_coexec_t *cx, uint64_t seed, unsigned char *out_split)
{
    if (!cx || !out_split)
        return psi_error(PS_E_ARG, "ps_coexec_split: NULL argument");
    int *ids = psi_malloc((cx->n ? cx->n : 1) * sizeof *ids);
    if (!ids)
        return PS_E_NOMEM;
    size_t ne;
    int rc = assign_experiments(cx, seed, ids, out_split, &ne);
    free(ids);
    return rc;
}

void psi_dataset_free(psi_dataset_t *d)
{
    if (!d)
        return;
    free(d->x_hp);
    free(d->x_lp);
    free(d->y_hp);
    free(d->y_lp);
    free(d->hp_solo_ns);
    free(d->lp_solo_ns);
    free(d->hp_ns);
    free(d->lp_ns);
    free(d->experiment);
    free(d->split);
    free(d->rows);
    free(d);
}

ps_query_t psi_query_of_row(const psi_coexec_row_t *r)
{
    ps_query_t q = {.gpu = r->gpu,
                    .hp_model = r->hp_model,
                    .hp_batch = r->hp_batch,
                    .hp_start = r->hp_start,
                    .hp_len = r->hp_len,
                    .lp_model = r->lp_model,
                    .lp_batch = r->lp_batch,
                    .lp_start = r->lp_start,
                    .lp_len = r->lp_len,
                    .hp_tpcs = r->hp_tpcs,
                    .lp_tpcs = r->lp_tpcs};
    return q;
}

/* The per-row arrays of a data set of up to m rows; rows_x rows of features
 * per side (m, or 1 for a lean set's scratch row). */
static int dataset_alloc(psi_dataset_t *d, size_t m, size_t rows_x, size_t nf)
{
    d->x_hp = psi_malloc(rows_x * nf * sizeof *d->x_hp);
    d->x_lp = psi_malloc(rows_x * nf * sizeof *d->x_lp);
    d->y_hp = psi_malloc(m * sizeof *d->y_hp);
    d->y_lp = psi_malloc(m * sizeof *d->y_lp);
    d->hp_solo_ns = psi_malloc(m * sizeof *d->hp_solo_ns);
    d->lp_solo_ns = psi_malloc(m * sizeof *d->lp_solo_ns);
    d->hp_ns = psi_malloc(m * sizeof *d->hp_ns);
    d->lp_ns = psi_malloc(m * sizeof *d->lp_ns);
    d->experiment = psi_malloc(m * sizeof *d->experiment);
    d->split = psi_malloc(m);
    d->rows = psi_malloc(m * sizeof *d->rows);
    if (!d->x_hp || !d->x_lp || !d->y_hp || !d->y_lp || !d->hp_solo_ns || !d->lp_solo_ns || !d->hp_ns || !d->lp_ns ||
        !d->experiment || !d->split || !d->rows)
        return PS_E_NOMEM;
    return PS_OK;
}

/* A segment outside its model is an error, long or not; i is the row's index. */
static int check_segments(const ps_ops_t *ops, const psi_coexec_row_t *r, size_t i)
{
    for (int s = 0; s < 2; s++) {
        const char *model = s ? r->lp_model : r->hp_model;
        int batch = s ? r->lp_batch : r->hp_batch, start = s ? r->lp_start : r->hp_start,
            len = s ? r->lp_len : r->hp_len;
        const psi_op_group_t *g = psi_ops_find(ops, r->gpu, model, batch);
        if (g && !segment_fits(start, len, g->n_ops))
            return psi_error(PS_E_INPUT,
                             "coexec row %zu (experiment %s): %s: segment [%d, %lld) of %s "
                             "batch %d is outside its %d operators",
                             i + 1, r->experiment ? r->experiment : "?", s ? "lp" : "hp", start, (long long)start + len,
                             model, batch, g->n_ops);
    }
    return PS_OK;
}

/* Row r (index i of the coexec table) as the data set's row k: its features
 * (at x_at in x_hp and x_lp), solo and measured times, and targets. */
static int dataset_set_row(psi_dataset_t *d, const ps_ops_t *ops, const psi_coexec_row_t *r, size_t i, size_t k,
                           size_t x_at)
{
    ps_query_t q = psi_query_of_row(r);
    psi_solo_t solo;
    int rc = psi_features_build_pair(&d->layout, ops, &q, d->x_hp + x_at, d->x_lp + x_at, &solo);
    if (rc != PS_OK) {
        char where[64];
        snprintf(where, sizeof where, "coexec row %zu (experiment %s)", i + 1, r->experiment ? r->experiment : "?");
        psi_error_prefix(rc, where);
        return rc;
    }
    d->hp_solo_ns[k] = solo.hp_ns;
    d->lp_solo_ns[k] = solo.lp_ns;
    if (!(r->hp_ns > 0) || !(r->lp_ns > 0))
        return psi_error(PS_E_INPUT, "coexec row %zu: hp_ns and lp_ns must be > 0", i + 1);
    d->hp_ns[k] = r->hp_ns;
    d->lp_ns[k] = r->lp_ns;
    /* Target: log delta, delta = T_share / T_solo(p) (PairSight Sec. III). */
    d->y_hp[k] = log(r->hp_ns / d->hp_solo_ns[k]);
    d->y_lp[k] = log(r->lp_ns / d->lp_solo_ns[k]);
    d->rows[k] = r;
    return PS_OK;
}

/* with_features 0: x_hp and x_lp stay NULL (psi_dataset_build_lean). */
static int dataset_build(const psi_feature_layout_t *l, const ps_ops_t *ops, const ps_coexec_t *cx, uint64_t seed,
                         int with_features, psi_dataset_t **out)
{
    *out = NULL;
    if (!l || !ops || !cx)
        return psi_error(PS_E_ARG, "psi_dataset_build: NULL argument");
    size_t n = cx->n, m = n ? n : 1, nf = (size_t)l->n_features;
    int rc = PS_E_NOMEM;
    int *all_ids = psi_malloc(m * sizeof *all_ids);
    unsigned char *all_split = psi_malloc(m);
    psi_dataset_t *d = psi_calloc(1, sizeof *d);
    if (!all_ids || !all_split || !d)
        goto fail;
    d->layout = *l;
    /* Lean: one scratch row per side, overwritten by every row. */
    rc = dataset_alloc(d, m, with_features ? m : 1, nf);
    if (rc != PS_OK)
        goto fail;
    rc = assign_experiments(cx, seed, all_ids, all_split, &d->n_experiments);
    if (rc != PS_OK)
        goto fail;

    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const psi_coexec_row_t *r = &cx->rows[i];
        rc = check_segments(ops, r, i);
        if (rc != PS_OK)
            goto fail;
        if (r->hp_len > l->window || r->lp_len > l->window) {
            d->n_skipped++;
            continue;
        }
        rc = dataset_set_row(d, ops, r, i, k, with_features ? k * nf : 0);
        if (rc != PS_OK)
            goto fail;
        d->experiment[k] = all_ids[i];
        d->split[k] = all_split[i];
        k++;
    }
    d->n = k;
    if (!with_features) {
        free(d->x_hp);
        free(d->x_lp);
        d->x_hp = d->x_lp = NULL;
    }
    free(all_ids);
    free(all_split);
    *out = d;
    return PS_OK;
fail:
    free(all_ids);
    free(all_split);
    psi_dataset_free(d);
    return rc;
}

int psi_dataset_build(const psi_feature_layout_t *l, const ps_ops_t *ops, const ps_coexec_t *cx, uint64_t seed,
                      psi_dataset_t **out)
{
    return dataset_build(l, ops, cx, seed, 1, out);
}

int psi_dataset_build_lean(const psi_feature_layout_t *l, const ps_ops_t *ops, const ps_coexec_t *cx, uint64_t seed,
                           psi_dataset_t **out)
{
    return dataset_build(l, ops, cx, seed, 0, out);
}

int psi_dataset_features(const psi_dataset_t *d, const ps_ops_t *ops, size_t k, int side, float *out)
{
    if (d->x_hp) {
        size_t nf = (size_t)d->layout.n_features;
        memcpy(out, (side == PS_SIDE_HP ? d->x_hp : d->x_lp) + k * nf, nf * sizeof *out);
        return PS_OK;
    }
    ps_query_t q = psi_query_of_row(d->rows[k]);
    return psi_features_build(&d->layout, ops, &q, side, out, NULL);
}
