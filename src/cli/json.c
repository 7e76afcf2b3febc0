/* The JSON output of every command (opt.h): compact, written by the
 * library's one JSON writer (ps_json_write: numbers that round-trip). */
#include "cli/opt.h"

#include "pairsight.h"

#include <cjson/cJSON.h>
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

void cli_json_write(const cJSON *v, FILE *f) { ps_json_write(v, f); }

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
