/*
 * Pieces of the HTML report (report.c) shared by its figure files: where
 * the data came from, axis ticks at round numbers, a grouped bar chart, and
 * the per-segment quantities of the campaign figures.
 */
#ifndef PS_EVALUATE_REPORT_H
#define PS_EVALUATE_REPORT_H

#include "evaluate/experiments.h"

#include <stdio.h>

/* Ticks of a logarithmic axis over [lo, hi] (lo > 0): the powers of ten,
 * and 2 and 5 times them where fewer than three decades fit. At most cap;
 * returns the count. */
int psi_log_ticks(double lo, double hi, double *ticks, int cap);

/* A duration in nanoseconds as "500 ns", "20 µs", "1.5 ms". */
void psi_time_label(char *buf, size_t n, double ns);

/* A grouped bar chart: ngroups groups along x, nseries bars each, values
 * v[g * nseries + s] (NAN: no bar); bars rise from y0. */
typedef struct {
    const char *ylabel, *xlabel;
    int ngroups, nseries;
    const char *const *glabels, *const *snames, *const *colors;
    const double *v;
    double y0;
} psi_bars_t;
void psi_svg_bars(FILE *f, const psi_bars_t *b);

/* The caption line that names the data under every figure. */
void psi_report_caption(FILE *f, const psi_report_meta_t *m, const char *what);

/* Per-segment quantities of side (PS_SIDE_HP or PS_SIDE_LP) of query x at
 * its TPCs (report_segment.c): 0 duration, 1 DRAM bytes, 2 L2 bytes (sums),
 * 3-5 the three stall shares, 6 sm_pct, 7 mem_pct (duration-weighted
 * means); *cls the dominant intensity class (0 compute, 1 memory, 2
 * unknown). -1 where ops does not profile the segment. */
#define PSI_REPORT_QTY 8
int psi_report_segment(const ps_ops_t *ops, const ps_query_t *x, int side, double q[PSI_REPORT_QTY], int *cls);

/* The figures by SM split and operator class (report_split.c): PairSight's
 * error per split and per class, and the slowdown against the split,
 * observed and predicted side by side. */
void psi_report_split_figs(FILE *f, const psi_eval_results_t *r, const ps_ops_t *ops, const psi_report_meta_t *m);

#endif
