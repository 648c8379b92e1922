/* model/cluster/reconf.h - dynamic MIG re-partitioning: drain a GPU, apply a new mig-parted layout after
 * a delay, advertise the new devices; and the periodic layout policy that asks for it.
 *
 * A reconfigurable GPU (model/cluster/cluster.h) has a candidate device for every classic MIG placement
 * and one whole-GPU device; its layout is the set of active ones. A POL_RECONFIGURE decision
 * (from any policy) names the target set. The model checks it: the GPU is reconfigurable and not
 * already being reconfigured; the devices are its own, distinct, and either the single whole-GPU
 * device (MIG off) or MIG instances forming a valid layout (mig_check); the target differs from
 * the current layout. Then, as the NVIDIA mig-manager does (mig-parted reconfigure-mig.sh: the
 * GPU's clients are stopped, the config applied, the device plugin restarted):
 *   1. drain: every active device of the GPU is cordoned (no new pod); running pods finish, or,
 *      when the decision says evict, are killed at once and queued again (world_kill);
 *   2. once the GPU holds no pod: the new layout is applied after `delay_s`, plus `reset_s` when
 *      the MIG mode itself changes (a GPU reset);
 *   3. the old devices are withdrawn, the new ones advertised, and the scheduler is told that
 *      capacity changed (world_settle).
 * Time-slicing: a reconfigurable GPU may have a time-sliced candidate (model/cluster/cluster.h
 * ts_replicas), the whole GPU advertised as N replicas of nvidia.com/gpu.shared. Switching to or
 * from it is a device-plugin config change (the GPU operator relabels the node's
 * nvidia.com/device-plugin.config; the plugin's config-manager rewrites the config and sends the
 * plugin SIGHUP, and the plugin restarts its servers and re-registers its resources with the
 * kubelet: k8s-device-plugin cmd/config-manager/main.go, cmd/nvidia-device-plugin/main.go). It
 * goes through the same drain, and its apply time is:
 *   whole <-> time-sliced (MIG stays off): `restart_s`, the plugin's restart, no mig-parted;
 *   MIG -> time-sliced or back: `delay_s + reset_s`, a mig-manager mode change (which itself
 *   restarts the plugin, with its new config).
 * The drain is a choice of this model, not the plugin's: a restarted plugin does not stop running
 * pods (the kubelet keeps their devices), but it does not know them either, so without a drain a
 * whole-GPU pod would find new replica pods on its GPU.
 * Timeline of one reconfiguration requested at t0 whose last pod ends at t1 (t1 = t0 when idle or
 * evicting): devices of the old layout take no pod from t0; the new ones exist from
 * t1 + delay (+ reset), or t1 + restart for a whole <-> time-sliced switch. Cost counted:
 * reconfigurations, pods evicted and their lost GPU-hours, GPU-seconds spent draining (t1 - t0)
 * and applying (delay + reset, or restart).
 * The layout policy (repart_*) runs every `interval_s`: it sees the read-only view and returns
 * POL_RECONFIGURE decisions, which go through the checks above. A policy that reacts
 * (repart_ops.reacts: miso) also places the jobs asking for any MIG slice (POL_PLACE; the world
 * tells this component when one is queued, world_set_slice_handler) and runs again at the same
 * simulated time when such a job is queued, a job ends or is killed, or a layout is in place.
 * Units: seconds. Ownership: the component borrows the world; the policy's state is its own.
 */
#ifndef SIMPROJ_MODEL_RECONF_H
#define SIMPROJ_MODEL_RECONF_H

#include <stdbool.h>
#include <stdint.h>

#include "model/policy/repart.h"
#include "model/cluster/world.h"

typedef struct reconf_cfg {
    double delay_s;           /* time to apply a layout once the GPU is idle, >= 0 */
    double reset_s;           /* extra time when the MIG mode changes (GPU reset), >= 0 */
    double restart_s;         /* device-plugin restart: whole <-> time-sliced switch, >= 0 */
    double interval_s;        /* how often the layout policy runs; > 0 (ignored without a policy) */
    const repart_ops *policy; /* NULL: only other policies' decisions reconfigure */
    const param_set *params;  /* its parameters, borrowed during create */
} reconf_cfg;

typedef struct reconf_stats {
    uint64_t n_requested;     /* POL_RECONFIGURE decisions accepted */
    uint64_t n_rejected;      /* refused by the checks */
    uint64_t n_applied;       /* layouts in place */
    uint64_t n_mode_changes;  /* of which switched MIG on or off */
    uint64_t n_timeslice_on;  /* of which made the GPU time-sliced */
    uint64_t n_timeslice_off; /* of which ended its time-slicing */
    uint64_t n_evicted;       /* pods killed to drain */
    double evicted_gpu_s;     /* GPU-seconds those pods lost since their last checkpoint */
    double drain_gpu_s;       /* sum over reconfigurations of (idle - request) */
    double apply_gpu_s;       /* sum of delay (+ reset), or restart */
} reconf_stats;

typedef struct reconf reconf;

/* Attach to w (before world_run): handles POL_RECONFIGURE, and runs cfg->policy every interval.
 * Returns 0 and sets *out (caller owns, reconf_destroy), or SIM_EINPUT when the policy refuses
 * its parameters (reported through d). */
int reconf_create(world *w, const reconf_cfg *cfg, diag *d, reconf **out);
void reconf_destroy(reconf *r);
reconf_stats reconf_get_stats(const reconf *r);

#endif
