/* model/cluster/cluster.h - cluster state: nodes, GPUs, the devices they advertise, and who uses them.
 *
 * Kubernetes semantics (NVIDIA k8s-device-plugin, mixed MIG strategy; ../shared/data/mig-facts.md
 * section 7):
 *  - a GPU is whole, MIG-partitioned (one device per GPU instance, from a mig-parted layout),
 *    time-sliced, or shared under MPS;
 *  - a whole GPU advertises `nvidia.com/gpu`; a MIG instance of profile P advertises
 *    `nvidia.com/mig-P` with '+' replaced by '.' (`1g.5gb+me` -> `nvidia.com/mig-1g.5gb.me`)
 *    under the mixed strategy, and `nvidia.com/gpu` under the single strategy;
 *  - time-slicing (and MPS) gives a device `replicas` schedulable units of the same resource
 *    ("the plugin simply creates N references to each GPU and indiscriminately hands them out");
 *    with renameByDefault the resource is advertised as `<name>.shared`. Only resources named in
 *    the sharing rules are replicated; others stay exclusive. MPS is for whole GPUs only, and each
 *    MPS replica gets memory/replicas (pinned-memory limit) and 100/replicas % of the SMs.
 * A *device* is one schedulable thing the plugin advertises (a whole GPU or a MIG instance) with
 * `slots` units (1, or the replicas). A job's unit takes one slot.
 * Memory rule at job start (DESIGN.md section 4): exclusive device: need > device memory -> OOM;
 * time-sliced: co-runners share one capacity, so need + memory already held > capacity -> OOM;
 * MPS: need > device memory / replicas -> OOM.
 * Request size: with failRequestsGreaterThanOne (time-slicing; always under MPS) the plugin refuses
 * a container's request for more than one unit of a shared resource (UnexpectedAdmissionError);
 * such devices have one_per_request set and the world fails the job (model/cluster/world.h).
 * Fractional GPUs (openb's gpu_milli; alibaba/clusterdata issue 193: a share of the GPU's memory
 * plus at least that share of its time): a whole GPU with MIG off and no sharing rule takes
 * shares of 1..999 milli-GPU (cluster_take_share) besides whole units; a whole unit holds all
 * 1000. Such a device is *shareable*; its milli_used counts what its pods hold, and while any
 * share is held the device counts one unit in use (so no whole-unit request lands on it).
 * Nodes may state CPU (milli-cores) and host-memory capacities; pods take them per worker
 * (cluster_node_take). A capacity of 0 means "not modelled": every request fits.
 * Free-capacity index (model/cluster/capidx.h): per resource, the free units of each node; and the
 * largest free share of each node's shareable GPUs; so placement finds the next node that can
 * hold a request in O(log nodes) (cluster_next_node, cluster_next_node_share).
 * Ids are dense and ordered: nodes in config order, GPUs node-major, devices GPU-major, so
 * iterating by id is deterministic. Units: bytes, SM counts.
 * Ownership: cluster_create copies what it needs; the catalog entries (gpu_type, mig_profile) are
 * borrowed and must outlive the cluster. All returned pointers are borrowed, valid until
 * cluster_destroy.
 */
#ifndef SIMPROJ_MODEL_CLUSTER_H
#define SIMPROJ_MODEL_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/hw/catalog.h"
#include "model/hw/milli.h"
#include "model/cluster/ids.h"
#include "model/cluster/taint.h"

#define CLUSTER_RES_GPU "nvidia.com/gpu"
#define CLUSTER_RES_MIG_PREFIX "nvidia.com/mig-"
#define CLUSTER_SHARED_SUFFIX ".shared"

typedef enum cluster_sharing {
    CLUSTER_SHARE_NONE,      /* exclusive: one unit per device */
    CLUSTER_SHARE_TIMESLICE, /* device-plugin timeSlicing: replicas per named resource */
    CLUSTER_SHARE_MPS,       /* device-plugin mps: replicas per whole GPU */
} cluster_sharing;

/* One entry of a device-plugin sharing config: `resources: - {name, replicas}`. */
typedef struct cluster_share_rule {
    const char *resource; /* un-renamed resource name, e.g. "nvidia.com/gpu"; NULL = every
                           * resource of the GPU; borrowed */
    uint32_t replicas;    /* >= 1 */
} cluster_share_rule;

/* How one GPU is configured. */
typedef struct cluster_gpu_cfg {
    const gpu_type *type; /* catalog entry, borrowed */
    const char *label;    /* the node's own name for its GPU model (a trace's "G2", "T4"), or
                           * NULL; a pod's gpu_spec may name it or the catalog name; borrowed for
                           * the cluster's life */
    bool mig_enabled;     /* MIG mode on: devices are the instances below */
    bool mig_single;      /* single MIG strategy: instances advertise nvidia.com/gpu */
    uint32_t n_mig;       /* MIG instances (0 allowed: MIG on, nothing advertised) */
    const mig_profile *mig[GPU_MAX_SLICES]; /* profile of each instance, borrowed */
    int mig_start[GPU_MAX_SLICES];          /* placement start (memory slice) of each instance */
    cluster_sharing sharing;
    bool rename_by_default;              /* advertise shared resources as <name>.shared */
    bool fail_requests_greater_than_one; /* device-plugin failRequestsGreaterThanOne (time-
                                          * slicing; MPS behaves as if true whatever it says) */
    uint32_t n_rules;                /* sharing rules (time-slicing/MPS); 0 when sharing is NONE */
    const cluster_share_rule *rules; /* borrowed during cluster_create only */
    bool reconfigurable;  /* its MIG layout (and MIG mode) may change during the run: it gets one
                           * device for every placement of every classic profile of its type
                           * (mig_profile_is_classic, at each allowed start) and one whole-GPU
                           * device; those of the configuration above are active, the others
                           * inactive (cluster_set_active). Exclusive sharing and the mixed
                           * strategy only; the whole-GPU device takes no fractional share. */
    uint32_t ts_replicas; /* reconfigurable only: 0, or >= 2 to add one more candidate, the whole
                           * GPU time-sliced by the device plugin into this many replicas of
                           * `nvidia.com/gpu.shared` (timeSlicing with renameByDefault; the last
                           * device of the GPU), so the GPU may also switch to time-slicing */
} cluster_gpu_cfg;

typedef struct cluster_node_cfg {
    const char *name; /* copied */
    uint32_t n_gpus;
    const cluster_gpu_cfg *gpus; /* n_gpus entries; borrowed during cluster_create */
    uint64_t cpu_milli;          /* CPU capacity, milli-cores; 0 = not modelled (unlimited) */
    uint64_t host_mem_bytes;     /* host memory capacity, bytes; 0 = not modelled (unlimited) */
    const taint_node *meta;      /* labels and taints (model/cluster/taint.h), or NULL: none; borrowed
                                  * for the cluster's life */
} cluster_node_cfg;

typedef struct cluster_cfg {
    uint32_t n_nodes;
    const cluster_node_cfg *nodes; /* borrowed during cluster_create */
} cluster_cfg;

typedef struct cluster_gpu {
    node_id node;
    uint32_t index;       /* GPU index on its node */
    const gpu_type *type; /* borrowed catalog entry */
    const char *label;    /* cluster_gpu_cfg.label (borrowed), or NULL */
    bool mig_enabled;
    cluster_sharing sharing;
    dev_id first_dev; /* its devices are first_dev .. first_dev + n_devs - 1 */
    uint32_t n_devs;
    bool reconfigurable; /* see cluster_gpu_cfg; its devices include inactive candidates */
} cluster_gpu;

typedef struct cluster_device {
    node_id node;
    gpu_id gpu;
    uint32_t index;             /* instance index on the GPU (0 for a whole GPU) */
    const mig_profile *profile; /* MIG instance profile, NULL for a whole GPU; borrowed */
    int mig_start;              /* placement start of the instance, -1 for a whole GPU */
    res_id resource;            /* what it advertises */
    cluster_sharing sharing;    /* NONE unless a sharing rule names its resource */
    uint32_t slots;             /* schedulable units: 1, or the replicas */
    uint32_t used;              /* units currently held by jobs */
    bool one_per_request;       /* shared, and a request for more than one of its units fails
                                 * at allocation (failRequestsGreaterThanOne, or MPS) */
    int sms;                    /* SMs of the device (whole GPU: sms_total) */
    uint64_t mem_bytes;         /* memory of the device */
    uint64_t mem_used_bytes;    /* memory held by the jobs on it */
    bool shareable;             /* takes fractional shares: whole GPU, MIG off, not shared */
    uint32_t milli_used;        /* shareable: milli-GPU held (a whole unit holds 1000); else 0 */
    bool cordoned;              /* takes no new unit (failed and under repair, or draining for a
                                 * new MIG layout); units already held stay held */
    bool active;                /* advertised now; false for a reconfigurable GPU's candidate
                                 * devices outside its current layout: no capacity, no units */
} cluster_device;

#define CLUSTER_UNLIMITED UINT64_MAX

typedef struct cluster cluster;

/* Build the cluster. Returns 0 and sets *out (caller owns, cluster_destroy), or SIM_EINPUT with
 * a one-line reason in `why` (at most why_len bytes) when the config is inconsistent: MIG on a
 * GPU type without MIG, MPS on a MIG GPU, zero replicas, no nodes. (Loaders report such errors
 * with a file position first; this is the model's own guard.) */
int cluster_create(const cluster_cfg *cfg, cluster **out, char *why, size_t why_len);
/* Free the cluster; NULL is a no-op. */
void cluster_destroy(cluster *c);

uint32_t cluster_n_nodes(const cluster *c);
uint32_t cluster_n_gpus(const cluster *c);
uint32_t cluster_n_devices(const cluster *c);
uint32_t cluster_n_resources(const cluster *c);

/* Devices of node n: ids first .. first + count - 1 (devices are node-major). */
void cluster_node_devices(const cluster *c, node_id n, dev_id *first, uint32_t *count);
/* Labels and taints of node n (cluster_node_cfg.meta, borrowed), or NULL. */
const taint_node *cluster_node_meta(const cluster *c, node_id n);
/* Node name (copied at create). */
const char *cluster_node_name(const cluster *c, node_id n);
/* GPU and device by id (id < count). */
const cluster_gpu *cluster_gpu_get(const cluster *c, gpu_id g);
const cluster_device *cluster_device_get(const cluster *c, dev_id d);
/* Device d's resource (its cluster_device.resource, read from a packed array). */
res_id cluster_device_resource(const cluster *c, dev_id d);
/* Resource name by id (owned by the cluster), and id by name; false when not advertised (or
 * name is NULL: a CPU-only pod asks for none). */
const char *cluster_resource_name(const cluster *c, res_id r);
bool cluster_resource_find(const cluster *c, const char *name, res_id *out);

/* Units of resource r that node n advertises (capacity), and how many of them are free (not
 * held, and not on a cordoned device). */
uint32_t cluster_capacity(const cluster *c, node_id n, res_id r);
uint32_t cluster_free(const cluster *c, node_id n, res_id r);
/* Cluster-wide units advertised and in use, all resources. */
uint32_t cluster_units_total(const cluster *c);
uint32_t cluster_units_used(const cluster *c);

/* Kept up to date by take/give, O(1): GPUs with at least one unit held, SMs of the devices with
 * at least one unit held, and units of resource r held cluster-wide. */
uint32_t cluster_gpus_busy(const cluster *c);
uint32_t cluster_sms_busy(const cluster *c);
uint32_t cluster_res_used(const cluster *c, res_id r);

/* Would a unit needing mem_bytes (0 = unstated) fit in device d's memory right now? */
bool cluster_mem_fits(const cluster *c, dev_id d, uint64_t mem_bytes);
/* Take one unit of device d holding mem_bytes of memory. The device must have a free slot. */
void cluster_take(cluster *c, dev_id d, uint64_t mem_bytes);
/* Give back one unit of device d holding mem_bytes. */
void cluster_give(cluster *c, dev_id d, uint64_t mem_bytes);

/* Take a fractional share of milli (1..999) milli-GPU of shareable device d, holding mem_bytes
 * of its memory; the device must have that much free (cluster_share_free). */
void cluster_take_share(cluster *c, dev_id d, uint32_t milli, uint64_t mem_bytes);
/* Give back a share taken with cluster_take_share. */
void cluster_give_share(cluster *c, dev_id d, uint32_t milli, uint64_t mem_bytes);
/* Would a share of milli (1..999) milli-GPU of device d hold a footprint of mem_bytes? Its
 * memory slice is that share of the device's memory (alibaba/clusterdata issue 193: 0.6 GPU is
 * 60 % of its memory); the shares never overlap (their sum is at most 1000). */
bool cluster_share_mem_fits(const cluster *c, dev_id d, uint32_t milli, uint64_t mem_bytes);
/* Milli-GPU free on device d for a share: 1000 - milli_used when shareable, else 0. */
uint32_t cluster_share_free(const cluster *c, dev_id d);

/* GPUs of node n: ids first .. first + count - 1 (GPUs are node-major). */
void cluster_node_gpus(const cluster *c, node_id n, gpu_id *first, uint32_t *count);
/* CPU (milli-cores) and host memory (bytes) of node n: capacity (0 = not modelled) and free
 * (CLUSTER_UNLIMITED when not modelled). */
uint64_t cluster_node_cpu_capacity(const cluster *c, node_id n);
uint64_t cluster_node_cpu_free(const cluster *c, node_id n);
uint64_t cluster_node_mem_capacity(const cluster *c, node_id n);
uint64_t cluster_node_mem_free(const cluster *c, node_id n);
/* Take / give back one worker's CPU and host memory on node n (must fit). */
void cluster_node_take(cluster *c, node_id n, uint64_t cpu_milli, uint64_t mem_bytes);
void cluster_node_give(cluster *c, node_id n, uint64_t cpu_milli, uint64_t mem_bytes);

/* The lowest node >= from with at least k free units of resource r, or cluster_n_nodes when
 * none (O(log nodes)). */
node_id cluster_next_node(const cluster *c, res_id r, uint32_t k, node_id from);
/* The lowest node >= from with a shareable GPU with at least milli free, or cluster_n_nodes. */
node_id cluster_next_node_share(const cluster *c, uint32_t milli, node_id from);
/* Classes of nodes alike: nodes whose labels and taints (the same cluster_node_cfg.meta), CPU and
 * host memory, GPUs (type, label, MIG, sharing) and devices are the same look alike to a policy
 * whenever they hold nothing, so a policy may score one of them for all. Classes are numbered
 * 0 .. cluster_n_classes - 1 in the order of their first node; a node alike to no other, or with
 * a reconfigurable GPU, has CLUSTER_NO_CLASS. A node is *idle* when it has a class and holds
 * nothing: no unit, share or device memory, no cordoned device, no CPU or host memory. */
#define CLUSTER_NO_CLASS UINT32_MAX
uint32_t cluster_n_classes(const cluster *c);
uint32_t cluster_node_class(const cluster *c, node_id n);
bool cluster_node_idle(const cluster *c, node_id n);
/* The log of nodes whose idleness changed: cluster_idle_seq counts the changes since creation;
 * change i (< seq) names its node in *n and returns true, or false when it is no longer kept
 * (the last cluster_n_nodes changes are), so that a reader who keeps its own record of the idle
 * nodes brings it up to date by reading the changes since it last looked, or all nodes. */
uint64_t cluster_idle_seq(const cluster *c);
bool cluster_idle_changed(const cluster *c, uint64_t i, node_id *n);
/* As cluster_next_node and cluster_next_node_share, idle nodes left out; cluster_next_busy: the
 * lowest node >= from that is not idle (cluster_n_nodes when none). O(log nodes). */
node_id cluster_next_busy_node(const cluster *c, res_id r, uint32_t k, node_id from);
node_id cluster_next_busy_node_share(const cluster *c, uint32_t milli, node_id from);
node_id cluster_next_busy(const cluster *c, node_id from);
/* Make device d of a reconfigurable GPU advertised (on) or not: its slots join or leave the
 * capacity (cluster_capacity, cluster_units_total). It must hold nothing. Cordoning is separate
 * (a cordoned device blocks its slots only while active). Setting the state it has is a no-op. */
void cluster_set_active(cluster *c, dev_id d, bool on);
/* Record GPU g's MIG mode (a reconfigurable GPU switched between MIG and a whole GPU). A
 * reconfigurable GPU's `sharing` follows the device made active last (cluster_set_active): the
 * time-sliced candidate makes it CLUSTER_SHARE_TIMESLICE, any other NONE. */
void cluster_set_mig_mode(cluster *c, gpu_id g, bool on);

/* Version of node n: a counter that changes whenever anything of the node a policy can see
 * changes (units or shares taken or given, memory held, CPU and host memory, cordons, active
 * devices, MIG mode); equal versions mean an unchanged node. Starts at 0. For caches. */
uint64_t cluster_node_version(const cluster *c, node_id n);

/* Share of a GPU one unit of device d stands for: a whole GPU 1, a MIG instance its compute
 * slices over the GPU's (3g.20gb: 3/7), divided by the device's slots (replicas). For GPU-hours. */
double cluster_unit_gpu_share(const cluster *c, dev_id d);

/* Cordon (on) or uncordon device d: a cordoned device takes no new unit (cluster_take asserts),
 * its free units do not count in cluster_free, and the units it still holds stay held until
 * given back. Setting the state it already has is a no-op. */
void cluster_set_cordoned(cluster *c, dev_id d, bool on);

/* Resource name a device of this kind advertises, written into buf (NUL-terminated):
 * profile NULL -> "nvidia.com/gpu", else "nvidia.com/mig-<profile>" with '+' -> '.';
 * `shared` appends ".shared". Returns false if buf is too small. */
bool cluster_resource_name_for(const mig_profile *profile, bool shared, char *buf, size_t len);

#endif
