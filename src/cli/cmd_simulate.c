/* `pairsight simulate`: write a simulated profiling campaign (ops.csv and
 * coexec.csv), or derive the classic models' kernels from a measured
 * profile (--derive). */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *CMD = "simulate";

static int derive(const char *path, const char *gpu)
{
    ps_ops_t *ops = NULL;
    if (ps_ops_load(path, &ops) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    int rc = ps_sim_derive_write(ops, gpu, stdout);
    ps_ops_free(ops);
    if (rc != 0 || fflush(stdout) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "derive: %s", ps_last_error());
    return CLI_OK;
}

static void list(void)
{
    ps_gpu_info_t g;
    printf("GPUs:\n");
    for (size_t i = 0; ps_gpu_at(i, &g) == 0; i++)
        printf("  %-16s %3d SMs %2d TPCs %6.0f GB/s %4.0f MB L2  (alias %s)\n", g.name, g.sms, g.tpcs, g.dram_gbs,
               g.l2_mb, g.alias ? g.alias : "-");
    printf("models:\n");
    for (size_t i = 0; ps_sim_model_name(i); i++)
        printf("  %s\n", ps_sim_model_name(i));
}

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST)
        return 0;
    return cli_fail(CLI_BAD_INPUT, CMD, "cannot create %s: %s", dir, strerror(errno));
}

static const char *const examples[] = {
    "pairsight simulate --gpu a100 --experiments 200 --runs 2 --seed 3 --out out/small",
    "pairsight simulate --gpu h100 --pairs resnet50:8/bert-base:8 --splits 30/36 --experiments=50 --json --out "
    "out/h100",
    "pairsight simulate --gpu a100 --launch gated --experiments 200 --runs 2 --out out/gated",
    "pairsight simulate --list", NULL};

/* Indexed by ps_sim_launch_t. */
static const char *const launch_names[] = {"gated", "host", NULL};

/* What simulate was asked to do. */
typedef struct {
    ps_sim_params_t p;
    const char *out, *derive_path, *derive_gpu, *oplist;
    int quiet, json, do_list;
} sim_args_t;

static int parse_sim_args(int argc, char **argv, sim_args_t *a, int *code)
{
    memset(a, 0, sizeof *a);
    char gpu_help[1024];
    snprintf(gpu_help, sizeof gpu_help, "GPU: ");
    ps_gpu_names(gpu_help + 5, sizeof gpu_help - 5);
    a->p = ps_sim_default_params();
    a->derive_gpu = "V100-SXM2-16GB";
    cli_opt_t opts[] = {
        {"--gpu", CLI_STR, &a->p.gpu, "NAME", gpu_help},
        {"--models", CLI_STR, &a->p.models, "LIST",
         "comma-separated models: the default pairs among them, or every ordered pair of them when no default "
         "pair remains",
         .def = "the six models of the published evaluation"},
        {"--pairs", CLI_STR, &a->p.pairs, "LIST",
         "ordered HP/LP pairs with batches, e.g. resnet50:8/bert-base:8,llama-3.2-1b:8/resnet50:8",
         .def = "the 20 pairs of docs/simulator.md"},
        {"--batches", CLI_STR, &a->p.batches, "SPEC",
         "batch of every model (16) or per model (resnet50:16,bert-base:32) where --pairs does not set it", .def = "8"},
        {"--splits", CLI_STR, &a->p.splits, "SPEC",
         "SM splits hp/lp in TPCs, e.g. 10/44,20/34, or all (every split of the GPU)",
         .def = "hp = round(k*TPCs/10), k=1..9"},
        {"--min-len", CLI_INT, &a->p.min_len, "N", "fewest operators per segment", .lo = 1, .hi = 100000},
        {"--max-len", CLI_INT, &a->p.max_len, "N", "most operators per segment", .lo = 1, .hi = 100000},
        {"--experiments", CLI_LONG, &a->p.experiments, "N", "co-execution settings", .lo = 1, .hi = 100000000},
        {"--runs", CLI_INT, &a->p.runs, "R", "runs per experiment", .lo = 1, .hi = 10000},
        {"--seed", CLI_U64, &a->p.seed, "S", "random seed", .lo = 0, .hi = 0},
        {"--threads", CLI_INT, &a->p.threads, "T", "worker threads, 0 = all cores", .lo = 0,
         .hi = ps_thread_limit() < 256 ? ps_thread_limit() : 256},
        {"--bert-seq", CLI_INT, &a->p.bert_seq, "N", "BERT sequence length", .lo = 1, .hi = 8192},
        {"--llama-prompt", CLI_INT, &a->p.llama_prompt, "N", "Llama prompt length, also the decode step's KV length",
         .lo = 1, .hi = 131072},
        {"--noise", CLI_DBL, &a->p.noise, "S", "sigma of the per-run log-normal noise", .lo = 0, .hi = 1,
         .flags = CLI_HI_OPEN},
        {"--launch", CLI_ENUM, &a->p.launch, "MODE",
         "who feeds the streams: gated (launches queued on the GPU before the run, as pairsight collect) or host "
         "(one host thread issues both tasks' launches in turn, as a co-location runtime)",
         .choices = launch_names},
        {"--out", CLI_STR, &a->out, "DIR", "output folder, created if missing (required unless --derive or --list)"},
        {"--derive", CLI_STR, &a->derive_path, "OPS_CSV",
         "print the derived kernels of a measured V100 profile as C initializers (data/orion_kernels.inc) and exit",
         .flags = CLI_IN},
        {"--derive-gpu", CLI_STR, &a->derive_gpu, "NAME", "GPU of the profile given to --derive"},
        {"--oplist", CLI_STR, &a->oplist, "NAME=FILE,...",
         "operator lists of your own models (python -m pairsight.capture), simulated under NAME (a FILE without "
         "NAME= is named by its header's model=) at the batch they were captured at; name them in --pairs or "
         "--models (a list named in neither is not simulated: a warning)"},
        {"--list", CLI_FLAG, &a->do_list, NULL, "list the models and GPUs and exit"},
        CLI_OPT_JSON(&a->json, "print a JSON summary on stdout (default: a line on stderr)"),
        CLI_OPT_QUIET(&a->quiet),
        {NULL}};
    cli_spec_t spec = {.cmd = CMD,
                       .synopsis = "[options] --out DIR\n--derive OPS_CSV > data/orion_kernels.inc\n--list",
                       .about = "Simulate a profiling campaign on a GPU twin and write DIR/ops.csv (every\n"
                                "operator of the campaign's models at every TPC count used and the whole\n"
                                "GPU) and DIR/coexec.csv (one row per run, mechanism sim). Deterministic\n"
                                "for a seed whatever the thread count. See docs/simulator.md.\n",
                       .opts = opts,
                       .examples = examples,
                       .exit_status =
                           "0 written, 1 bad input or unwritable --out, 2 usage error (also an unknown model).",
                       .max_pos = 0};
    return cli_parse(&spec, argc, argv, NULL, code);
}

/* DIR/ops.csv and DIR/coexec.csv. */
static int write_campaign(const char *out, const ps_ops_t *ops, const ps_coexec_t *cx)
{
    char path[4096];
    int rc = make_dir(out);
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/ops.csv", out);
        if (ps_ops_save(ops, path) != 0)
            rc = cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    }
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/coexec.csv", out);
        if (ps_coexec_save(cx, path) != 0)
            rc = cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    }
    return rc;
}

/* DIR/campaign.json: where the tables came from (the twin), on which GPU,
 * with which seed and size, so that a report names them (docs/FORMATS.md). */
static int write_provenance(const sim_args_t *a, const ps_ops_t *ops, const ps_coexec_t *cx)
{
    ps_gpu_info_t g;
    int known = ps_gpu_find(a->p.gpu, &g) == 0;
    cJSON *o = cli_json_new("campaign", 1);
    if (!o)
        return cli_fail(CLI_BAD_INPUT, CMD, "out of memory");
    cJSON_AddStringToObject(o, "source", "twin");
    cJSON_AddStringToObject(o, "gpu", known ? g.name : a->p.gpu);
    cJSON_AddNumberToObject(o, "seed", (double)a->p.seed);
    cJSON_AddNumberToObject(o, "experiments", (double)a->p.experiments);
    cJSON_AddNumberToObject(o, "runs", a->p.runs);
    cJSON_AddNumberToObject(o, "ops_rows", (double)ps_ops_rows(ops));
    cJSON_AddNumberToObject(o, "coexec_rows", (double)ps_coexec_rows(cx));
    cJSON_AddStringToObject(o, "pairsight", ps_version());
    char path[4096];
    snprintf(path, sizeof path, "%s/campaign.json", a->out);
    ps_outfile_t *w = NULL;
    int rc = ps_outfile_open(path, &w);
    if (rc == 0) {
        cli_json_write(o, ps_outfile_stream(w));
        fputc('\n', ps_outfile_stream(w));
        rc = ps_outfile_commit(w);
    }
    cJSON_Delete(o);
    return rc == 0 ? CLI_OK : cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
}

/* JSON on stdout with --json (data), else a line on stderr unless -q. */
static void print_summary(const sim_args_t *a, const ps_ops_t *ops, const ps_coexec_t *cx, double t_sim, double t_all)
{
    ps_gpu_info_t g = {.name = a->p.gpu};
    ps_gpu_find(a->p.gpu, &g);
    if (a->json) {
        cJSON *o = cli_json_new("simulate", 1);
        cJSON_AddStringToObject(o, "gpu", g.name);
        cJSON_AddNumberToObject(o, "experiments", (double)a->p.experiments);
        cJSON_AddNumberToObject(o, "runs", a->p.runs);
        cJSON_AddNumberToObject(o, "ops_rows", (double)ps_ops_rows(ops));
        cJSON_AddNumberToObject(o, "coexec_rows", (double)ps_coexec_rows(cx));
        cJSON_AddNumberToObject(o, "simulate_s", t_sim);
        cJSON_AddNumberToObject(o, "total_s", t_all);
        cJSON_AddStringToObject(o, "out", a->out);
        cli_json_print(o, stdout);
    } else if (!a->quiet) {
        fprintf(stderr, "simulate: %s: %zu operator rows, %zu co-execution rows in %s (%.1f s)\n", g.name,
                ps_ops_rows(ops), ps_coexec_rows(cx), a->out, t_all);
    }
}

/* Whether model is one of the comma-separated items of list, an item being
 * MODEL, MODEL:BATCH or HP[:B]/LP[:B]. */
static int names_model(const char *list, const char *model)
{
    size_t n = strlen(model);
    for (const char *s = list; s && *s; s++) {
        if ((s == list || s[-1] == ',' || s[-1] == '/') && strncmp(s, model, n) == 0 &&
            (s[n] == '\0' || s[n] == ',' || s[n] == '/' || s[n] == ':'))
            return 1;
    }
    return 0;
}

/* A list registered with --oplist that neither --models nor --pairs names
 * is not simulated: say so (the default models are the built-in ones). */
static void warn_unused_lists(const sim_args_t *a)
{
    for (int i = 0; ps_oplist_name(i); i++) {
        const char *name = ps_oplist_name(i);
        if (names_model(a->p.models, name) || names_model(a->p.pairs, name))
            continue;
        fprintf(stderr,
                "pairsight: simulate: warning: --oplist %s is in neither --models nor --pairs, so it is not "
                "simulated (add --models %s,resnet50 or --pairs %s:B/resnet50:8)\n",
                name, name, name);
    }
}

/* A failed run; an unknown model is a usage error (exit 2) whose message
 * also names the lists of --oplist. */
static int fail_run(void)
{
    const char *err = ps_last_error();
    if (!strstr(err, "unknown model"))
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", err);
    char own[512] = "";
    size_t len = 0;
    for (int i = 0; ps_oplist_name(i) && len < sizeof own; i++)
        len += (size_t)snprintf(own + len, sizeof own - len, "%s%s", i ? ", " : "", ps_oplist_name(i));
    if (len)
        return cli_fail(CLI_USAGE, CMD, "%s; your --oplist lists: %s", err, own);
    return cli_fail(CLI_USAGE, CMD, "%s; no --oplist list given (--oplist NAME=FILE adds your own model)", err);
}

int cmd_simulate(int argc, char **argv)
{
    sim_args_t a;
    int code;
    if (parse_sim_args(argc, argv, &a, &code))
        return code;
    if (a.do_list) {
        list();
        return CLI_OK;
    }
    if (a.derive_path)
        return derive(a.derive_path, a.derive_gpu);
    if (a.oplist && ps_oplist_register(a.oplist) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "--oplist: %s", ps_last_error());
    warn_unused_lists(&a);
    if (!a.out)
        return cli_fail(CLI_USAGE, CMD, "--out DIR is required (see pairsight simulate --help)");
    ps_gpu_info_t g;
    if (a.p.gpu && ps_gpu_find(a.p.gpu, &g) != 0) {
        char known[1024];
        ps_gpu_names(known, sizeof known);
        return cli_fail(CLI_USAGE, CMD, "--gpu: unknown GPU '%s' (known: %s; pairsight simulate --list)", a.p.gpu,
                        known);
    }
    /* A long campaign must not end in "cannot create": check --out first. */
    if ((code = cli_check_out_dir(CMD, a.out)) != CLI_OK)
        return code;
    a.p.progress = cli_progress_cb;
    a.p.progress_user = &a.quiet;
    double t0 = ps_now();
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    if (ps_sim_run(&a.p, &ops, &cx) != 0)
        return fail_run();
    cli_progress_end(a.quiet);
    double t_sim = ps_now() - t0;
    int rc = write_campaign(a.out, ops, cx);
    if (rc == 0)
        rc = write_provenance(&a, ops, cx);
    if (rc == 0)
        print_summary(&a, ops, cx, t_sim, ps_now() - t0);
    ps_ops_free(ops);
    ps_coexec_free(cx);
    return rc;
}
