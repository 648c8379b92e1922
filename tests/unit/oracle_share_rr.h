/* tests/unit/oracle_share_rr.h - the per-iteration mode of time-slicing (DESIGN.md section 2): an
 * explicit event simulation of k identical processes under round-robin with a finite quantum,
 * the oracle test_share.c holds the fluid mode's solutions (model/physics/share_ts.h) against.
 * Random phase lengths (gamma with a given coefficient of variation) come from a seeded GSL
 * generator, so a run is reproducible. With phase CV 1 it agrees with the fluid mode (the test
 * states by how much); with deterministic phases (CV 0) processes can lock into a schedule that
 * the mean-value solution does not describe. It lives with the tests because nothing in the
 * program runs it.
 * Units: seconds, iterations/s. Ownership: cfg.eta is borrowed; nothing is kept after a call.
 */
#ifndef SIMPROJ_TESTS_UNIT_ORACLE_SHARE_RR_H
#define SIMPROJ_TESTS_UNIT_ORACLE_SHARE_RR_H

#include <stdint.h>

/* Configuration of the per-iteration round-robin simulation. */
typedef struct share_rr_cfg {
    int k;             /* processes, 1..SHARE_MAX_JOBS */
    double host_s;     /* mean host phase */
    double gpu_s;      /* mean solo GPU phase */
    const double *eta; /* eta[n], n = 1..k; borrowed */
    double quantum_s;  /* round-robin time slice */
    double phase_cv;   /* coefficient of variation of both phases; 0 = deterministic */
    long n_iters;      /* GPU phases to complete (all processes together) */
    uint64_t seed;     /* generator seed */
} share_rr_cfg;

/* Run the simulation; *throughput_per_job gets the steady throughput of one process
 * (iterations/s, the first 10 % of iterations discarded), *gpu_busy (may be NULL) the fraction of
 * time some context held the GPU. Returns 0 or SIM_EINPUT on a bad configuration. */
int share_rr_simulate(const share_rr_cfg *c, double *throughput_per_job, double *gpu_busy);

#endif
