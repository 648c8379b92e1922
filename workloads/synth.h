/* workloads/synth.h - synthetic job generators: one arrival process per job class.
 *
 * Each class submits jobs from `start_s` on with inter-arrival times drawn from a distribution,
 * until `count` jobs were made or the next arrival passes the horizon. Each job's duration (solo
 * run time) is drawn from the class's duration distribution; the request, memory and profile are
 * the class's. Every random draw comes from a named stream (sim/rng.h) whose index is the hash of
 * the class name, so adding, removing or reordering classes never changes another class's draws:
 *   SYNTH_STREAM_ARRIVALS  inter-arrival times of the class
 *   SYNTH_STREAM_DURATIONS durations of the class
 * Jobs are added to the table in submission order (ties: class order, then draw order), so job
 * ids are chronological. Units: seconds in the specs, sim_time ns in the jobs.
 * Ownership: the classes' strings are borrowed by the jobs and must outlive the job table.
 */
#ifndef SIMPROJ_WORKLOADS_SYNTH_H
#define SIMPROJ_WORKLOADS_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "model/cluster/job.h"
#include "sim/rng.h"

/* Stream names: renaming one changes results. */
#define SYNTH_STREAM_ARRIVALS "synth.arrivals"
#define SYNTH_STREAM_DURATIONS "synth.durations"

typedef enum synth_dist_kind {
    SYNTH_FIXED,       /* always `a` */
    SYNTH_EXPONENTIAL, /* mean `a` */
    SYNTH_UNIFORM,     /* on [a, b) */
    SYNTH_LOGNORMAL,   /* median `a`, sigma `b` of the underlying normal */
} synth_dist_kind;

/* A distribution of a positive quantity in seconds. */
typedef struct synth_dist {
    synth_dist_kind kind;
    double a, b;
} synth_dist;

typedef struct synth_class {
    const char *name; /* unique among the classes; borrowed */
    job_request req;  /* resource (borrowed), units per worker, workers */
    synth_dist interarrival_s;
    synth_dist duration_s;
    double start_s;      /* first arrival no earlier than this, s (>= 0) */
    uint32_t count;      /* jobs to generate; 0 = until the horizon */
    uint64_t mem_bytes;  /* per unit, 0 = not stated */
    int32_t priority;    /* priority class value of its jobs (job_pod.priority), 0 default */
    const char *profile; /* workload profile name or NULL; borrowed */
    const char *gpu_spec;    /* job_pod.gpu_spec of its jobs (where they may run), or NULL */
    uint32_t cpu_milli;      /* job_pod.cpu_milli (per worker), 0 = not stated */
    uint64_t host_mem_bytes; /* job_pod.host_mem_bytes (per worker), 0 = not stated */
    const taint_pod *place;  /* job_pod.place (nodeSelector, tolerations), or NULL; borrowed */
    const uint32_t *node_pin; /* job_pod.node_pin of its k-th job (k < n_node_pin), or NULL */
    size_t n_node_pin;
} synth_class;

/* Draw one value of d from stream s (seconds, > 0 for valid parameters). */
double synth_draw(const synth_dist *d, rng_stream *s);

/* The jobs of n classes, chronological, given one at a time as a job table source
 * (model/cluster/job.h job_table_set_source). A class with count 0 needs a finite horizon
 * (horizon_ns < SIM_TIME_MAX); durations are floored at 1 ns of work. Each class's next job is drawn ahead from its own
 * streams, and the earliest is given (ties: the class listed first), so no job exists before it is
 * asked for. *n_jobs gets how many it will give (a first pass draws the arrivals alone).
 * classes are borrowed for the stream's life, root only during the call; caller owns
 * (synth_stream_destroy). */
typedef struct synth_stream synth_stream;
synth_stream *synth_stream_create(const synth_class *classes, size_t n, const rng_root *root,
                                  sim_time horizon_ns, size_t *n_jobs);
/* job_source_fn over a synth_stream (ctx). */
bool synth_stream_next(void *ctx, job_spec *out);
/* Close its streams and free it; NULL is a no-op. */
void synth_stream_destroy(synth_stream *s);
#endif
