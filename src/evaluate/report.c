/*
 * The results of the experiments as text tables, as JSON and as one
 * self-contained HTML page with inline SVG figures (nothing is fetched):
 * predicted against measured latency per method, error CDFs, the slowdown
 * heat map of HP segments against co-runners (the paper's Fig. 1c) and each
 * counter's correlation with delta for target and co-runner (Fig. 2).
 */
#include "common/common.h"
#include "evaluate/experiments.h"
#include "evaluate/report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const gen_groups[PS_GEN_GROUPS] = {"llama", "batch16", "batch64"};
static const char *const palette[PS_METHOD_COUNT] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd",
                                                     "#8c564b", "#ff7f0e", "#17becf", "#000000"};
/* The error CDFs' dash per method: fixed_cost (black) runs close to
 * intensity_rule_fit and pairsight, so it is dashed and marked. */
static const char *const cdf_dash[PS_METHOD_COUNT] = {"", "", "", "", "", "", "", "7 4"};

/* ---- text ---- */

static void fnum(FILE *f, double v, int width, int prec)
{
    if (isnan(v))
        fprintf(f, "%*s", width, "-");
    else
        fprintf(f, "%*.*f", width, prec, v);
}

/* The figures of an evaluation row, in the order Table I shows them (text,
 * HTML) and the JSON writes them: their JSON names and their decimals. */
enum { ROW_FIGS = 6 };
static const struct {
    const char *key;
    int prec;
} row_figs[ROW_FIGS] = {{"hp_mape", 2},       {"lp_mape", 2},       {"hp_within10", 1},
                        {"llama_hp_mape", 2}, {"train_seconds", 1}, {"query_us", 2}};

static void row_figures(const psi_eval_row_t *w, double v[ROW_FIGS])
{
    const double x[ROW_FIGS] = {w->hp_mape,       w->lp_mape,       w->hp_within10,
                                w->llama_hp_mape, w->train_seconds, w->query_us};
    memcpy(v, x, sizeof x);
}

/* A numeric column of a text table: its width and decimals. */
typedef struct {
    int width, prec;
} col_t;

/* The rest of a table's line: v[i] in column cols[i] ('-' for NAN), then
 * the newline. */
static void fnum_line(FILE *f, const double *v, const col_t *cols, int n)
{
    for (int i = 0; i < n; i++)
        fnum(f, v[i], cols[i].width, cols[i].prec);
    fputc('\n', f);
}

static const char *const cov_sets[PS_COV_SETS] = {"test", "long", "unseen"};

/* Table I: accuracy and cost per method. */
static void print_accuracy(const psi_eval_results_t *r, FILE *f)
{
    fprintf(f, "Table I: accuracy and cost on %zu test co-executions (MAPE %%)\n", r->n_test);
    fprintf(f, "%-16s %8s %8s %8s %9s %9s %10s\n", "method", "HP", "LP", "HP<=10%", "Llama HP", "train s", "query us");
    static const int width[ROW_FIGS] = {8, 9, 9, 10, 10, 11};
    col_t cols[ROW_FIGS];
    for (int k = 0; k < ROW_FIGS; k++)
        cols[k] = (col_t){width[k], row_figs[k].prec};
    for (int m = 0; m < PS_METHOD_COUNT; m++) {
        double v[ROW_FIGS];
        row_figures(&r->table1[m], v);
        fprintf(f, "%-16s ", r->table1[m].name);
        fnum_line(f, v, cols, ROW_FIGS);
    }
    fputc('\n', f);
}

/* Fig. 4: the ablation of the model input. */
static void print_ablation(const psi_eval_results_t *r, FILE *f)
{
    fprintf(f, "Fig. 4: ablation of the PairSight input (MAPE %%)\n");
    fprintf(f, "%-16s %8s %8s %9s\n", "input", "HP", "LP", "train s");
    static const col_t cols[] = {{8, 2}, {9, 2}, {10, 1}};
    for (int a = 0; a < PS_ABL_ROWS; a++) {
        const psi_eval_row_t *w = &r->ablation[a];
        const double v[] = {w->hp_mape, w->lp_mape, w->train_seconds};
        fprintf(f, "%-16s ", w->name);
        fnum_line(f, v, cols, 3);
    }
    fputc('\n', f);
}

/* Table II: generalization to unseen models and batch sizes. */
static void print_generalization(const psi_eval_results_t *r, FILE *f)
{
    fprintf(f, "Table II: generalization, trained on the classic models at default batch sizes (MAPE %%)\n");
    fprintf(f, "%-16s", "method");
    for (int g = 0; g < PS_GEN_GROUPS; g++)
        fprintf(f, " %8s-HP %8s-LP", gen_groups[g], gen_groups[g]);
    fputc('\n', f);
    for (int m = 0; m < PS_GEN_ROWS; m++) {
        fprintf(f, "%-16s", r->gen[m][0].name);
        for (int g = 0; g < PS_GEN_GROUPS; g++) {
            fnum(f, r->gen[m][g].hp_mape, 12, 2);
            fnum(f, r->gen[m][g].lp_mape, 12, 2);
        }
        fputc('\n', f);
    }
    fprintf(f, "%-16s", "test rows");
    for (int g = 0; g < PS_GEN_GROUPS; g++)
        fprintf(f, " %11zu %11s", r->gen[0][g].n, "");
    fprintf(f, "\n\n");
}

/* Long segments beyond the window. */
static void print_long(const psi_eval_results_t *r, FILE *f)
{
    fprintf(f, "Long segments beyond the window, SM splits absent from training (MAPE %%)\n");
    fprintf(f, "%-18s %8s %8s %10s %10s\n", "method", "HP", "LP", "asym HP", "asym LP");
    static const col_t cols[] = {{8, 2}, {9, 2}, {11, 2}, {11, 2}};
    for (int i = 0; i < PS_LONG_ROWS; i++) {
        const double v[] = {r->long_all[i].hp_mape, r->long_all[i].lp_mape, r->long_asym[i].hp_mape,
                            r->long_asym[i].lp_mape};
        fprintf(f, "%-18s ", r->long_all[i].name);
        fnum_line(f, v, cols, 4);
    }
    fprintf(f, "(%zu co-executions, %zu asymmetric)\n\n", r->long_all[0].n, r->long_asym[0].n);
}

/* The calibrated upper bounds: coverage and width per set and level. */
static void print_coverage(const psi_eval_results_t *r, FILE *f)
{
    fprintf(f, "Calibrated upper bounds: empirical coverage %% and mean width %% (above the point)\n");
    fprintf(f, "%-8s %6s %7s %9s %9s %9s %9s\n", "set", "target", "n", "HP cov", "LP cov", "HP width", "LP width");
    for (int s = 0; s < PS_COV_SETS; s++)
        for (int k = 0; k < PS_COV_LEVELS; k++) {
            const bound_cov_t *c = &r->cov[s][k];
            if (!c->n)
                continue;
            const double v[] = {c->hp_cover, c->lp_cover, c->hp_width, c->lp_width};
            fprintf(f, "%-8s %6.2f %7zu ", cov_sets[s], c->level, c->n);
            fnum_line(f, v, (const col_t[]){{9, 2}, {10, 2}, {10, 2}, {10, 2}}, 4);
        }
    fputc('\n', f);
}

void psi_eval_print(const psi_eval_results_t *r, FILE *f)
{
    if (r->done & PS_EXP_ACCURACY)
        print_accuracy(r, f);
    if (r->done & PS_EXP_ABLATION)
        print_ablation(r, f);
    if (r->done & PS_EXP_GENERALIZATION)
        print_generalization(r, f);
    if (r->done & PS_EXP_LONG)
        print_long(r, f);
    if (r->cov[0][0].n || r->cov[1][0].n || r->cov[2][0].n)
        print_coverage(r, f);
}

/* ---- JSON ---- */

static void jnum(cJSON *o, const char *k, double v)
{
    if (isnan(v) || isinf(v))
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, v);
}

static cJSON *jrow(const psi_eval_row_t *w)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    double v[ROW_FIGS];
    row_figures(w, v);
    for (int k = 0; k < ROW_FIGS; k++)
        jnum(o, row_figs[k].key, v[k]);
    cJSON_AddNumberToObject(o, "n", (double)w->n);
    return o;
}

char *psi_eval_json(const psi_eval_results_t *r)
{
    cJSON *root = cJSON_CreateObject();
    if (!root || !cJSON_AddStringToObject(root, "schema", "pairsight.eval.v1")) {
        cJSON_Delete(root);
        return NULL;
    }
    if (r->done & PS_EXP_ACCURACY) {
        cJSON *m = cJSON_AddObjectToObject(root, "methods");
        for (int i = 0; m && i < PS_METHOD_COUNT; i++)
            cJSON_AddItemToObject(m, r->table1[i].name, jrow(&r->table1[i]));
        cJSON_AddNumberToObject(root, "n_test", (double)r->n_test);
        cJSON_AddNumberToObject(root, "n_train", (double)r->n_train);
    }
    if (r->done & PS_EXP_ABLATION) {
        cJSON *a = cJSON_AddObjectToObject(root, "ablation");
        for (int i = 0; a && i < PS_ABL_ROWS; i++)
            cJSON_AddItemToObject(a, r->ablation[i].name, jrow(&r->ablation[i]));
    }
    if (r->done & PS_EXP_GENERALIZATION) {
        cJSON *g = cJSON_AddObjectToObject(root, "generalization");
        for (int k = 0; g && k < PS_GEN_GROUPS; k++) {
            cJSON *o = cJSON_AddObjectToObject(g, gen_groups[k]);
            for (int m = 0; o && m < PS_GEN_ROWS; m++)
                cJSON_AddItemToObject(o, r->gen[m][k].name, jrow(&r->gen[m][k]));
        }
    }
    if (r->done & PS_EXP_LONG) {
        cJSON *l = cJSON_AddObjectToObject(root, "long_segments");
        cJSON *a = l ? cJSON_AddObjectToObject(l, "all") : NULL;
        cJSON *s = l ? cJSON_AddObjectToObject(l, "asymmetric") : NULL;
        for (int i = 0; a && s && i < PS_LONG_ROWS; i++) {
            cJSON_AddItemToObject(a, r->long_all[i].name, jrow(&r->long_all[i]));
            cJSON_AddItemToObject(s, r->long_asym[i].name, jrow(&r->long_asym[i]));
        }
    }
    cJSON *cv = cJSON_AddObjectToObject(root, "coverage");
    for (int k = 0; cv && k < PS_COV_SETS; k++) {
        if (!r->cov[k][0].n)
            continue;
        cJSON *o = cJSON_AddObjectToObject(cv, cov_sets[k]);
        for (int j = 0; o && j < PS_COV_LEVELS; j++) {
            char key[16];
            snprintf(key, sizeof key, "%.2f", r->cov[k][j].level);
            cJSON *e = cJSON_AddObjectToObject(o, key);
            cJSON_AddNumberToObject(e, "n", (double)r->cov[k][j].n);
            jnum(e, "hp_coverage", r->cov[k][j].hp_cover);
            jnum(e, "lp_coverage", r->cov[k][j].lp_cover);
            jnum(e, "hp_width", r->cov[k][j].hp_width);
            jnum(e, "lp_width", r->cov[k][j].lp_width);
        }
    }
    char *out = psi_json_print(root, 0);
    cJSON_Delete(root);
    return out;
}

/* ---- HTML ---- */

static void html_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void hnum(FILE *f, double v, int prec)
{
    if (isnan(v))
        fputs("<td>-</td>", f);
    else
        fprintf(f, "<td>%.*f</td>", prec, v);
}

static void html_tables(FILE *f, const psi_eval_results_t *r)
{
    if (r->done & PS_EXP_ACCURACY) {
        fprintf(f,
                "<h2>Table I: accuracy and cost</h2><p>%zu test co-executions, %zu training samples. "
                "MAPE in percent; query time per candidate in batches of 1k.</p>\n",
                r->n_test, r->n_train);
        fputs("<table><tr><th>method</th><th>HP MAPE</th><th>LP MAPE</th><th>HP &le;10%</th>"
              "<th>Llama HP</th><th>train s</th><th>query &micro;s</th></tr>\n",
              f);
        for (int m = 0; m < PS_METHOD_COUNT; m++) {
            double v[ROW_FIGS];
            row_figures(&r->table1[m], v);
            fprintf(f, "<tr><td>%s</td>", r->table1[m].name);
            for (int k = 0; k < ROW_FIGS; k++)
                hnum(f, v[k], row_figs[k].prec);
            fputs("</tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    if (r->done & PS_EXP_ABLATION) {
        fputs("<h2>Fig. 4: ablation</h2><table><tr><th>input</th><th>HP MAPE</th><th>LP MAPE</th></tr>\n", f);
        for (int a = 0; a < PS_ABL_ROWS; a++) {
            fprintf(f, "<tr><td>%s</td>", r->ablation[a].name);
            hnum(f, r->ablation[a].hp_mape, 2);
            hnum(f, r->ablation[a].lp_mape, 2);
            fputs("</tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    if (r->done & PS_EXP_GENERALIZATION) {
        fputs("<h2>Table II: generalization</h2><p>Trained on the classic models at default batch sizes; "
              "the last rows continue training PairSight on k experiments per held-out group.</p>"
              "<table><tr><th rowspan=2>method</th>",
              f);
        for (int g = 0; g < PS_GEN_GROUPS; g++)
            fprintf(f, "<th colspan=2>%s (%zu)</th>", gen_groups[g], r->gen[0][g].n);
        fputs("</tr><tr>", f);
        for (int g = 0; g < PS_GEN_GROUPS; g++)
            fputs("<th>HP</th><th>LP</th>", f);
        fputs("</tr>\n", f);
        for (int m = 0; m < PS_GEN_ROWS; m++) {
            fprintf(f, "<tr><td>%s</td>", r->gen[m][0].name);
            for (int g = 0; g < PS_GEN_GROUPS; g++) {
                hnum(f, r->gen[m][g].hp_mape, 2);
                hnum(f, r->gen[m][g].lp_mape, 2);
            }
            fputs("</tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    if (r->done & PS_EXP_LONG) {
        fprintf(f,
                "<h2>Long segments</h2><p>%zu co-executions beyond the window under SM splits absent "
                "from training, %zu of them asymmetric.</p><table><tr><th>method</th><th>HP</th><th>LP</th>"
                "<th>asym HP</th><th>asym LP</th></tr>\n",
                r->long_all[0].n, r->long_asym[0].n);
        for (int i = 0; i < PS_LONG_ROWS; i++) {
            fprintf(f, "<tr><td>%s</td>", r->long_all[i].name);
            hnum(f, r->long_all[i].hp_mape, 2);
            hnum(f, r->long_all[i].lp_mape, 2);
            hnum(f, r->long_asym[i].hp_mape, 2);
            hnum(f, r->long_asym[i].lp_mape, 2);
            fputs("</tr>\n", f);
        }
        fputs("</table>\n", f);
    }
}

/* The log axes of a scatter panel of side S at offset P: ticks and grid
 * lines at the decades (and 2 and 5 times them over a short range). */
static void scatter_axes(FILE *f, double llo, double lhi, int S, int P)
{
    double t[32];
    char lab[32];
    int nt = psi_log_ticks(pow(10, llo), pow(10, lhi), t, 32);
    for (int k = 0; k < nt; k++) {
        double u = (log10(t[k]) - llo) / (lhi - llo);
        psi_time_label(lab, sizeof lab, t[k]);
        fprintf(f,
                "<line x1='%.1f' y1=0 x2='%.1f' y2=%d stroke='#e4e4e4'/><line x1=%d y1='%.1f' x2=%d y2='%.1f' "
                "stroke='#e4e4e4'/>",
                P + u * S, P + u * S, S, P, (1 - u) * S, P + S, (1 - u) * S);
        fprintf(f, "<text x='%.1f' y=%d font-size=9 text-anchor=middle>%s</text>", P + u * S, S + 12, lab);
        fprintf(f, "<text x=%d y='%.1f' font-size=9 text-anchor=end>%s</text>", P - 3, (1 - u) * S + 3, lab);
    }
}

/* Predicted against observed HP latency, one small panel per method, both
 * axes logarithmic over the observed range; at most 1500 points a panel. */
static void svg_scatter(FILE *f, const psi_eval_results_t *r, const psi_report_meta_t *meta)
{
    size_t n = r->n_test;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (r->meas_hp[i] < lo)
            lo = r->meas_hp[i];
        if (r->meas_hp[i] > hi)
            hi = r->meas_hp[i];
    }
    if (!(lo > 0) || !(hi > lo))
        return;
    double llo = log10(lo) - 0.05, lhi = log10(hi) + 0.05;
    size_t step = n > 1500 ? n / 1500 + 1 : 1;
    const int S = 260, P = 52;
    fprintf(f,
            "<h2>Predicted against %s HP latency</h2><p>One panel per method, HP MAPE in brackets; "
            "both axes logarithmic, the dashed line is a perfect prediction.</p><div class=grid>\n",
            meta->latency_word);
    for (int m = 0; m < PS_METHOD_COUNT; m++) {
        if (!r->pred_hp[m])
            continue;
        /* Margins of 10 above and 24 right, so that the corner tick labels
         * (the top one of the y axis, the last one of the x axis) are not
         * clipped by the panel's edge. */
        fprintf(f, "<svg width=%d height=%d viewBox='0 -10 %d %d'>", S + P + 24, S + 58, S + P + 24, S + 58);
        fprintf(f, "<rect x=%d y=0 width=%d height=%d fill='#fafafa' stroke='#999'/>", P, S, S);
        scatter_axes(f, llo, lhi, S, P);
        fprintf(f, "<line x1=%d y1=%d x2=%d y2=0 stroke='#888' stroke-dasharray='4 3'/>", P, S, P + S);
        size_t below = 0, above = 0;
        for (size_t i = 0; i < n; i++) {
            double pv = r->pred_hp[m][i];
            below += !(pv > 0) || log10(pv) < llo;
            above += pv > 0 && log10(pv) > lhi;
        }
        for (size_t i = 0; i < n; i += step) {
            double x = (log10(r->meas_hp[i]) - llo) / (lhi - llo);
            double pv = r->pred_hp[m][i] > 0 ? log10(r->pred_hp[m][i]) : llo;
            double y = (pv - llo) / (lhi - llo);
            if (y < 0) /* drawn on the axis, and counted in the panel's note */
                y = 0;
            if (y > 1)
                y = 1;
            fprintf(f, "<circle cx='%.1f' cy='%.1f' r='1.6' fill='%s' fill-opacity='0.5'/>", P + x * S, (1 - y) * S,
                    palette[m]);
        }
        fprintf(f, "<text x=%d y=14 font-size=13>%s (%.1f%%)</text>", P + 6, r->table1[m].name, r->table1[m].hp_mape);
        fprintf(f, "<text x=%d y=%d font-size=11 text-anchor=middle>%s HP latency (log)</text>", P + S / 2, S + 28,
                meta->latency_word);
        if (below || above)
            fprintf(f,
                    "<text x=%d y=%d font-size=10 fill='#a00' text-anchor=middle>%zu predictions below the axis, "
                    "%zu above: drawn on it</text>",
                    P + S / 2, S + 42, below, above);
        fprintf(f,
                "<text x=10 y=%d font-size=11 text-anchor=middle transform='rotate(-90 10 %d)'>predicted HP "
                "latency (log)</text></svg>\n",
                S / 2, S / 2);
    }
    fputs("</div>\n", f);
    psi_report_caption(f, meta, "test split");
}

/* Error CDFs of all methods in one plot per side, errors up to 50%. */
static void svg_cdf(FILE *f, const psi_eval_results_t *r, int side)
{
    size_t n = r->n_test;
    double *e = psi_malloc(n * sizeof *e);
    if (!e)
        return;
    const int W = 460, H = 280, P = 44;
    const double xmax = 50;
    const double *meas = side == PS_SIDE_HP ? r->meas_hp : r->meas_lp;
    fprintf(f,
            "<svg width=%d height=%d><text x=%d y=12 font-size=13>%s</text>"
            "<rect x=%d y=20 width=%d height=%d fill='#fafafa' stroke='#999'/>",
            W + P + 150, H + P + 20, P, side == PS_SIDE_HP ? "HP side" : "LP side", P, W, H);
    for (int t = 0; t <= 5; t++) {
        fprintf(f, "<text x=%.1f y=%d font-size=11 text-anchor=middle>%.0f%%</text>", P + W * t / 5.0, H + 36,
                xmax * t / 5);
        fprintf(f, "<text x=%d y=%.1f font-size=11 text-anchor=end>%.1f</text>", P - 4, 24 + H * (1 - t / 5.0),
                t / 5.0);
    }
    fprintf(f, "<text x=%d y=%d font-size=12 text-anchor=middle>absolute percentage error</text>", P + W / 2, H + 52);
    fprintf(f,
            "<text x=11 y=%d font-size=12 text-anchor=middle transform='rotate(-90 11 %d)'>fraction of test "
            "co-executions</text>",
            20 + H / 2, 20 + H / 2);
    int legend = 0;
    for (int m = 0; m < PS_METHOD_COUNT; m++) {
        const double *pred = side == PS_SIDE_HP ? r->pred_hp[m] : r->pred_lp[m];
        if (!pred)
            continue;
        psi_error_cdf(pred, meas, n, e);
        fprintf(f, "<polyline fill=none stroke='%s' stroke-width=2 stroke-dasharray='%s' points='", palette[m],
                cdf_dash[m]);
        size_t step = n > 400 ? n / 400 : 1;
        for (size_t i = 0; i < n; i += step) {
            double x = e[i] > xmax ? xmax : e[i];
            fprintf(f, "%.1f,%.1f ", P + W * x / xmax, 20 + H * (1 - (double)(i + 1) / (double)n));
        }
        double last = e[n - 1] > xmax ? xmax : e[n - 1];
        fprintf(f, "%.1f,%.1f'/>", P + W * last / xmax, 20.0);
        /* A dashed curve also gets square markers at the quartiles, so that
         * it stays apart where it runs on top of another. */
        for (int qk = 1; cdf_dash[m][0] && qk <= 3; qk++) {
            size_t i = (size_t)((double)n * qk / 4.0);
            double x = e[i < n ? i : n - 1] > xmax ? xmax : e[i < n ? i : n - 1];
            fprintf(f, "<rect x='%.1f' y='%.1f' width=6 height=6 fill='%s'/>", P + W * x / xmax - 3,
                    20 + H * (1 - (double)(i + 1) / (double)n) - 3, palette[m]);
        }
        fprintf(f,
                "<line x1=%d y1=%d x2=%d y2=%d stroke='%s' stroke-width=3 stroke-dasharray='%s'/>"
                "<text x=%d y=%d font-size=12>%s</text>",
                P + W + 8, 32 + 18 * legend, P + W + 26, 32 + 18 * legend, palette[m], cdf_dash[m], P + W + 30,
                36 + 18 * legend, r->table1[m].name);
        legend++;
    }
    fputs("</svg>\n", f);
    free(e);
}

/* ---- campaign figures: Fig. 1c heat map and Fig. 2 correlations ---- */

#define N_QTY PSI_REPORT_QTY
static const char *const qty_names[N_QTY] = {
    "duration",          "dram_bytes",         "l2_bytes", "stall_long_scoreboard",
    "stall_lg_throttle", "stall_mio_throttle", "sm_pct",   "mem_pct"};

static void svg_correlation(FILE *f, const ps_ops_t *ops, const ps_coexec_t *cx, const psi_report_meta_t *meta)
{
    size_t n = cx->n, m = 2 * n;
    double *delta = psi_malloc((m ? m : 1) * sizeof *delta);
    double *tq = psi_malloc((m ? m : 1) * N_QTY * sizeof *tq), *cq = psi_malloc((m ? m : 1) * N_QTY * sizeof *cq);
    double *col_t = psi_malloc((m ? m : 1) * sizeof *col_t), *col_c = psi_malloc((m ? m : 1) * sizeof *col_c);
    if (!delta || !tq || !cq || !col_t || !col_c)
        goto done;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const psi_coexec_row_t *r = &cx->rows[i];
        double hq[N_QTY], lq[N_QTY];
        int hc, lc;
        ps_query_t x = psi_query_of_row(r);
        if (psi_report_segment(ops, &x, PS_SIDE_HP, hq, &hc) != 0 ||
            psi_report_segment(ops, &x, PS_SIDE_LP, lq, &lc) != 0)
            continue;
        /* Each co-execution gives two (target, co-runner) pairs. */
        delta[k] = r->hp_ns / hq[0];
        memcpy(tq + k * N_QTY, hq, sizeof hq);
        memcpy(cq + k * N_QTY, lq, sizeof lq);
        k++;
        delta[k] = r->lp_ns / lq[0];
        memcpy(tq + k * N_QTY, lq, sizeof lq);
        memcpy(cq + k * N_QTY, hq, sizeof hq);
        k++;
    }
    double rt[N_QTY], rc[N_QTY];
    for (int j = 0; j < N_QTY; j++) {
        for (size_t i = 0; i < k; i++) {
            col_t[i] = tq[i * N_QTY + (size_t)j];
            col_c[i] = cq[i * N_QTY + (size_t)j];
        }
        rt[j] = psi_pearson(col_t, delta, k);
        rc[j] = psi_pearson(col_c, delta, k);
    }
    const int W = 700, H = 260, P = 56, B = W / N_QTY;
    fprintf(f,
            "<h2>Correlation of each counter with delta (Fig. 2)</h2><p>Pearson r over %zu (target, "
            "co-runner) pairs; segment sums for durations and bytes, duration-weighted means for "
            "percentages.</p>\n",
            k);
    fprintf(f, "<svg width=%d height=%d><line x1=%d y1=%d x2=%d y2=%d stroke='#444'/>", W + P + 140, H + 120, P,
            10 + H / 2, P + W, 10 + H / 2);
    for (int t = -2; t <= 2; t++)
        fprintf(f,
                "<line x1=%d y1='%.1f' x2=%d y2='%.1f' stroke='#e4e4e4'/><text x=%d y=%.1f font-size=11 "
                "text-anchor=end>%g</text>",
                P, 10 + H / 2.0 - t * H / 4.0, P + W, 10 + H / 2.0 - t * H / 4.0, P - 4, 14 + H / 2.0 - t * H / 4.0,
                t / 2.0);
    fprintf(f,
            "<text x=12 y=%d font-size=12 text-anchor=middle transform='rotate(-90 12 %d)'>Pearson r with "
            "the target's slowdown</text>",
            10 + H / 2, 10 + H / 2);
    for (int j = 0; j < N_QTY; j++) {
        double v[2] = {rt[j], rc[j]};
        for (int s = 0; s < 2; s++) {
            if (isnan(v[s]))
                continue;
            double h = fabs(v[s]) * H / 2;
            double y = v[s] >= 0 ? 10 + H / 2.0 - h : 10 + H / 2.0;
            fprintf(f, "<rect x=%d y=%.1f width=%d height=%.1f fill='%s'/>", P + j * B + 8 + s * (B / 2 - 6), y,
                    B / 2 - 10, h, s == 0 ? "#d62728" : "#1f77b4");
        }
        fprintf(f, "<text x=%d y=%d font-size=11 text-anchor=end transform='rotate(-35 %d %d)'>%s</text>",
                P + j * B + B / 2, H + 30, P + j * B + B / 2, H + 30, qty_names[j]);
    }
    fprintf(f,
            "<rect x=%d y=20 width=14 height=10 fill='#d62728'/><text x=%d y=29 font-size=12>target</text>"
            "<rect x=%d y=40 width=14 height=10 fill='#1f77b4'/><text x=%d y=49 font-size=12>co-runner</text>",
            P + W + 10, P + W + 30, P + W + 10, P + W + 30);
    fputs("</svg>\n", f);
    psi_report_caption(f, meta, "every co-execution of the campaign");
done:
    free(delta);
    free(tq);
    free(cq);
    free(col_t);
    free(col_c);
}

/* Fig. 1c: median HP slowdown of the most frequent HP segments (rows, by
 * their first operator) against co-runner models by intensity class
 * (columns). */
#define HM_ROWS 24
#define HM_COLS 16
typedef struct {
    char key[160];
    size_t count;
    int cls, id, rank;
} hm_key_t;

static int hm_find(hm_key_t *keys, size_t *n, size_t cap, const char *key, int cls)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(keys[i].key, key) == 0) {
            keys[i].count++;
            return (int)i;
        }
    if (*n >= cap)
        return -1;
    snprintf(keys[*n].key, sizeof keys[*n].key, "%s", key);
    keys[*n].count = 1;
    keys[*n].cls = cls;
    keys[*n].id = (int)*n;
    return (int)(*n)++;
}

static int cmp_hm_count(const void *a, const void *b)
{
    const hm_key_t *x = a, *y = b;
    if (x->count != y->count)
        return (x->count < y->count) - (x->count > y->count);
    return strcmp(x->key, y->key);
}

/* Rank of every key by count (rank[id]); the first `keep` stay. */
static void hm_rank(hm_key_t *keys, size_t n, int *rank_of_id)
{
    qsort(keys, n, sizeof *keys, cmp_hm_count);
    for (size_t i = 0; i < n; i++)
        rank_of_id[keys[i].id] = (int)i;
}

typedef struct {
    int h, c; /* key ids */
    double delta;
} hm_obs_t;

static const char hm_cls_tag[3] = {'C', 'M', '?'};

/* The heat map as it is built: the keys of its rows (HP segments) and
 * columns (co-runners), at most HM_CAP each, with each key id's rank by
 * count; the observations; and the cells drawn, the R most frequent rows by
 * the C most frequent columns. */
enum { HM_CAP = 4096 };
typedef struct {
    hm_key_t *hk, *ck; /* [HM_CAP] each, nh and nc used */
    size_t nh, nc;
    int *hrank, *crank; /* [HM_CAP] each, by key id */
    hm_obs_t *obs;      /* [cx->n], no used */
    size_t no;
    size_t R, C;
    size_t *cnt;  /* [R * C] observations per cell */
    double *cell; /* [R * C] their median delta */
} heatmap_t;

/* The heat map's observations: one (HP segment key, co-runner key, delta)
 * per row of cx whose segments ops profiles; keys go into hk and ck (at most
 * cap each). Returns the number of observations in obs. */
/* A kernel's name as a row label: "void at::native::vectorized_elementwise_kernel<4, ...>(...)"
 * becomes "vectorized_elementwise_kernel" (no return type, namespaces or
 * arguments), at most 40 characters. */
static void short_kernel(const char *name, char *out, size_t n)
{
    if (strncmp(name, "void ", 5) == 0)
        name += 5;
    size_t end = strcspn(name, "<(");
    const char *start = name;
    for (const char *p = name; p + 1 < name + end; p++)
        if (p[0] == ':' && p[1] == ':')
            start = p + 2;
    size_t len = (size_t)(name + end - start);
    snprintf(out, n, "%.*s", (int)(len > 40 ? 40 : len), start);
}

static size_t hm_collect(const ps_ops_t *ops, const ps_coexec_t *cx, heatmap_t *hm)
{
    size_t no = 0, cap = HM_CAP;
    hm_key_t *hk = hm->hk, *ck = hm->ck;
    size_t *nh = &hm->nh, *nc = &hm->nc;
    hm_obs_t *obs = hm->obs;
    char key[160], op[48];
    for (size_t i = 0; i < cx->n; i++) {
        const psi_coexec_row_t *r = &cx->rows[i];
        const psi_op_group_t *g = psi_ops_find(ops, r->gpu, r->hp_model, r->hp_batch);
        double hq[N_QTY], lq[N_QTY];
        int hc, lc;
        ps_query_t x = psi_query_of_row(r);
        if (!g || psi_report_segment(ops, &x, PS_SIDE_HP, hq, &hc) || psi_report_segment(ops, &x, PS_SIDE_LP, lq, &lc))
            continue;
        short_kernel(g->names[r->hp_start], op, sizeof op);
        snprintf(key, sizeof key, "%.60s/%d:%s%s", r->hp_model, r->hp_batch, op, r->hp_len > 1 ? "+" : "");
        int h = hm_find(hk, nh, cap, key, hc);
        snprintf(key, sizeof key, "%s (%c)", r->lp_model, hm_cls_tag[lc]);
        int c = hm_find(ck, nc, cap, key, lc);
        if (h >= 0 && c >= 0)
            obs[no++] = (hm_obs_t){h, c, r->hp_ns / hq[0]};
    }
    return no;
}

/* The median delta of each of the R x C cells (counting sort by cell) into
 * cell, their counts into cnt. */
static int hm_cells(heatmap_t *hm)
{
    const hm_obs_t *obs = hm->obs;
    const int *hrank = hm->hrank, *crank = hm->crank;
    size_t no = hm->no, R = hm->R, C = hm->C, *cnt = hm->cnt;
    double *cell = hm->cell;
    double *vals = psi_malloc((no ? no : 1) * sizeof *vals);
    size_t *start = psi_calloc(R * C + 1, sizeof *start);
    if (!vals || !start) {
        free(vals);
        free(start);
        return PS_E_NOMEM;
    }
    for (size_t i = 0; i < no; i++) {
        int rr = hrank[obs[i].h], cc = crank[obs[i].c];
        if (rr < (int)R && cc < (int)C)
            cnt[(size_t)rr * C + (size_t)cc]++;
    }
    for (size_t k = 0; k < R * C; k++)
        start[k + 1] = start[k] + cnt[k];
    for (size_t i = 0; i < no; i++) {
        int rr = hrank[obs[i].h], cc = crank[obs[i].c];
        if (rr < (int)R && cc < (int)C)
            vals[start[(size_t)rr * C + (size_t)cc]++] = obs[i].delta;
    }
    for (size_t k = 0; k < R * C; k++)
        cell[k] = psi_median(vals + start[k] - cnt[k], cnt[k]);
    free(start);
    free(vals);
    return 0;
}

/* The colour scale beside the heat map: slowdown 1 (white) to 2 and
 * beyond (dark red), ticks every 0.25. */
static void hm_scale(FILE *f, int x, int y)
{
    const int H = 200, N = 40;
    for (int k = 0; k < N; k++) {
        double t = 1 - (k + 0.5) / N;
        fprintf(f, "<rect x=%d y='%.1f' width=16 height='%.2f' fill='rgb(255,%d,%d)'/>", x, y + k * (double)H / N,
                (double)H / N + 0.3, (int)(255 * (1 - 0.85 * t)), (int)(255 * (1 - t)));
    }
    fprintf(f, "<rect x=%d y=%d width=16 height=%d fill='none' stroke='#999'/>", x, y, H);
    for (int k = 0; k <= 4; k++)
        fprintf(f, "<text x=%d y='%.1f' font-size=11>%s%.2f</text>", x + 20, y + H * (1 - k / 4.0) + 4,
                k == 4 ? "&ge;" : "", 1 + k * 0.25);
    fprintf(f, "<text x=%d y=%d font-size=11>slowdown</text>", x - 4, y - 8);
}

/* The R x C cells as SVG: white at delta 1 to dark red at delta 2 and
 * beyond, grey where nothing was measured. */
static void hm_draw(FILE *f, const heatmap_t *hm)
{
    const hm_key_t *hk = hm->hk, *ck = hm->ck;
    size_t R = hm->R, C = hm->C;
    const size_t *cnt = hm->cnt;
    const double *cell = hm->cell;
    const int CW = 44, CH = 18, LX = 420, TY = 130;
    fputs("<h2>HP slowdown against co-runners (Fig. 1c)</h2><p>Median slowdown (latency beside the co-runner "
          "over the segment alone at the same TPCs) of the most frequent HP segments (rows: model/batch:first "
          "operator, + when longer than one operator) beside each co-runner model (columns), over all SM splits. "
          "The letter in brackets is the dominant intensity class of the segment, the class that holds most of "
          "its standalone time: (C) compute-bound, (M) memory-bound, (?) unknown, where the profile gives no "
          "class for most of that time. Grey: no co-execution of that cell in the campaign.</p>\n",
          f);
    fprintf(f, "<svg width=%zu height=%zu>", LX + C * CW + 160, TY + R * CH + 40);
    hm_scale(f, (int)(LX + C * CW + 24), TY);
    for (size_t cc = 0; cc < C; cc++) {
        fprintf(f, "<text x=%zu y=%d font-size=11 transform='rotate(-50 %zu %d)'>", LX + cc * CW + CW / 2, TY - 6,
                LX + cc * CW + CW / 2, TY - 6);
        html_escape(f, ck[cc].key);
        fputs("</text>", f);
    }
    for (size_t rr = 0; rr < R; rr++) {
        fprintf(f, "<text x=%d y=%zu font-size=11 text-anchor=end>", LX - 6, TY + rr * CH + 13);
        html_escape(f, hk[rr].key);
        fprintf(f, " (%c)</text>", hm_cls_tag[hk[rr].cls]);
        for (size_t cc = 0; cc < C; cc++) {
            double v = cell[rr * C + cc];
            if (cnt[rr * C + cc] == 0) {
                fprintf(f, "<rect x=%zu y=%zu width=%d height=%d fill='#eee'/>", LX + cc * CW, TY + rr * CH, CW - 1,
                        CH - 1);
                continue;
            }
            double t = v - 1;
            t = t < 0 ? 0 : t > 1 ? 1 : t;
            int gg = (int)(255 * (1 - 0.85 * t)), bb = (int)(255 * (1 - t));
            fprintf(f,
                    "<rect x=%zu y=%zu width=%d height=%d fill='rgb(255,%d,%d)'><title>%.3f (%zu)</title>"
                    "</rect>",
                    LX + cc * CW, TY + rr * CH, CW - 1, CH - 1, gg, bb, v, cnt[rr * C + cc]);
            fprintf(f, "<text x=%zu y=%zu font-size=9 text-anchor=middle>%.2f</text>", LX + cc * CW + CW / 2,
                    TY + rr * CH + 12, v);
        }
    }
    fputs("</svg>\n", f);
}

static void svg_heatmap(FILE *f, const ps_ops_t *ops, const ps_coexec_t *cx, const psi_report_meta_t *meta)
{
    heatmap_t hm = {.hk = psi_calloc(HM_CAP, sizeof *hm.hk),
                    .ck = psi_calloc(HM_CAP, sizeof *hm.ck),
                    .hrank = psi_malloc(HM_CAP * sizeof *hm.hrank),
                    .crank = psi_malloc(HM_CAP * sizeof *hm.crank),
                    .obs = psi_malloc((cx->n ? cx->n : 1) * sizeof *hm.obs)};
    if (!hm.hk || !hm.ck || !hm.hrank || !hm.crank || !hm.obs)
        goto done;
    hm.no = hm_collect(ops, cx, &hm);
    if (hm.nh == 0 || hm.nc == 0)
        goto done;
    hm_rank(hm.hk, hm.nh, hm.hrank);
    hm_rank(hm.ck, hm.nc, hm.crank);
    hm.R = hm.nh < HM_ROWS ? hm.nh : HM_ROWS;
    hm.C = hm.nc < HM_COLS ? hm.nc : HM_COLS;
    hm.cnt = psi_calloc(hm.R * hm.C, sizeof *hm.cnt);
    hm.cell = psi_malloc(hm.R * hm.C * sizeof *hm.cell);
    if (hm.cnt && hm.cell && hm_cells(&hm) == 0)
        hm_draw(f, &hm);
    if (hm.cnt && hm.cell)
        psi_report_caption(f, meta, "every co-execution of the campaign");
done:
    free(hm.hk);
    free(hm.ck);
    free(hm.hrank);
    free(hm.crank);
    free(hm.obs);
    free(hm.cnt);
    free(hm.cell);
}

/* The first screen: which GPU, where the data came from, its seed and size. */
static void html_header(FILE *f, const psi_eval_results_t *r, const ps_coexec_t *cx, const psi_report_meta_t *m)
{
    fputs("<h1>PairSight evaluation on ", f);
    html_escape(f, m->gpu);
    fputs("</h1>\n<table class=meta><tr><th>GPU</th><td>", f);
    html_escape(f, m->gpu);
    fputs("</td></tr><tr><th>data</th><td>", f);
    html_escape(f, m->source);
    fprintf(f, "</td></tr><tr><th>campaign</th><td>seed %s, %zu co-executions", m->seed, cx->n);
    if (r->n_test)
        fprintf(f, "; %zu training samples, %zu test co-executions", r->n_train, r->n_test);
    fprintf(f, "</td></tr><tr><th>pairsight</th><td>%s</td></tr></table>\n", ps_version());
    /* scripts/replay_report.py puts the headline (LP throughput against the
     * dedicated GPU, from the replays) here, on the first screen. */
    fputs("<!-- pairsight:headline -->\n", f);
    if (strcmp(m->latency_word, "simulated") == 0)
        fputs("<p class=warn>Every latency in this report is simulated by the twin, not measured on a GPU: "
              "\"simulated\" marks them in each figure.</p>\n",
              f);
}

int psi_report_write(const psi_eval_results_t *r, const ps_ops_t *ops, const ps_coexec_t *cx,
                     const psi_report_meta_t *meta, const char *path)
{
    psi_report_meta_t own;
    const psi_report_meta_t *m = meta;
    if (!m) {
        psi_report_meta_read(NULL, cx, &own);
        m = &own;
    }
    psi_atomic_t *a = NULL;
    int rc = psi_atomic_open(path, &a);
    if (rc != 0)
        return rc;
    FILE *f = psi_atomic_stream(a);
    fputs("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>PairSight evaluation</title><style>"
          "body{font-family:sans-serif;margin:24px;max-width:1340px}table{border-collapse:collapse;margin:8px 0}"
          "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}td:first-child{text-align:left}"
          ".grid{display:flex;flex-wrap:wrap;gap:12px}h2{margin-top:28px}"
          "table.meta th,table.meta td{text-align:left}table.meta "
          "th{background:#f3f3f3}p.src{color:#555;font-size:13px;margin:2px 0 12px}"
          "p.warn{background:#fff4d6;border:1px solid #e0c060;padding:6px 10px;display:inline-block}"
          "</style></head><body>\n",
          f);
    html_header(f, r, cx, m);
    html_tables(f, r);
    if ((r->done & PS_EXP_ACCURACY) && r->n_test > 0) {
        svg_scatter(f, r, m);
        fputs("<h2>Error CDFs</h2><p>The share of test co-executions whose absolute percentage error is at most x, "
              "per method.</p><div class=grid>\n",
              f);
        svg_cdf(f, r, PS_SIDE_HP);
        svg_cdf(f, r, PS_SIDE_LP);
        fputs("</div>\n", f);
        psi_report_caption(f, m, "test split");
        psi_report_split_figs(f, r, ops, m);
    }
    svg_heatmap(f, ops, cx, m);
    svg_correlation(f, ops, cx, m);
    fputs("</body></html>\n", f);
    if (ferror(f)) {
        psi_atomic_abort(a);
        return psi_error(PS_E_IO, "%s: write failed", path);
    }
    return psi_atomic_commit(a);
}
