/*
 * The segment model on campaigns of the simulator (the "Done when"):
 * a model trained on a small A100 campaign of the six models (20 ordered
 * pairs, default batch sizes) beats the median slowdown per SM split on the
 * held-out experiments; continued training on 100 samples lowers the error
 * on an unseen model; window composition on segments longer than the window.
 */
#include "common/common.h"
#include "model/model.h"
#include "testhelp.h"
#include "test_model_lib.h"

static ps_train_params_t fast_params(void)
{
    ps_train_params_t p = ps_train_default_params();
    p.max_rounds = 200;
    p.n_depths = 1;
    p.depths[0] = 6;
    p.n_etas = 1;
    p.etas[0] = 0.2;
    p.nthread = 1; /* small data on a shared machine: one thread is fastest */
    return p;
}

static int simulate_b(const char *models, const char *pairs, const char *batches, long experiments, int min_len,
                      int max_len, uint64_t seed, ps_ops_t **ops, ps_coexec_t **cx)
{
    ps_sim_params_t s = ps_sim_default_params();
    s.gpu = "a100";
    s.models = models;
    s.pairs = pairs;
    s.batches = batches;
    s.experiments = experiments;
    s.runs = 2;
    s.min_len = min_len;
    s.max_len = max_len;
    s.seed = seed;
    s.threads = 1;
    int rc = ps_sim_run(&s, ops, cx);
    CHECK_MSG(rc == 0, "ps_sim_run: %s", ps_last_error());
    return rc;
}

static int simulate(const char *models, const char *pairs, long experiments, int min_len, int max_len,
                    uint64_t seed, ps_ops_t **ops, ps_coexec_t **cx)
{
    return simulate_b(models, pairs, NULL, experiments, min_len, max_len, seed, ops, cx);
}

static ps_model_t *SIX; /* trained on the six models */
static ps_ops_t *SIX_OPS;

static void test_beats_median_per_split(void)
{
    ps_coexec_t *cx = NULL;
    if (simulate(NULL, NULL, 1500, 1, 16, 11, &SIX_OPS, &cx) != 0)
        return;
    ps_train_params_t p = fast_params();
    double t0 = psi_now();
    CHECK_OK(ps_model_train(SIX_OPS, cx, &p, &SIX));
    if (SIX) {
        unsigned char *split = malloc(cx->n);
        CHECK_OK(ps_coexec_split(cx, p.seed, split));
        double mm[2], base[2];
        model_mape(SIX, SIX_OPS, cx, split, PS_SPLIT_TEST, mm);
        median_rule_mape(SIX_OPS, cx, split, base);
        printf("  %zu samples, trained in %.2f s; held-out MAPE HP %.2f%% LP %.2f%%; "
               "median slowdown per split HP %.2f%% LP %.2f%%\n",
               cx->n, psi_now() - t0, mm[0], mm[1], base[0], base[1]);
        CHECK(mm[0] < base[0]);
        CHECK(mm[1] < base[1]);
        free(split);
    }
    ps_coexec_free(cx);
}

/* Train on the four classic models; adapt on 50 experiments (100 samples)
 * of an unseen group and measure on 200 others of it. */
static void adapt_case(const ps_model_t *m, const char *what, const char *models, const char *pairs,
                       const char *batches)
{
    ps_ops_t *adapt_ops = NULL, *held_ops = NULL;
    ps_coexec_t *adapt = NULL, *held = NULL;
    ps_model_t *m2 = NULL;
    if (simulate_b(models, pairs, batches, 50, 1, 16, 22, &adapt_ops, &adapt) != 0 ||
        simulate_b(models, pairs, batches, 200, 1, 16, 23, &held_ops, &held) != 0)
        goto done;
    ps_train_params_t p = fast_params();
    double before[2], after[2];
    model_mape(m, held_ops, held, NULL, -1, before);
    double t0 = psi_now();
    CHECK_OK(ps_model_adapt(m, adapt_ops, adapt, &p, &m2));
    double secs = psi_now() - t0;
    if (!m2)
        goto done;
    model_mape(m2, held_ops, held, NULL, -1, after);
    printf("  %s: HP %.2f%% -> %.2f%%, LP %.2f%% -> %.2f%% after adapting on %zu samples in %.2f s\n", what,
           before[0], after[0], before[1], after[1], adapt->n, secs);
    CHECK(adapt->n == 100);
    CHECK(after[0] < before[0]);
    CHECK(after[1] < before[1]);
    CHECK(secs < 5.0);
done:
    ps_model_free(m2);
    ps_coexec_free(adapt);
    ps_coexec_free(held);
    ps_ops_free(adapt_ops);
    ps_ops_free(held_ops);
}

static void test_adapt_to_unseen_model(void)
{
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    ps_model_t *m = NULL;
    const char *classic = "resnet50,resnet101,mobilenetv2,bert-base";
    if (simulate(classic, NULL, 800, 1, 16, 21, &ops, &cx) != 0)
        goto done;
    ps_train_params_t p = fast_params();
    CHECK_OK(ps_model_train(ops, cx, &p, &m));
    if (!m)
        goto done;
    adapt_case(m, "unseen model llama-3.2-1b as HP", NULL,
               "llama-3.2-1b:8/resnet50:8,llama-3.2-1b:8/bert-base:8", NULL);
    adapt_case(m, "unseen batch size 64", classic, NULL, "64");
done:
    ps_model_free(m);
    ps_coexec_free(cx);
    ps_ops_free(ops);
}

/* Segments of 24 to 64 operators, beyond the 16-operator window: both
 * compositions give finite predictions; their errors are printed for the
 * record (the evaluation compares them at scale). */
static void test_long_segments(void)
{
    if (!SIX)
        return;
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    if (simulate(NULL, NULL, 150, 24, 64, 31, &ops, &cx) != 0)
        return;
    double idx[2], ovl[2];
    model_mape_ex(SIX, ops, cx, NULL, -1, PS_COMPOSE_INDEX, idx);
    model_mape_ex(SIX, ops, cx, NULL, -1, PS_COMPOSE_OVERLAP, ovl);
    printf("  long segments (24-64 ops, %zu runs): index pairing HP %.2f%% LP %.2f%%, "
           "time-aligned HP %.2f%% LP %.2f%%\n",
           cx->n, idx[0], idx[1], ovl[0], ovl[1]);
    CHECK(isfinite(idx[0]) && isfinite(idx[1]) && isfinite(ovl[0]) && isfinite(ovl[1]));
    /* Composition must stay in the range of a usable predictor. */
    CHECK(ovl[0] < 50 && ovl[1] < 50);
    ps_coexec_free(cx);
    ps_ops_free(ops);
}

static void teardown(void)
{
    ps_model_free(SIX);
    ps_ops_free(SIX_OPS);
}

TH_MAIN(TEST(test_beats_median_per_split), TEST(test_adapt_to_unseen_model), TEST(test_long_segments),
        TEST(teardown))
