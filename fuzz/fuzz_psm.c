/* libFuzzer target: the .psm loader (ps_model_load) on arbitrary bytes. A
 * refused file leaves *out NULL and names the file; an accepted one reports
 * its metadata. Nothing may crash, whatever reaches XGBoost (the section
 * checksums keep flipped bytes from it). */
#include "common/common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0])
        snprintf(path, sizeof path, "/dev/shm/psi_fuzz_psm.%ld", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    ps_model_t *m = (ps_model_t *)1;
    int rc = ps_model_load(path, &m);
    if (rc != PS_OK) {
        if (m != NULL || !strstr(ps_last_error(), path))
            abort();
    } else {
        ps_model_info_t info;
        if (ps_model_info(m, &info) != PS_OK || !info.gpu)
            abort();
        ps_model_free(m);
    }
    remove(path);
    return 0;
}
