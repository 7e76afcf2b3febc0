/*
 * The Kubernetes scheduler extender (kube-scheduler's extender protocol,
 * k8s.io/kube-scheduler/extender/v1): POST /k8s/filter takes ExtenderArgs
 * {Pod, Nodes | NodeNames} and answers ExtenderFilterResult {Nodes,
 * NodeNames, FailedNodes, FailedAndUnresolvableNodes, Error}; POST
 * /k8s/prioritize answers a HostPriorityList [{Host, Score}], scores 0..10.
 * The Go structs have no JSON tags, so their keys are the Go field names;
 * they are written as such and read in any case, as Go's decoder reads
 * them (the Pod and Node objects inside have Kubernetes' lower-case tags,
 * read in any case too).
 *
 * The pod names its workload (a row of workloads.csv) in the annotation
 * pairsight.io/workload and may set a floor on its normalized throughput in
 * pairsight.io/min-throughput. A node carries its GPUs in pairsight.io/gpus:
 * {"type": GPU, "gpus": [[resident, ...], ...]}, a resident being a
 * workload name or {"workload": name, "min_throughput": floor}. A GPU can
 * take the pod when, with the pod added, no one on it (the pod included)
 * falls under its floor; an empty GPU always can (the pod runs alone,
 * normalized throughput 1). A node passes the filter when one of its GPUs
 * can take the pod; its score is the best such GPU's predicted total
 * normalized throughput, scaled so that the best node gets 10.
 */
#include "serve/serve_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXK SERVE_MAXK

typedef struct {
    const char *workload;
    double floor;
} pod_t;

/* What one node gives the pod: ok (a GPU takes it), best total, why not. */
typedef struct {
    const char *name;
    int item;      /* its token in Nodes.items, -1 for NodeNames */
    int ok, unres; /* passes; fails for a reason preemption cannot change */
    double best;   /* best feasible GPU's total normalized throughput */
    char why[512];
} node_eval_t;

/* ---- the --nodes file ---- */

int serve_nodes_load(const char *path, serve_models_t *m, char *err, size_t errsize)
{
    FILE *f = fopen(path, "rb");
    char *text = f ? malloc(4u << 20) : NULL;
    size_t n = text ? fread(text, 1, (4u << 20) - 1, f) : 0;
    if (f)
        fclose(f);
    ps_json_doc_t d = {.max_depth = 16};
    int rc = -1;
    if (!text)
        snprintf(err, errsize, "--nodes %s: cannot read", path);
    else if (ps_json_parse(&d, text, n) != 0 || d.tok[0].type != PS_JSON_OBJECT)
        snprintf(err, errsize, "--nodes %s: expected a JSON object of node name -> pairsight.io/gpus (%s)", path,
                 d.err[0] ? d.err : "not an object");
    else if (!(m->node_names = calloc((size_t)d.tok[0].size + 1, sizeof(char *))) ||
             !(m->node_gpus = calloc((size_t)d.tok[0].size + 1, sizeof(char *))))
        snprintf(err, errsize, "out of memory");
    else
        rc = 0;
    for (int i = 0, k = 1; rc == 0 && i < d.tok[0].size; i++, k = d.tok[k + 1].next) {
        const ps_json_tok_t *v = &d.tok[k + 1];
        int is_str = v->type == PS_JSON_STRING;
        const char *s = is_str ? ps_json_str(&d, k + 1) : text + v->start;
        size_t len = is_str ? strlen(s) : (size_t)(v->end - v->start);
        m->node_names[i] = strdup(ps_json_str(&d, k));
        m->node_gpus[i] = strndup(s, len);
        m->n_nodes++;
        if (!m->node_names[i] || !m->node_gpus[i]) {
            snprintf(err, errsize, "out of memory");
            rc = -1;
        }
    }
    ps_json_doc_free(&d);
    free(text);
    return rc;
}

/* ---- reading the request ---- */

/* The annotations object of a Pod or Node object t, or -1. */
static int annotations(ps_json_doc_t *d, int t)
{
    int md = ps_json_get(d, t, "metadata", 1);
    return ps_json_get(d, md, "annotations", 1);
}

static int read_pod(serve_req_t *q, serve_reply_t *r, pod_t *pod)
{
    ps_json_doc_t *d = q->doc;
    int p = ps_json_get(d, 0, "Pod", 1);
    if (p < 0 || d->tok[p].type != PS_JSON_OBJECT)
        return serve_error(r, 400, "missing_field", "Pod: expected the pod object (ExtenderArgs.Pod)");
    int a = annotations(d, p);
    int w = ps_json_get(d, a, "pairsight.io/workload", 0);
    pod->workload = NULL; /* not pairsight's pod: every node passes, with the same score */
    pod->floor = 0;
    if (w < 0)
        return 0;
    if (d->tok[w].type != PS_JSON_STRING || !*ps_json_str(d, w))
        return serve_error(r, 400, "bad_annotation",
                           "Pod: annotation pairsight.io/workload: expected a workload name (a row of workloads.csv)");
    pod->workload = ps_json_str(d, w);
    int fl = ps_json_get(d, a, "pairsight.io/min-throughput", 0);
    if (fl >= 0) {
        char *end = NULL;
        const char *s = d->tok[fl].type == PS_JSON_STRING ? ps_json_str(d, fl) : "";
        pod->floor = strtod(s, &end);
        if (!*s || *end || !(pod->floor >= 0 && pod->floor <= 1))
            return serve_error(r, 400, "bad_annotation",
                               "Pod: annotation pairsight.io/min-throughput: bad value '%s': expected a number in 0..1",
                               s);
    }
    return 0;
}

/* ---- one node ---- */

/* A node's pairsight.io/gpus annotation, parsed, for the pod: its GPU
 * type and the array of its GPUs. */
typedef struct {
    ps_json_doc_t d;
    const char *type;
    int gpus; /* the token of the GPUs' array */
    const pod_t *pod;
} node_gpus_t;

/* One GPU with the pod added: the set (the pod in slot 0, then the
 * residents) and each one's floor. */
typedef struct {
    serve_set_t set;
    double floors[MAXK];
} gpu_set_t;

/* The residents of GPU array token g into g->set (after slot 0, the
 * pod's) and their floors; -1 with why when malformed. */
static int residents(ps_json_doc_t *d, int g, gpu_set_t *gs, char *why, size_t wsize)
{
    if (d->tok[g].type != PS_JSON_ARRAY || d->tok[g].size >= MAXK) {
        snprintf(why, wsize, "pairsight.io/gpus: a GPU is not an array of at most %d residents", MAXK - 1);
        return -1;
    }
    int k = 1;
    for (int i = 0, e = g + 1; i < d->tok[g].size; i++, e = d->tok[e].next, k++) {
        int wt = d->tok[e].type == PS_JSON_OBJECT ? ps_json_get(d, e, "workload", 1) : e;
        int ft = d->tok[e].type == PS_JSON_OBJECT ? ps_json_get(d, e, "min_throughput", 1) : -1;
        gs->floors[k] = 0;
        if (wt < 0 || d->tok[wt].type != PS_JSON_STRING || (ft >= 0 && ps_json_num(d, ft, &gs->floors[k]) != 0)) {
            snprintf(why, wsize, "pairsight.io/gpus: a resident is not a name or {\"workload\", \"min_throughput\"}");
            return -1;
        }
        if (!(gs->floors[k] >= 0 && gs->floors[k] <= 1)) {
            snprintf(why, wsize, "pairsight.io/gpus: a resident's min_throughput %g is not in 0..1", gs->floors[k]);
            return -1;
        }
        gs->set.names[k] = ps_json_str(d, wt);
        gs->set.shares[k] = 100;
    }
    gs->set.k = k;
    return 0;
}

/* Why the model cannot predict k workloads at once, appended to ne->why. */
static void untrained_k(node_eval_t *ne, int gi, int k, unsigned ks)
{
    size_t l = strlen(ne->why);
    snprintf(ne->why + l, sizeof ne->why - l,
             "%sgpu %d: the co-location model was not trained on %d workloads at once (trained on k = ", l ? "; " : "",
             gi, k);
    for (int j = 0, first = 1; j < 32; j++)
        if (ks >> j & 1) {
            l = strlen(ne->why);
            snprintf(ne->why + l, sizeof ne->why - l, "%s%d", first ? "" : ",", j);
            first = 0;
        }
    l = strlen(ne->why);
    snprintf(ne->why + l, sizeof ne->why - l, ")");
}

/* GPU token g (the gi-th) of node n: feasible or not, its total, why not. */
static int eval_gpu(serve_req_t *q, node_gpus_t *n, int g, int gi, double *total, node_eval_t *ne)
{
    gpu_set_t gs;
    if (residents(&n->d, g, &gs, ne->why, sizeof ne->why) != 0)
        return ne->unres = 1, -1;
    int k = gs.set.k;
    gs.set.names[0] = n->pod->workload;
    gs.set.shares[0] = 100;
    gs.floors[0] = n->pod->floor;
    if (k == 1) {
        *total = 1; /* alone */
        return 1;
    }
    unsigned ks = ps_coloc_model_ks(q->models->coloc);
    if (ks && (k >= 32 || !(ks >> k & 1))) {
        untrained_k(ne, gi, k, ks);
        return 0;
    }
    if (serve_coloc_set(q->models, n->type, &gs.set) != 0) {
        snprintf(ne->why, sizeof ne->why, "gpu %d: %s", gi, ps_last_error());
        return ne->unres = 1, -1;
    }
    for (int i = 0; i < k; i++)
        if (!(gs.set.norm[i] >= gs.floors[i])) {
            size_t l = strlen(ne->why);
            snprintf(ne->why + l, sizeof ne->why - l,
                     "%sgpu %d: %s %s would get %.3g of its exclusive throughput, "
                     "under its floor %.3g",
                     l ? "; " : "", gi, i ? "resident" : "pod", gs.set.names[i], gs.set.norm[i], gs.floors[i]);
            return 0;
        }
    *total = gs.set.norm_sum;
    return 1;
}

/* Node annotation text (NUL-terminated, writable) for the pod; each GPU
 * costs 1 + its residents of *budget, and the node stops (with *budget
 * negative) when the budget is spent. */
static void eval_node(serve_req_t *q, char *gpus, const pod_t *pod, node_eval_t *ne, long *budget)
{
    node_gpus_t n = {.d = {.max_depth = 8}, .gpus = -1, .pod = pod};
    ps_json_doc_t *d = &n.d;
    if (!gpus) {
        snprintf(ne->why, sizeof ne->why, "node %s has no pairsight.io/gpus annotation", ne->name);
        ne->unres = 1;
        return;
    }
    int ty = -1;
    if (ps_json_parse(d, gpus, strlen(gpus)) == 0 && d->tok[0].type == PS_JSON_OBJECT) {
        ty = ps_json_get(d, 0, "type", 1);
        n.gpus = ps_json_get(d, 0, "gpus", 1);
    }
    int gs = n.gpus;
    if (ty < 0 || d->tok[ty].type != PS_JSON_STRING || gs < 0 || d->tok[gs].type != PS_JSON_ARRAY) {
        snprintf(ne->why, sizeof ne->why,
                 "pairsight.io/gpus: expected {\"type\": GPU, \"gpus\": [[resident, ...], ...]}");
        ne->unres = 1;
    } else if (isnan(ps_coloc_solo(q->models->w, q->models->scaling, ps_json_str(d, ty), pod->workload, 100))) {
        snprintf(ne->why, sizeof ne->why, "workload '%s' has no row on GPU type %s in %s", pod->workload,
                 ps_json_str(d, ty), q->p->workloads_path);
        ne->unres = 1;
    } else {
        n.type = ps_json_str(d, ty);
        for (int i = 0, g = gs + 1; i < d->tok[gs].size && !ne->unres; i++, g = d->tok[g].next) {
            double total = 0;
            if ((*budget -= 1 + (d->tok[g].type == PS_JSON_ARRAY ? d->tok[g].size : 0)) < 0)
                break;
            if (eval_gpu(q, &n, g, i, &total, ne) == 1 && (!ne->ok || total > ne->best)) {
                ne->ok = 1;
                ne->best = total;
            }
        }
        if (!ne->ok && !ne->unres && !ne->why[0])
            snprintf(ne->why, sizeof ne->why, "node %s has no GPU", ne->name);
    }
    if (ne->ok)
        ne->why[0] = 0;
    ps_json_doc_free(d);
}

static char *node_gpus_from_file(const serve_models_t *m, const char *name)
{
    for (int i = 0; i < m->n_nodes; i++)
        if (strcmp(m->node_names[i], name) == 0)
            return strdup(m->node_gpus[i]);
    return NULL;
}

/* What node token t costs: 1 + residents per GPU of its annotation (of
 * the --nodes file for NodeNames), counted before anything is predicted. */
static long node_work(serve_req_t *q, int t, int by_name)
{
    ps_json_doc_t *d = q->doc;
    const char *text = NULL;
    if (by_name) {
        const char *name = d->tok[t].type == PS_JSON_STRING ? ps_json_str(d, t) : "";
        for (int i = 0; i < q->models->n_nodes && !text; i++)
            if (strcmp(q->models->node_names[i], name) == 0)
                text = q->models->node_gpus[i];
    } else {
        int ga = ps_json_get(d, annotations(d, t), "pairsight.io/gpus", 0);
        text = ga >= 0 && d->tok[ga].type == PS_JSON_STRING ? ps_json_str(d, ga) : NULL;
    }
    if (!text)
        return 1;
    char *copy = strdup(text);
    ps_json_doc_t g = {.max_depth = 8};
    long work = 1;
    int gs = copy && ps_json_parse(&g, copy, strlen(copy)) == 0 ? ps_json_get(&g, 0, "gpus", 1) : -1;
    if (gs >= 0 && g.tok[gs].type == PS_JSON_ARRAY)
        for (int i = 0, e = gs + 1; i < g.tok[gs].size; i++, e = g.tok[e].next)
            work += 1 + (g.tok[e].type == PS_JSON_ARRAY ? g.tok[e].size : 0);
    ps_json_doc_free(&g);
    free(copy);
    return work;
}

static int work_error(serve_reply_t *r, long max)
{
    return serve_error(r, 413, "too_much_work",
                       "the request asks for more than %ld co-location predictions (nodes x GPUs x (residents + 1); "
                       "--max-work): send fewer nodes",
                       max);
}

/* Every candidate node of the request evaluated into *out[*n]. */
static int eval_nodes(serve_req_t *q, serve_reply_t *r, const pod_t *pod, node_eval_t **out, int *n, int *by_name)
{
    ps_json_doc_t *d = q->doc;
    int nodes = ps_json_get(d, 0, "Nodes", 1), names = ps_json_get(d, 0, "NodeNames", 1);
    if (nodes >= 0 && d->tok[nodes].type == PS_JSON_NULL)
        nodes = -1;
    if (names >= 0 && d->tok[names].type == PS_JSON_NULL)
        names = -1;
    int items = nodes >= 0 ? ps_json_get(d, nodes, "items", 1) : -1;
    *by_name = nodes < 0;
    int list = *by_name ? names : items;
    if (list < 0 || d->tok[list].type != PS_JSON_ARRAY)
        return serve_error(r, 400, "missing_field",
                           "expected Nodes (a NodeList with items) or NodeNames (an array of names)");
    *n = d->tok[list].size;
    long budget = q->p->max_work > 0 ? q->p->max_work : 5000, work = 0;
    for (int i = 0, t = list + 1; i < *n && work <= budget && pod->workload; i++, t = d->tok[t].next)
        work += node_work(q, t, *by_name);
    if (work > budget || *n > budget)
        return work_error(r, budget);
    node_eval_t *ne = *out = calloc((size_t)*n + 1, sizeof *ne);
    if (!ne)
        return serve_error(r, 500, "out_of_memory", "out of memory");
    for (int i = 0, t = list + 1; i < *n; i++, t = d->tok[t].next) {
        int nm = *by_name ? t : ps_json_get(d, ps_json_get(d, t, "metadata", 1), "name", 1);
        if (nm < 0 || d->tok[nm].type != PS_JSON_STRING)
            return serve_error(r, 400, "bad_field", "%s[%d]: expected a node name",
                               *by_name ? "NodeNames" : "Nodes.items", i);
        ne[i].item = *by_name ? -1 : t;
        ne[i].name = ps_json_str(d, nm);
        if (!pod->workload) { /* not pairsight's pod */
            ne[i].ok = 1;
            continue;
        }
        int ga = *by_name ? -1 : ps_json_get(d, annotations(d, t), "pairsight.io/gpus", 0);
        char *gpus = *by_name                                       ? node_gpus_from_file(q->models, ne[i].name)
                     : ga >= 0 && d->tok[ga].type == PS_JSON_STRING ? strdup(ps_json_str(d, ga))
                                                                    : NULL;
        eval_node(q, gpus, pod, &ne[i], &budget);
        free(gpus);
        if (budget < 0)
            return work_error(r, q->p->max_work > 0 ? q->p->max_work : 5000);
    }
    return 0;
}

/* One extender request read and every node evaluated: a copy of the body
 * keeps the nodes' raw text for the filter's reply (the tokenizer unescapes
 * strings in place). */
typedef struct {
    char *raw;
    pod_t pod;
    node_eval_t *ne;
    int n, by_name;
} k8s_args_t;

static int read_args(serve_req_t *q, serve_reply_t *r, k8s_args_t *a)
{
    memset(a, 0, sizeof *a);
    a->raw = malloc(q->body_len + 1);
    if (!a->raw)
        return serve_error(r, 500, "out_of_memory", "out of memory");
    memcpy(a->raw, q->body, q->body_len + 1);
    if (serve_parse_body(q, r) || read_pod(q, r, &a->pod) || eval_nodes(q, r, &a->pod, &a->ne, &a->n, &a->by_name))
        return r->status;
    r->body.len = 0;
    return 0;
}

static int args_done(k8s_args_t *a, serve_reply_t *r)
{
    free(a->ne);
    free(a->raw);
    return r->status;
}

static void failed_map(ps_buf_t *b, const char *key, const node_eval_t *ne, int n, int unres)
{
    ps_buf_printf(b, ",\"%s\":{", key);
    for (int i = 0, first = 1; i < n; i++)
        if (!ne[i].ok && ne[i].unres == unres) {
            if (!first)
                ps_buf_putn(b, ",", 1);
            ps_buf_json_str(b, ne[i].name);
            ps_buf_putn(b, ":", 1);
            ps_buf_json_str(b, ne[i].why);
            first = 0;
        }
    ps_buf_putn(b, "}", 1);
}

int serve_k8s_filter(serve_req_t *q, serve_reply_t *r)
{
    k8s_args_t a;
    if (read_args(q, r, &a) != 0)
        return args_done(&a, r);
    ps_buf_t *b = &r->body;
    ps_buf_puts(b, a.by_name ? "{\"Nodes\":null,\"NodeNames\":[" : "{\"Nodes\":{\"items\":[");
    for (int i = 0, first = 1; i < a.n; i++)
        if (a.ne[i].ok) {
            const ps_json_tok_t *t = a.by_name ? NULL : &q->doc->tok[a.ne[i].item];
            if (!first)
                ps_buf_putn(b, ",", 1);
            if (t)
                ps_buf_putn(b, a.raw + t->start, (size_t)(t->end - t->start));
            else
                ps_buf_json_str(b, a.ne[i].name);
            first = 0;
        }
    ps_buf_puts(b, a.by_name ? "]" : "]},\"NodeNames\":null");
    failed_map(b, "FailedNodes", a.ne, a.n, 0);
    failed_map(b, "FailedAndUnresolvableNodes", a.ne, a.n, 1);
    ps_buf_puts(b, ",\"Error\":\"\"}\n");
    r->status = 200;
    return args_done(&a, r);
}

int serve_k8s_prioritize(serve_req_t *q, serve_reply_t *r)
{
    k8s_args_t a;
    if (read_args(q, r, &a) != 0)
        return args_done(&a, r);
    double top = 0;
    for (int i = 0; i < a.n; i++)
        if (a.ne[i].ok && a.ne[i].best > top)
            top = a.ne[i].best;
    ps_buf_t *b = &r->body;
    ps_buf_putn(b, "[", 1);
    for (int i = 0; i < a.n; i++) {
        long score = a.ne[i].ok && top > 0 ? lround(10 * a.ne[i].best / top) : 0;
        ps_buf_puts(b, i ? ",{\"Host\":" : "{\"Host\":");
        ps_buf_json_str(b, a.ne[i].name);
        ps_buf_printf(b, ",\"Score\":%ld}", score);
    }
    ps_buf_puts(b, "]\n");
    r->status = 200;
    return args_done(&a, r);
}
