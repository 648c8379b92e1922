/* experiments/resolve.c - a loaded scenario resolved for its run (see resolve.h). */
#include "experiments/resolve.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "experiments/build.h"
#include "experiments/build_ddp.h"
#include "experiments/catalog_load.h"
#include "experiments/cfg.h"
#include "experiments/comm_load.h"
#include "experiments/physics_load.h"
#include "model/cluster/cluster.h"
#include "model/cluster/job.h"
#include "model/physics/tracework.h"
#include "sim/err.h"

/* Work factor (model/physics/tracework.h) and device memory of traced jobs asking for `res` with
 * profile `prof` (NULL: GPU-bound), on c (one node per group: each resource's first device is
 * the full cluster's); problems reported at `at`. */
static void rule_work(scenario_resolved *r, const scenario_spec *s, const cluster *c,
                      const gpu_type *traced, const char *res, const char *prof, src_loc at,
                      const char *path, arena *a, diag *d, traceload_rule *out)
{
    partition_cfg part;
    out->work_factor = 1.0;
    if (!strcmp(res, JOB_RES_MIG_ANY)) { /* work counted on the pool's largest profile */
        gpu_id g = 0;
        while (g < cluster_n_gpus(c) && !cluster_gpu_get(c, g)->reconfigurable) {
            g++;
        }
        if (g == cluster_n_gpus(c) || !prof) {
            return; /* reported by scenario_check_any_slice */
        }
        partition_cfg_init(&part, cluster_gpu_get(c, g)->type);
        part.mig = jobrate_reference(part.gpu);
    } else if (!build_partition_for(c, res, &part)) {
        return; /* scenario_validate reported a resource no node advertises */
    }
    char ppath[160];
    snprintf(ppath, sizeof ppath, "%s.profile", path);
    const jobrate_profile *jp =
        prof ? build_load_profile(s, &r->phys, r->profiles, &r->n_profiles, prof, at, ppath, a, d)
             : NULL;
    if (prof && !jp) {
        return;
    }
    char why[256];
    if (tracework_factor(jp ? jp->p : NULL, jp ? jp->batch : 1, traced, &part, &r->phys,
                         &out->work_factor, why, sizeof why) != 0) {
        diag_error(d, at, prof ? ppath : path,
                   "cannot carry traced durations to %s (%s); expected a profile that runs on "
                   "the traced GPU and on the partition, got '%s'",
                   res, why, prof ? prof : "gpu-bound");
    }
    if (jp) {
        out->mem_bytes = (uint64_t)ceil(wl_mem_footprint_bytes(jp->p, jp->batch));
    }
}

/* Service i's arrivals from its trace's live instances (arrival: trace) into *live; false when
 * the trace cannot be read or has no instance of the app (reported at the field). */
static bool service_live(const scenario_spec *s, size_t i, arena *a, diag *d, tracelive *live)
{
    const scenario_svc_trace *t = &s->services[i].trace;
    char path[64];
    snprintf(path, sizeof path, "services[%zu].trace.file", i);
    FILE *f = scenario_open_trace(t->file, "trace", t->file_at, path, d);
    if (!f) {
        return false;
    }
    trace_src src = scenario_service_trace_source(s, i);
    trace_reader *rd = NULL;
    int rc = trace_open(&src, f, d, &rd);
    if (rc == 0) {
        rc = tracelive_read(rd, t->app, a, live);
    }
    trace_close(rd);
    fclose(f);
    if (rc == SIM_EIO) {
        diag_error(d, t->file_at, path, "read error; expected a readable file, got '%s'",
                   t->file);
    }
    if (rc != 0) {
        return false;
    }
    if (live->n_records == 0) {
        snprintf(path, sizeof path, "services[%zu].trace.app", i);
        diag_error(d, cfg_present(t->app_at) ? t->app_at : t->at, path,
                   "no instance with a GPU in %s; expected an app_name of the trace, got '%s'",
                   t->file, t->app ? t->app : "(any)");
        return false;
    }
    return true;
}

/* Service i's profile, autoscale and traced arrivals. */
static void service(scenario_resolved *r, const scenario_spec *s, size_t i, arena *a, diag *d)
{
    const scenario_service *sv = &s->services[i];
    char path[64];
    snprintf(path, sizeof path, "services[%zu].profile", i);
    r->svc_prof[i] = build_load_profile(s, &r->phys, r->profiles, &r->n_profiles, sv->profile,
                                        sv->profile_at, path, a, d);
    const scenario_autoscale *as = &sv->autoscale;
    if (cfg_present(as->at) &&
        (as->min > as->max || sv->replicas < as->min || sv->replicas > as->max ||
         (as->metric == SCN_SCALE_UTILISATION && as->target > 1))) {
        snprintf(path, sizeof path, "services[%zu].autoscale", i);
        diag_error(d, as->at, path,
                   "inconsistent; expected min <= replicas <= max (and a utilisation target "
                   "of at most 1), got min %u, replicas %u, max %u, target %g",
                   (unsigned)as->min, (unsigned)sv->replicas, (unsigned)as->max, as->target);
    }
    if (sv->arrival == SCN_SVC_TRACE) {
        tracelive *live = arena_calloc(a, 1, sizeof *live);
        r->svc_live[i] = service_live(s, i, a, d, live) ? live : NULL;
    }
}

/* The trace's rules with their work factors and memory, and the fallback's factor. */
static void trace_rules(scenario_resolved *r, const scenario_spec *s, arena *a, diag *d)
{
    const scenario_trace *tr = &s->workload.trace;
    cluster_cfg cc;
    build_cluster_groups(a, s, &r->cat, &cc);
    char why[256];
    cluster *c = NULL;
    if (cluster_create(&cc, &c, why, sizeof why) != 0) {
        return; /* the run's cluster reports it (build_run) */
    }
    const gpu_type *traced = tr->traced_gpu ? gpu_catalog_find(&r->cat, tr->traced_gpu) : NULL;
    traceload_rule *rules = arena_calloc(a, tr->n_rules ? tr->n_rules : 1, sizeof *rules);
    for (size_t i = 0; i < tr->n_rules; i++) {
        const scenario_trace_rule *sr = &tr->rules[i];
        rules[i] = (traceload_rule){.name = sr->name,
                                    .queue = sr->queue,
                                    .user = sr->user,
                                    .klass = sr->klass,
                                    .gpu_type = sr->gpu_type,
                                    .gpus_min = sr->gpus_min,
                                    .gpus_max = sr->gpus_max,
                                    .class_name = sr->class_name,
                                    .profile = sr->profile,
                                    .resource = sr->resource};
        char path[96];
        snprintf(path, sizeof path, "workload.trace.map[%zu]", i);
        rule_work(r, s, c, traced, sr->resource ? sr->resource : tr->resource, sr->profile,
                  sr->profile ? sr->profile_at : sr->at, path, a, d, &rules[i]);
    }
    traceload_rule fallback = {0};
    rule_work(r, s, c, traced, tr->resource, NULL, tr->at, "workload.trace", a, d, &fallback);
    r->trules = rules;
    r->fallback_factor = fallback.work_factor;
    cluster_destroy(c);
}

int resolve_scenario(scenario_spec *s, arena *a, diag *d)
{
    int before = diag_error_count(d);
    s->resolved = NULL;
    scenario_resolved *r = arena_calloc(a, 1, sizeof *r);
    gpu_catalog loaded;
    if (catalog_load_default(a, &loaded, d) != 0 || physics_load_default(d, &r->phys) != 0 ||
        comm_load_default(d, &r->comm) != 0) {
        return SIM_EINPUT;
    }
    if (scenario_validate(s, &loaded, &r->phys, a, d) != 0) {
        return SIM_EINPUT;
    }
    scenario_catalog(s, &loaded, a, &r->cat); /* its calibrated types in place */
    r->classes = build_classes(s, &r->cat, &r->phys, &r->comm, a, d, &r->profiles,
                               &r->n_profiles);
    r->svc_prof = arena_calloc(a, s->n_services + 1, sizeof *r->svc_prof);
    r->svc_live = arena_calloc(a, s->n_services + 1, sizeof *r->svc_live);
    for (size_t i = 0; i < s->n_services; i++) {
        service(r, s, i, a, d);
    }
    r->net = build_ddp_net(s, &r->comm, d);
    r->group_topo = build_ddp_group_topologies(s, &r->cat, &r->comm, a, d);
    if (cfg_present(s->workload.trace.at) && diag_error_count(d) == before) {
        trace_rules(r, s, a, d);
    }
    if (diag_error_count(d) != before) {
        return SIM_EINPUT;
    }
    s->resolved = r;
    return 0;
}
