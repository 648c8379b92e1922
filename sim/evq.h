/* sim/evq.h - the pending-event set: a 4-ary min-heap with handles and lazy deletion, over an
 * event pool; a large queue keeps its far future in buckets of times beside the heap.
 *
 * Order: events are totally ordered by (at, prio, seq): earlier time first; at equal times the
 * HIGHER prio first; at equal (at, prio) the earlier insertion first (FIFO), so a run is
 * deterministic (STYLE.md §6). seq is assigned by evq_push and again by evq_reschedule (a
 * rescheduled event goes behind events already pending at its new (at, prio)).
 * Handles: evq_push returns a sim_event_id = (generation << 32 | slot + 1); it stays valid
 * until the event is popped or cancelled, after which every call taking it answers "not
 * pending" (a stale id never reaches a reused slot: the generation differs). 0 is never an id.
 * Ownership: the queue owns its pool of events; evq_peek returns a pointer borrowed until
 * the next call that changes the queue. Callers pass events by value (copied in and out).
 * Cost: push, pop, cancel, reschedule O(log4 n) amortized, n counting the dead entries that
 * cancel and reschedule leave in the queue (at most as many as the pending events, plus 64:
 * more are dropped in one O(n) rebuild); peek O(1). Once the heap reaches 65 536 entries, most
 * never moved, those entries' far future goes into buckets (evq.c): a push there is an append,
 * and n is then about one bucket's entries, each event also moved a bounded number of times
 * between buckets (amortized O(1) when pending times do not bunch up much). No allocation per
 * event once the pool and the buckets have grown to their peak.
 */
#ifndef SIMPROJ_SIM_EVQ_H
#define SIMPROJ_SIM_EVQ_H

#include "sim/simtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t sim_event_id;
#define SIM_EVENT_NONE ((sim_event_id)0)

/* Priorities: higher runs first among events at the same time. */
#define SIM_PRIO_MIN (-128)
#define SIM_PRIO_MAX 127
#define SIM_PRIO_DEFAULT 0

typedef struct sim_ctx sim_ctx;
typedef struct sim_event sim_event;

/* An event handler. `ev` is a copy owned by the engine, valid only during the call; the handler
 * keeps no pointer to it (STYLE.md §5). It may schedule and cancel events freely. */
typedef void sim_handler(sim_ctx *ctx, const sim_event *ev);

/* Small inline payload carried by an event (16 bytes), interpreted by the handler. */
typedef union sim_payload {
    uint64_t u64[2];
    int64_t i64[2];
    double f64[2];
    void *ptr[2];
} sim_payload;

struct sim_event {
    sim_time at;      /* when it fires, ns */
    sim_event_id id;  /* set by the queue */
    sim_handler *fn;  /* called when it fires */
    void *user;       /* borrowed by the event; the scheduler keeps it alive */
    sim_payload data; /* copied */
    int32_t prio;     /* SIM_PRIO_MIN..SIM_PRIO_MAX */
    uint32_t reserved_;
};

typedef struct evq evq;

/* Create an empty queue with room for `capacity_hint` pending events (it grows as needed);
 * caller owns (evq_destroy). */
evq *evq_create(size_t capacity_hint);
/* Free the queue and its pool; NULL is a no-op. */
void evq_destroy(evq *q);

/* Insert a copy of *ev (its id is ignored); returns the new event's id. ev->prio must lie in
 * [SIM_PRIO_MIN, SIM_PRIO_MAX] (SIM_ASSERT). */
sim_event_id evq_push(evq *q, const sim_event *ev);
/* The earliest pending event, or NULL when empty; borrowed until the queue changes. */
const sim_event *evq_peek(const evq *q);
/* Remove the earliest event into *out if its time is <= until; false (and *out untouched)
 * when the queue is empty or the earliest event is later. */
bool evq_pop_until(evq *q, sim_time until, sim_event *out);
/* Remove a pending event; true if it was pending, false for a stale or unknown id. */
bool evq_cancel(evq *q, sim_event_id id);
/* Move a pending event to time `at` (keeping its id, prio and payload; it gets a new seq);
 * true if it was pending, false for a stale or unknown id. */
bool evq_reschedule(evq *q, sim_event_id id, sim_time at);
/* Declare that events of handler fn will be rescheduled or cancelled, so they are pushed with
 * their heap position tracked (moves in place, no dead entries). Only a cost hint: the queue
 * also learns it at the first move of an fn event (up to 4 handlers; further calls do
 * nothing). */
void evq_expect_moves(evq *q, sim_handler *fn);
/* Number of pending events. */
size_t evq_size(const evq *q);

/* Check the heap order, the live and dead counts, the links between a moved event and the
 * slot its id names, and the free list. Returns 0 when sound, or
 * SIM_ERANGE with a one-line reason written to why[0..why_len) (why may be NULL). */
int evq_verify(const evq *q, char *why, size_t why_len);

/* Test hook: swap two heap positions without restoring order, to exercise evq_verify.
 * Never called outside tests. */
void evq__corrupt_for_test(evq *q, size_t i, size_t j);
/* Test hook: heap entries, live and dead (evq_size counts only the live ones). */
size_t evq__entries_for_test(const evq *q);
/* Test hook: split the far future off (buckets of times beside the heap) at n heap entries
 * rather than at 65 536, and spread buckets of more than n entries over a finer rung (rather
 * than of more than 1024), so that tests reach both with small queues. */
void evq__far_threshold_for_test(evq *q, size_t n);
/* Test hook: entries in the far future's buckets, live and dead (0 while it is off). */
size_t evq__far_entries_for_test(const evq *q);

#endif
