/* libFuzzer target: the Nsight Compute CSV importer, both pages (the raw
 * page and the details page pivoted by launch ID), with the GPU given and
 * taken from the file, and a process and device chosen. An accepted input
 * gives a valid, indexed ops table; a refused one leaves nothing. */
#include "common/common.h"
#include "profile/profile_internal.h"

#include <stdint.h>
#include <stdlib.h>

static void one(const uint8_t *data, size_t size, const ps_import_params_t *p)
{
    psi_csv_t *c = NULL;
    if (psi_csv_open_mem(data, size, "fuzz.csv", &c) != PS_OK)
        return;
    ps_ops_t *t = (ps_ops_t *)1;
    ps_import_info_t info;
    int rc = psi_import_ncu_csv(c, p, &t, &info);
    psi_csv_close(c);
    if (rc != PS_OK && t != NULL)
        abort();
    if (rc == PS_OK && (t->n == 0 || t->n_groups != 1 || t->groups[0].n_ops != (int)t->n ||
                        info.ops != t->n || !(info.total_ns > 0)))
        abort();
    ps_ops_free(rc == PS_OK ? t : NULL);
}

/* Warnings (unknown GPU, dur 0) are expected here, not news. */
static void silent(ps_log_level_t level, const char *msg, void *user)
{
    (void)level, (void)msg, (void)user;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const ps_import_params_t given = {.gpu = "H200", .model = "fuzz", .batch = 1, .tpcs = 66};
    static const ps_import_params_t from_file = {.model = "fuzz", .batch = 1, .tpcs = 1,
                                                 .process = "4242", .device = "0"};
    ps_log_set(silent, NULL);
    one(data, size, &given);
    one(data, size, &from_file);
    return 0;
}
