/* libFuzzer target: the request handler of `pairsight serve` (serve_handle:
 * routing, the JSON tokenizer, every endpoint's reading of its body, the
 * replies). The first byte picks the endpoint, the rest is the body. With
 * PS_FUZZ_MODEL and PS_FUZZ_OPS (and PS_FUZZ_COLOC, PS_FUZZ_WORKLOADS for
 * the co-location endpoints and the extender) the handlers run on those
 * files; without them only the tokenizer runs. Every reply must be a
 * status in 200..599 with a JSON body whose text our tokenizer accepts
 * (strictly: it refuses bytes that are not UTF-8, so a reply that echoes
 * them unreplaced fails). */
#include "serve/serve.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static serve_t *srv;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    serve_params_t p = ps_serve_default_params();
    p.model_path = getenv("PS_FUZZ_MODEL");
    p.ops_path = getenv("PS_FUZZ_OPS");
    p.coloc_path = getenv("PS_FUZZ_COLOC");
    p.workloads_path = getenv("PS_FUZZ_WORKLOADS");
    p.max_queries = 64;
    char err[1024];
    if (p.model_path && p.ops_path && serve_init(&p, &srv, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_serve: %s\n", err);
        exit(2);
    }
    return 0;
}

static const char *const paths[] = {"/v1/predict",     "/v1/plan",   "/v1/colocate/score", "/k8s/filter",
                                    "/k8s/prioritize", "/v1/models", "/healthz",           "/metrics"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *body = malloc(size);
    memcpy(body, data + 1, size - 1);
    body[size - 1] = 0;
    if (!srv) {
        ps_json_doc_t d = {.max_depth = 32};
        if (ps_json_parse(&d, body, size - 1) == 0 && d.n < 1)
            abort();
        ps_json_doc_free(&d);
        free(body);
        return 0;
    }
    int k = data[0] % 8;
    /* /v1/plan plans a whole model per request: keep it to the first few
     * bytes' worth of work by skipping large bodies. */
    if (k == 1 && size > 512)
        k = 0;
    serve_reply_t r = {0};
    serve_handle(srv, k < 5 ? "POST" : "GET", paths[k], body, size - 1, &r);
    if (r.status < 200 || r.status > 599 || !r.body.s)
        abort();
    if (!r.content_type) {
        ps_json_doc_t d = {.max_depth = 64};
        if (ps_json_parse(&d, r.body.s, r.body.len) != 0)
            abort(); /* every JSON reply is valid JSON */
        ps_json_doc_free(&d);
    }
    ps_buf_free(&r.body);
    free(body);
    return 0;
}
