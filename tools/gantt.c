/* tools/gantt.c - the rows of report.html's Gantt chart (see gantt.h). */
#include "tools/gantt.h"

#include <stdlib.h>

#include "sim/err.h"
#include "sim/xalloc.h"

static void push_band(gantt *g, size_t *cap, dev_id dev, sim_time from, sim_time to)
{
    if (g->n_bands == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        g->bands = xrealloc(g->bands, *cap * sizeof *g->bands, "gantt bands");
    }
    g->bands[g->n_bands++] = (gantt_band){.row = GANTT_NO_ROW, .dev = dev, .from = from, .to = to};
}

static void push_mark(gantt *g, size_t *cap, sim_time t)
{
    if (g->n_marks == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        g->marks = xrealloc(g->marks, *cap * sizeof *g->marks, "gantt marks");
    }
    g->marks[g->n_marks++] = t;
}

typedef struct caps {
    size_t bands, marks;
} caps;

/* Append GPU gpu's existence intervals (in the order they close) and its layout-change times in
 * (0, end); true when there is at least one such change. */
static bool walk(const cluster *c, const devlog *log, gpu_id gpu, gantt *g, caps *cap)
{
    devlog_layout lay;
    devlog_layout_init(&lay, log, c, gpu);
    devlog_layout_advance(&lay, 0);
    bool was[DEVLOG_MAX_DEVS];
    sim_time open[DEVLOG_MAX_DEVS] = {0};
    for (uint32_t k = 0; k < lay.n_devs; k++) {
        was[k] = lay.on[k];
    }
    bool changed = false;
    for (sim_time t; (t = devlog_layout_next_time(&lay)) < log->end;) {
        devlog_layout_advance(&lay, t);
        bool flip = false;
        for (uint32_t k = 0; k < lay.n_devs; k++) {
            if (lay.on[k] == was[k]) {
                continue;
            }
            if (was[k]) {
                push_band(g, &cap->bands, lay.first_dev + k, open[k], t);
            } else {
                open[k] = t;
            }
            was[k] = lay.on[k];
            flip = true;
        }
        if (flip) {
            push_mark(g, &cap->marks, t);
            changed = true;
        }
    }
    for (uint32_t k = 0; k < lay.n_devs; k++) {
        if (was[k]) {
            push_band(g, &cap->bands, lay.first_dev + k, open[k], log->end);
        }
    }
    return changed;
}

static int cmp_dev_from(const void *pa, const void *pb)
{
    const gantt_band *a = pa, *b = pb;
    if (a->dev != b->dev) {
        return a->dev < b->dev ? -1 : 1;
    }
    return a->from < b->from ? -1 : a->from > b->from;
}

static int cmp_row_from(const void *pa, const void *pb)
{
    const gantt_band *a = pa, *b = pb;
    if (a->row != b->row) {
        return a->row < b->row ? -1 : 1;
    }
    return a->from < b->from ? -1 : a->from > b->from;
}

/* Do two devices' intervals (each sorted, disjoint) overlap? Two empty intervals at one instant
 * (a window of length 0) overlap too, so devices that exist together always get rows apart. */
static bool overlap(const gantt_band *a, size_t na, const gantt_band *b, size_t nb)
{
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        if (a[i].from == b[j].from || (a[i].from < b[j].to && b[j].from < a[i].to)) {
            return true;
        }
        if (a[i].to <= b[j].from) {
            i++;
        } else {
            j++;
        }
    }
    return false;
}

/* A device's intervals within a GPU's bands sorted by (device, time). */
typedef struct dev_ivs {
    dev_id dev;
    size_t first, n;
    uint32_t row;
} dev_ivs;

/* Put the devices of a changed GPU (its bands b[0 .. n), sorted by device then time) on rows from
 * 0: each on the lowest row where it overlaps no device already there, in order of first
 * appearance. Sets each band's row (relative to the lane); returns the rows used. */
static uint32_t pack(gantt_band *b, size_t n)
{
    dev_ivs d[DEVLOG_MAX_DEVS];
    sim_time first[DEVLOG_MAX_DEVS];
    uint32_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        if (nd == 0 || d[nd - 1].dev != b[i].dev) {
            SIM_ASSERT(nd < DEVLOG_MAX_DEVS);
            d[nd] = (dev_ivs){.dev = b[i].dev, .first = i};
            first[nd++] = b[i].from;
        }
        d[nd - 1].n++;
    }
    /* order of first appearance, then device id (insertion sort: at most DEVLOG_MAX_DEVS) */
    uint32_t order[DEVLOG_MAX_DEVS];
    for (uint32_t i = 0; i < nd; i++) {
        uint32_t k = i;
        while (k > 0 && (first[order[k - 1]] > first[i] ||
                         (first[order[k - 1]] == first[i] && d[order[k - 1]].dev > d[i].dev))) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
    uint32_t rows = 0;
    for (uint32_t i = 0; i < nd; i++) {
        dev_ivs *x = &d[order[i]];
        uint32_t r = 0;
        for (;; r++) {
            bool clash = false;
            for (uint32_t k = 0; k < i && !clash; k++) {
                const dev_ivs *y = &d[order[k]];
                clash = y->row == r && overlap(&b[x->first], x->n, &b[y->first], y->n);
            }
            if (!clash) {
                break;
            }
        }
        x->row = r;
        rows = r + 1 > rows ? r + 1 : rows;
        for (size_t k = 0; k < x->n; k++) {
            b[x->first + k].row = r;
        }
    }
    return rows;
}

void gantt_build(const cluster *c, const devlog *log, uint32_t max_rows, gantt *out)
{
    uint32_t n_gpus = cluster_n_gpus(c), n_dev = cluster_n_devices(c);
    *out = (gantt){0};
    out->lanes = xcalloc(n_gpus ? n_gpus : 1, sizeof *out->lanes, "gantt lanes");
    out->dev_row = xcalloc(n_dev ? n_dev : 1, sizeof *out->dev_row, "gantt rows");
    for (dev_id d = 0; d < n_dev; d++) {
        out->dev_row[d] = GANTT_NO_ROW;
    }
    caps cap = {0};
    for (gpu_id g = 0; g < n_gpus; g++) {
        size_t b0 = out->n_bands, m0 = out->n_marks;
        bool changed = walk(c, log, g, out, &cap);
        gantt_band *b = out->bands + b0;
        size_t nb = out->n_bands - b0;
        uint32_t rows = 0;
        if (changed) {
            qsort(b, nb, sizeof *b, cmp_dev_from);
            rows = pack(b, nb);
        } else { /* one row per device it advertises (one interval each), in id order */
            qsort(b, nb, sizeof *b, cmp_dev_from);
            for (size_t i = 0; i < nb; i++) {
                b[i].row = (uint32_t)i;
            }
            rows = (uint32_t)nb;
        }
        if (g > 0 && out->n_rows + rows > max_rows) {
            out->n_bands = b0;
            out->n_marks = m0;
            break;
        }
        for (size_t i = 0; i < nb; i++) {
            b[i].row += out->n_rows;
            out->dev_row[b[i].dev] = b[i].row;
        }
        gantt_lane *l = &out->lanes[out->n_lanes++];
        *l = (gantt_lane){.gpu = g, .first_row = out->n_rows, .n_rows = rows, .changed = changed};
        out->n_rows += rows;
        if (changed) {
            qsort(b, nb, sizeof *b, cmp_row_from);
            l->first_band = b0;
            l->n_bands = nb;
            l->first_mark = m0;
            l->n_marks = out->n_marks - m0;
        } else {
            out->n_bands = b0; /* a fixed layout is drawn without bands */
        }
    }
}

void gantt_fini(gantt *g)
{
    free(g->lanes);
    free(g->dev_row);
    free(g->bands);
    free(g->marks);
    *g = (gantt){0};
}
