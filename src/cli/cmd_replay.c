/* pairsight replay: decisions measured end to end on the simulator's physics. */
#include "cli/cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CLI_FN: "MODEL:BATCH" into a cli_model_batch_t (pairsight plan and replay). */
int cli_parse_model_batch(const char *v, void *dest)
{
    cli_model_batch_t *mb = dest;
    return ps_model_batch_parse(v, mb->name, &mb->batch) == 0 ? 0 : -1;
}

static int parse_policies(const char *v, void *dest) { return ps_replay_policies_parse(v, dest) == 0 ? 0 : -1; }

static void print_text(const ps_replay_result_t *r, const ps_replay_params_t *p)
{
    printf("replay %s:%d beside %s:%d, %zu requests, load %.2f, seed %llu: dedicated %.1f us, budget %.1f us\n",
           p->hp_model, p->hp_batch, p->lp_model, p->lp_batch, r->requests, p->load, (unsigned long long)p->seed,
           r->dedicated_ns / 1e3, r->slo_ns / 1e3);
    printf("%-16s %8s %10s %10s %8s %8s %8s %8s %8s %9s\n", "policy", "SLO%", "p50 us", "p99 us", "LP tput", "LP idle",
           "LP colo", "busy", "kept%", "plan us");
    for (int i = 0; i < PS_REPLAY_N; i++) {
        const ps_replay_policy_result_t *q = &r->pol[i];
        if (!q->ran)
            continue;
        printf("%-16s %8.2f %10.1f %10.1f %8.3f %8.3f %8.3f %8.3f %8.2f %9.0f", ps_replay_policy_name(i),
               100 * q->slo_attainment, q->hp_p50_ns / 1e3, q->hp_p99_ns / 1e3, q->lp_throughput, q->lp_idle,
               q->lp_colo, q->gpu_busy, 100 * q->budget_kept, q->plan_us);
        if (i == PS_REPLAY_ORION)
            printf("  (LP SM threshold %d TPCs)", q->orion_tpcs);
        else if (i >= PS_REPLAY_INTENSITY && q->stretch >= 1e8)
            printf("  (stretch none)");
        else if (i >= PS_REPLAY_INTENSITY)
            printf("  (stretch %g)", q->stretch);
        putchar('\n');
    }
    if (isfinite(r->lp_ceiling))
        printf("ceiling: no policy's LP throughput exceeds %.2fx orion's; %gx orion's needs an LP rate beside HP "
               "of at least %.3f (docs/planner.md)\n",
               r->lp_ceiling, p->goal_ratio, r->lp_rate_needed);
}

/* The result as JSON, as the library writes it with the run's parameters;
 * the exit code. */
static int print_json(const ps_replay_result_t *r, const ps_replay_params_t *p)
{
    char *text = NULL;
    if (ps_replay_result_json(r, p, &text) != PS_OK)
        return cli_fail(CLI_BAD_INPUT, "replay", "%s", ps_last_error());
    printf("%s\n", text);
    ps_free(text);
    return CLI_OK;
}

/* Every policy's latency per request as CSV, through a temporary file beside
 * path renamed over it (locked, every write checked): a failed or
 * interrupted run leaves the old file as it was. The exit code. */
static int write_latencies(const char *path, const ps_replay_result_t *r)
{
    ps_outfile_t *at = NULL;
    if (ps_outfile_open(path, &at) != 0)
        return cli_fail(CLI_BAD_INPUT, "replay", "--latencies: %s", ps_last_error());
    FILE *f = ps_outfile_stream(at);
    int bad = fprintf(f, "policy,request,latency_ns\n") < 0;
    for (int i = 0; i < PS_REPLAY_N; i++)
        for (size_t k = 0; !bad && r->pol[i].ran && k < r->requests; k++)
            bad = fprintf(f, "%s,%zu,%.17g\n", ps_replay_policy_name(i), k, r->pol[i].latency_ns[k]) < 0;
    if (bad) {
        ps_outfile_abort(at);
        return cli_fail(CLI_BAD_INPUT, "replay", "%s: cannot write", cli_user_path(path));
    }
    if (ps_outfile_commit(at) != 0)
        return cli_fail(CLI_BAD_INPUT, "replay", "--latencies: %s", ps_last_error());
    return CLI_OK;
}

static const char *const examples[] = {
    "pairsight replay --model out/model.psm --ops out/ops.csv --coexec out/coexec.csv --hp resnet50:8 "
    "--lp bert-base:8 --load 0.5 --seed 11 --requests 200 --warmup 200",
    "pairsight replay --model out/model.psm --ops out/ops.csv --hp resnet50:8 --lp bert-base:8 --load 0.3 "
    "--requests 200 --stretch 1e9 --time-value 0 --policies pairsight,pairsight_bound --json",
    NULL};

typedef struct {
    ps_replay_params_t p;
    const char *ops_path, *model_path, *cx_path, *gpu, *lat_path, *oplist;
    int json, quiet;
    cli_model_batch_t hp, lp;
} replay_args_t;

/* Parse the command line into a; 0 to go on, else the exit code in *code. */
static int parse_args(int argc, char **argv, replay_args_t *a, int *code)
{
    cli_opt_t head[] = {
        {"--ops", CLI_STR, &a->ops_path, "FILE", "standalone operator profile of `pairsight simulate`",
         .flags = CLI_REQ | CLI_IN},
        CLI_OPT_HP(&a->hp, "the HP model; a request is its whole operator sequence"),
        {"--lp", CLI_FN, &a->lp, "MODEL:BATCH", "the always-backlogged LP model", .parse = cli_parse_model_batch,
         .accepts = "MODEL:BATCH, e.g. bert-base:8", .flags = CLI_REQ},
        {"--model", CLI_STR, &a->model_path, "FILE", "calibrated PairSight model (pairsight, pairsight_bound)",
         .flags = CLI_IN, .def = "none"},
        {"--coexec", CLI_STR, &a->cx_path, "FILE", "training co-executions of the intensity rule (intensity)",
         .flags = CLI_IN, .def = "none"},
        {"--gpu", CLI_STR, &a->gpu, "NAME", "GPU of the replay", .def = "the model's, else a100"},
        {"--oplist", CLI_STR, &a->oplist, "NAME=FILE,...",
         "operator lists of your own models (as given to simulate --oplist): the replay's physics runs their kernels",
         .def = "none"}};
    cli_opt_t tail[] = {{"--latencies", CLI_STR, &a->lat_path, "FILE",
                         "every request's latency per policy (CSV: policy,request,latency_ns)", .def = "none"},
                        CLI_OPT_JSON(&a->json, "print the results as JSON"),
                        CLI_OPT_QUIET(&a->quiet),
                        {.name = NULL}};
    /* --requests ... --seed: the replay operation's table (src/ops/op.c); --policies, a list the library
     * parses, after --time-value where the usage has always listed it */
    cli_opt_t opts[32], policies = {"--policies",
                                    CLI_FN,
                                    &a->p.policies,
                                    "LIST",
                                    "dedicated,static,orion,intensity,pairsight,pairsight_bound,oracle or all",
                                    .parse = parse_policies,
                                    .accepts = "a comma-separated list of policies, or all",
                                    .def = "all"};
    int n = (int)(sizeof head / sizeof head[0]);
    memcpy(opts, head, sizeof head);
    n += cli_op_opts("replay", &a->p, opts + n, 16);
    int at = 0;
    while (at < n - 1 && strcmp(opts[at].name, "--time-value") != 0)
        at++;
    memmove(&opts[at + 2], &opts[at + 1], (size_t)(n - at - 1) * sizeof opts[0]);
    opts[at + 1] = policies;
    memcpy(opts + n + 1, tail, sizeof tail);
    cli_spec_t spec = {.cmd = "replay",
                       .synopsis =
                           "--ops FILE --hp MODEL:BATCH --lp MODEL:BATCH [--model FILE] [--coexec FILE] [options]",
                       .about = "Replay an HP request stream (Poisson arrivals at utilization --load of the\n"
                                "dedicated GPU) beside an always-backlogged LP task through the simulator's\n"
                                "co-execution physics (the ground truth; predictors never see it) and report\n"
                                "per policy: HP p50/p99 latency, SLO attainment (budget = --slo-factor x the\n"
                                "dedicated p99), LP throughput (1 = LP alone on the whole GPU), the share of\n"
                                "time the GPU serves HP, and for the planners kept%, the share of requests\n"
                                "whose service stayed within the budget they were planned for\n"
                                "(docs/planner.md).\n",
                       .opts = opts,
                       .examples = examples,
                       .max_pos = 0};
    if (cli_parse(&spec, argc, argv, NULL, code))
        return 1;
    if (a->oplist && ps_oplist_register(a->oplist) != 0) {
        *code = cli_fail(CLI_BAD_INPUT, "replay", "--oplist: %s", ps_last_error());
        return 1;
    }
    a->p.hp_model = a->hp.name;
    a->p.hp_batch = a->hp.batch;
    a->p.lp_model = a->lp.name;
    a->p.lp_batch = a->lp.batch;
    unsigned need_model = 1u << PS_REPLAY_PAIRSIGHT | 1u << PS_REPLAY_PAIRSIGHT_BOUND;
    if (!a->model_path && (a->p.policies & need_model)) {
        *code = cli_fail(CLI_USAGE, "replay", "the pairsight policies need --model (or leave them out of --policies)");
        return 1;
    }
    if (!a->cx_path && (a->p.policies & 1u << PS_REPLAY_INTENSITY)) {
        *code = cli_fail(CLI_USAGE, "replay", "the intensity policy needs --coexec (or leave it out of --policies)");
        return 1;
    }
    return 0;
}

/* Load, replay and print; the exit code. */
static int run(replay_args_t *a, ps_ops_t **ops, ps_model_t **m, ps_coexec_t **cx, ps_replay_result_t *r)
{
    if (ps_ops_load(a->ops_path, ops) != 0 || (a->model_path && ps_model_load(a->model_path, m) != 0) ||
        (a->cx_path && ps_coexec_load(a->cx_path, cx) != 0))
        return cli_fail(CLI_BAD_INPUT, "replay", "%s", ps_last_error());
    a->p.intensity_train = *cx;
    if (!a->quiet)
        fprintf(stderr, "pairsight: replay: %d requests per policy...\n", a->p.requests);
    if (ps_replay_run(*m, *ops, a->gpu ? a->gpu : *m ? NULL : "a100", &a->p, r) != 0)
        return cli_fail(CLI_BAD_INPUT, "replay", "%s", ps_last_error());
    int code = a->lat_path ? write_latencies(a->lat_path, r) : CLI_OK;
    if (code != CLI_OK)
        return code;
    if (a->json)
        return print_json(r, &a->p);
    print_text(r, &a->p);
    return CLI_OK;
}

int cmd_replay(int argc, char **argv)
{
    replay_args_t a = {.p = ps_replay_default_params()};
    int code;
    if (parse_args(argc, argv, &a, &code))
        return code;
    ps_ops_t *ops = NULL;
    ps_model_t *m = NULL;
    ps_coexec_t *cx = NULL;
    ps_replay_result_t r;
    memset(&r, 0, sizeof r);
    code = run(&a, &ops, &m, &cx, &r);
    ps_replay_result_free(&r);
    ps_coexec_free(cx);
    ps_model_free(m);
    ps_ops_free(ops);
    return code;
}
