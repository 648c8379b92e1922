/* model/cluster/service.h - inference services: replicas (pods on the cluster, next to training jobs),
 * request arrivals, dynamic batching, per-batch service time from the physics, latency SLO.
 *
 * A service owns a set of replica pods: jobs of the job table (first_replica .. + n_replicas)
 * that the scheduler places like any pod (on a MIG instance, a time-sliced replica, a whole
 * GPU, ...) and that run until the horizon. Requests arrive by a Poisson process, a diurnal one
 * (rate(t) = rate * (1 + amplitude * cos(2 pi (t - peak) / period)), drawn by thinning), or a
 * list of arrival times, or a step function (SERVICE_STEPS: rate_per_s x level(t), level(t)
 * piecewise constant, a trace's live instances, workloads/tracelive.h; by inversion of the
 * cumulative rate L(t): the k-th arrival is where L reaches E_1 + ... + E_k, E_i exponential of
 * mean 1, a non-homogeneous Poisson process, or 1 each when `even`, deterministic); they wait in
 * one FCFS queue of the service. Whenever a running replica
 * is idle and requests wait, it takes up to max_batch of them (dynamic batching with no delay:
 * what is there, as a server that never holds a batch open) and serves them in one batch.
 * Service time of a batch of b requests on a replica: the physics' time of one iteration at
 * batch b on the replica's partition alone (predict_unit_estimate x wl_units_per_iter,
 * model/physics/predict.h), divided by the replica's current rate (world_job_rate: co-runners on a
 * time-sliced or MPS GPU, or a MIG GPU's shared power, slow it), taken when the batch starts. A
 * test may replace it with its own function. A replica killed by a fault puts its batch back at the
 * head of the queue. Metrics: latency = completion - arrival; mean and max exact; p50/p95/p99 from
 * a log histogram (1000 bins per decade from 1 us: within 0.12 %); SLO attainment = completed
 * within the SLO / arrived (unfinished requests count as misses); GPU-hours = time each replica ran
 * times the share of a GPU its unit stands for (cluster_unit_gpu_share). Autoscaling (a rule of the
 * service, as the Kubernetes HorizontalPodAutoscaler applies one): every `interval_s` the desired
 * replica count is ceil(queued requests / target) for the queue rule, or ceil(running replicas x
 * busy fraction over the interval / target) for the utilisation rule (skipped within the HPA's
 * tolerance of 10 %), clamped to [min, max]. A higher count submits spare replica pods at once
 * (world_submit_now); a lower one is applied only when every recommendation of the last
 * `stabilization_s` was lower (the HPA's downscale stabilization), by ending idle running replicas,
 * newest first (world_end_job; busy ones are tried again at the next step, to the highest
 * recommendation of the window). Spare replicas are the pending jobs of replica_ids beyond n_start;
 * when none is left a scale-up is denied (counted). Defaults in the scenario are the HPA's: 15 s
 * sync period, 5 min stabilization. Random draws: stream SERVICE_STREAM_ARRIVALS, index = the
 * service's index. Units: seconds (double) and sim_time ns. Ownership: a service copies its spec
 * (strings and the trace array are borrowed, and must outlive it) and borrows the world.
 */
#ifndef SIMPROJ_MODEL_SERVICE_H
#define SIMPROJ_MODEL_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/physics/speed.h"
#include "model/cluster/world.h"
#include "sim/rng.h"

#define SERVICE_STREAM_ARRIVALS "service.arrivals"

typedef enum service_arrival {
    SERVICE_POISSON, /* rate_per_s */
    SERVICE_DIURNAL, /* rate_per_s, amplitude, period_s, peak_s */
    SERVICE_TRACE,   /* trace_s */
    SERVICE_STEPS,   /* rate_per_s x level(t): step_t, step_level, even */
} service_arrival;

/* Time to serve a batch of `batch` requests on running replica job r of w, seconds (> 0). */
typedef double service_time_fn(void *ctx, const world *w, job_id r, uint32_t batch);

typedef enum service_scale_metric {
    SERVICE_SCALE_NONE,
    SERVICE_SCALE_QUEUE,       /* queued requests per replica */
    SERVICE_SCALE_UTILISATION, /* busy fraction of the running replicas */
} service_scale_metric;

typedef struct service_autoscale {
    service_scale_metric metric;
    double target;          /* > 0: requests per replica, or a fraction in (0, 1] */
    uint32_t min, max;      /* replica bounds, 1 <= min <= max */
    double interval_s;      /* > 0 */
    double stabilization_s; /* >= 0 */
} service_autoscale;

typedef struct service_spec {
    const char *name;          /* borrowed */
    uint64_t index;            /* the RNG stream's index */
    job_id first_replica;      /* replicas are first_replica + i ... */
    const job_id *replica_ids; /* ... or these (borrowed; NULL: first_replica + i) */
    uint32_t n_replicas;       /* replica jobs in all */
    uint32_t n_start;          /* of which submitted at their own time (0: all); the others
                                * are pending spares for autoscaling */
    service_autoscale autoscale;
    service_arrival arrival;
    double rate_per_s;     /* mean rate (Poisson, diurnal) */
    double amplitude;      /* diurnal: 0 <= a <= 1 */
    double period_s;       /* diurnal: > 0 */
    double peak_s;         /* diurnal: time of the peak within the period */
    const double *trace_s; /* trace: arrival times, ascending, seconds; borrowed */
    size_t n_trace;
    const double *step_t;     /* steps: times the level changes, ascending, s; borrowed */
    const double *step_level; /* steps: level from step_t[i] on (0 before step_t[0]); borrowed */
    size_t n_steps;
    bool even;    /* steps: deterministic, an arrival at each whole unit of the cumulative rate */
    sim_time end; /* no arrival at or after this time */
    uint32_t max_batch;          /* >= 1 */
    double slo_s;                /* latency objective, > 0 */
    const wl_profile *profile;   /* the model served; borrowed (physics batch time) */
    const phys_params *phys;     /* borrowed */
    service_time_fn *batch_time; /* NULL: the physics above; else this (tests) */
    void *batch_ctx;
} service_spec;

typedef struct service_stats {
    uint64_t n_arrived, n_done, n_met; /* requests: arrived, completed, completed within SLO */
    uint64_t n_batches, n_requeued;    /* batches served; requests put back by a killed replica */
    double mean_s, p50_s, p95_s, p99_s, max_s; /* latency of completed requests (0 when none) */
    double attainment;                         /* n_met / n_arrived (1 when nothing arrived) */
    double gpu_s;                              /* GPU-seconds held by the replicas */
    double mean_batch;                         /* requests per batch */
    uint64_t n_scale_up, n_scale_down, n_scale_denied; /* replicas added, ended; refused */
    uint32_t max_running;                              /* most replicas running at once */
    double mean_running; /* time-weighted mean of replicas running, over [0, now] */
} service_stats;

typedef struct service service;

/* Start the service on w (before world_run): registers its timers and its replica observer and
 * draws the first arrival. Caller owns (service_destroy). */
service *service_create(world *w, const service_spec *spec, const rng_root *root);
void service_destroy(service *s);
/* Statistics as of now (call after world_run: replicas still running count to now). */
service_stats service_get_stats(const service *s);

/* Steps arrivals: the time after from_s where the cumulative rate rate_per_s x level (steps as in
 * service_spec) has grown by `need` (> 0); INFINITY when it never does. *k is the index of the
 * first step after from_s (0 at the start), advanced by the call. */
double service_steps_next(const double *step_t, const double *step_level, size_t n_steps,
                          double rate_per_s, double from_s, double need, size_t *k);

/* The physics batch time (the default service_time_fn; ctx is the service_spec). */
double service_physics_batch_time(void *ctx, const world *w, job_id r, uint32_t batch);

#endif
