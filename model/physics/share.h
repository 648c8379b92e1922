/* model/physics/share.h - how co-located jobs slow each other on one partition (DESIGN.md §4 "Sharing"):
 * what the sharing models have in common. The models are in their own modules:
 *  - time-slicing (MVA, product form, the scheduler's round robin, round-robin simulation):
 *    model/physics/share_ts.h;
 *  - MPS (SM water-filling, bandwidth pool, kernel queueing): model/physics/share_mps.h.
 *
 * Memory: time-sliced and MPS co-runners share one memory capacity (share_mem_fits); on a
 * fractional GPU (partition_cfg.share > 0) each context holds its share of the memory, the
 * trace author's definition (alibaba/clusterdata issue 193: 0.6 GPU is 60 % of its memory).
 * Limits: SHARE_MAX_JOBS contexts and SHARE_MAX_CLASSES classes on one partition, for every
 * solver of both modules.
 * Units: bytes. Ownership: share_mem_fits borrows its arguments and keeps nothing. No I/O; no
 * global state.
 */
#ifndef SIMPROJ_MODEL_SHARE_H
#define SIMPROJ_MODEL_SHARE_H

#include <stdbool.h>

#include "model/physics/speed.h"

#define SHARE_MAX_JOBS 64 /* jobs on one partition */
#define SHARE_MAX_CLASSES (PART_MAX_WITH + 1)

/* True when the footprints of everyone sharing the partition fit its memory (with c->share > 0:
 * p's own footprint fits its share of it); *need_bytes gets the total (p's own). */
bool share_mem_fits(const wl_profile *p, double batch, const partition_cfg *c, double *need_bytes);

#endif
