/* tools/bufw.c - the writers' output buffer (see bufw.h). */
#include "tools/bufw.h"

#include "sim/err.h"

void bufw_init(bufw *w, FILE *f)
{
    w->f = f;
    w->n = 0;
}

int bufw_flush(bufw *w)
{
    if (w->n) {
        fwrite(w->buf, 1, w->n, w->f);
        w->n = 0;
    }
    return ferror(w->f) ? SIM_EIO : 0;
}

void bufw_put_long(bufw *w, const void *p, size_t n)
{
    bufw_flush(w);
    fwrite(p, 1, n, w->f);
}
