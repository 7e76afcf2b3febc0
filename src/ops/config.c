/*
 * Parameters as JSON text, for language bindings (python/pairsight), as
 * XGBoost's C API takes its configuration: a binding passes
 * {"max_rounds": 60, "depths": [6]} and never mirrors a parameter struct,
 * so a field added to a struct cannot shift a binding's layout. Each struct
 * has one table of its plain fields (name, type, offsetof), read both ways:
 * JSON into the struct (unknown keys refused, naming the known ones; integers
 * range-checked) and the struct's defaults out as JSON. Enumerations are
 * written and read by the names of the ps_*_name and ps_*_from_name calls.
 * This file calls only the public API (include/pairsight.h).
 */
#include "pairsight.h"

#include "common/common.h"
#include "ops/ops.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { F_INT, F_U64, F_DBL, F_STR } ftype_t;

typedef struct {
    const char *name;
    ftype_t type;
    size_t off;
} field_t;

/* A struct's plain fields, and a hook for the others (enumerations by name,
 * short arrays): set returns 1 when the key is not its, put adds them. */
typedef struct {
    const char *what;
    const field_t *fields;
    int n;
    const char *const *special; /* keys the hooks own, NULL-terminated */
    int (*set)(void *p, const char *key, const cJSON *v, const char *what);
    int (*put)(const void *p, cJSON *o);
} spec_t;

#define FLD(T, f, t)                                                                                                   \
    {                                                                                                                  \
#f, t, offsetof(T, f)                                                                                          \
    }
#define FLDP(T, f, t)                                                                                                  \
    {                                                                                                                  \
#f, t, offsetof(T, p.f)                                                                                        \
    } /* a field of the wrapped params */
#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- values ---- */

static int get_int(const cJSON *v, const char *what, const char *key, int *out)
{
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!(d == floor(d)) || d < INT_MIN || d > INT_MAX)
        return psi_error(PS_E_ARG, "%s: %s must be an integer from %d to %d", what, key, INT_MIN, INT_MAX);
    *out = (int)d;
    return PS_OK;
}

static int get_u64(const cJSON *v, const char *what, const char *key, uint64_t *out)
{
    /* A number is exact up to 2^53; a larger seed comes as a decimal string. */
    if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && v->valuedouble >= 0 &&
        v->valuedouble <= 9007199254740992.0) {
        *out = (uint64_t)v->valuedouble;
        return PS_OK;
    }
    char *end = NULL;
    if (cJSON_IsString(v) && v->valuestring[0] >= '0' && v->valuestring[0] <= '9') {
        unsigned long long u = strtoull(v->valuestring, &end, 10);
        if (*end == 0 && !(u == ULLONG_MAX)) {
            *out = (uint64_t)u;
            return PS_OK;
        }
    }
    return psi_error(PS_E_ARG, "%s: %s must be an integer from 0 to 2^64-1 (a string above 2^53)", what, key);
}

static int set_field(void *p, const field_t *f, const cJSON *v, const char *what)
{
    char *at = (char *)p + f->off;
    switch (f->type) {
    case F_INT: return get_int(v, what, f->name, (int *)(void *)at);
    case F_U64: return get_u64(v, what, f->name, (uint64_t *)(void *)at);
    case F_DBL:
        if (!cJSON_IsNumber(v))
            return psi_error(PS_E_ARG, "%s: %s must be a number", what, f->name);
        *(double *)(void *)at = v->valuedouble;
        return PS_OK;
    case F_STR:
        if (!cJSON_IsString(v) && !cJSON_IsNull(v))
            return psi_error(PS_E_ARG, "%s: %s must be a string", what, f->name);
        *(const char **)(void *)at = cJSON_IsNull(v) ? NULL : v->valuestring;
        return PS_OK;
    }
    return PS_E_ARG;
}

static void put_field(const void *p, const field_t *f, cJSON *o)
{
    const char *at = (const char *)p + f->off;
    switch (f->type) {
    case F_INT: cJSON_AddNumberToObject(o, f->name, *(const int *)(const void *)at); break;
    case F_U64: cJSON_AddNumberToObject(o, f->name, (double)*(const uint64_t *)(const void *)at); break;
    case F_DBL: cJSON_AddNumberToObject(o, f->name, *(const double *)(const void *)at); break;
    case F_STR: {
        const char *s = *(const char *const *)(const void *)at;
        if (s)
            cJSON_AddStringToObject(o, f->name, s);
        else
            cJSON_AddNullToObject(o, f->name);
        break;
    }
    }
}

/* "a, b, c" of every key spec knows, for the unknown-key message. */
static void known_keys(const spec_t *s, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < s->n && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s", at ? ", " : "", s->fields[i].name);
    for (const char *const *k = s->special; k && *k && at < cap; k++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s", at ? ", " : "", *k);
}

static int set_key(const spec_t *s, void *p, const cJSON *v)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->fields[i].name, v->string) == 0)
            return set_field(p, &s->fields[i], v, s->what);
    int rc = s->set ? s->set(p, v->string, v, s->what) : 1;
    if (rc != 1)
        return rc;
    char known[512];
    known_keys(s, known, sizeof known);
    return psi_error(PS_E_ARG, "%s: unknown key '%s' (known: %s)", s->what, v->string, known);
}

/* Parse text (NULL or "" = {}) onto p, which holds the defaults. *doc keeps
 * the strings p now points into; the caller deletes it after the call. */
static int apply(const spec_t *s, const char *text, void *p, cJSON **doc)
{
    *doc = NULL;
    if (!text || !*text)
        return PS_OK;
    int rc = psi_json_parse(text, strlen(text), s->what, doc);
    if (rc != PS_OK)
        return rc;
    if (!cJSON_IsObject(*doc))
        return psi_error(PS_E_ARG, "%s: not a JSON object", s->what);
    for (const cJSON *v = (*doc)->child; v && rc == PS_OK; v = v->next)
        rc = set_key(s, p, v);
    return rc;
}

static int to_text(cJSON *o, char **out)
{
    *out = o ? psi_json_print(o, 0) : NULL;
    cJSON_Delete(o);
    return *out ? PS_OK : psi_error(PS_E_NOMEM, "out of memory writing JSON");
}

/* Not inlined: gcc -O2, seeing the fields through the table's offsets, warns
 * that the defaults may be uninitialized (-Wmaybe-uninitialized). */
__attribute__((noinline)) static cJSON *defaults_json(const spec_t *s, const void *p)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < s->n; i++)
        put_field(p, &s->fields[i], o);
    if (o && s->put && s->put(p, o) != PS_OK) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* A short list of a struct: up to cap integers (ints) or numbers (dbls),
 * their count in *n. */
typedef struct {
    int cap, *n, *ints;
    double *dbls;
} list_t;

/* A JSON array of 1..cap numbers into the list l. */
static int get_array(const cJSON *v, const char *what, const char *key, const list_t *l)
{
    int k = cJSON_GetArraySize(v), cap = l->cap, *ints = l->ints;
    double *dbls = l->dbls;
    if (!cJSON_IsArray(v) || k < 1 || k > cap)
        return psi_error(PS_E_ARG, "%s: %s must be a list of 1 to %d numbers", what, key, cap);
    int i = 0, rc = PS_OK;
    for (const cJSON *e = v->child; e && rc == PS_OK; e = e->next, i++) {
        if (ints)
            rc = get_int(e, what, key, &ints[i]);
        else if (cJSON_IsNumber(e))
            dbls[i] = e->valuedouble;
        else
            rc = psi_error(PS_E_ARG, "%s: %s must be a list of numbers", what, key);
    }
    *l->n = k;
    return rc;
}

/* ---- ps_train_params_t ---- */

static const field_t train_fields[] = {
    FLD(ps_train_params_t, window, F_INT),         FLD(ps_train_params_t, seed, F_U64),
    FLD(ps_train_params_t, nthread, F_INT),        FLD(ps_train_params_t, max_rounds, F_INT),
    FLD(ps_train_params_t, early_stopping, F_INT), FLD(ps_train_params_t, subsample, F_DBL),
    FLD(ps_train_params_t, adapt_rounds, F_INT),   FLD(ps_train_params_t, adapt_eta, F_DBL),
    FLD(ps_train_params_t, adapt_depth, F_INT),    FLD(ps_train_params_t, grid_rows, F_INT),
};
static const char *const train_special[] = {"variant", "depths", "etas", NULL};

static int train_set(void *p, const char *key, const cJSON *v, const char *what)
{
    ps_train_params_t *t = p;
    if (strcmp(key, "variant") == 0) {
        if (!cJSON_IsString(v))
            return psi_error(PS_E_ARG, "%s: variant must be a name", what);
        return ps_feature_variant_from_name(v->valuestring, &t->variant);
    }
    if (strcmp(key, "depths") == 0)
        return get_array(v, what, key, &(list_t){4, &t->n_depths, t->depths, NULL});
    if (strcmp(key, "etas") == 0)
        return get_array(v, what, key, &(list_t){4, &t->n_etas, NULL, t->etas});
    return 1;
}

static int train_put(const void *p, cJSON *o)
{
    const ps_train_params_t *t = p;
    cJSON_AddStringToObject(o, "variant", ps_feature_variant_name(t->variant));
    cJSON_AddItemToObject(o, "depths", cJSON_CreateIntArray(t->depths, t->n_depths));
    cJSON_AddItemToObject(o, "etas", cJSON_CreateDoubleArray(t->etas, t->n_etas));
    return PS_OK;
}

static const spec_t train_spec = {"train config", train_fields, N_OF(train_fields),
                                  train_special,  train_set,    train_put};

/* ---- ps_coloc_params_t ---- */

static const field_t coloc_fields[] = {
    FLD(ps_coloc_params_t, seed, F_U64),
    FLD(ps_coloc_params_t, trees, F_INT),
    FLD(ps_coloc_params_t, mlp_epochs, F_INT),
    FLD(ps_coloc_params_t, boost_rounds, F_INT),
};
static const char *const coloc_special[] = {"kind", "auto_rule", NULL};
static const char *const auto_rules[] = {"blend", "pick", "within"};

static int coloc_set(void *p, const char *key, const cJSON *v, const char *what)
{
    ps_coloc_params_t *c = p;
    if (strcmp(key, "kind") == 0) {
        if (!cJSON_IsString(v))
            return psi_error(PS_E_ARG, "%s: kind must be a name", what);
        return ps_coloc_kind_from_name(v->valuestring, &c->kind);
    }
    if (strcmp(key, "auto_rule") != 0)
        return 1;
    for (int i = 0; i < PS_COLOC_AUTO_RULES; i++)
        if (cJSON_IsString(v) && strcmp(v->valuestring, auto_rules[i]) == 0) {
            c->auto_rule = i;
            return PS_OK;
        }
    return psi_error(PS_E_ARG, "%s: auto_rule must be blend, pick or within", what);
}

static int coloc_put(const void *p, cJSON *o)
{
    const ps_coloc_params_t *c = p;
    cJSON_AddStringToObject(o, "kind", ps_coloc_kind_name(c->kind));
    int r = c->auto_rule;
    cJSON_AddStringToObject(o, "auto_rule", r >= 0 && r < PS_COLOC_AUTO_RULES ? auto_rules[r] : "?");
    return PS_OK;
}

static const spec_t coloc_spec = {"colocate config", coloc_fields, N_OF(coloc_fields),
                                  coloc_special,     coloc_set,    coloc_put};

/* ---- ps_plan_params_t ---- */

static const field_t plan_fields[] = {
    FLD(ps_plan_params_t, gpu, F_STR),        FLD(ps_plan_params_t, hp_model, F_STR),
    FLD(ps_plan_params_t, hp_batch, F_INT),   FLD(ps_plan_params_t, lp_model, F_STR),
    FLD(ps_plan_params_t, lp_batch, F_INT),   FLD(ps_plan_params_t, lp_start, F_INT),
    FLD(ps_plan_params_t, budget_ns, F_DBL),  FLD(ps_plan_params_t, coverage, F_DBL),
    FLD(ps_plan_params_t, window, F_INT),     FLD(ps_plan_params_t, alone_run_ns, F_DBL),
    FLD(ps_plan_params_t, time_value, F_DBL), FLD(ps_plan_params_t, lp_lengths, F_INT),
};
static const spec_t plan_spec = {"plan config", plan_fields, N_OF(plan_fields), NULL, NULL, NULL};

/* ---- ps_replay_params_t, and the gpu argument of ps_replay_run ---- */

typedef struct {
    ps_replay_params_t p;
    const char *gpu;
} replay_config_t;

static const field_t replay_fields[] = {
    FLD(replay_config_t, gpu, F_STR),         FLDP(replay_config_t, hp_model, F_STR),
    FLDP(replay_config_t, hp_batch, F_INT),   FLDP(replay_config_t, lp_model, F_STR),
    FLDP(replay_config_t, lp_batch, F_INT),   FLDP(replay_config_t, requests, F_INT),
    FLDP(replay_config_t, load, F_DBL),       FLDP(replay_config_t, slo_factor, F_DBL),
    FLDP(replay_config_t, coverage, F_DBL),   FLDP(replay_config_t, seed, F_U64),
    FLDP(replay_config_t, warmup, F_INT),     FLDP(replay_config_t, noise, F_DBL),
    FLDP(replay_config_t, stretch, F_DBL),    FLDP(replay_config_t, time_value, F_DBL),
    FLDP(replay_config_t, goal_ratio, F_DBL),
};
static const char *const replay_special[] = {"policies", NULL};

static int replay_set(void *p, const char *key, const cJSON *v, const char *what)
{
    if (strcmp(key, "policies") != 0)
        return 1;
    if (!cJSON_IsString(v))
        return psi_error(PS_E_ARG, "%s: policies must be a string such as \"orion,pairsight\" or \"all\"", what);
    return ps_replay_policies_parse(v->valuestring, &((replay_config_t *)p)->p.policies);
}

static int replay_put(const void *p, cJSON *o)
{
    const replay_config_t *r = p;
    char list[256];
    size_t at = 0;
    list[0] = 0;
    for (int i = 0; i < PS_REPLAY_N && at < sizeof list; i++)
        if (r->p.policies & (1u << i))
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", at ? "," : "", ps_replay_policy_name(i));
    cJSON_AddStringToObject(o, "policies", list);
    return PS_OK;
}

static const spec_t replay_spec = {"replay config", replay_fields, N_OF(replay_fields),
                                   replay_special,  replay_set,    replay_put};

/* ---- ps_coloc_place_params_t, with the jobs and the GPUs ---- */

#define PLACE_MAX 4096

typedef struct {
    ps_coloc_place_params_t p;
    int shares[16];
    const char *jobs[PLACE_MAX], *gpus[PLACE_MAX];
    int n_jobs, n_gpus;
} place_config_t;

static const field_t place_fields[] = {
    FLDP(place_config_t, max_per_gpu, F_INT),
    FLDP(place_config_t, seed, F_U64),
    FLDP(place_config_t, allow_wait, F_INT),
};
static const char *const place_special[] = {"shares", "jobs", "gpus", NULL};

/* A list of names (strings; null for a GPU of each job's own type). */
static int get_names(const cJSON *v, const char *what, const char *key, int nulls, const char **out, int *n)
{
    int k = cJSON_GetArraySize(v);
    if (!cJSON_IsArray(v) || k < 1 || k > PLACE_MAX)
        return psi_error(PS_E_ARG, "%s: %s must be a list of 1 to %d names", what, key, PLACE_MAX);
    int i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        if (!cJSON_IsString(e) && !(nulls && cJSON_IsNull(e)))
            return psi_error(PS_E_ARG, "%s: %s[%d] must be a name", what, key, i);
        out[i] = cJSON_IsString(e) ? e->valuestring : NULL;
    }
    *n = k;
    return PS_OK;
}

static int place_set(void *p, const char *key, const cJSON *v, const char *what)
{
    place_config_t *c = p;
    if (strcmp(key, "shares") == 0) {
        int rc = get_array(v, what, key, &(list_t){N_OF(c->shares), &c->p.n_shares, c->shares, NULL});
        c->p.shares = c->shares;
        return rc;
    }
    if (strcmp(key, "jobs") == 0)
        return get_names(v, what, key, 0, c->jobs, &c->n_jobs);
    if (strcmp(key, "gpus") == 0)
        return get_names(v, what, key, 1, c->gpus, &c->n_gpus);
    return 1;
}

static int place_put(const void *p, cJSON *o)
{
    const place_config_t *c = p;
    if (c->p.shares && c->p.n_shares > 0)
        cJSON_AddItemToObject(o, "shares", cJSON_CreateIntArray(c->p.shares, c->p.n_shares));
    else
        cJSON_AddItemToObject(o, "shares", cJSON_CreateIntArray((const int[]){100}, 1));
    return PS_OK;
}

static const spec_t place_spec = {"place config", place_fields, N_OF(place_fields),
                                  place_special,  place_set,    place_put};

/* ---- the calls ---- */

int ps_params_json(const char *which, char **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_params_json: NULL out");
    *out = NULL;
    which = which ? which : "";
    if (strcmp(which, "train") == 0) {
        ps_train_params_t p = ps_train_default_params();
        return to_text(defaults_json(&train_spec, &p), out);
    }
    if (strcmp(which, "coloc") == 0) {
        ps_coloc_params_t p = ps_coloc_default_params();
        return to_text(defaults_json(&coloc_spec, &p), out);
    }
    if (strcmp(which, "plan") == 0) {
        ps_plan_params_t p = ps_plan_default_params();
        return to_text(defaults_json(&plan_spec, &p), out);
    }
    if (strcmp(which, "replay") == 0) {
        replay_config_t r = {ps_replay_default_params(), NULL};
        return to_text(defaults_json(&replay_spec, &r), out);
    }
    if (strcmp(which, "place") == 0) {
        place_config_t *c = psi_calloc(1, sizeof *c);
        if (!c)
            return PS_E_NOMEM;
        c->p = ps_coloc_place_default_params();
        int rc = to_text(defaults_json(&place_spec, c), out);
        free(c);
        return rc;
    }
    return psi_error(PS_E_ARG, "ps_params_json: '%s' is none of train, coloc, plan, replay, place", which);
}

int ps_model_train_json(const ps_ops_t *ops, const ps_coexec_t *cx, const char *config, ps_model_t **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_model_train_json: NULL out");
    *out = NULL;
    ps_train_params_t p = ps_train_default_params();
    cJSON *doc = NULL;
    int rc = apply(&train_spec, config, &p, &doc);
    if (rc == PS_OK)
        rc = ps_model_train(ops, cx, &p, out);
    cJSON_Delete(doc);
    return rc;
}

int ps_model_adapt_json(const ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *cx, const char *config,
                        ps_model_t **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_model_adapt_json: NULL out");
    *out = NULL;
    ps_train_params_t p = ps_train_default_params();
    cJSON *doc = NULL;
    int rc = apply(&train_spec, config, &p, &doc);
    if (rc == PS_OK)
        rc = ps_model_adapt(m, ops, cx, &p, out);
    cJSON_Delete(doc);
    return rc;
}

int ps_coloc_train_json(const ps_workloads_t *w, const ps_scaling_t *scaling, const ps_colocations_t *c,
                        const char *config, ps_coloc_model_t **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_coloc_train_json: NULL out");
    *out = NULL;
    ps_coloc_params_t p = ps_coloc_default_params();
    cJSON *doc = NULL;
    int rc = apply(&coloc_spec, config, &p, &doc);
    if (rc == PS_OK)
        rc = ps_coloc_train(w, scaling, c, &p, out);
    cJSON_Delete(doc);
    return rc;
}

int ps_plan_json(const ps_model_t *m, const ps_ops_t *ops, const char *config, char **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_plan_json: NULL out");
    *out = NULL;
    ps_plan_params_t p = ps_plan_default_params();
    cJSON *doc = NULL;
    ps_plan_t *plan = NULL;
    int rc = apply(&plan_spec, config, &p, &doc);
    if (rc == PS_OK)
        rc = ps_plan(m, ops, &p, &plan);
    if (rc == PS_OK)
        rc = ps_plan_to_json(plan, out);
    ps_plan_free(plan);
    cJSON_Delete(doc);
    return rc;
}

static void add_finite(cJSON *o, const char *name, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, name, v);
    else
        cJSON_AddNullToObject(o, name);
}

/* A policy's figures: every one with cli 0 (null where not finite), and
 * as the CLI has always printed them with cli 1 (budget_kept only when
 * finite, orion's threshold only for orion, the stretch for the planners
 * alone, null for no cap). */
static void replay_policy(cJSON *x, int i, const ps_replay_policy_result_t *q, int cli)
{
    const double v[] = {q->slo_attainment, q->hp_p50_ns, q->hp_p99_ns, q->lp_throughput,
                        q->lp_idle,        q->lp_colo,   q->gpu_busy,  q->plan_us};
    static const char *const k[] = {"slo_attainment", "hp_p50_ns", "hp_p99_ns", "lp_throughput",
                                    "lp_idle",        "lp_colo",   "gpu_busy",  "plan_us"};
    for (int j = 0; j < N_OF(k); j++)
        cJSON_AddNumberToObject(x, k[j], v[j]);
    if (!cli || isfinite(q->budget_kept))
        cJSON_AddNumberToObject(x, "budget_kept", q->budget_kept);
    if (!cli || i == PS_REPLAY_ORION)
        cJSON_AddNumberToObject(x, cli ? "orion_lp_tpcs" : "orion_tpcs", q->orion_tpcs);
    if (!cli || i >= PS_REPLAY_INTENSITY)
        cJSON_AddNumberToObject(x, "stretch", !cli || q->stretch < 1e8 ? q->stretch : NAN);
}

/* The run's parameters, ahead of its figures in the CLI's document. */
static void replay_head(cJSON *o, const ps_replay_params_t *p)
{
    cJSON_AddStringToObject(o, "hp", p->hp_model);
    cJSON_AddNumberToObject(o, "hp_batch", p->hp_batch);
    cJSON_AddStringToObject(o, "lp", p->lp_model);
    cJSON_AddNumberToObject(o, "lp_batch", p->lp_batch);
}

/* Both documents of a replay's result (ps_replay_result_json): the
 * figures are written here alone, non-finite ones as null. */
static cJSON *replay_doc(const ps_replay_result_t *r, const ps_replay_params_t *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", p ? "pairsight.replay.v1" : "pairsight.replay_result.v1");
    if (p)
        replay_head(o, p);
    cJSON_AddNumberToObject(o, "requests", (double)r->requests);
    if (p) {
        cJSON_AddNumberToObject(o, "load", p->load);
        cJSON_AddNumberToObject(o, "seed", (double)p->seed);
        cJSON_AddNumberToObject(o, "coverage", p->coverage);
    }
    cJSON_AddNumberToObject(o, "dedicated_ns", r->dedicated_ns);
    cJSON_AddNumberToObject(o, "slo_ns", r->slo_ns);
    if (p) {
        /* stretch: null when tuned per planner on the warm-up, "none" for no cap */
        if (p->stretch >= 1e8)
            cJSON_AddStringToObject(o, "stretch_fixed", "none");
        else
            cJSON_AddNumberToObject(o, "stretch_fixed", p->stretch > 0 ? p->stretch : NAN);
        cJSON_AddNumberToObject(o, "time_value", p->time_value);
        cJSON_AddNumberToObject(o, "goal_ratio", p->goal_ratio);
    }
    cJSON_AddNumberToObject(o, "lp_ceiling", r->lp_ceiling);
    cJSON_AddNumberToObject(o, "lp_rate_needed", r->lp_rate_needed);
    cJSON *pol = cJSON_AddObjectToObject(o, "policies");
    for (int i = 0; i < PS_REPLAY_N && pol; i++)
        if (r->pol[i].ran)
            replay_policy(cJSON_AddObjectToObject(pol, ps_replay_policy_name(i)), i, &r->pol[i], p != NULL);
    return o;
}

int ps_replay_result_json(const ps_replay_result_t *r, const ps_replay_params_t *p, char **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_replay_result_json: NULL out");
    *out = NULL;
    if (!r || (p && (!p->hp_model || !p->lp_model)))
        return psi_error(PS_E_ARG, "ps_replay_result_json: NULL argument");
    return to_text(replay_doc(r, p), out);
}

int ps_replay_json(const ps_model_t *m, const ps_ops_t *ops, const ps_coexec_t *intensity_train, const char *config,
                   char **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_replay_json: NULL out");
    *out = NULL;
    replay_config_t c = {ps_replay_default_params(), NULL};
    cJSON *doc = NULL;
    int rc = apply(&replay_spec, config, &c, &doc);
    c.p.intensity_train = intensity_train;
    if (rc == PS_OK && !intensity_train)
        c.p.policies &= ~(1u << PS_REPLAY_INTENSITY); /* as the CLI without --intensity-train */
    if (rc == PS_OK && !c.gpu && m) {
        ps_model_info_t info;
        if (ps_model_info(m, &info) == PS_OK)
            c.gpu = info.gpu;
    }
    ps_replay_result_t r;
    memset(&r, 0, sizeof r);
    if (rc == PS_OK)
        rc = ps_replay_run(m, ops, c.gpu, &c.p, &r);
    if (rc == PS_OK)
        rc = ps_replay_result_json(&r, NULL, out);
    ps_replay_result_free(&r);
    cJSON_Delete(doc);
    return rc;
}

static cJSON *placement_json(const place_config_t *c, const ps_coloc_placement_t *pl)
{
    cJSON *o = cJSON_CreateObject(), *jobs = cJSON_AddArrayToObject(o, "jobs");
    cJSON_AddStringToObject(o, "schema", "pairsight.place.v1");
    add_finite(o, "objective", pl->objective);
    cJSON_AddBoolToObject(o, "exact", pl->exact);
    for (int i = 0; i < pl->n_jobs && jobs; i++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddItemToArray(jobs, j);
        cJSON_AddStringToObject(j, "job", c->jobs[i]);
        if (pl->gpu[i] >= 0)
            cJSON_AddNumberToObject(j, "gpu", pl->gpu[i]);
        else
            cJSON_AddNullToObject(j, "gpu");
        cJSON_AddNumberToObject(j, "share", pl->share[i]);
        add_finite(j, "norm_tput", pl->norm_tput[i]);
    }
    return o;
}

int ps_coloc_place_json(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                        const char *config, char **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_coloc_place_json: NULL out");
    *out = NULL;
    place_config_t *c = psi_calloc(1, sizeof *c);
    if (!c)
        return PS_E_NOMEM;
    c->p = ps_coloc_place_default_params();
    cJSON *doc = NULL;
    int rc = apply(&place_spec, config, c, &doc);
    if (rc == PS_OK && (c->n_jobs == 0 || c->n_gpus == 0))
        rc = psi_error(PS_E_ARG, "place config: jobs and gpus are required");
    ps_coloc_placement_t pl;
    memset(&pl, 0, sizeof pl);
    if (rc == PS_OK)
        rc = ps_coloc_place(m, w, scaling, c->jobs, c->n_jobs, c->gpus, c->n_gpus, &c->p, &pl);
    if (rc == PS_OK)
        rc = to_text(placement_json(c, &pl), out);
    ps_coloc_placement_free(&pl);
    cJSON_Delete(doc);
    free(c);
    return rc;
}

int ps_explanation_json(const ps_explanation_t *e, char **out)
{
    if (!out || !e)
        return psi_error(PS_E_ARG, "ps_explanation_json: NULL argument");
    cJSON *o = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(o, "items");
    cJSON_AddStringToObject(o, "schema", "pairsight.explanation.v1");
    add_finite(o, "hp_ns", e->hp_ns);
    add_finite(o, "lp_ns", e->lp_ns);
    add_finite(o, "hp_solo_ns", e->hp_solo_ns);
    add_finite(o, "lp_solo_ns", e->lp_solo_ns);
    cJSON *bias = cJSON_AddObjectToObject(o, "bias");
    add_finite(bias, "hp", e->bias[0]);
    add_finite(bias, "lp", e->bias[1]);
    static const char *const who[] = {"hp", "lp"};
    for (size_t i = 0; i < e->n && items; i++) {
        const ps_contribution_t *c = &e->items[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddItemToArray(items, x);
        cJSON_AddStringToObject(x, "side", who[c->side != 0]);
        if (c->owner == 0 || c->owner == 1)
            cJSON_AddStringToObject(x, "owner", who[c->owner]);
        else
            cJSON_AddNullToObject(x, "owner");
        if (c->op >= 0)
            cJSON_AddNumberToObject(x, "op", c->op);
        else
            cJSON_AddNullToObject(x, "op");
        cJSON_AddStringToObject(x, "name", c->name ? c->name : "");
        add_finite(x, "contribution", c->contribution);
    }
    return to_text(o, out);
}

/* ---- the layout of ps_query_t, for bindings that fill arrays of it ---- */

int ps_query_layout_json(char **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_query_layout_json: NULL out");
    cJSON *o = cJSON_CreateObject(), *f = cJSON_AddArrayToObject(o, "fields");
    cJSON_AddStringToObject(o, "schema", "pairsight.layout.v1");
    cJSON_AddStringToObject(o, "struct", "ps_query_t");
    cJSON_AddNumberToObject(o, "size", (double)sizeof(ps_query_t));
    int n;
    const ps_query_field_t *qf = ps_query_fields(&n); /* the one table of them */
    for (int i = 0; i < n && f; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddItemToArray(f, x);
        cJSON_AddStringToObject(x, "name", qf[i].name);
        cJSON_AddStringToObject(x, "type", qf[i].is_string ? "string" : "int");
        cJSON_AddNumberToObject(x, "offset", (double)qf[i].offset);
    }
    return to_text(o, out);
}
