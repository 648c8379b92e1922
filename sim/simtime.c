#include "sim/simtime.h"

#include "sim/xalloc.h"

#include <math.h>

sim_time sim_time_from_s(double s)
{
    double ns = s * 1e9;
    /* 9.2e18 < INT64_MAX (9.22e18): the bound keeps llround defined. */
    SIM_ASSERT(isfinite(ns) && fabs(ns) < 9.2e18);
    return (sim_time)llround(ns);
}

double sim_time_to_s(sim_time t)
{
    return (double)t / 1e9;
}
