/* The public calls on operator lists (pairsight_collect.h, "Collector front
 * end"): thin wrappers of oplist.c and zoo.c, for the CLI's `collect ops`
 * and the users' lists it registers. */
#include "profile/oplist.h"
#include "common/common.h"

#include <string.h>

int ps_oplist_build(const char *model, int batch, int seq_len, ps_oplist_t **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_oplist_build: NULL argument");
    return psi_zoo_build(model, batch, seq_len, out);
}

int ps_oplist_read(const char *path, ps_oplist_t **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_oplist_read: NULL argument");
    if (!path) {
        *out = NULL;
        return psi_error(PS_E_ARG, "ps_oplist_read: NULL argument");
    }
    return psi_oplist_read(path, out);
}

int ps_oplist_write(const ps_oplist_t *l, FILE *f)
{
    if (!l || !f)
        return psi_error(PS_E_ARG, "ps_oplist_write: NULL argument");
    return psi_oplist_write(l, f);
}

void ps_oplist_free(ps_oplist_t *l) { psi_oplist_free(l); }

int ps_oplist_info(const ps_oplist_t *l, ps_oplist_info_t *out)
{
    if (!l || !out)
        return psi_error(PS_E_ARG, "ps_oplist_info: NULL argument");
    memset(out, 0, sizeof *out);
    snprintf(out->model, sizeof out->model, "%s", l->model);
    out->batch = l->batch;
    out->seq_len = l->seq_len;
    out->n_ops = l->n;
    return PS_OK;
}

int ps_oplist_op_cost(const ps_oplist_t *l, int i, double *out_flops, double *out_bytes)
{
    if (!l || i < 0 || i >= l->n)
        return psi_error(PS_E_ARG, "ps_oplist_op_cost: operator %d of %d", i, l ? l->n : 0);
    if (out_flops)
        *out_flops = psi_op_flops(&l->ops[i]);
    if (out_bytes)
        *out_bytes = psi_op_bytes(&l->ops[i]);
    return PS_OK;
}

const char *ps_oplist_name(int i) { return psi_oplist_user_name(i); }

int ps_oplist_registered(const char *name, int *out_batch)
{
    const psi_oplist_t *u = psi_oplist_user(name);
    if (u && out_batch)
        *out_batch = u->batch;
    return u ? 1 : 0;
}
