/* pairsight import abacus: the Abacus artefact's co-runs into overlap.csv. */
#include "cli/cli.h"
#include "pairsight_overlap.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* Each runs where a clone of github Raphael-Hao/Abacus is in ~/src/Abacus. */
static const char *const examples[] = {"pairsight import abacus ~/src/Abacus --out overlap.csv",
                                       "pairsight import abacus ~/src/Abacus --rev 4c33e2e --out overlap.csv", NULL};

static const char notes[] = "REPO: a clone (its work tree is read when it holds data/profile/A100 and no\n"
                            "  --rev is given) or any git repository, bare mirrors included, read with\n"
                            "  `git ls-tree` and `git cat-file` (git must be on PATH). The artefact has no\n"
                            "  licence: it is read where it lies, nothing of it is copied into pairsight.\n"
                            "Read: data/profile/A100/{2in7,3in4,4in4} (setting dedicated, k = 2, 3, 4)\n"
                            "  and data/profile/mig/2in4 (mig-2g.10gb), mig/4in4 (mig-4g.20gb). A file\n"
                            "  whose content is absent (a blob a mirror lacks, a Git LFS pointer) is\n"
                            "  skipped and named in the summary. The GPU is written A100-40GB (the\n"
                            "  artefact does not say SXM4 or PCIe). Groups are Abacus's module groups,\n"
                            "  named by index; docs/overlap.md lists their module paths.\n";

static void print_json(const char *outp, const char *repo, const ps_abacus_info_t *info)
{
    cJSON *o = cli_json_new("import", 1);
    cJSON_AddStringToObject(o, "out", cli_user_path(outp));
    cJSON_AddStringToObject(o, "format", "abacus");
    cJSON_AddStringToObject(o, "repo", repo);
    cJSON_AddStringToObject(o, "rev", info->rev);
    cJSON_AddNumberToObject(o, "files", info->files);
    cJSON_AddNumberToObject(o, "experiments", (double)info->experiments);
    cJSON_AddStringToObject(o, "skipped", info->skipped);
    cli_json_print(o, stdout);
}

int cmd_import_abacus(int argc, char **argv)
{
    const char *rev = NULL, *outp = NULL;
    int json = 0, quiet = 0, npos = 0;
    cli_opt_t opts[] = {
        {"--rev", CLI_STR, &rev, "COMMIT", "the commit to read",
         .def = "the work tree when it holds the profiles, else the newest commit that holds data/profile/A100"},
        {"--out", CLI_STR, &outp, "FILE", "overlap.csv to write, atomically", .flags = CLI_REQ | CLI_OUT},
        CLI_OPT_JSON(&json, "print the result as JSON on stdout"),
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    cli_spec_t spec = {.cmd = "import",
                       .sub = "abacus",
                       .synopsis = "REPO --out overlap.csv [options]",
                       .about = "Converts the measured co-runs of operator groups of the Abacus artefact\n"
                                "(SC'21, github Raphael-Hao/Abacus) into overlap.csv (docs/FORMATS.md),\n"
                                "checking every row.\n",
                       .opts = opts,
                       .examples = examples,
                       .notes = notes,
                       .exit_status = "0 written, 1 bad or missing input (nothing is written), 2 usage error.",
                       .max_pos = 1};
    int code;
    if (cli_parse(&spec, argc, argv, &npos, &code))
        return code;
    if (npos != 1)
        return cli_fail(CLI_USAGE, "import abacus", "give the Abacus repository (a clone or a mirror)");
    const char *repo = argv[1];
    int out_rc = cli_check_out("import abacus", outp, NULL, 0);
    if (out_rc != CLI_OK)
        return out_rc;
    ps_overlap_t *t = NULL;
    ps_abacus_info_t info;
    int rc = ps_abacus_import(repo, rev, &t, &info);
    if (rc == PS_OK)
        rc = ps_overlap_save(t, outp);
    ps_overlap_free(t);
    if (rc != PS_OK)
        return cli_fail(CLI_BAD_INPUT, "import abacus", "%s", ps_last_error());
    if (!quiet)
        fprintf(stderr, "%s: %zu experiments from %d files of %s at %s; skipped: %s\n", cli_user_path(outp),
                info.experiments, info.files, repo, info.rev, *info.skipped ? info.skipped : "nothing");
    if (json)
        print_json(outp, repo, &info);
    return CLI_OK;
}
