/* Helpers shared by the model tests: latency errors of a model and of the
 * median-slowdown-per-split rule on the rows of a coexec table. Include after
 * testhelp.h. */
#ifndef PS_TEST_MODEL_LIB_H
#define PS_TEST_MODEL_LIB_H

#include "features/features.h"
#include "pairsight.h"
#include "profile/tables.h"

#include <math.h>
#include <stdlib.h>

/* MAPE (%) per side of the model on the rows of cx with split[i] == which
 * (every row when which < 0), composing windows with method. */
static void model_mape_ex(const ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *cx,
                          const unsigned char *split, int which, ps_compose_t method, double out[2])
{
    ps_query_t *q = malloc((cx->n + 1) * sizeof *q);
    const psi_coexec_row_t **r = malloc((cx->n + 1) * sizeof *r);
    size_t n = 0;
    for (size_t i = 0; i < cx->n; i++)
        if (which < 0 || split[i] == which) {
            r[n] = &cx->rows[i];
            q[n++] = psi_query_of_row(&cx->rows[i]);
        }
    double *h = malloc((n + 1) * sizeof *h), *l = malloc((n + 1) * sizeof *l);
    double s[2] = {0, 0};
    CHECK_OK(ps_model_predict_compose(m, ops, q, n, method, h, l, NULL, NULL));
    for (size_t i = 0; i < n; i++) {
        s[0] += fabs(h[i] - r[i]->hp_ns) / r[i]->hp_ns;
        s[1] += fabs(l[i] - r[i]->lp_ns) / r[i]->lp_ns;
    }
    out[0] = n ? 100 * s[0] / (double)n : NAN;
    out[1] = n ? 100 * s[1] / (double)n : NAN;
    free(q);
    free(r);
    free(h);
    free(l);
}

static void model_mape(const ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *cx,
                       const unsigned char *split, int which, double out[2])
{
    model_mape_ex(m, ops, cx, split, which, PS_COMPOSE_OVERLAP, out);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double row_solo(const ps_ops_t *ops, const psi_coexec_row_t *r, int side)
{
    const psi_op_group_t *g =
        psi_ops_find(ops, r->gpu, side ? r->lp_model : r->hp_model, side ? r->lp_batch : r->hp_batch);
    return side ? psi_group_segment_ns(g, r->lp_start, r->lp_len, r->lp_tpcs)
                : psi_group_segment_ns(g, r->hp_start, r->hp_len, r->hp_tpcs);
}

/* The reference rule of the "Done when": predict, for a test row,
 * its standalone latency times the median slowdown of the training rows of
 * the same SM split (hp_tpcs, lp_tpcs); 1 where the split was not trained. */
static void median_rule_mape(const ps_ops_t *ops, const ps_coexec_t *cx, const unsigned char *split,
                             double out[2])
{
    double s[2] = {0, 0};
    size_t n = 0;
    double *buf = malloc((cx->n + 1) * sizeof *buf);
    for (size_t i = 0; i < cx->n; i++) {
        if (split[i] != PS_SPLIT_TEST)
            continue;
        const psi_coexec_row_t *r = &cx->rows[i];
        for (int side = 0; side < 2; side++) {
            size_t k = 0;
            for (size_t j = 0; j < cx->n; j++) {
                const psi_coexec_row_t *t = &cx->rows[j];
                if (split[j] == PS_SPLIT_TRAIN && t->hp_tpcs == r->hp_tpcs && t->lp_tpcs == r->lp_tpcs)
                    buf[k++] = (side ? t->lp_ns : t->hp_ns) / row_solo(ops, t, side);
            }
            qsort(buf, k, sizeof *buf, cmp_double);
            double med = k ? (k % 2 ? buf[k / 2] : 0.5 * (buf[k / 2 - 1] + buf[k / 2])) : 1.0;
            double meas = side ? r->lp_ns : r->hp_ns;
            s[side] += fabs(row_solo(ops, r, side) * med - meas) / meas;
        }
        n++;
    }
    free(buf);
    out[0] = n ? 100 * s[0] / (double)n : NAN;
    out[1] = n ? 100 * s[1] / (double)n : NAN;
}

#endif
