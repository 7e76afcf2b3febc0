/* k processes under MPS on all SMs (src/simulate/mps.h): the shapes of
 * docs/simulator.md, eq. 13-16, on made-up kernels. */
#include "pairsight.h"
#include "simulate/mps.h"

#include "testhelp.h"

/* A GEMM that fills the A100 for several waves, and a tiny one. */
static const sim_kernel_t big = {.name = "big",
                                 .flops = 2e11,
                                 .dram_bytes = 2e7,
                                 .l2_bytes = 5e7,
                                 .ctas = 1080,
                                 .ctas_per_sm = 1,
                                 .lat_rounds = 1,
                                 .flop_eff = 0.6,
                                 .tensor = SIM_FP16};
static const sim_kernel_t tiny = {.name = "tiny",
                                  .flops = 1e6,
                                  .dram_bytes = 1e5,
                                  .l2_bytes = 1e5,
                                  .ctas = 4,
                                  .ctas_per_sm = 8,
                                  .lat_rounds = 1,
                                  .flop_eff = 0.5};

typedef struct {
    sim_kernel_t k[8];
    sim_mps_model_t m;
} model8_t;

static void model8(model8_t *x, const psi_gpu_t *g, const sim_kernel_t *k)
{
    for (int i = 0; i < 8; i++)
        x->k[i] = *k;
    CHECK_OK(psi_sim_mps_model_init(&x->m, g, x->k, 8));
}

static double run(const sim_mps_params_t *p, model8_t *a, model8_t *b, int k)
{
    sim_physics_t ph = psi_sim_physics_default();
    sim_mps_seg_t seg[3] = {{&a->m, 0, 8}, {&b->m, 0, 8}, {&b->m, 0, 8}};
    double ns = 0;
    CHECK_OK(psi_sim_mps_run(&ph, p, seg, k, &ns));
    return ns;
}

static void test_sharing(void)
{
    const psi_gpu_t *g = psi_gpu_find("a100");
    model8_t a, b, s;
    model8(&a, g, &big);
    model8(&b, g, &big);
    model8(&s, g, &tiny);
    sim_mps_params_t p = psi_sim_mps_default();
    p.launch_ns = 0;
    double one = run(&p, &a, &b, 1), two = run(&p, &a, &b, 2), three = run(&p, &a, &b, 3);
    /* Full grids share the SMs: two take about the sum, three about 3x. */
    CHECK_MSG(two > 1.8 * one && two < 2.2 * one, "two big: %.0f ns against %.0f alone", two, one);
    CHECK_MSG(three > 2.7 * one && three < 3.3 * one, "three big: %.0f ns against %.0f alone", three, one);
    /* sm_pack large: no SM sharing, only memory contention. */
    p.sm_pack = 1e9;
    double packed = run(&p, &a, &b, 2);
    CHECK_MSG(packed < 1.3 * one, "two big, no SM sharing: %.0f ns against %.0f alone", packed, one);
    /* Host-bound processes overlap fully: each launches on its own thread. */
    p = psi_sim_mps_default();
    p.launch_ns = 50000;
    double t1 = run(&p, &s, &s, 1), t2 = run(&p, &s, &s, 2);
    CHECK_MSG(t2 < 1.01 * t1 && t1 > 8 * 50000, "host-bound: %.0f ns beside %.0f alone", t2, t1);
    /* The stagger delays the second process's launches. */
    p.stagger_ns = 30000;
    CHECK_NEAR(run(&p, &s, &s, 2), t1 + 30000, 100);
    /* Slower kernels (eq. 16) take longer. */
    p = psi_sim_mps_default();
    p.launch_ns = 0;
    p.flop_scale = 0.5;
    for (int i = 0; i < 8; i++)
        a.k[i].flop_eff = big.flop_eff * 0.5;
    sim_mps_model_t fresh;
    CHECK_OK(psi_sim_mps_model_init(&fresh, g, a.k, 8));
    sim_mps_model_t old = a.m;
    a.m = fresh;
    CHECK_MSG(run(&p, &a, &b, 1) > 1.6 * one, "half the FLOP rate: %.0f ns, %.0f before", run(&p, &a, &b, 1), one);
    a.m = old;
    psi_sim_mps_model_free(&fresh);
    /* Empty segments run nothing; a range outside the model is refused. */
    sim_physics_t ph = psi_sim_physics_default();
    sim_mps_seg_t bad = {&a.m, 4, 8}, empty = {&a.m, 0, 0};
    double ns = -1;
    CHECK(psi_sim_mps_run(&ph, &p, &bad, 1, &ns) == PS_E_ARG);
    CHECK_OK(psi_sim_mps_run(&ph, &p, &empty, 1, &ns));
    CHECK_NEAR(ns, p.start_ns, 1e-9);
    psi_sim_mps_model_free(&a.m);
    psi_sim_mps_model_free(&b.m);
    psi_sim_mps_model_free(&s.m);
}

TH_MAIN(TEST(test_sharing))
