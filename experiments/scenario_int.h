/* experiments/scenario_int.h - internals shared by the scenario loader's files (scenario.c, the
 * core schema; scenario_trace.c, the `trace:` keys of the cluster and the workload). Nothing
 * outside experiments/scenario*.c includes it.
 * Ownership: as scenario.h; everything lands in the loader's arena.
 */
#ifndef SIMPROJ_EXPERIMENTS_SCENARIO_INT_H
#define SIMPROJ_EXPERIMENTS_SCENARIO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "experiments/cfg.h"
#include "experiments/scenario.h"

enum { PATH_LEN = 256, TEXT_LEN = 512 };

#define SHARING_EXPECT "whole, or a mapping with mig and/or one of timeslice, mps"
#define DURATION_EXPECT                                                                            \
    "a duration like 90s, or a mapping with dist: fixed, exponential or lognormal"

/* Load context (cfg_walker.user). */
typedef struct load_ctx {
    scenario_spec *spec;
    unsigned flags;
    diag *d;
    arena *a;
    size_t n_refs, cap_refs;
    scenario_ref *refs; /* xrealloc'd, copied into the arena at the end */
} load_ctx;

/* Record a referenced file (scenario_spec.refs). */
void scenario__add_ref(load_ctx *c, const char *path, const char *what, src_loc at);
/* CFG_CUSTOM parsers of scenario.c: a node group's `sharing`, a `duration`. */
bool scenario__parse_sharing(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                             void *dst);
bool scenario__parse_duration(cfg_walker *w, yaml_node_t *node, const char *path,
                              const cfg_field *f, void *dst);

/* Their writers (cfg_write_fn): the resolved sharing (mig, mode, sharing_file, rename_by_default,
 * fail_requests_greater_than_one, rules; not the YAML shape), a duration as {dist, its keys}
 * (with CFG_OUT_IF_SET: left out when not given). */
void scenario__write_sharing(const cfg_out *o, struct cJSON *parent, const cfg_field *f,
                             const void *src);
void scenario__write_duration(const cfg_out *o, struct cJSON *parent, const cfg_field *f,
                              const void *src);

/* Schema tables of scenario_trace.c for `cluster.trace` and `workload.trace`. */
extern const cfg_field scenario__cluster_trace_fields[];
extern const cfg_field scenario__workload_trace_fields[];

/* After the walk: check the trace keys against each other, read the node list of cluster.trace
 * into node groups (appended to spec->cluster.groups), and open the workload trace to check its
 * header and first rows. Files are not opened under SCENARIO_NO_FILES. */
void scenario__check_traces(load_ctx *c);

/* Schema of `cluster.snapshot` (scenario_k8s.c), and after the walk: read the snapshot into node
 * groups and job classes appended to the spec's (not under SCENARIO_NO_FILES). */
extern const cfg_field scenario__snapshot_fields[];
void scenario__add_snapshot(load_ctx *c);

#endif
