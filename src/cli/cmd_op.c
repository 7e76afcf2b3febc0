/* A command that runs one of the library's operations (a row of main.c's
 * table that names it): its options are the operation's inputs (--model
 * FILE, --ops FILE, ... as ps_op_needs lists them), its parameters and
 * members (ps_op_params: slo_factor is --slo-factor, with its bounds, help
 * and default) and --out; the result is ps_op_run's JSON. Nothing here
 * names an operation or one of its parameters. */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPTS 40

/* The inputs an operation may need: name, what its file is, its loader. */
typedef struct {
    const char *name, *help;
    int (*load)(const char *path, void **out);
    void (*free)(void *p);
} input_t;

static int load_model(const char *p, void **o) { return ps_model_load(p, (ps_model_t **)o); }
static int load_ops(const char *p, void **o) { return ps_ops_load(p, (ps_ops_t **)o); }
static int load_coloc(const char *p, void **o) { return ps_coloc_model_load(p, (ps_coloc_model_t **)o); }
static int load_workloads(const char *p, void **o) { return ps_workloads_load(p, (ps_workloads_t **)o); }
static int load_scaling(const char *p, void **o) { return ps_scaling_load(p, (ps_scaling_t **)o); }
static int load_coexec(const char *p, void **o) { return ps_coexec_load(p, (ps_coexec_t **)o); }
static void free_model(void *p) { ps_model_free(p); }
static void free_ops(void *p) { ps_ops_free(p); }
static void free_coloc(void *p) { ps_coloc_model_free(p); }
static void free_workloads(void *p) { ps_workloads_free(p); }
static void free_scaling(void *p) { ps_scaling_free(p); }
static void free_coexec(void *p) { ps_coexec_free(p); }

/* In ps_op_inputs_names' order. */
static const input_t inputs[] = {
    {"model", "trained, calibrated segment model (.psm)", load_model, free_model},
    {"ops", "standalone operator profile (ops.csv)", load_ops, free_ops},
    {"coloc", "co-location model (.psc)", load_coloc, free_coloc},
    {"workloads", "workloads.csv", load_workloads, free_workloads},
    {"scaling", "workload_scaling.csv", load_scaling, free_scaling},
    {"coexec", "co-executions (coexec.csv)", load_coexec, free_coexec},
};
#define N_INPUTS (int)(sizeof inputs / sizeof inputs[0])

typedef struct {
    const char *op, *cmd;
    const char *files[N_INPUTS]; /* given input files */
    void *loaded[N_INPUTS];
    const char *strs[MAX_OPTS]; /* the string members given, by row */
    unsigned char *params;      /* the parameter struct, holding the defaults (ps_op_defaults) */
    const char *out;
    int quiet;
    cli_opt_t opts[MAX_OPTS + 2 * N_INPUTS];
} op_args_t;

/* Whether the comma-separated list has name: 1 required, 2 optional
 * ("name?"), 0 not listed. */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ','))
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == 0 || p[n] == '?'))
            return p[n] == '?' ? 2 : 1;
    return 0;
}

/* The option table: inputs, number parameters, string members, --out, -q. */
static int build_opts(op_args_t *a, const ps_param_t *rows, int n)
{
    int k = 0;
    static char names[N_INPUTS + MAX_OPTS][48];
    const char *needs = ps_op_needs(a->op);
    for (int i = 0; i < N_INPUTS; i++)
        if (listed(needs, inputs[i].name)) {
            int required = listed(needs, inputs[i].name) == 1;
            cli_param_flag(inputs[i].name, names[i], sizeof names[i]);
            a->opts[k++] = (cli_opt_t){names[i],
                                       CLI_STR,
                                       &a->files[i],
                                       "FILE",
                                       inputs[i].help,
                                       .flags = CLI_IN | (required ? CLI_REQ : 0u),
                                       .def = required ? NULL : "none"};
        }
    k += cli_op_opts(a->op, a->params, a->opts + k, MAX_OPTS);
    for (int i = 0; i < n && i < MAX_OPTS; i++)
        if (rows[i].type == PS_PARAM_STR) {
            char *name = names[N_INPUTS + i];
            cli_param_flag(rows[i].name, name, sizeof names[0]);
            a->opts[k++] = (cli_opt_t){name, CLI_STR, &a->strs[i], rows[i].arg, rows[i].help, .flags = CLI_NODEF};
        }
    a->opts[k++] =
        (cli_opt_t){"--out", CLI_STR, &a->out, "FILE", "the result (JSON)", .def = "standard output", .flags = CLI_OUT};
    a->opts[k++] = (cli_opt_t)CLI_OPT_QUIET(&a->quiet);
    a->opts[k] = (cli_opt_t){.name = NULL};
    return k;
}

/* The request: every option of the table that was given, as a member. */
static char *request_json(op_args_t *a, cli_spec_t *spec, const ps_param_t *rows, int n)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < n; i++) {
        char flag[48];
        cli_param_flag(rows[i].name, flag, sizeof flag);
        const unsigned char *at = a->params + rows[i].offset;
        if (rows[i].type == PS_PARAM_STR && a->strs[i])
            cJSON_AddStringToObject(o, rows[i].name, a->strs[i]);
        else if (rows[i].type == PS_PARAM_INT && cli_given(spec, flag))
            cJSON_AddNumberToObject(o, rows[i].name, *(const int *)(const void *)at);
        else if (rows[i].type == PS_PARAM_U64 && cli_given(spec, flag))
            cJSON_AddNumberToObject(o, rows[i].name, (double)*(const uint64_t *)(const void *)at);
        else if (rows[i].type == PS_PARAM_DBL && cli_given(spec, flag))
            cJSON_AddNumberToObject(o, rows[i].name, *(const double *)(const void *)at);
    }
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return text;
}

int cli_write_json(const char *cmd, const char *out, const char *json)
{
    ps_outfile_t *at = NULL;
    if (out && ps_outfile_open(out, &at) != 0)
        return cli_fail(CLI_BAD_INPUT, cmd, "%s", ps_last_error());
    FILE *f = at ? ps_outfile_stream(at) : stdout;
    int bad = fprintf(f, "%s\n", json) < 0;
    if (at ? ps_outfile_commit(at) != 0 || bad : bad || fflush(stdout) != 0)
        return cli_fail(CLI_BAD_INPUT, cmd, "%s", at ? ps_last_error() : "writing standard output failed");
    return CLI_OK;
}

/* The inputs loaded and the operation run; the exit code. */
static int run(op_args_t *a, const char *request)
{
    const void *in[N_INPUTS] = {NULL};
    for (int i = 0; i < N_INPUTS; i++) {
        if (a->files[i] && inputs[i].load(a->files[i], &a->loaded[i]) != PS_OK)
            return cli_fail(CLI_BAD_INPUT, a->cmd, "%s", ps_last_error());
        in[i] = a->loaded[i];
    }
    char *result = NULL;
    /* ps_op_inputs_t is its named pointers in ps_op_inputs_names' order, as inputs[] */
    ps_op_inputs_t pi = {in[0], in[1], in[2], in[3], in[4], in[5]};
    int rc = ps_op_run(a->op, &pi, request, &result);
    if (rc != PS_OK)
        return cli_fail(rc == PS_E_ARG ? CLI_USAGE : CLI_BAD_INPUT, a->cmd, "%s", ps_last_error());
    rc = cli_write_json(a->cmd, a->out, result);
    ps_free(result);
    return rc;
}

int cli_op_command(const char *op, int argc, char **argv)
{
    op_args_t a = {.op = op, .cmd = argv[0]};
    char *request = NULL;
    int n = 0, code = CLI_BAD_INPUT;
    const ps_param_t *rows = ps_op_params(op, &n);
    if (!rows && ps_op_needs(op) == NULL)
        return cli_fail(CLI_BAD_INPUT, a.cmd, "the library has no operation '%s'", op);
    if (n > MAX_OPTS) /* the option table's room: inputs, rows, --out, -q */
        return cli_fail(CLI_BAD_INPUT, a.cmd, "operation '%s' has %d parameters, more than %d", op, n, MAX_OPTS);
    size_t size = ps_op_defaults(op, NULL, 0);
    if (!(a.params = calloc(1, size > 8 ? size : 8))) {
        code = cli_fail(CLI_BAD_INPUT, a.cmd, "out of memory");
        goto done;
    }
    ps_op_defaults(op, a.params, size);
    build_opts(&a, rows, n);
    char synopsis[256];
    snprintf(synopsis, sizeof synopsis, "[options] (the operation %s of the library; docs/ARCHITECTURE.md)", op);
    cli_spec_t spec = {.cmd = a.cmd, .synopsis = synopsis, .about = ps_op_help(op), .opts = a.opts, .max_pos = 0};
    if (cli_parse(&spec, argc, argv, NULL, &code))
        goto done;
    if (a.out) {
        const char *ins[N_INPUTS];
        int k = 0;
        for (int i = 0; i < N_INPUTS; i++)
            if (a.files[i])
                ins[k++] = a.files[i];
        if ((code = cli_check_out(a.cmd, a.out, ins, k)) != CLI_OK)
            goto done;
    }
    code = (request = request_json(&a, &spec, rows, n)) ? run(&a, request)
                                                        : cli_fail(CLI_BAD_INPUT, a.cmd, "out of memory");
done:
    for (int i = 0; i < N_INPUTS; i++)
        if (a.loaded[i])
            inputs[i].free(a.loaded[i]);
    free(request);
    free(a.params);
    return code;
}
