/* The helpers of src/cli/cli.h: messages, number parsing and the checks of
 * output paths made before any long work. */
#include "cli/cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_fail(int code, const char *cmd, const char *fmt, ...)
{
    char msg[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_fix_message(msg);
    fprintf(stderr, "pairsight: %s: %s\n", cmd, msg);
    return code;
}

int cli_parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi || !cli_plain_decimal(s))
        return -1;
    *out = v;
    return 0;
}

int cli_parse_int(const char *s, long lo, long hi, int *out)
{
    long v;
    if (cli_parse_long(s, lo, hi, &v) != 0)
        return -1;
    *out = (int)v;
    return 0;
}

int cli_parse_list(const char *s, double lo, double hi, int integer, double *v, int *n)
{
    *n = 0;
    while (*s) {
        char *end, item[64];
        snprintf(item, sizeof item, "%.*s", (int)strcspn(s, ","), s);
        double x = strtod(s, &end);
        if (end == s || !cli_plain_decimal(item) || !(x >= lo && x <= hi) || (integer && x != (double)(long)x) ||
            *n == 4)
            return -1;
        v[(*n)++] = x;
        s = end;
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return *n > 0 ? 0 : -1;
}

const char *cli_locate_coexec_error(const char *cx_path, const ps_ops_t *ops)
{
    static char msg[1200];
    char orig[1024];
    snprintf(orig, sizeof orig, "%s", ps_last_error());
    snprintf(msg, sizeof msg, "%s", orig);
    if (!cx_path || !ops || strncmp(orig, "coexec row ", 11) != 0)
        return msg;
    const ps_ops_t *list[1] = {ops};
    ps_check_result_t r;
    size_t n = strlen(cx_path), line = 0;
    int col = 0, k = 0;
    if (ps_table_check_with(cx_path, list, 1, &r) != 0 && strncmp(ps_last_error(), cx_path, n) == 0 &&
        sscanf(ps_last_error() + n, ":%zu:%d:%n", &line, &col, &k) == 2 && k > 0)
        snprintf(msg, sizeof msg, "%s:%zu:%d: %s", cx_path, line, col, orig);
    return msg;
}

/* Whether s is written as a plain decimal number: strtod and strtoll skip
 * leading white space, and strtod reads hexadecimal ("0x10" was 16) and
 * "inf"; an option value is none of these. */
int cli_plain_decimal(const char *s)
{
    return (isdigit((unsigned char)*s) || ((*s == '-' || *s == '+' || *s == '.') && s[1])) &&
           !strpbrk(s, "xXpPiInN \t\n\v\f\r");
}

/* The folder part of path ("." when it has none) into buf, or -1 when it
 * does not fit. Trailing slashes name the folder itself: "out/" is in ".". */
static int parent_dir(const char *path, char *buf, size_t n)
{
    size_t end = strlen(path);
    while (end > 1 && path[end - 1] == '/')
        end--;
    const char *slash = NULL;
    for (size_t i = 0; i < end; i++)
        if (path[i] == '/')
            slash = path + i;
    if (!slash)
        return snprintf(buf, n, ".") < (int)n ? 0 : -1;
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    if (len >= n)
        return -1;
    memcpy(buf, path, len);
    buf[len] = '\0';
    return 0;
}

/* Why dir cannot hold a new file, or NULL when it can. */
static const char *dir_problem(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return errno == ENOENT ? "does not exist" : strerror(errno);
    if (!S_ISDIR(st.st_mode))
        return "is not a folder";
    if (access(dir, W_OK | X_OK) != 0)
        return "is not writable";
    return NULL;
}

/* Fails unless the folder that will hold path exists and is writable; what
 * says what the command would have done ("cannot write", "cannot create"). */
static int check_parent(const char *cmd, const char *path, const char *what)
{
    char dir[4096];
    if (parent_dir(path, dir, sizeof dir) != 0)
        return cli_fail(CLI_BAD_INPUT, cmd, "%s: %s: path too long", path, what);
    const char *why = dir_problem(dir);
    if (why)
        return cli_fail(CLI_BAD_INPUT, cmd, "%s: %s: folder '%s' %s", path, what, dir, why);
    return CLI_OK;
}

/* Output locks held until the process exits (cli_check_out). */
static ps_outlock_t *out_locks[16];
static int n_out_locks;

static void release_out_locks(void)
{
    while (n_out_locks > 0)
        ps_outlock_release(out_locks[--n_out_locks]);
}

int cli_lock_output(const char *cmd, const char *path, int wait)
{
    if (n_out_locks == (int)(sizeof out_locks / sizeof out_locks[0]))
        return CLI_OK;
    if (n_out_locks == 0)
        atexit(release_out_locks);
    if (ps_outlock_acquire(path, wait, &out_locks[n_out_locks]) != 0)
        return cli_fail(CLI_BAD_INPUT, cmd, "%s", ps_last_error());
    n_out_locks++;
    return CLI_OK;
}

int cli_check_out(const char *cmd, const char *path, const char *const *inputs, int n)
{
    struct stat st, in;
    if (!*path)
        return cli_fail(CLI_USAGE, cmd, "the output path is empty");
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return cli_fail(CLI_BAD_INPUT, cmd, "%s: cannot write: it is a folder", path);
    for (int i = 0; exists && i < n; i++)
        if (inputs[i] && stat(inputs[i], &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
            return cli_fail(CLI_USAGE, cmd, "%s: the output is also an input (%s): refusing to replace it", path,
                            inputs[i]);
    int rc = check_parent(cmd, path, "cannot write");
    /* Held from here to the end of the command: a second command writing
     * path is refused now, before it works for nothing. */
    return rc == CLI_OK ? cli_lock_output(cmd, path, 0) : rc;
}

int cli_check_out_dir(const char *cmd, const char *dir)
{
    struct stat st;
    if (!*dir)
        return cli_fail(CLI_USAGE, cmd, "the output folder is empty");
    if (stat(dir, &st) != 0)
        return check_parent(cmd, dir, "cannot create");
    const char *why = dir_problem(dir);
    return why ? cli_fail(CLI_BAD_INPUT, cmd, "%s: cannot write into it: %s", dir, why) : CLI_OK;
}
