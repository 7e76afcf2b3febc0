/* pairsight plan: one HP request planned beside an LP task within a budget. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const examples[] = {
    "pairsight plan --model out/model.psm --ops out/ops.csv --hp resnet101:8 --lp bert-base:8,mobilenetv2:8 "
    "--slo-factor 1.2 --out plan.json",
    NULL};

typedef struct {
    ps_plan_params_t p;
    const char *model_path, *ops_path, *out, *lp_arg;
    int quiet;
    cli_model_batch_t hp;
} plan_args_t;

/* Parse the command line into a; 0 to go on, else the exit code in *code. */
static int parse_args(int argc, char **argv, plan_args_t *a, int *code)
{
    cli_opt_t opts[20] = {
        {"--model", CLI_STR, &a->model_path, "FILE", "trained, calibrated model", .flags = CLI_REQ | CLI_IN},
        {"--ops", CLI_STR, &a->ops_path, "FILE", "standalone operator profile", .flags = CLI_REQ | CLI_IN},
        CLI_OPT_HP(&a->hp, "the HP model; the request is its whole operator sequence"),
        {"--lp", CLI_STR, &a->lp_arg, "LIST",
         "LP candidates MODEL:BATCH[,...]; the one given the most LP work is planned", .flags = CLI_REQ},
        {"--gpu", CLI_STR, &a->p.gpu, "NAME", "GPU of the operators planned", .def = "the model's"}};
    int n = 5 + cli_op_opts("plan", &a->p, opts + 5, 12); /* --slo-ns ... --lp-lengths: the operation's table */
    opts[n++] = (cli_opt_t){"--out", CLI_STR, &a->out, "FILE", "plan JSON", .def = "standard output", .flags = CLI_OUT};
    opts[n++] = (cli_opt_t)CLI_OPT_QUIET(&a->quiet);
    opts[n] = (cli_opt_t){.name = NULL};
    cli_spec_t spec = {
        .cmd = "plan",
        .synopsis = "--model FILE --ops FILE --hp MODEL:BATCH --lp MODEL:BATCH[,...] (--slo-ns X | --slo-factor F)\n"
                    "[options]",
        .about = "Plan one HP request (every operator of the HP model) beside an LP task:\n"
                 "a dynamic program over segment boundaries (segments of half the model window,\n"
                 "the window or twice it), each segment alone on the whole GPU or beside an LP\n"
                 "segment under an SM split, maximizing LP work subject to the sum of the\n"
                 "steps' predicted upper bounds staying within the budget (docs/planner.md).\n"
                 "Writes one JSON plan: segments, splits, LP segments, predicted and upper\n"
                 "latencies.\n",
        .opts = opts,
        .examples = examples,
        .max_pos = 0};
    if (cli_parse(&spec, argc, argv, NULL, code))
        return 1;
    if ((a->p.budget_ns > 0) == (a->p.slo_factor > 0)) {
        *code = cli_fail(CLI_USAGE, "plan", "give one of --slo-ns and --slo-factor");
        return 1;
    }
    if (a->p.coverage > 0 && a->p.coverage < 0.5) {
        *code = cli_fail(CLI_USAGE, "plan", "--coverage: bad value '%g': expected 0 or a number in 0.5..0.999",
                         a->p.coverage);
        return 1;
    }
    a->p.hp_model = a->hp.name;
    a->p.hp_batch = a->hp.batch;
    return 0;
}

/* The plan with the most LP work over the LP candidates (ps_plan_best); the
 * exit code. */
static int plan_best(const ps_model_t *m, const ps_ops_t *ops, plan_args_t *a, ps_plan_t **best)
{
    char *lp_list = strdup(a->lp_arg);
    const char *lp[PS_PLAN_MAX_LP];
    size_t n = 0;
    if (!lp_list)
        return cli_fail(CLI_BAD_INPUT, "plan", "out of memory");
    int code = CLI_OK;
    for (char *s = strtok(lp_list, ","); s && code == CLI_OK; s = strtok(NULL, ",")) {
        cli_model_batch_t mb;
        if (cli_parse_model_batch(s, &mb) != 0)
            code = cli_fail(CLI_USAGE, "plan", "--lp: bad value '%s': expected MODEL:BATCH[,...]", s);
        else if (n == PS_PLAN_MAX_LP)
            code = cli_fail(CLI_USAGE, "plan", "--lp: more than %d LP candidates", PS_PLAN_MAX_LP);
        else
            lp[n++] = s;
    }
    if (code == CLI_OK && n == 0)
        code = cli_fail(CLI_USAGE, "plan", "--lp: no LP task given");
    if (code == CLI_OK) {
        if (ps_plan_best(m, ops, &a->p, lp, n, best) != 0)
            code = cli_fail(CLI_BAD_INPUT, "plan", "%s", ps_last_error());
    }
    free(lp_list);
    return code;
}

/* The plan JSON (with the HP model and the chosen LP task) to --out or
 * stdout; the exit code. */
static int write_plan(const plan_args_t *a, const ps_plan_t *best)
{
    char *json = NULL;
    if (ps_plan_to_json(best, &json) != 0)
        return cli_fail(CLI_BAD_INPUT, "plan", "%s", ps_last_error());
    int code = cli_write_json("plan", a->out, json);
    free(json);
    return code;
}

int cmd_plan(int argc, char **argv)
{
    plan_args_t a = {.p = ps_plan_default_params()};
    int code;
    if (parse_args(argc, argv, &a, &code))
        return code;
    if (a.out) {
        const char *inputs[] = {a.model_path, a.ops_path};
        int oc = cli_check_out("plan", a.out, inputs, 2);
        if (oc != CLI_OK)
            return oc;
    }
    ps_ops_t *ops = NULL;
    ps_model_t *m = NULL;
    ps_plan_t *best = NULL;
    if (ps_ops_load(a.ops_path, &ops) != 0 || ps_model_load(a.model_path, &m) != 0)
        code = cli_fail(CLI_BAD_INPUT, "plan", "%s", ps_last_error());
    else if ((code = plan_best(m, ops, &a, &best)) == CLI_OK)
        code = write_plan(&a, best);
    if (code == CLI_OK && !a.quiet)
        fprintf(stderr,
                "pairsight: plan: %zu steps, planned %.1f of %.1f us, LP work %.1f us, %ld predictions, %.1f ms\n",
                best->n_steps, best->planned_ns / 1e3, best->budget_ns / 1e3, best->lp_work_ns / 1e3,
                best->n_predictions, 1e3 * best->seconds);
    ps_plan_free(best);
    ps_model_free(m);
    ps_ops_free(ops);
    return code;
}
