/* experiments/estimate.h - what a scenario's run will cost, estimated from the scenario alone
 * before anything is generated or allocated (the cluster included), and the check of that estimate
 * against the scenario's `limits:` (experiments/scenario.h).
 *
 * Counts, each computed from the scenario's fields:
 *  - jobs: each synthetic class submits min(count, arrivals before the horizon), arrivals being
 *    rate x (horizon - start) for poisson classes (the expected number) and
 *    floor((horizon - start) / interval) + 1 for fixed ones; plus traced jobs and services'
 *    replica pods; autoscaled services also hold spare pods (as experiments/build_service.c
 *    makes them).
 *  - timeseries rows: horizon / sample_interval + 2 when timeseries.csv or metrics.om is
 *    written (an upper bound: a run whose jobs all finish stops earlier).
 *  - cluster: nodes, GPUs and devices (a MIG GPU counts its type's most instances, a
 *    re-partitioned one every candidate placement: upper bounds).
 *  - faults: per kind, components x horizon / mtbf (GPU and instance faults per GPU, node
 *    faults per node, NVLink faults per node of two or more GPUs), plus the listed events.
 *  - service requests: the mean rate x horizon (a traced arrival counts at `rate`); the requests
 *    waiting at the peak: the queue of a fluid model, rate(t) against the service's capacity
 *    (its most replicas x batch / the time of a batch alone on its partition, when known).
 *  - ticks: autoscaler steps (horizon / interval per autoscaled service) and re-partitioner
 *    steps (horizon / interval).
 *  - jobs held at once: a run of synthetic classes alone streams its jobs (docs/engine.md), so
 *    its memory follows each class's arrivals per second x mean duration (Little's law; every job
 *    of a class whose duration is stated as work), plus, when those hold more units than the
 *    cluster has devices, the excess's share of every job (they queue); each job also leaves a
 *    few bytes to the end (page and sample bookkeeping, run.json's metrics). A timed trace is
 *    read again as the run goes (workloads/traceload.h): each of its jobs counts 16 bytes and,
 *    as a bound (its jobs in the system are not known before the run), its record. A run with
 *    services, an arrival-only trace or a helios one holds every job, and the loader of an
 *    arrival-only or helios trace every record it read (helios: the whole file's, most outside
 *    the window; traceload_held_record_bytes each).
 *  - the scheduler's own caches (policy_ops.cache_bytes, from their real sizes): a kube policy's
 *    filter and score results, 24 B per pod shape and node for up to 256 shapes (the distinct
 *    shapes: one per job class and service, and those of the trace's records), and FGD's
 *    fragmentation memo (6.3 MB once used). Counted with the cluster.
 * Events (engine events executed), memory (peak resident memory, the program itself included),
 * output bytes and CPU seconds are these counts times per-item figures measured on the opt build
 * (see estimate.c). They tell a run that fits from one that needs orders of magnitude more, and
 * tests/unit/test_check.c holds them within 2x of measured runs per source; they do not predict a
 * file's size. report.html is not counted (its plots have a bounded number of points).
 * Ownership: nothing is allocated; the spec and catalog are borrowed. Units: bytes, counts, s.
 */
#ifndef SIMPROJ_EXPERIMENTS_ESTIMATE_H
#define SIMPROJ_EXPERIMENTS_ESTIMATE_H

#include <stddef.h>
#include <stdio.h>

#include "experiments/scenario.h"
#include "model/hw/catalog.h"
#include "sim/diag.h"

/* Most spare replica pods one autoscaled service gets (experiments/build_service.c makes them). */
#define EST_MAX_SPARES 100000

/* What the figures come from (run_estimate.mem_by, events_by). */
typedef enum est_source {
    EST_SRC_JOBS,     /* jobs (synthetic, traced, replicas, spares) and their samples */
    EST_SRC_CLUSTER,  /* nodes, GPUs, devices */
    EST_SRC_FAULTS,   /* fault events */
    EST_SRC_SERVICES, /* service requests */
    EST_SRC_TICKS,    /* autoscaler and re-partitioner steps */
    EST_SRC_COUNT,
} est_source;

typedef struct run_estimate {
    double jobs;            /* jobs submitted over the horizon (replica pods included) */
    double spares;          /* spare replica pods of autoscaled services (submitted on demand) */
    double live; /* jobs held in memory at once: a streamed run's jobs in the system, else all */
    double timeseries_rows; /* rows of timeseries.csv (0 when not written) */
    double nodes, gpus, devices;
    double faults;   /* fault events (random process and listed) */
    double requests; /* service requests */
    double queued;   /* service requests waiting at the peak (0 when no capacity is known) */
    double ticks;    /* autoscaler and re-partitioner steps */
    double events;   /* engine events the run executes */
    double output_bytes; /* all output files */
    double memory_bytes; /* what the run holds at its peak, the program included */
    double cpu_s;        /* CPU time of the run */
    double mem_by[EST_SRC_COUNT], events_by[EST_SRC_COUNT]; /* memory and events per source */
    /* the busiest of each source (where an excess is reported) */
    size_t top_class;   /* job class that submits the most jobs (n_jobs when none) */
    size_t top_group;   /* node group with the most devices */
    int top_fault;      /* fault kind with the most faults (0 gpu .. 3 nvlink), -1: the list */
    size_t top_service; /* service with the most requests */
    size_t top_tick;    /* service with the most autoscaler steps; n_services: re-partitioner */
} run_estimate;

/* What a scenario's trace gives the estimate (experiments/build_trace.h): its jobs, the records
 * its loader reads (a trace whose jobs are held keeps every record's job, those outside the
 * window too) and the distinct pod shapes among them (GPUs, milli-GPU, CPU, memory, GPU spec). */
typedef struct est_trace {
    double jobs, records, shapes;
} est_trace;

/* Estimate the run of s. cat: the catalog the GPU types are looked up in (devices per GPU).
 * tr: what s's trace gives (NULL: no trace); its jobs are counted like the others.
 * svc_batch_s: per service, the time of one batch of its largest size alone on its partition
 * (seconds; 0 = unknown), which sets its capacity; NULL: none known (no queue is estimated and
 * every request counts a batch of its own). */
void est_scenario(const scenario_spec *s, const gpu_catalog *cat, const est_trace *tr,
                  const double *svc_batch_s, run_estimate *e);
/* When the estimate exceeds any limit of s->limits, report one error to d naming every limit
 * exceeded with its estimate, at the field that drives the first one: the busiest class's rate
 * or interval, outputs.sample_interval, the largest node group, the busiest fault kind, service
 * or tick. Returns the number of errors reported (0 or 1). */
int est_check_limits(const scenario_spec *s, const run_estimate *e, diag *d);
/* Two lines: "estimate: about N jobs, R timeseries rows, B output, M memory" and
 * "estimate: about E events (...), C s of CPU". */
void est_print(FILE *f, const run_estimate *e);

#endif
