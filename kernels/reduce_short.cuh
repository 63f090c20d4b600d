/*
 * reduce_short.cuh: the schedule for many short rows (issue 18), built on
 * the default entry's device code so its outputs are the same bits.
 *
 * Variants, one line each:
 *   reduce_{sum,max}_{fp32,fp16,bf16}_short   p threads a row, 128 / p rows
 *                                             a program of 128 threads
 *
 * For rows of at most 32 chunks (ceil(N / V) <= 32, V = 16 / esize: rows
 * of at most 512 bytes), whose documented lane count is t = 32 and whose
 * lanes hold at most one chunk each (kernels/reduce_cpu.h): chunk c of a
 * row (the last one partial, padded with the exact no-op element) belongs
 * to lane c.  p = clamp(pow2ceil(chunks) / 4, 1, 8) threads read a row
 * (ev_short_threads, kernels/lanes.c), so a thread reads at most four
 * chunks, all in flight at once.
 * How the order is kept: thread k of a row executes the 32 / p lanes
 * k + p*m (m = 0, 1, ...); only m < 4 can hold a chunk.  Each lane's slots
 * are its chunk's elements added to -0.0, reduced by the slot tree (V/2 ..
 * 1) as in the default; the lane butterfly (xor 16 .. 1) is executed in
 * two parts: its steps of distance d >= p pair lanes of the same thread
 * (m and m ^ (d/p)), done in registers as u[m] + u[m + h] (h = d/p; the
 * partner's own + other is the same bits, IEEE addition being
 * commutative); the lanes m >= 4 hold no chunk, so their values are -0.0
 * and the steps h >= 4 add -0.0 to u[0..3], an exact no-op, leaving
 * (u0 + u2) + (u1 + u3); then the steps d < p by __shfl_xor_sync inside
 * the row's p threads.  So every sum equals the default's, and the CPU twin's, bit
 * for bit.  MAX folds its keys as the default does (order immaterial).
 */
#ifndef EV_REDUCE_SHORT_CUH
#define EV_REDUCE_SHORT_CUH

#include "reduce_default.cuh"

#ifndef EV_SHORT_BLOCK
#define EV_SHORT_BLOCK 128 /* threads a program */
#endif

/*
 * The 16-byte chunk at element `first` of row from scalar loads: elements
 * first .. first + cnt - 1, the rest of the chunk the pad word's element.
 */
template <int DT>
__device__ __forceinline__ uint4 ev_chunk_scalar(const unsigned char *row, int64_t first, int cnt, uint32_t pw)
{
    typedef ev_dt<DT> D;
    const int V = 16 / D::size;
    uint32_t w[4];
    if (D::size == 4) {
#pragma unroll
        for (int j = 0; j < 4; j++)
            w[j] = j < cnt ? D::bits(row, first + j) : pw;
    } else {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            uint32_t lo = 2 * j < cnt ? D::bits(row, first + 2 * j) : (pw & 0xffffu);
            uint32_t hi = 2 * j + 1 < cnt ? D::bits(row, first + 2 * j + 1) : (pw >> 16);
            w[j] = lo | hi << 16;
        }
    }
    (void)V;
    return make_uint4(w[0], w[1], w[2], w[3]);
}

/*
 * Loads the chunks of lanes k + P*m, m < 4, of a row of n elements (n = 0:
 * none) into v (the pad chunk where a lane holds none).
 */
template <int OP, int DT, int P>
__device__ __forceinline__ void ev_short_load(uint4 *v, const unsigned char *row, int64_t n, int k)
{
    typedef ev_dt<DT> D;
    const int V = 16 / D::size;
    const uint32_t pw = OP == EV_OP_SUM_ ? D::neg_zero : D::neg_inf;
    const uint4 pad = make_uint4(pw, pw, pw, pw);
    int64_t full = n / V;
    int part = (int)(n - full * V); /* elements of the partial chunk (lane `full`) */
    int aligned = n > 0 && ((uintptr_t)row & 15u) == 0;
    const uint4 *vrow = reinterpret_cast<const uint4 *>(row);
#if EV_CHUNK_LOADS
    if (aligned && part == 0) { /* v4's loads: one block a chunk, nothing to shift or mask */
#pragma unroll
        for (int m = 0; m < 4; m++)
            v[m] = k + P * m < full ? ev_ld16(vrow + k + P * m) : pad;
        ev_loads_issued(1);
        return;
    }
    /* v5: from aligned blocks, every load before any use */
    const int s = (int)((uintptr_t)row & 15u);
    const uint4 *blk = reinterpret_cast<const uint4 *>(row - s);
    uint4 a[4], b[4];
#pragma unroll
    for (int m = 0; m < 4; m++)
        ev_chunk_blocks<DT>(&a[m], &b[m], blk, s, k + P * m, full, part, pad);
    ev_loads_issued(1);
#pragma unroll
    for (int m = 0; m < 4; m++)
        v[m] = ev_chunk_join<DT>(a[m], b[m], s, k + P * m, full, part, pw);
#else
#pragma unroll
    for (int m = 0; m < 4; m++) {
        int lane = k + P * m;
        if (lane < full)
            v[m] = aligned ? ev_ld16(vrow + lane) : ev_chunk_scalar<DT>(row, (int64_t)lane * V, V, pw);
        else if (lane == full && part > 0)
            v[m] = ev_chunk_scalar<DT>(row, full * V, part, pw);
        else
            v[m] = pad;
    }
    ev_loads_issued(1);
#endif
}

template <int OP, int DT, int P> struct ev_short_row;

/* SUM: the lanes' slot trees, the in-thread butterfly steps, the shuffles. */
template <int DT, int P> struct ev_short_row<EV_OP_SUM_, DT, P> {
    __device__ static float reduce(const unsigned char *row, int64_t n, int k)
    {
        uint4 v[4];
        float u[4];
        ev_short_load<EV_OP_SUM_, DT, P>(v, row, n, k);
#pragma unroll
        for (int m = 0; m < 4; m++) {
            ev_acc<EV_OP_SUM_, DT> acc;
            acc.init();
            acc.vec(v[m]);
            u[m] = acc.slots();
        }
        /* the in-thread steps h = E/2 .. 4 add -0 to u[0..3] (lanes m >= 4
         * hold no chunk): exact no-ops, left out; then h = 2 and h = 1 */
        float x = __fadd_rn(__fadd_rn(u[0], u[2]), __fadd_rn(u[1], u[3]));
#pragma unroll
        for (int d = P / 2; d >= 1; d /= 2)
            x = __fadd_rn(x, __shfl_xor_sync(0xffffffffu, x, d));
        return x;
    }
};

/* MAX: every chunk of the thread into one (hi, lo), then the row's threads. */
template <int DT, int P> struct ev_short_row<EV_OP_MAX_, DT, P> {
    __device__ static float reduce(const unsigned char *row, int64_t n, int k)
    {
        uint4 v[4];
        ev_acc<EV_OP_MAX_, DT> acc;
        int hi, lo;
        ev_short_load<EV_OP_MAX_, DT, P>(v, row, n, k);
        acc.init();
#pragma unroll
        for (int m = 0; m < 4; m++)
            acc.vec(v[m]);
        acc.lanes(&hi, &lo);
#pragma unroll
        for (int d = P / 2; d >= 1; d /= 2) {
            hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, d));
            lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, d));
        }
        return ev_max_value<DT>(hi, lo);
    }
};

/*
 * One program: rows [blockIdx.x * (128 / P), + 128 / P) of in (R rows of
 * `stride` elements, N <= 32 chunks) into out, P threads a row.  Every
 * thread takes part in the shuffles (a thread past the last row with n = 0).
 */
template <int OP, int DT, int P>
__device__ void ev_short_program(const void *in, void *out, int64_t R, int64_t N, int64_t stride)
{
    int g = (int)threadIdx.x / P, k = (int)threadIdx.x & (P - 1);
    int64_t r = (int64_t)blockIdx.x * (EV_SHORT_BLOCK / P) + g;
    int valid = r < R;
    const unsigned char *row =
        reinterpret_cast<const unsigned char *>(in) + (valid ? r * stride * ev_dt<DT>::size : 0);
    float v = ev_short_row<OP, DT, P>::reduce(row, valid ? N : 0, k);
    if (valid && k == 0)
        ev_dt<DT>::store(out, r, v);
}

#define EV_SHORT_ENTRY(opname, dtname, OP, DT)                                                         \
    extern "C" __global__ void __launch_bounds__(EV_SHORT_BLOCK) reduce_##opname##_##dtname##_short(   \
        const void *in, void *out, long long R, long long N, long long stride, int p)                  \
    {                                                                                                  \
        switch (p) {                                                                                   \
        case 1: ev_short_program<OP, DT, 1>(in, out, R, N, stride); break;                             \
        case 2: ev_short_program<OP, DT, 2>(in, out, R, N, stride); break;                             \
        case 4: ev_short_program<OP, DT, 4>(in, out, R, N, stride); break;                             \
        default: ev_short_program<OP, DT, 8>(in, out, R, N, stride); break;                            \
        }                                                                                              \
    }

EV_SHORT_ENTRY(sum, fp32, EV_OP_SUM_, EV_DT_FP32_)
EV_SHORT_ENTRY(sum, fp16, EV_OP_SUM_, EV_DT_FP16_)
EV_SHORT_ENTRY(sum, bf16, EV_OP_SUM_, EV_DT_BF16_)
EV_SHORT_ENTRY(max, fp32, EV_OP_MAX_, EV_DT_FP32_)
EV_SHORT_ENTRY(max, fp16, EV_OP_MAX_, EV_DT_FP16_)
EV_SHORT_ENTRY(max, bf16, EV_OP_MAX_, EV_DT_BF16_)

#endif
