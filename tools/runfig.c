/* tools/runfig.c - a run's figures per class and per pool, from its output files (see runfig.h). */
#include "tools/runfig.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "experiments/fileio.h"
#include "experiments/jsonrd.h"
#include "sim/err.h"
#include "sim/stats.h"
#include "sim/xalloc.h"
#include "workloads/csvin.h"

const char *const runfig_names[RF_COUNT] = {
    "jobs",     "done",    "oom",           "wait_mean", "wait_p95",
    "jct_mean", "jct_p95", "slowdown_mean", "alloc",     "slo_attainment",
};

const bool runfig_time[RF_COUNT] = {[RF_WAIT_MEAN] = true, [RF_WAIT_P95] = true,
                                    [RF_JCT_MEAN] = true, [RF_JCT_P95] = true};

/* One job as jobs.csv has it. */
typedef struct rjob {
    char klass[128], pool[128];
    double units, start, end, wait, jct, slowdown; /* NaN when empty */
    int done, oom;
} rjob;

/* Samples of one scope while reading. */
typedef struct acc {
    char kind[8], name[128];
    double *wait, *jct, *slow;
    size_t n_wait, n_jct, n_slow, n_jobs, n_done, n_oom, n_slo;
    double unit_s; /* unit-seconds held (pools) */
    double units;  /* units advertised (pools) */
} acc;

static double field_num(csvin *r, int col)
{
    if (col < 0 || csvin_is_missing(r, (size_t)col)) {
        return NAN;
    }
    double v;
    return csvin_double(r, (size_t)col, -1e18, 1e18, &v) ? v : (double)NAN;
}

/* The pool of a placement "NODE/GPU..." : NODE less a trailing "-K". */
static void pool_of(const char *placement, char *out, size_t n)
{
    size_t len = strcspn(placement, "/ ");
    snprintf(out, n, "%.*s", (int)len, placement);
    char *dash = strrchr(out, '-');
    if (dash && dash[1] && strspn(dash + 1, "0123456789") == strlen(dash + 1)) {
        *dash = 0;
    }
}

static int read_jobs(const char *path, diag *d, rjob **out, size_t *n_out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return errno == ENOENT ? SIM_ENOENT : SIM_EIO;
    }
    csvin *r;
    int rc = csvin_open(f, path, true, d, &r);
    if (rc) {
        fclose(f);
        return rc;
    }
    static const char *const cols[] = {"class",  "per_worker", "workers", "start_s",   "end_s",
                                       "wait_s", "jct_s",      "outcome", "placement", "slowdown"};
    int c[10];
    for (int i = 0; i < 10; i++) {
        c[i] = csvin_column(r, cols[i]);
        if (c[i] < 0) {
            diag_error(d, (src_loc){path, 1, 1}, cols[i],
                       "missing column; expected the header slicesim run writes, got none");
            rc = SIM_EINPUT;
        }
    }
    rjob *jobs = NULL;
    size_t n = 0, cap = 0;
    int k;
    while (rc == 0 && (k = csvin_next(r)) != 0) {
        if (k < 0) {
            rc = k;
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            jobs = xrealloc(jobs, cap * sizeof *jobs, "jobs");
        }
        rjob *j = &jobs[n++];
        snprintf(j->klass, sizeof j->klass, "%s", csvin_field(r, (size_t)c[0]));
        pool_of(csvin_field(r, (size_t)c[8]), j->pool, sizeof j->pool);
        j->units = field_num(r, c[1]) * field_num(r, c[2]);
        j->start = field_num(r, c[3]);
        j->end = field_num(r, c[4]);
        j->wait = field_num(r, c[5]);
        j->jct = field_num(r, c[6]);
        j->slowdown = field_num(r, c[9]);
        const char *o = csvin_field(r, (size_t)c[7]);
        j->done = !strcmp(o, "done");
        j->oom = !strcmp(o, "failed_oom");
    }
    if (diag_error_count(d) > 0 && rc == 0) {
        rc = SIM_EINPUT;
    }
    csvin_close(r);
    fclose(f);
    if (rc) {
        free(jobs);
        return rc;
    }
    *out = jobs;
    *n_out = n;
    return 0;
}

/* run.json: the horizon, units_mean, and the units of each pool. */
typedef struct runjson {
    double horizon_s, units_mean;
    size_t n_pools;
    char (*pool)[128];
    double *pool_units;
} runjson;

static int read_run_json(const char *path, diag *d, runjson *out)
{
    char *buf;
    size_t len;
    int rc = fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len);
    if (rc) {
        return rc;
    }
    jsonrd r = {.file = path, .d = d, .text = buf, .len = len};
    cJSON *root = jsonrd_parse(&r);
    const cJSON *m = jsonrd_get(root, "metrics");
    const cJSON *h = jsonrd_get(m, "horizon_s");
    const cJSON *u = jsonrd_get(jsonrd_get(m, "allocation"), "units_mean");
    const cJSON *nodes = jsonrd_get(jsonrd_get(root, "cluster"), "nodes");
    if (root && (!cJSON_IsNumber(h) || !cJSON_IsNumber(u) || !cJSON_IsArray(nodes))) {
        jsonrd_bad(&r, "metrics",
                   "the run.json slicesim run writes (metrics.horizon_s, "
                   "metrics.allocation.units_mean, cluster.nodes)",
                   NULL, root);
    }
    if (root && r.errors == 0) {
        out->horizon_s = h->valuedouble;
        out->units_mean = u->valuedouble;
        size_t cap = (size_t)cJSON_GetArraySize(nodes) + 1;
        out->pool = xcalloc(cap, sizeof *out->pool, "pools");
        out->pool_units = xcalloc(cap, sizeof *out->pool_units, "pools");
        for (const cJSON *nd = nodes->child; nd; nd = nd->next) {
            const cJSON *name = jsonrd_get(nd, "name");
            char pool[128];
            pool_of(cJSON_IsString(name) ? name->valuestring : "?", pool, sizeof pool);
            size_t p = 0;
            while (p < out->n_pools && strcmp(out->pool[p], pool)) {
                p++;
            }
            if (p == out->n_pools) {
                snprintf(out->pool[out->n_pools++], 128, "%s", pool);
            }
            for (const cJSON *g = jsonrd_get(nd, "gpus") ? jsonrd_get(nd, "gpus")->child : NULL; g;
                 g = g->next) {
                const cJSON *devs = jsonrd_get(g, "devices");
                for (const cJSON *dv = devs ? devs->child : NULL; dv; dv = dv->next) {
                    const cJSON *slots = jsonrd_get(dv, "slots");
                    out->pool_units[p] += cJSON_IsNumber(slots) ? slots->valuedouble : 0;
                }
            }
        }
    }
    int errors = r.errors;
    cJSON_Delete(root);
    jsonrd_fini(&r);
    free(buf);
    return errors ? SIM_EINPUT : 0;
}

static acc *acc_get(acc **all, size_t *n, const char *kind, const char *name, size_t cap_jobs)
{
    for (size_t i = 0; i < *n; i++) {
        if (!strcmp((*all)[i].kind, kind) && !strcmp((*all)[i].name, name)) {
            return &(*all)[i];
        }
    }
    *all = xrealloc(*all, (*n + 1) * sizeof **all, "scopes");
    acc *a = &(*all)[(*n)++];
    memset(a, 0, sizeof *a);
    snprintf(a->kind, sizeof a->kind, "%s", kind);
    snprintf(a->name, sizeof a->name, "%s", name);
    a->wait = xcalloc(cap_jobs + 1, sizeof(double), "waits");
    a->jct = xcalloc(cap_jobs + 1, sizeof(double), "jcts");
    a->slow = xcalloc(cap_jobs + 1, sizeof(double), "slowdowns");
    return a;
}

static void acc_add(acc *a, const rjob *j, double slo_wait_s, double horizon_s)
{
    a->n_jobs++;
    a->n_done += (size_t)j->done;
    a->n_oom += (size_t)j->oom;
    if (!isnan(j->wait)) {
        a->wait[a->n_wait++] = j->wait;
        a->n_slo += slo_wait_s > 0 && !isnan(j->start) && j->wait <= slo_wait_s;
    }
    if (j->done && !isnan(j->jct)) {
        a->jct[a->n_jct++] = j->jct;
    }
    if (j->done && !isnan(j->slowdown)) {
        a->slow[a->n_slow++] = j->slowdown;
    }
    if (!isnan(j->start) && !isnan(j->units)) {
        double end = isnan(j->end) || j->end > horizon_s ? horizon_s : j->end;
        a->unit_s += j->units * (end > j->start ? end - j->start : 0);
    }
}

static double mean_of(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        s += x[i];
    }
    return n ? s / (double)n : (double)NAN;
}

static void acc_finish(acc *a, double slo_wait_s, double horizon_s, runfig_scope *s)
{
    snprintf(s->kind, sizeof s->kind, "%s", a->kind);
    snprintf(s->name, sizeof s->name, "%s", a->name);
    s->v[RF_JOBS] = (double)a->n_jobs;
    s->v[RF_DONE] = (double)a->n_done;
    s->v[RF_OOM] = (double)a->n_oom;
    s->v[RF_WAIT_MEAN] = mean_of(a->wait, a->n_wait);
    s->v[RF_WAIT_P95] = a->n_wait ? stats_quantile_inplace(a->wait, a->n_wait, 0.95) : (double)NAN;
    s->v[RF_JCT_MEAN] = mean_of(a->jct, a->n_jct);
    s->v[RF_JCT_P95] = a->n_jct ? stats_quantile_inplace(a->jct, a->n_jct, 0.95) : (double)NAN;
    s->v[RF_SLOWDOWN_MEAN] = mean_of(a->slow, a->n_slow);
    s->v[RF_ALLOC] =
        a->units > 0 && horizon_s > 0 ? a->unit_s / (a->units * horizon_s) : (double)NAN;
    s->v[RF_SLO] = slo_wait_s > 0 && a->n_jobs ? (double)a->n_slo / (double)a->n_jobs : (double)NAN;
    free(a->wait);
    free(a->jct);
    free(a->slow);
}

static int scope_cmp(const void *pa, const void *pb)
{
    const runfig_scope *a = pa, *b = pb;
    static const char *const order = "all  classpool ";
    int ka = (int)(strstr(order, a->kind) - order), kb = (int)(strstr(order, b->kind) - order);
    return ka != kb ? ka - kb : strcmp(a->name, b->name);
}

int runfig_load(const char *dir, double slo_wait_s, diag *d, runfig_set *out)
{
    *out = (runfig_set){0};
    char path[4096];
    runjson rj = {0};
    snprintf(path, sizeof path, "%s/run.json", dir);
    int rc = read_run_json(path, d, &rj);
    rjob *jobs = NULL;
    size_t n = 0;
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/jobs.csv", dir);
        rc = read_jobs(path, d, &jobs, &n);
    }
    if (rc == 0) {
        acc *all = NULL;
        size_t n_acc = 0;
        acc_get(&all, &n_acc, "all", "", n);
        for (size_t p = 0; p < rj.n_pools; p++) {
            acc_get(&all, &n_acc, "pool", rj.pool[p], n)->units = rj.pool_units[p];
        }
        for (size_t i = 0; i < n; i++) {
            acc_add(&all[0], &jobs[i], slo_wait_s, rj.horizon_s);
            acc_add(acc_get(&all, &n_acc, "class", jobs[i].klass, n), &jobs[i], slo_wait_s,
                    rj.horizon_s);
            if (jobs[i].pool[0]) {
                acc_add(acc_get(&all, &n_acc, "pool", jobs[i].pool, n), &jobs[i], slo_wait_s,
                        rj.horizon_s);
            }
        }
        out->s = xcalloc(n_acc, sizeof *out->s, "scopes");
        out->n = n_acc;
        for (size_t i = 0; i < n_acc; i++) {
            acc_finish(&all[i], slo_wait_s, rj.horizon_s, &out->s[i]);
        }
        out->s[0].v[RF_ALLOC] = rj.units_mean;
        qsort(out->s, out->n, sizeof *out->s, scope_cmp);
        free(all);
    }
    free(jobs);
    free(rj.pool);
    free(rj.pool_units);
    return rc;
}

const runfig_scope *runfig_get(const runfig_set *f, const char *kind, const char *name)
{
    for (size_t i = 0; i < f->n; i++) {
        if (!strcmp(f->s[i].kind, kind) && !strcmp(f->s[i].name, name)) {
            return &f->s[i];
        }
    }
    return NULL;
}

void runfig_free(runfig_set *f)
{
    free(f->s);
    *f = (runfig_set){0};
}
