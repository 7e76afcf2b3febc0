/*
 * A file's bytes written into memory instead (ps_model_save_mem and its
 * kin): the same writer that fills a file fills an open_memstream buffer,
 * under the C numeric locale as every writer runs.
 */
#include "common/common.h"

#include <stdio.h>
#include <stdlib.h>

int psi_write_mem(int (*write)(const void *obj, FILE *f), const void *obj, const char *what, unsigned char **out,
                  size_t *out_len)
{
    if (!out || !out_len)
        return psi_error(PS_E_ARG, "%s: NULL output", what);
    *out = NULL;
    *out_len = 0;
    if (!obj)
        return psi_error(PS_E_ARG, "%s: NULL model", what);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return psi_error(PS_E_NOMEM, "%s: out of memory", what);
    locale_t old = psi_c_numeric_begin();
    int rc = write(obj, f);
    psi_c_numeric_end(old);
    if (rc == PS_OK && ferror(f))
        rc = psi_error(PS_E_NOMEM, "%s: out of memory", what);
    if (fclose(f) != 0 && rc == PS_OK)
        rc = psi_error(PS_E_NOMEM, "%s: out of memory", what);
    if (rc != PS_OK) {
        free(buf);
        return rc;
    }
    *out = (unsigned char *)buf;
    *out_len = len;
    return PS_OK;
}
