/* The ratio table of a co-location predictor (model_internal.h): each
 * workload's median co-located / solo throughput ratio, which the ratio kind
 * predicts and the mps kind corrects. */
#include "colocate/colocate.h"

#include "common/common.h"
#include "colocate/model_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double psi_cl_model_ratio(const ps_coloc_model_t *m, const char *workload)
{
    for (int i = 0; i < m->n_ratio; i++)
        if (strcmp(m->ratio_name[i], workload) == 0)
            return m->ratio_med[i];
    return m->ratio_global;
}

/* The ratio of row i's workload over the other training co-locations, so
 * that the mps model learns the residual it will meet on unseen data. */
double psi_loo_ratio(const wrow_t *r, int n, int i, double global, double *buf)
{
    int k = 0;
    for (int j = 0; j < n; j++)
        if (r[j].w == r[i].w && r[j].c != r[i].c)
            buf[k++] = r[j].ratio;
    return k ? psi_median(buf, (size_t)k) : global;
}
