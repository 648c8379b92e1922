/* tools/actlog.c - device activity from the physics (see actlog.h). */
#include "tools/actlog.h"

#include <math.h>
#include <stdlib.h>

#include "sim/xalloc.h"

static void push(actlog *a, sim_time t, dev_id d, double util, double sm)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 256;
        a->recs = xrealloc(a->recs, a->cap * sizeof *a->recs, "activity records");
    }
    a->recs[a->n++] = (actlog_rec){t, d, util, sm};
}

/* What one job on a GPU adds to each device it holds a unit of. */
typedef struct job_term {
    const job *j;
    double busy; /* the chance it keeps the device busy: idle *= 1 - busy */
    double sm;   /* SM activity it adds */
} job_term;

/* Recompute and record the activity of every device of GPU g now. Each job's terms are
 * computed once for the GPU (they were computed again for each of a MIG GPU's devices), then
 * applied device by device in the same order: the same values. */
static void gpu_activity(actlog *a, const world *w, gpu_id g)
{
    const cluster *c = world_cluster(w);
    const job_table *jt = world_jobs(w);
    const cluster_gpu *cg = cluster_gpu_get(c, g);
    uint32_t n_on = 0;
    const job_id *on = world_gpu_jobs(w, g, &n_on);
    job_term small[16];
    job_term *t = n_on <= 16 ? small : xcalloc(n_on, sizeof *t, "device activity");
    for (uint32_t i = 0; i < n_on; i++) {
        const job *j = job_table_get(jt, on[i]);
        if (isnan(a->job_g[on[i]])) {
            jobrate_solo_activity(a->rc, c, &j->spec, j->units[0], &a->job_g[on[i]],
                                  &a->job_s[on[i]]);
        }
        double r = world_job_rate(w, on[i]), gf = a->job_g[on[i]];
        t[i] = (job_term){j, fmin(1.0, fmax(0.0, 1.0 - r * (1.0 - gf))),
                          r * gf * a->job_s[on[i]]};
    }
    for (dev_id d = cg->first_dev; d < cg->first_dev + cg->n_devs; d++) {
        double idle = 1.0, sm = 0.0;
        for (uint32_t i = 0; i < n_on; i++) {
            for (uint32_t u = 0; u < t[i].j->n_units; u++) {
                if (t[i].j->units[u] == d) {
                    idle *= 1.0 - t[i].busy;
                    sm += t[i].sm;
                }
            }
        }
        double util = 1.0 - idle;
        sm = fmin(1.0, sm);
        if (util != a->last_util[d] || sm != a->last_sm[d]) {
            push(a, world_now(w), d, util, sm);
            a->last_util[d] = util;
            a->last_sm[d] = sm;
        }
    }
    if (t != small) {
        free(t);
    }
}

static void on_job(world *w, void *ctx, job_id id, world_job_event ev)
{
    (void)ev;
    actlog *a = ctx;
    const cluster *c = world_cluster(w);
    const job *j = job_table_get(world_jobs(w), id);
    gpu_id last = UINT32_MAX;
    for (uint32_t u = 0; u < j->n_units; u++) {
        gpu_id g = cluster_device_get(c, j->units[u])->gpu;
        if (g != last) { /* a job's units are ordered by device, so GPU by GPU */
            gpu_activity(a, w, g);
            last = g;
        }
    }
}

void actlog_init(actlog *a, world *w, const jobrate_ctx *rc)
{
    const cluster *c = world_cluster(w);
    *a = (actlog){.rc = rc,
                  .n_devs = cluster_n_devices(c),
                  .n_jobs = job_table_count(world_jobs(w))};
    a->last_util = xcalloc(a->n_devs + 1, sizeof *a->last_util, "device activity");
    a->last_sm = xcalloc(a->n_devs + 1, sizeof *a->last_sm, "device SM activity");
    a->job_g = xcalloc(a->n_jobs + 1, sizeof *a->job_g, "job GPU fractions");
    a->job_s = xcalloc(a->n_jobs + 1, sizeof *a->job_s, "job SM fractions");
    for (size_t i = 0; i < a->n_jobs; i++) {
        a->job_g[i] = (double)NAN;
    }
    world_observe(w, on_job, a);
}

void actlog_finish(actlog *a)
{
    size_t *count = xcalloc((size_t)a->n_devs + 1, sizeof *count, "activity offsets");
    for (size_t i = 0; i < a->n; i++) {
        count[a->recs[i].dev + 1]++;
    }
    for (uint32_t d = 0; d < a->n_devs; d++) {
        count[d + 1] += count[d];
    }
    /* a counting sort by device keeps each device's records in recording (time) order */
    actlog_rec *sorted = xcalloc(a->n + 1, sizeof *sorted, "activity records");
    size_t *pos = xcalloc((size_t)a->n_devs + 1, sizeof *pos, "activity positions");
    for (uint32_t d = 0; d <= a->n_devs; d++) {
        pos[d] = count[d];
    }
    for (size_t i = 0; i < a->n; i++) {
        sorted[pos[a->recs[i].dev]++] = a->recs[i];
    }
    free(pos);
    free(a->recs);
    a->recs = sorted;
    a->cap = a->n;
    a->dev_first = count;
}

void actlog_fini(actlog *a)
{
    free(a->recs);
    free(a->dev_first);
    free(a->last_util);
    free(a->last_sm);
    free(a->job_g);
    free(a->job_s);
    *a = (actlog){0};
}

void actlog_cursor_init(actlog_cursor *c, const actlog *a, dev_id d)
{
    *c = (actlog_cursor){.a = a, .next = a->dev_first[d], .stop = a->dev_first[d + 1]};
}

void actlog_cursor_advance(actlog_cursor *c, sim_time t)
{
    SIM_ASSERT(t >= c->t);
    while (c->next < c->stop && c->a->recs[c->next].t <= t) {
        const actlog_rec *r = &c->a->recs[c->next++];
        c->util_ns += c->util * (double)(r->t - c->t);
        c->sm_ns += c->sm * (double)(r->t - c->t);
        c->t = r->t;
        c->util = r->util;
        c->sm = r->sm;
    }
    c->util_ns += c->util * (double)(t - c->t);
    c->sm_ns += c->sm * (double)(t - c->t);
    c->t = t;
}

sim_time actlog_cursor_next_time(const actlog_cursor *c)
{
    return c->next < c->stop ? c->a->recs[c->next].t : SIM_TIME_MAX;
}

double actlog_dev_weight(const cluster *c, dev_id d)
{
    const cluster_device *dev = cluster_device_get(c, d);
    const cluster_gpu *cg = cluster_gpu_get(c, dev->gpu);
    double sms = cg->type->sms_total;
    return cg->n_devs > 1 && sms > 0 ? dev->sms / sms : 1.0;
}

void actlog_means(const actlog *a, const cluster *c, sim_time end, double *util_mean,
                  double *sm_mean)
{
    double u = 0, m = 0;
    uint32_t n = cluster_n_gpus(c);
    for (gpu_id g = 0; g < n && end > 0; g++) {
        const cluster_gpu *cg = cluster_gpu_get(c, g);
        double gu = 0, gm = 0;
        for (dev_id d = cg->first_dev; d < cg->first_dev + cg->n_devs; d++) {
            actlog_cursor cur;
            actlog_cursor_init(&cur, a, d);
            actlog_cursor_advance(&cur, end);
            double w = actlog_dev_weight(c, d);
            gu += w * cur.util_ns / (double)end;
            gm += w * cur.sm_ns / (double)end;
        }
        u += fmin(1.0, gu);
        m += fmin(1.0, gm);
    }
    *util_mean = n > 0 ? u / n : 0;
    *sm_mean = n > 0 ? m / n : 0;
}
