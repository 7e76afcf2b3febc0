/* pairsight overlap eval: the makespan predictors of overlapped operator
 * groups under the protocols of docs/overlap.md. */
#include "cli/cli.h"
#include "pairsight_overlap.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const examples[] = {
    "pairsight overlap eval --overlap tests/data/overlap_small.csv --protocols random,leave-pair --rounds 20 "
    "--mlp-epochs 2 --json",
    NULL};

static const char notes[] = "Protocols (docs/overlap.md):\n"
                            "  random       Abacus's: a random 80/20 split of the 2-way dedicated experiments\n"
                            "  leave-pair   each 2-way dedicated combination held out in turn (pooled, and the worst)\n"
                            "  k-way        train on 2-way dedicated, score the 3- and 4-way dedicated\n"
                            "               (pairsight composes them from its pair predictions)\n"
                            "  leave-model  each model held out in turn; its single-active runs fit its solo times\n"
                            "  mig          train on 2-way dedicated, score 2-way in mig-2g.10gb; the MIG\n"
                            "               single-active runs fit the solo times there\n"
                            "Methods: pairsight (XGBoost on solo range times and how the co-runners\n"
                            "  compare), abacus_mlp and abacus_xgb (Abacus's features: model counts and\n"
                            "  start, end, batch, seq_len per model), max_solo, sum_solo. MAPE of the\n"
                            "  median time, in percent. Progress per held-out group with -v.\n"
                            "Floor: pairsight trained on a random 80% of the experiments the protocol\n"
                            "  scores (their own single runs for the solo times), scored on the rest: how\n"
                            "  well the features do on the target data itself.\n";

/* Parse "random,leave-pair" into want[]. */
static int parse_protocols(const char *list, int *want)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    memset(want, 0, PS_OVP_COUNT * sizeof *want);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        ps_ov_protocol_t k;
        if (ps_ov_protocol_from_name(p, &k) != PS_OK)
            return cli_fail(CLI_USAGE, "overlap eval",
                            "unknown protocol '%s' (random, leave-pair, k-way, leave-model, mig)", p);
        want[k] = 1;
    }
    return CLI_OK;
}

static int parse_features(const char *v, void *dest) { return ps_ov_features_parse(v, dest) == PS_OK ? 0 : -1; }

#define OPT_FEATURES(dest)                                                                                             \
    {                                                                                                                  \
        "--features", CLI_FN, (dest), "LIST", "pairsight's feature groups (docs/overlap.md)",                          \
            .def = PS_OV_FEATURES_DEFAULT, .parse = parse_features,                                                    \
            .accepts = "times, ratios, active, share, batch, ops, grain, comma-separated"                              \
    }

static void print_text(ps_ov_protocol_t p, const ps_ov_result_t *r)
{
    printf("%s\n  %-11s %8s %7s", ps_ov_protocol_name(p), "method", "MAPE %", "n");
    int worst = p == PS_OVP_LEAVE_PAIR || p == PS_OVP_LEAVE_MODEL;
    printf(worst ? "  worst held-out group\n" : "\n");
    for (int m = 0; m < PS_OVM_COUNT; m++) {
        printf("  %-11s %8.2f %7zu", ps_ov_method_name((ps_ov_method_t)m), r->mape[m], r->n[m]);
        if (worst && r->n[m])
            printf("  %.2f (%s)", r->worst[m], r->worst_name[m]);
        putchar('\n');
    }
    if (r->floor_n)
        printf("  %-11s %8.2f %7zu  pairsight trained on the scored data itself (random 80/20)\n", "floor", r->floor,
               r->floor_n);
}

static cJSON *result_json(ps_ov_protocol_t p, const ps_ov_result_t *r)
{
    cJSON *o = cJSON_CreateObject();
    if (o && r->floor_n) {
        cJSON *f = cJSON_AddObjectToObject(o, "floor");
        cJSON_AddNumberToObject(f, "mape", r->floor);
        cJSON_AddNumberToObject(f, "n", (double)r->floor_n);
    }
    for (int m = 0; o && m < PS_OVM_COUNT; m++) {
        cJSON *x = cJSON_AddObjectToObject(o, ps_ov_method_name((ps_ov_method_t)m));
        if (r->n[m])
            cJSON_AddNumberToObject(x, "mape", r->mape[m]);
        else
            cJSON_AddNullToObject(x, "mape");
        cJSON_AddNumberToObject(x, "n", (double)r->n[m]);
        if ((p == PS_OVP_LEAVE_PAIR || p == PS_OVP_LEAVE_MODEL) && r->n[m]) {
            cJSON_AddNumberToObject(x, "worst_mape", r->worst[m]);
            cJSON_AddStringToObject(x, "worst", r->worst_name[m]);
        }
    }
    return o;
}

static void log_all(ps_log_level_t level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    fprintf(stderr, "%s\n", msg);
}

static int do_eval(int argc, char **argv)
{
    ps_ov_params_t p = ps_ov_default_params();
    const char *path = NULL, *protocols = "random,leave-pair,k-way,leave-model,mig";
    int json = 0, verbose = 0;
    cli_opt_t opts[] = {
        {"--overlap", CLI_STR, &path, "FILE", "overlap.csv to learn from and score on", .flags = CLI_REQ | CLI_IN},
        {"--oplists", CLI_STR, &p.oplists, "DIR",
         "captured operator lists (module-path names) adding FLOPs, bytes and kernels per range", .def = "none"},
        {"--protocols", CLI_STR, &protocols, "LIST", "protocols to run, comma-separated"},
        {"--rounds", CLI_INT, &p.rounds, "N", "XGBoost rounds", .lo = 1, .hi = 100000},
        {"--depth", CLI_INT, &p.depth, "N", "XGBoost tree depth", .lo = 1, .hi = 20},
        {"--eta", CLI_DBL, &p.eta, "X", "XGBoost learning rate", .lo = 0, .hi = 1, .flags = CLI_LO_OPEN},
        {"--mlp-epochs", CLI_INT, &p.mlp_epochs, "N", "Abacus MLP epochs (0 skips it)", .lo = 0, .hi = 100000},
        {"--ridge", CLI_DBL, &p.ridge, "X", "solo table: ridge weight per experiment toward the uniform prior", .lo = 0,
         .hi = 1e6},
        {"--threads", CLI_INT, &p.threads, "N", "XGBoost threads", .lo = 1, .hi = 1024},
        {"--seed", CLI_U64, &p.seed, "N", "seed of the random split and of the MLP"},
        OPT_FEATURES(&p.features),
        {"--pairsight-only", CLI_FLAG, &p.pairsight_only, NULL, "skip abacus_mlp and abacus_xgb (a sweep)",
         .flags = CLI_NODEF},
        {"--setting-model", CLI_FLAG, &p.setting_model, NULL,
         "pairsight predicts every row with its setting model (scale-free features), as when its\n"
         "features were chosen by leave-pair",
         .flags = CLI_NODEF},
        {"--floors", CLI_INT, &p.floors, "N",
         "1: each protocol's floor too (pairsight trained on a random 80% of the data the protocol\n"
         "scores), 2: the floors alone, 0: none",
         .lo = 0, .hi = 2},
        {"-v", CLI_FLAG, &verbose, NULL, "one line per held-out group on stderr", .flags = CLI_NODEF},
        CLI_OPT_JSON(&json, "print {\"schema\", \"protocols\": {P: {METHOD: {\"mape\", \"n\"}}}}"),
        {NULL}};
    cli_spec_t spec = {.cmd = "overlap",
                       .sub = "eval",
                       .synopsis = "--overlap FILE [options]",
                       .about = "Scores the makespan predictors of k co-running operator-group ranges\n"
                                "(overlap.csv) under each protocol, every setting fixed beforehand.\n",
                       .opts = opts,
                       .examples = examples,
                       .notes = notes,
                       .max_pos = 0};
    int code, want[PS_OVP_COUNT];
    if (cli_parse(&spec, argc, argv, NULL, &code))
        return code;
    if ((code = parse_protocols(protocols, want)) != CLI_OK)
        return code;
    if (verbose)
        ps_log_set(log_all, NULL);
    ps_overlap_t *t = NULL;
    if (ps_overlap_load(path, &t) != 0)
        return cli_fail(CLI_BAD_INPUT, "overlap eval", "%s", ps_last_error());
    cJSON *o = json ? cli_json_new("overlap_eval", 1) : NULL, *ps = o ? cJSON_AddObjectToObject(o, "protocols") : NULL;
    if (o)
        cJSON_AddBoolToObject(o, "oplists", p.oplists != NULL);
    int rc = PS_OK;
    for (int k = 0; k < PS_OVP_COUNT && rc == PS_OK; k++) {
        ps_ov_result_t r;
        if (!want[k] || (rc = ps_ov_eval(t, (ps_ov_protocol_t)k, &p, &r)) != PS_OK)
            continue;
        if (ps)
            cJSON_AddItemToObject(ps, ps_ov_protocol_name((ps_ov_protocol_t)k), result_json((ps_ov_protocol_t)k, &r));
        else if (!json)
            print_text((ps_ov_protocol_t)k, &r);
        fflush(stdout);
    }
    ps_overlap_free(t);
    if (rc != PS_OK) {
        cJSON_Delete(o);
        return cli_fail(CLI_BAD_INPUT, "overlap eval", "%s", ps_last_error());
    }
    if (o)
        cli_json_print(o, stdout);
    return CLI_OK;
}

int cli_check_overlap(const char *path, int json, int quiet)
{
    ps_overlap_t *t = NULL;
    if (ps_overlap_load(path, &t) != 0)
        return cli_fail(CLI_BAD_INPUT, "check", "%s", ps_last_error());
    size_t rows = ps_overlap_rows(t), n = ps_overlap_count(t);
    if (json && !quiet) {
        cJSON *o = cli_json_new("check", 1);
        cJSON_AddStringToObject(o, "file", cli_user_path(path));
        cJSON_AddStringToObject(o, "table", "overlap");
        cJSON_AddNumberToObject(o, "rows", (double)rows);
        cJSON_AddNumberToObject(o, "groups", (double)n);
        cli_json_print(o, stdout);
    } else if (!quiet)
        printf("%s: overlap, %zu rows, %zu experiments\n", cli_user_path(path), rows, n);
    ps_overlap_free(t);
    return CLI_OK;
}

static int do_train(int argc, char **argv)
{
    ps_ov_params_t p = ps_ov_default_params();
    const char *path = NULL, *outp = NULL;
    int quiet = 0;
    cli_opt_t opts[] = {
        {"--overlap", CLI_STR, &path, "FILE", "overlap.csv to learn from", .flags = CLI_REQ | CLI_IN},
        {"--out", CLI_STR, &outp, "MODEL", "model file to write, atomically", .flags = CLI_REQ},
        {"--oplists", CLI_STR, &p.oplists, "DIR", "captured operator lists (FLOPs, bytes, kernels per range)",
         .def = "none"},
        {"--rounds", CLI_INT, &p.rounds, "N", "XGBoost rounds", .lo = 1, .hi = 100000},
        {"--depth", CLI_INT, &p.depth, "N", "XGBoost tree depth", .lo = 1, .hi = 20},
        {"--eta", CLI_DBL, &p.eta, "X", "XGBoost learning rate", .lo = 0, .hi = 1, .flags = CLI_LO_OPEN},
        {"--ridge", CLI_DBL, &p.ridge, "X", "solo table: ridge weight per experiment toward the uniform prior", .lo = 0,
         .hi = 1e6},
        {"--threads", CLI_INT, &p.threads, "N", "XGBoost threads", .lo = 1, .hi = 1024},
        {"--seed", CLI_U64, &p.seed, "N", "XGBoost's seed"},
        OPT_FEATURES(&p.features),
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    static const char *const ex[] = {
        "pairsight overlap train --overlap tests/data/overlap_small.csv --out out/overlap.model --rounds 20", NULL};
    cli_spec_t spec = {.cmd = "overlap",
                       .sub = "train",
                       .synopsis = "--overlap FILE --out MODEL [options]",
                       .about = "Fits the solo range times on FILE's single-active experiments and the\n"
                                "makespan predictor on every experiment whose solo times are known.\n",
                       .opts = opts,
                       .examples = ex,
                       .max_pos = 0};
    int code;
    if (cli_parse(&spec, argc, argv, NULL, &code))
        return code;
    if ((code = cli_check_out("overlap train", outp, &path, 1)) != CLI_OK)
        return code;
    ps_overlap_t *t = NULL;
    ps_ov_model_t *m = NULL;
    int rc = ps_overlap_load(path, &t);
    if (rc == PS_OK)
        rc = ps_ov_train(t, &p, &m);
    if (rc == PS_OK)
        rc = ps_ov_model_save(m, outp);
    if (rc == PS_OK && !quiet)
        fprintf(stderr, "%s: overlap predictor on %zu experiments, %zu solo keys\n", cli_user_path(outp),
                ps_overlap_count(t), ps_ov_model_solo_keys(m));
    ps_ov_model_free(m);
    ps_overlap_free(t);
    return rc == PS_OK ? CLI_OK : cli_fail(CLI_BAD_INPUT, "overlap train", "%s", ps_last_error());
}

/* experiment,predicted_us,median_us rows; MAPE over the known on stderr. */
static void print_predictions(FILE *f, const ps_overlap_t *t, const double *pred, int quiet)
{
    double err = 0;
    size_t n = 0, count = ps_overlap_count(t);
    fprintf(f, "experiment,predicted_us,median_us\n");
    for (size_t i = 0; i < count; i++) {
        ps_ov_experiment_t e;
        ps_overlap_experiment(t, i, &e);
        fprintf(f, "%s,", e.id);
        if (isfinite(pred[i])) {
            fprintf(f, "%.1f", pred[i]);
            err += fabs(pred[i] - e.median_us) / e.median_us;
            n++;
        }
        fprintf(f, ",%.17g\n", e.median_us);
    }
    if (!quiet)
        fprintf(stderr, "overlap predict: %zu of %zu experiments predicted, MAPE %.2f%% against median_us\n", n, count,
                n ? 100.0 * err / (double)n : NAN);
}

static int do_predict(int argc, char **argv)
{
    const char *path = NULL, *model = NULL, *oplists = NULL;
    int quiet = 0;
    cli_opt_t opts[] = {
        {"--model", CLI_STR, &model, "MODEL", "a model of pairsight overlap train", .flags = CLI_REQ},
        {"--overlap", CLI_STR, &path, "FILE", "overlap.csv whose experiments to predict", .flags = CLI_REQ | CLI_IN},
        {"--oplists", CLI_STR, &oplists, "DIR", "operator lists, when the model was trained with them", .def = "none"},
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    static const char *const ex[] = {
        "pairsight overlap train --overlap tests/data/overlap_small.csv --out out/overlap.model --rounds 20 -q && "
        "pairsight overlap predict --model out/overlap.model --overlap tests/data/overlap_small.csv > "
        "out/predicted.csv",
        NULL};
    cli_spec_t spec = {.cmd = "overlap",
                       .sub = "predict",
                       .synopsis = "--model MODEL --overlap FILE [options]",
                       .about = "Predicts the makespan of every experiment of FILE; prints\n"
                                "experiment,predicted_us,median_us (predicted_us empty where a slot's solo\n"
                                "time is unknown to the model) and the MAPE on stderr. A co-run of more\n"
                                "active processes than the model was trained on is composed from pairs:\n"
                                "longest solo + sum over the others of (pair with the longest - longest solo).\n",
                       .opts = opts,
                       .examples = ex,
                       .max_pos = 0};
    int code;
    if (cli_parse(&spec, argc, argv, NULL, &code))
        return code;
    ps_overlap_t *t = NULL;
    ps_ov_model_t *m = NULL;
    double *pred = NULL;
    int rc = ps_ov_model_load(model, &m);
    if (rc == PS_OK)
        rc = ps_overlap_load(path, &t);
    if (rc == PS_OK && !(pred = malloc(ps_overlap_count(t) * sizeof *pred + 1)))
        rc = PS_E_NOMEM;
    if (rc == PS_OK)
        rc = ps_ov_predict(m, t, oplists, pred);
    if (rc == PS_OK)
        print_predictions(stdout, t, pred, quiet);
    free(pred);
    ps_ov_model_free(m);
    ps_overlap_free(t);
    return rc == PS_OK ? CLI_OK : cli_fail(CLI_BAD_INPUT, "overlap predict", "%s", ps_last_error());
}

int cmd_overlap(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        printf(
            "usage: pairsight overlap train --overlap FILE --out MODEL [options]\n"
            "       pairsight overlap predict --model MODEL --overlap FILE [options]\n"
            "       pairsight overlap eval --overlap FILE [options]\n"
            "       pairsight overlap twin --overlap FILE --oplists DIR [options]\n"
            "Makespans of k co-running operator-group ranges (overlap.csv, docs/overlap.md).\n"
            "See pairsight overlap SUBCOMMAND --help.\n\n"
            "examples (from the source folder; tests/data/overlap_small.csv is made-up):\n"
            "  pairsight overlap train --overlap tests/data/overlap_small.csv --out out/overlap.model --rounds 20 -q\n"
            "  pairsight overlap predict --model out/overlap.model --overlap tests/data/overlap_small.csv -q\n"
            "  pairsight overlap eval --overlap tests/data/overlap_small.csv --protocols random,k-way --rounds 20 "
            "--mlp-epochs 2\n\n");
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    if (strcmp(argv[1], "eval") == 0)
        return do_eval(argc - 1, argv + 1);
    if (strcmp(argv[1], "train") == 0)
        return do_train(argc - 1, argv + 1);
    if (strcmp(argv[1], "predict") == 0)
        return do_predict(argc - 1, argv + 1);
    if (strcmp(argv[1], "twin") == 0) /* cmd_overlap_twin.c */
        return cmd_overlap_twin(argc - 1, argv + 1);
    return cli_fail(CLI_USAGE, "overlap", "unknown subcommand '%s' (train, predict, eval)", argv[1]);
}
