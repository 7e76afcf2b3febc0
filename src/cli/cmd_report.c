/* `pairsight report`: the evaluation of `pairsight eval` as one
 * self-contained HTML page (inline SVG, nothing fetched). */
#include "cli/cli.h"

const char cmd_report_usage[] =
    "usage: pairsight report --ops FILE --coexec FILE --out FILE [options]\n"
    "\n"
    "Run the evaluation of `pairsight eval` and write one self-contained HTML page:\n"
    "the tables, predicted against measured latency per method, error CDFs, the\n"
    "slowdown heat map of HP segments against co-runners and each counter's\n"
    "correlation with delta for target and co-runner. scripts/render_report.sh\n"
    "renders it to a PNG.\n"
    "\n"
    "options:\n"
    "  --out FILE          the HTML page to write (required)\n"
    "  --ops FILE          standalone profile, ops.csv (required)\n"
    "  --coexec FILE       co-executions, coexec.csv (required), split 80/10/10\n"
    "  --model FILE        PairSight model (default: train one here)\n"
    "  --train FILE        training co-executions (default: the training split of\n"
    "                      --coexec)\n"
    "  --long FILE         long-segment co-executions (default: none)\n"
    "  --long-ops FILE     their standalone profile (default: --ops)\n"
    "  --experiments LIST  accuracy, ablation, generalization, long, or all\n"
    "                      (default accuracy)\n"
    "  --seed N            split seed (default: the model's, else 1)\n"
    "  --threads N         XGBoost threads when training here, 0 = all (default 0)\n"
    "  --rounds N          most trees per regressor when training here (default 400)\n"
    "  --depths LIST       max_depth grid when training here (default 6,8)\n"
    "  --etas LIST         learning-rate grid when training here (default 0.1,0.3)\n"
    "  --mlp-epochs N      most epochs per MLP baseline (default 100)\n"
    "  --ks A,B,C          continued-training sizes (default 10,50,100)\n"
    "  -q                  no progress on stderr\n"
    "  -h, --help          this text\n";

int cli_eval_main(int argc, char **argv, int report_mode);

int cmd_report(int argc, char **argv) { return cli_eval_main(argc, argv, 1); }
