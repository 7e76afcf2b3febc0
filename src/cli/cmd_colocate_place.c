/* pairsight colocate place, and colocate eval --place: placement of jobs
 * over a cluster from a co-location model (docs/colocate.md). */
#include "cli/colocate.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "colocate"

/* The cluster of a placement: the jobs of --jobs (a job repeated with *N
 * stands N times) and the GPUs of --gpus, each with its type (NULL: the
 * jobs' own rows' GPU). The names point into the copies of the lists. */
typedef struct {
    char *names[64];
    int nj;
    const char *types[64];
    int ng;
} cluster_t;

/* "a,b*3,c" into names[] (b repeated); returns the count, or -1 after a
 * usage message that says what is wrong. */
static int split_jobs(char *list, const char *given, char **names, int cap)
{
    int n = 0;
    size_t len = strlen(list);
    if (!len || list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,"))
        return -cli_fail(CLI_USAGE, CMD, "place: --jobs: empty job name in '%s' (expected a,b*3,c)", given);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        char *star = strrchr(tok, '*');
        long rep = 1;
        if (star) {
            *star = 0;
            if (cli_parse_long(star + 1, 1, cap, &rep))
                return -cli_fail(CLI_USAGE, CMD, "place: --jobs: '%s*%s': the repeat count must be 1..%d", tok,
                                 star + 1, cap);
        }
        if (!*tok)
            return -cli_fail(CLI_USAGE, CMD, "place: --jobs: empty job name in '%s' (expected a,b*3,c)", given);
        for (long r = 0; r < rep; r++) {
            if (n == cap)
                return -cli_fail(CLI_USAGE, CMD, "place: --jobs: more than %d jobs in '%s'", cap, given);
            names[n++] = tok;
        }
    }
    return n;
}

/* "8" or "4:v100,4:p100" into types[] (NULL: the jobs' own rows); returns
 * the count, or -1 after a usage message. */
static int split_gpus(char *list, const char *given, const char **types, int cap)
{
    int n = 0;
    if (!*list)
        return -cli_fail(CLI_USAGE, CMD, "place: --gpus: expected N or N:TYPE,..., got ''");
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        char *colon = strchr(tok, ':');
        if (colon)
            *colon = 0;
        long c;
        if (cli_parse_long(tok, 1, cap, &c) || (colon && !colon[1]))
            return -cli_fail(CLI_USAGE, CMD,
                             "place: --gpus: '%s%s%s': expected N (1..%d) or N:TYPE (TYPE: the gpu column of "
                             "workloads.csv)",
                             tok, colon ? ":" : "", colon ? colon + 1 : "", cap);
        for (long i = 0; i < c; i++) {
            if (n == cap)
                return -cli_fail(CLI_USAGE, CMD, "place: --gpus: more than %d GPUs in '%s'", cap, given);
            types[n++] = colon ? colon + 1 : NULL;
        }
    }
    return n;
}

/* Every GPU type named has rows in workloads.csv; CLI_BAD_INPUT naming the
 * type and the ones there otherwise. */
static int check_types(const ps_workloads_t *w, const cluster_t *cl)
{
    for (int g = 0; g < cl->ng; g++) {
        int found = !cl->types[g];
        for (size_t i = 0; i < ps_workloads_rows(w) && !found; i++)
            found = strcmp(cli_workload_gpu(w, i), cl->types[g]) == 0;
        if (found)
            continue;
        char have[256] = "";
        size_t len = 0;
        for (size_t i = 0; i < ps_workloads_rows(w) && len + 1 < sizeof have; i++) {
            int seen = 0;
            for (size_t k = 0; k < i && !seen; k++)
                seen = strcmp(cli_workload_gpu(w, k), cli_workload_gpu(w, i)) == 0;
            if (!seen) {
                int m = snprintf(have + len, sizeof have - len, "%s%s", len ? ", " : "", cli_workload_gpu(w, i));
                len = m < 0 ? sizeof have : len + (size_t)m;
            }
        }
        return cli_fail(CLI_BAD_INPUT, CMD, "place: --gpus: GPU type '%s' has no row in workloads.csv (it has %s)",
                        cl->types[g], have);
    }
    return CLI_OK;
}

/* Every job has a row in workloads.csv on one of the GPU types (any GPU
 * for an untyped one); CLI_BAD_INPUT naming the job and the file otherwise. */
static int check_jobs(const char *wpath, const ps_workloads_t *w, const cluster_t *cl)
{
    int typed = 0;
    for (int g = 0; g < cl->ng; g++)
        typed |= cl->types[g] != NULL;
    for (int j = 0; j < cl->nj; j++) {
        int found = 0;
        for (size_t i = 0; i < ps_workloads_rows(w) && !found; i++)
            for (int g = 0; g < cl->ng && !found; g++)
                found = strcmp(cli_workload_name(w, i), cl->names[j]) == 0 &&
                        (!cl->types[g] || strcmp(cli_workload_gpu(w, i), cl->types[g]) == 0);
        if (!found)
            return cli_fail(CLI_BAD_INPUT, CMD, "place: --jobs: '%s' has no row in %s%s", cl->names[j], wpath,
                            typed ? " on the GPU types of --gpus" : "");
    }
    return CLI_OK;
}

/* Warns once per GPU type of the placement the model was not trained on
 * (an untyped GPU: the jobs' own rows' GPU). */
static void warn_types(const ps_coloc_model_t *m, const ps_workloads_t *w, const cluster_t *cl)
{
    const char *warned[64];
    int nw = 0;
    for (int g = 0; g < cl->ng; g++) {
        const char *t = cl->types[g];
        for (size_t i = 0; i < ps_workloads_rows(w) && !t; i++)
            for (int j = 0; j < cl->nj && !t; j++)
                if (strcmp(cli_workload_name(w, i), cl->names[j]) == 0)
                    t = cli_workload_gpu(w, i);
        int seen = 0;
        for (int k = 0; k < nw && !seen; k++)
            seen = t && strcmp(warned[k], t) == 0;
        if (!t || seen || cli_coloc_model_knows_gpu(m, t))
            continue;
        warned[nw++] = t;
        fprintf(stderr,
                "pairsight: colocate: warning: model trained on GPU %s, placing on %s "
                "(across GPUs the error grows; docs/colocate.md)\n",
                ps_coloc_model_gpu(m), t);
    }
}

/* The placement as JSON on stdout. */
static void place_json(const ps_coloc_model_t *m, const ps_coloc_placement_t *pl, const cluster_t *cl, int max_per_gpu)
{
    cJSON *j = cli_json_new("colocate-place", 1), *gs;
    cJSON_AddStringToObject(j, "model", ps_coloc_kind_name(ps_coloc_model_kind(m)));
    cJSON_AddNumberToObject(j, "objective", pl->objective);
    cJSON_AddBoolToObject(j, "exact", pl->exact);
    cJSON_AddBoolToObject(j, "stopped_by_time_limit", pl->stopped);
    cJSON_AddNumberToObject(j, "max_per_gpu", max_per_gpu);
    gs = cJSON_AddArrayToObject(j, "gpus");
    for (int g = 0; g < cl->ng; g++) {
        cJSON *e = cJSON_CreateObject(), *js;
        cJSON_AddItemToArray(gs, e);
        cJSON_AddNumberToObject(e, "gpu", g);
        if (cl->types[g])
            cJSON_AddStringToObject(e, "type", cl->types[g]);
        else
            cJSON_AddNullToObject(e, "type");
        js = cJSON_AddArrayToObject(e, "jobs");
        for (int k = 0; k < cl->nj; k++)
            if (pl->gpu[k] == g) {
                cJSON *x = cJSON_CreateObject();
                cJSON_AddItemToArray(js, x);
                cJSON_AddNumberToObject(x, "job", k);
                cJSON_AddStringToObject(x, "workload", cl->names[k]);
                cJSON_AddNumberToObject(x, "share_pct", pl->share[k]);
                cJSON_AddNumberToObject(x, "norm_tput", pl->norm_tput[k]);
            }
    }
    cJSON *wt = cJSON_AddArrayToObject(j, "waiting");
    for (int k = 0; k < cl->nj; k++)
        if (pl->gpu[k] < 0)
            cJSON_AddItemToArray(wt, cJSON_CreateString(cl->names[k]));
    cli_json_print(j, stdout);
}

/* The placement as text on stdout. */
static void place_text(const ps_coloc_placement_t *pl, const cluster_t *cl)
{
    printf("objective %.4f (sum of predicted normalized throughputs, %s)\n", pl->objective,
           pl->exact     ? "exact"
           : pl->stopped ? "heuristic, stopped by the time limit"
                         : "heuristic");
    for (int g = 0; g < cl->ng; g++) {
        printf("gpu %d%s%s:", g, cl->types[g] ? " " : "", cl->types[g] ? cl->types[g] : "");
        for (int j = 0; j < cl->nj; j++)
            if (pl->gpu[j] == g)
                printf(" %s@%d (%.3f)", cl->names[j], pl->share[j], pl->norm_tput[j]);
        putchar('\n');
    }
    for (int j = 0; j < cl->nj; j++)
        if (pl->gpu[j] < 0)
            printf("waiting: %s\n", cl->names[j]);
}

int cmd_colocate_place(const cli_coloc_opts_t *o, const cli_coloc_tables_t *t)
{
    if (!o->model || !o->jobs || !o->gpus)
        return cli_fail(CLI_USAGE, CMD, "place: --model, --jobs and --gpus are required");
    char *jl = strdup(o->jobs), *gl = strdup(o->gpus);
    cluster_t cl;
    int allowed[16], na = 0;
    if (o->shares) {
        double v[4];
        if (cli_parse_list(o->shares, 1, 100, 1, v, &na)) {
            free(jl);
            free(gl);
            return cli_fail(CLI_USAGE, CMD, "place: --shares: expected up to 4 shares in 1..100, got '%s'", o->shares);
        }
        for (int i = 0; i < na; i++)
            allowed[i] = (int)v[i];
    }
    cl.nj = jl ? split_jobs(jl, o->jobs, cl.names, 64) : -1;
    cl.ng = -1;
    if (cl.nj > 0)
        cl.ng = gl ? split_gpus(gl, o->gpus, cl.types, 64) : -1;
    int code = cl.nj < 1 || cl.ng < 1 ? CLI_USAGE : check_types(t->w, &cl);
    if (code == CLI_OK)
        code = check_jobs(o->workloads, t->w, &cl);
    if (code != CLI_OK) {
        free(jl);
        free(gl);
        return code;
    }
    ps_coloc_model_t *m = NULL;
    ps_coloc_placement_t pl = {0};
    ps_coloc_place_params_t p = ps_coloc_place_default_params();
    p.max_per_gpu = o->max_per_gpu;
    p.allow_wait = o->allow_wait;
    p.shares = na ? allowed : NULL;
    p.n_shares = na;
    p.time_limit_s = o->time_limit;
    p.progress = cli_progress_cb;
    p.progress_user = (void *)&o->quiet;
    int err = ps_coloc_model_load(o->model, &m);
    if (!err)
        err = ps_coloc_place(m, t->w, t->s, (const char *const *)cl.names, cl.nj, cl.types, cl.ng, &p, &pl);
    cli_progress_end(o->quiet);
    if (!err && pl.stopped)
        fprintf(stderr,
                "pairsight: colocate: place: the time limit (--time-limit %g s) ended the search: the best "
                "placement found, not proven optimal\n",
                o->time_limit);
    if (!err) {
        warn_types(m, t->w, &cl);
        unsigned ks = 0; /* the sizes of the groups placed together */
        for (int g = 0; g < cl.ng; g++) {
            int k = 0;
            for (int j = 0; j < cl.nj; j++)
                k += pl.gpu[j] == g;
            ks |= k >= 2 ? 1u << (k < 31 ? k : 31) : 0;
        }
        cli_coloc_warn_ks(m, ks, "placing groups of");
    }
    if (!err && o->json)
        place_json(m, &pl, &cl, o->max_per_gpu);
    else if (!err)
        place_text(&pl, &cl);
    ps_coloc_placement_free(&pl);
    ps_coloc_model_free(m);
    free(jl);
    free(gl);
    if (err) {
        const char *msg = ps_last_error(); /* the library's own "place: " once */
        return cli_fail(CLI_BAD_INPUT, CMD, "place: %s", strncmp(msg, "place: ", 7) ? msg : msg + 7);
    }
    return CLI_OK;
}

int cmd_colocate_eval_place(const cli_coloc_opts_t *o, const ps_coloc_eval_params_t *p, const cli_coloc_tables_t *t)
{
    const char *cases = o->cases;
    int max_per_gpu = o->max_per_gpu;
    ps_coloc_place_case_t cs[16];
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", cases ? cases : "4x2,8x4,16x8,24x8,32x16");
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *x = strchr(tok, 'x');
        long a, b;
        if (!x || n == 16)
            return cli_fail(CLI_USAGE, CMD, "eval: --cases: expected JOBSxGPUS,... (at most 16), got '%s'", cases);
        *x = 0;
        if (cli_parse_long(tok, 1, 64, &a) || cli_parse_long(x + 1, 1, 64, &b))
            return cli_fail(CLI_USAGE, CMD, "eval: --cases: expected JOBSxGPUS with 1..64 each, got '%s'", cases);
        memset(&cs[n], 0, sizeof cs[n]);
        cs[n].n_jobs = (int)a;
        cs[n].n_gpus = (int)b;
        n++;
    }
    unsigned ks; /* some co-location of at most K workloads: a bit <= K */
    if (ps_colocations_ks(t->c, &ks) == PS_OK && !(ks & ((2u << max_per_gpu) - 1)))
        fprintf(stderr,
                "pairsight: colocate: warning: no measured co-location of at most %d workloads (--max-per-gpu): "
                "every job runs alone and every policy scores 1\n",
                max_per_gpu);
    if (ps_coloc_eval_place(t->w, t->s, t->c, p, max_per_gpu, cs, n))
        return cli_fail(CLI_BAD_INPUT, CMD, "eval --place: %s", ps_last_error());
    if (o->json) {
        cJSON *j = cli_json_new("colocate-eval-place", 1), *arr;
        cJSON_AddNumberToObject(j, "mixes", p->seeds);
        cJSON_AddNumberToObject(j, "max_per_gpu", max_per_gpu);
        cJSON_AddNumberToObject(j, "train_frac", p->train_frac);
        arr = cJSON_AddArrayToObject(j, "cases");
        for (int q = 0; q < n; q++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddItemToArray(arr, e);
            cJSON_AddNumberToObject(e, "jobs", cs[q].n_jobs);
            cJSON_AddNumberToObject(e, "gpus", cs[q].n_gpus);
            cJSON_AddNumberToObject(e, "mixes", cs[q].mixes);
            cJSON_AddNumberToObject(e, "exact", cs[q].exact);
            for (int pass = 0; pass < 2; pass++) {
                cJSON *o = cJSON_AddObjectToObject(e, pass ? "norm_sum" : "ratio");
                for (int k = 0; k < PS_POL_COUNT; k++) {
                    double v = pass ? cs[q].norm[k] : cs[q].ratio[k];
                    if (!isnan(v))
                        cJSON_AddNumberToObject(o, ps_coloc_policy_name(k), v);
                }
            }
        }
        cli_json_print(j, stdout);
        return CLI_OK;
    }
    printf("placement: measured normalized-throughput sum over the best found with measured values\n"
           "(%d job mixes per case, K = %d, predictors trained on %.0f%% of the co-locations)\n",
           p->seeds, max_per_gpu, 100 * p->train_frac);
    printf("%-10s", "policy");
    for (int q = 0; q < n; q++)
        printf(" %9dx%-3d", cs[q].n_jobs, cs[q].n_gpus);
    putchar('\n');
    for (int k = 0; k < PS_POL_COUNT; k++) {
        int any = 0;
        for (int q = 0; q < n; q++)
            any |= !isnan(cs[q].ratio[k]);
        if (!any)
            continue;
        printf("%-10s", ps_coloc_policy_name(k));
        for (int q = 0; q < n; q++)
            printf("  %5.3f %6.2f", cs[q].ratio[k], cs[q].norm[k]);
        putchar('\n');
    }
    printf("%-10s", "exact");
    for (int q = 0; q < n; q++)
        printf(" %6d/%-6d", cs[q].exact, cs[q].mixes);
    putchar('\n');
    return CLI_OK;
}
