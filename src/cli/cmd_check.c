/* pairsight check: detect, validate and summarise CSV tables. */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char *group_word(ps_table_kind_t kind)
{
    switch (kind) {
    case PS_TABLE_OPS:
    case PS_TABLE_COEXEC: return "(model, batch) groups";
    case PS_TABLE_COLOCATIONS: return "colocations";
    default: return "workloads";
    }
}

static const char *const examples[] = {"pairsight check out/ops.csv out/coexec.csv",
                                       "pairsight check --json out/long/ops.csv out/long/coexec.csv", NULL};

int cmd_check(int argc, char **argv)
{
    int json = 0, quiet = 0, nfiles = 0;
    cli_opt_t opts[] = {CLI_OPT_JSON(&json, "one JSON object per file instead of text"),
                        {"-q", CLI_FLAG, &quiet, NULL, "print nothing for valid files, only errors", .flags = CLI_NODEF},
                        {NULL}};
    cli_spec_t spec = {.cmd = "check",
                       .synopsis = "[options] FILE...",
                       .about =
                           "Detects which table of FORMATS.md each file holds (ops, coexec, workloads,\n"
                           "workload_scaling, colocations, overlap) from its header, validates it whole and prints\n"
                           "one line per file: the table, its rows and its groups ((gpu, model, batch)\n"
                           "for ops and coexec, workloads or co-locations for the others). Stops at the\n"
                           "first error with FILE:LINE:COLUMN: message (COLUMN = 1-based field number).\n"
                           "FILE - reads standard input; files after -- are never options.\n"
                           "Given ops files, every coexec file is also checked against them: each row's\n"
                           "models and batches are profiled there, its segments lie inside them and its\n"
                           "TPC counts were profiled. coexec files are streamed: memory holds one row\n"
                           "per experiment, not the file. Given workloads files, every colocations and\n"
                           "workload_scaling file is checked against them: each row's workload has its solo\n"
                           "profile there, on the same GPU. Every co-location's slots are 1..k.\n",
                       .opts = opts,
                       .examples = examples,
                       .exit_status = "0 all files valid, 1 a file is invalid or unreadable, 2 usage error.",
                       .max_pos = -1};
    int code;
    if (cli_parse(&spec, argc, argv, &nfiles, &code))
        return code;
    if (nfiles == 0)
        return cli_fail(CLI_USAGE, "check", "no FILE given (see pairsight check --help)");
    for (int i = 1; i <= nfiles; i++)
        if (strcmp(argv[i], "-") == 0 && !(argv[i] = (char *)cli_stdin_path()))
            return cli_fail(CLI_BAD_INPUT, "check", "%s", cli_io_error());
    /* The ops files first: coexec files are checked against them. */
    /* ... and the workloads files: co-location and scaling files against them. */
    ps_ops_t **ops = calloc(nfiles > 0 ? (size_t)nfiles + 1 : 1, sizeof *ops);
    ps_workloads_t **wl = calloc(nfiles > 0 ? (size_t)nfiles + 1 : 1, sizeof *wl);
    int n_ops = 0, n_wl = 0, code2 = CLI_OK;
    if (!ops || !wl) {
        free(ops);
        free(wl);
        return cli_fail(CLI_BAD_INPUT, "check", "out of memory");
    }
    for (int i = 1; i <= nfiles && code2 == CLI_OK; i++) {
        ps_table_kind_t kind;
        if (ps_table_detect(argv[i], &kind) == 0 && kind == PS_TABLE_OPS && ps_ops_load(argv[i], &ops[n_ops]) == 0)
            n_ops++;
        if (ps_table_detect(argv[i], &kind) == 0 && kind == PS_TABLE_WORKLOADS &&
            ps_workloads_load(argv[i], &wl[n_wl]) == 0)
            n_wl++;
    }
    for (int i = 1, oi = 0; i <= nfiles && code2 == CLI_OK; i++) {
        ps_check_result_t r;
        if (ps_table_is_overlap(argv[i]) == 1) { /* overlap.csv has its own reader (cmd_overlap.c) */
            code2 = cli_check_overlap(argv[i], json, quiet);
            continue;
        }
        if (ps_table_check_with(argv[i], (const ps_ops_t *const *)ops, n_ops, &r) != 0 ||
            ps_table_check_workloads(argv[i], r.kind, (const ps_workloads_t *const *)wl, n_wl) != 0) {
            code2 = cli_fail(CLI_BAD_INPUT, "check", "%s", ps_last_error());
            break;
        }
        size_t est = r.kind == PS_TABLE_OPS && oi < n_ops ? ps_ops_estimated(ops[oi++]) : 0;
        if (quiet)
            continue;
        if (json) {
            cJSON *o = cli_json_new("check", 1);
            cJSON_AddStringToObject(o, "file", cli_user_path(argv[i]));
            cJSON_AddStringToObject(o, "table", ps_table_name(r.kind));
            cJSON_AddNumberToObject(o, "rows", (double)r.rows);
            cJSON_AddNumberToObject(o, "groups", (double)r.groups);
            if (est) /* only then: the object is unchanged for measured tables */
                cJSON_AddNumberToObject(o, "estimated_rows", (double)est);
            cli_json_print(o, stdout);
        } else {
            printf("%s: %s, %zu rows, %zu %s", cli_user_path(argv[i]), ps_table_name(r.kind), r.rows, r.groups,
                   group_word(r.kind));
            if (est)
                printf("; %zu rows estimated, not measured (source column; docs/profile.md)", est);
            putchar('\n');
        }
        fflush(stdout);
    }
    for (int i = 0; i < n_ops; i++)
        ps_ops_free(ops[i]);
    for (int i = 0; i < n_wl; i++)
        ps_workloads_free(wl[i]);
    free(ops);
    free(wl);
    return code2;
}
