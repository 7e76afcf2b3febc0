/* pairsight train: fit the PairSight segment model on a profiling campaign. */
#include "cli/cli.h"
#include "common/common.h"

#include <cjson/cJSON.h>
#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_train_usage[] =
    "usage: pairsight train --ops ops.csv --coexec coexec.csv --out model.psm [options]\n"
    "\n"
    "Train the segment model: two XGBoost regressors (HP and LP side) on log\n"
    "slowdown, split 80/10/10 by experiment, early stopping on the validation\n"
    "split, depth and learning rate chosen on validation MAPE.\n"
    "\n"
    "options:\n"
    "  --ops FILE         standalone operator profile (required)\n"
    "  --coexec FILE      measured co-executions, segments of at most --window ops (required)\n"
    "  --out FILE         model file to write (required)\n"
    "  --variant NAME     input: full, no-corunner, summed, durations, utilization (default full)\n"
    "  --window N         operator slots per side (default 16)\n"
    "  --seed N           experiment split seed (default 1)\n"
    "  --threads N        training threads, 0 = all cores (default 0)\n"
    "  --rounds N         most trees per regressor (default 400)\n"
    "  --early-stop N     rounds without validation gain before stopping (default 20)\n"
    "  --depths LIST      max_depth grid, up to 4 values (default 6,8)\n"
    "  --etas LIST        learning-rate grid, up to 4 values (default 0.1,0.3)\n"
    "  --json             print the training summary as JSON (default: text)\n"
    "  -q                 no progress on stderr (default: progress on a terminal)\n";

static const char *const variant_names[] = {"full", "no-corunner", "summed", "durations", "utilization"};

static void progress(const char *stage, double done, double total, void *user)
{
    cli_progress(*(int *)user, stage, done, total);
}

static void print_summary(const ps_model_info_t *i, const char *out, int json)
{
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", out);
        cJSON_AddStringToObject(o, "gpu", i->gpu);
        cJSON_AddStringToObject(o, "variant", variant_names[i->variant]);
        cJSON_AddNumberToObject(o, "window", i->window);
        cJSON_AddNumberToObject(o, "samples", (double)i->n_samples);
        cJSON_AddNumberToObject(o, "train", (double)i->n_train);
        cJSON_AddNumberToObject(o, "valid", (double)i->n_valid);
        cJSON_AddNumberToObject(o, "test", (double)i->n_test);
        cJSON_AddNumberToObject(o, "experiments", (double)i->n_experiments);
        cJSON_AddNumberToObject(o, "seconds", i->train_seconds);
        for (int s = 0; s < 2; s++) {
            cJSON *side = cJSON_AddObjectToObject(o, s ? "lp" : "hp");
            cJSON_AddNumberToObject(side, "depth", i->depth[s]);
            cJSON_AddNumberToObject(side, "eta", i->eta[s]);
            cJSON_AddNumberToObject(side, "trees", i->n_trees[s]);
            cJSON_AddNumberToObject(side, "valid_mape", i->valid_mape[s]);
            cJSON_AddNumberToObject(side, "test_mape", i->test_mape[s]);
        }
        cli_put_json(o);
        return;
    }
    printf("model %s: GPU %s, variant %s, window %d\n", out, i->gpu, variant_names[i->variant], i->window);
    printf("samples %zu (train %zu, valid %zu, test %zu) from %zu experiments, %.2f s\n", i->n_samples,
           i->n_train, i->n_valid, i->n_test, i->n_experiments, i->train_seconds);
    for (int s = 0; s < 2; s++)
        printf("%s: depth %d, eta %g, %d trees, validation MAPE %.2f%%, test MAPE %.2f%%\n",
               s ? "LP" : "HP", i->depth[s], i->eta[s], i->n_trees[s], i->valid_mape[s], i->test_mape[s]);
}

int cmd_train(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_train_usage, stdout);
        return CLI_OK;
    }
    const char *ops_path = NULL, *cx_path = NULL, *out = NULL;
    int json = 0, quiet = 0;
    static const char *const value_flags[] = {"--ops",     "--coexec", "--out",        "--variant",
                                              "--window",  "--seed",   "--threads",    "--rounds",
                                              "--early-stop", "--depths", "--etas", NULL};
    ps_train_params_t p = ps_train_default_params();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int bad = 0;
        int rc = cli_next_option("train", argc, argv, &i, value_flags, &json, &quiet, &v);
        if (rc != CLI_OK)
            return rc;
        if (!v)
            continue;
        if (strcmp(a, "--ops") == 0) {
            ops_path = v;
        } else if (strcmp(a, "--coexec") == 0) {
            cx_path = v;
        } else if (strcmp(a, "--out") == 0) {
            out = v;
        } else if (strcmp(a, "--variant") == 0) {
            bad = 1;
            for (int k = 0; k < (int)(sizeof variant_names / sizeof variant_names[0]); k++)
                if (strcmp(v, variant_names[k]) == 0) {
                    p.variant = (ps_feature_variant_t)k;
                    bad = 0;
                }
        } else if (strcmp(a, "--window") == 0) {
            bad = cli_parse_int(v, 1, 256, &p.window);
        } else if (strcmp(a, "--seed") == 0) {
            int s = 0;
            bad = cli_parse_int(v, 0, 1000000000L, &s);
            p.seed = (unsigned)s;
        } else if (strcmp(a, "--threads") == 0) {
            bad = cli_parse_int(v, 0, thread_limit(), &p.nthread);
        } else if (strcmp(a, "--rounds") == 0) {
            bad = cli_parse_int(v, 1, 100000, &p.max_rounds);
        } else if (strcmp(a, "--early-stop") == 0) {
            bad = cli_parse_int(v, 1, 100000, &p.early_stopping);
        } else if (strcmp(a, "--depths") == 0) {
            /* Whole numbers only; the library checks the range. */
            double d[4];
            bad = cli_parse_list(v, 0, 1000, 1, d, &p.n_depths);
            for (int k = 0; !bad && k < p.n_depths; k++)
                p.depths[k] = (int)d[k];
        } else if (strcmp(a, "--etas") == 0) {
            /* The library checks the range. */
            bad = cli_parse_list(v, -HUGE_VAL, HUGE_VAL, 0, p.etas, &p.n_etas);
        } else {
            return cli_bad_option("train", a, NULL);
        }
        if (bad)
            return cli_fail(CLI_USAGE, "train", "%s: bad value '%s'", a, v);
    }
    if (!ops_path || !cx_path || !out)
        return cli_fail(CLI_USAGE, "train", "--ops, --coexec and --out are required (see --help)");
    const char *inputs[] = {ops_path, cx_path};
    int out_code = cli_check_out("train", out, inputs, 2);
    if (out_code != CLI_OK)
        return out_code;
    p.progress = progress;
    p.progress_user = &quiet;

    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    ps_model_t *m = NULL;
    int code = CLI_BAD_INPUT;
    if (ps_ops_load(ops_path, &ops) != 0 || ps_coexec_load(cx_path, &cx) != 0) {
        cli_fail(CLI_BAD_INPUT, "train", "%s", ps_last_error());
        goto done;
    }
    int rc = ps_model_train(ops, cx, &p, &m);
    cli_progress_end(quiet);
    if (rc != 0 || ps_model_save(m, out) != 0) {
        cli_fail(CLI_BAD_INPUT, "train", "%s", ps_last_error());
        goto done;
    }
    ps_model_info_t info;
    ps_model_info(m, &info);
    print_summary(&info, out, json);
    code = CLI_OK;
done:
    ps_model_free(m);
    ps_coexec_free(cx);
    ps_ops_free(ops);
    return code;
}
