/* A C interface over CUPTI's range profiler (cupti_cuda.cpp, C++ because
 * cupti_profiler_host.h includes <string>). One user range per operator,
 * user replay: the caller runs the same launches once per pass until CUPTI
 * says every pass was submitted. Built only with PS_CUDA. */
#ifndef PS_COLLECT_CUPTI_CUDA_H
#define PS_COLLECT_CUPTI_CUDA_H

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct psi_cupti psi_cupti_t;

/* Profile the metrics on context ctx of device `device`, at most max_ranges
 * ranges. *out is released with psi_cupti_close. */
int psi_cupti_open(CUcontext ctx, int device, const char *const *metrics, int n_metrics, int max_ranges,
                   psi_cupti_t **out);
int psi_cupti_pass_begin(psi_cupti_t *p);
int psi_cupti_range_push(psi_cupti_t *p, const char *name);
int psi_cupti_range_pop(psi_cupti_t *p);
/* End a pass (after the caller synchronised); *all_done is 1 when no
 * further pass is needed. */
int psi_cupti_pass_end(psi_cupti_t *p, int *all_done);
/* Decode and evaluate: values[range * n_metrics + metric] for up to
 * cap_ranges ranges; *n_ranges gets the number profiled. */
int psi_cupti_results(psi_cupti_t *p, double *values, int cap_ranges, int *n_ranges);
void psi_cupti_close(psi_cupti_t *p);

#ifdef __cplusplus
}
#endif

#endif
