/* model/cluster/fragstat.c - FGD's cluster figures (see fragstat.h). */
#include "model/cluster/fragstat.h"

#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/stats.h"
#include "sim/xalloc.h"

static frag_pod shape_of(const job_spec *s)
{
    return frag_pod_make(s->req.per_worker, s->pod.gpu_milli, s->pod.cpu_milli, s->pod.gpu_spec);
}

void fragstat_typical(const job_table *t, frag_typical *out)
{
    fragstat_acc *a = fragstat_acc_create(NULL, job_table_count(t));
    for (job_id j = 0; j < job_table_count(t); j++) {
        fragstat_acc_add(a, job_table_get(t, j));
    }
    fragstat_acc_finish(a, out, 0, NULL, NULL);
}

uint32_t fragstat_dev_held(bool shareable, uint32_t milli_used, uint32_t units_used)
{
    uint32_t held = shareable ? milli_used : units_used ? MILLI_PER_GPU : 0;
    return held > MILLI_PER_GPU ? MILLI_PER_GPU : held;
}

void fragstat_node_add(frag_node *fn, const cluster_gpu *cg, uint32_t held)
{
    if (fn->n_gpus < FRAG_MAX_GPUS) {
        fn->milli_left[fn->n_gpus++] = MILLI_PER_GPU - held;
        fn->gpu_type = fn->gpu_type ? fn->gpu_type : cg->label ? cg->label : cg->type->name;
    }
}

/* Milli-GPU held on GPU g: its last active device's (fragstat_dev_held) that holds anything. */
static uint32_t gpu_held(const cluster *c, gpu_id g)
{
    const cluster_gpu *cg = cluster_gpu_get(c, g);
    uint32_t held = 0;
    for (dev_id d = cg->first_dev; d < cg->first_dev + cg->n_devs; d++) {
        const cluster_device *cd = cluster_device_get(c, d);
        if (cd->active && (cd->shareable || cd->used)) {
            held = fragstat_dev_held(cd->shareable, cd->milli_used, cd->used);
        }
    }
    return held;
}

void fragstat_measure(const cluster *c, const frag_typical *typ, fragstat *out)
{
    memset(out, 0, sizeof *out);
    for (node_id n = 0; n < cluster_n_nodes(c); n++) {
        gpu_id g0;
        uint32_t ng;
        cluster_node_gpus(c, n, &g0, &ng);
        frag_node fn = {.cpu_left = cluster_node_cpu_free(c, n)};
        for (uint32_t i = 0; i < ng; i++) {
            uint32_t held = gpu_held(c, g0 + i);
            out->gpus_total++;
            out->gpus_alloc += held > 0;
            out->milli_total += MILLI_PER_GPU;
            out->milli_alloc += held;
            fragstat_node_add(&fn, cluster_gpu_get(c, g0 + i), held);
        }
        out->milli_idle += frag_idle(&fn);
        out->frag_milli += frag_node_amount(&fn, typ);
    }
    out->frag_ratio = out->milli_idle ? out->frag_milli / (double)out->milli_idle : 0;
}

typedef struct cevent {
    sim_time t;
    int kind; /* 0 end, 1 submit, 2 start: at equal times ends free first, starts follow */
    job_id j;
} cevent;

/* What the allocation curve needs of a job: milli-GPU per GPU, GPUs asked for (per worker x
 * workers), the GPUs it holds: n_g of them, the GPU itself when n_g == 1, else from gpus[g]. */
typedef struct cjob {
    uint32_t milli, gw, g, n_g;
} cjob;

/* Sort ev[0..n) by time, stably. */
static void sort_by_time(cevent *ev, size_t n)
{
    stats_kv *kv = xmalloc((n ? n : 1) * sizeof *kv, "curve sort");
    for (size_t i = 0; i < n; i++) {
        SIM_ASSERT(ev[i].t >= 0);
        kv[i] = (stats_kv){(uint64_t)ev[i].t, (uint64_t)ev[i].kind << 32 | ev[i].j};
    }
    stats_sort_kv(kv, n);
    for (size_t i = 0; i < n; i++) {
        ev[i] = (cevent){(sim_time)kv[i].key, (int)(kv[i].val >> 32), (job_id)kv[i].val};
    }
    free(kv);
}

/* The figures gathered from the jobs in id order. */
struct fragstat_acc {
    frag_shapes *shapes; /* the workload's pods, for the typical ones */
    const cluster *c;    /* NULL: no curve */
    size_t n_jobs, n_added;
    /* What the sweep needs of each job, gathered in id order: the table may hold its ended jobs
     * out of memory (job_table_spill), where a lookup in time order would read a page per
     * event. One record per job, so that an event in time order misses the cache once, not per
     * array; a job on one GPU keeps it in the record, others in gpus. */
    cevent *ev;
    cjob *cj;
    gpu_id *gpus;
    size_t n_g, cap_g;
    /* ends, submissions and starts, each kind in its third of ev in id order, swept in the
     * order (time, kind, job), so at equal times ends free first and starts follow: each third
     * sorted by time (stably, so by job at equal times) unless it already is (submissions come
     * in id order; a FIFO run's starts too), then merged as it is swept. */
    size_t n_kind[3];
    bool sorted[3];
    sim_time last[3];
};

fragstat_acc *fragstat_acc_create(const cluster *c, size_t n_jobs)
{
    fragstat_acc *a = xcalloc(1, sizeof *a, "workload figures");
    a->shapes = frag_shapes_create();
    a->c = c;
    a->n_jobs = n_jobs;
    if (c) {
        a->ev = xcalloc(3 * n_jobs + 1, sizeof *a->ev, "curve events");
        a->cj = xcalloc(n_jobs + 1, sizeof *a->cj, "curve jobs");
        a->cap_g = 64;
        a->gpus = xcalloc(a->cap_g, sizeof *a->gpus, "curve jobs");
    }
    for (int k = 0; k < 3; k++) {
        a->sorted[k] = true;
    }
    return a;
}

void fragstat_acc_add(fragstat_acc *a, const job *jb)
{
    SIM_ASSERT(a->n_added < a->n_jobs && jb->id == a->n_added);
    job_id j = (job_id)a->n_added++;
    frag_pod p = shape_of(&jb->spec);
    if (!jb->spec.pod.clone) {
        frag_shapes_add(a->shapes, &p, jb->spec.req.n_workers);
    }
    if (!a->c) {
        return;
    }
    cjob *cj = &a->cj[j];
    *cj = (cjob){.milli = p.milli, .gw = p.n_gpu * jb->spec.req.n_workers, .n_g = jb->n_units};
    if (jb->n_units == 1) {
        cj->g = cluster_device_get(a->c, jb->units[0])->gpu;
    } else {
        cj->g = (uint32_t)a->n_g;
        for (uint32_t u = 0; u < jb->n_units; u++) {
            if (a->n_g == a->cap_g) {
                a->cap_g *= 2;
                a->gpus = xrealloc(a->gpus, a->cap_g * sizeof *a->gpus, "curve jobs");
            }
            a->gpus[a->n_g++] = cluster_device_get(a->c, jb->units[u])->gpu;
        }
        SIM_ASSERT(a->n_g <= UINT32_MAX);
    }
    const sim_time tk[3] = {jb->end, jb->spec.submit, jb->start};
    const bool has[3] = {jb->state == JOB_DONE, jb->state != JOB_PENDING,
                         jb->state == JOB_RUNNING || jb->state == JOB_DONE};
    for (int k = 0; k < 3; k++) {
        if (has[k]) {
            a->sorted[k] = a->sorted[k] && tk[k] >= a->last[k];
            a->last[k] = tk[k];
            a->ev[k * a->n_jobs + a->n_kind[k]++] = (cevent){tk[k], k, j};
        }
    }
}

/* The allocation curve from the gathered events (a->c set, every job added). */
static size_t curve_sweep(fragstat_acc *acc, double step, fragstat_point **out)
{
    SIM_ASSERT(step > 0);
    const cluster *c = acc->c;
    const size_t *n_kind = acc->n_kind;
    const cjob *cj = acc->cj;
    const gpu_id *gpus = acc->gpus;
    size_t n_ev = 0;
    cevent *seg[3];
    size_t at[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        seg[k] = acc->ev + k * acc->n_jobs;
        if (!acc->sorted[k]) {
            sort_by_time(seg[k], n_kind[k]);
        }
        n_ev += n_kind[k];
    }
    uint32_t n_gpus = cluster_n_gpus(c);
    uint32_t *held = xcalloc(n_gpus ? n_gpus : 1, sizeof(uint32_t), "curve gpus");
    double total = (double)n_gpus * MILLI_PER_GPU;
    uint64_t arrived = 0, alloc = 0;
    uint32_t busy = 0;
    size_t n_pts = 0, cap = 16;
    fragstat_point *pts = xcalloc(cap, sizeof *pts, "curve");
    double next = step;
    for (size_t i = 0; i < n_ev; i++) {
        int kk = -1; /* the kind whose next event comes first: (time, kind) */
        for (int k = 0; k < 3; k++) {
            if (at[k] < n_kind[k] && (kk < 0 || seg[k][at[k]].t < seg[kk][at[kk]].t)) {
                kk = k;
            }
        }
        const cevent e = seg[kk][at[kk]++];
        job_id j = e.j;
        sim_time next_t = -1; /* the time of the event after e */
        for (int k = 0; k < 3; k++) {
            if (at[k] < n_kind[k] && (next_t < 0 || seg[k][at[k]].t < next_t)) {
                next_t = seg[k][at[k]].t;
            }
        }
        const cjob *jj = &cj[j];
        if (e.kind == 1) {
            arrived += (uint64_t)jj->milli * jj->gw;
        } else {
            for (uint32_t u = 0; u < jj->n_g; u++) {
                gpu_id g = jj->n_g == 1 ? jj->g : gpus[jj->g + u];
                uint32_t before = held[g];
                if (e.kind == 2) {
                    held[g] += jj->milli;
                } else {
                    held[g] -= jj->milli;
                }
                busy += before == 0 && held[g] > 0;
                busy -= before > 0 && held[g] == 0;
                /* a GPU counts at most 1000 (several MIG or replica units on one GPU) */
                alloc += (held[g] < MILLI_PER_GPU ? held[g] : MILLI_PER_GPU);
                alloc -= (before < MILLI_PER_GPU ? before : MILLI_PER_GPU);
            }
        }
        if ((i + 1 < n_ev && next_t == e.t) || total <= 0) {
            continue; /* the state after everything at this time */
        }
        double a = (double)arrived / total;
        bool crossed = a >= next, final = i + 1 == n_ev;
        if (crossed || final) {
            if (n_pts == cap) {
                cap *= 2;
                pts = xrealloc(pts, cap * sizeof *pts, "curve");
            }
            pts[n_pts++] = (fragstat_point){a, (double)busy / n_gpus, (double)alloc / total};
        }
        while (next <= a) {
            next += step;
        }
    }
    free(held);
    *out = pts;
    return n_pts;
}

void fragstat_acc_finish(fragstat_acc *a, frag_typical *typ, double step, fragstat_point **pts,
                         size_t *n_pts)
{
    SIM_ASSERT(a->n_added == a->n_jobs && (!pts || a->c));
    if (typ) {
        frag_shapes_finish(a->shapes, FRAG_TYPICAL_SHARE, typ);
    } else {
        frag_typical none;
        frag_shapes_finish(a->shapes, FRAG_TYPICAL_SHARE, &none);
        frag_typical_fini(&none);
    }
    if (pts) {
        *n_pts = curve_sweep(a, step, pts);
    }
    free(a->ev);
    free(a->cj);
    free(a->gpus);
    free(a);
}
