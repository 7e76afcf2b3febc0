/*
 * Selection policies and the evaluation of `pairsight colocate eval`.
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

static const char *const policy_names[PS_POL_COUNT] = {
    "oracle", "random", "memcap", "sm", "mem", "best_rule",
    "kace_lr", "kace_rf", "kace_mlp", "xu_rf", "ratio", "mps"};

const char *ps_coloc_policy_name(ps_coloc_policy_t p)
{
    return (unsigned)p < PS_POL_COUNT ? policy_names[p] : "unknown";
}

static double coloc_sum(const cl_coloc_t *c)
{
    double s = 0;
    for (int i = 0; i < c->k; i++)
        s += c->tput[i];
    return s;
}

static int holds(const cl_coloc_t *c, int w)
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
static void score_target(const cl_data_t *d, int t, const int *cand, int n, double *const *pred,
                         double *acc)
{
    double best = -INFINITY, mean = 0, v[n > 0 ? n : 1];
    for (int i = 0; i < n; i++) {
        double s = coloc_sum(&d->c[cand[i]]);
        best = s > best ? s : best;
        mean += s / n;
    }
    acc[PS_POL_ORACLE] += 1.0;
    acc[PS_POL_RANDOM] += mean / best;
    static const struct { int pol, metric, mean, sign; } rules[] = {
        {PS_POL_MEMCAP, CW_MEMCAP, 0, +1},
        {PS_POL_SM, CW_SM_BUSY, 1, -1},
        {PS_POL_MEM, CW_MEM_BUSY, 1, +1}};
    double best_rule = 0;
    for (unsigned r = 0; r < 3; r++) {
        for (int i = 0; i < n; i++)
            v[i] = rule_value(d, &d->c[cand[i]], t, rules[r].metric, rules[r].mean);
        double s = coloc_sum(&d->c[cand[argbest(v, n, rules[r].sign)]]) / best;
        acc[rules[r].pol] += s;
        best_rule = s > best_rule ? s : best_rule;
    }
    acc[PS_POL_BEST_RULE] += best_rule;
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        if (!pred[k])
            continue;
        for (int i = 0; i < n; i++)
            v[i] = pred[k][cand[i]];
        acc[PS_POL_KACE_LR + k] += coloc_sum(&d->c[cand[argbest(v, n, -1)]]) / best;
    }
}

/* Score the targets of mask_targets (NULL = every workload) over the
 * complete co-locations flagged in is_cand. Returns the number of targets. */
static int score_policies(const cl_data_t *d, const char *is_cand, const char *targets,
                          double *const *pred, double *acc)
{
    int *cand = ps_malloc((size_t)d->nc * sizeof *cand + 1), nt = 0;
    if (!cand)
        return -1;
    for (int t = 0; t < d->nw; t++) {
        if (targets && !targets[t])
            continue;
        int n = 0;
        for (int i = 0; i < d->nc; i++)
            if (is_cand[i] && d->c[i].complete && holds(&d->c[i], t))
                cand[n++] = i;
        if (n < 2)
            continue;
        score_target(d, t, cand, n, pred, acc);
        nt++;
    }
    free(cand);
    return nt;
}

int ps_coloc_rules(const ps_workloads_t *w, const ps_colocations_t *c, double *out_score,
                   int *out_targets)
{
    cl_data_t *d = NULL;
    int rc = cl_data_build(w, NULL, c, NULL, &d);
    if (rc)
        return rc;
    char *all = ps_malloc((size_t)d->nc + 1);
    double acc[PS_POL_COUNT] = {0};
    double *pred[PS_COLOC_KIND_COUNT] = {0};
    if (!all) {
        cl_data_free(d);
        return PS_E_NOMEM;
    }
    memset(all, 1, (size_t)d->nc);
    int nt = score_policies(d, all, NULL, pred, acc);
    for (int p = 0; p < PS_POL_COUNT; p++)
        out_score[p] = p <= PS_POL_BEST_RULE && nt > 0 ? acc[p] / nt : NAN;
    *out_targets = nt;
    free(all);
    cl_data_free(d);
    if (nt < 0)
        return PS_E_NOMEM;
    return nt > 0 ? 0 : ps_error(PS_E_INPUT, "colocate: no target has two measured candidates");
}

ps_coloc_eval_params_t ps_coloc_eval_default_params(void)
{
    ps_coloc_eval_params_t p = {.train_frac = 0.2, .seeds = 20, .seed = 0, .unseen = 0,
                                .test = NULL, .kinds = (1u << PS_COLOC_KIND_COUNT) - 1,
                                .model = ps_coloc_default_params()};
    return p;
}

/* Running error sums of one predictor in one run. */
typedef struct {
    double n, sy, syy, sse, sape;
} errsum_t;

static void err_add(errsum_t *e, double y, double yhat)
{
    e->n++;
    e->sy += y;
    e->syy += y * y;
    e->sse += (y - yhat) * (y - yhat);
    e->sape += fabs(y - yhat) / y;
}

/* A fold: which co-locations train, which are tested, whose targets count. */
typedef struct {
    int *train, n_train;
    char *test;    /* [nc] */
    char *targets; /* [nw], NULL = all */
} fold_t;

static void folds_free(fold_t *f, int n)
{
    for (int q = 0; q < n; q++) {
        free(f[q].train);
        free(f[q].test);
        free(f[q].targets);
    }
    free(f);
}

/* Fit every requested kind on the fold, predict its test co-locations, and
 * add errors and policy scores. */
static int run_fold(const cl_data_t *d, const ps_coloc_eval_params_t *p, uint64_t seed,
                    const fold_t *f, errsum_t *err, double *acc, int *n_targets)
{
    double *pred[PS_COLOC_KIND_COUNT] = {0};
    double slot[64];
    int rc = 0, complete = 0;
    for (int i = 0; i < f->n_train; i++)
        complete += d->c[f->train[i]].complete;
    for (int k = 0; k < PS_COLOC_KIND_COUNT && !rc; k++) {
        if (!(p->kinds & (1u << k)))
            continue;
        /* Data that measured only the targets' throughputs have no sums to
         * learn: the sum predictors sit such a fold out. */
        if (!complete && ps_coloc_kind_predicts_sum((ps_coloc_kind_t)k))
            continue;
        ps_coloc_params_t mp = p->model;
        mp.kind = (ps_coloc_kind_t)k;
        mp.seed = seed;
        ps_coloc_model_t *m = NULL;
        if ((rc = cl_model_fit(d, f->train, f->n_train, &mp, &m)))
            break;
        pred[k] = ps_malloc((size_t)d->nc * sizeof *pred[k] + 1);
        if (!pred[k]) {
            ps_coloc_model_free(m);
            rc = PS_E_NOMEM;
            break;
        }
        for (int i = 0; i < d->nc && !rc; i++) {
            pred[k][i] = NAN;
            if (!f->test[i])
                continue;
            const cl_coloc_t *c = &d->c[i];
            if ((rc = cl_model_predict(m, d, i, slot, &pred[k][i])))
                break;
            if (ps_coloc_kind_predicts_sum(mp.kind)) {
                if (c->complete)
                    err_add(&err[k], coloc_sum(c), pred[k][i]);
            } else {
                for (int s = 0; s < c->k; s++)
                    if (!isnan(c->tput[s]))
                        err_add(&err[k], c->tput[s], slot[s]);
            }
        }
        ps_coloc_model_free(m);
    }
    if (!rc) {
        int nt = score_policies(d, f->test, f->targets, pred, acc);
        if (nt < 0)
            rc = PS_E_NOMEM;
        else
            *n_targets += nt;
    }
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        free(pred[k]);
    return rc;
}

/* The folds of one run. Random split: one fold. Unseen: one per model group.
 * Test table: one per workload set of the second table. */
static int make_folds(const cl_data_t *d, const ps_coloc_eval_params_t *p, uint64_t seed,
                      fold_t **out, int *n_out)
{
    int nf = 0, cap = 1;
    const char **groups = NULL;
    int *sets = NULL;
    if (p->unseen) {
        groups = ps_calloc((size_t)d->nw + 1, sizeof *groups);
        if (!groups)
            return PS_E_NOMEM;
        for (int w = 0; w < d->nw; w++) {
            int used = 0, seen = 0;
            for (int i = 0; i < d->nc && !used; i++)
                used = holds(&d->c[i], w);
            for (int g = 0; g < nf && used && !seen; g++)
                seen = strcmp(groups[g], d->w[w].group) == 0;
            if (used && !seen)
                groups[nf++] = d->w[w].group;
        }
        cap = nf;
    } else if (p->test) {
        sets = ps_calloc((size_t)d->n_sets + 1, sizeof *sets);
        if (!sets)
            return PS_E_NOMEM;
        for (int i = 0; i < d->nc; i++)
            if (d->c[i].origin == 1)
                sets[d->c[i].set] = 1;
        for (int s = 0; s < d->n_sets; s++)
            if (sets[s])
                sets[nf++] = s;
        cap = nf;
    } else {
        nf = 1;
    }
    fold_t *f = ps_calloc((size_t)cap + 1, sizeof *f);
    if (!f) {
        free(groups);
        free(sets);
        return PS_E_NOMEM;
    }
    int rc = 0;
    for (int q = 0; q < nf && !rc; q++) {
        f[q].train = ps_malloc((size_t)d->nc * sizeof *f[q].train + 1);
        f[q].test = ps_calloc((size_t)d->nc + 1, 1);
        if (p->unseen)
            f[q].targets = ps_calloc((size_t)d->nw + 1, 1);
        if (!f[q].train || !f[q].test || (p->unseen && !f[q].targets)) {
            rc = PS_E_NOMEM;
            break;
        }
        if (p->unseen) {
            for (int w = 0; w < d->nw; w++)
                f[q].targets[w] = strcmp(d->w[w].group, groups[q]) == 0;
            for (int i = 0; i < d->nc; i++) {
                int in = 0;
                for (int s = 0; s < d->c[i].k; s++)
                    in |= f[q].targets[d->c[i].w[s]];
                f[q].test[i] = (char)in;
                if (!in)
                    f[q].train[f[q].n_train++] = i;
            }
        } else if (p->test) {
            for (int i = 0; i < d->nc; i++) {
                if (d->c[i].set == sets[q]) {
                    f[q].test[i] = d->c[i].origin == 1;
                } else if (!(p->test_alone && d->c[i].origin == 1)) {
                    f[q].train[f[q].n_train++] = i;
                }
            }
        } else {
            /* Fisher-Yates shuffle, then the first round(frac * n) train. */
            int n = d->nc;
            int *perm = f[q].train;
            for (int i = 0; i < n; i++)
                perm[i] = i;
            uint64_t st = seed;
            for (int i = n - 1; i > 0; i--) {
                int j = (int)(ps_splitmix64(&st) % (uint64_t)(i + 1));
                int t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
            int nt = (int)floor(p->train_frac * n + 0.5);
            nt = nt < 1 ? 1 : nt > n - 1 ? n - 1 : nt;
            for (int i = nt; i < n; i++)
                f[q].test[perm[i]] = 1;
            f[q].n_train = nt;
        }
    }
    free(groups);
    free(sets);
    if (rc) {
        folds_free(f, nf);
        return rc;
    }
    *out = f;
    *n_out = nf;
    return 0;
}

int ps_coloc_eval(const ps_workloads_t *w, const ps_scaling_t *scaling, const ps_colocations_t *c,
                  const ps_coloc_eval_params_t *p, ps_coloc_eval_result_t *out)
{
    if (!p || p->seeds < 1 || (!p->unseen && !p->test && !(p->train_frac > 0 && p->train_frac < 1)))
        return ps_error(PS_E_ARG, "colocate eval: need seeds >= 1 and 0 < train_frac < 1");
    cl_data_t *d = NULL;
    int rc = cl_data_build(w, scaling, c, p->test, &d);
    if (rc)
        return rc;
    memset(out, 0, sizeof *out);
    double r2[PS_COLOC_KIND_COUNT] = {0}, rmse[PS_COLOC_KIND_COUNT] = {0}, mape[PS_COLOC_KIND_COUNT] = {0};
    int nerr[PS_COLOC_KIND_COUNT] = {0};
    double psum[PS_POL_COUNT] = {0}, psq[PS_POL_COUNT] = {0};
    int runs = 0, scored = 0; /* runs, and runs with a scored target */
    double targets = 0;
    for (int r = 0; r < p->seeds && !rc; r++) {
        uint64_t seed = p->seed + (uint64_t)r;
        fold_t *f = NULL;
        int nf = 0;
        if ((rc = make_folds(d, p, seed, &f, &nf)))
            break;
        errsum_t err[PS_COLOC_KIND_COUNT];
        memset(err, 0, sizeof err);
        double acc[PS_POL_COUNT] = {0};
        int nt = 0;
        for (int q = 0; q < nf && !rc; q++) {
            rc = run_fold(d, p, seed, &f[q], err, acc, &nt);
            if (p->progress)
                p->progress("colocate eval", (double)r * nf + q + 1, (double)p->seeds * nf, p->progress_user);
        }
        folds_free(f, nf);
        if (rc)
            break;

        for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
            errsum_t *e = &err[k];
            if (e->n < 1)
                continue;
            double sst = e->syy - e->sy * e->sy / e->n;
            r2[k] += sst > 0 ? 1 - e->sse / sst : NAN;
            rmse[k] += sqrt(e->sse / e->n);
            mape[k] += 100 * e->sape / e->n;
            nerr[k]++;
        }
        for (int q = 0; q < PS_POL_COUNT && nt > 0; q++) {
            double v = acc[q] / nt;
            psum[q] += v;
            psq[q] += v * v;
        }
        targets += nt;
        scored += nt > 0;
        runs++;
    }
    cl_data_free(d);
    if (rc)
        return rc;
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        out->r2[k] = nerr[k] ? r2[k] / nerr[k] : NAN;
        out->rmse[k] = nerr[k] ? rmse[k] / nerr[k] : NAN;
        out->mape[k] = nerr[k] ? mape[k] / nerr[k] : NAN;
    }
    /* A policy is reported when it scored in every run with targets (a sum
     * predictor without complete co-locations to learn from does not). */
    for (int q = 0; q < PS_POL_COUNT; q++) {
        int ran = scored > 0 && (q <= PS_POL_BEST_RULE || (p->kinds & (1u << (q - PS_POL_KACE_LR))));
        if (q > PS_POL_BEST_RULE && !(nerr[q - PS_POL_KACE_LR] == runs))
            ran = 0;
        double m = ran ? psum[q] / scored : NAN;
        out->policy_mean[q] = m;
        out->policy_sd[q] = ran ? (scored > 1 ? sqrt(fmax(0, (psq[q] - scored * m * m) / (scored - 1))) : 0) : NAN;
    }
    out->targets = targets / runs;
    out->runs = runs;
    return 0;
}
