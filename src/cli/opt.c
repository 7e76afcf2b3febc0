/* The table-driven option parser, usage printer, progress lines and JSON
 * writer of src/cli/opt.h. */
#include "cli/opt.h"

#include "cli/cli.h"
#include "common/common.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- describing values --------------------------------------------------- */

static int is_list(const cli_opt_t *o) { return o->type == CLI_INTS || o->type == CLI_DBLS; }

static int is_integer_type(const cli_opt_t *o)
{
    return o->type == CLI_INT || o->type == CLI_LONG || o->type == CLI_U64 || o->type == CLI_INTS;
}

/* "1..100" or "(0, 1]" or ">= 0": the range of a number option. */
static void range_text(const cli_opt_t *o, char *buf, size_t n)
{
    if (is_integer_type(o)) {
        if (o->type == CLI_U64 && o->hi == 0)
            snprintf(buf, n, "%.0f..%s", o->lo, "18446744073709551615");
        else
            snprintf(buf, n, "%.0f..%.0f", o->lo, o->hi);
        return;
    }
    if (isinf(o->hi))
        snprintf(buf, n, "%s %g", o->flags & CLI_LO_OPEN ? ">" : ">=", o->lo);
    else
        snprintf(buf, n, "%c%g, %g%c", o->flags & CLI_LO_OPEN ? '(' : '[', o->lo, o->hi,
                 o->flags & CLI_HI_OPEN ? ')' : ']');
}

/* What the option accepts, in words, for messages. */
static void accepts_text(const cli_opt_t *o, char *buf, size_t n)
{
    char r[96];
    range_text(o, r, sizeof r);
    switch (o->type) {
    case CLI_FLAG: snprintf(buf, n, "no value"); break;
    case CLI_STR:
        snprintf(buf, n, "%s%s", o->arg ? o->arg : "a string",
                 o->flags & CLI_IN    ? " (- for standard input)"
                 : o->flags & CLI_OUT ? " (- for standard output)"
                                      : "");
        break;
    case CLI_INT:
    case CLI_LONG:
    case CLI_U64: snprintf(buf, n, "an integer in %s", r); break;
    case CLI_DBL: snprintf(buf, n, "a number in %s", r); break;
    case CLI_INTS: snprintf(buf, n, "up to %d comma-separated integers in %s", o->max, r); break;
    case CLI_DBLS: snprintf(buf, n, "up to %d comma-separated numbers in %s", o->max, r); break;
    case CLI_ENUM: {
        size_t len = (size_t)snprintf(buf, n, "one of ");
        for (int k = 0; o->choices[k] && len < n; k++)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", k ? ", " : "", o->choices[k]);
        break;
    }
    case CLI_FN: snprintf(buf, n, "%s", o->accepts ? o->accepts : (o->arg ? o->arg : "a value")); break;
    }
}

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

/* Whether s is written as a plain decimal number: strtod and strtoll skip
 * leading white space, and strtod reads hexadecimal ("0x10" was 16) and
 * "inf"; an option value is none of these. */
int cli_plain_decimal(const char *s)
{
    return (isdigit((unsigned char)*s) || ((*s == '-' || *s == '+' || *s == '.') && s[1])) &&
           !strpbrk(s, "xXpPiInN \t\n\v\f\r");
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

static int parse_number(const char *s, double *out)
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
        if (o->type == CLI_INTS ? parse_whole(item, &w) != 0 : parse_number(item, &x) != 0)
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
        if (parse_number(v, &x) != 0 || !in_range(o, x))
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

/* Optimal string alignment distance: insertions, deletions, substitutions
 * and transpositions of neighbours ("trian" is one step from "train"). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return (size_t)-1;
    size_t d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *cli_nearest(const char *s, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1, len = strlen(s);
    /* The "--" costs nothing: --out is not near --ops. */
    size_t limit = len > 5 ? (len - 2) / 3 : 1;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(s, names[i]);
        /* A prefix of a longer name ("--dep" of "--depths") is near too. */
        if (len >= 4 && strncmp(s, names[i], len) == 0 && d > 1)
            d = 1;
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    return best_d <= limit ? best : NULL;
}

cli_opt_t *cli_opt_find(cli_spec_t *spec, const char *name)
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
    const char *near = cli_nearest(name, names, n);
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
    accepts_text(o, what, sizeof what);
    help_ref(spec, ref, sizeof ref);
    if (o->given && !is_list(o))
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

int cli_needs_flag(cli_spec_t *spec, const char *flag, const char *other)
{
    if (cli_given(spec, flag) && !cli_given(spec, other))
        return cli_fail(CLI_USAGE, spec->cmd, "%s needs %s", flag, other);
    return CLI_OK;
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
            return cli_fail(CLI_BAD_INPUT, spec->cmd, "%s: %s", o->name, ps_last_error());
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

/* ---- usage --------------------------------------------------------------- */

#define NBSP '\x01'

/* Writes text at column indent, wrapped before column 80; the first line
 * continues at column col (already written). */
static void wrap(FILE *f, const char *text, int col, int indent)
{
    while (*text) {
        size_t word = strcspn(text, " ");
        if (col > indent && col + 1 + (int)word > 79) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        for (size_t k = 0; k < word; k++)
            fputc(text[k] == NBSP ? ' ' : text[k], f); /* NBSP: a space that never breaks */
        col += (int)word;
        text += word;
        while (*text == ' ')
            text++;
    }
    fputc('\n', f);
}

/* "default 400" and friends: the value in the destination now, which is the
 * library's default while the usage is printed before any parsing. */
static void default_text(const cli_opt_t *o, char *buf, size_t n)
{
    buf[0] = '\0';
    if (o->flags & CLI_REQ) {
        snprintf(buf, n, "required");
        return;
    }
    if (o->def) {
        snprintf(buf, n, "default %s", o->def);
        return;
    }
    if (o->flags & CLI_NODEF)
        return;
    size_t len = 0;
    switch (o->type) {
    case CLI_FLAG: snprintf(buf, n, "default %s", *(int *)o->dest ? "on" : "off"); break;
    case CLI_STR: {
        const char *s = *(const char *const *)o->dest;
        snprintf(buf, n, "default %s", s ? (*s ? s : "\"\"") : "none");
        break;
    }
    case CLI_INT: snprintf(buf, n, "default %d", *(int *)o->dest); break;
    case CLI_LONG: snprintf(buf, n, "default %ld", *(long *)o->dest); break;
    case CLI_U64: snprintf(buf, n, "default %llu", (unsigned long long)*(uint64_t *)o->dest); break;
    case CLI_DBL: snprintf(buf, n, "default %g", *(double *)o->dest); break;
    case CLI_INTS:
    case CLI_DBLS:
        len = (size_t)snprintf(buf, n, "default ");
        for (int k = 0; k < *o->count && len < n; k++) {
            if (o->type == CLI_INTS)
                len += (size_t)snprintf(buf + len, n - len, "%s%d", k ? "," : "", ((int *)o->dest)[k]);
            else
                len += (size_t)snprintf(buf + len, n - len, "%s%g", k ? "," : "", ((double *)o->dest)[k]);
        }
        break;
    case CLI_ENUM: snprintf(buf, n, "default %s", o->choices[*(int *)o->dest]); break;
    case CLI_FN: break;
    }
}

static void print_option(const cli_opt_t *o, FILE *f)
{
    char head[64], def[256], extra[320], text[1024];
    snprintf(head, sizeof head, "  %s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    default_text(o, def, sizeof def);
    extra[0] = '\0';
    if (o->type == CLI_INT || o->type == CLI_LONG || o->type == CLI_U64 || o->type == CLI_DBL || is_list(o)) {
        char r[96];
        range_text(o, r, sizeof r);
        snprintf(extra, sizeof extra, "%s%s", is_list(o) ? "each in " : "", r);
    } else if (o->type == CLI_ENUM) {
        accepts_text(o, extra, sizeof extra);
    } else if (o->flags & (CLI_IN | CLI_OUT)) {
        snprintf(extra, sizeof extra, "- is standard %s", o->flags & CLI_IN ? "input" : "output");
    }
    /* "(default 20" stays on one line. */
    for (char *d = def; (d = strstr(d, "default ")) != NULL; d += 8)
        d[7] = NBSP;
    const char *sep = def[0] && extra[0] ? "; " : "";
    if (def[0] || extra[0])
        snprintf(text, sizeof text, "%s (%s%s%s)", o->help ? o->help : "", def, sep, extra);
    else
        snprintf(text, sizeof text, "%s", o->help ? o->help : "");
    int col = (int)strlen(head);
    fputs(head, f);
    if (col >= 22) {
        fprintf(f, "\n%*s", 22, "");
        col = 22;
    } else {
        fprintf(f, "%*s", 22 - col, "");
        col = 22;
    }
    wrap(f, text, col, 22);
}

void cli_usage(const cli_spec_t *s, FILE *f)
{
    char prog[96];
    snprintf(prog, sizeof prog, "pairsight %s%s%s", s->cmd, s->sub ? " " : "", s->sub ? s->sub : "");
    const char *syn = s->synopsis ? s->synopsis : "[options]";
    for (int first = 1; *syn; first = 0) {
        size_t len = strcspn(syn, "\n");
        fprintf(f, "%s %s %.*s\n", first ? "usage:" : "      ", prog, (int)len, syn);
        syn += len + (syn[len] == '\n');
    }
    if (s->about)
        fprintf(f, "\n%s", s->about);
    fputs("\noptions:\n", f);
    for (const cli_opt_t *o = s->opts; o->name; o++)
        print_option(o, f);
    fprintf(f, "  %-19s this text\n", "-h, --help");
    if (s->examples && s->examples[0]) {
        fputs("\nexamples (from the source folder, after scripts/run.sh has written out/):\n", f);
        for (int k = 0; s->examples[k]; k++)
            fprintf(f, "  %s\n", s->examples[k]);
    }
    if (s->notes)
        fprintf(f, "\n%s", s->notes);
    fprintf(f, "\nExit status: %s\n", s->exit_status ? s->exit_status : "0 ok, 1 bad input or failure, 2 usage error.");
}

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

const char *cli_stdin_path(void)
{
    if (in_tmp[0])
        return in_tmp;
    int fd = make_temp(in_tmp, sizeof in_tmp);
    FILE *t = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!t) {
        psi_error(PS_E_IO, "cannot create a temporary file for standard input: %s", strerror(errno));
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
        psi_error(PS_E_IO, "reading standard input failed");
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
        psi_error(PS_E_IO, "cannot create a temporary file for standard output: %s", strerror(errno));
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

double cli_progress_interval(void)
{
    const char *e = getenv("PAIRSIGHT_PROGRESS_SECONDS");
    double v;
    if (e && parse_number(e, &v) == 0 && v >= 0)
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

/* ---- JSON ------------------------------------------------------------------ */

cJSON *cli_json_new(const char *name, int version)
{
    cJSON *o = cJSON_CreateObject();
    char schema[96];
    snprintf(schema, sizeof schema, "pairsight.%s.v%d", name, version);
    if (o && !cJSON_AddStringToObject(o, "schema", schema)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The length of the valid UTF-8 sequence at s, or 0 when it is not one. */
static int utf8_len(const unsigned char *s)
{
    int n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (n == 0 || (n == 2 && s[0] < 0xc2) || (n == 4 && s[0] > 0xf4))
        return 0;
    for (int k = 1; k < n; k++)
        if ((s[k] & 0xc0) != 0x80)
            return 0;
    if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
        return 0; /* overlong, or a UTF-16 surrogate */
    if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
        return 0;
    return n;
}

static void write_string(const char *s, FILE *f)
{
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        int n = utf8_len(p);
        if (n == 0) {
            fputs("\\ufffd", f);
            p++;
        } else if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p++);
        } else if (*p == '\n') {
            fputs("\\n", f), p++;
        } else if (*p == '\t') {
            fputs("\\t", f), p++;
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p++);
        } else {
            fwrite(p, 1, (size_t)n, f);
            p += n;
        }
    }
    fputc('"', f);
}

static void write_number(double v, FILE *f)
{
    if (!isfinite(v))
        fputs("null", f);
    else if (v == floor(v) && fabs(v) < 9007199254740992.0)
        fprintf(f, "%.0f", v);
    else
        fprintf(f, "%.17g", v);
}

void cli_json_write(const cJSON *v, FILE *f)
{
    if (!v || cJSON_IsNull(v) || cJSON_IsInvalid(v)) {
        fputs("null", f);
    } else if (cJSON_IsFalse(v)) {
        fputs("false", f);
    } else if (cJSON_IsTrue(v)) {
        fputs("true", f);
    } else if (cJSON_IsNumber(v)) {
        write_number(v->valuedouble, f);
    } else if (cJSON_IsString(v)) {
        write_string(v->valuestring, f);
    } else if (cJSON_IsRaw(v)) {
        fputs(v->valuestring, f);
    } else {
        int obj = cJSON_IsObject(v);
        fputc(obj ? '{' : '[', f);
        for (const cJSON *c = v->child; c; c = c->next) {
            if (c != v->child)
                fputc(',', f);
            if (obj) {
                write_string(c->string, f);
                fputc(':', f);
            }
            cli_json_write(c, f);
        }
        fputc(obj ? '}' : ']', f);
    }
}

void cli_json_move(cJSON *to, cJSON *from)
{
    while (from && from->child) {
        cJSON *it = cJSON_DetachItemViaPointer(from, from->child);
        cJSON_AddItemToObject(to, it->string, it);
    }
    cJSON_Delete(from);
}

int cli_json_print(cJSON *o, FILE *f)
{
    if (!o)
        return -1;
    cli_json_write(o, f);
    fputc('\n', f);
    cJSON_Delete(o);
    return ferror(f) ? -1 : 0;
}
