/* The complementarity baseline: T_share = T_solo * the median delta of the
 * training samples with the same (HP class, LP class, hp_tpcs, lp_tpcs). */
#include "evaluate/baseline_internal.h"

#include "common/common.h"

#include <stdlib.h>

static int cmp_cell_key(const comp_cell_t *a, const comp_cell_t *b)
{
    if (a->hp_cls != b->hp_cls)
        return a->hp_cls - b->hp_cls;
    if (a->lp_cls != b->lp_cls)
        return a->lp_cls - b->lp_cls;
    if (a->hp_tpcs != b->hp_tpcs)
        return a->hp_tpcs - b->hp_tpcs;
    return a->lp_tpcs - b->lp_tpcs;
}

typedef struct {
    comp_cell_t key;
    double d_hp, d_lp;
} comp_sample_t;

static int cmp_sample(const void *x, const void *y)
{
    return cmp_cell_key(&((const comp_sample_t *)x)->key, &((const comp_sample_t *)y)->key);
}

static int sample_key(const ps_ops_t *ops, const ps_query_t *q, comp_cell_t *key)
{
    double t[2][N_CLS];
    for (int s = 0; s < 2; s++) {
        int rc = psi_bl_segment_by_class(ops, q, s, t[s]);
        if (rc != 0)
            return rc;
    }
    key->hp_cls = psi_bl_dominant_class(t[0]);
    key->lp_cls = psi_bl_dominant_class(t[1]);
    key->hp_tpcs = q->hp_tpcs;
    key->lp_tpcs = q->lp_tpcs;
    return 0;
}

int psi_bl_fit_complementarity(ps_baseline_t *b, const ps_ops_t *ops, const psi_dataset_t *d, const unsigned char *use)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += use[i] == ROLE_FIT;
    comp_sample_t *smp = psi_malloc(n * sizeof *smp);
    double *tmp = psi_malloc(2 * n * sizeof *tmp);
    b->cells = psi_malloc(n * sizeof *b->cells);
    int rc = PS_E_NOMEM;
    if (!smp || !tmp || !b->cells)
        goto done;
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++) {
        if (use[i] != ROLE_FIT)
            continue;
        ps_query_t q = psi_query_of_row(d->rows[i]);
        if ((rc = sample_key(ops, &q, &smp[k].key)) != 0)
            goto done;
        smp[k].d_hp = d->hp_ns[i] / d->hp_solo_ns[i];
        smp[k].d_lp = d->lp_ns[i] / d->lp_solo_ns[i];
        tmp[k] = smp[k].d_hp;
        tmp[n + k] = smp[k].d_lp;
        k++;
    }
    b->global_delta[0] = psi_median(tmp, n);
    b->global_delta[1] = psi_median(tmp + n, n);
    qsort(smp, n, sizeof *smp, cmp_sample);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && cmp_cell_key(&smp[j].key, &smp[i].key) == 0)
            j++;
        for (size_t t = i; t < j; t++) {
            tmp[t - i] = smp[t].d_hp;
            tmp[n + t - i] = smp[t].d_lp;
        }
        comp_cell_t *c = &b->cells[b->n_cells++];
        *c = smp[i].key;
        c->delta[0] = psi_median(tmp, j - i);
        c->delta[1] = psi_median(tmp + n, j - i);
        i = j;
    }
    rc = 0;
done:
    free(smp);
    free(tmp);
    return rc;
}

/* The cell of key; for an SM split absent from training, the nearest split
 * (in TPCs) of the same intensity pair; for an unseen intensity pair, the
 * nearest split of any pair. */
static int cmp_cell(const void *a, const void *b) { return cmp_cell_key(a, b); }

static const comp_cell_t *comp_lookup(const ps_baseline_t *b, const comp_cell_t *key)
{
    /* Cells are sorted by key: an exact hit first. */
    const comp_cell_t *hit = bsearch(key, b->cells, b->n_cells, sizeof *b->cells, cmp_cell);
    if (hit)
        return hit;
    const comp_cell_t *best = NULL;
    long best_score = 0;
    for (size_t i = 0; i < b->n_cells; i++) {
        const comp_cell_t *c = &b->cells[i];
        long dist = labs((long)c->hp_tpcs - key->hp_tpcs) + labs((long)c->lp_tpcs - key->lp_tpcs);
        long score = dist + ((c->hp_cls != key->hp_cls || c->lp_cls != key->lp_cls) ? 1000000L : 0);
        if (!best || score < best_score) {
            best = c;
            best_score = score;
        }
    }
    return best;
}

/* T_share = T_solo * the median delta of the query's cell. */
int psi_bl_predict_complementarity(const ps_baseline_t *b, const ps_ops_t *ops, const psi_bl_queries_t *in, double *hp,
                                   double *lp)
{
    const ps_query_t *q = in->q;
    const double *hs = in->hs, *ls = in->ls;
    for (size_t i = 0; i < in->n; i++) {
        comp_cell_t key;
        int rc = sample_key(ops, &q[i], &key);
        if (rc != 0)
            return rc;
        const comp_cell_t *c = comp_lookup(b, &key);
        hp[i] = hs[i] * (c ? c->delta[0] : b->global_delta[0]);
        lp[i] = ls[i] * (c ? c->delta[1] : b->global_delta[1]);
    }
    return 0;
}
