/* sim/qsel: exact quantiles in bounded memory against sorting every value (stats_sort +
 * stats_quantile_sorted, the GSL quantile): the same bits, whatever the cap (every value kept,
 * or one value kept and the rest found over several passes), for continuous data, many equal
 * values, few distinct ones, both signs and sizes of 1 and 2. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/qsel.h"
#include "sim/rng.h"
#include "sim/stats.h"

/* Quantiles of x[0..n) through qsel with cap, feeding the values in reverse on later passes;
 * *passes gets the passes made. */
static void through_qsel(const double *x, size_t n, size_t cap, const double *p, int n_p,
                         double *q_out, double *max_out, int *passes)
{
    qsel *q = qsel_create(cap, p, n_p);
    *passes = 0;
    bool done = false;
    while (!done) {
        for (size_t i = 0; i < n; i++) {
            qsel_add(q, x[*passes % 2 ? n - 1 - i : i]);
        }
        ++*passes;
        done = qsel_pass_end(q);
        cr_assert(*passes <= 5, "at most four passes after the first");
    }
    for (int i = 0; i < n_p && n > 0; i++) {
        q_out[i] = qsel_quantile(q, i);
    }
    *max_out = n ? qsel_max(q) : 0;
    qsel_destroy(q);
}

Test(qsel, same_bits_as_sorting_every_value)
{
    rng_root root = rng_root_make(5);
    rng_stream *st = rng_stream_open(&root, "qsel", 0);
    const size_t sizes[] = {1, 2, 3, 17, 1000, 65537, 200000};
    const double p[] = {0.5, 0.95, 0, 1};
    int multi = 0;
    for (int kind = 0; kind < 5; kind++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
            for (size_t i = 0; i < n; i++) {
                double u = rng_uniform01(st);
                x[i] = kind == 0   ? rng_exponential(st, 3600)         /* waits, JCTs */
                       : kind == 1 ? (i % 10 ? 0.0 : 100 * u)          /* mostly zero waits */
                       : kind == 2 ? (double)(i % 3)                   /* three values */
                       : kind == 3 ? 1e6 + 1e-6 * u                    /* one narrow bucket */
                                   : (u - 0.4) * pow(10, (double)(i % 9) - 4); /* both signs */
            }
            memcpy(y, x, n * sizeof *x);
            stats_sort(y, n);
            const size_t caps[] = {n, n / 3 + 1, 1};
            for (size_t c = 0; c < 3; c++) {
                double q[4], mx;
                int passes;
                through_qsel(x, n, caps[c], p, 4, q, &mx, &passes);
                multi += passes > 2;
                for (int i = 0; i < 4; i++) {
                    double want = stats_quantile_sorted(y, n, p[i]);
                    cr_assert(memcmp(&q[i], &want, sizeof want) == 0,
                              "kind %d n %zu cap %zu p %g: %.17g, sorted %.17g", kind, n, caps[c],
                              p[i], q[i], want);
                }
                cr_assert_eq(mx, y[n - 1]);
                cr_assert(caps[c] < n || passes == 1, "every value kept: one pass");
            }
            free(x);
            free(y);
        }
    }
    rng_stream_close(st);
    cr_assert(multi > 0, "some cases need more than one further pass");
}

Test(qsel, no_values)
{
    const double p[] = {0.5};
    qsel *q = qsel_create(4, p, 1);
    cr_assert(qsel_pass_end(q), "no values: nothing more to ask");
    qsel_destroy(q);
}
