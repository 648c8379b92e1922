/* model/cluster/fault.h - failures and their blast radius: GPU, MIG-instance, node and NVLink faults
 * from a seeded random process or a list, what each one kills, and what it cost.
 *
 * Kinds and what they touch (DESIGN.md section 6: MIG confines a fault to its instance,
 * time-slicing and MPS do not):
 *  - FAULT_GPU (target: a GPU): the board fails (falls off the bus, uncorrectable ECC): every
 *    process on it dies, all MIG instances included; its devices are down for the repair time.
 *  - FAULT_INSTANCE (target: a device): a fault inside one device's processes (an Xid error in a
 *    kernel): the device's pods die. A device is a MIG instance on a MIG GPU, so only that
 *    instance's pods; on a time-sliced GPU it is the whole GPU, so every process on it; under MPS
 *    the fault takes down the MPS server and with it every client. The device is down for the
 *    repair time (instance re-created, MPS server restarted, GPU reset).
 *  - FAULT_NODE (target: a node): the host fails: every pod on it dies; all its devices are down.
 *  - FAULT_NVLINK (target: a node): the node's NVLink fabric fails: every job that spans two or
 *    more whole GPUs of the node (they talk over NVLink) dies; single-GPU pods and MIG instances
 *    (no peer-to-peer before R570, they go through host memory: mig-facts.md) carry on. No device
 *    is taken down (the GPUs still work alone).
 * A job dies whole (gang): if one of its pods is killed, all its workers are. It is queued again
 * and restarts from its last checkpoint (world_cfg.checkpoint_s) or from zero (model/cluster/world.h).
 * Random process: each component fails as a Poisson process with its mean time between failures
 * (GPU and instance faults per GPU, node and NVLink faults per node, NVLink only on nodes with
 * two or more GPUs); an instance fault strikes one of the GPU's devices with probability
 * proportional to its SMs. Draws come from one stream per kind and component
 * (FAULT_STREAM_* with the component's id as index), so adding a node or a kind never reshuffles
 * another component's faults. A component keeps failing at its rate while down; a device under
 * two repairs comes back when the later one ends.
 * Cost, per sharing mode of the killed job's devices (whole GPU, MIG, time-sliced, MPS): kills,
 * distinct jobs affected, lost GPU-hours = wall time since the job's last checkpoint times the
 * share of a GPU its units held (a whole GPU 1, a MIG instance its compute slices / the GPU's,
 * a time-sliced or MPS unit its device's share / replicas), and lost work (solo run seconds).
 * Units: sim_time ns for times, seconds for MTBF, repair and losses.
 * Ownership: fault_generate's array is the caller's (free); an injector copies its events and
 * borrows the world, which must outlive it.
 */
#ifndef SIMPROJ_MODEL_FAULT_H
#define SIMPROJ_MODEL_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/cluster/cluster.h"
#include "model/cluster/world.h"
#include "sim/rng.h"
#include "sim/simtime.h"

/* RNG stream names (renaming one changes results). */
#define FAULT_STREAM_GPU "faults.gpu"
#define FAULT_STREAM_INSTANCE "faults.instance"
#define FAULT_STREAM_NODE "faults.node"
#define FAULT_STREAM_NVLINK "faults.nvlink"

typedef enum fault_kind {
    FAULT_GPU,      /* target: gpu_id */
    FAULT_INSTANCE, /* target: dev_id */
    FAULT_NODE,     /* target: node_id */
    FAULT_NVLINK,   /* target: node_id */
    FAULT_N_KINDS,
} fault_kind;

/* Sharing mode of a device, for the cost report. */
typedef enum fault_mode {
    FAULT_MODE_WHOLE,     /* whole GPU, exclusive */
    FAULT_MODE_MIG,       /* a MIG instance, exclusive */
    FAULT_MODE_TIMESLICE, /* time-sliced replicas (of a GPU or a MIG instance) */
    FAULT_MODE_MPS,       /* MPS clients */
    FAULT_N_MODES,
} fault_mode;

typedef struct fault_event {
    sim_time at;
    fault_kind kind;
    uint32_t target;    /* gpu_id, dev_id or node_id by kind */
    sim_time repair_ns; /* how long the touched devices stay down (0: back at once) */
} fault_event;

/* The random process: mean time between failures per component and kind (0: this kind never
 * fails) and the repair time of each kind, seconds. */
typedef struct fault_process {
    double mtbf_s[FAULT_N_KINDS];
    double repair_s[FAULT_N_KINDS];
} fault_process;

typedef struct fault_stats {
    uint64_t n_faults[FAULT_N_KINDS];   /* faults that fired */
    uint64_t n_kills[FAULT_N_MODES];    /* jobs killed (a job once per fault) */
    uint64_t n_affected[FAULT_N_MODES]; /* distinct jobs killed at least once */
    double lost_gpu_s[FAULT_N_MODES];   /* GPU-seconds held since the last checkpoint */
    double lost_work_s[FAULT_N_MODES];  /* solo-run seconds of work lost */
} fault_stats;

/* "gpu", "instance", "node", "nvlink"; "whole", "mig", "timeslice", "mps". Static. */
const char *fault_kind_name(fault_kind k);
const char *fault_mode_name(fault_mode m);
/* Kind by name; false when unknown. */
bool fault_kind_find(const char *name, fault_kind *out);

/* Sharing mode of device d (the share of a GPU a unit stands for: cluster_unit_gpu_share). */
fault_mode fault_device_mode(const cluster *c, dev_id d);

/* Draw the faults of process p on cluster c in [0, horizon) from root's FAULT_STREAM_* streams,
 * sorted (fault_sort). Sets *out (caller frees; NULL when none) and *n. */
void fault_generate(const cluster *c, const fault_process *p, const rng_root *root,
                    sim_time horizon, fault_event **out, size_t *n);
/* Sort by (time, kind, target): a total order, so equal inputs give equal runs. */
void fault_sort(fault_event *ev, size_t n);

/* The event of kind k on node `node` (by name), GPU index `gpu` on it, and MIG instance
 * `instance` of that GPU (its devices in id order; 0 for a non-MIG GPU). GPU and instance are
 * ignored where the kind does not use them. Returns false with a one-line reason in why when
 * the node, GPU or instance does not exist. */
bool fault_resolve(const cluster *c, fault_kind k, const char *node, uint32_t gpu,
                   uint32_t instance, fault_event *out, char *why, size_t why_len);

/* Jobs event e kills now (running, in id order) into out (capacity cap, at least the number of
 * running jobs); returns how many. */
size_t fault_victims(const world *w, const fault_event *e, job_id *out, size_t cap);

typedef struct fault_injector fault_injector;

/* Schedule events (copied, then sorted) on w: at each, kill the victims (world_kill), take the
 * touched devices down for the repair time, and let the policy react (world_settle). Call
 * before world_run. Caller owns the injector (fault_injector_destroy, after the world ran and
 * before it is destroyed or together with it). */
fault_injector *fault_injector_create(world *w, const fault_event *events, size_t n);
void fault_injector_destroy(fault_injector *fi);
/* Totals so far; borrowed until destroy. */
const fault_stats *fault_injector_stats(const fault_injector *fi);

#endif
