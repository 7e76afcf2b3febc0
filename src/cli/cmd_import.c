/* pairsight import: Nsight Compute CSV, PyTorch trace or Nsight Systems SQLite export to ops.csv. */
#include "cli/cli.h"
#include "cli/cmd_import_twin.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* Each runs from a clone, on the fixtures of tests/data. */
static const char *const examples[] = {
    "pairsight import ncu tests/data/ncu_details.csv --model resnet50 --tpcs 54 --out out/imported.csv",
    "pairsight import ncu tests/data/ncu_raw.csv --gpu v100 --model bert --batch 8 --tpcs 40 --out out/bert.csv",
    "pairsight import ncu tests/data/ncu_raw_20tpcs.csv --gpu v100 --model bert --batch 8 --tpcs 20 --out out/bert.csv "
    "--append",
    "pairsight import ncu tests/data/ncu_multi_process.csv --process 4243 --model m --tpcs 66 --out out/p4243.csv",
    "pairsight import torch-trace tests/data/torch_ddp.json.gz --model bert --tpcs 66 --out out/trace.csv",
    "pairsight import torch-trace tests/data/torch_ddp.json --stream all --model bert --tpcs 66 --out out/trace.csv",
    "pairsight import torch-trace tests/data/torch_pt18.json --drop-zero --gpu v100 --model resnet50 --tpcs 40 --out "
    "out/pt18.csv",
    "pairsight import nsys tests/data/nsys_tiny.sqlite --model tiny --batch 8 --tpcs 54 --out out/nsys.csv",
    "pairsight import nsys tests/data/nsys_tiny.sqlite --model tiny --batch 8 --tpcs 54 --oplist "
    "tests/data/nsys_tiny.oplist --out out/nsys_ops.csv",
    NULL};

static const char notes[] =
    "Pages (ncu): the details page (ncu's default: one row per metric, pivoted\n"
    "  here by launch ID; Duration, Compute (SM) Throughput and Memory Throughput\n"
    "  by display name, units as printed) and the raw page (--page raw: one row\n"
    "  per launch, raw metric names), with or without --print-units base:\n"
    "      ncu --csv --section SpeedOfLight ./app > report.csv\n"
    "      ncu -i report.ncu-rep --csv > report.csv\n"
    "      ncu --csv --page raw --metrics gpu__time_duration.sum,dram__bytes.sum ./app > raw.csv\n"
    "  The program's output and ncu's ==PROF== lines around the table are skipped; a\n"
    "  file of ncu's messages only is refused with what ncu said. Mapping table:\n"
    "  docs/profile.md.\n"
    "Streams (torch-trace): by default the stream with the most compute-kernel\n"
    "  time (NCCL/RCCL kernels never decide it); --stream all merges every stream\n"
    "  with compute kernels in time order (cuDNN's helper streams); --stream S\n"
    "  takes one. The summary line names the streams taken and, per stream left,\n"
    "  its kernels and time.\n"
    "gzip (torch-trace): TRACE.json.gz (tensorboard_trace_handler(use_gzip=True))\n"
    "  is read transparently, whatever the file is called.\n"
    "Zero durations (torch-trace): PyTorch 1.8/1.9 traces write integer\n"
    "  microseconds, so kernels shorter than 1 us have dur 0. Each is kept as half\n"
    "  the trace's resolution (0.5 us there) and counted in a warning, or dropped\n"
    "  with --drop-zero.\n"
    "Passes (nsys): nsys profile --trace=cuda,nvtx python infer.py, then nsys\n"
    "  export --type sqlite REPORT.nsys-rep. The report holds several passes of\n"
    "  the model (run it ten times); each kernel of a pass becomes one row, its\n"
    "  median duration over the passes. The passes are the ranges of the NVTX\n"
    "  name that repeats and holds the most kernel launches (torch.cuda.nvtx.range\n"
    "  around each pass), else the period of the kernel-name sequence (kernels\n"
    "  before the repeated tail are warm-up). Passes of another kernel sequence\n"
    "  are left out. One process (--process PID), one device and one stream\n"
    "  (--stream S, or all) are taken: by default the busiest. The GPU is\n"
    "  TARGET_INFO_GPU's name, through the catalog. Tables read: docs/profile.md.\n"
    "One summary line on stderr: what was read, operators written, their time,\n"
    "  what was taken and skipped.\n";

/* Merge the import into the existing out file (--append); the merged table
 * replaces *ops. Nothing is written on a mismatch, which is reported here
 * (the file's name first) and returns its exit code; a file that cannot be
 * read returns its PS_E_* code. */
static int append_to(const char *outp, ps_ops_t **ops, char *note, size_t n)
{
    FILE *exists = fopen(outp, "r");
    if (!exists)
        return PS_OK;
    fclose(exists);
    ps_ops_t *base = NULL, *all = NULL;
    size_t added = 0, filled = 0;
    int rc = ps_ops_load(outp, &base);
    if (rc == PS_OK && (rc = ps_ops_merge(base, *ops, &all, &added, &filled)) != PS_OK) {
        ps_ops_free(base);
        return cli_fail(rc == PS_E_ARG ? CLI_USAGE : CLI_BAD_INPUT, "import", "%s: %s", cli_user_path(outp),
                        ps_last_error());
    }
    if (rc == PS_OK) {
        snprintf(note, n, "merged into %s: %zu rows added, %zu rows' empty counters filled, %zu rows in all",
                 cli_user_path(outp), added, filled, ps_ops_rows(all));
        ps_ops_free(*ops);
        *ops = all;
    }
    ps_ops_free(base);
    return rc;
}

/* ns as "1.23 ms": three significant digits in the largest unit it reaches
 * (ns below 1 us, and for NaN). */
static const char *fmt_ns(double ns, char *buf, size_t n)
{
    static const struct {
        double scale;
        const char *unit;
    } units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
    size_t u = 0;
    while (u + 1 < sizeof units / sizeof units[0] && !(ns >= units[u].scale))
        u++;
    snprintf(buf, n, "%.3g %s", ns / units[u].scale, units[u].unit);
    return buf;
}

/* The one summary line on stderr. */
static void print_summary(const char *in, const char *outp, const ps_import_params_t *p, const ps_import_info_t *info,
                          const char *merge)
{
    char t[32];
    fprintf(stderr, "%s: %zu operators of %s batch %d on %s at %d TPCs, %s, from %s (%s)", cli_user_path(outp),
            info->ops, p->model, p->batch, info->gpu, p->tpcs, fmt_ns(info->total_ns, t, sizeof t), cli_user_path(in),
            info->format);
    if (*info->gpu_in_file && strcmp(info->gpu_in_file, info->gpu) != 0)
        fprintf(stderr, "; the file names the GPU %s", info->gpu_in_file);
    if (*info->taken)
        fprintf(stderr, "; took %s", info->taken);
    if (info->zero_dur)
        fprintf(stderr, "; %zu kernels with dur 0 %s", info->zero_dur, info->zero_dur_ns > 0 ? "kept" : "dropped");
    if (info->text_lines)
        fprintf(stderr, "; %zu lines of other text ignored", info->text_lines);
    fprintf(stderr, "; skipped: %s", *info->skipped ? info->skipped : "nothing");
    if (*merge)
        fprintf(stderr, "; %s", merge);
    fputc('\n', stderr);
}

static void print_json(const char *outp, const ps_import_params_t *p, const ps_import_info_t *info, size_t rows)
{
    cJSON *o = cli_json_new("import", 1);
    cJSON_AddStringToObject(o, "out", cli_user_path(outp));
    cJSON_AddStringToObject(o, "gpu", info->gpu);
    cJSON_AddStringToObject(o, "model", p->model);
    cJSON_AddNumberToObject(o, "ops", (double)info->ops);
    cJSON_AddNumberToObject(o, "batch", p->batch);
    cJSON_AddNumberToObject(o, "tpcs", p->tpcs);
    cJSON_AddStringToObject(o, "format", info->format);
    cJSON_AddStringToObject(o, "gpu_in_file", info->gpu_in_file);
    cJSON_AddNumberToObject(o, "total_ns", info->total_ns);
    cJSON_AddNumberToObject(o, "zero_dur", (double)info->zero_dur);
    cJSON_AddStringToObject(o, "taken", info->taken);
    cJSON_AddStringToObject(o, "skipped", info->skipped);
    cJSON_AddNumberToObject(o, "rows", (double)rows);
    cli_json_print(o, stdout);
}

/* The format and input are given and the flags fit the format: CLI_OK, or
 * the usage error's exit code. */
static int check_usage(const char *kind, const char *in, const ps_import_params_t *p)
{
    if (!kind || !in)
        return cli_fail(CLI_USAGE, "import", "give a format (ncu, torch-trace or nsys) and an input file");
    int is_ncu = strcmp(kind, "ncu") == 0, is_nsys = strcmp(kind, "nsys") == 0;
    if (!is_ncu && !is_nsys && strcmp(kind, "torch-trace") != 0 && strcmp(kind, "ops") != 0)
        return cli_fail(CLI_USAGE, "import", "unknown format '%s' (ncu, torch-trace, nsys or ops)", kind);
    if (is_ncu && p->stream)
        return cli_fail(CLI_USAGE, "import", "--stream applies to torch-trace and nsys only");
    if ((is_ncu || is_nsys) && p->drop_zero)
        return cli_fail(CLI_USAGE, "import", "--drop-zero applies to torch-trace only");
    if (!is_ncu && !is_nsys && p->process)
        return cli_fail(CLI_USAGE, "import", "--process applies to ncu and nsys only");
    if ((p->gpu && !*p->gpu) || !*p->model)
        return cli_fail(CLI_USAGE, "import", "--gpu and --model must not be empty");
    return CLI_OK;
}

int cmd_import(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "abacus") == 0)
        return cmd_import_abacus(argc - 1, argv + 1);
    ps_import_params_t p = ps_import_default_params();
    const char *kind = NULL, *in = NULL, *outp = NULL;
    int json = 0, quiet = 0, append = 0, npos = 0;
    import_twin_t tw = {0};
    cli_opt_t opts[] = {
        {"--gpu", CLI_STR, &p.gpu, "G",
         "GPU name written to every row; an alias (a100) or a driver's name becomes the catalog's name",
         .def = "the GPU the file names: ncu's device__attribute_display_name, the trace's deviceProperties"},
        {"--model", CLI_STR, &p.model, "M", "model name", .flags = CLI_REQ},
        {"--batch", CLI_INT, &p.batch, "B", "batch size", .lo = 1, .hi = 1 << 30},
        {"--tpcs", CLI_INT, &p.tpcs, "N", "TPCs the profile ran on, at most the GPU's", .lo = 1, .hi = 1 << 30,
         .flags = CLI_REQ},
        {"--out", CLI_STR, &outp, "FILE", "ops.csv to write, atomically", .flags = CLI_REQ | CLI_OUT},
        {"--append", CLI_FLAG, &append, NULL,
         "merge into FILE when it exists: a TPC count new to the model adds rows, the same count fills the empty "
         "counters of its rows (a trace, then an ncu report of the same run); the kernel sequences must match, or "
         "nothing is written",
         .def = "off: replace FILE"},
        {"--stream", CLI_STR, &p.stream, "S",
         "torch-trace, nsys: the CUDA stream to take, or all (every compute stream)",
         .def = "the stream with the most compute-kernel time"},
        {"--device", CLI_STR, &p.device, "N", "the device to take", .def = "the one with the most kernel time"},
        {"--process", CLI_STR, &p.process, "PID", "ncu, nsys: the process to take (ncu --target-processes all)",
         .def = "the one with the most kernel time"},
        {"--drop-zero", CLI_FLAG, &p.drop_zero, NULL, "torch-trace: drop kernels with dur 0",
         .def = "off: keep each as half the trace's time resolution"},
        IMPORT_TWIN_OPTS(&tw),
        {"--force-gpu", CLI_FLAG, &p.force_gpu, NULL, "write --gpu even where the file names another GPU",
         .def = "off: that is an error"},
        CLI_OPT_JSON(&json, "print the result as JSON on stdout"),
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    cli_spec_t spec = {.cmd = "import",
                       .synopsis =
                           "ncu REPORT.csv --model M --tpcs N --out ops.csv [options]\n"
                           "torch-trace TRACE.json[.gz] --model M --tpcs N --out ops.csv [options]\n"
                           "nsys REPORT.sqlite --model M --batch B --tpcs N [--oplist L] --out ops.csv [options]\n"
                           "ops OPS.csv --model M --batch B --tpcs N --oplist L --tpcs-from twin --out ops.csv",
                       .about = "Converts a profile of one model run alone into ops.csv, one operator per\n"
                                "kernel launch in launch order, all measured at N TPCs (REPORT.csv or\n"
                                "TRACE.json may be - for standard input).\n"
                                "  ncu          an Nsight Compute CSV export (ncu --csv, either page)\n"
                                "  torch-trace  a PyTorch profiler Chrome trace (export_chrome_trace or\n"
                                "               tensorboard_trace_handler), plain or gzip\n"
                                "  nsys         an Nsight Systems SQLite export (nsys export --type sqlite):\n"
                                "               one row per kernel of a pass, its median over the passes\n"
                                "  ops          the measured rows of M at N TPCs of an ops.csv\n"
                                "With --oplist L, one row per operator of the list (its kernels summed);\n"
                                "with --tpcs-from twin too, the other TPC counts come from one trace.\n",
                       .opts = opts,
                       .examples = examples,
                       .notes = notes,
                       .exit_status = "0 written, 1 bad or empty input (nothing is written), 2 usage error.",
                       .max_pos = 2};
    int code;
    if (cli_parse(&spec, argc, argv, &npos, &code))
        return code;
    kind = npos > 0 ? argv[1] : NULL;
    in = npos > 1 ? argv[2] : NULL;
    if (in && strcmp(in, "-") == 0 && !(in = cli_stdin_path()))
        return cli_fail(CLI_BAD_INPUT, "import", "%s", cli_io_error());
    int usage = check_usage(kind, in, &p);
    if (usage != CLI_OK)
        return usage;
    int out_rc = cli_check_out("import", outp, &in, 1);
    if (out_rc != CLI_OK)
        return out_rc;

    ps_ops_t *ops = NULL;
    ps_import_info_t info;
    char merge[256] = "";
    int rc = import_twin_run(kind, in, &p, &tw, &ops, &info);
    if (rc > 0) /* a CLI exit code, already reported */
        return rc;
    if (rc == PS_OK && append && (rc = append_to(outp, &ops, merge, sizeof merge)) > 0) {
        ps_ops_free(ops);
        return rc;
    }
    if (rc == PS_OK)
        rc = ps_ops_save(ops, outp);
    size_t rows = ps_ops_rows(ops);
    ps_ops_free(ops);
    if (rc != PS_OK)
        return cli_fail(rc == PS_E_ARG ? CLI_USAGE : CLI_BAD_INPUT, "import", "%s", ps_last_error());
    if (!quiet)
        print_summary(in, outp, &p, &info, merge);
    if (json)
        print_json(outp, &p, &info, rows);
    return CLI_OK;
}
