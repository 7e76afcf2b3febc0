/* What the files of src/ops share. */
#ifndef PS_OPS_OPS_H
#define PS_OPS_OPS_H

#include "pairsight.h"

#include <cjson/cJSON.h>

/* The collect operation (op_collect.c), for op.c's row: its parameter
 * struct (the job, and the numbers that pairsight collect's --runs and
 * --no-flush spread over two of its fields), its table of
 * PSI_OP_COLLECT_N rows, its defaults and its run. */
typedef struct {
    ps_collect_job_t job;
    int runs; /* 0: 10 for profile, 30 for coexec */
    int flush_l2;
} psi_op_collect_t;

#define PSI_OP_COLLECT_N 34
extern const ps_param_t psi_op_collect_params[PSI_OP_COLLECT_N];
void psi_op_collect_init(void *p);
int psi_op_collect_run(const ps_op_inputs_t *in, const char *text, const cJSON *req, void *params, char **out);

#endif
