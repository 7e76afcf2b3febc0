/*
 * predict_one: the predicted latency of one candidate co-execution.
 *
 *     predict_one MODEL.psm OPS.csv [HP_TPCS LP_TPCS]
 *
 * Predicts 16 operators of resnet50 (batch 8, from operator 0) on HP_TPCS
 * TPCs (default 32) beside 16 operators of bert-base (batch 8, from
 * operator 40) on LP_TPCS (default 22), on the model's GPU, and prints both
 * latencies and slowdowns. OPS.csv must profile both at those TPCs.
 */
#include <pairsight.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 5) {
        fprintf(stderr, "usage: %s MODEL.psm OPS.csv [HP_TPCS LP_TPCS]\n", argv[0]);
        return 2;
    }
    int hp_tpcs = argc == 5 ? atoi(argv[3]) : 32, lp_tpcs = argc == 5 ? atoi(argv[4]) : 22;
    ps_model_t *model = NULL;
    ps_ops_t *ops = NULL;
    ps_model_info_t info;
    int rc = 1;
    if (ps_model_load(argv[1], &model) != 0 || ps_ops_load(argv[2], &ops) != 0 || ps_model_info(model, &info) != 0) {
        fprintf(stderr, "predict_one: %s\n", ps_last_error());
        goto done;
    }
    ps_query_t q = {.gpu = info.gpu,
                    .hp_model = "resnet50",
                    .hp_batch = 8,
                    .hp_start = 0,
                    .hp_len = 16,
                    .lp_model = "bert-base",
                    .lp_batch = 8,
                    .lp_start = 40,
                    .lp_len = 16,
                    .hp_tpcs = hp_tpcs,
                    .lp_tpcs = lp_tpcs};
    double hp_ns, lp_ns, hp_solo, lp_solo;
    if (ps_model_predict_compose(model, ops, &q, 1, PS_COMPOSE_OVERLAP, &hp_ns, &lp_ns, &hp_solo, &lp_solo) != 0) {
        fprintf(stderr, "predict_one: %s\n", ps_last_error());
        goto done;
    }
    printf("pairsight %s, model for %s\n", ps_version(), info.gpu);
    printf("HP resnet50  [0, 16) on %d TPCs: %.0f ns (slowdown %.3f)\n", hp_tpcs, hp_ns, hp_ns / hp_solo);
    printf("LP bert-base [40, 56) on %d TPCs: %.0f ns (slowdown %.3f)\n", lp_tpcs, lp_ns, lp_ns / lp_solo);
    rc = 0;
done:
    ps_ops_free(ops);
    ps_model_free(model);
    return rc;
}
