/* Campaigns spread over many GPUs: shards of a plan and the merge of their
 * databases (see docs/collect.md, "Campaigns over many GPUs").
 *
 * A shard K of N runs the tasks i of each plan (TPC counts of a profile,
 * experiments of a co-execution campaign, in plan order) with i % N == K, so
 * the N shards are disjoint and together make the plan. A shard's database
 * pins "shard" = "K/N" and, per plan, the plan's parameters, so that a
 * resumed shard cannot change either and shards of different plans cannot be
 * merged. */
#ifndef PS_COLLECT_SHARD_H
#define PS_COLLECT_SHARD_H

#include "collect/store.h"
#include "pairsight.h"

/* "K/N" with 0 <= K < N: 0, or -1 for anything else. */
int psi_shard_parse(const char *s, int *index, int *n_shards);
/* Whether task i of a plan belongs to the shard of p (always, unsharded). */
int psi_shard_mine(const ps_collect_params_t *p, int i);
/* Pins the shard of p in the store (nothing unsharded); checks K < N. */
int psi_shard_open(psi_store_t *s, const ps_collect_params_t *p);
/* Pin a plan's parameters in a sharded store (nothing unsharded). */
int psi_shard_pin_profile(psi_store_t *s, const ps_collect_params_t *p, const char *model, int batch, const int *tpcs,
                          int n);
int psi_shard_pin_coexec(psi_store_t *s, const ps_collect_params_t *p, const ps_coexec_plan_t *plan);

/* What a merge did: public as ps_collect_merge_stats_t (pairsight_collect.h). */
typedef ps_collect_merge_stats_t shard_merge_stats_t;

/* Merges the campaign databases src[0..n) into dest (created if absent):
 * every task and row of each source that dest lacks, in one transaction per
 * source. Refuses (PS_E_MISMATCH) a source whose GPU, seq_len or plan differs
 * from dest's or whose task of the same name has another spec; every source
 * is checked against dest before any is copied, so such a source, a missing
 * or damaged one, or dest itself among the sources stops the merge with
 * nothing written (a dest it created is removed). A task done in both keeps
 * dest's rows: merging a source twice adds nothing. The shards merged are
 * recorded in dest, and st->missing names those of their N not merged yet. */
int psi_shard_merge(const char *dest, const char *const *src, int n, shard_merge_stats_t *st);
/* st->n_missing and st->missing of the shards recorded in s (collect status). */
void psi_shard_missing(psi_store_t *s, shard_merge_stats_t *st);

#endif
