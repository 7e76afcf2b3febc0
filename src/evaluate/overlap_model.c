/*
 * A trained overlap predictor: the solo table and the XGBoost booster of
 * makespan / max(solo), saved as one text file
 *
 *     pairsight-overlap-model 3
 *     features 24 oplists 0|1 groups MASK kmax K
 *         (MASK: psi_ov_feature_names bits; K: the most active slots of a
 *         training row, beyond which pairs are composed, overlap_compose.c)
 *     solo N
 *     SETTING MODEL BATCH SEQ_LEN GROUPS c t_0 .. t_{G-1}     (N lines)
 *     booster BYTES
 *     <BYTES of XGBoost's UBJSON model>
 *     seen N SETTING...            (settings with training co-runs)
 *     caps N
 *     SETTING FLOPS_PER_US BYTES_PER_US KERNELS_PER_US     (N lines)
 *     setting-booster BYTES
 *     <BYTES: the setting model's booster, for rows of a setting not seen>
 * The last five lines are version 4's; a model of version 2 or 3 predicts
 * every setting with its one booster.
 */
#include "evaluate/overlap.h"
#include "evaluate/overlap_internal.h"

#include "colocate/colocate.h"
#include "common/common.h"
#include "model/model.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>

#define MAGIC "pairsight-overlap-model "
#define VERSION 4 /* version 2 (no kmax) is read as never composing, its predictions unchanged */
#define MAX_SEEN 32

struct ps_ov_model {
    solo_t solo;
    char **names; /* owned copies of the solo keys' strings */
    size_t n_names;
    int oplists;
    unsigned features; /* psi_ov_params_t.features it was trained with */
    int kmax;
    void *booster;
    char *seen[MAX_SEEN]; /* owned: settings with training co-runs */
    size_t n_seen;
    psi_ov_caps_t caps; /* their setting strings owned */
    void *sf_booster;   /* the setting model, or NULL (a model before version 4) */
};

void psi_ov_model_free(psi_ov_model_t *m)
{
    if (!m)
        return;
    psi_ov_solo_free(&m->solo);
    for (size_t i = 0; i < m->n_names; i++)
        free(m->names[i]);
    free(m->names);
    psi_xgb_free(m->booster);
    psi_xgb_free(m->sf_booster);
    for (size_t i = 0; i < m->n_seen; i++)
        free(m->seen[i]);
    for (size_t i = 0; i < m->caps.n; i++)
        free((char *)m->caps.c[i].setting);
    psi_ov_caps_free(&m->caps);
    free(m);
}

size_t psi_ov_model_solo_keys(const psi_ov_model_t *m) { return m->solo.n; }

/* Own copies of the solo keys' strings, so the model outlives the table. */
static int own_names(psi_ov_model_t *m)
{
    if (!(m->names = psi_calloc(2 * m->solo.n + 1, sizeof *m->names)))
        return PS_E_NOMEM;
    for (size_t i = 0; i < m->solo.n; i++) {
        char *s = psi_strdup(m->solo.k[i].setting), *d = psi_strdup(m->solo.k[i].model);
        m->names[m->n_names++] = s;
        m->names[m->n_names++] = d;
        if (!s || !d)
            return PS_E_NOMEM;
        m->solo.k[i].setting = s;
        m->solo.k[i].model = d;
    }
    return PS_OK;
}

/* The setting model: the capacities of every setting with single-active
 * runs, the settings with co-runs, and the booster on scale-free rows. */
static int train_setting(psi_ov_model_t *m, const psi_overlap_t *t, const psi_ov_params_t *p, const psi_ov_ops_t *ops,
                         const size_t *idx)
{
    const char *seen[MAX_SEEN];
    m->n_seen = psi_ov_seen_settings(t, NULL, t->n, seen, MAX_SEEN);
    for (size_t i = 0; i < m->n_seen; i++)
        if (!(m->seen[i] = psi_strdup(seen[i])))
            return PS_E_NOMEM;
    int rc = psi_ov_caps_fit(t, idx, t->n, ops, &m->caps);
    for (size_t i = 0; rc == PS_OK && i < m->caps.n; i++)
        if (!(m->caps.c[i].setting = psi_strdup(m->caps.c[i].setting)))
            rc = PS_E_NOMEM;
    psi_ov_pred_ctx_t c = {&m->solo, ops, m->features, m->kmax, NULL, &m->caps};
    return rc == PS_OK ? psi_ov_sf_train(t, p, &c, NULL, t->n, &m->sf_booster) : rc;
}

int psi_ov_train(const psi_overlap_t *t, const psi_ov_params_t *p, psi_ov_model_t **out)
{
    *out = NULL;
    psi_ov_model_t *m = psi_calloc(1, sizeof *m);
    size_t *idx = psi_malloc(t->n * sizeof *idx + 1);
    double *x = psi_malloc(t->n * NF_PS * sizeof *x + 1), *y = psi_malloc(t->n * sizeof *y + 1);
    psi_ov_ops_t *ops = NULL;
    int rc = m && idx && x && y ? PS_OK : PS_E_NOMEM;
    if (rc == PS_OK && p->oplists)
        rc = psi_ov_ops_load(p->oplists, &ops);
    for (size_t i = 0; rc == PS_OK && i < t->n; i++)
        idx[i] = i;
    if (rc == PS_OK)
        rc = psi_ov_solo_fit(t, idx, t->n, p->ridge, &m->solo);
    size_t n = 0;
    for (size_t i = 0; rc == PS_OK && i < t->n; i++) {
        double mx, sum;
        psi_ov_ps_features(&t->exps[i], &(psi_ov_pred_ctx_t){.solo = &m->solo, .ops = ops, .mask = p->features},
                           x + n * NF_PS, &mx, &sum);
        if (mx > 0) {
            y[n++] = t->exps[i].median_us / mx;
            m->kmax = psi_ov_active(&t->exps[i]) > m->kmax ? psi_ov_active(&t->exps[i]) : m->kmax;
        }
    }
    if (rc == PS_OK && n == 0)
        rc = psi_error(PS_E_INPUT, "overlap train: no experiment has known solo times (no single-active runs)");
    char bufs[4][32];
    const char *kv[PSI_OV_XGB_KV];
    if (rc == PS_OK)
        rc = psi_xgb_train(&(psi_xgb_rows_t){.x = x, .y = y, .n = (int)n, .d = NF_PS}, psi_ov_xgb_params(p, bufs, kv),
                           p->rounds, &m->booster);
    m->oplists = p->oplists != NULL;
    m->features = p->features;
    if (rc == PS_OK)
        rc = train_setting(m, t, p, ops, idx);
    if (rc == PS_OK)
        rc = own_names(m);
    psi_ov_ops_free(ops);
    free(idx);
    free(x);
    free(y);
    if (rc != PS_OK) {
        psi_ov_model_free(m);
        return rc;
    }
    *out = m;
    return PS_OK;
}

int psi_ov_predict(const psi_ov_model_t *m, const psi_overlap_t *t, const char *oplists, double *out)
{
    if (m->oplists != (oplists != NULL))
        return psi_error(PS_E_ARG, "the model was trained %s --oplists; give it %s", m->oplists ? "with" : "without",
                         m->oplists ? "too" : "none");
    psi_ov_ops_t *ops = NULL;
    size_t *idx[2] = {psi_malloc(t->n * sizeof(size_t) + 1), psi_malloc(t->n * sizeof(size_t) + 1)}, n[2] = {0, 0};
    double *v = psi_malloc(t->n * sizeof *v + 1);
    int rc = idx[0] && idx[1] && v ? PS_OK : PS_E_NOMEM;
    if (rc == PS_OK && oplists)
        rc = psi_ov_ops_load(oplists, &ops);
    /* A setting without training co-runs: the setting model, where there is one. */
    for (size_t i = 0; rc == PS_OK && i < t->n; i++) {
        int sf = m->sf_booster && !psi_ov_setting_in(t->exps[i].setting, (const char *const *)m->seen, m->n_seen);
        idx[sf][n[sf]++] = i;
    }
    psi_ov_pred_ctx_t c[2] = {{&m->solo, ops, m->features, m->kmax, m->booster, NULL},
                              {&m->solo, ops, m->features, m->kmax, m->sf_booster, &m->caps}};
    for (int j = 0; j < 2 && rc == PS_OK; j++) {
        if (n[j])
            rc = psi_ov_ps_predict(&c[j], t, idx[j], n[j], v);
        for (size_t i = 0; rc == PS_OK && i < n[j]; i++)
            out[idx[j][i]] = v[i];
    }
    psi_ov_ops_free(ops);
    free(idx[0]);
    free(idx[1]);
    free(v);
    return rc;
}

int psi_ov_model_save(const psi_ov_model_t *m, const char *path)
{
    bst_ulong len = 0;
    const char *buf = NULL;
    if (XGBoosterSaveModelToBuffer((BoosterHandle)m->booster, "{\"format\": \"ubj\"}", &len, &buf))
        return psi_xgb_error("save");
    psi_atomic_t *a = NULL;
    int rc = psi_atomic_open(path, &a);
    if (rc)
        return rc;
    FILE *f = psi_atomic_stream(a);
    locale_t loc = psi_c_numeric_begin();
    fprintf(f, "%s%d\nfeatures %d oplists %d groups %u kmax %d\nsolo %zu\n", MAGIC, VERSION, NF_PS, m->oplists,
            m->features, m->kmax, m->solo.n);
    for (size_t i = 0; i < m->solo.n; i++) {
        const solo_key_t *k = &m->solo.k[i];
        fprintf(f, "%s %s %d %d %d", k->setting, k->model, k->batch, k->seq_len, k->groups);
        for (int g = 0; g <= k->groups; g++)
            fprintf(f, " %.17g", k->beta[g]);
        fputc('\n', f);
    }
    fprintf(f, "booster %llu\n", (unsigned long long)len);
    fwrite(buf, 1, (size_t)len, f);
    fprintf(f, "\nseen %zu", m->n_seen);
    for (size_t i = 0; i < m->n_seen; i++)
        fprintf(f, " %s", m->seen[i]);
    fprintf(f, "\ncaps %zu\n", m->caps.n);
    for (size_t i = 0; i < m->caps.n; i++)
        fprintf(f, "%s %.17g %.17g %.17g\n", m->caps.c[i].setting, m->caps.c[i].rate[0], m->caps.c[i].rate[1],
                m->caps.c[i].rate[2]);
    if (XGBoosterSaveModelToBuffer((BoosterHandle)m->sf_booster, "{\"format\": \"ubj\"}", &len, &buf)) {
        psi_c_numeric_end(loc);
        psi_atomic_abort(a);
        return psi_xgb_error("save");
    }
    fprintf(f, "setting-booster %llu\n", (unsigned long long)len);
    fwrite(buf, 1, (size_t)len, f);
    psi_c_numeric_end(loc);
    return psi_atomic_commit(a);
}

static int read_key(FILE *f, const char *path, int line, solo_key_t *k, char **names)
{
    char setting[128], model[128];
    if (fscanf(f, "%127s %127s %d %d %d", setting, model, &k->batch, &k->seq_len, &k->groups) != 5 || k->groups < 1 ||
        k->groups > 1 << 20)
        return psi_error(PS_E_INPUT, "%s:%d:1: not a solo-table line", path, line);
    names[0] = psi_strdup(setting);
    names[1] = psi_strdup(model);
    k->beta = psi_malloc(((size_t)k->groups + 1) * sizeof *k->beta);
    if (!names[0] || !names[1] || !k->beta)
        return PS_E_NOMEM;
    k->setting = names[0];
    k->model = names[1];
    for (int g = 0; g <= k->groups; g++)
        if (fscanf(f, "%lg", &k->beta[g]) != 1)
            return psi_error(PS_E_INPUT, "%s:%d: solo table: %d numbers expected", path, line, k->groups + 1);
    return PS_OK;
}

/* "TAG BYTES\n" and the bytes of an XGBoost model into *out. */
static int read_booster(FILE *f, const char *path, const char *tag, void **out)
{
    char fmt[48];
    snprintf(fmt, sizeof fmt, " %s %%llu", tag);
    unsigned long long len = 0;
    if (fscanf(f, fmt, &len) != 1 || fgetc(f) != '\n' || len == 0 || len > 1ull << 32)
        return psi_error(PS_E_INPUT, "%s: no %s where expected", path, tag);
    char *buf = psi_malloc((size_t)len);
    if (!buf)
        return PS_E_NOMEM;
    int rc =
        fread(buf, 1, (size_t)len, f) == (size_t)len ? PS_OK : psi_error(PS_E_INPUT, "%s: %s cut short", path, tag);
    BoosterHandle b = NULL;
    if (rc == PS_OK && (XGBoosterCreate(NULL, 0, &b) || XGBoosterLoadModelFromBuffer(b, buf, (bst_ulong)len)))
        rc = psi_xgb_error("load");
    *out = b;
    free(buf);
    return rc;
}

/* Version 4's seen settings, capacities and setting booster. */
static int read_setting(FILE *f, const char *path, psi_ov_model_t *m)
{
    char name[128];
    size_t n = 0;
    if (fscanf(f, " seen %zu", &n) != 1 || n > MAX_SEEN)
        return psi_error(PS_E_INPUT, "%s: no 'seen N' (N <= %d) after the booster", path, MAX_SEEN);
    for (; m->n_seen < n; m->n_seen++)
        if (fscanf(f, " %127s", name) != 1 || !(m->seen[m->n_seen] = psi_strdup(name)))
            return psi_error(PS_E_INPUT, "%s: seen: %zu settings expected", path, n);
    if (fscanf(f, " caps %zu", &n) != 1 || n > MAX_SEEN || !(m->caps.c = psi_calloc(n + 1, sizeof *m->caps.c)))
        return psi_error(PS_E_INPUT, "%s: no 'caps N' (N <= %d)", path, MAX_SEEN);
    for (; m->caps.n < n; m->caps.n++) {
        psi_ov_cap_t *c = &m->caps.c[m->caps.n];
        if (fscanf(f, " %127s %lg %lg %lg", name, &c->rate[0], &c->rate[1], &c->rate[2]) != 4 ||
            !(c->setting = psi_strdup(name)))
            return psi_error(PS_E_INPUT, "%s: caps: SETTING and three rates expected", path);
    }
    return read_booster(f, path, "setting-booster", &m->sf_booster);
}

static int read_body(FILE *f, const char *path, psi_ov_model_t *m)
{
    char magic[64] = "";
    int nf = 0, version = 0;
    size_t n = 0;
    if (!fgets(magic, sizeof magic, f) || sscanf(magic, MAGIC "%d", &version) != 1 ||
        strncmp(magic, MAGIC, strlen(MAGIC)) != 0)
        return psi_error(PS_E_INPUT, "%s:1:1: not a pairsight overlap model (no '%s%d')", path, MAGIC, VERSION);
    if (version < 2 || version > VERSION)
        return psi_error(PS_E_INPUT, "%s:1:1: overlap model version %d, this build reads 2 to %d", path, version,
                         VERSION);
    if (fscanf(f, " features %d oplists %d groups %u", &nf, &m->oplists, &m->features) != 3 || nf != NF_PS)
        return psi_error(PS_E_INPUT, "%s:2:1: feature layout %d, this build reads %d", path, nf, NF_PS);
    m->kmax = PSI_OV_MAX_K;
    if ((version >= 3 && fscanf(f, " kmax %d", &m->kmax) != 1) || m->kmax < 1 || m->kmax > PSI_OV_MAX_K)
        return psi_error(PS_E_INPUT, "%s:2:1: no kmax in 1..%d", path, PSI_OV_MAX_K);
    if (fscanf(f, " solo %zu", &n) != 1 || n > 1u << 20)
        return psi_error(PS_E_INPUT, "%s:3:1: no 'solo N'", path);
    m->solo.k = psi_calloc(n + 1, sizeof *m->solo.k);
    m->names = psi_calloc(2 * n + 1, sizeof *m->names);
    if (!m->solo.k || !m->names)
        return PS_E_NOMEM;
    for (size_t i = 0; i < n; i++, m->solo.n++, m->n_names += 2) {
        int rc = read_key(f, path, 4 + (int)i, &m->solo.k[i], m->names + 2 * i);
        if (rc)
            return rc;
    }
    int rc = read_booster(f, path, "booster", &m->booster);
    return rc == PS_OK && version >= 4 ? read_setting(f, path, m) : rc;
}

int psi_ov_model_load(const char *path, psi_ov_model_t **out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return psi_error(PS_E_IO, "%s: %s", path, strerror(errno));
    psi_ov_model_t *m = psi_calloc(1, sizeof *m);
    locale_t loc = psi_c_numeric_begin();
    int rc = m ? read_body(f, path, m) : PS_E_NOMEM;
    psi_c_numeric_end(loc);
    fclose(f);
    if (rc != PS_OK) {
        psi_ov_model_free(m);
        return rc;
    }
    *out = m;
    return PS_OK;
}
