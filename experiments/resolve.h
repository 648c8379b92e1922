/* experiments/resolve.h - the last step of loading a scenario: what the run is built from,
 * resolved once (scenario_spec.resolved), so that the run builder (experiments/build_run.h)
 * consumes it and raises no input error the loader could have raised.
 *
 * scenario_load_* (experiments/scenario.h) call resolve_scenario at their end, unless
 * SCENARIO_NO_FILES or an earlier error. It loads the embedded data (the GPU catalog, the
 * physics of model/physics/physics.yaml, the communication model of model/physics/comm.yaml),
 * checks the spec against them (scenario_validate: every mig-parted config placed on each GPU
 * of its group under cluster.driver, calibrations applied as copies of their GPU types), and
 * resolves, in this order, each problem an input error at its field (file:line:col, the field
 * path, what was expected):
 *   - the catalog the run uses: the embedded one with the calibrated types in place of the
 *     datasheet ones (scenario_catalog); the embedded catalog is not changed;
 *   - the workload profiles, each loaded once (experiments/build.h build_load_profile), by name:
 *     the job classes' (and each class's profile at its own `batch`), the services', the trace
 *     rules';
 *   - the job classes as synthetic classes (experiments/build.h build_classes: profile, batch,
 *     DDP work and memory, durations of a class asking for any MIG slice);
 *   - each service's profile, its autoscale (min <= replicas <= max, a utilisation target of
 *     at most 1) and, for arrival: trace, its trace's live instances of the app (at least one);
 *   - the nodes' network (cluster.interconnect) and each node group's GPU wiring (`topology`);
 *   - the trace's rules with their work factors (model/physics/tracework.h: work-seconds per
 *     traced second, from the rule's profile on the traced GPU and on the partition its jobs ask
 *     for) and memory, and the work factor of jobs no rule maps.
 * The partition a resource names is that of its first device in the cluster's order; every node
 * of a group has the same devices, so it is looked up on a cluster of one node per group: the
 * loader builds nothing per node (a cluster of many nodes is built by the run, after the
 * estimate has checked it against the scenario's limits).
 *
 * What only the run's cluster (or world) can check stays with the builder: each request on the
 * empty cluster, the estimate against limits: (it needs the services' batch times on their
 * partitions), the services' resources and batch fit, the faults' listed nodes, the
 * re-partitioner, the workload trace's rows as the run reads them (with the cluster's capacity).
 *
 * Ownership: the resolved part and everything it points to live in the loader's arena, as the
 * spec does; catalog entries are copies or the embedded catalog's (arena too).
 */
#ifndef SIMPROJ_EXPERIMENTS_RESOLVE_H
#define SIMPROJ_EXPERIMENTS_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "experiments/scenario.h"
#include "model/cluster/jobrate.h"
#include "model/hw/catalog.h"
#include "model/physics/comm.h"
#include "model/physics/speed.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "workloads/synth.h"
#include "workloads/tracelive.h"
#include "workloads/traceload.h"

/* What a scenario resolves to beyond its spec (scenario_spec.resolved). */
typedef struct scenario_resolved {
    gpu_catalog cat;  /* the embedded catalog with the scenario's calibrated types as copies */
    phys_params phys; /* the physics */
    comm_params comm; /* the communication model */
    jobrate_profile *profiles; /* every profile the scenario names, each once, and each class's
                                * at its batch ("NAME@BATCH"); looked up by name */
    size_t n_profiles;
    synth_class *classes;             /* per workload.jobs[i] */
    const jobrate_profile **svc_prof; /* per services[i]: the model it serves */
    const tracelive **svc_live;       /* per services[i]: its trace's live instances (arrival:
                                       * trace), else NULL */
    const comm_net *net;              /* cluster.interconnect (borrowed from comm) */
    const comm_topo **group_topo;     /* per cluster.nodes[g]: its wiring, NULL = the GPU type's */
    const traceload_rule *trules;     /* per workload.trace.map[i], with its work factor; NULL
                                       * without a trace */
    double fallback_factor;           /* work factor of traced jobs no rule maps */
} scenario_resolved;

/* Resolve s (walked and cross-checked without error) as the header says, into s->resolved
 * (from a). Returns 0, or SIM_EINPUT after reporting every problem to d (s->resolved is then
 * NULL). */
int resolve_scenario(scenario_spec *s, arena *a, diag *d);

#endif
