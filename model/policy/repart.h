/* model/policy/repart.h - layout policies: plug-ins that decide when a reconfigurable GPU should
 * change its MIG layout (model/reconf.h runs them every interval and applies their decisions).
 *
 * A layout policy sees the read-only cluster view (model/policy/policy.h) and appends
 * POL_RECONFIGURE (and POL_EVICT) decisions; the model checks and carries them out, so a buggy
 * policy cannot corrupt the cluster. Registered policies:
 *   demand  the demand-driven re-partitioner (model/policy/repart_demand.c).
 * Ownership: as policy_ops (state allocated zeroed by the caller; view and buffer borrowed for
 * the call).
 */
#ifndef SIMPROJ_MODEL_POLICY_REPART_H
#define SIMPROJ_MODEL_POLICY_REPART_H

#include <stddef.h>

#include "model/policy/policy.h"

typedef struct repart_ops {
    const char *name;    /* scenario key, e.g. `repartition: {policy: demand}` */
    const char *summary; /* one line */
    size_t state_size;   /* bytes of zeroed state the caller provides as `self` */
    /* Check and take the parameters (report bad ones through d, return SIM_EINPUT), else 0. */
    int (*init)(void *self, const param_set *params, diag *d);
    /* Release what init and decide acquired. May be NULL. */
    void (*fini)(void *self);
    /* Look at the cluster and append decisions. */
    void (*decide)(void *self, const cluster_view *cv, decision_buf *out);
} repart_ops;

/* Layout policy by name; NULL when unknown. Static storage. (The scenario schema lists the
 * same names: experiments/scenario_dyn.c.) */
const repart_ops *repart_find(const char *name);

#endif
