/*
 * A small multilayer perceptron with its own trainer on OpenBLAS (minibatch
 * Adam, mean squared error, early stopping on a held-out share of the
 * training rows). Used by the Abacus-style and PairSight-MLP baselines and
 * by the KACE MLP of src/colocate. docs/evaluation.md says why this trainer
 * and not FANN.
 *
 * Inputs and targets are standardized inside: callers pass raw rows.
 */
#ifndef PS_MODEL_MLP_H
#define PS_MODEL_MLP_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#define PS_MLP_MAX_LAYERS 4

typedef struct {
    int hidden[PS_MLP_MAX_LAYERS - 1]; /* hidden layer widths; 0 ends the list */
    int epochs;                        /* at most this many passes */
    int batch;                         /* minibatch rows */
    double lr;                         /* Adam step size */
    double weight_decay;               /* L2 penalty on weights */
    double valid_share;                /* share of rows held out for early stopping */
    size_t valid_tail;                 /* > 0: the last valid_tail rows are the early-stopping
                                          rows (whole experiments, chosen by the caller)
                                          instead of a random valid_share of the rows */
    int patience;                      /* epochs without improvement before stopping */
    double max_seconds;                /* wall-clock cap on training (0 = none) */
    int tanh_hidden;                   /* 1: tanh hidden units, 0: ReLU */
    uint64_t seed;
} psi_mlp_params_t;

/* Three layers of weights (two hidden layers of 64), ReLU, 100 epochs,
 * batch 32, lr 1e-3, weight decay 1e-3, 10% early-stopping rows, patience 20
 * (the validation loss of small campaigns is noisy: a shorter patience stops
 * before the best epoch; see docs/evaluation.md). */
psi_mlp_params_t psi_mlp_default_params(void);

typedef struct psi_mlp psi_mlp_t;

/* Training rows, borrowed: n rows of n_in inputs, row i at x + i * n_in
 * (NAN counts as 0), and of n_out targets, row i at y + i * n_out. */
typedef struct {
    const float *x;
    const double *y;
    size_t n;
    int n_in, n_out;
} psi_mlp_rows_t;

/* Train on the rows r. *out owns its memory; release with psi_mlp_free. */
int psi_mlp_train(const psi_mlp_rows_t *r, const psi_mlp_params_t *p, psi_mlp_t **out);

/* Predict n rows into out[n * n_out] (caller-owned). Thread-safe. */
int psi_mlp_predict(const psi_mlp_t *m, const float *x, size_t n, double *out);

int psi_mlp_n_in(const psi_mlp_t *m);
int psi_mlp_n_out(const psi_mlp_t *m);
int psi_mlp_epochs_run(const psi_mlp_t *m);
void psi_mlp_free(psi_mlp_t *m);

/* The network as text (its layer widths, activation, scaling and every
 * weight; floats with %.9g and doubles with %.17g, so that a load gives the
 * same predictions): 0, or -1 when f failed. */
int psi_mlp_save(const psi_mlp_t *m, FILE *f);

/* A network written by psi_mlp_save, read from f: PS_OK, PS_E_NOMEM, or -1
 * for text that is not such a network (the caller names the file). */
int psi_mlp_load(FILE *f, psi_mlp_t **out);

#endif
