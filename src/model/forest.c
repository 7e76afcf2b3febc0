/*
 * Our own evaluator of an XGBoost tree ensemble (see forest.h and
 * docs/prediction.md).
 *
 * Every tree is flattened into one shared array of 16-byte nodes, laid out
 * breadth first with the two children of a split side by side. A node holds
 * its threshold, its feature with the missing-value direction packed into
 * the top bit, the index of its left child and, at a leaf, the leaf value.
 * A step down is arithmetic (left + went_right), never a branch on the data,
 * and a leaf keeps a row where it is: a tree of depth d is evaluated by
 * exactly d steps per row, so several rows (or several trees) walk in
 * lockstep, which hides the load latency of one walk behind the others.
 *
 * Rows are evaluated in blocks, tree-major inside a block, so that the top of
 * each tree stays in L1 while the block's rows walk it. Each row's sum is kept
 * in float and the trees are added one by one, in model order, to the base
 * score, which is the order and precision of XGBoost 1.7's CPU predictor
 * (InitOutPredictions fills base_score, PredictByAllTrees adds each tree's
 * leaf value in float). Our result therefore equals XGBoost's bit for bit.
 */
#include "model/forest.h"

#include "common/common.h"
#include "model/model.h"

#include <cjson/cJSON.h>
#include <xgboost/c_api.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif
#define HAVE_AVX512 HAVE_X86

/* Rows walked in lockstep through one tree by the block kernel. */
#define BLOCK_ROWS 16
/* Trees walked in lockstep for one row by the single-row kernel. */
#define TREE_GROUP 8
/* Below this many rows a call stays on the calling thread: starting a team
 * costs more than the work. */
#define PARALLEL_MIN_ROWS 256

/* One node, 16 bytes so that a node never straddles a cache line. The two
 * children of a split are stored side by side (left, left + 1), so that the
 * step below is arithmetic, not a branch. A leaf has a NaN threshold and
 * MISSING_RIGHT clear, which sends every row to `left`, the leaf itself. */
typedef struct {
    float threshold;  /* go left if x < threshold; NaN at a leaf */
    uint32_t feature; /* feature index | MISSING_RIGHT (0 at a leaf) */
    int32_t left;     /* absolute index of the left child; right is left + 1 */
    float leaf;       /* at a leaf, its value */
} node_t;

#define MISSING_RIGHT 0x80000000u
#define FEATURE_MASK 0x7fffffffu

/* A split of the perfect layout: 8 bytes, one 64-bit gather per node. */
typedef struct {
    float threshold;
    uint32_t feature; /* feature index | MISSING_RIGHT */
} pnode_t;

/* Trees deeper than this keep the node-walk kernels (the padding doubles per
 * level). */
#define PERFECT_MAX_DEPTH 12

struct psi_forest {
    node_t *nodes;
    int32_t *root;  /* [n_trees] index of each tree's root in nodes */
    int32_t *depth; /* [n_trees] longest root-to-leaf path (0 for a lone leaf) */
    int n_trees, n_features;
    float base_score;
    int kernel; /* the kernel psi_forest_predict runs (PS_FOREST_*) */
    /* The same trees padded to perfect binary trees of depth pdepth (0: not
     * built, a tree is deeper than PERFECT_MAX_DEPTH), for the AVX2 kernels:
     * tree t's internal nodes in level order at pnode + t * (2^pdepth - 1),
     * node k's children at 2k + 1 and 2k + 2, its leaves at
     * pleaf + t * 2^pdepth. A leaf above the last level becomes splits that
     * always go left (NaN threshold, missing goes left) to a copy of it. */
    pnode_t *pnode;
    float *pleaf;
    int pdepth;
    /* The same splits as two arrays (threshold, feature | MISSING_RIGHT),
     * same indices, PERM_PAD entries past the end: the block kernels load a
     * level of a tree into registers and look nodes up by permutes. */
    float *pthr;
    uint32_t *pfeat;
    /* The top ROW_TOP_LEVELS levels again, tree-minor for the one-row
     * kernels: node k of tree t at tthr[k * ntp + t], ntp = n_trees + 16
     * (the padding repeats the last tree), so that the same node of 8 or 16
     * consecutive trees is one contiguous load. */
    float *tthr;
    uint32_t *tfeat;
    size_t ntp;
    /* QuickScorer (qs_* below; built where pdepth <= QS_MAX_DEPTH): the real
     * splits of feature j in ascending threshold at [qs_off[j], qs_off[j+1])
     * of qs_thr / qs_tk (tree << 8 | node k of the perfect layout), those
     * that send a missing value right at [qs_moff[j], qs_moff[j+1]) of
     * qs_mtk; qs_mask[k * qs_words ...]: the leaves that node k leaves
     * possible when x goes right (its left subtree's leaves cleared). */
    float *qs_thr;
    uint32_t *qs_tk, *qs_mtk;
    int32_t *qs_off, *qs_moff;
    uint64_t *qs_mask;
    int qs_words;
    size_t l2;          /* bytes of L2 cache per core, for the tiles */
    size_t tile_blocks; /* psi_forest_set_tiles (0: by the rule) */
    int tile_trees;
};
#define PERM_PAD 64

/* One step down: the child that x sends the row to. XGBoost goes left when
 * x < threshold (compared in float) and follows the default direction when x
 * is missing (NaN). Both comparisons are false for a NaN threshold, so a leaf
 * keeps the row where it is. Written without branches: which way a row goes
 * cannot be predicted. */
static inline int32_t step(const node_t *nd, const float *x)
{
    float v = x[nd->feature & FEATURE_MASK];
    uint32_t right = (uint32_t)(v >= nd->threshold) | ((uint32_t)(v != v) & (nd->feature >> 31));
    return nd->left + (int32_t)right;
}

/* ------------------------------------------------------------------------ */
/* Evaluation                                                                */
/* ------------------------------------------------------------------------ */

/* n rows (at most BLOCK_ROWS), tree-major: all rows walk one tree in lockstep
 * before the next tree is taken. Inlined with a constant n for full blocks so
 * that the compiler unrolls the lockstep loops. */
static inline __attribute__((always_inline)) void block_kernel(const psi_forest_t *f, const float *x, size_t n,
                                                               size_t stride, double *out)
{
    float acc[BLOCK_ROWS];
    int32_t idx[BLOCK_ROWS];
    for (size_t i = 0; i < n; i++)
        acc[i] = f->base_score;
    const node_t *nodes = f->nodes;
    for (int t = 0; t < f->n_trees; t++) {
        int32_t r = f->root[t];
        for (size_t i = 0; i < n; i++)
            idx[i] = r;
        for (int d = f->depth[t]; d > 0; d--)
            for (size_t i = 0; i < n; i++)
                idx[i] = step(&nodes[idx[i]], x + i * stride);
        for (size_t i = 0; i < n; i++)
            acc[i] += nodes[idx[i]].leaf;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = acc[i];
}

static void predict_full_block(const psi_forest_t *f, const float *x, size_t stride, double *out)
{
    block_kernel(f, x, BLOCK_ROWS, stride, out);
}

static void predict_partial_block(const psi_forest_t *f, const float *x, size_t n, size_t stride, double *out)
{
    block_kernel(f, x, n, stride, out);
}

/* One row, TREE_GROUP trees in lockstep: for a single row the trees are the
 * only independent walks there are. The leaf values are still added in tree
 * order. */
static double predict_row(const psi_forest_t *f, const float *x)
{
    const node_t *nodes = f->nodes;
    float acc = f->base_score;
    int32_t idx[TREE_GROUP];
    int t = 0;
    for (; t + TREE_GROUP <= f->n_trees; t += TREE_GROUP) {
        int depth = 0;
        for (int g = 0; g < TREE_GROUP; g++) {
            idx[g] = f->root[t + g];
            if (f->depth[t + g] > depth)
                depth = f->depth[t + g];
        }
        for (int d = 0; d < depth; d++)
            for (int g = 0; g < TREE_GROUP; g++)
                idx[g] = step(&nodes[idx[g]], x);
        for (int g = 0; g < TREE_GROUP; g++)
            acc += nodes[idx[g]].leaf;
    }
    for (; t < f->n_trees; t++) {
        int32_t i = f->root[t];
        for (int d = f->depth[t]; d > 0; d--)
            i = step(&nodes[i], x);
        acc += nodes[i].leaf;
    }
    return acc;
}

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
#ifndef AVX2_V
#define AVX2_V 4 /* vectors of 8 rows walking together in the block kernel */
#endif
#define AVX2_ROWS (8 * AVX2_V)
#ifndef AVX512_V
#define AVX512_V 2 /* vectors of 16 rows in the AVX-512 block kernel (1, 2 or 4) */
#endif
#define AVX512_ROWS (16 * AVX512_V)
#define BLOCK_MAX_ROWS (AVX2_ROWS > AVX512_ROWS ? AVX2_ROWS : AVX512_ROWS)
#ifndef TREE_LOCKSTEP
#define TREE_LOCKSTEP 4 /* trees walked at once by the AVX-512 block kernel (measured: 4 over 2, 8) */
#endif
#ifndef AVX2_TOP_LEVELS
#define AVX2_TOP_LEVELS 2 /* levels walked by contiguous loads (root included; measured: 2 over 1, 3, 4) */
#endif
#ifndef AVX512_TOP_LEVELS
#define AVX512_TOP_LEVELS                                                                                              \
    1 /* the same for AVX-512: only the root, the levels below look their nodes up by permutes (measured: 1 over 2-5) */
#endif

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

/* Trees walked at once by the AVX2 block kernel: more independent walks
 * hide more of the gathers' latency (measured: 8 is 3-8% faster than 2 and 4
 * at 1k and 100k rows, 16 alike). */
#ifndef AVX2_LOCKSTEP
#define AVX2_LOCKSTEP 8
#endif

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

/* Trees [t0, t0 + G) for the V vectors of rows of block xt, the levels
 * below the top in lockstep; each tree's leaves are added to acc in tree
 * order. */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
avx2_trees(const psi_forest_t *f, const float *xt, int V, int t0, int G, const __m256i *lane, __m256 *acc)
{
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

#ifndef TREE_PREFETCH
#define TREE_PREFETCH 0 /* prefetch the next trees' deep levels and leaves into L1 */
#endif

/* Asks for the lines of trees [t0, t1) that gathers read (the levels below
 * the permute lookups and the leaves), so that they come from L2 while the
 * current trees are walked. */
static inline void prefetch_trees(const psi_forest_t *f, int t0, int t1)
{
    const size_t I = ((size_t)1 << f->pdepth) - 1, first = I / 4; /* the last two levels */
    for (int t = t0; t < t1; t++) {
        const char *n = (const char *)(f->pnode + (size_t)t * I + first),
                   *e = (const char *)(f->pnode + (size_t)(t + 1) * I);
        for (; n < e; n += 64)
            __builtin_prefetch(n);
        const char *l = (const char *)(f->pleaf + (size_t)t * (I + 1));
        for (size_t b = 0; b < (I + 1) * sizeof(float); b += 64)
            __builtin_prefetch(l + b);
    }
}

/* V (1, 2 or 4) vectors of 8 rows (rows = 8 V) of the column-major block
 * xt, trees [t0, t1): each row's sum is read from acc and written back (in
 * float, so that a row walked tree block by tree block adds exactly as one
 * walked through all trees at once). */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
avx2_block_v(const psi_forest_t *f, const float *xt, int V, int t0, int t1, float *acc_io)
{
    __m256i lane[AVX2_V];
    __m256 acc[AVX2_V];
    for (int v = 0; v < V; v++) {
        lane[v] = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(8 * v));
        acc[v] = _mm256_loadu_ps(acc_io + 8 * v);
    }
    int t = t0;
    for (; t + AVX2_LOCKSTEP <= t1; t += AVX2_LOCKSTEP) {
        if (TREE_PREFETCH && t + AVX2_LOCKSTEP < t1)
            prefetch_trees(f, t + AVX2_LOCKSTEP, t + 2 * AVX2_LOCKSTEP < t1 ? t + 2 * AVX2_LOCKSTEP : t1);
        avx2_trees(f, xt, V, t, AVX2_LOCKSTEP, lane, acc);
    }
    for (; t < t1; t++)
        avx2_trees(f, xt, V, t, 1, lane, acc);
    for (int v = 0; v < V; v++)
        _mm256_storeu_ps(acc_io + 8 * v, acc[v]);
}

/* Rows [0, n) of x (row-major, stride), n <= rows, copied column-major into
 * xt (feature j of row r at xt[j * rows + r]); rows past n repeat row 0. */
static void transpose_block(const psi_forest_t *f, const float *x, size_t n, size_t stride, size_t rows, float *xt)
{
    size_t nf = (size_t)f->n_features;
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + (r < n ? r : 0) * stride;
        for (size_t j = 0; j < nf; j++)
            xt[j * rows + r] = xr[j];
    }
}

/* The vectors of 8 rows a block of n rows (n <= AVX2_ROWS) walks with. */
static int avx2_vectors(size_t n) { return n > 16 && AVX2_V == 4 ? 4 : n > 8 && AVX2_V >= 2 ? 2 : 1; }

/* Trees [t0, t1) over the block xt of n rows (column-major, 8 V rows). */
__attribute__((target("avx2"))) static void avx2_block(const psi_forest_t *f, const float *xt, size_t n, int t0, int t1,
                                                       float *acc)
{
    int V = avx2_vectors(n);
    if (V == 4)
        avx2_block_v(f, xt, AVX2_V, t0, t1, acc);
    else if (V == 2)
        avx2_block_v(f, xt, AVX2_V >= 2 ? 2 : 1, t0, t1, acc);
    else
        avx2_block_v(f, xt, 1, t0, t1, acc);
}

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

/* Trees [t, t + G) for the V vectors of rows of block xt, walked in
 * lockstep (G * V independent walks hide each other's gather latency); each
 * tree's leaves are added to acc in tree order. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
avx512_trees(const psi_forest_t *f, const float *xt, int V, int t0, int G, const __m512i *lane, __m512 *acc)
{
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
    __m512i lane[AVX512_V];
    __m512 acc[AVX512_V];
    for (int v = 0; v < V; v++) {
        lane[v] = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                   _mm512_set1_epi32(16 * v));
        acc[v] = _mm512_loadu_ps(acc_io + 16 * v);
    }
    int t = t0;
    for (; t + TREE_LOCKSTEP <= t1; t += TREE_LOCKSTEP) {
        if (TREE_PREFETCH && t + TREE_LOCKSTEP < t1)
            prefetch_trees(f, t + TREE_LOCKSTEP, t + 2 * TREE_LOCKSTEP < t1 ? t + 2 * TREE_LOCKSTEP : t1);
        avx512_trees(f, xt, V, t, TREE_LOCKSTEP, lane, acc);
    }
    for (; t < t1; t++)
        avx512_trees(f, xt, V, t, 1, lane, acc);
    for (int v = 0; v < V; v++)
        _mm512_storeu_ps(acc_io + 16 * v, acc[v]);
}

static int avx512_vectors(size_t n) { return n > 32 && AVX512_V == 4 ? 4 : n > 16 && AVX512_V >= 2 ? 2 : 1; }

/* As avx2_block, sixteen rows per vector. */
__attribute__((target("avx512f"))) static void avx512_block(const psi_forest_t *f, const float *xt, size_t n, int t0,
                                                            int t1, float *acc)
{
    int V = avx512_vectors(n);
    if (V == 4)
        avx512_block_v(f, xt, AVX512_V, t0, t1, acc);
    else if (V == 2)
        avx512_block_v(f, xt, AVX512_V >= 2 ? 2 : 1, t0, t1, acc);
    else
        avx512_block_v(f, xt, 1, t0, t1, acc);
}

#ifndef ROW_TOP_LEVELS
#define ROW_TOP_LEVELS                                                                                                 \
    1 /* levels of the AVX2 one-row kernel read by contiguous loads (measured: 1 and 3 about equal, 2 slower) */
#endif
/* The leaf values of a one-row kernel's previous group of trees, still to
 * be added to the row's sum in tree order. The next group adds a share of
 * them after each of its levels, so that this chain of dependent float
 * adds runs beside that group's gathers instead of after its own. */
typedef struct {
    float acc;         /* the row's sum so far */
    const float *leaf; /* the pending values */
    int n, done, per;  /* how many, how many added, how many to add per level */
} pending_t;

/* Adds the next p->per pending values (all with per = n). */
static inline void pending_add(pending_t *p)
{
    for (int e = 0; e < p->per && p->done < p->n; e++)
        p->acc += p->leaf[p->done++];
}

/* Adds what is left and makes leaf[0, n) the pending values. */
static inline void pending_next(pending_t *p, const float *leaf, int n)
{
    p->per = p->n;
    pending_add(p);
    *p = (pending_t){p->acc, leaf, n, 0, 0};
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
__attribute__((target("avx512f"))) static double avx512_row(const psi_forest_t *f, const float *x)
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
__attribute__((target("avx2"))) static double avx2_row(const psi_forest_t *f, const float *x)
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

#if HAVE_AVX512
/*
 * The same two kernels with AVX-512 gathers: sixteen walks advance in one
 * vector, one lane per row (block kernel) or per tree (single-row kernel).
 * A node is four 32-bit words, so lane i's node fields are gathered at word
 * 4 * idx + k. Each lane adds in float in tree order, as the scalar code does,
 * so the results are identical to it. Chosen at run time when the CPU has
 * AVX-512F; the scalar kernels remain the reference and the fallback.
 */
#define SIMD_LANES 16

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
#define SIMD_VECS 4
#define SIMD_ROWS (SIMD_VECS * SIMD_LANES)
__attribute__((target("avx512f"))) static void simd_block(const psi_forest_t *f, const float *x, size_t stride,
                                                          double *out)
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
__attribute__((target("avx512f"))) static double simd_row(const psi_forest_t *f, const float *x)
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

/*
 * QuickScorer (Lucchese et al., SIGIR'15) on the perfect layout: a tree's
 * exit leaf is the leftmost leaf that no split sending x right rules out.
 * Each tree keeps a bitvector of its 2^pdepth leaves (qs_words 64-bit
 * words), all ones at the start; feature by feature, the splits on it are
 * visited in ascending threshold while x >= threshold (those send x right;
 * the first threshold above x ends the feature), and each ANDs its tree's
 * bitvector with the node's mask, which clears its left subtree. A missing
 * value visits the feature's splits that send missing values right instead.
 * No split is tested that sends x left, so the work is the number of splits
 * x goes right at, about half of all splits, against pdepth steps per tree
 * for a traversal. The leaves are then added in tree order in float, as
 * every kernel does.
 */
#define QS_MAX_DEPTH 8 /* 256 leaves: 4 words, one AVX2 register */

/* Applies the splits of one row x to the bitvectors v[n_trees * W]. */
static inline __attribute__((always_inline)) void qs_splits(const psi_forest_t *f, const float *x, int W, uint64_t *v)
{
    for (int j = 0; j < f->n_features; j++) {
        float xj = x[j];
        if (xj != xj) {
            for (int32_t e = f->qs_moff[j]; e < f->qs_moff[j + 1]; e++) {
                uint32_t tk = f->qs_mtk[e];
                const uint64_t *m = f->qs_mask + (size_t)(tk & 0xff) * (size_t)W;
                for (int w = 0; w < W; w++)
                    v[(size_t)(tk >> 8) * (size_t)W + (size_t)w] &= m[w];
            }
            continue;
        }
        for (int32_t e = f->qs_off[j]; e < f->qs_off[j + 1] && xj >= f->qs_thr[e]; e++) {
            uint32_t tk = f->qs_tk[e];
            const uint64_t *m = f->qs_mask + (size_t)(tk & 0xff) * (size_t)W;
            for (int w = 0; w < W; w++)
                v[(size_t)(tk >> 8) * (size_t)W + (size_t)w] &= m[w];
        }
    }
}

/* The sum of the exit leaves of bitvectors v, in tree order. */
static inline double qs_sum(const psi_forest_t *f, int W, const uint64_t *v)
{
    const size_t L = (size_t)1 << f->pdepth;
    float acc = f->base_score;
    for (int t = 0; t < f->n_trees; t++) {
        const uint64_t *b = v + (size_t)t * (size_t)W;
        int w = 0;
        while (w < W - 1 && b[w] == 0) /* the exit leaf is always possible: some word is not 0 */
            w++;
        acc += f->pleaf[(size_t)t * L + (size_t)(64 * w + __builtin_ctzll(b[w]))];
    }
    return acc;
}

/* One row, portable: bitvectors in v (n_trees * qs_words words). */
static double qs_row(const psi_forest_t *f, const float *x, uint64_t *v)
{
    const int W = f->qs_words;
    size_t nw = (size_t)f->n_trees * (size_t)W;
    const uint64_t all = f->pdepth >= 6 ? ~0ull : (1ull << (1 << f->pdepth)) - 1;
    for (size_t i = 0; i < nw; i++)
        v[i] = all;
    qs_splits(f, x, W, v);
    return qs_sum(f, W, v);
}

#if HAVE_X86
/* The same with 256-leaf bitvectors held as one AVX2 register each (depth
 * 8): one load, AND and store per split that sends x right. Other depths
 * take qs_row. */
__attribute__((target("avx2"))) static double qs_row_avx2(const psi_forest_t *f, const float *x, uint64_t *v)
{
    if (f->qs_words != 4)
        return qs_row(f, x, v);
    __m256i *bv = (__m256i *)v;
    const __m256i *mask = (const __m256i *)f->qs_mask;
    for (int t = 0; t < f->n_trees; t++)
        _mm256_storeu_si256(bv + t, _mm256_set1_epi32(-1));
    for (int j = 0; j < f->n_features; j++) {
        float xj = x[j];
        if (xj != xj) {
            for (int32_t e = f->qs_moff[j]; e < f->qs_moff[j + 1]; e++) {
                __m256i *b = bv + (f->qs_mtk[e] >> 8);
                __m256i m = _mm256_loadu_si256(mask + (f->qs_mtk[e] & 0xff));
                _mm256_storeu_si256(b, _mm256_and_si256(_mm256_loadu_si256(b), m));
            }
            continue;
        }
        for (int32_t e = f->qs_off[j]; e < f->qs_off[j + 1] && xj >= f->qs_thr[e]; e++) {
            __m256i *b = bv + (f->qs_tk[e] >> 8);
            __m256i m = _mm256_loadu_si256(mask + (f->qs_tk[e] & 0xff));
            _mm256_storeu_si256(b, _mm256_and_si256(_mm256_loadu_si256(b), m));
        }
    }
    return qs_sum(f, 4, v);
}
#endif

/* n rows through QuickScorer (kernel PS_FOREST_QS or PS_FOREST_QS_AVX2),
 * row by row, on the OpenMP threads for large n. */
static void qs_rows(const psi_forest_t *f, int kernel, const float *x, size_t n, size_t stride, double *out)
{
    size_t nw = (size_t)f->n_trees * (size_t)f->qs_words;
#ifdef _OPENMP
#pragma omp parallel if (n >= PARALLEL_MIN_ROWS)
#endif
    {
        uint64_t *v = psi_malloc((nw ? nw : 1) * sizeof *v + 32);
        uint64_t *va = v ? (uint64_t *)(((uintptr_t)v + 31) & ~(uintptr_t)31) : NULL;
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (long i = 0; i < (long)n; i++) {
            const float *xi = x + (size_t)i * stride;
#if HAVE_X86
            if (va && kernel == PS_FOREST_QS_AVX2) {
                out[i] = qs_row_avx2(f, xi, va);
                continue;
            }
#endif
            out[i] = va ? qs_row(f, xi, va) : predict_row(f, xi); /* no memory: the node walk needs none */
        }
        free(v);
    }
    (void)kernel;
}

/*
 * Tiles (docs/prediction.md, "Tiles"): a tile of row blocks walks a block of
 * trees, then the next block of trees, so that both stay in the L2 cache
 * while they meet: the tile's column-major rows take at most 1/TILE_L2_SHARE
 * of L2, and so do the tree block's nodes and leaves. Each row's sum is kept
 * in float between tree blocks, so the trees are still added in model order.
 * TILE_L2_SHARE 0: no tiling (one row block walks every tree).
 */
#ifndef TILE_L2_SHARE
#define TILE_L2_SHARE 4
#endif
#define TILE_MAX_BLOCKS 64

/* Bytes of this CPU's L2 cache per core (1 MiB where the C library cannot
 * tell); read once, when the forest is built. */
static size_t l2_bytes(void)
{
    long v = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
    v = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return v > 0 ? (size_t)v : (size_t)1 << 20;
}

#if HAVE_X86

/* Row blocks per tile and trees per tree block for f (rows per block). */
static void tile_shape(const psi_forest_t *f, size_t rows, size_t *blocks, int *trees)
{
    *blocks = 1;
    *trees = f->n_trees;
    if (f->tile_blocks > 0) {
        *blocks = f->tile_blocks < TILE_MAX_BLOCKS ? f->tile_blocks : TILE_MAX_BLOCKS;
        *trees = f->tile_trees < f->n_trees ? f->tile_trees : f->n_trees;
        return;
    }
    if (TILE_L2_SHARE <= 0)
        return;
    size_t share = f->l2 / (TILE_L2_SHARE > 0 ? TILE_L2_SHARE : 1);
    size_t I = ((size_t)1 << f->pdepth) - 1,
           per_tree = I * (sizeof(pnode_t) + 2 * sizeof(float)) + (I + 1) * sizeof(float);
    size_t per_block = rows * (size_t)(f->n_features ? f->n_features : 1) * sizeof(float);
    /* Tree blocks are whole lockstep groups of both kernels (8 is a multiple of 4). */
    const size_t group = AVX2_LOCKSTEP > TREE_LOCKSTEP ? AVX2_LOCKSTEP : TREE_LOCKSTEP;
    size_t b = share / per_block, t = share / per_tree / group * group;
    *blocks = b < 1 ? 1 : b > TILE_MAX_BLOCKS ? TILE_MAX_BLOCKS : b;
    *trees = t < group ? (int)group : t < (size_t)f->n_trees ? (int)t : f->n_trees;
}

/* Rows [0, n) of x, n <= blocks * rows: copied into column-major blocks of
 * rows, walked tree block by tree block, n results stored. */
static void tile_rows(const psi_forest_t *f, int kernel, const float *x, size_t n, size_t stride, size_t rows,
                      int trees, float *xt, float *acc, double *out)
{
    size_t nf = (size_t)f->n_features, nb = (n + rows - 1) / rows;
    for (size_t b = 0; b < nb; b++) {
        size_t m = n - b * rows < rows ? n - b * rows : rows;
        size_t used = kernel == PS_FOREST_AVX512 ? 16 * (size_t)avx512_vectors(m) : 8 * (size_t)avx2_vectors(m);
        transpose_block(f, x + b * rows * stride, m, stride, used, xt + b * rows * nf);
    }
    for (size_t i = 0; i < nb * rows; i++)
        acc[i] = f->base_score;
    for (int t0 = 0; t0 < f->n_trees; t0 += trees) {
        int t1 = f->n_trees - t0 < trees ? f->n_trees : t0 + trees;
        for (size_t b = 0; b < nb; b++) {
            size_t m = n - b * rows < rows ? n - b * rows : rows;
            if (kernel == PS_FOREST_AVX512)
                avx512_block(f, xt + b * rows * nf, m, t0, t1, acc + b * rows);
            else
                avx2_block(f, xt + b * rows * nf, m, t0, t1, acc + b * rows);
        }
    }
    for (size_t i = 0; i < n; i++)
        out[i] = acc[i];
}

/* The AVX2 or AVX-512 block kernel over rows [0, n), tile by tile. */
static void block_rows(const psi_forest_t *f, int kernel, const float *x, size_t n, size_t stride, double *out)
{
    size_t rows = kernel == PS_FOREST_AVX512 ? AVX512_ROWS : AVX2_ROWS, blocks;
    int trees;
    tile_shape(f, rows, &blocks, &trees);
    size_t nb = (n + rows - 1) / rows < blocks ? (n + rows - 1) / rows : blocks;
    size_t nf = (size_t)f->n_features, need = nb * rows * (nf ? nf : 1);
    float stack[BLOCK_MAX_ROWS * 256], acc[TILE_MAX_BLOCKS * BLOCK_MAX_ROWS];
    float *xt = need <= PS_ARRAY_LEN(stack) ? stack : psi_malloc(need * sizeof *xt);
    if (!xt) { /* out of memory for the block: the scalar kernel needs none */
        for (size_t i = 0; i < n; i += BLOCK_ROWS)
            predict_partial_block(f, x + i * stride, n - i < BLOCK_ROWS ? n - i : BLOCK_ROWS, stride, out + i);
        return;
    }
    for (size_t i = 0; i < n; i += nb * rows) {
        size_t m = n - i < nb * rows ? n - i : nb * rows;
        tile_rows(f, kernel, x + i * stride, m, stride, rows, trees, xt, acc, out + i);
    }
    if (xt != stack)
        free(xt);
}
#endif

void psi_forest_predict(const psi_forest_t *f, const float *x, size_t n, size_t stride, double *out)
{
    int kernel = f->kernel;
    if (kernel == PS_FOREST_QS || kernel == PS_FOREST_QS_AVX2) {
        qs_rows(f, kernel, x, n, stride, out);
        return;
    }
#if HAVE_AVX512
    /* 32-bit gather offsets must reach the last row of a block. */
    if (kernel == PS_FOREST_AVX512 && stride >= (size_t)INT32_MAX / SIMD_ROWS)
        kernel = PS_FOREST_SCALAR;
#endif
    if (n < (kernel == PS_FOREST_AVX2 ? 8u : 4u)) {
        for (size_t i = 0; i < n; i++) {
#if HAVE_X86
            if (kernel == PS_FOREST_AVX512) {
                out[i] = f->pdepth ? avx512_row(f, x + i * stride) : simd_row(f, x + i * stride);
                continue;
            }
            if (kernel == PS_FOREST_AVX2) {
                out[i] = avx2_row(f, x + i * stride);
                continue;
            }
#endif
            out[i] = predict_row(f, x + i * stride);
        }
        return;
    }
#if HAVE_X86
    if (kernel == PS_FOREST_AVX2 || (kernel == PS_FOREST_AVX512 && f->pdepth > 0)) {
        /* Chunks of whole blocks, one per thread. */
        size_t rows = kernel == PS_FOREST_AVX512 ? AVX512_ROWS : AVX2_ROWS;
        long n_blocks = (long)((n + rows - 1) / rows);
        int threads = 1;
#ifdef _OPENMP
        if (n >= PARALLEL_MIN_ROWS)
            threads = omp_get_max_threads();
#endif
        if (threads <= 1) {
            block_rows(f, kernel, x, n, stride, out);
            return;
        }
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
        {
            int me = omp_get_thread_num(), nt = omp_get_num_threads();
            size_t b0 = (size_t)(n_blocks * me / nt), b1 = (size_t)(n_blocks * (me + 1) / nt);
            size_t r0 = b0 * rows, r1 = b1 * rows < n ? b1 * rows : n;
            if (r1 > r0)
                block_rows(f, kernel, x + r0 * stride, r1 - r0, stride, out + r0);
        }
#endif
        return;
    }
#endif
    /* Blocks of `rows`; the last, partial block takes the scalar kernel. */
    size_t rows = BLOCK_ROWS;
#if HAVE_AVX512
    if (kernel == PS_FOREST_AVX512)
        rows = SIMD_ROWS;
#endif
    long n_full = (long)(n / rows);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (n >= PARALLEL_MIN_ROWS)
#endif
    for (long b = 0; b < n_full; b++) {
        size_t first = (size_t)b * rows;
#if HAVE_AVX512
        if (kernel == PS_FOREST_AVX512) {
            simd_block(f, x + first * stride, stride, out + first);
            continue;
        }
#endif
        predict_full_block(f, x + first * stride, stride, out + first);
    }
    for (size_t done = (size_t)n_full * rows; done < n; done += BLOCK_ROWS) {
        size_t m = n - done < BLOCK_ROWS ? n - done : BLOCK_ROWS;
        predict_partial_block(f, x + done * stride, m, stride, out + done);
    }
}

/* Whether this CPU and forest can run kernel k. */
static int kernel_available(const psi_forest_t *f, int k)
{
    if (k == PS_FOREST_SCALAR)
        return 1;
    if (k == PS_FOREST_QS)
        return f->qs_words > 0;
#if HAVE_X86
    __builtin_cpu_init();
    if (k == PS_FOREST_QS_AVX2)
        return f->qs_words == 4 && __builtin_cpu_supports("avx2");
    if (k == PS_FOREST_AVX2)
        return f->pdepth > 0 && __builtin_cpu_supports("avx2");
    if (k == PS_FOREST_AVX512)
        return __builtin_cpu_supports("avx512f");
#else
    (void)f;
#endif
    return 0;
}

/* The fastest kernel available (the order measured by bench_predict). */
static int best_kernel(const psi_forest_t *f)
{
    static const int order[] = {PS_FOREST_AVX512, PS_FOREST_AVX2, PS_FOREST_SCALAR};
    for (size_t i = 0; i < PS_ARRAY_LEN(order); i++)
        if (kernel_available(f, order[i]))
            return order[i];
    return PS_FOREST_SCALAR;
}

const char *psi_forest_kernel_name(int kernel)
{
    switch (kernel) {
    case PS_FOREST_SCALAR: return "scalar";
    case PS_FOREST_AVX2: return "avx2";
    case PS_FOREST_AVX512: return "avx512";
    case PS_FOREST_QS: return "qs";
    case PS_FOREST_QS_AVX2: return "qs-avx2";
    default: return "best";
    }
}

int psi_forest_set_kernel(psi_forest_t *f, int kernel)
{
    if (kernel == PS_FOREST_BEST) {
        /* PAIRSIGHT_FOREST_KERNEL=scalar|avx2|avx512|qs|qs-avx2 picks one
         * for testing; one this CPU or forest lacks falls back to the best. */
        const char *env = getenv("PAIRSIGHT_FOREST_KERNEL");
        kernel = best_kernel(f);
        for (int k = PS_FOREST_SCALAR; env && k < PS_FOREST_N_KERNELS; k++)
            if (strcmp(env, psi_forest_kernel_name(k)) == 0 && kernel_available(f, k))
                kernel = k;
    } else if (kernel < PS_FOREST_SCALAR || kernel >= PS_FOREST_N_KERNELS || !kernel_available(f, kernel)) {
        kernel = PS_FOREST_SCALAR;
    }
    f->kernel = kernel;
    return kernel;
}

int psi_forest_kernel(const psi_forest_t *f) { return f->kernel; }

void psi_forest_set_tiles(psi_forest_t *f, size_t blocks, int trees)
{
    f->tile_blocks = trees > 0 ? blocks : 0;
    f->tile_trees = trees > 0 ? trees : 0;
}

int psi_forest_use_simd(psi_forest_t *f, int on)
{
    return psi_forest_set_kernel(f, on ? PS_FOREST_BEST : PS_FOREST_SCALAR) != PS_FOREST_SCALAR;
}

int psi_forest_n_features(const psi_forest_t *f) { return f->n_features; }
int psi_forest_n_trees(const psi_forest_t *f) { return f->n_trees; }

void psi_forest_free(psi_forest_t *f)
{
    if (!f)
        return;
    free(f->nodes);
    free(f->root);
    free(f->depth);
    free(f->pnode);
    free(f->pleaf);
    free(f->pthr);
    free(f->pfeat);
    free(f->tthr);
    free(f->tfeat);
    free(f->qs_thr);
    free(f->qs_tk);
    free(f->qs_mtk);
    free(f->qs_off);
    free(f->qs_moff);
    free(f->qs_mask);
    free(f);
}

/* ------------------------------------------------------------------------ */
/* Loading XGBoost's JSON model                                              */
/* ------------------------------------------------------------------------ */

/* Follows a path of object keys; NULL where one is missing. */
static const cJSON *get_path(const cJSON *j, const char *const *keys, int n)
{
    for (int i = 0; i < n && j; i++)
        j = cJSON_GetObjectItemCaseSensitive(j, keys[i]);
    return j;
}

/* XGBoost 1.7 writes the learner's scalar parameters as strings ("5E-1");
 * accepts a number too. */
static int get_number_string(const cJSON *j, const char *what, double *out)
{
    *out = NAN; /* set on every path, so that no caller reads an unset value */
    if (cJSON_IsNumber(j)) {
        *out = j->valuedouble;
        return 0;
    }
    if (!cJSON_IsString(j))
        return psi_error(PS_E_INPUT, "XGBoost model: %s is missing", what);
    char *end;
    *out = strtod(j->valuestring, &end);
    if (end == j->valuestring || *end != '\0')
        return psi_error(PS_E_INPUT, "XGBoost model: %s is not a number: '%s'", what, j->valuestring);
    return 0;
}

/* A numeric array field of one tree, which must hold n elements. */
static const cJSON *tree_array(const cJSON *tree, int t, const char *key, int n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(tree, key);
    if (!cJSON_IsArray(a)) {
        psi_error(PS_E_INPUT, "XGBoost model: tree %d: field %s is missing", t, key);
        return NULL;
    }
    if (cJSON_GetArraySize(a) != n) {
        psi_error(PS_E_INPUT, "XGBoost model: tree %d: %s has %d elements, expected %d", t, key, cJSON_GetArraySize(a),
                  n);
        return NULL;
    }
    return a;
}

/* Appends tree t (num_nodes nodes) to f->nodes at *n_nodes. The nodes are
 * read in XGBoost's numbering and checked to form a tree (every child lies
 * after its parent and inside the tree, and every node but the root has one
 * parent), then laid out breadth first with each split's children side by
 * side, as step() needs. */
/* The arrays of one tree of XGBoost's JSON, each of n entries. */
typedef struct {
    int n;
    const cJSON *lc, *rc, *si, *sc, *dl, *st; /* st may be NULL */
} tree_json_t;

static int tree_fields(const cJSON *tree, int t, tree_json_t *j)
{
    const cJSON *param = cJSON_GetObjectItemCaseSensitive(tree, "tree_param");
    double v;
    if (get_number_string(cJSON_GetObjectItemCaseSensitive(param, "num_nodes"), "tree_param.num_nodes", &v))
        return psi_error(PS_E_INPUT,
                         "XGBoost model: tree %d: tree_param.num_nodes is missing "
                         "or not a number",
                         t);
    if (!(v >= 1 && v <= 1 << 28) || v != floor(v))
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d: bad num_nodes %g", t, v);
    int n = j->n = (int)v;
    const cJSON *slv = cJSON_GetObjectItemCaseSensitive(param, "size_leaf_vector");
    if (slv && (get_number_string(slv, "size_leaf_vector", &v) || v > 1))
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d: vector leaves are not supported", t);
    j->lc = tree_array(tree, t, "left_children", n);
    j->rc = tree_array(tree, t, "right_children", n);
    j->si = tree_array(tree, t, "split_indices", n);
    j->sc = tree_array(tree, t, "split_conditions", n);
    j->dl = tree_array(tree, t, "default_left", n);
    if (!j->lc || !j->rc || !j->si || !j->sc || !j->dl)
        return PS_E_INPUT;
    j->st = cJSON_GetObjectItemCaseSensitive(tree, "split_type");
    if (j->st && (!cJSON_IsArray(j->st) || cJSON_GetArraySize(j->st) != n))
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d: split_type has the wrong length", t);
    return 0;
}

/* Room in f->nodes for n more nodes after *n_nodes. */
static int grow_nodes(psi_forest_t *f, size_t n_nodes, size_t *cap, int n)
{
    if (n_nodes + (size_t)n > INT32_MAX)
        return psi_error(PS_E_INPUT, "XGBoost model: more than 2^31 nodes");
    if (n_nodes + (size_t)n <= *cap)
        return 0;
    size_t c = *cap ? *cap : 1024;
    while (c < n_nodes + (size_t)n)
        c *= 2;
    node_t *p = psi_realloc(f->nodes, c * sizeof *p);
    if (!p)
        return PS_E_NOMEM;
    f->nodes = p;
    *cap = c;
    return 0;
}

/* Scratch in XGBoost's numbering: the node (left = XGBoost's left child or
 * -1), the right child, the depth, whether a parent was seen, and the
 * breadth-first order. */
typedef struct {
    node_t *xn;
    int32_t *right, *depth, *order;
    unsigned char *has_parent;
    int32_t max_depth;
} tree_scratch_t;

/* Node i of tree t from the JSON values (el left child, er right child, ei
 * split feature, ec condition or leaf, ed default left, es split type or
 * NULL) into the scratch, checked: one parent each, children after their
 * parent, numeric splits on known features. */
static int read_node(const psi_forest_t *f, int t, int i, int n, const cJSON *el, const cJSON *er, const cJSON *ei,
                     const cJSON *ec, const cJSON *ed, const cJSON *es, tree_scratch_t *s)
{
    if (!cJSON_IsNumber(el) || !cJSON_IsNumber(er) || !cJSON_IsNumber(ei) || !cJSON_IsNumber(ec) ||
        !(cJSON_IsNumber(ed) || cJSON_IsBool(ed)) || (es && !cJSON_IsNumber(es)))
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: a field is not a number", t, i);
    double l = el->valuedouble, r = er->valuedouble;
    node_t *nd = &s->xn[i];
    if (i > 0 && !s->has_parent[i])
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: no parent", t, i);
    if (l == -1) {
        if (r != -1)
            return psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: one child only", t, i);
        nd->threshold = NAN;
        nd->feature = 0;
        nd->left = -1;
        nd->leaf = (float)ec->valuedouble; /* 1.7 keeps the leaf value here */
        if (s->depth[i] > s->max_depth)
            s->max_depth = s->depth[i];
        return 0;
    }
    if (!(l > i && l < n && r > i && r < n && l != r) || l != floor(l) || r != floor(r))
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: bad children %g, %g of %d nodes", t, i, l, r, n);
    int il = (int)l, ir = (int)r;
    if (s->has_parent[il] || s->has_parent[ir])
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: a child has two parents", t, i);
    if (es && es->valuedouble != 0)
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: categorical splits are not supported", t, i);
    double feat = ei->valuedouble;
    if (!(feat >= 0 && feat < f->n_features) || feat != floor(feat))
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: split feature %g outside 0..%d", t, i, feat,
                         f->n_features - 1);
    s->has_parent[il] = s->has_parent[ir] = 1;
    s->depth[il] = s->depth[ir] = s->depth[i] + 1;
    int left_default = cJSON_IsBool(ed) ? cJSON_IsTrue(ed) : ed->valuedouble != 0;
    nd->threshold = (float)ec->valuedouble;
    nd->feature = (uint32_t)feat | (left_default ? 0 : MISSING_RIGHT);
    nd->left = il;
    nd->leaf = 0;
    s->right[i] = ir;
    return 0;
}

/* Breadth first: position pos holds XGBoost node order[pos]; a split's
 * children take the next two free positions. Every node is reached once,
 * since each has exactly one parent that precedes it. */
static void lay_out(psi_forest_t *f, int t, int n, tree_scratch_t *s, size_t *n_nodes)
{
    int32_t base = (int32_t)*n_nodes, next = 1;
    s->order[0] = 0;
    for (int32_t pos = 0; pos < n; pos++) {
        node_t nd = s->xn[s->order[pos]];
        if (nd.left < 0) {
            nd.left = base + pos;
        } else {
            s->order[next] = nd.left;
            s->order[next + 1] = s->right[s->order[pos]];
            nd.left = base + next;
            next += 2;
        }
        f->nodes[base + pos] = nd;
    }
    f->root[t] = base;
    f->depth[t] = s->max_depth;
    *n_nodes += (size_t)n;
}

static int load_tree(psi_forest_t *f, const cJSON *tree, int t, size_t *n_nodes, size_t *cap)
{
    tree_json_t j = {0};
    int rc = tree_fields(tree, t, &j);
    if (rc != 0 || (rc = grow_nodes(f, *n_nodes, cap, j.n)) != 0)
        return rc;
    int n = j.n;
    tree_scratch_t s = {.xn = psi_malloc((size_t)n * sizeof *s.xn),
                        .right = psi_malloc((size_t)n * sizeof *s.right),
                        .depth = psi_calloc((size_t)n, sizeof *s.depth),
                        .order = psi_malloc((size_t)n * sizeof *s.order),
                        .has_parent = psi_calloc((size_t)n, 1)};
    rc = s.xn && s.right && s.depth && s.order && s.has_parent ? 0 : PS_E_NOMEM;
    const cJSON *el = j.lc->child, *er = j.rc->child, *ei = j.si->child, *ec = j.sc->child, *ed = j.dl->child,
                *es = j.st ? j.st->child : NULL;
    for (int i = 0; i < n && !rc;
         i++, el = el->next, er = er->next, ei = ei->next, ec = ec->next, ed = ed->next, es = es ? es->next : NULL)
        rc = read_node(f, t, i, n, el, er, ei, ec, ed, es, &s);
    if (!rc)
        lay_out(f, t, n, &s, n_nodes);
    free(s.xn);
    free(s.right);
    free(s.depth);
    free(s.order);
    free(s.has_parent);
    return rc;
}

/* The identity-link objectives of XGBoost 1.7: for these the margin is the
 * prediction and base_score enters the sum as it is written. */
static int identity_objective(const char *name)
{
    static const char *const ok[] = {"reg:squarederror", "reg:squaredlogerror", "reg:pseudohubererror",
                                     "reg:absoluteerror"};
    for (size_t i = 0; i < PS_ARRAY_LEN(ok); i++)
        if (strcmp(name, ok[i]) == 0)
            return 1;
    return 0;
}

static int load_model(psi_forest_t *f, const cJSON *root)
{
    static const char *const k_learner[] = {"learner"};
    static const char *const k_obj[] = {"learner", "objective", "name"};
    static const char *const k_gb[] = {"learner", "gradient_booster"};
    static const char *const k_lmp[] = {"learner", "learner_model_param"};
    const cJSON *learner = get_path(root, k_learner, 1);
    if (!cJSON_IsObject(learner))
        return psi_error(PS_E_INPUT, "XGBoost model: no learner object");

    const cJSON *obj = get_path(root, k_obj, 3);
    if (!cJSON_IsString(obj))
        return psi_error(PS_E_INPUT, "XGBoost model: learner.objective.name is missing");
    if (!identity_objective(obj->valuestring))
        return psi_error(PS_E_INPUT,
                         "XGBoost model: objective %s is not a regression with "
                         "identity link",
                         obj->valuestring);

    const cJSON *gb = get_path(root, k_gb, 2);
    const cJSON *gbname = cJSON_GetObjectItemCaseSensitive(gb, "name");
    if (!cJSON_IsString(gbname) || strcmp(gbname->valuestring, "gbtree") != 0)
        return psi_error(PS_E_INPUT, "XGBoost model: booster %s is not gbtree",
                         cJSON_IsString(gbname) ? gbname->valuestring : "(missing)");

    const cJSON *lmp = get_path(root, k_lmp, 2);
    double base, nf, ncls = 0;
    if (get_number_string(cJSON_GetObjectItemCaseSensitive(lmp, "base_score"), "base_score", &base) ||
        get_number_string(cJSON_GetObjectItemCaseSensitive(lmp, "num_feature"), "num_feature", &nf))
        return PS_E_INPUT;
    const cJSON *nc = cJSON_GetObjectItemCaseSensitive(lmp, "num_class");
    if (nc && get_number_string(nc, "num_class", &ncls))
        return PS_E_INPUT;
    if (ncls > 1)
        return psi_error(PS_E_INPUT, "XGBoost model: %g output groups, expected one", ncls);
    if (!(nf >= 0 && nf <= INT32_MAX) || nf != floor(nf))
        return psi_error(PS_E_INPUT, "XGBoost model: bad num_feature %g", nf);
    if (!isfinite(base))
        return psi_error(PS_E_INPUT, "XGBoost model: base_score is not finite");
    f->n_features = (int)nf;
    f->base_score = (float)base;

    const cJSON *model = cJSON_GetObjectItemCaseSensitive(gb, "model");
    const cJSON *trees = cJSON_GetObjectItemCaseSensitive(model, "trees");
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(model, "tree_info");
    if (!cJSON_IsArray(trees))
        return psi_error(PS_E_INPUT, "XGBoost model: gradient_booster.model.trees is missing");
    int n_trees = cJSON_GetArraySize(trees);
    if (cJSON_IsArray(info)) {
        if (cJSON_GetArraySize(info) != n_trees)
            return psi_error(PS_E_INPUT, "XGBoost model: tree_info has %d entries for %d trees",
                             cJSON_GetArraySize(info), n_trees);
        for (const cJSON *e = info->child; e; e = e->next)
            if (!cJSON_IsNumber(e) || e->valuedouble != 0)
                return psi_error(PS_E_INPUT, "XGBoost model: a tree of output group other than 0");
    }

    f->n_trees = n_trees;
    f->root = psi_calloc(n_trees ? (size_t)n_trees : 1, sizeof *f->root);
    f->depth = psi_calloc(n_trees ? (size_t)n_trees : 1, sizeof *f->depth);
    if (!f->root || !f->depth)
        return PS_E_NOMEM;
    size_t n_nodes = 0, cap = 0;
    int t = 0;
    for (const cJSON *tree = trees->child; tree; tree = tree->next, t++) {
        int rc = load_tree(f, tree, t, &n_nodes, &cap);
        if (rc)
            return rc;
    }
    return 0;
}

/* Fills perfect node k (level d) of tree t from node src of the flattened
 * tree: a split is copied, a leaf above the last level becomes an
 * always-left split over two copies of itself. */
static void fill_perfect(psi_forest_t *f, int t, int32_t src, int k, int d)
{
    const int D = f->pdepth, I = (1 << D) - 1;
    const node_t *nd = &f->nodes[src];
    int leaf = nd->left == src;
    if (d == D) {
        f->pleaf[(size_t)t * (size_t)(I + 1) + (size_t)(k - I)] = nd->leaf;
        return;
    }
    size_t at = (size_t)t * (size_t)I + (size_t)k;
    pnode_t *p = &f->pnode[at];
    p->threshold = leaf ? NAN : nd->threshold;
    p->feature = leaf ? 0 : nd->feature;
    f->pthr[at] = p->threshold;
    f->pfeat[at] = p->feature;
    fill_perfect(f, t, leaf ? src : nd->left, 2 * k + 1, d + 1);
    fill_perfect(f, t, leaf ? src : nd->left + 1, 2 * k + 2, d + 1);
}

/* The perfect layout for the AVX2 kernels, where every tree is at most
 * PERFECT_MAX_DEPTH deep and the layout fits 32-bit indices; else none. */
static int build_perfect(psi_forest_t *f)
{
    int D = 1;
    for (int t = 0; t < f->n_trees; t++)
        D = f->depth[t] > D ? f->depth[t] : D;
    if (D > PERFECT_MAX_DEPTH || (double)f->n_trees * (double)(1 << D) >= (double)INT32_MAX / 2)
        return 0;
    size_t I = ((size_t)1 << D) - 1, nt = f->n_trees ? (size_t)f->n_trees : 1;
    f->pnode = psi_malloc(nt * I * sizeof *f->pnode);
    f->pleaf = psi_malloc(nt * (I + 1) * sizeof *f->pleaf);
    f->pthr = psi_calloc(nt * I + PERM_PAD, sizeof *f->pthr);
    f->pfeat = psi_calloc(nt * I + PERM_PAD, sizeof *f->pfeat);
    if (!f->pnode || !f->pleaf || !f->pthr || !f->pfeat)
        return PS_E_NOMEM;
    f->pdepth = D;
    f->l2 = l2_bytes();
    for (int t = 0; t < f->n_trees; t++)
        fill_perfect(f, t, f->root[t], 0, 0);
    /* Tree-minor copy of the top levels (see tthr). */
    int top = D < ROW_TOP_LEVELS ? D : ROW_TOP_LEVELS;
    f->ntp = nt + 16;
    f->tthr = psi_malloc(f->ntp * (((size_t)1 << top) - 1) * sizeof *f->tthr);
    f->tfeat = psi_malloc(f->ntp * (((size_t)1 << top) - 1) * sizeof *f->tfeat);
    if (!f->tthr || !f->tfeat)
        return PS_E_NOMEM;
    for (size_t k = 0; k < ((size_t)1 << top) - 1; k++)
        for (size_t t = 0; t < f->ntp; t++) {
            size_t u = t < nt ? t : nt - 1;
            f->tthr[k * f->ntp + t] = f->pthr[u * I + k];
            f->tfeat[k * f->ntp + t] = f->pfeat[u * I + k];
        }
    return 0;
}

/* A split of the QuickScorer lists before sorting. */
typedef struct {
    uint32_t feature, tk;
    float threshold;
} qs_split_t;

static int qs_cmp(const void *a, const void *b)
{
    const qs_split_t *p = a, *q = b;
    if (p->feature != q->feature)
        return p->feature < q->feature ? -1 : 1;
    if (p->threshold != q->threshold)
        return p->threshold < q->threshold ? -1 : 1;
    return p->tk < q->tk ? -1 : p->tk > q->tk;
}

/* The masks of QuickScorer: node k (level d, j-th of its level) leaves the
 * leaves outside its left subtree, [j 2^(D-d), j 2^(D-d) + 2^(D-d-1)). */
static void qs_masks(psi_forest_t *f)
{
    const int D = f->pdepth, W = f->qs_words, I = (1 << D) - 1;
    for (int k = 0; k < I; k++) {
        int d = 0;
        while ((2 << d) - 1 <= k)
            d++;
        int span = 1 << (D - d), s0 = (k - ((1 << d) - 1)) * span;
        uint64_t *m = f->qs_mask + (size_t)k * (size_t)W;
        for (int w = 0; w < W; w++)
            m[w] = D >= 6 ? ~0ull : (1ull << (1 << D)) - 1;
        for (int l = s0; l < s0 + span / 2; l++)
            m[l / 64] &= ~(1ull << (l % 64));
    }
}

/* The QuickScorer lists (see qs_splits), where the perfect layout exists
 * and is at most QS_MAX_DEPTH deep; else none. */
static int build_qs(psi_forest_t *f)
{
    const int D = f->pdepth, I = (1 << D) - 1;
    if (D == 0 || D > QS_MAX_DEPTH || f->n_trees >= 1 << 24)
        return 0;
    size_t n = 0, nm = 0, nt = (size_t)f->n_trees * (size_t)I;
    for (size_t i = 0; i < nt; i++)
        if (f->pthr[i] == f->pthr[i]) { /* padding splits have a NaN threshold and are never taken right */
            n++;
            nm += (f->pfeat[i] & MISSING_RIGHT) != 0;
        }
    qs_split_t *sp = psi_malloc((n ? n : 1) * sizeof *sp);
    f->qs_words = D >= 6 ? 1 << (D - 6) : 1;
    f->qs_thr = psi_malloc((n ? n : 1) * sizeof *f->qs_thr);
    f->qs_tk = psi_malloc((n ? n : 1) * sizeof *f->qs_tk);
    f->qs_mtk = psi_malloc((nm ? nm : 1) * sizeof *f->qs_mtk);
    f->qs_off = psi_calloc((size_t)f->n_features + 1, sizeof *f->qs_off);
    f->qs_moff = psi_calloc((size_t)f->n_features + 1, sizeof *f->qs_moff);
    f->qs_mask = psi_malloc((size_t)I * (size_t)f->qs_words * sizeof *f->qs_mask);
    if (!sp || !f->qs_thr || !f->qs_tk || !f->qs_mtk || !f->qs_off || !f->qs_moff || !f->qs_mask) {
        free(sp);
        return PS_E_NOMEM;
    }
    size_t e = 0;
    for (size_t i = 0; i < nt; i++)
        if (f->pthr[i] == f->pthr[i])
            sp[e++] = (qs_split_t){f->pfeat[i], (uint32_t)(i / (size_t)I) << 8 | (uint32_t)(i % (size_t)I), f->pthr[i]};
    /* Sorted by feature (the missing bit set sorts after: masked below). */
    for (size_t i = 0; i < n; i++)
        sp[i].feature = (sp[i].feature & FEATURE_MASK) << 1 | sp[i].feature >> 31;
    qsort(sp, n, sizeof *sp, qs_cmp);
    for (size_t i = 0; i < n; i++) {
        /* Both lists by feature; within a feature the missing-right splits
         * sort apart from the others, so they are merged back by threshold. */
        uint32_t j = sp[i].feature >> 1;
        f->qs_off[j + 1]++;
        f->qs_moff[j + 1] += (int32_t)(sp[i].feature & 1);
    }
    for (int j = 0; j < f->n_features; j++) {
        f->qs_off[j + 1] += f->qs_off[j];
        f->qs_moff[j + 1] += f->qs_moff[j];
    }
    /* Each feature's two runs (missing left, missing right) in ascending
     * threshold, merged into one ascending list; the right run also goes to
     * the missing list. */
    for (int j = 0; j < f->n_features; j++) {
        size_t a = (size_t)f->qs_off[j], nr = (size_t)(f->qs_moff[j + 1] - f->qs_moff[j]);
        size_t end = (size_t)f->qs_off[j + 1], mid = end - nr, p = a, q = mid, o = a, mo = (size_t)f->qs_moff[j];
        while (p < mid || q < end) {
            const qs_split_t *s2 = q >= end || (p < mid && sp[p].threshold <= sp[q].threshold) ? &sp[p++] : &sp[q++];
            f->qs_thr[o] = s2->threshold;
            f->qs_tk[o++] = s2->tk;
        }
        for (size_t i = mid; i < end; i++)
            f->qs_mtk[mo++] = sp[i].tk;
    }
    free(sp);
    qs_masks(f);
    return 0;
}

int psi_forest_from_json(const char *json, size_t len, psi_forest_t **out)
{
    *out = NULL;
    if (!json)
        return psi_error(PS_E_ARG, "psi_forest_from_json: no model text");
    cJSON *root = NULL;
    int prc = psi_json_parse(json, len, "XGBoost model", &root);
    if (prc != PS_OK)
        return prc;
    psi_forest_t *f = psi_calloc(1, sizeof *f);
    int rc = f ? load_model(f, root) : PS_E_NOMEM;
    cJSON_Delete(root);
    if (!rc)
        rc = build_perfect(f);
    if (!rc)
        rc = build_qs(f);
    if (rc) {
        psi_forest_free(f);
        return rc;
    }
    psi_forest_set_kernel(f, PS_FOREST_BEST);
    *out = f;
    return 0;
}

int psi_forest_from_booster(void *booster, psi_forest_t **out)
{
    *out = NULL;
    if (!booster)
        return psi_error(PS_E_ARG, "psi_forest_from_booster: no booster");
    bst_ulong len = 0;
    const char *buf = NULL;
    if (XGBoosterSaveModelToBuffer((BoosterHandle)booster, "{\"format\": \"json\"}", &len, &buf))
        return psi_xgb_error("the model as JSON");
    /* buf is owned by the booster and valid until its next call. */
    return psi_forest_from_json(buf, (size_t)len, out);
}
