/* sim/engine.h - the simulation context: clock, event scheduling, run loop, components.
 *
 * A sim_ctx owns the clock (`now`, int64 ns, never decreasing), the pending-event queue
 * (sim/evq.h), the components registered on it and their state. Events carry a handler, a
 * borrowed user pointer and a 16-byte payload; they fire in (time, prio desc, insertion) order.
 * Components (a model's pieces, the fluid solver of sim/fluid.h) are driven through a callback
 * table (sim_component_ops): the engine allocates and zeroes their state from state_size, calls
 * init, calls verify from sim_verify (sim/verify.h) and fini at sim_destroy, newest first.
 * Scheduling an event in the past is a bug (SIM_ASSERT). No global state: everything lives in
 * the context, which is not thread-safe (one context per thread).
 */
#ifndef SIMPROJ_SIM_ENGINE_H
#define SIMPROJ_SIM_ENGINE_H

#include "sim/evq.h"
#include "sim/simtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Counters of a run (all since sim_create). */
typedef struct sim_counters {
    uint64_t n_scheduled;   /* events pushed */
    uint64_t n_executed;    /* handlers called */
    uint64_t n_cancelled;   /* successful sim_cancel calls */
    uint64_t n_rescheduled; /* successful sim_reschedule calls */
    uint64_t max_pending;   /* high-water mark of the queue */
} sim_counters;

/* Why sim_run returned. */
typedef enum sim_run_status {
    SIM_RUN_EMPTY = 0, /* no event left */
    SIM_RUN_HORIZON,   /* next event is after `until` (the clock was advanced to `until`) */
    SIM_RUN_STOPPED,   /* a handler called sim_stop */
} sim_run_status;

/* A component: a piece of the simulated world with engine-managed state. */
typedef struct sim_component_ops {
    const char *name;  /* for messages, e.g. "fluid" */
    size_t state_size; /* bytes of zeroed state the engine allocates */
    /* Optional. Initialise `state` from `arg` (borrowed for the call); 0 or a negative SIM_E*. */
    int (*init)(sim_ctx *ctx, void *state, const void *arg);
    /* Optional. Release what init acquired (not the state block itself). */
    void (*fini)(sim_ctx *ctx, void *state);
    /* Optional. Check invariants; 0 when sound, else SIM_ERANGE and a one-line reason in why. */
    int (*verify)(const sim_ctx *ctx, const void *state, char *why, size_t why_len);
} sim_component_ops;

/* Create a context at time 0 with an empty queue; caller owns (sim_destroy). */
sim_ctx *sim_create(void);
/* Finalise every component (newest first), free their state, the queue and the context;
 * NULL is a no-op. */
void sim_destroy(sim_ctx *ctx);

/* Current simulated time, ns. */
sim_time sim_now(const sim_ctx *ctx);

/* Schedule fn(ctx, ev) at absolute time `at` (>= now) with priority prio (higher first at equal
 * time); `user` is borrowed and must stay valid until the event fires or is cancelled.
 * Returns the event's id (for sim_cancel / sim_reschedule). */
sim_event_id sim_schedule_at(sim_ctx *ctx, sim_time at, int prio, sim_handler *fn, void *user,
                             sim_payload data);
/* Same, `delay` ns (>= 0) after now. */
sim_event_id sim_schedule_in(sim_ctx *ctx, sim_time delay, int prio, sim_handler *fn, void *user,
                             sim_payload data);
/* Cancel a pending event; true if it was pending (false for a fired, cancelled or unknown id). */
bool sim_cancel(sim_ctx *ctx, sim_event_id id);
/* Move a pending event to time `at` (>= now); true if it was pending. */
bool sim_reschedule(sim_ctx *ctx, sim_event_id id, sim_time at);

/* Declare that events of handler fn will often be rescheduled or cancelled (evq_expect_moves):
 * a cost hint that changes no result. */
void sim_expect_moves(sim_ctx *ctx, sim_handler *fn);

/* Run events in order while their time is <= until (SIM_TIME_MAX: no horizon) and no handler
 * has called sim_stop. On SIM_RUN_HORIZON, and on SIM_RUN_EMPTY with a finite `until`, the clock
 * ends at `until`. A stop request is consumed by the sim_run it ends. */
sim_run_status sim_run(sim_ctx *ctx, sim_time until);
/* Ask the running sim_run to return after the current handler. */
void sim_stop(sim_ctx *ctx);

/* Counters so far; borrowed, valid while ctx lives. */
const sim_counters *sim_get_counters(const sim_ctx *ctx);

/* Register a component: allocate and zero ops->state_size bytes (owned by ctx, freed at
 * sim_destroy), call ops->init(ctx, state, arg). Returns the state, or NULL if init failed
 * (its status in *err when err is non-NULL; nothing stays registered). `ops` is borrowed and
 * must outlive ctx (normally a static const table). */
void *sim_component_add(sim_ctx *ctx, const sim_component_ops *ops, const void *arg, int *err);

/* An observer of a run (a progress display): it may read the context and the state of what
 * runs on it, but must not schedule, cancel, stop or change anything, so a run observed and one
 * not observed are the same run. */
typedef void sim_observer_fn(const sim_ctx *ctx, void *user);
/* Call fn(ctx, user) after every `every` executed events (0: never, the default); `user` is
 * borrowed until the observer is replaced or ctx is destroyed. */
void sim_set_observer(sim_ctx *ctx, uint64_t every, sim_observer_fn *fn, void *user);
/* Run sim_verify after every `every` events (0: never, the default). When a check fails the
 * run aborts, printing the reason, the sim time and the event id (a bug, STYLE.md §4). */
void sim_set_verify_every(sim_ctx *ctx, uint64_t every);

#endif
