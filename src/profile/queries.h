/* The queries file of `pairsight predict` (internal). */
#ifndef PS_PROFILE_QUERIES_H
#define PS_PROFILE_QUERIES_H

#include "pairsight.h"
#include "profile/csv.h"

#include <stddef.h>

/* The query file held in memory: every cell (to echo) and the queries;
 * ps_queries_t of the public API (gpu: its copy of the default GPU). */
typedef struct ps_queries {
    int ncol;
    char **header; /* [ncol] */
    char **cells;  /* [n * ncol] */
    size_t *line;  /* [n] line of each record */
    ps_query_t *q; /* [n], strings point into cells or the model's GPU */
    size_t n, cap;
    char *gpu;
} queries_t;

/* Read a queries file from c: a header naming every key column of coexec.csv
 * once (gpu may be left out: then every query is on model_gpu, which must
 * outlive *f), then one query per record. On error nothing is kept, *f is
 * empty and the message names file:line[:column]. The caller frees *f with
 * psi_queries_free. */
int psi_queries_read(psi_csv_t *c, const char *model_gpu, queries_t *f);
/* The same from the file at path. */
int psi_queries_load(const char *path, const char *model_gpu, queries_t *f);
void psi_queries_free(queries_t *f);

/* A query written as key=value pairs: ps_query_parse (include/pairsight_core.h). */

#endif
