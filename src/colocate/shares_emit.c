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

static void emit_env(buf_t *b, cJSON *shares, cJSON *pred)
{
    for (cJSON *e = shares->child; e; e = e->next) {
        cJSON *p = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pred, e->string), "norm_tput");
        if (cJSON_IsNumber(p))
            put(b, "# %s: predicted normalised throughput %.3f\n", e->string, p->valuedouble);
        else
            put(b, "# %s\n", e->string);
        put(b, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%d\n", e->valueint);
    }
}

/* The largest memcap_gb of the set plus 10 %, rounded up to a GiB (0:
 * unknown for some workload). */
static int pinned_gib(cJSON *pred)
{
    double most = 0;
    for (cJSON *e = pred->child; e; e = e->next) {
        cJSON *mc = cJSON_GetObjectItemCaseSensitive(e, "memcap_gb");
        if (!cJSON_IsNumber(mc) || !(mc->valuedouble > 0))
            return 0;
        most = fmax(most, mc->valuedouble);
    }
    return (int)ceil(most * 1.1);
}

static void emit_claim(buf_t *b, cJSON *r, int top, int gib)
{
    put(b, "# pairsight colocate shares (%s, model %s, objective %s): MPS active-thread percentages\n",
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "gpu")),
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "model")),
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "objective")));
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

static void emit_pod(buf_t *b, cJSON *shares, int top)
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
    for (cJSON *e = shares->child; e; e = e->next) {
        char label[64];
        dns_label(e->string, label);
        put(b,
            "  - name: %s  # %s, share %d %%\n"
            "    image: \"\"  # the image that serves %s\n"
            "    resources:\n"
            "      claims:\n"
            "      - name: shared-gpu\n"
            "        request: mps-gpu\n",
            label, e->string, e->valueint, e->string);
        if (e->valueint < top)
            put(b,
                "    env:\n"
                "    - name: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE\n"
                "      value: \"%d\"\n",
                e->valueint);
    }
}

static void yaml_value(buf_t *b, cJSON *v, int indent);

static void yaml_scalar(buf_t *b, cJSON *v)
{
    if (cJSON_IsNumber(v) || cJSON_IsBool(v) || cJSON_IsNull(v) || cJSON_IsString(v)) {
        char *s = psi_json_print(v, 0);
        put(b, "%s\n", s ? s : "null");
        free(s);
    }
}

/* JSON as block YAML: a JSON scalar is a YAML scalar (strings keep JSON's
 * double quotes, which YAML reads the same way). */
static void yaml_value(buf_t *b, cJSON *v, int indent)
{
    if (!(cJSON_IsObject(v) || cJSON_IsArray(v)) || !v->child) {
        if (cJSON_IsObject(v) || cJSON_IsArray(v))
            put(b, " %s\n", cJSON_IsObject(v) ? "{}" : "[]");
        else {
            put(b, " ");
            yaml_scalar(b, v);
        }
        return;
    }
    put(b, "\n");
    for (cJSON *e = v->child; e; e = e->next) {
        if (cJSON_IsObject(v))
            put(b, "%*s%s:", indent, "", e->string); /* our keys: names and ids, plain YAML */
        else
            put(b, "%*s-", indent, "");
        yaml_value(b, e, indent + 2);
    }
}

int ps_coloc_shares_emit(const char *reply, const char *format, char **out)
{
    if (!reply || !format || !out)
        return psi_error(PS_E_ARG, "ps_coloc_shares_emit: NULL argument");
    *out = NULL;
    if (strcmp(format, "dra") && strcmp(format, "env") && strcmp(format, "yaml"))
        return psi_error(PS_E_ARG, "emit: expected dra, env or yaml, got '%s'", format);
    cJSON *r = NULL;
    int rc = psi_json_parse(reply, strlen(reply), "shares reply", &r);
    if (rc)
        return rc;
    cJSON *shares = cJSON_GetObjectItemCaseSensitive(r, "shares"),
          *pred = cJSON_GetObjectItemCaseSensitive(r, "predicted");
    const char *schema = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "schema"));
    if (!schema || strcmp(schema, "pairsight.shares.v1") != 0)
        rc = psi_error(PS_E_INPUT, "emit: not a pairsight.shares.v1 reply");
    else if (strcmp(format, "yaml") != 0 && (!cJSON_IsObject(shares) || !cJSON_IsObject(pred)))
        rc = psi_error(PS_E_INPUT, "emit: the request is infeasible: no shares to emit");
    buf_t b = {0};
    if (!rc && strcmp(format, "yaml") == 0) {
        put(&b, "# pairsight colocate shares\n");
        for (cJSON *e = r->child; e; e = e->next) {
            put(&b, "%s:", e->string);
            yaml_value(&b, e, 2);
        }
    } else if (!rc && strcmp(format, "env") == 0) {
        emit_env(&b, shares, pred);
    } else if (!rc) {
        int top = 0;
        for (cJSON *e = shares->child; e; e = e->next)
            top = e->valueint > top ? e->valueint : top;
        emit_claim(&b, r, top, pinned_gib(pred));
        emit_pod(&b, shares, top);
    }
    cJSON_Delete(r);
    if (!rc && (b.oom || !b.s))
        rc = PS_E_NOMEM;
    if (rc)
        free(b.s);
    else
        *out = b.s;
    return rc;
}
