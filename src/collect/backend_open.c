/* Choosing a backend (backend.h): the fake one (fake.c) or the CUDA module
 * (module.c). */
#include "collect/backend.h"
#include "collect/module.h"

#include "common/common.h"

#include <string.h>

int psi_backend_open(const ps_collect_params_t *p, psi_backend_t **out)
{
    *out = NULL;
    const char *name = p->backend ? p->backend : "cuda";
    if (p->warmup < 0 || p->profile_runs <= 0 || p->seq_len <= 0)
        return psi_error(PS_E_ARG, "need warmup >= 0, profile_runs > 0 and seq_len > 0");
    if (!(p->clock_tol_pct >= 0 && p->clock_tol_pct < 100))
        return psi_error(PS_E_ARG, "clock tolerance %g%%: need 0 (no check) to 100", p->clock_tol_pct);
    if (strcmp(name, "fake") == 0)
        return psi_backend_fake_open(p, out);
    if (strcmp(name, "cuda") == 0)
        return psi_backend_cuda_module_open(p, out);
    return psi_error(PS_E_ARG, "unknown backend '%s' (cuda or fake)", name);
}
