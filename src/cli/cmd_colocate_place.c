/* pairsight colocate place, and colocate eval --place: placement of jobs
 * over a cluster from a co-location model (docs/colocate.md). */
#include "cli/colocate.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "colocate"

/* Warns once per GPU type of the placement the model was not trained on
 * (an untyped GPU: the jobs' own rows' GPU). */
static void warn_types(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_coloc_cluster_t *cl)
{
    const char *warned[64];
    int nw = 0;
    for (int g = 0; g < cl->n_gpus; g++) {
        const char *t = cl->types[g];
        for (size_t i = 0; i < ps_workloads_rows(w) && !t; i++)
            for (int j = 0; j < cl->n_jobs && !t; j++)
                if (strcmp(cli_workload_name(w, i), cl->jobs[j]) == 0)
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

/* The placement as text on stdout. */
static void place_text(const ps_coloc_placement_t *pl, const ps_coloc_cluster_t *cl)
{
    printf("objective %.4f (sum of predicted normalized throughputs, %s)\n", pl->objective,
           pl->exact     ? "exact"
           : pl->stopped ? "heuristic, stopped by the time limit"
                         : "heuristic");
    for (int g = 0; g < cl->n_gpus; g++) {
        printf("gpu %d%s%s:", g, cl->types[g] ? " " : "", cl->types[g] ? cl->types[g] : "");
        for (int j = 0; j < cl->n_jobs; j++)
            if (pl->gpu[j] == g)
                printf(" %s@%d (%.3f)", cl->jobs[j], pl->share[j], pl->norm_tput[j]);
        putchar('\n');
    }
    for (int j = 0; j < cl->n_jobs; j++)
        if (pl->gpu[j] < 0)
            printf("waiting: %s\n", cl->jobs[j]);
}

/* What the placement says on stderr: a search the time limit ended, GPU
 * types and group sizes the model was not trained on. */
static void place_warn(const cli_coloc_opts_t *o, const ps_coloc_model_t *m, const ps_workloads_t *w,
                       const ps_coloc_cluster_t *cl, const ps_coloc_placement_t *pl)
{
    if (pl->stopped)
        fprintf(stderr,
                "pairsight: colocate: place: the time limit (--time-limit %g s) ended the search: the best "
                "placement found, not proven optimal\n",
                o->place_params.time_limit_s);
    warn_types(m, w, cl);
    unsigned ks = 0; /* the sizes of the groups placed together */
    for (int g = 0; g < cl->n_gpus; g++) {
        int k = 0;
        for (int j = 0; j < cl->n_jobs; j++)
            k += pl->gpu[j] == g;
        ks |= k >= 2 ? 1u << (k < 31 ? k : 31) : 0;
    }
    cli_coloc_warn_ks(m, ks, "placing groups of");
}

/* The placement on stdout: text, or the library's JSON. */
static int place_print(const cli_coloc_opts_t *o, const ps_coloc_model_t *m, const ps_coloc_cluster_t *cl,
                       const ps_coloc_placement_t *pl)
{
    char *json = NULL;
    int code = CLI_OK;
    if (!o->json)
        place_text(pl, cl);
    else if (ps_coloc_placement_json(m, cl, pl, o->place_params.max_per_gpu, &json) != PS_OK)
        code = cli_fail(CLI_BAD_INPUT, CMD, "place: %s", ps_last_error());
    else if (fputs(json, stdout) == EOF || putchar('\n') == EOF || fflush(stdout) != 0)
        code = cli_fail(CLI_BAD_INPUT, CMD, "place: writing standard output failed");
    ps_free(json);
    return code;
}

int cmd_colocate_place(const cli_coloc_opts_t *o, const cli_coloc_tables_t *t)
{
    ps_coloc_cluster_spec_t spec = {o->jobs, o->gpus, o->shares, o->workloads, "--"};
    ps_coloc_cluster_t cl;
    int rc = ps_coloc_cluster_parse(t->w, &spec, &cl);
    if (rc != PS_OK) {
        ps_coloc_cluster_free(&cl);
        return cli_fail(rc == PS_E_ARG ? CLI_USAGE : CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    }
    ps_coloc_model_t *m = NULL;
    ps_coloc_placement_t pl = {0};
    ps_coloc_place_params_t p = o->place_params;
    p.shares = cl.n_shares ? cl.shares : NULL;
    p.n_shares = cl.n_shares;
    p.progress = cli_progress_cb;
    p.progress_user = (void *)&o->quiet;
    int err = ps_coloc_model_load(o->model, &m);
    if (!err)
        err = ps_coloc_place(m, t->w, t->s, cl.jobs, cl.n_jobs, cl.types, cl.n_gpus, &p, &pl);
    cli_progress_end(o->quiet);
    int code = CLI_OK;
    if (err) {
        const char *msg = ps_last_error(); /* the library's own "place: " once */
        code = cli_fail(CLI_BAD_INPUT, CMD, "place: %s", strncmp(msg, "place: ", 7) ? msg : msg + 7);
    } else {
        place_warn(o, m, t->w, &cl, &pl);
        code = place_print(o, m, &cl, &pl);
    }
    ps_coloc_placement_free(&pl);
    ps_coloc_model_free(m);
    ps_coloc_cluster_free(&cl);
    return code;
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
