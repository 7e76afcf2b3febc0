/* Operator lists: construction, text form and cost estimates. */
#include "profile/oplist.h"

#include "common/common.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    const char *params[PS_OP_MAX_PARAMS + 1]; /* NULL-terminated */
    long long defaults[PS_OP_MAX_PARAMS];
    const char *variants[12]; /* NULL-terminated; empty = none */
} kind_info_t;

static const kind_info_t kinds[PS_OPK_COUNT] = {
    [PS_OPK_GEMM] = {"gemm", {"m", "n", "k", "batch", NULL}, {1, 1, 1, 1}, {NULL}},
    [PS_OPK_CONV] = {"conv",
                     {"n", "c", "h", "w", "k", "r", "s", "stride", "pad", "groups", NULL},
                     {1, 1, 1, 1, 1, 1, 1, 1, 0, 1},
                     {NULL}},
    [PS_OPK_NORM] = {"norm", {"n", "c", "hw", NULL}, {1, 1, 1}, {"batch", "layer", "rms", NULL}},
    [PS_OPK_SOFTMAX] = {"softmax", {"rows", "cols", NULL}, {1, 1}, {NULL}},
    [PS_OPK_ELTWISE] = {"eltwise",
                        {"elems", "inputs", NULL},
                        {1, 1},
                        {"relu", "relu6", "gelu", "silu", "tanh", "scale", "add", "mul", "silu_mul", "rope", NULL}},
    [PS_OPK_POOL] = {"pool",
                     {"n", "c", "h", "w", "window", "stride", NULL},
                     {1, 1, 1, 1, 1, 1},
                     {"max", "avg", "global", NULL}},
    [PS_OPK_ATTN] = {"attn",
                     {"batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "causal", NULL},
                     {1, 1, 1, 1, 1, 64, 0},
                     {NULL}},
    [PS_OPK_EMBED] = {"embed", {"rows", "dim", "vocab", NULL}, {1, 1, 1}, {NULL}},
};

/* The kind of a name (-1 if unknown) and the name of a variant. */
static int psi_opkind_from_name(const char *s)
{
    for (int k = 0; k < PS_OPK_COUNT; k++)
        if (strcmp(kinds[k].name, s) == 0)
            return k;
    return -1;
}

const char *psi_opvariant_name(psi_opkind_t k, int variant)
{
    if (k < 0 || k >= PS_OPK_COUNT || variant < 0)
        return NULL;
    for (int i = 0; kinds[k].variants[i]; i++)
        if (i == variant)
            return kinds[k].variants[i];
    return NULL;
}

psi_oplist_t *psi_oplist_new(const char *model, int batch, int seq_len)
{
    psi_oplist_t *l = psi_calloc(1, sizeof *l);
    if (!l)
        return NULL;
    snprintf(l->model, sizeof l->model, "%s", model ? model : "");
    l->batch = batch;
    l->seq_len = seq_len;
    return l;
}

void psi_oplist_free(psi_oplist_t *l)
{
    if (!l)
        return;
    free(l->ops);
    free(l);
}

int psi_oplist_push(psi_oplist_t *l, const psi_opdesc_t *op)
{
    void *grown = l->ops;
    if (psi_array_grow(&grown, (size_t)l->n, &l->cap, sizeof *l->ops, 64) != PS_OK)
        return PS_E_NOMEM;
    l->ops = grown;
    l->ops[l->n++] = *op;
    return 0;
}

int psi_oplist_write(const psi_oplist_t *l, FILE *f)
{
    fprintf(f, "# pairsight oplist 1\n# model=%s batch=%d seq_len=%d ops=%d%s\n", l->model, l->batch, l->seq_len, l->n,
            l->fp32 ? " dtype=fp32" : "");
    for (int i = 0; i < l->n; i++) {
        const psi_opdesc_t *op = &l->ops[i];
        const kind_info_t *ki = &kinds[op->kind];
        fprintf(f, "%s %s", ki->name, op->name);
        const char *v = psi_opvariant_name(op->kind, op->variant);
        if (v)
            fprintf(f, " variant=%s", v);
        for (int j = 0; ki->params[j]; j++)
            fprintf(f, " %s=%lld", ki->params[j], op->p[j]);
        if (op->params > 0)
            fprintf(f, " params=%lld", op->params);
        fputc('\n', f);
    }
    return ferror(f) ? psi_error(PS_E_IO, "write failed") : 0;
}

/* The largest count an operator's parameter or tensor may reach: 2^40
 * elements, 2 TiB at fp16, more than any GPU's memory (an H200 has 141 GB).
 * Every product the cost formulas form is checked against it when a list is
 * read, so that no size arithmetic below overflows 64 bits. */
#define OP_MAX_ELEMS (1LL << 40)
#define OP_MAX_BATCH (1 << 30) /* the CLI's bound on --batch */

/* A count in 0..max from text, or -1 for anything else (a sign, a suffix,
 * a value past max or past 64 bits). */
static long long parse_count(const char *val, long long max)
{
    if (!isdigit((unsigned char)*val))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(val, &end, 10);
    return errno || *end || v > max ? -1 : v;
}

/* Parse one `key=value` token of an operator of kind ki into op. */
static int parse_param(const char *path, int line, int col, const kind_info_t *ki, char *tok, psi_opdesc_t *op)
{
    char *eq = strchr(tok, '=');
    if (!eq)
        return psi_error(PS_E_INPUT, "%s:%d:%d: expected key=value, got '%s'", path, line, col, tok);
    *eq = '\0';
    const char *val = eq + 1;
    int vcol = col + (int)(val - tok);
    if (strcmp(tok, "variant") == 0) {
        for (int i = 0; ki->variants[i]; i++)
            if (strcmp(ki->variants[i], val) == 0) {
                op->variant = i;
                return 0;
            }
        return psi_error(PS_E_INPUT, "%s:%d:%d: %s has no variant '%s'", path, line, col, ki->name, val);
    }
    if (strcmp(tok, "params") == 0) {
        long long v = parse_count(val, OP_MAX_ELEMS);
        if (v < 0)
            return psi_error(PS_E_INPUT, "%s:%d:%d: params: not a valid count in 0..2^40: '%s'", path, line, vcol, val);
        op->params = v;
        return 0;
    }
    for (int j = 0; ki->params[j]; j++) {
        if (strcmp(ki->params[j], tok) != 0)
            continue;
        long long v = parse_count(val, OP_MAX_ELEMS);
        if (v < 0 || (v == 0 && strcmp(tok, "pad") != 0 && strcmp(tok, "causal") != 0))
            return psi_error(PS_E_INPUT, "%s:%d:%d: %s: not a valid count in 1..2^40: '%s'", path, line, vcol, tok,
                             val);
        op->p[j] = v;
        return 0;
    }
    return psi_error(PS_E_INPUT, "%s:%d:%d: %s has no parameter '%s'", path, line, col, ki->name, tok);
}

/* An operator as read and where it stands in its file, for the errors
 * that name it. */
typedef struct {
    const char *path;
    int line, col;
    const psi_opdesc_t *op;
} op_at_t;

/* Whether the tensor a*b*c*d (factors in 0..3*2^40) stays within
 * OP_MAX_ELEMS, checked at each step in 64 bits; else an error at the
 * operator's line and column naming the tensor. */
static int tensor_fits(const op_at_t *at, const char *what, long long a, long long b, long long c, long long d)
{
    const long long f[4] = {a, b, c, d};
    long long v = 1;
    for (int i = 0; i < 4; i++)
        if (__builtin_mul_overflow(v, f[i], &v) || v > OP_MAX_ELEMS)
            return psi_error(PS_E_INPUT,
                             "%s:%d:%d: %s %s: its %s passes 2^40 elements (2 TiB at fp16: more than any GPU holds)",
                             at->path, at->line, at->col, kinds[at->op->kind].name, at->op->name, what);
    return 0;
}

/* The operator's tensors within OP_MAX_ELEMS (so that the cost formulas
 * below cannot overflow) and its parameters consistent with each other;
 * else an error at the operator's line and column. */
static int check_op(const op_at_t *at)
{
    const psi_opdesc_t *op = at->op;
    const char *path = at->path;
    int line = at->line, col = at->col;
    const long long *p = op->p;
    switch (op->kind) {
    case PS_OPK_GEMM:
        return tensor_fits(at, "input batch*m*k", p[PG_BATCH], p[PG_M], p[PG_K], 1) ||
                       tensor_fits(at, "weight batch*k*n", p[PG_BATCH], p[PG_K], p[PG_N], 1) ||
                       tensor_fits(at, "output batch*m*n", p[PG_BATCH], p[PG_M], p[PG_N], 1)
                   ? PS_E_INPUT
                   : 0;
    case PS_OPK_CONV: {
        if (p[PC_C] % p[PC_GROUPS] != 0)
            return psi_error(PS_E_INPUT, "%s:%d:%d: conv %s: groups=%lld does not divide c=%lld", path, line, col,
                             op->name, p[PC_GROUPS], p[PC_C]);
        long long oh = psi_conv_out(p[PC_H], p[PC_R], p[PC_STRIDE], p[PC_PAD]);
        long long ow = psi_conv_out(p[PC_W], p[PC_S], p[PC_STRIDE], p[PC_PAD]);
        return tensor_fits(at, "input n*c*h*w", p[PC_N], p[PC_C], p[PC_H], p[PC_W]) ||
                       tensor_fits(at, "weight k*(c/groups)*r*s", p[PC_K], p[PC_C] / p[PC_GROUPS], p[PC_R], p[PC_S]) ||
                       tensor_fits(at, "output n*k*out_h*out_w", p[PC_N], p[PC_K], oh, ow)
                   ? PS_E_INPUT
                   : 0;
    }
    case PS_OPK_NORM: return tensor_fits(at, "input n*c*hw", p[PN_N], p[PN_C], p[PN_HW], 1) ? PS_E_INPUT : 0;
    case PS_OPK_SOFTMAX: return tensor_fits(at, "input rows*cols", p[PS_ROWS], p[PS_COLS], 1, 1) ? PS_E_INPUT : 0;
    case PS_OPK_ELTWISE:
        return tensor_fits(at, "inputs elems*inputs", p[PE_ELEMS], p[PE_INPUTS], 1, 1) ? PS_E_INPUT : 0;
    case PS_OPK_POOL: return tensor_fits(at, "input n*c*h*w", p[PP_N], p[PP_C], p[PP_H], p[PP_W]) ? PS_E_INPUT : 0;
    case PS_OPK_ATTN:
        return tensor_fits(at, "query batch*heads*seq_q*head_dim", p[PA_BATCH], p[PA_HEADS], p[PA_SEQ_Q],
                           p[PA_HEAD_DIM]) ||
                       tensor_fits(at, "keys and values 2*batch*kv_heads*seq_kv*head_dim", 2 * p[PA_BATCH],
                                   p[PA_KV_HEADS], p[PA_SEQ_KV], p[PA_HEAD_DIM])
                   ? PS_E_INPUT
                   : 0;
    case PS_OPK_EMBED:
        return tensor_fits(at, "table vocab*dim", p[PM_VOCAB], p[PM_DIM], 1, 1) ||
                       tensor_fits(at, "output rows*dim", p[PM_ROWS], p[PM_DIM], 1, 1)
                   ? PS_E_INPUT
                   : 0;
    default: return 0;
    }
}

/* The header comment `# model=M batch=B seq_len=S [ops=N] [dtype=fp32]`
 * (python -m pairsight.capture and psi_oplist_write) into l and *ops (-1
 * where it does not say). A list has one header: a second is an error, so
 * that a later comment cannot rename the model or change its batch. Keys it
 * does not know are left for later versions. */
static int parse_header(const char *path, int line, char *buf, psi_oplist_t *l, int *header_line, long long *ops)
{
    char *save = NULL;
    char *tok = strtok_r(buf + 1, " \t\r\n", &save);
    if (!tok || strncmp(tok, "model=", 6) != 0)
        return 0; /* an ordinary comment */
    if (*header_line)
        return psi_error(PS_E_INPUT, "%s:%d:%d: a second header (the list's is on line %d): a list has one", path, line,
                         (int)(tok - buf) + 1, *header_line);
    *header_line = line;
    int have = 0;
    for (; tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
        int col = (int)(tok - buf) + 1;
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = '\0';
        const char *val = eq + 1;
        if (strcmp(tok, "model") == 0) {
            if (!*val || strlen(val) >= sizeof l->model)
                return psi_error(PS_E_INPUT, "%s:%d:%d: model: a name of 1..%zu bytes", path, line, col,
                                 sizeof l->model - 1);
            snprintf(l->model, sizeof l->model, "%s", val);
            have |= 1;
        } else if (strcmp(tok, "batch") == 0 || strcmp(tok, "seq_len") == 0 || strcmp(tok, "ops") == 0) {
            int is_batch = tok[0] == 'b', is_ops = tok[0] == 'o';
            long long max = is_ops ? INT_MAX : OP_MAX_BATCH, v = parse_count(val, max);
            if (v < (is_batch ? 1 : 0))
                return psi_error(PS_E_INPUT, "%s:%d:%d: %s: not a count in %d..%lld: '%s'", path, line,
                                 col + (int)(val - tok), tok, is_batch, max, val);
            if (is_ops)
                *ops = v;
            else if (is_batch)
                l->batch = (int)v;
            else
                l->seq_len = (int)v;
            have |= is_ops ? 0 : is_batch ? 2 : 4;
        } else if (strcmp(tok, "dtype") == 0) {
            l->fp32 = strcmp(val, "fp32") == 0;
        }
    }
    if (have != 7)
        return psi_error(PS_E_INPUT, "%s:%d:1: the header needs model=, batch= and seq_len=", path, line);
    return 0;
}

/* One operator line into l: kind, name, then key=value parameters. */
static int parse_op(const char *path, int line, char *buf, psi_oplist_t *l)
{
    psi_opdesc_t op;
    memset(&op, 0, sizeof op);
    char *save = NULL;
    char *tok = strtok_r(buf, " \t\r\n", &save);
    if (!tok)
        return 0;
    int col = (int)(tok - buf) + 1;
    int k = psi_opkind_from_name(tok);
    if (k < 0)
        return psi_error(PS_E_INPUT, "%s:%d:%d: unknown operator kind '%s'", path, line, col, tok);
    op.kind = (psi_opkind_t)k;
    memcpy(op.p, kinds[k].defaults, sizeof op.p);
    char *name = strtok_r(NULL, " \t\r\n", &save);
    if (!name || strchr(name, '='))
        return psi_error(PS_E_INPUT, "%s:%d:%d: missing operator name", path, line,
                         name ? (int)(name - buf) + 1 : (int)strlen(tok) + 1);
    if (strlen(name) >= PS_OP_NAME_MAX)
        return psi_error(PS_E_INPUT, "%s:%d:%d: operator name longer than %d bytes", path, line, (int)(name - buf) + 1,
                         PS_OP_NAME_MAX - 1);
    snprintf(op.name, sizeof op.name, "%s", name);
    int rc = 0;
    while (rc == 0 && (tok = strtok_r(NULL, " \t\r\n", &save)))
        rc = parse_param(path, line, (int)(tok - buf) + 1, &kinds[k], tok, &op);
    if (rc == 0)
        rc = check_op(&(op_at_t){path, line, col, &op});
    return rc == 0 ? psi_oplist_push(l, &op) : rc;
}

int psi_oplist_read(const char *path, psi_oplist_t **out)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f)
        return psi_error(PS_E_IO, "%s: %s", path, strerror(errno));
    psi_oplist_t *l = psi_oplist_new("", 0, 0);
    int rc = l ? 0 : PS_E_NOMEM;
    char buf[4096];
    int line = 0, header_line = 0;
    long long ops = -1;
    while (rc == 0 && fgets(buf, sizeof buf, f)) {
        if (line == INT_MAX) {
            rc = psi_error(PS_E_INPUT, "%s: more than %d lines", path, INT_MAX);
            break;
        }
        line++;
        size_t len = strlen(buf);
        if (len == sizeof buf - 1 && buf[len - 1] != '\n')
            rc = psi_error(PS_E_INPUT, "%s:%d:1: line too long", path, line);
        else if (buf[0] == '#')
            rc = parse_header(path, line, buf, l, &header_line, &ops);
        else
            rc = parse_op(path, line, buf, l);
    }
    if (rc == 0 && ferror(f))
        rc = psi_error(PS_E_IO, "%s: read error", path);
    if (rc == 0 && l->n == 0)
        rc = psi_error(PS_E_INPUT, "%s: no operators", path);
    if (rc == 0 && ops >= 0 && ops != l->n)
        rc = psi_error(PS_E_INPUT, "%s:%d: the header says ops=%lld, the list has %d operators%s", path, header_line,
                       ops, l->n, ops > l->n ? " (cut short?)" : "");
    fclose(f);
    if (rc != 0) {
        psi_oplist_free(l);
        return rc;
    }
    *out = l;
    return 0;
}

long long psi_conv_out(long long in, long long window, long long stride, long long pad)
{
    long long o = (in + 2 * pad - window) / stride + 1;
    return o > 0 ? o : 1;
}

void psi_op_tensor_elems(const psi_opdesc_t *op, long long *in, long long *weight, long long *out)
{
    const long long *p = op->p;
    *weight = 0;
    switch (op->kind) {
    case PS_OPK_GEMM:
        *in = p[PG_BATCH] * p[PG_M] * p[PG_K];
        *weight = p[PG_BATCH] * p[PG_K] * p[PG_N];
        *out = p[PG_BATCH] * p[PG_M] * p[PG_N];
        break;
    case PS_OPK_CONV: {
        long long oh = psi_conv_out(p[PC_H], p[PC_R], p[PC_STRIDE], p[PC_PAD]);
        long long ow = psi_conv_out(p[PC_W], p[PC_S], p[PC_STRIDE], p[PC_PAD]);
        *in = p[PC_N] * p[PC_C] * p[PC_H] * p[PC_W];
        *weight = p[PC_K] * (p[PC_C] / p[PC_GROUPS]) * p[PC_R] * p[PC_S];
        *out = p[PC_N] * p[PC_K] * oh * ow;
        break;
    }
    case PS_OPK_NORM:
        *in = *out = p[PN_N] * p[PN_C] * p[PN_HW];
        *weight = 2 * p[PN_C];
        break;
    case PS_OPK_SOFTMAX: *in = *out = p[PS_ROWS] * p[PS_COLS]; break;
    case PS_OPK_ELTWISE:
        *in = p[PE_ELEMS] * p[PE_INPUTS];
        *out = p[PE_ELEMS];
        break;
    case PS_OPK_POOL: {
        int global = op->variant == PS_POOL_GLOBAL;
        long long oh = global ? 1 : psi_conv_out(p[PP_H], p[PP_WINDOW], p[PP_STRIDE], p[PP_WINDOW] / 2);
        long long ow = global ? 1 : psi_conv_out(p[PP_W], p[PP_WINDOW], p[PP_STRIDE], p[PP_WINDOW] / 2);
        *in = p[PP_N] * p[PP_C] * p[PP_H] * p[PP_W];
        *out = p[PP_N] * p[PP_C] * oh * ow;
        break;
    }
    case PS_OPK_ATTN:
        /* q and the output: batch*heads*seq_q*d; k and v: 2*batch*kv_heads*seq_kv*d */
        *in = p[PA_BATCH] * p[PA_HEADS] * p[PA_SEQ_Q] * p[PA_HEAD_DIM];
        *weight = 2 * p[PA_BATCH] * p[PA_KV_HEADS] * p[PA_SEQ_KV] * p[PA_HEAD_DIM];
        *out = *in;
        break;
    case PS_OPK_EMBED:
        *in = p[PM_ROWS];
        *weight = p[PM_VOCAB] * p[PM_DIM];
        *out = p[PM_ROWS] * p[PM_DIM];
        break;
    default: *in = *out = 0;
    }
}

double psi_op_flops(const psi_opdesc_t *op)
{
    const long long *p = op->p;
    long long in, w, out;
    psi_op_tensor_elems(op, &in, &w, &out);
    switch (op->kind) {
    case PS_OPK_GEMM: return 2.0 * (double)p[PG_BATCH] * (double)p[PG_M] * (double)p[PG_N] * (double)p[PG_K];
    case PS_OPK_CONV: return 2.0 * (double)out * (double)(p[PC_C] / p[PC_GROUPS]) * (double)p[PC_R] * (double)p[PC_S];
    case PS_OPK_NORM:
    case PS_OPK_SOFTMAX: return 5.0 * (double)out;
    case PS_OPK_ELTWISE: return (op->variant == PS_ELT_GELU || op->variant == PS_ELT_ROPE ? 8.0 : 1.0) * (double)out;
    case PS_OPK_POOL:
        return (op->variant == PS_POOL_GLOBAL ? 1.0 : (double)p[PP_WINDOW] * (double)p[PP_WINDOW]) *
               (double)(op->variant == PS_POOL_GLOBAL ? in : out);
    case PS_OPK_ATTN: {
        double pairs = (double)p[PA_SEQ_Q] * (double)p[PA_SEQ_KV] * (p[PA_CAUSAL] ? 0.5 : 1.0);
        return 4.0 * (double)p[PA_BATCH] * (double)p[PA_HEADS] * pairs * (double)p[PA_HEAD_DIM];
    }
    default: return 0.0;
    }
}

double psi_op_bytes(const psi_opdesc_t *op)
{
    long long in, w, out;
    psi_op_tensor_elems(op, &in, &w, &out);
    if (op->kind == PS_OPK_EMBED) /* only the gathered rows are read */
        return 2.0 * 2.0 * (double)out + 8.0 * (double)in;
    return 2.0 * ((double)in + (double)w + (double)out);
}
