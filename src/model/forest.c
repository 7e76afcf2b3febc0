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
#include "model/forest_internal.h"

#include "model/model.h"

#include <xgboost/c_api.h>

#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#if HAVE_X86
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
#endif

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

/* How block_rows walks its tiles: the kernel (PS_FOREST_AVX2 or
 * PS_FOREST_AVX512), rows per block, trees per tree block (tile_shape), and
 * the scratch of one tile: its blocks copied column-major (xt) and their
 * rows' float sums (acc). */
typedef struct {
    int kernel;
    size_t rows;
    int trees;
    float *xt, *acc;
} tile_t;

/* Rows [0, n) of x, n <= blocks * rows, copied into the tile's column-major
 * blocks. */
static void tile_load(const psi_forest_t *f, const tile_t *tile, const float *x, size_t n, size_t stride)
{
    const size_t rows = tile->rows, nf = (size_t)f->n_features, nb = (n + rows - 1) / rows;
    for (size_t b = 0; b < nb; b++) {
        size_t m = n - b * rows < rows ? n - b * rows : rows;
        size_t used = tile->kernel == PS_FOREST_AVX512 ? 16 * (size_t)psi_forest_avx512_vectors(m)
                                                       : 8 * (size_t)psi_forest_avx2_vectors(m);
        transpose_block(f, x + b * rows * stride, m, stride, used, tile->xt + b * rows * nf);
    }
}

/* The n rows tile_load put in the tile walked tree block by tree block, n
 * results stored. */
static void tile_walk(const psi_forest_t *f, const tile_t *tile, size_t n, double *out)
{
    const int kernel = tile->kernel, trees = tile->trees;
    const size_t rows = tile->rows, nf = (size_t)f->n_features, nb = (n + rows - 1) / rows;
    float *xt = tile->xt, *acc = tile->acc;
    for (size_t i = 0; i < nb * rows; i++)
        acc[i] = f->base_score;
    for (int t0 = 0; t0 < f->n_trees; t0 += trees) {
        int t1 = f->n_trees - t0 < trees ? f->n_trees : t0 + trees;
        for (size_t b = 0; b < nb; b++) {
            size_t m = n - b * rows < rows ? n - b * rows : rows;
            if (kernel == PS_FOREST_AVX512)
                psi_forest_avx512_block(f, xt + b * rows * nf, m, t0, t1, acc + b * rows);
            else
                psi_forest_avx2_block(f, xt + b * rows * nf, m, t0, t1, acc + b * rows);
        }
    }
    for (size_t i = 0; i < n; i++)
        out[i] = acc[i];
}

/* Rows [0, n) of x, n <= blocks * rows: copied into column-major blocks of
 * rows, walked tree block by tree block, n results stored. */
static void tile_rows(const psi_forest_t *f, const tile_t *tile, const float *x, size_t n, size_t stride, double *out)
{
    tile_load(f, tile, x, n, stride);
    tile_walk(f, tile, n, out);
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
            psi_forest_scalar_partial(f, x + i * stride, n - i < BLOCK_ROWS ? n - i : BLOCK_ROWS, stride, out + i);
        return;
    }
    tile_t tile = {kernel, rows, trees, xt, acc};
    for (size_t i = 0; i < n; i += nb * rows) {
        size_t m = n - i < nb * rows ? n - i : nb * rows;
        tile_rows(f, &tile, x + i * stride, m, stride, out + i);
    }
    if (xt != stack)
        free(xt);
}
#endif

#if HAVE_X86
static int kernel_available(const psi_forest_t *f, int k);

/* Small batches on AVX-512's perfect layout (bench_forest_batch, 175 + 157
 * trees of depth 8, AMD EPYC, both regressors: 32-35 us per vector of 16
 * rows whether it carries 11 or 16, 19-20 us per AVX2 vector of 8, 4.8-5.0
 * us per row walked alone): the rows past the last whole vector of 16, when at most
 * AVX512_TAIL_MAX, go by one AVX2 vector (from AVX2_TAIL_MIN of them) and
 * row walks. Every kernel adds the same leaves in the same order, so the
 * sums are equal bit for bit. Returns the rows left for the vectors of 16. */
static size_t avx512_tail(const psi_forest_t *f, const float *x, size_t n, size_t stride, double *out)
{
    size_t r = n % 16, head = n - r, i = head;
    if (r == 0 || r > AVX512_TAIL_MAX)
        return n;
    if (r >= AVX2_TAIL_MIN && kernel_available(f, PS_FOREST_AVX2)) {
        size_t m = r < 8 ? r : 8;
        block_rows(f, PS_FOREST_AVX2, x + i * stride, m, stride, out + i);
        i += m;
    }
    for (; i < n; i++)
        out[i] = psi_forest_avx512_row(f, x + i * stride);
    return head;
}
#endif

#if HAVE_X86
/* psi_forest_predict_pair's rows [0, n) (n a multiple of 16) through both
 * forests from one copy of their blocks, when they fit one tile of each;
 * 0: they do not (or no memory), nothing done. */
static int pair_rows(psi_forest_t *const *f, const float *x, size_t n, size_t stride, double *const *out)
{
    size_t rows = AVX512_ROWS, blocks[2];
    int trees[2];
    tile_shape(f[0], rows, &blocks[0], &trees[0]);
    tile_shape(f[1], rows, &blocks[1], &trees[1]);
    size_t nb = (n + rows - 1) / rows, need = nb * rows * (size_t)(f[0]->n_features ? f[0]->n_features : 1);
    if (nb > blocks[0] || nb > blocks[1])
        return 0;
    float stack[BLOCK_MAX_ROWS * 256], acc[TILE_MAX_BLOCKS * BLOCK_MAX_ROWS];
    float *xt = need <= PS_ARRAY_LEN(stack) ? stack : psi_malloc(need * sizeof *xt);
    if (!xt)
        return 0;
    for (int k = 0; k < 2; k++) {
        tile_t tile = {PS_FOREST_AVX512, rows, trees[k], xt, acc};
        if (k == 0)
            tile_load(f[0], &tile, x, n, stride);
        tile_walk(f[k], &tile, n, out[k]);
    }
    if (xt != stack)
        free(xt);
    return 1;
}
#endif

void psi_forest_predict_pair(psi_forest_t *const *f, const float *x, size_t n, size_t stride, double *const *out)
{
#if HAVE_X86
    if (f[0]->kernel == PS_FOREST_AVX512 && f[1]->kernel == PS_FOREST_AVX512 && f[0]->pdepth > 0 && f[1]->pdepth > 0 &&
        f[0]->n_features == f[1]->n_features && n < PARALLEL_MIN_ROWS && stride < (size_t)INT32_MAX / SIMD_ROWS) {
        size_t head = avx512_tail(f[0], x, n, stride, out[0]);
        avx512_tail(f[1], x, n, stride, out[1]);
        if (head == 0 || pair_rows(f, x, head, stride, out))
            return;
        n = head;
    }
#endif
    psi_forest_predict(f[0], x, n, stride, out[0]);
    psi_forest_predict(f[1], x, n, stride, out[1]);
}

void psi_forest_predict(const psi_forest_t *f, const float *x, size_t n, size_t stride, double *out)
{
    int kernel = f->kernel;
#if HAVE_AVX512
    /* 32-bit gather offsets must reach the last row of a block. */
    if (kernel == PS_FOREST_AVX512 && stride >= (size_t)INT32_MAX / SIMD_ROWS)
        kernel = PS_FOREST_SCALAR;
#endif
#if HAVE_X86
    if (kernel == PS_FOREST_AVX512 && f->pdepth > 0 && (n = avx512_tail(f, x, n, stride, out)) == 0)
        return;
#endif
    if (n < (kernel == PS_FOREST_AVX2 ? 8u : 4u)) {
        for (size_t i = 0; i < n; i++) {
#if HAVE_X86
            if (kernel == PS_FOREST_AVX512) {
                out[i] = f->pdepth ? psi_forest_avx512_row(f, x + i * stride)
                                   : psi_forest_avx512_node_row(f, x + i * stride);
                continue;
            }
            if (kernel == PS_FOREST_AVX2) {
                out[i] = psi_forest_avx2_row(f, x + i * stride);
                continue;
            }
#endif
            out[i] = psi_forest_scalar_row(f, x + i * stride);
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
            psi_forest_avx512_node_block(f, x + first * stride, stride, out + first);
            continue;
        }
#endif
        psi_forest_scalar_full(f, x + first * stride, stride, out + first);
    }
    for (size_t done = (size_t)n_full * rows; done < n; done += BLOCK_ROWS) {
        size_t m = n - done < BLOCK_ROWS ? n - done : BLOCK_ROWS;
        psi_forest_scalar_partial(f, x + done * stride, m, stride, out + done);
    }
}

/* Whether this CPU and forest can run kernel k. */
static int kernel_available(const psi_forest_t *f, int k)
{
    if (k == PS_FOREST_SCALAR)
        return 1;
#if HAVE_X86
    __builtin_cpu_init();
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
    default: return "best";
    }
}

int psi_forest_set_kernel(psi_forest_t *f, int kernel)
{
    if (kernel == PS_FOREST_BEST) {
        /* PAIRSIGHT_FOREST_KERNEL=scalar|avx2|avx512 picks one
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
    free(f);
}

/* ------------------------------------------------------------------------ */
/* Loading XGBoost's JSON model                                              */
/* ------------------------------------------------------------------------ */

/* Follows a path of object keys from token j; -1 where one is missing. */
static int get_path(ps_json_doc_t *d, int j, const char *const *keys, int n)
{
    for (int i = 0; i < n && j >= 0; i++)
        j = ps_json_get(d, j, keys[i], 0);
    return j;
}

static int is(const ps_json_doc_t *d, int t, int type) { return t >= 0 && d->tok[t].type == type; }

/* XGBoost 1.7 writes the learner's scalar parameters as strings ("5E-1");
 * accepts a number too. */
static int get_number_string(ps_json_doc_t *d, int j, const char *what, double *out)
{
    *out = NAN; /* set on every path, so that no caller reads an unset value */
    if (is(d, j, PS_JSON_NUMBER)) {
        if (ps_json_num(d, j, out) != 0)
            *out = INFINITY;
        return 0;
    }
    if (!is(d, j, PS_JSON_STRING))
        return psi_error(PS_E_INPUT, "XGBoost model: %s is missing", what);
    const char *s = ps_json_str(d, j);
    char *end;
    *out = strtod(s, &end);
    if (end == s || *end != '\0')
        return psi_error(PS_E_INPUT, "XGBoost model: %s is not a number: '%s'", what, s);
    return 0;
}

/* The first element of a numeric array field of one tree, which must hold
 * n elements; -1 (with the message) when it does not. */
static int tree_array(ps_json_doc_t *d, int tree, int t, const char *key, int n)
{
    int a = ps_json_get(d, tree, key, 0);
    if (!is(d, a, PS_JSON_ARRAY)) {
        psi_error(PS_E_INPUT, "XGBoost model: tree %d: field %s is missing", t, key);
        return -1;
    }
    if (d->tok[a].size != n) {
        psi_error(PS_E_INPUT, "XGBoost model: tree %d: %s has %d elements, expected %d", t, key, d->tok[a].size, n);
        return -1;
    }
    return a + 1;
}

/* Appends tree t (num_nodes nodes) to f->nodes at *n_nodes. The nodes are
 * read in XGBoost's numbering and checked to form a tree (every child lies
 * after its parent and inside the tree, and every node but the root has one
 * parent), then laid out breadth first with each split's children side by
 * side, as step() needs. */
/* The arrays of one tree of XGBoost's JSON, each of n entries: the token of
 * each one's current element (split_type's -1 when it is absent), in the
 * order of node_values. */
enum { A_LEFT, A_RIGHT, A_FEATURE, A_CONDITION, A_DEFAULT_LEFT, A_SPLIT_TYPE, N_ARRAYS };
typedef struct {
    int n;
    int a[N_ARRAYS];
} tree_json_t;

static int tree_fields(ps_json_doc_t *d, int tree, int t, tree_json_t *j)
{
    static const char *const key[N_ARRAYS - 1] = {"left_children", "right_children", "split_indices",
                                                  "split_conditions", "default_left"};
    int param = ps_json_get(d, tree, "tree_param", 0);
    double v;
    if (get_number_string(d, ps_json_get(d, param, "num_nodes", 0), "tree_param.num_nodes", &v))
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d: tree_param.num_nodes is missing or not a number", t);
    if (!(v >= 1 && v <= 1 << 28) || v != floor(v))
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d: bad num_nodes %g", t, v);
    int n = j->n = (int)v;
    int slv = ps_json_get(d, param, "size_leaf_vector", 0);
    if (slv >= 0 && (get_number_string(d, slv, "size_leaf_vector", &v) || v > 1))
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d: vector leaves are not supported", t);
    for (int k = 0; k < N_ARRAYS - 1; k++)
        if ((j->a[k] = tree_array(d, tree, t, key[k], n)) < 0)
            return PS_E_INPUT;
    int st = ps_json_get(d, tree, "split_type", 0);
    if (st >= 0 && (!is(d, st, PS_JSON_ARRAY) || d->tok[st].size != n))
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d: split_type has the wrong length", t);
    j->a[A_SPLIT_TYPE] = st >= 0 ? st + 1 : -1;
    return 0;
}

/* The values of the current node of j into v (default_left true as 1,
 * an absent split_type as 0), and j moved to the next node: 0, or -1 when
 * one is not a number. */
static int node_values(const ps_json_doc_t *d, tree_json_t *j, double v[N_ARRAYS])
{
    int bad = 0;
    for (int k = 0; k < N_ARRAYS; k++) {
        int e = j->a[k];
        v[k] = 0;
        if (e < 0)
            continue;
        int type = d->tok[e].type;
        if (k == A_DEFAULT_LEFT && (type == PS_JSON_TRUE || type == PS_JSON_FALSE))
            v[k] = type == PS_JSON_TRUE;
        else if (type != PS_JSON_NUMBER)
            bad = 1;
        else if (ps_json_num(d, e, &v[k]) != 0)
            v[k] = d->text[d->tok[e].start] == '-' ? -INFINITY : INFINITY;
        j->a[k] = d->tok[e].next;
    }
    return bad ? -1 : 0;
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

/* Node i of tree t (of n nodes) from its values v (node_values) into the
 * scratch, checked: one parent each, children after their parent, numeric
 * splits on known features. */
static int read_node(const psi_forest_t *f, int t, int i, int n, const double *v, tree_scratch_t *s)
{
    double l = v[A_LEFT], r = v[A_RIGHT];
    node_t *nd = &s->xn[i];
    if (i > 0 && !s->has_parent[i])
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: no parent", t, i);
    if (l == -1) {
        if (r != -1)
            return psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: one child only", t, i);
        nd->threshold = NAN;
        nd->feature = 0;
        nd->left = -1;
        nd->leaf = (float)v[A_CONDITION]; /* 1.7 keeps the leaf value here */
        if (s->depth[i] > s->max_depth)
            s->max_depth = s->depth[i];
        return 0;
    }
    if (!(l > i && l < n && r > i && r < n && l != r) || l != floor(l) || r != floor(r))
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: bad children %g, %g of %d nodes", t, i, l, r, n);
    int il = (int)l, ir = (int)r;
    if (s->has_parent[il] || s->has_parent[ir])
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: a child has two parents", t, i);
    if (v[A_SPLIT_TYPE] != 0)
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: categorical splits are not supported", t, i);
    double feat = v[A_FEATURE];
    if (!(feat >= 0 && feat < f->n_features) || feat != floor(feat))
        return psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: split feature %g outside 0..%d", t, i, feat,
                         f->n_features - 1);
    s->has_parent[il] = s->has_parent[ir] = 1;
    s->depth[il] = s->depth[ir] = s->depth[i] + 1;
    nd->threshold = (float)v[A_CONDITION];
    nd->feature = (uint32_t)feat | (v[A_DEFAULT_LEFT] != 0 ? 0 : MISSING_RIGHT);
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

static int load_tree(psi_forest_t *f, ps_json_doc_t *d, int tree, int t, size_t *n_nodes, size_t *cap)
{
    tree_json_t j = {0};
    int rc = tree_fields(d, tree, t, &j);
    if (rc != 0 || (rc = grow_nodes(f, *n_nodes, cap, j.n)) != 0)
        return rc;
    int n = j.n;
    tree_scratch_t s = {.xn = psi_malloc((size_t)n * sizeof *s.xn),
                        .right = psi_malloc((size_t)n * sizeof *s.right),
                        .depth = psi_calloc((size_t)n, sizeof *s.depth),
                        .order = psi_malloc((size_t)n * sizeof *s.order),
                        .has_parent = psi_calloc((size_t)n, 1)};
    rc = s.xn && s.right && s.depth && s.order && s.has_parent ? 0 : PS_E_NOMEM;
    for (int i = 0; i < n && !rc; i++) {
        double v[N_ARRAYS];
        if (node_values(d, &j, v) != 0)
            rc = psi_error(PS_E_INPUT, "XGBoost model: tree %d node %d: a field is not a number", t, i);
        else
            rc = read_node(f, t, i, n, v, &s);
    }
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

/* learner.objective and learner.gradient_booster's name: a gbtree of an
 * identity-link objective. */
static int check_learner(ps_json_doc_t *d)
{
    static const char *const k_learner[] = {"learner"};
    static const char *const k_obj[] = {"learner", "objective", "name"};
    static const char *const k_gb[] = {"learner", "gradient_booster"};
    if (!is(d, get_path(d, 0, k_learner, 1), PS_JSON_OBJECT))
        return psi_error(PS_E_INPUT, "XGBoost model: no learner object");
    int obj = get_path(d, 0, k_obj, 3);
    if (!is(d, obj, PS_JSON_STRING))
        return psi_error(PS_E_INPUT, "XGBoost model: learner.objective.name is missing");
    if (!identity_objective(ps_json_str(d, obj)))
        return psi_error(PS_E_INPUT, "XGBoost model: objective %s is not a regression with identity link",
                         ps_json_str(d, obj));
    int gbname = ps_json_get(d, get_path(d, 0, k_gb, 2), "name", 0);
    const char *name = is(d, gbname, PS_JSON_STRING) ? ps_json_str(d, gbname) : NULL;
    if (!name || strcmp(name, "gbtree") != 0)
        return psi_error(PS_E_INPUT, "XGBoost model: booster %s is not gbtree", name ? name : "(missing)");
    return 0;
}

/* learner.learner_model_param: base_score, num_feature, num_class. */
static int read_model_param(psi_forest_t *f, ps_json_doc_t *d)
{
    static const char *const k_lmp[] = {"learner", "learner_model_param"};
    int lmp = get_path(d, 0, k_lmp, 2);
    double base, nf, ncls = 0;
    if (get_number_string(d, ps_json_get(d, lmp, "base_score", 0), "base_score", &base) ||
        get_number_string(d, ps_json_get(d, lmp, "num_feature", 0), "num_feature", &nf))
        return PS_E_INPUT;
    int nc = ps_json_get(d, lmp, "num_class", 0);
    if (nc >= 0 && get_number_string(d, nc, "num_class", &ncls))
        return PS_E_INPUT;
    if (ncls > 1)
        return psi_error(PS_E_INPUT, "XGBoost model: %g output groups, expected one", ncls);
    if (!(nf >= 0 && nf <= INT32_MAX) || nf != floor(nf))
        return psi_error(PS_E_INPUT, "XGBoost model: bad num_feature %g", nf);
    if (!isfinite(base))
        return psi_error(PS_E_INPUT, "XGBoost model: base_score is not finite");
    f->n_features = (int)nf;
    f->base_score = (float)base;
    return 0;
}

static int load_model(psi_forest_t *f, ps_json_doc_t *d)
{
    static const char *const k_model[] = {"learner", "gradient_booster", "model"};
    int rc = check_learner(d);
    if (rc || (rc = read_model_param(f, d)))
        return rc;
    int model = get_path(d, 0, k_model, 3);
    int trees = ps_json_get(d, model, "trees", 0), info = ps_json_get(d, model, "tree_info", 0);
    if (!is(d, trees, PS_JSON_ARRAY))
        return psi_error(PS_E_INPUT, "XGBoost model: gradient_booster.model.trees is missing");
    int n_trees = d->tok[trees].size;
    if (is(d, info, PS_JSON_ARRAY)) {
        if (d->tok[info].size != n_trees)
            return psi_error(PS_E_INPUT, "XGBoost model: tree_info has %d entries for %d trees", d->tok[info].size,
                             n_trees);
        double v;
        for (int i = 0, e = info + 1; i < n_trees; i++, e = d->tok[e].next)
            if (ps_json_num(d, e, &v) != 0 || v != 0)
                return psi_error(PS_E_INPUT, "XGBoost model: a tree of output group other than 0");
    }

    f->n_trees = n_trees;
    f->root = psi_calloc(n_trees ? (size_t)n_trees : 1, sizeof *f->root);
    f->depth = psi_calloc(n_trees ? (size_t)n_trees : 1, sizeof *f->depth);
    if (!f->root || !f->depth)
        return PS_E_NOMEM;
    size_t n_nodes = 0, cap = 0;
    for (int t = 0, tree = trees + 1; t < n_trees; t++, tree = d->tok[tree].next)
        if ((rc = load_tree(f, d, tree, t, &n_nodes, &cap)) != 0)
            return rc;
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

int psi_forest_from_json(const char *json, size_t len, psi_forest_t **out)
{
    *out = NULL;
    if (!json)
        return psi_error(PS_E_ARG, "psi_forest_from_json: no model text");
    ps_json_doc_t d = {0};
    int prc = psi_json_load(json, len, "XGBoost model", &d);
    if (prc != PS_OK) {
        psi_json_unload(&d);
        return prc;
    }
    psi_forest_t *f = psi_calloc(1, sizeof *f);
    int rc = f ? load_model(f, &d) : PS_E_NOMEM;
    psi_json_unload(&d);
    if (!rc)
        rc = build_perfect(f);
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
