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
#include "model/mlp.h"

#include "common/common.h"
#include "model/scale.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct psi_mlp {
    int n_layers;
    int width[PS_MLP_MAX_LAYERS + 1]; /* width[0] = n_in, width[n_layers] = n_out */
    float *w[PS_MLP_MAX_LAYERS], *b[PS_MLP_MAX_LAYERS];
    int tanh_hidden;
    psi_scaler_t xs;
    double *y_mean, *y_sd;
    int epochs_run;
};

psi_mlp_params_t psi_mlp_default_params(void)
{
    return (psi_mlp_params_t){.hidden = {64, 64},
                              .epochs = 100,
                              .batch = 32,
                              .lr = 1e-3,
                              .weight_decay = 1e-3,
                              .valid_share = 0.1,
                              .patience = 20,
                              .max_seconds = 0,
                              .seed = 1};
}

int psi_mlp_n_in(const psi_mlp_t *m) { return m->width[0]; }
int psi_mlp_n_out(const psi_mlp_t *m) { return m->width[m->n_layers]; }
int psi_mlp_epochs_run(const psi_mlp_t *m) { return m->epochs_run; }

void psi_mlp_free(psi_mlp_t *m)
{
    if (!m)
        return;
    for (int l = 0; l < m->n_layers; l++) {
        free(m->w[l]);
        free(m->b[l]);
    }
    psi_scaler_clear(&m->xs);
    free(m->y_mean);
    free(m->y_sd);
    free(m);
}

static size_t wsize(const psi_mlp_t *m, int l) { return (size_t)m->width[l + 1] * (size_t)m->width[l]; }

/* Forward pass of B scaled rows; act[l] holds the activations after layer l
 * (act[0] = the input), each B x width[l]. */
static void forward(const psi_mlp_t *m, float **act, int B)
{
    for (int l = 0; l < m->n_layers; l++) {
        int in = m->width[l], out = m->width[l + 1];
        float *z = act[l + 1];
        for (int i = 0; i < B; i++)
            memcpy(z + (size_t)i * (size_t)out, m->b[l], (size_t)out * sizeof *z);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, in, 1.0f, act[l], in, m->w[l], in, 1.0f, z, out);
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

static int scratch_init(scratch_t *s, const psi_mlp_t *m, int cap, int with_grad)
{
    memset(s, 0, sizeof *s);
    for (int l = 0; l <= m->n_layers; l++) {
        s->act[l] = psi_malloc((size_t)cap * (size_t)m->width[l] * sizeof(float));
        if (!s->act[l])
            return PS_E_NOMEM;
        if (with_grad) {
            s->grad[l] = psi_malloc((size_t)cap * (size_t)m->width[l] * sizeof(float));
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

/* Rows of a forward pass that scores the early-stopping rows (trainer_t.sv). */
#define EVAL_ROWS 1024

/* What training needs beside the model: the best weights so far, Adam's
 * moments, the gradients, the standardized data and the row order; s for
 * minibatches, sv for EVAL_ROWS rows of the loss. */
typedef struct {
    float *best[2 * PS_MLP_MAX_LAYERS], *mom[2 * PS_MLP_MAX_LAYERS], *vel[2 * PS_MLP_MAX_LAYERS];
    float *gw[PS_MLP_MAX_LAYERS], *gb[PS_MLP_MAX_LAYERS];
    float *xs, *ys;
    size_t *idx;
    scratch_t s, sv;
} trainer_t;

/* Mean squared error (standardized units) of rows idx[0..n) of the
 * trainer's scaled inputs xs and targets ys. */
static double eval_mse(const psi_mlp_t *m, trainer_t *t, const size_t *idx, size_t n)
{
    scratch_t *s = &t->sv;
    const float *xs = t->xs, *ys = t->ys;
    const int cap = EVAL_ROWS;
    int d = m->width[0], k = m->width[m->n_layers];
    double se = 0;
    for (size_t off = 0; off < n; off += (size_t)cap) {
        int B = (int)(n - off < (size_t)cap ? n - off : (size_t)cap);
        for (int i = 0; i < B; i++)
            memcpy(s->act[0] + (size_t)i * (size_t)d, xs + idx[off + (size_t)i] * (size_t)d, (size_t)d * sizeof(float));
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

static void trainer_free(trainer_t *t)
{
    for (int k = 0; k < 2 * PS_MLP_MAX_LAYERS; k++) {
        free(t->best[k]);
        free(t->mom[k]);
        free(t->vel[k]);
    }
    for (int l = 0; l < PS_MLP_MAX_LAYERS; l++) {
        free(t->gw[l]);
        free(t->gb[l]);
    }
    scratch_free(&t->s);
    scratch_free(&t->sv);
    free(t->xs);
    free(t->ys);
    free(t->idx);
}

/* The layers of m from p, their initial weights (He initialization for ReLU
 * layers, Glorot for tanh) and the trainer's per-layer buffers. */
static int init_layers(psi_mlp_t *m, int n_in, int n_out, const psi_mlp_params_t *p, psi_rng_t *rng, trainer_t *t)
{
    m->width[0] = n_in;
    m->tanh_hidden = p->tanh_hidden;
    m->n_layers = 0;
    for (int h = 0; h < PS_MLP_MAX_LAYERS - 1 && p->hidden[h] > 0; h++)
        m->width[++m->n_layers] = p->hidden[h];
    m->width[++m->n_layers] = n_out;
    for (int l = 0; l < m->n_layers; l++) {
        m->w[l] = psi_malloc(wsize(m, l) * sizeof(float));
        m->b[l] = psi_calloc((size_t)m->width[l + 1], sizeof(float));
        t->gw[l] = psi_malloc(wsize(m, l) * sizeof(float));
        t->gb[l] = psi_malloc((size_t)m->width[l + 1] * sizeof(float));
        if (!m->w[l] || !m->b[l] || !t->gw[l] || !t->gb[l])
            return PS_E_NOMEM;
        double a = p->tanh_hidden ? sqrt(6.0 / (m->width[l] + m->width[l + 1])) : sqrt(6.0 / m->width[l]);
        for (size_t k = 0; k < wsize(m, l); k++)
            m->w[l][k] = (float)((2 * psi_rng_uniform(rng) - 1) * a);
        size_t sz[2] = {wsize(m, l), (size_t)m->width[l + 1]};
        for (int i = 0; i < 2; i++) {
            t->best[2 * l + i] = psi_malloc(sz[i] * sizeof(float));
            t->mom[2 * l + i] = psi_calloc(sz[i], sizeof(float));
            t->vel[2 * l + i] = psi_calloc(sz[i], sizeof(float));
            if (!t->best[2 * l + i] || !t->mom[2 * l + i] || !t->vel[2 * l + i])
                return PS_E_NOMEM;
        }
    }
    return 0;
}

/* Inputs and targets standardized once, into t->xs and t->ys; the targets'
 * mean and deviation go into m to undo it at prediction. */
static int standardize(psi_mlp_t *m, const psi_mlp_rows_t *r, trainer_t *t)
{
    const float *x = r->x;
    const double *y = r->y;
    size_t n = r->n;
    int n_in = r->n_in, n_out = r->n_out;
    int rc = psi_scaler_fit(&m->xs, x, n, n_in);
    if (rc != 0)
        return rc;
    t->xs = psi_malloc(n * (size_t)n_in * sizeof(float));
    t->ys = psi_malloc(n * (size_t)n_out * sizeof(float));
    m->y_mean = psi_calloc((size_t)n_out, sizeof(double));
    m->y_sd = psi_calloc((size_t)n_out, sizeof(double));
    t->idx = psi_malloc(n * sizeof *t->idx);
    if (!t->xs || !t->ys || !m->y_mean || !m->y_sd || !t->idx)
        return PS_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        psi_scaler_row(&m->xs, x + i * (size_t)n_in, t->xs + i * (size_t)n_in);
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
            t->ys[i * (size_t)n_out + (size_t)j] = (float)((y[i * (size_t)n_out + (size_t)j] - mean) / m->y_sd[j]);
    }
    return 0;
}

/* The gradients of the mean squared error of the B rows t->idx[off..) into
 * t->gw and t->gb: forward pass, then backpropagation layer by layer. */
static void backward(const psi_mlp_t *m, trainer_t *t, size_t off, int B)
{
    int n_in = m->width[0], n_out = m->width[m->n_layers], L = m->n_layers;
    scratch_t *s = &t->s;
    for (int i = 0; i < B; i++)
        memcpy(s->act[0] + (size_t)i * (size_t)n_in, t->xs + t->idx[off + (size_t)i] * (size_t)n_in,
               (size_t)n_in * sizeof(float));
    forward(m, s->act, B);
    float *dz = s->grad[L];
    for (int i = 0; i < B; i++)
        for (int j = 0; j < n_out; j++)
            dz[i * n_out + j] = 2.0f / (float)(B * n_out) *
                                (s->act[L][i * n_out + j] - t->ys[t->idx[off + (size_t)i] * (size_t)n_out + (size_t)j]);
    for (int l = L - 1; l >= 0; l--) {
        int in = m->width[l], o = m->width[l + 1];
        dz = s->grad[l + 1];
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, o, in, B, 1.0f, dz, o, s->act[l], in, 0.0f, t->gw[l], in);
        for (int j = 0; j < o; j++) {
            float acc = 0;
            for (int i = 0; i < B; i++)
                acc += dz[i * o + j];
            t->gb[l][j] = acc;
        }
        if (l == 0)
            continue;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, in, o, 1.0f, dz, o, m->w[l], in, 0.0f, s->grad[l],
                    in);
        size_t nk = (size_t)B * (size_t)in;
        if (m->tanh_hidden)
            for (size_t k = 0; k < nk; k++)
                s->grad[l][k] *= 1 - s->act[l][k] * s->act[l][k];
        else
            for (size_t k = 0; k < nk; k++)
                if (s->act[l][k] <= 0)
                    s->grad[l][k] = 0;
    }
}

/* One Adam step (Kingma and Ba 2015) with decoupled weight decay on the
 * weights, not the biases. */
static void adam_step(psi_mlp_t *m, trainer_t *t, const psi_mlp_params_t *p, long step)
{
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    double c1 = 1 - pow(b1, (double)step), c2 = 1 - pow(b2, (double)step);
    float lr1 = (float)(p->lr * sqrt(c2) / c1);
    for (int l = 0; l < m->n_layers; l++) {
        float *par[2] = {m->w[l], m->b[l]}, *g[2] = {t->gw[l], t->gb[l]};
        size_t sz[2] = {wsize(m, l), (size_t)m->width[l + 1]};
        for (int i = 0; i < 2; i++) {
            float *mm = t->mom[2 * l + i], *vv = t->vel[2 * l + i];
            float decay = i == 0 ? (float)(p->lr * p->weight_decay) : 0.0f;
            for (size_t k = 0; k < sz[i]; k++) {
                float gk = g[i][k];
                mm[k] = (float)(b1 * mm[k] + (1 - b1) * gk);
                vv[k] = (float)(b2 * vv[k] + (1 - b2) * gk * gk);
                par[i][k] -= lr1 * mm[k] / (sqrtf(vv[k]) + (float)eps) + decay * par[i][k];
            }
        }
    }
}

/* Copies the weights between m and t->best (to_best 1: keep m's). */
static void swap_best(psi_mlp_t *m, trainer_t *t, int to_best)
{
    for (int l = 0; l < m->n_layers; l++) {
        size_t sz[2] = {wsize(m, l) * sizeof(float), (size_t)m->width[l + 1] * sizeof(float)};
        float *par[2] = {m->w[l], m->b[l]};
        for (int i = 0; i < 2; i++)
            memcpy(to_best ? t->best[2 * l + i] : par[i], to_best ? par[i] : t->best[2 * l + i], sz[i]);
    }
}

/* Epochs of minibatch Adam on the rows t->idx[0..n_fit), early-stopped on
 * the mean squared error of the n_valid rows after them (on the training
 * rows when there are none); m ends with the best epoch's weights. */
static void fit(psi_mlp_t *m, trainer_t *t, const psi_mlp_params_t *p, psi_rng_t *rng, size_t n_fit, size_t n_valid)
{
    const size_t *valid = t->idx + n_fit;
    int cap = p->batch;
    double best_loss = INFINITY, t0 = psi_now();
    long step = 0;
    int since_best = 0;
    swap_best(m, t, 1);
    for (int ep = 0; ep < p->epochs; ep++) {
        psi_rng_shuffle(rng, t->idx, n_fit);
        for (size_t off = 0; off < n_fit; off += (size_t)cap) {
            int B = (int)(n_fit - off < (size_t)cap ? n_fit - off : (size_t)cap);
            backward(m, t, off, B);
            adam_step(m, t, p, ++step);
        }
        m->epochs_run = ep + 1;
        double loss = n_valid ? eval_mse(m, t, valid, n_valid) : eval_mse(m, t, t->idx, n_fit);
        if (loss < best_loss) {
            best_loss = loss;
            since_best = 0;
            swap_best(m, t, 1);
        } else if (++since_best >= p->patience) {
            break;
        }
        if (p->max_seconds > 0 && psi_now() - t0 > p->max_seconds)
            break;
    }
    swap_best(m, t, 0);
}

int psi_mlp_train(const psi_mlp_rows_t *r, const psi_mlp_params_t *p, psi_mlp_t **out)
{
    *out = NULL;
    size_t n = r->n;
    int n_in = r->n_in, n_out = r->n_out;
    if (!r->x || !r->y || n < 2 || n_in <= 0 || n_out <= 0 || p->batch <= 0 || p->epochs <= 0)
        return psi_error(PS_E_ARG, "mlp: need at least 2 rows, positive sizes and epochs");
    psi_mlp_t *m = psi_calloc(1, sizeof *m);
    if (!m)
        return PS_E_NOMEM;
    trainer_t t;
    memset(&t, 0, sizeof t);
    psi_rng_t rng;
    psi_rng_seed(&rng, p->seed);
    int rc = init_layers(m, n_in, n_out, p, &rng, &t);
    if (rc == 0)
        rc = standardize(m, r, &t);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            t.idx[i] = i;
        size_t n_valid;
        if (p->valid_tail > 0) {
            n_valid = p->valid_tail; /* the caller's rows, kept in place */
        } else {
            psi_rng_shuffle(&rng, t.idx, n);
            n_valid = (size_t)(p->valid_share * (double)n);
        }
        if (n_valid >= n)
            n_valid = n - 1;
        if ((rc = scratch_init(&t.s, m, p->batch, 1)) == 0 && (rc = scratch_init(&t.sv, m, EVAL_ROWS, 0)) == 0)
            fit(m, &t, p, &rng, n - n_valid, n_valid);
    }
    trainer_free(&t);
    if (rc != 0)
        psi_mlp_free(m);
    else
        *out = m;
    return rc;
}

int psi_mlp_predict(const psi_mlp_t *m, const float *x, size_t n, double *out)
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
            psi_scaler_row(&m->xs, x + (off + (size_t)i) * (size_t)d, s.act[0] + (size_t)i * (size_t)d);
        forward(m, s.act, B);
        for (int i = 0; i < B; i++)
            for (int j = 0; j < k; j++)
                out[(off + (size_t)i) * (size_t)k + (size_t)j] =
                    m->y_mean[j] + m->y_sd[j] * s.act[m->n_layers][i * k + j];
    }
    scratch_free(&s);
    return 0;
}

/* ---- saving and loading ---- */

static void put_floats(FILE *f, const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, i ? " %.9g" : "%.9g", (double)v[i]);
    fputc('\n', f);
}

static void put_doubles(FILE *f, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, i ? " %.17g" : "%.17g", v[i]);
    fputc('\n', f);
}

int psi_mlp_save(const psi_mlp_t *m, FILE *f)
{
    int n_out = m->width[m->n_layers];
    fprintf(f, "mlp %d %d", m->n_layers, m->tanh_hidden);
    for (int l = 0; l <= m->n_layers; l++)
        fprintf(f, " %d", m->width[l]);
    fputc('\n', f);
    for (int j = 0; j < m->xs.n; j++)
        fprintf(f, j ? " %d" : "%d", m->xs.log1p[j]);
    fputc('\n', f);
    put_doubles(f, m->xs.mean, (size_t)m->xs.n);
    put_doubles(f, m->xs.inv_sd, (size_t)m->xs.n);
    put_doubles(f, m->y_mean, (size_t)n_out);
    put_doubles(f, m->y_sd, (size_t)n_out);
    for (int l = 0; l < m->n_layers; l++) {
        put_floats(f, m->w[l], wsize(m, l));
        put_floats(f, m->b[l], (size_t)m->width[l + 1]);
    }
    return ferror(f) ? -1 : 0;
}

static int get_floats(FILE *f, float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double x;
        if (fscanf(f, "%lf", &x) != 1 || !isfinite(x))
            return -1;
        v[i] = (float)x;
    }
    return 0;
}

static int get_doubles(FILE *f, double *v, size_t n, int positive)
{
    for (size_t i = 0; i < n; i++)
        if (fscanf(f, "%lf", &v[i]) != 1 || !isfinite(v[i]) || (positive && !(v[i] > 0)))
            return -1;
    return 0;
}

/* The layer widths and activation line; each width in 1..4096. */
static int get_shape(FILE *f, psi_mlp_t *m)
{
    int n = 0, act = 0, w[PS_MLP_MAX_LAYERS + 1];
    if (fscanf(f, " mlp %d %d", &n, &act) != 2 || n < 1 || n > PS_MLP_MAX_LAYERS || (act != 0 && act != 1))
        return -1;
    for (int l = 0; l <= n; l++)
        if (fscanf(f, "%d", &w[l]) != 1 || w[l] < 1 || w[l] > 4096)
            return -1;
    m->n_layers = n; /* set only now: psi_mlp_free walks n_layers */
    m->tanh_hidden = act;
    memcpy(m->width, w, (size_t)(n + 1) * sizeof *w);
    return 0;
}

/* Every array of m (its shape read) allocated. */
static int alloc_arrays(psi_mlp_t *m)
{
    int d = m->width[0], k = m->width[m->n_layers];
    m->xs.n = d;
    m->xs.log1p = psi_calloc((size_t)d, 1);
    m->xs.mean = psi_calloc((size_t)d, sizeof *m->xs.mean);
    m->xs.inv_sd = psi_calloc((size_t)d, sizeof *m->xs.inv_sd);
    m->y_mean = psi_calloc((size_t)k, sizeof *m->y_mean);
    m->y_sd = psi_calloc((size_t)k, sizeof *m->y_sd);
    int ok = m->xs.log1p && m->xs.mean && m->xs.inv_sd && m->y_mean && m->y_sd;
    for (int l = 0; ok && l < m->n_layers; l++)
        ok = (m->w[l] = psi_malloc(wsize(m, l) * sizeof(float))) &&
             (m->b[l] = psi_malloc((size_t)m->width[l + 1] * sizeof(float)));
    return ok ? PS_OK : PS_E_NOMEM;
}

int psi_mlp_load(FILE *f, psi_mlp_t **out)
{
    *out = NULL;
    psi_mlp_t *m = psi_calloc(1, sizeof *m);
    if (!m)
        return PS_E_NOMEM;
    int rc = get_shape(f, m);
    if (rc == 0)
        rc = alloc_arrays(m);
    for (int j = 0; rc == 0 && j < m->xs.n; j++) {
        int v;
        if (fscanf(f, "%d", &v) != 1 || (v != 0 && v != 1))
            rc = -1;
        else
            m->xs.log1p[j] = (unsigned char)v;
    }
    int k = m->width[m->n_layers];
    if (rc == 0 &&
        (get_doubles(f, m->xs.mean, (size_t)m->xs.n, 0) || get_doubles(f, m->xs.inv_sd, (size_t)m->xs.n, 0) ||
         get_doubles(f, m->y_mean, (size_t)k, 0) || get_doubles(f, m->y_sd, (size_t)k, 1)))
        rc = -1;
    for (int l = 0; rc == 0 && l < m->n_layers; l++)
        if (get_floats(f, m->w[l], wsize(m, l)) || get_floats(f, m->b[l], (size_t)m->width[l + 1]))
            rc = -1;
    if (rc != 0) {
        psi_mlp_free(m);
        return rc;
    }
    *out = m;
    return PS_OK;
}
