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

/* "00" "01" ... "99": two digits per table read instead of one division per digit. */
static const char pairs[201] = "000102030405060708091011121314151617181920212223242526272829"
                               "303132333435363738394041424344454647484950515253545556575859"
                               "606162636465666768697071727374757677787980818283848586878889"
                               "90919293949596979899";

/* The n decimal digits of v (v < 10^n, leading zeros kept) into buf[0..n). */
static void put_fixed(char *buf, uint64_t v, size_t n)
{
    while (n >= 2) {
        memcpy(buf + n - 2, pairs + 2 * (v % 100), 2);
        v /= 100;
        n -= 2;
    }
    if (n) {
        buf[0] = (char)('0' + v);
    }
}

/* The 8 digits of v < 10^8 into buf[0..8): two independent 4-digit halves. */
static void put8(char *buf, uint32_t v)
{
    uint32_t hi = v / 10000, lo = v % 10000;
    memcpy(buf, pairs + 2 * (hi / 100), 2);
    memcpy(buf + 2, pairs + 2 * (hi % 100), 2);
    memcpy(buf + 4, pairs + 2 * (lo / 100), 2);
    memcpy(buf + 6, pairs + 2 * (lo % 100), 2);
}

/* The 17 digits of 10^16 <= v < 10^17 into buf[0..17). */
static void put17(char *buf, uint64_t v)
{
    uint64_t rest = v % 10000000000000000ULL;
    buf[0] = (char)('0' + v / 10000000000000000ULL);
    put8(buf + 1, (uint32_t)(rest / 100000000));
    put8(buf + 9, (uint32_t)(rest % 100000000));
}

/* The index of the last digit of d[0..24) that is not '0' (d[0] is not: 10^16 <= n): the
 * words d[16..24) and d[8..16) compared with eight '0's, the last differing byte found by its
 * bit (little-endian words: the highest byte is the last character). */
static int last_not_zero(const char *d)
{
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    int last = 23;
    while (d[last] == '0') {
        last--;
    }
    return last;
#endif
    static const uint64_t zeros = 0x3030303030303030ULL;
    for (int w = 2; w >= 1; w--) {
        uint64_t x;
        memcpy(&x, d + 8 * w, sizeof x);
        x ^= zeros;
        if (x) {
            return 8 * w + (63 - __builtin_clzll(x)) / 8;
        }
    }
    uint64_t x;
    memcpy(&x, d, sizeof x);
    x ^= zeros;
    return (63 - __builtin_clzll(x)) / 8;
}

/* Number of decimal digits of v (1 for 0). */
static size_t n_digits(uint64_t v)
{
    size_t n = 1;
    while (n < 20 && v >= pow10_u64[n]) {
        n++;
    }
    return n;
}

size_t numfmt_u64(char *buf, uint64_t v)
{
    size_t n = n_digits(v);
    put_fixed(buf, v, n);
    buf[n] = '\0';
    return n;
}

size_t numfmt_fixed9(char *buf, int64_t ns)
{
    SIM_ASSERT(ns >= 0);
    size_t n = numfmt_u64(buf, (uint64_t)ns / 1000000000ULL);
    buf[n++] = '.';
    put_fixed(buf + n, (uint64_t)ns % 1000000000ULL, 9);
    n += 9;
    buf[n] = '\0';
    return n;
}

static size_t g17_printf(char *buf, double v)
{
    int n = snprintf(buf, NUMFMT_LEN, "%.17g", v);
    return n > 0 ? (size_t)n : 0;
}

/* The smallest double >= 10^k, k = -4..16 (the literals of negative powers round up), for the
 * first guess of a value's decimal exponent. */
static const double pow10_ge[21] = {1e-4, 1e-3, 1e-2, 1e-1, 1e0,  1e1,  1e2,  1e3,  1e4,  1e5, 1e6,
                                    1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16};

size_t numfmt_g17(char *buf, double v)
{
    double a = fabs(v);
    if (!(a >= 1e-4 && a < 9007199254740992.0)) { /* exponent style, zero, huge, NaN/Inf */
        return g17_printf(buf, v);
    }
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    int e2 = (int)(bits >> 52) - 1023; /* a normal: a = M 2^(e2 - 52), 2^52 <= M < 2^53 */
    uint64_t m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
    int s = 52 - e2; /* a = m / 2^s; 0 <= s <= 66 here */
    int tz = __builtin_ctzll(m);
    tz = tz < s ? tz : s; /* fewer bits to shift: same value */
    m >>= tz;
    s -= tz;
    /* the decimal exponent X of the value rounded to 17 digits: 10^16 <= n < 10^17. The guess
     * from 2^e2 <= a is X or X - 1, and a >= pow10_ge[x + 1] > 10^(x + 1) lifts it without
     * passing X; rounding up to 10^17 moves it on in the loop */
    /* floor(e2 log10 2), 1233 / 4096 ~ log10 2, through a positive number: 16 added before the
     * shift (e2 >= -14 here), 16 taken after */
    int x = ((e2 * 1233 + 16 * 4096) >> 12) - 16;
    if (x + 1 <= 16 && a >= pow10_ge[x + 1 + 4]) {
        x++;
    }
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
        return g17_printf(buf, v);
    }
    char d[24]; /* the 17 digits, then '0's to a whole number of 8-byte words */
    put17(d, (uint64_t)n);
    memset(d + G_DIGITS, '0', sizeof d - G_DIGITS);
    size_t len = 0;
    if (v < 0) {
        buf[len++] = '-';
    }
    /* style f with G_DIGITS - 1 - x decimals: x + 1 integer digits (or "0" and -x - 1 zeros) */
    int n_int = x + 1;
    int last = last_not_zero(d); /* the last significant digit kept: trailing zeros go */
    last = last > n_int - 1 ? last : n_int - 1;
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
