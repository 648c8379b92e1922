/* workloads/csvin.h - streaming CSV input for the trace readers: one line in memory at a time.
 *
 * A reader wraps a FILE (borrowed) and hands out one row at a time, so a trace of any length is
 * read in constant memory (the longest line, capped at CSVIN_MAX_LINE bytes). Fields are split on
 * commas; a field may be double-quoted ("a,b", with "" for a quote); spaces around a field and a
 * trailing CR are dropped (Philly's machine list writes `m0,2, 12GB`). The first line may be a
 * header naming the columns (csvin_column looks a name up, ignoring spaces around it).
 * Errors have the project's one shape, pointing at the field (1-based character column):
 *   FILE:LINE:COL: error: COLUMN: PROBLEM; expected WHAT, got 'VALUE'
 * and every field parser reports through the reader's diag, so a caller only checks results.
 * Rows already read can be read again by their byte offset (csvin_read_at), so a caller may keep
 * 16 bytes a row instead of the row.
 * Ownership: the reader owns its line buffer; field strings are borrowed until the next
 * csvin_next or csvin_close. `name` (the display name in messages) is borrowed and must outlive
 * the diag the errors go to.
 */
#ifndef SIMPROJ_WORKLOADS_CSVIN_H
#define SIMPROJ_WORKLOADS_CSVIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/diag.h"

/* Longest line accepted, bytes; reading ends at a longer one (which may never end: /dev/zero). */
#define CSVIN_MAX_LINE ((size_t)1 << 16)
#define CSVIN_MAX_FIELDS 64 /* most fields in a row */

typedef struct csvin csvin;

/* Start reading f (borrowed; the caller closes it) under display name `name`. With has_header
 * the first line is read at once as the header; an empty file or a bad header line is reported
 * to d and gives SIM_EINPUT. Returns 0 and sets *out (caller owns, csvin_close). */
int csvin_open(FILE *f, const char *name, bool has_header, diag *d, csvin **out);
/* Free the reader (not the FILE); NULL is a no-op. */
void csvin_close(csvin *r);

/* Read the next data row: 1 when a row was read, 0 at the end of the file, SIM_EINPUT when the
 * line is malformed (reported; reading may go on with the next line), SIM_EIO on a read error.
 * Empty lines are skipped. */
int csvin_next(csvin *r);

/* Index of header column `name` (spaces around header names ignored), or -1. */
int csvin_column(const csvin *r, const char *name);
/* Header columns (0 without a header) and their names (borrowed until close). */
size_t csvin_n_columns(const csvin *r);
const char *csvin_column_name(const csvin *r, size_t i);

const char *csvin_field(const csvin *r, size_t i);
/* Line of the current row (1-based); 0 for a row read by csvin_read_at (counted when an error
 * at it needs it). */
int csvin_line(const csvin *r);
src_loc csvin_loc(csvin *r, size_t i);

/* Reading a row again by where it starts, for a caller that keeps rows' offsets rather than
 * their contents (workloads/traceload.h):
 * Whether the file can be read again by offset (fseeko works on it: a file, not a pipe). */
bool csvin_seekable(const csvin *r);
/* Byte offset in the file where the current row's line starts, and a hash of its bytes. */
uint64_t csvin_row_offset(const csvin *r);
uint32_t csvin_row_hash(const csvin *r);
/* Read the row whose line starts at byte off again, as csvin_next read it: 1 when it was read,
 * SIM_EINPUT when it is bad or is not the row it was (its hash & mask differs from
 * hash & mask, or the file ends before it): reported as FILE:LINE:COL (the line counted from
 * the start of the file), SIM_EIO when the file cannot be read there (or is not seekable).
 * Rows come through a cache of 16 blocks of 16 KiB (the reader's memory stays constant);
 * after this, csvin_next may not be called again. */
int csvin_read_at(csvin *r, uint64_t off, uint32_t hash, uint32_t mask);

/* Report an error at field i of the current row, under its column name (the header's, or
 * `column`), as "COLUMN: PROBLEM" + fmt. */
void csvin_error(csvin *r, size_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Report an error at the current row as a whole (FILE:LINE:1: error: MESSAGE). */
void csvin_error_row(csvin *r, const char *msg);

/* Field parsers: parse field i (column name for messages from the header) and check bounds.
 * Each returns true and sets *out, or reports (shape above) and returns false. An empty field
 * is an error unless the parser says otherwise. Never accepts trailing text ("12abc"). */
bool csvin_u64(csvin *r, size_t i, uint64_t lo, uint64_t hi, uint64_t *out);
bool csvin_double(csvin *r, size_t i, double lo, double hi, double *out);
/* "YYYY-MM-DD HH:MM:SS" (or with 'T') in UTC, years 1970 to 2060 -> seconds since
 * 1970-01-01. */
bool csvin_datetime(csvin *r, size_t i, double *out);
/* True when field i is empty, "NaN" or "nan" (a missing value in pandas-written files). */
bool csvin_is_missing(const csvin *r, size_t i);

/* Seconds since 1970-01-01 of a proleptic Gregorian date and time (UTC); pure arithmetic
 * (days-from-civil), no time zone or locale involved. */
double csvin_epoch_s(int64_t year, int month, int day, int hour, int minute, double second);

#endif
