/* tools/out_json.c - run.json and run_info.json (see out.h and the README's "Output files"). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "sim/err.h"
#include "sim/stats.h"
#include "sim/xalloc.h"
#include "tools/buildinfo.h"
#include "tools/out.h"

cJSON *out_json_number(double v)
{
    SIM_ASSERT(isfinite(v));
    char buf[40];
    if (v == floor(v) && fabs(v) <= 9007199254740992.0) {
        snprintf(buf, sizeof buf, "%.0f", v);
        if (!strcmp(buf, "-0")) {
            strcpy(buf, "0");
        }
    } else {
        snprintf(buf, sizeof buf, "%.17g", v);
    }
    return cJSON_CreateRaw(buf);
}

cJSON *out_json_u64(uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_CreateRaw(buf);
}

static void add_num(cJSON *o, const char *k, double v)
{
    cJSON_AddItemToObject(o, k, out_json_number(v));
}

/* Seconds of a sim_time, or null when t < 0 (not happened). */
static void add_time(cJSON *o, const char *k, sim_time t)
{
    if (t < 0) {
        cJSON_AddNullToObject(o, k);
    } else {
        add_num(o, k, sim_time_to_s(t));
    }
}

static const char *sharing_name(const cluster_gpu *g)
{
    switch (g->sharing) {
    case CLUSTER_SHARE_TIMESLICE:
        return "timeslice";
    case CLUSTER_SHARE_MPS:
        return "mps";
    case CLUSTER_SHARE_NONE:
        break;
    }
    return "none";
}

static cJSON *cluster_json(const cluster *c)
{
    cJSON *cl = cJSON_CreateObject();
    cJSON *nodes = cJSON_AddArrayToObject(cl, "nodes");
    for (node_id n = 0; n < cluster_n_nodes(c); n++) {
        cJSON *node = cJSON_CreateObject();
        cJSON_AddStringToObject(node, "name", cluster_node_name(c, n));
        cJSON *gpus = cJSON_AddArrayToObject(node, "gpus");
        for (gpu_id g = 0; g < cluster_n_gpus(c); g++) {
            const cluster_gpu *cg = cluster_gpu_get(c, g);
            if (cg->node != n) {
                continue;
            }
            cJSON *gj = cJSON_CreateObject();
            add_num(gj, "index", cg->index);
            cJSON_AddStringToObject(gj, "type", cg->type->name);
            cJSON_AddBoolToObject(gj, "mig", cg->mig_enabled);
            cJSON_AddStringToObject(gj, "sharing", sharing_name(cg));
            cJSON *devs = cJSON_AddArrayToObject(gj, "devices");
            for (dev_id d = cg->first_dev; d < cg->first_dev + cg->n_devs; d++) {
                const cluster_device *cd = cluster_device_get(c, d);
                cJSON *dj = cJSON_CreateObject();
                cJSON_AddStringToObject(dj, "resource", cluster_resource_name(c, cd->resource));
                if (cd->profile) {
                    cJSON_AddStringToObject(dj, "profile", cd->profile->name);
                    add_num(dj, "start", cd->mig_start);
                } else {
                    cJSON_AddNullToObject(dj, "profile");
                    cJSON_AddNullToObject(dj, "start");
                }
                add_num(dj, "slots", cd->slots);
                add_num(dj, "sms", cd->sms);
                add_num(dj, "mem_bytes", (double)cd->mem_bytes);
                cJSON_AddItemToArray(devs, dj);
            }
            cJSON_AddItemToArray(gpus, gj);
        }
        cJSON_AddItemToArray(nodes, node);
    }
    cJSON *res = cJSON_AddArrayToObject(cl, "resources");
    for (res_id r = 0; r < cluster_n_resources(c); r++) {
        uint32_t cap = 0;
        for (node_id n = 0; n < cluster_n_nodes(c); n++) {
            cap += cluster_capacity(c, n, r);
        }
        cJSON *rj = cJSON_CreateObject();
        cJSON_AddStringToObject(rj, "name", cluster_resource_name(c, r));
        add_num(rj, "capacity", cap);
        cJSON_AddItemToArray(res, rj);
    }
    return cl;
}

static cJSON *placement_json(const cluster *c, const job *j)
{
    cJSON *a = cJSON_CreateArray();
    for (uint32_t k = 0; k < j->n_units; k++) {
        const cluster_device *cd = cluster_device_get(c, j->units[k]);
        const cluster_gpu *cg = cluster_gpu_get(c, cd->gpu);
        cJSON *u = cJSON_CreateObject();
        cJSON_AddStringToObject(u, "node", cluster_node_name(c, cd->node));
        add_num(u, "gpu", cg->index);
        if (cd->profile) {
            add_num(u, "instance", cd->index);
            cJSON_AddStringToObject(u, "profile", cd->profile->name);
            add_num(u, "start", cd->mig_start);
        } else {
            cJSON_AddNullToObject(u, "instance");
            cJSON_AddNullToObject(u, "profile");
            cJSON_AddNullToObject(u, "start");
        }
        cJSON_AddItemToArray(a, u);
    }
    return a;
}

static const char *outcome_name(const job *j)
{
    return job_state_name(j->state);
}

static cJSON *job_json(const cluster *c, const job *j)
{
    cJSON *o = cJSON_CreateObject();
    add_num(o, "id", j->id);
    cJSON_AddStringToObject(o, "class", j->spec.class_name);
    cJSON *rq = cJSON_AddObjectToObject(o, "request");
    cJSON_AddStringToObject(rq, "resource", j->spec.req.resource);
    add_num(rq, "per_worker", j->spec.req.per_worker);
    add_num(rq, "workers", j->spec.req.n_workers);
    if (j->spec.mem_bytes) {
        add_num(rq, "mem_bytes", (double)j->spec.mem_bytes);
    } else {
        cJSON_AddNullToObject(rq, "mem_bytes");
    }
    add_num(o, "work_s", j->spec.work_s);
    add_time(o, "submit_s", j->spec.submit);
    add_time(o, "start_s", j->start);
    add_time(o, "end_s", j->end);
    add_time(o, "wait_s", job_wait_ns(j));
    add_time(o, "jct_s", j->state == JOB_DONE ? job_jct_ns(j) : -1);
    cJSON_AddItemToObject(o, "placement", placement_json(c, j));
    cJSON_AddStringToObject(o, "outcome", outcome_name(j));
    return o;
}

/* {n, mean, p50, p95, max} of x[0..n) (sorted in place); values null when n == 0. */
static cJSON *dist_json(double *x, size_t n)
{
    cJSON *o = cJSON_CreateObject();
    add_num(o, "n", (double)n);
    if (n == 0) {
        cJSON_AddNullToObject(o, "mean");
        cJSON_AddNullToObject(o, "p50");
        cJSON_AddNullToObject(o, "p95");
        cJSON_AddNullToObject(o, "max");
        return o;
    }
    stats_running r = stats_running_make();
    for (size_t i = 0; i < n; i++) {
        stats_running_add(&r, x[i]);
    }
    add_num(o, "mean", stats_running_mean(&r));
    add_num(o, "p50", stats_quantile_inplace(x, n, 0.5));
    add_num(o, "p95", stats_quantile_sorted(x, n, 0.95));
    add_num(o, "max", x[n - 1]);
    return o;
}

/* Time-weighted mean over [0, horizon] of sample field f, divided by denom (> 0). */
static double tw_mean(const world *w, size_t field_off, double denom, res_id r, bool per_res)
{
    const world_sample *s = world_samples(w);
    size_t n = world_n_samples(w);
    world_totals tot = world_get_totals(w);
    SIM_ASSERT(n > 0);
#define SAMPLE_VALUE(i)                                                                            \
    (per_res ? (double)world_sample_res_used(w, (i), r)                                            \
             : (double)*(const uint32_t *)((const char *)&s[(i)] + field_off))
    stats_timeavg a = stats_timeavg_make(s[0].t, SAMPLE_VALUE(0));
    for (size_t i = 1; i < n; i++) {
        stats_timeavg_set(&a, s[i].t, SAMPLE_VALUE(i));
    }
#undef SAMPLE_VALUE
    return stats_timeavg_mean(&a, tot.horizon) / denom;
}

double out_time_mean(const world *w, size_t field_off, double denom)
{
    return tw_mean(w, field_off, denom, 0, false);
}

cJSON *out_run_json(const world *w, const out_run_meta *meta)
{
    const cluster *c = world_cluster(w);
    const job_table *jt = world_jobs(w);
    size_t n_jobs = job_table_count(jt);
    world_totals tot = world_get_totals(w);

    cJSON *root = cJSON_CreateObject();
    add_num(root, "schema_version", OUT_SCHEMA_VERSION);
    cJSON_AddItemToObject(root, "seed", out_json_u64(meta->seed));
    cJSON_AddItemToObject(root, "config",
                          meta->config ? cJSON_Duplicate(meta->config, true) : cJSON_CreateNull());
    cJSON_AddStringToObject(root, "policy", meta->policy);
    cJSON_AddItemToObject(root, "cluster", cluster_json(c));

    cJSON *jobs = cJSON_AddArrayToObject(root, "jobs");
    double *wait = xcalloc(n_jobs ? n_jobs : 1, sizeof(double), "waits");
    double *jct = xcalloc(n_jobs ? n_jobs : 1, sizeof(double), "jcts");
    size_t n_wait = 0, n_jct = 0;
    for (job_id k = 0; k < n_jobs; k++) {
        const job *j = job_table_get(jt, k);
        cJSON_AddItemToArray(jobs, job_json(c, j));
        if (j->start >= 0) {
            wait[n_wait++] = sim_time_to_s(job_wait_ns(j));
        }
        if (j->state == JOB_DONE) {
            jct[n_jct++] = sim_time_to_s(job_jct_ns(j));
        }
    }

    cJSON *m = cJSON_AddObjectToObject(root, "metrics");
    cJSON *counts = cJSON_AddObjectToObject(m, "counts");
    add_num(counts, "jobs", (double)n_jobs);
    add_num(counts, "done", tot.n_done);
    add_num(counts, "failed_oom", tot.n_oom);
    add_num(counts, "failed_request", tot.n_failed_request);
    add_num(counts, "running", tot.n_running);
    add_num(counts, "queued", tot.n_queued);
    add_num(counts, "not_submitted", tot.n_pending);
    add_num(counts, "decisions_rejected", (double)tot.n_rejected);
    add_num(counts, "events", (double)tot.n_events);
    add_time(m, "end_s", tot.end);
    add_time(m, "horizon_s", tot.horizon);
    cJSON_AddItemToObject(m, "wait_s", dist_json(wait, n_wait));
    cJSON_AddItemToObject(m, "jct_s", dist_json(jct, n_jct));
    free(wait);
    free(jct);

    cJSON *alloc = cJSON_AddObjectToObject(m, "allocation");
    uint32_t units = cluster_units_total(c);
    add_num(alloc, "units_total", units);
    add_num(alloc, "gpus_total", cluster_n_gpus(c));
    add_num(alloc, "sms_total", tot.sms_total);
    add_num(alloc, "units_mean",
            units ? tw_mean(w, offsetof(world_sample, units_used), units, 0, false) : 0);
    add_num(alloc, "gpus_busy_mean",
            cluster_n_gpus(c)
                ? tw_mean(w, offsetof(world_sample, gpus_busy), cluster_n_gpus(c), 0, false)
                : 0);
    add_num(alloc, "sms_busy_mean",
            tot.sms_total ? tw_mean(w, offsetof(world_sample, sms_busy), tot.sms_total, 0, false)
                          : 0);
    add_num(alloc, "queued_mean", tw_mean(w, offsetof(world_sample, queued), 1, 0, false));
    cJSON *per = cJSON_AddObjectToObject(alloc, "per_resource");
    for (res_id r = 0; r < cluster_n_resources(c); r++) {
        uint32_t cap = 0;
        for (node_id n = 0; n < cluster_n_nodes(c); n++) {
            cap += cluster_capacity(c, n, r);
        }
        add_num(per, cluster_resource_name(c, r), cap ? tw_mean(w, 0, cap, r, true) : 0);
    }
    return root;
}

cJSON *out_run_info(uint64_t seed, const char *scenario_path, const char *argv_line)
{
    cJSON *o = cJSON_CreateObject();
    add_num(o, "schema_version", OUT_SCHEMA_VERSION);
    cJSON_AddItemToObject(o, "seed", out_json_u64(seed));
    cJSON_AddStringToObject(o, "scenario", scenario_path);
    cJSON_AddStringToObject(o, "command", argv_line);
    time_t now = time(NULL);
    struct tm tm;
    char ts[40] = "unknown";
    if (gmtime_r(&now, &tm)) {
        strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    cJSON_AddStringToObject(o, "wall_clock_utc", ts);
    struct utsname u;
    if (uname(&u) == 0) {
        cJSON_AddStringToObject(o, "host", u.nodename);
        char os[256];
        snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
        cJSON_AddStringToObject(o, "os", os);
    }
#if defined(__clang__)
    cJSON_AddStringToObject(o, "compiler", "clang " __VERSION__);
#elif defined(__GNUC__)
    cJSON_AddStringToObject(o, "compiler", "gcc " __VERSION__);
#endif
    cJSON_AddStringToObject(o, "version", buildinfo_version());
    cJSON_AddStringToObject(o, "build", buildinfo_flavour());
    char cflags[512];
    snprintf(cflags, sizeof cflags, "-std=c11 -ffp-contract=off %s", buildinfo_opt_flags());
    cJSON_AddStringToObject(o, "cflags", cflags);
    cJSON_AddStringToObject(o, "git_revision", buildinfo_git_rev());
    return o;
}

int out_write_json(FILE *f, const cJSON *root)
{
    char *s = cJSON_Print(root);
    if (!s) {
        return SIM_ENOMEM;
    }
    int rc = fputs(s, f) < 0 || fputc('\n', f) == EOF ? SIM_EIO : 0;
    cJSON_free(s);
    return rc;
}
