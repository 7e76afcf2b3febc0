/* cJSON's parse, with its two failures told apart (see common.h). */
#include "common/common.h"

#include <cjson/cJSON.h>
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
