/*
 * `auto`: choose a predictor per data set by cross-validation on the
 * training co-locations only. The training co-locations are cut into four
 * folds by workload set (every co-location of the same workloads, at any
 * shares, falls in one fold); each candidate kind is fitted on three folds
 * and predicts the fourth, and the out-of-fold predictions are scored with
 * the selection metric over the training co-locations as candidates, per
 * k. Of the kinds whose figure is within AUTO_MARGIN of the best, the one
 * with the lowest out-of-fold MAPE of the throughput sum wins (where no
 * training target has two candidates the MAPE decides alone). Below
 * AUTO_MIN_TRAIN training co-locations auto takes ratio.
 */
#include "colocate/colocate.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AUTO_FOLDS 4
#define AUTO_MARGIN 0.02
#define AUTO_MIN_TRAIN 16 /* 4 folds x 4 co-locations */

unsigned cl_auto_default_kinds(const cl_data_t *d)
{
    unsigned k = (1u << PS_COLOC_KIND_COUNT) - 1;
    k &= ~(1u << PS_COLOC_AUTO);
    k &= ~(1u << PS_COLOC_KACE_MLP); /* 20x the cost of the others, never the best measured */
    if (!d->has[CW_SM_BUSY] && !d->has[CW_MEM_BUSY] && !d->has[CW_MEMCAP])
        k &= ~(1u << PS_COLOC_XU_RF);
    return k;
}

int cl_auto_choose(const cl_data_t *d, const int *train, int n_train, const ps_coloc_params_t *p, unsigned kinds,
                   int *out)
{
    *out = -1;
    /* Too few training co-locations for 4 folds to say anything (a fold of
     * one or two co-locations scores no target): the predictor with the
     * fewest parameters, ratio. */
    if (n_train < AUTO_MIN_TRAIN && (kinds & (1u << PS_COLOC_RATIO))) {
        *out = PS_COLOC_RATIO;
        return 0;
    }
    int *fold = psi_malloc((size_t)n_train * sizeof *fold + 1), *sub = psi_malloc((size_t)n_train * sizeof *sub + 1);
    double *pred = psi_malloc((size_t)d->nc * sizeof *pred + 1);
    char *is_cand = psi_calloc((size_t)d->nc + 1, 1);
    int rc = 0;
    if (!fold || !sub || !pred || !is_cand) {
        rc = PS_E_NOMEM;
        goto done;
    }
    for (int i = 0; i < n_train; i++) {
        uint64_t h = (uint64_t)d->c[train[i]].set * 0x9E3779B97F4A7C15ull + p->seed * 0xBF58476D1CE4E5B9ull;
        fold[i] = (int)(psi_splitmix64(&h) % AUTO_FOLDS);
    }
    double best_score = -INFINITY, best_mape = INFINITY, cv_score[PS_COLOC_KIND_COUNT], cv_mape[PS_COLOC_KIND_COUNT];
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        cv_score[k] = cv_mape[k] = NAN;
    double slot[64];
    for (int k = 0; k < PS_COLOC_KIND_COUNT && !rc; k++) {
        if (!(kinds & (1u << k)) || k == PS_COLOC_AUTO)
            continue;
        int ok = 1;
        for (int i = 0; i < d->nc; i++)
            pred[i] = NAN;
        double sape = 0;
        int nape = 0;
        for (int f = 0; f < AUTO_FOLDS && ok; f++) {
            int ns = 0, held = 0, complete = 0;
            for (int i = 0; i < n_train; i++) {
                if (fold[i] != f) {
                    sub[ns++] = train[i];
                    complete += d->c[train[i]].complete;
                } else {
                    held++;
                }
            }
            if (!held || !ns)
                continue;
            if (!complete && ps_coloc_kind_predicts_sum((ps_coloc_kind_t)k)) {
                ok = 0;
                break;
            }
            ps_coloc_params_t mp = *p;
            mp.kind = (ps_coloc_kind_t)k;
            ps_coloc_model_t *m = NULL;
            if (cl_model_fit(d, sub, ns, &mp, &m)) {
                ok = 0; /* a kind this fold cannot train sits out */
                break;
            }
            for (int i = 0; i < n_train && !rc; i++) {
                if (fold[i] != f)
                    continue;
                int ci = train[i];
                rc = cl_model_predict(m, d, ci, slot, &pred[ci]);
                const cl_coloc_t *c = &d->c[ci];
                if (!rc && c->complete) {
                    double y = 0;
                    for (int s = 0; s < c->k; s++)
                        y += c->tput[s];
                    sape += fabs(pred[ci] - y) / y;
                    nape++;
                }
            }
            ps_coloc_model_free(m);
        }
        if (rc || !ok || !nape)
            continue;
        memset(is_cand, 0, (size_t)d->nc);
        for (int i = 0; i < n_train; i++)
            is_cand[train[i]] = !isnan(pred[train[i]]);
        /* Scored per k (a target's k-way candidates among themselves), so
         * that a 4-way set is never compared with a pair. */
        double *pv[PS_COLOC_KIND_COUNT] = {0}, acc[PS_POL_COUNT] = {0};
        pv[k] = pred;
        int nt = 0;
        for (int kk = 2; kk <= PS_COLOC_MAXK && !rc; kk++) {
            int t = cl_score_policies(d, is_cand, NULL, kk, pv, acc);
            if (t < 0)
                rc = PS_E_NOMEM;
            nt += t;
        }
        if (rc)
            break;
        double score = nt > 0 ? acc[PS_POL_KACE_LR + k] / nt : 0, mape = sape / nape;
        cv_score[k] = nt > 0 ? score : NAN;
        cv_mape[k] = mape;
    }
    /* The most accurate (sum MAPE) of the kinds whose selection figure is
     * within AUTO_MARGIN of the best: with tens of training targets the
     * figure alone is noisy, and the error separates close candidates. */
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        if (!isnan(cv_score[k]) && cv_score[k] > best_score)
            best_score = cv_score[k];
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        if (isnan(cv_mape[k]))
            continue;
        int near = isinf(best_score) || (!isnan(cv_score[k]) && cv_score[k] >= best_score - AUTO_MARGIN);
        if (near && cv_mape[k] < best_mape) {
            best_mape = cv_mape[k];
            *out = k;
        }
    }
done:
    free(fold);
    free(sub);
    free(pred);
    free(is_cand);
    return rc;
}
