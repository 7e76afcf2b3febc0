/*
 * One co-location predicted without a colocations table: what a service
 * (`pairsight serve`, /v1/colocate/score and the Kubernetes extender) asks
 * for each candidate set. It builds the one-co-location table that
 * `colocate select` builds per candidate and predicts it with
 * ps_coloc_predict, so the figures are the same.
 */
#include "common/common.h"
#include "profile/tables.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The table of one co-location: workloads[i] in slot i + 1 at shares[i]. */
static int set_table(const char *gpu, const char *const *workloads, const int *shares, int k, ps_colocations_t **out)
{
    ps_colocations_t *q = ps_colocations_new();
    int err = q ? PS_OK : psi_error(PS_E_NOMEM, "out of memory");
    for (int i = 0; i < k && !err; i++) {
        psi_colocation_row_t row = {.colocation = "set",
                                    .gpu = gpu,
                                    .slot = i + 1,
                                    .workload = workloads[i],
                                    .share_pct = shares ? shares[i] : 100,
                                    .tput = NAN};
        err = ps_colocations_append(q, &row);
    }
    if (err) {
        ps_colocations_free(q);
        q = NULL;
    }
    *out = q;
    return err;
}

/* The first argument error of a set, or PS_OK. */
static int check_set(const ps_workloads_t *w, const ps_scaling_t *scaling, const char *gpu,
                     const char *const *workloads, const int *shares, int k)
{
    if (k < 1 || k > 64)
        return psi_error(PS_E_ARG, "a co-location of %d workloads: 1..64", k);
    for (int i = 0; i < k; i++) {
        if (!workloads[i])
            return psi_error(PS_E_ARG, "workload %d: NULL name", i);
        if (shares && (shares[i] < 1 || shares[i] > 100))
            return psi_error(PS_E_ARG, "workload %d (%s): share %d outside 1..100", i, workloads[i], shares[i]);
        if (isnan(ps_coloc_solo(w, scaling, gpu, workloads[i], 100)))
            return psi_error(PS_E_INPUT, "workload '%s' (gpu %s) is not in workloads.csv", workloads[i], gpu);
    }
    return PS_OK;
}

int ps_coloc_predict_set(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                         const char *gpu, const char *const *workloads, const int *shares, int k, double *out_tput,
                         double *out_sum)
{
    if (!m || !w || !gpu || !workloads || !out_tput || !out_sum)
        return psi_error(PS_E_ARG, "ps_coloc_predict_set: NULL argument");
    int err = check_set(w, scaling, gpu, workloads, shares, k);
    ps_colocations_t *q = NULL;
    if (!err)
        err = set_table(gpu, workloads, shares, k, &q);
    double pred[64];
    if (!err)
        err = ps_coloc_predict(m, w, scaling, q, pred);
    ps_colocations_free(q);
    if (err)
        return err;
    int sum_kind = ps_coloc_kind_predicts_sum(ps_coloc_model_kind(m));
    *out_sum = sum_kind ? pred[0] : 0;
    for (int i = 0; i < k; i++) {
        out_tput[i] = sum_kind ? NAN : pred[i];
        if (!sum_kind)
            *out_sum += pred[i];
    }
    return PS_OK;
}
