/* What the two importers (Nsight Compute CSV, PyTorch trace) share: their
 * parameters, the rows they make and how an import ends. */
#include "common/common.h"
#include "profile/profile_internal.h"

int ps_import_check_params(const ps_import_params_t *p)
{
    if (!p || !p->gpu || !*p->gpu || !p->model || !*p->model)
        return ps_error(PS_E_ARG, "import: the GPU and model names are required");
    if (p->batch <= 0)
        return ps_error(PS_E_ARG, "import: batch must be > 0 (got %d)", p->batch);
    if (p->tpcs <= 0)
        return ps_error(PS_E_ARG, "import: tpcs must be > 0 (got %d)", p->tpcs);
    return PS_OK;
}

int ps_import_add(ps_ops_t *t, const ps_import_params_t *p, int op, const char *name,
                  double duration_ns, const ps_counters_t *c)
{
    ps_op_row_t r = {.gpu = p->gpu, .model = p->model, .batch = p->batch, .op = op,
                     .name = name, .tpcs = p->tpcs, .duration_ns = duration_ns,
                     .intensity = PS_INTENSITY_NONE};
    r.c = c ? *c : (ps_counters_t){NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    return ps_ops_append(t, &r);
}

int ps_import_finish(ps_ops_t *t, const char *path, ps_ops_t **out)
{
    int rc = PS_OK;
    if (t->n == 0)
        rc = ps_error(PS_E_INPUT, "%s: no kernels found: nothing to import", path);
    else if ((rc = ps_ops_index(t)) != PS_OK)
        ps_error_prefix(rc, path);
    if (rc != PS_OK) {
        ps_ops_free(t);
        return rc;
    }
    *out = t;
    return PS_OK;
}
