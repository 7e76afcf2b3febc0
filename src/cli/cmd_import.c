/* pairsight import: Nsight Compute CSV or PyTorch trace to ops.csv. */
#include "cli/cli.h"
#include "common/common.h"
#include "profile/profile_internal.h"

#include <stdlib.h>
#include <string.h>

const char cmd_import_usage[] =
    "usage: pairsight import ncu REPORT.csv --model M --tpcs N --out ops.csv [options]\n"
    "       pairsight import torch-trace TRACE.json[.gz] --model M --tpcs N --out ops.csv [options]\n"
    "\n"
    "Converts a profile of one model run alone into ops.csv, one operator per\n"
    "kernel launch in launch order, all measured at N TPCs. One summary line on\n"
    "stderr says what was read, written, taken and skipped.\n"
    "\n"
    "ncu: an Nsight Compute CSV export of either page:\n"
    "  details (the default page; one row per metric, pivoted by launch ID):\n"
    "      ncu --csv --section SpeedOfLight ./app > report.csv\n"
    "      ncu -i report.ncu-rep --csv > report.csv\n"
    "  raw (one row per launch):\n"
    "      ncu --csv --page raw --metrics gpu__time_duration.sum,dram__bytes.sum ./app > report.csv\n"
    "  with or without --print-units base. Display names (Duration, Compute (SM)\n"
    "  Throughput, Memory Throughput) and raw metric names are mapped as in\n"
    "  docs/profile.md; the program's output and ==PROF== lines are skipped; a\n"
    "  file with only ncu's messages is reported with what ncu said.\n"
    "torch-trace: a PyTorch profiler Chrome trace (export_chrome_trace, or\n"
    "  tensorboard_trace_handler); gzip is read transparently:\n"
    "      pairsight import torch-trace rank0.pt.trace.json.gz --model bert --tpcs 54 --out ops.csv\n"
    "  Streams: the default is the stream with the most compute-kernel time\n"
    "  (NCCL/RCCL kernels never decide it); --stream all merges every compute\n"
    "  stream in time order (cuDNN's helper streams), e.g.\n"
    "      pairsight import torch-trace alexnet.json --stream all --model alexnet --tpcs 40 --out ops.csv\n"
    "  Zero durations: PyTorch 1.8/1.9 write integer microseconds, so short\n"
    "  kernels have dur 0; each is kept as half the resolution (0.5 us) and\n"
    "  counted in a warning, or dropped with --drop-zero, e.g.\n"
    "      pairsight import torch-trace pt18.json --drop-zero --gpu v100 --model resnet50 --tpcs 40 --out ops.csv\n"
    "\n"
    "options:\n"
    "  --gpu G      : GPU name written to every row (default: the GPU the file\n"
    "                 names: ncu's device__attribute_display_name, the trace's\n"
    "                 deviceProperties; required when it names none)\n"
    "  --model M    : model name (required)\n"
    "  --batch B    : batch size (default 1)\n"
    "  --tpcs N     : TPCs the profile ran on, at most the GPU's (required)\n"
    "  --out FILE   : ops.csv to write, atomically (required)\n"
    "  --append     : merge into FILE when it exists (default off): another TPC\n"
    "                 count of the same model adds rows; the same count fills the\n"
    "                 empty counters of its rows (a trace, then an ncu report);\n"
    "                 the kernel sequences must match, or nothing is written\n"
    "  --stream S   : torch-trace: the CUDA stream to take, or all (default: the\n"
    "                 busiest stream of compute kernels)\n"
    "  --device N   : the device to take (default: the one with the most kernel time)\n"
    "  --process P  : ncu: the process ID to take (default: the one with the most\n"
    "                 kernel time)\n"
    "  --drop-zero  : torch-trace: drop kernels with dur 0 (default: keep them)\n"
    "  --json       : print the result as JSON on stdout (default off)\n"
    "  -q           : print nothing on success but warnings (default off)\n"
    "  -h, --help   : show this help\n"
    "\n"
    "Exit status: 0 written, 1 bad or empty input (nothing is written), 2 usage.\n";

/* The one summary line on stderr. */
static void print_summary(const char *in, const ps_import_info_t *info, const char *merge)
{
    char t[32];
    fprintf(stderr, "pairsight: import: %s: %s; %zu operators, %s; GPU %s", in, info->format,
            info->ops, import_fmt_ns(info->total_ns, t, sizeof t), info->gpu);
    if (*info->gpu_in_file && strcmp(info->gpu_in_file, info->gpu) != 0)
        fprintf(stderr, " (the file says %s)", info->gpu_in_file);
    if (*info->taken)
        fprintf(stderr, "; took %s", info->taken);
    if (info->zero_dur)
        fprintf(stderr, "; %zu kernels with dur 0 %s", info->zero_dur,
                info->zero_dur_ns > 0 ? "kept" : "dropped");
    if (info->text_lines)
        fprintf(stderr, "; %zu lines of other text ignored", info->text_lines);
    fprintf(stderr, "; skipped: %s", *info->skipped ? info->skipped : "nothing");
    if (merge && *merge)
        fprintf(stderr, "; %s", merge);
    fputc('\n', stderr);
}

/* A positive int option value, or -1. */
static int positive_int(const char *s)
{
    long v;
    return cli_parse_long(s, 1, 1 << 30, &v) == 0 ? (int)v : -1;
}

/* Merge the import into the existing out file (--append); the merged table
 * replaces *ops. Nothing is written on a mismatch. */
static int append_to(const char *outp, ps_ops_t **ops, char *note, size_t n)
{
    FILE *exists = fopen(outp, "r");
    if (!exists)
        return PS_OK;
    fclose(exists);
    ps_ops_t *base = NULL, *all = NULL;
    size_t added = 0, filled = 0;
    int rc = ps_ops_load(outp, &base);
    if (rc == PS_OK && (rc = ps_ops_merge(base, *ops, &all, &added, &filled)) != PS_OK)
        ps_error_prefix(rc, outp);
    if (rc == PS_OK) {
        snprintf(note, n, "merged into %s: %zu rows added, %zu rows' empty counters filled, %zu "
                 "rows in all", outp, added, filled, all->n);
        ps_ops_free(*ops);
        *ops = all;
    }
    ps_ops_free(base);
    return rc;
}

static void print_json(const char *outp, const ps_import_params_t *p, const ps_import_info_t *info,
                       size_t rows)
{
    const char *keys[] = {"out", "gpu", "model", "format", "taken", "skipped"};
    const char *vals[] = {outp, info->gpu, p->model, info->format, info->taken, info->skipped};
    putchar('{');
    for (int k = 0; k < 6; k++) {
        printf("\"%s\": ", keys[k]);
        cli_put_json_string(vals[k]);
        fputs(", ", stdout);
    }
    printf("\"ops\": %zu, \"batch\": %d, \"tpcs\": %d, \"rows\": %zu, \"total_ns\": %.17g, "
           "\"zero_dur\": %zu}\n", info->ops, p->batch, p->tpcs, rows, info->total_ns,
           info->zero_dur);
}

int cmd_import(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_import_usage, stdout);
        return CLI_OK;
    }
    static const char *const value_flags[] = {"--gpu", "--model", "--batch", "--tpcs", "--out",
                                              "--stream", "--device", "--process", NULL};
    ps_import_params_t p = ps_import_default_params();
    const char *kind = NULL, *in = NULL, *outp = NULL;
    int json = 0, quiet = 0, append = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (strcmp(a, "--append") == 0) {
            append = 1;
            continue;
        }
        if (strcmp(a, "--drop-zero") == 0) {
            p.drop_zero = 1;
            continue;
        }
        if (a[0] != '-' || !a[1]) {
            if (!kind)
                kind = a;
            else if (!in)
                in = a;
            else
                return cli_fail(CLI_USAGE, "import", "unexpected argument '%s'", a);
            continue;
        }
        if (cli_next_option("import", argc, argv, &i, value_flags, &json, &quiet, &val) != CLI_OK)
            return CLI_USAGE;
        if (!val)
            continue;
        if (strcmp(a, "--gpu") == 0)
            p.gpu = val;
        else if (strcmp(a, "--model") == 0)
            p.model = val;
        else if (strcmp(a, "--stream") == 0)
            p.stream = val;
        else if (strcmp(a, "--device") == 0)
            p.device = val;
        else if (strcmp(a, "--process") == 0)
            p.process = val;
        else if (strcmp(a, "--out") == 0)
            outp = val;
        else if (strcmp(a, "--batch") == 0 && (p.batch = positive_int(val)) < 0)
            return cli_fail(CLI_USAGE, "import", "--batch: '%s' is not a positive integer", val);
        else if (strcmp(a, "--tpcs") == 0 && (p.tpcs = positive_int(val)) < 0)
            return cli_fail(CLI_USAGE, "import", "--tpcs: '%s' is not a positive integer", val);
    }
    if (!kind || !in)
        return cli_fail(CLI_USAGE, "import", "give a format (ncu or torch-trace) and an input file");
    int is_ncu = strcmp(kind, "ncu") == 0;
    if (!is_ncu && strcmp(kind, "torch-trace") != 0)
        return cli_fail(CLI_USAGE, "import", "unknown format '%s' (ncu or torch-trace)", kind);
    if (!p.model || !p.tpcs || !outp)
        return cli_fail(CLI_USAGE, "import", "--model, --tpcs and --out are required");
    if (is_ncu && (p.stream || p.drop_zero))
        return cli_fail(CLI_USAGE, "import", "%s applies to torch-trace only",
                        p.stream ? "--stream" : "--drop-zero");
    if (!is_ncu && p.process)
        return cli_fail(CLI_USAGE, "import", "--process applies to ncu only");
    if ((p.gpu && !*p.gpu) || !*p.model)
        return cli_fail(CLI_USAGE, "import", "--gpu and --model must not be empty");
    int out_rc = cli_check_out("import", outp, &in, 1);
    if (out_rc != CLI_OK)
        return out_rc;

    ps_ops_t *ops = NULL;
    ps_import_info_t info;
    char merge[256] = "";
    int rc = ps_import_run(kind, in, &p, &ops, &info);
    if (rc == PS_OK && append)
        rc = append_to(outp, &ops, merge, sizeof merge);
    if (rc == PS_OK)
        rc = ps_ops_save(ops, outp);
    size_t rows = ps_ops_rows(ops);
    ps_ops_free(ops);
    if (rc != PS_OK)
        return cli_fail(rc == PS_E_ARG ? CLI_USAGE : CLI_BAD_INPUT, "import", "%s", ps_last_error());
    if (!quiet)
        print_summary(in, &info, merge);
    if (json)
        print_json(outp, &p, &info, rows);
    else if (!quiet)
        printf("%s: %zu operators of %s batch %d on %s at %d TPCs\n", outp, info.ops, p.model,
               p.batch, info.gpu, p.tpcs);
    return CLI_OK;
}
