/*
 * The GPU catalog (see gpu.h). Sources of the figures:
 *
 * [V100]  NVIDIA Tesla V100 GPU Architecture whitepaper (WP-08608-001, 2017),
 *         Table 1: SXM2 V100, 80 SMs, boost 1530 MHz, 15.7 FP32 TFLOPS,
 *         125 tensor TFLOPS, HBM2 900 GB/s, 6144 KB L2.
 * [A100]  NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020),
 *         Table 1/3: A100 SXM4, 108 SMs, boost 1410 MHz, 19.5 FP32 TFLOPS,
 *         156 dense TF32 and 312 dense FP16 tensor TFLOPS, HBM2 1555 GB/s,
 *         40 MB L2.
 * [H100]  NVIDIA H100 Tensor Core GPU datasheet and architecture whitepaper
 *         (2022): H100 SXM5, 132 SMs, 50 MB L2, 67 FP32 TFLOPS, 494.7 dense TF32
 *         and 989.4 dense FP16 tensor TFLOPS, HBM3 3.35 TB/s. The boost clock follows from the
 *         FP32 peak: 67e12 / (132 SMs x 128 FP32 lanes x 2) = 1.98 GHz.
 * [H200]  NVIDIA H200 Tensor Core GPU datasheet (2024): same GH100 compute as
 *         H100 SXM (67 FP32, 494.7 TF32 and 989.4 FP16 dense tensor TFLOPS), HBM3e 4.8 TB/s.
 *         The datasheet gives no L2 size; we take 60 MB, the full GH100 L2
 *         (H100 whitepaper; Chips and Cheese, "Nvidia's H100: Funny L2, and
 *         Tons of Bandwidth", 2023) as the project's issue 3 specifies.
 * [L2BW]  L2 bandwidth: Table 3 of "Hardware features of different Nvidia GPU
 *         architectures", doi:10.1016/j.ultsonch.2023.106546 (V100 3133,
 *         A100 7219, H100 8986 GB/s); H200 taken equal to H100 (same die).
 */
#include "profile/gpu.h"

#include <strings.h>

static const ps_gpu_t catalog[] = {
    {
        .name = "A100-SXM4-40GB",
        .aliases = {"a100", "a100-sxm4", "a100-40gb", NULL},
        .sms = 108, .tpcs = 54,                   /* [A100] */
        .clock_ghz = 1.41,                        /* [A100] */
        .tensor_tflops = 312.0,                   /* [A100] */
        .tf32_tflops = 156.0,                     /* [A100] */
        .fp32_tflops = 19.5,                      /* [A100] */
        .dram_gbs = 1555.0,                       /* [A100] */
        .l2_mb = 40.0,                            /* [A100] */
        .l2_gbs = 7219.0,                         /* [L2BW] */
    },
    {
        .name = "H100-SXM",
        .aliases = {"h100", "h100-sxm5", "h100-80gb", NULL},
        .sms = 132, .tpcs = 66,                   /* [H100] */
        .clock_ghz = 1.98,                        /* [H100] from the FP32 peak */
        .tensor_tflops = 989.4,                   /* [H100] */
        .tf32_tflops = 494.7,                     /* [H100] */
        .fp32_tflops = 67.0,                      /* [H100] */
        .dram_gbs = 3350.0,                       /* [H100] */
        .l2_mb = 50.0,                            /* [H100] */
        .l2_gbs = 8986.0,                         /* [L2BW] */
    },
    {
        .name = "H200",
        .aliases = {"h200", "h200-sxm", "h200-141gb", NULL},
        .sms = 132, .tpcs = 66,                   /* [H200] */
        .clock_ghz = 1.98,                        /* [H200] as H100 SXM */
        .tensor_tflops = 989.4,                   /* [H200] */
        .tf32_tflops = 494.7,                     /* [H200] */
        .fp32_tflops = 67.0,                      /* [H200] */
        .dram_gbs = 4800.0,                       /* [H200] */
        .l2_mb = 60.0,                            /* [H200] */
        .l2_gbs = 8986.0,                         /* [L2BW] */
    },
    {
        .name = "V100-SXM2-16GB",
        .aliases = {"v100", "v100-16gb", "v100-sxm2", NULL},
        .sms = 80, .tpcs = 40,                    /* [V100] */
        .clock_ghz = 1.53,                        /* [V100] */
        .tensor_tflops = 125.0,                   /* [V100] */
        .tf32_tflops = 0.0,                       /* [V100] Volta has no TF32 */
        .fp32_tflops = 15.7,                      /* [V100] */
        .dram_gbs = 900.0,                        /* [V100] */
        .l2_mb = 6.0,                             /* [V100] */
        .l2_gbs = 3133.0,                         /* [L2BW] */
    },
    {
        .name = "V100-SXM2-32GB",
        .aliases = {"v100-32gb", NULL, NULL, NULL},
        .sms = 80, .tpcs = 40,                    /* [V100] same chip, 32 GB HBM2 */
        .clock_ghz = 1.53,
        .tensor_tflops = 125.0,
        .tf32_tflops = 0.0,
        .fp32_tflops = 15.7,
        .dram_gbs = 900.0,
        .l2_mb = 6.0,
        .l2_gbs = 3133.0,
    },
};

const ps_gpu_t *ps_gpu_find(const char *name_or_alias)
{
    if (!name_or_alias)
        return NULL;
    for (size_t i = 0; i < sizeof catalog / sizeof catalog[0]; i++) {
        if (strcasecmp(catalog[i].name, name_or_alias) == 0)
            return &catalog[i];
        for (int a = 0; a < 4 && catalog[i].aliases[a]; a++)
            if (strcasecmp(catalog[i].aliases[a], name_or_alias) == 0)
                return &catalog[i];
    }
    return NULL;
}

const ps_gpu_t *ps_gpu_list(size_t *n)
{
    *n = sizeof catalog / sizeof catalog[0];
    return catalog;
}

const char *ps_gpu_canonical(const char *name)
{
    const ps_gpu_t *g = name ? ps_gpu_find(name) : NULL;
    return g ? g->name : name;
}
