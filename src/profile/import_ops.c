/* The `ops` import format (pairsight_collect.h, ps_import_ops): the
 * measured rows of one model, batch and TPC count of an ops.csv, e.g. one
 * written by collect profile --tpcs N, as the single trace that
 * import --tpcs-from twin scales to the other counts. */
#include "common/common.h"
#include "profile/tables.h"

#include <stdio.h>
#include <string.h>

int ps_import_ops(const char *path, const ps_import_params_t *p, ps_ops_t **out, ps_import_info_t *info)
{
    if (!path || !p || !p->model || !out || !info)
        return psi_error(PS_E_ARG, "ps_import_ops: NULL argument");
    *out = NULL;
    memset(info, 0, sizeof *info);
    ps_ops_t *all = NULL;
    if (ps_ops_load(path, &all) != 0)
        return PS_E_INPUT;
    ps_ops_t *t = ps_ops_new();
    int rc = t ? 0 : PS_E_NOMEM;
    for (size_t i = 0; rc == 0 && i < all->n; i++) {
        const psi_op_row_t *r = &all->rows[i];
        if (strcmp(r->model, p->model) != 0 || r->batch != p->batch || r->tpcs != p->tpcs || r->source)
            continue;
        rc = ps_ops_append(t, r);
        info->ops++;
        info->total_ns += r->duration_ns;
        snprintf(info->gpu, sizeof info->gpu, "%s", r->gpu);
    }
    ps_ops_free(all);
    if (rc == 0 && t->n == 0)
        rc = psi_error(PS_E_INPUT, "%s: no measured rows of %s batch %d at %d TPCs", path, p->model, p->batch, p->tpcs);
    if (rc == 0)
        rc = psi_ops_index(t);
    snprintf(info->format, sizeof info->format, "ops.csv");
    if (rc != 0) {
        ps_ops_free(t);
        return rc;
    }
    *out = t;
    return 0;
}
