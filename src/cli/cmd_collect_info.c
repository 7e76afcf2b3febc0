/* pairsight collect info and ops: the device a backend opens and the
 * operator lists the collector replays (actions of cmd_collect.c). */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define CMD "collect"
#define MAX_TPCS 512

/* What the driver grants each green context asked for (granted_sms; none
 * where the backend did not probe): every probed count in JSON, as
 * {"tpcs", "asked_sms", "granted_sms"} (0 granted: refused). */
static void json_grants(cJSON *j, const ps_collect_device_t *d)
{
    cJSON *a = cJSON_AddArrayToObject(j, "green_contexts");
    for (int t = 1; t < (int)(sizeof d->granted_sms / sizeof d->granted_sms[0]); t++) {
        if (!d->granted_sms[t])
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "tpcs", t);
        cJSON_AddNumberToObject(o, "asked_sms", 2 * t);
        cJSON_AddNumberToObject(o, "granted_sms", d->granted_sms[t]);
        cJSON_AddItemToArray(a, o);
    }
}

/* The same as text: the counts granted as another, as "asked->granted". */
static void print_grants(const ps_collect_device_t *d)
{
    int n = 0;
    for (int t = 1; t < (int)(sizeof d->granted_sms / sizeof d->granted_sms[0]); t++) {
        int g = d->granted_sms[t];
        if (g > 0 && g != 2 * t && 2 * t <= d->sm_count)
            printf("%s %d->%d", n++ ? "," : "granted SMs        other than asked (asked->granted):", 2 * t, g);
    }
    if (n)
        printf("\n                   (a campaign asked for those measures on the granted SMs)\n");
}

int cli_collect_info(const ps_collect_params_t *p, const char *model, int batch, int json)
{
    ps_campaign_t *c = NULL;
    ps_collect_device_t d;
    /* An in-memory database: info touches no file. */
    if (ps_campaign_open(":memory:", p, &c) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    ps_campaign_device(c, &d);
    int valid[MAX_TPCS];
    int n = ps_collect_valid_tpcs(&d, valid, MAX_TPCS);
    double wb = 0, ab = 0;
    if (model && ps_campaign_model_memory(c, model, batch, &wb, &ab) != 0) {
        ps_campaign_free(c);
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    }
    if (json) {
        cJSON *j = cli_json_new("collect-info", 1);
        char cc[32];
        snprintf(cc, sizeof cc, "%d.%d", d.cc_major, d.cc_minor);
        cJSON_AddStringToObject(j, "gpu", d.gpu);
        cJSON_AddNumberToObject(j, "sm_count", d.sm_count);
        cJSON_AddNumberToObject(j, "tpc_count", d.tpc_count);
        cJSON_AddNumberToObject(j, "min_partition_sms", d.min_partition_sms);
        cJSON_AddNumberToObject(j, "sm_alignment", d.sm_alignment);
        cJSON_AddStringToObject(j, "compute_capability", cc);
        cJSON *v = cJSON_AddArrayToObject(j, "valid_tpcs");
        for (int i = 0; i < n && i < MAX_TPCS; i++)
            cJSON_AddItemToArray(v, cJSON_CreateNumber(valid[i]));
        cJSON_AddStringToObject(j, "mechanism", d.mechanism ? d.mechanism : "");
        cJSON_AddNumberToObject(j, "sm_clock_mhz", d.sm_clock_mhz);
        cJSON_AddNumberToObject(j, "sm_clock_max_mhz", d.sm_clock_max_mhz);
        cJSON_AddNumberToObject(j, "exec_sms", d.exec_sms);
        json_grants(j, &d);
        if (model) {
            cJSON_AddNumberToObject(j, "weight_bytes", wb);
            cJSON_AddNumberToObject(j, "activation_bytes", ab);
        }
        cli_json_print(j, stdout);
    } else {
        printf("gpu                %s (compute capability %d.%d)\n", d.gpu, d.cc_major, d.cc_minor);
        printf("SMs                %d (%d TPCs)\n", d.sm_count, d.tpc_count);
        printf("green contexts     at least %d SMs, in multiples of %d\n", d.min_partition_sms, d.sm_alignment);
        printf("valid TPC counts  ");
        for (int i = 0; i < n && i < MAX_TPCS; i++)
            printf(" %d", valid[i]);
        printf("\n");
        print_grants(&d);
        printf("SM split by        %s\n", d.mechanism ? d.mechanism : "?");
        if (isnan(d.sm_clock_mhz))
            printf("SM clock           unknown (no NVML)\n");
        else
            printf("SM clock           %.0f MHz now, %.0f MHz at most\n", d.sm_clock_mhz, d.sm_clock_max_mhz);
        if (d.exec_sms != d.sm_count)
            printf("this process       may use %d of the %d SMs (MPS active thread percentage)\n", d.exec_sms,
                   d.sm_count);
        if (model)
            printf("device memory      %s at batch %d: %.1f MB of weights, %.1f MB of activations (every\n"
                   "                   operator its own weights and output)\n",
                   model, batch, wb * 1e-6, ab * 1e-6);
    }
    ps_campaign_free(c);
    return CLI_OK;
}

/* The kernels the simulator numbers for a built-in model (simulate's
 * ops.csv, op 0..N-1), from a one-experiment campaign at split 1/1 (rows at
 * 1 TPC and the whole GPU: two per kernel); 0 when it cannot tell. */
static int twin_kernels(const char *model, int batch, int seq_len)
{
    char pairs[160];
    snprintf(pairs, sizeof pairs, "%s:%d/%s:%d", model, batch, model, batch);
    ps_sim_params_t p = ps_sim_default_params();
    p.pairs = pairs;
    p.splits = "1/1";
    p.experiments = 1;
    p.runs = 1;
    p.threads = 1;
    if (seq_len > 0)
        p.bert_seq = p.llama_prompt = seq_len;
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    if (ps_sim_run(&p, &ops, &cx) != 0)
        return 0;
    int n = (int)(ps_ops_rows(ops) / 2);
    ps_ops_free(ops);
    ps_coexec_free(cx);
    return n;
}

/* A built-in model's list counts the operators the collector launches; the
 * twin replays the kernels of a measured trace, which need not be one to one
 * with them (resnet50's trace has an elementwise kernel of 16 blocks moving
 * 33 kB, the 8 x 1,000 fp32 fc bias copied into the output before the GEMM
 * as PyTorch's addmm does: 175 against 174; docs/collector.md, "Operators
 * and kernels"; bert-base's trace fuses: 149 against 200). Say so where the
 * counts differ (issue 42). */
static void note_twin_count(const char *model, int batch, int seq_len, int n_ops)
{
    int own = 0;
    if (ps_oplist_registered(model, &own) == 1)
        return; /* a user's list: the twin replays it as it is */
    int tw = twin_kernels(model, batch, seq_len);
    if (tw > 0 && tw != n_ops)
        fprintf(stderr,
                "pairsight: collect ops: note: %s is %d operators as the collector launches them; simulate's "
                "ops.csv numbers %d kernels (op 0..%d), those of the measured trace the twin replays, which need "
                "not be one to one with them (a kernel there can fuse several of these, or run one as two)\n",
                model, n_ops, tw, tw - 1);
}

int cli_collect_ops(const char *file, const char *model, int batch, int seq_len, int json)
{
    ps_oplist_t *l = NULL;
    int rc;
    if (file)
        rc = ps_oplist_read(file, &l);
    else if (!model)
        return cli_fail(CLI_USAGE, CMD, "ops needs --model or --file");
    else
        rc = ps_oplist_build(model, batch, seq_len, &l);
    if (rc)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    ps_oplist_info_t info;
    ps_oplist_info(l, &info);
    double flops = 0, bytes = 0;
    for (int i = 0; i < info.n_ops; i++) {
        double f = 0, b = 0;
        ps_oplist_op_cost(l, i, &f, &b);
        flops += f;
        bytes += b;
    }
    if (json) {
        cJSON *j = cli_json_new("collect-ops", 1);
        cJSON_AddStringToObject(j, "model", info.model);
        cJSON_AddNumberToObject(j, "batch", info.batch);
        cJSON_AddNumberToObject(j, "seq_len", info.seq_len);
        cJSON_AddNumberToObject(j, "ops", info.n_ops);
        cJSON_AddNumberToObject(j, "gflops", flops * 1e-9);
        cJSON_AddNumberToObject(j, "gbytes", bytes * 1e-9);
        cli_json_print(j, stdout);
    } else if (file)
        printf("%s: %d operators, %.4g GFLOP, %.4g GB at fp16\n", file, info.n_ops, flops * 1e-9, bytes * 1e-9);
    else
        ps_oplist_write(l, stdout);
    if (!file)
        note_twin_count(model, batch, seq_len, info.n_ops);
    ps_oplist_free(l);
    return CLI_OK;
}
