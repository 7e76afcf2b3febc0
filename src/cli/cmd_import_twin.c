/* pairsight import ... --oplist L --tpcs-from twin: one trace at one TPC
 * count, every other count from the twin's ratios (src/simulate/twin_scale.c,
 * docs/profile.md); and the `ops` input format (an ops.csv measured at one
 * count, e.g. by collect profile --tpcs N). */
#include "cli/cli.h"
#include "cli/cmd_import_twin.h"

#include <stdlib.h>
#include <string.h>

/* "8,16,20-30" into at[0..*n), each in 1..max, no repeats. */
static int parse_counts(const char *s, int max, int *at, int *n)
{
    char used[IMPORT_TWIN_MAX + 1] = {0};
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            return -1;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
            if (end == s)
                return -1;
        }
        if (a < 1 || b < a || b > max || b > IMPORT_TWIN_MAX || (*end && *end != ','))
            return -1;
        for (long t = a; t <= b; t++)
            if (!used[t]) {
                used[t] = 1;
                at[(*n)++] = (int)t;
            }
        s = *end ? end + 1 : end;
    }
    return *n > 0 ? 0 : -1;
}

/* The TPC counts to write: LIST, or every count 1..the GPU's. */
static int counts(const char *gpu, const char *list, int traced, int *at, int *n)
{
    ps_gpu_info_t gi, *g = &gi;
    if (!gpu || ps_gpu_find(gpu, g) != 0)
        return cli_fail(CLI_BAD_INPUT, "import", "--tpcs-from twin: the GPU '%s' is not in the catalog", gpu);
    *n = 0;
    if (!list) {
        for (int t = 1; t <= g->tpcs && *n < IMPORT_TWIN_MAX; t++)
            at[(*n)++] = t;
        return CLI_OK;
    }
    if (parse_counts(list, g->tpcs, at, n) != 0)
        return cli_fail(CLI_USAGE, "import",
                        "--at: bad value '%s': expected TPC counts or ranges A-B in 1..%d (the %s)", list, g->tpcs,
                        g->name);
    int has = 0;
    for (int i = 0; i < *n; i++)
        has |= at[i] == traced;
    if (!has)
        at[(*n)++] = traced;
    return CLI_OK;
}

/* Replace *ops (one trace at p->tpcs) by the list's operators at every
 * count of o->at (default: 1..the GPU's). CLI_OK or the exit code. */
static int import_twin_apply(const import_twin_t *o, const ps_import_params_t *p, const char *gpu, ps_ops_t **ops)
{
    if (strcmp(o->from, "twin") != 0)
        return cli_fail(CLI_USAGE, "import", "--tpcs-from: unknown source '%s' (twin)", o->from);
    ps_oplist_t *l = NULL;
    if (ps_oplist_read(o->oplist, &l) != 0)
        return cli_fail(CLI_BAD_INPUT, "import", "--oplist: %s", ps_last_error());
    int at[IMPORT_TWIN_MAX], n = 0;
    int rc = counts(gpu, o->at, p->tpcs, at, &n);
    ps_ops_t *out = NULL;
    if (rc == CLI_OK && ps_ops_twin_scale(*ops, p->model, p->batch, p->tpcs, l, at, n, &out) != 0)
        rc = cli_fail(CLI_BAD_INPUT, "import", "%s: %s", cli_user_path(o->oplist), ps_last_error());
    ps_oplist_free(l);
    if (rc == CLI_OK) {
        ps_ops_free(*ops);
        *ops = out;
    }
    return rc;
}

/* --oplist alone: the kernels aligned with the list's operators (the
 * twin's alignment, at the traced count only), one row per operator. An
 * engine that fuses across operators (TensorRT) fails at the first kernel
 * that fits no operator. CLI_OK or the exit code. */
static int align_only(const import_twin_t *o, const ps_import_params_t *p, ps_ops_t **ops, ps_import_info_t *info)
{
    ps_oplist_t *l = NULL;
    if (ps_oplist_read(o->oplist, &l) != 0)
        return cli_fail(CLI_BAD_INPUT, "import", "--oplist: %s", ps_last_error());
    ps_ops_t *out = NULL;
    int rc = CLI_OK;
    if (ps_ops_twin_scale(*ops, p->model, p->batch, p->tpcs, l, &p->tpcs, 1, &out) != 0)
        rc = cli_fail(CLI_BAD_INPUT, "import",
                      "%s: the kernels do not align with the list's operators (an engine that fuses across "
                      "operators, such as TensorRT, cannot be imported with --oplist): %s",
                      cli_user_path(o->oplist), ps_last_error());
    ps_oplist_free(l);
    if (rc == CLI_OK) {
        ps_ops_free(*ops);
        *ops = out;
        info->ops = ps_ops_rows(out);
    }
    return rc;
}

int import_twin_run(const char *kind, const char *in, ps_import_params_t *p, const import_twin_t *tw, ps_ops_t **ops,
                    ps_import_info_t *info)
{
    if (tw->at && !tw->from)
        return cli_fail(CLI_USAGE, "import", "--at goes with --tpcs-from");
    if (tw->from && !tw->oplist)
        return cli_fail(CLI_USAGE, "import", "--tpcs-from needs --oplist");
    int rc = strcmp(kind, "ops") == 0 ? ps_import_ops(in, p, ops, info) : ps_import_run(kind, in, p, ops, info);
    if (rc == PS_OK && tw->oplist && !tw->from && (rc = align_only(tw, p, ops, info)) != CLI_OK) {
        ps_ops_free(*ops);
        *ops = NULL;
    } else if (rc == PS_OK && tw->from && (rc = import_twin_apply(tw, p, info->gpu, ops)) != CLI_OK) {
        ps_ops_free(*ops);
        *ops = NULL;
    }
    return rc;
}
