/* pairsight import nsys (src/profile/import_nsys.c) on tests/data/nsys_tiny.sqlite
 * (tests/data/nsys_fixture.py: NVIDIA's documented export schema) and on
 * copies of it broken one way each: every refusal names the table and the
 * row. */
#include "pairsight.h"
#include "profile/profile_internal.h"

#include <sqlite3.h>

#include "testhelp.h"

#define FIXTURE "tests/data/nsys_tiny.sqlite"

static char dir[64];

static const char *tmp(const char *name) { return th_path(dir, name); }

/* A copy of the fixture at tmp(name) with sql applied (NULL: none). */
static const char *variant(const char *name, const char *sql)
{
    const char *path = tmp(name);
    FILE *in = fopen(FIXTURE, "rb"), *out = fopen(path, "wb");
    CHECK(in && out);
    char buf[8192];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0)
        CHECK(fwrite(buf, 1, n, out) == n);
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    if (sql) {
        sqlite3 *db = NULL;
        char *err = NULL;
        CHECK(sqlite3_open(path, &db) == SQLITE_OK);
        CHECK_MSG(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql, err ? err : "");
        sqlite3_free(err);
        sqlite3_close(db);
    }
    return path;
}

static ps_import_params_t params(void)
{
    ps_import_params_t p = ps_import_default_params();
    p.model = "tiny";
    p.batch = 8;
    p.tpcs = 54;
    return p;
}

static void test_nvtx_passes_and_medians(void)
{
    ps_import_params_t p = params();
    ps_ops_t *t = NULL;
    ps_import_info_t info;
    CHECK_OK(ps_import_run("nsys", FIXTURE, &p, &t, &info));
    CHECK(t && t->n == 6);
    if (t && t->n == 6) {
        CHECK(strcmp(t->rows[0].gpu, "A100-SXM4-40GB") == 0); /* TARGET_INFO_GPU through the catalog */
        CHECK(strncmp(t->rows[0].name, "void cudnn::ops::nchwToNhwcKernel<", 34) == 0);
        /* median of 2300 x (1.00, 1.30, 0.98, 1.02, 1.01): the warm-up pass is left out */
        CHECK_NEAR(t->rows[5].duration_ns, 2323, 0);
        CHECK_NEAR(t->rows[1].duration_ns, 41612, 0);
    }
    CHECK_MSG(strstr(info.format, "NVTX range 'forward': 5 passes of 6 kernels"), "%s", info.format);
    CHECK_MSG(strstr(info.taken, "process 4242 device 0 stream 7"), "%s", info.taken);
    CHECK_MSG(strstr(info.skipped, "stream 13: 1 kernels") && strstr(info.skipped, "process 77: 3 kernels") &&
                  strstr(info.skipped, "1 passes of another kernel sequence"),
              "%s", info.skipped);
    CHECK(strcmp(info.gpu_in_file, "NVIDIA A100-SXM4-40GB") == 0);
    ps_ops_free(t);
}

/* Without NVTX: the period of the kernel names, the warm-up pass before it. */
static void test_period_without_nvtx(void)
{
    ps_import_params_t p = params();
    ps_ops_t *t = NULL;
    ps_import_info_t info;
    CHECK_OK(ps_import_run("nsys", variant("no_nvtx.sqlite", "DROP TABLE NVTX_EVENTS"), &p, &t, &info));
    CHECK(t && t->n == 6);
    if (t && t->n == 6)
        CHECK_NEAR(t->rows[5].duration_ns, 2323, 0);
    CHECK_MSG(strstr(info.format, "kernel-name period 6: 5 passes"), "%s", info.format);
    CHECK_MSG(strstr(info.skipped, "7 kernels before the repeated passes (warm-up)"), "%s", info.skipped);
    ps_ops_free(t);
    /* one stream of one process that never repeats: one pass */
    p.process = "77";
    p.stream = "7";
    CHECK_OK(ps_import_run("nsys", tmp("no_nvtx.sqlite"), &p, &t, &info));
    CHECK(t && t->n == 1);
    ps_ops_free(t);
}

/* With the list: one row per operator (the CLI's --oplist), and an engine
 * that fused the norm and relu into the conv refused at the first mismatch. */
static void test_oplist_alignment(void)
{
    ps_import_params_t p = params();
    ps_ops_t *t = NULL, *ops = NULL;
    ps_oplist_t *l = NULL;
    CHECK_OK(ps_oplist_read("tests/data/nsys_tiny.oplist", &l));
    CHECK_OK(ps_import_run("nsys", FIXTURE, &p, &t, NULL));
    CHECK_OK(ps_ops_twin_scale(t, "tiny", 8, 54, l, &p.tpcs, 1, &ops));
    CHECK(ops && ops->n == 5 && strcmp(ops->rows[0].name, "conv1") == 0);
    if (ops && ops->n == 5)
        CHECK_NEAR(ops->rows[0].duration_ns, 3131 + 41612, 0); /* the layout transform joins its conv */
    ps_ops_free(t);
    ps_ops_free(ops);
    const char *fused =
        variant("fused.sqlite", "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE demangledName IN (SELECT id FROM "
                                "StringIds WHERE value LIKE '%bn_fw_inf%' OR value LIKE '%clamp_min%');");
    t = ops = NULL;
    CHECK_OK(ps_import_run("nsys", fused, &p, &t, NULL));
    CHECK(t && ps_ops_twin_scale(t, "tiny", 8, 54, l, &p.tpcs, 1, &ops) == PS_E_MISMATCH && !ops);
    CHECK_MSG(strstr(ps_last_error(), "kernel 2 ") && strstr(ps_last_error(), "does not fit operator 1 'bn1'"), "%s",
              ps_last_error());
    ps_ops_free(t);
    ps_oplist_free(l);
}

/* Each broken report is refused with the table and the row. */
static void test_refusals_name_table_and_row(void)
{
    static const struct {
        const char *sql, *want;
        int rc;
    } bad[] = {
        {"DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL",
         "no CUPTI_ACTIVITY_KIND_KERNEL table: the report holds no CUDA kernels", PS_E_INPUT},
        {"DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_KERNEL is empty", PS_E_INPUT},
        {"DROP TABLE StringIds", "no StringIds table", PS_E_INPUT},
        {"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 5 WHERE rowid = 5",
         "CUPTI_ACTIVITY_KIND_KERNEL row 5: start", PS_E_INPUT},
        {"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + 4000000000000 WHERE rowid = 6",
         "CUPTI_ACTIVITY_KIND_KERNEL row 6: start", PS_E_INPUT},
        {"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 99999 WHERE rowid = 3",
         "CUPTI_ACTIVITY_KIND_KERNEL row 3: demangledName 99999 is not in StringIds", PS_E_INPUT},
        {"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = 'seven' WHERE rowid = 4",
         "CUPTI_ACTIVITY_KIND_KERNEL row 4: streamId is not an integer", PS_E_INPUT},
        {"UPDATE NVTX_EVENTS SET end = start - 1 WHERE rowid = 2", "NVTX_EVENTS row 2: end", PS_E_INPUT},
    };
    ps_import_params_t p = params();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ps_ops_t *t = NULL;
        int rc = ps_import_run("nsys", variant("bad.sqlite", bad[i].sql), &p, &t, NULL);
        CHECK_MSG(rc == bad[i].rc && !t && strstr(ps_last_error(), bad[i].want), "case %zu: rc %d: %s", i, rc,
                  ps_last_error());
        ps_ops_free(t);
    }
    ps_ops_t *t = NULL;
    FILE *f = fopen(tmp("report.nsys-rep"), "w");
    if (f) {
        fputs("not a database\n", f);
        fclose(f);
    }
    CHECK(ps_import_run("nsys", tmp("report.nsys-rep"), &p, &t, NULL) == PS_E_INPUT && !t);
    CHECK(strstr(ps_last_error(), "not an SQLite database") != NULL);
    p.stream = "99";
    CHECK(ps_import_run("nsys", FIXTURE, &p, &t, NULL) == PS_E_INPUT && !t);
    CHECK_MSG(strstr(ps_last_error(), "no kernels of stream 99 (streams: 7, 13)"), "%s", ps_last_error());
    p.stream = NULL;
    p.gpu = "h100";
    CHECK(ps_import_nsys(FIXTURE, &p, &t) == PS_E_INPUT && !t); /* the report names an A100 */
    CHECK(strstr(ps_last_error(), "NVIDIA A100-SXM4-40GB") != NULL);
}

/* A real export (pipit's test data, tests/data/nsys_pipit_saxpy.LICENSE):
 * nsys's own column layout, NVTX names in text and through textId, a
 * globalTid with bits above the PID. */
static void test_real_export(void)
{
    ps_import_params_t p = params();
    p.model = "saxpy";
    p.batch = 1;
    ps_ops_t *t = NULL;
    ps_import_info_t info;
    CHECK_OK(ps_import_run("nsys", "tests/data/nsys_pipit_saxpy.sqlite", &p, &t, &info));
    CHECK(t && t->n == 1);
    if (t && t->n == 1) {
        CHECK(strcmp(t->rows[0].name, "saxpy(double *, double *, double *, double, int)") == 0);
        CHECK(strcmp(t->rows[0].gpu, "A100-SXM4-40GB") == 0);
        /* the five kernels: 17700808 17704808 17713960 17720488 17733416 ns */
        CHECK_NEAR(t->rows[0].duration_ns, 17713960, 0);
    }
    CHECK_MSG(strstr(info.format, "NVTX range 'saxpy': 5 passes of 1 kernels"), "%s", info.format);
    CHECK_MSG(strstr(info.taken, "process 1230493 device 0 stream 7"), "%s", info.taken);
    ps_ops_free(t);
}

static void setup(void) { th_tmpdir_make(dir, sizeof dir, "ps_test_nsys"); }
static void teardown(void) { th_tmpdir_remove(dir); }

TH_MAIN(TEST(setup), TEST(test_nvtx_passes_and_medians), TEST(test_period_without_nvtx), TEST(test_oplist_alignment),
        TEST(test_refusals_name_table_and_row), TEST(test_real_export), TEST(teardown))
