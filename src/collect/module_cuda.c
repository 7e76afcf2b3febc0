/* Module side of libpairsight_cuda.so (module.h): its one exported function,
 * and the host helpers the CUDA sources call, forwarded to the host that
 * loaded the module. Everything here but PS_CUDA_MODULE_ENTRY is hidden
 * (the module is compiled with -fvisibility=hidden), so these definitions
 * never interpose on the host's. */
#include "collect/module.h"

#include <stdarg.h>
#include <string.h>

static const psi_cuda_host_t *host;

/* Format into a buffer and hand the text to the host, whose functions take
 * no va_list. Messages longer than the buffer are cut. */
#define FORMAT(buf, fmt)                                                                           \
    va_list ap_;                                                                                   \
    va_start(ap_, fmt);                                                                            \
    vsnprintf(buf, sizeof buf, fmt, ap_);                                                          \
    va_end(ap_)

int psi_error(int code, const char *fmt, ...)
{
    char msg[1024];
    FORMAT(msg, fmt);
    return host->error(code, "%s", msg);
}

void psi_log(ps_log_level_t level, const char *fmt, ...)
{
    char msg[1024];
    FORMAT(msg, fmt);
    host->log(level, "%s", msg);
}

const char *ps_last_error(void)
{
    return host->last_error();
}

void *psi_calloc(size_t n, size_t size) { return host->calloc(n, size); }

double psi_now(void) { return host->now(); }

void psi_gpu_column_name(const char *device_name, char *out, size_t size)
{
    host->gpu_column_name(device_name, out, size);
}

void psi_op_tensor_elems(const psi_opdesc_t *op, long long *in, long long *weight, long long *out)
{
    host->op_tensor_elems(op, in, weight, out);
}

long long psi_conv_out(long long in, long long window, long long stride, long long pad)
{
    return host->conv_out(in, window, stride, pad);
}

int psi_memplan_make(const psi_oplist_t *l, uintptr_t base, psi_memplan_t *out)
{
    return host->memplan_make(l, base, out);
}

void psi_memplan_free(psi_memplan_t *m) { host->memplan_free(m); }

int psi_counters_permission_error(const char *what) { return host->counters_permission_error(what); }

/* The host's metric names (psi_counter_metrics), once the module is open. */
const char *const *psi_cuda_counter_metrics(void) { return host->counter_metrics; }

__attribute__((visibility("default"))) int psi_cuda_module_open(const psi_cuda_host_t *h, const ps_collect_params_t *p,
                                                                psi_backend_t **out);

int psi_cuda_module_open(const psi_cuda_host_t *h, const ps_collect_params_t *p, psi_backend_t **out)
{
    *out = NULL;
    if (h->abi != PS_CUDA_MODULE_ABI)
        return h->error(PS_E_BACKEND,
                        "cuda: the CUDA module was built for module ABI %d, this pairsight has %d: "
                        "use the libpairsight_cuda.so built with this pairsight",
                        PS_CUDA_MODULE_ABI, h->abi);
    if (h->size != sizeof *h || h->sizeof_backend != sizeof(psi_backend_t) ||
        h->sizeof_params != sizeof(ps_collect_params_t) || h->sizeof_oplist != sizeof(psi_oplist_t) ||
        h->sizeof_op != sizeof(psi_opdesc_t) || h->sizeof_counters != sizeof(psi_counters_t) ||
        strcmp(h->version, PS_VERSION_STRING) != 0)
        return h->error(PS_E_BACKEND,
                        "cuda: the CUDA module (pairsight %s) does not match this pairsight (%s): "
                        "use the libpairsight_cuda.so built with it",
                        PS_VERSION_STRING, h->version);
    host = h;
    return psi_backend_cuda_open(p, out);
}
