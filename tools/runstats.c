/* tools/runstats.c - headline figures of a finished run (see runstats.h). */
#include "tools/runstats.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim/stats.h"
#include "sim/xalloc.h"
#include "tools/out.h"

static const char *const names[RS_COUNT] = {
    [RS_JOBS] = "jobs",
    [RS_DONE] = "done",
    [RS_FAILED] = "failed",
    [RS_UNFINISHED] = "unfinished",
    [RS_WAIT_MEAN] = "wait_mean_s",
    [RS_WAIT_P95] = "wait_p95_s",
    [RS_JCT_MEAN] = "jct_mean_s",
    [RS_JCT_P95] = "jct_p95_s",
    [RS_SLOWDOWN_MEAN] = "slowdown_mean",
    [RS_UNITS_UTIL] = "units_util",
    [RS_GPUS_BUSY] = "gpus_busy",
    [RS_SMS_BUSY] = "sms_busy",
    [RS_QUEUED_MEAN] = "queued_mean",
    [RS_GPUS] = "gpus",
    [RS_ENERGY_KWH] = "energy_kwh",
    [RS_SVC_P95] = "service_latency_p95_s",
    [RS_SVC_P99] = "service_latency_p99_s",
    [RS_SVC_ATTAINMENT] = "service_attainment",
};

const char *runstats_name(int i)
{
    return names[i];
}

static void set(runstats *o, int i, double v)
{
    o->v[i] = v;
    o->has[i] = true;
}

/* Mean and p95 of x[0..n) into figures mean_i, p95_i (absent when n = 0); x is reordered. */
static void mean_p95(runstats *o, double *x, size_t n, int mean_i, int p95_i)
{
    if (n == 0) {
        return;
    }
    stats_running r = stats_running_make();
    for (size_t i = 0; i < n; i++) {
        stats_running_add(&r, x[i]);
    }
    set(o, mean_i, stats_running_mean(&r));
    stats_quantile_inplace(x, n, 0.5); /* sorts x */
    set(o, p95_i, stats_quantile_sorted(x, n, 0.95));
}

/* Job figures over the jobs of class cls (NULL: all). */
static void job_figures(const world *w, const char *cls, runstats *o)
{
    const job_table *jt = world_jobs(w);
    size_t n = job_table_count(jt), n_wait = 0, n_jct = 0, n_jobs = 0, n_failed = 0, n_open = 0;
    double *wait = xcalloc(n ? n : 1, sizeof *wait, "run figures");
    double *jct = xcalloc(n ? n : 1, sizeof *jct, "run figures");
    stats_running slow = stats_running_make();
    for (job_id k = 0; k < n; k++) {
        const job *j = job_table_get(jt, k);
        if (cls && strcmp(j->spec.class_name, cls) != 0) {
            continue;
        }
        n_jobs++;
        if (j->start >= 0) {
            wait[n_wait++] = sim_time_to_s(job_wait_ns(j));
        }
        if (j->state == JOB_DONE) {
            double t = sim_time_to_s(job_jct_ns(j));
            jct[n_jct++] = t;
            stats_running_add(&slow, t / j->spec.work_s);
        } else if (j->state == JOB_FAILED_OOM || j->state == JOB_FAILED_REQUEST) {
            n_failed++;
        } else {
            n_open++;
        }
    }
    set(o, RS_JOBS, (double)n_jobs);
    set(o, RS_DONE, (double)n_jct);
    set(o, RS_FAILED, (double)n_failed);
    set(o, RS_UNFINISHED, (double)n_open);
    mean_p95(o, wait, n_wait, RS_WAIT_MEAN, RS_WAIT_P95);
    mean_p95(o, jct, n_jct, RS_JCT_MEAN, RS_JCT_P95);
    if (n_jct) {
        set(o, RS_SLOWDOWN_MEAN, stats_running_mean(&slow));
    }
    free(wait);
    free(jct);
}

void runstats_compute(const world *w, runstats *out)
{
    *out = (runstats){0};
    job_figures(w, NULL, out);
    const cluster *c = world_cluster(w);
    world_totals tot = world_get_totals(w);
    uint32_t units = cluster_units_total(c), gpus = cluster_n_gpus(c);
    out_means tm;
    out_time_means(w, &tm);
    set(out, RS_UNITS_UTIL, units ? tm.units / units : 0);
    set(out, RS_GPUS_BUSY, gpus ? tm.gpus / gpus : 0);
    set(out, RS_SMS_BUSY, tot.sms_total ? tm.sms / tot.sms_total : 0);
    set(out, RS_QUEUED_MEAN, tm.queued);
    set(out, RS_GPUS, gpus);
}

void runstats_class(const world *w, const char *class_name, runstats *out)
{
    *out = (runstats){0};
    job_figures(w, class_name, out);
}
