/* The table-driven option parser of src/cli/opt.h; its usage text is
 * usage.c, standard streams stdio.c, progress lines progress.c and the JSON
 * writer json.c. */
#include "cli/opt.h"

#include "cli/cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- parsing values ------------------------------------------------------ */

static int in_range(const cli_opt_t *o, double x)
{
    if (isnan(x))
        return 0;
    if (o->flags & CLI_LO_OPEN ? !(x > o->lo) : !(x >= o->lo))
        return 0;
    if (o->flags & CLI_HI_OPEN ? !(x < o->hi) : !(x <= o->hi))
        return 0;
    return 1;
}

static int parse_whole(const char *s, long long *out)
{
    char *end;
    errno = 0;
    if (!cli_plain_decimal(s))
        return -1;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_number(const char *s, double *out)
{
    char *end;
    errno = 0;
    if (!cli_plain_decimal(s))
        return -1;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || isnan(v))
        return -1;
    *out = v;
    return 0;
}

static int parse_u64(const cli_opt_t *o, const char *s)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-' || *s == '+' || !cli_plain_decimal(s))
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno || (double)v < o->lo || (o->hi != 0 && (double)v > o->hi))
        return -1;
    *(uint64_t *)o->dest = (uint64_t)v;
    return 0;
}

/* A comma-separated list, appended to the values already given (a list flag
 * may be repeated: --depths 6 --depths 8 is --depths 6,8). */
static int parse_list(cli_opt_t *o, const char *s)
{
    int n = o->given > 1 ? *o->count : 0;
    if (!*s)
        return -1;
    while (*s) {
        char *end;
        size_t len = strcspn(s, ",");
        char item[64];
        if (len == 0 || len >= sizeof item || n == o->max)
            return -1;
        memcpy(item, s, len);
        item[len] = '\0';
        double x = 0;
        long long w = 0;
        if (o->type == CLI_INTS ? parse_whole(item, &w) != 0 : cli_parse_number(item, &x) != 0)
            return -1;
        if (o->type == CLI_INTS)
            x = (double)w;
        if (!in_range(o, x))
            return -1;
        if (o->type == CLI_INTS)
            ((int *)o->dest)[n++] = (int)w;
        else
            ((double *)o->dest)[n++] = x;
        s += len;
        end = (char *)s;
        if (*end == ',' && !end[1])
            return -1;
        if (*s == ',')
            s++;
    }
    *o->count = n;
    return 0;
}

static int parse_value(cli_opt_t *o, const char *v)
{
    long long w;
    double x;
    switch (o->type) {
    case CLI_FLAG: return -1;
    case CLI_STR: *(const char **)o->dest = v; return 0;
    case CLI_INT:
    case CLI_LONG:
        if (parse_whole(v, &w) != 0 || !in_range(o, (double)w))
            return -1;
        if (o->type == CLI_INT)
            *(int *)o->dest = (int)w;
        else
            *(long *)o->dest = (long)w;
        return 0;
    case CLI_U64: return parse_u64(o, v);
    case CLI_DBL:
        if (cli_parse_number(v, &x) != 0 || !in_range(o, x))
            return -1;
        *(double *)o->dest = x;
        return 0;
    case CLI_INTS:
    case CLI_DBLS: return parse_list(o, v);
    case CLI_ENUM:
        for (int k = 0; o->choices[k]; k++)
            if (strcmp(v, o->choices[k]) == 0) {
                *(int *)o->dest = k;
                return 0;
            }
        return -1;
    case CLI_FN: return o->parse(v, o->dest);
    }
    return -1;
}

/* ---- names and suggestions ----------------------------------------------- */

/* The option of spec named name, or NULL. */
static cli_opt_t *cli_opt_find(cli_spec_t *spec, const char *name)
{
    for (cli_opt_t *o = spec->opts; o->name; o++)
        if (strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

int cli_given(cli_spec_t *spec, const char *name)
{
    cli_opt_t *o = cli_opt_find(spec, name);
    return o && o->given > 0;
}

/* "pairsight colocate eval" or "pairsight train": how --help is reached. */
static void help_ref(const cli_spec_t *s, char *buf, size_t n)
{
    /* The command's help lists every subcommand's flags. */
    snprintf(buf, n, "pairsight %s --help", s->cmd);
}

static int unknown_option(cli_spec_t *spec, const char *name)
{
    const char *names[128];
    size_t n = 0;
    for (cli_opt_t *o = spec->opts; o->name && n < 126; o++)
        names[n++] = o->name;
    names[n++] = "--help";
    char ref[96];
    help_ref(spec, ref, sizeof ref);
    const char *near = ps_nearest(name, names, n);
    if (near)
        return cli_fail(CLI_USAGE, spec->cmd, "unknown option '%s'; did you mean '%s'? (see %s)", name, near, ref);
    return cli_fail(CLI_USAGE, spec->cmd, "unknown option '%s' (see %s)", name, ref);
}

/* ---- the parser ---------------------------------------------------------- */

static int wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    }
    return 0;
}

/* One option at argv[*i]: its value from "=value" or the next argument. */
static int take_option(cli_spec_t *spec, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    char name[64];
    const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    if (len >= sizeof name)
        len = sizeof name - 1;
    memcpy(name, a, len);
    name[len] = '\0';
    cli_opt_t *o = cli_opt_find(spec, name);
    if (!o)
        return unknown_option(spec, name);
    char what[256], ref[96];
    cli_opt_accepts_text(o, what, sizeof what);
    help_ref(spec, ref, sizeof ref);
    if (o->given && !cli_opt_is_list(o))
        return cli_fail(CLI_USAGE, spec->cmd, "%s given twice (it takes one value%s)", name,
                        o->type == CLI_FLAG ? " and no repeat" : "");
    o->given++;
    if (o->type == CLI_FLAG) {
        if (eq)
            return cli_fail(CLI_USAGE, spec->cmd, "%s takes no value (got '%s')", name, eq + 1);
        *(int *)o->dest = 1;
        return CLI_OK;
    }
    const char *v = eq ? eq + 1 : NULL;
    if (!v) {
        if (*i + 1 >= argc)
            return cli_fail(CLI_USAGE, spec->cmd, "%s needs a value%s%s (see %s)", name, o->type == CLI_STR ? "" : ": ",
                            o->type == CLI_STR ? "" : what, ref);
        v = argv[++*i];
    }
    if (parse_value(o, v) != 0)
        return cli_fail(CLI_USAGE, spec->cmd, "%s: bad value '%s': expected %s", name, v, what);
    return CLI_OK;
}

/* "--a, --b and --c" from the n names. */
static void join_names(const char *const *names, int n, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < n && len < size; k++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", k == 0 ? "" : k == n - 1 ? " and " : ", ", names[k]);
}

static int report_missing(cli_spec_t *spec, const char *what, const char *const *all, int n_all,
                          const char *const *missing, int n_missing)
{
    char a[512], m[512];
    join_names(all, n_all, a, sizeof a);
    join_names(missing, n_missing, m, sizeof m);
    if (n_all == 1) {
        char ref[96];
        help_ref(spec, ref, sizeof ref);
        return cli_fail(CLI_USAGE, spec->cmd, "%s%s is required (see %s)", what ? what : "", a, ref);
    }
    return cli_fail(CLI_USAGE, spec->cmd, "%smissing %s: %s are required", what ? what : "", m, a);
}

int cli_need(cli_spec_t *spec, const char *what, const char *names)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", names);
    const char *all[32], *missing[32];
    int n_all = 0, n_missing = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n_all < 32; t = strtok_r(NULL, ",", &save)) {
        all[n_all++] = t;
        if (!cli_given(spec, t))
            missing[n_missing++] = t;
    }
    if (n_missing == 0)
        return CLI_OK;
    return report_missing(spec, what, all, n_all, missing, n_missing);
}

static int check_required(cli_spec_t *spec)
{
    const char *all[64], *missing[64];
    int n_all = 0, n_missing = 0;
    for (cli_opt_t *o = spec->opts; o->name && n_all < 64; o++)
        if (o->flags & CLI_REQ) {
            all[n_all++] = o->name;
            if (!o->given)
                missing[n_missing++] = o->name;
        }
    if (n_missing == 0)
        return CLI_OK;
    return report_missing(spec, NULL, all, n_all, missing, n_missing);
}

/* "-" given to CLI_IN and CLI_OUT options becomes a temporary file. */
static int resolve_stdio(cli_spec_t *spec)
{
    int n_in = 0, n_out = 0;
    for (cli_opt_t *o = spec->opts; o->name; o++) {
        if (o->type != CLI_STR || !o->given || strcmp(*(const char **)o->dest, "-") != 0)
            continue;
        if (!(o->flags & (CLI_IN | CLI_OUT)))
            continue;
        int in = (o->flags & CLI_IN) != 0;
        if (in ? n_in++ : n_out++)
            return cli_fail(CLI_USAGE, spec->cmd, "%s: only one %s can be '-'", o->name, in ? "input" : "output");
        const char *p = in ? cli_stdin_path() : cli_stdout_path();
        if (!p)
            return cli_fail(CLI_BAD_INPUT, spec->cmd, "%s: %s", o->name, cli_io_error());
        *(const char **)o->dest = p;
    }
    return CLI_OK;
}

int cli_parse(cli_spec_t *spec, int argc, char **argv, int *npos, int *code)
{
    for (cli_opt_t *o = spec->opts; o->name; o++)
        o->given = 0;
    if (wants_help(argc, argv)) {
        cli_usage(spec, stdout);
        *code = CLI_OK;
        return 1;
    }
    int n = 0, only_pos = 0, rc = CLI_OK;
    for (int i = 1; i < argc && rc == CLI_OK; i++) {
        const char *a = argv[i];
        if (!only_pos && strcmp(a, "--") == 0) {
            only_pos = 1;
        } else if (only_pos || a[0] != '-' || !a[1]) {
            if (spec->max_pos >= 0 && n >= spec->max_pos) {
                char ref[96];
                help_ref(spec, ref, sizeof ref);
                rc = cli_fail(CLI_USAGE, spec->cmd, "unexpected argument '%s' (see %s)", a, ref);
            }
            argv[1 + n++] = argv[i];
        } else {
            rc = take_option(spec, argc, argv, &i);
        }
    }
    if (rc == CLI_OK)
        rc = check_required(spec);
    if (rc == CLI_OK)
        rc = resolve_stdio(spec);
    if (npos)
        *npos = n;
    *code = rc;
    return rc != CLI_OK;
}

void cli_param_flag(const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "--%s", name);
    for (char *c = buf + 2; *c; c++)
        *c = *c == '_' ? '-' : *c;
}

/* The option of a number row of an operation's table, writing into dest;
 * its name is kept for the life of the process (one copy per name). */
static cli_opt_t row_opt(const ps_param_t *row, void *dest)
{
    static char names[48][48];
    static int used;
    char flag[48];
    cli_param_flag(row->name, flag, sizeof flag);
    int i = 0;
    while (i < used && strcmp(names[i], flag) != 0)
        i++;
    if (i == used && used < 48)
        memcpy(names[used++], flag, sizeof flag);
    return (cli_opt_t){i < used ? names[i] : "--?",
                       row->type == PS_PARAM_INT   ? CLI_INT
                       : row->type == PS_PARAM_U64 ? CLI_U64
                                                   : CLI_DBL,
                       dest,
                       row->arg,
                       row->help,
                       .lo = row->lo,
                       .hi = row->hi,
                       .def = row->none,
                       .flags = (row->flags & PS_PARAM_LO_OPEN ? CLI_LO_OPEN : 0u) |
                                (row->flags & PS_PARAM_HI_OPEN ? CLI_HI_OPEN : 0u)};
}

int cli_op_opts(const char *op, void *params, cli_opt_t *out, int max)
{
    int n = 0, k = 0;
    const ps_param_t *rows = ps_op_params(op, &n);
    for (int i = 0; i < n && k < max; i++)
        if (rows[i].type != PS_PARAM_STR) /* a string: a member the command reads its own way */
            out[k++] = row_opt(&rows[i], (char *)params + rows[i].offset);
    return k;
}

cli_opt_t cli_op_opt(const char *op, const char *name, void *dest)
{
    int n = 0;
    const ps_param_t *rows = ps_op_params(op, &n);
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0 && rows[i].type != PS_PARAM_STR)
            return row_opt(&rows[i], dest);
    fprintf(stderr, "pairsight: internal error: operation %s has no number parameter %s\n", op, name);
    abort();
}
