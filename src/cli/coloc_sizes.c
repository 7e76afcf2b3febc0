/* What `colocate predict`, `select` and `eval --place` tell the user about
 * a model and a table of co-locations (cli.h): the GPUs the model knows and
 * the sizes k of the co-locations, against those it was trained on. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_coloc_model_knows_gpu(const ps_coloc_model_t *m, const char *gpu)
{
    const char *mg = ps_coloc_model_gpu(m);
    if (!*mg || !gpu || !*gpu)
        return 1;
    size_t l = strlen(gpu);
    for (const char *p = mg; *p;) {
        size_t pl = strcspn(p, ",");
        if (pl == l && strncmp(p, gpu, l) == 0)
            return 1;
        p += pl + (p[pl] == ',');
    }
    return 0;
}

/* "2", "2,3": the k of bit mask ks into buf. */
static const char *ks_list(unsigned ks, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int k = 0; k < 32 && len + 1 < cap; k++)
        if (ks >> k & 1) {
            int n = snprintf(buf + len, cap - len, "%s%d", len ? "," : "", k);
            len = n < 0 ? cap : len + (size_t)n;
        }
    return buf;
}

void cli_coloc_warn_ks(const ps_coloc_model_t *m, unsigned ks, const char *doing)
{
    unsigned have = ps_coloc_model_ks(m), other = ks & ~have;
    if (!have || !other)
        return;
    char a[128], b[128];
    fprintf(stderr,
            "pairsight: colocate: warning: model trained on co-locations of k = %s workloads, %s k = %s "
            "(other k than trained on: the error grows; docs/colocate.md)\n",
            ks_list(have, a, sizeof a), doing, ks_list(other, b, sizeof b));
}

double cli_coloc_workload_batch(const char *name)
{
    const char *b = strstr(name, "_batch");
    long v = b ? strtol(b + 6, NULL, 10) : 0;
    return v > 0 ? (double)v : 1;
}

/* Warn once when a query co-location's k is not one the model was trained
 * on. */
static void warn_k(const ps_coloc_model_t *m, const ps_colocations_t *q)
{
    unsigned ks;
    if (ps_colocations_ks(q, &ks) == PS_OK)
        cli_coloc_warn_ks(m, ks, "predicting");
}

/* Warn once when the queries' GPU is not one the model was trained on. */
static void warn_gpu(const ps_coloc_model_t *m, const ps_colocations_t *q)
{
    const char *mg = ps_coloc_model_gpu(m);
    for (size_t i = 0; i < ps_colocations_rows(q); i++) {
        const char *g = ps_colocations_row(q, i)->gpu;
        if (!cli_coloc_model_knows_gpu(m, g)) {
            fprintf(stderr,
                    "pairsight: colocate: warning: model trained on GPU %s, predicting for %s "
                    "(across GPUs the error grows; docs/colocate.md)\n",
                    mg, g);
            return;
        }
    }
}

void cli_coloc_warn_queries(const ps_coloc_model_t *m, const ps_colocations_t *q)
{
    warn_gpu(m, q);
    warn_k(m, q);
}

const char *cli_workload_gpu(const ps_workloads_t *w, size_t i)
{
    const char *gpu = "", *name = "";
    return ps_workloads_key(w, i, &gpu, &name) == PS_OK ? gpu : "";
}

const char *cli_workload_name(const ps_workloads_t *w, size_t i)
{
    const char *gpu = "", *name = "";
    return ps_workloads_key(w, i, &gpu, &name) == PS_OK ? name : "";
}
