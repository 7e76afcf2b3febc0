/*
 * The model handle: allocation, the per-row predictors, metadata, and the
 * model file.
 *
 * Model file (little-endian), format PS_MODEL_FORMAT_VERSION (2):
 *   8 bytes  magic "PSMODEL\0"
 *   u32      format version
 *   u32      number of sections (3)
 *   sections, each: a 4-byte tag, a u64 payload length, the CRC-32 (zlib)
 *            of tag, length and payload as a u32, then the payload:
 *     "META" JSON: the feature layout (version, variant, window,
 *            n_features), the GPU, the training metadata of
 *            ps_model_info_t and "regressors" naming each booster's side
 *            and kind; readers ignore keys they do not know, so that the
 *            metadata can grow without a new format
 *     "XGHP" the HP regressor, an XGBoost booster in UBJSON
 *     "XGLP" the LP regressor
 *   8 bytes  end magic "PSMEND\0\0" (a truncated file is refused)
 * Every section is checked (tag, order, length, checksum) before any byte
 * reaches cJSON or XGBoost: a flipped byte is refused with a message, never
 * handed to XGBoost's UBJSON reader (single-byte flips crashed it). Each
 * booster also carries its side and kind as XGBoost attributes, checked
 * after loading, so that regressors swapped inside a file are refused.
 * Version 1 (no checksums) is refused by version. The file is written to a
 * temporary name and renamed over the target.
 */
#include "model/model.h"

#include "common/common.h"
#include "model/calib.h"
#include "profile/gpu.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <zlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char file_magic[8] = {'P', 'S', 'M', 'O', 'D', 'E', 'L', 0};
static const unsigned char end_magic[8] = {'P', 'S', 'M', 'E', 'N', 'D', 0, 0};
/* Section tags, in file order, and what each holds. */
static const char sec_tag[3][5] = {"META", "XGHP", "XGLP"};
static const char *const sec_what[3] = {"metadata", "HP regressor", "LP regressor"};
/* The booster attributes that tag each regressor. */
static const char *const side_name[2] = {"hp", "lp"};
#define BOOSTER_KIND "segment-log-slowdown"

int psi_model_alloc(const psi_feature_layout_t *l, const char *gpu, ps_model_t **out)
{
    *out = NULL;
    ps_model_t *m = psi_calloc(1, sizeof *m);
    if (!m)
        return PS_E_NOMEM;
    m->gpu = psi_strdup(gpu);
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
        psi_forest_free(m->forest[s]);
    }
    free(m->gpu);
    free(m->calib);
    psi_pair_memo_free(m->pair_memo);
    free(m);
}

const psi_calib_t *psi_model_calib(const ps_model_t *m) { return m->calib; }

int psi_model_finish(ps_model_t *m)
{
    for (int s = 0; s < 2; s++) {
        if (!m->booster[s])
            return psi_error(PS_E_ARG, "model without a regressor");
        psi_forest_free(m->forest[s]);
        m->forest[s] = NULL;
        int rc = psi_forest_from_booster(m->booster[s], &m->forest[s]);
        if (rc != PS_OK)
            return rc;
        if (psi_forest_n_features(m->forest[s]) > m->layout.n_features)
            return psi_error(PS_E_MISMATCH, "a regressor reads %d features, the layout has %d",
                             psi_forest_n_features(m->forest[s]), m->layout.n_features);
    }
    /* New forests: what the memo holds no longer stands. */
    if (m->pair_memo)
        psi_pair_memo_clear(m->pair_memo);
    else if (!(m->pair_memo = psi_pair_memo_new()))
        return PS_E_NOMEM;
    return PS_OK;
}

int psi_model_predict_xgb(const ps_model_t *m, int side, const float *x, size_t n, int type, double *out)
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
            return psi_xgb_error("predicting");
        for (size_t i = 0; i < n; i++)
            out[i] = res[i];
        return PS_OK;
    }
    /* Contributions are not offered in place: go through a DMatrix. */
    DMatrixHandle d = NULL;
    if (XGDMatrixCreateFromMat(x, (bst_ulong)n, (bst_ulong)m->layout.n_features, NAN, &d) != 0)
        return psi_xgb_error("building a prediction matrix");
    snprintf(config, sizeof config,
             "{\"type\": %d, \"training\": false, \"iteration_begin\": 0, \"iteration_end\": 0, "
             "\"strict_shape\": false}",
             type);
    int rc = PS_OK;
    if (XGBoosterPredictFromDMatrix(m->booster[side], d, config, &shape, &dim, &res) != 0)
        rc = psi_xgb_error("predicting contributions");
    else
        for (size_t i = 0; i < n * per; i++)
            out[i] = res[i];
    XGDMatrixFree(d);
    return rc;
}

void psi_model_predict_rows(const ps_model_t *m, int side, const float *x, size_t n, double *out)
{
    psi_forest_predict(m->forest[side], x, n, (size_t)m->layout.n_features, out);
}

void psi_model_predict_rows_pair(const ps_model_t *m, const float *x_hp, const float *x_lp, size_t n, double *out_hp,
                                 double *out_lp)
{
    size_t nf = (size_t)m->layout.n_features;
    if (m->layout.variant != PS_FEAT_NO_CORUNNER) {
        psi_forest_predict_pair(m->forest, x_hp, n, nf, (double *const[2]){out_hp, out_lp});
        return;
    }
    psi_forest_predict(m->forest[PS_SIDE_HP], x_hp, n, nf, out_hp);
    psi_forest_predict(m->forest[PS_SIDE_LP], x_lp, n, nf, out_lp);
}

/* MAPE = 100 / n * sum |T_pred - T_meas| / T_meas, T_pred = solo * exp(log
 * delta) (the paper's latency MAPE, Table I). */
double psi_latency_mape(const double *pred_log_delta, const double *solo_ns, const double *measured_ns,
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

int psi_model_gpu_tpcs(const ps_ops_t *ops, const char *gpu)
{
    const psi_gpu_t *known = psi_gpu_find(gpu);
    if (known)
        return known->tpcs;
    int best = 0;
    for (size_t i = 0; i < ops->n_groups; i++) {
        const psi_op_group_t *g = &ops->groups[i];
        if (strcmp(g->gpu, gpu) == 0 && g->n_tpcs > 0 && g->tpcs[g->n_tpcs - 1] > best)
            best = g->tpcs[g->n_tpcs - 1];
    }
    return best;
}

int ps_model_info(const ps_model_t *m, ps_model_info_t *out)
{
    if (!m || !out)
        return psi_error(PS_E_ARG, "ps_model_info: NULL argument");
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

/* 0 when an allocation inside cJSON failed (the pair is then absent). */
static int add_pair(cJSON *o, const char *key, const double v[2])
{
    cJSON *a = cJSON_AddArrayToObject(o, key);
    int ok = a != NULL;
    for (int s = 0; s < 2 && ok; s++) {
        cJSON *e = isfinite(v[s]) ? cJSON_CreateNumber(v[s]) : cJSON_CreateNull();
        ok = e && cJSON_AddItemToArray(a, e);
    }
    return ok;
}

/* NULL when an allocation inside cJSON failed: a header missing a field
 * must not be saved as if whole. */
cJSON *psi_model_info_json(const ps_model_info_t *i)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    int ok = 1;
    cJSON *l = cJSON_AddObjectToObject(o, "layout");
    ok &= l != NULL;
    ok &= cJSON_AddNumberToObject(l, "version", i->layout_version) != 0;
    ok &= cJSON_AddNumberToObject(l, "variant", i->variant) != 0;
    ok &= cJSON_AddNumberToObject(l, "window", i->window) != 0;
    ok &= cJSON_AddNumberToObject(l, "n_features", i->n_features) != 0;
    ok &= cJSON_AddStringToObject(o, "gpu", i->gpu) != 0;
    ok &= cJSON_AddStringToObject(o, "library_version", PS_VERSION_STRING) != 0;
    ok &= cJSON_AddNumberToObject(o, "n_samples", (double)i->n_samples) != 0;
    ok &= cJSON_AddNumberToObject(o, "n_train", (double)i->n_train) != 0;
    ok &= cJSON_AddNumberToObject(o, "n_valid", (double)i->n_valid) != 0;
    ok &= cJSON_AddNumberToObject(o, "n_test", (double)i->n_test) != 0;
    ok &= cJSON_AddNumberToObject(o, "n_calib", (double)i->n_calib) != 0;
    ok &= cJSON_AddNumberToObject(o, "n_experiments", (double)i->n_experiments) != 0;
    ok &= cJSON_AddNumberToObject(o, "seed", (double)i->seed) != 0;
    if (i->split_fingerprint) {
        /* 64 bits do not survive a JSON number: hex text. */
        char fp[17];
        snprintf(fp, sizeof fp, "%016" PRIx64, i->split_fingerprint);
        ok &= cJSON_AddStringToObject(o, "split_fingerprint", fp) != 0;
    }
    ok &= cJSON_AddNumberToObject(o, "train_seconds", i->train_seconds) != 0;
    double depth[2] = {i->depth[0], i->depth[1]};
    ok &= add_pair(o, "depth", depth);
    ok &= add_pair(o, "eta", i->eta);
    ok &= add_pair(o, "valid_mape", i->valid_mape);
    ok &= add_pair(o, "test_mape", i->test_mape);
    ok &= cJSON_AddNumberToObject(o, "n_adapt", i->n_adapt) != 0;
    ok &= cJSON_AddNumberToObject(o, "adapt_samples", (double)i->adapt_samples) != 0;
    ok &= cJSON_AddNumberToObject(o, "adapt_seconds", i->adapt_seconds) != 0;
    double adapt_depth[2] = {i->adapt_depth[0], i->adapt_depth[1]};
    ok &= add_pair(o, "adapt_depth", adapt_depth);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The model file's header: the info JSON with the layout of the model and
 * the tag (side, kind) of each regressor section. */
static char *header_json(const ps_model_t *m)
{
    ps_model_info_t i = m->info;
    i.layout_version = m->layout.version;
    i.variant = m->layout.variant;
    i.window = m->layout.window;
    i.n_features = m->layout.n_features;
    i.gpu = m->gpu;
    cJSON *o = psi_model_info_json(&i);
    cJSON *r = o ? cJSON_AddObjectToObject(o, "regressors") : NULL;
    int ok = r != NULL;
    for (int s = 0; ok && s < 2; s++)
        ok = cJSON_AddStringToObject(r, side_name[s], BOOSTER_KIND) != NULL;
    if (ok && m->calib) {
        cJSON *c = psi_calib_to_json(m->calib);
        ok = c && cJSON_AddItemToObject(o, "calibration", c);
        if (!ok)
            cJSON_Delete(c);
    }
    char *s = ok ? psi_json_print(o, 0) : NULL;
    cJSON_Delete(o);
    return s;
}

/* CRC-32 of a section: its tag, its length (8 bytes LE) and its payload. */
static uint32_t section_crc(const char *tag, const unsigned char len_le[8], const void *data, size_t n)
{
    uLong c = crc32(0L, (const Bytef *)tag, 4);
    c = crc32(c, len_le, 8);
    const Bytef *p = data;
    while (n > 0) { /* crc32 takes a uInt length */
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, p, k);
        p += k;
        n -= k;
    }
    return (uint32_t)c;
}

static void put_le(unsigned char *b, uint64_t v, int bytes);

static void write_section(FILE *f, int k, const void *data, size_t n)
{
    unsigned char len[8], crc[4];
    put_le(len, (uint64_t)n, 8);
    put_le(crc, section_crc(sec_tag[k], len, data, n), 4);
    fwrite(sec_tag[k], 1, 4, f);
    fwrite(len, 1, 8, f);
    fwrite(crc, 1, 4, f);
    fwrite(data, 1, n, f);
}

/* The model file's bytes onto f: magic, version, the three sections, end. */
static int model_write(const ps_model_t *m, FILE *f)
{
    /* Tag each booster with its side and kind before it is serialized. */
    for (int s = 0; s < 2; s++)
        if (XGBoosterSetAttr(m->booster[s], "pairsight_side", side_name[s]) != 0 ||
            XGBoosterSetAttr(m->booster[s], "pairsight_kind", BOOSTER_KIND) != 0)
            return psi_xgb_error("tagging a regressor");
    char *hdr = header_json(m);
    if (!hdr)
        return psi_error(PS_E_NOMEM, "out of memory writing the model header");
    unsigned char b[8];
    fwrite(file_magic, 1, 8, f);
    put_le(b, PS_MODEL_FORMAT_VERSION, 4);
    fwrite(b, 1, 4, f);
    put_le(b, 3, 4);
    fwrite(b, 1, 4, f);
    write_section(f, 0, hdr, strlen(hdr));
    free(hdr);
    for (int s = 0; s < 2; s++) {
        bst_ulong len = 0;
        const char *buf = NULL;
        if (XGBoosterSaveModelToBuffer(m->booster[s], "{\"format\": \"ubj\"}", &len, &buf) != 0)
            return psi_xgb_error("serializing a regressor");
        write_section(f, 1 + s, buf, (size_t)len);
    }
    fwrite(end_magic, 1, 8, f);
    return PS_OK;
}

static int model_save(const ps_model_t *m, const char *path)
{
    if (!m || !path)
        return psi_error(PS_E_ARG, "ps_model_save: NULL argument");
    psi_atomic_t *a = NULL;
    int rc = psi_atomic_open(path, &a);
    if (rc != PS_OK)
        return rc;
    rc = model_write(m, psi_atomic_stream(a));
    if (rc != PS_OK) {
        psi_atomic_abort(a);
        return rc;
    }
    return psi_atomic_commit(a);
}

static double num(ps_json_doc_t *d, int o, const char *key)
{
    double v;
    return psi_json_get_num(d, o, key, &v) == 0 ? v : NAN;
}

static void pair(ps_json_doc_t *d, int o, const char *key, double v[2])
{
    int a = ps_json_get(d, o, key, 0);
    int n = a >= 0 && d->tok[a].type == PS_JSON_ARRAY ? d->tok[a].size : 0;
    for (int s = 0, e = ps_json_child(d, a); s < 2; s++, e = s < n ? ps_json_next(d, e, 0) : -1)
        if (s >= n || ps_json_num(d, e, &v[s]) != 0)
            v[s] = NAN;
}

static size_t count(double v) { return isfinite(v) && v > 0 ? (size_t)v : 0; }

/* The counts, times and hyperparameters of header object o into i. */
static void header_info(ps_json_doc_t *d, int o, ps_model_info_t *i)
{
    i->n_samples = count(num(d, o, "n_samples"));
    i->n_train = count(num(d, o, "n_train"));
    i->n_valid = count(num(d, o, "n_valid"));
    i->n_test = count(num(d, o, "n_test"));
    i->n_experiments = count(num(d, o, "n_experiments"));
    i->seed = (uint64_t)count(num(d, o, "seed"));
    const char *fp = psi_json_get_str(d, o, "split_fingerprint");
    if (fp) {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(fp, &end, 16);
        if (errno == 0 && end != fp && *end == 0 && strlen(fp) == 16)
            i->split_fingerprint = (uint64_t)v;
    }
    i->train_seconds = num(d, o, "train_seconds");
    double depth[2];
    pair(d, o, "depth", depth);
    i->depth[0] = (int)count(depth[0]);
    i->depth[1] = (int)count(depth[1]);
    pair(d, o, "eta", i->eta);
    pair(d, o, "valid_mape", i->valid_mape);
    pair(d, o, "test_mape", i->test_mape);
    i->n_adapt = (int)count(num(d, o, "n_adapt"));
    i->adapt_samples = count(num(d, o, "adapt_samples"));
    i->adapt_seconds = num(d, o, "adapt_seconds");
    double adapt_depth[2];
    pair(d, o, "adapt_depth", adapt_depth);
    i->adapt_depth[0] = (int)count(adapt_depth[0]);
    i->adapt_depth[1] = (int)count(adapt_depth[1]);
}

/* Parse the header into a fresh model (boosters not yet loaded). */
static int parse_header(const char *path, const char *text, size_t len, ps_model_t **out)
{
    *out = NULL;
    ps_json_doc_t doc = {0}, *d = &doc;
    int rc = psi_json_load(text, len, "model header", d);
    if (rc != PS_OK) {
        psi_json_unload(d);
        return psi_error_prefix(rc, path);
    }
    int o = d->tok[0].type == PS_JSON_OBJECT ? 0 : -1, l = ps_json_get(d, o, "layout", 0);
    const char *gpu = psi_json_get_str(d, o, "gpu");
    double version = num(d, l, "version"), variant = num(d, l, "variant"), window = num(d, l, "window"),
           nf = num(d, l, "n_features");
    psi_feature_layout_t want;
    if (l < 0 || d->tok[l].type != PS_JSON_OBJECT || !gpu || !isfinite(version) || !isfinite(variant) ||
        !isfinite(window) || !isfinite(nf)) {
        rc = psi_error(PS_E_INPUT, "%s: model header lacks the feature layout or GPU", path);
    } else if ((int)version != PS_FEATURES_LAYOUT_VERSION) {
        rc = psi_error(PS_E_MISMATCH, "%s: feature layout version %d, this build reads version %d", path, (int)version,
                       PS_FEATURES_LAYOUT_VERSION);
    } else if ((rc = psi_features_layout((ps_feature_variant_t)variant, (int)window, &want)) != PS_OK) {
        psi_error_prefix(rc, path);
    } else if (want.n_features != (int)nf) {
        rc = psi_error(PS_E_MISMATCH, "%s: layout of %d features, this build makes %d", path, (int)nf, want.n_features);
    } else if ((rc = psi_model_alloc(&want, gpu, out)) == PS_OK) {
        ps_model_info_t *i = &(*out)->info;
        header_info(d, o, i);
        if ((rc = psi_calib_from_json(d, ps_json_get(d, o, "calibration", 0), &(*out)->calib)) != PS_OK)
            psi_error_prefix(rc, path);
        i->n_calib = (*out)->calib ? (*out)->calib->n_rows : 0;
    }
    psi_json_unload(d);
    return rc;
}

/* Check the booster attributes written by ps_model_save: side s, our kind. */
static int check_tag(const char *path, BoosterHandle b, int s)
{
    /* XGBoosterGetAttr's string lives until the next call on this thread. */
    char side[32] = "", kind[64] = "";
    const char *v = NULL;
    int ok1 = 0, ok2 = 0;
    if (XGBoosterGetAttr(b, "pairsight_side", &v, &ok1) != 0)
        return psi_xgb_error(path);
    if (ok1 && v)
        snprintf(side, sizeof side, "%s", v);
    if (XGBoosterGetAttr(b, "pairsight_kind", &v, &ok2) != 0)
        return psi_xgb_error(path);
    if (ok2 && v)
        snprintf(kind, sizeof kind, "%s", v);
    if (!ok1 || !ok2)
        return psi_error(PS_E_INPUT, "%s: the %s carries no side and kind tag", path, sec_what[1 + s]);
    if (strcmp(side, side_name[s]) != 0)
        return psi_error(PS_E_INPUT, "%s: the %s section holds a regressor tagged '%s' (regressors swapped?)", path,
                         sec_what[1 + s], side);
    if (strcmp(kind, BOOSTER_KIND) != 0)
        return psi_error(PS_E_INPUT, "%s: the %s is of kind '%s', not %s", path, sec_what[1 + s], kind, BOOSTER_KIND);
    return PS_OK;
}

/* The metadata must name each booster as ours, for its side. */
static int check_regressors(const char *path, const char *text, size_t len)
{
    ps_json_doc_t d = {0};
    int rc = psi_json_load(text, len, "model header", &d);
    if (rc != PS_OK) {
        psi_json_unload(&d);
        return psi_error_prefix(rc, path);
    }
    int r = ps_json_get(&d, 0, "regressors", 0);
    for (int s = 0; s < 2 && rc == PS_OK; s++) {
        const char *k = psi_json_get_str(&d, r, side_name[s]);
        if (!k || strcmp(k, BOOSTER_KIND) != 0)
            rc = psi_error(PS_E_INPUT, "%s: the metadata names no %s regressor of kind %s", path, side_name[s],
                           BOOSTER_KIND);
    }
    psi_json_unload(&d);
    return rc;
}

static int load_mem(const char *path, const unsigned char *buf, size_t n, ps_model_t **out)
{
    *out = NULL;
    if (n < 16 || memcmp(buf, file_magic, 8) != 0)
        return psi_error(PS_E_INPUT, "%s: not a pairsight model file", path);
    unsigned version = (unsigned)get_le(buf + 8, 4);
    if (version != PS_MODEL_FORMAT_VERSION)
        return psi_error(PS_E_MISMATCH, "%s: model format version %u, this build reads version %d%s", path, version,
                         PS_MODEL_FORMAT_VERSION,
                         version < PS_MODEL_FORMAT_VERSION ? " (retrain it with `pairsight train`)" : "");
    if (get_le(buf + 12, 4) != 3)
        return psi_error(PS_E_INPUT, "%s: %u sections, a model has 3", path, (unsigned)get_le(buf + 12, 4));
    /* Every section is located and checked before anything is parsed. */
    const unsigned char *data[3];
    size_t len[3], at = 16;
    for (int k = 0; k < 3; k++) {
        if (n - at < 16)
            return psi_error(PS_E_INPUT, "%s: truncated model file (in the %s)", path, sec_what[k]);
        if (memcmp(buf + at, sec_tag[k], 4) != 0) {
            for (int j = 0; j < 3; j++)
                if (memcmp(buf + at, sec_tag[j], 4) == 0)
                    return psi_error(PS_E_INPUT, "%s: the %s is where the %s belongs (sections out of order)", path,
                                     sec_what[j], sec_what[k]);
            return psi_error(PS_E_INPUT, "%s: damaged model file: no %s section at byte %zu", path, sec_what[k], at);
        }
        uint64_t l = get_le(buf + at + 4, 8);
        if (l > n - at - 16)
            return psi_error(PS_E_INPUT, "%s: truncated or damaged model file (%s of %llu bytes, %zu left)", path,
                             sec_what[k], (unsigned long long)l, n - at - 16);
        uint32_t want = (uint32_t)get_le(buf + at + 12, 4);
        if (!PSI_CHECKSUM_OK(section_crc(sec_tag[k], buf + at + 4, buf + at + 16, (size_t)l), want))
            return psi_error(PS_E_INPUT, "%s: damaged model file: checksum mismatch in the %s", path, sec_what[k]);
        data[k] = buf + at + 16;
        len[k] = (size_t)l;
        at += 16 + (size_t)l;
    }
    if (n - at != 8 || memcmp(buf + at, end_magic, 8) != 0)
        return psi_error(PS_E_INPUT, "%s: truncated or trailing data after the regressors", path);

    ps_model_t *m = NULL;
    int rc = check_regressors(path, (const char *)data[0], len[0]);
    if (rc == PS_OK)
        rc = parse_header(path, (const char *)data[0], len[0], &m);
    for (int s = 0; s < 2 && rc == PS_OK; s++) {
        rc = psi_xgb_load(path, sec_what[1 + s], data[1 + s], len[1 + s], m->layout.n_features, &m->booster[s]);
        if (rc != PS_OK || (rc = check_tag(path, m->booster[s], s)) != PS_OK)
            break;
        int rounds = 0;
        XGBoosterBoostedRounds(m->booster[s], &rounds);
        m->info.n_trees[s] = rounds;
    }
    if (rc == PS_OK)
        rc = psi_model_finish(m);
    if (rc != PS_OK) {
        ps_model_free(m);
        return rc;
    }
    *out = m;
    return PS_OK;
}

int psi_model_load_file(const char *fn, const char *path, psi_model_reader_t read, void *dst)
{
    if (!path)
        return psi_error(PS_E_ARG, "%s: NULL path", fn);
    unsigned char *buf = NULL;
    size_t n = 0;
    int rc = psi_file_read_all(path, &buf, &n);
    if (rc != PS_OK)
        return rc;
    rc = read(path, buf, n, dst);
    free(buf);
    return rc;
}

int psi_model_load_buffer(const char *fn, const char *what, const unsigned char *buf, size_t n, psi_model_reader_t read,
                          void *dst)
{
    if (!dst)
        return psi_error(PS_E_ARG, "%s: NULL out", fn);
    if (!buf)
        return psi_error(PS_E_ARG, "%s: NULL buffer", fn);
    return read(what, buf, n, dst);
}

/* psi_model_load_mem as a psi_model_reader_t (dst: a ps_model_t **). */
static int read_model(const char *path, const unsigned char *buf, size_t n, void *dst)
{
    return psi_model_load_mem(path, buf, n, dst);
}

int ps_model_load(const char *path, ps_model_t **out)
{
    *out = NULL;
    return psi_model_load_file("ps_model_load", path, read_model, out);
}

int ps_model_save(const ps_model_t *m, const char *path)
{
    locale_t old = psi_c_numeric_begin();
    int rc = model_save(m, path);
    psi_c_numeric_end(old);
    return rc;
}

int psi_model_load_mem(const char *path, const unsigned char *buf, size_t n, ps_model_t **out)
{
    locale_t old = psi_c_numeric_begin();
    int rc = load_mem(path, buf, n, out);
    psi_c_numeric_end(old);
    return rc;
}

static int write_model(const void *m, FILE *f) { return model_write(m, f); }

int ps_model_save_mem(const ps_model_t *m, unsigned char **out, size_t *out_len)
{
    return psi_write_mem(write_model, m, "ps_model_save_mem", out, out_len);
}

int ps_model_load_mem(const unsigned char *buf, size_t len, ps_model_t **out)
{
    if (out)
        *out = NULL;
    return psi_model_load_buffer("ps_model_load_mem", "model in memory", buf, len, read_model, out);
}
