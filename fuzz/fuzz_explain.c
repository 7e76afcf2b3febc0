/* libFuzzer target: `pairsight explain --query SPEC` without the printing:
 * the spec parser (ps_query_parse), then, where PS_FUZZ_MODEL and
 * PS_FUZZ_OPS name a model and its ops.csv, the query check and the SHAP
 * explanation of every spec it accepts. Each step succeeds or refuses with
 * a message; an explanation's items name their side and operator sanely. */
#include "common/common.h"
#include "profile/queries.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static ps_model_t *model;
static ps_ops_t *ops;
static ps_model_info_t info;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *m = getenv("PS_FUZZ_MODEL"), *o = getenv("PS_FUZZ_OPS");
    if (m && o &&
        (ps_model_load(m, &model) != PS_OK || ps_ops_load(o, &ops) != PS_OK || ps_model_info(model, &info))) {
        fprintf(stderr, "fuzz_explain: %s\n", ps_last_error());
        exit(2);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = malloc(size + 1);
    if (!spec)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';
    ps_query_t q;
    memset(&q, 0, sizeof q);
    int rc = ps_query_parse(spec, &q);
    if (rc != PS_OK) {
        if (rc != PS_E_ARG || !ps_last_error()[0])
            abort();
    } else if (model) {
        if (!q.gpu)
            q.gpu = info.gpu;
        ps_explanation_t *e = NULL;
        if (ps_model_check_query(model, ops, &q) == PS_OK && ps_model_explain(model, ops, &q, &e) == PS_OK) {
            for (size_t i = 0; i < e->n; i++)
                if ((e->items[i].side != 0 && e->items[i].side != 1) || !e->items[i].name)
                    abort();
        } else if (e || !ps_last_error()[0]) {
            abort();
        }
        ps_explanation_free(e);
    }
    free(spec);
    return 0;
}
