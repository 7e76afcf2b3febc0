/*
 * Selection policies and their scores (`pairsight colocate eval` and
 * auto's cross-validation; the evaluation itself is eval.c).
 *
 * KACE's metric (Han et al., SoCC'24, section 4): for a target workload and
 * its candidate co-locations, a policy's score is
 *
 *     score = T(picked) / max_c T(c),   T(c) = sum of c's measured throughputs,
 *
 * averaged over the targets that have at least two candidates. Random is the
 * mean of T(c) / max T over the candidates. Rule policies look only at the
 * co-runners (the co-location's workloads less one occurrence of the target);
 * ties go to the candidate listed first.
 */
#include "colocate/colocate.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The rule policies; a kind's policy is named as the kind. */
static const char *const rule_names[PS_POL_KINDS] = {"oracle", "random", "memcap", "sm", "mem", "best_rule"};

const char *ps_coloc_policy_name(ps_coloc_policy_t p)
{
    if ((unsigned)p < PS_POL_KINDS)
        return rule_names[p];
    return (unsigned)p < PS_POL_COUNT ? ps_coloc_kind_name((ps_coloc_kind_t)(p - PS_POL_KINDS)) : "unknown";
}

double psi_cl_coloc_sum(const cl_coloc_t *c)
{
    double s = 0;
    for (int i = 0; i < c->k; i++)
        s += c->tput[i];
    return s;
}

int psi_cl_coloc_holds(const cl_coloc_t *c, int w)
{
    for (int i = 0; i < c->k; i++)
        if (c->w[i] == w)
            return 1;
    return 0;
}

/* A rule's value of candidate c for target t: total memcap, mean SM busy or
 * mean memory busy of the co-runners. NAN when a co-runner lacks it. */
static double rule_value(const cl_data_t *d, const cl_coloc_t *c, int t, int metric, int mean)
{
    double s = 0;
    int n = 0, skipped = 0;
    for (int i = 0; i < c->k; i++) {
        if (c->w[i] == t && !skipped) {
            skipped = 1;
            continue;
        }
        s += d->w[c->w[i]].f[metric];
        n++;
    }
    return n ? (mean ? s / n : s) : NAN;
}

/* Index into cand of the best value (lowest when sign = +1, highest when -1),
 * first one on ties, NAN values last. */
static int argbest(const double *v, int n, int sign)
{
    int b = -1;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]) && (b < 0 || sign * v[i] < sign * v[b]))
            b = i;
    return b < 0 ? 0 : b;
}

/*
 * Score every policy for target t over candidates cand[n] (indices of
 * complete co-locations). pred[k] is NULL for a kind not run, else the
 * predicted sums indexed by co-location. Adds each policy's score to acc.
 */
static void score_target(const cl_data_t *d, int t, const int *cand, int n, double *const *pred, double *acc)
{
    double best = -INFINITY, mean = 0, v[n > 0 ? n : 1];
    for (int i = 0; i < n; i++) {
        double s = psi_cl_coloc_sum(&d->c[cand[i]]);
        best = s > best ? s : best;
        mean += s / n;
    }
    acc[PS_POL_ORACLE] += 1.0;
    acc[PS_POL_RANDOM] += mean / best;
    static const struct {
        int pol, metric, mean, sign;
    } rules[] = {{PS_POL_MEMCAP, CW_MEMCAP, 0, +1}, {PS_POL_SM, CW_SM_BUSY, 1, -1}, {PS_POL_MEM, CW_MEM_BUSY, 1, +1}};
    double best_rule = 0;
    for (unsigned r = 0; r < 3; r++) {
        if (!d->has[rules[r].metric])
            continue; /* dropped: no workload has the metric */
        for (int i = 0; i < n; i++)
            v[i] = rule_value(d, &d->c[cand[i]], t, rules[r].metric, rules[r].mean);
        double s = psi_cl_coloc_sum(&d->c[cand[argbest(v, n, rules[r].sign)]]) / best;
        acc[rules[r].pol] += s;
        best_rule = s > best_rule ? s : best_rule;
    }
    acc[PS_POL_BEST_RULE] += best_rule;
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        if (!pred[k])
            continue;
        for (int i = 0; i < n; i++)
            v[i] = pred[k][cand[i]];
        acc[PS_POL_OF_KIND(k)] += psi_cl_coloc_sum(&d->c[cand[argbest(v, n, -1)]]) / best;
    }
}

/* Score the targets of mask_targets (NULL = every workload) over the
 * complete co-locations flagged in is_cand (k-way only when kk > 0).
 * Returns the number of targets. */
int psi_cl_score_policies(const cl_data_t *d, const char *is_cand, const char *targets, int kk, double *const *pred,
                          double *acc)
{
    int *cand = psi_malloc((size_t)d->nc * sizeof *cand + 1), nt = 0;
    if (!cand)
        return -1;
    for (int t = 0; t < d->nw; t++) {
        if (targets && !targets[t])
            continue;
        int n = 0;
        for (int i = 0; i < d->nc; i++)
            if (is_cand[i] && d->c[i].complete && psi_cl_coloc_holds(&d->c[i], t) && (kk <= 0 || d->c[i].k == kk))
                cand[n++] = i;
        if (n < 2)
            continue;
        score_target(d, t, cand, n, pred, acc);
        nt++;
    }
    free(cand);
    return nt;
}

int ps_coloc_rules(const ps_workloads_t *w, const ps_colocations_t *c, double *out_score, int *out_targets)
{
    cl_data_t *d = NULL;
    int rc = psi_cl_data_build(w, NULL, c, NULL, &d);
    if (rc)
        return rc;
    char *all = psi_malloc((size_t)d->nc + 1);
    double acc[PS_POL_COUNT] = {0};
    double *pred[PS_COLOC_KIND_COUNT] = {0};
    if (!all) {
        psi_cl_data_free(d);
        return PS_E_NOMEM;
    }
    memset(all, 1, (size_t)d->nc);
    int nt = psi_cl_score_policies(d, all, NULL, 0, pred, acc);
    for (int p = 0; p < PS_POL_COUNT; p++)
        out_score[p] = p <= PS_POL_BEST_RULE && nt > 0 ? acc[p] / nt : NAN;
    *out_targets = nt;
    free(all);
    psi_cl_data_free(d);
    if (nt < 0)
        return PS_E_NOMEM;
    return nt > 0 ? 0 : psi_error(PS_E_INPUT, "colocate: no target has two measured candidates");
}
