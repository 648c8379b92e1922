/* model/cluster/fragstat.h - FGD's cluster figures (Weng et al., USENIX ATC '23, section 6: "GPU
 * allocation ratio", milli-GPU allocation, and the fragmentation of idle GPU share under the
 * workload's typical pods; model/policy/frag.h defines the measure), from a cluster's state and
 * a job table.
 * GPU allocation counts a GPU as allocated while any of its units or shares is held; milli-GPU
 * allocation counts what is held (a whole unit 1000; a MIG or time-sliced GPU with a unit held
 * counts 1000, as the simulator has no such GPUs). The curve against arrived workload: arrived =
 * milli-GPU asked for by submitted jobs / the cluster's milli-GPU; allocated = held by running
 * jobs; sampled as arrived workload crosses each `step`. Units: milli-GPU; ratios in [0, 1].
 * Ownership: fragstat_acc_finish fills caller-owned arrays (free with free()).
 */
#ifndef SIMPROJ_MODEL_FRAGSTAT_H
#define SIMPROJ_MODEL_FRAGSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/cluster/cluster.h"
#include "model/cluster/job.h"
#include "model/policy/frag.h"

typedef struct fragstat {
    uint32_t gpus_total, gpus_alloc;
    uint64_t milli_total, milli_alloc, milli_idle;
    double frag_milli; /* fragmented idle milli-GPU (sum over nodes) */
    double frag_ratio; /* frag_milli / milli_idle (0 when nothing is idle) */
} fragstat;

/* Typical pods of the jobs of t (one shape per worker), threshold 95 % (FGD's setting). As FGD's
 * simulator, from the pods before inflation: clones (job_pod.clone) are left out. */
void fragstat_typical(const job_table *t, frag_typical *out);
/* The figures of cluster c now. */
void fragstat_measure(const cluster *c, const frag_typical *typ, fragstat *out);

/* Milli-GPU one device of a GPU holds, the rule of every figure here: a shareable device its
 * shares (a whole unit 1000), any other device a whole GPU while one of its units is held (a MIG
 * instance or a time-slice replica); at most 1000. */
uint32_t fragstat_dev_held(bool shareable, uint32_t milli_used, uint32_t units_used);
/* Add GPU cg, holding `held` milli-GPU, to node view fn (its first FRAG_MAX_GPUS GPUs; fn's CPU
 * is the caller's). The node's GPU type, which a pod's gpu_spec names, is its first GPU's label,
 * else its model's name. */
void fragstat_node_add(frag_node *fn, const cluster_gpu *cg, uint32_t held);

/* One point of the allocation curve. */
typedef struct fragstat_point {
    double arrived;     /* milli-GPU asked for by jobs submitted so far / cluster milli-GPU */
    double gpu_alloc;   /* GPUs with something held / GPUs */
    double milli_alloc; /* milli-GPU held / cluster milli-GPU */
} fragstat_point;

/* The curve from the jobs after a run (start and end times of every job; jobs never started
 * hold nothing): a point each time arrived workload reaches a multiple of step (> 0), and the
 * final state; and the typical pods (fragstat_typical's). Jobs are handed over one at a time,
 * in id order (a writer's one pass over the jobs): create for n_jobs jobs (c NULL: no curve),
 * add every job, finish with the typical pods into *typ (NULL: not wanted) and, when the curve
 * was asked for, its points into *pts (caller-owned) and their count into *n_pts. finish frees
 * the accumulator. The curve keeps 64 bytes per job until then (its events and what it needs of
 * each job). */
typedef struct fragstat_acc fragstat_acc;
fragstat_acc *fragstat_acc_create(const cluster *c, size_t n_jobs);
void fragstat_acc_add(fragstat_acc *a, const job *jb);
void fragstat_acc_finish(fragstat_acc *a, frag_typical *typ, double step, fragstat_point **pts,
                         size_t *n_pts);

#endif
