/* A GPU is one catalog row (issue 36, issue 40 item 3): the collector names
 * a device as the catalog does (the table of issue 36), a device outside it
 * keeps its cleaned name with a warning, every catalog GPU simulates, a row
 * without the figures the simulator derives its physics from is refused with
 * a message, and the lists of GPUs in messages come from the catalog. */
#include "collect/backend.h"
#include "profile/gpu.h"
#include "simulate/sim.h"
#include "testhelp.h"

#include "pairsight.h"

static int warnings;
static char last_warning[512];

static void on_log(ps_log_level_t level, const char *msg, void *user)
{
    (void)user;
    if (level == PS_LOG_WARN) {
        warnings++;
        snprintf(last_warning, sizeof last_warning, "%s", msg);
    }
}

/* The table of issue 36, and the names drivers report for the other rows. */
static void test_device_names(void)
{
    static const struct {
        const char *device, *catalog;
    } rows[] = {
        {"NVIDIA H100 80GB HBM3", "H100-SXM"},
        {"NVIDIA H200", "H200"},
        {"NVIDIA H100 PCIe", "H100-PCIE"},
        {"Tesla V100-SXM2-16GB", "V100-SXM2-16GB"},
        {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"},
        {"NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"},
        {"Tesla V100-SXM2-32GB", "V100-SXM2-32GB"},
        {"NVIDIA A100 80GB PCIe", "A100-PCIE-80GB"},
        {"NVIDIA H100 NVL", "H100-NVL"},
        {"NVIDIA B200", "B200"},
    };
    ps_log_set(on_log, NULL);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char col[PS_GPU_NAME_MAX];
        warnings = 0;
        psi_gpu_column_name(rows[i].device, col, sizeof col);
        CHECK_MSG(strcmp(col, rows[i].catalog) == 0, "%s -> %s, not %s", rows[i].device, col, rows[i].catalog);
        CHECK_MSG(warnings == 0, "%s: warned '%s'", rows[i].device, last_warning);
        const char *c = ps_gpu_canonical(rows[i].device);
        CHECK_MSG(c && strcmp(c, rows[i].catalog) == 0, "ps_gpu_canonical(%s) = %s", rows[i].device, c);
    }
    ps_log_set(NULL, NULL);
}

/* A device the catalog does not know: its cleaned name, and a warning. */
static void test_outside_catalog(void)
{
    static const struct {
        const char *device, *column;
    } rows[] = {
        {"NVIDIA L40S", "L40S"},
        {"Tesla T4", "T4"},
        {"NVIDIA GeForce RTX 4090", "GeForce-RTX-4090"},
        {"NVIDIA A100-PCIE-40GB", "A100-PCIE-40GB"},
    };
    ps_log_set(on_log, NULL);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char col[PS_GPU_NAME_MAX];
        warnings = 0;
        last_warning[0] = '\0';
        psi_gpu_column_name(rows[i].device, col, sizeof col);
        CHECK_MSG(strcmp(col, rows[i].column) == 0, "%s -> %s, not %s", rows[i].device, col, rows[i].column);
        CHECK_MSG(warnings == 1 && strstr(last_warning, "not in the catalog") && strstr(last_warning, col),
                  "%s: %d warnings, last '%s'", rows[i].device, warnings, last_warning);
        CHECK(strcmp(ps_gpu_canonical(rows[i].device), rows[i].device) == 0);
    }
    ps_log_set(NULL, NULL);
}

/* Every catalog GPU has physics and runs a small simulated campaign. */
static void test_every_gpu_simulates(void)
{
    size_t n = 0;
    const psi_gpu_t *list = psi_gpu_list(&n);
    CHECK(n == ps_gpu_count() && n >= 10);
    for (size_t i = 0; i < n; i++) {
        sim_gpu_physics_t p;
        CHECK_OK(psi_sim_gpu_physics_derive(&list[i], &p));
        CHECK_MSG(p.dram_eff > 0 && p.sm_gbs > 0 && p.mem_latency_ns > 0 && p.kernel_fixed_ns > 0, "%s", list[i].name);
        CHECK(psi_sim_gpu_physics(&list[i]) != NULL);
        ps_sim_params_t sp = ps_sim_default_params();
        sp.gpu = list[i].name;
        sp.pairs = "resnet50:8/bert-base:8";
        sp.experiments = 4;
        sp.runs = 1;
        sp.threads = 1;
        ps_ops_t *ops = NULL;
        ps_coexec_t *cx = NULL;
        CHECK_OK(ps_sim_run(&sp, &ops, &cx));
        CHECK_MSG(cx && ps_coexec_rows(cx) == 4, "%s", list[i].name);
        ps_ops_free(ops);
        ps_coexec_free(cx);
    }
    /* The figures the physics had when they were typed out per GPU
     * (before issue 40): derived, they are the same numbers. */
    const psi_gpu_t *h100 = psi_gpu_find("h100"), *h200 = psi_gpu_find("h200"), *v100 = psi_gpu_find("v100");
    sim_gpu_physics_t a, b, v;
    CHECK_OK(psi_sim_gpu_physics_derive(h100, &a));
    CHECK_OK(psi_sim_gpu_physics_derive(h200, &b));
    CHECK_OK(psi_sim_gpu_physics_derive(v100, &v));
    CHECK(a.sm_gbs == 3350.0 * 0.90 / 66.0 && b.sm_gbs == a.sm_gbs); /* H200: H100's SMs */
    CHECK(a.mem_latency_ns == 500.0 / 1.98 && a.kernel_fixed_ns == 2500.0 * 1.53 / 1.98);
    CHECK(v.kernel_fixed_ns == 2500.0 && v.sm_gbs == 900.0 * 0.90 / 40.0);
}

/* A row without the figures the physics is derived from: refused, with a
 * message naming the row, never a crash. */
static void test_row_without_physics(void)
{
    psi_gpu_t g = *psi_gpu_find("a100");
    g.name = "TOY-GPU";
    g.clock_ghz = 0;
    sim_gpu_physics_t p;
    CHECK(psi_sim_gpu_physics_derive(&g, &p) == PS_E_ARG);
    CHECK_MSG(strstr(ps_last_error(), "TOY-GPU") && strstr(ps_last_error(), "src/profile/gpu.c"), "%s",
              ps_last_error());
    CHECK(psi_sim_gpu_physics(&g) == NULL);
    g.clock_ghz = 1.4;
    g.tpcs = 0;
    CHECK(psi_sim_gpu_physics_derive(&g, &p) == PS_E_ARG);
    CHECK(psi_sim_gpu_physics_derive(NULL, &p) == PS_E_ARG);
    /* Unknown to the catalog: the message lists the catalog. */
    ps_sim_params_t sp = ps_sim_default_params();
    sp.gpu = "mi300";
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    CHECK(ps_sim_run(&sp, &ops, &cx) == PS_E_ARG);
    CHECK_MSG(strstr(ps_last_error(), "'mi300'") && strstr(ps_last_error(), "B200") &&
                  strstr(ps_last_error(), "H100-NVL"),
              "%s", ps_last_error());
}

/* The list that messages print names every catalog GPU, in order. */
static void test_names_list(void)
{
    char buf[1024];
    size_t len = ps_gpu_names(buf, sizeof buf);
    CHECK(len == strlen(buf));
    const char *at = buf;
    for (size_t i = 0; i < ps_gpu_count(); i++) {
        ps_gpu_info_t g;
        CHECK_OK(ps_gpu_at(i, &g));
        const char *hit = strstr(at, g.name);
        CHECK_MSG(hit != NULL, "%s missing from '%s'", g.name, buf);
        if (hit)
            at = hit;
    }
    char small[16];
    CHECK(ps_gpu_names(small, sizeof small) == len && strlen(small) == sizeof small - 1);
    CHECK(strncmp(buf, "A100-SXM4-40GB (a100), H100-SXM (h100)", 38) == 0);
}

TH_MAIN(TEST(test_device_names), TEST(test_outside_catalog), TEST(test_every_gpu_simulates),
        TEST(test_row_without_physics), TEST(test_names_list))
