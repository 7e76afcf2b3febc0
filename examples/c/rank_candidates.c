/*
 * rank_candidates: which co-runner slows a high-priority task least.
 *
 *     rank_candidates MODEL.psm OPS.csv HP_TPCS LP_TPCS HP_MODEL:BATCH CANDIDATE:BATCH...
 *
 * The HP task is the first 16 operators of HP_MODEL; each candidate runs
 * its first 16 operators beside it on the other LP_TPCS TPCs. All candidates
 * are predicted in one call (the batch is spread over OpenMP threads) and
 * printed from the smallest HP slowdown to the largest, with the
 * candidate's own slowdown.
 */
#include <pairsight.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    double hp_delta, lp_delta;
} ranked_t;

static int by_hp_delta(const void *a, const void *b)
{
    double x = ((const ranked_t *)a)->hp_delta, y = ((const ranked_t *)b)->hp_delta;
    return (x > y) - (x < y);
}

/* "model:batch" -> model (cut in place) and batch. */
static int split_spec(char *spec, int *batch)
{
    char *colon = strrchr(spec, ':');
    if (!colon)
        return -1;
    *colon = '\0';
    *batch = atoi(colon + 1);
    return *batch > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: %s MODEL.psm OPS.csv HP_TPCS LP_TPCS HP_MODEL:BATCH CANDIDATE:BATCH...\n", argv[0]);
        return 2;
    }
    int hp_tpcs = atoi(argv[3]), lp_tpcs = atoi(argv[4]), hp_batch, n = argc - 6;
    if (split_spec(argv[5], &hp_batch) != 0) {
        fprintf(stderr, "rank_candidates: '%s' is not MODEL:BATCH\n", argv[5]);
        return 2;
    }
    ps_model_t *model = NULL;
    ps_ops_t *ops = NULL;
    ps_model_info_t info;
    ps_query_t *q = calloc((size_t)n, sizeof *q);
    double *out = calloc(4 * (size_t)n, sizeof *out);
    ranked_t *r = calloc((size_t)n, sizeof *r);
    int rc = 1;
    if (!q || !out || !r) {
        fprintf(stderr, "rank_candidates: out of memory\n");
        goto done;
    }
    if (ps_model_load(argv[1], &model) != 0 || ps_ops_load(argv[2], &ops) != 0 || ps_model_info(model, &info) != 0) {
        fprintf(stderr, "rank_candidates: %s\n", ps_last_error());
        goto done;
    }
    for (int i = 0; i < n; i++) {
        int batch;
        if (split_spec(argv[6 + i], &batch) != 0) {
            fprintf(stderr, "rank_candidates: '%s' is not MODEL:BATCH\n", argv[6 + i]);
            goto done;
        }
        q[i] = (ps_query_t){.gpu = info.gpu,
                            .hp_model = argv[5],
                            .hp_batch = hp_batch,
                            .hp_start = 0,
                            .hp_len = 16,
                            .lp_model = argv[6 + i],
                            .lp_batch = batch,
                            .lp_start = 0,
                            .lp_len = 16,
                            .hp_tpcs = hp_tpcs,
                            .lp_tpcs = lp_tpcs};
    }
    double *hp = out, *lp = out + n, *hs = out + 2 * n, *ls = out + 3 * n;
    if (ps_model_predict_compose(model, ops, q, (size_t)n, PS_COMPOSE_OVERLAP, hp, lp, hs, ls) != 0) {
        fprintf(stderr, "rank_candidates: %s\n", ps_last_error());
        goto done;
    }
    for (int i = 0; i < n; i++)
        r[i] = (ranked_t){argv[6 + i], hp[i] / hs[i], lp[i] / ls[i]};
    qsort(r, (size_t)n, sizeof *r, by_hp_delta);
    printf("rank  co-runner        HP slowdown  co-runner slowdown\n");
    for (int i = 0; i < n; i++)
        printf("%4d  %-16s %11.3f  %18.3f\n", i + 1, r[i].name, r[i].hp_delta, r[i].lp_delta);
    rc = 0;
done:
    free(q);
    free(out);
    free(r);
    ps_ops_free(ops);
    ps_model_free(model);
    return rc;
}
