/* pairsight colocate select: rank candidate co-runners of a target by the
 * predicted throughput sum (docs/colocate.md). cmd_colocate.c parses the
 * options (a row of its subcommand table) and calls cmd_colocate_select;
 * the library checks them, looks the workloads up, predicts and ranks
 * (ps_coloc_select, as the colocate_select operation), and this file prints
 * the ranking. */
#include "cli/colocate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "colocate"

/* The warnings of a query the model was not trained for: another GPU, or
 * co-locations of another k. */
static void warn_untrained(const ps_coloc_model_t *m, const ps_coloc_selection_t *s)
{
    if (s->n && !cli_coloc_model_knows_gpu(m, s->gpu))
        fprintf(stderr,
                "pairsight: colocate: warning: model trained on GPU %s, predicting for %s "
                "(across GPUs the error grows; docs/colocate.md)\n",
                ps_coloc_model_gpu(m), s->gpu);
    unsigned ks = 0;
    for (int i = 0; i < s->n; i++)
        ks |= 1u << (s->ranking[i].k < 31 ? s->ranking[i].k : 31);
    cli_coloc_warn_ks(m, ks, "predicting");
}

static void print_text(const ps_coloc_selection_t *s)
{
    printf("%-4s %-48s %12s  %s\n", "rank", "candidate", "tput_sum", "tput (target first)");
    for (int i = 0; i < s->n; i++) {
        const ps_coloc_choice_t *c = &s->ranking[i];
        printf("%-4d %-48s %12.4g ", i + 1, c->candidate, c->sum);
        for (int k = 0; k < c->k; k++)
            printf(" %.4g", c->tput[k]);
        putchar('\n');
    }
}

int cmd_colocate_select(const cli_coloc_opts_t *o)
{
    ps_workloads_t *w = NULL;
    ps_scaling_t *sc = NULL;
    if (ps_workloads_load(o->workloads, &w) || (o->scaling && ps_scaling_load(o->scaling, &sc))) {
        ps_workloads_free(w);
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    }
    ps_coloc_select_params_t p = {.target = o->target,
                                  .candidates = o->candidates,
                                  .shares = o->shares,
                                  .gpu = o->gpu,
                                  .workloads_name = o->workloads,
                                  .flag = "--"};
    ps_coloc_selection_t s = {0};
    ps_coloc_model_t *m = NULL;
    char *json = NULL;
    int code = CLI_OK, rc = ps_coloc_model_load(o->model, &m);
    if (rc != PS_OK)
        code = cli_fail(CLI_BAD_INPUT, CMD, "select: %s", ps_last_error());
    else if ((rc = ps_coloc_select(m, w, sc, &p, &s)) != PS_OK)
        code = cli_fail(rc == PS_E_ARG ? CLI_USAGE : CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    else
        warn_untrained(m, &s);
    if (code == CLI_OK && !o->json)
        print_text(&s);
    else if (code == CLI_OK && (rc = ps_coloc_selection_json(m, o->target, &s, &json)) != PS_OK)
        code = cli_fail(CLI_BAD_INPUT, CMD, "select: %s", ps_last_error());
    else if (code == CLI_OK && (fputs(json, stdout) == EOF || putchar('\n') == EOF || fflush(stdout) != 0))
        code = cli_fail(CLI_BAD_INPUT, CMD, "select: writing standard output failed");
    ps_free(json);
    ps_coloc_selection_free(&s);
    ps_coloc_model_free(m);
    ps_workloads_free(w);
    ps_scaling_free(sc);
    return code;
}
