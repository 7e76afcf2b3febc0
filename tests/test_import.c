/* The importers against the fixtures in tests/data, written from the
 * documented formats (ncu --csv --page raw with and without --print-units
 * base; PyTorch's export_chrome_trace), and against broken inputs. */
#include "common/common.h"
#include "profile/tables.h"
#include "testhelp.h"

#include <unistd.h>

static const ps_import_params_t params = {"V100-SXM2-16GB", "bert", 8, 40, NULL};

static void test_ncu_auto_units(void)
{
    ps_ops_t *t = NULL;
    CHECK_OK(ps_import_ncu("tests/data/ncu_raw.csv", &params, &t));
    CHECK(t && t->n == 3 && t->n_groups == 1);
    if (!t || t->n != 3)
        return;
    const ps_op_row_t *r = t->rows;
    CHECK(strcmp(r[0].name, "volta_sgemm_128x64_nn") == 0);
    CHECK(strncmp(r[1].name, "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail", 90) == 0);
    CHECK(r[0].op == 0 && r[1].op == 1 && r[2].op == 2);
    CHECK(strcmp(r[2].gpu, "V100-SXM2-16GB") == 0 && strcmp(r[2].model, "bert") == 0);
    CHECK(r[2].batch == 8 && r[2].tpcs == 40);
    CHECK_NEAR(r[0].duration_ns, 134300, 1e-6);      /* 134.30 usecond */
    CHECK_NEAR(r[1].duration_ns, 2240, 1e-6);
    CHECK_NEAR(r[2].duration_ns, 900, 1e-6);
    CHECK_NEAR(r[0].c.dram_bytes, 12.58e6, 1e-3);    /* Mbyte */
    CHECK_NEAR(r[1].c.dram_bytes, 1024.5e6, 1e-3);   /* "1,024.50" Mbyte */
    CHECK_NEAR(r[0].c.l2_bytes, 5376e3, 1e-6);       /* "5,376.00" Kbyte */
    CHECK_NEAR(r[0].c.sm_pct, 88.12, 1e-12);
    CHECK_NEAR(r[0].c.mem_pct, 45.21, 1e-12);
    CHECK_NEAR(r[0].c.stall_long_scoreboard, 12.30, 1e-12);
    CHECK_NEAR(r[0].c.stall_lg_throttle, 0.51, 1e-12);
    CHECK_NEAR(r[0].c.stall_mio_throttle, 3.20, 1e-12);
    CHECK(isnan(r[1].c.stall_lg_throttle));           /* n/a */
    CHECK_NEAR(r[2].c.mem_pct, 100, 0);               /* 100.30 rounded overshoot */
    CHECK(r[0].intensity == PS_INTENSITY_NONE);
    ps_ops_free(t);
}

static void test_ncu_base_units_and_round_trip(void)
{
    ps_ops_t *t = NULL, *u = NULL;
    CHECK_OK(ps_import_ncu("tests/data/ncu_raw_base.csv", &params, &t));
    CHECK(t && t->n == 3);
    if (!t || t->n != 3)
        return;
    CHECK_NEAR(t->rows[0].duration_ns, 40123, 0);
    CHECK_NEAR(t->rows[2].duration_ns, 41000.5, 0);
    /* dram__bytes.sum is missing: read + write stand in for it. */
    CHECK_NEAR(t->rows[0].c.dram_bytes, 10240000 + 2048, 0);
    CHECK(isnan(t->rows[0].c.l2_bytes));
    CHECK(t->rows[0].name == t->rows[2].name);
    char path[] = "/tmp/ps_test_importXXXXXX";
    int fd = mkstemp(path);
    close(fd);
    CHECK_OK(ps_ops_save(t, path));
    CHECK_OK(ps_ops_load(path, &u));
    CHECK(u && u->n == 3 && u->rows[1].c.dram_bytes == t->rows[1].c.dram_bytes);
    const ps_op_group_t *g = u ? ps_ops_find(u, "V100-SXM2-16GB", "bert", 8) : NULL;
    CHECK(g && g->n_ops == 3);
    if (g)
        CHECK_NEAR(ps_group_segment_ns(g, 0, 3, 40), 40123 + 20000 + 41000.5, 1e-9);
    remove(path);
    ps_ops_free(t);
    ps_ops_free(u);
}

/* Write text to a temporary file; the caller removes it. */
static void temp_with(char *path, const char *text)
{
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

typedef struct {
    const char *text, *says; /* the file, and what the message says after its name */
} bad_input_t;

typedef int (*importer_fn)(const char *, const ps_import_params_t *, ps_ops_t **);

/* Each input must be refused as bad input, load nothing, and name itself. */
static void expect_refused(importer_fn import, const bad_input_t *bad, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char path[] = "/tmp/ps_test_importXXXXXX";
        temp_with(path, bad[i].text);
        ps_ops_t *t = (ps_ops_t *)1;
        int rc = import(path, &params, &t);
        CHECK_MSG(rc == PS_E_INPUT && t == NULL, "case %zu: rc %d", i, rc);
        char want[256];
        snprintf(want, sizeof want, "%s%s", path, bad[i].says);
        CHECK_MSG(strstr(ps_last_error(), want), "case %zu: got '%s', want '%s'", i, ps_last_error(), want);
        remove(path);
    }
}

#define NCU_HEAD "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes.sum\"\n"

static void test_ncu_errors(void)
{
    ps_ops_t *t = (ps_ops_t *)1;
    CHECK(ps_import_ncu("tests/data/ncu_no_kernels.csv", &params, &t) == PS_E_INPUT && !t);
    CHECK_MSG(strstr(ps_last_error(), "no kernels"), "%s", ps_last_error());
    const bad_input_t bad[] = {
        {NCU_HEAD "\"\",\"\",\"nsecond\",\"furlong\"\n\"0\",\"k\",\"5\",\"1\"\n", ":2:4: dram__bytes.sum: unknown unit 'furlong'"},
        {NCU_HEAD "\"0\",\"k\",\"5x\",\"1\"\n", ":2:3: gpu__time_duration.sum: '5x': not a number"},
        {NCU_HEAD "\"0\",\"k\",\"5,00\",\"1\"\n", ":2:3: gpu__time_duration.sum: '5,00': misplaced thousands separator"},
        {NCU_HEAD "\"0\",\"k\",\"5\",\"-1\"\n", ":2:4: dram__bytes.sum: '-1': negative"},
        {NCU_HEAD "\"0\",\"k\",\"n/a\",\"1\"\n", ":2:3: gpu__time_duration.sum: the kernel has no positive duration"},
        {NCU_HEAD "\"0\",\"k\",\"5\"\n", ":2:1: expected 4 fields"},
        {NCU_HEAD "\"x\",\"k\",\"5\",\"1\"\n", ":2:1: ID: 'x': not an integer"},
        {"\"ID\",\"Kernel Name\",\"dram__bytes.sum\"\n\"0\",\"k\",\"1\"\n", ":1:1: missing metric column 'gpu__time_duration.sum'"},
        {"a,b\n1,2\n", ": no Nsight Compute header"},
        {NCU_HEAD "\"0\",\"k,\"5\",\"1\"\n", ":2:2: unexpected character after closing quote"},
        /* A percentage above 100 is named at its line and column, not as
         * "ops row 1" of the output. */
        {"\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\"\n"
         "\"0\",\"k\",\"5\",\"50\"\n\"1\",\"k\",\"5\",\"188.5\"\n",
         ":3:4: sm__throughput.avg.pct_of_peak_sustained_elapsed: 188.5: a percentage above 100"},
    };
    expect_refused(ps_import_ncu, bad, PS_ARRAY_LEN(bad));
    /* Launches are ordered by ID, not by file order. */
    char path[] = "/tmp/ps_test_ncuXXXXXX";
    temp_with(path, NCU_HEAD "\"2\",\"c\",\"3\",\"\"\n\"0\",\"a\",\"1\",\"\"\n\"1\",\"b\",\"2\",\"\"\n");
    t = NULL;
    CHECK_OK(ps_import_ncu(path, &params, &t));
    CHECK(t && t->n == 3 && strcmp(t->rows[0].name, "a") == 0 && strcmp(t->rows[2].name, "c") == 0);
    CHECK(t && t->rows[1].duration_ns == 2 && isnan(t->rows[1].c.dram_bytes));
    ps_ops_free(t);
    remove(path);
    /* Parameters are checked before the file is read. */
    ps_import_params_t p = params;
    p.tpcs = 0;
    CHECK(ps_import_ncu("tests/data/ncu_raw.csv", &p, &t) == PS_E_ARG && !t);
    p = params;
    p.gpu = "";
    CHECK(ps_import_ncu("tests/data/ncu_raw.csv", &p, &t) == PS_E_ARG && !t);
    CHECK(ps_import_ncu("tests/data/does-not-exist.csv", &params, &t) == PS_E_IO && !t);
}

static void test_torch_trace(void)
{
    ps_ops_t *t = NULL;
    CHECK_OK(ps_import_torch_trace("tests/data/torch_trace.json", &params, &t));
    CHECK(t && t->n == 3);
    if (t && t->n == 3) {
        /* Stream 7 (54.75 us of kernels) beats stream 20 (30 us); by ts. */
        CHECK(strncmp(t->rows[0].name, "void at::native::vectorized_elementwise_kernel", 46) == 0);
        CHECK(strcmp(t->rows[1].name, "volta_scudnn_128x64_relu_interior_nn_v1") == 0);
        CHECK(strcmp(t->rows[2].name, "ampere_sgemm_128x64_tn") == 0);
        CHECK_NEAR(t->rows[0].duration_ns, 2500, 1e-9);
        CHECK_NEAR(t->rows[1].duration_ns, 40250, 1e-9);
        CHECK_NEAR(t->rows[2].duration_ns, 12000, 1e-9);
        CHECK(isnan(t->rows[0].c.dram_bytes));
    }
    ps_ops_free(t);
    ps_import_params_t p = params;
    p.stream = "20";
    t = NULL;
    CHECK_OK(ps_import_torch_trace("tests/data/torch_trace.json", &p, &t));
    CHECK(t && t->n == 1 && strcmp(t->rows[0].name, "ncclKernel_AllReduce_RING_LL_Sum_float") == 0);
    CHECK(t && t->rows[0].duration_ns == 30000);
    ps_ops_free(t);
    p.stream = "3";
    t = (ps_ops_t *)1;
    CHECK(ps_import_torch_trace("tests/data/torch_trace.json", &p, &t) == PS_E_INPUT && !t);
    CHECK_MSG(strstr(ps_last_error(), "no kernels on stream 3 (the busiest stream is 7)"), "%s",
              ps_last_error());
}

static void test_torch_errors(void)
{
    ps_ops_t *t = (ps_ops_t *)1;
    CHECK(ps_import_torch_trace("tests/data/torch_no_kernels.json", &params, &t) == PS_E_INPUT && !t);
    CHECK_MSG(strstr(ps_last_error(), "no kernels found"), "%s", ps_last_error());
    const bad_input_t bad[] = {
        {"{\"traceEvents\": [\n  {\"ph\": \"X\",, }\n]}", ":2:15: not valid JSON"}, /* where cJSON stops */
        {"{\"events\": []}", ": not a Chrome trace"},
        {"[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 0}]", ": event 1 (k): dur 0: must be > 0"},
        {"[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1}]", ": event 1: a kernel event needs"},
        {"", ":1:1: not valid JSON"},
    };
    expect_refused(ps_import_torch_trace, bad, PS_ARRAY_LEN(bad));
    /* A bare array of events and the old capitalised category work too. */
    char path[] = "/tmp/ps_test_torchXXXXXX";
    temp_with(path, "[{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 1.5, \"tid\": \"stream 7\"}]");
    t = NULL;
    CHECK_OK(ps_import_torch_trace(path, &params, &t));
    CHECK(t && t->n == 1 && t->rows[0].duration_ns == 1500);
    ps_ops_free(t);
    remove(path);
}

TH_MAIN(TEST(test_ncu_auto_units), TEST(test_ncu_base_units_and_round_trip), TEST(test_ncu_errors),
        TEST(test_torch_trace), TEST(test_torch_errors))
