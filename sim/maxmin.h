/* sim/maxmin.h - max-min fair rates of flows on capacitated resources (progressive filling).
 *
 * A pure function of its arguments: no engine, no clock, no allocation that outlives the call
 * (only the caller's workspace grows). sim/fluid's flush calls it on the activities a change
 * touched; model/physics/comm calls it on the rings of concurrent collectives. Nothing here knows
 * what a flow or a resource is.
 *
 * Problem: n_flows flows and n_res resources. Flow i uses resource j with a consumption
 * coefficient a_ij > 0 (resource units per unit of the flow's rate: at rate x_i it uses a_ij x_i
 * of j). Resource j has capacity C_j (resource units/s, finite, >= 0), shared: sum_i a_ij x_i
 * <= C_j. Flow i has its own bound b_i (units/s, >= 0; +infinity for none). Rates are the
 * max-min fair allocation by progressive filling (Bertsekas & Gallager, Data Networks, §6.5.2):
 * every unfrozen flow runs at x_i = lambda; lambda rises to the first level where a resource
 * saturates (rem_j / sum of a_ij over its unfrozen flows) or a flow's bound binds; those flows
 * freeze (a bound at b_i, a saturated resource's flows at lambda) and the rest keep rising. A
 * flow on no resource gets its bound. Levels within a relative 1e-12 of the lowest freeze in the
 * same round. Each round freezes at least one flow and recounts each resource's unfrozen
 * coefficient sum (a running difference would cancel badly when coefficients differ by orders of
 * magnitude), so a problem of F flows and U uses costs O(F * U) at worst and in practice
 * O(levels * U).
 *
 * Determinism: the arithmetic follows the order of the arrays (flows by index, resources by index,
 * a resource's flows in the order of its incidence list), so the same problem in the same order
 * gives bit-identical rates.
 *
 * Incidence is given twice, in compressed rows: by flow (flow i's resources are
 * flow_res[flow_start[i] .. flow_start[i+1]), with coefficients flow_coeff[...]) and by resource
 * (resource j's flows are res_flow[res_start[j] .. res_start[j+1]), with res_coeff[...]); both
 * list the same pairs with the same coefficients, each resource at most once per flow.
 * Ownership: every array of maxmin_problem is borrowed for the call; rate[] is the caller's
 * (n_flows doubles, written); the workspace belongs to the caller (zero-initialise it, reuse it
 * across calls, release it with maxmin_ws_fini).
 * Units: the caller's; rates in flow units/s, capacities in resource units/s.
 */
#ifndef SIMPROJ_SIM_MAXMIN_H
#define SIMPROJ_SIM_MAXMIN_H

#include <stddef.h>
#include <stdint.h>

typedef struct maxmin_problem {
    uint32_t n_flows, n_res;
    const double *bound;         /* [n_flows] own bound on each flow's rate (+inf: none) */
    const double *capacity;      /* [n_res] capacity of each resource (finite, >= 0) */
    const uint32_t *flow_start;  /* [n_flows + 1] */
    const uint32_t *flow_res;    /* [flow_start[n_flows]] resource of each use */
    const double *flow_coeff;    /* [flow_start[n_flows]] a_ij of each use (finite, > 0) */
    const uint32_t *res_start;   /* [n_res + 1] */
    const uint32_t *res_flow;    /* [res_start[n_res]] flow of each use, by resource */
    const double *res_coeff;     /* [res_start[n_res]] a_ij of each use, by resource */
} maxmin_problem;

/* Scratch of the solver; zero-initialise ({0}) before first use. */
typedef struct maxmin_ws {
    double *rem;         /* capacity not yet given to frozen flows, per resource */
    uint32_t *unfrozen;  /* unfrozen flows per resource */
    unsigned char *frozen;
    size_t cap_res, cap_flows;
} maxmin_ws;

/* Solve p: rate[i] = flow i's max-min fair rate (units/s; its bound when it uses no resource,
 * which may be +inf). A flow that uses a resource always gets a finite rate. */
void maxmin_solve(const maxmin_problem *p, maxmin_ws *ws, double *rate);

/* Release the workspace's arrays (it may be reused after, as if zeroed). */
void maxmin_ws_fini(maxmin_ws *ws);

#endif
