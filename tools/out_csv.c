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

/* One job's placement: units separated by spaces, each NODE/GPU or NODE/GPU/PROFILE@START. */
static void cw_placement(bufw *w, const cluster *c, const job *j)
{
    for (uint32_t u = 0; u < j->n_units; u++) {
        const cluster_device *cd = cluster_device_get(c, j->units[u]);
        const char *node = cluster_node_name(c, cd->node);
        if (u) {
            bufw_c(w, ' ');
        }
        bool quote =
            strpbrk(node, ",\"\n\r") || (cd->profile && strpbrk(cd->profile->name, ",\"\n\r"));
        if (quote) { /* rare: a name that needs quoting, through the general path */
            char unit[160];
            if (cd->profile) {
                snprintf(unit, sizeof unit, "%s/%" PRIu32 "/%s@%d", node,
                         cluster_gpu_get(c, cd->gpu)->index, cd->profile->name, cd->mig_start);
            } else {
                snprintf(unit, sizeof unit, "%s/%" PRIu32, node,
                         cluster_gpu_get(c, cd->gpu)->index);
            }
            cw_text(w, unit);
            continue;
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
}

struct out_jobs_csv_w {
    const world *w;
    sim_time horizon;
    bufw out;
};

out_jobs_csv_w *out_jobs_csv_begin(FILE *f, const world *w)
{
    out_jobs_csv_w *cw = xmalloc(sizeof *cw, "CSV writer"); /* 64 KiB: not on the stack */
    cw->w = w;
    cw->horizon = world_get_totals(w).horizon;
    bufw_init(&cw->out, f);
    static const char head[] =
        "id,class,resource,per_worker,workers,mem_bytes,work_s,submit_s,start_s,end_s,wait_s,"
        "jct_s,outcome,placement,wait_censored,slowdown\n";
    bufw_put(&cw->out, head, sizeof head - 1);
    return cw;
}

void out_jobs_csv_job(out_jobs_csv_w *jw, const job *j, const out_job_text *tx)
{
    bufw *cw = &jw->out;
    bufw_u64(cw, j->id);
    bufw_c(cw, ',');
    cw_text(cw, j->spec.class_name);
    bufw_c(cw, ',');
    cw_text(cw, j->spec.req.resource);
    bufw_c(cw, ',');
    bufw_u64(cw, j->spec.req.per_worker);
    bufw_c(cw, ',');
    bufw_u64(cw, j->spec.req.n_workers);
    bufw_c(cw, ',');
    bufw_u64(cw, j->spec.mem_bytes);
    bufw_c(cw, ',');
    if (tx && tx->n_work) {
        bufw_put(cw, tx->work, tx->n_work);
    } else {
        bufw_g17(cw, j->spec.work_s);
    }
    bufw_c(cw, ',');
    cw_time(cw, j->spec.submit);
    bufw_c(cw, ',');
    cw_time(cw, j->start);
    bufw_c(cw, ',');
    cw_time(cw, j->end);
    bufw_c(cw, ',');
    /* a job never started waits until the horizon at least: its wait is censored there */
    bool censored = j->start < 0 && j->state == JOB_QUEUED;
    cw_time(cw, censored ? jw->horizon - j->spec.submit : job_wait_ns(j));
    bufw_c(cw, ',');
    cw_time(cw, j->state == JOB_DONE ? job_jct_ns(j) : -1);
    bufw_c(cw, ',');
    const char *st = job_state_name(j->state);
    bufw_put(cw, st, strlen(st));
    bufw_c(cw, ',');
    cw_placement(cw, world_cluster(jw->w), j);
    bufw_put(cw, censored ? ",1," : ",0,", 3);
    if (j->state == JOB_DONE) { /* JCT over the solo run time on the unit it asked for */
        bufw_g17(cw, sim_time_to_s(job_jct_ns(j)) / j->spec.work_s);
    }
    bufw_c(cw, '\n');
}

int out_jobs_csv_end(out_jobs_csv_w *cw)
{
    int rc = bufw_flush(&cw->out);
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

int out_timeseries_csv(FILE *f, const world *w, sim_time interval_ns)
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
    size_t n = world_n_samples(w);
    size_t i = 0;
    sim_time t = 0;
    for (;;) {
        if (interval_ns > 0) { /* the last change at or before t */
            while (i + 1 < n && world_sample_get(w, i + 1)->t <= t) {
                i++;
            }
        }
        const world_sample si = *world_sample_get(w, i);
        if (interval_ns <= 0) {
            t = si.t;
        }
        cw_time(cw, t);
        const uint32_t fields[] = {si.queued,     si.running,
                                   si.units_used, cluster_units_total(c),
                                   si.gpus_busy,  cluster_n_gpus(c)};
        for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
            bufw_c(cw, ',');
            bufw_u64(cw, fields[k]);
        }
        if (tot.n_gpus_no_sms) { /* SM counts unknown: empty, not a partial sum */
            bufw_put(cw, ",,", 2);
        } else {
            bufw_c(cw, ',');
            bufw_u64(cw, si.sms_busy);
            bufw_c(cw, ',');
            bufw_u64(cw, tot.sms_total);
        }
        for (res_id r = 0; r < cluster_n_resources(c); r++) {
            bufw_c(cw, ',');
            bufw_u64(cw, world_sample_res_used(w, i, r));
        }
        bufw_c(cw, '\n');
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
