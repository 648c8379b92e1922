/* experiments/build_dyn.h - what changes a run's cluster while it runs, for the run builder
 * (experiments/build_run.h): the scenario's faults (experiments/scenario_dyn.h: a seeded random
 * process per kind and the listed events, model/cluster/fault.h) and its dynamic re-partitioner
 * (model/cluster/reconf.h with its layout policy), both on the built world.
 * Checks: a listed fault's node, GPU or instance that the built cluster lacks is an input error at
 * the event's `node` (exit 2); the re-partitioner's own checks report through the run's diag.
 * Ownership: the injector and re-partitioner are the run's (built_run.faults, .reconf;
 * built_run_fini destroys them).
 */
#ifndef SIMPROJ_EXPERIMENTS_BUILD_DYN_H
#define SIMPROJ_EXPERIMENTS_BUILD_DYN_H

#include <stdbool.h>

#include "experiments/build_run.h"

/* The scenario's faults: the seeded process (unless `listed_only`: check draws none) and the
 * listed events, resolved on the built cluster, into b->faults (NULL without a faults section). */
void build_faults(built_run *b, bool listed_only);

/* Dynamic re-partitioning: the reconfiguration component and its layout policy, into b->reconf
 * (NULL without an enabled repartition section or when it cannot be made: reported). */
void build_repartition(built_run *b);

#endif
