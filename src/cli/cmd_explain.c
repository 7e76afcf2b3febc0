/* pairsight explain: which operators of both segments drive one prediction. */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *owner_name(int owner) { return owner == 0 ? "hp" : owner == 1 ? "lp" : "input"; }

static void print_json(const ps_explanation_t *e)
{
    cJSON *o = cli_json_new("explain", 1);
    cJSON_AddNumberToObject(o, "hp_ns_pred", e->hp_ns);
    cJSON_AddNumberToObject(o, "lp_ns_pred", e->lp_ns);
    cJSON_AddNumberToObject(o, "hp_solo_ns", e->hp_solo_ns);
    cJSON_AddNumberToObject(o, "lp_solo_ns", e->lp_solo_ns);
    cJSON_AddNumberToObject(o, "hp_bias", e->bias[0]);
    cJSON_AddNumberToObject(o, "lp_bias", e->bias[1]);
    cJSON *a = cJSON_AddArrayToObject(o, "contributions");
    for (size_t i = 0; i < e->n; i++) {
        const ps_contribution_t *c = &e->items[i];
        cJSON *it = cJSON_CreateObject();
        cJSON_AddStringToObject(it, "regressor", c->side ? "lp" : "hp");
        cJSON_AddStringToObject(it, "owner", owner_name(c->owner));
        if (c->op >= 0)
            cJSON_AddNumberToObject(it, "op", c->op);
        cJSON_AddStringToObject(it, "name", c->name);
        cJSON_AddNumberToObject(it, "contribution", c->contribution);
        cJSON_AddItemToArray(a, it);
    }
    cli_json_print(o, stdout);
}

static void print_text(const ps_explanation_t *e, int top)
{
    printf("HP: %.0f ns predicted, %.0f ns standalone, slowdown %.4f\n", e->hp_ns, e->hp_solo_ns,
           e->hp_ns / e->hp_solo_ns);
    printf("LP: %.0f ns predicted, %.0f ns standalone, slowdown %.4f\n", e->lp_ns, e->lp_solo_ns,
           e->lp_ns / e->lp_solo_ns);
    for (int side = 0; side < 2; side++) {
        printf("\n%s regressor: contributions to log slowdown (bias %+.4f)\n", side ? "LP" : "HP", e->bias[side]);
        int shown = 0;
        for (size_t i = 0; i < e->n; i++) {
            const ps_contribution_t *c = &e->items[i];
            if (c->side != side || (top > 0 && shown >= top))
                continue;
            shown++;
            if (c->op >= 0)
                printf("  %+.4f  %s op %d %s%s\n", c->contribution, owner_name(c->owner), c->op, c->name,
                       c->owner != side ? " (co-runner)" : "");
            else
                printf("  %+.4f  %s\n", c->contribution, c->name);
        }
    }
}

static const char *const examples[] = {
    "pairsight explain --model out/model.psm --ops out/ops.csv --query hp_model=resnet50,hp_batch=8,hp_start=0,"
    "hp_len=12,lp_model=bert-base,lp_batch=8,lp_start=10,lp_len=16,hp_tpcs=27,lp_tpcs=27 --top 5",
    NULL};

int cmd_explain(int argc, char **argv)
{
    const char *model_path = NULL, *ops_path = NULL, *spec_text = NULL;
    int json = 0, quiet = 0, top = 10; /* explain shows no progress and no summary: -q changes nothing */
    cli_opt_t opts[] = {
        {"--model", CLI_STR, &model_path, "FILE", "trained model", .flags = CLI_REQ | CLI_IN},
        {"--ops", CLI_STR, &ops_path, "FILE", "standalone operator profile", .flags = CLI_REQ | CLI_IN},
        {"--query", CLI_STR, &spec_text, "SPEC", "the candidate, as key=value pairs (see above)", .flags = CLI_REQ},
        {"--top", CLI_INT, &top, "N", "items shown per regressor in text output, 0 = all", .lo = 0, .hi = 100000},
        CLI_OPT_JSON(&json, "print every item as JSON (default: text)"),
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    cli_spec_t cspec = {.cmd = "explain",
                        .synopsis = "--model FILE --ops FILE --query SPEC [options]",
                        .about = "Explain one prediction: XGBoost SHAP contributions (in log slowdown) of\n"
                                 "every input, folded back to the named operators of both segments, for the\n"
                                 "HP and the LP regressor. A positive value raises the predicted latency.\n"
                                 "Segments must fit in the model's window (16 operators by default).\n"
                                 "\n"
                                 "SPEC is a comma-separated list of coexec.csv key columns, e.g.\n"
                                 "  hp_model=resnet50,hp_batch=8,hp_start=0,hp_len=16,\n"
                                 "  lp_model=bert-base,lp_batch=8,lp_start=40,lp_len=16,hp_tpcs=30,lp_tpcs=24\n"
                                 "(gpu=NAME is optional and defaults to the model's GPU).\n",
                        .opts = opts,
                        .examples = examples,
                        .max_pos = 0};
    int code;
    if (cli_parse(&cspec, argc, argv, NULL, &code))
        return code;
    const char *spec = spec_text;
    char *buf = strdup(spec);
    if (!buf)
        return cli_fail(CLI_BAD_INPUT, "explain", "out of memory");
    ps_query_t q;
    memset(&q, 0, sizeof q);
    code = ps_query_parse(buf, &q) == PS_OK ? CLI_OK : cli_fail(CLI_USAGE, "explain", "--query: %s", ps_last_error());
    ps_model_t *m = NULL;
    ps_ops_t *ops = NULL;
    ps_explanation_t *e = NULL;
    if (code != CLI_OK)
        goto done;
    code = CLI_BAD_INPUT;
    ps_model_info_t info;
    if (ps_model_load(model_path, &m) != 0 || ps_ops_load(ops_path, &ops) != 0 || ps_model_info(m, &info) != 0) {
        cli_fail(CLI_BAD_INPUT, "explain", "%s", ps_last_error());
        goto done;
    }
    if (!q.gpu)
        q.gpu = info.gpu;
    /* The library names a query of a batch by its index ("query 0: ..."):
     * here there is only --query. */
    if (ps_model_check_query(m, ops, &q) != 0) {
        cli_fail(CLI_BAD_INPUT, "explain", "--query: %s", ps_last_error());
        goto done;
    }
    if (ps_model_explain(m, ops, &q, &e) != 0) {
        cli_fail(CLI_BAD_INPUT, "explain", "%s", ps_last_error());
        goto done;
    }
    if (json)
        print_json(e);
    else
        print_text(e, top);
    code = CLI_OK;
done:
    ps_explanation_free(e);
    ps_ops_free(ops);
    ps_model_free(m);
    free(buf);
    return code;
}
