/* tools/out_config.c - the resolved scenario as JSON, for run.json's "config" (see out.h).
 * Written from the validated spec, so every default the loader filled in appears, in the
 * scenario's own key order, with units converted (s, 1/s, bytes). */
#include "experiments/cfg.h"
#include "sim/simtime.h"
#include "tools/out.h"

static void add_s(cJSON *o, const char *k, int64_t ns)
{
    cJSON_AddItemToObject(o, k, out_json_number(sim_time_to_s(ns)));
}

static void add_n(cJSON *o, const char *k, double v)
{
    cJSON_AddItemToObject(o, k, out_json_number(v));
}

static void add_str(cJSON *o, const char *k, const char *v)
{
    if (v) {
        cJSON_AddStringToObject(o, k, v);
    } else {
        cJSON_AddNullToObject(o, k);
    }
}

static cJSON *sharing_json(const scenario_sharing *sh)
{
    static const char *const modes[] = {"exclusive", "timeslice", "mps"};
    cJSON *o = cJSON_CreateObject();
    if (sh->is_mig) {
        cJSON *m = cJSON_AddObjectToObject(o, "mig");
        add_str(m, "file", sh->mig.file);
        add_str(m, "config", sh->mig.config);
        add_str(m, "strategy", sh->mig.strategy == SCN_MIG_SINGLE ? "single" : "mixed");
    } else {
        cJSON_AddNullToObject(o, "mig");
    }
    add_str(o, "mode", sh->mode >= 0 && sh->mode <= 2 ? modes[sh->mode] : "exclusive");
    add_str(o, "sharing_file", sh->sharing_file);
    cJSON_AddBoolToObject(o, "rename_by_default", sh->rename_by_default);
    cJSON_AddBoolToObject(o, "fail_requests_greater_than_one", sh->fail_requests_greater_than_one);
    cJSON *rules = cJSON_AddArrayToObject(o, "rules");
    for (size_t i = 0; i < sh->n_rules; i++) {
        cJSON *r = cJSON_CreateObject();
        add_str(r, "resource", sh->rules[i].resource);
        add_n(r, "replicas", sh->rules[i].replicas);
        cJSON_AddItemToArray(rules, r);
    }
    return o;
}

static cJSON *service_json(const scenario_service *v)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "name", v->name);
    add_n(o, "replicas", v->replicas);
    add_str(o, "resource", v->resource);
    add_str(o, "profile", v->profile);
    add_str(o, "arrival",
            v->arrival == SCN_SVC_TRACE     ? "trace"
            : v->arrival == SCN_SVC_DIURNAL ? "diurnal"
                                            : "poisson");
    add_n(o, "rate_per_s", v->rate_per_s);
    add_n(o, "amplitude", v->amplitude);
    add_s(o, "period_s", v->period_ns);
    add_s(o, "peak_s", v->peak_ns);
    add_n(o, "batch", v->batch);
    add_s(o, "slo_s", v->slo_ns);
    if (cfg_present(v->trace.at)) {
        cJSON *tj = cJSON_AddObjectToObject(o, "trace");
        add_str(tj, "format", v->trace.format);
        add_str(tj, "file", v->trace.file);
        if (v->trace.app) {
            add_str(tj, "app", v->trace.app);
        }
        add_str(tj, "spacing", v->trace.spacing == SCN_SPACING_EVEN ? "even" : "poisson");
    }
    if (cfg_present(v->autoscale.at)) {
        const scenario_autoscale *a = &v->autoscale;
        cJSON *aj = cJSON_AddObjectToObject(o, "autoscale");
        add_str(aj, "metric", a->metric == SCN_SCALE_QUEUE ? "queue" : "utilisation");
        add_n(aj, "target", a->target);
        add_n(aj, "min", a->min);
        add_n(aj, "max", a->max);
        add_s(aj, "interval_s", a->interval_ns);
        add_s(aj, "stabilization_s", a->stabilization_ns);
    }
    return o;
}

static cJSON *duration_json(const scenario_duration *d)
{
    cJSON *o = cJSON_CreateObject();
    switch (d->dist) {
    case SCN_DUR_EXPONENTIAL:
        add_str(o, "dist", "exponential");
        add_s(o, "mean_s", d->mean_ns);
        break;
    case SCN_DUR_LOGNORMAL:
        add_str(o, "dist", "lognormal");
        add_s(o, "median_s", d->median_ns);
        add_n(o, "sigma", d->sigma);
        break;
    default:
        add_str(o, "dist", "fixed");
        add_s(o, "value_s", d->value_ns);
        break;
    }
    return o;
}

/* A label mapping (labels, node_selector); absent when empty. */
static void add_labels(cJSON *o, const char *key, const scenario_labels *l)
{
    if (l->n == 0) {
        return;
    }
    cJSON *m = cJSON_AddObjectToObject(o, key);
    for (size_t i = 0; i < l->n; i++) {
        add_str(m, l->items[i].key, l->items[i].value);
    }
}

static cJSON *job_class_json(const scenario_job_class *j)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "name", j->name);
    if (j->arrival == SCN_ARRIVAL_FIXED) {
        add_str(o, "arrival", "fixed");
        add_s(o, "interval_s", j->interval_ns);
    } else {
        add_str(o, "arrival", "poisson");
        add_n(o, "rate_per_s", j->rate_per_s);
    }
    add_s(o, "start_s", j->start_ns);
    add_n(o, "count", (double)j->count);
    cJSON_AddItemToObject(o, "duration", duration_json(&j->duration));
    cJSON *rq = cJSON_AddObjectToObject(o, "request");
    add_n(rq, j->request.resource, j->request.count);
    add_str(o, "profile", j->profile);
    add_n(o, "memory_bytes", (double)j->memory_bytes);
    add_n(o, "priority", j->priority);
    if (j->nodes) { /* absent: any node */
        add_str(o, "nodes", j->nodes);
    }
    if (j->cpu_milli || j->host_mem_bytes) {
        add_n(o, "cpu_milli", (double)j->cpu_milli);
        add_n(o, "host_mem_bytes", (double)j->host_mem_bytes);
    }
    add_labels(o, "node_selector", &j->node_selector);
    if (j->n_tolerations) {
        cJSON *a = cJSON_AddArrayToObject(o, "tolerations");
        for (size_t i = 0; i < j->n_tolerations; i++) {
            const scenario_toleration *t = &j->tolerations[i];
            cJSON *tj = cJSON_CreateObject();
            add_str(tj, "key", t->key);
            add_str(tj, "operator", t->op ? "Exists" : "Equal");
            add_str(tj, "value", t->value);
            add_str(tj, "effect", taint_effect_name((taint_effect)t->effect));
            cJSON_AddItemToArray(a, tj);
        }
    }
    if (j->n_node_index) {
        cJSON *a = cJSON_AddArrayToObject(o, "node_index");
        for (size_t i = 0; i < j->n_node_index; i++) {
            cJSON_AddItemToArray(a, cJSON_CreateNumber(j->node_index[i]));
        }
    }
    return o;
}

/* workload.trace as resolved (readers' settings; what was read goes to run.json "trace"). */
static cJSON *trace_json(const scenario_trace *t)
{
    static const char *const modes[] = {"timed", "arrival-only"};
    cJSON *o = cJSON_CreateObject();
    add_str(o, "format", trace_format_name((trace_format)t->format));
    add_str(o, "file", t->file);
    add_str(o, "mode", modes[t->mode == SCN_TRACE_ARRIVAL_ONLY]);
    add_s(o, "start_s", t->start_ns);
    add_s(o, "length_s", t->length_ns);
    add_n(o, "limit", (double)t->limit);
    add_str(o, "request", t->resource);
    add_n(o, "max_per_worker", t->max_per_worker);
    cJSON_AddBoolToObject(o, "cpu_pods", t->cpu_pods);
    add_str(o, "traced_gpu", t->traced_gpu);
    add_n(o, "inflate", t->inflate);
    cJSON_AddBoolToObject(o, "shuffle", t->shuffle);
    add_s(o, "interval_s", t->interval_ns);
    if (t->format == TRACE_HELIOS) {
        cJSON_AddItemToObject(o, "duration", duration_json(&t->duration));
    }
    cJSON *map = cJSON_AddArrayToObject(o, "map");
    for (size_t i = 0; i < t->n_rules; i++) {
        const scenario_trace_rule *r = &t->rules[i];
        cJSON *rj = cJSON_CreateObject(), *m = cJSON_AddObjectToObject(rj, "match");
        add_str(m, "name", r->name);
        add_n(m, "gpus_min", r->gpus_min);
        add_n(m, "gpus_max", r->gpus_max);
        add_str(m, "queue", r->queue);
        add_str(m, "user", r->user);
        add_str(m, "class", r->klass);
        add_str(m, "gpu_type", r->gpu_type);
        add_str(rj, "class", r->class_name);
        add_str(rj, "profile", r->profile);
        add_str(rj, "request", r->resource);
        cJSON_AddItemToArray(map, rj);
    }
    return o;
}

cJSON *out_config_json(const scenario_spec *s)
{
    const cfg_out co = {out_json_number};
    cJSON *o = cJSON_CreateObject();
    add_str(o, "name", s->name);
    add_str(o, "description", s->description);
    cJSON_AddItemToObject(o, "seed", out_json_u64(s->seed));
    add_s(o, "horizon_s", s->horizon_ns);
    cJSON *nodes = cJSON_AddArrayToObject(cJSON_AddObjectToObject(o, "cluster"), "nodes");
    for (size_t i = 0; i < s->cluster.n_groups; i++) {
        const scenario_node_group *g = &s->cluster.groups[i];
        cJSON *gj = cJSON_CreateObject();
        add_str(gj, "name", g->name);
        add_n(gj, "count", g->count);
        add_str(gj, "gpu", g->gpu);
        add_n(gj, "gpus_per_node", g->gpus_per_node);
        cJSON_AddItemToObject(gj, "sharing", sharing_json(&g->sharing));
        if (g->topology) { /* absent: the GPU type's links (model/physics/ddp.h ddp_node) */
            add_str(gj, "topology", g->topology);
        }
        if (g->trace_model) { /* a group read from cluster.trace */
            add_str(gj, "trace_model", g->trace_model);
        }
        if (g->label) { /* absent: pods' nodes constraints name its GPU type */
            add_str(gj, "label", g->label);
        }
        if (g->trace_model || g->cpu_milli || g->host_mem_bytes) {
            add_n(gj, "cpu_milli", (double)g->cpu_milli);
            add_n(gj, "host_mem_bytes", (double)g->host_mem_bytes);
        }
        add_labels(gj, "labels", &g->labels);
        if (g->n_taints) {
            cJSON *a = cJSON_AddArrayToObject(gj, "taints");
            for (size_t t = 0; t < g->n_taints; t++) {
                cJSON *tj = cJSON_CreateObject();
                add_str(tj, "key", g->taints[t].key);
                add_str(tj, "value", g->taints[t].value);
                add_str(tj, "effect",
                        taint_effect_name((taint_effect)(g->taints[t].effect + TAINT_NO_SCHEDULE)));
                cJSON_AddItemToArray(a, tj);
            }
        }
        cJSON_AddItemToArray(nodes, gj);
    }
    if (cfg_present(s->cluster.trace.at)) {
        cJSON *ct = cJSON_AddObjectToObject(cJSON_GetObjectItem(o, "cluster"), "trace");
        add_str(ct, "file", s->cluster.trace.file);
        cJSON *map = cJSON_AddObjectToObject(ct, "gpu_map");
        for (size_t i = 0; i < s->cluster.trace.n_map; i++) {
            add_str(map, s->cluster.trace.map[i].model, s->cluster.trace.map[i].gpu);
        }
        cJSON_AddBoolToObject(ct, "cpu_nodes", s->cluster.trace.cpu_nodes);
        add_n(ct, "cpu_only_nodes", (double)s->cluster.trace.n_cpu_nodes);
    }
    cJSON *wl = cJSON_AddObjectToObject(o, "workload");
    cJSON *jobs = cJSON_AddArrayToObject(wl, "jobs");
    for (size_t i = 0; i < s->workload.n_jobs; i++) {
        cJSON_AddItemToArray(jobs, job_class_json(&s->workload.jobs[i]));
    }
    if (cfg_present(s->workload.trace.at)) {
        cJSON_AddItemToObject(wl, "trace", trace_json(&s->workload.trace));
    }
    cJSON *pol = cJSON_AddObjectToObject(o, "policy");
    add_str(pol, "scheduler", s->policy.scheduler);
    cJSON *params = cJSON_AddObjectToObject(pol, "params");
    for (size_t i = 0; i < s->policy.n_params; i++) {
        add_str(params, s->policy.params[i].key, s->policy.params[i].value);
    }
    cJSON *out = cJSON_AddObjectToObject(o, "outputs");
    add_str(out, "dir", s->outputs.dir);
    cJSON *fl = cJSON_AddArrayToObject(out, "files");
    for (unsigned b = 0; b < SCN_OUT_COUNT; b++) {
        if (s->outputs.files & (1u << b)) {
            cJSON_AddItemToArray(fl, cJSON_CreateString(scenario_output_name(b)));
        }
    }
    add_s(out, "sample_interval_s", s->outputs.sample_interval_ns);
    if (s->outputs.start_unix_ns != 0) { /* absent: simulated time 0 is the Unix epoch */
        add_s(out, "start_unix_s", s->outputs.start_unix_ns);
    }
    cJSON *cal = cJSON_AddArrayToObject(o, "calibration");
    for (size_t i = 0; i < s->n_calibrations; i++) {
        const scenario_calibration *c = &s->calibrations[i];
        cJSON *cj = cJSON_CreateObject();
        add_str(cj, "file", c->file);
        add_str(cj, "gpu", c->gpu_type);
        add_str(cj, "device", c->src ? c->src->device : NULL);
        add_str(cj, "uuid", c->src ? c->src->uuid : NULL);
        add_str(cj, "driver", c->src ? c->src->driver : NULL);
        add_str(cj, "date_utc", c->src ? c->src->date_utc : NULL);
        add_str(cj, "measurements", c->src ? c->src->file : NULL);
        cJSON_AddItemToArray(cal, cj);
    }
    if (cfg_present(s->faults.at)) {
        cJSON_AddItemToObject(o, "faults", cfg_write_map(&co, scenario_faults_fields, &s->faults));
    }
    if (cfg_present(s->repartition.at)) {
        cJSON_AddItemToObject(o, "repartition", cfg_write_map(&co, scenario_repartition_fields,
                                                              &s->repartition));
    }
    if (s->n_services > 0) {
        cJSON *sv = cJSON_AddArrayToObject(o, "services");
        for (size_t i = 0; i < s->n_services; i++) {
            cJSON_AddItemToArray(sv, service_json(&s->services[i]));
        }
    }
    return o;
}
