/*
 * Collect's workload-level workflow (ps_collect_job_run's scaling and
 * colocate): whole models under MPS shares, their rows added to CSV tables.
 * Each table is read, added to and written again under its lock, held for
 * the whole job (a second collector waits, then adds to what the first
 * wrote: rows were lost when both ran at once), and written atomically
 * (temporary file, fsync, rename: ps_*_save). A row already there is
 * refused rather than measured twice; a scaling run killed between its two
 * tables is finished from the first without measuring again.
 */
#include "collect/workflow.h"

#include "common/common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The workload id of FORMATS.md's examples: "bert-base_batch8-inf". */
static void workload_id(const char *model, int batch, char *out, size_t size)
{
    snprintf(out, size, "%s_batch%d-inf", model, batch);
}

/* The locks of paths a and b (either may be NULL), taken in the order of
 * their names so that two collectors never wait on each other. */
static int lock_both(const char *a, const char *b, ps_outlock_t **la, ps_outlock_t **lb)
{
    *la = *lb = NULL;
    int first = !b || (a && strcmp(a, b) < 0);
    int rc = ps_outlock_acquire(first ? a : b, 1, first ? la : lb);
    if (rc == PS_OK && a && b)
        rc = ps_outlock_acquire(first ? b : a, 1, first ? lb : la);
    return rc;
}

/* The workload's row of workloads.csv: its throughput alone at 100%, the
 * counters unmeasured. */
static ps_workload_row_t alone_row(const char *gpu, const char *wid, double tput100)
{
    ps_workload_row_t w = {.gpu = gpu, .workload = wid, .exclusive_tput = tput100};
    double *opt[] = {
        &w.threads,           &w.registers,         &w.static_smem,  &w.sm_tput_pct, &w.dram_tput_pct,
        &w.mem_tput_pct,      &w.sm_busy_pct,       &w.mem_busy_pct, &w.memcap_gb,   &w.stall_long_scoreboard,
        &w.stall_lg_throttle, &w.stall_mio_throttle};
    for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++)
        *opt[i] = NAN;
    return w;
}

/* 1 when wl has a row of workload wid on gpu. */
static int has_workload(const ps_workloads_t *wl, const char *gpu, const char *wid)
{
    for (size_t i = 0; i < ps_workloads_rows(wl); i++) {
        const char *g = NULL, *wk = NULL;
        ps_workloads_key(wl, i, &g, &wk);
        if (strcmp(g, gpu) == 0 && strcmp(wk, wid) == 0)
            return 1;
    }
    return 0;
}

/* Row w added to wl and saved at path unless its gpu and workload are
 * there already. */
static int add_workload(const char *path, ps_workloads_t *wl, const ps_workload_row_t *w)
{
    if (has_workload(wl, w->gpu, w->workload))
        return psi_error(PS_E_INPUT, "%s already has %s on %s", path, w->workload, w->gpu);
    int rc = ps_workloads_append(wl, w);
    return rc == 0 ? ps_workloads_save(wl, path) : rc;
}

/* The scaling table is saved before the workloads table. A run killed
 * between the two saves left every share in the first and the workload
 * missing from the second: 1 when that is so (*gpu and *tput100 are then
 * the first table's), and the job finishes it without measuring. */
static int interrupted_run(const ps_collect_job_t *j, const ps_scaling_t *sc, const ps_workloads_t *wl, const char *wid,
                           const char **gpu, double *tput100)
{
    int have = 0;
    for (int k = 0; k < j->n_shares; k++)
        for (size_t i = 0; i < ps_scaling_rows(sc); i++) {
            const ps_scaling_row_t *r = ps_scaling_row(sc, i);
            if (strcmp(r->workload, wid) == 0 && r->share_pct == j->shares[k] && (!*gpu || strcmp(*gpu, r->gpu) == 0)) {
                *gpu = r->gpu;
                have++;
                if (j->shares[k] == 100)
                    *tput100 = r->tput;
                break;
            }
        }
    return have == j->n_shares && !isnan(*tput100) && !has_workload(wl, *gpu, wid);
}

/* Each share measured alone into sc (refused when sc has it already);
 * *tput100 the 100% throughput. */
static int measure_shares(const ps_collect_job_t *j, ps_scaling_t *sc, ps_collect_job_result_t *r, double *tput100)
{
    int rc = PS_OK;
    for (int k = 0; k < j->n_shares && rc == PS_OK; k++) {
        ps_mps_job_t job = {j->model, j->batch, j->shares[k]};
        double t = 0;
        int sms = 0;
        if (j->progress)
            j->progress("scaling", k, j->n_shares, j->progress_user);
        rc = ps_collect_mps_run_sms(&j->params, &job, 1, j->seconds, &t, r->gpu, sizeof r->gpu, &sms);
        for (size_t i = 0; rc == PS_OK && i < ps_scaling_rows(sc); i++) {
            const ps_scaling_row_t *s = ps_scaling_row(sc, i);
            if (strcmp(s->gpu, r->gpu) == 0 && strcmp(s->workload, r->id) == 0 && s->share_pct == j->shares[k])
                rc = psi_error(PS_E_INPUT, "%s already has %s at %d%% on %s", j->scaling_path, r->id, j->shares[k],
                               r->gpu);
        }
        ps_scaling_row_t row = {r->gpu, r->id, j->shares[k], t};
        if (rc == PS_OK)
            rc = ps_scaling_append(sc, &row);
        if (rc == PS_OK && j->shares[k] == 100)
            *tput100 = t;
        if (rc == PS_OK) {
            r->tput[r->n_rows] = t;
            r->exec_sms[r->n_rows++] = sms;
        }
    }
    return rc;
}

int psi_collect_scaling(const ps_collect_job_t *j, ps_collect_job_result_t *r)
{
    ps_scaling_t *sc = NULL;
    ps_workloads_t *wl = NULL;
    ps_outlock_t *la = NULL, *lb = NULL;
    workload_id(j->model, j->batch, r->id, sizeof r->id);
    int rc = lock_both(j->scaling_path, j->workloads_path, &la, &lb);
    /* Add to the tables when they exist, refusing to measure twice. */
    if (rc == PS_OK && access(j->scaling_path, F_OK) == 0)
        rc = ps_scaling_load(j->scaling_path, &sc);
    else if (rc == PS_OK && !(sc = ps_scaling_new()))
        rc = PS_E_NOMEM;
    if (rc == PS_OK && access(j->workloads_path, F_OK) == 0)
        rc = ps_workloads_load(j->workloads_path, &wl);
    else if (rc == PS_OK && !(wl = ps_workloads_new()))
        rc = PS_E_NOMEM;
    double tput100 = NAN;
    const char *have_gpu = NULL;
    int resume = rc == PS_OK && interrupted_run(j, sc, wl, r->id, &have_gpu, &tput100);
    if (resume && j->note) {
        char msg[1024]; /* as the library's log line was: cut at 1,023 bytes */
        snprintf(r->gpu, sizeof r->gpu, "%s", have_gpu);
        snprintf(msg, sizeof msg,
                 "collect: %s has every share of %s on %s but %s lacks it (an interrupted run): "
                 "writing %s only",
                 j->scaling_path, r->id, r->gpu, j->workloads_path, j->workloads_path);
        j->note(PS_LOG_WARN, msg, j->note_user);
    } else if (resume) {
        snprintf(r->gpu, sizeof r->gpu, "%s", have_gpu);
    }
    if (rc == PS_OK && !resume)
        rc = measure_shares(j, sc, r, &tput100);
    if (rc == PS_OK && !resume)
        rc = ps_scaling_save(sc, j->scaling_path);
    ps_workload_row_t alone = alone_row(r->gpu, r->id, tput100);
    if (rc == PS_OK && !isnan(tput100))
        rc = add_workload(j->workloads_path, wl, &alone);
    ps_scaling_free(sc);
    ps_workloads_free(wl);
    ps_outlock_release(lb);
    ps_outlock_release(la);
    return rc;
}

int ps_collect_colocation_id(const ps_mps_job_t *jobs, int n, char *out, size_t size)
{
    if (!jobs || !out || size == 0 || n < 1)
        return psi_error(PS_E_ARG, "ps_collect_colocation_id: NULL argument or no job");
    size_t len = 0;
    out[0] = '\0';
    for (int k = 0; k < n; k++) {
        int w = snprintf(out + len, size - len, "%s%s_batch%d-inf@%d", k ? "+" : "", jobs[k].model ? jobs[k].model : "",
                         jobs[k].batch, jobs[k].share_pct);
        if (w < 0 || (size_t)w >= size - len)
            return psi_error(PS_E_ARG, "the co-location id of the jobs is longer than %zu bytes", size - 1);
        len += (size_t)w;
    }
    return PS_OK;
}

int psi_collect_colocate(const ps_collect_job_t *j, ps_collect_job_result_t *r)
{
    char wid[96], id[512];
    if (!j->id && ps_collect_colocation_id(j->jobs, j->n_jobs, id, sizeof id) != PS_OK)
        return psi_error_prefix(PS_E_ARG, "collect: give an id");
    snprintf(r->id, sizeof r->id, "%s", j->id ? j->id : id);
    ps_outlock_t *lock = NULL;
    ps_colocations_t *t = NULL;
    int rc = ps_outlock_acquire(j->colocations_path, 1, &lock);
    if (rc == PS_OK && access(j->colocations_path, F_OK) == 0)
        rc = ps_colocations_load(j->colocations_path, &t);
    else if (rc == PS_OK && !(t = ps_colocations_new()))
        rc = PS_E_NOMEM;
    for (size_t i = 0; rc == PS_OK && i < ps_colocations_rows(t); i++)
        if (strcmp(ps_colocations_row(t, i)->colocation, r->id) == 0)
            rc = psi_error(PS_E_INPUT, "%s already has co-location %s (give another --id)", j->colocations_path, r->id);
    if (rc == PS_OK)
        rc = ps_collect_mps_run_sms(&j->params, j->jobs, j->n_jobs, j->seconds, r->tput, r->gpu, sizeof r->gpu,
                                    r->exec_sms);
    for (int k = 0; k < j->n_jobs && rc == PS_OK; k++) {
        workload_id(j->jobs[k].model, j->jobs[k].batch, wid, sizeof wid);
        ps_colocation_row_t row = {r->id, r->gpu, k + 1, wid, j->jobs[k].share_pct, r->tput[k]};
        rc = ps_colocations_append(t, &row);
        r->n_rows += rc == PS_OK;
    }
    if (rc == PS_OK)
        rc = ps_colocations_save(t, j->colocations_path);
    ps_colocations_free(t);
    ps_outlock_release(lock);
    return rc;
}
