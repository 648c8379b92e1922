/* tools/devlog.c - per-device occupancy of a finished run (see devlog.h). */
#include "tools/devlog.h"

#include <stdlib.h>

#include "sim/err.h"
#include "sim/xalloc.h"

/* Sort key: the span's GPU is looked up through its device, so keep it beside the span. */
typedef struct keyed_span {
    gpu_id gpu;
    devlog_span s;
} keyed_span;

static int cmp_keyed(const void *pa, const void *pb)
{
    const keyed_span *a = pa, *b = pb;
    if (a->gpu != b->gpu) {
        return a->gpu < b->gpu ? -1 : 1;
    }
    if (a->s.start != b->s.start) {
        return a->s.start < b->s.start ? -1 : 1;
    }
    if (a->s.dev != b->s.dev) {
        return a->s.dev < b->s.dev ? -1 : 1;
    }
    return a->s.job < b->s.job ? -1 : a->s.job > b->s.job;
}

/* Group the world's layout changes by GPU (a stable counting sort: time order within a GPU). */
static void group_changes(devlog *out, const world *w)
{
    const cluster *c = world_cluster(w);
    size_t n;
    const world_active_change *log = world_active_log(w, &n);
    uint32_t n_gpus = cluster_n_gpus(c);
    out->act_first = xcalloc((size_t)n_gpus + 2, sizeof *out->act_first, "layout changes");
    out->act = xcalloc(n ? n : 1, sizeof *out->act, "layout changes");
    for (size_t i = 0; i < n; i++) {
        out->act_first[cluster_device_get(c, log[i].dev)->gpu + 2]++;
    }
    for (uint32_t g = 0; g < n_gpus; g++) {
        out->act_first[g + 2] += out->act_first[g + 1];
    }
    for (size_t i = 0; i < n; i++) {
        out->act[out->act_first[cluster_device_get(c, log[i].dev)->gpu + 1]++] = log[i];
    }
}

void devlog_build(const world *w, devlog *out)
{
    const cluster *c = world_cluster(w);
    const job_table *jt = world_jobs(w);
    size_t n_jobs = job_table_count(jt), n_killed, n = 0;
    const world_killed_unit *killed = world_killed_units(w, &n_killed);
    for (job_id k = 0; k < n_jobs; k++) {
        const job *j = job_table_get(jt, k);
        if (j->state == JOB_DONE || j->state == JOB_RUNNING) {
            n += j->n_units;
        }
    }
    keyed_span *ks = xcalloc(n + n_killed ? n + n_killed : 1, sizeof *ks, "device spans");
    size_t i = 0;
    for (job_id k = 0; k < n_jobs; k++) { /* the last run of each job that holds or held units */
        const job *j = job_table_get(jt, k);
        if (j->state != JOB_DONE && j->state != JOB_RUNNING) {
            continue;
        }
        for (uint32_t u = 0; u < j->n_units; u++) {
            ks[i++] = (keyed_span){.gpu = cluster_device_get(c, j->units[u])->gpu,
                                   .s = {.start = j->run_start,
                                         .end = j->state == JOB_DONE ? j->end : SIM_TIME_MAX,
                                         .dev = j->units[u],
                                         .job = k,
                                         .mem_bytes = j->spec.mem_bytes,
                                         .milli = j->spec.pod.gpu_milli}};
        }
    }
    for (size_t q = 0; q < n_killed; q++) { /* the runs that a kill or a preemption ended */
        const job *j = job_table_get(jt, killed[q].job);
        ks[i++] = (keyed_span){.gpu = cluster_device_get(c, killed[q].dev)->gpu,
                               .s = {.start = killed[q].from,
                                     .end = killed[q].to,
                                     .dev = killed[q].dev,
                                     .job = killed[q].job,
                                     .mem_bytes = j->spec.mem_bytes,
                                     .milli = j->spec.pod.gpu_milli}};
    }
    n = i;
    qsort(ks, n, sizeof *ks, cmp_keyed);
    uint32_t n_gpus = cluster_n_gpus(c);
    out->n = n;
    out->spans = xcalloc(n ? n : 1, sizeof *out->spans, "device spans");
    out->gpu_first = xcalloc((size_t)n_gpus + 1, sizeof *out->gpu_first, "device spans");
    out->end = world_get_totals(w).horizon;
    size_t at = 0;
    for (gpu_id g = 0; g <= n_gpus; g++) {
        while (at < n && ks[at].gpu < g) {
            at++;
        }
        out->gpu_first[g] = at;
    }
    for (i = 0; i < n; i++) {
        out->spans[i] = ks[i].s;
    }
    free(ks);
    group_changes(out, w);
}

void devlog_fini(devlog *l)
{
    free(l->spans);
    free(l->gpu_first);
    free(l->act);
    free(l->act_first);
    *l = (devlog){0};
}

/* Events in time order; at one instant ends before starts, so a unit handed from one job to the
 * next does not count twice. */
static int cmp_ev(const void *pa, const void *pb)
{
    const struct devlog_ev *a = pa, *b = pb;
    if (a->t != b->t) {
        return a->t < b->t ? -1 : 1;
    }
    if (a->delta != b->delta) {
        return a->delta < b->delta ? -1 : 1;
    }
    return a->dev < b->dev ? -1 : a->dev > b->dev;
}

void devlog_cursor_init(devlog_cursor *cur, const devlog *l, const cluster *c, gpu_id g)
{
    const cluster_gpu *cg = cluster_gpu_get(c, g);
    SIM_ASSERT(cg->n_devs <= DEVLOG_MAX_DEVS);
    *cur = (devlog_cursor){.c = c, .gpu = g, .first_dev = cg->first_dev, .n_devs = cg->n_devs};
    size_t a = l->gpu_first[g], b = l->gpu_first[g + 1];
    cur->ev = xcalloc(2 * (b - a) + 1, sizeof *cur->ev, "device events");
    for (size_t i = a; i < b; i++) {
        const devlog_span *s = &l->spans[i];
        uint32_t d = s->dev - cg->first_dev;
        uint32_t milli = s->milli ? s->milli : MILLI_PER_GPU / cluster_device_get(c, s->dev)->slots;
        cur->ev[cur->n_ev++] = (struct devlog_ev){s->start, +1, d, s->mem_bytes, milli};
        if (s->end != SIM_TIME_MAX) {
            cur->ev[cur->n_ev++] = (struct devlog_ev){s->end, -1, d, s->mem_bytes, milli};
        }
    }
    qsort(cur->ev, cur->n_ev, sizeof *cur->ev, cmp_ev);
}

/* Add the busy time of (cur->t, t] in the current state. */
static void integrate(devlog_cursor *cur, sim_time t)
{
    sim_time dt = t - cur->t;
    bool any = false;
    for (uint32_t d = 0; d < cur->n_devs; d++) {
        if (cur->used[d] > 0) {
            cur->busy_ns[d] += dt;
            any = true;
        }
    }
    if (any) {
        cur->gpu_busy_ns += dt;
    }
    cur->t = t;
}

void devlog_cursor_advance(devlog_cursor *cur, sim_time t)
{
    SIM_ASSERT(t >= cur->t);
    while (cur->next < cur->n_ev && cur->ev[cur->next].t <= t) {
        const struct devlog_ev *e = &cur->ev[cur->next++];
        integrate(cur, e->t);
        if (e->delta > 0) {
            cur->used[e->dev]++;
            cur->mem_bytes[e->dev] += e->mem_bytes;
            cur->milli[e->dev] += e->milli;
        } else {
            SIM_ASSERT(cur->used[e->dev] > 0 && cur->mem_bytes[e->dev] >= e->mem_bytes &&
                       cur->milli[e->dev] >= e->milli);
            cur->used[e->dev]--;
            cur->mem_bytes[e->dev] -= e->mem_bytes;
            cur->milli[e->dev] -= e->milli;
        }
    }
    integrate(cur, t);
}

void devlog_cursor_fini(devlog_cursor *cur)
{
    free(cur->ev);
    cur->ev = NULL;
}

/* ---- layout history ------------------------------------------------------------------------ */

void devlog_layout_init(devlog_layout *lay, const devlog *l, const cluster *c, gpu_id g)
{
    const cluster_gpu *cg = cluster_gpu_get(c, g);
    SIM_ASSERT(cg->n_devs <= DEVLOG_MAX_DEVS);
    *lay = (devlog_layout){.log = l, .c = c, .first_dev = cg->first_dev, .n_devs = cg->n_devs};
    lay->next = l->act_first[g];
    lay->stop = l->act_first[g + 1];
    bool seen[DEVLOG_MAX_DEVS] = {false};
    for (uint32_t k = 0; k < cg->n_devs; k++) {
        lay->on[k] = cluster_device_get(c, cg->first_dev + k)->active;
    }
    for (size_t i = lay->next; i < lay->stop; i++) {
        uint32_t k = l->act[i].dev - cg->first_dev;
        if (!seen[k]) {
            lay->on[k] = !l->act[i].on;
            seen[k] = true;
        }
    }
}

void devlog_layout_advance(devlog_layout *lay, sim_time t)
{
    while (lay->next < lay->stop && lay->log->act[lay->next].t <= t) {
        lay->on[lay->log->act[lay->next].dev - lay->first_dev] = lay->log->act[lay->next].on;
        lay->next++;
    }
}

sim_time devlog_layout_next_time(const devlog_layout *lay)
{
    return lay->next < lay->stop ? lay->log->act[lay->next].t : SIM_TIME_MAX;
}

bool devlog_layout_mig(const devlog_layout *lay)
{
    for (uint32_t k = 0; k < lay->n_devs; k++) {
        if (lay->on[k] && !cluster_device_get(lay->c, lay->first_dev + k)->profile) {
            return false;
        }
    }
    return true;
}

bool devlog_next_sample(sim_time *t, sim_time interval_ns, sim_time end)
{
    if (*t >= end) {
        return false;
    }
    *t = end - *t > interval_ns ? *t + interval_ns : end;
    return true;
}
