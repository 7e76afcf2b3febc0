/*
 * overlap.csv of FORMATS.md: measured co-runs of operator-group ranges of k
 * processes that start together and share one time (the makespan). Abacus
 * (SC'21) measured about 100,000 of them on an A100; `pairsight import
 * abacus` writes them and `pairsight overlap` learns and scores on them.
 *
 *     psi_overlap_t *t;
 *     if (psi_overlap_load("overlap.csv", &t) == 0) {
 *         for (size_t i = 0; i < t->n; i++)
 *             printf("%s k=%d %.1f us\n", t->exps[i].id, t->exps[i].k, t->exps[i].median_us);
 *         psi_overlap_free(t);
 *     }
 *
 * The loader checks every row (types, ranges, op_end <= model_ops, slots 1..k
 * once each, the experiment's shared columns equal on all its rows) and
 * names FILE:LINE:COLUMN on the first error.
 */
#ifndef PS_PROFILE_OVERLAP_H
#define PS_PROFILE_OVERLAP_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#define PSI_OV_MAX_K 8

typedef struct {
    const char *model; /* interned in the table's pool */
    int batch, seq_len;
    int op_start, op_end, model_ops;
} psi_ov_slot_t;

typedef struct {
    const char *id, *gpu, *setting, *mechanism; /* interned */
    int k;
    psi_ov_slot_t slot[PSI_OV_MAX_K];  /* slot[s - 1] for slots 1..k */
    double median_us, mean_us, std_us; /* mean and std NAN where not given */
    size_t line;                       /* line of its first row, for messages */
} psi_ov_exp_t;

typedef struct psi_strpool psi_strpool_t;

/* The public ps_overlap_t (include/pairsight_overlap.h) is this struct. */
typedef struct ps_overlap {
    psi_ov_exp_t *exps; /* in first-seen order */
    size_t n, cap;
    psi_strpool_t *pool;
} psi_overlap_t;

/* The header's columns, in order (mean_us and std_us optional). */
extern const char *const psi_overlap_columns[];

/* ps_table_is_overlap (public): whether a file is an overlap.csv. */

/* Read and check path; *out owns everything (psi_overlap_free). */
int psi_overlap_load(const char *path, psi_overlap_t **out);

/* An empty table to fill with psi_overlap_add (strings are copied). */
psi_overlap_t *psi_overlap_new(void);
int psi_overlap_add(psi_overlap_t *t, const psi_ov_exp_t *e);
void psi_overlap_free(psi_overlap_t *t);

/* Write t to path atomically (temp file, fsync, rename), numbers in the C
 * locale. */
int psi_overlap_save(const psi_overlap_t *t, const char *path);

/* Active slots: those whose range is not empty. */
int psi_ov_active(const psi_ov_exp_t *e);

#endif
