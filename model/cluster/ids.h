/* model/cluster/ids.h - the model's id types, shared by the cluster, jobs and the policy interface.
 *
 * Ids are dense indices (0, 1, 2, ...) assigned in a deterministic order documented by the
 * module that owns the objects (model/cluster/cluster.h, model/cluster/job.h). No pointers, so a policy can hold
 * ids without touching mutable model state.
 */
#ifndef SIMPROJ_MODEL_IDS_H
#define SIMPROJ_MODEL_IDS_H

#include <stdint.h>

typedef uint32_t job_id;  /* a job, in order of creation */
typedef uint32_t node_id; /* a node, in config order */
typedef uint32_t gpu_id;  /* a GPU, node-major */
typedef uint32_t dev_id;  /* a schedulable device (whole GPU or MIG instance), GPU-major */
typedef uint32_t res_id;  /* an advertised resource name, in order of first advertisement */

#endif
