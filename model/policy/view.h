/* model/policy/view.h - how the model builds the read-only cluster_view it hands to policies.
 *
 * Only the model (model/cluster/world.c, tests) includes this; policies see cluster_view as opaque
 * (model/policy/policy.h). The view borrows the cluster and the job table; it is valid while
 * both live and is refreshed (its `now`) before each policy call.
 */
#ifndef SIMPROJ_MODEL_POLICY_VIEW_H
#define SIMPROJ_MODEL_POLICY_VIEW_H

#include "model/cluster/cluster.h"
#include "model/cluster/job.h"
#include "model/policy/policy.h"

struct cluster_view {
    const cluster *c;      /* borrowed */
    const job_table *jobs; /* borrowed */
    sim_time now;
    uint64_t seed; /* the run's master seed */
    pol_slice_speed_fn *slice_speed; /* per-slice speeds of any-slice jobs; NULL: none */
    void *slice_ctx;                 /* borrowed, passed to slice_speed */
};

#endif
