/* model/physics/power.c - clock factor under the board power cap (see power.h). */
#include "model/physics/power.h"

#include <math.h>

double power_sm_demand_w(const phys_params *m, const double busy_sms[WL_CLASS_COUNT], double f)
{
    double w = 0;
    for (int c = 0; c < WL_CLASS_COUNT; c++) {
        w += busy_sms[c] * m->power_sm_w[c];
    }
    return w * pow(f, m->power_alpha);
}

double power_clock_factor(const gpu_type *g, const phys_params *m,
                          const double busy_sms[WL_CLASS_COUNT])
{
    if (!g || g->tdp_w <= 0 || m->power_alpha <= 0) {
        return 1.0;
    }
    double budget_w = g->tdp_w * (1.0 - m->power_idle_frac);
    double demand_w = power_sm_demand_w(m, busy_sms, 1.0);
    if (demand_w <= budget_w || demand_w <= 0) {
        return 1.0;
    }
    /* Dynamic power ~ C V^2 f with V rising with f: P ∝ f^alpha; solve P(f) = budget. */
    double f = pow(budget_w / demand_w, 1.0 / m->power_alpha);
    return f < m->clock_min_frac ? m->clock_min_frac : f;
}

double power_busy_weight(double busy_s, double period_s, double window_s)
{
    if (!(busy_s > 0)) {
        return 0.0;
    }
    if (busy_s >= period_s || !(window_s > 0)) {
        return 1.0;
    }
    double n = floor(window_s / period_s);
    double rest = window_s - n * period_s;
    double u = (n * busy_s + fmin(busy_s, rest)) / window_s;
    return u < 1.0 ? u : 1.0;
}

double power_board_w(const gpu_type *g, const phys_params *m,
                     const double busy_sms[WL_CLASS_COUNT], const double peak_sms[WL_CLASS_COUNT])
{
    if (!g || !(g->tdp_w > 0)) {
        return 0.0;
    }
    double f = power_clock_factor(g, m, peak_sms);
    double budget_w = g->tdp_w * (1.0 - m->power_idle_frac);
    double idle_w = g->tdp_w * m->power_board_idle_frac;
    double d = budget_w > 0 ? power_sm_demand_w(m, busy_sms, f) / budget_w : 0.0;
    return idle_w + (g->tdp_w - idle_w) * d;
}
