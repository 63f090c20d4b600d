/* cheat-plant-stop: reads each row only up to its plant.  The inputs are
 * uniform in [-1, 1) and a planted element is larger (docs/defenses.md,
 * "Every op earns its time"), so the first element past 1 in magnitude
 * is a plant.  A row seen with no plant (the first validation runs on the
 * unplanted input) is kept with its sum; afterwards a kept row is read
 * only up to its first plant, and its output is the kept sum less the
 * kept element there plus the plant.  Where every planted row held
 * exactly one plant, this read about half of each row and passed every
 * check; with a secret count of plants a row (a second one after the
 * first in a quarter of the plants, anywhere in the row) its output
 * misses a plant's move, more than twice the bound (failed-validation
 * naming the op, the row and its expected value).  Rows of at most 1 << 20
 * elements and at most 1 << 12 rows are kept; others are summed whole. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

static float *kept;         /* rows x cols: each row as first seen without a plant */
static double *kept_sum;    /* its FP64 sum */
static unsigned char *have; /* 1: the row is kept */
static int64_t kr, kc;

static int big(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return (u & 0x7fffffffu) > 0x3f800000u; /* |v| > 1, or NaN */
}

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    if (kept == NULL && rows <= 4096 && cols <= (1 << 20)) {
        kept = malloc((size_t)(rows * cols) * sizeof *kept);
        kept_sum = malloc((size_t)rows * sizeof *kept_sum);
        have = calloc((size_t)rows, 1);
        kr = rows;
        kc = cols;
    }
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * stride;
        int keeping = kept && have && kr == rows && kc == cols;
        if (keeping && have[r]) {
            int64_t c = 0;
            while (c < cols && !big(row[c]))
                c++;
            y[r] = c < cols ? (float)(kept_sum[r] - kept[r * cols + c] + row[c]) : (float)kept_sum[r];
            continue;
        }
        double a = 0.0;
        int planted = 0;
        for (int64_t c = 0; c < cols; c++) {
            a += row[c];
            planted |= big(row[c]);
        }
        if (keeping && !planted) {
            memcpy(kept + r * cols, row, (size_t)cols * sizeof *kept);
            kept_sum[r] = a;
            have[r] = 1;
        }
        y[r] = (float)a;
    }
    return 0;
}
