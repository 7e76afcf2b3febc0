/*
 * Nsight Compute CSV to ops.csv: one operator per kernel launch, in launch
 * order. Two pages of `ncu --csv` are read:
 *
 *  - raw (`--page raw`): a header of fixed columns ("ID", "Process ID", ...,
 *    "Kernel Name", ...) then one column per metric by its raw name; the
 *    next row holds each metric's unit (the fixed columns are empty there);
 *    then one row per launch.
 *  - details (the default page, `ncu --csv --metrics ...` or `ncu -i
 *    R.ncu-rep --csv`): one row per metric, "Section Name", "Metric Name",
 *    "Metric Unit", "Metric Value" after the fixed columns, pivoted here by
 *    launch ID. Section exports name metrics by display name ("Duration",
 *    "Compute (SM) Throughput"); since 2023 rows also carry rule columns,
 *    rule rows have no metric, and metric rows end early ("...","0.74",).
 *
 * The profiled program's output and ncu's own lines ("==PROF==", "==ERROR==")
 * come before the header and between rows; they are skipped (ncu quotes
 * every field, so a row starts with a quote), and what ncu said is reported
 * when no table follows. Numbers may carry thousands separators ("5,376")
 * and, without --print-units base, units scaled to their size (usecond,
 * Mbyte, ...; ncu's prefixes are decimal). Line numbers count LF only.
 */
#include "common/common.h"
#include "profile/profile_internal.h"

#include <stdlib.h>
#include <string.h>

/* Where a value goes. M_DRAM_RATE (DRAM bytes per second) only stands in
 * for dram__bytes.sum, times the duration, when that is absent. */
enum { M_TIME, M_DRAM, M_DRAM_READ, M_DRAM_WRITE, M_DRAM_RATE, M_L2, M_LONG_SB, M_LG, M_MIO,
       M_SM, M_MEM, M_GPU, M_N };

/* Metric names, raw (every page) and display (details page only), with the
 * kind of unit each takes: 't' time, 'b' bytes, 'r' bytes per second, 'p'
 * percent, 's' text. A display name may mean two things told apart by the
 * unit ("Memory Throughput": % in Speed Of Light, byte/second in Memory
 * Workload Analysis); the first entry whose unit kind matches wins. The
 * table in docs/profile.md is this one. */
static const struct {
    const char *name;
    char kind;
    int m;
    int display;
} names[] = {
    {"gpu__time_duration.sum", 't', M_TIME, 0},
    {"dram__bytes.sum", 'b', M_DRAM, 0},
    {"dram__bytes_read.sum", 'b', M_DRAM_READ, 0},
    {"dram__bytes_write.sum", 'b', M_DRAM_WRITE, 0},
    {"dram__bytes.sum.per_second", 'r', M_DRAM_RATE, 0},
    {"lts__t_bytes.sum", 'b', M_L2, 0},
    {"smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct", 'p', M_LONG_SB, 0},
    {"smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct", 'p', M_LG, 0},
    {"smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct", 'p', M_MIO, 0},
    {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 'p', M_SM, 0},
    {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 'p', M_MEM, 0},
    {"device__attribute_display_name", 's', M_GPU, 0},
    {"Duration", 't', M_TIME, 1},
    {"Compute (SM) Throughput", 'p', M_SM, 1},
    {"SM [%]", 'p', M_SM, 1}, /* Speed Of Light before ncu 2021 */
    {"Memory Throughput", 'p', M_MEM, 1},
    {"Memory Throughput", 'r', M_DRAM_RATE, 1},
    {"Memory [%]", 'p', M_MEM, 1},
};

static const char *const metric_label[M_N] = {
    [M_TIME] = "gpu__time_duration.sum",
    [M_DRAM] = "dram__bytes.sum",
    [M_DRAM_READ] = "dram__bytes_read.sum",
    [M_DRAM_WRITE] = "dram__bytes_write.sum",
    [M_DRAM_RATE] = "dram__bytes.sum.per_second",
    [M_L2] = "lts__t_bytes.sum",
    [M_LONG_SB] = "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
    [M_LG] = "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct",
    [M_MIO] = "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
    [M_SM] = "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    [M_MEM] = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    [M_GPU] = "device__attribute_display_name",
};

/* The factor to nanoseconds, bytes, bytes/s or percent of a unit as ncu
 * prints it; 0 when unknown. An empty unit means base units. */
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
    if (!*u || kind == 's')
        return 1;
    if (kind == 'r') {
        /* byte/second, Gbyte/second, GB/s: a byte unit over a second. */
        const char *slash = strrchr(u, '/');
        if (!slash || (strcmp(slash, "/second") != 0 && strcmp(slash, "/s") != 0))
            return 0;
        char b[16];
        size_t n = (size_t)(slash - u);
        if (n == 0 || n >= sizeof b)
            return 0;
        memcpy(b, u, n);
        b[n] = '\0';
        return unit_scale('b', b);
    }
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
    if (!*s || strcmp(s, "n/a") == 0 || strcmp(s, "N/A") == 0) {
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
    return psi_parse_double(buf, out, why);
}

typedef struct {
    long long id;
    size_t seq, line;
    const char *name, *pid, *dev, *gpu; /* pooled; gpu NULL when not given */
    double v[M_N];
} launch_t;

/* The launches of a report, l[0..n), and which are taken (take[i]). */
typedef struct {
    launch_t *l;
    size_t n;
    int *take;
} launches_t;

static int cmp_launch(const void *a, const void *b)
{
    const launch_t *x = a, *y = b;
    return psi_import_order((x->id > y->id) - (x->id < y->id), x->seq, y->seq);
}

/* The columns of the header that the import reads. */
typedef struct {
    int id, name, pid, pname, dev;
    int metric, unit, value; /* details page */
    int col[M_N];            /* raw page */
    int details, quoted, nfields, needed;
    size_t line;
} header_t;

/* A value of metric m from its cell, scaled; errors name line and column. */
static int read_value(psi_csv_t *csv, int col, int m, double scale, double *out)
{
    const char *why = "not a number";
    const char *cell = psi_csv_field(csv, col);
    double v;
    if (parse_ncu_number(cell, &v, &why) < 0 || (!isnan(v) && v < 0))
        return psi_error(PS_E_INPUT, "%s:%zu:%d: %s: '%.40s': %s", psi_csv_path(csv), psi_csv_field_line(csv, col),
                         col + 1, metric_label[m], cell, !isnan(v) && v < 0 ? "negative" : why);
    v *= scale;
    /* Throughput percentages can overshoot 100 by rounding; FORMATS.md
     * bounds them, so a slight overshoot is cut to 100, a larger one named
     * here (psi_ops_index would only name the output row). */
    if ((m == M_SM || m == M_MEM) && v > 100) {
        if (v >= 101)
            return psi_error(PS_E_INPUT, "%s:%zu:%d: %s: %g: a percentage above 100", psi_csv_path(csv),
                             psi_csv_field_line(csv, col), col + 1, metric_label[m], v);
        v = 100;
    }
    *out = v;
    return PS_OK;
}

/* The launch ID of the current row (thousands separators allowed, as in
 * any column), or seq when the export has no ID column. */
static int row_id(psi_csv_t *csv, const header_t *h, size_t seq, long long *id)
{
    *id = (long long)seq;
    if (h->id < 0)
        return PS_OK;
    const char *s = psi_csv_field(csv, h->id), *why = "";
    double v;
    if (parse_ncu_number(s, &v, &why) != 0 || v != floor(v) || fabs(v) > 9e15)
        return psi_error(PS_E_INPUT, "%s:%zu:%d: ID: '%.40s': not an integer", psi_csv_path(csv), psi_csv_line(csv),
                         h->id + 1, s);
    *id = (long long)v;
    return PS_OK;
}

/* Start a launch from the fixed columns of the current row. */
static int begin_launch(psi_csv_t *csv, const header_t *h, psi_strpool_t *pool, size_t seq, long long id, launch_t *l)
{
    *l = (launch_t){.id = id, .seq = seq, .line = psi_csv_line(csv)};
    for (int m = 0; m < M_N; m++)
        l->v[m] = NAN;
    l->name = psi_strpool_intern(pool, psi_csv_field(csv, h->name));
    l->pid = psi_strpool_intern(pool, h->pid >= 0 ? psi_csv_field(csv, h->pid) : "");
    l->dev = psi_strpool_intern(pool, h->dev >= 0 ? psi_csv_field(csv, h->dev) : "");
    return l->name && l->pid && l->dev ? PS_OK : PS_E_NOMEM;
}

/* The metric a details row holds into *m (-1: not one the import takes) and
 * its unit's factor into *scale. An unknown unit of a metric the import
 * takes is an error. */
static int details_metric(psi_csv_t *csv, const header_t *h, int *m, double *scale)
{
    const char *name = psi_csv_field(csv, h->metric);
    const char *unit = h->unit >= 0 ? psi_csv_field(csv, h->unit) : "";
    int known = 0;
    *m = -1;
    for (size_t i = 0; i < PS_ARRAY_LEN(names); i++) {
        if (strcmp(names[i].name, name) != 0)
            continue;
        known = 1;
        if ((*scale = unit_scale(names[i].kind, unit)) != 0) {
            *m = names[i].m;
            return PS_OK;
        }
    }
    if (known)
        return psi_error(PS_E_INPUT, "%s:%zu:%d: %s: unknown unit '%.40s'", psi_csv_path(csv), psi_csv_line(csv),
                         h->unit + 1, name, unit);
    return PS_OK;
}

/* Fields of a line as a header, into a fresh tokenizer over a copy. */
static int header_fields(const char *line, const char *path, char **copy, psi_csv_t **hc)
{
    *hc = NULL;
    *copy = psi_strdup(line);
    if (!*copy)
        return PS_E_NOMEM;
    int rc = psi_csv_open_mem(*copy, strlen(*copy), path, hc);
    if (rc == PS_OK && psi_csv_next(*hc) != 1) {
        psi_csv_close(*hc);
        *hc = NULL;
    }
    return rc;
}

/* Whether the fields are a header of a page we know; fills *h. A summary
 * export (--print-summary) is refused here: it has no launches. */
static int parse_header(psi_csv_t *hc, psi_csv_t *csv, size_t line, header_t *h, int *is_header)
{
    *is_header = 0;
    *h = (header_t){.line = line};
    h->name = psi_csv_find(hc, "Kernel Name");
    if (h->name < 0)
        return PS_OK;
    h->id = psi_csv_find(hc, "ID");
    h->pid = psi_csv_find(hc, "Process ID");
    h->pname = psi_csv_find(hc, "Process Name");
    h->dev = psi_csv_find(hc, "Device");
    h->metric = psi_csv_find(hc, "Metric Name");
    h->unit = psi_csv_find(hc, "Metric Unit");
    h->value = psi_csv_find(hc, "Metric Value");
    h->nfields = psi_csv_nfields(hc);
    int raw_metric = 0;
    for (int m = 0; m < M_N; m++) {
        h->col[m] = -1;
        for (size_t i = 0; i < PS_ARRAY_LEN(names) && h->col[m] < 0; i++)
            if (names[i].m == m && !names[i].display)
                h->col[m] = psi_csv_find(hc, names[i].name);
        raw_metric |= h->col[m] >= 0;
    }
    if (psi_csv_find(hc, "Invocations") >= 0 && h->id < 0)
        return psi_error(PS_E_INPUT,
                         "%s:%zu:1: a summary export (ncu --print-summary) has no rows "
                         "per launch: export without --print-summary",
                         psi_csv_path(csv), line);
    h->details = h->metric >= 0 && h->value >= 0;
    if (!h->details && h->id < 0 && !raw_metric)
        return PS_OK;
    *is_header = 1;
    if (h->details && h->id < 0)
        return psi_error(PS_E_INPUT,
                         "%s:%zu:1: a details export without an \"ID\" column: its "
                         "rows cannot be told apart by launch",
                         psi_csv_path(csv), line);
    if (!h->details && h->col[M_TIME] < 0)
        return psi_error(PS_E_INPUT,
                         "%s:%zu:1: missing metric column '%s' (profile with --metrics "
                         "%s, or export the details page)",
                         psi_csv_path(csv), line, metric_label[M_TIME], metric_label[M_TIME]);
    int cols[] = {h->id, h->name, h->pid, h->dev, h->metric, h->unit, h->value};
    for (size_t i = 0; i < PS_ARRAY_LEN(cols); i++)
        if (cols[i] + 1 > h->needed)
            h->needed = cols[i] + 1;
    for (int m = 0; m < M_N && !h->details; m++)
        if (h->col[m] + 1 > h->needed)
            h->needed = h->col[m] + 1;
    return PS_OK;
}

/* What ncu said, from its own lines, for the message when no table came. */
typedef struct {
    char first_error[200], first_warning[200];
    size_t errors, warnings, text;
} ncu_said_t;

static void note_text_line(const char *line, ncu_said_t *said)
{
    said->text++;
    if (strncmp(line, "==ERROR==", 9) == 0) {
        if (!said->errors++)
            snprintf(said->first_error, sizeof said->first_error, "%s", line);
    } else if (strncmp(line, "==WARNING==", 11) == 0) {
        if (!said->warnings++)
            snprintf(said->first_warning, sizeof said->first_warning, "%s", line);
    }
}

/* Skip text until the header row; *h describes it. */
static int find_header(psi_csv_t *csv, header_t *h, ncu_said_t *said)
{
    const char *path = psi_csv_path(csv);
    int rc;
    for (;;) {
        int ch = psi_csv_peek_byte(csv);
        if (ch < 0)
            return ch == -1 ? 0 : ch;
        if ((rc = psi_csv_next_line(csv)) <= 0)
            return rc;
        size_t line = psi_csv_line(csv);
        const char *text = psi_csv_field(csv, 0);
        if (!strstr(text, "Kernel Name")) {
            if (*text)
                note_text_line(text, said);
            continue;
        }
        char *copy = NULL;
        psi_csv_t *hc = NULL;
        int is_header = 0;
        rc = header_fields(text, path, &copy, &hc);
        if (rc == PS_OK && hc)
            rc = parse_header(hc, csv, line, h, &is_header);
        psi_csv_close(hc);
        free(copy);
        if (rc != PS_OK)
            return rc;
        if (is_header) {
            h->quoted = ch == '"';
            return 1;
        }
        note_text_line(text, said);
    }
}

static int no_header_error(const char *path, const ncu_said_t *said)
{
    if (said->errors)
        return psi_error(PS_E_INPUT, "%s: no Nsight Compute table; ncu said: %s%s", path, said->first_error,
                         said->errors > 1 ? " (and more ==ERROR== lines)" : "");
    if (said->warnings)
        return psi_error(PS_E_INPUT, "%s: no Nsight Compute table; ncu said: %s", path, said->first_warning);
    return psi_error(PS_E_INPUT,
                     "%s: no Nsight Compute header (a row with \"Kernel Name\"): export "
                     "with ncu --csv (the details page, or --page raw)",
                     path);
}

/* Read the rows after the header into launches. */
/* The units row of the raw page into scale[M_N] (the factor to ns, bytes or
 * percent of each metric column). */
static int read_units(psi_csv_t *csv, const header_t *h, double *scale)
{
    for (int m = 0; m < M_N; m++) {
        if (h->col[m] < 0)
            continue;
        const char *u = psi_csv_field(csv, h->col[m]);
        char kind = 0;
        for (size_t i = 0; i < PS_ARRAY_LEN(names) && !kind; i++)
            if (names[i].m == m)
                kind = names[i].kind;
        if ((scale[m] = unit_scale(kind, u)) == 0)
            return psi_error(PS_E_INPUT, "%s:%zu:%d: %s: unknown unit '%.40s'", psi_csv_path(csv), psi_csv_line(csv),
                             h->col[m] + 1, metric_label[m], u);
    }
    return PS_OK;
}

/* The values of the current raw page row into launch l: every metric
 * column, each scaled by its unit (scale[]). */
static int fill_raw(psi_csv_t *csv, const header_t *h, psi_strpool_t *pool, const double *scale, launch_t *l)
{
    int rc = PS_OK;
    for (int k = 0; k < M_N && rc == PS_OK; k++) {
        if (h->col[k] < 0)
            continue;
        if (k == M_GPU) {
            const char *g = psi_csv_field(csv, h->col[k]);
            if (*g && !(l->gpu = psi_strpool_intern(pool, g)))
                rc = PS_E_NOMEM;
            continue;
        }
        rc = read_value(csv, h->col[k], k, scale[k], &l->v[k]);
    }
    return rc;
}

/* The value of the current details page row into launch l: its one metric
 * m (-1: none we read), scaled by sc. */
static int fill_details(psi_csv_t *csv, const header_t *h, psi_strpool_t *pool, int m, double sc, launch_t *l)
{
    int rc = PS_OK;
    if (m == M_GPU) {
        const char *g = psi_csv_field(csv, h->value);
        if (*g && !l->gpu && !(l->gpu = psi_strpool_intern(pool, g)))
            rc = PS_E_NOMEM;
    } else if (m >= 0 && isnan(l->v[m])) {
        rc = read_value(csv, h->value, m, sc, &l->v[m]);
    }
    return rc;
}

static int read_rows(psi_csv_t *csv, const header_t *h, psi_strpool_t *pool, ncu_said_t *said, launch_t **out,
                     size_t *n_out)
{
    const char *path = psi_csv_path(csv);
    launch_t *launch = NULL;
    size_t n = 0, cap = 0, seq = 0;
    double scale[M_N];
    for (int m = 0; m < M_N; m++)
        scale[m] = 1;
    int first = 1, rc = PS_OK;
    for (;;) {
        int ch = psi_csv_peek_byte(csv);
        if (ch < 0) {
            rc = ch == -1 ? PS_OK : ch;
            break;
        }
        /* Text between rows: ncu's own lines, the program's output. */
        if (ch == '=' || ch == '\n' || ch == '\r' || (h->quoted && ch != '"')) {
            if ((rc = psi_csv_next_line(csv)) < 0)
                break;
            if (*psi_csv_field(csv, 0))
                note_text_line(psi_csv_field(csv, 0), said);
            continue;
        }
        if ((rc = psi_csv_next(csv)) <= 0)
            break;
        int nf = psi_csv_nfields(csv);
        /* Since 2023 a metric row of the details page ends after "Metric
         * Value", before the rule columns. */
        if (nf > h->nfields || nf < h->needed || (!h->details && nf != h->nfields)) {
            rc = psi_error(PS_E_INPUT, "%s:%zu:1: expected %d fields as in the header, found %d", path,
                           psi_csv_line(csv), h->nfields, nf);
            break;
        }
        if (strcmp(psi_csv_field(csv, h->name), "Kernel Name") == 0)
            continue; /* the header again (several reports in one file) */
        /* The units row of the raw page: the launch columns are empty. */
        if (!h->details && first && !*psi_csv_field(csv, h->name)) {
            first = 0;
            if ((rc = read_units(csv, h, scale)) != PS_OK)
                break;
            continue;
        }
        first = 0;
        int m = -1;
        double sc = 1;
        if (h->details) {
            if (!*psi_csv_field(csv, h->metric))
                continue; /* a rule row */
            if ((rc = details_metric(csv, h, &m, &sc)) != PS_OK)
                break;
        }
        /* A details launch spans consecutive rows of one ID; a row of
         * another ID starts a new entry (merged after sorting). */
        long long id;
        if ((rc = row_id(csv, h, seq, &id)) != PS_OK)
            break;
        int same =
            h->details && n && id == launch[n - 1].id && strcmp(psi_csv_field(csv, h->name), launch[n - 1].name) == 0;
        if (!same) {
            void *grown = launch;
            rc = psi_array_grow(&grown, n, &cap, sizeof *launch, 256);
            launch = grown;
            if (rc != PS_OK || (rc = begin_launch(csv, h, pool, seq, id, &launch[n])) != PS_OK)
                break;
            seq++;
            n++;
        }
        rc = h->details ? fill_details(csv, h, pool, m, sc, &launch[n - 1])
                        : fill_raw(csv, h, pool, scale, &launch[n - 1]);
        if (rc != PS_OK)
            break;
    }
    if (rc < 0) {
        free(launch);
        return rc;
    }
    *out = launch;
    *n_out = n;
    return PS_OK;
}

/* Sort by ID; on the details page merge the entries of one ID (a launch
 * whose rows were not together). A raw row is one launch whatever its ID. */
static int merge_ids(const char *path, int details, launch_t *l, size_t *n)
{
    if (*n)
        qsort(l, *n, sizeof *l, cmp_launch);
    if (!details)
        return PS_OK;
    size_t w = 0;
    for (size_t i = 0; i < *n; i++) {
        if (w && l[w - 1].id == l[i].id && l[w - 1].pid == l[i].pid) {
            if (l[w - 1].name != l[i].name)
                return psi_error(PS_E_INPUT,
                                 "%s:%zu:1: launch ID %lld: kernel '%.60s' here, "
                                 "'%.60s' at line %zu",
                                 path, l[i].line, l[i].id, l[i].name, l[w - 1].name, l[w - 1].line);
            for (int m = 0; m < M_N; m++)
                if (isnan(l[w - 1].v[m]))
                    l[w - 1].v[m] = l[i].v[m];
            if (!l[w - 1].gpu)
                l[w - 1].gpu = l[i].gpu;
            continue;
        }
        l[w++] = l[i];
    }
    *n = w;
    return PS_OK;
}

/* Choose the (process, device) with the most kernel time, or the ones the
 * caller named: ls->take[i] (allocated here, the caller's) says whether
 * launch i is taken. */
static int choose_group(const char *path, launches_t *ls, const ps_import_params_t *p, psi_strpool_t *pool,
                        ps_import_info_t *info)
{
    const launch_t *l = ls->l;
    size_t n = ls->n;
    import_tallies_t ts = {0};
    const char **key = psi_malloc(sizeof *key * (n ? n : 1));
    int *take = psi_calloc(n ? n : 1, sizeof *take);
    int *taken = NULL;
    int rc = key && take ? PS_OK : PS_E_NOMEM;
    for (size_t i = 0; i < n && rc == PS_OK; i++) {
        char buf[160];
        snprintf(buf, sizeof buf, "%s%s%s%s%s", *l[i].pid ? "process " : "", l[i].pid,
                 *l[i].pid && *l[i].dev ? " " : "", *l[i].dev ? "device " : "", l[i].dev);
        if (!*buf)
            snprintf(buf, sizeof buf, "no process or device column");
        key[i] = psi_strpool_intern(pool, buf);
        rc = key[i] ? psi_import_tally_add(&ts, key[i], l[i].v[M_TIME], 0) : PS_E_NOMEM;
    }
    if (rc == PS_OK && !(taken = psi_calloc(ts.n ? ts.n : 1, sizeof *taken)))
        rc = PS_E_NOMEM;
    size_t best = SIZE_MAX;
    double best_ns = -1;
    for (size_t g = 0; g < ts.n && rc == PS_OK; g++) {
        /* The group's process and device, from its first launch. */
        size_t i = 0;
        while (key[i] != ts.t[g].key)
            i++;
        if ((p->process && strcmp(p->process, l[i].pid) != 0) ||
            (p->device && strcmp(p->device, l[i].dev) != 0))
            continue;
        if (ts.t[g].ns > best_ns) {
            best_ns = ts.t[g].ns;
            best = g;
        }
    }
    if (rc == PS_OK && best == SIZE_MAX && n) {
        char have[256] = "";
        for (size_t g = 0; g < ts.n; g++)
            psi_import_list(have, sizeof have, ts.t[g].key);
        rc = psi_error(PS_E_INPUT, "%s: no launches of %s%s%s%s%s (the report has %s)", path,
                       p->process ? "process " : "", p->process ? p->process : "", p->process && p->device ? " " : "",
                       p->device ? "device " : "", p->device ? p->device : "", have);
    }
    if (rc == PS_OK && n) {
        taken[best] = 1;
        for (size_t i = 0; i < n; i++)
            take[i] = key[i] == ts.t[best].key;
        if (info && ts.n > 1) {
            snprintf(info->taken, sizeof info->taken, "%s", ts.t[best].key);
            psi_import_tally_left(&ts, NULL, taken, info);
        }
    }
    free(key);
    free(taken);
    psi_import_tallies_free(&ts);
    if (rc != PS_OK) {
        free(take);
        return rc;
    }
    ls->take = take;
    return PS_OK;
}

/* Every launch has a positive duration; DRAM bytes come from the read and
 * write bytes, or from the rate, where the report has no total. */
static int complete_launches(const char *path, const header_t *h, launch_t *launch, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        launch_t *l = &launch[i];
        if (isnan(l->v[M_TIME]) || l->v[M_TIME] <= 0)
            return psi_error(PS_E_INPUT,
                             "%s:%zu:%d: %s (launch ID %lld, %.60s): the kernel has no "
                             "positive duration%s",
                             path, l->line, h->details ? h->value + 1 : h->col[M_TIME] + 1, metric_label[M_TIME], l->id,
                             l->name,
                             h->details && isnan(l->v[M_TIME]) ? " (no Duration or gpu__time_duration.sum row: "
                                                                 "profile with --section SpeedOfLight or --metrics "
                                                                 "gpu__time_duration.sum)"
                                                               : "");
        if (isnan(l->v[M_DRAM]) && !isnan(l->v[M_DRAM_READ]) && !isnan(l->v[M_DRAM_WRITE]))
            l->v[M_DRAM] = l->v[M_DRAM_READ] + l->v[M_DRAM_WRITE];
        if (isnan(l->v[M_DRAM]) && !isnan(l->v[M_DRAM_RATE]))
            l->v[M_DRAM] = l->v[M_DRAM_RATE] * l->v[M_TIME] * 1e-9;
    }
    return PS_OK;
}

/* The taken launches, in order, as operators of t with their counters. */
static int add_launches(ps_ops_t *t, const ps_import_params_t *q, const launches_t *ls)
{
    const launch_t *launch = ls->l;
    const int *take = ls->take;
    int op = 0, rc = PS_OK;
    for (size_t i = 0; i < ls->n && rc == PS_OK; i++) {
        const double *v = launch[i].v;
        psi_counters_t c = {v[M_DRAM], v[M_L2], v[M_LONG_SB], v[M_LG], v[M_MIO], v[M_SM], v[M_MEM]};
        if (take[i])
            rc = psi_import_add(t, q, op++, launch[i].name, v[M_TIME], &c);
    }
    return rc;
}

/* Frees what ls holds (not ls). */
static void launches_free(launches_t *ls)
{
    free(ls->l);
    free(ls->take);
}

int psi_import_ncu_csv(psi_csv_t *csv, const ps_import_params_t *p, ps_ops_t **out, ps_import_info_t *info)
{
    *out = NULL;
    int rc = psi_import_check_params(p);
    if (rc != PS_OK)
        return rc;
    const char *path = psi_csv_path(csv);
    psi_csv_lf_lines(csv);
    header_t h = {0};
    ncu_said_t said = {0};
    if ((rc = find_header(csv, &h, &said)) < 0)
        return rc;
    if (rc == 0)
        return no_header_error(path, &said);

    psi_strpool_t *pool = psi_strpool_new();
    ps_ops_t *t = ps_ops_new();
    launches_t ls = {NULL, 0, NULL};
    if (!pool || !t) {
        rc = PS_E_NOMEM;
        goto done;
    }
    if ((rc = read_rows(csv, &h, pool, &said, &ls.l, &ls.n)) != PS_OK)
        goto done;
    if (ls.n == 0 && (said.errors || said.warnings)) {
        rc = psi_error(PS_E_INPUT, "%s: no kernels found; ncu said: %s", path,
                       said.errors ? said.first_error : said.first_warning);
        goto done;
    }
    if ((rc = merge_ids(path, h.details, ls.l, &ls.n)) != PS_OK)
        goto done;
    if ((rc = complete_launches(path, &h, ls.l, ls.n)) != PS_OK)
        goto done;
    if ((rc = choose_group(path, &ls, p, pool, info)) != PS_OK)
        goto done;
    const char *file_gpu = NULL;
    for (size_t i = 0; i < ls.n && !file_gpu; i++)
        if (ls.take[i])
            file_gpu = ls.l[i].gpu;
    ps_import_params_t q;
    if (ls.n && (rc = psi_import_resolve_gpu(p, file_gpu, &q, info)) != PS_OK)
        goto done;
    if ((rc = add_launches(t, &q, &ls)) != PS_OK)
        goto done;
    if (info) {
        snprintf(info->format, sizeof info->format, "ncu %s page", h.details ? "details" : "raw");
        info->text_lines = said.text;
    }
    if (said.errors)
        psi_log(PS_LOG_WARN, "import: %s: ncu said: %s%s", path, said.first_error,
                said.errors > 1 ? " (and more ==ERROR== lines)" : "");
    rc = psi_import_finish(&t, path, out, info);
done:
    ps_ops_free(t);
    psi_strpool_free(pool);
    launches_free(&ls);
    return rc < 0 ? rc : PS_OK;
}

int psi_import_ncu_file(const char *path, const ps_import_params_t *p, ps_ops_t **out, ps_import_info_t *info)
{
    *out = NULL;
    int rc = psi_import_check_params(p);
    if (rc != PS_OK)
        return rc;
    psi_csv_t *csv = NULL;
    rc = psi_csv_open(path, &csv);
    if (rc == PS_OK)
        rc = psi_import_ncu_csv(csv, p, out, info);
    psi_csv_close(csv);
    return rc;
}
