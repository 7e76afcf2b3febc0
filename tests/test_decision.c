/*
 * The decision stage (src/decision): calibrated bounds cover held-out seeds
 * at their target, the planner finds the known optimum of hand-made cases
 * and never plans past its budget, and a replay is the same for a seed.
 */
#include "common/common.h"
#include "decision/decision.h"
#include "model/calib.h"
#include "model/model.h"
#include "testhelp.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define GPU "A100-SXM4-40GB"
#define CLASSIC "resnet50,resnet101,mobilenetv2,bert-base"

static ps_ops_t *OPS;
static ps_coexec_t *CX;
static ps_model_t *MODEL;

static int simulate(long experiments, int runs, uint64_t seed, ps_ops_t **ops, ps_coexec_t **cx)
{
    ps_sim_params_t s = ps_sim_default_params();
    s.gpu = "a100";
    s.models = CLASSIC;
    s.experiments = experiments;
    s.runs = runs;
    s.seed = seed;
    s.threads = 2;
    int rc = ps_sim_run(&s, ops, cx);
    CHECK_MSG(rc == 0, "ps_sim_run: %s", ps_last_error());
    return rc;
}

/* m written to a fresh temporary file and read back into *out: path is a
 * mkstemp template, which names the file afterwards (the caller unlinks
 * it). Returns 0, or -1 where a step failed. */
static int file_copy(const ps_model_t *m, char *path, ps_model_t **out)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd);
    return m && ps_model_save(m, path) == 0 && ps_model_load(path, out) == 0 ? 0 : -1;
}

static void setup(void)
{
    if (simulate(3000, 3, 1, &OPS, &CX) != 0)
        return;
    ps_train_params_t p = ps_train_default_params();
    p.max_rounds = 100;
    p.n_depths = 1;
    p.depths[0] = 6;
    p.n_etas = 1;
    p.etas[0] = 0.3;
    p.nthread = 2;
    CHECK_OK(ps_model_train(OPS, CX, &p, &MODEL));
    ps_model_info_t i;
    if (MODEL && ps_model_info(MODEL, &i) == 0) {
        /* 10% of the experiments, all their runs, calibrate. */
        CHECK(i.n_calib == 300 * 3);
        CHECK(i.n_train + i.n_valid + i.n_test + i.n_calib == i.n_samples);
    }
}

/* On the calibration rows themselves the conformal quantile covers exactly:
 * between c and c + 1/(n+1) in every bin used (the bins partition the rows),
 * so the pooled share lies in [c, c + 1/(min_bin + 1)]. */
static void test_coverage_on_calibration_rows(void)
{
    if (!MODEL)
        return;
    psi_feature_layout_t l;
    psi_dataset_t *d = NULL;
    CHECK_OK(psi_features_layout(PS_FEAT_FULL, PS_WINDOW, &l));
    CHECK_OK(psi_dataset_build(&l, OPS, CX, 1, &d));
    if (!d)
        return;
    const psi_calib_t *cal = psi_model_calib(MODEL);
    size_t nf = (size_t)l.n_features;
    const double levels[3] = {0.80, 0.90, 0.95};
    for (int k = 0; cal && k < 3; k++) {
        double n = 0, ch = 0, cl = 0;
        for (size_t i = 0; i < d->n; i++) {
            if (d->split[i] != PS_SPLIT_CALIB)
                continue;
            double ph, pl, oh, ol;
            psi_model_predict_rows(MODEL, PS_SIDE_HP, d->x_hp + i * nf, 1, &ph);
            psi_model_predict_rows(MODEL, PS_SIDE_LP, d->x_lp + i * nf, 1, &pl);
            ps_query_t q = psi_query_of_row(d->rows[i]);
            CHECK_OK(psi_calib_offsets(cal, OPS, &q, levels[k], &oh, &ol));
            n++;
            ch += d->y_hp[i] <= ph + oh;
            cl += d->y_lp[i] <= pl + ol;
        }
        double hi = levels[k] + 1.0 / (cal->min_bin + 1) + 1e-9;
        CHECK(n == (double)cal->n_rows);
        CHECK_MSG(ch / n >= levels[k] && ch / n <= hi, "HP %.4f at %.2f", ch / n, levels[k]);
        CHECK_MSG(cl / n >= levels[k] && cl / n <= hi, "LP %.4f at %.2f", cl / n, levels[k]);
    }
    psi_dataset_free(d);
}

/* Coverage on a campaign of other seeds. Split conformal covers an
 * exchangeable sample at c on average over calibration draws; one draw of
 * n calibration experiments errs by about SE = sqrt(c (1 - c) / n) (1.7
 * points at 0.9 for the 300 here), so the check allows 1.5 points plus two
 * SE; the +-1.5 of the issue is measured at scripts/run.sh scale
 * (docs/planner.md). Bounds lie above the points and grow with c. */
static void test_coverage_held_out_seeds(void)
{
    if (!MODEL)
        return;
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    if (simulate(1500, 2, 77, &ops, &cx) != 0)
        return;
    size_t n = cx->n;
    ps_query_t *q = malloc(n * sizeof *q);
    double *mh = malloc(n * sizeof *mh), *ml = malloc(n * sizeof *ml);
    for (size_t i = 0; i < n; i++) {
        q[i] = psi_query_of_row(&cx->rows[i]);
        mh[i] = cx->rows[i].hp_ns;
        ml[i] = cx->rows[i].lp_ns;
    }
    const double levels[2] = {0.90, 0.95};
    double n_exp = (double)psi_model_calib(MODEL)->n_experiments;
    for (int k = 0; k < 2; k++) {
        bound_cov_t c;
        CHECK_OK(psi_bound_coverage(MODEL, ops, &(psi_measured_t){q, mh, ml, n}, levels[k], &c));
        double tol = 1.5 + 2 * 100 * sqrt(levels[k] * (1 - levels[k]) / n_exp);
        printf("  held-out seed 77, %zu runs: coverage at %.2f HP %.2f%% LP %.2f%% (tolerance %.2f), "
               "width HP %.2f%% LP %.2f%%\n",
               c.n, levels[k], c.hp_cover, c.lp_cover, tol, c.hp_width, c.lp_width);
        CHECK(c.n == n);
        CHECK_NEAR(c.hp_cover, 100 * levels[k], tol);
        CHECK_NEAR(c.lp_cover, 100 * levels[k], tol);
        CHECK(c.hp_width > 0 && c.lp_width > 0);
    }
    /* Bounds lie above the points, grow with the coverage and survive the
     * model file. */
    size_t m = 200;
    double *b = malloc(8 * m * sizeof *b);
    CHECK_OK(ps_model_predict(MODEL, ops, q, m, b, b + m));
    CHECK_OK(ps_model_predict_bound(MODEL, ops, q, m, 0.9, b + 2 * m, b + 3 * m));
    CHECK_OK(ps_model_predict_bound(MODEL, ops, q, m, 0.99, b + 4 * m, b + 5 * m));
    char path[] = "/tmp/psi_test_decision_XXXXXX";
    ps_model_t *loaded = NULL;
    CHECK_OK(file_copy(MODEL, path, &loaded));
    if (loaded)
        CHECK_OK(ps_model_predict_bound(loaded, ops, q, m, 0.9, b + 6 * m, b + 7 * m));
    int above = 1, grows = 1, same = loaded != NULL;
    for (size_t i = 0; i < m; i++) {
        above &= b[2 * m + i] > b[i] && b[3 * m + i] > b[m + i];
        grows &= b[4 * m + i] >= b[2 * m + i] && b[5 * m + i] >= b[3 * m + i];
        /* cJSON writes 15 significant digits when they read back within an epsilon. */
        same &= loaded && fabs(b[6 * m + i] / b[2 * m + i] - 1) < 1e-6 && fabs(b[7 * m + i] / b[3 * m + i] - 1) < 1e-6;
    }
    CHECK(above);
    CHECK(grows);
    CHECK(same);
    /* Errors: coverage out of range; an adapted model has no calibration. */
    CHECK(ps_model_predict_bound(MODEL, ops, q, 1, 0.3, b, b + 1) == PS_E_ARG);
    CHECK(ps_model_predict_bound(MODEL, ops, q, 1, 1.0, b, b + 1) == PS_E_ARG);
    ps_model_t *adapted = NULL;
    ps_train_params_t tp = ps_train_default_params();
    tp.adapt_rounds = 2;
    tp.nthread = 1;
    ps_coexec_t *few = ps_coexec_new();
    for (size_t i = 0; i < 20; i++)
        ps_coexec_append(few, &cx->rows[i]);
    CHECK_OK(ps_model_adapt(MODEL, ops, few, &tp, &adapted));
    if (adapted) {
        CHECK(ps_model_predict_bound(adapted, ops, q, 1, 0.9, b, b + 1) == PS_E_ARG);
        CHECK(strstr(ps_last_error(), "calibration") != NULL);
    }
    ps_model_free(adapted);
    ps_coexec_free(few);
    ps_model_free(loaded);
    unlink(path);
    free(b);
    free(q);
    free(mh);
    free(ml);
    ps_coexec_free(cx);
    ps_ops_free(ops);
}

/* Composed segments: calibrated on one long campaign, the bound covers its
 * rows exactly (k = ceil((n + 1) c) of n) and a campaign of another seed within
 * 1.5 points plus two standard errors of the two draws; it survives save and
 * load; too few long rows are refused. */
static int simulate_long(uint64_t seed, ps_ops_t **ops, ps_coexec_t **cx)
{
    ps_sim_params_t s = ps_sim_default_params();
    s.gpu = "a100";
    s.models = CLASSIC;
    s.experiments = 600;
    s.runs = 1;
    s.min_len = 24;
    s.max_len = 64;
    s.seed = seed;
    s.threads = 2;
    int rc = ps_sim_run(&s, ops, cx);
    CHECK_MSG(rc == 0, "ps_sim_run: %s", ps_last_error());
    return rc;
}

/* Coverage of m's bounds on every row of cx. */
static void campaign_coverage(const ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *cx, double level,
                              bound_cov_t *out)
{
    ps_query_t *q = psi_malloc(cx->n * sizeof *q);
    double *h = psi_malloc(2 * cx->n * sizeof *h);
    for (size_t i = 0; q && h && i < cx->n; i++) {
        q[i] = psi_query_of_row(&cx->rows[i]);
        h[i] = cx->rows[i].hp_ns;
        h[cx->n + i] = cx->rows[i].lp_ns;
    }
    CHECK_OK(psi_bound_coverage(m, ops, &(psi_measured_t){q, h, h + cx->n, cx->n}, level, out));
    free(q);
    free(h);
}

static void test_composed_calibration(void)
{
    ps_ops_t *o1 = NULL, *o2 = NULL;
    ps_coexec_t *c1 = NULL, *c2 = NULL;
    char path[] = "/tmp/ps_test_composedXXXXXX";
    ps_model_t *m = NULL, *back = NULL;
    if (!MODEL || simulate_long(21, &o1, &c1) != 0 || simulate_long(22, &o2, &c2) != 0 ||
        file_copy(MODEL, path, &m) != 0)
        goto done;
    CHECK_OK(ps_model_calibrate_composed(m, o1, c1));
    CHECK_OK(ps_model_save(m, path));
    CHECK_OK(ps_model_load(path, &back));
    const double levels[] = {0.9, 0.95};
    for (int k = 0; k < 2; k++) {
        bound_cov_t cal, held, reread;
        campaign_coverage(m, o1, c1, levels[k], &cal);
        campaign_coverage(m, o2, c2, levels[k], &held);
        if (back)
            campaign_coverage(back, o2, c2, levels[k], &reread);
        double c = 100 * levels[k], top = 100 * ((double)(cal.n + 1) * levels[k] + 1) / (double)cal.n + 1e-9;
        CHECK_MSG(cal.hp_cover >= c - 1e-9 && cal.hp_cover <= top && cal.lp_cover >= c - 1e-9 && cal.lp_cover <= top,
                  "calibration rows at %g: HP %.2f LP %.2f", c, cal.hp_cover, cal.lp_cover);
        double tol = 1.5 + 2 * 100 * sqrt(2 * levels[k] * (1 - levels[k]) / (double)held.n);
        printf("  long seed 22, %zu rows: coverage at %g HP %.2f%% LP %.2f%% (tolerance %.2f)\n", held.n, levels[k],
               held.hp_cover, held.lp_cover, tol);
        CHECK(fabs(held.hp_cover - c) <= tol && fabs(held.lp_cover - c) <= tol);
        CHECK(back && reread.hp_cover == held.hp_cover && reread.lp_cover == held.lp_cover);
    }
    ps_coexec_t *few = ps_coexec_new();
    for (size_t i = 0; i < 19; i++)
        ps_coexec_append(few, &c1->rows[i]);
    CHECK(ps_model_calibrate_composed(m, o1, few) == PS_E_INPUT);
    ps_coexec_free(few);
done:
    unlink(path);
    ps_model_free(m);
    ps_model_free(back);
    ps_coexec_free(c1);
    ps_coexec_free(c2);
    ps_ops_free(o1);
    ps_ops_free(o2);
}

/* ---- the planner on hand-made cases ---- */

/* HP "hp" of 6 operators of 100 ns on the whole GPU, LP "lp" of 100
 * operators of 50 ns; both profiled at 27 and 54 TPCs (one split 27/27). */
static ps_ops_t *hand_ops(void)
{
    ps_ops_t *t = ps_ops_new();
    const char *models[2] = {"hp", "lp"};
    int n_ops[2] = {6, 100};
    double ns[2] = {100, 50};
    for (int m = 0; m < 2; m++)
        for (int op = 0; op < n_ops[m]; op++)
            for (int k = 0; k < 2; k++) {
                psi_op_row_t r = {.gpu = GPU,
                                  .model = models[m],
                                  .batch = 1,
                                  .op = op,
                                  .name = "gemm",
                                  .tpcs = k ? 54 : 27,
                                  .duration_ns = k ? ns[m] : 2 * ns[m],
                                  .intensity = PS_INTENSITY_COMPUTE};
                r.c.dram_bytes = r.c.l2_bytes = r.c.stall_long_scoreboard = r.c.stall_lg_throttle = NAN;
                r.c.stall_mio_throttle = r.c.sm_pct = r.c.mem_pct = NAN;
                CHECK_OK(ps_ops_append(t, &r));
            }
    CHECK_OK(psi_ops_index(t));
    return t;
}

/* A co-run of HP operators [a, a+h) costs hp = 100 h + sum of x_op + 20 ns
 * (x_op = 30 for operators 0-3, 10 for 4-5; 20 ns per step), whatever the
 * LP position; l LP operators take 100 l + 10 ns, so the step time is the
 * HP time, and gain 50 l ns of LP work. */
static double hand_hp(int a, int h)
{
    double t = 100.0 * h + 20;
    for (int op = a; op < a + h; op++)
        t += op < 4 ? 30 : 10;
    return t;
}

static int hand_predict(void *user, const ps_query_t *q, size_t n, double *hp, double *lp)
{
    int *calls = user;
    for (size_t i = 0; i < n; i++) {
        hp[i] = hand_hp(q[i].hp_start, q[i].hp_len);
        lp[i] = 100.0 * q[i].lp_len + 10;
    }
    *calls += (int)n;
    return 0;
}

static ps_plan_params_t hand_params(int *calls, double budget)
{
    ps_plan_params_t p = ps_plan_default_params();
    p.gpu = GPU;
    p.hp_model = "hp";
    p.hp_batch = 1;
    p.lp_model = "lp";
    p.lp_batch = 1;
    p.window = 2; /* boundaries every operator, segments of 1, 2 or 4 */
    p.lp_lengths = 2;
    p.alone_run_ns = 15;
    p.budget_ns = budget;
    p.predict = hand_predict;
    p.predict_user = calls;
    return p;
}

/* Brute force over every plan from operator a (in_run: an alone run is under
 * way): one operator alone, or a co-run of min(d, 6 - a) operators (d = 1,
 * 2, 4; each length once) beside ceil(h / 2) or h LP operators. The best
 * net LP work within the budget, and the least cost of the plans of the
 * unconstrained best net. */
static void brute(int a, int in_run, double cost, double gain, double budget, double tv, double *best,
                  double *free_best, double *free_cost)
{
    if (a == 6) {
        double net = gain - tv * (cost - 615);
        if (cost <= budget && net > *best)
            *best = net;
        if (net > *free_best + 1e-12 || (fabs(net - *free_best) <= 1e-12 && cost < *free_cost)) {
            *free_best = net;
            *free_cost = cost;
        }
        return;
    }
    brute(a + 1, 1, cost + 100 + (in_run ? 0 : 15), gain, budget, tv, best, free_best, free_cost);
    int last = 0;
    for (int d = 1; d <= 4; d *= 2) {
        int h = d < 6 - a ? d : 6 - a;
        if (h == last)
            continue;
        last = h;
        for (int k = 1; k <= 2; k++) {
            int l = (h * k + 1) / 2;
            brute(a + h, 0, cost + hand_hp(a, h), gain + 50.0 * l, budget, tv, best, free_best, free_cost);
        }
    }
}

static void check_hand_plan(const ps_plan_t *plan, double budget)
{
    int at = 0, lp = 0, ok = plan->planned_ns <= budget;
    for (size_t i = 0; i < plan->n_steps; i++) {
        const ps_plan_step_t *st = &plan->steps[i];
        ok &= st->hp_start == at && st->hp_len > 0;
        if (st->lp_len > 0) {
            ok &= st->lp_start == lp && st->hp_tpcs == 27 && st->lp_tpcs == 27;
            ok &= fabs(st->hp_bound_ns - hand_hp(st->hp_start, st->hp_len)) < 1e-9;
            lp += st->lp_len;
        } else {
            ok &= st->hp_tpcs == 54;
        }
        ok &= i == 0 || st->lp_len > 0 || plan->steps[i - 1].lp_len > 0; /* alone runs merged */
        at += st->hp_len;
    }
    CHECK_MSG(ok && at == 6 && plan->lp_end == lp, "a malformed plan at budget %g", budget);
}

/* Window bounds calibrated again on a campaign of their own: every row of it
 * is a calibration row, so on that campaign the pooled coverage is exact
 * (as on training's calibration split), a held-out seed is within the
 * tolerance, the composed calibration is dropped, and the training campaign
 * itself is refused. */
static void test_window_recalibration(void)
{
    ps_ops_t *o1 = NULL, *o2 = NULL;
    ps_coexec_t *c1 = NULL, *c2 = NULL;
    char path[] = "/tmp/ps_test_recalXXXXXX";
    ps_model_t *m = NULL;
    if (!MODEL || simulate(800, 2, 31, &o1, &c1) != 0 || simulate(800, 2, 32, &o2, &c2) != 0 ||
        file_copy(MODEL, path, &m) != 0)
        goto done;
    CHECK(ps_model_calibrate_windows(m, OPS, CX) == PS_E_INPUT);
    CHECK(ps_model_calibrate_windows(m, NULL, c1) == PS_E_ARG);
    /* Every run of 19 experiments: too few. */
    const char *names[19];
    int k = 0;
    for (size_t i = 0; i < c1->n && k < 19; i++) {
        int seen = 0;
        for (int j = 0; j < k; j++)
            seen |= strcmp(names[j], c1->rows[i].experiment) == 0;
        if (!seen)
            names[k++] = c1->rows[i].experiment;
    }
    ps_coexec_t *few = ps_coexec_new();
    for (size_t i = 0; i < c1->n; i++)
        for (int j = 0; j < k; j++)
            if (strcmp(names[j], c1->rows[i].experiment) == 0)
                ps_coexec_append(few, &c1->rows[i]);
    CHECK(ps_model_calibrate_windows(m, o1, few) == PS_E_INPUT);
    ps_coexec_free(few);
    CHECK_OK(ps_model_calibrate_windows(m, o1, c1));
    ps_model_info_t info;
    CHECK_OK(ps_model_info(m, &info));
    CHECK(info.n_calib == c1->n);
    CHECK(psi_model_calib(m)->composed.n == 0);
    bound_cov_t cal, c;
    campaign_coverage(m, o1, c1, 0.9, &cal);
    double hi = 90.0 + 100.0 / (psi_model_calib(m)->min_bin + 1) + 1e-9;
    CHECK_MSG(cal.hp_cover >= 90.0 - 1e-9 && cal.hp_cover <= hi && cal.lp_cover >= 90.0 - 1e-9 && cal.lp_cover <= hi,
              "calibration rows at 0.9: HP %.2f LP %.2f", cal.hp_cover, cal.lp_cover);
    double tol = 1.5 + 2 * 100 * sqrt(0.9 * 0.1 / 800.0);
    campaign_coverage(m, o2, c2, 0.9, &c);
    printf("  recalibrated on seed 31 (%zu rows), held-out seed 32: coverage at 0.90 HP %.2f%% LP %.2f%% "
           "(tolerance %.2f)\n",
           info.n_calib, c.hp_cover, c.lp_cover, tol);
    CHECK_NEAR(c.hp_cover, 90.0, tol);
    CHECK_NEAR(c.lp_cover, 90.0, tol);
done:
    unlink(path);
    ps_model_free(m);
    ps_coexec_free(c1);
    ps_coexec_free(c2);
    ps_ops_free(o1);
    ps_ops_free(o2);
}

static void test_planner_known_optimum(void)
{
    ps_ops_t *ops = hand_ops();
    const double budgets[] = {615, 640, 700, 760, 800, 850, 900, 1e9};
    int exact_tight = 0, tight = 0;
    for (size_t i = 0; i < PS_ARRAY_LEN(budgets); i++)
        for (int tv = 0; tv < 2; tv++) {
            int calls = 0;
            ps_plan_params_t p = hand_params(&calls, budgets[i]);
            p.time_value = tv;
            ps_plan_t *plan = NULL;
            CHECK_OK(ps_plan(NULL, ops, &p, &plan));
            if (!plan)
                continue;
            double want = 0, free_best = -1e300, free_cost = 0;
            brute(0, 0, 0, 0, budgets[i], tv, &want, &free_best, &free_cost);
            double net = plan->lp_work_ns - tv * (plan->planned_ns - plan->alone_ns);
            CHECK(plan->feasible && plan->alone_ns == 615);
            check_hand_plan(plan, budgets[i]);
            if (budgets[i] >= free_cost) {
                /* The guard cannot bind: the DP is exact. */
                CHECK_MSG(fabs(net - want) < 1e-9, "budget %g, time value %d: net LP work %g, optimum %g", budgets[i],
                          tv, net, want);
            } else {
                CHECK_MSG(net >= 0 && net <= want + 1e-9, "budget %g: net %g outside [0, %g]", budgets[i], net, want);
                tight++;
                exact_tight += fabs(net - want) < 1e-9;
            }
            /* Candidates met again at the same LP position are not predicted again. */
            CHECK(plan->n_predictions == calls && calls > 0 && calls <= 8 * 2 * 7 * 3 * 2);
            ps_plan_free(plan);
        }
    printf("  tight budgets: optimum reached in %d of %d\n", exact_tight, tight);
    CHECK(tight > 0);
    int calls = 0;
    ps_plan_params_t p = hand_params(&calls, 1e9);
    ps_plan_t *plan = NULL;
    CHECK_OK(ps_plan(NULL, ops, &p, &plan));
    if (plan) {
        char *json = NULL;
        CHECK_OK(ps_plan_to_json(plan, &json));
        cJSON *o = json ? cJSON_Parse(json) : NULL;
        CHECK(o && cJSON_GetArraySize(cJSON_GetObjectItem(o, "segments")) == (int)plan->n_steps);
        CHECK(o && strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "schema")), "pairsight.plan.v1") == 0);
        cJSON_Delete(o);
        free(json);
        ps_plan_free(plan);
    }
    /* Below the alone latency: infeasible, HP alone in one run. */
    p = hand_params(&calls, 500);
    plan = NULL;
    CHECK_OK(ps_plan(NULL, ops, &p, &plan));
    if (plan) {
        CHECK(!plan->feasible && plan->n_steps == 1 && plan->steps[0].hp_len == 6 && plan->lp_work_ns == 0);
        ps_plan_free(plan);
    }
    /* Argument errors. */
    p = hand_params(&calls, 0);
    CHECK(ps_plan(NULL, ops, &p, &plan) == PS_E_ARG && plan == NULL);
    p = hand_params(&calls, 700);
    p.predict = NULL;
    CHECK(ps_plan(NULL, ops, &p, &plan) == PS_E_ARG);
    p = hand_params(&calls, 700);
    p.lp_model = "none";
    CHECK(ps_plan(NULL, ops, &p, &plan) == PS_E_INPUT);
    ps_ops_free(ops);
}

/* Random step costs: every plan stays within its budget (the guard's
 * invariant), whatever the predictor says. */
static int random_predict(void *user, const ps_query_t *q, size_t n, double *hp, double *lp)
{
    uint64_t seed = *(uint64_t *)user;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = psi_mix64(seed ^ (uint64_t)q[i].hp_start * 31 ^ (uint64_t)q[i].lp_start * 1009 ^
                               (uint64_t)q[i].lp_len * 7919);
        hp[i] = 150 + (double)(h % 400);
        lp[i] = 40.0 * q[i].lp_len + (double)(h >> 40 & 255);
    }
    return 0;
}

static void test_planner_never_exceeds_budget(void)
{
    ps_ops_t *ops = hand_ops();
    int bad = 0, coran = 0;
    for (uint64_t s = 1; s <= 300; s++) {
        int calls = 0;
        ps_plan_params_t p = hand_params(&calls, 615 + (double)(psi_mix64(s) % 900));
        p.predict = random_predict;
        p.predict_user = &s;
        p.lp_start = (int)(s % 100);
        p.time_value = (double)(s % 3) * 0.5;
        ps_plan_t *plan = NULL;
        if (ps_plan(NULL, ops, &p, &plan) != 0) {
            bad++;
            continue;
        }
        double sum = 0;
        for (size_t i = 0; i < plan->n_steps; i++)
            sum += plan->steps[i].step_ns;
        bad += !(sum <= p.budget_ns) || fabs(sum - plan->planned_ns) > 1e-6;
        coran += plan->lp_work_ns > 0;
        ps_plan_free(plan);
    }
    CHECK_MSG(bad == 0, "%d of 300 plans over budget or failed", bad);
    CHECK(coran > 30);
    ps_ops_free(ops);
}

/* ---- replay ---- */

static int same_results(const ps_replay_result_t *a, const ps_replay_result_t *b)
{
    if (a->requests != b->requests || a->slo_ns != b->slo_ns)
        return 0;
    for (int p = 0; p < PS_REPLAY_N; p++) {
        const ps_replay_policy_result_t *x = &a->pol[p], *y = &b->pol[p];
        if (x->ran != y->ran || x->slo_attainment != y->slo_attainment || x->lp_throughput != y->lp_throughput ||
            x->lp_idle != y->lp_idle || x->hp_p99_ns != y->hp_p99_ns || x->orion_tpcs != y->orion_tpcs)
            return 0;
        for (size_t i = 0; x->ran && i < a->requests; i++)
            if (x->latency_ns[i] != y->latency_ns[i])
                return 0;
    }
    return 1;
}

/* The model's bounds, each side floored at its standalone time on its share
 * (what the planner budgets on the model path), through the predictor hook:
 * every candidate predicted, nothing skipped by the floor. */
static int floored_bound(void *user, const ps_query_t *q, size_t n, double *hp, double *lp)
{
    long *calls = user;
    *calls += (long)n;
    int rc = ps_model_predict_bound(MODEL, OPS, q, n, 0.95, hp, lp);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        double a = 0.0, b = 0.0; /* set by ps_ops_segment_ns when rc == 0 */
        rc = ps_ops_segment_ns(OPS, q[i].gpu, q[i].hp_model, q[i].hp_batch, q[i].hp_start, q[i].hp_len, q[i].hp_tpcs,
                               &a);
        if (rc == 0)
            rc = ps_ops_segment_ns(OPS, q[i].gpu, q[i].lp_model, q[i].lp_batch, q[i].lp_start, q[i].lp_len,
                                   q[i].lp_tpcs, &b);
        hp[i] = hp[i] > a ? hp[i] : a;
        lp[i] = lp[i] > b ? lp[i] : b;
    }
    return rc;
}

/* The plan as JSON without its run time. */
static char *plan_text(const ps_plan_t *p)
{
    char *t = NULL;
    if (!p || ps_plan_to_json(p, &t) != 0)
        return NULL;
    cJSON *o = cJSON_Parse(t);
    free(t);
    cJSON_DeleteItemFromObject(o, "plan_seconds");
    t = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return t;
}

/* A thread of test_planner_memo: plans at LP starts start, start + 4, ...
 * through the shared memo, each compared with want[] (made without it). */
typedef struct {
    ps_plan_params_t p;
    int start;
    char **want;
    int same;
} memo_thread_t;

static void *memo_thread(void *arg)
{
    memo_thread_t *a = arg;
    for (int k = 0; k < 3; k++) {
        ps_plan_t *pl = NULL;
        a->p.lp_start = 10 * (a->start + 4 * k);
        char *t = ps_plan(MODEL, OPS, &a->p, &pl) == 0 ? plan_text(pl) : NULL;
        a->same += t && a->want[a->start + 4 * k] && strcmp(t, a->want[a->start + 4 * k]) == 0;
        free(t);
        ps_plan_free(pl);
    }
    return NULL;
}

/* Four threads planning at once through one memo (as the service's threads
 * do) plan as one thread without it. */
static void memo_threads(ps_plan_params_t p)
{
    char *want[12] = {0};
    psi_pair_memo_t *memo = MODEL->pair_memo;
    MODEL->pair_memo = NULL;
    for (int k = 0; k < 12; k++) {
        ps_plan_t *pl = NULL;
        p.lp_start = 10 * k;
        want[k] = ps_plan(MODEL, OPS, &p, &pl) == 0 ? plan_text(pl) : NULL;
        ps_plan_free(pl);
    }
    MODEL->pair_memo = memo;
    psi_pair_memo_clear(memo);
    memo_thread_t a[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (memo_thread_t){p, i, want, 0};
        CHECK(pthread_create(&th[i], NULL, memo_thread, &a[i]) == 0);
    }
    int same = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        same += a[i].same;
    }
    CHECK_MSG(same == 12, "%d of 12 plans of 4 threads equal to one thread's without the memo", same);
    for (int k = 0; k < 12; k++)
        free(want[k]);
}

/* The model's window-pair memo changes no number: plans of two LP models at
 * LP positions spread over bert-base, bounds and points, the memo warm from
 * the plans before, are the plans made without it (JSON equal but the run
 * time); psi_model_predict_memo equals ps_model_predict_bound bit for bit,
 * cold and warm, with a pair met twice in one batch; a query outside the
 * memo's context is refused; threads share it (memo_threads). */
static void test_planner_memo(void)
{
    if (!MODEL)
        return;
    CHECK(MODEL->pair_memo != NULL);
    ps_plan_params_t p = ps_plan_default_params();
    p.hp_model = "resnet50";
    p.hp_batch = 8;
    p.lp_batch = 8;
    p.slo_factor = 1.3;
    int same = 0, n = 0;
    for (int start = 0; start < 140; start += 23)
        for (int k = 0; k < 4; k++, n++) {
            p.lp_model = k % 2 ? "mobilenetv2" : "bert-base";
            p.lp_start = start % (k % 2 ? 60 : 140);
            p.coverage = k < 2 ? 0.95 : 0;
            ps_plan_t *a = NULL, *b = NULL;
            CHECK_OK(ps_plan(MODEL, OPS, &p, &a));
            psi_pair_memo_t *memo = MODEL->pair_memo;
            MODEL->pair_memo = NULL;
            CHECK_OK(ps_plan(MODEL, OPS, &p, &b));
            MODEL->pair_memo = memo;
            char *x = plan_text(a), *y = plan_text(b);
            same += x && y && strcmp(x, y) == 0;
            free(x);
            free(y);
            ps_plan_free(a);
            ps_plan_free(b);
        }
    CHECK_MSG(same == n, "%d of %d plans equal with and without the memo", same, n);
    ps_query_t q[6];
    for (int i = 0; i < 6; i++)
        q[i] = (ps_query_t){"A100-SXM4-40GB", "resnet50", 8,     8 * i,     16 + 8 * (i % 3),
                            "bert-base",      8,          5 * i, 4 + 7 * i, 22 + 5 * (i % 2),
                            32 - 5 * (i % 2)};
    q[5] = q[1];
    double h0[6], l0[6], h1[6], l1[6];
    psi_pair_ctx_t c;
    psi_pair_memo_clear(MODEL->pair_memo);
    CHECK_OK(psi_pair_ctx_bind(MODEL, OPS, &q[0], 0.9, &c));
    CHECK_OK(ps_model_predict_bound(MODEL, OPS, q, 6, 0.9, h0, l0));
    for (int pass = 0; pass < 2; pass++) {
        CHECK_OK(psi_model_predict_memo(&c, q, 6, h1, l1));
        CHECK(memcmp(h0, h1, sizeof h0) == 0 && memcmp(l0, l1, sizeof l0) == 0);
    }
    q[2].lp_model = "mobilenetv2";
    CHECK(psi_model_predict_memo(&c, q, 6, h1, l1) == PS_E_ARG && strstr(ps_last_error(), "query 2"));
    p.lp_model = "bert-base";
    p.coverage = 0.95;
    memo_threads(p);
}

/* Skipping the candidates the floor rules out plans exactly as predicting
 * them all, with fewer predictions; slo_factor plans as its budget in ns;
 * ps_plan_best keeps the candidate with the most LP work. */
static void test_planner_floor_skips(void)
{
    if (!MODEL)
        return;
    ps_plan_params_t p = ps_plan_default_params();
    p.hp_model = "resnet50";
    p.hp_batch = 8;
    p.lp_model = "bert-base";
    p.lp_batch = 8;
    p.slo_factor = 1.3;
    long calls = 0, fewer = 0;
    for (int start = 0; start < 150; start += 50) {
        p.lp_start = start;
        ps_plan_params_t q = p;
        q.predict = floored_bound;
        q.predict_user = &calls;
        q.gpu = "A100-SXM4-40GB";
        ps_plan_t *a = NULL, *b = NULL, *c = NULL;
        CHECK_OK(ps_plan(MODEL, OPS, &p, &a));
        CHECK_OK(ps_plan(MODEL, OPS, &q, &b));
        q = p;
        q.slo_factor = 0;
        q.budget_ns = a ? 1.3 * a->alone_ns : 1;
        CHECK_OK(ps_plan(MODEL, OPS, &q, &c));
        if (a && b && c) {
            CHECK_MSG(a->n_steps == b->n_steps && a->lp_work_ns == b->lp_work_ns &&
                          fabs(a->planned_ns - b->planned_ns) <= 1e-9 * a->planned_ns && a->budget_ns == c->budget_ns &&
                          a->lp_work_ns == c->lp_work_ns && a->lp_work_ns > 0,
                      "LP start %d: %zu/%zu steps, LP work %g/%g/%g", start, a->n_steps, b->n_steps, a->lp_work_ns,
                      b->lp_work_ns, c->lp_work_ns);
            for (size_t i = 0; i < a->n_steps && a->n_steps == b->n_steps; i++) {
                const ps_plan_step_t *x = &a->steps[i], *y = &b->steps[i];
                CHECK(x->hp_start == y->hp_start && x->hp_len == y->hp_len && x->hp_tpcs == y->hp_tpcs &&
                      x->lp_start == y->lp_start && x->lp_len == y->lp_len && x->lp_work_ns == y->lp_work_ns);
                CHECK(fabs(x->step_ns - y->step_ns) <= 1e-9 * x->step_ns);
            }
            fewer += a->n_predictions < b->n_predictions;
        }
        ps_plan_free(a);
        ps_plan_free(b);
        ps_plan_free(c);
    }
    CHECK(fewer == 3 && calls > 0);
    /* The best of several LP candidates, named in the plan. */
    const char *lp[] = {"mobilenetv2:8", "bert-base:8"};
    ps_plan_t *best = NULL, *one = NULL;
    CHECK_OK(ps_plan_best(MODEL, OPS, &p, lp, 2, &best));
    p.lp_model = "mobilenetv2";
    CHECK_OK(ps_plan(MODEL, OPS, &p, &one));
    if (best && one) {
        CHECK(best->lp_work_ns >= one->lp_work_ns && best->n_predictions_all > best->n_predictions);
        CHECK(strcmp(best->lp_model, best->lp_work_ns > one->lp_work_ns ? "bert-base" : "mobilenetv2") == 0);
    }
    ps_plan_free(best);
    ps_plan_free(one);
    const char *bad[] = {"mobilenetv2:8", "bert-base"};
    CHECK(ps_plan_best(MODEL, OPS, &p, bad, 2, &best) == PS_E_ARG && !best);
    CHECK(strstr(ps_last_error(), "'bert-base' is not MODEL:BATCH"));
    CHECK(ps_plan_best(MODEL, OPS, &p, lp, 0, &best) == PS_E_ARG);
    p.time_limit_s = 1e-9;
    CHECK(ps_plan_best(MODEL, OPS, &p, lp, 2, &best) == PS_E_INPUT && !best);
    CHECK(strstr(ps_last_error(), "time limit"));
    p.time_limit_s = 0;
    p.budget_ns = 1e6; /* with slo_factor: refused */
    CHECK(ps_plan(MODEL, OPS, &p, &best) == PS_E_ARG);
}

/* The one MODEL:BATCH reader. */
static void test_model_batch_parse(void)
{
    char name[64];
    int b = 0;
    CHECK(ps_model_batch_parse("resnet50:8", name, &b) == 0 && strcmp(name, "resnet50") == 0 && b == 8);
    CHECK(ps_model_batch_parse("a:b:16", name, &b) == 0 && strcmp(name, "a:b") == 0 && b == 16);
    CHECK(ps_model_batch_parse("m:1000000", name, &b) == 0 && b == 1000000);
    const char *bad[] = {"resnet50", ":8", "m:", "m:0", "m:1000001", "m: 8", "m:8x", "m:-1", "m:99999999999999999999"};
    for (size_t i = 0; i < PS_ARRAY_LEN(bad); i++)
        CHECK_MSG(ps_model_batch_parse(bad[i], name, &b) == PS_E_ARG, "'%s' accepted", bad[i]);
    char longname[80];
    memset(longname, 'x', 64);
    strcpy(longname + 64, ":8");
    CHECK(ps_model_batch_parse(longname, name, &b) == PS_E_ARG);
}

static void test_replay_deterministic(void)
{
    if (!MODEL)
        return;
    ps_replay_params_t p = ps_replay_default_params();
    p.hp_model = "resnet50";
    p.hp_batch = 8;
    p.lp_model = "bert-base";
    p.lp_batch = 8;
    p.requests = 60;
    p.warmup = 20;
    p.load = 0.5;
    p.seed = 3;
    p.intensity_train = CX;
    ps_replay_result_t a, b, c;
    CHECK_OK(ps_replay_run(MODEL, OPS, NULL, &p, &a));
    CHECK_OK(ps_replay_run(MODEL, OPS, NULL, &p, &b));
    p.seed = 4;
    CHECK_OK(ps_replay_run(MODEL, OPS, NULL, &p, &c));
    CHECK(same_results(&a, &b));
    CHECK(!same_results(&a, &c));
    for (int i = 0; i < PS_REPLAY_N; i++) {
        const ps_replay_policy_result_t *r = &a.pol[i];
        CHECK_MSG(r->ran, "%s did not run", ps_replay_policy_name(i));
        CHECK(r->slo_attainment >= 0 && r->slo_attainment <= 1);
        CHECK(r->lp_throughput >= 0 && r->lp_throughput < 2);
        CHECK(r->gpu_busy > 0 && r->gpu_busy <= 1);
        CHECK(r->hp_p50_ns <= r->hp_p99_ns);
        /* LP throughput splits into the idle and the co-located part; LP
         * beside HP never runs faster than alone on the whole GPU, so the
         * co-located part is at most the busy share, and the whole at most 1
         * (the ceiling's premises, docs/planner.md). */
        CHECK_NEAR(r->lp_idle + r->lp_colo, r->lp_throughput, 1e-12);
        CHECK(r->lp_idle >= 0 && r->lp_idle <= 1 - r->gpu_busy + 1e-9);
        CHECK(r->lp_colo >= 0 && r->lp_colo <= r->gpu_busy + 1e-9);
        CHECK(r->lp_throughput <= 1 + 1e-9);
        printf("  %-16s SLO %.3f LP %.3f p99 %.0f us\n", ps_replay_policy_name(i), r->slo_attainment, r->lp_throughput,
               r->hp_p99_ns / 1e3);
    }
    /* Dedicated: every request at least its noiseless latency less noise;
     * the budget is 1.2 x its p99, so it meets the budget. */
    CHECK(a.pol[PS_REPLAY_DEDICATED].slo_attainment >= 0.99);
    CHECK(a.slo_ns > a.dedicated_ns);
    /* LP alone during idle time gives dedicated about 1 - busy. */
    CHECK_NEAR(a.pol[PS_REPLAY_DEDICATED].lp_throughput, 1 - a.pol[PS_REPLAY_DEDICATED].gpu_busy, 0.02);
    CHECK(a.pol[PS_REPLAY_DEDICATED].lp_colo == 0);
    /* The ceiling: 1 / orion's LP throughput; and the rate needed. */
    CHECK_NEAR(a.lp_ceiling, 1 / a.pol[PS_REPLAY_ORION].lp_throughput, 1e-12);
    CHECK_NEAR(a.lp_rate_needed,
               1 - (1 - 1.5 * a.pol[PS_REPLAY_ORION].lp_throughput) / a.pol[PS_REPLAY_DEDICATED].gpu_busy, 1e-12);
    for (int i = 0; i < PS_REPLAY_N; i++)
        CHECK(a.pol[i].lp_throughput <= a.lp_ceiling * a.pol[PS_REPLAY_ORION].lp_throughput + 1e-9);
    ps_replay_result_free(&a);
    ps_replay_result_free(&b);
    ps_replay_result_free(&c);
    /* Parameter and input errors. */
    unsigned mask = 0;
    CHECK_OK(ps_replay_policies_parse("orion,oracle", &mask));
    CHECK(mask == (1u << PS_REPLAY_ORION | 1u << PS_REPLAY_ORACLE));
    CHECK(ps_replay_policies_parse("orion,nope", &mask) == PS_E_ARG);
    CHECK(strstr(ps_last_error(), "nope") != NULL);
    p.load = 1.0;
    CHECK(ps_replay_run(MODEL, OPS, NULL, &p, &a) == PS_E_ARG);
    p.load = 0.5;
    p.intensity_train = NULL;
    CHECK(ps_replay_run(MODEL, OPS, NULL, &p, &a) == PS_E_ARG);
    p.policies = 1u << PS_REPLAY_DEDICATED;
    p.hp_model = "llama-3.2-1b"; /* not in the profile */
    CHECK(ps_replay_run(MODEL, OPS, NULL, &p, &a) == PS_E_INPUT);
}

/* The ceiling's arithmetic on hand-made results (docs/planner.md, "The
 * ceiling"). */
static void test_replay_ceiling(void)
{
    ps_replay_result_t r;
    memset(&r, 0, sizeof r);
    r.pol[PS_REPLAY_DEDICATED] = (ps_replay_policy_result_t){.ran = 1, .lp_throughput = 0.7, .gpu_busy = 0.3};
    r.pol[PS_REPLAY_ORION] = (ps_replay_policy_result_t){.ran = 1, .lp_throughput = 0.6, .gpu_busy = 0.4};
    psi_replay_ceiling(&r, 1.5);
    /* 1.5 x 0.6 = 0.9 needs 1 - 0.1 / 0.3 = 2/3 of LP's speed beside HP. */
    CHECK_NEAR(r.lp_ceiling, 1 / 0.6, 1e-12);
    CHECK_NEAR(r.lp_rate_needed, 2.0 / 3, 1e-12);
    /* orion at 0.7: 1.5 x 0.7 > 1, unreachable (ceiling under the goal,
     * rate needed over 1). */
    r.pol[PS_REPLAY_ORION].lp_throughput = 0.7;
    psi_replay_ceiling(&r, 1.5);
    CHECK(r.lp_ceiling < 1.5 && r.lp_rate_needed > 1);
    CHECK_NEAR(r.lp_rate_needed, 1 + 0.05 / 0.3, 1e-12);
    /* Without orion there is no ceiling; without dedicated no rate. */
    r.pol[PS_REPLAY_DEDICATED].ran = 0;
    psi_replay_ceiling(&r, 1.5);
    CHECK(isfinite(r.lp_ceiling) && isnan(r.lp_rate_needed));
    r.pol[PS_REPLAY_ORION].ran = 0;
    psi_replay_ceiling(&r, 1.5);
    CHECK(isnan(r.lp_ceiling) && isnan(r.lp_rate_needed));
}

static void teardown(void)
{
    ps_model_free(MODEL);
    ps_coexec_free(CX);
    ps_ops_free(OPS);
}

int main(void)
{
    static const th_test_t tests[] = {
        {"setup", setup},
        {"test_coverage_on_calibration_rows", test_coverage_on_calibration_rows},
        {"test_coverage_held_out_seeds", test_coverage_held_out_seeds},
        {"test_composed_calibration", test_composed_calibration},
        {"test_window_recalibration", test_window_recalibration},
        {"test_planner_known_optimum", test_planner_known_optimum},
        {"test_planner_never_exceeds_budget", test_planner_never_exceeds_budget},
        {"test_planner_floor_skips", test_planner_floor_skips},
        {"test_planner_memo", test_planner_memo},
        {"test_model_batch_parse", test_model_batch_parse},
        {"test_replay_deterministic", test_replay_deterministic},
        {"test_replay_ceiling", test_replay_ceiling},
        {"teardown", teardown},
    };
    return th_run(tests, sizeof tests / sizeof tests[0]);
}
