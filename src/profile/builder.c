/*
 * Tables built in memory (ps_table_builder_*): a binding or a program appends
 * rows as text and the table is then read by the same schema-driven loader
 * as a file (tableio.c), so that a table made in memory is validated exactly
 * as one read from disk and nothing is written to a temporary file. The rows
 * are kept as CSV text in one growing buffer (open_memstream); cells are
 * quoted as RFC 4180 wants, so any text survives.
 */
#include "common/common.h"
#include "profile/csv.h"
#include "profile/profile_internal.h"
#include "profile/tables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ps_table_builder {
    ps_table_kind_t kind;
    char *source;
    int n_columns;
    size_t rows;
    FILE *f; /* writes into text[len] */
    char *text;
    size_t len;
};

static int put_record(ps_table_builder_t *b, const char *const *values)
{
    for (int i = 0; i < b->n_columns; i++) {
        if (i)
            fputc(',', b->f);
        psi_csv_put_field(b->f, values[i] ? values[i] : "");
    }
    fputc('\n', b->f);
    return ferror(b->f) ? psi_error(PS_E_NOMEM, "%s: out of memory building the table", b->source) : PS_OK;
}

int ps_table_builder_create(ps_table_kind_t kind, const char *source, const char *const *columns, int n_columns,
                            ps_table_builder_t **out)
{
    if (!out)
        return psi_error(PS_E_ARG, "ps_table_builder_create: NULL out");
    *out = NULL;
    if (kind <= PS_TABLE_UNKNOWN || kind >= PS_TABLE_COUNT)
        return psi_error(PS_E_ARG, "ps_table_builder_create: unknown table kind %d", (int)kind);
    if (!columns || n_columns < 1 || n_columns > 32)
        return psi_error(PS_E_ARG, "ps_table_builder_create: %d columns (1 to 32)", n_columns);
    for (int i = 0; i < n_columns; i++)
        if (!columns[i] || !*columns[i])
            return psi_error(PS_E_ARG, "ps_table_builder_create: column %d has no name", i + 1);
    ps_table_builder_t *b = psi_calloc(1, sizeof *b);
    if (!b)
        return PS_E_NOMEM;
    b->kind = kind;
    b->n_columns = n_columns;
    b->source = psi_strdup(source && *source ? source : ps_table_name(kind));
    b->f = b->source ? open_memstream(&b->text, &b->len) : NULL;
    int rc = b->f ? put_record(b, columns) : psi_error(PS_E_NOMEM, "out of memory building a table");
    if (rc != PS_OK) {
        ps_table_builder_free(b);
        return rc;
    }
    *out = b;
    return PS_OK;
}

int ps_table_builder_append(ps_table_builder_t *b, const char *const *values)
{
    if (!b || !values)
        return psi_error(PS_E_ARG, "ps_table_builder_append: NULL argument");
    int rc = put_record(b, values);
    if (rc == PS_OK)
        b->rows++;
    return rc;
}

size_t ps_table_builder_rows(const ps_table_builder_t *b) { return b ? b->rows : 0; }

/* Read the text appended so far with the table loader; the builder stays as
 * it was, so that more rows may follow and finish again. */
static int finish(ps_table_builder_t *b, ps_table_kind_t kind, void **out)
{
    *out = NULL;
    if (!b)
        return psi_error(PS_E_ARG, "ps_table_builder_finish: NULL builder");
    if (b->kind != kind)
        return psi_error(PS_E_ARG, "%s: a builder of %s, finished as %s", b->source, ps_table_name(b->kind),
                         ps_table_name(kind));
    if (fflush(b->f) != 0)
        return psi_error(PS_E_NOMEM, "%s: out of memory building the table", b->source);
    psi_csv_t *csv = NULL;
    int rc = psi_csv_open_mem(b->text, b->len, b->source, &csv);
    if (rc == PS_OK)
        rc = psi_table_load_csv(csv, kind, NULL, out);
    psi_csv_close(csv);
    return rc;
}

/* ps_table_builder_finish_ops, _coexec, _workloads, _scaling and
 * _colocations. */
#define FINISHER(T, stem, kind)                                                                                        \
    int ps_table_builder_finish_##stem(ps_table_builder_t *b, T **out)                                                 \
    {                                                                                                                  \
        if (!out)                                                                                                      \
            return psi_error(PS_E_ARG, "ps_table_builder_finish_" #stem ": NULL out");                                 \
        void *t = NULL;                                                                                                \
        int rc = finish(b, kind, &t);                                                                                  \
        *out = t;                                                                                                      \
        return rc;                                                                                                     \
    }

PSI_TABLE_KINDS(FINISHER)

void ps_table_builder_free(ps_table_builder_t *b)
{
    if (!b)
        return;
    if (b->f)
        fclose(b->f);
    free(b->text);
    free(b->source);
    free(b);
}

int ps_workloads_key(const ps_workloads_t *w, size_t i, const char **out_gpu, const char **out_workload)
{
    if (!w || i >= w->n)
        return psi_error(PS_E_ARG, "ps_workloads_key: row %zu of %zu", i, w ? w->n : 0);
    if (out_gpu)
        *out_gpu = w->rows[i].gpu;
    if (out_workload)
        *out_workload = w->rows[i].workload;
    return PS_OK;
}
