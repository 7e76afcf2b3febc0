/* The collector's measurement protocol, checked on the fake backend (which
 * runs the campaign code of the GPU path) and on its pure parts:
 * distinct memory per operator, standalone profiles in model order, SM
 * clocks recorded and off-clock runs refused, the counters FORMATS.md
 * names and the permission message, green-context granularity, the
 * mechanism column and the fixed cost of a co-execution. */
#include "collect/backend.h"
#include "collect/memplan.h"
#include "profile/oplist.h"
#include "collect/plan.h"
#include "collect/store.h"
#include "common/common.h"
#include "testhelp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];

static const char *tmp(const char *name) { return th_path(tmpdir, name); }

static ps_collect_params_t fake_params(void)
{
    ps_collect_params_t p = ps_collect_default_params();
    p.backend = "fake";
    p.profile_runs = 5;
    p.seq_len = 32;
    return p;
}

/* Every block of the plan lies in the arena, no two blocks overlap, and an
 * operator reads its predecessor's output whenever it fits. */
static void check_plan(const psi_oplist_t *l, const psi_memplan_t *m, uintptr_t base)
{
    typedef struct {
        uintptr_t at;
        size_t n;
    } blk_t;
    blk_t *b = calloc(3 * (size_t)l->n, sizeof *b);
    int nb = 0, chained = 0;
    for (int i = 0; i < l->n; i++) {
        const psi_opbuf_t *o = &m->op[i];
        long long in, w, out;
        psi_op_tensor_elems(&l->ops[i], &in, &w, &out);
        CHECK_MSG(o->w_bytes == (size_t)w * 2 && o->out_bytes == (size_t)out * 2, "%s: sizes",
                  l->ops[i].name);
        CHECK(o->out >= base && o->out + o->out_bytes <= base + m->total_bytes);
        b[nb++] = (blk_t){o->out, o->out_bytes};
        if (o->w_bytes) {
            CHECK(o->w >= base && o->w + o->w_bytes <= base + m->total_bytes);
            b[nb++] = (blk_t){o->w, o->w_bytes};
        }
        if (i > 0 && o->chained) {
            CHECK(o->in == m->op[i - 1].out && m->op[i - 1].out_bytes >= o->in_bytes);
            chained++;
        } else {
            CHECK_MSG(i == 0 || m->op[i - 1].out_bytes < o->in_bytes, "%s: not chained", l->ops[i].name);
            b[nb++] = (blk_t){o->in, o->in_bytes};
        }
    }
    int overlaps = 0;
    for (int i = 0; i < nb; i++)
        for (int j = i + 1; j < nb; j++)
            overlaps += b[i].at < b[j].at + b[j].n && b[j].at < b[i].at + b[i].n;
    CHECK_MSG(overlaps == 0, "%s: %d overlapping buffers", l->model, overlaps);
    CHECK_MSG(chained > l->n / 2, "%s: only %d of %d operators read their predecessor's output", l->model,
              chained, l->n);
    free(b);
}

/* Fix 1: each operator has its own weights and output, chained as the
 * model runs; the fake backend reports the addresses, and the weights add up
 * to the published parameter count. */
static void test_distinct_memory_per_operator(void)
{
    ps_collect_params_t p = fake_params();
    psi_backend_t *be = NULL;
    CHECK_OK(psi_backend_open(&p, &be));
    static const char *const models[] = {"resnet50", "bert-base", "mobilenetv2"};
    for (size_t k = 0; k < PS_ARRAY_LEN(models); k++) {
        psi_oplist_t *l = NULL;
        psi_memplan_t m;
        CHECK_OK(psi_zoo_build(models[k], 8, 128, &l));
        CHECK_OK(be->buffers(be, l, &m));
        CHECK(m.n == l->n && m.total_bytes >= m.weight_bytes + m.activation_bytes);
        check_plan(l, &m, m.op[0].w ? m.op[0].w : m.op[0].in);
        if (k == 0) /* ResNet-50: 25,557,032 parameters less the fc bias (1000), fp16 */
            CHECK_MSG(m.weight_bytes == 2 * (25557032ULL - 1000), "resnet50 weights %zu bytes", m.weight_bytes);
        psi_memplan_free(&m);
        psi_oplist_free(l);
    }
    be->free(be);
    /* The campaign reports it too. */
    ps_campaign_t *c = NULL;
    double w = 0, a = 0;
    CHECK_OK(ps_campaign_open(":memory:", &p, &c));
    CHECK_OK(ps_campaign_model_memory(c, "resnet50", 8, &w, &a));
    CHECK(w == 2.0 * (25557032 - 1000) && a > 8 * 3 * 224 * 224 * 2.0);
    ps_campaign_free(c);
}

/* Fix 2: the standalone profile runs the whole model in order, run after
 * run, warm-up runs first. */
static void test_profile_in_model_order(void)
{
    ps_collect_params_t p = fake_params();
    psi_backend_t *be = NULL;
    psi_oplist_t *l = NULL;
    CHECK_OK(psi_backend_open(&p, &be));
    CHECK_OK(psi_zoo_build("mobilenetv2", 4, 0, &l));
    int warmup = 2, runs = 3;
    double *ns = calloc((size_t)l->n * runs, sizeof *ns), mhz[3];
    psi_runs_t rs = {warmup, runs, mhz};
    CHECK_OK(be->profile(be, l, 20, &rs, ns));
    const int *ops = NULL;
    int n = 0;
    CHECK_OK(psi_backend_fake_trace(be, &ops, &n));
    CHECK_MSG(n == (warmup + runs) * l->n, "%d operators executed, want %d", n, (warmup + runs) * l->n);
    int out_of_order = 0;
    for (int i = 0; i < n; i++)
        out_of_order += ops[i] != i % l->n;
    CHECK(out_of_order == 0);
    for (int r = 0; r < runs; r++)
        CHECK(mhz[r] > 1000);
    free(ns);
    psi_oplist_free(l);
    be->free(be);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return calloc(1, 1);
    char *s = calloc(1, 1 << 22);
    size_t n = fread(s, 1, (1 << 22) - 1, f);
    s[n] = '\0';
    fclose(f);
    return s;
}

static int profile_and_export(const ps_collect_params_t *p, const char *db, const char *ops_csv,
                              ps_campaign_status_t *st)
{
    static const int tpcs[] = {6, 20, 54};
    ps_campaign_t *c = NULL;
    int rc = ps_campaign_open(db, p, &c);
    if (rc == 0)
        rc = ps_campaign_profile(c, "mobilenetv2", 2, tpcs, 3, NULL, NULL);
    if (rc == 0 && ops_csv)
        rc = ps_campaign_export(c, ops_csv, NULL);
    if (rc == 0 && st)
        rc = ps_campaign_status(c, st);
    ps_campaign_free(c);
    return rc;
}

/* Fix 2: every run's SM clock is recorded; a run off the campaign's clock
 * is refused and its task measured again, so one throttled run leaves the
 * rows those of a clean campaign, and a GPU that stays off-clock is
 * refused with a message saying what to do. */
static void test_clock_recorded_and_off_clock_refused(void)
{
    ps_collect_params_t p = fake_params();
    ps_campaign_status_t st;
    CHECK_OK(profile_and_export(&p, tmp("clean.db"), tmp("clean.csv"), &st));
    CHECK(st.sm_clock_mhz == 1410 && st.clock_min_mhz == 1410 && st.clock_max_mhz == 1410);
    CHECK(st.clock_refused == 0);

    p.fake_throttle = -7; /* the 7th timed run alone: task 2, run 1 */
    CHECK_OK(profile_and_export(&p, tmp("glitch.db"), tmp("glitch.csv"), &st));
    CHECK_MSG(st.clock_refused == 1, "%ld runs refused", st.clock_refused);
    CHECK(st.clock_min_mhz == 1410);
    char *a = slurp(tmp("clean.csv")), *b = slurp(tmp("glitch.csv"));
    CHECK(strlen(a) > 1000 && strcmp(a, b) == 0);
    free(a);
    free(b);

    p.fake_throttle = 8; /* from the 8th run on: task 2 never passes */
    CHECK(profile_and_export(&p, tmp("hot.db"), NULL, NULL) == PS_E_BACKEND);
    const char *e = ps_last_error();
    CHECK_MSG(strstr(e, "SM clock") && strstr(e, "1128 MHz") && strstr(e, "1410 MHz") &&
                  strstr(e, "--lock-gpu-clocks"),
              "%s", e);
    p.clock_tol_pct = 25; /* a 20% drop is then within tolerance */
    CHECK_OK(profile_and_export(&p, tmp("hot2.db"), NULL, &st));
    CHECK(st.clock_refused == 0 && st.clock_min_mhz < 1200);
    p.clock_tol_pct = -1;
    ps_campaign_t *c = NULL;
    CHECK(ps_campaign_open(tmp("bad.db"), &p, &c) == PS_E_ARG);
}

/* Fix 4: the counters are exactly those FORMATS.md names for ops.csv, in
 * the order of psi_counters_t; without permission the error says how to
 * get it; counters on a partition land on that TPC count's rows. */
static void test_counters_as_formats_names_them(void)
{
    char *doc = slurp("docs/FORMATS.md");
    if (!*doc) {
        free(doc);
        CHECK_MSG(0, "docs/FORMATS.md not found (run from the source tree)");
        return;
    }
    /* The ops.csv table ends where coexec.csv's section starts. */
    char *end = strstr(doc, "## coexec.csv");
    if (end)
        *end = '\0';
    static const char *const columns[7] = {"dram_bytes", "l2_bytes", "stall_long_scoreboard",
                                           "stall_lg_throttle", "stall_mio_throttle", "sm_pct", "mem_pct"};
    for (int i = 0; i < 7; i++) {
        char row[64];
        snprintf(row, sizeof row, "\n| %s |", columns[i]);
        const char *line = strstr(doc, row);
        CHECK_MSG(line, "FORMATS.md has no ops.csv row %s", columns[i]);
        if (!line)
            continue;
        const char *eol = strchr(line + 1, '\n');
        char metric[128];
        snprintf(metric, sizeof metric, "`%s`", psi_counter_metrics[i]);
        const char *hit = strstr(line, metric);
        /* The stall rows name the long-scoreboard metric once and say
         * "same for" the others: their names follow the same pattern. */
        if (i == 3 || i == 4) {
            const char *v = i == 3 ? "lg_throttle" : "mio_throttle";
            char want[128];
            snprintf(want, sizeof want, "smsp__warp_issue_stalled_%s_per_warp_active.pct", v);
            CHECK_MSG(strcmp(psi_counter_metrics[i], want) == 0, "%s", psi_counter_metrics[i]);
            continue;
        }
        CHECK_MSG(hit && (!eol || hit < eol), "row %s does not name %s", columns[i], psi_counter_metrics[i]);
    }
    free(doc);

    ps_collect_params_t p = fake_params();
    p.fake_no_permission = 1;
    ps_campaign_t *c = NULL;
    CHECK_OK(ps_campaign_open(tmp("perm.db"), &p, &c));
    CHECK(ps_campaign_counters(c, "mobilenetv2", 2) == PS_E_BACKEND);
    CHECK_MSG(strstr(ps_last_error(), "NVreg_RestrictProfilingToAdminUsers=0") &&
                  strstr(ps_last_error(), "root"),
              "%s", ps_last_error());
    ps_campaign_free(c);

    p.fake_no_permission = 0;
    CHECK_OK(profile_and_export(&p, tmp("ctr.db"), NULL, NULL));
    CHECK_OK(ps_campaign_open(tmp("ctr.db"), &p, &c));
    CHECK_OK(ps_campaign_counters(c, "mobilenetv2", 2));
    CHECK_OK(ps_campaign_counters_at(c, "mobilenetv2", 2, 20));
    CHECK(ps_campaign_counters_at(c, "mobilenetv2", 2, 1) == PS_E_ARG); /* 2 SMs: below the minimum */
    CHECK_OK(ps_campaign_export(c, tmp("ctr.csv"), NULL));
    ps_campaign_free(c);
    ps_ops_t *ops = NULL;
    CHECK_OK(ps_ops_load(tmp("ctr.csv"), &ops));
    int at[64] = {0};
    for (size_t i = 0; ops && i < ops->n; i++)
        if (!isnan(ops->rows[i].c.dram_bytes) && ops->rows[i].tpcs < 64)
            at[ops->rows[i].tpcs]++;
    CHECK_MSG(at[54] > 100 && at[20] == at[54] && at[6] == 0, "counters at 54: %d, 20: %d, 6: %d", at[54],
              at[20], at[6]);
    ps_ops_free(ops);
}

/* Fix 5: the valid TPC counts are what the driver gives (an H200-like
 * device: groups of 8 SMs, 132 SMs), and the mechanism is recorded in
 * coexec.csv; an empty-segment co-execution measures the fixed cost. */
static void test_granularity_mechanism_fixed_cost(void)
{
    ps_collect_device_t d;
    memset(&d, 0, sizeof d);
    snprintf(d.gpu, sizeof d.gpu, "H200");
    d.sm_count = 132;
    d.tpc_count = 66;
    d.min_partition_sms = 8;
    d.sm_alignment = 8;
    for (int s = 8; s <= 128; s += 8)
        d.valid_sms_mask[s / 64] |= 1ULL << (s % 64);
    int v[128];
    int n = ps_collect_valid_tpcs(&d, v, 128);
    CHECK_MSG(n == 17 && v[0] == 4 && v[1] == 8 && v[15] == 64 && v[16] == 66, "%d counts, first %d, last %d",
              n, v[0], v[n - 1]);
    CHECK(psi_plan_check_tpcs(&d, (const int[]){6}, 1) == PS_E_ARG);
    CHECK_OK(psi_plan_check_tpcs(&d, (const int[]){4, 32, 66}, 3));

    ps_collect_params_t p = fake_params();
    ps_campaign_t *c = NULL;
    CHECK_OK(ps_campaign_open(tmp("mech.db"), &p, &c));
    ps_collect_device_t fd;
    CHECK_OK(ps_campaign_device(c, &fd));
    CHECK(fd.mechanism && strcmp(fd.mechanism, "sim") == 0);
    static const int tp[] = {20, 34};
    CHECK_OK(ps_campaign_profile(c, "mobilenetv2", 2, tp, 2, NULL, NULL));
    CHECK_OK(ps_campaign_profile(c, "bert-base", 2, tp, 2, NULL, NULL));
    ps_coexec_plan_t plan = ps_coexec_default_plan();
    plan.hp_model = "mobilenetv2";
    plan.hp_batch = 2;
    plan.lp_model = "bert-base";
    plan.lp_batch = 2;
    plan.experiments = 3;
    plan.runs = 2;
    plan.tpcs = tp;
    plan.n_tpcs = 2;
    CHECK_OK(ps_campaign_coexec(c, &plan, NULL, NULL));
    CHECK_OK(ps_campaign_export(c, NULL, tmp("mech.csv")));
    double h[4], l[4];
    CHECK_OK(ps_campaign_fixed_cost(c, 20, 34, 4, h, l));
    for (int r = 0; r < 4; r++)
        CHECK_MSG(h[r] > 5000 && h[r] < 7000 && l[r] > 5000 && l[r] < 7000, "fixed cost %g / %g ns", h[r], l[r]);
    CHECK(ps_campaign_fixed_cost(c, 40, 34, 4, h, l) == PS_E_ARG);
    ps_campaign_free(c);
    ps_coexec_t *t = NULL;
    CHECK_OK(ps_coexec_load(tmp("mech.csv"), &t));
    CHECK(t && t->n == 6);
    for (size_t i = 0; t && i < t->n; i++)
        CHECK(t->rows[i].mechanism && strcmp(t->rows[i].mechanism, "sim") == 0);
    ps_coexec_free(t);
}

/* Fix 5: MPS jobs record the share of the SMs their context was given
 * (the fake backend applies CUDA_MPS_ACTIVE_THREAD_PERCENTAGE as MPS does,
 * to whole SMs of its 108). */
static void test_mps_share_recorded(void)
{
    ps_collect_params_t p = fake_params();
    const ps_mps_job_t jobs[3] = {{"mobilenetv2", 2, 20}, {"mobilenetv2", 2, 60}, {"bert-base", 2, 100}};
    double t[3];
    int sms[3] = {0, 0, 0};
    char gpu[64];
    CHECK_OK(ps_collect_mps_run_sms(&p, jobs, 3, 0.01, t, gpu, sizeof gpu, sms));
    CHECK_MSG(sms[0] == 22 && sms[1] == 65 && sms[2] == 108, "SMs %d %d %d", sms[0], sms[1], sms[2]);
    CHECK(t[0] > 0 && t[0] < t[1]);
}

static void test_setup(void) { th_tmpdir_make(tmpdir, sizeof tmpdir, "ps_test_protocol"); }

static void test_teardown(void) { th_tmpdir_remove(tmpdir); }

TH_MAIN(TEST(test_setup), TEST(test_distinct_memory_per_operator), TEST(test_profile_in_model_order),
        TEST(test_clock_recorded_and_off_clock_refused), TEST(test_counters_as_formats_names_them),
        TEST(test_granularity_mechanism_fixed_cost), TEST(test_mps_share_recorded), TEST(test_teardown))
