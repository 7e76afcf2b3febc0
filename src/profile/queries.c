/* The queries file of `pairsight predict`: the key columns of coexec.csv
 * (FORMATS.md), any other column kept to be echoed beside the predictions. */
#include "profile/queries.h"

#include "common/common.h"

#include <errno.h>
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

static const char *const key_names[N_KEYS] = {"gpu",      "hp_model", "hp_batch", "hp_start", "hp_len", "lp_model",
                                              "lp_batch", "lp_start", "lp_len",   "hp_tpcs",  "lp_tpcs"};

void psi_queries_free(queries_t *f)
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

static int parse_int_cell(psi_csv_t *c, int col, int *out)
{
    const char *s = psi_csv_field(c, col);
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < -2147483647L || v > 2147483647L)
        return psi_error(PS_E_INPUT, "%s:%zu:%d: '%s' is not an integer", psi_csv_path(c), psi_csv_field_line(c, col),
                         col + 1, s);
    *out = (int)v;
    return PS_OK;
}

static int grow(queries_t *f)
{
    if (f->n < f->cap)
        return PS_OK;
    size_t cap = f->cap ? 2 * f->cap : 256;
    char **cells = psi_realloc(f->cells, cap * (size_t)f->ncol * sizeof *cells);
    if (!cells)
        return PS_E_NOMEM;
    f->cells = cells;
    size_t *line = psi_realloc(f->line, cap * sizeof *line);
    if (!line)
        return PS_E_NOMEM;
    f->line = line;
    ps_query_t *q = psi_realloc(f->q, cap * sizeof *q);
    if (!q)
        return PS_E_NOMEM;
    f->q = q;
    f->cap = cap;
    return PS_OK;
}

int psi_queries_read(psi_csv_t *c, const char *model_gpu, queries_t *f)
{
    memset(f, 0, sizeof *f);
    const char *path = psi_csv_path(c);
    int col[N_KEYS], rc;
    rc = psi_csv_next(c);
    if (rc == 0)
        rc = psi_error(PS_E_INPUT, "%s:1:1: empty file: no header", path);
    if (rc < 0)
        goto done;
    f->ncol = psi_csv_nfields(c);
    f->header = psi_calloc((size_t)f->ncol, sizeof *f->header);
    if (!f->header) {
        rc = PS_E_NOMEM;
        goto done;
    }
    for (int i = 0; i < f->ncol; i++)
        if (!(f->header[i] = psi_strdup(psi_csv_field(c, i)))) {
            rc = PS_E_NOMEM;
            goto done;
        }
    /* gpu may be left out (the model's GPU); every other key is required. */
    static const int optional[N_KEYS] = {[C_GPU] = 1};
    int missing;
    rc = psi_csv_match_header(c, key_names, optional, N_KEYS, col, &missing);
    if (rc == PS_OK && missing >= 0)
        rc = psi_csv_missing(c, key_names[missing], "a queries file");
    if (rc != PS_OK)
        goto done;
    while ((rc = psi_csv_next(c)) == 1) {
        if (psi_csv_nfields(c) != f->ncol) {
            rc = psi_error(PS_E_INPUT, "%s:%zu:1: %d fields, the header has %d", path, psi_csv_line(c),
                           psi_csv_nfields(c), f->ncol);
            goto done;
        }
        if ((rc = grow(f)) != PS_OK)
            goto done;
        char **cells = f->cells + f->n * (size_t)f->ncol;
        for (int i = 0; i < f->ncol; i++)
            cells[i] = NULL;
        f->n++;
        for (int i = 0; i < f->ncol; i++)
            if (!(cells[i] = psi_strdup(psi_csv_field(c, i)))) {
                rc = PS_E_NOMEM;
                goto done;
            }
        ps_query_t *q = &f->q[f->n - 1];
        f->line[f->n - 1] = psi_csv_line(c);
        q->gpu = col[C_GPU] >= 0 ? cells[col[C_GPU]] : model_gpu;
        q->hp_model = cells[col[C_HP_MODEL]];
        q->lp_model = cells[col[C_LP_MODEL]];
        int *ints[] = {&q->hp_batch, &q->hp_start, &q->hp_len,  NULL,       &q->lp_batch,
                       &q->lp_start, &q->lp_len,   &q->hp_tpcs, &q->lp_tpcs};
        for (int k = C_HP_BATCH; k < N_KEYS; k++) {
            if (k == C_LP_MODEL)
                continue;
            if ((rc = parse_int_cell(c, col[k], ints[k - C_HP_BATCH])) != PS_OK)
                goto done;
        }
    }
done:
    if (rc < 0) {
        psi_queries_free(f);
        return rc;
    }
    return PS_OK;
}

int psi_queries_load(const char *path, const char *model_gpu, queries_t *f)
{
    memset(f, 0, sizeof *f);
    psi_csv_t *c = NULL;
    int rc = psi_csv_open(path, &c);
    if (rc != PS_OK)
        return rc;
    rc = psi_queries_read(c, model_gpu, f);
    psi_csv_close(c);
    return rc;
}

int ps_queries_load(const char *path, const char *default_gpu, ps_queries_t **out)
{
    if (out)
        *out = NULL;
    if (!path || !default_gpu || !out)
        return psi_error(PS_E_ARG, "ps_queries_load: NULL argument");
    ps_queries_t *q = psi_calloc(1, sizeof *q);
    if (!q || !(q->gpu = psi_strdup(default_gpu))) {
        free(q);
        return PS_E_NOMEM;
    }
    char *gpu = q->gpu;
    int rc = psi_queries_load(path, gpu, q);
    q->gpu = gpu; /* psi_queries_load cleared the struct */
    if (rc != PS_OK) {
        ps_queries_free(q);
        return rc;
    }
    *out = q;
    return PS_OK;
}

void ps_queries_free(ps_queries_t *q)
{
    if (!q)
        return;
    char *gpu = q->gpu;
    psi_queries_free(q);
    free(gpu);
    free(q);
}

size_t ps_queries_count(const ps_queries_t *q) { return q ? q->n : 0; }

const ps_query_t *ps_queries_array(const ps_queries_t *q) { return q && q->n ? q->q : NULL; }

size_t ps_queries_line(const ps_queries_t *q, size_t i) { return q && i < q->n ? q->line[i] : 0; }

int ps_queries_ncols(const ps_queries_t *q) { return q ? q->ncol : 0; }

const char *ps_queries_header(const ps_queries_t *q, int c) { return q && c >= 0 && c < q->ncol ? q->header[c] : NULL; }

const char *ps_queries_cell(const ps_queries_t *q, size_t i, int c)
{
    return q && i < q->n && c >= 0 && c < q->ncol ? q->cells[i * (size_t)q->ncol + (size_t)c] : NULL;
}

int ps_query_parse(char *buf, ps_query_t *q)
{
    if (!buf || !q)
        return psi_error(PS_E_ARG, "ps_query_parse: NULL argument");
    static const char *const names[] = {"hp_batch", "hp_start", "hp_len",  "lp_batch",
                                        "lp_start", "lp_len",   "hp_tpcs", "lp_tpcs"};
    int seen = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return psi_error(PS_E_ARG, "'%s' is not key=value", tok);
        *eq = '\0';
        const char *k = tok, *v = eq + 1;
        int bit = strcmp(k, "gpu") == 0 ? 1 << 10 : strcmp(k, "hp_model") == 0 ? 1 : strcmp(k, "lp_model") == 0 ? 2 : 0;
        for (int i = 0; i < 8 && !bit; i++)
            if (strcmp(k, names[i]) == 0)
                bit = 4 << i;
        if (seen & bit)
            return psi_error(PS_E_ARG, "%s is given twice", k);
        seen |= bit;
        if (bit == 1 << 10) {
            q->gpu = v;
            continue;
        }
        if (bit == 1 || bit == 2) {
            *(bit == 1 ? &q->hp_model : &q->lp_model) = v;
            continue;
        }
        int *dst[] = {&q->hp_batch, &q->hp_start, &q->hp_len,  &q->lp_batch,
                      &q->lp_start, &q->lp_len,   &q->hp_tpcs, &q->lp_tpcs};
        int found = 0;
        for (int i = 0; i < 8; i++) {
            if (strcmp(k, names[i]) != 0)
                continue;
            char *end;
            errno = 0;
            long x = strtol(v, &end, 10);
            if (end == v || *end || errno || x < -1000000000L || x > 1000000000L)
                return psi_error(PS_E_ARG, "%s: '%s' is not an integer", k, v);
            *dst[i] = (int)x;
            found = 1;
        }
        if (!found)
            return psi_error(PS_E_ARG, "unknown key '%s'", k);
    }
    if ((seen & ~(1 << 10)) != (1 | 2 | (0xff << 2)))
        return psi_error(PS_E_ARG, "needs hp_model, hp_batch, hp_start, hp_len, lp_model, lp_batch, lp_start, "
                                   "lp_len, hp_tpcs and lp_tpcs");
    return PS_OK;
}
