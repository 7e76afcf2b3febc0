/*
 * The report's figures by SM split and by operator class, which a log-log
 * scatter cannot show: PairSight's error (MAPE) per split and per dominant
 * intensity class of the segment, and the slowdown (latency beside the
 * co-runner over the segment alone at the same TPCs) against the split,
 * observed and predicted side by side.
 */
#include "common/common.h"
#include "evaluate/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPLITS 32

/* The distinct HP TPC counts of the test rows, sorted, into t; returns the count. */
static int split_list(const psi_eval_results_t *r, int *t)
{
    int n = 0;
    for (size_t i = 0; i < r->n_test; i++) {
        int v = r->test_q[i].hp_tpcs, k = 0;
        while (k < n && t[k] != v)
            k++;
        if (k == n && n < MAX_SPLITS)
            t[n++] = v;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
            int x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return n;
}

static int split_index(const int *t, int n, int v)
{
    for (int k = 0; k < n; k++)
        if (t[k] == v)
            return k;
    return -1;
}

/* Sums per (split, quantity): 0 HP APE, 1 LP APE, 2 HP observed delta,
 * 3 HP predicted delta, 4 LP observed delta, 5 LP predicted delta; and per
 * (class, side) APE sums. Solo latencies come from ops at each side's TPCs. */
typedef struct {
    int n_splits, splits[MAX_SPLITS];
    double sum[MAX_SPLITS][6];
    size_t cnt[MAX_SPLITS];
    double cls_sum[3][2];
    size_t cls_cnt[3][2];
} split_acc_t;

static void accumulate(const psi_eval_results_t *r, const ps_ops_t *ops, split_acc_t *a)
{
    const double *ph = r->pred_hp[PS_METHOD_PAIRSIGHT], *pl = r->pred_lp[PS_METHOD_PAIRSIGHT];
    for (size_t i = 0; i < r->n_test; i++) {
        const ps_query_t *q = &r->test_q[i];
        double hq[PSI_REPORT_QTY], lq[PSI_REPORT_QTY];
        int hc, lc, k = split_index(a->splits, a->n_splits, q->hp_tpcs);
        if (k < 0 || psi_report_segment(ops, q, PS_SIDE_HP, hq, &hc) || psi_report_segment(ops, q, PS_SIDE_LP, lq, &lc))
            continue;
        double eh = psi_ape(ph[i], r->meas_hp[i]), el = psi_ape(pl[i], r->meas_lp[i]);
        double v[6] = {eh, el, r->meas_hp[i] / hq[0], ph[i] / hq[0], r->meas_lp[i] / lq[0], pl[i] / lq[0]};
        for (int j = 0; j < 6; j++)
            a->sum[k][j] += v[j];
        a->cnt[k]++;
        a->cls_sum[hc][0] += eh;
        a->cls_cnt[hc][0]++;
        a->cls_sum[lc][1] += el;
        a->cls_cnt[lc][1]++;
    }
}

/* The bars of n series over the splits: the mean of quantities
 * first..first+n-1 per split (APE in percent) into v[k * n + s], and the
 * splits' labels into gl; the caller names the y axis and the series. */
static psi_bars_t split_bars(const split_acc_t *a, char (*lab)[24], int first, int n, double *v, const char **gl)
{
    for (int k = 0; k < a->n_splits; k++) {
        gl[k] = lab[k];
        for (int s = 0; s < n; s++)
            v[k * n + s] = a->cnt[k] ? a->sum[k][first + s] / (double)a->cnt[k] : NAN;
    }
    return (psi_bars_t){
        .xlabel = "SM split: HP TPCs / LP TPCs", .ngroups = a->n_splits, .nseries = n, .glabels = gl, .v = v};
}

/* One chart over the splits (or the classes), and its caption. */
static void chart(FILE *f, const psi_report_meta_t *m, const psi_bars_t *b)
{
    psi_svg_bars(f, b);
    psi_report_caption(f, m, "test split");
}

static const char *const side_names[] = {"HP", "LP"}, *const side_colors[] = {"#d62728", "#1f77b4"};

/* The series of PairSight's error: HP and LP side by side, MAPE in percent. */
static void error_series(psi_bars_t *b)
{
    b->ylabel = "MAPE (%)";
    b->nseries = 2;
    b->snames = side_names;
    b->colors = side_colors;
}

static void fig_error_by_split(FILE *f, const split_acc_t *a, const psi_report_meta_t *m, char (*lab)[24])
{
    double v[MAX_SPLITS * 2];
    const char *gl[MAX_SPLITS];
    psi_bars_t b = split_bars(a, lab, 0, 2, v, gl);
    error_series(&b);
    fputs("<h2>PairSight's error per SM split</h2><p>Mean absolute percentage error of the test "
          "co-executions at each split (HP TPCs / LP TPCs); a log-log scatter hides an error of 5%.</p>\n",
          f);
    chart(f, m, &b);
}

static void fig_error_by_class(FILE *f, const split_acc_t *a, const psi_report_meta_t *m)
{
    static const char *const cls[] = {"compute (C)", "memory (M)", "unknown (?)"};
    double v[6];
    for (int c = 0; c < 3; c++)
        for (int s = 0; s < 2; s++)
            v[c * 2 + s] = a->cls_cnt[c][s] ? a->cls_sum[c][s] / (double)a->cls_cnt[c][s] : NAN;
    fprintf(f,
            "<h2>PairSight's error per operator class</h2><p>MAPE by the dominant intensity class of the "
            "predicted side's segment (the class holding most of its standalone time; unknown where the "
            "profile gives no class). Segments: HP %zu / %zu / %zu, LP %zu / %zu / %zu.</p>\n",
            a->cls_cnt[0][0], a->cls_cnt[1][0], a->cls_cnt[2][0], a->cls_cnt[0][1], a->cls_cnt[1][1], a->cls_cnt[2][1]);
    psi_bars_t b = {.xlabel = "dominant intensity class of the segment", .ngroups = 3, .glabels = cls, .v = v};
    error_series(&b);
    chart(f, m, &b);
}

static void fig_slowdown(FILE *f, const split_acc_t *a, const psi_report_meta_t *m, char (*lab)[24])
{
    char obs_hp[48], obs_lp[48];
    snprintf(obs_hp, sizeof obs_hp, "HP %s", m->latency_word);
    snprintf(obs_lp, sizeof obs_lp, "LP %s", m->latency_word);
    const char *names[] = {obs_hp, "HP predicted", obs_lp, "LP predicted"};
    static const char *const colors[] = {"#d62728", "#f4a6a6", "#1f77b4", "#9ec5e8"};
    double v[MAX_SPLITS * 4];
    const char *gl[MAX_SPLITS];
    psi_bars_t b = split_bars(a, lab, 2, 4, v, gl);
    b.ylabel = "slowdown (x)";
    b.snames = names;
    b.colors = colors;
    b.y0 = 1;
    fprintf(f,
            "<h2>Slowdown against the SM split, %s and predicted</h2><p>Mean slowdown (latency beside the "
            "co-runner over the segment alone at the same TPCs; 1 = none) of the test co-executions per "
            "split, %s beside PairSight's prediction.</p>\n",
            m->latency_word, m->latency_word);
    chart(f, m, &b);
}

void psi_report_split_figs(FILE *f, const psi_eval_results_t *r, const ps_ops_t *ops, const psi_report_meta_t *m)
{
    if (!r->test_q || !r->pred_hp[PS_METHOD_PAIRSIGHT] || !r->pred_lp[PS_METHOD_PAIRSIGHT])
        return;
    split_acc_t *a = psi_calloc(1, sizeof *a);
    if (!a)
        return;
    a->n_splits = split_list(r, a->splits);
    accumulate(r, ops, a);
    char lab[MAX_SPLITS][24];
    for (int k = 0; k < a->n_splits; k++) {
        int lp = -1;
        for (size_t i = 0; i < r->n_test && lp < 0; i++)
            if (r->test_q[i].hp_tpcs == a->splits[k])
                lp = r->test_q[i].lp_tpcs;
        snprintf(lab[k], sizeof lab[k], "%d/%d", a->splits[k], lp);
    }
    fig_error_by_split(f, a, m, lab);
    fig_error_by_class(f, a, m);
    fig_slowdown(f, a, m, lab);
    free(a);
}
