/*
 * Saved co-location models. A text header (magic, format version, kind,
 * feature layout, parameters, scaling vectors, the ratio table) followed by
 * the XGBoost booster as bytes or the MLP's weights. Numbers are written
 * with %.17g under the C locale; the file is replaced atomically.
 */
#include "colocate/model_internal.h"

#include "common/common.h"

#include <floatfann.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>

#define CL_MAGIC "PAIRSIGHT-COLOC"
#define CL_FORMAT 1
/* Changes whenever a feature builder changes meaning. */
#define CL_LAYOUT "cw13-sum13-xu5-mps32g"

static void put_vec(FILE *f, const char *name, const double *v, int n)
{
    fprintf(f, "%s", name);
    for (int i = 0; i < n; i++)
        fprintf(f, " %.17g", v[i]);
    fputc('\n', f);
}

int ps_coloc_model_save(const ps_coloc_model_t *m, const char *path)
{
    ps_atomic_t *a = NULL;
    int rc = ps_atomic_open(path, &a);
    if (rc)
        return rc;
    FILE *f = ps_atomic_stream(a);
    fprintf(f, "%s %d\nlayout %s\nkind %s\nnf %d\n", CL_MAGIC, CL_FORMAT, CL_LAYOUT,
            ps_coloc_kind_name(m->kind), m->nf);
    fprintf(f, "params %llu %d %d %d\n", (unsigned long long)m->p.seed, m->p.trees,
            m->p.mlp_epochs, m->p.boost_rounds);
    put_vec(f, "mu", m->mu, m->nf);
    put_vec(f, "sd", m->sd, m->nf);
    put_vec(f, "beta", m->beta, m->nf + 1);
    fprintf(f, "y %.17g %.17g\n", m->ymu, m->ysd);
    fprintf(f, "ratio %d %.17g\n", m->n_ratio, m->ratio_global);
    for (int i = 0; i < m->n_ratio; i++)
        fprintf(f, "%.17g %s\n", m->ratio_med[i], m->ratio_name[i]);
    /* The GPU(s) of the training co-locations (rest of the line) and
     * whether auto chose the kind. */
    fprintf(f, "gpu %s\nauto %d\n", m->gpu ? m->gpu : "", m->autosel);
    if (m->lowrank) {
        if (cl_lowrank_save(m->lowrank, f)) {
            ps_atomic_abort(a);
            return ps_error(PS_E_IO, "%s: write failed", path);
        }
    } else if (m->booster) {
        bst_ulong len = 0;
        const char *buf = NULL;
        if (XGBoosterSaveModelToBuffer(m->booster, "{\"format\": \"ubj\"}", &len, &buf)) {
            ps_atomic_abort(a);
            return ps_error(PS_E_BACKEND, "xgboost: save: %s", XGBGetLastError());
        }
        fprintf(f, "booster %llu\n", (unsigned long long)len);
        fwrite(buf, 1, (size_t)len, f);
        fputc('\n', f);
    } else if (m->ann) {
        unsigned n = fann_get_total_connections(m->ann);
        struct fann_connection *c = ps_malloc((size_t)n * sizeof *c + 1);
        if (!c) {
            ps_atomic_abort(a);
            return PS_E_NOMEM;
        }
        fann_get_connection_array(m->ann, c);
        fprintf(f, "mlp %u\n", n);
        for (unsigned i = 0; i < n; i++)
            fprintf(f, "%.9g\n", (double)c[i].weight);
        free(c);
    } else {
        fputs("none\n", f);
    }
    fputs("end\n", f);
    if (ferror(f)) {
        ps_atomic_abort(a);
        return ps_error(PS_E_IO, "%s: write failed", path);
    }
    return ps_atomic_commit(a);
}

static int get_vec(FILE *f, const char *name, double *v, int n)
{
    char w[32];
    if (fscanf(f, "%31s", w) != 1 || strcmp(w, name) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (fscanf(f, "%lf", &v[i]) != 1)
            return -1;
    return 0;
}

static int bad(const char *path, const char *what)
{
    return ps_error(PS_E_INPUT, "%s: not a valid co-location model (%s)", path, what);
}

int ps_coloc_model_load(const char *path, ps_coloc_model_t **out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ps_error(PS_E_IO, "%s: cannot open: %s", path, strerror(errno));
    ps_coloc_model_t *m = ps_calloc(1, sizeof *m);
    char magic[32], layout[64], kind[32], tag[32];
    int fmt = 0, rc = 0;
    unsigned long long seed = 0;
    if (!m) {
        fclose(f);
        return PS_E_NOMEM;
    }
    if (fscanf(f, "%31s %d", magic, &fmt) != 2 || strcmp(magic, CL_MAGIC) != 0) {
        /* Say what the file is where that is cheap to tell: a folder, an
         * empty file, or the segment model of `pairsight train`. */
        if (ferror(f))
            rc = ps_error(PS_E_IO, "%s: read error: %s", path, strerror(errno));
        else if (ftell(f) <= 0 && feof(f))
            rc = bad(path, "empty file");
        else if (strncmp(magic, "PSMODEL", 7) == 0)
            rc = bad(path, "a PairSight segment model from `pairsight train`, not `colocate train`");
        else
            rc = bad(path, "no magic");
        goto done;
    }
    if (fmt != CL_FORMAT) {
        rc = ps_error(PS_E_MISMATCH, "%s: model format %d, this build reads %d", path, fmt, CL_FORMAT);
        goto done;
    }
    if (fscanf(f, " layout %63s kind %31s nf %d", layout, kind, &m->nf) != 3) {
        rc = bad(path, "header");
        goto done;
    }
    if (strcmp(layout, CL_LAYOUT) != 0) {
        rc = ps_error(PS_E_MISMATCH, "%s: feature layout %s, this build uses %s", path, layout,
                      CL_LAYOUT);
        goto done;
    }
    if ((rc = ps_coloc_kind_parse(kind, &m->kind)))
        goto done;
    if (m->nf != cl_model_nf(m->kind)) {
        rc = ps_error(PS_E_MISMATCH, "%s: %d features, expected %d", path, m->nf, cl_model_nf(m->kind));
        goto done;
    }
    if (fscanf(f, " params %llu %d %d %d", &seed, &m->p.trees, &m->p.mlp_epochs,
               &m->p.boost_rounds) != 4 ||
        get_vec(f, "mu", m->mu, m->nf) || get_vec(f, "sd", m->sd, m->nf) ||
        get_vec(f, "beta", m->beta, m->nf + 1) || fscanf(f, " y %lf %lf", &m->ymu, &m->ysd) != 2 ||
        fscanf(f, " ratio %d %lf", &m->n_ratio, &m->ratio_global) != 2 || m->n_ratio < 0 ||
        m->n_ratio > 10000000) {
        rc = bad(path, "parameters");
        goto done;
    }
    m->p.kind = m->kind;
    m->p.seed = seed;
    int nr = m->n_ratio;
    m->n_ratio = 0;
    m->ratio_name = ps_calloc((size_t)nr + 1, sizeof *m->ratio_name);
    m->ratio_med = ps_calloc((size_t)nr + 1, sizeof *m->ratio_med);
    if (!m->ratio_name || !m->ratio_med) {
        rc = PS_E_NOMEM;
        goto done;
    }
    for (int i = 0; i < nr; i++) {
        char name[1024];
        if (fscanf(f, "%lf %1023s", &m->ratio_med[i], name) != 2) {
            rc = bad(path, "ratio table");
            goto done;
        }
        if (!(m->ratio_name[i] = ps_strdup(name))) {
            rc = PS_E_NOMEM;
            goto done;
        }
        m->n_ratio++;
    }
    if (fscanf(f, "%31s", tag) == 1 && strcmp(tag, "gpu") == 0 && fgetc(f) == ' ') {
        char g[1024];
        if (!fgets(g, sizeof g, f)) {
            rc = bad(path, "gpu");
            goto done;
        }
        g[strcspn(g, "\n")] = 0;
        if (!(m->gpu = ps_strdup(g)) || fscanf(f, " auto %d", &m->autosel) != 1) {
            rc = m->gpu ? bad(path, "auto") : PS_E_NOMEM;
            goto done;
        }
    } else {
        rc = bad(path, "gpu");
        goto done;
    }
    if (m->kind == PS_COLOC_LOWRANK) {
        int lr = cl_lowrank_load(f, &m->lowrank);
        if (lr) {
            rc = lr == PS_E_NOMEM ? lr : bad(path, "lowrank parameters");
            goto done;
        }
        strcpy(tag, "none");
    } else if (fscanf(f, "%31s", tag) != 1) {
        rc = bad(path, "body");
        goto done;
    }
    if (strcmp(tag, "booster") == 0) {
        unsigned long long len = 0;
        if (fscanf(f, "%llu", &len) != 1 || fgetc(f) != '\n' || len > (1ull << 32)) {
            rc = bad(path, "booster size");
            goto done;
        }
        char *buf = ps_malloc((size_t)len + 1);
        if (!buf) {
            rc = PS_E_NOMEM;
            goto done;
        }
        BoosterHandle b = NULL;
        if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
            rc = bad(path, "booster truncated");
        } else if (XGBoosterCreate(NULL, 0, &b) ||
                   XGBoosterLoadModelFromBuffer(b, buf, (bst_ulong)len) ||
                   XGBoosterSetParam(b, "nthread", "1")) {
            rc = ps_error(PS_E_BACKEND, "%s: xgboost: %s", path, XGBGetLastError());
        }
        free(buf);
        m->booster = b;
    } else if (strcmp(tag, "mlp") == 0) {
        unsigned n = 0;
        m->ann = fann_create_standard(5, (unsigned)m->nf, 128u, 64u, 32u, 1u);
        if (!m->ann || fscanf(f, "%u", &n) != 1 || n != fann_get_total_connections(m->ann)) {
            rc = bad(path, "network");
            goto done;
        }
        fann_set_error_log((struct fann_error *)m->ann, NULL);
        fann_set_activation_function_hidden(m->ann, FANN_SIGMOID_SYMMETRIC);
        fann_set_activation_function_output(m->ann, FANN_LINEAR);
        struct fann_connection *c = ps_malloc((size_t)n * sizeof *c + 1);
        if (!c) {
            rc = PS_E_NOMEM;
            goto done;
        }
        fann_get_connection_array(m->ann, c);
        for (unsigned i = 0; i < n && !rc; i++) {
            double v;
            if (fscanf(f, "%lf", &v) != 1)
                rc = bad(path, "network weights");
            c[i].weight = (fann_type)v;
        }
        if (!rc)
            fann_set_weight_array(m->ann, c, n);
        free(c);
    } else if (strcmp(tag, "none") != 0) {
        rc = bad(path, "body");
    }
    if (!rc && (fscanf(f, "%31s", tag) != 1 || strcmp(tag, "end") != 0))
        rc = bad(path, "no end marker");
    if (!rc && ps_coloc_kind_predicts_sum(m->kind) == 0 && m->kind == PS_COLOC_MPS && !m->booster)
        rc = bad(path, "mps model without booster");
    if (!rc && (m->kind == PS_COLOC_KACE_RF || m->kind == PS_COLOC_XU_RF) && !m->booster)
        rc = bad(path, "forest without booster");
    if (!rc && m->kind == PS_COLOC_KACE_MLP && !m->ann)
        rc = bad(path, "MLP without weights");
done:
    fclose(f);
    if (rc) {
        ps_coloc_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}
