/*
 * Campaigns: plan the tasks of a profile or co-execution campaign, run those
 * the database has not finished on the backend, and commit each task's rows
 * with its done mark in one transaction (see store.h for why that makes a
 * killed campaign resumable without lost or duplicated rows).
 */
#include "collect/backend.h"
#include "collect/plan.h"
#include "collect/shard.h"
#include "collect/store.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ps_campaign {
    psi_store_t *store;
    psi_backend_t *be; /* NULL when opened for status and export only */
    ps_collect_params_t p;
    out_lock_t *lock; /* held by a collector (opened with a device) */
};

psi_store_t *psi_campaign_store(ps_campaign_t *c) { return c->store; }

int ps_campaign_open(const char *db_path, const ps_collect_params_t *p, ps_campaign_t **out)
{
    *out = NULL;
    if (!db_path)
        return psi_error(PS_E_ARG, "no campaign database given");
    if (p && (p->warmup < 0 || p->warmup > 100000 || p->profile_runs < 0 || p->profile_runs > 100000))
        return psi_error(PS_E_ARG, "warmup %d, runs %d: each must be in 0..100000", p->warmup, p->profile_runs);
    ps_campaign_t *c = psi_calloc(1, sizeof *c);
    if (!c)
        return PS_E_NOMEM;
    int rc = 0;
    /* One collector per database: a second one is told who holds it
     * (SQLite's own locking let both run and fail with raw SQLite text).
     * An in-memory database is the process's own: no lock file (two
     * processes in one folder each took ":memory:.lock" and one refused). */
    if (p && strcmp(db_path, ":memory:") != 0)
        rc = psi_out_lock_acquire(db_path, 0, &c->lock);
    if (rc == 0 && p) {
        c->p = *p;
        c->p.backend = NULL; /* borrowed; not kept past the call */
        rc = psi_backend_open(p, &c->be);
    }
    if (rc == 0)
        rc = psi_store_open(db_path, &c->store);
    if (rc == 0 && c->be) {
        char seq[32];
        snprintf(seq, sizeof seq, "%d", p->seq_len);
        rc = psi_store_meta_pin(c->store, "gpu", c->be->dev.gpu, "GPU");
        if (rc == 0)
            rc = psi_store_meta_pin(c->store, "seq_len", seq, "seq_len");
        if (rc == 0)
            rc = psi_shard_open(c->store, p);
    }
    if (rc) {
        ps_campaign_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void ps_campaign_free(ps_campaign_t *c)
{
    if (!c)
        return;
    if (c->be)
        c->be->free(c->be);
    psi_store_close(c->store);
    psi_out_lock_release(c->lock);
    free(c);
}

int ps_campaign_device(const ps_campaign_t *c, ps_collect_device_t *out)
{
    if (!c->be)
        return psi_error(PS_E_ARG, "the campaign was opened without a device");
    *out = c->be->dev;
    return 0;
}

ps_coexec_plan_t ps_coexec_default_plan(void)
{
    ps_coexec_plan_t p = {
        .experiments = 100,
        .runs = 30,
        .seg_min = 1,
        .seg_max = 16,
        .seed = 1,
    };
    return p;
}

static int need_device(const ps_campaign_t *c)
{
    return c->be ? 0 : psi_error(PS_E_ARG, "the campaign was opened without a device");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (reorders v). */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* End the transaction of task key, begun by psi_store_begin: when rc is 0,
 * mark the task done and commit; otherwise roll back. Returns the outcome. */
static int end_task(ps_campaign_t *c, const char *key, int rc)
{
    if (rc == 0)
        rc = psi_store_task_done(c->store, key);
    if (rc == 0)
        return psi_store_commit(c->store);
    psi_store_rollback(c->store);
    return rc;
}

/* The TPC counts of a call: the caller's (checked) or every valid one. */
static int campaign_tpcs(const ps_campaign_t *c, const int *tpcs, int n, int **out, int *n_out)
{
    *out = NULL;
    int cap = c->be->dev.sm_count + 1;
    int *v = psi_calloc((size_t)cap, sizeof *v);
    if (!v)
        return PS_E_NOMEM;
    if (tpcs) {
        if (n > cap) {
            free(v);
            return psi_error(PS_E_ARG, "too many TPC counts");
        }
        memcpy(v, tpcs, (size_t)n * sizeof *v);
        int rc = psi_plan_grant_tpcs(&c->be->dev, v, n);
        if (rc) {
            free(v);
            return rc;
        }
    } else {
        n = ps_collect_valid_tpcs(&c->be->dev, v, cap);
    }
    *out = v;
    *n_out = n;
    return 0;
}

/* Whether the SM clock of run r (mhz, NAN unknown) is off the campaign's
 * (ref, NAN before it is known) by more than the tolerance. */
static int off_clock(const ps_campaign_t *c, double ref, double mhz)
{
    return c->p.clock_tol_pct > 0 && !isnan(ref) && !isnan(mhz) && fabs(mhz - ref) > ref * c->p.clock_tol_pct / 100.0;
}

/* The campaign's SM clock: pinned in the database by the first task that
 * reads one (the median of its runs), NAN until then. */
static int campaign_clock(ps_campaign_t *c, const double *mhz, int runs, double *ref)
{
    char buf[64];
    int r = psi_store_meta_get(c->store, "sm_clock_mhz", buf, sizeof buf);
    if (r < 0)
        return r;
    if (r == 1) {
        *ref = atof(buf);
        return 0;
    }
    double *v = psi_malloc((size_t)runs * sizeof *v);
    if (!v)
        return PS_E_NOMEM;
    int n = 0;
    for (int i = 0; i < runs; i++)
        if (!isnan(mhz[i]))
            v[n++] = mhz[i];
    *ref = n ? median(v, n) : NAN;
    free(v);
    if (n == 0)
        return 0;
    snprintf(buf, sizeof buf, "%.1f", *ref);
    return psi_store_meta_pin(c->store, "sm_clock_mhz", buf, "SM clock");
}

/* Check the clocks of one attempt's runs. *refused is set when a run is
 * off-clock; those runs are recorded as refused at once. */
static int check_clocks(ps_campaign_t *c, const char *key, const psi_runs_t *rs, int *refused, char *why,
                        size_t why_size)
{
    const double *mhz = rs->clock_mhz;
    int runs = rs->runs;
    double ref = NAN;
    int rc = campaign_clock(c, mhz, runs, &ref);
    *refused = 0;
    for (int r = 0; r < runs && rc == 0; r++) {
        if (!off_clock(c, ref, mhz[r]))
            continue;
        if (!*refused)
            snprintf(why, why_size, "run %d ran at %.0f MHz, the campaign's SM clock is %.0f MHz", r, mhz[r], ref);
        *refused = 1;
        rc = psi_store_put_clock(c->store, key, r, mhz[r], 1);
    }
    return rc;
}

#define CLOCK_ATTEMPTS 3

static int clock_refusal(const ps_campaign_t *c, const char *key, const char *why)
{
    return psi_error(PS_E_BACKEND,
                     "%s: refused %d times for its SM clock (%s; more than %g%% off): lock the "
                     "clocks (nvidia-smi --lock-gpu-clocks=MHZ,MHZ) or give --clock-tol",
                     key, CLOCK_ATTEMPTS, why, c->p.clock_tol_pct);
}

/* Record the device memory of l as the backend lays it out. */
static int store_model_memory(ps_campaign_t *c, const psi_oplist_t *l)
{
    if (!c->be->buffers)
        return 0;
    psi_memplan_t m;
    int rc = c->be->buffers(c->be, l, &m);
    if (rc == 0)
        rc = psi_store_put_model(c->store, c->be->dev.gpu, l->model, l->batch, (double)m.weight_bytes,
                                 (double)m.activation_bytes);
    psi_memplan_free(&m);
    return rc;
}

static int run_profile_task(ps_campaign_t *c, const psi_oplist_t *l, int tpcs, const char *key)
{
    int runs = c->p.profile_runs;
    double *ns = psi_malloc((size_t)l->n * (size_t)runs * sizeof *ns);
    double *mhz = psi_malloc((size_t)runs * sizeof *mhz);
    int rc = ns && mhz ? 0 : PS_E_NOMEM, refused = 1;
    psi_runs_t rs = {c->p.warmup, runs, mhz};
    char why[160] = "";
    for (int a = 0; a < CLOCK_ATTEMPTS && rc == 0 && refused; a++) {
        rc = c->be->profile(c->be, l, tpcs, &rs, ns);
        if (rc == 0)
            rc = check_clocks(c, key, &rs, &refused, why, sizeof why);
    }
    if (rc == 0 && refused)
        rc = clock_refusal(c, key, why);
    if (rc == 0)
        rc = store_model_memory(c, l);
    if (rc == 0)
        rc = psi_store_begin(c->store);
    if (rc == 0) {
        for (int r = 0; r < runs && rc == 0; r++)
            rc = psi_store_put_clock(c->store, key, r, mhz[r], 0);
        for (int i = 0; i < l->n && rc == 0; i++) {
            double m = median(ns + (size_t)i * (size_t)runs, runs);
            if (!(m > 0))
                rc = psi_error(PS_E_BACKEND, "%s op %d (%s) at %d TPCs: non-positive time %g", l->model, i,
                               l->ops[i].name, tpcs, m);
            else
                rc = psi_store_put_op(c->store, &(psi_op_key_t){c->be->dev.gpu, l->model, l->batch, i, tpcs},
                                      l->ops[i].name, m);
        }
        rc = end_task(c, key, rc);
    }
    free(mhz);
    free(ns);
    return rc;
}

int ps_campaign_profile(ps_campaign_t *c, const char *model, int batch, const int *tpcs, int n_tpcs, ps_progress_fn fn,
                        void *user)
{
    int rc = need_device(c);
    if (rc)
        return rc;
    psi_oplist_t *l = NULL;
    int *t = NULL, n = 0;
    rc = psi_zoo_build(model, batch, c->p.seq_len, &l);
    if (rc == 0)
        rc = campaign_tpcs(c, tpcs, n_tpcs, &t, &n);
    int *done = rc ? NULL : psi_calloc((size_t)n + 1, sizeof *done);
    if (rc == 0 && !done)
        rc = PS_E_NOMEM;
    char key[256], spec[64];
    long n_done = 0;
    /* Plan every task first, so that status shows the whole campaign. */
    if (rc == 0)
        rc = psi_shard_pin_profile(c->store, &c->p, model, batch, t, n);
    long n_mine = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        if (!psi_shard_mine(&c->p, i)) {
            done[i] = -1;
            continue;
        }
        snprintf(key, sizeof key, "profile/%s/b%d/t%d", model, batch, t[i]);
        snprintf(spec, sizeof spec, "ops=%d", l->n);
        rc = psi_store_task_plan(c->store, key, "profile", spec, &done[i]);
        n_done += done[i];
        n_mine++;
    }
    for (int i = 0; i < n && rc == 0; i++) {
        if (done[i])
            continue;
        snprintf(key, sizeof key, "profile/%s/b%d/t%d", model, batch, t[i]);
        rc = run_profile_task(c, l, t[i], key);
        if (rc == 0 && fn)
            fn("profile", (double)++n_done, (double)n_mine, user);
    }
    if (rc)
        psi_error_prefix(rc, model);
    free(done);
    free(t);
    psi_oplist_free(l);
    return rc;
}

static int run_coexec_task(ps_campaign_t *c, const ps_coexec_plan_t *plan, const psi_oplist_t *hl,
                           const psi_oplist_t *ll, const psi_experiment_t *e, const char *key)
{
    int runs = plan->runs;
    double *hp = psi_malloc(3 * (size_t)runs * sizeof *hp);
    if (!hp)
        return PS_E_NOMEM;
    double *lp = hp + runs, *mhz = lp + runs;
    psi_segment_t hs = {hl, e->hp_start, e->hp_len, e->hp_tpcs};
    psi_segment_t ls = {ll, e->lp_start, e->lp_len, e->lp_tpcs};
    psi_runs_t rs = {c->p.warmup, runs, mhz};
    int rc = 0, refused = 1;
    char why[160] = "";
    for (int a = 0; a < CLOCK_ATTEMPTS && rc == 0 && refused; a++) {
        rc = c->be->coexec(c->be, &hs, &ls, &rs, hp, lp);
        if (rc == 0)
            rc = check_clocks(c, key, &rs, &refused, why, sizeof why);
    }
    if (rc == 0 && refused)
        rc = clock_refusal(c, key, why);
    if (rc == 0)
        rc = psi_store_begin(c->store);
    if (rc == 0) {
        for (int r = 0; r < runs && rc == 0; r++)
            rc = psi_store_put_clock(c->store, key, r, mhz[r], 0);
        psi_coexec_row_t row = {
            .experiment = e->name,
            .gpu = c->be->dev.gpu,
            .hp_model = plan->hp_model,
            .hp_batch = plan->hp_batch,
            .hp_start = e->hp_start,
            .hp_len = e->hp_len,
            .lp_model = plan->lp_model,
            .lp_batch = plan->lp_batch,
            .lp_start = e->lp_start,
            .lp_len = e->lp_len,
            .hp_tpcs = e->hp_tpcs,
            .lp_tpcs = e->lp_tpcs,
            .mechanism = c->be->mechanism,
        };
        for (int r = 0; r < runs && rc == 0; r++) {
            row.hp_ns = hp[r];
            row.lp_ns = lp[r];
            if (!(hp[r] > 0) || !(lp[r] > 0))
                rc = psi_error(PS_E_BACKEND, "%s run %d: non-positive time", e->name, r);
            else
                rc = psi_store_put_coexec(c->store, &row, r);
        }
        rc = end_task(c, key, rc);
    }
    free(hp);
    return rc;
}

int ps_campaign_coexec(ps_campaign_t *c, const ps_coexec_plan_t *plan, ps_progress_fn fn, void *user)
{
    int rc = need_device(c);
    if (rc)
        return rc;
    if (!plan->hp_model || !plan->lp_model)
        return psi_error(PS_E_ARG, "a co-execution plan needs an HP and an LP model");
    psi_oplist_t *hl = NULL, *ll = NULL;
    psi_experiment_t *e = NULL;
    int n = 0;
    rc = psi_zoo_build(plan->hp_model, plan->hp_batch, c->p.seq_len, &hl);
    if (rc == 0)
        rc = psi_zoo_build(plan->lp_model, plan->lp_batch, c->p.seq_len, &ll);
    if (rc == 0)
        rc = psi_plan_coexec(plan, &c->be->dev, hl->n, ll->n, &e, &n);
    int *done = rc ? NULL : psi_calloc((size_t)n, sizeof *done);
    if (rc == 0 && !done)
        rc = PS_E_NOMEM;
    char key[256], spec[160];
    long n_done = 0;
    if (rc == 0)
        rc = psi_shard_pin_coexec(c->store, &c->p, plan);
    long n_mine = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        if (!psi_shard_mine(&c->p, i)) {
            done[i] = -1;
            continue;
        }
        snprintf(key, sizeof key, "coexec/%s", e[i].name);
        snprintf(spec, sizeof spec, "hp=%d+%d@%d lp=%d+%d@%d runs=%d", e[i].hp_start, e[i].hp_len, e[i].hp_tpcs,
                 e[i].lp_start, e[i].lp_len, e[i].lp_tpcs, plan->runs);
        rc = psi_store_task_plan(c->store, key, "coexec", spec, &done[i]);
        n_done += done[i];
        n_mine++;
    }
    for (int i = 0; i < n && rc == 0; i++) {
        if (done[i])
            continue;
        snprintf(key, sizeof key, "coexec/%s", e[i].name);
        rc = run_coexec_task(c, plan, hl, ll, &e[i], key);
        if (rc)
            psi_error_prefix(rc, e[i].name);
        else if (fn)
            fn("coexec", (double)++n_done, (double)n_mine, user);
    }
    free(done);
    free(e);
    psi_oplist_free(hl);
    psi_oplist_free(ll);
    return rc;
}

/* Store the counters v[0..n) of one pass (task key, one transaction), those
 * of operator i under k with k.op = i: those of the whole device in the
 * counters table, those of a partition beside them. */
static int store_counters(ps_campaign_t *c, const char *key, psi_op_key_t k, int n, int whole, const psi_counters_t *v)
{
    int rc = psi_store_begin(c->store);
    if (rc)
        return rc;
    for (k.op = 0; k.op < n && rc == 0; k.op++)
        rc = whole ? psi_store_put_counters(c->store, &k, &v[k.op]) : psi_store_put_counters_at(c->store, &k, &v[k.op]);
    return end_task(c, key, rc);
}

int ps_campaign_counters_at(ps_campaign_t *c, const char *model, int batch, int tpcs)
{
    int rc = need_device(c);
    if (rc)
        return rc;
    if (!c->be->counters)
        return psi_error(PS_E_BACKEND, "the %s backend has no counters in this build", c->be->name);
    int whole = tpcs <= 0 || tpcs == c->be->dev.tpc_count;
    if (whole)
        tpcs = c->be->dev.tpc_count;
    else if ((rc = psi_plan_grant_tpcs(&c->be->dev, &tpcs, 1)) != 0)
        return rc;
    psi_oplist_t *l = NULL;
    rc = psi_zoo_build(model, batch, c->p.seq_len, &l);
    if (rc)
        return rc;
    char key[256], spec[64];
    if (whole)
        snprintf(key, sizeof key, "counters/%s/b%d", model, batch);
    else
        snprintf(key, sizeof key, "counters/%s/b%d/t%d", model, batch, tpcs);
    snprintf(spec, sizeof spec, "ops=%d tpcs=%d", l->n, tpcs);
    int done = 0;
    rc = psi_store_task_plan(c->store, key, "counters", spec, &done);
    psi_counters_t *v = rc || done ? NULL : psi_calloc((size_t)l->n, sizeof *v);
    if (rc == 0 && !done && !v)
        rc = PS_E_NOMEM;
    if (rc == 0 && !done) {
        for (int i = 0; i < l->n; i++)
            v[i].dram_bytes = v[i].l2_bytes = v[i].stall_long_scoreboard = v[i].stall_lg_throttle =
                v[i].stall_mio_throttle = v[i].sm_pct = v[i].mem_pct = NAN;
        rc = c->be->counters(c->be, l, tpcs, v);
        if (rc == 0)
            rc = store_counters(c, key, (psi_op_key_t){c->be->dev.gpu, l->model, l->batch, 0, tpcs}, l->n, whole, v);
    }
    free(v);
    psi_oplist_free(l);
    return rc;
}

int ps_campaign_counters(ps_campaign_t *c, const char *model, int batch)
{
    return ps_campaign_counters_at(c, model, batch, 0);
}

int ps_campaign_fixed_cost(ps_campaign_t *c, int hp_tpcs, int lp_tpcs, int runs, double *out_hp_ns, double *out_lp_ns)
{
    int rc = need_device(c);
    if (rc)
        return rc;
    if (runs <= 0)
        return psi_error(PS_E_ARG, "fixed cost: need runs > 0");
    int t[2] = {hp_tpcs, lp_tpcs};
    rc = psi_plan_grant_tpcs(&c->be->dev, t, 2);
    hp_tpcs = t[0];
    lp_tpcs = t[1];
    if (rc == 0 && hp_tpcs + lp_tpcs > c->be->dev.tpc_count)
        rc = psi_error(PS_E_ARG, "%d + %d TPCs exceed the %s's %d", hp_tpcs, lp_tpcs, c->be->dev.gpu,
                       c->be->dev.tpc_count);
    double *mhz = rc ? NULL : psi_malloc((size_t)runs * sizeof *mhz);
    if (rc == 0 && !mhz)
        rc = PS_E_NOMEM;
    psi_segment_t hs = {NULL, 0, 0, hp_tpcs}, ls = {NULL, 0, 0, lp_tpcs};
    psi_runs_t rs = {c->p.warmup, runs, mhz};
    if (rc == 0)
        rc = c->be->coexec(c->be, &hs, &ls, &rs, out_hp_ns, out_lp_ns);
    free(mhz);
    return rc;
}

int ps_campaign_model_memory(ps_campaign_t *c, const char *model, int batch, double *out_weight_bytes,
                             double *out_activation_bytes)
{
    int rc = need_device(c);
    if (rc)
        return rc;
    if (!c->be->buffers)
        return psi_error(PS_E_BACKEND, "the %s backend does not lay out memory", c->be->name);
    psi_oplist_t *l = NULL;
    psi_memplan_t m;
    rc = psi_zoo_build(model, batch, c->p.seq_len, &l);
    if (rc == 0)
        rc = c->be->buffers(c->be, l, &m);
    if (rc == 0) {
        *out_weight_bytes = (double)m.weight_bytes;
        *out_activation_bytes = (double)m.activation_bytes;
        psi_memplan_free(&m);
    }
    psi_oplist_free(l);
    return rc;
}

int ps_campaign_import_counters(ps_campaign_t *c, const char *model, int batch, const char *ncu_csv)
{
    char gpu[64], seq[32];
    int rc = psi_store_meta_get(c->store, "gpu", gpu, sizeof gpu);
    if (rc <= 0)
        return rc < 0 ? rc : psi_error(PS_E_ARG, "the campaign has no GPU yet: profile on it first");
    int seq_len = psi_store_meta_get(c->store, "seq_len", seq, sizeof seq) == 1 ? atoi(seq) : 0;
    psi_oplist_t *l = NULL;
    ps_ops_t *rep = NULL;
    rc = psi_zoo_build(model, batch, seq_len, &l);
    ps_import_params_t ip = {.gpu = gpu, .model = model, .batch = batch, .tpcs = 1, .stream = NULL};
    if (rc == 0)
        rc = ps_import_ncu(ncu_csv, &ip, &rep);
    if (rc == 0 && rep->n != (size_t)l->n)
        rc = psi_error(PS_E_INPUT,
                       "%s: %zu kernel launches for the %d operators of %s at batch %d (profile one "
                       "inference with one kernel per operator)",
                       ncu_csv, rep->n, l->n, model, batch);
    char key[256], spec[64];
    snprintf(key, sizeof key, "counters/%s/b%d", model, batch);
    snprintf(spec, sizeof spec, "ops=%d ncu", l ? l->n : 0);
    int done = 0;
    if (rc == 0)
        rc = psi_store_task_plan(c->store, key, "counters", spec, &done);
    if (rc == 0 && done)
        rc = psi_error(PS_E_MISMATCH, "the campaign already has counters for %s at batch %d", model, batch);
    psi_counters_t *v = rc ? NULL : psi_calloc((size_t)l->n, sizeof *v);
    if (rc == 0 && !v)
        rc = PS_E_NOMEM;
    for (int i = 0; rc == 0 && i < l->n; i++)
        v[i] = rep->rows[i].c;
    if (rc == 0)
        rc = store_counters(c, key, (psi_op_key_t){gpu, l->model, l->batch, 0, 0}, l->n, 1, v);
    free(v);
    ps_ops_free(rep);
    psi_oplist_free(l);
    return rc;
}

int ps_campaign_status(ps_campaign_t *c, ps_campaign_status_t *out) { return psi_store_status(c->store, out); }
