/* workloads/tracelive.c - a trace's live instances as a step function (tracelive.h). */
#include "workloads/tracelive.h"

#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/xalloc.h"

typedef struct change {
    double t;
    int delta; /* +1 submission, -1 end */
} change;

static int by_time(const void *a, const void *b)
{
    const change *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

int tracelive_read(trace_reader *r, const char *klass, arena *a, tracelive *out)
{
    *out = (tracelive){0};
    change *ch = NULL;
    size_t n = 0, cap = 0;
    int rc, status = 0;
    trace_record rec;
    while ((rc = trace_next(r, &rec)) != 0) {
        if (rc == SIM_EIO) {
            free(ch);
            return SIM_EIO;
        }
        if (rc != 1) {
            status = SIM_EINPUT;
            continue;
        }
        if (rec.gpus == 0 || rec.submit_s < 0 ||
            (klass && (!rec.klass || strcmp(rec.klass, klass)))) {
            continue;
        }
        if (n + 2 > cap) {
            cap = cap ? 2 * cap : 1024;
            ch = xrealloc(ch, cap * sizeof *ch, "trace instances");
        }
        out->n_records++;
        ch[n++] = (change){rec.submit_s, +1};
        if (rec.duration_s != TRACE_OPEN_S) {
            ch[n++] = (change){rec.submit_s + rec.duration_s, -1};
        }
    }
    out->n_rows = trace_rows(r);
    if (n > 0) {
        qsort(ch, n, sizeof *ch, by_time);
        out->t = arena_calloc(a, n, sizeof *out->t);
        out->level = arena_calloc(a, n, sizeof *out->level);
    }
    long level = 0;
    for (size_t i = 0; i < n;) {
        double t = ch[i].t;
        for (; i < n && ch[i].t == t; i++) {
            level += ch[i].delta;
        }
        out->t[out->n_steps] = t;
        out->level[out->n_steps++] = (double)level;
        out->max_level = (double)level > out->max_level ? (double)level : out->max_level;
    }
    free(ch);
    return status;
}
