/* experiments/k8s_snapshot.h - a cluster as `kubectl get nodes,pods -A -o json` shows it.
 *
 * Reads the JSON list kubectl prints (kind List, NodeList or PodList; items of kind Node and
 * Pod, apiVersion v1) into node groups and pod classes a scenario can hold:
 *  - Nodes: the GPU from GPU feature discovery's labels (nvidia.com/gpu.product mapped to a
 *    catalog type, nvidia.com/gpu.count; nvidia.com/mig.config and nvidia.com/mig.strategy for
 *    MIG; nvidia.com/gpu.replicas with nvidia.com/gpu.sharing-strategy for time-slicing or MPS),
 *    allocatable cpu and memory, the extended resources they advertise, their taints. A node
 *    that advertises nvidia.com/ resources without gpu.product/gpu.count labels is an error; a
 *    node with neither is a CPU node and is left out (counted). Identical nodes form one group:
 *    same GPU type and count, MIG config and strategy, sharing, CPU and memory, taints, and the
 *    same values of every label some pod's nodeSelector or required node affinity names.
 *    A group keeps every taint (each effect) and the labels all its nodes share.
 *  - Pods: those Running or Pending that request an nvidia.com/ resource (the sum over their
 *    containers of requests, or of limits where a request is absent); others are counted and
 *    left out. A pod's priority (spec.priority) is kept. A bound pod (spec.nodeName) keeps its
 *    node: its group and its index there. A pending one keeps its nodeSelector and tolerations
 *    (the scenario's policies evaluate them); its required node affinity (In, NotIn, Exists,
 *    DoesNotExist), which the scenario cannot state, is resolved here into the groups it admits.
 *    A pod asking for a resource no node advertises, or that no node admits (its taints,
 *    nodeSelector and affinity), is an error, as is a toleration with an unknown operator or
 *    effect, an empty key with Equal, or a value with Exists.
 *  Pods alike in all of that (phase, group, resource and count, priority, CPU, memory,
 *  nodeSelector and tolerations) form one class.
 * Errors name FILE:LINE:COL and the JSON path (items[3].metadata.labels.nvidia.com/gpu.count),
 * with what was expected; all are reported (up to the diag cap).
 * Ownership: every string and array of a k8s_snapshot lives in the arena passed to the loader.
 */
#ifndef SIMPROJ_EXPERIMENTS_K8S_SNAPSHOT_H
#define SIMPROJ_EXPERIMENTS_K8S_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/hw/catalog.h"
#include "model/cluster/taint.h"
#include "sim/arena.h"
#include "sim/diag.h"

/* MIG strategy label (k8s_group.mig_strategy). */
enum { K8S_MIG_NONE = 0, K8S_MIG_SINGLE = 1, K8S_MIG_MIXED = 2 };
/* Sharing (k8s_group.sharing). */
enum { K8S_SHARE_NONE = 0, K8S_SHARE_TIMESLICE = 1, K8S_SHARE_MPS = 2 };

typedef struct k8s_taint {
    const char *key, *value, *effect; /* value may be "" */
} k8s_taint;

/* Identical GPU nodes. */
typedef struct k8s_group {
    const char *name;       /* generated: the GPU type in lower case and GPUs per node
                             * ("a100-sxm4-40gb-8g"), "-2", "-3" for further groups alike */
    const char *gpu;        /* catalog GPU type */
    const char *product;    /* nvidia.com/gpu.product as labelled */
    uint32_t gpus_per_node; /* physical GPUs */
    const char *mig_config; /* nvidia.com/mig.config, or NULL (MIG off: absent or all-disabled) */
    int mig_strategy;       /* K8S_MIG_* */
    int sharing;            /* K8S_SHARE_* */
    uint32_t replicas;      /* nvidia.com/gpu.replicas (1 without sharing) */
    bool rename_by_default; /* the node advertises <resource>.shared */
    uint64_t cpu_milli;     /* allocatable CPU */
    uint64_t mem_bytes;     /* allocatable memory */
    size_t n_taints;
    k8s_taint *taints;      /* every effect: NoSchedule, PreferNoSchedule, NoExecute */
    size_t n_labels;        /* labels every node of the group has, with the same value */
    taint_label *labels;
    size_t n_nodes;
    const char **nodes; /* node names, in snapshot order */
} k8s_group;

/* Pods alike. */
typedef struct k8s_pod_class {
    bool running;         /* Running (bound to a node), else Pending */
    const char *resource; /* the nvidia.com/ resource requested */
    uint32_t count;       /* units per pod */
    int32_t priority;     /* spec.priority (0 when absent) */
    const char *priority_class; /* spec.priorityClassName, or NULL */
    uint64_t cpu_milli, mem_bytes; /* requests per pod (0: none) */
    const char *groups;   /* running: its node's group; pending: with required node affinity,
                           * the groups it admits ('|'-separated), else NULL (its selector and
                           * tolerations say where it may run) */
    taint_pod place;      /* pending: its nodeSelector and tolerations; running: none */
    const char *place_key; /* place as text (classes differ when it differs) */
    size_t n_pods;
    const char **pods; /* namespace/name of each, in snapshot order */
    uint32_t *node_index; /* running: each pod's node (index within its group), else NULL */
} k8s_pod_class;

typedef struct k8s_snapshot {
    size_t n_groups;
    k8s_group *groups;
    size_t n_classes;
    k8s_pod_class *classes;
    size_t n_gpu_nodes, n_cpu_nodes; /* GPU nodes grouped; nodes left out (no GPU) */
    size_t n_pods;                   /* pods in the classes */
    size_t n_pods_skipped;           /* pods left out: finished, or asking for no GPU */
} k8s_snapshot;

/* Read `len` bytes at `buf` (display name `name`) against catalog `cat`. Returns 0 and fills
 * *out (arena-owned), or SIM_EINPUT after reporting every problem to d. */
int k8s_snapshot_load_buffer(const char *name, const char *buf, size_t len, const gpu_catalog *cat,
                             arena *a, diag *d, k8s_snapshot *out);
/* Same for the file at `path`; SIM_ENOENT / SIM_EIO when it cannot be read (errno holds the
 * cause, nothing is reported to d). */
int k8s_snapshot_load_file(const char *path, const gpu_catalog *cat, arena *a, diag *d,
                           k8s_snapshot *out);

/* Rank of priority p among the distinct priorities of the snapshot's classes (0 = the lowest):
 * the order kube-scheduler sees, in the scenario's priority range. */
int k8s_priority_rank(const k8s_snapshot *s, int32_t p);
/* Pods of the largest running class: pending classes start after that many milliseconds, so
 * that every running pod holds its node before the queue is placed. */
size_t k8s_running_most(const k8s_snapshot *s);

/* Parse a Kubernetes quantity ("500m", "96", "32Gi", "1e3", "128974848Ki") into units of
 * 1/scale (scale 1000 for milli-cores, 1 for bytes), rounded up; false when it is not one. */
bool k8s_quantity(const char *s, double scale, uint64_t *out);

#endif
