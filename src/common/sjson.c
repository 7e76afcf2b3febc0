/* The one JSON reader (include/pairsight_core.h, "the one JSON reader"): a
 * strict RFC 8259 tokenizer into a flat token array; and what every JSON
 * text of pairsight is written with: numbers (ps_json_number), strings
 * (psi_json_escape) and the append-only buffer of the service's replies.
 * json.c's cJSON printer calls these, never the other way round. */
#include "common/common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    ps_json_doc_t *d;
    const char *p, *b, *end;
    int oom; /* the token array could not grow */
} scan_t;

static int s_value(scan_t *s, int depth);

static int fail(scan_t *s, const char *why)
{
    if (!s->d->err[0]) {
        s->d->err_at = (size_t)(s->p - s->b);
        snprintf(s->d->err, sizeof s->d->err, "%s near byte %ld", why, (long)(s->p - s->b));
    }
    return -1;
}

/* The token array, twice as large; -1 when it cannot grow. */
static int grow(scan_t *s)
{
    ps_json_doc_t *d = s->d;
    if (d->cap >= (1 << 28))
        return fail(s, "too many values");
    int cap = d->cap ? 2 * d->cap : 256;
    ps_json_tok_t *t = psi_realloc(d->tok, (size_t)cap * sizeof *t);
    if (!t) {
        s->oom = 1;
        d->err_at = (size_t)(s->p - s->b);
        snprintf(d->err, sizeof d->err, "out of memory");
        return -1;
    }
    d->tok = t;
    d->cap = cap;
    return 0;
}

/* A new token (inline: one for each value and key of a request). */
static inline int push(scan_t *s, int type, const char *start)
{
    ps_json_doc_t *d = s->d;
    if (d->n == d->cap && grow(s) != 0)
        return -1;
    d->tok[d->n] = (ps_json_tok_t){(unsigned char)type, 0, (int)(start - s->b), (int)(start - s->b), 0, d->n + 1};
    return d->n++;
}

static void s_space(scan_t *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static int hex4(const char *p, const char *end, unsigned *u)
{
    *u = 0;
    for (int i = 0; i < 4; i++) {
        if (p + i >= end)
            return 0;
        char c = p[i];
        int v = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (v < 0)
            return 0;
        *u = *u * 16 + (unsigned)v;
    }
    return 1;
}

/* One escape after the backslash at s->p; 0 when malformed. */
static int s_escape(scan_t *s)
{
    char c = *s->p++;
    if (c != 'u')
        return c && strchr("\"\\/bfnrt", c) != NULL;
    unsigned u, lo;
    if (!hex4(s->p, s->end, &u) || (u >= 0xDC00 && u <= 0xDFFF))
        return 0;
    s->p += 4;
    if (u < 0xD800 || u > 0xDBFF)
        return 1;
    if (s->end - s->p < 6 || s->p[0] != '\\' || s->p[1] != 'u' || !hex4(s->p + 2, s->end, &lo) || lo < 0xDC00 ||
        lo > 0xDFFF)
        return 0;
    s->p += 6;
    return 1;
}

/* RFC 3629: no overlong forms, no surrogates, at most U+10FFFF. */
int psi_utf8_len(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    int n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if ((size_t)n > avail)
        return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F) || (c == 0xF0 && p[1] < 0x90) ||
        (c == 0xF4 && p[1] > 0x8F))
        return 0;
    return n;
}

static int s_string(scan_t *s)
{
    int t = push(s, PS_JSON_STRING, s->p + 1);
    if (t < 0)
        return -1;
    for (s->p++; s->p < s->end;) {
        const char *p = s->p; /* the run of bytes that need no check, in a register */
        while (p < s->end && (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x80 && *p != '"' && *p != '\\')
            p++;
        s->p = p;
        if (p == s->end)
            break;
        unsigned char c = (unsigned char)*s->p++;
        if (c == '"') {
            s->d->tok[t].end = (int)(s->p - 1 - s->b);
            return 0;
        }
        if (c < 0x20)
            return fail(s, "control character in a string");
        if (c >= 0x80) {
            int n = psi_utf8_len((const unsigned char *)s->p - 1, (size_t)(s->end - s->p + 1));
            if (!n)
                return fail(s, "invalid UTF-8 in a string");
            s->p += n - 1;
        }
        if (c == '\\') {
            s->d->tok[t].escaped = 1;
            if (s->p >= s->end || !s_escape(s))
                return fail(s, "bad escape");
        }
    }
    return fail(s, "unterminated string");
}

static int digits(scan_t *s)
{
    const char *b = s->p;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
        s->p++;
    return s->p > b;
}

static int s_number(scan_t *s)
{
    const char *b = s->p;
    if (s->p < s->end && *s->p == '-')
        s->p++;
    if (s->p < s->end && *s->p == '0')
        s->p++;
    else if (!digits(s))
        return fail(s, "not a JSON value");
    if (s->p < s->end && *s->p == '.' && (s->p++, !digits(s)))
        return fail(s, "bad number");
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
        if (!digits(s))
            return fail(s, "bad number");
    }
    if (s->p - b > 64)
        return fail(s, "number longer than 64 characters");
    int t = push(s, PS_JSON_NUMBER, b);
    if (t < 0)
        return -1;
    s->d->tok[t].end = (int)(s->p - s->b);
    return 0;
}

static int s_lit(scan_t *s, const char *w, int type)
{
    size_t n = strlen(w);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
        return fail(s, "not a JSON value");
    int t = push(s, type, s->p);
    s->p += n;
    if (t >= 0)
        s->d->tok[t].end = (int)(s->p - s->b);
    return t < 0 ? -1 : 0;
}

/* The members or elements of container t, after its opening. */
static int s_items(scan_t *s, int t, int depth, char close)
{
    s_space(s);
    if (s->p < s->end && *s->p == close)
        return s->p++, 0;
    for (;;) {
        if (close == '}') {
            s_space(s);
            if (s->p >= s->end || *s->p != '"' || s_string(s) != 0)
                return fail(s, "expected a member name");
            s_space(s);
            if (s->p >= s->end || *s->p++ != ':')
                return fail(s, "expected ':'");
        }
        if (s_value(s, depth + 1) != 0)
            return -1;
        s->d->tok[t].size++;
        s_space(s);
        if (s->p >= s->end)
            return fail(s, "unterminated container");
        char c = *s->p++;
        if (c == close)
            return 0;
        if (c != ',')
            return fail(s, "expected ',' or a close");
    }
}

static int s_value(scan_t *s, int depth)
{
    s_space(s);
    if (s->p >= s->end)
        return fail(s, "unexpected end");
    char c = *s->p;
    if (c == '[' || c == '{') {
        if (depth >= s->d->max_depth) {
            s->d->err_at = (size_t)(s->p - s->b);
            snprintf(s->d->err, sizeof s->d->err, "nested deeper than %d", s->d->max_depth);
            return -1;
        }
        int t = push(s, c == '[' ? PS_JSON_ARRAY : PS_JSON_OBJECT, s->p);
        if (t < 0)
            return -1;
        s->p++;
        if (s_items(s, t, depth, c == '[' ? ']' : '}') != 0)
            return -1;
        s->d->tok[t].end = (int)(s->p - s->b);
        s->d->tok[t].next = s->d->n;
        return 0;
    }
    switch (c) {
    case '"': return s_string(s);
    case 't': return s_lit(s, "true", PS_JSON_TRUE);
    case 'f': return s_lit(s, "false", PS_JSON_FALSE);
    case 'n': return s_lit(s, "null", PS_JSON_NULL);
    default: return s_number(s);
    }
}

int ps_json_parse(ps_json_doc_t *d, char *text, size_t len)
{
    d->text = text;
    d->len = len;
    d->n = 0;
    d->end = d->err_at = 0;
    d->err[0] = 0;
    if (d->max_depth <= 0)
        d->max_depth = 64;
    if (len > (size_t)1 << 30) {
        snprintf(d->err, sizeof d->err, "text longer than 1 GiB");
        return PS_E_INPUT;
    }
    scan_t s = {d, text, text, text + len, 0};
    if (s_value(&s, 0) != 0)
        return s.oom ? PS_E_NOMEM : PS_E_INPUT;
    s_space(&s);
    d->end = (size_t)(s.p - s.b);
    if (s.p != s.end && !d->allow_trailing)
        return fail(&s, "text after the JSON value");
    return PS_OK;
}

void ps_json_doc_free(ps_json_doc_t *d)
{
    if (!d)
        return;
    free(d->tok);
    d->tok = NULL;
    d->n = d->cap = 0;
}

int ps_json_child(const ps_json_doc_t *d, int t) { return t >= 0 && t < d->n && d->tok[t].size > 0 ? t + 1 : -1; }

int ps_json_next(const ps_json_doc_t *d, int t, int is_key)
{
    int after = is_key ? d->tok[t + 1].next : d->tok[t].next;
    /* the parent's end is where the siblings stop */
    return after;
}

int ps_json_get(ps_json_doc_t *d, int obj, const char *key, int nocase)
{
    if (obj < 0 || obj >= d->n || d->tok[obj].type != PS_JSON_OBJECT)
        return -1;
    int k = obj + 1, found = -1;
    for (int i = 0; i < d->tok[obj].size; i++) { /* the last of duplicate keys, as Go's decoder */
        const char *name = ps_json_str(d, k);
        if (nocase ? strcasecmp(name, key) == 0 : strcmp(name, key) == 0)
            found = k + 1;
        k = d->tok[k + 1].next;
    }
    return found;
}

int psi_json_load(const char *text, size_t len, const char *what, ps_json_doc_t *d)
{
    char *copy = psi_malloc(len + 1);
    if (!copy)
        return psi_error(PS_E_NOMEM, "%s: out of memory reading its JSON", what);
    memcpy(copy, text, len);
    copy[len] = '\0';
    if (d->max_depth <= 0)
        d->max_depth = 1000;
    int rc = ps_json_parse(d, copy, len);
    d->text = copy;
    if (rc == PS_E_NOMEM)
        return psi_error(PS_E_NOMEM, "%s: out of memory parsing its JSON", what);
    if (rc != PS_OK)
        return psi_error(PS_E_INPUT, "%s is not valid JSON (%s)", what, d->err);
    return PS_OK;
}

void psi_json_unload(ps_json_doc_t *d)
{
    free(d->text);
    d->text = NULL;
    ps_json_doc_free(d);
}

const char *psi_json_get_str(ps_json_doc_t *d, int obj, const char *key)
{
    int t = ps_json_get(d, obj, key, 0);
    return t >= 0 && d->tok[t].type == PS_JSON_STRING ? ps_json_str(d, t) : NULL;
}

int psi_json_get_num(ps_json_doc_t *d, int obj, const char *key, double *out)
{
    return ps_json_num(d, ps_json_get(d, obj, key, 0), out) == PS_OK ? 0 : -1;
}

/* Appends code point u as UTF-8 at *w. */
static void put_utf8(char **w, unsigned u)
{
    char *o = *w;
    if (u < 0x80) {
        *o++ = (char)u;
    } else if (u < 0x800) {
        *o++ = (char)(0xC0 | u >> 6);
        *o++ = (char)(0x80 | (u & 0x3F));
    } else if (u < 0x10000) {
        *o++ = (char)(0xE0 | u >> 12);
        *o++ = (char)(0x80 | (u >> 6 & 0x3F));
        *o++ = (char)(0x80 | (u & 0x3F));
    } else {
        *o++ = (char)(0xF0 | u >> 18);
        *o++ = (char)(0x80 | (u >> 12 & 0x3F));
        *o++ = (char)(0x80 | (u >> 6 & 0x3F));
        *o++ = (char)(0x80 | (u & 0x3F));
    }
    *w = o;
}

/* Unescapes r..end into w (never longer than the escaped text); the
 * tokenizer checked every escape. \u0000 becomes U+FFFD: a C string cannot
 * hold a NUL. */
static char *unescape(char *w, const char *r, const char *end)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    while (r < end) {
        if (*r != '\\') {
            *w++ = *r++;
            continue;
        }
        r++;
        if (*r != 'u') {
            *w++ = to[strchr(from, *r++) - from];
            continue;
        }
        unsigned u, lo;
        hex4(r + 1, end, &u);
        r += 5;
        if (u >= 0xD800 && u <= 0xDBFF) {
            hex4(r + 2, end, &lo);
            u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            r += 6;
        }
        put_utf8(&w, u ? u : 0xFFFD);
    }
    return w;
}

const char *ps_json_str(ps_json_doc_t *d, int t)
{
    ps_json_tok_t *k = &d->tok[t];
    char *b = d->text + k->start;
    if (k->escaped) {
        char *w = unescape(b, b, d->text + k->end);
        k->end = (int)(w - d->text);
        k->escaped = 0;
    }
    d->text[k->end] = '\0';
    return b;
}

int ps_json_num(const ps_json_doc_t *d, int t, double *out)
{
    if (t < 0 || t >= d->n || d->tok[t].type != PS_JSON_NUMBER)
        return PS_E_INPUT;
    char buf[72];
    int n = d->tok[t].end - d->tok[t].start;
    memcpy(buf, d->text + d->tok[t].start, (size_t)n);
    buf[n] = 0;
    double v = strtod(buf, NULL);
    if (!isfinite(v))
        return PS_E_INPUT;
    *out = v;
    return PS_OK;
}

int ps_json_int(const ps_json_doc_t *d, int t, long lo, long hi, int *out)
{
    if (t < 0 || t >= d->n || d->tok[t].type != PS_JSON_NUMBER)
        return PS_E_INPUT;
    /* The tokenizer checked the number's form: up to 18 digits are read
     * here exactly, as strtol would; a fraction or an exponent is no
     * integer; longer numbers go to strtol for its overflow check. */
    const char *p = d->text + d->tok[t].start, *end = d->text + d->tok[t].end;
    int neg = *p == '-';
    if (end - p - neg <= 18) {
        long v = 0;
        for (p += neg; p < end; p++)
            if (*p >= '0' && *p <= '9')
                v = v * 10 + (*p - '0');
            else
                return PS_E_INPUT;
        v = neg ? -v : v;
        if (v < lo || v > hi)
            return PS_E_INPUT;
        *out = (int)v;
        return PS_OK;
    }
    char buf[72], *e;
    int n = d->tok[t].end - d->tok[t].start;
    memcpy(buf, d->text + d->tok[t].start, (size_t)n);
    buf[n] = 0;
    errno = 0;
    long v = strtol(buf, &e, 10);
    if (*e || errno || v < lo || v > hi)
        return PS_E_INPUT;
    *out = (int)v;
    return PS_OK;
}

const char *ps_json_type_name(int type)
{
    static const char *const names[] = {"null", "false", "true", "a number", "a string", "an array", "an object"};
    return type >= 0 && type <= PS_JSON_OBJECT ? names[type] : "?";
}

/* Room for n more bytes and a NUL in b; -1 when it cannot grow (b->oom). */
static int buf_room(ps_buf_t *b, size_t n)
{
    if (b->oom)
        return -1;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = psi_realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return -1;
        }
        b->s = p;
        b->cap = cap;
    }
    return 0;
}

void ps_buf_putn(ps_buf_t *b, const char *s, size_t n)
{
    if (buf_room(b, n) != 0)
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void ps_buf_puts(ps_buf_t *b, const char *s) { ps_buf_putn(b, s, strlen(s)); }

void ps_buf_printf(ps_buf_t *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        ps_buf_putn(b, small, (size_t)n);
        return;
    }
    char *big = psi_malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    ps_buf_putn(b, big, (size_t)n);
    free(big);
}

void psi_json_escape(const char *s, void (*put)(void *sink, const char *p, size_t n), void *sink)
{
    put(sink, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        const unsigned char *run = p;
        int n;
        while (*p && *p != '"' && *p != '\\' && *p >= 0x20 && (n = psi_utf8_len(p, 4)) > 0)
            p += n;
        put(sink, (const char *)run, (size_t)(p - run));
        if (!*p)
            break;
        char esc[8];
        if (*p == '"' || *p == '\\' || *p == '\n' || *p == '\t')
            snprintf(esc, sizeof esc, "\\%c", *p == '\n' ? 'n' : *p == '\t' ? 't' : *p);
        else if (*p < 0x20)
            snprintf(esc, sizeof esc, "\\u%04x", *p);
        else
            snprintf(esc, sizeof esc, "\\ufffd"); /* a byte that is not UTF-8: the replacement character */
        put(sink, esc, strlen(esc));
        p++;
    }
    put(sink, "\"", 1);
}

static void put_buf(void *b, const char *p, size_t n) { ps_buf_putn(b, p, n); }

void ps_buf_json_str(ps_buf_t *b, const char *s) { psi_json_escape(s, put_buf, b); }

/* ---- numbers ---- */

/* "%.17g" of a v with 1 <= |v| < 2^53 that is not a whole number (w:
 * |v|'s whole part), exactly as glibc prints it (digits from exact integer
 * arithmetic, rounded to nearest, ties to even; trailing zeros dropped), at
 * a tenth of its cost: the whole part is a uint64, the fraction f x 2^52 an
 * integer below 2^52 (v's last bit is at 2^-52 or above), so each hundred-
 * fold of the fraction is exact in a uint64. The text is made in t and
 * copied as one block of 32 bytes: buf holds at least 32. @return the
 * length. */
static size_t number_17g(double v, double w, char *buf)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    uint64_t ip = (uint64_t)w, fr = (uint64_t)((fabs(v) - w) * 4503599627370496.0 /* 2^52, exact */),
             half = (uint64_t)1 << 51, mask = (half << 1) - 1, p10 = 10;
    char t[64], *d = t + 2; /* t[0], t[1]: room for a sign and a carry's 1 */
    int ni = 1;
    while (ni < 16 && ip >= p10)
        ni++, p10 *= 10;
    uint64_t x = ip;
    int i = ni;
    for (; i >= 2; i -= 2, x /= 100)
        memcpy(d + i - 2, pairs + 2 * (x % 100), 2);
    if (i)
        d[0] = (char)('0' + x);
    d[ni] = '.';
    int end = ni + 1; /* the fraction's digits: 17 significant in all */
    for (; end + 2 <= 18; end += 2) {
        fr *= 100;
        memcpy(d + end, pairs + 2 * (fr >> 52), 2);
        fr &= mask;
    }
    if (end < 18) {
        fr *= 10;
        d[end++] = (char)('0' + (fr >> 52));
        fr &= mask;
    }
    int up = fr > half || (fr == half && (d[end - 1] - '0') % 2 == 1);
    for (i = end - 1; up && i >= 0; i--) {
        if (i == ni)
            continue; /* the point */
        up = d[i] == '9';
        d[i] = up ? '0' : (char)(d[i] + 1);
    }
    if (up) { /* 99.9... rounded up to 100.0...: one more whole digit */
        *--d = '1';
        ni++, end++;
    }
    while (end > ni + 1 && d[end - 1] == '0')
        end--;
    if (end == ni + 1)
        end = ni; /* no fraction left: no point */
    if (v < 0)
        *--d = '-', end++;
    memcpy(buf, d, 32);
    buf[end] = 0;
    return (size_t)end;
}

/* ps_json_number's text into buf[n] (n >= 32). @return its length. */
static size_t number_text(double v, char *buf, size_t n)
{
    double a = fabs(v);
    if (a < 9007199254740992.0) { /* not NaN: its whole part as a uint64, not a call of floor */
        double w = (double)(uint64_t)a;
        if (w == a)
            return (size_t)snprintf(buf, n, "%.0f", v);
        /* 17 significant digits always read back as the same double. The
         * shortest of 15-17 digits that does would read better (0.3 for
         * 0.29999999999999999), but costs 2.8x the time here (800 against
         * 289 ns a number, glibc's printf and strtod), and a 1,000-query
         * reply of `serve` writes 4,000 of them. */
        if (a >= 1)
            return number_17g(v, w, buf);
    }
    if (!isfinite(v))
        return (size_t)snprintf(buf, n, "null");
    return (size_t)snprintf(buf, n, "%.17g", v);
}

int ps_json_number(double v, char *buf, size_t n)
{
    if (!buf || n < 32)
        return psi_error(PS_E_ARG, "ps_json_number: a buffer of at least 32 bytes is needed");
    number_text(v, buf, n);
    return PS_OK;
}

void ps_buf_json_num(ps_buf_t *b, double v)
{
    if (buf_room(b, 40) == 0)
        b->len += number_text(v, b->s + b->len, 40);
}

/* Written in place, the room made once: a reply of 1,000 queries of
 * `serve` writes 4,000 numbers. */
void ps_buf_json_nums(ps_buf_t *b, const double *v, size_t n)
{
    if (n > ((size_t)1 << 40) / 41) {
        b->oom = 1;
        return;
    }
    if (n == 0 || buf_room(b, 41 * n) != 0)
        return;
    char *o = b->s + b->len;
    for (size_t i = 0; i < n; i++) {
        if (i)
            *o++ = ',';
        o += number_text(v[i], o, 40);
    }
    b->len = (size_t)(o - b->s);
}

void ps_buf_free(ps_buf_t *b)
{
    if (!b)
        return;
    free(b->s);
    memset(b, 0, sizeof *b);
}
