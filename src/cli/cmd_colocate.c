/* pairsight colocate: workload-level co-location (KACE, Xu et al., the ratio
 * baseline and our MPS interference predictor) - eval, train, predict,
 * select. See docs/colocate.md. */
#include "cli/cli.h"
#include "common/common.h"
#include "profile/csv.h"
#include "profile/tables.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_colocate_usage[] =
    "usage: pairsight colocate eval    --workloads W --colocations C [options]\n"
    "       pairsight colocate train   --workloads W --colocations C --out M [options]\n"
    "       pairsight colocate predict --model M --workloads W --colocations Q [options]\n"
    "       pairsight colocate select  --model M --workloads W --target T --candidates a,b,c [options]\n"
    "\n"
    "Predict the throughput of workloads co-located on one GPU under MPS and\n"
    "choose co-runners (docs/colocate.md).\n"
    "\n"
    "common options:\n"
    "  --workloads FILE   workloads.csv (required)\n"
    "  --scaling FILE     workload_scaling.csv (default: none; solo throughput\n"
    "                     then scales linearly with the share)\n"
    "  --json             print the result as JSON (eval, select; default off)\n"
    "  -q                 no progress on stderr (default: progress when a terminal)\n"
    "\n"
    "eval: train and score every predictor and policy\n"
    "  --colocations FILE colocations.csv (required)\n"
    "  --train-frac F     share of co-locations used for training (default 0.2)\n"
    "  --seeds N          random splits (default 20)\n"
    "  --seed N           first seed (default 0)\n"
    "  --unseen           hold out every co-location of one model (all its batch\n"
    "                     sizes) in turn instead of random splits (default off)\n"
    "  --test FILE        score on FILE's co-locations, leaving out each workload\n"
    "                     set (all its shares, in both files) in turn (default none)\n"
    "  --test-alone       with --test: never train on FILE's co-locations (default\n"
    "                     off: the other workload sets of FILE are trained on)\n"
    "  --predictors LIST  comma list of kace_lr,kace_rf,kace_mlp,xu_rf,ratio,mps\n"
    "                     (default all)\n"
    "  --trees N          random-forest trees (default 100)\n"
    "  --epochs N         MLP epochs (default 400)\n"
    "  --rounds N         mps boosting rounds (default 400)\n"
    "\n"
    "train: fit one predictor on every measured co-location and save it\n"
    "  --colocations FILE colocations.csv (required)\n"
    "  --kind K           kace_lr, kace_rf, kace_mlp, xu_rf, ratio or mps (default mps)\n"
    "  --out FILE         model file (required)\n"
    "  --seed N           seed of forests and MLP (default 0)\n"
    "\n"
    "predict: add predictions to a colocations.csv (its tput may be empty)\n"
    "  --model FILE       model from `colocate train` (required)\n"
    "  --colocations FILE the co-locations to predict (required)\n"
    "  --out FILE         output CSV (default stdout); the column is tput_pred,\n"
    "                     or tput_sum_pred for models of the throughput sum\n"
    "\n"
    "select: rank candidate co-runners of a target by predicted throughput sum\n"
    "  --model FILE       model (required)\n"
    "  --target T         target workload (required)\n"
    "  --candidates LIST  comma list; a+b co-locates several at once (required)\n"
    "  --shares A/B[/..]  MPS shares of target and co-runners (default 100/100...)\n"
    "  --gpu NAME         gpu column of the query (default the workload's)\n"
    "\n"
    "  -h, --help         this text\n"
    "\n"
    "Exit status: 0 ok, 1 bad input, 2 usage.\n";

#define CMD "colocate"

typedef struct {
    const char *sub, *workloads, *scaling, *colocations, *test, *out, *model, *kind, *target,
        *candidates, *shares, *predictors, *gpu, *transfer, *auto_kinds, *as, *jobs, *gpus, *cases;
    double train_frac;
    int seeds, unseen, test_alone, json, quiet, trees, epochs, rounds, unseen_pairs, place, max_per_gpu;
    unsigned long long seed;
} opts_t;

/* The flags that take a value. */
static const char *const value_flags[] = {"--workloads", "--scaling", "--colocations", "--test", "--out",
                                          "--model", "--kind", "--target", "--candidates", "--shares",
                                          "--predictors", "--gpu", "--train-frac", "--seeds", "--trees",
                                          "--epochs", "--rounds", "--seed", "--transfer", "--auto-kinds",
                                          "--as", "--jobs", "--gpus", "--max-per-gpu", "--cases", NULL};

static int parse_opts(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof *o);
    /* The library's defaults, which --help states. */
    ps_coloc_eval_params_t def = ps_coloc_eval_default_params();
    o->train_frac = def.train_frac;
    o->seeds = def.seeds;
    o->seed = def.seed;
    o->trees = def.model.trees;
    o->epochs = def.model.mlp_epochs;
    o->rounds = def.model.boost_rounds;
    o->max_per_gpu = 2;
    if (argc < 2)
        return cli_fail(CLI_USAGE, CMD, "missing subcommand (eval, train, predict, select)");
    o->sub = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val;
        const char **str = NULL;
        long v;
        if (strcmp(a, "--unseen") == 0) { o->unseen = 1; continue; }
        if (strcmp(a, "--test-alone") == 0) { o->test_alone = 1; continue; }
        if (strcmp(a, "--unseen-pairs") == 0) { o->unseen_pairs = 1; continue; }
        if (strcmp(a, "--place") == 0) { o->place = 1; continue; }
        int rc = cli_next_option(CMD, argc, argv, &i, value_flags, &o->json, &o->quiet, &val);
        if (rc != CLI_OK)
            return rc;
        if (!val)
            continue;
        if (strcmp(a, "--workloads") == 0) str = &o->workloads;
        else if (strcmp(a, "--scaling") == 0) str = &o->scaling;
        else if (strcmp(a, "--colocations") == 0) str = &o->colocations;
        else if (strcmp(a, "--test") == 0) str = &o->test;
        else if (strcmp(a, "--out") == 0) str = &o->out;
        else if (strcmp(a, "--model") == 0) str = &o->model;
        else if (strcmp(a, "--kind") == 0) str = &o->kind;
        else if (strcmp(a, "--target") == 0) str = &o->target;
        else if (strcmp(a, "--candidates") == 0) str = &o->candidates;
        else if (strcmp(a, "--shares") == 0) str = &o->shares;
        else if (strcmp(a, "--predictors") == 0) str = &o->predictors;
        else if (strcmp(a, "--gpu") == 0) str = &o->gpu;
        else if (strcmp(a, "--transfer") == 0) str = &o->transfer;
        else if (strcmp(a, "--auto-kinds") == 0) str = &o->auto_kinds;
        else if (strcmp(a, "--as") == 0) str = &o->as;
        else if (strcmp(a, "--jobs") == 0) str = &o->jobs;
        else if (strcmp(a, "--gpus") == 0) str = &o->gpus;
        else if (strcmp(a, "--cases") == 0) str = &o->cases;
        if (str) {
            *str = val;
            continue;
        }
        if (strcmp(a, "--train-frac") == 0) {
            char *e;
            o->train_frac = strtod(val, &e);
            if (e == val || *e || !(o->train_frac > 0 && o->train_frac < 1))
                return cli_fail(CLI_USAGE, CMD, "--train-frac: expected a number in (0,1), got '%s'", val);
        } else if (strcmp(a, "--seeds") == 0 || strcmp(a, "--trees") == 0 ||
                   strcmp(a, "--epochs") == 0 || strcmp(a, "--rounds") == 0) {
            if (cli_parse_long(val, 1, 1000000, &v))
                return cli_fail(CLI_USAGE, CMD, "%s: expected a positive integer, got '%s'", a, val);
            *(a[2] == 's' ? &o->seeds : a[2] == 't' ? &o->trees : a[2] == 'e' ? &o->epochs : &o->rounds) = (int)v;
        } else if (strcmp(a, "--max-per-gpu") == 0) {
            if (cli_parse_int(val, 1, 8, &o->max_per_gpu))
                return cli_fail(CLI_USAGE, CMD, "--max-per-gpu: expected an integer in 1..8, got '%s'", val);
        } else if (strcmp(a, "--seed") == 0) {
            char *e;
            errno = 0;
            o->seed = strtoull(val, &e, 10);
            if (e == val || *e || val[0] == '-' || errno == ERANGE)
                return cli_fail(CLI_USAGE, CMD, "--seed: expected a non-negative integer, got '%s'", val);
        } else {
            return cli_bad_option(CMD, a, NULL);
        }
    }
    return 0;
}

typedef struct {
    ps_workloads_t *w;
    ps_scaling_t *s;
    ps_colocations_t *c, *t;
} tables_t;

static void tables_free(tables_t *t)
{
    ps_workloads_free(t->w);
    ps_scaling_free(t->s);
    ps_colocations_free(t->c);
    ps_colocations_free(t->t);
}

static int load_tables(const opts_t *o, int need_c, tables_t *t)
{
    memset(t, 0, sizeof *t);
    if (!o->workloads)
        return cli_fail(CLI_USAGE, CMD, "%s: --workloads is required", o->sub);
    if (need_c && !o->colocations)
        return cli_fail(CLI_USAGE, CMD, "%s: --colocations is required", o->sub);
    if (ps_workloads_load(o->workloads, &t->w) ||
        (o->scaling && ps_scaling_load(o->scaling, &t->s)) ||
        (o->colocations && ps_colocations_load(o->colocations, &t->c)) ||
        ((o->test || o->transfer) && ps_colocations_load(o->test ? o->test : o->transfer, &t->t))) {
        tables_free(t);
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    }
    return 0;
}

static void progress(double done, double total, void *user)
{
    cli_progress(*(const int *)user, "colocate eval", done, total);
}

static void json_num(double v)
{
    if (isnan(v))
        fputs("null", stdout);
    else
        printf("%.6g", v);
}

/* A comma list of kind names into a bit mask; CLI_USAGE on an unknown one. */
static int parse_kinds(const char *list, unsigned *out)
{
    *out = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        ps_coloc_kind_t k;
        if (ps_coloc_kind_parse(tok, &k))
            return cli_fail(CLI_USAGE, CMD, "%s", ps_last_error());
        *out |= 1u << k;
    }
    return 0;
}

static void json_policies(const double *v)
{
    int first = 1;
    for (int q = 0; q < PS_POL_N; q++) {
        if (isnan(v[q]))
            continue;
        printf("%s\"%s\": ", first ? "" : ", ", ps_coloc_policy_name(q));
        json_num(v[q]);
        first = 0;
    }
}

static const char *eval_mode(const opts_t *o)
{
    return o->unseen ? "unseen" : o->unseen_pairs ? "unseen_pairs" : o->transfer ? "transfer" : o->test ? "test" : "split";
}

static void print_eval_json(const opts_t *o, const ps_coloc_eval_params_t *p, const ps_coloc_eval_result_t *r)
{
    printf("{\"runs\": %d, \"targets\": ", r->runs);
    json_num(r->targets);
    printf(", \"mode\": \"%s\", \"train_frac\": ", eval_mode(o));
    json_num(o->unseen || o->unseen_pairs || o->test || o->transfer ? NAN : o->train_frac);
    fputs(", \"predictors\": {", stdout);
    int first = 1;
    for (int k = 0; k < PS_COLOC_N_KINDS; k++) {
        if (!(p->kinds & (1u << k)))
            continue;
        printf("%s\"%s\": {\"of\": \"%s\", \"r2\": ", first ? "" : ", ", ps_coloc_kind_name(k),
               k == PS_COLOC_AUTO ? "chosen" : ps_coloc_kind_predicts_sum(k) ? "sum" : "workload");
        json_num(r->r2[k]);
        fputs(", \"rmse\": ", stdout);
        json_num(r->rmse[k]);
        fputs(", \"mape\": ", stdout);
        json_num(r->mape[k]);
        fputs(", \"time_mape\": ", stdout);
        json_num(r->time_mape[k]);
        fputs("}", stdout);
        first = 0;
    }
    fputs("}, \"policies\": {", stdout);
    json_policies(r->policy_mean);
    fputs("}, \"spread\": {", stdout);
    json_policies(r->policy_sd);
    fputs("}, \"per_k\": {", stdout);
    first = 1;
    for (int k = 2; k <= PS_COLOC_MAXK; k++) {
        if (isnan(r->targets_k[k]))
            continue;
        printf("%s\"%d\": {\"targets\": ", first ? "" : ", ", k);
        json_num(r->targets_k[k]);
        fputs(", \"policies\": {", stdout);
        json_policies(r->policy_k[k]);
        fputs("}}", stdout);
        first = 0;
    }
    fputs("}, \"auto_chosen\": {", stdout);
    first = 1;
    for (int k = 0; k < PS_COLOC_N_KINDS; k++)
        if (r->auto_chosen[k]) {
            printf("%s\"%s\": %d", first ? "" : ", ", ps_coloc_kind_name(k), r->auto_chosen[k]);
            first = 0;
        }
    fputs("}, \"dropped\": [", stdout);
    first = 1;
    for (int q = 0; q < PS_POL_N; q++)
        if (r->dropped & (1u << q)) {
            printf("%s\"%s\"", first ? "" : ", ", ps_coloc_policy_name(q));
            first = 0;
        }
    fputs("]}\n", stdout);
}

static void print_eval_text(const opts_t *o, const ps_coloc_eval_params_t *p, const ps_coloc_eval_result_t *r)
{
    static const char *const what[] = {"unseen models", "held-out workload pairs", "another table (transfer)",
                                       "held-out workload sets", "random splits"};
    const char *m = eval_mode(o);
    printf("%d runs, %.1f targets per run (%s)\n", r->runs, r->targets,
           what[!strcmp(m, "unseen") ? 0 : !strcmp(m, "unseen_pairs") ? 1 : !strcmp(m, "transfer") ? 2
                : !strcmp(m, "test") ? 3 : 4]);
    printf("%-10s %-9s %8s %10s %8s %8s\n", "predictor", "of", "R2", "RMSE", "MAPE%", "timeMAPE%");
    for (int k = 0; k < PS_COLOC_N_KINDS; k++)
        if ((p->kinds & (1u << k)) && !isnan(r->mape[k]))
            printf("%-10s %-9s %8.3f %10.3f %8.2f %8.2f\n", ps_coloc_kind_name(k),
                   k == PS_COLOC_AUTO ? "chosen" : ps_coloc_kind_predicts_sum(k) ? "sum" : "workload", r->r2[k],
                   r->rmse[k], r->mape[k], r->time_mape[k]);
    int nk = 0;
    for (int k = 2; k <= PS_COLOC_MAXK; k++)
        nk += !isnan(r->targets_k[k]);
    printf("\n%-10s %8s %8s", "policy", "mean", "sd");
    for (int k = 2; k <= PS_COLOC_MAXK && nk > 1; k++)
        if (!isnan(r->targets_k[k]))
            printf(" %7d-way", k);
    putchar('\n');
    for (int q = 0; q < PS_POL_N; q++) {
        if (isnan(r->policy_mean[q]))
            continue;
        printf("%-10s %8.3f %8.3f", ps_coloc_policy_name(q), r->policy_mean[q], r->policy_sd[q]);
        for (int k = 2; k <= PS_COLOC_MAXK && nk > 1; k++)
            if (!isnan(r->targets_k[k]))
                printf(" %11.3f", r->policy_k[k][q]);
        putchar('\n');
    }
    int any = 0;
    for (int k = 0; k < PS_COLOC_N_KINDS; k++)
        if (r->auto_chosen[k])
            printf("%s%s %d", any++ ? ", " : "\nauto chose: ", ps_coloc_kind_name(k), r->auto_chosen[k]);
    if (any)
        putchar('\n');
    any = 0;
    for (int q = 0; q < PS_POL_N; q++)
        if (r->dropped & (1u << q))
            printf("%s%s", any++ ? ", " : "dropped (no workload has their metrics): ", ps_coloc_policy_name(q));
    if (any)
        putchar('\n');
}

static int do_eval(const opts_t *o)
{
    if (!!o->unseen + !!o->unseen_pairs + !!o->test + !!o->transfer > 1)
        return cli_fail(CLI_USAGE, CMD, "eval: --unseen, --unseen-pairs, --test and --transfer exclude each other");
    if (o->test_alone && !o->test)
        return cli_fail(CLI_USAGE, CMD, "eval: --test-alone needs --test FILE");
    ps_coloc_eval_params_t p = ps_coloc_eval_default_params();
    if (o->predictors && parse_kinds(o->predictors, &p.kinds))
        return CLI_USAGE;
    if (o->auto_kinds && parse_kinds(o->auto_kinds, &p.auto_kinds))
        return CLI_USAGE;
    tables_t t;
    int rc = load_tables(o, 1, &t);
    if (rc)
        return rc;
    p.train_frac = o->train_frac;
    p.seeds = o->seeds;
    p.seed = o->seed;
    p.unseen = o->unseen;
    p.unseen_pairs = o->unseen_pairs;
    p.test = t.t;
    p.transfer = o->transfer != NULL;
    p.test_alone = o->test_alone;
    p.model.trees = o->trees;
    p.model.mlp_epochs = o->epochs;
    p.model.boost_rounds = o->rounds;
    p.progress = progress;
    p.user = (void *)&o->quiet;
    if (o->place) {
        rc = cmd_colocate_eval_place(o->cases, o->max_per_gpu, o->json, &p, t.w, t.s, t.c);
        cli_progress_end(o->quiet);
        tables_free(&t);
        return rc;
    }
    ps_coloc_eval_result_t r;
    int err = ps_coloc_eval(t.w, t.s, t.c, &p, &r);
    cli_progress_end(o->quiet);
    tables_free(&t);
    if (err)
        return cli_fail(CLI_BAD_INPUT, CMD, "eval: %s", ps_last_error());
    if (o->json)
        print_eval_json(o, &p, &r);
    else
        print_eval_text(o, &p, &r);
    return CLI_OK;
}

static int do_train(const opts_t *o)
{
    if (!o->out)
        return cli_fail(CLI_USAGE, CMD, "train: --out is required");
    ps_coloc_params_t p = ps_coloc_default_params();
    if (o->kind && ps_coloc_kind_parse(o->kind, &p.kind))
        return cli_fail(CLI_USAGE, CMD, "train: %s", ps_last_error());
    p.seed = o->seed;
    p.trees = o->trees;
    p.mlp_epochs = o->epochs;
    p.boost_rounds = o->rounds;
    const char *in[] = {o->workloads, o->scaling, o->colocations};
    int code = cli_check_out(CMD ": train", o->out, in, 3);
    if (code != CLI_OK)
        return code;
    tables_t t;
    int rc = load_tables(o, 1, &t);
    if (rc)
        return rc;
    ps_coloc_model_t *m = NULL;
    int err = ps_coloc_train(t.w, t.s, t.c, &p, &m);
    if (!err)
        err = ps_coloc_model_save(m, o->out);
    if (!err && ps_coloc_model_auto(m))
        fprintf(stderr, "pairsight: colocate: train: auto chose %s (cross-validation on the training co-locations)\n",
                ps_coloc_kind_name(ps_coloc_model_kind(m)));
    ps_coloc_model_free(m);
    tables_free(&t);
    if (err)
        return cli_fail(CLI_BAD_INPUT, CMD, "train: %s", ps_last_error());
    return CLI_OK;
}

/* The batch size in a workload id ("bert_batch8-train" -> 8), else 1. */
static double workload_batch(const char *name)
{
    const char *b = strstr(name, "_batch");
    long v = b ? strtol(b + 6, NULL, 10) : 0;
    return v > 0 ? (double)v : 1;
}

/* Warn once when the queries' GPU is not one the model was trained on. */
static void warn_gpu(const ps_coloc_model_t *m, const ps_colocations_t *q)
{
    const char *mg = ps_coloc_model_gpu(m);
    if (!*mg)
        return;
    for (size_t i = 0; i < q->n; i++) {
        const char *g = q->rows[i].gpu;
        if (!g || !*g)
            continue;
        size_t l = strlen(g);
        int found = 0;
        for (const char *p = mg; *p && !found;) {
            size_t pl = strcspn(p, ",");
            found = pl == l && strncmp(p, g, l) == 0;
            p += pl + (p[pl] == ',');
        }
        if (!found) {
            fprintf(stderr, "pairsight: colocate: warning: model trained on GPU %s, predicting for %s "
                            "(across GPUs the error grows; docs/colocate.md)\n", mg, g);
            return;
        }
    }
}

static int do_predict(const opts_t *o)
{
    if (!o->model)
        return cli_fail(CLI_USAGE, CMD, "predict: --model is required");
    const char *in[] = {o->model, o->workloads, o->scaling, o->colocations};
    int code = o->out ? cli_check_out(CMD ": predict", o->out, in, 4) : CLI_OK;
    if (code != CLI_OK)
        return code;
    tables_t t;
    int rc = load_tables(o, 1, &t);
    if (rc)
        return rc;
    ps_coloc_model_t *m = NULL;
    double *pred = calloc(t.c->n + 1, sizeof *pred);
    int as_time = o->as && strcmp(o->as, "time") == 0;
    if (o->as && !as_time && strcmp(o->as, "tput") != 0) {
        free(pred);
        tables_free(&t);
        return cli_fail(CLI_USAGE, CMD, "predict: --as: expected tput or time, got '%s'", o->as);
    }
    int err = pred ? ps_coloc_model_load(o->model, &m) : ps_error(PS_E_NOMEM, "out of memory");
    if (!err && as_time && ps_coloc_kind_predicts_sum(ps_coloc_model_kind(m)))
        err = ps_error(PS_E_ARG, "--as time needs a model of each workload's throughput, not %s (a sum)",
                       ps_coloc_kind_name(ps_coloc_model_kind(m)));
    if (!err)
        warn_gpu(m, t.c);
    if (!err)
        err = ps_coloc_predict(m, t.w, t.s, t.c, pred);
    ps_atomic_t *a = NULL;
    FILE *f = stdout;
    if (!err && o->out) {
        err = ps_atomic_open(o->out, &a);
        if (!err)
            f = ps_atomic_stream(a);
    }
    if (!err) {
        fprintf(f, "colocation,gpu,slot,workload,share_pct,tput,%s%s\n",
                ps_coloc_kind_predicts_sum(ps_coloc_model_kind(m)) ? "tput_sum_pred" : "tput_pred",
                as_time ? ",batch,iter_time_s_pred,alone_iter_time_s,slowdown_pred" : "");
        for (size_t i = 0; i < t.c->n; i++) {
            const ps_colocation_row_t *r = &t.c->rows[i];
            ps_csv_put_field(f, r->colocation);
            fputc(',', f);
            ps_csv_put_field(f, r->gpu);
            fprintf(f, ",%d,", r->slot);
            ps_csv_put_field(f, r->workload);
            fprintf(f, ",%d,", r->share_pct);
            if (!isnan(r->tput))
                fprintf(f, "%.17g", r->tput);
            fprintf(f, ",%.17g", pred[i]);
            if (as_time) {
                /* Iteration time = batch / throughput (batch from the id's
                 * _batch<n>, 1 without one); alone = at its share alone. */
                double b = workload_batch(r->workload), alone = ps_coloc_solo(t.w, t.s, r->gpu, r->workload,
                                                                               r->share_pct);
                fprintf(f, ",%g,%.9g,%.9g,%.9g", b, b / pred[i], b / alone, alone / pred[i]);
            }
            fputc('\n', f);
        }
        if (a)
            err = ps_atomic_commit(a);
        else if (fflush(stdout) || ferror(stdout))
            err = ps_error(PS_E_IO, "stdout: write failed");
    }
    ps_coloc_model_free(m);
    free(pred);
    tables_free(&t);
    if (err)
        return cli_fail(CLI_BAD_INPUT, CMD, "predict: %s", ps_last_error());
    return CLI_OK;
}

typedef struct {
    char *name;
    double sum;
    double tput[64];
    int k;
} cand_t;

static int cmp_cand(const void *a, const void *b)
{
    double x = ((const cand_t *)a)->sum, y = ((const cand_t *)b)->sum;
    return (x < y) - (x > y);
}

/* The most workloads of one candidate in a list like "a,b+c" (here 2), or
 * -1 when the list is empty or has an empty name ("a,,b", "a+", ","). */
static int check_candidates(const char *list)
{
    int most = 0, k = 0;
    const char *prev = list;
    for (const char *s = list;; s++) {
        if (*s == ',' || *s == '+' || !*s) {
            if (s == prev)
                return -1;
            k++;
            if (*s != '+') {
                most = k > most ? k : most;
                k = 0;
            }
            prev = s + 1;
        }
        if (!*s)
            return most;
    }
}

/* Copies into buf the first workload named in the candidate list that
 * workloads.csv lacks on gpu and returns 1, or returns 0 when all are there. */
static int first_unknown(const char *list, const char *gpu, const ps_workloads_t *w, char *buf, size_t bufsize)
{
    size_t n = strlen(list);
    for (size_t i = 0; i < n;) {
        size_t len = strcspn(list + i, ",+");
        int found = 0;
        for (size_t j = 0; j < w->n && !found; j++)
            found = strlen(w->rows[j].workload) == len && strncmp(w->rows[j].workload, list + i, len) == 0 &&
                    strcmp(w->rows[j].gpu, gpu) == 0;
        if (!found) {
            snprintf(buf, bufsize, "%.*s", (int)len, list + i);
            return 1;
        }
        i += len + 1;
    }
    return 0;
}

static int do_select(const opts_t *o)
{
    if (!o->model || !o->target || !o->candidates)
        return cli_fail(CLI_USAGE, CMD, "select: --model, --target and --candidates are required");
    int shares[64], ns = 0;
    if (o->shares) {
        const char *s = o->shares;
        while (*s) {
            if (ns == 64)
                return cli_fail(CLI_USAGE, CMD, "select: --shares: more than 64 shares");
            char *e;
            long v = strtol(s, &e, 10);
            if (e == s || v < 1 || v > 100 || (*e && *e != '/'))
                return cli_fail(CLI_USAGE, CMD, "select: --shares: expected A/B/.. in 1..100, got '%s'", o->shares);
            shares[ns++] = (int)v;
            s = *e ? e + 1 : e;
        }
    }
    int most = check_candidates(o->candidates);
    if (most < 0)
        return cli_fail(CLI_USAGE, CMD, "select: --candidates: expected a,b or a+b,c with no empty name, got '%s'",
                        o->candidates);
    if (most > 63)
        return cli_fail(CLI_USAGE, CMD, "select: --candidates: a candidate with %d co-runners, at most 63", most);
    if (ns > most + 1)
        return cli_fail(CLI_USAGE, CMD, "select: --shares: %d shares for at most %d workloads (the target and %d "
                        "co-runner%s)", ns, most + 1, most, most == 1 ? "" : "s");
    tables_t t;
    int rc = load_tables(o, 0, &t);
    if (rc)
        return rc;
    const char *gpu = NULL;
    for (size_t i = 0; i < t.w->n && !gpu; i++)
        if (strcmp(t.w->rows[i].workload, o->target) == 0 && (!o->gpu || strcmp(t.w->rows[i].gpu, o->gpu) == 0))
            gpu = t.w->rows[i].gpu;
    if (!gpu) {
        tables_free(&t);
        return cli_fail(CLI_BAD_INPUT, CMD, "select: target '%s'%s%s is not in %s", o->target,
                        o->gpu ? " on gpu " : "", o->gpu ? o->gpu : "", o->workloads);
    }
    char missing[512];
    if (first_unknown(o->candidates, gpu, t.w, missing, sizeof missing)) {
        rc = cli_fail(CLI_BAD_INPUT, CMD, "select: candidate '%s' (gpu %s) is not in %s", missing, gpu, o->workloads);
        tables_free(&t);
        return rc;
    }
    /* One query co-location per candidate: the target in slot 1, then the
     * candidate's workloads ("a+b" co-locates several). */
    ps_colocations_t *q = ps_colocations_new();
    char *list = strdup(o->candidates);
    cand_t *cand = calloc(strlen(o->candidates) + 1, sizeof *cand);
    int nc = 0, err = (!q || !list || !cand) ? ps_error(PS_E_NOMEM, "out of memory") : 0;
    for (char *tok = list ? strtok(list, ",") : NULL; tok && !err; tok = strtok(NULL, ",")) {
        cand_t *c = &cand[nc++];
        c->name = tok;
        /* Sized to the names: a fixed buffer would cut a long list and make
         * two candidates' ids (and so their co-locations) one. */
        size_t idlen = strlen(o->target) + strlen(tok) + 16;
        char *id = malloc(idlen), *buf = strdup(tok);
        if (!id || !buf) {
            free(id);
            free(buf);
            err = ps_error(PS_E_NOMEM, "out of memory");
            break;
        }
        snprintf(id, idlen, "select/%s+%s", o->target, tok);
        ps_colocation_row_t row = {.colocation = id, .gpu = gpu, .slot = 1, .workload = o->target,
                                   .share_pct = ns > 0 ? shares[0] : 100, .tput = NAN};
        err = ps_colocations_append(q, &row);
        int slot = 2;
        for (char *save = NULL, *w = strtok_r(buf, "+", &save); w && !err; w = strtok_r(NULL, "+", &save)) {
            if (slot > 64) {
                err = ps_error(PS_E_ARG, "--candidates: '%s': more than 63 co-runners", tok);
                break;
            }
            row.slot = slot;
            row.workload = w;
            row.share_pct = ns >= slot ? shares[slot - 1] : (ns > 0 ? shares[ns - 1] : 100);
            err = ps_colocations_append(q, &row);
            slot++;
        }
        free(id);
        free(buf);
        c->k = slot - 1;
    }
    ps_coloc_model_t *m = NULL;
    double *pred = NULL;
    if (!err)
        err = ps_coloc_model_load(o->model, &m);
    if (!err && !(pred = calloc(q->n + 1, sizeof *pred)))
        err = ps_error(PS_E_NOMEM, "out of memory");
    if (!err)
        err = ps_coloc_predict(m, t.w, t.s, q, pred);
    if (!err) {
        int sum_kind = ps_coloc_kind_predicts_sum(ps_coloc_model_kind(m));
        size_t row = 0;
        for (int i = 0; i < nc; i++) {
            cand[i].sum = sum_kind ? pred[row] : 0;
            for (int s = 0; s < cand[i].k; s++, row++) {
                cand[i].tput[s] = sum_kind ? NAN : pred[row];
                if (!sum_kind)
                    cand[i].sum += pred[row];
            }
        }
        qsort(cand, (size_t)nc, sizeof *cand, cmp_cand);
        if (o->json) {
            fputs("{\"target\": ", stdout);
            cli_put_json_string(o->target);
            printf(", \"model\": \"%s\", \"ranking\": [", ps_coloc_kind_name(ps_coloc_model_kind(m)));
            for (int i = 0; i < nc; i++) {
                printf("%s{\"candidate\": ", i ? ", " : "");
                cli_put_json_string(cand[i].name);
                printf(", \"tput_sum\": %.6g, \"tput\": [", cand[i].sum);
                for (int s = 0; s < cand[i].k; s++) {
                    printf("%s", s ? ", " : "");
                    json_num(cand[i].tput[s]);
                }
                fputs("]}", stdout);
            }
            fputs("]}\n", stdout);
        } else {
            printf("%-4s %-48s %12s  %s\n", "rank", "candidate", "tput_sum", "tput (target first)");
            for (int i = 0; i < nc; i++) {
                printf("%-4d %-48s %12.4g ", i + 1, cand[i].name, cand[i].sum);
                for (int s = 0; s < cand[i].k; s++)
                    printf(" %.4g", cand[i].tput[s]);
                putchar('\n');
            }
        }
    }
    ps_coloc_model_free(m);
    ps_colocations_free(q);
    free(pred);
    free(list);
    free(cand);
    tables_free(&t);
    if (err)
        return cli_fail(CLI_BAD_INPUT, CMD, "select: %s", ps_last_error());
    return CLI_OK;
}

int cmd_colocate(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_colocate_usage, stdout);
        return CLI_OK;
    }
    opts_t o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc;
    if (strcmp(o.sub, "eval") == 0)
        return do_eval(&o);
    if (strcmp(o.sub, "train") == 0)
        return do_train(&o);
    if (strcmp(o.sub, "predict") == 0)
        return do_predict(&o);
    if (strcmp(o.sub, "select") == 0)
        return do_select(&o);
    if (strcmp(o.sub, "place") == 0) {
        tables_t t;
        int rc2 = load_tables(&o, 0, &t);
        if (rc2)
            return rc2;
        rc2 = cmd_colocate_place(o.model, t.w, t.s, o.jobs, o.gpus, o.max_per_gpu, o.shares, o.json);
        tables_free(&t);
        return rc2;
    }
    return cli_fail(CLI_USAGE, CMD, "unknown subcommand '%s' (eval, train, predict, select, place)", o.sub);
}
