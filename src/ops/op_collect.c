/*
 * The collect operation (a row of op.c's table): collect's workflow,
 * ps_collect_job_run, with its numbers read through one parameter table and
 * its paths, backend and models as string members; the result is the
 * campaign database's state afterwards and what was exported. Python
 * reaches it with pairsight.run("collect", ...). The service has no route
 * for it on purpose: a campaign holds its GPU for minutes to hours, which
 * is no work for a request handler (docs/serve.md).
 */
#include "pairsight.h"

#include "common/common.h"
#include "ops/ops.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 512 /* TPC counts, as pairsight collect --tpcs */

typedef psi_op_collect_t collect_op_t;

#define J(f) offsetof(collect_op_t, job.f)
/* A member of the request that the run reads itself (a string). */
#define MEMBER(name, arg, help)                                                                                        \
    {                                                                                                                  \
        name, PS_PARAM_STR, 0, 0, 0, arg, NULL, help, 0                                                                \
    }
#define JP(f) offsetof(collect_op_t, job.params.f)
const ps_param_t psi_op_collect_params[] = {
    {"batch", PS_PARAM_INT, J(batch), 1, 1 << 20, "N", NULL, "profile, counters: batch size", 0},
    {"seq_len", PS_PARAM_INT, JP(seq_len), 1, 1 << 20, "N", NULL, "tokens per sequence of transformer models", 0},
    {"device", PS_PARAM_INT, JP(device), 0, 1024, "N", NULL, "CUDA device ordinal", 0},
    {"warmup", PS_PARAM_INT, JP(warmup), 0, 1000000, "N", NULL, "untimed launches before timing", 0},
    {"runs", PS_PARAM_INT, offsetof(collect_op_t, runs), 1, 1000000, "N", "10 for profile, 30 for coexec",
     "profile: timed runs, median kept; coexec: rows per experiment", 0},
    {"experiments", PS_PARAM_INT, J(plan.experiments), 1, 100000000, "N", NULL, "coexec: number of experiments", 0},
    {"seg_min", PS_PARAM_INT, J(plan.seg_min), 1, 1000000, "N", NULL, "coexec: shortest segment in operators", 0},
    {"seg_max", PS_PARAM_INT, J(plan.seg_max), 1, 1000000, "N", NULL, "coexec: longest segment in operators", 0},
    {"seed", PS_PARAM_U64, J(plan.seed), 0, 2147483647.0, "N", NULL, "coexec: experiment seed, part of their names", 0},
    {"clock_tol", PS_PARAM_DBL, JP(clock_tol_pct), 0, 100, "PCT", NULL,
     "profile, coexec: refuse a run whose SM clock is more than PCT% off the campaign's and measure its task again "
     "(twice at most; 0: no check)",
     PS_PARAM_HI_OPEN},
    {"flush_l2", PS_PARAM_INT, offsetof(collect_op_t, flush_l2), 0, 1, "0|1", NULL,
     "flush the L2 before every timed run (1), standalone and co-execution alike", 0},
    {"fake_delay_us", PS_PARAM_INT, JP(fake_delay_us), 0, 1e9, "N", NULL, "fake backend: sleep per measurement", 0},
    {"fake_throttle", PS_PARAM_INT, JP(fake_throttle), -1e9, 1e9, "N", NULL,
     "fake backend: report an SM clock 20% low from timed run N on (N < 0: on run -N only)", 0},
    {"fake_no_permission", PS_PARAM_INT, JP(fake_no_permission), 0, 1, "0|1", NULL,
     "fake backend: counters fail as without profiling permission", 0},
    {"fake_grant", PS_PARAM_INT, JP(fake_grant_sms), 0, 64, "SMS", NULL,
     "fake backend: grant a green context the SMs asked for rounded down to a multiple of SMS, as a driver that "
     "grants fewer than asked (`collect info` lists the grants)",
     0},
    {"seconds", PS_PARAM_DBL, J(seconds), 0, 1e6, "S", NULL, "scaling, colocate: timed seconds per run",
     PS_PARAM_LO_OPEN | PS_PARAM_HI_OPEN},
    MEMBER("action", "NAME", "profile, counters, coexec, scaling or colocate (required)"),
    MEMBER("db", "FILE", "profile, counters, coexec: the campaign database, created if absent (required there)"),
    MEMBER("backend", "NAME", "cuda (default) or fake, a simulated GPU for tests"),
    MEMBER(
        "model_name", "NAME",
        "profile, counters: the model, e.g. resnet50 (required there; not `model`, which names a loaded model input)"),
    MEMBER("hp", "MODEL:BATCH", "coexec: the high-priority side (required there)"),
    MEMBER("lp", "MODEL:BATCH", "coexec: the low-priority side (required there)"),
    MEMBER("tpcs", "LIST", "TPC counts, e.g. \"8,16,32\" or \"4-52:4\" (default: every count the GPU can partition)"),
    MEMBER(
        "devices", "LIST",
        "profile, coexec: one shard per CUDA device, e.g. \"0,1\", each in a process of its own into DB.shardK-of-N, "
        "then merged into db"),
    MEMBER("shard", "K/N", "run only the K-th (0-based) of N disjoint parts of the plan"),
    MEMBER("ncu", "FILE", "counters: read them from this `ncu --csv --page raw` report (no device needed)"),
    MEMBER("export_ops", "FILE", "afterwards, write the database's ops.csv here"),
    MEMBER("export_coexec", "FILE", "afterwards, write the database's coexec.csv here"),
    MEMBER("shares", "LIST", "scaling: MPS percentages, e.g. \"10,50,100\" (10-100:10)"),
    MEMBER("jobs", "LIST", "colocate: the jobs run together, \"MODEL:BATCH@SHARE,...\" (required there)"),
    MEMBER("scaling_path", "FILE", "scaling: the table its rows go to (workload_scaling.csv)"),
    MEMBER("workloads_path", "FILE", "scaling: the table its 100% row goes to (workloads.csv)"),
    MEMBER("colocations_path", "FILE", "colocate: the table its rows go to (colocations.csv)"),
    MEMBER("id", "NAME", "colocate: the co-location's id (default: from the jobs)"),
};
_Static_assert(sizeof psi_op_collect_params / sizeof psi_op_collect_params[0] == PSI_OP_COLLECT_N,
               "PSI_OP_COLLECT_N counts the rows");

void psi_op_collect_init(void *p)
{
    collect_op_t *o = p;
    o->job = ps_collect_default_job();
    o->runs = 0;
    o->flush_l2 = o->job.params.flush_l2;
}

/* String member key of req into *out (NULL when absent; "" is absent). */
static int member(const cJSON *req, const char *key, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, key);
    *out = cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
    return !v || *out ? PS_OK : psi_error(PS_E_ARG, "collect: %s: expected a non-empty string", key);
}

/* The job's string members, each into its place (the lists into l). */
#define MAX_JOBS 64

typedef struct {
    char hp[64], lp[64];
    int tpcs[MAX_LIST], devices[MAX_LIST], shares[MAX_LIST];
    ps_mps_job_t jobs[MAX_JOBS];
    char names[MAX_JOBS][64];
} lists_t;

/* "MODEL:BATCH@SHARE,..." into l->jobs[0..*n). */
static int read_jobs(const char *s, lists_t *l, int *n)
{
    *n = 0;
    for (const char *q = s; *q; q += *q == ',') {
        char one[128], *at;
        size_t len = strcspn(q, ",");
        long share = -1;
        snprintf(one, sizeof one, "%.*s", (int)len, q);
        q += len;
        if ((at = strrchr(one, '@')) != NULL) {
            *at = '\0';
            share = at[1] >= '0' && at[1] <= '9' ? strtol(at + 1, &at, 10) : -1;
        }
        if (*n == MAX_JOBS || len >= sizeof one || share < 1 || share > 100 || (at && *at) ||
            ps_model_batch_parse(one, l->names[*n], &l->jobs[*n].batch) != PS_OK)
            return psi_error(PS_E_ARG,
                             "collect: jobs: bad value '%s': expected MODEL:BATCH@SHARE,... with shares in "
                             "1..100, at most %d jobs",
                             s, MAX_JOBS);
        l->jobs[*n].model = l->names[*n];
        l->jobs[*n].share_pct = (int)share;
        (*n)++;
    }
    return *n ? PS_OK : psi_error(PS_E_ARG, "collect: jobs: no job given");
}

/* The members of scaling and colocate: their lists, tables and id. */
static int read_mps(const cJSON *req, ps_collect_job_t *j, lists_t *l)
{
    const char *shares = NULL, *jobs = NULL, *path[3] = {NULL, NULL, NULL};
    int rc = member(req, "shares", &shares);
    if (rc == PS_OK)
        rc = member(req, "jobs", &jobs);
    if (rc == PS_OK)
        rc = member(req, "id", &j->id);
    const char *const keys[] = {"scaling_path", "workloads_path", "colocations_path"};
    for (int i = 0; rc == PS_OK && i < 3; i++)
        rc = member(req, keys[i], &path[i]);
    j->scaling_path = path[0] ? path[0] : j->scaling_path;
    j->workloads_path = path[1] ? path[1] : j->workloads_path;
    j->colocations_path = path[2] ? path[2] : j->colocations_path;
    if (rc == PS_OK && shares && ps_collect_tpcs_parse(shares, l->shares, MAX_LIST, &j->n_shares) != PS_OK)
        rc = psi_error(PS_E_ARG, "collect: shares: bad value '%s': expected percentages like 10,50,100 or 10-100:10",
                       shares);
    if (shares)
        j->shares = l->shares;
    if (rc == PS_OK && jobs)
        rc = read_jobs(jobs, l, &j->n_jobs);
    j->jobs = j->n_jobs ? l->jobs : NULL;
    return rc;
}

/* "0,1,2": device ordinals in 0..1024 into out[0..*n), at most MAX_LIST
 * (a device twice is the job's to refuse). */
static int read_devices(const char *s, int *out, int *n)
{
    *n = 0;
    for (const char *q = s;;) {
        char *end;
        long d = q[0] >= '0' && q[0] <= '9' ? strtol(q, &end, 10) : -1;
        if (d < 0 || d > 1024 || *n == MAX_LIST || (*end && (*end != ',' || !end[1])))
            return PS_E_ARG;
        out[(*n)++] = (int)d;
        if (!*end)
            return PS_OK;
        q = end + 1;
    }
}

static int read_strings(const cJSON *req, ps_collect_job_t *j, lists_t *l, const char **export)
{
    const char *hp = NULL, *lp = NULL, *tpcs = NULL, *devices = NULL, *shard = NULL;
    int rc = member(req, "action", &j->action);
    if (rc == PS_OK && !j->action)
        rc = psi_error(PS_E_ARG, "collect: missing action: profile, counters, coexec, scaling or colocate");
    int mps = rc == PS_OK && (strcmp(j->action, "scaling") == 0 || strcmp(j->action, "colocate") == 0);
    if (rc == PS_OK && (rc = member(req, "db", &j->db)) == PS_OK && !j->db && !mps)
        rc = psi_error(PS_E_ARG, "collect: missing db: the campaign database");
    if (rc == PS_OK)
        rc = read_mps(req, j, l);
    const char *const keys[] = {"backend", "model_name", "ncu",  "export_ops", "export_coexec",
                                "hp",      "lp",         "tpcs", "devices",    "shard"};
    const char **dest[] = {&j->params.backend, &j->model, &j->ncu, &export[0], &export[1], &hp, &lp, &tpcs,
                           &devices,           &shard};
    for (size_t i = 0; rc == PS_OK && i < sizeof keys / sizeof keys[0]; i++)
        rc = member(req, keys[i], dest[i]);
    if (rc == PS_OK && hp && ps_model_batch_parse(hp, l->hp, &j->plan.hp_batch) != PS_OK)
        rc = psi_error(PS_E_ARG, "collect: hp: bad value '%s': expected MODEL:BATCH, e.g. resnet50:8", hp);
    if (rc == PS_OK && lp && ps_model_batch_parse(lp, l->lp, &j->plan.lp_batch) != PS_OK)
        rc = psi_error(PS_E_ARG, "collect: lp: bad value '%s': expected MODEL:BATCH, e.g. bert-base:8", lp);
    j->plan.hp_model = rc == PS_OK && hp ? l->hp : NULL;
    j->plan.lp_model = rc == PS_OK && lp ? l->lp : NULL;
    if (rc == PS_OK && tpcs && ps_collect_tpcs_parse(tpcs, l->tpcs, MAX_LIST, &j->n_tpcs) != PS_OK)
        rc = psi_error_prefix(PS_E_ARG, "collect: tpcs");
    j->tpcs = j->n_tpcs ? l->tpcs : NULL;
    if (rc == PS_OK && devices && read_devices(devices, l->devices, &j->n_devices) != PS_OK)
        rc = psi_error(PS_E_ARG, "collect: devices: bad value '%s': expected distinct device ordinals like 0,1,2,3",
                       devices);
    j->devices = j->n_devices ? l->devices : NULL;
    if (rc == PS_OK && shard && ps_collect_shard_parse(shard, &j->params.shard_index, &j->params.shard_count))
        rc = psi_error_prefix(PS_E_ARG, "collect");
    return rc;
}

/* The note callback: each line into the JSON array user. */
static void note_json(ps_log_level_t level, const char *msg, void *user)
{
    (void)level;
    cJSON_AddItemToArray(user, cJSON_CreateString(msg));
}

/* The database's state after the job and what was exported, into o. */
static int campaign_json(const ps_collect_job_t *j, const char *const *export, cJSON *o)
{
    ps_campaign_t *c = NULL;
    ps_campaign_status_t s;
    char shard[64] = "";
    int rc = ps_campaign_open(j->db, NULL, &c);
    if (rc == PS_OK && (export[0] || export[1]))
        rc = ps_campaign_export(c, export[0], export[1]);
    if (rc == PS_OK)
        rc = ps_campaign_status(c, &s);
    if (rc == PS_OK && ps_campaign_meta_get(c, "shard", shard, sizeof shard) < 0)
        shard[0] = '\0';
    ps_campaign_free(c);
    if (rc != PS_OK)
        return rc;
    cJSON_AddStringToObject(o, "db", j->db);
    cJSON_AddStringToObject(o, "gpu", s.gpu);
    const char *name[] = {"seq_len",     "tasks",        "tasks_done",    "op_rows", "counter_rows",
                          "coexec_rows", "sm_clock_mhz", "clock_refused", "shards"};
    const double v[] = {s.seq_len,         (double)s.tasks_total,   (double)s.tasks_done,
                        (double)s.op_rows, (double)s.counter_rows,  (double)s.coexec_rows,
                        s.sm_clock_mhz,    (double)s.clock_refused, j->n_devices};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        cJSON_AddNumberToObject(o, name[i], v[i]);
    cJSON_AddItemToObject(o, "shard", shard[0] ? cJSON_CreateString(shard) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "export_ops", export[0] ? cJSON_CreateString(export[0]) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "export_coexec", export[1] ? cJSON_CreateString(export[1]) : cJSON_CreateNull());
    return PS_OK;
}

/* What scaling or colocate measured, into o: the GPU, the workload or
 * co-location, a row per share or job, the tables written. */
static void mps_json(const ps_collect_job_t *j, const ps_collect_job_result_t *r, cJSON *o)
{
    int scaling = strcmp(j->action, "scaling") == 0;
    cJSON_AddStringToObject(o, "gpu", r->gpu);
    cJSON_AddStringToObject(o, scaling ? "workload" : "colocation", r->id);
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    for (int k = 0; rows && k < r->n_rows; k++) {
        cJSON *e = cJSON_CreateObject();
        if (!scaling)
            cJSON_AddStringToObject(e, "model", j->jobs[k].model);
        cJSON_AddNumberToObject(e, "share_pct", scaling ? j->shares[k] : j->jobs[k].share_pct);
        cJSON_AddNumberToObject(e, "tput", r->tput[k]);
        cJSON_AddNumberToObject(e, "exec_sms", r->exec_sms[k]);
        cJSON_AddItemToArray(rows, e);
    }
    cJSON *t = cJSON_AddArrayToObject(o, "tables");
    const char *tables[] = {scaling ? j->scaling_path : j->colocations_path, scaling ? j->workloads_path : NULL};
    for (int i = 0; t && i < 2 && tables[i]; i++)
        cJSON_AddItemToArray(t, cJSON_CreateString(tables[i]));
}

int psi_op_collect_run(const ps_op_inputs_t *in, const char *text, const cJSON *req, void *params, char **out)
{
    (void)in;
    (void)text;
    collect_op_t *p = params;
    ps_collect_job_t *j = &p->job;
    lists_t *l = psi_calloc(1, sizeof *l);
    ps_collect_job_result_t *r = psi_calloc(1, sizeof *r);
    cJSON *o = cJSON_CreateObject(), *notes = cJSON_CreateArray();
    const char *export[2] = {NULL, NULL};
    int rc = l && r && o && notes ? read_strings(req, j, l, export) : psi_error(PS_E_NOMEM, "out of memory");
    if (p->runs) {
        j->params.profile_runs = p->runs;
        j->plan.runs = p->runs;
    }
    j->params.flush_l2 = p->flush_l2;
    if (rc == PS_OK && j->plan.seg_min > j->plan.seg_max)
        rc = psi_error(PS_E_ARG, "collect: seg_min %d is above seg_max %d", j->plan.seg_min, j->plan.seg_max);
    j->note = note_json;
    j->note_user = notes;
    if (rc == PS_OK)
        rc = ps_collect_job_run(j, r);
    if (rc == PS_OK) {
        cJSON_AddStringToObject(o, "schema", "pairsight.collect.v1");
        cJSON_AddStringToObject(o, "action", j->action);
        cJSON_AddItemToObject(o, "notes", notes);
        notes = NULL;
        if (strcmp(j->action, "scaling") == 0 || strcmp(j->action, "colocate") == 0)
            mps_json(j, r, o);
        else
            rc = campaign_json(j, export, o);
    }
    if (rc == PS_OK && !(*out = psi_json_print(o, 0)))
        rc = psi_error(PS_E_NOMEM, "out of memory writing JSON");
    cJSON_Delete(o);
    cJSON_Delete(notes);
    free(l);
    free(r);
    return rc;
}
