/* The option parser of src/cli/opt.h (types, bounds, --opt=value, repeats,
 * lists, suggestions, the one wording of usage errors, "-" as a file), the
 * JSON writer, and the usage texts: every default they print is the value
 * of the library's _default_params() structs. */
#include "cli/cli.h"
#include "testhelp.h"

#include <cjson/cJSON.h>
#include <unistd.h>

/* Runs fn with stdout and stderr in files and returns what each received
 * (static buffers, overwritten by the next call). */
static char out_buf[65536], err_buf[8192];

static int capture(int (*fn)(int, char **), int argc, char **argv)
{
    char out_path[] = "/tmp/psi_test_cli_out.XXXXXX", err_path[] = "/tmp/psi_test_cli_err.XXXXXX";
    int fo = mkstemp(out_path), fe = mkstemp(err_path);
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    dup2(fo, 1);
    dup2(fe, 2);
    int rc = fn(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    FILE *f = fdopen(fo, "r");
    rewind(f);
    size_t n = fread(out_buf, 1, sizeof out_buf - 1, f);
    out_buf[n] = '\0';
    fclose(f);
    f = fdopen(fe, "r");
    rewind(f);
    n = fread(err_buf, 1, sizeof err_buf - 1, f);
    err_buf[n] = '\0';
    fclose(f);
    unlink(out_path);
    unlink(err_path);
    return rc;
}

/* A small command on its own table, driven through capture(). */
static struct {
    const char *file, *out;
    int n, json, quiet, kind, n_list, npos;
    double x;
    int list[4];
    uint64_t seed;
} t;

static const char *const kinds[] = {"alpha", "beta", NULL};

static int toy(int argc, char **argv)
{
    memset(&t, 0, sizeof t);
    t.n = 7;
    t.x = 0.5;
    t.list[0] = 6;
    t.list[1] = 8;
    t.n_list = 2;
    t.seed = 1;
    cli_opt_t opts[] = {
        {"--file", CLI_STR, &t.file, "FILE", "input", .flags = CLI_REQ | CLI_IN},
        {"--out", CLI_STR, &t.out, "FILE", "output", .flags = CLI_OUT},
        {"--n", CLI_INT, &t.n, "N", "a count", .lo = 1, .hi = 10},
        {"--x", CLI_DBL, &t.x, "X", "a share", .lo = 0, .hi = 1, .flags = CLI_LO_OPEN},
        {"--depths", CLI_INTS, t.list, "LIST", "a grid", .lo = 1, .hi = 20, .count = &t.n_list, .max = 4},
        {"--kind", CLI_ENUM, &t.kind, "K", "a kind", .choices = kinds},
        {"--seed", CLI_U64, &t.seed, "N", "a seed", .lo = 0, .hi = 0},
        CLI_OPT_JSON(&t.json, "JSON"),
        CLI_OPT_QUIET(&t.quiet),
        {NULL}};
    cli_spec_t spec = {.cmd = "toy", .synopsis = "--file FILE [options] [ARG]", .opts = opts, .max_pos = 1};
    int code;
    if (cli_parse(&spec, argc, argv, &t.npos, &code))
        return code;
    return CLI_OK;
}

static int run_toy(const char *line)
{
    char buf[1024], *argv[64];
    int argc = 0;
    snprintf(buf, sizeof buf, "toy %s", line);
    for (char *tok = strtok(buf, " "); tok && argc < 63; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    argv[argc] = NULL;
    return capture(toy, argc, argv);
}

static void test_values(void)
{
    CHECK(run_toy("--file a.csv") == CLI_OK);
    CHECK(strcmp(t.file, "a.csv") == 0 && t.n == 7 && t.x == 0.5 && t.n_list == 2);
    CHECK(run_toy("--file=a.csv --n=3 --x 1 --kind=beta --seed 18446744073709551615 --json -q") == CLI_OK);
    CHECK(t.n == 3 && t.x == 1 && t.kind == 1 && t.seed == UINT64_MAX && t.json && t.quiet);
    /* A list replaces the default and grows when repeated. */
    CHECK(run_toy("--file a --depths 3 --depths 4,5") == CLI_OK);
    CHECK(t.n_list == 3 && t.list[0] == 3 && t.list[1] == 4 && t.list[2] == 5);
    /* Positional arguments, and "--" before one that looks like an option. */
    CHECK(run_toy("--file a pos") == CLI_OK && t.npos == 1);
    CHECK(run_toy("--file a -- -pos") == CLI_OK && t.npos == 1);
}

static void test_usage_errors(void)
{
    CHECK(run_toy("--file a --n 11") == CLI_USAGE);
    CHECK_MSG(strstr(err_buf, "pairsight: toy: --n: bad value '11': expected an integer in 1..10"), "%s", err_buf);
    CHECK(run_toy("--file a --x 0") == CLI_USAGE);
    CHECK_MSG(strstr(err_buf, "--x: bad value '0': expected a number in (0, 1]"), "%s", err_buf);
    CHECK(run_toy("--file a --x nan") == CLI_USAGE);
    CHECK(run_toy("--file a --depths 1,,2") == CLI_USAGE);
    CHECK(run_toy("--file a --depths 1,2,3,4,5") == CLI_USAGE);
    CHECK(run_toy("--file a --kind gamma") == CLI_USAGE);
    CHECK_MSG(strstr(err_buf, "expected one of alpha, beta"), "%s", err_buf);
    CHECK(run_toy("--file a --seed -1") == CLI_USAGE);
    CHECK(run_toy("--file a --n") == CLI_USAGE);
    CHECK_MSG(strstr(err_buf, "pairsight: toy: --n needs a value: an integer in 1..10 (see pairsight toy --help)"),
              "%s", err_buf);
    CHECK(run_toy("--file a --out") == CLI_USAGE);
    CHECK_MSG(strstr(err_buf, "pairsight: toy: --out needs a value (see pairsight toy --help)"), "%s", err_buf);
    CHECK(run_toy("--file a --n 2 --n 3") == CLI_USAGE);
    CHECK_MSG(strstr(err_buf, "--n given twice"), "%s", err_buf);
    CHECK(run_toy("--file a --json=1") == CLI_USAGE);
    CHECK(run_toy("--file a --dephts 3") == CLI_USAGE);
    CHECK_MSG(strstr(err_buf, "unknown option '--dephts'; did you mean '--depths'? (see pairsight toy --help)"), "%s",
              err_buf);
    CHECK(run_toy("--file a --bogus") == CLI_USAGE);
    CHECK_MSG(strstr(err_buf, "unknown option '--bogus' (see pairsight toy --help)"), "%s", err_buf);
    CHECK(run_toy("--n 3") == CLI_USAGE);
    CHECK_MSG(strstr(err_buf, "--file is required"), "%s", err_buf);
    CHECK(run_toy("--file a one two") == CLI_USAGE);
    CHECK_MSG(strstr(err_buf, "unexpected argument 'two'"), "%s", err_buf);
    /* -h anywhere prints the usage and exits 0, whatever else is wrong. */
    CHECK(run_toy("--bogus -h") == CLI_OK);
    CHECK(strstr(out_buf, "usage: pairsight toy --file FILE [options] [ARG]"));
    CHECK_MSG(strstr(out_buf, "--n N") && strstr(out_buf, "a count (default 7; 1..10)"), "%s", out_buf);
    CHECK_MSG(strstr(out_buf, "a grid (default 6,8; each in 1..20)"), "%s", out_buf);
    CHECK(strstr(out_buf, "Exit status: "));
}

static void test_nearest(void)
{
    const char *names[] = {"--depths", "--etas", "--ops", "--out", "--rounds"};
    CHECK(strcmp(ps_nearest("--depth", names, 5), "--depths") == 0);
    CHECK(strcmp(ps_nearest("--round", names, 5), "--rounds") == 0);
    CHECK(strcmp(ps_nearest("--dep", names, 5), "--depths") == 0);
    CHECK(strcmp(ps_nearest("--dpeths", names, 5), "--depths") == 0); /* a transposition is one step */
    const char *cmds[] = {"check", "train", "predict"};
    CHECK(strcmp(ps_nearest("trian", cmds, 3), "train") == 0);
    CHECK(ps_nearest("--out", names, 5) && strcmp(ps_nearest("--out", names, 5), "--out") == 0);
    CHECK(ps_nearest("--oat", names, 5) != NULL);
    CHECK(ps_nearest("--bogus", names, 5) == NULL);
}

static void test_need(void)
{
    int a = 0, b = 0;
    cli_opt_t opts[] = {{"--a", CLI_FLAG, &a, NULL, "a"}, {"--b", CLI_FLAG, &b, NULL, "b"}, {NULL}};
    cli_spec_t spec = {.cmd = "toy", .opts = opts, .max_pos = 0};
    char *argv[] = {"toy", "--a", NULL};
    int code;
    CHECK(cli_parse(&spec, 2, argv, NULL, &code) == 0 && code == CLI_OK);
    CHECK(cli_given(&spec, "--a") && !cli_given(&spec, "--b"));
    fflush(stderr);
    int se = dup(2);
    FILE *f = tmpfile();
    dup2(fileno(f), 2);
    int rc = cli_need(&spec, "select: ", "--a,--b");
    fflush(stderr);
    dup2(se, 2);
    close(se);
    rewind(f);
    size_t n = fread(err_buf, 1, sizeof err_buf - 1, f);
    err_buf[n] = '\0';
    fclose(f);
    CHECK(rc == CLI_USAGE);
    CHECK_MSG(strstr(err_buf, "select: missing --b: --a and --b are required"), "%s", err_buf);
}

static void test_json(void)
{
    cJSON *o = cli_json_new("toy", 2);
    cJSON_AddNumberToObject(o, "third", 1.0 / 3);
    cJSON_AddNumberToObject(o, "n", 400);
    cJSON_AddNumberToObject(o, "nan", NAN);
    cJSON_AddNumberToObject(o, "inf", INFINITY);
    cJSON_AddStringToObject(o, "s", "a\"b\\c\n\x01\xff\xc3\xa9");
    FILE *f = tmpfile();
    CHECK(cli_json_print(o, f) == 0);
    rewind(f);
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    CHECK_MSG(strcmp(buf, "{\"schema\":\"pairsight.toy.v2\",\"third\":0.33333333333333331,\"n\":400,"
                          "\"nan\":null,\"inf\":null,\"s\":\"a\\\"b\\\\c\\n\\u0001\\ufffd\xc3\xa9\"}\n") == 0,
              "%s", buf);
}

/* The usage line of flag in the help of argv, or NULL. */
static const char *help_line(const char *flag)
{
    static char line[512];
    char want[64];
    snprintf(want, sizeof want, "\n  %s ", flag);
    const char *p = strstr(out_buf, want);
    if (!p)
        return NULL;
    /* The flag's text runs to the next line that starts another flag. */
    const char *end = strstr(p + 1, "\n  -");
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len >= sizeof line)
        len = sizeof line - 1;
    memcpy(line, p, len);
    line[len] = '\0';
    return line;
}

static void check_default(const char *cmd, const char *flag, const char *want)
{
    const char *l = help_line(flag);
    char d[128];
    snprintf(d, sizeof d, "default %s", want);
    CHECK_MSG(l && strstr(l, d), "%s --help: %s should say '%s': %s", cmd, flag, d, l ? l : "(no such flag)");
}

static int help_of(int (*fn)(int, char **), const char *cmd, const char *sub)
{
    char help[] = "--help", c[32], s[32];
    snprintf(c, sizeof c, "%s", cmd);
    snprintf(s, sizeof s, "%s", sub ? sub : "");
    char *argv[] = {c, sub ? s : help, help, NULL};
    return capture(fn, sub ? 3 : 2, argv);
}

static void test_help_defaults(void)
{
    char v[64];
    ps_train_params_t tp = ps_train_default_params();
    CHECK(help_of(cmd_train, "train", NULL) == CLI_OK);
    snprintf(v, sizeof v, "%d", tp.max_rounds);
    check_default("train", "--rounds", v);
    snprintf(v, sizeof v, "%d", tp.window);
    check_default("train", "--window", v);
    snprintf(v, sizeof v, "%d", tp.early_stopping);
    check_default("train", "--early-stop", v);
    snprintf(v, sizeof v, "%d,%d", tp.depths[0], tp.depths[1]);
    check_default("train", "--depths", v);
    snprintf(v, sizeof v, "%g,%g", tp.etas[0], tp.etas[1]);
    check_default("train", "--etas", v);
    check_default("train", "--variant", ps_feature_variant_name(tp.variant));

    CHECK(help_of(cmd_adapt, "adapt", NULL) == CLI_OK);
    snprintf(v, sizeof v, "%d", tp.adapt_rounds);
    check_default("adapt", "--rounds", v);
    snprintf(v, sizeof v, "%g", tp.adapt_eta);
    check_default("adapt", "--eta", v);
    snprintf(v, sizeof v, "%d", tp.adapt_depth);
    check_default("adapt", "--depth", v);

    ps_sim_params_t sp = ps_sim_default_params();
    CHECK(help_of(cmd_simulate, "simulate", NULL) == CLI_OK);
    snprintf(v, sizeof v, "%ld", sp.experiments);
    check_default("simulate", "--experiments", v);
    snprintf(v, sizeof v, "%d", sp.runs);
    check_default("simulate", "--runs", v);
    snprintf(v, sizeof v, "%g", sp.noise);
    check_default("simulate", "--noise", v);
    snprintf(v, sizeof v, "%d", sp.max_len);
    check_default("simulate", "--max-len", v);

    ps_baseline_params_t bp = ps_baseline_default_params();
    CHECK(help_of(cmd_eval, "eval", NULL) == CLI_OK);
    snprintf(v, sizeof v, "%d", bp.mlp_epochs);
    check_default("eval", "--mlp-epochs", v);
    snprintf(v, sizeof v, "%d", tp.max_rounds);
    check_default("eval", "--rounds", v);
    CHECK(help_of(cmd_report, "report", NULL) == CLI_OK);
    check_default("report", "--mlp-epochs", "100");

    ps_coloc_eval_params_t cp = ps_coloc_eval_default_params();
    CHECK(help_of(cmd_colocate, "colocate", "eval") == CLI_OK);
    snprintf(v, sizeof v, "%d", cp.seeds);
    check_default("colocate eval", "--seeds", v);
    snprintf(v, sizeof v, "%g", cp.train_frac);
    check_default("colocate eval", "--train-frac", v);
    snprintf(v, sizeof v, "%d", cp.model.trees);
    check_default("colocate eval", "--trees", v);
    CHECK(help_of(cmd_colocate, "colocate", "train") == CLI_OK);
    check_default("colocate train", "--kind", "mps");
    CHECK(help_line("--seeds") == NULL); /* eval's flag is not train's */

    ps_collect_params_t kp = ps_collect_default_params();
    ps_coexec_plan_t plan = ps_coexec_default_plan();
    CHECK(help_of(cmd_collect, "collect", "profile") == CLI_OK);
    snprintf(v, sizeof v, "%d", kp.warmup);
    check_default("collect", "--warmup", v);
    snprintf(v, sizeof v, "%d", kp.seq_len);
    check_default("collect", "--seq-len", v);
    snprintf(v, sizeof v, "%d", plan.experiments);
    check_default("collect", "--experiments", v);
    check_default("collect", "--backend", kp.backend);

    ps_plan_params_t pl = ps_plan_default_params();
    CHECK(help_of(cmd_plan, "plan", NULL) == CLI_OK);
    snprintf(v, sizeof v, "%g", pl.coverage);
    check_default("plan", "--coverage", v);
    ps_replay_params_t rp = ps_replay_default_params();
    CHECK(help_of(cmd_replay, "replay", NULL) == CLI_OK);
    snprintf(v, sizeof v, "%d", rp.requests);
    check_default("replay", "--requests", v);
    snprintf(v, sizeof v, "%g", rp.load);
    check_default("replay", "--load", v);
    snprintf(v, sizeof v, "%g", rp.slo_factor);
    check_default("replay", "--slo-factor", v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)rp.seed);
    check_default("replay", "--seed", v);
}

TH_MAIN(TEST(test_values), TEST(test_usage_errors), TEST(test_nearest), TEST(test_need), TEST(test_json),
        TEST(test_help_defaults))
