/* model/cluster/world.h - the simulated cluster world: drives the engine through arrivals, policy
 * decisions, job progress and completions, and records what happened.
 *
 * Data flow of a run: jobs (model/cluster/job.h, chronological; a table with a source generates each
 * when the run reaches it) arrive one by one as events; each arrival and each completion calls the policy (model/policy/policy.h) with a
 * read-only view; the world validates every decision against the cluster (model/cluster/cluster.h) and
 * applies the valid ones: a placed job takes its units, and fails at once with OOM when its
 * memory need does not fit (the cluster's memory rule), else starts running. A placed job whose
 * worker asks for more than one unit and is given a device with one_per_request (the device
 * plugin's failRequestsGreaterThanOne, or MPS) fails at once as FAILED_REQUEST, holding nothing:
 * the plugin refuses the container's allocation, and the queue moves on.
 * Progress is fluid: a running job has remaining work (seconds of solo run time) and a rate
 * (work-seconds per second, 1 = as fast as alone on what it asked for). Whenever a job starts or
 * ends, the rates of the jobs sharing a GPU with it are recomputed by the rate function (the
 * speed/sharing physics) and their completion events rescheduled, so one event per change, not
 * per iteration (a GPU whose running jobs' rates all stand alone, world_cfg.rate_alone, is
 * passed over). Without a rate function every job runs at rate 1: it takes its stated duration.
 * A fractional job (pod.gpu_milli 1..999, one unit per worker) takes that share of a shareable
 * GPU (cluster_take_share), and fails with OOM when its memory need exceeds that share of the
 * GPU's memory (cluster_share_mem_fits); every worker takes its pod's CPU and host memory on its node; a
 * decision that names a GPU outside the pod's gpu_spec, a node that does not admit the pod (its
 * pinned node, nodeSelector and tolerations: job_pod_admits), or overfills a node, is refused. A
 * preemption decision stops a running job, frees what it holds and queues it again.
 * With a policy that has `pick`, each event is followed by pick/apply cycles until the policy
 * has nothing more to place: every cycle sees the state its predecessors left.
 * Event order at equal times: completions before arrivals, so freed units are seen first.
 * The world records a sample of the cluster state after every time at which it changed.
 * Ownership: world_create copies nothing it is given except as stated; the job table is taken
 * (freed by world_destroy); the cluster config and catalog are borrowed during create, the
 * catalog entries for the world's life. Everything world_* returns is borrowed until destroy.
 */
#ifndef SIMPROJ_MODEL_WORLD_H
#define SIMPROJ_MODEL_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/cluster/cluster.h"
#include "model/cluster/job.h"
#include "model/policy/policy.h"
#include "sim/diag.h"
#include "sim/simtime.h"

typedef struct world world;

/* Rate of running job j (work-seconds per simulated second, > 0 and finite) given the current
 * state of w: its placement (world_cluster, world_jobs), its co-runners (world_gpu_jobs). Called
 * when something on j's GPUs changed. */
typedef double world_rate_fn(void *ctx, const world *w, job_id j);
/* Whether running job j's rate (world_rate_fn) cannot change while it runs: it depends on its
 * own placement alone, never on the jobs around it. The world then skips re-applying the rate
 * function to it when a co-runner starts or ends (the answer would be the same). */
typedef bool world_rate_alone_fn(void *ctx, const world *w, job_id j);

typedef struct world_cfg {
    const cluster_cfg *cluster; /* borrowed during create */
    const policy_ops *policy;   /* borrowed; static storage */
    const param_set *params;    /* policy parameters, borrowed during create */
    world_rate_fn *rate;        /* NULL: every job runs at rate 1 */
    void *rate_ctx;             /* borrowed, passed to rate and rate_alone */
    world_rate_alone_fn *rate_alone; /* NULL: every job's rate may change with its co-runners */
    sim_time until;             /* stop the run here (SIM_TIME_MAX: run until all jobs end) */
    uint64_t seed;              /* the run's master seed, for policies that draw (pol_seed) */
    uint64_t verify_every;      /* check the invariants (sim_verify) after every N events; 0 =
                                 * never. Checked: units held per device equal what running jobs
                                 * hold and what the per-GPU job index lists, and never exceed
                                 * its slots; job counts add up. */
    pol_slice_speed_fn *slice_speed; /* per-slice speeds of jobs asking for any MIG slice, for
                                      * the view (pol_job_slice_speed); NULL: none */
    void *slice_ctx;                 /* borrowed, passed to slice_speed */
    double checkpoint_s;        /* a running job writes a checkpoint after every checkpoint_s
                                 * seconds of its work (solo run time: a fixed number of steps,
                                 * as `every_n_train_steps`); a killed job keeps the work of its
                                 * last checkpoint. 0: no checkpoints, a killed job restarts from
                                 * zero. */
} world_cfg;

/* One recorded state of the cluster, taken after every time at which it changed. */
typedef struct world_sample {
    sim_time t;
    uint32_t queued;     /* jobs submitted and waiting */
    uint32_t running;    /* jobs running */
    uint32_t units_used; /* advertised units held by jobs (all resources) */
    uint32_t gpus_busy;  /* GPUs with at least one unit held */
    uint32_t sms_busy;   /* SMs of devices with at least one unit held */
} world_sample;

/* Run totals. */
typedef struct world_totals {
    uint64_t n_events;   /* engine events executed */
    uint64_t n_rejected; /* policy decisions the model refused (a policy bug) */
    uint32_t n_done, n_oom, n_running, n_queued, n_pending;
    uint32_t n_failed_request; /* refused: more than one unit of a one-per-request device */
    uint64_t n_preemptions;    /* running jobs preempted (and queued again) */
    uint32_t sms_total;        /* SMs of all GPUs with MIG off (the utilisation denominator) */
    uint32_t n_gpus_no_sms;    /* GPUs whose catalog type has no sourced SM count (sms_total 0):
                                * when > 0, SM utilisation is not known (outputs say n/a) */
    const char *no_sms_type;   /* the first such GPU type's name (borrowed catalog), or NULL */
    sim_time end;              /* time of the last change (makespan when all jobs ended) */
    sim_time horizon;          /* end of the observed window, >= end: the run's `until` when
                                * finite (the cluster is observed, idle or not, up to it), else
                                * `end`. Time-weighted means are taken over [0, horizon]. */
} world_totals;

/* Build the world over `jobs` (taken: freed by world_destroy, even on failure). Returns 0 and
 * sets *out (caller owns, world_destroy); SIM_EINPUT when the cluster config is inconsistent
 * (reason reported through d at `at`) or the policy rejects its parameters (it reports). */
int world_create(const world_cfg *cfg, job_table *jobs, diag *d, src_loc at, world **out);
/* Free everything; NULL is a no-op. */
void world_destroy(world *w);

/* Run to completion or to cfg->until. Call once. */
void world_run(world *w);

/* Where a run stands, for a progress display. */
typedef struct world_progress {
    sim_time now;       /* simulated time, ns */
    sim_time until;     /* the run's horizon, ns (SIM_TIME_MAX: none) */
    uint64_t n_events;  /* engine events executed so far */
    size_t n_jobs;      /* jobs in the run */
    uint32_t n_ended;   /* jobs done or failed */
    uint32_t n_running; /* jobs running */
    uint32_t n_queued;  /* jobs submitted and waiting */
} world_progress;
typedef void world_progress_fn(void *user, const world_progress *p);
/* Call fn(user, progress) after every `every_events` engine events during world_run (0 or fn
 * NULL: never). It only reads: the run is the same with or without it. `user` is borrowed for
 * the world's life. */
void world_set_progress(world *w, uint64_t every_events, world_progress_fn *fn, void *user);

/* Stop world_run after n engine events (0: no bound), as if the horizon came then (a fuzz
 * target bounds a run this way). Call before world_run. */
void world_set_max_events(world *w, uint64_t n);

/* End world_run after the event under way (before its first event when called before it): the
 * run is abandoned, its totals describe a partial run (a job source that found an input error
 * while the run went on: a trace changed since it was checked). */
void world_stop(world *w);

const cluster *world_cluster(const world *w);
const job_table *world_jobs(const world *w);
/* Running jobs holding at least one unit on GPU g (g < cluster_n_gpus), unordered; *n gets how
 * many. Kept up to date as jobs start and end (O(1) to look up), so a rate function finds a
 * device's co-runners without scanning every job. Borrowed until the next start or end. */
const job_id *world_gpu_jobs(const world *w, gpu_id g, uint32_t *n);
/* Running jobs with two or more workers (data-parallel gangs), in start order; *n gets how many.
 * They share links (NICs, PCIe roots, host memory) beyond their GPUs, so whenever one starts or
 * ends the world re-applies the rate function to all of them. Borrowed until the next change. */
const job_id *world_gang_jobs(const world *w, size_t *n);
/* Recorded samples, in time order (one per distinct time): how many, and sample i (i < n).
 * Borrowed: a sample of a block in memory until destroy; one read back from the sample store
 * until two other blocks have been read back (readers go through them in order). */
size_t world_n_samples(const world *w);
const world_sample *world_sample_get(const world *w, size_t i);
/* Samples i, i + 1, ... to the end of i's block (*n of them, at least 1), and the units of each
 * resource they hold (cluster_n_resources per sample, sample by sample) through *res: a pass
 * over every sample without a lookup per sample and resource. Borrowed as world_sample_get's. */
const world_sample *world_sample_span(const world *w, size_t i, size_t *n, const uint32_t **res);
/* Let full blocks of samples (4096 each, with their units per resource) go to a store as the
 * run records them (ops static, ctx borrowed for the world's life; the keys are block numbers),
 * so memory holds one block, not one sample per event. A store that fails keeps the blocks from
 * then on; one that cannot read a block back aborts (an environment failure). */
void world_set_sample_spill(world *w, const job_spill_ops *ops, void *ctx);
/* Totals after world_run. */
world_totals world_get_totals(const world *w);

/* ---- hooks for components that change the cluster while it runs (faults, re-partitioning) --
 * A component registers a timer client once (before world_run), then asks for callbacks at
 * given times; at equal times they fire after job completions and before arrivals, in the order
 * asked. Inside a callback (and only there, or in a policy-free test) it may kill running jobs,
 * cordon devices, and must end with world_settle, which lets the policy react. */

typedef void world_timer_fn(world *w, void *ctx, uint64_t tag);

/* Current simulated time, ns. */
sim_time world_now(const world *w);
/* Register fn (with ctx, borrowed for the world's life); returns the client's id. */
uint32_t world_timer_client(world *w, world_timer_fn *fn, void *ctx);
/* Call client `client`'s fn with `tag` at time t (>= now). */
void world_at(world *w, sim_time t, uint32_t client, uint64_t tag);

/* What a kill cost: work kept from the last checkpoint and what was lost. */
typedef struct world_kill_info {
    double kept_s;      /* work kept (seconds of solo run time), done_s after the kill */
    double lost_work_s; /* work done since the last checkpoint and lost, seconds of solo run */
    double lost_wall_s; /* wall-clock time since the last checkpoint (or the start of this run),
                         * during which the job held its units for nothing, seconds */
} world_kill_info;

/* Kill running job j now: its units are given back, its co-runners re-rated, and it is queued
 * again (job_requeue) keeping the work of its last checkpoint (world_cfg.checkpoint_s). The
 * policy hears of it (on_arrival) at the next world_settle. Fills *info when not NULL. */
void world_kill(world *w, job_id j, world_kill_info *info);
/* Submit pending job j now, before its planned time (a service scaling up); the policy hears
 * of it at once (on_arrival). */
void world_submit_now(world *w, job_id j);
/* End running job j now as done (a service scaling down); the policy hears of it (on_finish). */
void world_end_job(world *w, job_id j);
/* Cordon or uncordon device d (cluster_set_cordoned). */
void world_set_cordoned(world *w, dev_id d, bool on);
/* Apply the decisions waiting in world_decisions, tell the policy about the jobs killed since
 * the last settle (on_arrival, in kill order) and that capacity may have changed (on_capacity),
 * apply its decisions, record a sample. */
void world_settle(world *w);

/* Observers hear of every job start, completion and kill as it happens (inside the event that
 * caused it). An observer may read the world and ask for timers (world_at), nothing else. */
typedef enum world_job_event {
    WORLD_JOB_STARTED, /* placed and running */
    WORLD_JOB_ENDED,   /* finished its work */
    WORLD_JOB_KILLED,  /* killed and queued again (world_kill) */
} world_job_event;
typedef void world_observer_fn(world *w, void *ctx, job_id j, world_job_event ev);
/* Add an observer (ctx borrowed for the world's life); observers are called in the order added. */
void world_observe(world *w, world_observer_fn *fn, void *ctx);
/* The component that carries out POL_RECONFIGURE decisions (model/cluster/reconf.h): it checks decision
 * d against the cluster and starts it, returning true, or returns false (the decision is counted
 * as rejected). One handler per world; without one every such decision is rejected. */
typedef bool world_reconfigure_fn(world *w, void *ctx, const pol_decision *d);
void world_set_reconfigure_handler(world *w, world_reconfigure_fn *fn, void *ctx);
/* Jobs asking for any MIG slice (job_any_slice) are placed by a layout policy, not by the
 * scheduler: the scheduler hears neither of their arrival nor of their end (it gets on_capacity
 * instead). A placement of such a job is valid on an active, uncordoned MIG instance of a
 * reconfigurable GPU with a free unit. fn (the component running that layout policy,
 * model/cluster/reconf.h) is told, inside the event, whenever one is queued (submitted, or killed and
 * queued again); it may only ask for timers (world_at). One handler per world. */
typedef void world_slice_fn(world *w, void *ctx, job_id j);
void world_set_slice_handler(world *w, world_slice_fn *fn, void *ctx);
/* Make device d (of a reconfigurable GPU) advertised or not, and record a GPU's MIG mode
 * (cluster_set_active, cluster_set_mig_mode). */
void world_set_active(world *w, dev_id d, bool on);
void world_set_mig_mode(world *w, gpu_id g, bool on);
/* Every change world_set_active made, in the order made (so by time): device d became advertised
 * (on) or withdrawn at time t. A device's state before its first change is the opposite of that
 * change; a device with no change kept its state all run. For writers of time-varying layouts
 * (metrics.om). Borrowed, valid until the next world_set_active or world_destroy. */
typedef struct world_active_change {
    sim_time t;
    dev_id dev;
    bool on;
} world_active_change;
const world_active_change *world_active_log(const world *w, size_t *n);
/* Every unit held by a run that ended in a kill or a preemption (the job was queued again): job
 * `job` held device `dev` over [from, to) (from: that run's start, to: the kill). In kill order.
 * A job's last run is in the job table (run_start .. end on its units); its earlier runs are only
 * here. For writers of per-device occupancy (tools/devlog.h). Borrowed, valid until the next kill
 * or world_destroy. */
typedef struct world_killed_unit {
    sim_time from, to;
    dev_id dev;
    job_id job;
} world_killed_unit;
const world_killed_unit *world_killed_units(const world *w, size_t *n);
/* The read-only view policies get (its time brought to now), and the decision buffer a
 * component's own policy (a re-partitioner) fills before world_settle applies it. Borrowed. */
const cluster_view *world_view(world *w);
decision_buf *world_decisions(world *w);

/* Current rate of running job j (work seconds per second: 1 = as fast as alone on what it asked
 * for, less when co-runners slow it). */
double world_job_rate(const world *w, job_id j);

#endif
