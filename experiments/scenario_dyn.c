/* experiments/scenario_dyn.c - schema tables of the scenario's dynamic parts (scenario_dyn.h). */
#include "experiments/scenario_dyn.h"

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
    {"gpu", CFG_MAP, .sub = rate_fields, .off = offsetof(scenario_fault_process, gpu)},
    {"instance", CFG_MAP, .sub = rate_fields, .off = offsetof(scenario_fault_process, instance)},
    {"node", CFG_MAP, .sub = rate_fields, .off = offsetof(scenario_fault_process, node)},
    {"nvlink", CFG_MAP, .sub = rate_fields, .off = offsetof(scenario_fault_process, nvlink)},
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

static const char *const arrival_names[] = {"poisson", "diurnal", NULL};

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
    {0},
};
