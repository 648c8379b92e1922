/* model/physics/predict.h - the one prediction entry point of the physics (DESIGN.md §4): solo speed
 * (model/physics/speed.h) -> sharing (model/physics/share_ts.h, model/physics/share_mps.h) -> here -> the run's rate
 * adapter (model/cluster/jobrate.h). Nothing below this module calls it, so the pipeline has one direction.
 *
 * predict_unit_time gives the time per unit of work of a profile on a configured partition with
 * its co-runners, and a lo/hi range from the loss factors' relative uncertainty
 * (phys_params.param_rel_sd: the time is recomputed with them moved both ways);
 * predict_family_time (what `predict` prints) widens that range over a fit's family of profiles.
 * predict_unit_estimate is the same time without the range, for callers that need one number
 * many times: a run's rate on every change of co-runners (model/cluster/jobrate.c calls no sharing
 * solver itself), the fitter's residuals (`fit-workload`, `validate`) and validate's
 * predictions, whose range is the family's alone.
 * Units: seconds per unit of work, units/s. Ownership: every pointer borrowed; *out is written
 * whole. No I/O; no global state.
 */
#ifndef SIMPROJ_MODEL_PREDICT_H
#define SIMPROJ_MODEL_PREDICT_H

#include "model/physics/speed.h"

/* Time per unit of work of profile p at batch B on configuration c, under model parameters m,
 * with the lo/hi range. Never fails on a physically impossible setup: it reports SPEED_INVALID
 * (with a reason) or SPEED_OOM. */
void predict_unit_time(const wl_profile *p, double batch, const partition_cfg *c,
                       const phys_params *m, speed_result *out);

/* predict_unit_time of p whose lo/hi range also spans the estimates of n_family other profiles
 * that fit the same observations (a fit's family of profiles, model/fit/wfit.h: where the data
 * cannot separate host time from parallelism the members differ most under sharing). The
 * estimate stays p's. family may be NULL when n_family is 0. */
void predict_family_time(const wl_profile *p, int n_family, const wl_profile *family,
                         double batch, const partition_cfg *c, const phys_params *m,
                         speed_result *out);

/* predict_unit_time without the range: unit_time_lo_s = unit_time_hi_s = unit_time_s.
 * p may be NULL: a job without a profile, taken to be GPU-bound (no host phase, 1 s of GPU work
 * per unit alone at any clock; batch and memory not looked at) of time-slice class c->ts_class;
 * time-slicing only (MPS needs every client's profile, and so do co-runners with[i] NULL). The
 * run's rate adapter (model/cluster/jobrate.c) asks this for every rate: alone, with identical peers
 * (c->peers), and with mixed co-runners (c->with[], with_n[]: one entry per co-runner class). */
void predict_unit_estimate(const wl_profile *p, double batch, const partition_cfg *c,
                           const phys_params *m, speed_result *out);

/* The reason a configuration is invalid whatever the profile (peers, exclusive with several
 * jobs, mps_percent, mig_busy, a partition without SMs): the checks predict_unit_time and
 * predict_unit_estimate make first, for callers that check a configuration before there is a
 * profile (`fit-workload` on its DDP observations). NULL when valid; a static string. */
const char *predict_cfg_invalid(const partition_cfg *c);

/* Time-slice efficiency eta(n) of co-runner class cls (0 .. n_cls - 1) at n contexts, from the
 * caller's source (ctx). The prediction's: a profile's own time-slice class; for a job or
 * co-runner without a profile, the class partition_cfg names for it (ts_class,
 * with_ts_class[]: the run's rate adapter gives it the node's calibration, model/cluster/jobrate.c). */
typedef double (*predict_eta_fn)(const void *ctx, int cls, int n);

/* The one rule for mixed kernel-length classes time-sliced together: eta[n], n = 0 .. k, is the
 * lowest of the n_cls classes' eta_of(ctx, i, n) (switching cost is paid by all; not capped at
 * 1: a calibration may measure eta above 1). k <= SHARE_MAX_JOBS (model/physics/share.h), n_cls >= 1.
 * Called by this module's time-slice prediction, which answers the run's mixed rates too. */
void predict_lowest_eta(int n_cls, int k, predict_eta_fn eta_of, const void *ctx, double *eta);

#endif
