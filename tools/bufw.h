/* tools/bufw.h - the writers' output buffer: text gathered in 64 KiB and handed to a FILE.
 *
 * The large outputs (run.json's jobs, jobs.csv, timeseries.csv) are formatted by hand straight
 * into this buffer (numbers through tools/numfmt.h) instead of one fprintf or fwrite per field;
 * the FILE sees one fwrite per 64 KiB. bufw_room gives a pointer with room for `need` bytes
 * (need <= BUFW_LEN), flushing first when the buffer is too full; the caller writes there and
 * adds what it wrote with bufw_used (the inline helpers below do both).
 * Errors: a failed write sets the FILE's error flag; bufw_flush returns SIM_EIO when it is set.
 * Ownership: the writer borrows the FILE; its memory is the caller's (64 KiB: allocate it, do not
 * put it on the stack). Units: bytes.
 */
#ifndef SIMPROJ_TOOLS_BUFW_H
#define SIMPROJ_TOOLS_BUFW_H

#include "tools/numfmt.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BUFW_LEN 65536 /* bytes gathered before each write to the FILE */

typedef struct bufw {
    FILE *f; /* borrowed */
    size_t n; /* bytes in buf */
    char buf[BUFW_LEN];
} bufw;

/* Start writing to f (borrowed). */
void bufw_init(bufw *w, FILE *f);
/* Hand what is buffered to the FILE; 0, or SIM_EIO when the FILE has seen an error. */
int bufw_flush(bufw *w);
/* n bytes of any length (a long one goes to the FILE directly after what is buffered). */
void bufw_put_long(bufw *w, const void *p, size_t n);

/* Room for need (<= BUFW_LEN) more bytes at the returned pointer. */
static inline char *bufw_room(bufw *w, size_t need)
{
    if (w->n + need > BUFW_LEN) {
        bufw_flush(w);
    }
    return w->buf + w->n;
}

static inline void bufw_used(bufw *w, size_t n)
{
    w->n += n;
}

static inline void bufw_put(bufw *w, const void *p, size_t n)
{
    if (n > BUFW_LEN / 2) {
        bufw_put_long(w, p, n);
        return;
    }
    memcpy(bufw_room(w, n), p, n);
    w->n += n;
}

static inline void bufw_c(bufw *w, char c)
{
    *bufw_room(w, 1) = c;
    w->n++;
}

static inline void bufw_u64(bufw *w, uint64_t v)
{
    w->n += numfmt_u64(bufw_room(w, NUMFMT_LEN), v);
}

static inline void bufw_g17(bufw *w, double v)
{
    w->n += numfmt_g17(bufw_room(w, NUMFMT_LEN), v);
}

/* A count of nanoseconds (>= 0) as seconds with nine decimals. */
static inline void bufw_fixed9(bufw *w, int64_t ns)
{
    w->n += numfmt_fixed9(bufw_room(w, NUMFMT_LEN), ns);
}

#endif
