/* libFuzzer target: the Nsight Compute CSV importer. An accepted input gives
 * a valid, indexed ops table; a refused one leaves nothing. */
#include "common/common.h"
#include "profile/profile_internal.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const ps_import_params_t p = {.gpu = "H200", .model = "fuzz", .batch = 1, .tpcs = 66};
    ps_csv_t *c = NULL;
    if (ps_csv_open_mem(data, size, "fuzz.csv", &c) != PS_OK)
        return 0;
    ps_ops_t *t = (ps_ops_t *)1;
    int rc = ps_import_ncu_csv(c, &p, &t);
    ps_csv_close(c);
    if (rc != PS_OK && t != NULL)
        abort();
    if (rc == PS_OK && (t->n == 0 || t->n_groups != 1 || t->groups[0].n_ops != (int)t->n))
        abort();
    ps_ops_free(rc == PS_OK ? t : NULL);
    return 0;
}
