/* The AVX2 kernels of the forest (forest_internal.h), built with the
 * target attribute and chosen at run time where the CPU has AVX2. */
#include "model/forest_internal.h"

#if HAVE_X86
/*
 * AVX2 kernels on the perfect layout, eight walks per vector.
 *
 * Block kernel: a block of 8 * V rows is first copied column-major (feature
 * j of the block's row r at xt[j * 8V + r]), so that for the root of every
 * tree, where all rows sit at one node, the feature is one contiguous load,
 * and below it the row's value is a gather at feature * 8V + r from a block
 * that stays in L1. A node (threshold and feature) is one 64-bit gather
 * element; the next node is 2k + 1 + right, no child index is read. Each lane
 * adds its leaves in float in tree order, as the scalar kernel does.
 *
 * Row kernel (fewer than 8 rows): one lane per tree, 32 trees at once; the
 * leaf values are then added one by one in tree order.
 */

/* right (all ones) where x goes right at nodes (thr, feat): x >= thr, or x
 * is missing and the node sends missing values right. */
__attribute__((target("avx2"))) static inline __m256i avx2_right(__m256 x, __m256 thr, __m256i feat)
{
    __m256 ge = _mm256_cmp_ps(x, thr, _CMP_GE_OQ);
    __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    __m256 mr = _mm256_castsi256_ps(_mm256_srai_epi32(feat, 31));
    return _mm256_castps_si256(_mm256_or_ps(ge, _mm256_and_ps(nan, mr)));
}

/* The thresholds and features of nodes base[k] for the eight lanes of k:
 * two gathers of four 8-byte nodes. The lanes are gathered in the order 0 1
 * 4 5 | 2 3 6 7 so that one shuffle per field restores 0..7. */
__attribute__((target("avx2"))) static inline void avx2_nodes(const pnode_t *base, __m256i k, __m256 *thr,
                                                              __m256i *feat)
{
    const __m256i perm = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
    __m256i p = _mm256_permutevar8x32_epi32(k, perm);
    const long long *b = (const long long *)base;
    __m256 lo = _mm256_castsi256_ps(_mm256_i32gather_epi64(b, _mm256_castsi256_si128(p), 8));
    __m256 hi = _mm256_castsi256_ps(_mm256_i32gather_epi64(b, _mm256_extracti128_si256(p, 1), 8));
    *thr = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    *feat = _mm256_castps_si256(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
}

#ifndef AVX2_PERM_LEVELS
#define AVX2_PERM_LEVELS 6 /* levels below it look nodes up by permutes (measured: 6 over 3, 5, 7, 8) */
#endif

/* tab[j] for the eight lanes of j, 0 <= j < 2^d: one permute per 8 entries,
 * then a select by the high bits of j. tab holds at least 8 entries. */
__attribute__((target("avx2"))) static inline __m256 avx2_lookup(const float *tab, int d, __m256i j)
{
    __m256 r = _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab), j);
    __m256i hi = _mm256_srli_epi32(j, 3);
    const int chunks = 1 << (d > 3 ? d - 3 : 0); /* a plain bound, which UBSan's shift check leaves unrollable */
#pragma GCC unroll 4 /* no loop for the 1, 2 or 4 permutes (measured: 5% faster at 1k and 100k rows) */
    for (int c = 1; c < chunks; c++) {
        __m256 q = _mm256_permutevar8x32_ps(_mm256_loadu_ps(tab + 8 * c), j);
        r = _mm256_blendv_ps(r, q, _mm256_castsi256_ps(_mm256_cmpeq_epi32(hi, _mm256_set1_epi32(c))));
    }
    return r;
}

/* As avx512_level_nodes, eight lanes. */
__attribute__((target("avx2"))) static inline void avx2_level_nodes(const psi_forest_t *f, size_t tb, int d, __m256i k,
                                                                    __m256 *thr, __m256i *feat)
{
    if (d < AVX2_PERM_LEVELS) {
        size_t l0 = tb + ((size_t)1 << d) - 1;
        __m256i j = _mm256_sub_epi32(k, _mm256_set1_epi32((1 << d) - 1));
        *thr = avx2_lookup(f->pthr + l0, d, j);
        *feat = _mm256_castps_si256(avx2_lookup((const float *)f->pfeat + l0, d, j));
        return;
    }
    avx2_nodes(f->pnode + tb, k, thr, feat);
}

/* The top levels of tree t for the V vectors of rows of block xt (rows =
 * 8 V), while they are narrow: each node's feature is a contiguous load,
 * compared for all rows, kept where a row is at that node. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
avx2_top(const psi_forest_t *f, const float *xt, int V, int t, int top, __m256i *k)
{
    const int I = (1 << f->pdepth) - 1, rows = 8 * V;
    const __m256i one = _mm256_set1_epi32(1);
    const pnode_t *nb = f->pnode + (size_t)t * (size_t)I;
    for (int v = 0; v < V; v++)
        k[v] = _mm256_setzero_si256();
    for (int d = 0; d < top; d++) {
        __m256i r[AVX2_V];
        for (int v = 0; v < V; v++)
            r[v] = _mm256_setzero_si256();
        for (int j = (1 << d) - 1; j < (2 << d) - 1; j++) {
            __m256 thr = _mm256_set1_ps(nb[j].threshold);
            __m256i feat = _mm256_set1_epi32((int32_t)nb[j].feature), at = _mm256_set1_epi32(j);
            const float *c = xt + (size_t)(nb[j].feature & FEATURE_MASK) * (size_t)rows;
            for (int v = 0; v < V; v++)
                r[v] = _mm256_or_si256(r[v], _mm256_and_si256(_mm256_cmpeq_epi32(k[v], at),
                                                              avx2_right(_mm256_loadu_ps(c + 8 * v), thr, feat)));
        }
        for (int v = 0; v < V; v++)
            k[v] = _mm256_sub_epi32(_mm256_add_epi32(_mm256_add_epi32(k[v], k[v]), one), r[v]);
    }
}

/* The V vectors of 8 rows of a block while they walk the trees: vector v's
 * offsets in the block's columns (rows 8 v ... 8 v + 7) and its rows' sums. */
typedef struct {
    __m256i lane[AVX2_V];
    __m256 acc[AVX2_V];
} avx2_rows_t;

/* Trees [t0, t0 + G) for the V vectors of rows r of block xt, the levels
 * below the top in lockstep; each tree's leaves are added to r->acc in tree
 * order. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
avx2_trees(const psi_forest_t *f, const float *xt, int V, int t0, int G, avx2_rows_t *r)
{
    const __m256i *lane = r->lane;
    __m256 *acc = r->acc;
    const int D = f->pdepth, I = (1 << D) - 1, shift = V == 4 ? 5 : V == 2 ? 4 : 3;
    const __m256i one = _mm256_set1_epi32(1), fmask = _mm256_set1_epi32((int32_t)FEATURE_MASK);
    const int top = D < AVX2_TOP_LEVELS ? D : AVX2_TOP_LEVELS;
    __m256i k[AVX2_LOCKSTEP][AVX2_V];
    for (int g = 0; g < G; g++)
        avx2_top(f, xt, V, t0 + g, top, k[g]);
    for (int d = top; d < D; d++)
        for (int g = 0; g < G; g++)
            for (int v = 0; v < V; v++) {
                __m256 thr;
                __m256i feat;
                avx2_level_nodes(f, (size_t)(t0 + g) * (size_t)I, d, k[g][v], &thr, &feat);
                __m256i off = _mm256_add_epi32(_mm256_slli_epi32(_mm256_and_si256(feat, fmask), shift), lane[v]);
                __m256 x = _mm256_i32gather_ps(xt, off, 4);
                k[g][v] = _mm256_sub_epi32(_mm256_add_epi32(_mm256_add_epi32(k[g][v], k[g][v]), one),
                                           avx2_right(x, thr, feat));
            }
    for (int g = 0; g < G; g++) {
        const float *lb = f->pleaf + (size_t)(t0 + g) * (size_t)(I + 1) - I;
        for (int v = 0; v < V; v++)
            acc[v] = _mm256_add_ps(acc[v], _mm256_i32gather_ps(lb, k[g][v], 4));
    }
}

/* V (1, 2 or 4) vectors of 8 rows (rows = 8 V) of the column-major block
 * xt, trees [t0, t1): each row's sum is read from acc and written back (in
 * float, so that a row walked tree block by tree block adds exactly as one
 * walked through all trees at once). */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
avx2_block_v(const psi_forest_t *f, const float *xt, int V, int t0, int t1, float *acc_io)
{
    avx2_rows_t r;
    for (int v = 0; v < V; v++) {
        r.lane[v] = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(8 * v));
        r.acc[v] = _mm256_loadu_ps(acc_io + 8 * v);
    }
    int t = t0;
    for (; t + AVX2_LOCKSTEP <= t1; t += AVX2_LOCKSTEP) {
        if (TREE_PREFETCH && t + AVX2_LOCKSTEP < t1)
            prefetch_trees(f, t + AVX2_LOCKSTEP, t + 2 * AVX2_LOCKSTEP < t1 ? t + 2 * AVX2_LOCKSTEP : t1);
        avx2_trees(f, xt, V, t, AVX2_LOCKSTEP, &r);
    }
    for (; t < t1; t++)
        avx2_trees(f, xt, V, t, 1, &r);
    for (int v = 0; v < V; v++)
        _mm256_storeu_ps(acc_io + 8 * v, r.acc[v]);
}

/* The vectors of 8 rows a block of n rows (n <= AVX2_ROWS) walks with. */
int psi_forest_avx2_vectors(size_t n) { return n > 16 && AVX2_V == 4 ? 4 : n > 8 && AVX2_V >= 2 ? 2 : 1; }

/* Trees [t0, t1) over the block xt of n rows (column-major, 8 V rows). */
__attribute__((target("avx2"))) void psi_forest_avx2_block(const psi_forest_t *f, const float *xt, size_t n, int t0,
                                                           int t1, float *acc)
{
    int V = psi_forest_avx2_vectors(n);
    if (V == 4)
        avx2_block_v(f, xt, AVX2_V, t0, t1, acc);
    else if (V == 2)
        avx2_block_v(f, xt, AVX2_V >= 2 ? 2 : 1, t0, t1, acc);
    else
        avx2_block_v(f, xt, 1, t0, t1, acc);
}

#ifndef AVX2_ROW_V
#define AVX2_ROW_V 5 /* measured: 4 and 6 slower, 8 spills */
#endif
/* Trees [t, t + 8 V) of one row, one lane per tree, V <= AVX2_ROW_V; their
 * leaf values go to leaf[8 V] in tree order, and p's pending values are
 * added level by level. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
avx2_row_group(const psi_forest_t *f, const float *x, int t, int V, float *leaf, pending_t *p)
{
    const int D = f->pdepth, I = (1 << D) - 1;
    const __m256i one = _mm256_set1_epi32(1), fmask = _mm256_set1_epi32((int32_t)FEATURE_MASK);
    const __m256i lane8 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i k[AVX2_ROW_V], tb[AVX2_ROW_V], tree[AVX2_ROW_V];
    const int top = D < ROW_TOP_LEVELS ? D : ROW_TOP_LEVELS;
    for (int v = 0; v < V; v++) {
        k[v] = _mm256_setzero_si256();
        /* Lanes past the last tree walk the last tree again (not added). */
        tree[v] =
            _mm256_min_epi32(_mm256_add_epi32(lane8, _mm256_set1_epi32(t + 8 * v)), _mm256_set1_epi32(f->n_trees - 1));
        tb[v] = _mm256_mullo_epi32(tree[v], _mm256_set1_epi32(I));
    }
    p->per = (p->n + D - 1) / D;
    for (int d = 0; d < D; d++) {
#pragma GCC unroll 8 /* the V vectors' k stay in registers (measured: 8% faster than a loop over them) */
        for (int v = 0; v < V; v++) {
            __m256 thr = _mm256_setzero_ps(); /* set below; initialized for the compiler's sake */
            __m256i feat = _mm256_setzero_si256();
            if (d < top) { /* each of the level's nodes for 8 trees by one load, kept where k is */
                for (int j = (1 << d) - 1; j < (2 << d) - 1; j++) {
                    size_t at = (size_t)j * f->ntp + (size_t)(t + 8 * v);
                    __m256 c = _mm256_loadu_ps(f->tthr + at), cf = _mm256_loadu_ps((const float *)f->tfeat + at);
                    if (j == (1 << d) - 1) {
                        thr = c;
                        feat = _mm256_castps_si256(cf);
                        continue;
                    }
                    __m256 here = _mm256_castsi256_ps(_mm256_cmpeq_epi32(k[v], _mm256_set1_epi32(j)));
                    thr = _mm256_blendv_ps(thr, c, here);
                    feat = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(feat), cf, here));
                }
            } else {
                avx2_nodes(f->pnode, _mm256_add_epi32(tb[v], k[v]), &thr, &feat);
            }
            __m256 xv = _mm256_i32gather_ps(x, _mm256_and_si256(feat, fmask), 4);
            k[v] = _mm256_sub_epi32(_mm256_add_epi32(_mm256_add_epi32(k[v], k[v]), one), avx2_right(xv, thr, feat));
        }
        pending_add(p);
    }
    /* Leaf of tree t + i at pleaf + (t + i) * (I + 1) + k - I = tb + (t + i) + k - I. */
    for (int v = 0; v < V; v++) {
        __m256i li = _mm256_add_epi32(_mm256_add_epi32(tb[v], k[v]), _mm256_sub_epi32(tree[v], _mm256_set1_epi32(I)));
        _mm256_storeu_ps(leaf + 8 * v, _mm256_i32gather_ps(f->pleaf, li, 4));
    }
}

/* One row: AVX2_ROW_V vectors of 8 trees at once (the last group as many
 * as it needs); the leaf values are added one by one in tree order, each
 * group's while the next group is walked. */
__attribute__((target("avx2"))) double psi_forest_avx2_row(const psi_forest_t *f, const float *x)
{
    const int L = 8 * AVX2_ROW_V;
    float leaf[2][8 * AVX2_ROW_V]; /* this group's values and the pending ones */
    pending_t p = {f->base_score, leaf[1], 0, 0, 0};
    for (int t = 0, i = 0; t < f->n_trees; t += L, i ^= 1) {
        int m = f->n_trees - t < L ? f->n_trees - t : L, nv = (m + 7) / 8;
        switch (nv) {
        case 1: avx2_row_group(f, x, t, 1, leaf[i], &p); break;
        case 2: avx2_row_group(f, x, t, 2, leaf[i], &p); break;
        case 3: avx2_row_group(f, x, t, 3, leaf[i], &p); break;
        case 4: avx2_row_group(f, x, t, 4 < AVX2_ROW_V ? 4 : AVX2_ROW_V, leaf[i], &p); break;
        default: avx2_row_group(f, x, t, AVX2_ROW_V, leaf[i], &p); break;
        }
        pending_next(&p, leaf[i], m);
    }
    pending_next(&p, NULL, 0);
    return p.acc;
}

#endif
