/*
 * fuzz_csv.c: libFuzzer target for the strict CSV reader (src/common/csv.c).
 *
 * The header is the observations table of `evident fit --observations`
 * (with its optional last column "role").  The first input byte picks the
 * mode: odd, the header line is put in front of the rest (so the fuzzer
 * spends its time on records); even, the rest is read as it is (headers
 * too).  Every record's every field is read raw and as an integer and a
 * double; the reader must stop with a verdict, never crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"

static const char *const header[] = {"op", "rows", "cols", "dtype", "default_rows", "schedule", "median_us"};
#define NCOLS (sizeof header / sizeof header[0])
static const char header_line[] = "op,rows,cols,dtype,default_rows,schedule,median_us\n";

/* libFuzzer's entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy;
    size_t n, col, rows = 0, pre;
    ev_csv *c = NULL;
    ev_err err;
    int have = 1;

    if (size == 0)
        return 0;
    pre = (data[0] & 1) ? sizeof header_line - 1 : 0;
    n = pre + size - 1;
    copy = malloc(n ? n : 1); /* exact size: ASan sees any overread */
    if (!copy)
        return 0;
    memcpy(copy, header_line, pre);
    memcpy(copy + pre, data + 1, size - 1);
    if (ev_csv_open(copy, n, header, NCOLS, "role", &c, &err) == EV_OK) {
        size_t ncols = ev_csv_ncols(c);
        if (ncols != NCOLS && ncols != NCOLS + 1)
            abort();
        while (have && rows++ < 100000) {
            if (ev_csv_next(c, &have, &err) != EV_OK || !have)
                break;
            for (col = 0; col < ncols; col++) {
                int64_t i64;
                double d;
                if (!ev_csv_field(c, col))
                    abort();
                (void)ev_csv_get_i64(c, col, &i64, &err);
                (void)ev_csv_get_double(c, col, &d, &err);
            }
        }
        ev_csv_close(c);
    }
    free(copy);
    return 0;
}
