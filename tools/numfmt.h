/* tools/numfmt.h - number text for the writers, without printf's multi-precision path.
 *
 * numfmt_g17 writes exactly the bytes of snprintf("%.17g") (the round-to-nearest-even decimal
 * of the double's exact binary value, 17 significant digits, trailing zeros removed): values in
 * [1e-4, 2^53) through exact 128-bit integer arithmetic (the double is M / 2^s with M < 2^53, so
 * M * 10^k / 2^s, k <= 20, fits in 120 bits), every other value through snprintf itself. The unit
 * test compares the two on millions of doubles of every magnitude.
 * numfmt_u64 writes an unsigned decimal, numfmt_fixed9 a count of nanoseconds as seconds with nine
 * decimals ("%lld.%09lld" of n / 10^9 and n % 10^9, n >= 0).
 * Each writes into buf (at least NUMFMT_LEN bytes), terminates it with '\0' and returns the
 * number of characters before the '\0'. The digits are stored eight at a time, so bytes of buf
 * past the '\0' (within NUMFMT_LEN) may be overwritten. Ownership: none; buffers are the
 * caller's.
 */
#ifndef SIMPROJ_TOOLS_NUMFMT_H
#define SIMPROJ_TOOLS_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

#define NUMFMT_LEN 40 /* "%.17g" of any double, a uint64 or an int64 of seconds fits */

size_t numfmt_g17(char *buf, double v);
size_t numfmt_u64(char *buf, uint64_t v);
size_t numfmt_fixed9(char *buf, int64_t ns);

#endif
