/*
 * Internals of the forest evaluator (forest.h): the layout that forest.c
 * loads and lays out, and the kernels, one file per instruction set:
 * forest_scalar.c (the reference and fallback), forest_avx2.c and
 * forest_avx512.c, which forest.c picks at run time (docs/prediction.md).
 */
#ifndef PS_MODEL_FOREST_INTERNAL_H
#define PS_MODEL_FOREST_INTERNAL_H

#include "model/forest.h"

#include "common/common.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* The block and row sizes of the SIMD kernels (x86 only). */
#ifndef AVX2_V
#define AVX2_V 4 /* vectors of 8 rows walking together in the block kernel */
#endif
#define AVX2_ROWS (8 * AVX2_V)
#ifndef AVX512_V
#define AVX512_V 2 /* vectors of 16 rows in the AVX-512 block kernel (1, 2 or 4) */
#endif
#define AVX512_ROWS (16 * AVX512_V)
#define BLOCK_MAX_ROWS (AVX2_ROWS > AVX512_ROWS ? AVX2_ROWS : AVX512_ROWS)
#ifndef AVX512_TAIL_MAX
#define AVX512_TAIL_MAX 10 /* rows past the last whole AVX-512 vector that go by smaller kernels (forest.c) */
#endif
#ifndef AVX2_TAIL_MIN
#define AVX2_TAIL_MIN 5 /* of those, from how many one AVX2 vector of 8 takes them */
#endif
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

/* Trees walked at once by the AVX2 block kernel: more independent walks
 * hide more of the gathers' latency (measured: 8 is 3-8% faster than 2 and 4
 * at 1k and 100k rows, 16 alike). */
#ifndef AVX2_LOCKSTEP
#define AVX2_LOCKSTEP 8
#endif

#ifndef TREE_PREFETCH
#define TREE_PREFETCH 0 /* prefetch the next trees' deep levels and leaves into L1 */
#endif

#ifndef ROW_TOP_LEVELS
#define ROW_TOP_LEVELS                                                                                                 \
    1 /* levels of the AVX2 one-row kernel read by contiguous loads (measured: 1 and 3 about equal, 2 slower) */
#endif
/* The AVX-512 node-walk kernels (forests without the perfect layout). */
#define SIMD_LANES 16
#define SIMD_VECS 4
#define SIMD_ROWS (SIMD_VECS * SIMD_LANES)

/* forest_scalar.c: a full block of BLOCK_ROWS rows, a partial one (n <
 * BLOCK_ROWS) and one row. */
void psi_forest_scalar_full(const psi_forest_t *f, const float *x, size_t stride, double *out);
void psi_forest_scalar_partial(const psi_forest_t *f, const float *x, size_t n, size_t stride, double *out);
double psi_forest_scalar_row(const psi_forest_t *f, const float *x);

#if HAVE_X86
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

/* forest_avx2.c and forest_avx512.c: trees [t0, t1) over the column-major
 * block xt of n rows (the vectors of rows a block of n walks with), and one
 * row; the AVX-512 node walk for forests without the perfect layout. */
int psi_forest_avx2_vectors(size_t n);
void psi_forest_avx2_block(const psi_forest_t *f, const float *xt, size_t n, int t0, int t1, float *acc);
double psi_forest_avx2_row(const psi_forest_t *f, const float *x);
int psi_forest_avx512_vectors(size_t n);
void psi_forest_avx512_block(const psi_forest_t *f, const float *xt, size_t n, int t0, int t1, float *acc);
double psi_forest_avx512_row(const psi_forest_t *f, const float *x);
void psi_forest_avx512_node_block(const psi_forest_t *f, const float *x, size_t stride, double *out);
double psi_forest_avx512_node_row(const psi_forest_t *f, const float *x);
#endif

#endif
