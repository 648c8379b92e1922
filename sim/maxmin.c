/* sim/maxmin.c - progressive filling (see the header for the problem and its order of
 * arithmetic).
 *
 * A flow's rate slot holds its bound until it freezes, then its rate, so one array serves both.
 * The order of operations is part of the contract: sim/fluid and model/physics/comm produce
 * byte-identical outputs only while the rounds below add and subtract in the same order.
 */
#include "sim/maxmin.h"

#include "sim/xalloc.h"

#include <math.h>
#include <stdlib.h>

/* Relative slack for grouping equal saturation levels into one round. */
#define LEVEL_EPS 1e-12

static inline double dmin(double a, double b)
{
    return a < b ? a : b;
}

static void reserve(maxmin_ws *ws, uint32_t n_res, uint32_t n_flows)
{
    if (n_res > ws->cap_res) {
        ws->cap_res = 2 * (size_t)n_res;
        ws->rem = xrealloc(ws->rem, ws->cap_res * sizeof *ws->rem, "maxmin rem");
        ws->unfrozen = xrealloc(ws->unfrozen, ws->cap_res * sizeof *ws->unfrozen, "maxmin count");
    }
    if (n_flows > ws->cap_flows) {
        ws->cap_flows = 2 * (size_t)n_flows;
        ws->frozen = xrealloc(ws->frozen, ws->cap_flows * sizeof *ws->frozen, "maxmin frozen");
    }
}

/* Freeze flow i at rate x: take its consumption out of its resources. */
static void freeze(const maxmin_problem *p, maxmin_ws *ws, double *rate, uint32_t i, double x)
{
    ws->frozen[i] = 1;
    rate[i] = x;
    for (uint32_t k = p->flow_start[i]; k < p->flow_start[i + 1]; k++) {
        uint32_t j = p->flow_res[k];
        ws->rem[j] -= p->flow_coeff[k] * x;
        ws->unfrozen[j]--;
    }
}

/* Sum of a_ij over j's flows not frozen yet (> 0 when any), in j's incidence order. */
static double unfrozen_coeff(const maxmin_problem *p, const maxmin_ws *ws, uint32_t j)
{
    double w = 0;
    for (uint32_t k = p->res_start[j]; k < p->res_start[j + 1]; k++) {
        if (!ws->frozen[p->res_flow[k]]) {
            w += p->res_coeff[k];
        }
    }
    return w;
}

/* The level at which resource j saturates with its unfrozen flows rising together. */
static double level_of(const maxmin_problem *p, const maxmin_ws *ws, uint32_t j)
{
    return (ws->rem[j] > 0 ? ws->rem[j] : 0) / unfrozen_coeff(p, ws, j);
}

void maxmin_solve(const maxmin_problem *p, maxmin_ws *ws, double *rate)
{
    reserve(ws, p->n_res, p->n_flows);
    for (uint32_t i = 0; i < p->n_flows; i++) {
        rate[i] = p->bound[i];
        ws->frozen[i] = 0;
    }
    for (uint32_t j = 0; j < p->n_res; j++) {
        SIM_ASSERT(isfinite(p->capacity[j]) && p->capacity[j] >= 0);
        ws->rem[j] = p->capacity[j];
        ws->unfrozen[j] = p->res_start[j + 1] - p->res_start[j];
    }
    /* Flows on no resource run at their own bound. */
    uint32_t n_unfrozen = 0;
    for (uint32_t i = 0; i < p->n_flows; i++) {
        if (p->flow_start[i] == p->flow_start[i + 1]) {
            freeze(p, ws, rate, i, rate[i]);
        } else {
            n_unfrozen++;
        }
    }
    while (n_unfrozen > 0) {
        double lam = HUGE_VAL;
        for (uint32_t j = 0; j < p->n_res; j++) {
            if (ws->unfrozen[j] > 0) {
                lam = dmin(lam, level_of(p, ws, j));
            }
        }
        for (uint32_t i = 0; i < p->n_flows; i++) {
            if (!ws->frozen[i]) {
                lam = dmin(lam, rate[i]);
            }
        }
        SIM_ASSERT(isfinite(lam));
        double thr = lam * (1 + LEVEL_EPS);
        /* Flows whose own bound binds at this level take exactly their bound. */
        for (uint32_t i = 0; i < p->n_flows; i++) {
            if (!ws->frozen[i] && rate[i] <= thr) {
                freeze(p, ws, rate, i, rate[i]);
                n_unfrozen--;
            }
        }
        /* Saturated resources freeze their remaining flows at lambda. */
        for (uint32_t j = 0; j < p->n_res; j++) {
            if (ws->unfrozen[j] == 0 || level_of(p, ws, j) > thr) {
                continue;
            }
            for (uint32_t k = p->res_start[j]; k < p->res_start[j + 1] && ws->unfrozen[j] > 0;
                 k++) {
                uint32_t i = p->res_flow[k];
                if (!ws->frozen[i]) {
                    freeze(p, ws, rate, i, dmin(lam, rate[i]));
                    n_unfrozen--;
                }
            }
        }
    }
}

void maxmin_ws_fini(maxmin_ws *ws)
{
    free(ws->rem);
    free(ws->unfrozen);
    free(ws->frozen);
    *ws = (maxmin_ws){0};
}
