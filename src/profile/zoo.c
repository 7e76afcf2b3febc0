/*
 * The six models of the PairSight evaluation as operator lists, derived from
 * their published architectures as PyTorch runs them in eager inference mode
 * (one operator per kernel: a convolution, its batch norm and its activation
 * are three operators):
 *
 *   resnet50, resnet101  He et al. 2016, torchvision v1.5 bottlenecks (stride
 *                        on the 3x3 convolution), 224x224 input
 *   mobilenetv2          Sandler et al. 2018, width 1.0, 224x224 input
 *   bert-base            Devlin et al. 2019: 12 layers, hidden 768, 12 heads,
 *                        FFN 3072, vocabulary 30522 (HuggingFace eager attention)
 *   llama-3.2-1b         Meta 2024: 16 layers, hidden 2048, 32 heads, 8 KV
 *                        heads, head dim 64, FFN 8192, vocabulary 128256
 *   llama-3.2-3b         28 layers, hidden 3072, 24 heads, 8 KV heads, head
 *                        dim 128, FFN 8192 (fused SDPA attention, prefill of
 *                        seq_len tokens, logits of the last token)
 */
#include "profile/oplist.h"

#include "common/common.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_SEQ_LEN 128

typedef struct {
    psi_oplist_t *l;
    int rc;
} zb_t;

/* Append the operator name of kind and variant, with the np parameters p
 * (P() below gives both), unless an earlier push failed. */
static void push(zb_t *b, psi_opkind_t kind, int variant, const long long *p, int np, const char *name)
{
    if (b->rc)
        return;
    psi_opdesc_t op;
    memset(&op, 0, sizeof op);
    op.kind = kind;
    op.variant = variant;
    memcpy(op.p, p, (size_t)np * sizeof *p);
    snprintf(op.name, sizeof op.name, "%s", name);
    b->rc = psi_oplist_push(b->l, &op);
}

#define P(...) ((const long long[]){__VA_ARGS__}), (int)(sizeof((const long long[]){__VA_ARGS__}) / sizeof(long long))

/* ---- CNN building blocks: each updates the running NCHW shape ---- */

typedef struct {
    long long n, c, h, w;
} shape_t;

/* A convolution's hyper-parameters: k output channels, an r x r kernel
 * (padded by r/2), its stride and its groups. */
typedef struct {
    long long k, r, stride, groups;
} conv_t;

static void conv(zb_t *b, shape_t *s, const char *name, conv_t cv)
{
    long long pad = cv.r / 2;
    push(b, PS_OPK_CONV, 0, P(s->n, s->c, s->h, s->w, cv.k, cv.r, cv.r, cv.stride, pad, cv.groups), name);
    s->h = psi_conv_out(s->h, cv.r, cv.stride, pad);
    s->w = psi_conv_out(s->w, cv.r, cv.stride, pad);
    s->c = cv.k;
}

static void bn(zb_t *b, const shape_t *s, const char *name)
{
    push(b, PS_OPK_NORM, PS_NORM_BATCH, P(s->n, s->c, s->h * s->w), name);
}

static void act(zb_t *b, const shape_t *s, int variant, const char *name)
{
    push(b, PS_OPK_ELTWISE, variant, P(s->n * s->c * s->h * s->w, 1), name);
}

static void add(zb_t *b, long long elems, const char *name) { push(b, PS_OPK_ELTWISE, PS_ELT_ADD, P(elems, 2), name); }

static void classifier(zb_t *b, shape_t *s, long long classes)
{
    push(b, PS_OPK_POOL, PS_POOL_GLOBAL, P(s->n, s->c, s->h, s->w, s->h, 1), "avgpool");
    push(b, PS_OPK_GEMM, 0, P(s->n, classes, s->c, 1), "fc");
}

static void build_resnet(zb_t *b, long long batch, const int blocks[4])
{
    shape_t s = {batch, 3, 224, 224};
    conv(b, &s, "conv1", (conv_t){64, 7, 2, 1});
    bn(b, &s, "bn1");
    act(b, &s, PS_ELT_RELU, "relu");
    push(b, PS_OPK_POOL, PS_POOL_MAX, P(s.n, s.c, s.h, s.w, 3, 2), "maxpool");
    s.h = psi_conv_out(s.h, 3, 2, 1);
    s.w = psi_conv_out(s.w, 3, 2, 1);
    static const long long widths[4] = {64, 128, 256, 512};
    char nm[PS_OP_NAME_MAX];
    for (int layer = 0; layer < 4; layer++) {
        for (int i = 0; i < blocks[layer]; i++) {
            long long stride = (i == 0 && layer > 0) ? 2 : 1;
            shape_t in = s;
#define NM(x) (snprintf(nm, sizeof nm, "layer%d.%d.%s", layer + 1, i, x), nm)
            conv(b, &s, NM("conv1"), (conv_t){widths[layer], 1, 1, 1});
            bn(b, &s, NM("bn1"));
            act(b, &s, PS_ELT_RELU, NM("relu1"));
            conv(b, &s, NM("conv2"), (conv_t){widths[layer], 3, stride, 1});
            bn(b, &s, NM("bn2"));
            act(b, &s, PS_ELT_RELU, NM("relu2"));
            conv(b, &s, NM("conv3"), (conv_t){widths[layer] * 4, 1, 1, 1});
            bn(b, &s, NM("bn3"));
            if (i == 0) {
                shape_t ds = in;
                conv(b, &ds, NM("downsample.0"), (conv_t){widths[layer] * 4, 1, stride, 1});
                bn(b, &ds, NM("downsample.1"));
            }
            add(b, s.n * s.c * s.h * s.w, NM("add"));
            act(b, &s, PS_ELT_RELU, NM("relu3"));
#undef NM
        }
    }
    classifier(b, &s, 1000);
}

static void build_mobilenetv2(zb_t *b, long long batch)
{
    static const int cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    shape_t s = {batch, 3, 224, 224};
    conv(b, &s, "features.0.conv", (conv_t){32, 3, 2, 1});
    bn(b, &s, "features.0.bn");
    act(b, &s, PS_ELT_RELU6, "features.0.relu6");
    char nm[PS_OP_NAME_MAX];
    int idx = 1;
    for (int g = 0; g < 7; g++) {
        for (int i = 0; i < cfg[g][2]; i++, idx++) {
            long long stride = i == 0 ? cfg[g][3] : 1;
            long long in_c = s.c, hidden = s.c * cfg[g][0];
#define NM(x) (snprintf(nm, sizeof nm, "features.%d.%s", idx, x), nm)
            if (cfg[g][0] != 1) {
                conv(b, &s, NM("expand"), (conv_t){hidden, 1, 1, 1});
                bn(b, &s, NM("expand.bn"));
                act(b, &s, PS_ELT_RELU6, NM("expand.relu6"));
            }
            conv(b, &s, NM("dw"), (conv_t){hidden, 3, stride, hidden});
            bn(b, &s, NM("dw.bn"));
            act(b, &s, PS_ELT_RELU6, NM("dw.relu6"));
            conv(b, &s, NM("project"), (conv_t){cfg[g][1], 1, 1, 1});
            bn(b, &s, NM("project.bn"));
            if (stride == 1 && in_c == cfg[g][1])
                add(b, s.n * s.c * s.h * s.w, NM("add"));
#undef NM
        }
    }
    conv(b, &s, "features.18.conv", (conv_t){1280, 1, 1, 1});
    bn(b, &s, "features.18.bn");
    act(b, &s, PS_ELT_RELU6, "features.18.relu6");
    classifier(b, &s, 1000);
}

static void build_bert(zb_t *b, long long batch, long long seq)
{
    const long long hid = 768, heads = 12, hd = 64, ffn = 3072, layers = 12;
    long long t = batch * seq;
    push(b, PS_OPK_EMBED, 0, P(t, hid, 30522), "embeddings.word");
    push(b, PS_OPK_EMBED, 0, P(t, hid, 512), "embeddings.position");
    push(b, PS_OPK_EMBED, 0, P(t, hid, 2), "embeddings.token_type");
    add(b, t * hid, "embeddings.add1");
    add(b, t * hid, "embeddings.add2");
    push(b, PS_OPK_NORM, PS_NORM_LAYER, P(t, hid, 1), "embeddings.layernorm");
    char nm[PS_OP_NAME_MAX];
    for (int i = 0; i < layers; i++) {
#define NM(x) (snprintf(nm, sizeof nm, "layer%d.%s", i, x), nm)
        push(b, PS_OPK_GEMM, 0, P(t, hid, hid, 1), NM("attn.query"));
        push(b, PS_OPK_GEMM, 0, P(t, hid, hid, 1), NM("attn.key"));
        push(b, PS_OPK_GEMM, 0, P(t, hid, hid, 1), NM("attn.value"));
        push(b, PS_OPK_GEMM, 0, P(seq, seq, hd, batch * heads), NM("attn.scores"));
        push(b, PS_OPK_ELTWISE, PS_ELT_SCALE, P(batch * heads * seq * seq, 1), NM("attn.scale"));
        add(b, batch * heads * seq * seq, NM("attn.mask"));
        push(b, PS_OPK_SOFTMAX, 0, P(batch * heads * seq, seq), NM("attn.softmax"));
        push(b, PS_OPK_GEMM, 0, P(seq, hd, seq, batch * heads), NM("attn.context"));
        push(b, PS_OPK_GEMM, 0, P(t, hid, hid, 1), NM("attn.output.dense"));
        add(b, t * hid, NM("attn.output.add"));
        push(b, PS_OPK_NORM, PS_NORM_LAYER, P(t, hid, 1), NM("attn.output.layernorm"));
        push(b, PS_OPK_GEMM, 0, P(t, ffn, hid, 1), NM("intermediate.dense"));
        push(b, PS_OPK_ELTWISE, PS_ELT_GELU, P(t * ffn, 1), NM("intermediate.gelu"));
        push(b, PS_OPK_GEMM, 0, P(t, hid, ffn, 1), NM("output.dense"));
        add(b, t * hid, NM("output.add"));
        push(b, PS_OPK_NORM, PS_NORM_LAYER, P(t, hid, 1), NM("output.layernorm"));
#undef NM
    }
    push(b, PS_OPK_GEMM, 0, P(batch, hid, hid, 1), "pooler.dense");
    push(b, PS_OPK_ELTWISE, PS_ELT_TANH, P(batch * hid, 1), "pooler.tanh");
}

/* A Llama configuration, in the names of HuggingFace's config.json:
 * hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
 * head_dim, intermediate_size. */
typedef struct {
    long long hid, layers, heads, kv_heads, hd, ffn;
} llama_cfg_t;

static void build_llama(zb_t *b, long long batch, long long seq, const llama_cfg_t *cfg)
{
    const long long hid = cfg->hid, heads = cfg->heads, kv_heads = cfg->kv_heads, hd = cfg->hd, ffn = cfg->ffn;
    const long long vocab = 128256;
    long long t = batch * seq;
    push(b, PS_OPK_EMBED, 0, P(t, hid, vocab), "embed_tokens");
    char nm[PS_OP_NAME_MAX];
    for (int i = 0; i < cfg->layers; i++) {
#define NM(x) (snprintf(nm, sizeof nm, "layers.%d.%s", i, x), nm)
        push(b, PS_OPK_NORM, PS_NORM_RMS, P(t, hid, 1), NM("input_layernorm"));
        push(b, PS_OPK_GEMM, 0, P(t, heads * hd, hid, 1), NM("self_attn.q_proj"));
        push(b, PS_OPK_GEMM, 0, P(t, kv_heads * hd, hid, 1), NM("self_attn.k_proj"));
        push(b, PS_OPK_GEMM, 0, P(t, kv_heads * hd, hid, 1), NM("self_attn.v_proj"));
        push(b, PS_OPK_ELTWISE, PS_ELT_ROPE, P(t * heads * hd, 1), NM("self_attn.rope_q"));
        push(b, PS_OPK_ELTWISE, PS_ELT_ROPE, P(t * kv_heads * hd, 1), NM("self_attn.rope_k"));
        push(b, PS_OPK_ATTN, 0, P(batch, heads, kv_heads, seq, seq, hd, 1), NM("self_attn.sdpa"));
        push(b, PS_OPK_GEMM, 0, P(t, hid, heads * hd, 1), NM("self_attn.o_proj"));
        add(b, t * hid, NM("residual1"));
        push(b, PS_OPK_NORM, PS_NORM_RMS, P(t, hid, 1), NM("post_attention_layernorm"));
        push(b, PS_OPK_GEMM, 0, P(t, ffn, hid, 1), NM("mlp.gate_proj"));
        push(b, PS_OPK_GEMM, 0, P(t, ffn, hid, 1), NM("mlp.up_proj"));
        push(b, PS_OPK_ELTWISE, PS_ELT_SILU_MUL, P(t * ffn, 2), NM("mlp.act_mul"));
        push(b, PS_OPK_GEMM, 0, P(t, hid, ffn, 1), NM("mlp.down_proj"));
        add(b, t * hid, NM("residual2"));
#undef NM
    }
    push(b, PS_OPK_NORM, PS_NORM_RMS, P(t, hid, 1), "norm");
    push(b, PS_OPK_GEMM, 0, P(batch, vocab, hid, 1), "lm_head");
}

static const llama_cfg_t llama_1b = {2048, 16, 32, 8, 64, 8192}, llama_3b = {3072, 28, 24, 8, 128, 8192};

static const char *const zoo_names[] = {"resnet50",  "resnet101",    "mobilenetv2",
                                        "bert-base", "llama-3.2-1b", "llama-3.2-3b"};

static int psi_oplist_user_copy(const psi_oplist_t *u, int batch, psi_oplist_t **out);

int psi_zoo_build(const char *model, int batch, int seq_len, psi_oplist_t **out)
{
    *out = NULL;
    const psi_oplist_t *user = psi_oplist_user(model);
    if (user)
        return psi_oplist_user_copy(user, batch, out);
    if (!model || batch <= 0 || batch > 65536)
        return psi_error(PS_E_ARG, "zoo: need a model name and a batch size in 1..65536");
    int known;
    if (psi_name_index("model", model, zoo_names, (int)PS_ARRAY_LEN(zoo_names), &known) != PS_OK)
        return psi_error_prefix(PS_E_ARG, "zoo");
    if (seq_len <= 0)
        seq_len = DEFAULT_SEQ_LEN;
    if (seq_len > 131072)
        return psi_error(PS_E_ARG, "zoo: sequence length %d is more than 131072", seq_len);
    int transformer = strcmp(model, "bert-base") == 0 || strncmp(model, "llama-", 6) == 0;
    if (strcmp(model, "bert-base") == 0 && seq_len > 512)
        return psi_error(PS_E_ARG, "zoo: bert-base takes at most 512 tokens, not %d", seq_len);
    zb_t b = {psi_oplist_new(model, batch, transformer ? seq_len : 0), 0};
    if (!b.l)
        return PS_E_NOMEM;
    static const int r50[4] = {3, 4, 6, 3}, r101[4] = {3, 4, 23, 3};
    if (strcmp(model, "resnet50") == 0)
        build_resnet(&b, batch, r50);
    else if (strcmp(model, "resnet101") == 0)
        build_resnet(&b, batch, r101);
    else if (strcmp(model, "mobilenetv2") == 0)
        build_mobilenetv2(&b, batch);
    else if (strcmp(model, "bert-base") == 0)
        build_bert(&b, batch, seq_len);
    else if (strcmp(model, "llama-3.2-1b") == 0)
        build_llama(&b, batch, seq_len, &llama_1b);
    else
        build_llama(&b, batch, seq_len, &llama_3b); /* the last known */
    if (b.rc) {
        psi_oplist_free(b.l);
        return b.rc;
    }
    *out = b.l;
    return 0;
}

/* Users' operator lists, registered under a model name (`--oplist
 * NAME=FILE` of simulate, collect and replay; ps_oplist_register in C):
 * psi_zoo_build, the simulator's workloads and the twin then take the name
 * as they take a built-in model's. A list holds one batch size, the one it
 * was captured at (python -m pairsight.capture --batch).
 *
 * Registration is for the start of a program: it is not thread safe against
 * runs that look names up. The lists stay until ps_oplist_clear.
 */
#define USER_LISTS 32

static psi_oplist_t *lists[USER_LISTS];
static int n_lists;

const psi_oplist_t *psi_oplist_user(const char *name)
{
    for (int i = 0; name && i < n_lists; i++)
        if (strcmp(lists[i]->model, name) == 0)
            return lists[i];
    return NULL;
}

const char *psi_oplist_user_name(int i) { return i >= 0 && i < n_lists ? lists[i]->model : NULL; }

static int valid_name(const char *s, size_t n)
{
    if (n == 0 || n > 31)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '-' || s[i] == '_' || s[i] == '.' || (s[i] >= '0' && s[i] <= '9') ||
              (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
            return 0;
    return 1;
}

/* One NAME=FILE item of length n at s; a FILE without NAME= is named by
 * its header's model=. */
static int register_one(const char *s, size_t n)
{
    const char *eq = memchr(s, '=', n);
    if ((eq && !valid_name(s, (size_t)(eq - s))) || (eq && eq + 1 == s + n) || n == 0)
        return psi_error(PS_E_ARG,
                         "oplist: expected NAME=FILE (or FILE, named by its header's model=) with a name of 1..31 "
                         "letters, digits, '-', '_' or '.', got '%.*s'",
                         (int)n, s);
    char name[32], path[4096];
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - s) : 0, s);
    snprintf(path, sizeof path, "%.*s", eq ? (int)(n - (size_t)(eq - s) - 1) : (int)n, eq ? eq + 1 : s);
    psi_oplist_t *l = NULL;
    int rc = psi_oplist_read(path, &l);
    if (rc != 0)
        return rc;
    if (l->batch <= 0) {
        psi_oplist_free(l);
        return psi_error(PS_E_INPUT, "%s: no '# model=... batch=B seq_len=S' header: the batch size is unknown", path);
    }
    if (!eq && !valid_name(l->model, strlen(l->model))) {
        psi_oplist_free(l);
        return psi_error(PS_E_INPUT,
                         "%s: its header's model= is no name of 1..31 letters, digits, '-', '_' or '.': "
                         "give one as NAME=%s",
                         path, path);
    }
    if (!eq)
        snprintf(name, sizeof name, "%.31s", l->model); /* valid_name: at most 31 */
    psi_oplist_t *probe = NULL;
    if (psi_zoo_build(name, 1, 0, &probe) == 0 && !psi_oplist_user(name)) {
        psi_oplist_free(probe);
        psi_oplist_free(l);
        return psi_error(PS_E_ARG, "oplist: '%s' is a built-in model; name the list otherwise (%s=%s)", name,
                         eq ? "OTHER" : "MY-NAME", path);
    }
    snprintf(l->model, sizeof l->model, "%s", name);
    for (int i = 0; i < n_lists; i++)
        if (strcmp(lists[i]->model, name) == 0) { /* the same name again: the new list */
            psi_oplist_free(lists[i]);
            lists[i] = l;
            return 0;
        }
    if (n_lists == USER_LISTS) {
        psi_oplist_free(l);
        return psi_error(PS_E_ARG, "oplist: more than %d lists", USER_LISTS);
    }
    lists[n_lists++] = l;
    return 0;
}

int ps_oplist_register(const char *spec)
{
    if (!spec || !*spec)
        return psi_error(PS_E_ARG, "oplist: expected NAME=FILE[,NAME=FILE...]");
    for (const char *s = spec; *s;) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        int rc = register_one(s, n);
        if (rc != 0)
            return rc;
        s += n + (e ? 1 : 0);
    }
    return 0;
}

void ps_oplist_clear(void)
{
    for (int i = 0; i < n_lists; i++)
        psi_oplist_free(lists[i]);
    n_lists = 0;
}

/* A copy of a user list for psi_zoo_build: the batch must be the list's. */
static int psi_oplist_user_copy(const psi_oplist_t *u, int batch, psi_oplist_t **out)
{
    *out = NULL;
    if (batch != u->batch)
        return psi_error(PS_E_ARG,
                         "%s: its operator list was captured at batch %d, not %d (capture it again with "
                         "--batch %d)",
                         u->model, u->batch, batch, batch);
    psi_oplist_t *l = psi_oplist_new(u->model, u->batch, u->seq_len);
    if (!l)
        return PS_E_NOMEM;
    l->fp32 = u->fp32;
    for (int i = 0; i < u->n; i++)
        if (psi_oplist_push(l, &u->ops[i]) != 0) {
            psi_oplist_free(l);
            return PS_E_NOMEM;
        }
    *out = l;
    return 0;
}
