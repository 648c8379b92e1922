/* tests/fuzz/fuzz_csvseek.c - libFuzzer target: rows read again by their offset
 * (workloads/csvin.h csvin_read_at, trace.h trace_read_at: what workloads/traceload.h does as a
 * run reaches a traced job). The input is the file. Every row is read in order (its offset, hash
 * and fields kept), then again by offset in reverse order, and must give the same fields and
 * hash: a mismatch aborts. Then the file is changed in place (every byte from a point the input
 * picks moved by one, the length kept) and each row is read again, by a fresh reader, with the
 * hash checked (the same row or an error at its line) and without (the row parser's errors on
 * whatever is there now), and through the trace reader (philly columns) the same way. A crash, a
 * sanitizer report, a leak, a hang or a mismatch is a bug. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/diag.h"
#include "sim/err.h"
#include "workloads/csvin.h"
#include "workloads/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ROWS 512

/* A row as read in order: where it starts, its hash and its fields joined by '\x1f'. */
typedef struct row {
    uint64_t off;
    uint32_t hash;
    char *fields;
} row;

/* Every field slot (a missing one reads as empty). */
static char *join(const csvin *r)
{
    size_t n = 1;
    for (size_t i = 0; i < CSVIN_MAX_FIELDS; i++) {
        n += strlen(csvin_field(r, i)) + 1;
    }
    char *s = malloc(n), *p = s;
    for (size_t i = 0; i < CSVIN_MAX_FIELDS; i++) {
        size_t k = strlen(csvin_field(r, i));
        memcpy(p, csvin_field(r, i), k);
        p[k] = '\x1f';
        p += k + 1;
    }
    *p = '\0';
    return s;
}

/* The rows of buf (len bytes) in order, into rows; how many. */
static size_t read_rows(char *buf, size_t len, row *rows)
{
    FILE *f = fmemopen(buf, len, "r");
    if (!f) {
        return 0;
    }
    diag *d = diag_create();
    csvin *r = NULL;
    size_t n = 0;
    if (csvin_open(f, "fuzz.csv", true, d, &r) == 0) {
        int rc;
        while (n < MAX_ROWS && (rc = csvin_next(r)) != 0 && rc != SIM_EIO) {
            if (rc == 1) {
                rows[n++] = (row){csvin_row_offset(r), csvin_row_hash(r), join(r)};
            } else if (diag_error_count(d) >= DIAG_MAX_ERRORS) {
                break;
            }
        }
        /* again by offset, last first: the same row */
        for (size_t k = n; k-- > 0;) {
            if (csvin_read_at(r, rows[k].off, rows[k].hash, UINT32_MAX) != 1 ||
                csvin_row_hash(r) != rows[k].hash) {
                abort();
            }
            char *again = join(r);
            if (strcmp(again, rows[k].fields) != 0) {
                abort();
            }
            free(again);
        }
    }
    csvin_close(r);
    diag_destroy(d);
    fclose(f);
    return n;
}

/* Each row of rows read again from buf, changed since, by a fresh reader: with its hash checked
 * (mask) and through the trace reader. Nothing to check but that it does not crash. */
static void read_changed(char *buf, size_t len, const row *rows, size_t n, uint32_t mask)
{
    FILE *f = fmemopen(buf, len, "r");
    if (!f) {
        return;
    }
    diag *d = diag_create();
    csvin *r = NULL;
    if (csvin_open(f, "fuzz.csv", false, d, &r) == 0) {
        for (size_t k = 0; k < n && diag_error_count(d) < DIAG_MAX_ERRORS; k++) {
            if (csvin_read_at(r, rows[k].off, rows[k].hash, mask) == 1) {
                uint64_t v;
                csvin_u64(r, 1, 0, 100, &v);
            }
        }
    }
    csvin_close(r);
    rewind(f);
    trace_src src = {.format = TRACE_PHILLY, .file = "fuzz.csv", .need_times = true};
    src.columns = trace_preset(TRACE_PHILLY);
    trace_reader *t = NULL;
    if (trace_open(&src, f, d, &t) == 0 && trace_seekable(t)) {
        trace_record rec;
        for (size_t k = 0; k < n && diag_error_count(d) < DIAG_MAX_ERRORS; k++) {
            trace_read_at(t, rows[k].off, rows[k].hash, mask, &rec);
        }
    }
    trace_close(t);
    diag_destroy(d);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) {
        return 0;
    }
    size_t len = size - 1;
    char *buf = malloc(len);
    memcpy(buf, data + 1, len);
    row *rows = calloc(MAX_ROWS, sizeof *rows);
    size_t n = read_rows(buf, len, rows);
    size_t from = data[0] * len / 256; /* the change: bytes from here on moved by one */
    if (from + 1 < len) {
        char first = buf[from];
        memmove(buf + from, buf + from + 1, len - from - 1);
        buf[len - 1] = first;
    }
    read_changed(buf, len, rows, n, UINT32_MAX);
    read_changed(buf, len, rows, n, 0);
    for (size_t k = 0; k < n; k++) {
        free(rows[k].fields);
    }
    free(rows);
    free(buf);
    return 0;
}
