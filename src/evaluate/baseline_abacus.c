/* The Abacus-style baseline: model identity (one-hot), batch sizes, segment
 * positions, the SM split and the standalone latencies into an MLP that
 * predicts log delta of both sides. */
#include "evaluate/baseline_internal.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int abacus_n_in(const ps_baseline_t *b) { return 2 * b->n_models + 10; }

static int model_index(const ps_baseline_t *b, const char *name)
{
    for (int i = 0; i < b->n_models; i++)
        if (strcmp(b->models[i], name) == 0)
            return i;
    return -1;
}

static int add_model(ps_baseline_t *b, const char *name)
{
    if (model_index(b, name) >= 0)
        return 0;
    char **m = psi_realloc(b->models, (size_t)(b->n_models + 1) * sizeof *m);
    if (!m)
        return PS_E_NOMEM;
    b->models = m;
    if (!(m[b->n_models] = psi_strdup(name)))
        return PS_E_NOMEM;
    b->n_models++;
    return 0;
}

/* One Abacus input row: one-hot HP and LP model (all zero for a model absent
 * from training), log2 batch sizes, segment starts and lengths, TPCs and the
 * log standalone latencies. */
static void abacus_row(const ps_baseline_t *b, const ps_query_t *q, double hp_solo, double lp_solo, float *x)
{
    int M = b->n_models;
    memset(x, 0, (size_t)abacus_n_in(b) * sizeof *x);
    int h = model_index(b, q->hp_model), l = model_index(b, q->lp_model);
    if (h >= 0)
        x[h] = 1;
    if (l >= 0)
        x[M + l] = 1;
    float *r = x + 2 * M;
    r[0] = (float)log2(q->hp_batch);
    r[1] = (float)log2(q->lp_batch);
    r[2] = (float)q->hp_start;
    r[3] = (float)q->hp_len;
    r[4] = (float)q->lp_start;
    r[5] = (float)q->lp_len;
    r[6] = (float)q->hp_tpcs;
    r[7] = (float)q->lp_tpcs;
    r[8] = (float)log(hp_solo);
    r[9] = (float)log(lp_solo);
}

int psi_bl_fit_abacus(ps_baseline_t *b, const psi_dataset_t *d, const unsigned char *use, const ps_baseline_params_t *p)
{
    size_t n = 0;
    int rc;
    for (size_t i = 0; i < d->n; i++)
        if (use[i]) {
            n++;
            if ((rc = add_model(b, d->rows[i]->hp_model)) != 0 || (rc = add_model(b, d->rows[i]->lp_model)) != 0)
                return rc;
        }
    int din = abacus_n_in(b);
    float *x = psi_malloc(n * (size_t)din * sizeof *x);
    double *y = psi_malloc(2 * n * sizeof *y);
    rc = PS_E_NOMEM;
    if (x && y) {
        /* Fitting rows first, then the tuning rows: early stopping on them. */
        size_t k = 0;
        for (int r = ROLE_FIT; r <= ROLE_TUNE; r++)
            for (size_t i = 0; i < d->n; i++) {
                if (use[i] != r)
                    continue;
                ps_query_t q = psi_query_of_row(d->rows[i]);
                abacus_row(b, &q, d->hp_solo_ns[i], d->lp_solo_ns[i], x + k * (size_t)din);
                y[2 * k] = d->y_hp[i];
                y[2 * k + 1] = d->y_lp[i];
                k++;
            }
        psi_mlp_params_t mp;
        psi_bl_mlp_params(p, &mp);
        mp.valid_tail = psi_bl_n_tune_rows(d, use);
        rc = psi_mlp_train(&(psi_mlp_rows_t){x, y, n, din, 2}, &mp, &b->mlp[0]);
    }
    free(x);
    free(y);
    return rc;
}

/* Abacus: its own input row per query into the MLP, in chunks. */
int psi_bl_predict_abacus(const ps_baseline_t *b, const psi_bl_queries_t *in, double *hp, double *lp)
{
    const ps_query_t *q = in->q;
    const double *hs = in->hs, *ls = in->ls;
    size_t n = in->n;
    int din = abacus_n_in(b);
    enum { CHUNK = 1024 };
    float *xa = psi_malloc((size_t)CHUNK * (size_t)din * sizeof *xa);
    double *o = psi_malloc(2 * CHUNK * sizeof *o);
    int rc = (!xa || !o) ? PS_E_NOMEM : 0;
    for (size_t off = 0; off < n && rc == 0; off += CHUNK) {
        size_t B = n - off < CHUNK ? n - off : CHUNK;
        for (size_t i = 0; i < B; i++)
            abacus_row(b, &q[off + i], hs[off + i], ls[off + i], xa + i * (size_t)din);
        rc = psi_mlp_predict(b->mlp[0], xa, B, o);
        for (size_t i = 0; rc == 0 && i < B; i++) {
            hp[off + i] = hs[off + i] * exp(o[2 * i]);
            lp[off + i] = ls[off + i] * exp(o[2 * i + 1]);
        }
    }
    free(o);
    free(xa);
    return rc;
}
