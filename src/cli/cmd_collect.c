/* pairsight collect: measure profiles and co-executions on a real GPU (or on
 * the fake backend, a simulated GPU for tests), keep them in a resumable
 * campaign database, and export ops.csv and coexec.csv. */
#include "cli/cli.h"

#include "collect/oplist.h"
#include "common/common.h"
#include "profile/tables.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

const char cmd_collect_usage[] =
    "usage: pairsight collect ACTION [options]\n"
    "\n"
    "Measure on an NVIDIA GPU: standalone operator profiles at each TPC count\n"
    "(SMs split with CUDA green contexts) and co-executions of HP and LP segments.\n"
    "Results go to a SQLite campaign database one task at a time; run the same\n"
    "command again after a crash or kill and it resumes where it stopped.\n"
    "\n"
    "actions:\n"
    "  info       the GPU and the TPC counts its green contexts allow\n"
    "  ops        print a model's operator list (or check one with --file)\n"
    "  profile    standalone profile of --model at every --tpcs count\n"
    "  counters   hardware counters of --model's operators (CUPTI range profiler,\n"
    "             or from an Nsight Compute CSV with --ncu)\n"
    "  coexec     co-execution campaign of --hp beside --lp\n"
    "  status     tasks and rows in the campaign database\n"
    "  export     write ops.csv and coexec.csv from the campaign database\n"
    "  scaling    --model's throughput alone at each MPS --shares percentage\n"
    "             (adds to workload_scaling.csv and, at 100%, workloads.csv)\n"
    "  colocate   --jobs run together under MPS, each at its share (adds one\n"
    "             co-location to colocations.csv)\n"
    "  fixed-cost the fixed cost of a co-execution (empty segments) per --splits\n"
    "  twin       the twin's predictions for a coexec.csv's segment pairs\n"
    "  score      measured against predicted slowdown (MAPE, correlation)\n"
    "             (`pairsight collect ACTION --help` for these three)\n"
    "\n"
    "options:\n"
    "  --db FILE         campaign database (default campaign.db)\n"
    "  --backend NAME    cuda or fake, a simulated GPU for tests (default cuda)\n"
    "  --device N        CUDA device ordinal (default 0)\n"
    "  --model NAME      resnet50, resnet101, mobilenetv2, bert-base, llama-3.2-1b,\n"
    "                    llama-3.2-3b (ops, profile, counters; required there)\n"
    "  --batch N         batch size (default 8)\n"
    "  --seq-len N       tokens per sequence of transformer models (default 128)\n"
    "  --tpcs LIST       TPC counts, e.g. 8,16,32 or 4-52:4 (default every count\n"
    "                    the GPU can partition)\n"
    "  --warmup N        untimed launches before timing (default 3)\n"
    "  --runs N          profile: timed runs, median kept (default 10);\n"
    "                    coexec: rows per experiment (default 30)\n"
    "  --hp MODEL:BATCH  coexec: high-priority side (required there)\n"
    "  --lp MODEL:BATCH  coexec: low-priority side (required there)\n"
    "  --experiments N   coexec: number of experiments (default 100)\n"
    "  --seg-len A-B     coexec: segment length in operators (default 1-16)\n"
    "  --seed N          coexec: experiment seed, part of their names (default 1)\n"
    "  --ops FILE        export: ops.csv path, \"\" to skip (default ops.csv)\n"
    "  --coexec FILE     export: coexec.csv path, \"\" to skip (default coexec.csv)\n"
    "  --file FILE       ops: an operator list to check instead of a model\n"
    "  --ncu FILE        counters: read them from this `ncu --csv --page raw` report\n"
    "                    (one launch per operator; no device needed)\n"
    "  --shares LIST     scaling: MPS percentages (default 10-100:10)\n"
    "  --jobs LIST       colocate: MODEL:BATCH@SHARE,... (required there)\n"
    "  --seconds S       scaling, colocate: timed seconds per run (default 5)\n"
    "  --scaling FILE    scaling: output (default workload_scaling.csv)\n"
    "  --workloads FILE  scaling: output (default workloads.csv)\n"
    "  --colocations FILE colocate: output (default colocations.csv)\n"
    "  --id NAME         colocate: co-location id (default from the jobs)\n"
    "  --fake-delay-us N fake backend: sleep per measurement (default 0)\n"
    "  --json            print the result as JSON on stdout (default: text)\n"
    "  -q                no progress on stderr (default: progress on a terminal)\n"
    "\n"
    "Without a GPU (or in a build without CUDA) the device actions fail with a\n"
    "message; status, export and ops always work. scaling and colocate need the\n"
    "MPS daemon (nvidia-cuda-mps-control -d) with the cuda backend.\n"
    "The cuda backend is the module libpairsight_cuda.so, loaded only by the\n"
    "device actions: from $PAIRSIGHT_CUDA_MODULE if set, else beside this\n"
    "program, else from ../lib/pairsight/ beside it.\n";

#define CMD "collect"
#define MAX_TPCS 512
#define MAX_JOBS 16

typedef struct {
    const char *action, *db, *model, *ops_path, *coexec_path, *file;
    const char *scaling_path, *workloads_path, *colocations_path, *id, *ncu;
    double seconds;
    int n_shares, n_jobs;
    int shares[MAX_TPCS];
    ps_mps_job_t jobs[MAX_JOBS];
    char job_models[MAX_JOBS][64];
    int batch, json, quiet, n_tpcs, runs;
    int tpcs[MAX_TPCS];
    ps_collect_params_t p;
    ps_coexec_plan_t plan;
    char hp_model[64], lp_model[64];
} opts_t;

/* "8,16,32" or "4-52:4" or a mix: "2,4-16:4". */
/* Into out, from buf, which strtok_r cuts up. */
static int parse_tpcs_in(char *buf, int *out, int *n)
{
    *n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int lo, hi, step = 1;
        char *dash = strchr(tok, '-'), *colon = strchr(tok, ':');
        if (colon) {
            *colon = '\0';
            if (cli_parse_int(colon + 1, 1, INT_MAX, &step))
                return -1;
        }
        if (dash) {
            *dash = '\0';
            if (cli_parse_int(tok, 1, INT_MAX, &lo) || cli_parse_int(dash + 1, 1, INT_MAX, &hi) || hi < lo)
                return -1;
        } else {
            if (colon || cli_parse_int(tok, 1, INT_MAX, &lo))
                return -1;
            hi = lo;
        }
        for (long v = lo; v <= hi; v += step) {
            if (*n == MAX_TPCS)
                return -1;
            out[(*n)++] = (int)v;
        }
    }
    return *n > 0 ? 0 : -1;
}

/* A copy of s of its own size: a long list is never cut. */
static int parse_tpcs(const char *s, int *out, int *n)
{
    char *buf = ps_strdup(s);
    int rc = buf ? parse_tpcs_in(buf, out, n) : -1;
    free(buf);
    return rc;
}

/* "bert-base:8" */
static int parse_side(const char *s, char *model, size_t size, int *batch)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || (size_t)(colon - s) >= size || cli_parse_int(colon + 1, 1, INT_MAX, batch))
        return -1;
    memcpy(model, s, (size_t)(colon - s));
    model[colon - s] = '\0';
    return 0;
}

/* "resnet50:8@50,bert-base:8@50" */
static int parse_jobs_in(char *buf, opts_t *o)
{
    o->n_jobs = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *at = strrchr(tok, '@');
        int k = o->n_jobs;
        if (!at || k == MAX_JOBS || cli_parse_int(at + 1, 1, INT_MAX, &o->jobs[k].share_pct) ||
            o->jobs[k].share_pct > 100)
            return -1;
        *at = '\0';
        if (parse_side(tok, o->job_models[k], sizeof o->job_models[k], &o->jobs[k].batch))
            return -1;
        o->jobs[k].model = o->job_models[k];
        o->n_jobs++;
    }
    return o->n_jobs > 0 ? 0 : -1;
}

static int parse_jobs(const char *s, opts_t *o)
{
    char *buf = ps_strdup(s);
    int rc = buf ? parse_jobs_in(buf, o) : -1;
    free(buf);
    return rc;
}

static int parse_args(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->db = "campaign.db";
    o->ops_path = "ops.csv";
    o->coexec_path = "coexec.csv";
    o->scaling_path = "workload_scaling.csv";
    o->workloads_path = "workloads.csv";
    o->colocations_path = "colocations.csv";
    o->seconds = 5;
    for (int v = 10; v <= 100; v += 10)
        o->shares[o->n_shares++] = v;
    o->batch = 8;
    o->p = ps_collect_default_params();
    o->plan = ps_coexec_default_plan();
    if (argc < 2)
        return cli_fail(CLI_USAGE, CMD, "no action given (see pairsight collect --help)");
    o->action = argv[1];
    static const char *const value_flags[] = {
        "--db",      "--backend", "--device", "--model",   "--batch",       "--seq-len",   "--tpcs",
        "--warmup",  "--runs",    "--hp",     "--lp",      "--experiments", "--seg-len",   "--seed",
        "--ops",     "--coexec",  "--ncu",    "--file",    "--shares",      "--jobs",      "--seconds",
        "--scaling", "--workloads", "--colocations", "--id", "--fake-delay-us", NULL};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        int bad = 0, lo = 0, hi = 0;
        int rc = cli_next_option(CMD, argc, argv, &i, value_flags, &o->json, &o->quiet, &v);
        if (rc != CLI_OK)
            return rc;
        if (!v)
            continue;
        if (strcmp(a, "--db") == 0) {
            o->db = v;
        } else if (strcmp(a, "--backend") == 0) {
            o->p.backend = v;
        } else if (strcmp(a, "--device") == 0) {
            bad = cli_parse_int(v, 0, INT_MAX, &o->p.device);
        } else if (strcmp(a, "--model") == 0) {
            o->model = v;
        } else if (strcmp(a, "--batch") == 0) {
            bad = cli_parse_int(v, 1, INT_MAX, &o->batch);
        } else if (strcmp(a, "--seq-len") == 0) {
            bad = cli_parse_int(v, 1, INT_MAX, &o->p.seq_len);
        } else if (strcmp(a, "--tpcs") == 0) {
            bad = parse_tpcs(v, o->tpcs, &o->n_tpcs);
        } else if (strcmp(a, "--warmup") == 0) {
            bad = cli_parse_int(v, 0, INT_MAX, &o->p.warmup);
        } else if (strcmp(a, "--runs") == 0) {
            bad = cli_parse_int(v, 1, INT_MAX, &o->runs);
        } else if (strcmp(a, "--hp") == 0) {
            bad = parse_side(v, o->hp_model, sizeof o->hp_model, &o->plan.hp_batch);
        } else if (strcmp(a, "--lp") == 0) {
            bad = parse_side(v, o->lp_model, sizeof o->lp_model, &o->plan.lp_batch);
        } else if (strcmp(a, "--experiments") == 0) {
            bad = cli_parse_int(v, 1, INT_MAX, &o->plan.experiments);
        } else if (strcmp(a, "--seg-len") == 0) {
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v);
            char *dash = strchr(buf, '-');
            if (dash)
                *dash = '\0';
            bad = cli_parse_int(buf, 1, INT_MAX, &lo) || (dash ? cli_parse_int(dash + 1, 1, INT_MAX, &hi) : (hi = lo, 0)) ||
                  hi < lo;
            o->plan.seg_min = lo;
            o->plan.seg_max = hi;
        } else if (strcmp(a, "--seed") == 0) {
            int s;
            bad = cli_parse_int(v, 0, INT_MAX, &s);
            o->plan.seed = (unsigned long long)s;
        } else if (strcmp(a, "--ops") == 0) {
            o->ops_path = v;
        } else if (strcmp(a, "--coexec") == 0) {
            o->coexec_path = v;
        } else if (strcmp(a, "--ncu") == 0) {
            o->ncu = v;
        } else if (strcmp(a, "--file") == 0) {
            o->file = v;
        } else if (strcmp(a, "--shares") == 0) {
            bad = parse_tpcs(v, o->shares, &o->n_shares);
            for (int k = 0; !bad && k < o->n_shares; k++)
                bad = o->shares[k] > 100;
        } else if (strcmp(a, "--jobs") == 0) {
            bad = parse_jobs(v, o);
        } else if (strcmp(a, "--seconds") == 0) {
            char *end;
            o->seconds = strtod(v, &end);
            bad = end == v || *end || !(o->seconds > 0 && o->seconds < 1e6);
        } else if (strcmp(a, "--scaling") == 0) {
            o->scaling_path = v;
        } else if (strcmp(a, "--workloads") == 0) {
            o->workloads_path = v;
        } else if (strcmp(a, "--colocations") == 0) {
            o->colocations_path = v;
        } else if (strcmp(a, "--id") == 0) {
            o->id = v;
        } else if (strcmp(a, "--fake-delay-us") == 0) {
            int d;
            bad = cli_parse_int(v, 0, INT_MAX, &d);
            o->p.fake_delay_us = (unsigned)d;
        } else {
            return cli_bad_option(CMD, a, NULL);
        }
        if (bad)
            return cli_fail(CLI_USAGE, CMD, "%s: bad value '%s'", a, v);
    }
    if (o->runs) {
        o->p.profile_runs = o->runs;
        o->plan.runs = o->runs;
    }
    return 0;
}

static void progress(long done, long total, void *user)
{
    const opts_t *o = user;
    cli_progress(o->quiet, o->action, (double)done, (double)total);
}

static int act_info(opts_t *o)
{
    ps_campaign_t *c = NULL;
    ps_collect_device_t d;
    /* An in-memory database: info touches no file. */
    if (ps_campaign_open(":memory:", &o->p, &c) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    ps_campaign_device(c, &d);
    int valid[MAX_TPCS];
    int n = ps_collect_valid_tpcs(&d, valid, MAX_TPCS);
    if (o->json) {
        printf("{\"gpu\": \"%s\", \"sm_count\": %d, \"tpc_count\": %d, \"min_partition_sms\": %d, "
               "\"sm_alignment\": %d, \"compute_capability\": \"%d.%d\", \"valid_tpcs\": [",
               d.gpu, d.sm_count, d.tpc_count, d.min_partition_sms, d.sm_alignment, d.cc_major,
               d.cc_minor);
        for (int i = 0; i < n && i < MAX_TPCS; i++)
            printf("%s%d", i ? ", " : "", valid[i]);
        printf("]}\n");
    } else {
        printf("gpu                %s (compute capability %d.%d)\n", d.gpu, d.cc_major, d.cc_minor);
        printf("SMs                %d (%d TPCs)\n", d.sm_count, d.tpc_count);
        printf("green contexts     at least %d SMs, in multiples of %d\n", d.min_partition_sms,
               d.sm_alignment);
        printf("valid TPC counts  ");
        for (int i = 0; i < n && i < MAX_TPCS; i++)
            printf(" %d", valid[i]);
        printf("\n");
    }
    ps_campaign_free(c);
    return CLI_OK;
}

static int act_ops(opts_t *o)
{
    ps_oplist_t *l = NULL;
    int rc;
    if (o->file)
        rc = ps_oplist_read(o->file, &l);
    else if (!o->model)
        return cli_fail(CLI_USAGE, CMD, "ops needs --model or --file");
    else
        rc = ps_zoo_build(o->model, o->batch, o->p.seq_len, &l);
    if (rc)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    double flops = 0, bytes = 0;
    for (int i = 0; i < l->n; i++) {
        flops += ps_op_flops(&l->ops[i]);
        bytes += ps_op_bytes(&l->ops[i]);
    }
    if (o->json)
        printf("{\"model\": \"%s\", \"batch\": %d, \"seq_len\": %d, \"ops\": %d, \"gflops\": %.6g, "
               "\"gbytes\": %.6g}\n",
               l->model, l->batch, l->seq_len, l->n, flops * 1e-9, bytes * 1e-9);
    else if (o->file)
        printf("%s: %d operators, %.4g GFLOP, %.4g GB at fp16\n", o->file, l->n, flops * 1e-9,
               bytes * 1e-9);
    else
        ps_oplist_write(l, stdout);
    ps_oplist_free(l);
    return CLI_OK;
}

static int print_status(ps_campaign_t *c, const opts_t *o)
{
    ps_campaign_status_t s;
    if (ps_campaign_status(c, &s) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    if (o->json)
        printf("{\"db\": \"%s\", \"gpu\": \"%s\", \"seq_len\": %d, \"tasks\": %ld, \"tasks_done\": "
               "%ld, \"op_rows\": %ld, \"counter_rows\": %ld, \"coexec_rows\": %ld}\n",
               o->db, s.gpu, s.seq_len, s.tasks_total, s.tasks_done, s.op_rows, s.counter_rows,
               s.coexec_rows);
    else
        printf("%s: gpu %s, %ld of %ld tasks done; %ld op rows, %ld counter rows, %ld coexec rows\n",
               o->db, s.gpu[0] ? s.gpu : "(none yet)", s.tasks_done, s.tasks_total, s.op_rows,
               s.counter_rows, s.coexec_rows);
    return CLI_OK;
}

/* The workload id of FORMATS.md's examples: "bert-base_batch8-inf". */
static void workload_id(const char *model, int batch, char *out, size_t size)
{
    snprintf(out, size, "%s_batch%d-inf", model, batch);
}

static int act_scaling(opts_t *o)
{
    if (!o->model)
        return cli_fail(CLI_USAGE, CMD, "scaling needs --model");
    ps_scaling_t *sc = NULL;
    ps_workloads_t *wl = NULL;
    char gpu[64] = "", wid[96];
    workload_id(o->model, o->batch, wid, sizeof wid);
    int rc = 0;
    /* Add to the files when they exist, refusing to measure twice. */
    if (access(o->scaling_path, F_OK) == 0)
        rc = ps_scaling_load(o->scaling_path, &sc);
    else if (!(sc = ps_scaling_new()))
        rc = PS_E_NOMEM;
    if (rc == 0 && access(o->workloads_path, F_OK) == 0)
        rc = ps_workloads_load(o->workloads_path, &wl);
    else if (rc == 0 && !(wl = ps_workloads_new()))
        rc = PS_E_NOMEM;
    double tput100 = NAN;
    for (int k = 0; k < o->n_shares && rc == 0; k++) {
        ps_mps_job_t job = {o->model, o->batch, o->shares[k]};
        double t = 0;
        cli_progress(o->quiet, "scaling", k, o->n_shares);
        rc = ps_collect_mps_run(&o->p, &job, 1, o->seconds, &t, gpu);
        for (size_t i = 0; rc == 0 && i < sc->n; i++)
            if (strcmp(sc->rows[i].gpu, gpu) == 0 && strcmp(sc->rows[i].workload, wid) == 0 &&
                sc->rows[i].share_pct == o->shares[k])
                rc = ps_error(PS_E_INPUT, "%s already has %s at %d%% on %s", o->scaling_path, wid,
                              o->shares[k], gpu);
        ps_scaling_row_t row = {gpu, wid, o->shares[k], t};
        if (rc == 0)
            rc = ps_scaling_append(sc, &row);
        if (rc == 0 && o->shares[k] == 100)
            tput100 = t;
        if (rc == 0 && !o->json)
            printf("%s %s %3d%% %.6g items/s\n", gpu, wid, o->shares[k], t);
    }
    cli_progress_end(o->quiet);
    if (rc == 0)
        rc = ps_scaling_save(sc, o->scaling_path);
    if (rc == 0 && !isnan(tput100)) {
        ps_workload_row_t w = {.gpu = gpu, .workload = wid, .exclusive_tput = tput100};
        double *opt[] = {&w.threads, &w.registers, &w.static_smem, &w.sm_tput_pct, &w.dram_tput_pct,
                         &w.mem_tput_pct, &w.sm_busy_pct, &w.mem_busy_pct, &w.memcap_gb,
                         &w.stall_long_scoreboard, &w.stall_lg_throttle, &w.stall_mio_throttle};
        for (size_t i = 0; i < PS_ARRAY_LEN(opt); i++)
            *opt[i] = NAN;
        for (size_t i = 0; rc == 0 && i < wl->n; i++)
            if (strcmp(wl->rows[i].gpu, gpu) == 0 && strcmp(wl->rows[i].workload, wid) == 0)
                rc = ps_error(PS_E_INPUT, "%s already has %s on %s", o->workloads_path, wid, gpu);
        if (rc == 0)
            rc = ps_workloads_append(wl, &w);
        if (rc == 0)
            rc = ps_workloads_save(wl, o->workloads_path);
    }
    if (rc == 0 && o->json)
        printf("{\"gpu\": \"%s\", \"workload\": \"%s\", \"shares\": %d}\n", gpu, wid, o->n_shares);
    ps_scaling_free(sc);
    ps_workloads_free(wl);
    return rc ? cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error()) : CLI_OK;
}

static int act_colocate(opts_t *o)
{
    if (o->n_jobs < 1)
        return cli_fail(CLI_USAGE, CMD, "colocate needs --jobs MODEL:BATCH@SHARE,...");
    char id[512] = "", wid[MAX_JOBS][96], gpu[64] = "";
    for (int k = 0; k < o->n_jobs; k++) {
        workload_id(o->jobs[k].model, o->jobs[k].batch, wid[k], sizeof wid[k]);
        size_t len = strlen(id);
        snprintf(id + len, sizeof id - len, "%s%s@%d", k ? "+" : "", wid[k], o->jobs[k].share_pct);
    }
    const char *cid = o->id ? o->id : id;
    ps_colocations_t *t = NULL;
    int rc = 0;
    if (access(o->colocations_path, F_OK) == 0)
        rc = ps_colocations_load(o->colocations_path, &t);
    else if (!(t = ps_colocations_new()))
        rc = PS_E_NOMEM;
    for (size_t i = 0; rc == 0 && i < t->n; i++)
        if (strcmp(t->rows[i].colocation, cid) == 0)
            rc = ps_error(PS_E_INPUT, "%s already has co-location %s (give another --id)",
                          o->colocations_path, cid);
    double tput[MAX_JOBS];
    if (rc == 0)
        rc = ps_collect_mps_run(&o->p, o->jobs, o->n_jobs, o->seconds, tput, gpu);
    for (int k = 0; k < o->n_jobs && rc == 0; k++) {
        ps_colocation_row_t row = {cid, gpu, k + 1, wid[k], o->jobs[k].share_pct, tput[k]};
        rc = ps_colocations_append(t, &row);
        if (rc == 0 && !o->json)
            printf("%s slot %d %s at %d%%: %.6g items/s\n", cid, k + 1, wid[k], o->jobs[k].share_pct,
                   tput[k]);
    }
    if (rc == 0)
        rc = ps_colocations_save(t, o->colocations_path);
    if (rc == 0 && o->json) {
        printf("{\"colocation\": \"%s\", \"gpu\": \"%s\", \"tput\": [", cid, gpu);
        for (int k = 0; k < o->n_jobs; k++)
            printf("%s%.17g", k ? ", " : "", tput[k]);
        printf("]}\n");
    }
    ps_colocations_free(t);
    return rc ? cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error()) : CLI_OK;
}

/* twin, score and fixed-cost (cmd_collect_extra.c); -1 for another action. */
int cmd_collect_extra(int argc, char **argv);

int cmd_collect(int argc, char **argv)
{
    int extra = cmd_collect_extra(argc, argv);
    if (extra >= 0)
        return extra;
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_collect_usage, stdout);
        return CLI_OK;
    }
    opts_t o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    const char *act = o.action;
    if (strcmp(act, "ops") == 0)
        return act_ops(&o);
    if (strcmp(act, "info") == 0)
        return act_info(&o);
    if (strcmp(act, "scaling") == 0)
        return act_scaling(&o);
    if (strcmp(act, "colocate") == 0)
        return act_colocate(&o);

    int device = strcmp(act, "profile") == 0 || strcmp(act, "coexec") == 0 ||
                 (strcmp(act, "counters") == 0 && !o.ncu);
    if (!device && strcmp(act, "status") != 0 && strcmp(act, "export") != 0 &&
        strcmp(act, "counters") != 0)
        return cli_fail(CLI_USAGE, CMD, "unknown action '%s' (see pairsight collect --help)", act);
    if ((strcmp(act, "profile") == 0 || strcmp(act, "counters") == 0) && !o.model)
        return cli_fail(CLI_USAGE, CMD, "%s needs --model", act);
    if (strcmp(act, "coexec") == 0 && (!o.hp_model[0] || !o.lp_model[0]))
        return cli_fail(CLI_USAGE, CMD, "coexec needs --hp MODEL:BATCH and --lp MODEL:BATCH");

    ps_campaign_t *c = NULL;
    if (ps_campaign_open(o.db, device ? &o.p : NULL, &c) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    const int *tpcs = o.n_tpcs ? o.tpcs : NULL;
    double t0 = ps_now();
    if (strcmp(act, "profile") == 0) {
        rc = ps_campaign_profile(c, o.model, o.batch, tpcs, o.n_tpcs, progress, &o);
    } else if (strcmp(act, "counters") == 0 && o.ncu) {
        rc = ps_campaign_import_counters(c, o.model, o.batch, o.ncu);
    } else if (strcmp(act, "counters") == 0) {
        rc = ps_campaign_counters(c, o.model, o.batch);
    } else if (strcmp(act, "coexec") == 0) {
        o.plan.hp_model = o.hp_model;
        o.plan.lp_model = o.lp_model;
        o.plan.tpcs = tpcs;
        o.plan.n_tpcs = o.n_tpcs;
        rc = ps_campaign_coexec(c, &o.plan, progress, &o);
    } else if (strcmp(act, "export") == 0) {
        rc = ps_campaign_export(c, o.ops_path[0] ? o.ops_path : NULL,
                                o.coexec_path[0] ? o.coexec_path : NULL);
    } else {
        rc = 0;
    }
    if (device)
        cli_progress_end(o.quiet);
    if (rc) {
        cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
        ps_campaign_free(c);
        return CLI_BAD_INPUT;
    }
    if (!o.quiet && device)
        fprintf(stderr, "pairsight: collect: %s done in %.1f s\n", act, ps_now() - t0);
    if (!o.quiet && !device && o.ncu)
        fprintf(stderr, "pairsight: collect: counters of %s read from %s\n", o.model, o.ncu);
    rc = strcmp(act, "export") == 0 ? CLI_OK : print_status(c, &o);
    if (strcmp(act, "export") == 0 && !o.quiet)
        fprintf(stderr, "pairsight: collect: wrote %s%s%s\n", o.ops_path,
                o.ops_path[0] && o.coexec_path[0] ? " and " : "", o.coexec_path);
    ps_campaign_free(c);
    return rc;
}
