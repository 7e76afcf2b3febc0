/* pairsight model: a model's metadata (info) and its regressors for XGBoost
 * itself (export). */
#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char cmd_model_usage[] =
    "usage: pairsight model info MODEL [--json]\n"
    "       pairsight model export MODEL --out DIR\n"
    "\n"
    "info prints what the model is and how it was trained: GPU, feature layout\n"
    "(variant, window, columns), trees, chosen depth and learning rate and the\n"
    "validation and test latency MAPE per side. With --json it prints the\n"
    "metadata that export writes to meta.json (every column's name, the target\n"
    "transform, the training summary).\n"
    "\n"
    "export writes DIR/hp.ubj and DIR/lp.ubj, the two regressors as XGBoost\n"
    "UBJSON (xgboost.Booster(model_file=...)); their raw output (margin) is log\n"
    "delta, and latency_ns = solo_ns * exp(margin) on the rows that pairsight\n"
    "features writes. DIR/meta.json holds the metadata. DIR is created when its\n"
    "parent exists.\n"
    "\n"
    "options:\n"
    "  --json      info: the metadata as JSON (default: text)\n"
    "  --out DIR   export: output folder (required)\n"
    "  -h, --help  show this help\n";

static int info(const char *path, int json)
{
    ps_model_t *m = NULL;
    if (ps_model_load(path, &m) != 0)
        return cli_fail(CLI_BAD_INPUT, "model", "%s", ps_last_error());
    int code = CLI_OK;
    if (json) {
        char *meta = NULL;
        if (ps_model_meta_json(m, &meta) != 0)
            code = cli_fail(CLI_BAD_INPUT, "model", "%s", ps_last_error());
        else
            fputs(meta, stdout);
        ps_free(meta);
    } else {
        ps_model_info_t i;
        ps_model_info(m, &i);
        printf("model:        %s\n", path);
        printf("gpu:          %s\n", i.gpu);
        printf("layout:       version %d, variant %s, window %d, %d features\n", i.layout_version,
               ps_feature_variant_name(i.variant), i.window, i.n_features);
        printf("format:       version %d\n", i.format_version);
        printf("samples:      %zu (train %zu, valid %zu, test %zu; %zu experiments, seed %u)\n", i.n_samples,
               i.n_train, i.n_valid, i.n_test, i.n_experiments, i.seed);
        for (int s = 0; s < 2; s++)
            printf("%s regressor: %d trees, depth %d, eta %g, valid MAPE %.2f%%, test MAPE %.2f%%\n",
                   s == PS_SIDE_HP ? "HP" : "LP", i.n_trees[s], i.depth[s], i.eta[s], i.valid_mape[s],
                   i.test_mape[s]);
        if (i.n_adapt)
            printf("adapted:      %d time(s), last on %zu rows in %.1f s\n", i.n_adapt, i.adapt_samples,
                   i.adapt_seconds);
    }
    ps_model_free(m);
    return code;
}

static int export_model(const char *path, const char *dir)
{
    int code = cli_check_out_dir("model", dir);
    if (code != CLI_OK)
        return code;
    ps_model_t *m = NULL;
    if (ps_model_load(path, &m) != 0)
        return cli_fail(CLI_BAD_INPUT, "model", "%s", ps_last_error());
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        code = cli_fail(CLI_BAD_INPUT, "model", "%s: cannot create: %s", dir, strerror(errno));
    else if (ps_model_export(m, dir) != 0)
        code = cli_fail(CLI_BAD_INPUT, "model", "%s", ps_last_error());
    else
        printf("%s/hp.ubj\n%s/lp.ubj\n%s/meta.json\n", dir, dir, dir);
    ps_model_free(m);
    return code;
}

int cmd_model(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_model_usage, stdout);
        return CLI_OK;
    }
    if (argc < 2)
        return cli_fail(CLI_USAGE, "model", "an action is required: info or export (see pairsight model --help)");
    const char *action = argv[1], *path = NULL, *out = NULL;
    int is_info = strcmp(action, "info") == 0, json = 0;
    if (!is_info && strcmp(action, "export") != 0)
        return cli_fail(CLI_USAGE, "model", "unknown action '%s': info or export (see pairsight model --help)",
                        action);
    static const char *const value_flags[] = {"--out", NULL};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (a[0] != '-' || !a[1]) {
            if (path)
                return cli_fail(CLI_USAGE, "model", "one MODEL only ('%s' and '%s')", path, a);
            path = a;
            continue;
        }
        int rc = cli_next_option("model", argc, argv, &i, is_info ? NULL : value_flags, is_info ? &json : NULL,
                                 NULL, &v);
        if (rc != CLI_OK)
            return rc;
        if (v)
            out = v;
    }
    if (!path)
        return cli_fail(CLI_USAGE, "model", "%s needs a MODEL file (see pairsight model --help)", action);
    if (is_info)
        return info(path, json);
    if (!out)
        return cli_fail(CLI_USAGE, "model", "export needs --out DIR (see pairsight model --help)");
    return export_model(path, out);
}
