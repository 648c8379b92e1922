/* model/jobrate.h - how fast a running job progresses given who shares its devices: the rate
 * function the world (model/world.h) calls whenever a job's co-runners change.
 *
 * A job's work is its solo run time on what it asked for; its rate is work-seconds per second.
 * Time-slicing (DESIGN.md section 4): while k >= 2 contexts want one GPU (or one MIG instance),
 * round-robin gives each eta(k)/k of it, eta being the measured context-switch efficiency of the
 * time-slice class (model/physics.yaml, phys_eta). Each unit (replica) a job holds on a
 * time-sliced device is one context. A job without a workload profile is taken to be GPU-bound
 * (no host phase to overlap), so its rate on a device with k contexts is eta(k)/k; a job spread
 * over several devices runs at the pace of its slowest one (the slowest worker sets the step).
 * Exclusive devices and MIG instances (isolated) run at rate 1; MPS clients run at rate 1 until
 * a profile says how bandwidth-bound they are (model/share.h share_mps_solve needs one).
 * Pure computation on borrowed state; no I/O.
 */
#ifndef SIMPROJ_MODEL_JOBRATE_H
#define SIMPROJ_MODEL_JOBRATE_H

#include "model/cluster.h"
#include "model/job.h"
#include "model/speed.h"

typedef struct jobrate_ctx {
    const phys_params *phys; /* borrowed: eta(k) per time-slice class */
    int ts_class;            /* time-slice class of jobs without a profile (index into phys->ts) */
} jobrate_ctx;

/* world_rate_fn: the rate of running job j (ctx is a jobrate_ctx). In (0, 1]. */
double jobrate_rate(void *ctx, const cluster *c, const job_table *jobs, job_id j);

#endif
