/* The rows of coexec.csv and the standalone sums of ops.csv segments
 * through pairsight_core.h (ps_coexec_row, ps_ops_segment_ns). */
#include "common/common.h"
#include "profile/tables.h"

/* Rows and segment sums through pairsight_core.h. */
int ps_coexec_row(const ps_coexec_t *t, size_t i, ps_coexec_row_t *out)
{
    if (!t || !out || i >= t->n)
        return psi_error(PS_E_ARG, "ps_coexec_row: no row %zu", i);
    *out = t->rows[i];
    return 0;
}

int ps_ops_segment_ns(const ps_ops_t *ops, const char *gpu, const char *model, int batch, int start, int len, int tpcs,
                      double *out_ns)
{
    if (!out_ns)
        return psi_error(PS_E_ARG, "ps_ops_segment_ns: NULL argument");
    *out_ns = NAN;
    if (!ops || !gpu || !model)
        return psi_error(PS_E_ARG, "ps_ops_segment_ns: NULL argument");
    const psi_op_group_t *g = psi_ops_find(ops, gpu, model, batch);
    double ns = g ? psi_group_segment_ns(g, start, len, tpcs) : NAN;
    if (isnan(ns))
        return psi_error(PS_E_INPUT, "%s batch %d on %s: no standalone time of operators %d..%d at %d TPCs", model,
                         batch, gpu, start, start + len - 1, tpcs);
    *out_ns = ns;
    return 0;
}
