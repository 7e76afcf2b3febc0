/*
 * The report's axes and captions: ticks at round numbers (the steps of
 * matplotlib's default MaxNLocator, 1, 2, 2.5 and 5 times a power of ten,
 * and decades on logarithmic axes), a grouped bar chart, and the line under
 * every figure that names the GPU, the data's source, its seed and size.
 */
#include "common/common.h"
#include "evaluate/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Ticks at round numbers inside [lo, hi], at most max_ticks of them (and
 * never more than 16), the way matplotlib's default locator picks them: a
 * step of 1, 2, 2.5 or 5 times a power of ten. Returns the count. */
static int psi_nice_ticks(double lo, double hi, int max_ticks, double *ticks)
{
    static const double steps[] = {1, 2, 2.5, 5, 10};
    if (!(hi > lo) || max_ticks < 2) {
        ticks[0] = lo;
        return 1;
    }
    double raw = (hi - lo) / (max_ticks - 1), mag = pow(10, floor(log10(raw))), step = 10 * mag;
    for (int i = 0; i < 5; i++)
        if (steps[i] * mag >= raw * (1 - 1e-9)) {
            step = steps[i] * mag;
            break;
        }
    double first = ceil(lo / step - 1e-9) * step;
    int n = 0;
    for (; n < 16; n++) {
        double v = first + n * step;
        if (v > hi + step * 1e-9)
            break;
        ticks[n] = fabs(v) < step * 1e-9 ? 0 : v;
    }
    return n;
}

int psi_log_ticks(double lo, double hi, double *ticks, int cap)
{
    static const double mult[] = {1, 2, 5};
    int d0 = (int)floor(log10(lo)), d1 = (int)ceil(log10(hi));
    int every = log10(hi) - log10(lo) >= 2.5 ? 1 : 3, n = 0;
    for (int d = d0; d <= d1; d++)
        for (int k = 0; k < every; k++) {
            double v = mult[k] * pow(10, d);
            if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9) && n < cap)
                ticks[n++] = v;
        }
    return n;
}

/* A tick's label: "%g" without a trailing "e+0x" for values up to 1e6. */
static void psi_tick_label(char *buf, size_t n, double v)
{
    if (fabs(v) >= 1e6 || (v != 0 && fabs(v) < 1e-3))
        snprintf(buf, n, "%.3g", v);
    else
        snprintf(buf, n, "%.6g", v);
}

void psi_time_label(char *buf, size_t n, double ns)
{
    static const char *const unit[] = {"ns", "\xc2\xb5s", "ms", "s"};
    int u = 0;
    while (u < 3 && fabs(ns) >= 1000) {
        ns /= 1000;
        u++;
    }
    snprintf(buf, n, "%.4g %s", ns, unit[u]);
}

/* The plot area of a bar chart: its box in pixels (left, top, width,
 * height) and the values its y axis spans, from y0 at the bottom to y1. */
typedef struct {
    int L, T, W, H;
    double y0, y1;
} plot_t;

/* One bar of width w at x; a value outside the axis is clipped to it. */
static void bar(FILE *f, const plot_t *p, double x, double w, double v, const char *color)
{
    double y0 = p->y0, y1 = p->y1;
    double a = (v < y1 ? v : y1) - y0, b = 0;
    if (a < 0) {
        b = a;
        a = 0;
    }
    double py = p->T + p->H * (1 - a / (y1 - y0)), ph = p->H * (a - b) / (y1 - y0);
    fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'><title>%.3f</title></rect>", x, py, w, ph,
            color, v);
}

/* The y axis: ticks, grid lines and the label. */
static void bars_axis(FILE *f, const psi_bars_t *b, const plot_t *p)
{
    const int L = p->L, T = p->T, W = p->W, H = p->H;
    double t[16], y1 = p->y1;
    char lab[32];
    int nt = psi_nice_ticks(b->y0, y1, 6, t);
    for (int k = 0; k < nt; k++) {
        double py = T + H * (1 - (t[k] - b->y0) / (y1 - b->y0));
        psi_tick_label(lab, sizeof lab, t[k]);
        fprintf(f,
                "<line x1=%d y1='%.1f' x2=%d y2='%.1f' stroke='#ddd'/><text x=%d y='%.1f' font-size=11 "
                "text-anchor=end>%s</text>",
                L, py, L + W, py, L - 4, py + 4, lab);
    }
    fprintf(f, "<text x=14 y=%d font-size=12 text-anchor=middle transform='rotate(-90 14 %d)'>%s</text>", T + H / 2,
            T + H / 2, b->ylabel);
    fprintf(f, "<text x=%d y=%d font-size=12 text-anchor=middle>%s</text>", L + W / 2, T + H + 40, b->xlabel);
}

void psi_svg_bars(FILE *f, const psi_bars_t *b)
{
    const int L = 56, T = 10, H = 220, GW = 18 * b->nseries + 16 > 96 ? 18 * b->nseries + 16 : 96;
    const int W = GW * b->ngroups;
    double hi = b->y0;
    for (int i = 0; i < b->ngroups * b->nseries; i++)
        if (!isnan(b->v[i]) && b->v[i] > hi)
            hi = b->v[i];
    double t[16];
    int nt = psi_nice_ticks(b->y0, hi > b->y0 ? hi : b->y0 + 1, 6, t);
    double y1 = t[nt - 1] < hi ? t[nt - 1] + (t[nt - 1] - (nt > 1 ? t[nt - 2] : b->y0)) : t[nt - 1];
    if (!(y1 > b->y0))
        y1 = b->y0 + 1;
    fprintf(f, "<svg width=%d height=%d>", L + W + 170, T + H + 50);
    const plot_t p = {L, T, W, H, b->y0, y1};
    bars_axis(f, b, &p);
    fprintf(f, "<rect x=%d y=%d width=%d height=%d fill='none' stroke='#999'/>", L, T, W, H);
    for (int g = 0; g < b->ngroups; g++) {
        for (int s = 0; s < b->nseries; s++) {
            double v = b->v[g * b->nseries + s];
            if (!isnan(v))
                bar(f, &p, L + g * GW + (GW - 18 * b->nseries) / 2 + s * 18, 16, v, b->colors[s]);
        }
        fprintf(f, "<text x=%d y=%d font-size=11 text-anchor=middle>%s</text>", L + g * GW + GW / 2, T + H + 16,
                b->glabels[g]);
    }
    for (int s = 0; s < b->nseries; s++)
        fprintf(f, "<rect x=%d y=%d width=14 height=10 fill='%s'/><text x=%d y=%d font-size=12>%s</text>", L + W + 10,
                T + 10 + 18 * s, b->colors[s], L + W + 30, T + 19 + 18 * s, b->snames[s]);
    int below = 0;
    for (int i = 0; i < b->ngroups * b->nseries; i++)
        below += !isnan(b->v[i]) && b->v[i] < b->y0;
    if (below) /* a bar below the axis's origin hangs under it: say so */
        fprintf(f, "<text x=%d y=%d font-size=11 fill='#a00'>%d bars below %g: drawn under the axis</text>", L + W + 10,
                T + 28 + 18 * b->nseries, below, b->y0);
    fputs("</svg>\n", f);
}

void psi_report_caption(FILE *f, const psi_report_meta_t *m, const char *what)
{
    fputs("<p class=src>", f);
    for (const char *s = m->brief; *s; s++) {
        if (*s == '<' || *s == '&')
            fputs(*s == '<' ? "&lt;" : "&amp;", f);
        else
            fputc(*s, f);
    }
    if (what)
        fprintf(f, "; %s", what);
    fputs(".</p>\n", f);
}

/* The source sentence and the latency word of a campaign.json. */
static void meta_source(ps_json_doc_t *d, psi_report_meta_t *m)
{
    const char *src = psi_json_get_str(d, 0, "source"), *dev = psi_json_get_str(d, 0, "device");
    const char *s = src ? src : "";
    m->latency_word = "measured";
    if (strcmp(s, "twin") == 0) {
        snprintf(m->source, sizeof m->source, "simulated on the twin (pairsight simulate; no GPU measured)");
        m->latency_word = "simulated";
    } else if (strcmp(s, "collector") == 0) {
        snprintf(m->source, sizeof m->source, "measured by pairsight collect on %s", dev ? dev : m->gpu);
    } else {
        snprintf(m->source, sizeof m->source, "imported (%s)", *s ? s : "source not recorded");
    }
}

void psi_report_meta_read(const char *coexec_path, const ps_coexec_t *cx, psi_report_meta_t *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->gpu, sizeof m->gpu, "%s", cx && cx->n ? cx->rows[0].gpu : "unknown GPU");
    snprintf(m->source, sizeof m->source, "source unknown: no campaign.json beside the co-execution table");
    snprintf(m->seed, sizeof m->seed, "unknown");
    m->latency_word = "observed";
    char path[4096];
    const char *slash = coexec_path ? strrchr(coexec_path, '/') : NULL;
    snprintf(path, sizeof path, "%.*scampaign.json", slash ? (int)(slash - coexec_path + 1) : 0,
             coexec_path ? coexec_path : "");
    unsigned char *text = NULL;
    size_t len = 0;
    ps_json_doc_t d = {0};
    int have = coexec_path && psi_file_read_all(path, &text, &len) == 0 && ps_json_parse(&d, (char *)text, len) == 0;
    if (have) {
        const char *gpu = psi_json_get_str(&d, 0, "gpu");
        double seed;
        if (gpu)
            snprintf(m->gpu, sizeof m->gpu, "%s", gpu);
        if (psi_json_get_num(&d, 0, "seed", &seed) == 0)
            snprintf(m->seed, sizeof m->seed, "%.0f", seed);
        meta_source(&d, m);
    }
    ps_json_doc_free(&d);
    free(text);
    const char *kind = strcmp(m->latency_word, "simulated") == 0 ? "twin"
                       : strcmp(m->latency_word, "measured") == 0 && strncmp(m->source, "measured", 8) == 0
                           ? "collector"
                       : have ? "import"
                              : "source unknown";
    snprintf(m->brief, sizeof m->brief, "%s, %s, seed %s, %zu co-executions", m->gpu, kind, m->seed, cx ? cx->n : 0);
}
