/* The defaults of the collector's parameters and what every backend shares:
 * the counter metrics and the message of refused counters (choosing a
 * backend is backend_open.c). */
#include "collect/backend.h"

#include "common/common.h"
#include "profile/gpu.h"

#include <stdio.h>
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

void psi_gpu_column_name(const char *device_name, char *out, size_t size)
{
    const char *known = psi_gpu_canonical(device_name);
    if (known != device_name) {
        snprintf(out, size, "%s", known);
        return;
    }
    const char *s = device_name;
    static const char *const vendor[] = {"NVIDIA ", "Tesla "};
    for (size_t v = 0; v < PS_ARRAY_LEN(vendor); v++)
        if (strncmp(s, vendor[v], strlen(vendor[v])) == 0)
            s += strlen(vendor[v]);
    size_t n = 0;
    for (; *s && n + 1 < size; s++)
        out[n++] = (*s == ' ' || *s == ',') ? '-' : *s;
    out[n] = '\0';
    /* "Tesla V100 SXM2 32GB": a catalog name once cleaned. */
    const char *cleaned = psi_gpu_canonical(out);
    if (cleaned != out) {
        snprintf(out, size, "%s", cleaned);
        return;
    }
    psi_log(PS_LOG_WARN,
            "GPU '%s' is not in the catalog: collected as '%s'; the twin, `simulate` and the presets do not know it "
            "(add it to src/profile/gpu.c, docs/ARCHITECTURE.md)",
            device_name, out);
}
