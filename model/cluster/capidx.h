/* model/cluster/capidx.h - free-capacity index: a max segment tree over a fixed number of slots (the
 * cluster's nodes), so that "the first node at or after i with at least k free" is found in
 * O(log n) instead of a scan from node 0. The cluster keeps one per advertised resource (free
 * units per node) and one for fractional GPU shares (the largest free milli-GPU of a node's GPUs).
 * Values are plain counts (units or milli-GPU); the index knows nothing of what they measure.
 * Ownership: capidx_create returns a caller-owned index (capidx_destroy).
 */
#ifndef SIMPROJ_MODEL_CAPIDX_H
#define SIMPROJ_MODEL_CAPIDX_H

#include <stdint.h>

typedef struct capidx capidx;

/* An index over n slots (n >= 1), every value 0. Caller owns (capidx_destroy). */
capidx *capidx_create(uint32_t n);
/* Free it; NULL is a no-op. */
void capidx_destroy(capidx *ix);
/* Set slot i (< n) to v: O(log n). */
void capidx_set(capidx *ix, uint32_t i, uint32_t v);
/* The lowest slot >= from whose value is >= k, or n when none: O(log n). */
uint32_t capidx_next_ge(const capidx *ix, uint32_t from, uint32_t k);

#endif
