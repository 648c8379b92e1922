/* experiments/yamlx.h - YAML documents for the loaders: load, locate, override.
 *
 * A yamlx_doc wraps one libyaml document (the first and only one of a file or buffer) with its
 * display name, so that every node can be turned into a 1-based src_loc for diagnostics. libyaml
 * marks are 0-based; yamlx_loc_from_mark is the one place that converts them (STYLE.md §4).
 * Syntax errors are reported through diag as `FILE:LINE:COL: error: PROBLEM`.
 *
 * Overrides (`--set path=value`, yamlx_set) edit the tree before a schema walk (experiments/cfg.h)
 * reads it: the value becomes a plain scalar node (or, written as {...} or [...], the YAML flow
 * mapping or sequence it spells), absent keys and mappings on the way are added.
 * Nodes made by an override report their location as the override itself
 * ("--set workload.jobs[0].rate=2/h", no line), so a bad override value names the override.
 *
 * Ownership: the caller owns a yamlx_doc (yamlx_destroy). The display name and the override labels
 * are copied into the arena given at load time, so src_locs stay valid after the document is
 * destroyed, as long as that arena lives. yaml_node_t pointers are borrowed from the document and
 * become invalid after yamlx_destroy, and after any yamlx_set (which may grow the node array):
 * keep node ids (yamlx_node_id) across overrides, not pointers.
 */
#ifndef SIMPROJ_EXPERIMENTS_YAMLX_H
#define SIMPROJ_EXPERIMENTS_YAMLX_H

#include <stddef.h>
#include <yaml.h>

#include "experiments/fileio.h"
#include "sim/arena.h"
#include "sim/diag.h"

typedef struct yamlx_doc yamlx_doc;

/* Largest YAML file yamlx_load_file reads (64 MiB, as every loader); a larger one fails with
 * errno EFBIG. */
#define YAMLX_MAX_FILE_BYTES FILEIO_MAX_BYTES

/* Deepest nesting of mappings and sequences a document may have: deeper documents are refused
 * with `FILE:LINE:COL: error: nesting too deep; ...` before libyaml builds them (its loader takes
 * time quadratic in the depth: 100 000 levels took 34 s). No slicesim file needs more than ~10. */
#define YAMLX_MAX_DEPTH 64

/* Read and parse the YAML file at `path` (display name = path as given).
 * Returns 0 and sets *out (caller owns); SIM_EINPUT after reporting syntax errors to d (*out is
 * NULL); SIM_ENOENT or SIM_EIO when the file cannot be read or is larger than
 * YAMLX_MAX_FILE_BYTES, with errno still holding the cause
 * (nothing is reported to d: the caller prints the environment error and exits 1). */
int yamlx_load_file(const char *path, arena *names, diag *d, yamlx_doc **out);

/* Parse `len` bytes at `buf` (need not be NUL-terminated) under the display name `name`.
 * Returns 0 and sets *out (caller owns) or SIM_EINPUT after reporting errors to d. */
int yamlx_load_buffer(const char *name, const void *buf, size_t len, arena *names, diag *d,
                      yamlx_doc **out);

/* Same for YAML text embedded in a file (a ConfigMap's literal block, experiments/configmap.h):
 * its first line is line `line_off` (0-based) of the file and every line is indented by
 * `col_off` columns there, so that locations (nodes and errors) point into the file. */
int yamlx_load_buffer_at(const char *name, const void *buf, size_t len, int line_off,
                         int col_off, arena *names, diag *d, yamlx_doc **out);

/* Free the document; NULL is a no-op. */
void yamlx_destroy(yamlx_doc *doc);

/* Display name (arena-owned, outlives the document). */
const char *yamlx_name(const yamlx_doc *doc);
/* Root node, or NULL for an empty document. Borrowed (see header note). */
yaml_node_t *yamlx_root(yamlx_doc *doc);
/* Node by libyaml id (1-based), NULL when out of range. Borrowed. */
yaml_node_t *yamlx_node(yamlx_doc *doc, int id);
/* libyaml id of a node of this document. */
int yamlx_node_id(const yamlx_doc *doc, const yaml_node_t *node);
/* Number of nodes in the document (ids are 1..count). */
int yamlx_node_count(const yamlx_doc *doc);

/* The one conversion of a 0-based libyaml mark into a 1-based src_loc. `file` is borrowed. */
src_loc yamlx_loc_from_mark(const char *file, yaml_mark_t mark);
/* Location of a node's start: its file:line:col, or its override label for nodes made by
 * yamlx_set (line 0). NULL node gives {name, 1, 1}. */
src_loc yamlx_loc(const yamlx_doc *doc, const yaml_node_t *node);

/* Scalar text of a node (NUL-terminated, borrowed), or NULL when it is not a scalar. */
const char *yamlx_scalar(const yaml_node_t *node);
/* "a mapping", "a sequence" or "a scalar": for messages. Static storage. */
const char *yamlx_kind(const yaml_node_t *node);
/* Value node of `key` in a mapping node (first match), or NULL (also when not a mapping). */
yaml_node_t *yamlx_map_get(yamlx_doc *doc, const yaml_node_t *map, const char *key);

/* Apply one override `PATH=VALUE` (PATH like `cluster.nodes[1].count`; a mapping key that
 * contains dots, such as `nvidia.com/gpu`, is matched against the keys present). The value
 * becomes a plain scalar; a VALUE opening with '{' or '[' is read as one YAML flow mapping or
 * sequence (`cluster.nodes[0].sharing={timeslice: {replicas: 4}}`, the form `slicesim plan`
 * prints its answer in), whose nodes are added (a value that is not one, or nests deeper than
 * YAMLX_MAX_DEPTH, is refused). Missing keys (and mappings leading to them) are added, so the schema
 * walk later reports an unknown key against the override. Returns 0, or SIM_EINPUT after
 * reporting to d a malformed assignment, an index out of range, or a path through a scalar. */
int yamlx_set(yamlx_doc *doc, const char *assignment, diag *d);
/* Set `path` (as in yamlx_set) to node `value_id` of this document, which may be a mapping or a
 * sequence (a sweep axis's value; experiments/sweep.h): the node is shared, not copied, so the
 * schema walk must reach it only through `path`. Problems are reported at `at` (the axis).
 * Returns 0 or SIM_EINPUT. */
int yamlx_set_node(yamlx_doc *doc, const char *path, int value_id, src_loc at, diag *d);

#endif
