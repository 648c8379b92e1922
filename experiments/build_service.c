/* experiments/build_service.c - a scenario's services on the run's world (see build_service.h). */
#include "experiments/build_service.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "experiments/build.h"
#include "experiments/cfg.h"
#include "experiments/estimate.h"
#include "model/physics/predict.h"
#include "sim/err.h"
#include "sim/rng.h"
#include "workloads/tracelive.h"

/* The time of a batch of service i's largest size alone on the first device of c advertising
 * its resource (seconds), for the estimate; 0 when unknown (build_services reports why). */
double build_service_batch_s(const built_run *b, const cluster *c, size_t i)
{
    const scenario_service *sv = &b->spec->services[i];
    partition_cfg pc;
    if (!b->svc_prof[i] || !build_partition_for(c, sv->resource, &pc)) {
        return 0;
    }
    speed_result sr;
    predict_unit_estimate(b->svc_prof[i]->p, sv->batch, &pc, &b->phys, &sr);
    if (sr.outcome != SPEED_OK) {
        return 0;
    }
    return sr.unit_time_s * wl_units_per_iter(b->svc_prof[i]->p, sv->batch);
}

/* Each service's profile (loaded with the job classes' profiles). */
void build_service_profiles(built_run *b)
{
    size_t n = b->spec->n_services;
    b->svc_prof = arena_calloc(b->a, n + 1, sizeof *b->svc_prof);
    b->svc_first = arena_calloc(b->a, n + 1, sizeof *b->svc_first);
    for (size_t i = 0; i < n; i++) {
        const scenario_service *sv = &b->spec->services[i];
        char path[64];
        snprintf(path, sizeof path, "services[%zu].profile", i);
        b->svc_prof[i] = build_run_profile(b, sv->profile, sv->profile_at, path);
    }
}

/* The replica pods, first in the job table (submitted at 0, running past the horizon), each
 * asking for one unit and the profile's memory at the service's largest batch. */
void build_service_replicas(built_run *b, job_table *jobs)
{
    for (size_t i = 0; i < b->spec->n_services; i++) {
        const scenario_service *sv = &b->spec->services[i];
        const jobrate_profile *jp = b->svc_prof[i];
        job_spec js = {.class_name = sv->name,
                       .req = {sv->resource, 1, 1},
                       .submit = 0,
                       .work_s = 1e12, /* beyond any horizon: it serves until the end */
                       .mem_bytes = (uint64_t)ceil(wl_mem_footprint_bytes(jp->p, sv->batch)),
                       .profile = sv->profile};
        b->svc_first[i] = (job_id)job_table_count(jobs);
        for (uint32_t k = 0; k < sv->replicas; k++) {
            job_table_add(jobs, &js);
        }
    }
}

/* Spare replica pods of autoscaled services, after every other job, submitted only by the
 * autoscaler: a scale-up after a scale-down takes fresh pods, so a service gets max pods for every
 * stabilization window (or interval) of the horizon, at most EST_MAX_SPARES. Fills the replica id
 * lists. */
void build_service_spares(built_run *b, job_table *jobs)
{
    size_t n = job_table_count(jobs);
    sim_time late = b->spec->horizon_ns;
    /* (without services the synthetic jobs stay ungenerated until the run reaches them) */
    if (b->spec->n_services > 0 && n > 0 &&
        job_table_get(jobs, (job_id)(n - 1))->spec.submit > late) {
        late = job_table_get(jobs, (job_id)(n - 1))->spec.submit;
    }
    b->svc_ids = arena_calloc(b->a, b->spec->n_services + 1, sizeof *b->svc_ids);
    b->svc_pool = arena_calloc(b->a, b->spec->n_services + 1, sizeof *b->svc_pool);
    for (size_t i = 0; i < b->spec->n_services; i++) {
        const scenario_service *sv = &b->spec->services[i];
        const scenario_autoscale *as = &sv->autoscale;
        int64_t window =
            as->stabilization_ns > as->interval_ns ? as->stabilization_ns : as->interval_ns;
        double want =
            cfg_present(as->at) && window > 0
                ? (double)as->max * (1.0 + ceil((double)b->spec->horizon_ns / (double)window))
                : 0;
        uint32_t spares = want > EST_MAX_SPARES ? EST_MAX_SPARES : (uint32_t)want;
        uint32_t pool = sv->replicas + spares;
        job_id *ids = arena_calloc(b->a, pool, sizeof *ids);
        for (uint32_t k = 0; k < sv->replicas; k++) {
            ids[k] = b->svc_first[i] + k;
        }
        job_spec js = job_table_get(jobs, b->svc_first[i])->spec;
        js.submit = late + 1;
        for (uint32_t k = sv->replicas; k < pool; k++) {
            ids[k] = (job_id)job_table_count(jobs);
            job_table_add(jobs, &js);
        }
        b->svc_ids[i] = ids;
        b->svc_pool[i] = pool;
    }
}

/* Service i's arrivals from its trace's live instances (arrival: trace): the step function
 * into sp. false when the trace cannot be opened or read (gone since the loader checked it) or
 * has no instance to count, each reported at its field. */
static bool load_service_steps(built_run *b, size_t i, service_spec *sp)
{
    const scenario_svc_trace *t = &b->spec->services[i].trace;
    char path[64];
    snprintf(path, sizeof path, "services[%zu].trace.file", i);
    FILE *f = scenario_open_trace(t->file, "trace", t->file_at, path, b->d);
    if (!f) { /* there at load, gone since */
        return false;
    }
    trace_src src = scenario_service_trace_source(b->spec, i);
    trace_reader *rd = NULL;
    tracelive live = {0};
    int rc = trace_open(&src, f, b->d, &rd);
    if (rc == 0) {
        rc = tracelive_read(rd, t->app, b->a, &live);
    }
    trace_close(rd);
    fclose(f);
    if (rc == SIM_EIO) { /* as the loader reports it */
        diag_error(b->d, t->file_at, path, "read error; expected a readable file, got '%s'",
                   t->file);
    }
    if (rc != 0) {
        return false;
    }
    if (live.n_records == 0) {
        snprintf(path, sizeof path, "services[%zu].trace.app", i);
        diag_error(b->d, cfg_present(t->app_at) ? t->app_at : t->at, path,
                   "no instance with a GPU in %s; expected an app_name of the trace, got '%s'",
                   t->file, t->app ? t->app : "(any)");
        return false;
    }
    sp->arrival = SERVICE_STEPS;
    sp->step_t = live.t;
    sp->step_level = live.level;
    sp->n_steps = live.n_steps;
    sp->even = t->spacing == SCN_SPACING_EVEN;
    return true;
}

/* Check each service against the built cluster (its resource is advertised, its model fits a
 * batch on that partition) and start it. */
void build_services(built_run *b)
{
    const cluster *c = world_cluster(b->w);
    b->svcs = arena_calloc(b->a, b->spec->n_services + 1, sizeof *b->svcs);
    rng_root root = rng_root_make(b->spec->seed);
    for (size_t i = 0; i < b->spec->n_services; i++) {
        const scenario_service *sv = &b->spec->services[i];
        char path[64], have[512];
        res_id res;
        if (!cluster_resource_find(c, sv->resource, &res)) {
            snprintf(path, sizeof path, "services[%zu].resource", i);
            diag_error(b->d, sv->resource_at, path,
                       "not advertised by any node; expected one of [%s], got '%s'",
                       build_advertised(c, have, sizeof have), sv->resource);
            continue;
        }
        dev_id d = 0;
        while (cluster_device_get(c, d)->resource != res) {
            d++;
        }
        const cluster_device *cd = cluster_device_get(c, d);
        partition_cfg pc;
        partition_cfg_init(&pc, cluster_gpu_get(c, cd->gpu)->type);
        pc.mig = cd->profile;
        speed_result sr;
        predict_unit_estimate(b->svc_prof[i]->p, sv->batch, &pc, &b->phys, &sr);
        if (sr.outcome != SPEED_OK) {
            snprintf(path, sizeof path, "services[%zu].profile", i);
            diag_error(b->d, sv->profile_at, path,
                       "cannot serve a batch of %u on %s: %s; expected a model that fits, got "
                       "'%s'",
                       (unsigned)sv->batch, cluster_resource_name(c, res), sr.reason, sv->profile);
            continue;
        }
        const scenario_autoscale *as = &sv->autoscale;
        if (cfg_present(as->at) &&
            (as->min > as->max || sv->replicas < as->min || sv->replicas > as->max ||
             (as->metric == SCN_SCALE_UTILISATION && as->target > 1))) {
            snprintf(path, sizeof path, "services[%zu].autoscale", i);
            diag_error(b->d, as->at, path,
                       "inconsistent; expected min <= replicas <= max (and a utilisation target "
                       "of at most 1), got min %u, replicas %u, max %u, target %g",
                       (unsigned)as->min, (unsigned)sv->replicas, (unsigned)as->max, as->target);
            continue;
        }
        service_spec sp = {
            .name = sv->name,
            .index = i,
            .replica_ids = b->svc_ids[i],
            .n_replicas = b->svc_pool[i],
            .n_start = sv->replicas,
            .autoscale = {.metric = !cfg_present(as->at)            ? SERVICE_SCALE_NONE
                                    : as->metric == SCN_SCALE_QUEUE ? SERVICE_SCALE_QUEUE
                                                                    : SERVICE_SCALE_UTILISATION,
                          .target = as->target,
                          .min = as->min,
                          .max = as->max,
                          .interval_s = sim_time_to_s(as->interval_ns),
                          .stabilization_s = sim_time_to_s(as->stabilization_ns)},
            .arrival = sv->arrival == SCN_SVC_DIURNAL ? SERVICE_DIURNAL : SERVICE_POISSON,
            .rate_per_s = sv->rate_per_s,
            .amplitude = sv->amplitude,
            .period_s = sim_time_to_s(sv->period_ns),
            .peak_s = sim_time_to_s(sv->peak_ns),
            .end = b->spec->horizon_ns,
            .max_batch = sv->batch,
            .slo_s = sim_time_to_s(sv->slo_ns),
            .profile = b->svc_prof[i]->p,
            .phys = &b->phys};
        if (sv->arrival == SCN_SVC_TRACE && !load_service_steps(b, i, &sp)) {
            continue; /* reported */
        }
        b->svcs[i] = service_create(b->w, &sp, &root);
    }
}
