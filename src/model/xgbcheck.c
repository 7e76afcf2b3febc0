/* The content check of an XGBoost 1.7 booster (xgbcheck.h). XGBoost's
 * RegTree::LoadModel trusts the node arrays: crafted children made it
 * write out of bounds (10 crashes in 500 payload flips of a .psm with its
 * checksum recomputed), and a child pointing back up made prediction loop
 * for ever (hangs of kace_rf, xu_rf and mps models). The rules mirror what
 * RegTree::LoadModel and GBTreeModel::LoadModel read, and only what
 * pairsight's trainers write is accepted. */
#include "model/xgbcheck.h"
#include "model/ubj.h"
#include "pairsight.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* XGBoost's parent of the root, and split index of a deleted node. */
#define ROOT_PARENT 2147483647.0
#define DELETED_INDEX 2147483647.0

typedef struct {
    char *why;
    size_t why_n;
    int n_features;
} check_t;

static int bad(check_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, c->why_n, fmt, ap);
    va_end(ap);
    return -1;
}

static const cJSON *get(const cJSON *o, const char *key) { return cJSON_GetObjectItemCaseSensitive(o, key); }

/* XGBoost writes its parameters as strings ("196", "1.5E-1"); a number of
 * either form, NAN when absent or not a number. */
static double param(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    if (cJSON_IsNumber(v))
        return v->valuedouble;
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return NAN;
    char *end;
    double d = strtod(v->valuestring, &end);
    return *end ? NAN : d;
}

/* The per-node arrays of one tree, as plain doubles. */
enum { LC, RC, PA, SI, SC, DL, ST, BW, LO, SH, N_ARRAYS };
static const char *const array_key[N_ARRAYS] = {"left_children",    "right_children", "parents",    "split_indices",
                                                "split_conditions", "default_left",   "split_type", "base_weights",
                                                "loss_changes",     "sum_hessian"};

/* Array key of tree t into v[n]; every element a finite number. */
static int read_array(check_t *c, const cJSON *tree, int t, int k, int n, double *v)
{
    const cJSON *a = get(tree, array_key[k]);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return bad(c, "tree %d: %s is missing or does not have num_nodes (%d) entries", t, array_key[k], n);
    int i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        double x = cJSON_IsBool(e) ? (double)cJSON_IsTrue(e) : cJSON_IsNumber(e) ? e->valuedouble : NAN;
        if (!isfinite(x))
            return bad(c, "tree %d node %d: %s is not a finite number", t, i, array_key[k]);
        v[i] = x;
    }
    return 0;
}

/* The node rules of tree t, arrays in a[k][n]: XGBoost's node order has
 * every child after its parent, so walking nodes in order reaches each
 * live node from the root exactly once (no cycle, no shared child). */
static int check_nodes(check_t *c, int t, int n, double *const a[N_ARRAYS], unsigned char *reached, int *n_deleted)
{
    reached[0] = 1;
    *n_deleted = 0;
    if (a[PA][0] != ROOT_PARENT && a[PA][0] != -1)
        return bad(c, "tree %d: the root has a parent (%g)", t, a[PA][0]);
    for (int i = 0; i < n; i++) {
        double l = a[LC][i], r = a[RC][i], f = a[SI][i];
        if (a[ST][i] != 0)
            return bad(c, "tree %d node %d: a categorical split (not written by pairsight)", t, i);
        if (a[DL][i] != 0 && a[DL][i] != 1)
            return bad(c, "tree %d node %d: default_left %g is not 0 or 1", t, i, a[DL][i]);
        if (!reached[i]) { /* only a node XGBoost's pruner deleted */
            if (l != -1 || r != -1 || f != DELETED_INDEX || a[DL][i] != 1)
                return bad(c, "tree %d node %d: no parent reaches it", t, i);
            ++*n_deleted;
            continue;
        }
        if (f != floor(f) || f < 0 || f >= c->n_features)
            return bad(c, "tree %d node %d: split feature %g outside 0..%d", t, i, f, c->n_features - 1);
        if (l == -1 && r == -1)
            continue; /* a leaf: its value (split_conditions) was checked finite */
        if (l != floor(l) || r != floor(r) || !(l > i && l < n && r > i && r < n) || l == r)
            return bad(c, "tree %d node %d: children %g and %g are not two later nodes of %d", t, i, l, r, n);
        int il = (int)l, ir = (int)r;
        if (reached[il] || reached[ir])
            return bad(c, "tree %d node %d: a child with two parents", t, i);
        if (a[PA][il] != i || a[PA][ir] != i)
            return bad(c, "tree %d node %d: its children name another parent", t, i);
        reached[il] = reached[ir] = 1;
    }
    return 0;
}

static int check_tree(check_t *c, const cJSON *tree, int t)
{
    const cJSON *tp = get(tree, "tree_param");
    double nn = param(tp, "num_nodes"), nd = param(tp, "num_deleted"), nf = param(tp, "num_feature"),
           slv = param(tp, "size_leaf_vector"), id = param(tree, "id");
    if (!(nn >= 1 && nn <= 1 << 24) || nn != floor(nn))
        return bad(c, "tree %d: bad num_nodes", t);
    if (nf != c->n_features)
        return bad(c, "tree %d: num_feature %g, the model has %d features", t, nf, c->n_features);
    if (id != t)
        return bad(c, "tree %d: id %g (trees must be in order)", t, id);
    if (!(slv == 0 || slv == 1))
        return bad(c, "tree %d: vector leaves (not written by pairsight)", t);
    static const char *const cat[] = {"categories", "categories_nodes", "categories_segments", "categories_sizes"};
    for (size_t k = 0; k < sizeof cat / sizeof *cat; k++)
        if (!cJSON_IsArray(get(tree, cat[k])) || cJSON_GetArraySize(get(tree, cat[k])) != 0)
            return bad(c, "tree %d: %s is missing or not empty", t, cat[k]);
    int n = (int)nn, rc = 0, n_deleted = 0;
    double *buf = malloc((size_t)n * N_ARRAYS * sizeof *buf), *a[N_ARRAYS];
    unsigned char *reached = calloc((size_t)n, 1);
    if (!buf || !reached)
        rc = (bad(c, "out of memory"), PS_E_NOMEM);
    for (int k = 0; k < N_ARRAYS && !rc; k++)
        rc = read_array(c, tree, t, k, n, a[k] = buf + (size_t)k * n);
    if (!rc)
        rc = check_nodes(c, t, n, a, reached, &n_deleted);
    if (!rc && nd != n_deleted)
        rc = bad(c, "tree %d: num_deleted %g, %d nodes are deleted", t, nd, n_deleted);
    free(buf);
    free(reached);
    return rc;
}

/* The learner's header: objective, output count, features, base score. */
static int check_learner(check_t *c, const cJSON *learner)
{
    const cJSON *obj = get(get(learner, "objective"), "name"), *lmp = get(learner, "learner_model_param");
    if (!cJSON_IsString(obj) || strcmp(obj->valuestring, "reg:squarederror") != 0)
        return bad(c, "objective %s (pairsight writes reg:squarederror)", cJSON_IsString(obj) ? obj->valuestring : "?");
    double nf = param(lmp, "num_feature"), ncls = param(lmp, "num_class"), nt = param(lmp, "num_target"),
           base = param(lmp, "base_score");
    if (nf != c->n_features)
        return bad(c, "num_feature %g, the model's layout has %d features", nf, c->n_features);
    if (!(ncls == 0 || isnan(ncls)) || !(nt == 1 || isnan(nt)))
        return bad(c, "more than one output");
    if (!isfinite(base))
        return bad(c, "base_score is not finite");
    static const char *const names[] = {"feature_names", "feature_types"};
    for (int k = 0; k < 2; k++) {
        const cJSON *a = get(learner, names[k]);
        if (a && (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 0))
            return bad(c, "%s given (pairsight writes none)", names[k]);
    }
    return 0;
}

static int check_model(check_t *c, const cJSON *root)
{
    const cJSON *learner = get(root, "learner"), *gb = get(learner, "gradient_booster");
    if (!cJSON_IsObject(learner) || !cJSON_IsObject(gb))
        return bad(c, "no learner or gradient_booster");
    if (check_learner(c, learner))
        return -1;
    const cJSON *name = get(gb, "name"), *model = get(gb, "model");
    if (!cJSON_IsString(name) || strcmp(name->valuestring, "gbtree") != 0)
        return bad(c, "booster %s is not gbtree", cJSON_IsString(name) ? name->valuestring : "?");
    const cJSON *gmp = get(model, "gbtree_model_param"), *trees = get(model, "trees"), *info = get(model, "tree_info");
    if (!cJSON_IsArray(trees) || !cJSON_IsArray(info))
        return bad(c, "no trees or tree_info");
    int nt = cJSON_GetArraySize(trees);
    double want = param(gmp, "num_trees"), npt = param(gmp, "num_parallel_tree");
    if (want != nt || cJSON_GetArraySize(info) != nt)
        return bad(c, "num_trees %g, %d trees, %d tree_info entries", want, nt, cJSON_GetArraySize(info));
    if (!(npt >= 1 && npt <= nt + 1) || npt != floor(npt))
        return bad(c, "bad num_parallel_tree %g", npt);
    for (const cJSON *e = info->child; e; e = e->next)
        if (!cJSON_IsNumber(e) || e->valuedouble != 0)
            return bad(c, "a tree of an output other than the first");
    int t = 0, rc = 0;
    for (const cJSON *tree = trees->child; tree && !rc; tree = tree->next, t++)
        rc = check_tree(c, tree, t);
    return rc;
}

int psi_xgb_check(const unsigned char *buf, size_t n, int n_features, char *why, size_t why_n)
{
    if (psi_ubj_check(buf, n, why, why_n) != 0)
        return -1;
    cJSON *root = NULL;
    int rc = psi_ubj_to_cjson(buf, n, &root, why, why_n);
    if (rc != 0)
        return rc;
    check_t c = {why, why_n, n_features};
    rc = check_model(&c, root);
    cJSON_Delete(root);
    return rc;
}
