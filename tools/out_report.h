/* tools/out_report.h - report.html: one self-contained page about a finished run.
 *
 * Sections (each a <section> with this id; the browser test looks for them):
 *   summary        the scenario (name, seed, horizon, policy, cluster size) and the run's figures
 *                  (tools/runstats.h), then one row per job class
 *   utilisation    activity over simulated time, as metrics.om shows it (tools/actlog.h): GPU
 *                  utilisation and SMs active (mean over the GPUs, % of the cluster), beside
 *                  the units held (allocation, dashed)
 *   queue          jobs queued and running over time
 *   jct-cdf        completion-time CDF of the done jobs, one curve per class
 *   wait-cdf       wait CDF of the jobs that started, one curve per class
 *   gantt          per device (whole GPU, or MIG instance labelled node/GPU/profile: the layout),
 *                  the jobs that held it over time, coloured by class; a GPU whose layout
 *                  changed during the run is one lane (node/GPU) whose rows hold its devices
 *                  over the intervals they existed (named bands, tools/gantt.h), with dashed
 *                  marks at its layout changes; the first GPUs in id order whose rows fit in
 *                  OUT_REPORT_GANTT_ROWS
 *   fragmentation  FGD's fragmentation measure (model/policy/frag.h, Weng et al. ATC '23) over
 *                  the GPUs without MIG: the idle milli-GPU that the run's typical pod shapes
 *                  (95 % of the jobs on those GPUs) cannot use, as % of their capacity. MIG GPUs
 *                  are left out: their free capacity is fixed instances, which the measure's
 *                  milli-GPU model does not describe (the page says so).
 * Time series are sampled on a grid of at most OUT_REPORT_POINTS instants from 0 to the horizon
 * (the state in force at each); CDFs keep at most OUT_REPORT_CDF_POINTS points per class, and at
 * most OUT_REPORT_CLASSES classes are drawn. Plots are gnuplot SVG inlined (tools/plot.h).
 * Memory: the samples and job table the run keeps, the spans of tools/devlog.h, the Gantt rows
 * (tools/gantt.h: O(devices + layout changes)), and per-class arrays of waits and JCTs.
 * Ownership: borrows everything; writes to f only (temporary files in a plot_dir, removed).
 */
#ifndef SIMPROJ_TOOLS_OUT_REPORT_H
#define SIMPROJ_TOOLS_OUT_REPORT_H

#include <stdio.h>

#include "experiments/scenario.h"
#include "model/cluster/world.h"
#include "tools/actlog.h"

#define OUT_REPORT_POINTS 600
#define OUT_REPORT_CDF_POINTS 400
#define OUT_REPORT_CLASSES 10
#define OUT_REPORT_GANTT_ROWS 48

/* Write report.html for the finished run w (its activity: act, finished; the GPUs' energy over
 * [0, horizon]: energy_j, tools/out_metrics.h out_energy_j) of scenario spec under policy
 * `policy`. 0 or SIM_EIO (gnuplot missing or failing: message printed). */
int out_report_html(FILE *f, const world *w, const actlog *act, double energy_j,
                    const scenario_spec *spec, const char *policy);

#endif
