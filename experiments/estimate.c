/* experiments/estimate.c - a scenario's cost before it runs (see estimate.h). */
#include "experiments/estimate.h"

#include <math.h>
#include <string.h>

#include "experiments/cfg.h"
#include "model/hw/mig.h"
#include "model/policy/policy.h"
#include "sim/simtime.h"
#include "workloads/trace.h"
#include "workloads/traceload.h"

/* Sizes per item, measured on the opt build: 200 000 one-GPU jobs on 16 A100s (2 nodes) wrote
 * 415 bytes of run.json and 116 bytes of jobs.csv per job; a timeseries row is 41 bytes with one
 * resource column and grows ~12 bytes per column. Rounded up, so that the estimate errs on the
 * large side. Memory per job when every job is held (services: all jobs generated before the
 * run; an arrival-only trace or one not read again, whose jobs are held: workloads/traceload.h;
 * bench run, 20 000 against 100 000 one-minute jobs on 16 A100s): 330 B with jobs.csv alone,
 * 1.0 KiB when run.json is written too. */
#define EST_RUN_JSON_BYTES_PER_JOB 600.0
#define EST_JOBS_CSV_BYTES_PER_JOB 160.0
#define EST_MEMORY_BYTES_PER_JOB 400.0
#define EST_MEMORY_BYTES_PER_JOB_RUN_JSON 700.0
/* A streamed run (synthetic classes, a trace read again as the run goes) holds the jobs in the
 * system, each with its page neighbours, its running state and events, plus what every job leaves
 * to the end. Release build, slicesim bench run, 2026-11-29 (main at a003e1f):
 * - with jobs.csv alone a job leaves the pages' and sample blocks' bookkeeping, a few bytes (the
 *   summary's arrays of waits and JCTs went in 244718c: sim/qsel.h keeps quantiles in bounded
 *   memory); 16 B is kept because synth-100k-10m (10 M jobs, ~170 000 running, jobs.csv and
 *   timeseries.csv) peaks at ~317 MB against an estimate of 319 MB with it (how that peak splits
 *   between running jobs and this residue is not measured), and synth-10k-1m without run.json
 *   peaks at 35 MB against 37.5 MB;
 * - run.json adds its metrics' per-job arrays at the end (activity records, the FGD allocation
 *   curve's events, the sorts behind its quantiles): synth-10k-1m (1 M jobs) 205 MB with run.json
 *   against 35 MB without, 170 B a job, rounded up to 192 (philly-full's end of run: actlog
 *   6.9 MB, the curve 5.3 MB, sorts 3.4 MB for 82 247 jobs, massif: 190 B a job);
 * - a running job 1 KiB, a queued one 512 B: synth-10k-1m (~15 000 running) at 35 MB without
 *   run.json (~800 B per running job); 20 000 one-minute jobs on 16 A100s, half of them queued at
 *   the end, at 9 MB with jobs.csv (260 B per queued job). Rounded up.
 * A trace read again (workloads/traceload.h) keeps 16 B a job for the run; how many of its jobs
 * are in the system at once is not known before the run, so each is counted as its 208-byte
 * record held in its page all run long (a bound: philly-full, 82 247 jobs, peaks at 29 MB where
 * the estimate says 42 MB). */
#define EST_MEMORY_BYTES_PER_LIVE_JOB 1024.0
#define EST_MEMORY_BYTES_PER_QUEUED_JOB 512.0
#define EST_MEMORY_BYTES_PER_STREAMED_JOB 16.0
#define EST_MEMORY_BYTES_PER_STREAMED_JOB_RUN_JSON 192.0
#define EST_MEMORY_BYTES_PER_TRACED_JOB (16.0 + 208.0)
#define EST_ROW_BYTES 64.0
#define EST_ROW_BYTES_PER_RESOURCE 16.0
#define EST_RESOURCES_PER_GROUP 3.0 /* resource names a node group may advertise, at most */
/* metrics.om: the default scenario (20 A100s, 44 devices, MIG and time-slicing) wrote 21.9 kB per
 * sample, 1.1 kB per GPU; MIG GPUs carry several devices, so 1.5 KiB per GPU and sample. */
#define EST_METRICS_BYTES_PER_GPU_SAMPLE 1536.0
/* The program itself: `slicesim bench run experiments/examples/small-mixed.yaml` (28 jobs)
 * peaks at 6 MiB resident (code, libraries, the embedded catalog and physics). */
#define EST_BASE_MEMORY_BYTES (6.0 * 1024 * 1024)
/* Spare replica pods (never started unless the autoscaler asks): 100 009 of them added 41 MB. */
#define EST_MEMORY_BYTES_PER_SPARE 512.0
/* The cluster (bench run, one job, 1 h): 80 000 nodes of one A100 peak 18 MB above 20 000 of
 * them (300 B per node and GPU), of eight A100s 72 MB (1200 B per node), of eight A100s in
 * all-1g.5gb (56 devices) 5.2 KB per node: about 200 B per node, 64 per GPU, 80 per device. */
#define EST_MEMORY_BYTES_PER_NODE 200.0
#define EST_MEMORY_BYTES_PER_GPU 64.0
#define EST_MEMORY_BYTES_PER_DEVICE 80.0
/* A fault: its event in the generated list, the injector's copy, the samples of the two state
 * changes. 7.2e6 GPU faults (20 A100s, mtbf 0.1 s over 10 h) peaked at 714 MB above the base
 * (99 B each), 720 000 at 90 MB (125 B: the lists grow by doubling). */
#define EST_MEMORY_BYTES_PER_FAULT 112.0
/* A waiting request: 8 bytes of the service's ring buffer, which grows by doubling (1x to 2x):
 * a vit-b16-infer service at 1000/s on 2 MIG 1g.5gb replicas (108/s of capacity) for 10 h had
 * 3.2e7 requests waiting at the end and peaked at 256 MB above the base (8.0 B each). */
#define EST_MEMORY_BYTES_PER_QUEUED 12.0
/* A step of the autoscaler or the re-partitioner records a sample of the cluster's state, and
 * samples leave memory in blocks of 4096 (world_set_sample_spill): re-partitioner steps every
 * 0.1 s on 4 MIG A100s peak at 7 MB over 4 h and over 16 h alike (144 000 and 576 000 steps,
 * bench run, opt build). What a step keeps is the spilled block's few bytes of index. */
#define EST_MEMORY_BYTES_PER_TICK 2.0

/* Events per item, counted by the engine (world_totals.n_events): a job is submitted and ends,
 * with the fluid solver's flushes between: 20 000 one-minute jobs on 16 A100s ran 1.97 events per
 * job, synth-10k-1m (queues and co-runners) 3.97; jobs that never start before the horizon
 * count one. A
 * fault is one event, and one more when its repair ends (NVLink faults take nothing down). A
 * request arrives (one event) and ends with its batch (one event per batch). A step is one. */
#define EST_EVENTS_PER_JOB 3.0

/* CPU seconds per item on the opt build (bench run, idle machine): a job's event 3.3 us
 * (synth-10k-1m: 13.05 s for 3.97e6 events on 10 000 GPUs); a fault visits every device twice
 * (taken down, back up): 5.8 s for 7.2e6 faults on 44 devices, 18 ns per device and fault; a
 * service's event 75 ns (3.7e7 events in 2.76 s); an autoscaler step visits every replica pod
 * of its service twice: 48 s for 360 000 steps over 100 009 pods (1.3 ns per pod); a
 * re-partitioner step 4.9 us on 4 re-partitioned GPUs; building the cluster 1 us per device
 * (2.3 s for 40 000 nodes of 56 MIG devices). */
#define EST_CPU_S_PER_JOB_EVENT 3.3e-6
#define EST_CPU_S_PER_FAULT_DEVICE 20e-9
#define EST_CPU_S_PER_REQUEST_EVENT 75e-9
#define EST_CPU_S_PER_SCALE_POD 1.5e-9
#define EST_CPU_S_PER_REPART_GPU 1.25e-6
#define EST_CPU_S_PER_DEVICE 1e-6

/* Steps of the fluid model of a service's queue (est_queue). */
#define EST_QUEUE_STEPS 2000

/* Jobs class j submits before the horizon (expected value for poisson arrivals). */
static double class_jobs(const scenario_spec *s, const scenario_job_class *j)
{
    double span_s = sim_time_to_s(s->horizon_ns - j->start_ns);
    double n = 0;
    if (span_s >= 0) {
        n = j->arrival == SCN_ARRIVAL_POISSON ? j->rate_per_s * span_s
                                              : floor(span_s / sim_time_to_s(j->interval_ns)) + 1;
    }
    return j->count > 0 && (double)j->count < n ? (double)j->count : n;
}

/* Jobs of class j in the system at once (Little's law: arrivals per second times the mean
 * duration, at most every job of the class); every job when the duration is not known before the
 * run (stated as work for a profile). *units gets the units they hold. */
static double class_live(const scenario_spec *s, const scenario_job_class *j, double n,
                         double *units)
{
    const scenario_duration *d = &j->duration;
    double span_s = sim_time_to_s(s->horizon_ns - j->start_ns);
    double mean_s = d->dist == SCN_DUR_FIXED         ? sim_time_to_s(d->value_ns)
                    : d->dist == SCN_DUR_EXPONENTIAL ? sim_time_to_s(d->mean_ns)
                    : d->dist == SCN_DUR_LOGNORMAL
                        ? sim_time_to_s(d->median_ns) * exp(d->sigma * d->sigma / 2)
                        : -1;
    double live = n;
    if (j->samples <= 0 && mean_s >= 0 && span_s > 0) {
        double per_s = n / span_s; /* arrivals per second, as class_jobs counts them */
        live = per_s * (mean_s < span_s ? mean_s : span_s);
        live = live < n ? live : n;
    }
    double workers = j->workers ? j->workers : 1;
    *units = live * workers * (j->request.count ? j->request.count : 1);
    return live;
}

/* Devices of one GPU of group g: 1 whole (time-sliced or MPS: one device with replicas), the
 * type's most MIG instances, or every candidate placement of a re-partitioned GPU (the whole GPU
 * and a time-sliced one included), as model/cluster/cluster.c builds them. */
static double group_devices_per_gpu(const scenario_spec *s, const gpu_catalog *cat, size_t g)
{
    const scenario_node_group *grp = &s->cluster.groups[g];
    const gpu_type *t = cat && grp->gpu ? gpu_catalog_find(cat, grp->gpu) : NULL;
    if (!t || !grp->sharing.is_mig) {
        return 1;
    }
    if (!scenario_group_reconfigurable(s, g)) {
        return t->max_mig_instances > 0 ? t->max_mig_instances : 1;
    }
    double n = 2;
    for (int p = 0; p < t->n_profiles; p++) {
        n += mig_profile_is_classic(&t->profiles[p]) ? t->profiles[p].n_starts : 0;
    }
    return n;
}

static void est_cluster(const scenario_spec *s, const gpu_catalog *cat, run_estimate *e)
{
    double top = -1;
    for (size_t g = 0; g < s->cluster.n_groups; g++) {
        const scenario_node_group *grp = &s->cluster.groups[g];
        double gpus = (double)grp->count * grp->gpus_per_node;
        double devs = gpus * group_devices_per_gpu(s, cat, g);
        e->nodes += grp->count;
        e->gpus += gpus;
        e->devices += devs;
        if (devs + grp->count > top) {
            top = devs + grp->count;
            e->top_group = g;
        }
    }
    e->mem_by[EST_SRC_CLUSTER] = e->nodes * EST_MEMORY_BYTES_PER_NODE +
                                 e->gpus * EST_MEMORY_BYTES_PER_GPU +
                                 e->devices * EST_MEMORY_BYTES_PER_DEVICE;
    e->cpu_s += e->devices * EST_CPU_S_PER_DEVICE;
}

/* Nodes with two or more GPUs (those an NVLink fault can strike). */
static double nvlink_nodes(const scenario_spec *s)
{
    double n = 0;
    for (size_t g = 0; g < s->cluster.n_groups; g++) {
        n += s->cluster.groups[g].gpus_per_node >= 2 ? s->cluster.groups[g].count : 0;
    }
    return n;
}

static void est_faults(const scenario_spec *s, run_estimate *e)
{
    const scenario_faults *sf = &s->faults;
    e->top_fault = -1;
    if (!cfg_present(sf->at)) {
        return;
    }
    const scenario_fault_rate *rates[4] = {&sf->process.gpu, &sf->process.instance,
                                           &sf->process.node, &sf->process.nvlink};
    const double comps[4] = {e->gpus, e->gpus, e->nodes, nvlink_nodes(s)};
    double h_s = sim_time_to_s(s->horizon_ns), top = (double)sf->n_events, events = 0;
    for (int k = 0; k < 4; k++) {
        if (!cfg_present(rates[k]->at) || rates[k]->mtbf_ns <= 0) {
            continue;
        }
        double n = comps[k] * h_s / sim_time_to_s(rates[k]->mtbf_ns);
        e->faults += n;
        events += n * (k != 3 && rates[k]->repair_ns > 0 ? 2 : 1);
        if (n > top) {
            top = n;
            e->top_fault = k;
        }
    }
    for (size_t i = 0; i < sf->n_events; i++) {
        e->faults += 1;
        events += sf->events[i].repair_ns > 0 ? 2 : 1;
    }
    e->events_by[EST_SRC_FAULTS] = events;
    e->mem_by[EST_SRC_FAULTS] = e->faults * EST_MEMORY_BYTES_PER_FAULT;
    e->cpu_s += e->faults * e->devices * 2 * EST_CPU_S_PER_FAULT_DEVICE;
}

/* Requests per second of service v at time t_s. */
static double svc_rate(const scenario_service *v, double t_s)
{
    if (v->arrival != SCN_SVC_DIURNAL) {
        return v->rate_per_s;
    }
    double period = sim_time_to_s(v->period_ns), peak = sim_time_to_s(v->peak_ns);
    return v->rate_per_s * (1 + v->amplitude * cos(2 * 3.14159265358979323846 * (t_s - peak) / period));
}

/* Most requests waiting at once in a fluid model of service v: the queue grows at
 * rate(t) - capacity and never falls below zero, over EST_QUEUE_STEPS steps of the horizon. */
static double est_queue(const scenario_service *v, double h_s, double capacity_per_s)
{
    double q = 0, peak = 0, dt = h_s / EST_QUEUE_STEPS;
    for (int k = 0; k < EST_QUEUE_STEPS; k++) {
        q += (svc_rate(v, (k + 0.5) * dt) - capacity_per_s) * dt;
        q = q > 0 ? q : 0;
        peak = q > peak ? q : peak;
    }
    return peak;
}

/* Spare pods of service v (as experiments/build_service.c's build_service_spares makes them):
 * its most replicas for every stabilization window (or interval) of the horizon, at most
 * EST_MAX_SPARES. */
static double svc_spares(const scenario_spec *s, const scenario_service *v)
{
    const scenario_autoscale *as = &v->autoscale;
    int64_t window = as->stabilization_ns > as->interval_ns ? as->stabilization_ns
                                                            : as->interval_ns;
    if (!cfg_present(as->at) || window <= 0) {
        return 0;
    }
    double want = (double)as->max * (1.0 + ceil((double)s->horizon_ns / (double)window));
    return want > EST_MAX_SPARES ? EST_MAX_SPARES : want;
}

static void est_services(const scenario_spec *s, const double *svc_batch_s, run_estimate *e)
{
    double h_s = sim_time_to_s(s->horizon_ns), top = -1, events = 0;
    for (size_t i = 0; i < s->n_services; i++) {
        const scenario_service *v = &s->services[i];
        const scenario_autoscale *as = &v->autoscale;
        bool scales = cfg_present(as->at);
        double most = scales && as->max > v->replicas ? as->max : v->replicas;
        double n = v->rate_per_s * h_s; /* a diurnal rate's mean is its rate */
        double batch_s = svc_batch_s ? svc_batch_s[i] : 0;
        double batches = n;
        if (batch_s > 0) {
            double cap_batches = most * h_s / batch_s;
            batches = cap_batches < n ? cap_batches : n;
            e->queued += est_queue(v, h_s, most * v->batch / batch_s);
        }
        e->requests += n;
        events += n + batches;
        if (n > top) {
            top = n;
            e->top_service = i;
        }
        e->jobs += v->replicas;
        e->spares += svc_spares(s, v);
    }
    e->events_by[EST_SRC_SERVICES] = events;
    e->mem_by[EST_SRC_SERVICES] = e->queued * EST_MEMORY_BYTES_PER_QUEUED;
    e->cpu_s += events * EST_CPU_S_PER_REQUEST_EVENT;
}

static void est_ticks(const scenario_spec *s, run_estimate *e)
{
    double h_s = sim_time_to_s(s->horizon_ns), top = -1;
    e->top_tick = s->n_services;
    for (size_t i = 0; i < s->n_services; i++) {
        const scenario_service *v = &s->services[i];
        const scenario_autoscale *as = &v->autoscale;
        if (!cfg_present(as->at) || as->interval_ns <= 0) {
            continue;
        }
        double n = floor(h_s / sim_time_to_s(as->interval_ns));
        double pool = v->replicas + svc_spares(s, v); /* every pod of the service */
        e->ticks += n;
        e->cpu_s += n * 2 * pool * EST_CPU_S_PER_SCALE_POD;
        if (n > top) {
            top = n;
            e->top_tick = i;
        }
    }
    const scenario_repartition *rp = &s->repartition;
    if (cfg_present(rp->at) && rp->enabled && rp->interval_ns > 0) {
        double n = floor(h_s / sim_time_to_s(rp->interval_ns)), gpus = 0;
        for (size_t g = 0; g < s->cluster.n_groups; g++) {
            gpus += scenario_group_reconfigurable(s, g)
                        ? (double)s->cluster.groups[g].count * s->cluster.groups[g].gpus_per_node
                        : 0;
        }
        e->ticks += n;
        e->cpu_s += n * (gpus > 1 ? gpus : 1) * EST_CPU_S_PER_REPART_GPU;
        if (n > top) {
            e->top_tick = s->n_services;
        }
    }
    e->events_by[EST_SRC_TICKS] = e->ticks;
    e->mem_by[EST_SRC_TICKS] = e->ticks * EST_MEMORY_BYTES_PER_TICK;
}

/* The scheduler's caches (policy_ops.cache_bytes) for the pod shapes the run may bring: one per
 * job class and service (a bound: classes may share one) and the trace's. */
static double est_policy_caches(const scenario_spec *s, const est_trace *tr, const run_estimate *e)
{
    const policy_ops *pol = pol_find(s->policy.scheduler ? s->policy.scheduler : "fifo");
    if (!pol || !pol->cache_bytes || e->nodes <= 0 || e->nodes > UINT32_MAX) {
        return 0;
    }
    double shapes = (double)s->workload.n_jobs + (double)s->n_services + (tr ? tr->shapes : 0);
    return pol->cache_bytes((uint32_t)e->nodes, shapes);
}

void est_scenario(const scenario_spec *s, const gpu_catalog *cat, const est_trace *trace,
                  const double *svc_batch_s, run_estimate *e)
{
    double extra_jobs = trace ? trace->jobs : 0;
    memset(e, 0, sizeof *e);
    e->top_class = s->workload.n_jobs;
    double top = -1, live = 0, live_units = 0;
    for (size_t i = 0; i < s->workload.n_jobs; i++) {
        double n = class_jobs(s, &s->workload.jobs[i]), units = 0;
        live += class_live(s, &s->workload.jobs[i], n, &units);
        live_units += units;
        e->jobs += n;
        if (n > top) {
            top = n;
            e->top_class = i;
        }
    }
    e->jobs += extra_jobs;
    est_cluster(s, cat, e);
    est_faults(s, e);
    est_services(s, svc_batch_s, e); /* adds the replicas to jobs */
    est_ticks(s, e);
    e->mem_by[EST_SRC_CLUSTER] += est_policy_caches(s, trace, e);
    unsigned files = s->outputs.files;
    bool sampled = files & (SCN_OUT_TIMESERIES_CSV | SCN_OUT_METRICS_OM);
    if (sampled && s->outputs.sample_interval_ns > 0) {
        e->timeseries_rows =
            floor((double)s->horizon_ns / (double)s->outputs.sample_interval_ns) + 2;
    }
    double row = EST_ROW_BYTES +
                 EST_ROW_BYTES_PER_RESOURCE * EST_RESOURCES_PER_GROUP * (double)s->cluster.n_groups;
    if (files & SCN_OUT_TIMESERIES_CSV) {
        e->output_bytes += e->timeseries_rows * row;
    }
    if (files & SCN_OUT_METRICS_OM) {
        e->output_bytes += e->timeseries_rows * EST_METRICS_BYTES_PER_GPU_SAMPLE * e->gpus;
    }
    double listed = e->jobs + e->spares; /* jobs.csv and run.json list every pod */
    if (files & SCN_OUT_RUN_JSON) {
        e->output_bytes += listed * EST_RUN_JSON_BYTES_PER_JOB;
    }
    if (files & SCN_OUT_JOBS_CSV) {
        e->output_bytes += listed * EST_JOBS_CSV_BYTES_PER_JOB;
    }
    e->events_by[EST_SRC_JOBS] = e->jobs * EST_EVENTS_PER_JOB;
    /* a timed trace is read again as the run goes (not helios: drawn from its bins) */
    const scenario_trace *tr = &s->workload.trace;
    bool traced = cfg_present(tr->at);
    bool read_again =
        traced && tr->mode != SCN_TRACE_ARRIVAL_ONLY && (trace_format)tr->format != TRACE_HELIOS;
    bool streamed = (!traced || read_again) && s->n_services == 0;
    if (streamed) {
        /* more units asked for at once than the cluster has devices: the excess waits, and
         * jobs pile up in the queue in that proportion */
        double queued = 0;
        if (live_units > e->devices && live_units > 0) {
            queued = (1 - e->devices / live_units) * e->jobs;
            queued = live + queued < e->jobs ? queued : e->jobs - live;
        }
        e->live = live + queued + extra_jobs; /* every traced job, as a bound (see above) */
        e->mem_by[EST_SRC_JOBS] =
            live * EST_MEMORY_BYTES_PER_LIVE_JOB + queued * EST_MEMORY_BYTES_PER_QUEUED_JOB +
            extra_jobs * EST_MEMORY_BYTES_PER_TRACED_JOB +
            e->jobs * (EST_MEMORY_BYTES_PER_STREAMED_JOB +
                       (files & SCN_OUT_RUN_JSON ? EST_MEMORY_BYTES_PER_STREAMED_JOB_RUN_JSON : 0));
    } else {
        e->live = e->jobs + e->spares;
        /* a held trace's records beyond its jobs (helios: the whole file, the window a part) */
        double beyond = traced && trace && trace->records > extra_jobs ? trace->records - extra_jobs : 0;
        e->mem_by[EST_SRC_JOBS] =
            e->jobs * (EST_MEMORY_BYTES_PER_JOB +
                       (files & SCN_OUT_RUN_JSON ? EST_MEMORY_BYTES_PER_JOB_RUN_JSON : 0)) +
            e->spares * EST_MEMORY_BYTES_PER_SPARE +
            beyond * (double)traceload_held_record_bytes();
    }
    e->cpu_s += e->events_by[EST_SRC_JOBS] * EST_CPU_S_PER_JOB_EVENT;
    e->memory_bytes = EST_BASE_MEMORY_BYTES;
    for (int k = 0; k < EST_SRC_COUNT; k++) {
        e->memory_bytes += e->mem_by[k];
        e->events += e->events_by[k];
    }
}

/* Where a job-driven excess is reported: the busiest class's rate or interval (or the class). */
static src_loc class_at(const scenario_spec *s, size_t k, char *path, size_t n, char *got,
                        size_t gn)
{
    const scenario_job_class *j = &s->workload.jobs[k];
    if (j->arrival == SCN_ARRIVAL_POISSON && cfg_present(j->rate_at)) {
        snprintf(path, n, "workload.jobs[%zu].rate", k);
        static const struct {
            const char *unit;
            double s;
        } units[] = {{"s", 1}, {"min", 60}, {"h", 3600}, {"d", 86400}};
        size_t u = 0;
        while (u + 1 < sizeof units / sizeof units[0] && j->rate_per_s * units[u].s < 1) {
            u++;
        }
        snprintf(got, gn, "%g/%s", j->rate_per_s * units[u].s, units[u].unit);
        return j->rate_at;
    }
    if (j->arrival == SCN_ARRIVAL_FIXED && cfg_present(j->interval_at)) {
        snprintf(path, n, "workload.jobs[%zu].interval", k);
        snprintf(got, gn, "%gs", sim_time_to_s(j->interval_ns));
        return j->interval_at;
    }
    snprintf(path, n, "workload.jobs[%zu]", k);
    snprintf(got, gn, "%s", j->name ? j->name : "");
    return j->at;
}

/* Where an excess driven by source src is reported, with the value shown as `got`. */
static src_loc source_at(const scenario_spec *s, const run_estimate *e, est_source src,
                         char *path, size_t n, char *got, size_t gn)
{
    static const char *const kinds[4] = {"gpu", "instance", "node", "nvlink"};
    switch (src) {
    case EST_SRC_CLUSTER: {
        const scenario_node_group *g = &s->cluster.groups[e->top_group];
        snprintf(path, n, "cluster.nodes[%zu].count", e->top_group);
        snprintf(got, gn, "%lu", (unsigned long)g->count);
        return cfg_present(g->at) ? g->at : s->cluster.at;
    }
    case EST_SRC_FAULTS:
        if (e->top_fault < 0) {
            snprintf(path, n, "faults.events");
            snprintf(got, gn, "%zu events", s->faults.n_events);
            return s->faults.at;
        } else {
            const scenario_fault_rate *r[4] = {&s->faults.process.gpu, &s->faults.process.instance,
                                               &s->faults.process.node, &s->faults.process.nvlink};
            snprintf(path, n, "faults.process.%s.mtbf", kinds[e->top_fault]);
            snprintf(got, gn, "%gs", sim_time_to_s(r[e->top_fault]->mtbf_ns));
            return r[e->top_fault]->at;
        }
    case EST_SRC_SERVICES:
        snprintf(path, n, "services[%zu].rate", e->top_service);
        snprintf(got, gn, "%g/s", s->services[e->top_service].rate_per_s);
        return s->services[e->top_service].at;
    case EST_SRC_TICKS:
        if (e->top_tick < s->n_services) {
            const scenario_autoscale *as = &s->services[e->top_tick].autoscale;
            snprintf(path, n, "services[%zu].autoscale.interval", e->top_tick);
            snprintf(got, gn, "%gs", sim_time_to_s(as->interval_ns));
            return as->at;
        }
        snprintf(path, n, "repartition.interval");
        snprintf(got, gn, "%gs", sim_time_to_s(s->repartition.interval_ns));
        return s->repartition.at;
    case EST_SRC_JOBS:
    case EST_SRC_COUNT:
        break;
    }
    if (e->top_class < s->workload.n_jobs) {
        return class_at(s, e->top_class, path, n, got, gn);
    }
    snprintf(path, n, "workload");
    snprintf(got, gn, "%.3g jobs", e->jobs);
    return cfg_present(s->workload.at) ? s->workload.at : s->at;
}

/* The source that contributes most to by[]. */
static est_source top_source(const double *by)
{
    int k = 0;
    for (int i = 1; i < EST_SRC_COUNT; i++) {
        k = by[i] > by[k] ? i : k;
    }
    return (est_source)k;
}

int est_check_limits(const scenario_spec *s, const run_estimate *e, diag *d)
{
    const scenario_limits *l = &s->limits;
    enum { JOBS, ROWS, EVENTS, OUTPUT, MEMORY, N_CHECKS };
    const struct {
        const char *what, *key;
        double est, limit;
    } checks[N_CHECKS] = {
        {"jobs", "jobs", e->jobs, (double)l->jobs},
        {"timeseries rows", "timeseries_rows", e->timeseries_rows, (double)l->timeseries_rows},
        {"events", "events", e->events, (double)l->events},
        {"bytes of output", "output", e->output_bytes, (double)l->output_bytes},
        {"bytes of memory", "memory", e->memory_bytes, (double)l->memory_bytes},
    };
    char over[640];
    size_t used = 0;
    int first = -1;
    over[0] = '\0';
    for (int i = 0; i < N_CHECKS; i++) {
        if (!(checks[i].est > checks[i].limit)) {
            continue;
        }
        first = first < 0 ? i : first;
        int k = snprintf(over + used, sizeof over - used, "%sabout %.3g %s (limits.%s %.0f)",
                         used ? ", " : "", checks[i].est, checks[i].what, checks[i].key,
                         checks[i].limit);
        used += k > 0 && (size_t)k < sizeof over - used ? (size_t)k : 0;
    }
    if (first < 0) {
        return 0;
    }
    /* Report at what drives the first excess. */
    char path[96], got[64];
    src_loc at;
    double job_output = (e->jobs + e->spares) *
                        (EST_RUN_JSON_BYTES_PER_JOB + EST_JOBS_CSV_BYTES_PER_JOB);
    bool rows = first == ROWS || (first == OUTPUT && job_output <= e->output_bytes / 2);
    if (rows) {
        snprintf(path, sizeof path, "outputs.sample_interval");
        snprintf(got, sizeof got, "%gs", sim_time_to_s(s->outputs.sample_interval_ns));
        at = cfg_present(s->outputs.sample_interval_at) ? s->outputs.sample_interval_at : s->at;
    } else {
        est_source src = first == EVENTS   ? top_source(e->events_by)
                         : first == MEMORY ? top_source(e->mem_by)
                                           : EST_SRC_JOBS;
        at = source_at(s, e, src, path, sizeof path, got, sizeof got);
    }
    diag_error(d, at, path,
               "the run is too large: %s; expected a run within the scenario's limits (raise "
               "them under `limits:` or with --set limits.KEY=VALUE), got '%s'",
               over, got);
    return 1;
}

void est_print(FILE *f, const run_estimate *e)
{
    fprintf(f,
            "estimate: about %.0f jobs, %.0f timeseries rows, %.3g MB of output, %.3g MB of "
            "memory\n",
            e->jobs, e->timeseries_rows, e->output_bytes / 1e6, e->memory_bytes / 1e6);
    fprintf(f,
            "estimate: about %.3g events, %.2g s of CPU (%.0f GPUs, %.0f devices, %.3g faults, "
            "%.3g service requests, %.3g autoscaler and re-partitioner steps)\n",
            e->events, e->cpu_s, e->gpus, e->devices, e->faults, e->requests, e->ticks);
}
