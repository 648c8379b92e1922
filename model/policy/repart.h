/* model/policy/repart.h - layout policies: plug-ins that decide when a reconfigurable GPU should
 * change its MIG layout (model/cluster/reconf.h runs them every interval and applies their decisions).
 *
 * A layout policy sees the read-only cluster view (model/policy/policy.h) and appends
 * POL_RECONFIGURE (and POL_EVICT) decisions; the model checks and carries them out, so a buggy
 * policy cannot corrupt the cluster. Registered policies:
 *   demand  the demand-driven re-partitioner (model/policy/repart_demand.c);
 *   miso    MISO's throughput-maximising partitioner for jobs asking for any MIG slice
 *           (model/policy/repart_miso.c).
 * Ownership: as policy_ops (state allocated zeroed by the caller; view and buffer borrowed for
 * the call).
 */
#ifndef SIMPROJ_MODEL_POLICY_REPART_H
#define SIMPROJ_MODEL_POLICY_REPART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/hw/mig.h"
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
    /* true: the policy also places jobs asking for any MIG slice (POL_PLACE decisions), and the
     * model runs decide at once (at the same simulated time) when such a job is queued, when a
     * job ends or is killed, and when a new layout is in place, besides every interval. */
    bool reacts;
} repart_ops;

/* Layout policy by name; NULL when unknown. Static storage. (The scenario schema lists the
 * same names: experiments/scenario_dyn.c.) */
const repart_ops *repart_find(const char *name);

/* ---- helpers shared by layout policies ------------------------------------------------------ */

#define REPART_MAX_TYPES 8 /* GPU types one policy caches layouts for */

/* The maximal classic layouts (`slicesim layouts`) of each GPU type a policy met, enumerated
 * once. Zero-initialise; the policy owns it (repart_layouts_fini). */
typedef struct repart_layouts {
    int n_types;
    const gpu_type *type[REPART_MAX_TYPES];
    int n[REPART_MAX_TYPES];
    mig_layout *l[REPART_MAX_TYPES]; /* owned */
} repart_layouts;

/* The maximal classic layouts of g, in enumeration order (ascending start within a layout);
 * *n gets how many. Borrowed from c until repart_layouts_fini. */
const mig_layout *repart_layouts_of(repart_layouts *c, const gpu_type *g, int *n);
void repart_layouts_fini(repart_layouts *c);

/* Device ids of layout l on GPU g (its candidate MIG instances at l's placements), or of the
 * whole-GPU device when l is NULL, into out (room for MIG_MAX_INSTANCES + 1); returns the
 * count. */
uint32_t repart_layout_devices(const cluster_view *cv, gpu_id g, const mig_layout *l, dev_id *out);

/* A numeric policy parameter: its key, bounds, and where it goes in the policy's state (a
 * double, or a bool taking 0 or 1 when is_bool). */
typedef struct repart_key {
    const char *key;
    double lo, hi;
    size_t off;
    bool is_bool;
} repart_key;

/* Take params into state by the table keys[0..n): an unknown key or a value that is not a
 * number within its bounds is reported through d at its position (`unknown parameter; expected
 * one of [...]`, `bad value; expected a number from LO to HI`). Returns 0 or SIM_EINPUT. */
int repart_params(const param_set *params, const repart_key *keys, size_t n, void *state, diag *d);

#endif
