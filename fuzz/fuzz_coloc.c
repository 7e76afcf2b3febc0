/* libFuzzer target: the co-location model loader (ps_coloc_model_load) on
 * arbitrary bytes. A refused file leaves *out NULL with a message; an
 * accepted one has a kind. Nothing may crash, whatever reaches XGBoost or
 * the MLP reader (the section checksums keep flipped bytes from them). */
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
        snprintf(path, sizeof path, "/dev/shm/psi_fuzz_coloc.%ld", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    ps_coloc_model_t *m = (ps_coloc_model_t *)1;
    int rc = ps_coloc_model_load(path, &m);
    if (rc != PS_OK) {
        if (m != NULL || !ps_last_error()[0])
            abort();
    } else {
        ps_coloc_model_free(m);
    }
    remove(path);
    return 0;
}
