/* pairsight import: Nsight Compute CSV or PyTorch trace to ops.csv. */
#include "cli/cli.h"
#include "common/common.h"
#include "profile/gpu.h"
#include "profile/tables.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char *const examples[] = {
    "pairsight import ncu tests/data/ncu_raw.csv --gpu a100 --model resnet50 --tpcs 54 --out out/imported.csv", NULL};

/* What import was asked to do. */
typedef struct {
    ps_import_params_t p;
    const char *in, *outp;
    int is_ncu, json, quiet, append;
} import_args_t;

/* The usage errors the table cannot see: the format and the input, --stream,
 * and --tpcs against the GPU. */
static int check_import_args(import_args_t *a, const char *kind)
{
    if (!kind || !a->in)
        return cli_fail(CLI_USAGE, "import", "give a format (ncu or torch-trace) and an input file");
    a->is_ncu = strcmp(kind, "ncu") == 0;
    if (!a->is_ncu && strcmp(kind, "torch-trace") != 0)
        return cli_fail(CLI_USAGE, "import", "unknown format '%s' (ncu or torch-trace)", kind);
    if (a->is_ncu && a->p.stream)
        return cli_fail(CLI_USAGE, "import", "--stream applies to torch-trace only");
    if (!*a->p.gpu || !*a->p.model)
        return cli_fail(CLI_USAGE, "import", "--gpu and --model must not be empty");
    /* An alias (a100, v100) is written as the catalog's name, the one the
     * simulator and the collector write, so that the rows join theirs. */
    const ps_gpu_t *g = ps_gpu_find(a->p.gpu);
    if (g)
        a->p.gpu = g->name;
    if (g && a->p.tpcs > g->tpcs)
        return cli_fail(CLI_USAGE, "import", "--tpcs: %d exceeds the %d TPCs of %s", a->p.tpcs, g->tpcs, g->name);
    return cli_check_out("import", a->outp, &a->in, 1);
}

static int parse_import_args(int argc, char **argv, import_args_t *a, int *code)
{
    memset(a, 0, sizeof *a);
    a->p.batch = 1;
    int npos = 0;
    cli_opt_t opts[] = {
        {"--gpu", CLI_STR, &a->p.gpu, "G", "GPU name written to every row; an alias (a100) becomes the catalog's name",
         .flags = CLI_REQ},
        {"--model", CLI_STR, &a->p.model, "M", "model name", .flags = CLI_REQ},
        {"--batch", CLI_INT, &a->p.batch, "B", "batch size", .lo = 1, .hi = 1 << 30},
        {"--tpcs", CLI_INT, &a->p.tpcs, "N", "TPCs the profile ran on, e.g. all of the GPU", .lo = 1, .hi = 1 << 30,
         .flags = CLI_REQ},
        {"--out", CLI_STR, &a->outp, "FILE", "ops.csv to write, atomically", .flags = CLI_REQ | CLI_OUT},
        {"--append", CLI_FLAG, &a->append, NULL,
         "add the rows to FILE when it exists (e.g. the same model at another TPC count) instead of replacing it"},
        {"--stream", CLI_STR, &a->p.stream, "S", "torch-trace only: the CUDA stream to take",
         .def = "the stream with the most kernel time"},
        CLI_OPT_JSON(&a->json, "print the summary as JSON on stdout (default: text on stderr)"),
        CLI_OPT_QUIET(&a->quiet),
        {NULL}};
    cli_spec_t spec = {.cmd = "import",
                       .synopsis = "ncu REPORT.csv --gpu G --model M --tpcs N --out ops.csv [options]\n"
                                   "torch-trace TRACE.json --gpu G --model M --tpcs N --out ops.csv [options]",
                       .about = "Converts a profile of one model run alone into ops.csv, one operator per\n"
                                "kernel launch in launch order, all measured at N TPCs (REPORT.csv or\n"
                                "TRACE.json may be - for standard input).\n"
                                "  ncu          an Nsight Compute export: ncu --csv --page raw --metrics\n"
                                "               gpu__time_duration.sum[,dram__bytes.sum,lts__t_bytes.sum,...]\n"
                                "               (with or without --print-units base)\n"
                                "  torch-trace  a PyTorch profiler Chrome trace (prof.export_chrome_trace): the\n"
                                "               \"kernel\" events of one CUDA stream, ordered by ts\n",
                       .opts = opts,
                       .examples = examples,
                       .exit_status = "0 written, 1 bad or empty input (nothing is written), 2 usage error.",
                       .max_pos = 2};
    if (cli_parse(&spec, argc, argv, &npos, code))
        return 1;
    const char *kind = npos > 0 ? argv[1] : NULL;
    a->in = npos > 1 ? argv[2] : NULL;
    if (a->in && strcmp(a->in, "-") == 0 && !(a->in = cli_stdin_path())) {
        *code = cli_fail(CLI_BAD_INPUT, "import", "%s", ps_last_error());
        return 1;
    }
    *code = check_import_args(a, kind);
    return *code != CLI_OK;
}

/* Imports the profile and writes it, added to the rows of --out with
 * --append (both must still form a valid table, or nothing is written).
 * *n receives the operators imported. */
static int import_and_write(const import_args_t *a, size_t *n)
{
    ps_ops_t *ops = NULL, *all = NULL;
    int rc = a->is_ncu ? ps_import_ncu(a->in, &a->p, &ops) : ps_import_torch_trace(a->in, &a->p, &ops);
    *n = ps_ops_rows(ops);
    FILE *exists = a->append && rc == 0 ? fopen(a->outp, "r") : NULL;
    if (exists) {
        fclose(exists);
        rc = ps_ops_load(a->outp, &all);
        for (size_t i = 0; rc == 0 && i < *n; i++)
            rc = ps_ops_append(all, &ops->rows[i]);
        if (rc == 0 && (rc = ps_ops_index(all)) != 0)
            ps_error_prefix(rc, a->outp);
    }
    if (rc == 0)
        rc = ps_ops_save(all ? all : ops, a->outp);
    ps_ops_free(ops);
    ps_ops_free(all);
    return rc;
}

int cmd_import(int argc, char **argv)
{
    import_args_t a;
    int code;
    if (parse_import_args(argc, argv, &a, &code))
        return code;
    size_t n = 0;
    int rc = import_and_write(&a, &n);
    if (rc != 0)
        return cli_fail(rc == PS_E_ARG ? CLI_USAGE : CLI_BAD_INPUT, "import", "%s", ps_last_error());
    if (a.json) {
        cJSON *o = cli_json_new("import", 1);
        cJSON_AddStringToObject(o, "out", cli_user_path(a.outp));
        cJSON_AddStringToObject(o, "gpu", a.p.gpu);
        cJSON_AddStringToObject(o, "model", a.p.model);
        cJSON_AddNumberToObject(o, "ops", (double)n);
        cJSON_AddNumberToObject(o, "batch", a.p.batch);
        cJSON_AddNumberToObject(o, "tpcs", a.p.tpcs);
        cli_json_print(o, stdout);
    } else if (!a.quiet)
        fprintf(stderr, "%s: %zu operators of %s batch %d on %s at %d TPCs\n", cli_user_path(a.outp), n, a.p.model,
                a.p.batch, a.p.gpu, a.p.tpcs);
    return CLI_OK;
}
