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
    /* p + half - 1 rounds the quotient up past every tie, and the quotient's last bit takes
     * a tie on to the even one: no branch (which way a value rounds is as good as random) */
    u128 half = (u128)1 << (s - 1);
    return (p + (half - 1) + ((p >> s) & 1)) >> s;
}

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "numfmt_g17 puts its digits together in little-endian words"
#endif

#define ZEROS8 0x3030303030303030ULL /* eight '0's */

/* "00" "01" ... "99": two digits per table read instead of one division per digit. */
static const char pairs[201] = "000102030405060708091011121314151617181920212223242526272829"
                               "303132333435363738394041424344454647484950515253545556575859"
                               "606162636465666768697071727374757677787980818283848586878889"
                               "90919293949596979899";

/* The two digits of v < 100 as a 16-bit little-endian word. */
static uint64_t pair(uint32_t v)
{
    uint16_t p;
    memcpy(&p, pairs + 2 * v, 2);
    return p;
}

/* The 8 decimal digits of v < 10^8 as the bytes of a little-endian word (its first character in
 * the lowest byte), put together in a register from four pairs: the digits stay there until
 * the text is stored. Written as 2-byte pieces and read back as a word, they stalled the load
 * (a load spanning several smaller stores is not forwarded from them). */
static uint64_t digits8(uint32_t v)
{
    uint32_t hi = v / 10000, lo = v % 10000;
    return pair(hi / 100) | pair(hi % 100) << 16 | pair(lo / 100) << 32 | pair(lo % 100) << 48;
}

/* The index (0..7) of the last digit of word w (digits8) that is not '0'; w is not all '0's.
 * Little-endian: the last character is the highest byte. */
static int last_not_zero8(uint64_t w)
{
    return (63 - __builtin_clzll(w ^ ZEROS8)) / 8;
}

/* Number of decimal digits of v (1 for 0): floor(log10 2^b) from v's bit length b (1233 / 4096
 * ~ log10 2, as in numfmt_g17), and one more when v reaches that power of ten. */
static size_t n_digits(uint64_t v)
{
    size_t n = (size_t)((64 - __builtin_clzll(v | 1)) * 1233 >> 12); /* 0..19 */
    n += v >= pow10_u64[n];
    return n ? n : 1;
}

/* The digits of v, each eight from one word (digits8) stored whole: buf holds NUMFMT_LEN bytes,
 * so the bytes of a word past the text are scratch. */
size_t numfmt_u64(char *buf, uint64_t v)
{
    size_t n;
    if (v < 100000000) {
        n = n_digits(v);
        uint64_t w = digits8((uint32_t)v) >> 8 * (8 - n); /* its last n digits */
        memcpy(buf, &w, 8);
    } else {
        n = numfmt_u64(buf, v / 100000000);
        uint64_t w = digits8((uint32_t)(v % 100000000));
        memcpy(buf + n, &w, 8);
        n += 8;
    }
    buf[n] = '\0';
    return n;
}

size_t numfmt_fixed9(char *buf, int64_t ns)
{
    SIM_ASSERT(ns >= 0);
    size_t n = numfmt_u64(buf, (uint64_t)ns / 1000000000ULL);
    uint32_t frac = (uint32_t)((uint64_t)ns % 1000000000ULL);
    buf[n] = '.';
    buf[n + 1] = (char)('0' + frac / 100000000);
    uint64_t w = digits8(frac % 100000000);
    memcpy(buf + n + 2, &w, 8);
    n += 10;
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
    /* the 17 digits: the first, then two words of eight (digits8) */
    uint64_t top = (uint64_t)n / 100000000; /* < 10^9 */
    uint32_t lo = (uint32_t)((uint64_t)n - top * 100000000);
    uint32_t d0 = (uint32_t)top / 100000000, hi = (uint32_t)top - d0 * 100000000;
    d0 += '0';
    uint64_t w1 = digits8(hi), w2 = digits8(lo);
    /* the last significant digit: trailing zeros go */
    int last = lo ? 9 + last_not_zero8(w2) : hi ? 1 + last_not_zero8(w1) : 0;
    size_t neg = v < 0, len;
    buf[0] = '-';
    buf += neg;
    /* style f with G_DIGITS - 1 - x decimals: x + 1 integer digits (or "0" and -x - 1 zeros).
     * The text is put together in registers and stored a word at a time (buf holds NUMFMT_LEN
     * bytes; what lies past the text is scratch), its length then set by the '\0'. */
    int n_int = x + 1;
    if (n_int <= 0) { /* "0." and -n_int zeros (0 to 3), then the digits to the last kept */
        size_t at = 2 + (size_t)-n_int;
        memcpy(buf, "0.000000", 8);
        buf[at] = (char)d0;
        memcpy(buf + at + 1, &w1, 8);
        memcpy(buf + at + 9, &w2, 8);
        len = at + (size_t)last + 1;
    } else if (n_int < G_DIGITS) { /* the point after n_int digits (1 to 16) */
        u128 d = (u128)d0 | (u128)w1 << 8 | (u128)w2 << 72; /* digits 0..15 */
        char b16 = (char)(w2 >> 48), b17 = (char)(w2 >> 56); /* digits 15 and 16 */
        if (n_int < 16) {
            u128 keep = ((u128)1 << 8 * n_int) - 1;
            d = (d & keep) | (d & ~keep) << 8 | (u128)'.' << 8 * n_int;
        } else {
            b16 = '.';
        }
        memcpy(buf, &d, 16);
        buf[16] = b16;
        buf[17] = b17;
        len = (size_t)(last < n_int ? n_int : last + 2);
    } else { /* 17 integer digits: 10^16 <= a < 2^53 */
        buf[0] = (char)d0;
        memcpy(buf + 1, &w1, 8);
        memcpy(buf + 9, &w2, 8);
        len = G_DIGITS;
    }
    buf[len] = '\0';
    return neg + len;
}
