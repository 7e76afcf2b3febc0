/*
 * Shares as JSON (ps_coloc_shares_json): the request that `colocate shares`
 * builds from its flags and POST /v1/colocate/shares receives, and the one
 * reply both print, schema "pairsight.shares.v1" (docs/colocate.md). Every
 * field takes the CLI's text ("10/90,30/70", "A=0.8,B=0.5") or its JSON
 * form (arrays, objects), so a request can be written either way.
 */
#include "colocate/colocate.h"

#include "common/common.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *names[PS_SHARES_MAXK];
    char keys[PS_SHARES_MAXK][176]; /* names in maps and the reply: the second A is "A#2" */
    char *buf;                      /* the names of a "set" string, cut in place */
    int k;
    char gpu[128];
    ps_coloc_shares_params_t p;
} req_t;

static int is(const ps_json_doc_t *d, int t, int type) { return t >= 0 && d->tok[t].type == type; }

/* "A,B" cut in place into r->names. */
static int read_set_text(const char *text, req_t *r)
{
    r->buf = psi_strdup(text);
    if (!r->buf)
        return PS_E_NOMEM;
    for (char *s = r->buf, *e;; s = e + 1) {
        e = s + strcspn(s, ",");
        int last = !*e;
        *e = '\0';
        if (r->k == PS_SHARES_MAXK)
            return psi_error(PS_E_ARG, "set: more than %d workloads", PS_SHARES_MAXK);
        if (!*s)
            return psi_error(PS_E_ARG, "set: an empty workload name in '%s'", text);
        r->names[r->k++] = s;
        if (last)
            break;
    }
    return PS_OK;
}

static int read_set(ps_json_doc_t *d, int v, req_t *r)
{
    int rc = PS_OK;
    if (is(d, v, PS_JSON_STRING)) {
        rc = read_set_text(ps_json_str(d, v), r);
    } else if (is(d, v, PS_JSON_ARRAY)) {
        for (int i = 0, e = v + 1; i < d->tok[v].size; i++, e = d->tok[e].next) {
            if (!is(d, e, PS_JSON_STRING) || !*ps_json_str(d, e))
                return psi_error(PS_E_ARG, "set[%d]: expected a workload name", r->k);
            if (r->k == PS_SHARES_MAXK)
                return psi_error(PS_E_ARG, "set: more than %d workloads", PS_SHARES_MAXK);
            r->names[r->k++] = ps_json_str(d, e);
        }
    } else {
        return psi_error(PS_E_ARG, "set: expected \"A,B\" or [\"A\",\"B\"] (2..%d workloads)", PS_SHARES_MAXK);
    }
    if (rc == PS_OK && r->k < 2)
        return psi_error(PS_E_ARG, "set: %d workload%s; a set needs 2..%d", r->k, r->k == 1 ? "" : "s", PS_SHARES_MAXK);
    return rc;
}

static int same(const char *s, const char *name, size_t len) { return strlen(s) == len && !strncmp(s, name, len); }

/* Sets dst[i] = x for the places of name in the set: its key ("A#2"), or
 * every place of a plain name. */
static int set_named(const req_t *r, const char *field, const char *name, size_t len, double x, double *dst)
{
    int n = 0;
    for (int i = 0; i < r->k; i++)
        if (same(r->keys[i], name, len) || same(r->names[i], name, len)) {
            dst[i] = x;
            n++;
        }
    return n ? PS_OK : psi_error(PS_E_ARG, "%s: '%.*s' is not in the set", field, (int)len, name);
}

/* keys[i]: the name, with "#n" from its n-th place on. */
static void make_keys(req_t *r)
{
    for (int i = 0; i < r->k; i++) {
        int n = 1;
        for (int j = 0; j < i; j++)
            n += strcmp(r->names[i], r->names[j]) == 0;
        if (n > 1)
            snprintf(r->keys[i], sizeof r->keys[i], "%.150s#%d", r->names[i], n);
        else
            snprintf(r->keys[i], sizeof r->keys[i], "%s", r->names[i]);
    }
}

/* "A=0.8,B=0.5" into dst[set order]. */
static int read_map_text(const req_t *r, const char *field, const char *text, double *dst)
{
    for (const char *s = text; *s;) {
        size_t len = strcspn(s, ",");
        const char *eq = memchr(s, '=', len);
        char *end = NULL;
        double x = eq ? strtod(eq + 1, &end) : NAN;
        if (!eq || end == eq + 1 || end != s + len || !isfinite(x))
            return psi_error(PS_E_ARG, "%s: expected NAME=NUMBER, got '%.*s'", field, (int)len, s);
        int rc = set_named(r, field, s, (size_t)(eq - s), x, dst);
        if (rc)
            return rc;
        s += len + (s[len] == ',');
    }
    return PS_OK;
}

/* "A=0.8,B=0.5" or {"A":0.8,"B":0.5} into dst[set order]. */
static int read_map(const req_t *r, const char *field, ps_json_doc_t *d, int v, double *dst)
{
    if (is(d, v, PS_JSON_OBJECT)) {
        for (int i = 0, k = v + 1; i < d->tok[v].size; i++, k = d->tok[k + 1].next) {
            const char *name = ps_json_str(d, k);
            double x;
            if (ps_json_num(d, k + 1, &x) != 0)
                return psi_error(PS_E_ARG, "%s.%s: expected a number", field, name);
            int rc = set_named(r, field, name, strlen(name), x, dst);
            if (rc)
                return rc;
        }
        return PS_OK;
    }
    if (!is(d, v, PS_JSON_STRING))
        return psi_error(PS_E_ARG, "%s: expected \"A=0.8,B=0.5\" or {\"A\":0.8}", field);
    return read_map_text(r, field, ps_json_str(d, v), dst);
}

static int read_candidates(req_t *r, ps_json_doc_t *d, int v)
{
    int n = 0;
    if (is(d, v, PS_JSON_STRING)) {
        for (const char *s = ps_json_str(d, v); *s; n++) {
            size_t len = strcspn(s, ",");
            if (n == PS_SHARES_MAXCAND)
                return psi_error(PS_E_ARG, "candidates: more than %d", PS_SHARES_MAXCAND);
            int j = 0;
            for (const char *t = s; t < s + len; j++) {
                char *end;
                long x = strtol(t, &end, 10);
                if (end == t || (end < s + len && *end != '/') || j == PS_SHARES_MAXK)
                    return psi_error(PS_E_ARG, "candidates: expected A/B[/..] percentages, got '%.*s'", (int)len, s);
                r->p.candidates[n][j] = x < -1 || x > 1000 ? -1 : (int)x;
                t = end + (end < s + len);
            }
            if (j != r->k)
                return psi_error(PS_E_ARG, "candidates: '%.*s' has %d shares for %d workloads", (int)len, s, j, r->k);
            s += len + (s[len] == ',');
        }
    } else if (is(d, v, PS_JSON_ARRAY)) {
        for (int c = v + 1; n < d->tok[v].size; c = d->tok[c].next, n++) {
            if (n == PS_SHARES_MAXCAND)
                return psi_error(PS_E_ARG, "candidates: more than %d", PS_SHARES_MAXCAND);
            int j = 0, size = is(d, c, PS_JSON_ARRAY) ? d->tok[c].size : 0;
            for (int e = c + 1; j < size; e = d->tok[e].next, j++) {
                double x;
                if (!is(d, e, PS_JSON_NUMBER) || j == PS_SHARES_MAXK)
                    return psi_error(PS_E_ARG, "candidates[%d]: expected integer percentages", n);
                if (ps_json_num(d, e, &x) != 0)
                    x = INFINITY; /* beyond a double: -1, as any share above 1000 */
                r->p.candidates[n][j] = fabs(x) > 1000 ? -1 : (int)x;
            }
            if (j != r->k)
                return psi_error(PS_E_ARG, "candidates[%d]: %d shares for %d workloads", n, j, r->k);
        }
    } else {
        return psi_error(PS_E_ARG, "candidates: expected \"10/90,30/70\" or [[10,90],[30,70]]");
    }
    if (n == 0)
        return psi_error(PS_E_ARG, "candidates: none given");
    r->p.n_candidates = n;
    return PS_OK;
}

static int read_objective(req_t *r, ps_json_doc_t *d, int v)
{
    const char *s = is(d, v, PS_JSON_STRING) ? ps_json_str(d, v) : "";
    if (strcmp(s, "sum") == 0)
        r->p.objective = PS_SHARES_SUM;
    else if (strcmp(s, "min") == 0)
        r->p.objective = PS_SHARES_MIN;
    else if (strncmp(s, "weighted", 8) == 0 && (s[8] == '\0' || s[8] == ':')) {
        r->p.objective = PS_SHARES_WEIGHTED;
        if (s[8] == ':')
            return read_map_text(r, "objective weights", s + 9, r->p.weight);
    } else
        return psi_error(PS_E_ARG, "objective: expected sum, min or weighted:A=2,B=1, got '%s'", s);
    return PS_OK;
}

static int read_int(ps_json_doc_t *d, const char *field, int lo, int hi, int *dst)
{
    int v = ps_json_get(d, 0, field, 0);
    double x;
    if (v < 0 || is(d, v, PS_JSON_NULL))
        return PS_OK;
    if (ps_json_num(d, v, &x) != 0 || x != floor(x) || x < lo || x > hi)
        return psi_error(PS_E_ARG, "%s: expected an integer in %d..%d", field, lo, hi);
    *dst = (int)x;
    return PS_OK;
}

/* Member field of the request, or -1 when it is absent or null. */
static int given(ps_json_doc_t *d, const char *field)
{
    int v = ps_json_get(d, 0, field, 0);
    return is(d, v, PS_JSON_NULL) ? -1 : v;
}

/* The GPU of the set: the request's, else the first of the model's GPUs
 * that has every workload, else the first workload's row. */
static void default_gpu(const ps_coloc_model_t *m, const ps_workloads_t *w, req_t *r)
{
    const char *list = ps_coloc_model_gpu(m);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        snprintf(r->gpu, sizeof r->gpu, "%.*s", (int)n, p);
        int all = 1;
        for (int i = 0; i < r->k && all; i++)
            all = !isnan(ps_coloc_solo(w, NULL, r->gpu, r->names[i], 100));
        if (all)
            return;
        p += n + (p[n] == ',');
    }
    r->gpu[0] = '\0';
    for (size_t i = 0; i < w->n && !r->gpu[0]; i++)
        if (strcmp(w->rows[i].workload, r->names[0]) == 0)
            snprintf(r->gpu, sizeof r->gpu, "%s", w->rows[i].gpu ? w->rows[i].gpu : "");
}

static int read_request(const ps_coloc_model_t *m, const ps_workloads_t *w, ps_json_doc_t *d, req_t *r)
{
    if (!is(d, 0, PS_JSON_OBJECT))
        return psi_error(PS_E_ARG, "shares request: expected a JSON object");
    static const char *const known[] = {"set", "gpu", "candidates", "step", "max_total", "objective", "floor", "slo"};
    for (int m = 0, k = 1; m < d->tok[0].size; m++, k = d->tok[k + 1].next) {
        const char *name = ps_json_str(d, k);
        size_t i = 0;
        while (i < sizeof known / sizeof *known && strcmp(name, known[i]) != 0)
            i++;
        if (i == sizeof known / sizeof *known)
            return psi_error(PS_E_ARG,
                             "shares request: unknown field '%s' (set, gpu, candidates, step, max_total, "
                             "objective, floor, slo)",
                             name);
    }
    int v, rc = read_set(d, ps_json_get(d, 0, "set", 0), r);
    if (!rc)
        make_keys(r);
    if (!rc && (v = given(d, "gpu")) >= 0) {
        if (!is(d, v, PS_JSON_STRING))
            return psi_error(PS_E_ARG, "gpu: expected a string");
        snprintf(r->gpu, sizeof r->gpu, "%s", ps_json_str(d, v));
    } else if (!rc)
        default_gpu(m, w, r);
    if (!rc)
        rc = read_int(d, "step", 1, 100, &r->p.step);
    if (!rc)
        rc = read_int(d, "max_total", 2, 100 * PS_SHARES_MAXK, &r->p.max_total);
    if (!rc && (v = given(d, "candidates")) >= 0)
        rc = read_candidates(r, d, v);
    if (!rc && (v = given(d, "objective")) >= 0)
        rc = read_objective(r, d, v);
    if (!rc && (v = given(d, "floor")) >= 0)
        rc = read_map(r, "floor", d, v, r->p.floor);
    if (!rc && (v = given(d, "slo")) >= 0)
        rc = read_map(r, "slo", d, v, r->p.slo_ms);
    return rc;
}

static void add_num(cJSON *o, const char *name, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, name, v);
    else
        cJSON_AddNullToObject(o, name);
}

static cJSON *split_json(const req_t *r, const ps_coloc_split_t *s)
{
    cJSON *o = cJSON_CreateObject(), *sh = cJSON_AddObjectToObject(o, "shares"),
          *nt = cJSON_AddObjectToObject(o, "norm_tput");
    for (int i = 0; i < r->k; i++) {
        cJSON_AddNumberToObject(sh, r->keys[i], s->share[i]);
        add_num(nt, r->keys[i], s->norm[i]);
    }
    add_num(o, "objective_value", s->objective);
    cJSON_AddBoolToObject(o, "feasible", s->feasible);
    return o;
}

static void add_map(cJSON *o, const char *name, const req_t *r, const double *v)
{
    cJSON *m = NULL;
    for (int i = 0; i < r->k; i++)
        if (!isnan(v[i])) {
            if (!m)
                m = cJSON_AddObjectToObject(o, name);
            cJSON_AddNumberToObject(m, r->keys[i], v[i]);
        }
}

static const char *const objective_names[] = {"sum", "min", "weighted"};

static cJSON *reply_json(const ps_coloc_model_t *m, const ps_workloads_t *w, const req_t *r, const ps_coloc_shares_t *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "pairsight.shares.v1");
    cJSON_AddStringToObject(o, "gpu", r->gpu);
    cJSON_AddStringToObject(o, "model", ps_coloc_kind_name(ps_coloc_model_kind(m)));
    cJSON *set = cJSON_AddArrayToObject(o, "workloads");
    for (int i = 0; i < r->k; i++)
        cJSON_AddItemToArray(set, cJSON_CreateString(r->keys[i]));
    cJSON_AddStringToObject(o, "objective", objective_names[r->p.objective]);
    if (r->p.objective == PS_SHARES_WEIGHTED)
        add_map(o, "weights", r, r->p.weight);
    add_map(o, "floor", r, r->p.floor);
    add_map(o, "slo_ms", r, r->p.slo_ms);
    cJSON_AddNumberToObject(o, "max_total", r->p.max_total);
    if (r->p.n_candidates)
        cJSON_AddNullToObject(o, "step");
    else
        cJSON_AddNumberToObject(o, "step", r->p.step);
    cJSON_AddNumberToObject(o, "candidates", s->n_candidates);
    cJSON_AddNumberToObject(o, "feasible_candidates", s->n_feasible);
    cJSON_AddBoolToObject(o, "feasible", s->feasible);
    cJSON_AddBoolToObject(o, "k_trained", s->k_trained);
    if (s->feasible) {
        cJSON *sh = cJSON_AddObjectToObject(o, "shares"), *pr = cJSON_AddObjectToObject(o, "predicted");
        for (int i = 0; i < r->k; i++) {
            cJSON_AddNumberToObject(sh, r->keys[i], s->best.share[i]);
            cJSON *e = cJSON_AddObjectToObject(pr, r->keys[i]);
            add_num(e, "tput", s->best.tput[i]);
            add_num(e, "norm_tput", s->best.norm[i]);
            add_num(e, "latency_ms", s->best.latency_ms[i]);
            /* No co-location model carries a calibrated error bound yet:
             * null says so rather than a number nobody calibrated. */
            cJSON_AddNullToObject(e, "bound");
            double mc = NAN;
            for (size_t j = 0; j < w->n; j++)
                if (strcmp(w->rows[j].workload, r->names[i]) == 0 && w->rows[j].gpu &&
                    strcmp(w->rows[j].gpu, r->gpu) == 0)
                    mc = w->rows[j].memcap_gb;
            add_num(e, "memcap_gb", mc);
        }
        add_num(o, "objective_value", s->best.objective);
    } else {
        cJSON_AddNullToObject(o, "shares");
        cJSON *f = cJSON_AddObjectToObject(o, "failing");
        if (s->failing >= 0) {
            cJSON_AddStringToObject(f, "workload", r->keys[s->failing]);
            add_num(f, "wanted", strcmp(s->constraint, "slo") == 0 ? r->p.slo_ms[s->failing] : r->p.floor[s->failing]);
        } else
            cJSON_AddNullToObject(f, "workload");
        cJSON_AddStringToObject(f, "constraint", s->constraint);
        add_num(f, "best", s->failing_best);
    }
    cJSON_AddBoolToObject(o, "calibrated", 0);
    cJSON_AddItemToObject(o, "uniform", split_json(r, &s->uniform));
    cJSON_AddItemToObject(o, "full", split_json(r, &s->full));
    int any_slo = 0;
    for (int i = 0; i < r->k; i++)
        any_slo |= !isnan(r->p.slo_ms[i]);
    if (any_slo) {
        cJSON *ms = cJSON_AddObjectToObject(o, "slo_min_share");
        for (int i = 0; i < r->k; i++)
            if (!isnan(r->p.slo_ms[i])) {
                if (s->slo_min_share[i])
                    cJSON_AddNumberToObject(ms, r->keys[i], s->slo_min_share[i]);
                else
                    cJSON_AddNullToObject(ms, r->keys[i]);
            }
    }
    return o;
}

int ps_coloc_shares_json(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                         const char *request, char **out)
{
    if (!m || !w || !request || !out)
        return psi_error(PS_E_ARG, "ps_coloc_shares_json: NULL argument");
    *out = NULL;
    ps_json_doc_t doc = {0};
    int rc = psi_json_load(request, strlen(request), "shares request", &doc);
    req_t *r = psi_calloc(1, sizeof *r);
    ps_coloc_shares_t *s = psi_calloc(1, sizeof *s);
    if (!rc && (!r || !s))
        rc = PS_E_NOMEM;
    if (!rc) {
        r->p = ps_coloc_shares_default_params();
        rc = read_request(m, w, &doc, r);
    }
    if (!rc)
        rc = ps_coloc_shares(m, w, scaling, r->gpu, r->names, r->k, &r->p, s);
    if (!rc) {
        cJSON *o = reply_json(m, w, r, s);
        *out = o ? psi_json_print(o, 0) : NULL;
        cJSON_Delete(o);
        if (!*out)
            rc = PS_E_NOMEM;
    }
    psi_json_unload(&doc);
    if (r)
        free(r->buf);
    free(r);
    free(s);
    return rc;
}
