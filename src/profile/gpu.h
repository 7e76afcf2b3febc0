/*
 * The GPU catalog: a small table of published figures for each GPU the
 * simulator and the other stages know, looked up by name or alias.
 *
 *     const psi_gpu_t *g = psi_gpu_find("a100");   // or "A100-SXM4-40GB"
 *     if (g) printf("%s has %d TPCs\n", g->name, g->tpcs);
 *
 * Every figure carries its source in a comment in src/profile/gpu.c. The
 * estimates that only the simulator uses (DRAM efficiency, per-SM bandwidth,
 * memory latency, kernel fixed cost) are derived from a row by
 * src/simulate/gpu_physics.c, so that a GPU is one row here (and, where the
 * driver names it otherwise, one line of the device-name table). The
 * entries are static: the returned pointers stay valid for the life of the
 * process and must not be freed.
 */
#ifndef PS_PROFILE_GPU_H
#define PS_PROFILE_GPU_H

#include <stddef.h>

typedef struct {
    const char *name;        /* as written in ops.csv/coexec.csv, e.g. "A100-SXM4-40GB" */
    const char *aliases[4];  /* lower-case short names, e.g. "a100"; NULL-terminated */
    int sms;                 /* streaming multiprocessors enabled on the product */
    int tpcs;                /* texture processing clusters = sms / 2: the unit of an SM split */
    double clock_ghz;        /* boost clock */
    double tensor_tflops;    /* dense FP16/BF16 tensor-core peak */
    double tf32_tflops;      /* dense TF32 tensor-core peak; 0 where the GPU has none */
    double fp32_tflops;      /* FP32 CUDA-core peak */
    double dram_gbs;         /* DRAM peak bandwidth, GB/s (1e9 bytes/s) */
    double l2_mb;            /* L2 cache size, MiB as marketed (1 MB = 2^20 bytes here) */
    double l2_gbs;           /* L2 bandwidth, GB/s */
    double sm_dram_gbs;      /* the DRAM bandwidth one SM's share is scaled from
                                (simulator, [SMBW] of gpu_physics.c); 0: dram_gbs */
} psi_gpu_t;

/* The GPU whose name or alias equals name_or_alias (case-insensitive), or
 * NULL. Accepts e.g. "A100-SXM4-40GB", "a100", "h100", "H100-SXM", "h200",
 * "v100". */
const psi_gpu_t *psi_gpu_find(const char *name_or_alias);
/* The catalog name of a GPU named by its name, an alias ("a100" ->
 * "A100-SXM4-40GB") or the name its driver reports ("NVIDIA H100 80GB HBM3"
 * -> "H100-SXM", psi_gpu_from_device_name); name itself when the catalog
 * does not know it (a measured GPU outside it, "FAKE-GPU"), NULL for NULL.
 * Every place that compares GPU names compares these, so that an alias
 * works everywhere. */
const char *psi_gpu_canonical(const char *name);

/* The catalog entry of a name as the driver reports it ("NVIDIA H100 80GB
 * HBM3", "Tesla V100-SXM2-32GB", "NVIDIA A100-SXM4-80GB"), or NULL. */
const psi_gpu_t *psi_gpu_from_device_name(const char *name);

/* The catalog as an array: *n receives its length. */
const psi_gpu_t *psi_gpu_list(size_t *n);

/* The catalog's GPUs for a message, "A100-SXM4-40GB (a100), H100-SXM (h100),
 * ..." in catalog order, into buf (cut to size, always terminated); returns
 * the length the whole list needs, as snprintf does. */
size_t psi_gpu_names(char *buf, size_t size);

#endif
