/* model/policy/policy.h - the scheduling/placement policy interface, the read-only cluster view,
 * the decision buffer and the policy registry (STYLE.md section 2).
 *
 * A policy is a table of callbacks (policy_ops) with private state of state_size bytes, which
 * the caller allocates zeroed. On each event that may free or need resources (a job arrives, a
 * job ends) the model calls the policy with a read-only view of the cluster and an empty
 * decision buffer; the policy appends decisions ("place job J on devices {...}"). The model then
 * validates every decision against the real state and applies the valid ones in order, so a buggy
 * policy cannot corrupt cluster state: an invalid decision is counted and dropped (the job stays
 * queued). The view is a snapshot at call time: decisions of the same call are not reflected in
 * it, so a policy placing several jobs in one call must track what it already handed out.
 * A policy sees ids and value copies only: no mutable model struct, no engine, no I/O.
 * Ownership: the view and the buffer are borrowed for the duration of a callback. Strings in
 * pol_device / pol_job are borrowed from the model and valid while the run lives.
 */
#ifndef SIMPROJ_MODEL_POLICY_POLICY_H
#define SIMPROJ_MODEL_POLICY_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/hw/catalog.h"
#include "model/hw/milli.h"
#include "model/cluster/ids.h"
#include "model/cluster/job.h"
#include "sim/diag.h"
#include "sim/simtime.h"

/* ---- parameters ---------------------------------------------------------------------------- */

/* One `key: value` of the scenario's policy parameters, as text, with its position. */
typedef struct pol_param {
    const char *key;   /* borrowed */
    const char *value; /* borrowed */
    src_loc at;        /* position of the key */
    src_loc value_at;  /* position of the value */
} pol_param;

/* The parameters given to a policy (may be empty). */
typedef struct param_set {
    size_t n;
    const pol_param *items; /* n entries, borrowed */
    const char *path;       /* field path of the mapping, e.g. "policy.params" */
    src_loc at;             /* position of the mapping (or of the policy name) */
} param_set;

/* ---- read-only cluster view ---------------------------------------------------------------- */

typedef struct cluster_view cluster_view; /* opaque; built by the model (model/cluster/world.c) */

/* A device as the policy sees it. */
typedef struct pol_device {
    dev_id id;
    node_id node;
    gpu_id gpu;
    res_id resource;
    const char *resource_name; /* e.g. "nvidia.com/mig-1g.5gb" */
    const char *profile;       /* MIG profile name, or NULL for a whole GPU */
    uint32_t slots;            /* units it advertises */
    uint32_t free;             /* units not held by a job (0 while cordoned or inactive) */
    bool active;               /* advertised now (model/cluster/cluster.h: reconfigurable GPUs) */
    bool cordoned;             /* takes no new pod (draining, or down after a fault) */
    uint32_t used;             /* units held by jobs */
    int mig_start;             /* placement start of a MIG instance, -1 for a whole GPU */
    int sms;
    uint64_t mem_bytes;
    uint64_t mem_used_bytes;
} pol_device;

/* A job as the policy sees it. */
typedef struct pol_job {
    job_id id;
    const char *class_name;
    const char *resource; /* requested resource name */
    uint32_t per_worker;  /* units per worker */
    uint32_t n_workers;   /* workers; each worker's units on one node */
    uint64_t mem_bytes;   /* per unit, 0 = not stated */
    double work_s;        /* solo run time, s */
    sim_time submit;
    double done_s;      /* work kept from earlier runs (checkpoints), s: a run needs
                         * work_s - done_s */
    sim_time run_start; /* start of the current run while running, else -1 */
    job_pod pod; /* pod attributes (priority, gpu_milli, cpu, gpu_spec, ...); strings borrowed */
} pol_job;

/* Current simulated time, ns. */
sim_time pol_now(const cluster_view *cv);
uint32_t pol_n_nodes(const cluster_view *cv);
/* Devices of node n: ids first .. first + count - 1 (devices are GPU-major, GPUs node-major). */
void pol_node_devices(const cluster_view *cv, node_id n, dev_id *first, uint32_t *count);
/* Device d (from pol_node_devices) into *out. */
void pol_device_get(const cluster_view *cv, dev_id d, pol_device *out);
/* Device d's resource (pol_device.resource), without the rest of pol_device_get. */
res_id pol_device_resource(const cluster_view *cv, dev_id d);
/* Job j (any job the policy was told about) into *out. */
void pol_job_get(const cluster_view *cv, job_id j, pol_job *out);
/* GPUs (ids 0 .. n-1, node-major); GPU g's catalog type (re-partitioners enumerate its layouts)
 * and whether its MIG layout may change (a reconfigurable GPU: model/cluster/cluster.h). */
uint32_t pol_n_gpus(const cluster_view *cv);
const gpu_type *pol_gpu_type(const cluster_view *cv, gpu_id g);
bool pol_gpu_reconfigurable(const cluster_view *cv, gpu_id g);
/* May job j run on node n: its pinned node (pod.node_pin), the node's labels against its
 * nodeSelector, the node's NoSchedule/NoExecute taints against its tolerations (model/cluster/taint.h)?
 * Every policy's filter asks this; the model refuses a placement on a node that does not admit
 * the job. */
bool pol_node_admits(const cluster_view *cv, const pol_job *j, node_id n);
/* PreferNoSchedule taints of node n that job j does not tolerate: the policies prefer nodes
 * with fewer of them (before their own score; kube-scheduler adds TaintToleration's normalised
 * score to the others instead, so this is a stronger preference). */
uint32_t pol_node_prefer_penalty(const cluster_view *cv, const pol_job *j, node_id n);
/* Whether job j waits for a placement now. */
bool pol_job_queued(const cluster_view *cv, job_id j);
/* Devices job j holds while running (worker-major; NULL and 0 otherwise): *units borrowed until
 * the job's state changes. Returns how many; *running tells whether it runs. */
uint32_t pol_job_placement(const cluster_view *cv, job_id j, const dev_id **units, bool *running);
/* Free units of resource r on node n (all its devices), and units it advertises. */
uint32_t pol_node_free(const cluster_view *cv, node_id n, res_id r);
/* Number of jobs of the run (every one may be read with pol_job_get, submitted or not: a policy
 * may study the workload, as FGD derives its typical pods from it). */
uint32_t pol_n_jobs(const cluster_view *cv);
/* The run's master seed (a policy that draws random numbers opens its own stream from it). */
uint64_t pol_seed(const cluster_view *cv);

/* Predicted normalised speed of job spec js alone on MIG profile p of GPU type g: its throughput
 * there over its throughput alone on the type's largest classic MIG profile; 0 when it cannot
 * run there. The model's physics supplies it (model/cluster/jobrate.h jobrate_slice_speed); pointers
 * borrowed for the call. */
typedef double pol_slice_speed_fn(void *ctx, const job_spec *js, const gpu_type *g,
                                  const mig_profile *p);
/* Predicted normalised speed of job j (one asking for any MIG slice, JOB_RES_MIG_ANY) on MIG
 * profile index p of GPU g's type (MISO's normalisation: 1 = as fast as on the largest profile,
 * 7g.40gb on an A100): 0 when the job's memory exceeds the profile's, when the physics says it
 * cannot run there (out of memory, invalid), or when the run has no physics. */
double pol_job_slice_speed(const cluster_view *cv, job_id j, gpu_id g, int p);


/* A GPU as the policy sees it. */
typedef struct pol_gpu {
    gpu_id id;
    node_id node;
    const char *type_name; /* the name gpu_spec matches: the node's label for its GPU model
                            * (a trace's "G2") when it has one, else the catalog name */
    dev_id first_dev;      /* its devices: first_dev .. first_dev + n_devs - 1 */
    uint32_t n_devs;
    bool shareable;      /* takes fractional shares (whole, MIG off, not time-sliced/MPS) */
    uint32_t milli_free; /* shareable: milli-GPU free (1000 = idle); else 1000 when none of
                          * its devices' units is held, 0 otherwise */
} pol_gpu;

/* GPUs of node n: ids first .. first + count - 1. */
void pol_node_gpus(const cluster_view *cv, node_id n, gpu_id *first, uint32_t *count);
void pol_gpu_get(const cluster_view *cv, gpu_id g, pol_gpu *out);
/* CPU (milli-cores) and host memory (bytes) of node n: capacity (0 = not modelled) and free
 * (UINT64_MAX when not modelled). */
uint64_t pol_node_cpu_capacity(const cluster_view *cv, node_id n);
uint64_t pol_node_cpu_free(const cluster_view *cv, node_id n);
uint64_t pol_node_mem_capacity(const cluster_view *cv, node_id n);
uint64_t pol_node_mem_free(const cluster_view *cv, node_id n);
/* Version of node n: equal values mean nothing of the node the view shows has changed (its
 * devices' units and shares, memory held, CPU and host memory, cordons, active devices); a
 * policy may cache what it derived from the node under it. */
uint64_t pol_node_version(const cluster_view *cv, node_id n);
/* Free-capacity index: the lowest node >= from with at least k free units of r, or with a
 * shareable GPU with at least milli free; pol_n_nodes when none. O(log nodes). */
node_id pol_next_node(const cluster_view *cv, res_id r, uint32_t k, node_id from);
node_id pol_next_node_share(const cluster_view *cv, uint32_t milli, node_id from);
/* Classes of nodes alike (model/cluster/cluster.h): nodes of one class that are idle (hold
 * nothing) look the same to every policy but for their id, so one of them may stand for all.
 * POL_NO_CLASS: a node alike to no other. The idle changes are logged: pol_idle_seq counts them,
 * pol_idle_changed(i) names the node of change i, or returns false when the change is no longer
 * kept (then read pol_node_idle of every node). pol_next_busy_node, _share and pol_next_busy: as
 * pol_next_node and pol_next_node_share, and any node, with the idle nodes left out. */
#define POL_NO_CLASS UINT32_MAX
uint32_t pol_n_classes(const cluster_view *cv);
uint32_t pol_node_class(const cluster_view *cv, node_id n);
bool pol_node_idle(const cluster_view *cv, node_id n);
uint64_t pol_idle_seq(const cluster_view *cv);
bool pol_idle_changed(const cluster_view *cv, uint64_t i, node_id *n);
node_id pol_next_busy_node(const cluster_view *cv, res_id r, uint32_t k, node_id from);
node_id pol_next_busy_node_share(const cluster_view *cv, uint32_t milli, node_id from);
node_id pol_next_busy(const cluster_view *cv, node_id from);
/* Id of an advertised resource by name; false when no node advertises it. */
bool pol_resource_find(const cluster_view *cv, const char *name, res_id *out);

/* ---- decisions ----------------------------------------------------------------------------- */

typedef enum pol_decision_kind {
    POL_PLACE,   /* start job `job` on `n_units` devices (worker-major, per_worker each) */
    POL_PREEMPT, /* stop running job `job` and queue it again (it restarts from the beginning;
                  * the policy re-queues it itself) */
    POL_EVICT,   /* kill running job `job`; it is queued again, keeping its last checkpoint, and
                  * the policy hears of it through on_arrival (model/cluster/world.h world_kill) */
    POL_RECONFIGURE, /* give reconfigurable GPU `gpu` the layout whose devices are `units` (its
                      * candidate devices: MIG instances, or the one whole-GPU device); the
                      * model drains the GPU first, evicting its pods when `evict` (model/cluster/reconf.h) */
} pol_decision_kind;

typedef struct pol_decision {
    pol_decision_kind kind;
    job_id job;
    uint32_t n_units;
    const dev_id *units; /* borrowed from the buffer, valid until it is cleared */
    uint32_t n_nodes;    /* 0, or n_workers: the node of each worker (needed when a worker holds
                          * no GPU unit: a CPU-only pod) */
    const node_id *nodes;
    gpu_id gpu;          /* POL_RECONFIGURE */
    bool evict;          /* POL_RECONFIGURE */
} pol_decision;

typedef struct decision_buf decision_buf;

/* Create an empty buffer; caller owns (decision_buf_destroy). */
decision_buf *decision_buf_create(void);
/* Free the buffer; NULL is a no-op. */
void decision_buf_destroy(decision_buf *b);
/* Forget every decision (keeps the memory). */
void decision_buf_clear(decision_buf *b);
/* Append "place job j on units[0..n)" (copied). */
void pol_place(decision_buf *b, job_id j, const dev_id *units, uint32_t n);
/* Append "place job j: worker w on nodes[w], its units from units[]" (both copied). */
void pol_place_on(decision_buf *b, job_id j, const dev_id *units, uint32_t n,
                  const node_id *nodes, uint32_t n_workers);
/* Append "preempt running job j". */
void pol_preempt(decision_buf *b, job_id j);
/* Append "lay GPU g out as devs[0..n)" (copied), evicting its pods when evict. */
void pol_reconfigure(decision_buf *b, gpu_id g, const dev_id *devs, uint32_t n, bool evict);
/* Number of decisions, and decision i (< count) into *out. */
size_t decision_buf_count(const decision_buf *b);
void decision_buf_get(const decision_buf *b, size_t i, pol_decision *out);

/* ---- placement helpers shared by policies ------------------------------------------------- */

/* Units, CPU and host memory a policy has handed out during one call: the view does not see
 * them until the model applies the decisions, so a policy placing several jobs in one call
 * records them here. pol_scratch_load starts a call (O(1)); free units (and a node's free CPU
 * and memory) are the view's minus those recorded, plus those given (pol_scratch_give*). */
typedef struct pol_node_use {
    node_id node;
    uint64_t cpu_milli, mem_bytes;
} pol_node_use;

typedef struct pol_scratch {
    dev_id *taken; /* units handed out in this call; owned (pol_scratch_fini) */
    size_t n, cap;
    dev_id *given; /* units counted free although held now (pol_scratch_give); owned */
    size_t n_given, cap_given;
    pol_node_use *used; /* one per worker placed in this call: its node's CPU and memory; owned */
    size_t n_used, cap_used;
    pol_node_use *returned; /* CPU and memory counted free although held now; owned */
    size_t n_returned, cap_returned;
} pol_scratch;

/* Count one unit of device d as free although a running job holds it (a policy looking at the
 * cluster as it will be once that job ends, e.g. a backfill reservation). */
void pol_scratch_give(pol_scratch *s, dev_id d);
/* Count cpu_milli and mem_bytes of node n as free although a running worker holds them. */
void pol_scratch_give_node(pol_scratch *s, node_id n, uint64_t cpu_milli, uint64_t mem_bytes);
/* Start a call: forget what was handed out (and given) before. */
void pol_scratch_load(pol_scratch *s, const cluster_view *cv);
/* Record in dst what src has handed out (its units, CPU and memory), in place of what dst had
 * handed out; what dst was given stays. */
void pol_scratch_copy_taken(pol_scratch *dst, const pol_scratch *src);
/* Free the scratch's memory; the struct may be loaded again. */
void pol_scratch_fini(pol_scratch *s);
/* Free units of device d, less those recorded in s. */
uint32_t pol_scratch_free(const pol_scratch *s, const cluster_view *cv, dev_id d);

/* First fit: place each worker of job j on the lowest-numbered node where it passes the model's
 * checks: per_worker free units of the requested resource on GPUs whose type its gpu_spec allows
 * (taking each unit from such a device with the fewest units in use, lowest id on ties: the
 * device plugin's spread, so replicas of time-sliced GPUs are spread over the node's GPUs before
 * they are stacked), and the worker's CPU and host memory free on the node (when the node states
 * them). A CPU-only worker (per_worker 0) takes the lowest node with its CPU and memory free.
 * A fractional pod (gpu_milli) takes a unit like a whole one, i.e. a GPU nobody holds.
 * On success writes per_worker * n_workers device ids, worker-major, into units and the node of
 * each worker into nodes (n_workers), records them in s and returns true; otherwise changes
 * nothing and returns false. */
bool pol_first_fit(const cluster_view *cv, pol_scratch *s, const pol_job *j, dev_id *units,
                   node_id *nodes);

/* ---- the policy interface and registry ---------------------------------------------------- */

typedef struct policy_ops {
    const char *name;    /* config key, e.g. `policy: fifo` */
    const char *summary; /* one line, printed by `slicesim policies` */
    size_t state_size;   /* bytes of zeroed state the caller provides as `self` */
    /* Check and take the parameters; report bad ones through d (with their positions) and
     * return SIM_EINPUT, else 0. */
    int (*init)(void *self, const param_set *params, diag *d);
    /* Release what init and the callbacks acquired (not `self` itself). May be NULL. */
    void (*fini)(void *self);
    /* Job j was submitted (it is queued). */
    void (*on_arrival)(void *self, const cluster_view *cv, job_id j, decision_buf *out);
    /* Job j ended (done or failed); its resources are already free. */
    void (*on_finish)(void *self, const cluster_view *cv, job_id j, decision_buf *out);
    /* Capacity changed without a job ending (a repaired GPU, a killed job's freed units, a
     * device back from reconfiguration). May be NULL: the policy then waits for the next
     * arrival or finish. A killed job comes back through on_arrival first (it is queued). */
    void (*on_capacity)(void *self, const cluster_view *cv, decision_buf *out);
    /* Optional: one scheduling cycle (kube-scheduler's: one pod or gang, with the preemptions it
     * needs) on the current state. The model applies the decisions and calls again, so every
     * call sees the decisions before it; false (nothing appended) ends the round. Called after
     * on_arrival and on_finish. May be NULL. */
    bool (*pick)(void *self, const cluster_view *cv, decision_buf *out);
    /* Optional: bytes of the caches the policy keeps over a run on n_nodes nodes whose pods come
     * in n_shapes distinct shapes (the run's memory estimate, experiments/estimate.h), from
     * their real sizes. NULL: none worth counting. */
    double (*cache_bytes)(uint32_t n_nodes, double n_shapes);
} policy_ops;

/* Policy by name; NULL when unknown. Static storage. */
const policy_ops *pol_find(const char *name);
/* Registered policy i (in name order), or NULL past the last one. Static storage. */
const policy_ops *pol_at(size_t i);
/* Write the registered names, comma-separated ("backfill, fifo"), into buf (NUL-terminated,
 * truncated to len). Returns buf. For "unknown policy 'x'; expected one of: ..." messages. */
const char *pol_names(char *buf, size_t len);

/* Report every parameter in params as unknown (for policies that take none); returns 0 when
 * params is empty, else SIM_EINPUT. */
int pol_reject_params(const char *policy, const param_set *params, diag *d);

#endif
