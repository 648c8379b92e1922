/* tools/run.c - scenario -> cluster, jobs, policy -> world run -> output files (see run.h). */
#include "tools/run.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "experiments/catalog_load.h"
#include "experiments/cfg.h"
#include "experiments/comm_load.h"
#include "experiments/physics_load.h"
#include "experiments/scenario.h"
#include "model/cluster/cluster.h"
#include "model/cluster/fault.h"
#include "model/cluster/reconf.h"
#include "model/cluster/service.h"
#include "model/cluster/jobrate.h"
#include "model/hw/mig.h"
#include "model/policy/policy.h"
#include "model/physics/predict.h"
#include "model/cluster/world.h"
#include "sim/arena.h"
#include "sim/err.h"
#include "sim/rng.h"
#include "sim/xalloc.h"
#include "tools/actlog.h"
#include "tools/estimate.h"
#include "tools/out.h"
#include "tools/out_metrics.h"
#include "tools/out_report.h"
#include "tools/progress.h"
#include "experiments/build.h"
#include "model/physics/tracework.h"
#include "experiments/build_ddp.h"
#include "tools/spill.h"
#include "workloads/synth.h"
#include "workloads/traceload.h"
#include "workloads/tracelive.h"

/* Everything one run holds; freed by run_fini. */
typedef struct run_ctx {
    arena *a;
    diag *d;
    scenario_spec *spec;
    gpu_catalog cat; /* the embedded catalog with the scenario's calibrated types */
    phys_params phys;
    comm_params comm;
    const comm_topo **node_topo; /* per node id (arena): its wiring, NULL = the GPU type's */
    uint32_t n_node_topo;
    jobrate_ctx rate;
    jobrate_profile *profiles; /* one per distinct profile name; arena */
    size_t n_profiles;
    cluster_cfg cc;
    param_set params;
    const policy_ops *pol;
    world *w;
    fault_injector *faults;           /* NULL when the scenario has no faults section */
    const jobrate_profile **svc_prof; /* per service: the model it serves */
    job_id *svc_first;                /* per service: its first replica job */
    job_id **svc_ids;                 /* per service: its replica jobs (spares last) */
    uint32_t *svc_pool;               /* per service: how many */
    service **svcs;                   /* per service, once the world exists */
    bool has_trace;                   /* workload.trace given */
    traceload_stats tstats;           /* what reading it did */
    uint64_t n_unplaceable;           /* traced jobs no node of the empty cluster could ever hold,
                                       * dropped */
    double *svc_batch_s;              /* per service: a batch of its largest size alone on its
                                       * partition, s (0: unknown), for the estimate */
    reconf *reconf;                   /* NULL without a repartition section */
    actlog act;                       /* device activity (metrics.om, report.html) */
    bool has_act;                     /* act recorded: one of those files is written, or a
                                       * sweep/plan point's figures are wanted */
    double energy_j;                  /* the GPUs' energy over [0, horizon] (has_act) */
    const traceload_rule *trules;     /* the trace's rules with their work factors (arena) */
    double fallback_factor;           /* work factor of jobs no rule maps */
    spill_store *spill;               /* where the world's ended jobs go (NULL: kept in memory) */
    spill_store *sspill;              /* where its full blocks of samples go (NULL: kept) */
    synth_stream *synth;              /* the synthetic jobs, generated as the run reaches them */
} run_ctx;

static void run_fini(run_ctx *r)
{
    if (r->has_act) {
        actlog_fini(&r->act);
    }
    reconf_destroy(r->reconf);
    for (size_t i = 0; r->svcs && i < r->spec->n_services; i++) {
        service_destroy(r->svcs[i]);
    }
    fault_injector_destroy(r->faults);
    world_destroy(r->w);
    spill_destroy(r->spill);       /* after the table that reads it */
    spill_destroy(r->sspill);
    synth_stream_destroy(r->synth); /* and the one it feeds */
    diag_destroy(r->d);
    arena_destroy(r->a);
}

/* The workload profile `name`, loaded once per run (experiments/build.h build_load_profile). */
static const jobrate_profile *load_profile(run_ctx *r, const char *name, src_loc at,
                                           const char *path)
{
    return build_load_profile(r->spec, &r->phys, r->profiles, &r->n_profiles, name, at, path,
                              r->a, r->d);
}

static bool partition_for(const cluster *c, const char *res, partition_cfg *part);

/* The time of a batch of service i's largest size alone on the first device of c advertising
 * its resource (seconds), for the estimate; 0 when unknown (build_services reports why). */
static double service_batch_s(const run_ctx *r, const cluster *c, size_t i)
{
    const scenario_service *sv = &r->spec->services[i];
    partition_cfg pc;
    if (!r->svc_prof[i] || !partition_for(c, sv->resource, &pc)) {
        return 0;
    }
    speed_result sr;
    predict_unit_estimate(r->svc_prof[i]->p, sv->batch, &pc, &r->phys, &sr);
    if (sr.outcome != SPEED_OK) {
        return 0;
    }
    return sr.unit_time_s * wl_units_per_iter(r->svc_prof[i]->p, sv->batch);
}

/* Every class's request must be satisfiable on the empty cluster: under FIFO one job that can
 * never start would block every later job forever. Also the services' batch times (for the
 * estimate), while the cluster exists. */
static void check_requests(run_ctx *r, const synth_class *cls)
{
    char why[256];
    cluster *c = NULL;
    if (cluster_create(&r->cc, &c, why, sizeof why) != 0) {
        diag_error(r->d, r->spec->cluster.at, "cluster", "%s", why);
        return;
    }
    r->svc_batch_s = arena_calloc(r->a, r->spec->n_services + 1, sizeof *r->svc_batch_s);
    for (size_t i = 0; i < r->spec->n_services; i++) {
        r->svc_batch_s[i] = service_batch_s(r, c, i);
    }
    for (size_t i = 0; i < r->spec->workload.n_jobs; i++) {
        const scenario_job_class *jc = &r->spec->workload.jobs[i];
        char path[128];
        snprintf(path, sizeof path, "workload.jobs[%zu].request", i);
        /* where its node_selector and tolerations admit it (its `nodes` groups were checked
         * at load) */
        job_pod pod = {.place = cls[i].place};
        if (!job_any_slice(&(job_spec){.req = cls[i].req}) &&
            !build_request_fits(c, &cls[i].req, &pod)) {
            char have[512];
            diag_error(r->d, jc->request.at, path,
                       "no node%s can hold it; expected at most the units one node advertises "
                       "(%s), got %" PRIu32 " x '%s'",
                       cls[i].place ? " its node_selector and tolerations admit" : "",
                       build_advertised(c, have, sizeof have), cls[i].req.per_worker,
                       jc->request.resource);
        }
    }
    cluster_destroy(c);
}

/* Each service's profile (loaded with the job classes' profiles). */
static void load_service_profiles(run_ctx *r)
{
    size_t n = r->spec->n_services;
    r->svc_prof = arena_calloc(r->a, n + 1, sizeof *r->svc_prof);
    r->svc_first = arena_calloc(r->a, n + 1, sizeof *r->svc_first);
    for (size_t i = 0; i < n; i++) {
        const scenario_service *sv = &r->spec->services[i];
        char path[64];
        snprintf(path, sizeof path, "services[%zu].profile", i);
        r->svc_prof[i] = load_profile(r, sv->profile, sv->profile_at, path);
    }
}

/* The replica pods, first in the job table (submitted at 0, running past the horizon), each
 * asking for one unit and the profile's memory at the service's largest batch. */
static void add_replicas(run_ctx *r, job_table *jobs)
{
    for (size_t i = 0; i < r->spec->n_services; i++) {
        const scenario_service *sv = &r->spec->services[i];
        const jobrate_profile *jp = r->svc_prof[i];
        job_spec js = {.class_name = sv->name,
                       .req = {sv->resource, 1, 1},
                       .submit = 0,
                       .work_s = 1e12, /* beyond any horizon: it serves until the end */
                       .mem_bytes = (uint64_t)ceil(wl_mem_footprint_bytes(jp->p, sv->batch)),
                       .profile = sv->profile};
        r->svc_first[i] = (job_id)job_table_count(jobs);
        for (uint32_t k = 0; k < sv->replicas; k++) {
            job_table_add(jobs, &js);
        }
    }
}

/* Spare replica pods of autoscaled services, after every other job, submitted only by the
 * autoscaler: a scale-up after a scale-down takes fresh pods, so a service gets max pods for every
 * stabilization window (or interval) of the horizon, at most EST_MAX_SPARES. Fills the replica id
 * lists. */
static void add_spares(run_ctx *r, job_table *jobs)
{
    size_t n = job_table_count(jobs);
    sim_time late = r->spec->horizon_ns;
    /* (without services the synthetic jobs stay ungenerated until the run reaches them) */
    if (r->spec->n_services > 0 && n > 0 && job_table_get(jobs, (job_id)(n - 1))->spec.submit > late) {
        late = job_table_get(jobs, (job_id)(n - 1))->spec.submit;
    }
    r->svc_ids = arena_calloc(r->a, r->spec->n_services + 1, sizeof *r->svc_ids);
    r->svc_pool = arena_calloc(r->a, r->spec->n_services + 1, sizeof *r->svc_pool);
    for (size_t i = 0; i < r->spec->n_services; i++) {
        const scenario_service *sv = &r->spec->services[i];
        const scenario_autoscale *as = &sv->autoscale;
        int64_t window =
            as->stabilization_ns > as->interval_ns ? as->stabilization_ns : as->interval_ns;
        double want =
            cfg_present(as->at) && window > 0
                ? (double)as->max * (1.0 + ceil((double)r->spec->horizon_ns / (double)window))
                : 0;
        uint32_t spares = want > EST_MAX_SPARES ? EST_MAX_SPARES : (uint32_t)want;
        uint32_t pool = sv->replicas + spares;
        job_id *ids = arena_calloc(r->a, pool, sizeof *ids);
        for (uint32_t k = 0; k < sv->replicas; k++) {
            ids[k] = r->svc_first[i] + k;
        }
        job_spec js = job_table_get(jobs, r->svc_first[i])->spec;
        js.submit = late + 1;
        for (uint32_t k = sv->replicas; k < pool; k++) {
            ids[k] = (job_id)job_table_count(jobs);
            job_table_add(jobs, &js);
        }
        r->svc_ids[i] = ids;
        r->svc_pool[i] = pool;
    }
}

/* Service i's arrivals from its trace's live instances (arrival: trace): the step function
 * into sp. false when the trace cannot be read or has no instance to count (reported). */
static bool load_service_steps(run_ctx *r, size_t i, service_spec *sp)
{
    const scenario_svc_trace *t = &r->spec->services[i].trace;
    FILE *f = fopen(t->file, "r");
    if (!f) {
        fprintf(stderr, "slicesim: %s: %s\n", t->file, strerror(errno));
        return false;
    }
    trace_src src = scenario_service_trace_source(r->spec, i);
    trace_reader *rd = NULL;
    tracelive live = {0};
    int rc = trace_open(&src, f, r->d, &rd);
    if (rc == 0) {
        rc = tracelive_read(rd, t->app, r->a, &live);
    }
    trace_close(rd);
    fclose(f);
    if (rc == SIM_EIO) {
        fprintf(stderr, "slicesim: %s: read error\n", t->file);
    }
    if (rc != 0) {
        return false;
    }
    if (live.n_records == 0) {
        char path[64];
        snprintf(path, sizeof path, "services[%zu].trace.app", i);
        diag_error(r->d, cfg_present(t->app_at) ? t->app_at : t->at, path,
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
static void build_services(run_ctx *r)
{
    const cluster *c = world_cluster(r->w);
    r->svcs = arena_calloc(r->a, r->spec->n_services + 1, sizeof *r->svcs);
    rng_root root = rng_root_make(r->spec->seed);
    for (size_t i = 0; i < r->spec->n_services; i++) {
        const scenario_service *sv = &r->spec->services[i];
        char path[64], have[512];
        res_id res;
        if (!cluster_resource_find(c, sv->resource, &res)) {
            snprintf(path, sizeof path, "services[%zu].resource", i);
            diag_error(r->d, sv->resource_at, path,
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
        predict_unit_estimate(r->svc_prof[i]->p, sv->batch, &pc, &r->phys, &sr);
        if (sr.outcome != SPEED_OK) {
            snprintf(path, sizeof path, "services[%zu].profile", i);
            diag_error(r->d, sv->profile_at, path,
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
            diag_error(r->d, as->at, path,
                       "inconsistent; expected min <= replicas <= max (and a utilisation target "
                       "of at most 1), got min %u, replicas %u, max %u, target %g",
                       (unsigned)as->min, (unsigned)sv->replicas, (unsigned)as->max, as->target);
            continue;
        }
        service_spec sp = {
            .name = sv->name,
            .index = i,
            .replica_ids = r->svc_ids[i],
            .n_replicas = r->svc_pool[i],
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
            .end = r->spec->horizon_ns,
            .max_batch = sv->batch,
            .slo_s = sim_time_to_s(sv->slo_ns),
            .profile = r->svc_prof[i]->p,
            .phys = &r->phys};
        if (sv->arrival == SCN_SVC_TRACE && !load_service_steps(r, i, &sp)) {
            if (diag_error_count(r->d) == 0) { /* an I/O error, printed: stop the run too */
                snprintf(path, sizeof path, "services[%zu].trace.file", i);
                diag_error(r->d, sv->trace.file_at, path,
                           "read error; expected a readable file, got '%s'", sv->trace.file);
            }
            continue;
        }
        r->svcs[i] = service_create(r->w, &sp, &root);
    }
}

/* Dynamic re-partitioning: the reconfiguration component and its layout policy. */
static void build_repartition(run_ctx *r)
{
    const scenario_repartition *rp = &r->spec->repartition;
    if (!cfg_present(rp->at) || !rp->enabled) {
        return;
    }
    static const char *const keys[] = {"min_gain", "hold_s", "max_concurrent", "evict"};
    double vals[] = {rp->min_gain, sim_time_to_s(rp->hold_ns), rp->max_concurrent, rp->evict};
    pol_param *items = arena_calloc(r->a, 4, sizeof *items);
    for (int i = 0; i < 4; i++) {
        char *v = arena_alloc(r->a, 32);
        snprintf(v, 32, "%.17g", vals[i]);
        items[i] = (pol_param){keys[i], v, rp->at, rp->at};
    }
    param_set ps = {.n = 4, .items = items, .path = "repartition", .at = rp->at};
    reconf_cfg rc = {.delay_s = sim_time_to_s(rp->delay_ns),
                     .reset_s = sim_time_to_s(rp->reset_ns),
                     .restart_s = sim_time_to_s(rp->timeslice.restart_ns),
                     .interval_s = sim_time_to_s(rp->interval_ns),
                     .policy = repart_find(rp->policy),
                     .params = &ps};
    SIM_ASSERT(rc.policy != NULL); /* the schema admits only registered names */
    if (reconf_create(r->w, &rc, r->d, &r->reconf) != 0) {
        r->reconf = NULL;
    }
}

/* The scenario's faults: the seeded process (unless `listed_only`: check draws none) and the
 * listed events, resolved on the built cluster (a listed node, GPU or instance that does not
 * exist is reported at its field). */
static void build_faults(run_ctx *r, bool listed_only)
{
    const scenario_faults *sf = &r->spec->faults;
    if (!cfg_present(sf->at)) {
        return;
    }
    const cluster *c = world_cluster(r->w);
    const scenario_fault_rate *rates[FAULT_N_KINDS] = {&sf->process.gpu, &sf->process.instance,
                                                       &sf->process.node, &sf->process.nvlink};
    fault_process p = {0};
    for (int k = 0; k < FAULT_N_KINDS; k++) {
        if (cfg_present(rates[k]->at)) {
            p.mtbf_s[k] = sim_time_to_s(rates[k]->mtbf_ns);
            p.repair_s[k] = sim_time_to_s(rates[k]->repair_ns);
        }
    }
    rng_root root = rng_root_make(r->spec->seed);
    fault_event *ev = NULL;
    size_t n = 0;
    if (!listed_only) {
        fault_generate(c, &p, &root, r->spec->horizon_ns, &ev, &n);
    }
    ev = xrealloc(ev, (n + sf->n_events + 1) * sizeof *ev, "fault events");
    for (size_t i = 0; i < sf->n_events; i++) {
        const scenario_fault_event *se = &sf->events[i];
        fault_kind k = FAULT_GPU;
        SIM_ASSERT(fault_kind_find(se->kind, &k)); /* the schema admits only these names */
        char why[256], path[64];
        if (!fault_resolve(c, k, se->node, se->gpu, se->instance, &ev[n], why, sizeof why)) {
            snprintf(path, sizeof path, "faults.events[%zu].node", i);
            diag_error(r->d, se->node_at, path,
                       "%s; expected a node, GPU and instance of the cluster, got '%s/%u/%u'", why,
                       se->node, (unsigned)se->gpu, (unsigned)se->instance);
            continue;
        }
        ev[n].at = se->at_ns;
        ev[n].repair_ns = se->repair_ns;
        n++;
    }
    r->faults = fault_injector_create(r->w, ev, n);
    free(ev);
}

/* The files a run may own in its output directory: run_info.json and every output name. */
static const char *owned_name(unsigned i)
{
    return i == SCN_OUT_COUNT ? "run_info.json" : scenario_output_name(i);
}

/* Whether owned file i is written under the output bits `files`. */
static bool owned_written(unsigned i, unsigned files)
{
    return i == SCN_OUT_COUNT ? (files & SCN_OUT_RUN_JSON) != 0 : (files & (1u << i)) != 0;
}

/* The owned files present in dir, comma-separated into buf; false when none. */
static bool earlier_outputs(const char *dir, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i <= SCN_OUT_COUNT; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, owned_name(i));
        if (access(path, F_OK) == 0 && used < n) {
            int k = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", owned_name(i));
            used += k > 0 ? (size_t)k : 0;
        }
    }
    return used > 0;
}

/* After a --force run: remove the owned files of an earlier run that this one did not write, so
 * that the directory holds one run's outputs only. */
static int remove_stale_outputs(const char *dir, unsigned files)
{
    for (unsigned i = 0; i <= SCN_OUT_COUNT; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, owned_name(i));
        if (!owned_written(i, files) && remove(path) != 0 && errno != ENOENT) {
            fprintf(stderr, "slicesim: %s: cannot remove an earlier run's file: %s\n", path,
                    strerror(errno));
            return SIM_EIO;
        }
    }
    return 0;
}

/* ---- traced workload ------------------------------------------------------------------------ */

/* The partition a device advertising `res` is (first such device of the empty cluster). */
static bool partition_for(const cluster *c, const char *res, partition_cfg *part)
{
    res_id want;
    if (!cluster_resource_find(c, res, &want)) {
        return false;
    }
    for (dev_id d = 0; d < cluster_n_devices(c); d++) {
        const cluster_device *cd = cluster_device_get(c, d);
        if (cd->resource == want) {
            partition_cfg_init(part, cluster_gpu_get(c, cd->gpu)->type);
            part->mig = cd->profile;
            return true;
        }
    }
    return false;
}

/* Work factor (model/physics/tracework.h) and device memory of jobs asking for `res` with profile `prof`
 * (NULL: GPU-bound); problems reported at `at`. */
static void rule_work(run_ctx *r, const cluster *c, const gpu_type *traced, const char *res,
                      const char *prof, src_loc at, const char *path, traceload_rule *out)
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
    } else if (!partition_for(c, res, &part)) {
        return; /* scenario_validate reported a resource no node advertises */
    }
    char ppath[160];
    snprintf(ppath, sizeof ppath, "%s.profile", path);
    const jobrate_profile *jp = prof ? load_profile(r, prof, at, ppath) : NULL;
    if (prof && !jp) {
        return;
    }
    char why[256];
    if (tracework_factor(jp ? jp->p : NULL, jp ? jp->batch : 1, traced, &part, &r->phys,
                         &out->work_factor, why, sizeof why) != 0) {
        diag_error(r->d, at, prof ? ppath : path,
                   "cannot carry traced durations to %s (%s); expected a profile that runs on "
                   "the traced GPU and on the partition, got '%s'",
                   res, why, prof ? prof : "gpu-bound");
    }
    if (jp) {
        out->mem_bytes = (uint64_t)ceil(wl_mem_footprint_bytes(jp->p, jp->batch));
    }
}

/* Memory of the largest GPU of c that takes fractional shares (cluster_device.shareable); 0 when
 * none does. */
static uint64_t largest_share_gpu_mem(const cluster *c)
{
    uint64_t best = 0;
    for (dev_id d = 0; d < cluster_n_devices(c); d++) {
        const cluster_device *dv = cluster_device_get(c, d);
        best = dv->shareable && dv->mem_bytes > best ? dv->mem_bytes : best;
    }
    return best;
}

/* Read the scenario's trace into t (chronological). Returns 0, SIM_EINPUT (reported), SIM_EIO. */
static int load_trace(run_ctx *r, const cluster *c, job_table *t)
{
    const scenario_trace *tr = &r->spec->workload.trace;
    const gpu_type *traced = tr->traced_gpu ? gpu_catalog_find(&r->cat, tr->traced_gpu) : NULL;
    traceload_rule *rules = arena_calloc(r->a, tr->n_rules ? tr->n_rules : 1, sizeof *rules);
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
        rule_work(r, c, traced, sr->resource ? sr->resource : tr->resource, sr->profile,
                  sr->profile ? sr->profile_at : sr->at, path, &rules[i]);
    }
    traceload_rule fallback = {0};
    rule_work(r, c, traced, tr->resource, NULL, tr->at, "workload.trace", &fallback);
    r->trules = rules;
    r->fallback_factor = fallback.work_factor;
    if (diag_error_count(r->d) > 0) {
        return SIM_EINPUT;
    }
    traceload_opts opts = {
        .arrival_only = tr->mode == SCN_TRACE_ARRIVAL_ONLY,
        .start_s = sim_time_to_s(tr->start_ns),
        .length_s = sim_time_to_s(tr->length_ns),
        .limit = tr->limit,
        .resource = tr->resource,
        .default_class = trace_format_name((trace_format)tr->format),
        .max_per_worker = tr->max_per_worker,
        .keep_cpu_pods = tr->cpu_pods,
        .fallback_factor = fallback.work_factor,
        .n_rules = tr->n_rules,
        .rules = rules,
        .shuffle = tr->shuffle,
        .inflate = tr->inflate,
        .capacity_milli = MILLI_PER_GPU * (uint64_t)cluster_n_gpus(c),
        .share_mem_bytes = largest_share_gpu_mem(c),
        .interval_s = sim_time_to_s(tr->interval_ns),
        .seed = r->spec->seed,
    };
    FILE *f = fopen(tr->file, "r");
    if (!f) {
        fprintf(stderr, "slicesim: %s: %s\n", tr->file, strerror(errno));
        return SIM_EIO;
    }
    trace_src src = scenario_trace_source(r->spec);
    trace_reader *rd = NULL;
    int rc = trace_open(&src, f, r->d, &rd);
    if (rc == 0) {
        rc = traceload_jobs(rd, &opts, r->a, r->d, t, &r->tstats);
    }
    trace_close(rd);
    fclose(f);
    if (rc == SIM_EIO) {
        fprintf(stderr, "slicesim: %s: read error\n", tr->file);
    }
    return rc;
}

/* Jobs the scenario's trace will give, for the estimate (tools/estimate.h): its records counted
 * by one streaming pass (errors are left to load_trace), times the inflation of an arrival-only
 * replay. 0 when the file cannot be read. */
static double trace_jobs_estimate(const run_ctx *r)
{
    const scenario_trace *tr = &r->spec->workload.trace;
    FILE *f = fopen(tr->file, "r");
    if (!f) {
        return 0;
    }
    diag *scratch = diag_create();
    trace_src src = scenario_trace_source(r->spec);
    trace_reader *rd = NULL;
    trace_record rec;
    double *at = NULL, first = HUGE_VAL; /* submissions, for the window (rows may be unsorted) */
    size_t n_at = 0, cap = 0;
    if (trace_open(&src, f, scratch, &rd) == 0) {
        int rc;
        while ((rc = trace_next(rd, &rec)) != 0 && rc != SIM_EIO) {
            if (rc == 1 && (rec.gpus > 0 || tr->cpu_pods)) {
                if (n_at == cap) {
                    cap = cap ? 2 * cap : 1024;
                    at = xrealloc(at, cap * sizeof *at, "trace estimate");
                }
                at[n_at++] = rec.submit_s;
                first = rec.submit_s >= 0 && rec.submit_s < first ? rec.submit_s : first;
            }
        }
    }
    trace_close(rd);
    fclose(f);
    diag_destroy(scratch);
    double n = 0, lo = (isfinite(first) ? first : 0) + sim_time_to_s(tr->start_ns);
    double hi = tr->length_ns > 0 ? lo + sim_time_to_s(tr->length_ns) : HUGE_VAL;
    for (size_t i = 0; i < n_at; i++) { /* no submission column (-1): the window's start */
        double s = at[i] >= 0 ? at[i] : lo;
        n += tr->mode == SCN_TRACE_ARRIVAL_ONLY || (s >= lo && s < hi);
    }
    free(at);
    if (tr->mode == SCN_TRACE_ARRIVAL_ONLY && tr->inflate > 1) {
        n *= tr->inflate;
    }
    return tr->limit > 0 && n > (double)tr->limit ? (double)tr->limit : n;
}

/* Can the empty cluster ever hold job s? A CPU-only pod (per_worker 0) needs one node with its
 * CPU and memory (capacity 0 = not modelled); others, the units on GPUs its gpu_spec allows
 * (build_request_fits): an openb pod asking for a GPU model no node has is never placeable. */
static bool fits_somewhere(const cluster *c, const job_spec *s)
{
    if (job_any_slice(s)) {
        return true; /* the layout policy finds it a slice (scenario_check_any_slice) */
    }
    if (s->req.per_worker > 0) {
        return build_request_fits(c, &s->req, &s->pod);
    }
    for (node_id n = 0; n < cluster_n_nodes(c); n++) {
        uint64_t cpu = cluster_node_cpu_capacity(c, n), mem = cluster_node_mem_capacity(c, n);
        if ((cpu == 0 || s->pod.cpu_milli <= cpu) && (mem == 0 || s->pod.host_mem_bytes <= mem)) {
            return true;
        }
    }
    return false;
}

/* Merge the chronological tables a (synthetic) and b (traced) into out, in submission order
 * (ties: a first). Traced jobs no node of the empty cluster can ever hold are dropped and
 * counted: under FIFO one of them would block every later job forever. */
static void merge_jobs(run_ctx *r, const cluster *c, const job_table *a, const job_table *b,
                       job_table *out)
{
    size_t i = 0, j = 0, na = job_table_count(a), nb = job_table_count(b);
    while (i < na || j < nb) {
        const job *x = i < na ? job_table_get(a, (job_id)i) : NULL;
        const job *y = j < nb ? job_table_get(b, (job_id)j) : NULL;
        if (x && (!y || x->spec.submit <= y->spec.submit)) {
            job_table_add(out, &x->spec);
            i++;
        } else {
            if (fits_somewhere(c, &y->spec)) {
                job_table_add(out, &y->spec);
            } else {
                r->n_unplaceable++;
            }
            j++;
        }
    }
}

/* run.json's "trace" section: what was read and how durations became work. */
static cJSON *trace_json(const run_ctx *r)
{
    const traceload_stats *st = &r->tstats;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "rows", out_json_number((double)st->rows));
    cJSON_AddItemToObject(o, "jobs", out_json_number((double)(st->jobs - r->n_unplaceable)));
    cJSON_AddItemToObject(o, "cpu_only_skipped", out_json_number((double)st->cpu_only));
    cJSON_AddItemToObject(o, "cpu_only_jobs", out_json_number((double)st->cpu_jobs));
    cJSON_AddItemToObject(o, "outside_window", out_json_number((double)st->outside));
    cJSON_AddItemToObject(o, "unplaceable_dropped", out_json_number((double)r->n_unplaceable));
    cJSON_AddItemToObject(o, "open_ended", out_json_number((double)st->open));
    cJSON_AddItemToObject(o, "gpu_bound_fallback", out_json_number((double)st->fallback));
    cJSON_AddItemToObject(o, "inflated", out_json_number((double)st->inflated));
    cJSON_AddItemToObject(o, "removed", out_json_number((double)st->removed));
    cJSON_AddItemToObject(o, "milli_gpu_total", out_json_number((double)st->milli_total));
    cJSON_AddItemToObject(o, "first_submit_s", out_json_number(st->first_submit_s));
    /* work-seconds per traced second of each rule, and of the jobs no rule maps */
    cJSON *wf = cJSON_AddArrayToObject(o, "work_factors");
    const scenario_trace *tr = &r->spec->workload.trace;
    for (size_t i = 0; i <= tr->n_rules; i++) {
        cJSON *e = cJSON_CreateObject();
        const traceload_rule *ru = i < tr->n_rules ? &r->trules[i] : NULL;
        char name[32];
        snprintf(name, sizeof name, ru ? "map[%zu]" : "unmapped", i);
        cJSON_AddStringToObject(e, "rule", name);
        cJSON_AddStringToObject(e, "request", ru && ru->resource ? ru->resource : tr->resource);
        if (ru && ru->profile) {
            cJSON_AddStringToObject(e, "profile", ru->profile);
        } else {
            cJSON_AddStringToObject(e, "profile", "gpu-bound");
        }
        cJSON_AddItemToObject(e, "work_factor",
                              out_json_number(ru ? ru->work_factor : r->fallback_factor));
        cJSON_AddItemToArray(wf, e);
    }
    cJSON *stand = cJSON_AddArrayToObject(o, "gpu_stand_ins");
    const scenario_cluster_trace *ct = &r->spec->cluster.trace;
    for (size_t i = 0; i < ct->n_map; i++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "model", ct->map[i].model);
        cJSON_AddStringToObject(m, "gpu", ct->map[i].gpu);
        cJSON_AddItemToArray(stand, m);
    }
    return o;
}

/* Where write_outputs writes: a stage in the output directory, or (st NULL) memory streams that
 * are dropped once written (run_opts.outputs_in_memory). */
typedef struct out_sink {
    out_stage *st;
    FILE *mem[SCN_OUT_COUNT + 1];
    char *buf[SCN_OUT_COUNT + 1];
    size_t len[SCN_OUT_COUNT + 1];
    int n;
} out_sink;

static FILE *sink_open(out_sink *k, const char *name)
{
    if (k->st) {
        return out_stage_open(k->st, name);
    }
    SIM_ASSERT(k->n < SCN_OUT_COUNT + 1);
    k->mem[k->n] = open_memstream(&k->buf[k->n], &k->len[k->n]);
    return k->mem[k->n++];
}

/* Close and free the memory streams; SIM_EIO when one failed. */
static int sink_drop(out_sink *k)
{
    int rc = 0;
    for (int i = 0; i < k->n; i++) {
        rc = k->mem[i] && fclose(k->mem[i]) == 0 ? rc : SIM_EIO;
        free(k->buf[i]);
    }
    return rc;
}

/* The process's CPU time so far (user + system), in seconds. */
static double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int write_outputs(run_ctx *r, const run_opts *o, const char *dir)
{
    unsigned files = r->spec->outputs.files;
    out_sink sink = {0};
    out_stage *st = NULL;
    if (!o->outputs_in_memory) {
        st = sink.st = out_stage_begin(dir);
        if (!st) {
            return SIM_EIO;
        }
    }
    int rc = 0;
    if (files & SCN_OUT_RUN_JSON) {
        cJSON *cfg = out_config_json(r->spec);
        cJSON *trace = r->has_trace ? trace_json(r) : NULL;
        out_run_meta meta = {
            .seed = r->spec->seed, .config = cfg, .policy = r->pol->name, .trace = trace};
        cJSON *extra = cJSON_CreateObject();
        if (r->spec->n_services > 0) {
            cJSON *arr = cJSON_AddArrayToObject(extra, "services");
            for (size_t i = 0; i < r->spec->n_services; i++) {
                service_stats ss = service_get_stats(r->svcs[i]);
                cJSON_AddItemToArray(arr, out_service_json(&r->spec->services[i], &ss));
            }
        }
        if (r->reconf) {
            reconf_stats rs = reconf_get_stats(r->reconf);
            cJSON_AddItemToObject(extra, "repartition", out_repart_json(&rs));
        }
        if (r->faults) {
            cJSON_AddItemToObject(extra, "faults",
                                  out_faults_json(fault_injector_stats(r->faults),
                                                  sim_time_to_s(r->spec->faults.checkpoint_ns)));
        }
        if (r->has_act) {
            double util = 0, sm = 0;
            actlog_means(&r->act, world_cluster(r->w), world_get_totals(r->w).horizon, &util,
                         &sm);
            cJSON *act = cJSON_AddObjectToObject(extra, "activity");
            cJSON_AddNumberToObject(act, "gpu_util_mean", util);
            cJSON_AddNumberToObject(act, "sm_active_mean", sm);
            cJSON_AddNumberToObject(act, "power_mean_w", out_power_mean_w(r->w, r->energy_j));
            cJSON_AddNumberToObject(act, "energy_kwh", r->energy_j / 3.6e6);
        }
        meta.metrics_extra = extra;
        FILE *f = sink_open(&sink, "run.json");
        rc = f ? out_run_json_write(f, r->w, &meta) : SIM_EIO;
        cJSON_Delete(extra);
        cJSON_Delete(trace);
        cJSON_Delete(cfg);
        cJSON *info =
            out_run_info(r->spec->seed, o->scenario, o->command_line ? o->command_line : "");
        f = rc ? NULL : sink_open(&sink, "run_info.json");
        rc = rc ? rc : f ? out_write_json(f, info) : SIM_EIO;
        cJSON_Delete(info);
    }
    if (rc == 0 && (files & SCN_OUT_JOBS_CSV)) {
        FILE *f = sink_open(&sink, "jobs.csv");
        rc = f ? out_jobs_csv(f, r->w) : SIM_EIO;
    }
    if (rc == 0 && (files & SCN_OUT_TIMESERIES_CSV)) {
        FILE *f = sink_open(&sink, "timeseries.csv");
        rc = f ? out_timeseries_csv(f, r->w, r->spec->outputs.sample_interval_ns) : SIM_EIO;
    }
    if (rc == 0 && (files & SCN_OUT_METRICS_OM)) {
        FILE *f = sink_open(&sink, "metrics.om");
        rc = f ? out_metrics_om(f, r->w, &r->phys, &r->act, r->spec->outputs.sample_interval_ns,
                                r->spec->outputs.start_unix_ns)
               : SIM_EIO;
    }
    if (rc == 0 && (files & SCN_OUT_REPORT_HTML)) {
        FILE *f = sink_open(&sink, "report.html");
        rc = f ? out_report_html(f, r->w, &r->act, r->energy_j, r->spec, r->pol->name) : SIM_EIO;
    }
    if (!st) {
        int drop = sink_drop(&sink);
        return rc ? rc : drop;
    }
    if (rc != 0) {
        out_stage_abort(st);
        return rc;
    }
    rc = out_stage_commit(st);
    return rc == 0 ? remove_stale_outputs(dir, files) : rc;
}

int run_scenario(const run_opts *o)
{
    run_ctx r = {.a = arena_create(), .d = diag_create()};
    FILE *err = o->errors ? o->errors : stderr;
    int rc = o->text ? scenario_load_buffer_edit(o->scenario, o->text_dir, o->text, o->text_len,
                                                 o->sets, o->n_sets, o->edit, 0, r.a, r.d,
                                                 &r.spec)
                     : scenario_load_file_edit(o->scenario, o->sets, o->n_sets, o->edit, 0, r.a,
                                               r.d, &r.spec);
    if (rc == SIM_ENOENT || rc == SIM_EIO) {
        fprintf(err, "slicesim %s: error: cannot read '%s': %s\n", o->check_only ? "check" : "run",
                o->scenario, strerror(errno));
        run_fini(&r);
        return rc;
    }
    gpu_catalog loaded;
    if (rc == 0 &&
        (catalog_load_default(r.a, &loaded, r.d) != 0 || physics_load_default(r.d, &r.phys) != 0 ||
         comm_load_default(r.d, &r.comm) != 0)) {
        rc = SIM_EINPUT;
    }
    if (rc == 0) {
        scenario_catalog(r.spec, &loaded, r.a, &r.cat); /* its calibrated types in place */
    }
    synth_class *cls = NULL;
    const comm_net *net = NULL;
    run_estimate est;
    double n_traced = 0;
    if (rc == 0 && diag_error_count(r.d) == 0) { /* before the cluster is built */
        n_traced = cfg_present(r.spec->workload.trace.at) ? trace_jobs_estimate(&r) : 0;
        est_scenario(r.spec, &r.cat, n_traced, NULL, &est);
        est_check_limits(r.spec, &est, r.d);
    }
    if (rc == 0 && diag_error_count(r.d) == 0) {
        if (o->has_seed) {
            r.spec->seed = o->seed;
        }
        build_cluster(r.a, r.d, r.spec, &r.cat, &r.cc);
        r.pol = build_policy(r.spec, r.a, &r.params);
        cls = build_classes(r.spec, &r.cat, &r.phys, &r.comm, r.a, r.d, &r.profiles,
                            &r.n_profiles);
        load_service_profiles(&r);
        net = build_ddp_net(r.spec, &r.comm, r.d);
        r.node_topo = build_ddp_topologies(r.spec, &r.cat, &r.comm, r.a, r.d, &r.n_node_topo);
        if (diag_error_count(r.d) == 0) {
            check_requests(&r, cls);
        }
    }
    if (rc == 0 && diag_error_count(r.d) == 0) { /* with the services' capacities */
        est_scenario(r.spec, &r.cat, n_traced, r.svc_batch_s, &est);
        est_check_limits(r.spec, &est, r.d);
        if (o->estimate) {
            *o->estimate = est;
        }
    }
    if (rc == 0 && diag_error_count(r.d) == 0) {
        job_table *jobs = job_table_create();
        rng_root root = rng_root_make(r.spec->seed);
        add_replicas(&r, jobs); /* at t = 0: before every generated job */
        if (!o->check_only) { /* check runs nothing: the jobs are counted, not generated */
            size_t n_synth;
            r.synth = synth_stream_create(cls, r.spec->workload.n_jobs, &root,
                                          r.spec->horizon_ns, &n_synth);
            job_table_set_source(jobs, n_synth, synth_stream_next, r.synth);
        }
        r.has_trace = cfg_present(r.spec->workload.trace.at);
        if (r.has_trace) {
            char why[256];
            cluster *c = NULL;
            job_table *traced = job_table_create();
            rc = cluster_create(&r.cc, &c, why, sizeof why);
            if (rc != 0) {
                diag_error(r.d, r.spec->cluster.at, "cluster", "%s", why);
            } else {
                rc = load_trace(&r, c, traced);
            }
            if (rc == 0) {
                job_table *all = job_table_create();
                merge_jobs(&r, c, jobs, traced, all);
                job_table_destroy(jobs);
                jobs = all;
            }
            job_table_destroy(traced);
            cluster_destroy(c);
            if (rc == SIM_EIO) {
                job_table_destroy(jobs);
                run_fini(&r);
                return rc;
            }
        }
        r.rate = (jobrate_ctx){.phys = &r.phys,
                               .comm = &r.comm,
                               .nic_bytes_per_s = net ? net->line_bytes_per_s : 0,
                               .nics = net ? net->nics : 1,
                               .node_topo = r.node_topo,
                               .n_node_topo = r.n_node_topo,
                               .ts_class = 0,
                               .n_profiles = r.n_profiles,
                               .profiles = r.profiles};
        add_spares(&r, jobs); /* after every other job: submitted only by the autoscaler */
        r.spill = o->check_only ? NULL : spill_create();
        if (r.spill) {
            job_table_set_spill(jobs, spill_ops(), r.spill);
        }
        world_cfg wc = {.cluster = &r.cc,
                        .policy = r.pol,
                        .params = &r.params,
                        .rate = jobrate_rate,
                        .rate_ctx = &r.rate,
                        .slice_speed = jobrate_slice_speed,
                        .slice_ctx = &r.rate,
                        .until = r.spec->horizon_ns,
                        .seed = r.spec->seed,
                        .verify_every = o->verify_every,
                        .checkpoint_s = sim_time_to_s(r.spec->faults.checkpoint_ns)};
        rc = world_create(&wc, jobs, r.d, r.spec->cluster.at, &r.w);
        r.sspill = rc == 0 && !o->check_only ? spill_create() : NULL;
        if (r.sspill) {
            world_set_sample_spill(r.w, spill_ops(), r.sspill);
        }
        if (rc == 0) {
            build_faults(&r, o->check_only);
            build_services(&r);
            build_repartition(&r);
        }
    }
    if (rc != 0 || diag_error_count(r.d) > 0) {
        diag_print(r.d, err);
        run_fini(&r);
        return SIM_EINPUT;
    }
    const char *dir = o->out_dir ? o->out_dir : r.spec->outputs.dir;
    if (o->dir_used) {
        snprintf(o->dir_used, o->dir_used_len, "%s", dir);
    }
    if (o->on_spec) {
        o->on_spec(o->on_spec_ctx, r.spec);
    }
    out_lock *lock = NULL;
    if (!o->check_only && !o->dir_locked && !o->outputs_in_memory &&
        out_lock_take(dir, "run", &lock) != 0) {
        run_fini(&r);
        return SIM_EIO;
    }
    char earlier[256];
    if (!o->check_only && !o->force && !o->outputs_in_memory &&
        earlier_outputs(dir, earlier, sizeof earlier)) {
        fprintf(err,
                "slicesim run: error: output directory '%s' holds an earlier run's files (%s); "
                "expected a new or empty directory, or --force to replace them\n",
                dir, earlier);
        out_lock_release(lock, false);
        run_fini(&r);
        return SIM_EINPUT;
    }
    world_totals tot = world_get_totals(r.w);
    if (tot.n_gpus_no_sms) {
        fprintf(err,
                "slicesim %s: warning: the catalog has no sourced SM count for %s (model/hw/gpus.yaml "
                "lists sms_total as unsourced): SM utilisation is reported as n/a\n",
                o->check_only ? "check" : "run", tot.no_sms_type);
    }
    if (o->check_only) {
        if (o->summary) {
            fprintf(o->summary, "%s: ok (%llu nodes, %llu GPUs, %zu job classes)\n", o->scenario,
                    (unsigned long long)scenario_node_count(r.spec),
                    (unsigned long long)scenario_gpu_count(r.spec), r.spec->workload.n_jobs);
            est_print(o->summary, &est);
        }
        run_fini(&r);
        return 0;
    }
    progress *pg = progress_create(err, false);
    world_set_progress(r.w, PROGRESS_EVERY_EVENTS, progress_observe, pg);
    if ((r.spec->outputs.files & (SCN_OUT_METRICS_OM | SCN_OUT_REPORT_HTML | SCN_OUT_RUN_JSON)) ||
        o->result) {
        actlog_init(&r.act, r.w, &r.rate);
        r.has_act = true;
    }
    world_set_max_events(r.w, o->max_events);
    world_run(r.w);
    if (r.has_act) {
        actlog_finish(&r.act);
        r.energy_j = out_energy_j(r.w, &r.phys, &r.act);
    }
    progress_note(pg, "writing outputs");
    double out_cpu0 = process_cpu_s();
    rc = write_outputs(&r, o, dir);
    if (o->stats) {
        *o->stats = (run_stats){.n_jobs = job_table_count(world_jobs(r.w)),
                                .n_events = world_get_totals(r.w).n_events,
                                .out_cpu_s = process_cpu_s() - out_cpu0,
                                .n_spilled = job_table_n_spilled(world_jobs(r.w))};
    }
    out_lock_release(lock, rc != 0);
    progress_destroy(pg);
    if (rc == 0 && o->summary) {
        if (r.has_trace) {
            const traceload_stats *st = &r.tstats;
            fprintf(o->summary,
                    "trace: %" PRIu64 " rows -> %" PRIu64 " jobs (%" PRIu64 " CPU-only, %" PRIu64
                    " CPU-only skipped, %" PRIu64 " outside the window, %" PRIu64
                    " never placeable, %" PRIu64 " open-ended, %" PRIu64 " GPU-bound fallback",
                    st->rows, st->jobs - r.n_unplaceable, st->cpu_jobs, st->cpu_only,
                    st->outside, r.n_unplaceable, st->open, st->fallback);
            if (r.spec->workload.trace.mode == SCN_TRACE_ARRIVAL_ONLY) {
                fprintf(
                    o->summary,
                    ", %" PRIu64 " clones, %" PRIu64 " removed, %.4f of %" PRIu32 " GPUs asked for",
                    st->inflated, st->removed,
                    (double)st->milli_total / ((double)MILLI_PER_GPU * (double)cluster_n_gpus(world_cluster(r.w))),
                    cluster_n_gpus(world_cluster(r.w)));
            }
            fprintf(o->summary, ")\n");
        }
        out_summary(o->summary, r.w, dir);
        if (r.faults) {
            out_faults_summary(o->summary, fault_injector_stats(r.faults));
        }
        for (size_t i = 0; i < r.spec->n_services; i++) {
            service_stats ss = service_get_stats(r.svcs[i]);
            out_service_summary(o->summary, &r.spec->services[i], &ss);
        }
        if (r.reconf) {
            reconf_stats rs = reconf_get_stats(r.reconf);
            out_repart_summary(o->summary, &rs);
        }
    }
    if (rc == 0 && o->result) {
        runstats_compute(r.w, o->result);
        o->result->v[RS_ENERGY_KWH] = r.energy_j / 3.6e6;
        o->result->has[RS_ENERGY_KWH] = true;
        for (size_t i = 0; i < r.spec->n_services; i++) { /* the worst service */
            service_stats ss = service_get_stats(r.svcs[i]);
            runstats *rs = o->result;
            bool first = i == 0;
            rs->v[RS_SVC_P95] =
                first || ss.p95_s > rs->v[RS_SVC_P95] ? ss.p95_s : rs->v[RS_SVC_P95];
            rs->v[RS_SVC_P99] =
                first || ss.p99_s > rs->v[RS_SVC_P99] ? ss.p99_s : rs->v[RS_SVC_P99];
            rs->v[RS_SVC_ATTAINMENT] = first || ss.attainment < rs->v[RS_SVC_ATTAINMENT]
                                           ? ss.attainment
                                           : rs->v[RS_SVC_ATTAINMENT];
            rs->has[RS_SVC_P95] = rs->has[RS_SVC_P99] = rs->has[RS_SVC_ATTAINMENT] = true;
        }
    }
    run_fini(&r);
    return rc;
}
