/* tools/estimate.c - a scenario's cost before it runs (see estimate.h). */
#include "tools/estimate.h"

#include <math.h>
#include <string.h>

#include "experiments/cfg.h"
#include "sim/simtime.h"

/* Sizes per item, measured on the opt build: 200 000 one-GPU jobs on 16 A100s (2 nodes) wrote
 * 415 bytes of run.json and 116 bytes of jobs.csv per job and peaked at 3.5 KiB of memory per
 * job; a timeseries row is 41 bytes with one resource column and grows ~12 bytes per column.
 * Rounded up, so that the estimate errs on the large side. */
#define EST_RUN_JSON_BYTES_PER_JOB 600.0
#define EST_JOBS_CSV_BYTES_PER_JOB 160.0
#define EST_MEMORY_BYTES_PER_JOB 4096.0
#define EST_ROW_BYTES 64.0
#define EST_ROW_BYTES_PER_RESOURCE 16.0
#define EST_RESOURCES_PER_GROUP 3.0 /* resource names a node group may advertise, at most */
/* metrics.om: the default scenario (20 A100s, 44 devices, MIG and time-slicing) wrote 21.9 kB per
 * sample, 1.1 kB per GPU; MIG GPUs carry several devices, so 1.5 KiB per GPU and sample. */
#define EST_METRICS_BYTES_PER_GPU_SAMPLE 1536.0

/* Jobs class j submits before the horizon (expected value for poisson arrivals). */
static double class_jobs(const scenario_spec *s, const scenario_job_class *j)
{
    double span_s = sim_time_to_s(s->horizon_ns - j->start_ns);
    double n = 0;
    if (span_s >= 0) {
        n = j->arrival == SCN_ARRIVAL_POISSON ? j->rate_per_s * span_s
                                              : floor(span_s / sim_time_to_s(j->interval_ns)) + 1;
    }
    return j->count > 0 && (double)j->count < n ? (double)j->count : n;
}

void est_scenario(const scenario_spec *s, double extra_jobs, run_estimate *e)
{
    memset(e, 0, sizeof *e);
    e->top_class = s->workload.n_jobs;
    double top = -1;
    for (size_t i = 0; i < s->workload.n_jobs; i++) {
        double n = class_jobs(s, &s->workload.jobs[i]);
        e->jobs += n;
        if (n > top) {
            top = n;
            e->top_class = i;
        }
    }
    e->jobs += extra_jobs;
    unsigned files = s->outputs.files;
    bool sampled = files & (SCN_OUT_TIMESERIES_CSV | SCN_OUT_METRICS_OM);
    if (sampled && s->outputs.sample_interval_ns > 0) {
        e->timeseries_rows =
            floor((double)s->horizon_ns / (double)s->outputs.sample_interval_ns) + 2;
    }
    double row = EST_ROW_BYTES +
                 EST_ROW_BYTES_PER_RESOURCE * EST_RESOURCES_PER_GROUP * (double)s->cluster.n_groups;
    if (files & SCN_OUT_TIMESERIES_CSV) {
        e->output_bytes += e->timeseries_rows * row;
    }
    if (files & SCN_OUT_METRICS_OM) {
        e->output_bytes += e->timeseries_rows * EST_METRICS_BYTES_PER_GPU_SAMPLE *
                           (double)scenario_gpu_count(s);
    }
    if (files & SCN_OUT_RUN_JSON) {
        e->output_bytes += e->jobs * EST_RUN_JSON_BYTES_PER_JOB;
    }
    if (files & SCN_OUT_JOBS_CSV) {
        e->output_bytes += e->jobs * EST_JOBS_CSV_BYTES_PER_JOB;
    }
    e->memory_bytes = e->jobs * EST_MEMORY_BYTES_PER_JOB;
}

/* Where a job-driven excess is reported: the busiest class's rate or interval (or the class). */
static src_loc class_at(const scenario_spec *s, size_t k, char *path, size_t n, char *got,
                        size_t gn)
{
    const scenario_job_class *j = &s->workload.jobs[k];
    if (j->arrival == SCN_ARRIVAL_POISSON && cfg_present(j->rate_at)) {
        snprintf(path, n, "workload.jobs[%zu].rate", k);
        static const struct {
            const char *unit;
            double s;
        } units[] = {{"s", 1}, {"min", 60}, {"h", 3600}, {"d", 86400}};
        size_t u = 0;
        while (u + 1 < sizeof units / sizeof units[0] && j->rate_per_s * units[u].s < 1) {
            u++;
        }
        snprintf(got, gn, "%g/%s", j->rate_per_s * units[u].s, units[u].unit);
        return j->rate_at;
    }
    if (j->arrival == SCN_ARRIVAL_FIXED && cfg_present(j->interval_at)) {
        snprintf(path, n, "workload.jobs[%zu].interval", k);
        snprintf(got, gn, "%gs", sim_time_to_s(j->interval_ns));
        return j->interval_at;
    }
    snprintf(path, n, "workload.jobs[%zu]", k);
    snprintf(got, gn, "%s", j->name ? j->name : "");
    return j->at;
}

int est_check_limits(const scenario_spec *s, const run_estimate *e, diag *d)
{
    const scenario_limits *l = &s->limits;
    const struct {
        const char *what, *key;
        double est, limit;
    } checks[] = {
        {"jobs", "jobs", e->jobs, (double)l->jobs},
        {"timeseries rows", "timeseries_rows", e->timeseries_rows, (double)l->timeseries_rows},
        {"bytes of output", "output", e->output_bytes, (double)l->output_bytes},
        {"bytes of memory", "memory", e->memory_bytes, (double)l->memory_bytes},
    };
    char over[512];
    size_t used = 0;
    bool jobs_driven = false, any = false;
    over[0] = '\0';
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        if (!(checks[i].est > checks[i].limit)) {
            continue;
        }
        any = true;
        jobs_driven |= i == 0 || i == 3 ||
                       (i == 2 && e->jobs * (EST_RUN_JSON_BYTES_PER_JOB + EST_JOBS_CSV_BYTES_PER_JOB) >
                                      e->output_bytes / 2);
        int k = snprintf(over + used, sizeof over - used, "%sabout %.3g %s (limits.%s %.0f)",
                         used ? ", " : "", checks[i].est, checks[i].what, checks[i].key,
                         checks[i].limit);
        used += k > 0 && (size_t)k < sizeof over - used ? (size_t)k : 0;
    }
    if (!any) {
        return 0;
    }
    /* Report at what drives the excess: the busiest class, or the sampling interval. */
    char path[96], got[64];
    src_loc at;
    if (jobs_driven && e->top_class < s->workload.n_jobs) {
        at = class_at(s, e->top_class, path, sizeof path, got, sizeof got);
    } else {
        snprintf(path, sizeof path, "outputs.sample_interval");
        snprintf(got, sizeof got, "%gs", sim_time_to_s(s->outputs.sample_interval_ns));
        at = cfg_present(s->outputs.sample_interval_at) ? s->outputs.sample_interval_at : s->at;
    }
    diag_error(d, at, path,
               "the run is too large: %s; expected a run within the scenario's limits (raise "
               "them under `limits:` or with --set limits.KEY=VALUE), got '%s'",
               over, got);
    return 1;
}

void est_print(FILE *f, const run_estimate *e)
{
    fprintf(f,
            "estimate: about %.0f jobs, %.0f timeseries rows, %.3g MB of output, %.3g MB of "
            "memory\n",
            e->jobs, e->timeseries_rows, e->output_bytes / 1e6, e->memory_bytes / 1e6);
}
