/* tools/jsonw.h - a streaming JSON writer whose bytes equal cJSON_Print's formatted output.
 *
 * Large outputs (run.json's per-job array at a million jobs) are written value by value to a
 * FILE instead of being built as one cJSON tree and printed into one string (about 3.6 KB of
 * memory per job that way). The layout is cJSON's formatted one, so a document written here is
 * byte-identical to cJSON_Print of the same tree: an object's members each on their own line,
 * indented by one tab per level, `"key":<TAB>value`, separated by ",\n"; arrays inline with ", "
 * between elements; an empty object is "{\n" + indent + "}", an empty array "[]". Strings are
 * escaped as cJSON escapes them (\" \\ \b \f \n \r \t, other bytes below 0x20 as \u00XX, every
 * other byte verbatim). Small subtrees can still be built with cJSON and written in place
 * (jsonw_tree), indented for the level they sit at.
 * Numbers: jsonw_number prints the project's run.json number format (docs/outputs.md):
 * integral values within +-2^53 as integers (-0 as 0), others with %.17g; NaN/Inf are a bug
 * (SIM_ASSERT). jsonw_format_number gives the same text for cJSON raw items (tools/out.h).
 * Misuse (a value in an object without a key, unbalanced ends, nesting deeper than
 * JSONW_MAX_DEPTH) is a bug and caught by SIM_ASSERT. Output is gathered in the writer's buffer
 * (tools/bufw.h) and handed to the FILE in large pieces; jsonw_finish hands over the rest and
 * reports write errors.
 * Ownership: the writer borrows the FILE for its life and allocates nothing that outlives a
 * call. Units: none.
 */
#ifndef SIMPROJ_TOOLS_JSONW_H
#define SIMPROJ_TOOLS_JSONW_H

#include "tools/bufw.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSONW_MAX_DEPTH 32
/* Buffer size for jsonw_format_number: "%.17g" of any double fits with room to spare. */
#define JSONW_NUM_LEN 40

typedef struct jsonw {
    bufw out;                        /* output not yet handed to the FILE (borrowed) */
    unsigned depth;                  /* containers open */
    bool is_object[JSONW_MAX_DEPTH]; /* kind of each open container */
    bool has_items[JSONW_MAX_DEPTH]; /* it has a member/element already */
    bool key_written;                /* in an object: a key is waiting for its value */
} jsonw;

/* Start a document on f (borrowed). */
void jsonw_init(jsonw *w, FILE *f);

void jsonw_object_begin(jsonw *w);
void jsonw_object_end(jsonw *w);
void jsonw_array_begin(jsonw *w);
void jsonw_array_end(jsonw *w);
/* The next member's name; only inside an object, and followed by exactly one value. */
void jsonw_key(jsonw *w, const char *key);

void jsonw_number(jsonw *w, double v);
/* An unsigned 64-bit integer, exactly (no rounding through a double). */
void jsonw_u64(jsonw *w, uint64_t v);
/* A string value; NULL is written as null. */
void jsonw_string(jsonw *w, const char *s);
void jsonw_null(jsonw *w);
void jsonw_bool(jsonw *w, bool v);
/* A subtree built with cJSON (borrowed), printed by cJSON and indented for this level.
 * Returns 0, or SIM_ENOMEM when cJSON cannot print it. */
int jsonw_tree(jsonw *w, const cJSON *item);

/* A value the caller writes as text in the layout above (indented for jsonw_depth(w) open
 * containers): the separator before it is written here, the caller puts the value's bytes in the
 * returned buffer (borrowed; the writer's state is as after any other value). */
bufw *jsonw_raw_value(jsonw *w);
/* Containers open. */
unsigned jsonw_depth(const jsonw *w);
/* s quoted and escaped as jsonw_string writes it, into b. */
void jsonw_put_quoted(bufw *b, const char *s);
/* JSONW_MAX_DEPTH tabs: the first n of them indent a line n levels, as the writer does. */
extern const char jsonw_tabs[JSONW_MAX_DEPTH + 1];

/* End the document (it must be complete): hand what is buffered to the FILE. 0 when every
 * write succeeded, else SIM_EIO. */
int jsonw_finish(jsonw *w);

/* The number format of jsonw_number into buf (JSONW_NUM_LEN bytes); returns buf. */
char *jsonw_format_number(char *buf, double v);
/* The same text, not terminated; returns its length. */
size_t jsonw_number_text(char *buf, double v);

#endif
