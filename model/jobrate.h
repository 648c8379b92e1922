/* model/jobrate.h - how fast a running job progresses given who shares its devices: the rate
 * function the world (model/world.h) calls whenever a job's co-runners change.
 *
 * A job's work is its solo run time on the device it runs on (what it asked for); its rate is
 * work-seconds per second, so rate = (solo time per unit of work) / (time per unit now).
 * Time-slicing (DESIGN.md section 4): while k >= 2 contexts want one GPU (or one MIG instance),
 * round-robin gives each eta(k)/k of it, eta being the measured context-switch efficiency of the
 * time-slice class (model/physics.yaml, phys_eta). Each unit (replica) a job holds on a shared
 * device is one context.
 *  - A job with a workload profile (model/speed.h) gets the physics: speed_unit_time on its
 *    partition with k peers (time-slicing: host phases overlap other jobs' GPU phases, exact MVA;
 *    MPS: 100/replicas % of the SMs each, shared bandwidth) and, on a MIG GPU, with the GPU's
 *    busy instances sharing its power budget; divided into its time alone on what it asked for
 *    (the partition; for an MPS replica, one client capped at 100/replicas % of the SMs).
 *    Co-runners are taken to be like it (peers), whatever they run.
 *  - A job without a profile is taken to be GPU-bound (no host phase to overlap): eta(k)/k on a
 *    time-sliced device with k contexts, 1 elsewhere (isolation, or MPS without a profile to say
 *    how bandwidth-bound it is).
 * A job spread over several devices runs at the pace of its slowest one (the slowest worker sets
 * the step). Pure computation on borrowed state; no I/O.
 */
#ifndef SIMPROJ_MODEL_JOBRATE_H
#define SIMPROJ_MODEL_JOBRATE_H

#include "model/cluster.h"
#include "model/job.h"
#include "model/speed.h"

/* A named workload profile jobs may carry (job_spec.profile). */
typedef struct jobrate_profile {
    const char *name;    /* borrowed */
    const wl_profile *p; /* borrowed */
    double batch;        /* batch the jobs run at (>= 1) */
} jobrate_profile;

typedef struct jobrate_ctx {
    const phys_params *phys; /* borrowed: eta(k) per time-slice class, loss factors */
    int ts_class;            /* time-slice class of jobs without a profile */
    size_t n_profiles;
    const jobrate_profile *profiles; /* borrowed; looked up by name */
} jobrate_ctx;

/* world_rate_fn: the rate of running job j (ctx is a jobrate_ctx). > 0 and finite. */
double jobrate_rate(void *ctx, const cluster *c, const job_table *jobs, job_id j);

#endif
