/* The import entry points of pairsight.h: the format picks the importer,
 * Nsight Compute CSV (import_ncu.c), PyTorch trace (import_torch.c) or
 * Nsight Systems SQLite export (import_nsys.c). */
#include "common/common.h"
#include "profile/profile_internal.h"

#include <string.h>

int ps_import_run(const char *format, const char *path, const ps_import_params_t *p, ps_ops_t **out,
                  ps_import_info_t *info)
{
    *out = NULL;
    if (info)
        memset(info, 0, sizeof *info);
    if (format && strcmp(format, "ncu") == 0)
        return psi_import_ncu_file(path, p, out, info);
    if (format && strcmp(format, "torch-trace") == 0)
        return psi_import_torch_file(path, p, out, info);
    if (format && strcmp(format, "nsys") == 0)
        return psi_import_nsys_file(path, p, out, info);
    return psi_error(PS_E_ARG, "import: unknown format '%s' (ncu, torch-trace or nsys)", format ? format : "");
}

int ps_import_ncu(const char *report_csv, const ps_import_params_t *p, ps_ops_t **out)
{
    return psi_import_ncu_file(report_csv, p, out, NULL);
}

int ps_import_nsys(const char *report_sqlite, const ps_import_params_t *p, ps_ops_t **out)
{
    return psi_import_nsys_file(report_sqlite, p, out, NULL);
}

int ps_import_torch_trace(const char *trace_json, const ps_import_params_t *p, ps_ops_t **out)
{
    return psi_import_torch_file(trace_json, p, out, NULL);
}
