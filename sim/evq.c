/* sim/evq.c - 4-ary heap split over two arrays (times, slot indices) over a pool of slots,
 * with lazy deletion; a large queue keeps its far future in buckets of times beside the heap
 * (ladder-queue rungs: "The far future" below), so the heap holds about one bucket.
 *
 * Why this layout (measured with `slicesim bench engine` against `bench heap`, see docs/engine.md):
 * sifting reads only the 8-byte event times of the four children, which sit in 32 contiguous
 * bytes (the arrays are offset so every sibling group is aligned), so a level costs half a
 * cache line, as in a bare heap of doubles; a 4-ary heap has half the levels of a binary one.
 * The slot index of an entry moves with it in a parallel array. Priority and insertion
 * sequence are packed into one 64-bit tie word per slot, read only when two times are equal.
 * An earlier layout with 16-byte (time, slot, prio) nodes in one array ran the hold model at
 * 10^6 pending events about 1.5x slower than this one; 24-byte nodes 2x slower.
 * Free slots form a LIFO list so the slot just freed by a pop (cache-warm) is the one the
 * handler's next push reuses.
 * Cancel and reschedule are lazy: no array of heap positions is kept (every move of a sift
 * wrote one, a random line of a 4 MiB array per level at 10^6 events). A cancelled event's
 * entry stays in the heap, marked dead (a bit per slot), and leaves when it reaches the root;
 * a rescheduled event moves to a new slot with a new entry, its first slot (the one its id
 * names) forwarding to it. A slot is reused only after its entry has left the heap, so keys
 * never change in the heap; the root is kept alive, so peek stays O(1); when the dead entries
 * outnumber the pending events (and are 64 or more) one O(n) rebuild drops them all. How
 * often real runs cancel or reschedule (engine counters, release build, 2026-11-29): openb-fgd
 * and openb-timed never (19 245 and 32 210 events, at most 2 and 57 pending); synth-10k-1m
 * reschedules 563 333 times in 3.98 M pushes (14 %, fluid completions moved when rates
 * change), at most 17 746 pending; philly-mig 1 589 in 157 326; faults.yaml 5 506
 * reschedules and 37 cancels in 5 732 pushes; the other examples 0-40 %. So the heap of a real
 * run is small (its times fit in L2) and dead entries are few.
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
 * Lazy deletion, predicted +10-15 % at 10^6 (the position writes' upper bound above; a
 * profile put 8-12 % of pop time on the stores and the slot-index loads feeding them) and
 * nothing at 10^3 (the position array is then in L1): measured at load 5.5, medians of 5
 * interleaved runs, 2.90 -> 3.29 M at 10^6 (+13 %, engine/heap 0.50 -> 0.57) and 13.22 ->
 * 13.30 M at 10^3 (1.00 -> 1.01). Missed then: `bench fluid`, whose completions are moved
 * about 19 times each (9.7 M reschedules in 1 M events at 10^5 activities), ran 45 % slower
 * (0.27 -> 0.15 M events/CPU-s at 10^5, 1.32 -> 0.81 in the table at 10^3): each move left a
 * dead entry (a second heap removal later) and read the event through its home (a second
 * random line). Hence tracked slots (moved in place once moved), handlers learned or declared
 * (sim_expect_moves; fluid declares its completions) so their events are tracked from the
 * start, and a moved event taken back to its home once the home's entry has left. Measured
 * after (3-5 interleaved runs, load 6-9): fluid 0.25-0.29 -> 0.24-0.26 M at 10^5 (-8 %),
 * 1.19-1.23 -> 1.16-1.18 M at 10^3 (-3 %); hold model 2.75 -> 3.20 M at 10^6 (engine/heap
 * 0.51 -> 0.59; untracked lazy alone 3.32, 0.62: the tracked-entry test in every move costs
 * a little) and 14.39 -> 13.81 M at 10^3 (1.03 -> 0.99); synth-10k-1m 5.32 -> 5.24 CPU-s
 * (medians of 3, within the noise: its heap is small). Tried and not kept: prefetching the
 * slot two pops ahead (the root's children's least), no gain; prefetching the tie word the
 * next push writes, no gain; no tie writes at all (ties broken: the upper bound of moving the
 * tie word into the slot), no gain; the descent moving times only and the slot indices after
 * it, 5 % slower. What is left at 10^6 is the times array's dependent loads (56 % of the
 * removal), the slot-index loads (14 %) and the root's slot (14 % of all time, a random line
 * of the 64 MiB pool per event that the bare heap of doubles has no counterpart for).
 * Two levels (2026-11-29, kept): what was left is the heap's size, so a heap that reaches
 * 65 536 entries, most of them untracked, moves its far future into the buckets of "The far
 * future" below, and the heap keeps about one bucket (a few hundred entries, in L1/L2).
 * Predicted before measuring: the removal's ~10 missing levels become cached ones while the
 * root's slot and a bucket append per push remain, engine/heap 0.5-0.6 -> 0.7-0.8 at 10^6;
 * nothing at 10^3 (the far future stays off: a flag tested per push and per removal).
 * Measured (`bench engine` / `bench heap`, medians of 5 interleaved runs, CPU s, load 3.7-4.1):
 * 10^6 3.05 -> 6.24 M events/CPU-s, engine/heap 0.58 -> 1.21 (per pair 1.16-1.28); 10^5
 * 6.03 -> 7.47 M; 10^3 13.46 -> 13.58 M (0.99 -> 0.99); `bench fluid` 1.19 -> 1.20 M at 10^3
 * and 0.257 -> 0.261 M at 10^5 (its completions are tracked: they stay in the heap). With the
 * settling split out of line the fluid benchmark at 10^3 ran 4 % slower; inlined, it did not.
 * Far above the prediction: the bare heap of doubles walks ~20 levels of an 8 MB array per pop
 * at 10^6, half of them missing the cache, while here each event is touched a fixed number of
 * times (appended to a bucket, spread at most a few times, moved into the small heap, its slot
 * read once): the hold model's exponential increments give a stationary spread of pending
 * times, the case calendar and ladder queues are built for; bunched times (many events at one
 * instant, or a few far outliers) cost more spreads, bounded by FAR_RUNGS. Real runs do not
 * reach it: their heaps are small (synth-10k-1m at most 17 746 pending) and mostly tracked
 * fluid completions; with the threshold lowered to 64 for a trial, synth-10k-1m tried to split
 * 9 times and never did (each time mostly tracked), and no example split its heap either.
 * Their outputs and costs are unchanged; a test runs the far future from 64 entries against a
 * reference order. Sizes tried (3 interleaved runs each, load 7.4-8.6): 16 or 64 entries a
 * bucket and a split above 256 or 4096 ran within the noise of 32 and 1024 (5.5-6.3 M at 10^6,
 * the bare heap 4.0-4.6 M then).
 * Left for moves (the fluid benchmark at 10^5, perf 2026-11-29): evq_reschedule is 35 % of its
 * samples, 91 % of that the id lookup's load of the slot (a random line of the 6.4 MB pool).
 * Tried then and not kept: the slots' states and generations in a dense array of their own (4
 * bytes a slot), so that a move's id check reads it instead of the slot's line (a moved copy's
 * slot taking a new generation, so a stale id fails on the generation alone; the prio read
 * from the tie word). Fluid at 10^5 0.223 -> 0.238 M events/CPU-s, then 0.212 -> 0.213 M in a
 * second set (5 interleaved runs each, load 7.7-10.5: no gain beyond the noise); the hold model
 * at 10^6 6.06 -> 5.24 M (-13 %: every pop writes the freed slot's state, a second random
 * line), 5.93 -> 5.66 M with that line prefetched beside the slot (-5 %).
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
#define NONE UINT32_MAX
#define SEQ_BITS 56
#define GEN_MAX ((UINT32_C(1) << 29) - 1) /* generations live in 29 bits of slot.meta */
#define TRACK 0x80000000u /* in a heap entry's slot word: the slot's heap position is kept */
#define SLOT(w) ((w) & ~TRACK)
#define M_STATE 3u
#define M_TRACKED 4u /* in slot.meta: its entry carries TRACK */
#define M_GEN_SHIFT 3

/* A heap entry as a value; stored split over two arrays (times, slot words). */
typedef struct node {
    sim_time at;
    uint32_t slot; /* the slot, | TRACK when its position is kept in pos[] */
} node;

/* Entries before index 0 in each allocation, so that every group of four siblings
 * (indices 4k+1..4k+4) starts on a 32-byte boundary of the time array: one group is half a
 * cache line. */
#define HEAD 3

/* What a slot of the pool is (slot.meta & 3). An id names its event's home: the slot the event
 * was pushed into. Rescheduling moves the event to a new slot (with a new heap entry) and leaves
 * the old entry in the heap, dead, until it reaches the root or a compaction drops it.
 *   FREE  on the free list; link: the next free slot.
 *   LIVE  in the heap and holding a pending event; link: the event's home (itself unless the
 *         event was rescheduled).
 *   DEAD  in the heap, its event gone (cancelled, or moved on); link: when it is the home of an
 *         event still pending elsewhere, the slot holding that event, else NONE.
 *   HOME  out of the heap, the home of an event pending elsewhere; link: the slot holding it.
 * A moved event's new slot is tracked: its heap entry carries TRACK and every move of it writes
 * its position to pos[], so its later moves and its cancel are done in place. The queue also
 * learns which handlers' events get moved or cancelled (up to MOVABLE of them) and pushes their
 * later events tracked from the start: those never leave their slot, so their ids reach them
 * without forwarding. Events are usually either never moved (the hold model, job arrivals) or
 * moved again and again (the fluid solver's completions, at every rate change): the first pay
 * no position writes, the second leave no dead entries. (A table of handles, ids naming a
 * handle that names the slot, was tried instead of forwarding: a move then reads two
 * dependent random lines, and the fluid benchmark at 10^5 activities ran 30 % slower.) */
enum { S_FREE, S_LIVE, S_DEAD, S_HOME };
#define MOVABLE 4

/* An entry of the far future: a time and the slot word (never TRACK). */
typedef struct fent {
    sim_time at;
    uint32_t slot;
    uint32_t pad_;
} fent;

/* A bucket of far entries in no order. */
typedef struct fbucket {
    fent *e;
    uint32_t n, cap;
} fbucket;

/* Buckets of 2^shift ns from base to last (inclusive); those before cur are used up, and
 * every entry of the rung is at or after lo. */
typedef struct rung {
    sim_time base, last, lo;
    unsigned shift;
    uint32_t nb, cur, cap; /* buckets, the next one, buckets allocated in b */
    fbucket *b;
} rung;
#define FAR_RUNGS 8
#define FAR_ON 65536   /* heap entries at which the far future is first split off */
#define FAR_BUCKET 32  /* entries per bucket on average when a rung is spread */
#define FAR_SPLIT 1024 /* a bucket with more entries is spread over a finer rung */

typedef struct slot {
    sim_event ev;  /* the event; a DEAD or HOME slot keeps only ev.id (its id, for lookups) */
    uint32_t link; /* see the states above */
    uint32_t meta; /* generation << 3 | M_TRACKED | state; the generation of its ids */
} slot;

struct evq {
    sim_time *at; /* heap order: event times (HEAD entries into at_block) */
    uint32_t *hs; /* heap order: slot of each entry (HEAD entries into hs_block) */
    void *at_block, *hs_block;
    size_t n, cap;       /* heap entries, live and dead */
    size_t n_live;       /* pending events */
    size_t n_dead;       /* dead entries in the heap */
    slot *slots;
    uint64_t *tie;  /* per slot: (SIM_PRIO_MAX - prio) << 56 | insertion seq; smaller first */
    uint32_t *pos;  /* per tracked slot: its heap index */
    uint64_t *dead; /* per slot, one bit: its heap entry is dead (a compact copy of S_DEAD) */
    uint32_t n_slots, cap_slots;
    uint32_t free_head; /* NONE when empty */
    sim_handler *movable[MOVABLE]; /* handlers whose events were moved or cancelled */
    unsigned n_movable;
    uint64_t seq;
    /* The far future (see "The far future" below): off until the heap holds far_at entries. */
    bool far_on;
    sim_time far_lo;          /* every far entry's time is >= far_lo: the finest rung's lo */
    rung rungs[FAR_RUNGS];    /* coarsest first; each after the first refines its parent's */
    unsigned n_rungs;         /* rungs in use */
    fbucket far_top;          /* the entries after rung 0, in no order */
    fbucket far_tmp;          /* the heap's entries on their way to a new rung */
    sim_time top_lo;          /* every time in top is >= top_lo */
    sim_time top_min, top_max; /* bounds on top's times */
    size_t n_far;              /* entries in the rungs and top, live and dead */
    size_t far_at, far_min;    /* heap entries at which the far future is split off */
    uint32_t far_split;        /* a bucket with more entries is spread over a finer rung */
};

/* Dead entries are dropped all at once (an O(n) rebuild) when they outnumber the pending
 * events and number at least this many, so the heap holds at most 2 n_live + COMPACT_MIN
 * entries. */
#define COMPACT_MIN 64

/* The total order of STYLE.md §6: time, then higher prio, then earlier insertion. The tie
 * word is read only when times are equal. A slot is reused only after its entry has left the
 * heap, so an entry's key never changes while it is in the heap, dead or alive. */
static inline bool before(const evq *q, node a, node b)
{
    return a.at < b.at || (a.at == b.at && q->tie[SLOT(a.slot)] < q->tie[SLOT(b.slot)]);
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

static inline uint32_t state(const slot *sl)
{
    return sl->meta & M_STATE;
}

static inline void set_state(slot *sl, uint32_t st)
{
    sl->meta = (sl->meta & ~M_STATE) | st;
}

static inline bool is_dead(const evq *q, uint32_t s)
{
    return (q->dead[s >> 6] >> (s & 63)) & 1u;
}

static inline node get(const evq *q, size_t i)
{
    return (node){q->at[i], q->hs[i]};
}

/* Arrays of at least this many bytes are aligned to it and advised onto transparent huge
 * pages: a pop or a push touches the pool and the heap arrays at random places, so with
 * 4 KiB pages a large queue pays a TLB miss on most of those touches.
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

static size_t dead_words(uint32_t cap_slots)
{
    return ((size_t)cap_slots + 63) / 64;
}

evq *evq_create(size_t capacity_hint)
{
    evq *q = xcalloc(1, sizeof *q, "evq");
    size_t cap = capacity_hint < 16 ? 16 : capacity_hint;
    SIM_ASSERT(cap < NONE / 2);
    heap_grow(q, cap);
    q->slots = aligned_grow(NULL, 0, cap, sizeof *q->slots, "evq pool");
    q->tie = xmalloc(cap * sizeof *q->tie, "evq ties");
    q->pos = xmalloc(cap * sizeof *q->pos, "evq positions");
    q->dead = xcalloc(dead_words((uint32_t)cap), sizeof *q->dead, "evq dead bits");
    q->cap_slots = (uint32_t)cap;
    q->free_head = NONE;
    q->far_at = q->far_min = FAR_ON;
    q->far_split = FAR_SPLIT;
    q->top_min = INT64_MAX;
    q->top_max = INT64_MIN;
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
    free(q->tie);
    free(q->pos);
    free(q->dead);
    for (unsigned r = 0; r < FAR_RUNGS; r++) {
        for (uint32_t b = 0; b < q->rungs[r].cap; b++) {
            free(q->rungs[r].b[b].e);
        }
        free(q->rungs[r].b);
    }
    free(q->far_top.e);
    free(q->far_tmp.e);
    free(q);
}

static inline void place(evq *q, size_t i, node nd)
{
    q->at[i] = nd.at;
    q->hs[i] = nd.slot;
    if (nd.slot & TRACK) {
        q->pos[SLOT(nd.slot)] = (uint32_t)i;
    }
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

/* Below this many heap entries the times array (8 bytes each) stays in the L1/L2 caches
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
        return q->tie[SLOT(q->hs[b])] < q->tie[SLOT(q->hs[a])] ? b : a;
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
        if (at[k] < at[m] || (at[k] == at[m] && q->tie[SLOT(q->hs[k])] < q->tie[SLOT(q->hs[m])])) {
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

/* Remove the entry at heap index i, restoring order. */
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

/* Move the tracked entry at heap index i to key (at, its slot's tie), restoring order. */
static void move_at(evq *q, size_t i, node nd)
{
    if (i > 0 && before(q, nd, get(q, (i - 1) / ARITY))) {
        sift_up(q, i, nd);
    } else {
        sift_down(q, i, nd);
    }
}

static uint32_t slot_alloc(evq *q)
{
    if (q->free_head != NONE) {
        uint32_t s = q->free_head;
        q->free_head = q->slots[s].link;
        return s;
    }
    if (q->n_slots == q->cap_slots) {
        SIM_ASSERT(q->cap_slots < TRACK / 2);
        size_t old_words = dead_words(q->cap_slots);
        q->cap_slots *= 2;
        q->slots = aligned_grow(q->slots, q->n_slots, q->cap_slots, sizeof *q->slots, "evq pool");
        q->tie = xrealloc(q->tie, (size_t)q->cap_slots * sizeof *q->tie, "evq ties");
        q->pos = xrealloc(q->pos, (size_t)q->cap_slots * sizeof *q->pos, "evq positions");
        size_t words = dead_words(q->cap_slots);
        q->dead = xrealloc(q->dead, words * sizeof *q->dead, "evq dead bits");
        memset(q->dead + old_words, 0, (words - old_words) * sizeof *q->dead);
    }
    uint32_t s = q->n_slots++;
    q->slots[s].meta = 0; /* generation 0: the first id made for it uses generation 1 */
    return s;
}

static void slot_free(evq *q, uint32_t s)
{
    slot *sl = &q->slots[s];
    sl->meta = (sl->meta & ~(M_STATE | M_TRACKED)) | S_FREE;
    sl->link = q->free_head;
    q->free_head = s;
}

/* Room for one more heap entry. */
static void heap_reserve(evq *q)
{
    if (q->n == q->cap) {
        heap_grow(q, 2 * q->cap);
    }
}

/* The event whose home is h has left the queue (fired or cancelled) from another slot. */
static void release_home(evq *q, uint32_t h)
{
    slot *sl = &q->slots[h];
    if (state(sl) == S_HOME) {
        slot_free(q, h);
    } else {
        sl->link = NONE; /* S_DEAD: freed when its own entry leaves the heap */
    }
}

/* Slot s's entry has become dead: its event was cancelled or moved on. */
static void kill(evq *q, uint32_t s)
{
    set_state(&q->slots[s], S_DEAD);
    q->dead[s >> 6] |= (uint64_t)1 << (s & 63);
    q->n_dead++;
}

/* Slot s's dead entry has left the heap. */
static void drop_dead(evq *q, uint32_t s)
{
    q->dead[s >> 6] &= ~((uint64_t)1 << (s & 63));
    q->n_dead--;
    slot *sl = &q->slots[s];
    if (sl->link != NONE) {
        set_state(sl, S_HOME);
    } else {
        slot_free(q, s);
    }
}

/* ---- The far future -----------------------------------------------------------------------
 * A large heap (far_at entries, FAR_ON at first) splits off its far future: the untracked
 * entries at or after far_lo leave the heap for buckets of times, after the ladder queue of
 * Tang, Goh and Thng (2005). A rung is an array of buckets of 2^shift ns each from its base;
 * rung 0 spans top's times when it is spread, and a bucket too full to go into the heap is
 * spread over a finer rung (a child, spanning that bucket's times) in its turn; top holds the
 * entries after rung 0, in no order. A push at or after far_lo appends to the finest rung that
 * spans its time (or to top). While the heap's root is at or after far_lo (or the heap is
 * empty), the finest rung's next bucket moves into the heap and far_lo moves past it; a used-up
 * rung goes, its parent's next bucket follows; with no rung left top is spread over a new rung
 * 0. So the heap holds about one bucket, its times stay in cache, and a pop walks a few cached
 * levels where a heap of every event walked ~10 missing ones.
 * The order is the heap's: every far entry is at or after far_lo and every entry before it is
 * in the heap, so the root is the earliest pending event, and events of one time share a
 * bucket, so their tie words meet in the heap. Tracked entries (position kept in pos[]) stay in
 * the heap; cancelled far entries stay in their bucket, dead, and are dropped when it moves or
 * when a rebuild drops the heap's. The far future is given up when it empties, and split off
 * again when the heap has doubled. */

static void fb_add(fbucket *b, sim_time at, uint32_t s)
{
    if (b->n == b->cap) {
        SIM_ASSERT(b->cap < UINT32_MAX / 2);
        b->cap = b->cap ? 2 * b->cap : 8;
        b->e = xrealloc(b->e, (size_t)b->cap * sizeof *b->e, "evq buckets");
    }
    b->e[b->n++] = (fent){at, s, 0};
}

/* The time after t, or t itself when it is the last one. */
static inline sim_time after(sim_time t)
{
    return t == INT64_MAX ? t : t + 1;
}

/* The last time of bucket k of rung g. */
static inline sim_time bucket_last(const rung *g, uint32_t k)
{
    return k + 1 == g->nb ? g->last
                          : (sim_time)((uint64_t)g->base + ((uint64_t)(k + 1) << g->shift) - 1);
}

/* The bucket of rung g that holds time at (base <= at <= last): the last bucket also holds the
 * rest of the rung's span after nb 2^shift. */
static inline uint32_t bucket_of(const rung *g, sim_time at)
{
    uint64_t k = ((uint64_t)at - (uint64_t)g->base) >> g->shift;
    return k < g->nb ? (uint32_t)k : g->nb - 1;
}

/* Put an untracked entry at or after far_lo into the finest rung that spans it, or top. */
static void far_put(evq *q, sim_time at, uint32_t s)
{
    q->n_far++;
    for (unsigned r = q->n_rungs; r-- > 0;) {
        rung *g = &q->rungs[r];
        if (at <= g->last) {
            fb_add(&g->b[bucket_of(g, at)], at, s);
            return;
        }
    }
    fb_add(&q->far_top, at, s);
    q->top_min = at < q->top_min ? at : q->top_min;
    q->top_max = at > q->top_max ? at : q->top_max;
}

/* Spread the entries of src, whose times lie in [lo, hi], over a new finest rung from lo to
 * last (the end of the span it refines): about n / FAR_BUCKET buckets over [lo, hi], the last
 * one holding the rest of the span too. */
static void far_spread(evq *q, fbucket *src, sim_time lo, sim_time hi, sim_time last)
{
    SIM_ASSERT(q->n_rungs < FAR_RUNGS && lo <= hi && hi <= last);
    rung *g = &q->rungs[q->n_rungs++];
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    uint64_t want = src->n / FAR_BUCKET + 1;
    unsigned shift = 0;
    while (shift < 62 && (range >> shift) >= want) {
        shift++;
    }
    uint32_t nb = (uint32_t)(range >> shift) + 1;
    if (nb > g->cap) {
        g->b = xrealloc(g->b, (size_t)nb * sizeof *g->b, "evq buckets");
        memset(g->b + g->cap, 0, (size_t)(nb - g->cap) * sizeof *g->b);
        g->cap = nb;
    }
    g->base = lo;
    g->last = last;
    g->shift = shift;
    g->nb = nb;
    g->cur = 0;
    g->lo = q->far_lo = lo;
    for (uint32_t i = 0; i < src->n; i++) {
        fb_add(&g->b[bucket_of(g, src->e[i].at)], src->e[i].at, src->e[i].slot);
    }
    src->n = 0;
}

static void heapify(evq *q)
{
    /* Floyd's heap construction; any heap of the same entries pops in the same total order */
    size_t k = q->n;
    for (size_t i = k > 1 ? (k - 2) / ARITY + 1 : 0; i-- > 0;) {
        sift_down(q, i, get(q, i));
    }
}

/* Move bucket b's live entries into the heap, dropping its dead ones. */
static void far_take(evq *q, fbucket *b)
{
    if (q->n + b->n > q->cap) {
        size_t cap = 2 * q->cap;
        heap_grow(q, cap > q->n + b->n ? cap : q->n + b->n);
    }
    bool append = q->n == 0; /* then one heap construction over the bucket */
    for (uint32_t i = 0; i < b->n; i++) {
        fent e = b->e[i];
        if (is_dead(q, e.slot)) {
            drop_dead(q, e.slot);
        } else if (append) {
            q->at[q->n] = e.at;
            q->hs[q->n++] = e.slot;
        } else {
            sift_up(q, q->n++, (node){e.at, e.slot});
        }
    }
    q->n_far -= b->n;
    b->n = 0;
    if (append) {
        heapify(q);
    }
}

/* One step towards the next far entries: spread top when no rung is left, drop a used-up rung,
 * spread an over-full bucket over a finer rung, or move the next bucket into the heap. */
static void far_refill(evq *q)
{
    if (!q->n_rungs) {
        fbucket *t = &q->far_top;
        SIM_ASSERT(t->n > 0);
        far_spread(q, t, q->top_min, q->top_max, INT64_MAX);
        q->top_lo = after(q->rungs[0].last);
        q->top_min = INT64_MAX;
        q->top_max = INT64_MIN;
        return;
    }
    rung *g = &q->rungs[q->n_rungs - 1];
    if (g->cur == g->nb) {
        q->n_rungs--;
        q->far_lo = q->n_rungs ? q->rungs[q->n_rungs - 1].lo : q->top_lo;
        return;
    }
    fbucket *b = &g->b[g->cur];
    sim_time last = bucket_last(g, g->cur);
    if (b->n > q->far_split && g->shift > 0 && q->n_rungs < FAR_RUNGS) {
        sim_time lo = INT64_MAX, hi = INT64_MIN;
        for (uint32_t i = 0; i < b->n; i++) {
            lo = b->e[i].at < lo ? b->e[i].at : lo;
            hi = b->e[i].at > hi ? b->e[i].at : hi;
        }
        far_spread(q, b, lo, hi, last);
        g->cur++;
        g->lo = after(last);
        if (g->cur == g->nb) { /* the child spans all the parent had left: it takes its place */
            rung used = *g;
            *g = q->rungs[q->n_rungs - 1];
            q->rungs[--q->n_rungs] = used;
        }
        return;
    }
    g->cur++;
    g->lo = q->far_lo = after(last);
    far_take(q, b);
}

/* Move the heap's untracked entries into *to (its dead ones are dropped); tracked ones stay. */
static void far_out(evq *q, fbucket *to, sim_time *lo, sim_time *hi)
{
    size_t k = 0;
    for (size_t i = 0; i < q->n; i++) {
        node nd = get(q, i);
        if (nd.slot & TRACK) {
            place(q, k++, nd);
        } else if (is_dead(q, nd.slot)) {
            drop_dead(q, nd.slot);
        } else {
            fb_add(to, nd.at, nd.slot);
            *lo = nd.at < *lo ? nd.at : *lo;
            *hi = nd.at > *hi ? nd.at : *hi;
            q->n_far++;
        }
    }
    q->n = k;
    heapify(q);
}

static inline void settle(evq *q);

/* The heap has grown to far_at entries: split its untracked entries off into the far future
 * (top, when it is off; a new finest rung before far_lo, when it is on), if they are most of
 * it. Tried again when the heap has doubled from what is left. */
static void far_split(evq *q)
{
    size_t untracked = 0;
    for (size_t i = 0; i < q->n; i++) {
        untracked += !(q->hs[i] & TRACK);
    }
    if (untracked >= q->n / 2 && !q->far_on) {
        far_out(q, &q->far_top, &q->top_min, &q->top_max);
        q->far_on = true;
        q->n_rungs = 0;
        q->far_lo = q->top_lo = q->top_min;
    } else if (untracked >= q->n / 2 && q->n_rungs < FAR_RUNGS) {
        /* every untracked entry of the heap is before far_lo */
        sim_time lo = INT64_MAX, hi = INT64_MIN, last = q->far_lo - 1;
        far_out(q, &q->far_tmp, &lo, &hi);
        far_spread(q, &q->far_tmp, lo, hi, last);
    }
    settle(q);
    q->far_at = 2 * q->n > q->far_min ? 2 * q->n : q->far_min;
}

/* Keep the root alive and the earliest pending event, so peek and pop see it: drop dead roots
 * and bring the next bucket in while the root is not before far_lo. */
static inline void drop_dead_roots(evq *q)
{
    while (q->n && is_dead(q, SLOT(q->hs[0]))) {
        uint32_t s = SLOT(q->hs[0]);
        remove_root(q);
        drop_dead(q, s);
    }
}

static void settle_far(evq *q)
{
    while (q->n_far) {
        if (q->n && q->at[0] < q->far_lo) {
            return;
        }
        far_refill(q);
        drop_dead_roots(q);
    }
    /* the far future has emptied: give it up */
    q->far_on = false;
    q->far_at = 2 * q->n > q->far_min ? 2 * q->n : q->far_min;
}

static inline void settle(evq *q)
{
    drop_dead_roots(q);
    if (q->far_on) {
        settle_far(q);
    }
}

/* Drop the dead entries of bucket b. */
static void fb_compact(evq *q, fbucket *b)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < b->n; i++) {
        if (is_dead(q, b->e[i].slot)) {
            drop_dead(q, b->e[i].slot);
        } else {
            b->e[k++] = b->e[i];
        }
    }
    q->n_far -= b->n - k;
    b->n = k;
}

/* Rebuild the heap and the buckets without their dead entries. */
static void compact(evq *q)
{
    size_t k = 0;
    for (size_t i = 0; i < q->n; i++) {
        uint32_t s = SLOT(q->hs[i]);
        if (is_dead(q, s)) {
            drop_dead(q, s);
        } else {
            place(q, k++, get(q, i));
        }
    }
    q->n = k;
    heapify(q);
    if (q->n_far) {
        for (unsigned r = 0; r < q->n_rungs; r++) {
            for (uint32_t b = q->rungs[r].cur; b < q->rungs[r].nb; b++) {
                fb_compact(q, &q->rungs[r].b[b]);
            }
        }
        fb_compact(q, &q->far_top);
    }
    settle(q); /* the far future may have emptied */
}

/* After a removal or a move: settle, and compact when the dead entries are as many as the
 * pending events (and COMPACT_MIN or more). Inline: the fluid benchmark at 10^3 activities ran
 * 4 % slower with it out of line and the settling split into three functions. */
static inline void tidy(evq *q)
{
    settle(q);
    if (q->n_dead >= COMPACT_MIN && q->n_dead >= q->n_live) {
        compact(q);
    }
}

/* The slot holding the pending event named by id (its home in *home), or NONE. */
static uint32_t lookup(const evq *q, sim_event_id id, uint32_t *home)
{
    uint64_t low = id & 0xffffffffu;
    if (low == 0 || low > q->n_slots) {
        return NONE;
    }
    uint32_t h = (uint32_t)(low - 1);
    const slot *sl = &q->slots[h];
    /* another event's slot never matches: a moved event's copy carries its home's index */
    if (sl->ev.id != id) {
        return NONE;
    }
    switch (state(sl)) {
    case S_LIVE:
        *home = h;
        return h;
    case S_DEAD:
    case S_HOME:
        *home = h;
        return sl->link; /* NONE once its event has left */
    default:
        return NONE;
    }
}

static bool is_movable(const evq *q, sim_handler *fn)
{
    for (unsigned k = 0; k < q->n_movable; k++) {
        if (q->movable[k] == fn) {
            return true;
        }
    }
    return false;
}

/* An untracked event of handler fn is being moved or cancelled: track fn's events from now. */
static void learn_movable(evq *q, sim_handler *fn)
{
    if (q->n_movable < MOVABLE && !is_movable(q, fn)) {
        q->movable[q->n_movable++] = fn;
    }
}

void evq_expect_moves(evq *q, sim_handler *fn)
{
    learn_movable(q, fn);
}

sim_event_id evq_push(evq *q, const sim_event *ev)
{
    SIM_ASSERT(ev->prio >= SIM_PRIO_MIN && ev->prio <= SIM_PRIO_MAX);
    heap_reserve(q);
    uint32_t s = slot_alloc(q);
    slot *sl = &q->slots[s];
    uint32_t gen = (sl->meta >> M_GEN_SHIFT) + 1;
    if (gen > GEN_MAX) {
        gen = 1; /* after 2^30 reuses of one slot; a stale id that old cannot be held usefully */
    }
    sim_event_id id = ((uint64_t)gen << 32) | ((uint64_t)s + 1);
    sl->ev = *ev;
    sl->ev.id = id;
    sl->link = s;
    uint32_t track = q->n_movable && is_movable(q, ev->fn) ? TRACK : 0;
    sl->meta = gen << M_GEN_SHIFT | (track ? M_TRACKED : 0) | S_LIVE;
    q->tie[s] = make_tie(ev->prio, q->seq++);
    q->n_live++;
    if (q->far_on && !track && ev->at >= q->far_lo) {
        far_put(q, ev->at, s);
        return id;
    }
    sift_up(q, q->n++, (node){ev->at, s | track});
    if (q->n >= q->far_at) {
        far_split(q);
    }
    return id;
}

const sim_event *evq_peek(const evq *q)
{
    return q->n ? &q->slots[SLOT(q->hs[0])].ev : NULL;
}

bool evq_pop_until(evq *q, sim_time until, sim_event *out)
{
    if (!q->n || q->at[0] > until) {
        return false;
    }
    uint32_t s = SLOT(q->hs[0]);
    const slot *sl = &q->slots[s];
    *out = sl->ev;
    uint32_t home = sl->link;
    remove_root(q);
    slot_free(q, s);
    if (home != s) {
        release_home(q, home);
    }
    q->n_live--;
    tidy(q);
    if (q->n) {
        /* The next pop reads the new root's slot, a random place in the pool (a cache miss on
         * a large queue): start loading it now, so the load overlaps this event's handler.
         * Measured: the slot read was ~40 % of pop time at 10^6 pending events. */
        prefetch(&q->slots[SLOT(q->hs[0])]);
    }
    return true;
}

bool evq_cancel(evq *q, sim_event_id id)
{
    uint32_t home;
    uint32_t s = lookup(q, id, &home);
    if (s == NONE) {
        return false;
    }
    if (q->slots[s].meta & M_TRACKED) {
        remove_at(q, q->pos[s]);
        slot_free(q, s);
    } else {
        learn_movable(q, q->slots[s].ev.fn);
        kill(q, s);
        q->slots[s].link = NONE;
    }
    if (home != s) {
        release_home(q, home);
    }
    q->n_live--;
    tidy(q);
    return true;
}

bool evq_reschedule(evq *q, sim_event_id id, sim_time at)
{
    uint32_t home;
    uint32_t s = lookup(q, id, &home);
    if (s == NONE) {
        return false;
    }
    if (q->slots[s].meta & M_TRACKED) {
        size_t i = q->pos[s];
        if (home != s && state(&q->slots[home]) == S_HOME) {
            /* the home's own entry has left the heap: the event goes back there (its entry
             * with it), so its id reaches it again without forwarding */
            slot *h = &q->slots[home];
            h->ev = q->slots[s].ev;
            h->link = home;
            h->meta = (h->meta & ~(M_STATE | M_TRACKED)) | M_TRACKED | S_LIVE;
            slot_free(q, s);
            s = home;
        }
        q->slots[s].ev.at = at;
        q->tie[s] = make_tie(q->slots[s].ev.prio, q->seq++);
        move_at(q, i, (node){at, s | TRACK});
        tidy(q); /* the root may have moved down, uncovering a dead entry */
        return true;
    }
    learn_movable(q, q->slots[s].ev.fn);
    heap_reserve(q);
    uint32_t g = slot_alloc(q); /* may move the pool: take pointers after */
    slot *old = &q->slots[s], *sl = &q->slots[g];
    sl->ev = old->ev;
    sl->ev.at = at;
    sl->link = home;
    sl->meta = (sl->meta & ~M_STATE) | M_TRACKED | S_LIVE;
    q->tie[g] = make_tie(sl->ev.prio, q->seq++);
    kill(q, s);
    if (home == s) {
        old->link = g; /* the home forwards to the event's new slot */
    } else {
        old->link = NONE;
        q->slots[home].link = g;
    }
    sift_up(q, q->n++, (node){at, g | TRACK});
    tidy(q);
    return true;
}

size_t evq_size(const evq *q)
{
    return q->n_live;
}

size_t evq__entries_for_test(const evq *q)
{
    return q->n + q->n_far;
}

size_t evq__far_entries_for_test(const evq *q)
{
    return q->n_far;
}

void evq__far_threshold_for_test(evq *q, size_t n)
{
    SIM_ASSERT(n >= 1 && n < UINT32_MAX);
    q->far_min = n;
    q->far_split = (uint32_t)n;
    if (!q->far_on) {
        q->far_at = n;
    }
}

int evq_verify(const evq *q, char *why, size_t why_len)
{
    char dummy[1];
    if (!why) {
        why = dummy;
        why_len = sizeof dummy;
    }
    size_t n_live = 0, n_dead = 0;
    for (size_t i = 0; i < q->n; i++) {
        node nd = get(q, i);
        uint32_t s = SLOT(nd.slot);
        if (s >= q->n_slots) {
            snprintf(why, why_len, "evq: heap[%zu] names slot %u of %u", i, s, q->n_slots);
            return SIM_ERANGE;
        }
        const slot *sl = &q->slots[s];
        uint32_t st = state(sl);
        if ((st != S_LIVE && st != S_DEAD) || is_dead(q, s) != (st == S_DEAD)) {
            snprintf(why, why_len, "evq: heap[%zu] -> slot %u in state %u (dead bit %d)", i, s,
                     st, (int)is_dead(q, s));
            return SIM_ERANGE;
        }
        bool tracked = (nd.slot & TRACK) != 0;
        if (tracked != ((sl->meta & M_TRACKED) != 0) || (tracked && st != S_LIVE) ||
            (tracked && q->pos[s] != i)) {
            snprintf(why, why_len, "evq: heap[%zu] -> slot %u tracked %d, slot says %d, position %u",
                     i, s, (int)tracked, (int)((sl->meta & M_TRACKED) != 0), tracked ? q->pos[s] : 0);
            return SIM_ERANGE;
        }
        if (st == S_LIVE) {
            n_live++;
            if (sl->ev.at != nd.at) {
                snprintf(why, why_len, "evq: heap[%zu] time %lld differs from its event's %lld",
                         i, (long long)nd.at, (long long)sl->ev.at);
                return SIM_ERANGE;
            }
        } else {
            n_dead++;
        }
        if (i > 0 && before(q, nd, get(q, (i - 1) / ARITY))) {
            snprintf(why, why_len,
                     "evq: heap property broken: heap[%zu] (t=%lld) before its parent heap[%zu] "
                     "(t=%lld)",
                     i, (long long)nd.at, (i - 1) / ARITY, (long long)q->at[(i - 1) / ARITY]);
            return SIM_ERANGE;
        }
    }
    if (q->n_far && (!q->far_on || (q->n && q->at[0] >= q->far_lo) || !q->n)) {
        snprintf(why, why_len, "evq: %zu far entries but the root is not before far_lo %lld",
                 q->n_far, (long long)q->far_lo);
        return SIM_ERANGE;
    }
    size_t n_far = 0;
    for (unsigned r = 0; r <= q->n_rungs && q->far_on; r++) {
        const rung *g = r < q->n_rungs ? &q->rungs[r] : NULL;
        sim_time lo = g ? g->lo : q->top_lo;
        if (lo != (r + 1 < q->n_rungs ? after(q->rungs[r + 1].last)
                   : r + 1 == q->n_rungs ? q->far_lo
                   : q->n_rungs ? after(q->rungs[0].last)
                                : q->far_lo)) {
            snprintf(why, why_len, "evq: far rung %u starts at %lld, not after the next", r,
                     (long long)lo);
            return SIM_ERANGE;
        }
        for (uint32_t b = g ? g->cur : 0; b < (g ? g->nb : 1); b++) {
            const fbucket *fb = g ? &g->b[b] : &q->far_top;
            for (uint32_t i = 0; i < fb->n; i++) {
                fent e = fb->e[i];
                bool in = e.at >= lo && (g ? e.at <= g->last && bucket_of(g, e.at) == b
                                           : e.at >= q->top_min && e.at <= q->top_max);
                const slot *sl = e.slot < q->n_slots ? &q->slots[e.slot] : NULL;
                if (!in || !sl || (sl->meta & M_TRACKED) ||
                    (state(sl) != S_LIVE && state(sl) != S_DEAD) ||
                    is_dead(q, e.slot) != (state(sl) == S_DEAD) ||
                    (state(sl) == S_LIVE && sl->ev.at != e.at)) {
                    snprintf(why, why_len, "evq: far rung %u bucket %u entry %u: slot %u at %lld "
                             "misplaced or in a wrong state", r, b, i, e.slot, (long long)e.at);
                    return SIM_ERANGE;
                }
                n_live += state(sl) == S_LIVE;
                n_dead += state(sl) == S_DEAD;
                n_far++;
            }
        }
    }
    if (n_far != q->n_far) {
        snprintf(why, why_len, "evq: %zu far entries, counted %zu", n_far, q->n_far);
        return SIM_ERANGE;
    }
    if (n_live != q->n_live || n_dead != q->n_dead) {
        snprintf(why, why_len, "evq: heap holds %zu live and %zu dead entries, counted %zu and %zu",
                 n_live, n_dead, q->n_live, q->n_dead);
        return SIM_ERANGE;
    }
    if (q->n && is_dead(q, SLOT(q->hs[0]))) {
        snprintf(why, why_len, "evq: the root entry is dead");
        return SIM_ERANGE;
    }
    size_t count[4] = {0};
    for (uint32_t s = 0; s < q->n_slots; s++) {
        const slot *sl = &q->slots[s];
        uint32_t st = state(sl);
        count[st]++;
        uint32_t to = sl->link;
        bool ok = true;
        if (st == S_LIVE && to != s) { /* a moved event: its home forwards here */
            ok = to < q->n_slots && (state(&q->slots[to]) == S_DEAD ||
                                     state(&q->slots[to]) == S_HOME) &&
                 q->slots[to].link == s && q->slots[to].ev.id == sl->ev.id;
        } else if (st == S_HOME || (st == S_DEAD && to != NONE)) { /* forwards to its event */
            ok = to < q->n_slots && state(&q->slots[to]) == S_LIVE && q->slots[to].link == s;
        }
        if (!ok) {
            snprintf(why, why_len, "evq: slot %u (state %u) links to slot %u, which does not link back", s,
                     st, to);
            return SIM_ERANGE;
        }
    }
    if (count[S_LIVE] != n_live || count[S_DEAD] != n_dead) {
        snprintf(why, why_len, "evq: %zu live and %zu dead slots for %zu live and %zu dead entries",
                 count[S_LIVE], count[S_DEAD], n_live, n_dead);
        return SIM_ERANGE;
    }
    size_t n_free = 0;
    for (uint32_t s = q->free_head; s != NONE; s = q->slots[s].link) {
        if (++n_free > q->n_slots || state(&q->slots[s]) != S_FREE) {
            snprintf(why, why_len, "evq: free list has a cycle or a slot in use");
            return SIM_ERANGE;
        }
    }
    if (n_free != count[S_FREE]) {
        snprintf(why, why_len, "evq: %zu slots on the free list, %zu free", n_free,
                 count[S_FREE]);
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
