/* workloads/traceload.h - traced records -> jobs: mapping rules, time window, duration -> work,
 * and FGD's arrival-only replay (seeded shuffle, workload inflated to a share of capacity).
 *
 * Each record of a trace (workloads/trace.h) becomes one job_spec:
 *  - class, profile and requested resource come from the first mapping rule that matches it (by
 *    name pattern, GPU count, queue, user, class key, GPU type), else from the defaults;
 *  - its G traced GPUs become n_workers workers of per_worker units, per_worker the largest
 *    divisor of G not above max_per_worker (12 GPUs, 8 per node -> 2 workers of 6);
 *  - timed: submit time (re-based on the window's start) and work = D x work_factor, where D is
 *    the traced run time on the traced device and work_factor (work-seconds per traced second,
 *    filled by the caller from the physics: model/physics/tracework.h) carries D to what the job asks
 *    for. A job whose rule names no profile takes the GPU-bound fallback factor and is counted in
 *    n_fallback. A record without an end is open-ended: work TRACELOAD_OPEN_WORK_S, which never
 *    completes (the run stops at its horizon) and is counted in n_open;
 *  - arrival-only (FGD's experiments, Weng et al. ATC'23 and hkust-adsl/kubernetes-scheduler-
 *    simulator): no departures (every job open-ended); the records in file order are shuffled
 *    (Fisher-Yates on stream TRACELOAD_STREAM_SHUFFLE) when `shuffle`, then the workload is tuned
 *    to `inflate` x the cluster's GPU capacity in milli-GPU exactly as FGD's simulator's
 *    TunePodsByNodeTotalResource does: above the target, random pods are removed until the total
 *    is at most the target; below it, random pods of the original list are cloned and appended
 *    until the next clone's per-GPU milli-GPU would pass the target (FGD compares the clone's
 *    per-GPU share, then adds its total). Jobs arrive one per `interval_s`, in list order.
 * Pods asking for no GPU (openb's CPU-only pods, DLRM's CPU-node instances) become CPU-only jobs
 * (model/cluster/job.h: per_worker 0, one worker, the default resource named but unused) with
 * keep_cpu_pods, else they are skipped; both are counted. Records are kept in compact arrays (one
 * job_spec each, strings interned in the arena), sorted by submission (ties: file order), and added
 * to the job table in that order, so job ids are chronological as the world requires. Ownership:
 * strings of the jobs live in the arena given; the rules and options are borrowed during the call.
 */
#ifndef SIMPROJ_WORKLOADS_TRACELOAD_H
#define SIMPROJ_WORKLOADS_TRACELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/cluster/job.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "workloads/trace.h"

#define TRACELOAD_STREAM_SHUFFLE "trace.shuffle"
#define TRACELOAD_STREAM_INFLATE "trace.inflate"
/* Work of a job that never ends (s): beyond the engine's completion horizon (sim/fluid.c) and any
 * scenario horizon, finite so that the outputs stay plain numbers. */
#define TRACELOAD_OPEN_WORK_S 1e15

/* A mapping rule: conditions (all that are set must hold) and what a matching job becomes. */
typedef struct traceload_rule {
    const char *name;            /* fnmatch(3) pattern on the record's name; NULL = any */
    const char *queue;           /* exact; NULL = any */
    const char *user;            /* exact; NULL = any */
    const char *klass;           /* exact, on the record's class key; NULL = any */
    const char *gpu_type;        /* exact; NULL = any */
    uint32_t gpus_min, gpus_max; /* GPU count in [min, max]; max 0 = no upper bound */
    const char *class_name;      /* job class; NULL = the record's class key, else default_class */
    const char *profile;         /* workload profile; NULL = GPU-bound fallback */
    const char *resource;        /* requested resource; NULL = the default */
    uint64_t mem_bytes;          /* device memory per unit (0 = not stated) */
    double work_factor;          /* work-seconds per traced second (> 0), set by the caller */
} traceload_rule;

typedef struct traceload_opts {
    bool arrival_only;
    double start_s, length_s;  /* window after the first submission; length 0 = to the end */
    uint64_t limit;            /* most jobs taken (0 = all), after the window */
    const char *resource;      /* default requested resource, e.g. "nvidia.com/gpu" */
    const char *default_class; /* class of jobs no rule names and without a class key */
    uint32_t max_per_worker;   /* most units per worker (GPUs per node), >= 1 */
    bool keep_cpu_pods;        /* pods asking for no GPU become CPU-only jobs (per_worker 0) */
    double fallback_factor;    /* work_factor of jobs that no rule gives a profile */
    uint64_t fallback_mem_bytes;
    uint64_t share_mem_bytes;  /* memory of the largest whole GPU a fractional pod may share (the
                                * cluster's); a pod of gpu_milli m whose memory need is more than
                                * m / 1000 of it can never run (its memory slice,
                                * alibaba/clusterdata issue 193): an error at its gpu_milli cell.
                                * 0 = not checked */
    size_t n_rules;
    const traceload_rule *rules;
    /* arrival-only */
    bool shuffle;
    double inflate;          /* target total milli-GPU / capacity (FGD's ratio); 0 = as is */
    uint64_t capacity_milli; /* the cluster's GPUs x 1000 */
    double interval_s;       /* time between arrivals, s (> 0) */
    uint64_t seed;           /* master seed of the run */
} traceload_opts;

/* What a load did (for the run report). */
typedef struct traceload_stats {
    uint64_t rows;     /* records read */
    uint64_t jobs;     /* jobs added */
    uint64_t cpu_only; /* records asking for no GPU, skipped (keep_cpu_pods false) */
    uint64_t cpu_jobs; /* CPU-only jobs added (keep_cpu_pods) */
    uint64_t outside;  /* records outside the window or past the limit */
    uint64_t open;     /* jobs added that are open-ended (no end in the trace, or arrival-only) */
    uint64_t fallback; /* GPU jobs added without a profile: GPU-bound fallback */
    uint64_t inflated; /* arrival-only: clones added (or, negative tuning, pods removed) */
    uint64_t removed;
    uint64_t milli_total;  /* arrival-only: milli-GPU asked for by the jobs added */
    double first_submit_s; /* first submission in the trace's own time (the window's origin) */
} traceload_stats;

/* Read every record of r and add the jobs to t. Bad rows are reported to d (all of them, up to
 * the cap) and give SIM_EINPUT with nothing added. SIM_EIO on a read error. */
int traceload_jobs(trace_reader *r, const traceload_opts *o, arena *a, diag *d, job_table *t,
                   traceload_stats *st);

/* Check the first n_rows records (after the header) of r: for `slicesim check`. */
int traceload_check(trace_reader *r, uint64_t n_rows);

/* The first rule of o that matches rec, or NULL. */
const traceload_rule *traceload_match(const traceload_opts *o, const trace_record *rec);

/* Split g GPUs into workers: per_worker the largest divisor of g not above max_per_worker;
 * g = 0 (a CPU-only pod) gives one worker with per_worker 0. */
void traceload_split(uint32_t g, uint32_t max_per_worker, uint32_t *per_worker,
                     uint32_t *n_workers);

#endif
