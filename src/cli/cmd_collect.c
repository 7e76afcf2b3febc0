/* pairsight collect: measure profiles and co-executions on a real GPU (or on
 * the fake backend, a simulated GPU for tests), keep them in a resumable
 * campaign database, and export ops.csv and coexec.csv. */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CMD "collect"
#define OP "collect" /* the library's operation, op_collect.c */
#define MAX_TPCS 512
#define MAX_JOBS 16
#define MAX_DEVICES 64
#define LEN(a) (sizeof(a) / sizeof((a)[0]))

typedef struct {
    const char *action, *db, *model, *ops_path, *coexec_path, *file;
    const char *scaling_path, *workloads_path, *colocations_path, *id, *ncu, *oplist;
    double seconds;
    int n_shares, n_jobs;
    int shares[MAX_TPCS];
    ps_mps_job_t jobs[MAX_JOBS];
    char job_models[MAX_JOBS][64];
    int batch, json, quiet, n_tpcs, runs, no_flush;
    int tpcs[MAX_TPCS];
    int devices[MAX_DEVICES], n_devices;
    int n_pos; /* merge: the source databases, pos[0..n_pos) */
    char **pos;
    ps_collect_params_t p;
    ps_coexec_plan_t plan;
    char hp_model[64], lp_model[64];
} opts_t;

/* An action of `pairsight collect`: one row, as the top-level commands are
 * rows of main.c. Most actions share one option table (options, parsed by
 * parse_args) and run on the parsed options; twin, score and fixed-cost
 * parse options of their own (main, cmd_collect_extra.c). */
typedef struct {
    const char *name;
    const char *about;    /* its line under "actions:" */
    const char *synopsis; /* after "pairsight collect NAME" */
    const char *const *examples;
    void (*options)(opts_t *o, cli_opt_t *t, size_t cap);
    int (*run)(opts_t *o);
    int (*main)(int argc, char **argv);
} action_t;

/* "8,16,32" or "4-52:4" or a mix: "2,4-16:4" (ps_collect_tpcs_parse). */
static int parse_tpcs(const char *s, int *out, int *n) { return ps_collect_tpcs_parse(s, out, MAX_TPCS, n) ? -1 : 0; }

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
    char *buf = strdup(s);
    int rc = buf ? parse_jobs_in(buf, o) : -1;
    free(buf);
    return rc;
}

/* The CLI_FN parsers of the table below: dest is the opts_t. */
static int fn_tpcs(const char *v, void *dest)
{
    opts_t *o = dest;
    return parse_tpcs(v, o->tpcs, &o->n_tpcs);
}

static int fn_hp(const char *v, void *dest)
{
    opts_t *o = dest;
    return parse_side(v, o->hp_model, sizeof o->hp_model, &o->plan.hp_batch);
}

static int fn_lp(const char *v, void *dest)
{
    opts_t *o = dest;
    return parse_side(v, o->lp_model, sizeof o->lp_model, &o->plan.lp_batch);
}

static int fn_seg_len(const char *v, void *dest)
{
    opts_t *o = dest;
    char buf[64];
    int lo = 0, hi = 0;
    snprintf(buf, sizeof buf, "%s", v);
    char *dash = strchr(buf, '-');
    if (dash)
        *dash = '\0';
    if (cli_parse_int(buf, 1, INT_MAX, &lo) || (dash ? cli_parse_int(dash + 1, 1, INT_MAX, &hi) : (hi = lo, 0)) ||
        hi < lo)
        return -1;
    o->plan.seg_min = lo;
    o->plan.seg_max = hi;
    return 0;
}

static int fn_shares(const char *v, void *dest)
{
    opts_t *o = dest;
    if (parse_tpcs(v, o->shares, &o->n_shares))
        return -1;
    for (int k = 0; k < o->n_shares; k++)
        if (o->shares[k] > 100)
            return -1;
    return 0;
}

static int fn_jobs(const char *v, void *dest) { return parse_jobs(v, dest); }

static int fn_shard(const char *v, void *dest)
{
    opts_t *o = dest;
    return ps_collect_shard_parse(v, &o->p.shard_index, &o->p.shard_count);
}

static int fn_devices(const char *v, void *dest)
{
    opts_t *o = dest;
    o->n_devices = 0;
    for (const char *q = v; *q;) {
        char *end;
        long d = strtol(q, &end, 10);
        if (end == q || d < 0 || d > 1024 || o->n_devices == MAX_DEVICES || (*end && (*end != ',' || !end[1])))
            return -1;
        for (int i = 0; i < o->n_devices; i++)
            if (o->devices[i] == d)
                return -1;
        o->devices[o->n_devices++] = (int)d;
        q = *end ? end + 1 : end;
    }
    return o->n_devices > 0 ? 0 : -1;
}

static const char *const examples[] = {
    "pairsight collect ops --model resnet50 --batch 8",
    "pairsight collect profile --backend fake --db out/fake.db --model resnet50 --tpcs 27,54 -q",
    "pairsight collect export --db out/fake.db --ops out/fake_ops.csv --coexec \"\"",
    "pairsight collect coexec --backend fake --db out/s0.db --shard 0/2 --hp resnet50:8 --lp bert-base:8 "
    "--experiments 10 --runs 3 -q",
    "pairsight collect coexec --backend fake --db out/s1.db --shard 1/2 --hp resnet50:8 --lp bert-base:8 "
    "--experiments 10 --runs 3 -q",
    "pairsight collect merge out/s0.db out/s1.db --db out/all.db",
    "pairsight collect coexec --backend fake --db out/dev.db --devices 0,1 --hp resnet50:8 --lp bert-base:8 "
    "--experiments 10 --runs 3 -q",
    NULL};

static const char *const notes = "Without a GPU (or in a build without CUDA) the device actions fail with a\n"
                                 "message; status, export and ops always work. scaling and colocate need the\n"
                                 "MPS daemon (nvidia-cuda-mps-control -d) with the cuda backend.\n"
                                 "The cuda backend is the module libpairsight_cuda.so, loaded only by the\n"
                                 "device actions: from $PAIRSIGHT_CUDA_MODULE if set, else beside this\n"
                                 "program, else from ../lib/pairsight/ beside it.\n";

static void defaults(opts_t *o)
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
    o->batch = 0; /* 8, or a registered list's own batch (use_oplists) */
    o->p = ps_collect_default_params();
    o->plan = ps_coexec_default_plan();
}

/* The option table of every action (its flags say which actions use them);
 * the number options are rows of the collect operation's table (OP: their
 * names, bounds, value names, defaults and help), in this table's order. */
static void table(opts_t *o, cli_opt_t *t, size_t cap)
{
    cli_opt_t all[] = {
        {"--db", CLI_STR, &o->db, "FILE", "campaign database"},
        {"--backend", CLI_STR, &o->p.backend, "NAME", "cuda or fake, a simulated GPU for tests"},
        cli_op_opt(OP, "device", &o->p.device),
        {"--model", CLI_STR, &o->model, "NAME",
         "resnet50, resnet101, mobilenetv2, bert-base, llama-3.2-1b, llama-3.2-3b (ops, profile, counters, "
         "scaling; required there)"},
        {"--batch", CLI_INT, &o->batch, "N", "batch size", .def = "8, or an --oplist model's own", .lo = 1,
         .hi = 1 << 20},
        {"--oplist", CLI_STR, &o->oplist, "NAME=FILE,...",
         "operator lists of your own models (python -m pairsight.capture), replayed under NAME by every action; "
         "--model defaults to the first",
         .def = "none"},
        cli_op_opt(OP, "seq_len", &o->p.seq_len),
        {"--tpcs", CLI_FN, o, "LIST", "TPC counts, e.g. 8,16,32 or 4-52:4", .def = "every count the GPU can partition",
         .parse = fn_tpcs, .accepts = "TPC counts like 8,16,32 or 4-52:4 (at most 512)"},
        cli_op_opt(OP, "warmup", &o->p.warmup),
        cli_op_opt(OP, "runs", &o->runs),
        {"--hp", CLI_FN, o, "MODEL:BATCH", "coexec: high-priority side (required there)", .parse = fn_hp,
         .accepts = "MODEL:BATCH, e.g. resnet50:8"},
        {"--lp", CLI_FN, o, "MODEL:BATCH", "coexec: low-priority side (required there)", .parse = fn_lp,
         .accepts = "MODEL:BATCH, e.g. bert-base:8"},
        cli_op_opt(OP, "experiments", &o->plan.experiments),
        {"--seg-len", CLI_FN, o, "A-B", "coexec: segment length in operators", .def = "1-16", .parse = fn_seg_len,
         .accepts = "A-B or A with 1 <= A <= B"},
        cli_op_opt(OP, "seed", &o->plan.seed),
        {"--ops", CLI_STR, &o->ops_path, "FILE", "export: ops.csv path, \"\" to skip", .flags = CLI_OUT},
        {"--coexec", CLI_STR, &o->coexec_path, "FILE", "export: coexec.csv path, \"\" to skip", .flags = CLI_OUT},
        {"--file", CLI_STR, &o->file, "FILE", "ops: an operator list to check instead of a model", .flags = CLI_IN},
        {"--ncu", CLI_STR, &o->ncu, "FILE",
         "counters: read them from this `ncu --csv --page raw` report (one launch per operator; no device needed)",
         .flags = CLI_IN},
        {"--shares", CLI_FN, o, "LIST", "scaling: MPS percentages", .def = "10-100:10", .parse = fn_shares,
         .accepts = "percentages like 10,50,100 or 10-100:10"},
        {"--jobs", CLI_FN, o, "LIST", "colocate: MODEL:BATCH@SHARE,... (required there)", .parse = fn_jobs,
         .accepts = "MODEL:BATCH@SHARE,... with shares in 1..100, at most 16 jobs"},
        cli_op_opt(OP, "seconds", &o->seconds),
        {"--scaling", CLI_STR, &o->scaling_path, "FILE", "scaling: output"},
        {"--workloads", CLI_STR, &o->workloads_path, "FILE", "scaling: output"},
        {"--colocations", CLI_STR, &o->colocations_path, "FILE", "colocate: output"},
        {"--id", CLI_STR, &o->id, "NAME", "colocate: co-location id", .def = "from the jobs"},
        cli_op_opt(OP, "clock_tol", &o->p.clock_tol_pct),
        {"--no-flush", CLI_FLAG, &o->no_flush, NULL,
         "do not flush the L2 before every timed run (standalone and co-execution alike)", .flags = CLI_NODEF},
        {"--shard", CLI_FN, o, "K/N",
         "profile, coexec: run only the K-th (0-based) of N disjoint parts of the plan (task i with i % N == K); "
         "counters: name the shard whose database --db is (its work is not split)",
         .def = "the whole plan", .parse = fn_shard, .accepts = "K/N with 0 <= K < N, e.g. 3/8"},
        {"--devices", CLI_FN, o, "LIST",
         "profile, coexec: one shard per CUDA device, run in parallel into --db.shardK-of-N, then merged into --db",
         .def = "--device only", .parse = fn_devices, .accepts = "distinct device ordinals like 0,1,2,3"},
        cli_op_opt(OP, "fake_delay_us", &o->p.fake_delay_us),
        cli_op_opt(OP, "fake_throttle", &o->p.fake_throttle),
        {"--fake-no-permission", CLI_FLAG, &o->p.fake_no_permission, NULL,
         "fake backend: counters fail as without profiling permission", .flags = CLI_NODEF},
        cli_op_opt(OP, "fake_grant", &o->p.fake_grant_sms),
        CLI_OPT_JSON(&o->json, "print the result as JSON on stdout (default: text)"),
        CLI_OPT_QUIET(&o->quiet),
        {NULL}};
    size_t n = sizeof all / sizeof all[0];
    memcpy(t, all, (n < cap ? n : cap) * sizeof *t);
}

static int act_info(opts_t *o) { return cli_collect_info(&o->p, o->model, o->batch, o->json); }

static int act_ops(opts_t *o) { return cli_collect_ops(o->file, o->model, o->batch, o->p.seq_len, o->json); }

static void model_text(const char *model, int batch, double w, double a, void *user)
{
    (void)user;
    printf("  device memory of %s at batch %d: %.1f MB of weights, %.1f MB of activations\n", model, batch, w * 1e-6,
           a * 1e-6);
}

static void model_json(const char *model, int batch, double w, double a, void *user)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", model);
    cJSON_AddNumberToObject(o, "batch", batch);
    cJSON_AddNumberToObject(o, "weight_bytes", w);
    cJSON_AddNumberToObject(o, "activation_bytes", a);
    cJSON_AddItemToArray(user, o);
}

static int print_status(ps_campaign_t *c, const opts_t *o)
{
    ps_campaign_status_t s;
    if (ps_campaign_status(c, &s) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    /* A shard's database plans only its tasks, and merged shards only
     * theirs: which shard it is, or which are missing, tells the rest. */
    char shard[64] = "";
    ps_collect_merge_stats_t ms;
    if (ps_campaign_meta_get(c, "shard", shard, sizeof shard) < 0)
        shard[0] = '\0';
    ps_campaign_shards_missing(c, &ms);
    if (shard[0])
        ms.n_missing = 0; /* a shard's own database: its line says so */
    if (o->json) {
        cJSON *j = cli_json_new("collect-status", 1);
        cJSON_AddStringToObject(j, "db", o->db);
        cJSON_AddStringToObject(j, "gpu", s.gpu);
        cJSON_AddNumberToObject(j, "seq_len", s.seq_len);
        cJSON_AddNumberToObject(j, "tasks", (double)s.tasks_total);
        cJSON_AddNumberToObject(j, "tasks_done", (double)s.tasks_done);
        cJSON_AddNumberToObject(j, "op_rows", (double)s.op_rows);
        cJSON_AddNumberToObject(j, "counter_rows", (double)s.counter_rows);
        cJSON_AddNumberToObject(j, "coexec_rows", (double)s.coexec_rows);
        cJSON_AddNumberToObject(j, "sm_clock_mhz", s.sm_clock_mhz);
        cJSON_AddNumberToObject(j, "clock_min_mhz", s.clock_min_mhz);
        cJSON_AddNumberToObject(j, "clock_max_mhz", s.clock_max_mhz);
        cJSON_AddNumberToObject(j, "clock_refused", (double)s.clock_refused);
        if (shard[0])
            cJSON_AddStringToObject(j, "shard", shard);
        else
            cJSON_AddNullToObject(j, "shard");
        cJSON_AddNumberToObject(j, "shards_missing", (double)ms.n_missing);
        cJSON *m = cJSON_AddArrayToObject(j, "models");
        if (ps_campaign_models(c, model_json, m) != 0) {
            cJSON_Delete(j);
            return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
        }
        cli_json_print(j, stdout);
    } else {
        printf("%s: gpu %s, %ld of %ld tasks done; %ld op rows, %ld counter rows, %ld coexec rows\n", o->db,
               s.gpu[0] ? s.gpu : "(none yet)", s.tasks_done, s.tasks_total, s.op_rows, s.counter_rows, s.coexec_rows);
        /* The details only for `collect status`: the other actions end with
         * the one line. */
        if (strcmp(o->action, "status") != 0)
            return CLI_OK;
        if (shard[0])
            printf("  shard %s of a campaign: only its tasks are planned here\n", shard);
        if (ms.n_missing)
            printf("  merged shards: %ld missing (%s)\n", ms.n_missing, ms.missing);
        if (!isnan(s.clock_min_mhz))
            printf("  SM clock: campaign %.0f MHz, runs %.0f-%.0f MHz, %ld runs refused for their clock\n",
                   s.sm_clock_mhz, s.clock_min_mhz, s.clock_max_mhz, s.clock_refused);
        if (ps_campaign_models(c, model_text, NULL) != 0)
            return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    }
    return CLI_OK;
}

/* A shard's outcome (PS_LOG_INFO: done, shown unless -q), a warning or a
 * failure. */
static void note(ps_log_level_t level, const char *msg, void *user)
{
    const opts_t *o = user;
    if (level >= PS_LOG_ERROR)
        cli_fail(CLI_BAD_INPUT, CMD, "%s", msg);
    else if (level == PS_LOG_WARN)
        fprintf(stderr, "pairsight: warning: %s\n", msg);
    else if (!o->quiet)
        fprintf(stderr, "pairsight: collect: %s\n", msg);
}

/* The library's job of the options: profile, counters or coexec on o->db,
 * or one shard per device of o->devices. */
static ps_collect_job_t job_of(opts_t *o)
{
    ps_collect_job_t j = ps_collect_default_job();
    j.action = o->action;
    j.db = o->db;
    j.model = o->model;
    j.batch = o->batch;
    j.tpcs = o->n_tpcs ? o->tpcs : NULL;
    j.n_tpcs = o->n_tpcs;
    j.ncu = o->ncu;
    j.plan = o->plan;
    j.plan.hp_model = o->hp_model;
    j.plan.lp_model = o->lp_model;
    j.params = o->p;
    j.devices = o->devices;
    j.n_devices = o->n_devices;
    j.progress = cli_progress_cb;
    j.progress_user = &o->quiet;
    j.note = note;
    j.note_user = o;
    j.shares = o->shares;
    j.n_shares = o->n_shares;
    j.jobs = o->jobs;
    j.n_jobs = o->n_jobs;
    j.seconds = o->seconds;
    j.scaling_path = o->scaling_path;
    j.workloads_path = o->workloads_path;
    j.colocations_path = o->colocations_path;
    j.id = o->id;
    return j;
}

/* scaling: --model alone at each --shares percentage (ps_collect_job_run),
 * a line per share measured. */
static int act_scaling(opts_t *o)
{
    if (!o->model)
        return cli_fail(CLI_USAGE, CMD, "scaling needs --model");
    ps_collect_job_t job = job_of(o);
    ps_collect_job_result_t *r = calloc(1, sizeof *r);
    if (!r)
        return cli_fail(CLI_BAD_INPUT, CMD, "out of memory");
    int rc = ps_collect_job_run(&job, r);
    cli_progress_end(o->quiet);
    for (int k = 0; k < r->n_rows && !o->json; k++)
        printf("%s %s %3d%% (the context got %d SMs) %.6g items/s\n", r->gpu, r->id, o->shares[k], r->exec_sms[k],
               r->tput[k]);
    if (rc == 0 && o->json) {
        cJSON *j = cli_json_new("collect-scaling", 1);
        cJSON_AddStringToObject(j, "gpu", r->gpu);
        cJSON_AddStringToObject(j, "workload", r->id);
        cJSON_AddNumberToObject(j, "shares", o->n_shares);
        cli_json_print(j, stdout);
    }
    free(r);
    return rc ? cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error()) : CLI_OK;
}

/* colocate: --jobs run together (ps_collect_job_run), a line per job. */
static int act_colocate(opts_t *o)
{
    char id[512];
    if (o->n_jobs < 1)
        return cli_fail(CLI_USAGE, CMD, "colocate needs --jobs MODEL:BATCH@SHARE,...");
    if (ps_collect_colocation_id(o->jobs, o->n_jobs, id, sizeof id) != 0)
        return cli_fail(CLI_USAGE, CMD,
                        "the colocation id of --jobs is longer than %zu "
                        "bytes; give a shorter one with --id",
                        sizeof id - 1);
    ps_collect_job_t job = job_of(o);
    ps_collect_job_result_t *r = calloc(1, sizeof *r);
    if (!r)
        return cli_fail(CLI_BAD_INPUT, CMD, "out of memory");
    int rc = ps_collect_job_run(&job, r);
    for (int k = 0; k < r->n_rows && !o->json; k++)
        printf("%s slot %d %s_batch%d-inf at %d%% (%d SMs): %.6g items/s\n", r->id, k + 1, o->jobs[k].model,
               o->jobs[k].batch, o->jobs[k].share_pct, r->exec_sms[k], r->tput[k]);
    if (rc == 0 && o->json) {
        cJSON *j = cli_json_new("collect-colocate", 1);
        cJSON_AddStringToObject(j, "colocation", r->id);
        cJSON_AddStringToObject(j, "gpu", r->gpu);
        cJSON *v = cJSON_AddArrayToObject(j, "tput");
        for (int k = 0; k < o->n_jobs; k++)
            cJSON_AddItemToArray(v, cJSON_CreateNumber(r->tput[k]));
        cli_json_print(j, stdout);
    }
    free(r);
    return rc ? cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error()) : CLI_OK;
}

/* The profile, counters, coexec, status and export actions on o->db (the
 * measuring ones by ps_collect_job_run), and the status line after them. */
static int run_campaign(opts_t *o)
{
    const char *act = o->action;
    int measure = strcmp(act, "status") != 0 && strcmp(act, "export") != 0;
    int device = measure && (strcmp(act, "counters") != 0 || !o->ncu);
    if ((strcmp(act, "profile") == 0 || strcmp(act, "counters") == 0) && !o->model)
        return cli_fail(CLI_USAGE, CMD, "%s needs --model", act);
    if (strcmp(act, "coexec") == 0 && (!o->hp_model[0] || !o->lp_model[0]))
        return cli_fail(CLI_USAGE, CMD, "coexec needs --hp MODEL:BATCH and --lp MODEL:BATCH");

    /* status and export read a campaign: a mistyped --db is not an empty one. */
    struct stat st;
    if (!device && stat(o->db, &st) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s: no such campaign database (%s)", o->db, strerror(errno));
    double t0 = ps_now();
    ps_collect_job_t job = job_of(o);
    int rc = measure ? ps_collect_job_run(&job, NULL) : 0;
    if (device)
        cli_progress_end(o->quiet);
    ps_campaign_t *c = NULL;
    if (rc == 0)
        rc = ps_campaign_open(o->db, NULL, &c);
    if (rc == 0 && strcmp(act, "export") == 0)
        rc = ps_campaign_export(c, o->ops_path[0] ? o->ops_path : NULL, o->coexec_path[0] ? o->coexec_path : NULL);
    if (rc) {
        cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
        ps_campaign_free(c);
        return CLI_BAD_INPUT;
    }
    if (!o->quiet && device)
        fprintf(stderr, "pairsight: collect: %s done in %.1f s\n", act, ps_now() - t0);
    if (!o->quiet && !device && o->ncu)
        fprintf(stderr, "pairsight: collect: counters of %s read from %s\n", o->model, o->ncu);
    rc = strcmp(act, "export") == 0 ? CLI_OK : print_status(c, o);
    if (strcmp(act, "export") == 0 && !o->quiet)
        fprintf(stderr, "pairsight: collect: wrote %s%s%s\n", o->ops_path,
                o->ops_path[0] && o->coexec_path[0] ? " and " : "", o->coexec_path);
    ps_campaign_free(c);
    return rc;
}

static int act_merge(opts_t *o)
{
    if (o->n_pos < 1)
        return cli_fail(CLI_USAGE, CMD, "merge needs the databases to merge: collect merge A.db B.db ... --db ALL.db");
    ps_collect_merge_stats_t st;
    if (ps_collect_merge(o->db, (const char *const *)o->pos, o->n_pos, &st) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    if (o->json) {
        cJSON *j = cli_json_new("collect-merge", 1);
        cJSON_AddStringToObject(j, "db", o->db);
        cJSON_AddNumberToObject(j, "sources", o->n_pos);
        cJSON_AddNumberToObject(j, "tasks_added", (double)st.tasks_added);
        cJSON_AddNumberToObject(j, "rows_added", (double)st.rows_added);
        cJSON_AddNumberToObject(j, "tasks", (double)st.tasks_total);
        cJSON_AddNumberToObject(j, "tasks_done", (double)st.tasks_done);
        cJSON_AddNumberToObject(j, "shards_missing", (double)st.n_missing);
        cJSON_AddNumberToObject(j, "tasks_short", (double)st.tasks_short);
        cli_json_print(j, stdout);
    } else if (!o->quiet)
        printf("%s: merged %d databases: %ld tasks and %ld rows added; %ld of %ld tasks done\n", o->db, o->n_pos,
               st.tasks_added, st.rows_added, st.tasks_done, st.tasks_total);
    /* The tasks of a shard not merged are not in the database at all, so
     * "all tasks done" alone would not tell that the campaign is partial. */
    if (st.tasks_short)
        fprintf(stderr,
                "pairsight: collect: warning: %ld task%s marked done in a source lack%s their rows (first %s): "
                "left not done in %s; run its collect command again to measure them\n",
                st.tasks_short, st.tasks_short > 1 ? "s" : "", st.tasks_short > 1 ? "" : "s", st.short_first, o->db);
    if (st.n_missing)
        fprintf(stderr, "pairsight: collect: warning: %s lacks %ld shard%s of the campaign (%s): merge %s too\n", o->db,
                st.n_missing, st.n_missing > 1 ? "s" : "", st.missing, st.n_missing > 1 ? "them" : "it");
    return CLI_OK;
}

/* --devices: ps_collect_job_run runs one child process per device (shard k
 * of N into its own database on that device) and, when all succeeded,
 * merges their databases into --db; the shards' outcomes come through note.
 * A failed or killed shard leaves its database to resume: the same command
 * again finishes it, and merging again adds only what is new. */
static int run_devices(opts_t *o)
{
    /* A --db that cannot be written is one message, not one per shard
     * telling to run the command again. */
    int ok = cli_check_out(CMD, o->db, NULL, 0);
    if (ok != CLI_OK)
        return ok;
    fflush(stdout);
    fflush(stderr);
    ps_collect_job_t job = job_of(o);
    ps_collect_job_result_t r;
    if (ps_collect_job_run(&job, &r) != 0)
        return r.shards_failed ? CLI_BAD_INPUT : cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    opts_t s = *o;
    s.action = "status";
    return run_campaign(&s);
}

/* --oplist: register the lists; --model defaults to the first, --batch to
 * the list's own. */
static int use_oplists(opts_t *o)
{
    if (o->oplist) {
        if (ps_oplist_register(o->oplist) != 0)
            return cli_fail(CLI_BAD_INPUT, CMD, "--oplist: %s", ps_last_error());
        static char first[32];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(o->oplist, "="), o->oplist);
        if (!o->model && strcmp(o->action, "coexec") != 0)
            o->model = first;
    }
    int own = 8;
    if (o->batch == 0)
        o->batch = ps_oplist_registered(o->model, &own) ? own : 8;
    return CLI_OK;
}

/* profile, counters, coexec, status and export: on o->db, or one shard per
 * device with --devices. */
static int act_campaign(opts_t *o)
{
    const char *act = o->action;
    if (o->n_devices) {
        if (strcmp(act, "profile") != 0 && strcmp(act, "coexec") != 0)
            return cli_fail(CLI_USAGE, CMD, "--devices goes with profile or coexec");
        if ((strcmp(act, "profile") == 0 && !o->model) ||
            (strcmp(act, "coexec") == 0 && (!o->hp_model[0] || !o->lp_model[0])))
            return run_campaign(o); /* its usage message */
        return run_devices(o);
    }
    return run_campaign(o);
}

/* The actions, in the order --help lists them. */
static const action_t actions[] = {
    {"info", "the GPU and the TPC counts its green contexts allow", "[options]", examples, table, act_info, NULL},
    {"ops", "print a model's operator list (or check one with --file)", "[options]", examples, table, act_ops, NULL},
    {"profile", "standalone profile of --model at every --tpcs count", "[options]", examples, table, act_campaign,
     NULL},
    {"counters",
     "hardware counters of --model's operators (CUPTI range profiler, or from an Nsight Compute CSV with --ncu)",
     "[options]", examples, table, act_campaign, NULL},
    {"coexec", "co-execution campaign of --hp beside --lp", "[options]", examples, table, act_campaign, NULL},
    {"status", "tasks and rows in the campaign database", "[options]", examples, table, act_campaign, NULL},
    {"export", "write ops.csv and coexec.csv from the campaign database", "[options]", examples, table, act_campaign,
     NULL},
    {"scaling",
     "--model's throughput alone at each MPS --shares percentage (adds to workload_scaling.csv and, at 100%, "
     "workloads.csv)",
     "[options]", examples, table, act_scaling, NULL},
    {"colocate", "--jobs run together under MPS, each at its share (adds one co-location to colocations.csv)",
     "[options]", examples, table, act_colocate, NULL},
    {"twin", "the twin's predictions for a coexec.csv's segment pairs (pairsight collect twin --help)", NULL, NULL,
     NULL, NULL, cmd_collect_twin},
    {"score", "measured against predicted slowdown: MAPE and correlation (pairsight collect score --help)", NULL, NULL,
     NULL, NULL, cmd_collect_score},
    {"fixed-cost", "the fixed cost of a co-execution, empty segments (pairsight collect fixed-cost --help)", NULL, NULL,
     NULL, NULL, cmd_collect_fixed_cost},
    {"merge",
     "merge the campaign databases given as arguments (shards) into --db (created if absent): each task once, "
     "a source of another GPU or plan refused with nothing written, a shard left out warned of",
     "A.db B.db ... --db ALL.db [options]", examples, table, act_merge, NULL},
};

/* The row of action name; NULL when there is none. */
static const action_t *find_action(const char *name)
{
    for (size_t i = 0; name && i < LEN(actions); i++)
        if (strcmp(name, actions[i].name) == 0)
            return &actions[i];
    return NULL;
}

/* The options of action a (NULL: `collect --help`, which lists them all). */
static int parse_args(int argc, char **argv, const action_t *a, opts_t *o, int *code)
{
    static cli_opt_t opts[48];
    defaults(o);
    (a ? a->options : table)(o, opts, 48);
    char about[2048];
    size_t len = (size_t)snprintf(about, sizeof about,
                                  "Measure on an NVIDIA GPU: standalone operator profiles at each TPC count\n"
                                  "(SMs split with CUDA green contexts) and co-executions of HP and LP segments.\n"
                                  "Results go to a SQLite campaign database one task at a time; run the same\n"
                                  "command again after a crash or kill and it resumes where it stopped.\n\n"
                                  "actions:\n");
    for (size_t i = 0; i < LEN(actions) && len < sizeof about; i++)
        if (!a || a == &actions[i])
            len += (size_t)snprintf(about + len, sizeof about - len, "  %-10s %s\n", actions[i].name, actions[i].about);
    cli_spec_t spec = {.cmd = CMD,
                       .sub = a ? a->name : NULL,
                       .synopsis = a ? a->synopsis : "ACTION [options]",
                       .about = about,
                       .opts = opts,
                       .examples = a ? a->examples : examples,
                       .notes = notes,
                       .max_pos = a && a->run == act_merge ? -1 : 0};
    if (argc < 2 || (!a && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))) {
        if (argc >= 2)
            cli_usage(&spec, stdout);
        *code = argc < 2 ? cli_fail(CLI_USAGE, CMD, "no action given (see pairsight collect --help)") : CLI_OK;
        return 1;
    }
    o->action = argv[1];
    if (!a) {
        const char *names[LEN(actions)];
        for (size_t i = 0; i < LEN(actions); i++)
            names[i] = actions[i].name;
        const char *near = ps_nearest(o->action, names, LEN(actions));
        *code = cli_fail(CLI_USAGE, CMD, "unknown action '%s'%s%s%s (see pairsight collect --help)", o->action,
                         near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
        return 1;
    }
    if (cli_parse(&spec, argc - 1, argv + 1, &o->n_pos, code))
        return 1;
    o->pos = argv + 2; /* cli_parse moved them to argv[1 + 1 ..] */
    /* Elsewhere they would be ignored: a merge or status is of one --db. */
    int plans = strcmp(o->action, "profile") == 0 || strcmp(o->action, "coexec") == 0;
    if (cli_given(&spec, "--shard") && !plans && strcmp(o->action, "counters") != 0) {
        *code = cli_fail(CLI_USAGE, CMD, "--shard goes with profile, coexec or counters, not %s", o->action);
        return 1;
    }
    if (cli_given(&spec, "--devices") && !plans) {
        *code = cli_fail(CLI_USAGE, CMD, "--devices goes with profile or coexec, not %s", o->action);
        return 1;
    }
    if (o->n_devices && cli_given(&spec, "--shard")) {
        *code = cli_fail(CLI_USAGE, CMD, "--devices and --shard: give one (--devices makes the shards)");
        return 1;
    }
    if (o->runs) {
        o->p.profile_runs = o->runs;
        o->plan.runs = o->runs;
    }
    o->p.flush_l2 = !o->no_flush;
    return 0;
}

int cmd_collect(int argc, char **argv)
{
    const action_t *a = find_action(argc >= 2 ? argv[1] : NULL);
    if (a && a->main)
        return a->main(argc, argv);
    opts_t o;
    int rc;
    if (parse_args(argc, argv, a, &o, &rc))
        return rc;
    if ((rc = use_oplists(&o)) != CLI_OK)
        return rc;
    return a->run(&o);
}
