/*
 * The model outside pairsight: its regressors as XGBoost UBJSON files, its
 * metadata as JSON (the feature layout column by column, the target
 * transform, GPU, window and training summary), and the exact feature rows
 * the regressors see, so that XGBoost's own predictor reproduces
 * ps_model_predict (docs/model.md "Export").
 */
#include "model/model.h"

#include "common/common.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const side_files[2] = {"hp.ubj", "lp.ubj"};

/* The metadata object of meta.json and `pairsight model info --json`. */
static cJSON *meta_object(const ps_model_t *m)
{
    const ps_model_info_t *i = &m->info;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "schema", "pairsight.model_meta.v1");
    cJSON_AddStringToObject(o, "library_version", PS_VERSION_STRING);
    cJSON_AddNumberToObject(o, "format_version", i->format_version);
    cJSON_AddStringToObject(o, "gpu", m->gpu);

    cJSON *l = cJSON_AddObjectToObject(o, "layout");
    cJSON_AddNumberToObject(l, "version", m->layout.version);
    cJSON_AddStringToObject(l, "variant", ps_feature_variant_name(m->layout.variant));
    cJSON_AddNumberToObject(l, "window", m->layout.window);
    cJSON_AddNumberToObject(l, "n_features", m->layout.n_features);
    cJSON *cols = cJSON_AddArrayToObject(l, "columns");
    for (int c = 0; c < m->layout.n_features; c++) {
        char name[64];
        cJSON_AddItemToArray(cols, cJSON_CreateString(psi_feature_name(&m->layout, c, name, sizeof name)));
    }
    cJSON_AddStringToObject(l, "missing", "NaN: a counter that no ops.csv row of the operator gives");
    cJSON_AddStringToObject(l, "empty_slot", "all zeros");
    cJSON_AddStringToObject(l, "counters",
                            "for each operator and counter, the value of the ops.csv row with the most "
                            "TPCs that gives it, whatever the query's TPCs");
    cJSON_AddStringToObject(l, "durations", "duration_ns of the operator at its side's TPCs");

    cJSON *t = cJSON_AddObjectToObject(o, "target");
    cJSON_AddStringToObject(t, "label", "log(co-executed latency / standalone latency)");
    cJSON_AddStringToObject(t, "prediction", "latency_ns = solo_ns * exp(margin)");
    cJSON_AddStringToObject(t, "solo_ns",
                            "sum of the segment's duration_ns at its side's TPCs "
                            "(columns hp_solo_ns, lp_solo_ns in double precision)");
    cJSON_AddStringToObject(t, "windows",
                            "segments longer than the window are cut into windows whose "
                            "predictions are composed (docs/model.md)");

    cJSON *b = cJSON_AddObjectToObject(o, "boosters");
    cJSON_AddStringToObject(b, "hp", side_files[PS_SIDE_HP]);
    cJSON_AddStringToObject(b, "lp", side_files[PS_SIDE_LP]);

    /* The training summary is the model's info JSON (the one writer of it,
     * model.c) less what meta.json already says above. */
    cJSON *tr = psi_model_info_json(i);
    if (!tr) {
        cJSON_Delete(o);
        return NULL;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(tr, "layout");
    cJSON_DeleteItemFromObjectCaseSensitive(tr, "gpu");
    cJSON_DeleteItemFromObjectCaseSensitive(tr, "library_version");
    cJSON_AddItemToObject(tr, "n_trees", cJSON_CreateIntArray(i->n_trees, 2));
    cJSON_AddItemToObject(o, "training", tr);
    return o;
}

int ps_model_info_json(const ps_model_info_t *info, char **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_model_info_json: NULL argument");
    *out = NULL;
    if (!info)
        return psi_error(PS_E_ARG, "ps_model_info_json: NULL argument");
    cJSON *o = psi_model_info_json(info);
    *out = o ? psi_json_print(o, 0) : NULL;
    cJSON_Delete(o);
    return *out ? PS_OK : psi_error(PS_E_NOMEM, "out of memory writing the model info");
}

int ps_model_train_summary_json(const ps_model_info_t *info, const char *model_path, char **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_model_train_summary_json: NULL argument");
    *out = NULL;
    if (!info)
        return psi_error(PS_E_ARG, "ps_model_train_summary_json: NULL argument");
    cJSON *o = cJSON_CreateObject(), *i = psi_model_info_json(info);
    int ok = o && i && cJSON_AddStringToObject(o, "schema", "pairsight.train.v1");
    if (ok && model_path)
        ok = cJSON_AddStringToObject(o, "model", model_path) != NULL;
    cJSON *trees = ok ? cJSON_CreateIntArray(info->n_trees, 2) : NULL;
    if (!trees || !cJSON_AddItemToObject(o, "n_trees", trees)) {
        cJSON_Delete(trees);
        ok = 0;
    }
    /* then the info's members, in its order (one not added is freed here) */
    while (ok && i->child) {
        cJSON *it = cJSON_DetachItemViaPointer(i, i->child);
        if (!cJSON_AddItemToObject(o, it->string, it)) {
            cJSON_Delete(it);
            ok = 0;
        }
    }
    *out = ok ? psi_json_print(o, 0) : NULL;
    cJSON_Delete(o);
    cJSON_Delete(i);
    return *out ? PS_OK : psi_error(PS_E_NOMEM, "out of memory writing the training summary");
}

/* The metadata, pretty (meta.json, ending in a newline) or on one line. */
static int meta_json(const ps_model_t *m, int pretty, char **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_model_meta_json: NULL argument");
    *out = NULL;
    if (!m)
        return psi_error(PS_E_ARG, "ps_model_meta_json: NULL argument");
    cJSON *o = meta_object(m);
    *out = o ? psi_json_print(o, pretty) : NULL; /* released with ps_free */
    cJSON_Delete(o);
    return *out ? PS_OK : psi_error(PS_E_NOMEM, "out of memory writing the model metadata");
}

int ps_model_meta_json(const ps_model_t *m, char **out) { return meta_json(m, 1, out); }

int ps_model_meta_json_compact(const ps_model_t *m, char **out) { return meta_json(m, 0, out); }

void ps_free(void *p) { free(p); }

/* Write len bytes at data to dir/name atomically. */
static int write_file(const char *dir, const char *name, const void *data, size_t len)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return psi_error(PS_E_ARG, "%s: path too long", dir);
    psi_atomic_t *a = NULL;
    int rc = psi_atomic_open(path, &a);
    if (rc != PS_OK)
        return rc;
    if (fwrite(data, 1, len, psi_atomic_stream(a)) != len) {
        int e = errno;
        psi_atomic_abort(a);
        return psi_error(PS_E_IO, "%s: write failed: %s", path, strerror(e));
    }
    return psi_atomic_commit(a);
}

int ps_model_export(const ps_model_t *m, const char *dir)
{
    if (!m || !dir)
        return psi_error(PS_E_ARG, "ps_model_export: NULL argument");
    for (int s = 0; s < 2; s++) {
        bst_ulong len = 0;
        const char *buf = NULL;
        if (XGBoosterSaveModelToBuffer(m->booster[s], "{\"format\": \"ubj\"}", &len, &buf) != 0)
            return psi_xgb_error("serializing a regressor");
        int rc = write_file(dir, side_files[s], buf, (size_t)len);
        if (rc != PS_OK)
            return rc;
    }
    char *meta = NULL;
    int rc = ps_model_meta_json(m, &meta);
    if (rc != PS_OK)
        return rc;
    rc = write_file(dir, "meta.json", meta, strlen(meta));
    free(meta);
    return rc;
}

int ps_model_feature_name(const ps_model_t *m, int i, char *buf, size_t size)
{
    if (!m || !buf || size == 0)
        return psi_error(PS_E_ARG, "ps_model_feature_name: NULL argument");
    if (i < 0 || i >= m->layout.n_features)
        return psi_error(PS_E_ARG, "feature column %d is outside 0..%d", i, m->layout.n_features - 1);
    psi_feature_name(&m->layout, i, buf, size);
    return PS_OK;
}

int ps_model_features(const ps_model_t *m, const ps_ops_t *ops, const ps_query_t *q, size_t n, float *out_x_hp,
                      float *out_x_lp, double *out_hp_solo_ns, double *out_lp_solo_ns)
{
    if (!m || !ops || (n && (!q || !out_x_hp || !out_x_lp)))
        return psi_error(PS_E_ARG, "ps_model_features: NULL argument");
    size_t nf = (size_t)m->layout.n_features;
    for (size_t k = 0; k < n; k++) {
        char where[48];
        snprintf(where, sizeof where, "query %zu", k);
        int rc = ps_model_check_query(m, ops, &q[k]);
        if (rc == PS_OK && (q[k].hp_len > m->layout.window || q[k].lp_len > m->layout.window))
            rc = psi_error(PS_E_ARG,
                           "segments of %d and %d operators: the feature row of one window "
                           "needs both within the window of %d",
                           q[k].hp_len, q[k].lp_len, m->layout.window);
        psi_solo_t solo = {0, 0};
        if (rc == PS_OK)
            rc = psi_features_build_pair(&m->layout, ops, &q[k], out_x_hp + k * nf, out_x_lp + k * nf, &solo);
        if (rc != PS_OK)
            return psi_error_prefix(rc, where);
        if (out_hp_solo_ns)
            out_hp_solo_ns[k] = solo.hp_ns;
        if (out_lp_solo_ns)
            out_lp_solo_ns[k] = solo.lp_ns;
    }
    return PS_OK;
}
