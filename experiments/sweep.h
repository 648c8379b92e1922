/* experiments/sweep.h - the `sweep:` section of a scenario: axes over scenario paths and
 * replications, and the points they make.
 *
 *   sweep:
 *     replications: 3                  # runs per combination of axis values (default 1)
 *     axes:
 *       - path: cluster.nodes[2].count # any path --set accepts
 *         values: [1, 2, 4]
 *       - path: cluster.nodes[1].sharing
 *         values: [whole, {mig: {file: mig.yaml, config: all-1g.5gb}}, {timeslice: {replicas: 4}}]
 *
 * A value may be a scalar, a mapping or a sequence: at a point it replaces the node at `path`
 * (yamlx_set_node) and is checked by the scenario's schema there, so an error in a value points at
 * the value's own line in the sweep section. Combinations are the cartesian product of the axes'
 * values, the last axis varying fastest; point p = combination * replications + replication.
 * Seeds: replication 0 runs with the scenario's seed (so a one-replication sweep point is exactly
 * `slicesim run` with those overrides), replication r >= 1 with
 * rng_mix64(seed ^ rng_hash64(SWEEP_STREAM_REPLICATION), r); the same replication uses the same
 * seed at every combination (common random numbers: differences between combinations are not
 * drowned by workload noise).
 * Ownership: everything in a sweep_spec lives in the arena given to sweep_load_buffer (or to the scenario's walker). Node ids
 * refer to the scenario file's YAML document as parsed from the same bytes, so a point is built by
 * loading the file again and applying sweep_apply to that document.
 */
#ifndef SIMPROJ_EXPERIMENTS_SWEEP_H
#define SIMPROJ_EXPERIMENTS_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "experiments/cfg.h"
#include "experiments/yamlx.h"
#include "sim/arena.h"
#include "sim/diag.h"

#define SWEEP_STREAM_REPLICATION "sweep.replication"
#define SWEEP_MAX_AXES 16
#define SWEEP_MAX_POINTS 1000000

typedef struct sweep_axis {
    const char *path;    /* scenario path, e.g. "cluster.nodes[0].count" */
    src_loc at;          /* of the path's value */
    size_t n_values;     /* >= 1 */
    int *value_ids;      /* node id of each value in the scenario file's document */
    const char **labels; /* each value as one-line YAML flow text, for summaries */
} sweep_axis;

typedef struct sweep_spec {
    size_t n_axes;
    sweep_axis *axes;
    uint32_t replications; /* >= 1 */
    size_t n_combos;       /* product of the axes' value counts (1 without axes) */
    size_t n_points;       /* n_combos * replications */
    src_loc at;            /* of the sweep mapping */
} sweep_spec;

/* Read the `sweep:` section of a scenario from `len` bytes at `buf` under the display name
 * `name` (the fuzz target's and the tests' entry; a run reads it through scenario_load). Returns 0
 * and sets *out (NULL when there is no sweep section); SIM_EINPUT after reporting problems to d.
 * The points are not checked here: see sweep_check_points in tools/sweep_run.h. */
int sweep_load_buffer(const char *name, const void *buf, size_t len, arena *a, diag *d,
                      sweep_spec **out);

/* The schema of one `axes:` item (path, values), for sections that embed a sweep (the plan's,
 * experiments/plan.h). */
extern const cfg_field sweep_axis_fields[];
/* After a walk into s (replications, axes) of section `section` ("sweep" or "plan"), check the
 * axes' paths (each once; none inside the sweep: or plan: sections, e.g. sweep.replications,
 * which a point never reads) and count its combinations and points; reports a sweep too large.
 * `before` is d's error count before the walk. 0 or SIM_EINPUT (also when the walk reported
 * errors). */
int sweep_count(sweep_spec *s, const char *section, int before, diag *d);
/* Walk the `sweep:` mapping `node` of the walker's document (the scenario loader calls this, so
 * every command that loads a scenario checks its sweep section, --set overrides of it included)
 * into a new spec in the walker's arena. 0 and *out set, or SIM_EINPUT (errors reported, *out
 * NULL). */
int sweep_walk(cfg_walker *w, yaml_node_t *node, sweep_spec **out);

/* Value index of each axis (idx[n_axes]) at combination c (< n_combos). */
void sweep_combo_values(const sweep_spec *s, size_t combo, size_t *idx);

/* Replace each axis's path in `doc` (the scenario file's document) by its value at combination
 * `combo`. Returns 0 or SIM_EINPUT after reporting to d. */
int sweep_apply(const sweep_spec *s, size_t combo, yamlx_doc *doc, diag *d);

/* One combination as a scenario edit (experiments/scenario.h): pass
 * `(scenario_edit){sweep_combo_edit, &combo}` with `sweep_combo combo = {spec, c}`. */
typedef struct sweep_combo {
    const sweep_spec *sw; /* borrowed */
    size_t combo;
} sweep_combo;
/* scenario_edit callback: sweep_apply of the sweep_combo at ctx. */
int sweep_combo_edit(void *ctx, yamlx_doc *doc, diag *d);

/* Seed of replication r under the scenario seed `master` (see header note). */
uint64_t sweep_seed(uint64_t master, uint32_t r);

#endif
