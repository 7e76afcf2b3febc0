/*
 * What the documents say about return codes holds: the public headers'
 * @return of ps_model_adapt names the code a model gets for co-executions of
 * another GPU, and the call returns exactly that (the header said
 * PS_E_MISMATCH; the code has always returned PS_E_INPUT).
 * tests/test_doc_claims.sh checks the README's and --help's statements.
 */
#include "testhelp.h"

#include <pairsight.h>

/* The doc comment right above the declaration of fn in the header. */
static char *doc_of(const char *fn)
{
    /* The declarations live in the umbrella's headers, one per audience. */
    static const char *const headers[] = {"include/pairsight_core.h", "include/pairsight_collect.h",
                                          "include/pairsight_eval.h", "include/pairsight_colocate.h",
                                          "include/pairsight_overlap.h"};
    static char text[1 << 20];
    size_t n = 0;
    for (size_t h = 0; h < sizeof headers / sizeof *headers; h++) {
        FILE *f = fopen(headers[h], "rb");
        if (!f)
            return NULL;
        n += fread(text + n, 1, sizeof text - 1 - n, f);
        fclose(f);
    }
    text[n] = 0;
    char decl[128];
    snprintf(decl, sizeof decl, "PS_API int %s(", fn);
    char *d = strstr(text, decl);
    if (!d)
        return NULL;
    *d = 0;
    char *open = NULL;
    for (char *p = strstr(text, "/**"); p; p = strstr(p + 3, "/**"))
        open = p;
    return open ? strdup(open) : NULL;
}

static ps_ops_t *ops_a, *ops_h;
static ps_coexec_t *cx_a, *cx_h;

static void simulate(const char *gpu, ps_ops_t **ops, ps_coexec_t **cx)
{
    ps_sim_params_t p = ps_sim_default_params();
    p.gpu = gpu;
    p.pairs = "resnet50:8/bert-base:8";
    p.experiments = 60;
    p.runs = 2;
    p.threads = 1;
    CHECK_OK(ps_sim_run(&p, ops, cx));
}

static void test_adapt_other_gpu_code(void)
{
    simulate("a100", &ops_a, &cx_a);
    simulate("h100", &ops_h, &cx_h);
    ps_train_params_t tp = ps_train_default_params();
    tp.max_rounds = 10;
    tp.n_depths = 1;
    tp.depths[0] = 4;
    tp.n_etas = 1;
    tp.etas[0] = 0.3;
    tp.nthread = 1;
    ps_model_t *m = NULL, *n = NULL;
    CHECK_OK(ps_model_train(ops_a, cx_a, &tp, &m));
    int rc = ps_model_adapt(m, ops_h, cx_h, &tp, &n);
    CHECK_MSG(rc == PS_E_INPUT, "ps_model_adapt on another GPU returned %d", rc);
    CHECK(n == NULL);
    char *doc = doc_of("ps_model_adapt");
    CHECK(doc != NULL);
    if (doc) {
        CHECK_MSG(strstr(doc, "PS_E_INPUT when cx is of another GPU") != NULL, "header says: %s", doc);
        CHECK_MSG(strstr(doc, "PS_E_MISMATCH") == NULL, "header says: %s", doc);
    }
    free(doc);
    ps_model_free(m);
    ps_model_free(n);
    ps_ops_free(ops_a);
    ps_ops_free(ops_h);
    ps_coexec_free(cx_a);
    ps_coexec_free(cx_h);
}

TH_MAIN(TEST(test_adapt_other_gpu_code))
