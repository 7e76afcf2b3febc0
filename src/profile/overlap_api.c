/* The public calls of the overlap table and the Abacus import
 * (include/pairsight_overlap.h): thin wrappers of profile/overlap.h and
 * profile/abacus.h, whose psi_overlap_t is the public ps_overlap_t. */
#include "common/common.h"
#include "profile/abacus.h"
#include "profile/overlap.h"

int ps_overlap_load(const char *path, ps_overlap_t **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_overlap_load: NULL out");
    *out = NULL;
    if (!path)
        return psi_error(PS_E_ARG, "ps_overlap_load: NULL path");
    return psi_overlap_load(path, out);
}

int ps_overlap_save(const ps_overlap_t *t, const char *path)
{
    if (!t || !path)
        return psi_error(PS_E_ARG, "ps_overlap_save: NULL argument");
    return psi_overlap_save(t, path);
}

void ps_overlap_free(ps_overlap_t *t) { psi_overlap_free(t); }

size_t ps_overlap_count(const ps_overlap_t *t) { return t ? t->n : 0; }

size_t ps_overlap_rows(const ps_overlap_t *t)
{
    size_t rows = 0;
    for (size_t i = 0; t && i < t->n; i++)
        rows += (size_t)t->exps[i].k;
    return rows;
}

int ps_overlap_experiment(const ps_overlap_t *t, size_t i, ps_ov_experiment_t *out)
{
    if (!t || !out)
        return psi_error(PS_E_ARG, "ps_overlap_experiment: NULL argument");
    if (i >= t->n)
        return psi_error(PS_E_ARG, "ps_overlap_experiment: experiment %zu of %zu", i, t->n);
    const psi_ov_exp_t *e = &t->exps[i];
    *out = (ps_ov_experiment_t){.id = e->id,
                                .gpu = e->gpu,
                                .setting = e->setting,
                                .mechanism = e->mechanism,
                                .k = e->k,
                                .active = psi_ov_active(e),
                                .median_us = e->median_us,
                                .mean_us = e->mean_us,
                                .std_us = e->std_us};
    return PS_OK;
}

int ps_abacus_import(const char *repo, const char *rev, ps_overlap_t **out, ps_abacus_info_t *info)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_abacus_import: NULL out");
    *out = NULL;
    if (!repo || !info)
        return psi_error(PS_E_ARG, "ps_abacus_import: NULL argument");
    return psi_abacus_import(repo, rev, out, info);
}
