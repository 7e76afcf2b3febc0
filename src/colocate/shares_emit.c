/*
 * What a cluster applies from a shares reply (ps_coloc_shares_emit):
 *
 * dra  - a ResourceClaimTemplate of resource.k8s.io/v1 whose opaque device
 *        config is the NVIDIA DRA driver's GpuConfig
 *        (resource.nvidia.com/v1beta1; kubernetes-sigs/dra-driver-nvidia-gpu,
 *        api/nvidia.com/resource/v1beta1/gpuconfig.go and sharing.go) with
 *        sharing.strategy MPS and its mpsConfig, and a Pod with one
 *        container per workload. The claim's defaultActiveThreadPercentage
 *        is the largest share: the MPS documentation says a client's
 *        CUDA_MPS_ACTIVE_THREAD_PERCENTAGE can only lower the control
 *        daemon's limit, so each container whose share is smaller gets that
 *        env entry. The pinned-memory limit is the largest memcap_gb of the
 *        set plus 10 %, rounded up to a whole GiB (left out where
 *        workloads.csv has no memcap_gb).
 * env  - the env lines alone, one per workload.
 * yaml - the reply as YAML.
 *
 * tests/test_shares_cli.sh checks every field name against the Go types
 * (the driver's commit is named there and in docs/colocate.md).
 */
#include "colocate/colocate.h"

#include "common/common.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *s;
    size_t n, cap;
    int oom;
} buf_t;

static void put(buf_t *b, const char *fmt, ...) PS_PRINTF(2, 3);
static void put(buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->oom || len < 0)
        return;
    if (b->n + (size_t)len + 1 > b->cap) {
        size_t cap = (b->cap ? 2 * b->cap : 4096) + (size_t)len;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)len;
}

/* A DNS label (RFC 1123) of a workload id: lower case, [a-z0-9-], at most
 * 63 characters, starting and ending alphanumeric. */
static void dns_label(const char *name, char *out)
{
    size_t n = 0;
    for (const char *s = name; *s && n < 63; s++) {
        char c = (char)tolower((unsigned char)*s);
        out[n++] = isalnum((unsigned char)c) ? c : '-';
    }
    while (n && out[n - 1] == '-')
        n--;
    out[n] = '\0';
    if (!n || out[0] == '-')
        out[0] = 'w';
}

/* The reply's tokens: the member of object token o, and number token t
 * as an int (as cJSON's valueint read it: 0 when t is not a number). */
static int member(ps_json_doc_t *d, int o, const char *key) { return ps_json_get(d, o, key, 0); }

static int int_of(const ps_json_doc_t *d, int t)
{
    double v;
    if (ps_json_num(d, t, &v) != 0)
        return 0;
    return v >= INT_MAX ? INT_MAX : v <= INT_MIN ? INT_MIN : (int)v;
}

static void emit_env(buf_t *b, ps_json_doc_t *d, int shares, int pred)
{
    for (int i = 0, k = shares + 1; i < d->tok[shares].size; i++, k = d->tok[k + 1].next) {
        const char *name = ps_json_str(d, k);
        double tput;
        if (psi_json_get_num(d, member(d, pred, name), "norm_tput", &tput) == 0)
            put(b, "# %s: predicted normalised throughput %.3f\n", name, tput);
        else
            put(b, "# %s\n", name);
        put(b, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%d\n", int_of(d, k + 1));
    }
}

/* The largest memcap_gb of the set plus 10 %, rounded up to a GiB (0:
 * unknown for some workload). */
static int pinned_gib(ps_json_doc_t *d, int pred)
{
    double most = 0, mc;
    for (int i = 0, k = pred + 1; i < d->tok[pred].size; i++, k = d->tok[k + 1].next) {
        if (psi_json_get_num(d, k + 1, "memcap_gb", &mc) != 0 || !(mc > 0))
            return 0;
        most = fmax(most, mc);
    }
    return (int)ceil(most * 1.1);
}

static void emit_claim(buf_t *b, ps_json_doc_t *d, int top, int gib)
{
    const char *gpu = psi_json_get_str(d, 0, "gpu"), *model = psi_json_get_str(d, 0, "model"),
               *objective = psi_json_get_str(d, 0, "objective");
    put(b, "# pairsight colocate shares (%s, model %s, objective %s): MPS active-thread percentages\n",
        gpu ? gpu : "(null)", model ? model : "(null)", objective ? objective : "(null)");
    put(b, "# Needs the NVIDIA DRA driver (kubernetes-sigs/dra-driver-nvidia-gpu) with its alpha\n"
           "# feature gate MPSSupport on (Helm: --set featureGates.MPSSupport=true).\n"
           "# A ResourceClaimTemplate gives each pod its own claim: the containers of the Pod\n"
           "# below share one GPU. For separate pods, make a ResourceClaim with this spec.spec\n"
           "# and name it in each pod's resourceClaims[].resourceClaimName instead.\n");
    put(b,
        "apiVersion: resource.k8s.io/v1\n"
        "kind: ResourceClaimTemplate\n"
        "metadata:\n"
        "  name: pairsight-mps\n"
        "spec:\n"
        "  spec:\n"
        "    devices:\n"
        "      requests:\n"
        "      - name: mps-gpu\n"
        "        exactly:\n"
        "          deviceClassName: gpu.nvidia.com\n"
        "      config:\n"
        "      - requests: [\"mps-gpu\"]\n"
        "        opaque:\n"
        "          driver: gpu.nvidia.com\n"
        "          parameters:\n"
        "            apiVersion: resource.nvidia.com/v1beta1\n"
        "            kind: GpuConfig\n"
        "            sharing:\n"
        "              strategy: MPS\n"
        "              mpsConfig:\n"
        "                # the claim's percentage holds for every client; smaller shares\n"
        "                # are each container's CUDA_MPS_ACTIVE_THREAD_PERCENTAGE below\n"
        "                defaultActiveThreadPercentage: %d\n",
        top);
    if (gib > 0)
        put(b,
            "                # the largest memcap_gb of the set + 10 %%, per client\n"
            "                defaultPinnedDeviceMemoryLimit: %dGi\n"
            "                # per device of the claim (index or UUID), overriding the default\n"
            "                defaultPerDevicePinnedMemoryLimit:\n"
            "                  \"0\": %dGi\n",
            gib, gib);
    else
        put(b, "                # no memcap_gb in workloads.csv: no pinned-memory limit\n");
}

static void emit_pod(buf_t *b, ps_json_doc_t *d, int shares, int top)
{
    put(b, "---\n"
           "apiVersion: v1\n"
           "kind: Pod\n"
           "metadata:\n"
           "  name: pairsight-mps\n"
           "spec:\n"
           "  resourceClaims:\n"
           "  - name: shared-gpu\n"
           "    resourceClaimTemplateName: pairsight-mps\n"
           "  containers:\n");
    for (int i = 0, k = shares + 1; i < d->tok[shares].size; i++, k = d->tok[k + 1].next) {
        const char *name = ps_json_str(d, k);
        int share = int_of(d, k + 1);
        char label[64];
        dns_label(name, label);
        put(b,
            "  - name: %s  # %s, share %d %%\n"
            "    image: \"\"  # the image that serves %s\n"
            "    resources:\n"
            "      claims:\n"
            "      - name: shared-gpu\n"
            "        request: mps-gpu\n",
            label, name, share, name);
        if (share < top)
            put(b,
                "    env:\n"
                "    - name: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE\n"
                "      value: \"%d\"\n",
                share);
    }
}

/* A JSON scalar as YAML: its JSON text as the library writes it (a string
 * keeps JSON's double quotes and escapes, which YAML reads the same way). */
static void yaml_scalar(buf_t *b, ps_json_doc_t *d, int t)
{
    const ps_json_tok_t *k = &d->tok[t];
    double v;
    char num[40];
    if (k->type == PS_JSON_NUMBER && ps_json_num(d, t, &v) == 0 && ps_json_number(v, num, sizeof num) == 0) {
        put(b, "%s\n", num);
    } else if (k->type == PS_JSON_STRING) {
        cJSON *str = cJSON_CreateString(ps_json_str(d, t));
        char *text = str ? psi_json_print(str, 0) : NULL;
        put(b, "%s\n", text ? text : "null");
        free(text);
        cJSON_Delete(str);
    } else {
        put(b, "%.*s\n", k->end - k->start, d->text + k->start);
    }
}

/* JSON as block YAML: a JSON scalar is a YAML scalar. */
static void yaml_value(buf_t *b, ps_json_doc_t *d, int v, int indent)
{
    int type = d->tok[v].type, container = type == PS_JSON_OBJECT || type == PS_JSON_ARRAY;
    if (!container || d->tok[v].size == 0) {
        if (container) {
            put(b, " %s\n", type == PS_JSON_OBJECT ? "{}" : "[]");
        } else {
            put(b, " ");
            yaml_scalar(b, d, v);
        }
        return;
    }
    put(b, "\n");
    for (int i = 0, e = v + 1; i < d->tok[v].size; i++) {
        if (type == PS_JSON_OBJECT) {
            put(b, "%*s%s:", indent, "", ps_json_str(d, e)); /* our keys: names and ids, plain YAML */
            e++;
        } else {
            put(b, "%*s-", indent, "");
        }
        yaml_value(b, d, e, indent + 2);
        e = d->tok[e].next;
    }
}

int ps_coloc_shares_emit(const char *reply, const char *format, char **out)
{
    if (!reply || !format || !out)
        return psi_error(PS_E_ARG, "ps_coloc_shares_emit: NULL argument");
    *out = NULL;
    if (strcmp(format, "dra") && strcmp(format, "env") && strcmp(format, "yaml"))
        return psi_error(PS_E_ARG, "emit: expected dra, env or yaml, got '%s'", format);
    ps_json_doc_t doc = {0}, *d = &doc;
    int rc = psi_json_load(reply, strlen(reply), "shares reply", d);
    if (rc) {
        psi_json_unload(d);
        return rc;
    }
    int shares = member(d, 0, "shares"), pred = member(d, 0, "predicted");
    const char *schema = psi_json_get_str(d, 0, "schema");
    int objects =
        shares >= 0 && d->tok[shares].type == PS_JSON_OBJECT && pred >= 0 && d->tok[pred].type == PS_JSON_OBJECT;
    if (!schema || strcmp(schema, "pairsight.shares.v1") != 0)
        rc = psi_error(PS_E_INPUT, "emit: not a pairsight.shares.v1 reply");
    else if (strcmp(format, "yaml") != 0 && !objects)
        rc = psi_error(PS_E_INPUT, "emit: the request is infeasible: no shares to emit");
    buf_t b = {0};
    if (!rc && strcmp(format, "yaml") == 0) {
        put(&b, "# pairsight colocate shares\n");
        for (int i = 0, k = 1; i < d->tok[0].size; i++, k = d->tok[k + 1].next) {
            put(&b, "%s:", ps_json_str(d, k));
            yaml_value(&b, d, k + 1, 2);
        }
    } else if (!rc && strcmp(format, "env") == 0) {
        emit_env(&b, d, shares, pred);
    } else if (!rc) {
        int top = 0;
        for (int i = 0, k = shares + 1; i < d->tok[shares].size; i++, k = d->tok[k + 1].next)
            top = int_of(d, k + 1) > top ? int_of(d, k + 1) : top;
        emit_claim(&b, d, top, pinned_gib(d, pred));
        emit_pod(&b, d, shares, top);
    }
    psi_json_unload(d);
    if (!rc && (b.oom || !b.s))
        rc = PS_E_NOMEM;
    if (rc)
        free(b.s);
    else
        *out = b.s;
    return rc;
}
