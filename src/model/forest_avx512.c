/* The AVX-512 kernels of the forest (forest_internal.h): on the perfect
 * layout, and the node walk for forests without it; built with the target
 * attribute and chosen at run time where the CPU has AVX-512F. */
#include "model/forest_internal.h"

#if HAVE_X86
/*
 * The AVX2 kernels' scheme with AVX-512: sixteen walks per vector, the
 * right-hand test in a mask register.
 */
__attribute__((target("avx512f"))) static inline __mmask16 avx512_right(__m512 x, __m512 thr, __m512i feat)
{
    __mmask16 ge = _mm512_cmp_ps_mask(x, thr, _CMP_GE_OQ);
    __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    __mmask16 mr = _mm512_test_epi32_mask(feat, _mm512_set1_epi32((int32_t)MISSING_RIGHT));
    return ge | (nan & mr);
}

/* Thresholds and features of nodes base[k], sixteen lanes: two gathers of
 * eight 8-byte nodes, split by two permutes. */
__attribute__((target("avx512f"))) static inline void avx512_nodes(const pnode_t *base, __m512i k, __m512 *thr,
                                                                   __m512i *feat)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const long long *b = (const long long *)base;
    __m512 lo = _mm512_castsi512_ps(_mm512_i32gather_epi64(_mm512_castsi512_si256(k), b, 8));
    __m512 hi = _mm512_castsi512_ps(_mm512_i32gather_epi64(_mm512_extracti64x4_epi64(k, 1), b, 8));
    *thr = _mm512_permutex2var_ps(lo, even, hi);
    *feat = _mm512_castps_si512(_mm512_permutex2var_ps(lo, odd, hi));
}

#ifndef AVX512_PERM_LEVELS
#define AVX512_PERM_LEVELS 8 /* levels below it look nodes up by permutes (<= 8: 128 nodes) */
#endif

/* tab[j] for the sixteen lanes of j, 0 <= j < 2^d (d <= 7), from registers:
 * one permute of 16 or 32 entries per 32 entries, then a select by the high
 * bits of j. tab holds at least 16 entries (PERM_PAD). */
__attribute__((target("avx512f"))) static inline __m512 avx512_lookup(const float *tab, int d, __m512i j)
{
    if (d <= 4)
        return _mm512_permutexvar_ps(j, _mm512_loadu_ps(tab));
    __m512 r = _mm512_permutex2var_ps(_mm512_loadu_ps(tab), j, _mm512_loadu_ps(tab + 16));
    __m512i hi = _mm512_srli_epi32(j, 5);
    const int chunks = 1 << (d - 5);
#pragma GCC unroll 4 /* as in avx2_lookup (measured: 3-6% faster at 1k) */
    for (int c = 1; c < chunks; c++) {
        __m512 q = _mm512_permutex2var_ps(_mm512_loadu_ps(tab + 32 * c), j, _mm512_loadu_ps(tab + 32 * c + 16));
        r = _mm512_mask_mov_ps(r, _mm512_cmpeq_epi32_mask(hi, _mm512_set1_epi32(c)), q);
    }
    return r;
}

/* Thresholds and features of nodes k (absolute in the tree at t * I) of
 * level d: permutes from the split arrays where the level is narrow enough,
 * else two gathers. */
__attribute__((target("avx512f"))) static inline void avx512_level_nodes(const psi_forest_t *f, size_t tb, int d,
                                                                         __m512i k, __m512 *thr, __m512i *feat)
{
    if (d < AVX512_PERM_LEVELS) {
        size_t l0 = tb + ((size_t)1 << d) - 1;
        __m512i j = _mm512_sub_epi32(k, _mm512_set1_epi32((1 << d) - 1));
        *thr = avx512_lookup(f->pthr + l0, d, j);
        *feat = _mm512_castps_si512(avx512_lookup((const float *)f->pfeat + l0, d, j));
        return;
    }
    avx512_nodes(f->pnode + tb, k, thr, feat);
}

/* As avx2_rows_t: the V vectors of 16 rows of a block, their offsets in
 * the block's columns (rows 16 v ... 16 v + 15) and their rows' sums. */
typedef struct {
    __m512i lane[AVX512_V];
    __m512 acc[AVX512_V];
} avx512_rows_t;

/* Trees [t, t + G) for the V vectors of rows r of block xt, walked in
 * lockstep (G * V independent walks hide each other's gather latency); each
 * tree's leaves are added to r->acc in tree order. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
avx512_trees(const psi_forest_t *f, const float *xt, int V, int t0, int G, avx512_rows_t *r)
{
    const __m512i *lane = r->lane;
    __m512 *acc = r->acc;
    const int D = f->pdepth, I = (1 << D) - 1, rows = 16 * V, shift = V == 4 ? 6 : V == 2 ? 5 : 4;
    const __m512i one = _mm512_set1_epi32(1), fmask = _mm512_set1_epi32((int32_t)FEATURE_MASK);
    const int top = D < AVX512_TOP_LEVELS ? D : AVX512_TOP_LEVELS;
    __m512i k[TREE_LOCKSTEP][AVX512_V];
    for (int g = 0; g < G; g++)
        for (int v = 0; v < V; v++)
            k[g][v] = _mm512_setzero_si512();
    for (int d = 0; d < top; d++)
        for (int g = 0; g < G; g++) {
            const pnode_t *nb = f->pnode + (size_t)(t0 + g) * (size_t)I;
            __mmask16 r[AVX512_V] = {0};
            for (int j = (1 << d) - 1; j < (2 << d) - 1; j++) {
                __m512 thr = _mm512_set1_ps(nb[j].threshold);
                __m512i feat = _mm512_set1_epi32((int32_t)nb[j].feature), at = _mm512_set1_epi32(j);
                const float *c = xt + (size_t)(nb[j].feature & FEATURE_MASK) * (size_t)rows;
                for (int v = 0; v < V; v++)
                    r[v] |= _mm512_cmpeq_epi32_mask(k[g][v], at) & avx512_right(_mm512_loadu_ps(c + 16 * v), thr, feat);
            }
            for (int v = 0; v < V; v++) {
                __m512i k2 = _mm512_add_epi32(_mm512_add_epi32(k[g][v], k[g][v]), one);
                k[g][v] = _mm512_mask_add_epi32(k2, r[v], k2, one);
            }
        }
    for (int d = top; d < D; d++)
        for (int g = 0; g < G; g++)
            for (int v = 0; v < V; v++) {
                __m512 thr;
                __m512i feat;
                avx512_level_nodes(f, (size_t)(t0 + g) * (size_t)I, d, k[g][v], &thr, &feat);
                __m512i off = _mm512_add_epi32(_mm512_slli_epi32(_mm512_and_si512(feat, fmask), shift), lane[v]);
                __mmask16 r = avx512_right(_mm512_i32gather_ps(off, xt, 4), thr, feat);
                __m512i k2 = _mm512_add_epi32(_mm512_add_epi32(k[g][v], k[g][v]), one);
                k[g][v] = _mm512_mask_add_epi32(k2, r, k2, one);
            }
    for (int g = 0; g < G; g++) {
        const float *lb = f->pleaf + (size_t)(t0 + g) * (size_t)(I + 1) - I;
        for (int v = 0; v < V; v++)
            acc[v] = _mm512_add_ps(acc[v], _mm512_i32gather_ps(k[g][v], lb, 4));
    }
}

/* As avx2_block_v: V (1 or 2) vectors of 16 rows of the column-major block
 * xt (rows = 16 V), trees [t0, t1), sums read from and written to acc. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
avx512_block_v(const psi_forest_t *f, const float *xt, int V, int t0, int t1, float *acc_io)
{
    avx512_rows_t r;
    for (int v = 0; v < V; v++) {
        r.lane[v] = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                     _mm512_set1_epi32(16 * v));
        r.acc[v] = _mm512_loadu_ps(acc_io + 16 * v);
    }
    int t = t0;
    for (; t + TREE_LOCKSTEP <= t1; t += TREE_LOCKSTEP) {
        if (TREE_PREFETCH && t + TREE_LOCKSTEP < t1)
            prefetch_trees(f, t + TREE_LOCKSTEP, t + 2 * TREE_LOCKSTEP < t1 ? t + 2 * TREE_LOCKSTEP : t1);
        avx512_trees(f, xt, V, t, TREE_LOCKSTEP, &r);
    }
    for (; t < t1; t++)
        avx512_trees(f, xt, V, t, 1, &r);
    for (int v = 0; v < V; v++)
        _mm512_storeu_ps(acc_io + 16 * v, r.acc[v]);
}

int psi_forest_avx512_vectors(size_t n) { return n > 32 && AVX512_V == 4 ? 4 : n > 16 && AVX512_V >= 2 ? 2 : 1; }

/* As avx2_block, sixteen rows per vector. */
__attribute__((target("avx512f"))) void psi_forest_avx512_block(const psi_forest_t *f, const float *xt, size_t n,
                                                                int t0, int t1, float *acc)
{
    int V = psi_forest_avx512_vectors(n);
    if (V == 4)
        avx512_block_v(f, xt, AVX512_V, t0, t1, acc);
    else if (V == 2)
        avx512_block_v(f, xt, AVX512_V >= 2 ? 2 : 1, t0, t1, acc);
    else
        avx512_block_v(f, xt, 1, t0, t1, acc);
}

#ifndef AVX512_ROW_V
#define AVX512_ROW_V 4
#endif
#ifndef AVX512_ROW_TOP
#define AVX512_ROW_TOP 1 /* the same for AVX-512 (measured: 1 over 3) */
#endif
/* Trees [t, t + 16 V) of one row on the perfect layout, one lane per tree;
 * their leaf values go to leaf[16 V] in tree order, and p's pending values
 * are added level by level. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
avx512_row_group(const psi_forest_t *f, const float *x, int t, int V, float *leaf, pending_t *p)
{
    const int D = f->pdepth, I = (1 << D) - 1;
    const __m512i one = _mm512_set1_epi32(1), fmask = _mm512_set1_epi32((int32_t)FEATURE_MASK);
    const __m512i lane16 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i k[AVX512_ROW_V], tree[AVX512_ROW_V], tb[AVX512_ROW_V];
    for (int v = 0; v < V; v++) {
        k[v] = _mm512_setzero_si512();
        /* Lanes past the last tree walk the last tree again (not added). */
        tree[v] = _mm512_min_epi32(_mm512_add_epi32(lane16, _mm512_set1_epi32(t + 16 * v)),
                                   _mm512_set1_epi32(f->n_trees - 1));
        tb[v] = _mm512_mullo_epi32(tree[v], _mm512_set1_epi32(I));
    }
    const int top = D < AVX512_ROW_TOP ? D : AVX512_ROW_TOP;
    p->per = (p->n + D - 1) / D;
    for (int d = 0; d < D; d++) {
#pragma GCC unroll 4 /* k in registers, as in avx2_row_group (measured: 7-9% faster at batch 1) */
        for (int v = 0; v < V; v++) {
            __m512 thr;
            __m512i feat;
            if (d < top) { /* each of the level's nodes for 16 trees by one load, kept where k is */
                size_t at = ((size_t)1 << d) - 1;
                thr = _mm512_loadu_ps(f->tthr + at * f->ntp + (size_t)(t + 16 * v));
                feat = _mm512_loadu_si512(f->tfeat + at * f->ntp + (size_t)(t + 16 * v));
                for (int j = (1 << d); j < (2 << d) - 1; j++) {
                    size_t o = (size_t)j * f->ntp + (size_t)(t + 16 * v);
                    __mmask16 here = _mm512_cmpeq_epi32_mask(k[v], _mm512_set1_epi32(j));
                    thr = _mm512_mask_loadu_ps(thr, here, f->tthr + o);
                    feat = _mm512_mask_loadu_epi32(feat, here, f->tfeat + o);
                }
            } else {
                avx512_nodes(f->pnode, _mm512_add_epi32(tb[v], k[v]), &thr, &feat);
            }
            __mmask16 r = avx512_right(_mm512_i32gather_ps(_mm512_and_si512(feat, fmask), x, 4), thr, feat);
            __m512i k2 = _mm512_add_epi32(_mm512_add_epi32(k[v], k[v]), one);
            k[v] = _mm512_mask_add_epi32(k2, r, k2, one);
        }
        pending_add(p);
    }
    /* Leaf of tree u at pleaf + u * (I + 1) + k - I = tb + u + k - I. */
    for (int v = 0; v < V; v++) {
        __m512i li = _mm512_add_epi32(_mm512_add_epi32(tb[v], k[v]), _mm512_sub_epi32(tree[v], _mm512_set1_epi32(I)));
        _mm512_storeu_ps(leaf + 16 * v, _mm512_i32gather_ps(li, f->pleaf, 4));
    }
}

/* One row on the perfect layout: AVX512_ROW_V vectors of 16 trees at once
 * (the last group as many as it needs); the leaf values are added one by one
 * in tree order, each group's while the next group is walked. */
__attribute__((target("avx512f"))) double psi_forest_avx512_row(const psi_forest_t *f, const float *x)
{
    const int L = 16 * AVX512_ROW_V;
    float leaf[2][16 * AVX512_ROW_V]; /* this group's values and the pending ones */
    pending_t p = {f->base_score, leaf[1], 0, 0, 0};
    for (int t = 0, i = 0; t < f->n_trees; t += L, i ^= 1) {
        int m = f->n_trees - t < L ? f->n_trees - t : L, nv = (m + 15) / 16;
        if (nv == AVX512_ROW_V)
            avx512_row_group(f, x, t, AVX512_ROW_V, leaf[i], &p);
        else if (nv == 1)
            avx512_row_group(f, x, t, 1, leaf[i], &p);
        else if (nv == 2)
            avx512_row_group(f, x, t, 2, leaf[i], &p);
        else
            avx512_row_group(f, x, t, 3 < AVX512_ROW_V ? 3 : AVX512_ROW_V, leaf[i], &p);
        pending_next(&p, leaf[i], m);
    }
    pending_next(&p, NULL, 0);
    return p.acc;
}

#endif

#if HAVE_AVX512
/*
 * The same two kernels with AVX-512 gathers: sixteen walks advance in one
 * vector, one lane per row (block kernel) or per tree (single-row kernel).
 * A node is four 32-bit words, so lane i's node fields are gathered at word
 * 4 * idx + k. Each lane adds in float in tree order, as the scalar code does,
 * so the results are identical to it. Chosen at run time when the CPU has
 * AVX-512F; the scalar kernels remain the reference and the fallback.
 */

__attribute__((target("avx512f"))) static inline __m512i simd_step(const float *nf, const int32_t *ni, __m512i idx,
                                                                   const float *x, __m512i row_off)
{
    const __m512i one = _mm512_set1_epi32(1), two = _mm512_set1_epi32(2);
    __m512i w = _mm512_slli_epi32(idx, 2);
    __m512 thr = _mm512_i32gather_ps(w, nf, 4);
    __m512i feat = _mm512_i32gather_epi32(_mm512_add_epi32(w, one), ni, 4);
    __m512i left = _mm512_i32gather_epi32(_mm512_add_epi32(w, two), ni, 4);
    __m512i col = _mm512_and_si512(feat, _mm512_set1_epi32((int32_t)FEATURE_MASK));
    __m512 v = _mm512_i32gather_ps(_mm512_add_epi32(row_off, col), x, 4);
    __mmask16 ge = _mm512_cmp_ps_mask(v, thr, _CMP_GE_OQ);
    __mmask16 missing = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    __mmask16 mr = _mm512_test_epi32_mask(feat, _mm512_set1_epi32((int32_t)MISSING_RIGHT));
    return _mm512_mask_add_epi32(left, ge | (missing & mr), left, one);
}

__attribute__((target("avx512f"))) static inline __m512 simd_leaf(const float *nf, __m512i idx)
{
    __m512i w = _mm512_add_epi32(_mm512_slli_epi32(idx, 2), _mm512_set1_epi32(3));
    return _mm512_i32gather_ps(w, nf, 4);
}

/* SIMD_VECS x 16 rows x all trees; the vectors are independent walks that
 * hide each other's gather latency. Row offsets are 32-bit gather indices, so
 * the caller checks that SIMD_ROWS * stride fits. */
__attribute__((target("avx512f"))) void psi_forest_avx512_node_block(const psi_forest_t *f, const float *x,
                                                                     size_t stride, double *out)
{
    const float *nf = (const float *)f->nodes;
    const int32_t *ni = (const int32_t *)f->nodes;
    __m512i row_off[SIMD_VECS];
    __m512 acc[SIMD_VECS];
    __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int v = 0; v < SIMD_VECS; v++) {
        row_off[v] =
            _mm512_mullo_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32(16 * v)), _mm512_set1_epi32((int32_t)stride));
        acc[v] = _mm512_set1_ps(f->base_score);
    }
    for (int t = 0; t < f->n_trees; t++) {
        __m512i idx[SIMD_VECS];
        for (int v = 0; v < SIMD_VECS; v++)
            idx[v] = _mm512_set1_epi32(f->root[t]);
        for (int d = f->depth[t]; d > 0; d--)
            for (int v = 0; v < SIMD_VECS; v++)
                idx[v] = simd_step(nf, ni, idx[v], x, row_off[v]);
        for (int v = 0; v < SIMD_VECS; v++)
            acc[v] = _mm512_add_ps(acc[v], simd_leaf(nf, idx[v]));
    }
    for (int v = 0; v < SIMD_VECS; v++) {
        _mm512_storeu_pd(out + 16 * v, _mm512_cvtps_pd(_mm512_castps512_ps256(acc[v])));
        _mm512_storeu_pd(out + 16 * v + 8,
                         _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[v]), 1))));
    }
}

/* One row, two vectors of sixteen trees walking at once; the leaf values are
 * then added one by one in tree order. */
__attribute__((target("avx512f"))) double psi_forest_avx512_node_row(const psi_forest_t *f, const float *x)
{
    const float *nf = (const float *)f->nodes;
    const int32_t *ni = (const int32_t *)f->nodes;
    const __m512i zero = _mm512_setzero_si512();
    float acc = f->base_score, leaf[2 * SIMD_LANES];
    int t = 0;
    for (; t + 2 * SIMD_LANES <= f->n_trees; t += 2 * SIMD_LANES) {
        __m512i a = _mm512_loadu_si512(f->root + t);
        __m512i b = _mm512_loadu_si512(f->root + t + SIMD_LANES);
        int depth = 0;
        for (int g = 0; g < 2 * SIMD_LANES; g++)
            depth = f->depth[t + g] > depth ? f->depth[t + g] : depth;
        for (int d = 0; d < depth; d++) {
            a = simd_step(nf, ni, a, x, zero);
            b = simd_step(nf, ni, b, x, zero);
        }
        _mm512_storeu_ps(leaf, simd_leaf(nf, a));
        _mm512_storeu_ps(leaf + SIMD_LANES, simd_leaf(nf, b));
        for (int g = 0; g < 2 * SIMD_LANES; g++)
            acc += leaf[g];
    }
    for (; t < f->n_trees; t++) {
        int32_t i = f->root[t];
        for (int d = f->depth[t]; d > 0; d--)
            i = step(&f->nodes[i], x);
        acc += f->nodes[i].leaf;
    }
    return acc;
}
#endif
