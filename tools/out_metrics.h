/* tools/out_metrics.h - metrics.om: the run as OpenMetrics text with the DCGM exporter's metric
 * names and labels, so that Prometheus back-fills it (`promtool tsdb create-blocks-from
 * openmetrics`) and the dashboards built for dcgm-exporter read a simulated cluster.
 *
 * Families (all gauges, names and HELP texts of dcgm-exporter's default counters):
 *   DCGM_FI_DEV_GPU_UTIL           %, whole / time-sliced / MPS GPUs (not reported under MIG)
 *   DCGM_FI_PROF_GR_ENGINE_ACTIVE  ratio, per GPU and per MIG instance
 *   DCGM_FI_DEV_FB_USED            MiB, per GPU and per MIG instance
 *   DCGM_FI_DEV_FB_FREE            MiB, per GPU and per MIG instance
 *   DCGM_FI_DEV_POWER_USAGE        W, per physical GPU (GPUs whose TDP is unsourced are left out)
 * Labels: gpu (index on the node), device (nvidiaN), modelName ("NVIDIA <catalog name>"),
 * Hostname (node name), and for MIG instances GPU_I_PROFILE and GPU_I_ID (the instance's index on
 * its GPU in the layout's order). No UUID: the simulator has none to give.
 * What the simulation knows and the values mean: a device is busy while a job holds one of its
 * units. Utilisation and GR_ENGINE_ACTIVE are the busy fraction of the interval that ends at the
 * sample (as DCGM averages over its sampling window; the sample at t = 0 is the state then);
 * FB_USED is the memory the jobs hold at the sample (jobs that state none count 0); power is the
 * time average over the interval of idle power (power_idle_frac x TDP) plus the busy SMs' draw
 * at the power model's clock factor (model/power.h), counting busy SMs as fp32 work.
 * Samples: every outputs.sample_interval of simulated time from 0, and one at the end of the
 * observed window (the horizon, as timeseries.csv).
 * Timestamps are seconds from simulated time 0 (= the Unix epoch); when the interval is a whole
 * number of seconds they are printed as integers and the last one is the end rounded up to a
 * whole second (then the file is also valid Prometheus text, which `promtool check metrics`
 * reads), else with millisecond decimals. Within a family, series are contiguous.
 * Memory: O(spans of one GPU) beyond the run's job table (tools/devlog.h).
 * Ownership: borrows everything; writes to f only.
 */
#ifndef SIMPROJ_TOOLS_OUT_METRICS_H
#define SIMPROJ_TOOLS_OUT_METRICS_H

#include <stdio.h>

#include "model/speed.h"
#include "model/world.h"

/* Energy (J) the GPUs draw over [0, horizon] under the same power model as
 * DCGM_FI_DEV_POWER_USAGE (GPUs with an unsourced TDP count 0). */
double out_energy_j(const world *w, const phys_params *phys);
/* Write metrics.om for the finished run w. 0 or SIM_EIO. */
int out_metrics_om(FILE *f, const world *w, const phys_params *phys, sim_time interval_ns);

#endif
