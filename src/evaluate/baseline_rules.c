/*
 * The linear rules: intensity_rule (factors from single-operator
 * characterization), intensity_rule_fit (the same form, least squares) and
 * fixed_cost (plus a constant and a per-operator cost). One formula,
 *   T_share = sum_c f[side][c] t_c (+ a + b * len),
 * three ways to fit it; the formulas are written out in baselines.c.
 */
#include "evaluate/baseline_internal.h"

#include "common/common.h"
#include "common/linalg.h"

#include <stdlib.h>

/* The columns of one side of a query: standalone time per class, then the
 * constant and the operator count (in RULE_UNIT_NS). */
static int rule_columns(const ps_ops_t *ops, const ps_query_t *q, int side, double col[N_COLS])
{
    int rc = psi_bl_segment_by_class(ops, q, side, col);
    col[COL_FIXED] = RULE_UNIT_NS;
    col[COL_PER_OP] = RULE_UNIT_NS * (side == PS_SIDE_HP ? q->hp_len : q->lp_len);
    return rc;
}

static double rule_predict(const double f[N_COLS], const double col[N_COLS])
{
    double t = 0;
    for (int c = 0; c < N_COLS; c++)
        t += f[c] * col[c];
    return t;
}

/* Minimize sum_i ((sum_c f_c col_ic - y_i) / y_i)^2 over the first n_cols
 * factors: the normal equations of the rows col_i / y_i against 1. A class
 * absent from training keeps f = 1 (the constant and per-operator terms 0). */
int psi_bl_fit_rule(ps_baseline_t *b, const ps_ops_t *ops, const psi_dataset_t *d, const unsigned char *use, int n_cols)
{
    double ata[2][N_COLS][N_COLS] = {{{0}}}, atb[2][N_COLS] = {{0}};
    for (size_t i = 0; i < d->n; i++) {
        if (use[i] != ROLE_FIT)
            continue;
        ps_query_t q = psi_query_of_row(d->rows[i]);
        for (int s = 0; s < 2; s++) {
            double t[N_COLS];
            int rc = rule_columns(ops, &q, s, t);
            if (rc != 0)
                return rc;
            double y = s == PS_SIDE_HP ? d->hp_ns[i] : d->lp_ns[i];
            for (int r = 0; r < n_cols; r++) {
                atb[s][r] += t[r] / y;
                for (int c = 0; c < n_cols; c++)
                    ata[s][r][c] += t[r] * t[c] / (y * y);
            }
        }
    }
    for (int s = 0; s < 2; s++) {
        int present[N_COLS], k = 0;
        for (int c = 0; c < n_cols; c++)
            if (ata[s][c][c] > 0)
                present[k++] = c;
        for (int c = 0; c < N_COLS; c++)
            b->factor[s][c] = c < N_CLS ? 1 : 0;
        if (k == 0)
            continue;
        double a[N_COLS * N_COLS], x[N_COLS];
        for (int r = 0; r < k; r++) {
            x[r] = atb[s][present[r]];
            for (int c = 0; c < k; c++)
                a[r * k + c] = ata[s][present[r]][present[c]] * (r == c ? 1 + 1e-12 : 1);
        }
        int rc = psi_solve_sym(a, x, k, 0, "linear rule");
        if (rc != 0)
            return rc;
        for (int r = 0; r < k; r++)
            b->factor[s][present[r]] = x[r];
    }
    return 0;
}

/* The intensity rule's factors from single-operator characterization: per
 * side and class, the median delta of the used co-executions whose segment on
 * that side is one operator of that class (the paper's Fig. 1c measures
 * exactly these). A class with fewer than CHAR_MIN_SAMPLES such samples takes
 * the median delta of the segments it dominates; a class never seen keeps 1. */
int psi_bl_fit_characterized(ps_baseline_t *b, const ps_ops_t *ops, const psi_dataset_t *d, const unsigned char *use)
{
    size_t n = d->n ? d->n : 1;
    double *single = psi_malloc(n * sizeof *single), *dom = psi_malloc(n * sizeof *dom);
    int rc = single && dom ? 0 : PS_E_NOMEM;
    for (int s = 0; rc == 0 && s < 2; s++) {
        for (int c = 0; c < N_CLS; c++) {
            size_t ns = 0, nd = 0;
            for (size_t i = 0; rc == 0 && i < d->n; i++) {
                if (use[i] != ROLE_FIT)
                    continue;
                ps_query_t q = psi_query_of_row(d->rows[i]);
                double t[N_CLS];
                if ((rc = psi_bl_segment_by_class(ops, &q, s, t)) != 0)
                    break;
                if (psi_bl_dominant_class(t) != c)
                    continue;
                double delta = s == PS_SIDE_HP ? d->hp_ns[i] / d->hp_solo_ns[i] : d->lp_ns[i] / d->lp_solo_ns[i];
                dom[nd++] = delta;
                if ((s == PS_SIDE_HP ? q.hp_len : q.lp_len) == 1)
                    single[ns++] = delta;
            }
            b->factor[s][c] = ns >= CHAR_MIN_SAMPLES ? psi_median(single, ns) : nd ? psi_median(dom, nd) : 1;
        }
        b->factor[s][COL_FIXED] = b->factor[s][COL_PER_OP] = 0;
    }
    free(single);
    free(dom);
    return rc;
}

/* The rule methods: one factor per intensity class and side (and the fixed
 * costs), applied to the query's class columns. */
int psi_bl_predict_rules(const ps_baseline_t *b, const ps_ops_t *ops, const ps_query_t *q, size_t n, double *hp,
                         double *lp)
{
    for (size_t i = 0; i < n; i++) {
        double t[N_COLS];
        int rc = rule_columns(ops, &q[i], PS_SIDE_HP, t);
        if (rc != 0)
            return rc;
        hp[i] = rule_predict(b->factor[0], t);
        if ((rc = rule_columns(ops, &q[i], PS_SIDE_LP, t)) != 0)
            return rc;
        lp[i] = rule_predict(b->factor[1], t);
    }
    return 0;
}
