/* libFuzzer target: the table loaders (kind chosen by the first byte, or
 * detected from the header). A table that loads must save, load back and
 * give the same rows: the writer and the reader agree on every accepted
 * input. A refused input must leave *out NULL and name line and column. */
#include "common/common.h"
#include "profile/profile_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

/* Rows are compared through the schema: text by content, numbers exactly. */
static int same_rows(const psi_schema_t *s, const void *a, const void *b)
{
    size_t na, nb;
    const char *ra = s->rows(a, &na), *rb = s->rows(b, &nb);
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        for (size_t c = 0; c < s->ncols; c++) {
            const char *fa = ra + i * s->row_size + s->cols[c].offset;
            const char *fb = rb + i * s->row_size + s->cols[c].offset;
            switch (s->cols[c].type) {
            case PS_COL_TEXT: {
                const char *x = *(const char *const *)fa, *y = *(const char *const *)fb;
                if ((!x != !y) || (x && strcmp(x, y) != 0))
                    return 0;
                break;
            }
            case PS_COL_FLOAT: {
                double x = *(const double *)fa, y = *(const double *)fb;
                if (!(x == y || (isnan(x) && isnan(y))))
                    return 0;
                break;
            }
            default:
                if (memcmp(fa, fb, sizeof(int)) != 0)
                    return 0;
            }
        }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/psi_fuzz_tables.%ld.csv", (long)getpid());
    ps_table_kind_t kind = (ps_table_kind_t)(data[0] % 6), got = PS_TABLE_UNKNOWN;
    psi_csv_t *c = NULL;
    if (psi_csv_open_mem(data + 1, size - 1, "fuzz.csv", &c) != PS_OK)
        return 0;
    void *t = (void *)1;
    int rc = psi_table_load_csv(c, kind, &got, &t);
    psi_csv_close(c);
    if (rc != PS_OK) {
        if (t != NULL || strncmp(ps_last_error(), "fuzz.csv:", 9) != 0)
            abort();
        return 0;
    }
    const psi_schema_t *s = psi_schema_get(got);
    if (psi_table_save_any(s, t, path) != PS_OK)
        abort();
    void *u = NULL;
    ps_table_kind_t got2;
    if (psi_csv_open(path, &c) != PS_OK)
        abort();
    rc = psi_table_load_csv(c, got, &got2, &u);
    psi_csv_close(c);
    if (rc != PS_OK || got2 != got || !same_rows(s, t, u))
        abort();
    s->destroy(t);
    s->destroy(u);
    remove(path);
    return 0;
}
