/* pairsight colocate select: rank candidate co-runners of a target by the
 * predicted throughput sum (docs/colocate.md). cmd_colocate.c parses the
 * options (a row of its subcommand table) and calls cmd_colocate_select. */
#include "cli/colocate.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "colocate"

/* The command's own error message, else "" and the library's last error. */
static char own_error[256];

static int own_fail(int code, const char *msg)
{
    snprintf(own_error, sizeof own_error, "%s", msg);
    return code;
}

typedef struct {
    char *name;
    double sum;
    double tput[64];
    int k;
} cand_t;

static int cmp_cand(const void *a, const void *b)
{
    /* Decreasing sum; a candidate without a finite prediction ranks last
     * (NaN compared false both ways and could rank first). */
    double x = ((const cand_t *)a)->sum, y = ((const cand_t *)b)->sum;
    if (!isfinite(x) || !isfinite(y))
        return isfinite(y) - isfinite(x);
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

/* The first candidate of a list like "a,b+c,a" that an earlier one repeats
 * exactly, into buf (1), or 0 when every candidate is listed once: the same
 * candidate twice is the same query, and a ranking that lists it twice is a
 * typing error. */
static int first_repeated(const char *list, char *buf, size_t bufsize)
{
    for (const char *a = list; *a; a += strcspn(a, ",") + (a[strcspn(a, ",")] == ',')) {
        size_t la = strcspn(a, ",");
        for (const char *b = list; b < a; b += strcspn(b, ",") + 1)
            if (strcspn(b, ",") == la && strncmp(a, b, la) == 0) {
                snprintf(buf, bufsize, "%.*s", (int)la, a);
                return 1;
            }
    }
    return 0;
}

/* Copies into buf the first workload named in the candidate list that
 * workloads.csv lacks on gpu and returns 1, or returns 0 when all are there. */
static int first_unknown(const char *list, const char *gpu, const ps_workloads_t *w, char *buf, size_t bufsize)
{
    size_t n = strlen(list);
    for (size_t i = 0; i < n;) {
        size_t len = strcspn(list + i, ",+");
        int found = 0;
        for (size_t j = 0; j < ps_workloads_rows(w) && !found; j++) {
            const char *wg = "", *wn = "";
            ps_workloads_key(w, j, &wg, &wn);
            found = strlen(wn) == len && strncmp(wn, list + i, len) == 0 && strcmp(wg, gpu) == 0;
        }
        if (!found) {
            snprintf(buf, bufsize, "%.*s", (int)len, list + i);
            return 1;
        }
        i += len + 1;
    }
    return 0;
}

/* The shares of --shares A/B/..: the target's, then each co-runner's in turn;
 * co-runners past the last take the last one, and all take 100 when n is 0. */
typedef struct {
    int pct[64];
    int n;
} shares_t;

/* The share of slot (1: the target). */
static int slot_share(const shares_t *sh, int slot)
{
    return sh->n >= slot ? sh->pct[slot - 1] : sh->n > 0 ? sh->pct[sh->n - 1] : 100;
}

/* --shares into sh, then the checks of --candidates against them. */
static int check_select_args(const cli_coloc_opts_t *o, shares_t *sh)
{
    sh->n = 0;
    for (const char *s = o->shares ? o->shares : ""; *s;) {
        if (sh->n == 64)
            return cli_fail(CLI_USAGE, CMD, "select: --shares: more than 64 shares");
        char *e;
        long v = strtol(s, &e, 10);
        if (e == s || v < 1 || v > 100 || (*e && *e != '/'))
            return cli_fail(CLI_USAGE, CMD, "select: --shares: expected A/B/.. in 1..100, got '%s'", o->shares);
        sh->pct[sh->n++] = (int)v;
        s = *e ? e + 1 : e;
    }
    int most = check_candidates(o->candidates);
    if (most < 0)
        return cli_fail(CLI_USAGE, CMD, "select: --candidates: expected a,b or a+b,c with no empty name, got '%s'",
                        o->candidates);
    if (most > 63)
        return cli_fail(CLI_USAGE, CMD, "select: --candidates: a candidate with %d co-runners, at most 63", most);
    char twice[256];
    if (first_repeated(o->candidates, twice, sizeof twice))
        return cli_fail(CLI_USAGE, CMD, "select: --candidates: '%s' is listed twice: give each candidate once", twice);
    if (sh->n > most + 1)
        return cli_fail(CLI_USAGE, CMD,
                        "select: --shares: %d shares for at most %d workloads (the target and %d "
                        "co-runner%s)",
                        sh->n, most + 1, most, most == 1 ? "" : "s");
    return CLI_OK;
}

/* "; did you mean 'alpha_batch2-inf'?" for a workload name not in w, or "". */
static const char *near_workload(const ps_workloads_t *w, const char *name, char *buf, size_t n)
{
    size_t nw = ps_workloads_rows(w);
    const char **names = malloc((nw ? nw : 1) * sizeof *names);
    const char *near = NULL;
    for (size_t i = 0; names && i < nw; i++)
        ps_workloads_key(w, i, NULL, &names[i]);
    if (names)
        near = cli_nearest(name, names, nw);
    snprintf(buf, n, "%s%s%s", near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    free(names);
    return buf;
}

/* The gpu of the target in workloads.csv (on --gpu when given), with every
 * candidate there too; NULL after a message. */
static const char *select_gpu(const cli_coloc_opts_t *o, const ps_workloads_t *w)
{
    const char *gpu = NULL, *wg = "", *wn = "";
    size_t nw = ps_workloads_rows(w);
    for (size_t i = 0; i < nw && !gpu; i++)
        if (ps_workloads_key(w, i, &wg, &wn) == PS_OK && strcmp(wn, o->target) == 0 &&
            (!o->gpu || strcmp(ps_gpu_canonical(wg), ps_gpu_canonical(o->gpu)) == 0))
            gpu = wg;
    char near[300];
    if (!gpu) {
        cli_fail(CLI_BAD_INPUT, CMD, "select: target '%s'%s%s is not in %s%s", o->target, o->gpu ? " on gpu " : "",
                 o->gpu ? o->gpu : "", o->workloads, near_workload(w, o->target, near, sizeof near));
        return NULL;
    }
    for (size_t i = 0; i < nw && !o->gpu; i++) /* which GPU is asked, not guessed */
        if (ps_workloads_key(w, i, &wg, &wn) == PS_OK && strcmp(wn, o->target) == 0 && strcmp(wg, gpu) != 0) {
            cli_fail(CLI_BAD_INPUT, CMD, "select: target '%s' has rows on several GPUs in %s (%s, %s): give --gpu",
                     o->target, o->workloads, gpu, wg);
            return NULL;
        }
    char missing[512];
    if (first_unknown(o->candidates, gpu, w, missing, sizeof missing)) {
        cli_fail(CLI_BAD_INPUT, CMD, "select: candidate '%s' (gpu %s) is not in %s%s", missing, gpu, o->workloads,
                 near_workload(w, missing, near, sizeof near));
        return NULL;
    }
    return gpu;
}

/* One query co-location of candidate tok (cut from list) in q: the target in
 * slot 1, then its workloads ("a+b" co-locates several), at their shares. */
static int add_candidate(const cli_coloc_opts_t *o, const char *gpu, const shares_t *sh, char *tok, ps_colocations_t *q,
                         cand_t *c)
{
    c->name = tok;
    /* Sized to the names: a fixed buffer would cut a long list and make two
     * candidates' ids (and so their co-locations) one. */
    size_t idlen = strlen(o->target) + strlen(tok) + 16;
    char *id = malloc(idlen), *buf = strdup(tok);
    int err = (!id || !buf) ? own_fail(PS_E_NOMEM, "out of memory") : 0;
    if (!err) {
        snprintf(id, idlen, "select/%s+%s", o->target, tok);
        ps_colocation_row_t row = {.colocation = id,
                                   .gpu = gpu,
                                   .slot = 1,
                                   .workload = o->target,
                                   .share_pct = slot_share(sh, 1),
                                   .tput = NAN};
        err = ps_colocations_append(q, &row);
        int slot = 2;
        for (char *save = NULL, *w = strtok_r(buf, "+", &save); w && !err; w = strtok_r(NULL, "+", &save)) {
            if (slot > 64) {
                char m[200];
                snprintf(m, sizeof m, "--candidates: '%s': more than 63 co-runners", tok);
                err = own_fail(PS_E_ARG, m);
                break;
            }
            row.slot = slot;
            row.workload = w;
            row.share_pct = slot_share(sh, slot);
            err = ps_colocations_append(q, &row);
            slot++;
        }
        c->k = slot - 1;
    }
    free(id);
    free(buf);
    return err;
}

/* Each candidate's predicted throughputs and sum from pred (q's rows in
 * candidate order), then the ranking: decreasing sum. */
static void rank_candidates(const ps_coloc_model_t *m, const double *pred, cand_t *cand, int nc)
{
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
}

static void print_ranking(const cli_coloc_opts_t *o, const ps_coloc_model_t *m, const cand_t *cand, int nc)
{
    if (!o->json) {
        printf("%-4s %-48s %12s  %s\n", "rank", "candidate", "tput_sum", "tput (target first)");
        for (int i = 0; i < nc; i++) {
            printf("%-4d %-48s %12.4g ", i + 1, cand[i].name, cand[i].sum);
            for (int s = 0; s < cand[i].k; s++)
                printf(" %.4g", cand[i].tput[s]);
            putchar('\n');
        }
        return;
    }
    cJSON *j = cli_json_new("colocate-select", 1);
    cJSON_AddStringToObject(j, "target", o->target);
    cJSON_AddStringToObject(j, "model", ps_coloc_kind_name(ps_coloc_model_kind(m)));
    cJSON *rank = cJSON_AddArrayToObject(j, "ranking");
    for (int i = 0; i < nc; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "candidate", cand[i].name);
        cJSON_AddNumberToObject(e, "tput_sum", cand[i].sum);
        if (!isfinite(cand[i].sum))
            cJSON_AddStringToObject(e, "reason", "the model predicts no finite throughput");
        cJSON *tp = cJSON_AddArrayToObject(e, "tput");
        for (int s = 0; s < cand[i].k; s++)
            cJSON_AddItemToArray(tp, cJSON_CreateNumber(cand[i].tput[s]));
        cJSON_AddItemToArray(rank, e);
    }
    cli_json_print(j, stdout);
}

int cmd_colocate_select(const cli_coloc_opts_t *o)
{
    own_error[0] = '\0';
    shares_t sh;
    int rc = check_select_args(o, &sh);
    if (rc)
        return rc;
    ps_workloads_t *w = NULL;
    ps_scaling_t *sc = NULL;
    if (ps_workloads_load(o->workloads, &w) || (o->scaling && ps_scaling_load(o->scaling, &sc))) {
        ps_workloads_free(w);
        return cli_fail(CLI_BAD_INPUT, CMD, "%s", ps_last_error());
    }
    const char *gpu = select_gpu(o, w);
    if (!gpu) {
        ps_workloads_free(w);
        ps_scaling_free(sc);
        return CLI_BAD_INPUT;
    }
    ps_colocations_t *q = ps_colocations_new();
    char *list = strdup(o->candidates);
    cand_t *cand = calloc(strlen(o->candidates) + 1, sizeof *cand);
    int nc = 0, err = (!q || !list || !cand) ? own_fail(PS_E_NOMEM, "out of memory") : 0;
    for (char *tok = list ? strtok(list, ",") : NULL; tok && !err; tok = strtok(NULL, ","))
        err = add_candidate(o, gpu, &sh, tok, q, &cand[nc++]);
    ps_coloc_model_t *m = NULL;
    double *pred = NULL;
    if (!err)
        err = ps_coloc_model_load(o->model, &m);
    if (!err && !(pred = calloc(ps_colocations_rows(q) + 1, sizeof *pred)))
        err = own_fail(PS_E_NOMEM, "out of memory");
    if (!err)
        cli_coloc_warn_queries(m, q);
    if (!err)
        err = ps_coloc_predict(m, w, sc, q, pred);
    if (!err) {
        rank_candidates(m, pred, cand, nc);
        print_ranking(o, m, cand, nc);
    }
    ps_coloc_model_free(m);
    ps_colocations_free(q);
    free(pred);
    free(list);
    free(cand);
    ps_workloads_free(w);
    ps_scaling_free(sc);
    if (err)
        return cli_fail(CLI_BAD_INPUT, CMD, "select: %s", *own_error ? own_error : ps_last_error());
    return CLI_OK;
}
