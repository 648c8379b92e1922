/* tools/spill.c - a job table's spill store over a temporary file (see spill.h). */
#include "tools/spill.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sim/err.h"
#include "sim/xalloc.h"

typedef struct spill_slot {
    off_t off;
    size_t len;
} spill_slot;

struct spill_store {
    FILE *f;
    int fd;
    off_t end;        /* bytes written so far */
    spill_slot *slot; /* per key */
    size_t n_slot;
};

spill_store *spill_create(void)
{
    FILE *f = tmpfile();
    if (!f) {
        return NULL;
    }
    spill_store *s = xcalloc(1, sizeof *s, "spill store");
    s->f = f;
    s->fd = fileno(f);
    return s;
}

void spill_destroy(spill_store *s)
{
    if (!s) {
        return;
    }
    fclose(s->f);
    free(s->slot);
    free(s);
}

/* All n bytes at off, through pwrite or pread (short transfers and EINTR retried). */
static int transfer(int fd, void *buf, size_t n, off_t off, bool write)
{
    char *p = buf;
    while (n > 0) {
        ssize_t k = write ? pwrite(fd, p, n, off) : pread(fd, p, n, off);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            return SIM_EIO;
        }
        p += k;
        n -= (size_t)k;
        off += k;
    }
    return 0;
}

static int put(void *ctx, uint32_t key, const void *buf, size_t n)
{
    spill_store *s = ctx;
    if (key >= s->n_slot) {
        size_t m = 2 * (size_t)key + 16;
        s->slot = xrealloc(s->slot, m * sizeof *s->slot, "spill index");
        for (size_t i = s->n_slot; i < m; i++) {
            s->slot[i] = (spill_slot){-1, 0};
        }
        s->n_slot = m;
    }
    SIM_ASSERT(s->slot[key].off < 0); /* each key once */
    int rc = transfer(s->fd, (void *)buf, n, s->end, true);
    if (rc == 0) {
        s->slot[key] = (spill_slot){s->end, n};
        s->end += (off_t)n;
    }
    return rc;
}

static int get(void *ctx, uint32_t key, void *buf, size_t n)
{
    spill_store *s = ctx;
    if (key >= s->n_slot || s->slot[key].off < 0 || s->slot[key].len != n) {
        return SIM_ENOTFOUND;
    }
    return transfer(s->fd, buf, n, s->slot[key].off, false);
}

const job_spill_ops *spill_ops(void)
{
    static const job_spill_ops ops = {put, get};
    return &ops;
}
