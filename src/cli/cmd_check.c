/* pairsight check: detect, validate and summarise CSV tables. */
#include "cli/cli.h"

#include <cjson/cJSON.h>
#include <string.h>

static const char *group_word(ps_table_kind_t kind)
{
    switch (kind) {
    case PS_TABLE_OPS:
    case PS_TABLE_COEXEC: return "models";
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
    cli_spec_t spec = {
        .cmd = "check",
        .synopsis = "[options] FILE...",
        .about = "Detects which table of FORMATS.md each file holds (ops, coexec, workloads,\n"
                 "workload_scaling, colocations) from its header, validates it whole and prints\n"
                 "one line per file: the table, its rows and its groups ((gpu, model, batch)\n"
                 "for ops and coexec, workloads or co-locations for the others). Stops at the\n"
                 "first error with FILE:LINE:COLUMN: message (COLUMN = 1-based field number).\n"
                 "FILE - reads standard input; files after -- are never options.\n",
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
            return cli_fail(CLI_BAD_INPUT, "check", "%s", ps_last_error());
    for (int i = 1; i <= nfiles; i++) {
        ps_check_result_t r;
        if (ps_table_check(argv[i], &r) != 0)
            return cli_fail(CLI_BAD_INPUT, "check", "%s", ps_last_error());
        if (quiet)
            continue;
        if (json) {
            cJSON *o = cli_json_new("check", 1);
            cJSON_AddStringToObject(o, "file", cli_user_path(argv[i]));
            cJSON_AddStringToObject(o, "table", ps_table_name(r.kind));
            cJSON_AddNumberToObject(o, "rows", (double)r.rows);
            cJSON_AddNumberToObject(o, "groups", (double)r.groups);
            cli_json_print(o, stdout);
        } else {
            printf("%s: %s, %zu rows, %zu %s\n", cli_user_path(argv[i]), ps_table_name(r.kind), r.rows, r.groups,
                   group_word(r.kind));
        }
        fflush(stdout);
    }
    return CLI_OK;
}
