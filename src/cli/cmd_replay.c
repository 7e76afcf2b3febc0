/* pairsight replay: decisions measured end to end on the simulator's physics. */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_replay_usage[] =
    "usage: pairsight replay --ops ops.csv --hp MODEL:BATCH --lp MODEL:BATCH [options]\n"
    "\n"
    "Replay an HP request stream (Poisson arrivals at utilization --load of the\n"
    "dedicated GPU) beside an always-backlogged LP task through the simulator's\n"
    "co-execution physics (the ground truth; predictors never see it), and\n"
    "report per policy HP p50/p99 latency, SLO attainment (budget = --slo-factor\n"
    "x the dedicated p99), LP throughput (1 = LP alone on the whole GPU) and the\n"
    "share of time the GPU serves HP; for the planners also kept%, the share of\n"
    "requests whose service stayed within the budget they were planned for.\n"
    "ops.csv must come from `pairsight simulate`.\n"
    "\n"
    "options:\n"
    "  --ops FILE          standalone operator profile (required)\n"
    "  --hp MODEL:BATCH    the HP model; a request is its whole operator sequence (required)\n"
    "  --lp MODEL:BATCH    the LP model (required)\n"
    "  --model FILE        PairSight model (required by pairsight, pairsight_bound)\n"
    "  --coexec FILE       training co-executions for the intensity rule (required by intensity)\n"
    "  --gpu NAME          GPU (default: the model's, else a100)\n"
    "  --requests N        HP requests (default 500)\n"
    "  --load RHO          HP utilization of the dedicated GPU, in (0, 1) (default 0.5)\n"
    "  --slo-factor F      budget = F x dedicated p99 latency (default 1.2)\n"
    "  --coverage C        coverage of pairsight_bound's upper bounds (default 0.95)\n"
    "  --policies LIST     dedicated,static,orion,intensity,pairsight,pairsight_bound,oracle\n"
    "                      or all (default all)\n"
    "  --stretch S         planners budget a request's service at most S x its dedicated\n"
    "                      latency (default: the SLO factor)\n"
    "  --warmup N          orion: warm-up requests per binary-search probe (default 100)\n"
    "  --seed N            arrivals and run noise (default 1)\n"
    "  --latencies FILE    write every request's latency per policy (CSV: policy,request,latency_ns)\n"
    "  --json              print the results as JSON (schema pairsight.replay/1)\n"
    "  -q                  no progress on stderr\n";

/* "model:batch" into name (borrowed from s, cut at the colon) and batch. */
int cli_parse_model_batch(char *s, const char **name, int *batch)
{
    char *c = strrchr(s, ':');
    if (!c || c == s)
        return -1;
    *c = 0;
    *name = s;
    return cli_parse_int(c + 1, 1, 1000000, batch);
}

static void print_text(const ps_replay_result_t *r, const ps_replay_params_t *p)
{
    printf("replay %s:%d beside %s:%d, %zu requests, load %.2f, seed %llu: dedicated %.1f us, budget %.1f us\n",
           p->hp_model, p->hp_batch, p->lp_model, p->lp_batch, r->requests, p->load, (unsigned long long)p->seed,
           r->dedicated_ns / 1e3, r->slo_ns / 1e3);
    printf("%-16s %8s %10s %10s %8s %8s %8s %9s\n", "policy", "SLO%", "p50 us", "p99 us", "LP tput", "busy",
           "kept%", "plan us");
    for (int i = 0; i < PS_REPLAY_N; i++) {
        const ps_replay_policy_result_t *q = &r->pol[i];
        if (!q->ran)
            continue;
        printf("%-16s %8.2f %10.1f %10.1f %8.3f %8.3f %8.2f %9.0f", ps_replay_policy_name(i),
               100 * q->slo_attainment, q->hp_p50_ns / 1e3, q->hp_p99_ns / 1e3, q->lp_throughput, q->gpu_busy,
               100 * q->budget_kept, q->plan_us);
        if (i == PS_REPLAY_ORION)
            printf("  (LP SM threshold %d TPCs)", q->orion_tpcs);
        putchar('\n');
    }
}

static void print_json(const ps_replay_result_t *r, const ps_replay_params_t *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "pairsight.replay/1");
    cJSON_AddStringToObject(o, "hp", p->hp_model);
    cJSON_AddNumberToObject(o, "hp_batch", p->hp_batch);
    cJSON_AddStringToObject(o, "lp", p->lp_model);
    cJSON_AddNumberToObject(o, "lp_batch", p->lp_batch);
    cJSON_AddNumberToObject(o, "requests", (double)r->requests);
    cJSON_AddNumberToObject(o, "load", p->load);
    cJSON_AddNumberToObject(o, "seed", (double)p->seed);
    cJSON_AddNumberToObject(o, "coverage", p->coverage);
    cJSON_AddNumberToObject(o, "dedicated_ns", r->dedicated_ns);
    cJSON_AddNumberToObject(o, "slo_ns", r->slo_ns);
    cJSON *pol = cJSON_AddObjectToObject(o, "policies");
    for (int i = 0; i < PS_REPLAY_N; i++) {
        const ps_replay_policy_result_t *q = &r->pol[i];
        if (!q->ran)
            continue;
        cJSON *e = cJSON_AddObjectToObject(pol, ps_replay_policy_name(i));
        cJSON_AddNumberToObject(e, "slo_attainment", q->slo_attainment);
        cJSON_AddNumberToObject(e, "hp_p50_ns", q->hp_p50_ns);
        cJSON_AddNumberToObject(e, "hp_p99_ns", q->hp_p99_ns);
        cJSON_AddNumberToObject(e, "lp_throughput", q->lp_throughput);
        cJSON_AddNumberToObject(e, "gpu_busy", q->gpu_busy);
        cJSON_AddNumberToObject(e, "plan_us", q->plan_us);
        if (isfinite(q->budget_kept))
            cJSON_AddNumberToObject(e, "budget_kept", q->budget_kept);
        if (i == PS_REPLAY_ORION)
            cJSON_AddNumberToObject(e, "orion_lp_tpcs", q->orion_tpcs);
    }
    char *s = cJSON_Print(o);
    if (s)
        puts(s);
    cJSON_free(s);
    cJSON_Delete(o);
}

static int write_latencies(const char *path, const ps_replay_result_t *r)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "policy,request,latency_ns\n");
    for (int i = 0; i < PS_REPLAY_N; i++)
        for (size_t k = 0; r->pol[i].ran && k < r->requests; k++)
            fprintf(f, "%s,%zu,%.17g\n", ps_replay_policy_name(i), k, r->pol[i].latency_ns[k]);
    return fclose(f) == 0 ? 0 : -1;
}

int cmd_replay(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_replay_usage, stdout);
        return CLI_OK;
    }
    static const char *const value_flags[] = {"--ops",      "--hp",       "--lp",       "--model",    "--coexec",
                                              "--gpu",      "--requests", "--load",     "--slo-factor",
                                              "--coverage", "--policies", "--warmup",   "--seed",
                                              "--latencies", "--stretch", NULL};
    ps_replay_params_t p = ps_replay_default_params();
    const char *ops_path = NULL, *model_path = NULL, *cx_path = NULL, *gpu = NULL, *lat_path = NULL;
    int json = 0, quiet = 0, have_hp = 0, have_lp = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int rc = cli_next_option("replay", argc, argv, &i, value_flags, &json, &quiet, &v);
        if (rc != CLI_OK)
            return rc;
        if (!v)
            continue;
        int bad = 0;
        double d[4];
        int nd = 0;
        if (strcmp(a, "--ops") == 0)
            ops_path = v;
        else if (strcmp(a, "--model") == 0)
            model_path = v;
        else if (strcmp(a, "--coexec") == 0)
            cx_path = v;
        else if (strcmp(a, "--gpu") == 0)
            gpu = v;
        else if (strcmp(a, "--latencies") == 0)
            lat_path = v;
        else if (strcmp(a, "--hp") == 0)
            bad = cli_parse_model_batch(argv[i], &p.hp_model, &p.hp_batch), have_hp = 1;
        else if (strcmp(a, "--lp") == 0)
            bad = cli_parse_model_batch(argv[i], &p.lp_model, &p.lp_batch), have_lp = 1;
        else if (strcmp(a, "--requests") == 0)
            bad = cli_parse_int(v, 10, 1000000, &p.requests);
        else if (strcmp(a, "--warmup") == 0)
            bad = cli_parse_int(v, 10, 100000, &p.warmup);
        else if (strcmp(a, "--load") == 0)
            bad = cli_parse_list(v, 1e-9, 1 - 1e-9, 0, d, &nd) || nd != 1, p.load = d[0];
        else if (strcmp(a, "--slo-factor") == 0)
            bad = cli_parse_list(v, 1, 100, 0, d, &nd) || nd != 1, p.slo_factor = d[0];
        else if (strcmp(a, "--stretch") == 0)
            bad = cli_parse_list(v, 1, 100, 0, d, &nd) || nd != 1, p.stretch = d[0];
        else if (strcmp(a, "--coverage") == 0)
            bad = cli_parse_list(v, 0.5, 0.999, 0, d, &nd) || nd != 1, p.coverage = d[0];
        else if (strcmp(a, "--seed") == 0) {
            long s = 0;
            bad = cli_parse_long(v, 0, 2147483647L, &s);
            p.seed = (uint64_t)s;
        } else if (strcmp(a, "--policies") == 0) {
            if (ps_replay_policies_parse(v, &p.policies) != 0)
                return cli_fail(CLI_USAGE, "replay", "--policies: %s", ps_last_error());
        }
        if (bad)
            return cli_fail(CLI_USAGE, "replay", "%s: bad value '%s'", a, v);
    }
    if (!ops_path || !have_hp || !have_lp)
        return cli_fail(CLI_USAGE, "replay", "--ops, --hp and --lp are required (see --help)");
    unsigned need_model = 1u << PS_REPLAY_PAIRSIGHT | 1u << PS_REPLAY_PAIRSIGHT_BOUND;
    if (!model_path && (p.policies & need_model))
        return cli_fail(CLI_USAGE, "replay", "the pairsight policies need --model");
    if (!cx_path && (p.policies & 1u << PS_REPLAY_INTENSITY))
        return cli_fail(CLI_USAGE, "replay", "the intensity policy needs --coexec");
    ps_ops_t *ops = NULL;
    ps_model_t *m = NULL;
    ps_coexec_t *cx = NULL;
    ps_replay_result_t r;
    memset(&r, 0, sizeof r);
    int code = CLI_BAD_INPUT;
    if (ps_ops_load(ops_path, &ops) != 0 || (model_path && ps_model_load(model_path, &m) != 0) ||
        (cx_path && ps_coexec_load(cx_path, &cx) != 0)) {
        cli_fail(CLI_BAD_INPUT, "replay", "%s", ps_last_error());
        goto done;
    }
    p.intensity_train = cx;
    if (!quiet)
        fprintf(stderr, "pairsight: replay: %d requests per policy...\n", p.requests);
    if (ps_replay_run(m, ops, gpu ? gpu : m ? NULL : "a100", &p, &r) != 0) {
        cli_fail(CLI_BAD_INPUT, "replay", "%s", ps_last_error());
        goto done;
    }
    if (lat_path && write_latencies(lat_path, &r) != 0) {
        cli_fail(CLI_BAD_INPUT, "replay", "%s: cannot write", lat_path);
        goto done;
    }
    if (json)
        print_json(&r, &p);
    else
        print_text(&r, &p);
    code = CLI_OK;
done:
    ps_replay_result_clear(&r);
    ps_coexec_free(cx);
    ps_model_free(m);
    ps_ops_free(ops);
    return code;
}
