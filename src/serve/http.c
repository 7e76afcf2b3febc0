/* `pairsight serve` on libmicrohttpd: its thread pool, connection limits
 * and timeouts, GnuTLS for TLS; the body limit, the bearer token and the
 * signals (SIGHUP reloads, SIGINT/SIGTERM stop) are here. */
#include "serve/serve_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One request on a connection, from its headers to its reply. */
typedef struct {
    sb_t body;
    double t0;
    int ep, too_big, answered;
} conn_t;

typedef struct {
    serve_t *s;
    char token[512];
    size_t token_len; /* 0: no token required */
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
        sb_free(&r->body);
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
    return send_reply(h, c, cn, &r);
}

/* Bearer token check, in time independent of where the tokens differ. */
static int authorized(const http_t *h, struct MHD_Connection *c, int ep)
{
    if (!h->token_len || ep == EP_HEALTHZ || ep == EP_READYZ)
        return 1;
    const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!a || strncmp(a, "Bearer ", 7) != 0)
        return 0;
    a += 7;
    size_t n = strlen(a);
    unsigned char diff = n != h->token_len;
    for (size_t i = 0; i < h->token_len; i++)
        diff |= (unsigned char)(h->token[i] ^ (i < n ? a[i] : 0));
    return diff == 0;
}

/* The first call for a request: its state, and the refusals that need no
 * body (no token, a declared length over the limit). */
static enum MHD_Result first_call(http_t *h, struct MHD_Connection *c, const char *url, void **con_cls)
{
    conn_t *cn = calloc(1, sizeof *cn);
    if (!cn)
        return MHD_NO;
    cn->t0 = now();
    cn->ep = serve_route(url);
    *con_cls = cn;
    __atomic_add_fetch(&h->s->inflight, 1, __ATOMIC_RELAXED);
    if (!authorized(h, c, cn->ep))
        return send_error(h, c, cn, 401, "unauthorized", "missing or wrong bearer token (Authorization: Bearer ...)");
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > h->s->p.max_body) {
        char msg[160];
        snprintf(msg, sizeof msg, "the body is %s bytes, over the limit of %zu (--max-body)", cl, h->s->p.max_body);
        return send_error(h, c, cn, 413, "body_too_large", msg);
    }
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    http_t *h = cls;
    if (!*con_cls)
        return first_call(h, c, url, con_cls);
    conn_t *cn = *con_cls;
    if (*upload_data_size) {
        if (!cn->answered && !cn->too_big) {
            if (cn->body.len + *upload_data_size > h->s->p.max_body) {
                cn->too_big = 1;
                sb_free(&cn->body);
            } else {
                sb_putn(&cn->body, upload_data, *upload_data_size);
            }
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (cn->answered)
        return MHD_YES;
    if (cn->too_big) {
        char msg[160];
        snprintf(msg, sizeof msg, "the body is over the limit of %zu bytes (--max-body)", h->s->p.max_body);
        return send_error(h, c, cn, 413, "body_too_large", msg);
    }
    if (cn->body.oom)
        return send_error(h, c, cn, 500, "out_of_memory", "out of memory reading the body");
    serve_reply_t r = {0};
    sb_putn(&cn->body, "", 0);
    serve_handle(h->s, method, url, cn->body.s ? cn->body.s : (char *)"", cn->body.len, &r);
    if (!h->s->p.quiet)
        serve_log(h->s, "%s %s %d %.3f ms", method, url, r.status, 1e3 * (now() - cn->t0));
    return send_reply(h, c, cn, &r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)c;
    (void)toe;
    http_t *h = cls;
    conn_t *cn = *con_cls;
    if (!cn)
        return;
    sb_free(&cn->body);
    free(cn);
    *con_cls = NULL;
    __atomic_sub_fetch(&h->s->inflight, 1, __ATOMIC_RELAXED);
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

/* A whole small file into a NUL-terminated buffer (the caller frees). */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    int bad = !buf || ferror(f) || !feof(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

static int read_token(http_t *h, const char *path)
{
    size_t n = 0;
    char *t = slurp(path, &n);
    if (!t) {
        serve_log(h->s, "--token-file %s: cannot read: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' '))
        n--;
    if (n == 0 || n >= sizeof h->token) {
        serve_log(h->s, "--token-file %s: the token must be 1..%zu characters", path, sizeof h->token - 1);
        free(t);
        return -1;
    }
    memcpy(h->token, t, n);
    h->token_len = n;
    free(t);
    return 0;
}

static struct MHD_Daemon *start(http_t *h, const struct sockaddr_in *addr, char *cert, char *key)
{
    const serve_params_t *p = &h->s->p;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
    if (cert)
        flags |= MHD_USE_TLS;
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, cert}, {MHD_OPTION_HTTPS_MEM_KEY, 0, key}, {MHD_OPTION_END, 0, NULL}};
    struct MHD_OptionItem none[] = {{MHD_OPTION_END, 0, NULL}};
    return MHD_start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR, addr,
                            MHD_OPTION_THREAD_POOL_SIZE, (unsigned)p->threads, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)p->max_conns, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)p->timeout_s,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024, MHD_OPTION_NOTIFY_COMPLETED,
                            on_completed, h, MHD_OPTION_ARRAY, cert ? tls : none, MHD_OPTION_END);
}

/* Signals reach the main loop through a pipe: the handler may run on any
 * thread (a sanitizer's own threads do not share the mask that keeps them
 * off the server's threads), and writing one byte is all it does. */
static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
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

/* Wait for signals: SIGHUP reloads, SIGINT and SIGTERM stop. */
static void signal_loop(http_t *h, const sigset_t *set)
{
    pthread_sigmask(SIG_UNBLOCK, set, NULL); /* this thread takes them */
    for (;;) {
        unsigned char sig = 0;
        ssize_t n = read(sig_pipe[0], &sig, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != 1 || sig != SIGHUP)
            break;
        char err[1024];
        if (serve_reload(h->s, err, sizeof err) == 0)
            serve_log(h->s, "SIGHUP: reloaded");
        else
            serve_log(h->s, "SIGHUP: reload failed, the old model keeps serving: %s", err);
    }
}

static int run(http_t *h, const struct sockaddr_in *addr, const sigset_t *set)
{
    const serve_params_t *p = &h->s->p;
    char *cert = NULL, *key = NULL;
    if (p->tls_cert && (!(cert = slurp(p->tls_cert, NULL)) || !(key = slurp(p->tls_key, NULL)))) {
        serve_log(h->s, "cannot read %s", cert ? p->tls_key : p->tls_cert);
        free(cert);
        return 1;
    }
    struct MHD_Daemon *d = start(h, addr, cert, key);
    if (!d) {
        serve_log(h->s, "cannot listen on %s (in use, or not an address of this machine?)", p->listen);
        free(cert);
        free(key);
        return 1;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    char host[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &addr->sin_addr, host, sizeof host);
    serve_log(h->s, "listening on %s://%s:%u (%d threads, model %s)", cert ? "https" : "http", host,
              di ? (unsigned)di->port : (unsigned)ntohs(addr->sin_port), p->threads, h->s->cur->fp_model);
    if (!p->check)
        signal_loop(h, set);
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
    /* The signals go to this thread's loop: blocked before the server's
     * threads start, so that they inherit the mask, and unblocked here
     * once they run. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (catch_signals() != 0) {
        fprintf(stderr, "pairsight: serve: cannot catch signals: %s\n", strerror(errno));
        return 1;
    }
    char err[1024];
    http_t h = {0};
    if (serve_init(p, &h.s, err, sizeof err) != 0) {
        fprintf(stderr, "pairsight: serve: %s\n", err);
        return 1;
    }
    int code = p->token_file && read_token(&h, p->token_file) != 0 ? 1 : run(&h, &addr, &set);
    serve_free(h.s);
    return code;
}
