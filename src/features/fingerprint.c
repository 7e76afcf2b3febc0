/*
 * The fingerprint of a campaign's experiment set: what a model records of
 * the data it was split from, so that an evaluation can tell that it scores
 * the model on the same campaign and split (and not on its training rows).
 */
#include "features/features.h"

#include "common/common.h"

#include <stdint.h>
#include <stdlib.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int psi_coexec_fingerprint(const ps_coexec_t *cx, int window, uint64_t *out)
{
    if (!cx || !out)
        return psi_error(PS_E_ARG, "psi_coexec_fingerprint: NULL argument");
    uint64_t *h = psi_malloc((cx->n ? cx->n : 1) * sizeof *h);
    if (!h)
        return PS_E_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < cx->n; i++) {
        const psi_coexec_row_t *r = &cx->rows[i];
        if (r->hp_len <= window && r->lp_len <= window)
            h[n++] = psi_experiment_hash(r->experiment ? r->experiment : "", 0);
    }
    qsort(h, n, sizeof *h, cmp_u64);
    /* The distinct names in hash order: independent of row order and runs. */
    uint64_t f = psi_mix64(0x70616972736967ULL ^ (uint64_t)window);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || h[i] != h[i - 1])
            f = psi_mix64(f ^ h[i]);
    free(h);
    *out = f ? f : 1; /* 0 means "not recorded" in a model */
    return PS_OK;
}
