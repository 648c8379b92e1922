/* sim/fluid.h - fluid activities on shared resources (as in SimGrid's LMM model).
 *
 * An activity is a piece of work (units of the caller's choosing: processor-seconds, bytes)
 * that progresses at a rate (units/s) decided by the resources it uses and its own rate cap. It
 * may use several resources, each with a consumption coefficient a (resource units consumed per
 * unit of the activity's rate: an activity at rate x uses a*x of the resource). A resource has a
 * capacity C (resource units/s) that its users share: sum_i a_i x_i <= C. Rates are the max-min
 * fair allocation (progressive filling, sim/maxmin.h): rates rise together until a resource
 * saturates or a cap binds, those activities freeze, and the rest keep rising. On one resource
 * this is equal sharing; on several it is max-min fairness across links.
 * What this module does not do: weighted shares, isolated resources, per-user bounds or
 * capacities that depend on the users (time-slicing efficiency, MPS percentages). GPU sharing
 * reaches the engine only as rate caps: model/cluster/jobrate computes a job's rate from the
 * physics (model/physics/share*) and sets it as the activity's cap, so the engine needs no sharing
 * model of its own (docs/engine.md says why the earlier pluggable models were removed).
 * Lazy recomputation: any change (start, completion, cancel, cap) marks the affected activities
 * and resources dirty and schedules one flush event at the current time with SIM_PRIO_MAX, so all
 * changes made by one handler cost one solve. The flush re-solves only the connected component
 * (activities linked through shared resources) of what changed, integrates progress
 * (remaining -= rate * dt) up to now, and reschedules the completion events of activities whose
 * rate changed.
 * Completion: at its completion event an activity's remaining work is set to 0, it leaves its
 * resources, its slot is freed (its id turns stale) and then done(sys, id, user) is called; the
 * callback may start, cancel or change anything.
 * Ownership: fluid_create registers the solver as a component of ctx: ctx owns it and frees it
 * at sim_destroy. Resource names are copied; `uses` arrays are copied; `user` pointers are
 * borrowed.
 * Units: time in sim_time ns (conversions through sim/simtime.h), work in units, rates in
 * units/s, capacity in resource units/s. Invariants (checked by sim_verify when no flush is
 * pending): remaining >= 0, 0 <= rate <= cap, every resource's usage <= C.
 */
#ifndef SIMPROJ_SIM_FLUID_H
#define SIMPROJ_SIM_FLUID_H

#include "sim/engine.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fluid_sys fluid_sys;
typedef uint32_t fluid_res_id; /* dense, 0.. in creation order; resources are never removed */
typedef uint64_t fluid_act_id; /* generation << 32 | slot + 1; 0 is never an id */
#define FLUID_ACT_NONE ((fluid_act_id)0)
#define FLUID_NO_CAP ((double)INFINITY) /* rate cap meaning "none" */

/* One resource an activity uses. */
typedef struct fluid_use {
    fluid_res_id res;
    double coeff; /* > 0; resource units per unit of rate (1 = one unit of work per unit) */
} fluid_use;

/* Called when an activity completes; `act` is already stale. `user` as given at start. */
typedef void fluid_done_fn(fluid_sys *sys, fluid_act_id act, void *user);

/* Create the solver on ctx (owned by ctx; freed by sim_destroy). */
fluid_sys *fluid_create(sim_ctx *ctx);
/* The engine context the solver runs on (borrowed). */
sim_ctx *fluid_ctx(const fluid_sys *sys);

/* Add a resource of `capacity` (>= 0, finite) units/s, shared max-min fairly by its users; name
 * is copied. Returns its id. */
fluid_res_id fluid_resource_add(fluid_sys *sys, const char *name, double capacity);

/* Start an activity of `work` (>= 0, finite) units using uses[0..n_uses) (copied; each
 * resource at most once), no cap. An activity needs at least one use or a finite cap
 * by the next flush. done (may be NULL) is called at completion with `user` (borrowed). */
fluid_act_id fluid_start(fluid_sys *sys, double work, const fluid_use *uses, size_t n_uses,
                         fluid_done_fn *done, void *user);
/* Set the rate cap (units/s, >= 0; FLUID_NO_CAP for none; 0 pauses the activity). False for a
 * stale id. */
bool fluid_set_rate_cap(fluid_sys *sys, fluid_act_id a, double cap);
/* Remove an activity without calling done; its remaining work (as of now) in *remaining when
 * non-NULL. False for a stale id. */
bool fluid_cancel(fluid_sys *sys, fluid_act_id a, double *remaining);
/* Remaining work as of now (units); NAN for a stale id. Does not flush. */
double fluid_remaining(const fluid_sys *sys, fluid_act_id a);
/* Solve pending changes now (normally done by the flush event). */
void fluid_flush(fluid_sys *sys);
/* Number of solves run, and activities re-rated over all solves (`bench fluid` prints them). */
uint64_t fluid_n_solves(const fluid_sys *sys);
uint64_t fluid_n_rerated(const fluid_sys *sys);

#endif
