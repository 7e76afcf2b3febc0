/*
 * Collect's workflow (pairsight_collect.h, "Collector workflow"): what
 * `pairsight collect profile | counters | coexec` does, for any front end.
 * One job runs on its campaign database, or, with devices, as one shard per
 * device, each in a child process of its own into DB.shardK-of-N, merged
 * into the database when every shard succeeded. A child reports its failure
 * through a pipe, so the caller hears it through the note callback (the
 * library prints nothing); a failed or killed shard leaves its database to
 * resume, and the same job again finishes it.
 */
#include "collect/workflow.h"

#include "common/common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_DEVICES 1024

ps_collect_job_t ps_collect_default_job(void)
{
    ps_collect_job_t j;
    memset(&j, 0, sizeof j);
    j.db = "campaign.db";
    j.batch = 8;
    j.params = ps_collect_default_params();
    j.plan = ps_coexec_default_plan();
    static const int shares[] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
    j.shares = shares;
    j.n_shares = 10;
    j.seconds = 5;
    j.scaling_path = "workload_scaling.csv";
    j.workloads_path = "workloads.csv";
    j.colocations_path = "colocations.csv";
    return j;
}

/* One decimal in 1..INT_MAX (an optional '+', digits only) at *s, up to a
 * character of stop or the end; *s moves past it. */
static int list_int(const char **s, const char *stop, int *out)
{
    const char *p = *s + (**s == '+');
    long v = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++)
        if ((v = v * 10 + (*p - '0')) > 2147483647L)
            return -1;
    if (*p && !strchr(stop, *p))
        return -1;
    *s = p;
    *out = (int)v;
    return v >= 1 ? 0 : -1;
}

int ps_collect_tpcs_parse(const char *s, int *out, int cap, int *n)
{
    if (!s || !out || !n)
        return psi_error(PS_E_ARG, "ps_collect_tpcs_parse: NULL argument");
    const char *at = s;
    *n = 0;
    for (;;) {
        while (*at == ',') /* empty items are skipped, as strtok does */
            at++;
        if (!*at)
            break;
        int lo, hi, step = 1;
        if (list_int(&at, "-,", &lo))
            goto bad;
        hi = lo;
        if (*at == '-' && (at++, list_int(&at, ":,", &hi) || hi < lo))
            goto bad;
        if (*at == ':' && (at++, list_int(&at, ",", &step)))
            goto bad;
        for (long v = lo; v <= hi; v += step) {
            if (*n == cap)
                goto bad;
            out[(*n)++] = (int)v;
        }
    }
    if (*n > 0)
        return PS_OK;
bad:
    return psi_error(PS_E_ARG, "'%s': expected counts like 8,16,32 or 4-52:4 (at most %d)", s, cap);
}

/* What a workload-level job needs: scaling a model, its shares and tables;
 * colocate its jobs and table. */
static int mps_check(const ps_collect_job_t *j, int scaling)
{
    if (scaling && (j->n_shares < 1 || j->n_shares > PS_COLLECT_MAX_ROWS || !j->shares))
        return psi_error(PS_E_ARG, "collect: scaling needs 1..%d shares", PS_COLLECT_MAX_ROWS);
    for (int k = 0; scaling && k < j->n_shares; k++)
        if (j->shares[k] < 1 || j->shares[k] > 100)
            return psi_error(PS_E_ARG, "collect: shares: %d is not a percentage in 1..100", j->shares[k]);
    if (scaling && (!j->scaling_path || !*j->scaling_path || !j->workloads_path || !*j->workloads_path))
        return psi_error(PS_E_ARG, "collect: scaling needs its tables (scaling and workloads paths)");
    if (!scaling && (j->n_jobs < 1 || j->n_jobs > PS_COLLECT_MAX_ROWS || !j->jobs))
        return psi_error(PS_E_ARG, "collect: colocate needs jobs (MODEL:BATCH@SHARE,...)");
    if (!scaling && (!j->colocations_path || !*j->colocations_path))
        return psi_error(PS_E_ARG, "collect: colocate needs its table (colocations path)");
    if (!(j->seconds > 0 && j->seconds < 1e6))
        return psi_error(PS_E_ARG, "collect: seconds: %g is not in 0..1e6 (both excluded)", j->seconds);
    return PS_OK;
}

/* What the table's own checks cannot say about job j, refused by name. */
static int job_check(const ps_collect_job_t *j)
{
    const char *a = j->action ? j->action : "";
    int plans = strcmp(a, "profile") == 0 || strcmp(a, "coexec") == 0;
    int mps = strcmp(a, "scaling") == 0 || strcmp(a, "colocate") == 0;
    if (!plans && !mps && strcmp(a, "counters") != 0)
        return psi_error(PS_E_ARG, "collect: action: '%s': expected profile, counters, coexec, scaling or colocate", a);
    if (!mps && (!j->db || !*j->db))
        return psi_error(PS_E_ARG, "collect: db: no campaign database given");
    if (strcmp(a, "coexec") != 0 && strcmp(a, "colocate") != 0 && !j->model)
        return psi_error(PS_E_ARG, "collect: %s needs a model (model_name)", a);
    if (strcmp(a, "coexec") == 0 && (!j->plan.hp_model || !j->plan.lp_model))
        return psi_error(PS_E_ARG, "collect: coexec needs hp and lp (MODEL:BATCH)");
    if (j->n_devices < 0 || j->n_devices > MAX_DEVICES || (j->n_devices && !j->devices) || (j->n_tpcs && !j->tpcs) ||
        j->n_tpcs < 0)
        return psi_error(PS_E_ARG, "collect: bad device or TPC list (NULL, or a count out of range)");
    if (j->n_devices && !plans)
        return psi_error(PS_E_ARG, "collect: devices go with profile or coexec, not %s", a);
    if (j->n_devices && j->params.shard_count)
        return psi_error(PS_E_ARG, "collect: devices and a shard: give one (devices make the shards)");
    for (int i = 0; i < j->n_devices; i++)
        for (int k = 0; k < i; k++)
            if (j->devices[i] == j->devices[k] || j->devices[i] < 0)
                return psi_error(PS_E_ARG, "collect: devices: %d twice, or below 0", j->devices[i]);
    return mps ? mps_check(j, strcmp(a, "scaling") == 0) : PS_OK;
}

/* The job's action on its database, one process. */
static int run_one(const ps_collect_job_t *j)
{
    const char *a = j->action;
    int device = strcmp(a, "counters") != 0 || !j->ncu;
    ps_campaign_t *c = NULL;
    int rc = ps_campaign_open(j->db, device ? &j->params : NULL, &c);
    if (rc != PS_OK)
        return rc;
    if (strcmp(a, "profile") == 0) {
        rc = ps_campaign_profile(c, j->model, j->batch, j->tpcs, j->n_tpcs, j->progress, j->progress_user);
    } else if (strcmp(a, "coexec") == 0) {
        ps_coexec_plan_t plan = j->plan;
        plan.tpcs = j->n_tpcs ? j->tpcs : NULL;
        plan.n_tpcs = j->n_tpcs;
        rc = ps_campaign_coexec(c, &plan, j->progress, j->progress_user);
    } else if (j->ncu) {
        rc = ps_campaign_import_counters(c, j->model, j->batch, j->ncu);
    } else if (j->n_tpcs) {
        /* Counters on each partition: the whole device's go with the count
         * that equals its TPCs. */
        for (int i = 0; i < j->n_tpcs && rc == PS_OK; i++)
            rc = ps_campaign_counters_at(c, j->model, j->batch, j->tpcs[i]);
    } else {
        rc = ps_campaign_counters(c, j->model, j->batch);
    }
    ps_campaign_free(c);
    return rc;
}

static void note(const ps_collect_job_t *j, ps_log_level_t level, const char *fmt, ...) PS_PRINTF(3, 4);
static void note(const ps_collect_job_t *j, ps_log_level_t level, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (j->note)
        j->note(level, msg, j->note_user);
}

/* Shard k of job j into db on its device, in a child process that writes
 * its failure's message to fd and exits 1 (0 done). */
static void shard_child(const ps_collect_job_t *j, int k, const char *db, int fd)
{
    ps_collect_job_t c = *j;
    c.db = db;
    c.params.device = j->devices[k];
    c.params.shard_index = k;
    c.params.shard_count = j->n_devices;
    c.progress = NULL;
    c.note = NULL;
    c.n_devices = 0;
    int rc = run_one(&c);
    if (rc != PS_OK) {
        const char *msg = ps_last_error();
        for (size_t at = 0, len = strlen(msg); at < len;) {
            ssize_t w = write(fd, msg + at, len - at);
            if (w <= 0)
                break;
            at += (size_t)w;
        }
    }
    _exit(rc == PS_OK ? 0 : 1);
}

/* The shards of a job's devices: their databases, processes and pipes, and
 * the first failure's words (for the job's error). */
typedef struct {
    char (*db)[1024];
    const char **src; /* = db, for ps_collect_merge */
    pid_t *pid;
    int *fd;
    char first[4096];
} shards_t;

/* How shard k ended, told through the note callback with its message from
 * its pipe, and kept in s->first when it is the first failure; 0 when it
 * succeeded. */
static int shard_end(const ps_collect_job_t *j, shards_t *s, int k)
{
    int status = 0, lost = waitpid(s->pid[k], &status, 0) < 0;
    char msg[2048];
    size_t len = 0;
    ssize_t r;
    while (len + 1 < sizeof msg && (r = read(s->fd[k], msg + len, sizeof msg - 1 - len)) > 0)
        len += (size_t)r;
    msg[len] = '\0';
    close(s->fd[k]);
    if (!lost && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        note(j, PS_LOG_INFO, "shard %d/%d on device %d done (%s)", k, j->n_devices, j->devices[k], s->db[k]);
        return 0;
    }
    char how[48] = "lost";
    if (!lost && WIFSIGNALED(status))
        snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(status));
    else if (!lost && WIFEXITED(status))
        snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(status));
    if (len)
        note(j, PS_LOG_ERROR, "%s", msg);
    note(j, PS_LOG_ERROR, "shard %d/%d on device %d failed (%s; %s); run the same command again to resume it", k,
         j->n_devices, j->devices[k], how, s->db[k]);
    if (!s->first[0])
        snprintf(s->first, sizeof s->first, "shard %d/%d on device %d failed (%s; %s)%s%s", k, j->n_devices,
                 j->devices[k], how, s->db[k], len ? ": " : "", msg);
    return 1;
}

/* Shard k started: its child runs it, its pipe's read end kept. */
static int shard_start(const ps_collect_job_t *j, shards_t *s, int k)
{
    int p[2];
    snprintf(s->db[k], sizeof s->db[k], "%s.shard%d-of-%d", j->db, k, j->n_devices);
    s->src[k] = s->db[k];
    int piped = pipe(p) == 0;
    s->pid[k] = piped ? fork() : -1;
    if (s->pid[k] == 0) {
        close(p[0]);
        shard_child(j, k, s->db[k], p[1]);
    }
    if (s->pid[k] < 0) {
        snprintf(s->first, sizeof s->first, "cannot start a process for device %d (%s)", j->devices[k],
                 strerror(errno));
        if (piped) {
            close(p[0]);
            close(p[1]);
        }
        note(j, PS_LOG_ERROR, "cannot start a process for device %d", j->devices[k]);
        return -1;
    }
    close(p[1]);
    s->fd[k] = p[0];
    return 0;
}

/* One child per device, then the merge of their databases into j->db. */
static int run_devices(const ps_collect_job_t *j, ps_collect_job_result_t *res)
{
    int n = j->n_devices, started = 0, rc = PS_OK;
    shards_t *s = psi_calloc(1, sizeof *s);
    if (s) {
        s->db = psi_calloc((size_t)n, sizeof *s->db);
        s->src = psi_calloc((size_t)n, sizeof *s->src);
        s->pid = psi_calloc((size_t)n, sizeof *s->pid);
        s->fd = psi_calloc((size_t)n, sizeof *s->fd);
    }
    if (!s || !s->db || !s->src || !s->pid || !s->fd)
        rc = psi_error(PS_E_NOMEM, "out of memory");
    while (rc == PS_OK && started < n && shard_start(j, s, started) == 0)
        started++;
    res->shards = n;
    res->shards_failed = rc == PS_OK ? n - started : 0;
    for (int k = 0; k < started; k++)
        res->shards_failed += shard_end(j, s, k);
    if (rc == PS_OK && res->shards_failed)
        rc = psi_error(PS_E_BACKEND, "collect: %d of %d shards failed (the same job again resumes them); %s",
                       res->shards_failed, n, s->first);
    ps_collect_merge_stats_t st;
    if (rc == PS_OK)
        rc = ps_collect_merge(j->db, s->src, n, &st);
    if (s) {
        free(s->db);
        free(s->src);
        free(s->pid);
        free(s->fd);
    }
    free(s);
    return rc;
}

int ps_collect_job_run(const ps_collect_job_t *job, ps_collect_job_result_t *out)
{
    if (out) /* the caller reads it (shards_failed) whatever the job's end */
        memset(out, 0, sizeof *out);
    ps_collect_job_result_t *res = psi_calloc(1, sizeof *res);
    if (!job || !res) {
        free(res);
        return job ? PS_E_NOMEM : psi_error(PS_E_ARG, "ps_collect_job_run: NULL job");
    }
    int rc = job_check(job);
    if (rc == PS_OK && strcmp(job->action, "scaling") == 0)
        rc = psi_collect_scaling(job, res);
    else if (rc == PS_OK && strcmp(job->action, "colocate") == 0)
        rc = psi_collect_colocate(job, res);
    else if (rc == PS_OK)
        rc = job->n_devices ? run_devices(job, res) : run_one(job);
    if (out)
        *out = *res;
    free(res);
    return rc;
}
