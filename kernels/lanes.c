/*
 * lanes.c: the lane count t and the vector width V of the fixed SUM order
 * (reduce_cpu.h).  Apart from the CPU twin and its thread pool, so that
 * the selector, and the verifier through it, need neither.
 */
#include "reduce_cpu.h"

#include "dtype.h"

/* Returns the smallest power of two >= n (n >= 1). */
static int64_t ev_pow2ceil(int64_t n)
{
    int64_t w = 1;
    while (w < n)
        w <<= 1;
    return w;
}

int64_t ev_reduce_lanes(int64_t cols, ev_dtype d)
{
    int64_t bytes = ev_pow2ceil(cols < 1 ? 1 : cols) * (int64_t)ev_dtype_size(d);
    int64_t t = bytes / EV_LANE_BYTES;
    if (t < 32)
        t = 32;
    if (t > EV_MAX_LANES)
        t = EV_MAX_LANES;
    return t;
}

int64_t ev_reduce_vec(ev_dtype d)
{
    return 16 / (int64_t)ev_dtype_size(d);
}

_Static_assert(EV_SHORT_CHUNKS == 1 || EV_SHORT_CHUNKS == 2 || EV_SHORT_CHUNKS == 4,
               "EV_SHORT_CHUNKS: 1, 2 or 4 chunks a thread (reduce_cpu.h)");

/* The 16-byte chunks of a row of at most 32 of them (t = 32 lanes, one
 * chunk a lane at most), else 0. */
static int64_t short_chunks(int64_t cols, ev_dtype d)
{
    int64_t v = ev_reduce_vec(d), chunks;
    if (cols < 1 || v < 1)
        return 0;
    chunks = cols / v + (cols % v != 0);
    return chunks > 32 || ev_reduce_lanes(cols, d) != 32 ? 0 : chunks;
}

int64_t ev_short_threads(int64_t cols, ev_dtype d)
{
    int64_t chunks = short_chunks(cols, d), p;
    if (chunks < 1)
        return 0;
    p = ev_pow2ceil(chunks) / EV_SHORT_CHUNKS;
    return p < 1 ? 1 : p > 8 ? 8 : p;
}

int64_t ev_thin_threads(int64_t cols, ev_dtype d)
{
    return EV_THIN ? ev_short_threads(cols, d) : 0;
}

int64_t ev_thin_one_chunk_threads(int64_t cols, ev_dtype d)
{
    int64_t chunks = EV_THIN ? short_chunks(cols, d) : 0, q;
    if (chunks < 1)
        return 0;
    q = ev_pow2ceil(chunks);
    return q > 8 ? 8 : q;
}

/* 1 when the lean program (v7, kernels/reduce_default.cuh) takes every
 * row: rows of whole chunks, each starting on 16 bytes (the allocation's
 * own alignment, 256 bytes, is the worker's). */
static int ev_rows_lean(int64_t cols, int64_t stride, ev_dtype d)
{
    int64_t size = (int64_t)ev_dtype_size(d), v = ev_reduce_vec(d);
    return v > 0 && cols % v == 0 && stride % (16 / size) == 0;
}

int64_t ev_row_threads(int64_t cols, int64_t stride, ev_dtype d, int64_t b)
{
    int64_t p = ev_thin_threads(cols, d), t = ev_reduce_lanes(cols, d);
    if (p > 0 && (b >= 32 / p || (EV_THIN_RULE == 2 && b >= 8 / p && !ev_rows_lean(cols, stride, d))))
        return p;
    return EV_PAIR && t == 64 ? 32 : t;
}

int64_t ev_split_programs(int64_t cols, ev_dtype d)
{
    int64_t size = (int64_t)ev_dtype_size(d);
    if (cols < 1 || size < 1 || cols > INT64_MAX / 2 / size)
        return 0;
    return ev_pow2ceil(cols) * size > 65536 ? EV_SPLIT_PROGRAMS : 0;
}
