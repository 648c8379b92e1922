/* experiments/build.h - turn a loaded scenario into the model's plain inputs.
 *
 * The cluster: each node group becomes `count` nodes named GROUP-0 .. GROUP-(count-1), each
 * with gpus_per_node GPUs of the catalog type; a GPU's MIG layout is the one the scenario loader
 * placed from the group's mig-parted config under the scenario's driver
 * (scenario_node_group.mig_gpus: the file is not read again here), its time-slicing / MPS
 * replicas come from the device-plugin config. The spec is resolved (experiments/resolve.h):
 * building the cluster raises no error.
 * Workload profiles: a job class's, a service's or a trace rule's `profile` is loaded once per
 * scenario (build_load_profile), from the library compiled into the binary or a file beside the
 * scenario.
 * Job classes: each scenario job class becomes a synthetic class (workloads/synth.h) with its
 * profile, batch, DDP work and memory (experiments/build_ddp.h) and, for a class asking for any
 * MIG slice, its durations scaled to the largest profile; every problem is an input error at
 * its field.
 * experiments/resolve.c calls the profile and class builders at load; the run builder
 * (experiments/build_run.c) builds the cluster and policy.
 * Ownership: everything built is allocated in the arena given; catalog entries are borrowed.
 */
#ifndef SIMPROJ_EXPERIMENTS_BUILD_H
#define SIMPROJ_EXPERIMENTS_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "experiments/scenario.h"
#include "model/hw/catalog.h"
#include "model/cluster/cluster.h"
#include "model/cluster/job.h"
#include "model/cluster/jobrate.h"
#include "model/physics/comm.h"
#include "model/policy/policy.h"
#include "model/physics/speed.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "workloads/synth.h"

/* Fill *out from the scenario's cluster (resolved: every GPU type is in cat, every MIG group's
 * layouts placed), `count` nodes per group. */
void build_cluster(arena *a, const scenario_spec *s, const gpu_catalog *cat, cluster_cfg *out);

/* Fill *out with the first node of each of the scenario's groups: the same devices in the same
 * order as the whole cluster's, so a resource's first device (build_partition_for) is the same,
 * without a node per `count` (experiments/resolve.h: the loader builds nothing per node). */
void build_cluster_groups(arena *a, const scenario_spec *s, const gpu_catalog *cat,
                          cluster_cfg *out);

/* True when some node of the empty cluster advertises per_worker units of the request's
 * resource for each worker (n_workers nodes, or fewer nodes holding several workers), counting
 * only GPUs whose model pod->gpu_spec allows (a '|'-separated list; NULL or "": any GPU) on nodes
 * that admit the pod (its nodeSelector, tolerations and pinned node: job_pod_admits). pod NULL:
 * any GPU of any node. */
bool build_request_fits(const cluster *c, const job_request *req, const job_pod *pod);

/* "NAME xN per node max, ..." for every advertised resource, into buf. Returns buf. */
const char *build_advertised(const cluster *c, char *buf, size_t len);

/* The partition a device advertising `res` is (the first such device of c): its GPU type and,
 * for a MIG device, its profile; false when no device of c advertises it. */
bool build_partition_for(const cluster *c, const char *res, partition_cfg *part);

/* The workload profile `name` (written at `at`, field `path`): a path ending in .yaml (relative
 * to the scenario's directory s->dir), or the name of a library profile compiled into the binary
 * (workloads/library/NAME.yaml), read with the physics phys (experiments/obs.h). A name already
 * among profiles[0 .. *n_profiles) is returned as it is: each profile is loaded once per
 * scenario.
 * Otherwise it is appended there (the caller's array, with room for it) and *n_profiles grows.
 * Returns the entry (borrowed from profiles; its parameters live in a), or NULL after reporting
 * the problem to d at that field: an unknown library name (the message lists the library), an
 * unreadable file, or a profile that does not load. */
const jobrate_profile *build_load_profile(const scenario_spec *s, const phys_params *phys,
                                          jobrate_profile *profiles, size_t *n_profiles,
                                          const char *name, src_loc at, const char *path, arena *a,
                                          diag *d);

/* The policy the scenario names (checked at load), its parameters into *params (arena-owned).
 * Borrowed from the registry. */
const policy_ops *build_policy(const scenario_spec *s, arena *a, param_set *params);

/* One synthetic class per job class of s (workload.jobs, in order), arena-owned. *profiles gets
 * the run's profile table (arena; room for the classes' profiles and their other batches, one
 * per service and one per trace rule after them, for build_load_profile) and *n_profiles the
 * count the classes used. Errors go to d. */
synth_class *build_classes(const scenario_spec *spec, const gpu_catalog *cat,
                           const phys_params *phys, const comm_params *comm, arena *a, diag *d,
                           jobrate_profile **profiles, size_t *n_profiles);

#endif
