/* Tests of the sparse-metric, auto, per-k, time, transfer and placement parts
 * of src/colocate (issue 17): the synthetic sparse fixture (workloads with
 * only exclusive_tput, 2/3/4-way sets), the placement solver against brute
 * force, and - where ../shared/data/kace-v100 exists - KACE's table with
 * every metric but the exclusive throughput removed. */
#include "colocate/colocate.h"
#include "common/common.h"
#include "testhelp.h"

#include <unistd.h>

#define FIX "tests/data/colocate/"
#define KACE "../shared/data/kace-v100/"

typedef struct {
    ps_workloads_t *w;
    ps_scaling_t *s;
    ps_colocations_t *c;
} tabs_t;

static int load_sparse(tabs_t *t)
{
    memset(t, 0, sizeof *t);
    if (ps_workloads_load(FIX "sparse_workloads.csv", &t->w))
        return -1;
    return ps_colocations_load(FIX "sparse_colocations.csv", &t->c);
}

static void unload(tabs_t *t)
{
    ps_workloads_free(t->w);
    ps_scaling_free(t->s);
    ps_colocations_free(t->c);
}

#define KIND(k) (1u << (k))

/* Every policy and auto: auto's figure (all k and per k) within 0.01 of the
 * best single kind it chose from. */
static void check_auto_near_best(const ps_coloc_eval_result_t *r, unsigned kinds, const char *what)
{
    for (int kk = 0; kk <= PS_COLOC_MAXK; kk++) {
        if (kk == 1)
            continue;
        const double *v = kk ? r->policy_k[kk] : r->policy_mean;
        if (isnan(v[PS_POL_AUTO]))
            continue;
        double best = -1;
        for (int k = 0; k < PS_COLOC_AUTO; k++)
            if ((kinds & KIND(k)) && !isnan(v[PS_POL_KACE_LR + k]) && v[PS_POL_KACE_LR + k] > best)
                best = v[PS_POL_KACE_LR + k];
        printf("%s k=%d: auto %.3f, best %.3f\n", what, kk, v[PS_POL_AUTO], best);
        CHECK_MSG(v[PS_POL_AUTO] >= best - 0.01, "%s k=%d: auto %.3f, best %.3f", what, kk, v[PS_POL_AUTO], best);
    }
}

/* Metrics no workload has are dropped: the rules and Xu et al. do not run
 * (NAN, listed in dropped), and are not read as a pick of the first
 * candidate. lowrank, on identity and solo throughput, beats the ratio
 * baseline, and auto stays within 0.01 of the best kind, per k too. */
static void test_sparse_auto(void)
{
    tabs_t t;
    CHECK_OK(load_sparse(&t));
    ps_coloc_eval_params_t p = ps_coloc_eval_default_params();
    p.seeds = 6;
    p.kinds = KIND(PS_COLOC_KACE_LR) | KIND(PS_COLOC_XU_RF) | KIND(PS_COLOC_RATIO) | KIND(PS_COLOC_LOWRANK) |
              KIND(PS_COLOC_AUTO);
    p.auto_kinds = p.kinds;
    ps_coloc_eval_result_t r;
    CHECK_OK(ps_coloc_eval(t.w, NULL, t.c, &p, &r));
    CHECK(isnan(r.policy_mean[PS_POL_MEMCAP]) && isnan(r.policy_mean[PS_POL_XU_RF]));
    CHECK(r.dropped & (1u << PS_POL_MEMCAP));
    CHECK(r.dropped & (1u << PS_POL_XU_RF));
    CHECK(!(r.dropped & (1u << PS_POL_KACE_LR)));
    CHECK(r.mape[PS_COLOC_LOWRANK] < r.mape[PS_COLOC_RATIO]);
    CHECK(r.policy_mean[PS_POL_LOWRANK] > r.policy_mean[PS_POL_RATIO]);
    /* 2-, 3- and 4-way sets are reported apart */
    for (int k = 2; k <= 4; k++)
        CHECK(r.targets_k[k] > 0 && !isnan(r.policy_k[k][PS_POL_LOWRANK]));
    CHECK(isnan(r.targets_k[5]));
    int chosen = 0;
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        chosen += r.auto_chosen[k];
    CHECK(chosen == p.seeds);
    CHECK(r.auto_chosen[PS_COLOC_XU_RF] == 0); /* dropped, so never a candidate */
    /* auto is the blend; its mean weights lie on the simplex, over the
     * candidates that ran, and the pick rule is scored beside it. */
    CHECK(r.auto_rule == ps_coloc_default_params().auto_rule);
    for (int q = 0; q < PS_COLOC_AUTO_RULES; q++) {
        double ws = 0;
        for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
            ws += r.rule_weight[q][k];
        CHECK_MSG(fabs(ws - 1) < 1e-9, "rule %d: weights sum to %g", q, ws);
        CHECK(r.rule_weight[q][PS_COLOC_XU_RF] == 0 && r.rule_weight[q][PS_COLOC_MPS] == 0 &&
              r.rule_weight[q][PS_COLOC_AUTO] == 0);
        CHECK(r.rule_mean[q] > 0.5 && r.rule_mean[q] <= 1 && isnan(r.rule_k[q][5]));
        for (int k = 2; k <= 4; k++)
            CHECK(r.rule_k[q][k] > 0.5 && r.rule_k[q][k] <= 1);
    }
    CHECK(memcmp(r.auto_weight, r.rule_weight[r.auto_rule], sizeof r.auto_weight) == 0);
    CHECK(r.rule_mean[r.auto_rule] == r.policy_mean[PS_POL_AUTO]);
    check_auto_near_best(&r, p.kinds, "sparse fixture");
    /* Time: |tput / pred - 1|, finite for per-workload kinds only. */
    CHECK(isfinite(r.time_mape[PS_COLOC_LOWRANK]) && isnan(r.time_mape[PS_COLOC_KACE_LR]));
    unload(&t);
}

/* The mps predictor on 3- and 4-way sets (its lowrank margin, pairwise
 * encoding and boosting rounds chosen by cross-validation) picks at least
 * as well as KACE's linear model of the sum. */
static void test_mps_kway(void)
{
    tabs_t t;
    CHECK_OK(load_sparse(&t));
    ps_coloc_eval_params_t p = ps_coloc_eval_default_params();
    p.seeds = 3;
    p.kinds = KIND(PS_COLOC_KACE_LR) | KIND(PS_COLOC_MPS);
    ps_coloc_eval_result_t r;
    CHECK_OK(ps_coloc_eval(t.w, NULL, t.c, &p, &r));
    for (int k = 3; k <= 4; k++) {
        printf("sparse fixture k=%d: mps %.3f, kace_lr %.3f\n", k, r.policy_k[k][PS_POL_MPS],
               r.policy_k[k][PS_POL_KACE_LR]);
        CHECK(r.policy_k[k][PS_POL_MPS] >= r.policy_k[k][PS_POL_KACE_LR]);
    }
    unload(&t);
}

/* Unseen combinations: every co-location holding a held-out pair is held
 * out; the predictors still score, with finite time errors. */
static void test_unseen_pairs(void)
{
    tabs_t t;
    CHECK_OK(load_sparse(&t));
    ps_coloc_eval_params_t p = ps_coloc_eval_default_params();
    p.seeds = 1;
    p.unseen_pairs = 1;
    p.kinds = KIND(PS_COLOC_RATIO) | KIND(PS_COLOC_LOWRANK);
    ps_coloc_eval_result_t r;
    CHECK_OK(ps_coloc_eval(t.w, NULL, t.c, &p, &r));
    printf("sparse fixture, unseen pairs: time MAPE ratio %.2f%%, lowrank %.2f%%\n", r.time_mape[PS_COLOC_RATIO],
           r.time_mape[PS_COLOC_LOWRANK]);
    CHECK(isfinite(r.time_mape[PS_COLOC_LOWRANK]) && r.time_mape[PS_COLOC_LOWRANK] > 0);
    CHECK(r.time_mape[PS_COLOC_LOWRANK] < r.time_mape[PS_COLOC_RATIO]);
    unload(&t);
}

/* A second GPU whose every throughput is half: trained on the first, the
 * per-workload kinds carry over through solo throughput (ratio terms), and
 * the model file names the GPU it was trained on. */
static void test_transfer(void)
{
    tabs_t t;
    CHECK_OK(load_sparse(&t));
    ps_workloads_t *w2 = ps_workloads_new();
    ps_colocations_t *c2 = ps_colocations_new();
    for (size_t i = 0; i < t.w->n; i++) {
        psi_workload_row_t r = t.w->rows[i];
        CHECK_OK(ps_workloads_append(w2, &r));
        r.gpu = "SIMGPU2";
        r.exclusive_tput *= 0.5;
        CHECK_OK(ps_workloads_append(w2, &r));
    }
    for (size_t i = 0; i < t.c->n; i++) {
        psi_colocation_row_t r = t.c->rows[i];
        r.gpu = "SIMGPU2";
        r.tput *= 0.5;
        CHECK_OK(ps_colocations_append(c2, &r));
    }
    ps_coloc_eval_params_t p = ps_coloc_eval_default_params();
    p.seeds = 1;
    p.test = c2;
    p.transfer = 1;
    p.kinds = KIND(PS_COLOC_RATIO) | KIND(PS_COLOC_LOWRANK) | KIND(PS_COLOC_KACE_LR);
    ps_coloc_eval_result_t r;
    CHECK_OK(ps_coloc_eval(w2, NULL, t.c, &p, &r));
    printf("transfer to a half-speed GPU: MAPE lowrank %.2f%%, ratio %.2f%%, kace_lr %.2f%%\n",
           r.mape[PS_COLOC_LOWRANK], r.mape[PS_COLOC_RATIO], r.mape[PS_COLOC_KACE_LR]);
    CHECK(r.mape[PS_COLOC_LOWRANK] < 10);
    CHECK(r.mape[PS_COLOC_KACE_LR] > r.mape[PS_COLOC_LOWRANK]); /* absolute sums do not carry over */
    ps_coloc_params_t mp = ps_coloc_default_params();
    mp.kind = PS_COLOC_LOWRANK;
    ps_coloc_model_t *m = NULL;
    CHECK_OK(ps_coloc_train(w2, NULL, t.c, &mp, &m));
    CHECK(m && strcmp(ps_coloc_model_gpu(m), "SIMGPU") == 0);
    ps_coloc_model_free(m);
    ps_workloads_free(w2);
    ps_colocations_free(c2);
    unload(&t);
}

/* A made-up group value: jobs have a weight; a group's value is the sum of
 * weights shrunk by how many share the GPU, with pair {0, 1} forbidden. */
static double toy_val(void *ctx, int type, const int *jobs, int k, int *shares)
{
    const double *wt = ctx;
    double v = 0;
    for (int i = 0; i < k; i++) {
        v += wt[jobs[i]] * (type ? 0.8 : 1.0) / (1 + 0.3 * (k - 1) * wt[jobs[(i + 1) % k]]);
        shares[i] = 100;
        for (int j = 0; j < k; j++)
            if (jobs[i] == 0 && jobs[j] == 1)
                return -INFINITY;
    }
    return v;
}

/* toy_val, counting the calls that ask for a group asked for before. */
typedef struct {
    const double *wt;
    uint64_t *seen;
    size_t n, cap;
    int repeats;
} counting_t;

static double counting_val(void *ctx, int t, const int *jobs, int k, int *shares)
{
    counting_t *c = ctx;
    uint64_t key = (uint64_t)t << 60;
    for (int i = 0; i < k; i++)
        key |= 1ull << jobs[i];
    for (size_t i = 0; i < c->n; i++)
        c->repeats += c->seen[i] == key;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 1024;
        uint64_t *g = realloc(c->seen, c->cap * sizeof *g);
        if (!g)
            abort();
        c->seen = g;
    }
    c->seen[c->n++] = key;
    return toy_val((void *)c->wt, t, jobs, k, shares);
}

static double brute(const double *wt, int n, const int *gt, int ng, int K, int *a, int j)
{
    if (j == n) {
        double v = 0;
        for (int g = 0; g < ng; g++) {
            int js[16], k = 0, sh[16];
            for (int i = 0; i < n; i++)
                if (a[i] == g)
                    js[k++] = i;
            if (k > K)
                return -INFINITY;
            if (k)
                v += toy_val((void *)wt, gt[g], js, k, sh);
        }
        return v;
    }
    double best = -INFINITY;
    for (int g = -1; g < ng; g++) {
        a[j] = g;
        double v = brute(wt, n, gt, ng, K, a, j + 1);
        best = v > best ? v : best;
    }
    return best;
}

/* The exact solver matches brute force (homogeneous and two GPU types,
 * jobs waiting when that pays); the heuristic stays close. */
static void test_place_solver(void)
{
    uint64_t st = 5;
    for (int rep = 0; rep < 6; rep++) {
        int n = 6 + rep % 2, ng = 3, K = 2 + rep % 2, gt[3] = {0, rep % 2, 0}, a[16], sh[16], exact = 0;
        double wt[16];
        for (int i = 0; i < n; i++)
            wt[i] = 0.2 + (double)(psi_splitmix64(&st) % 1000) / 1000.0;
        int ntypes = 1 + rep % 2;
        double bf = brute(wt, n, gt, ng, K, a, 0), obj = 0;
        cl_place_problem_t pb = {
            .n = n, .gtype = gt, .ng = ng, .ntypes = ntypes, .max_per_gpu = K, .val = toy_val, .ctx = wt};
        cl_placement_t pl = {.assign = a, .share = sh};
        CHECK_OK(psi_cl_place_solve(&pb, 0, NULL, &pl));
        obj = pl.objective, exact = pl.exact;
        CHECK(exact == 1);
        CHECK_NEAR(obj, bf, 1e-9);
        int per[3] = {0};
        for (int i = 0; i < n; i++)
            if (a[i] >= 0)
                per[a[i]]++;
        for (int g = 0; g < ng; g++)
            CHECK(per[g] <= K);
        CHECK(!(a[0] >= 0 && a[0] == a[1])); /* the forbidden pair */
    }
    /* 24 jobs on 6 GPUs: beyond the exact limit, the heuristic's answer is
     * feasible and at least the greedy "one job per GPU" value. */
    int n = 24, ng = 6, gt[6] = {0}, a[24], sh[24], exact = 1;
    double wt[24], obj = 0, alone = 0, sorted[24];
    for (int i = 0; i < n; i++)
        sorted[i] = wt[i] = 0.2 + (double)(psi_splitmix64(&st) % 1000) / 1000.0;
    cl_place_problem_t pb = {.n = n, .gtype = gt, .ng = ng, .ntypes = 1, .max_per_gpu = 4, .val = toy_val, .ctx = wt};
    cl_placement_t pl = {.assign = a, .share = sh};
    CHECK_OK(psi_cl_place_solve(&pb, 1, NULL, &pl));
    obj = pl.objective, exact = pl.exact;
    CHECK(exact == 0);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (sorted[j] > sorted[i]) {
                double x = sorted[i];
                sorted[i] = sorted[j];
                sorted[j] = x;
            }
    for (int i = 0; i < ng; i++)
        alone += sorted[i];
    CHECK(obj >= alone);
    /* The heuristic values each group once (a model's value is a
     * prediction; the local search asks for the same groups again). */
    counting_t cv = {.wt = wt};
    double obj2 = 0;
    pb.val = counting_val;
    pb.ctx = &cv;
    CHECK_OK(psi_cl_place_solve(&pb, 1, NULL, &pl));
    obj2 = pl.objective;
    CHECK_NEAR(obj2, obj, 1e-12);
    CHECK(cv.n > 0 && cv.repeats <= ng); /* only the final shares ask again */
    free(cv.seen);
}

/* Placement with a model: 8 jobs on 4 GPUs, K = 2, every job placed, the
 * objective the sum of the per-job normalized throughputs. */
static void test_place_model(void)
{
    tabs_t t;
    CHECK_OK(load_sparse(&t));
    ps_coloc_params_t mp = ps_coloc_default_params();
    mp.kind = PS_COLOC_LOWRANK;
    ps_coloc_model_t *m = NULL;
    CHECK_OK(ps_coloc_train(t.w, NULL, t.c, &mp, &m));
    const char *jobs[8];
    for (int i = 0; i < 8; i++)
        jobs[i] = t.w->rows[i].workload;
    ps_coloc_placement_t pl;
    ps_coloc_place_params_t pp = ps_coloc_place_default_params();
    CHECK_OK(ps_coloc_place(m, t.w, NULL, jobs, 8, NULL, 4, &pp, &pl));
    CHECK(pl.exact == 1);
    double sum = 0;
    int per[4] = {0};
    for (int i = 0; i < 8; i++) {
        CHECK(pl.gpu[i] >= 0 && pl.gpu[i] < 4);
        if (pl.gpu[i] >= 0)
            per[pl.gpu[i]]++;
        sum += pl.norm_tput[i];
    }
    for (int g = 0; g < 4; g++)
        CHECK(per[g] == 2);
    CHECK_NEAR(sum, pl.objective, 1e-9);
    CHECK(pl.objective > 0 && pl.objective < 8);
    ps_coloc_placement_free(&pl);
    /* an unknown job is an input error */
    jobs[0] = "no-such-job";
    CHECK(ps_coloc_place(m, t.w, NULL, jobs, 8, NULL, 4, &pp, &pl) == PS_E_INPUT);
    ps_coloc_model_free(m);
    unload(&t);
}

/* eval --place on the sparse fixture: ratios in (0, 1], oracle 1, the
 * predictors' placements above random. */
static void test_eval_place(void)
{
    tabs_t t;
    CHECK_OK(load_sparse(&t));
    ps_coloc_eval_params_t p = ps_coloc_eval_default_params();
    p.seeds = 3;
    p.train_frac = 0.5;
    p.kinds = KIND(PS_COLOC_LOWRANK) | KIND(PS_COLOC_RATIO);
    ps_coloc_place_case_t cs[2] = {{.n_jobs = 8, .n_gpus = 4}, {.n_jobs = 16, .n_gpus = 8}};
    CHECK_OK(ps_coloc_eval_place(t.w, NULL, t.c, &p, 2, cs, 2));
    for (int q = 0; q < 2; q++) {
        printf("eval --place %dx%d: lowrank %.3f, ratio %.3f, random %.3f\n", cs[q].n_jobs, cs[q].n_gpus,
               cs[q].ratio[PS_POL_LOWRANK], cs[q].ratio[PS_POL_RATIO], cs[q].ratio[PS_POL_RANDOM]);
        CHECK(cs[q].mixes == 3 && cs[q].exact == 3);
        CHECK_NEAR(cs[q].ratio[PS_POL_ORACLE], 1, 1e-12);
        CHECK(cs[q].ratio[PS_POL_LOWRANK] <= 1 + 1e-9 && cs[q].ratio[PS_POL_LOWRANK] > cs[q].ratio[PS_POL_RANDOM]);
        CHECK(isnan(cs[q].ratio[PS_POL_MPS]));
    }
    unload(&t);
}

/* KACE's V100 table with only exclusive_tput kept: auto within 0.01 of the
 * best kind. */
static void test_kace_sparse(void)
{
    if (access(KACE "colocations.csv", R_OK) != 0) {
        th_skip(KACE " is absent");
        return;
    }
    tabs_t t;
    memset(&t, 0, sizeof t);
    CHECK_OK(ps_workloads_load(KACE "workloads.csv", &t.w));
    CHECK_OK(ps_colocations_load(KACE "colocations.csv", &t.c));
    for (size_t i = 0; t.w && i < t.w->n; i++) {
        psi_workload_row_t *r = &t.w->rows[i];
        r->threads = r->registers = r->static_smem = r->sm_tput_pct = r->dram_tput_pct = r->mem_tput_pct = NAN;
        r->sm_busy_pct = r->mem_busy_pct = r->memcap_gb = NAN;
        r->stall_long_scoreboard = r->stall_lg_throttle = r->stall_mio_throttle = NAN;
    }
    ps_coloc_eval_params_t p = ps_coloc_eval_default_params();
    p.seeds = 10;
    p.kinds = KIND(PS_COLOC_KACE_LR) | KIND(PS_COLOC_RATIO) | KIND(PS_COLOC_MPS) | KIND(PS_COLOC_LOWRANK) |
              KIND(PS_COLOC_AUTO);
    p.auto_kinds = p.kinds;
    ps_coloc_eval_result_t r;
    CHECK_OK(ps_coloc_eval(t.w, NULL, t.c, &p, &r));
    check_auto_near_best(&r, p.kinds, "kace-v100 exclusive_tput only");
    unload(&t);
}

TH_MAIN(TEST(test_sparse_auto), TEST(test_mps_kway), TEST(test_unseen_pairs), TEST(test_transfer),
        TEST(test_place_solver), TEST(test_place_model), TEST(test_eval_place), TEST(test_kace_sparse))
