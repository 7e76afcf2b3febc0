/* `pairsight check workloads.csv colocations.csv workload_scaling.csv`:
 * the workload-level tables checked against each other (issue 11, item 3).
 * Each file was first validated alone; here it is read again, record by
 * record, so that a message names FILE:LINE:COLUMN. */
#include "profile/csv.h"
#include "profile/tables.h"

#include "common/common.h"

#include <stdlib.h>
#include <string.h>

/* Whether workload name on gpu has a row in one of the workloads tables. */
static int profiled(const ps_workloads_t *const *w, int n_w, const char *gpu, const char *name)
{
    for (int t = 0; t < n_w; t++)
        for (size_t i = 0; i < w[t]->n; i++)
            if (strcmp(w[t]->rows[i].workload, name) == 0 && strcmp(w[t]->rows[i].gpu, gpu) == 0)
                return 1;
    return 0;
}

/* Up to three names of workloads on gpu, for the message. */
static void known_on(const ps_workloads_t *const *w, int n_w, const char *gpu, char *buf, size_t n)
{
    size_t len = 0;
    int shown = 0, more = 0;
    buf[0] = '\0';
    for (int t = 0; t < n_w; t++)
        for (size_t i = 0; i < w[t]->n; i++) {
            if (strcmp(w[t]->rows[i].gpu, gpu) != 0)
                continue;
            if (shown == 3) {
                more = 1;
                continue;
            }
            int k = snprintf(buf + len, n - len, "%s%s", shown ? ", " : "", w[t]->rows[i].workload);
            if (k < 0 || (size_t)k >= n - len)
                break;
            len += (size_t)k;
            shown++;
        }
    if (!shown)
        snprintf(buf, n, "none on that GPU");
    else if (more && len + 6 < n)
        snprintf(buf + len, n - len, ", ...");
}

typedef struct {
    char *id;
    int rows, max_slot;
    size_t max_line;
} coloc_t;

/* The co-locations of a table, in the order of their first row. */
typedef struct {
    coloc_t *c;
    size_t n, cap;
} colocs_t;

/* The entry of co-location id in l (added when absent). */
static coloc_t *coloc_find(colocs_t *l, const char *id)
{
    for (size_t j = l->n; j-- > 0;) /* its rows are usually adjacent */
        if (strcmp(l->c[j].id, id) == 0)
            return &l->c[j];
    void *grown = l->c;
    if (psi_array_grow(&grown, l->n, &l->cap, sizeof *l->c, 64) != PS_OK)
        return NULL;
    l->c = grown;
    coloc_t *e = &l->c[l->n];
    *e = (coloc_t){psi_strdup(id), 0, 0, 0};
    if (!e->id)
        return NULL;
    l->n++;
    return e;
}

/* Every co-location has slots 1..k, k >= 2: as many rows as its highest
 * slot (the single-file check already refused a slot given twice), and more
 * than one (a workload alone is no co-location; a row was lost). */
static int check_slots(const char *path, const colocs_t *l, int col)
{
    const coloc_t *c = l->c;
    for (size_t j = 0; j < l->n; j++)
        if (c[j].rows == 1 && c[j].max_slot == 1)
            return psi_error(PS_E_INPUT,
                             "%s:%zu:%d: co-location '%s' has 1 workload: a co-location holds k >= 2 "
                             "(slots 1..k; a row lost?)",
                             path, c[j].max_line, col, c[j].id);
        else if (c[j].max_slot != c[j].rows)
            return psi_error(PS_E_INPUT,
                             "%s:%zu:%d: co-location '%s' has slot %d but %d rows: its k workloads take slots 1..k",
                             path, c[j].max_line, col, c[j].id, c[j].max_slot, c[j].rows);
    return PS_OK;
}

typedef struct {
    int gpu, workload, slot, colocation;
} cols_t;

static int find_columns(psi_csv_t *csv, ps_table_kind_t kind, cols_t *k)
{
    k->gpu = psi_csv_find(csv, "gpu");
    k->workload = psi_csv_find(csv, "workload");
    k->slot = kind == PS_TABLE_COLOCATIONS ? psi_csv_find(csv, "slot") : 0;
    k->colocation = kind == PS_TABLE_COLOCATIONS ? psi_csv_find(csv, "colocation") : 0;
    if (k->gpu < 0 || k->workload < 0 || k->slot < 0 || k->colocation < 0)
        return psi_error(PS_E_INPUT, "%s:1:1: not a %s table", psi_csv_path(csv), ps_table_name(kind));
    return PS_OK;
}

/* One record: its workload is profiled; a co-location's slot is counted. */
static int check_record(psi_csv_t *csv, ps_table_kind_t kind, const cols_t *k, const ps_workloads_t *const *w, int n_w,
                        colocs_t *l)
{
    const char *gpu = psi_csv_field(csv, k->gpu), *name = psi_csv_field(csv, k->workload);
    if (n_w > 0 && !profiled(w, n_w, gpu, name)) {
        char known[256];
        known_on(w, n_w, gpu, known, sizeof known);
        return psi_error(PS_E_INPUT,
                         "%s:%zu:%d: workload '%s' on %s has no row in the workloads file%s given (its solo "
                         "profile: exclusive_tput, metrics); known: %s",
                         psi_csv_path(csv), psi_csv_field_line(csv, k->workload), k->workload + 1, name, gpu,
                         n_w > 1 ? "s" : "", known);
    }
    if (kind != PS_TABLE_COLOCATIONS)
        return PS_OK;
    coloc_t *e = coloc_find(l, psi_csv_field(csv, k->colocation));
    if (!e)
        return PS_E_NOMEM;
    int slot = atoi(psi_csv_field(csv, k->slot));
    e->rows++;
    if (slot > e->max_slot) {
        e->max_slot = slot;
        e->max_line = psi_csv_field_line(csv, k->slot);
    }
    return PS_OK;
}

int ps_table_check_workloads(const char *path, ps_table_kind_t kind, const ps_workloads_t *const *w, int n_w)
{
    if (!path || (n_w > 0 && !w))
        return psi_error(PS_E_ARG, "ps_table_check_workloads: NULL argument");
    if (kind != PS_TABLE_COLOCATIONS && (kind != PS_TABLE_SCALING || n_w == 0))
        return PS_OK;
    psi_csv_t *csv = NULL;
    int rc = psi_csv_open(path, &csv);
    if (rc != PS_OK)
        return rc;
    locale_t loc = psi_c_numeric_begin();
    cols_t k = {0, 0, 0, 0};
    colocs_t l = {NULL, 0, 0};
    rc = psi_csv_next(csv);
    rc = rc > 0 ? find_columns(csv, kind, &k) : rc < 0 ? rc : psi_error(PS_E_INPUT, "%s:1:1: empty file", path);
    for (int more = rc == PS_OK; more;) {
        int r = psi_csv_next(csv);
        if (r <= 0)
            rc = r;
        else if (psi_csv_nfields(csv) > 1 || psi_csv_field_len(csv, 0) > 0) /* blank lines, as the loader */
            rc = check_record(csv, kind, &k, w, n_w, &l);
        more = r > 0 && rc == PS_OK;
    }
    if (rc == 0 && kind == PS_TABLE_COLOCATIONS)
        rc = check_slots(path, &l, k.slot + 1);
    for (size_t j = 0; j < l.n; j++)
        free(l.c[j].id);
    free(l.c);
    psi_c_numeric_end(loc);
    psi_csv_close(csv);
    return rc;
}
