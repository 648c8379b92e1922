/* tools/run_build.h - turn a loaded scenario into the model's plain inputs.
 *
 * The cluster: each node group becomes `count` nodes named GROUP-0 .. GROUP-(count-1), each
 * with gpus_per_node GPUs of the catalog type; a GPU's MIG layout is the one the scenario loader
 * placed from the group's mig-parted config under the scenario's driver
 * (scenario_node_group.mig_gpus: the file is not read again here), its time-slicing / MPS
 * replicas come from the device-plugin config. Problems are reported through diag with the position
 * of the field that caused them.
 * Ownership: everything built is allocated in the arena given; catalog entries are borrowed.
 */
#ifndef SIMPROJ_TOOLS_RUN_BUILD_H
#define SIMPROJ_TOOLS_RUN_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "experiments/scenario.h"
#include "model/hw/catalog.h"
#include "model/cluster/cluster.h"
#include "model/cluster/job.h"
#include "sim/arena.h"
#include "sim/diag.h"

/* Fill *out from the scenario's cluster. Errors go to d. */
void run_build_cluster(arena *a, diag *d, const scenario_spec *s, const gpu_catalog *cat,
                       cluster_cfg *out);

/* True when some node of the empty cluster advertises per_worker units of the request's
 * resource for each worker (n_workers nodes, or fewer nodes holding several workers), counting
 * only GPUs whose model pod->gpu_spec allows (a '|'-separated list; NULL or "": any GPU) on nodes
 * that admit the pod (its nodeSelector, tolerations and pinned node: job_pod_admits). pod NULL:
 * any GPU of any node. */
bool run_build_request_fits(const cluster *c, const job_request *req, const job_pod *pod);

/* "NAME xN per node max, ..." for every advertised resource, into buf. Returns buf. */
const char *run_build_advertised(const cluster *c, char *buf, size_t len);

#endif
