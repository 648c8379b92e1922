/* sim/evq.c - 4-ary heap split over two arrays (times, slot indices) over a pool of slots.
 *
 * Why this layout (measured with `slicesim bench engine` against `bench heap`, see docs/engine.md):
 * sifting reads only the 8-byte event times of the four children, which sit in 32 contiguous
 * bytes (the arrays are offset so every sibling group is aligned), so a level costs half a
 * cache line, as in a bare heap of doubles; a 4-ary heap has half the levels of a binary one.
 * The slot index of an entry moves with it in a parallel array, and each slot's heap position
 * is kept in a compact array of its own (every move writes one), so cancel and reschedule
 * are O(log n) without lazy deletion (no garbage entries, and an entry's key never changes
 * while it is in the heap). Priority and insertion sequence are packed into one 64-bit tie
 * word per slot, read only when two times are equal. An earlier layout with 16-byte
 * (time, slot, prio) nodes in one array ran the hold model at 10^6 pending events about 1.5x
 * slower than this one; 24-byte nodes 2x slower.
 * Free slots form a LIFO list so the slot just freed by a pop (cache-warm) is the one the
 * handler's next push reuses.
 * Measured 2026-11-29 (events per CPU second, `bench engine` / `bench heap`, medians of 5
 * interleaved runs, 2-core VM at load 10-12): 13.8 / 13.4 M at 10^3 pending (1.02x), 2.21 /
 * 3.49 M at 10^6 (0.63x); by wall time under that load the ratios wander (0.76-1.1x, 0.37-0.59x).
 * At load 0.5-0.8 (same day, 3 runs of 5 reps): 14.3-14.7 / 14.2-14.7 M at 10^3 (1.00x),
 * 4.07-4.26 / 7.68-7.94 M at 10^6 (0.53-0.54x): an idle machine's cache helps the bare heap's
 * 8 MB of times more than the engine's times, slot indices, positions and 64 MiB pool, so
 * the ratio at 10^6 is lower on a quiet machine. Tried then and not kept, at 10^6: one array of 16-byte
 * (time, slot) nodes, a sibling group per cache line, 1.6-1.8 M (the times array is what the
 * dependent loads of a pop walk, and doubling it loses more cache than the second line
 * costs); 8-ary, no gain; prefetching the grandchildren's times and slots and the new root's
 * slot during the descent, no gain at 10^6 and 8 % slower at 10^3. With the position writes
 * left out (cancel broken: an upper bound for lazy deletion) 15 % faster; the rest of the gap
 * is the root's slot (a random line of a 64 MiB pool per pop) and the slot-index line read
 * per level.
 */
/* madvise(MADV_HUGEPAGE) is a Linux extension outside POSIX: ask glibc for it (before any
 * header). Where it is missing, the pool simply uses ordinary pages. */
#define _DEFAULT_SOURCE
#include "sim/evq.h"

#include "sim/err.h"
#include "sim/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ARITY 4 /* min_child's tournament is written for 4 */
#define LINE 64
#define POS_FREE UINT32_MAX
#define SEQ_BITS 56

/* A heap entry as a value; stored split over two arrays (times, slots). */
typedef struct node {
    sim_time at;
    uint32_t slot;
} node;

/* Entries before index 0 in each allocation, so that every group of four siblings
 * (indices 4k+1..4k+4) starts on a 32-byte boundary of the time array: one group is half a
 * cache line. */
#define HEAD 3

typedef struct slot {
    sim_event ev;
    uint32_t next_free; /* free-list link when free */
    uint32_t pad_;
} slot;

struct evq {
    sim_time *at; /* heap order: event times (HEAD entries into at_block) */
    uint32_t *hs; /* heap order: slot of each entry (HEAD entries into hs_block) */
    void *at_block, *hs_block;
    size_t n, cap;
    slot *slots;
    uint32_t *pos; /* per slot: heap index, or POS_FREE (a compact array: sifts write it) */
    uint64_t *tie; /* per slot: (SIM_PRIO_MAX - prio) << 56 | insertion seq; smaller first */
    uint32_t n_slots, cap_slots;
    uint32_t free_head; /* POS_FREE when empty */
    uint64_t seq;
};

/* The total order of STYLE.md §6: time, then higher prio, then earlier insertion. The tie
 * word is read only when times are equal. */
static inline bool before(const evq *q, node a, node b)
{
    return a.at < b.at || (a.at == b.at && q->tie[a.slot] < q->tie[b.slot]);
}

static inline uint64_t make_tie(int32_t prio, uint64_t seq)
{
    SIM_ASSERT(seq < ((uint64_t)1 << SEQ_BITS));
    return ((uint64_t)(SIM_PRIO_MAX - prio) << SEQ_BITS) | seq;
}

/* A hint to the CPU to start loading *p; no effect on results. */
#if defined(__GNUC__) || defined(__clang__)
#define prefetch(p) __builtin_prefetch(p)
#else
#define prefetch(p) ((void)(p))
#endif

static inline node get(const evq *q, size_t i)
{
    return (node){q->at[i], q->hs[i]};
}

/* Arrays of at least this many bytes are aligned to it and advised onto transparent huge
 * pages: a pop or a push touches the pool, the heap arrays and the position array at random
 * places, so with 4 KiB pages a large queue pays a TLB miss on most of those touches.
 * Measured (hold model, 10^6 pending events): 10-25 % faster, and far fewer slow outliers. */
#define HUGE_PAGE ((size_t)2 << 20)

/* A cache-line-aligned copy of `old` (n_old elements of `size` bytes) with room for n_new. */
static void *aligned_grow(void *old, size_t n_old, size_t n_new, size_t size, const char *what)
{
    size_t bytes = (n_new * size + LINE - 1) / LINE * LINE;
    void *p;
    if (bytes >= HUGE_PAGE) {
        bytes = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
        p = aligned_alloc(HUGE_PAGE, bytes);
#ifdef MADV_HUGEPAGE
        if (p) {
            (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only: failure changes nothing */
        }
#endif
    } else {
        p = aligned_alloc(LINE, bytes);
    }
    if (!p) {
        xmalloc(SIZE_MAX, what); /* aborts with the out-of-memory message */
    }
    if (n_old) {
        memcpy(p, old, n_old * size);
    }
    free(old);
    return p;
}

/* Grow the heap arrays to cap entries, keeping the HEAD offset that aligns sibling groups. */
static void heap_grow(evq *q, size_t cap)
{
    size_t keep = q->n ? q->n + HEAD : 0;
    q->at_block = aligned_grow(q->at_block, keep, cap + HEAD, sizeof(sim_time), "evq heap");
    q->hs_block = aligned_grow(q->hs_block, keep, cap + HEAD, sizeof(uint32_t), "evq heap");
    q->at = (sim_time *)q->at_block + HEAD;
    q->hs = (uint32_t *)q->hs_block + HEAD;
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
    q->tie = xmalloc(cap * sizeof *q->tie, "evq ties");
    q->cap_slots = (uint32_t)cap;
    q->free_head = POS_FREE;
    return q;
}

void evq_destroy(evq *q)
{
    if (!q) {
        return;
    }
    free(q->at_block);
    free(q->hs_block);
    free(q->slots);
    free(q->pos);
    free(q->tie);
    free(q);
}

static inline void place(evq *q, size_t i, node nd)
{
    q->at[i] = nd.at;
    q->hs[i] = nd.slot;
    q->pos[nd.slot] = (uint32_t)i;
}

static void sift_up(evq *q, size_t i, node nd)
{
    while (i > 0) {
        size_t p = (i - 1) / ARITY;
        node pn = get(q, p);
        if (!before(q, nd, pn)) {
            break;
        }
        place(q, i, pn);
        i = p;
    }
    place(q, i, nd);
}

/* Below this many pending events the times array (8 bytes each) stays in the L1/L2 caches
 * and the child choice is made with conditional moves; above it, with branches. Which child
 * is smallest is a coin toss, so branches mispredict; but on a large heap a predicted branch
 * lets the CPU start loading the next level before the comparison resolves, which hides more
 * memory latency than the mispredictions cost. Measured (hold model): cmov is 20 % faster at
 * 10^3 pending events and 30 % slower at 10^6. */
#define SMALL_HEAP 32768

/* The earlier of entries a and b. Equal times are rare and take the (predictable) tie
 * branch; otherwise the choice is a plain `<`. */
static inline size_t earlier(const evq *q, size_t a, size_t b)
{
    sim_time ta = q->at[a], tb = q->at[b];
    if (ta == tb) {
        return q->tie[q->hs[b]] < q->tie[q->hs[a]] ? b : a;
    }
    return tb < ta ? b : a;
}

/* Index of the earliest of the children c..c+ARITY-1 (those < n). */
static inline size_t min_child(const evq *q, size_t c, size_t n)
{
    if (c + ARITY <= n && n < SMALL_HEAP) {
        /* a two-round tournament without data-dependent branches */
        return earlier(q, earlier(q, c, c + 1), earlier(q, c + 2, c + 3));
    }
    const sim_time *at = q->at;
    size_t m = c;
    size_t end = c + ARITY < n ? c + ARITY : n;
    for (size_t k = c + 1; k < end; k++) {
        if (at[k] < at[m] || (at[k] == at[m] && q->tie[q->hs[k]] < q->tie[q->hs[m]])) {
            m = k;
        }
    }
    return m;
}

static void sift_down(evq *q, size_t i, node nd)
{
    size_t n = q->n;
    for (;;) {
        size_t c = i * ARITY + 1;
        if (c >= n) {
            break;
        }
        size_t m = min_child(q, c, n);
        node mn = get(q, m);
        if (!before(q, mn, nd)) {
            break;
        }
        place(q, i, mn);
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
    node nd = get(q, last);
    if (i > 0 && before(q, nd, get(q, (i - 1) / ARITY))) {
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
        q->tie = xrealloc(q->tie, (size_t)q->cap_slots * sizeof *q->tie, "evq ties");
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
    q->tie[s] = make_tie(ev->prio, q->seq++);
    node nd = {ev->at, s};
    sift_up(q, q->n++, nd);
    return id;
}

const sim_event *evq_peek(const evq *q)
{
    return q->n ? &q->slots[q->hs[0]].ev : NULL;
}

/* Remove the root. Floyd's variant ("bottom-up" deletion): move the hole left by the root
 * down to a leaf along the smaller children, without comparing against the displaced last
 * entry at each level, then sift that entry up from the leaf. The last entry is usually large
 * and belongs near the bottom, so this saves one comparison per level; measured 10-30 % faster
 * than the textbook sift-down at 10^6 pending events. */
static void remove_root(evq *q)
{
    size_t n = --q->n;
    if (n == 0) {
        return;
    }
    node nd = get(q, n);
    size_t i = 0;
    for (;;) {
        size_t c = i * ARITY + 1;
        if (c >= n) {
            break;
        }
        size_t m = min_child(q, c, n);
        place(q, i, get(q, m));
        i = m;
    }
    sift_up(q, i, nd);
}

bool evq_pop_until(evq *q, sim_time until, sim_event *out)
{
    if (!q->n || q->at[0] > until) {
        return false;
    }
    uint32_t s = q->hs[0];
    *out = q->slots[s].ev;
    remove_root(q);
    slot_free(q, s);
    if (q->n) {
        /* The next pop reads the new root's slot, a random place in the pool (a cache miss on
         * a large queue): start loading it now, so the load overlaps this event's handler.
         * Measured: the slot read was ~40 % of pop time at 10^6 pending events. */
        prefetch(&q->slots[q->hs[0]]);
    }
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
    q->tie[s] = make_tie(sl->ev.prio, q->seq++);
    node nd = {at, s};
    /* The new key is larger than before only through seq at equal time, so either direction
     * may be needed: try up first, else down. */
    if (i > 0 && before(q, nd, get(q, (i - 1) / ARITY))) {
        sift_up(q, i, nd);
    } else {
        sift_down(q, i, nd);
    }
    return true;
}

size_t evq_size(const evq *q)
{
    return q->n;
}

int evq_verify(const evq *q, char *why, size_t why_len)
{
    char dummy[1];
    if (!why) {
        why = dummy;
        why_len = sizeof dummy;
    }
    for (size_t i = 0; i < q->n; i++) {
        node ndv = get(q, i);
        const node *nd = &ndv;
        if (nd->slot >= q->n_slots) {
            snprintf(why, why_len, "evq: heap[%zu] names slot %u of %u", i, nd->slot, q->n_slots);
            return SIM_ERANGE;
        }
        const slot *sl = &q->slots[nd->slot];
        if (q->pos[nd->slot] != i) {
            snprintf(why, why_len, "evq: heap[%zu] -> slot %u whose position is %u", i, nd->slot,
                     q->pos[nd->slot]);
            return SIM_ERANGE;
        }
        if (sl->ev.at != nd->at) {
            snprintf(why, why_len, "evq: heap[%zu] time %lld differs from its event's %lld", i,
                     (long long)nd->at, (long long)sl->ev.at);
            return SIM_ERANGE;
        }
        if (i > 0 && before(q, ndv, get(q, (i - 1) / ARITY))) {
            snprintf(why, why_len,
                     "evq: heap property broken: heap[%zu] (t=%lld) before its parent heap[%zu] "
                     "(t=%lld)",
                     i, (long long)nd->at, (i - 1) / ARITY, (long long)q->at[(i - 1) / ARITY]);
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
    node a = get(q, i);
    place(q, i, get(q, j));
    place(q, j, a);
}
