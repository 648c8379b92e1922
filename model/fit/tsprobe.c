/* model/fit/tsprobe.c - quantum, switch gap and return wait from calib/tslice timelines (see
 * tsprobe.h). */
#include "model/fit/tsprobe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/stats.h"
#include "sim/xalloc.h"

static double mean_of(const tsp_returns *r)
{
    double s = 0;
    for (int i = 0; i < r->n; i++) {
        s += r->latency_ms[i];
    }
    return r->n > 0 ? s / r->n : (double)NAN;
}

/* Runs of timeline t that lie inside [a, b]: their total length and count. */
static double runs_inside(const tsp_timeline *t, double a, double b, int *count)
{
    double total = 0;
    double start = t->first_ms;
    for (int i = 0; i <= t->n_gaps; i++) {
        double end = i < t->n_gaps ? t->gap_ms[2 * i] : t->last_ms;
        double lo = fmax(start, a), hi = fmin(end, b);
        if (hi > lo) {
            total += hi - lo;
            (*count)++;
        }
        if (i < t->n_gaps) {
            start = t->gap_ms[2 * i + 1];
        }
    }
    return total;
}

int tsp_analyse(const tsp_data *d, tsp_result *out)
{
    memset(out, 0, sizeof *out);
    int cap = 0;
    for (int g = 0; g < d->n_groups; g++) {
        for (int p = 0; p < d->g[g].n; p++) {
            cap += d->g[g].tl[p].n_gaps + 1;
        }
    }
    double *slices = xcalloc((size_t)cap + 1, sizeof(double), "slice lengths");
    double *sw = xcalloc((size_t)cap + 1, sizeof(double), "switch gaps");
    int ns = 0, nw = 0;
    for (int g = 0; g < d->n_groups; g++) {
        const tsp_group *gr = &d->g[g];
        for (int p = 0; p < gr->n; p++) {
            const tsp_timeline *t = &gr->tl[p];
            if (gr->n == 1) {
                out->solo_gaps += t->n_gaps;
                for (int i = 0; i < t->n_gaps; i++) {
                    out->solo_gap_max_ms =
                        fmax(out->solo_gap_max_ms, t->gap_ms[2 * i + 1] - t->gap_ms[2 * i]);
                }
                continue;
            }
            for (int i = 0; i < t->n_gaps; i++) {
                double a = t->gap_ms[2 * i], b = t->gap_ms[2 * i + 1];
                if (i + 1 < t->n_gaps) { /* a whole slice: between two gaps */
                    slices[ns++] = t->gap_ms[2 * (i + 1)] - b;
                }
                double busy = 0;
                int runs = 0;
                for (int o = 0; o < gr->n; o++) {
                    busy += o == p ? 0.0 : runs_inside(&gr->tl[o], a, b, &runs);
                }
                if (runs > 0) {
                    sw[nw++] = (b - a - busy) / (runs + 1);
                }
            }
        }
    }
    out->n_slices = ns;
    out->n_switches = nw;
    int rc = -1;
    if (ns > 0) {
        out->slice_p10_ms = stats_quantile_inplace(slices, (size_t)ns, 0.1);
        out->slice_p90_ms = stats_quantile_inplace(slices, (size_t)ns, 0.9);
        out->slice_median_ms = stats_quantile_inplace(slices, (size_t)ns, 0.5);
        rc = 0;
    }
    out->switch_median_ms = nw > 0 ? stats_quantile_inplace(sw, (size_t)nw, 0.5) : (double)NAN;
    free(slices);
    free(sw);
    out->ret_alone_ms = out->ret_busy_ms = out->ret_stream_ms = (double)NAN;
    for (int i = 0; i < d->n_ret; i++) {
        const tsp_returns *r = &d->ret[i];
        double *dst = !strcmp(r->beside, "none")    ? &out->ret_alone_ms
                      : !strcmp(r->beside, "slice") ? &out->ret_busy_ms
                                                    : &out->ret_stream_ms;
        *dst = mean_of(r);
    }
    return rc;
}

void tsp_free(tsp_data *d)
{
    for (int g = 0; g < d->n_groups; g++) {
        for (int p = 0; p < d->g[g].n; p++) {
            free(d->g[g].tl[p].gap_ms);
            d->g[g].tl[p].gap_ms = NULL;
        }
    }
    for (int i = 0; i < d->n_ret; i++) {
        free(d->ret[i].sleep_ms);
        free(d->ret[i].latency_ms);
        d->ret[i].sleep_ms = d->ret[i].latency_ms = NULL;
    }
}
