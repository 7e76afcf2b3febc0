/* pairsight import's --oplist/--tpcs-from/--at and its ops format (cmd_import_twin.c). */
#ifndef PS_CLI_CMD_IMPORT_TWIN_H
#define PS_CLI_CMD_IMPORT_TWIN_H

#include "pairsight.h"

#define IMPORT_TWIN_MAX 512 /* TPC counts */

typedef struct {
    const char *oplist, *from, *at;
} import_twin_t;

/* Replace *ops (one trace at p->tpcs) by the list's operators at every
 * count of o->at (default: 1..the GPU's). CLI_OK or the exit code. */
int import_twin_apply(const import_twin_t *o, const ps_import_params_t *p, const char *gpu, ps_ops_t **ops);

/* The `ops` format: measured rows of p->model, p->batch at p->tpcs of an ops.csv. */
int import_ops_csv(const char *in, const ps_import_params_t *p, ps_ops_t **ops, ps_import_info_t *info);

#endif
