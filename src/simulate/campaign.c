/*
 * Simulated campaigns (docs/simulator.md, "Campaigns"): which pairs, segments
 * and splits are co-executed, the standalone profile of every operator at
 * every TPC count used, and one coexec row per run.
 *
 * Determinism: experiment i draws everything from its own random stream,
 * seeded from (seed, i), and rows are appended in experiment order, so the
 * output does not depend on the thread count or the scheduling.
 */
#include "simulate/sim.h"
#include "common/common.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The published evaluation's 20 ordered HP/LP pairs are not listed in the
 * paper; we take every ordered pair of the four classic models (12) and
 * eight pairs that put each Llama beside two classic models on either side. */
static const char *const default_pairs[][2] = {
    {"resnet50", "resnet101"},       {"resnet50", "mobilenetv2"},     {"resnet50", "bert-base"},
    {"resnet101", "resnet50"},       {"resnet101", "mobilenetv2"},    {"resnet101", "bert-base"},
    {"mobilenetv2", "resnet50"},     {"mobilenetv2", "resnet101"},    {"mobilenetv2", "bert-base"},
    {"bert-base", "resnet50"},       {"bert-base", "resnet101"},      {"bert-base", "mobilenetv2"},
    {"llama-3.2-1b", "resnet50"},    {"llama-3.2-1b", "bert-base"},   {"llama-3.2-3b", "resnet101"},
    {"llama-3.2-3b", "mobilenetv2"}, {"resnet50", "llama-3.2-1b"},    {"bert-base", "llama-3.2-1b"},
    {"resnet101", "llama-3.2-3b"},   {"mobilenetv2", "llama-3.2-3b"},
};

#define DEFAULT_BATCH 8

ps_sim_params_t ps_sim_default_params(void)
{
    /* The workload shapes and the launch model are the simulator's own
     * defaults, declared once (workloads.c, physics.c). */
    const sim_shape_opts_t shape = psi_sim_shape_default();
    const sim_physics_t ph = psi_sim_physics_default();
    ps_sim_params_t p = {
        .gpu = "A100-SXM4-40GB",
        .min_len = 1,
        .max_len = 16,
        .experiments = 1000,
        .runs = 14,
        .seed = 1,
        .threads = 0,
        .bert_seq = shape.bert_seq,
        .llama_prompt = shape.llama_prompt,
        .noise = 0.02,
        .launch = ph.launch == SIM_LAUNCH_HOST ? PS_SIM_LAUNCH_HOST : PS_SIM_LAUNCH_GATED,
    };
    return p;
}

/* ---- Campaign description ---- */

typedef struct {
    char model[32];
    int batch;
} wl_key_t;

typedef struct {
    int hp, lp; /* indexes into the workload list */
} pair_t;

typedef struct {
    int hp, lp; /* TPCs */
} split_t;

typedef struct {
    const psi_gpu_t *g;
    sim_physics_t ph;
    wl_key_t *wk;
    int n_wl;
    sim_workload_t *wl;
    pair_t *pairs;
    int n_pairs;
    split_t *splits;
    int n_splits;
    int *tpcs; /* ascending TPC counts used */
    int n_tpcs;
    int *tpc_slot;         /* [g->tpcs + 1]: index into tpcs or -1 */
    sim_placed_t **placed; /* [wl * n_tpcs + t][op] */
} campaign_t;

static int find_or_add_workload(campaign_t *c, const char *model, int batch)
{
    for (int i = 0; i < c->n_wl; i++)
        if (strcmp(c->wk[i].model, model) == 0 && c->wk[i].batch == batch)
            return i;
    wl_key_t *w = psi_realloc(c->wk, (size_t)(c->n_wl + 1) * sizeof *w);
    if (!w)
        return -1;
    c->wk = w;
    snprintf(w[c->n_wl].model, sizeof w[c->n_wl].model, "%s", model);
    w[c->n_wl].batch = batch;
    return c->n_wl++;
}

static int add_pair(campaign_t *c, const char *hp, int hb, const char *lp, int lb)
{
    int rc = psi_sim_model_check(hp);
    if (rc == PS_OK)
        rc = psi_sim_model_check(lp);
    if (rc != PS_OK)
        return rc;
    if (hb <= 0 || lb <= 0)
        return psi_error(PS_E_ARG, "batch sizes must be positive");
    int a = find_or_add_workload(c, hp, hb), b = find_or_add_workload(c, lp, lb);
    if (a < 0 || b < 0)
        return PS_E_NOMEM;
    pair_t *p = psi_realloc(c->pairs, (size_t)(c->n_pairs + 1) * sizeof *p);
    if (!p)
        return PS_E_NOMEM;
    c->pairs = p;
    p[c->n_pairs].hp = a;
    p[c->n_pairs].lp = b;
    c->n_pairs++;
    return 0;
}

/* Parse a positive int at *s, advancing it. */
static int parse_int(const char **s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(*s, &end, 10);
    if (end == *s || errno || v <= 0 || v > 1000000)
        return -1;
    *out = (int)v;
    *s = end;
    return 0;
}

/* Copy the token of s up to any of stop into buf. */
static const char *token(const char *s, const char *stop, char *buf, size_t n)
{
    size_t i = 0;
    while (*s && !strchr(stop, *s)) {
        if (i + 1 < n)
            buf[i++] = *s;
        s++;
    }
    buf[i] = 0;
    return s;
}

/* The batch of a model under the --batches option. */
static int batch_of(const char *batches, const char *model, int *out)
{
    const psi_oplist_t *user = psi_oplist_user(model);
    *out = user ? user->batch : DEFAULT_BATCH; /* a captured list: its batch */
    if (!batches || !*batches)
        return 0;
    const char *s = batches;
    if (isdigit((unsigned char)*s)) {
        if (parse_int(&s, out) != 0 || *s)
            return psi_error(PS_E_ARG, "batches: '%s' is neither a number nor model:batch,...", batches);
        return 0;
    }
    while (*s) {
        char name[64];
        int b;
        s = token(s, ":,", name, sizeof name);
        if (*s != ':')
            return psi_error(PS_E_ARG, "batches: expected model:batch in '%s'", batches);
        s++;
        if (parse_int(&s, &b) != 0 || (*s && *s != ','))
            return psi_error(PS_E_ARG, "batches: bad batch size for '%s'", name);
        if (psi_sim_model_check(name) != PS_OK)
            return psi_error_prefix(PS_E_ARG, "batches");
        if (strcmp(name, model) == 0)
            *out = b;
        if (*s == ',')
            s++;
    }
    return 0;
}

static int in_list(const char *list, const char *model)
{
    size_t n = strlen(model);
    for (const char *s = list; *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == n && strncmp(s, model, n) == 0)
            return 1;
        s += len + (e ? 1 : 0);
    }
    return 0;
}

static int parse_pairs(campaign_t *c, const ps_sim_params_t *p)
{
    if (p->pairs && *p->pairs) {
        const char *s = p->pairs;
        while (*s) {
            char hp[64], lp[64];
            int hb, lb;
            s = token(s, ":/,", hp, sizeof hp);
            if (*s != ':')
                return psi_error(PS_E_ARG, "pairs: expected hp:batch/lp:batch, got '%s'", p->pairs);
            s++;
            if (parse_int(&s, &hb) != 0)
                return psi_error(PS_E_ARG, "pairs: bad HP batch in '%s'", p->pairs);
            if (*s != '/')
                return psi_error(PS_E_ARG, "pairs: expected hp:batch/lp:batch, got '%s'", p->pairs);
            s++;
            s = token(s, ":/,", lp, sizeof lp);
            if (*s != ':')
                return psi_error(PS_E_ARG, "pairs: expected hp:batch/lp:batch, got '%s'", p->pairs);
            s++;
            if (parse_int(&s, &lb) != 0 || (*s && *s != ','))
                return psi_error(PS_E_ARG, "pairs: bad LP batch in '%s'", p->pairs);
            int rc = add_pair(c, hp, hb, lp, lb);
            if (rc != 0)
                return rc;
            if (*s == ',')
                s++;
        }
        return 0;
    }
    const char *models = p->models;
    if (models && *models) {
        /* Every listed model must be known. */
        for (const char *s = models; *s;) {
            char name[64];
            s = token(s, ",", name, sizeof name);
            if (psi_sim_model_check(name) != PS_OK)
                return psi_error_prefix(PS_E_ARG, "models");
            if (*s == ',')
                s++;
        }
    }
    for (size_t i = 0; i < PS_ARRAY_LEN(default_pairs); i++) {
        const char *hp = default_pairs[i][0], *lp = default_pairs[i][1];
        if (models && *models && !(in_list(models, hp) && in_list(models, lp)))
            continue;
        int hb, lb, rc;
        if ((rc = batch_of(p->batches, hp, &hb)) != 0 || (rc = batch_of(p->batches, lp, &lb)) != 0)
            return rc;
        if ((rc = add_pair(c, hp, hb, lp, lb)) != 0)
            return rc;
    }
    if (c->n_pairs == 0) {
        /* Models outside the default pairs: every ordered pair of distinct
         * models, or a model with itself when only one is given. */
        char names[16][64];
        int n = 0;
        for (const char *s = models; *s && n < 16;) {
            s = token(s, ",", names[n], sizeof names[n]);
            n++;
            if (*s == ',')
                s++;
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                if (i == j && n > 1)
                    continue;
                int hb, lb, rc;
                if ((rc = batch_of(p->batches, names[i], &hb)) != 0 || (rc = batch_of(p->batches, names[j], &lb)) != 0)
                    return rc;
                if ((rc = add_pair(c, names[i], hb, names[j], lb)) != 0)
                    return rc;
            }
    }
    if (c->n_pairs == 0)
        return psi_error(PS_E_ARG, "no model pairs to simulate");
    return 0;
}

static int add_split(campaign_t *c, int hp, int lp)
{
    if (hp <= 0 || lp <= 0 || hp + lp > c->g->tpcs)
        return psi_error(PS_E_ARG, "split %d/%d: both sides need TPCs and hp + lp <= %d on %s", hp, lp, c->g->tpcs,
                         c->g->name);
    split_t *s = psi_realloc(c->splits, (size_t)(c->n_splits + 1) * sizeof *s);
    if (!s)
        return PS_E_NOMEM;
    c->splits = s;
    s[c->n_splits].hp = hp;
    s[c->n_splits].lp = lp;
    c->n_splits++;
    return 0;
}

static int parse_splits(campaign_t *c, const char *spec)
{
    int total = c->g->tpcs, rc;
    if (!spec || !*spec) {
        for (int k = 1; k <= 9; k++) {
            int hp = (int)lround((double)k * total / 10.0);
            if ((rc = add_split(c, hp, total - hp)) != 0)
                return rc;
        }
        return 0;
    }
    if (strcmp(spec, "all") == 0) {
        for (int hp = 1; hp < total; hp++)
            if ((rc = add_split(c, hp, total - hp)) != 0)
                return rc;
        return 0;
    }
    const char *s = spec;
    while (*s) {
        int hp, lp;
        if (parse_int(&s, &hp) != 0 || *s != '/')
            return psi_error(PS_E_ARG, "splits: expected hp/lp,... or all, got '%s'", spec);
        s++;
        if (parse_int(&s, &lp) != 0 || (*s && *s != ','))
            return psi_error(PS_E_ARG, "splits: expected hp/lp,... or all, got '%s'", spec);
        if ((rc = add_split(c, hp, lp)) != 0)
            return rc;
        if (*s == ',')
            s++;
    }
    return 0;
}

static void campaign_free(campaign_t *c)
{
    if (c->placed)
        for (int i = 0; i < c->n_wl * c->n_tpcs; i++) {
            free(c->placed[i]);
        }
    free(c->placed);
    if (c->wl)
        for (int i = 0; i < c->n_wl; i++)
            psi_sim_workload_free(&c->wl[i]);
    free(c->wl);
    free(c->wk);
    free(c->pairs);
    free(c->splits);
    free(c->tpcs);
    free(c->tpc_slot);
}

/* Build the workloads, the TPC counts used, and every kernel placed and timed
 * alone at each of them. */
static int campaign_prepare(campaign_t *c, const ps_sim_params_t *p)
{
    sim_shape_opts_t o = {.bert_seq = p->bert_seq, .llama_prompt = p->llama_prompt};
    c->wl = psi_calloc((size_t)c->n_wl, sizeof *c->wl);
    c->tpc_slot = psi_malloc((size_t)(c->g->tpcs + 1) * sizeof *c->tpc_slot);
    c->tpcs = psi_malloc((size_t)(c->g->tpcs + 1) * sizeof *c->tpcs);
    if (!c->wl || !c->tpc_slot || !c->tpcs)
        return PS_E_NOMEM;
    for (int i = 0; i < c->n_wl; i++) {
        int rc = psi_sim_workload_build(c->wk[i].model, c->wk[i].batch, &o, &c->wl[i]);
        if (rc != 0)
            return rc;
    }
    char *used = psi_calloc((size_t)c->g->tpcs + 1, 1);
    if (!used)
        return PS_E_NOMEM;
    used[c->g->tpcs] = 1;
    for (int i = 0; i < c->n_splits; i++)
        used[c->splits[i].hp] = used[c->splits[i].lp] = 1;
    c->n_tpcs = 0;
    for (int t = 0; t <= c->g->tpcs; t++) {
        c->tpc_slot[t] = -1;
        if (used[t]) {
            c->tpc_slot[t] = c->n_tpcs;
            c->tpcs[c->n_tpcs++] = t;
        }
    }
    free(used);
    size_t cells = (size_t)c->n_wl * c->n_tpcs;
    c->placed = psi_calloc(cells, sizeof *c->placed);
    if (!c->placed)
        return PS_E_NOMEM;
    for (int w = 0; w < c->n_wl; w++)
        for (int t = 0; t < c->n_tpcs; t++) {
            size_t cell = (size_t)w * c->n_tpcs + t;
            int n = c->wl[w].n;
            c->placed[cell] = psi_malloc((size_t)n * sizeof(sim_placed_t));
            if (!c->placed[cell])
                return PS_E_NOMEM;
            for (int k = 0; k < n; k++)
                psi_sim_place(c->g, &c->wl[w].k[k], c->tpcs[t], &c->placed[cell][k]);
        }
    return 0;
}

/* Eq. 12: the replay noise of a profile. Nsight Compute measures each
 * counter in its own replay of the kernel and the standalone durations are
 * medians of timed runs, so every value carries a small log-normal error,
 * fixed for a GPU, model, batch, operator and TPC count (a profile is
 * measured once, whatever the campaign's seed). */
static double profile_noise(const char *gpu, const sim_workload_t *w, int op, int tpcs, int column, double sd)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *s = gpu; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    for (const char *s = w->model; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    h ^= ((uint64_t)w->batch << 40) ^ ((uint64_t)op << 16) ^ ((uint64_t)tpcs << 8) ^ (uint64_t)column;
    psi_rng_t rng = {.s = h * 0x9e3779b97f4a7c15ULL + 1};
    psi_rng_next(&rng);
    return exp(sd * psi_rng_normal(&rng));
}

static void add_profile_noise(const campaign_t *c, const sim_workload_t *w, int k, int tpcs, sim_solo_t *s)
{
    double *v[] = {&s->c.dram_bytes,
                   &s->c.l2_bytes,
                   &s->c.stall_long_scoreboard,
                   &s->c.stall_lg_throttle,
                   &s->c.stall_mio_throttle,
                   &s->c.sm_pct,
                   &s->c.mem_pct};
    s->duration_ns *= profile_noise(c->g->name, w, k, tpcs, 0, c->ph.duration_noise);
    for (int i = 0; i < (int)PS_ARRAY_LEN(v); i++) {
        *v[i] *= profile_noise(c->g->name, w, k, tpcs, i + 1, c->ph.counter_noise);
        if (i >= 2 && *v[i] > 100.0)
            *v[i] = 100.0;
    }
}

/* ops.csv: every operator of every workload at every TPC count used, with
 * the counters of the model at that allocation and their replay noise. */
static int write_ops(campaign_t *c, ps_ops_t *ops)
{
    for (int w = 0; w < c->n_wl; w++)
        for (int k = 0; k < c->wl[w].n; k++)
            for (int t = 0; t < c->n_tpcs; t++) {
                size_t cell = (size_t)w * c->n_tpcs + t;
                sim_solo_t s;
                psi_sim_solo(c->g, &c->ph, &c->placed[cell][k], &s);
                add_profile_noise(c, &c->wl[w], k, c->tpcs[t], &s);
                psi_op_row_t r = {
                    .gpu = c->g->name,
                    .model = c->wl[w].model,
                    .batch = c->wl[w].batch,
                    .op = k,
                    .name = c->wl[w].k[k].name,
                    .tpcs = c->tpcs[t],
                    .duration_ns = s.duration_ns,
                    .intensity = s.intensity,
                    .c = s.c,
                };
                int rc = ps_ops_append(ops, &r);
                if (rc != 0)
                    return rc;
            }
    return 0;
}

/* One experiment: its draws and its simulated latencies. */
typedef struct {
    int pair, split;
    int hp_start, hp_len, lp_start, lp_len;
    double hp_ns, lp_ns; /* noiseless, with dispatch cost */
} experiment_t;

typedef struct {
    campaign_t *c;
    const ps_sim_params_t *p;
    experiment_t *ex;
    double *noise_hp, *noise_lp; /* [i * runs + r] multiplicative factors */
    atomic_long next;
    atomic_long done;
} work_t;

#define CHUNK 64

static void run_experiment(work_t *w, long i)
{
    campaign_t *c = w->c;
    const ps_sim_params_t *p = w->p;
    psi_rng_t rng = {.s = p->seed * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)i + 1) * 0xd1b54a32d192ed03ULL};
    psi_rng_next(&rng);
    experiment_t *e = &w->ex[i];
    /* Pairs in turn, so every pair gets its share; the rest is drawn. */
    e->pair = (int)(i % c->n_pairs);
    e->split = psi_rng_int(&rng, 0, c->n_splits - 1);
    const sim_workload_t *hw = &c->wl[c->pairs[e->pair].hp], *lw = &c->wl[c->pairs[e->pair].lp];
    int hmax = p->max_len < hw->n ? p->max_len : hw->n, lmax = p->max_len < lw->n ? p->max_len : lw->n;
    int hmin = p->min_len < hmax ? p->min_len : hmax, lmin = p->min_len < lmax ? p->min_len : lmax;
    e->hp_len = psi_rng_int(&rng, hmin, hmax);
    e->lp_len = psi_rng_int(&rng, lmin, lmax);
    e->hp_start = psi_rng_int(&rng, 0, hw->n - e->hp_len);
    e->lp_start = psi_rng_int(&rng, 0, lw->n - e->lp_len);
    const split_t *s = &c->splits[e->split];
    const sim_placed_t *ha = c->placed[(size_t)c->pairs[e->pair].hp * c->n_tpcs + c->tpc_slot[s->hp]];
    const sim_placed_t *la = c->placed[(size_t)c->pairs[e->pair].lp * c->n_tpcs + c->tpc_slot[s->lp]];
    sim_coexec_t co = psi_sim_coexec(c->g, &c->ph, ha + e->hp_start, e->hp_len, la + e->lp_start, e->lp_len);
    e->hp_ns = co.a_ns + c->ph.dispatch_ns;
    e->lp_ns = co.b_ns + c->ph.dispatch_ns;
    /* Eq. 9: per-run noise, a shared factor (clock, host) and one per side. */
    for (int r = 0; r < p->runs; r++) {
        double shared = 0.5 * p->noise * psi_rng_normal(&rng);
        w->noise_hp[(size_t)i * p->runs + r] = exp(shared + p->noise * psi_rng_normal(&rng));
        w->noise_lp[(size_t)i * p->runs + r] = exp(shared + p->noise * psi_rng_normal(&rng));
    }
}

static void *worker(void *arg)
{
    work_t *w = arg;
    for (;;) {
        long start = atomic_fetch_add(&w->next, CHUNK);
        if (start >= w->p->experiments)
            break;
        long end = start + CHUNK < w->p->experiments ? start + CHUNK : w->p->experiments;
        for (long i = start; i < end; i++)
            run_experiment(w, i);
        atomic_fetch_add(&w->done, end - start);
    }
    return NULL;
}

static int run_all(campaign_t *c, const ps_sim_params_t *p, work_t *w)
{
    int threads = p->threads;
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)n : 1;
    }
    if (threads > 256)
        threads = 256;
    w->c = c;
    w->p = p;
    atomic_init(&w->next, 0);
    atomic_init(&w->done, 0);
    pthread_t tid[256];
    int started = 0;
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&tid[started], NULL, worker, w) != 0)
            break; /* fewer threads: the result is the same */
        started++;
    }
    /* The calling thread works too and reports progress between chunks. */
    for (;;) {
        long start = atomic_fetch_add(&w->next, CHUNK);
        if (start >= p->experiments)
            break;
        long end = start + CHUNK < p->experiments ? start + CHUNK : p->experiments;
        for (long i = start; i < end; i++)
            run_experiment(w, i);
        long done = atomic_fetch_add(&w->done, end - start) + (end - start);
        if (p->progress)
            p->progress("simulate", (double)done, (double)p->experiments, p->progress_user);
    }
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    if (p->progress)
        p->progress("simulate", (double)p->experiments, (double)p->experiments, p->progress_user);
    return 0;
}

static int write_coexec(campaign_t *c, const ps_sim_params_t *p, work_t *w, ps_coexec_t *cx)
{
    char id[64];
    for (long i = 0; i < p->experiments; i++) {
        const experiment_t *e = &w->ex[i];
        const sim_workload_t *hw = &c->wl[c->pairs[e->pair].hp], *lw = &c->wl[c->pairs[e->pair].lp];
        /* Unique across GPUs and seeds, so that campaigns can be concatenated. */
        snprintf(id, sizeof id, "%s-s%llu-%07ld", c->g->aliases[0] ? c->g->aliases[0] : c->g->name,
                 (unsigned long long)p->seed, i);
        for (int r = 0; r < p->runs; r++) {
            psi_coexec_row_t row = {
                .experiment = id,
                .gpu = c->g->name,
                .hp_model = hw->model,
                .hp_batch = hw->batch,
                .hp_start = e->hp_start,
                .hp_len = e->hp_len,
                .lp_model = lw->model,
                .lp_batch = lw->batch,
                .lp_start = e->lp_start,
                .lp_len = e->lp_len,
                .hp_tpcs = c->splits[e->split].hp,
                .lp_tpcs = c->splits[e->split].lp,
                .hp_ns = e->hp_ns * w->noise_hp[(size_t)i * p->runs + r],
                .lp_ns = e->lp_ns * w->noise_lp[(size_t)i * p->runs + r],
                .mechanism = "sim",
            };
            int rc = ps_coexec_append(cx, &row);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

static int check_params(const ps_sim_params_t *p)
{
    if (p->min_len < 1 || p->max_len < p->min_len)
        return psi_error(PS_E_ARG, "segment lengths: need 1 <= min-len <= max-len (got %d, %d)", p->min_len,
                         p->max_len);
    if (p->experiments < 1 || p->experiments > 100000000L)
        return psi_error(PS_E_ARG, "experiments: %ld out of range 1..1e8", p->experiments);
    if (p->runs < 1 || p->runs > 10000)
        return psi_error(PS_E_ARG, "runs: %d out of range 1..10000", p->runs);
    /* Every run is a row held in memory (about 120 bytes). */
    if ((double)p->experiments * p->runs > 2e7)
        return psi_error(PS_E_ARG, "experiments x runs = %.0f rows, more than 2e7", (double)p->experiments * p->runs);
    if (psi_thread_check("threads", p->threads) != PS_OK)
        return PS_E_ARG;
    if (!(p->noise >= 0 && p->noise < 1))
        return psi_error(PS_E_ARG, "noise: %g out of range [0, 1)", p->noise);
    if (p->launch != PS_SIM_LAUNCH_GATED && p->launch != PS_SIM_LAUNCH_HOST)
        return psi_error(PS_E_ARG, "launch: %d is neither gated (0) nor host (1)", p->launch);
    if (p->bert_seq < 1 || p->bert_seq > 8192 || p->llama_prompt < 1 || p->llama_prompt > 131072)
        return psi_error(PS_E_ARG, "sequence lengths out of range");
    return 0;
}

int ps_sim_run(const ps_sim_params_t *p, ps_ops_t **out_ops, ps_coexec_t **out_coexec)
{
    *out_ops = NULL;
    *out_coexec = NULL;
    campaign_t c = {0};
    work_t w = {0};
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    int rc = check_params(p);
    if (rc != 0)
        return rc;
    c.g = psi_sim_gpu_find(p->gpu);
    if (!c.g)
        return PS_E_ARG;
    c.ph = psi_sim_physics_default();
    c.ph.launch = p->launch == PS_SIM_LAUNCH_HOST ? SIM_LAUNCH_HOST : SIM_LAUNCH_GATED;
    if ((rc = parse_pairs(&c, p)) != 0 || (rc = parse_splits(&c, p->splits)) != 0 ||
        (rc = campaign_prepare(&c, p)) != 0)
        goto done;
    ops = ps_ops_new();
    cx = ps_coexec_new();
    size_t samples = (size_t)p->experiments * (size_t)p->runs;
    w.ex = psi_malloc((size_t)p->experiments * sizeof *w.ex);
    w.noise_hp = psi_malloc(samples * sizeof(double));
    w.noise_lp = psi_malloc(samples * sizeof(double));
    if (!ops || !cx || !w.ex || !w.noise_hp || !w.noise_lp) {
        rc = PS_E_NOMEM;
        goto done;
    }
    if ((rc = write_ops(&c, ops)) != 0 || (rc = psi_ops_index(ops)) != 0 || (rc = run_all(&c, p, &w)) != 0 ||
        (rc = write_coexec(&c, p, &w, cx)) != 0)
        goto done;
    *out_ops = ops;
    *out_coexec = cx;
    ops = NULL;
    cx = NULL;
done:
    ps_ops_free(ops);
    ps_coexec_free(cx);
    free(w.ex);
    free(w.noise_hp);
    free(w.noise_lp);
    campaign_free(&c);
    return rc;
}
