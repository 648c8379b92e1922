/* experiments/cfg.h - declarative schemas for YAML inputs, and the one walker that applies them.
 *
 * A schema is one static table of cfg_field per YAML mapping (STYLE.md §4): key, type, required
 * flag, bounds, default text and the offsetof of the destination member; nested mappings and
 * sequences point at their own tables; odd shapes get a custom callback. cfg_walk_map() walks a
 * mapping node with a table into a plain struct and reports, through diag, every problem it finds
 * (it keeps going; diag stores up to 20): unknown keys (listing the valid ones), wrong node types,
 * duplicate keys, missing required fields, numbers that are malformed (`12abc`) or out of bounds,
 * unknown or missing units, unknown enum values. Every message has the shape
 *   FILE:LINE:COL: error: FIELD.PATH: PROBLEM; expected WHAT, got 'VALUE'
 * with field paths like `cluster.nodes[2].gpu`.
 *
 * Units after conversion (what lands in the struct):
 *   CFG_BYTES     uint64_t bytes     `80GiB`, `40GB`, `512MiB`, `1.5TB`, `4096B`
 *   CFG_DURATION  int64_t ns         `250ms`, `90s`, `5m` (= `5min`), `2h`, `1.5d`, `10us`, `7ns`
 *   CFG_SECONDS   double seconds     same syntax as CFG_DURATION
 *   CFG_RATE      double per second  `2/s`, `30/min` (= `30/m`), `2/h`, `5/d`
 * A unit is always required (a bare `80` is an error), one optional space may precede it.
 * Bounds (`CFG_MIN`, `CFG_MAX`) are doubles in the base unit of the type: bytes, seconds (for both
 * duration types), events per second, or the plain value; for CFG_SEQ they bound the item count.
 * A default (`.dflt`) is text parsed exactly like a YAML value; a field that is absent, optional
 * and without default stays zero (the destination struct must be zeroed, as arena blocks are), and
 * its location (CFG_LOC) stays {NULL,0,0}: use cfg_present(at). (A value set by an override has
 * line 0 but a file: the override's label.)
 *
 * Ownership: strings and arrays produced by the walk are copied into the walker's arena; no
 * pointer into the YAML document survives. Tables are static const and borrowed.
 */
#ifndef SIMPROJ_EXPERIMENTS_CFG_H
#define SIMPROJ_EXPERIMENTS_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "experiments/yamlx.h"
#include "sim/arena.h"
#include "sim/diag.h"

typedef enum cfg_type {
    CFG_STRING,   /* const char * (arena copy); with .names: must be one of them */
    CFG_BOOL,     /* bool: true | false */
    CFG_INT,      /* int */
    CFG_I64,      /* int64_t */
    CFG_U32,      /* uint32_t */
    CFG_U64,      /* uint64_t */
    CFG_DOUBLE,   /* double, finite */
    CFG_BYTES,    /* uint64_t bytes, unit required */
    CFG_DURATION, /* int64_t nanoseconds (sim_time), unit required */
    CFG_SECONDS,  /* double seconds, unit required */
    CFG_RATE,     /* double events per second, `N/unit` */
    CFG_ENUM,     /* int: index into .names */
    CFG_MAP,      /* nested struct at .off, walked with .sub */
    CFG_SEQ,      /* array pointer at .off (arena), size_t count at .count_off; items are
                   * mappings (.sub, .elem_size) or scalars of type .elem (not MAP/SEQ/CUSTOM) */
    CFG_CUSTOM,   /* .parse decides */
    CFG_SELF_LOC, /* pseudo-field (no key): stores the src_loc of the mapping itself at .off */
} cfg_type;

typedef struct cfg_field cfg_field;
typedef struct cfg_walker cfg_walker;
typedef struct cfg_out cfg_out;
struct cJSON;

/* Custom parser for an odd shape. `node` is the value node (never NULL), `path` its field path,
 * `dst` points at the destination member (struct base + f->off). The walker has not marked
 * `node` as walked: the callback passes it to cfg_walk_map/cfg_walk_field (which mark it), or
 * calls cfg_visit itself. Report problems with cfg_error(); return true when accepted. */
typedef bool cfg_parse_fn(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                          void *dst);
/* Custom writer for an odd shape (see "Writing back" below): adds the member(s) field `f` of the
 * struct holds at `src` (struct base + f->off) to the JSON object `parent`; it may add none,
 * one (usually under cfg_out_key) or several. */
typedef void cfg_write_fn(const cfg_out *o, struct cJSON *parent, const cfg_field *f,
                          const void *src);

/* How a field appears when the walked struct is written back (cfg_write_map); flags. */
enum {
    CFG_OUT_IF_SET = 1, /* left out when zero: a NULL string, 0, false, an empty sequence, a
                         * CFG_MAP whose CFG_SELF location is absent (a section not given) */
    CFG_OUT_HIDDEN = 2, /* read, never written (say why beside the entry) */
    CFG_OUT_ONLY = 4,   /* written, never read: a member the loader resolves (not a YAML key; the
                         * walker neither accepts nor lists it) */
};

struct cfg_field {
    const char *key; /* YAML key; NULL ends the table */
    cfg_type type;
    bool required;
    bool has_min, has_max;    /* set through CFG_MIN / CFG_ABOVE / CFG_MAX */
    bool min_open;            /* CFG_ABOVE: the value must exceed min */
    double min, max;          /* bounds in the base unit (see header note) */
    const char *dflt;         /* default text, parsed like YAML input; NULL = none */
    size_t off;               /* offsetof the destination member */
    size_t count_off;         /* CFG_SEQ: offsetof the size_t item count */
    size_t elem_size;         /* CFG_SEQ of mappings: sizeof one item */
    cfg_type elem;            /* CFG_SEQ of scalars: item type */
    const cfg_field *sub;     /* CFG_MAP, CFG_SEQ of mappings: the item's table */
    const char *const *names; /* CFG_ENUM, CFG_STRING one-of: NULL-terminated list */
    cfg_parse_fn *parse;      /* CFG_CUSTOM */
    const char *expect;       /* replaces the generated "expected ..." text */
    bool has_loc;             /* set through CFG_LOC */
    size_t loc_off;           /* offsetof a src_loc member that receives the value's location */
    unsigned out;             /* CFG_OUT_* flags; 0: always written */
    const char *out_key;      /* replaces the generated output key (cfg_out_key) */
    cfg_write_fn *write;      /* CFG_CUSTOM: writes the value back (required unless HIDDEN) */
};

#define CFG_MIN(v) .has_min = true, .min = (v)
#define CFG_ABOVE(v) .has_min = true, .min_open = true, .min = (v)
#define CFG_MAX(v) .has_max = true, .max = (v)
#define CFG_LOC(type, member) .has_loc = true, .loc_off = offsetof(type, member)
/* A sequence of mappings: `items` is `item_type *`, `count` is size_t. */
#define CFG_SEQ_OF(type, items, count, item_type, table)                                           \
    .off = offsetof(type, items), .count_off = offsetof(type, count),                              \
    .elem_size = sizeof(item_type), .sub = (table)
/* The self-location pseudo-field of a table: stores the mapping's location in `member`. */
#define CFG_SELF(type, member)                                                                     \
    {                                                                                              \
        "", CFG_SELF_LOC, .off = offsetof(type, member)                                            \
    }

/* Walk state shared by every call of one load. Fields are public for custom callbacks. */
struct cfg_walker {
    yamlx_doc *doc;      /* borrowed */
    arena *arena;        /* borrowed: receives strings and arrays */
    diag *diag;          /* borrowed */
    void *user;          /* borrowed: context for custom callbacks */
    unsigned char *seen; /* owned: node ids already walked (YAML aliases are refused) */
    int n_seen;
};

/* Whether a location recorded by the walk (CFG_LOC, CFG_SELF) belongs to a value present in the
 * input (in the file or from an override). */
static inline bool cfg_present(src_loc at)
{
    return at.file != NULL;
}

/* Prepare a walker over `doc`; release with cfg_walker_fini. */
void cfg_walker_init(cfg_walker *w, yamlx_doc *doc, arena *a, diag *d, void *user);
void cfg_walker_fini(cfg_walker *w);

/* Walk the document's root, which must be a mapping, with `table` into `dst`.
 * Returns true when no error was reported during this call. */
bool cfg_walk_root(cfg_walker *w, const cfg_field *table, void *dst);
/* cfg_walk_root with a walker of its own over `doc` (user NULL), for a loader that needs
 * nothing else from the walker. `doc` stays the caller's. */
bool cfg_walk_doc(yamlx_doc *doc, arena *a, diag *d, const cfg_field *table, void *dst);
/* Reads one top-level section of a scenario document: node is the section's mapping. */
typedef int cfg_section_fn(cfg_walker *w, yaml_node_t *node, void *out);
/* Walk the top-level section `key` of `doc` with `walk` into `out`, then destroy `doc`.
 * A document without that key leaves `out` untouched and returns 0; otherwise returns what
 * `walk` returns. */
int cfg_load_section(yamlx_doc *doc, arena *a, diag *d, const char *key, cfg_section_fn *walk,
                     void *out);
/* Called by cfg_load_buffer after a walk that reported no error, while the document's strings
 * (in its arena) are alive: checks beyond the schema and copies what the caller keeps out of
 * `dst` into `ctx`, reporting problems to d. */
typedef void cfg_finish_fn(const void *dst, void *ctx, diag *d);

/* The whole load of a small data file: parse `len` bytes of YAML named `name`, walk its root
 * with `table` into `dst` (zeroed by the caller), then call finish(dst, ctx, d) when that
 * reported no error. The document and its arena are freed before it returns, so `dst`'s strings
 * are dead then. Returns 0, or SIM_EINPUT after reporting every problem to d. */
int cfg_load_buffer(const char *name, const void *buf, size_t len, const cfg_field *table,
                    void *dst, cfg_finish_fn *finish, void *ctx, diag *d);
/* Walk mapping `node` at field path `path` ("" for the root) with `table` into `dst`: fields
 * present are parsed, absent ones get their defaults (recursively for CFG_MAP), and absent
 * required ones are reported at the mapping. Returns true when no error was reported during
 * this call. */
bool cfg_walk_map(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *table,
                  void *dst);
/* Parse one value node for field `f` into the struct at `base` (the member at base + f->off).
 * Also records the location when f->has_loc. Returns true when accepted. */
bool cfg_walk_field(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                    void *base);
/* Store every default of `table` (recursing into CFG_MAP) into the zeroed struct `dst`. */
void cfg_apply_defaults(const cfg_field *table, void *dst, arena *a);

/* Report an error at `node` (its location; the document start when NULL) for `path`. */
void cfg_error(cfg_walker *w, const yaml_node_t *node, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Location of a node of the walker's document (see yamlx_loc). */
src_loc cfg_loc(const cfg_walker *w, const yaml_node_t *node);
/* Mark a node as walked; false (and an error reported) when it was walked before, which happens
 * only through a YAML alias. Custom callbacks call it on nodes they descend into. */
bool cfg_visit(cfg_walker *w, yaml_node_t *node, const char *path);

/* The "expected ..." text of a field, bounds included ("an integer from 1 to 64"). */
const char *cfg_expect(const cfg_field *f, char *buf, size_t n);
/* Field path helpers: "parent.key" (or "key" at the root) and "parent[i]". Truncate to n. */
void cfg_path_key(char *buf, size_t n, const char *parent, const char *key);
void cfg_path_index(char *buf, size_t n, const char *parent, size_t i);

/* ---- Writing back ------------------------------------------------------------------------
 *
 * The walked struct is written back as JSON from the same table that read it (run.json's
 * "config", tools/out_json.c), so a field added to a table is written with no second edit.
 * Every field except CFG_SELF_LOC and CFG_OUT_HIDDEN ones is written, in table order, under
 * cfg_out_key: the YAML key with its unit converted and named, DURATION and SECONDS as
 * seconds under KEY_s, RATE per second under KEY_per_s, BYTES under KEY_bytes, others under
 * the key (f->out_key replaces the generated name). Values: STRING as a string (NULL: null),
 * ENUM as its name, BOOL as a boolean, U64 and BYTES as exact integers, other numbers through
 * o->number, MAP as an object of its table, SEQ as an array, CUSTOM through f->write. */
struct cfg_out {
    struct cJSON *(*number)(double v); /* the caller's number format (tools: out_json_number) */
};

/* The output key of field f (f->out_key, or the key with its unit: "horizon" -> "horizon_s")
 * into buf (size n); returns buf. */
const char *cfg_out_key(const cfg_field *f, char *buf, size_t n);
/* A new JSON object holding every field of `table` read from the struct at `src`; caller owns. */
struct cJSON *cfg_write_map(const cfg_out *o, const cfg_field *table, const void *src);
/* Add field f of the struct at `base` to `parent` (nothing when the flags leave it out). */
void cfg_write_field(const cfg_out *o, struct cJSON *parent, const cfg_field *f,
                     const void *base);
/* A string, or null for NULL; caller owns. */
struct cJSON *cfg_out_string(const char *s);
/* An unsigned integer, exact (a seed above 2^53 is not rounded through a double); caller owns. */
struct cJSON *cfg_out_u64(uint64_t v);

/* Pure scalar parsers, shared with command-line parsing. Each returns true and sets *out, or
 * false with a short problem ("not a number", "unknown unit 'GB/s'", "missing unit",
 * "out of range") in `problem` (size n). They never accept trailing text ("12abc"). */
bool cfg_parse_i64(const char *text, int64_t *out, char *problem, size_t n);
bool cfg_parse_u64(const char *text, uint64_t *out, char *problem, size_t n);
bool cfg_parse_double(const char *text, double *out, char *problem, size_t n);
bool cfg_parse_bool(const char *text, bool *out, char *problem, size_t n);
bool cfg_parse_bytes(const char *text, uint64_t *out, char *problem, size_t n);
bool cfg_parse_seconds(const char *text, double *out, char *problem, size_t n);
bool cfg_parse_duration_ns(const char *text, int64_t *out, char *problem, size_t n);
bool cfg_parse_rate(const char *text, double *out, char *problem, size_t n);

#endif
