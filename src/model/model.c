/*
 * The model handle: allocation, the per-row predictors, metadata, and the
 * model file.
 *
 * Model file (little-endian), format PS_MODEL_FORMAT_VERSION:
 *   8 bytes  magic "PSMODEL\0"
 *   u32      format version
 *   u32      header length, then the header: JSON with the feature layout
 *            (version, variant, window, n_features), the GPU and the
 *            training metadata of ps_model_info_t
 *   2 x      u64 length, then an XGBoost booster in UBJSON (HP, then LP)
 *   8 bytes  end magic "PSMEND\0\0" (a truncated file is refused)
 * The file is written to a temporary name and renamed over the target.
 */
#include "model/model.h"

#include "common/common.h"
#include "profile/gpu.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char file_magic[8] = {'P', 'S', 'M', 'O', 'D', 'E', 'L', 0};
static const unsigned char end_magic[8] = {'P', 'S', 'M', 'E', 'N', 'D', 0, 0};

int ps_xgb_error(const char *what)
{
    return ps_error(PS_E_BACKEND, "XGBoost: %s: %s", what, XGBGetLastError());
}

int ps_model_alloc(const ps_feature_layout_t *l, const char *gpu, ps_model_t **out)
{
    *out = NULL;
    ps_model_t *m = ps_calloc(1, sizeof *m);
    if (!m)
        return PS_E_NOMEM;
    m->gpu = ps_strdup(gpu);
    if (!m->gpu) {
        free(m);
        return PS_E_NOMEM;
    }
    m->layout = *l;
    m->info.format_version = PS_MODEL_FORMAT_VERSION;
    m->info.layout_version = l->version;
    m->info.variant = l->variant;
    m->info.window = l->window;
    m->info.n_features = l->n_features;
    m->info.gpu = m->gpu;
    for (int s = 0; s < 2; s++)
        m->info.valid_mape[s] = m->info.test_mape[s] = NAN;
    *out = m;
    return PS_OK;
}

void ps_model_free(ps_model_t *m)
{
    if (!m)
        return;
    for (int s = 0; s < 2; s++) {
        if (m->booster[s])
            XGBoosterFree(m->booster[s]);
        ps_forest_free(m->forest[s]);
    }
    free(m->gpu);
    free(m);
}

int ps_model_finish(ps_model_t *m)
{
    for (int s = 0; s < 2; s++) {
        if (!m->booster[s])
            return ps_error(PS_E_ARG, "model without a regressor");
        ps_forest_free(m->forest[s]);
        m->forest[s] = NULL;
        int rc = ps_forest_from_booster(m->booster[s], &m->forest[s]);
        if (rc != PS_OK)
            return rc;
        if (ps_forest_n_features(m->forest[s]) > m->layout.n_features)
            return ps_error(PS_E_MISMATCH, "a regressor reads %d features, the layout has %d",
                            ps_forest_n_features(m->forest[s]), m->layout.n_features);
    }
    return PS_OK;
}

int ps_model_predict_xgb(const ps_model_t *m, int side, const float *x, size_t n, int type, double *out)
{
    if (n == 0)
        return PS_OK;
    char config[256];
    const bst_ulong *shape = NULL;
    bst_ulong dim = 0;
    const float *res = NULL;
    size_t per = type == 2 ? (size_t)m->layout.n_features + 1 : 1;
    if (type == 0) {
        /* In-place prediction; cache_id 0 is required by 1.7.4 and missing
         * NaN matches our unmeasured counters. */
        char iface[256];
        snprintf(iface, sizeof iface,
                 "{\"data\": [%llu, true], \"shape\": [%zu, %d], \"typestr\": \"<f4\", \"version\": 3}",
                 (unsigned long long)(uintptr_t)x, n, m->layout.n_features);
        snprintf(config, sizeof config,
                 "{\"type\": 0, \"training\": false, \"iteration_begin\": 0, \"iteration_end\": 0, "
                 "\"strict_shape\": false, \"missing\": NaN, \"cache_id\": 0}");
        if (XGBoosterPredictFromDense(m->booster[side], iface, config, NULL, &shape, &dim, &res) != 0)
            return ps_xgb_error("predicting");
        for (size_t i = 0; i < n; i++)
            out[i] = res[i];
        return PS_OK;
    }
    /* Contributions are not offered in place: go through a DMatrix. */
    DMatrixHandle d = NULL;
    if (XGDMatrixCreateFromMat(x, (bst_ulong)n, (bst_ulong)m->layout.n_features, NAN, &d) != 0)
        return ps_xgb_error("building a prediction matrix");
    snprintf(config, sizeof config,
             "{\"type\": %d, \"training\": false, \"iteration_begin\": 0, \"iteration_end\": 0, "
             "\"strict_shape\": false}",
             type);
    int rc = PS_OK;
    if (XGBoosterPredictFromDMatrix(m->booster[side], d, config, &shape, &dim, &res) != 0)
        rc = ps_xgb_error("predicting contributions");
    else
        for (size_t i = 0; i < n * per; i++)
            out[i] = res[i];
    XGDMatrixFree(d);
    return rc;
}

void ps_model_predict_rows(const ps_model_t *m, int side, const float *x, size_t n, double *out)
{
    ps_forest_predict(m->forest[side], x, n, (size_t)m->layout.n_features, out);
}

/* MAPE = 100 / n * sum |T_pred - T_meas| / T_meas, T_pred = solo * exp(log
 * delta) (the paper's latency MAPE, Table I). */
double ps_latency_mape(const double *pred_log_delta, const double *solo_ns, const double *measured_ns,
                       const unsigned char *split, int which, size_t n)
{
    double s = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (which >= 0 && split && split[i] != which)
            continue;
        double t = solo_ns[i] * exp(pred_log_delta[i]);
        s += fabs(t - measured_ns[i]) / measured_ns[i];
        k++;
    }
    return k ? 100.0 * s / (double)k : NAN;
}

int ps_model_gpu_tpcs(const ps_ops_t *ops, const char *gpu)
{
    const ps_gpu_t *known = ps_gpu_find(gpu);
    if (known)
        return known->tpcs;
    int best = 0;
    for (size_t i = 0; i < ops->n_groups; i++) {
        const ps_op_group_t *g = &ops->groups[i];
        if (strcmp(g->gpu, gpu) == 0 && g->n_tpcs > 0 && g->tpcs[g->n_tpcs - 1] > best)
            best = g->tpcs[g->n_tpcs - 1];
    }
    return best;
}

int ps_model_info(const ps_model_t *m, ps_model_info_t *out)
{
    if (!m || !out)
        return ps_error(PS_E_ARG, "ps_model_info: NULL argument");
    *out = m->info;
    return PS_OK;
}

/* ---- the model file ---- */

/* Little-endian integers of `bytes` bytes. */
static void put_le(unsigned char *b, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *b, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}

static void add_pair(cJSON *o, const char *key, const double v[2])
{
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (int s = 0; s < 2; s++)
        cJSON_AddItemToArray(a, isfinite(v[s]) ? cJSON_CreateNumber(v[s]) : cJSON_CreateNull());
}

static char *header_json(const ps_model_t *m)
{
    const ps_model_info_t *i = &m->info;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON *l = cJSON_AddObjectToObject(o, "layout");
    cJSON_AddNumberToObject(l, "version", m->layout.version);
    cJSON_AddNumberToObject(l, "variant", m->layout.variant);
    cJSON_AddNumberToObject(l, "window", m->layout.window);
    cJSON_AddNumberToObject(l, "n_features", m->layout.n_features);
    cJSON_AddStringToObject(o, "gpu", m->gpu);
    cJSON_AddStringToObject(o, "library_version", PS_VERSION_STRING);
    cJSON_AddNumberToObject(o, "n_samples", (double)i->n_samples);
    cJSON_AddNumberToObject(o, "n_train", (double)i->n_train);
    cJSON_AddNumberToObject(o, "n_valid", (double)i->n_valid);
    cJSON_AddNumberToObject(o, "n_test", (double)i->n_test);
    cJSON_AddNumberToObject(o, "n_experiments", (double)i->n_experiments);
    cJSON_AddNumberToObject(o, "seed", i->seed);
    if (i->split_fingerprint) {
        /* 64 bits do not survive a JSON number: hex text. */
        char fp[17];
        snprintf(fp, sizeof fp, "%016" PRIx64, i->split_fingerprint);
        cJSON_AddStringToObject(o, "split_fingerprint", fp);
    }
    cJSON_AddNumberToObject(o, "train_seconds", i->train_seconds);
    double depth[2] = {i->depth[0], i->depth[1]};
    add_pair(o, "depth", depth);
    add_pair(o, "eta", i->eta);
    add_pair(o, "valid_mape", i->valid_mape);
    add_pair(o, "test_mape", i->test_mape);
    cJSON_AddNumberToObject(o, "n_adapt", i->n_adapt);
    cJSON_AddNumberToObject(o, "adapt_samples", (double)i->adapt_samples);
    cJSON_AddNumberToObject(o, "adapt_seconds", i->adapt_seconds);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

int ps_model_save(const ps_model_t *m, const char *path)
{
    if (!m || !path)
        return ps_error(PS_E_ARG, "ps_model_save: NULL argument");
    char *hdr = header_json(m);
    if (!hdr)
        return ps_error(PS_E_NOMEM, "out of memory writing the model header");
    ps_atomic_t *a = NULL;
    int rc = ps_atomic_open(path, &a);
    if (rc != PS_OK) {
        cJSON_free(hdr);
        return rc;
    }
    FILE *f = ps_atomic_stream(a);
    unsigned char b[8];
    fwrite(file_magic, 1, 8, f);
    put_le(b, PS_MODEL_FORMAT_VERSION, 4);
    fwrite(b, 1, 4, f);
    size_t hl = strlen(hdr);
    put_le(b, (uint32_t)hl, 4);
    fwrite(b, 1, 4, f);
    fwrite(hdr, 1, hl, f);
    cJSON_free(hdr);
    for (int s = 0; s < 2 && rc == PS_OK; s++) {
        bst_ulong len = 0;
        const char *buf = NULL;
        if (XGBoosterSaveModelToBuffer(m->booster[s], "{\"format\": \"ubj\"}", &len, &buf) != 0) {
            rc = ps_xgb_error("serializing a regressor");
            break;
        }
        put_le(b, (uint64_t)len, 8);
        fwrite(b, 1, 8, f);
        fwrite(buf, 1, (size_t)len, f);
    }
    fwrite(end_magic, 1, 8, f);
    if (rc != PS_OK) {
        ps_atomic_abort(a);
        return rc;
    }
    return ps_atomic_commit(a);
}

static int read_file(const char *path, unsigned char **out, size_t *n)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ps_error(PS_E_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = ps_malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap)
            break;
        unsigned char *nb = ps_realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f) ? errno : 0;
    fclose(f);
    if (!buf)
        return PS_E_NOMEM;
    if (bad) {
        free(buf);
        return ps_error(PS_E_IO, "%s: read error: %s", path, strerror(bad));
    }
    *out = buf;
    *n = len;
    return PS_OK;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void pair(const cJSON *o, const char *key, double v[2])
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    for (int s = 0; s < 2; s++) {
        const cJSON *e = cJSON_IsArray(a) ? cJSON_GetArrayItem(a, s) : NULL;
        v[s] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
    }
}

static size_t count(double v)
{
    return isfinite(v) && v > 0 ? (size_t)v : 0;
}

/* Parse the header into a fresh model (boosters not yet loaded). */
static int parse_header(const char *path, const char *text, size_t len, ps_model_t **out)
{
    *out = NULL;
    cJSON *o = cJSON_ParseWithLength(text, len);
    if (!o)
        return ps_error(PS_E_INPUT, "%s: model header is not JSON", path);
    int rc = PS_OK;
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "layout");
    const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(o, "gpu");
    double version = num(l, "version"), variant = num(l, "variant"), window = num(l, "window"),
           nf = num(l, "n_features");
    ps_feature_layout_t want;
    if (!cJSON_IsObject(l) || !cJSON_IsString(gpu) || !isfinite(version) || !isfinite(variant) ||
        !isfinite(window) || !isfinite(nf)) {
        rc = ps_error(PS_E_INPUT, "%s: model header lacks the feature layout or GPU", path);
    } else if ((int)version != PS_FEATURES_LAYOUT_VERSION) {
        rc = ps_error(PS_E_MISMATCH, "%s: feature layout version %d, this build reads version %d", path,
                      (int)version, PS_FEATURES_LAYOUT_VERSION);
    } else if ((rc = ps_features_layout((ps_feature_variant_t)variant, (int)window, &want)) != PS_OK) {
        ps_error_prefix(rc, path);
    } else if (want.n_features != (int)nf) {
        rc = ps_error(PS_E_MISMATCH, "%s: layout of %d features, this build makes %d", path, (int)nf,
                      want.n_features);
    } else if ((rc = ps_model_alloc(&want, gpu->valuestring, out)) == PS_OK) {
        ps_model_info_t *i = &(*out)->info;
        i->n_samples = count(num(o, "n_samples"));
        i->n_train = count(num(o, "n_train"));
        i->n_valid = count(num(o, "n_valid"));
        i->n_test = count(num(o, "n_test"));
        i->n_experiments = count(num(o, "n_experiments"));
        i->seed = (unsigned)count(num(o, "seed"));
        const cJSON *fp = cJSON_GetObjectItemCaseSensitive(o, "split_fingerprint");
        if (cJSON_IsString(fp)) {
            char *end = NULL;
            errno = 0;
            unsigned long long v = strtoull(fp->valuestring, &end, 16);
            if (errno == 0 && end != fp->valuestring && *end == 0 && strlen(fp->valuestring) == 16)
                i->split_fingerprint = (uint64_t)v;
        }
        i->train_seconds = num(o, "train_seconds");
        double depth[2];
        pair(o, "depth", depth);
        i->depth[0] = (int)count(depth[0]);
        i->depth[1] = (int)count(depth[1]);
        pair(o, "eta", i->eta);
        pair(o, "valid_mape", i->valid_mape);
        pair(o, "test_mape", i->test_mape);
        i->n_adapt = (int)count(num(o, "n_adapt"));
        i->adapt_samples = count(num(o, "adapt_samples"));
        i->adapt_seconds = num(o, "adapt_seconds");
    }
    cJSON_Delete(o);
    return rc;
}

int ps_model_load(const char *path, ps_model_t **out)
{
    *out = NULL;
    if (!path)
        return ps_error(PS_E_ARG, "ps_model_load: NULL path");
    unsigned char *buf = NULL;
    size_t n = 0;
    int rc = read_file(path, &buf, &n);
    if (rc != PS_OK)
        return rc;
    ps_model_t *m = NULL;
    size_t at = 16;
    if (n < 16 || memcmp(buf, file_magic, 8) != 0) {
        rc = ps_error(PS_E_INPUT, "%s: not a pairsight model file", path);
        goto done;
    }
    if (get_le(buf + 8, 4) != PS_MODEL_FORMAT_VERSION) {
        rc = ps_error(PS_E_MISMATCH, "%s: model format version %u, this build reads version %d", path,
                      (unsigned)get_le(buf + 8, 4), PS_MODEL_FORMAT_VERSION);
        goto done;
    }
    size_t hl = get_le(buf + 12, 4);
    if (hl > n - at) {
        rc = ps_error(PS_E_INPUT, "%s: truncated model file", path);
        goto done;
    }
    if ((rc = parse_header(path, (const char *)buf + at, hl, &m)) != PS_OK)
        goto done;
    at += hl;
    for (int s = 0; s < 2; s++) {
        if (n - at < 8 || get_le(buf + at, 8) > n - at - 8) {
            rc = ps_error(PS_E_INPUT, "%s: truncated model file", path);
            goto done;
        }
        size_t bl = (size_t)get_le(buf + at, 8);
        at += 8;
        if (XGBoosterCreate(NULL, 0, &m->booster[s]) != 0 ||
            XGBoosterLoadModelFromBuffer(m->booster[s], buf + at, (bst_ulong)bl) != 0) {
            rc = ps_xgb_error(path);
            goto done;
        }
        at += bl;
        int rounds = 0;
        XGBoosterBoostedRounds(m->booster[s], &rounds);
        m->info.n_trees[s] = rounds;
    }
    if (n - at != 8 || memcmp(buf + at, end_magic, 8) != 0) {
        rc = ps_error(PS_E_INPUT, "%s: truncated or trailing data after the regressors", path);
        goto done;
    }
    rc = ps_model_finish(m);
done:
    free(buf);
    if (rc != PS_OK) {
        ps_model_free(m);
        return rc;
    }
    *out = m;
    return PS_OK;
}
