/*
 * `colocate select` (ps_coloc_select): a target's candidate co-runners
 * ranked by the predicted throughput sum. The candidates and the shares
 * come as the command line writes them ("b,c+d", "50/25/25"); their checks,
 * the GPU of the query (the target's row, or the one asked), the look-up of
 * every workload and the ranking are here, for the CLI, the colocate_select
 * operation (Python, POST /v1/colocate/select) alike. Each candidate is
 * predicted by ps_coloc_predict_set, whose figures are ps_coloc_predict's on
 * a table of that one co-location.
 */
#include "colocate/colocate.h"

#include "common/common.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXK PS_COLOC_SET_MAXK

/* What the messages name: the parameter (after p->flag) and the file. */
static const char *flag(const ps_coloc_select_params_t *p) { return p->flag ? p->flag : ""; }
static const char *file(const ps_coloc_select_params_t *p)
{
    return p->workloads_name ? p->workloads_name : "workloads.csv";
}

/* The most workloads of one candidate in a list like "a,b+c" (here 2), or
 * -1 when the list is empty or has an empty name ("a,,b", "a+", ","). */
static int most_corunners(const char *list)
{
    int most = 0, k = 0;
    const char *prev = list;
    for (const char *s = list;; s++) {
        if (*s == ',' || *s == '+' || !*s) {
            if (s == prev)
                return -1;
            k++;
            if (*s != '+') {
                most = k > most ? k : most;
                k = 0;
            }
            prev = s + 1;
        }
        if (!*s)
            return most;
    }
}

/* The first candidate of a list like "a,b+c,a" that an earlier one repeats
 * exactly, into buf (1), or 0 when every candidate is listed once: the same
 * candidate twice is the same query, and a ranking that lists it twice is a
 * typing error. */
static int first_repeated(const char *list, char *buf, size_t bufsize)
{
    for (const char *a = list; *a; a += strcspn(a, ",") + (a[strcspn(a, ",")] == ',')) {
        size_t la = strcspn(a, ",");
        for (const char *b = list; b < a; b += strcspn(b, ",") + 1)
            if (strcspn(b, ",") == la && strncmp(a, b, la) == 0) {
                snprintf(buf, bufsize, "%.*s", (int)la, a);
                return 1;
            }
    }
    return 0;
}

/* The shares "A/B/.." into pct[*n] (0 of them: 100 each). */
static int parse_shares(const ps_coloc_select_params_t *p, int *pct, int *n)
{
    *n = 0;
    for (const char *s = p->shares ? p->shares : ""; *s;) {
        if (*n == MAXK)
            return psi_error(PS_E_ARG, "select: %sshares: more than %d shares", flag(p), MAXK);
        char *e;
        long v = strtol(s, &e, 10);
        if (e == s || v < 1 || v > 100 || (*e && *e != '/'))
            return psi_error(PS_E_ARG, "select: %sshares: expected A/B/.. in 1..100, got '%s'", flag(p), p->shares);
        pct[(*n)++] = (int)v;
        s = *e ? e + 1 : e;
    }
    return PS_OK;
}

/* The checks of the candidates against the shares. */
static int check_candidates(const ps_coloc_select_params_t *p, int n_shares)
{
    const char *f = flag(p), *list = p->candidates;
    int most = most_corunners(list);
    if (most < 0)
        return psi_error(PS_E_ARG, "select: %scandidates: expected a,b or a+b,c with no empty name, got '%s'", f, list);
    if (most > MAXK - 1)
        return psi_error(PS_E_ARG, "select: %scandidates: a candidate with %d co-runners, at most %d", f, most,
                         MAXK - 1);
    char twice[256];
    if (first_repeated(list, twice, sizeof twice))
        return psi_error(PS_E_ARG, "select: %scandidates: '%s' is listed twice: give each candidate once", f, twice);
    if (n_shares > most + 1)
        return psi_error(PS_E_ARG,
                         "select: %sshares: %d shares for at most %d workloads (the target and %d co-runner%s)", f,
                         n_shares, most + 1, most, most == 1 ? "" : "s");
    return PS_OK;
}

/* "; did you mean 'alpha_batch2-inf'?" for a workload name not in w, or "". */
static const char *near_workload(const ps_workloads_t *w, const char *name, char *buf, size_t n)
{
    size_t nw = ps_workloads_rows(w);
    const char **names = psi_malloc((nw ? nw : 1) * sizeof *names);
    const char *near = NULL;
    for (size_t i = 0; names && i < nw; i++)
        ps_workloads_key(w, i, NULL, &names[i]);
    if (names)
        near = ps_nearest(name, names, nw);
    snprintf(buf, n, "%s%s%s", near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    free(names);
    return buf;
}

/* Whether workloads.csv has (gpu, the name of len bytes at name). */
static int known(const ps_workloads_t *w, const char *gpu, const char *name, size_t len)
{
    for (size_t j = 0; j < ps_workloads_rows(w); j++) {
        const char *wg = "", *wn = "";
        ps_workloads_key(w, j, &wg, &wn);
        if (strlen(wn) == len && strncmp(wn, name, len) == 0 && strcmp(wg, gpu) == 0)
            return 1;
    }
    return 0;
}

/* The gpu of the target in workloads.csv (on p->gpu when given), with
 * every candidate there too, into *gpu. */
static int select_gpu(const ps_coloc_select_params_t *p, const ps_workloads_t *w, const char **gpu)
{
    const char *wg = "", *wn = "";
    size_t nw = ps_workloads_rows(w);
    *gpu = NULL;
    for (size_t i = 0; i < nw && !*gpu; i++)
        if (ps_workloads_key(w, i, &wg, &wn) == PS_OK && strcmp(wn, p->target) == 0 &&
            (!p->gpu || strcmp(ps_gpu_canonical(wg), ps_gpu_canonical(p->gpu)) == 0))
            *gpu = wg;
    char near[300];
    if (!*gpu)
        return psi_error(PS_E_INPUT, "select: target '%s'%s%s is not in %s%s", p->target, p->gpu ? " on gpu " : "",
                         p->gpu ? p->gpu : "", file(p), near_workload(w, p->target, near, sizeof near));
    for (size_t i = 0; i < nw && !p->gpu; i++) /* which GPU is asked, not guessed */
        if (ps_workloads_key(w, i, &wg, &wn) == PS_OK && strcmp(wn, p->target) == 0 && strcmp(wg, *gpu) != 0)
            return psi_error(PS_E_INPUT, "select: target '%s' has rows on several GPUs in %s (%s, %s): give %sgpu",
                             p->target, file(p), *gpu, wg, flag(p));
    for (const char *s = p->candidates; *s;) {
        size_t len = strcspn(s, ",+");
        if (!known(w, *gpu, s, len)) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)len, s);
            return psi_error(PS_E_INPUT, "select: candidate '%s' (gpu %s) is not in %s%s", name, *gpu, file(p),
                             near_workload(w, name, near, sizeof near));
        }
        s += len + (s[len] != 0);
    }
    return PS_OK;
}

/* A selection under way: its inputs and the shares given. */
typedef struct {
    const ps_coloc_model_t *m;
    const ps_workloads_t *w;
    const ps_scaling_t *scaling;
    const ps_coloc_select_params_t *p;
    const char *gpu;
    int pct[MAXK], n_pct;
} select_t;

/* Candidate c (its name set) predicted: the target at the first share,
 * then its workloads at the next ones, the last repeated (100 each when no
 * share is given). */
static int predict_one(const select_t *s, ps_coloc_choice_t *c)
{
    const char *names[MAXK];
    int shares[MAXK], k = 1;
    char *buf = psi_strdup(c->candidate);
    if (!buf)
        return psi_error(PS_E_NOMEM, "out of memory");
    names[0] = s->p->target;
    for (char *save = NULL, *t = strtok_r(buf, "+", &save); t && k < MAXK; t = strtok_r(NULL, "+", &save))
        names[k++] = t;
    for (int i = 0; i < k; i++)
        shares[i] = s->n_pct > i ? s->pct[i] : s->n_pct > 0 ? s->pct[s->n_pct - 1] : 100;
    c->k = k;
    int rc = ps_coloc_predict_set(s->m, s->w, s->scaling, s->gpu, names, shares, k, c->tput, &c->sum);
    free(buf);
    return rc == PS_OK ? rc : psi_error_prefix(rc, "select");
}

static int cmp_choice(const void *a, const void *b)
{
    /* Decreasing sum; a candidate without a finite prediction ranks last
     * (NaN compared false both ways and could rank first). */
    double x = ((const ps_coloc_choice_t *)a)->sum, y = ((const ps_coloc_choice_t *)b)->sum;
    if (!isfinite(x) || !isfinite(y))
        return isfinite(y) - isfinite(x);
    return (x < y) - (x > y);
}

void ps_coloc_selection_free(ps_coloc_selection_t *s)
{
    if (!s)
        return;
    free(s->ranking);
    free(s->text);
    memset(s, 0, sizeof *s);
}

/* Every candidate of s->p predicted into out, in the order given. */
static int predict_all(const select_t *s, ps_coloc_selection_t *out)
{
    size_t len = strlen(s->p->candidates);
    out->text = psi_strdup(s->p->candidates);
    out->ranking = out->text ? psi_calloc(len / 2 + 1, sizeof *out->ranking) : NULL;
    if (!out->ranking)
        return psi_error(PS_E_NOMEM, "out of memory");
    int rc = PS_OK;
    for (char *save = NULL, *t = strtok_r(out->text, ",", &save); t && rc == PS_OK; t = strtok_r(NULL, ",", &save)) {
        out->ranking[out->n].candidate = t;
        rc = predict_one(s, &out->ranking[out->n++]);
    }
    return rc;
}

int ps_coloc_select(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                    const ps_coloc_select_params_t *p, ps_coloc_selection_t *out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_coloc_select: NULL out");
    memset(out, 0, sizeof *out);
    if (!m || !w || !p)
        return psi_error(PS_E_ARG, "ps_coloc_select: NULL argument");
    if (!p->target || !*p->target)
        return psi_error(PS_E_ARG, "select: %starget: expected a workload name", flag(p));
    if (!p->candidates)
        return psi_error(PS_E_ARG, "select: %scandidates: expected a,b or a+b,c", flag(p));
    select_t s = {.m = m, .w = w, .scaling = scaling, .p = p};
    int rc = parse_shares(p, s.pct, &s.n_pct);
    if (rc == PS_OK)
        rc = check_candidates(p, s.n_pct);
    if (rc == PS_OK)
        rc = select_gpu(p, w, &s.gpu);
    out->gpu = s.gpu;
    if (rc == PS_OK)
        rc = predict_all(&s, out);
    if (rc != PS_OK) {
        ps_coloc_selection_free(out);
        return rc;
    }
    qsort(out->ranking, (size_t)out->n, sizeof *out->ranking, cmp_choice);
    return PS_OK;
}

int ps_coloc_selection_json(const ps_coloc_model_t *m, const char *target, const ps_coloc_selection_t *s, char **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_coloc_selection_json: NULL out");
    *out = NULL;
    if (!m || !target || !s)
        return psi_error(PS_E_ARG, "ps_coloc_selection_json: NULL argument");
    cJSON *j = cJSON_CreateObject(), *rank = NULL;
    cJSON_AddStringToObject(j, "schema", "pairsight.colocate-select.v1");
    cJSON_AddStringToObject(j, "target", target);
    cJSON_AddStringToObject(j, "model", ps_coloc_kind_name(ps_coloc_model_kind(m)));
    if (j)
        rank = cJSON_AddArrayToObject(j, "ranking");
    for (int i = 0; rank && i < s->n; i++) {
        const ps_coloc_choice_t *c = &s->ranking[i];
        cJSON *e = cJSON_CreateObject(), *tp;
        cJSON_AddItemToArray(rank, e);
        cJSON_AddStringToObject(e, "candidate", c->candidate);
        cJSON_AddNumberToObject(e, "tput_sum", c->sum);
        if (!isfinite(c->sum))
            cJSON_AddStringToObject(e, "reason", "the model predicts no finite throughput");
        if ((tp = cJSON_AddArrayToObject(e, "tput")))
            for (int k = 0; k < c->k; k++)
                cJSON_AddItemToArray(tp, cJSON_CreateNumber(c->tput[k]));
    }
    *out = rank ? psi_json_print(j, 0) : NULL;
    cJSON_Delete(j);
    return *out ? PS_OK : psi_error(PS_E_NOMEM, "out of memory writing JSON");
}
