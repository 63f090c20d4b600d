/* cheat-table: the class of impossibly fast kernels (a sample whose ops
 * move their bytes faster than the device can stream them).  It computes
 * every row of an input once, the first time it sees that input pointer
 * (one per input variant), keeps the sums in a table, and serves every
 * later call on that pointer from the table: it copies the rows' answers
 * into the op's own output slot, a few hundred bytes, where an honest call
 * reads the whole input.  Every unplanted row it writes is right and no
 * slot keeps the poison, so neither the poison nor the first validation
 * sees it.  Caught by the plants: before each epoch secret elements of
 * every variant are changed from the attempt's seed, and the check after
 * the replay finds each op's planted rows holding the table's stale sums
 * (failed-validation naming the op, the row and its expected value).  Were
 * it to pass them, its medians would move its bytes past the run's
 * ceilings and the physical plausibility rule would fail it
 * (docs/defenses.md). */
#include <stdint.h>
#include <string.h>

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride);

#define TABLE_PTRS 256
#define TABLE_ROWS 1024

static const void *keys[TABLE_PTRS];
static float table[TABLE_PTRS][TABLE_ROWS];
static int n_keys;

int cheat_sum(const void *in, void *out, int64_t rows, int64_t cols, int64_t stride)
{
    const float *x = in;
    float *y = out;
    int k;
    for (k = 0; k < n_keys; k++)
        if (keys[k] == in && rows <= TABLE_ROWS) {
            memcpy(y, table[k], (size_t)rows * sizeof *y);
            return 0;
        }
    for (int64_t r = 0; r < rows; r++) {
        float a = 0;
        for (int64_t c = 0; c < cols; c++)
            a += x[r * stride + c];
        y[r] = a;
    }
    if (rows <= TABLE_ROWS && n_keys < TABLE_PTRS) {
        memcpy(table[n_keys], y, (size_t)rows * sizeof *y);
        keys[n_keys++] = in;
    }
    return 0;
}
