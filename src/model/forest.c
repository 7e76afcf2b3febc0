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

#include <cjson/cJSON.h>
#include <xgboost/c_api.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX512 1
#else
#define HAVE_AVX512 0
#endif

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
    float threshold; /* go left if x < threshold; NaN at a leaf */
    uint32_t feature; /* feature index | MISSING_RIGHT (0 at a leaf) */
    int32_t left;     /* absolute index of the left child; right is left + 1 */
    float leaf;       /* at a leaf, its value */
} node_t;

#define MISSING_RIGHT 0x80000000u
#define FEATURE_MASK 0x7fffffffu

struct ps_forest {
    node_t *nodes;
    int32_t *root;  /* [n_trees] index of each tree's root in nodes */
    int32_t *depth; /* [n_trees] longest root-to-leaf path (0 for a lone leaf) */
    int n_trees, n_features;
    float base_score;
    int simd; /* use the AVX-512 kernels (the CPU has them, not switched off) */
};

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
static inline __attribute__((always_inline)) void
block_kernel(const ps_forest_t *f, const float *x, size_t n, size_t stride, double *out)
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

static void predict_full_block(const ps_forest_t *f, const float *x, size_t stride, double *out)
{
    block_kernel(f, x, BLOCK_ROWS, stride, out);
}

static void predict_partial_block(const ps_forest_t *f, const float *x, size_t n, size_t stride,
                                  double *out)
{
    block_kernel(f, x, n, stride, out);
}

/* One row, TREE_GROUP trees in lockstep: for a single row the trees are the
 * only independent walks there are. The leaf values are still added in tree
 * order. */
static double predict_row(const ps_forest_t *f, const float *x)
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

__attribute__((target("avx512f"))) static inline __m512i
simd_step(const float *nf, const int32_t *ni, __m512i idx, const float *x, __m512i row_off)
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

__attribute__((target("avx512f"))) static inline __m512
simd_leaf(const float *nf, __m512i idx)
{
    __m512i w = _mm512_add_epi32(_mm512_slli_epi32(idx, 2), _mm512_set1_epi32(3));
    return _mm512_i32gather_ps(w, nf, 4);
}

/* SIMD_VECS x 16 rows x all trees; the vectors are independent walks that
 * hide each other's gather latency. Row offsets are 32-bit gather indices, so
 * the caller checks that SIMD_ROWS * stride fits. */
#define SIMD_VECS 4
#define SIMD_ROWS (SIMD_VECS * SIMD_LANES)
__attribute__((target("avx512f"))) static void
simd_block(const ps_forest_t *f, const float *x, size_t stride, double *out)
{
    const float *nf = (const float *)f->nodes;
    const int32_t *ni = (const int32_t *)f->nodes;
    __m512i row_off[SIMD_VECS];
    __m512 acc[SIMD_VECS];
    __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int v = 0; v < SIMD_VECS; v++) {
        row_off[v] = _mm512_mullo_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32(16 * v)),
                                        _mm512_set1_epi32((int32_t)stride));
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
        _mm512_storeu_pd(out + 16 * v + 8, _mm512_cvtps_pd(_mm256_castpd_ps(
                                                _mm512_extractf64x4_pd(_mm512_castps_pd(acc[v]), 1))));
    }
}

/* One row, two vectors of sixteen trees walking at once; the leaf values are
 * then added one by one in tree order. */
__attribute__((target("avx512f"))) static double simd_row(const ps_forest_t *f, const float *x)
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

void ps_forest_predict(const ps_forest_t *f, const float *x, size_t n, size_t stride, double *out)
{
#if HAVE_AVX512
    /* 32-bit gather offsets must reach the last row of a block. */
    int simd = f->simd && stride < (size_t)INT32_MAX / SIMD_ROWS;
#endif
    if (n < 4) {
        for (size_t i = 0; i < n; i++) {
#if HAVE_AVX512
            if (simd) {
                out[i] = simd_row(f, x + i * stride);
                continue;
            }
#endif
            out[i] = predict_row(f, x + i * stride);
        }
        return;
    }
    /* Blocks of `rows`; the last, partial block takes the scalar kernel. */
    size_t rows = BLOCK_ROWS;
#if HAVE_AVX512
    if (simd)
        rows = SIMD_ROWS;
#endif
    long n_full = (long)(n / rows);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (n >= PARALLEL_MIN_ROWS)
#endif
    for (long b = 0; b < n_full; b++) {
        size_t first = (size_t)b * rows;
#if HAVE_AVX512
        if (simd) {
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

int ps_forest_use_simd(ps_forest_t *f, int on)
{
#if HAVE_AVX512
    __builtin_cpu_init();
    f->simd = on && __builtin_cpu_supports("avx512f");
#else
    (void)on;
    f->simd = 0;
#endif
    return f->simd;
}

int ps_forest_n_features(const ps_forest_t *f) { return f->n_features; }
int ps_forest_n_trees(const ps_forest_t *f) { return f->n_trees; }

void ps_forest_free(ps_forest_t *f)
{
    if (!f)
        return;
    free(f->nodes);
    free(f->root);
    free(f->depth);
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
        return ps_error(PS_E_INPUT, "XGBoost model: %s is missing", what);
    char *end;
    *out = strtod(j->valuestring, &end);
    if (end == j->valuestring || *end != '\0')
        return ps_error(PS_E_INPUT, "XGBoost model: %s is not a number: '%s'", what,
                        j->valuestring);
    return 0;
}

/* A numeric array field of one tree, which must hold n elements. */
static const cJSON *tree_array(const cJSON *tree, int t, const char *key, int n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(tree, key);
    if (!cJSON_IsArray(a)) {
        ps_error(PS_E_INPUT, "XGBoost model: tree %d: field %s is missing", t, key);
        return NULL;
    }
    if (cJSON_GetArraySize(a) != n) {
        ps_error(PS_E_INPUT, "XGBoost model: tree %d: %s has %d elements, expected %d", t, key,
                 cJSON_GetArraySize(a), n);
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
        return ps_error(PS_E_INPUT,
                        "XGBoost model: tree %d: tree_param.num_nodes is missing "
                        "or not a number",
                        t);
    if (!(v >= 1 && v <= 1 << 28) || v != floor(v))
        return ps_error(PS_E_INPUT, "XGBoost model: tree %d: bad num_nodes %g", t, v);
    int n = j->n = (int)v;
    const cJSON *slv = cJSON_GetObjectItemCaseSensitive(param, "size_leaf_vector");
    if (slv && (get_number_string(slv, "size_leaf_vector", &v) || v > 1))
        return ps_error(PS_E_INPUT, "XGBoost model: tree %d: vector leaves are not supported", t);
    j->lc = tree_array(tree, t, "left_children", n);
    j->rc = tree_array(tree, t, "right_children", n);
    j->si = tree_array(tree, t, "split_indices", n);
    j->sc = tree_array(tree, t, "split_conditions", n);
    j->dl = tree_array(tree, t, "default_left", n);
    if (!j->lc || !j->rc || !j->si || !j->sc || !j->dl)
        return PS_E_INPUT;
    j->st = cJSON_GetObjectItemCaseSensitive(tree, "split_type");
    if (j->st && (!cJSON_IsArray(j->st) || cJSON_GetArraySize(j->st) != n))
        return ps_error(PS_E_INPUT, "XGBoost model: tree %d: split_type has the wrong length", t);
    return 0;
}

/* Room in f->nodes for n more nodes after *n_nodes. */
static int grow_nodes(ps_forest_t *f, size_t n_nodes, size_t *cap, int n)
{
    if (n_nodes + (size_t)n > INT32_MAX)
        return ps_error(PS_E_INPUT, "XGBoost model: more than 2^31 nodes");
    if (n_nodes + (size_t)n <= *cap)
        return 0;
    size_t c = *cap ? *cap : 1024;
    while (c < n_nodes + (size_t)n)
        c *= 2;
    node_t *p = ps_realloc(f->nodes, c * sizeof *p);
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
static int read_node(const ps_forest_t *f, int t, int i, int n, const cJSON *el, const cJSON *er, const cJSON *ei,
                     const cJSON *ec, const cJSON *ed, const cJSON *es, tree_scratch_t *s)
{
    if (!cJSON_IsNumber(el) || !cJSON_IsNumber(er) || !cJSON_IsNumber(ei) || !cJSON_IsNumber(ec) ||
        !(cJSON_IsNumber(ed) || cJSON_IsBool(ed)) || (es && !cJSON_IsNumber(es)))
        return ps_error(PS_E_INPUT, "XGBoost model: tree %d node %d: a field is not a number", t, i);
    double l = el->valuedouble, r = er->valuedouble;
    node_t *nd = &s->xn[i];
    if (i > 0 && !s->has_parent[i])
        return ps_error(PS_E_INPUT, "XGBoost model: tree %d node %d: no parent", t, i);
    if (l == -1) {
        if (r != -1)
            return ps_error(PS_E_INPUT, "XGBoost model: tree %d node %d: one child only", t, i);
        nd->threshold = NAN;
        nd->feature = 0;
        nd->left = -1;
        nd->leaf = (float)ec->valuedouble; /* 1.7 keeps the leaf value here */
        if (s->depth[i] > s->max_depth)
            s->max_depth = s->depth[i];
        return 0;
    }
    if (!(l > i && l < n && r > i && r < n && l != r) || l != floor(l) || r != floor(r))
        return ps_error(PS_E_INPUT, "XGBoost model: tree %d node %d: bad children %g, %g of %d nodes", t, i, l, r, n);
    int il = (int)l, ir = (int)r;
    if (s->has_parent[il] || s->has_parent[ir])
        return ps_error(PS_E_INPUT, "XGBoost model: tree %d node %d: a child has two parents", t, i);
    if (es && es->valuedouble != 0)
        return ps_error(PS_E_INPUT, "XGBoost model: tree %d node %d: categorical splits are not supported", t, i);
    double feat = ei->valuedouble;
    if (!(feat >= 0 && feat < f->n_features) || feat != floor(feat))
        return ps_error(PS_E_INPUT, "XGBoost model: tree %d node %d: split feature %g outside 0..%d", t, i, feat,
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
static void lay_out(ps_forest_t *f, int t, int n, tree_scratch_t *s, size_t *n_nodes)
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

static int load_tree(ps_forest_t *f, const cJSON *tree, int t, size_t *n_nodes, size_t *cap)
{
    tree_json_t j = {0};
    int rc = tree_fields(tree, t, &j);
    if (rc != 0 || (rc = grow_nodes(f, *n_nodes, cap, j.n)) != 0)
        return rc;
    int n = j.n;
    tree_scratch_t s = {.xn = ps_malloc((size_t)n * sizeof *s.xn),
                        .right = ps_malloc((size_t)n * sizeof *s.right),
                        .depth = ps_calloc((size_t)n, sizeof *s.depth),
                        .order = ps_malloc((size_t)n * sizeof *s.order),
                        .has_parent = ps_calloc((size_t)n, 1)};
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
    static const char *const ok[] = {"reg:squarederror", "reg:squaredlogerror",
                                     "reg:pseudohubererror", "reg:absoluteerror"};
    for (size_t i = 0; i < PS_ARRAY_LEN(ok); i++)
        if (strcmp(name, ok[i]) == 0)
            return 1;
    return 0;
}

static int load_model(ps_forest_t *f, const cJSON *root)
{
    static const char *const k_learner[] = {"learner"};
    static const char *const k_obj[] = {"learner", "objective", "name"};
    static const char *const k_gb[] = {"learner", "gradient_booster"};
    static const char *const k_lmp[] = {"learner", "learner_model_param"};
    const cJSON *learner = get_path(root, k_learner, 1);
    if (!cJSON_IsObject(learner))
        return ps_error(PS_E_INPUT, "XGBoost model: no learner object");

    const cJSON *obj = get_path(root, k_obj, 3);
    if (!cJSON_IsString(obj))
        return ps_error(PS_E_INPUT, "XGBoost model: learner.objective.name is missing");
    if (!identity_objective(obj->valuestring))
        return ps_error(PS_E_INPUT, "XGBoost model: objective %s is not a regression with "
                        "identity link", obj->valuestring);

    const cJSON *gb = get_path(root, k_gb, 2);
    const cJSON *gbname = cJSON_GetObjectItemCaseSensitive(gb, "name");
    if (!cJSON_IsString(gbname) || strcmp(gbname->valuestring, "gbtree") != 0)
        return ps_error(PS_E_INPUT, "XGBoost model: booster %s is not gbtree",
                        cJSON_IsString(gbname) ? gbname->valuestring : "(missing)");

    const cJSON *lmp = get_path(root, k_lmp, 2);
    double base, nf, ncls = 0;
    if (get_number_string(cJSON_GetObjectItemCaseSensitive(lmp, "base_score"), "base_score",
                          &base) ||
        get_number_string(cJSON_GetObjectItemCaseSensitive(lmp, "num_feature"), "num_feature",
                          &nf))
        return PS_E_INPUT;
    const cJSON *nc = cJSON_GetObjectItemCaseSensitive(lmp, "num_class");
    if (nc && get_number_string(nc, "num_class", &ncls))
        return PS_E_INPUT;
    if (ncls > 1)
        return ps_error(PS_E_INPUT, "XGBoost model: %g output groups, expected one", ncls);
    if (!(nf >= 0 && nf <= INT32_MAX) || nf != floor(nf))
        return ps_error(PS_E_INPUT, "XGBoost model: bad num_feature %g", nf);
    if (!isfinite(base))
        return ps_error(PS_E_INPUT, "XGBoost model: base_score is not finite");
    f->n_features = (int)nf;
    f->base_score = (float)base;

    const cJSON *model = cJSON_GetObjectItemCaseSensitive(gb, "model");
    const cJSON *trees = cJSON_GetObjectItemCaseSensitive(model, "trees");
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(model, "tree_info");
    if (!cJSON_IsArray(trees))
        return ps_error(PS_E_INPUT, "XGBoost model: gradient_booster.model.trees is missing");
    int n_trees = cJSON_GetArraySize(trees);
    if (cJSON_IsArray(info)) {
        if (cJSON_GetArraySize(info) != n_trees)
            return ps_error(PS_E_INPUT, "XGBoost model: tree_info has %d entries for %d trees",
                            cJSON_GetArraySize(info), n_trees);
        for (const cJSON *e = info->child; e; e = e->next)
            if (!cJSON_IsNumber(e) || e->valuedouble != 0)
                return ps_error(PS_E_INPUT, "XGBoost model: a tree of output group other than 0");
    }

    f->n_trees = n_trees;
    f->root = ps_calloc(n_trees ? (size_t)n_trees : 1, sizeof *f->root);
    f->depth = ps_calloc(n_trees ? (size_t)n_trees : 1, sizeof *f->depth);
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

int ps_forest_from_json(const char *json, size_t len, ps_forest_t **out)
{
    *out = NULL;
    if (!json)
        return ps_error(PS_E_ARG, "ps_forest_from_json: no model text");
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (!root)
        return ps_error(PS_E_INPUT, "XGBoost model: not valid JSON near byte %ld",
                        (long)(end ? end - json : 0));
    ps_forest_t *f = ps_calloc(1, sizeof *f);
    int rc = f ? load_model(f, root) : PS_E_NOMEM;
    cJSON_Delete(root);
    if (rc) {
        ps_forest_free(f);
        return rc;
    }
    ps_forest_use_simd(f, 1);
    *out = f;
    return 0;
}

int ps_forest_from_booster(void *booster, ps_forest_t **out)
{
    *out = NULL;
    if (!booster)
        return ps_error(PS_E_ARG, "ps_forest_from_booster: no booster");
    bst_ulong len = 0;
    const char *buf = NULL;
    if (XGBoosterSaveModelToBuffer((BoosterHandle)booster, "{\"format\": \"json\"}", &len, &buf))
        return ps_error(PS_E_BACKEND, "XGBoost: %s", XGBGetLastError());
    /* buf is owned by the booster and valid until its next call. */
    return ps_forest_from_json(buf, (size_t)len, out);
}
