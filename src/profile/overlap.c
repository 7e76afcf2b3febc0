/* overlap.csv: reader, checks and writer (FORMATS.md, "overlap.csv"). */
#include "profile/overlap.h"

#include "profile/gpu.h"
#include "profile/profile_internal.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const psi_overlap_columns[] = {"experiment", "gpu",     "setting", "mechanism", "k",      "slot",
                                           "model",      "batch",   "seq_len", "op_start",  "op_end", "model_ops",
                                           "median_us",  "mean_us", "std_us",  NULL};
enum {
    C_EXP,
    C_GPU,
    C_SET,
    C_MECH,
    C_K,
    C_SLOT,
    C_MODEL,
    C_BATCH,
    C_SEQ,
    C_START,
    C_END,
    C_OPS,
    C_MED,
    C_MEAN,
    C_STD,
    C_N
};

psi_overlap_t *psi_overlap_new(void)
{
    psi_overlap_t *t = psi_calloc(1, sizeof *t);
    if (t && !(t->pool = psi_strpool_new())) {
        free(t);
        return NULL;
    }
    return t;
}

void psi_overlap_free(psi_overlap_t *t)
{
    if (!t)
        return;
    free(t->exps);
    psi_strpool_free(t->pool);
    free(t);
}

int psi_ov_active(const psi_ov_exp_t *e)
{
    int n = 0;
    for (int s = 0; s < e->k; s++)
        n += e->slot[s].op_end > e->slot[s].op_start;
    return n;
}

/* Whether gpu is a name overlap.csv accepts: a catalog name or alias, or
 * A100-40GB (an A100 40 GB whose form factor the source does not state). */
static int psi_overlap_gpu_ok(const char *gpu)
{
    return strcasecmp(gpu, "A100-40GB") == 0 || psi_gpu_find(gpu) != NULL;
}

static const char *intern(psi_overlap_t *t, const char *s) { return s ? psi_strpool_intern(t->pool, s) : NULL; }

int psi_overlap_add(psi_overlap_t *t, const psi_ov_exp_t *e)
{
    if (psi_array_grow((void **)&t->exps, t->n, &t->cap, sizeof *t->exps, 1024))
        return PS_E_NOMEM;
    psi_ov_exp_t c = *e;
    c.id = intern(t, e->id);
    c.gpu = intern(t, e->gpu);
    c.setting = intern(t, e->setting);
    c.mechanism = intern(t, e->mechanism);
    for (int s = 0; s < e->k; s++)
        c.slot[s].model = intern(t, e->slot[s].model);
    if (!c.id || !c.gpu || !c.setting || !c.mechanism)
        return PS_E_NOMEM;
    t->exps[t->n++] = c;
    return PS_OK;
}

/* ---- reading ---- */

typedef struct {
    const char *model; /* pooled */
    int ops;
    size_t line;
} model_ops_t;

typedef struct {
    psi_csv_t *csv;
    model_ops_t *models; /* the group count of each model, as first read */
    size_t n_models, models_cap;
    int col[C_N];
    psi_overlap_t *t;
    size_t *slot_of; /* open-addressing map experiment id -> index + 1 */
    size_t mask;
    unsigned *seen; /* per experiment: bit s set when slot s + 1 was read */
    size_t seen_cap;
} reader_t;

/* "FILE:LINE:COLUMN: column: why[what]" for column c of the current row. */
static int fail(reader_t *r, int c, const char *why, const char *what)
{
    return psi_error(PS_E_INPUT, "%s:%zu:%d: %s: %s%s", psi_csv_path(r->csv), psi_csv_field_line(r->csv, r->col[c]),
                     r->col[c] + 1, psi_overlap_columns[c], why, what ? what : "");
}

static int get_int(reader_t *r, int c, int lo, int hi, int *out)
{
    const char *s = psi_csv_field(r->csv, r->col[c]);
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) {
        char why[96];
        snprintf(why, sizeof why, "'%.40s' is not an integer in %d..%d", s, lo, hi);
        return fail(r, c, why, NULL);
    }
    *out = (int)v;
    return PS_OK;
}

static int get_double(reader_t *r, int c, int optional, int positive, double *out)
{
    if (r->col[c] < 0) {
        *out = NAN;
        return PS_OK;
    }
    const char *s = psi_csv_field(r->csv, r->col[c]), *why = NULL;
    if (!*s && optional) {
        *out = NAN;
        return PS_OK;
    }
    if (psi_parse_double(s, out, &why) != 0)
        return fail(r, c, why, NULL);
    if (positive ? !(*out > 0) : !(*out >= 0))
        return fail(r, c, positive ? "must be > 0" : "must be >= 0", NULL);
    return PS_OK;
}

static int get_text(reader_t *r, int c, const char **out)
{
    const char *s = psi_csv_field(r->csv, r->col[c]);
    if (!*s)
        return fail(r, c, "empty", NULL);
    if (!(*out = psi_strpool_intern(r->t->pool, s)))
        return PS_E_NOMEM;
    return PS_OK;
}

static int find_columns(reader_t *r)
{
    for (int c = 0; c < C_N; c++) {
        r->col[c] = psi_csv_find(r->csv, psi_overlap_columns[c]);
        if (r->col[c] < 0 && c < C_MEAN)
            return psi_error(PS_E_INPUT, "%s:1:1: not an overlap.csv table: no column '%s'", psi_csv_path(r->csv),
                             psi_overlap_columns[c]);
    }
    return PS_OK;
}

/* The index of experiment id, creating it (from the current row) when new. */
static int lookup(reader_t *r, const char *id, size_t *out, int *fresh)
{
    if (r->t->n * 2 >= r->mask) {
        size_t nm = r->mask ? 2 * r->mask + 1 : 4095;
        size_t *m = psi_calloc(nm + 1, sizeof *m);
        if (!m)
            return PS_E_NOMEM;
        for (size_t i = 0; i < r->t->n; i++) {
            size_t h = psi_hash_bytes(r->t->exps[i].id, strlen(r->t->exps[i].id)) & nm;
            while (m[h])
                h = (h + 1) & nm;
            m[h] = i + 1;
        }
        free(r->slot_of);
        r->slot_of = m;
        r->mask = nm;
    }
    size_t h = psi_hash_bytes(id, strlen(id)) & r->mask;
    for (; r->slot_of[h]; h = (h + 1) & r->mask)
        if (r->t->exps[r->slot_of[h] - 1].id == id) { /* interned: equal pointers */
            *out = r->slot_of[h] - 1;
            *fresh = 0;
            return PS_OK;
        }
    psi_ov_exp_t e;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.line = psi_csv_line(r->csv);
    if (psi_array_grow((void **)&r->t->exps, r->t->n, &r->t->cap, sizeof e, 1024) ||
        psi_array_grow((void **)&r->seen, r->t->n, &r->seen_cap, sizeof *r->seen, 1024))
        return PS_E_NOMEM;
    r->t->exps[r->t->n] = e;
    r->seen[r->t->n] = 0;
    r->slot_of[h] = ++r->t->n;
    *out = r->t->n - 1;
    *fresh = 1;
    return PS_OK;
}

/* The longest time a row may give: one hour, as an ops.csv duration
 * (PSI_MAX_OP_NS). A run of operator ranges takes milliseconds; beyond this
 * a time is a damaged file (1e308 passed `check` and then failed inside
 * XGBoost with no file or line). */
#define OV_MAX_US (PSI_MAX_OP_NS / 1e3)

/* A setting is `dedicated` or `mig-` and a MIG profile name: a digit, then
 * digits, lower-case letters, '.' and '+' (2g.10gb, 1g.5gb+me, 1c.3g.20gb),
 * at most 32 bytes: never a path ("mig-../../etc") or markup. */
static int setting_ok(const char *s)
{
    if (strcmp(s, "dedicated") == 0)
        return 1;
    if (strncmp(s, "mig-", 4) != 0 || !(s[4] >= '0' && s[4] <= '9') || strlen(s) > 36 || strstr(s, ".."))
        return 0;
    for (const char *p = s + 4; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || *p == '.' || *p == '+'))
            return 0;
    return 1;
}

/* The columns every row of an experiment shares. */
static int read_shared(reader_t *r, psi_ov_exp_t *x)
{
    int rc;
    if ((rc = get_text(r, C_GPU, &x->gpu)) || (rc = get_text(r, C_SET, &x->setting)) ||
        (rc = get_text(r, C_MECH, &x->mechanism)) || (rc = get_int(r, C_K, 2, PSI_OV_MAX_K, &x->k)) ||
        (rc = get_double(r, C_MED, 0, 1, &x->median_us)) || (rc = get_double(r, C_MEAN, 1, 0, &x->mean_us)) ||
        (rc = get_double(r, C_STD, 1, 0, &x->std_us)))
        return rc;
    if (!psi_overlap_gpu_ok(x->gpu))
        return fail(r, C_GPU, "not a GPU of the catalog (nor A100-40GB): ", x->gpu);
    if (strcmp(x->mechanism, "mps") != 0)
        return fail(r, C_MECH, "must be mps, not ", x->mechanism);
    if (!setting_ok(x->setting))
        return fail(r, C_SET,
                    "must be dedicated or mig-<profile> (a MIG profile such as 2g.10gb, 1g.5gb+me: "
                    "digits, lower-case letters, '.' and '+'), not ",
                    x->setting);
    const double t[3] = {x->median_us, x->mean_us, x->std_us};
    for (int i = 0; i < 3; i++)
        if (t[i] > OV_MAX_US) {
            char why[160];
            snprintf(why, sizeof why, "%g us is over one hour (%.0f us): no co-run of operator ranges takes that long",
                     t[i], OV_MAX_US);
            return fail(r, C_MED + i, why, NULL);
        }
    return PS_OK;
}

static int same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static int check_shared(reader_t *r, const psi_ov_exp_t *e, const psi_ov_exp_t *x)
{
    int c = e->gpu != x->gpu                    ? C_GPU
            : e->setting != x->setting          ? C_SET
            : e->mechanism != x->mechanism      ? C_MECH
            : e->k != x->k                      ? C_K
            : !same(e->median_us, x->median_us) ? C_MED
            : !same(e->mean_us, x->mean_us)     ? C_MEAN
            : !same(e->std_us, x->std_us)       ? C_STD
                                                : -1;
    if (c < 0)
        return PS_OK;
    char why[160];
    snprintf(why, sizeof why, "differs from the value on line %zu of experiment '%.60s' (one value per experiment)",
             e->line, e->id);
    return fail(r, c, why, NULL);
}

/* A model has one group count: model_ops of the current row's slot s
 * against the first row of the same model (kept in r->models). */
static int check_model_ops(reader_t *r, const psi_ov_slot_t *s)
{
    for (size_t i = 0; i < r->n_models; i++)
        if (r->models[i].model == s->model) {
            if (r->models[i].ops == s->model_ops)
                return PS_OK;
            char why[200];
            snprintf(why, sizeof why, "%d, but line %zu gives model '%.60s' %d groups (one model, one count)",
                     s->model_ops, r->models[i].line, s->model, r->models[i].ops);
            return fail(r, C_OPS, why, NULL);
        }
    void *grown = r->models;
    if (psi_array_grow(&grown, r->n_models, &r->models_cap, sizeof *r->models, 16))
        return PS_E_NOMEM;
    r->models = grown;
    r->models[r->n_models++] = (model_ops_t){s->model, s->model_ops, psi_csv_line(r->csv)};
    return PS_OK;
}

static int read_slot(reader_t *r, psi_ov_slot_t *s)
{
    int rc;
    if ((rc = get_text(r, C_MODEL, &s->model)) || (rc = get_int(r, C_BATCH, 1, INT_MAX, &s->batch)) ||
        (rc = get_int(r, C_SEQ, 0, INT_MAX, &s->seq_len)) || (rc = get_int(r, C_OPS, 1, INT_MAX, &s->model_ops)) ||
        (rc = get_int(r, C_START, 0, s->model_ops, &s->op_start)) ||
        (rc = get_int(r, C_END, s->op_start, s->model_ops, &s->op_end)))
        return rc;
    return PS_OK;
}

static int read_record(reader_t *r)
{
    const char *id = NULL;
    psi_ov_exp_t x;
    psi_ov_slot_t s;
    size_t i;
    int fresh, slot, rc;
    memset(&x, 0, sizeof x);
    if ((rc = get_text(r, C_EXP, &id)) || (rc = read_shared(r, &x)) || (rc = get_int(r, C_SLOT, 1, x.k, &slot)) ||
        (rc = read_slot(r, &s)) || (rc = lookup(r, id, &i, &fresh)))
        return rc;
    psi_ov_exp_t *e = &r->t->exps[i];
    if (fresh) {
        x.id = e->id;
        x.line = e->line;
        *e = x;
    } else if ((rc = check_shared(r, e, &x)) != PS_OK)
        return rc;
    if (r->seen[i] & (1u << (slot - 1)))
        return fail(r, C_SLOT, "given twice in experiment ", id);
    if ((rc = check_model_ops(r, &s)) != PS_OK)
        return rc;
    r->seen[i] |= 1u << (slot - 1);
    e->slot[slot - 1] = s;
    return PS_OK;
}

/* The times of one experiment agree with each other: for any sample of
 * times, |mean - median| <= std, and with every time >= 0 at least half of
 * them are >= the median, so mean >= median / 2 (used where std is not
 * given). A relative 1e-9 absorbs the rounding of the printed values. */
static int check_times(reader_t *r, const psi_ov_exp_t *e)
{
    double med = e->median_us, mean = e->mean_us, sd = e->std_us, tol = 1e-9 * med;
    const char *why = NULL;
    if (!isnan(mean) && !isnan(sd) && fabs(mean - med) > sd + tol)
        why = "mean and median differ by more than std (impossible for one set of runs)";
    else if (!isnan(mean) && mean < med / 2 - tol)
        why = "mean below half the median (impossible for times >= 0)";
    if (!why)
        return PS_OK;
    return psi_error(PS_E_INPUT, "%s:%zu:%d: mean_us: experiment '%.60s': median %g, mean %g, std %g us: %s",
                     psi_csv_path(r->csv), e->line, r->col[C_MEAN] + 1, e->id, med, mean, sd, why);
}

/* Every experiment has all of its slots 1..k, runs something, and has
 * consistent times; a model has one group count (model_ops) in the file. */
static int check_complete(reader_t *r)
{
    const char *path = psi_csv_path(r->csv);
    for (size_t i = 0; i < r->t->n; i++) {
        const psi_ov_exp_t *e = &r->t->exps[i];
        if (r->seen[i] != (1u << e->k) - 1)
            return psi_error(PS_E_INPUT, "%s:%zu:%d: experiment '%s' has k=%d but not a row for each slot 1..%d", path,
                             e->line, r->col[C_SLOT] + 1, e->id, e->k, e->k);
        if (psi_ov_active(e) == 0)
            return psi_error(PS_E_INPUT,
                             "%s:%zu:%d: experiment '%s': no slot runs anything (op_start = op_end in every slot): "
                             "there is nothing its time measures",
                             path, e->line, r->col[C_START] + 1, e->id);
        int rc = check_times(r, e);
        if (rc != PS_OK)
            return rc;
    }
    return PS_OK;
}

int ps_table_is_overlap(const char *path)
{
    if (!path)
        return psi_error(PS_E_ARG, "ps_table_is_overlap: NULL path");
    psi_csv_t *csv = NULL;
    int rc = psi_csv_open(path, &csv);
    if (rc)
        return rc;
    rc = psi_csv_next(csv);
    int yes = rc > 0 && psi_csv_find(csv, "op_start") >= 0 && psi_csv_find(csv, "median_us") >= 0;
    psi_csv_close(csv);
    return rc < 0 ? rc : yes;
}

int psi_overlap_load(const char *path, psi_overlap_t **out)
{
    *out = NULL;
    reader_t r;
    memset(&r, 0, sizeof r);
    int rc = psi_csv_open(path, &r.csv);
    if (rc)
        return rc;
    locale_t loc = psi_c_numeric_begin();
    r.t = psi_overlap_new();
    rc = r.t ? psi_csv_next(r.csv) : PS_E_NOMEM;
    rc = rc > 0 ? find_columns(&r) : rc < 0 ? rc : psi_error(PS_E_INPUT, "%s:1:1: empty file", path);
    for (int more = rc == PS_OK; more;) {
        int n = psi_csv_next(r.csv);
        if (n <= 0)
            rc = n;
        else if (psi_csv_nfields(r.csv) > 1 || psi_csv_field_len(r.csv, 0) > 0)
            rc = read_record(&r);
        more = n > 0 && rc == PS_OK;
    }
    if (rc == PS_OK && r.t->n == 0)
        rc = psi_error(PS_E_INPUT, "%s: no experiments", path);
    if (rc == PS_OK)
        rc = check_complete(&r);
    psi_c_numeric_end(loc);
    psi_csv_close(r.csv);
    free(r.slot_of);
    free(r.seen);
    free(r.models);
    if (rc != PS_OK) {
        psi_overlap_free(r.t);
        return rc;
    }
    *out = r.t;
    return PS_OK;
}

/* ---- writing ---- */

static void put_num(FILE *f, double v)
{
    if (!isnan(v))
        fprintf(f, "%.17g", v);
}

static void write_rows(FILE *f, const psi_overlap_t *t)
{
    for (int c = 0; psi_overlap_columns[c]; c++)
        fprintf(f, "%s%s", c ? "," : "", psi_overlap_columns[c]);
    fputc('\n', f);
    for (size_t i = 0; i < t->n; i++) {
        const psi_ov_exp_t *e = &t->exps[i];
        for (int s = 0; s < e->k; s++) {
            const psi_ov_slot_t *x = &e->slot[s];
            psi_csv_put_field(f, e->id);
            fputc(',', f);
            psi_csv_put_field(f, e->gpu);
            fputc(',', f);
            psi_csv_put_field(f, e->setting);
            fprintf(f, ",%s,%d,%d,", e->mechanism, e->k, s + 1);
            psi_csv_put_field(f, x->model);
            fprintf(f, ",%d,%d,%d,%d,%d,", x->batch, x->seq_len, x->op_start, x->op_end, x->model_ops);
            put_num(f, e->median_us);
            fputc(',', f);
            put_num(f, e->mean_us);
            fputc(',', f);
            put_num(f, e->std_us);
            fputc('\n', f);
        }
    }
}

int psi_overlap_save(const psi_overlap_t *t, const char *path)
{
    psi_atomic_t *a = NULL;
    int rc = psi_atomic_open(path, &a);
    if (rc)
        return rc;
    locale_t loc = psi_c_numeric_begin();
    write_rows(psi_atomic_stream(a), t);
    psi_c_numeric_end(loc);
    return psi_atomic_commit(a);
}
