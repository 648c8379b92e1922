/* experiments/jsonrd.h - reading a JSON file with positions: FILE:LINE:COL for every value.
 *
 * cJSON keeps no positions. jsonrd_parse parses the text (a syntax error, an embedded NUL or text
 * after the value is reported at its FILE:LINE:COL) and walks the text beside the tree it gave
 * (the same values in the same order), recording where each value starts, so that a reader's
 * error about a value names FILE:LINE:COL as a syntax error does. Readers built on it:
 * experiments/calib_json.c (calibration and model JSON), experiments/k8s_snapshot.c (kubectl).
 * Messages have the diag shape: FILE:LINE:COL: error: PATH: expected WHAT, got 'VALUE'.
 * Ownership: the reader borrows `file`, `d` and the text; jsonrd_fini frees its position table.
 */
#ifndef SIMPROJ_EXPERIMENTS_JSONRD_H
#define SIMPROJ_EXPERIMENTS_JSONRD_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "sim/diag.h"

/* Where a value starts in the text. */
typedef struct jsonrd_pos {
    const cJSON *node;
    size_t off;
} jsonrd_pos;

typedef struct jsonrd {
    const char *file; /* display name, borrowed */
    diag *d;          /* borrowed */
    int errors;       /* errors this reader reported */
    const char *text; /* the file's bytes (borrowed), for error positions */
    size_t len;
    jsonrd_pos *pos; /* every value's offset, sorted by node (owned) */
    size_t n_pos, cap_pos;
} jsonrd;

/* Parse the reader's text (r->text, r->len) and record every value's position. On a syntax
 * error, or text after the JSON value, report FILE:LINE:COL and return NULL. Caller owns the
 * tree (cJSON_Delete). */
cJSON *jsonrd_parse(jsonrd *r);
/* Free the position table (the reader may parse again). */
void jsonrd_fini(jsonrd *r);

/* Where v starts (FILE alone when not known, or when enough errors are stored already). */
src_loc jsonrd_loc(const jsonrd *r, const cJSON *v);
/* v as the file has it, into out: a number as written (1e400 is read as inf), a string quoted
 * (at most 40 characters), others by kind ("an object", "null"); NULL is "nothing". */
void jsonrd_describe(const jsonrd *r, const cJSON *v, char *out, size_t n);
/* Report every key that appears twice in one object with another value (cJSON keeps both and
 * lookups see only the first). `path` names v. A repeat of the same value is accepted. */
void jsonrd_check_duplicates(jsonrd *r, const cJSON *v, const char *path);
/* Report "PATH: expected EXPECT, got 'V'" at v, or, when v is NULL (missing), at `in` (the
 * object that lacks it). Counts the error. */
void jsonrd_bad(jsonrd *r, const char *path, const char *expect, const cJSON *v, const cJSON *in);
/* o.key when o is an object, else NULL. Borrowed from o. */
const cJSON *jsonrd_get(const cJSON *o, const char *key);

#endif
