/* Abacus's groups as module paths, the overlap.csv reader and writer, and
 * the composition of k co-runners from pairs. */
#include "pairsight.h"
#include "common/common.h"
#include "evaluate/overlap_internal.h"
#include "model/xgb.h"
#include "profile/abacus.h"
#include "profile/overlap.h"

#include "testhelp.h"

#include <unistd.h>

static void check_paths(const char *model, int g, const char *want)
{
    char buf[256];
    int n = psi_abacus_group_paths(model, g, buf, sizeof buf);
    CHECK_MSG(n > 0 && strcmp(buf, want) == 0, "%s group %d: '%s', want '%s'", model, g, buf, want);
}

static void test_group_paths(void)
{
    check_paths("resnet50", 0, "conv1 bn1 relu maxpool");
    check_paths("resnet50", 1, "layer1.0");
    check_paths("resnet50", 4, "layer2.0");
    check_paths("resnet50", 16, "layer4.2");
    check_paths("resnet50", 17, "avgpool fc");
    check_paths("resnet101", 33, "layer4.2");
    check_paths("resnet152", 50, "layer4.2");
    check_paths("resnet152", 51, "avgpool fc");
    check_paths("vgg16", 0, "features.0 features.1");
    check_paths("vgg16", 2, "features.4");
    check_paths("vgg16", 17, "features.30");
    check_paths("vgg16", 18, "avgpool classifier");
    check_paths("vgg19", 20, "features.36");
    check_paths("vgg19", 21, "avgpool classifier");
    check_paths("inception_v3", 2, "Mixed_5b");
    check_paths("inception_v3", 13, "avgpool dropout fc");
    check_paths("bert", 11, "encoder.layer.11");
    char buf[64];
    CHECK(psi_abacus_group_paths("resnet50", 18, buf, sizeof buf) == 0);
    CHECK(psi_abacus_group_paths("alexnet", 0, buf, sizeof buf) == 0);
    CHECK(psi_abacus_model_ops("vgg19") == 22 && psi_abacus_model_ops("x") == 0);
    CHECK(psi_abacus_in_path("layer3.4.conv2", "layer3.4"));
    CHECK(psi_abacus_in_path("fc", "fc"));
    CHECK(!psi_abacus_in_path("layer3.41.conv2", "layer3.4"));
    CHECK(!psi_abacus_in_path("fc2", "fc"));
}

/* An experiment of k slots in the dedicated A100, its slots to fill. */
static psi_ov_exp_t exp_new(const char *id, int k)
{
    psi_ov_exp_t e;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.gpu = "A100-40GB";
    e.setting = "dedicated";
    e.mechanism = "mps";
    e.k = k;
    return e;
}

static void test_round_trip(void)
{
    static char dir[64];
    th_tmpdir_make(dir, sizeof dir, "overlap");
    psi_overlap_t *t = psi_overlap_new(), *back = NULL;
    psi_ov_exp_t e = exp_new("x,1", 2);
    e.slot[0] = (psi_ov_slot_t){"resnet50", 4, 0, 0, 18, 18};
    e.slot[1] = (psi_ov_slot_t){"bert", 8, 16, 3, 3, 12};
    e.median_us = 1234.5;
    e.mean_us = 1300.25;
    e.std_us = NAN;
    CHECK_OK(psi_overlap_add(t, &e));
    const char *path = th_path(dir, "o.csv");
    CHECK_OK(psi_overlap_save(t, path));
    CHECK_OK(psi_overlap_load(path, &back));
    CHECK(ps_table_is_overlap(path) == 1);
    CHECK(back && back->n == 1 && strcmp(back->exps[0].id, "x,1") == 0 && back->exps[0].k == 2);
    CHECK(back && back->exps[0].slot[1].seq_len == 16 && back->exps[0].median_us == 1234.5);
    CHECK(back && isnan(back->exps[0].std_us) && psi_ov_active(&back->exps[0]) == 1);
    psi_overlap_free(t);
    psi_overlap_free(back);
    th_tmpdir_remove(dir);
}

/* Issue 41 item 12: times bounded physically, the times of an experiment
 * consistent, something run, one group count per model, settings of a safe
 * pattern; each case was accepted before. */
static void test_refusals(void)
{
    static const char hdr[] = "experiment,gpu,setting,mechanism,k,slot,model,batch,seq_len,op_start,op_end,model_ops,"
                              "median_us,mean_us,std_us\n";
    static const struct {
        const char *rows, *want;
    } bad[] = {
        {"e,A100-40GB,dedicated,mps,2,1,resnet50,4,0,0,3,18,1e308,,\n"
         "e,A100-40GB,dedicated,mps,2,2,bert,8,8,0,2,12,1e308,,\n",
         "o.csv:2:13: median_us: 1e+308 us is over one hour"},
        {"e,A100-40GB,dedicated,mps,2,1,resnet50,4,0,0,3,18,100,101,5e9\n"
         "e,A100-40GB,dedicated,mps,2,2,bert,8,8,0,2,12,100,101,5e9\n",
         "o.csv:2:15: std_us: 5e+09 us is over one hour"},
        {"e,A100-40GB,dedicated,mps,2,1,resnet50,4,0,3,3,18,40,41,1\n"
         "e,A100-40GB,dedicated,mps,2,2,bert,8,8,2,2,12,40,41,1\n",
         "o.csv:2:10: experiment 'e': no slot runs anything"},
        {"e,A100-40GB,dedicated,mps,2,1,resnet50,4,0,0,3,18,100,80,5\n"
         "e,A100-40GB,dedicated,mps,2,2,bert,8,8,0,2,12,100,80,5\n",
         "o.csv:2:14: mean_us: experiment 'e': median 100, mean 80, std 5 us: mean and median differ by more than std"},
        {"e,A100-40GB,dedicated,mps,2,1,resnet50,4,0,0,3,18,100,40,\n"
         "e,A100-40GB,dedicated,mps,2,2,bert,8,8,0,2,12,100,40,\n",
         "mean below half the median"},
        {"e,A100-40GB,dedicated,mps,2,1,resnet50,4,0,0,3,18,100,,\n"
         "e,A100-40GB,dedicated,mps,2,2,bert,8,8,0,2,12,100,,\n"
         "f,A100-40GB,dedicated,mps,2,1,resnet50,4,0,0,3,17,100,,\n"
         "f,A100-40GB,dedicated,mps,2,2,bert,8,8,0,2,12,100,,\n",
         "o.csv:4:12: model_ops: 17, but line 2 gives model 'resnet50' 18 groups"},
        {"e,A100-40GB,mig-../../etc,mps,2,1,resnet50,4,0,0,3,18,100,,\n"
         "e,A100-40GB,mig-../../etc,mps,2,2,bert,8,8,0,2,12,100,,\n",
         "o.csv:2:3: setting: must be dedicated or mig-<profile>"},
        {"e,A100-40GB,mig-<b>,mps,2,1,resnet50,4,0,0,3,18,100,,\n"
         "e,A100-40GB,mig-<b>,mps,2,2,bert,8,8,0,2,12,100,,\n",
         "setting: must be dedicated or mig-<profile>"},
    };
    static char dir[64];
    th_tmpdir_make(dir, sizeof dir, "overlap");
    const char *path = th_path(dir, "o.csv");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        if (f) {
            fputs(hdr, f);
            fputs(bad[i].rows, f);
            fclose(f);
        }
        psi_overlap_t *t = NULL;
        int rc = psi_overlap_load(path, &t);
        CHECK_MSG(rc == PS_E_INPUT && !t && strstr(ps_last_error(), bad[i].want), "case %zu: rc %d: %s", i, rc,
                  ps_last_error());
        psi_overlap_free(t);
    }
    /* what the artefact has: MIG profiles, a mean just under the median within std */
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f,
                "%se,A100-40GB,mig-2g.10gb,mps,2,1,resnet50,4,0,0,3,18,100,99.5,1\n"
                "e,A100-40GB,mig-2g.10gb,mps,2,2,bert,8,8,2,2,12,100,99.5,1\n"
                "g,A100-40GB,mig-1g.5gb+me,mps,2,1,resnet50,4,0,0,3,18,3600000000,,\n"
                "g,A100-40GB,mig-1g.5gb+me,mps,2,2,bert,8,8,2,2,12,3600000000,,\n",
                hdr);
        fclose(f);
    }
    psi_overlap_t *t = NULL;
    CHECK_OK(psi_overlap_load(path, &t));
    CHECK(t && t->n == 2);
    psi_overlap_free(t);
    th_tmpdir_remove(dir);
}

/* A made-up 2-way law, makespan = max + 0.3 (sum - max) + 5 us, over three
 * models whose group g costs 10 + g us alone; every eighth experiment
 * single-active (the solo table's runs). */
static psi_overlap_t *law_table(void)
{
    static const char *const models[3] = {"a", "b", "c"};
    static const int groups[3] = {10, 8, 6};
    psi_overlap_t *t = psi_overlap_new();
    psi_rng_t r;
    psi_rng_seed(&r, 7);
    for (int i = 0; i < 600; i++) {
        psi_ov_exp_t e = exp_new("law", 2);
        int m0 = i % 3, m1 = (i / 3) % 3;
        double t_s[2] = {0, 0};
        for (int s = 0; s < 2; s++) {
            int m = s ? m1 : m0, g = groups[m];
            int a = (int)(psi_rng_uniform(&r) * g), b = a + 1 + (int)(psi_rng_uniform(&r) * (g - a));
            b = b > g ? g : b;
            if (s == 1 && i % 8 == 0)
                b = a;
            e.slot[s] = (psi_ov_slot_t){models[m], 4, 0, a, b, g};
            for (int x = a; x < b; x++)
                t_s[s] += 10 + x;
        }
        double mx = fmax(t_s[0], t_s[1]);
        e.median_us = mx + 0.3 * (t_s[0] + t_s[1] - mx) + 5;
        e.mean_us = e.std_us = NAN;
        CHECK_OK(psi_overlap_add(t, &e));
    }
    return t;
}

/* Composition: with two active slots it is the 2-way model exactly (kmax 1
 * forces it onto every 2-active row), and a 4-process co-run is predicted
 * as T_L + sum (P_j - T_L) of its pairs with the longest. */
static void test_compose(void)
{
    psi_overlap_t *t = law_table();
    size_t n = t->n, *idx = malloc(n * sizeof *idx);
    double *x = malloc(n * NF_PS * sizeof *x), *y = malloc(n * sizeof *y), mx, sum;
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    solo_t s;
    CHECK_OK(psi_ov_solo_fit(t, idx, n, 0.01, &s));
    size_t nr = 0;
    psi_ov_pred_ctx_t c = {&s, NULL, 0x1f, 2, NULL, NULL};
    for (size_t i = 0; i < n; i++) {
        psi_ov_ps_features(&t->exps[i], &c, x + nr * NF_PS, &mx, &sum);
        if (mx > 0)
            y[nr++] = t->exps[i].median_us / mx;
    }
    const char *kv[] = {"max_depth", "3", "eta", "0.3", "nthread", "1", "tree_method", "hist", NULL};
    CHECK_OK(psi_xgb_train(&(psi_xgb_rows_t){.x = x, .y = y, .n = (int)nr, .d = NF_PS}, kv, 30, &c.booster));
    double *direct = malloc(n * sizeof *direct), *comp = malloc(n * sizeof *comp);
    CHECK_OK(psi_ov_ps_predict(&c, t, NULL, n, direct));
    c.kmax = 1;
    CHECK_OK(psi_ov_ps_predict(&c, t, NULL, n, comp));
    size_t two = 0;
    for (size_t i = 0; i < n; i++) {
        CHECK_MSG(direct[i] == comp[i], "row %zu: composed %.17g, direct %.17g", i, comp[i], direct[i]);
        two += psi_ov_active(&t->exps[i]) == 2;
    }
    CHECK(two > 400);

    /* A 4-process co-run: a[0,10) b[0,8) c[0,6) a[2,5), and its pairs. */
    psi_overlap_t *q = psi_overlap_new();
    psi_ov_exp_t e = exp_new("four", 4);
    e.slot[0] = (psi_ov_slot_t){"b", 4, 0, 0, 8, 8};
    e.slot[1] = (psi_ov_slot_t){"a", 4, 0, 0, 10, 10};
    e.slot[2] = (psi_ov_slot_t){"c", 4, 0, 0, 6, 6};
    e.slot[3] = (psi_ov_slot_t){"a", 4, 0, 2, 5, 10};
    e.median_us = e.mean_us = e.std_us = 1;
    CHECK_OK(psi_overlap_add(q, &e));
    psi_ov_exp_t p = e;
    p.k = 2;
    int others[3] = {0, 2, 3};
    for (int j = 0; j < 3; j++) {
        p.slot[0] = others[j] == 0 ? e.slot[0] : e.slot[1];
        p.slot[1] = others[j] == 0 ? e.slot[1] : e.slot[others[j]];
        CHECK_OK(psi_overlap_add(q, &p));
    }
    double pr[4];
    c.kmax = 2;
    CHECK_OK(psi_ov_ps_predict(&c, q, NULL, 4, pr));
    double tl = psi_ov_solo_of(&s, "dedicated", &e.slot[1]);
    double want = tl + (pr[1] - tl) + (pr[2] - tl) + (pr[3] - tl);
    CHECK_MSG(isfinite(pr[0]) && fabs(pr[0] - want) < 1e-9 * want, "4-way %.6f, want %.6f", pr[0], want);
    CHECK_MSG(pr[0] > pr[1] && pr[0] > pr[2], "4-way %.1f below a pair (%.1f, %.1f)", pr[0], pr[1], pr[2]);
    psi_overlap_free(q);
    psi_xgb_free(c.booster);
    psi_ov_solo_free(&s);
    psi_overlap_free(t);
    free(idx);
    free(x);
    free(y);
    free(direct);
    free(comp);
}

TH_MAIN(TEST(test_group_paths), TEST(test_round_trip), TEST(test_refusals), TEST(test_compose))
