/* The public calls of the makespan predictors and the twin against
 * overlap.csv (include/pairsight_overlap.h): thin wrappers of
 * evaluate/overlap.h and evaluate/overlap_twin.h, whose types are the public
 * ones (psi_ov_params_t is ps_ov_params_t, psi_ovt_t is ps_ovt_t, ...). */
#include "common/common.h"
#include "evaluate/overlap.h"
#include "evaluate/overlap_twin.h"

#include <string.h>

const char *ps_ov_method_name(ps_ov_method_t m)
{
    return (int)m >= 0 && m < PS_OVM_COUNT ? psi_ov_method_names[m] : "unknown";
}

const char *ps_ov_protocol_name(ps_ov_protocol_t p)
{
    return (int)p >= 0 && p < PS_OVP_COUNT ? psi_ov_protocol_names[p] : "unknown";
}

int ps_ov_protocol_from_name(const char *name, ps_ov_protocol_t *out)
{
    if (!name || !out)
        return psi_error(PS_E_ARG, "ps_ov_protocol_from_name: NULL argument");
    for (int k = 0; k < PS_OVP_COUNT; k++)
        if (strcmp(psi_ov_protocol_names[k], name) == 0) {
            *out = (ps_ov_protocol_t)k;
            return PS_OK;
        }
    return psi_error(PS_E_ARG, "unknown protocol '%s' (random, leave-pair, k-way, leave-model, mig)", name);
}

int ps_ov_features_parse(const char *list, unsigned *mask)
{
    if (!list || !mask)
        return psi_error(PS_E_ARG, "ps_ov_features_parse: NULL argument");
    if (psi_ov_features_parse(list, mask) != 0)
        return psi_error(PS_E_ARG, "unknown feature group in '%s' (times, ratios, active, share, batch, ops, grain)",
                         list);
    return PS_OK;
}

ps_ov_params_t ps_ov_default_params(void) { return psi_ov_default_params(); }

int ps_ov_eval(const ps_overlap_t *t, ps_ov_protocol_t p, const ps_ov_params_t *prm, ps_ov_result_t *out)
{
    if (!t || !prm || !out)
        return psi_error(PS_E_ARG, "ps_ov_eval: NULL argument");
    if ((int)p < 0 || p >= PS_OVP_COUNT)
        return psi_error(PS_E_ARG, "ps_ov_eval: protocol %d", (int)p);
    return psi_ov_eval(t, (int)p, prm, out);
}

int ps_ov_train(const ps_overlap_t *t, const ps_ov_params_t *p, ps_ov_model_t **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_ov_train: NULL out");
    *out = NULL;
    if (!t || !p)
        return psi_error(PS_E_ARG, "ps_ov_train: NULL argument");
    return psi_ov_train(t, p, out);
}

int ps_ov_predict(const ps_ov_model_t *m, const ps_overlap_t *t, const char *oplists, double *out)
{
    if (!m || !t || !out)
        return psi_error(PS_E_ARG, "ps_ov_predict: NULL argument");
    return psi_ov_predict(m, t, oplists, out);
}

int ps_ov_model_save(const ps_ov_model_t *m, const char *path)
{
    if (!m || !path)
        return psi_error(PS_E_ARG, "ps_ov_model_save: NULL argument");
    return psi_ov_model_save(m, path);
}

int ps_ov_model_load(const char *path, ps_ov_model_t **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_ov_model_load: NULL out");
    *out = NULL;
    if (!path)
        return psi_error(PS_E_ARG, "ps_ov_model_load: NULL path");
    return psi_ov_model_load(path, out);
}

size_t ps_ov_model_solo_keys(const ps_ov_model_t *m) { return m ? psi_ov_model_solo_keys(m) : 0; }

void ps_ov_model_free(ps_ov_model_t *m) { psi_ov_model_free(m); }

/* ---- the twin ---- */

int ps_ovt_load(const char *dir, const char *gpu, ps_ovt_t **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_ovt_load: NULL out");
    *out = NULL;
    if (!dir || !gpu)
        return psi_error(PS_E_ARG, "ps_ovt_load: NULL argument");
    return psi_ovt_load(dir, gpu, out);
}

void ps_ovt_free(ps_ovt_t *tw) { psi_ovt_free(tw); }

int ps_ovt_lists(const ps_ovt_t *tw, long *unmatched)
{
    if (!tw) {
        if (unmatched)
            *unmatched = 0;
        return 0;
    }
    return psi_ovt_lists(tw, unmatched);
}

ps_ovt_params_t ps_ovt_default_params(void) { return psi_ovt_default_params(); }

void ps_ovt_score_free(ps_ovt_score_t *s) { psi_ovt_score_free(s); }

int ps_ovt_score(ps_ovt_t *tw, const ps_overlap_t *t, const ps_ovt_params_t *p, const ps_mps_params_t *mps,
                 ps_ovt_score_t *out)
{
    if (!tw || !t || !p || !p->setting || !mps || !out)
        return psi_error(PS_E_ARG, "ps_ovt_score: NULL argument");
    if (p->every < 1)
        return psi_error(PS_E_ARG, "ps_ovt_score: every %d", p->every);
    return psi_ovt_score(tw, t, p, mps, out);
}

int ps_ovt_calibrate(ps_ovt_t *tw, const ps_overlap_t *t, const ps_ovt_params_t *p, ps_mps_params_t *out, double *mape)
{
    if (!tw || !t || !p || !p->setting || !out || !mape)
        return psi_error(PS_E_ARG, "ps_ovt_calibrate: NULL argument");
    if (p->fit_every < 1)
        return psi_error(PS_E_ARG, "ps_ovt_calibrate: fit_every %d", p->fit_every);
    return psi_ovt_calibrate(tw, t, p, out, mape);
}
