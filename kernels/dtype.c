/*
 * dtype.c: fp16/bf16 <-> fp32 conversions by integer bit manipulation
 * (round to nearest even, subnormals, overflow, canonical NaN).
 *
 * These are the conversions the cpu backend, the oracle and the validators
 * use; tests/check_kernels.c checks them exhaustively against GCC's
 * _Float16 (fp16) and against an FP64 rounding reference (bf16).
 */
#include "dtype.h"

#include <string.h>

/* Returns the bit pattern of f. */
uint32_t ev_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Returns the float whose bit pattern is u. */
float ev_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Returns h widened exactly; a NaN keeps sign and payload, quiet bit set. */
float ev_fp16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t u;

    if (exp == 0x1f) {
        u = sign | 0x7f800000u | (man << 13);
        if (man != 0)
            u |= 0x00400000u; /* quiet */
    } else if (exp != 0) {
        u = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0) {
        u = sign;
    } else {
        /* subnormal: value man * 2^-24; normalise the leading one to bit 10 */
        uint32_t e = 113; /* biased fp32 exponent of 2^-14 */
        while ((man & 0x400u) == 0) {
            man <<= 1;
            e--;
        }
        u = sign | (e << 23) | ((man & 0x3ffu) << 13);
    }
    return ev_f32_from_bits(u);
}

/* Returns f rounded to fp16 (RNE); every NaN gives EV_FP16_QNAN. */
uint16_t ev_f32_to_fp16(float f)
{
    uint32_t x = ev_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;

    if (ax > 0x7f800000u)
        return (uint16_t)EV_FP16_QNAN;
    if (ax >= 0x477ff000u) /* >= 65520 = max + half ulp: ties to even go up */
        return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) { /* >= 2^-14: normal fp16 */
        uint32_t odd = (ax >> 13) & 1u;
        ax += 0xfffu + odd; /* carry may bump the exponent: still correct */
        return (uint16_t)(sign | ((ax - 0x38000000u) >> 13));
    }
    if (ax <= 0x33000000u) /* <= 2^-25: rounds to zero (2^-25 is a tie to even 0) */
        return (uint16_t)sign;
    {
        /* subnormal fp16: value in units of 2^-24 is man * 2^(e - 126) */
        uint32_t e = ax >> 23;
        uint32_t man = (ax & 0x7fffffu) | 0x800000u;
        uint32_t s = 126u - e; /* 14..24 */
        uint32_t r = man >> s;
        uint32_t rem = man & ((1u << s) - 1u);
        uint32_t half = 1u << (s - 1u);
        if (rem > half || (rem == half && (r & 1u)))
            r++;
        return (uint16_t)(sign | r);
    }
}

/* Returns h widened exactly (bf16 is the top half of fp32); NaN made quiet. */
float ev_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    if ((u & 0x7fffffffu) > 0x7f800000u)
        u |= 0x00400000u;
    return ev_f32_from_bits(u);
}

/* Returns f rounded to bf16 (RNE); every NaN gives EV_BF16_QNAN. */
uint16_t ev_f32_to_bf16(float f)
{
    uint32_t x = ev_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)EV_BF16_QNAN;
    x += 0x7fffu + ((x >> 16) & 1u); /* overflow carries into Inf correctly */
    return (uint16_t)(x >> 16);
}

/* Returns the bits of f, with every NaN replaced by EV_FP32_QNAN. */
uint32_t ev_f32_canonical(float f)
{
    uint32_t x = ev_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return EV_FP32_QNAN;
    return x;
}

/* Returns element i of base (dtype d) as fp32; 0 for an unknown dtype. */
float ev_dtype_load(ev_dtype d, const void *base, size_t i)
{
    const unsigned char *p = base;
    switch (d) {
    case EV_DTYPE_FP32: {
        float f;
        memcpy(&f, p + i * 4, 4);
        return f;
    }
    case EV_DTYPE_FP16: {
        uint16_t h;
        memcpy(&h, p + i * 2, 2);
        return ev_fp16_to_f32(h);
    }
    case EV_DTYPE_BF16: {
        uint16_t h;
        memcpy(&h, p + i * 2, 2);
        return ev_bf16_to_f32(h);
    }
    default:
        return 0.0f;
    }
}

/* Writes v, converted to dtype d (RNE, canonical NaN), to element i. */
void ev_dtype_store(ev_dtype d, void *base, size_t i, float v)
{
    unsigned char *p = base;
    switch (d) {
    case EV_DTYPE_FP32: {
        uint32_t u = ev_f32_canonical(v);
        memcpy(p + i * 4, &u, 4);
        break;
    }
    case EV_DTYPE_FP16: {
        uint16_t h = ev_f32_to_fp16(v);
        memcpy(p + i * 2, &h, 2);
        break;
    }
    case EV_DTYPE_BF16: {
        uint16_t h = ev_f32_to_bf16(v);
        memcpy(p + i * 2, &h, 2);
        break;
    }
    default:
        break;
    }
}

/* Returns v rounded to dtype d and widened back (canonical NaN). */
float ev_dtype_round(ev_dtype d, float v)
{
    switch (d) {
    case EV_DTYPE_FP32:
        return ev_f32_from_bits(ev_f32_canonical(v));
    case EV_DTYPE_FP16:
        return ev_fp16_to_f32(ev_f32_to_fp16(v));
    case EV_DTYPE_BF16:
        return ev_bf16_to_f32(ev_f32_to_bf16(v));
    default:
        return v;
    }
}
