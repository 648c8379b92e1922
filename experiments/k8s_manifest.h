/* experiments/k8s_manifest.h - Kubernetes workload manifests as job classes.
 *
 * Reads YAML files (each may hold several documents, `---`-separated) of:
 *   batch/v1 Job          one class; its pods (spec.completions, default 1) are separate jobs
 *   v1 Pod                one class of one job
 *   kubeflow.org/v1 PyTorchJob  one class of gang jobs: its Master and Worker replicas are the
 *                         workers of one data-parallel job (all start together); every replica
 *                         must ask for the same GPUs; spec.nprocPerNode is kept (processes per
 *                         pod) for the user's information
 *   scheduling.k8s.io/v1 PriorityClass  its value, for the classes that name it
 * A pod's request is the sum over its containers of requests (limits where no request is given)
 * of one nvidia.com/ resource (a pod asking for none is left out and counted), cpu and memory.
 * What a manifest does not say (when jobs arrive, how long they run) comes from annotations of
 * the object (metadata.annotations) or the command's defaults:
 *   slicesim.io/rate: 2/h  |  slicesim.io/interval: 30m   (arrivals; poisson or fixed)
 *   slicesim.io/count: 10                                  (jobs of the class; 0: to the horizon)
 *   slicesim.io/duration: 45m                              (run time of each job)
 *   slicesim.io/profile: resnet50-train                    (a workload profile of the library)
 * A pod spec's nodeSelector and tolerations are kept (the scenario's policies evaluate them
 * against the node groups' labels and taints).
 * Errors name FILE:LINE:COL and the document's field path (`doc[2].spec.pytorchReplicaSpecs.
 * Worker.replicas`): malformed YAML, an unknown kind or apiVersion, a bad quantity or
 * annotation, replicas asking for different GPUs or placed differently, a malformed
 * nodeSelector or toleration, a priority class nobody defines.
 * Ownership: every string of a k8s_workload lives in the arena given to the loader.
 */
#ifndef SIMPROJ_EXPERIMENTS_K8S_MANIFEST_H
#define SIMPROJ_EXPERIMENTS_K8S_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "model/cluster/taint.h"
#include "sim/arena.h"
#include "sim/diag.h"

typedef struct k8s_job_class {
    const char *name;     /* metadata.name (namespace/ dropped) */
    const char *kind;     /* "Job", "Pod", "PyTorchJob" */
    const char *file;     /* the manifest it came from */
    const char *resource; /* nvidia.com/ resource of each worker */
    uint32_t per_worker;  /* units of it per worker (pod) */
    uint32_t workers;     /* pods started together (PyTorchJob: Master + Worker replicas) */
    uint64_t jobs;        /* Job: completions; others 1 (annotations may replace it) */
    const char *nproc;    /* PyTorchJob spec.nprocPerNode as written, or NULL */
    uint64_t cpu_milli, mem_bytes;                            /* requests per pod */
    const char *priority_class;                               /* spec.priorityClassName, or NULL */
    int32_t priority;                                         /* its value (0 without one) */
    const char *rate, *interval, *count, *duration, *profile; /* annotations, or NULL */
    taint_pod place; /* the pod spec's nodeSelector and tolerations (a PyTorchJob: its first
                      * replica's; they must agree) */
} k8s_job_class;

typedef struct k8s_workload {
    size_t n;
    k8s_job_class *classes; /* in file and document order */
    size_t n_skipped;       /* objects asking for no GPU (left out) */
    size_t n_priority_classes;
} k8s_workload;

/* Read the n_paths files (in the order given). Returns 0 and fills *out (arena-owned), or
 * SIM_EINPUT after reporting every problem to d; SIM_ENOENT / SIM_EIO when a file cannot be
 * read (errno holds the cause, the path is reported to d). */
int k8s_manifests_load(const char *const *paths, size_t n_paths, arena *a, diag *d,
                       k8s_workload *out);
/* The same for one buffer under display name `name`. */
int k8s_manifests_load_buffer(const char *name, const char *buf, size_t len, arena *a, diag *d,
                              k8s_workload *out);

#endif
