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

/* The time of a batch of service i's largest size alone on the first device of c advertising
 * its resource (seconds), for the estimate; 0 when unknown (build_services reports why). */
double build_service_batch_s(const built_run *b, const cluster *c, size_t i)
{
    const scenario_service *sv = &b->spec->services[i];
    partition_cfg pc;
    const jobrate_profile *jp = b->res->svc_prof[i];
    if (!jp || !build_partition_for(c, sv->resource, &pc)) {
        return 0;
    }
    speed_result sr;
    predict_unit_estimate(jp->p, sv->batch, &pc, &b->res->phys, &sr);
    if (sr.outcome != SPEED_OK) {
        return 0;
    }
    return sr.unit_time_s * wl_units_per_iter(jp->p, sv->batch);
}

/* The replica pods, first in the job table (submitted at 0, running past the horizon), each
 * asking for one unit and the profile's memory at the service's largest batch. */
void build_service_replicas(built_run *b, job_table *jobs)
{
    b->svc_first = arena_calloc(b->a, b->spec->n_services + 1, sizeof *b->svc_first);
    for (size_t i = 0; i < b->spec->n_services; i++) {
        const scenario_service *sv = &b->spec->services[i];
        const jobrate_profile *jp = b->res->svc_prof[i];
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

/* Check each service against the built cluster (its resource is advertised, its model fits a
 * batch on that partition) and start it, with its traced arrivals (resolved at load). */
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
        predict_unit_estimate(b->res->svc_prof[i]->p, sv->batch, &pc, &b->res->phys, &sr);
        if (sr.outcome != SPEED_OK) {
            snprintf(path, sizeof path, "services[%zu].profile", i);
            diag_error(b->d, sv->profile_at, path,
                       "cannot serve a batch of %u on %s: %s; expected a model that fits, got "
                       "'%s'",
                       (unsigned)sv->batch, cluster_resource_name(c, res), sr.reason, sv->profile);
            continue;
        }
        const scenario_autoscale *as = &sv->autoscale;
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
            .profile = b->res->svc_prof[i]->p,
            .phys = &b->res->phys};
        const tracelive *live = b->res->svc_live[i];
        if (live) { /* arrival: trace, its instances read at load */
            sp.arrival = SERVICE_STEPS;
            sp.step_t = live->t;
            sp.step_level = live->level;
            sp.n_steps = live->n_steps;
            sp.even = sv->trace.spacing == SCN_SPACING_EVEN;
        }
        b->svcs[i] = service_create(b->w, &sp, &root);
    }
}
