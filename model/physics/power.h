/* model/physics/power.h - board power cap and SM clock (DESIGN.md §3 "Power and clocks").
 *
 * Busy SMs draw power_sm_w[class] watts each at the reference clock (tensor-core work draws more
 * than CUDA-core work), scaled by f^alpha at clock factor f = clock / reference clock. The board
 * gives the SMs tdp_w * (1 - power_idle_frac). When the demand at f = 1 exceeds that budget the
 * clock drops to f = (budget / demand)^(1/alpha), but not below clock_min_frac. Every busy SM on
 * the GPU draws from the one budget, so concurrent MIG instances slow each other a little (the
 * only interference MIG leaves). A GPU whose TDP is unsourced (0) never throttles. An instance
 * that is idle part of the time (host phases) counts its SMs by power_busy_weight: the cap
 * averages the power over a finite window (m->power_window_s), so a busy phase longer than the
 * window throttles as if always busy.
 * Units: watts, SM counts, seconds; the results are dimensionless (clock factor in (0, 1]).
 * Ownership: pure functions of borrowed inputs; nothing is kept or allocated.
 */
#ifndef SIMPROJ_MODEL_POWER_H
#define SIMPROJ_MODEL_POWER_H

#include "model/hw/catalog.h"
#include "model/physics/speed.h"

/* Clock factor for GPU g when busy_sms[c] SMs run work of class c (all instances on the GPU
 * together). Pointers borrowed. */
double power_clock_factor(const gpu_type *g, const phys_params *m,
                          const double busy_sms[WL_CLASS_COUNT]);

/* Power (W) the SMs would draw at clock factor f, excluding the idle share. */
double power_sm_demand_w(const phys_params *m, const double busy_sms[WL_CLASS_COUNT], double f);

/* Share of its SMs' busy power that a job with a busy phase of busy_s in every period of
 * period_s seconds is charged against the cap, when the cap averages the board power over a
 * window of window_s (m->power_window_s): the peak over time of the window's moving average of
 * the busy indicator, with n = floor(window / period) whole periods in the window,
 *   (n busy + min(busy, window - n period)) / window,
 * which is 1 when the busy phase outlasts the window and tends to busy / period for windows much
 * longer than the period. busy_s >= period_s (never idle) or window_s <= 0 (an instantaneous
 * cap): 1; busy_s <= 0: 0. */
double power_busy_weight(double busy_s, double period_s, double window_s);

/* Board power (W) of GPU g whose SMs are busy_sms[c] on average over a span (class c; the
 * time-average of the SMs kept busy, as DCGM_FI_PROF_SM_ACTIVE x SMs) while peak_sms[c] are busy
 * in its busy phases (what the cap sees when those phases outlast m->power_window_s): the cap's
 * clock factor f = power_clock_factor(peak_sms), the SMs' mean draw D = power_sm_demand_w(
 * busy_sms, f), and the board
 *   P = I + (tdp_w - I) D / (tdp_w (1 - power_idle_frac)),  I = power_board_idle_frac x tdp_w:
 * idle power with no SM busy, the TDP when the SMs take the whole budget, linear in the busy SMs
 * between (the clock model's per-SM watts have the idle share folded in, physics.yaml, so D is
 * mapped onto (I, tdp_w] rather than added to I; the clock factor is unchanged). A GPU whose TDP
 * is unsourced (0): 0. */
double power_board_w(const gpu_type *g, const phys_params *m,
                     const double busy_sms[WL_CLASS_COUNT], const double peak_sms[WL_CLASS_COUNT]);

#endif
