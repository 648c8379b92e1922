/* tools/numfmt.c - number text without printf's multi-precision path (see numfmt.h). */
#include "tools/numfmt.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sim/xalloc.h"

__extension__ typedef unsigned __int128 u128;

#define G_DIGITS 17

static const uint64_t pow10_u64[20] = {1ULL,
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
                                       10000000000000000000ULL};

/* 10^k as a 128-bit integer, 0 <= k <= 38. */
static u128 pow10_u128(int k)
{
    return k < 20 ? (u128)pow10_u64[k] : (u128)pow10_u64[19] * pow10_u64[k - 19];
}

/* M * 10^k / 2^s rounded to the nearest integer, ties to even (s <= 127). */
static u128 scaled_round(uint64_t m, int k, int s)
{
    u128 p = (u128)m * pow10_u128(k);
    if (s == 0) {
        return p;
    }
    u128 q = p >> s, rem = p & (((u128)1 << s) - 1), half = (u128)1 << (s - 1);
    if (rem > half || (rem == half && (q & 1))) {
        q++;
    }
    return q;
}

/* Digits of v (v < 10^20) into buf, most significant first; returns their count. */
static size_t put_digits(char *buf, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) {
        buf[i] = tmp[n - 1 - i];
    }
    return n;
}

size_t numfmt_u64(char *buf, uint64_t v)
{
    size_t n = put_digits(buf, v);
    buf[n] = '\0';
    return n;
}

size_t numfmt_fixed9(char *buf, int64_t ns)
{
    SIM_ASSERT(ns >= 0);
    size_t n = put_digits(buf, (uint64_t)ns / 1000000000ULL);
    uint64_t frac = (uint64_t)ns % 1000000000ULL;
    buf[n++] = '.';
    for (int i = 8; i >= 0; i--) {
        buf[n + (size_t)i] = (char)('0' + frac % 10);
        frac /= 10;
    }
    n += 9;
    buf[n] = '\0';
    return n;
}

size_t numfmt_g17(char *buf, double v)
{
    double a = fabs(v);
    if (!(a >= 1e-4 && a < 9007199254740992.0)) { /* exponent style, zero, huge, NaN/Inf */
        int n = snprintf(buf, NUMFMT_LEN, "%.17g", v);
        return n > 0 ? (size_t)n : 0;
    }
    int e;
    double f = frexp(a, &e); /* a = f 2^e, 0.5 <= f < 1 */
    uint64_t m = (uint64_t)ldexp(f, 53);
    int s = 53 - e; /* a = m / 2^s; 0 <= s <= 66 here */
    if (s < 0) {    /* cannot happen below 2^53; kept exact anyway */
        int n = snprintf(buf, NUMFMT_LEN, "%.17g", v);
        return n > 0 ? (size_t)n : 0;
    }
    while (s > 0 && !(m & 1)) { /* fewer bits to shift: same value */
        m >>= 1;
        s--;
    }
    /* the decimal exponent X of the value rounded to 17 digits: 10^16 <= n < 10^17 */
    int x = (int)floor((e - 1) * 0.30102999566398120); /* 2^(e-1) <= a: X or X - 1 */
    u128 n;
    for (;;) {
        n = scaled_round(m, G_DIGITS - 1 - x, s);
        if (n >= (u128)pow10_u64[G_DIGITS]) {
            x++;
        } else if (n < (u128)pow10_u64[G_DIGITS - 1]) {
            x--;
        } else {
            break;
        }
    }
    if (x < -4) { /* rounded down below 1e-4: exponent style */
        int k = snprintf(buf, NUMFMT_LEN, "%.17g", v);
        return k > 0 ? (size_t)k : 0;
    }
    char d[G_DIGITS + 1];
    put_digits(d, (uint64_t)n);
    size_t len = 0;
    if (v < 0) {
        buf[len++] = '-';
    }
    /* style f with G_DIGITS - 1 - x decimals: x + 1 integer digits (or "0" and -x - 1 zeros) */
    int n_int = x + 1;
    int last = G_DIGITS - 1; /* the last significant digit kept: trailing zeros go */
    while (last >= 0 && last >= n_int && d[last] == '0') {
        last--;
    }
    if (n_int > 0) {
        memcpy(buf + len, d, (size_t)n_int);
        len += (size_t)n_int;
        if (last >= n_int) {
            buf[len++] = '.';
            memcpy(buf + len, d + n_int, (size_t)(last + 1 - n_int));
            len += (size_t)(last + 1 - n_int);
        }
    } else {
        buf[len++] = '0';
        buf[len++] = '.';
        for (int i = 0; i < -n_int; i++) {
            buf[len++] = '0';
        }
        memcpy(buf + len, d, (size_t)(last + 1));
        len += (size_t)(last + 1);
    }
    buf[len] = '\0';
    return len;
}
