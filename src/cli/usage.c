/* The usage text of a command, generated from its option table (opt.h). */
#include "cli/opt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- describing values --------------------------------------------------- */

int cli_opt_is_list(const cli_opt_t *o) { return o->type == CLI_INTS || o->type == CLI_DBLS; }

static int is_integer_type(const cli_opt_t *o)
{
    return o->type == CLI_INT || o->type == CLI_LONG || o->type == CLI_U64 || o->type == CLI_INTS;
}

/* "1..100" or "(0, 1]" or ">= 0": the range of a number option. */
static void cli_opt_range_text(const cli_opt_t *o, char *buf, size_t n)
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
void cli_opt_accepts_text(const cli_opt_t *o, char *buf, size_t n)
{
    char r[96];
    cli_opt_range_text(o, r, sizeof r);
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
    if (o->type == CLI_INT || o->type == CLI_LONG || o->type == CLI_U64 || o->type == CLI_DBL || cli_opt_is_list(o)) {
        char r[96];
        cli_opt_range_text(o, r, sizeof r);
        snprintf(extra, sizeof extra, "%s%s", cli_opt_is_list(o) ? "each in " : "", r);
    } else if (o->type == CLI_ENUM) {
        cli_opt_accepts_text(o, extra, sizeof extra);
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
