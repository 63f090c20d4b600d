/*
 * verify_json.c: typed reading of the parsed JSON members for the checks:
 * a missing key or a value of the wrong type is an answer (-1), never a
 * crash, so hostile members are reported as failures.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify_int.h"

const vb_vjob *vb_job_by_id(const vb_bundle *b, int64_t job_id)
{
    size_t lo = 0, hi = b->n_vjobs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->vjobs[mid].job_id == job_id)
            return &b->vjobs[mid];
        if (b->vjobs[mid].job_id < job_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void vb_rows_of(const vb_bundle *b, int64_t job_id, int64_t attempt, size_t *first, size_t *n_cold,
                size_t *n_hot)
{
    const vb_samples *t = &b->samples;
    size_t lo = 0, hi = t->n_jobs;
    *first = 0;
    *n_cold = *n_hot = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->jobs[mid].job_id == job_id) {
            const vb_sjob *j = &t->jobs[mid];
            size_t i = j->first, end = j->first + j->count;
            while (i < end && t->rows[i].attempt < attempt)
                i++;
            *first = i;
            while (i < end && t->rows[i].attempt == attempt && !t->rows[i].hot) {
                (*n_cold)++;
                i++;
            }
            while (i < end && t->rows[i].attempt == attempt && t->rows[i].hot) {
                (*n_hot)++;
                i++;
            }
            return;
        }
        if (t->jobs[mid].job_id < job_id)
            lo = mid + 1;
        else
            hi = mid;
    }
}

/* 10^i for i in 0..22 (10^22 < 2^74). */
static const unsigned __int128 vb_pow10[23] = {
    1ULL,
    10ULL,
    100ULL,
    1000ULL,
    10000ULL,
    100000ULL,
    1000000ULL,
    10000000ULL,
    100000000ULL,
    1000000000ULL,
    10000000000ULL,
    100000000000ULL,
    1000000000000ULL,
    10000000000000ULL,
    100000000000000ULL,
    1000000000000000ULL,
    10000000000000000ULL,
    100000000000000000ULL,
    1000000000000000000ULL,
    (unsigned __int128)1000000000000000000ULL * 10,
    (unsigned __int128)1000000000000000000ULL * 100,
    (unsigned __int128)1000000000000000000ULL * 1000,
    (unsigned __int128)1000000000000000000ULL * 10000,
};

/* round(m * 2^e2 * 10^q) to nearest, ties to even, for q in [0, 22] and
 * e2 in [-120, 0]; m < 2^53.  Exact in 128 bits.  OUT: *trunc, the value
 * before rounding (its floor). */
static uint64_t vb_scaled_round(uint64_t m, int e2, int q, uint64_t *trunc)
{
    unsigned __int128 n = (unsigned __int128)m * vb_pow10[q];
    int s = -e2;
    if (s == 0) {
        *trunc = (uint64_t)n;
        return (uint64_t)n;
    }
    unsigned __int128 quo = n >> s, rem = n - (quo << s), half = (unsigned __int128)1 << (s - 1);
    *trunc = (uint64_t)quo;
    if (rem > half || (rem == half && (quo & 1)))
        quo++;
    return (uint64_t)quo;
}

/* vb_format17, starting from k as the guess of floor(log10(|v|)) (the
 * loop below corrects a guess that is off by one or two; K_NONE: compute
 * it). */
#define K_NONE (-1000)
static int format17_from(double v, char buf[32], int k)
{
    if (!isfinite(v))
        return -1;
    double a = fabs(v);
    if (a == 0.0 || !(a >= 1e-6 && a < 9007199254740992.0)) {
        snprintf(buf, 32, "%.17g", v);
        return 0;
    }
    int ex;
    double fr = frexp(a, &ex); /* a = fr * 2^ex, fr in [0.5, 1) */
    uint64_t m = (uint64_t)ldexp(fr, 53);
    int e2 = ex - 53; /* a = m * 2^e2, e2 in [-73, 0) here */
    if (k == K_NONE)
        k = (int)floor(log10(a));
    uint64_t q17 = 0;
    int found = 0;
    for (int tries = 0; tries < 3 && !found; tries++) {
        int q = 16 - k;
        if (q < 0 || q > 22 || e2 > 0 || e2 < -120) {
            snprintf(buf, 32, "%.17g", v);
            return 0;
        }
        uint64_t tr;
        q17 = vb_scaled_round(m, e2, q, &tr);
        if (tr < 10000000000000000ULL)
            k--;
        else if (tr >= 100000000000000000ULL)
            k++;
        else
            found = 1;
    }
    if (q17 == 100000000000000000ULL) { /* rounded up to the next power of ten */
        q17 = 10000000000000000ULL;
        k++;
    }
    if (!found || q17 < 10000000000000000ULL || q17 >= 100000000000000000ULL) {
        snprintf(buf, 32, "%.17g", v);
        return 0;
    }
    char d[18];
    for (int i = 16; i >= 0; i--) {
        d[i] = (char)('0' + q17 % 10);
        q17 /= 10;
    }
    int nd = 17;
    while (nd > 1 && d[nd - 1] == '0')
        nd--;
    size_t o = 0;
    if (v < 0)
        buf[o++] = '-';
    if (k >= -4 && k < 17) {
        if (k >= 0) {
            for (int i = 0; i <= k; i++)
                buf[o++] = i < nd ? d[i] : '0';
            if (nd > k + 1) {
                buf[o++] = '.';
                for (int i = k + 1; i < nd; i++)
                    buf[o++] = d[i];
            }
        } else {
            buf[o++] = '0';
            buf[o++] = '.';
            for (int i = 0; i < -k - 1; i++)
                buf[o++] = '0';
            for (int i = 0; i < nd; i++)
                buf[o++] = d[i];
        }
        buf[o] = '\0';
        return 0;
    }
    buf[o++] = d[0];
    if (nd > 1) {
        buf[o++] = '.';
        for (int i = 1; i < nd; i++)
            buf[o++] = d[i];
    }
    snprintf(buf + o, 32 - o, "e%c%02d", k < 0 ? '-' : '+', k < 0 ? -k : k);
    return 0;
}

int vb_format17(double v, char buf[32])
{
    return format17_from(v, buf, K_NONE);
}

/* 10^i for i in 0..22 as doubles: each exact. */
static const double vb_pow10d[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

int vb_read17(const char *s, size_t n, double *out)
{
    size_t i = 0;
    int neg = 0, seen_dot = 0, any = 0, nd = 0, dexp = 0;
    uint64_t d = 0;
    if (n == 0 || n > 31)
        return -1;
    if (s[0] == '-') {
        neg = 1;
        i++;
    }
    for (; i < n; i++) {
        char ch = s[i];
        if (ch >= '0' && ch <= '9') {
            any = 1;
            if (d || ch != '0') {
                if (nd >= 19)
                    return -1;
                d = d * 10 + (uint64_t)(ch - '0');
                nd++;
            }
            if (seen_dot)
                dexp--;
        } else if (ch == '.' && !seen_dot) {
            seen_dot = 1;
        } else {
            break;
        }
    }
    if (!any)
        return -1;
    if (i < n) {
        int eneg = 0, e = 0, ne = 0;
        if (s[i] != 'e')
            return -1;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        for (; i < n; i++) {
            if (s[i] < '0' || s[i] > '9' || ne >= 4)
                return -1;
            e = e * 10 + (s[i] - '0');
            ne++;
        }
        if (!ne)
            return -1;
        dexp += eneg ? -e : e;
    }
    double v;
    if (d == 0)
        v = 0.0;
    else if (dexp >= 0 && dexp <= 22)
        v = (double)d * vb_pow10d[dexp];
    else if (dexp < 0 && dexp >= -22)
        v = (double)d / vb_pow10d[-dexp];
    else
        return -1;
    if (neg)
        v = -v;
    /* v, then one and two units either side */
    double up = v, down = v;
    for (int k = 0; k < 5; k++) {
        double c = v;
        if (k) {
            if (k % 2) {
                up = nextafter(up, INFINITY);
                c = up;
            } else {
                down = nextafter(down, -INFINITY);
                c = down;
            }
        }
        char buf[32];
        if (format17_from(c, buf, nd - 1 + dexp)) /* the text's own exponent */
            continue;
        if (!strncmp(buf, s, n) && buf[n] == '\0') {
            *out = c;
            return 0;
        }
    }
    return -1;
}
