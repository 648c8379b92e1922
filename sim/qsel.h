/* sim/qsel.h - exact quantiles of a long stream of values in bounded memory.
 *
 * The quantiles are GSL's (gsl_stats_quantile_from_sorted_data, as stats_quantile_sorted gives
 * them): for p and n values, index = p (n - 1), lhs = floor(index), and the result is
 * (1 - delta) x[lhs] + delta x[lhs + 1] (delta = index - lhs; x[lhs] alone when lhs = n - 1), x
 * being the values in ascending order. The same bits as sorting every value and asking
 * stats_quantile_sorted, without holding every value: a radix selection on the order-preserving
 * 64-bit key of each double, 16 bits a level.
 *
 * The caller feeds every value (qsel_add), ends the pass (qsel_pass_end), and feeds the same values
 * again, in any order, for as long as qsel_pass_end answers false. The first pass keeps the values
 * (at most `cap`) and counts them in 65 536 buckets of their key's top 16 bits, with each bucket's
 * least and greatest value; when every value was kept, the order statistics are selected from the
 * kept values and no second pass is needed. Otherwise each order statistic wanted (x[lhs] and
 * x[lhs + 1] per p) is in a known bucket: a bucket holding one value alone (least = greatest, e.g.
 * a million zero waits) gives it at once; a bucket of at most `cap` values is gathered in the next
 * pass and the statistic selected from it; a larger one is counted again on the key's next 16
 * bits. A pass costs one step per value; memory is at most cap values plus 1.25 MiB of counts per
 * open bucket (up to 2 per p). Typical continuous data (waits, completion times) needs one more
 * pass; at most four more (64 bits).
 *
 * Ownership: qsel_create's result is the caller's (qsel_destroy). Units: those of the values.
 */
#ifndef SIMPROJ_SIM_QSEL_H
#define SIMPROJ_SIM_QSEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QSEL_MAX_P 4

typedef struct qsel qsel;

/* Quantiles p[0..n_p) (each in [0, 1], n_p <= QSEL_MAX_P) of values to come, keeping at most cap
 * (>= 1) of them in memory. */
qsel *qsel_create(size_t cap, const double *p, int n_p);
void qsel_destroy(qsel *q);
/* One value of the current pass (finite). */
void qsel_add(qsel *q, double v);
/* End the pass. true: every quantile is known (or there were no values); false: feed the same
 * values once more. */
bool qsel_pass_end(qsel *q);
/* Quantile i (after qsel_pass_end returned true; n >= 1). */
double qsel_quantile(const qsel *q, int i);
/* Largest value (n >= 1). */
double qsel_max(const qsel *q);

#endif
