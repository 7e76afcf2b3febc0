/* pairsight model: a model's metadata (info) and its regressors for XGBoost
 * itself (export). */
#include "cli/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#define CMD "model"

static const char *const sub_names[] = {"info", "export", NULL};

typedef struct {
    int json;
    const char *out;
    cli_opt_t table[4];
} opts_t;

static void sub_spec(opts_t *o, int k, cli_spec_t *spec)
{
    static const char *const examples[2][2] = {{"pairsight model info out/model.psm --json", NULL},
                                               {"pairsight model export out/model.psm --out out/xgb", NULL}};
    if (k == 0) {
        o->table[0] = (cli_opt_t)CLI_OPT_JSON(&o->json, "the metadata export writes to meta.json, as JSON");
        o->table[1] = (cli_opt_t){NULL};
    } else {
        o->table[0] = (cli_opt_t){
            "--out", CLI_STR, &o->out, "DIR", "output folder, created when its parent exists", .flags = CLI_REQ};
        o->table[1] = (cli_opt_t){NULL};
    }
    *spec =
        (cli_spec_t){.cmd = CMD,
                     .sub = sub_names[k],
                     .synopsis = k == 0 ? "MODEL [--json]" : "MODEL --out DIR",
                     .about = k == 0 ? "What a model is and how it was trained: GPU, feature layout (variant,\n"
                                       "window, features), trees, chosen depth and learning rate and the validation\n"
                                       "and test latency MAPE per side. With --json: meta.json (every column's\n"
                                       "name, where counters come from, the target transform, the training summary).\n"
                                     : "Writes DIR/hp.ubj and DIR/lp.ubj, the two regressors as XGBoost UBJSON\n"
                                       "(xgboost.Booster(model_file=...)); their raw output (margin) is log delta,\n"
                                       "and latency_ns = solo_ns * exp(margin) on the rows that pairsight features\n"
                                       "writes. DIR/meta.json holds the metadata (pairsight model info --json).\n",
                     .opts = o->table,
                     .examples = examples[k],
                     .max_pos = 1};
}

static void overview(FILE *f)
{
    fputs("pairsight model: a trained model's metadata and its regressors for XGBoost\n"
          "(docs/model.md \"Export\"). Subcommands info, export; `pairsight help model SUB`\n"
          "shows one.\n\n",
          f);
    for (int k = 0; k < 2; k++) {
        opts_t o = {0};
        cli_spec_t spec;
        sub_spec(&o, k, &spec);
        if (k)
            fputs("\n", f);
        cli_usage(&spec, f);
    }
}

static int info(const char *path, int json)
{
    ps_model_t *m = NULL;
    if (ps_model_load(path, &m) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    int code = CLI_OK;
    if (json) {
        char *meta = NULL;
        if (ps_model_meta_json_compact(m, &meta) != 0)
            code = cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
        else if (printf("%s\n", meta) < 0 || fflush(stdout) != 0)
            code = cli_fail(CLI_BAD_INPUT, CMD, "writing standard output failed");
        ps_free(meta);
    } else {
        ps_model_info_t i;
        ps_model_info(m, &i);
        printf("model:        %s\n", cli_user_path(path));
        printf("gpu:          %s\n", i.gpu);
        printf("layout:       version %d, variant %s, window %d, %d features\n", i.layout_version,
               ps_feature_variant_name(i.variant), i.window, i.n_features);
        printf("format:       version %d\n", i.format_version);
        printf("samples:      %zu (train %zu, calibration %zu, valid %zu, test %zu; %zu experiments, seed %" PRIu64
               ")\n",
               i.n_samples, i.n_train, i.n_calib, i.n_valid, i.n_test, i.n_experiments, i.seed);
        for (int s = 0; s < 2; s++)
            printf("%s regressor: %d trees, depth %d, eta %g, valid MAPE %.2f%%, test MAPE %.2f%%\n",
                   s == PS_SIDE_HP ? "HP" : "LP", i.n_trees[s], i.depth[s], i.eta[s], i.valid_mape[s], i.test_mape[s]);
        if (i.n_adapt)
            printf("adapted:      %d time(s), last on %zu rows in %.1f s\n", i.n_adapt, i.adapt_samples,
                   i.adapt_seconds);
    }
    ps_model_free(m);
    return code;
}

static int export_model(const char *path, const char *dir)
{
    int code = cli_check_out_dir(CMD, dir);
    if (code != CLI_OK)
        return code;
    ps_model_t *m = NULL;
    if (ps_model_load(path, &m) != 0)
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        code = cli_fail(CLI_BAD_INPUT, CMD, "%s: cannot create: %s", dir, strerror(errno));
    else if (ps_model_export(m, dir) != 0)
        code = cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    else
        printf("%s/hp.ubj\n%s/lp.ubj\n%s/meta.json\n", dir, dir, dir);
    ps_model_free(m);
    return code;
}

int cmd_model(int argc, char **argv)
{
    if (argc < 2)
        return cli_fail(CLI_USAGE, CMD, "missing subcommand: info or export (see pairsight model --help)");
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        overview(stdout);
        return CLI_OK;
    }
    int k = 0;
    while (sub_names[k] && strcmp(argv[1], sub_names[k]) != 0)
        k++;
    if (!sub_names[k]) {
        const char *near = ps_nearest(argv[1], sub_names, 2);
        return cli_fail(CLI_USAGE, CMD, "unknown subcommand '%s'%s%s%s (info, export)", argv[1],
                        near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    }
    opts_t o = {0};
    cli_spec_t spec;
    sub_spec(&o, k, &spec);
    int npos = 0, code;
    if (cli_parse(&spec, argc - 1, argv + 1, &npos, &code))
        return code;
    if (npos != 1)
        return cli_fail(CLI_USAGE, CMD, "%s needs one MODEL file (see pairsight model %s --help)", sub_names[k],
                        sub_names[k]);
    const char *path = argv[2];
    return k == 0 ? info(path, o.json) : export_model(path, o.out);
}
