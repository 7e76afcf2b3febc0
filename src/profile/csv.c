#include "profile/csv.h"

#include "common/common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One read of this size at a time: the file's text is never held whole. */
#define CSV_BUF (1u << 16)
/* Guards against a runaway quoted field eating the whole file. */
#define CSV_MAX_RECORD ((size_t)1 << 26)
#define CSV_MAX_FIELDS 100000
/* The most of a line of plain text that psi_csv_next_line keeps. */
#define CSV_MAX_LINE ((size_t)1 << 22)

struct ps_csv {
    FILE *f;
    unsigned char *filebuf;
    const unsigned char *p; /* current buffer (filebuf, or the caller's data) */
    size_t pos, len;
    int eof;
    int started; /* a record has been returned (comments are over) */
    const char *skip;
    int lf_lines; /* a bare CR is text, not a line break, for line numbers */
    char *path;
    size_t line; /* line of the next character */

    char *rec; /* the current record's fields, each NUL-terminated */
    size_t rec_len, rec_cap;
    size_t *off, *flen, *fline;
    int nf, fcap;
};

int psi_csv_nfields(const psi_csv_t *c) { return c->nf; }
const char *psi_csv_field(const psi_csv_t *c, int i) { return c->rec + c->off[i]; }
size_t psi_csv_field_len(const psi_csv_t *c, int i) { return c->flen[i]; }
size_t psi_csv_field_line(const psi_csv_t *c, int i) { return c->fline[i]; }

int psi_csv_find(const psi_csv_t *c, const char *name)
{
    for (int i = 0; i < c->nf; i++)
        if (strcmp(psi_csv_field(c, i), name) == 0)
            return i;
    return -1;
}
size_t psi_csv_line(const psi_csv_t *c) { return c->nf ? c->fline[0] : c->line; }

int psi_csv_match_header(const psi_csv_t *c, const char *const *names, const int *optional, size_t n, int *idx,
                         int *missing)
{
    *missing = -1;
    for (size_t k = 0; k < n; k++) {
        idx[k] = psi_csv_find(c, names[k]);
        for (int i = idx[k] + 1; idx[k] >= 0 && i < c->nf; i++)
            if (strcmp(psi_csv_field(c, i), names[k]) == 0)
                return psi_error(PS_E_INPUT, "%s:%zu:%d: duplicate column '%s' (first at column %d)", c->path,
                                 psi_csv_field_line(c, i), i + 1, names[k], idx[k] + 1);
        if (idx[k] < 0 && *missing < 0 && !(optional && optional[k]))
            *missing = (int)k;
    }
    return PS_OK;
}

const char *psi_csv_separator_hint(const psi_csv_t *c)
{
    if (c->nf != 1)
        return "";
    const char *f = psi_csv_field(c, 0);
    if (strchr(f, ';'))
        return " (the header is one column holding ';': the separator must be ',', as in a CSV that Excel writes "
               "in an English locale)";
    if (strchr(f, '\t'))
        return " (the header is one column holding tabs: the separator must be ',')";
    return "";
}

int psi_csv_missing(const psi_csv_t *c, const char *name, const char *what)
{
    return psi_error(PS_E_INPUT, "%s:%zu:1: missing required column '%s' of %s%s", c->path, psi_csv_line(c), name, what,
                     psi_csv_separator_hint(c));
}
const char *psi_csv_path(const psi_csv_t *c) { return c->path; }
void psi_csv_skip_prefix(psi_csv_t *c, const char *prefix) { c->skip = prefix; }
void psi_csv_lf_lines(psi_csv_t *c) { c->lf_lines = 1; }

static int csv_alloc(const char *name, psi_csv_t **out)
{
    psi_csv_t *c = psi_calloc(1, sizeof *c);
    if (!c)
        return PS_E_NOMEM;
    c->path = psi_strdup(name);
    c->rec_cap = 1024;
    c->rec = psi_malloc(c->rec_cap);
    c->fcap = 64;
    c->off = psi_malloc(sizeof *c->off * (size_t)c->fcap);
    c->flen = psi_malloc(sizeof *c->flen * (size_t)c->fcap);
    c->fline = psi_malloc(sizeof *c->fline * (size_t)c->fcap);
    c->line = 1;
    if (!c->path || !c->rec || !c->off || !c->flen || !c->fline) {
        psi_csv_close(c);
        return PS_E_NOMEM;
    }
    *out = c;
    return PS_OK;
}

static void skip_bom(psi_csv_t *c)
{
    if (c->len - c->pos >= 3 && c->p[c->pos] == 0xEF && c->p[c->pos + 1] == 0xBB && c->p[c->pos + 2] == 0xBF)
        c->pos += 3;
}

static int refill(psi_csv_t *c)
{
    if (!c->f || c->eof)
        return 0;
    c->len = fread(c->filebuf, 1, CSV_BUF, c->f);
    c->pos = 0;
    if (c->len == 0) {
        c->eof = 1;
        if (ferror(c->f))
            return psi_error(PS_E_IO, "%s:%zu: read error: %s", c->path, c->line, strerror(errno));
        return 0;
    }
    return 1;
}

int psi_csv_open(const char *path, psi_csv_t **out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return psi_error(PS_E_IO, "%s: cannot open: %s", path, strerror(errno));
    return psi_csv_open_stream(f, path, out);
}

int psi_csv_open_stream(FILE *f, const char *name, psi_csv_t **out)
{
    *out = NULL;
    psi_csv_t *c = NULL;
    int rc = csv_alloc(name, &c);
    if (rc == PS_OK && !(c->filebuf = psi_malloc(CSV_BUF)))
        rc = PS_E_NOMEM;
    if (rc != PS_OK) {
        fclose(f);
        psi_csv_close(c);
        return rc;
    }
    c->f = f;
    c->p = c->filebuf;
    if ((rc = refill(c)) < 0) {
        psi_csv_close(c);
        return rc;
    }
    skip_bom(c);
    *out = c;
    return PS_OK;
}

int psi_csv_open_mem(const void *data, size_t len, const char *name, psi_csv_t **out)
{
    *out = NULL;
    psi_csv_t *c = NULL;
    int rc = csv_alloc(name, &c);
    if (rc != PS_OK)
        return rc;
    c->p = data;
    c->len = len;
    c->eof = 1;
    skip_bom(c);
    *out = c;
    return PS_OK;
}

void psi_csv_close(psi_csv_t *c)
{
    if (!c)
        return;
    if (c->f)
        fclose(c->f);
    free(c->filebuf);
    free(c->path);
    free(c->rec);
    free(c->off);
    free(c->flen);
    free(c->fline);
    free(c);
}

/* Next byte, or -1 at end of file, or -2 after a read error. */
static inline int csv_getc(psi_csv_t *c)
{
    if (c->pos >= c->len) {
        int rc = refill(c);
        if (rc <= 0)
            return rc < 0 ? -2 : -1;
    }
    return c->p[c->pos++];
}

/* Look at the next byte without taking it. */
static inline int csv_peek(psi_csv_t *c)
{
    if (c->pos >= c->len) {
        int rc = refill(c);
        if (rc <= 0)
            return rc < 0 ? -2 : -1;
    }
    return c->p[c->pos];
}

/* Room for n more bytes and a NUL in the record. */
static int reserve(psi_csv_t *c, size_t n)
{
    while (c->rec_len + n + 1 >= c->rec_cap) {
        if (c->rec_cap >= CSV_MAX_RECORD)
            return psi_error(PS_E_INPUT, "%s:%zu:%d: record longer than %zu bytes", c->path, c->fline[0], c->nf,
                             (size_t)CSV_MAX_RECORD);
        char *r = psi_realloc(c->rec, c->rec_cap * 2);
        if (!r)
            return PS_E_NOMEM;
        c->rec = r;
        c->rec_cap *= 2;
    }
    return PS_OK;
}

static int put_byte(psi_csv_t *c, int ch)
{
    int rc = reserve(c, 1);
    if (rc == PS_OK)
        c->rec[c->rec_len++] = (char)ch;
    return rc;
}

static int begin_field(psi_csv_t *c)
{
    if (c->nf == c->fcap) {
        if (c->fcap >= CSV_MAX_FIELDS)
            return psi_error(PS_E_INPUT, "%s:%zu:%d: more than %d fields", c->path, c->line, c->nf, CSV_MAX_FIELDS);
        int cap = c->fcap * 2;
        size_t *o = psi_realloc(c->off, sizeof *o * (size_t)cap);
        if (o)
            c->off = o;
        size_t *l = o ? psi_realloc(c->flen, sizeof *l * (size_t)cap) : NULL;
        if (l)
            c->flen = l;
        size_t *fl = l ? psi_realloc(c->fline, sizeof *fl * (size_t)cap) : NULL;
        if (!fl)
            return PS_E_NOMEM;
        c->fline = fl;
        c->fcap = cap;
    }
    c->off[c->nf] = c->rec_len;
    c->fline[c->nf] = c->line;
    c->nf++;
    return PS_OK;
}

static int end_field(psi_csv_t *c)
{
    int i = c->nf - 1;
    c->flen[i] = c->rec_len - c->off[i];
    return put_byte(c, '\0');
}

/* Skip the rest of a line (a comment or a skipped prefix line). */
static int skip_line(psi_csv_t *c)
{
    for (;;) {
        int ch = csv_getc(c);
        if (ch == -2)
            return PS_E_IO;
        if (ch == -1)
            return PS_OK;
        if (ch == '\n') {
            c->line++;
            return PS_OK;
        }
        if (ch == '\r') {
            if (csv_peek(c) == '\n')
                c->pos++;
            else if (c->lf_lines)
                continue;
            c->line++;
            return PS_OK;
        }
    }
}

/* At the start of a line that begins with prefix[0]: consume the matching
 * part of prefix. Returns 1 when the whole prefix matched, else 0 with the
 * matched bytes already stored in the first field. */
static int match_prefix(psi_csv_t *c, const char *prefix, int *rc)
{
    size_t k = 0;
    while (prefix[k] && csv_peek(c) == (unsigned char)prefix[k]) {
        c->pos++;
        k++;
    }
    if (!prefix[k])
        return 1;
    if ((*rc = begin_field(c)) != PS_OK)
        return 0;
    for (size_t i = 0; i < k && *rc == PS_OK; i++)
        *rc = put_byte(c, prefix[i]);
    return 0;
}

static int nul_error(psi_csv_t *c)
{
    return psi_error(PS_E_INPUT, "%s:%zu:%d: NUL byte in the text (is the file UTF-16?)", c->path, c->line, c->nf);
}

/* Finish an unquoted field whose first bytes may already be stored; stops
 * before the delimiter. */
static int read_unquoted(psi_csv_t *c)
{
    for (;;) {
        /* Fast path: copy plain bytes straight from the buffer. */
        size_t start = c->pos, i = start;
        while (i < c->len) {
            unsigned char ch = c->p[i];
            if (ch == ',' || ch == '\n' || ch == '\r' || ch == '"' || ch == '\0')
                break;
            i++;
        }
        size_t n = i - start;
        if (n) {
            int rc = reserve(c, n);
            if (rc != PS_OK)
                return rc;
            memcpy(c->rec + c->rec_len, c->p + start, n);
            c->rec_len += n;
            c->pos = i;
        }
        int ch = csv_peek(c);
        if (ch == -2)
            return PS_E_IO;
        if (ch == -1 || ch == ',' || ch == '\n' || ch == '\r')
            return PS_OK;
        if (ch == '"')
            return psi_error(PS_E_INPUT, "%s:%zu:%d: quote inside an unquoted field", c->path, c->line, c->nf);
        if (ch == '\0')
            return nul_error(c);
        /* Otherwise the buffer ran out mid-field and was refilled. */
    }
}

static int read_quoted(psi_csv_t *c)
{
    size_t start_line = c->line;
    for (;;) {
        int ch = csv_getc(c);
        if (ch == -2)
            return PS_E_IO;
        if (ch == -1)
            return psi_error(PS_E_INPUT, "%s:%zu:%d: unterminated quoted field", c->path, start_line, c->nf);
        if (ch == '"') {
            if (csv_peek(c) == '"') {
                c->pos++;
            } else {
                int nx = csv_peek(c);
                if (nx == -2)
                    return PS_E_IO;
                if (nx == -1 || nx == ',' || nx == '\n' || nx == '\r')
                    return PS_OK;
                return psi_error(PS_E_INPUT, "%s:%zu:%d: unexpected character after closing quote", c->path, c->line,
                                 c->nf);
            }
        } else if (ch == '\n') {
            c->line++;
        } else if (ch == '\0') {
            return nul_error(c);
        }
        int rc = put_byte(c, ch);
        if (rc != PS_OK)
            return rc;
    }
}

int psi_csv_next(psi_csv_t *c)
{
    int rc;
    c->nf = 0;
    c->rec_len = 0;
    /* Skip blank lines, comments before the first record and prefix lines. */
    for (;;) {
        int ch = csv_peek(c);
        if (ch == -2)
            return PS_E_IO;
        if (ch == -1)
            return 0;
        if (ch == '\n' || ch == '\r') {
            if ((rc = skip_line(c)) != PS_OK)
                return rc;
            continue;
        }
        if (ch == '#' && !c->started) {
            if ((rc = skip_line(c)) != PS_OK)
                return rc;
            continue;
        }
        if (c->skip && ch == (unsigned char)c->skip[0]) {
            rc = PS_OK;
            if (match_prefix(c, c->skip, &rc)) {
                if ((rc = skip_line(c)) != PS_OK)
                    return rc;
                continue;
            }
            if (rc != PS_OK)
                return rc;
        }
        break;
    }
    c->started = 1;
    /* Fields; the first may already be open (a partial prefix match). */
    int open = c->nf == 1;
    for (;;) {
        if (!open && (rc = begin_field(c)) != PS_OK)
            return rc;
        int ch = csv_peek(c);
        if (ch == '"' && !open) {
            c->pos++;
            rc = read_quoted(c);
        } else {
            rc = read_unquoted(c);
        }
        open = 0;
        if (rc != PS_OK || (rc = end_field(c)) != PS_OK)
            return rc;
        ch = csv_getc(c);
        if (ch == ',')
            continue;
        if (ch == '\r') {
            if (csv_peek(c) == '\n') {
                c->pos++;
                c->line++;
            } else if (!c->lf_lines) {
                c->line++;
            }
        } else if (ch == '\n') {
            c->line++;
        } else if (ch == -2) {
            return PS_E_IO;
        }
        return 1;
    }
}

int psi_csv_peek_byte(psi_csv_t *c)
{
    int ch = csv_peek(c);
    return ch == -2 ? PS_E_IO : ch;
}

int psi_csv_next_line(psi_csv_t *c)
{
    c->nf = 0;
    c->rec_len = 0;
    int ch = csv_peek(c);
    if (ch == -2)
        return PS_E_IO;
    if (ch == -1)
        return 0;
    int rc = begin_field(c);
    for (;;) {
        if (rc != PS_OK)
            return rc;
        ch = csv_getc(c);
        if (ch == -2)
            return PS_E_IO;
        if (ch == -1)
            break;
        if (ch == '\n') {
            c->line++;
            break;
        }
        if (ch == '\r' && csv_peek(c) == '\n') {
            c->pos++;
            c->line++;
            break;
        }
        if (ch == '\r' && !c->lf_lines) {
            c->line++;
            break;
        }
        if (ch == '\0')
            ch = ' '; /* a line of text, not a field: NUL is shown as a space */
        /* A runaway line (binary data) is cut, not stored whole; a header
         * of every raw metric (tens of KB) fits. */
        if (c->rec_len < CSV_MAX_LINE)
            rc = put_byte(c, ch);
    }
    if (rc == PS_OK)
        rc = end_field(c);
    return rc == PS_OK ? 1 : rc;
}

void psi_csv_put_field(FILE *f, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void ps_csv_put_field(FILE *f, const char *s) { psi_csv_put_field(f, s); }

/* The reader of pairsight_core.h (ps_csv_t is psi_csv_t). */
int ps_csv_open(const char *path, ps_csv_t **out)
{
    if (!path || !out)
        return psi_error(PS_E_ARG, "ps_csv_open: NULL argument");
    return psi_csv_open(path, out);
}
int ps_csv_next(ps_csv_t *c) { return c ? psi_csv_next(c) : psi_error(PS_E_ARG, "ps_csv_next: NULL reader"); }
int ps_csv_nfields(const ps_csv_t *c) { return c ? psi_csv_nfields(c) : 0; }
const char *ps_csv_field(const ps_csv_t *c, int i)
{
    return c && i >= 0 && i < psi_csv_nfields(c) ? psi_csv_field(c, i) : "";
}
int ps_csv_find(const ps_csv_t *c, const char *name) { return c && name ? psi_csv_find(c, name) : -1; }
size_t ps_csv_line(const ps_csv_t *c) { return c ? psi_csv_line(c) : 0; }
void ps_csv_close(ps_csv_t *c) { psi_csv_close(c); }
