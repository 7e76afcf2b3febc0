/* The simulator's calls of pairsight_collect.h that the CLI's simulate,
 * import --tpcs-from twin and collect twin use: thin wrappers of
 * workloads.c, derive.c, twin_oplist.c and twin_scale.c. */
#include "common/common.h"
#include "simulate/derive.h"
#include "simulate/sim.h"

const char *ps_sim_model_name(size_t i)
{
    size_t n = 0;
    while (psi_sim_model_names[n])
        n++;
    return i < n ? psi_sim_model_names[i] : NULL;
}

int ps_sim_derive_write(const ps_ops_t *ops, const char *gpu, FILE *f)
{
    if (!ops || !gpu || !f)
        return psi_error(PS_E_ARG, "ps_sim_derive_write: NULL argument");
    return psi_sim_derive_write(ops->rows, ops->n, gpu, f);
}

int ps_sim_twin_predict(const char *gpu, int seq_len, const ps_coexec_row_t *q, size_t n, ps_twin_pred_t *out)
{
    if (!gpu || (n && (!q || !out)))
        return psi_error(PS_E_ARG, "ps_sim_twin_predict: NULL argument");
    return psi_sim_twin_predict(gpu, seq_len, q, n, out);
}

int ps_ops_twin_scale(const ps_ops_t *in, const char *model, int batch, int traced, const ps_oplist_t *l, const int *at,
                      int n_at, ps_ops_t **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_ops_twin_scale: NULL argument");
    *out = NULL;
    if (!in || !model || !l || !at)
        return psi_error(PS_E_ARG, "ps_ops_twin_scale: NULL argument");
    if (n_at < 1)
        return psi_error(PS_E_ARG, "ps_ops_twin_scale: no TPC count to write");
    const sim_twin_scale_t sc = {.model = model, .batch = batch, .traced = traced, .l = l, .at = at, .n_at = n_at};
    return psi_ops_twin_scale(in, &sc, out);
}
