/* pairsight plan: one HP request planned beside an LP task within a budget. */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_plan_usage[] =
    "usage: pairsight plan --model model.psm --ops ops.csv --hp MODEL:BATCH --lp MODEL:BATCH[,...]\n"
    "                      (--slo-ns X | --slo-factor F) [options]\n"
    "\n"
    "Plan one HP request (every operator of the HP model) beside an LP task:\n"
    "segments of at most the model window, each alone on the whole GPU or beside\n"
    "an LP segment under an SM split, maximizing LP work subject to the sum of\n"
    "the steps' predicted upper bounds staying within the budget\n"
    "(docs/planner.md). With several LP tasks the one given the most LP work is\n"
    "planned. Writes one JSON plan (schema pairsight.plan/1).\n"
    "\n"
    "options:\n"
    "  --model FILE        trained, calibrated model (required)\n"
    "  --ops FILE          standalone operator profile (required)\n"
    "  --hp MODEL:BATCH    the HP model (required)\n"
    "  --lp LIST           LP candidates MODEL:BATCH[,...] (required)\n"
    "  --slo-ns X          the request's latency budget in ns\n"
    "  --slo-factor F      budget = F x the HP request alone (sum of its standalone\n"
    "                      durations on the whole GPU plus --alone-run-ns)\n"
    "  --coverage C        plan on upper bounds at coverage C; 0 = point predictions\n"
    "                      (default 0.95)\n"
    "  --lp-start N        LP operator the LP stream stands at (default 0)\n"
    "  --alone-run-ns X    fixed cost of each run of HP alone (default 0)\n"
    "  --out FILE          plan JSON (default: standard output)\n";

int cmd_plan(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_plan_usage, stdout);
        return CLI_OK;
    }
    static const char *const value_flags[] = {"--model",    "--ops",      "--hp",       "--lp",
                                              "--slo-ns",   "--slo-factor", "--coverage", "--lp-start",
                                              "--alone-run-ns", "--out",  NULL};
    ps_plan_params_t p = ps_plan_default_params();
    const char *model_path = NULL, *ops_path = NULL, *out = NULL;
    char *lp_list = NULL;
    double slo_ns = 0, slo_factor = 0;
    int have_hp = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int rc = cli_next_option("plan", argc, argv, &i, value_flags, NULL, NULL, &v);
        if (rc != CLI_OK)
            return rc;
        if (!v)
            continue;
        int bad = 0, nd = 0;
        double d[4] = {0};
        if (strcmp(a, "--model") == 0)
            model_path = v;
        else if (strcmp(a, "--ops") == 0)
            ops_path = v;
        else if (strcmp(a, "--out") == 0)
            out = v;
        else if (strcmp(a, "--hp") == 0)
            bad = cli_parse_model_batch(argv[i], &p.hp_model, &p.hp_batch), have_hp = 1;
        else if (strcmp(a, "--lp") == 0)
            lp_list = argv[i];
        else if (strcmp(a, "--slo-ns") == 0)
            bad = cli_parse_list(v, 1, 1e15, 0, d, &nd) || nd != 1, slo_ns = d[0];
        else if (strcmp(a, "--slo-factor") == 0)
            bad = cli_parse_list(v, 1, 100, 0, d, &nd) || nd != 1, slo_factor = d[0];
        else if (strcmp(a, "--coverage") == 0)
            bad = cli_parse_list(v, 0, 0.999, 0, d, &nd) || nd != 1 || (d[0] > 0 && d[0] < 0.5), p.coverage = d[0];
        else if (strcmp(a, "--alone-run-ns") == 0)
            bad = cli_parse_list(v, 0, 1e12, 0, d, &nd) || nd != 1, p.alone_run_ns = d[0];
        else if (strcmp(a, "--lp-start") == 0)
            bad = cli_parse_int(v, 0, 1000000, &p.lp_start);
        if (bad)
            return cli_fail(CLI_USAGE, "plan", "%s: bad value '%s'", a, v);
    }
    if (!model_path || !ops_path || !have_hp || !lp_list)
        return cli_fail(CLI_USAGE, "plan", "--model, --ops, --hp and --lp are required (see --help)");
    if ((slo_ns > 0) == (slo_factor > 0))
        return cli_fail(CLI_USAGE, "plan", "give one of --slo-ns and --slo-factor");
    if (out) {
        const char *inputs[] = {model_path, ops_path};
        int oc = cli_check_out("plan", out, inputs, 2);
        if (oc != CLI_OK)
            return oc;
    }
    ps_ops_t *ops = NULL;
    ps_model_t *m = NULL;
    ps_plan_t *best = NULL;
    char *json = NULL;
    int code = CLI_BAD_INPUT;
    if (ps_ops_load(ops_path, &ops) != 0 || ps_model_load(model_path, &m) != 0) {
        cli_fail(CLI_BAD_INPUT, "plan", "%s", ps_last_error());
        goto done;
    }
    const char *best_lp = NULL;
    int best_batch = 0;
    for (char *s = strtok(lp_list, ","); s; s = strtok(NULL, ",")) {
        if (cli_parse_model_batch(s, &p.lp_model, &p.lp_batch) != 0) {
            code = cli_fail(CLI_USAGE, "plan", "--lp: expected MODEL:BATCH[,...]");
            goto done;
        }
        /* The alone estimate does not depend on the LP task: a first plan
         * with a huge budget gives it when only the factor is known. */
        p.budget_ns = slo_ns > 0 ? slo_ns : 1e18;
        ps_plan_t *pl = NULL;
        if (ps_plan(m, ops, &p, &pl) != 0) {
            cli_fail(CLI_BAD_INPUT, "plan", "%s", ps_last_error());
            goto done;
        }
        if (slo_factor > 0) {
            p.budget_ns = slo_factor * pl->alone_ns;
            ps_plan_free(pl);
            pl = NULL;
            if (ps_plan(m, ops, &p, &pl) != 0) {
                cli_fail(CLI_BAD_INPUT, "plan", "%s", ps_last_error());
                goto done;
            }
        }
        if (!best || pl->lp_work_ns > best->lp_work_ns) {
            ps_plan_free(best);
            best = pl;
            best_lp = p.lp_model;
            best_batch = p.lp_batch;
        } else {
            ps_plan_free(pl);
        }
    }
    if (!best) {
        code = cli_fail(CLI_USAGE, "plan", "--lp: no LP task given");
        goto done;
    }
    if (ps_plan_to_json(best, &json) != 0) {
        cli_fail(CLI_BAD_INPUT, "plan", "%s", ps_last_error());
        goto done;
    }
    /* The chosen LP task and the HP model, beside the plan. */
    cJSON *o = cJSON_Parse(json);
    free(json);
    json = NULL;
    if (o) {
        cJSON_AddStringToObject(o, "hp_model", p.hp_model);
        cJSON_AddNumberToObject(o, "hp_batch", p.hp_batch);
        cJSON_AddStringToObject(o, "lp_model", best_lp);
        cJSON_AddNumberToObject(o, "lp_batch", best_batch);
        json = cJSON_Print(o);
        cJSON_Delete(o);
    }
    if (!json) {
        cli_fail(CLI_BAD_INPUT, "plan", "out of memory");
        goto done;
    }
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f || fputs(json, f) < 0 || fputc('\n', f) < 0 || (out && fclose(f) != 0)) {
        cli_fail(CLI_BAD_INPUT, "plan", "%s: cannot write", out ? out : "standard output");
        goto done;
    }
    fprintf(stderr, "pairsight: plan: %zu steps, planned %.1f of %.1f us, LP work %.1f us, %ld predictions, %.1f ms\n",
            best->n_steps, best->planned_ns / 1e3, best->budget_ns / 1e3, best->lp_work_ns / 1e3,
            best->n_predictions, 1e3 * best->seconds);
    code = CLI_OK;
done:
    free(json);
    ps_plan_free(best);
    ps_model_free(m);
    ps_ops_free(ops);
    return code;
}
