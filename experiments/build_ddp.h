/* experiments/build_ddp.h - the multi-worker and data-parallel parts of a scenario's job classes,
 * for the run builder (experiments/build.h build_classes): checks that need the catalog and the
 * driver, work given in samples, and the per-worker memory of a data-parallel job.
 *
 * The partition a class asks for: `nvidia.com/mig-<profile>[.shared]` is that MIG profile on the
 * GPU type of the first node group whose type has it; any other resource is a whole GPU of the
 * first node group's type.
 * Checks (each an input error at its field, exit 2):
 *   per_gpu above what the partition holds on one GPU (1 for a whole GPU, the MIG profile's
 *   instance count);
 *   a worker asking for two or more MIG devices while cluster.driver is before R570: before R570
 *   a CUDA process sees one MIG device (../shared/data/mig-facts.md §6), so the worker could not
 *   use them.
 * samples: the job's work is samples x (time per unit of one worker alone on the partition) /
 * workers, i.e. seconds of one worker's solo iterations (model/cluster/jobrate.h counts a gang's work so).
 * batch: a class may run its profile at another batch per worker than the profile's (`batch:`).
 * Memory: a data-parallel class (workers >= 2, a profile with grad_bytes) needs per unit the
 * worker memory of model/physics/ddp.h (the profile's footprint, bucket copies and NCCL buffers), unless
 * `memory` says otherwise.
 * Ownership: everything borrowed for the call. Units: seconds, bytes.
 */
#ifndef SIMPROJ_EXPERIMENTS_BUILD_DDP_H
#define SIMPROJ_EXPERIMENTS_BUILD_DDP_H

#include <stddef.h>

#include "experiments/scenario.h"
#include "model/physics/comm.h"
#include "model/cluster/jobrate.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "workloads/synth.h"

/* Apply class ci of spec (its profile jp, may be NULL) to synthetic class k: workers, per_gpu
 * and driver checks, samples -> fixed duration, data-parallel memory. Errors go to d. */
void build_ddp_class(const scenario_spec *spec, const gpu_catalog *cat, const comm_params *cp,
                   const phys_params *m, size_t ci, const jobrate_profile *jp, synth_class *k,
                   diag *d);

/* Class ci's profile jp at the class's `batch`: fills *slot (name "PROFILE@BATCH" in arena a,
 * same profile, that batch) and returns it; NULL with an input error at `batch` when the profile
 * was fitted at one batch only (it has no per-sample terms, so another batch is unknown). */
const jobrate_profile *build_ddp_batch(const scenario_spec *spec, size_t ci,
                                     const jobrate_profile *jp, jobrate_profile *slot, arena *a,
                                     diag *d);

/* The scenario's interconnect (cluster.interconnect, or the default network of cp): its NIC line
 * rate and NICs per node; an unknown name is an input error at its field (and the default is
 * returned). Borrowed from cp. */
const comm_net *build_ddp_net(const scenario_spec *spec, const comm_params *cp, diag *d);

/* How each node group's GPUs are wired: its `topology` (a topology of cp) or NULL where it names
 * none. An unknown name, a topology with NVLink on a GPU type to which the catalog gives no
 * NVLink rate, or NVLink SHARP multicast before Hopper, is an input error at the group's
 * `topology` (and NULL). Returns an array of one entry per group in arena a (the loader's,
 * experiments/resolve.h). */
const comm_topo **build_ddp_group_topologies(const scenario_spec *spec, const gpu_catalog *cat,
                                             const comm_params *cp, arena *a, diag *d);

/* The same by node id (node ids follow the scenario's groups in order, `count` nodes each), from
 * the groups' wiring group_topo: an array of *n entries in arena a (for jobrate_ctx.node_topo). */
const comm_topo **build_ddp_topologies(const scenario_spec *spec, const comm_topo *const *group_topo,
                                       arena *a, uint32_t *n);

#endif
