/* model/cluster/capidx.c - the free-capacity index (see capidx.h): an iterative max segment tree whose
 * leaves are padded to a power of two (padding leaves hold 0). */
#include "model/cluster/capidx.h"

#include <stdlib.h>

#include "sim/err.h"
#include "sim/xalloc.h"

struct capidx {
    uint32_t n;    /* slots */
    uint32_t size; /* leaves: the smallest power of two >= n */
    uint32_t *t;   /* 2 * size: t[1] is the root, leaves at t[size + i] */
};

capidx *capidx_create(uint32_t n)
{
    SIM_ASSERT(n >= 1 && n <= (UINT32_C(1) << 30));
    capidx *ix = xcalloc(1, sizeof *ix, "capacity index");
    ix->n = n;
    ix->size = 1;
    while (ix->size < n) {
        ix->size *= 2;
    }
    ix->t = xcalloc(2 * (size_t)ix->size, sizeof(uint32_t), "capacity index");
    return ix;
}

void capidx_destroy(capidx *ix)
{
    if (!ix) {
        return;
    }
    free(ix->t);
    free(ix);
}

void capidx_set(capidx *ix, uint32_t i, uint32_t v)
{
    SIM_ASSERT(i < ix->n);
    uint32_t p = ix->size + i;
    ix->t[p] = v;
    for (p /= 2; p >= 1; p /= 2) {
        uint32_t l = ix->t[2 * p], r = ix->t[2 * p + 1];
        uint32_t m = l > r ? l : r;
        if (ix->t[p] == m) {
            break; /* nothing above changes */
        }
        ix->t[p] = m;
    }
}

uint32_t capidx_next_ge(const capidx *ix, uint32_t from, uint32_t k)
{
    if (from >= ix->n) {
        return ix->n;
    }
    uint32_t p = ix->size + from;
    if (ix->t[p] >= k) {
        return from;
    }
    /* climb until a right sibling (covering slots after p's range) holds a value >= k */
    for (;;) {
        while (p & 1) { /* p is a right child: its parent's range adds nothing after p */
            p /= 2;
            if (p <= 1) {
                return ix->n;
            }
        }
        p += 1; /* the right sibling: the next range to the right */
        if (ix->t[p] >= k) {
            break;
        }
    }
    while (p < ix->size) { /* descend to the leftmost leaf >= k */
        p = ix->t[2 * p] >= k ? 2 * p : 2 * p + 1;
    }
    uint32_t i = p - ix->size;
    return i < ix->n ? i : ix->n;
}
