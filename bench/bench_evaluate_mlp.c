/*
 * Our minibatch-Adam MLP trainer on OpenBLAS (src/model/mlp.c) on one quick
 * task shaped like the baselines' (log-delta-like target, a few hundred
 * inputs of which a few matter, nonlinear interactions): the test MSE
 * relative to the target variance and the training time. Until issue 25 it
 * also ran FANN (libfann) on the same inputs; its figures are kept in
 * docs/evaluation.md.
 *
 * usage: bench_evaluate_mlp [rows] [inputs] [epochs]   (default 20000 200 30)
 *        bench_evaluate_mlp --campaign OPS COEXEC [epochs]      (default 100)
 *
 * The second form is the task that decides: the PairSight-MLP baseline's HP
 * regressor on a campaign (PairSight input, log delta, train split), scored
 * by the latency MAPE on the test split.
 */
#include "common/common.h"
#include "model/mlp.h"
#include "features/features.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double target(const float *x)
{
    /* A slowdown-like rule: a few inputs interact, the rest are noise. */
    double mem = 1 / (1 + exp(-3 * x[0])), press = 0.5 * (x[1] + 1);
    return log(1 + 0.8 * mem * press + 0.1 * x[2] * x[2] + 0.05 * sin(3 * x[3]));
}

/* Test-split latency MAPE (%) of log-delta predictions pred[i] for the
 * test rows idx[0..n) of d. */
static double latency_mape(const psi_dataset_t *d, const size_t *idx, size_t n, const double *pred)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        double p = d->hp_solo_ns[idx[i]] * exp(pred[i]);
        s += fabs(p - d->hp_ns[idx[i]]) / d->hp_ns[idx[i]];
    }
    return 100 * s / (double)n;
}

static int campaign(const char *ops_path, const char *cx_path, int epochs)
{
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    psi_dataset_t *d = NULL;
    psi_feature_layout_t l;
    if (ps_ops_load(ops_path, &ops) != 0 || ps_coexec_load(cx_path, &cx) != 0 ||
        psi_features_layout(PS_FEAT_FULL, PS_WINDOW, &l) != 0 || psi_dataset_build(&l, ops, cx, 1, &d) != 0) {
        fprintf(stderr, "%s\n", ps_last_error());
        return 1;
    }
    int f = l.n_features;
    size_t ntr = 0, nte = 0;
    float *xtr = malloc(d->n * (size_t)f * sizeof *xtr);
    double *ytr = malloc(d->n * sizeof *ytr), *pred = malloc(d->n * sizeof *pred);
    size_t *te = malloc(d->n * sizeof *te);
    float *xte = malloc(d->n * (size_t)f * sizeof *xte);
    for (size_t i = 0; i < d->n; i++) {
        if (d->split[i] == PS_SPLIT_TRAIN) {
            memcpy(xtr + ntr * (size_t)f, d->x_hp + i * (size_t)f, (size_t)f * sizeof *xtr);
            ytr[ntr++] = d->y_hp[i];
        } else if (d->split[i] == PS_SPLIT_TEST) {
            memcpy(xte + nte * (size_t)f, d->x_hp + i * (size_t)f, (size_t)f * sizeof *xte);
            te[nte++] = i;
        }
    }
    printf("task: PairSight-MLP HP regressor, %zu train / %zu test rows, %d inputs\n", ntr, nte, f);
    printf("%-34s %7s %10s %14s\n", "trainer", "epochs", "train s", "test HP MAPE %");
    psi_mlp_params_t p;
    p = psi_mlp_default_params();
    p.epochs = epochs;
    psi_mlp_t *m = NULL;
    double t0 = psi_now();
    if (psi_mlp_train(&(psi_mlp_rows_t){xtr, ytr, ntr, f, 1}, &p, &m) != 0)
        return 1;
    double t = psi_now() - t0;
    psi_mlp_predict(m, xte, nte, pred);
    printf("%-34s %7d %10.2f %14.2f\n", "ours: Adam, minibatch 32, ReLU", psi_mlp_epochs_run(m), t,
           latency_mape(d, te, nte, pred));
    psi_mlp_free(m);

    free(xtr);
    free(ytr);
    free(pred);
    free(te);
    free(xte);
    psi_dataset_free(d);
    ps_coexec_free(cx);
    ps_ops_free(ops);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "--campaign") == 0)
        return campaign(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 100);
    int n = argc > 1 ? atoi(argv[1]) : 20000, d = argc > 2 ? atoi(argv[2]) : 200;
    int epochs = argc > 3 ? atoi(argv[3]) : 30;
    int n_test = n / 5;
    float *x = malloc((size_t)(n + n_test) * (size_t)d * sizeof *x);
    double *y = malloc((size_t)(n + n_test) * sizeof *y);
    psi_rng_t r;
    psi_rng_seed(&r, 42);
    for (int i = 0; i < n + n_test; i++) {
        for (int j = 0; j < d; j++)
            x[(size_t)i * (size_t)d + (size_t)j] = (float)(2 * psi_rng_uniform(&r) - 1);
        y[i] = target(x + (size_t)i * (size_t)d);
    }
    double mean = 0, var = 0;
    for (int i = n; i < n + n_test; i++)
        mean += y[i] / n_test;
    for (int i = n; i < n + n_test; i++)
        var += (y[i] - mean) * (y[i] - mean) / n_test;

    /* Ours, at the baselines' settings (batch 32) for `epochs` and for four
     * times as many. */
    printf("task: %d rows, %d inputs, test variance %.5f\n", n, d, var);
    printf("%-34s %7s %10s %12s\n", "trainer", "epochs", "train s", "test MSE/var");
    double *out = malloc((size_t)n_test * sizeof *out);
    psi_mlp_t *m = NULL;
    for (int rep = 0; rep < 2; rep++) {
        psi_mlp_params_t p;
        p = psi_mlp_default_params();
        p.epochs = rep ? 4 * epochs : epochs;
        p.patience = p.epochs;
        double t0 = psi_now();
        if (psi_mlp_train(&(psi_mlp_rows_t){x, y, (size_t)n, d, 1}, &p, &m) != 0) {
            fprintf(stderr, "%s\n", ps_last_error());
            return 1;
        }
        double t_ours = psi_now() - t0, mse_ours = 0;
        psi_mlp_predict(m, x + (size_t)n * (size_t)d, (size_t)n_test, out);
        for (int i = 0; i < n_test; i++)
            mse_ours += (out[i] - y[n + i]) * (out[i] - y[n + i]) / n_test;
        printf("%-34s %7d %10.2f %12.4f\n", "ours: Adam, minibatch 32, ReLU", p.epochs, t_ours, mse_ours / var);
        psi_mlp_free(m);
        m = NULL;
    }

    free(out);
    free(x);
    free(y);
    return 0;
}
