/*
 * The cluster of `colocate place` (ps_coloc_cluster_parse): its jobs, GPUs
 * and allowed shares as the command line writes them ("a,b*3,c",
 * "4:v100,4:p100", "100,50"), checked against the workloads table, for the
 * CLI and the colocate_place operation (Python, POST /v1/colocate/place)
 * alike; and a placement of it as JSON (ps_coloc_placement_json).
 */
#include "colocate/colocate.h"

#include "common/common.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 64 /* jobs, GPUs */

static const char *flag(const ps_coloc_cluster_spec_t *s) { return s->flag ? s->flag : ""; }

/* A whole number in lo..hi written plainly ("3", "+3"; not "3.0", " 3",
 * "0x3"): 0 and *out, or -1. */
static int plain_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!(*s >= '0' && *s <= '9') && !(*s == '+' && s[1] >= '0' && s[1] <= '9'))
        return -1;
    if (end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* "100,50" into c->shares: up to 4 whole numbers in 1..100. */
static int split_shares(const ps_coloc_cluster_spec_t *s, ps_coloc_cluster_t *c)
{
    c->n_shares = 0;
    for (const char *t = s->shares; t && *t;) {
        char *end, item[64];
        snprintf(item, sizeof item, "%.*s", (int)strcspn(t, ","), t);
        double x = strtod(t, &end);
        int plain = ((*t >= '0' && *t <= '9') || ((*t == '+' || *t == '-' || *t == '.') && t[1])) &&
                    !strpbrk(item, "xXpPiInN \t\n\v\f\r");
        if (end == t || !plain || !(x >= 1 && x <= 100) || x != (double)(long)x || c->n_shares == 4 ||
            (*end && *end != ','))
            return psi_error(PS_E_ARG, "place: %sshares: expected up to 4 shares in 1..100, got '%s'", flag(s),
                             s->shares);
        c->shares[c->n_shares++] = (int)x;
        t = *end ? end + 1 : end; /* a trailing comma ends the list, as the CLI's lists */
    }
    if (s->shares && !c->n_shares)
        return psi_error(PS_E_ARG, "place: %sshares: expected up to 4 shares in 1..100, got '%s'", flag(s), s->shares);
    return PS_OK;
}

/* "a,b*3,c" (cut in place in list) into c->jobs, b repeated. */
static int split_jobs(const ps_coloc_cluster_spec_t *s, char *list, ps_coloc_cluster_t *c)
{
    const char *f = flag(s), *given = s->jobs;
    size_t len = strlen(list);
    c->n_jobs = 0;
    if (!len || list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,"))
        return psi_error(PS_E_ARG, "place: %sjobs: empty job name in '%s' (expected a,b*3,c)", f, given);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *star = strrchr(tok, '*');
        long rep = 1;
        if (star) {
            *star = 0;
            if (plain_long(star + 1, 1, MAXN, &rep))
                return psi_error(PS_E_ARG, "place: %sjobs: '%s*%s': the repeat count must be 1..%d", f, tok, star + 1,
                                 MAXN);
        }
        if (!*tok)
            return psi_error(PS_E_ARG, "place: %sjobs: empty job name in '%s' (expected a,b*3,c)", f, given);
        for (long r = 0; r < rep; r++) {
            if (c->n_jobs == MAXN)
                return psi_error(PS_E_ARG, "place: %sjobs: more than %d jobs in '%s'", f, MAXN, given);
            c->jobs[c->n_jobs++] = tok;
        }
    }
    return PS_OK;
}

/* "8" or "4:v100,4:p100" (cut in place in list) into c->types (NULL: the
 * jobs' own rows). */
static int split_gpus(const ps_coloc_cluster_spec_t *s, char *list, ps_coloc_cluster_t *c)
{
    const char *f = flag(s);
    c->n_gpus = 0;
    if (!*list)
        return psi_error(PS_E_ARG, "place: %sgpus: expected N or N:TYPE,..., got ''", f);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        if (colon)
            *colon = 0;
        long n;
        if (plain_long(tok, 1, MAXN, &n) || (colon && !colon[1]))
            return psi_error(PS_E_ARG,
                             "place: %sgpus: '%s%s%s': expected N (1..%d) or N:TYPE (TYPE: the gpu column of "
                             "workloads.csv)",
                             f, tok, colon ? ":" : "", colon ? colon + 1 : "", MAXN);
        for (long i = 0; i < n; i++) {
            if (c->n_gpus == MAXN)
                return psi_error(PS_E_ARG, "place: %sgpus: more than %d GPUs in '%s'", f, MAXN, s->gpus);
            c->types[c->n_gpus++] = colon ? colon + 1 : NULL;
        }
    }
    return PS_OK;
}

static const char *row_gpu(const ps_workloads_t *w, size_t i)
{
    const char *gpu = "", *name = "";
    return ps_workloads_key(w, i, &gpu, &name) == PS_OK ? gpu : "";
}

static const char *row_name(const ps_workloads_t *w, size_t i)
{
    const char *gpu = "", *name = "";
    return ps_workloads_key(w, i, &gpu, &name) == PS_OK ? name : "";
}

/* Every GPU type named has rows in w, and every job a row on one of the
 * types (any GPU for an untyped one). */
static int check_rows(const ps_coloc_cluster_spec_t *s, const ps_workloads_t *w, const ps_coloc_cluster_t *c)
{
    size_t nw = ps_workloads_rows(w);
    int typed = 0;
    for (int g = 0; g < c->n_gpus; g++) {
        int found = !c->types[g];
        typed |= !found;
        for (size_t i = 0; i < nw && !found; i++)
            found = strcmp(row_gpu(w, i), c->types[g]) == 0;
        if (found)
            continue;
        char have[256] = "";
        size_t len = 0;
        for (size_t i = 0; i < nw && len + 1 < sizeof have; i++) {
            int seen = 0;
            for (size_t k = 0; k < i && !seen; k++)
                seen = strcmp(row_gpu(w, k), row_gpu(w, i)) == 0;
            int m = seen ? 0 : snprintf(have + len, sizeof have - len, "%s%s", len ? ", " : "", row_gpu(w, i));
            len = m < 0 ? sizeof have : len + (size_t)m;
        }
        return psi_error(PS_E_INPUT, "place: %sgpus: GPU type '%s' has no row in workloads.csv (it has %s)", flag(s),
                         c->types[g], have);
    }
    for (int j = 0; j < c->n_jobs; j++) {
        int found = 0;
        for (size_t i = 0; i < nw && !found; i++)
            for (int g = 0; g < c->n_gpus && !found; g++)
                found = strcmp(row_name(w, i), c->jobs[j]) == 0 &&
                        (!c->types[g] || strcmp(row_gpu(w, i), c->types[g]) == 0);
        if (!found)
            return psi_error(PS_E_INPUT, "place: %sjobs: '%s' has no row in %s%s%s%s", flag(s), c->jobs[j],
                             s->workloads_name ? s->workloads_name : "workloads.csv",
                             typed ? " on the GPU types of " : "", typed ? flag(s) : "", typed ? "gpus" : "");
    }
    return PS_OK;
}

void ps_coloc_cluster_free(ps_coloc_cluster_t *c)
{
    if (!c)
        return;
    free(c->text);
    memset(c, 0, sizeof *c);
}

int ps_coloc_cluster_parse(const ps_workloads_t *w, const ps_coloc_cluster_spec_t *s, ps_coloc_cluster_t *out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_coloc_cluster_parse: NULL out");
    memset(out, 0, sizeof *out);
    if (!w || !s || !s->jobs || !s->gpus)
        return psi_error(PS_E_ARG, "place: %sjobs and %sgpus are required", s && s->flag ? s->flag : "",
                         s && s->flag ? s->flag : "");
    size_t nj = strlen(s->jobs) + 1, ng = strlen(s->gpus) + 1;
    int rc = split_shares(s, out);
    if (rc == PS_OK && !(out->text = psi_malloc(nj + ng)))
        rc = psi_error(PS_E_NOMEM, "out of memory");
    if (rc == PS_OK) {
        memcpy(out->text, s->jobs, nj);
        memcpy(out->text + nj, s->gpus, ng);
        rc = split_jobs(s, out->text, out);
    }
    if (rc == PS_OK)
        rc = split_gpus(s, out->text + nj, out);
    if (rc == PS_OK)
        rc = check_rows(s, w, out);
    if (rc != PS_OK)
        ps_coloc_cluster_free(out);
    return rc;
}

int ps_coloc_placement_json(const ps_coloc_model_t *m, const ps_coloc_cluster_t *c, const ps_coloc_placement_t *pl,
                            int max_per_gpu, char **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_coloc_placement_json: NULL out");
    *out = NULL;
    if (!m || !c || !pl)
        return psi_error(PS_E_ARG, "ps_coloc_placement_json: NULL argument");
    cJSON *j = cJSON_CreateObject(), *gs = NULL, *wt = NULL;
    cJSON_AddStringToObject(j, "schema", "pairsight.colocate-place.v1");
    cJSON_AddStringToObject(j, "model", ps_coloc_kind_name(ps_coloc_model_kind(m)));
    cJSON_AddNumberToObject(j, "objective", pl->objective);
    cJSON_AddBoolToObject(j, "exact", pl->exact);
    cJSON_AddBoolToObject(j, "stopped_by_time_limit", pl->stopped);
    cJSON_AddNumberToObject(j, "max_per_gpu", max_per_gpu);
    if (j)
        gs = cJSON_AddArrayToObject(j, "gpus");
    for (int g = 0; gs && g < c->n_gpus; g++) {
        cJSON *e = cJSON_CreateObject(), *js;
        cJSON_AddItemToArray(gs, e);
        cJSON_AddNumberToObject(e, "gpu", g);
        cJSON_AddItemToObject(e, "type", c->types[g] ? cJSON_CreateString(c->types[g]) : cJSON_CreateNull());
        js = cJSON_AddArrayToObject(e, "jobs");
        for (int k = 0; js && k < c->n_jobs; k++)
            if (pl->gpu[k] == g) {
                cJSON *x = cJSON_CreateObject();
                cJSON_AddItemToArray(js, x);
                cJSON_AddNumberToObject(x, "job", k);
                cJSON_AddStringToObject(x, "workload", c->jobs[k]);
                cJSON_AddNumberToObject(x, "share_pct", pl->share[k]);
                cJSON_AddNumberToObject(x, "norm_tput", pl->norm_tput[k]);
            }
    }
    if (gs)
        wt = cJSON_AddArrayToObject(j, "waiting");
    for (int k = 0; wt && k < c->n_jobs; k++)
        if (pl->gpu[k] < 0)
            cJSON_AddItemToArray(wt, cJSON_CreateString(c->jobs[k]));
    *out = wt ? psi_json_print(j, 0) : NULL;
    cJSON_Delete(j);
    return *out ? PS_OK : psi_error(PS_E_NOMEM, "out of memory writing JSON");
}
