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
 * keep_cpu_pods, else they are skipped; both are counted.
 * Memory: traceload_open reads and checks every row at once (every error before the run), but
 * keeps 16 bytes a job, not the job: its submit time and where its row starts in the file (with
 * 19 bits of the row's hash and the flags its counts need), sorted by submission (ties: file
 * order), so job ids are chronological as the world requires. The stream gives the jobs in that
 * order, each made when the run reaches it: its row read again by offset (trace_read_at, the same
 * row parser and mapping; a row whose hash differs is an error at its line: the file changed
 * during the run). Jobs are held (a job_spec each, freed once the last is given) where the rows
 * cannot be read again (helios, whose jobs are drawn from its bins; a pipe) and in arrival-only
 * mode, whose jobs all stay in the run to its end (reading them again would only cost).
 * Ownership: strings of the jobs live in the arena given (interned: each distinct one once); the
 * options' rules and strings are borrowed for the stream's life, fits_ctx during traceload_open.
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
    /* Can the empty cluster ever hold the job? Jobs it says no to are dropped and counted
     * (traceload_stats.unplaceable): under FIFO one of them would block every later job.
     * NULL: every job is kept. fits_ctx is borrowed during traceload_open. */
    bool (*fits)(void *fits_ctx, const job_spec *s);
    void *fits_ctx;
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
    uint64_t jobs;     /* jobs given (the stream's count): those taken (in the window and the
                        * limit) less the unplaceable ones */
    uint64_t unplaceable; /* jobs dropped: no node of the empty cluster can hold them (opts.fits) */
    uint64_t cpu_only; /* records asking for no GPU, skipped (keep_cpu_pods false) */
    uint64_t cpu_jobs; /* CPU-only jobs taken (keep_cpu_pods) */
    uint64_t outside;  /* records outside the window or past the limit */
    uint64_t open;     /* jobs taken that are open-ended (no end in the trace, or arrival-only) */
    uint64_t fallback; /* GPU jobs taken without a profile: GPU-bound fallback */
    uint64_t inflated; /* arrival-only: clones added (or, negative tuning, pods removed) */
    uint64_t removed;
    uint64_t milli_total;  /* arrival-only: milli-GPU asked for by the jobs taken */
    double first_submit_s; /* first submission in the trace's own time (the window's origin) */
} traceload_stats;

/* The jobs of a trace, given one at a time as a job table source (model/cluster/job.h
 * job_table_set_source), chronological. */
typedef struct traceload_stream traceload_stream;

/* Read every record of r (borrowed, with its file, for the stream's life) into a stream of jobs
 * (*out, caller owns: traceload_destroy), its counts into *st. Bad rows are reported to d (all of
 * them, up to the cap) and give SIM_EINPUT with no stream. SIM_EIO on a read error. */
int traceload_open(trace_reader *r, const traceload_opts *o, arena *a, diag *d,
                   traceload_stats *st, traceload_stream **out);
/* Jobs the stream gives in all (st->jobs). */
size_t traceload_count(const traceload_stream *s);
/* 0, or why a row could not be read again while the jobs were given: SIM_EINPUT (the file
 * changed since traceload_open read it: reported at the row), SIM_EIO (a read error: not
 * reported; the caller names the file). From then on each job left is a stand-in that asks for
 * nothing: the caller abandons the run. */
int traceload_status(const traceload_stream *s);
/* job_source_fn over a traceload_stream (ctx): the next job, false after the last. */
bool traceload_next(void *ctx, job_spec *out);
/* Free the stream; NULL is a no-op. */
void traceload_destroy(traceload_stream *s);
/* Bytes traceload_open keeps for each record it reads when the jobs are held (arrival-only, a
 * helios trace, a pipe): the record's job and its index entry, every record of the file kept,
 * those outside the window too, for the run (the memory estimate, experiments/estimate.h). */
size_t traceload_held_record_bytes(void);

/* Check the first n_rows records (after the header) of r: for `slicesim check`. */
int traceload_check(trace_reader *r, uint64_t n_rows);

/* The first rule of o that matches rec, or NULL. */
const traceload_rule *traceload_match(const traceload_opts *o, const trace_record *rec);

/* Split g GPUs into workers: per_worker the largest divisor of g not above max_per_worker;
 * g = 0 (a CPU-only pod) gives one worker with per_worker 0. */
void traceload_split(uint32_t g, uint32_t max_per_worker, uint32_t *per_worker,
                     uint32_t *n_workers);

#endif
