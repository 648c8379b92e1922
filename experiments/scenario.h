/* experiments/scenario.h - the scenario language: one YAML file -> a plain, validated spec.
 *
 * A scenario names the cluster (node groups, GPU type, per-node sharing: whole GPUs, MIG by a
 * mig-parted config, time-slicing or MPS replicas by a device-plugin config or inline), the
 * workload (synthetic job classes), the policy, the horizon, the seed and the outputs
 * (DESIGN.md §6, §9). The schema is declarative (experiments/cfg.h); every error carries
 * `file:line:col`, the field path, the offending value and what was expected, and all errors are
 * reported (up to the diag cap) before the load fails.
 *
 * Units are converted at load: times in sim ns (int64), rates in events per second, no "80GiB"
 * or "2/h" string survives. Every spec struct keeps the src_loc of its node (and of the fields
 * that later checks point at); cfg_present(at) (experiments/cfg.h) says whether a field was given.
 * File references (mig-parted config, device-plugin sharing config) are resolved relative to the
 * scenario file's directory, read and checked at load, and listed in `refs`. A device-plugin
 * config is read by experiments/timeslicing.h; a rule that renames its resource or picks some
 * devices (`rename`, `devices` other than all) is refused, since every device of a replicated
 * resource is modelled under its plain or `.shared` name.
 *
 * Ownership: every pointer inside a scenario_spec (strings, arrays, file names inside src_locs)
 * is owned by the arena passed to the loader and lives as long as it. No YAML node survives.
 */
#ifndef SIMPROJ_EXPERIMENTS_SCENARIO_H
#define SIMPROJ_EXPERIMENTS_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "experiments/plan.h"
#include "experiments/scenario_dyn.h"
#include "experiments/sweep.h"
#include "experiments/yamlx.h"
#include "model/fit/calapply.h"
#include "model/hw/catalog.h"
#include "model/hw/mig.h"
#include "model/cluster/taint.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "workloads/trace.h"

/* How processes share one GPU, or one MIG device when MIG is on (scenario_sharing.mode). */
enum {
    SCN_SHARE_EXCLUSIVE = 0, /* one pod per GPU / MIG device ("whole") */
    SCN_SHARE_TIMESLICE = 1, /* device-plugin time-slicing replicas */
    SCN_SHARE_MPS = 2,       /* device-plugin MPS replicas */
};

/* MIG strategy of the device plugin (scenario_mig.strategy). */
enum {
    SCN_MIG_MIXED = 0,  /* nvidia.com/mig-<profile> per instance */
    SCN_MIG_SINGLE = 1, /* every instance advertised as nvidia.com/gpu */
};

/* Arrival process of a job class (scenario_job_class.arrival). */
enum {
    SCN_ARRIVAL_POISSON = 0, /* exponential gaps with rate_per_s */
    SCN_ARRIVAL_FIXED = 1,   /* one arrival every interval_ns */
};

/* Distribution of a job's solo run time (scenario_duration.dist). */
enum {
    SCN_DUR_FIXED = 0,       /* always value_ns */
    SCN_DUR_EXPONENTIAL = 1, /* mean mean_ns */
    SCN_DUR_LOGNORMAL = 2,   /* median median_ns (= exp(mu)), log-space sigma */
};

/* Output files (bits of scenario_outputs.files), bit i named scenario_output_name(i). Every name
 * a scenario may list is written by `slicesim run`; any other name is an input error. */
enum {
    SCN_OUT_RUN_JSON = 1u << 0,
    SCN_OUT_JOBS_CSV = 1u << 1,
    SCN_OUT_TIMESERIES_CSV = 1u << 2,
    SCN_OUT_METRICS_OM = 1u << 3,
    SCN_OUT_REPORT_HTML = 1u << 4,
    SCN_OUT_COUNT = 5,
    SCN_OUT_ALL = (1u << SCN_OUT_COUNT) - 1,
};
/* File name of output bit i (i < SCN_OUT_COUNT), e.g. "run.json"; static storage. */
const char *scenario_output_name(unsigned i);

/* MIG layout of every GPU of a node group, by a named config of a mig-parted file. */
typedef struct scenario_mig {
    const char *file;   /* resolved path of the mig-parted file (`version: v1`, `mig-configs:`) */
    const char *config; /* name of the config under mig-configs */
    int strategy;       /* SCN_MIG_* */
    src_loc at, file_at, config_at;
} scenario_mig;

/* One replicas rule of the device-plugin sharing config (timeSlicing or mps `resources`). */
typedef struct scenario_replica_rule {
    const char *resource; /* e.g. "nvidia.com/gpu", "nvidia.com/mig-1g.5gb"; NULL = every one */
    uint32_t replicas;    /* >= 1 (MPS: >= 2, as the device plugin requires) */
    src_loc at;
} scenario_replica_rule;

/* Per-node sharing. "whole" = not MIG, exclusive. */
typedef struct scenario_sharing {
    bool is_mig;
    scenario_mig mig;         /* valid when is_mig */
    int mode;                 /* SCN_SHARE_* for each GPU or MIG device */
    const char *sharing_file; /* resolved device-plugin config, or NULL when inline */
    bool rename_by_default;   /* shared resources advertised as <name>.shared */
    bool fail_requests_greater_than_one;
    size_t n_rules;
    scenario_replica_rule *rules; /* timeslice/mps: at least one */
    src_loc at, sharing_file_at;
} scenario_sharing;

/* A mapping of Kubernetes labels (`labels:` of a node group, `node_selector:` of a job class),
 * in file order. */
typedef struct scenario_labels {
    size_t n;
    const taint_label *items; /* n entries, arena */
    src_loc at;         /* of the mapping; 0 when absent */
} scenario_labels;

/* One `taints:` entry of a node group (a node's spec.taints). */
typedef struct scenario_taint {
    const char *key, *value; /* value "" when absent */
    int effect;              /* index into NoSchedule, PreferNoSchedule, NoExecute */
    src_loc at;
} scenario_taint;

/* One `tolerations:` entry of a job class (a pod's spec.tolerations). */
typedef struct scenario_toleration {
    const char *key, *value; /* "" when absent */
    int op;                  /* 0 Equal, 1 Exists */
    int effect;              /* taint_effect: 0 (absent or "") every effect */
    src_loc at, key_at, value_at;
} scenario_toleration;

/* What a group's mig-parted config makes of one of its GPUs (placed once, at load). */
typedef struct scenario_gpu_mig {
    bool mig_enabled;  /* an entry selects the GPU and turns MIG on; false: a whole GPU (MIG off,
                        * or no entry selects it and mig-parted leaves it as it is) */
    mig_layout layout; /* its instances by ascending start (mig_layout_sort), profile indices into
                        * the group's catalog GPU type; n = 0 when !mig_enabled */
} scenario_gpu_mig;

/* `count` identical nodes named NAME-0 .. NAME-(count-1). */
typedef struct scenario_node_group {
    const char *name;
    uint32_t count;
    const char *gpu; /* catalog GPU type name (model/hw/catalog.h), checked at load; NULL only on a
                      * traced CPU-only group (gpus_per_node 0) */
    uint32_t gpus_per_node;
    scenario_sharing sharing;
    scenario_gpu_mig *mig_gpus; /* when sharing.is_mig: the layout of each of the gpus_per_node
                                 * GPUs, placed by scenario_validate under cluster.driver (the
                                 * mig-parted file is read once, there); NULL before validation,
                                 * under SCENARIO_NO_FILES, or when it failed */
    uint64_t cpu_milli;      /* CPU capacity per node, milli-cores; 0 = not stated */
    uint64_t host_mem_bytes; /* host memory per node, bytes; 0 = not stated */
    const char *trace_model; /* the GPU model as a node-list trace names it, or NULL */
    const char *topology;    /* how the nodes' GPUs are wired: a topology of model/physics/comm.yaml
                              * (checked by the run), or NULL: as the GPU type says */
    const char *label;       /* the name a job class's `nodes` constraint gives these nodes
                              * (`label:`; the snapshot importer writes the group's name), or
                              * NULL: they are named by their GPU type */
    scenario_labels labels;  /* Kubernetes labels of every node (`labels:`), for nodeSelectors */
    size_t n_taints;         /* `taints:` of every node (model/cluster/taint.h) */
    scenario_taint *taints;
    src_loc at, gpu_at, topology_at, label_at;
} scenario_node_group;

/* One `gpu_map` entry of a traced cluster: the trace's GPU model -> a catalog type. */
typedef struct scenario_gpu_map {
    const char *model, *gpu;
    src_loc at;
} scenario_gpu_map;

/* `cluster.trace`: node groups read from a node-list trace (workloads/tracenodes.h) and added
 * after the `nodes` written in the scenario. Each group is named `<model>-<gpus>g-<k>` (k counts
 * the groups of one model), its GPUs take the catalog type `gpu_map` names for the model (or the
 * catalog type or alias of that name: T4, P100, V100M16, V100M32 and A10 are catalog aliases),
 * and `sharing` applies to every group. Nodes without GPUs form groups named `cpu` (`cpu-1`...)
 * with no GPU type and gpus_per_node 0 (they hold CPU-only pods), unless `cpu_nodes: false`. */
typedef struct scenario_cluster_trace {
    int format;       /* trace_format (workloads/trace.h); only openb has a node list */
    const char *file; /* resolved path */
    size_t n_map;
    scenario_gpu_map *map;
    scenario_sharing sharing;
    bool cpu_nodes;       /* model the nodes without GPUs (default true) */
    uint64_t n_cpu_nodes; /* nodes of the file without GPUs */
    size_t first_group;   /* index of its first group in scenario_cluster.groups */
    src_loc at, file_at;
} scenario_cluster_trace;

/* `cluster.snapshot`: the cluster as `kubectl get nodes,pods -A -o json` saw it
 * (experiments/k8s_snapshot.h), as `slicesim import cluster` writes it: its node groups are
 * appended to the cluster's (each with its name as `label`), its running and pending GPU pods
 * to the workload's job classes (named snapshot-running-K, snapshot-pending-K). */
typedef struct scenario_cluster_snapshot {
    const char *file;       /* resolved path */
    const char *mig_parted; /* resolved mig-parted config the nodes' mig.config labels name, or
                             * NULL (then no node may have MIG on) */
    int64_t duration_ns;    /* run time of each imported pod; 0 = the horizon */
    src_loc at, file_at, mig_parted_at;
} scenario_cluster_snapshot;

typedef struct scenario_cluster {
    uint32_t driver; /* NVIDIA driver branch (535 for R535); 0 = newest, no restriction */
    const char *interconnect; /* nodes' network (a name of model/physics/comm.yaml), or NULL: its
                               * default_network */
    src_loc interconnect_at;
    size_t n_groups;
    scenario_node_group *groups;
    scenario_cluster_trace trace; /* present when cfg_present(trace.at) */
    scenario_cluster_snapshot snapshot; /* present when cfg_present(snapshot.at) */
    src_loc at;
} scenario_cluster;

typedef struct scenario_duration {
    int dist;          /* SCN_DUR_* */
    int64_t value_ns;  /* fixed */
    int64_t mean_ns;   /* exponential */
    int64_t median_ns; /* lognormal */
    double sigma;      /* lognormal, log-space standard deviation */
    src_loc at;
} scenario_duration;

/* A pod's GPU request, as the device plugin names resources: `nvidia.com/gpu`,
 * `nvidia.com/gpu.shared` (renamed time-sliced/MPS replicas), `nvidia.com/mig-<profile>`
 * (mixed strategy; a "+me" profile as `nvidia.com/mig-1g.5gb.me`, as model/cluster/cluster.h advertises
 * it; `.shared` appended when replicated and renamed). */
typedef struct scenario_request {
    const char *resource;
    uint32_t count; /* >= 1 */
    src_loc at;
} scenario_request;

/* A synthetic job class: arrivals, solo run time, and the resource its pods request. */
typedef struct scenario_job_class {
    const char *name;
    int arrival;                /* SCN_ARRIVAL_* */
    double rate_per_s;          /* poisson */
    int64_t interval_ns;        /* fixed */
    int64_t start_ns;           /* no arrival before this time (default 0) */
    uint64_t count;             /* number of jobs; 0 = arrivals until the horizon */
    scenario_duration duration; /* run time alone on the requested resource (any MIG slice:
                                 * on duration_on) */
    scenario_request request;   /* what each job's pod asks the device plugin for */
    const char *profile;        /* workload profile name (workloads/), or NULL */
    uint64_t memory_bytes;      /* device memory each unit needs (`memory: 16GiB`); 0 = not stated,
                                 * never OOM */
    int priority;               /* larger runs first under priority policies (default 0) */
    uint32_t workers;           /* pods of one job, placed and started together (gang); a
                                 * profile with grad_bytes makes it a data-parallel job whose step
                                 * model/physics/ddp.h gives (default 1) */
    uint32_t per_gpu;           /* most workers one GPU may hold (checked against the partition
                                 * the request names: 1 for a whole GPU, the profile's instance
                                 * count for MIG); 0 = not stated */
    double samples;             /* work in units of the profile (samples, or iterations) for the
                                 * whole job, instead of `duration`; 0 = not stated */
    uint32_t batch;             /* batch per worker the profile runs at; 0 = the profile's */
    const char *duration_on;    /* a job asking for any MIG slice: the MIG profile `duration` is
                                 * stated on (the physics carries it to the largest profile);
                                 * NULL = the largest profile itself */
    const char *nodes;          /* placement constraint (`nodes: [A, B]`): the node groups whose
                                 * label (or, without one, GPU type) is listed, '|'-separated as
                                 * job_pod.gpu_spec; NULL = any node */
    uint64_t cpu_milli;         /* CPU each worker requests, milli-cores; 0 = not stated */
    uint64_t host_mem_bytes;    /* host memory each worker requests; 0 = not stated */
    scenario_labels node_selector; /* labels a node must have (`node_selector:`) */
    size_t n_tolerations;          /* `tolerations:` (model/cluster/taint.h) */
    scenario_toleration *tolerations;
    size_t n_node_index;        /* `node_index: [i, ...]`: the node (index within the one group
                                 * `nodes` names) of each job, in arrival order: a snapshot's
                                 * running pods on their spec.nodeName; 0 = not stated */
    uint32_t *node_index;
    src_loc nodes_at, node_index_at;
    src_loc at, rate_at, interval_at, profile_at, duration_at, workers_at, per_gpu_at,
        samples_at, batch_at, priority_at, duration_on_at;
} scenario_job_class;

/* Trace modes (scenario_trace.mode). */
enum {
    SCN_TRACE_TIMED = 0,        /* submission -> submission + traced duration */
    SCN_TRACE_ARRIVAL_ONLY = 1, /* FGD's replay: shuffled arrivals, no departures, inflated */
};

/* A mapping rule of a trace (`workload.trace.map[]`): `match` conditions, then what a matching
 * job becomes (workloads/traceload.h). */
typedef struct scenario_trace_rule {
    const char *name, *queue, *user, *klass, *gpu_type; /* match; NULL = any */
    uint32_t gpus_min, gpus_max;                        /* match.gpus: N or [min, max] */
    const char *class_name;                             /* `class` */
    const char *profile;                                /* workload profile; NULL: GPU-bound */
    const char *resource;                               /* `request`; NULL: the trace's */
    src_loc at, profile_at, resource_at;
} scenario_trace_rule;

/* Column names of a `format: csv` trace (`workload.trace.columns`), NULL = absent. */
typedef struct scenario_trace_columns {
    const char *name, *submit, *duration, *end, *gpus, *gpu_milli, *gpu_type, *user, *queue,
        *klass, *cpu, *memory, *qos, *gpu_spec;
    int time_format;      /* trace_time_format */
    double cpu_unit_milli; /* milli-cores per unit of `cpu` */
    uint64_t mem_unit_bytes;
    src_loc at;
} scenario_trace_columns;

/* `workload.trace`: jobs read from a trace (workloads/trace.h, workloads/traceload.h). */
typedef struct scenario_trace {
    int format;        /* trace_format */
    const char *file;  /* resolved path */
    int mode;          /* SCN_TRACE_* */
    int64_t start_ns, length_ns; /* window after the first submission; length 0 = to the end */
    uint64_t limit;    /* most jobs (0 = all) */
    const char *resource;    /* what a traced GPU asks for (default nvidia.com/gpu) */
    uint32_t max_per_worker; /* most GPUs of one worker (one node) */
    bool cpu_pods;     /* keep pods that ask for no GPU (CPU-only pods, per_worker 0); default true */
    const char *traced_gpu;  /* catalog type the traced durations were measured on, or NULL */
    double inflate;    /* arrival-only: target share of GPU capacity (FGD's ratio); 0 = as is */
    bool shuffle;      /* arrival-only: seeded shuffle */
    int64_t interval_ns; /* arrival-only: time between arrivals */
    scenario_duration duration; /* helios: run time of each job */
    scenario_trace_columns columns; /* csv */
    size_t n_rules;
    scenario_trace_rule *rules;
    src_loc at, file_at, traced_gpu_at, resource_at, duration_at;
} scenario_trace;

typedef struct scenario_workload {
    size_t n_jobs;
    scenario_job_class *jobs;
    scenario_trace trace; /* present when cfg_present(trace.at) */
    src_loc at;
} scenario_workload;

/* A `key: value` policy parameter, kept as text for the policy's own init to check. */
typedef struct scenario_param {
    const char *key, *value;
    src_loc at, value_at; /* positions of the key and of the value */
} scenario_param;

typedef struct scenario_policy {
    const char *scheduler; /* a registered policy (model/policy/policy.h pol_find), default fifo */
    size_t n_params;
    scenario_param *params;
    src_loc at, scheduler_at;
} scenario_policy;

typedef struct scenario_outputs {
    const char *dir;            /* default "results/<name>", relative to the working directory */
    unsigned files;             /* SCN_OUT_* bits; default (files absent) SCN_OUT_ALL */
    int64_t sample_interval_ns; /* timeseries sampling period (default 60 s) */
    int64_t start_unix_ns;      /* outputs.start_time (RFC 3339) as Unix time, ns: the wall-clock
                                 * time of simulated time 0 in metrics.om; 0 when not given */
    src_loc at, dir_at, files_at, sample_interval_at, start_time_at;
} scenario_outputs;

/* What a run may cost before it is refused (`limits:`; experiments/estimate.h compares the estimate of
 * a scenario with them before anything is generated). */
typedef struct scenario_limits {
    uint64_t jobs;            /* jobs submitted over the horizon (default 10 000 000) */
    uint64_t timeseries_rows; /* rows of timeseries.csv (default 10 000 000) */
    uint64_t output_bytes;    /* all output files together (default 8 GiB) */
    uint64_t memory_bytes;    /* memory the run holds (default 16 GiB) */
    uint64_t events;          /* engine events the run executes (default 1 000 000 000) */
    src_loc at;
} scenario_limits;

/* A node measured with calib/ and fitted with `slicesim fit` (`calibration:`), replacing the
 * catalog defaults of one GPU type (model/fit/calapply.h says what it replaces). Forms:
 *   calibration: FILE
 *   calibration: {file: FILE, gpu: CATALOG-NAME}
 *   calibration: [FILE, {file: FILE, gpu: NAME}, ...]      (one per GPU type)
 * FILE is resolved against the scenario's directory and loaded at load time. Without `gpu` the
 * GPU type is the catalog's match for the measured device (calmodel_target). */
typedef struct scenario_calibration {
    const char *path;           /* field path as written: "calibration", "calibration[1]" */
    const char *file;           /* resolved path of the model JSON */
    const char *gpu;            /* `gpu:` as written, or NULL */
    const cal_fit *fit;         /* loaded model; NULL under SCENARIO_NO_FILES */
    const calapply_source *src; /* its node identity; NULL under SCENARIO_NO_FILES */
    const char *gpu_type;       /* catalog GPU type it applies to (set by scenario_load_* after
                                   validation against the embedded catalog), or NULL */
    const gpu_type *calibrated; /* that type with the model applied (experiments/calib_json.h
                                   calmodel_apply): a copy, arena-owned; the catalog keeps the
                                   datasheet type. NULL when gpu_type is */
    src_loc at, file_at, gpu_at;
} scenario_calibration;

/* A file the scenario refers to, after resolution. */
typedef struct scenario_ref {
    const char *path; /* resolved (scenario directory + reference) */
    const char *what; /* "mig-parted config", "device-plugin config" */
    src_loc at;       /* where the reference is written */
} scenario_ref;

typedef struct scenario_spec {
    const char *file; /* display name of the scenario file */
    const char *dir;  /* directory that relative references resolve against ("." if none) */
    const char *name;
    const char *description; /* or NULL */
    uint64_t seed;           /* master seed (required: no time-based default) */
    int64_t horizon_ns;      /* simulated time to run */
    scenario_cluster cluster;
    scenario_workload workload;
    scenario_policy policy;
    scenario_outputs outputs;
    scenario_limits limits;
    size_t n_calibrations;
    scenario_calibration *calibrations;
    scenario_faults faults; /* experiments/scenario_dyn.h */
    size_t n_services;
    scenario_service *services;       /* experiments/scenario_dyn.h */
    scenario_repartition repartition; /* experiments/scenario_dyn.h */
    size_t n_refs;
    scenario_ref *refs;
    const sweep_spec *sweep; /* the `sweep:` section (experiments/sweep.h), or NULL */
    const plan_spec *plan;   /* the `plan:` section (experiments/plan.h), or NULL; a scenario
                              * has at most one of the two */
    const struct scenario_resolved *resolved; /* what the run is built from, resolved at load
                                               * (experiments/resolve.h); NULL under
                                               * SCENARIO_NO_FILES */
    src_loc at, name_at, seed_at, horizon_at;
} scenario_spec;

/* Loader flags. */
enum {
    SCENARIO_NO_FILES = 1u << 0, /* open no referenced file and skip scenario_validate (fuzzing):
                                  * paths are only resolved, requests checked by kind only */
};

/* Load, override, validate and resolve the scenario at `path` (experiments/resolve.h: the
 * embedded data loaded, every referenced file read, the calibrated catalog, the workload
 * profiles, the job classes and the trace rules' work factors in s->resolved). `sets` holds n_sets overrides
 * "PATH=VALUE" applied before the walk (`--set`; see yamlx_set). On success returns 0 and sets
 * *out (arena-owned). SIM_EINPUT: errors were reported to d (all of them, up to the cap).
 * SIM_ENOENT / SIM_EIO: the scenario file itself cannot be read (errno holds the cause, nothing is
 * reported to d). */
int scenario_load_file(const char *path, const char *const *sets, size_t n_sets, unsigned flags,
                       arena *a, diag *d, scenario_spec **out);

/* An edit of the scenario's YAML tree applied after the --set overrides and before the walk (a
 * sweep point's axis values, experiments/sweep.h); it reports problems to d. */
typedef struct scenario_edit {
    int (*fn)(void *ctx, yamlx_doc *doc, diag *d);
    void *ctx; /* borrowed */
} scenario_edit;

/* scenario_load_file with an edit (NULL: none). */
int scenario_load_file_edit(const char *path, const char *const *sets, size_t n_sets,
                            const scenario_edit *edit, unsigned flags, arena *a, diag *d,
                            scenario_spec **out);

/* Same for `len` bytes at `buf` under display name `name`; references resolve against `dir`
 * (NULL: the directory part of `name`). */
int scenario_load_buffer(const char *name, const char *dir, const void *buf, size_t len,
                         const char *const *sets, size_t n_sets, unsigned flags, arena *a, diag *d,
                         scenario_spec **out);

/* scenario_load_buffer with an edit (NULL: none). */
int scenario_load_buffer_edit(const char *name, const char *dir, const void *buf, size_t len,
                              const char *const *sets, size_t n_sets, const scenario_edit *edit,
                              unsigned flags, arena *a, diag *d, scenario_spec **out);

/* Check a loaded spec against the GPU catalog and its mig-parted configs: every GPU type
 * exists; every MIG config exists and applies to each GPU of its node group (experiments/
 * migparted.h, under cluster.driver); every job's resource is advertised by some node group, as
 * the device plugin would name it; every calibration names a catalog GPU type its model was
 * measured on, used by some node group, one calibration per type. The layout each MIG group's
 * config places on each of its GPUs is recorded in the group (scenario_node_group.mig_gpus): the
 * run builds its cluster from them. scenario_load_* call it with the embedded catalog
 * (experiments/catalog_load.h), from resolve_scenario (experiments/resolve.h), unless
 * SCENARIO_NO_FILES. `a` receives the mig-parted data, the
 * layouts and names. Returns 0, or SIM_EINPUT after reporting every problem to d. */
int scenario_validate(scenario_spec *s, const gpu_catalog *cat, const phys_params *m, arena *a,
                      diag *d);

/* *out = cat with every calibrated GPU type of s in place of the datasheet one (the copies
 * scenario_validate made; gpu_catalog_with): the catalog a run uses. cat is not changed; the new
 * array of types comes from `a`. */
void scenario_catalog(const scenario_spec *s, const gpu_catalog *cat, arena *a, gpu_catalog *out);

/* `ref` resolved against the scenario's directory (absolute paths as they are); arena-owned. */
const char *scenario_resolve(const scenario_spec *s, arena *a, const char *ref);

/* Open `file`, a trace the scenario names at `at` (field `path`), for reading. NULL after
 * reporting "cannot read the WHAT (strerror); expected a readable file, got 'FILE'" to d at the
 * field: the loader's check and the run builder's read of the same file (it may have gone in
 * between) give one message, an input error (exit 2). Caller closes. */
FILE *scenario_open_trace(const char *file, const char *what, src_loc at, const char *path,
                          diag *d);

/* The reader settings of the scenario's workload trace (workload.trace): format, resolved file,
 * the format's column preset or the csv mapping, the helios duration, the seed. Strings borrowed
 * from s. */
trace_src scenario_trace_source(const scenario_spec *s);
/* The reader settings of service i's arrival trace (services[i].trace: dlrm, resolved file).
 * Strings borrowed from s. */
trace_src scenario_service_trace_source(const scenario_spec *s, size_t i);

/* The resolved scenario as JSON (run.json's "config"), written from the schema tables that read
 * it (cfg_write_map over scenario_schema): every key in schema order, defaults filled in, units
 * converted and named (experiments/cfg.h "Writing back"), with what the loader resolved (node
 * groups read from cluster.trace or cluster.snapshot, calibration sources); `sweep` and `plan`
 * are left out. Numbers through o->number. Caller owns. */
struct cJSON *scenario_config_json(const scenario_spec *s, const cfg_out *o);
/* The scenario's root schema table (its sub-tables hang from .sub). */
extern const cfg_field scenario_schema[];

/* Totals over the cluster: nodes and GPUs. */
uint64_t scenario_node_count(const scenario_spec *s);
uint64_t scenario_gpu_count(const scenario_spec *s);

/* Node group g's labels and taints, and job class j's nodeSelector and tolerations, as
 * model/cluster/taint.h sees them (borrowing the spec's strings; arrays allocated from a). */
void scenario_group_meta(const scenario_node_group *g, arena *a, taint_node *out);
void scenario_class_place(const scenario_job_class *j, arena *a, taint_pod *out);

/* Does group g match an entry of a class's `nodes` (its label, or without one its GPU type;
 * '|'-separated)? NULL matches every group. */
bool scenario_group_named(const scenario_node_group *g, const char *nodes);

#endif
