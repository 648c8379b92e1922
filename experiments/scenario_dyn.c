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
