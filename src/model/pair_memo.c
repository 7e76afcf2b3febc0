/*
 * The window-pair memo of a model (docs/planner.md, "Speed per request").
 *
 * A planner asks, request after request, for candidates whose windows it has
 * met before: the HP request is cut at the same boundaries every time, and
 * LP streams pass the same operators. One window pair's prediction (both
 * sides' log deltas, with the conformal offsets of a bound, and the two
 * windows' standalone times) is a function of its coordinates and of what
 * the context fixes: the model, the two operator groups of the profile and
 * the coverage. The memo keeps it under those, so that a pair is built and
 * walked through the forests once.
 *
 * The context is a hash of the content it depends on, not of pointers: the
 * two groups' names, batches, operators, TPC counts, durations, intensities
 * and counters, the GPU's TPC count, the coverage and the layout. A profile
 * freed and another loaded at the same address, or a model reloaded, hashes
 * by what it holds. The memo belongs to the model (ps_model_free frees it),
 * so a reloaded model starts empty.
 *
 * Bounded: MEMO_SETS sets of MEMO_WAYS entries (64 bytes each, 4 MiB in all,
 * allocated at the first store), a new pair replacing the set's entries in
 * turn. Each entry has a 16-bit tag from its hash in a separate array (8
 * bytes a set, 128 KiB, which stays in cache): a look-up reads an entry only
 * where its tag matches, so a pair the memo lacks costs one tag line, not the
 * set's four entry lines, and emptying the memo clears the tags only. One
 * mutex guards it; a batch looks up all its pairs, and later stores its new
 * ones, under one lock each, so the service's threads meet there twice per
 * batch, outside the forest work.
 */
#include "model/model.h"

#include "common/common.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_WAYS 4
#define MEMO_SETS (1u << 14)

typedef struct {
    uint64_t ctx; /* the context it was stored under (never 0) */
    psi_pair_key_t k;
    psi_pair_val_t v;
} entry_t;

struct psi_pair_memo {
    pthread_mutex_t mu;
    entry_t *e;            /* [MEMO_SETS * MEMO_WAYS], NULL until the first store */
    uint16_t *tag;         /* [MEMO_SETS * MEMO_WAYS]: 0 empty, else the entry's tag_of */
    unsigned char *victim; /* [MEMO_SETS]: the way the next new pair of a set takes */
};

psi_pair_memo_t *psi_pair_memo_new(void)
{
    psi_pair_memo_t *t = psi_calloc(1, sizeof *t);
    if (t && pthread_mutex_init(&t->mu, NULL) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

void psi_pair_memo_free(psi_pair_memo_t *t)
{
    if (!t)
        return;
    pthread_mutex_destroy(&t->mu);
    free(t->e);
    free(t->tag);
    free(t->victim);
    free(t);
}

void psi_pair_memo_clear(psi_pair_memo_t *t)
{
    pthread_mutex_lock(&t->mu);
    if (t->e) { /* emptied in place: an entry is read only under its tag */
        memset(t->tag, 0, (size_t)MEMO_SETS * MEMO_WAYS * sizeof *t->tag);
        memset(t->victim, 0, MEMO_SETS);
    }
    pthread_mutex_unlock(&t->mu);
}

/* Word-by-word hashing (a multiply-xor per word, the splitmix64 finalizer at
 * the end): about a nanosecond a word, some 20 us for two groups of a few
 * thousand durations, once per plan (psi_pair_ctx_bind, predict.c). */
uint64_t psi_pair_memo_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t w;
    for (; n >= 8; n -= 8, b += 8) {
        memcpy(&w, b, 8);
        h = (h ^ w) * 0x100000001B3ULL + (h >> 29);
    }
    w = 0;
    memcpy(&w, b, n);
    return psi_mix64((h ^ w) * 0x100000001B3ULL);
}

uint64_t psi_pair_memo_hash_group(uint64_t h, const psi_op_group_t *g)
{
    size_t n = (size_t)g->n_ops, nt = (size_t)g->n_tpcs;
    int head[3] = {g->batch, g->n_ops, g->n_tpcs};
    h = psi_pair_memo_hash(h, g->model, strlen(g->model));
    h = psi_pair_memo_hash(h, head, sizeof head);
    h = psi_pair_memo_hash(h, g->tpcs, nt * sizeof *g->tpcs);
    h = psi_pair_memo_hash(h, g->duration_ns, n * nt * sizeof *g->duration_ns);
    h = psi_pair_memo_hash(h, g->intensity, n * sizeof *g->intensity);
    return psi_pair_memo_hash(h, g->counters, n * sizeof *g->counters);
}

uint64_t psi_pair_key_hash(uint64_t ctx, const psi_pair_key_t *k)
{
    uint64_t a = (uint64_t)(uint32_t)k->k[0] | (uint64_t)(uint32_t)k->k[1] << 32,
             b = (uint64_t)(uint32_t)k->k[2] | (uint64_t)(uint32_t)k->k[3] << 32,
             c = (uint64_t)(uint32_t)k->k[4] | (uint64_t)(uint32_t)k->k[5] << 32;
    return psi_mix64(ctx + a * 0x9E3779B97F4A7C15ULL + b * 0xC2B2AE3D27D4EB4FULL + c * 0x165667B19E3779F9ULL);
}

/* A hash's set (its low bits) and tag (its high bits, never 0). */
static size_t set_of(uint64_t h) { return (size_t)(h & (MEMO_SETS - 1)); }
static uint16_t tag_of(uint64_t h) { return (uint16_t)(h >> 48) | 1u; }

/* The way of set s holding (ctx, k) under tag g, or -1. */
static int find(const psi_pair_memo_t *t, size_t s, uint16_t g, uint64_t ctx, const psi_pair_key_t *k)
{
    const uint16_t *tg = t->tag + s * MEMO_WAYS;
    for (int w = 0; w < MEMO_WAYS; w++) {
        const entry_t *e = &t->e[s * MEMO_WAYS + (size_t)w];
        if (tg[w] == g && e->ctx == ctx && memcmp(&e->k, k, sizeof *k) == 0)
            return w;
    }
    return -1;
}

void psi_pair_memo_get(psi_pair_memo_t *t, uint64_t ctx, const psi_pair_key_t *k, size_t n, psi_pair_val_t *v,
                       unsigned char *hit)
{
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < n; i++) {
        uint64_t h = psi_pair_key_hash(ctx, &k[i]);
        int w = t->e ? find(t, set_of(h), tag_of(h), ctx, &k[i]) : -1;
        hit[i] = w >= 0;
        if (w >= 0)
            v[i] = t->e[set_of(h) * MEMO_WAYS + (size_t)w].v;
    }
    pthread_mutex_unlock(&t->mu);
}

/* The entry, tag and victim arrays, at the first store (0: out of memory,
 * then every pair is predicted). */
static int ensure(psi_pair_memo_t *t)
{
    if (t->e)
        return 1;
    t->e = psi_malloc((size_t)MEMO_SETS * MEMO_WAYS * sizeof *t->e);
    t->tag = psi_calloc((size_t)MEMO_SETS * MEMO_WAYS, sizeof *t->tag);
    t->victim = psi_calloc(MEMO_SETS, 1);
    if (t->e && t->tag && t->victim)
        return 1;
    free(t->e);
    free(t->tag);
    free(t->victim);
    t->e = NULL;
    t->tag = NULL;
    t->victim = NULL;
    return 0;
}

void psi_pair_memo_put(psi_pair_memo_t *t, uint64_t ctx, const psi_pair_key_t *k, size_t n, const psi_pair_val_t *v)
{
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; ensure(t) && i < n; i++) {
        uint64_t h = psi_pair_key_hash(ctx, &k[i]);
        size_t s = set_of(h);
        int w = find(t, s, tag_of(h), ctx, &k[i]);
        if (w < 0) {
            w = t->victim[s];
            t->victim[s] = (unsigned char)((w + 1) % MEMO_WAYS);
        }
        t->e[s * MEMO_WAYS + (size_t)w] = (entry_t){ctx, k[i], v[i]};
        t->tag[s * MEMO_WAYS + (size_t)w] = tag_of(h);
    }
    pthread_mutex_unlock(&t->mu);
}
