/* Metrics, column scaling, the MLP trainer and the experiment list parser. */
#include "common/common.h"
#include "evaluate/evaluate.h"
#include "evaluate/experiments.h"
#include "model/mlp.h"
#include "model/scale.h"
#include "testhelp.h"

static void test_mape_within_cdf(void)
{
    double meas[4] = {100, 200, 50, 10};
    double pred[4] = {110, 180, 50, 13};
    /* Errors: 10%, 10%, 0%, 30%. */
    CHECK_NEAR(psi_mape(pred, meas, 4), 12.5, 1e-12);
    CHECK_NEAR(psi_within(pred, meas, 4, 0.10), 75.0, 1e-12);
    CHECK_NEAR(psi_within(pred, meas, 4, 0.05), 25.0, 1e-12);
    CHECK(isnan(psi_mape(pred, meas, 0)));
    double cdf[4];
    psi_error_cdf(pred, meas, 4, cdf);
    CHECK_NEAR(cdf[0], 0, 1e-12);
    CHECK_NEAR(cdf[1], 10, 1e-9);
    CHECK_NEAR(cdf[3], 30, 1e-9);

    ps_accuracy_t acc;
    CHECK_OK(ps_accuracy(pred, pred, meas, meas, 4, &acc));
    CHECK(acc.n == 4);
    CHECK_NEAR(acc.hp_mape, 12.5, 1e-12);
    CHECK_NEAR(acc.hp_within10, 75.0, 1e-12);
    CHECK(ps_accuracy(pred, pred, meas, meas, 0, &acc) == PS_E_ARG);
    double bad[4] = {100, 0, 50, 10};
    CHECK(ps_accuracy(pred, pred, bad, meas, 4, &acc) == PS_E_ARG);
    CHECK(strstr(ps_last_error(), "measurement 1") != NULL);
}

static void test_pearson_median(void)
{
    double a[5] = {1, 2, 3, 4, 5}, b[5] = {2, 4, 6, 8, 10}, c[5] = {5, 4, 3, 2, 1};
    CHECK_NEAR(psi_pearson(a, b, 5), 1.0, 1e-12);
    CHECK_NEAR(psi_pearson(a, c, 5), -1.0, 1e-12);
    double d[5] = {1, NAN, 3, NAN, 5}; /* NAN pairs are skipped */
    CHECK_NEAR(psi_pearson(a, d, 5), 1.0, 1e-12);
    double k[3] = {7, 7, 7};
    CHECK(isnan(psi_pearson(a, k, 3))); /* no variance: undefined */
    double m[4] = {4, 1, 3, 2};
    CHECK_NEAR(psi_median(m, 4), 2.5, 1e-12);
    double o[3] = {9, 1, 5};
    CHECK_NEAR(psi_median(o, 3), 5, 1e-12);
    CHECK(isnan(psi_median(o, 0)));
}

static void test_scaler(void)
{
    /* Column 0 spans decades (bytes): log1p; column 1 is a small flag;
     * column 2 is constant: scaled to 0. */
    float x[4 * 3] = {1e3f, 0, 5, 1e6f, 1, 5, 1e9f, 0, 5, 1e4f, 1, 5};
    psi_scaler_t s;
    CHECK_OK(psi_scaler_fit(&s, x, 4, 3));
    CHECK(s.log1p[0] == 1);
    CHECK(s.log1p[1] == 0);
    float out[3];
    psi_scaler_row(&s, x + 3, out);
    CHECK(fabsf(out[2]) < 1e-6f);
    CHECK(out[1] > 0.9f); /* the flag standardized: (1 - 0.5) / 0.5 */
    float miss[3] = {NAN, NAN, NAN};
    psi_scaler_row(&s, miss, out);
    CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0);
    psi_scaler_clear(&s);
}

/* The trainer must learn a nonlinear function well beyond what the mean
 * gives: y = x0 * x1 + sin(2 x2), two outputs (the second is -y). */
static void test_mlp_learns(void)
{
    enum { N = 1500, D = 3 };
    float *x = malloc(N * D * sizeof *x);
    double *y = malloc(2 * N * sizeof *y);
    psi_rng_t r;
    psi_rng_seed(&r, 7);
    double var = 0, mean = 0;
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < D; j++)
            x[i * D + j] = (float)(2 * psi_rng_uniform(&r) - 1);
        y[2 * i] = x[i * D] * x[i * D + 1] + sin(2 * x[i * D + 2]);
        y[2 * i + 1] = -y[2 * i];
        mean += y[2 * i] / N;
    }
    for (int i = 0; i < N; i++)
        var += (y[2 * i] - mean) * (y[2 * i] - mean) / N;
    psi_mlp_params_t p;
    p = psi_mlp_default_params();
    p.hidden[0] = 32;
    p.hidden[1] = 32;
    p.epochs = 80;
    p.batch = 64;
    p.lr = 3e-3;
    psi_mlp_t *m = NULL;
    CHECK_OK(psi_mlp_train(&(psi_mlp_rows_t){x, y, N, D, 2}, &p, &m));
    CHECK(m != NULL);
    if (m) {
        CHECK(psi_mlp_n_in(m) == D);
        CHECK(psi_mlp_epochs_run(m) >= 1);
        double *out = malloc(2 * N * sizeof *out), mse = 0;
        CHECK_OK(psi_mlp_predict(m, x, N, out));
        for (int i = 0; i < N; i++) {
            mse += (out[2 * i] - y[2 * i]) * (out[2 * i] - y[2 * i]) / N;
            CHECK(fabs(out[2 * i] + out[2 * i + 1]) < 0.2);
        }
        CHECK_MSG(mse < 0.05 * var, "mse %g, variance %g", mse, var);
        free(out);
    }
    psi_mlp_free(m);

    /* Same seed, same model. */
    psi_mlp_t *a = NULL, *b = NULL;
    p.epochs = 3;
    CHECK_OK(psi_mlp_train(&(psi_mlp_rows_t){x, y, 200, D, 2}, &p, &a));
    CHECK_OK(psi_mlp_train(&(psi_mlp_rows_t){x, y, 200, D, 2}, &p, &b));
    double oa[2], ob[2];
    CHECK_OK(psi_mlp_predict(a, x, 1, oa));
    CHECK_OK(psi_mlp_predict(b, x, 1, ob));
    CHECK(oa[0] == ob[0] && oa[1] == ob[1]);
    psi_mlp_free(a);
    psi_mlp_free(b);

    /* Error paths. */
    psi_mlp_t *e = (psi_mlp_t *)&p;
    CHECK(psi_mlp_train(&(psi_mlp_rows_t){x, y, 1, D, 2}, &p, &e) == PS_E_ARG);
    CHECK(e == NULL);
    p.epochs = 0;
    CHECK(psi_mlp_train(&(psi_mlp_rows_t){x, y, N, D, 2}, &p, &e) == PS_E_ARG);
    psi_mlp_free(NULL);
    free(x);
    free(y);
}

/* A saved network (psi_mlp_save, the mlp section of a co-location model)
 * loads to the same predictions, bit for bit; text that is not a network,
 * or is cut short, is refused. */
static void test_mlp_save_load(void)
{
    enum { N = 120, D = 4 };
    float x[N * D];
    double y[N];
    psi_rng_t r;
    psi_rng_seed(&r, 11);
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < D; j++)
            x[i * D + j] = (float)(j == 1 ? 1e4 * psi_rng_uniform(&r) : 2 * psi_rng_uniform(&r) - 1);
        y[i] = 3 * x[i * D] - x[i * D + 2] + 1e-4 * x[i * D + 1];
    }
    psi_mlp_params_t p = psi_mlp_default_params();
    p.hidden[0] = 16;
    p.hidden[1] = 8;
    p.hidden[2] = 4;
    p.tanh_hidden = 1;
    p.epochs = 5;
    psi_mlp_t *m = NULL, *m2 = NULL;
    CHECK_OK(psi_mlp_train(&(psi_mlp_rows_t){x, y, N, D, 1}, &p, &m));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f && psi_mlp_save(m, f) == 0);
    fclose(f);
    f = fmemopen(text, len, "r");
    CHECK_OK(psi_mlp_load(f, &m2));
    fclose(f);
    CHECK(m2 && psi_mlp_n_in(m2) == D && psi_mlp_n_out(m2) == 1);
    double a[N], b[N];
    CHECK_OK(psi_mlp_predict(m, x, N, a));
    if (m2) {
        CHECK_OK(psi_mlp_predict(m2, x, N, b));
        CHECK(memcmp(a, b, sizeof a) == 0);
    }
    psi_mlp_free(m2);
    static const char *bad[] = {"", "mlp 9 1 4 1", "mlp 1 2 4 1", "mlp 1 0 4 0", "mlp 2 1 4 3 1\n0 0 0 0\n1 2"};
    for (size_t k = 0; k < PS_ARRAY_LEN(bad); k++) {
        f = fmemopen((void *)bad[k], strlen(bad[k]) + 1, "r");
        m2 = (psi_mlp_t *)&p;
        CHECK(psi_mlp_load(f, &m2) == -1 && m2 == NULL);
        fclose(f);
    }
    f = fmemopen(text, len / 2, "r"); /* cut short */
    CHECK(psi_mlp_load(f, &m2) == -1);
    fclose(f);
    free(text);
    psi_mlp_free(m);
}

static void test_experiment_list(void)
{
    int m = 0;
    CHECK_OK(psi_experiments_parse("accuracy", &m));
    CHECK(m == PS_EXP_ACCURACY);
    CHECK_OK(psi_experiments_parse("ablation,long", &m));
    CHECK(m == (PS_EXP_ABLATION | PS_EXP_LONG));
    CHECK_OK(psi_experiments_parse("all", &m));
    CHECK(m == PS_EXP_ALL);
    CHECK(psi_experiments_parse("accuracy,bogus", &m) == PS_E_ARG);
    CHECK(strstr(ps_last_error(), "bogus") != NULL);
    CHECK(psi_experiments_parse("", &m) == PS_E_ARG);
}

static void test_method_names(void)
{
    for (int i = 0; i < PS_METHOD_COUNT; i++) {
        ps_method_t m;
        CHECK_OK(ps_method_from_name(ps_method_name((ps_method_t)i), &m));
        CHECK((int)m == i);
    }
    CHECK(strcmp(ps_method_name(PS_METHOD_INTENSITY_RULE), "intensity_rule") == 0);
    CHECK(strcmp(ps_method_name((ps_method_t)99), "?") == 0);
    ps_method_t m;
    CHECK(ps_method_from_name("orion", &m) == PS_E_ARG);
}

TH_MAIN(TEST(test_mape_within_cdf), TEST(test_pearson_median), TEST(test_scaler), TEST(test_mlp_learns),
        TEST(test_mlp_save_load), TEST(test_experiment_list), TEST(test_method_names))
