/* Tests of `colocate eval --unseen-splits` (issue 31): the held-out half of
 * a table of share splits, scored as `colocate train` on the rest and
 * `colocate predict` on that half would score it, its argument checks, and -
 * where ../shared/data/kace-v100 exists - the regression guard of the
 * shared protocol: mps and auto trained on colocations.csv plus a random
 * half of colocations_splits.csv, throughput MAPE of the other half, at
 * seeds 5, 6 and 7, against the figures recorded in
 * tests/data/colocate/kace_splits_guard.txt (see test_kace_splits_guard). */
#include "colocate/colocate.h"
#include "colocate/model_internal.h"
#include "common/common.h"
#include "testhelp.h"

#include <unistd.h>

#define FIX "tests/data/colocate/"
#define KACE "../shared/data/kace-v100/"
#define GUARD FIX "kace_splits_guard.txt"
#define GUARD_SEEDS 3

typedef struct {
    ps_workloads_t *w;
    ps_scaling_t *s;
    ps_colocations_t *c, *splits;
} tabs_t;

static void unload(tabs_t *t)
{
    ps_workloads_free(t->w);
    ps_scaling_free(t->s);
    ps_colocations_free(t->c);
    ps_colocations_free(t->splits);
}

/* The 3-way fixture cut in two: its co-locations at 100 % shares, and the
 * others (33/33/34) as the table of share splits. */
static int load_fixture(tabs_t *t)
{
    ps_colocations_t *all = NULL;
    memset(t, 0, sizeof *t);
    if (ps_workloads_load(FIX "workloads.csv", &t->w) || ps_scaling_load(FIX "workload_scaling.csv", &t->s) ||
        ps_colocations_load(FIX "colocations3.csv", &all))
        return -1;
    t->c = ps_colocations_new();
    t->splits = ps_colocations_new();
    int rc = !t->c || !t->splits;
    for (size_t i = 0; i < all->n && !rc; i++)
        rc = ps_colocations_append(all->rows[i].share_pct == 100 ? t->c : t->splits, &all->rows[i]);
    ps_colocations_free(all);
    return rc;
}

/* The ids of tab's co-locations in the order first met; returns the count. */
static int coloc_ids(const ps_colocations_t *tab, const char **ids)
{
    int n = 0;
    for (size_t i = 0; i < tab->n; i++) {
        int seen = 0;
        for (int j = 0; j < n && !seen; j++)
            seen = strcmp(ids[j], tab->rows[i].colocation) == 0;
        if (!seen)
            ids[n++] = tab->rows[i].colocation;
    }
    return n;
}

/* The documented half split, written out again here: the share splits'
 * co-locations in the order first met, shuffled by Fisher-Yates from a
 * splitmix64 stream seeded by seed (as eval's random split), the first
 * round(n / 2) train. held[i] = 1 for the scored ones. */
static int half_split(const ps_colocations_t *splits, uint64_t seed, const char **ids, char *held)
{
    int n = coloc_ids(splits, ids), perm[256];
    for (int i = 0; i < n; i++)
        perm[i] = i;
    uint64_t st = seed;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(psi_splitmix64(&st) % (uint64_t)(i + 1)), x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    for (int i = 0; i < n; i++)
        held[perm[i]] = i >= (int)floor(0.5 * n + 0.5);
    return n;
}

static int held_row(const psi_colocation_row_t *r, const char **ids, const char *held, int n)
{
    for (int j = 0; j < n; j++)
        if (strcmp(ids[j], r->colocation) == 0)
            return held[j];
    return 0;
}

/* MAPE (%) of kind trained (seed) on c plus the training half of the
 * splits, predicting the held-out half: what train + predict give. */
static double train_predict_mape(const tabs_t *t, ps_coloc_kind_t kind, uint64_t seed)
{
    const char *ids[256];
    char held[256];
    int n = half_split(t->splits, seed, ids, held);
    ps_colocations_t *tr = ps_colocations_new(), *te = ps_colocations_new();
    CHECK(tr && te && n > 1 && n <= 256);
    for (size_t i = 0; tr && i < t->c->n; i++)
        CHECK_OK(ps_colocations_append(tr, &t->c->rows[i]));
    for (size_t i = 0; tr && te && i < t->splits->n; i++)
        CHECK_OK(ps_colocations_append(held_row(&t->splits->rows[i], ids, held, n) ? te : tr, &t->splits->rows[i]));
    ps_coloc_params_t p = ps_coloc_default_params();
    p.kind = kind;
    p.seed = seed;
    ps_coloc_model_t *m = NULL;
    double *pred = te ? psi_calloc(te->n + 1, sizeof *pred) : NULL, sape = 0;
    int rows = 0;
    CHECK_OK(ps_coloc_train(t->w, t->s, tr, &p, &m));
    if (m && pred)
        CHECK_OK(ps_coloc_predict(m, t->w, t->s, te, pred));
    for (size_t i = 0; pred && i < te->n; i++)
        if (!isnan(te->rows[i].tput)) {
            sape += fabs(te->rows[i].tput - pred[i]) / te->rows[i].tput;
            rows++;
        }
    ps_coloc_model_free(m);
    ps_colocations_free(tr);
    ps_colocations_free(te);
    free(pred);
    return rows ? 100 * sape / rows : NAN;
}

/* eval --unseen-splits, one seed, kind alone: its MAPE. */
static double eval_mape(const tabs_t *t, ps_coloc_kind_t kind, uint64_t seed)
{
    ps_coloc_eval_params_t p = ps_coloc_eval_default_params();
    p.seeds = 1;
    p.seed = seed;
    p.test = t->splits;
    p.unseen_splits = 1;
    p.kinds = 1u << kind;
    ps_coloc_eval_result_t r;
    CHECK_OK(ps_coloc_eval(t->w, t->s, t->c, &p, &r));
    CHECK(r.runs == 1);
    return r.mape[kind];
}

/* Each seed's figure is the one train + predict give on the same half, for
 * a per-workload kind and for mps (whose model seed is the split's); the
 * halves differ between seeds. */
static void test_splits_fixture(void)
{
    tabs_t t;
    CHECK_OK(load_fixture(&t));
    const ps_coloc_kind_t kinds[] = {PS_COLOC_RATIO, PS_COLOC_MPS};
    for (int k = 0; k < 2; k++)
        for (uint64_t s = 0; s < 2; s++) {
            double e = eval_mape(&t, kinds[k], s), tp = train_predict_mape(&t, kinds[k], s);
            printf("fixture, unseen splits, %s seed %d: eval %.4f%%, train+predict %.4f%%\n",
                   ps_coloc_kind_name(kinds[k]), (int)s, e, tp);
            CHECK(isfinite(e) && e > 0);
            CHECK_NEAR(e, tp, 1e-9);
        }
    const char *ids[256];
    char h0[256], h1[256];
    int n = half_split(t.splits, 0, ids, h0);
    half_split(t.splits, 1, ids, h1);
    CHECK(memcmp(h0, h1, (size_t)n) != 0);
    unload(&t);
}

/* unseen_splits needs the splits' table and no other mode. */
static void test_splits_args(void)
{
    tabs_t t;
    CHECK_OK(load_fixture(&t));
    ps_coloc_eval_params_t p = ps_coloc_eval_default_params();
    p.seeds = 1;
    p.kinds = 1u << PS_COLOC_RATIO;
    p.unseen_splits = 1;
    ps_coloc_eval_result_t r;
    CHECK(ps_coloc_eval(t.w, t.s, t.c, &p, &r) == PS_E_ARG);
    p.test = t.splits;
    p.test_alone = 1;
    CHECK(ps_coloc_eval(t.w, t.s, t.c, &p, &r) == PS_E_ARG);
    p.test_alone = 0;
    p.transfer = 1;
    CHECK(ps_coloc_eval(t.w, t.s, t.c, &p, &r) == PS_E_ARG);
    p.transfer = 0;
    p.unseen_pairs = 1;
    CHECK(ps_coloc_eval(t.w, t.s, t.c, &p, &r) == PS_E_ARG);
    p.unseen_pairs = 0;
    CHECK_OK(ps_coloc_eval(t.w, t.s, t.c, &p, &r));
    unload(&t);
}

/* The sparse fixture's rows, all of them or (pairs) its 2-way ones only. */
static ps_colocations_t *sparse_rows(const ps_colocations_t *all, int pairs)
{
    ps_colocations_t *out = ps_colocations_new();
    for (size_t i = 0; out && i < all->n; i++) {
        int k = 0;
        for (size_t j = 0; j < all->n; j++)
            k += strcmp(all->rows[j].colocation, all->rows[i].colocation) == 0;
        if ((!pairs || k == 2) && ps_colocations_append(out, &all->rows[i])) {
            ps_colocations_free(out);
            return NULL;
        }
    }
    return out;
}

/* mps trained on pairs only is the 2-way model of 32 features, without the
 * pairwise encoding (every training pair's encoding would leave out the
 * pair itself: no pair information to learn from); with 3- and 4-way sets
 * it keeps the 34. The 32-feature model saves, loads and predicts the
 * same, for pairs and for a 3-way query. */
static void test_mps_pairs_only(void)
{
    ps_workloads_t *w = NULL;
    ps_colocations_t *all = NULL, *pairs = NULL, *kway = NULL;
    CHECK_OK(ps_workloads_load(FIX "sparse_workloads.csv", &w));
    CHECK_OK(ps_colocations_load(FIX "sparse_colocations.csv", &all));
    CHECK((pairs = sparse_rows(all, 1)) != NULL && (kway = sparse_rows(all, 0)) != NULL);
    ps_coloc_params_t p = ps_coloc_default_params();
    p.kind = PS_COLOC_MPS;
    p.boost_rounds = 40;
    ps_coloc_model_t *m2 = NULL, *mk = NULL, *back = NULL;
    CHECK_OK(ps_coloc_train(w, NULL, pairs, &p, &m2));
    CHECK_OK(ps_coloc_train(w, NULL, kway, &p, &mk));
    CHECK(m2 && m2->nf == CL_MPS_BASE_NF);
    CHECK(mk && mk->nf == CL_MPS_NF);
    char dir[64];
    th_tmpdir_make(dir, sizeof dir, "ps_splits_");
    CHECK_OK(ps_coloc_model_save(m2, th_path(dir, "m2.psc")));
    CHECK_OK(ps_coloc_model_load(th_path(dir, "m2.psc"), &back));
    size_t n = kway ? kway->n : 0;
    double *a = psi_calloc(n + 1, sizeof *a), *b = psi_calloc(n + 1, sizeof *b);
    if (a && b && back) {
        CHECK_OK(ps_coloc_predict(m2, w, NULL, kway, a));
        CHECK_OK(ps_coloc_predict(back, w, NULL, kway, b));
        for (size_t i = 0; i < n; i++)
            CHECK_MSG(a[i] == b[i] && isfinite(a[i]) && a[i] > 0, "row %zu: %.17g vs %.17g", i, a[i], b[i]);
    }
    free(a);
    free(b);
    th_tmpdir_remove(dir);
    ps_coloc_model_free(m2);
    ps_coloc_model_free(mk);
    ps_coloc_model_free(back);
    ps_colocations_free(all);
    ps_colocations_free(pairs);
    ps_colocations_free(kway);
    ps_workloads_free(w);
}

/* The recorded figures: lines "KIND SEED MAPE" ('#' starts a comment) into
 * rec[kind][i] for seeds 5, 6, 7. Returns the lines read, -1 on error. */
static int read_guard(double rec[PS_COLOC_KIND_COUNT][GUARD_SEEDS])
{
    FILE *f = fopen(GUARD, "r");
    char line[256], name[64];
    int n = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned seed;
        double v;
        ps_coloc_kind_t k;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "%63s %u %lf", name, &seed, &v) != 3 || ps_coloc_kind_from_name(name, &k) || seed < 5 ||
            seed >= 5 + GUARD_SEEDS) {
            n = -1;
            break;
        }
        rec[k][seed - 5] = v;
        n++;
    }
    fclose(f);
    return n;
}

/* The spread of the recorded figures v[GUARD_SEEDS]: their standard
 * deviation over the seeds (n - 1), as eval's spread. */
static double spread(const double *v)
{
    double m = 0, ss = 0;
    for (int s = 0; s < GUARD_SEEDS; s++)
        m += v[s] / GUARD_SEEDS;
    for (int s = 0; s < GUARD_SEEDS; s++)
        ss += (v[s] - m) * (v[s] - m);
    return sqrt(ss / (GUARD_SEEDS - 1));
}

/* The shared protocol's MAPE of mps and auto at seeds 5-7, against the
 * recorded figures: at no seed may a kind be worse than its recorded
 * figure by more than the spread of its recorded figures over the seeds
 * (mps: 960030b's 6.55 and 6.25 % at seeds 5 and 6 fail it, against 5.65
 * and 5.46 % recorded, spread 0.76). */
static void test_kace_splits_guard(void)
{
    if (access(KACE "colocations_splits.csv", R_OK) != 0) {
        th_skip(KACE " is absent");
        return;
    }
    double rec[PS_COLOC_KIND_COUNT][GUARD_SEEDS];
    CHECK(read_guard(rec) == 2 * GUARD_SEEDS);
    tabs_t t;
    memset(&t, 0, sizeof t);
    CHECK_OK(ps_workloads_load(KACE "workloads.csv", &t.w));
    CHECK_OK(ps_scaling_load(KACE "workload_scaling.csv", &t.s));
    CHECK_OK(ps_colocations_load(KACE "colocations.csv", &t.c));
    CHECK_OK(ps_colocations_load(KACE "colocations_splits.csv", &t.splits));
    ps_coloc_eval_params_t p = ps_coloc_eval_default_params();
    p.seeds = 1;
    p.test = t.splits;
    p.unseen_splits = 1;
    p.kinds = 1u << PS_COLOC_MPS | 1u << PS_COLOC_AUTO;
    const ps_coloc_kind_t kinds[] = {PS_COLOC_MPS, PS_COLOC_AUTO};
    for (int s = 0; s < GUARD_SEEDS; s++) {
        ps_coloc_eval_result_t r;
        p.seed = 5 + (uint64_t)s;
        CHECK_OK(ps_coloc_eval(t.w, t.s, t.c, &p, &r));
        for (int k = 0; k < 2; k++) {
            const char *name = ps_coloc_kind_name(kinds[k]);
            double v = r.mape[kinds[k]], want = rec[kinds[k]][s], tol = spread(rec[kinds[k]]);
            printf("kace-v100 unseen splits seed %d: %s MAPE %.4f%% (recorded %.4f%%, spread %.4f)\n", 5 + s, name, v,
                   want, tol);
            CHECK_MSG(v <= want + tol, "seed %d: %s MAPE %.4f%%, recorded %.4f%% + spread %.4f", 5 + s, name, v, want,
                      tol);
        }
    }
    unload(&t);
}

TH_MAIN(TEST(test_splits_fixture), TEST(test_splits_args), TEST(test_mps_pairs_only), TEST(test_kace_splits_guard))
