/* pairsight adapt: continued training of a model on a few new experiments. */
#include "cli/cli.h"
#include "common/common.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_adapt_usage[] =
    "usage: pairsight adapt --model model.psm --ops ops.csv --coexec new.csv --out model2.psm [options]\n"
    "\n"
    "Add trees to both regressors of a model, fitted at a small learning rate on\n"
    "every row of new.csv (a few experiments of an unseen model or batch size).\n"
    "The input model is left unchanged.\n"
    "\n"
    "options:\n"
    "  --model FILE   model to adapt (required)\n"
    "  --ops FILE     standalone operator profile covering the new segments (required)\n"
    "  --coexec FILE  new co-executions (required)\n"
    "  --out FILE     adapted model to write (required; may equal --model)\n"
    "  --rounds N     trees added per regressor (default 30)\n"
    "  --eta X        learning rate of the added trees (default 0.05)\n"
    "  --depth N      max_depth of the added trees (default 1)\n"
    "  --threads N    training threads, 0 = all cores (default 0)\n"
    "  --json         print the summary as JSON (default: text)\n"
    "  -q             no progress on stderr (default: progress on a terminal)\n";

static void progress(const char *stage, double done, double total, void *user)
{
    cli_progress(*(int *)user, stage, done, total);
}

int cmd_adapt(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_adapt_usage, stdout);
        return CLI_OK;
    }
    const char *model_path = NULL, *ops_path = NULL, *cx_path = NULL, *out = NULL;
    int json = 0, quiet = 0;
    static const char *const value_flags[] = {"--model", "--ops",   "--coexec", "--out",
                                              "--rounds", "--eta", "--depth",  "--threads", NULL};
    ps_train_params_t p = ps_train_default_params();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int rc = cli_next_option("adapt", argc, argv, &i, value_flags, &json, &quiet, &v);
        if (rc != CLI_OK)
            return rc;
        if (!v)
            continue;
        if (strcmp(a, "--model") == 0) {
            model_path = v;
        } else if (strcmp(a, "--ops") == 0) {
            ops_path = v;
        } else if (strcmp(a, "--coexec") == 0) {
            cx_path = v;
        } else if (strcmp(a, "--out") == 0) {
            out = v;
        } else if (strcmp(a, "--rounds") == 0) {
            if (cli_parse_int(v, 1, 100000, &p.adapt_rounds))
                return cli_fail(CLI_USAGE, "adapt", "--rounds: bad value '%s' (want 1..100000)", v);
        } else if (strcmp(a, "--eta") == 0) {
            char *end = NULL;
            double e = strtod(v, &end);
            if (end == v || *end || !(e > 0 && e <= 1))
                return cli_fail(CLI_USAGE, "adapt", "--eta: bad value '%s' (want 0 < eta <= 1)", v);
            p.adapt_eta = e;
        } else if (strcmp(a, "--depth") == 0) {
            if (cli_parse_int(v, 1, 20, &p.adapt_depth))
                return cli_fail(CLI_USAGE, "adapt", "--depth: bad value '%s' (want 1..20)", v);
        } else if (strcmp(a, "--threads") == 0) {
            if (cli_parse_int(v, 0, thread_limit(), &p.nthread))
                return cli_fail(CLI_USAGE, "adapt", "--threads: bad value '%s' (want 0..%d)", v, thread_limit());
        } else {
            return cli_bad_option("adapt", a, NULL);
        }
    }
    if (!model_path || !ops_path || !cx_path || !out)
        return cli_fail(CLI_USAGE, "adapt", "--model, --ops, --coexec and --out are required (see --help)");
    /* --out may replace --model (the adapted model supersedes it), never the data. */
    const char *inputs[] = {ops_path, cx_path};
    int out_code = cli_check_out("adapt", out, inputs, 2);
    if (out_code != CLI_OK)
        return out_code;
    p.progress = progress;
    p.progress_user = &quiet;

    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    ps_model_t *m = NULL, *n = NULL;
    int code = CLI_BAD_INPUT;
    if (ps_model_load(model_path, &m) != 0 || ps_ops_load(ops_path, &ops) != 0 ||
        ps_coexec_load(cx_path, &cx) != 0) {
        cli_fail(CLI_BAD_INPUT, "adapt", "%s", ps_last_error());
        goto done;
    }
    int rc = ps_model_adapt(m, ops, cx, &p, &n);
    cli_progress_end(quiet);
    if (rc != 0 || ps_model_save(n, out) != 0) {
        cli_fail(CLI_BAD_INPUT, "adapt", "%s", ps_last_error());
        goto done;
    }
    ps_model_info_t i;
    ps_model_info(n, &i);
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", out);
        cJSON_AddNumberToObject(o, "samples", (double)i.adapt_samples);
        cJSON_AddNumberToObject(o, "seconds", i.adapt_seconds);
        cJSON_AddNumberToObject(o, "rounds", p.adapt_rounds);
        cJSON_AddNumberToObject(o, "eta", p.adapt_eta);
        cJSON_AddNumberToObject(o, "depth", p.adapt_depth);
        cJSON_AddNumberToObject(o, "hp_trees", i.n_trees[0]);
        cJSON_AddNumberToObject(o, "lp_trees", i.n_trees[1]);
        cJSON_AddNumberToObject(o, "passes", i.n_adapt);
        cli_put_json(o);
    } else {
        printf("model %s: adapted on %zu samples in %.2f s, +%d trees per side at eta %g "
               "(HP %d trees, LP %d trees, pass %d)\n",
               out, i.adapt_samples, i.adapt_seconds, p.adapt_rounds, p.adapt_eta, i.n_trees[0], i.n_trees[1],
               i.n_adapt);
    }
    code = CLI_OK;
done:
    ps_model_free(n);
    ps_model_free(m);
    ps_coexec_free(cx);
    ps_ops_free(ops);
    return code;
}
