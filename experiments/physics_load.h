/* experiments/physics_load.h - load the model's loss factors (model/physics/physics.yaml) into phys_params.
 *
 * Schema (every scalar entry is a mapping {value, src, note?}; src must be non-empty, because
 * every number of the physics names its source):
 *   version: 1
 *   roofline_p, bw_stream_eff, bw_drive_sm_frac, mig_sm_eff, power_alpha, power_idle_frac,
 *   power_board_idle_frac,
 *   clock_min_frac, power_window_s, mps_bw_contention, mps_kernel_wait, mps_sm_granule, mps_min_sms,
 *   param_rel_sd, mig_apply_s, meas_compute_floor, meas_host_floor, ts_quantum_s, ts_switch_s
 *   (fractions or seconds, 0..1),
 *   meas_prior_rel_sd (above 0): {value: X,
 *   src: "...",
 *   note: "..."}
 *   power_sm_w: {fp32: {...}, fp64: {...}, fp16: {...}, tensor: {...}}
 *   timeslice: [{name: long, eta: [η(2), η(3), ...], src: "...", note: "..."}]  (1..7 values;
 *              k beyond the list uses the last value)
 * Errors go through diag with the fixed message shape.
 * Ownership: phys_params is plain data (no pointers), filled in the caller's struct; nothing to
 * free. Units: as documented on phys_params (model/physics/speed.h): watts, fractions, exponents,
 * seconds.
 */
#ifndef SIMPROJ_EXPERIMENTS_PHYSICS_LOAD_H
#define SIMPROJ_EXPERIMENTS_PHYSICS_LOAD_H

#include <stddef.h>

#include "model/physics/speed.h"
#include "sim/diag.h"

/* Parse `len` bytes of physics YAML named `name` into *out. Returns 0, or SIM_EINPUT after
 * reporting every problem to d. */
int physics_load_buffer(const char *name, const void *buf, size_t len, diag *d,
                        phys_params *out);

/* Load the embedded model/physics/physics.yaml. Returns 0, or SIM_EINPUT (reported to d) when the
 * embedded file is broken (a build bug caught by the tests). */
int physics_load_default(diag *d, phys_params *out);

#endif
