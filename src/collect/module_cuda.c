/* Module side of libpairsight_cuda.so (module.h): the host helpers the CUDA
 * sources call, forwarded to the host that loaded the module (its one
 * exported function is module_entry_cuda.c). Everything here is hidden (the
 * module is compiled with -fvisibility=hidden), so these definitions never
 * interpose on the host's. */
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

/* Set by the entry point (module_entry_cuda.c) once the host is checked. */
void psi_cuda_host_set(const psi_cuda_host_t *h) { host = h; }
