/* The queries file of `pairsight predict`: the key columns of coexec.csv
 * (FORMATS.md), any other column kept to be echoed beside the predictions. */
#include "profile/queries.h"

#include "common/common.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The one table of ps_query_t's fields (include/pairsight_core.h). */
#define Q_STR(f, required)                                                                                             \
    {                                                                                                                  \
#f, 1, offsetof(ps_query_t, f), required, 0, 0                                                                 \
    }
#define Q_INT(f)                                                                                                       \
    {                                                                                                                  \
#f, 0, offsetof(ps_query_t, f), 1, -2147483647L, 2147483647L                                                   \
    }
static const ps_query_field_t fields[] = {Q_STR(gpu, 0), Q_STR(hp_model, 1), Q_INT(hp_batch), Q_INT(hp_start),
                                          Q_INT(hp_len), Q_STR(lp_model, 1), Q_INT(lp_batch), Q_INT(lp_start),
                                          Q_INT(lp_len), Q_INT(hp_tpcs),     Q_INT(lp_tpcs)};
#define N_KEYS ((int)PS_ARRAY_LEN(fields))
_Static_assert(PS_ARRAY_LEN(fields) == 11 && offsetof(ps_query_t, lp_tpcs) + sizeof(int) <= sizeof(ps_query_t),
               "one row per field of ps_query_t");

const ps_query_field_t *ps_query_fields(int *n)
{
    if (n)
        *n = N_KEYS;
    return fields;
}

/* Text s as int field f into *out: 0, or -1 when it is not an integer in
 * the field's bounds. */
static int field_int(const ps_query_field_t *f, const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < f->lo || v > f->hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int field_index(const char *name)
{
    for (int k = 0; k < N_KEYS; k++)
        if (strcmp(fields[k].name, name) == 0)
            return k;
    return -1;
}

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

static int parse_int_cell(psi_csv_t *c, int col, const ps_query_field_t *f, int *out)
{
    const char *s = psi_csv_field(c, col);
    if (field_int(f, s, out) != 0)
        return psi_error(PS_E_INPUT, "%s:%zu:%d: '%s' is not an integer", psi_csv_path(c), psi_csv_field_line(c, col),
                         col + 1, s);
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
    const char *names[N_KEYS];
    int optional[N_KEYS], missing;
    for (int k = 0; k < N_KEYS; k++) {
        names[k] = fields[k].name;
        optional[k] = !fields[k].required;
    }
    rc = psi_csv_match_header(c, names, optional, N_KEYS, col, &missing);
    if (rc == PS_OK && missing >= 0)
        rc = psi_csv_missing(c, names[missing], "a queries file");
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
        for (int k = 0; k < N_KEYS; k++) {
            char *dst = (char *)q + fields[k].offset;
            if (fields[k].is_string)
                *(const char **)dst = col[k] >= 0 ? cells[col[k]] : model_gpu; /* only gpu may be absent */
            else if ((rc = parse_int_cell(c, col[k], &fields[k], (int *)dst)) != PS_OK)
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

/* "needs A, B, ... and Z": the required fields. */
static void needs(char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "needs");
    int last = N_KEYS - 1, first = 1;
    for (int k = 0; k < N_KEYS && len < n; k++) {
        if (!fields[k].required)
            continue;
        len += (size_t)snprintf(buf + len, n - len, "%s %s", first ? "" : k == last ? " and" : ",", fields[k].name);
        first = 0;
    }
}

int ps_query_parse(char *buf, ps_query_t *q)
{
    if (!buf || !q)
        return psi_error(PS_E_ARG, "ps_query_parse: NULL argument");
    unsigned seen = 0, all = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return psi_error(PS_E_ARG, "'%s' is not key=value", tok);
        *eq = '\0';
        const char *k = tok, *v = eq + 1;
        int f = field_index(k);
        if (f < 0)
            return psi_error(PS_E_ARG, "unknown key '%s'", k);
        if (seen & 1u << f)
            return psi_error(PS_E_ARG, "%s is given twice", k);
        seen |= 1u << f;
        char *dst = (char *)q + fields[f].offset;
        if (fields[f].is_string)
            *(const char **)dst = v;
        else if (field_int(&fields[f], v, (int *)dst) != 0)
            return psi_error(PS_E_ARG, "%s: '%s' is not an integer", k, v);
    }
    for (int f = 0; f < N_KEYS; f++)
        all |= fields[f].required ? 1u << f : 0;
    for (int f = 0; f < N_KEYS; f++)
        if (all & ~seen & 1u << f) {
            char text[200];
            needs(text, sizeof text);
            return psi_error(PS_E_ARG, "%s (%s is missing)", text, fields[f].name);
        }
    return PS_OK;
}
