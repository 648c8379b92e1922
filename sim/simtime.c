#include "sim/simtime.h"

#include "sim/xalloc.h"

#include <math.h>

/* 9.2e18 < INT64_MAX (9.22e18): the bound keeps llround defined. */
static const double NS_LIMIT = 9.2e18;

int sim_time_s_in_range(double s)
{
    double ns = s * 1e9;
    return isfinite(ns) && fabs(ns) < NS_LIMIT;
}

sim_time sim_time_from_s(double s)
{
    double ns = s * 1e9;
    SIM_ASSERT(isfinite(ns) && fabs(ns) < NS_LIMIT);
    return (sim_time)llround(ns);
}

double sim_time_to_s(sim_time t)
{
    return (double)t / 1e9;
}
