/*
 * The documented error codes of the API (include/pairsight.h), one table row
 * per call and case: each row makes the case its @return names and checks
 * the code the call gives, so that a header comment cannot drift from the
 * code again (ps_model_adapt's said PS_E_MISMATCH for another GPU where the
 * code gives PS_E_INPUT). A row whose call must fail leaves no output.
 */
#include "pairsight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOFILE "/nonexistent/pairsight/none.csv"
#define NOTTABLE "README.md" /* a file that is no table and no model */

static ps_ops_t *OPS;
static ps_coexec_t *CX;
static ps_model_t *MODEL;

static int table_check_io(void)
{
    ps_check_result_t r;
    return ps_table_check(NOFILE, &r);
}
static int table_detect_io(void)
{
    ps_table_kind_t k;
    return ps_table_detect(NOFILE, &k);
}
static int table_detect_input(void)
{
    ps_table_kind_t k;
    return ps_table_detect(NOTTABLE, &k);
}
static int ops_load_io(void)
{
    ps_ops_t *t = (ps_ops_t *)1;
    int rc = ps_ops_load(NOFILE, &t);
    return t ? 999 : rc;
}
static int ops_load_input(void)
{
    ps_ops_t *t = (ps_ops_t *)1;
    int rc = ps_ops_load("tests/data/coexec_small.csv", &t); /* another table */
    return t ? 999 : rc;
}
static int ops_save_io(void) { return ps_ops_save(OPS, "/nonexistent/pairsight/ops.csv"); }
static int import_run_arg(void)
{
    ps_import_params_t p = ps_import_default_params();
    ps_ops_t *t = (ps_ops_t *)1;
    int rc = ps_import_run("no-such-format", "tests/data/ncu_raw.csv", &p, &t, NULL);
    return t ? 999 : rc;
}
static int sim_run_arg(void)
{
    ps_sim_params_t p = ps_sim_default_params();
    p.gpu = "no-such-gpu";
    ps_ops_t *o = (ps_ops_t *)1;
    ps_coexec_t *c = (ps_coexec_t *)1;
    int rc = ps_sim_run(&p, &o, &c);
    return o || c ? 999 : rc;
}
static int variant_arg(void)
{
    ps_feature_variant_t v;
    return ps_feature_variant_from_name("no-such-variant", &v);
}
static int split_arg(void) { return ps_coexec_split(NULL, 1, NULL); }
static int model_load_io(void)
{
    ps_model_t *m = (ps_model_t *)1;
    int rc = ps_model_load(NOFILE, &m);
    return m ? 999 : rc;
}
static int model_load_input(void)
{
    ps_model_t *m = (ps_model_t *)1;
    int rc = ps_model_load(NOTTABLE, &m);
    return m ? 999 : rc;
}
/* rc when the message is want (the loaders of both model kinds share their
 * argument checks, src/model/model.c), 998 when it is another. */
static int said(int rc, const char *want) { return strcmp(ps_last_error(), want) == 0 ? rc : 998; }
static int model_mem_null_buffer(void)
{
    ps_model_t *m = (ps_model_t *)1;
    int rc = ps_model_load_mem(NULL, 1, &m);
    return m ? 999 : said(rc, "ps_model_load_mem: NULL buffer");
}
static int model_mem_null_out(void)
{
    return said(ps_model_load_mem((const unsigned char *)"x", 1, NULL), "ps_model_load_mem: NULL out");
}
static int coloc_mem_null_buffer(void)
{
    ps_coloc_model_t *m = (ps_coloc_model_t *)1;
    int rc = ps_coloc_model_load_mem(NULL, 1, &m);
    return m ? 999 : said(rc, "ps_coloc_model_load_mem: NULL buffer");
}
static int coloc_load_null_path(void)
{
    ps_coloc_model_t *m = (ps_coloc_model_t *)1;
    int rc = ps_coloc_model_load(NULL, &m);
    return m ? 999 : said(rc, "ps_coloc_model_load: NULL path");
}
static int model_info_arg(void)
{
    ps_model_info_t i;
    return ps_model_info(NULL, &i);
}
static int compose_arg(void)
{
    ps_compose_t c;
    return ps_compose_from_name("no-such-composition", &c);
}
static int method_arg(void)
{
    ps_method_t m;
    return ps_method_from_name("no-such-method", &m);
}
static int accuracy_arg(void)
{
    double v = 1;
    ps_accuracy_t a;
    return ps_accuracy(&v, &v, &v, &v, 0, &a);
}
static int coloc_kind_arg(void)
{
    ps_coloc_kind_t k;
    return ps_coloc_kind_from_name("no-such-kind", &k);
}
static int coloc_load_io(void)
{
    ps_coloc_model_t *m = (ps_coloc_model_t *)1;
    int rc = ps_coloc_model_load(NOFILE, &m);
    return m ? 999 : rc;
}
static int coloc_load_input(void)
{
    ps_coloc_model_t *m = (ps_coloc_model_t *)1;
    int rc = ps_coloc_model_load(NOTTABLE, &m);
    return m ? 999 : rc;
}
static int policies_arg(void)
{
    unsigned mask;
    return ps_replay_policies_parse("no-such-policy", &mask);
}
static int plan_json_arg(void)
{
    char *s = NULL;
    return ps_plan_to_json(NULL, &s);
}
static int model_save_io(void) { return ps_model_save(MODEL, "/nonexistent/pairsight/model.psm"); }
/* The fixed comment: rows of another GPU than the model's. */
static int adapt_other_gpu(void)
{
    ps_sim_params_t p = ps_sim_default_params();
    p.gpu = "h100";
    p.pairs = "resnet50:8/bert-base:8";
    p.experiments = 6;
    p.runs = 1;
    p.threads = 1;
    ps_ops_t *o = NULL;
    ps_coexec_t *c = NULL;
    if (ps_sim_run(&p, &o, &c) != PS_OK)
        return 998;
    ps_train_params_t tp = ps_train_default_params();
    tp.nthread = 1;
    ps_model_t *out = (ps_model_t *)1;
    int rc = ps_model_adapt(MODEL, o, c, &tp, &out);
    ps_ops_free(o);
    ps_coexec_free(c);
    return out ? 999 : rc;
}

static int query_parse_arg(void)
{
    char buf[] = "hp_model=resnet50,hp_batch=eight";
    ps_query_t q;
    return ps_query_parse(buf, &q);
}
static int outlock_acquire_arg(void)
{
    ps_outlock_t *l = (ps_outlock_t *)1;
    int rc = ps_outlock_acquire(NULL, 0, &l);
    return l ? 999 : rc;
}
static int outlock_acquire_io(void)
{
    ps_outlock_t *l = (ps_outlock_t *)1;
    int rc = ps_outlock_acquire("/nonexistent/pairsight/out.csv", 0, &l);
    return l ? 999 : rc;
}
static int check_workloads_arg(void) { return ps_table_check_workloads(NULL, PS_TABLE_COLOCATIONS, NULL, 0); }
static int check_workloads_io(void) { return ps_table_check_workloads(NOFILE, PS_TABLE_COLOCATIONS, NULL, 0); }
static int is_overlap_arg(void) { return ps_table_is_overlap(NULL); }
static int is_overlap_io(void) { return ps_table_is_overlap(NOFILE); }
static int colocations_append_arg(void) { return ps_colocations_append(NULL, NULL); }
static int colocations_ks_arg(void)
{
    unsigned ks = 7;
    int rc = ps_colocations_ks(NULL, &ks);
    return ks ? 999 : rc;
}
static int queries_load_arg(void)
{
    ps_queries_t *q = (ps_queries_t *)1;
    int rc = ps_queries_load(NULL, "A100-SXM4-40GB", &q);
    return q ? 999 : rc;
}
static int queries_load_io(void)
{
    ps_queries_t *q = (ps_queries_t *)1;
    int rc = ps_queries_load(NOFILE, "A100-SXM4-40GB", &q);
    return q ? 999 : rc;
}
static int queries_load_input(void)
{
    ps_queries_t *q = (ps_queries_t *)1;
    int rc = ps_queries_load(NOTTABLE, "A100-SXM4-40GB", &q);
    return q ? 999 : rc;
}
static int model_info_json_arg(void)
{
    char *out = (char *)1;
    int rc = ps_model_info_json(NULL, &out);
    return out ? 999 : rc;
}
static int train_summary_json_arg(void)
{
    char *out = (char *)1;
    int rc = ps_model_train_summary_json(NULL, "m.psm", &out);
    return out ? 999 : rc;
}
static int meta_json_compact_arg(void)
{
    char *out = (char *)1;
    int rc = ps_model_meta_json_compact(NULL, &out);
    return out ? 999 : rc;
}
static int replay_result_json_arg(void)
{
    char *out = (char *)1;
    ps_replay_result_t r = {0};
    ps_replay_params_t p = ps_replay_default_params(); /* without its models */
    int rc = ps_replay_result_json(&r, &p, &out);
    return out ? 999 : rc;
}

static int outfile_open_io(void)
{
    ps_outfile_t *f = (ps_outfile_t *)1;
    int rc = ps_outfile_open("/nonexistent/pairsight/out.csv", &f);
    return f ? 999 : rc;
}
static int outfile_open_arg(void)
{
    ps_outfile_t *f = (ps_outfile_t *)1;
    int rc = ps_outfile_open(NULL, &f);
    return f ? 999 : rc;
}

/* Collector front end (cmd_collect) and tables row by row. */
static int oplist_build_arg(void)
{
    ps_oplist_t *l = (ps_oplist_t *)1;
    int rc = ps_oplist_build("no-such-model", 8, 0, &l);
    return l ? 999 : rc;
}
static int oplist_read_io(void)
{
    ps_oplist_t *l = (ps_oplist_t *)1;
    int rc = ps_oplist_read(NOFILE, &l);
    return l ? 999 : rc;
}
static int oplist_read_input(void)
{
    ps_oplist_t *l = (ps_oplist_t *)1;
    int rc = ps_oplist_read(NOTTABLE, &l);
    return l ? 999 : rc;
}
static int oplist_write_arg(void) { return ps_oplist_write(NULL, stdout); }
static int oplist_info_arg(void)
{
    ps_oplist_info_t info;
    return ps_oplist_info(NULL, &info);
}
static int oplist_op_cost_arg(void)
{
    ps_oplist_t *l = NULL;
    int rc = ps_oplist_build("resnet50", 8, 0, &l);
    if (rc == 0) {
        ps_oplist_info_t info;
        double f = 0, b = 0;
        rc = ps_oplist_info(l, &info) == 0 && ps_oplist_op_cost(l, 0, &f, &b) == 0 && f > 0 && b > 0
                 ? ps_oplist_op_cost(l, info.n_ops, &f, &b)
                 : 999;
    }
    ps_oplist_free(l);
    return rc;
}
static int campaign_meta_get_arg(void)
{
    char buf[8];
    return ps_campaign_meta_get(NULL, "shard", buf, sizeof buf);
}
static int campaign_models_arg(void) { return ps_campaign_models(NULL, NULL, NULL); }
static int shard_parse_arg(void)
{
    int k = 0, n = 0;
    return ps_collect_shard_parse("3/2", &k, &n);
}
static char MERGE_DEST[64];
static int merge_arg(void)
{
    ps_collect_merge_stats_t st;
    const char *src[] = {NOFILE};
    return ps_collect_merge(MERGE_DEST, src, 0, &st);
}
static int merge_io(void)
{
    ps_collect_merge_stats_t st;
    const char *src[] = {NOFILE};
    return ps_collect_merge(MERGE_DEST, src, 1, &st);
}
static int merge_input(void)
{
    ps_collect_merge_stats_t st;
    const char *src[] = {NOTTABLE};
    int rc = ps_collect_merge(MERGE_DEST, src, 1, &st);
    FILE *f = fopen(MERGE_DEST, "r"); /* a dest it created is removed */
    if (f)
        fclose(f);
    return f ? 999 : rc;
}
static int shards_missing_arg(void)
{
    ps_collect_merge_stats_t st;
    return ps_campaign_shards_missing(NULL, &st);
}

/* cli eval, simulate, import twin, collect twin/score (issue 25, c25ev) */
static int experiments_parse_arg(void)
{
    int m;
    return ps_experiments_parse("accuracy,nope", &m);
}
static int eval_run_arg(void)
{
    ps_eval_params_t p = ps_eval_default_params(); /* no tables */
    ps_eval_t *e = (ps_eval_t *)1;
    int rc = ps_eval_run(&p, &e);
    return e ? 999 : rc;
}
static int eval_json_arg(void)
{
    char *js = NULL;
    return ps_eval_json(NULL, &js);
}
static int eval_print_arg(void) { return ps_eval_print(NULL, stdout); }
static int eval_report_arg(void) { return ps_eval_report_write(NULL, OPS, CX, NULL, "/nonexistent/r.html"); }
static int gpu_find_arg(void)
{
    ps_gpu_info_t g;
    return ps_gpu_find("no-such-gpu", &g);
}
static int gpu_at_arg(void)
{
    ps_gpu_info_t g;
    return ps_gpu_at(ps_gpu_count(), &g);
}
static int coexec_row_arg(void)
{
    ps_coexec_row_t r;
    return ps_coexec_row(CX, ps_coexec_rows(CX), &r);
}
static int segment_ns_input(void)
{
    double ns = 0;
    int rc = ps_ops_segment_ns(OPS, "A100-SXM4-40GB", "no-such-model", 8, 0, 1, 54, &ns);
    return ns == ns ? 999 : rc; /* NAN on failure */
}
static int segment_ns_arg(void) { return ps_ops_segment_ns(OPS, NULL, "resnet50", 8, 0, 1, 54, NULL); }
static int csv_open_io(void)
{
    ps_csv_t *c = NULL;
    int rc = ps_csv_open(NOFILE, &c);
    ps_csv_close(c);
    return c ? 999 : rc;
}
static int csv_open_arg(void)
{
    ps_csv_t *c = NULL;
    return ps_csv_open(NULL, &c);
}
static int derive_arg(void)
{
    FILE *f = fopen("/dev/null", "w");
    int rc = f ? ps_sim_derive_write(OPS, "no-such-gpu", f) : 999;
    if (f)
        fclose(f);
    return rc;
}
static int derive_input(void)
{
    FILE *f = fopen("/dev/null", "w");
    int rc = f ? ps_sim_derive_write(OPS, "a100", f) : 999; /* rows at fewer TPCs than the GPU's */
    if (f)
        fclose(f);
    return rc;
}
static int twin_predict_arg(void)
{
    ps_twin_pred_t out[1];
    return ps_sim_twin_predict("no-such-gpu", 128, NULL, 0, out);
}
static int twin_scale_arg(void)
{
    ps_ops_t *t = (ps_ops_t *)1;
    int at[1] = {1};
    int rc = ps_ops_twin_scale(OPS, "resnet50", 8, 54, NULL, at, 1, &t);
    return t ? 999 : rc;
}
static int import_ops_input(void)
{
    ps_import_params_t p = ps_import_default_params();
    p.model = "no-such-model";
    p.batch = 8;
    p.tpcs = 54;
    ps_import_info_t info;
    ps_ops_t *t = NULL;
    int rc = ps_import_ops("tests/data/ops_small.csv", &p, &t, &info);
    return t ? 999 : rc;
}

static void quiet(ps_log_level_t level, const char *msg, void *user)
{
    (void)level;
    (void)msg;
    (void)user;
}

typedef struct {
    const char *call, *when;
    int (*run)(void);
    int want;
} row_t;

/* ---- pairsight_overlap.h: overlap.csv, import abacus, the overlap predictor and its twin ---- */

#define OVERLAP "tests/data/overlap_small.csv"
static ps_overlap_t *OV;

static int overlap_load_io(void)
{
    ps_overlap_t *t = (ps_overlap_t *)1;
    int rc = ps_overlap_load(NOFILE, &t);
    return t ? 999 : rc;
}
static int overlap_load_input(void)
{
    ps_overlap_t *t = (ps_overlap_t *)1;
    int rc = ps_overlap_load(NOTTABLE, &t);
    return t ? 999 : rc;
}
static int overlap_load_arg(void)
{
    ps_overlap_t *t = (ps_overlap_t *)1;
    int rc = ps_overlap_load(NULL, &t);
    return t ? 999 : rc;
}
static int overlap_save_io(void) { return ps_overlap_save(OV, "/nonexistent/pairsight/overlap.csv"); }
static int overlap_save_arg(void) { return ps_overlap_save(NULL, "/nonexistent/pairsight/overlap.csv"); }
static int overlap_experiment_arg(void)
{
    ps_ov_experiment_t e;
    return ps_overlap_experiment(OV, ps_overlap_count(OV), &e);
}
static int abacus_import_arg(void)
{
    ps_overlap_t *t = (ps_overlap_t *)1;
    int rc = ps_abacus_import(NOFILE, NULL, &t, NULL);
    return t ? 999 : rc;
}
static int abacus_import_not_repo(void)
{
    ps_overlap_t *t = (ps_overlap_t *)1;
    ps_abacus_info_t info;
    int rc = ps_abacus_import(NOFILE, NULL, &t, &info);
    return t ? 999 : rc;
}
static int ov_protocol_arg(void)
{
    ps_ov_protocol_t p;
    return ps_ov_protocol_from_name("leave-one", &p);
}
static int ov_features_arg(void)
{
    unsigned m = 0;
    return ps_ov_features_parse("times,colour", &m);
}
static int ov_eval_arg(void)
{
    ps_ov_params_t p = ps_ov_default_params();
    ps_ov_result_t r;
    return ps_ov_eval(OV, PS_OVP_COUNT, &p, &r);
}
static int ov_eval_io(void)
{
    ps_ov_params_t p = ps_ov_default_params();
    p.oplists = "/nonexistent/pairsight/oplists";
    ps_ov_result_t r;
    return ps_ov_eval(OV, PS_OVP_RANDOM, &p, &r);
}
static int ov_train_io(void)
{
    ps_ov_params_t p = ps_ov_default_params();
    p.oplists = "/nonexistent/pairsight/oplists";
    ps_ov_model_t *m = (ps_ov_model_t *)1;
    int rc = ps_ov_train(OV, &p, &m);
    return m ? 999 : rc;
}
static int ov_train_arg(void)
{
    ps_ov_model_t *m = (ps_ov_model_t *)1;
    int rc = ps_ov_train(OV, NULL, &m);
    return m ? 999 : rc;
}
static int ov_predict_arg(void)
{
    double out[1];
    return ps_ov_predict(NULL, OV, NULL, out);
}
static int ov_save_arg(void) { return ps_ov_model_save(NULL, "/nonexistent/pairsight/overlap.model"); }
static int ov_model_load_io(void)
{
    ps_ov_model_t *m = (ps_ov_model_t *)1;
    int rc = ps_ov_model_load(NOFILE, &m);
    return m ? 999 : rc;
}
static int ov_model_load_input(void)
{
    ps_ov_model_t *m = (ps_ov_model_t *)1;
    int rc = ps_ov_model_load(NOTTABLE, &m);
    return m ? 999 : rc;
}
static int ovt_load_arg(void)
{
    ps_ovt_t *tw = (ps_ovt_t *)1;
    int rc = ps_ovt_load("tests/data/overlap_twin_oplists", "no-such-gpu", &tw);
    return tw ? 999 : rc;
}
static int ovt_load_io(void)
{
    ps_ovt_t *tw = (ps_ovt_t *)1;
    int rc = ps_ovt_load("/nonexistent/pairsight/oplists", "a100", &tw);
    return tw ? 999 : rc;
}
static int ovt_score_arg(void)
{
    ps_ovt_params_t p = ps_ovt_default_params();
    ps_ovt_score_t s;
    return ps_ovt_score(NULL, OV, &p, &p.mps, &s);
}
static int ovt_calibrate_arg(void)
{
    ps_ovt_params_t p = ps_ovt_default_params();
    ps_mps_params_t fit;
    double mape;
    return ps_ovt_calibrate(NULL, OV, &p, &fit, &mape);
}

static const row_t rows[] = {
    {"ps_table_check", "path cannot be read", table_check_io, PS_E_IO},
    {"ps_table_detect", "path cannot be read", table_detect_io, PS_E_IO},
    {"ps_table_detect", "no table's header", table_detect_input, PS_E_INPUT},
    {"ps_ops_load", "path cannot be read", ops_load_io, PS_E_IO},
    {"ps_ops_load", "another table", ops_load_input, PS_E_INPUT},
    {"ps_ops_save", "folder missing", ops_save_io, PS_E_IO},
    {"ps_import_run", "unknown format", import_run_arg, PS_E_ARG},
    {"ps_sim_run", "unknown GPU", sim_run_arg, PS_E_ARG},
    {"ps_feature_variant_from_name", "unknown name", variant_arg, PS_E_ARG},
    {"ps_coexec_split", "NULL argument", split_arg, PS_E_ARG},
    {"ps_model_load", "path cannot be read", model_load_io, PS_E_IO},
    {"ps_model_load", "not a model file", model_load_input, PS_E_INPUT},
    {"ps_model_load_mem", "NULL buffer", model_mem_null_buffer, PS_E_ARG},
    {"ps_model_load_mem", "NULL out", model_mem_null_out, PS_E_ARG},
    {"ps_coloc_model_load_mem", "NULL buffer", coloc_mem_null_buffer, PS_E_ARG},
    {"ps_coloc_model_load", "NULL path", coloc_load_null_path, PS_E_ARG},
    {"ps_model_info", "NULL argument", model_info_arg, PS_E_ARG},
    {"ps_compose_from_name", "unknown name", compose_arg, PS_E_ARG},
    {"ps_method_from_name", "unknown name", method_arg, PS_E_ARG},
    {"ps_accuracy", "n is 0", accuracy_arg, PS_E_ARG},
    {"ps_coloc_kind_from_name", "unknown name", coloc_kind_arg, PS_E_ARG},
    {"ps_coloc_model_load", "path cannot be read", coloc_load_io, PS_E_IO},
    {"ps_coloc_model_load", "not a model file", coloc_load_input, PS_E_INPUT},
    {"ps_replay_policies_parse", "unknown policy", policies_arg, PS_E_ARG},
    {"ps_plan_to_json", "NULL argument", plan_json_arg, PS_E_ARG},
    {"ps_model_save", "folder missing", model_save_io, PS_E_IO},
    {"ps_model_adapt", "rows of another GPU", adapt_other_gpu, PS_E_INPUT},
    {"ps_query_parse", "a bad number", query_parse_arg, PS_E_ARG},
    {"ps_model_info_json", "NULL argument", model_info_json_arg, PS_E_ARG},
    {"ps_model_train_summary_json", "NULL argument", train_summary_json_arg, PS_E_ARG},
    {"ps_model_meta_json_compact", "NULL argument", meta_json_compact_arg, PS_E_ARG},
    {"ps_replay_result_json", "NULL argument", replay_result_json_arg, PS_E_ARG},
    {"ps_outlock_acquire", "NULL argument", outlock_acquire_arg, PS_E_ARG},
    {"ps_outlock_acquire", "folder missing", outlock_acquire_io, PS_E_IO},
    {"ps_table_check_workloads", "NULL path", check_workloads_arg, PS_E_ARG},
    {"ps_table_check_workloads", "path cannot be read", check_workloads_io, PS_E_IO},
    {"ps_table_is_overlap", "NULL path", is_overlap_arg, PS_E_ARG},
    {"ps_table_is_overlap", "path cannot be read", is_overlap_io, PS_E_IO},
    {"ps_colocations_append", "NULL argument", colocations_append_arg, PS_E_ARG},
    {"ps_colocations_ks", "NULL argument", colocations_ks_arg, PS_E_ARG},
    {"ps_queries_load", "NULL argument", queries_load_arg, PS_E_ARG},
    {"ps_queries_load", "path cannot be read", queries_load_io, PS_E_IO},
    {"ps_queries_load", "not a queries file", queries_load_input, PS_E_INPUT},
    {"ps_outfile_open", "folder missing", outfile_open_io, PS_E_IO},
    {"ps_outfile_open", "NULL argument", outfile_open_arg, PS_E_ARG},
    {"ps_overlap_load", "path cannot be read", overlap_load_io, PS_E_IO},
    {"ps_overlap_load", "another table", overlap_load_input, PS_E_INPUT},
    {"ps_overlap_load", "NULL path", overlap_load_arg, PS_E_ARG},
    {"ps_overlap_save", "folder missing", overlap_save_io, PS_E_IO},
    {"ps_overlap_save", "NULL table", overlap_save_arg, PS_E_ARG},
    {"ps_overlap_experiment", "index out of range", overlap_experiment_arg, PS_E_ARG},
    {"ps_abacus_import", "NULL info", abacus_import_arg, PS_E_ARG},
    {"ps_abacus_import", "not a repository", abacus_import_not_repo, PS_E_IO},
    {"ps_ov_protocol_from_name", "unknown name", ov_protocol_arg, PS_E_ARG},
    {"ps_ov_features_parse", "unknown group", ov_features_arg, PS_E_ARG},
    {"ps_ov_eval", "invalid protocol", ov_eval_arg, PS_E_ARG},
    {"ps_ov_eval", "oplists cannot be read", ov_eval_io, PS_E_IO},
    {"ps_ov_train", "oplists cannot be read", ov_train_io, PS_E_IO},
    {"ps_ov_train", "NULL params", ov_train_arg, PS_E_ARG},
    {"ps_ov_predict", "NULL model", ov_predict_arg, PS_E_ARG},
    {"ps_ov_model_save", "NULL model", ov_save_arg, PS_E_ARG},
    {"ps_ov_model_load", "path cannot be read", ov_model_load_io, PS_E_IO},
    {"ps_ov_model_load", "not a model file", ov_model_load_input, PS_E_INPUT},
    {"ps_ovt_load", "unknown GPU", ovt_load_arg, PS_E_ARG},
    {"ps_ovt_load", "folder cannot be read", ovt_load_io, PS_E_IO},
    {"ps_ovt_score", "NULL twin", ovt_score_arg, PS_E_ARG},
    {"ps_ovt_calibrate", "NULL twin", ovt_calibrate_arg, PS_E_ARG},
    {"ps_oplist_build", "unknown model", oplist_build_arg, PS_E_ARG},
    {"ps_oplist_read", "path cannot be read", oplist_read_io, PS_E_IO},
    {"ps_oplist_read", "not an operator list", oplist_read_input, PS_E_INPUT},
    {"ps_oplist_write", "NULL list", oplist_write_arg, PS_E_ARG},
    {"ps_oplist_info", "NULL list", oplist_info_arg, PS_E_ARG},
    {"ps_oplist_op_cost", "past the last operator", oplist_op_cost_arg, PS_E_ARG},
    {"ps_campaign_meta_get", "NULL campaign", campaign_meta_get_arg, PS_E_ARG},
    {"ps_campaign_models", "NULL campaign", campaign_models_arg, PS_E_ARG},
    {"ps_collect_shard_parse", "K >= N", shard_parse_arg, PS_E_ARG},
    {"ps_collect_merge", "no sources", merge_arg, PS_E_ARG},
    {"ps_collect_merge", "a source cannot be read", merge_io, PS_E_IO},
    {"ps_collect_merge", "a source not a campaign", merge_input, PS_E_INPUT},
    {"ps_campaign_shards_missing", "NULL campaign", shards_missing_arg, PS_E_ARG},
    /* cli eval, simulate, import twin, collect twin/score (issue 25, c25ev) */
    {"ps_experiments_parse", "unknown experiment", experiments_parse_arg, PS_E_ARG},
    {"ps_eval_run", "no tables", eval_run_arg, PS_E_ARG},
    {"ps_eval_json", "NULL argument", eval_json_arg, PS_E_ARG},
    {"ps_eval_print", "NULL argument", eval_print_arg, PS_E_ARG},
    {"ps_eval_report_write", "NULL argument", eval_report_arg, PS_E_ARG},
    {"ps_gpu_find", "unknown GPU", gpu_find_arg, PS_E_ARG},
    {"ps_gpu_at", "out of range", gpu_at_arg, PS_E_ARG},
    {"ps_coexec_row", "out of range", coexec_row_arg, PS_E_ARG},
    {"ps_ops_segment_ns", "no such group", segment_ns_input, PS_E_INPUT},
    {"ps_ops_segment_ns", "NULL argument", segment_ns_arg, PS_E_ARG},
    {"ps_csv_open", "path cannot be read", csv_open_io, PS_E_IO},
    {"ps_csv_open", "NULL argument", csv_open_arg, PS_E_ARG},
    {"ps_sim_derive_write", "unknown GPU", derive_arg, PS_E_ARG},
    {"ps_sim_derive_write", "rows not of the whole GPU", derive_input, PS_E_INPUT},
    {"ps_sim_twin_predict", "unknown GPU", twin_predict_arg, PS_E_ARG},
    {"ps_ops_twin_scale", "NULL list", twin_scale_arg, PS_E_ARG},
    {"ps_import_ops", "no such rows", import_ops_input, PS_E_INPUT},
};

static int setup(void)
{
    ps_sim_params_t p = ps_sim_default_params();
    p.gpu = "a100";
    p.pairs = "resnet50:8/bert-base:8";
    p.experiments = 30;
    p.runs = 1;
    p.threads = 1;
    if (ps_sim_run(&p, &OPS, &CX) != PS_OK)
        return -1;
    ps_train_params_t tp = ps_train_default_params();
    tp.nthread = 1;
    tp.max_rounds = 5;
    tp.n_depths = 1;
    tp.depths[0] = 3;
    tp.n_etas = 1;
    tp.etas[0] = 0.3;
    if (ps_model_train(OPS, CX, &tp, &MODEL) != PS_OK)
        return -1;
    return ps_overlap_load(OVERLAP, &OV);
}

int main(void)
{
    ps_log_set(quiet, NULL);
    snprintf(MERGE_DEST, sizeof MERGE_DEST, "/tmp/pairsight_api_errors_%ld.db", (long)getpid());
    if (setup() != PS_OK) {
        fprintf(stderr, "test_api_errors: setup: %s\n", ps_last_error());
        return 1;
    }
    int fails = 0, n = (int)(sizeof rows / sizeof rows[0]);
    for (int i = 0; i < n; i++) {
        int got = rows[i].run();
        if (got != rows[i].want) {
            fprintf(stderr, "FAIL: %s (%s): got %d (%s), documented %d (%s); last error: %s\n", rows[i].call,
                    rows[i].when, got, ps_errstr(got), rows[i].want, ps_errstr(rows[i].want), ps_last_error());
            fails++;
        }
    }
    ps_overlap_free(OV);
    ps_model_free(MODEL);
    ps_ops_free(OPS);
    ps_coexec_free(CX);
    printf("test_api_errors: %d rows, %d failures\n", n, fails);
    return fails ? 1 : 0;
}
