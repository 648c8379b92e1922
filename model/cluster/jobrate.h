/* model/cluster/jobrate.h - how fast a running job progresses given who shares its devices: the rate
 * function the world (model/cluster/world.h) calls whenever a job's co-runners change.
 *
 * A job's work is its solo run time on the device it runs on (what it asked for); its rate is
 * work-seconds per second, so rate = (solo time per unit of work) / (time per unit now).
 * Time-slicing (DESIGN.md section 4): while k >= 2 contexts want one GPU (or one MIG instance),
 * round-robin gives each eta(k)/k of it, eta being the measured context-switch efficiency of the
 * time-slice class (model/physics/physics.yaml, phys_eta). Each unit (replica) a job holds on a shared
 * device is one context.
 * The co-runners are the jobs holding units on the device (world_gpu_jobs), grouped by the
 * profile they carry.
 *  - Alone, on an isolated device, or when every context on the device carries the job's own
 *    profile (identical peers): a job with a workload profile (model/physics/speed.h) gets the physics,
 *    predict_unit_estimate on its partition with k peers (time-slicing: host phases overlap other
 *    jobs' GPU phases, model/physics/share_ts.h; MPS: 100/replicas % of the SMs each, shared bandwidth,
 *    model/physics/share_mps.h) and, on a MIG GPU, with the GPU's busy instances sharing its power
 *    budget; divided into its time alone on what it asked for (the partition; for an MPS
 *    replica, one client capped at 100/replicas % of the SMs). A job without a profile is
 *    GPU-bound: eta(k)/k on a time-sliced device with k contexts, 1 elsewhere.
 *  - Different workloads on one time-sliced device: predict_unit_estimate with the job's own
 *    class as peers and one co-runner entry per other profile (partition_cfg.with, with_n), so
 *    share_ts_solve_rr's mixed product form (the mean field with the scheduler's return wait
 *    where a class overlaps host and GPU work, model/physics/share_ts.h) through the one prediction
 *    entry point. A profiled class alternates its host phase H and its solo GPU phase G from the
 *    speed model (on a MIG GPU at the clock its busy instances allow); a job without a profile
 *    (or whose profile the physics cannot place on the partition) is a GPU-bound class (with[i]
 *    NULL, or the job itself predicted without a profile): H = 0, always at the
 *    processor-sharing station, 1 s of GPU work per unit alone (it cancels out of its rate).
 *    eta(n) is the lowest of the classes' time-slice efficiencies (predict_lowest_eta), each
 *    class's from class_ts in jobrate.c: a profile's own class, the node's calibration for a
 *    job without one.
 *  - Different profiles under MPS: predict_unit_estimate likewise (share_mps_solve with one
 *    class per profile). A client without a profile is counted as a client like the job whose
 *    rate is asked (MPS needs a profile's SM and bandwidth demand), and a job without a profile
 *    runs at 1 (no profile to say how bandwidth-bound it is).
 * Mixes the prediction cannot take (more than SHARE_MAX_CLASSES profiles on one device, more
 * than SHARE_MAX_JOBS contexts, too many product-form states, footprints of the profiles that do
 * not fit together: predict.h checks them as for identical peers) fall back to the
 * identical-peers rule; the cluster's memory rule admitted every co-runner at its start.
 * A job spread over several devices runs at the pace of its slowest one (the slowest worker sets
 * the step).
 * Data-parallel gangs (two or more workers, a profile with grad_bytes, comm set): the step of
 * model/physics/ddp.h over the ring the placement makes (workers ordered by device, i.e. node by node and
 * GPU by GPU; MIG instances staged through host memory; each node wired as node_topo says), at
 * the ring's rate when the rings of every running gang (world_gang_jobs) share their links
 * max-min fairly (comm_share), with the slowest worker's GPU as the sharing physics sees it now
 * (ddp_job.share: the partition_cfg the co-runner rules above give on each of its devices, an
 * MPS replica's cap, time-sliced or MPS co-runners, a MIG GPU's busy instances sharing the power
 * budget; the worker whose time per unit is largest). The job's work is counted in solo
 * iterations of one worker exclusive on its partition (a duration of N s means N s of one
 * worker's iterations alone on the whole GPU or MIG instance, once per worker; an MPS replica's
 * cap is sharing, not the unit of work, so `samples` means the same work on every sharing mode),
 * so its rate is that solo iteration time divided by the step. A gang whose placement puts two
 * workers on one whole GPU, or whose step the model cannot give, runs at the co-runner rate
 * alone. Pure
 * computation on borrowed state; no I/O.
 */
#ifndef SIMPROJ_MODEL_JOBRATE_H
#define SIMPROJ_MODEL_JOBRATE_H

#include "model/cluster/cluster.h"
#include "model/physics/comm.h"
#include "model/cluster/job.h"
#include "model/physics/speed.h"
#include "model/cluster/world.h"

/* A named workload profile jobs may carry (job_spec.profile). */
typedef struct jobrate_profile {
    const char *name;    /* borrowed */
    const wl_profile *p; /* borrowed */
    double batch;        /* batch the jobs run at (>= 1) */
} jobrate_profile;

typedef struct jobrate_ctx {
    const phys_params *phys; /* borrowed: eta(k) per time-slice class, loss factors */
    const comm_params *comm; /* borrowed: links of data-parallel jobs; NULL = none modelled */
    double nic_bytes_per_s;  /* every node's NIC line rate (the cluster's interconnect) */
    int nics;                /* every node's NICs (the interconnect's comm_net.nics); 0 = one */
    const comm_topo *const *node_topo; /* per node id: how its GPUs are wired (borrowed; an
                                          entry, or the whole array, NULL = as the GPU type
                                          says, model/physics/ddp.h ddp_node) */
    uint32_t n_node_topo;    /* entries of node_topo; nodes past them are NULL */
    int ts_class;            /* time-slice class of jobs without a profile */
    size_t n_profiles;
    const jobrate_profile *profiles; /* borrowed; looked up by name */
} jobrate_ctx;

/* world_rate_fn: the rate of running job j in w (ctx is a jobrate_ctx). > 0 and finite. Its
 * co-runners come from world_gpu_jobs: O(jobs on the job's GPUs), no scan of all jobs. */
double jobrate_rate(void *ctx, const world *w, job_id j);
/* world_rate_alone_fn: true when running job j's rate depends on no other job: it has no
 * profile (GPU-bound: no power budget, host phases or bandwidth to share) and none of its
 * devices is shared (time-sliced, MPS, or a fractional share), so jobrate_rate gives 1 (times
 * its slice speed) whatever runs beside it. */
bool jobrate_alone(void *ctx, const world *w, job_id j);

/* A job asking for any MIG slice (job_any_slice: the layout policy chose its instance) states
 * its work as solo run time on the reference, the GPU type's largest classic MIG profile
 * (jobrate_reference: 7g.40gb on an A100, 7g.80gb on an H100): MISO's normalisation. Its rate
 * is the rate above (co-runners: the GPU's busy instances sharing power) times
 * jobrate_slice_speed on its instance. */

/* The reference profile of GPU type g: the classic MIG profile with the most compute slices,
 * then the most memory (first in catalog order on ties); NULL when g has no MIG. Borrowed. */
const mig_profile *jobrate_reference(const gpu_type *g);
/* pol_slice_speed_fn (ctx a jobrate_ctx): t_ref / t_p, the time per unit of js's profile alone
 * on the reference over alone on p (predict_unit_estimate, batch of the profile); 0 when the
 * job has no profile or the physics says it cannot run on either (OOM, invalid). */
double jobrate_slice_speed(void *ctx, const job_spec *js, const gpu_type *g, const mig_profile *p);

/* What job js does alone on device d (what it asked for), for telemetry: *gpu_frac gets the
 * fraction of its solo time with GPU work (G / t of its profile's solo iteration, speed_result
 * gpu_util: what NVML's utilization.gpu shows for it alone), *sm_frac the fraction of the
 * device's SMs its kernels occupy while they run (sms_used over the partition's SMs). A job
 * without a profile, or one the physics cannot place there, is GPU-bound: 1 and 1. Running at
 * rate r (jobrate_rate) it has GPU work a fraction 1 - r (1 - gpu_frac) of the time (its host
 * phases do not stretch) and keeps r gpu_frac sm_frac of the device's SMs busy on average. */
void jobrate_solo_activity(const jobrate_ctx *rc, const cluster *c, const job_spec *js, dev_id d,
                           double *gpu_frac, double *sm_frac);

#endif
