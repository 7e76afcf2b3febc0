/* pairsight predict: co-execution latencies of candidate segment pairs. */
#include "cli/cli.h"

#include "common/common.h"
#include "profile/csv.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_predict_usage[] =
    "usage: pairsight predict --model model.psm --ops ops.csv --queries q.csv [options]\n"
    "\n"
    "Predict the HP and LP latency of every candidate in q.csv: the key columns\n"
    "of coexec.csv (gpu, hp_model, hp_batch, hp_start, hp_len, lp_model,\n"
    "lp_batch, lp_start, lp_len, hp_tpcs, lp_tpcs; gpu may be left out and is\n"
    "then the model's). The output repeats every input column and adds\n"
    "hp_ns_pred, lp_ns_pred, hp_delta_pred and lp_delta_pred.\n"
    "\n"
    "options:\n"
    "  --model FILE     trained model (required)\n"
    "  --ops FILE       standalone operator profile (required)\n"
    "  --queries FILE   candidates (required)\n"
    "  --out FILE       predictions CSV (default: standard output)\n"
    "  --compose NAME   window composition for segments longer than the window:\n"
    "                   overlap (time-aligned) or index (published) (default overlap)\n"
    "  --json           print a summary (rows, seconds, microseconds per query) as JSON\n"
    "                   on standard output; needs --out (default off)\n"
    "  -q               no progress on stderr (default: progress on a terminal)\n";

static void write_predictions(FILE *o, const cli_queries_t *f, const double *hp, const double *lp, const double *hs,
                              const double *ls)
{
    for (int c = 0; c < f->ncol; c++) {
        cli_put_csv_field(o, f->header[c]);
        fputc(',', o);
    }
    fputs("hp_ns_pred,lp_ns_pred,hp_delta_pred,lp_delta_pred\n", o);
    for (size_t i = 0; i < f->n; i++) {
        for (int c = 0; c < f->ncol; c++) {
            cli_put_csv_field(o, f->cells[i * (size_t)f->ncol + (size_t)c]);
            fputc(',', o);
        }
        fprintf(o, "%.17g,%.17g,%.17g,%.17g\n", hp[i], lp[i], hp[i] / hs[i], lp[i] / ls[i]);
    }
}

int cmd_predict(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cmd_predict_usage, stdout);
        return CLI_OK;
    }
    const char *model_path = NULL, *ops_path = NULL, *q_path = NULL, *out = NULL;
    int json = 0, quiet = 0;
    ps_compose_t method = PS_COMPOSE_OVERLAP;
    static const char *const value_flags[] = {"--model", "--ops", "--queries", "--out", "--compose", NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int rc = cli_next_option("predict", argc, argv, &i, value_flags, &json, &quiet, &v);
        if (rc != CLI_OK)
            return rc;
        if (!v)
            continue;
        if (strcmp(a, "--model") == 0)
            model_path = v;
        else if (strcmp(a, "--ops") == 0)
            ops_path = v;
        else if (strcmp(a, "--queries") == 0)
            q_path = v;
        else if (strcmp(a, "--out") == 0)
            out = v;
        else if (strcmp(a, "--compose") == 0 && strcmp(v, "overlap") == 0)
            method = PS_COMPOSE_OVERLAP;
        else if (strcmp(a, "--compose") == 0 && strcmp(v, "index") == 0)
            method = PS_COMPOSE_INDEX;
        else if (strcmp(a, "--compose") == 0)
            return cli_fail(CLI_USAGE, "predict", "--compose: '%s' is neither overlap nor index", v);
        else
            return cli_bad_option("predict", a, NULL);
    }
    if (!model_path || !ops_path || !q_path)
        return cli_fail(CLI_USAGE, "predict", "--model, --ops and --queries are required (see --help)");
    if (json && !out)
        return cli_fail(CLI_USAGE, "predict", "--json prints a summary and needs --out for the predictions");
    if (out) {
        const char *inputs[] = {model_path, ops_path, q_path};
        int out_code = cli_check_out("predict", out, inputs, 3);
        if (out_code != CLI_OK)
            return out_code;
    }

    ps_model_t *m = NULL;
    ps_ops_t *ops = NULL;
    cli_queries_t f;
    memset(&f, 0, sizeof f);
    double *buf = NULL;
    int code = CLI_BAD_INPUT;
    ps_model_info_t info;
    if (ps_model_load(model_path, &m) != 0 || ps_ops_load(ops_path, &ops) != 0 || ps_model_info(m, &info) != 0 ||
        cli_queries_read(q_path, info.gpu, &f) != 0) {
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
                cli_fail(CLI_BAD_INPUT, "predict", "%s:%zu: %s", q_path, f.line[i], ps_last_error());
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
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "out", out);
        cJSON_AddNumberToObject(o, "rows", (double)f.n);
        cJSON_AddStringToObject(o, "compose", method == PS_COMPOSE_INDEX ? "index" : "overlap");
        cJSON_AddNumberToObject(o, "seconds", secs);
        cJSON_AddNumberToObject(o, "us_per_query", f.n ? 1e6 * secs / (double)f.n : 0);
        char *text = cJSON_Print(o);
        if (text)
            puts(text);
        cJSON_free(text);
        cJSON_Delete(o);
    }
    code = CLI_OK;
done:
    free(buf);
    cli_queries_free(&f);
    ps_ops_free(ops);
    ps_model_free(m);
    return code;
}
