/*
 * reduce_default.cuh: the default entry of the row reductions, and the
 * device code every native schedule shares.  Its SHA-256 is a receipt
 * (proof-receipts.json): adding a candidate never touches this file.
 *
 * Variants, one line each (extern "C" names are the receipts' function names):
 *   reduce_{sum,max}_{fp32,fp16,bf16}_default   b rows per program (runtime b)
 *
 * The order is the one kernels/reduce_cpu.h documents, so every output
 * equals its CPU twin bit for bit:
 *   t = lanes per row = clamp(W * esize / 64, 32, 1024), W = pow2ceil(N)
 *   V = 16 / esize elements per chunk; lane l owns chunks l, l+t, l+2t, ...
 *   and keeps V slot accumulators (identity -0.0 for sum, -Inf for max);
 *   then slots by a tree (V/2 .. 1), lanes by an xor butterfly (16 .. 1),
 *   warps through shared memory by a butterfly of warp 0 (identity padding).
 * Loads: 16-byte vector loads when the row start is 16-byte aligned, scalar
 * loads of the same elements otherwise (same order either way).
 * A program (block) has min(b*t, 1024) threads: b*t/... groups of t lanes,
 * one row per group per pass, passes = ceil(b / groups).
 * FP32 adds are __fadd_rn (never contracted); max takes NaN first, then the
 * larger value, and +0 over -0.  Outputs are stored with RNE and the
 * canonical NaN of the dtype (kernels/dtype.h rules, copied below).
 */
#ifndef EV_REDUCE_DEFAULT_CUH
#define EV_REDUCE_DEFAULT_CUH

#include <stdint.h>

#define EV_OP_SUM_ 0
#define EV_OP_MAX_ 1
#define EV_DT_FP32_ 0
#define EV_DT_FP16_ 1
#define EV_DT_BF16_ 2

/* ---- conversions (kernels/dtype.c rules) -------------------------------- */

/* fp16 bits widened to fp32 (exact). */
__device__ __forceinline__ float ev_d_fp16_to_f32(uint32_t h)
{
    uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, u;
    if (exp == 0x1f) {
        u = sign | 0x7f800000u | (man << 13) | (man ? 0x00400000u : 0u);
    } else if (exp != 0) {
        u = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0) {
        u = sign;
    } else {
        uint32_t lz = __clz(man) - 21; /* shifts to bring the leading one to bit 10 */
        man <<= lz;
        u = sign | ((113u - lz) << 23) | ((man & 0x3ffu) << 13);
    }
    return __uint_as_float(u);
}

/* fp32 rounded to fp16 bits (RNE, canonical NaN 0x7e00). */
__device__ __forceinline__ uint32_t ev_d_f32_to_fp16(float f)
{
    uint32_t x = __float_as_uint(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return 0x7e00u;
    if (ax >= 0x477ff000u)
        return sign | 0x7c00u;
    if (ax >= 0x38800000u) {
        ax += 0xfffu + ((ax >> 13) & 1u);
        return sign | ((ax - 0x38000000u) >> 13);
    }
    if (ax <= 0x33000000u)
        return sign;
    {
        uint32_t e = ax >> 23, man = (ax & 0x7fffffu) | 0x800000u, s = 126u - e;
        uint32_t r = man >> s, rem = man & ((1u << s) - 1u), half = 1u << (s - 1u);
        if (rem > half || (rem == half && (r & 1u)))
            r++;
        return sign | r;
    }
}

/* fp32 rounded to bf16 bits (RNE, canonical NaN 0x7fc0). */
__device__ __forceinline__ uint32_t ev_d_f32_to_bf16(float f)
{
    uint32_t x = __float_as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return 0x7fc0u;
    return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

/* ---- element access and the two operations ------------------------------ */

template <int DT> struct ev_dt;
template <> struct ev_dt<EV_DT_FP32_> {
    static const int size = 4;
    __device__ static float load(const unsigned char *p, int64_t i)
    {
        return reinterpret_cast<const float *>(p)[i];
    }
    /* element j (0..3) of a 16-byte vector */
    __device__ static float lane(const uint4 &v, int j)
    {
        uint32_t w = j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
        return __uint_as_float(w);
    }
    __device__ static void store(void *out, int64_t r, float y)
    {
        uint32_t x = __float_as_uint(y);
        if ((x & 0x7fffffffu) > 0x7f800000u)
            x = 0x7fc00000u;
        reinterpret_cast<uint32_t *>(out)[r] = x;
    }
};
template <> struct ev_dt<EV_DT_FP16_> {
    static const int size = 2;
    __device__ static float load(const unsigned char *p, int64_t i)
    {
        return ev_d_fp16_to_f32(reinterpret_cast<const uint16_t *>(p)[i]);
    }
    __device__ static float lane(const uint4 &v, int j)
    {
        uint32_t w = (j >> 1) == 0 ? v.x : (j >> 1) == 1 ? v.y : (j >> 1) == 2 ? v.z : v.w;
        return ev_d_fp16_to_f32((j & 1) ? (w >> 16) : (w & 0xffffu));
    }
    __device__ static void store(void *out, int64_t r, float y)
    {
        reinterpret_cast<uint16_t *>(out)[r] = (uint16_t)ev_d_f32_to_fp16(y);
    }
};
template <> struct ev_dt<EV_DT_BF16_> {
    static const int size = 2;
    __device__ static float load(const unsigned char *p, int64_t i)
    {
        return __uint_as_float((uint32_t)reinterpret_cast<const uint16_t *>(p)[i] << 16);
    }
    __device__ static float lane(const uint4 &v, int j)
    {
        uint32_t w = (j >> 1) == 0 ? v.x : (j >> 1) == 1 ? v.y : (j >> 1) == 2 ? v.z : v.w;
        return __uint_as_float((j & 1) ? (w & 0xffff0000u) : (w << 16));
    }
    __device__ static void store(void *out, int64_t r, float y)
    {
        reinterpret_cast<uint16_t *>(out)[r] = (uint16_t)ev_d_f32_to_bf16(y);
    }
};

template <int OP> struct ev_opr;
template <> struct ev_opr<EV_OP_SUM_> {
    __device__ static float identity() { return -0.0f; }
    __device__ static float apply(float a, float b) { return __fadd_rn(a, b); }
};
template <> struct ev_opr<EV_OP_MAX_> {
    __device__ static float identity() { return __uint_as_float(0xff800000u); }
    __device__ static float apply(float a, float b)
    {
        if (a != a || b != b)
            return __uint_as_float(0x7fc00000u);
        if (a > b)
            return a;
        if (b > a)
            return b;
        return __uint_as_float(__float_as_uint(a) & __float_as_uint(b)); /* +0 over -0 */
    }
};

/* ---- one row by one group of t lanes ------------------------------------ */

/*
 * Returns, in lane 0 of the group, the reduction of n elements at row (n = 0
 * for a group without a row: it still takes part in the barrier).  red is
 * the group's t/32 floats of shared memory.  Every thread of the block must
 * call this the same number of times (it holds one __syncthreads).
 */
template <int OP, int DT>
__device__ float ev_row_reduce(const unsigned char *row, int64_t n, int t, int lane, float *red)
{
    typedef ev_dt<DT> D;
    typedef ev_opr<OP> O;
    const int V = 16 / D::size;
    float acc[16 / D::size];
    int64_t full = n / V; /* whole chunks */
    int64_t c = lane;

#pragma unroll
    for (int j = 0; j < V; j++)
        acc[j] = O::identity();
    if (n > 0 && ((uintptr_t)row & 15u) == 0) {
        const uint4 *vrow = reinterpret_cast<const uint4 *>(row);
        for (; c + 3 * (int64_t)t < full; c += 4 * (int64_t)t) {
            uint4 v0 = __ldg(vrow + c), v1 = __ldg(vrow + c + t);
            uint4 v2 = __ldg(vrow + c + 2 * t), v3 = __ldg(vrow + c + 3 * t);
#pragma unroll
            for (int j = 0; j < V; j++)
                acc[j] = O::apply(acc[j], D::lane(v0, j));
#pragma unroll
            for (int j = 0; j < V; j++)
                acc[j] = O::apply(acc[j], D::lane(v1, j));
#pragma unroll
            for (int j = 0; j < V; j++)
                acc[j] = O::apply(acc[j], D::lane(v2, j));
#pragma unroll
            for (int j = 0; j < V; j++)
                acc[j] = O::apply(acc[j], D::lane(v3, j));
        }
        for (; c < full; c += t) {
            uint4 v0 = __ldg(vrow + c);
#pragma unroll
            for (int j = 0; j < V; j++)
                acc[j] = O::apply(acc[j], D::lane(v0, j));
        }
    } else {
        for (; c < full; c += t) {
#pragma unroll
            for (int j = 0; j < V; j++)
                acc[j] = O::apply(acc[j], D::load(row, c * V + j));
        }
    }
    if (full * V < n && full % t == lane) { /* the partial last chunk */
        for (int j = 0; j < V; j++)
            if (full * V + j < n)
                acc[j] = O::apply(acc[j], D::load(row, full * V + j));
    }
#pragma unroll
    for (int m = V / 2; m >= 1; m /= 2)
#pragma unroll
        for (int j = 0; j < m; j++)
            acc[j] = O::apply(acc[j], acc[j + m]);
    float v = acc[0];
#pragma unroll
    for (int m = 16; m >= 1; m /= 2)
        v = O::apply(v, __shfl_xor_sync(0xffffffffu, v, m));
    {
        int nw = t / 32, w = lane / 32;
        if (nw > 1 && (lane & 31) == 0)
            red[w] = v;
        __syncthreads();
        if (nw > 1 && w == 0) {
            v = lane < nw ? red[lane] : O::identity();
#pragma unroll
            for (int m = 16; m >= 1; m /= 2)
                v = O::apply(v, __shfl_xor_sync(0xffffffffu, v, m));
        }
    }
    return v;
}

/*
 * One program: rows [blockIdx.x * b, +b) of in (R rows of `stride`
 * elements) into out, t lanes per row, blockDim.x = min(b*t, 1024).
 */
template <int OP, int DT>
__device__ void ev_reduce_program(const void *in, void *out, int64_t R, int64_t N, int64_t stride, int b,
                                  int t)
{
    __shared__ float red[32];
    int groups = (int)blockDim.x / t, g = (int)threadIdx.x / t, lane = (int)threadIdx.x % t;
    int64_t row0 = (int64_t)blockIdx.x * b;
    for (int base = 0; base < b; base += groups) {
        int64_t r = row0 + base + g;
        int valid = base + g < b && r < R;
        const unsigned char *row =
            reinterpret_cast<const unsigned char *>(in) + (valid ? r * stride * ev_dt<DT>::size : 0);
        float v = ev_row_reduce<OP, DT>(row, valid ? N : 0, t, lane, red + g * (t / 32));
        if (valid && lane == 0)
            ev_dt<DT>::store(out, r, v);
        __syncthreads(); /* red is reused by the next pass */
    }
}

/* EV_DEVICE_CODE_ONLY: the device helpers without the entries (peer_cub.cu). */
#ifndef EV_DEVICE_CODE_ONLY
#define EV_DEFAULT_ENTRY(opname, dtname, OP, DT)                                                       \
    extern "C" __global__ void __launch_bounds__(1024) reduce_##opname##_##dtname##_default(                                  \
        const void *in, void *out, long long R, long long N, long long stride, int b, int t)           \
    {                                                                                                  \
        ev_reduce_program<OP, DT>(in, out, R, N, stride, b, t);                                        \
    }

EV_DEFAULT_ENTRY(sum, fp32, EV_OP_SUM_, EV_DT_FP32_)
EV_DEFAULT_ENTRY(sum, fp16, EV_OP_SUM_, EV_DT_FP16_)
EV_DEFAULT_ENTRY(sum, bf16, EV_OP_SUM_, EV_DT_BF16_)
EV_DEFAULT_ENTRY(max, fp32, EV_OP_MAX_, EV_DT_FP32_)
EV_DEFAULT_ENTRY(max, fp16, EV_OP_MAX_, EV_DT_FP16_)
EV_DEFAULT_ENTRY(max, bf16, EV_OP_MAX_, EV_DT_BF16_)
#endif

#endif
