/* The JSON output of every command (opt.h): compact, numbers that
 * round-trip. */
#include "cli/opt.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
