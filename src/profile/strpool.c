/* The string pool that interns a table's text, and the hash set of row
 * indices that the key checks use. */
#include "common/common.h"
#include "profile/profile_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct chunk {
    struct chunk *next;
    size_t used, size;
    char data[];
} chunk_t;

struct psi_strpool {
    const char **slot; /* open addressing; NULL = empty */
    uint64_t *hash;
    size_t mask, n;
    chunk_t *chunks;
};

uint64_t psi_hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    return psi_hash_final(h);
}

psi_strpool_t *psi_strpool_new(void)
{
    psi_strpool_t *p = psi_calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->mask = 63;
    p->slot = psi_calloc(p->mask + 1, sizeof *p->slot);
    p->hash = psi_calloc(p->mask + 1, sizeof *p->hash);
    if (!p->slot || !p->hash) {
        psi_strpool_free(p);
        return NULL;
    }
    return p;
}

void psi_strpool_free(psi_strpool_t *p)
{
    if (!p)
        return;
    for (chunk_t *c = p->chunks; c;) {
        chunk_t *next = c->next;
        free(c);
        c = next;
    }
    free(p->slot);
    free(p->hash);
    free(p);
}

static int grow(psi_strpool_t *p)
{
    size_t cap = (p->mask + 1) * 2;
    const char **slot = psi_calloc(cap, sizeof *slot);
    uint64_t *hash = psi_calloc(cap, sizeof *hash);
    if (!slot || !hash) {
        free(slot);
        free(hash);
        return PS_E_NOMEM;
    }
    for (size_t i = 0; i <= p->mask; i++) {
        if (!p->slot[i])
            continue;
        size_t j = p->hash[i] & (cap - 1);
        while (slot[j])
            j = (j + 1) & (cap - 1);
        slot[j] = p->slot[i];
        hash[j] = p->hash[i];
    }
    free(p->slot);
    free(p->hash);
    p->slot = slot;
    p->hash = hash;
    p->mask = cap - 1;
    return PS_OK;
}

static char *arena_copy(psi_strpool_t *p, const char *s, size_t len)
{
    chunk_t *c = p->chunks;
    if (!c || c->size - c->used < len + 1) {
        size_t size = len + 1 > 16384 ? len + 1 : 16384;
        c = psi_malloc(sizeof *c + size);
        if (!c)
            return NULL;
        c->used = 0;
        c->size = size;
        c->next = p->chunks;
        p->chunks = c;
    }
    char *d = c->data + c->used;
    memcpy(d, s, len);
    d[len] = '\0';
    c->used += len + 1;
    return d;
}

const char *psi_strpool_intern_n(psi_strpool_t *p, const char *s, size_t len)
{
    uint64_t h = psi_hash_bytes(s, len);
    size_t i = h & p->mask;
    while (p->slot[i]) {
        if (p->hash[i] == h && strncmp(p->slot[i], s, len) == 0 && p->slot[i][len] == '\0')
            return p->slot[i];
        i = (i + 1) & p->mask;
    }
    char *d = arena_copy(p, s, len);
    if (!d)
        return NULL;
    p->slot[i] = d;
    p->hash[i] = h;
    if (++p->n * 2 > p->mask + 1 && grow(p) != PS_OK)
        return NULL;
    return d;
}

const char *psi_strpool_intern(psi_strpool_t *p, const char *s) { return psi_strpool_intern_n(p, s, strlen(s)); }

int psi_keyset_init(psi_keyset_t *s, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    s->mask = cap - 1;
    s->row1 = psi_calloc(cap, sizeof *s->row1);
    s->hash = psi_malloc(cap * sizeof *s->hash);
    if (!s->row1 || !s->hash) {
        psi_keyset_free(s);
        return PS_E_NOMEM;
    }
    return PS_OK;
}

void psi_keyset_free(psi_keyset_t *s)
{
    free(s->row1);
    free(s->hash);
    s->row1 = NULL;
    s->hash = NULL;
}

size_t psi_keyset_insert(psi_keyset_t *s, size_t row, uint64_t hash, psi_row_eq_fn eq, const void *ctx)
{
    hash = psi_hash_final(hash);
    size_t i = hash & s->mask;
    while (s->row1[i]) {
        if (s->hash[i] == hash && eq(ctx, s->row1[i] - 1, row))
            return s->row1[i] - 1;
        i = (i + 1) & s->mask;
    }
    s->row1[i] = row + 1;
    s->hash[i] = hash;
    return SIZE_MAX;
}
