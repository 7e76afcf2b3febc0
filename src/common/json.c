/* The library's JSON: cJSON's parse with its two failures told apart (by
 * the one reader, sjson.c), and the one writer of every JSON text
 * pairsight prints (see common.h). */
#include "common/common.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* cJSON returns NULL both for a text that is not JSON and for an
 * allocation that failed: the one reader (sjson.c) tells them apart, with
 * cJSON's limits (nesting, numbers of at most 63 characters), so that a
 * text it accepts and cJSON refuses ran cJSON out of memory. */
int psi_json_parse(const char *text, size_t len, const char *what, cJSON **out)
{
    *out = cJSON_ParseWithLengthOpts(text, len, NULL, 0);
    if (*out)
        return PS_OK;
    ps_json_doc_t d = {.max_depth = CJSON_NESTING_LIMIT};
    int rc = ps_json_parse(&d, (char *)text, len); /* only ps_json_str writes into the text */
    for (int t = 0; rc == PS_OK && t < d.n; t++)
        if (d.tok[t].type == PS_JSON_NUMBER && d.tok[t].end - d.tok[t].start > 63) {
            rc = PS_E_INPUT;
            snprintf(d.err, sizeof d.err, "number longer than 63 characters near byte %d", d.tok[t].start);
        }
    ps_json_doc_free(&d);
    if (rc == PS_OK || rc == PS_E_NOMEM)
        return psi_error(PS_E_NOMEM, "%s: out of memory parsing its JSON", what);
    return psi_error(PS_E_INPUT, "%s is not valid JSON (%s)", what, d.err);
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

static void put_file(void *f, const char *p, size_t n) { fwrite(p, 1, n, f); }

static void put_string(FILE *f, const char *s) { psi_json_escape(s, put_file, f); }

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
