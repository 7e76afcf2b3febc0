/*
 * The CUDA backend lives in a loadable module, libpairsight_cuda.so (built
 * from the collector's .cu, *_cuda.c and *_cuda.cpp files when PS_CUDA is
 * on), so that the pairsight library and every program linking it load no
 * CUDA library:
 * module.c (host side, always built) dlopen()s the module the first time the
 * "cuda" backend is opened, and only then are cudart, cuBLAS, cuBLASLt, cuDNN
 * and CUPTI loaded.
 *
 * The module holds no copy of the host's code. The few host helpers the CUDA
 * sources call (errors, logging, allocation, the clock, operator sizes) reach
 * the host through the table below, which module_cuda.c forwards to, so that
 * an error raised in the module is the host's ps_last_error().
 *
 * Where the module is found, in order: $PAIRSIGHT_CUDA_MODULE (a path; when
 * set, nothing else is tried), then beside the executable
 * (<dir of /proc/self/exe>/libpairsight_cuda.so), then the install layout
 * <dir>/../lib/pairsight/libpairsight_cuda.so.
 */
#ifndef PS_COLLECT_MODULE_H
#define PS_COLLECT_MODULE_H

#include "collect/backend.h"
#include "common/common.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PS_CUDA_MODULE_FILE "libpairsight_cuda.so"
#define PS_CUDA_MODULE_ENV "PAIRSIGHT_CUDA_MODULE"
#define PS_CUDA_MODULE_ENTRY "psi_cuda_module_open"
/* Bump when the table or the structures the module shares with the host
 * change meaning; their sizes are checked as well. */
#define PS_CUDA_MODULE_ABI 2

/* What the host lends the module. abi and error come first in every
 * version, so that a module of another version can still say so. */
typedef struct {
    int abi;
    int (*error)(int code, const char *fmt, ...);
    size_t size, sizeof_backend, sizeof_params, sizeof_oplist, sizeof_op, sizeof_counters;
    const char *version; /* PS_VERSION_STRING */
    const char *(*last_error)(void);
    void (*log)(ps_log_level_t level, const char *fmt, ...);
    void *(*calloc)(size_t n, size_t size);
    double (*now)(void);
    void (*gpu_column_name)(const char *device_name, char *out, size_t size);
    void (*op_tensor_elems)(const psi_opdesc_t *op, long long *in, long long *weight, long long *out);
    long long (*conv_out)(long long in, long long window, long long stride, long long pad);
    int (*memplan_make)(const psi_oplist_t *l, uintptr_t base, psi_memplan_t *out);
    void (*memplan_free)(psi_memplan_t *m);
    int (*counters_permission_error)(const char *what);
    const char *const *counter_metrics; /* psi_counter_metrics */
} psi_cuda_host_t;

#define PS_CUDA_HOST_INIT                                                                                              \
    {                                                                                                                  \
        .abi = PS_CUDA_MODULE_ABI, .error = psi_error, .size = sizeof(psi_cuda_host_t),                                \
        .sizeof_backend = sizeof(psi_backend_t), .sizeof_params = sizeof(ps_collect_params_t),                         \
        .sizeof_oplist = sizeof(psi_oplist_t), .sizeof_op = sizeof(psi_opdesc_t),                                      \
        .sizeof_counters = sizeof(psi_counters_t), .version = PS_VERSION_STRING, .last_error = ps_last_error,          \
        .log = psi_log, .calloc = psi_calloc, .now = psi_now, .gpu_column_name = psi_gpu_column_name,                  \
        .op_tensor_elems = psi_op_tensor_elems, .conv_out = psi_conv_out, .memplan_make = psi_memplan_make,            \
        .memplan_free = psi_memplan_free, .counters_permission_error = psi_counters_permission_error,                  \
        .counter_metrics = psi_counter_metrics,                                                                        \
    }

/* The module's one exported function (PS_CUDA_MODULE_ENTRY): check host
 * against the module's own build, then open the CUDA backend. The backend it
 * returns is the module's; the module stays loaded for the process's life. */
typedef int (*psi_cuda_module_open_fn)(const psi_cuda_host_t *host, const ps_collect_params_t *p, psi_backend_t **out);

/* Host side: open the "cuda" backend through the module, loading it on the
 * first call. PS_E_BACKEND, with a message naming what is missing (the
 * module, a CUDA library, the driver, a GPU), when it cannot. */
int psi_backend_cuda_module_open(const ps_collect_params_t *p, psi_backend_t **out);

/* Module side (device_cuda.c). */
int psi_backend_cuda_open(const ps_collect_params_t *p, psi_backend_t **out);
/* Module side (module_cuda.c): the host's psi_counter_metrics. */
const char *const *psi_cuda_counter_metrics(void);
/* Module side (module_cuda.c): the host every forwarder calls, set by the
 * entry point (module_entry_cuda.c) once it has checked it. */
void psi_cuda_host_set(const psi_cuda_host_t *h);

#ifdef __cplusplus
}
#endif

#endif
