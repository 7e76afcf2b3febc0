/*
 * Segment pairs -> feature vectors: the contract between the segment model
 * (src/model) and the learned baselines (src/evaluate). Implemented in
 * src/features/features.c and src/features/dataset.c.
 *
 * A query (ps_query_t) names an HP and an LP segment of ops.csv and an SM
 * split. Each side becomes up to PS_WINDOW operator tokens, one slot per
 * position; the two sides' tokens are kept apart, never summed (except in
 * the ablation variant that sums them on purpose).
 */
#ifndef PS_FEATURES_H
#define PS_FEATURES_H

#include "pairsight.h"
#include "profile/tables.h"

#define PS_WINDOW 16

/* Version of the feature layout below (psi_feature_layout_t.version). Version
 * 1: per side `window` token slots, operator position order, each token
 * [duration_ns at the side's TPCs, counters of the variant..., present]; the
 * HP tokens, then the LP tokens (only the regressor's own side in
 * PS_FEAT_NO_CORUNNER; one summed token per side in PS_FEAT_SUMMED), then
 * p_tpcs, q_tpcs, hp_solo_ns, lp_solo_ns. A counter that was not measured is
 * NAN (missing for XGBoost); an empty slot is all zeros. */
#define PS_FEATURES_LAYOUT_VERSION 1

/* PS_SIDE_HP, PS_SIDE_LP, ps_feature_variant_t and PS_SPLIT_* are declared in
 * pairsight.h (the public API takes them). */

/* A versioned description of the feature vector, stored with every model so
 * that a model refuses inputs built under another layout. */
typedef struct {
    int version; /* bumped whenever the meaning of any column changes */
    ps_feature_variant_t variant;
    int window;     /* operator slots per side */
    int n_features; /* length of one vector */
} psi_feature_layout_t;

int psi_features_layout(ps_feature_variant_t variant, int window, psi_feature_layout_t *out);
/* A readable name of column i, e.g. "hp.op3.dram_bytes", "lp.present.5",
 * "p_tpcs". Writes into buf and returns it. */
const char *psi_feature_name(const psi_feature_layout_t *l, int i, char *buf, size_t n);

/* The standalone latencies of a query's two segments, each at its side's
 * TPC count (ns): what the feature builders find on the way. */
typedef struct {
    double hp_ns, lp_ns;
} psi_solo_t;

/* Features of one query for the regressor of `side` (PS_SIDE_HP or
 * PS_SIDE_LP) into out[l->n_features]. Segments longer than l->window are an
 * error (window composition splits them first). Fails with a message that
 * names what is missing (model, operator, TPC count). The standalone latency
 * of each side is written to *solo when non-NULL. */
int psi_features_build(const psi_feature_layout_t *l, const ps_ops_t *ops, const ps_query_t *q, int side, float *out,
                       psi_solo_t *solo);

/* The query of one coexec row: its two segments and their TPC counts. */
ps_query_t psi_query_of_row(const psi_coexec_row_t *r);

/* The layout of a batch's vectors and the last segment each side of
 * psi_features_build_pair_memo resolved, with its tokens, so that
 * consecutive queries of a batch that share a side copy them instead of
 * resolving and writing them again: the planner asks for every SM split x
 * LP segment of one HP segment at once, so its HP side repeats across the
 * LP lengths (same split: the tokens are copied) and across the splits (same
 * operators: the profile look-up and the counters are kept, the durations
 * at the new TPC count read again). Each operator's token at a TPC count is
 * made once and copied wherever a later segment holds it (LP windows of one
 * batch overlap). Owned by one thread;
 * psi_features_memo_new (l is copied) / _free. */
typedef struct psi_features_memo psi_features_memo_t;
psi_features_memo_t *psi_features_memo_new(const psi_feature_layout_t *l);
void psi_features_memo_free(psi_features_memo_t *m);

/* psi_features_build_pair under the memo's layout, through the memo (not
 * NULL); the vectors are the same bit for bit. x_lp may be x_hp where the
 * variant gives both sides one vector (all but no-corunner). */
int psi_features_build_pair_memo(psi_features_memo_t *memo, const ps_ops_t *ops, const ps_query_t *q, float *x_hp,
                                 float *x_lp, psi_solo_t *solo);

/* Both sides' vectors at once (x_hp, x_lp: l->n_features each; equal for
 * variants that do not depend on the side), sharing the profile look-ups;
 * the standalone latencies into *solo when non-NULL. */
int psi_features_build_pair(const psi_feature_layout_t *l, const ps_ops_t *ops, const ps_query_t *q, float *x_hp,
                            float *x_lp, psi_solo_t *solo);

/* Whose input column i of the regressor of `side` is: PS_SIDE_HP or
 * PS_SIDE_LP for a token column (with *slot the operator slot, -1 for a
 * summed token), -1 for the global columns (p, q, standalone latencies). */
int psi_feature_owner(const psi_feature_layout_t *l, int side, int i, int *slot);

/*
 * A data set of co-execution samples (one per coexec.csv row), with the
 * experiment each belongs to and its split. Targets are log delta.
 */

typedef struct {
    psi_feature_layout_t layout;
    size_t n;
    float *x_hp, *x_lp;  /* [n * layout.n_features] per side */
    double *y_hp, *y_lp; /* log(measured / standalone) */
    double *hp_solo_ns, *lp_solo_ns;
    double *hp_ns, *lp_ns; /* measured */
    int *experiment;       /* dense experiment index, 0..n_experiments-1 */
    size_t n_experiments;
    unsigned char *split;          /* PS_SPLIT_* per sample, by experiment */
    const psi_coexec_row_t **rows; /* [n] the source rows (borrowed from coexec) */
    size_t n_skipped;              /* coexec rows left out: a segment longer than the window */
} psi_dataset_t;

/* Build a data set; splits are 80/10/10 by experiment, drawn with seed
 * (ps_coexec_split). Rows whose segments exceed the window are left out and
 * counted in n_skipped; a row that names a missing profile is an error that
 * names the row. */
int psi_dataset_build(const psi_feature_layout_t *l, const ps_ops_t *ops, const ps_coexec_t *cx, uint64_t seed,
                      psi_dataset_t **out);
void psi_dataset_free(psi_dataset_t *d);
/* The same without the feature vectors (x_hp and x_lp NULL): every other
 * field as psi_dataset_build fills it, for training that builds the features
 * again in chunks (src/model/train.c) instead of keeping them all. */
int psi_dataset_build_lean(const psi_feature_layout_t *l, const ps_ops_t *ops, const ps_coexec_t *cx, uint64_t seed,
                           psi_dataset_t **out);
/* The feature vector of sample k for side into out[layout.n_features]:
 * copied from x_hp / x_lp, or built again from ops for a lean data set (the
 * same values). Thread-safe. */
int psi_dataset_features(const psi_dataset_t *d, const ps_ops_t *ops, size_t k, int side, float *out);

/* A 64-bit fingerprint of the set of experiment names of the rows of cx
 * whose segments fit in window operators (the rows a data set of that window
 * holds): independent of row order and of the number of runs; never 0.
 * Returns 0 or a negative PS_E_*. */
int psi_coexec_fingerprint(const ps_coexec_t *cx, int window, uint64_t *out);

#endif
