/* pairsight plan: one HP request planned beside an LP task within a budget. */
#include "cli/cli.h"

#include "common/common.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const examples[] = {
    "pairsight plan --model out/model.psm --ops out/ops.csv --hp resnet101:8 --lp bert-base:8,mobilenetv2:8 "
    "--slo-factor 1.2 --out plan.json",
    NULL};

int cmd_plan(int argc, char **argv)
{
    ps_plan_params_t p = ps_plan_default_params();
    const char *model_path = NULL, *ops_path = NULL, *out = NULL, *lp_arg = NULL;
    double slo_ns = 0, slo_factor = 0;
    int quiet = 0;
    cli_model_batch_t hp = {{0}, 0};
    cli_opt_t opts[] = {
        {"--model", CLI_STR, &model_path, "FILE", "trained, calibrated model", .flags = CLI_REQ | CLI_IN},
        {"--ops", CLI_STR, &ops_path, "FILE", "standalone operator profile", .flags = CLI_REQ | CLI_IN},
        {"--hp", CLI_FN, &hp, "MODEL:BATCH", "the HP model; the request is its whole operator sequence",
         .parse = cli_parse_model_batch, .accepts = "MODEL:BATCH, e.g. resnet101:8", .flags = CLI_REQ},
        {"--lp", CLI_STR, &lp_arg, "LIST", "LP candidates MODEL:BATCH[,...]; the one given the most LP work is planned",
         .flags = CLI_REQ},
        {"--slo-ns", CLI_DBL, &slo_ns, "X", "the request's latency budget in ns", .lo = 1, .hi = 1e15, .def = "none"},
        {"--slo-factor", CLI_DBL, &slo_factor, "F",
         "budget = F x the request alone (its operators' standalone durations on the whole GPU plus --alone-run-ns)",
         .lo = 1, .hi = 100, .def = "none"},
        {"--coverage", CLI_DBL, &p.coverage, "C",
         "plan on calibrated upper bounds at coverage C; 0 = point predictions", .lo = 0, .hi = 0.999},
        {"--lp-start", CLI_INT, &p.lp_start, "N", "LP operator the LP stream stands at", .lo = 0, .hi = 1000000},
        {"--alone-run-ns", CLI_DBL, &p.alone_run_ns, "X", "fixed cost of each run of HP alone", .lo = 0, .hi = 1e12},
        {"--time-value", CLI_DBL, &p.time_value, "V",
         "LP work an HP ns is otherwise worth (1 when LP runs alone whenever HP is idle)", .lo = 0, .hi = 100},
        {"--out", CLI_STR, &out, "FILE", "plan JSON", .def = "standard output", .flags = CLI_OUT},
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    cli_spec_t spec = {
        .cmd = "plan",
        .synopsis = "--model FILE --ops FILE --hp MODEL:BATCH --lp MODEL:BATCH[,...] (--slo-ns X | --slo-factor F)\n"
                    "[options]",
        .about = "Plan one HP request (every operator of the HP model) beside an LP task:\n"
                 "segments of at most the model window, each alone on the whole GPU or beside\n"
                 "an LP segment under an SM split, maximizing LP work subject to the sum of the\n"
                 "steps' predicted upper bounds staying within the budget (docs/planner.md).\n"
                 "Writes one JSON plan: segments, splits, LP segments, predicted and upper\n"
                 "latencies.\n",
        .opts = opts,
        .examples = examples,
        .max_pos = 0};
    int code;
    if (cli_parse(&spec, argc, argv, NULL, &code))
        return code;
    if ((slo_ns > 0) == (slo_factor > 0))
        return cli_fail(CLI_USAGE, "plan", "give one of --slo-ns and --slo-factor");
    if (p.coverage > 0 && p.coverage < 0.5)
        return cli_fail(CLI_USAGE, "plan", "--coverage: bad value '%g': expected 0 or a number in 0.5..0.999",
                        p.coverage);
    p.hp_model = hp.name;
    p.hp_batch = hp.batch;
    char *lp_list = psi_strdup(lp_arg);
    if (!lp_list)
        return cli_fail(CLI_BAD_INPUT, "plan", "out of memory");
    if (out) {
        const char *inputs[] = {model_path, ops_path};
        int oc = cli_check_out("plan", out, inputs, 2);
        if (oc != CLI_OK) {
            free(lp_list);
            return oc;
        }
    }
    ps_ops_t *ops = NULL;
    ps_model_t *m = NULL;
    ps_plan_t *best = NULL;
    char *json = NULL;
    if (ps_ops_load(ops_path, &ops) != 0 || ps_model_load(model_path, &m) != 0) {
        cli_fail(CLI_BAD_INPUT, "plan", "%s", ps_last_error());
        goto done;
    }
    cli_model_batch_t lp = {{0}, 0}, best_lp = {{0}, 0};
    code = CLI_BAD_INPUT;
    for (char *s = strtok(lp_list, ","); s; s = strtok(NULL, ",")) {
        if (cli_parse_model_batch(s, &lp) != 0) {
            code = cli_fail(CLI_USAGE, "plan", "--lp: bad value '%s': expected MODEL:BATCH[,...]", s);
            goto done;
        }
        p.lp_model = lp.name;
        p.lp_batch = lp.batch;
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
            best_lp = lp;
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
    if (!o) {
        cli_fail(CLI_BAD_INPUT, "plan", "out of memory");
        goto done;
    }
    cJSON_AddStringToObject(o, "hp_model", p.hp_model);
    cJSON_AddNumberToObject(o, "hp_batch", p.hp_batch);
    cJSON_AddStringToObject(o, "lp_model", best_lp.name);
    cJSON_AddNumberToObject(o, "lp_batch", best_lp.batch);
    psi_atomic_t *a = NULL;
    if (out && psi_atomic_open(out, &a) != 0) {
        cJSON_Delete(o);
        cli_fail(CLI_BAD_INPUT, "plan", "%s", ps_last_error());
        goto done;
    }
    int bad = cli_json_print(o, a ? psi_atomic_stream(a) : stdout) != 0;
    if (a ? psi_atomic_commit(a) != 0 || bad : bad || fflush(stdout) != 0) {
        cli_fail(CLI_BAD_INPUT, "plan", "%s", a ? ps_last_error() : "writing standard output failed");
        goto done;
    }
    if (!quiet)
        fprintf(stderr,
                "pairsight: plan: %zu steps, planned %.1f of %.1f us, LP work %.1f us, %ld predictions, %.1f ms\n",
                best->n_steps, best->planned_ns / 1e3, best->budget_ns / 1e3, best->lp_work_ns / 1e3,
                best->n_predictions, 1e3 * best->seconds);
    code = CLI_OK;
done:
    free(json);
    free(lp_list);
    ps_plan_free(best);
    ps_model_free(m);
    ps_ops_free(ops);
    return code;
}
