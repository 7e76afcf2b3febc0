/* Choosing a backend, and the defaults of the collector's parameters. */
#include "collect/backend.h"
#include "collect/module.h"

#include "common/common.h"

#include <string.h>

ps_collect_params_t ps_collect_default_params(void)
{
    ps_collect_params_t p = {
        .backend = "cuda",
        .device = 0,
        .warmup = 3,
        .profile_runs = 10,
        .seq_len = 128,
        .fake_delay_us = 0,
        .flush_l2 = 1,
        .clock_tol_pct = 3.0,
        .fake_throttle = 0,
        .fake_no_permission = 0,
    };
    return p;
}

const char *const psi_counter_metrics[7] = {
    "dram__bytes.sum",
    "lts__t_bytes.sum",
    "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
};

int psi_counters_permission_error(const char *what)
{
    return psi_error(PS_E_BACKEND,
                     "cupti: %s: no permission to read GPU performance counters: run as root, or "
                     "let every user profile by loading the driver with "
                     "NVreg_RestrictProfilingToAdminUsers=0 (e.g. `options nvidia "
                     "NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/, then reboot); "
                     "see https://developer.nvidia.com/ERR_NVGPUCTRPERM",
                     what);
}

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

void psi_gpu_column_name(const char *device_name, char *out, size_t size)
{
    const char *s = device_name;
    if (strncmp(s, "NVIDIA ", 7) == 0)
        s += 7;
    size_t n = 0;
    for (; *s && n + 1 < size; s++)
        out[n++] = (*s == ' ' || *s == ',') ? '-' : *s;
    out[n] = '\0';
}
