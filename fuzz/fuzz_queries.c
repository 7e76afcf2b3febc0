/* libFuzzer target: the queries reader of `pairsight predict`
 * (psi_queries_read), and, where PS_FUZZ_MODEL and PS_FUZZ_OPS name a model and
 * its ops.csv, the prediction of every query it accepts. A refused file
 * leaves nothing and names file:line; an accepted one gives queries whose
 * strings are set; prediction either succeeds or refuses with a message. */
#include "common/common.h"
#include "profile/queries.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static ps_model_t *model;
static ps_ops_t *ops;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *m = getenv("PS_FUZZ_MODEL"), *o = getenv("PS_FUZZ_OPS");
    if (m && o && (ps_model_load(m, &model) != PS_OK || ps_ops_load(o, &ops) != PS_OK)) {
        fprintf(stderr, "fuzz_queries: %s\n", ps_last_error());
        exit(2);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    psi_csv_t *c = NULL;
    if (psi_csv_open_mem(data, size, "fuzz.csv", &c) != PS_OK)
        return 0;
    queries_t f;
    int rc = psi_queries_read(c, "A100-SXM4-40GB", &f);
    psi_csv_close(c);
    if (rc != PS_OK) {
        if (f.n != 0 || f.q != NULL || strncmp(ps_last_error(), "fuzz.csv", 8) != 0)
            abort();
        return 0;
    }
    for (size_t i = 0; i < f.n; i++)
        if (!f.q[i].gpu || !f.q[i].hp_model || !f.q[i].lp_model || f.line[i] < 2)
            abort();
    if (model && f.n > 0 && f.n <= 64) {
        double out[4 * 64];
        rc = ps_model_predict_compose(model, ops, f.q, f.n, PS_COMPOSE_OVERLAP, out, out + 64, out + 128, out + 192);
        if (rc != PS_OK && !ps_last_error()[0])
            abort();
    }
    psi_queries_free(&f);
    return 0;
}
