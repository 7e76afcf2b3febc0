/* Campaign planning (see plan.h). */
#include "collect/plan.h"

#include "common/common.h"

#include <stdlib.h>
#include <string.h>

static int probed(const ps_collect_device_t *dev)
{
    for (int i = 0; i < 4; i++)
        if (dev->valid_sms_mask[i])
            return 1;
    return 0;
}

/* A side may have the whole device (no partition to carve), or a group the
 * driver gives: one the backend probed, or else at least min_partition_sms
 * SMs in multiples of sm_alignment. */
static int valid_sms(const ps_collect_device_t *dev, int sms)
{
    int align = dev->sm_alignment > 0 ? dev->sm_alignment : 1;
    if (sms / 2 == dev->tpc_count && sms <= dev->sm_count)
        return 1;
    if (sms <= 0 || sms > dev->sm_count)
        return 0;
    if (probed(dev))
        return sms < 256 && (dev->valid_sms_mask[sms / 64] >> (sms % 64) & 1);
    return sms >= dev->min_partition_sms && sms % align == 0;
}

int ps_collect_valid_tpcs(const ps_collect_device_t *dev, int *out, int cap)
{
    int n = 0;
    for (int sms = 2; sms <= dev->sm_count; sms += 2) {
        if (!valid_sms(dev, sms))
            continue;
        if (n < cap)
            out[n] = sms / 2;
        n++;
    }
    return n;
}

int psi_plan_check_tpcs(const ps_collect_device_t *dev, const int *tpcs, int n)
{
    int align = dev->sm_alignment > 0 ? dev->sm_alignment : 1;
    for (int i = 0; i < n; i++) {
        int sms = 2 * tpcs[i];
        if (tpcs[i] <= 0 || sms > dev->sm_count)
            return psi_error(PS_E_ARG, "%d TPCs: the %s has %d TPCs", tpcs[i], dev->gpu, dev->tpc_count);
        if (!valid_sms(dev, sms))
            return psi_error(PS_E_ARG,
                             "%d TPCs (%d SMs): a green context on the %s needs at least %d SMs "
                             "in multiples of %d (`collect info` lists the valid counts)",
                             tpcs[i], sms, dev->gpu, dev->min_partition_sms, align);
    }
    return 0;
}

int psi_plan_grant_tpcs(const ps_collect_device_t *dev, int *tpcs, int n)
{
    for (int i = 0; i < n; i++) {
        int t = tpcs[i];
        if (t <= 0 || t >= (int)PS_ARRAY_LEN(dev->granted_sms) || valid_sms(dev, 2 * t))
            continue;
        int g = dev->granted_sms[t];
        if (g > 0 && g != 2 * t && valid_sms(dev, g)) {
            psi_log(PS_LOG_WARN,
                    "%d TPCs: the driver grants a green context %d SMs for the %d asked; measuring on %d TPCs", t, g,
                    2 * t, g / 2);
            tpcs[i] = g / 2;
        }
    }
    return psi_plan_check_tpcs(dev, tpcs, n);
}

int psi_plan_splits(const ps_collect_device_t *dev, const int *tpcs, int n, int *hp, int *lp, int cap)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        int best = 0;
        for (int j = 0; j < n; j++)
            if (tpcs[i] + tpcs[j] <= dev->tpc_count && tpcs[j] > best)
                best = tpcs[j];
        if (best == 0)
            continue;
        if (k < cap) {
            hp[k] = tpcs[i];
            lp[k] = best;
        }
        k++;
    }
    return k;
}

/* From splitmix64, whose stream depends only on its seed. */
static int uniform(uint64_t *s, int lo, int hi) { return lo + (int)(psi_splitmix64(s) % (uint64_t)(hi - lo + 1)); }

int psi_plan_coexec(const ps_coexec_plan_t *plan, const ps_collect_device_t *dev, int n_hp, int n_lp,
                    psi_experiment_t **out, int *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (plan->experiments <= 0 || plan->runs <= 0 || plan->experiments > 10000000 || plan->runs > 100000)
        return psi_error(PS_E_ARG, "need experiments in 1..1e7 and runs in 1..1e5");
    if (plan->seg_min <= 0 || plan->seg_max < plan->seg_min)
        return psi_error(PS_E_ARG, "segment lengths %d..%d: need 1 <= min <= max", plan->seg_min, plan->seg_max);
    if (n_hp <= 0 || n_lp <= 0)
        return psi_error(PS_E_ARG, "a model without operators");

    int valid[1024];
    const int *tpcs = valid;
    int n_tpcs = plan->n_tpcs;
    if (!plan->tpcs) {
        n_tpcs = ps_collect_valid_tpcs(dev, valid, (int)PS_ARRAY_LEN(valid));
        if (n_tpcs > (int)PS_ARRAY_LEN(valid))
            n_tpcs = (int)PS_ARRAY_LEN(valid);
    } else {
        if (n_tpcs < 0 || n_tpcs > (int)PS_ARRAY_LEN(valid))
            return psi_error(PS_E_ARG, "%d TPC counts: at most %zu", n_tpcs, PS_ARRAY_LEN(valid));
        memcpy(valid, plan->tpcs, (size_t)n_tpcs * sizeof *valid);
        int rc = psi_plan_grant_tpcs(dev, valid, n_tpcs);
        if (rc)
            return rc;
    }
    int hp_split[1024], lp_split[1024];
    int n_split = psi_plan_splits(dev, tpcs, n_tpcs, hp_split, lp_split, (int)PS_ARRAY_LEN(hp_split));
    if (n_split > (int)PS_ARRAY_LEN(hp_split))
        n_split = (int)PS_ARRAY_LEN(hp_split);
    if (n_split == 0)
        return psi_error(PS_E_ARG, "no two TPC counts of the list fit on the %s's %d TPCs together", dev->gpu,
                         dev->tpc_count);

    psi_experiment_t *e = psi_calloc((size_t)plan->experiments, sizeof *e);
    if (!e)
        return PS_E_NOMEM;
    uint64_t s = plan->seed * 0x2545f4914f6cdd1dULL + 0x632be59bd9b4e019ULL;
    for (int i = 0; i < plan->experiments; i++) {
        int hmax = plan->seg_max < n_hp ? plan->seg_max : n_hp;
        int lmax = plan->seg_max < n_lp ? plan->seg_max : n_lp;
        int hmin = plan->seg_min < hmax ? plan->seg_min : hmax;
        int lmin = plan->seg_min < lmax ? plan->seg_min : lmax;
        e[i].hp_len = uniform(&s, hmin, hmax);
        e[i].lp_len = uniform(&s, lmin, lmax);
        e[i].hp_start = uniform(&s, 0, n_hp - e[i].hp_len);
        e[i].lp_start = uniform(&s, 0, n_lp - e[i].lp_len);
        int k = uniform(&s, 0, n_split - 1);
        e[i].hp_tpcs = hp_split[k];
        e[i].lp_tpcs = lp_split[k];
        snprintf(e[i].name, sizeof e[i].name, "%s.b%d+%s.b%d.s%llu.e%05d", plan->hp_model, plan->hp_batch,
                 plan->lp_model, plan->lp_batch, (unsigned long long)plan->seed, i);
    }
    *out = e;
    *n_out = plan->experiments;
    return 0;
}
