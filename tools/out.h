/* tools/out.h - the run's output files: staging (all-or-nothing), run.json, run_info.json,
 * jobs.csv and timeseries.csv writers.
 *
 * No half-written outputs: every file is first written as DIR/.NAME.tmp; out_stage_commit
 * renames them all into place only when every write succeeded, and out_stage_abort removes them.
 * Formats (docs/outputs.md): run.json holds only simulated results (no wall clock, no host
 * data) with a stable key order; numbers read back are printed with %.17g (integers as
 * integers), times in seconds; undefined statistics (no jobs) are null, never NaN/Inf.
 * run_info.json holds the wall-clock, host, compiler, flags, git revision and seed.
 * CSV columns are fixed; seconds have 9 decimals (exact nanoseconds).
 * Ownership: an out_stage owns its paths; FILE handles it returns are closed by commit/abort.
 */
#ifndef SIMPROJ_TOOLS_OUT_H
#define SIMPROJ_TOOLS_OUT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "experiments/scenario.h"
#include "model/cluster/fault.h"
#include "model/cluster/fragstat.h"
#include "model/cluster/reconf.h"
#include "model/cluster/service.h"
#include "model/cluster/world.h"
#include "tools/numfmt.h"

#define OUT_SCHEMA_VERSION 1

typedef struct out_stage out_stage;

/* Start staging into directory dir (created, with parents, when missing). Returns NULL and
 * prints "slicesim: DIR: reason" on failure (an environment error). Caller owns.
 * The staged files and the directories the stage creates are registered with tools/cleanup.h
 * until commit or abort: an interrupted run (SIGINT/SIGTERM) leaves none of them behind, and an
 * aborted or failed stage removes the (empty) directories it made. */
out_stage *out_stage_begin(const char *dir);
/* Open DIR/.name.tmp for writing; NULL (message printed) on failure. Owned by the stage. */
FILE *out_stage_open(out_stage *st, const char *name);
/* Close every file, check for write errors, rename them into place. Frees st. Returns 0 or
 * SIM_EIO (message printed, temporary files removed). */
int out_stage_commit(out_stage *st);
/* Close and remove every temporary file; frees st. NULL is a no-op. A file whose write had
 * failed is reported ("slicesim: DIR/NAME: write failed: REASON", errno's text) here as at
 * commit, so a writer that gives up on a full disk leaves a message, not only exit status 1. */
void out_stage_abort(out_stage *st);

/* One run per output directory at a time: an exclusive fcntl(2) record lock on DIR/.lock, taken
 * after the input is validated and before the directory is looked at or written, held until
 * out_lock_release (the kernel drops it when the process ends, however it ends; forked workers
 * do not inherit it). The lock file stays (empty) in the directory: removing it could let two
 * processes lock two different files. */
typedef struct out_lock out_lock;

/* Create DIR (with parents) when missing and lock it. Returns 0 and sets *out (caller owns,
 * out_lock_release); SIM_EIO after printing why: "slicesim WHO: error: output directory 'DIR' is
 * in use by another slicesim (pid N: 'COMMAND', holding DIR/.lock); ..." when another process
 * holds it, or the file and strerror(errno) when the directory or the lock file cannot be made. */
int out_lock_take(const char *dir, const char *who, out_lock **out);
/* Release the lock. With failed, a directory the lock created is removed again (its lock file,
 * then the directories when empty), so a run that wrote nothing leaves nothing. NULL: no-op. */
void out_lock_release(out_lock *l, bool failed);

/* A number for JSON output: integral values within +-2^53 as integers, others with %.17g;
 * NaN/Inf are a bug (SIM_ASSERT); the text of jsonw_number (tools/jsonw.h). Caller owns the
 * item (or adds it to a tree). */
cJSON *out_json_number(double v);
/* A distribution over jobs: count, mean (Welford's, stats_running), plain sum in id order,
 * median, 95th percentile (GSL's quantile, sim/qsel.h: exact) and largest value; 0 when n == 0. */
typedef struct out_dist {
    uint64_t n;
    double mean, sum, p50, p95, max;
} out_dist;

/* One job class's figures (metrics.scheduling.per_class), classes in order of first job. */
typedef struct out_class_stats {
    const char *name; /* borrowed from the job table's specs */
    uint32_t jobs, done, queued, failed, n_wait;
    double wait_sum, jct_sum, slow_sum;
} out_class_stats;

/* Most values of one distribution whose quantiles are selected in memory; a run with more jobs
 * reads its job records once more (or, rarely, up to four times) to select them exactly
 * (sim/qsel.h): at most 8 MiB per distribution instead of 8 bytes per job and a sort. */
#define OUT_QUANTILE_CAP ((size_t)1 << 20)

/* The statistics of the jobs that run.json's metrics (wait_s, jct_s, metrics.scheduling) and the
 * summary give, computed once, from one pass over the jobs in id order (plus the passes of
 * quantiles above OUT_QUANTILE_CAP values): waits of started jobs, JCTs of done jobs, waits with
 * still-queued jobs censored at the horizon, slowdowns (JCT / work_s), per class. */
typedef struct out_stats {
    out_dist wait, jct, wait_queued, slowdown;
    uint32_t n_censored;    /* jobs in wait_queued never started (censored) */
    uint32_t never_started; /* queued at the end, never started */
    uint32_t queued_again;  /* queued at the end after a start (killed, evicted) */
    bool has_shares;        /* some job asks for a share of a GPU (gpu_milli) */
    out_class_stats *classes; /* owned (out_stats_fini) */
    size_t n_classes;
    frag_typical typical;   /* the workload's typical pods (fragstat_typical); owned */
    fragstat_point *curve;  /* the allocation curve (fragstat_acc_finish, step OUT_CURVE_STEP), when
                             * asked for (has_curve); owned */
    size_t n_curve;
    bool has_curve;
} out_stats;

/* Arrived-workload step of the allocation curve (metrics.scheduling.fgd.curve). */
#define OUT_CURVE_STEP 0.05

/* The statistics from the writers' one pass over the jobs: begin (curve: gather the allocation
 * curve too, 64 bytes a job until end), add every job in id order, end (which frees the
 * accumulator). out_stats_compute makes the pass itself. */
typedef struct out_stats_acc out_stats_acc;
out_stats_acc *out_stats_begin(const world *w, out_stats *s, bool curve);
void out_stats_add(out_stats_acc *a, const job *j);
void out_stats_end(out_stats_acc *a);
void out_stats_compute(const world *w, out_stats *s, bool curve);
void out_stats_fini(out_stats *s);

/* {n, mean, p50, p95, max} of d; values null when n == 0. Caller owns. */
cJSON *out_dist_json(const out_dist *d);
/* run.json's metrics.scheduling (tools/out_sched.c): FGD's figures (GPU and milli-GPU allocation,
 * fragmentation under the typical pods, the curve against arrived workload), unscheduled and
 * failed jobs per reason, waits with still-queued jobs (censored at the horizon), slowdown, and
 * per-class and per-node-group breakdowns. Caller owns. */
cJSON *out_sched_json(const world *w, const out_stats *st);
/* The summary's scheduling line (FGD's figures, unscheduled jobs), when the run has fractional
 * pods or ends with jobs still queued. */
void out_sched_summary(FILE *f, const world *w, const out_stats *st);

/* An unsigned 64-bit integer for JSON output, printed exactly (a seed above 2^53 is not rounded
 * through a double). Caller owns the item. */
cJSON *out_json_u64(uint64_t v);

/* The writers walk the jobs in id order and read, for each unit, its device and that device's
 * GPU: three allocations far apart (the unit list, 40 000 devices, 10 000 GPUs at synth-10k-1m),
 * so a cache miss each per job. While job k is written, each loop asks for the unit list of job
 * k + 3 * OUT_PREFETCH_STEP, the first unit's device of job k + 2 * OUT_PREFETCH_STEP (its list
 * asked for a step earlier) and that device's GPU of job k + OUT_PREFETCH_STEP: hints only,
 * nothing written depends on them. */
#define OUT_PREFETCH_STEP 4
static inline void out_prefetch_job(const cluster *c, const job_table *jt, job_id k)
{
    job_id n = (job_id)job_table_count(jt);
    if (k + 3 * OUT_PREFETCH_STEP < n) {
        __builtin_prefetch(job_table_get(jt, k + 3 * OUT_PREFETCH_STEP)->units);
    }
    if (k + 2 * OUT_PREFETCH_STEP < n) {
        const job *j = job_table_get(jt, k + 2 * OUT_PREFETCH_STEP);
        if (j->n_units) {
            __builtin_prefetch(cluster_device_get(c, j->units[0]));
        }
    }
    if (k + OUT_PREFETCH_STEP < n) {
        const job *j = job_table_get(jt, k + OUT_PREFETCH_STEP);
        if (j->n_units) {
            __builtin_prefetch(cluster_gpu_get(c, cluster_device_get(c, j->units[0])->gpu));
        }
    }
}

/* timeseries.csv's rows when its interval is > 0: the state at 0, interval, 2 interval, ... and
 * the horizon, each the last sample at or before that time (the first sample before any), kept
 * as run.json's time-weighted means pass over the samples (out_grid_span, span by span in time
 * order), so that timeseries.csv does not read every sample again: each block of 4 096 read
 * back from the store and unpacked, twice. Memory: a row (a sample and its units) per time. */
typedef struct out_grid out_grid;
out_grid *out_grid_create(const world *w, sim_time interval_ns);
/* The next n samples s[0..n) and their units ru (n_res each), in time order. */
void out_grid_span(out_grid *g, const world_sample *s, const uint32_t *ru, size_t n);
/* After the last sample: the rows to the horizon. */
void out_grid_finish(out_grid *g);
void out_grid_destroy(out_grid *g);

/* What run.json describes besides the world. */
typedef struct out_run_meta {
    uint64_t seed;
    const cJSON *config;        /* resolved scenario, defaults included; borrowed; NULL: null */
    const char *policy;         /* policy name */
    const cJSON *metrics_extra; /* members appended to "metrics" (e.g. faults); borrowed (copied
                                 * in); NULL: none */
    const cJSON *trace;         /* what a workload trace gave (tools/run.c); borrowed (copied
                                 * in); NULL: none */
    const out_stats *stats;     /* the jobs' statistics (out_stats_compute); borrowed */
    out_grid *grid; /* filled by end's pass over the samples (out_grid_span); borrowed; NULL */
} out_run_meta;

/* One CSV field, quoted as RFC 4180 asks when it holds a comma, quote or line break. */
void out_csv_field(FILE *f, const char *s);
/* Write jobs.csv; 0 or SIM_EIO. */
int out_jobs_csv(FILE *f, const world *w);

/* The writers' one pass over the jobs (tools/run.c): run.json and jobs.csv written job by job
 * beside the statistics (out_stats_add), each job read once. The text both files write the same,
 * made once: work_s when not a whole number (%.17g in both); n_work 0: each writes its own. */
typedef struct out_job_text {
    char work[NUMFMT_LEN];
    size_t n_work;
} out_job_text;
/* run.json, written to f as it goes (tools/jsonw.h): the outer structure, the cluster and every
 * job are streamed, only small sections (config, metrics) are cJSON trees, so memory does not
 * grow with the number of jobs; the bytes are those cJSON_Print gives for the whole document
 * (docs/outputs.md), with a trailing newline. In three parts: begin writes up to the jobs, job
 * writes one (every job in id order; tx NULL or shared text), end the rest; meta (borrowed until
 * end) gives the statistics to end, so they may be completed while the jobs are written. end
 * frees the writer and returns 0, SIM_EIO (write error) or SIM_ENOMEM. */
typedef struct out_run_json out_run_json;
out_run_json *out_run_json_begin(FILE *f, const world *w, const out_run_meta *meta);
void out_run_json_job(out_run_json *r, const job *j, const out_job_text *tx);
/* A hint: job `ahead`, to be written soon, has its placement's first entry fetched into the
 * cache (the entries of ~20 000 devices are megabytes, reached in no order). */
void out_run_json_prefetch(const out_run_json *r, const job *ahead);
int out_run_json_end(out_run_json *r);
/* jobs.csv in the same three parts; end returns 0 or SIM_EIO and frees the writer. */
typedef struct out_jobs_csv_w out_jobs_csv_w;
out_jobs_csv_w *out_jobs_csv_begin(FILE *f, const world *w);
void out_jobs_csv_job(out_jobs_csv_w *cw, const job *j, const out_job_text *tx);
/* Hints, a few jobs apart: where the unit text of job `ahead`'s first unit is kept fetched into
 * the cache, then (a few jobs later, when that has come) the text itself. */
void out_jobs_csv_prefetch(const out_jobs_csv_w *cw, const job *ahead);
void out_jobs_csv_prefetch_text(const out_jobs_csv_w *cw, const job *ahead);
int out_jobs_csv_end(out_jobs_csv_w *cw);
/* The pass (tools/out_pass.c): every job in id order to the statistics (st), run.json (rj) and
 * jobs.csv (cw), each NULL when not written, a job's work_s text made once when both files take
 * it. Each job record is read once (a spilled page loaded once), where the statistics, the
 * typical pods, the allocation curve and the two files each read every job before. */
void out_jobs_pass(const world *w, out_stats_acc *st, out_run_json *rj, out_jobs_csv_w *cw);
/* Write timeseries.csv: the state in force at t = 0, interval, 2 interval, ... up to the end of
 * the run (and one row at the end); interval 0: one row per recorded change. Its rows from g
 * when given and finished (the same interval), else from the samples. 0 or SIM_EIO. */
int out_timeseries_csv(FILE *f, const world *w, sim_time interval_ns, const out_grid *g);
/* run.json's "config": scenario_config_json (experiments/scenario.h) with run.json's number
 * format (out_json_number); caller owns. */
cJSON *out_config_json(const scenario_spec *s);
/* Build run_info.json's tree (wall clock and host read here); caller owns. */
cJSON *out_run_info(uint64_t seed, const char *scenario_path, const char *argv_line);
/* Print a cJSON tree to f (formatted, trailing newline); 0 or SIM_EIO. */
int out_write_json(FILE *f, const cJSON *root);
/* Time-weighted means over the run of the samples' units_used, gpus_busy, sms_busy and queued,
 * from one pass over the samples (each the same bits as a pass of its own). */
typedef struct out_means {
    double units, gpus, sms, queued;
} out_means;
void out_time_means(const world *w, out_means *m);
/* run.json's metrics.faults (tools/out_faults.c): fault counts per kind, and per sharing mode
 * the kills, distinct jobs affected, lost GPU-hours and lost work hours; caller owns. */
cJSON *out_faults_json(const fault_stats *st, double checkpoint_s);
/* One summary line of the faults and what they cost per sharing mode. */
void out_faults_summary(FILE *f, const fault_stats *st);
/* One entry of run.json's metrics.services (tools/out_services.c): requests, batches, latency
 * (mean, p50, p95, p99, max), SLO and its attainment, GPU-hours; caller owns. */
cJSON *out_service_json(const scenario_service *sv, const service_stats *st);
/* One summary line of a service. */
void out_service_summary(FILE *f, const scenario_service *sv, const service_stats *st);
/* run.json's metrics.repartition (tools/out_repart.c): reconfigurations asked, refused,
 * applied, mode changes, pods evicted, and the GPU-hours spent evicted, draining and applying. */
cJSON *out_repart_json(const reconf_stats *st);
/* One summary line of the re-partitioning. */
void out_repart_summary(FILE *f, const reconf_stats *st);
/* Print the short text summary of a run; st: its jobs' statistics (out_stats_compute). */
void out_summary(FILE *f, const world *w, const char *out_dir, const out_stats *st);

#endif
