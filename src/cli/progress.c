/* Progress lines of long steps on stderr (opt.h). */
#include "cli/opt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- progress ------------------------------------------------------------ */

static struct {
    char what[96];
    double start, last, last_done;
    int drawn; /* a terminal line is open */
    int lines; /* lines printed for this step */
} prog;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds between progress lines when stderr is not a terminal (5; the
 * environment variable PAIRSIGHT_PROGRESS_SECONDS overrides it). */
static double cli_progress_interval(void)
{
    const char *e = getenv("PAIRSIGHT_PROGRESS_SECONDS");
    double v;
    if (e && cli_parse_number(e, &v) == 0 && v >= 0)
        return v;
    return 5.0;
}

static void fmt_seconds(double s, char *buf, size_t n)
{
    if (s < 100)
        snprintf(buf, n, "%.0f s", s);
    else if (s < 6000)
        snprintf(buf, n, "%.0f min", s / 60);
    else
        snprintf(buf, n, "%.1f h", s / 3600);
}

void cli_progress(int quiet, const char *what, double done, double total)
{
    if (quiet)
        return;
    double now = now_s();
    if (strcmp(prog.what, what) != 0 || done < prog.last_done) {
        cli_progress_end(quiet);
        snprintf(prog.what, sizeof prog.what, "%s", what);
        prog.start = prog.last = now;
        prog.lines = 0;
    }
    prog.last_done = done;
    int tty = isatty(2);
    double gap = tty ? 0.2 : cli_progress_interval();
    int finished = total > 0 && done >= total;
    /* Off a terminal a step that ends within the first interval prints
     * nothing; a step that took longer prints its last line too. */
    if (now - prog.last < gap && !(finished && (tty || prog.lines > 0)))
        return;
    if (finished && !tty && prog.lines == 0 && now - prog.start < gap)
        return;
    prog.last = now;
    char eta[32] = "", el[32];
    fmt_seconds(now - prog.start, el, sizeof el);
    if (total > 0 && done > 0 && !finished) {
        char left[24];
        fmt_seconds((now - prog.start) * (total - done) / done, left, sizeof left);
        snprintf(eta, sizeof eta, ", ETA %s", left);
    }
    if (total > 0)
        fprintf(stderr, "%s%s: %.0f / %.0f (%.0f%%), %s%s%s", tty ? "\r" : "", what, done, total, 100.0 * done / total,
                el, eta, tty ? "   " : "\n");
    else
        fprintf(stderr, "%s%s: %.0f, %s%s", tty ? "\r" : "", what, done, el, tty ? "   " : "\n");
    prog.drawn = tty;
    prog.lines++;
}

void cli_progress_cb(const char *stage, double done, double total, void *user)
{
    cli_progress(*(const int *)user, stage, done, total);
}

void cli_progress_end(int quiet)
{
    if (!quiet && prog.drawn)
        fputc('\n', stderr);
    prog.drawn = 0;
    prog.what[0] = '\0';
    prog.last_done = 0;
    prog.lines = 0;
}
