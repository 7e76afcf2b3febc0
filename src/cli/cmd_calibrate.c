/* pairsight calibrate: the bounds calibrated again on a campaign of their
 * own: window-sized segments (--what windows) or composed, longer ones
 * (--what composed, on a campaign of long co-executions). */
#include "cli/cli.h"

#include <stdio.h>

static const char *const examples[] = {
    "pairsight calibrate --model out/model.psm --ops out/long/ops.csv --coexec out/long/coexec.csv "
    "--out out/model-long.psm",
    "pairsight calibrate --what windows --model out/model.psm --ops out/calib/ops.csv --coexec out/calib/coexec.csv "
    "--out out/model-recal.psm",
    NULL};

static const char *const what_names[] = {"composed", "windows", NULL};

int cmd_calibrate(int argc, char **argv)
{
    const char *model_path = NULL, *ops_path = NULL, *cx_path = NULL, *out = NULL;
    int quiet = 0, what = 0;
    cli_opt_t opts[] = {
        {"--what", CLI_ENUM, &what, "WHICH",
         "which bounds: composed (segments longer than the window, on long co-executions) or windows (window-sized "
         "segments, on a campaign of its own; drops the composed calibration, so calibrate composed after it)",
         .choices = what_names},
        {"--model", CLI_STR, &model_path, "FILE", "trained, calibrated model", .flags = CLI_REQ | CLI_IN},
        {"--ops", CLI_STR, &ops_path, "FILE", "standalone profile of the campaign (its SM splits)",
         .flags = CLI_REQ | CLI_IN},
        {"--coexec", CLI_STR, &cx_path, "FILE",
         "co-executions disjoint from training and from any reported set: long ones (more operators than the "
         "window on a side) for composed, window-sized ones for windows",
         .flags = CLI_REQ | CLI_IN},
        {"--out", CLI_STR, &out, "FILE", "the model with the new calibration", .flags = CLI_REQ | CLI_OUT},
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    cli_spec_t spec = {.cmd = "calibrate",
                       .synopsis = "[--what composed|windows] --model FILE --ops FILE --coexec FILE --out FILE",
                       .about = "Calibrate the upper bounds again on a campaign of their own (docs/planner.md,\n"
                                "\"Bounds\"). composed: segments longer than the model window (composed from\n"
                                "windows): per side and coverage level, the split-conformal quantile of\n"
                                "log(measured / window-composed bound) on the long co-executions of --coexec;\n"
                                "predict --coverage, plan and replay then scale composed bounds by it.\n"
                                "windows: the quantiles of window-sized segments, from every row of --coexec\n"
                                "within the window (a larger set than training's calibration split); refuses\n"
                                "the training campaign itself.\n",
                       .opts = opts,
                       .examples = examples,
                       .max_pos = 0};
    int code;
    if (cli_parse(&spec, argc, argv, NULL, &code))
        return code;
    const char *inputs[] = {model_path, ops_path, cx_path};
    if ((code = cli_check_out("calibrate", out, inputs, 3)) != CLI_OK)
        return code;
    ps_model_t *m = NULL;
    ps_ops_t *ops = NULL;
    ps_coexec_t *cx = NULL;
    code = CLI_OK;
    if (ps_model_load(model_path, &m) != 0 || ps_ops_load(ops_path, &ops) != 0 || ps_coexec_load(cx_path, &cx) != 0 ||
        (what ? ps_model_calibrate_windows(m, ops, cx) : ps_model_calibrate_composed(m, ops, cx)) != 0 ||
        ps_model_save(m, out) != 0)
        code = cli_fail(CLI_BAD_INPUT, "calibrate", "%s", ps_last_error());
    else if (!quiet)
        fprintf(stderr, "pairsight: calibrate: %s bounds calibrated, model written to %s\n",
                what ? "window-sized segments'" : "composed-segment", out);
    ps_coexec_free(cx);
    ps_ops_free(ops);
    ps_model_free(m);
    return code;
}
