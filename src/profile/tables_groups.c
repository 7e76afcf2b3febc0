/*
 * The group counts that `pairsight check` prints for each table: distinct
 * (gpu, model, batch) sides of coexec.csv, workloads of workload_scaling.csv,
 * co-locations of colocations.csv; and the sizes k of a colocations table's
 * co-locations (ps_colocations_ks).
 */
#include "common/common.h"
#include "profile/profile_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int psi_colo_eq_id(const void *rows, size_t a, size_t b)
{
    const psi_colocation_row_t *r = rows;
    return r[a].colocation == r[b].colocation;
}

/* Distinct values of a key over n rows, by the caller's hash and eq. */
static size_t count_distinct(size_t n, uint64_t (*hash)(const void *, size_t), psi_row_eq_fn eq, const void *ctx)
{
    psi_keyset_t set = {0};
    if (psi_keyset_init(&set, n) != PS_OK)
        return 0;
    size_t k = 0;
    for (size_t r = 0; r < n; r++)
        if (psi_keyset_insert(&set, r, hash(ctx, r), eq, ctx) == SIZE_MAX)
            k++;
    psi_keyset_free(&set);
    return k;
}

/* The coexec sides as 2n virtual rows: i < n is the HP side of row i, i >= n
 * the LP side of row i - n. */
static void coexec_side(const ps_coexec_t *t, size_t i, const char **model, int *batch)
{
    const psi_coexec_row_t *r = &t->rows[i % t->n];
    *model = i < t->n ? r->hp_model : r->lp_model;
    *batch = i < t->n ? r->hp_batch : r->lp_batch;
}
static uint64_t coexec_side_hash(const void *ctx, size_t i)
{
    const ps_coexec_t *t = ctx;
    const char *m;
    int b;
    coexec_side(t, i, &m, &b);
    return psi_hash_mix(psi_hash_ptr(psi_hash_ptr(0, t->rows[i % t->n].gpu), m), (uint64_t)b);
}
static int coexec_side_eq(const void *ctx, size_t x, size_t y)
{
    const ps_coexec_t *t = ctx;
    const char *ma, *mb;
    int ba, bb;
    coexec_side(t, x, &ma, &ba);
    coexec_side(t, y, &mb, &bb);
    return ma == mb && ba == bb && t->rows[x % t->n].gpu == t->rows[y % t->n].gpu;
}

static uint64_t scaling_wl_hash(const void *rows, size_t i)
{
    const psi_scaling_row_t *r = (const psi_scaling_row_t *)rows + i;
    return psi_hash_ptr(psi_hash_ptr(0, r->gpu), r->workload);
}
static int scaling_wl_eq(const void *rows, size_t a, size_t b)
{
    const psi_scaling_row_t *r = rows;
    return r[a].gpu == r[b].gpu && r[a].workload == r[b].workload;
}
static uint64_t colo_id_hash(const void *rows, size_t i)
{
    return psi_hash_ptr(0, ((const psi_colocation_row_t *)rows)[i].colocation);
}

size_t psi_coexec_groups(const void *t)
{
    if (((const ps_coexec_t *)t)->n == 0)
        return 0;
    return count_distinct(2 * ((const ps_coexec_t *)t)->n, coexec_side_hash, coexec_side_eq, t);
}

size_t psi_scaling_groups(const void *t)
{
    const ps_scaling_t *s = t;
    return count_distinct(s->n, scaling_wl_hash, scaling_wl_eq, s->rows);
}

size_t psi_colocations_groups(const void *t)
{
    const ps_colocations_t *c = t;
    return count_distinct(c->n, colo_id_hash, psi_colo_eq_id, c->rows);
}

typedef struct {
    const char *id;
    int slot;
} idslot_t;

static int cmp_idslot(const void *a, const void *b)
{
    const idslot_t *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c ? c : (x->slot > y->slot) - (x->slot < y->slot);
}

int ps_colocations_ks(const ps_colocations_t *t, unsigned *out)
{
    if (out)
        *out = 0;
    if (!t || !out)
        return psi_error(PS_E_ARG, "ps_colocations_ks: NULL argument");
    idslot_t *v = psi_malloc((t->n + 1) * sizeof *v);
    if (!v)
        return PS_E_NOMEM;
    for (size_t i = 0; i < t->n; i++)
        v[i] = (idslot_t){t->rows[i].colocation, t->rows[i].slot};
    qsort(v, t->n, sizeof *v, cmp_idslot);
    /* A co-location's last slot in order is its size k. */
    for (size_t i = 0; i < t->n; i++)
        if (i + 1 == t->n || strcmp(v[i].id, v[i + 1].id) != 0)
            *out |= 1u << (v[i].slot < 31 ? v[i].slot : 31);
    free(v);
    return PS_OK;
}
