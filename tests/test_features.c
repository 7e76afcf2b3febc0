/* Features: layout, per-side vectors, error messages, data set and splits. */
#include "common/common.h"
#include "features/features.h"
#include "testhelp.h"

#include <math.h>

static const char *GPU = "TEST-GPU";

/* A tiny profile: model "a" (20 ops) and "b" (6 ops), batch 4, at 4 and 8
 * TPCs; duration of op i of model m at t TPCs = (100 + 10 i + m) * 8 / t;
 * counters only on the 8-TPC rows (FORMATS.md: taken from the most TPCs),
 * except that op 2 of "b" has no DRAM counter at all. */
static ps_ops_t *make_ops(void)
{
    ps_ops_t *t = ps_ops_new();
    const char *models[2] = {"a", "b"};
    int nops[2] = {20, 6};
    char name[32];
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < nops[m]; i++)
            for (int t8 = 4; t8 <= 8; t8 += 4) {
                snprintf(name, sizeof name, "%s_op%d", models[m], i);
                psi_op_row_t r = {.gpu = GPU,
                                  .model = models[m],
                                  .batch = 4,
                                  .op = i,
                                  .name = name,
                                  .tpcs = t8,
                                  .intensity = PS_INTENSITY_NONE};
                r.duration_ns = (100.0 + 10 * i + m) * 8.0 / t8;
                double nan = NAN;
                r.c = (psi_counters_t){nan, nan, nan, nan, nan, nan, nan};
                if (t8 == 8) {
                    r.c.dram_bytes = (m == 1 && i == 2) ? NAN : 1000.0 * (i + 1);
                    r.c.stall_long_scoreboard = 10 + i;
                    r.c.stall_lg_throttle = 1 + m;
                    r.c.stall_mio_throttle = 2;
                    r.c.sm_pct = 50;
                    r.c.mem_pct = 20 + i;
                }
                CHECK_OK(ps_ops_append(t, &r));
            }
    CHECK_OK(psi_ops_index(t));
    return t;
}

static ps_query_t query(int hp_start, int hp_len, int lp_start, int lp_len)
{
    ps_query_t q = {.gpu = GPU,
                    .hp_model = "a",
                    .hp_batch = 4,
                    .hp_start = hp_start,
                    .hp_len = hp_len,
                    .lp_model = "b",
                    .lp_batch = 4,
                    .lp_start = lp_start,
                    .lp_len = lp_len,
                    .hp_tpcs = 4,
                    .lp_tpcs = 8};
    return q;
}

static void test_layout_and_names(void)
{
    psi_feature_layout_t l;
    CHECK_OK(psi_features_layout(PS_FEAT_FULL, 16, &l));
    CHECK(l.version == PS_FEATURES_LAYOUT_VERSION);
    CHECK(l.n_features == 2 * 16 * 6 + 4);
    char buf[64];
    CHECK(strcmp(psi_feature_name(&l, 0, buf, sizeof buf), "hp.op0.duration_ns") == 0);
    CHECK(strcmp(psi_feature_name(&l, 3 * 6 + 1, buf, sizeof buf), "hp.op3.dram_bytes") == 0);
    CHECK(strcmp(psi_feature_name(&l, 16 * 6 + 5 * 6 + 5, buf, sizeof buf), "lp.op5.present") == 0);
    CHECK(strcmp(psi_feature_name(&l, l.n_features - 4, buf, sizeof buf), "p_tpcs") == 0);
    int slot;
    CHECK(psi_feature_owner(&l, PS_SIDE_HP, 16 * 6 + 7, &slot) == PS_SIDE_LP && slot == 1);
    CHECK(psi_feature_owner(&l, PS_SIDE_HP, l.n_features - 1, &slot) == -1);

    CHECK_OK(psi_features_layout(PS_FEAT_NO_CORUNNER, 16, &l));
    CHECK(l.n_features == 16 * 6 + 4);
    CHECK(psi_feature_owner(&l, PS_SIDE_LP, 0, &slot) == PS_SIDE_LP && slot == 0);
    CHECK_OK(psi_features_layout(PS_FEAT_SUMMED, 16, &l));
    CHECK(l.n_features == 2 * 6 + 4);
    CHECK(strcmp(psi_feature_name(&l, 6, buf, sizeof buf), "lp.sum.duration_ns") == 0);
    CHECK_OK(psi_features_layout(PS_FEAT_DURATIONS, 8, &l));
    CHECK(l.n_features == 2 * 8 * 2 + 4);
    CHECK_OK(psi_features_layout(PS_FEAT_UTILIZATION, 16, &l));
    CHECK(l.n_features == 2 * 16 * 4 + 4);
    CHECK(strcmp(psi_feature_name(&l, 1, buf, sizeof buf), "hp.op0.sm_pct") == 0);

    CHECK(psi_features_layout((ps_feature_variant_t)9, 16, &l) == PS_E_ARG);
    CHECK(psi_features_layout(PS_FEAT_FULL, 0, &l) == PS_E_ARG);
}

static void test_full_vector(void)
{
    ps_ops_t *ops = make_ops();
    psi_feature_layout_t l;
    CHECK_OK(psi_features_layout(PS_FEAT_FULL, 16, &l));
    float x[200], y[200];
    psi_solo_t solo = {0, 0};
    ps_query_t q = query(2, 3, 1, 4);
    CHECK_OK(psi_features_build(&l, ops, &q, PS_SIDE_HP, x, &solo));
    double hs = solo.hp_ns, ls = solo.lp_ns;
    /* HP ops 2..4 of "a" at 4 TPCs: (100 + 10 i) * 2. */
    CHECK_NEAR(hs, (120 + 130 + 140) * 2.0, 1e-9);
    /* LP ops 1..4 of "b" at 8 TPCs: 101 + 10 i. */
    CHECK_NEAR(ls, 111 + 121 + 131 + 141, 1e-9);
    CHECK_NEAR(x[0], 240, 1e-3);    /* hp.op0.duration_ns */
    CHECK_NEAR(x[1], 3000, 1e-3);   /* hp.op0.dram_bytes from the 8-TPC row */
    CHECK_NEAR(x[2], 12, 1e-6);     /* long scoreboard */
    CHECK_NEAR(x[5], 1, 0);         /* present */
    CHECK_NEAR(x[3 * 6 + 0], 0, 0); /* slot 3 is empty */
    CHECK_NEAR(x[3 * 6 + 5], 0, 0);
    CHECK(isnan(x[96 + 1 * 6 + 1])); /* lp op 2 of "b" has no DRAM counter */
    CHECK_NEAR(x[96 + 0 * 6 + 0], 111, 1e-3);
    CHECK_NEAR(x[192], 4, 0);
    CHECK_NEAR(x[193], 8, 0);
    CHECK_NEAR(x[194], hs, 1e-2);
    CHECK_NEAR(x[195], ls, 1e-2);
    /* The LP regressor reads the same vector in the full variant. */
    CHECK_OK(psi_features_build(&l, ops, &q, PS_SIDE_LP, y, NULL));
    CHECK(memcmp(x, y, sizeof(float) * (size_t)l.n_features) == 0);
    float a[200], b[200];
    CHECK_OK(psi_features_build_pair(&l, ops, &q, a, b, NULL));
    CHECK(memcmp(a, x, sizeof(float) * (size_t)l.n_features) == 0);
    ps_ops_free(ops);
}

/* psi_features_build_pair_memo equals psi_features_build_pair bit for bit
 * over a sequence that repeats, overlaps and moves segments, changes TPC
 * counts, swaps the models of a side (the memo's tokens of one group, then
 * another, then the first again) and meets an error, in every variant. */
static void test_memo_matches(void)
{
    ps_ops_t *ops = make_ops();
    static const int hp[][3] = {{0, 4, 4}, {0, 4, 8}, {0, 4, 4},  {2, 6, 4},  {2, 6, 8},  {10, 10, 4},
                                {1, 3, 8}, {0, 1, 4}, {19, 1, 8}, {0, 16, 4}, {3, 16, 8}, {0, 4, 4}};
    static const int lp[][3] = {{0, 2, 8}, {1, 2, 8}, {2, 4, 4}, {0, 6, 4}, {0, 6, 8}, {3, 3, 4},
                                {1, 5, 8}, {0, 1, 4}, {5, 1, 8}, {0, 6, 8}, {2, 4, 4}, {0, 2, 8}};
    for (int v = PS_FEAT_FULL; v <= PS_FEAT_UTILIZATION; v++) {
        psi_feature_layout_t l;
        CHECK_OK(psi_features_layout((ps_feature_variant_t)v, 16, &l));
        psi_features_memo_t *memo = psi_features_memo_new(&l);
        CHECK(memo != NULL);
        size_t same = 0, n = 0;
        for (int pass = 0; memo && pass < 2; pass++)
            for (size_t k = 0; k < PS_ARRAY_LEN(hp); k++) {
                ps_query_t q = query(hp[k][0], hp[k][1], lp[k][0], lp[k][1]);
                q.hp_tpcs = hp[k][2];
                q.lp_tpcs = lp[k][2];
                if (pass == 1) { /* the models swapped: each side meets the other group */
                    q.hp_model = "b";
                    q.lp_model = "a";
                    q.hp_start %= 6;
                    q.hp_len = q.hp_len > 6 - q.hp_start ? 6 - q.hp_start : q.hp_len;
                }
                float a[2][200], b[2][200];
                psi_solo_t sa, sb;
                int ra = psi_features_build_pair(&l, ops, &q, a[0], a[1], &sa);
                int rb = psi_features_build_pair_memo(memo, ops, &q, b[0], b[1], &sb);
                CHECK(ra == rb);
                n++;
                size_t bytes = sizeof(float) * (size_t)l.n_features;
                same += ra == PS_OK && memcmp(a[0], b[0], bytes) == 0 && memcmp(a[1], b[1], bytes) == 0 &&
                        sa.hp_ns == sb.hp_ns && sa.lp_ns == sb.lp_ns;
                /* One vector for both sides where the variant shares it. */
                if (v != PS_FEAT_NO_CORUNNER && ra == PS_OK) {
                    CHECK_OK(psi_features_build_pair_memo(memo, ops, &q, b[0], b[0], NULL));
                    CHECK(memcmp(a[0], b[0], bytes) == 0);
                }
            }
        /* One query outside its model: refused, and the memo goes on. */
        ps_query_t bad = query(18, 4, 0, 2);
        float x[2][200];
        CHECK(memo && psi_features_build_pair_memo(memo, ops, &bad, x[0], x[1], NULL) == PS_E_INPUT);
        CHECK_MSG(same == n, "variant %d: %zu of %zu vectors equal", v, same, n);
        psi_features_memo_free(memo);
    }
    ps_ops_free(ops);
}

static void test_variants(void)
{
    ps_ops_t *ops = make_ops();
    psi_feature_layout_t l;
    float h[200], lp[200];
    ps_query_t q = query(0, 2, 0, 2);
    CHECK_OK(psi_features_layout(PS_FEAT_NO_CORUNNER, 16, &l));
    CHECK_OK(psi_features_build_pair(&l, ops, &q, h, lp, NULL));
    CHECK_NEAR(h[0], 200, 1e-3);  /* HP regressor: HP tokens */
    CHECK_NEAR(lp[0], 101, 1e-3); /* LP regressor: LP tokens */

    CHECK_OK(psi_features_layout(PS_FEAT_SUMMED, 16, &l));
    CHECK_OK(psi_features_build(&l, ops, &q, PS_SIDE_HP, h, NULL));
    CHECK_NEAR(h[0], 200 + 220, 1e-3);   /* durations summed */
    CHECK_NEAR(h[1], 1000 + 2000, 1e-3); /* bytes summed */
    /* long scoreboard: duration-weighted mean of 10 and 11 */
    CHECK_NEAR(h[2], (200 * 10 + 220 * 11) / 420.0, 1e-4);
    CHECK_NEAR(h[5], 2, 0); /* presence = operators */

    CHECK_OK(psi_features_layout(PS_FEAT_UTILIZATION, 16, &l));
    CHECK_OK(psi_features_build(&l, ops, &q, PS_SIDE_HP, h, NULL));
    CHECK_NEAR(h[1], 50, 0);
    CHECK_NEAR(h[2], 20, 0);
    CHECK_NEAR(h[3], 1, 0);
    ps_ops_free(ops);
}

static void test_errors_name_what_is_missing(void)
{
    ps_ops_t *ops = make_ops();
    psi_feature_layout_t l;
    CHECK_OK(psi_features_layout(PS_FEAT_FULL, 16, &l));
    float x[200];
    ps_query_t q = query(0, 4, 0, 4);
    q.lp_model = "nosuch";
    CHECK(psi_features_build(&l, ops, &q, PS_SIDE_HP, x, NULL) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "nosuch") != NULL);
    q = query(18, 4, 0, 4);
    CHECK(psi_features_build(&l, ops, &q, PS_SIDE_HP, x, NULL) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "outside its 20 operators") != NULL);
    q = query(0, 4, 0, 4);
    q.hp_tpcs = 6;
    CHECK(psi_features_build(&l, ops, &q, PS_SIDE_HP, x, NULL) == PS_E_INPUT);
    CHECK(strstr(ps_last_error(), "6 TPCs") != NULL);
    q = query(0, 17, 0, 4);
    CHECK(psi_features_build(&l, ops, &q, PS_SIDE_HP, x, NULL) == PS_E_ARG);
    CHECK(strstr(ps_last_error(), "window") != NULL);
    psi_feature_layout_t old = l;
    old.version = 0;
    q = query(0, 4, 0, 4);
    CHECK(psi_features_build(&old, ops, &q, PS_SIDE_HP, x, NULL) == PS_E_MISMATCH);
    CHECK(psi_features_build(&l, ops, &q, 7, x, NULL) == PS_E_ARG);
    ps_ops_free(ops);
}

/* n_exp experiments with `runs` rows each, named in the given order. */
static ps_coexec_t *make_coexec(int n_exp, int runs, int reverse, int long_every)
{
    ps_coexec_t *cx = ps_coexec_new();
    char name[32];
    for (int k = 0; k < n_exp; k++) {
        int e = reverse ? n_exp - 1 - k : k;
        snprintf(name, sizeof name, "exp%d", e);
        for (int r = 0; r < runs; r++) {
            psi_coexec_row_t row = {.experiment = name,
                                    .gpu = GPU,
                                    .hp_model = "a",
                                    .hp_batch = 4,
                                    .hp_start = e % 4,
                                    .hp_len = long_every && e % long_every == 0 ? 17 : 3,
                                    .lp_model = "b",
                                    .lp_batch = 4,
                                    .lp_start = 0,
                                    .lp_len = 2,
                                    .hp_tpcs = 4,
                                    .lp_tpcs = 4,
                                    .hp_ns = 900 + r,
                                    .lp_ns = 500 + r};
            CHECK_OK(ps_coexec_append(cx, &row));
        }
    }
    return cx;
}

static void test_split_by_experiment(void)
{
    ps_coexec_t *cx = make_coexec(100, 3, 0, 0), *rev = make_coexec(100, 3, 1, 0);
    unsigned char s[300], t[300], u[300];
    CHECK_OK(ps_coexec_split(cx, 1, s));
    CHECK_OK(ps_coexec_split(rev, 1, t));
    CHECK_OK(ps_coexec_split(cx, 2, u));
    int count[4] = {0, 0, 0, 0}, same_seed_diff = 0;
    for (int i = 0; i < 300; i++) {
        count[s[i]]++;
        if (i % 3)
            CHECK(s[i] == s[i - 1]); /* runs of one experiment share a split */
        /* row i of cx is experiment i/3; in rev it is at 99 - i/3 */
        CHECK(t[(99 - i / 3) * 3] == s[i]);
        same_seed_diff += s[i] != u[i];
    }
    /* 100 experiments: 70 train, 10 calibration, 10 validation, 10 test. */
    CHECK(count[PS_SPLIT_TRAIN] == 210 && count[PS_SPLIT_CALIB] == 30 && count[PS_SPLIT_VALID] == 30 &&
          count[PS_SPLIT_TEST] == 30);
    CHECK(same_seed_diff > 0); /* another seed draws another split */
    ps_coexec_free(cx);
    ps_coexec_free(rev);

    ps_coexec_t *few = make_coexec(3, 2, 0, 0);
    CHECK_OK(ps_coexec_split(few, 1, s));
    int seen[3] = {0, 0, 0};
    for (int i = 0; i < 6; i++)
        seen[s[i]] = 1;
    CHECK(seen[0] && seen[1] && seen[2]);
    ps_coexec_free(few);
}

static void test_dataset(void)
{
    ps_ops_t *ops = make_ops();
    ps_coexec_t *cx = make_coexec(20, 2, 0, 5);
    psi_feature_layout_t l;
    CHECK_OK(psi_features_layout(PS_FEAT_FULL, 16, &l));
    psi_dataset_t *d = NULL;
    CHECK_OK(psi_dataset_build(&l, ops, cx, 1, &d));
    CHECK(d && d->n == 32 && d->n_skipped == 8); /* experiments 0, 5, 10, 15 are too long */
    CHECK(d && d->n_experiments == 20);
    if (d && d->n == 32) {
        double solo = psi_group_segment_ns(psi_ops_find(ops, GPU, "a", 4), d->rows[0]->hp_start, 3, 4);
        CHECK_NEAR(d->hp_solo_ns[0], solo, 1e-9);
        CHECK_NEAR(d->y_hp[0], log(d->rows[0]->hp_ns / solo), 1e-12);
        for (size_t i = 1; i < d->n; i++)
            if (d->experiment[i] == d->experiment[i - 1])
                CHECK(d->split[i] == d->split[i - 1]);
    }
    /* The lean data set (training's) has every field but the vectors, and
     * builds each sample's vectors again with the same values. */
    psi_dataset_t *lean = NULL;
    CHECK_OK(psi_dataset_build_lean(&l, ops, cx, 1, &lean));
    CHECK(lean && lean->x_hp == NULL && lean->x_lp == NULL);
    if (d && lean && lean->n == d->n) {
        size_t nf = (size_t)l.n_features, bad = 0;
        float *v = malloc(nf * sizeof *v);
        for (size_t i = 0; v && i < d->n; i++) {
            bad += lean->y_hp[i] != d->y_hp[i] || lean->y_lp[i] != d->y_lp[i] || lean->split[i] != d->split[i] ||
                   lean->rows[i] != d->rows[i];
            for (int side = 0; side < 2; side++) {
                CHECK_OK(psi_dataset_features(lean, ops, i, side, v));
                bad += memcmp(v, (side == PS_SIDE_HP ? d->x_hp : d->x_lp) + i * nf, nf * sizeof *v) != 0;
                CHECK_OK(psi_dataset_features(d, ops, i, side, v));
                bad += memcmp(v, (side == PS_SIDE_HP ? d->x_hp : d->x_lp) + i * nf, nf * sizeof *v) != 0;
            }
        }
        CHECK(v != NULL);
        CHECK_MSG(bad == 0, "%zu differences between the lean and the full data set", bad);
        free(v);
    } else
        CHECK(lean && d && lean->n == d->n);
    psi_dataset_free(lean);
    psi_dataset_free(d);
    ps_coexec_free(cx);

    /* A row naming a missing profile fails and names the row. */
    cx = make_coexec(3, 1, 0, 0);
    cx->rows[1].lp_model = "gone";
    CHECK(psi_dataset_build(&l, ops, cx, 1, &d) == PS_E_INPUT);
    CHECK(d == NULL);
    CHECK(strstr(ps_last_error(), "coexec row 2") != NULL && strstr(ps_last_error(), "gone") != NULL);
    ps_coexec_free(cx);

    /* A segment outside its model, longer than the window or not, and with
     * start + len past INT_MAX, is an error, not a skipped row or a crash. */
    static const int starts[] = {3, 2147483647, 0, 5};
    static const int lens[] = {18, 8, 2147483647, 2147483647};
    for (int k = 0; k < 4; k++) {
        cx = make_coexec(3, 1, 0, 0);
        cx->rows[2].hp_start = starts[k];
        cx->rows[2].hp_len = lens[k];
        CHECK(psi_dataset_build(&l, ops, cx, 1, &d) == PS_E_INPUT);
        CHECK(d == NULL);
        CHECK(strstr(ps_last_error(), "coexec row 3") && strstr(ps_last_error(), "outside its 20 operators"));
        ps_coexec_free(cx);
    }
    ps_ops_free(ops);
}

TH_MAIN(TEST(test_layout_and_names), TEST(test_full_vector), TEST(test_memo_matches), TEST(test_variants),
        TEST(test_errors_name_what_is_missing), TEST(test_split_by_experiment), TEST(test_dataset))
