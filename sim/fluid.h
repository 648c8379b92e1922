/* sim/fluid.h - fluid activities on shared resources (as in SimGrid's LMM model).
 *
 * An activity is a piece of work (units of the caller's choosing: processor-seconds, bytes)
 * that progresses at a rate (units/s) decided by the resources it uses. It may use several
 * resources, each with a consumption coefficient a (resource units consumed per unit of the
 * activity's rate: an activity at rate x uses a*x of the resource). A resource has a capacity
 * (resource units/s) and a sharing model (a callback table, fluid_sharing_ops):
 *   - coupled models (fluid_sharing_fair, and any model/ registers with .coupled = true): the
 *     users share the capacity, sum_i a_i x_i <= C_eff, with C_eff = ops->capacity(...) or C;
 *   - isolated models (fluid_sharing_isolated): every user alone may use up to C_eff.
 * A model may also bound one user's consumption (ops->user_bound: a per-client share limit).
 * Rates are the weighted max-min fair allocation (progressive filling): every activity has a
 * share weight w (default 1; all 1 = equal share), and a rate cap (default none); rates rise as
 * x_i = w_i * lambda until a resource saturates or a cap/bound binds, those activities freeze,
 * and the rest keep rising. On one coupled resource this is weighted (or equal) sharing; on
 * several it is max-min fairness across links. A round-robin server that loses efficiency
 * e(k) to switching among k users is a coupled model whose capacity callback returns
 * C * e(k) (the model layer supplies e; this module knows nothing of what resources are).
 * Lazy recomputation: any change (start, completion, cancel, cap, weight, capacity) marks the
 * affected resources dirty and schedules one flush event at the current time with
 * SIM_PRIO_MAX, so all changes made by one handler cost one solve. The flush re-solves only the
 * connected component (activities linked through shared non-trivially-isolated resources) of
 * what changed, integrates progress (remaining -= rate * dt) up to now, and reschedules the
 * completion events of activities whose rate changed. Queries of rates flush first.
 * Completion: at its completion event an activity's remaining work is set to 0, it leaves its
 * resources, its slot is freed (its id turns stale) and then done(sys, id, user) is called; the
 * callback may start, cancel or change anything.
 * Ownership: fluid_create registers the solver as a component of ctx: ctx owns it and frees it
 * at sim_destroy. Sharing-model ops and params are borrowed and must outlive ctx; resource
 * names are copied; `uses` arrays are copied; `user` pointers are borrowed.
 * Units: time in sim_time ns (conversions through sim/simtime.h), work in units, rates in
 * units/s, capacity in resource units/s. Invariants (checked by sim_verify when no flush is
 * pending): remaining >= 0, 0 <= rate <= cap, every coupled resource's usage <= C_eff, every
 * isolated user's usage <= C_eff.
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

/* What a sharing model sees of one user of its resource. */
typedef struct fluid_user {
    fluid_act_id act;
    double coeff;    /* resource units per unit of the activity's rate */
    double weight;   /* the activity's share weight (> 0) */
    double rate_cap; /* the activity's rate cap (FLUID_NO_CAP if none; 0 = paused) */
    double param;    /* the per-use parameter given at start (model-defined, e.g. a percentage) */
} fluid_user;

/* A sharing model. All callbacks are optional; params is the pointer given to
 * fluid_resource_add (borrowed). users[0..n) are the current users in a deterministic order. */
typedef struct fluid_sharing_ops {
    const char *name;
    bool coupled; /* true: users share C_eff; false: each user alone is bounded by C_eff */
    /* Effective capacity (resource units/s, >= 0) for these users; default: capacity. */
    double (*capacity)(const void *params, double capacity, const fluid_user *users, size_t n);
    /* Largest consumption (resource units/s) user i may have; default: no bound. */
    double (*user_bound)(const void *params, double capacity, const fluid_user *users, size_t n,
                         size_t i);
} fluid_sharing_ops;

/* Built-in models: weighted max-min fair sharing (equal share when all weights are 1), and
 * isolation (each user gets up to the whole capacity, as a dedicated partition does). */
extern const fluid_sharing_ops fluid_sharing_fair;
extern const fluid_sharing_ops fluid_sharing_isolated;

/* One resource an activity uses. */
typedef struct fluid_use {
    fluid_res_id res;
    double coeff; /* > 0; resource units per unit of rate (1 = one unit of work per unit) */
    double param; /* passed to the sharing model as fluid_user.param; 0 if unused */
} fluid_use;

/* Called when an activity completes; `act` is already stale. `user` as given at start. */
typedef void fluid_done_fn(fluid_sys *sys, fluid_act_id act, void *user);

/* Create the solver on ctx (owned by ctx; freed by sim_destroy). */
fluid_sys *fluid_create(sim_ctx *ctx);
/* The engine context the solver runs on (borrowed). */
sim_ctx *fluid_ctx(const fluid_sys *sys);

/* Add a resource of `capacity` (>= 0, finite) units/s with a sharing model (borrowed) and its
 * params (borrowed, may be NULL); name is copied. Returns its id. */
fluid_res_id fluid_resource_add(fluid_sys *sys, const char *name, double capacity,
                                const fluid_sharing_ops *ops, const void *params);
/* Change a resource's capacity (>= 0, finite) from now on. */
void fluid_resource_set_capacity(fluid_sys *sys, fluid_res_id r, double capacity);
/* Effective capacity C_eff and usage sum a_i x_i (units/s) under the current allocation
 * (flushes first). */
double fluid_resource_effective_capacity(fluid_sys *sys, fluid_res_id r);
double fluid_resource_usage(fluid_sys *sys, fluid_res_id r);

/* Start an activity of `work` (>= 0, finite) units using uses[0..n_uses) (copied; each
 * resource at most once), weight 1, no cap. An activity needs at least one use or a finite cap
 * by the next flush. done (may be NULL) is called at completion with `user` (borrowed). */
fluid_act_id fluid_start(fluid_sys *sys, double work, const fluid_use *uses, size_t n_uses,
                         fluid_done_fn *done, void *user);
/* Set the rate cap (units/s, >= 0; FLUID_NO_CAP for none; 0 pauses the activity). False for a
 * stale id. */
bool fluid_set_rate_cap(fluid_sys *sys, fluid_act_id a, double cap);
/* Set the share weight (> 0, finite). False for a stale id. */
bool fluid_set_weight(fluid_sys *sys, fluid_act_id a, double weight);
/* Remove an activity without calling done; its remaining work (as of now) in *remaining when
 * non-NULL. False for a stale id. */
bool fluid_cancel(fluid_sys *sys, fluid_act_id a, double *remaining);
/* True while the activity exists (started, not completed, not cancelled). */
bool fluid_is_active(const fluid_sys *sys, fluid_act_id a);
/* Remaining work as of now (units); NAN for a stale id. Does not flush. */
double fluid_remaining(const fluid_sys *sys, fluid_act_id a);
/* Current rate (units/s), flushing pending changes first; NAN for a stale id. */
double fluid_rate(fluid_sys *sys, fluid_act_id a);
/* Predicted completion time under the current rates (flushes first); SIM_TIME_MAX when the
 * rate is 0; -1 for a stale id. */
sim_time fluid_eta(fluid_sys *sys, fluid_act_id a);
/* Number of live activities. */
size_t fluid_n_active(const fluid_sys *sys);

/* Solve pending changes now (normally done by the flush event). */
void fluid_flush(fluid_sys *sys);
/* Number of solves run, and activities re-rated over all solves (for benchmarks). */
uint64_t fluid_n_solves(const fluid_sys *sys);
uint64_t fluid_n_rerated(const fluid_sys *sys);

#endif
