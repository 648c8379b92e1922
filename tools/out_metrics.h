/* tools/out_metrics.h - metrics.om: the run as OpenMetrics text with the DCGM exporter's metric
 * names and labels, so that Prometheus back-fills it (`promtool tsdb create-blocks-from
 * openmetrics`) and the dashboards built for dcgm-exporter read a simulated cluster.
 *
 * Families (all gauges, names and HELP texts of dcgm-exporter's default counters):
 *   DCGM_FI_DEV_GPU_UTIL           %, whole / time-sliced / MPS GPUs (not reported under MIG)
 *   DCGM_FI_PROF_GR_ENGINE_ACTIVE  ratio, per GPU and per MIG instance
 *   DCGM_FI_PROF_SM_ACTIVE         ratio, per GPU and per MIG instance
 *   DCGM_FI_DEV_FB_USED            MiB, per GPU and per MIG instance
 *   DCGM_FI_DEV_FB_FREE            MiB, per GPU and per MIG instance
 *   DCGM_FI_DEV_POWER_USAGE        W, per physical GPU (GPUs whose TDP is unsourced are left out)
 * Labels: gpu (index on the node), device (nvidiaN), modelName ("NVIDIA <catalog name>"),
 * Hostname (node name), and for MIG instances GPU_I_PROFILE and GPU_I_ID (the instance's index on
 * its GPU in the layout's order). No UUID: the simulator has none to give. A device's series
 * (a MIG instance's, or a GPU's with MIG off; not a re-partitioned GPU's GPU-level series) carry
 * container, namespace and pod of the pod that holds it, as dcgm-exporter's Kubernetes pod mapper
 * writes them (internal/pkg/transformation: names "container", "namespace", "pod", after the
 * device's labels): one series per pod holding the device (its shared-GPU mode: each with the
 * device's value), with samples while the pod holds it, then the samples without a pod, without
 * those labels. container = the job class, namespace = the pod's queue or "default", pod =
 * "<class>-<job id>".
 * What the values mean: utilisation, GR_ENGINE_ACTIVE and SM_ACTIVE are the device's activity
 * from the physics (tools/actlog.h) averaged over the interval that ends at the sample (as DCGM
 * averages over its sampling window; the sample at t = 0 is the activity then; a GPU-level
 * series over several instances sums them, at most 1); FB_USED is the memory the jobs hold at
 * the sample (jobs that state none count 0); power is the time average over the interval of the
 * power model's board power (model/physics/power.h power_board_w) driven by the activity: idle power
 * (power_board_idle_frac x TDP) when no SM is busy, plus the SMs each device keeps busy on
 * average (SM_ACTIVE x its SMs), counted as fp32 work, at the clock the cap leaves while its
 * busy phases run (sm / util of its SMs busy then).
 * Samples: every outputs.sample_interval of simulated time from 0, and one at the end of the
 * observed window (the horizon, as timeseries.csv).
 * Timestamps are epoch + simulated time (epoch: outputs.start_time, or the Unix epoch); when the
 * interval and the epoch are whole numbers of seconds they are printed as integers and the last
 * one is the end rounded up to a whole second (then the file is also valid Prometheus text, which
 * `promtool check metrics` reads), else with millisecond decimals. Within a family, series are
 * contiguous.
 * Memory: O(spans of one GPU) beyond the run's job table (tools/devlog.h), and three arrays of
 * the sample count.
 * Ownership: borrows everything; writes to f only.
 */
#ifndef SIMPROJ_TOOLS_OUT_METRICS_H
#define SIMPROJ_TOOLS_OUT_METRICS_H

#include <stdio.h>

#include "model/physics/speed.h"
#include "model/cluster/world.h"
#include "tools/actlog.h"

/* Energy (J) the GPUs draw over [0, horizon] under the same power model and activity as
 * DCGM_FI_DEV_POWER_USAGE (GPUs with an unsourced TDP count 0); act: the run's activity
 * (finished). */
double out_energy_j(const world *w, const phys_params *phys, const actlog *act);
/* Mean board power (W) of the GPUs with a sourced TDP over [0, horizon] of w when they draw
 * energy_j (out_energy_j) in all: each one's time average, averaged over them; 0 without any. */
double out_power_mean_w(const world *w, double energy_j);
/* Write metrics.om for the finished run w whose device activity act recorded (finished,
 * tools/actlog.h); timestamps are epoch_ns (Unix time of simulated time 0, ns) + simulated
 * time. 0 or SIM_EIO. */
int out_metrics_om(FILE *f, const world *w, const phys_params *phys, const actlog *act,
                   sim_time interval_ns, int64_t epoch_ns);

#endif
