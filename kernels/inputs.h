/*
 * inputs.h: the seeded input generator, so that every arm of a case reads
 * the same bytes.
 *
 * A (seed, case) pair picks one xoshiro256** stream (state from splitmix64);
 * the valid elements are drawn row by row, column by column, each uniform in
 * [-1, 1) on a 2^-24 grid (exact in fp32) and rounded to the dtype (RNE; for
 * fp16 and bf16 the rounding may give exactly 1.0).  Every byte outside the
 * valid elements (row padding when stride > N, and the span's tail) holds a
 * poison NaN pattern: a kernel that reads it turns its row into NaN, which
 * the oracle catches.  The bytes depend on nothing but seed, case key,
 * shape and span (no host, no thread count).
 */
#ifndef EV_INPUTS_H
#define EV_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "binding.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Poison patterns (NaNs with a recognisable payload). */
#define EV_POISON_FP32 0x7fa5a5a5u
#define EV_POISON_FP16 0x7da5u
#define EV_POISON_BF16 0x7fa5u
/* Output poison: written before every launch (all-ones: a negative NaN,
 * never the canonical NaN a kernel stores). */
#define EV_POISON_OUT_BYTE 0xff
/* The second output poison, before the rotated sample (worker.c): 0x7F
 * bytes, NaN in fp16 and 3.4e38 in fp32 and bf16, far outside any output
 * the inputs allow, so a kernel that knows the first pattern gains nothing. */
#define EV_POISON_OUT_BYTE2 0x7f

/* splitmix64 step: advances *state, returns the next output. */
uint64_t ev_splitmix64(uint64_t *state);

/*
 * Fills span bytes at buf with the case's input: valid elements from the
 * (seed, case_key) stream, everything else poison.  EV_EINVAL when the span
 * is too small for the shape (as ev_binding_check says) or buf is NULL.
 */
ev_status ev_inputs_fill(const ev_shape *s, uint64_t seed, uint64_t case_key, void *buf, size_t span,
                         ev_err *err);

/*
 * The (seed, case_key) stream row by row, for a reader that needs one row
 * at a time (the checkable-case rule and verify-bundle's re-validation:
 * a case's rows without its whole span in memory): after
 * ev_inputs_stream_init, the k-th ev_inputs_stream_row call writes the
 * cols valid elements of row k exactly as ev_inputs_fill does, and
 * nothing else (no padding, no poison).
 */
typedef struct ev_inputs_stream {
    uint64_t st[4];
} ev_inputs_stream;
void ev_inputs_stream_init(ev_inputs_stream *z, uint64_t seed, uint64_t case_key);
void ev_inputs_stream_row(const ev_shape *s, ev_inputs_stream *z, void *row);
/* Moves z past one row as ev_inputs_stream_row does, writing nothing (a
 * reader that needs a few rows: it keeps each row's start). */
void ev_inputs_stream_skip_row(const ev_shape *s, ev_inputs_stream *z);

/*
 * Rewrites the valid elements of row r (0 <= r < rows) of an input of shape
 * s at buf with new values of the same distribution, from the stream of
 * (seed, r): the rotated input of the no-cheats defence (the worker's
 * secret per-attempt seed; docs/defenses.md).  Padding is left as it is.
 */
void ev_inputs_rewrite_row(const ev_shape *s, uint64_t seed, int64_t r, void *buf);
/* The values ev_inputs_rewrite_row(s, seed, r, ...) writes, at row (cols
 * elements of a row buffer of its own: a reader that checks one row). */
void ev_inputs_new_row(const ev_shape *s, uint64_t seed, int64_t r, void *row);

/*
 * Makes the second input set of an attempt (docs/defenses.md: two input sets, with
 * their own contents and addresses, alternate through the ops of one
 * graph) from buf, a copy of its first: every row is rewritten as
 * ev_inputs_rewrite_row does, from the streams of the attempt's secret
 * seed (salted: the rotated rows' streams are other ones).
 */
void ev_inputs_second_set(const ev_shape *s, uint64_t seed, void *buf);
/* Row r of that second set, at row (cols elements of a row buffer). */
void ev_inputs_second_row(const ev_shape *s, uint64_t seed, int64_t r, void *row);

/*
 * The rotation a secret seed picks for an attempt of `samples` hot samples
 * over an input of `rows` rows (worker.c; the verifier regenerates it from
 * the seed in the device record): *before, the hot sample it precedes
 * (1 .. samples - 1), and *n rows rewritten (rows / 16, at least one),
 * their indexes in rows_out[0 .. *n) when rows_out is not NULL (room for
 * *n).  No rotation (rows < 1 or samples < 2): *before = -1, *n = 0.
 */
void ev_inputs_rotation(uint64_t seed, int64_t samples, int64_t rows, int64_t *before, size_t *n,
                        int64_t *rows_out);

/* Fills n bytes of an output buffer with EV_POISON_OUT_BYTE. */
void ev_inputs_poison_output(void *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif
