/* pairsight check: detect, validate and summarise CSV tables. */
#include "cli/cli.h"

#include <string.h>

const char cmd_check_usage[] =
    "usage: pairsight check [options] FILE...\n"
    "\n"
    "Detects which table of FORMATS.md each file holds (ops, coexec, workloads,\n"
    "workload_scaling, colocations) from its header, validates it whole and prints\n"
    "one line per file: the table, its rows and its groups ((gpu, model, batch)\n"
    "for ops and coexec, workloads or co-locations for the others). Stops at the\n"
    "first error with FILE:LINE:COLUMN: message (COLUMN = 1-based field number).\n"
    "\n"
    "options:\n"
    "  --json : one JSON object per file instead of text (default off)\n"
    "  -q     : print nothing for valid files, only errors (default off)\n"
    "  -h, --help : show this help\n"
    "\n"
    "Exit status: 0 all files valid, 1 a file is invalid or unreadable, 2 usage.\n";

static const char *group_word(ps_table_kind_t kind)
{
    switch (kind) {
    case PS_TABLE_OPS:
    case PS_TABLE_COEXEC: return "models";
    case PS_TABLE_COLOCATIONS: return "colocations";
    default: return "workloads";
    }
}

int cmd_check(int argc, char **argv)
{
    int json = 0, quiet = 0, nfiles = 0, files_only = 0;
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_check_usage, stdout);
        return CLI_OK;
    }
    /* Options first; what is left (and all after "--") are files, kept in
     * argv's own order. */
    for (int i = 1; i < argc; i++) {
        if (!files_only && strcmp(argv[i], "--") == 0)
            files_only = 1;
        else if (!files_only && strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (!files_only && strcmp(argv[i], "-q") == 0)
            quiet = 1;
        else if (!files_only && argv[i][0] == '-' && argv[i][1])
            return cli_bad_option("check", argv[i], NULL);
        else
            argv[1 + nfiles++] = argv[i];
    }
    if (nfiles == 0)
        return cli_fail(CLI_USAGE, "check", "no FILE given (see pairsight check --help)");
    for (int i = 1; i <= nfiles; i++) {
        ps_check_result_t r;
        if (ps_table_check(argv[i], &r) != 0)
            return cli_fail(CLI_BAD_INPUT, "check", "%s", ps_last_error());
        if (quiet)
            continue;
        if (json) {
            printf("{\"file\": ");
            cli_put_json_string(argv[i]);
            printf(", \"table\": \"%s\", \"rows\": %zu, \"groups\": %zu}\n", ps_table_name(r.kind),
                   r.rows, r.groups);
        } else {
            printf("%s: %s, %zu rows, %zu %s\n", argv[i], ps_table_name(r.kind), r.rows, r.groups,
                   group_word(r.kind));
        }
        fflush(stdout);
    }
    return CLI_OK;
}
