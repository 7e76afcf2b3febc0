/*
 * The mps predictor's pairwise-interference encoding (docs/colocate.md,
 * "More than two workloads"). Every measured training slot of workload w
 * beside co-runners C contributes, to each co-runner j in C, the part of its
 * residual over w's median ratio that falls to one co-runner:
 *
 *     u = (log(tput / solo) - log ratio_w) / (g x (k - 1))
 *
 * (g the co-runner activity, as in the mps target). agg(j) is the mean of u
 * over the slots beside j, shrunk towards 0 by one pseudo-slot; pair(w, j)
 * the mean of u over w's slots beside j, shrunk towards agg(j) by one
 * pseudo-slot. The features of a slot are the sums over its co-runners of
 * pair(w, j) and of agg(j), so that a 3-way set is read as the sum of its
 * pairs' interference. A training slot's encoding leaves out every training
 * co-location of its workload set (the same workloads at any shares), so
 * the trees learn from encodings of the kind they meet on a workload set
 * they were not trained on.
 * Tables are indexed by the model's ratio table (workloads with training
 * rows); a workload outside it contributes 0.
 */
#include "colocate/model_internal.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ENC_PRIOR 1.0 /* pseudo-slots of shrinkage, fixed in advance */

static int ratio_index(const ps_coloc_model_t *m, const char *name)
{
    for (int i = 0; i < m->n_ratio; i++)
        if (strcmp(m->ratio_name[i], name) == 0)
            return i;
    return -1;
}

int psi_pairenc_alloc(ps_coloc_model_t *m)
{
    size_t n = (size_t)m->n_ratio;
    m->enc_pair = psi_calloc(2 * n * n + 1, sizeof *m->enc_pair);
    m->enc_agg = psi_calloc(2 * n + 1, sizeof *m->enc_agg);
    return m->enc_pair && m->enc_agg ? 0 : PS_E_NOMEM;
}

/* The ratio table index of each of c's workloads (-1: none). */
static void coloc_map(const ps_coloc_model_t *m, const cl_data_t *d, const cl_coloc_t *c, int *map)
{
    for (int j = 0; j < c->k; j++)
        map[j] = ratio_index(m, d->w[c->w[j]].name);
}

/* Add (sign +1) or remove (-1) co-location c's measured slots. */
static void enc_apply(ps_coloc_model_t *m, const cl_data_t *d, const cl_coloc_t *c, const int *map, double sign)
{
    size_t n = (size_t)m->n_ratio;
    for (int s = 0; s < c->k && c->k > 1; s++) {
        int w = map[s];
        if (isnan(c->tput[s]) || w < 0)
            continue;
        double g = psi_cl_mps_corunner_activity(d, c, s);
        double u = (log(c->tput[s] / psi_cl_solo(d, c->w[s], c->share[s])) - log(m->ratio_med[w])) / (g * (c->k - 1));
        for (int j = 0; j < c->k; j++) {
            int o = map[j];
            if (j == s || o < 0)
                continue;
            m->enc_agg[2 * o] += sign * u;
            m->enc_agg[2 * o + 1] += sign;
            m->enc_pair[2 * (w * n + o)] += sign * u;
            m->enc_pair[2 * (w * n + o) + 1] += sign;
        }
    }
}

/* out[0] = sum of pair(w, j), out[1] = sum of agg(j) over the co-runners. */
static void enc_features(const ps_coloc_model_t *m, const cl_coloc_t *c, int slot, const int *map, double *out)
{
    size_t n = (size_t)m->n_ratio;
    int w = map[slot];
    out[0] = out[1] = 0;
    for (int j = 0; j < c->k; j++) {
        int o = map[j];
        if (j == slot || o < 0)
            continue;
        double agg = m->enc_agg[2 * o] / (m->enc_agg[2 * o + 1] + ENC_PRIOR);
        double pair = agg;
        if (w >= 0)
            pair = (m->enc_pair[2 * (w * n + o)] + ENC_PRIOR * agg) / (m->enc_pair[2 * (w * n + o) + 1] + ENC_PRIOR);
        out[0] += pair;
        out[1] += agg;
    }
}

int psi_pairenc_fit(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train)
{
    if (psi_pairenc_alloc(m))
        return PS_E_NOMEM;
    int map[64] = {0};
    for (int i = 0; i < n_train; i++) {
        coloc_map(m, d, &d->c[train[i]], map);
        enc_apply(m, d, &d->c[train[i]], map, 1.0);
    }
    return 0;
}

/* Apply every training co-location of ci's workload set with sign. */
static void apply_set(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train, int ci, double sign)
{
    int map[64] = {0};
    for (int i = 0; i < n_train; i++)
        if (d->c[train[i]].set == d->c[ci].set) {
            coloc_map(m, d, &d->c[train[i]], map);
            enc_apply(m, d, &d->c[train[i]], map, sign);
        }
}

void psi_pairenc_train_features(ps_coloc_model_t *m, const cl_train_t *t, int ci, int slot, double *out)
{
    const cl_data_t *d = t->d;
    int map[64] = {0};
    apply_set(m, d, t->idx, t->n, ci, -1.0);
    coloc_map(m, d, &d->c[ci], map);
    enc_features(m, &d->c[ci], slot, map, out);
    apply_set(m, d, t->idx, t->n, ci, 1.0);
}

void psi_pairenc_features(const ps_coloc_model_t *m, const cl_data_t *d, const cl_coloc_t *c, int slot, double *out)
{
    int map[64] = {0};
    coloc_map(m, d, c, map);
    enc_features(m, c, slot, map, out);
}
