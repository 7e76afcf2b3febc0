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
 * [A100-80] NVIDIA A100 Tensor Core GPU datasheet (2021, 80 GB editions):
 *         same GA100 compute as [A100] (108 SMs, 1410 MHz boost, 19.5 FP32,
 *         156 TF32, 312 FP16 dense TFLOPS, 40 MB L2), HBM2e 2039 GB/s on
 *         SXM4 80GB and 1935 GB/s on the 80GB PCIe card.
 * [H100V] NVIDIA H100 Tensor Core GPU datasheet (2023): H100 PCIe 114 SMs,
 *         51 FP32, 378 TF32 and 756 FP16 dense tensor TFLOPS, HBM2e 2.0 TB/s;
 *         H100 NVL 132 SMs, 60 FP32, 417.5 TF32 and 835 FP16 dense tensor
 *         TFLOPS, HBM3 3.9 TB/s; both 50 MB L2. Boost clocks follow from the
 *         FP32 peak as for [H100] (1.75 and 1.78 GHz).
 * [B200]  NVIDIA Blackwell datasheet, HGX B200 at 1000 W (2024): 80 FP32,
 *         1100 dense TF32 and 2250 dense FP16 tensor TFLOPS, HBM3e 8 TB/s;
 *         148 SMs (74 per die) and 126 MB of L2 from Chips and Cheese,
 *         "Nvidia's B200: Keeping the CUDA Juggernaut Rolling" (2025). The
 *         clock follows from the FP32 peak: 80e12 / (148 x 128 x 2) = 2.11 GHz.
 * [L2EST] L2 bandwidth where no measurement is published (H100 PCIe and NVL,
 *         B200): the [L2BW] H100 figure scaled by SMs x clock. An estimate.
 * [L2BW]  L2 bandwidth: Table 3 of "Hardware features of different Nvidia GPU
 *         architectures", doi:10.1016/j.ultsonch.2023.106546 (V100 3133,
 *         A100 7219, H100 8986 GB/s); H200 taken equal to H100 (same die).
 */
#include "common/common.h"
#include "profile/gpu.h"
#include "pairsight.h"

#include <string.h>
#include <strings.h>

/* The figures of one die that every board built on it shares; a board adds
 * its memory bandwidth (and GH100 boards their L2 size). GV100: [V100]
 * (Volta has no TF32); GA100: [A100], [A100-80]; GH100 SXM: [H100], [H200],
 * the clock from the FP32 peak; L2 bandwidth [L2BW]. */
#define GV100_SXM2                                                                                                     \
    .sms = 80, .tpcs = 40, .clock_ghz = 1.53, .tensor_tflops = 125.0, .tf32_tflops = 0.0, .fp32_tflops = 15.7,         \
    .l2_mb = 6.0, .l2_gbs = 3133.0
#define GA100                                                                                                          \
    .sms = 108, .tpcs = 54, .clock_ghz = 1.41, .tensor_tflops = 312.0, .tf32_tflops = 156.0, .fp32_tflops = 19.5,      \
    .l2_mb = 40.0, .l2_gbs = 7219.0
#define GH100_SXM                                                                                                      \
    .sms = 132, .tpcs = 66, .clock_ghz = 1.98, .tensor_tflops = 989.4, .tf32_tflops = 494.7, .fp32_tflops = 67.0,      \
    .l2_gbs = 8986.0

static const psi_gpu_t catalog[] = {
    {
        .name = "A100-SXM4-40GB",
        .aliases = {"a100", "a100-sxm4", "a100-40gb", NULL},
        GA100,
        .dram_gbs = 1555.0, /* [A100] */
    },
    {
        .name = "H100-SXM",
        .aliases = {"h100", "h100-sxm5", "h100-80gb", NULL},
        GH100_SXM,
        .dram_gbs = 3350.0, /* [H100] */
        .l2_mb = 50.0,      /* [H100] */
    },
    {
        .name = "H200",
        .aliases = {"h200", "h200-sxm", "h200-141gb", NULL},
        GH100_SXM,
        .dram_gbs = 4800.0,    /* [H200] */
        .l2_mb = 60.0,         /* [H200] */
        .sm_dram_gbs = 3350.0, /* H100's SMs and latency, so H100's per-SM figure ([SMBW], gpu_physics.c) */
    },
    {
        .name = "V100-SXM2-16GB",
        .aliases = {"v100", "v100-16gb", "v100-sxm2", NULL},
        GV100_SXM2,
        .dram_gbs = 900.0, /* [V100] */
    },
    {
        .name = "V100-SXM2-32GB",
        .aliases = {"v100-32gb", NULL, NULL, NULL},
        GV100_SXM2,
        .dram_gbs = 900.0, /* [V100] same chip, 32 GB HBM2 */
    },
    {
        .name = "A100-SXM4-80GB",
        .aliases = {"a100-80gb", "a100-sxm4-80gb", NULL, NULL},
        GA100,
        .dram_gbs = 2039.0, /* [A100-80] */
    },
    {
        .name = "A100-PCIE-80GB",
        .aliases = {"a100-pcie-80gb", "a100-pcie", NULL, NULL},
        GA100,
        .dram_gbs = 1935.0, /* [A100-80] */
    },
    {
        .name = "H100-PCIE",
        .aliases = {"h100-pcie", NULL, NULL, NULL},
        .sms = 114,
        .tpcs = 57,        /* [H100V] */
        .clock_ghz = 1.75, /* [H100V] from the FP32 peak */
        .tensor_tflops = 756.0,
        .tf32_tflops = 378.0,
        .fp32_tflops = 51.0,
        .dram_gbs = 2000.0, /* [H100V] */
        .l2_mb = 50.0,
        .l2_gbs = 8986.0 * (114 * 1.75) / (132 * 1.98), /* [L2EST] */
    },
    {
        .name = "H100-NVL",
        .aliases = {"h100-nvl", NULL, NULL, NULL},
        .sms = 132,
        .tpcs = 66,        /* [H100V] */
        .clock_ghz = 1.78, /* [H100V] from the FP32 peak */
        .tensor_tflops = 835.0,
        .tf32_tflops = 417.5,
        .fp32_tflops = 60.0,
        .dram_gbs = 3900.0, /* [H100V] */
        .l2_mb = 50.0,
        .l2_gbs = 8986.0 * 1.78 / 1.98, /* [L2EST] */
    },
    {
        .name = "B200",
        .aliases = {"b200", "b200-sxm", NULL, NULL},
        .sms = 148,
        .tpcs = 74,        /* [B200] */
        .clock_ghz = 2.11, /* [B200] from the FP32 peak */
        .tensor_tflops = 2250.0,
        .tf32_tflops = 1100.0,
        .fp32_tflops = 80.0,
        .dram_gbs = 8000.0,                             /* [B200] */
        .l2_mb = 126.0,                                 /* [B200] */
        .l2_gbs = 8986.0 * (148 * 2.11) / (132 * 1.98), /* [L2EST] */
    },
};

const psi_gpu_t *psi_gpu_find(const char *name_or_alias)
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

const psi_gpu_t *psi_gpu_list(size_t *n)
{
    *n = sizeof catalog / sizeof catalog[0];
    return catalog;
}

const char *psi_gpu_canonical(const char *name)
{
    const psi_gpu_t *g = name ? psi_gpu_find(name) : NULL;
    if (!g && name)
        g = psi_gpu_from_device_name(name);
    return g ? g->name : name;
}

size_t psi_gpu_names(char *buf, size_t size)
{
    size_t len = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; i < sizeof catalog / sizeof catalog[0]; i++) {
        const psi_gpu_t *g = &catalog[i];
        char one[96];
        int n = g->aliases[0] ? snprintf(one, sizeof one, "%s%s (%s)", i ? ", " : "", g->name, g->aliases[0])
                              : snprintf(one, sizeof one, "%s%s", i ? ", " : "", g->name);
        if (len < size)
            snprintf(buf + len, size - len, "%s", one);
        len += (size_t)n;
    }
    return len;
}

size_t ps_gpu_names(char *buf, size_t size) { return psi_gpu_names(buf, size); }

const char *ps_gpu_canonical(const char *name) { return psi_gpu_canonical(name); }

/* Names that drivers report (cudaDeviceProp.name, nvidia-smi, Nsight
 * Compute's device__attribute_display_name, a trace's deviceProperties) and
 * that are not a catalog name once "NVIDIA " or "Tesla " is taken off. */
static const struct {
    const char *device, *catalog;
} device_names[] = {
    {"H100 80GB HBM3", "H100-SXM"}, {"H100", "H100-SXM"},       {"H100 SXM5 80GB", "H100-SXM"},
    {"H100 PCIe", "H100-PCIE"},     {"H100 NVL", "H100-NVL"},   {"A100 80GB PCIe", "A100-PCIE-80GB"},
    {"B200", "B200"},               {"H200", "H200"},
};

const psi_gpu_t *psi_gpu_from_device_name(const char *name)
{
    if (!name)
        return NULL;
    static const char *const vendor[] = {"NVIDIA ", "Tesla "};
    for (size_t v = 0; v < 2; v++)
        if (strncasecmp(name, vendor[v], strlen(vendor[v])) == 0)
            name += strlen(vendor[v]);
    for (size_t i = 0; i < sizeof device_names / sizeof device_names[0]; i++)
        if (strcasecmp(name, device_names[i].device) == 0)
            return psi_gpu_find(device_names[i].catalog);
    /* Aliases are short names a user types, not device names. */
    for (size_t i = 0; i < sizeof catalog / sizeof catalog[0]; i++)
        if (strcasecmp(catalog[i].name, name) == 0)
            return &catalog[i];
    return NULL;
}

/* The catalog through pairsight_core.h. */
static void gpu_info(const psi_gpu_t *g, ps_gpu_info_t *out)
{
    *out = (ps_gpu_info_t){.name = g->name,
                           .alias = g->aliases[0],
                           .sms = g->sms,
                           .tpcs = g->tpcs,
                           .clock_ghz = g->clock_ghz,
                           .tensor_tflops = g->tensor_tflops,
                           .fp32_tflops = g->fp32_tflops,
                           .dram_gbs = g->dram_gbs,
                           .l2_mb = g->l2_mb};
}

int ps_gpu_find(const char *name_or_alias, ps_gpu_info_t *out)
{
    if (!name_or_alias || !out)
        return psi_error(PS_E_ARG, "ps_gpu_find: NULL argument");
    const psi_gpu_t *g = psi_gpu_find(name_or_alias);
    if (!g) {
        char known[1024];
        psi_gpu_names(known, sizeof known);
        return psi_error(PS_E_ARG, "unknown GPU '%s' (known: %s)", name_or_alias, known);
    }
    gpu_info(g, out);
    return 0;
}

size_t ps_gpu_count(void) { return sizeof catalog / sizeof catalog[0]; }

int ps_gpu_at(size_t i, ps_gpu_info_t *out)
{
    if (!out || i >= ps_gpu_count())
        return psi_error(PS_E_ARG, "ps_gpu_at: no GPU %zu in the catalog", i);
    gpu_info(&catalog[i], out);
    return 0;
}
