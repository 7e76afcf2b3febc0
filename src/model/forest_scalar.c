/* The scalar kernels of the forest (forest_internal.h): the node walk,
 * the reference every SIMD kernel matches bit for bit and the fallback where
 * none runs. */
#include "model/forest_internal.h"

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

void psi_forest_scalar_full(const psi_forest_t *f, const float *x, size_t stride, double *out)
{
    block_kernel(f, x, BLOCK_ROWS, stride, out);
}

void psi_forest_scalar_partial(const psi_forest_t *f, const float *x, size_t n, size_t stride, double *out)
{
    block_kernel(f, x, n, stride, out);
}

/* One row, TREE_GROUP trees in lockstep: for a single row the trees are the
 * only independent walks there are. The leaf values are still added in tree
 * order. */
double psi_forest_scalar_row(const psi_forest_t *f, const float *x)
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
