/* model/fit/wmeas.h - what the measurements of a solo run say about a workload profile: the kernels'
 * parallelism P, the memory traffic M and the compute C that NVML GPM and a kernel census give
 * (issue 8, "what a user must measure"). One code path for every fitter that takes them:
 * `slicesim fit-workload` (observations with sm_activity, dram_util, kernel_busy; experiments/
 * obs_fit.c) and `slicesim validate`'s h100-coloc tables (experiments/validation_measured.c).
 *
 * The solo run on the whole GPU (s = the GPU's SMs, alone, exclusive) gives:
 *   t      wall time of one iteration, s
 *   u      NVML utilization.gpu: the share of t in which some kernel runs (model/fit/wfit.h), so the
 *          GPU time per iteration is G = u t
 *   b      kernel-busy share of t from a kernel census (torch.profiler, nsys: the union of the
 *          process's kernel intervals per iteration over t)
 *   a      SM activity: NVML GPM NVML_GPM_METRIC_SM_UTIL / 100 (DCGM DCGM_FI_PROF_SM_ACTIVE),
 *          the share of SM-time with at least one warp resident, over the whole run
 *   d      DRAM utilisation: NVML GPM NVML_GPM_METRIC_DRAM_BW_UTIL / 100 (DCGM
 *          DCGM_FI_PROF_DRAM_ACTIVE), the share of the datasheet bandwidth used over the run
 * and from them
 *   P = clamp(a / b * s, 1, s)      SMs with a resident warp while some kernel runs
 *   M = d * BW_datasheet * t        bytes moved per iteration
 *   C = P * max(f G, G - M / BW(s))   SM-seconds: what the GPU time leaves after the memory
 *                                   time at the bandwidth s SMs drive (model/physics/speed.h); at least
 *                                   the share f = meas_compute_floor of G so that a memory-bound
 *                                   loop keeps some compute
 * and, from t, u and the loop's host_overlap alone, the host time H (wmeas_host_s).
 * These are measured starting values; the fitters give P and M a log-normal prior of log-sd
 * meas_prior_rel_sd around them and fit the rest against the run's time and utilisation.
 * The three numbers (meas_prior_rel_sd, meas_compute_floor, meas_host_floor) are phys_params
 * (model/physics/speed.h), from model/physics/physics.yaml with their sources.
 * Units: seconds, fractions, SMs, bytes, SM-seconds. No I/O, no state; pointers borrowed.
 */
#ifndef SIMPROJ_MODEL_WMEAS_H
#define SIMPROJ_MODEL_WMEAS_H

#include "model/hw/catalog.h"
#include "model/physics/speed.h"

/* provenance of those priors (a string literal, so callers may prefix it) */
#define WMEAS_SOURCE "NVML GPM and kernel census of the solo run (measured)"

/* provenance of a host time from wmeas_host_s */
#define WMEAS_HOST_SOURCE "time and NVML utilisation of the solo run (measured)"

/* What was measured on one solo run on the whole GPU (see the header note). */
typedef struct wmeas_solo {
    double iter_s;      /* t: wall time of one iteration, s (> 0) */
    double gpu_util;    /* u: NVML utilisation, fraction in (0, 1] */
    double kernel_busy; /* b: kernel-busy share of the iteration, fraction in (0, 1] */
    double sm_activity; /* a: GPM SM activity, fraction in (0, 1] */
    double dram_util;   /* d: GPM DRAM utilisation, fraction in (0, 1] */
} wmeas_solo;

/* The profile quantities per iteration that the measurements give. */
typedef struct wmeas_split {
    double max_sms;           /* P, SMs */
    double mem_traffic_bytes; /* M, bytes per iteration */
    double compute_sm_s;      /* C, SM-seconds per iteration at the reference clock */
} wmeas_split;

/* Host time per iteration H (s) that a solo run of t = iter_s seconds at NVML utilisation
 * u = gpu_util in (0, 1] implies for a loop with host_overlap o in [0, 1] (model/physics/speed.h:
 * t = (1 - o) H + max(o H, G), G = u t): H = (1 - u) t / (1 - o) where o H stays below G,
 * else H = t (the host is the bottleneck: o = 1 gives t). At least m->meas_host_floor of t, so
 * that a loop whose GPU never idles keeps a host term to fit. */
double wmeas_host_s(const phys_params *m, double iter_s, double gpu_util, double overlap);

/* Split the solo run s on the whole GPU g (bandwidth curve of model parameters m) into P, M and
 * C as the header note says. Returns 0, or -1 (out untouched) when a measurement is outside its
 * range (t not > 0, or u, b, a, d not in (0, 1]). */
int wmeas_split_solo(const gpu_type *g, const phys_params *m, const wmeas_solo *s,
                     wmeas_split *out);

#endif
