/*
 * reduce_default.cuh: the default entry of the row reductions, and the
 * device code every native schedule shares.  Its SHA-256 is a receipt
 * (proof-receipts.json): adding a candidate never touches this file.
 *
 * Variants, one line each (extern "C" names are the receipts' function names):
 *   <op>_<dtype>_default   b rows per program (runtime b), for every op and
 *                          dtype of the vocabulary (src/common/vocab.h)
 *
 * SUM follows the order kernels/reduce_cpu.h documents, so every output
 * equals its CPU twin bit for bit:
 *   t = lanes per row = clamp(W * esize / 64, 32, 1024), W = pow2ceil(N)
 *   V = 16 / esize elements per chunk; lane l owns chunks l, l+t, l+2t, ...
 *   and keeps V slot accumulators (identity -0.0), adding its chunks in
 *   increasing order; then slots by a tree (V/2 .. 1), lanes by an xor
 *   butterfly (16 .. 1), warps through shared memory by a butterfly of
 *   warp 0 (identity padding).
 * The code is written per combine (src/common/vocab.h: ev_combine_of below
 * maps an op to its combine and finish); every op gets every schedule's
 * entry (EV_OPS_BY_DTYPES).
 * MAX and MIN are exact, so their order is immaterial (reduce_cpu.h): each
 * lane folds its elements as order-preserving integer keys (the MAX keys
 * below) into a largest and a smallest key, the warp combines them with
 * redux.sync, the row is NaN exactly when a key lies outside [key(-Inf),
 * key(+Inf)], and else MAX is the largest key's value, MIN the smallest's.
 * Branch-free: no per-element branch depends on the data.
 * Loads: 16-byte vector loads when the row start is 16-byte aligned, up to
 * eight chunks in flight per lane; scalar loads of the same elements
 * otherwise.  Missing chunks of the last step are padded with an element
 * that is an exact no-op (-0.0 for SUM: x + -0 == x bit for bit under RN,
 * for every x including -0 and NaN; -Inf for MAX, +Inf for MIN: ev_pad),
 * so the order is unchanged.  The op's finish (ev_finished) is applied to
 * the row's FP32 value before the store.
 * Widening: fp16 by the hardware (cvt.f32.f16, exact for every fp16 value
 * including subnormals; a NaN stays a NaN, and every NaN output is stored
 * canonical), bf16 by a shift (exact).
 * Rows of at most 32 chunks go to the thin program (below: p threads a
 * row, p = ev_thin_threads > 0), rows of t = 64 lanes to paired lanes (one
 * warp a row), both by the threads a row the launcher passes
 * (ev_row_threads).  Other rows:
 * a program (block) has blockDim.x threads (kernels/selector.c: b*t, at most 1024,
 * and at most max(t, 256) where the grid fills the device): blockDim/t groups of t lanes
 * (t is a power of two), one row per group per pass, passes = ceil(b /
 * groups).  t = 32 uses no shared memory and no barrier; t > 32 uses one
 * barrier per pass (double-buffered shared memory, so no second barrier).
 * FP32 adds are __fadd_rn (never contracted).  Outputs are stored with RNE
 * and the canonical NaN of the dtype (kernels/dtype.h rules, copied below).
 */
#ifndef EV_REDUCE_DEFAULT_CUH
#define EV_REDUCE_DEFAULT_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include "vocab.h" /* the ops and dtypes (EV_OP_*, EV_DTYPE_*), and the entries' names */

/* ---- the ops: each one's combine and finish (src/common/vocab.h) --------- */

#define EV_COMBINE_OF_(id, name, comb, fin, op) (op) == EV_OP_##id ? (int)EV_COMBINE_##comb:
#define EV_FINISH_OF_(id, name, comb, fin, op)  (op) == EV_OP_##id ? (int)EV_FINISH_##fin:
/* The combine (ev_combine) of op, -1 for none: a template's constant. */
__host__ __device__ constexpr int ev_combine_of(int op)
{
    return EV_OPS(EV_COMBINE_OF_, op) - 1;
}
/* The finish (ev_finish) of op, -1 for none. */
__host__ __device__ constexpr int ev_finish_of(int op)
{
    return EV_OPS(EV_FINISH_OF_, op) - 1;
}

/* ---- conversions (kernels/dtype.c rules) -------------------------------- */

/* fp16 bits widened to fp32: exact (cvt.f32.f16, subnormals kept). */
__device__ __forceinline__ float ev_d_fp16_to_f32(uint32_t h)
{
    return __half2float(__ushort_as_half((unsigned short)h));
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

/* EV_STORE_CVT (docs/perf-notes.md, v7; 1 is the default): fp16 outputs rounded by
 * the hardware's cvt.rn.f16.f32 instead of ev_d_f32_to_fp16's integer
 * code (the same bits: kernel-bench checks every output against its twin).
 * 0: v6's software rounding. */
#ifndef EV_STORE_CVT
#define EV_STORE_CVT 1
#endif

/* ---- element access ------------------------------------------------------ */

/*
 * Per dtype: size, the scalar load of element i (as fp32), the word pad
 * values, the fp32 widening of a 16-byte chunk (element j of the chunk at
 * index j), and the store with RNE and the canonical NaN.
 */
template <int DT> struct ev_dt;
template <> struct ev_dt<EV_DTYPE_FP32> {
    static const int size = 4;
    static const uint32_t neg_zero = 0x80000000u; /* a word of -0.0 elements */
    static const uint32_t neg_inf = 0xff800000u;  /* a word of -Inf elements */
    static const uint32_t pos_inf = 0x7f800000u;  /* a word of +Inf elements */
    __device__ static uint32_t bits(const unsigned char *p, int64_t i)
    {
        return reinterpret_cast<const uint32_t *>(p)[i];
    }
    __device__ static float value(uint32_t b) { return __uint_as_float(b); }
    __device__ static float load(const unsigned char *p, int64_t i) { return __uint_as_float(bits(p, i)); }
    __device__ static void widen(const uint4 &v, float *x)
    {
        x[0] = __uint_as_float(v.x);
        x[1] = __uint_as_float(v.y);
        x[2] = __uint_as_float(v.z);
        x[3] = __uint_as_float(v.w);
    }
    __device__ static void store(void *out, int64_t r, float y)
    {
        uint32_t x = __float_as_uint(y);
        if ((x & 0x7fffffffu) > 0x7f800000u)
            x = 0x7fc00000u;
        reinterpret_cast<uint32_t *>(out)[r] = x;
    }
};
template <> struct ev_dt<EV_DTYPE_FP16> {
    static const int size = 2;
    static const uint32_t neg_zero = 0x80008000u;
    static const uint32_t neg_inf = 0xfc00fc00u;
    static const uint32_t pos_inf = 0x7c007c00u;
    __device__ static uint32_t bits(const unsigned char *p, int64_t i)
    {
        return reinterpret_cast<const uint16_t *>(p)[i];
    }
    __device__ static float value(uint32_t b) { return ev_d_fp16_to_f32(b); }
    __device__ static float load(const unsigned char *p, int64_t i) { return ev_d_fp16_to_f32(bits(p, i)); }
    /* one word: element 2k in the low half, 2k+1 in the high half */
    __device__ static void widen2(uint32_t w, float *x)
    {
        __half2 h = *reinterpret_cast<const __half2 *>(&w);
        float2 f = __half22float2(h);
        x[0] = f.x;
        x[1] = f.y;
    }
    __device__ static void widen(const uint4 &v, float *x)
    {
        widen2(v.x, x);
        widen2(v.y, x + 2);
        widen2(v.z, x + 4);
        widen2(v.w, x + 6);
    }
    __device__ static void store(void *out, int64_t r, float y)
    {
#if EV_STORE_CVT
        /* cvt.rn.f16.f32 rounds as ev_d_f32_to_fp16 does (RNE, subnormals, overflow
         * to Inf); only its NaN differs, so the canonical one is selected */
        uint16_t h = __half_as_ushort(__float2half_rn(y));
        reinterpret_cast<uint16_t *>(out)[r] = y != y ? (uint16_t)0x7e00u : h;
#else
        reinterpret_cast<uint16_t *>(out)[r] = (uint16_t)ev_d_f32_to_fp16(y);
#endif
    }
};
template <> struct ev_dt<EV_DTYPE_BF16> {
    static const int size = 2;
    static const uint32_t neg_zero = 0x80008000u;
    static const uint32_t neg_inf = 0xff80ff80u;
    static const uint32_t pos_inf = 0x7f807f80u;
    __device__ static uint32_t bits(const unsigned char *p, int64_t i)
    {
        return reinterpret_cast<const uint16_t *>(p)[i];
    }
    __device__ static float value(uint32_t b) { return __uint_as_float(b << 16); }
    __device__ static float load(const unsigned char *p, int64_t i) { return __uint_as_float(bits(p, i) << 16); }
    __device__ static void widen2(uint32_t w, float *x)
    {
        x[0] = __uint_as_float(w << 16);
        x[1] = __uint_as_float(w & 0xffff0000u);
    }
    __device__ static void widen(const uint4 &v, float *x)
    {
        widen2(v.x, x);
        widen2(v.y, x + 2);
        widen2(v.z, x + 4);
        widen2(v.w, x + 6);
    }
    __device__ static void store(void *out, int64_t r, float y)
    {
        reinterpret_cast<uint16_t *>(out)[r] = (uint16_t)ev_d_f32_to_bf16(y);
    }
};

/*
 * The scalar operation of each combine, for code outside the native
 * kernels (the cub peer): SUM is __fadd_rn; MAX (MIN) gives the canonical
 * NaN when either side is NaN, else the larger (smaller) value, +0 over -0
 * (-0 under +0), by branch-free selects.  ev_opr<OP>: the op's.
 */
template <int C> struct ev_opc;
template <> struct ev_opc<EV_COMBINE_SUM> {
    __device__ static float identity() { return -0.0f; }
    __device__ static float apply(float a, float b) { return __fadd_rn(a, b); }
};
template <> struct ev_opc<EV_COMBINE_MAX> {
    __device__ static float identity() { return __uint_as_float(0xff800000u); }
    __device__ static float apply(float a, float b)
    {
        float m = a > b ? a : b;
        float z = __uint_as_float(__float_as_uint(a) & __float_as_uint(b)); /* equal: +0 over -0 */
        m = a == b ? z : m;
        return (a != a || b != b) ? __uint_as_float(0x7fc00000u) : m;
    }
};
template <> struct ev_opc<EV_COMBINE_MIN> {
    __device__ static float identity() { return __uint_as_float(0x7f800000u); }
    __device__ static float apply(float a, float b)
    {
        float m = a < b ? a : b;
        float z = __uint_as_float(__float_as_uint(a) | __float_as_uint(b)); /* equal: -0 under +0 */
        m = a == b ? z : m;
        return (a != a || b != b) ? __uint_as_float(0x7fc00000u) : m;
    }
};
template <int OP> struct ev_opr : ev_opc<ev_combine_of(OP)> {
};

/* ---- MAX keys ------------------------------------------------------------ */

/*
 * MAX works on keys: a signed integer per element bit pattern, strictly
 * increasing with the value, -0 below +0.
 *   fp32 (32-bit pattern u): key = u ^ (u < 0 ? 0x7fffffff : 0), as int32.
 *   fp16/bf16 (16-bit h): key = h ^ (h < 0 ? 0x7fff : 0), as int16; two
 *   such keys are packed in a word and folded with max.s16x2 / min.s16x2.
 * Proof of order (16-bit; 32-bit the same with 31 bits): for h >= 0 the
 * key is h, which grows with the value; for h < 0 the key is
 * -1 - (h & 0x7fff), which falls as the magnitude grows, so -0 (0x8000)
 * maps to -1 < 0 = key(+0).  Equivalently key = twin_key - 0x8000, where
 * twin_key is reduce_cpu.c's unsigned key, so the largest key is the
 * twin's maximum (a total order on non-NaN patterns: the maximum is one
 * bit pattern).  NaN patterns have |h| above Inf's, so their keys lie above
 * key(+Inf) (sign clear) or below key(-Inf) (sign set), and every non-NaN
 * key lies in [key(-Inf), key(+Inf)].  Hence, with hi = max and lo = min
 * over a row's keys: the row holds a NaN iff hi > key(+Inf) or
 * lo < key(-Inf); else hi is the key of the twin's maximum.  The identities
 * (hi = key(-Inf), lo = key(+Inf)) and the -Inf padding lie inside the
 * range and below every other candidate for hi, so they change neither.
 * tests/check_kernels.c checks these claims over every 16-bit pattern.
 */
template <int DT> struct ev_mk;
template <> struct ev_mk<EV_DTYPE_FP32> {
    static const int pos_inf = 0x7f800000;
    static const int neg_inf = (int)0x807fffff; /* key of 0xff800000 */
    __device__ static int key(uint32_t u) { return (int)(u ^ ((uint32_t)((int)u >> 31) >> 1)); }
    __device__ static uint32_t unkey(int k) { return (uint32_t)k ^ ((uint32_t)(k >> 31) >> 1); }
};
template <> struct ev_mk<EV_DTYPE_FP16> {
    static const int pos_inf = 0x7c00;
    static const int neg_inf = -31745; /* key of 0xfc00: 0x83ff as int16 */
};
template <> struct ev_mk<EV_DTYPE_BF16> {
    static const int pos_inf = 0x7f80;
    static const int neg_inf = -32641; /* key of 0xff80: 0x807f as int16 */
};

/* Two 16-bit keys of the word w (both halves at once). */
__device__ __forceinline__ uint32_t ev_key2(uint32_t w)
{
    uint32_t s = w & 0x80008000u;
    return w ^ (s - (s >> 15)); /* 0x7fff in each half whose sign is set */
}

/* The 16-bit pattern of a 16-bit key k (sign-extended). */
__device__ __forceinline__ uint32_t ev_unkey16(int k)
{
    return ((uint32_t)k ^ ((uint32_t)(k >> 31) & 0x7fffu)) & 0xffffu;
}

/* ---- per-lane accumulators ------------------------------------------------ */

/*
 * ev_acc<OP, DT>: what one lane folds, by the op's combine (ev_acck<C,
 * DT>: SUM's slots; MAX and MIN share the keys, ev_acc_keys).  init();
 * vec(v) adds one 16-byte chunk (element j into slot j); elem(j, i, row)
 * adds element i of the row into slot j; then the lane's and the group's
 * combination (ev_group_*).
 */
template <int C, int DT> struct ev_acck;
template <int DT> struct ev_acc_keys;

template <int DT> struct ev_acck<EV_COMBINE_SUM, DT> {
    static const int V = 16 / ev_dt<DT>::size;
    float a[V];
    __device__ void init()
    {
#pragma unroll
        for (int j = 0; j < V; j++)
            a[j] = -0.0f;
    }
    __device__ void vec(const uint4 &v)
    {
        float x[V];
        ev_dt<DT>::widen(v, x);
#pragma unroll
        for (int j = 0; j < V; j++)
            a[j] = __fadd_rn(a[j], x[j]);
    }
    __device__ void elem(int j, const unsigned char *row, int64_t i)
    {
        a[j] = __fadd_rn(a[j], ev_dt<DT>::load(row, i));
    }
    /* element j of a chunk, given its bits (loaded earlier) */
    __device__ void ebits(int j, uint32_t b) { a[j] = __fadd_rn(a[j], ev_dt<DT>::value(b)); }
    /* the slot tree: the lane's value */
    __device__ float slots() const
    {
        float p[V];
#pragma unroll
        for (int j = 0; j < V; j++)
            p[j] = a[j];
#pragma unroll
        for (int m = V / 2; m >= 1; m /= 2)
#pragma unroll
            for (int j = 0; j < m; j++)
                p[j] = __fadd_rn(p[j], p[j + m]);
        return p[0];
    }
    /* the slot tree, then the lane butterfly: the warp's sum in every lane */
    __device__ float warp() const
    {
        float v = slots();
#pragma unroll
        for (int m = 16; m >= 1; m /= 2)
            v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, m));
        return v;
    }
};

/* MAX and MIN on fp32: hi and lo keys. */
template <> struct ev_acc_keys<EV_DTYPE_FP32> {
    int hi, lo;
    __device__ void init()
    {
        hi = ev_mk<EV_DTYPE_FP32>::neg_inf;
        lo = ev_mk<EV_DTYPE_FP32>::pos_inf;
    }
    __device__ void word(uint32_t u)
    {
        int k = ev_mk<EV_DTYPE_FP32>::key(u);
        hi = max(hi, k);
        lo = min(lo, k);
    }
    __device__ void vec(const uint4 &v)
    {
        word(v.x);
        word(v.y);
        word(v.z);
        word(v.w);
    }
    __device__ void elem(int, const unsigned char *row, int64_t i) { word(ev_dt<EV_DTYPE_FP32>::bits(row, i)); }
    __device__ void ebits(int, uint32_t b) { word(b); }
    __device__ void lanes(int *h, int *l) const
    {
        *h = hi;
        *l = lo;
    }
};

/* MAX and MIN on fp16/bf16: packed 16x2 keys (hi2, lo2). */
template <int DT> struct ev_acc16 {
    uint32_t hi2, lo2;
    __device__ void init()
    {
        hi2 = ((uint32_t)ev_mk<DT>::neg_inf & 0xffffu) * 0x10001u;
        lo2 = (uint32_t)ev_mk<DT>::pos_inf * 0x10001u;
    }
    __device__ void word(uint32_t w)
    {
        uint32_t k = ev_key2(w);
        hi2 = __vmaxs2(hi2, k);
        lo2 = __vmins2(lo2, k);
    }
    __device__ void vec(const uint4 &v)
    {
        word(v.x);
        word(v.y);
        word(v.z);
        word(v.w);
    }
    __device__ void elem(int, const unsigned char *row, int64_t i) { word(ev_dt<DT>::bits(row, i) * 0x10001u); }
    __device__ void ebits(int, uint32_t b) { word(b * 0x10001u); }
    /* the lane's hi and lo as sign-extended keys */
    __device__ void lanes(int *h, int *l) const
    {
        *h = max((int)(int16_t)(hi2 & 0xffffu), (int)hi2 >> 16);
        *l = min((int)(int16_t)(lo2 & 0xffffu), (int)lo2 >> 16);
    }
};
template <> struct ev_acc_keys<EV_DTYPE_FP16> : ev_acc16<EV_DTYPE_FP16> {
};
template <> struct ev_acc_keys<EV_DTYPE_BF16> : ev_acc16<EV_DTYPE_BF16> {
};
template <int DT> struct ev_acck<EV_COMBINE_MAX, DT> : ev_acc_keys<DT> {
};
template <int DT> struct ev_acck<EV_COMBINE_MIN, DT> : ev_acc_keys<DT> {
};
template <int OP, int DT> struct ev_acc : ev_acck<ev_combine_of(OP), DT> {
};

/* The float value of a row's (hi, lo) keys for combine C: canonical NaN,
 * or the maximum (hi's value; MIN: lo's). */
template <int C, int DT> __device__ __forceinline__ float ev_key_value(int hi, int lo)
{
    const int k = C == EV_COMBINE_MIN ? lo : hi;
    uint32_t u;
    if (DT == EV_DTYPE_FP32)
        u = ev_mk<EV_DTYPE_FP32>::unkey(k);
    else if (DT == EV_DTYPE_FP16)
        u = __float_as_uint(ev_d_fp16_to_f32(ev_unkey16(k)));
    else
        u = ev_unkey16(k) << 16;
    if (hi > ev_mk<DT>::pos_inf || lo < ev_mk<DT>::neg_inf)
        u = 0x7fc00000u;
    return __uint_as_float(u);
}

/* The word of two (one fp32) pad elements of op: an exact no-op of its
 * combine (-0.0 for SUM, -Inf for MAX, +Inf for MIN). */
template <int OP, int DT> __device__ __forceinline__ constexpr uint32_t ev_pad()
{
    return ev_combine_of(OP) == EV_COMBINE_SUM   ? ev_dt<DT>::neg_zero
           : ev_combine_of(OP) == EV_COMBINE_MAX ? ev_dt<DT>::neg_inf
                                                 : ev_dt<DT>::pos_inf;
}

/* The op's finish of a row's FP32 value v over n elements, before the
 * store (src/common/vocab.h, ev_finish). */
template <int OP> __device__ __forceinline__ float ev_finished(float v, int64_t n)
{
    static_assert(ev_finish_of(OP) == EV_FINISH_NONE || ev_finish_of(OP) == EV_FINISH_MEAN,
                  "an op's finish without device code");
    if constexpr (ev_finish_of(OP) == EV_FINISH_MEAN)
        return __fdiv_rn(v, __ll2float_rn(n)); /* MEAN: one IEEE division, as the CPU twin's */
    (void)n;
    return v;
}

/* ---- loads ---------------------------------------------------------------- */

/*
 * EV_LOAD_MODE (docs/perf-notes.md, v3): how a step's loads
 * are issued.  0 (v2): __ldg (ld.global.nc), and ptxas interleaved the
 * first chunk's adds with the later chunks' loads (so a step cost two L2
 * round trips); 1: plain loads; 2: __ldg, then a warp barrier of the lanes
 * present; 3: __ldg, then membar.cta, which ptxas does not move a load
 * across, so every load of a step is in flight before the first use;
 * 4 (the default since v3): mode 3's fence only where it paid (a lane
 * whose two or more chunks fit one step, in a program of at most 512
 * threads: long rows and 1024-thread programs were 10-17% slower with it,
 * one-chunk lanes 10-14%); elsewhere the fence's branch alone keeps a
 * step's loads apart from its adds (8192x8192 fp32 rows1 0.84 of v2,
 * 32x1048576 fp32 0.67).  Modes 2-4 also load the unaligned path four
 * chunks at a time (mode 4: where it fences).  Every mode loads the same
 * bytes and adds them in the same order: the sums are the same bits.
 */
#ifndef EV_LOAD_MODE
#define EV_LOAD_MODE 4
#endif

__device__ __forceinline__ uint4 ev_ld16(const uint4 *p)
{
#if EV_LOAD_MODE == 1
    return *p;
#else
    return __ldg(p);
#endif
}

/* After a step's loads, before their first use; fence: mode 4's runtime
 * condition (a lane with one step only, in a program of at most 512
 * threads). */
__device__ __forceinline__ void ev_loads_issued(int fence)
{
#if EV_LOAD_MODE == 2
    (void)fence;
    __syncwarp(__activemask());
#elif EV_LOAD_MODE == 3
    (void)fence;
    asm volatile("membar.cta;" ::: "memory");
#elif EV_LOAD_MODE == 4
    if (fence)
        asm volatile("membar.cta;" ::: "memory");
#else
    (void)fence;
#endif
}

/* ---- v5: every chunk from aligned 16-byte blocks ------------------------- */

/*
 * EV_CHUNK_LOADS (docs/perf-notes.md, v5; 1 is the default): in the straight-line
 * step (a lane of at most four chunks, the partial last chunk counted) and
 * in the short schedule, a row that does not start on 16 bytes and the
 * partial last chunk are read as aligned 16-byte blocks too, where v4 read
 * them element by element (and the partial chunk after the lane's other
 * chunks had been added: a second round trip).  Chunk c of a row that
 * starts s bytes past a 16-byte boundary is bytes s .. s + 15 of blocks c
 * and c + 1 counted from the row's first block (ev_shift32); the partial
 * chunk's elements at or past the row's end become the pad element
 * (ev_chunk_mask).  A step issues all its loads before it uses any
 * (ev_chunk_blocks, then ev_chunk_join): built the other way, with each
 * chunk's shift right after its loads, ptxas kept the uses next to the
 * loads and a step took one round trip a chunk (1.1-1.5x slower on the
 * H200, docs/perf-notes.md v5).  So every slot receives the same elements in the same
 * order as v4: the same bits.  Reads stay inside the input: every block
 * read holds at least one byte of an element of the row (block c + 1 is
 * read only when the chunk reaches into it), and the input's allocation
 * starts and ends on a 16-byte boundary (backend_cuda.cu and kernel-bench
 * round it up).  0: v4's loads.
 */
#ifndef EV_CHUNK_LOADS
#define EV_CHUNK_LOADS 1
#endif

/* Bytes s .. s + 15 of the 32 bytes a, b (s even, 0 .. 14; s = 0 gives a). */
__device__ __forceinline__ uint4 ev_shift32(const uint4 &a, const uint4 &b, int s)
{
    int two = s & 8, one = s & 4;
    unsigned sh = (unsigned)(s & 3) * 8u;
    /* whole words first: by two words, then by one, then the half word */
    uint32_t e0 = two ? a.z : a.x, e1 = two ? a.w : a.y, e2 = two ? b.x : a.z, e3 = two ? b.y : a.w;
    uint32_t e4 = two ? b.z : b.x, e5 = two ? b.w : b.y;
    uint32_t f0 = one ? e1 : e0, f1 = one ? e2 : e1, f2 = one ? e3 : e2, f3 = one ? e4 : e3;
    uint32_t f4 = one ? e5 : e4;
    return make_uint4(__funnelshift_r(f0, f1, sh), __funnelshift_r(f1, f2, sh), __funnelshift_r(f2, f3, sh),
                      __funnelshift_r(f3, f4, sh));
}

/* Chunk v with its elements cnt .. V - 1 replaced by the pad element of pw. */
template <int DT> __device__ __forceinline__ uint4 ev_chunk_mask(const uint4 &v, int cnt, uint32_t pw)
{
    uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; j++) {
        uint32_t keep;
        if (ev_dt<DT>::size == 4)
            keep = j < cnt ? 0xffffffffu : 0u;
        else
            keep = (2 * j < cnt ? 0x0000ffffu : 0u) | (2 * j + 1 < cnt ? 0xffff0000u : 0u);
        w[j] = (w[j] & keep) | (pw & ~keep);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

/*
 * The blocks of chunk c of a row whose first block is blk and which starts
 * s bytes into it (chunks = full whole chunks and a partial one of part
 * elements): *a and, where the chunk reaches into it, *b; the pad chunk
 * where c holds nothing.  Loads only: every load of a step is issued
 * before any of them is used (ev_chunk_join after ev_loads_issued), which
 * is what keeps a step at one round trip.
 */
template <int DT>
__device__ __forceinline__ void ev_chunk_blocks(uint4 *a, uint4 *b, const uint4 *blk, int s, int64_t c,
                                                int64_t full, int part, const uint4 &pad)
{
    int64_t chunks = full + (part > 0);
    *a = c < chunks ? ev_ld16(blk + c) : pad;
    *b = c < chunks && s != 0 && (c < full || s + part * ev_dt<DT>::size > 16) ? ev_ld16(blk + c + 1) : pad;
}

/* Chunk c from its blocks a, b (ev_chunk_blocks): shifted by s, the partial
 * chunk (c == full) masked with the pad element of pw. */
template <int DT>
__device__ __forceinline__ uint4 ev_chunk_join(const uint4 &a, const uint4 &b, int s, int64_t c, int64_t full,
                                               int part, uint32_t pw)
{
    uint4 v = ev_shift32(a, b, s);
    return c == full ? ev_chunk_mask<DT>(v, part, pw) : v;
}

/* ---- one row by one group of t lanes ------------------------------------ */

/*
 * Folds the lane's elements of a row of n elements into acc (n = 0: none):
 * chunks lane, lane+t, ... in increasing order, then the partial chunk.
 */
template <int OP, int DT, int T>
__device__ __forceinline__ void ev_lane_fold(ev_acc<OP, DT> &acc, const unsigned char *row, int64_t n, int t,
                                             int lane)
{
    t = T ? T : t; /* EV_SPECIALIZE: t known at compile time */
    typedef ev_dt<DT> D;
    const int V = 16 / D::size;
    const uint32_t pw = ev_pad<OP, DT>(); /* exact no-op words */
    const uint4 pad = make_uint4(pw, pw, pw, pw);
    int64_t full = n / V; /* whole chunks */
    int64_t c = lane;
    /* mode 4: the fence where one step holds all of a lane's two or more chunks */
    const int fence = blockDim.x <= 512 && full > t && full <= 8 * (int64_t)t;

#if EV_CHUNK_LOADS
    const int part = (int)(n - full * V);
    const int s0 = (int)((uintptr_t)row & 15u);
    if (n > 0 && T != 0 && (s0 != 0 || part != 0) && full + (part > 0) <= 4 * (int64_t)T) {
        /* EV_SPECIALIZE and v5: at most four chunks a lane, the partial one
         * counted, straight-line code from aligned blocks */
        /* (an aligned row without a partial chunk takes v4's step below) */
        const int s = s0;
        const uint4 *blk = reinterpret_cast<const uint4 *>(row - s);
        uint4 a[4], b[4];
        if (s == 0) { /* an aligned row (the whole group's: one row a group) needs no second block */
#pragma unroll
            for (int k = 0; k < 4; k++)
                a[k] = c + k * T < full + (part > 0) ? ev_ld16(blk + c + k * T) : pad;
            ev_loads_issued(fence);
#pragma unroll
            for (int k = 0; k < 4; k++)
                acc.vec(c + k * T == full ? ev_chunk_mask<DT>(a[k], part, pw) : a[k]);
            return;
        }
#pragma unroll
        for (int k = 0; k < 4; k++)
            ev_chunk_blocks<DT>(&a[k], &b[k], blk, s, c + k * T, full, part, pad);
        ev_loads_issued(fence);
#pragma unroll
        for (int k = 0; k < 4; k++)
            acc.vec(ev_chunk_join<DT>(a[k], b[k], s, c + k * T, full, part, pw));
        return;
    }
#endif
    if (n > 0 && ((uintptr_t)row & 15u) == 0 && T != 0 && full <= 4 * (int64_t)T) {
        /* EV_SPECIALIZE: at most four chunks a lane, straight-line code */
        const uint4 *vrow = reinterpret_cast<const uint4 *>(row);
        uint4 v[4];
#pragma unroll
        for (int k = 0; k < 4; k++)
            v[k] = c + k * T < full ? ev_ld16(vrow + c + k * T) : pad;
        ev_loads_issued(fence);
#pragma unroll
        for (int k = 0; k < 4; k++)
            acc.vec(v[k]);
    } else if (n > 0 && ((uintptr_t)row & 15u) == 0) {
        const uint4 *vrow = reinterpret_cast<const uint4 *>(row);
        for (; c + 7 * (int64_t)t < full; c += 8 * (int64_t)t) {
            uint4 v[8];
#pragma unroll
            for (int k = 0; k < 8; k++)
                v[k] = ev_ld16(vrow + c + k * (int64_t)t);
            ev_loads_issued(fence);
#pragma unroll
            for (int k = 0; k < 8; k++)
                acc.vec(v[k]);
        }
        for (; c + 3 * (int64_t)t < full; c += 4 * (int64_t)t) {
            uint4 v[4];
#pragma unroll
            for (int k = 0; k < 4; k++)
                v[k] = ev_ld16(vrow + c + k * (int64_t)t);
            ev_loads_issued(fence);
#pragma unroll
            for (int k = 0; k < 4; k++)
                acc.vec(v[k]);
        }
        if (c < full) { /* at most three chunks left: all loads in flight at once */
            uint4 v0 = ev_ld16(vrow + c);
            uint4 v1 = c + t < full ? ev_ld16(vrow + c + t) : pad;
            uint4 v2 = c + 2 * (int64_t)t < full ? ev_ld16(vrow + c + 2 * t) : pad;
            ev_loads_issued(fence);
            acc.vec(v0);
            acc.vec(v1);
            acc.vec(v2);
        }
    } else {
#if EV_LOAD_MODE >= 2
        for (; (EV_LOAD_MODE != 4 || fence) && c + 3 * (int64_t)t < full;
             c += 4 * (int64_t)t) { /* four chunks: 4V loads in flight */
            uint32_t w[4][V];
#pragma unroll
            for (int k = 0; k < 4; k++)
#pragma unroll
                for (int j = 0; j < V; j++)
                    w[k][j] = D::bits(row, (c + k * (int64_t)t) * V + j);
            ev_loads_issued(fence);
#pragma unroll
            for (int k = 0; k < 4; k++)
#pragma unroll
                for (int j = 0; j < V; j++)
                    acc.ebits(j, w[k][j]);
        }
#endif
        for (; c + t < full; c += 2 * (int64_t)t) { /* two chunks: 2V loads in flight */
#pragma unroll
            for (int j = 0; j < V; j++)
                acc.elem(j, row, c * V + j);
#pragma unroll
            for (int j = 0; j < V; j++)
                acc.elem(j, row, (c + t) * V + j);
        }
        if (c < full) {
#pragma unroll
            for (int j = 0; j < V; j++)
                acc.elem(j, row, c * V + j);
        }
    }
    if (full * V < n && (full & (t - 1)) == lane) { /* the partial last chunk */
        for (int j = 0; j < V; j++)
            if (full * V + j < n)
                acc.elem(j, row, full * V + j);
    }
}

/*
 * EV_LEAN (docs/perf-notes.md, v7; 1 is the default): a program whose every row
 * starts on 16 bytes and holds whole chunks only (the input's start and
 * the row stride in bytes multiples of 16, N a multiple of V) and whose
 * lanes hold at most four chunks each (N / V <= 4 t) loads each row by
 * ev_lean_load: one straight-line step of 32-bit index arithmetic, no
 * alignment, partial-chunk or long-row code, no fence.  The ncu profile
 * of v6 (docs/perf-notes.md) counted 238 instructions a warp on 17x1024
 * fp16, most of them that code's 64-bit bounds and branches.  The same
 * chunks in the same order into the same slots: the same bits.  Measured
 * and left out (docs/experiments/h200-lean-v7.txt): v3's fence after the
 * lean loads (1-3% slower) and the next pass's loads issued before this
 * pass's combination (131072x256 fp16 MAX default 46.31 us against
 * 43.13).  0: every row by ev_lane_fold (v6).
 */
#ifndef EV_LEAN
#define EV_LEAN 1
#endif

/* The chunks lane, lane + T, lane + 2T, lane + 3T of an aligned row of
 * full whole chunks (full = 0: none) into v, the pad chunk where a lane
 * holds none: a lean program's one step (EV_LEAN above). */
template <int OP, int DT, int T>
__device__ __forceinline__ void ev_lean_load(uint4 *v, const unsigned char *row, int full, int lane)
{
    typedef ev_dt<DT> D;
    const uint32_t pw = ev_pad<OP, DT>();
    const uint4 pad = make_uint4(pw, pw, pw, pw);
    const uint4 *vrow = reinterpret_cast<const uint4 *>(row);
#pragma unroll
    for (int k = 0; k < 4; k++)
        v[k] = lane + k * T < full ? ev_ld16(vrow + lane + k * T) : pad;
}

/*
 * EV_LEAN_U (docs/perf-notes.md, v8; 1 is the default): the lean step for the other
 * rows of at most four chunks a lane, the partial last chunk counted:
 * rows that do not start on 16 bytes, or end in a partial chunk.  v5's
 * loads (ev_chunk_blocks, ev_chunk_join: aligned blocks, shifted, the
 * partial chunk masked) with 32-bit indices, in a program that goes to it
 * whole (no per-row branch to the long-row loops).  The same chunks in the
 * same order: the same bits.  0: such rows by ev_lane_fold (v7).
 */
#ifndef EV_LEAN_U
#define EV_LEAN_U 1
#endif

/* The chunks lane + kT (k < 4) of a row of n elements (n = 0: none) that
 * starts anywhere on an element, the last chunk possibly partial, into v
 * (shifted and masked; the pad chunk where a lane holds none). */
template <int OP, int DT, int T>
__device__ __forceinline__ void ev_lean_load_u(uint4 *v, const unsigned char *row, int n, int lane)
{
    typedef ev_dt<DT> D;
    const int V = 16 / D::size;
    const uint32_t pw = ev_pad<OP, DT>();
    const uint4 pad = make_uint4(pw, pw, pw, pw);
    const int full = n / V, part = n - full * V, chunks = full + (part > 0);
    const int s = (int)((uintptr_t)row & 15u);
    const uint4 *blk = reinterpret_cast<const uint4 *>(row - s);
    uint4 a[4], b[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        int c = lane + k * T;
        a[k] = c < chunks ? ev_ld16(blk + c) : pad;
        b[k] = c < chunks && s != 0 && (c < full || s + part * D::size > 16) ? ev_ld16(blk + c + 1) : pad;
    }
#pragma unroll
    for (int k = 0; k < 4; k++) {
        uint4 x = ev_shift32(a[k], b[k], s);
        v[k] = lane + k * T == full ? ev_chunk_mask<DT>(x, part, pw) : x;
    }
}

/*
 * The group's combination of its lanes' accumulators: returns, in lane 0
 * of the group, the row's reduction.  red is the group's t/32 slots of
 * shared memory for this pass (two ints per slot for MAX).  When t > 32
 * every thread of the block must call this the same number of times (it
 * holds one __syncthreads); t is uniform per launch.
 */
template <int DT>
__device__ float ev_group_sum(const ev_acck<EV_COMBINE_SUM, DT> &acc, int t, int lane, float *red)
{
    float v = acc.warp();
    if (t > 32) {
        int nw = t / 32, w = lane / 32;
        if ((lane & 31) == 0)
            red[w] = v;
        __syncthreads();
        if (w == 0) {
            v = lane < nw ? red[lane] : -0.0f;
#pragma unroll
            for (int m = 16; m >= 1; m /= 2)
                v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, m));
        }
    }
    return v;
}

template <int C, int DT> __device__ float ev_group_keys(const ev_acc_keys<DT> &acc, int t, int lane, int *red)
{
    int hi, lo;
    acc.lanes(&hi, &lo);
    hi = __reduce_max_sync(0xffffffffu, hi);
    lo = __reduce_min_sync(0xffffffffu, lo);
    if (t > 32) {
        int nw = t / 32, w = lane / 32;
        if ((lane & 31) == 0) {
            red[2 * w] = hi;
            red[2 * w + 1] = lo;
        }
        __syncthreads();
        if (w == 0) {
            hi = lane < nw ? red[2 * lane] : ev_mk<DT>::neg_inf;
            lo = lane < nw ? red[2 * lane + 1] : ev_mk<DT>::pos_inf;
            hi = __reduce_max_sync(0xffffffffu, hi);
            lo = __reduce_min_sync(0xffffffffu, lo);
        }
    }
    return ev_key_value<C, DT>(hi, lo);
}

/* ev_group_sum or ev_group_keys by the op's combine (red as ints). */
template <int C, int DT> struct ev_groupk {
    __device__ static float combine(const ev_acc_keys<DT> &acc, int t, int lane, int *red)
    {
        return ev_group_keys<C, DT>(acc, t, lane, red);
    }
};
template <int DT> struct ev_groupk<EV_COMBINE_SUM, DT> {
    __device__ static float combine(const ev_acck<EV_COMBINE_SUM, DT> &acc, int t, int lane, int *red)
    {
        return ev_group_sum<DT>(acc, t, lane, reinterpret_cast<float *>(red));
    }
};
template <int OP, int DT> struct ev_group : ev_groupk<ev_combine_of(OP), DT> {
};

/* lg(t) for a lane count t: a constant where T is one. */
template <int T> __device__ __forceinline__ int ev_lanes_shift(int t)
{
    return T == 32 ? 5 : T == 64 ? 6 : T == 128 ? 7 : T == 256 ? 8 : T == 512 ? 9 : T == 1024 ? 10 : __ffs(t) - 1;
}

/*
 * One program: rows [blockIdx.x * b, +b) of in (R rows of `stride`
 * elements) into out, t lanes per row (a power of two, 32..1024),
 * blockDim.x = the selector's (a multiple of t).  Shared memory: two buffers of 32 slots
 * (two ints each), alternating by pass, so the pass after next rewrites a
 * buffer only after every thread has passed the barrier between.
 * LEAN: 0 each row by ev_lane_fold, 1 by ev_lean_load (EV_LEAN), 2 by
 * ev_lean_load_u (EV_LEAN_U).
 */
template <int OP, int DT, int T, int LEAN>
__device__ __forceinline__ void ev_reduce_passes(const void *in, void *out, int64_t R, int64_t N, int64_t stride,
                                                 int b, int t)
{
    __shared__ int red[2][64];
    t = T ? T : t;
    int sh = ev_lanes_shift<T>(t);
    int groups = (int)blockDim.x >> sh, g = (int)threadIdx.x >> sh, lane = (int)threadIdx.x & (t - 1);
    int64_t row0 = (int64_t)blockIdx.x * b;
    int buf = 0;
    for (int base = 0; base < b; base += groups, buf ^= 1) {
        int64_t r = row0 + base + g;
        int valid = base + g < b && r < R;
        const unsigned char *row =
            reinterpret_cast<const unsigned char *>(in) + (valid ? r * stride * ev_dt<DT>::size : 0);
        ev_acc<OP, DT> acc;
        acc.init();
        if constexpr (LEAN != 0) {
            uint4 v[4];
            if constexpr (LEAN == 1)
                ev_lean_load<OP, DT, T>(v, row, valid ? (int)(N / (16 / ev_dt<DT>::size)) : 0, lane);
            else
                ev_lean_load_u<OP, DT, T>(v, row, valid ? (int)N : 0, lane);
#pragma unroll
            for (int k = 0; k < 4; k++)
                acc.vec(v[k]);
        } else {
            ev_lane_fold<OP, DT, T>(acc, row, valid ? N : 0, t, lane);
        }
        float v = ev_group<OP, DT>::combine(acc, t, lane, red[buf] + 2 * g * (t / 32));
        if (valid && lane == 0)
            ev_dt<DT>::store(out, r, ev_finished<OP>(v, N));
    }
}

template <int OP, int DT, int T>
__device__ void ev_reduce_program_t(const void *in, void *out, int64_t R, int64_t N, int64_t stride, int b,
                                    int t)
{
#if EV_LEAN
    if constexpr (T != 0) {
        const int V = 16 / ev_dt<DT>::size;
        if (((uintptr_t)in & 15u) == 0 && ((stride * ev_dt<DT>::size) & 15) == 0 && N % V == 0 &&
            N <= 4 * (int64_t)T * V) {
            ev_reduce_passes<OP, DT, T, 1>(in, out, R, N, stride, b, t);
            return;
        }
#if EV_LEAN_U
        if (N <= 4 * (int64_t)T * V) { /* ceil(N / V) <= 4T: the partial chunk counted */
            ev_reduce_passes<OP, DT, T, 2>(in, out, R, N, stride, b, t);
            return;
        }
#endif
    }
#endif
    ev_reduce_passes<OP, DT, T, 0>(in, out, R, N, stride, b, t);
}

/*
 * EV_SPECIALIZE (docs/perf-notes.md, v4; 1 is the default): the program is compiled
 * once per lane count t (32 .. 1024) and once generic; the entry branches
 * to the copy of its t, whose loops and index arithmetic have t as a
 * constant and whose lanes of at most four chunks take one straight-line
 * step (every aligned row up to 64 KiB: t = W * esize / 64 gives at most
 * four chunks a lane).  0: the generic copy only (v3).  Same bytes, same
 * order, same bits (kernel-bench: every output equal to its CPU twin).
 * Measured side by side (docs/experiments/h200-specialize-v4.txt): small
 * cases 0.87-0.97 of v3, large ones 0.93-1.00.
 */
#ifndef EV_SPECIALIZE
#define EV_SPECIALIZE 1
#endif

template <int OP, int DT>
__device__ void ev_reduce_program(const void *in, void *out, int64_t R, int64_t N, int64_t stride, int b,
                                  int t)
{
#if EV_SPECIALIZE
    switch (t) {
    case 32:
        ev_reduce_program_t<OP, DT, 32>(in, out, R, N, stride, b, t);
        return;
    case 64:
        ev_reduce_program_t<OP, DT, 64>(in, out, R, N, stride, b, t);
        return;
    case 128:
        ev_reduce_program_t<OP, DT, 128>(in, out, R, N, stride, b, t);
        return;
    case 256:
        ev_reduce_program_t<OP, DT, 256>(in, out, R, N, stride, b, t);
        return;
    case 512:
        ev_reduce_program_t<OP, DT, 512>(in, out, R, N, stride, b, t);
        return;
    case 1024:
        ev_reduce_program_t<OP, DT, 1024>(in, out, R, N, stride, b, t);
        return;
    default:
        break;
    }
#endif
    ev_reduce_program_t<OP, DT, 0>(in, out, R, N, stride, b, t);
}

/* ---- the thin program: rows of at most 32 chunks, p threads a row ------- */

/*
 * For rows of at most 32 chunks (ceil(N / V) <= 32, V = 16 / esize: rows
 * of at most 512 bytes), whose documented lane count is t = 32 and whose
 * lanes hold at most one chunk each (kernels/reduce_cpu.h): chunk c of a
 * row (the last one partial, padded with the exact no-op element) belongs
 * to lane c.  p = clamp(pow2ceil(chunks) / 4, 1, 8) threads read a row
 * (ev_short_threads, kernels/lanes.c), so a thread reads at most four
 * chunks, all in flight at once.  The short schedule's programs
 * (reduce_short.cuh) and, since v8, the default and rowsK programs on such
 * rows (ev_thin_threads, kernels/selector.c) are thin programs.
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
 * the row's p threads.  So every sum equals the t-lane program's, and the
 * CPU twin's, bit for bit.  MAX folds its keys as the default does (order
 * immaterial).
 */

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
    const uint32_t pw = ev_pad<OP, DT>();
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

/* A short row by the op's combine: ev_short_rowk<C, OP, DT, P>. */
template <int C, int OP, int DT, int P> struct ev_short_rowk;

/* SUM: the lanes' slot trees, the in-thread butterfly steps, the shuffles. */
template <int OP, int DT, int P> struct ev_short_rowk<EV_COMBINE_SUM, OP, DT, P> {
    __device__ static float reduce(const unsigned char *row, int64_t n, int k)
    {
        uint4 v[4];
        float u[4];
        ev_short_load<OP, DT, P>(v, row, n, k);
#pragma unroll
        for (int m = 0; m < 4; m++) {
            ev_acck<EV_COMBINE_SUM, DT> acc;
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

/* MAX, MIN: every chunk of the thread into one (hi, lo), then the row's
 * threads. */
template <int C, int OP, int DT, int P> struct ev_short_rowk {
    __device__ static float reduce(const unsigned char *row, int64_t n, int k)
    {
        uint4 v[4];
        ev_acc_keys<DT> acc;
        int hi, lo;
        ev_short_load<OP, DT, P>(v, row, n, k);
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
        return ev_key_value<C, DT>(hi, lo);
    }
};
template <int OP, int DT, int P> struct ev_short_row : ev_short_rowk<ev_combine_of(OP), OP, DT, P> {
};

/*
 * One thin program: rows [blockIdx.x * b, + b) of in (R rows of `stride`
 * elements, N <= 32 chunks) into out, P threads a row, blockDim.x / P rows
 * a pass (blockDim.x a multiple of 32).  Every thread takes part in the
 * shuffles (a thread past the program's rows with n = 0).
 */
template <int OP, int DT, int P>
__device__ __forceinline__ void ev_thin_rows(const void *in, void *out, int64_t R, int64_t N, int64_t stride,
                                             int b)
{
    int groups = (int)blockDim.x / P, g = (int)threadIdx.x / P, k = (int)threadIdx.x & (P - 1);
    int64_t row0 = (int64_t)blockIdx.x * b;
    for (int base = 0; base < b; base += groups) {
        int64_t r = row0 + base + g;
        int valid = base + g < b && r < R;
        const unsigned char *row =
            reinterpret_cast<const unsigned char *>(in) + (valid ? r * stride * ev_dt<DT>::size : 0);
        float v = ev_short_row<OP, DT, P>::reduce(row, valid ? N : 0, k);
        if (valid && k == 0)
            ev_dt<DT>::store(out, r, ev_finished<OP>(v, N));
    }
}

/* The thin program of p (1, 2, 4 or 8) threads a row. */
template <int OP, int DT>
__device__ void ev_thin_program(const void *in, void *out, int64_t R, int64_t N, int64_t stride, int b, int p)
{
    switch (p) {
    case 1: ev_thin_rows<OP, DT, 1>(in, out, R, N, stride, b); break;
    case 2: ev_thin_rows<OP, DT, 2>(in, out, R, N, stride, b); break;
    case 4: ev_thin_rows<OP, DT, 4>(in, out, R, N, stride, b); break;
    default: ev_thin_rows<OP, DT, 8>(in, out, R, N, stride, b); break;
    }
}

/* ---- paired lanes: a row of t = 64 lanes by one warp ---------------------- */

/*
 * EV_PAIR (docs/perf-notes.md, v8; 1 is the default): a row of t = 64 lanes (a
 * padded row of 4096 bytes: at most four chunks a lane) is executed by one
 * warp, thread k holding lanes k and k + 32 (ev_row_threads gives 32
 * threads a row).  How the order is kept: lane k's accumulator is warp 0's
 * lane k and lane k + 32's is warp 1's, each folded as in the t-lane
 * program; each is reduced by the slot tree and the lane butterfly
 * (ev_acc::warp), giving the two warps' values w0 and w1 that the t-lane
 * program writes to shared memory; its combination (warp 0's butterfly
 * over w0, w1 and thirty -0.0, an exact no-op each, IEEE addition being
 * commutative) is w0 + w1 bit for bit, which is what the warp adds here,
 * without shared memory or a barrier.  MAX, MIN: both lanes' keys into one
 * (hi, lo) (order immaterial).  0: two warps and the barrier (v7).
 */
template <int C, int DT> struct ev_pairk {
    /* MAX, MIN: both lanes' chunks went into a0 (order immaterial); a1 is empty */
    __device__ static float combine(const ev_acc_keys<DT> &a0, const ev_acc_keys<DT> &a1)
    {
        int hi, lo;
        (void)a1;
        a0.lanes(&hi, &lo);
        hi = __reduce_max_sync(0xffffffffu, hi);
        lo = __reduce_min_sync(0xffffffffu, lo);
        return ev_key_value<C, DT>(hi, lo);
    }
};
template <int DT> struct ev_pairk<EV_COMBINE_SUM, DT> {
    __device__ static float combine(const ev_acck<EV_COMBINE_SUM, DT> &a0, const ev_acck<EV_COMBINE_SUM, DT> &a1)
    {
        return __fadd_rn(a0.warp(), a1.warp());
    }
};
template <int OP, int DT> struct ev_pair : ev_pairk<ev_combine_of(OP), DT> {
};

/*
 * One paired program: rows [blockIdx.x * b, + b) of in, one warp a row,
 * blockDim.x / 32 rows a pass.  LEAN 1: every row starts on 16 bytes and
 * holds whole chunks (ev_lean_load); 2: any row (ev_lean_load_u).
 */
template <int OP, int DT, int LEAN>
__device__ __forceinline__ void ev_pair_rows(const void *in, void *out, int64_t R, int64_t N, int64_t stride,
                                             int b)
{
    const int V = 16 / ev_dt<DT>::size;
    int warps = (int)blockDim.x >> 5, g = (int)threadIdx.x >> 5, lane = (int)threadIdx.x & 31;
    int64_t row0 = (int64_t)blockIdx.x * b;
    for (int base = 0; base < b; base += warps) {
        int64_t r = row0 + base + g;
        int valid = base + g < b && r < R;
        const unsigned char *row =
            reinterpret_cast<const unsigned char *>(in) + (valid ? r * stride * ev_dt<DT>::size : 0);
        ev_acc<OP, DT> a0, a1;
        a0.init();
        a1.init();
        ev_acc<OP, DT> &second = ev_combine_of(OP) == EV_COMBINE_SUM ? a1 : a0; /* MAX, MIN: one (hi, lo) */
        uint4 v0[4], v1[4];
        if constexpr (LEAN == 1) { /* eight 16-byte loads in flight */
            ev_lean_load<OP, DT, 64>(v0, row, valid ? (int)(N / V) : 0, lane);
            ev_lean_load<OP, DT, 64>(v1, row, valid ? (int)(N / V) : 0, lane + 32);
#pragma unroll
            for (int k = 0; k < 4; k++) {
                a0.vec(v0[k]);
                second.vec(v1[k]);
            }
        } else { /* a lane at a time: sixteen blocks would not fit in 64 registers */
            ev_lean_load_u<OP, DT, 64>(v0, row, valid ? (int)N : 0, lane);
#pragma unroll
            for (int k = 0; k < 4; k++)
                a0.vec(v0[k]);
            ev_lean_load_u<OP, DT, 64>(v1, row, valid ? (int)N : 0, lane + 32);
#pragma unroll
            for (int k = 0; k < 4; k++)
                second.vec(v1[k]);
        }
        float v = ev_pair<OP, DT>::combine(a0, a1);
        if (valid && lane == 0)
            ev_dt<DT>::store(out, r, ev_finished<OP>(v, N));
    }
}

/* The paired program: ev_pair_rows, lean where every row allows it. */
template <int OP, int DT>
__device__ void ev_pair_program(const void *in, void *out, int64_t R, int64_t N, int64_t stride, int b)
{
    const int V = 16 / ev_dt<DT>::size;
    if (((uintptr_t)in & 15u) == 0 && ((stride * ev_dt<DT>::size) & 15) == 0 && N % V == 0)
        ev_pair_rows<OP, DT, 1>(in, out, R, N, stride, b);
    else
        ev_pair_rows<OP, DT, 2>(in, out, R, N, stride, b);
}

/*
 * The program of a default or rowsK entry, by the threads a row rt the
 * selector planned (ev_row_threads): the thin program for rt < 32, paired
 * lanes for rt = 32 on rows of t = 64 lanes, t lanes a row otherwise.
 */
template <int OP, int DT>
__device__ __forceinline__ void ev_rows_program(const void *in, void *out, int64_t R, int64_t N, int64_t stride,
                                                int b, int t, int rt)
{
    if (rt > 0 && rt < 32)
        ev_thin_program<OP, DT>(in, out, R, N, stride, b, rt);
#if EV_PAIR
    else if (rt == 32 && t == 64)
        ev_pair_program<OP, DT>(in, out, R, N, stride, b);
#endif
    else
        ev_reduce_program<OP, DT>(in, out, R, N, stride, b, t);
}

/* EV_DEVICE_CODE_ONLY: the device helpers without the entries (peer_cub.cu). */
#ifndef EV_DEVICE_CODE_ONLY
#define EV_DEFAULT_ENTRY(OP, opname, DT, dtname)                                                       \
    extern "C" __global__ void __launch_bounds__(1024) opname##_##dtname##_default(                    \
        const void *in, void *out, long long R, long long N, long long stride, int b, int t, int rt)   \
    {                                                                                                  \
        ev_rows_program<EV_OP_##OP, EV_DTYPE_##DT>(in, out, R, N, stride, b, t, rt);                   \
    }

EV_OPS_BY_DTYPES(EV_DEFAULT_ENTRY)
#endif

#endif
