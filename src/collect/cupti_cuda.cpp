// CUPTI range profiler behind the C interface of cupti_cuda.h. The host
// half (metric configuration and evaluation, cupti_profiler_host.h) is C++
// only; this file keeps the rest of the collector in C.
#include "collect/cupti_cuda.h"

extern "C" {
#include "collect/backend.h"
#include "common/common.h"
}

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <new>
#include <string>
#include <vector>

// A zeroed parameter struct with its structSize set, as every CUPTI call wants.
template <class T> static T params(size_t size)
{
    T p{};
    p.structSize = size;
    return p;
}
#define PARAMS(T) params<T>(T##_STRUCT_SIZE)

struct psi_cupti {
    CUcontext ctx = nullptr;
    std::vector<std::string> names;
    std::vector<const char *> metrics;
    std::vector<uint8_t> availability, config, counter_data;
    CUpti_Profiler_Host_Object *host = nullptr;
    CUpti_RangeProfiler_Object *range = nullptr;
    bool started = false;
};

static int fail(CUptiResult r, const char *what)
{
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES)
        return psi_counters_permission_error(what);
    const char *s = nullptr;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS)
        s = nullptr;
    return psi_error(PS_E_BACKEND, "cupti: %s: %s", what, s ? s : "unknown error");
}

#define CUPTI(call, what)                                                                          \
    do {                                                                                           \
        CUptiResult r_ = (call);                                                                   \
        if (r_ != CUPTI_SUCCESS)                                                                   \
            return fail(r_, what);                                                                 \
    } while (0)

static int setup(psi_cupti *p, int device, int max_ranges)
{
    CUpti_Profiler_Initialize_Params init = PARAMS(CUpti_Profiler_Initialize_Params);
    CUPTI(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize");

    CUpti_Device_GetChipName_Params chip = PARAMS(CUpti_Device_GetChipName_Params);
    chip.deviceIndex = (size_t)device;
    CUPTI(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");

    CUpti_Profiler_GetCounterAvailability_Params avail = PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
    avail.ctx = p->ctx;
    CUPTI(cuptiProfilerGetCounterAvailability(&avail), "counter availability size");
    p->availability.assign(avail.counterAvailabilityImageSize, 0);
    avail.pCounterAvailabilityImage = p->availability.data();
    CUPTI(cuptiProfilerGetCounterAvailability(&avail), "counter availability");

    CUpti_Profiler_Host_Initialize_Params hi = PARAMS(CUpti_Profiler_Host_Initialize_Params);
    hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hi.pChipName = chip.pChipName;
    hi.pCounterAvailabilityImage = p->availability.data();
    CUPTI(cuptiProfilerHostInitialize(&hi), "cuptiProfilerHostInitialize");
    p->host = hi.pHostObject;

    CUpti_Profiler_Host_ConfigAddMetrics_Params add = PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    add.pHostObject = p->host;
    add.ppMetricNames = p->metrics.data();
    add.numMetrics = p->metrics.size();
    CUPTI(cuptiProfilerHostConfigAddMetrics(&add), "metrics (not supported on this GPU?)");
    CUpti_Profiler_Host_GetConfigImageSize_Params cs = PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    cs.pHostObject = p->host;
    CUPTI(cuptiProfilerHostGetConfigImageSize(&cs), "config image size");
    p->config.assign(cs.configImageSize, 0);
    CUpti_Profiler_Host_GetConfigImage_Params ci = PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    ci.pHostObject = p->host;
    ci.pConfigImage = p->config.data();
    ci.configImageSize = p->config.size();
    CUPTI(cuptiProfilerHostGetConfigImage(&ci), "config image");

    CUpti_RangeProfiler_Enable_Params en = PARAMS(CUpti_RangeProfiler_Enable_Params);
    en.ctx = p->ctx;
    CUPTI(cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable");
    p->range = en.pRangeProfilerObject;

    CUpti_RangeProfiler_GetCounterDataSize_Params ds = PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
    ds.pRangeProfilerObject = p->range;
    ds.pMetricNames = p->metrics.data();
    ds.numMetrics = p->metrics.size();
    ds.maxNumOfRanges = (size_t)max_ranges;
    ds.maxNumRangeTreeNodes = (uint32_t)max_ranges;
    CUPTI(cuptiRangeProfilerGetCounterDataSize(&ds), "counter data size");
    p->counter_data.assign(ds.counterDataSize, 0);
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params di = PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
    di.pRangeProfilerObject = p->range;
    di.pCounterData = p->counter_data.data();
    di.counterDataSize = p->counter_data.size();
    CUPTI(cuptiRangeProfilerCounterDataImageInitialize(&di), "counter data image");

    CUpti_RangeProfiler_SetConfig_Params sc = PARAMS(CUpti_RangeProfiler_SetConfig_Params);
    sc.pRangeProfilerObject = p->range;
    sc.pConfig = p->config.data();
    sc.configSize = p->config.size();
    sc.pCounterDataImage = p->counter_data.data();
    sc.counterDataImageSize = p->counter_data.size();
    sc.range = CUPTI_UserRange;
    sc.replayMode = CUPTI_UserReplay;
    sc.maxRangesPerPass = (size_t)max_ranges;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    CUPTI(cuptiRangeProfilerSetConfig(&sc), "cuptiRangeProfilerSetConfig");
    return 0;
}

extern "C" int psi_cupti_open(CUcontext ctx, int device, const char *const *metrics, int n_metrics, int max_ranges,
                              psi_cupti_t **out)
{
    *out = nullptr;
    psi_cupti *p = new (std::nothrow) psi_cupti;
    if (!p)
        return psi_error(PS_E_NOMEM, "out of memory");
    p->ctx = ctx;
    for (int i = 0; i < n_metrics; i++)
        p->names.emplace_back(metrics[i]);
    for (const std::string &s : p->names)
        p->metrics.push_back(s.c_str());
    int rc = setup(p, device, max_ranges);
    if (rc) {
        psi_cupti_close(p);
        return rc;
    }
    *out = p;
    return 0;
}

extern "C" int psi_cupti_pass_begin(psi_cupti_t *p)
{
    CUpti_RangeProfiler_Start_Params st = PARAMS(CUpti_RangeProfiler_Start_Params);
    st.pRangeProfilerObject = p->range;
    CUPTI(cuptiRangeProfilerStart(&st), "cuptiRangeProfilerStart");
    p->started = true;
    return 0;
}

extern "C" int psi_cupti_range_push(psi_cupti_t *p, const char *name)
{
    CUpti_RangeProfiler_PushRange_Params pr = PARAMS(CUpti_RangeProfiler_PushRange_Params);
    pr.pRangeProfilerObject = p->range;
    pr.pRangeName = name;
    CUPTI(cuptiRangeProfilerPushRange(&pr), "cuptiRangeProfilerPushRange");
    return 0;
}

extern "C" int psi_cupti_range_pop(psi_cupti_t *p)
{
    CUpti_RangeProfiler_PopRange_Params pr = PARAMS(CUpti_RangeProfiler_PopRange_Params);
    pr.pRangeProfilerObject = p->range;
    CUPTI(cuptiRangeProfilerPopRange(&pr), "cuptiRangeProfilerPopRange");
    return 0;
}

extern "C" int psi_cupti_pass_end(psi_cupti_t *p, int *all_done)
{
    CUpti_RangeProfiler_Stop_Params sp = PARAMS(CUpti_RangeProfiler_Stop_Params);
    sp.pRangeProfilerObject = p->range;
    CUPTI(cuptiRangeProfilerStop(&sp), "cuptiRangeProfilerStop");
    p->started = false;
    *all_done = sp.isAllPassSubmitted ? 1 : 0;
    return 0;
}

extern "C" int psi_cupti_results(psi_cupti_t *p, double *values, int cap_ranges, int *n_ranges)
{
    *n_ranges = 0;
    CUpti_RangeProfiler_DecodeData_Params dd = PARAMS(CUpti_RangeProfiler_DecodeData_Params);
    dd.pRangeProfilerObject = p->range;
    CUPTI(cuptiRangeProfilerDecodeData(&dd), "cuptiRangeProfilerDecodeData");
    if (dd.numOfRangeDropped)
        return psi_error(PS_E_BACKEND, "cupti: %zu ranges dropped", dd.numOfRangeDropped);
    CUpti_RangeProfiler_GetCounterDataInfo_Params info = PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
    info.pCounterDataImage = p->counter_data.data();
    info.counterDataImageSize = p->counter_data.size();
    CUPTI(cuptiRangeProfilerGetCounterDataInfo(&info), "counter data info");
    size_t n = info.numTotalRanges < (size_t)cap_ranges ? info.numTotalRanges : (size_t)cap_ranges;
    for (size_t r = 0; r < n; r++) {
        CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
        ev.pHostObject = p->host;
        ev.pCounterDataImage = p->counter_data.data();
        ev.counterDataImageSize = p->counter_data.size();
        ev.rangeIndex = r;
        ev.ppMetricNames = p->metrics.data();
        ev.numMetrics = p->metrics.size();
        ev.pMetricValues = values + r * p->metrics.size();
        CUPTI(cuptiProfilerHostEvaluateToGpuValues(&ev), "evaluating metrics");
    }
    *n_ranges = (int)info.numTotalRanges;
    return 0;
}

extern "C" void psi_cupti_close(psi_cupti_t *p)
{
    if (!p)
        return;
    if (p->range) {
        if (p->started) {
            CUpti_RangeProfiler_Stop_Params sp = PARAMS(CUpti_RangeProfiler_Stop_Params);
            sp.pRangeProfilerObject = p->range;
            (void)cuptiRangeProfilerStop(&sp);
        }
        CUpti_RangeProfiler_Disable_Params dp = PARAMS(CUpti_RangeProfiler_Disable_Params);
        dp.pRangeProfilerObject = p->range;
        (void)cuptiRangeProfilerDisable(&dp);
    }
    if (p->host) {
        CUpti_Profiler_Host_Deinitialize_Params hd = PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
        hd.pHostObject = p->host;
        (void)cuptiProfilerHostDeinitialize(&hd);
    }
    CUpti_Profiler_DeInitialize_Params de = PARAMS(CUpti_Profiler_DeInitialize_Params);
    (void)cuptiProfilerDeInitialize(&de);
    delete p;
}
