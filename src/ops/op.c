/*
 * The operations, each declared once: its name, the schema of its result,
 * one table of its parameters (name, type, bounds, help; the defaults are
 * its parameter struct's), the members of its request that are not numbers
 * (read by its run function), and its run function. The CLI builds the
 * options of an operation from its table, the service reads a request's
 * members through it, Python passes keyword arguments through ps_op_run;
 * docs/ARCHITECTURE.md's recipes say what to touch to add one. This file
 * calls only the public API (include/pairsight.h).
 */
#include "pairsight.h"

#include "common/common.h"
#include "ops/ops.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An operation. run gets the request document (for its PS_PARAM_STR
 * members) and the parameter struct, read through the table; an operation
 * with no params reads its request itself and gets its text alone (req
 * NULL, p NULL). */
typedef struct {
    const char *name, *result, *help;
    const char *needs; /* its inputs: names of ps_op_inputs_t's members */
    const ps_param_t *params;
    int n_params;
    size_t size;           /* of the parameter struct */
    void (*init)(void *p); /* the defaults into the parameter struct */
    int (*run)(const ps_op_inputs_t *in, const char *text, const cJSON *req, void *p, char **out);
    int (*check)(const void *p); /* what the bounds of single rows cannot say (ps_op_check), or NULL */
} op_t;

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Member key of req into text (cap bytes): a string as it is, or a
 * non-empty list of strings without sep (of integers, when ints) joined by
 * sep, as the command line writes the list. */
static int join_member(const cJSON *req, const char *key, char sep, int ints, char *text, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, key);
    size_t at = 0;
    text[0] = 0;
    if (cJSON_IsString(v) && (size_t)snprintf(text, cap, "%s", v->valuestring) < cap)
        return PS_OK;
    for (const cJSON *e = cJSON_IsArray(v) ? v->child : NULL; e; e = e->next) {
        int ok = ints ? cJSON_IsNumber(e) && e->valuedouble == floor(e->valuedouble) && fabs(e->valuedouble) < 1e6
                      : cJSON_IsString(e) && *e->valuestring && !strchr(e->valuestring, sep);
        int n = !ok    ? -1
                : ints ? snprintf(text + at, cap - at, "%.*s%d", at ? 1 : 0, &sep, (int)e->valuedouble)
                       : snprintf(text + at, cap - at, "%.*s%s", at ? 1 : 0, &sep, e->valuestring);
        if (n < 0 || (size_t)n >= cap - at)
            break;
        at += (size_t)n;
        if (!e->next)
            return PS_OK;
    }
    return psi_error(PS_E_ARG, "%s: expected \"%s\" or a non-empty list of %s (%zu characters at most)", key,
                     ints ? (sep == '/' ? "A/B/.." : "A,B,..") : (sep == ',' ? "a,b" : "a+b"),
                     ints ? "integers" : "names", cap - 1);
}

/* ---- plan: ps_plan_best over the LP candidates ---- */

#define PLAN_P(f) offsetof(ps_plan_params_t, f)
static const ps_param_t plan_params[] = {
    {"slo_ns", PS_PARAM_DBL, PLAN_P(budget_ns), 1, 1e15, "X", "none", "the request's latency budget in ns", 0},
    {"slo_factor", PS_PARAM_DBL, PLAN_P(slo_factor), 1, 100, "F", "none",
     "budget = F x the request alone (its operators' standalone durations on the whole GPU plus --alone-run-ns)", 0},
    {"coverage", PS_PARAM_DBL, PLAN_P(coverage), 0, 0.999, "C", NULL,
     "plan on calibrated upper bounds at coverage C; 0 = point predictions", 0},
    {"lp_start", PS_PARAM_INT, PLAN_P(lp_start), 0, 1000000, "N", NULL, "LP operator the LP stream stands at", 0},
    {"alone_run_ns", PS_PARAM_DBL, PLAN_P(alone_run_ns), 0, 1e12, "X", NULL, "fixed cost of each run of HP alone", 0},
    {"time_value", PS_PARAM_DBL, PLAN_P(time_value), 0, 100, "V", NULL,
     "LP work an HP ns is otherwise worth (1 when LP runs alone whenever HP is idle)", 0},
    {"window", PS_PARAM_INT, PLAN_P(window), 0, 64, "N", "the model's", "operators per HP segment", 0},
    {"lp_lengths", PS_PARAM_INT, PLAN_P(lp_lengths), 1, 8, "N", NULL,
     "LP segment lengths tried per split: window x k / N, k = 1..N", 0},
    {"hp", PS_PARAM_STR, 0, 0, 0, "MODEL:BATCH", NULL, "the HP model; the request is its whole operator sequence", 0},
    {"lp", PS_PARAM_STR, 0, 0, 0, "LIST", NULL,
     "LP candidates MODEL:BATCH[,...] (or a list of them); the one given the most LP work is planned", 0},
    {"gpu", PS_PARAM_STR, 0, 0, 0, "NAME", NULL, "GPU of the operators planned (the model's)", 0},
};

static void plan_init(void *p) { *(ps_plan_params_t *)p = ps_plan_default_params(); }

/* The LP candidates of member lp ("A:8,B:8" or ["A:8", "B:8"]) into
 * text (split in place) and lp[*n]. */
static int plan_lp(const cJSON *req, char *text, size_t cap, const char **lp, size_t *n)
{
    *n = 0;
    int rc = join_member(req, "lp", ',', 0, text, cap);
    if (rc != PS_OK)
        return rc;
    char name[64], *save = NULL;
    int batch;
    for (char *s = strtok_r(text, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        if (*n == PS_PLAN_MAX_LP)
            return psi_error(PS_E_ARG, "plan: lp: more than %d LP tasks", PS_PLAN_MAX_LP);
        if (ps_model_batch_parse(s, name, &batch) != 0)
            return psi_error(PS_E_ARG, "plan: lp: bad value '%s': expected MODEL:BATCH[,...]", s);
        lp[(*n)++] = s;
    }
    return *n ? PS_OK : psi_error(PS_E_ARG, "plan: lp: no LP task given");
}

/* What the table's bounds cannot say: one budget, and a coverage of 0 or
 * at least 0.5. */
static int plan_check(const void *params)
{
    const ps_plan_params_t *p = params;
    if ((p->budget_ns > 0) == (p->slo_factor > 0))
        return psi_error(PS_E_ARG, "give one of slo_ns and slo_factor");
    if (p->coverage > 0 && p->coverage < 0.5)
        return psi_error(PS_E_ARG, "coverage: bad value '%g': expected 0 or a number in 0.5..0.999", p->coverage);
    return PS_OK;
}

static int plan_run(const ps_op_inputs_t *in, const char *text_in, const cJSON *req, void *params, char **out)
{
    (void)text_in;
    ps_plan_params_t *p = params;
    const cJSON *hp = cJSON_GetObjectItemCaseSensitive(req, "hp"), *lpv = cJSON_GetObjectItemCaseSensitive(req, "lp"),
                *g = cJSON_GetObjectItemCaseSensitive(req, "gpu");
    char hp_model[64], text[PS_PLAN_MAX_LP * 80];
    const char *lp[PS_PLAN_MAX_LP];
    size_t n = 0;
    if (!cJSON_IsString(hp) || ps_model_batch_parse(hp->valuestring, hp_model, &p->hp_batch) != 0)
        return psi_error(PS_E_ARG, "plan: hp: expected MODEL:BATCH, e.g. resnet50:8");
    if (g && !cJSON_IsString(g))
        return psi_error(PS_E_ARG, "plan: gpu: expected a GPU's name");
    p->hp_model = hp_model;
    p->gpu = g ? g->valuestring : NULL;
    if (!lpv)
        return psi_error(PS_E_ARG, "plan: missing lp: LP candidates [\"MODEL:BATCH\", ...]");
    int rc = plan_lp(req, text, sizeof text, lp, &n);
    if (rc != PS_OK)
        return rc;
    if ((rc = plan_check(p)) != PS_OK)
        return rc;
    ps_plan_t *best = NULL;
    rc = ps_plan_best(in->model, in->ops, p, lp, n, &best);
    if (rc == PS_OK)
        rc = ps_plan_to_json(best, out);
    ps_plan_free(best);
    return rc;
}

/* ---- predict: ps_model_predict_compose (and the bounds) over queries ---- */

typedef struct {
    double coverage;
} predict_params_t;

static const ps_param_t predict_params[] = {
    {"coverage", PS_PARAM_DBL, offsetof(predict_params_t, coverage), 0.5, 0.999, "C", "none",
     "also write calibrated upper bounds hp_ns_upper and lp_ns_upper at coverage C (time-aligned composition)", 0},
    {"compose", PS_PARAM_STR, 0, 0, 0, "NAME", NULL,
     "window composition for segments longer than the window: overlap (time-aligned, the default) or index "
     "(published)",
     0},
    {"queries", PS_PARAM_STR, 0, 0, 0, "LIST", NULL,
     "the candidates: a list of objects with a query's fields (coexec.csv's key columns; gpu defaults to the "
     "model's)",
     0},
};

static void predict_init(void *p) { ((predict_params_t *)p)->coverage = 0; }

/* Query object e (called where in messages) into q through the query's
 * field table; gpu when it gives none. */
static int read_query(const cJSON *e, const char *where, const char *gpu, ps_query_t *q)
{
    int n = 0;
    const ps_query_field_t *f = ps_query_fields(&n);
    if (!cJSON_IsObject(e))
        return psi_error(PS_E_ARG, "%s: expected an object with a query's fields", where);
    memset(q, 0, sizeof *q);
    q->gpu = gpu;
    for (int k = 0; k < n; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, f[k].name);
        char *at = (char *)q + f[k].offset;
        if (!v && f[k].required)
            return psi_error(PS_E_ARG, "%s: missing %s", where, f[k].name);
        if (!v)
            continue;
        if (f[k].is_string && !cJSON_IsString(v))
            return psi_error(PS_E_ARG, "%s.%s: expected a string", where, f[k].name);
        if (f[k].is_string) {
            *(const char **)(void *)at = v->valuestring;
            continue;
        }
        double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        if (!(d == floor(d) && d >= (double)f[k].lo && d <= (double)f[k].hi))
            return psi_error(PS_E_ARG, "%s.%s: expected an integer in %ld..%ld", where, f[k].name, f[k].lo, f[k].hi);
        *(int *)(void *)at = (int)d;
    }
    return PS_OK;
}

static void add_column(cJSON *o, const char *name, const double *v, int n)
{
    cJSON *a = cJSON_AddArrayToObject(o, name);
    for (int i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
}

/* The reply (as the service's /v1/predict, without its fingerprint). */
static int predict_reply(const double *o, int n, ps_compose_t compose, double coverage, char **out)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "schema", "pairsight.predict.v1");
    cJSON_AddNumberToObject(j, "n", n);
    cJSON_AddStringToObject(j, "compose", ps_compose_name(compose));
    if (coverage > 0)
        cJSON_AddNumberToObject(j, "coverage", coverage);
    cJSON *p = cJSON_AddObjectToObject(j, "predictions");
    const char *names[] = {"hp_ns_pred", "lp_ns_pred", "hp_delta_pred", "lp_delta_pred", "hp_ns_upper", "lp_ns_upper"};
    for (int c = 0; p && c < (coverage > 0 ? 6 : 4); c++)
        add_column(p, names[c], o + (size_t)c * (size_t)n, n);
    *out = j ? psi_json_print(j, 0) : NULL;
    cJSON_Delete(j);
    return *out ? PS_OK : psi_error(PS_E_NOMEM, "out of memory writing JSON");
}

static int predict_run(const ps_op_inputs_t *in, const char *text, const cJSON *req, void *params, char **out)
{
    (void)text;
    double coverage = ((predict_params_t *)params)->coverage;
    const cJSON *qs = cJSON_GetObjectItemCaseSensitive(req, "queries"),
                *cm = cJSON_GetObjectItemCaseSensitive(req, "compose");
    ps_compose_t compose = PS_COMPOSE_OVERLAP;
    ps_model_info_t info;
    if (cm && (!cJSON_IsString(cm) || ps_compose_from_name(cm->valuestring, &compose) != PS_OK))
        return psi_error(PS_E_ARG, "predict: compose: expected \"overlap\" or \"index\"");
    int n = cJSON_GetArraySize(qs);
    if (!cJSON_IsArray(qs) || n < 1)
        return psi_error(PS_E_ARG, "predict: queries: expected a list of query objects");
    int rc = ps_model_info(in->model, &info);
    ps_query_t *q = rc == PS_OK ? psi_calloc((size_t)n, sizeof *q) : NULL;
    double *o = q ? psi_calloc((size_t)n * 6, sizeof *o) : NULL;
    if (rc == PS_OK && !o)
        rc = PS_E_NOMEM;
    int i = 0;
    for (const cJSON *e = qs->child; rc == PS_OK && e; e = e->next, i++) {
        char where[48];
        snprintf(where, sizeof where, "predict: queries[%d]", i);
        rc = read_query(e, where, info.gpu, &q[i]);
    }
    size_t m = (size_t)n;
    if (rc == PS_OK)
        rc = ps_model_predict_compose(in->model, in->ops, q, m, compose, o, o + m, o + 2 * m, o + 3 * m);
    if (rc == PS_OK && coverage > 0)
        rc = ps_model_predict_bound(in->model, in->ops, q, m, coverage, o + 4 * m, o + 5 * m);
    for (size_t k = 0; rc == PS_OK && k < m; k++) {
        o[2 * m + k] = o[k] / o[2 * m + k]; /* the deltas, as `pairsight predict` divides */
        o[3 * m + k] = o[m + k] / o[3 * m + k];
    }
    if (rc == PS_OK)
        rc = predict_reply(o, n, compose, coverage, out);
    free(q);
    free(o);
    return rc;
}

/* ---- explain: ps_model_explain of one query ---- */

static const ps_param_t explain_params[] = {
    {"query", PS_PARAM_STR, 0, 0, 0, "OBJECT", NULL,
     "the query: an object with a query's fields (gpu defaults to the model's); its segments fit in one window", 0},
};

static int explain_run(const ps_op_inputs_t *in, const char *text, const cJSON *req, void *p, char **out)
{
    (void)text;
    (void)p;
    ps_model_info_t info;
    ps_query_t q;
    ps_explanation_t *e = NULL;
    int rc = ps_model_info(in->model, &info);
    if (rc == PS_OK)
        rc = read_query(cJSON_GetObjectItemCaseSensitive(req, "query"), "explain: query", info.gpu, &q);
    if (rc == PS_OK)
        rc = ps_model_explain(in->model, in->ops, &q, &e);
    if (rc == PS_OK)
        rc = ps_explanation_json(e, out);
    ps_explanation_free(e);
    return rc;
}

/* ---- replay: ps_replay_run of an HP request stream beside an LP task ---- */

#define REPLAY_P(f) offsetof(ps_replay_params_t, f)
static const ps_param_t replay_params[] = {
    {"requests", PS_PARAM_INT, REPLAY_P(requests), 10, 1000000, "N", NULL, "HP requests per policy", 0},
    {"load", PS_PARAM_DBL, REPLAY_P(load), 0, 1, "RHO", NULL, "HP utilization of the dedicated GPU",
     PS_PARAM_LO_OPEN | PS_PARAM_HI_OPEN},
    {"slo_factor", PS_PARAM_DBL, REPLAY_P(slo_factor), 1, 100, "F", NULL, "budget = F x the dedicated p99 latency", 0},
    {"coverage", PS_PARAM_DBL, REPLAY_P(coverage), 0.5, 0.999, "C", NULL, "coverage of pairsight_bound's upper bounds",
     0},
    {"stretch", PS_PARAM_DBL, REPLAY_P(stretch), 1, 1e9, "S",
     "tuned per planner on the warm-up stream, as orion's threshold",
     "planners budget the service of a request with no queue behind it at most S x its dedicated latency (1e9: no "
     "cap, plan to the deadline)",
     0},
    {"time_value", PS_PARAM_DBL, REPLAY_P(time_value), 0, 100, "V", NULL,
     "planners: LP work an HP nanosecond is worth (1: LP runs alone while HP is idle; 0: the most LP work the "
     "budget allows)",
     0},
    {"orion_lp_tpcs", PS_PARAM_INT, REPLAY_P(orion_lp_tpcs), 1, 4096, "N", "tuned on the warm-up stream",
     "orion: the LP side's TPCs fixed (a split profiled for both models; HP gets the rest) instead of tuned", 0},
    {"warmup", PS_PARAM_INT, REPLAY_P(warmup), 10, 100000, "N", NULL,
     "warm-up requests per probe (orion's threshold, the planners' stretch)", 0},
    {"seed", PS_PARAM_U64, REPLAY_P(seed), 0, 2147483647.0, "N", NULL, "arrivals and run noise", 0},
    {"hp", PS_PARAM_STR, 0, 0, 0, "MODEL:BATCH", NULL, "the HP model; a request is its whole operator sequence", 0},
    {"lp", PS_PARAM_STR, 0, 0, 0, "MODEL:BATCH", NULL, "the always-backlogged LP model", 0},
    {"gpu", PS_PARAM_STR, 0, 0, 0, "NAME", NULL, "GPU of the replay (the model's, else a100)", 0},
    {"policies", PS_PARAM_STR, 0, 0, 0, "LIST", NULL,
     "dedicated,static,orion,intensity,pairsight,pairsight_bound,oracle or all (all)", 0},
};

static void replay_init(void *p) { *(ps_replay_params_t *)p = ps_replay_default_params(); }

/* String member key of req as MODEL:BATCH into name[64] and *batch. */
static int model_batch(const cJSON *req, const char *key, char *name, int *batch)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, key);
    if (!cJSON_IsString(v) || ps_model_batch_parse(v->valuestring, name, batch) != 0)
        return psi_error(PS_E_ARG, "replay: %s: expected MODEL:BATCH, e.g. resnet50:8", key);
    return PS_OK;
}

static int replay_run(const ps_op_inputs_t *in, const char *text, const cJSON *req, void *params, char **out)
{
    (void)text;
    ps_replay_params_t *p = params;
    char hp[64], lp[64];
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(req, "gpu"),
                *pol = cJSON_GetObjectItemCaseSensitive(req, "policies");
    int rc = model_batch(req, "hp", hp, &p->hp_batch);
    if (rc == PS_OK)
        rc = model_batch(req, "lp", lp, &p->lp_batch);
    if (rc == PS_OK && pol &&
        (!cJSON_IsString(pol) || ps_replay_policies_parse(pol->valuestring, &p->policies) != PS_OK))
        rc = psi_error(PS_E_ARG, "replay: policies: expected a comma-separated list of policies, or all");
    if (rc == PS_OK && g && !cJSON_IsString(g))
        rc = psi_error(PS_E_ARG, "replay: gpu: expected a GPU's name");
    if (rc != PS_OK)
        return rc;
    p->hp_model = hp;
    p->lp_model = lp;
    p->intensity_train = in->coexec;
    ps_replay_result_t r;
    memset(&r, 0, sizeof r);
    rc = ps_replay_run(in->model, in->ops, g ? g->valuestring : in->model ? NULL : "a100", p, &r);
    if (rc == PS_OK)
        rc = ps_replay_result_json(&r, NULL, out);
    ps_replay_result_free(&r);
    return rc;
}

/* ---- colocate_shares: ps_coloc_shares_json, which reads its request ---- */

static void no_init(void *p) { (void)p; }

static int shares_run(const ps_op_inputs_t *in, const char *text, const cJSON *req, void *p, char **out)
{
    (void)req;
    (void)p;
    return ps_coloc_shares_json(in->coloc, in->workloads, in->scaling, text && *text ? text : "{}", out);
}

/* ---- colocate_predict: ps_coloc_predict_set of one co-location set ---- */

static const ps_param_t coloc_predict_params[] = {
    {"set", PS_PARAM_STR, 0, 0, 0, "LIST", NULL,
     "the co-located workloads: names of the workloads table, \"a,b\" or a list (1..64 of them)", 0},
    {"gpu", PS_PARAM_STR, 0, 0, 0, "NAME", NULL,
     "their GPU in the workloads table (default: the model's first GPU that knows every workload of the set)", 0},
    {"shares", PS_PARAM_STR, 0, 0, 0, "LIST", NULL,
     "MPS percentage of each workload, in the set's order: a list of integers in 1..100 (default 100 each)", 0},
};

/* A co-location set's request and its prediction. */
typedef struct {
    char buf[4096], gpu[128];                 /* the names (split in place), the GPU */
    const char *names[PS_COLOC_SET_MAXK + 1]; /* into buf */
    int k, shares[PS_COLOC_SET_MAXK];
    double tput[PS_COLOC_SET_MAXK], sum;
} coloc_req_t;

/* Member set ("a,b" or ["a", "b"]) into r's names. */
static int coloc_set(const cJSON *req, coloc_req_t *r)
{
    const char **names = r->names;
    int *k = &r->k;
    *k = 0;
    int rc = join_member(req, "set", ',', 0, r->buf, sizeof r->buf);
    if (rc != PS_OK)
        return rc;
    char *save = NULL;
    for (char *s = strtok_r(r->buf, ",", &save); s && *k < PS_COLOC_SET_MAXK + 1; s = strtok_r(NULL, ",", &save))
        names[(*k)++] = s;
    if (*k < 1 || *k > PS_COLOC_SET_MAXK)
        return psi_error(PS_E_ARG,
                         "colocate_predict: set: expected 1..%d workload names, \"a,b\" or a list (%zu characters "
                         "at most)",
                         PS_COLOC_SET_MAXK, sizeof r->buf - 1);
    return PS_OK;
}

/* Member shares (a list of k integers in 1..100, or absent: 100 each). */
static int coloc_shares(const cJSON *v, coloc_req_t *r)
{
    int k = r->k, *shares = r->shares;
    for (int i = 0; i < k; i++)
        shares[i] = 100;
    if (!v)
        return PS_OK;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != k)
        return psi_error(PS_E_ARG,
                         "colocate_predict: shares: expected a list of %d integers in 1..100 (one a workload)", k);
    int i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        double d = cJSON_IsNumber(e) ? e->valuedouble : NAN;
        if (!(d == floor(d) && d >= 1 && d <= 100))
            return psi_error(PS_E_ARG, "colocate_predict: shares[%d]: expected an integer in 1..100", i);
        shares[i] = (int)d;
    }
    return PS_OK;
}

/* The default GPU: the model's first that knows every workload of the set. */
static int coloc_gpu(const ps_op_inputs_t *in, coloc_req_t *r)
{
    char *gpu = r->gpu;
    size_t cap = sizeof r->gpu;
    const char *list = ps_coloc_model_gpu(in->coloc);
    for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        snprintf(gpu, cap, "%.*s", (int)strcspn(p, ","), p);
        int all = 1;
        for (int i = 0; all && i < r->k; i++)
            all = !isnan(ps_coloc_solo(in->workloads, NULL, gpu, r->names[i], 100));
        if (all)
            return PS_OK;
    }
    return psi_error(PS_E_ARG, "colocate_predict: gpu: none given, and no GPU of the model (%s) knows every workload",
                     list && *list ? list : "none recorded");
}

static int coloc_predict_reply(const coloc_req_t *r, char **out)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "schema", "pairsight.coloc_predict.v1");
    cJSON_AddStringToObject(j, "gpu", r->gpu);
    cJSON *s = cJSON_AddArrayToObject(j, "set"), *sh = cJSON_AddArrayToObject(j, "shares"),
          *t = cJSON_AddArrayToObject(j, "tput_pred");
    for (int i = 0; s && sh && t && i < r->k; i++) {
        cJSON_AddItemToArray(s, cJSON_CreateString(r->names[i]));
        cJSON_AddItemToArray(sh, cJSON_CreateNumber(r->shares[i]));
        cJSON_AddItemToArray(t, isnan(r->tput[i]) ? cJSON_CreateNull() : cJSON_CreateNumber(r->tput[i]));
    }
    cJSON_AddNumberToObject(j, "tput_sum_pred", r->sum);
    *out = j ? psi_json_print(j, 0) : NULL;
    cJSON_Delete(j);
    return *out ? PS_OK : psi_error(PS_E_NOMEM, "out of memory writing JSON");
}

static int coloc_predict_run(const ps_op_inputs_t *in, const char *text, const cJSON *req, void *p, char **out)
{
    (void)text;
    (void)p;
    coloc_req_t r;
    memset(&r, 0, sizeof r);
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(req, "gpu");
    int rc = coloc_set(req, &r);
    if (rc == PS_OK)
        rc = coloc_shares(cJSON_GetObjectItemCaseSensitive(req, "shares"), &r);
    if (rc == PS_OK && g &&
        (!cJSON_IsString(g) || (size_t)snprintf(r.gpu, sizeof r.gpu, "%s", g->valuestring) >= sizeof r.gpu))
        rc = psi_error(PS_E_ARG, "colocate_predict: gpu: expected a GPU's name");
    else if (rc == PS_OK && !g)
        rc = coloc_gpu(in, &r);
    if (rc == PS_OK)
        rc = ps_coloc_predict_set(in->coloc, in->workloads, in->scaling, r.gpu, r.names, r.shares, r.k, r.tput, &r.sum);
    if (rc == PS_OK)
        rc = coloc_predict_reply(&r, out);
    return rc;
}

/* ---- colocate_select: ps_coloc_select of a target's candidate co-runners ---- */

static const ps_param_t coloc_select_params[] = {
    {"target", PS_PARAM_STR, 0, 0, 0, "NAME", NULL, "the target workload (a name of the workloads table)", 0},
    {"candidates", PS_PARAM_STR, 0, 0, 0, "LIST", NULL,
     "the candidate co-runners: \"b,c+d\" or a list [\"b\", \"c+d\"] (a+b co-locates several at once, at most 63)", 0},
    {"gpu", PS_PARAM_STR, 0, 0, 0, "NAME", NULL, "the query's gpu (default: the target's, if on one GPU)", 0},
    {"shares", PS_PARAM_STR, 0, 0, 0, "LIST", NULL,
     "MPS shares of the target, then of each co-runner (the last repeated): \"50/25\" or a list (100 each)", 0},
};

static int coloc_select_run(const ps_op_inputs_t *in, const char *text, const cJSON *req, void *p, char **out)
{
    (void)text;
    (void)p;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(req, "target"), *g = cJSON_GetObjectItemCaseSensitive(req, "gpu");
    char cands[16384], shares[512];
    ps_coloc_select_params_t sp = {.target = cJSON_IsString(t) ? t->valuestring : NULL};
    if (!sp.target)
        return psi_error(PS_E_ARG, "colocate_select: target: expected a workload name");
    if (g && !cJSON_IsString(g))
        return psi_error(PS_E_ARG, "colocate_select: gpu: expected a GPU's name");
    sp.gpu = g ? g->valuestring : NULL;
    int rc = join_member(req, "candidates", ',', 0, cands, sizeof cands);
    if (rc == PS_OK && cJSON_GetObjectItemCaseSensitive(req, "shares"))
        rc = join_member(req, "shares", '/', 1, shares, sizeof shares);
    if (rc != PS_OK)
        return psi_error_prefix(rc, "colocate_select");
    sp.candidates = cands;
    sp.shares = cJSON_GetObjectItemCaseSensitive(req, "shares") ? shares : NULL;
    ps_coloc_selection_t s = {0};
    if (rc == PS_OK)
        rc = ps_coloc_select(in->coloc, in->workloads, in->scaling, &sp, &s);
    if (rc == PS_OK)
        rc = ps_coloc_selection_json(in->coloc, sp.target, &s, out);
    ps_coloc_selection_free(&s);
    return rc;
}

/* ---- colocate_place: ps_coloc_place of jobs over a cluster ---- */

#define PLACE_P(f) offsetof(ps_coloc_place_params_t, f)
static const ps_param_t coloc_place_params[] = {
    {"jobs", PS_PARAM_STR, 0, 0, 0, "LIST", NULL, "the jobs: \"a,b*3,c\" or a list of names (64 at most)", 0},
    {"max_per_gpu", PS_PARAM_INT, PLACE_P(max_per_gpu), 1, 8, "K", NULL, "most jobs on one GPU", 0},
    {"gpus", PS_PARAM_STR, 0, 0, 0, "N[:TYPE],...", NULL,
     "the GPUs: N (each job's own row's type), \"4:v100,4:p100\" (TYPE: the gpu column of the workloads table) or "
     "a list of types (null: the job's own), 64 at most",
     0},
    {"time_limit", PS_PARAM_DBL, PLACE_P(time_limit_s), 0, 86400, "S", NULL,
     "search budget in seconds: past it the best placement found, said so (0: none)", PS_PARAM_BUDGET},
    {"shares", PS_PARAM_STR, 0, 0, 0, "LIST", NULL, "a co-located job's shares, up to 4: \"100,50\" or a list (100)",
     0},
    {"allow_wait", PS_PARAM_STR, 0, 0, 0, "BOOL", NULL,
     "true: a job may wait when co-locating it lowers the sum (default false: every job runs while the GPUs have "
     "room)",
     0},
};

static void place_init(void *p) { *(ps_coloc_place_params_t *)p = ps_coloc_place_default_params(); }

/* Member gpus into text as the command line writes it: a count, a string
 * ("4:v100,4:p100"), or a list of types and nulls ("1:v100,1"). */
static int gpus_member(const cJSON *v, char *text, size_t cap)
{
    size_t at = 0;
    text[0] = 0;
    if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 1e6)
        return snprintf(text, cap, "%d", (int)v->valuedouble) < 0 ? PS_E_ARG : PS_OK;
    if (cJSON_IsString(v) && (size_t)snprintf(text, cap, "%s", v->valuestring) < cap)
        return PS_OK;
    for (const cJSON *e = cJSON_IsArray(v) ? v->child : NULL; e; e = e->next) {
        int ok = cJSON_IsNull(e) || (cJSON_IsString(e) && *e->valuestring && !strchr(e->valuestring, ','));
        int n = ok ? snprintf(text + at, cap - at, "%s1%s%s", at ? "," : "", cJSON_IsNull(e) ? "" : ":",
                              cJSON_IsNull(e) ? "" : e->valuestring)
                   : -1;
        if (n < 0 || (size_t)n >= cap - at)
            break;
        at += (size_t)n;
        if (!e->next)
            return PS_OK;
    }
    return psi_error(PS_E_ARG,
                     "colocate_place: gpus: expected a count, \"N:TYPE,...\" or a non-empty list of types and nulls "
                     "(%zu characters at most)",
                     cap - 1);
}

/* The cluster of the request into cl, allow_wait and its shares into p. */
static int place_cluster(const ps_op_inputs_t *in, const cJSON *req, ps_coloc_place_params_t *p, ps_coloc_cluster_t *cl)
{
    const cJSON *aw = cJSON_GetObjectItemCaseSensitive(req, "allow_wait"),
                *sh = cJSON_GetObjectItemCaseSensitive(req, "shares");
    char jobs[4096], gpus[4096], shares[256];
    if (aw && !cJSON_IsBool(aw))
        return psi_error(PS_E_ARG, "colocate_place: allow_wait: expected true or false");
    p->allow_wait = cJSON_IsTrue(aw);
    int rc = join_member(req, "jobs", ',', 0, jobs, sizeof jobs);
    if (rc == PS_OK && sh)
        rc = join_member(req, "shares", ',', 1, shares, sizeof shares);
    if (rc != PS_OK)
        return psi_error_prefix(rc, "colocate_place");
    if ((rc = gpus_member(cJSON_GetObjectItemCaseSensitive(req, "gpus"), gpus, sizeof gpus)) != PS_OK)
        return rc;
    ps_coloc_cluster_spec_t spec = {jobs, gpus, sh ? shares : NULL, NULL, NULL};
    if ((rc = ps_coloc_cluster_parse(in->workloads, &spec, cl)) != PS_OK)
        return rc;
    p->shares = cl->n_shares ? cl->shares : NULL;
    p->n_shares = cl->n_shares;
    return PS_OK;
}

static int coloc_place_run(const ps_op_inputs_t *in, const char *text, const cJSON *req, void *params, char **out)
{
    (void)text;
    ps_coloc_place_params_t *p = params;
    ps_coloc_cluster_t cl = {0};
    ps_coloc_placement_t pl = {0};
    int rc = place_cluster(in, req, p, &cl);
    if (rc == PS_OK)
        rc = ps_coloc_place(in->coloc, in->workloads, in->scaling, cl.jobs, cl.n_jobs, cl.types, cl.n_gpus, p, &pl);
    if (rc == PS_OK)
        rc = ps_coloc_placement_json(in->coloc, &cl, &pl, p->max_per_gpu, out);
    ps_coloc_placement_free(&pl);
    ps_coloc_cluster_free(&cl);
    return rc;
}

/* ---- overlap_predict: ps_ov_predict of an overlap table's experiments ---- */

static const ps_param_t overlap_params[] = {
    {"ov_model", PS_PARAM_STR, 0, 0, 0, "FILE", NULL, "a model file of pairsight overlap train", 0},
    {"overlap", PS_PARAM_STR, 0, 0, 0, "FILE", NULL, "overlap.csv whose experiments to predict", 0},
    {"oplists", PS_PARAM_STR, 0, 0, 0, "DIR", "none", "operator lists, when the model was trained with them", 0},
};

/* String member key of req (NULL when absent and optional). */
static int path_member(const cJSON *req, const char *key, int optional, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, key);
    *out = cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
    if (*out || (optional && !v))
        return PS_OK;
    return psi_error(PS_E_ARG, "overlap_predict: %s: expected a path", key);
}

/* Each experiment: its id, the predicted makespan (null where a slot's solo
 * time is unknown to the model) and the measured median; the count
 * predicted and their MAPE against the median, as `pairsight overlap
 * predict` writes them. */
static int overlap_reply(const ps_overlap_t *t, const double *pred, char **out)
{
    size_t count = ps_overlap_count(t), n = 0;
    double err = 0;
    cJSON *j = cJSON_CreateObject(), *a = cJSON_CreateArray();
    for (size_t i = 0; j && a && i < count; i++) {
        ps_ov_experiment_t e;
        cJSON *o = cJSON_CreateObject();
        ps_overlap_experiment(t, i, &e);
        cJSON_AddStringToObject(o, "experiment", e.id);
        cJSON_AddItemToObject(o, "predicted_us", isfinite(pred[i]) ? cJSON_CreateNumber(pred[i]) : cJSON_CreateNull());
        cJSON_AddNumberToObject(o, "median_us", e.median_us);
        cJSON_AddItemToArray(a, o);
        if (isfinite(pred[i])) {
            err += fabs(pred[i] - e.median_us) / e.median_us;
            n++;
        }
    }
    cJSON_AddStringToObject(j, "schema", "pairsight.overlap_predict.v1");
    cJSON_AddNumberToObject(j, "n", (double)count);
    cJSON_AddNumberToObject(j, "predicted", (double)n);
    cJSON_AddItemToObject(j, "mape_pct", n ? cJSON_CreateNumber(100.0 * err / (double)n) : cJSON_CreateNull());
    cJSON_AddItemToObject(j, "experiments", a);
    *out = j ? psi_json_print(j, 0) : NULL;
    cJSON_Delete(j);
    return *out ? PS_OK : psi_error(PS_E_NOMEM, "out of memory writing JSON");
}

static int overlap_run(const ps_op_inputs_t *in, const char *text, const cJSON *req, void *p, char **out)
{
    (void)in;
    (void)text;
    (void)p;
    const char *model, *path, *oplists;
    ps_overlap_t *t = NULL;
    ps_ov_model_t *m = NULL;
    double *pred = NULL;
    int rc = path_member(req, "ov_model", 0, &model);
    if (rc == PS_OK)
        rc = path_member(req, "overlap", 0, &path);
    if (rc == PS_OK)
        rc = path_member(req, "oplists", 1, &oplists);
    if (rc == PS_OK)
        rc = ps_ov_model_load(model, &m);
    if (rc == PS_OK)
        rc = ps_overlap_load(path, &t);
    if (rc == PS_OK && !(pred = psi_calloc(ps_overlap_count(t) + 1, sizeof *pred)))
        rc = PS_E_NOMEM;
    if (rc == PS_OK)
        rc = ps_ov_predict(m, t, oplists, pred);
    if (rc == PS_OK)
        rc = overlap_reply(t, pred, out);
    free(pred);
    ps_ov_model_free(m);
    ps_overlap_free(t);
    return rc;
}

/* ---- colocate_score: ps_coloc_score_json, which reads its request ---- */

static int score_run(const ps_op_inputs_t *in, const char *text, const cJSON *req, void *p, char **out)
{
    (void)req;
    (void)p;
    return ps_coloc_score_json(in->coloc, in->workloads, in->scaling, text && *text ? text : "{}", NULL, out);
}

/* ---- the operations ---- */

static const op_t ops[] = {
    {"plan", "pairsight.plan.v1",
     "one HP request planned beside the LP candidate given the most LP work within a latency budget (pairsight plan, "
     "POST /v1/plan)",
     "model,ops", plan_params, N_OF(plan_params), sizeof(ps_plan_params_t), plan_init, plan_run, plan_check},
    {"predict", "pairsight.predict.v1",
     "co-execution latencies and slowdowns of candidate segment pairs (pairsight predict, POST /v1/predict)",
     "model,ops", predict_params, N_OF(predict_params), sizeof(predict_params_t), predict_init, predict_run, NULL},
    {"explain", "pairsight.explanation.v1",
     "which operators drive one prediction: SHAP contributions folded back to the named operators of both segments "
     "(pairsight explain, POST /v1/explain)",
     "model,ops", explain_params, N_OF(explain_params), 0, no_init, explain_run, NULL},
    {"replay", "pairsight.replay_result.v1",
     "an HP request stream replayed beside an always-backlogged LP task under each co-location policy, through the "
     "simulator's physics (pairsight replay)",
     "ops,model?,coexec?", replay_params, N_OF(replay_params), sizeof(ps_replay_params_t), replay_init, replay_run,
     NULL},
    {"colocate_shares", "pairsight.shares.v1",
     "the GPU shares of a set of co-located workloads (pairsight colocate shares, POST /v1/colocate/shares); "
     "its request is read by ps_coloc_shares_json (include/pairsight_colocate.h)",
     "coloc,workloads,scaling?", NULL, 0, 0, no_init, shares_run, NULL},
    {"colocate_predict", "pairsight.coloc_predict.v1",
     "the predicted throughput of each workload of one co-location set and their sum, as `pairsight colocate "
     "select` ranks a candidate (ps_coloc_predict_set)",
     "coloc,workloads,scaling?", coloc_predict_params, N_OF(coloc_predict_params), 0, no_init, coloc_predict_run, NULL},
    {"overlap_predict", "pairsight.overlap_predict.v1",
     "the makespan of every experiment of an overlap table, by a model of pairsight overlap train; its inputs are "
     "files named by its members (pairsight overlap predict)",
     "", overlap_params, N_OF(overlap_params), 0, no_init, overlap_run, NULL},
    {"colocate_select", "pairsight.colocate-select.v1",
     "a target's candidate co-runners ranked by the predicted throughput sum (pairsight colocate select, POST "
     "/v1/colocate/select; ps_coloc_select)",
     "coloc,workloads,scaling?", coloc_select_params, N_OF(coloc_select_params), 0, no_init, coloc_select_run, NULL},
    {"colocate_place", "pairsight.colocate-place.v1",
     "jobs assigned to GPUs, alone or up to max_per_gpu a GPU, maximizing the sum of predicted normalized "
     "throughputs within a time budget (pairsight colocate place, POST /v1/colocate/place; ps_coloc_place)",
     "coloc,workloads,scaling?", coloc_place_params, N_OF(coloc_place_params), sizeof(ps_coloc_place_params_t),
     place_init, coloc_place_run, NULL},
    {"colocate_score", "pairsight.colocate_score.v1",
     "a target workload scored beside candidate co-runner sets, ranked by normalised throughput (POST "
     "/v1/colocate/score); its request is read by ps_coloc_score_json (include/pairsight_colocate.h)",
     "coloc,workloads,scaling?", NULL, 0, 0, no_init, score_run, NULL},
    {"collect", "pairsight.collect.v1",
     "collect's workflow (pairsight collect profile|counters|coexec|scaling|colocate): a campaign on a GPU, or one "
     "shard per device merged, resumed where it stopped, or MPS rows added to their tables; what it measured "
     "(ps_collect_job_run; no service route: a campaign holds its GPU for hours)",
     "", psi_op_collect_params, PSI_OP_COLLECT_N, sizeof(psi_op_collect_t), psi_op_collect_init, psi_op_collect_run,
     NULL},
};

static const op_t *find(const char *name)
{
    for (int i = 0; name && i < N_OF(ops); i++)
        if (strcmp(ops[i].name, name) == 0)
            return &ops[i];
    return NULL;
}

/* The names of ps_op_inputs_t's members, in order: the struct is that
 * many pointers and nothing else, so a binding fills an array by name. */
#define AT(f, i) (offsetof(ps_op_inputs_t, f) == (i) * sizeof(void *))
_Static_assert(sizeof(ps_op_inputs_t) == 6 * sizeof(void *) && AT(model, 0) && AT(ops, 1) && AT(coloc, 2) &&
                   AT(workloads, 3) && AT(scaling, 4) && AT(coexec, 5),
               "ps_op_inputs_names lists ps_op_inputs_t's pointers in order");

const char *ps_op_inputs_names(void) { return "model,ops,coloc,workloads,scaling,coexec"; }

/* The inputs an operation needs (the names of its needs without '?') that
 * in lacks, refused in one message naming what it needs and what is
 * missing. */
static int check_inputs(const op_t *o, const ps_op_inputs_t *in)
{
    static const char *const name[] = {"model", "ops", "coloc", "workloads", "scaling", "coexec"};
    static const char *const what[] = {
        "a model",           "an operator table", "a co-location model", "its workloads table",
        "its scaling table", "a coexec table"};
    const void *const ptr[] = {in->model, in->ops, in->coloc, in->workloads, in->scaling, in->coexec};
    char need[256] = "", missing[128] = "";
    int n_need = 0, n_missing = 0;
    for (const char *p = o->needs; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        size_t len = strcspn(p, ",");
        for (int i = 0; p[len - 1] != '?' && i < N_OF(name); i++) {
            if (strlen(name[i]) != len || strncmp(name[i], p, len) != 0)
                continue;
            size_t at = strlen(need);
            snprintf(need + at, sizeof need - at, "%s%s (%s)", n_need++ ? " and " : "", what[i], name[i]);
            at = strlen(missing);
            if (!ptr[i])
                snprintf(missing + at, sizeof missing - at, "%s%s", n_missing++ ? ", " : "", name[i]);
        }
    }
    return n_missing ? psi_error(PS_E_ARG, "%s: needs %s; missing: %s", o->name, need, missing) : PS_OK;
}

const char *ps_op_name(int i) { return i >= 0 && i < N_OF(ops) ? ops[i].name : NULL; }

const char *ps_op_needs(const char *op)
{
    const op_t *o = find(op);
    return o ? o->needs : NULL;
}

const ps_param_t *ps_op_params(const char *op, int *n)
{
    const op_t *o = find(op);
    if (n)
        *n = o ? o->n_params : 0;
    return o ? o->params : NULL;
}

const char *ps_op_help(const char *op)
{
    const op_t *o = find(op);
    return o ? o->help : NULL;
}

size_t ps_op_defaults(const char *op, void *params, size_t size)
{
    const op_t *o = find(op);
    if (o && params && size >= o->size && o->size)
        o->init(params);
    return o ? o->size : 0;
}

static int unknown_op(const char *where, const char *name)
{
    char known[256];
    size_t at = 0;
    known[0] = 0;
    for (int i = 0; i < N_OF(ops); i++)
        at += (size_t)snprintf(known + at, sizeof known - at, "%s%s", i ? ", " : "", ops[i].name);
    return psi_error(PS_E_ARG, "%s: unknown operation '%s' (known: %s)", where, name ? name : "(null)", known);
}

int ps_op_check(const char *op, const void *params)
{
    const op_t *o = find(op);
    if (!o || !params)
        return o ? psi_error(PS_E_ARG, "ps_op_check: NULL params") : unknown_op("ps_op_check", op);
    return o->check ? o->check(params) : PS_OK;
}

/* Not inlined: gcc -O2, seeing the defaults through the table's offsets,
 * warns that they may be uninitialized (as config.c's defaults_json). */
__attribute__((noinline)) static cJSON *param_json(const ps_param_t *r, const void *defaults)
{
    cJSON *o = cJSON_CreateObject();
    const char *at = (const char *)defaults + r->offset;
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "type", r->type == PS_PARAM_DBL ? "number" : r->type == PS_PARAM_STR ? "string" : "int");
    if (r->type == PS_PARAM_STR) {
        cJSON_AddNullToObject(o, "default");
        cJSON_AddStringToObject(o, "help", r->help);
        return o;
    }
    cJSON_AddNumberToObject(o, "min", r->lo);
    cJSON_AddNumberToObject(o, "max", r->hi);
    double def = r->type == PS_PARAM_INT   ? *(const int *)(const void *)at
                 : r->type == PS_PARAM_U64 ? (double)*(const uint64_t *)(const void *)at
                                           : *(const double *)(const void *)at;
    if (r->none && def == 0)
        cJSON_AddNullToObject(o, "default");
    else
        cJSON_AddNumberToObject(o, "default", def);
    cJSON_AddStringToObject(o, "help", r->help);
    return o;
}

int ps_op_params_json(const char *op, char **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_op_params_json: NULL out");
    *out = NULL;
    const op_t *o = find(op);
    if (!o)
        return unknown_op("ps_op_params_json", op);
    void *defaults = psi_calloc(1, o->size ? o->size : 1);
    cJSON *j = defaults ? cJSON_CreateObject() : NULL, *params = cJSON_CreateArray(), *members = cJSON_CreateArray();
    if (j && params && members) {
        o->init(defaults);
        cJSON_AddStringToObject(j, "schema", "pairsight.op.v1");
        cJSON_AddStringToObject(j, "name", o->name);
        cJSON_AddStringToObject(j, "result", o->result);
        cJSON_AddStringToObject(j, "help", o->help);
        cJSON_AddStringToObject(j, "needs", o->needs);
        for (int i = 0; i < o->n_params; i++) {
            cJSON_AddItemToArray(params, param_json(&o->params[i], defaults));
            if (o->params[i].type == PS_PARAM_STR)
                cJSON_AddItemToArray(members, cJSON_CreateString(o->params[i].name));
        }
        cJSON_AddItemToObject(j, "params", params);
        cJSON_AddItemToObject(j, "members", members);
        params = members = NULL;
        *out = psi_json_print(j, 0);
    }
    cJSON_Delete(j);
    cJSON_Delete(params);
    cJSON_Delete(members);
    free(defaults);
    return *out ? PS_OK : psi_error(PS_E_NOMEM, "out of memory writing JSON");
}

/* Whether number d is within row r's bounds. */
static int in_bounds(const ps_param_t *r, double d)
{
    return d >= r->lo && d <= r->hi && !(r->flags & PS_PARAM_LO_OPEN && d == r->lo) &&
           !(r->flags & PS_PARAM_HI_OPEN && d == r->hi);
}

/* Member v of the request into row r of the parameter struct p. */
static int set_param(const char *op, const ps_param_t *r, const cJSON *v, void *p)
{
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!in_bounds(r, d))
        return psi_error(PS_E_ARG, "%s: %s: expected a number in %g..%g%s", op, r->name, r->lo, r->hi,
                         r->flags & (PS_PARAM_LO_OPEN | PS_PARAM_HI_OPEN) ? " (an open bound excluded)" : "");
    if (r->type != PS_PARAM_DBL && d != floor(d))
        return psi_error(PS_E_ARG, "%s: %s: bad value '%g': expected an integer", op, r->name, d);
    char *at = (char *)p + r->offset;
    if (r->type == PS_PARAM_INT)
        *(int *)(void *)at = (int)d;
    else if (r->type == PS_PARAM_U64)
        *(uint64_t *)(void *)at = (uint64_t)d;
    else
        *(double *)(void *)at = d;
    return PS_OK;
}

/* Every member of req: a row of the table (into p, or left to the run
 * function for a PS_PARAM_STR row); any other is refused, naming the
 * known ones. */
static int read_members(const op_t *o, const cJSON *req, void *p)
{
    for (const cJSON *v = req ? req->child : NULL; v; v = v->next) {
        int i = 0;
        while (i < o->n_params && strcmp(o->params[i].name, v->string) != 0)
            i++;
        if (i < o->n_params && o->params[i].type != PS_PARAM_STR) {
            int rc = set_param(o->name, &o->params[i], v, p);
            if (rc != PS_OK)
                return rc;
        } else if (i == o->n_params) {
            char list[512];
            size_t at = 0;
            list[0] = 0;
            for (int k = 0; k < o->n_params; k++)
                at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", at ? ", " : "", o->params[k].name);
            return psi_error(PS_E_ARG, "%s: unknown member '%s' (known: %s)", o->name, v->string, list);
        }
    }
    return PS_OK;
}

int ps_op_run(const char *op, const ps_op_inputs_t *in, const char *params, char **out)
{
    if (!out || !in)
        return psi_error(PS_E_ARG, "ps_op_run: NULL %s", out ? "in" : "out");
    *out = NULL;
    const op_t *o = find(op);
    if (!o)
        return unknown_op("ps_op_run", op);
    if (!o->n_params)
        return check_inputs(o, in) == PS_OK ? o->run(in, params, NULL, NULL, out) : PS_E_ARG;
    cJSON *req = NULL;
    int rc = params && *params ? psi_json_parse(params, strlen(params), o->name, &req) : PS_OK;
    if (rc == PS_OK && req && !cJSON_IsObject(req))
        rc = psi_error(PS_E_ARG, "%s: the request is not a JSON object", o->name);
    void *p = psi_calloc(1, o->size ? o->size : 1);
    if (rc == PS_OK && !p)
        rc = PS_E_NOMEM;
    if (rc == PS_OK) {
        o->init(p);
        rc = read_members(o, req, p);
    }
    if (rc == PS_OK)
        rc = check_inputs(o, in);
    if (rc == PS_OK)
        rc = o->run(in, params, req, p, out);
    free(p);
    cJSON_Delete(req);
    return rc;
}
