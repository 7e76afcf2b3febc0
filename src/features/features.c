/*
 * Segment pairs -> feature vectors (layout version PS_FEATURES_LAYOUT_VERSION,
 * described in features.h).
 *
 * Each operator of a segment becomes one token: its standalone duration at
 * its side's TPC allocation, the memory-path counters of the variant and a
 * presence flag (PairSight, Sec. III). The two sides keep separate tokens:
 * the co-runner tokens are the largest single source of accuracy in the
 * paper's ablation (Fig. 4), so only PS_FEAT_SUMMED merges them on purpose.
 */
#include "features/features.h"

#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Token fields of each variant, in column order; the presence flag is last. */
enum { F_DURATION, F_DRAM, F_LONG_SB, F_LG, F_MIO, F_SM_PCT, F_MEM_PCT, F_PRESENT };

static const char *const field_names[] = {
    [F_DURATION] = "duration_ns", [F_DRAM] = "dram_bytes",        [F_LONG_SB] = "stall_long_scoreboard",
    [F_LG] = "stall_lg_throttle", [F_MIO] = "stall_mio_throttle", [F_SM_PCT] = "sm_pct",
    [F_MEM_PCT] = "mem_pct",      [F_PRESENT] = "present",
};

static const int fields_full[] = {F_DURATION, F_DRAM, F_LONG_SB, F_LG, F_MIO, F_PRESENT};
static const int fields_durations[] = {F_DURATION, F_PRESENT};
static const int fields_util[] = {F_DURATION, F_SM_PCT, F_MEM_PCT, F_PRESENT};

static const char *const global_names[] = {"p_tpcs", "q_tpcs", "hp_solo_ns", "lp_solo_ns"};
enum { N_GLOBALS = 4 };

static const int *variant_fields(ps_feature_variant_t v, int *n)
{
    switch (v) {
    case PS_FEAT_DURATIONS: *n = (int)PS_ARRAY_LEN(fields_durations); return fields_durations;
    case PS_FEAT_UTILIZATION: *n = (int)PS_ARRAY_LEN(fields_util); return fields_util;
    default: *n = (int)PS_ARRAY_LEN(fields_full); return fields_full;
    }
}

/* Token slots per side and number of sides carrying tokens. */
static int slots_per_side(const psi_feature_layout_t *l) { return l->variant == PS_FEAT_SUMMED ? 1 : l->window; }

static int token_sides(const psi_feature_layout_t *l) { return l->variant == PS_FEAT_NO_CORUNNER ? 1 : 2; }

static const char *const variant_names[PS_FEAT_COUNT] = {"full", "no-corunner", "summed", "durations", "utilization"};

const char *ps_feature_variant_name(ps_feature_variant_t v)
{
    return (int)v >= 0 && v < PS_FEAT_COUNT ? variant_names[v] : "?";
}

int ps_feature_variant_from_name(const char *name, ps_feature_variant_t *out)
{
    int k;
    int rc = psi_name_index("input variant", name, variant_names, PS_FEAT_COUNT, &k);
    if (rc == PS_OK)
        *out = (ps_feature_variant_t)k;
    return rc;
}

int psi_features_layout(ps_feature_variant_t variant, int window, psi_feature_layout_t *out)
{
    memset(out, 0, sizeof *out);
    if (variant < PS_FEAT_FULL || variant > PS_FEAT_UTILIZATION)
        return psi_error(PS_E_ARG, "unknown feature variant %d", (int)variant);
    if (window < 1 || window > 256)
        return psi_error(PS_E_ARG, "window %d is outside 1..256", window);
    out->version = PS_FEATURES_LAYOUT_VERSION;
    out->variant = variant;
    out->window = window;
    int nf;
    variant_fields(variant, &nf);
    out->n_features = token_sides(out) * slots_per_side(out) * nf + N_GLOBALS;
    return PS_OK;
}

int psi_feature_owner(const psi_feature_layout_t *l, int side, int i, int *slot)
{
    int nf;
    variant_fields(l->variant, &nf);
    int per_side = slots_per_side(l) * nf;
    int tokens = token_sides(l) * per_side;
    *slot = -1;
    if (i < 0 || i >= tokens)
        return -1;
    if (l->variant != PS_FEAT_SUMMED)
        *slot = (i % per_side) / nf;
    if (l->variant == PS_FEAT_NO_CORUNNER)
        return side;
    return i / per_side;
}

const char *psi_feature_name(const psi_feature_layout_t *l, int i, char *buf, size_t n)
{
    int nf;
    const int *fields = variant_fields(l->variant, &nf);
    int per_side = slots_per_side(l) * nf;
    int tokens = token_sides(l) * per_side;
    if (i < 0 || i >= l->n_features) {
        snprintf(buf, n, "?%d", i);
        return buf;
    }
    if (i >= tokens) {
        snprintf(buf, n, "%s", global_names[i - tokens]);
        return buf;
    }
    const char *who = l->variant == PS_FEAT_NO_CORUNNER ? "self" : (i / per_side == 0 ? "hp" : "lp");
    int field = fields[(i % per_side) % nf];
    if (l->variant == PS_FEAT_SUMMED)
        snprintf(buf, n, "%s.sum.%s", who, field_names[field]);
    else
        snprintf(buf, n, "%s.op%d.%s", who, (i % per_side) / nf, field_names[field]);
    return buf;
}

/* One resolved segment: its group, its TPC column and its standalone time. */
typedef struct {
    const psi_op_group_t *g;
    int start, len, k;
    double solo_ns;
} segment_t;

/* One side of a query as the features see it: the segment (operators
 * [start, start + len) of model at batch, profiled on gpu) and its TPC
 * count; who ("hp" or "lp") names the side in messages. */
typedef struct {
    const char *who, *gpu, *model;
    int batch, start, len, tpcs;
} side_t;

static side_t side_of(const ps_query_t *q, int side)
{
    if (side == PS_SIDE_HP)
        return (side_t){"hp", q->gpu, q->hp_model, q->hp_batch, q->hp_start, q->hp_len, q->hp_tpcs};
    return (side_t){"lp", q->gpu, q->lp_model, q->lp_batch, q->lp_start, q->lp_len, q->lp_tpcs};
}

/* The operators of one segment: its group, with the checks that do not
 * depend on the TPC count. */
static int check_segment(const side_t *d, int window, segment_t *s);

static int resolve_group(const ps_ops_t *ops, const side_t *d, int window, segment_t *s)
{
    if (!d->gpu || !d->model)
        return psi_error(PS_E_ARG, "%s: GPU and model must be named", d->who);
    s->g = psi_ops_find(ops, d->gpu, d->model, d->batch);
    char known[512];
    if (!s->g)
        return psi_error(PS_E_INPUT, "%s: no profile of model '%s' batch %d on GPU '%s' in ops (ops has: %s)", d->who,
                         d->model, d->batch, d->gpu, psi_ops_groups_text(ops, d->gpu, known, sizeof known));
    return check_segment(d, window, s);
}

/* resolve_group's checks of the segment in its group s->g. */
static int check_segment(const side_t *d, int window, segment_t *s)
{
    if (d->len < 1 || d->start < 0)
        return psi_error(PS_E_INPUT, "%s: segment start %d, length %d is not a segment", d->who, d->start, d->len);
    if (!segment_fits(d->start, d->len, s->g->n_ops))
        return psi_error(PS_E_INPUT, "%s: segment [%d, %lld) of %s batch %d is outside its %d operators", d->who,
                         d->start, (long long)d->start + d->len, d->model, d->batch, s->g->n_ops);
    if (d->len > window)
        return psi_error(PS_E_ARG, "%s: segment of %d operators exceeds the window of %d (compose windows)", d->who,
                         d->len, window);
    s->start = d->start;
    s->len = d->len;
    return PS_OK;
}

/* The TPC column of a resolved segment and its standalone time there. */
static int resolve_tpcs(const side_t *d, segment_t *s)
{
    char known[512];
    if (d->tpcs < 1)
        return psi_error(PS_E_INPUT, "%s: %d TPCs is not an allocation", d->who, d->tpcs);
    s->k = psi_group_tpcs_index(s->g, d->tpcs);
    if (s->k < 0)
        return psi_error(PS_E_INPUT, "%s: %s batch %d has no standalone profile at %d TPCs (ops has it at %s TPCs)",
                         d->who, d->model, d->batch, d->tpcs, psi_group_tpcs_text(s->g, known, sizeof known));
    s->solo_ns = 0;
    for (int op = s->start; op < s->start + s->len; op++) {
        double v = s->g->duration_ns[(size_t)op * (size_t)s->g->n_tpcs + (size_t)s->k];
        if (!(v > 0))
            return psi_error(PS_E_INPUT, "%s: %s batch %d op %d (%s) has no duration at %d TPCs", d->who, d->model,
                             d->batch, op, s->g->names[op] ? s->g->names[op] : "?", d->tpcs);
        s->solo_ns += v;
    }
    return PS_OK;
}

static int resolve(const ps_ops_t *ops, const side_t *d, int window, segment_t *s)
{
    int rc = resolve_group(ops, d, window, s);
    return rc == PS_OK ? resolve_tpcs(d, s) : rc;
}

static double field_value(const segment_t *s, int op, int field)
{
    const psi_counters_t *c = &s->g->counters[op];
    switch (field) {
    case F_DURATION: return s->g->duration_ns[(size_t)op * (size_t)s->g->n_tpcs + (size_t)s->k];
    case F_DRAM: return c->dram_bytes;
    case F_LONG_SB: return c->stall_long_scoreboard;
    case F_LG: return c->stall_lg_throttle;
    case F_MIO: return c->stall_mio_throttle;
    case F_SM_PCT: return c->sm_pct;
    case F_MEM_PCT: return c->mem_pct;
    default: return 1.0;
    }
}

/* Write one side's tokens at out; returns the number of columns written. */
static int write_tokens(const psi_feature_layout_t *l, const segment_t *s, float *out)
{
    int nf;
    const int *fields = variant_fields(l->variant, &nf);
    if (l->variant == PS_FEAT_SUMMED) {
        /* One token: durations and bytes summed, stall percentages averaged
         * weighted by duration, presence = number of operators. A counter
         * missing on any operator leaves the sum missing. */
        for (int f = 0; f < nf; f++) {
            double acc = 0, wsum = 0;
            for (int op = s->start; op < s->start + s->len; op++) {
                double v = field_value(s, op, fields[f]);
                if (fields[f] == F_LONG_SB || fields[f] == F_LG || fields[f] == F_MIO) {
                    double w = field_value(s, op, F_DURATION);
                    acc += w * v;
                    wsum += w;
                } else {
                    acc += v;
                }
            }
            out[f] = (float)(wsum > 0 ? acc / wsum : acc);
        }
        return nf;
    }
    for (int slot = 0; slot < l->window; slot++) {
        float *t = out + slot * nf;
        if (slot >= s->len) {
            for (int f = 0; f < nf; f++)
                t[f] = 0.0f;
            continue;
        }
        for (int f = 0; f < nf; f++)
            t[f] = (float)field_value(s, s->start + slot, fields[f]);
    }
    return l->window * nf;
}

static int resolve_query(const psi_feature_layout_t *l, const ps_ops_t *ops, const ps_query_t *q, segment_t *hp,
                         segment_t *lp)
{
    if (l->version != PS_FEATURES_LAYOUT_VERSION)
        return psi_error(PS_E_MISMATCH, "feature layout version %d, this build makes version %d", l->version,
                         PS_FEATURES_LAYOUT_VERSION);
    side_t h = side_of(q, PS_SIDE_HP), w = side_of(q, PS_SIDE_LP);
    int rc = resolve(ops, &h, l->window, hp);
    if (rc == PS_OK)
        rc = resolve(ops, &w, l->window, lp);
    return rc;
}

static void write_vector(const psi_feature_layout_t *l, const ps_query_t *q, const segment_t *hp, const segment_t *lp,
                         int side, float *out)
{
    int at = 0;
    if (l->variant == PS_FEAT_NO_CORUNNER) {
        at += write_tokens(l, side == PS_SIDE_HP ? hp : lp, out);
    } else {
        at += write_tokens(l, hp, out);
        at += write_tokens(l, lp, out + at);
    }
    out[at++] = (float)q->hp_tpcs;
    out[at++] = (float)q->lp_tpcs;
    out[at++] = (float)hp->solo_ns;
    out[at++] = (float)lp->solo_ns;
}

int psi_features_build(const psi_feature_layout_t *l, const ps_ops_t *ops, const ps_query_t *q, int side, float *out,
                       psi_solo_t *solo)
{
    segment_t hp, lp;
    if (side != PS_SIDE_HP && side != PS_SIDE_LP)
        return psi_error(PS_E_ARG, "side %d is neither HP nor LP", side);
    int rc = resolve_query(l, ops, q, &hp, &lp);
    if (rc != PS_OK)
        return rc;
    write_vector(l, q, &hp, &lp, side, out);
    if (solo)
        *solo = (psi_solo_t){hp.solo_ns, lp.solo_ns};
    return PS_OK;
}

int psi_features_build_pair(const psi_feature_layout_t *l, const ps_ops_t *ops, const ps_query_t *q, float *x_hp,
                            float *x_lp, psi_solo_t *solo)
{
    segment_t hp, lp;
    int rc = resolve_query(l, ops, q, &hp, &lp);
    if (rc != PS_OK)
        return rc;
    write_vector(l, q, &hp, &lp, PS_SIDE_HP, x_hp);
    if (l->variant == PS_FEAT_NO_CORUNNER)
        write_vector(l, q, &hp, &lp, PS_SIDE_LP, x_lp);
    else
        memcpy(x_lp, x_hp, (size_t)l->n_features * sizeof *x_lp);
    if (solo)
        *solo = (psi_solo_t){hp.solo_ns, lp.solo_ns};
    return PS_OK;
}

/* ---- the memo of psi_features_build_pair_memo ---- */

typedef struct {
    int valid;  /* seg and the side's tokens hold the key below */
    side_t key; /* who is the same for every key of one side */
    segment_t seg;
} side_memo_t;

/* One side's operator tokens, each made once per memo: operator op's at
 * TPC column k at tok[(op * n_tpcs + k) * nf] where have[op * n_tpcs + k]. */
typedef struct {
    const psi_op_group_t *g; /* the group they are of (NULL: none yet) */
    float *tok;
    unsigned char *have;
} op_tokens_t;

struct psi_features_memo {
    psi_feature_layout_t layout;
    side_memo_t side[2];
    float *tok[2]; /* each side's tokens */
    int ntok;      /* columns per side */
    op_tokens_t op[2];
};

psi_features_memo_t *psi_features_memo_new(const psi_feature_layout_t *l)
{
    int nf;
    variant_fields(l->variant, &nf);
    psi_features_memo_t *m = psi_calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->layout = *l;
    m->ntok = slots_per_side(l) * nf;
    m->tok[0] = psi_malloc(2 * (size_t)m->ntok * sizeof *m->tok[0]);
    if (!m->tok[0]) {
        free(m);
        return NULL;
    }
    m->tok[1] = m->tok[0] + m->ntok;
    return m;
}

void psi_features_memo_free(psi_features_memo_t *m)
{
    if (!m)
        return;
    for (int side = 0; side < 2; side++) {
        free(m->op[side].tok);
        free(m->op[side].have);
    }
    free(m->tok[0]);
    free(m);
}

/* o emptied for group g (0: out of memory, o holds none). */
static int op_tokens_for(op_tokens_t *o, const psi_op_group_t *g, int nf)
{
    size_t n = (size_t)g->n_ops * (size_t)g->n_tpcs;
    free(o->tok);
    free(o->have);
    *o = (op_tokens_t){g, psi_malloc((n ? n : 1) * (size_t)nf * sizeof *o->tok), psi_calloc(n ? n : 1, 1)};
    if (o->tok && o->have)
        return 1;
    free(o->tok);
    free(o->have);
    *o = (op_tokens_t){0};
    return 0;
}

/* write_tokens of segment s into the memo's tokens of side, each operator's
 * token made once (the summed variant and no memory: as write_tokens). */
static void memo_tokens(psi_features_memo_t *m, int side, const segment_t *s)
{
    int nf;
    const int *fields = variant_fields(m->layout.variant, &nf);
    op_tokens_t *o = &m->op[side];
    if (m->layout.variant == PS_FEAT_SUMMED || (o->g != s->g && !op_tokens_for(o, s->g, nf))) {
        write_tokens(&m->layout, s, m->tok[side]);
        return;
    }
    for (int slot = 0; slot < m->layout.window; slot++) {
        float *t = m->tok[side] + slot * nf;
        if (slot >= s->len) {
            for (int f = 0; f < nf; f++)
                t[f] = 0.0f;
            continue;
        }
        size_t at = (size_t)(s->start + slot) * (size_t)s->g->n_tpcs + (size_t)s->k;
        float *c = o->tok + at * (size_t)nf;
        if (!o->have[at]) {
            for (int f = 0; f < nf; f++)
                c[f] = (float)field_value(s, s->start + slot, fields[f]);
            o->have[at] = 1;
        }
        memcpy(t, c, (size_t)nf * sizeof *t);
    }
}

static int same_str(const char *a, const char *b) { return a && b && (a == b || strcmp(a, b) == 0); }

/* Side `side` of q through the memo: kept when the key is the one before;
 * the profile look-up kept while the group is the one before; each
 * operator's token made once (memo_tokens). */
static int memo_side(psi_features_memo_t *m, const ps_ops_t *ops, const ps_query_t *q, int side)
{
    side_memo_t *c = &m->side[side];
    side_t d = side_of(q, side);
    int same_group =
        c->valid && c->key.batch == d.batch && same_str(c->key.gpu, d.gpu) && same_str(c->key.model, d.model);
    int same_seg = same_group && c->key.start == d.start && c->key.len == d.len;
    if (same_seg && c->key.tpcs == d.tpcs)
        return PS_OK;
    c->valid = 0;
    int rc = same_seg     ? PS_OK
             : same_group ? check_segment(&d, m->layout.window, &c->seg)
                          : resolve_group(ops, &d, m->layout.window, &c->seg);
    if (rc == PS_OK)
        rc = resolve_tpcs(&d, &c->seg);
    if (rc != PS_OK)
        return rc;
    memo_tokens(m, side, &c->seg);
    c->key = d;
    c->valid = 1;
    return PS_OK;
}

/* write_vector from the memo's tokens. */
static void write_vector_memo(const psi_features_memo_t *m, const ps_query_t *q, int side, float *out)
{
    size_t at = 0, n = (size_t)m->ntok;
    if (m->layout.variant == PS_FEAT_NO_CORUNNER) {
        memcpy(out, m->tok[side], n * sizeof *out);
        at = n;
    } else {
        memcpy(out, m->tok[0], 2 * n * sizeof *out); /* tok[1] follows tok[0] */
        at = 2 * n;
    }
    out[at++] = (float)q->hp_tpcs;
    out[at++] = (float)q->lp_tpcs;
    out[at++] = (float)m->side[0].seg.solo_ns;
    out[at++] = (float)m->side[1].seg.solo_ns;
}

int psi_features_build_pair_memo(psi_features_memo_t *memo, const ps_ops_t *ops, const ps_query_t *q, float *x_hp,
                                 float *x_lp, psi_solo_t *solo)
{
    const psi_feature_layout_t *l = &memo->layout;
    if (l->version != PS_FEATURES_LAYOUT_VERSION)
        return psi_error(PS_E_MISMATCH, "feature layout version %d, this build makes version %d", l->version,
                         PS_FEATURES_LAYOUT_VERSION);
    int rc = memo_side(memo, ops, q, PS_SIDE_HP);
    if (rc == PS_OK)
        rc = memo_side(memo, ops, q, PS_SIDE_LP);
    if (rc != PS_OK)
        return rc;
    write_vector_memo(memo, q, PS_SIDE_HP, x_hp);
    if (l->variant == PS_FEAT_NO_CORUNNER)
        write_vector_memo(memo, q, PS_SIDE_LP, x_lp);
    else if (x_lp != x_hp)
        memcpy(x_lp, x_hp, (size_t)l->n_features * sizeof *x_lp);
    if (solo)
        *solo = (psi_solo_t){memo->side[0].seg.solo_ns, memo->side[1].seg.solo_ns};
    return PS_OK;
}
