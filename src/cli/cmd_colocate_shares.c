/* pairsight colocate shares: each workload's MPS percentage for a set on one
 * GPU (docs/colocate.md). The flags become the JSON request that POST
 * /v1/colocate/shares takes; the library (ps_coloc_shares_json) decides and
 * writes the reply, which this file prints as a table, as JSON or as what
 * --emit names (ps_coloc_shares_emit). */
#include "cli/colocate.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "colocate"

static char *build_request(const cli_coloc_opts_t *o)
{
    cJSON *q = cJSON_CreateObject();
    cJSON_AddStringToObject(q, "set", o->set);
    if (o->gpu)
        cJSON_AddStringToObject(q, "gpu", o->gpu);
    if (o->candidates)
        cJSON_AddStringToObject(q, "candidates", o->candidates);
    cJSON_AddNumberToObject(q, "step", o->step);
    cJSON_AddNumberToObject(q, "max_total", o->max_total);
    if (o->objective)
        cJSON_AddStringToObject(q, "objective", o->objective);
    if (o->floor)
        cJSON_AddStringToObject(q, "floor", o->floor);
    if (o->slo)
        cJSON_AddStringToObject(q, "slo", o->slo);
    char *s = cJSON_PrintUnformatted(q);
    cJSON_Delete(q);
    return s;
}

/* The reply's members, read with the library's JSON reader: number a (or
 * b of object a) of object token o, NAN when absent; string key of o, NULL
 * when absent. */
static double num(ps_json_doc_t *d, int o, const char *a, const char *b)
{
    int v = ps_json_get(d, o, a, 0);
    double x;
    if (b)
        v = ps_json_get(d, v, b, 0);
    return ps_json_num(d, v, &x) == 0 ? x : NAN;
}

static const char *str(ps_json_doc_t *d, int o, const char *key)
{
    int v = ps_json_get(d, o, key, 0);
    return v >= 0 && d->tok[v].type == PS_JSON_STRING ? ps_json_str(d, v) : NULL;
}

/* The table: per workload the chosen share and its prediction beside the
 * uniform split and 100 each. */
static void print_text(ps_json_doc_t *d)
{
    int set = ps_json_get(d, 0, "workloads", 0), pred = ps_json_get(d, 0, "predicted", 0),
        uni = ps_json_get(d, 0, "uniform", 0), full = ps_json_get(d, 0, "full", 0);
    printf("gpu %s, model %s, objective %s, %g candidates (%g meet the floors), shares sum to at most %g\n",
           str(d, 0, "gpu"), str(d, 0, "model"), str(d, 0, "objective"), num(d, 0, "candidates", NULL),
           num(d, 0, "feasible_candidates", NULL), num(d, 0, "max_total", NULL));
    printf("%-40s %6s %9s %11s   %13s   %13s\n", "workload", "share", "norm_tput", "latency_ms", "uniform", "100 each");
    int n = set >= 0 && d->tok[set].type == PS_JSON_ARRAY ? d->tok[set].size : 0;
    for (int i = 0, e = set + 1; i < n; i++, e = ps_json_next(d, e, 0)) {
        if (d->tok[e].type != PS_JSON_STRING)
            continue;
        const char *w = ps_json_str(d, e);
        int p = ps_json_get(d, pred, w, 0);
        printf("%-40s %5g%% %9.3f %11.3g   %4g%% %7.3f   %4g%% %7.3f\n", w, num(d, 0, "shares", w),
               num(d, p, "norm_tput", NULL), num(d, p, "latency_ms", NULL), num(d, uni, "shares", w),
               num(d, uni, "norm_tput", w), num(d, full, "shares", w), num(d, full, "norm_tput", w));
    }
    printf("%-40s %6s %9.3f %11s   %13.3f   %13.3f\n", "objective", "", num(d, 0, "objective_value", NULL), "",
           num(d, uni, "objective_value", NULL), num(d, full, "objective_value", NULL));
    int k = ps_json_get(d, 0, "k_trained", 0);
    if (k < 0 || d->tok[k].type != PS_JSON_TRUE)
        printf("note: the model was not trained on sets of this size; the prediction extrapolates\n");
    printf("bound: none (co-location models carry no calibrated error bound; docs/colocate.md gives the\n"
           "measured quality of the choice on held-out pairs)\n");
}

/* The message of an infeasible reply: which floor or SLO no share meets. */
static int infeasible(ps_json_doc_t *d)
{
    int f = ps_json_get(d, 0, "failing", 0);
    const char *who = str(d, f, "workload"), *what = str(d, f, "constraint");
    if (!who)
        return cli_fail(CLI_BAD_INPUT, CMD,
                        "shares: infeasible: each floor and SLO can be met alone, but no candidate meets them all "
                        "together (%g candidates)",
                        num(d, 0, "candidates", NULL));
    if (what && strcmp(what, "slo") == 0)
        return cli_fail(CLI_BAD_INPUT, CMD,
                        "shares: infeasible: the SLO of %s (%g ms) is met by no candidate; its lowest predicted "
                        "latency is %.4g ms",
                        who, num(d, f, "wanted", NULL), num(d, f, "best", NULL));
    return cli_fail(CLI_BAD_INPUT, CMD,
                    "shares: infeasible: the floor of %s (%g) is met by no candidate; its highest predicted "
                    "normalised throughput is %.4g",
                    who, num(d, f, "wanted", NULL), num(d, f, "best", NULL));
}

static int print_reply(const cli_coloc_opts_t *o, const char *reply)
{
    ps_json_doc_t doc = {0}, *r = &doc;
    char *copy = strdup(reply); /* the reader writes into its text; reply is printed as it is */
    if (!copy || ps_json_parse(r, copy, strlen(copy)) != PS_OK) {
        int code = cli_fail(CLI_BAD_INPUT, CMD, "shares: %s", copy ? r->err : "out of memory");
        free(copy);
        ps_json_doc_free(r);
        return code;
    }
    int f = ps_json_get(r, 0, "feasible", 0), rc = CLI_OK;
    int feasible = f >= 0 && r->tok[f].type == PS_JSON_TRUE;
    if (o->json) {
        fputs(reply, stdout);
        fputc('\n', stdout);
        if (!feasible)
            rc = infeasible(r);
    } else if (!feasible) {
        rc = infeasible(r);
    } else if (o->emit) {
        char *text = NULL;
        if (ps_coloc_shares_emit(reply, o->emit, &text) != PS_OK)
            rc = cli_fail(CLI_BAD_INPUT, CMD, "shares: %s", ps_last_error());
        else
            fputs(text, stdout);
        ps_free(text);
    } else {
        print_text(r);
    }
    ps_json_doc_free(r);
    free(copy);
    if (rc == CLI_OK && (fflush(stdout) || ferror(stdout)))
        rc = cli_fail(CLI_BAD_INPUT, CMD, "stdout: write failed");
    return rc;
}

int cmd_colocate_shares(const cli_coloc_opts_t *o)
{
    if (o->emit && strcmp(o->emit, "dra") && strcmp(o->emit, "env") && strcmp(o->emit, "yaml"))
        return cli_fail(CLI_USAGE, CMD, "shares: --emit: expected dra, env or yaml, got '%s'", o->emit);
    if (o->emit && o->json)
        return cli_fail(CLI_USAGE, CMD, "shares: --emit and --json: give one");
    ps_workloads_t *w = NULL;
    ps_scaling_t *sc = NULL;
    ps_coloc_model_t *m = NULL;
    char *request = build_request(o), *reply = NULL;
    int rc = CLI_OK;
    if (!request)
        rc = cli_fail(CLI_BAD_INPUT, CMD, "shares: out of memory");
    else if (ps_workloads_load(o->workloads, &w) || (o->scaling && ps_scaling_load(o->scaling, &sc)) ||
             ps_coloc_model_load(o->model, &m))
        rc = cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    else {
        int err = ps_coloc_shares_json(m, w, sc, request, &reply);
        if (err == PS_E_ARG)
            rc = cli_fail(CLI_USAGE, CMD, "%s", ps_last_error());
        else if (err)
            rc = cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
        else
            rc = print_reply(o, reply);
    }
    ps_free(reply);
    free(request);
    ps_coloc_model_free(m);
    ps_workloads_free(w);
    ps_scaling_free(sc);
    return rc;
}
