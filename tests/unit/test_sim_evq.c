/* Unit tests for sim/evq.h and sim/engine.h: ordering, tie-breaking, handles, the run loop,
 * components and sim_verify. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/err.h"
#include "sim/evq.h"
#include "sim/rng.h"
#include "sim/simtime.h"
#include "sim/verify.h"
#include "tests/unit/sh.h"

/* The earliest event, whatever its time (the engine pops through evq_pop_until). */
static bool pop(evq *q, sim_event *out)
{
    return evq_pop_until(q, SIM_TIME_MAX, out);
}

static sim_event mk(sim_time at, int prio, uint64_t tag)
{
    sim_event ev = {.at = at, .prio = prio};
    ev.data.u64[0] = tag;
    return ev;
}

Test(sim_time, conversion_rounds_to_nearest)
{
    cr_assert_eq(sim_time_from_s(1.0), 1000000000);
    cr_assert_eq(sim_time_from_s(0.1), 100000000);
    cr_assert_eq(sim_time_from_s(1.4e-9), 1);
    cr_assert_eq(sim_time_from_s(1.6e-9), 2);
    cr_assert_eq(sim_time_from_s(-2.5e-9), -3); /* ties away from zero */
    cr_assert_eq(sim_time_from_s(86400.0 * 365), 31536000000000000LL);
    cr_assert_float_eq(sim_time_to_s(1500000000), 1.5, 0);
}

static void convert_infinity(void *arg)
{
    (void)arg;
    (void)sim_time_from_s(1.0 / 0.0);
}

Test(sim_time, non_finite_is_a_bug)
{
    char msg[512];
    cr_assert_eq(test_death(convert_infinity, NULL, msg, sizeof msg), SIGABRT, "%s", msg);
    cr_assert_not_null(strstr(msg, "assertion failed: isfinite(ns)"), "%s", msg);
}

Test(evq, ties_break_by_prio_then_insertion)
{
    evq *q = evq_create(0);
    /* tags in the order they must come out */
    evq_push(q, &(sim_event){.at = 5, .prio = 0, .data.u64 = {3}});
    evq_push(q, &(sim_event){.at = 5, .prio = 1, .data.u64 = {1}});
    evq_push(q, &(sim_event){.at = 5, .prio = 0, .data.u64 = {4}});
    evq_push(q, &(sim_event){.at = 7, .prio = 9, .data.u64 = {6}});
    evq_push(q, &(sim_event){.at = 5, .prio = 1, .data.u64 = {2}});
    evq_push(q, &(sim_event){.at = 5, .prio = -3, .data.u64 = {5}});
    evq_push(q, &(sim_event){.at = 1, .prio = SIM_PRIO_MIN, .data.u64 = {0}});
    sim_event ev;
    for (uint64_t want = 0; want < 7; want++) {
        cr_assert(pop(q, &ev));
        cr_assert_eq(ev.data.u64[0], want);
    }
    cr_assert(!pop(q, &ev));
    evq_destroy(q);
}

Test(evq, cancel_and_reschedule_with_stale_ids)
{
    evq *q = evq_create(4);
    sim_event_id a = evq_push(q, &(sim_event){.at = 10, .data.u64 = {1}});
    sim_event_id b = evq_push(q, &(sim_event){.at = 20, .data.u64 = {2}});
    sim_event_id c = evq_push(q, &(sim_event){.at = 30, .data.u64 = {3}});
    cr_assert_neq(a, SIM_EVENT_NONE);
    cr_assert(evq_cancel(q, b));
    cr_assert(!evq_cancel(q, b), "a cancelled id is stale");
    cr_assert(!evq_reschedule(q, b, 1), "nor can it be rescheduled");
    cr_assert(evq_reschedule(q, c, 5));
    cr_assert_eq(evq_peek(q)->id, c);
    sim_event ev;
    cr_assert(pop(q, &ev));
    cr_assert_eq(ev.id, c);
    cr_assert_eq(ev.at, 5);
    cr_assert_eq(ev.data.u64[0], 3, "rescheduling keeps the payload");
    /* the freed slot is reused, but the old id stays stale */
    sim_event_id d = evq_push(q, &(sim_event){.at = 40, .data.u64 = {4}});
    cr_assert_neq(d, c);
    cr_assert(!evq_reschedule(q, c, 50));
    cr_assert(!evq_cancel(q, 0));
    cr_assert(!evq_cancel(q, 0xffffffffffULL));
    cr_assert_eq(evq_size(q), 2);
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    cr_assert(pop(q, &ev));
    cr_assert_eq(ev.id, a);
    cr_assert(pop(q, &ev));
    cr_assert_eq(ev.id, d);
    evq_destroy(q);
}

Test(evq, rescheduled_event_goes_behind_equal_keys)
{
    evq *q = evq_create(0);
    sim_event_id a = evq_push(q, &(sim_event){.at = 10, .data.u64 = {1}});
    evq_push(q, &(sim_event){.at = 10, .data.u64 = {2}});
    cr_assert(evq_reschedule(q, a, 10));
    sim_event ev;
    pop(q, &ev);
    cr_assert_eq(ev.data.u64[0], 2);
    pop(q, &ev);
    cr_assert_eq(ev.data.u64[0], 1);
    evq_destroy(q);
}

/* A rescheduled event moves to a new slot, leaving a dead entry; its id keeps reaching it, and
 * stops reaching it once it fires or is cancelled. Later moves are made in place (the new
 * slot's position is tracked) and leave nothing behind. */
Test(evq, a_moved_event_keeps_its_id_until_it_leaves)
{
    evq *q = evq_create(0);
    sim_event_id r = evq_push(q, &(sim_event){.at = 1, .data.u64 = {0}});
    sim_event_id a = evq_push(q, &(sim_event){.at = 10, .data.u64 = {1}});
    cr_assert(evq_reschedule(q, a, 40));
    cr_assert_eq(evq__entries_for_test(q), 3, "r, a at 40, and a's dead entry at 10");
    cr_assert(evq_reschedule(q, a, 30), "a second move, in place");
    cr_assert_eq(evq_size(q), 2);
    cr_assert_eq(evq__entries_for_test(q), 3);
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    sim_event ev;
    cr_assert(pop(q, &ev));
    cr_assert_eq(ev.id, r);
    cr_assert_eq(evq__entries_for_test(q), 1, "the dead entry at 10 left with r");
    cr_assert_eq(evq_peek(q)->id, a, "peek reports the id, not the slot the event sits in");
    cr_assert_eq(evq_peek(q)->at, 30);
    cr_assert(evq_reschedule(q, a, 20), "in place again");
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    cr_assert(pop(q, &ev));
    cr_assert_eq(ev.id, a);
    cr_assert_eq(ev.at, 20);
    cr_assert_eq(ev.data.u64[0], 1);
    cr_assert(!evq_cancel(q, a), "fired: stale");
    cr_assert(!evq_reschedule(q, a, 50));
    cr_assert_eq(evq_size(q), 0);
    cr_assert_eq(evq__entries_for_test(q), 0);
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    evq_destroy(q);
}

Test(evq, cancel_of_a_moved_event_and_of_a_dead_entry)
{
    evq *q = evq_create(0);
    evq_push(q, &(sim_event){.at = 1});
    sim_event_id a = evq_push(q, &(sim_event){.at = 10});
    sim_event_id b = evq_push(q, &(sim_event){.at = 20});
    cr_assert(evq_reschedule(q, a, 30));
    cr_assert(evq_cancel(q, a), "the moved event is removed in place, its dead entry stays");
    cr_assert(!evq_cancel(q, a), "a second cancel finds nothing");
    cr_assert(!evq_reschedule(q, a, 5));
    cr_assert_eq(evq__entries_for_test(q), 3, "the entry at 1, the dead one at 10, b");
    cr_assert(evq_cancel(q, b), "an event never moved: its entry stays, dead");
    cr_assert(!evq_cancel(q, b));
    cr_assert_eq(evq_size(q), 1);
    cr_assert_eq(evq__entries_for_test(q), 3);
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    sim_event ev;
    cr_assert(pop(q, &ev));
    cr_assert_eq(ev.at, 1);
    cr_assert(!pop(q, &ev), "only dead entries were left, and they are gone");
    cr_assert_eq(evq__entries_for_test(q), 0);
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    evq_destroy(q);
}

/* A cancelled event's slot is not reused while its dead entry is in the heap (the entry's key
 * must not change); once the entry has left, the slot is reused under a new generation. */
Test(evq, a_slot_is_reused_only_after_its_dead_entry_left)
{
    evq *q = evq_create(0);
    evq_push(q, &(sim_event){.at = 1});
    sim_event_id a = evq_push(q, &(sim_event){.at = 50, .data.u64 = {1}});
    cr_assert(evq_cancel(q, a));
    uint64_t a_slot = a & 0xffffffffu;
    for (int i = 0; i < 20; i++) {
        sim_event_id id = evq_push(q, &(sim_event){.at = 50, .data.u64 = {2}});
        cr_assert_neq(id & 0xffffffffu, a_slot, "push %d took the slot of a dead entry", i);
    }
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    sim_event ev;
    for (int i = 0; i < 21; i++) {
        cr_assert(pop(q, &ev));
        cr_assert_neq(ev.data.u64[0], 1, "the cancelled event never comes out");
    }
    cr_assert_eq(evq__entries_for_test(q), 0);
    sim_event_id again = SIM_EVENT_NONE;
    for (int i = 0; i < 30 && again == SIM_EVENT_NONE; i++) {
        sim_event_id id = evq_push(q, &(sim_event){.at = 60});
        if ((id & 0xffffffffu) == a_slot) {
            again = id;
        }
    }
    cr_assert_neq(again, SIM_EVENT_NONE, "the freed slot is reused");
    cr_assert_neq(again, a, "under a new generation");
    cr_assert(!evq_cancel(q, a), "so the old id stays stale");
    cr_assert(evq_cancel(q, again));
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    evq_destroy(q);
}

static void handler_f(sim_ctx *ctx, const sim_event *ev)
{
    (void)ctx;
    (void)ev;
}

static void handler_g(sim_ctx *ctx, const sim_event *ev)
{
    (void)ctx;
    (void)ev;
}

/* Pops an event at first_at, then event id at `at`, and finds the queue empty. */
static void pops_then_empty(evq *q, sim_time first_at, sim_event_id id, sim_time at)
{
    sim_event ev;
    cr_assert(pop(q, &ev));
    cr_assert_eq(ev.at, first_at);
    cr_assert(pop(q, &ev));
    cr_assert_eq(ev.id, id);
    cr_assert_eq(ev.at, at);
    cr_assert(!pop(q, &ev));
    cr_assert_eq(evq__entries_for_test(q), 0);
}

/* Once an event of a handler has been moved, the handler's later events are pushed tracked:
 * moving or cancelling them leaves no dead entry. Other handlers' events are not tracked. */
Test(evq, handlers_whose_events_move_get_tracked_events)
{
    evq *q = evq_create(0);
    evq_push(q, &(sim_event){.at = 1, .fn = handler_g});
    sim_event_id f1 = evq_push(q, &(sim_event){.at = 10, .fn = handler_f});
    cr_assert(evq_reschedule(q, f1, 20));
    cr_assert_eq(evq__entries_for_test(q), 3, "the first move leaves a dead entry");
    sim_event_id f2 = evq_push(q, &(sim_event){.at = 30, .fn = handler_f});
    sim_event_id g1 = evq_push(q, &(sim_event){.at = 40, .fn = handler_g});
    cr_assert(evq_reschedule(q, f2, 35));
    cr_assert(evq_reschedule(q, f2, 15));
    cr_assert_eq(evq__entries_for_test(q), 5, "f's new event moves in place");
    cr_assert(evq_cancel(q, f2));
    cr_assert_eq(evq__entries_for_test(q), 4, "and is cancelled in place");
    cr_assert(evq_cancel(q, g1));
    cr_assert_eq(evq__entries_for_test(q), 4, "g's event leaves a dead entry");
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    pops_then_empty(q, 1, f1, 20);
    evq_destroy(q);
}

/* A handler declared up front has its events tracked from the first. */
Test(evq, expect_moves_tracks_a_handler_from_its_first_event)
{
    evq *q = evq_create(0);
    evq_expect_moves(q, handler_f);
    evq_push(q, &(sim_event){.at = 1, .fn = handler_g});
    sim_event_id f1 = evq_push(q, &(sim_event){.at = 10, .fn = handler_f});
    cr_assert(evq_reschedule(q, f1, 20));
    cr_assert(evq_reschedule(q, f1, 5));
    cr_assert_eq(evq__entries_for_test(q), 2, "moved in place from the first move");
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    pops_then_empty(q, 1, f1, 5);
    evq_destroy(q);
}

/* Cancels of events never moved leave dead entries behind the root: the heap is rebuilt when
 * they outnumber the pending events, so it never holds more than 2 pending + 64 entries; the
 * rebuild keeps the positions of moved events, which later moves and cancels use. */
Test(evq, dead_entries_are_compacted_and_order_kept)
{
    enum { N = 2000 };
    evq *q = evq_create(0);
    sim_event_id *ids = calloc(N, sizeof *ids);
    evq_push(q, &(sim_event){.at = 0, .data.u64 = {N}}); /* a live root throughout */
    for (int i = 0; i < N; i++) {
        ids[i] = evq_push(q, &(sim_event){.at = 100 + i, .data.u64 = {(uint64_t)i}});
    }
    for (int i = 0; i < N; i += 4) { /* moved once: a dead entry each, positions tracked */
        cr_assert(evq_reschedule(q, ids[i], 10000 + (N - i)));
    }
    cr_assert_eq(evq__entries_for_test(q), N + 1 + N / 4);
    size_t before_rebuild = 0;
    for (int i = 1; i < N; i += 4) { /* cancelled unmoved: dead entries, then a rebuild */
        size_t e = evq__entries_for_test(q);
        before_rebuild = e > before_rebuild ? e : before_rebuild;
        cr_assert(evq_cancel(q, ids[i]));
        cr_assert_leq(evq__entries_for_test(q), 2 * evq_size(q) + 64, "cancel %d", i);
    }
    for (int i = 2; i < N; i += 4) {
        cr_assert(evq_cancel(q, ids[i]));
        cr_assert_leq(evq__entries_for_test(q), 2 * evq_size(q) + 64, "cancel %d", i);
    }
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    cr_assert_eq(evq_size(q), 1 + N / 2);
    cr_assert_lt(evq__entries_for_test(q), before_rebuild, "a rebuild dropped dead entries");
    for (int i = 0; i < N; i += 4) { /* moved again, in place, from the rebuilt positions */
        cr_assert(evq_reschedule(q, ids[i], 20000 + i));
    }
    for (int i = 0; i < N; i += 8) {
        cr_assert(evq_cancel(q, ids[i]));
    }
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    sim_event ev;
    cr_assert(pop(q, &ev));
    cr_assert_eq(ev.data.u64[0], N);
    for (int i = 3; i < N; i += 4) { /* never moved, in time order */
        cr_assert(pop(q, &ev));
        cr_assert_eq(ev.id, ids[i], "pop of %d", i);
        cr_assert_eq(ev.at, 100 + i);
    }
    for (int i = 4; i < N; i += 8) { /* moved twice */
        cr_assert(pop(q, &ev));
        cr_assert_eq(ev.id, ids[i], "pop of %d", i);
        cr_assert_eq(ev.at, 20000 + i);
    }
    cr_assert(!pop(q, &ev));
    cr_assert_eq(evq__entries_for_test(q), 0);
    free(ids);
    evq_destroy(q);
}

static int cmp_key(const void *pa, const void *pb)
{
    const sim_event *a = pa, *b = pb;
    if (a->at != b->at) {
        return a->at < b->at ? -1 : 1;
    }
    if (a->prio != b->prio) {
        return a->prio > b->prio ? -1 : 1;
    }
    return a->data.u64[1] < b->data.u64[1] ? -1 : (a->data.u64[1] > b->data.u64[1]);
}

/* Random pushes, cancels and reschedules against a reference: sort by (at, -prio, seq). */
Test(evq, random_operations_match_a_sorted_reference)
{
    rng_root root = rng_root_make(42);
    rng_stream *s = rng_stream_open(&root, "test.evq", 0);
    enum { N = 3000 };
    evq *q = evq_create(0);
    sim_event *ref = calloc(N, sizeof *ref);
    sim_event_id *ids = calloc(N, sizeof *ids);
    bool *live = calloc(N, sizeof *live);
    uint64_t seq = 0;
    for (int i = 0; i < N; i++) {
        sim_time at = (sim_time)rng_uniform_int(s, 50); /* many exact ties */
        int prio = (int)rng_uniform_int(s, 3) - 1;
        ref[i] = mk(at, prio, (uint64_t)i);
        ref[i].data.u64[1] = seq++;
        ids[i] = evq_push(q, &ref[i]);
        live[i] = true;
        if (i % 7 == 3) {
            int j = (int)rng_uniform_int(s, (uint64_t)i + 1);
            cr_assert_eq(evq_cancel(q, ids[j]), live[j]);
            live[j] = false;
        }
        if (i % 5 == 1) {
            int j = (int)rng_uniform_int(s, (uint64_t)i + 1);
            sim_time nat = (sim_time)rng_uniform_int(s, 50);
            cr_assert_eq(evq_reschedule(q, ids[j], nat), live[j]);
            if (live[j]) {
                ref[j].at = nat;
                ref[j].data.u64[1] = seq++;
            }
        }
    }
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    size_t n_live = 0;
    sim_event *want = calloc(N, sizeof *want);
    for (int i = 0; i < N; i++) {
        if (live[i]) {
            want[n_live++] = ref[i];
        }
    }
    qsort(want, n_live, sizeof *want, cmp_key);
    cr_assert_eq(evq_size(q), n_live);
    for (size_t k = 0; k < n_live; k++) {
        sim_event ev;
        cr_assert(pop(q, &ev));
        cr_assert_eq(ev.data.u64[0], want[k].data.u64[0], "pop %zu: tag %llu, want %llu", k,
                     (unsigned long long)ev.data.u64[0], (unsigned long long)want[k].data.u64[0]);
        cr_assert_eq(ev.at, want[k].at);
    }
    cr_assert_eq(evq_size(q), 0);
    free(want);
    free(ref);
    free(ids);
    free(live);
    evq_destroy(q);
    rng_stream_close(s);
}

/* The far future (buckets of times beside the heap, split off from a large heap: here from 64
 * entries) against a reference that scans every pending event for the least (at, -prio, seq).
 * The queue grows, holds, drains to empty (the far future is given up) and grows again; times
 * mix ties on a coarse grid, an exponential spread, far outliers and the largest time. Events
 * of seven handlers are moved and cancelled: four are declared (their events tracked, kept in
 * the heap, an eighth of the events), which leaves no room to learn the other three, whose
 * events stay untracked and leave dead entries in the buckets. Every pop must be the reference's, and evq_verify must hold
 * throughout. */
#define HANDLER(k)                                                                                 \
    static void handler_##k(sim_ctx *ctx, const sim_event *ev)                                     \
    {                                                                                              \
        (void)ctx;                                                                                 \
        (void)ev;                                                                                  \
    }
HANDLER(0)
HANDLER(1)
HANDLER(2)
HANDLER(3)
HANDLER(4)
HANDLER(5)
HANDLER(6)
static sim_handler *const far_handlers[] = {handler_0, handler_1, handler_2, handler_3,
                                            handler_4, handler_5, handler_6};

typedef struct ref_ev {
    sim_time at;
    int prio;
    uint64_t seq;
    sim_event_id id;
} ref_ev;

static bool ref_before(const ref_ev *a, const ref_ev *b)
{
    if (a->at != b->at) {
        return a->at < b->at;
    }
    if (a->prio != b->prio) {
        return a->prio > b->prio;
    }
    return a->seq < b->seq;
}

static sim_time far_test_time(rng_stream *s, sim_time now)
{
    switch (rng_uniform_int(s, 10)) {
    case 0:
        return now + (sim_time)rng_uniform_int(s, 4) * 1000; /* ties, some at now */
    case 1:
        return now + 1000000000000LL + (sim_time)rng_uniform_int(s, 1000000000000LL);
    case 2:
        return rng_uniform_int(s, 50) ? now + (sim_time)rng_uniform_int(s, 64) * 250
                                      : SIM_TIME_MAX;
    default:
        return now + (sim_time)(rng_exponential(s, 1.0) * 1e6);
    }
}

Test(evq, far_future_buckets_keep_the_order_of_a_reference)
{
    enum { MAX = 6000, STEPS = 60000 };
    rng_root root = rng_root_make(7);
    rng_stream *s = rng_stream_open(&root, "test.evq.far", 0);
    evq *q = evq_create(0);
    evq__far_threshold_for_test(q, 64);
    for (int k = 0; k < 4; k++) {
        evq_expect_moves(q, far_handlers[k]);
    }
    ref_ev *ref = calloc(MAX, sizeof *ref); /* the pending events, in no order */
    size_t n = 0, max_far = 0, pops = 0;
    uint64_t seq = 0;
    sim_time now = 0;
    bool emptied = false;
    for (int step = 0; step < STEPS; step++) {
        /* grow to ~4000, hold, drain to empty, grow again */
        int phase = step < 15000 ? 0 : step < 30000 ? 1 : step < 45000 && !emptied ? 2 : 0;
        uint64_t r = rng_uniform_int(s, 100);
        bool push = phase == 0 ? r < 60 : phase == 1 ? r < 35 : r < 20;
        if (n == 0) {
            emptied = emptied || step > 15000;
            push = true;
        }
        if (push && n < MAX) {
            uint64_t h = rng_uniform_int(s, 32);
            sim_handler *fn = far_handlers[h < 4 ? h : 4 + h % 3];
            int prio = (int)rng_uniform_int(s, 3) - 1;
            sim_time at = far_test_time(s, now);
            ref[n] = (ref_ev){at, prio, seq++, 0};
            ref[n].id = evq_push(q, &(sim_event){.at = at, .prio = prio, .fn = fn});
            n++;
        } else if (r < 80 || phase == 2) { /* pop */
            size_t m = 0;
            for (size_t k = 1; k < n; k++) {
                m = ref_before(&ref[k], &ref[m]) ? k : m;
            }
            sim_event ev;
            cr_assert(pop(q, &ev));
            cr_assert_eq(ev.id, ref[m].id, "step %d pop %zu: at %lld, want %lld", step, pops,
                         (long long)ev.at, (long long)ref[m].at);
            cr_assert_eq(ev.at, ref[m].at);
            now = ev.at == SIM_TIME_MAX ? now : ev.at;
            ref[m] = ref[--n];
            pops++;
        } else { /* cancel or move a pending event */
            size_t k = (size_t)rng_uniform_int(s, n);
            const sim_event *top = evq_peek(q);
            cr_assert_not_null(top);
            if (rng_uniform_int(s, 2)) {
                cr_assert(evq_cancel(q, ref[k].id));
                ref[k] = ref[--n];
            } else {
                sim_time at = far_test_time(s, now);
                cr_assert(evq_reschedule(q, ref[k].id, at));
                ref[k].at = at;
                ref[k].seq = seq++;
            }
        }
        size_t far = evq__far_entries_for_test(q);
        max_far = far > max_far ? far : max_far;
        cr_assert_eq(evq_size(q), n);
        if (step % 101 == 0 || n < 3) {
            char why[256];
            cr_assert_eq(evq_verify(q, why, sizeof why), 0, "step %d: %s", step, why);
        }
    }
    cr_assert(emptied, "the queue drained to empty once");
    cr_assert_gt(max_far, 1000, "the far future held most events (max %zu)", max_far);
    cr_assert_gt(evq__far_entries_for_test(q), 0, "and was split off again after it emptied");
    sim_event ev;
    while (n) {
        size_t m = 0;
        for (size_t k = 1; k < n; k++) {
            m = ref_before(&ref[k], &ref[m]) ? k : m;
        }
        cr_assert(pop(q, &ev));
        cr_assert_eq(ev.id, ref[m].id);
        ref[m] = ref[--n];
    }
    cr_assert(!pop(q, &ev));
    cr_assert_eq(evq__entries_for_test(q), 0);
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    free(ref);
    evq_destroy(q);
    rng_stream_close(s);
}

/* A queue large enough that its arrays take the huge-page allocation path (>= 2 MiB) and
 * grow several times: every event comes out, in order. */
Test(evq, large_queue_grows_and_pops_in_order)
{
    enum { N = 300000 };
    rng_root root = rng_root_make(3);
    rng_stream *s = rng_stream_open(&root, "test.evq.large", 0);
    evq *q = evq_create(0);
    for (uint64_t i = 0; i < N; i++) {
        evq_push(q, &(sim_event){.at = (sim_time)rng_uniform_int(s, 1000000), .data.u64 = {i}});
    }
    cr_assert_eq(evq_size(q), N);
    cr_assert_eq(evq_verify(q, NULL, 0), 0);
    sim_event prev = {0}, ev;
    uint64_t n = 0;
    while (pop(q, &ev)) {
        cr_assert(n == 0 || prev.at < ev.at ||
                      (prev.at == ev.at && prev.data.u64[0] < ev.data.u64[0]),
                  "pop %llu out of order", (unsigned long long)n);
        prev = ev;
        n++;
    }
    cr_assert_eq(n, N);
    evq_destroy(q);
    rng_stream_close(s);
}

Test(evq, verify_catches_a_corrupted_heap)
{
    evq *q = evq_create(0);
    for (int i = 0; i < 20; i++) {
        evq_push(q, &(sim_event){.at = i});
    }
    char why[256];
    cr_assert_eq(evq_verify(q, why, sizeof why), 0);
    evq__corrupt_for_test(q, 0, 19);
    cr_assert_eq(evq_verify(q, why, sizeof why), SIM_ERANGE);
    cr_assert(strstr(why, "heap property broken") != NULL, "got: %s", why);
    evq_destroy(q);
}

/* ---- engine ----------------------------------------------------------------------------- */

typedef struct trace {
    sim_time at[16];
    uint64_t tag[16];
    int n;
} trace;

static void record(sim_ctx *ctx, const sim_event *ev)
{
    trace *t = ev->user;
    t->at[t->n] = sim_now(ctx);
    t->tag[t->n++] = ev->data.u64[0];
}

static void record_and_stop(sim_ctx *ctx, const sim_event *ev)
{
    record(ctx, ev);
    sim_stop(ctx);
}

static sim_payload tag(uint64_t v)
{
    return (sim_payload){.u64 = {v, 0}};
}

Test(engine, runs_in_order_and_respects_horizon_and_stop)
{
    sim_ctx *ctx = sim_create();
    sim_set_verify_every(ctx, 1);
    trace t = {0};
    sim_schedule_at(ctx, 30, 0, record, &t, tag(3));
    sim_schedule_at(ctx, 10, 0, record, &t, tag(1));
    sim_event_id x = sim_schedule_at(ctx, 20, 0, record, &t, tag(99));
    sim_schedule_at(ctx, 20, 0, record_and_stop, &t, tag(2));
    sim_schedule_at(ctx, 50, 0, record, &t, tag(5));
    cr_assert(sim_cancel(ctx, x));
    cr_assert_eq(sim_run(ctx, SIM_TIME_MAX), SIM_RUN_STOPPED);
    cr_assert_eq(t.n, 2);
    cr_assert_eq(sim_now(ctx), 20);
    cr_assert_eq(sim_run(ctx, 40), SIM_RUN_HORIZON);
    cr_assert_eq(sim_now(ctx), 40, "the clock ends at the horizon");
    cr_assert_eq(t.n, 3);
    cr_assert_eq(sim_run(ctx, SIM_TIME_MAX), SIM_RUN_EMPTY);
    cr_assert_eq(sim_now(ctx), 50);
    cr_assert_eq(t.n, 4);
    uint64_t want_tags[] = {1, 2, 3, 5};
    sim_time want_at[] = {10, 20, 30, 50};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(t.tag[i], want_tags[i]);
        cr_assert_eq(t.at[i], want_at[i]);
    }
    const sim_counters *c = sim_get_counters(ctx);
    cr_assert_eq(c->n_scheduled, 5);
    cr_assert_eq(c->n_executed, 4);
    cr_assert_eq(c->n_cancelled, 1);
    cr_assert_eq(c->max_pending, 5);
    cr_assert_eq(sim_verify(ctx, NULL, 0), 0);
    sim_destroy(ctx);
}

static void chain(sim_ctx *ctx, const sim_event *ev)
{
    trace *t = ev->user;
    record(ctx, ev);
    if (ev->data.u64[0] < 5) {
        sim_schedule_in(ctx, 0, 0, chain, t, tag(ev->data.u64[0] + 1));
    }
}

Test(engine, zero_delay_events_run_at_the_same_time_in_order)
{
    sim_ctx *ctx = sim_create();
    trace t = {0};
    sim_schedule_at(ctx, 7, 0, chain, &t, tag(0));
    sim_schedule_at(ctx, 7, 0, record, &t, tag(100));
    cr_assert_eq(sim_run(ctx, SIM_TIME_MAX), SIM_RUN_EMPTY);
    cr_assert_eq(t.n, 7);
    uint64_t want[] = {0, 100, 1, 2, 3, 4, 5};
    for (int i = 0; i < 7; i++) {
        cr_assert_eq(t.tag[i], want[i]);
        cr_assert_eq(t.at[i], 7);
    }
    sim_destroy(ctx);
}

/* What an observer saw: the executed-event count and the clock at each call. */
typedef struct seen {
    int n;
    uint64_t executed[8];
    sim_time at[8];
} seen;

static void observer(const sim_ctx *ctx, void *user)
{
    seen *s = user;
    s->executed[s->n] = sim_get_counters(ctx)->n_executed;
    s->at[s->n++] = sim_now(ctx);
}

Test(engine, an_observer_is_called_every_n_events_after_the_handler)
{
    sim_ctx *ctx = sim_create();
    trace t = {0};
    seen s = {0};
    sim_set_observer(ctx, 3, observer, &s);
    for (uint64_t k = 1; k <= 7; k++) { /* events at 10, 20, ..., 70 */
        sim_schedule_at(ctx, (sim_time)(10 * k), 0, record, &t, tag(k));
    }
    cr_assert_eq(sim_run(ctx, SIM_TIME_MAX), SIM_RUN_EMPTY);
    /* 7 events, every 3rd: after the 3rd (t = 30) and the 6th (t = 60) */
    cr_assert_eq(t.n, 7);
    cr_assert_eq(s.n, 2);
    cr_assert_eq(s.executed[0], 3);
    cr_assert_eq(s.at[0], 30);
    cr_assert_eq(s.executed[1], 6);
    cr_assert_eq(s.at[1], 60);
    sim_set_observer(ctx, 0, NULL, NULL); /* off: no further calls */
    sim_schedule_at(ctx, 80, 0, record, &t, tag(8));
    sim_schedule_at(ctx, 90, 0, record, &t, tag(9));
    sim_schedule_at(ctx, 95, 0, record, &t, tag(10));
    cr_assert_eq(sim_run(ctx, SIM_TIME_MAX), SIM_RUN_EMPTY);
    cr_assert_eq(s.n, 2);
    sim_destroy(ctx);
}

static void schedule_in_the_past(void *arg)
{
    (void)arg;
    sim_ctx *ctx = sim_create();
    trace t = {0};
    sim_schedule_at(ctx, 10, 0, record, &t, tag(0));
    sim_run(ctx, SIM_TIME_MAX);
    sim_schedule_at(ctx, 9, 0, record, &t, tag(1));
}

Test(engine, scheduling_in_the_past_is_a_bug)
{
    char msg[512];
    cr_assert_eq(test_death(schedule_in_the_past, NULL, msg, sizeof msg), SIGABRT, "%s", msg);
    cr_assert_not_null(strstr(msg, "assertion failed: at >= ctx->now at sim/engine.c:"), "%s", msg);
}

typedef struct counter_state {
    int inits, *finis;
    int value;
} counter_state;

static int counter_init(sim_ctx *ctx, void *state, const void *arg)
{
    (void)ctx;
    counter_state *s = state;
    s->inits++;
    s->finis = (int *)arg;
    return 0;
}

static void counter_fini(sim_ctx *ctx, void *state)
{
    (void)ctx;
    counter_state *s = state;
    (*s->finis)++;
}

static int counter_verify(const sim_ctx *ctx, const void *state, char *why, size_t n)
{
    (void)ctx;
    const counter_state *s = state;
    if (s->value < 0) {
        snprintf(why, n, "counter negative: %d", s->value);
        return SIM_ERANGE;
    }
    return 0;
}

static int failing_init(sim_ctx *ctx, void *state, const void *arg)
{
    (void)ctx;
    (void)state;
    (void)arg;
    return SIM_EINPUT;
}

Test(engine, components_get_zeroed_state_init_fini_and_verify)
{
    static const sim_component_ops ops = {"counter", sizeof(counter_state), counter_init,
                                          counter_fini, counter_verify};
    static const sim_component_ops bad = {"bad", 8, failing_init, NULL, NULL};
    int finis = 0;
    sim_ctx *ctx = sim_create();
    counter_state *s = sim_component_add(ctx, &ops, &finis, NULL);
    cr_assert_not_null(s);
    cr_assert_eq(s->inits, 1);
    cr_assert_eq(s->value, 0);
    int err = 0;
    cr_assert_null(sim_component_add(ctx, &bad, NULL, &err));
    cr_assert_eq(err, SIM_EINPUT);
    char why[128];
    cr_assert_eq(sim_verify(ctx, why, sizeof why), 0);
    s->value = -4;
    cr_assert_eq(sim_verify(ctx, why, sizeof why), SIM_ERANGE);
    cr_assert_str_eq(why, "counter negative: -4");
    sim_destroy(ctx);
    cr_assert_eq(finis, 1);
}
