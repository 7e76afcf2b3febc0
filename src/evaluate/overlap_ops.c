/* Operator lists per range for the overlap predictor (overlap_ops.h). */
#include "evaluate/overlap_ops.h"

#include "profile/oplist.h"
#include "common/common.h"
#include "profile/abacus.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char model[64];
    int batch, seq_len, groups;
    double *g; /* [groups * 3]: flops, bytes, kernels of each group */
} entry_t;

struct psi_ov_ops {
    entry_t *e;
    int n;
    size_t cap;
    long unmatched;
};

void psi_ov_ops_free(psi_ov_ops_t *o)
{
    if (!o)
        return;
    for (int i = 0; i < o->n; i++)
        free(o->e[i].g);
    free(o->e);
    free(o);
}

int psi_ov_op_group(const char *model, int groups, const char *name)
{
    char buf[1024];
    for (int g = 0; g < groups; g++) {
        if (psi_abacus_group_paths(model, g, buf, sizeof buf) == 0)
            continue;
        char *save = NULL;
        for (char *p = strtok_r(buf, " ", &save); p; p = strtok_r(NULL, " ", &save))
            if (psi_abacus_in_path(name, p))
                return g;
    }
    return -1;
}

static int add_list(psi_ov_ops_t *o, const psi_oplist_t *l)
{
    int groups = psi_abacus_model_ops(l->model);
    if (groups == 0)
        return PS_OK; /* a model Abacus did not run */
    void *grown = o->e;
    if (psi_array_grow(&grown, (size_t)o->n, &o->cap, sizeof *o->e, 16) != PS_OK)
        return PS_E_NOMEM;
    o->e = grown;
    entry_t *e = &o->e[o->n];
    snprintf(e->model, sizeof e->model, "%s", l->model);
    e->batch = l->batch;
    e->seq_len = l->seq_len;
    e->groups = groups;
    if (!(e->g = psi_calloc((size_t)groups * 3, sizeof *e->g)))
        return PS_E_NOMEM;
    o->n++;
    for (int i = 0; i < l->n; i++) {
        int g = psi_ov_op_group(l->model, groups, l->ops[i].name);
        if (g < 0) {
            o->unmatched++;
            continue;
        }
        e->g[3 * g] += psi_op_flops(&l->ops[i]);
        e->g[3 * g + 1] += psi_op_bytes(&l->ops[i]);
        e->g[3 * g + 2] += 1;
    }
    return PS_OK;
}

int psi_ov_ops_load(const char *dir, psi_ov_ops_t **out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return psi_error(PS_E_IO, "%s: %s", dir, strerror(errno));
    psi_ov_ops_t *o = psi_calloc(1, sizeof *o);
    int rc = o ? PS_OK : PS_E_NOMEM;
    for (struct dirent *de; rc == PS_OK && (de = readdir(d));) {
        if (de->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        psi_oplist_t *l = NULL;
        if ((rc = psi_oplist_read(path, &l)) == PS_OK)
            rc = add_list(o, l);
        psi_oplist_free(l);
    }
    closedir(d);
    if (rc != PS_OK) {
        psi_ov_ops_free(o);
        return rc;
    }
    *out = o;
    return PS_OK;
}

int psi_ov_ops_range(const psi_ov_ops_t *o, const psi_ov_slot_t *x, double *flops, double *bytes, double *kernels)
{
    for (int i = 0; o && i < o->n; i++) {
        const entry_t *e = &o->e[i];
        if (e->batch != x->batch || e->seq_len != x->seq_len || strcmp(e->model, x->model) != 0)
            continue;
        *flops = *bytes = *kernels = 0;
        for (int g = x->op_start; g < x->op_end && g < e->groups; g++) {
            *flops += e->g[3 * g];
            *bytes += e->g[3 * g + 1];
            *kernels += e->g[3 * g + 2];
        }
        return 0;
    }
    return -1;
}
