/*
 * Multilayer perceptron trained with minibatch Adam on OpenBLAS.
 *
 * Layer l maps a_{l-1} (B x in_l) to z_l = a_{l-1} W_l^T + b_l (B x out_l);
 * hidden layers apply ReLU, the last is linear. The loss is the mean squared
 * error on standardized targets; gradients follow the usual back-propagation
 *   dZ_L = 2 (A_L - Y) / B,  dW_l = dZ_l^T A_{l-1},  dA_{l-1} = dZ_l W_l,
 *   dZ_{l-1} = dA_{l-1} * [Z_{l-1} > 0],
 * and Adam (Kingma and Ba, 2015) with decoupled weight decay updates them.
 */
#include "evaluate/mlp.h"

#include "common/common.h"
#include "evaluate/scale.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ps_mlp {
    int n_layers;
    int width[PS_MLP_MAX_LAYERS + 1]; /* width[0] = n_in, width[n_layers] = n_out */
    float *w[PS_MLP_MAX_LAYERS], *b[PS_MLP_MAX_LAYERS];
    int tanh_hidden;
    ps_scaler_t xs;
    double *y_mean, *y_sd;
    int epochs_run;
};

void ps_mlp_default_params(ps_mlp_params_t *p)
{
    memset(p, 0, sizeof *p);
    p->hidden[0] = 64;
    p->hidden[1] = 64;
    p->epochs = 100;
    p->batch = 32;
    p->lr = 1e-3;
    p->weight_decay = 1e-3;
    p->valid_share = 0.1;
    p->patience = 20;
    p->max_seconds = 0;
    p->seed = 1;
}

int ps_mlp_n_in(const ps_mlp_t *m) { return m->width[0]; }
int ps_mlp_epochs_run(const ps_mlp_t *m) { return m->epochs_run; }

void ps_mlp_free(ps_mlp_t *m)
{
    if (!m)
        return;
    for (int l = 0; l < m->n_layers; l++) {
        free(m->w[l]);
        free(m->b[l]);
    }
    ps_scaler_clear(&m->xs);
    free(m->y_mean);
    free(m->y_sd);
    free(m);
}

static size_t wsize(const ps_mlp_t *m, int l) { return (size_t)m->width[l + 1] * (size_t)m->width[l]; }

/* Forward pass of B scaled rows; act[l] holds the activations after layer l
 * (act[0] = the input), each B x width[l]. */
static void forward(const ps_mlp_t *m, float **act, int B)
{
    for (int l = 0; l < m->n_layers; l++) {
        int in = m->width[l], out = m->width[l + 1];
        float *z = act[l + 1];
        for (int i = 0; i < B; i++)
            memcpy(z + (size_t)i * (size_t)out, m->b[l], (size_t)out * sizeof *z);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in, 1.0f, act[l], in, m->w[l], in,
                    1.0f, z, out);
        if (l + 1 < m->n_layers && m->tanh_hidden)
            for (size_t k = 0; k < (size_t)B * (size_t)out; k++)
                z[k] = tanhf(z[k]);
        else if (l + 1 < m->n_layers)
            for (size_t k = 0; k < (size_t)B * (size_t)out; k++)
                if (z[k] < 0)
                    z[k] = 0;
    }
}

/* Scratch for forward passes over up to cap rows. */
typedef struct {
    float *act[PS_MLP_MAX_LAYERS + 1];
    float *grad[PS_MLP_MAX_LAYERS + 1];
} scratch_t;

static int scratch_init(scratch_t *s, const ps_mlp_t *m, int cap, int with_grad)
{
    memset(s, 0, sizeof *s);
    for (int l = 0; l <= m->n_layers; l++) {
        s->act[l] = ps_malloc((size_t)cap * (size_t)m->width[l] * sizeof(float));
        if (!s->act[l])
            return PS_E_NOMEM;
        if (with_grad) {
            s->grad[l] = ps_malloc((size_t)cap * (size_t)m->width[l] * sizeof(float));
            if (!s->grad[l])
                return PS_E_NOMEM;
        }
    }
    return 0;
}

static void scratch_free(scratch_t *s)
{
    for (int l = 0; l <= PS_MLP_MAX_LAYERS; l++) {
        free(s->act[l]);
        free(s->grad[l]);
    }
}

/* Mean squared error (standardized units) of rows idx[0..n) of the scaled
 * inputs xs and targets ys. */
static double eval_mse(const ps_mlp_t *m, scratch_t *s, int cap, const float *xs, const float *ys,
                       const size_t *idx, size_t n)
{
    int d = m->width[0], k = m->width[m->n_layers];
    double se = 0;
    for (size_t off = 0; off < n; off += (size_t)cap) {
        int B = (int)(n - off < (size_t)cap ? n - off : (size_t)cap);
        for (int i = 0; i < B; i++)
            memcpy(s->act[0] + (size_t)i * (size_t)d, xs + idx[off + (size_t)i] * (size_t)d,
                   (size_t)d * sizeof(float));
        forward(m, s->act, B);
        const float *o = s->act[m->n_layers];
        for (int i = 0; i < B; i++)
            for (int j = 0; j < k; j++) {
                double e = o[i * k + j] - ys[idx[off + (size_t)i] * (size_t)k + (size_t)j];
                se += e * e;
            }
    }
    return n ? se / (double)(n * (size_t)k) : 0;
}

int ps_mlp_train(const float *x, size_t n, int n_in, const double *y, int n_out,
                 const ps_mlp_params_t *p, ps_mlp_t **out)
{
    *out = NULL;
    if (!x || !y || n < 2 || n_in <= 0 || n_out <= 0 || p->batch <= 0 || p->epochs <= 0)
        return ps_error(PS_E_ARG, "mlp: need at least 2 rows, positive sizes and epochs");
    ps_mlp_t *m = ps_calloc(1, sizeof *m);
    if (!m)
        return PS_E_NOMEM;
    int rc = PS_E_NOMEM;
    float *xs = NULL, *ys = NULL, *best[2 * PS_MLP_MAX_LAYERS] = {0};
    float *mom[2 * PS_MLP_MAX_LAYERS] = {0}, *vel[2 * PS_MLP_MAX_LAYERS] = {0};
    float *gw[PS_MLP_MAX_LAYERS] = {0}, *gb[PS_MLP_MAX_LAYERS] = {0};
    size_t *idx = NULL;
    scratch_t s = {0}, sv = {0};

    m->width[0] = n_in;
    m->tanh_hidden = p->tanh_hidden;
    m->n_layers = 0;
    for (int h = 0; h < PS_MLP_MAX_LAYERS - 1 && p->hidden[h] > 0; h++)
        m->width[++m->n_layers] = p->hidden[h];
    m->width[++m->n_layers] = n_out;

    ps_rng_t rng;
    ps_rng_seed(&rng, p->seed);
    for (int l = 0; l < m->n_layers; l++) {
        m->w[l] = ps_malloc(wsize(m, l) * sizeof(float));
        m->b[l] = ps_calloc((size_t)m->width[l + 1], sizeof(float));
        gw[l] = ps_malloc(wsize(m, l) * sizeof(float));
        gb[l] = ps_malloc((size_t)m->width[l + 1] * sizeof(float));
        if (!m->w[l] || !m->b[l] || !gw[l] || !gb[l])
            goto done;
        /* He initialization for ReLU layers, Glorot for tanh. */
        double a = p->tanh_hidden ? sqrt(6.0 / (m->width[l] + m->width[l + 1])) : sqrt(6.0 / m->width[l]);
        for (size_t k = 0; k < wsize(m, l); k++)
            m->w[l][k] = (float)((2 * ps_rng_uniform(&rng) - 1) * a);
        size_t sz[2] = {wsize(m, l), (size_t)m->width[l + 1]};
        for (int t = 0; t < 2; t++) {
            best[2 * l + t] = ps_malloc(sz[t] * sizeof(float));
            mom[2 * l + t] = ps_calloc(sz[t], sizeof(float));
            vel[2 * l + t] = ps_calloc(sz[t], sizeof(float));
            if (!best[2 * l + t] || !mom[2 * l + t] || !vel[2 * l + t])
                goto done;
        }
    }

    /* Standardize inputs and targets once. */
    if ((rc = ps_scaler_fit(&m->xs, x, n, n_in)) != 0)
        goto done;
    rc = PS_E_NOMEM;
    xs = ps_malloc(n * (size_t)n_in * sizeof(float));
    ys = ps_malloc(n * (size_t)n_out * sizeof(float));
    m->y_mean = ps_calloc((size_t)n_out, sizeof(double));
    m->y_sd = ps_calloc((size_t)n_out, sizeof(double));
    idx = ps_malloc(n * sizeof *idx);
    if (!xs || !ys || !m->y_mean || !m->y_sd || !idx)
        goto done;
    for (size_t i = 0; i < n; i++)
        ps_scaler_row(&m->xs, x + i * (size_t)n_in, xs + i * (size_t)n_in);
    for (int j = 0; j < n_out; j++) {
        double sum = 0, sum2 = 0;
        for (size_t i = 0; i < n; i++) {
            double v = y[i * (size_t)n_out + (size_t)j];
            sum += v;
            sum2 += v * v;
        }
        double mean = sum / (double)n, var = sum2 / (double)n - mean * mean;
        m->y_mean[j] = mean;
        m->y_sd[j] = var > 1e-18 ? sqrt(var) : 1;
        for (size_t i = 0; i < n; i++)
            ys[i * (size_t)n_out + (size_t)j] =
                (float)((y[i * (size_t)n_out + (size_t)j] - mean) / m->y_sd[j]);
    }

    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    size_t n_valid;
    if (p->valid_tail > 0) {
        n_valid = p->valid_tail; /* the caller's rows, kept in place */
    } else {
        ps_rng_shuffle(&rng, idx, n);
        n_valid = (size_t)(p->valid_share * (double)n);
    }
    if (n_valid >= n)
        n_valid = n - 1;
    size_t n_fit = n - n_valid;
    const size_t *valid = idx + n_fit;

    for (int l = 0; l < m->n_layers; l++) {
        memcpy(best[2 * l], m->w[l], wsize(m, l) * sizeof(float));
        memcpy(best[2 * l + 1], m->b[l], (size_t)m->width[l + 1] * sizeof(float));
    }
    int cap = p->batch;
    if ((rc = scratch_init(&s, m, cap, 1)) != 0 || (rc = scratch_init(&sv, m, 1024, 0)) != 0)
        goto done;

    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    double best_loss = INFINITY, t0 = ps_now();
    long step = 0;
    int since_best = 0;
    for (int ep = 0; ep < p->epochs; ep++) {
        ps_rng_shuffle(&rng, idx, n_fit);
        for (size_t off = 0; off < n_fit; off += (size_t)cap) {
            int B = (int)(n_fit - off < (size_t)cap ? n_fit - off : (size_t)cap);
            for (int i = 0; i < B; i++)
                memcpy(s.act[0] + (size_t)i * (size_t)n_in, xs + idx[off + (size_t)i] * (size_t)n_in,
                       (size_t)n_in * sizeof(float));
            forward(m, s.act, B);
            int L = m->n_layers;
            float *dz = s.grad[L];
            for (int i = 0; i < B; i++)
                for (int j = 0; j < n_out; j++)
                    dz[i * n_out + j] = 2.0f / (float)(B * n_out) *
                                        (s.act[L][i * n_out + j] -
                                         ys[idx[off + (size_t)i] * (size_t)n_out + (size_t)j]);
            for (int l = L - 1; l >= 0; l--) {
                int in = m->width[l], o = m->width[l + 1];
                dz = s.grad[l + 1];
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, o, in, B, 1.0f, dz, o, s.act[l], in,
                            0.0f, gw[l], in);
                for (int j = 0; j < o; j++) {
                    float acc = 0;
                    for (int i = 0; i < B; i++)
                        acc += dz[i * o + j];
                    gb[l][j] = acc;
                }
                if (l > 0) {
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, in, o, 1.0f, dz, o, m->w[l],
                                in, 0.0f, s.grad[l], in);
                    size_t nk = (size_t)B * (size_t)in;
                    if (m->tanh_hidden)
                        for (size_t k = 0; k < nk; k++)
                            s.grad[l][k] *= 1 - s.act[l][k] * s.act[l][k];
                    else
                        for (size_t k = 0; k < nk; k++)
                            if (s.act[l][k] <= 0)
                                s.grad[l][k] = 0;
                }
            }
            step++;
            double c1 = 1 - pow(b1, (double)step), c2 = 1 - pow(b2, (double)step);
            float lr1 = (float)(p->lr * sqrt(c2) / c1);
            for (int l = 0; l < L; l++) {
                float *par[2] = {m->w[l], m->b[l]}, *g[2] = {gw[l], gb[l]};
                size_t sz[2] = {wsize(m, l), (size_t)m->width[l + 1]};
                for (int t = 0; t < 2; t++) {
                    float *mm = mom[2 * l + t], *vv = vel[2 * l + t];
                    float decay = t == 0 ? (float)(p->lr * p->weight_decay) : 0.0f;
                    for (size_t k = 0; k < sz[t]; k++) {
                        float gk = g[t][k];
                        mm[k] = (float)(b1 * mm[k] + (1 - b1) * gk);
                        vv[k] = (float)(b2 * vv[k] + (1 - b2) * gk * gk);
                        par[t][k] -= lr1 * mm[k] / (sqrtf(vv[k]) + (float)eps) + decay * par[t][k];
                    }
                }
            }
        }
        m->epochs_run = ep + 1;
        /* Early stopping on the held-out rows (on the training rows when
         * there are none). */
        double loss = n_valid ? eval_mse(m, &sv, 1024, xs, ys, valid, n_valid)
                              : eval_mse(m, &sv, 1024, xs, ys, idx, n_fit);
        if (loss < best_loss) {
            best_loss = loss;
            since_best = 0;
            for (int l = 0; l < m->n_layers; l++) {
                memcpy(best[2 * l], m->w[l], wsize(m, l) * sizeof(float));
                memcpy(best[2 * l + 1], m->b[l], (size_t)m->width[l + 1] * sizeof(float));
            }
        } else if (++since_best >= p->patience) {
            break;
        }
        if (p->max_seconds > 0 && ps_now() - t0 > p->max_seconds)
            break;
    }
    for (int l = 0; l < m->n_layers; l++) {
        memcpy(m->w[l], best[2 * l], wsize(m, l) * sizeof(float));
        memcpy(m->b[l], best[2 * l + 1], (size_t)m->width[l + 1] * sizeof(float));
    }
    rc = 0;
done:
    for (int k = 0; k < 2 * PS_MLP_MAX_LAYERS; k++) {
        free(best[k]);
        free(mom[k]);
        free(vel[k]);
    }
    for (int l = 0; l < PS_MLP_MAX_LAYERS; l++) {
        free(gw[l]);
        free(gb[l]);
    }
    scratch_free(&s);
    scratch_free(&sv);
    free(xs);
    free(ys);
    free(idx);
    if (rc != 0)
        ps_mlp_free(m);
    else
        *out = m;
    return rc;
}

int ps_mlp_predict(const ps_mlp_t *m, const float *x, size_t n, double *out)
{
    enum { CAP = 1024 };
    scratch_t s;
    int rc = scratch_init(&s, m, CAP, 0);
    if (rc != 0) {
        scratch_free(&s);
        return rc;
    }
    int d = m->width[0], k = m->width[m->n_layers];
    for (size_t off = 0; off < n; off += CAP) {
        int B = (int)(n - off < CAP ? n - off : CAP);
        for (int i = 0; i < B; i++)
            ps_scaler_row(&m->xs, x + (off + (size_t)i) * (size_t)d, s.act[0] + (size_t)i * (size_t)d);
        forward(m, s.act, B);
        for (int i = 0; i < B; i++)
            for (int j = 0; j < k; j++)
                out[(off + (size_t)i) * (size_t)k + (size_t)j] =
                    m->y_mean[j] + m->y_sd[j] * s.act[m->n_layers][i * k + j];
    }
    scratch_free(&s);
    return 0;
}
