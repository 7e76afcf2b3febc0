#!/usr/bin/env python3
"""Writes tests/data/nsys_tiny.sqlite: a small Nsight Systems SQLite export
(nsys export --type sqlite) with the tables and columns NVIDIA's "SQLite
Export Schema Reference" documents for nsys 2024-2025, filled by hand: one
process (PID 4242) running a 5-operator CNN on stream 7 of an A100, one
warm-up pass with a cuDNN autotuning kernel and five timed passes, each in an
NVTX push/pop range "forward" with a nested range per layer; a second stream
with a memset-like kernel; a second process (PID 77) with a little work.

    /usr/bin/python3 tests/data/nsys_fixture.py tests/data/nsys_tiny.sqlite

Deterministic: the same file every run (no timestamps of the machine)."""
import os
import sqlite3
import sys

SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
  isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
  smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER);
CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER NOT NULL, cudaId INTEGER NOT NULL, pid INTEGER NOT NULL,
  uuid TEXT NOT NULL, numMultiprocessors INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL REFERENCES StringIds(id),
  shortName INTEGER NOT NULL REFERENCES StringIds(id), mangledName INTEGER REFERENCES StringIds(id),
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
  sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL REFERENCES StringIds(id),
  returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
  textId INTEGER REFERENCES StringIds(id), domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,
  doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
"""

# (demangled name, short name, layer, base duration ns)
PASS = [
    ("void cudnn::ops::nchwToNhwcKernel<__half, __half, float, false, true, (cudnnKernelDataType_t)0>"
     "(cudnn::ops::nchw2nhwc_params_t<float>, __half const*, __half*)", "nchwToNhwcKernel", "conv1", 3100),
    ("sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nchw_tilesize64x32x64_stage5_warpsize2x1x1"
     "_g1_tensor16x8x16_kernel", "sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nchw", "conv1",
     41200),
    ("void cudnn::bn_fw_inf_1C11_kernel_NCHW<__half, float, true, 1>(float, float, cudnnTensorStruct, __half const*, "
     "cudnnTensorStruct, __half*, float const*, float const*, float const*, float const*, float)",
     "bn_fw_inf_1C11_kernel_NCHW", "bn1", 9800),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::clamp_min_scalar_kernel_impl"
     "(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::"
     "{lambda(c10::Half)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::"
     "clamp_min_scalar_kernel_impl(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::operator()() const::"
     "{lambda()#7}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2>)",
     "vectorized_elementwise_kernel", "relu1", 6400),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::Half, at::native::MeanOps<float, float, float, "
     "float>, unsigned int, c10::Half, 4> >(at::native::ReduceOp<c10::Half, at::native::MeanOps<float, float, float, "
     "float>, unsigned int, c10::Half, 4>)", "reduce_kernel", "pool", 5200),
    ("ampere_fp16_s16816gemm_fp16_64x64_ldg8_f2f_stages_64x5_tn", "ampere_fp16_s16816gemm_fp16_64x64_ldg8_f2f_stages_64x5_tn",
     "fc", 2300),
]
AUTOTUNE = ("void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, false, false, 0, 0, int, __half, __half, "
            "__half, __half, __half>(cudnn::cnn::GroupedDirectFpropParams, __half const*, __half const*, __half*, "
            "__half, __half, float const*, float const*, __half const*, cudnn::reduced_divisor, int)",
            "conv2d_grouped_direct_kernel", "conv1", 88000)
MEMSET = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::Half>, "
          "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<c10::Half>, at::detail::Array<char*, 1>)",
          "vectorized_elementwise_kernel", None, 1500)
# per-pass factors: the median of (1.00, 1.30, 0.98, 1.02, 1.01) is 1.01
FACTORS = [1.00, 1.30, 0.98, 1.02, 1.01]


def main(path):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    ids = {}

    def sid(s):
        if s not in ids:
            ids[s] = len(ids) + 1
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (ids[s], s))
        return ids[s]

    launch = sid("cudaLaunchKernel_v7000")
    db.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA A100-SXM4-40GB', '0000:07:00.0', 1, 41943040, "
               "42314694656, 1555200000000, 1410000000, 108, 0, 'GPU-5e4d0f3a', 0, 'GA100', 0)")
    db.execute("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 0, 4242, 'GPU-5e4d0f3a', 108)")
    state = {"corr": 1000, "cpu": 1_000_000_000, "gpu": 1_000_050_000}
    gpid, gtid = 4242 << 24, (4242 << 24) | 4243

    def kernel(k, factor, stream=7, pid=gpid, tid=gtid):
        name, short, _, base = k
        state["corr"] += 1
        state["cpu"] += 4000
        t0 = state["cpu"]
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)",
                   (t0, t0 + 2500, tid, state["corr"], launch))
        start = max(state["gpu"], t0 + 5000)
        end = start + int(round(base * factor))
        state["gpu"] = end + 1200
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
                   "globalPid, demangledName, shortName, mangledName, launchType, registersPerThread, gridX, gridY, "
                   "gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
                   "localMemoryTotal, gridId, sharedMemoryExecuted) VALUES "
                   "(?, ?, 0, 1, ?, ?, ?, ?, ?, NULL, 0, 32, 256, 1, 1, 128, 1, 1, 0, 0, 0, 0, ?, 0)",
                   (start, end, stream, state["corr"], pid, sid(name), sid(short), state["corr"]))

    def range_(text, t0, t1, by_id=False):
        if by_id:
            db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId) "
                       "VALUES (?, ?, 59, ?, ?, 0)", (t0, t1, gtid, sid(text)))
        else:
            db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                       "VALUES (?, ?, 59, ?, ?, 0)", (t0, t1, text, gtid))

    def one_pass(kernels, factor):
        t0 = state["cpu"] + 1
        layer, lt0 = None, None
        for k in kernels:
            if k[2] != layer:
                if layer:
                    range_(layer, lt0, state["cpu"] + 3000)
                layer, lt0 = k[2], state["cpu"] + 2
            kernel(k, factor)
        range_(layer, lt0, state["cpu"] + 3000)
        state["cpu"] += 50_000  # the host waits for the pass (torch.cuda.synchronize)
        range_("forward", t0, state["cpu"], by_id=True)
        state["cpu"] = max(state["cpu"], state["gpu"]) + 10_000

    one_pass([PASS[0], AUTOTUNE] + PASS[1:], 1.0)  # warm-up: cudnn.benchmark tries a kernel
    for f in FACTORS:
        one_pass(PASS, f)
    kernel(MEMSET, 1.0, stream=13)  # the input copy's stream
    for _ in range(3):  # another process on the GPU
        kernel(PASS[5], 1.0, stream=7, pid=77 << 24, tid=(77 << 24) | 78)
    db.commit()
    db.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/nsys_tiny.sqlite")
