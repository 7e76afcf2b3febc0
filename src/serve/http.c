/* `pairsight serve` on libmicrohttpd: its thread pool reads requests and
 * writes replies, a pool of --threads compute threads answers them (the
 * connection is suspended meanwhile), so that /healthz, /readyz and
 * /metrics, answered on the HTTP threads, answer whatever the load. Here
 * too: the limits per connection (the whole request's deadline, the
 * connections at once and per address, refused at accept), the body
 * limit, the request checks (token, Host, Content-Type, one
 * Content-Length) and the signals (SIGHUP reloads, SIGINT/SIGTERM stop). */
#include "serve/serve_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* One socket, from accept to close: when its current request started,
 * whether a compute thread has it (then no deadline cuts it). */
typedef struct sock {
    int fd;
    ino_t ino;    /* the socket's identity: fd numbers are reused */
    long long t0; /* ms, CLOCK_MONOTONIC */
    int busy;
    struct sock *prev, *next;
} sock_t;

/* One request on a connection, from its headers to its reply. */
typedef struct conn {
    ps_buf_t body;
    double t0;
    int ep, too_big, answered, done, big;
    const char *method, *url; /* MHD's, valid for the request */
    struct MHD_Connection *c;
    sock_t *sock;
    serve_reply_t reply; /* the compute thread's */
    struct conn *next;   /* in the queue */
} conn_t;

typedef struct {
    serve_t *s;
    char token[512];
    size_t token_len; /* 0: no token required */
    char listen_host[64];
    /* compute threads and their queue */
    pthread_t *workers;
    int n_workers, stopping;
    pthread_mutex_t qlock;
    pthread_cond_t qcond;
    conn_t *head, *tail;
    /* sockets, for the deadline and the connection count */
    pthread_mutex_t slock;
    sock_t *socks;
    int n_socks;
    pthread_t watchdog;
    int watchdog_on;
} http_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Queue reply r (its body handed to MHD) and count it. */
static enum MHD_Result send_reply(http_t *h, struct MHD_Connection *c, conn_t *cn, serve_reply_t *r)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        r->body.len, r->body.s ? r->body.s : (char *)"", r->body.s ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        ps_buf_free(&r->body);
        return MHD_NO;
    }
    r->body.s = NULL;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type ? r->content_type : "application/json");
    if (r->status == 401)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"pairsight\"");
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    serve_metrics_request(h->s->metrics, cn->ep, r->status, now() - cn->t0);
    cn->answered = 1;
    return ok;
}

static enum MHD_Result send_error(http_t *h, struct MHD_Connection *c, conn_t *cn, int status, const char *code,
                                  const char *msg)
{
    serve_reply_t r = {0};
    serve_error(&r, status, code, "%s", msg);
    if (!h->s->p.quiet)
        serve_log(h->s, "%s %s %d (%s)", cn->method, cn->url, status, code);
    return send_reply(h, c, cn, &r);
}

/* Bearer token check (the scheme in any case, RFC 7235), in time
 * independent of where the tokens differ. */
static int authorized(const http_t *h, struct MHD_Connection *c, int ep)
{
    if (!h->token_len || serve_route_flags(ep) & SERVE_OPEN)
        return 1;
    const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!a || strncasecmp(a, "Bearer ", 7) != 0)
        return 0;
    for (a += 7; *a == ' ';)
        a++;
    size_t n = strlen(a);
    unsigned char diff = n != h->token_len;
    for (size_t i = 0; i < h->token_len; i++)
        diff |= (unsigned char)(h->token[i] ^ (i < n ? a[i] : 0));
    return diff == 0;
}

/* The Host header: the listen address, localhost (on loopback), any IP
 * literal (a rebinding attack needs a name) or a name of --allow-host. */
static int host_allowed(const http_t *h, struct MHD_Connection *c)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!v)
        return 0;
    char host[256];
    size_t n = v[0] == '[' ? strcspn(v, "]") + 1 : strcspn(v, ":");
    if (n >= sizeof host)
        return 0;
    memcpy(host, v, n);
    host[n] = 0;
    unsigned char a6[16];
    char inner[256];
    snprintf(inner, sizeof inner, "%.*s", n > 2 ? (int)n - 2 : 0, host + 1);
    if (inet_pton(AF_INET, host, a6) == 1 || (host[0] == '[' && inet_pton(AF_INET6, inner, a6) == 1))
        return 1;
    if (strcasecmp(host, h->listen_host) == 0 || strcasecmp(host, "localhost") == 0)
        return 1;
    for (const char *p = h->s->p.allow_hosts; p && *p;) {
        size_t k = strcspn(p, ",");
        if (k == n && strncasecmp(p, host, n) == 0)
            return 1;
        p += k + (p[k] == ',');
    }
    return 0;
}

typedef struct {
    const char *first;
    int n, differ;
} clen_t;

static enum MHD_Result count_clen(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    clen_t *c = cls;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        if (c->n++ && strcmp(c->first, value) != 0)
            c->differ = 1;
        else
            c->first = value;
    }
    return MHD_YES;
}

/* The refusals that need no body: 0 when none applies. */
static enum MHD_Result refuse(http_t *h, struct MHD_Connection *c, conn_t *cn, int *refused)
{
    *refused = 1;
    if (!host_allowed(h, c))
        return send_error(h, c, cn, 421, "bad_host",
                          "Host is not this server's address or a name of --allow-host (DNS rebinding guard)");
    if (!authorized(h, c, cn->ep))
        return send_error(h, c, cn, 401, "unauthorized", "missing or wrong bearer token (Authorization: Bearer ...)");
    clen_t cl = {0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_clen, &cl);
    if (cl.differ)
        return send_error(h, c, cn, 400, "bad_request", "two different Content-Length headers");
    if (strcmp(cn->method, "POST") == 0 && cn->ep != serve_n_routes) {
        const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        size_t n = ct ? strcspn(ct, "; \t") : 0;
        if (!ct || n != 16 || strncasecmp(ct, "application/json", 16) != 0)
            return send_error(h, c, cn, 415, "unsupported_media_type",
                              "a POST body must be sent as Content-Type: application/json");
    }
    if (cl.first && strtoull(cl.first, NULL, 10) > h->s->p.max_body) {
        char msg[160];
        snprintf(msg, sizeof msg, "the body is %.30s bytes, over the limit of %zu (--max-body)", cl.first,
                 h->s->p.max_body);
        return send_error(h, c, cn, 413, "body_too_large", msg);
    }
    *refused = 0;
    return MHD_YES;
}

/* The first call for a request: its state, and the refusals that need no
 * body. */
static enum MHD_Result first_call(http_t *h, struct MHD_Connection *c, const char *url, const char *method,
                                  void **con_cls)
{
    conn_t *cn = calloc(1, sizeof *cn);
    if (!cn)
        return MHD_NO;
    cn->t0 = now();
    cn->ep = serve_route(url);
    cn->method = method;
    cn->url = url;
    cn->c = c;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    cn->sock = ci ? ci->socket_context : NULL;
    *con_cls = cn;
    __atomic_add_fetch(&h->s->inflight, 1, __ATOMIC_RELAXED);
    int refused;
    enum MHD_Result ok = refuse(h, c, cn, &refused);
    /* Room for the body that Content-Length announces (1 MiB at most; a
     * larger one grows as it comes), made once: a buffer that doubled from
     * 1 KiB grew 8 times for the 200 KB body of 1,000 queries. */
    const char *cl = refused ? NULL : MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    size_t want = cl ? (size_t)strtoull(cl, NULL, 10) : 0;
    if (want > 0 && want <= ((size_t)1 << 20) && (cn->body.s = malloc(want + 1)) != NULL)
        cn->body.cap = want + 1;
    return ok;
}

/* Below the HTTP threads, as the compute threads. */
static void lower_priority(void)
{
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0);
    if (errno == 0)
        setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice + 5 < 19 ? nice + 5 : 19);
}

/* The compute threads: each takes a request off the queue, answers it and
 * resumes its connection. */
static void *worker(void *arg)
{
    http_t *h = arg;
    static int next_index;
    serve_thread_index = __atomic_fetch_add(&next_index, 1, __ATOMIC_RELAXED);
    serve_thread_worker = 1;
    /* below the HTTP threads: on a busy machine they get the CPU first, and
     * the probes keep answering (Linux: the nice value is per thread) */
    lower_priority();
    for (;;) {
        serve_gc_collect(0);
        pthread_mutex_lock(&h->qlock);
        while (!h->head && !h->stopping && !serve_gc_pending())
            pthread_cond_wait(&h->qcond, &h->qlock);
        conn_t *cn = h->head;
        if (cn && !(h->head = cn->next))
            h->tail = NULL;
        int stopping = h->stopping;
        pthread_mutex_unlock(&h->qlock);
        if (!cn && stopping)
            break;
        if (!cn)
            continue;
        ps_buf_putn(&cn->body, "", 0);
        if (stopping)
            serve_error(&cn->reply, 503, "stopping", "the server is stopping");
        else
            serve_handle(h->s, cn->method, cn->url, cn->body.s ? cn->body.s : (char *)"", cn->body.len, &cn->reply);
        cn->big = cn->body.cap > ((size_t)1 << 20) || cn->reply.body.len > ((size_t)1 << 20);
        ps_buf_free(&cn->body);
        cn->done = 1;
        MHD_resume_connection(cn->c);
    }
    return NULL;
}

/* Hand a request to the compute threads; its connection waits. */
static enum MHD_Result enqueue(http_t *h, conn_t *cn)
{
    pthread_mutex_lock(&h->qlock);
    if (h->stopping) { /* the compute threads are gone or going: no one would resume it */
        pthread_mutex_unlock(&h->qlock);
        return send_error(h, cn->c, cn, 503, "stopping", "the server is stopping");
    }
    if (cn->sock)
        __atomic_store_n(&cn->sock->busy, 1, __ATOMIC_RELAXED);
    MHD_suspend_connection(cn->c);
    cn->next = NULL;
    if (h->tail)
        h->tail->next = cn;
    else
        h->head = cn;
    h->tail = cn;
    pthread_cond_signal(&h->qcond);
    pthread_mutex_unlock(&h->qlock);
    return MHD_YES;
}

/* The reply of a request answered by a compute thread, or inline. */
static enum MHD_Result reply_now(http_t *h, struct MHD_Connection *c, conn_t *cn, serve_reply_t *r)
{
    if (cn->sock)
        __atomic_store_n(&cn->sock->busy, 0, __ATOMIC_RELAXED);
    if (!h->s->p.quiet)
        serve_log(h->s, "%s %s %d %.3f ms", cn->method, cn->url, r->status, 1e3 * (now() - cn->t0));
    return send_reply(h, c, cn, r);
}

/* The cheap endpoints answer on the HTTP thread, whatever the load. */
static int inline_ep(int ep) { return (serve_route_flags(ep) & SERVE_INLINE) != 0; }

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    http_t *h = cls;
    if (!*con_cls)
        return first_call(h, c, url, method, con_cls);
    conn_t *cn = *con_cls;
    if (*upload_data_size) {
        if (!cn->answered && !cn->too_big) {
            if (cn->body.len + *upload_data_size > h->s->p.max_body) {
                cn->too_big = 1;
                ps_buf_free(&cn->body);
            } else {
                ps_buf_putn(&cn->body, upload_data, *upload_data_size);
            }
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (cn->answered)
        return MHD_YES;
    if (cn->done)
        return reply_now(h, c, cn, &cn->reply);
    if (cn->too_big) {
        char msg[160];
        snprintf(msg, sizeof msg, "the body is over the limit of %zu bytes (--max-body)", h->s->p.max_body);
        return send_error(h, c, cn, 413, "body_too_large", msg);
    }
    if (cn->body.oom)
        return send_error(h, c, cn, 500, "out_of_memory", "out of memory reading the body");
    if (!inline_ep(cn->ep))
        return enqueue(h, cn);
    serve_reply_t r = {0};
    serve_handle(h->s, method, url, (char *)"", 0, &r);
    return reply_now(h, c, cn, &r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)c;
    (void)toe;
    http_t *h = cls;
    conn_t *cn = *con_cls;
    if (!cn)
        return;
    if (cn->sock) /* the next request on this connection starts its own deadline */
        __atomic_store_n(&cn->sock->t0, (long long)(1e3 * now()), __ATOMIC_RELAXED);
    int big = cn->big;
    ps_buf_free(&cn->body);
    ps_buf_free(&cn->reply.body);
    free(cn);
    *con_cls = NULL;
    __atomic_sub_fetch(&h->s->inflight, 1, __ATOMIC_RELAXED);
#ifdef __GLIBC__
    if (big)
        malloc_trim(0); /* a large body's pages go back to the system */
#endif
}

/* Sockets: counted, and kept for the deadline. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    http_t *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        sock_t *k = calloc(1, sizeof *k);
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct stat st;
        if (!k)
            return;
        k->fd = ci ? ci->connect_fd : -1;
        k->ino = k->fd >= 0 && fstat(k->fd, &st) == 0 ? st.st_ino : 0;
        k->t0 = (long long)(1e3 * now());
        pthread_mutex_lock(&h->slock);
        if ((k->next = h->socks))
            k->next->prev = k;
        h->socks = k;
        h->n_socks++;
        pthread_mutex_unlock(&h->slock);
        *socket_context = k;
    } else if (*socket_context) {
        sock_t *k = *socket_context;
        pthread_mutex_lock(&h->slock);
        if (k->prev)
            k->prev->next = k->next;
        else
            h->socks = k->next;
        if (k->next)
            k->next->prev = k->prev;
        h->n_socks--;
        pthread_mutex_unlock(&h->slock);
        free(k);
        *socket_context = NULL;
    }
}

/* Connections over --max-connections are closed at accept (MHD's own limit
 * would leave them waiting in the listen queue). The per-address limit is
 * MHD's, which closes them at accept too. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
    (void)addr;
    (void)len;
    http_t *h = cls;
    pthread_mutex_lock(&h->slock);
    int n = h->n_socks;
    pthread_mutex_unlock(&h->slock);
    return n < h->s->p.max_conns ? MHD_YES : MHD_NO;
}

/* Every 200 ms: a connection whose request (headers and body, not the
 * computing) has run past --request-timeout is shut down; MHD then closes
 * it. --timeout alone only bounds the time between two bytes. */
static void *watchdog(void *arg)
{
    http_t *h = arg;
    for (;;) {
        usleep(200000);
        pthread_mutex_lock(&h->slock);
        int stop = !h->watchdog_on;
        long long limit = 1000LL * h->s->p.request_timeout_s, t = (long long)(1e3 * now());
        for (sock_t *k = h->socks; k && !stop; k = k->next) {
            struct stat st;
            if (k->fd < 0 || __atomic_load_n(&k->busy, __ATOMIC_RELAXED) ||
                t - __atomic_load_n(&k->t0, __ATOMIC_RELAXED) <= limit)
                continue;
            if (fstat(k->fd, &st) == 0 && st.st_ino == k->ino)
                shutdown(k->fd, SHUT_RDWR);
            k->fd = -1;
        }
        pthread_mutex_unlock(&h->slock);
        if (stop)
            return NULL;
    }
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The unescaping of the URL, but a %XX that would give a control byte
 * stays as written: /v1/reload%00x is not /v1/reload, and no log line gets
 * a newline or an escape sequence from a URL. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    char *w = s;
    for (const char *r = s; *r;) {
        int hi = r[0] == '%' ? hexval(r[1]) : -1, lo = hi >= 0 ? hexval(r[2]) : -1;
        if (lo >= 0 && hi * 16 + lo >= 0x20 && hi * 16 + lo != 0x7f) {
            *w++ = (char)(hi * 16 + lo);
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = 0;
    return (size_t)(w - s);
}

/* HOST:PORT (IPv4, or localhost) into a. */
static int parse_listen(const char *listen, struct sockaddr_in *a)
{
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen || colon - listen > 63)
        return -1;
    char host[64];
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = 0;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port < 0 || port > 65535)
        return -1;
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    if (strcmp(host, "localhost") == 0)
        strcpy(host, "127.0.0.1");
    return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

/* A whole small regular file into a NUL-terminated buffer (the caller
 * frees). */
static char *slurp(const char *path, size_t *len, char *err, size_t errsize)
{
    serve_file_t f = {0};
    if (serve_read_fd(path, (size_t)1 << 20, 10, &f, err, errsize) != 0)
        return NULL;
    if (len)
        *len = f.len;
    return (char *)f.buf;
}

/* The token: the file's first line, without trailing blanks. */
static int read_token(http_t *h, const char *path)
{
    char err[1024];
    char *t = slurp(path, NULL, err, sizeof err);
    if (!t) {
        serve_log(h->s, "--token-file %s", err);
        return -1;
    }
    size_t n = strcspn(t, "\n");
    while (n && (t[n - 1] == '\r' || t[n - 1] == ' ' || t[n - 1] == '\t'))
        n--;
    if (n == 0 || n >= sizeof h->token) {
        serve_log(h->s, "--token-file %s: the token (its first line) must be 1..%zu characters", path,
                  sizeof h->token - 1);
        free(t);
        return -1;
    }
    memcpy(h->token, t, n);
    h->token_len = n;
    free(t);
    return 0;
}

/* glibc's malloc gives a block over its mmap threshold (128 KiB at first,
 * then the size of the last such block freed) back to the system when it
 * is freed, and trims a heap past twice that: each 1,000-query request (a
 * 200 KB body, a 75 KB reply) faulted its pages in anew, 7% of a compute
 * thread's time spent in the kernel. Fixed thresholds keep the pages of
 * blocks up to 2 MiB; larger ones still go back when freed, and
 * on_completed's malloc_trim returns a large request's heap. */
static void malloc_thresholds(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 2 << 20);
    mallopt(M_TRIM_THRESHOLD, 8 << 20);
#endif
}

static struct MHD_Daemon *start(http_t *h, const struct sockaddr_in *addr, char *cert, char *key)
{
    malloc_thresholds();
    const serve_params_t *p = &h->s->p;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
    if (cert)
        flags |= MHD_USE_TLS;
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, cert}, {MHD_OPTION_HTTPS_MEM_KEY, 0, key}, {MHD_OPTION_END, 0, NULL}};
    struct MHD_OptionItem none[] = {{MHD_OPTION_END, 0, NULL}};
    /* MHD's own limit is above ours (on_accept refuses), so that it never
     * stops accepting and leaves clients waiting. */
    unsigned mhd_limit = (unsigned)p->max_conns + 64;
    return MHD_start_daemon(
        flags, 0, on_accept, h, on_request, h, MHD_OPTION_SOCK_ADDR, addr, MHD_OPTION_THREAD_POOL_SIZE, 2u,
        MHD_OPTION_CONNECTION_LIMIT, mhd_limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)p->max_conns_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)p->timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
        MHD_OPTION_UNESCAPE_CALLBACK, unescape, h, MHD_OPTION_ARRAY, cert ? tls : none, MHD_OPTION_END);
}

/* Signals reach the main loop through a pipe: the handler may run on any
 * thread (a sanitizer's own threads do not share the mask that keeps them
 * off the server's threads), and writing one byte is all it does, besides
 * telling file reads in progress to give up on SIGINT and SIGTERM. */
static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    if (sig != SIGHUP)
        serve_stop_requested = 1;
    unsigned char c = (unsigned char)sig;
    ssize_t n = write(sig_pipe[1], &c, 1);
    (void)n;
}

static int catch_signals(void)
{
    if (pipe(sig_pipe) != 0)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGHUP, &sa, NULL) || sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ? -1 : 0;
}

/* SIGHUP's reloads run here, off the signal loop, which stays free for
 * SIGINT and SIGTERM; reloads are serialized (serve_reload). */
typedef struct {
    http_t *h;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int pending, stop;
} reloader_t;

static void *reloader(void *arg)
{
    reloader_t *rl = arg;
    lower_priority();
    pthread_mutex_lock(&rl->lock);
    for (;;) {
        while (!rl->pending && !rl->stop)
            pthread_cond_wait(&rl->cond, &rl->lock);
        if (rl->stop)
            break;
        rl->pending = 0;
        pthread_mutex_unlock(&rl->lock);
        char err[1024], fp[24];
        if (serve_reload(rl->h->s, fp, err, sizeof err) == 0)
            serve_log(rl->h->s, "SIGHUP: reloaded: model %s", fp);
        else
            serve_log(rl->h->s, "SIGHUP: reload failed, the old model keeps serving: %s", err);
        pthread_mutex_lock(&rl->lock);
    }
    pthread_mutex_unlock(&rl->lock);
    return NULL;
}

/* Wait for signals: SIGHUP reloads, SIGINT and SIGTERM stop. */
static void signal_loop(http_t *h)
{
    reloader_t rl = {.h = h};
    pthread_mutex_init(&rl.lock, NULL);
    pthread_cond_init(&rl.cond, NULL);
    pthread_t t;
    int started = pthread_create(&t, NULL, reloader, &rl) == 0;
    for (;;) {
        unsigned char sig = 0;
        ssize_t n = read(sig_pipe[0], &sig, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != 1 || sig != SIGHUP)
            break;
        pthread_mutex_lock(&rl.lock);
        rl.pending = 1;
        pthread_cond_signal(&rl.cond);
        pthread_mutex_unlock(&rl.lock);
    }
    serve_stop_requested = 1;
    pthread_mutex_lock(&rl.lock);
    rl.stop = 1;
    pthread_cond_signal(&rl.cond);
    pthread_mutex_unlock(&rl.lock);
    if (started)
        pthread_join(t, NULL);
    pthread_mutex_destroy(&rl.lock);
    pthread_cond_destroy(&rl.cond);
}

static http_t *gc_http; /* the server whose compute threads free co-location model copies */

static void gc_wake(void)
{
    pthread_mutex_lock(&gc_http->qlock);
    pthread_cond_broadcast(&gc_http->qcond);
    pthread_mutex_unlock(&gc_http->qlock);
}

static int start_threads(http_t *h)
{
    pthread_mutex_init(&h->qlock, NULL);
    pthread_cond_init(&h->qcond, NULL);
    pthread_mutex_init(&h->slock, NULL);
    h->workers = calloc((size_t)h->s->p.threads, sizeof *h->workers);
    if (!h->workers)
        return -1;
    for (; h->n_workers < h->s->p.threads; h->n_workers++)
        if (pthread_create(&h->workers[h->n_workers], NULL, worker, h) != 0)
            return -1;
    gc_http = h;
    __atomic_store_n(&serve_gc_wake, gc_wake, __ATOMIC_RELEASE);
    h->watchdog_on = 1;
    if (pthread_create(&h->watchdog, NULL, watchdog, h) != 0)
        h->watchdog_on = 0;
    return 0;
}

/* The compute threads answer what is queued (503) and stop; then the
 * watchdog. */
static void stop_threads(http_t *h)
{
    pthread_mutex_lock(&h->qlock);
    h->stopping = 1;
    pthread_cond_broadcast(&h->qcond);
    pthread_mutex_unlock(&h->qlock);
    for (int i = 0; i < h->n_workers; i++)
        pthread_join(h->workers[i], NULL);
    free(h->workers);
    __atomic_store_n(&serve_gc_wake, NULL, __ATOMIC_RELEASE);
    serve_gc_collect(1);
    pthread_mutex_lock(&h->slock);
    int on = h->watchdog_on;
    h->watchdog_on = 0;
    pthread_mutex_unlock(&h->slock);
    if (on)
        pthread_join(h->watchdog, NULL);
}

static int run(http_t *h, const struct sockaddr_in *addr, const sigset_t *set)
{
    const serve_params_t *p = &h->s->p;
    char *cert = NULL, *key = NULL, err[1024];
    if (p->tls_cert &&
        (!(cert = slurp(p->tls_cert, NULL, err, sizeof err)) || !(key = slurp(p->tls_key, NULL, err, sizeof err)))) {
        serve_log(h->s, "%s", err);
        free(cert);
        return 1;
    }
    /* the server's threads start with the signals blocked: this thread takes them */
    pthread_sigmask(SIG_BLOCK, set, NULL);
    struct MHD_Daemon *d = start_threads(h) == 0 ? start(h, addr, cert, key) : NULL;
    pthread_sigmask(SIG_UNBLOCK, set, NULL);
    if (!d) {
        serve_log(h->s, "cannot listen on %s (in use, or not an address of this machine?)", p->listen);
        stop_threads(h);
        free(cert);
        free(key);
        return 1;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    char host[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &addr->sin_addr, host, sizeof host);
    /* --check binds and stops at once: it must not read as a server up. */
    serve_log(h->s, "%s %s://%s:%u (%d threads, model %s)%s",
              p->check ? "check passed: could listen on" : "listening on", cert ? "https" : "http", host,
              di ? (unsigned)di->port : (unsigned)ntohs(addr->sin_port), p->threads, h->s->cur->fp_model,
              p->check ? "; not serving (--check)" : "");
    if (!p->check && !serve_stop_requested)
        signal_loop(h);
    stop_threads(h);
    MHD_stop_daemon(d);
    free(cert);
    free(key);
    serve_log(h->s, "stopped");
    return 0;
}

int ps_serve_run(const ps_serve_params_t *p)
{
    struct sockaddr_in addr;
    if (parse_listen(p->listen, &addr) != 0) {
        fprintf(stderr, "pairsight: serve: --listen: bad value '%s': expected IPV4:PORT\n", p->listen);
        return 2;
    }
    if (p->tls_cert && !MHD_is_feature_supported(MHD_FEATURE_TLS)) {
        fprintf(stderr, "pairsight: serve: this libmicrohttpd was built without TLS\n");
        return 1;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    signal(SIGPIPE, SIG_IGN);
    if (catch_signals() != 0) {
        fprintf(stderr, "pairsight: serve: cannot catch signals: %s\n", strerror(errno));
        return 1;
    }
#ifdef __GLIBC__
    /* large buffers (bodies, replies, token arrays) in their own mappings,
     * returned to the system when freed, whatever size was freed before */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    char err[1024];
    http_t h = {0};
    snprintf(h.listen_host, sizeof h.listen_host, "%.*s", (int)strcspn(p->listen, ":"), p->listen);
    if (serve_init(p, &h.s, err, sizeof err) != 0) {
        fprintf(stderr, "pairsight: serve: %s\n", err);
        return serve_stop_requested ? 0 : 1; /* SIGINT or SIGTERM during the load */
    }
    int code = p->token_file && read_token(&h, p->token_file) != 0 ? 1 : run(&h, &addr, &set);
    serve_free(h.s);
    return code;
}
