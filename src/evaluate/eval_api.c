/* The public calls of the experiments and the report (pairsight_eval.h):
 * thin wrappers of experiments.c and report.c around an opaque result. */
#include "common/common.h"
#include "evaluate/experiments.h"

#include <stdlib.h>

struct ps_eval {
    psi_eval_results_t r;
};

int ps_experiments_parse(const char *list, int *out_mask)
{
    if (!list || !out_mask)
        return psi_error(PS_E_ARG, "ps_experiments_parse: NULL argument");
    return psi_experiments_parse(list, out_mask);
}

ps_eval_params_t ps_eval_default_params(void) { return psi_eval_default_params(); }

int ps_eval_run(const ps_eval_params_t *p, ps_eval_t **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_eval_run: NULL out");
    *out = NULL;
    if (!p)
        return psi_error(PS_E_ARG, "ps_eval_run: NULL parameters");
    ps_eval_t *e = psi_calloc(1, sizeof *e);
    if (!e)
        return PS_E_NOMEM;
    int rc = psi_eval_run(p, &e->r);
    if (rc != 0) {
        ps_eval_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

int ps_eval_json(const ps_eval_t *e, char **out)
{
    if (!e || !out)
        return psi_error(PS_E_ARG, "ps_eval_json: NULL argument");
    *out = psi_eval_json(&e->r);
    return *out ? 0 : psi_error(PS_E_NOMEM, "out of memory");
}

int ps_eval_print(const ps_eval_t *e, FILE *f)
{
    if (!e || !f)
        return psi_error(PS_E_ARG, "ps_eval_print: NULL argument");
    psi_eval_print(&e->r, f);
    return 0;
}

int ps_eval_report_write(const ps_eval_t *e, const ps_ops_t *ops, const ps_coexec_t *cx, const char *coexec_path,
                         const char *path)
{
    if (!e || !ops || !cx || !path)
        return psi_error(PS_E_ARG, "ps_eval_report_write: NULL argument");
    psi_report_meta_t m;
    psi_report_meta_read(coexec_path, cx, &m);
    return psi_report_write(&e->r, ops, cx, &m, path);
}

void ps_eval_free(ps_eval_t *e)
{
    if (!e)
        return;
    psi_eval_results_clear(&e->r);
    free(e);
}
