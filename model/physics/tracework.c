/* model/physics/tracework.c - traced durations -> work (see tracework.h). */
#include "model/physics/tracework.h"

#include <stdio.h>

#include "model/physics/predict.h"

/* One SM-second of fp32 work per iteration and nothing else: time = 1 / (s * clock * mig_eff). */
static const wl_profile gpu_bound = {
    .name = "gpu-bound",
    .provenance = "slicesim fallback for traced jobs without a profile (model/physics/tracework.h)",
    .compute_sm_s_fixed = {[WL_CLASS_FP32] = 1.0},
};

int tracework_factor(const wl_profile *p, double batch, const gpu_type *traced,
                     const partition_cfg *to, const phys_params *m, double *factor, char *why,
                     size_t why_len)
{
    *factor = 1.0;
    if (!traced) {
        return 0;
    }
    if (!p) {
        p = &gpu_bound;
        batch = 1.0;
    }
    partition_cfg from;
    partition_cfg_init(&from, traced);
    partition_cfg here = *to;
    here.sharing = SHARE_EXCLUSIVE;
    here.peers = 1;
    here.n_with = 0;
    here.mig_busy = 0;
    speed_result a, b;
    predict_unit_estimate(p, batch, &from, m, &a);
    predict_unit_estimate(p, batch, &here, m, &b);
    if (a.outcome != SPEED_OK || b.outcome != SPEED_OK) {
        const speed_result *bad = a.outcome != SPEED_OK ? &a : &b;
        snprintf(why, why_len, "%s on %s: %s", speed_outcome_name(bad->outcome),
                 bad == &a ? "the traced GPU" : "the requested partition", bad->reason);
        return -1;
    }
    *factor = b.unit_time_s / a.unit_time_s;
    return 0;
}
