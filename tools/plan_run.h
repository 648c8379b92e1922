/* tools/plan_run.h - `slicesim plan`: run every candidate of a scenario's plan: section
 * (experiments/plan.h) as a sweep, pick the cheapest that meets the SLOs, and write the answer.
 *
 * Search: the candidates are the combinations of the plan's axes (e.g. node counts x layouts),
 * each run `replications` times with the sweep's seeds (tools/sweep_run.h: same resuming, -j and
 * MPI). Cost of a candidate = gpu_hour x GPUs x horizon (h) + energy_kwh x its mean energy (kWh,
 * tools/out_metrics.h's power model). Uncertainty across seeds: a candidate meets an SLO when
 * the upper end of the 95 % confidence interval of the figure's mean (mean + half-width, Student
 * t over the replications) is within the limit; with one replication, the mean itself. A figure
 * that is absent (no job started) does not meet its SLO. The answer is the cheapest candidate
 * meeting every SLO (ties: the fewer GPUs, then the first in the axes' order). For each SLO the
 * Pareto frontier of cost against the figure's mean is marked (no other candidate is at most as
 * expensive and at most as high, one of them strictly).
 * Output in DIR (besides the sweep's points/ and summary.*):
 *   plan.csv, plan.json       every candidate: axis values, GPUs, energy, cost, each SLO figure's
 *                             mean, half-width and upper bound, whether it meets, frontier flags;
 *                             plan.json also states the search and the answer
 *   plan.html                 the same as a page: the search, the answer, a frontier plot per SLO
 *   mig-parted.yaml           the answer's MIG layouts as a mig-parted config (one config per
 *                             MIG node group, `all-disabled` for the others)
 *   device-plugin-config.yaml the answer's device-plugin configs as one ConfigMap, a key per
 *                             node group (migStrategy, time-slicing or MPS replicas)
 * Ownership: options are borrowed.
 */
#ifndef SIMPROJ_TOOLS_PLAN_RUN_H
#define SIMPROJ_TOOLS_PLAN_RUN_H

#include "tools/sweep_run.h"

/* Run the plan of o->scenario (o->sw is ignored: the plan section gives the candidates). Returns 0
 * (also when no candidate meets the SLOs: the output says so); SIM_EINPUT; SIM_ENOENT / SIM_EIO. */
int plan_run(const sweep_run_opts *o);

#endif
