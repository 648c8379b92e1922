/* sim/evq.c - 4-ary heap of small keyed nodes over a pool of event slots.
 *
 * Why this layout: a heap node holds the whole ordering key inline (time, and prio+seq packed
 * into one uint64) plus the slot index, so sifting compares nodes without touching the pool.
 * A 4-ary heap halves the depth of a binary heap and keeps the four children of a node in
 * 96 contiguous bytes, which matters once the heap no longer fits in cache (N ~ 10^6). Each
 * slot records its heap position so cancel/reschedule are O(log n) without lazy deletion.
 * Free slots form a LIFO list so the most recently freed (cache-warm) slot is reused first.
 */
#include "sim/evq.h"

#include "sim/err.h"
#include "sim/xalloc.h"

#include <stdio.h>
#include <stdlib.h>

#define ARITY 4
#define SEQ_BITS 56
#define POS_FREE UINT32_MAX

typedef struct node {
    sim_time at;
    uint64_t tie; /* (SIM_PRIO_MAX - prio) << 56 | seq: smaller runs first */
    uint32_t slot;
    uint32_t pad_;
} node;

typedef struct slot {
    sim_event ev;
    uint32_t pos;       /* heap index, or POS_FREE */
    uint32_t next_free; /* free-list link when free */
} slot;

struct evq {
    node *heap;
    size_t n, cap;
    slot *slots;
    uint32_t n_slots, cap_slots;
    uint32_t free_head; /* POS_FREE when empty */
    uint64_t seq;
};

static inline bool before(const node *a, const node *b)
{
    return a->at < b->at || (a->at == b->at && a->tie < b->tie);
}

static inline uint64_t make_tie(int32_t prio, uint64_t seq)
{
    SIM_ASSERT(prio >= SIM_PRIO_MIN && prio <= SIM_PRIO_MAX);
    SIM_ASSERT(seq < ((uint64_t)1 << SEQ_BITS));
    return ((uint64_t)(SIM_PRIO_MAX - prio) << SEQ_BITS) | seq;
}

evq *evq_create(size_t capacity_hint)
{
    evq *q = xcalloc(1, sizeof *q, "evq");
    size_t cap = capacity_hint < 16 ? 16 : capacity_hint;
    SIM_ASSERT(cap < POS_FREE);
    q->heap = xmalloc(cap * sizeof *q->heap, "evq heap");
    q->cap = cap;
    q->slots = xmalloc(cap * sizeof *q->slots, "evq pool");
    q->cap_slots = (uint32_t)cap;
    q->free_head = POS_FREE;
    return q;
}

void evq_destroy(evq *q)
{
    if (!q) {
        return;
    }
    free(q->heap);
    free(q->slots);
    free(q);
}

static inline void place(evq *q, size_t i, node nd)
{
    q->heap[i] = nd;
    q->slots[nd.slot].pos = (uint32_t)i;
}

static void sift_up(evq *q, size_t i, node nd)
{
    while (i > 0) {
        size_t p = (i - 1) / ARITY;
        if (!before(&nd, &q->heap[p])) {
            break;
        }
        place(q, i, q->heap[p]);
        i = p;
    }
    place(q, i, nd);
}

static void sift_down(evq *q, size_t i, node nd)
{
    node *h = q->heap;
    size_t n = q->n;
    for (;;) {
        size_t c = i * ARITY + 1;
        if (c >= n) {
            break;
        }
        size_t m = c;
        size_t end = c + ARITY < n ? c + ARITY : n;
        for (size_t k = c + 1; k < end; k++) {
            if (before(&h[k], &h[m])) {
                m = k;
            }
        }
        if (!before(&h[m], &nd)) {
            break;
        }
        place(q, i, h[m]);
        i = m;
    }
    place(q, i, nd);
}

/* Remove the node at heap index i, restoring order. */
static void remove_at(evq *q, size_t i)
{
    size_t last = --q->n;
    if (i == last) {
        return;
    }
    node nd = q->heap[last];
    if (i > 0 && before(&nd, &q->heap[(i - 1) / ARITY])) {
        sift_up(q, i, nd);
    } else {
        sift_down(q, i, nd);
    }
}

static uint32_t slot_alloc(evq *q)
{
    if (q->free_head != POS_FREE) {
        uint32_t s = q->free_head;
        q->free_head = q->slots[s].next_free;
        return s;
    }
    if (q->n_slots == q->cap_slots) {
        SIM_ASSERT(q->cap_slots < POS_FREE / 2);
        q->cap_slots *= 2;
        q->slots = xrealloc(q->slots, (size_t)q->cap_slots * sizeof *q->slots, "evq pool");
    }
    uint32_t s = q->n_slots++;
    q->slots[s].ev.id = 0; /* generation 0: the first id handed out uses generation 1 */
    return s;
}

static void slot_free(evq *q, uint32_t s)
{
    q->slots[s].pos = POS_FREE;
    q->slots[s].next_free = q->free_head;
    q->free_head = s;
}

/* The slot of a pending id, or POS_FREE. */
static uint32_t lookup(const evq *q, sim_event_id id)
{
    uint64_t low = id & 0xffffffffu;
    if (low == 0 || low > q->n_slots) {
        return POS_FREE;
    }
    uint32_t s = (uint32_t)(low - 1);
    const slot *sl = &q->slots[s];
    if (sl->pos == POS_FREE || sl->ev.id != id) {
        return POS_FREE;
    }
    return s;
}

sim_event_id evq_push(evq *q, const sim_event *ev)
{
    if (q->n == q->cap) {
        q->cap *= 2;
        q->heap = xrealloc(q->heap, q->cap * sizeof *q->heap, "evq heap");
    }
    uint32_t s = slot_alloc(q);
    slot *sl = &q->slots[s];
    uint64_t gen = (sl->ev.id >> 32) + 1;
    if (gen > 0xffffffffu) {
        gen = 1; /* after 2^32 reuses of one slot; a stale id that old cannot be held usefully */
    }
    sim_event_id id = (gen << 32) | ((uint64_t)s + 1);
    sl->ev = *ev;
    sl->ev.id = id;
    node nd = {ev->at, make_tie(ev->prio, q->seq++), s, 0};
    sift_up(q, q->n++, nd);
    return id;
}

const sim_event *evq_peek(const evq *q)
{
    return q->n ? &q->slots[q->heap[0].slot].ev : NULL;
}

bool evq_pop(evq *q, sim_event *out)
{
    if (!q->n) {
        return false;
    }
    uint32_t s = q->heap[0].slot;
    *out = q->slots[s].ev;
    remove_at(q, 0);
    slot_free(q, s);
    return true;
}

bool evq_cancel(evq *q, sim_event_id id)
{
    uint32_t s = lookup(q, id);
    if (s == POS_FREE) {
        return false;
    }
    remove_at(q, q->slots[s].pos);
    slot_free(q, s);
    return true;
}

bool evq_reschedule(evq *q, sim_event_id id, sim_time at)
{
    uint32_t s = lookup(q, id);
    if (s == POS_FREE) {
        return false;
    }
    slot *sl = &q->slots[s];
    size_t i = sl->pos;
    sl->ev.at = at;
    node nd = {at, make_tie(sl->ev.prio, q->seq++), s, 0};
    /* The new key is larger than before only through seq at equal time, so either direction
     * may be needed: try up first, else down. */
    if (i > 0 && before(&nd, &q->heap[(i - 1) / ARITY])) {
        sift_up(q, i, nd);
    } else {
        sift_down(q, i, nd);
    }
    return true;
}

const sim_event *evq_get(const evq *q, sim_event_id id)
{
    uint32_t s = lookup(q, id);
    return s == POS_FREE ? NULL : &q->slots[s].ev;
}

size_t evq_size(const evq *q)
{
    return q->n;
}

uint64_t evq_seq(const evq *q)
{
    return q->seq;
}

int evq_verify(const evq *q, char *why, size_t why_len)
{
    char dummy[1];
    if (!why) {
        why = dummy;
        why_len = sizeof dummy;
    }
    for (size_t i = 0; i < q->n; i++) {
        const node *nd = &q->heap[i];
        if (nd->slot >= q->n_slots) {
            snprintf(why, why_len, "evq: heap[%zu] names slot %u of %u", i, nd->slot,
                     q->n_slots);
            return SIM_ERANGE;
        }
        const slot *sl = &q->slots[nd->slot];
        if (sl->pos != i) {
            snprintf(why, why_len, "evq: heap[%zu] -> slot %u whose position is %u", i,
                     nd->slot, sl->pos);
            return SIM_ERANGE;
        }
        if (sl->ev.at != nd->at) {
            snprintf(why, why_len, "evq: heap[%zu] time %lld differs from its event's %lld", i,
                     (long long)nd->at, (long long)sl->ev.at);
            return SIM_ERANGE;
        }
        if (i > 0 && before(nd, &q->heap[(i - 1) / ARITY])) {
            snprintf(why, why_len,
                     "evq: heap property broken: heap[%zu] (t=%lld) before its parent heap[%zu] "
                     "(t=%lld)",
                     i, (long long)nd->at, (i - 1) / ARITY,
                     (long long)q->heap[(i - 1) / ARITY].at);
            return SIM_ERANGE;
        }
    }
    size_t n_free = 0;
    for (uint32_t s = q->free_head; s != POS_FREE; s = q->slots[s].next_free) {
        if (++n_free > q->n_slots) {
            snprintf(why, why_len, "evq: free list has a cycle");
            return SIM_ERANGE;
        }
    }
    if (n_free + q->n != q->n_slots) {
        snprintf(why, why_len, "evq: %zu free + %zu pending slots != %u slots", n_free, q->n,
                 q->n_slots);
        return SIM_ERANGE;
    }
    return 0;
}

void evq__corrupt_for_test(evq *q, size_t i, size_t j)
{
    SIM_ASSERT(i < q->n && j < q->n);
    node a = q->heap[i];
    place(q, i, q->heap[j]);
    place(q, j, a);
}
