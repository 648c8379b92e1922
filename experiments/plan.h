/* experiments/plan.h - the `plan:` section of a scenario: the candidates a capacity plan tries,
 * the SLOs the answer must meet, and what capacity costs.
 *
 *   plan:
 *     replications: 3                  # runs per candidate (seeds as a sweep's)
 *     axes:                            # candidates: as sweep axes (experiments/sweep.h)
 *       - {path: cluster.nodes[0].count, values: [1, 2, 3, 4]}
 *       - {path: cluster.nodes[0].sharing, values: [whole, {mps: {replicas: 4}}]}
 *     slo:                             # at least one; each a limit on a run figure
 *       wait_p95: 15m                  # (tools/runstats.h): wait_mean, wait_p95, jct_mean,
 *       slowdown_mean: 2.0             # jct_p95 (durations), slowdown_mean, failed (jobs);
 *                                      # with services (model/cluster/service.h): latency_p95,
 *                                      # latency_p99 (the worst service's request latency) and
 *                                      # attainment (at least this share served within SLO)
 *     cost:
 *       gpu_hour: 2.50                 # per GPU-hour over the horizon
 *       energy_kwh: 0.20               # per kWh the GPUs draw
 *
 * Ownership: everything lives in the arena given to plan_walk (or plan_load_buffer); the embedded sweep_spec's
 * node ids refer to the scenario file's document (as a sweep's do).
 */
#ifndef SIMPROJ_EXPERIMENTS_PLAN_H
#define SIMPROJ_EXPERIMENTS_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "experiments/sweep.h"
#include "sim/arena.h"
#include "sim/diag.h"

#define PLAN_MAX_SLOS 8

/* One SLO: figure `figure` (a tools/runstats.h name, seconds for times) at most `limit`, or at
 * least it when at_least (attainment). */
typedef struct plan_slo {
    const char *figure; /* e.g. "wait_p95_s"; static storage */
    const char *key;    /* as written, e.g. "wait_p95" */
    double limit;
    src_loc at;
    bool at_least; /* the figure must be >= limit (a share of requests served in time) */
} plan_slo;

typedef struct plan_spec {
    sweep_spec sw; /* the candidates: combinations of the axes, each with its replications */
    size_t n_slos;
    plan_slo slos[PLAN_MAX_SLOS];
    double gpu_hour;   /* cost per GPU-hour, >= 0 */
    double energy_kwh; /* cost per kWh, >= 0 */
    src_loc at;
} plan_spec;

/* Walk the `plan:` mapping `node` of the walker's document (the scenario loader calls this, so
 * `check`, `run` and `plan` refuse the same plan errors, --set overrides of it included) into a
 * new spec in the walker's arena. 0 and *out set, or SIM_EINPUT (errors reported, *out NULL). */
int plan_walk(cfg_walker *w, yaml_node_t *node, plan_spec **out);

/* Read the `plan:` section of the scenario text of `len` bytes at `buf` (display name `name`).
 * Returns 0 and sets *out (NULL when it has no plan section); SIM_EINPUT after reporting problems
 * to d. The commands read it through the scenario loader (scenario_spec.plan); this serves the
 * fuzz target. */
int plan_load_buffer(const char *name, const void *buf, size_t len, arena *a, diag *d,
                     plan_spec **out);

#endif
