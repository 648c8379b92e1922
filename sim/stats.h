/* sim/stats.h - output statistics: running moments, time-weighted averages, quantiles,
 * batch-means confidence intervals.
 *
 * stats_running: Welford's one-pass mean and variance (numerically stable), min, max, count.
 * stats_timeavg: the time-weighted average of a piecewise-constant signal (a queue length, a
 *   utilisation), integrated exactly between changes; times are sim_time ns.
 * Quantiles sort a caller-owned array in place (gsl_sort) and interpolate with
 * gsl_stats_quantile_from_sorted_data (GSL's definition: linear between order statistics).
 * All structs are plain values the caller owns; nothing allocates.
 */
#ifndef SIMPROJ_SIM_STATS_H
#define SIMPROJ_SIM_STATS_H

#include "sim/simtime.h"

#include <stddef.h>
#include <stdint.h>

typedef struct stats_running {
    uint64_t n;
    double mean, m2; /* m2: sum of squared deviations from the mean */
    double min, max;
} stats_running;

/* An empty accumulator. */
stats_running stats_running_make(void);
/* Add one finite observation. */
void stats_running_add(stats_running *r, double x);
/* Mean (0 when empty). */
double stats_running_mean(const stats_running *r);
/* Unbiased sample variance (0 with fewer than 2 observations). */
double stats_running_var(const stats_running *r);
/* Sample standard deviation. */
double stats_running_sd(const stats_running *r);

typedef struct stats_timeavg {
    sim_time t0;  /* start of the observation window */
    sim_time t;   /* time of the last change */
    double value; /* current value, held since t */
    double area;  /* integral of value dt over [t0, t], value * seconds */
    double max;   /* largest value held */
} stats_timeavg;

/* Start observing at t0 with value v0. */
stats_timeavg stats_timeavg_make(sim_time t0, double v0);
/* n signals observed since the same last change (a[k].t all equal; n = 1: one signal) change
 * to v[k] at time t (>= that change): each adds value * (t - last change) in seconds to its area,
 * the interval converted once. */
void stats_timeavg_set_all(stats_timeavg *a, size_t n, sim_time t, const double *v);
/* Time-weighted mean over [t0, t_end] (t_end >= last change); the current value when
 * t_end == t0. */
double stats_timeavg_mean(const stats_timeavg *a, sim_time t_end);

/* Sort data[0..n) ascending in place and return its p-quantile (0 <= p <= 1, n >= 1). */
double stats_quantile_inplace(double *data, size_t n, double p);
/* Sort n doubles (no NaN) ascending in place: a radix sort, linear in n (large n allocates 32 n
 * bytes and 2 MiB of counts while it runs). */
void stats_sort(double *data, size_t n);
/* A record for stats_sort_kv: sorted by key; val is carried along. */
typedef struct stats_kv {
    uint64_t key;
    uint64_t val;
} stats_kv;
/* Sort a[0..n) by key ascending, stably (records of equal keys keep their order): a radix sort,
 * linear in n; allocates 16 n bytes and 2 MiB of counts while it runs. */
void stats_sort_kv(stats_kv *a, size_t n);
/* p-quantile of data already sorted ascending (n >= 1). */
double stats_quantile_sorted(const double *data, size_t n, double p);

/* Batch means: split data[0..n) into n_batches equal consecutive batches (a remainder at the
 * start is dropped), and give the grand mean and the half-width of its two-sided `level`
 * confidence interval (Student t with n_batches - 1 degrees of freedom). n_batches >= 2 and
 * n >= n_batches. */
void stats_batch_means(const double *data, size_t n, size_t n_batches, double level, double *mean,
                       double *half_width);

#endif
