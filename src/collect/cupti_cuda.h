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

typedef struct ps_cupti ps_cupti_t;

/* Profile the metrics on context ctx of device `device`, at most max_ranges
 * ranges. *out is released with ps_cupti_close. */
int ps_cupti_open(CUcontext ctx, int device, const char *const *metrics, int n_metrics,
                  int max_ranges, ps_cupti_t **out);
int ps_cupti_pass_begin(ps_cupti_t *p);
int ps_cupti_range_push(ps_cupti_t *p, const char *name);
int ps_cupti_range_pop(ps_cupti_t *p);
/* End a pass (after the caller synchronised); *all_done is 1 when no
 * further pass is needed. */
int ps_cupti_pass_end(ps_cupti_t *p, int *all_done);
/* Decode and evaluate: values[range * n_metrics + metric] for up to
 * cap_ranges ranges; *n_ranges gets the number profiled. */
int ps_cupti_results(ps_cupti_t *p, double *values, int cap_ranges, int *n_ranges);
void ps_cupti_close(ps_cupti_t *p);

#ifdef __cplusplus
}
#endif

#endif
