/*
 * Calibrated upper bounds (docs/planner.md, "Bounds"): split-conformal
 * quantiles of the residual of log delta (Vovk et al. 2005; Romano et al.
 * 2019 for the conditional use), one table per side, conditioned on
 * Mondrian bins (SM split range x HP memory-boundedness).
 *
 * With r_i = y_i - yhat_i the residuals of the n calibration samples of a
 * bin sorted ascending, the upper bound at coverage c is
 *     yhat + r_(k),  k = ceil((n + 1) c),
 * which covers a new exchangeable sample with probability >= c (and < c +
 * 1/(n+1) without ties). k > n has no finite bound: the bin is then too
 * small for c and a coarser bin is used.
 *
 * This file holds the table, its JSON and its lookups; fitting it is
 * psi_calib_fit.c.
 */
#include "model/calib.h"

#include "common/common.h"
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double psi_calib_level_at(int i)
{
    if (i < 50)
        return 0.50 + 0.01 * i;
    return i == 50 ? 0.995 : 0.999;
}

/* The stored level for coverage c: the lowest level >= c (-1 outside). */
int psi_calib_level_index(double c)
{
    for (int i = 0; i < CALIB_NLEVELS; i++)
        if (psi_calib_level_at(i) >= c - 1e-12)
            return i;
    return -1;
}

/* The bin key of a query: SM split range and memory-bound share of the HP
 * segment's standalone time at its TPCs (PS_INTENSITY_MEMORY operators). */
int psi_calib_bin_key(const ps_ops_t *ops, const ps_query_t *q, int *s, int *m)
{
    double share = (double)q->hp_tpcs / (double)(q->hp_tpcs + q->lp_tpcs);
    *s = share < 0.35 ? 0 : share < 0.65 ? 1 : 2;
    const psi_op_group_t *g = psi_ops_find(ops, q->gpu, q->hp_model, q->hp_batch);
    int k = g ? psi_group_tpcs_index(g, q->hp_tpcs) : -1;
    if (k < 0 || q->hp_start < 0 || q->hp_start + q->hp_len > g->n_ops)
        return psi_error(PS_E_INPUT, "%s batch %d: no standalone profile at %d TPCs", q->hp_model, q->hp_batch,
                         q->hp_tpcs);
    double all = 0, mem = 0;
    for (int op = q->hp_start; op < q->hp_start + q->hp_len; op++) {
        double t = g->duration_ns[(size_t)op * (size_t)g->n_tpcs + (size_t)k];
        all += t;
        if (g->intensity[op] == PS_INTENSITY_MEMORY)
            mem += t;
    }
    *m = all > 0 && mem / all >= 0.5;
    return PS_OK;
}

static int bin_ok(const psi_calib_t *c, const calib_bin_t *b, int li)
{
    return b->n >= c->min_bin && isfinite(b->q[0][li]) && isfinite(b->q[1][li]);
}

/* The bin that serves (s, mb) at level li. The bins in use must partition
 * the queries (a cell that borrowed its SM-split row's quantile while its
 * sibling kept its own would be under-covered): the split rows are used
 * only when every one of them is large enough, and a split row's cells only
 * when both are; otherwise the coarser bin serves all of them. */
static const calib_bin_t *pick(const psi_calib_t *c, int s, int mb, int li)
{
    for (int k = 0; k < CALIB_NSPLIT; k++)
        if (!bin_ok(c, &c->split[k], li))
            return isfinite(c->all.q[0][li]) && isfinite(c->all.q[1][li]) ? &c->all : NULL;
    for (int k = 0; k < CALIB_NMEM; k++)
        if (!bin_ok(c, &c->cell[s][k], li))
            return &c->split[s];
    return &c->cell[s][mb];
}

int psi_calib_offsets(const psi_calib_t *c, const ps_ops_t *ops, const ps_query_t *w, double coverage, double *off_hp,
                      double *off_lp)
{
    int li = psi_calib_level_index(coverage);
    if (li < 0)
        return psi_error(PS_E_ARG, "coverage %g is outside 0.5..0.999", coverage);
    int s, mb;
    int rc = psi_calib_bin_key(ops, w, &s, &mb);
    if (rc != PS_OK)
        return rc;
    const calib_bin_t *b = pick(c, s, mb, li);
    if (!b)
        return psi_error(PS_E_INPUT, "the calibration's %d samples are too few for coverage %g", c->all.n, coverage);
    *off_hp = b->q[PS_SIDE_HP][li];
    *off_lp = b->q[PS_SIDE_LP][li];
    return PS_OK;
}

/* ---- JSON: {"min_bin", "n_rows", "n_experiments", "levels": [...],
 * "bins": [{"split": s|-1, "mem": m|-1, "n", "hp": [...], "lp": [...]}]} ---- */

/* Both NULL when an allocation inside cJSON failed (a calibration missing a
 * bin must not be saved as if whole). */
static cJSON *bin_json(const calib_bin_t *b, int s, int mb)
{
    cJSON *o = cJSON_CreateObject();
    int ok = o && cJSON_AddNumberToObject(o, "split", s) && cJSON_AddNumberToObject(o, "mem", mb) &&
             cJSON_AddNumberToObject(o, "n", b->n);
    for (int side = 0; side < 2 && ok; side++) {
        cJSON *a = cJSON_AddArrayToObject(o, side == 0 ? "hp" : "lp");
        ok = a != NULL;
        for (int i = 0; i < CALIB_NLEVELS && ok; i++) {
            cJSON *e = isfinite(b->q[side][i]) ? cJSON_CreateNumber(b->q[side][i]) : cJSON_CreateNull();
            ok = e && cJSON_AddItemToArray(a, e);
        }
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Add item to array a: 0 (item freed) when either is NULL. */
static int add_to(cJSON *a, cJSON *item)
{
    if (a && item && cJSON_AddItemToArray(a, item))
        return 1;
    cJSON_Delete(item);
    return 0;
}

cJSON *psi_calib_to_json(const psi_calib_t *c)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    int ok = cJSON_AddNumberToObject(o, "min_bin", c->min_bin) &&
             cJSON_AddNumberToObject(o, "n_rows", (double)c->n_rows) &&
             cJSON_AddNumberToObject(o, "n_experiments", (double)c->n_experiments);
    cJSON *lv = ok ? cJSON_AddArrayToObject(o, "levels") : NULL;
    for (int i = 0; i < CALIB_NLEVELS && ok; i++)
        ok = add_to(lv, cJSON_CreateNumber(psi_calib_level_at(i)));
    cJSON *bins = ok ? cJSON_AddArrayToObject(o, "bins") : NULL;
    ok = ok && add_to(bins, bin_json(&c->all, -1, -1));
    for (int s = 0; s < CALIB_NSPLIT && ok; s++)
        ok = add_to(bins, bin_json(&c->split[s], s, -1));
    for (int s = 0; s < CALIB_NSPLIT && ok; s++)
        for (int mb = 0; mb < CALIB_NMEM && ok; mb++)
            ok = add_to(bins, bin_json(&c->cell[s][mb], s, mb));
    if (ok && c->composed.n > 0) {
        cJSON *k = bin_json(&c->composed, -1, -1);
        ok = k && cJSON_AddNumberToObject(k, "window", c->composed_window);
        ok = ok && cJSON_AddItemToObject(o, "composed", k);
        if (!ok)
            cJSON_Delete(k);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int json_int(ps_json_doc_t *d, int o, const char *k, int lo, int hi, int *out)
{
    double v;
    if (psi_json_get_num(d, o, k, &v) != 0 || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* Array member key of object o with n elements, its first in *first; 0
 * when it is not. */
static int array_of(ps_json_doc_t *d, int o, const char *key, int n, int *first)
{
    int a = ps_json_get(d, o, key, 0);
    if (a < 0 || d->tok[a].type != PS_JSON_ARRAY || d->tok[a].size != n)
        return 0;
    *first = ps_json_child(d, a);
    return 1;
}

/* The quantile arrays of one bin (n samples) from its JSON; nonzero when
 * malformed. */
static int bin_from_json(ps_json_doc_t *d, int b, calib_bin_t *dst, int n)
{
    dst->n = n;
    for (int side = 0; side < 2; side++) {
        int e;
        if (!array_of(d, b, side == 0 ? "hp" : "lp", CALIB_NLEVELS, &e))
            return 1;
        for (int i = 0; i < CALIB_NLEVELS; i++, e = ps_json_next(d, e, 0)) {
            if (d->tok[e].type == PS_JSON_NULL)
                dst->q[side][i] = INFINITY;
            else if (ps_json_num(d, e, &dst->q[side][i]) != 0)
                return 1;
        }
    }
    return 0;
}

/* The bins of array token bins into c; nonzero when malformed. */
static int bins_from_json(ps_json_doc_t *d, int bins, psi_calib_t *c)
{
    for (int i = 0, b = ps_json_child(d, bins); i < d->tok[bins].size; i++, b = ps_json_next(d, b, 0)) {
        int s, mb, n;
        if (json_int(d, b, "split", -1, CALIB_NSPLIT - 1, &s) || json_int(d, b, "mem", -1, CALIB_NMEM - 1, &mb) ||
            json_int(d, b, "n", 0, 1 << 30, &n) || (s < 0 && mb >= 0))
            return 1;
        if (bin_from_json(d, b, s < 0 ? &c->all : mb < 0 ? &c->split[s] : &c->cell[s][mb], n))
            return 1;
    }
    return 0;
}

int psi_calib_from_json(ps_json_doc_t *d, int o, psi_calib_t **out)
{
    *out = NULL;
    if (o < 0)
        return PS_OK;
    psi_calib_t *c = psi_calloc(1, sizeof *c);
    if (!c)
        return PS_E_NOMEM;
    int nrows = 0, nexp = 0, e = -1, bins = ps_json_get(d, o, "bins", 0);
    int bad = d->tok[o].type != PS_JSON_OBJECT || json_int(d, o, "min_bin", 1, 1 << 30, &c->min_bin) ||
              json_int(d, o, "n_rows", 0, 1 << 30, &nrows) || json_int(d, o, "n_experiments", 0, 1 << 30, &nexp) ||
              bins < 0 || d->tok[bins].type != PS_JSON_ARRAY || !array_of(d, o, "levels", CALIB_NLEVELS, &e);
    for (int i = 0; !bad && i < CALIB_NLEVELS; i++, e = ps_json_next(d, e, 0)) {
        double v;
        bad = ps_json_num(d, e, &v) != 0 || fabs(v - psi_calib_level_at(i)) > 1e-9;
    }
    bad = bad || bins_from_json(d, bins, c);
    int k = ps_json_get(d, o, "composed", 0);
    if (!bad && k >= 0) {
        int n = 0, w = 0;
        bad = json_int(d, k, "n", 1, 1 << 30, &n) || json_int(d, k, "window", 1, 1 << 20, &w) ||
              bin_from_json(d, k, &c->composed, n);
        c->composed_window = w;
    }
    if (bad) {
        free(c);
        return psi_error(PS_E_INPUT, "model header: malformed calibration section");
    }
    c->n_rows = (size_t)nrows;
    c->n_experiments = (size_t)nexp;
    *out = c;
    return PS_OK;
}

int psi_calib_composed(const psi_calib_t *c, double coverage, double *off_hp, double *off_lp)
{
    *off_hp = *off_lp = 0;
    int li = psi_calib_level_index(coverage);
    if (!c || c->composed.n == 0 || li < 0 || !isfinite(c->composed.q[0][li]) || !isfinite(c->composed.q[1][li]))
        return 0;
    *off_hp = c->composed.q[PS_SIDE_HP][li];
    *off_lp = c->composed.q[PS_SIDE_LP][li];
    return 1;
}
