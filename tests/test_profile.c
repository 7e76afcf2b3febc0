/* Tables in memory, their savers and loaders: round trips, ops groups and
 * segment sums, and the table-level rules. Malformed files are covered in
 * test_profile_errors.c. */
#include "common/common.h"
#include "profile/tables.h"
#include "testhelp.h"

#include <stddef.h>
#include <unistd.h>

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static psi_op_row_t op_row(const char *model, int op, int tpcs, double ns)
{
    psi_op_row_t r = {.gpu = "A100-SXM4-40GB",
                      .model = model,
                      .batch = 8,
                      .op = op,
                      .name = "gemm",
                      .tpcs = tpcs,
                      .duration_ns = ns,
                      .intensity = PS_INTENSITY_NONE};
    r.c = (psi_counters_t){NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    return r;
}

/* Two models; resnet at 2 TPC counts with counters only at the larger. */
static ps_ops_t *make_ops(void)
{
    ps_ops_t *t = ps_ops_new();
    for (int op = 0; op < 4; op++) {
        char model[16];
        snprintf(model, sizeof model, "res%s", "net"); /* not a pooled pointer */
        psi_op_row_t r = op_row(model, op, 54, 1000.0 * (op + 1));
        r.intensity = op % 2 ? PS_INTENSITY_MEMORY : PS_INTENSITY_COMPUTE;
        r.c.dram_bytes = 1e6 * (op + 1);
        r.c.sm_pct = 50.5;
        CHECK_OK(ps_ops_append(t, &r));
        r = op_row(model, op, 20, 2500.0 * (op + 1));
        CHECK_OK(ps_ops_append(t, &r));
    }
    for (int op = 2; op >= 0; op--) { /* out of order on purpose */
        psi_op_row_t r = op_row("bert, \"base\"", op, 54, 0.1 + op);
        r.name = "multi\nline";
        CHECK_OK(ps_ops_append(t, &r));
    }
    return t;
}

static void test_ops_index_and_segments(void)
{
    ps_ops_t *t = make_ops();
    CHECK(ps_ops_rows(t) == 11);
    CHECK_OK(psi_ops_index(t));
    CHECK(t->n_groups == 2);
    /* Equal strings share one pooled pointer. */
    CHECK(t->rows[0].model == t->rows[1].model);
    CHECK(t->rows[0].gpu == t->rows[10].gpu);
    const psi_op_group_t *g = psi_ops_find(t, "A100-SXM4-40GB", "resnet", 8);
    CHECK(g != NULL);
    if (g) {
        CHECK(g->n_ops == 4 && g->n_tpcs == 2);
        CHECK(g->tpcs[0] == 20 && g->tpcs[1] == 54);
        CHECK(psi_group_tpcs_index(g, 54) == 1);
        CHECK(psi_group_tpcs_index(g, 30) == -1);
        CHECK_NEAR(psi_group_segment_ns(g, 1, 2, 54), 2000 + 3000, 1e-9);
        CHECK_NEAR(psi_group_segment_ns(g, 0, 4, 20), 2500.0 * 10, 1e-9);
        CHECK(isnan(psi_group_segment_ns(g, 3, 2, 54))); /* past the end */
        CHECK(isnan(psi_group_segment_ns(g, 0, 1, 30))); /* TPC count not measured */
        CHECK(isnan(psi_group_segment_ns(g, -1, 1, 54)));
        /* Counters and intensity come from the row with the most TPCs. */
        CHECK_NEAR(g->counters[2].dram_bytes, 3e6, 0);
        CHECK(isnan(g->counters[2].l2_bytes));
        CHECK(g->intensity[1] == PS_INTENSITY_MEMORY);
        CHECK(strcmp(g->names[3], "gemm") == 0);
    }
    CHECK(psi_ops_find(t, "A100-SXM4-40GB", "resnet", 4) == NULL);
    CHECK(psi_ops_find(t, "H200", "resnet", 8) == NULL);
    const psi_op_group_t *b = psi_ops_find(t, "A100-SXM4-40GB", "bert, \"base\"", 8);
    CHECK(b && b->n_ops == 3 && b->n_tpcs == 1);
    /* A missing TPC count for one operator is fine, and sums are NAN there. */
    psi_op_row_t r = op_row("bert, \"base\"", 0, 20, 5.0);
    CHECK_OK(ps_ops_append(t, &r));
    CHECK_OK(psi_ops_index(t));
    b = psi_ops_find(t, "A100-SXM4-40GB", "bert, \"base\"", 8);
    CHECK(b && b->n_tpcs == 2);
    if (b) {
        CHECK_NEAR(psi_group_segment_ns(b, 0, 1, 20), 5.0, 0);
        CHECK(isnan(psi_group_segment_ns(b, 0, 2, 20)));
    }
    ps_ops_free(t);
    ps_ops_free(NULL);
}

static void test_ops_index_errors(void)
{
    ps_ops_t *t = make_ops();
    psi_op_row_t r = op_row("resnet", 2, 20, 7.0);
    CHECK_OK(ps_ops_append(t, &r));
    CHECK(psi_ops_index(t) == PS_E_INPUT);
    CHECK_MSG(strstr(ps_last_error(), "row 12") && strstr(ps_last_error(), "duplicate key") &&
                  strstr(ps_last_error(), "first at row 6"),
              "%s", ps_last_error());
    ps_ops_free(t);

    t = make_ops();
    r = op_row("resnet", 6, 20, 7.0);
    CHECK_OK(ps_ops_append(t, &r));
    CHECK(psi_ops_index(t) == PS_E_INPUT);
    CHECK_MSG(strstr(ps_last_error(), "op 4 is missing"), "%s", ps_last_error());
    ps_ops_free(t);

    /* A stray huge index is a gap, found without a bitmap of its size. */
    t = make_ops();
    r = op_row("resnet", 2000000000, 20, 7.0);
    CHECK_OK(ps_ops_append(t, &r));
    CHECK(psi_ops_index(t) == PS_E_INPUT);
    CHECK_MSG(strstr(ps_last_error(), "op 2000000000: gap") && strstr(ps_last_error(), "op 4 is missing"), "%s",
              ps_last_error());
    ps_ops_free(t);

    /* Every operator at its own TPC count: the dense matrix would be too big. */
    t = ps_ops_new();
    int appended = 0;
    for (int op = 0; op < 8193; op++) {
        r = op_row("sparse", op, op + 1, 1.0);
        r.gpu = "NoSuchGPU";
        appended += ps_ops_append(t, &r) == 0;
    }
    CHECK(appended == 8193);
    CHECK(psi_ops_index(t) == PS_E_INPUT);
    CHECK_MSG(strstr(ps_last_error(), "ops row 1: tpcs: (gpu, model, batch) = (NoSuchGPU, sparse, 8) "
                                      "has 8193 operators at 8193 TPC counts"),
              "%s", ps_last_error());
    CHECK(t->n_groups == 0);
    ps_ops_free(t);

    t = ps_ops_new();
    r = op_row("m", 0, 20, -1.0);
    CHECK_OK(ps_ops_append(t, &r));
    CHECK(psi_ops_index(t) == PS_E_INPUT);
    CHECK_MSG(strstr(ps_last_error(), "duration_ns") && strstr(ps_last_error(), "must be in (0, 3.6e+12]"), "%s",
              ps_last_error());
    ps_ops_free(t);

    t = ps_ops_new();
    r = op_row(NULL, 0, 20, 1.0);
    CHECK(ps_ops_append(t, &r) == PS_E_ARG);
    CHECK(ps_ops_rows(t) == 0);
    ps_ops_free(t);
}

static void test_ops_round_trip(void)
{
    ps_ops_t *t = make_ops(), *u = NULL;
    const char *path = tmp_path("ops.csv");
    CHECK_OK(ps_ops_save(t, path));
    CHECK_OK(ps_ops_load(path, &u));
    CHECK(u && u->n == t->n);
    for (size_t i = 0; u && i < t->n; i++) {
        const psi_op_row_t *a = &t->rows[i], *b = &u->rows[i];
        CHECK(strcmp(a->gpu, b->gpu) == 0 && strcmp(a->model, b->model) == 0);
        CHECK(strcmp(a->name, b->name) == 0);
        CHECK(a->batch == b->batch && a->op == b->op && a->tpcs == b->tpcs);
        CHECK(a->duration_ns == b->duration_ns); /* exact: shortest round-trip digits */
        CHECK(a->intensity == b->intensity);
        CHECK((isnan(a->c.dram_bytes) && isnan(b->c.dram_bytes)) || a->c.dram_bytes == b->c.dram_bytes);
        CHECK((isnan(a->c.sm_pct) && isnan(b->c.sm_pct)) || a->c.sm_pct == b->c.sm_pct);
    }
    CHECK(u && u->n_groups == 2); /* the loader indexes */
    /* Columns no row uses are left out of the file. */
    FILE *f = fopen(path, "r");
    char header[512] = "";
    CHECK(f && fgets(header, sizeof header, f));
    if (f)
        fclose(f);
    CHECK_MSG(strcmp(header, "gpu,model,batch,op,name,tpcs,duration_ns,intensity,dram_bytes,sm_pct\n") == 0, "%s",
              header);
    ps_ops_free(t);
    ps_ops_free(u);
    remove(path);
}

static void test_coexec_round_trip_and_rules(void)
{
    ps_coexec_t *t = ps_coexec_new(), *u = NULL;
    for (int i = 0; i < 6; i++) {
        char exp[32];
        snprintf(exp, sizeof exp, "e%d", i / 3);
        psi_coexec_row_t r = {.experiment = exp,
                              .gpu = "H200",
                              .hp_model = "resnet50",
                              .hp_batch = 8,
                              .hp_start = i / 3,
                              .hp_len = 16,
                              .lp_model = "bert-base",
                              .lp_batch = 4,
                              .lp_start = 0,
                              .lp_len = 8,
                              .hp_tpcs = 30,
                              .lp_tpcs = 36,
                              .hp_ns = 1e5 + i,
                              .lp_ns = 2e5 / 3.0,
                              .mechanism = i ? "sim" : NULL};
        CHECK_OK(ps_coexec_append(t, &r));
    }
    const char *path = tmp_path("coexec.csv");
    CHECK_OK(ps_coexec_save(t, path));
    CHECK_OK(ps_coexec_load(path, &u));
    CHECK(u && u->n == 6);
    if (u) {
        CHECK(u->rows[0].mechanism == NULL);
        CHECK(strcmp(u->rows[5].mechanism, "sim") == 0);
        CHECK(u->rows[4].lp_ns == 2e5 / 3.0);
        CHECK(u->rows[4].hp_start == 1 && u->rows[2].hp_start == 0);
        CHECK(u->rows[0].experiment == u->rows[2].experiment);
    }
    ps_check_result_t cr;
    CHECK_OK(ps_table_check(path, &cr));
    CHECK(cr.kind == PS_TABLE_COEXEC && cr.rows == 6 && cr.groups == 2);
    ps_coexec_free(u);

    /* One experiment with two different settings is refused. */
    psi_coexec_row_t bad = t->rows[0];
    bad.lp_tpcs = 20;
    CHECK_OK(ps_coexec_append(t, &bad));
    CHECK_OK(ps_coexec_save(t, path));
    u = (ps_coexec_t *)1;
    CHECK(ps_coexec_load(path, &u) == PS_E_INPUT);
    CHECK(u == NULL);
    char want[300];
    snprintf(want, sizeof want, "%s:8:12: lp_tpcs: differs", path);
    CHECK_MSG(strstr(ps_last_error(), want) && strstr(ps_last_error(), "(first at line 2)"), "%s", ps_last_error());
    ps_coexec_free(t);
    remove(path);
}

static void test_workload_tables(void)
{
    ps_workloads_t *w = ps_workloads_new(), *w2 = NULL;
    psi_workload_row_t wr = {.gpu = "V100",
                             .workload = "bert_batch8-inf",
                             .exclusive_tput = 55.5,
                             .threads = 1e6,
                             .registers = NAN,
                             .static_smem = NAN,
                             .sm_tput_pct = 50,
                             .dram_tput_pct = NAN,
                             .mem_tput_pct = NAN,
                             .sm_busy_pct = NAN,
                             .mem_busy_pct = NAN,
                             .memcap_gb = 2.5,
                             .stall_long_scoreboard = NAN,
                             .stall_lg_throttle = NAN,
                             .stall_mio_throttle = NAN};
    CHECK_OK(ps_workloads_append(w, &wr));
    wr.workload = "gpt2_batch1-train";
    wr.threads = NAN;
    CHECK_OK(ps_workloads_append(w, &wr));
    const char *path = tmp_path("workloads.csv");
    CHECK_OK(ps_workloads_save(w, path));
    CHECK_OK(ps_workloads_load(path, &w2));
    CHECK(w2 && w2->n == 2 && isnan(w2->rows[1].threads) && w2->rows[0].threads == 1e6);
    CHECK(w2 && w2->rows[1].memcap_gb == 2.5 && isnan(w2->rows[1].registers));
    ps_workloads_free(w2);
    CHECK_OK(ps_workloads_append(w, &wr));
    CHECK_OK(ps_workloads_save(w, path));
    CHECK(ps_workloads_load(path, &w2) == PS_E_INPUT);
    CHECK_MSG(strstr(ps_last_error(), ":4:2: duplicate key (gpu, workload)"), "%s", ps_last_error());
    ps_workloads_free(w);

    ps_scaling_t *s = ps_scaling_new(), *s2 = NULL;
    for (int share = 10; share <= 100; share += 45) {
        psi_scaling_row_t r = {"V100", "bert_batch8-inf", share, share * 0.5};
        CHECK_OK(ps_scaling_append(s, &r));
    }
    path = tmp_path("scaling.csv");
    CHECK_OK(ps_scaling_save(s, path));
    CHECK_OK(ps_scaling_load(path, &s2));
    CHECK(s2 && s2->n == 3 && s2->rows[2].share_pct == 100 && s2->rows[1].tput == 27.5);
    ps_check_result_t cr;
    CHECK_OK(ps_table_check(path, &cr));
    CHECK(cr.kind == PS_TABLE_SCALING && cr.rows == 3 && cr.groups == 1);
    ps_scaling_free(s2);
    ps_scaling_free(s);

    ps_colocations_t *c = ps_colocations_new(), *c2 = NULL;
    psi_colocation_row_t cr1 = {"pair1", "V100", 1, "a", 50, 10.0};
    psi_colocation_row_t cr2 = {"pair1", "V100", 2, "b", 50, NAN};
    CHECK_OK(ps_colocations_append(c, &cr1));
    CHECK_OK(ps_colocations_append(c, &cr2));
    path = tmp_path("colocations.csv");
    CHECK_OK(ps_colocations_save(c, path));
    CHECK_OK(ps_colocations_load(path, &c2));
    CHECK(c2 && c2->n == 2 && isnan(c2->rows[1].tput) && c2->rows[0].tput == 10.0);
    CHECK_OK(ps_table_check(path, &cr));
    CHECK(cr.kind == PS_TABLE_COLOCATIONS && cr.rows == 2 && cr.groups == 1);
    ps_colocations_free(c2);
    psi_colocation_row_t cr3 = {"pair1", "A100", 3, "c", 50, 1.0};
    CHECK_OK(ps_colocations_append(c, &cr3));
    CHECK_OK(ps_colocations_save(c, path));
    CHECK(ps_colocations_load(path, &c2) == PS_E_INPUT && c2 == NULL);
    CHECK_MSG(strstr(ps_last_error(), ":4:2: gpu: co-location 'pair1' is on A100"), "%s", ps_last_error());
    ps_colocations_free(c);
    remove(path);
    remove(tmp_path("workloads.csv"));
    remove(tmp_path("scaling.csv"));
}

static void test_load_wrong_kind(void)
{
    ps_scaling_t *s = ps_scaling_new();
    psi_scaling_row_t r = {"V100", "w", 50, 1.0};
    CHECK_OK(ps_scaling_append(s, &r));
    const char *path = tmp_path("s.csv");
    CHECK_OK(ps_scaling_save(s, path));
    ps_ops_t *o = NULL;
    CHECK(ps_ops_load(path, &o) == PS_E_INPUT && o == NULL);
    CHECK_MSG(strstr(ps_last_error(), ":1:1: this is a workload_scaling table, not ops (missing column 'model')"), "%s",
              ps_last_error());
    CHECK(ps_ops_load(tmp_path("does-not-exist.csv"), &o) == PS_E_IO && o == NULL);
    ps_scaling_free(s);
    remove(path);
}

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/psi_test_profileXXXXXX");
    if (!mkdtemp(tmpdir))
        abort();
}

static void teardown(void) { rmdir(tmpdir); }

static void test_setup(void) { setup(); }
static void test_teardown(void) { teardown(); }

/* The one field table of ps_query_t: every field once, in coexec.csv's
 * order, at the compiler's offset; ps_query_parse is read through it. */
static void test_query_fields(void)
{
#define Q(f, str)                                                                                                      \
    {                                                                                                                  \
#f, str, offsetof(ps_query_t, f)                                                                               \
    }
    static const struct {
        const char *name;
        int is_string;
        size_t offset;
    } want[] = {Q(gpu, 1),      Q(hp_model, 1), Q(hp_batch, 0), Q(hp_start, 0), Q(hp_len, 0), Q(lp_model, 1),
                Q(lp_batch, 0), Q(lp_start, 0), Q(lp_len, 0),   Q(hp_tpcs, 0),  Q(lp_tpcs, 0)};
#undef Q
    int n = 0;
    const ps_query_field_t *f = ps_query_fields(&n);
    CHECK(n == (int)PS_ARRAY_LEN(want) && ps_query_fields(NULL) == f);
    for (int i = 0; i < n && i < (int)PS_ARRAY_LEN(want); i++)
        CHECK_MSG(strcmp(f[i].name, want[i].name) == 0 && f[i].is_string == want[i].is_string &&
                      f[i].offset == want[i].offset && f[i].required == (i > 0),
                  "field %d: %s", i, f[i].name);
    char text[] = "hp_model=a,hp_batch=8,hp_start=0,hp_len=4,lp_model=b,lp_batch=2,lp_start=1,hp_tpcs=3,lp_tpcs=4";
    ps_query_t q = {0};
    CHECK(ps_query_parse(text, &q) == PS_E_ARG);
    CHECK_MSG(strstr(ps_last_error(), "(lp_len is missing)"), "%s", ps_last_error());
    char full[] = "gpu=g,hp_model=a,hp_batch=8,hp_start=0,hp_len=4,lp_model=b,lp_batch=2,lp_start=1,lp_len=5,"
                  "hp_tpcs=3,lp_tpcs=4";
    CHECK(ps_query_parse(full, &q) == PS_OK && strcmp(q.gpu, "g") == 0 && strcmp(q.lp_model, "b") == 0 &&
          q.hp_batch == 8 && q.lp_len == 5 && q.lp_tpcs == 4);
}

TH_MAIN(TEST(test_setup), TEST(test_ops_index_and_segments), TEST(test_ops_index_errors), TEST(test_ops_round_trip),
        TEST(test_coexec_round_trip_and_rules), TEST(test_workload_tables), TEST(test_load_wrong_kind),
        TEST(test_query_fields), TEST(test_teardown))
