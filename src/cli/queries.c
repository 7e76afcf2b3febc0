/* The candidate file of predict and features: the key columns of coexec.csv,
 * read whole so that every input cell can be echoed beside the results. */
#include "cli/cli.h"

#include "common/common.h"
#include "profile/csv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    C_GPU,
    C_HP_MODEL,
    C_HP_BATCH,
    C_HP_START,
    C_HP_LEN,
    C_LP_MODEL,
    C_LP_BATCH,
    C_LP_START,
    C_LP_LEN,
    C_HP_TPCS,
    C_LP_TPCS,
    N_KEYS
};

static const char *const key_names[N_KEYS] = {"gpu",      "hp_model", "hp_batch", "hp_start",
                                              "hp_len",   "lp_model", "lp_batch", "lp_start",
                                              "lp_len",   "hp_tpcs",  "lp_tpcs"};

void cli_queries_free(cli_queries_t *f)
{
    for (int c = 0; f->header && c < f->ncol; c++)
        free(f->header[c]);
    for (size_t i = 0; i < f->n * (size_t)f->ncol; i++)
        free(f->cells[i]);
    free(f->header);
    free(f->cells);
    free(f->line);
    free(f->q);
    memset(f, 0, sizeof *f);
}

static int parse_int_cell(ps_csv_t *c, int col, int *out)
{
    const char *s = ps_csv_field(c, col);
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < -2147483647L || v > 2147483647L)
        return ps_error(PS_E_INPUT, "%s:%zu:%d: '%s' is not an integer", ps_csv_path(c),
                        ps_csv_field_line(c, col), col + 1, s);
    *out = (int)v;
    return PS_OK;
}

static int grow(cli_queries_t *f)
{
    if (f->n < f->cap)
        return PS_OK;
    size_t cap = f->cap ? 2 * f->cap : 256;
    char **cells = ps_realloc(f->cells, cap * (size_t)f->ncol * sizeof *cells);
    if (!cells)
        return PS_E_NOMEM;
    f->cells = cells;
    size_t *line = ps_realloc(f->line, cap * sizeof *line);
    if (!line)
        return PS_E_NOMEM;
    f->line = line;
    ps_query_t *q = ps_realloc(f->q, cap * sizeof *q);
    if (!q)
        return PS_E_NOMEM;
    f->q = q;
    f->cap = cap;
    return PS_OK;
}

int cli_queries_read(const char *path, const char *model_gpu, cli_queries_t *f)
{
    memset(f, 0, sizeof *f);
    ps_csv_t *c = NULL;
    int rc = ps_csv_open(path, &c);
    if (rc != PS_OK)
        return rc;
    int col[N_KEYS];
    rc = ps_csv_next(c);
    if (rc == 0)
        rc = ps_error(PS_E_INPUT, "%s: empty file, expected a header", path);
    if (rc < 0)
        goto done;
    f->ncol = ps_csv_nfields(c);
    f->header = ps_calloc((size_t)f->ncol, sizeof *f->header);
    if (!f->header) {
        rc = PS_E_NOMEM;
        goto done;
    }
    for (int k = 0; k < N_KEYS; k++)
        col[k] = -1;
    for (int i = 0; i < f->ncol; i++) {
        if (!(f->header[i] = ps_strdup(ps_csv_field(c, i)))) {
            rc = PS_E_NOMEM;
            goto done;
        }
        for (int k = 0; k < N_KEYS; k++)
            if (strcmp(f->header[i], key_names[k]) == 0)
                col[k] = i;
    }
    for (int k = 1; k < N_KEYS; k++)
        if (col[k] < 0) {
            rc = ps_error(PS_E_INPUT, "%s:%zu: missing column %s", path, ps_csv_line(c), key_names[k]);
            goto done;
        }
    while ((rc = ps_csv_next(c)) == 1) {
        if (ps_csv_nfields(c) != f->ncol) {
            rc = ps_error(PS_E_INPUT, "%s:%zu: %d fields, the header has %d", path, ps_csv_line(c),
                          ps_csv_nfields(c), f->ncol);
            goto done;
        }
        if ((rc = grow(f)) != PS_OK)
            goto done;
        char **cells = f->cells + f->n * (size_t)f->ncol;
        for (int i = 0; i < f->ncol; i++)
            cells[i] = NULL;
        f->n++;
        for (int i = 0; i < f->ncol; i++)
            if (!(cells[i] = ps_strdup(ps_csv_field(c, i)))) {
                rc = PS_E_NOMEM;
                goto done;
            }
        ps_query_t *q = &f->q[f->n - 1];
        f->line[f->n - 1] = ps_csv_line(c);
        q->gpu = col[C_GPU] >= 0 ? cells[col[C_GPU]] : model_gpu;
        q->hp_model = cells[col[C_HP_MODEL]];
        q->lp_model = cells[col[C_LP_MODEL]];
        int *ints[] = {&q->hp_batch, &q->hp_start, &q->hp_len, NULL, &q->lp_batch, &q->lp_start,
                       &q->lp_len, &q->hp_tpcs, &q->lp_tpcs};
        for (int k = C_HP_BATCH; k < N_KEYS; k++) {
            if (k == C_LP_MODEL)
                continue;
            if ((rc = parse_int_cell(c, col[k], ints[k - C_HP_BATCH])) != PS_OK)
                goto done;
        }
    }
done:
    ps_csv_close(c);
    if (rc < 0) {
        cli_queries_free(f);
        return rc;
    }
    return PS_OK;
}
