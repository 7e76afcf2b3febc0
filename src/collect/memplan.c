/* The collector's device memory layout (see memplan.h). */
#include "collect/memplan.h"

#include "common/common.h"

#include <stdlib.h>
#include <string.h>

static size_t align_up(size_t v)
{
    return (v + PS_MEMPLAN_ALIGN - 1) / PS_MEMPLAN_ALIGN * PS_MEMPLAN_ALIGN;
}

/* Weights first (one block per operator that has any), then activations in
 * model order: an operator's own input (when it cannot read its
 * predecessor's output), then its output. */
int psi_memplan_make(const psi_oplist_t *l, uintptr_t base, psi_memplan_t *out)
{
    memset(out, 0, sizeof *out);
    if (!l || l->n <= 0)
        return psi_error(PS_E_ARG, "memory plan: an empty operator list");
    psi_opbuf_t *op = psi_calloc((size_t)l->n, sizeof *op);
    if (!op)
        return PS_E_NOMEM;
    size_t at = 0;
    for (int i = 0; i < l->n; i++) {
        long long in, w, o;
        psi_op_tensor_elems(&l->ops[i], &in, &w, &o);
        op[i].in_bytes = (size_t)(in > 0 ? in : 1) * 2;
        op[i].w_bytes = (size_t)(w > 0 ? w : 0) * 2;
        op[i].out_bytes = (size_t)(o > 0 ? o : 1) * 2;
        if (op[i].w_bytes) {
            op[i].w = base + at;
            at += align_up(op[i].w_bytes);
            out->weight_bytes += op[i].w_bytes;
        }
    }
    for (int i = 0; i < l->n; i++) {
        if (i > 0 && op[i - 1].out_bytes >= op[i].in_bytes) {
            op[i].in = op[i - 1].out;
            op[i].chained = 1;
        } else {
            op[i].in = base + at;
            at += align_up(op[i].in_bytes);
            out->activation_bytes += op[i].in_bytes;
        }
        op[i].out = base + at;
        at += align_up(op[i].out_bytes);
        out->activation_bytes += op[i].out_bytes;
    }
    out->n = l->n;
    out->op = op;
    out->total_bytes = at;
    return 0;
}

void psi_memplan_free(psi_memplan_t *m)
{
    if (!m)
        return;
    free(m->op);
    m->op = NULL;
    m->n = 0;
}
