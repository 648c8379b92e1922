/* tools/bench.h - benchmark kernels behind `slicesim bench` (tools/cmd_bench.c).
 *
 * The hold model (Vaucher & Duval 1975; Jones 1986): keep `pending` events in the queue; each
 * step removes the earliest and inserts one at t + Exp(1) s. Both variants draw the
 * increments from the same named GSL stream (sim/rng.h, MT19937), so the RNG cost is equal and
 * the difference is the queue. Only the `events` timed steps are measured, not the fill.
 * Wall-clock and CPU time are read here (tools/), never in sim/; on a shared machine the CPU
 * time is the steadier of the two (a descheduled process is not charged).
 * Units: wall and CPU time in seconds, simulated time in seconds, counts of events. Ownership: each
 * kernel builds and frees its own engine or heap; results are returned by value.
 */
#ifndef SIMPROJ_TOOLS_BENCH_H
#define SIMPROJ_TOOLS_BENCH_H

#include <stdint.h>

typedef struct bench_result {
    double seconds;           /* wall time of the measured steps */
    double cpu_seconds;       /* CPU time (user + system) of this process over the same steps */
    uint64_t events;          /* steps measured */
    double checksum;          /* final clock (s), printed so the work cannot be optimised away */
    uint64_t solves, rerated; /* fluid only: solves and activities re-rated in the whole run */
} bench_result;

/* The hold model through the real engine (sim/engine.h): one handler per event. */
bench_result bench_hold_engine(uint64_t pending, uint64_t events, uint64_t seed);
/* The hold model on a bare binary heap of doubles (the reference; tools/bench_heap.c). */
bench_result bench_hold_heap(uint64_t pending, uint64_t events, uint64_t seed);
/* Fluid churn (sim/fluid.h): `pending` activities, 10 per fair-shared link, each of Exp(1)
 * work; every completion starts a new one on a random link. events = completions measured;
 * solves and rerated count the solver's work (setup included), so rerated / solves is the size
 * of the component a change touches. */
bench_result bench_fluid(uint64_t pending, uint64_t events, uint64_t seed);

/* Monotonic wall clock, seconds. */
double bench_now_s(void);
/* CPU time used by this process so far (user + system, all threads), seconds. */
double bench_cpu_s(void);

/* `slicesim bench run FILE -o DIR ...` (tools/bench_run.c): a whole scenario run, timed, with
 * its peak memory, beside targets. argv[0] is "run". Returns the exit status. */
int bench_run_cmd(int argc, char **argv);

#endif
