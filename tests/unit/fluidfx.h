/* tests/unit/fluidfx.h - observing sim/fluid from the outside: an activity's rate is read off its
 * remaining work, as a user of the engine sees it (fluid has no rate query: nothing in the
 * program needs one).
 * Ownership: every pointer is borrowed for the call. Units: seconds, work units, units/s.
 */
#ifndef SIMPROJ_TESTS_UNIT_FLUIDFX_H
#define SIMPROJ_TESTS_UNIT_FLUIDFX_H

#include "sim/fluid.h"

#include <stddef.h>

/* Run the engine from now to now + dt_s and set rate[i] = (remaining before - remaining after) /
 * dt_s for acts[0..n): the mean rate over that interval (the rate, when nothing changes in it;
 * nothing must complete). The activities must be live at both ends. */
void fx_fluid_rates(fluid_sys *sys, const fluid_act_id *acts, size_t n, double dt_s,
                    double *rate);
/* The rate of one activity, the same way. */
double fx_fluid_rate(fluid_sys *sys, fluid_act_id act, double dt_s);

#endif
