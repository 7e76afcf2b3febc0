/* pairsight import: Nsight Compute CSV or PyTorch trace to ops.csv. */
#include "cli/cli.h"
#include "common/common.h"
#include "profile/gpu.h"
#include "profile/tables.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char *const examples[] = {
    "pairsight import ncu tests/data/ncu_raw.csv --gpu a100 --model resnet50 --tpcs 54 --out out/imported.csv",
    NULL};

int cmd_import(int argc, char **argv)
{
    ps_import_params_t p = {.batch = 1};
    const char *kind = NULL, *in = NULL, *outp = NULL;
    int json = 0, quiet = 0, append = 0, npos = 0;
    cli_opt_t opts[] = {
        {"--gpu", CLI_STR, &p.gpu, "G", "GPU name written to every row; an alias (a100) becomes the catalog's name",
         .flags = CLI_REQ},
        {"--model", CLI_STR, &p.model, "M", "model name", .flags = CLI_REQ},
        {"--batch", CLI_INT, &p.batch, "B", "batch size", .lo = 1, .hi = 1 << 30},
        {"--tpcs", CLI_INT, &p.tpcs, "N", "TPCs the profile ran on, e.g. all of the GPU", .lo = 1, .hi = 1 << 30,
         .flags = CLI_REQ},
        {"--out", CLI_STR, &outp, "FILE", "ops.csv to write, atomically", .flags = CLI_REQ | CLI_OUT},
        {"--append", CLI_FLAG, &append, NULL,
         "add the rows to FILE when it exists (e.g. the same model at another TPC count) instead of replacing it"},
        {"--stream", CLI_STR, &p.stream, "S", "torch-trace only: the CUDA stream to take",
         .def = "the stream with the most kernel time"},
        CLI_OPT_JSON(&json, "print the summary as JSON on stdout (default: text on stderr)"),
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    cli_spec_t spec = {
        .cmd = "import",
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
    int code;
    if (cli_parse(&spec, argc, argv, &npos, &code))
        return code;
    kind = npos > 0 ? argv[1] : NULL;
    in = npos > 1 ? argv[2] : NULL;
    if (in && strcmp(in, "-") == 0 && !(in = cli_stdin_path()))
        return cli_fail(CLI_BAD_INPUT, "import", "%s", ps_last_error());
    if (!kind || !in)
        return cli_fail(CLI_USAGE, "import", "give a format (ncu or torch-trace) and an input file");
    int is_ncu = strcmp(kind, "ncu") == 0;
    if (!is_ncu && strcmp(kind, "torch-trace") != 0)
        return cli_fail(CLI_USAGE, "import", "unknown format '%s' (ncu or torch-trace)", kind);
    if (is_ncu && p.stream)
        return cli_fail(CLI_USAGE, "import", "--stream applies to torch-trace only");
    if (!*p.gpu || !*p.model)
        return cli_fail(CLI_USAGE, "import", "--gpu and --model must not be empty");
    /* An alias (a100, v100) is written as the catalog's name, the one the
     * simulator and the collector write, so that the rows join theirs. */
    const ps_gpu_t *g = ps_gpu_find(p.gpu);
    if (g)
        p.gpu = g->name;
    if (g && p.tpcs > g->tpcs)
        return cli_fail(CLI_USAGE, "import", "--tpcs: %d exceeds the %d TPCs of %s", p.tpcs, g->tpcs, g->name);
    int out_rc = cli_check_out("import", outp, &in, 1);
    if (out_rc != CLI_OK)
        return out_rc;

    ps_ops_t *ops = NULL, *all = NULL;
    int rc = is_ncu ? ps_import_ncu(in, &p, &ops) : ps_import_torch_trace(in, &p, &ops);
    size_t n = ps_ops_rows(ops);
    FILE *exists = append && rc == 0 ? fopen(outp, "r") : NULL;
    if (exists) {
        /* The rows of both must still form a valid table (no key twice, no
         * gap), or nothing is written. */
        fclose(exists);
        rc = ps_ops_load(outp, &all);
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = ps_ops_append(all, &ops->rows[i]);
        if (rc == 0 && (rc = ps_ops_index(all)) != 0)
            ps_error_prefix(rc, outp);
    }
    if (rc == 0)
        rc = ps_ops_save(all ? all : ops, outp);
    ps_ops_free(ops);
    ps_ops_free(all);
    if (rc != 0)
        return cli_fail(rc == PS_E_ARG ? CLI_USAGE : CLI_BAD_INPUT, "import", "%s", ps_last_error());
    if (json) {
        cJSON *o = cli_json_new("import", 1);
        cJSON_AddStringToObject(o, "out", cli_user_path(outp));
        cJSON_AddStringToObject(o, "gpu", p.gpu);
        cJSON_AddStringToObject(o, "model", p.model);
        cJSON_AddNumberToObject(o, "ops", (double)n);
        cJSON_AddNumberToObject(o, "batch", p.batch);
        cJSON_AddNumberToObject(o, "tpcs", p.tpcs);
        cli_json_print(o, stdout);
    } else if (!quiet)
        fprintf(stderr, "%s: %zu operators of %s batch %d on %s at %d TPCs\n", cli_user_path(outp), n, p.model, p.batch,
                p.gpu, p.tpcs);
    return CLI_OK;
}
