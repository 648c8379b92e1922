/* sim/simtime.h - simulated time: int64 nanoseconds, and the one place where seconds convert.
 *
 * Units: a sim_time is a count of nanoseconds since the start of the run (t = 0). Integer time
 * makes event ordering exact (no epsilon). Models compute in double seconds and convert here,
 * and only here (STYLE.md §6): sim_time_from_s rounds to the nearest nanosecond.
 * Range: about +-292 years. SIM_TIME_MAX means "never" / "no horizon".
 * Ownership: plain values only; no pointers.
 */
#ifndef SIMPROJ_SIM_SIMTIME_H
#define SIMPROJ_SIM_SIMTIME_H

#include <stdint.h>

typedef int64_t sim_time;

#define SIM_TIME_MAX INT64_MAX
#define SIM_NS_PER_S 1000000000LL

/* Seconds (finite, |s| < 9.2e9) to nanoseconds, rounded to nearest (ties away from zero).
 * A non-finite or out-of-range value is a bug: SIM_ASSERT aborts. */
sim_time sim_time_from_s(double s);
/* 1 when sim_time_from_s(s) is defined (s finite, |s| < 9.2e9 s), else 0: a value outside lies
 * beyond every horizon (at most SIM_TIME_MAX), so a caller may test this before converting. */
int sim_time_s_in_range(double s);
/* Nanoseconds to seconds (exact for |t| < 2^53 ns, about 104 days; nearest double beyond). */
double sim_time_to_s(sim_time t);

#endif
