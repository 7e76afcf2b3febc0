/* The calls for language bindings (include/pairsight.h, "Bindings"): tables
 * built in memory, parameters as JSON, models as bytes, the query layout.
 * Only the public header is used, as a binding would. */
#include "pairsight.h"
#include "testhelp.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const CO_COLS[] = {"colocation", "gpu", "slot", "workload", "share_pct", "tput"};

static ps_table_builder_t *co_builder(const char *source)
{
    ps_table_builder_t *b = NULL;
    CHECK_OK(ps_table_builder_create(PS_TABLE_COLOCATIONS, source, CO_COLS, 6, &b));
    return b;
}

static void add_row(ps_table_builder_t *b, const char *id, const char *slot, const char *w, const char *tput)
{
    const char *v[] = {id, "TESTGPU", slot, w, "100", tput};
    CHECK_OK(ps_table_builder_append(b, v));
}

/* A table built in memory is the table the file loader reads from the same
 * rows; the builder can take more rows and finish again. */
static void test_builder_equals_file(void)
{
    ps_colocations_t *file = NULL, *mem = NULL;
    CHECK_OK(ps_colocations_load("tests/data/colocate/colocations3.csv", &file));
    ps_table_builder_t *b = co_builder("my rows");
    add_row(b, "x/1", "1", "alpha_batch2-inf", "68.5");
    add_row(b, "x/1", "2", "alpha_batch8-inf", NULL); /* an unmeasured slot */
    CHECK(ps_table_builder_rows(b) == 2);
    CHECK_OK(ps_table_builder_finish_colocations(b, &mem));
    CHECK(mem && ps_colocations_rows(mem) == 2);
    ps_colocations_free(mem);
    /* A comma and a quote inside a name survive the CSV text. */
    add_row(b, "y,\"2\"", "1", "alpha_batch2-inf", "1");
    add_row(b, "y,\"2\"", "2", "beta_batch4-train", "1");
    CHECK_OK(ps_table_builder_finish_colocations(b, &mem));
    CHECK(mem && ps_colocations_rows(mem) == 4);
    ps_workloads_t *w = NULL;
    CHECK_OK(ps_workloads_load("tests/data/colocate/workloads.csv", &w));
    ps_coloc_model_t *m = NULL;
    CHECK_OK(ps_coloc_train_json(w, NULL, file, "{\"kind\": \"ratio\"}", &m));
    double out[4];
    CHECK_OK(ps_coloc_predict(m, w, NULL, mem, out));
    CHECK(out[0] > 0 && out[3] > 0);
    ps_coloc_model_free(m);
    ps_workloads_free(w);
    ps_colocations_free(mem);
    ps_colocations_free(file);
    ps_table_builder_free(b);
}

/* Errors name the builder's source and the row as a line (header = 1). */
static void test_builder_errors(void)
{
    ps_table_builder_t *b = co_builder("candidates");
    add_row(b, "x/1", "1", "alpha_batch2-inf", "1");
    add_row(b, "x/1", "2", "alpha_batch8-inf", "fast");
    ps_colocations_t *c = NULL;
    CHECK(ps_table_builder_finish_colocations(b, &c) == PS_E_INPUT && c == NULL);
    CHECK_MSG(strncmp(ps_last_error(), "candidates:3:6:", 15) == 0, "%s", ps_last_error());
    ps_ops_t *o = NULL;
    CHECK(ps_table_builder_finish_ops(b, &o) == PS_E_ARG && o == NULL);
    CHECK(strstr(ps_last_error(), "finished as ops") != NULL);
    ps_table_builder_free(b);
    /* No rows: the loader's "header only". */
    b = co_builder(NULL);
    CHECK(ps_table_builder_finish_colocations(b, &c) == PS_E_INPUT);
    CHECK_MSG(strstr(ps_last_error(), "colocations:") == ps_last_error(), "%s", ps_last_error());
    ps_table_builder_free(b);
    const char *cols[] = {"gpu", NULL};
    CHECK(ps_table_builder_create(PS_TABLE_OPS, "x", cols, 2, &b) == PS_E_ARG && b == NULL);
    CHECK(ps_table_builder_create(PS_TABLE_UNKNOWN, "x", cols, 1, &b) == PS_E_ARG);
    CHECK(ps_table_builder_create(PS_TABLE_OPS, "x", cols, 0, &b) == PS_E_ARG);
    CHECK(ps_table_builder_append(NULL, cols) == PS_E_ARG);
    ps_table_builder_free(NULL);
}

static void test_workloads_key(void)
{
    ps_workloads_t *w = NULL;
    CHECK_OK(ps_workloads_load("tests/data/colocate/workloads.csv", &w));
    const char *g = NULL, *n = NULL;
    CHECK_OK(ps_workloads_key(w, 0, &g, &n));
    CHECK(g && n && strcmp(g, "TESTGPU") == 0 && strcmp(n, "alpha_batch2-inf") == 0);
    CHECK(ps_workloads_key(w, ps_workloads_rows(w), &g, &n) == PS_E_ARG);
    ps_workloads_free(w);
}

/* The defaults as JSON are the C defaults (adapt_depth 0 among them), by
 * name for the enumerations; bad keys and values are refused by name. */
static void test_params_json(void)
{
    char *j = NULL;
    CHECK_OK(ps_params_json("train", &j));
    CHECK_MSG(j && strstr(j, "\"adapt_depth\":0") && strstr(j, "\"variant\":\"full\"") &&
                  strstr(j, "\"depths\":[6,8]") && strstr(j, "\"max_rounds\":400"),
              "%s", j ? j : "");
    ps_free(j);
    CHECK_OK(ps_params_json("coloc", &j));
    CHECK_MSG(j && strstr(j, "\"kind\":\"mps\"") && strstr(j, "\"auto_rule\":\"within\""), "%s", j ? j : "");
    ps_free(j);
    const char *names[] = {"plan", "replay", "place"};
    for (int i = 0; i < 3; i++) {
        CHECK_OK(ps_params_json(names[i], &j));
        CHECK(j && j[0] == '{');
        ps_free(j);
    }
    CHECK(ps_params_json("nope", &j) == PS_E_ARG && j == NULL);

    ps_workloads_t *w = NULL;
    ps_colocations_t *c = NULL;
    CHECK_OK(ps_workloads_load("tests/data/colocate/workloads.csv", &w));
    CHECK_OK(ps_colocations_load("tests/data/colocate/colocations3.csv", &c));
    ps_coloc_model_t *m = NULL;
    CHECK(ps_coloc_train_json(w, NULL, c, "{\"bogus\": 1}", &m) == PS_E_ARG && !m);
    CHECK_MSG(strstr(ps_last_error(), "unknown key 'bogus'") && strstr(ps_last_error(), "auto_rule"), "%s",
              ps_last_error());
    CHECK(ps_coloc_train_json(w, NULL, c, "{\"trees\": 4294967319}", &m) == PS_E_ARG);
    CHECK(strstr(ps_last_error(), "trees must be an integer") != NULL);
    CHECK(ps_coloc_train_json(w, NULL, c, "{\"trees\": 2.5}", &m) == PS_E_ARG);
    CHECK(ps_coloc_train_json(w, NULL, c, "{\"kind\": \"nosuch\"}", &m) == PS_E_ARG);
    CHECK(ps_coloc_train_json(w, NULL, c, "[1]", &m) == PS_E_ARG);
    CHECK(ps_coloc_train_json(w, NULL, c, "{", &m) == PS_E_INPUT);
    CHECK(ps_coloc_train_json(w, NULL, c, "{\"seed\": \"18446744073709551615\"}", &m) == PS_E_ARG);
    CHECK_OK(ps_coloc_train_json(w, NULL, c, "{\"kind\": \"kace_rf\", \"trees\": 5, \"seed\": \"1\"}", &m));
    CHECK(m && ps_coloc_model_kind(m) == PS_COLOC_KACE_RF);

    /* A model's bytes load back into the same predictions. */
    unsigned char *img = NULL;
    size_t len = 0;
    CHECK_OK(ps_coloc_model_save_mem(m, &img, &len));
    ps_coloc_model_t *back = NULL;
    CHECK_OK(ps_coloc_model_load_mem(img, len, &back));
    size_t n = ps_colocations_rows(c);
    double *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
    CHECK_OK(ps_coloc_predict(m, w, NULL, c, a));
    CHECK_OK(ps_coloc_predict(back, w, NULL, c, b));
    CHECK(a && b && memcmp(a, b, n * sizeof *a) == 0);
    ps_coloc_model_t *cut = NULL;
    CHECK(ps_coloc_model_load_mem(img, len - 1, &cut) == PS_E_INPUT && cut == NULL);
    CHECK_MSG(strstr(ps_last_error(), "co-location model in memory"), "%s", ps_last_error());

    /* Placement through JSON. */
    char *pl = NULL;
    CHECK_OK(ps_coloc_place_json(m, w, NULL,
                                 "{\"jobs\": [\"alpha_batch2-inf\", \"beta_batch4-train\"], "
                                 "\"gpus\": [null], \"max_per_gpu\": 2}",
                                 &pl));
    CHECK_MSG(pl && strstr(pl, "\"schema\":\"pairsight.place.v1\"") && strstr(pl, "\"job\":\"beta_batch4-train\""),
              "%s", pl ? pl : "");
    ps_free(pl);
    CHECK(ps_coloc_place_json(m, w, NULL, "{\"max_per_gpu\": 2}", &pl) == PS_E_ARG && pl == NULL);
    free(a);
    free(b);
    ps_free(img);
    ps_coloc_model_free(back);
    ps_coloc_model_free(m);
    ps_colocations_free(c);
    ps_workloads_free(w);
}

/* A segment model trained through JSON, planned and replayed through JSON,
 * and round-tripped through memory. */
static void test_model_json_and_mem(void)
{
    ps_sim_params_t sp = ps_sim_default_params();
    sp.gpu = "a100";
    sp.experiments = 120;
    sp.runs = 1;
    sp.threads = 1;
    sp.pairs = "resnet50:8/bert-base:8";
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    CHECK_OK(ps_sim_run(&sp, &ops, &cx));
    ps_model_t *m = NULL;
    CHECK(ps_model_train_json(ops, cx, "{\"depths\": [1, 2, 3, 4, 5]}", &m) == PS_E_ARG);
    CHECK(ps_model_train_json(ops, cx, "{\"variant\": \"nosuch\"}", &m) == PS_E_ARG);
    CHECK_OK(ps_model_train_json(
        ops, cx, "{\"max_rounds\": 20, \"depths\": [3], \"etas\": [0.3], \"nthread\": 1, \"seed\": 2}", &m));
    if (!m)
        goto done;
    ps_model_info_t info;
    CHECK_OK(ps_model_info(m, &info));
    CHECK(info.depth[0] == 3 && info.seed == 2);
    unsigned char *img = NULL;
    size_t len = 0;
    CHECK_OK(ps_model_save_mem(m, &img, &len));
    ps_model_t *back = NULL;
    CHECK_OK(ps_model_load_mem(img, len, &back));
    ps_query_t q = {NULL, "resnet50", 8, 0, 16, "bert-base", 8, 0, 16, 54, 0};
    q.gpu = info.gpu;
    q.hp_tpcs = 27;
    q.lp_tpcs = 27;
    double h1, l1, h2, l2;
    CHECK_OK(ps_model_predict(m, ops, &q, 1, &h1, &l1));
    CHECK_OK(ps_model_predict(back, ops, &q, 1, &h2, &l2));
    CHECK(h1 == h2 && l1 == l2);
    img[20] ^= 1;
    ps_model_t *bad = NULL;
    CHECK(ps_model_load_mem(img, len, &bad) == PS_E_INPUT && bad == NULL);
    CHECK_MSG(strstr(ps_last_error(), "model in memory"), "%s", ps_last_error());
    ps_free(img);

    ps_model_t *a = NULL;
    CHECK_OK(ps_model_adapt_json(m, ops, cx, "{\"adapt_rounds\": 2, \"adapt_depth\": 1, \"nthread\": 1}", &a));
    ps_model_info_t ai;
    CHECK(a && ps_model_info(a, &ai) == 0 && ai.n_trees[0] == info.n_trees[0] + 2);
    ps_model_free(a);

    char *j = NULL;
    CHECK_OK(ps_plan_json(m, ops,
                          "{\"hp_model\": \"resnet50\", \"hp_batch\": 8, \"lp_model\": \"bert-base\", "
                          "\"lp_batch\": 8, \"budget_ns\": 1e12, \"coverage\": 0}",
                          &j));
    CHECK_MSG(j && strstr(j, "pairsight.plan.v1"), "%s", j ? j : "");
    ps_free(j);
    CHECK(ps_plan_json(m, ops, "{\"hp_model\": \"resnet50\", \"hp_batch\": 8}", &j) == PS_E_ARG);
    CHECK_OK(ps_replay_json(m, ops, NULL,
                            "{\"hp_model\": \"resnet50\", \"hp_batch\": 8, \"lp_model\": "
                            "\"bert-base\", \"lp_batch\": 8, \"requests\": 20, \"warmup\": 20, "
                            "\"policies\": \"dedicated,orion\"}",
                            &j));
    CHECK_MSG(j && strstr(j, "\"orion\":{") && strstr(j, "\"dedicated\":{") && !strstr(j, "\"static\""), "%s",
              j ? j : "");
    ps_free(j);
    ps_model_free(back);
    ps_model_free(m);
done:
    ps_ops_free(ops);
    ps_coexec_free(cx);
}

static void test_query_layout(void)
{
    char *j = NULL;
    CHECK_OK(ps_query_layout_json(&j));
    char want[64];
    snprintf(want, sizeof want, "\"size\":%zu", sizeof(ps_query_t));
    CHECK_MSG(j && strstr(j, want), "%s", j ? j : "");
    snprintf(want, sizeof want, "{\"name\":\"lp_tpcs\",\"type\":\"int\",\"offset\":%zu}",
             offsetof(ps_query_t, lp_tpcs));
    CHECK_MSG(j && strstr(j, want), "%s", j ? j : "");
    ps_free(j);
}

/* The operations (src/ops/op.c): every table row is usable by the CLI, the
 * service and Python (a name, bounds in order, a help, an offset inside the
 * parameter struct), the declaration is valid JSON naming each row, and the
 * run refuses an unknown operation, member or input. */
static void test_operations(void)
{
    int n_ops = 0;
    for (const char *name; (name = ps_op_name(n_ops)) != NULL; n_ops++) {
        int n = -1;
        const ps_param_t *rows = ps_op_params(name, &n);
        CHECK(n >= 0 && (n == 0 || rows != NULL));
        for (int i = 0; i < n; i++) {
            CHECK_MSG(rows[i].name && rows[i].help && rows[i].arg && rows[i].lo <= rows[i].hi, "%s row %d", name, i);
            for (int k = 0; k < i; k++)
                CHECK_MSG(strcmp(rows[i].name, rows[k].name) != 0, "%s: %s twice", name, rows[i].name);
        }
        char *j = NULL;
        CHECK_OK(ps_op_params_json(name, &j));
        for (int i = 0; j && i < n; i++) {
            char want[96];
            snprintf(want, sizeof want, "{\"name\":\"%s\",", rows[i].name);
            CHECK_MSG(strstr(j, want) != NULL, "%s", j);
        }
        ps_free(j);
    }
    CHECK(n_ops >= 2 && ps_op_params("plan", NULL) != NULL);
    const ps_param_t *plan = ps_op_params("plan", NULL);
    CHECK(strcmp(plan[0].name, "slo_ns") == 0 && plan[0].offset == offsetof(ps_plan_params_t, budget_ns));
    int n = 5;
    CHECK(ps_op_params("nope", &n) == NULL && n == 0);
    char *out = NULL;
    ps_op_inputs_t in = {0};
    CHECK(ps_op_run("nope", &in, NULL, &out) == PS_E_ARG && out == NULL);
    CHECK(strstr(ps_last_error(), "known: plan") != NULL);
    CHECK(ps_op_run("plan", &in, "{\"bogus\":1}", &out) == PS_E_ARG && strstr(ps_last_error(), "'bogus'"));
    CHECK(ps_op_run("plan", &in, "{\"slo_factor\":0.5}", &out) == PS_E_ARG &&
          strstr(ps_last_error(), "slo_factor: expected a number in 1..100"));
    CHECK(ps_op_run("plan", &in, "[1]", &out) == PS_E_ARG && out == NULL);
    CHECK(ps_op_run("plan", &in, "{\"hp\":\"a:1\",\"lp\":\"b:1\",\"slo_factor\":1.2}", &out) == PS_E_ARG &&
          out == NULL); /* no model */
    CHECK(strcmp(ps_op_inputs_names(), "model,ops,coloc,workloads,scaling,coexec") == 0);
    ps_plan_params_t pp = ps_plan_default_params();
    CHECK(ps_op_check("plan", &pp) == PS_E_ARG && strstr(ps_last_error(), "give one of slo_ns and slo_factor"));
    pp.slo_factor = 1.2;
    CHECK_OK(ps_op_check("plan", &pp));
    pp.coverage = 0.3;
    CHECK(ps_op_check("plan", &pp) == PS_E_ARG && strstr(ps_last_error(), "expected 0 or a number in 0.5..0.999"));
    CHECK(ps_op_check("nope", &pp) == PS_E_ARG && ps_op_check("plan", NULL) == PS_E_ARG);
}

TH_MAIN(TEST(test_builder_equals_file), TEST(test_builder_errors), TEST(test_workloads_key), TEST(test_params_json),
        TEST(test_model_json_and_mem), TEST(test_query_layout), TEST(test_operations))
