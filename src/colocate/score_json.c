/*
 * A score request as JSON (ps_coloc_score_json): a target workload and
 * candidate co-runner sets, each predicted as `colocate select` predicts it
 * (ps_coloc_predict_set), with each workload's throughput normalized to its
 * exclusive throughput and the model's k check; the reply POST
 * /v1/colocate/score sends, schema "pairsight.colocate_score.v1".
 */
#include "colocate/colocate.h"

#include "common/common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXK PS_COLOC_SET_MAXK

int ps_coloc_set_score(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling, const char *gpu,
                       ps_coloc_set_t *s)
{
    if (!m || !w || !gpu || !s)
        return psi_error(PS_E_ARG, "ps_coloc_set_score: NULL argument");
    int rc = ps_coloc_predict_set(m, w, scaling, gpu, s->names, s->shares, s->k, s->tput, &s->sum);
    if (rc != PS_OK)
        return rc;
    double excl_sum = 0;
    s->norm_sum = 0;
    for (int i = 0; i < s->k; i++) {
        double excl = ps_coloc_solo(w, scaling, gpu, s->names[i], 100);
        excl_sum += excl;
        s->norm[i] = s->tput[i] / excl;
        s->norm_sum += s->norm[i];
    }
    if (ps_coloc_kind_predicts_sum(ps_coloc_model_kind(m))) {
        s->norm_sum = s->sum / (excl_sum / s->k); /* the sum over the mean exclusive throughput */
        for (int i = 0; i < s->k; i++)
            s->norm[i] = s->norm_sum / s->k;
    }
    return PS_OK;
}

/* What a score request is read against, and what every candidate shares:
 * the target workload and the request's shares (the CLI's --shares), ns
 * of them. */
typedef struct {
    ps_json_doc_t *d;
    const ps_coloc_model_t *m;
    const ps_workloads_t *w;
    const ps_scaling_t *scaling;
    const char *workloads; /* the name of the workloads file, in messages */
    const char *target;
    char gpu[128];
    int shares[MAXK], ns;
} req_t;

/* Shares array token t into shares (the CLI's --shares: the last one
 * repeats for the slots beyond it). */
static int read_shares(ps_json_doc_t *d, int t, int *shares, int *ns, const char *where)
{
    if (d->tok[t].type != PS_JSON_ARRAY || d->tok[t].size < 1 || d->tok[t].size > MAXK)
        return psi_error(PS_E_ARG, "%s.shares: expected 1..%d integers in 1..100", where, MAXK);
    *ns = d->tok[t].size;
    for (int i = 0, e = t + 1; i < *ns; i++, e = d->tok[e].next)
        if (ps_json_int(d, e, 1, 100, &shares[i]) != 0)
            return psi_error(PS_E_ARG, "%s.shares[%d]: expected an integer in 1..100", where, i);
    return PS_OK;
}

/* Object candidate t ({"workloads": [...], "shares": [...]}) into c, its
 * own shares into shares/ns: 1 when it has them, 0 when not, or PS_E_ARG. */
static int read_object(req_t *a, int t, const char *where, ps_coloc_set_t *c, int *shares, int *ns)
{
    ps_json_doc_t *d = a->d;
    int ws = ps_json_get(d, t, "workloads", 0), sh = ps_json_get(d, t, "shares", 0);
    if (ws < 0 || d->tok[ws].type != PS_JSON_ARRAY || d->tok[ws].size < 1 || d->tok[ws].size >= MAXK)
        return psi_error(PS_E_ARG, "%s.workloads: expected 1..%d workload names", where, MAXK - 1);
    for (int j = 0, e = ws + 1; j < d->tok[ws].size; j++, e = d->tok[e].next) {
        if (d->tok[e].type != PS_JSON_STRING)
            return psi_error(PS_E_ARG, "%s.workloads[%d]: expected a string", where, j);
        c->names[c->k++] = ps_json_str(d, e);
    }
    if (sh < 0)
        return 0;
    return read_shares(d, sh, shares, ns, where) ? PS_E_ARG : 1;
}

/* Candidate token t ("a+b", or {"workloads": [...], "shares": [...]}) into
 * c, the target first. */
static int read_candidate(req_t *a, int t, int i, ps_coloc_set_t *c)
{
    ps_json_doc_t *d = a->d;
    char where[32];
    snprintf(where, sizeof where, "candidates[%d]", i);
    c->names[0] = a->target;
    c->k = 1;
    int shares[MAXK], ns = a->ns, own = 0;
    memcpy(shares, a->shares, sizeof shares);
    if (d->tok[t].type == PS_JSON_STRING) {
        char *save = NULL;
        for (char *w = strtok_r((char *)ps_json_str(d, t), "+", &save); w; w = strtok_r(NULL, "+", &save)) {
            if (c->k == MAXK)
                return psi_error(PS_E_ARG, "%s: more than %d co-runners", where, MAXK - 1);
            c->names[c->k++] = w;
        }
    } else if (d->tok[t].type == PS_JSON_OBJECT) {
        own = read_object(a, t, where, c, shares, &ns);
        if (own < 0)
            return own;
    } else {
        return psi_error(PS_E_ARG, "%s: expected \"a+b\" or an object, got %s", where,
                         ps_json_type_name(d->tok[t].type));
    }
    if (c->k == 1)
        return psi_error(PS_E_ARG, "%s: no co-runner", where);
    /* A candidate's own list must fit it; the request's default list, as
     * the CLI's --shares, need only fit the largest candidate (checked by
     * the caller), and a smaller one takes its first shares. */
    if (own && ns > c->k)
        return psi_error(PS_E_ARG, "%s: %d shares for %d workloads (the target and its co-runners)", where, ns, c->k);
    for (int s = 0; s < c->k; s++)
        c->shares[s] = ns > s ? shares[s] : (ns > 0 ? shares[ns - 1] : 100);
    return PS_OK;
}

/* The GPU the target is scored on into a->gpu: the request's, else the
 * first of the model's GPUs that the workloads have the target on. */
static int target_gpu(req_t *a)
{
    ps_json_doc_t *d = a->d;
    int t = ps_json_get(d, 0, "gpu", 0);
    if (t >= 0) {
        if (d->tok[t].type != PS_JSON_STRING)
            return psi_error(PS_E_ARG, "gpu: expected a string");
        snprintf(a->gpu, sizeof a->gpu, "%s", ps_json_str(d, t));
        if (isnan(ps_coloc_solo(a->w, a->scaling, a->gpu, a->target, 100)))
            return psi_error(PS_E_INPUT, "target '%s' on gpu %s is not in %s", a->target, a->gpu, a->workloads);
        return PS_OK;
    }
    const char *list = ps_coloc_model_gpu(a->m);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        snprintf(a->gpu, sizeof a->gpu, "%.*s", (int)n, p);
        if (!isnan(ps_coloc_solo(a->w, a->scaling, a->gpu, a->target, 100)))
            return PS_OK;
        p += n + (p[n] == ',');
    }
    return psi_error(PS_E_INPUT, "target '%s' is not in %s on the model's GPU (%s): give gpu", a->target, a->workloads,
                     list);
}

static int k_trained(const ps_coloc_set_t *c, unsigned ks) { return !ks || (ks >> (c->k < 31 ? c->k : 31) & 1); }

static void cand_json(ps_buf_t *b, const ps_coloc_set_t *c, unsigned ks)
{
    ps_buf_puts(b, "{\"workloads\":[");
    for (int s = 0; s < c->k; s++) {
        if (s)
            ps_buf_putn(b, ",", 1);
        ps_buf_json_str(b, c->names[s]);
    }
    ps_buf_puts(b, "],\"shares\":[");
    for (int s = 0; s < c->k; s++)
        ps_buf_printf(b, "%s%d", s ? "," : "", c->shares[s]);
    ps_buf_printf(b, "],\"k\":%d,\"tput\":[", c->k);
    ps_buf_json_nums(b, c->tput, (size_t)c->k);
    ps_buf_puts(b, "],\"norm_tput\":[");
    ps_buf_json_nums(b, c->norm, (size_t)c->k);
    ps_buf_puts(b, "],\"tput_sum\":");
    ps_buf_json_num(b, c->sum);
    ps_buf_puts(b, ",\"norm_sum\":");
    ps_buf_json_num(b, c->norm_sum);
    ps_buf_printf(b, ",\"k_trained\":%s}", k_trained(c, ks) ? "true" : "false");
}

/* Whether candidate x ranks before y: trained k first, then a finite
 * larger norm_sum. */
static int rank_before(const ps_coloc_set_t *x, const ps_coloc_set_t *y, unsigned ks)
{
    int tx = k_trained(x, ks), ty = k_trained(y, ks);
    if (tx != ty)
        return tx > ty;
    return isfinite(x->norm_sum) && (!isfinite(y->norm_sum) || x->norm_sum > y->norm_sum);
}

static void score_reply(const req_t *a, const char *fingerprint, const ps_coloc_set_t *c, int nc, ps_buf_t *b)
{
    unsigned ks = ps_coloc_model_ks(a->m);
    ps_buf_puts(b, "{\"schema\":\"pairsight.colocate_score.v1\",\"target\":");
    ps_buf_json_str(b, a->target);
    ps_buf_puts(b, ",\"gpu\":");
    ps_buf_json_str(b, a->gpu);
    ps_buf_puts(b, ",\"model\":");
    ps_buf_json_str(b, ps_coloc_kind_name(ps_coloc_model_kind(a->m)));
    ps_buf_puts(b, ",\"fingerprint\":");
    if (fingerprint)
        ps_buf_printf(b, "\"%s\"", fingerprint);
    else
        ps_buf_puts(b, "null");
    ps_buf_puts(b, ",\"trained_k\":[");
    for (int k = 0, first = 1; k < 32; k++)
        if (ks >> k & 1) {
            ps_buf_printf(b, "%s%d", first ? "" : ",", k);
            first = 0;
        }
    ps_buf_puts(b, "],\"candidates\":[");
    for (int i = 0; i < nc; i++) {
        if (i)
            ps_buf_putn(b, ",", 1);
        cand_json(b, &c[i], ks);
    }
    ps_buf_puts(b, "],\"ranked_by\":\"norm_sum\",\"ranking\":[");
    /* Decreasing norm_sum (normalised throughputs summed: raw throughputs
     * of different workloads do not add up to one scale), the candidates
     * of a k the model was trained on before the others (an untrained k
     * extrapolates, and a 3-way sum is not comparable with a pair's); not
     * finite last. */
    int used[256] = {0};
    for (int n = 0; n < nc; n++) {
        int best = -1;
        for (int i = 0; i < nc; i++)
            if (!used[i] && (best < 0 || rank_before(&c[i], &c[best], ks)))
                best = i;
        used[best] = 1;
        ps_buf_printf(b, "%s%d", n ? "," : "", best);
    }
    ps_buf_puts(b, "]}");
}

/* The candidates of array token ct read and predicted into c[nc]. */
static int score_candidates(req_t *a, int ct, ps_coloc_set_t *c, int nc)
{
    ps_json_doc_t *d = a->d;
    for (int i = 0, t = ct + 1; i < nc; i++, t = d->tok[t].next) {
        int rc = read_candidate(a, t, i, &c[i]);
        if (rc != PS_OK)
            return rc;
        if (ps_coloc_set_score(a->m, a->w, a->scaling, a->gpu, &c[i]) != PS_OK) {
            char why[512];
            snprintf(why, sizeof why, "%s", ps_last_error());
            return psi_error(PS_E_INPUT, "candidates[%d]: %s", i, why);
        }
    }
    int most = 0;
    for (int i = 0; i < nc; i++)
        most = c[i].k > most ? c[i].k : most;
    if (a->ns > most)
        return psi_error(PS_E_ARG, "shares: %d shares for at most %d workloads (the target and %d co-runner%s)", a->ns,
                         most, most - 1, most == 2 ? "" : "s");
    return PS_OK;
}

static int score_doc(req_t *a, const char *fingerprint, ps_buf_t *b)
{
    ps_json_doc_t *d = a->d;
    if (d->tok[0].type != PS_JSON_OBJECT)
        return psi_error(PS_E_ARG, "the request is %s, expected a JSON object", ps_json_type_name(d->tok[0].type));
    int tt = ps_json_get(d, 0, "target", 0), ct = ps_json_get(d, 0, "candidates", 0),
        st = ps_json_get(d, 0, "shares", 0);
    if (tt < 0 || d->tok[tt].type != PS_JSON_STRING)
        return psi_error(PS_E_ARG, "target: expected a workload name (a row of workloads.csv)");
    if (ct < 0 || d->tok[ct].type != PS_JSON_ARRAY || d->tok[ct].size < 1 || d->tok[ct].size > 256)
        return psi_error(PS_E_ARG, "candidates: expected an array of 1..256 candidates");
    a->target = ps_json_str(d, tt);
    int rc = st >= 0 ? read_shares(d, st, a->shares, &a->ns, "request") : PS_OK;
    if (rc == PS_OK)
        rc = target_gpu(a);
    if (rc != PS_OK)
        return rc;
    int nc = d->tok[ct].size;
    ps_coloc_set_t *c = calloc((size_t)nc, sizeof *c);
    if (!c)
        return psi_error(PS_E_NOMEM, "out of memory");
    rc = score_candidates(a, ct, c, nc);
    if (rc == PS_OK)
        score_reply(a, fingerprint, c, nc, b);
    free(c);
    return rc;
}

int ps_coloc_score_json(const ps_coloc_model_t *m, const ps_workloads_t *w, const ps_scaling_t *scaling,
                        const char *request, const ps_coloc_score_names_t *names, char **out)
{
    if (!m || !w || !request || !out)
        return psi_error(PS_E_ARG, "ps_coloc_score_json: NULL argument");
    *out = NULL;
    ps_json_doc_t doc = {0};
    req_t *a = calloc(1, sizeof *a);
    int rc =
        a ? psi_json_load(request, strlen(request), "score request", &doc) : psi_error(PS_E_NOMEM, "out of memory");
    ps_buf_t b = {0};
    if (rc == PS_OK) {
        *a = (req_t){.d = &doc, .m = m, .w = w, .scaling = scaling};
        a->workloads = names && names->workloads ? names->workloads : "workloads.csv";
        rc = score_doc(a, names ? names->fingerprint : NULL, &b);
    }
    if (rc == PS_OK && b.oom)
        rc = psi_error(PS_E_NOMEM, "out of memory");
    if (rc == PS_OK)
        *out = b.s;
    else
        ps_buf_free(&b);
    psi_json_unload(&doc);
    free(a);
    return rc;
}
