/* tests/unit/fluidfx.c - see fluidfx.h. */
#include "tests/unit/fluidfx.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "sim/engine.h"

void fx_fluid_rates(fluid_sys *sys, const fluid_act_id *acts, size_t n, double dt_s,
                    double *rate)
{
    sim_ctx *ctx = fluid_ctx(sys);
    double *before = calloc(n ? n : 1, sizeof *before);
    for (size_t i = 0; i < n; i++) {
        before[i] = fluid_remaining(sys, acts[i]);
    }
    sim_run(ctx, sim_now(ctx) + sim_time_from_s(dt_s));
    for (size_t i = 0; i < n; i++) {
        double after = fluid_remaining(sys, acts[i]);
        cr_assert(!isnan(before[i]) && !isnan(after), "activity %zu is not live", i);
        rate[i] = (before[i] - after) / dt_s;
    }
    free(before);
}

double fx_fluid_rate(fluid_sys *sys, fluid_act_id act, double dt_s)
{
    double r;
    fx_fluid_rates(sys, &act, 1, dt_s, &r);
    return r;
}
