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

static double num(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The table: per workload the chosen share and its prediction beside the
 * uniform split and 100 each. */
static void print_text(const cJSON *r)
{
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(r, "workloads"),
                *pred = cJSON_GetObjectItemCaseSensitive(r, "predicted"),
                *uni = cJSON_GetObjectItemCaseSensitive(r, "uniform"),
                *full = cJSON_GetObjectItemCaseSensitive(r, "full");
    printf("gpu %s, model %s, objective %s, %g candidates (%g meet the floors), shares sum to at most %g\n",
           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "gpu")),
           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "model")),
           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "objective")), num(r, "candidates", NULL),
           num(r, "feasible_candidates", NULL), num(r, "max_total", NULL));
    printf("%-40s %6s %9s %11s   %13s   %13s\n", "workload", "share", "norm_tput", "latency_ms", "uniform", "100 each");
    for (const cJSON *e = set ? set->child : NULL; e; e = e->next) {
        const char *w = e->valuestring;
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(pred, w);
        printf("%-40s %5g%% %9.3f %11.3g   %4g%% %7.3f   %4g%% %7.3f\n", w, num(r, "shares", w),
               num(p, "norm_tput", NULL), num(p, "latency_ms", NULL), num(uni, "shares", w), num(uni, "norm_tput", w),
               num(full, "shares", w), num(full, "norm_tput", w));
    }
    printf("%-40s %6s %9.3f %11s   %13.3f   %13.3f\n", "objective", "", num(r, "objective_value", NULL), "",
           num(uni, "objective_value", NULL), num(full, "objective_value", NULL));
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "k_trained")))
        printf("note: the model was not trained on sets of this size; the prediction extrapolates\n");
    printf("bound: none (co-location models carry no calibrated error bound; docs/colocate.md gives the\n"
           "measured quality of the choice on held-out pairs)\n");
}

/* The message of an infeasible reply: which floor or SLO no share meets. */
static int infeasible(const cJSON *r)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(r, "failing");
    const char *who = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "workload"));
    const char *what = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "constraint"));
    if (!who)
        return cli_fail(CLI_BAD_INPUT, CMD,
                        "shares: infeasible: each floor and SLO can be met alone, but no candidate meets them all "
                        "together (%g candidates)",
                        num(r, "candidates", NULL));
    if (what && strcmp(what, "slo") == 0)
        return cli_fail(CLI_BAD_INPUT, CMD,
                        "shares: infeasible: the SLO of %s (%g ms) is met by no candidate; its lowest predicted "
                        "latency is %.4g ms",
                        who, num(f, "wanted", NULL), num(f, "best", NULL));
    return cli_fail(CLI_BAD_INPUT, CMD,
                    "shares: infeasible: the floor of %s (%g) is met by no candidate; its highest predicted "
                    "normalised throughput is %.4g",
                    who, num(f, "wanted", NULL), num(f, "best", NULL));
}

static int print_reply(const cli_coloc_opts_t *o, const char *reply)
{
    cJSON *r = cJSON_Parse(reply);
    if (!r)
        return cli_fail(CLI_BAD_INPUT, CMD, "shares: out of memory");
    int feasible = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "feasible")), rc = CLI_OK;
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
    cJSON_Delete(r);
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
