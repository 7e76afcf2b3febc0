/* pairsight: one binary, one table of subcommands. */
#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const cli_command_t commands[] = {
    {"check", cmd_check, "validate CSV tables (ops, coexec, workloads, ...)"},
    {"import", cmd_import, "convert an Nsight Compute CSV or PyTorch trace to ops.csv"},
    {"simulate", cmd_simulate, "write a simulated profiling campaign (ops.csv, coexec.csv)"},
    {"train", cmd_train, "train the PairSight segment model"},
    {"predict", cmd_predict, "predict co-execution latencies of candidate segments"},
    {"adapt", cmd_adapt, "continue training a model on a few new experiments"},
    {"explain", cmd_explain, "show which operators drive one prediction"},
    {"eval", cmd_eval, "compare PairSight with the baselines; run the experiments"},
    {"report", cmd_report, "write a self-contained HTML evaluation report"},
    {"colocate", cmd_colocate, "workload-level co-location: train, predict, select, eval"},
    {"collect", cmd_collect, "measure profiles and co-executions on a real GPU"},
};

static const cli_command_t *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

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
    if (end == s || *end || errno || v < lo || v > hi)
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
        char *end;
        double x = strtod(s, &end);
        if (end == s || !(x >= lo && x <= hi) || (integer && x != (double)(long)x) || *n == 4)
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

static int is_one_of(const char *a, const char *const *list)
{
    for (int k = 0; list && list[k]; k++)
        if (strcmp(a, list[k]) == 0)
            return 1;
    return 0;
}

int cli_bad_option(const char *cmd, const char *a, const char *const *value_flags)
{
    if (is_one_of(a, value_flags))
        return cli_fail(CLI_USAGE, cmd, "%s needs a value (see pairsight %s --help)", a, cmd);
    return cli_fail(CLI_USAGE, cmd, "unknown option '%s' (see pairsight %s --help)", a, cmd);
}

int cli_next_option(const char *cmd, int argc, char **argv, int *i, const char *const *value_flags, int *json,
                    int *quiet, const char **val)
{
    const char *a = argv[*i];
    *val = NULL;
    if (json && strcmp(a, "--json") == 0) {
        *json = 1;
        return CLI_OK;
    }
    if (quiet && strcmp(a, "-q") == 0) {
        *quiet = 1;
        return CLI_OK;
    }
    if (*i + 1 >= argc || !is_one_of(a, value_flags))
        return cli_bad_option(cmd, a, value_flags);
    *val = argv[++*i];
    return CLI_OK;
}

/* The folder part of path ("." when it has none) into buf, or -1 when it
 * does not fit. */
static int parent_dir(const char *path, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
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
    return check_parent(cmd, path, "cannot write");
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

int cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    return 0;
}

static void print_help(FILE *f)
{
    fputs("pairsight " PS_VERSION_STRING " - predict interference between deep-learning tasks sharing a GPU\n"
          "\n"
          "usage: pairsight COMMAND [OPTIONS]\n"
          "       pairsight help COMMAND [SUBCOMMAND] | pairsight COMMAND [SUBCOMMAND] --help\n"
          "       pairsight --version\n"
          "\n"
          "The data's way: profile (simulate, collect, import, check) -> model (train,\n"
          "adapt) -> prediction (predict, explain) -> decision (colocate), measured\n"
          "by eval and report.\n"
          "\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\nExit status: 0 ok, 1 bad input or failure, 2 usage error.\n", f);
}

/* "unknown command 'trian'; did you mean 'train'?" */
static int unknown_command(const char *where, const char *name)
{
    const char *names[sizeof commands / sizeof commands[0]];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        names[i] = commands[i].name;
    const char *near = cli_nearest(name, names, sizeof names / sizeof names[0]);
    fprintf(stderr, "pairsight: %s%sunknown command '%s'", where ? where : "", where ? ": " : "", name);
    if (near)
        fprintf(stderr, "; did you mean '%s'?", near);
    fputs(" (see pairsight --help)\n", stderr);
    return CLI_USAGE;
}

/* Runs the command that argv names; *name receives it for messages. */
static int dispatch(int argc, char **argv, const char **name)
{
    if (argc < 2) {
        print_help(stderr);
        return CLI_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        print_help(stdout);
        return CLI_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("pairsight %s\n", ps_version());
        return CLI_OK;
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc < 3) {
            print_help(stdout);
            return CLI_OK;
        }
        /* `pairsight help CMD [SUB]` is `pairsight CMD [SUB] --help`. */
        const cli_command_t *c = find_command(argv[2]);
        if (!c)
            return unknown_command("help", argv[2]);
        char help[] = "--help";
        char *args[] = {argv[2], argc > 3 ? argv[3] : help, help, NULL};
        return c->fn(argc > 3 ? 3 : 2, args);
    }
    const cli_command_t *c = find_command(cmd);
    if (!c)
        return unknown_command(NULL, cmd);
    *name = c->name;
    return c->fn(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
    const char *name = "help";
    int rc = dispatch(argc, argv, &name);
    rc = cli_io_finish(rc);
    /* A result that did not reach stdout (a full disk, a closed pipe) is a
     * failure, whichever command printed it: scripts read that output. */
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int e = errno;
        if (rc == CLI_OK)
            rc = cli_fail(CLI_BAD_INPUT, name, "stdout: write failed%s%s", e ? ": " : "", e ? strerror(e) : "");
    }
    return rc;
}
