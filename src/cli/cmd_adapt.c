/* pairsight adapt: continued training of a model on a few new experiments. */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const examples[] = {
    "pairsight adapt --model out/model.psm --ops out/ops.csv --coexec out/coexec.csv --out out/m2.psm --rounds 5",
    NULL};

/* JSON on stdout with --json (data), else a line on stderr unless -q. */
static void print_summary(const ps_model_t *n, const ps_train_params_t *pp, const char *out, int json, int quiet)
{
    const ps_train_params_t p = *pp;
    ps_model_info_t i;
    ps_model_info(n, &i);
    if (json) {
        cJSON *o = cli_json_new("adapt", 1);
        cJSON_AddStringToObject(o, "model", out);
        cJSON_AddNumberToObject(o, "samples", (double)i.adapt_samples);
        cJSON_AddNumberToObject(o, "seconds", i.adapt_seconds);
        cJSON_AddNumberToObject(o, "rounds", p.adapt_rounds);
        cJSON_AddNumberToObject(o, "eta", p.adapt_eta);
        cJSON_AddNumberToObject(o, "hp_depth", i.adapt_depth[0]);
        cJSON_AddNumberToObject(o, "lp_depth", i.adapt_depth[1]);
        cJSON_AddNumberToObject(o, "hp_trees", i.n_trees[0]);
        cJSON_AddNumberToObject(o, "lp_trees", i.n_trees[1]);
        cJSON_AddNumberToObject(o, "passes", i.n_adapt);
        cli_json_print(o, stdout);
    } else if (!quiet) {
        fprintf(stderr,
                "model %s: adapted on %zu samples in %.2f s, +%d trees per side at eta %g, depth HP %d, "
                "LP %d (HP %d trees, LP %d trees, pass %d)\n",
                out, i.adapt_samples, i.adapt_seconds, p.adapt_rounds, p.adapt_eta, i.adapt_depth[0], i.adapt_depth[1],
                i.n_trees[0], i.n_trees[1], i.n_adapt);
    }
}

int cmd_adapt(int argc, char **argv)
{
    const char *model_path = NULL, *ops_path = NULL, *cx_path = NULL, *out = NULL;
    int json = 0, quiet = 0;
    ps_train_params_t p = ps_train_default_params();
    cli_opt_t opts[] = {
        {"--model", CLI_STR, &model_path, "FILE", "model to adapt", .flags = CLI_REQ | CLI_IN},
        {"--ops", CLI_STR, &ops_path, "FILE", "standalone operator profile covering the new segments",
         .flags = CLI_REQ | CLI_IN},
        {"--coexec", CLI_STR, &cx_path, "FILE", "new co-executions", .flags = CLI_REQ | CLI_IN},
        {"--out", CLI_STR, &out, "FILE", "adapted model to write; may equal --model", .flags = CLI_REQ},
        {"--rounds", CLI_INT, &p.adapt_rounds, "N", "trees added per regressor", .lo = 1, .hi = 100000},
        {"--eta", CLI_DBL, &p.adapt_eta, "X", "learning rate of the added trees", .lo = 0, .hi = 1,
         .flags = CLI_LO_OPEN},
        {"--depth", CLI_INT, &p.adapt_depth, "N",
         "max_depth of the added trees; 0 = per side the one of 1, 2, 3 with the lowest error on held-out "
         "experiments of the new co-executions (1 with fewer than 5 experiments)",
         .lo = 0, .hi = 20},
        {"--threads", CLI_INT, &p.nthread, "N", "training threads, 0 = one below 20,000 rows, else all cores", .lo = 0,
         .hi = ps_thread_limit()},
        CLI_OPT_JSON(&json, "print the summary as JSON on stdout (default: text on stderr)"),
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    cli_spec_t spec = {.cmd = "adapt",
                       .synopsis = "--model FILE --ops FILE --coexec FILE --out FILE [options]",
                       .about = "Add trees to both regressors of a model, fitted at a small learning rate on\n"
                                "every row of the new co-executions (a few experiments of an unseen model or\n"
                                "batch size). The input model is left unchanged.\n",
                       .opts = opts,
                       .examples = examples,
                       .exit_status = "0 adapted and written, 1 bad input or training failed, 2 usage error.",
                       .max_pos = 0};
    int code;
    if (cli_parse(&spec, argc, argv, NULL, &code))
        return code;
    /* --out may replace --model (the adapted model supersedes it), never the data. */
    const char *inputs[] = {ops_path, cx_path};
    int out_code = cli_check_out("adapt", out, inputs, 2);
    if (out_code != CLI_OK)
        return out_code;
    p.progress = cli_progress_cb;
    p.progress_user = &quiet;

    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    ps_model_t *m = NULL, *n = NULL;
    code = CLI_BAD_INPUT;
    if (ps_model_load(model_path, &m) != 0 || ps_ops_load(ops_path, &ops) != 0 || ps_coexec_load(cx_path, &cx) != 0) {
        cli_fail(CLI_BAD_INPUT, "adapt", "%s", ps_last_error());
        goto done;
    }
    int rc = ps_model_adapt(m, ops, cx, &p, &n);
    cli_progress_end(quiet);
    if (rc != 0 || ps_model_save(n, out) != 0) {
        cli_fail(CLI_BAD_INPUT, "adapt", "%s", cli_locate_coexec_error(cx_path, ops));
        goto done;
    }
    print_summary(n, &p, out, json, quiet);
    code = CLI_OK;
done:
    ps_model_free(n);
    ps_model_free(m);
    ps_coexec_free(cx);
    ps_ops_free(ops);
    return code;
}
