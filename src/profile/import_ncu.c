/*
 * Nsight Compute CSV (`ncu --csv --page raw --metrics ...`, optionally with
 * `--print-units base`) to ops.csv: one operator per kernel launch, in launch
 * order.
 *
 * The export has a header row of fixed columns ("ID", "Process ID", ...,
 * "Kernel Name", ...) followed by one column per metric; the next row holds
 * each metric's unit (the fixed columns are empty there); then one row per
 * launch. ncu's own messages ("==PROF== ...", "==WARNING== ...") may come
 * anywhere and the profiled program's output before the header. Numbers may
 * carry thousands separators ("5,376") and, without --print-units base, units
 * scaled to their size (usecond, Mbyte, ...; ncu's prefixes are decimal).
 */
#include "common/common.h"
#include "profile/profile_internal.h"

#include <stdlib.h>
#include <string.h>

/* The metrics FORMATS.md names, and where each goes. */
enum { M_TIME, M_DRAM, M_DRAM_READ, M_DRAM_WRITE, M_L2, M_LONG_SB, M_LG, M_MIO, M_SM, M_MEM, M_N };
static const struct {
    const char *name;
    char kind; /* 't' time, 'b' bytes, 'p' percent */
} metrics[M_N] = {
    [M_TIME] = {"gpu__time_duration.sum", 't'},
    [M_DRAM] = {"dram__bytes.sum", 'b'},
    [M_DRAM_READ] = {"dram__bytes_read.sum", 'b'},
    [M_DRAM_WRITE] = {"dram__bytes_write.sum", 'b'},
    [M_L2] = {"lts__t_bytes.sum", 'b'},
    [M_LONG_SB] = {"smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct", 'p'},
    [M_LG] = {"smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct", 'p'},
    [M_MIO] = {"smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct", 'p'},
    [M_SM] = {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 'p'},
    [M_MEM] = {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 'p'},
};

/* The factor to nanoseconds, bytes or percent of a unit as ncu prints it;
 * 0 when unknown. An absent units row means base units. */
static double unit_scale(char kind, const char *u)
{
    static const struct {
        char kind;
        const char *unit;
        double scale;
    } units[] = {
        {'t', "nsecond", 1}, {'t', "ns", 1}, {'t', "usecond", 1e3}, {'t', "us", 1e3},
        {'t', "msecond", 1e6}, {'t', "ms", 1e6}, {'t', "second", 1e9}, {'t', "s", 1e9},
        {'b', "byte", 1}, {'b', "B", 1}, {'b', "Kbyte", 1e3}, {'b', "KB", 1e3},
        {'b', "Mbyte", 1e6}, {'b', "MB", 1e6}, {'b', "Gbyte", 1e9}, {'b', "GB", 1e9},
        {'b', "Tbyte", 1e12}, {'b', "TB", 1e12}, {'b', "Kibyte", 1024.0},
        {'b', "Mibyte", 1048576.0}, {'b', "Gibyte", 1073741824.0},
        {'p', "%", 1}, {'p', "pct", 1},
    };
    if (!*u)
        return 1;
    for (size_t i = 0; i < PS_ARRAY_LEN(units); i++)
        if (units[i].kind == kind && strcmp(units[i].unit, u) == 0)
            return units[i].scale;
    return 0;
}

/* A number as ncu prints it: thousands separators allowed ("5,376",
 * "1,234.5"); "n/a" or an empty cell is not measured (NAN, returns 1). */
static int parse_ncu_number(const char *s, double *out, const char **why)
{
    char buf[64];
    size_t n = 0;
    if (!*s || strcmp(s, "n/a") == 0) {
        *out = NAN;
        return 1;
    }
    const char *dot = strchr(s, '.');
    size_t intlen = dot ? (size_t)(dot - s) : strlen(s);
    for (size_t i = 0; s[i]; i++) {
        if (s[i] == ',') {
            /* A separator must sit in the integer part, three digits before
             * the next separator or the end of it. */
            size_t next = i + 1;
            while (next < intlen && s[next] != ',')
                next++;
            if (i == 0 || i >= intlen || next - i - 1 != 3) {
                *why = "misplaced thousands separator";
                return -1;
            }
            continue;
        }
        if (n + 1 >= sizeof buf) {
            *why = "number too long";
            return -1;
        }
        buf[n++] = s[i];
    }
    buf[n] = '\0';
    return ps_parse_double(buf, out, why);
}

typedef struct {
    long long id;
    size_t seq;
    const char *name; /* pooled */
    double ns;
    ps_counters_t c;
} launch_t;

static int cmp_launch(const void *a, const void *b)
{
    const launch_t *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Read one launch row into *l. */
static int read_launch(ps_csv_t *csv, const int *col, const double *scale, int id_col,
                       int name_col, ps_strpool_t *pool, launch_t *l)
{
    const char *path = ps_csv_path(csv);
    double v[M_N];
    for (int m = 0; m < M_N; m++) {
        v[m] = NAN;
        if (col[m] < 0)
            continue;
        const char *why = "not a number";
        const char *cell = ps_csv_field(csv, col[m]);
        if (parse_ncu_number(cell, &v[m], &why) < 0 || (!isnan(v[m]) && v[m] < 0))
            return ps_error(PS_E_INPUT, "%s:%zu:%d: %s: '%.40s': %s", path,
                            ps_csv_field_line(csv, col[m]), col[m] + 1, metrics[m].name, cell,
                            v[m] < 0 ? "negative" : why);
        v[m] *= scale[m];
    }
    if (isnan(v[M_TIME]) || v[M_TIME] <= 0)
        return ps_error(PS_E_INPUT, "%s:%zu:%d: %s: the kernel has no positive duration", path,
                        ps_csv_line(csv), col[M_TIME] + 1, metrics[M_TIME].name);
    l->id = (long long)l->seq;
    if (id_col >= 0) {
        char *end;
        const char *s = ps_csv_field(csv, id_col);
        long long id = strtoll(s, &end, 10);
        if (!*s || *end)
            return ps_error(PS_E_INPUT, "%s:%zu:%d: ID: '%.40s': not an integer", path,
                            ps_csv_line(csv), id_col + 1, s);
        l->id = id;
    }
    l->name = ps_strpool_intern(pool, ps_csv_field(csv, name_col));
    if (!l->name)
        return PS_E_NOMEM;
    l->ns = v[M_TIME];
    double dram = v[M_DRAM];
    if (isnan(dram) && !isnan(v[M_DRAM_READ]) && !isnan(v[M_DRAM_WRITE]))
        dram = v[M_DRAM_READ] + v[M_DRAM_WRITE];
    /* Throughput percentages can overshoot 100 by rounding; FORMATS.md
     * bounds them, so a slight overshoot is cut to 100. */
    double sm = v[M_SM] > 100 && v[M_SM] < 101 ? 100 : v[M_SM];
    double mem = v[M_MEM] > 100 && v[M_MEM] < 101 ? 100 : v[M_MEM];
    if (sm > 100 || mem > 100) {
        /* Named here, at its line and column: ps_ops_index would only name
         * the output row. */
        int m = sm > 100 ? M_SM : M_MEM;
        return ps_error(PS_E_INPUT, "%s:%zu:%d: %s: %g: a percentage above 100", path,
                        ps_csv_field_line(csv, col[m]), col[m] + 1, metrics[m].name, v[m]);
    }
    l->c = (ps_counters_t){dram, v[M_L2], v[M_LONG_SB], v[M_LG], v[M_MIO], sm, mem};
    return PS_OK;
}

int ps_import_ncu_csv(ps_csv_t *csv, const ps_import_params_t *p, ps_ops_t **out)
{
    *out = NULL;
    int rc = ps_import_check_params(p);
    if (rc != PS_OK)
        return rc;
    const char *path = ps_csv_path(csv);
    ps_csv_skip_prefix(csv, "==");
    /* Skip what the profiled program printed before the header. */
    int id_col = -1, name_col = -1;
    while ((rc = ps_csv_next(csv)) == 1) {
        name_col = ps_csv_find(csv, "Kernel Name");
        id_col = ps_csv_find(csv, "ID");
        if (name_col >= 0)
            break;
    }
    if (rc < 0)
        return rc;
    if (rc == 0)
        return ps_error(PS_E_INPUT, "%s: no Nsight Compute header (a row with \"Kernel Name\"): "
                        "export with ncu --csv --page raw", path);
    int col[M_N], nfields = ps_csv_nfields(csv);
    for (int m = 0; m < M_N; m++)
        col[m] = ps_csv_find(csv, metrics[m].name);
    if (col[M_TIME] < 0)
        return ps_error(PS_E_INPUT, "%s:%zu:1: missing metric column '%s' (profile with --metrics "
                        "%s and export with --page raw)", path, ps_csv_line(csv),
                        metrics[M_TIME].name, metrics[M_TIME].name);

    ps_strpool_t *pool = ps_strpool_new();
    ps_ops_t *t = ps_ops_new();
    launch_t *launch = NULL;
    size_t n = 0, cap = 0;
    double scale[M_N];
    for (int m = 0; m < M_N; m++)
        scale[m] = 1;
    int first = 1;
    if (!pool || !t) {
        rc = PS_E_NOMEM;
        goto done;
    }
    while ((rc = ps_csv_next(csv)) == 1) {
        if (ps_csv_nfields(csv) != nfields) {
            rc = ps_error(PS_E_INPUT, "%s:%zu:1: expected %d fields as in the header, found %d",
                          path, ps_csv_line(csv), nfields, ps_csv_nfields(csv));
            goto done;
        }
        /* The units row: the launch columns are empty there. */
        if (first && !*ps_csv_field(csv, name_col)) {
            first = 0;
            for (int m = 0; m < M_N; m++) {
                if (col[m] < 0)
                    continue;
                const char *u = ps_csv_field(csv, col[m]);
                if ((scale[m] = unit_scale(metrics[m].kind, u)) == 0) {
                    rc = ps_error(PS_E_INPUT, "%s:%zu:%d: %s: unknown unit '%.40s'", path,
                                  ps_csv_line(csv), col[m] + 1, metrics[m].name, u);
                    goto done;
                }
            }
            continue;
        }
        first = 0;
        void *grown = launch;
        rc = ps_array_grow(&grown, n, &cap, sizeof *launch, 256);
        launch = grown;
        if (rc != PS_OK)
            goto done;
        launch[n].seq = n;
        if ((rc = read_launch(csv, col, scale, id_col, name_col, pool, &launch[n])) != PS_OK)
            goto done;
        n++;
    }
    if (rc < 0)
        goto done;
    /* Launch order is the order of the IDs ncu gave the launches. */
    if (n)
        qsort(launch, n, sizeof *launch, cmp_launch);
    for (size_t i = 0; i < n && rc >= 0; i++)
        rc = ps_import_add(t, p, (int)i, launch[i].name, launch[i].ns, &launch[i].c);
    if (rc >= 0) {
        rc = ps_import_finish(t, path, out);
        t = NULL;
    }
done:
    ps_ops_free(t);
    ps_strpool_free(pool);
    free(launch);
    return rc < 0 ? rc : PS_OK;
}

int ps_import_ncu(const char *report_csv, const ps_import_params_t *p, ps_ops_t **out)
{
    *out = NULL;
    ps_csv_t *csv = NULL;
    int rc = ps_csv_open(report_csv, &csv);
    if (rc == PS_OK)
        rc = ps_import_ncu_csv(csv, p, out);
    ps_csv_close(csv);
    return rc;
}
