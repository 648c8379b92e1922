#include "sim/stats.h"

#include "sim/xalloc.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <string.h>

stats_running stats_running_make(void)
{
    return (stats_running){0, 0.0, 0.0, HUGE_VAL, -HUGE_VAL};
}

void stats_running_add(stats_running *r, double x)
{
    SIM_ASSERT(isfinite(x));
    r->n++;
    double d = x - r->mean;
    r->mean += d / (double)r->n;
    r->m2 += d * (x - r->mean);
    if (x < r->min) {
        r->min = x;
    }
    if (x > r->max) {
        r->max = x;
    }
}

double stats_running_mean(const stats_running *r)
{
    return r->n ? r->mean : 0.0;
}

double stats_running_var(const stats_running *r)
{
    return r->n > 1 ? r->m2 / (double)(r->n - 1) : 0.0;
}

double stats_running_sd(const stats_running *r)
{
    return sqrt(stats_running_var(r));
}

stats_timeavg stats_timeavg_make(sim_time t0, double v0)
{
    return (stats_timeavg){t0, t0, v0, 0.0, v0};
}

void stats_timeavg_set_all(stats_timeavg *a, size_t n, sim_time t, const double *v)
{
    if (n == 0) {
        return;
    }
    sim_time t_last = a[0].t;
    SIM_ASSERT(t >= t_last);
    double dt = sim_time_to_s(t - t_last);
    for (size_t k = 0; k < n; k++) {
        SIM_ASSERT(a[k].t == t_last && isfinite(v[k]));
        a[k].area += a[k].value * dt;
        a[k].t = t;
        a[k].value = v[k];
        a[k].max = v[k] > a[k].max ? v[k] : a[k].max;
    }
}

double stats_timeavg_mean(const stats_timeavg *a, sim_time t_end)
{
    SIM_ASSERT(t_end >= a->t);
    if (t_end == a->t0) {
        return a->value;
    }
    double area = a->area + a->value * sim_time_to_s(t_end - a->t);
    return area / sim_time_to_s(t_end - a->t0);
}

/* The order-preserving unsigned key of a double: negative values' bits inverted, positive ones'
 * sign bit set, so that unsigned order is numeric order (-0 before +0; no NaN here). */
static uint64_t order_key(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b >> 63 ? ~b : b | 0x8000000000000000ULL;
}

void stats_sort_kv(stats_kv *a, size_t n)
{
    if (n < 2) {
        return;
    }
    /* LSD radix sort, 16 bits a pass; passes whose digit never varies are skipped */
    stats_kv *b = xmalloc(n * sizeof *b, "sort"), *src = a, *dst = b;
    size_t(*count)[1 << 16] = xcalloc(4, sizeof *count, "sort counts");
    for (size_t i = 0; i < n; i++) {
        for (int d = 0; d < 4; d++) {
            count[d][(a[i].key >> (16 * d)) & 0xFFFF]++;
        }
    }
    for (int d = 0; d < 4; d++) {
        if (count[d][(src[0].key >> (16 * d)) & 0xFFFF] == n) {
            continue;
        }
        size_t sum = 0;
        for (size_t k = 0; k < (1 << 16); k++) {
            size_t c = count[d][k];
            count[d][k] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            dst[count[d][(src[i].key >> (16 * d)) & 0xFFFF]++] = src[i];
        }
        stats_kv *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) {
        memcpy(a, src, n * sizeof *a);
    }
    free(count);
    free(b);
}

void stats_sort(double *data, size_t n)
{
    if (n < 256) { /* small: the library's sort */
        gsl_sort(data, 1, n);
        return;
    }
    stats_kv *kv = xmalloc(n * sizeof *kv, "sort keys");
    for (size_t i = 0; i < n; i++) {
        kv[i] = (stats_kv){order_key(data[i]), 0};
    }
    stats_sort_kv(kv, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = kv[i].key >> 63 ? kv[i].key & 0x7FFFFFFFFFFFFFFFULL : ~kv[i].key;
        memcpy(&data[i], &k, sizeof k);
    }
    free(kv);
}

double stats_quantile_inplace(double *data, size_t n, double p)
{
    SIM_ASSERT(n >= 1);
    stats_sort(data, n);
    return stats_quantile_sorted(data, n, p);
}

double stats_quantile_sorted(const double *data, size_t n, double p)
{
    SIM_ASSERT(n >= 1 && p >= 0 && p <= 1);
    return gsl_stats_quantile_from_sorted_data(data, 1, n, p);
}

void stats_batch_means(const double *data, size_t n, size_t n_batches, double level, double *mean,
                       double *half_width)
{
    SIM_ASSERT(n_batches >= 2 && n >= n_batches && level > 0 && level < 1);
    size_t b = n / n_batches;
    size_t skip = n - b * n_batches;
    stats_running r = stats_running_make();
    for (size_t k = 0; k < n_batches; k++) {
        double s = 0;
        for (size_t i = 0; i < b; i++) {
            s += data[skip + k * b + i];
        }
        stats_running_add(&r, s / (double)b);
    }
    double t = gsl_cdf_tdist_Pinv(0.5 + level / 2, (double)(n_batches - 1));
    *mean = stats_running_mean(&r);
    *half_width = t * stats_running_sd(&r) / sqrt((double)n_batches);
}
