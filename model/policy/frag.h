/* model/policy/frag.h - FGD's fragmentation measure (Weng et al., "Beware of Fragmentation:
 * Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC '23, section
 * 3; the definitions of hkust-adsl/kubernetes-scheduler-simulator pkg/utils/frag.go
 * NodeGpuShareFragAmount, GetNodePodFrag, CanNodeHostPodOnGpuMemory and GetTypicalPods, written
 * anew here).
 *
 * A node's idle GPU share is *fragmented* for a pod when the pod cannot use it: all of it when
 * the pod cannot be placed there at all (not enough GPUs with enough free share, not enough CPU,
 * a GPU type it may not use, or a CPU-only pod, which uses no GPU), and, when it can, the idle
 * share of the GPUs each too small for one of its GPUs. The node's fragmentation is the mean of
 * that over the workload's *typical pods*, weighted by how often each occurs. Units: milli-GPU
 * (1000 = one GPU), milli-CPU. Pure computation on plain structs: no model state, no I/O.
 * Ownership: frag_typical_build fills a caller-owned array (frag_typical_fini frees it).
 */
#ifndef SIMPROJ_MODEL_POLICY_FRAG_H
#define SIMPROJ_MODEL_POLICY_FRAG_H

#include <stddef.h>
#include <stdint.h>

#include "model/hw/milli.h"

#define FRAG_MAX_GPUS 16 /* GPUs of one node that the measure looks at */

/* A pod shape: n_gpu GPUs of milli each (1000 for whole GPUs, 1..999 for a share), CPU. */
typedef struct frag_pod {
    uint32_t n_gpu;    /* 0 = CPU-only */
    uint32_t milli;    /* per GPU; 0 when n_gpu == 0 */
    uint64_t cpu_milli;
    const char *gpu_spec; /* allowed GPU types, '|'-separated; NULL = any; borrowed */
} frag_pod;

/* A node's free resources. */
typedef struct frag_node {
    uint32_t n_gpus;
    uint32_t milli_left[FRAG_MAX_GPUS]; /* free milli-GPU of each GPU */
    uint64_t cpu_left;                  /* UINT64_MAX when CPU is not modelled */
    const char *gpu_type;               /* the node's GPU type name (NULL: no GPU) */
} frag_node;

/* The shape of one worker asking per_worker GPUs (0: CPU-only), or a share of gpu_milli
 * (1..999, one GPU) when stated. */
frag_pod frag_pod_make(uint32_t per_worker, uint32_t gpu_milli, uint64_t cpu_milli,
                       const char *gpu_spec);

/* Typical pods: the most frequent shapes that together make up `threshold` of the pods. */
typedef struct frag_typical {
    size_t n;
    frag_pod *pods; /* owned */
    double *freq;   /* share of each among the typical pods, summing to 1; owned */
} frag_typical;

/* Share of the pods the typical pods cover: 95 %, FGD's setting (podPopularityThreshold of its
 * simulator's GetTypicalPods; Weng et al., ATC '23). */
#define FRAG_TYPICAL_SHARE 0.95

/* Sort the n shapes (one per pod; equal shapes counted together) by decreasing count and keep
 * the most frequent until they cover `threshold` (0..1] of the pods, as GetTypicalPods does with
 * podPopularityThreshold and podIncreaseStep 1. */
void frag_typical_build(const frag_pod *pods, size_t n, double threshold, frag_typical *out);
/* The same from shapes counted as they come (no array of every pod): create, add each pod's
 * shape n times (a job's workers), finish (which frees the counter). Equal shapes are counted
 * together, ties keep the order of first appearance, as frag_typical_build does. */
typedef struct frag_shapes frag_shapes;
frag_shapes *frag_shapes_create(void);
void frag_shapes_add(frag_shapes *s, const frag_pod *p, size_t n);
void frag_shapes_finish(frag_shapes *s, double threshold, frag_typical *out);
void frag_typical_fini(frag_typical *t);

/* True when GPU type `name` is allowed by `spec` ('|'-separated; NULL or empty allows any). */
int frag_type_allowed(const char *spec, const char *name);
/* Idle milli-GPU of node n. */
uint64_t frag_idle(const frag_node *n);
/* Fragmented milli-GPU of node n under the typical pods (weighted by freq). */
double frag_node_amount(const frag_node *n, const frag_typical *t);

/* A cache of frag_node_amount under one set of typical pods (a node's fragmentation depends on
 * its free resources alone, and many nodes and trial placements share them): an open-addressing
 * table keyed on the node's free share of each GPU, CPU left and GPU type (by pointer), emptied
 * when half full, so its size stays bounded. Zero-initialise; frag_memo_fini frees it. */
typedef struct frag_memo {
    size_t cap, n;
    struct frag_memo_slot *slots; /* owned */
} frag_memo;

/* frag_node_amount(n, t), from the cache when n was seen before (m must always be used with
 * the same t). */
double frag_memo_amount(frag_memo *m, const frag_node *n, const frag_typical *t);
void frag_memo_fini(frag_memo *m);
/* Bytes a memo holds once used (its table is allocated whole at the first use). */
size_t frag_memo_bytes(void);

#endif
