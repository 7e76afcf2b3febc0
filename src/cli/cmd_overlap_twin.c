/* pairsight overlap twin: the A100 twin against overlap.csv (Abacus's real
 * co-runs), before and after calibrating its launch and sharing parameters
 * on the 2-way experiments (docs/simulator.md, "The twin against Abacus"). */
#include "cli/cli.h"
#include "pairsight_overlap.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

static const char *const examples[] = {
    "pairsight overlap twin --overlap tests/data/overlap_twin.csv --oplists tests/data/overlap_twin_oplists",
    "pairsight overlap twin --overlap tests/data/overlap_twin.csv --oplists tests/data/overlap_twin_oplists "
    "--calibrate --json",
    NULL};

static const char notes[] =
    "Operator lists: tools/abacus_oplists.py --out DIR writes those of Abacus's seven\n"
    "  models (torch needed), one per (model, batch, seq_len), named by module paths.\n"
    "Lines: every experiment of a k, then of each file (pair or triple). mape and\n"
    "  bias (mean signed error) over the experiments with two or more active slots;\n"
    "  alpha: median of (makespan - max) / (sum - max) of the solo times, real (solos\n"
    "  fitted on the real single-active runs) and twin (its own solo runs); solo: the\n"
    "  twin's MAPE on the single-active experiments (its error alone).\n"
    "--calibrate fits --launch-us, --sm-pack and --stagger-us on grids and --start-us exactly on the\n"
    "  2-way experiments only, then scores every k once with the fitted values.\n";

static cJSON *params_json(const ps_mps_params_t *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "launch_us", m->launch_ns / 1e3);
    cJSON_AddNumberToObject(o, "start_us", m->start_ns / 1e3);
    cJSON_AddNumberToObject(o, "stagger_us", m->stagger_ns / 1e3);
    cJSON_AddNumberToObject(o, "sm_pack", m->sm_pack);
    cJSON_AddNumberToObject(o, "flop_scale", m->flop_scale);
    return o;
}

/* The score as JSON; a figure that is not finite (no experiment to take it
 * from) prints as null (cli_json_print). */
static cJSON *score_json(const ps_ovt_score_t *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "params", params_json(&s->mps));
    cJSON *by_k = cJSON_AddObjectToObject(o, "by_k"), *by_f = cJSON_AddObjectToObject(o, "by_file");
    for (int i = 0; i < s->n; i++) {
        const ps_ovt_line_t *l = &s->line[i];
        cJSON *x = cJSON_AddObjectToObject(l->k ? by_f : by_k, l->k ? l->name : l->name + 2);
        if (l->k)
            cJSON_AddNumberToObject(x, "k", l->k);
        cJSON_AddNumberToObject(x, "n", (double)l->n);
        cJSON_AddNumberToObject(x, "mape", l->mape);
        cJSON_AddNumberToObject(x, "bias", l->bias);
        cJSON_AddNumberToObject(x, "real_alpha", l->real_alpha);
        cJSON_AddNumberToObject(x, "twin_alpha", l->twin_alpha);
        cJSON_AddNumberToObject(x, "n_solo", (double)l->n_solo);
        cJSON_AddNumberToObject(x, "solo_mape", l->solo_mape);
    }
    return o;
}

static void print_score(const char *title, const ps_ovt_score_t *s)
{
    const ps_mps_params_t *m = &s->mps;
    printf("%s: launch %.2f us, start %.1f us, stagger %.1f us, sm_pack %g, flop_scale %g\n", title, m->launch_ns / 1e3,
           m->start_ns / 1e3, m->stagger_ns / 1e3, m->sm_pack, m->flop_scale);
    printf("%-36s %6s %8s %8s %10s %10s %6s %8s\n", "line", "n", "mape%", "bias%", "real_alpha", "twin_alpha", "n_solo",
           "solo%");
    for (int i = 0; i < s->n; i++) {
        const ps_ovt_line_t *l = &s->line[i];
        printf("%-36s %6zu %8.2f %8.2f %10.3f %10.3f %6zu %8.2f\n", l->name, l->n, l->mape, l->bias, l->real_alpha,
               l->twin_alpha, l->n_solo, l->solo_mape);
    }
}

typedef struct {
    const char *path, *oplists, *gpu;
    int json, quiet;
    double launch_us, start_us, stagger_us;
    ps_ovt_params_t p;
} twin_args_t;

static int run_twin(twin_args_t *a, ps_ovt_t *tw, const ps_overlap_t *t, cJSON *o)
{
    ps_ovt_score_t s;
    int rc = ps_ovt_score(tw, t, &a->p, &a->p.mps, &s);
    if (rc != PS_OK)
        return rc;
    if (o)
        cJSON_AddItemToObject(o, "before", score_json(&s));
    else
        print_score(a->p.calibrate ? "before calibration" : "twin", &s);
    ps_ovt_score_free(&s);
    if (!a->p.calibrate)
        return PS_OK;
    ps_mps_params_t fit;
    double fit_mape;
    if ((rc = ps_ovt_calibrate(tw, t, &a->p, &fit, &fit_mape)) != PS_OK)
        return rc;
    if (!a->quiet)
        fprintf(stderr, "overlap twin: calibrated on the 2-way experiments: MAPE %.2f%% there\n", fit_mape);
    if ((rc = ps_ovt_score(tw, t, &a->p, &fit, &s)) != PS_OK)
        return rc;
    if (o)
        cJSON_AddItemToObject(o, "after", score_json(&s));
    else
        print_score("after calibration on 2-way", &s);
    ps_ovt_score_free(&s);
    return PS_OK;
}

static void log_stderr(ps_log_level_t level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    fprintf(stderr, "%s\n", msg);
}

int cmd_overlap_twin(int argc, char **argv)
{
    twin_args_t a = {.gpu = "a100", .p = ps_ovt_default_params()};
    a.launch_us = a.p.mps.launch_ns / 1e3;
    a.start_us = a.p.mps.start_ns / 1e3;
    a.stagger_us = a.p.mps.stagger_ns / 1e3;
    int verbose = 0;
    cli_opt_t opts[] = {
        {"--overlap", CLI_STR, &a.path, "FILE", "overlap.csv of real co-runs", .flags = CLI_REQ | CLI_IN},
        {"--oplists", CLI_STR, &a.oplists, "DIR", "captured operator lists of the models", .flags = CLI_REQ},
        {"--gpu", CLI_STR, &a.gpu, "NAME", "the twin's GPU (A100-40GB is the catalog's a100)"},
        {"--setting", CLI_STR, &a.p.setting, "NAME", "experiments of this setting"},
        {"--every", CLI_INT, &a.p.every, "N", "score every Nth experiment of each file", .lo = 1, .hi = 1000000},
        {"--fit-every", CLI_INT, &a.p.fit_every, "N", "calibrate on every Nth 2-way experiment of each file", .lo = 1,
         .hi = 1000000},
        {"--launch-us", CLI_DBL, &a.launch_us, "X", "host time per kernel launch of a process", .lo = 0, .hi = 1e6},
        {"--start-us", CLI_DBL, &a.start_us, "X", "fixed time of a measured run", .lo = 0, .hi = 1e7},
        {"--stagger-us", CLI_DBL, &a.stagger_us, "X", "delay of each further process's first launch", .lo = 0,
         .hi = 1e6},
        {"--sm-pack", CLI_DBL, &a.p.mps.sm_pack, "X", "SM demand the SMs absorb before co-running grids share",
         .lo = -0.9, .hi = 1e9},
        {"--flop-scale", CLI_DBL, &a.p.mps.flop_scale, "X", "share of the twin's compute rate the kernels reach",
         .lo = 0, .hi = 10, .flags = CLI_LO_OPEN},
        {"--fit-flops", CLI_FLAG, &a.p.fit_flops, NULL, "with --calibrate, fit --flop-scale too", .flags = CLI_NODEF},
        {"--calibrate", CLI_FLAG, &a.p.calibrate, NULL,
         "fit launch, stagger, sm_pack and start on the 2-way experiments", .flags = CLI_NODEF},
        {"-v", CLI_FLAG, &verbose, NULL, "one line per calibration step on stderr", .flags = CLI_NODEF},
        CLI_OPT_JSON(&a.json, "print {\"schema\", \"before\", [\"after\"]}: params, by_k, by_file"),
        CLI_OPT_QUIET(&a.quiet),
        {NULL}};
    cli_spec_t spec = {.cmd = "overlap",
                       .sub = "twin",
                       .synopsis = "--overlap FILE --oplists DIR [options]",
                       .about = "Simulates every experiment of FILE on the GPU twin: its k processes under MPS\n"
                                "on all SMs, each launching its range's kernels from its own host thread, and\n"
                                "scores the twin's makespan against the real median.\n",
                       .opts = opts,
                       .examples = examples,
                       .notes = notes,
                       .max_pos = 0};
    int code;
    if (cli_parse(&spec, argc, argv, NULL, &code))
        return code;
    if (verbose)
        ps_log_set(log_stderr, NULL);
    a.p.mps.launch_ns = a.launch_us * 1e3;
    a.p.mps.start_ns = a.start_us * 1e3;
    a.p.mps.stagger_ns = a.stagger_us * 1e3;
    ps_overlap_t *t = NULL;
    ps_ovt_t *tw = NULL;
    int rc = ps_overlap_load(a.path, &t);
    if (rc == PS_OK)
        rc = ps_ovt_load(a.oplists, a.gpu, &tw);
    long unmatched = 0;
    if (rc == PS_OK && !a.quiet)
        fprintf(stderr, "overlap twin: %d operator lists (%ld operators in no group), %zu experiments\n",
                ps_ovt_lists(tw, &unmatched), unmatched, ps_overlap_count(t));
    cJSON *o = a.json && rc == PS_OK ? cli_json_new("overlap_twin", 1) : NULL;
    if (o) {
        cJSON_AddStringToObject(o, "setting", a.p.setting);
        cJSON_AddNumberToObject(o, "every", a.p.every);
        cJSON_AddNumberToObject(o, "fit_every", a.p.fit_every);
    }
    if (rc == PS_OK)
        rc = run_twin(&a, tw, t, o);
    ps_ovt_free(tw);
    ps_overlap_free(t);
    if (rc != PS_OK) {
        cJSON_Delete(o);
        return cli_fail(CLI_BAD_INPUT, "overlap twin", "%s", ps_last_error());
    }
    if (o)
        cli_json_print(o, stdout);
    return CLI_OK;
}
