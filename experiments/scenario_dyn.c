/* experiments/scenario_dyn.c - schema tables of the scenario's dynamic parts (scenario_dyn.h). */
#include "experiments/scenario_dyn.h"

#include <stdio.h>
#include <string.h>

#include "experiments/physics_load.h"
#include "experiments/scenario.h"
#include "model/cluster/job.h"

static const char *const fault_kinds[] = {"gpu", "instance", "node", "nvlink", NULL};

static const cfg_field rate_fields[] = {
    CFG_SELF(scenario_fault_rate, at),
    {"mtbf", CFG_DURATION, .required = true, CFG_ABOVE(0),
     .off = offsetof(scenario_fault_rate, mtbf_ns)},
    {"repair", CFG_DURATION, CFG_MIN(0), .dflt = "0s",
     .off = offsetof(scenario_fault_rate, repair_ns)},
    {0},
};

static const cfg_field process_fields[] = {
    CFG_SELF(scenario_fault_process, at),
    {"gpu", CFG_MAP, .sub = rate_fields, .off = offsetof(scenario_fault_process, gpu),
     .out = CFG_OUT_IF_SET},
    {"instance", CFG_MAP, .sub = rate_fields, .off = offsetof(scenario_fault_process, instance),
     .out = CFG_OUT_IF_SET},
    {"node", CFG_MAP, .sub = rate_fields, .off = offsetof(scenario_fault_process, node),
     .out = CFG_OUT_IF_SET},
    {"nvlink", CFG_MAP, .sub = rate_fields, .off = offsetof(scenario_fault_process, nvlink),
     .out = CFG_OUT_IF_SET},
    {0},
};

static const cfg_field event_fields[] = {
    CFG_SELF(scenario_fault_event, at),
    {"at", CFG_DURATION, .required = true, CFG_MIN(0),
     .off = offsetof(scenario_fault_event, at_ns)},
    {"kind", CFG_STRING, .required = true, .names = fault_kinds,
     .off = offsetof(scenario_fault_event, kind)},
    {"node", CFG_STRING, .required = true, .off = offsetof(scenario_fault_event, node),
     CFG_LOC(scenario_fault_event, node_at)},
    {"gpu", CFG_U32, .dflt = "0", .off = offsetof(scenario_fault_event, gpu)},
    {"instance", CFG_U32, .dflt = "0", .off = offsetof(scenario_fault_event, instance)},
    {"repair", CFG_DURATION, CFG_MIN(0), .dflt = "0s",
     .off = offsetof(scenario_fault_event, repair_ns)},
    {0},
};

const cfg_field scenario_faults_fields[] = {
    CFG_SELF(scenario_faults, at),
    {"checkpoint", CFG_DURATION, CFG_MIN(0), .dflt = "0s",
     .off = offsetof(scenario_faults, checkpoint_ns)},
    {"process", CFG_MAP, .sub = process_fields, .off = offsetof(scenario_faults, process)},
    {"events", CFG_SEQ, CFG_MAX(100000),
     CFG_SEQ_OF(scenario_faults, events, n_events, scenario_fault_event, event_fields)},
    {0},
};

static const char *const arrival_names[] = {"poisson", "diurnal", "trace", NULL};
static const char *const svc_trace_formats[] = {"dlrm", NULL}; /* formats with instances */
static const char *const spacing_names[] = {"poisson", "even", NULL};

static const cfg_field svc_trace_fields[] = {
    CFG_SELF(scenario_svc_trace, at),
    {"format", CFG_STRING, .names = svc_trace_formats, .dflt = "dlrm",
     .off = offsetof(scenario_svc_trace, format)},
    {"file", CFG_STRING, .required = true, .expect = "the path of a DLRM instances CSV",
     .off = offsetof(scenario_svc_trace, file), CFG_LOC(scenario_svc_trace, file_at)},
    {"app", CFG_STRING, .off = offsetof(scenario_svc_trace, app),
     CFG_LOC(scenario_svc_trace, app_at), .out = CFG_OUT_IF_SET},
    {"spacing", CFG_ENUM, .names = spacing_names, .dflt = "poisson",
     .off = offsetof(scenario_svc_trace, spacing)},
    {0},
};
static const char *const scale_metrics[] = {"queue", "utilisation", NULL};

static const cfg_field autoscale_fields[] = {
    CFG_SELF(scenario_autoscale, at),
    {"metric", CFG_ENUM, .required = true, .names = scale_metrics,
     .off = offsetof(scenario_autoscale, metric)},
    {"target", CFG_DOUBLE, .required = true, CFG_ABOVE(0), CFG_MAX(1e9),
     .off = offsetof(scenario_autoscale, target)},
    {"min", CFG_U32, CFG_MIN(1), CFG_MAX(10000), .dflt = "1",
     .off = offsetof(scenario_autoscale, min)},
    {"max", CFG_U32, .required = true, CFG_MIN(1), CFG_MAX(10000),
     .off = offsetof(scenario_autoscale, max)},
    {"interval", CFG_DURATION, CFG_ABOVE(0), .dflt = "15s",
     .off = offsetof(scenario_autoscale, interval_ns)},
    {"stabilization", CFG_DURATION, CFG_MIN(0), .dflt = "5m",
     .off = offsetof(scenario_autoscale, stabilization_ns)},
    {0},
};

const cfg_field scenario_service_fields[] = {
    CFG_SELF(scenario_service, at),
    {"name", CFG_STRING, .required = true, .off = offsetof(scenario_service, name)},
    {"replicas", CFG_U32, .required = true, CFG_MIN(1), CFG_MAX(100000),
     .off = offsetof(scenario_service, replicas)},
    {"resource", CFG_STRING, .required = true, .off = offsetof(scenario_service, resource),
     CFG_LOC(scenario_service, resource_at)},
    {"profile", CFG_STRING, .required = true, .off = offsetof(scenario_service, profile),
     CFG_LOC(scenario_service, profile_at)},
    {"arrival", CFG_ENUM, .names = arrival_names, .dflt = "poisson",
     .off = offsetof(scenario_service, arrival)},
    {"rate", CFG_RATE, .required = true, CFG_ABOVE(0), CFG_MAX(1e6),
     .off = offsetof(scenario_service, rate_per_s)},
    {"amplitude", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1), .dflt = "0",
     .off = offsetof(scenario_service, amplitude)},
    {"period", CFG_DURATION, CFG_ABOVE(0), .dflt = "24h",
     .off = offsetof(scenario_service, period_ns)},
    {"peak", CFG_DURATION, CFG_MIN(0), .dflt = "0s", .off = offsetof(scenario_service, peak_ns)},
    {"batch", CFG_U32, CFG_MIN(1), CFG_MAX(65536), .dflt = "1",
     .off = offsetof(scenario_service, batch)},
    {"slo", CFG_DURATION, .required = true, CFG_ABOVE(0),
     .off = offsetof(scenario_service, slo_ns)},
    {"autoscale", CFG_MAP, .sub = autoscale_fields, .off = offsetof(scenario_service, autoscale),
     .out = CFG_OUT_IF_SET},
    {"trace", CFG_MAP, .sub = svc_trace_fields, .off = offsetof(scenario_service, trace),
     .out = CFG_OUT_IF_SET},
    {0},
};

static const char *const repart_policies[] = {"demand", "miso", NULL}; /* model/policy/repart.c */

static const cfg_field repart_ts_fields[] = {
    CFG_SELF(scenario_repart_ts, at),
    {"replicas", CFG_U32, .required = true, CFG_MIN(2), CFG_MAX(1024),
     .off = offsetof(scenario_repart_ts, replicas)},
    /* required: no published measurement of the plugin's restart was found */
    {"restart", CFG_DURATION, .required = true, CFG_MIN(0),
     .off = offsetof(scenario_repart_ts, restart_ns)},
    {0},
};

const cfg_field scenario_repartition_fields[] = {
    CFG_SELF(scenario_repartition, at),
    {"groups", CFG_SEQ, .required = true, CFG_MIN(1), CFG_MAX(1000), .elem = CFG_STRING,
     .off = offsetof(scenario_repartition, groups),
     .count_off = offsetof(scenario_repartition, n_groups),
     CFG_LOC(scenario_repartition, groups_at)},
    {"policy", CFG_STRING, .names = repart_policies, .dflt = "demand",
     .off = offsetof(scenario_repartition, policy)},
    {"interval", CFG_DURATION, CFG_ABOVE(0), .dflt = "5m",
     .off = offsetof(scenario_repartition, interval_ns)},
    /* absent: the measured default (scenario_resolve_repartition) */
    {"delay", CFG_DURATION, CFG_MIN(0), .off = offsetof(scenario_repartition, delay_ns),
     CFG_LOC(scenario_repartition, delay_at)},
    {"reset", CFG_DURATION, CFG_MIN(0), .dflt = "30s",
     .off = offsetof(scenario_repartition, reset_ns)},
    {"min_gain", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1000), .dflt = "1",
     .off = offsetof(scenario_repartition, min_gain)},
    {"hold", CFG_DURATION, CFG_MIN(0), .dflt = "10m",
     .off = offsetof(scenario_repartition, hold_ns)},
    {"max_concurrent", CFG_U32, CFG_MIN(1), CFG_MAX(1000000), .dflt = "1",
     .off = offsetof(scenario_repartition, max_concurrent)},
    {"evict", CFG_BOOL, .dflt = "false", .off = offsetof(scenario_repartition, evict)},
    {"enabled", CFG_BOOL, .dflt = "true", .off = offsetof(scenario_repartition, enabled)},
    {"timeslice", CFG_MAP, .sub = repart_ts_fields,
     .off = offsetof(scenario_repartition, timeslice), .out = CFG_OUT_IF_SET},
    {0},
};

void scenario_resolve_repartition(struct scenario_spec *s, diag *d)
{
    scenario_repartition *r = &s->repartition;
    if (!cfg_present(r->at) || cfg_present(r->delay_at)) {
        return;
    }
    phys_params phys;
    if (physics_load_default(d, &phys) == 0) {
        r->delay_ns = sim_time_from_s(phys.mig_apply_s);
    }
}

bool scenario_group_reconfigurable(const struct scenario_spec *s, size_t gi)
{
    const scenario_repartition *r = &s->repartition;
    for (size_t i = 0; cfg_present(r->at) && r->enabled && i < r->n_groups; i++) {
        /* an element that is not a string (already an error) is NULL and matches nothing */
        if (r->groups[i] && s->cluster.groups[gi].name &&
            !strcmp(r->groups[i], s->cluster.groups[gi].name)) {
            return true;
        }
    }
    return false;
}

void scenario_check_repartition(const struct scenario_spec *s, diag *d)
{
    const scenario_repartition *r = &s->repartition;
    for (size_t i = 0; cfg_present(r->at) && r->enabled && i < r->n_groups; i++) {
        if (!r->groups[i]) {
            continue; /* not a string: already an error at its line */
        }
        char path[64];
        snprintf(path, sizeof path, "repartition.groups[%zu]", i);
        size_t g = 0;
        /* a group without a name (already an error) matches nothing */
        while (g < s->cluster.n_groups && (!s->cluster.groups[g].name ||
                                           strcmp(s->cluster.groups[g].name, r->groups[i]) != 0)) {
            g++;
        }
        if (g == s->cluster.n_groups) {
            diag_error(d, r->groups_at, path,
                       "no node group has this name; expected a node group, got '%s'",
                       r->groups[i]);
            continue;
        }
        const scenario_sharing *sh = &s->cluster.groups[g].sharing;
        if (!sh->is_mig || sh->mig.strategy != SCN_MIG_MIXED || sh->mode != SCN_SHARE_EXCLUSIVE) {
            diag_error(d, r->groups_at, path,
                       "cannot be re-partitioned; expected a MIG group with the mixed strategy "
                       "and no time-slicing or MPS, got '%s'",
                       r->groups[i]);
        }
    }
}

/* Is there an enabled repartition section with the miso policy? Else what there is instead. */
static const char *no_miso(const scenario_repartition *r)
{
    if (!cfg_present(r->at)) {
        return "no repartition section";
    }
    if (!r->enabled) {
        return "enabled: false";
    }
    return r->policy && !strcmp(r->policy, "miso") ? NULL : r->policy ? r->policy : "";
}

#define NO_MISO_MSG                                                                                \
    "no layout policy places jobs asking for any MIG slice; expected an enabled `repartition:` "   \
    "section with policy: miso, got '%s'"

/* Trace rules (and the trace's default request) asking for any MIG slice. */
static void check_any_slice_trace(const struct scenario_spec *s, diag *d)
{
    const scenario_trace *tr = &s->workload.trace;
    for (size_t i = 0; cfg_present(tr->at) && i <= tr->n_rules; i++) {
        const char *res = i < tr->n_rules ? tr->rules[i].resource : tr->resource;
        if (!res || strcmp(res, JOB_RES_MIG_ANY) != 0) {
            continue;
        }
        src_loc at = i < tr->n_rules ? tr->rules[i].resource_at : tr->resource_at;
        at = cfg_present(at) ? at : tr->at;
        char path[96];
        if (i < tr->n_rules) {
            snprintf(path, sizeof path, "workload.trace.map[%zu].request", i);
        } else {
            snprintf(path, sizeof path, "workload.trace.request");
        }
        const char *why = no_miso(&s->repartition);
        if (why) {
            diag_error(d, at, path, NO_MISO_MSG, why);
        }
        if (i == tr->n_rules || !tr->rules[i].profile) {
            diag_error(d, at, path,
                       "a traced job asking for any MIG slice needs a workload profile (its speed "
                       "on each slice comes from the physics); expected a map rule with a "
                       "`profile:`, got '%s'",
                       res);
        }
    }
}

void scenario_check_any_slice(const struct scenario_spec *s, diag *d)
{
    const scenario_repartition *r = &s->repartition;
    check_any_slice_trace(s, d);
    for (size_t i = 0; i < s->workload.n_jobs; i++) {
        const scenario_job_class *jc = &s->workload.jobs[i];
        char path[96];
        if (!jc->request.resource || strcmp(jc->request.resource, JOB_RES_MIG_ANY) != 0) {
            if (jc->duration_on) {
                snprintf(path, sizeof path, "workload.jobs[%zu].duration_on", i);
                diag_error(d, jc->duration_on_at, path,
                           "only a job asking for any MIG slice states its duration on a profile; "
                           "expected request {" JOB_RES_MIG_ANY ": 1}, got '%s'",
                           jc->request.resource ? jc->request.resource : "");
            }
            continue;
        }
        snprintf(path, sizeof path, "workload.jobs[%zu].request", i);
        if (jc->request.count != 1) {
            diag_error(d, jc->request.at, path,
                       "a job asking for any MIG slice runs on one slice; expected "
                       "{" JOB_RES_MIG_ANY ": 1}, got %u",
                       (unsigned)jc->request.count);
        }
        if (no_miso(r)) {
            diag_error(d, jc->request.at, path, NO_MISO_MSG, no_miso(r));
        }
        if (jc->workers > 1) {
            snprintf(path, sizeof path, "workload.jobs[%zu].workers", i);
            diag_error(d, jc->workers_at, path,
                       "a job asking for any MIG slice has one worker; expected 1, got %u",
                       (unsigned)jc->workers);
        }
        if (jc->samples > 0) {
            snprintf(path, sizeof path, "workload.jobs[%zu].samples", i);
            diag_error(d, jc->samples_at, path,
                       "a job asking for any MIG slice states its work as `duration` on the "
                       "largest MIG profile; expected no samples, got %g",
                       jc->samples);
        }
        if (!jc->profile) {
            snprintf(path, sizeof path, "workload.jobs[%zu].profile", i);
            diag_error(d, jc->at, path,
                       "a job asking for any MIG slice needs a workload profile (its speed on each "
                       "slice comes from the physics); expected a library profile or a profile "
                       ".yaml, got nothing");
        }
    }
}
