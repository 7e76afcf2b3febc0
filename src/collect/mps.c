/*
 * Workload-level measurements under MPS: each job is a child process that
 * sets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE before it creates its CUDA context,
 * warms up, reports ready on a pipe and waits for the parent's go, so that
 * co-located jobs start together; it then sends its throughput back.
 */
#include "collect/backend.h"

#include "common/common.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    int ready_fd;  /* child -> parent: one byte when warmed up */
    int go_fd;     /* parent -> child: closed (EOF) to start */
    int signalled; /* the byte was sent */
} barrier_t;

/* One co-located run of jobs under MPS: the request (params, jobs,
 * seconds), the pipes of the start barrier and of each child's result, and
 * the caller's outputs (ps_collect_mps_run_sms). */
typedef struct {
    const ps_collect_params_t *p;
    const ps_mps_job_t *jobs;
    int n;
    double seconds;
    double *out_tput;
    char *out_gpu;
    size_t gpu_size;
    int *out_exec_sms;
    int ready[2], go[2]; /* the start barrier */
    pid_t pid[64];
    int out[64]; /* each child's result pipe, read end */
    int started; /* children that run */
} mps_run_t;

static void child_ready(void *user)
{
    barrier_t *b = user;
    char c = 'r', buf;
    b->signalled = 1;
    if (write(b->ready_fd, &c, 1) != 1)
        _exit(3);
    while (read(b->go_fd, &buf, 1) < 0 && errno == EINTR)
        ;
}

/* The child's whole life: measure job i of run, write the result (or the
 * error) on out_fd. */
static void child_main(const mps_run_t *run, int i, barrier_t *bar, int out_fd)
{
    const ps_collect_params_t *p = run->p;
    const ps_mps_job_t *job = &run->jobs[i];
    char share[16];
    snprintf(share, sizeof share, "%d", job->share_pct);
    setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", share, 1);
    psi_backend_t *be = NULL;
    psi_oplist_t *l = NULL;
    double rate = 0;
    int rc = psi_backend_open(p, &be);
    if (rc == 0)
        rc = psi_zoo_build(job->model, job->batch, p->seq_len, &l);
    if (rc == 0 && !be->throughput)
        rc = psi_error(PS_E_BACKEND, "the %s backend cannot run whole models", be->name);
    if (rc == 0)
        rc = be->throughput(be, l, p->warmup > 0 ? p->warmup : 1, run->seconds, (psi_ready_t){child_ready, bar}, &rate);
    if (!bar->signalled)
        child_ready(bar); /* failed before warming up: do not hold the others back */
    char msg[512];
    if (rc == 0)
        snprintf(msg, sizeof msg, "ok %.17g %d %d %s", rate * job->batch, be->dev.exec_sms, be->dev.sm_count,
                 be->dev.gpu);
    else
        snprintf(msg, sizeof msg, "error %s", ps_last_error());
    size_t len = strlen(msg);
    if (write(out_fd, msg, len) != (ssize_t)len)
        _exit(4);
    psi_oplist_free(l);
    if (be)
        be->free(be);
    _exit(rc == 0 ? 0 : 1);
}

/* MPS must be running for the percentage to mean anything: its control
 * pipe lives in CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps). */
static int check_mps(void)
{
    const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
    char path[512];
    snprintf(path, sizeof path, "%s/control", dir && *dir ? dir : "/tmp/nvidia-mps");
    if (access(path, F_OK) != 0)
        return psi_error(PS_E_BACKEND, "MPS is not running (no %s): start it with `nvidia-cuda-mps-control -d`", path);
    return 0;
}

int ps_collect_mps_run(const ps_collect_params_t *p, const ps_mps_job_t *jobs, int n, double seconds,
                       double *out_tput, char *out_gpu, size_t gpu_size)
{
    return ps_collect_mps_run_sms(p, jobs, n, seconds, out_tput, out_gpu, gpu_size, NULL);
}

/* Whether the SMs a job's context was given (exec_sms of sm_count, as the
 * driver reports them under MPS) reflect its active thread percentage: MPS
 * rounds the share to whole SMs, and a context with every SM at a share
 * below 100% suggests the percentage was not applied. A warning, not an
 * error: how the driver reports the affinity of an MPS client has not been
 * checked on a GPU yet (docs/collector.md). */
static int check_share(const ps_mps_job_t *job, int exec_sms, int sm_count)
{
    if (exec_sms <= 0 || sm_count <= 0)
        return psi_error(PS_E_BACKEND, "%s at %d%%: the job reported no SM count", job->model, job->share_pct);
    double want = sm_count * job->share_pct / 100.0;
    if (job->share_pct < 100 && (exec_sms >= sm_count || fabs(exec_sms - want) > 0.05 * sm_count + 2))
        psi_log(PS_LOG_WARN,
                "%s at %d%%: the context reports %d of the %d SMs, not about %.0f: was the MPS active thread "
                "percentage applied?",
                job->model, job->share_pct, exec_sms, sm_count, want);
    return 0;
}

/* The jobs and the backend are ones this file can run. */
static int check_jobs(const ps_collect_params_t *p, const ps_mps_job_t *jobs, int n, double seconds)
{
    if (n <= 0 || n > 64 || !(seconds > 0 && seconds <= 86400))
        return psi_error(PS_E_ARG, "need 1..64 jobs and seconds in (0, 86400]");
    for (int i = 0; i < n; i++)
        if (!jobs[i].model || jobs[i].batch <= 0 || jobs[i].batch > 65536 || jobs[i].share_pct < 1 ||
            jobs[i].share_pct > 100)
            return psi_error(PS_E_ARG, "job %d: need a model, batch in 1..65536 and a share in 1..100", i + 1);
    const char *name = p->backend ? p->backend : "cuda";
    if (strcmp(name, "fake") != 0 && strcmp(name, "cuda") != 0)
        return psi_error(PS_E_ARG, "unknown backend '%s' (cuda or fake)", name);
    if (strcmp(name, "cuda") == 0)
        return check_mps();
    return 0;
}

/* Forks one child per job, each with its own result pipe (run->out[i]);
 * run->started counts the children that run, also when a later fork fails. */
static int start_jobs(mps_run_t *run)
{
    pid_t *pid = run->pid;
    fflush(NULL);
    for (int i = 0; i < run->n; i++) {
        int res[2];
        if (pipe(res) != 0)
            return psi_error(PS_E_IO, "pipe: %s", strerror(errno));
        pid[i] = fork();
        if (pid[i] < 0) {
            close(res[0]);
            close(res[1]);
            return psi_error(PS_E_IO, "fork: %s", strerror(errno));
        }
        if (pid[i] == 0) {
            close(res[0]);
            close(run->ready[0]);
            close(run->go[1]);
            barrier_t bar = {run->ready[1], run->go[0], 0};
            child_main(run, i, &bar, res[1]);
        }
        close(res[1]);
        run->out[i] = res[0];
        run->started++;
    }
    return 0;
}

/* Everything a child wrote on fd, up to size - 1 bytes, NUL-terminated. */
static void read_all(int fd, char *msg, size_t size)
{
    size_t got = 0;
    ssize_t r;
    while (got < size - 1 && (r = read(fd, msg + got, size - 1 - got)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        got += (size_t)r;
    }
    msg[got] = 0;
}

/* Child i's message ("ok RATE EXEC_SMS SM_COUNT GPU" or "error MESSAGE")
 * into run's outputs; status is its exit status, for a child that wrote
 * none. */
static int take_result(const mps_run_t *run, int i, const char *msg, int status)
{
    const ps_mps_job_t *job = &run->jobs[i];
    char *end = NULL;
    if (strncmp(msg, "ok ", 3) == 0) {
        run->out_tput[i] = strtod(msg + 3, &end);
        long exec_sms = end ? strtol(end, &end, 10) : 0;
        long sm_count = end ? strtol(end, &end, 10) : 0;
        if (run->out_gpu && run->gpu_size > 0 && end && *end == ' ')
            snprintf(run->out_gpu, run->gpu_size, "%s", end + 1);
        if (run->out_exec_sms)
            run->out_exec_sms[i] = (int)exec_sms;
        return check_share(job, (int)exec_sms, (int)sm_count);
    }
    if (strncmp(msg, "error ", 6) == 0)
        return psi_error(PS_E_BACKEND, "%s at %d%%: %s", job->model, job->share_pct, msg + 6);
    return psi_error(PS_E_BACKEND, "%s at %d%%: the measuring process died (status %d)", job->model, job->share_pct,
                     status);
}

int ps_collect_mps_run_sms(const ps_collect_params_t *p, const ps_mps_job_t *jobs, int n, double seconds,
                           double *out_tput, char *out_gpu, size_t gpu_size, int *out_exec_sms)
{
    int rc = check_jobs(p, jobs, n, seconds);
    if (rc)
        return rc;
    mps_run_t run = {p, jobs, n, seconds, out_tput, out_gpu, gpu_size, out_exec_sms, {0}, {0}, {0}, {0}, 0};
    if (pipe(run.ready) != 0 || pipe(run.go) != 0)
        return psi_error(PS_E_IO, "pipe: %s", strerror(errno));
    rc = start_jobs(&run);
    close(run.ready[1]);
    close(run.go[0]);
    /* Start everyone once all are warm (or, on a failure, let them go). */
    for (int i = 0; i < run.started && rc == 0; i++) {
        char c;
        if (read(run.ready[0], &c, 1) != 1)
            break;
    }
    close(run.go[1]);
    close(run.ready[0]);
    for (int i = 0; i < run.started; i++) {
        char msg[512];
        read_all(run.out[i], msg, sizeof msg);
        close(run.out[i]);
        int status = 0;
        waitpid(run.pid[i], &status, 0);
        if (rc == 0)
            rc = take_result(&run, i, msg, status);
    }
    return rc;
}
