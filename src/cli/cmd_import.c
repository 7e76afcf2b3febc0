/* pairsight import: Nsight Compute CSV or PyTorch trace to ops.csv. */
#include "cli/cli.h"
#include "common/common.h"
#include "profile/gpu.h"
#include "profile/tables.h"

#include <stdlib.h>
#include <string.h>

const char cmd_import_usage[] =
    "usage: pairsight import ncu REPORT.csv --gpu G --model M --tpcs N --out ops.csv [options]\n"
    "       pairsight import torch-trace TRACE.json --gpu G --model M --tpcs N --out ops.csv [options]\n"
    "\n"
    "Converts a profile of one model run alone into ops.csv, one operator per\n"
    "kernel launch in launch order, all measured at N TPCs.\n"
    "  ncu          an Nsight Compute export: ncu --csv --page raw --metrics\n"
    "               gpu__time_duration.sum[,dram__bytes.sum,lts__t_bytes.sum,...]\n"
    "               (with or without --print-units base)\n"
    "  torch-trace  a PyTorch profiler Chrome trace (prof.export_chrome_trace): the\n"
    "               \"kernel\" events of one CUDA stream, ordered by ts\n"
    "\n"
    "options:\n"
    "  --gpu G      : GPU name written to every row (required)\n"
    "  --model M    : model name (required)\n"
    "  --batch B    : batch size (default 1)\n"
    "  --tpcs N     : TPCs the profile ran on, e.g. all of the GPU (required)\n"
    "  --out FILE   : ops.csv to write, atomically (required)\n"
    "  --append     : add the rows to FILE when it exists (e.g. the same model at\n"
    "                 another TPC count) instead of replacing it (default off)\n"
    "  --stream S   : torch-trace only: the CUDA stream to take (default: the stream\n"
    "                 with the most kernel time)\n"
    "  --json       : print the summary as JSON (default off)\n"
    "  -q           : print nothing on success (default off)\n"
    "  -h, --help   : show this help\n"
    "\n"
    "Exit status: 0 written, 1 bad or empty input (nothing is written), 2 usage.\n";

/* A positive int option value, or -1. */
static int positive_int(const char *s)
{
    long v;
    return cli_parse_long(s, 1, 1 << 30, &v) == 0 ? (int)v : -1;
}

int cmd_import(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_import_usage, stdout);
        return CLI_OK;
    }
    ps_import_params_t p = {.batch = 1};
    const char *kind = NULL, *in = NULL, *outp = NULL;
    int json = 0, quiet = 0, append = 0;
    for (int i = 1; i < argc; i++) {
        static const char *const value_flags[] = {"--gpu", "--model", "--batch", "--tpcs", "--out", "--stream", NULL};
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 0;
        for (int k = 0; value_flags[k]; k++)
            takes |= strcmp(a, value_flags[k]) == 0;
        if (takes && !val)
            return cli_bad_option("import", a, value_flags);
        if (strcmp(a, "--gpu") == 0)
            p.gpu = val;
        else if (strcmp(a, "--model") == 0)
            p.model = val;
        else if (strcmp(a, "--stream") == 0)
            p.stream = val;
        else if (strcmp(a, "--out") == 0)
            outp = val;
        else if (strcmp(a, "--batch") == 0 && (p.batch = positive_int(val)) < 0)
            return cli_fail(CLI_USAGE, "import", "--batch: '%s' is not a positive integer", val);
        else if (strcmp(a, "--tpcs") == 0 && (p.tpcs = positive_int(val)) < 0)
            return cli_fail(CLI_USAGE, "import", "--tpcs: '%s' is not a positive integer", val);
        else if (strcmp(a, "--json") == 0)
            json = 1;
        else if (strcmp(a, "--append") == 0)
            append = 1;
        else if (strcmp(a, "-q") == 0)
            quiet = 1;
        else if (!takes && a[0] == '-' && a[1])
            return cli_bad_option("import", a, NULL);
        else if (!takes && !kind)
            kind = a;
        else if (!takes && !in)
            in = a;
        else if (!takes)
            return cli_fail(CLI_USAGE, "import", "unexpected argument '%s'", a);
        i += takes;
    }
    if (!kind || !in)
        return cli_fail(CLI_USAGE, "import", "give a format (ncu or torch-trace) and an input file");
    int is_ncu = strcmp(kind, "ncu") == 0;
    if (!is_ncu && strcmp(kind, "torch-trace") != 0)
        return cli_fail(CLI_USAGE, "import", "unknown format '%s' (ncu or torch-trace)", kind);
    if (!p.gpu || !p.model || !p.tpcs || !outp)
        return cli_fail(CLI_USAGE, "import", "--gpu, --model, --tpcs and --out are required");
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
        const char *keys[] = {"out", "gpu", "model"}, *vals[] = {outp, p.gpu, p.model};
        putchar('{');
        for (int k = 0; k < 3; k++) {
            printf("\"%s\": ", keys[k]);
            cli_put_json_string(vals[k]);
            fputs(", ", stdout);
        }
        printf("\"ops\": %zu, \"batch\": %d, \"tpcs\": %d}\n", n, p.batch, p.tpcs);
    } else if (!quiet)
        printf("%s: %zu operators of %s batch %d on %s at %d TPCs\n", outp, n, p.model, p.batch,
               p.gpu, p.tpcs);
    return CLI_OK;
}
