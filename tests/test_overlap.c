/* Abacus's groups as module paths, and the overlap.csv reader and writer. */
#include "pairsight.h"
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

static void test_round_trip(void)
{
    static char dir[64];
    th_tmpdir_make(dir, sizeof dir, "overlap");
    psi_overlap_t *t = psi_overlap_new(), *back = NULL;
    psi_ov_exp_t e;
    memset(&e, 0, sizeof e);
    e.id = "x,1";
    e.gpu = "A100-40GB";
    e.setting = "dedicated";
    e.mechanism = "mps";
    e.k = 2;
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

TH_MAIN(TEST(test_group_paths), TEST(test_round_trip))
