/* The library's JSON as cJSON trees: cJSON's parse with its two failures
 * told apart (by the one reader, sjson.c), and the printer of trees (numbers
 * and strings written by sjson.c's writers; see common.h). */
#include "common/common.h"

#include <cjson/cJSON.h>
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
