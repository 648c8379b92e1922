/* Unit tests for sim/rng.h, sim/stats.h and sim/gslerr.h. Distribution checks use sample
 * moments of 200 000 draws with bounds of about 5 standard errors (false alarm < 1e-6). */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "sim/gslerr.h"
#include "sim/rng.h"
#include "sim/stats.h"
#include "tests/unit/sh.h"

enum { NDRAW = 200000 };

Test(rng, same_seed_same_draws_and_names_differ)
{
    rng_root root = rng_root_make(12345);
    rng_stream *a = rng_stream_open(&root, "arrivals", 0);
    rng_stream *b = rng_stream_open(&root, "arrivals", 0);
    rng_stream *c = rng_stream_open(&root, "arrivals", 1);
    rng_stream *d = rng_stream_open(&root, "durations", 0);
    int same_c = 0, same_d = 0;
    for (int i = 0; i < 1000; i++) {
        double x = rng_uniform01(a);
        cr_assert_eq(x, rng_uniform01(b));
        same_c += x == rng_uniform01(c);
        same_d += x == rng_uniform01(d);
    }
    cr_assert_lt(same_c, 2);
    cr_assert_lt(same_d, 2);
    cr_assert_neq(rng_stream_seed(&root, "arrivals", 0), rng_stream_seed(&root, "arrivals", 1));
    rng_root other = rng_root_make(12346);
    cr_assert_neq(rng_stream_seed(&root, "x", 0), rng_stream_seed(&other, "x", 0));
    rng_stream_close(a);
    rng_stream_close(b);
    rng_stream_close(c);
    rng_stream_close(d);
}

/* Adding a consumer (opening and drawing from a new stream in between) must not change the
 * draws of an existing stream. */
Test(rng, adding_a_stream_does_not_change_others)
{
    rng_root root = rng_root_make(7);
    double ref[64];
    rng_stream *s = rng_stream_open(&root, "durations", 3);
    for (int i = 0; i < 64; i++) {
        ref[i] = rng_exponential(s, 2.0);
    }
    rng_stream_close(s);

    s = rng_stream_open(&root, "durations", 3);
    rng_stream *intruder = rng_stream_open(&root, "faults", 0);
    for (int i = 0; i < 64; i++) {
        (void)rng_lognormal(intruder, 0, 1);
        (void)rng_uniform01(intruder);
        cr_assert_eq(rng_exponential(s, 2.0), ref[i], "draw %d changed", i);
    }
    rng_stream_close(intruder);
    rng_stream_close(s);
}

static void moments(rng_stream *s, double (*draw)(rng_stream *, const double *), const double *p,
                    double *mean, double *var)
{
    stats_running r = stats_running_make();
    for (int i = 0; i < NDRAW; i++) {
        stats_running_add(&r, draw(s, p));
    }
    *mean = stats_running_mean(&r);
    *var = stats_running_var(&r);
}

static double d_exp(rng_stream *s, const double *p)
{
    return rng_exponential(s, p[0]);
}
static double d_logn(rng_stream *s, const double *p)
{
    return rng_lognormal(s, p[0], p[1]);
}
Test(rng, distributions_have_their_moments)
{
    rng_root root = rng_root_make(2024);
    rng_stream *s = rng_stream_open(&root, "test.moments", 0);
    double m, v;
    double se = 5 / sqrt((double)NDRAW); /* 5 standard errors per unit of sd */

    moments(s, d_exp, (double[]){2.0}, &m, &v); /* mean 2, sd 2 */
    cr_assert(fabs(m - 2.0) < 2.0 * se, "exp mean %g", m);
    double zeta = 0.5, sigma = 0.4; /* mean exp(zeta + sigma^2/2) */
    double lm = exp(zeta + sigma * sigma / 2), lsd = lm * sqrt(exp(sigma * sigma) - 1);
    moments(s, d_logn, (double[]){zeta, sigma}, &m, &v);
    cr_assert(fabs(m - lm) < lsd * se, "lognormal mean %g want %g", m, lm);
    rng_stream_close(s);
}

Test(rng, uniform_int_stays_in_range)
{
    rng_root root = rng_root_make(99);
    rng_stream *s = rng_stream_open(&root, "test.discrete", 0);
    uint64_t big = (uint64_t)1 << 40;
    for (int i = 0; i < 1000; i++) {
        cr_assert_lt(rng_uniform_int(s, 7), 7);
        cr_assert_lt(rng_uniform_int(s, big), big);
    }
    rng_stream_close(s);
}

Test(stats, welford_timeavg_quantiles)
{
    stats_running all = stats_running_make();
    double xs[] = {2, 4, 4, 4, 5, 5, 7, 9};
    for (int i = 0; i < 8; i++) {
        stats_running_add(&all, xs[i]);
    }
    cr_assert_eq(all.n, 8);
    cr_assert_float_eq(stats_running_mean(&all), 5.0, 1e-15);
    cr_assert_float_eq(stats_running_var(&all), 32.0 / 7, 1e-14);
    cr_assert_float_eq(all.min, 2, 0);
    cr_assert_float_eq(all.max, 9, 0);

    /* 2 for 1 s, 6 for 3 s, 0 for 4 s: area 20 over 8 s */
    stats_timeavg t = stats_timeavg_make(0, 2);
    stats_timeavg_set_all(&t, 1, 1000000000, &(double){6});
    stats_timeavg_set_all(&t, 1, 4000000000, &(double){0});
    cr_assert_float_eq(stats_timeavg_mean(&t, 8000000000), 2.5, 1e-15);
    cr_assert_float_eq(t.max, 6, 0);

    double q[] = {5, 1, 4, 2, 3};
    cr_assert_float_eq(stats_quantile_inplace(q, 5, 0.5), 3, 0);
    cr_assert_float_eq(q[0], 1, 0);
    cr_assert_float_eq(stats_quantile_sorted(q, 5, 0.9), 4.6, 1e-15);
    cr_assert_float_eq(stats_quantile_sorted(q, 5, 1.0), 5, 0);

    /* batch means of 1..100 in 4 batches: batch means 13, 38, 63, 88 -> mean 50.5,
     * sd = 25 * sqrt(5/3); half-width = t(0.975, 3) * sd / 2 */
    double seq[100];
    for (int i = 0; i < 100; i++) {
        seq[i] = i + 1;
    }
    double mean, hw;
    stats_batch_means(seq, 100, 4, 0.95, &mean, &hw);
    cr_assert_float_eq(mean, 50.5, 1e-12);
    cr_assert_float_eq(hw, 3.182446305284263 * 25 * sqrt(5.0 / 3) / 2, 1e-9);
}

/* One signal's change as a time-weighted average keeps it (the oracle: the one-signal update
 * sim/stats.c had before stats_timeavg_set_all). */
static void oracle_set(stats_timeavg *a, sim_time t, double v)
{
    a->area += a->value * sim_time_to_s(t - a->t);
    a->t = t;
    a->value = v;
    if (v > a->max) {
        a->max = v;
    }
}

/* Several signals changing at the same times: stats_timeavg_set_all keeps each as it would be
 * kept alone, to the bit (times of uneven nanoseconds, values of every size). */
Test(stats, timeavg_set_all_is_set_one_by_one)
{
    enum { N = 5 };
    stats_timeavg one[N], all[N];
    for (int k = 0; k < N; k++) {
        one[k] = all[k] = stats_timeavg_make(7, (double)k * 0.1);
    }
    sim_time t = 7;
    uint64_t x = 88172645463325252ULL; /* xorshift64: times and values */
    for (int i = 0; i < 10000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        t += (sim_time)(x % 1000000007ULL);
        double v[N];
        for (int k = 0; k < N; k++) {
            v[k] = (double)(x >> (8 * k) & 0xFFFF) * (k + 1) / 3.0;
            oracle_set(&one[k], t, v[k]);
        }
        stats_timeavg_set_all(all, N, t, v);
    }
    for (int k = 0; k < N; k++) {
        cr_assert(memcmp(&one[k], &all[k], sizeof one[k]) == 0, "signal %d", k);
        double a = stats_timeavg_mean(&one[k], t + 5), b = stats_timeavg_mean(&all[k], t + 5);
        cr_assert(memcmp(&a, &b, sizeof a) == 0);
        cr_assert_gt(a, 0);
    }
}

static void raise_gsl_error(void *arg)
{
    (void)arg;
    sim_gsl_install_handler();
    gsl_error("test failure", "here.c", 12, GSL_EDOM);
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* The radix sort against qsort: doubles of both signs, many magnitudes and repeats, in sizes
 * below and above the small-array cutoff; equal keys keep their order in stats_sort_kv. */
Test(stats, radix_sorts_agree_with_qsort_and_are_stable)
{
    rng_root root = rng_root_make(11);
    rng_stream *st = rng_stream_open(&root, "sort", 0);
    const size_t sizes[] = {0, 1, 5, 255, 256, 4097, 100000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        double *x = malloc((n ? n : 1) * sizeof *x), *y = malloc((n ? n : 1) * sizeof *y);
        for (size_t i = 0; i < n; i++) {
            double u = rng_uniform01(st);
            x[i] = i % 7 == 0 ? (double)(i % 13) : (u - 0.3) * pow(10, (double)(i % 17) - 8);
            y[i] = x[i];
        }
        stats_sort(x, n);
        qsort(y, n, sizeof *y, cmp_double);
        for (size_t i = 0; i < n; i++) {
            cr_assert_eq(x[i], y[i], "n %zu at %zu: %g vs %g", n, i, x[i], y[i]);
        }
        free(x);
        free(y);
    }
    size_t n = 50000;
    stats_kv *kv = malloc(n * sizeof *kv);
    for (size_t i = 0; i < n; i++) { /* keys spread over 64 bits, and few distinct ones */
        uint64_t k = (uint64_t)(rng_uniform01(st) * 1000) << (i % 2 ? 50 : 3);
        kv[i] = (stats_kv){k, i};
    }
    rng_stream_close(st);
    stats_sort_kv(kv, n);
    for (size_t i = 1; i < n; i++) {
        cr_assert(kv[i - 1].key < kv[i].key ||
                      (kv[i - 1].key == kv[i].key && kv[i - 1].val < kv[i].val),
                  "at %zu", i);
    }
    free(kv);
}

Test(gslerr, handler_prints_and_aborts)
{
    char msg[512];
    cr_assert_eq(test_death(raise_gsl_error, NULL, msg, sizeof msg), SIGABRT, "%s", msg);
    cr_assert_str_eq(msg, "gsl: here.c:12: test failure (gsl_errno 1)\n");
}
