/* pairsight predict: co-execution latencies of candidate segment pairs. */
#include "cli/cli.h"

#include "common/common.h"
#include "profile/queries.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_field(FILE *o, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, o);
        return;
    }
    fputc('"', o);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', o);
        fputc(*s, o);
    }
    fputc('"', o);
}

static void write_predictions(FILE *o, const queries_t *f, const double *hp, const double *lp, const double *hs,
                              const double *ls)
{
    for (int c = 0; c < f->ncol; c++) {
        put_field(o, f->header[c]);
        fputc(',', o);
    }
    fputs("hp_ns_pred,lp_ns_pred,hp_delta_pred,lp_delta_pred\n", o);
    for (size_t i = 0; i < f->n; i++) {
        for (int c = 0; c < f->ncol; c++) {
            put_field(o, f->cells[i * (size_t)f->ncol + (size_t)c]);
            fputc(',', o);
        }
        fprintf(o, "%.17g,%.17g,%.17g,%.17g\n", hp[i], lp[i], hp[i] / hs[i], lp[i] / ls[i]);
    }
}

static const char *const examples[] = {
    "pairsight predict --model out/model.psm --ops out/ops.csv --queries out/coexec.csv --out out/pred.csv",
    "head -5 out/coexec.csv | pairsight predict --model=out/model.psm --ops=out/ops.csv --queries -",
    NULL};

int cmd_predict(int argc, char **argv)
{
    const char *model_path = NULL, *ops_path = NULL, *q_path = NULL, *out = NULL;
    int json = 0, quiet = 0, compose = PS_COMPOSE_OVERLAP;
    const char *compose_names[PS_COMPOSE_COUNT + 1] = {NULL};
    for (int k = 0; k < PS_COMPOSE_COUNT; k++)
        compose_names[k] = ps_compose_name((ps_compose_t)k);
    cli_opt_t opts[] = {
        {"--model", CLI_STR, &model_path, "FILE", "trained model", .flags = CLI_REQ | CLI_IN},
        {"--ops", CLI_STR, &ops_path, "FILE", "standalone operator profile", .flags = CLI_REQ | CLI_IN},
        {"--queries", CLI_STR, &q_path, "FILE", "candidates", .flags = CLI_REQ | CLI_IN},
        {"--out", CLI_STR, &out, "FILE", "predictions CSV", .def = "standard output", .flags = CLI_OUT},
        {"--compose", CLI_ENUM, &compose, "NAME",
         "window composition for segments longer than the window: overlap (time-aligned) or index (published)",
         .choices = compose_names},
        CLI_OPT_JSON(&json, "print a summary (rows, seconds, microseconds per query) as JSON on standard output; "
                            "needs --out FILE"),
        CLI_OPT_QUIET(&quiet),
        {NULL}};
    cli_spec_t spec = {
        .cmd = "predict",
        .synopsis = "--model FILE --ops FILE --queries FILE [options]",
        .about = "Predict the HP and LP latency of every candidate in the queries file: the key\n"
                 "columns of coexec.csv (gpu, hp_model, hp_batch, hp_start, hp_len, lp_model,\n"
                 "lp_batch, lp_start, lp_len, hp_tpcs, lp_tpcs; gpu may be left out and is\n"
                 "then the model's; other columns are kept). The output repeats every input\n"
                 "column and adds hp_ns_pred, lp_ns_pred, hp_delta_pred and lp_delta_pred.\n",
        .opts = opts,
        .examples = examples,
        .exit_status = "0 predicted, 1 bad input (the message names the file and line), 2 usage error.",
        .max_pos = 0};
    int code;
    if (cli_parse(&spec, argc, argv, NULL, &code))
        return code;
    ps_compose_t method = (ps_compose_t)compose;
    if (out && strcmp(cli_user_path(out), "-") == 0 && !json)
        out = NULL; /* standard output, written directly */
    if (json && (!out || strcmp(cli_user_path(out), "-") == 0))
        return cli_fail(CLI_USAGE, "predict", "--json prints a summary on standard output and needs --out FILE for "
                                              "the predictions");
    if (out) {
        const char *inputs[] = {model_path, ops_path, q_path};
        int out_code = cli_check_out("predict", out, inputs, 3);
        if (out_code != CLI_OK)
            return out_code;
    }

    ps_model_t *m = NULL;
    ps_ops_t *ops = NULL;
    queries_t f;
    memset(&f, 0, sizeof f);
    double *buf = NULL;
    code = CLI_BAD_INPUT;
    ps_model_info_t info;
    if (ps_model_load(model_path, &m) != 0 || ps_ops_load(ops_path, &ops) != 0 || ps_model_info(m, &info) != 0 ||
        queries_load(q_path, info.gpu, &f) != 0) {
        cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
        goto done;
    }
    buf = ps_malloc((f.n ? f.n : 1) * 4 * sizeof *buf);
    if (!buf) {
        cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
        goto done;
    }
    double *hp = buf, *lp = buf + f.n, *hs = buf + 2 * f.n, *ls = buf + 3 * f.n;
    double t0 = ps_now();
    if (ps_model_predict_ex(m, ops, f.q, f.n, method, hp, lp, hs, ls) != 0) {
        /* Name the line of the first query that cannot be predicted. */
        for (size_t i = 0; i < f.n; i++)
            if (ps_model_check_query(m, ops, &f.q[i]) != 0) {
                cli_fail(CLI_BAD_INPUT, "predict", "%s:%zu: %s", cli_user_path(q_path), f.line[i], ps_last_error());
                goto done;
            }
        cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
        goto done;
    }
    double secs = ps_now() - t0;
    cli_progress(quiet, "predicted", (double)f.n, (double)f.n);
    cli_progress_end(quiet);
    if (out) {
        ps_atomic_t *a = NULL;
        if (ps_atomic_open(out, &a) != 0) {
            cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
            goto done;
        }
        write_predictions(ps_atomic_stream(a), &f, hp, lp, hs, ls);
        if (ps_atomic_commit(a) != 0) {
            cli_fail(CLI_BAD_INPUT, "predict", "%s", ps_last_error());
            goto done;
        }
    } else {
        write_predictions(stdout, &f, hp, lp, hs, ls);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            cli_fail(CLI_BAD_INPUT, "predict", "writing standard output failed");
            goto done;
        }
    }
    if (json) {
        cJSON *o = cli_json_new("predict", 1);
        cJSON_AddStringToObject(o, "out", cli_user_path(out));
        cJSON_AddNumberToObject(o, "rows", (double)f.n);
        cJSON_AddStringToObject(o, "compose", ps_compose_name(method));
        cJSON_AddNumberToObject(o, "seconds", secs);
        cJSON_AddNumberToObject(o, "us_per_query", f.n ? 1e6 * secs / (double)f.n : 0);
        cli_json_print(o, stdout);
    }
    code = CLI_OK;
done:
    free(buf);
    queries_free(&f);
    ps_ops_free(ops);
    ps_model_free(m);
    return code;
}
