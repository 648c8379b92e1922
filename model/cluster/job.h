/* model/cluster/job.h - jobs and their lifecycle: pending -> queued -> running -> done, or queued ->
 * failed (OOM, or a refused request).
 *
 * A job is what a user submits: one request for a device-plugin resource (`nvidia.com/gpu`,
 * `nvidia.com/mig-1g.5gb`, `nvidia.com/gpu.shared`, ...), `per_worker` units for each of
 * `n_workers` workers (Kubernetes pods). A worker's units lie on one node; the workers of a job
 * start together or not at all (gang). Units: simulated time in integer nanoseconds (sim_time),
 * work in seconds of solo run time, memory in bytes.
 * The job table owns every job and its placement array; job specs borrow their strings
 * (class, resource, profile names), which must outlive the table (they live in the run's arena).
 * Transitions are checked with SIM_ASSERT: an illegal one is a bug in the model, never input.
 */
#ifndef SIMPROJ_MODEL_JOB_H
#define SIMPROJ_MODEL_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/cluster/ids.h"
#include "model/cluster/taint.h"
#include "sim/simtime.h"

typedef enum job_state {
    JOB_PENDING,        /* created, not yet submitted */
    JOB_QUEUED,         /* submitted, waiting for a placement */
    JOB_RUNNING,        /* placed, making progress */
    JOB_DONE,           /* finished its work */
    JOB_FAILED_OOM,     /* its memory need exceeded the partition at start */
    JOB_FAILED_REQUEST, /* the device plugin refused its request at start: more than one unit of
                         * a shared resource with failRequestsGreaterThanOne (or MPS) */
} job_state;

/* What a job asks the scheduler for. */
typedef struct job_request {
    const char *resource; /* device-plugin resource name, borrowed */
    uint32_t per_worker;  /* units of `resource` per worker, >= 1; 0 = a CPU-only pod (no GPU:
                           * resource unused), which needs only a node's CPU and memory */
    uint32_t n_workers;   /* workers (pods), >= 1; all start together */
} job_request;

/* Kubernetes pod attributes that traces carry and the scheduler honours. Every field's zero value
 * means "not stated" and is the synthetic generators' default, so a zero-initialised spec is a plain
 * job. Strings are borrowed like the spec's. */
typedef struct job_pod {
    int32_t priority;        /* priority class value; a higher value may preempt a lower; 0 default */
    uint32_t gpu_milli;      /* fractional GPU per unit in milli-GPU (1..999), as openb's gpu_milli;
                              * 0 = whole units of the requested resource */
    uint32_t cpu_milli;      /* CPU request per worker, milli-cores; 0 = not stated */
    uint64_t host_mem_bytes; /* host memory request per worker, bytes; 0 = not stated */
    const char *gpu_spec;    /* allowed GPU types, '|'-separated catalog names; NULL = any */
    const char *qos;         /* the trace's QoS class (openb: LS, BE, ...), or NULL */
    const char *user;        /* submitting user, or NULL */
    const char *queue;       /* queue or virtual cluster, or NULL */
    const taint_pod *place;  /* nodeSelector and tolerations (model/cluster/taint.h), or NULL: none;
                              * borrowed */
    uint32_t node_pin;       /* 1 + the node it must run on (a running pod of a kubectl
                              * snapshot: spec.nodeName), or 0: any node */
    bool clone;              /* a copy of another pod, added by arrival-only tuning to inflate the
                              * workload (workloads/traceload.h); FGD's typical pods are those
                              * of the list before inflation, so they leave it out */
} job_pod;

typedef struct job_spec {
    const char *class_name; /* workload class that generated it, borrowed */
    job_request req;
    sim_time submit;     /* arrival time, ns */
    double work_s;       /* solo run time on the unit it asked for, seconds, > 0 */
    uint64_t mem_bytes;  /* device memory needed per unit; 0 = not stated (never OOM) */
    const char *profile; /* workload profile name for the speed model, or NULL; borrowed */
    job_pod pod;         /* pod attributes from a trace; all zero for synthetic jobs */
} job_spec;

typedef struct job {
    job_id id;
    job_spec spec;
    job_state state;
    sim_time start;   /* placement time (also set for OOM failures), ns; -1 before */
    sim_time end;     /* completion or failure time, ns; -1 before */
    uint32_t n_units; /* per_worker * n_workers once placed, else 0 */
    dev_id unit1;     /* the unit of a job that holds one (units points here: no allocation,
                       * and no second cache miss, for most jobs) */
    dev_id *units;    /* device of each unit, worker-major; owned by the table; NULL when it
                       * holds none */
    double done_s;    /* work kept across restarts (checkpointed), seconds of solo run time;
                       * a (re)start runs the remaining spec.work_s - done_s */
    uint32_t n_restarts;  /* times it was killed (fault, eviction, preemption) and queued again */
    sim_time run_start;   /* start of the current (or last) run, ns; -1 before */
    uint32_t n_preempted; /* of those, preemptions by a higher-priority job */
} job;

typedef struct job_table job_table;

/* The table keeps its jobs in pages of JOB_PAGE consecutive ids. A page all of whose jobs have
 * ended (done or failed) may be written out to a spill store and freed (job_table_spill), so
 * that memory follows the jobs still pending, queued or running (and the pages they share ids
 * with), not every job of the run. A spilled page is read back on demand, whole, when one of its
 * jobs is looked up (the writers' pass after the run). */
#define JOB_PAGE 1024u

/* Where spilled pages go: put stores n bytes under key (one call per page; keys are distinct),
 * get reads them back (exactly the n bytes put). Both return 0 or a negative SIM_E* code. The
 * model does no I/O itself: the caller (tools/) supplies the store. */
typedef struct job_spill_ops {
    int (*put)(void *ctx, uint32_t key, const void *buf, size_t n);
    int (*get)(void *ctx, uint32_t key, void *buf, size_t n);
} job_spill_ops;

/* Create an empty table; caller owns (job_table_destroy). */
job_table *job_table_create(void);
/* Free the table, its jobs and their placements; NULL is a no-op. */
void job_table_destroy(job_table *t);

/* Let job_table_spill write ended pages to the store ops (static storage) with ctx (borrowed for
 * the table's life). Without a store nothing is spilled. */
void job_table_set_spill(job_table *t, const job_spill_ops *ops, void *ctx);
/* Spill every full page (all JOB_PAGE ids added) whose jobs have all ended, or whose live
 * (pending, queued, running) jobs are down to JOB_PAGE / 8: those then keep their own records in
 * memory, and the page is written again, whole, once they have all ended. Call it where no
 * pointer into a job record is held (between events: records of live jobs move). A store that
 * fails keeps the pages in memory and stops further spills: the run goes on as without one. */
void job_table_spill(job_table *t);
/* Pages spilled whole so far (every job ended; for a benchmark's account). */
size_t job_table_n_spilled(const job_table *t);

/* Add a job in state JOB_PENDING; returns its id (ids are 0, 1, 2, ... in order of addition).
 * The spec is copied; its strings are borrowed. With a source, only once it has given every job
 * it promised (a lookup of the last id does that). */
job_id job_table_add(job_table *t, const job_spec *spec);
/* The next job of a generator (a synthetic arrival process) into *out (strings borrowed as
 * job_table_add's); false when it has none left. */
typedef bool job_source_fn(void *ctx, job_spec *out);
/* The table's next n jobs (ids count .. count + n - 1) come from next(ctx) (ctx borrowed for the
 * table's life), each only when a lookup first reaches its id: arrivals generated as the clock
 * advances, so a run holds no job before it is due. next must give exactly n more jobs. The count
 * includes them at once. */
void job_table_set_source(job_table *t, size_t n, job_source_fn *next, void *ctx);
/* Number of jobs (those a source will still give included). */
size_t job_table_count(const job_table *t);
/* Job by id (id < count); borrowed. A job a source has not given yet is generated first (with
 * every id before it: the table is logically const, its contents fixed by the source). A job of
 * a page in memory stays where it is until destroy
 * (adding jobs moves none). A job of a spilled page is read back into a small cache of pages:
 * its record is valid until JOB_SPILL_CACHE other spilled pages have been read (readers that go
 * through the ids in order hold any two neighbours at once). Aborts when the store cannot read a
 * page back (an environment failure after the run, like running out of memory). */
const job *job_table_get(const job_table *t, job_id id);
#define JOB_SPILL_CACHE 4

/* PENDING -> QUEUED at time `now` (must equal the spec's submit time). */
void job_submit(job_table *t, job_id id, sim_time now);
/* QUEUED -> RUNNING at `now` on `n_units` devices (copied; n_units = per_worker * n_workers).
 * `start` is set on the first start only (see job_requeue). */
void job_start(job_table *t, job_id id, sim_time now, const dev_id *units, uint32_t n_units);
/* RUNNING -> QUEUED at `now`: the job was killed (a fault, an eviction) and waits to start
 * again with done_s (0 <= done_s <= spec.work_s) seconds of its work kept. Its units are
 * forgotten (the caller has given them back); `start` keeps the first start, so the wait is
 * measured to it. */
void job_requeue(job_table *t, job_id id, sim_time now, double done_s);
/* Count one preemption of job id (it was requeued by a higher-priority job: job_requeue). */
void job_note_preempted(job_table *t, job_id id);
/* PENDING -> QUEUED at `now`, before the planned submit time, which becomes `now`. */
void job_submit_early(job_table *t, job_id id, sim_time now);
/* RUNNING -> DONE at `now`. */
void job_finish(job_table *t, job_id id, sim_time now);
/* QUEUED -> FAILED_OOM at `now` on the devices it was given (copied, as job_start). */
void job_fail_oom(job_table *t, job_id id, sim_time now, const dev_id *units, uint32_t n_units);

/* QUEUED -> FAILED_REQUEST at `now` on the devices it was given (copied, as job_start); it
 * never holds them. */
void job_fail_request(job_table *t, job_id id, sim_time now, const dev_id *units, uint32_t n_units);

/* Time from submission to start, ns; -1 while not started. */
sim_time job_wait_ns(const job *j);
/* Job completion time, from submission to end, ns; -1 while not ended. */
sim_time job_jct_ns(const job *j);
/* Total units the job asks for (per_worker * n_workers). */
uint32_t job_units(const job_spec *s);

/* The pseudo-resource of a job that asks for "any MIG slice": no device advertises it; a layout
 * policy (model/policy/repart_miso.c) chooses the slice, the scheduler never sees the job, and
 * its work_s is its solo run time on the GPU's largest MIG profile (model/cluster/jobrate.h). One unit,
 * one worker. */
#define JOB_RES_MIG_ANY "nvidia.com/mig-any"
/* Whether the job asks for any MIG slice (its resource is JOB_RES_MIG_ANY). */
bool job_any_slice(const job_spec *s);
/* May pod p run on node n, whose labels and taints are meta (NULL: none)? A pinned pod only on
 * its node, whatever the node's taints and labels (a pod bound by spec.nodeName never meets the
 * scheduler's filters); another when the node admits its nodeSelector and tolerations
 * (model/cluster/taint.h taint_admits). */
bool job_pod_admits(const job_pod *p, node_id n, const taint_node *meta);

/* Lower-case name of a state ("queued", "running", "done", "failed_oom",
 * "failed_request", "pending"). Static. */
const char *job_state_name(job_state s);

#endif
