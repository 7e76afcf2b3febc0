/* The workload-level actions of ps_collect_job_run (workflow_mps.c):
 * scaling and colocate of a checked job, what they measured into *r. */
#ifndef PS_COLLECT_WORKFLOW_H
#define PS_COLLECT_WORKFLOW_H

#include "pairsight.h"

int psi_collect_scaling(const ps_collect_job_t *j, ps_collect_job_result_t *r);
int psi_collect_colocate(const ps_collect_job_t *j, ps_collect_job_result_t *r);

#endif
