/* The importers against the fixtures in tests/data, written from the
 * documented formats (ncu --csv --page raw with and without --print-units
 * base; PyTorch's export_chrome_trace), and against broken inputs. */
#include "common/common.h"
#include "profile/gpu.h"
#include "profile/tables.h"
#include "testhelp.h"

#include <stdlib.h>
#include <unistd.h>

static const ps_import_params_t params = {.gpu = "V100-SXM2-16GB", .model = "bert", .batch = 8, .tpcs = 40};

static void test_ncu_auto_units(void)
{
    ps_ops_t *t = NULL;
    CHECK_OK(ps_import_ncu("tests/data/ncu_raw.csv", &params, &t));
    CHECK(t && t->n == 3 && t->n_groups == 1);
    if (!t || t->n != 3)
        return;
    const psi_op_row_t *r = t->rows;
    CHECK(strcmp(r[0].name, "volta_sgemm_128x64_nn") == 0);
    CHECK(strncmp(r[1].name,
                  "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail",
                  90) == 0);
    CHECK(r[0].op == 0 && r[1].op == 1 && r[2].op == 2);
    CHECK(strcmp(r[2].gpu, "V100-SXM2-16GB") == 0 && strcmp(r[2].model, "bert") == 0);
    CHECK(r[2].batch == 8 && r[2].tpcs == 40);
    CHECK_NEAR(r[0].duration_ns, 134300, 1e-6); /* 134.30 usecond */
    CHECK_NEAR(r[1].duration_ns, 2240, 1e-6);
    CHECK_NEAR(r[2].duration_ns, 900, 1e-6);
    CHECK_NEAR(r[0].c.dram_bytes, 12.58e6, 1e-3);  /* Mbyte */
    CHECK_NEAR(r[1].c.dram_bytes, 1024.5e6, 1e-3); /* "1,024.50" Mbyte */
    CHECK_NEAR(r[0].c.l2_bytes, 5376e3, 1e-6);     /* "5,376.00" Kbyte */
    CHECK_NEAR(r[0].c.sm_pct, 88.12, 1e-12);
    CHECK_NEAR(r[0].c.mem_pct, 45.21, 1e-12);
    CHECK_NEAR(r[0].c.stall_long_scoreboard, 12.30, 1e-12);
    CHECK_NEAR(r[0].c.stall_lg_throttle, 0.51, 1e-12);
    CHECK_NEAR(r[0].c.stall_mio_throttle, 3.20, 1e-12);
    CHECK(isnan(r[1].c.stall_lg_throttle)); /* n/a */
    CHECK_NEAR(r[2].c.mem_pct, 100, 0);     /* 100.30 rounded overshoot */
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
    char path[] = "/tmp/psi_test_importXXXXXX";
    int fd = mkstemp(path);
    close(fd);
    CHECK_OK(ps_ops_save(t, path));
    CHECK_OK(ps_ops_load(path, &u));
    CHECK(u && u->n == 3 && u->rows[1].c.dram_bytes == t->rows[1].c.dram_bytes);
    const psi_op_group_t *g = u ? psi_ops_find(u, "V100-SXM2-16GB", "bert", 8) : NULL;
    CHECK(g && g->n_ops == 3);
    if (g)
        CHECK_NEAR(psi_group_segment_ns(g, 0, 3, 40), 40123 + 20000 + 41000.5, 1e-9);
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
        char path[] = "/tmp/psi_test_importXXXXXX";
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
        {NCU_HEAD "\"\",\"\",\"nsecond\",\"furlong\"\n\"0\",\"k\",\"5\",\"1\"\n",
         ":2:4: dram__bytes.sum: unknown unit 'furlong'"},
        {NCU_HEAD "\"0\",\"k\",\"5x\",\"1\"\n", ":2:3: gpu__time_duration.sum: '5x': not a number"},
        {NCU_HEAD "\"0\",\"k\",\"5,00\",\"1\"\n",
         ":2:3: gpu__time_duration.sum: '5,00': misplaced thousands separator"},
        {NCU_HEAD "\"0\",\"k\",\"5\",\"-1\"\n", ":2:4: dram__bytes.sum: '-1': negative"},
        {NCU_HEAD "\"0\",\"k\",\"n/a\",\"1\"\n",
         ":2:3: gpu__time_duration.sum (launch ID 0, k): the kernel has no positive duration"},
        {NCU_HEAD "\"0\",\"k\",\"5\"\n", ":2:1: expected 4 fields"},
        {NCU_HEAD "\"x\",\"k\",\"5\",\"1\"\n", ":2:1: ID: 'x': not an integer"},
        {"\"ID\",\"Kernel Name\",\"dram__bytes.sum\"\n\"0\",\"k\",\"1\"\n",
         ":1:1: missing metric column 'gpu__time_duration.sum'"},
        {"a,b\n1,2\n", ": no Nsight Compute header"},
        {NCU_HEAD "\"0\",\"k,\"5\",\"1\"\n", ":2:2: unexpected character after closing quote"},
        /* A percentage above 100 is named at its line and column, not as
         * "ops row 1" of the output. */
        {"\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\"\n"
         "\"0\",\"k\",\"5\",\"50\"\n\"1\",\"k\",\"5\",\"188.5\"\n",
         ":3:4: sm__throughput.avg.pct_of_peak_sustained_elapsed: 188.5: a percentage above 100"},
    };
    expect_refused(ps_import_ncu, bad, PS_ARRAY_LEN(bad));
    /* Launches are ordered by ID, not by file order (an ID may carry a
     * thousands separator). */
    char path[] = "/tmp/psi_test_ncuXXXXXX";
    temp_with(path, NCU_HEAD "\"2,000\",\"c\",\"3\",\"\"\n\"0\",\"a\",\"1\",\"\"\n\"1\",\"b\",\"2\",\"\"\n");
    t = NULL;
    CHECK_OK(ps_import_ncu(path, &params, &t));
    CHECK(t && t->n == 3 && strcmp(t->rows[0].name, "a") == 0 && strcmp(t->rows[2].name, "c") == 0);
    CHECK(t && t->rows[1].duration_ns == 2 && isnan(t->rows[1].c.dram_bytes));
    ps_ops_free(t);
    remove(path);
    /* On the raw page a row is a launch even when its ID repeats. */
    memcpy(path, "/tmp/psi_test_ncuXXXXXX", sizeof path);
    temp_with(path, NCU_HEAD "\"0\",\"a\",\"1\",\"\"\n\"0\",\"b\",\"2\",\"\"\n");
    t = NULL;
    CHECK_OK(ps_import_ncu(path, &params, &t));
    CHECK(t && t->n == 2 && strcmp(t->rows[1].name, "b") == 0);
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
    ps_import_params_t p = params;
    p.gpu = NULL; /* the A100 the trace names */
    CHECK_OK(ps_import_torch_trace("tests/data/torch_trace.json", &p, &t));
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
    p.stream = "20";
    t = NULL;
    CHECK_OK(ps_import_torch_trace("tests/data/torch_trace.json", &p, &t));
    CHECK(t && t->n == 1 && strcmp(t->rows[0].name, "ncclKernel_AllReduce_RING_LL_Sum_float") == 0);
    CHECK(t && t->rows[0].duration_ns == 30000);
    ps_ops_free(t);
    p.stream = "3";
    t = (ps_ops_t *)1;
    CHECK(ps_import_torch_trace("tests/data/torch_trace.json", &p, &t) == PS_E_INPUT && !t);
    CHECK_MSG(strstr(ps_last_error(), "no kernels on stream 3 (streams: 7, 20)"), "%s", ps_last_error());
}

static void test_torch_errors(void)
{
    ps_ops_t *t = (ps_ops_t *)1;
    CHECK(ps_import_torch_trace("tests/data/torch_no_kernels.json", &params, &t) == PS_E_INPUT && !t);
    CHECK_MSG(strstr(ps_last_error(), "no kernels found"), "%s", ps_last_error());
    const bad_input_t bad[] = {
        {"{\"traceEvents\": [\n  {\"ph\": \"X\",, }\n]}",
         ":2:14: not valid JSON (expected a member name"}, /* the second comma */
        {"[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 1e400}]",
         ": event 1 (k): dur inf us: must be in"},
        {"{\"events\": []}", ": not a Chrome trace"},
        {"[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": -1}]",
         ": event 1 (k): dur -1 us: must be in 0..3600000000"},
        {"[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1}]", ": event 1: a kernel event needs"},
        {"", ":1:1: not valid JSON"},
    };
    expect_refused(ps_import_torch_trace, bad, PS_ARRAY_LEN(bad));
    /* A bare array of events and the old capitalised category work too. */
    char path[] = "/tmp/psi_test_torchXXXXXX";
    temp_with(
        path,
        "[{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 1.5, \"tid\": \"stream 7\"}]");
    t = NULL;
    CHECK_OK(ps_import_torch_trace(path, &params, &t));
    CHECK(t && t->n == 1 && t->rows[0].duration_ns == 1500);
    ps_ops_free(t);
    remove(path);
}

/* Import with ps_import_run; gpu NULL takes the file's GPU. */
static int run(const char *format, const char *path, const char *gpu, ps_import_params_t p, ps_ops_t **t,
               ps_import_info_t *info)
{
    p.gpu = gpu;
    return ps_import_run(format, path, &p, t, info);
}

/* Case 1 and 2: the details page, pivoted by launch ID, display names and
 * units mapped; rule rows and rule columns (ncu 2023+) and the older layout
 * with "Kernel Time", "SM [%]", "Memory [%]" and CRLF. */
static void test_ncu_details(void)
{
    ps_ops_t *t = NULL;
    ps_import_info_t info;
    CHECK_OK(run("ncu", "tests/data/ncu_details.csv", NULL, params, &t, &info));
    CHECK(t && t->n == 3);
    if (t && t->n == 3) {
        const psi_op_row_t *r = t->rows;
        CHECK(strcmp(r[0].gpu, "A100-SXM4-80GB") == 0 && strcmp(r[0].name, "ampere_sgemm_128x64_tn") == 0);
        CHECK(strncmp(r[2].name, "void cudnn::bn_fw_tr_1C11_kernel_NCHW", 37) == 0);
        CHECK_NEAR(r[0].duration_ns, 134300, 1e-6);             /* Duration 134.30 usecond */
        CHECK_NEAR(r[1].duration_ns, 2240, 1e-9);               /* "2,240" nsecond */
        CHECK_NEAR(r[2].duration_ns, 1.02e6, 1e-6);             /* 1.02 msecond */
        CHECK_NEAR(r[0].c.sm_pct, 88.12, 1e-12);                /* Compute (SM) Throughput */
        CHECK_NEAR(r[0].c.mem_pct, 45.21, 1e-12);               /* Memory Throughput, % */
        CHECK_NEAR(r[2].c.mem_pct, 100, 0);                     /* 100.30 cut to 100 */
        CHECK_NEAR(r[0].c.dram_bytes, 12.58e6, 1e-3);           /* dram__bytes.sum beats the rate */
        CHECK_NEAR(r[1].c.dram_bytes, 1.27e12 * 2240e-9, 1e-3); /* Tbyte/second x Duration */
        CHECK_NEAR(r[2].c.dram_bytes, 1275068416, 0);           /* "1,275,068,416" byte */
        CHECK(isnan(r[0].c.l2_bytes) && isnan(r[0].c.stall_long_scoreboard));
    }
    CHECK(strcmp(info.format, "ncu details page") == 0 && info.ops == 3 && info.text_lines == 5);
    CHECK(strcmp(info.gpu, "A100-SXM4-80GB") == 0 && strcmp(info.gpu_in_file, "NVIDIA A100-SXM4-80GB") == 0);
    CHECK_NEAR(info.total_ns, 134300 + 2240 + 1.02e6, 1e-6);
    ps_ops_free(t);
    t = NULL;
    CHECK_OK(run("ncu", "tests/data/ncu_details_2021.csv", "v100", params, &t, &info));
    CHECK(t && t->n == 2);
    if (t && t->n == 2) {
        /* Launch 0's rows were split around launch 1's. */
        CHECK(strcmp(t->rows[0].name, "volta_scudnn_128x64_relu_interior_nn_v1") == 0);
        CHECK_NEAR(t->rows[0].duration_ns, 1020160, 1e-6); /* "1,020.16" usecond */
        CHECK_NEAR(t->rows[0].c.sm_pct, 64.2, 1e-12);      /* SM [%] */
        CHECK_NEAR(t->rows[0].c.mem_pct, 35.1, 1e-12);     /* Memory [%] */
        CHECK_NEAR(t->rows[1].duration_ns, 8480, 1e-9);
        CHECK(strcmp(t->rows[1].gpu, "V100-SXM2-16GB") == 0);
    }
    ps_ops_free(t);
#define DH "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
    const bad_input_t bad[] = {
        {DH "\"0\",\"k\",\"S\",\"Duration\",\"furlong\",\"5\"\n", ":2:5: Duration: unknown unit 'furlong'"},
        {DH "\"0\",\"k\",\"S\",\"Duration\",\"ns\",\"5x\"\n", ":2:6: gpu__time_duration.sum: '5x': not a number"},
        {DH "\"0\",\"k\",\"S\",\"Registers Per Thread\",\"\",\"32\"\n",
         ":2:6: gpu__time_duration.sum (launch ID 0, k): the kernel has no positive duration (no Duration"},
        {DH "\"0\",\"k\",\"S\",\"Duration\",\"ns\",\"5\"\n\"0\",\"j\",\"S\",\"Duration\",\"ns\",\"5\"\n\"0\",\"k\","
            "\"S\",\"x\",\"\",\"1\"\n",
         ":3:1: launch ID 0: kernel 'j' here, 'k' at line 2"},
        {"\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric "
         "Value\"\n\"k\",\"S\",\"Duration\",\"ns\",\"5\"\n",
         ":1:1: a details export without an \"ID\" column"},
        {"==PROF== x\n\"Process ID\",\"Kernel Name\",\"Invocations\",\"Section Name\",\"Metric Name\",\"Metric "
         "Unit\",\"Minimum\",\"Maximum\",\"Average\"\n",
         ":2:1: a summary export (ncu --print-summary) has no rows per launch"},
        {DH "\"0\",\"k\",\"S\",\"Duration\",\"ns\",\"5\",\"\",\"x\"\n",
         ":2:1: expected 6 fields as in the header, found 8"},
    };
    expect_refused(ps_import_ncu, bad, PS_ARRAY_LEN(bad));
}

/* Case 3: program output (a quote, a progress bar of bare CRs) before and
 * between the rows; line numbers as an editor counts them. */
static void test_ncu_program_output(void)
{
    ps_ops_t *t = NULL;
    ps_import_info_t info;
    CHECK_OK(run("ncu", "tests/data/ncu_program_output.csv", NULL, params, &t, &info));
    CHECK(t && t->n == 3 && info.text_lines == 8);
    CHECK(t && strcmp(t->rows[1].name, "softmax_warp_forward") == 0 && t->rows[1].duration_ns == 900);
    CHECK(strcmp(info.gpu, "V100-SXM2-32GB") == 0);
    ps_ops_free(t);
    const bad_input_t bad[] = {
        {"say \"hi\n10%\r50%\r100%\n" NCU_HEAD
         "==PROF== x\n\"0\",\"k\",\"5\",\"1\"\nmore \"output\n\"1\",\"k\",\"5x\",\"1\"\n",
         ":7:3: gpu__time_duration.sum: '5x': not a number"},
        {"a\r\nb\r\n" NCU_HEAD "\"0\",\"k\",\"-5\",\"1\"\n", ":4:3: gpu__time_duration.sum: '-5': negative"},
    };
    expect_refused(ps_import_ncu, bad, PS_ARRAY_LEN(bad));
}

/* A raw page of every metric has a header of tens of KB. */
static void test_ncu_wide_header(void)
{
    size_t cap = 1 << 17, n = 0;
    char *text = malloc(cap);
    if (!text)
        return;
    n += (size_t)snprintf(text + n, cap - n, "==PROF== x\n\"ID\",\"Kernel Name\"");
    for (int i = 0; i < 900; i++)
        n += (size_t)snprintf(text + n, cap - n, ",\"smsp__metric_number_%d.avg.pct_of_peak_sustained_elapsed\"", i);
    n += (size_t)snprintf(text + n, cap - n, ",\"gpu__time_duration.sum\"\n\"0\",\"k\"");
    for (int i = 0; i < 900; i++)
        n += (size_t)snprintf(text + n, cap - n, ",\"1\"");
    snprintf(text + n, cap - n, ",\"7\"\n");
    CHECK(strlen(text) > 50000);
    char path[] = "/tmp/psi_test_wideXXXXXX";
    temp_with(path, text);
    ps_ops_t *t = NULL;
    CHECK_OK(ps_import_ncu(path, &params, &t));
    CHECK(t && t->n == 1 && t->rows[0].duration_ns == 7);
    ps_ops_free(t);
    remove(path);
    free(text);
}

/* Case 4: a file of ncu's messages only says what ncu said. */
static void test_ncu_said(void)
{
    const struct {
        const char *path, *says;
    } cases[] = {
        {"tests/data/ncu_error_app.csv",
         "no Nsight Compute table; ncu said: ==ERROR== The application returned an error code (1)."},
        {"tests/data/ncu_error_section.csv",
         "ncu said: ==ERROR== Option '--section SpeedOfLite' did not match any section."},
        {"tests/data/ncu_warning_only.csv", "ncu said: ==WARNING== No kernels were profiled."},
        {"tests/data/ncu_no_kernels.csv", "no kernels found; ncu said: ==WARNING== No kernels were profiled."},
    };
    for (size_t i = 0; i < PS_ARRAY_LEN(cases); i++) {
        ps_ops_t *t = (ps_ops_t *)1;
        CHECK(ps_import_ncu(cases[i].path, &params, &t) == PS_E_INPUT && !t);
        CHECK_MSG(strstr(ps_last_error(), cases[i].says), "%s", ps_last_error());
    }
}

/* Case 5: several processes and devices in one report. */
static void test_ncu_processes(void)
{
    ps_import_params_t p = params;
    p.tpcs = 66;
    ps_ops_t *t = NULL;
    ps_import_info_t info;
    CHECK_OK(run("ncu", "tests/data/ncu_multi_process.csv", NULL, p, &t, &info));
    CHECK(t && t->n == 3 && strcmp(t->rows[1].name, "reduce_a") == 0 && strcmp(t->rows[0].gpu, "H100-SXM") == 0);
    CHECK_MSG(strcmp(info.taken, "process 4242 device 0") == 0, "%s", info.taken);
    CHECK_MSG(strcmp(info.skipped, "process 4243 device 1: 2 kernels, 17 us; process 4242 device 1: 1 kernels, 3 us") ==
                  0,
              "%s", info.skipped);
    ps_ops_free(t);
    p.process = "4243";
    CHECK_OK(run("ncu", "tests/data/ncu_multi_process.csv", NULL, p, &t, &info));
    CHECK(t && t->n == 2 && strcmp(t->rows[0].name, "gemm_b") == 0);
    ps_ops_free(t);
    p.process = "4242";
    p.device = "1";
    CHECK_OK(run("ncu", "tests/data/ncu_multi_process.csv", NULL, p, &t, &info));
    CHECK(t && t->n == 1 && strcmp(t->rows[0].name, "copy_a") == 0);
    ps_ops_free(t);
    p.device = "7";
    t = (ps_ops_t *)1;
    CHECK(run("ncu", "tests/data/ncu_multi_process.csv", NULL, p, &t, &info) == PS_E_INPUT && !t);
    CHECK_MSG(strstr(ps_last_error(), "no launches of process 4242 device 7 (the report has process 4242 device 0, "),
              "%s", ps_last_error());
}

/* Case 6: the stream of compute kernels, not NCCL's; all streams merged. */
static void test_torch_streams(void)
{
    ps_import_params_t p = params;
    p.tpcs = 66;
    ps_ops_t *t = NULL;
    ps_import_info_t info;
    CHECK_OK(run("torch-trace", "tests/data/torch_ddp.json", NULL, p, &t, &info));
    CHECK(t && t->n == 5 && strncmp(t->rows[0].name, "void cudnn::cnn::conv2d_grouped", 31) == 0);
    CHECK(strcmp(info.taken, "stream 7") == 0);
    CHECK_MSG(strcmp(info.skipped, "stream 22: 2 kernels, 24 us; stream 20: 2 kernels, 1.35 ms (communication)") == 0,
              "%s", info.skipped);
    ps_ops_free(t);
    p.stream = "all";
    CHECK_OK(run("torch-trace", "tests/data/torch_ddp.json", NULL, p, &t, &info));
    CHECK(t && t->n == 7 && strncmp(t->rows[1].name, "void fft2d_r2c_32x32", 20) == 0 &&
          strncmp(t->rows[3].name, "void fft2d_c2r_32x32", 20) == 0);
    CHECK(strcmp(info.taken, "streams 7, 22") == 0 && strstr(info.skipped, "stream 20") && !strstr(info.skipped, "22"));
    ps_ops_free(t);
    p.stream = "20";
    CHECK_OK(run("torch-trace", "tests/data/torch_ddp.json", NULL, p, &t, &info));
    CHECK(t && t->n == 2 && strncmp(t->rows[0].name, "ncclKernel_AllReduce", 20) == 0);
    ps_ops_free(t);
    /* ROCm: RCCL's stream is skipped the same way. */
    p.stream = NULL;
    p.tpcs = 100;
    CHECK_OK(run("torch-trace", "tests/data/torch_mi300x.json", NULL, p, &t, &info));
    CHECK(t && t->n == 2 && strncmp(t->rows[0].name, "Cijk_", 5) == 0);
    CHECK(strcmp(info.taken, "stream 0") == 0);
    ps_ops_free(t);
}

/* Case 7: gzip traces read as the plain ones; broken gzip is named. */
static void test_torch_gzip(void)
{
    ps_import_params_t p = params;
    p.tpcs = 66;
    ps_ops_t *a = NULL, *b = NULL;
    ps_import_info_t info;
    CHECK_OK(run("torch-trace", "tests/data/torch_ddp.json", NULL, p, &a, &info));
    CHECK_OK(run("torch-trace", "tests/data/torch_ddp.json.gz", NULL, p, &b, &info));
    CHECK(strcmp(info.format, "PyTorch trace schemaVersion 1, gzip") == 0);
    CHECK(a && b && a->n == b->n);
    for (size_t i = 0; a && b && i < a->n && i < b->n; i++)
        CHECK(strcmp(a->rows[i].name, b->rows[i].name) == 0 && a->rows[i].duration_ns == b->rows[i].duration_ns);
    ps_ops_free(a);
    ps_ops_free(b);
    /* Cut short, and corrupt. */
    FILE *f = fopen("tests/data/torch_ddp.json.gz", "rb");
    unsigned char buf[4096];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    CHECK(n > 200 && n < sizeof buf);
    for (int k = 0; k < 2; k++) {
        char path[] = "/tmp/psi_test_gzXXXXXX";
        int fd = mkstemp(path);
        FILE *g = fdopen(fd, "wb");
        if (k == 1)
            memset(buf + 20, 0xff, 40);
        fwrite(buf, 1, k == 0 ? n / 2 : n, g);
        fclose(g);
        ps_ops_t *t = (ps_ops_t *)1;
        CHECK(ps_import_torch_trace(path, &p, &t) == PS_E_INPUT && !t);
        CHECK_MSG(strstr(ps_last_error(), k == 0 ? ": gzip: the file is cut short" : ": gzip: "), "%s",
                  ps_last_error());
        remove(path);
    }
}

/* The last warning the library logged. */
static char last_warning[1024];
static void keep_warning(ps_log_level_t level, const char *msg, void *user)
{
    (void)user;
    if (level == PS_LOG_WARN)
        snprintf(last_warning, sizeof last_warning, "%s", msg);
}

/* Case 8: dur 0 in integer-microsecond traces (PyTorch 1.8). */
static void test_torch_zero_durations(void)
{
    ps_ops_t *t = NULL;
    ps_import_info_t info;
    ps_log_set(keep_warning, NULL);
    CHECK_OK(run("torch-trace", "tests/data/torch_pt18.json", "v100", params, &t, &info));
    ps_log_set(NULL, NULL);
    CHECK_MSG(strstr(last_warning,
                     "torch_pt18.json: 2 kernels have dur 0 (shorter than the trace's time resolution, 1 us): "
                     "each kept as half of it"),
              "%s", last_warning);
    CHECK(t && t->n == 6 && info.zero_dur == 2);
    CHECK(t && t->rows[2].duration_ns == 500 && t->rows[4].duration_ns == 500 && t->rows[1].duration_ns == 153000);
    CHECK(strstr(info.format, "no schemaVersion, cat Kernel (PyTorch 1.8/1.9)") != NULL);
    ps_ops_free(t);
    ps_import_params_t p = params;
    p.drop_zero = 1;
    CHECK_OK(run("torch-trace", "tests/data/torch_pt18.json", "v100", p, &t, &info));
    CHECK(t && t->n == 4 && info.zero_dur == 2 && info.zero_dur_ns == 0);
    CHECK(t && strcmp(t->rows[3].name, "volta_sgemm_128x64_nn") == 0 && t->rows[3].op == 3);
    ps_ops_free(t);
    /* At nanosecond resolution a dur of 0 is half a nanosecond. */
    char path[] = "/tmp/psi_test_zeroXXXXXX";
    temp_with(path, "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"ts\": 1, \"dur\": 1.234},"
                    " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"b\", \"ts\": 3, \"dur\": 0}]");
    CHECK_OK(run("torch-trace", path, "h100", params, &t, &info));
    CHECK(t && t->n == 2 && t->rows[1].duration_ns == 0.5 && info.zero_dur_ns == 0.5);
    ps_ops_free(t);
    remove(path);
}

/* Case 9: the GPU the file names, mapped to the catalog. */
static void test_gpu_names(void)
{
    const struct {
        const char *device, *catalog;
    } names[] = {
        {"NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"},
        {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"},
        {"NVIDIA A100 80GB PCIe", "A100-PCIE-80GB"},
        {"NVIDIA H100 80GB HBM3", "H100-SXM"},
        {"NVIDIA H100 PCIe", "H100-PCIE"},
        {"NVIDIA H100 NVL", "H100-NVL"},
        {"NVIDIA H200", "H200"},
        {"NVIDIA B200", "B200"},
        {"Tesla V100-SXM2-32GB", "V100-SXM2-32GB"},
        {"Tesla V100-SXM2-16GB", "V100-SXM2-16GB"},
    };
    for (size_t i = 0; i < PS_ARRAY_LEN(names); i++) {
        const psi_gpu_t *g = psi_gpu_from_device_name(names[i].device);
        CHECK_MSG(g && strcmp(g->name, names[i].catalog) == 0, "%s", names[i].device);
    }
    CHECK(!psi_gpu_from_device_name("AMD Instinct MI300X") &&
          !psi_gpu_from_device_name("NVIDIA A100-SXM4-40GB MIG 1g.5gb"));
    CHECK(psi_gpu_find("b200") && psi_gpu_find("b200")->tpcs == 74 && psi_gpu_find("h100-pcie")->tpcs == 57);
    /* --tpcs beyond the named GPU; no GPU anywhere; an unknown one passes. */
    ps_import_params_t p = params;
    p.tpcs = 67;
    ps_ops_t *t = (ps_ops_t *)1;
    ps_import_info_t info;
    CHECK(run("torch-trace", "tests/data/torch_ddp.json", NULL, p, &t, &info) == PS_E_ARG && !t);
    CHECK_MSG(
        strstr(ps_last_error(), "--tpcs: 67 exceeds the 66 TPCs of H100-SXM (the file names NVIDIA H100 80GB HBM3)"),
        "%s", ps_last_error());
    CHECK(run("torch-trace", "tests/data/torch_pt18.json", NULL, params, &t, &info) == PS_E_ARG && !t);
    CHECK_MSG(strstr(ps_last_error(), "the file names no GPU: give --gpu"), "%s", ps_last_error());
    p.tpcs = 500;
    CHECK_OK(run("torch-trace", "tests/data/torch_mi300x.json", NULL, p, &t, &info));
    CHECK(t && strcmp(t->rows[0].gpu, "AMD Instinct MI300X") == 0 && strcmp(info.gpu, "AMD Instinct MI300X") == 0);
    ps_ops_free(t);
    /* A GPU other than the file's (an H100 trace as an A100's) is refused
     * unless forced; forced, --gpu wins (with a warning). A B200 file is
     * not an A100's either. */
    p = params;
    t = (ps_ops_t *)1;
    CHECK(run("torch-trace", "tests/data/torch_ddp.json", "a100", p, &t, &info) == PS_E_INPUT && !t);
    CHECK_MSG(strstr(ps_last_error(), "profiled on NVIDIA H100 80GB HBM3, not on A100-SXM4-40GB"), "%s",
              ps_last_error());
    p.tpcs = 40;
    t = (ps_ops_t *)1;
    CHECK(run("torch-trace", "tests/data/torch_mi300x.json", "a100", p, &t, &info) == PS_E_INPUT && !t);
    p.force_gpu = 1;
    CHECK_OK(run("torch-trace", "tests/data/torch_ddp.json", "a100", p, &t, &info));
    CHECK(t && strcmp(t->rows[0].gpu, "A100-SXM4-40GB") == 0);
    ps_ops_free(t);
}

/* Case 10: one model from several files. */
static void test_merge(void)
{
    ps_import_params_t p = params;
    ps_ops_t *trace = NULL, *ncu40 = NULL, *ncu20 = NULL, *other = NULL, *m1 = NULL, *m2 = NULL, *bad = NULL;
    CHECK_OK(run("torch-trace", "tests/data/torch_bert.json", NULL, p, &trace, NULL));
    CHECK_OK(run("ncu", "tests/data/ncu_raw.csv", "v100", p, &ncu40, NULL));
    p.tpcs = 20;
    CHECK_OK(run("ncu", "tests/data/ncu_raw_20tpcs.csv", "v100", p, &ncu20, NULL));
    CHECK_OK(run("ncu", "tests/data/ncu_raw_base.csv", "v100", p, &other, NULL));
    size_t added = 9, filled = 9;
    /* A trace, then counters of the same run at the same TPC count. */
    CHECK_OK(ps_ops_merge(trace, ncu40, &m1, &added, &filled));
    CHECK(m1 && m1->n == 3 && added == 0 && filled == 3);
    CHECK(m1 && m1->rows[0].duration_ns == 131500 && m1->rows[0].c.sm_pct == 88.12);
    /* Another TPC count adds rows. */
    CHECK_OK(ps_ops_merge(m1, ncu20, &m2, &added, &filled));
    CHECK(m2 && m2->n == 6 && added == 3 && filled == 0 && m2->n_groups == 1 && m2->groups[0].n_tpcs == 2);
    const psi_op_group_t *g = m2 ? psi_ops_find(m2, "V100-SXM2-16GB", "bert", 8) : NULL;
    CHECK(g && psi_group_segment_ns(g, 0, 3, 20) == 250100 + 3910 + 1400);
    /* Other kernels, or a sequence of another length, are refused. */
    bad = (ps_ops_t *)1;
    CHECK(ps_ops_merge(m2, other, &bad, NULL, NULL) == PS_E_MISMATCH && !bad);
    CHECK_MSG(strstr(ps_last_error(), "bert batch 8 on V100-SXM2-16GB: the kernel sequences differ at op 0: "
                                      "'volta_sgemm_128x64_nn' there, 'gemm_kernel' in the import"),
              "%s", ps_last_error());
    ps_ops_t *shorter = ps_ops_new();
    for (size_t i = 0; shorter && i < 2; i++)
        CHECK_OK(ps_ops_append(shorter, &ncu20->rows[i]));
    CHECK_OK(psi_ops_index(shorter));
    CHECK(ps_ops_merge(m2, shorter, &bad, NULL, NULL) == PS_E_MISMATCH);
    CHECK_MSG(strstr(ps_last_error(), "3 operators there, 2 in the import: the first 2 match"), "%s", ps_last_error());
    /* Another model is simply added. */
    ps_ops_free(other);
    p.model = "bert-2";
    CHECK_OK(run("ncu", "tests/data/ncu_raw_base.csv", "v100", p, &other, NULL));
    ps_ops_free(bad);
    CHECK_OK(ps_ops_merge(m2, other, &bad, &added, NULL));
    CHECK(bad && bad->n == 9 && bad->n_groups == 2 && added == 3);
    ps_ops_free(bad);
    ps_ops_free(shorter);
    ps_ops_free(trace);
    ps_ops_free(ncu40);
    ps_ops_free(ncu20);
    ps_ops_free(other);
    ps_ops_free(m1);
    ps_ops_free(m2);
}

TH_MAIN(TEST(test_ncu_auto_units), TEST(test_ncu_base_units_and_round_trip), TEST(test_ncu_errors),
        TEST(test_torch_trace), TEST(test_torch_errors), TEST(test_ncu_details), TEST(test_ncu_program_output),
        TEST(test_ncu_said), TEST(test_ncu_wide_header), TEST(test_ncu_processes), TEST(test_torch_streams),
        TEST(test_torch_gzip), TEST(test_torch_zero_durations), TEST(test_gpu_names), TEST(test_merge))
