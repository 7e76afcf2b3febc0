/* The CUDA backend on a real GPU: every operator kind launches, green
 * contexts really bound the SMs, co-executions and counters come back, and
 * a small campaign exports. Exits 77 (skipped) where the build has no CUDA
 * module, a CUDA library is missing, or there is no GPU. */
#include "collect/backend.h"
#include "profile/oplist.h"
#include "common/common.h"
#include "testhelp.h"

#include <unistd.h>

static psi_backend_t *be;

static void add(psi_oplist_t *l, psi_opkind_t kind, int variant, const char *name, const long long *p, int np)
{
    psi_opdesc_t op;
    memset(&op, 0, sizeof op);
    op.kind = kind;
    op.variant = variant;
    memcpy(op.p, p, (size_t)np * sizeof *p);
    snprintf(op.name, sizeof op.name, "%s", name);
    psi_oplist_push(l, &op);
}

#define P(...) ((const long long[]){__VA_ARGS__}), (int)(sizeof((const long long[]){__VA_ARGS__}) / sizeof(long long))

/* One operator of every kind and variant, the first a GEMM large enough
 * that its time scales with the SMs it gets. */
static psi_oplist_t *every_kind(void)
{
    psi_oplist_t *l = psi_oplist_new("kinds", 1, 128);
    add(l, PS_OPK_GEMM, 0, "gemm.big", P(4096, 4096, 4096, 1));
    add(l, PS_OPK_GEMM, 0, "gemm.batched", P(128, 128, 64, 96));
    add(l, PS_OPK_CONV, 0, "conv.3x3", P(8, 64, 56, 56, 64, 3, 3, 1, 1, 1));
    add(l, PS_OPK_CONV, 0, "conv.dw", P(8, 144, 56, 56, 144, 3, 3, 2, 1, 144));
    for (int v = PS_NORM_BATCH; v <= PS_NORM_RMS; v++)
        add(l, PS_OPK_NORM, v, psi_opvariant_name(PS_OPK_NORM, v), P(1024, 768, v == PS_NORM_BATCH ? 64 : 1));
    add(l, PS_OPK_SOFTMAX, 0, "softmax", P(8 * 12 * 128, 128));
    for (int v = PS_ELT_RELU; v <= PS_ELT_ROPE; v++)
        add(l, PS_OPK_ELTWISE, v, psi_opvariant_name(PS_OPK_ELTWISE, v),
            P(1 << 22, v == PS_ELT_ADD || v == PS_ELT_MUL || v == PS_ELT_SILU_MUL ? 2 : 1));
    add(l, PS_OPK_POOL, PS_POOL_MAX, "maxpool", P(8, 64, 112, 112, 3, 2));
    add(l, PS_OPK_POOL, PS_POOL_AVG, "avgpool", P(8, 64, 56, 56, 3, 1));
    add(l, PS_OPK_POOL, PS_POOL_GLOBAL, "gap", P(8, 2048, 7, 7, 7, 1));
    add(l, PS_OPK_ATTN, 0, "attn.gqa", P(2, 32, 8, 256, 256, 64, 1));
    add(l, PS_OPK_EMBED, 0, "embed", P(1024, 2048, 128256));
    return l;
}

static void test_device_info(void)
{
    const ps_collect_device_t *d = &be->dev;
    printf("device %s: %d SMs, partitions of >= %d SMs in multiples of %d, cc %d.%d\n", d->gpu,
           d->sm_count, d->min_partition_sms, d->sm_alignment, d->cc_major, d->cc_minor);
    CHECK(d->sm_count > 0 && d->tpc_count == d->sm_count / 2);
    CHECK(d->min_partition_sms > 0 && d->sm_alignment > 0);
    int v[512];
    CHECK(ps_collect_valid_tpcs(d, v, 512) > 1);
}

static void test_every_kind_on_green_contexts(void)
{
    psi_oplist_t *l = every_kind();
    int v[512];
    int n = ps_collect_valid_tpcs(&be->dev, v, 512);
    int lo = v[0], hi = v[n - 1];
    int runs = 3;
    double *small = calloc((size_t)l->n * runs, sizeof *small);
    double *big = calloc((size_t)l->n * runs, sizeof *big);
    double mhz[3];
    psi_runs_t rs = {2, runs, mhz};
    CHECK_OK(be->profile(be, l, lo, &rs, small));
    CHECK_OK(be->profile(be, l, hi, &rs, big));
    for (int i = 0; i < l->n; i++) {
        CHECK_MSG(small[i * runs] > 0 && big[i * runs] > 0, "%s: %g / %g ns", l->ops[i].name,
                  small[i * runs], big[i * runs]);
        printf("  %-14s %10.0f ns at %2d TPCs %10.0f ns at %2d TPCs\n", l->ops[i].name,
               small[i * runs], lo, big[i * runs], hi);
    }
    /* A 4096^3 GEMM is compute-bound: on a fraction of the SMs it must take
     * several times longer, or the green context did not bound the SMs. */
    CHECK_MSG((double)hi / lo < 4 || small[0] > 2.0 * big[0], "gemm %g ns at %d TPCs vs %g ns at %d",
              small[0], lo, big[0], hi);
    free(small);
    free(big);
    psi_oplist_free(l);
}

static void test_coexec_and_counters(void)
{
    psi_oplist_t *hp = NULL, *lp = NULL;
    CHECK_OK(psi_zoo_build("resnet50", 8, 0, &hp));
    CHECK_OK(psi_zoo_build("bert-base", 8, 128, &lp));
    int v[512];
    int n = ps_collect_valid_tpcs(&be->dev, v, 512);
    int half = v[n / 2 - 1];
    int rest = 0;
    for (int i = 0; i < n; i++)
        if (v[i] + half <= be->dev.tpc_count)
            rest = v[i];
    psi_segment_t hs = {hp, 10, 16, half}, ls = {lp, 40, 16, rest};
    double h[5], w[5], mhz[5];
    psi_runs_t rs = {2, 5, mhz};
    CHECK_OK(be->coexec(be, &hs, &ls, &rs, h, w));
    for (int r = 0; r < 5; r++)
        CHECK(h[r] > 0 && w[r] > 0);
    printf("  coexec resnet50[10,26)@%d beside bert-base[40,56)@%d: %.0f / %.0f ns\n", half, rest, h[0], w[0]);
    psi_counters_t *c = calloc((size_t)hp->n, sizeof *c);
    int rc = be->counters(be, hp, be->dev.tpc_count, c);
    if (rc != 0 && strstr(ps_last_error(), "NVreg_RestrictProfilingToAdminUsers")) {
        printf("  counters skipped: %s\n", ps_last_error());
    } else {
        CHECK_OK(rc);
        /* conv1 of ResNet-50 at batch 8 reads at least its input once. */
        CHECK_MSG(c[0].dram_bytes > 0.5 * 8 * 3 * 224 * 224 * 2, "conv1 dram %g", c[0].dram_bytes);
        CHECK(c[0].sm_pct >= 0 && c[0].sm_pct <= 100);
        printf("  counters conv1: dram %.3g B, l2 %.3g B, sm %.1f%%, mem %.1f%%\n", c[0].dram_bytes,
               c[0].l2_bytes, c[0].sm_pct, c[0].mem_pct);
    }
    free(c);
    psi_oplist_free(hp);
    psi_oplist_free(lp);
}

/* The arena on the device: every operator's weights and output distinct,
 * the chain as the model runs it, the clock read. */
static void test_memory_and_clock(void)
{
    psi_oplist_t *l = NULL;
    psi_memplan_t m;
    CHECK_OK(psi_zoo_build("resnet50", 8, 0, &l));
    CHECK_OK(be->buffers(be, l, &m));
    int chained = 0, dup = 0;
    for (int i = 0; i < l->n; i++) {
        chained += m.op[i].chained;
        for (int j = 0; j < i; j++)
            dup += m.op[j].out == m.op[i].out || (m.op[i].w && m.op[j].w == m.op[i].w);
    }
    CHECK_MSG(dup == 0 && chained > l->n / 2, "%d shared buffers, %d chained", dup, chained);
    printf("  resnet50 b8 arena: %.1f MB weights, %.1f MB activations; SM clock %.0f MHz (max %.0f)\n",
           m.weight_bytes * 1e-6, m.activation_bytes * 1e-6, be->dev.sm_clock_mhz, be->dev.sm_clock_max_mhz);
    psi_memplan_free(&m);
    psi_oplist_free(l);
}

int main(void)
{
    ps_collect_params_t p = ps_collect_default_params();
    int rc = psi_backend_open(&p, &be);
    if (rc == PS_E_BACKEND) {
        printf("skipped: %s\n", ps_last_error());
        /* _exit: nothing ran, and LeakSanitizer's exit scan can crash on the
         * mappings the CUDA runtime leaves after failing to find a driver. */
        fflush(NULL);
        _exit(77);
    }
    if (rc != 0) {
        fprintf(stderr, "%s\n", ps_last_error());
        return 1;
    }
    static const th_test_t tests[] = {TEST(test_device_info), TEST(test_every_kind_on_green_contexts),
                                      TEST(test_coexec_and_counters), TEST(test_memory_and_clock)};
    int failed = th_run(tests, PS_ARRAY_LEN(tests));
    be->free(be);
    return failed;
}
