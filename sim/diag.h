/* sim/diag.h - collected input diagnostics with a fixed message shape.
 *
 * Every bad-input message has exactly this shape (tests compare it byte for byte):
 *   FILE:LINE:COL: error: FIELD.PATH: PROBLEM; expected WHAT, got 'VALUE'
 * diag_error() builds "FILE:LINE:COL: error: FIELD.PATH: " and appends the caller's text.
 * Lines and columns are 1-based; libyaml's 0-based marks are converted in one place
 * (experiments/yamlx.h: yamlx_loc_from_mark), byte offsets into text (cJSON, libyaml reader
 * errors) in another (diag_loc_from_offset). A src_loc with line 0 prints as FILE: only.
 * The collector keeps going after an error and stores at most DIAG_MAX_ERRORS messages; further
 * errors are counted but not stored. Exit status for bad input is 2 (DIAG_EXIT_INPUT).
 * Ownership: diag owns its messages; the file name in a src_loc is borrowed and must outlive
 * the diag.
 */
#ifndef SIMPROJ_SIM_DIAG_H
#define SIMPROJ_SIM_DIAG_H

#include <stddef.h>
#include <stdio.h>

#define DIAG_MAX_ERRORS 20
#define DIAG_EXIT_INPUT 2

typedef struct src_loc {
    const char *file; /* borrowed */
    int line, col;    /* 1-based; 0 = unknown */
} src_loc;

typedef struct diag diag;

/* Location of byte `offset` of the `len` bytes of text at `buf`, for parsers that report an
 * offset (cJSON, libyaml reader errors): 1-based line, and column counted in characters (UTF-8
 * continuation bytes do not count). `file` is borrowed into the result. */
src_loc diag_loc_from_offset(const char *file, const void *buf, size_t len, size_t offset);

/* Create an empty collector; caller owns (diag_destroy). */
diag *diag_create(void);
/* Free the collector and its messages; NULL is a no-op. */
void diag_destroy(diag *d);

/* Record an error at `at` for `field_path` (may be NULL or "" for a whole-file problem). */
void diag_error(diag *d, src_loc at, const char *field_path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Number of errors recorded (including those past the storage cap). */
int diag_error_count(const diag *d);
/* Write every stored message, one per line, then "N more errors not shown" if capped. */
void diag_print(const diag *d, FILE *out);
/* Remove all messages. */
void diag_clear(diag *d);

#endif
