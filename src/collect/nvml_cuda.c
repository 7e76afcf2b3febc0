/* NVML, loaded from the driver's libnvidia-ml.so.1 at run time, for the SM
 * clock of the device the CUDA backend runs on (device_cuda.h). */
#include "collect/device_cuda.h"

#include "common/common.h"

#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

static int nvml_fail(const nvml_t *n, nvml_ret_t r, const char *what)
{
    const char *s = n->ErrorString ? n->ErrorString(r) : NULL;
    return psi_error(PS_E_BACKEND, "nvml: %s: %s (%d)", what, s ? s : "unknown error", r);
}

/* NVML for the device with PCI bus id `bus`. Without libnvidia-ml the
 * clocks are unknown (NAN) and a warning says so; any other NVML failure
 * is an error. */
int psi_nvml_open(nvml_t *n, const char *bus)
{
    memset(n, 0, sizeof *n);
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        psi_log(PS_LOG_WARN, "nvml: %s: SM clocks will not be recorded", dlerror());
        return 0;
    }
    static const struct {
        const char *name;
        size_t offset;
    } syms[] = {
        {"nvmlInit_v2", offsetof(nvml_t, Init)},
        {"nvmlShutdown", offsetof(nvml_t, Shutdown)},
        {"nvmlDeviceGetHandleByPciBusId_v2", offsetof(nvml_t, DeviceGetHandleByPciBusId)},
        {"nvmlDeviceGetClockInfo", offsetof(nvml_t, DeviceGetClockInfo)},
        {"nvmlDeviceGetMaxClockInfo", offsetof(nvml_t, DeviceGetMaxClockInfo)},
        {"nvmlErrorString", offsetof(nvml_t, ErrorString)},
    };
    for (size_t i = 0; i < PS_ARRAY_LEN(syms); i++) {
        void *fn = dlsym(n->lib, syms[i].name);
        if (!fn)
            return psi_error(PS_E_BACKEND, "nvml: libnvidia-ml.so.1 lacks %s", syms[i].name);
        memcpy((char *)n + syms[i].offset, &fn, sizeof fn);
    }
    /* Without NVML (a container without it, a driver that refuses) clocks
     * are unknown, and said to be; once it answers, every failure counts. */
    nvml_ret_t r = n->Init();
    if (r != 0) {
        psi_log(PS_LOG_WARN, "nvml: nvmlInit_v2: %s: SM clocks will not be recorded",
                n->ErrorString ? n->ErrorString(r) : "error");
        n->Shutdown = NULL;
        return 0;
    }
    r = n->DeviceGetHandleByPciBusId(bus, &n->dev);
    if (r != 0)
        return nvml_fail(n, r, "nvmlDeviceGetHandleByPciBusId_v2");
    return 0;
}

/* The SM clock now, MHz; NAN without NVML. */
int psi_nvml_sm_clock(const nvml_t *n, int max, double *mhz)
{
    *mhz = NAN;
    if (!n->dev)
        return 0;
    unsigned v = 0;
    nvml_ret_t r =
        max ? n->DeviceGetMaxClockInfo(n->dev, NVML_CLOCK_SM, &v) : n->DeviceGetClockInfo(n->dev, NVML_CLOCK_SM, &v);
    if (r != 0)
        return nvml_fail(n, r, max ? "nvmlDeviceGetMaxClockInfo" : "nvmlDeviceGetClockInfo");
    *mhz = (double)v;
    return 0;
}

void psi_nvml_close(nvml_t *n)
{
    if (n->Shutdown)
        (void)n->Shutdown();
    if (n->lib)
        (void)dlclose(n->lib);
    memset(n, 0, sizeof *n);
}
