/* `pairsight report`: the evaluation of `pairsight eval` as one
 * self-contained HTML page (inline SVG, nothing fetched). Its options and
 * usage are eval's (src/cli/cmd_eval.c) with --out for the page. */
#include "cli/cli.h"

int cmd_report(int argc, char **argv) { return cli_eval_main(argc, argv, 1); }
