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
    };
    return p;
}

int ps_backend_open(const ps_collect_params_t *p, ps_backend_t **out)
{
    *out = NULL;
    const char *name = p->backend ? p->backend : "cuda";
    if (p->warmup < 0 || p->profile_runs <= 0 || p->seq_len <= 0)
        return ps_error(PS_E_ARG, "need warmup >= 0, profile_runs > 0 and seq_len > 0");
    if (strcmp(name, "fake") == 0)
        return ps_backend_fake_open(p, out);
    if (strcmp(name, "cuda") == 0)
        return ps_backend_cuda_module_open(p, out);
    return ps_error(PS_E_ARG, "unknown backend '%s' (cuda or fake)", name);
}

void ps_gpu_column_name(const char *device_name, char *out, size_t size)
{
    const char *s = device_name;
    if (strncmp(s, "NVIDIA ", 7) == 0)
        s += 7;
    size_t n = 0;
    for (; *s && n + 1 < size; s++)
        out[n++] = (*s == ' ' || *s == ',') ? '-' : *s;
    out[n] = '\0';
}
