/* `pairsight simulate`: write a simulated profiling campaign (ops.csv and
 * coexec.csv), or derive the classic models' kernels from a measured
 * profile (--derive). */
#include "cli/cli.h"
#include "common/common.h"
#include "profile/gpu.h"
#include "profile/tables.h"
#include "simulate/derive.h"
#include "simulate/sim.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char cmd_simulate_usage[] =
    "usage: pairsight simulate [options] --out DIR\n"
    "       pairsight simulate --derive OPS_CSV > data/orion_kernels.inc\n"
    "\n"
    "Simulate a profiling campaign on a GPU twin and write DIR/ops.csv (every\n"
    "operator of the campaign's models at every TPC count used and the whole\n"
    "GPU) and DIR/coexec.csv (one row per run, mechanism sim). Deterministic\n"
    "for a seed whatever the thread count. See docs/simulator.md.\n"
    "\n"
    "options:\n"
    "  --gpu NAME         GPU: A100-SXM4-40GB (a100), H100-SXM (h100), H200 (h200),\n"
    "                     V100-SXM2-16GB (v100), V100-SXM2-32GB (default a100)\n"
    "  --models LIST      comma-separated models: the default pairs among them, or\n"
    "                     every ordered pair of them when no default pair remains\n"
    "                     (default: the six models of the published evaluation)\n"
    "  --pairs LIST       ordered HP/LP pairs with batches, e.g.\n"
    "                     resnet50:8/bert-base:8,llama-3.2-1b:8/resnet50:8\n"
    "                     (default: the 20 pairs of docs/simulator.md)\n"
    "  --batches SPEC     batch of every model (16) or per model\n"
    "                     (resnet50:16,bert-base:32) where --pairs does not set it\n"
    "                     (default 8)\n"
    "  --splits SPEC      SM splits hp/lp in TPCs, e.g. 10/44,20/34, or all (every\n"
    "                     split of the GPU) (default: hp = round(k*TPCs/10), k=1..9)\n"
    "  --min-len N        fewest operators per segment (default 1)\n"
    "  --max-len N        most operators per segment (default 16)\n"
    "  --experiments N    co-execution settings (default 1000)\n"
    "  --runs R           runs per experiment (default 14)\n"
    "  --seed S           random seed (default 1)\n"
    "  --threads T        worker threads, 0 = all cores (default 0)\n"
    "  --bert-seq N       BERT sequence length (default 128)\n"
    "  --llama-prompt N   Llama prompt length, also the decode step's KV length\n"
    "                     (default 128)\n"
    "  --noise S          sigma of the per-run log-normal noise (default 0.02)\n"
    "  --out DIR          output folder, created if missing (required)\n"
    "  --derive OPS_CSV   print the derived kernels of a measured V100 profile as\n"
    "                     C initializers (data/orion_kernels.inc) and exit\n"
    "  --derive-gpu NAME  GPU of the profile given to --derive (default V100-SXM2-16GB)\n"
    "  --list             list the models and GPUs and exit (default off)\n"
    "  --json             print a JSON summary on stdout (default off: a line on\n"
    "                     stderr)\n"
    "  -q                 no progress or summary on stderr (default off)\n"
    "  -h, --help         this text\n"
    "\n"
    "Exit status: 0 written, 1 bad input or unwritable --out, 2 usage.\n";

static const char *CMD = "simulate";

static int parse_long(const char *flag, const char *s, long lo, long hi, long *out)
{
    if (cli_parse_long(s, lo, hi, out) != 0)
        return cli_fail(CLI_USAGE, CMD, "%s: '%s' is not an integer in %ld..%ld", flag, s, lo, hi);
    return 0;
}

static void progress(double done, double total, void *user)
{
    cli_progress(*(int *)user, "simulate", done, total);
}

static int derive(const char *path, const char *gpu)
{
    ps_ops_t *ops = NULL;
    if (ps_ops_load(path, &ops) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    int rc = sim_derive_write(ops->rows, ops->n, gpu, stdout);
    ps_ops_free(ops);
    if (rc != 0 || fflush(stdout) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "derive: %s", ps_last_error());
    return CLI_OK;
}

static void list(void)
{
    size_t n;
    const ps_gpu_t *g = ps_gpu_list(&n);
    printf("GPUs:\n");
    for (size_t i = 0; i < n; i++)
        printf("  %-16s %3d SMs %2d TPCs %6.0f GB/s %4.0f MB L2  (alias %s)\n", g[i].name, g[i].sms, g[i].tpcs,
               g[i].dram_gbs, g[i].l2_mb, g[i].aliases[0] ? g[i].aliases[0] : "-");
    printf("models:\n");
    for (int i = 0; sim_model_names[i]; i++)
        printf("  %s\n", sim_model_names[i]);
}

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST)
        return 0;
    return cli_fail(CLI_BAD_INPUT, CMD, "cannot create %s: %s", dir, strerror(errno));
}

int cmd_simulate(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_simulate_usage, stdout);
        return CLI_OK;
    }
    ps_sim_params_t p = ps_sim_default_params();
    const char *out = NULL, *derive_path = NULL, *derive_gpu = "V100-SXM2-16GB";
    int quiet = 0, json = 0, do_list = 0;
    static const char *const value_flags[] = {
        "--gpu",      "--models",      "--pairs", "--batches", "--splits",   "--out",
        "--derive",   "--derive-gpu",  "--min-len", "--max-len", "--experiments", "--runs",
        "--seed",     "--threads",     "--bert-seq", "--llama-prompt", "--noise", NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        long v;
        if (strcmp(a, "--list") == 0) {
            do_list = 1;
            continue;
        }
        if (a[0] != '-')
            return cli_fail(CLI_USAGE, CMD, "%s: unexpected argument (see pairsight simulate --help)", a);
        int rc = cli_next_option(CMD, argc, argv, &i, value_flags, &json, &quiet, &val);
        if (rc != CLI_OK)
            return rc;
        if (!val)
            continue;
        if (strcmp(a, "--gpu") == 0)
            p.gpu = val;
        else if (strcmp(a, "--models") == 0)
            p.models = val;
        else if (strcmp(a, "--pairs") == 0)
            p.pairs = val;
        else if (strcmp(a, "--batches") == 0)
            p.batches = val;
        else if (strcmp(a, "--splits") == 0)
            p.splits = val;
        else if (strcmp(a, "--out") == 0)
            out = val;
        else if (strcmp(a, "--derive") == 0)
            derive_path = val;
        else if (strcmp(a, "--derive-gpu") == 0)
            derive_gpu = val;
        else if (strcmp(a, "--min-len") == 0 && !(rc = parse_long(a, val, 1, 100000, &v)))
            p.min_len = (int)v;
        else if (strcmp(a, "--max-len") == 0 && !(rc = parse_long(a, val, 1, 100000, &v)))
            p.max_len = (int)v;
        else if (strcmp(a, "--experiments") == 0 && !(rc = parse_long(a, val, 1, 100000000L, &v)))
            p.experiments = v;
        else if (strcmp(a, "--runs") == 0 && !(rc = parse_long(a, val, 1, 10000, &v)))
            p.runs = (int)v;
        else if (strcmp(a, "--seed") == 0 && !(rc = parse_long(a, val, 0, LONG_MAX, &v)))
            p.seed = (uint64_t)v;
        else if (strcmp(a, "--threads") == 0 && !(rc = parse_long(a, val, 0, thread_limit() < 256 ? thread_limit() : 256, &v)))
            p.threads = (int)v;
        else if (strcmp(a, "--bert-seq") == 0 && !(rc = parse_long(a, val, 1, 8192, &v)))
            p.bert_seq = (int)v;
        else if (strcmp(a, "--llama-prompt") == 0 && !(rc = parse_long(a, val, 1, 131072, &v)))
            p.llama_prompt = (int)v;
        else if (strcmp(a, "--noise") == 0) {
            char *end;
            p.noise = strtod(val, &end);
            if (!*val || *end || !(p.noise >= 0 && p.noise < 1))
                return cli_fail(CLI_USAGE, CMD, "--noise: '%s' is not a number in [0, 1)", val);
        } else if (rc == 0)
            return cli_bad_option(CMD, a, NULL);
        if (rc != 0)
            return rc;
    }
    if (do_list) {
        list();
        return CLI_OK;
    }
    if (derive_path)
        return derive(derive_path, derive_gpu);
    if (!out)
        return cli_fail(CLI_USAGE, CMD, "--out DIR is required");
    /* A long campaign must not end in "cannot create": check --out first. */
    int out_rc = cli_check_out_dir(CMD, out);
    if (out_rc != CLI_OK)
        return out_rc;
    p.progress = progress;
    p.progress_user = &quiet;

    double t0 = ps_now();
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    if (ps_sim_run(&p, &ops, &cx) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    cli_progress_end(quiet);
    double t_sim = ps_now() - t0;
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
    if (rc == 0) {
        const ps_gpu_t *g = ps_gpu_find(p.gpu);
        double t_all = ps_now() - t0;
        if (json) {
            fputs("{\"gpu\": ", stdout);
            cli_put_json_string(g->name);
            printf(", \"experiments\": %ld, \"runs\": %d, \"ops_rows\": %zu, "
                   "\"coexec_rows\": %zu, \"simulate_s\": %.3f, \"total_s\": %.3f, \"out\": ",
                   p.experiments, p.runs, ps_ops_rows(ops), ps_coexec_rows(cx), t_sim, t_all);
            cli_put_json_string(out);
            printf("}\n");
        } else if (!quiet) {
            fprintf(stderr, "simulate: %s: %zu operator rows, %zu co-execution rows in %s (%.1f s)\n", g->name,
                    ps_ops_rows(ops), ps_coexec_rows(cx), out, t_all);
        }
    }
    ps_ops_free(ops);
    ps_coexec_free(cx);
    return rc;
}
