/* The public calls of the collector's front end on a campaign's database
 * and its shards (pairsight_collect.h, "Collector front end"): thin
 * wrappers of store.c, store_runs.c and shard.c, for `pairsight collect
 * status` and `collect merge`. */
#include "collect/shard.h"
#include "collect/store.h"
#include "common/common.h"

#include <string.h>

int ps_campaign_meta_get(ps_campaign_t *c, const char *key, char *buf, size_t size)
{
    if (!c || !key || !buf || size == 0)
        return psi_error(PS_E_ARG, "ps_campaign_meta_get: NULL argument");
    return psi_store_meta_get(psi_campaign_store(c), key, buf, size);
}

int ps_campaign_models(ps_campaign_t *c, ps_campaign_model_fn fn, void *user)
{
    if (!c || !fn)
        return psi_error(PS_E_ARG, "ps_campaign_models: NULL argument");
    return psi_store_models(psi_campaign_store(c), fn, user);
}

int ps_collect_shard_parse(const char *s, int *index, int *count)
{
    if (!s || !index || !count || psi_shard_parse(s, index, count) != 0)
        return psi_error(PS_E_ARG, "shard '%s': expected K/N with 0 <= K < N", s ? s : "(null)");
    return PS_OK;
}

int ps_collect_merge(const char *dest, const char *const *src, int n, ps_collect_merge_stats_t *st)
{
    if (!dest || !src || n < 1 || !st)
        return psi_error(PS_E_ARG, "ps_collect_merge: no destination, no sources or NULL statistics");
    for (int i = 0; i < n; i++)
        if (!src[i])
            return psi_error(PS_E_ARG, "ps_collect_merge: source %d is NULL", i);
    return psi_shard_merge(dest, src, n, st);
}

int ps_campaign_shards_missing(ps_campaign_t *c, ps_collect_merge_stats_t *st)
{
    if (!c || !st)
        return psi_error(PS_E_ARG, "ps_campaign_shards_missing: NULL argument");
    memset(st, 0, sizeof *st);
    psi_shard_missing(psi_campaign_store(c), st);
    return PS_OK;
}
