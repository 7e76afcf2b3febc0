/* Standard input and output given as "-" (opt.h): temporary files, and
 * the user's names for them in messages. */
#include "cli/opt.h"

#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- standard input and output as files ------------------------------------ */

static char in_tmp[256], out_tmp[256];

static int make_temp(char *buf, size_t n)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/pairsight-stdio.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(buf);
    if (fd < 0) {
        buf[0] = '\0';
        return -1;
    }
    return fd;
}

static char io_error[256];

const char *cli_io_error(void) { return io_error; }

const char *cli_stdin_path(void)
{
    if (in_tmp[0])
        return in_tmp;
    int fd = make_temp(in_tmp, sizeof in_tmp);
    FILE *t = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!t) {
        snprintf(io_error, sizeof io_error, "cannot create a temporary file for standard input: %s", strerror(errno));
        return NULL;
    }
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, stdin)) > 0)
        if (fwrite(buf, 1, got, t) != got)
            break;
    int bad = ferror(stdin) || ferror(t);
    if (fclose(t) != 0 || bad) {
        unlink(in_tmp);
        in_tmp[0] = '\0';
        snprintf(io_error, sizeof io_error, "reading standard input failed");
        return NULL;
    }
    return in_tmp;
}

const char *cli_stdout_path(void)
{
    if (out_tmp[0])
        return out_tmp;
    int fd = make_temp(out_tmp, sizeof out_tmp);
    if (fd < 0) {
        snprintf(io_error, sizeof io_error, "cannot create a temporary file for standard output: %s", strerror(errno));
        return NULL;
    }
    close(fd);
    return out_tmp;
}

int cli_io_finish(int rc)
{
    if (in_tmp[0])
        unlink(in_tmp);
    in_tmp[0] = '\0';
    if (!out_tmp[0])
        return rc;
    if (rc == CLI_OK) {
        FILE *t = fopen(out_tmp, "rb");
        char buf[65536];
        size_t got;
        while (t && (got = fread(buf, 1, sizeof buf, t)) > 0)
            fwrite(buf, 1, got, stdout);
        if (!t || ferror(t))
            rc = CLI_BAD_INPUT;
        if (t)
            fclose(t);
    }
    unlink(out_tmp);
    out_tmp[0] = '\0';
    return rc;
}

const char *cli_user_path(const char *path)
{
    if (path && ((in_tmp[0] && strcmp(path, in_tmp) == 0) || (out_tmp[0] && strcmp(path, out_tmp) == 0)))
        return "-";
    return path;
}

/* Replaces the temporary paths in a message by "-", in place. */
void cli_fix_message(char *msg)
{
    const char *tmps[] = {in_tmp, out_tmp};
    for (int k = 0; k < 2; k++) {
        size_t len = strlen(tmps[k]);
        char *p;
        while (len && (p = strstr(msg, tmps[k])) != NULL) {
            p[0] = '-';
            memmove(p + 1, p + len, strlen(p + len) + 1);
        }
    }
}
