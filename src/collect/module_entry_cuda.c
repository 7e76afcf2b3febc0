/* The one exported function of libpairsight_cuda.so (module.h): checks that
 * the host that loaded the module is the pairsight it was built with, hands
 * the host's helpers to module_cuda.c and opens the CUDA backend
 * (device_cuda.c). */
#include "collect/module.h"

#include <string.h>

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
    psi_cuda_host_set(h);
    return psi_backend_cuda_open(p, out);
}
