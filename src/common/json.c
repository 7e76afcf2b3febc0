/* The library's JSON: cJSON's parse with its two failures told apart, and
 * the one writer of every JSON text pairsight prints (see common.h). */
#include "common/common.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A parser of RFC 8259 JSON that allocates nothing, at least as strict as
 * cJSON's (nesting at most CJSON_NESTING_LIMIT, numbers of at most 63
 * characters, \u escapes that pair their surrogates), so that a text it
 * accepts and cJSON refuses ran cJSON out of memory. */
typedef struct {
    const char *p, *end;
} scan_t;

static int s_value(scan_t *s, int depth);

static void s_space(scan_t *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static int s_lit(scan_t *s, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
        return 0;
    s->p += n;
    return 1;
}

static int s_hex4(scan_t *s, unsigned *u)
{
    *u = 0;
    for (int i = 0; i < 4; i++, s->p++) {
        if (s->p >= s->end)
            return 0;
        char c = *s->p;
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return 0;
        *u = *u * 16 + (unsigned)d;
    }
    return 1;
}

static int s_string(scan_t *s)
{
    if (s->p >= s->end || *s->p++ != '"')
        return 0;
    while (s->p < s->end) {
        unsigned char c = (unsigned char)*s->p++;
        if (c == '"')
            return 1;
        if (c < 0x20)
            return 0;
        if (c != '\\')
            continue;
        if (s->p >= s->end)
            return 0;
        c = (unsigned char)*s->p++;
        if (c == 'u') {
            unsigned u, lo;
            if (!s_hex4(s, &u) || (u >= 0xDC00 && u <= 0xDFFF))
                return 0;
            if (u >= 0xD800 && u <= 0xDBFF && (!s_lit(s, "\\u") || !s_hex4(s, &lo) || lo < 0xDC00 || lo > 0xDFFF))
                return 0;
        } else if (!strchr("\"\\/bfnrt", c) || c == '\0') {
            return 0;
        }
    }
    return 0;
}

static int s_digits(scan_t *s)
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
    else if (!s_digits(s))
        return 0;
    if (s->p < s->end && *s->p == '.' && (s->p++, !s_digits(s)))
        return 0;
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
        if (!s_digits(s))
            return 0;
    }
    return s->p - b <= 63;
}

/* An array (close ']') or an object (close '}') after its opening. */
static int s_items(scan_t *s, int depth, char close)
{
    s_space(s);
    if (s->p < s->end && *s->p == close)
        return s->p++, 1;
    for (;;) {
        if (close == '}') {
            if (!s_string(s))
                return 0;
            s_space(s);
            if (s->p >= s->end || *s->p++ != ':')
                return 0;
        }
        if (!s_value(s, depth + 1))
            return 0;
        s_space(s);
        if (s->p >= s->end)
            return 0;
        char c = *s->p++;
        if (c == close)
            return 1;
        if (c != ',')
            return 0;
        s_space(s);
    }
}

static int s_value(scan_t *s, int depth)
{
    if (depth > CJSON_NESTING_LIMIT)
        return 0;
    s_space(s);
    if (s->p >= s->end)
        return 0;
    switch (*s->p) {
    case '"': return s_string(s);
    case '[': return s->p++, s_items(s, depth, ']');
    case '{': return s->p++, s_items(s, depth, '}');
    case 't': return s_lit(s, "true");
    case 'f': return s_lit(s, "false");
    case 'n': return s_lit(s, "null");
    default: return s_number(s);
    }
}

int psi_json_parse(const char *text, size_t len, const char *what, cJSON **out)
{
    const char *end = NULL;
    *out = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (*out)
        return PS_OK;
    scan_t s = {text, text + len};
    if (s_value(&s, 0))
        return psi_error(PS_E_NOMEM, "%s: out of memory parsing its JSON", what);
    return psi_error(PS_E_INPUT, "%s is not valid JSON (near byte %ld)", what,
                     (long)(end && end >= text ? end - text : 0));
}

/* ---- writing ---- */

/* "%.17g" of a v with 1 <= |v| < 2^53 that is not a whole number, exactly
 * as glibc prints it (digits from exact integer arithmetic, rounded to
 * nearest, ties to even; trailing zeros dropped), at a fifth of its cost:
 * the whole part is a uint64, the fraction f x 2^52 an integer below 2^52
 * (v's last bit is at 2^-52 or above), so each ten-fold of the fraction is
 * exact in a uint64. buf holds at least 32 bytes. */
static void number_17g(double v, char *buf)
{
    double a = fabs(v), w = floor(a);
    uint64_t ip = (uint64_t)w, fr = (uint64_t)ldexp(a - w, 52), half = (uint64_t)1 << 51, mask = (half << 1) - 1;
    char digits[40];
    int ni = 0, nd = 0;
    for (uint64_t x = ip; x; x /= 10)
        digits[ni++] = (char)('0' + x % 10);
    for (int i = 0; i < ni / 2; i++) {
        char t = digits[i];
        digits[i] = digits[ni - 1 - i];
        digits[ni - 1 - i] = t;
    }
    for (nd = ni; nd < 17; nd++) {
        fr *= 10;
        digits[nd] = (char)('0' + (fr >> 52));
        fr &= mask;
    }
    int up = fr > half || (fr == half && (digits[nd - 1] - '0') % 2 == 1);
    for (int i = nd - 1; up && i >= 0; i--) {
        up = digits[i] == '9';
        digits[i] = up ? '0' : (char)(digits[i] + 1);
    }
    char *o = buf;
    if (v < 0)
        *o++ = '-';
    if (up) { /* 99.9... rounded up to 100.0...: one more whole digit */
        *o++ = '1';
    }
    memcpy(o, digits, (size_t)ni);
    o += ni;
    int last = nd;
    while (last > ni && digits[last - 1] == '0')
        last--;
    if (last > ni) {
        *o++ = '.';
        memcpy(o, digits + ni, (size_t)(last - ni));
        o += last - ni;
    }
    *o = 0;
}

int ps_json_number(double v, char *buf, size_t n)
{
    if (!buf || n < 32)
        return psi_error(PS_E_ARG, "ps_json_number: a buffer of at least 32 bytes is needed");
    if (!isfinite(v)) {
        snprintf(buf, n, "null");
    } else if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(buf, n, "%.0f", v);
    } else {
        /* 17 significant digits always read back as the same double. The
         * shortest of 15-17 digits that does would read better (0.3 for
         * 0.29999999999999999), but costs 2.8x the time here (800 against
         * 289 ns a number, glibc's printf and strtod), and a 1,000-query
         * reply of `serve` writes 4,000 of them. */
        if (fabs(v) >= 1 && fabs(v) < 9007199254740992.0)
            number_17g(v, buf);
        else
            snprintf(buf, n, "%.17g", v);
    }
    return PS_OK;
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

static void put_string(FILE *f, const char *s)
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

static void indent(FILE *f, int pretty, int depth)
{
    if (!pretty)
        return;
    fputc('\n', f);
    for (int i = 0; i < depth; i++)
        fputs("  ", f);
}

static void put_value(FILE *f, const cJSON *v, int pretty, int depth)
{
    char num[40];
    if (!v || cJSON_IsNull(v) || cJSON_IsInvalid(v)) {
        fputs("null", f);
    } else if (cJSON_IsBool(v)) {
        fputs(cJSON_IsTrue(v) ? "true" : "false", f);
    } else if (cJSON_IsNumber(v)) {
        ps_json_number(v->valuedouble, num, sizeof num);
        fputs(num, f);
    } else if (cJSON_IsString(v)) {
        put_string(f, v->valuestring);
    } else if (cJSON_IsRaw(v)) {
        fputs(v->valuestring, f);
    } else {
        int obj = cJSON_IsObject(v);
        fputc(obj ? '{' : '[', f);
        for (const cJSON *c = v->child; c; c = c->next) {
            if (c != v->child)
                fputc(',', f);
            indent(f, pretty, depth + 1);
            if (obj) {
                put_string(f, c->string);
                fputs(pretty ? ": " : ":", f);
            }
            put_value(f, c, pretty, depth + 1);
        }
        if (v->child)
            indent(f, pretty, depth);
        fputc(obj ? '}' : ']', f);
    }
}

int ps_json_write(const struct cJSON *v, FILE *f)
{
    if (!f)
        return psi_error(PS_E_ARG, "ps_json_write: NULL stream");
    put_value(f, v, 0, 0);
    return ferror(f) ? psi_error(PS_E_IO, "writing JSON failed") : PS_OK;
}

char *psi_json_print(const cJSON *v, int pretty)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    if (!f) {
        psi_error(PS_E_NOMEM, "out of memory writing JSON");
        return NULL;
    }
    put_value(f, v, pretty, 0);
    if (pretty)
        fputc('\n', f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(text);
        psi_error(PS_E_NOMEM, "out of memory writing JSON");
        return NULL;
    }
    return text;
}
