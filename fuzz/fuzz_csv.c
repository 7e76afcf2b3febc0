/* libFuzzer target: the streaming CSV tokenizer on arbitrary bytes. The
 * first byte chooses whether "==" lines are skipped. Every field it returns
 * must lie inside the record and be NUL-terminated without inner NULs. */
#include "common/common.h"
#include "profile/csv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    psi_csv_t *c = NULL;
    if (psi_csv_open_mem(data + 1, size - 1, "fuzz.csv", &c) != PS_OK)
        return 0;
    if (data[0] & 1)
        psi_csv_skip_prefix(c, "==");
    size_t last_line = 0;
    int rc;
    while ((rc = psi_csv_next(c)) == 1) {
        int nf = psi_csv_nfields(c);
        if (nf < 1)
            abort();
        for (int i = 0; i < nf; i++) {
            if (strlen(psi_csv_field(c, i)) != psi_csv_field_len(c, i))
                abort();
            if (psi_csv_field_line(c, i) < psi_csv_line(c))
                abort();
        }
        if (psi_csv_line(c) <= last_line)
            abort(); /* records move forward */
        last_line = psi_csv_line(c);
    }
    if (rc < 0 && strncmp(ps_last_error(), "fuzz.csv:", 9) != 0)
        abort(); /* every error names the input */
    psi_csv_close(c);
    return 0;
}
