/* tools/out_csv.c - jobs.csv, timeseries.csv and the text summary (see out.h). */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/stats.h"
#include "sim/xalloc.h"
#include "tools/bufw.h"
#include "tools/out.h"

/* The CSV files are formatted by hand into a bufw (tools/bufw.h; fprintf per field was most of
 * jobs.csv's cost). */

/* Seconds with 9 decimals (exact ns), or empty when t < 0. */
static void cw_time(bufw *w, sim_time t)
{
    if (t >= 0) {
        bufw_fixed9(w, t);
    }
}

/* A field that may contain commas or quotes, quoted as RFC 4180 asks; NULL (a job without a
 * class name) is an empty field. */
static void cw_text(bufw *w, const char *s)
{
    if (!s) {
        return;
    }
    if (!strpbrk(s, ",\"\n\r")) {
        bufw_put(w, s, strlen(s));
        return;
    }
    bufw_c(w, '"');
    for (; *s; s++) {
        if (*s == '"') {
            bufw_c(w, '"');
        }
        bufw_c(w, *s);
    }
    bufw_c(w, '"');
}

/* Flush and free the writer; SIM_EIO when the FILE saw an error. */
static int cw_finish(bufw *w)
{
    int rc = bufw_flush(w);
    free(w);
    return rc;
}

static bufw *cw_create(FILE *f)
{
    bufw *w = xmalloc(sizeof *w, "CSV writer"); /* 64 KiB: not on the stack */
    bufw_init(w, f);
    return w;
}

void out_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') {
            fputc('"', f);
        }
        fputc(*s, f);
    }
    fputc('"', f);
}

/* One unit of a job's placement: NODE/GPU or NODE/GPU/PROFILE@START. */
static void cw_unit(bufw *w, const cluster *c, dev_id d)
{
    const cluster_device *cd = cluster_device_get(c, d);
    const char *node = cluster_node_name(c, cd->node);
    bool quote = strpbrk(node, ",\"\n\r") || (cd->profile && strpbrk(cd->profile->name, ",\"\n\r"));
    if (quote) { /* rare: a name that needs quoting, through the general path */
        char unit[160];
        if (cd->profile) {
            snprintf(unit, sizeof unit, "%s/%" PRIu32 "/%s@%d", node,
                     cluster_gpu_get(c, cd->gpu)->index, cd->profile->name, cd->mig_start);
        } else {
            snprintf(unit, sizeof unit, "%s/%" PRIu32, node, cluster_gpu_get(c, cd->gpu)->index);
        }
        cw_text(w, unit);
        return;
    }
    bufw_put(w, node, strlen(node));
    bufw_c(w, '/');
    bufw_u64(w, cluster_gpu_get(c, cd->gpu)->index);
    if (cd->profile) {
        bufw_c(w, '/');
        bufw_put(w, cd->profile->name, strlen(cd->profile->name));
        bufw_c(w, '@');
        if (cd->mig_start < 0) {
            bufw_c(w, '-');
        }
        bufw_u64(w, (uint64_t)(cd->mig_start < 0 ? -(int64_t)cd->mig_start : cd->mig_start));
    }
}

#define CSV_NAMES 16 /* fields of names kept (direct-mapped by pointer) */
#define CSV_WIDE 64  /* kept texts are copied this many bytes at a time */

/* jobs.csv's writer keeps the text of every device's unit (made on first use: ~20 bytes each,
 * where a job's unit was three lookups far apart in memory and a scan of its names for quotes)
 * and of the names it has seen (class, resource), each padded to be copied CSV_WIDE bytes at a
 * time. Names longer than BUFW_LEN / 16 are written, not kept. */
struct out_jobs_csv_w {
    const world *w;
    sim_time horizon;
    char *arena; /* the devices' units, one after another */
    size_t n_arena, cap_arena;
    struct {
        uint32_t off, len; /* its unit in arena; off UINT32_MAX: not made yet */
    } *dev;                /* per device: one cache line holds both */
    struct {
        const char *s; /* borrowed */
        char *q;       /* the field; owned */
        size_t n;
    } names[CSV_NAMES];
    bufw tmp; /* where kept texts are made (no FILE: never flushed) */
    bufw out;
};

out_jobs_csv_w *out_jobs_csv_begin(FILE *f, const world *w)
{
    out_jobs_csv_w *cw = xcalloc(1, sizeof *cw, "CSV writer"); /* 128 KiB: not on the stack */
    cw->w = w;
    cw->horizon = world_get_totals(w).horizon;
    dev_id n_dev = cluster_n_devices(world_cluster(w));
    cw->dev = xmalloc((n_dev ? n_dev : 1) * sizeof *cw->dev, "jobs.csv units");
    for (dev_id d = 0; d < n_dev; d++) {
        cw->dev[d].off = UINT32_MAX;
    }
    bufw_init(&cw->tmp, NULL);
    bufw_init(&cw->out, f);
    static const char head[] =
        "id,class,resource,per_worker,workers,mem_bytes,work_s,submit_s,start_s,end_s,wait_s,"
        "jct_s,outcome,placement,wait_censored,slowdown\n";
    bufw_put(&cw->out, head, sizeof head - 1);
    return cw;
}

/* n bytes kept at src (CSV_WIDE readable past them) into b. */
static void put_kept(bufw *b, const char *src, size_t n)
{
    char *p = bufw_room(b, n + CSV_WIDE); /* n < BUFW_LEN / 2 */
    for (size_t at = 0; at < n; at += CSV_WIDE) {
        memcpy(p + at, src + at, CSV_WIDE);
    }
    bufw_used(b, n);
}

/* Name s as a field (cw_text), from the kept names by pointer. */
static void csv_name(out_jobs_csv_w *cw, const char *s)
{
    if (!s) {
        return;
    }
    uintptr_t h = (uintptr_t)s;
    h = (h >> 4 ^ h >> 12) % CSV_NAMES;
    if (cw->names[h].s != s || !cw->names[h].q) {
        if (strlen(s) > BUFW_LEN / 16) { /* written, not kept */
            cw_text(&cw->out, s);
            return;
        }
        cw->tmp.n = 0;
        cw_text(&cw->tmp, s);
        free(cw->names[h].q);
        cw->names[h].q = xcalloc(cw->tmp.n + CSV_WIDE, 1, "jobs.csv names");
        memcpy(cw->names[h].q, cw->tmp.buf, cw->tmp.n);
        cw->names[h].n = cw->tmp.n;
        cw->names[h].s = s;
    }
    put_kept(&cw->out, cw->names[h].q, cw->names[h].n);
}

/* Device d's unit, made on first use and kept. */
static void csv_unit(out_jobs_csv_w *cw, dev_id d)
{
    const cluster *c = world_cluster(cw->w);
    if (cw->dev[d].off == UINT32_MAX) {
        const cluster_device *cd = cluster_device_get(c, d);
        if (strlen(cluster_node_name(c, cd->node)) > BUFW_LEN / 16 ||
            (cd->profile && strlen(cd->profile->name) > BUFW_LEN / 16)) {
            cw_unit(&cw->out, c, d); /* names this long: written, not kept */
            return;
        }
        bufw *e = &cw->tmp;
        e->n = 0;
        cw_unit(e, c, d);
        SIM_ASSERT(e->n < BUFW_LEN / 2 && cw->n_arena + e->n < UINT32_MAX);
        if (cw->n_arena + e->n > cw->cap_arena) {
            cw->cap_arena = 2 * (cw->n_arena + e->n);
            cw->arena = xrealloc(cw->arena, cw->cap_arena + CSV_WIDE, "jobs.csv units");
        }
        memcpy(cw->arena + cw->n_arena, e->buf, e->n);
        cw->dev[d].off = (uint32_t)cw->n_arena;
        cw->dev[d].len = (uint32_t)e->n;
        cw->n_arena += e->n;
    }
    put_kept(&cw->out, cw->arena + cw->dev[d].off, cw->dev[d].len);
}

void out_jobs_csv_prefetch(const out_jobs_csv_w *cw, const job *ahead)
{
    if (ahead->n_units) {
        __builtin_prefetch(&cw->dev[ahead->units[0]]);
    }
}

void out_jobs_csv_prefetch_text(const out_jobs_csv_w *cw, const job *ahead)
{
    if (ahead->n_units && cw->dev[ahead->units[0]].off != UINT32_MAX) {
        const char *p = cw->arena + cw->dev[ahead->units[0]].off;
        __builtin_prefetch(p);
        __builtin_prefetch(p + cw->dev[ahead->units[0]].len - 1); /* it may cross a line */
    }
}

/* Seconds with 9 decimals at p, then a comma (nothing when t < 0: an empty field). */
static char *time_at(char *p, sim_time t)
{
    p += t >= 0 ? numfmt_fixed9(p, t) : 0;
    *p++ = ',';
    return p;
}

static char *u64_at(char *p, uint64_t v)
{
    p += numfmt_u64(p, v);
    *p++ = ',';
    return p;
}

void out_jobs_csv_job(out_jobs_csv_w *jw, const job *j, const out_job_text *tx)
{
    bufw *cw = &jw->out;
    char *p0 = bufw_room(cw, NUMFMT_LEN + 1), *p = u64_at(p0, j->id);
    bufw_used(cw, (size_t)(p - p0));
    csv_name(jw, j->spec.class_name);
    bufw_c(cw, ',');
    csv_name(jw, j->spec.req.resource);
    /* per_worker to jct_s: nine numbers, each NUMFMT_LEN at most, and their commas */
    size_t room = 1 + 9 * (NUMFMT_LEN + 1);
    p0 = p = bufw_room(cw, room);
    *p++ = ',';
    p = u64_at(p, j->spec.req.per_worker);
    p = u64_at(p, j->spec.req.n_workers);
    p = u64_at(p, j->spec.mem_bytes);
    if (tx && tx->n_work) {
        memcpy(p, tx->work, tx->n_work);
        p += tx->n_work;
    } else {
        p += numfmt_g17(p, j->spec.work_s);
    }
    *p++ = ',';
    char *submit = p;
    p = time_at(p, j->spec.submit);
    if (j->start == j->spec.submit) { /* started on arrival (most jobs): the same text */
        size_t n = (size_t)(p - submit);
        memmove(p, submit, n);
        p += n;
    } else {
        p = time_at(p, j->start);
    }
    p = time_at(p, j->end);
    /* a job never started waits until the horizon at least: its wait is censored there */
    bool censored = j->start < 0 && j->state == JOB_QUEUED;
    p = time_at(p, censored ? jw->horizon - j->spec.submit : job_wait_ns(j));
    p = time_at(p, j->state == JOB_DONE ? job_jct_ns(j) : -1);
    SIM_ASSERT((size_t)(p - p0) <= room);
    bufw_used(cw, (size_t)(p - p0));
    const char *st = job_state_name(j->state);
    bufw_put(cw, st, strlen(st));
    bufw_c(cw, ',');
    for (uint32_t u = 0; u < j->n_units; u++) {
        if (u) {
            bufw_c(cw, ' ');
        }
        csv_unit(jw, j->units[u]);
    }
    p0 = p = bufw_room(cw, 3 + NUMFMT_LEN + 1);
    memcpy(p, censored ? ",1," : ",0,", 3);
    p += 3;
    if (j->state == JOB_DONE) { /* JCT over the solo run time on the unit it asked for */
        p += numfmt_g17(p, sim_time_to_s(job_jct_ns(j)) / j->spec.work_s);
    }
    *p++ = '\n';
    bufw_used(cw, (size_t)(p - p0));
}

int out_jobs_csv_end(out_jobs_csv_w *cw)
{
    int rc = bufw_flush(&cw->out);
    for (int i = 0; i < CSV_NAMES; i++) {
        free(cw->names[i].q);
    }
    free(cw->arena);
    free(cw->dev);
    free(cw);
    return rc;
}

int out_jobs_csv(FILE *f, const world *w)
{
    const job_table *jt = world_jobs(w);
    out_jobs_csv_w *cw = out_jobs_csv_begin(f, w);
    for (job_id k = 0; k < job_table_count(jt); k++) {
        out_prefetch_job(world_cluster(w), jt, k);
        out_jobs_csv_job(cw, job_table_get(jt, k), NULL);
    }
    return out_jobs_csv_end(cw);
}

/* Samples read a block at a time (world_sample_span) by a reader going forward: sample i and
 * its units per resource, where a lookup per sample and per resource found its block each
 * time. */
typedef struct sample_cursor {
    const world *w;
    size_t base, m; /* s[0..m) are samples base.. */
    const world_sample *s;
    const uint32_t *ru;
} sample_cursor;

static const world_sample *cursor_get(sample_cursor *c, size_t i, const uint32_t **ru)
{
    if (i < c->base || i >= c->base + c->m) {
        c->s = world_sample_span(c->w, i, &c->m, &c->ru);
        c->base = i;
    }
    *ru = c->ru + (i - c->base) * cluster_n_resources(world_cluster(c->w));
    return &c->s[i - c->base];
}

struct out_grid {
    sim_time interval, horizon;
    sim_time t;     /* the next row's time */
    bool done;      /* every row kept (out_grid_finish, or the horizon reached) */
    bool has_prev;  /* prev holds the last sample seen */
    res_id n_res;
    world_sample prev;
    uint32_t *prev_ru;
    size_t n, cap;  /* rows */
    sim_time *at;
    world_sample *s;
    uint32_t *ru;   /* n_res per row */
};

out_grid *out_grid_create(const world *w, sim_time interval_ns)
{
    SIM_ASSERT(interval_ns > 0);
    out_grid *g = xcalloc(1, sizeof *g, "timeseries rows");
    g->interval = interval_ns;
    g->horizon = world_get_totals(w).horizon;
    g->n_res = cluster_n_resources(world_cluster(w));
    g->prev_ru = xcalloc(g->n_res ? g->n_res : 1, sizeof *g->prev_ru, "timeseries rows");
    return g;
}

void out_grid_destroy(out_grid *g)
{
    if (g) {
        free(g->prev_ru);
        free(g->at);
        free(g->s);
        free(g->ru);
        free(g);
    }
}

/* Row g->t is sample s (units ru); the next row's time, as out_timeseries_csv steps. */
static void grid_row(out_grid *g, const world_sample *s, const uint32_t *ru)
{
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 256;
        g->at = xrealloc(g->at, g->cap * sizeof *g->at, "timeseries rows");
        g->s = xrealloc(g->s, g->cap * sizeof *g->s, "timeseries rows");
        g->ru = xrealloc(g->ru, g->cap * (g->n_res ? g->n_res : 1) * sizeof *g->ru,
                         "timeseries rows");
    }
    g->at[g->n] = g->t;
    g->s[g->n] = *s;
    memcpy(g->ru + g->n * g->n_res, ru, g->n_res * sizeof *ru);
    g->n++;
    if (g->t >= g->horizon) {
        g->done = true;
    } else {
        g->t = g->horizon - g->t > g->interval ? g->t + g->interval : g->horizon;
    }
}

/* Row t takes the last sample at or before t: when sample k is past t, sample k - 1 (or the
 * first sample, when every sample is past t). */
void out_grid_span(out_grid *g, const world_sample *s, const uint32_t *ru, size_t n)
{
    for (size_t k = 0; k < n && !g->done; k++) {
        while (!g->done && g->has_prev && s[k].t > g->t) {
            if (k == 0) {
                grid_row(g, &g->prev, g->prev_ru);
            } else {
                grid_row(g, &s[k - 1], ru + (k - 1) * g->n_res);
            }
        }
        g->has_prev = true;
    }
    if (n > 0) {
        g->prev = s[n - 1];
        memcpy(g->prev_ru, ru + (n - 1) * g->n_res, g->n_res * sizeof *ru);
    }
}

void out_grid_finish(out_grid *g)
{
    SIM_ASSERT(g->has_prev);
    while (!g->done) {
        grid_row(g, &g->prev, g->prev_ru);
    }
}

/* timeseries.csv's row of sample si (units ru) at time t. */
static void ts_row(bufw *cw, const cluster *c, const world_totals *tot, sim_time t,
                   const world_sample *si, const uint32_t *ru)
{
    cw_time(cw, t);
    const uint32_t fields[] = {si->queued,     si->running,
                               si->units_used, cluster_units_total(c),
                               si->gpus_busy,  cluster_n_gpus(c)};
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        bufw_c(cw, ',');
        bufw_u64(cw, fields[k]);
    }
    if (tot->n_gpus_no_sms) { /* SM counts unknown: empty, not a partial sum */
        bufw_put(cw, ",,", 2);
    } else {
        bufw_c(cw, ',');
        bufw_u64(cw, si->sms_busy);
        bufw_c(cw, ',');
        bufw_u64(cw, tot->sms_total);
    }
    for (res_id r = 0; r < cluster_n_resources(c); r++) {
        bufw_c(cw, ',');
        bufw_u64(cw, ru[r]);
    }
    bufw_c(cw, '\n');
}

int out_timeseries_csv(FILE *f, const world *w, sim_time interval_ns, const out_grid *g)
{
    const cluster *c = world_cluster(w);
    world_totals tot = world_get_totals(w);
    bufw *cw = cw_create(f);
    static const char head[] =
        "time_s,queued,running,units_used,units_total,gpus_busy,gpus_total,sms_busy,sms_total";
    bufw_put(cw, head, sizeof head - 1);
    for (res_id r = 0; r < cluster_n_resources(c); r++) {
        bufw_c(cw, ',');
        cw_text(cw, cluster_resource_name(c, r));
    }
    bufw_c(cw, '\n');
    if (g && g->done && interval_ns == g->interval) {
        for (size_t k = 0; k < g->n; k++) {
            ts_row(cw, c, &tot, g->at[k], &g->s[k], g->ru + k * g->n_res);
        }
        return cw_finish(cw);
    }
    size_t n = world_n_samples(w);
    size_t i = 0;
    sim_time t = 0;
    sample_cursor cur = {.w = w};
    const uint32_t *ru;
    for (;;) {
        if (interval_ns > 0) { /* the last change at or before t */
            while (i + 1 < n && cursor_get(&cur, i + 1, &ru)->t <= t) {
                i++;
            }
        }
        const world_sample si = *cursor_get(&cur, i, &ru);
        if (interval_ns <= 0) {
            t = si.t;
        }
        ts_row(cw, c, &tot, t, &si, ru);
        if (interval_ns > 0) {
            if (t >= tot.horizon) {
                break;
            }
            t = tot.horizon - t > interval_ns ? t + interval_ns : tot.horizon;
        } else if (++i == n) {
            break;
        }
    }
    return cw_finish(cw);
}

/* A denominator for a fraction of something that may be absent (0 units: 0 %). */
static double at_least_1(uint32_t n)
{
    return n ? (double)n : 1.0;
}

void out_summary(FILE *f, const world *w, const char *out_dir, const out_stats *st)
{
    const cluster *c = world_cluster(w);
    size_t n = job_table_count(world_jobs(w));
    world_totals tot = world_get_totals(w);
    fprintf(f,
            "cluster: %" PRIu32 " nodes, %" PRIu32 " GPUs, %" PRIu32 " devices, %" PRIu32
            " schedulable units\n",
            cluster_n_nodes(c), cluster_n_gpus(c), cluster_n_devices(c), cluster_units_total(c));
    fprintf(f,
            "jobs: %zu: %" PRIu32 " done, %" PRIu32 " failed (OOM), %" PRIu32 " running, %" PRIu32
            " queued, %" PRIu32 " not yet submitted at the end\n",
            n, tot.n_done, tot.n_oom, tot.n_running, tot.n_queued, tot.n_pending);
    if (tot.n_failed_request) {
        fprintf(f,
                "jobs failed (request): %" PRIu32
                ", refused for more than one unit of a shared resource\n",
                tot.n_failed_request);
    }
    if (st->wait.n) {
        fprintf(f, "wait: mean %.1f s, p50 %.1f s, p95 %.1f s\n",
                st->wait.sum / (double)st->wait.n, st->wait.p50, st->wait.p95);
    }
    if (st->jct.n) {
        fprintf(f, "jct:  mean %.1f s, p50 %.1f s, p95 %.1f s\n", st->jct.sum / (double)st->jct.n,
                st->jct.p50, st->jct.p95);
    }
    out_means tm;
    out_time_means(w, &tm);
    fprintf(f, "allocation (time-weighted to the horizon): %.1f%% of units, %.1f%% of GPUs busy, ",
            100 * (tm.units / at_least_1(cluster_units_total(c))),
            100 * (tm.gpus / at_least_1(cluster_n_gpus(c))));
    if (tot.n_gpus_no_sms) {
        fprintf(f, "n/a of SMs (no SM count for %s)\n", tot.no_sms_type);
    } else {
        fprintf(f, "%.1f%% of SMs\n", 100 * (tm.sms / at_least_1(tot.sms_total)));
    }
    out_sched_summary(f, w, st);
    fprintf(f, "simulated %.1f s (last event at %.1f s) in %" PRIu64 " events; outputs in %s/\n",
            sim_time_to_s(tot.horizon), sim_time_to_s(tot.end), tot.n_events, out_dir);
}
