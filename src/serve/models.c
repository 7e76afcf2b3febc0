/* The files `pairsight serve` answers from, loaded as one set and shared by
 * reference count (serve.h).
 *
 * Each file is read once, by serve_read_file: regular files only (a FIFO,
 * a device or /dev/zero behind a link is refused at open, which does not
 * block), at most SERVE_MAX_FILE bytes, within a deadline, and given up as
 * soon as SIGINT or SIGTERM asks the server to stop. The fingerprint is
 * taken from the bytes that were read and the models are built from the
 * same bytes, so a set's fingerprints always name the files it answers
 * from. The tables are read by the library through the descriptor that was
 * opened and checked (/proc/self/fd/N: the same file, even when it has been
 * renamed over since). */
#include "serve/serve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t serve_stop_requested;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void serve_fingerprint(const unsigned char *buf, size_t n, char out[24])
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ buf[i]) * 1099511628211ULL;
    snprintf(out, 24, "%016llx", (unsigned long long)h);
}

/* Opens path for reading: a regular file of at most max bytes. Returns the
 * descriptor and its size, or -1 with err. */
static int open_regular(const char *path, size_t max, size_t *size, char *err, size_t errsize)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errsize, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errsize, "%s: not a regular file (a model or table is read from a regular file only)", path);
        close(fd);
        return -1;
    }
    if ((uint64_t)st.st_size > (uint64_t)max) {
        snprintf(err, errsize, "%s: %lld bytes, over the limit of %zu bytes for a served file", path,
                 (long long)st.st_size, max);
        close(fd);
        return -1;
    }
    *size = (size_t)st.st_size;
    return fd;
}

int serve_read_fd(const char *path, size_t max, double deadline_s, serve_file_t *f, char *err, size_t errsize)
{
    f->buf = NULL;
    f->fd = -1;
    size_t size = 0;
    int fd = open_regular(path, max, &size, err, errsize);
    if (fd < 0)
        return -1;
    unsigned char *buf = malloc(size + 1);
    size_t n = 0;
    double t_end = mono() + deadline_s;
    const char *why = buf ? NULL : "out of memory";
    while (!why && n < size) {
        size_t want = size - n < (1u << 20) ? size - n : (1u << 20);
        ssize_t got = pread(fd, buf + n, want, (off_t)n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            why = got < 0 ? strerror(errno) : "the file shrank while it was read (replace files by rename)";
        else
            n += (size_t)got;
        if (!why && serve_stop_requested)
            why = "the server is stopping";
        else if (!why && mono() > t_end)
            why = "read deadline passed";
    }
    if (why) {
        snprintf(err, errsize, "%s: cannot read: %s", path, why);
        free(buf);
        close(fd);
        return -1;
    }
    buf[n] = 0;
    f->buf = buf;
    f->len = n;
    if (f->keep_fd)
        f->fd = fd;
    else
        close(fd);
    return 0;
}

/* The library's message with "model in memory" or /proc/self/fd/N put back
 * to the file's path. */
static void lib_error(const char *path, const char *alias, char *err, size_t errsize)
{
    const char *e = ps_last_error();
    const char *at = alias ? strstr(e, alias) : NULL;
    if (at)
        snprintf(err, errsize, "%.*s%s%s", (int)(at - e), e, path, at + strlen(alias));
    else
        snprintf(err, errsize, "%s", e);
}

/* A table file: read and fingerprinted here, loaded by the library from
 * the same open file. */
typedef int (*table_load_fn)(const char *path, void **out);

static int load_table(const char *path, table_load_fn load, void **out, char *fp, char *err, size_t errsize)
{
    serve_file_t f = {.keep_fd = 1};
    if (serve_read_fd(path, SERVE_MAX_FILE, SERVE_READ_DEADLINE_S, &f, err, errsize) != 0)
        return -1;
    int fd = f.fd;
    serve_fingerprint(f.buf, f.len, fp);
    free(f.buf);
    char alias[64];
    snprintf(alias, sizeof alias, "/proc/self/fd/%d", fd);
    int direct = access(alias, R_OK) != 0; /* no /proc: the path itself */
    int rc = load(direct ? path : alias, out);
    close(fd);
    if (rc != PS_OK) {
        lib_error(path, direct ? NULL : alias, err, errsize);
        return -1;
    }
    return 0;
}

static int load_ops(const char *path, void **out) { return ps_ops_load(path, (ps_ops_t **)out); }
static int load_workloads(const char *path, void **out) { return ps_workloads_load(path, (ps_workloads_t **)out); }
static int load_scaling(const char *path, void **out) { return ps_scaling_load(path, (ps_scaling_t **)out); }

/* XGBoost keeps per-thread state for each booster a thread predicted with
 * (its C API's prediction buffers), and a booster's destructor frees only
 * the calling thread's: a co-location model copy freed on another thread
 * than the one that predicted with it leaves that state behind, a few KB
 * per reload and thread (the creep of issue 41 item 7). So copy i goes
 * back to compute thread i, which frees it (serve_gc_collect). */
typedef struct gc_item {
    ps_coloc_model_t *model;
    struct gc_item *next;
} gc_item_t;

static pthread_mutex_t gc_lock = PTHREAD_MUTEX_INITIALIZER;
static gc_item_t *gc_list[SERVE_MAX_THREADS];
void (*serve_gc_wake)(void);

static void coloc_free_on(int thread, ps_coloc_model_t *c)
{
    void (*wake)(void) = __atomic_load_n(&serve_gc_wake, __ATOMIC_ACQUIRE);
    gc_item_t *g = c && wake && !(serve_thread_worker && serve_thread_index == thread) && thread < SERVE_MAX_THREADS
                       ? malloc(sizeof *g)
                       : NULL;
    if (!g) {
        ps_coloc_model_free(c);
        return;
    }
    g->model = c;
    pthread_mutex_lock(&gc_lock);
    g->next = gc_list[thread];
    gc_list[thread] = g;
    pthread_mutex_unlock(&gc_lock);
    wake();
}

int serve_gc_pending(void)
{
    pthread_mutex_lock(&gc_lock);
    int n = serve_thread_index < SERVE_MAX_THREADS && gc_list[serve_thread_index] != NULL;
    pthread_mutex_unlock(&gc_lock);
    return n;
}

void serve_gc_collect(int all)
{
    for (int t = all ? 0 : serve_thread_index; t < (all ? SERVE_MAX_THREADS : serve_thread_index + 1); t++) {
        pthread_mutex_lock(&gc_lock);
        gc_item_t *g = t < SERVE_MAX_THREADS ? gc_list[t] : NULL;
        if (t < SERVE_MAX_THREADS)
            gc_list[t] = NULL;
        pthread_mutex_unlock(&gc_lock);
        while (g) {
            gc_item_t *next = g->next;
            ps_coloc_model_free(g->model);
            free(g);
            g = next;
        }
    }
}

static void models_free(serve_models_t *m)
{
    if (!m)
        return;
    ps_model_free(m->model);
    ps_ops_free(m->ops);
    coloc_free_on(0, m->coloc);
    for (int i = 1; i < m->n_coloc; i++) {
        coloc_free_on(i, m->coloc_clone[i].model);
        pthread_mutex_destroy(&m->coloc_clone[i].lock);
    }
    free(m->coloc_clone);
    ps_workloads_free(m->w);
    ps_scaling_free(m->scaling);
    for (int i = 0; i < m->n_nodes; i++) {
        free(m->node_names[i]);
        free(m->node_gpus[i]);
    }
    free(m->node_names);
    free(m->node_gpus);
    pthread_mutex_destroy(&m->coloc_lock);
    free(m);
}

/* A file's bytes (serve_read_fd) and their fingerprint. */
static unsigned char *read_fingerprinted(const char *path, size_t *n, char fp[24], char *err, size_t errsize)
{
    serve_file_t f = {0};
    if (serve_read_fd(path, SERVE_MAX_FILE, SERVE_READ_DEADLINE_S, &f, err, errsize) != 0)
        return NULL;
    serve_fingerprint(f.buf, f.len, fp);
    *n = f.len;
    return f.buf;
}

/* The co-location model from its bytes, one copy per server thread (a
 * co-location model is used by one thread at a time): requests on
 * different threads predict without waiting for each other. */
static int load_coloc_model(const serve_params_t *p, serve_models_t *m, char *err, size_t errsize)
{
    size_t n = 0;
    unsigned char *buf = read_fingerprinted(p->coloc_path, &n, m->fp_coloc, err, errsize);
    if (!buf)
        return -1;
    int copies = p->threads > 1 ? p->threads : 1;
    m->coloc_clone = calloc((size_t)copies, sizeof *m->coloc_clone);
    int rc = m->coloc_clone ? ps_coloc_model_load_mem(buf, n, &m->coloc) : PS_E_NOMEM;
    m->n_coloc = rc == PS_OK ? 1 : 0;
    for (int i = 1; i < copies && rc == PS_OK; i++, m->n_coloc++) {
        rc = ps_coloc_model_load_mem(buf, n, &m->coloc_clone[i].model);
        pthread_mutex_init(&m->coloc_clone[i].lock, NULL);
    }
    free(buf);
    if (rc != PS_OK) {
        lib_error(p->coloc_path, "model in memory", err, errsize);
        return -1;
    }
    return 0;
}

/* The co-location files of p into m (none when p has no --coloc). */
static int load_coloc(const serve_params_t *p, serve_models_t *m, char *err, size_t errsize)
{
    if (!p->coloc_path)
        return 0;
    if (load_coloc_model(p, m, err, errsize) ||
        load_table(p->workloads_path, load_workloads, (void **)&m->w, m->fp_workloads, err, errsize) ||
        (p->scaling_path &&
         load_table(p->scaling_path, load_scaling, (void **)&m->scaling, m->fp_scaling, err, errsize)))
        return -1;
    return 0;
}

/* The segment model from its bytes, fingerprinted from the same bytes. */
static int load_model(const serve_params_t *p, serve_models_t *m, char *err, size_t errsize)
{
    size_t n = 0;
    unsigned char *buf = read_fingerprinted(p->model_path, &n, m->fp_model, err, errsize);
    if (!buf)
        return -1;
    int rc = ps_model_load_mem(buf, n, &m->model);
    free(buf);
    if (rc != PS_OK || ps_model_info(m->model, &m->info) != PS_OK) {
        lib_error(p->model_path, "model in memory", err, errsize);
        return -1;
    }
    return 0;
}

static int models_load(const serve_params_t *p, serve_models_t **out, char *err, size_t errsize)
{
    *out = NULL;
    serve_models_t *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    pthread_mutex_init(&m->coloc_lock, NULL);
    m->refs = 1;
    m->loaded_at = (double)time(NULL);
    if (load_model(p, m, err, errsize) ||
        load_table(p->ops_path, load_ops, (void **)&m->ops, m->fp_ops, err, errsize) ||
        load_coloc(p, m, err, errsize) || (p->nodes_path && serve_nodes_load(p->nodes_path, m, err, errsize) != 0)) {
        models_free(m);
        return -1;
    }
    *out = m;
    return 0;
}

void serve_models_ref(serve_models_t *m) { __atomic_add_fetch(&m->refs, 1, __ATOMIC_ACQ_REL); }

void serve_models_unref(serve_models_t *m)
{
    if (m && __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0)
        models_free(m);
}

/* A load on a thread of its own, which ends with it: XGBoost keeps
 * per-thread state for every booster a thread touched (reading a model's
 * attributes is enough), freed only when that thread frees the booster or
 * ends, so loads on a long-lived thread would leave that state behind at
 * each reload (models.c's other half: the co-location copies go back to the
 * thread that predicted with them). */
typedef struct {
    const serve_params_t *p;
    serve_models_t **out;
    char *err;
    size_t errsize;
    int rc;
} load_job_t;

static void *load_thread(void *arg)
{
    load_job_t *j = arg;
    j->rc = models_load(j->p, j->out, j->err, j->errsize);
    return NULL;
}

int serve_models_load(const serve_params_t *p, serve_models_t **out, char *err, size_t errsize)
{
    load_job_t j = {p, out, err, errsize, -1};
    pthread_t t;
    if (pthread_create(&t, NULL, load_thread, &j) != 0)
        return models_load(p, out, err, errsize);
    pthread_join(t, NULL);
    return j.rc;
}
