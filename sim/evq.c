/* sim/evq.c - 4-ary heap of 16-byte keyed nodes over a pool of event slots.
 *
 * Why this layout: a heap node holds the time, the priority and the slot index (16 bytes), so
 * sifting compares nodes without touching the pool; the insertion sequence number, needed only
 * to break exact (time, prio) ties, lives in a parallel array read on ties alone. Four children
 * of 16 bytes fill one 64-byte cache line, and the array is offset so that every group of
 * siblings starts on a line boundary: a sift step costs one line. A 4-ary heap halves the depth
 * of a binary one. This matters once the heap no longer fits in cache (N ~ 10^6: 16 MB of
 * nodes); measured with `slicesim bench engine` against `bench heap` (README).
 * Each slot's heap position is kept (in a compact array of its own, since every sift step
 * writes one) so cancel/reschedule are O(log n) without lazy deletion
 * (no garbage nodes, and every node's key is fixed while it is in the heap, so reading its seq
 * from the slot is always consistent). Free slots form a LIFO list so the slot just freed by a
 * pop (cache-warm) is the one the handler's next push reuses.
 */
#include "sim/evq.h"

#include "sim/err.h"
#include "sim/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARITY 4
#define LINE 64
#define POS_FREE UINT32_MAX

typedef struct node {
    sim_time at;
    uint32_t slot;
    int32_t prio;
} node;

/* Nodes before heap[0] in the allocation, so that heap[1] (and every heap[4k+1]) starts a
 * cache line. */
#define HEAD (LINE / sizeof(node) - 1)

typedef struct slot {
    sim_event ev;
    uint32_t next_free; /* free-list link when free */
    uint32_t pad_;
} slot;

struct evq {
    node *heap; /* HEAD nodes into `block` */
    void *block;
    size_t n, cap;
    slot *slots;
    uint32_t *pos;  /* per slot: heap index, or POS_FREE (a compact array: sifts write it) */
    uint64_t *seqs; /* per slot: insertion sequence number of its pending event */
    uint32_t n_slots, cap_slots;
    uint32_t free_head; /* POS_FREE when empty */
    uint64_t seq;
};

/* The total order of STYLE.md §6: time, then higher prio, then earlier insertion. */
static inline bool before(const evq *q, const node *a, const node *b)
{
    if (a->at != b->at) {
        return a->at < b->at;
    }
    if (a->prio != b->prio) {
        return a->prio > b->prio;
    }
    return q->seqs[a->slot] < q->seqs[b->slot];
}

/* A cache-line-aligned copy of `old` (n_old elements of `size` bytes) with room for n_new. */
static void *aligned_grow(void *old, size_t n_old, size_t n_new, size_t size, const char *what)
{
    size_t bytes = (n_new * size + LINE - 1) / LINE * LINE;
    void *p = aligned_alloc(LINE, bytes);
    if (!p) {
        xmalloc(SIZE_MAX, what); /* aborts with the out-of-memory message */
    }
    if (n_old) {
        memcpy(p, old, n_old * size);
    }
    free(old);
    return p;
}

/* Grow the node array to cap nodes, keeping the HEAD-node offset that aligns sibling groups. */
static void heap_grow(evq *q, size_t cap)
{
    node *block = aligned_grow(q->block, q->n ? q->n + HEAD : 0, cap + HEAD, sizeof(node),
                               "evq heap");
    q->block = block;
    q->heap = block + HEAD;
    q->cap = cap;
}

evq *evq_create(size_t capacity_hint)
{
    evq *q = xcalloc(1, sizeof *q, "evq");
    size_t cap = capacity_hint < 16 ? 16 : capacity_hint;
    SIM_ASSERT(cap < POS_FREE);
    heap_grow(q, cap);
    q->slots = aligned_grow(NULL, 0, cap, sizeof *q->slots, "evq pool");
    q->pos = xmalloc(cap * sizeof *q->pos, "evq positions");
    q->seqs = xmalloc(cap * sizeof *q->seqs, "evq seqs");
    q->cap_slots = (uint32_t)cap;
    q->free_head = POS_FREE;
    return q;
}

void evq_destroy(evq *q)
{
    if (!q) {
        return;
    }
    free(q->block);
    free(q->slots);
    free(q->pos);
    free(q->seqs);
    free(q);
}

static inline void place(evq *q, size_t i, node nd)
{
    q->heap[i] = nd;
    q->pos[nd.slot] = (uint32_t)i;
}

static void sift_up(evq *q, size_t i, node nd)
{
    while (i > 0) {
        size_t p = (i - 1) / ARITY;
        if (!before(q, &nd, &q->heap[p])) {
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
            if (before(q, &h[k], &h[m])) {
                m = k;
            }
        }
        if (!before(q, &h[m], &nd)) {
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
    if (i > 0 && before(q, &nd, &q->heap[(i - 1) / ARITY])) {
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
        q->slots = aligned_grow(q->slots, q->n_slots, q->cap_slots, sizeof *q->slots, "evq pool");
        q->pos = xrealloc(q->pos, (size_t)q->cap_slots * sizeof *q->pos, "evq positions");
        q->seqs = xrealloc(q->seqs, (size_t)q->cap_slots * sizeof *q->seqs, "evq seqs");
    }
    uint32_t s = q->n_slots++;
    q->slots[s].ev.id = 0; /* generation 0: the first id handed out uses generation 1 */
    return s;
}

static void slot_free(evq *q, uint32_t s)
{
    q->pos[s] = POS_FREE;
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
    if (q->pos[s] == POS_FREE || sl->ev.id != id) {
        return POS_FREE;
    }
    return s;
}

sim_event_id evq_push(evq *q, const sim_event *ev)
{
    SIM_ASSERT(ev->prio >= SIM_PRIO_MIN && ev->prio <= SIM_PRIO_MAX);
    if (q->n == q->cap) {
        heap_grow(q, 2 * q->cap);
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
    q->seqs[s] = q->seq++;
    node nd = {ev->at, s, ev->prio};
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
    remove_at(q, q->pos[s]);
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
    size_t i = q->pos[s];
    sl->ev.at = at;
    q->seqs[s] = q->seq++;
    node nd = {at, s, sl->ev.prio};
    /* The new key is larger than before only through seq at equal time, so either direction
     * may be needed: try up first, else down. */
    if (i > 0 && before(q, &nd, &q->heap[(i - 1) / ARITY])) {
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
        if (q->pos[nd->slot] != i) {
            snprintf(why, why_len, "evq: heap[%zu] -> slot %u whose position is %u", i,
                     nd->slot, q->pos[nd->slot]);
            return SIM_ERANGE;
        }
        if (sl->ev.at != nd->at) {
            snprintf(why, why_len, "evq: heap[%zu] time %lld differs from its event's %lld", i,
                     (long long)nd->at, (long long)sl->ev.at);
            return SIM_ERANGE;
        }
        if (i > 0 && before(q, nd, &q->heap[(i - 1) / ARITY])) {
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
