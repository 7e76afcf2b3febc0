/* The files `pairsight serve` answers from, loaded as one set and shared by
 * reference count (serve.h). */
#include "serve/serve.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* FNV-1a 64 of a file's bytes as 16 hex digits into out[24]: the
 * fingerprint /v1/models and pairsight_model_info report, so that a client
 * can tell which file answered. Returns 0, or -1 when it cannot be read. */
static int file_fingerprint(const char *path, char *out, char *err, size_t errsize)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsize, "%s: cannot open", path);
        return -1;
    }
    uint64_t h = 1469598103934665603ULL;
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++)
            h = (h ^ buf[i]) * 1099511628211ULL;
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, errsize, "%s: read error", path);
        return -1;
    }
    snprintf(out, 24, "%016llx", (unsigned long long)h);
    return 0;
}

static void models_free(serve_models_t *m)
{
    if (!m)
        return;
    ps_model_free(m->model);
    ps_ops_free(m->ops);
    ps_coloc_model_free(m->coloc);
    ps_workloads_free(m->w);
    ps_scaling_free(m->scaling);
    for (int i = 0; i < m->n_nodes; i++) {
        free(m->node_names[i]);
        free(m->node_gpus[i]);
    }
    free(m->node_names);
    free(m->node_gpus);
    pthread_mutex_destroy(&m->coloc_lock);
    free(m);
}

/* The co-location files of p into m (none when p has no --coloc). */
static int load_coloc(const serve_params_t *p, serve_models_t *m, char *err, size_t errsize)
{
    if (!p->coloc_path)
        return 0;
    if (file_fingerprint(p->coloc_path, m->fp_coloc, err, errsize) ||
        file_fingerprint(p->workloads_path, m->fp_workloads, err, errsize) ||
        (p->scaling_path && file_fingerprint(p->scaling_path, m->fp_scaling, err, errsize)))
        return -1;
    if (ps_coloc_model_load(p->coloc_path, &m->coloc) != PS_OK ||
        ps_workloads_load(p->workloads_path, &m->w) != PS_OK ||
        (p->scaling_path && ps_scaling_load(p->scaling_path, &m->scaling) != PS_OK)) {
        snprintf(err, errsize, "%s", ps_last_error());
        return -1;
    }
    return 0;
}

int serve_models_load(const serve_params_t *p, serve_models_t **out, char *err, size_t errsize)
{
    *out = NULL;
    serve_models_t *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    pthread_mutex_init(&m->coloc_lock, NULL);
    m->refs = 1;
    m->loaded_at = (double)time(NULL);
    int bad = file_fingerprint(p->model_path, m->fp_model, err, errsize) ||
              file_fingerprint(p->ops_path, m->fp_ops, err, errsize);
    if (!bad && (ps_model_load(p->model_path, &m->model) != PS_OK || ps_ops_load(p->ops_path, &m->ops) != PS_OK ||
                 ps_model_info(m->model, &m->info) != PS_OK)) {
        snprintf(err, errsize, "%s", ps_last_error());
        bad = 1;
    }
    if (bad || load_coloc(p, m, err, errsize) != 0 ||
        (p->nodes_path && serve_nodes_load(p->nodes_path, m, err, errsize) != 0)) {
        models_free(m);
        return -1;
    }
    *out = m;
    return 0;
}

void serve_models_ref(serve_models_t *m) { __atomic_add_fetch(&m->refs, 1, __ATOMIC_ACQ_REL); }

void serve_models_unref(serve_models_t *m)
{
    if (m && __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0)
        models_free(m);
}
