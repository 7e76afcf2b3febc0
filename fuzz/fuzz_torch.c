/* libFuzzer target: the PyTorch Chrome trace importer, on the input as it
 * is and gzip-compressed (which must import the same), with the default and
 * the merged (--stream all, --drop-zero) stream choice. An accepted input
 * gives a valid, indexed ops table; a refused one leaves nothing. */
#include "common/common.h"
#include "profile/profile_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The import's rows, or (size_t)-1 when refused. */
static size_t one(const char *data, size_t size, const ps_import_params_t *p)
{
    ps_ops_t *t = (ps_ops_t *)1;
    int rc = psi_import_torch_bytes(data, size, "fuzz.json", p, &t, NULL);
    if (rc != PS_OK && t != NULL)
        abort();
    if (rc == PS_OK && (t->n == 0 || t->n_groups != 1 || t->groups[0].n_ops != (int)t->n))
        abort();
    size_t n = rc == PS_OK ? t->n : (size_t)-1;
    ps_ops_free(rc == PS_OK ? t : NULL);
    return n;
}

/* data as one gzip member, or NULL. */
static unsigned char *gzip_of(const uint8_t *data, size_t size, size_t *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&z, (uLong)size) + 32;
    unsigned char *buf = malloc(cap);
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)size;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    int zr = buf ? deflate(&z, Z_FINISH) : Z_MEM_ERROR;
    *out = cap - z.avail_out;
    deflateEnd(&z);
    if (zr != Z_STREAM_END) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Warnings (unknown GPU, dur 0) are expected here, not news. */
static void silent(ps_log_level_t level, const char *msg, void *user)
{
    (void)level, (void)msg, (void)user;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const ps_import_params_t p = {.gpu = "H200", .model = "fuzz", .batch = 1, .tpcs = 66};
    static const ps_import_params_t all = {.model = "fuzz", .batch = 1, .tpcs = 1, .stream = "all",
                                           .drop_zero = 1};
    ps_log_set(silent, NULL);
    size_t plain = one((const char *)data, size, &p);
    one((const char *)data, size, &all);
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b)
        return 0;
    size_t n = 0;
    unsigned char *gz = gzip_of(data, size, &n);
    if (gz && one((const char *)gz, n, &p) != plain)
        abort();
    free(gz);
    return 0;
}
