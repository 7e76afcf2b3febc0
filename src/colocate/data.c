/* The co-location data set: workloads with their metrics and solo scaling
 * curves, co-locations grouped by id (any k), and the features of each
 * predictor built from them. */
#include "colocate/colocate.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A workload is named by (gpu, workload); a NULL or empty gpu on either
 * side matches any, so that one table may cover several GPUs. */
static int find_workload(const cl_data_t *d, const char *gpu, const char *name)
{
    for (int i = 0; i < d->nw; i++)
        if (strcmp(d->w[i].name, name) == 0 &&
            (!gpu || !*gpu || !d->w[i].gpu || !*d->w[i].gpu || strcmp(d->w[i].gpu, gpu) == 0))
            return i;
    return -1;
}

/* A workload's model: its id with "_batch<digits>" removed, so that
 * "bert-base-cased_batch8-inf" and "bert-base-cased_batch2-inf" share
 * "bert-base-cased-inf" while inference and training stay apart. */
static char *workload_group(const char *name)
{
    char *g = psi_strdup(name);
    if (!g)
        return NULL;
    char *b = strstr(g, "_batch");
    if (b) {
        char *e = b + 6;
        while (*e >= '0' && *e <= '9')
            e++;
        memmove(b, e, strlen(e) + 1);
    }
    return g;
}

void psi_cl_data_free(cl_data_t *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->nw; i++) {
        free((char *)d->w[i].group);
        free(d->w[i].scal_share);
        free(d->w[i].scal_tput);
    }
    for (int i = 0; i < d->nc; i++) {
        free(d->c[i].w);
        free(d->c[i].share);
        free(d->c[i].tput);
        free(d->c[i].slot);
    }
    free(d->w);
    free(d->c);
    free(d);
}

static int load_workloads(cl_data_t *d, const ps_workloads_t *w)
{
    d->w = psi_calloc(w->n ? w->n : 1, sizeof *d->w);
    if (!d->w)
        return PS_E_NOMEM;
    for (size_t i = 0; i < w->n; i++) {
        const psi_workload_row_t *r = &w->rows[i];
        if (find_workload(d, r->gpu, r->workload) >= 0)
            return psi_error(PS_E_INPUT, "workloads: row %zu: duplicate workload '%s'", i + 1, r->workload);
        cl_workload_t *x = &d->w[d->nw++];
        x->name = r->workload;
        x->gpu = r->gpu;
        if (!(x->group = workload_group(r->workload)))
            return PS_E_NOMEM;
        double v[CW_N] = {
            r->threads,           r->registers,          r->static_smem,   r->sm_tput_pct, r->dram_tput_pct,
            r->mem_tput_pct,      r->sm_busy_pct,        r->mem_busy_pct,  r->memcap_gb,   r->stall_long_scoreboard,
            r->stall_lg_throttle, r->stall_mio_throttle, r->exclusive_tput};
        memcpy(x->f, v, sizeof v);
        if (!(x->f[CW_EXCL] > 0))
            return psi_error(PS_E_INPUT, "workloads: '%s': exclusive_tput must be > 0", r->workload);
    }
    return 0;
}

static int load_scaling(cl_data_t *d, const ps_scaling_t *s)
{
    if (!s)
        return 0;
    for (size_t i = 0; i < s->n; i++) {
        const psi_scaling_row_t *r = &s->rows[i];
        int wi = find_workload(d, r->gpu, r->workload);
        if (wi < 0 || !(r->tput > 0))
            continue; /* a curve of a workload nobody uses is harmless */
        cl_workload_t *x = &d->w[wi];
        int *sh = psi_realloc(x->scal_share, (size_t)(x->n_scal + 1) * sizeof *sh);
        if (!sh)
            return PS_E_NOMEM;
        x->scal_share = sh;
        double *tp = psi_realloc(x->scal_tput, (size_t)(x->n_scal + 1) * sizeof *tp);
        if (!tp)
            return PS_E_NOMEM;
        x->scal_tput = tp;
        int j = x->n_scal++;
        while (j > 0 && sh[j - 1] > r->share_pct) { /* keep ascending */
            sh[j] = sh[j - 1];
            tp[j] = tp[j - 1];
            j--;
        }
        sh[j] = r->share_pct;
        tp[j] = r->tput;
    }
    return 0;
}

static int find_coloc(const cl_data_t *d, const char *id, int origin)
{
    /* Rows of one co-location are usually adjacent: search backwards. */
    for (int i = d->nc - 1; i >= 0; i--)
        if (d->c[i].origin == origin && strcmp(d->c[i].id, id) == 0)
            return i;
    return -1;
}

static int load_colocations(cl_data_t *d, const ps_colocations_t *c, int origin)
{
    /* Which table a message is about: the training or the test co-locations. */
    const char *what = origin ? "test colocations" : "colocations";
    if (!c)
        return 0;
    cl_coloc_t *nc = psi_realloc(d->c, (size_t)(d->nc + (int)c->n + 1) * sizeof *nc);
    if (!nc)
        return PS_E_NOMEM;
    d->c = nc;
    for (size_t i = 0; i < c->n; i++) {
        const psi_colocation_row_t *r = &c->rows[i];
        int wi = find_workload(d, r->gpu, r->workload);
        if (wi < 0)
            return psi_error(PS_E_INPUT, "%s: row %zu: workload '%s' (gpu %s) is not in workloads.csv", what, i + 1,
                             r->workload, r->gpu ? r->gpu : "any");
        if (r->share_pct <= 0 || r->share_pct > 100)
            return psi_error(PS_E_INPUT, "%s: row %zu: share_pct %d outside (0,100]", what, i + 1, r->share_pct);
        if (r->tput <= 0)
            return psi_error(PS_E_INPUT, "%s: row %zu: tput must be > 0 or empty", what, i + 1);
        int ci = find_coloc(d, r->colocation, origin);
        if (ci < 0) {
            ci = d->nc++;
            memset(&d->c[ci], 0, sizeof d->c[ci]);
            d->c[ci].id = r->colocation;
            d->c[ci].origin = origin;
        }
        cl_coloc_t *x = &d->c[ci];
        if (x->k == 64)
            return psi_error(PS_E_INPUT, "%s: '%s': more than 64 workloads", what, x->id);
        size_t k = (size_t)x->k + 1;
        int *w = psi_realloc(x->w, k * sizeof *w);
        if (w)
            x->w = w;
        int *sh = psi_realloc(x->share, k * sizeof *sh);
        if (sh)
            x->share = sh;
        double *tp = psi_realloc(x->tput, k * sizeof *tp);
        if (tp)
            x->tput = tp;
        int *sl = psi_realloc(x->slot, k * sizeof *sl);
        if (sl)
            x->slot = sl;
        if (!w || !sh || !tp || !sl)
            return PS_E_NOMEM;
        /* Insert in slot order (rows usually come sorted already). */
        int j = x->k++;
        while (j > 0 && sl[j - 1] > r->slot) {
            w[j] = w[j - 1];
            sh[j] = sh[j - 1];
            tp[j] = tp[j - 1];
            sl[j] = sl[j - 1];
            j--;
        }
        if (j > 0 && sl[j - 1] == r->slot)
            return psi_error(PS_E_INPUT, "%s: row %zu: '%s' has slot %d twice", what, i + 1, x->id, r->slot);
        w[j] = wi;
        sh[j] = r->share_pct;
        tp[j] = r->tput > 0 ? r->tput : NAN;
        sl[j] = r->slot;
    }
    return 0;
}

/* Every co-location of the table (origin) holds k >= 2 workloads in slots
 * 1..k (colocations.csv; `pairsight check` asks the same): one left alone
 * by a lost row is not a co-location, and a slot gap is a lost row too. */
static int check_slots(const cl_data_t *d, const ps_colocations_t *c, int origin)
{
    const char *what = origin ? "test colocations" : "colocations";
    for (int i = 0; c && i < d->nc; i++) {
        const cl_coloc_t *x = &d->c[i];
        int s = 0;
        while (s < x->k && x->slot[s] == s + 1)
            s++;
        if (x->origin != origin || (x->k >= 2 && s == x->k))
            continue;
        size_t row = 0;
        while (row + 1 < c->n && strcmp(c->rows[row].colocation, x->id) != 0)
            row++;
        if (x->k < 2)
            return psi_error(PS_E_INPUT,
                             "%s: row %zu: co-location '%s' has 1 workload: a co-location holds k >= 2 "
                             "(slots 1..k; a row lost?)",
                             what, row + 1, x->id);
        return psi_error(PS_E_INPUT,
                         "%s: row %zu: co-location '%s' has slot %d but %d rows: its k workloads take "
                         "slots 1..k",
                         what, row + 1, x->id, x->slot[x->k - 1], x->k);
    }
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Number the distinct workload multisets (the same workloads at any shares). */
static void number_sets(cl_data_t *d)
{
    d->n_sets = 0;
    for (int i = 0; i < d->nc; i++) {
        cl_coloc_t *x = &d->c[i];
        int a[64];
        memcpy(a, x->w, (size_t)x->k * sizeof *a);
        qsort(a, (size_t)x->k, sizeof *a, cmp_int);
        x->set = -1;
        for (int j = 0; j < i && x->set < 0; j++) {
            const cl_coloc_t *y = &d->c[j];
            if (y->k != x->k)
                continue;
            int b[64];
            memcpy(b, y->w, (size_t)y->k * sizeof *b);
            qsort(b, (size_t)y->k, sizeof *b, cmp_int);
            if (memcmp(a, b, (size_t)x->k * sizeof *a) == 0)
                x->set = y->set;
        }
        if (x->set < 0)
            x->set = d->n_sets++;
    }
}

int psi_cl_data_build(const ps_workloads_t *w, const ps_scaling_t *scaling, const ps_colocations_t *c,
                      const ps_colocations_t *c2, cl_data_t **out)
{
    *out = NULL;
    if (!w || !c)
        return psi_error(PS_E_ARG, "colocate: workloads and colocations are required");
    cl_data_t *d = psi_calloc(1, sizeof *d);
    if (!d)
        return PS_E_NOMEM;
    int rc = load_workloads(d, w);
    if (!rc)
        rc = load_scaling(d, scaling);
    if (!rc)
        rc = load_colocations(d, c, 0);
    if (!rc)
        rc = load_colocations(d, c2, 1);
    if (!rc)
        rc = check_slots(d, c, 0);
    if (!rc)
        rc = check_slots(d, c2, 1);
    if (rc) {
        psi_cl_data_free(d);
        return rc;
    }
    for (int i = 0; i < d->nc; i++) {
        cl_coloc_t *x = &d->c[i];
        x->complete = 1;
        for (int s = 0; s < x->k; s++)
            if (isnan(x->tput[s]))
                x->complete = 0;
    }
    number_sets(d);
    for (int i = 0; i < d->nw; i++)
        for (int j = 0; j < CW_N; j++)
            d->has[j] |= !isnan(d->w[i].f[j]);
    *out = d;
    return 0;
}

double psi_cl_solo(const cl_data_t *d, int wi, int share)
{
    const cl_workload_t *x = &d->w[wi];
    if (x->n_scal == 0)
        return x->f[CW_EXCL] * (share >= 100 ? 1.0 : share / 100.0);
    if (share <= x->scal_share[0])
        return x->scal_tput[0] * share / x->scal_share[0];
    for (int j = 1; j < x->n_scal; j++)
        if (share <= x->scal_share[j]) {
            double t = (double)(share - x->scal_share[j - 1]) / (x->scal_share[j] - x->scal_share[j - 1]);
            return x->scal_tput[j - 1] + t * (x->scal_tput[j] - x->scal_tput[j - 1]);
        }
    return x->scal_tput[x->n_scal - 1];
}

int psi_cl_measured_rows(const cl_data_t *d, const int *train, int n_train, wrow_t **out, int *n_out)
{
    int n = 0;
    for (int i = 0; i < n_train; i++)
        n += d->c[train[i]].k;
    wrow_t *r = psi_malloc((size_t)n * sizeof *r + 1);
    if (!r)
        return PS_E_NOMEM;
    n = 0;
    for (int i = 0; i < n_train; i++) {
        const cl_coloc_t *c = &d->c[train[i]];
        for (int s = 0; s < c->k; s++)
            if (!isnan(c->tput[s])) {
                r[n].c = train[i];
                r[n].s = s;
                r[n].w = c->w[s];
                r[n].ratio = c->tput[s] / psi_cl_solo(d, c->w[s], c->share[s]);
                n++;
            }
    }
    *out = r;
    *n_out = n;
    return 0;
}

double ps_coloc_solo(const ps_workloads_t *w, const ps_scaling_t *scaling, const char *gpu, const char *name,
                     int share_pct)
{
    ps_colocations_t *none = ps_colocations_new();
    cl_data_t *d = NULL;
    double v = NAN;
    if (none && psi_cl_data_build(w, scaling, none, NULL, &d) == 0) {
        int wi = find_workload(d, gpu, name);
        if (wi >= 0)
            v = psi_cl_solo(d, wi, share_pct);
    }
    psi_cl_data_free(d);
    ps_colocations_free(none);
    return v;
}
