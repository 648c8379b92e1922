/* Unit tests for sim/maxmin.h: hand-solved problems (the answer beside each), the max-min
 * optimality conditions on random problems, and sim/fluid's rates inside the engine, which it
 * solves through this solver. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "sim/engine.h"
#include "sim/fluid.h"
#include "sim/maxmin.h"
#include "sim/rng.h"
#include "tests/unit/fluidfx.h"

#define MAXF 16
#define MAXR 8

/* A problem written as a dense matrix a[flow][res] (0 = unused), turned into both incidence
 * lists. */
typedef struct dense {
    uint32_t nf, nr;
    double a[MAXF][MAXR];
    double cap[MAXR], bound[MAXF];
    uint32_t fs[MAXF + 1], fr[MAXF * MAXR], rs[MAXR + 1], rf[MAXF * MAXR];
    double fc[MAXF * MAXR], rc[MAXF * MAXR];
} dense;

static maxmin_problem build(dense *d)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < d->nf; i++) {
        d->fs[i] = k;
        for (uint32_t j = 0; j < d->nr; j++) {
            if (d->a[i][j] > 0) {
                d->fr[k] = j;
                d->fc[k++] = d->a[i][j];
            }
        }
    }
    d->fs[d->nf] = k;
    k = 0;
    for (uint32_t j = 0; j < d->nr; j++) {
        d->rs[j] = k;
        for (uint32_t i = 0; i < d->nf; i++) {
            if (d->a[i][j] > 0) {
                d->rf[k] = i;
                d->rc[k++] = d->a[i][j];
            }
        }
    }
    d->rs[d->nr] = k;
    return (maxmin_problem){d->nf, d->nr, d->bound, d->cap, d->fs, d->fr, d->fc, d->rs, d->rf,
                            d->rc};
}

static void solve(dense *d, double *rate)
{
    maxmin_problem p = build(d);
    maxmin_ws ws = {0};
    maxmin_solve(&p, &ws, rate);
    maxmin_ws_fini(&ws);
}

static dense *new_dense(uint32_t nf, uint32_t nr)
{
    dense *d = calloc(1, sizeof *d);
    d->nf = nf;
    d->nr = nr;
    for (uint32_t i = 0; i < nf; i++) {
        d->bound[i] = INFINITY;
    }
    return d;
}

/* A random problem: up to MAXF flows on up to MAXR resources, each use with probability 0.35
 * (coefficient 1 or in [0.1, 4.1)), 30 % of the flows bounded in [0, 20). With `full`, every
 * flow uses at least one resource and no capacity is 0 (what sim/fluid accepts); otherwise 5 %
 * of the capacities are 0 and a flow may use nothing. */
static dense *random_dense(rng_stream *s, bool full)
{
    uint32_t nf = 1 + (uint32_t)rng_uniform_int(s, MAXF);
    uint32_t nr = 1 + (uint32_t)rng_uniform_int(s, MAXR);
    dense *d = new_dense(nf, nr);
    for (uint32_t j = 0; j < nr; j++) {
        d->cap[j] = !full && rng_uniform01(s) < 0.05 ? 0 : 100 * rng_uniform01(s);
    }
    for (uint32_t i = 0; i < nf; i++) {
        if (full) {
            d->a[i][rng_uniform_int(s, nr)] = 1;
        }
        for (uint32_t j = 0; j < nr; j++) {
            if (rng_uniform01(s) < 0.35) {
                d->a[i][j] = rng_uniform01(s) < 0.5 ? 1 : 0.1 + 4 * rng_uniform01(s);
            }
        }
        if (rng_uniform01(s) < 0.3) {
            d->bound[i] = 20 * rng_uniform01(s);
        }
    }
    return d;
}

/* Five flows over three links, solved by progressive filling:
 * L1 = 10 {f1, f2, f4}, L2 = 4 {f2, f3}, L3 = 9 {f4, f5}.
 * Levels: L1 10/3, L2 4/2 = 2, L3 9/2 -> L2 saturates first: f2 = f3 = 2.
 * Then L1 (10 - 2) / 2 = 4, L3 9/2 = 4.5 -> L1: f1 = f4 = 4. Then L3 (9 - 4) / 1 = 5: f5 = 5. */
Test(maxmin, five_flows_over_three_links)
{
    dense *d = new_dense(5, 3);
    d->cap[0] = 10, d->cap[1] = 4, d->cap[2] = 9;
    d->a[0][0] = d->a[1][0] = d->a[1][1] = d->a[2][1] = d->a[3][0] = d->a[3][2] = d->a[4][2] = 1;
    double rate[5], want[5] = {4, 2, 2, 4, 5};
    solve(d, rate);
    for (int i = 0; i < 5; i++) {
        cr_assert_float_eq(rate[i], want[i], 1e-12, "f%d: %g", i + 1, rate[i]);
    }
    free(d);
}

/* Coefficients and bounds: one link of 12; A uses it with a = 2, B with a = 1, C with a = 1 and
 * a bound of 1. Level: C binds at 1 first (12 / (2 + 1 + 1) = 3 > 1); then (12 - 1) / 3 = 11/3:
 * A = B = 11/3 (A consumes 22/3, B 11/3, C 1: 12 in all). A flow on no resource gets its bound,
 * even +infinity; a link of capacity 0 gives its flows 0. */
Test(maxmin, coefficients_bounds_and_edge_cases)
{
    dense *d = new_dense(5, 2);
    d->cap[0] = 12, d->cap[1] = 0;
    d->a[0][0] = 2, d->a[1][0] = 1, d->a[2][0] = 1, d->a[4][1] = 1;
    d->bound[2] = 1;
    d->bound[3] = INFINITY; /* flow 3 uses nothing */
    double rate[5];
    solve(d, rate);
    cr_assert_float_eq(rate[0], 11.0 / 3, 1e-12);
    cr_assert_float_eq(rate[1], 11.0 / 3, 1e-12);
    cr_assert_eq(rate[2], 1.0);
    cr_assert(isinf(rate[3]) && rate[3] > 0);
    cr_assert_eq(rate[4], 0.0);
    free(d);
}

/* Random problems: the allocation is feasible and every flow has a bottleneck: it runs at its
 * bound, or it uses a saturated resource on which no flow runs faster (the characterisation of
 * max-min fairness, Bertsekas & Gallager §6.5.2, with coefficients: on resource j flow i is
 * limited by j when j is full and x_i >= x_k for every k on j). */
Test(maxmin, random_problems_are_feasible_and_max_min_fair)
{
    rng_root root = rng_root_make(20261129);
    rng_stream *s = rng_stream_open(&root, "test.maxmin", 0);
    for (int trial = 0; trial < 2000; trial++) {
        dense *d = random_dense(s, false);
        uint32_t nf = d->nf, nr = d->nr;
        double rate[MAXF];
        solve(d, rate);
        double use[MAXR] = {0};
        for (uint32_t i = 0; i < nf; i++) {
            cr_assert(rate[i] >= 0 && rate[i] <= d->bound[i], "trial %d flow %u", trial, i);
            for (uint32_t j = 0; j < nr; j++) {
                use[j] += d->a[i][j] > 0 ? d->a[i][j] * rate[i] : 0;
            }
        }
        for (uint32_t j = 0; j < nr; j++) {
            cr_assert(use[j] <= d->cap[j] * (1 + 1e-9) + 1e-12, "trial %d res %u: %g > %g", trial,
                      j, use[j], d->cap[j]);
        }
        for (uint32_t i = 0; i < nf; i++) {
            bool limited = rate[i] == d->bound[i];
            for (uint32_t j = 0; j < nr && !limited; j++) {
                if (d->a[i][j] == 0 || use[j] < d->cap[j] * (1 - 1e-9)) {
                    continue;
                }
                bool fastest = true;
                for (uint32_t k = 0; k < nf; k++) {
                    fastest &= d->a[k][j] == 0 || rate[k] <= rate[i] * (1 + 1e-9);
                }
                limited = fastest;
            }
            cr_assert(limited, "trial %d: flow %u at %g has no bottleneck", trial, i, rate[i]);
        }
        free(d);
    }
    rng_stream_close(s);
}

/* sim/fluid puts the same problem to the solver from inside the engine: activities started in
 * flow order on resources added in order, caps as bounds. The rates it runs them at (read off
 * their progress over one second, so within rounding of the work) are the solver's. */
Test(maxmin, fluid_runs_activities_at_the_solvers_rates)
{
    rng_root root = rng_root_make(7);
    rng_stream *s = rng_stream_open(&root, "test.maxmin.fluid", 0);
    for (int trial = 0; trial < 300; trial++) {
        dense *d = random_dense(s, true);
        uint32_t nf = d->nf, nr = d->nr;
        double rate[MAXF];
        solve(d, rate);
        sim_ctx *ctx = sim_create();
        fluid_sys *sys = fluid_create(ctx);
        for (uint32_t j = 0; j < nr; j++) {
            fluid_resource_add(sys, "r", d->cap[j]);
        }
        fluid_act_id act[MAXF];
        for (uint32_t i = 0; i < nf; i++) {
            fluid_use u[MAXR];
            size_t n = 0;
            for (uint32_t j = 0; j < nr; j++) {
                if (d->a[i][j] > 0) {
                    u[n++] = (fluid_use){j, d->a[i][j]};
                }
            }
            act[i] = fluid_start(sys, 1e4, u, n, NULL, NULL); /* rates < 1000: none completes */
            if (isfinite(d->bound[i])) {
                fluid_set_rate_cap(sys, act[i], d->bound[i]);
            }
        }
        double got[MAXF];
        fx_fluid_rates(sys, act, nf, 1, got);
        for (uint32_t i = 0; i < nf; i++) {
            cr_assert_float_eq(got[i], rate[i], 1e-9 * (1 + rate[i]), "trial %d flow %u: %.17g",
                               trial, i, got[i]);
        }
        sim_destroy(ctx);
        free(d);
    }
    rng_stream_close(s);
}
