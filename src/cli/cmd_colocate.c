/* pairsight colocate: workload-level co-location (KACE, Xu et al., the ratio
 * baseline, our MPS interference predictor, lowrank and auto) - eval, train,
 * predict, select, place (cmd_colocate_place.c). See docs/colocate.md. */
#include "cli/colocate.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CMD "colocate"

enum { S_EVAL = 1, S_TRAIN = 2, S_PREDICT = 4, S_SELECT = 8, S_PLACE = 16, S_SHARES = 32, S_ALL = 63, N_SUBS = 6 };

static const char *const ex_eval[] = {
    "pairsight colocate eval --workloads tests/data/colocate/workloads.csv --colocations "
    "tests/data/colocate/colocations3.csv --seeds 2 --predictors ratio,kace_lr",
    "pairsight colocate eval --workloads tests/data/colocate/sparse_workloads.csv --colocations "
    "tests/data/colocate/sparse_colocations.csv --unseen-pairs --seeds 1 --predictors ratio,lowrank,auto",
    "pairsight colocate eval --workloads tests/data/colocate/workloads.csv --colocations "
    "tests/data/colocate/colocations3.csv --place --cases 4x2,6x3 --max-per-gpu 3 --seeds 2 --predictors ratio,mps",
    NULL};
static const char *const ex_train[] = {
    "pairsight colocate train --workloads tests/data/colocate/workloads.csv --colocations "
    "tests/data/colocate/colocations3.csv --kind ratio --out out/c.psc",
    "pairsight colocate train --workloads tests/data/colocate/workloads.csv --colocations "
    "tests/data/colocate/colocations3.csv --kind auto --auto-rule blend --trees 10 --rounds 40 --out out/a.psc",
    NULL};
static const char *const ex_predict[] = {
    "pairsight colocate predict --model out/c.psc --workloads tests/data/colocate/workloads.csv "
    "--colocations tests/data/colocate/colocations3.csv --out -",
    "pairsight colocate predict --model out/c.psc --workloads tests/data/colocate/workloads.csv "
    "--colocations tests/data/colocate/colocations4.csv --as time --out out/t.csv",
    NULL};
static const char *const ex_select[] = {
    "pairsight colocate select --model out/c.psc --workloads tests/data/colocate/workloads.csv --target "
    "alpha_batch2-inf --candidates beta_batch4-train,gamma_batch1-inf+alpha_batch8-inf --shares 50/25/25",
    NULL};
static const char *const ex_place[] = {
    "pairsight colocate place --model out/c.psc --workloads tests/data/colocate/workloads.csv "
    "--jobs alpha_batch2-inf*2,beta_batch4-train,gamma_batch1-inf --gpus 2 --json",
    "pairsight colocate place --model out/c.psc --workloads tests/data/colocate/workloads.csv "
    "--jobs alpha_batch2-inf,alpha_batch8-inf,beta_batch4-train,gamma_batch1-inf,gamma_batch4-inf "
    "--gpus 1:TESTGPU,1:TESTGPU --max-per-gpu 3 --shares 100,50",
    NULL};
static const char *const ex_shares[] = {
    "pairsight colocate shares --model out/c.psc --workloads tests/data/colocate/workloads.csv "
    "--set alpha_batch2-inf,beta_batch4-train",
    "pairsight colocate shares --model out/c.psc --workloads tests/data/colocate/workloads.csv "
    "--set alpha_batch2-inf,beta_batch4-train --objective min --floor alpha_batch2-inf=0.3 --emit dra",
    "pairsight colocate shares --model out/c.psc --workloads tests/data/colocate/workloads.csv "
    "--set alpha_batch2-inf,beta_batch4-train --candidates 30/70,50/50,70/30 --json",
    NULL};

/* A subcommand: one row, as the top-level commands are rows of main.c. */
typedef struct {
    const char *name;
    const char *about;
    const char *synopsis; /* after "pairsight colocate NAME" */
    const char *const *examples;
    unsigned options; /* its bit (S_*) in the option tables below */
    int (*run)(const cli_coloc_opts_t *o);
} sub_t;

static int do_eval(const cli_coloc_opts_t *o);
static int do_train(const cli_coloc_opts_t *o);
static int do_predict(const cli_coloc_opts_t *o);
static int do_place(const cli_coloc_opts_t *o);

static const sub_t subs[N_SUBS] = {
    {"eval", "Train and score every predictor and policy on the measured co-locations.\n",
     "--workloads W --colocations C [options]", ex_eval, S_EVAL, do_eval},
    {"train", "Fit one predictor on every measured co-location and save it.\n",
     "--workloads W --colocations C --out M [options]", ex_train, S_TRAIN, do_train},
    {"predict",
     "Add predictions to a colocations.csv (its tput may be empty): the column is\n"
     "tput_pred, or tput_sum_pred for models of the throughput sum.\n",
     "--model M --workloads W --colocations Q [options]", ex_predict, S_PREDICT, do_predict},
    {"select", "Rank candidate co-runners of a target by predicted throughput sum.\n",
     "--model M --workloads W --target T --candidates a,b,c [options]", ex_select, S_SELECT, cmd_colocate_select},
    {"place",
     "Assign jobs to GPUs, alone or up to K per GPU, maximizing the sum of predicted\n"
     "normalized throughputs (exact for small cases, else a heuristic).\n",
     "--model M --workloads W --jobs a,b*3 --gpus N[:TYPE],... [options]", ex_place, S_PLACE, do_place},
    {"shares",
     "Choose each workload's MPS active-thread percentage for a set on one GPU: the\n"
     "split that maximises the objective over predicted normalised throughputs\n"
     "(tput / exclusive_tput) and meets the floors and SLOs, beside the uniform\n"
     "split and 100 each; --emit writes what a cluster applies. Exit 1 when no\n"
     "candidate meets the floors (the message names the one that fails).\n",
     "--model M --workloads W --set A,B[,..] [options]", ex_shares, S_SHARES, cmd_colocate_shares},
};

/* An option and the subcommands (bit mask) that take it. */
typedef struct {
    unsigned subs;
    cli_opt_t opt;
} sub_opt_t;

static void add_opts(const sub_opt_t *all, size_t n_all, unsigned bit, cli_opt_t *out, int *n)
{
    for (size_t i = 0; i < n_all; i++)
        if (all[i].subs & bit)
            out[(*n)++] = all[i].opt;
}

/* The options of eval (and the model sizes that train shares); place's
 * --max-per-gpu is po[0]. */
static void sub_table_eval(cli_coloc_opts_t *o, unsigned bit, const cli_opt_t *po, cli_opt_t *out, int *n)
{
    const sub_opt_t all[] = {
        {S_EVAL,
         {"--train-frac", CLI_DBL, &o->train_frac, "F", "share of co-locations used for training", .lo = 0, .hi = 1,
          .flags = CLI_LO_OPEN | CLI_HI_OPEN}},
        {S_EVAL, {"--seeds", CLI_INT, &o->seeds, "N", "random splits", .lo = 1, .hi = 1000000}},
        {S_EVAL, {"--seed", CLI_U64, &o->seed, "N", "first seed", .lo = 0, .hi = 0}},
        {S_TRAIN, {"--seed", CLI_U64, &o->seed, "N", "seed of forests and MLP", .lo = 0, .hi = 0}},
        {S_EVAL,
         {"--unseen", CLI_FLAG, &o->unseen, NULL,
          "hold out every co-location of one model (all its batch sizes) in turn instead of random splits"}},
        {S_EVAL,
         {"--test", CLI_STR, &o->test, "FILE",
          "score on FILE's co-locations, leaving out each workload set (all its shares, in both files) in "
          "turn"}},
        {S_EVAL,
         {"--test-alone", CLI_FLAG, &o->test_alone, NULL,
          "with --test: never train on FILE's co-locations (default off: the other workload sets of FILE "
          "are trained on)",
          .flags = CLI_NODEF}},
        {S_EVAL,
         {"--unseen-pairs", CLI_FLAG, &o->unseen_pairs, NULL,
          "5 folds of workload pairs: every co-location holding a held-out pair is held out"}},
        {S_EVAL,
         {"--unseen-splits", CLI_STR, &o->splits, "FILE",
          "FILE holds share splits: per seed, train on --colocations plus a random half of FILE's "
          "co-locations, score the other half"}},
        {S_EVAL,
         {"--transfer", CLI_STR, &o->transfer, "FILE",
          "train on --colocations, score on FILE (another GPU's co-locations; --workloads holds both GPUs)"}},
        {S_EVAL,
         {"--predictors", CLI_STR, &o->predictors, "LIST",
          "comma list of kace_lr, kace_rf, kace_mlp, xu_rf, ratio, mps, lowrank, auto", .def = "all"}},
        {S_EVAL, {"--auto-kinds", CLI_STR, &o->auto_kinds, "LIST", "candidates of auto", .def = "all but kace_mlp"}},
        {S_EVAL | S_TRAIN,
         {"--auto-rule", CLI_STR, &o->auto_rule, "R",
          "auto's rule: blend (the candidates' stacked blend, fitted to the sums), within (the same, fitted to "
          "the sums and their differences within each target's candidates) or pick (one candidate, "
          "one-standard-error rule); eval also reports the others",
          .def = "within"}},
        {S_EVAL,
         {"--place", CLI_FLAG, &o->place, NULL,
          "score placements over a cluster (see --cases) instead of co-runner choices, on random splits"}},
        {S_EVAL,
         {"--cases", CLI_STR, &o->cases, "LIST", "with --place: JOBSxGPUS cases", .def = "4x2,8x4,16x8,24x8,32x16"}},
        {S_EVAL, {"--max-per-gpu", CLI_INT, &o->max_per_gpu, "K", "most jobs on one GPU", .lo = 1, .hi = 8}},
        {S_PLACE, po[0]},
        {S_EVAL | S_TRAIN, {"--trees", CLI_INT, &o->trees, "N", "random-forest trees", .lo = 1, .hi = 10000}},
        {S_EVAL | S_TRAIN, {"--epochs", CLI_INT, &o->epochs, "N", "MLP epochs", .lo = 1, .hi = 100000}},
        {S_EVAL | S_TRAIN, {"--rounds", CLI_INT, &o->rounds, "N", "mps boosting rounds", .lo = 1, .hi = 100000}},
    };
    add_opts(all, sizeof all / sizeof all[0], bit, out, n);
}

/* Builds the option table of subcommand k (0..4) into out (room for 40). */
static void sub_table(cli_coloc_opts_t *o, int k, cli_opt_t *out)
{
    unsigned bit = subs[k].options;
    cli_opt_t po[4] = {{NULL}}; /* place's --max-per-gpu and --time-limit: the colocate_place operation's table */
    if (bit & S_PLACE)
        cli_op_opts("colocate_place", &o->place_params, po, 4);
    const sub_opt_t head[] = {
        {S_ALL, {"--workloads", CLI_STR, &o->workloads, "FILE", "workloads.csv", .flags = CLI_REQ | CLI_IN}},
        {S_ALL,
         {"--scaling", CLI_STR, &o->scaling, "FILE",
          "workload_scaling.csv; without it solo throughput scales linearly with the share"}},
        {S_EVAL | S_TRAIN,
         {"--colocations", CLI_STR, &o->colocations, "FILE", "colocations.csv", .flags = CLI_REQ | CLI_IN}},
        {S_PREDICT,
         {"--colocations", CLI_STR, &o->colocations, "FILE", "the co-locations to predict", .flags = CLI_REQ | CLI_IN}},
    };
    const sub_opt_t tail[] = {
        {S_TRAIN,
         {"--kind", CLI_STR, &o->kind, "K",
          "kace_lr, kace_rf, kace_mlp, xu_rf, ratio, mps, lowrank or auto (chosen by cross-validation on the "
          "training co-locations)",
          .def = "mps"}},
        {S_TRAIN, {"--out", CLI_STR, &o->out, "FILE", "model file", .flags = CLI_REQ}},
        {S_PREDICT, {"--out", CLI_STR, &o->out, "FILE", "output CSV", .def = "standard output", .flags = CLI_OUT}},
        {S_PREDICT,
         {"--as", CLI_STR, &o->as, "WHAT",
          "tput, or time: add batch, iter_time_s_pred, alone_iter_time_s and slowdown_pred", .def = "tput"}},
        {S_PLACE, {"--jobs", CLI_STR, &o->jobs, "LIST", "workload ids; name*N repeats a job", .flags = CLI_REQ}},
        {S_PLACE,
         {"--gpus", CLI_STR, &o->gpus, "N[:TYPE],...", "GPUs (TYPE: the gpu column of workloads.csv)",
          .flags = CLI_REQ}},
        {S_PLACE,
         {"--allow-wait", CLI_FLAG, &o->place_params.allow_wait, NULL,
          "let a job wait when co-locating it lowers the sum (default: every job runs while GPUs have room)",
          .flags = CLI_NODEF}},
        {S_PLACE,
         {"--shares", CLI_STR, &o->shares, "LIST", "allowed MPS shares of a co-located job (up to 4)", .def = "100"}},
        {S_PLACE, po[1]},
        {S_PREDICT | S_SELECT | S_PLACE | S_SHARES,
         {"--model", CLI_STR, &o->model, "FILE", "model from `colocate train`", .flags = CLI_REQ | CLI_IN}},
        {S_SELECT, {"--target", CLI_STR, &o->target, "T", "target workload", .flags = CLI_REQ}},
        {S_SELECT,
         {"--candidates", CLI_STR, &o->candidates, "LIST", "comma list; a+b co-locates several at once",
          .flags = CLI_REQ}},
        {S_SELECT,
         {"--shares", CLI_STR, &o->shares, "A/B[/..]", "MPS shares of target and co-runners", .def = "100/100..."}},
        {S_SELECT, {"--gpu", CLI_STR, &o->gpu, "NAME", "gpu column of the query", .def = "the workload's"}},
        {S_SHARES, {"--set", CLI_STR, &o->set, "A,B[,..]", "the workloads sharing one GPU (2..8)", .flags = CLI_REQ}},
        {S_SHARES,
         {"--candidates", CLI_STR, &o->candidates, "LIST", "splits to choose from, e.g. 10/90,30/70 (set order)",
          .def = "the grid of --step"}},
        {S_SHARES, {"--step", CLI_INT, &o->step, "P", "grid step in percent", .lo = 1, .hi = 100}},
        {S_SHARES,
         {"--max-total", CLI_INT, &o->max_total, "P",
          "most the shares may sum to: 100 keeps the clients' thread limits from overlapping (what split data "
          "measure); up to 100 x k lets them overlap",
          .lo = 2, .hi = 800}},
        {S_SHARES,
         {"--objective", CLI_STR, &o->objective, "O",
          "sum, min (the worst-off workload) or weighted:A=2,B=1 of normalised throughputs", .def = "sum"}},
        {S_SHARES, {"--floor", CLI_STR, &o->floor, "A=0.8,..", "normalised-throughput floors"}},
        {S_SHARES, {"--slo", CLI_STR, &o->slo, "A=MS,..", "latency SLOs in ms (batch / predicted tput)"}},
        {S_SHARES, {"--gpu", CLI_STR, &o->gpu, "NAME", "gpu column of the set", .def = "the model's"}},
        {S_SHARES,
         {"--emit", CLI_STR, &o->emit, "F",
          "dra (a DRA ResourceClaimTemplate with the NVIDIA driver's MPS GpuConfig and a Pod), env (the env "
          "lines) or yaml"}},
        {S_EVAL | S_SELECT | S_PLACE | S_SHARES,
         {"--json", CLI_FLAG, &o->json, NULL, "print the result as JSON", .flags = CLI_NODEF}},
        {S_ALL, CLI_OPT_QUIET(&o->quiet)},
    };
    int n = 0;
    add_opts(head, sizeof head / sizeof head[0], bit, out, &n);
    sub_table_eval(o, bit, po, out, &n);
    add_opts(tail, sizeof tail / sizeof tail[0], bit, out, &n);
    out[n] = (cli_opt_t){NULL};
}

static void sub_spec(cli_coloc_opts_t *o, int k, cli_opt_t *table, cli_spec_t *spec)
{
    sub_table(o, k, table);
    *spec = (cli_spec_t){.cmd = CMD,
                         .sub = subs[k].name,
                         .synopsis = subs[k].synopsis,
                         .about = subs[k].about,
                         .opts = table,
                         .examples = subs[k].examples,
                         .notes = k == 0 ? "See docs/colocate.md for the predictors and policies.\n" : NULL,
                         .max_pos = 0};
}

static void defaults(cli_coloc_opts_t *o)
{
    memset(o, 0, sizeof *o);
    /* The library's defaults, which --help states. */
    ps_coloc_eval_params_t def = ps_coloc_eval_default_params();
    o->train_frac = def.train_frac;
    o->seeds = def.seeds;
    o->seed = def.seed;
    o->trees = def.model.trees;
    o->epochs = def.model.mlp_epochs;
    o->rounds = def.model.boost_rounds;
    o->place_params = ps_coloc_place_default_params();
    o->max_per_gpu = o->place_params.max_per_gpu;
    o->step = ps_coloc_shares_default_params().step;
    o->max_total = ps_coloc_shares_default_params().max_total;
}

/* `pairsight colocate --help`: every subcommand's usage. */
static void overview(FILE *f)
{
    fputs("pairsight colocate: predict the throughput of workloads co-located on one GPU\n"
          "under MPS and choose co-runners (docs/colocate.md). Subcommands eval, train,\n"
          "predict, select, place, shares; `pairsight help colocate SUB` shows one.\n\n",
          f);
    for (int k = 0; k < N_SUBS; k++) {
        cli_coloc_opts_t o;
        cli_opt_t table[40];
        cli_spec_t spec;
        defaults(&o);
        sub_spec(&o, k, table, &spec);
        if (k)
            fputs("\n", f);
        cli_usage(&spec, f);
    }
}

/* The subcommand of argv[1] parsed into o: its row in subs, or -1 with *code
 * when there is nothing to run (help, a usage error). */
static int parse_opts(int argc, char **argv, cli_coloc_opts_t *o, cli_opt_t *table, cli_spec_t *spec, int *code)
{
    defaults(o);
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        if (argc < 2)
            *code = cli_fail(CLI_USAGE, CMD,
                             "missing subcommand: eval, train, predict, select, place or shares (see "
                             "pairsight colocate --help)");
        else {
            overview(stdout);
            *code = CLI_OK;
        }
        return -1;
    }
    o->sub = argv[1];
    const char *names[N_SUBS];
    for (int i = 0; i < N_SUBS; i++)
        names[i] = subs[i].name;
    int k = 0;
    while (k < N_SUBS && strcmp(o->sub, names[k]) != 0)
        k++;
    if (k == N_SUBS) {
        const char *near = ps_nearest(o->sub, names, N_SUBS);
        *code = cli_fail(CLI_USAGE, CMD, "unknown subcommand '%s'%s%s%s (eval, train, predict, select, place, shares)",
                         o->sub, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
        return -1;
    }
    sub_spec(o, k, table, spec);
    return cli_parse(spec, argc - 1, argv + 1, NULL, code) ? -1 : k;
}

static void tables_free(cli_coloc_tables_t *t)
{
    ps_workloads_free(t->w);
    ps_scaling_free(t->s);
    ps_colocations_free(t->c);
    ps_colocations_free(t->t);
}

/* A colocations file against the workloads, as `pairsight check` does it
 * (FILE:LINE:COLUMN of a workload without a row, of slots other than 1..k).
 * Only a regular file can be read twice: standard input, a pipe or a FIFO
 * (`<(...)`, /dev/stdin) was consumed by the loader, whose checks name the
 * row. */
static int check_coloc_file(const char *path, const ps_workloads_t *w)
{
    struct stat st;
    if (!path || strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    return ps_table_check_workloads(path, PS_TABLE_COLOCATIONS, &w, 1);
}

static int load_tables(const cli_coloc_opts_t *o, int need_c, cli_coloc_tables_t *t)
{
    memset(t, 0, sizeof *t);
    (void)need_c; /* the option tables make them required */
    const char *test = o->test ? o->test : o->transfer ? o->transfer : o->splits;
    if (ps_workloads_load(o->workloads, &t->w) || (o->scaling && ps_scaling_load(o->scaling, &t->s)) ||
        (o->colocations && ps_colocations_load(o->colocations, &t->c)) || (test && ps_colocations_load(test, &t->t)) ||
        check_coloc_file(o->colocations, t->w) || check_coloc_file(test, t->w)) {
        tables_free(t);
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    }
    return 0;
}

/* train and predict: --out (when given) checked before the long work, then
 * the tables loaded into t. CLI_OK, or the exit code after a message. */
static int check_out_load(const cli_coloc_opts_t *o, const char *what, cli_coloc_tables_t *t)
{
    const char *in[] = {o->model, o->workloads, o->scaling, o->colocations}; /* NULL: not an input */
    int code = o->out ? cli_check_out(what, o->out, in, 4) : CLI_OK;
    return code != CLI_OK ? code : load_tables(o, 1, t);
}

/* A comma list of kind names into a bit mask; CLI_USAGE on an unknown one. */
static int parse_kinds(const char *list, unsigned *out)
{
    *out = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        ps_coloc_kind_t k;
        if (ps_coloc_kind_from_name(tok, &k))
            return cli_fail(CLI_USAGE, CMD, "%s", ps_last_error());
        *out |= 1u << k;
    }
    return 0;
}

static const char *eval_mode(const cli_coloc_opts_t *o)
{
    return o->unseen         ? "unseen"
           : o->unseen_pairs ? "unseen_pairs"
           : o->splits       ? "unseen_splits"
           : o->transfer     ? "transfer"
           : o->test         ? "test"
                             : "split";
}

static void json_policies(cJSON *e, const double *v)
{
    for (int q = 0; q < PS_POL_COUNT; q++)
        if (!isnan(v[q]))
            cJSON_AddNumberToObject(e, ps_coloc_policy_name(q), v[q]);
}

/* --auto-rule's names, by PS_COLOC_AUTO_* */
static const char *rule_name(int rule)
{
    static const char *const names[PS_COLOC_AUTO_RULES] = {"blend", "pick", "within"};
    return (unsigned)rule < PS_COLOC_AUTO_RULES ? names[rule] : "unknown";
}

/* auto's rule, its pick rule's choices, the mean weights and each rule's
 * figures in the same runs. */
static void json_auto(cJSON *j, const ps_coloc_eval_result_t *r)
{
    cJSON_AddStringToObject(j, "auto_rule", rule_name(r->auto_rule));
    cJSON *ch = cJSON_AddObjectToObject(j, "auto_chosen");
    cJSON *w = cJSON_AddObjectToObject(j, "auto_weights");
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        if (r->auto_chosen[k])
            cJSON_AddNumberToObject(ch, ps_coloc_kind_name(k), r->auto_chosen[k]);
        if (r->auto_weight[k] > 0)
            cJSON_AddNumberToObject(w, ps_coloc_kind_name(k), r->auto_weight[k]);
    }
    cJSON *rules = cJSON_AddObjectToObject(j, "auto_rules");
    for (int q = 0; q < PS_COLOC_AUTO_RULES; q++) {
        cJSON *e = cJSON_AddObjectToObject(rules, rule_name(q));
        cJSON_AddNumberToObject(e, "mean", r->rule_mean[q]);
        cJSON *pk = cJSON_AddObjectToObject(e, "per_k"), *wq = cJSON_AddObjectToObject(e, "weights");
        for (int k = 2; k <= PS_COLOC_MAXK; k++) {
            char name[8];
            snprintf(name, sizeof name, "%d", k);
            if (!isnan(r->rule_k[q][k]))
                cJSON_AddNumberToObject(pk, name, r->rule_k[q][k]);
        }
        for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
            if (r->rule_weight[q][k] > 0)
                cJSON_AddNumberToObject(wq, ps_coloc_kind_name(k), r->rule_weight[q][k]);
    }
}

/* The result of colocate eval as JSON on stdout (NaN, where a policy or a
 * predictor was not scored, becomes null). */
static void print_eval_json(const cli_coloc_opts_t *o, unsigned kinds, const ps_coloc_eval_result_t *r)
{
    cJSON *j = cli_json_new("colocate-eval", 1);
    cJSON_AddNumberToObject(j, "runs", r->runs);
    cJSON_AddNumberToObject(j, "targets", r->targets);
    cJSON_AddStringToObject(j, "mode", eval_mode(o));
    cJSON_AddNumberToObject(j, "train_frac", strcmp(eval_mode(o), "split") ? NAN : o->train_frac);
    cJSON *preds = cJSON_AddObjectToObject(j, "predictors");
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++) {
        if (!(kinds & (1u << k)))
            continue;
        cJSON *e = cJSON_AddObjectToObject(preds, ps_coloc_kind_name(k));
        cJSON_AddStringToObject(e, "of",
                                k == PS_COLOC_AUTO              ? "chosen"
                                : ps_coloc_kind_predicts_sum(k) ? "sum"
                                                                : "workload");
        cJSON_AddNumberToObject(e, "r2", r->r2[k]);
        cJSON_AddNumberToObject(e, "rmse", r->rmse[k]);
        cJSON_AddNumberToObject(e, "mape", r->mape[k]);
        cJSON_AddNumberToObject(e, "time_mape", r->time_mape[k]);
    }
    json_policies(cJSON_AddObjectToObject(j, "policies"), r->policy_mean);
    json_policies(cJSON_AddObjectToObject(j, "spread"), r->policy_sd);
    cJSON *pk = cJSON_AddObjectToObject(j, "per_k");
    for (int k = 2; k <= PS_COLOC_MAXK; k++) {
        if (isnan(r->targets_k[k]))
            continue;
        char name[8];
        snprintf(name, sizeof name, "%d", k);
        cJSON *e = cJSON_AddObjectToObject(pk, name);
        cJSON_AddNumberToObject(e, "targets", r->targets_k[k]);
        json_policies(cJSON_AddObjectToObject(e, "policies"), r->policy_k[k]);
    }
    if (kinds & (1u << PS_COLOC_AUTO))
        json_auto(j, r);
    cJSON *dr = cJSON_AddArrayToObject(j, "dropped");
    for (int q = 0; q < PS_POL_COUNT; q++)
        if (r->dropped & (1u << q))
            cJSON_AddItemToArray(dr, cJSON_CreateString(ps_coloc_policy_name(q)));
    cli_json_print(j, stdout);
}

static void print_auto_text(const ps_coloc_eval_result_t *r)
{
    int any = 0;
    printf("\nauto's rule: %s", rule_name(r->auto_rule));
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        if (r->auto_weight[k] > 0)
            printf("%s%s %.3f", any++ ? ", " : "; mean weights: ", ps_coloc_kind_name(k), r->auto_weight[k]);
    any = 0;
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        if (r->auto_chosen[k])
            printf("%s%s %d", any++ ? ", " : "\nauto chose: ", ps_coloc_kind_name(k), r->auto_chosen[k]);
    printf("%s(pick rule)\n", any ? " " : "\n");
    for (int q = 0; q < PS_COLOC_AUTO_RULES; q++) {
        if (q == r->auto_rule)
            continue;
        printf("auto under the %s rule: %.3f", rule_name(q), r->rule_mean[q]);
        for (int k = 2; k <= PS_COLOC_MAXK; k++)
            if (!isnan(r->rule_k[q][k]))
                printf(", %d-way %.3f", k, r->rule_k[q][k]);
        putchar('\n');
    }
}

static void print_eval_text(const cli_coloc_opts_t *o, unsigned kinds, const ps_coloc_eval_result_t *r)
{
    const char *m = eval_mode(o);
    printf("%d runs, %.1f targets per run (%s)\n", r->runs, r->targets,
           !strcmp(m, "unseen")          ? "unseen models"
           : !strcmp(m, "unseen_pairs")  ? "held-out workload pairs"
           : !strcmp(m, "unseen_splits") ? "held-out half of the share splits"
           : !strcmp(m, "transfer")      ? "trained on one table, scored on another"
           : !strcmp(m, "test")          ? "held-out workload sets"
                                         : "random splits");
    printf("%-10s %-9s %8s %10s %8s %9s\n", "predictor", "of", "R2", "RMSE", "MAPE%", "timeMAPE%");
    for (int k = 0; k < PS_COLOC_KIND_COUNT; k++)
        if (kinds & (1u << k))
            printf("%-10s %-9s %8.3f %10.3f %8.2f %9.2f\n", ps_coloc_kind_name(k),
                   k == PS_COLOC_AUTO              ? "chosen"
                   : ps_coloc_kind_predicts_sum(k) ? "sum"
                                                   : "workload",
                   r->r2[k], r->rmse[k], r->mape[k], r->time_mape[k]);
    int nk = 0;
    for (int k = 2; k <= PS_COLOC_MAXK; k++)
        nk += !isnan(r->targets_k[k]);
    printf("\n%-10s %8s %8s", "policy", "mean", "sd");
    for (int k = 2; k <= PS_COLOC_MAXK && nk > 1; k++)
        if (!isnan(r->targets_k[k]))
            printf(" %6d-way", k);
    putchar('\n');
    for (int q = 0; q < PS_POL_COUNT; q++) {
        if (isnan(r->policy_mean[q]))
            continue;
        printf("%-10s %8.3f %8.3f", ps_coloc_policy_name(q), r->policy_mean[q], r->policy_sd[q]);
        for (int k = 2; k <= PS_COLOC_MAXK && nk > 1; k++)
            if (!isnan(r->targets_k[k]))
                printf(" %10.3f", r->policy_k[k][q]);
        putchar('\n');
    }
    if (kinds & (1u << PS_COLOC_AUTO))
        print_auto_text(r);
    int any = 0;
    for (int q = 0; q < PS_POL_COUNT; q++)
        if (r->dropped & (1u << q))
            printf("%s%s", any++ ? ", " : "dropped (no workload has their metrics): ", ps_coloc_policy_name(q));
    if (any)
        putchar('\n');
}

/* --auto-rule into *rule. */
static int parse_rule(const cli_coloc_opts_t *o, int *rule)
{
    if (!o->auto_rule)
        return CLI_OK; /* the default of ps_coloc_default_params */
    for (int r = 0; r < PS_COLOC_AUTO_RULES; r++)
        if (!strcmp(o->auto_rule, rule_name(r))) {
            *rule = r;
            return CLI_OK;
        }
    return cli_fail(CLI_USAGE, CMD, "--auto-rule: bad value '%s': expected blend, within or pick", o->auto_rule);
}

static int do_eval(const cli_coloc_opts_t *o)
{
    if (!!o->unseen + !!o->unseen_pairs + !!o->test + !!o->transfer + !!o->splits > 1)
        return cli_fail(CLI_USAGE, CMD,
                        "eval: --unseen, --unseen-pairs, --unseen-splits, --test and --transfer exclude each other");
    if (o->test_alone && !o->test)
        return cli_fail(CLI_USAGE, CMD, "eval: --test-alone needs --test FILE");
    if (o->place && (o->unseen || o->unseen_pairs || o->test || o->transfer || o->splits))
        return cli_fail(CLI_USAGE, CMD,
                        "eval: --place scores random splits (--train-frac, --seeds); --unseen, --unseen-pairs, "
                        "--unseen-splits, --test and --transfer do not apply to it");
    if (o->cases && !o->place)
        return cli_fail(CLI_USAGE, CMD, "eval: --cases needs --place");
    ps_coloc_eval_params_t p = ps_coloc_eval_default_params();
    if (o->predictors && parse_kinds(o->predictors, &p.kinds))
        return CLI_USAGE;
    if (o->auto_kinds && parse_kinds(o->auto_kinds, &p.auto_kinds))
        return CLI_USAGE;
    if (parse_rule(o, &p.model.auto_rule))
        return CLI_USAGE;
    cli_coloc_tables_t t;
    int rc = load_tables(o, 1, &t);
    if (rc)
        return rc;
    p.train_frac = o->train_frac;
    p.seeds = o->seeds;
    p.seed = o->seed;
    p.unseen = o->unseen;
    p.unseen_pairs = o->unseen_pairs;
    p.test = t.t;
    p.transfer = o->transfer != NULL;
    p.unseen_splits = o->splits != NULL;
    p.test_alone = o->test_alone;
    p.model.trees = o->trees;
    p.model.mlp_epochs = o->epochs;
    p.model.boost_rounds = o->rounds;
    p.progress = cli_progress_cb;
    p.progress_user = (void *)&o->quiet;
    if (o->place) {
        rc = cmd_colocate_eval_place(o, &p, &t);
        tables_free(&t);
        return rc;
    }
    ps_coloc_eval_result_t r;
    int err = ps_coloc_eval(t.w, t.s, t.c, &p, &r);
    cli_progress_end(o->quiet);
    tables_free(&t);
    if (err)
        return cli_fail(CLI_BAD_INPUT, CMD, "eval: %s", ps_last_error());
    if (o->json)
        print_eval_json(o, p.kinds, &r);
    else
        print_eval_text(o, p.kinds, &r);
    return CLI_OK;
}

/* What train --kind auto chose: the kind, or the blend's weights. */
static void print_train_choice(const ps_coloc_model_t *m)
{
    double w[PS_COLOC_KIND_COUNT];
    if (!ps_coloc_model_blend(m, w)) {
        fprintf(stderr, "pairsight: colocate: train: auto chose %s (cross-validation on the training co-locations)\n",
                ps_coloc_kind_name(ps_coloc_model_kind(m)));
        return;
    }
    fputs("pairsight: colocate: train: auto chose the blend", stderr);
    for (int k = 0, any = 0; k < PS_COLOC_KIND_COUNT; k++)
        if (w[k] > 0)
            fprintf(stderr, "%s%s %.3f", any++ ? ", " : " ", ps_coloc_kind_name(k), w[k]);
    fputs(" (stacked on cross-validation of the training co-locations)\n", stderr);
}

static int do_train(const cli_coloc_opts_t *o)
{
    ps_coloc_params_t p = ps_coloc_default_params();
    if (o->kind && ps_coloc_kind_from_name(o->kind, &p.kind))
        return cli_fail(CLI_USAGE, CMD, "train: %s", ps_last_error());
    p.seed = o->seed;
    p.trees = o->trees;
    p.mlp_epochs = o->epochs;
    p.boost_rounds = o->rounds;
    if (parse_rule(o, &p.auto_rule))
        return CLI_USAGE;
    if (strcmp(o->out, "-") == 0) /* it wrote a file named - */
        return cli_fail(CLI_USAGE, CMD, "train: --out: a model is written to a file, give its path (not -)");
    cli_coloc_tables_t t;
    int rc = check_out_load(o, CMD ": train", &t);
    if (rc)
        return rc;
    ps_coloc_model_t *m = NULL;
    int err = ps_coloc_train(t.w, t.s, t.c, &p, &m);
    if (!err)
        err = ps_coloc_model_save(m, o->out);
    if (!err && ps_coloc_model_auto(m) && !o->quiet)
        print_train_choice(m);
    if (!err && !o->quiet) /* one line on success: what was fitted on what, and where it went */
        fprintf(stderr, "colocate train: %s model on %zu co-locations of %zu workloads -> %s\n",
                ps_coloc_kind_name(ps_coloc_model_kind(m)), ps_colocations_rows(t.c), ps_workloads_rows(t.w), o->out);
    ps_coloc_model_free(m);
    tables_free(&t);
    if (err)
        return cli_fail(CLI_BAD_INPUT, CMD, "train: %s", ps_last_error());
    return CLI_OK;
}

static int do_predict(const cli_coloc_opts_t *o)
{
    cli_coloc_tables_t t;
    int rc = check_out_load(o, CMD ": predict", &t);
    if (rc)
        return rc;
    ps_coloc_model_t *m = NULL;
    double *pred = calloc(ps_colocations_rows(t.c) + 1, sizeof *pred);
    int as_time = o->as && strcmp(o->as, "time") == 0;
    if (o->as && !as_time && strcmp(o->as, "tput") != 0) {
        free(pred);
        tables_free(&t);
        return cli_fail(CLI_USAGE, CMD, "predict: --as: expected tput or time, got '%s'", o->as);
    }
    char msg[256] = ""; /* the command's own error, else the library's */
    int err = pred ? ps_coloc_model_load(o->model, &m) : PS_E_NOMEM;
    if (!pred)
        snprintf(msg, sizeof msg, "out of memory");
    if (!err && as_time && ps_coloc_kind_predicts_sum(ps_coloc_model_kind(m))) {
        err = PS_E_ARG;
        snprintf(msg, sizeof msg, "--as time needs a model of each workload's throughput, not %s (a sum)",
                 ps_coloc_kind_name(ps_coloc_model_kind(m)));
    }
    if (!err) {
        cli_coloc_warn_queries(m, t.c);
    }
    if (!err)
        err = ps_coloc_predict(m, t.w, t.s, t.c, pred);
    ps_outfile_t *a = NULL;
    FILE *f = stdout;
    if (!err && o->out) {
        err = ps_outfile_open(o->out, &a);
        if (!err)
            f = ps_outfile_stream(a);
    }
    if (!err) {
        fprintf(f, "colocation,gpu,slot,workload,share_pct,tput,%s%s\n",
                ps_coloc_kind_predicts_sum(ps_coloc_model_kind(m)) ? "tput_sum_pred" : "tput_pred",
                as_time ? ",batch,iter_time_s_pred,alone_iter_time_s,slowdown_pred" : "");
        for (size_t i = 0; i < ps_colocations_rows(t.c); i++) {
            const ps_colocation_row_t *r = ps_colocations_row(t.c, i);
            ps_csv_put_field(f, r->colocation);
            fputc(',', f);
            ps_csv_put_field(f, r->gpu);
            fprintf(f, ",%d,", r->slot);
            ps_csv_put_field(f, r->workload);
            fprintf(f, ",%d,", r->share_pct);
            if (!isnan(r->tput))
                fprintf(f, "%.17g", r->tput);
            fprintf(f, ",%.17g", pred[i]);
            if (as_time) {
                /* Iteration time = batch / throughput (batch from the id's
                 * _batch<n>, 1 without one); alone = at its share alone. */
                double b = cli_coloc_workload_batch(r->workload);
                double alone = ps_coloc_solo(t.w, t.s, r->gpu, r->workload, r->share_pct);
                fprintf(f, ",%g,%.9g,%.9g,%.9g", b, b / pred[i], b / alone, alone / pred[i]);
            }
            fputc('\n', f);
        }
        if (a)
            err = ps_outfile_commit(a);
        else if (fflush(stdout) || ferror(stdout)) {
            err = PS_E_IO;
            snprintf(msg, sizeof msg, "stdout: write failed");
        }
    }
    ps_coloc_model_free(m);
    free(pred);
    tables_free(&t);
    if (err)
        return cli_fail(CLI_BAD_INPUT, CMD, "predict: %s", *msg ? msg : ps_last_error());
    return CLI_OK;
}

static int do_place(const cli_coloc_opts_t *o)
{
    cli_coloc_tables_t t;
    int rc = load_tables(o, 0, &t);
    if (rc)
        return rc;
    rc = cmd_colocate_place(o, &t);
    tables_free(&t);
    return rc;
}

int cmd_colocate(int argc, char **argv)
{
    cli_coloc_opts_t o;
    cli_opt_t table[40];
    cli_spec_t spec;
    int rc, k = parse_opts(argc, argv, &o, table, &spec, &rc);
    return k < 0 ? rc : subs[k].run(&o);
}
