/* tools/out_csv.c - jobs.csv, timeseries.csv and the text summary (see out.h). */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/stats.h"
#include "sim/xalloc.h"
#include "tools/out.h"

/* Seconds with 9 decimals (exact ns), or empty when t < 0. */
static void put_time(FILE *f, sim_time t)
{
    if (t >= 0) {
        fprintf(f, "%" PRId64 ".%09" PRId64, (int64_t)(t / SIM_NS_PER_S),
                (int64_t)(t % SIM_NS_PER_S));
    }
}

/* A field that may contain commas or quotes, quoted as RFC 4180 asks. */
static void put_text(FILE *f, const char *s)
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

void out_csv_field(FILE *f, const char *s)
{
    put_text(f, s);
}

int out_jobs_csv(FILE *f, const world *w)
{
    const cluster *c = world_cluster(w);
    const job_table *jt = world_jobs(w);
    sim_time horizon = world_get_totals(w).horizon;
    fputs("id,class,resource,per_worker,workers,mem_bytes,work_s,submit_s,start_s,end_s,wait_s,"
          "jct_s,outcome,placement,wait_censored,slowdown\n",
          f);
    for (job_id k = 0; k < job_table_count(jt); k++) {
        const job *j = job_table_get(jt, k);
        fprintf(f, "%" PRIu32 ",", j->id);
        put_text(f, j->spec.class_name);
        fputc(',', f);
        put_text(f, j->spec.req.resource);
        fprintf(f, ",%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%.17g,", j->spec.req.per_worker,
                j->spec.req.n_workers, j->spec.mem_bytes, j->spec.work_s);
        put_time(f, j->spec.submit);
        fputc(',', f);
        put_time(f, j->start);
        fputc(',', f);
        put_time(f, j->end);
        fputc(',', f);
        /* a job never started waits until the horizon at least: its wait is censored there */
        bool censored = j->start < 0 && j->state == JOB_QUEUED;
        put_time(f, censored ? horizon - j->spec.submit : job_wait_ns(j));
        fputc(',', f);
        put_time(f, j->state == JOB_DONE ? job_jct_ns(j) : -1);
        fprintf(f, ",%s,", job_state_name(j->state));
        /* placement: units separated by spaces, each NODE/GPU or NODE/GPU/PROFILE@START */
        for (uint32_t u = 0; u < j->n_units; u++) {
            const cluster_device *cd = cluster_device_get(c, j->units[u]);
            char unit[160];
            if (cd->profile) {
                snprintf(unit, sizeof unit, "%s/%" PRIu32 "/%s@%d", cluster_node_name(c, cd->node),
                         cluster_gpu_get(c, cd->gpu)->index, cd->profile->name, cd->mig_start);
            } else {
                snprintf(unit, sizeof unit, "%s/%" PRIu32, cluster_node_name(c, cd->node),
                         cluster_gpu_get(c, cd->gpu)->index);
            }
            if (u) {
                fputc(' ', f);
            }
            put_text(f, unit);
        }
        fprintf(f, ",%d,", censored ? 1 : 0);
        if (j->state == JOB_DONE) { /* JCT over the solo run time on the unit it asked for */
            fprintf(f, "%.17g", sim_time_to_s(job_jct_ns(j)) / j->spec.work_s);
        }
        fputc('\n', f);
    }
    return ferror(f) ? SIM_EIO : 0;
}

int out_timeseries_csv(FILE *f, const world *w, sim_time interval_ns)
{
    const cluster *c = world_cluster(w);
    world_totals tot = world_get_totals(w);
    fputs("time_s,queued,running,units_used,units_total,gpus_busy,gpus_total,sms_busy,sms_total",
          f);
    for (res_id r = 0; r < cluster_n_resources(c); r++) {
        fputc(',', f);
        put_text(f, cluster_resource_name(c, r));
    }
    fputc('\n', f);
    const world_sample *s = world_samples(w);
    size_t n = world_n_samples(w);
    size_t i = 0;
    sim_time t = 0;
    for (;;) {
        if (interval_ns > 0) { /* the last change at or before t */
            while (i + 1 < n && s[i + 1].t <= t) {
                i++;
            }
        } else {
            t = s[i].t;
        }
        put_time(f, t);
        fprintf(f, ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32,
                s[i].queued, s[i].running, s[i].units_used, cluster_units_total(c), s[i].gpus_busy,
                cluster_n_gpus(c));
        if (tot.n_gpus_no_sms) { /* SM counts unknown: empty, not a partial sum */
            fputs(",,", f);
        } else {
            fprintf(f, ",%" PRIu32 ",%" PRIu32, s[i].sms_busy, tot.sms_total);
        }
        for (res_id r = 0; r < cluster_n_resources(c); r++) {
            fprintf(f, ",%" PRIu32, world_sample_res_used(w, i, r));
        }
        fputc('\n', f);
        if (interval_ns > 0) {
            if (t >= tot.horizon) {
                break;
            }
            t = tot.horizon - t > interval_ns ? t + interval_ns : tot.horizon;
        } else if (++i == n) {
            break;
        }
    }
    return ferror(f) ? SIM_EIO : 0;
}

/* A denominator for a fraction of something that may be absent (0 units: 0 %). */
static double at_least_1(uint32_t n)
{
    return n ? (double)n : 1.0;
}

void out_summary(FILE *f, const world *w, const char *out_dir)
{
    const cluster *c = world_cluster(w);
    const job_table *jt = world_jobs(w);
    world_totals tot = world_get_totals(w);
    size_t n = job_table_count(jt);
    double *jct = xcalloc(n ? n : 1, sizeof(double), "summary");
    double *wait = xcalloc(n ? n : 1, sizeof(double), "summary");
    size_t n_jct = 0, n_wait = 0;
    double sum_jct = 0, sum_wait = 0;
    for (job_id k = 0; k < n; k++) {
        const job *j = job_table_get(jt, k);
        if (j->state == JOB_DONE) {
            jct[n_jct] = sim_time_to_s(job_jct_ns(j));
            sum_jct += jct[n_jct++];
        }
        if (j->start >= 0) {
            wait[n_wait] = sim_time_to_s(job_wait_ns(j));
            sum_wait += wait[n_wait++];
        }
    }
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
    if (n_wait) {
        double p50 = stats_quantile_inplace(wait, n_wait, 0.5);
        fprintf(f, "wait: mean %.1f s, p50 %.1f s, p95 %.1f s\n", sum_wait / (double)n_wait, p50,
                stats_quantile_sorted(wait, n_wait, 0.95));
    }
    if (n_jct) {
        double p50 = stats_quantile_inplace(jct, n_jct, 0.5);
        fprintf(f, "jct:  mean %.1f s, p50 %.1f s, p95 %.1f s\n", sum_jct / (double)n_jct, p50,
                stats_quantile_sorted(jct, n_jct, 0.95));
    }
    fprintf(f, "allocation (time-weighted to the horizon): %.1f%% of units, %.1f%% of GPUs busy, ",
            100 * out_time_mean(w, offsetof(world_sample, units_used),
                                at_least_1(cluster_units_total(c))),
            100 *
                out_time_mean(w, offsetof(world_sample, gpus_busy), at_least_1(cluster_n_gpus(c))));
    if (tot.n_gpus_no_sms) {
        fprintf(f, "n/a of SMs (no SM count for %s)\n", tot.no_sms_type);
    } else {
        fprintf(f, "%.1f%% of SMs\n",
                100 *
                    out_time_mean(w, offsetof(world_sample, sms_busy), at_least_1(tot.sms_total)));
    }
    out_sched_summary(f, w);
    fprintf(f, "simulated %.1f s (last event at %.1f s) in %" PRIu64 " events; outputs in %s/\n",
            sim_time_to_s(tot.horizon), sim_time_to_s(tot.end), tot.n_events, out_dir);
    free(jct);
    free(wait);
}
