/* tools/run.c - scenario -> the run builder (experiments/build_run.h) -> world run -> output
 * files (see run.h). */
#include "tools/run.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "experiments/scenario.h"
#include "sim/arena.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/actlog.h"
#include "tools/out.h"
#include "tools/out_metrics.h"
#include "tools/out_report.h"
#include "tools/progress.h"
#include "experiments/build_run.h"
#include "experiments/estimate.h"
#include "tools/spill.h"

/* Everything one run holds; freed by run_fini. */
typedef struct run_ctx {
    built_run b;         /* what the builder made (experiments/build_run.h) */
    actlog act;          /* device activity (metrics.om, report.html) */
    bool has_act;        /* act recorded: one of those files is written, or a sweep/plan
                          * point's figures are wanted */
    double energy_j;     /* the GPUs' energy over [0, horizon] (has_act) */
    out_stats stats;     /* the jobs' statistics (has_stats): run.json and the summary */
    bool has_stats;
    spill_store *spill;  /* where the world's ended jobs go (NULL: kept in memory) */
    spill_store *sspill; /* where its full blocks of samples go (NULL: kept) */
} run_ctx;

static void run_fini(run_ctx *r)
{
    if (r->has_act) {
        actlog_fini(&r->act);
    }
    if (r->has_stats) {
        out_stats_fini(&r->stats);
    }
    built_run_fini(&r->b);
    spill_destroy(r->spill); /* after the table that reads it */
    spill_destroy(r->sspill);
    diag_destroy(r->b.d);
    arena_destroy(r->b.a);
}

/* The files a run may own in its output directory: run_info.json and every output name. */
static const char *owned_name(unsigned i)
{
    return i == SCN_OUT_COUNT ? "run_info.json" : scenario_output_name(i);
}

/* Whether owned file i is written under the output bits `files`. */
static bool owned_written(unsigned i, unsigned files)
{
    return i == SCN_OUT_COUNT ? (files & SCN_OUT_RUN_JSON) != 0 : (files & (1u << i)) != 0;
}

/* The owned files present in dir, comma-separated into buf; false when none. */
static bool earlier_outputs(const char *dir, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i <= SCN_OUT_COUNT; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, owned_name(i));
        if (access(path, F_OK) == 0 && used < n) {
            int k = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", owned_name(i));
            used += k > 0 ? (size_t)k : 0;
        }
    }
    return used > 0;
}

/* After a --force run: remove the owned files of an earlier run that this one did not write, so
 * that the directory holds one run's outputs only. */
static int remove_stale_outputs(const char *dir, unsigned files)
{
    for (unsigned i = 0; i <= SCN_OUT_COUNT; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, owned_name(i));
        if (!owned_written(i, files) && remove(path) != 0 && errno != ENOENT) {
            fprintf(stderr, "slicesim: %s: cannot remove an earlier run's file: %s\n", path,
                    strerror(errno));
            return SIM_EIO;
        }
    }
    return 0;
}

/* ---- traced workload ------------------------------------------------------------------------ */

/* run.json's "trace" section: what was read and how durations became work. */
static cJSON *trace_json(const run_ctx *r)
{
    const traceload_stats *st = &r->b.tstats;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "rows", out_json_number((double)st->rows));
    cJSON_AddItemToObject(o, "jobs", out_json_number((double)st->jobs));
    cJSON_AddItemToObject(o, "cpu_only_skipped", out_json_number((double)st->cpu_only));
    cJSON_AddItemToObject(o, "cpu_only_jobs", out_json_number((double)st->cpu_jobs));
    cJSON_AddItemToObject(o, "outside_window", out_json_number((double)st->outside));
    cJSON_AddItemToObject(o, "unplaceable_dropped", out_json_number((double)st->unplaceable));
    cJSON_AddItemToObject(o, "open_ended", out_json_number((double)st->open));
    cJSON_AddItemToObject(o, "gpu_bound_fallback", out_json_number((double)st->fallback));
    cJSON_AddItemToObject(o, "inflated", out_json_number((double)st->inflated));
    cJSON_AddItemToObject(o, "removed", out_json_number((double)st->removed));
    cJSON_AddItemToObject(o, "milli_gpu_total", out_json_number((double)st->milli_total));
    cJSON_AddItemToObject(o, "first_submit_s", out_json_number(st->first_submit_s));
    /* work-seconds per traced second of each rule, and of the jobs no rule maps */
    cJSON *wf = cJSON_AddArrayToObject(o, "work_factors");
    const scenario_trace *tr = &r->b.spec->workload.trace;
    for (size_t i = 0; i <= tr->n_rules; i++) {
        cJSON *e = cJSON_CreateObject();
        const traceload_rule *ru = i < tr->n_rules ? &r->b.res->trules[i] : NULL;
        char name[32];
        snprintf(name, sizeof name, ru ? "map[%zu]" : "unmapped", i);
        cJSON_AddStringToObject(e, "rule", name);
        cJSON_AddStringToObject(e, "request", ru && ru->resource ? ru->resource : tr->resource);
        if (ru && ru->profile) {
            cJSON_AddStringToObject(e, "profile", ru->profile);
        } else {
            cJSON_AddStringToObject(e, "profile", "gpu-bound");
        }
        cJSON_AddItemToObject(e, "work_factor",
                              out_json_number(ru ? ru->work_factor : r->b.res->fallback_factor));
        cJSON_AddItemToArray(wf, e);
    }
    cJSON *stand = cJSON_AddArrayToObject(o, "gpu_stand_ins");
    const scenario_cluster_trace *ct = &r->b.spec->cluster.trace;
    for (size_t i = 0; i < ct->n_map; i++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "model", ct->map[i].model);
        cJSON_AddStringToObject(m, "gpu", ct->map[i].gpu);
        cJSON_AddItemToArray(stand, m);
    }
    return o;
}

/* Where write_outputs writes: a stage in the output directory, or (st NULL) memory streams that
 * are dropped once written (run_opts.outputs_in_memory). */
typedef struct out_sink {
    out_stage *st;
    FILE *mem[SCN_OUT_COUNT + 1];
    char *buf[SCN_OUT_COUNT + 1];
    size_t len[SCN_OUT_COUNT + 1];
    int n;
} out_sink;

static FILE *sink_open(out_sink *k, const char *name)
{
    if (k->st) {
        return out_stage_open(k->st, name);
    }
    SIM_ASSERT(k->n < SCN_OUT_COUNT + 1);
    k->mem[k->n] = open_memstream(&k->buf[k->n], &k->len[k->n]);
    return k->mem[k->n++];
}

/* Close and free the memory streams; SIM_EIO when one failed. */
static int sink_drop(out_sink *k)
{
    int rc = 0;
    for (int i = 0; i < k->n; i++) {
        rc = k->mem[i] && fclose(k->mem[i]) == 0 ? rc : SIM_EIO;
        free(k->buf[i]);
    }
    return rc;
}

/* The process's CPU time so far (user + system), in seconds. */
static double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int write_outputs(run_ctx *r, const run_opts *o, const char *dir)
{
    unsigned files = r->b.spec->outputs.files;
    out_sink sink = {0};
    out_stage *st = NULL;
    if (!o->outputs_in_memory) {
        st = sink.st = out_stage_begin(dir);
        if (!st) {
            return SIM_EIO;
        }
    }
    int rc = 0;
    sim_time interval = r->b.spec->outputs.sample_interval_ns;
    /* timeseries.csv's rows kept as run.json's means read the samples */
    out_grid *grid = (files & SCN_OUT_RUN_JSON) && (files & SCN_OUT_TIMESERIES_CSV) && interval > 0
                         ? out_grid_create(r->b.w, interval)
                         : NULL;
    if (files & SCN_OUT_RUN_JSON) {
        cJSON *cfg = out_config_json(r->b.spec);
        cJSON *trace = r->b.has_trace ? trace_json(r) : NULL;
        out_run_meta meta = {
            .seed = r->b.spec->seed, .config = cfg, .policy = r->b.pol->name, .trace = trace,
            .stats = &r->stats, .grid = grid};
        cJSON *extra = cJSON_CreateObject();
        if (r->b.spec->n_services > 0) {
            cJSON *arr = cJSON_AddArrayToObject(extra, "services");
            for (size_t i = 0; i < r->b.spec->n_services; i++) {
                service_stats ss = service_get_stats(r->b.svcs[i]);
                cJSON_AddItemToArray(arr, out_service_json(&r->b.spec->services[i], &ss));
            }
        }
        if (r->b.reconf) {
            reconf_stats rs = reconf_get_stats(r->b.reconf);
            cJSON_AddItemToObject(extra, "repartition", out_repart_json(&rs));
        }
        if (r->b.faults) {
            cJSON_AddItemToObject(extra, "faults",
                                  out_faults_json(fault_injector_stats(r->b.faults),
                                                  sim_time_to_s(r->b.spec->faults.checkpoint_ns)));
        }
        if (r->has_act) {
            double util = 0, sm = 0;
            actlog_means(&r->act, world_cluster(r->b.w), world_get_totals(r->b.w).horizon, &util,
                         &sm);
            cJSON *act = cJSON_AddObjectToObject(extra, "activity");
            cJSON_AddNumberToObject(act, "gpu_util_mean", util);
            cJSON_AddNumberToObject(act, "sm_active_mean", sm);
            cJSON_AddNumberToObject(act, "power_mean_w", out_power_mean_w(r->b.w, r->energy_j));
            cJSON_AddNumberToObject(act, "energy_kwh", r->energy_j / 3.6e6);
        }
        meta.metrics_extra = extra;
        FILE *f = sink_open(&sink, "run.json");
        out_run_json *rj = f ? out_run_json_begin(f, r->b.w, &meta) : NULL;
        FILE *fc = rj && (files & SCN_OUT_JOBS_CSV) ? sink_open(&sink, "jobs.csv") : NULL;
        out_jobs_csv_w *cw = fc ? out_jobs_csv_begin(fc, r->b.w) : NULL;
        if (rj) { /* the statistics, run.json's jobs and jobs.csv in one pass */
            out_stats_acc *sa = out_stats_begin(r->b.w, &r->stats, true);
            out_jobs_pass(r->b.w, sa, rj, cw);
            out_stats_end(sa);
            r->has_stats = true;
        }
        int rc_c = !(files & SCN_OUT_JOBS_CSV) ? 0 : cw ? out_jobs_csv_end(cw) : SIM_EIO;
        rc = rj ? out_run_json_end(rj) : SIM_EIO;
        rc = rc ? rc : rc_c;
        cJSON_Delete(extra);
        cJSON_Delete(trace);
        cJSON_Delete(cfg);
        cJSON *info =
            out_run_info(r->b.spec->seed, o->scenario, o->command_line ? o->command_line : "");
        f = rc ? NULL : sink_open(&sink, "run_info.json");
        rc = rc ? rc : f ? out_write_json(f, info) : SIM_EIO;
        cJSON_Delete(info);
    } else if (files & SCN_OUT_JOBS_CSV) {
        FILE *f = sink_open(&sink, "jobs.csv");
        rc = f ? out_jobs_csv(f, r->b.w) : SIM_EIO;
    }
    if (rc == 0 && (files & SCN_OUT_TIMESERIES_CSV)) {
        FILE *f = sink_open(&sink, "timeseries.csv");
        rc = f ? out_timeseries_csv(f, r->b.w, interval, grid) : SIM_EIO;
    }
    out_grid_destroy(grid);
    if (rc == 0 && (files & SCN_OUT_METRICS_OM)) {
        FILE *f = sink_open(&sink, "metrics.om");
        rc = f ? out_metrics_om(f, r->b.w, &r->b.res->phys, &r->act,
                                r->b.spec->outputs.sample_interval_ns,
                                r->b.spec->outputs.start_unix_ns)
               : SIM_EIO;
    }
    if (rc == 0 && (files & SCN_OUT_REPORT_HTML)) {
        FILE *f = sink_open(&sink, "report.html");
        rc = f ? out_report_html(f, r->b.w, &r->act, r->energy_j, r->b.spec, r->b.pol->name)
               : SIM_EIO;
    }
    if (!st) {
        int drop = sink_drop(&sink);
        return rc ? rc : drop;
    }
    if (rc != 0) {
        out_stage_abort(st);
        return rc;
    }
    rc = out_stage_commit(st);
    return rc == 0 ? remove_stale_outputs(dir, files) : rc;
}

int run_scenario(const run_opts *o)
{
    run_ctx r = {.b = {.a = arena_create(), .d = diag_create()}};
    FILE *err = o->errors ? o->errors : stderr;
    int rc = o->text ? scenario_load_buffer_edit(o->scenario, o->text_dir, o->text, o->text_len,
                                                 o->sets, o->n_sets, o->edit, 0, r.b.a, r.b.d,
                                                 &r.b.spec)
                     : scenario_load_file_edit(o->scenario, o->sets, o->n_sets, o->edit, 0, r.b.a,
                                               r.b.d, &r.b.spec);
    if (rc == SIM_ENOENT || rc == SIM_EIO) {
        fprintf(err, "slicesim %s: error: cannot read '%s': %s\n", o->check_only ? "check" : "run",
                o->scenario, strerror(errno));
        run_fini(&r);
        return rc;
    }
    run_estimate est;
    if (rc == 0) {
        r.spill = o->check_only ? NULL : spill_create();
        r.sspill = o->check_only ? NULL : spill_create();
        build_run_opts bo = {.has_seed = o->has_seed,
                             .seed = o->seed,
                             .check_only = o->check_only,
                             .verify_every = o->verify_every,
                             .job_spill = r.spill ? spill_ops() : NULL,
                             .job_spill_ctx = r.spill,
                             .sample_spill = r.sspill ? spill_ops() : NULL,
                             .sample_spill_ctx = r.sspill};
        rc = build_run(&r.b, &bo, &est);
        if (rc == 0 && diag_error_count(r.b.d) == 0 && o->estimate) {
            *o->estimate = est;
        }
    }
    if (rc != 0 || diag_error_count(r.b.d) > 0) {
        diag_print(r.b.d, err);
        run_fini(&r);
        return SIM_EINPUT;
    }
    const char *dir = o->out_dir ? o->out_dir : r.b.spec->outputs.dir;
    if (o->dir_used) {
        snprintf(o->dir_used, o->dir_used_len, "%s", dir);
    }
    if (o->on_spec) {
        o->on_spec(o->on_spec_ctx, r.b.spec);
    }
    out_lock *lock = NULL;
    if (!o->check_only && !o->dir_locked && !o->outputs_in_memory &&
        out_lock_take(dir, "run", &lock) != 0) {
        run_fini(&r);
        return SIM_EIO;
    }
    char earlier[256];
    if (!o->check_only && !o->force && !o->outputs_in_memory &&
        earlier_outputs(dir, earlier, sizeof earlier)) {
        fprintf(err,
                "slicesim run: error: output directory '%s' holds an earlier run's files (%s); "
                "expected a new or empty directory, or --force to replace them\n",
                dir, earlier);
        out_lock_release(lock, false);
        run_fini(&r);
        return SIM_EINPUT;
    }
    world_totals tot = world_get_totals(r.b.w);
    if (tot.n_gpus_no_sms) {
        fprintf(err,
                "slicesim %s: warning: the catalog has no sourced SM count for %s (model/hw/gpus.yaml "
                "lists sms_total as unsourced): SM utilisation is reported as n/a\n",
                o->check_only ? "check" : "run", tot.no_sms_type);
    }
    if (o->check_only) {
        if (o->summary) {
            fprintf(o->summary, "%s: ok (%llu nodes, %llu GPUs, %zu job classes)\n", o->scenario,
                    (unsigned long long)scenario_node_count(r.b.spec),
                    (unsigned long long)scenario_gpu_count(r.b.spec), r.b.spec->workload.n_jobs);
            est_print(o->summary, &est);
        }
        run_fini(&r);
        return 0;
    }
    progress *pg = progress_create(err, false);
    world_set_progress(r.b.w, PROGRESS_EVERY_EVENTS, progress_observe, pg);
    if ((r.b.spec->outputs.files & (SCN_OUT_METRICS_OM | SCN_OUT_REPORT_HTML | SCN_OUT_RUN_JSON)) ||
        o->result) {
        actlog_init(&r.act, r.b.w, &r.b.rate);
        r.has_act = true;
    }
    world_set_max_events(r.b.w, o->max_events);
    world_run(r.b.w);
    if (diag_error_count(r.b.d) > 0) { /* found during the run (a trace changed since it was
                                        * checked): the run is abandoned, nothing is written */
        diag_print(r.b.d, err);
        progress_destroy(pg);
        out_lock_release(lock, true);
        run_fini(&r);
        return SIM_EINPUT;
    }
    if (r.has_act) {
        actlog_finish(&r.act);
        r.energy_j = out_energy_j(r.b.w, &r.b.res->phys, &r.act);
    }
    progress_note(pg, "writing outputs");
    double out_cpu0 = process_cpu_s();
    if (!(r.b.spec->outputs.files & SCN_OUT_RUN_JSON) && o->summary) {
        out_stats_compute(r.b.w, &r.stats, false); /* else in the writers' pass */
        r.has_stats = true;
    }
    rc = write_outputs(&r, o, dir);
    if (o->stats) {
        *o->stats = (run_stats){.n_jobs = job_table_count(world_jobs(r.b.w)),
                                .n_events = world_get_totals(r.b.w).n_events,
                                .out_cpu_s = process_cpu_s() - out_cpu0,
                                .n_spilled = job_table_n_spilled(world_jobs(r.b.w))};
    }
    out_lock_release(lock, rc != 0);
    progress_destroy(pg);
    if (rc == 0 && o->summary) {
        if (r.b.has_trace) {
            const traceload_stats *st = &r.b.tstats;
            fprintf(o->summary,
                    "trace: %" PRIu64 " rows -> %" PRIu64 " jobs (%" PRIu64 " CPU-only, %" PRIu64
                    " CPU-only skipped, %" PRIu64 " outside the window, %" PRIu64
                    " never placeable, %" PRIu64 " open-ended, %" PRIu64 " GPU-bound fallback",
                    st->rows, st->jobs, st->cpu_jobs, st->cpu_only, st->outside,
                    st->unplaceable, st->open, st->fallback);
            if (r.b.spec->workload.trace.mode == SCN_TRACE_ARRIVAL_ONLY) {
                fprintf(
                    o->summary,
                    ", %" PRIu64 " clones, %" PRIu64 " removed, %.4f of %" PRIu32 " GPUs asked for",
                    st->inflated, st->removed,
                    (double)st->milli_total / ((double)MILLI_PER_GPU * (double)cluster_n_gpus(world_cluster(r.b.w))),
                    cluster_n_gpus(world_cluster(r.b.w)));
            }
            fprintf(o->summary, ")\n");
        }
        out_summary(o->summary, r.b.w, dir, &r.stats);
        if (r.b.faults) {
            out_faults_summary(o->summary, fault_injector_stats(r.b.faults));
        }
        for (size_t i = 0; i < r.b.spec->n_services; i++) {
            service_stats ss = service_get_stats(r.b.svcs[i]);
            out_service_summary(o->summary, &r.b.spec->services[i], &ss);
        }
        if (r.b.reconf) {
            reconf_stats rs = reconf_get_stats(r.b.reconf);
            out_repart_summary(o->summary, &rs);
        }
    }
    if (rc == 0 && o->result) {
        runstats_compute(r.b.w, o->result);
        o->result->v[RS_ENERGY_KWH] = r.energy_j / 3.6e6;
        o->result->has[RS_ENERGY_KWH] = true;
        for (size_t i = 0; i < r.b.spec->n_services; i++) { /* the worst service */
            service_stats ss = service_get_stats(r.b.svcs[i]);
            runstats *rs = o->result;
            bool first = i == 0;
            rs->v[RS_SVC_P95] =
                first || ss.p95_s > rs->v[RS_SVC_P95] ? ss.p95_s : rs->v[RS_SVC_P95];
            rs->v[RS_SVC_P99] =
                first || ss.p99_s > rs->v[RS_SVC_P99] ? ss.p99_s : rs->v[RS_SVC_P99];
            rs->v[RS_SVC_ATTAINMENT] = first || ss.attainment < rs->v[RS_SVC_ATTAINMENT]
                                           ? ss.attainment
                                           : rs->v[RS_SVC_ATTAINMENT];
            rs->has[RS_SVC_P95] = rs->has[RS_SVC_P99] = rs->has[RS_SVC_ATTAINMENT] = true;
        }
    }
    run_fini(&r);
    return rc;
}
