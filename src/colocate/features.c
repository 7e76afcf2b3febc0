/* Feature vectors of the co-location predictors. */
#include "colocate/colocate.h"

#include <math.h>

/* Mean of the finite values, NAN when there is none. */
static double nanmean_add(double *sum, int *n, double v)
{
    if (!isnan(v)) {
        *sum += v;
        (*n)++;
    }
    return *n ? *sum / *n : NAN;
}

/*
 * KACE (Han et al., SoCC'24, section 3.2): "we sum up the raw metrics (e.g.,
 * number of threads) and average out the metrics that are reported as
 * percentages (e.g., busy rate)". Counts and sizes: threads, registers,
 * static shared memory, memory footprint and the exclusive throughput;
 * percentages: SM/DRAM/memory throughput, SM and memory busy, and the warp
 * stall shares where measured. A sum with a missing member is missing.
 */
void psi_cl_sum_features(const cl_data_t *d, const cl_coloc_t *c, double *out)
{
    static const int sums[] = {CW_THREADS, CW_REGISTERS, CW_STATIC_SMEM, CW_MEMCAP, CW_EXCL};
    static const int means[] = {CW_SM_TPUT,  CW_DRAM_TPUT, CW_MEM_TPUT, CW_SM_BUSY,
                                CW_MEM_BUSY, CW_STALL_LS,  CW_STALL_LG, CW_STALL_MIO};
    int o = 0;
    for (unsigned j = 0; j < sizeof sums / sizeof sums[0]; j++) {
        double s = 0;
        for (int i = 0; i < c->k; i++)
            s += d->w[c->w[i]].f[sums[j]];
        out[o++] = s;
    }
    for (unsigned j = 0; j < sizeof means / sizeof means[0]; j++) {
        double s = 0, m = NAN;
        int n = 0;
        for (int i = 0; i < c->k; i++)
            m = nanmean_add(&s, &n, d->w[c->w[i]].f[means[j]]);
        out[o++] = m;
    }
}

/* Xu et al.: system metrics only (nvidia-smi busy rates and the memory
 * footprint), combined like KACE's, plus the busiest member's rates. */
void psi_cl_xu_features(const cl_data_t *d, const cl_coloc_t *c, double *out)
{
    double sm = 0, mem = 0, cap = 0, smax = -INFINITY, mmax = -INFINITY;
    int nsm = 0, nmem = 0;
    double msm = NAN, mmem = NAN;
    for (int i = 0; i < c->k; i++) {
        const double *f = d->w[c->w[i]].f;
        msm = nanmean_add(&sm, &nsm, f[CW_SM_BUSY]);
        mmem = nanmean_add(&mem, &nmem, f[CW_MEM_BUSY]);
        cap += f[CW_MEMCAP];
        if (f[CW_SM_BUSY] > smax)
            smax = f[CW_SM_BUSY];
        if (f[CW_MEM_BUSY] > mmax)
            mmax = f[CW_MEM_BUSY];
    }
    out[0] = msm;
    out[1] = mmem;
    out[2] = cap;
    out[3] = isinf(smax) ? NAN : smax;
    out[4] = isinf(mmax) ? NAN : mmax;
}

static double lg(double v) { return isnan(v) ? NAN : log1p(v); }

/*
 * How active the co-runners of `slot` are at their shares relative to their
 * full GPU: the mean over the k-1 others of solo(j, s_j) / solo(j, 100),
 * from their own scaling curves (1 at 100 % shares, 1 without co-runner).
 * The mps predictor scales its learned residual by it (docs/colocate.md).
 */
double psi_cl_mps_corunner_activity(const cl_data_t *d, const cl_coloc_t *c, int slot)
{
    double g = 0;
    int n = 0;
    for (int j = 0; j < c->k; j++)
        if (j != slot) {
            g += psi_cl_solo(d, c->w[j], c->share[j]) / psi_cl_solo(d, c->w[j], 100);
            n++;
        }
    return n ? g / n : 1;
}

/*
 * Our MPS interference features of the workload in `slot`: its own share,
 * solo throughput at that share (workload_scaling.csv) and metrics, and its
 * co-runners' pressure: how much of the GPU they claim (shares, and shares
 * weighted by busy rates), their memory footprint and their kernel metrics.
 * The co-runner part is a sum or mean over the k-1 others, so one model
 * serves any k; missing metrics stay NAN for the trees to route.
 */
void psi_cl_mps_features(const cl_data_t *d, const cl_coloc_t *c, int slot, double *out)
{
    const cl_workload_t *me = &d->w[c->w[slot]];
    const double *f = me->f;
    double solo = psi_cl_solo(d, c->w[slot], c->share[slot]);
    int o = 0;
    out[o++] = c->share[slot] / 100.0;
    out[o++] = log(solo);
    out[o++] = log(f[CW_EXCL]);
    out[o++] = solo / f[CW_EXCL];
    out[o++] = lg(f[CW_THREADS]);
    out[o++] = lg(f[CW_REGISTERS]);
    out[o++] = lg(f[CW_STATIC_SMEM]);
    out[o++] = f[CW_SM_TPUT];
    out[o++] = f[CW_DRAM_TPUT];
    out[o++] = f[CW_MEM_TPUT];
    out[o++] = f[CW_SM_BUSY];
    out[o++] = f[CW_MEM_BUSY];
    out[o++] = f[CW_MEMCAP];
    out[o++] = f[CW_STALL_LS];
    out[o++] = f[CW_STALL_LG];
    out[o++] = f[CW_STALL_MIO];

    double share_sum = 0, smw = 0, memw = 0, cap = 0, rel = 0, lex = 0, total = 0;
    double ms[6] = {0}, mv[6] = {NAN, NAN, NAN, NAN, NAN, NAN};
    int mn[6] = {0};
    for (int j = 0; j < c->k; j++) {
        total += c->share[j] / 100.0;
        if (j == slot)
            continue;
        const cl_workload_t *o2 = &d->w[c->w[j]];
        double s = c->share[j] / 100.0;
        share_sum += s;
        smw += s * (isnan(o2->f[CW_SM_BUSY]) ? 0 : o2->f[CW_SM_BUSY]) / 100.0;
        memw += s * (isnan(o2->f[CW_MEM_BUSY]) ? 0 : o2->f[CW_MEM_BUSY]) / 100.0;
        cap += isnan(o2->f[CW_MEMCAP]) ? 0 : o2->f[CW_MEMCAP];
        rel += psi_cl_solo(d, c->w[j], c->share[j]) / o2->f[CW_EXCL];
        lex += log(o2->f[CW_EXCL]);
        double v[6] = {o2->f[CW_SM_TPUT],     o2->f[CW_DRAM_TPUT],     o2->f[CW_MEM_TPUT],
                       lg(o2->f[CW_THREADS]), lg(o2->f[CW_REGISTERS]), o2->f[CW_STALL_LS]};
        for (int q = 0; q < 6; q++)
            mv[q] = nanmean_add(&ms[q], &mn[q], v[q]);
    }
    out[o++] = c->k - 1;
    out[o++] = share_sum;
    out[o++] = total > 1 ? total - 1 : 0;
    out[o++] = smw;
    out[o++] = memw;
    out[o++] = cap;
    out[o++] = rel;
    out[o++] = lex;
    for (int q = 0; q < 6; q++)
        out[o++] = c->k > 1 && mn[q] ? mv[q] : NAN;
    out[o++] = isnan(f[CW_SM_BUSY]) ? NAN : f[CW_SM_BUSY] / 100.0 * smw;
    out[o++] = isnan(f[CW_MEM_BUSY]) ? NAN : f[CW_MEM_BUSY] / 100.0 * memw;
}
