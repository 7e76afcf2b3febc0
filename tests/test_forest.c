/* Tests of the flattened tree evaluator (src/model/forest.c): its predictions
 * against XGBoost's own on random data with missing values across depths,
 * the split semantics on a hand-written tree, and the refusal of models it
 * cannot evaluate. */
#include "model/forest.h"

#include "common/common.h"
#include "testhelp.h"
#include "xgbhelp.h"

#include <pthread.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Compares psi_forest_predict with XGBoosterPredictFromDense on n rows; returns
 * the number of rows that differ in any bit and stores the largest difference
 * relative to max(1, largest |prediction|). */
static size_t compare_with_xgboost(BoosterHandle b, const psi_forest_t *f, const float *x, size_t n, int nf,
                                   double *rel_diff)
{
    *rel_diff = INFINITY;
    double *ours = malloc(n * sizeof *ours);
    const float *ref = xh_predict(b, x, n, nf);
    CHECK(ours && ref);
    if (!ours || !ref) {
        free(ours);
        return n;
    }
    psi_forest_predict(f, x, n, (size_t)nf, ours);
    double scale = 1, worst = 0;
    size_t differ = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(ref[i]) > scale)
            scale = fabs(ref[i]);
    for (size_t i = 0; i < n; i++) {
        double d = fabs(ours[i] - (double)ref[i]);
        if (d > worst)
            worst = d;
        differ += (float)ours[i] != ref[i];
    }
    free(ours);
    *rel_diff = worst / scale;
    return differ;
}

/* Rows [0, n) predicted one call per row (the one-row kernels) against
 * XGBoost on all n at once: the rows that differ in any bit. */
static size_t rows_one_by_one(BoosterHandle b, const psi_forest_t *f, const float *x, size_t n, int nf)
{
    const float *ref = xh_predict(b, x, n, nf);
    CHECK(ref != NULL);
    size_t differ = ref ? 0 : n;
    for (size_t i = 0; ref && i < n; i++) {
        double one;
        psi_forest_predict(f, x + i * (size_t)nf, 1, (size_t)nf, &one);
        differ += (float)one != ref[i];
    }
    return differ;
}

/* Trains a booster and flattens it; returns the forest (NULL after a failed
 * check) and the booster in *b, which the caller frees (XGBoosterFree). */
static psi_forest_t *train_forest(const float *x, const float *y, size_t n, int nf, int depth, int rounds, int nthread,
                                  BoosterHandle *b)
{
    *b = NULL;
    psi_forest_t *f = NULL;
    CHECK(xh_train(x, y, n, nf, depth, rounds, nthread, b) == 0);
    if (*b)
        CHECK_OK(psi_forest_from_booster(*b, &f));
    return f;
}

static void release(psi_forest_t *f, BoosterHandle b)
{
    psi_forest_free(f);
    if (b)
        XGBoosterFree(b);
}

static void test_matches_xgboost_across_depths(void)
{
    enum { NF = 24, N_TRAIN = 3000, N_TEST = 1500 };
    static const int depths[] = {1, 3, 6, 7, 8, 10, 14};
    float *x = malloc((size_t)N_TRAIN * NF * sizeof *x), *y = malloc(N_TRAIN * sizeof *y);
    float *xt = malloc((size_t)N_TEST * NF * sizeof *xt);
    CHECK(x && y && xt);
    if (!x || !y || !xt)
        goto done;
    xh_synth(1, N_TRAIN, NF, 0.1, x, y);
    xh_synth(2, N_TEST, NF, 0.15, xt, NULL);
    /* Rows copied from the training set put values exactly on histogram cut
     * points, where x == threshold must go right. */
    memcpy(xt, x, (size_t)300 * NF * sizeof *x);

    for (size_t k = 0; k < PS_ARRAY_LEN(depths); k++) {
        BoosterHandle b;
        psi_forest_t *f = train_forest(x, y, N_TRAIN, NF, depths[k], 40, 1, &b);
        if (f) {
            CHECK(psi_forest_n_trees(f) == 40);
            CHECK(psi_forest_n_features(f) == NF);
            /* Every kernel this CPU has (one it lacks runs the scalar one). */
            for (int kern = PS_FOREST_N_KERNELS - 1; kern >= PS_FOREST_SCALAR; kern--) {
                int on = psi_forest_set_kernel(f, kern);
                double rel = INFINITY;
                size_t differ = compare_with_xgboost(b, f, xt, N_TEST, NF, &rel);
                CHECK_MSG(rel <= 1e-5, "depth %d kernel %s: relative difference %g", depths[k],
                          psi_forest_kernel_name(on), rel);
                /* We add in XGBoost's order and precision, so not one bit differs. */
                CHECK_MSG(differ == 0, "depth %d kernel %s: %zu of %d rows differ", depths[k],
                          psi_forest_kernel_name(on), differ, N_TEST);
                differ = rows_one_by_one(b, f, xt, 400, NF); /* cut points and missing values included */
                CHECK_MSG(differ == 0, "depth %d kernel %s: %zu of 400 rows differ one by one", depths[k],
                          psi_forest_kernel_name(on), differ);
            }
        }
        release(f, b);
    }
done:
    free(x);
    free(y);
    free(xt);
}

/* Small batches take the single-row path and partial blocks; rows with a
 * stride wider than the model's features must read only their own columns.
 * 40 trees: two vectors of 16 trees in the AVX-512 row kernel, 8 left over. */
static void test_batch_sizes_and_stride(void)
{
    enum { NF = 12, N = 800, STRIDE = 15 };
    float *x = malloc((size_t)N * NF * sizeof *x), *y = malloc(N * sizeof *y);
    float *xs = malloc((size_t)N * STRIDE * sizeof *xs);
    double *full = malloc(N * sizeof *full), *part = malloc(N * sizeof *part);
    CHECK(x && y && xs && full && part);
    if (!x || !y || !xs || !full || !part)
        goto done;
    xh_synth(3, N, NF, 0.05, x, y);
    for (size_t i = 0; i < N; i++) {
        memcpy(xs + i * STRIDE, x + i * NF, NF * sizeof *x);
        for (int j = NF; j < STRIDE; j++)
            xs[i * STRIDE + j] = 1e30f; /* would change the result if read as a feature */
    }
    BoosterHandle b;
    psi_forest_t *f = train_forest(x, y, N, NF, 6, 40, 1, &b);
    const float *ref = f ? xh_predict(b, x, N, NF) : NULL;
    CHECK(!f || ref != NULL);
    for (int kern = PS_FOREST_N_KERNELS - 1; ref && kern >= PS_FOREST_SCALAR; kern--) {
        int on = psi_forest_set_kernel(f, kern);
        psi_forest_predict(f, xs, N, STRIDE, full);
        size_t bad = 0;
        for (size_t i = 0; i < N; i++)
            bad += (float)full[i] != ref[i];
        CHECK_MSG(bad == 0, "kernel %s: %zu rows differ with stride %d", psi_forest_kernel_name(on), bad, STRIDE);
        static const size_t sizes[] = {1,  2,  3,  4,  5,  6,  7,  8,  10, 11,  15,  16,  17,
                                       22, 23, 26, 27, 33, 38, 63, 64, 65, 129, 255, 256, 257};
        for (size_t k = 0; k < PS_ARRAY_LEN(sizes); k++) {
            size_t off = 7, m = sizes[k];
            psi_forest_predict(f, xs + off * STRIDE, m, STRIDE, part);
            size_t diff = 0;
            for (size_t i = 0; i < m; i++)
                diff += part[i] != full[off + i];
            CHECK_MSG(diff == 0, "kernel %s: batch of %zu: %zu rows differ", psi_forest_kernel_name(on), m, diff);
        }
        psi_forest_predict(f, xs, 0, STRIDE, part); /* no rows: nothing to do */
    }
    release(f, b);
done:
    free(x);
    free(y);
    free(xs);
    free(full);
    free(part);
}

/* The block kernels walk tiles of row blocks through blocks of trees and
 * keep each row's sum in float between tree blocks: any tile shape (tree
 * blocks not a multiple of the lockstep, a partial last tile, one tree per
 * block) gives XGBoost's result in every bit, at depths 3 and 8. */
static void test_tiles_match_xgboost(void)
{
    enum { NF = 20, N = 700 };
    static const int depths[] = {3, 8};
    static const struct {
        size_t blocks;
        int trees;
    } shapes[] = {{1, 1}, {1, 4}, {3, 5}, {2, 8}, {7, 13}, {64, 40}, {0, 0}};
    float *x = malloc((size_t)N * NF * sizeof *x), *y = malloc(N * sizeof *y);
    CHECK(x && y);
    for (size_t d = 0; x && y && d < PS_ARRAY_LEN(depths); d++) {
        xh_synth(5, N, NF, 0.1, x, y);
        BoosterHandle b;
        /* 137 trees: the one-row kernels walk several groups (each group's
         * leaves added during the next one's walk) and a partial last one. */
        psi_forest_t *f = train_forest(x, y, N, NF, depths[d], 137, 1, &b);
        for (int kern = PS_FOREST_AVX2; f && kern <= PS_FOREST_AVX512; kern++) {
            if (psi_forest_set_kernel(f, kern) != kern)
                continue;
            size_t one = rows_one_by_one(b, f, x, 200, NF);
            CHECK_MSG(one == 0, "depth %d kernel %s: %zu of 200 rows differ one by one", depths[d],
                      psi_forest_kernel_name(kern), one);
            for (size_t k = 0; k < PS_ARRAY_LEN(shapes); k++) {
                psi_forest_set_tiles(f, shapes[k].blocks, shapes[k].trees);
                double rel = INFINITY;
                size_t differ = compare_with_xgboost(b, f, x, N, NF, &rel);
                CHECK_MSG(differ == 0, "depth %d kernel %s tiles %zu x %d: %zu rows differ", depths[d],
                          psi_forest_kernel_name(kern), shapes[k].blocks, shapes[k].trees, differ);
                differ = compare_with_xgboost(b, f, x + 3 * NF, 45, NF, &rel); /* a partial block */
                CHECK_MSG(differ == 0, "depth %d kernel %s tiles %zu x %d, 45 rows: %zu differ", depths[d],
                          psi_forest_kernel_name(kern), shapes[k].blocks, shapes[k].trees, differ);
            }
        }
        release(f, b);
    }
    free(x);
    free(y);
}

/* Large batches are split over threads, and several threads may predict at
 * once; the result must not depend on either. */
typedef struct {
    const psi_forest_t *f;
    const float *x;
    size_t n, stride;
    double *out;
} caller_t;

static void *caller(void *arg)
{
    caller_t *c = arg;
    for (size_t i = 0, m = 1; i < c->n; i += m, m = m % 100 + 7) {
        size_t k = c->n - i < m ? c->n - i : m;
        psi_forest_predict(c->f, c->x + i * c->stride, k, c->stride, c->out + i);
    }
    return NULL;
}

static void test_threads_agree(void)
{
    enum { NF = 10, N = 4000 };
    float *x = malloc((size_t)N * NF * sizeof *x), *y = malloc(N * sizeof *y);
    double *a = malloc(N * sizeof *a), *c = malloc(N * sizeof *c);
    CHECK(x && y && a && c);
    if (!x || !y || !a || !c)
        goto done;
    xh_synth(4, N, NF, 0.1, x, y);
    BoosterHandle b;
    psi_forest_t *f = train_forest(x, y, N, NF, 5, 20, 2, &b);
    for (int kern = PS_FOREST_N_KERNELS - 1; f && kern >= PS_FOREST_SCALAR; kern--) {
        psi_forest_set_kernel(f, kern);
#ifdef _OPENMP
        int old = omp_get_max_threads();
        omp_set_num_threads(1);
#endif
        psi_forest_predict(f, x, N, NF, a);
#ifdef _OPENMP
        omp_set_num_threads(3);
#endif
        psi_forest_predict(f, x, N, NF, c);
#ifdef _OPENMP
        omp_set_num_threads(old);
#endif
        CHECK(memcmp(a, c, N * sizeof *a) == 0);

        /* Several callers at once on one forest (the contract says it is
         * thread-safe): each predicts its quarter in batches of 1 to 100. */
        pthread_t th[4];
        caller_t args[4];
        memset(c, 0, N * sizeof *c);
        for (int i = 0; i < 4; i++) {
            args[i] = (caller_t){f, x + (size_t)i * (N / 4) * NF, N / 4, NF, c + i * (N / 4)};
            CHECK(pthread_create(&th[i], NULL, caller, &args[i]) == 0);
        }
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
        CHECK(memcmp(a, c, N * sizeof *a) == 0);
    }
    release(f, b);
done:
    free(x);
    free(y);
    free(a);
    free(c);
}

/* A model written by hand in XGBoost 1.7's JSON layout, with placeholders for
 * the parts that the error tests change. */
static char *hand_model(const char *objective, const char *booster, const char *tree0_extra, const char *left_children,
                        const char *split_indices)
{
    static const char fmt[] = "{\"learner\": {\"objective\": {\"name\": \"%s\"},"
                              " \"learner_model_param\": {\"base_score\": \"5E-1\", \"num_class\": \"0\","
                              " \"num_feature\": \"3\"},"
                              " \"gradient_booster\": {\"name\": \"%s\", \"model\": {"
                              "  \"gbtree_model_param\": {\"num_trees\": \"2\"}, \"tree_info\": [0, 0],"
                              "  \"trees\": ["
                              /* tree 0: x1 < 0.5 (missing left) ? 1.0 : (x0 < -2 (missing right) ? 10 : 20) */
                              "   {\"tree_param\": {\"num_nodes\": \"5\", \"size_leaf_vector\": \"0\"},"
                              "    \"left_children\": %s, \"right_children\": [2, -1, 4, -1, -1],"
                              "    \"split_indices\": %s, \"split_conditions\": [0.5, 1.0, -2, 10, 20],"
                              "    \"default_left\": [1, 0, 0, 0, 0]%s},"
                              /* tree 1: a lone leaf */
                              "   {\"tree_param\": {\"num_nodes\": \"1\"}, \"left_children\": [-1],"
                              "    \"right_children\": [-1], \"split_indices\": [0], \"split_conditions\": [0.25],"
                              "    \"default_left\": [0]}]}}}}";
    char *s = malloc(2048);
    if (s)
        snprintf(s, 2048, fmt, objective, booster, left_children, split_indices, tree0_extra);
    return s;
}

static psi_forest_t *load_hand(const char *objective, const char *booster, const char *extra, const char *lc,
                               const char *si, int *rc)
{
    char *s = hand_model(objective, booster, extra, lc, si);
    psi_forest_t *f = NULL;
    *rc = s ? psi_forest_from_json(s, strlen(s), &f) : PS_E_NOMEM;
    free(s);
    return f;
}

static const char OK_LC[] = "[1, -1, 3, -1, -1]", OK_SI[] = "[1, 0, 0, 0, 0]";

static void test_split_semantics_on_hand_tree(void)
{
    int rc;
    psi_forest_t *f = load_hand("reg:squarederror", "gbtree", "", OK_LC, OK_SI, &rc);
    CHECK_MSG(rc == 0, "%s", ps_last_error());
    if (!f)
        return;
    CHECK(psi_forest_n_trees(f) == 2);
    CHECK(psi_forest_n_features(f) == 3);
    const float below = nextafterf(0.5f, 0.0f);
    const float rows[][3] = {
        {0, below, 0},   /* x1 < 0.5: left leaf 1 */
        {0, 0.5f, 0},    /* x1 == threshold: right, x0 = 0 >= -2: 20 */
        {-3, 0.5f, 0},   /* right, then x0 < -2: 10 */
        {-2, 0.7f, 0},   /* x0 == -2 goes right: 20 */
        {0, NAN, 0},     /* missing x1 follows default left: 1 */
        {NAN, 0.9f, 0},  /* missing x0 follows default right: 20 */
        {-3, 0.9f, NAN}, /* an unused missing feature changes nothing: 10 */
    };
    const double want[] = {1, 20, 10, 20, 1, 20, 10};
    enum { NR = PS_ARRAY_LEN(rows), REP = 5 };
    float many[NR * REP][3];
    for (size_t i = 0; i < NR * REP; i++)
        memcpy(many[i], rows[i % NR], sizeof many[i]);
    double out[NR * REP];
    /* Every kernel, the single-row and the block paths (7 and 35 rows). */
    for (int kern = PS_FOREST_N_KERNELS - 1; kern >= PS_FOREST_SCALAR; kern--) {
        const char *name = psi_forest_kernel_name(psi_forest_set_kernel(f, kern));
        for (size_t i = 0; i < NR; i++) {
            psi_forest_predict(f, rows[i], 1, 3, &out[i]);
            CHECK_MSG(out[i] == 0.5f + (float)want[i] + 0.25f, "%s row %zu: %g", name, i, out[i]);
        }
        psi_forest_predict(f, &rows[0][0], NR, 3, out);
        for (size_t i = 0; i < NR; i++)
            CHECK_MSG(out[i] == 0.5f + (float)want[i] + 0.25f, "%s row %zu: %g", name, i, out[i]);
        psi_forest_predict(f, &many[0][0], NR * REP, 3, out);
        for (size_t i = 0; i < NR * REP; i++)
            CHECK_MSG(out[i] == 0.5f + (float)want[i % NR] + 0.25f, "%s block row %zu: %g", name, i, out[i]);
    }
    psi_forest_free(f);
    psi_forest_free(NULL);
}

/* The kernel is picked by CPUID, can be forced by name through the
 * environment, and falls back to the scalar one where the CPU lacks it. */
static void test_kernel_selection(void)
{
    int rc;
    psi_forest_t *f = load_hand("reg:squarederror", "gbtree", "", OK_LC, OK_SI, &rc);
    CHECK_MSG(rc == 0, "%s", ps_last_error());
    if (!f)
        return;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") != 0, avx512 = __builtin_cpu_supports("avx512f") != 0;
#else
    int avx2 = 0, avx512 = 0;
#endif
    CHECK(psi_forest_set_kernel(f, PS_FOREST_AVX2) == (avx2 ? PS_FOREST_AVX2 : PS_FOREST_SCALAR));
    CHECK(psi_forest_set_kernel(f, PS_FOREST_AVX512) == (avx512 ? PS_FOREST_AVX512 : PS_FOREST_SCALAR));
    CHECK(psi_forest_set_kernel(f, PS_FOREST_SCALAR) == PS_FOREST_SCALAR);
    CHECK(psi_forest_kernel(f) == PS_FOREST_SCALAR);
    const char *old = getenv("PAIRSIGHT_FOREST_KERNEL");
    char *saved = old ? strdup(old) : NULL;
    setenv("PAIRSIGHT_FOREST_KERNEL", "scalar", 1);
    CHECK(psi_forest_set_kernel(f, PS_FOREST_BEST) == PS_FOREST_SCALAR);
    setenv("PAIRSIGHT_FOREST_KERNEL", "avx2", 1);
    CHECK(psi_forest_set_kernel(f, PS_FOREST_BEST) == (avx2 ? PS_FOREST_AVX2 : PS_FOREST_SCALAR));
    /* A name no kernel has (QuickScorer's, removed) falls back to the best. */
    setenv("PAIRSIGHT_FOREST_KERNEL", "qs", 1);
    CHECK(psi_forest_set_kernel(f, PS_FOREST_BEST) == (avx512 ? PS_FOREST_AVX512
                                                       : avx2 ? PS_FOREST_AVX2
                                                              : PS_FOREST_SCALAR));
    CHECK(psi_forest_set_kernel(f, PS_FOREST_N_KERNELS) == PS_FOREST_SCALAR);
    CHECK(psi_forest_set_kernel(f, 99) == PS_FOREST_SCALAR);
    unsetenv("PAIRSIGHT_FOREST_KERNEL");
    CHECK(psi_forest_set_kernel(f, PS_FOREST_BEST) == (avx512 ? PS_FOREST_AVX512
                                                       : avx2 ? PS_FOREST_AVX2
                                                              : PS_FOREST_SCALAR));
    CHECK(strcmp(psi_forest_kernel_name(PS_FOREST_AVX512), "avx512") == 0);
    CHECK(strcmp(psi_forest_kernel_name(PS_FOREST_N_KERNELS), "best") == 0);
    if (saved)
        setenv("PAIRSIGHT_FOREST_KERNEL", saved, 1);
    free(saved);
    psi_forest_free(f);
}

static void check_refused(const char *what, const char *objective, const char *booster, const char *extra,
                          const char *lc, const char *si, const char *needle)
{
    int rc;
    psi_forest_t *f = load_hand(objective, booster, extra, lc, si, &rc);
    CHECK_MSG(rc == PS_E_INPUT && f == NULL, "%s: rc %d", what, rc);
    CHECK_MSG(strstr(ps_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", what, ps_last_error(), needle);
    psi_forest_free(f);
}

static void test_refuses_bad_models(void)
{
    const char *sq = "reg:squarederror";
    check_refused("logistic", "binary:logistic", "gbtree", "", OK_LC, OK_SI, "binary:logistic");
    check_refused("dart", sq, "dart", "", OK_LC, OK_SI, "not gbtree");
    check_refused("cycle", sq, "gbtree", "", "[1, -1, 0, -1, -1]", OK_SI, "tree 0 node 2");
    check_refused("outside", sq, "gbtree", "", "[1, -1, 7, -1, -1]", OK_SI, "bad children");
    check_refused("one child", sq, "gbtree", "", "[1, -1, -1, -1, -1]", OK_SI, "one child");
    check_refused("short", sq, "gbtree", "", "[1, -1, 3, -1]", OK_SI, "left_children has 4");
    check_refused("feature", sq, "gbtree", "", OK_LC, "[3, 0, 0, 0, 0]", "split feature 3");
    check_refused("categorical", sq, "gbtree", ", \"split_type\": [1, 0, 0, 0, 0]", OK_LC, OK_SI, "categorical");
    check_refused("text", sq, "gbtree", "", "[1, \"a\", 3, -1, -1]", OK_SI, "not a number");

    psi_forest_t *f = (psi_forest_t *)1;
    CHECK(psi_forest_from_json("{\"learner\": ", 12, &f) == PS_E_INPUT && f == NULL);
    CHECK(strstr(ps_last_error(), "not valid JSON") != NULL);
    CHECK(psi_forest_from_json("{}", 2, &f) == PS_E_INPUT && f == NULL);
    CHECK(psi_forest_from_booster(NULL, &f) == PS_E_ARG && f == NULL);
}

/* A gblinear booster from XGBoost itself has no trees to flatten. */
static void test_refuses_gblinear_booster(void)
{
    enum { NF = 4, N = 200 };
    float x[N * NF], y[N];
    xh_synth(5, N, NF, 0, x, y);
    DMatrixHandle dm;
    BoosterHandle b;
    CHECK(XGDMatrixCreateFromMat(x, N, NF, NAN, &dm) == 0);
    CHECK(XGDMatrixSetFloatInfo(dm, "label", y, N) == 0);
    CHECK(XGBoosterCreate(&dm, 1, &b) == 0);
    CHECK(XGBoosterSetParam(b, "booster", "gblinear") == 0);
    CHECK(XGBoosterSetParam(b, "nthread", "1") == 0);
    CHECK(XGBoosterUpdateOneIter(b, 0, dm) == 0);
    psi_forest_t *f = NULL;
    CHECK(psi_forest_from_booster(b, &f) == PS_E_INPUT && f == NULL);
    CHECK_MSG(strstr(ps_last_error(), "gblinear") != NULL, "%s", ps_last_error());
    XGBoosterFree(b);
    XGDMatrixFree(dm);
}

/* psi_forest_predict_pair equals psi_forest_predict of each forest, bit for
 * bit, on every kernel, for batches that take the tails, one shared tile,
 * several tiles (the fallback) and the threads' path; two forests of
 * different depths and tree counts, rows with a stride. */
static void test_pair_matches_single(void)
{
    enum { NF = 16, N = 700, STRIDE = 19 };
    float *x = malloc((size_t)N * NF * sizeof *x), *y = malloc(N * sizeof *y);
    float *xs = malloc((size_t)N * STRIDE * sizeof *xs);
    double *a1 = malloc(N * sizeof *a1), *b1 = malloc(N * sizeof *b1), *a2 = malloc(N * sizeof *a2),
           *b2 = malloc(N * sizeof *b2);
    CHECK(x && y && xs && a1 && b1 && a2 && b2);
    BoosterHandle ba = NULL, bb = NULL;
    psi_forest_t *fa = NULL, *fb = NULL;
    if (x && y && xs && a1 && b1 && a2 && b2) {
        xh_synth(7, N, NF, 0.1, x, y);
        for (size_t i = 0; i < N; i++) {
            memcpy(xs + i * STRIDE, x + i * NF, NF * sizeof *x);
            for (int j = NF; j < STRIDE; j++)
                xs[i * STRIDE + j] = 1e30f;
        }
        fa = train_forest(x, y, N, NF, 8, 45, 1, &ba);
        fb = train_forest(x, y, N, NF, 5, 30, 1, &bb);
    }
    static const size_t sizes[] = {1, 4, 5, 9, 11, 16, 17, 22, 27, 32, 48, 64, 70, 100, 255, 256, 700};
    for (int kern = PS_FOREST_N_KERNELS - 1; fa && fb && kern >= PS_FOREST_SCALAR; kern--) {
        psi_forest_set_kernel(fa, kern);
        psi_forest_set_kernel(fb, kern);
        for (size_t k = 0; k < PS_ARRAY_LEN(sizes); k++) {
            size_t m = sizes[k], diff = 0;
            psi_forest_predict(fa, xs, m, STRIDE, a1);
            psi_forest_predict(fb, xs, m, STRIDE, b1);
            psi_forest_predict_pair((psi_forest_t *const[2]){fa, fb}, xs, m, STRIDE, (double *const[2]){a2, b2});
            for (size_t i = 0; i < m; i++)
                diff += a1[i] != a2[i] || b1[i] != b2[i];
            CHECK_MSG(diff == 0, "kernel %d, %zu rows: %zu differ", kern, m, diff);
        }
    }
    release(fa, ba);
    release(fb, bb);
    free(x);
    free(y);
    free(xs);
    free(a1);
    free(b1);
    free(a2);
    free(b2);
}

TH_MAIN(TEST(test_split_semantics_on_hand_tree), TEST(test_refuses_bad_models),
        TEST(test_matches_xgboost_across_depths), TEST(test_batch_sizes_and_stride), TEST(test_tiles_match_xgboost),
        TEST(test_pair_matches_single), TEST(test_threads_agree), TEST(test_refuses_gblinear_booster),
        TEST(test_kernel_selection))
