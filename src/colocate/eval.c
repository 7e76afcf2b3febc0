/*
 * The evaluation of `pairsight colocate eval` (colocate.h): folds, every
 * kind and auto fitted per fold, errors and the policies' scores (score.c)
 * summed over seeds.
 */
#include "colocate/colocate.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ps_coloc_eval_params_t ps_coloc_eval_default_params(void)
{
    ps_coloc_eval_params_t p = {.train_frac = 0.2,
                                .seeds = 20,
                                .seed = 0,
                                .unseen = 0,
                                .test = NULL,
                                .kinds = (1u << PS_COLOC_KIND_COUNT) - 1,
                                .auto_kinds = 0,
                                .model = ps_coloc_default_params()};
    return p;
}

/* Running error sums of one predictor in one run. */
typedef struct {
    double n, sy, syy, sse, sape, stape, ntime;
} errsum_t;

static void err_add(errsum_t *e, double y, double yhat)
{
    e->n++;
    e->sy += y;
    e->syy += y * y;
    e->sse += (y - yhat) * (y - yhat);
    e->sape += fabs(y - yhat) / y;
}

/* The error of a workload's iteration time batch / tput: |y / yhat - 1|. */
static void err_time(errsum_t *e, double y, double yhat)
{
    e->ntime++;
    e->stape += fabs(y / yhat - 1);
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

/* Which policies this data set cannot run: rules whose metric no workload
 * has, and Xu et al. without any system metric. Bit mask over policies. */
static unsigned dropped_policies(const cl_data_t *d)
{
    unsigned m = 0;
    if (!d->has[CW_MEMCAP])
        m |= 1u << PS_POL_MEMCAP;
    if (!d->has[CW_SM_BUSY])
        m |= 1u << PS_POL_SM;
    if (!d->has[CW_MEM_BUSY])
        m |= 1u << PS_POL_MEM;
    if (!d->has[CW_MEMCAP] && !d->has[CW_SM_BUSY] && !d->has[CW_MEM_BUSY])
        m |= 1u << PS_POL_BEST_RULE | 1u << PS_POL_XU_RF;
    return m;
}

/* Per-run accumulators of one fold set; alt[r][kk] is auto's score under
 * rule r (kk = 0: all k), over the same targets. */
typedef struct {
    double acc[PS_POL_COUNT];
    double acc_k[PS_COLOC_MAXK + 1][PS_POL_COUNT];
    int nt, nt_k[PS_COLOC_MAXK + 1];
    double alt[PS_COLOC_AUTO_RULES][PS_COLOC_MAXK + 1];
} polsum_t;

/* m's predictions of the fold's test co-locations into pred[nc] (NAN
 * elsewhere), adding its errors to e (of the sum for sum kinds, else of
 * each workload's throughput and time). */
static int predict_test(const cl_data_t *d, const fold_t *f, const ps_coloc_model_t *m, errsum_t *e, double *pred)
{
    double slot[64];
    int by_sum = ps_coloc_kind_predicts_sum(ps_coloc_model_kind(m)), rc = 0;
    for (int i = 0; i < d->nc && !rc; i++) {
        pred[i] = NAN;
        if (!f->test[i])
            continue;
        const cl_coloc_t *c = &d->c[i];
        if ((rc = psi_cl_model_predict(m, d, i, slot, &pred[i])) || !e)
            continue;
        if (by_sum) {
            if (c->complete)
                err_add(e, psi_cl_coloc_sum(c), pred[i]);
            continue;
        }
        for (int s = 0; s < c->k; s++)
            if (!isnan(c->tput[s])) {
                err_add(e, c->tput[s], slot[s]);
                err_time(e, c->tput[s], slot[s]);
            }
    }
    return rc;
}

/* One fold of one seed's run: the data, the evaluation's parameters, the
 * fold, the seed's error sums err[kind] and the result (auto's choices and
 * weights), both added to; then what the kinds fitted on the fold leave:
 * each kind's test predictions pred[kind][nc] (NULL where it sat out), its
 * model keep[kind], and auto's test sums under each rule alt[rule][nc]. */
typedef struct {
    const cl_data_t *d;
    const ps_coloc_eval_params_t *p;
    const fold_t *f;
    errsum_t *err;
    ps_coloc_eval_result_t *out;
    double *pred[PS_COLOC_KIND_COUNT];
    ps_coloc_model_t *keep[PS_COLOC_KIND_COUNT];
    double *alt[PS_COLOC_AUTO_RULES];
} fold_run_t;

/* The test sums of auto under rule r (not p's own) into alt[nc]: from the
 * fold's predictions of the kinds it uses (fr->pred[kind]) where they all
 * ran, else from its model refitted on the fold. */
static int rule_sums(const fold_run_t *fr, const ps_coloc_params_t *mp, const cl_auto_choice_t *ch, int r, double *alt)
{
    const cl_data_t *d = fr->d;
    const fold_t *f = fr->f;
    double *const *all = fr->pred;
    double one[PS_COLOC_KIND_COUNT] = {0};
    const double *w = r == PS_COLOC_AUTO_WITHIN ? ch->w_within : r == PS_COLOC_AUTO_BLEND ? ch->w : one;
    int have_all = 1;
    one[ch->pick] = 1;
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        have_all &= !(w[k] > 0) || all[k] != NULL;
    if (!have_all) {
        ps_coloc_model_t *m = NULL;
        int rc = psi_cl_auto_build(&(cl_train_t){d, f->train, f->n_train}, mp, ch, r, NULL, &m);
        if (!rc)
            rc = predict_test(d, f, m, NULL, alt);
        ps_coloc_model_free(m);
        return rc;
    }
    for (int i = 0; i < d->nc; i++) {
        alt[i] = f->test[i] ? 0 : NAN;
        for (int k = 0; k < PS_COLOC_KIND_COUNT && f->test[i]; k++)
            if (w[k] > 0)
                alt[i] += w[k] * all[k][i];
    }
    return 0;
}

/* auto on the fold: cross-validation on its training co-locations, the
 * model of p's rule into fr->pred[auto] (with errors), every rule's test
 * sums into fr->alt[rule] (p's own: the same as pred); the other kinds'
 * models of this fold are taken from fr->keep, their test sums are
 * fr->pred[kind]. */
static int auto_fold(fold_run_t *fr, const ps_coloc_params_t *mp)
{
    const cl_data_t *d = fr->d;
    const ps_coloc_eval_params_t *p = fr->p;
    const fold_t *f = fr->f;
    ps_coloc_eval_result_t *out = fr->out;
    double *pred = fr->pred[PS_COLOC_AUTO];
    unsigned cand = psi_cl_auto_default_kinds(d);
    if (p->auto_kinds)
        cand &= p->auto_kinds;
    cl_auto_choice_t ch;
    int rc = psi_cl_auto_choose(d, f->train, f->n_train, mp, cand, &ch);
    if (rc || ch.pick < 0)
        return rc ? rc : 1;
    out->auto_chosen[ch.pick]++;
    out->rule_weight[PS_COLOC_AUTO_PICK][ch.pick]++;
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        out->rule_weight[PS_COLOC_AUTO_BLEND][k] += ch.w[k];
        out->rule_weight[PS_COLOC_AUTO_WITHIN][k] += ch.w_within[k];
    }
    int rule = mp->auto_rule;
    for (int r = 0; r < PS_COLOC_AUTO_RULES && !rc; r++)
        if (r != rule)
            rc = rule_sums(fr, mp, &ch, r, fr->alt[r]);
    ps_coloc_model_t *m = NULL;
    if (!rc)
        rc = psi_cl_auto_build(&(cl_train_t){d, f->train, f->n_train}, mp, &ch, rule, fr->keep, &m);
    if (!rc)
        rc = predict_test(d, f, m, &fr->err[PS_COLOC_AUTO], pred);
    if (!rc)
        memcpy(fr->alt[rule], pred, (size_t)d->nc * sizeof *pred);
    ps_coloc_model_free(m);
    return rc;
}

/* Fit kind k = mp->kind on the fold and predict its test co-locations into
 * fr->pred[k] (allocated), keeping the model in fr->keep[k]. 1: the kind sits
 * the fold out. */
static int kind_fold(fold_run_t *fr, const ps_coloc_params_t *mp, int complete)
{
    const cl_data_t *d = fr->d;
    const fold_t *f = fr->f;
    double **pred = &fr->pred[mp->kind];
    ps_coloc_model_t **keep = &fr->keep[mp->kind];
    /* Data that measured only the targets' throughputs have no sums to
     * learn: the sum predictors sit such a fold out. */
    if (!complete && ps_coloc_kind_predicts_sum(mp->kind))
        return 1;
    int rc = psi_cl_model_fit(d, f->train, f->n_train, mp, keep);
    if (!rc && !(*pred = psi_malloc((size_t)d->nc * sizeof **pred + 1)))
        rc = PS_E_NOMEM;
    return rc ? rc : predict_test(d, f, *keep, &fr->err[mp->kind], *pred);
}

/* Score every policy over the fold, and auto under each rule (alt[rule],
 * NULL when auto did not run). */
static int score_fold(const cl_data_t *d, const fold_t *f, double *const *pred, double *const *alt, polsum_t *ps)
{
    double *pa[PS_COLOC_KIND_COUNT] = {0};
    for (int kk = 0; kk <= PS_COLOC_MAXK; kk++) {
        if (kk == 1)
            continue;
        int nt = psi_cl_score_policies(d, f->test, f->targets, kk, pred, kk ? ps->acc_k[kk] : ps->acc);
        if (nt < 0)
            return PS_E_NOMEM;
        if (kk)
            ps->nt_k[kk] += nt;
        else
            ps->nt += nt;
        for (int r = 0; alt && r < PS_COLOC_AUTO_RULES; r++) {
            double acc[PS_POL_COUNT] = {0};
            pa[PS_COLOC_AUTO] = alt[r];
            if (psi_cl_score_policies(d, f->test, f->targets, kk, pa, acc) < 0)
                return PS_E_NOMEM;
            ps->alt[r][kk] += acc[PS_POL_AUTO];
        }
    }
    return 0;
}

/* Fit every requested kind on fr's fold (fr's results not yet set),
 * predict its test co-locations, and add errors and policy scores (to ps).
 * auto (when asked) chooses among its candidates by cross-validation on the
 * fold's training co-locations and is then fitted under its rule, reusing
 * this fold's models of the other kinds; fr->out gets its choices and
 * weights. */
static int run_fold(fold_run_t *fr, uint64_t seed, polsum_t *ps)
{
    const cl_data_t *d = fr->d;
    const ps_coloc_eval_params_t *p = fr->p;
    const fold_t *f = fr->f;
    double **pred = fr->pred, **alt = fr->alt;
    ps_coloc_model_t **keep = fr->keep;
    int rc = 0, complete = 0;
    unsigned drop = dropped_policies(d);
    for (int i = 0; i < f->n_train; i++)
        complete += d->c[f->train[i]].complete;
    for (int k = 0; k < PS_COLOC_KIND_COUNT && !rc; k++) {
        if (!(p->kinds & (1u << k)) || (drop & (1u << (PS_POL_OF_KIND(k)))))
            continue;
        ps_coloc_params_t mp = p->model;
        mp.kind = (ps_coloc_kind_t)k;
        mp.seed = seed;
        if (k != PS_COLOC_AUTO) {
            rc = kind_fold(fr, &mp, complete);
        } else {
            pred[k] = psi_malloc((size_t)d->nc * sizeof *pred[k] + 1);
            for (int r = 0; r < PS_COLOC_AUTO_RULES && pred[k]; r++)
                rc |= !(alt[r] = psi_malloc((size_t)d->nc * sizeof *alt[r] + 1));
            rc = !pred[k] || rc ? PS_E_NOMEM : auto_fold(fr, &mp);
        }
        if (rc == 1) { /* sat out */
            free(pred[k]);
            pred[k] = NULL;
            rc = 0;
        }
    }
    if (!rc)
        rc = score_fold(d, f, pred, pred[PS_COLOC_AUTO] ? alt : NULL, ps);
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        free(pred[k]);
        ps_coloc_model_free(keep[k]);
    }
    for (int r = 0; r < PS_COLOC_AUTO_RULES; r++)
        free(alt[r]);
    return rc;
}

/* Fisher-Yates shuffle of a[n] from a splitmix64 stream seeded by seed. */
static void shuffle(int *a, int n, uint64_t seed)
{
    uint64_t st = seed;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(psi_splitmix64(&st) % (uint64_t)(i + 1));
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* Fisher-Yates shuffle, then the first round(frac * n) train; perm[nc]
 * holds the whole permutation (the rest are the test co-locations). */
int psi_cl_random_split(const cl_data_t *d, double frac, uint64_t seed, int *perm)
{
    int n = d->nc;
    for (int i = 0; i < n; i++)
        perm[i] = i;
    shuffle(perm, n, seed);
    int nt = (int)floor(frac * n + 0.5);
    return nt < 1 ? 1 : nt > n - 1 ? n - 1 : nt;
}

#define PAIR_FOLDS 5

/* 1 when co-location c holds a workload pair of fold q: every unordered
 * pair {a, b} (a copy of itself included) goes to fold hash(a, b, seed) % 5. */
static int pair_fold(const cl_coloc_t *c, uint64_t seed, int q)
{
    for (int i = 0; i < c->k; i++)
        for (int j = i + 1; j < c->k; j++) {
            uint64_t a = (uint64_t)(c->w[i] < c->w[j] ? c->w[i] : c->w[j]);
            uint64_t b = (uint64_t)(c->w[i] < c->w[j] ? c->w[j] : c->w[i]);
            uint64_t h = (a * 1000003u + b) ^ (seed * 0x9E3779B97F4A7C15ull);
            if ((int)(psi_splitmix64(&h) % PAIR_FOLDS) == q)
                return 1;
        }
    return 0;
}

/* The fold plan of one run: the unseen mode's model groups, the test
 * mode's workload sets of the second table. */
typedef struct {
    int nf, cap;
    const char **groups;
    int *sets;
} fold_plan_t;

static int plan_folds(const cl_data_t *d, const ps_coloc_eval_params_t *p, fold_plan_t *fp)
{
    fp->nf = fp->cap = 1;
    if (p->unseen) {
        if (!(fp->groups = psi_calloc((size_t)d->nw + 1, sizeof *fp->groups)))
            return PS_E_NOMEM;
        fp->nf = 0;
        for (int w = 0; w < d->nw; w++) {
            int used = 0, seen = 0;
            for (int i = 0; i < d->nc && !used; i++)
                used = psi_cl_coloc_holds(&d->c[i], w);
            for (int g = 0; g < fp->nf && used && !seen; g++)
                seen = strcmp(fp->groups[g], d->w[w].group) == 0;
            if (used && !seen)
                fp->groups[fp->nf++] = d->w[w].group;
        }
        fp->cap = fp->nf;
    } else if (p->unseen_pairs) {
        fp->nf = fp->cap = PAIR_FOLDS;
    } else if (p->test && !p->transfer && !p->unseen_splits) {
        if (!(fp->sets = psi_calloc((size_t)d->n_sets + 1, sizeof *fp->sets)))
            return PS_E_NOMEM;
        fp->nf = 0;
        for (int i = 0; i < d->nc; i++)
            if (d->c[i].origin == 1)
                fp->sets[d->c[i].set] = 1;
        for (int s = 0; s < d->n_sets; s++)
            if (fp->sets[s])
                fp->sets[fp->nf++] = s;
        fp->cap = fp->nf;
    }
    return 0;
}

/* The unseen-splits fold of seed: every co-location of the first table
 * trains; the second table's (the share splits) are shuffled as
 * psi_cl_random_split shuffles, in their order, and the first half (rounded)
 * train, the rest are scored. The training list stays in table order, so
 * that `colocate train` on the two files' rows in that order fits the same
 * model. */
static int fill_splits_fold(const cl_data_t *d, uint64_t seed, fold_t *f)
{
    int n = 0, *sp = psi_malloc((size_t)d->nc * sizeof *sp + 1);
    if (!sp)
        return PS_E_NOMEM;
    for (int i = 0; i < d->nc; i++)
        if (d->c[i].origin == 1)
            sp[n++] = i;
    shuffle(sp, n, seed);
    for (int i = (int)floor(0.5 * n + 0.5); i < n; i++)
        f->test[sp[i]] = 1;
    for (int i = 0; i < d->nc; i++)
        if (!f->test[i])
            f->train[f->n_train++] = i;
    free(sp);
    return 0;
}

/* Test flags and training list of fold q (its arrays allocated). */
static void fill_fold(const cl_data_t *d, const ps_coloc_eval_params_t *p, uint64_t seed, const fold_plan_t *fp, int q,
                      fold_t *f)
{
    if (p->unseen)
        for (int w = 0; w < d->nw; w++)
            f->targets[w] = strcmp(d->w[w].group, fp->groups[q]) == 0;
    if (!p->unseen && !p->unseen_pairs && !p->test) {
        int *perm = f->train, nt = psi_cl_random_split(d, p->train_frac, seed, perm);
        for (int i = nt; i < d->nc; i++)
            f->test[perm[i]] = 1;
        f->n_train = nt;
        return;
    }
    for (int i = 0; i < d->nc; i++) {
        const cl_coloc_t *c = &d->c[i];
        int train;
        if (p->unseen) {
            int in = 0;
            for (int s = 0; s < c->k; s++)
                in |= f->targets[c->w[s]];
            f->test[i] = (char)in;
            train = !in;
        } else if (p->unseen_pairs) {
            f->test[i] = (char)pair_fold(c, seed, q);
            train = !f->test[i];
        } else if (p->transfer) {
            f->test[i] = c->origin == 1;
            train = c->origin == 0;
        } else {
            f->test[i] = c->set == fp->sets[q] && c->origin == 1;
            train = c->set != fp->sets[q] && !(p->test_alone && c->origin == 1);
        }
        if (train)
            f->train[f->n_train++] = i;
    }
}

/* The folds of one run. Random split: one fold. Unseen: one per model group.
 * Test table: one per workload set of the second table. Unseen splits: one
 * (half of the second table held out). */
static int make_folds(const cl_data_t *d, const ps_coloc_eval_params_t *p, uint64_t seed, fold_t **out, int *n_out)
{
    fold_plan_t fp = {0};
    int rc = plan_folds(d, p, &fp);
    fold_t *f = rc ? NULL : psi_calloc((size_t)fp.cap + 1, sizeof *f);
    if (!f)
        rc = PS_E_NOMEM;
    for (int q = 0; q < fp.nf && !rc; q++) {
        f[q].train = psi_malloc((size_t)d->nc * sizeof *f[q].train + 1);
        f[q].test = psi_calloc((size_t)d->nc + 1, 1);
        if (p->unseen)
            f[q].targets = psi_calloc((size_t)d->nw + 1, 1);
        if (!f[q].train || !f[q].test || (p->unseen && !f[q].targets))
            rc = PS_E_NOMEM;
        else if (p->unseen_splits)
            rc = fill_splits_fold(d, seed, &f[q]);
        else
            fill_fold(d, p, seed, &fp, q, &f[q]);
    }
    free(fp.groups);
    free(fp.sets);
    if (rc) {
        if (f)
            folds_free(f, fp.nf);
        return rc;
    }
    *out = f;
    *n_out = fp.nf;
    return 0;
}

/* Sums over runs of ps_coloc_eval. */
typedef struct {
    double r2[PS_COLOC_KIND_COUNT], rmse[PS_COLOC_KIND_COUNT], mape[PS_COLOC_KIND_COUNT], tmape[PS_COLOC_KIND_COUNT];
    int nerr[PS_COLOC_KIND_COUNT], ntime[PS_COLOC_KIND_COUNT];
    double psum[PS_POL_COUNT], psq[PS_POL_COUNT];
    double ksum[PS_COLOC_MAXK + 1][PS_POL_COUNT], ktargets[PS_COLOC_MAXK + 1];
    int kruns[PS_COLOC_MAXK + 1];
    double altsum[PS_COLOC_AUTO_RULES][PS_COLOC_MAXK + 1]; /* auto under each rule, as psum and ksum */
    int runs, scored;                                      /* runs, and runs with a scored target */
    double targets;
} evsum_t;

static void add_run(evsum_t *a, const errsum_t *err, const polsum_t *ps)
{
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        const errsum_t *e = &err[k];
        if (e->n < 1)
            continue;
        double sst = e->syy - e->sy * e->sy / e->n;
        a->r2[k] += sst > 0 ? 1 - e->sse / sst : NAN;
        a->rmse[k] += sqrt(e->sse / e->n);
        a->mape[k] += 100 * e->sape / e->n;
        a->nerr[k]++;
        if (e->ntime > 0) {
            a->tmape[k] += 100 * e->stape / e->ntime;
            a->ntime[k]++;
        }
    }
    int nt = ps->nt;
    for (int q = 0; q < PS_POL_COUNT && nt > 0; q++) {
        double v = ps->acc[q] / nt;
        a->psum[q] += v;
        a->psq[q] += v * v;
    }
    for (int r = 0; r < PS_COLOC_AUTO_RULES && nt > 0; r++)
        a->altsum[r][0] += ps->alt[r][0] / nt;
    for (int kk = 2; kk <= PS_COLOC_MAXK; kk++) {
        if (ps->nt_k[kk] <= 0)
            continue;
        for (int q = 0; q < PS_POL_COUNT; q++)
            a->ksum[kk][q] += ps->acc_k[kk][q] / ps->nt_k[kk];
        for (int r = 0; r < PS_COLOC_AUTO_RULES; r++)
            a->altsum[r][kk] += ps->alt[r][kk] / ps->nt_k[kk];
        a->ktargets[kk] += ps->nt_k[kk];
        a->kruns[kk]++;
    }
    a->targets += nt;
    a->scored += nt > 0;
    a->runs++;
}

/* auto's rule, mean weights and the other rule's figures. */
static void finish_auto(const evsum_t *a, const ps_coloc_eval_params_t *p, ps_coloc_eval_result_t *out)
{
    int n = 0, ran = !isnan(out->policy_mean[PS_POL_AUTO]);
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        n += out->auto_chosen[k];
    out->auto_rule = p->model.auto_rule;
    for (int r = 0; r < PS_COLOC_AUTO_RULES; r++) {
        for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
            out->rule_weight[r][k] = n ? out->rule_weight[r][k] / n : 0;
        out->rule_mean[r] = ran ? a->altsum[r][0] / a->scored : NAN;
        for (int kk = 0; kk <= PS_COLOC_MAXK; kk++)
            out->rule_k[r][kk] = ran && kk >= 2 && a->kruns[kk] ? a->altsum[r][kk] / a->kruns[kk] : NAN;
    }
    memcpy(out->auto_weight, out->rule_weight[out->auto_rule], sizeof out->auto_weight);
}

static void finish_eval(const evsum_t *a, const ps_coloc_eval_params_t *p, unsigned drop, ps_coloc_eval_result_t *out)
{
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        int n = a->nerr[k];
        out->r2[k] = n ? a->r2[k] / n : NAN;
        out->rmse[k] = n ? a->rmse[k] / n : NAN;
        out->mape[k] = n ? a->mape[k] / n : NAN;
        out->time_mape[k] = a->ntime[k] ? a->tmape[k] / a->ntime[k] : NAN;
    }
    out->dropped = drop;
    /* A policy is reported when it scored in every run with targets (a sum
     * predictor without complete co-locations to learn from does not). */
    int sc = a->scored;
    for (int q = 0; q < PS_POL_COUNT; q++) {
        int ran = sc > 0 && (q <= PS_POL_BEST_RULE || (p->kinds & (1u << (q - PS_POL_KINDS))));
        if (q > PS_POL_BEST_RULE && !(a->nerr[q - PS_POL_KINDS] == a->runs))
            ran = 0;
        if (drop & (1u << q))
            ran = 0;
        double m = ran ? a->psum[q] / sc : NAN;
        out->policy_mean[q] = m;
        out->policy_sd[q] = ran ? (sc > 1 ? sqrt(fmax(0, (a->psq[q] - sc * m * m) / (sc - 1))) : 0) : NAN;
        for (int kk = 0; kk <= PS_COLOC_MAXK; kk++)
            out->policy_k[kk][q] = ran && kk >= 2 && a->kruns[kk] ? a->ksum[kk][q] / a->kruns[kk] : NAN;
    }
    for (int kk = 0; kk <= PS_COLOC_MAXK; kk++)
        out->targets_k[kk] = kk >= 2 && a->kruns[kk] ? a->ktargets[kk] / a->kruns[kk] : NAN;
    out->targets = a->targets / a->runs;
    out->runs = a->runs;
    finish_auto(a, p, out);
}

int ps_coloc_eval(const ps_workloads_t *w, const ps_scaling_t *scaling, const ps_colocations_t *c,
                  const ps_coloc_eval_params_t *p, ps_coloc_eval_result_t *out)
{
    if (!p || p->seeds < 1 ||
        (!p->unseen && !p->unseen_pairs && !p->test && !(p->train_frac > 0 && p->train_frac < 1)) ||
        (unsigned)p->model.auto_rule >= PS_COLOC_AUTO_RULES)
        return psi_error(PS_E_ARG, "colocate eval: need seeds >= 1, 0 < train_frac < 1 and a known auto rule");
    if (p->unseen_splits && (!p->test || p->transfer || p->test_alone || p->unseen || p->unseen_pairs))
        return psi_error(PS_E_ARG, "colocate eval: unseen_splits needs test (the share splits) and no other mode");
    cl_data_t *d = NULL;
    int rc = psi_cl_data_build(w, scaling, c, p->test, &d);
    if (rc)
        return rc;
    memset(out, 0, sizeof *out);
    unsigned drop = dropped_policies(d);
    evsum_t *a = psi_calloc(1, sizeof *a);
    if (!a)
        rc = PS_E_NOMEM;
    for (int r = 0; r < p->seeds && !rc; r++) {
        uint64_t seed = p->seed + (uint64_t)r;
        fold_t *f = NULL;
        int nf = 0;
        if ((rc = make_folds(d, p, seed, &f, &nf)))
            break;
        errsum_t err[PS_COLOC_KIND_COUNT];
        memset(err, 0, sizeof err);
        polsum_t ps;
        memset(&ps, 0, sizeof ps);
        for (int q = 0; q < nf && !rc; q++) {
            fold_run_t fr = {.d = d, .p = p, .f = &f[q], .err = err, .out = out};
            rc = run_fold(&fr, seed, &ps);
            if (p->progress)
                p->progress("colocate eval", (double)r * nf + q + 1, (double)p->seeds * nf, p->progress_user);
        }
        folds_free(f, nf);
        if (!rc)
            add_run(a, err, &ps);
    }
    psi_cl_data_free(d);
    if (!rc)
        finish_eval(a, p, drop, out);
    free(a);
    return rc;
}
