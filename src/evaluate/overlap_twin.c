/*
 * The twin against overlap.csv (overlap_twin.h): the lists, their groups,
 * and one MPS run per experiment.
 */
#include "evaluate/overlap_twin.h"
#include "evaluate/overlap_ops.h"

#include "common/common.h"
#include "profile/abacus.h"
#include "profile/oplist.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    psi_oplist_t *list;
    sim_workload_t wl;
    sim_mps_model_t mm;
    int groups;
    int *first;  /* [groups + 1]: first operator of each group, first[groups] = n */
    double *eff; /* [wl.n]: the kernels' own flop_eff */
} ovt_entry_t;

struct ps_ovt {
    const psi_gpu_t *g;
    sim_physics_t ph;
    ovt_entry_t *e;
    int n;
    size_t cap;
    long unmatched;
    double flop_scale; /* the scale the kernels' flop_eff carry now */
};

void psi_ovt_free(psi_ovt_t *tw)
{
    if (!tw)
        return;
    for (int i = 0; i < tw->n; i++) {
        psi_sim_mps_model_free(&tw->e[i].mm);
        psi_sim_workload_free(&tw->e[i].wl);
        psi_oplist_free(tw->e[i].list);
        free(tw->e[i].first);
        free(tw->e[i].eff);
    }
    free(tw->e);
    free(tw);
}

int psi_ovt_lists(const psi_ovt_t *tw, long *unmatched)
{
    if (unmatched)
        *unmatched = tw->unmatched;
    return tw->n;
}

/* first[] of e from its operators' groups; operators of no group stay in the
 * group before them. Groups must come in order. */
static int group_bounds(psi_ovt_t *tw, ovt_entry_t *e, const char *path)
{
    const psi_oplist_t *l = e->list;
    int cur = 0;
    for (int g = 0; g <= e->groups; g++)
        e->first[g] = l->n;
    for (int i = 0; i < l->n; i++) {
        int g = psi_ov_op_group(l->model, e->groups, l->ops[i].name);
        if (g < 0) {
            tw->unmatched++;
            g = cur;
        }
        if (g < cur)
            return psi_error(PS_E_INPUT, "%s: operator %d (%s) of group %d after group %d: groups out of order", path,
                             i + 1, l->ops[i].name, g, cur);
        cur = g;
        if (i < e->first[g])
            e->first[g] = i;
    }
    for (int g = e->groups - 1; g >= 0; g--)
        if (e->first[g + 1] < e->first[g])
            e->first[g] = e->first[g + 1];
    return PS_OK;
}

static int add_entry(psi_ovt_t *tw, psi_oplist_t *l, const char *path)
{
    int groups = psi_abacus_model_ops(l->model);
    if (groups == 0) {
        psi_oplist_free(l);
        return PS_OK;
    }
    void *grown = tw->e;
    if (psi_array_grow(&grown, (size_t)tw->n, &tw->cap, sizeof *tw->e, 16) != PS_OK) {
        psi_oplist_free(l);
        return PS_E_NOMEM;
    }
    tw->e = grown;
    ovt_entry_t *e = &tw->e[tw->n++];
    memset(e, 0, sizeof *e);
    e->list = l;
    e->groups = groups;
    if (!(e->first = psi_calloc((size_t)groups + 1, sizeof *e->first)))
        return PS_E_NOMEM;
    int rc = group_bounds(tw, e, path);
    if (rc == PS_OK)
        rc = psi_sim_workload_from_oplist(l, &e->wl);
    if (rc == PS_OK && !(e->eff = psi_malloc(((size_t)e->wl.n + 1) * sizeof *e->eff)))
        rc = PS_E_NOMEM;
    for (int i = 0; rc == PS_OK && i < e->wl.n; i++)
        e->eff[i] = e->wl.k[i].flop_eff > 0 ? e->wl.k[i].flop_eff : 1.0;
    if (rc == PS_OK)
        rc = psi_sim_mps_model_init(&e->mm, tw->g, e->wl.k, e->wl.n);
    return rc;
}

int psi_ovt_load(const char *dir, const char *gpu, psi_ovt_t **out)
{
    *out = NULL;
    const psi_gpu_t *g = psi_sim_gpu_find(gpu);
    if (!g)
        return psi_error_prefix(PS_E_ARG, "twin");
    DIR *d = opendir(dir);
    if (!d)
        return psi_error(PS_E_IO, "%s: %s", dir, strerror(errno));
    psi_ovt_t *tw = psi_calloc(1, sizeof *tw);
    int rc = tw ? PS_OK : PS_E_NOMEM;
    if (tw) {
        tw->g = g;
        tw->ph = psi_sim_physics_default();
        tw->flop_scale = 1.0;
    }
    for (struct dirent *de; rc == PS_OK && (de = readdir(d));) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len < 8 || strcmp(de->d_name + len - 7, ".oplist") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        psi_oplist_t *l = NULL;
        if ((rc = psi_oplist_read(path, &l)) == PS_OK)
            rc = add_entry(tw, l, path);
    }
    closedir(d);
    if (rc != PS_OK) {
        psi_ovt_free(tw);
        return rc;
    }
    *out = tw;
    return PS_OK;
}

static ovt_entry_t *find_entry(psi_ovt_t *tw, const psi_ov_slot_t *x)
{
    for (int i = 0; i < tw->n; i++) {
        const psi_oplist_t *l = tw->e[i].list;
        if (l->batch == x->batch && l->seq_len == x->seq_len && strcmp(l->model, x->model) == 0)
            return &tw->e[i];
    }
    return NULL;
}

/* Eq. 16: every kernel's flop_eff times scale; the placements are redone. */
static void set_flop_scale(psi_ovt_t *tw, double scale)
{
    for (int i = 0; i < tw->n; i++) {
        ovt_entry_t *e = &tw->e[i];
        for (int j = 0; j < e->wl.n; j++)
            e->wl.k[j].flop_eff = e->eff[j] * scale;
        memset(e->mm.alone_ns, 0, (size_t)(e->wl.n > 0 ? e->wl.n : 1) * (size_t)tw->g->tpcs * sizeof *e->mm.alone_ns);
    }
    tw->flop_scale = scale;
}

int psi_ovt_predict(psi_ovt_t *tw, const psi_ov_exp_t *e, const sim_mps_params_t *p, double *us, double *max_solo,
                    double *sum_solo)
{
    sim_mps_seg_t seg[PSI_OV_MAX_K];
    *us = NAN;
    if (p->flop_scale != tw->flop_scale)
        set_flop_scale(tw, p->flop_scale > 0 ? p->flop_scale : 1.0);
    for (int s = 0; s < e->k; s++) {
        const psi_ov_slot_t *x = &e->slot[s];
        ovt_entry_t *en = find_entry(tw, x);
        if (!en)
            return PS_OK;
        if (x->op_end > en->groups)
            return psi_error(PS_E_ARG, "%s: %s has %d groups, the range ends at %d", e->id, x->model, en->groups,
                             x->op_end);
        int a = en->first[x->op_start], b = x->op_end > x->op_start ? en->first[x->op_end] : a;
        seg[s] = (sim_mps_seg_t){.m = &en->mm, .start = a, .len = b - a};
    }
    double ns = 0, mx = 0, sum = 0;
    int rc = psi_sim_mps_run(&tw->ph, p, seg, e->k, &ns);
    for (int s = 0; rc == PS_OK && (max_solo || sum_solo) && s < e->k; s++) {
        double one = 0;
        if (seg[s].len == 0)
            continue;
        rc = psi_sim_mps_run(&tw->ph, p, &seg[s], 1, &one);
        mx = one > mx ? one : mx;
        sum += one;
    }
    if (rc != PS_OK)
        return rc;
    *us = ns / 1e3;
    if (max_solo)
        *max_solo = mx / 1e3;
    if (sum_solo)
        *sum_solo = sum / 1e3;
    return PS_OK;
}
