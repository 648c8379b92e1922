/* experiments/scenario_dyn.h - the scenario's dynamic parts: faults and inference services
 * (their schema tables, which experiments/scenario.c plugs into its top level).
 *
 *   faults:
 *     checkpoint: 30m          # a job checkpoints every 30 min of its work; absent: from zero
 *     process:                 # Poisson failures per component (model/cluster/fault.h)
 *       gpu: {mtbf: 50000h, repair: 4h}        # per GPU: the board fails
 *       instance: {mtbf: 2000h, repair: 1m}    # per GPU: a fault inside one device
 *       node: {mtbf: 20000h, repair: 8h}       # per node
 *       nvlink: {mtbf: 100000h}                # per node with 2 or more GPUs
 *     events:                  # and/or a list of faults
 *       - {at: 2h, kind: instance, node: mig-0, gpu: 3, instance: 1, repair: 5m}
 *
 *   services:
 *     - name: vit                         # replicas are pods of class `vit` (jobs.csv lists them)
 *       replicas: 2
 *       resource: nvidia.com/mig-1g.5gb   # one unit per replica
 *       profile: vit-b16-infer            # the model served: the physics gives a batch's time
 *       arrival: diurnal                  # poisson (default) | diurnal | trace
 *       rate: 20/s                        # mean request rate (trace: per live instance)
 *       amplitude: 0.5                    # diurnal: rate * (1 + a cos(2 pi (t - peak) / period))
 *       period: 24h
 *       peak: 14h
 *       batch: 8                          # largest batch
 *       slo: 100ms                        # latency objective
 *       trace:                            # arrival: trace (workloads/tracelive.h): requests at
 *         format: dlrm                    #   rate x the trace's live GPU instances of `app`
 *         file: ../traces/dlrm.csv        #   (Alibaba DLRM inference instances)
 *         app: app_0                      #   optional: every app
 *         spacing: poisson                #   poisson (default) | even (deterministic)
 *       autoscale:                        # optional (model/cluster/service.h): `replicas` to start
 *         metric: queue                   # queue (requests waiting per replica) | utilisation
 *         target: 4                       # per replica; utilisation: busy fraction (0, 1]
 *         min: 1
 *         max: 8
 *         interval: 15s                   # default: the HPA's sync period (15 s)
 *         stabilization: 5m               # default: the HPA's downscale stabilization (5 min)
 *
 * Units after loading: times in sim ns, rates per second. Kind names are model/cluster/fault.h's
 * (fault_kind_find); `node` is a node name (GROUP-INDEX), `gpu` its GPU index, `instance` the
 * device index on that GPU (MIG instances in placement order; 0 for a GPU without MIG); they are
 * checked against the built cluster when the run is built (experiments/build_dyn.c). No MTBF or
 * repair time has a default: the scenario states them (no invented reliability figure). Ownership: as scenario.h (the
 * loader's arena).
 */
#ifndef SIMPROJ_EXPERIMENTS_SCENARIO_DYN_H
#define SIMPROJ_EXPERIMENTS_SCENARIO_DYN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "experiments/cfg.h"
#include "sim/diag.h"

/* Failures of one kind: mean time between failures per component, and repair time. */
typedef struct scenario_fault_rate {
    int64_t mtbf_ns;   /* > 0 */
    int64_t repair_ns; /* >= 0, default 0 */
    src_loc at;
} scenario_fault_rate;

typedef struct scenario_fault_process {
    scenario_fault_rate gpu, instance, node, nvlink; /* absent: at == {0}, never fails */
    src_loc at;
} scenario_fault_process;

typedef struct scenario_fault_event {
    int64_t at_ns;
    const char *kind; /* gpu | instance | node | nvlink */
    const char *node; /* node name */
    uint32_t gpu, instance;
    int64_t repair_ns;
    src_loc at, node_at;
} scenario_fault_event;

typedef struct scenario_faults {
    int64_t checkpoint_ns; /* 0: no checkpoints */
    scenario_fault_process process;
    size_t n_events;
    scenario_fault_event *events;
    src_loc at; /* cfg_present(at): the scenario has a faults section */
} scenario_faults;

/* Dynamic MIG re-partitioning (model/cluster/reconf.h):
 *   repartition:
 *     groups: [mig]        # node groups whose GPUs may change layout (MIG, mixed, exclusive)
 *     policy: demand       # the layout policy (model/policy/repart.h)
 *     interval: 5m         # how often it runs
 *     delay: 20s           # time to apply a layout on an idle GPU: required (no published
 *                          # measurement of mig-parted's apply time was found)
 *     reset: 30s           # extra for a MIG mode change (GPU reset); default 30 s: NVIDIA
 *                          # mig-parted deployments/container/reconfigure-mig.sh waits 30 s
 *                          # ("settling time") before the reset of a mode change
 *     min_gain: 1          # compute slices a new layout must serve beyond the current one
 *     hold: 10m            # no GPU re-laid out twice within this time
 *     max_concurrent: 1    # GPUs being reconfigured at once
 *     evict: false         # evict a GPU's pods instead of waiting for them
 *     enabled: true        # false: the section is ignored (static layouts; for --set) */
/* `repartition.timeslice`: the GPUs may also switch to device-plugin time-slicing. */
typedef struct scenario_repart_ts {
    uint32_t replicas;  /* nvidia.com/gpu.shared replicas of a time-sliced GPU, >= 2 */
    int64_t restart_ns; /* the device plugin's restart with the new config */
    src_loc at;         /* cfg_present(at): time-slicing is one of the GPUs' choices */
} scenario_repart_ts;

typedef struct scenario_repartition {
    size_t n_groups;
    const char **groups;
    const char *policy;
    int64_t interval_ns, delay_ns, reset_ns, hold_ns;
    double min_gain;
    uint32_t max_concurrent;
    bool evict;
    bool enabled;
    scenario_repart_ts timeslice;
    src_loc at, groups_at, delay_at; /* delay absent: model/physics/physics.yaml mig_apply_s */
} scenario_repartition;

/* Arrival process of a service (scenario_service.arrival). */
enum {
    SCN_SVC_POISSON = 0,
    SCN_SVC_DIURNAL = 1,
    SCN_SVC_TRACE = 2,
};

enum { SCN_SPACING_POISSON = 0, SCN_SPACING_EVEN = 1 };

/* Request arrivals from a trace's live instances (scenario_service.trace). */
typedef struct scenario_svc_trace {
    const char *format; /* "dlrm" (the only format with instances to count) */
    const char *file;   /* resolved against the scenario's directory */
    const char *app;    /* class key (dlrm: app_name); NULL: every instance */
    int spacing;        /* SCN_SPACING_* */
    src_loc at, file_at, app_at;
} scenario_svc_trace;

/* Autoscaling rule of a service (scenario_service.autoscale). */
enum {
    SCN_SCALE_QUEUE = 0,
    SCN_SCALE_UTILISATION = 1,
};

typedef struct scenario_autoscale {
    int metric; /* SCN_SCALE_* */
    double target;
    uint32_t min, max;
    int64_t interval_ns, stabilization_ns;
    src_loc at; /* cfg_present(at): the service autoscales */
} scenario_autoscale;

typedef struct scenario_service {
    const char *name;
    uint32_t replicas;
    const char *resource;
    const char *profile;
    int arrival; /* SCN_SVC_* */
    double rate_per_s;
    double amplitude;
    int64_t period_ns, peak_ns;
    uint32_t batch;
    int64_t slo_ns;
    scenario_autoscale autoscale;
    scenario_svc_trace trace; /* arrival: trace */
    src_loc at, resource_at, profile_at;
} scenario_service;

/* Schema of the `faults:` mapping (walked into scenario_faults). */
extern const cfg_field scenario_faults_fields[];
/* Schema of one `services:` item (walked into scenario_service). */
extern const cfg_field scenario_service_fields[];
/* Schema of `repartition:` (walked into scenario_repartition). */
extern const cfg_field scenario_repartition_fields[];

struct scenario_spec;
/* Is node group gi re-partitioned (named in repartition.groups)? */
bool scenario_group_reconfigurable(const struct scenario_spec *s, size_t gi);
/* Check repartition: every group named exists and is MIG, mixed strategy, exclusive; report
 * problems to d. */
void scenario_check_repartition(const struct scenario_spec *s, diag *d);
/* Fill `repartition.delay` when the scenario leaves it out: the measured MIG apply time of the
 * embedded model/physics/physics.yaml (mig_apply_s). */
void scenario_resolve_repartition(struct scenario_spec *s, diag *d);
/* Check the job classes asking for any MIG slice (request nvidia.com/mig-any, JOB_RES_MIG_ANY):
 * one unit, one worker, a workload profile (the physics gives its speed on each slice), no
 * `samples`, and an enabled `repartition:` section whose policy places them (miso); report
 * problems to d at the offending field. */
void scenario_check_any_slice(const struct scenario_spec *s, diag *d);

#endif
