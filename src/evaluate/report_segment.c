/* The per-segment quantities of the report's campaign figures (report.h),
 * read by report.c (Fig. 1c, Fig. 2) and report_split.c. */
#include "common/common.h"
#include "evaluate/report.h"

#include <math.h>

/* Per-segment quantities of one side of query x at its TPCs: 0 duration, 1
 * DRAM bytes, 2 L2 bytes (sums), 3-5 the three stall shares, 6 sm_pct, 7
 * mem_pct (duration-weighted means); and the dominant intensity class. */
int psi_report_segment(const ps_ops_t *ops, const ps_query_t *x, int side, double q[PSI_REPORT_QTY], int *cls)
{
    int hp = side == PS_SIDE_HP;
    int start = hp ? x->hp_start : x->lp_start, len = hp ? x->hp_len : x->lp_len;
    const psi_op_group_t *g = psi_ops_find(ops, x->gpu, hp ? x->hp_model : x->lp_model, hp ? x->hp_batch : x->lp_batch);
    if (!g)
        return -1;
    int k = psi_group_tpcs_index(g, hp ? x->hp_tpcs : x->lp_tpcs);
    if (k < 0 || !segment_fits(start, len, g->n_ops))
        return -1;
    double t[3] = {0, 0, 0}, wsum[PSI_REPORT_QTY] = {0};
    for (int j = 0; j < PSI_REPORT_QTY; j++)
        q[j] = 0;
    for (int i = start; i < start + len; i++) {
        double d = g->duration_ns[(size_t)i * (size_t)g->n_tpcs + (size_t)k];
        if (isnan(d))
            return -1;
        const psi_counters_t *c = &g->counters[i];
        double v[PSI_REPORT_QTY] = {d,
                                    c->dram_bytes,
                                    c->l2_bytes,
                                    c->stall_long_scoreboard,
                                    c->stall_lg_throttle,
                                    c->stall_mio_throttle,
                                    c->sm_pct,
                                    c->mem_pct};
        for (int j = 0; j < PSI_REPORT_QTY; j++) {
            if (isnan(v[j]))
                continue;
            double w = j < 3 ? 1 : d;
            q[j] += w * v[j];
            wsum[j] += w;
        }
        t[g->intensity[i] == PS_INTENSITY_COMPUTE ? 0 : g->intensity[i] == PS_INTENSITY_MEMORY ? 1 : 2] += d;
    }
    for (int j = 0; j < PSI_REPORT_QTY; j++) {
        if (wsum[j] == 0)
            q[j] = NAN;
        else if (j >= 3)
            q[j] /= wsum[j];
    }
    *cls = t[0] >= t[1] && t[0] >= t[2] ? 0 : t[1] >= t[2] ? 1 : 2;
    return 0;
}
