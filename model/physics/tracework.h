/* model/physics/tracework.h - a traced duration carried to another device: how many work-seconds (solo
 * run time on what the job asks for) one traced second is worth.
 *
 * A traced job ran for D seconds alone on the device it had (a whole GPU of the traced type).
 * With a workload profile p, D is D / t(p, traced) units of work, and each unit takes
 * t(p, partition) on the partition it asks for, so its solo time there is
 *     work_s = D * t(p, partition) / t(p, traced)
 * with t the time per unit that the physics gives (predict_unit_estimate, model/physics/predict.h: both
 * exclusive, at the profile's batch); its time under sharing then follows at run time
 * (model/cluster/jobrate.h). Without a profile the job is taken to be GPU-bound: the same formula with a
 * profile that is all GPU compute (fp32 class, no host time, no memory traffic, no footprint,
 * no SM limit), so its time scales with the partition's SMs, MIG's SM efficiency and the power
 * model's clock, and nothing else (DESIGN.md section 7). Without a traced type the durations are
 * taken as run times on what the job asks for (factor 1).
 * Pure computation on borrowed data; no I/O.
 */
#ifndef SIMPROJ_MODEL_TRACEWORK_H
#define SIMPROJ_MODEL_TRACEWORK_H

#include <stddef.h>

#include "model/hw/catalog.h"
#include "model/physics/speed.h"

/* Work-seconds per traced second (> 0) into *factor for profile p at `batch` (p NULL: the
 * GPU-bound profile, batch 1) moved from a whole `traced` GPU to partition `to` (its GPU and MIG
 * profile; sharing is ignored: solo times). traced NULL gives 1. Returns 0, or -1 with the
 * physics' reason in why (the profile does not fit or cannot run on one of them). */
int tracework_factor(const wl_profile *p, double batch, const gpu_type *traced,
                     const partition_cfg *to, const phys_params *m, double *factor, char *why,
                     size_t why_len);

#endif
