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

/* A submission: its time and the milli-GPU it asks for (per GPU x GPUs x workers). */
typedef struct csub {
    sim_time t;
    uint64_t milli;
} csub;

/* A placed job (running or done): from start until end (SIM_TIME_MAX while running), milli
 * per GPU on n_g GPUs: the GPU itself when n_g == 1, else from gpus[g]. */
typedef struct crun {
    sim_time start, end;
    uint32_t milli, g, n_g;
} crun;

/* The figures gathered from the jobs in id order. */
struct fragstat_acc {
    frag_shapes *shapes; /* the workload's pods, for the typical ones */
    const cluster *c;    /* NULL: no curve */
    size_t n_jobs, n_added;
    /* The curve's points come from the submissions alone (arrived workload crossing a step, in
     * time order) and the last event; the allocation at a point from the placed jobs active
     * then. So the curve keeps a submission and a placed job's interval per job, in id order
     * (the table may hold its ended jobs out of memory: a lookup in time order would read a
     * page per event), and needs no sort of every event. */
    csub *sub;
    size_t n_sub;
    bool sub_sorted;
    crun *run;
    size_t n_run;
    gpu_id *gpus;
    size_t n_g, cap_g;
    sim_time t_last; /* the last event (submission, start or end) */
};

fragstat_acc *fragstat_acc_create(const cluster *c, size_t n_jobs)
{
    fragstat_acc *a = xcalloc(1, sizeof *a, "workload figures");
    a->shapes = frag_shapes_create();
    a->c = c;
    a->n_jobs = n_jobs;
    if (c) {
        a->sub = xcalloc(n_jobs + 1, sizeof *a->sub, "curve submissions");
        a->run = xcalloc(n_jobs + 1, sizeof *a->run, "curve jobs");
        a->cap_g = 64;
        a->gpus = xcalloc(a->cap_g, sizeof *a->gpus, "curve jobs");
    }
    a->sub_sorted = true;
    a->t_last = -1;
    return a;
}

static sim_time later(sim_time a, sim_time b)
{
    return a > b ? a : b;
}

void fragstat_acc_add(fragstat_acc *a, const job *jb)
{
    SIM_ASSERT(a->n_added < a->n_jobs && jb->id == a->n_added);
    a->n_added++;
    frag_pod p = shape_of(&jb->spec);
    if (!jb->spec.pod.clone) {
        frag_shapes_add(a->shapes, &p, jb->spec.req.n_workers);
    }
    if (!a->c || jb->state == JOB_PENDING) { /* a job not yet submitted has no event */
        return;
    }
    SIM_ASSERT(jb->spec.submit >= 0);
    a->sub_sorted = a->sub_sorted && (a->n_sub == 0 || jb->spec.submit >= a->sub[a->n_sub - 1].t);
    a->sub[a->n_sub++] = (csub){jb->spec.submit, (uint64_t)p.milli * p.n_gpu * jb->spec.req.n_workers};
    a->t_last = later(a->t_last, jb->spec.submit);
    if (jb->state != JOB_RUNNING && jb->state != JOB_DONE) {
        return;
    }
    bool done = jb->state == JOB_DONE;
    crun *r = &a->run[a->n_run++];
    *r = (crun){.start = jb->start, .end = done ? jb->end : SIM_TIME_MAX, .milli = p.milli,
                .n_g = jb->n_units};
    a->t_last = later(a->t_last, done ? later(jb->start, jb->end) : jb->start);
    if (jb->n_units == 1) {
        r->g = cluster_device_get(a->c, jb->units[0])->gpu;
    } else {
        r->g = (uint32_t)a->n_g;
        for (uint32_t u = 0; u < jb->n_units; u++) {
            if (a->n_g == a->cap_g) {
                a->cap_g *= 2;
                a->gpus = xrealloc(a->gpus, a->cap_g * sizeof *a->gpus, "curve jobs");
            }
            a->gpus[a->n_g++] = cluster_device_get(a->c, jb->units[u])->gpu;
        }
        SIM_ASSERT(a->n_g <= UINT32_MAX);
    }
}

/* Sort the submissions by time (they come in id order, which is time order unless a trace
 * gave them otherwise; their sums do not depend on the order at equal times). */
static void sort_subs(csub *s, size_t n)
{
    stats_kv *kv = xmalloc((n ? n : 1) * sizeof *kv, "curve sort");
    for (size_t i = 0; i < n; i++) {
        kv[i] = (stats_kv){(uint64_t)s[i].t, s[i].milli};
    }
    stats_sort_kv(kv, n);
    for (size_t i = 0; i < n; i++) {
        s[i] = (csub){(sim_time)kv[i].key, kv[i].val};
    }
    free(kv);
}

/* The index of the first of the n times at[] (ascending) at or after t; n when none. The half
 * is picked by a conditional move, not a branch: where a job's start or end falls among the
 * points is as good as random, and the mispredicted branches of two searches a job were half
 * the curve's time (at[] of ~2 400 points is in the cache). */
static size_t first_at(const sim_time *at, size_t n, sim_time t)
{
    if (n == 0) {
        return 0;
    }
    const sim_time *base = at;
    while (n > 1) { /* the answer lies in base[0..n] */
        size_t half = n / 2;
        base = base[half] < t ? base + half : base;
        n -= half;
    }
    return (size_t)(base - at) + (*base < t);
}

/* Where times fall among the n points at[] (ascending): buckets of 2^shift ns from at[0], about
 * four a point, each with the range of points a time in it can fall at (first[b]: the first
 * point at or after the bucket's start), so that a search looks among the few points of one
 * bucket. */
typedef struct point_index {
    const sim_time *at;
    size_t n;
    unsigned shift;
    uint32_t *first; /* n_b + 1 entries; NULL: fewer than two points */
} point_index;

static void index_make(point_index *x, const sim_time *at, size_t n)
{
    *x = (point_index){.at = at, .n = n};
    if (n < 2) {
        return;
    }
    uint64_t span = (uint64_t)(at[n - 1] - at[0]);
    while ((span >> x->shift) >= 4 * (uint64_t)n) {
        x->shift++;
    }
    size_t n_b = (size_t)(span >> x->shift) + 1, i = 0;
    x->first = xmalloc((n_b + 1) * sizeof *x->first, "curve");
    for (size_t b = 0; b <= n_b; b++) {
        sim_time start = at[0] + (sim_time)((uint64_t)b << x->shift);
        while (i < n && at[i] < start) {
            i++;
        }
        x->first[b] = (uint32_t)i;
    }
}

/* first_at(x->at, x->n, t): between the first points of t's bucket and of the next. */
static size_t index_find(const point_index *x, sim_time t)
{
    if (!x->first) {
        return first_at(x->at, x->n, t);
    }
    if (t <= x->at[0]) {
        return 0;
    }
    if (t > x->at[x->n - 1]) {
        return x->n;
    }
    size_t b = (size_t)((uint64_t)(t - x->at[0]) >> x->shift), lo = x->first[b];
    return lo + first_at(x->at + lo, x->first[b + 1] - lo, t);
}

/* The allocation curve (a->c set, every job added). A point is the state after everything at
 * its time: where the submissions at a time take arrived workload to the next multiple of step
 * or past it, and at the last event of all. A placed job holds its milli-GPU on each of its
 * GPUs at the times t with start <= t < end (at equal times ends free first and starts follow,
 * so a job that ends at t holds nothing at t), and a GPU counts at most 1000. */
static size_t curve_points(fragstat_acc *acc, double step, fragstat_point **out)
{
    SIM_ASSERT(step > 0);
    uint32_t n_gpus = cluster_n_gpus(acc->c);
    double total = (double)n_gpus * MILLI_PER_GPU;
    size_t n_pts = 0, cap = 16;
    fragstat_point *pts = xcalloc(cap, sizeof *pts, "curve");
    sim_time *at = xcalloc(cap, sizeof *at, "curve");
    if (!acc->sub_sorted) {
        sort_subs(acc->sub, acc->n_sub);
    }
    uint64_t arrived = 0;
    double next = step;
    for (size_t i = 0; i < acc->n_sub && total > 0; i++) {
        arrived += acc->sub[i].milli;
        sim_time t = acc->sub[i].t;
        if (i + 1 < acc->n_sub && acc->sub[i + 1].t == t) {
            continue; /* every submission at this time */
        }
        double a = (double)arrived / total;
        bool final = i + 1 == acc->n_sub && t == acc->t_last;
        if (a >= next || final) {
            if (n_pts == cap) {
                cap *= 2;
                pts = xrealloc(pts, cap * sizeof *pts, "curve");
                at = xrealloc(at, cap * sizeof *at, "curve");
            }
            at[n_pts] = t;
            pts[n_pts++].arrived = a;
        }
        while (next <= a) {
            next += step;
        }
    }
    if (total > 0 && acc->n_sub > 0 && (n_pts == 0 || at[n_pts - 1] != acc->t_last)) {
        if (n_pts == cap) { /* the last event, after every submission */
            cap *= 2;
            pts = xrealloc(pts, cap * sizeof *pts, "curve");
            at = xrealloc(at, cap * sizeof *at, "curve");
        }
        at[n_pts] = acc->t_last;
        pts[n_pts++].arrived = (double)arrived / total;
    }
    /* Placed job r holds at the points [lo, hi): the first at or after its start, the first at
     * or after its end. Counted by lo and by hi (a counting sort over the points), the points
     * are then swept in order, each taking the jobs that end and start holding there, with the
     * busy GPUs and the held milli-GPU kept as each GPU's counter changes: O(jobs + points),
     * whatever the points' number (~2 400 at synth-10k-1m, where arrived work is 120 times the
     * cluster) and the jobs' lengths. */
    size_t n_run = acc->n_run;
    uint32_t *lo = xcalloc(n_run + 1, sizeof *lo, "curve"), *hi = xcalloc(n_run + 1, sizeof *hi, "curve");
    size_t *first_lo = xcalloc(n_pts + 2, sizeof *first_lo, "curve");
    size_t *first_hi = xcalloc(n_pts + 2, sizeof *first_hi, "curve");
    point_index idx;
    index_make(&idx, at, n_pts);
    for (size_t i = 0; i < n_run; i++) {
        lo[i] = (uint32_t)index_find(&idx, acc->run[i].start);
        hi[i] = (uint32_t)index_find(&idx, acc->run[i].end);
        first_lo[lo[i] + 1]++;
        first_hi[hi[i] + 1]++;
    }
    free(idx.first);
    for (size_t k = 0; k <= n_pts; k++) {
        first_lo[k + 1] += first_lo[k];
        first_hi[k + 1] += first_hi[k];
    }
    uint32_t *by_lo = xcalloc(n_run + 1, sizeof *by_lo, "curve");
    uint32_t *by_hi = xcalloc(n_run + 1, sizeof *by_hi, "curve");
    for (size_t i = 0; i < n_run; i++) { /* first_lo[k] ends as the end of bucket k */
        by_lo[first_lo[lo[i]]++] = (uint32_t)i;
        by_hi[first_hi[hi[i]]++] = (uint32_t)i;
    }
    free(lo);
    free(hi);
    uint32_t *held = xcalloc(n_gpus ? n_gpus : 1, sizeof *held, "curve gpus");
    uint64_t alloc = 0;
    uint32_t busy = 0;
    size_t at_lo = 0, at_hi = 0;
    for (size_t k = 0; k < n_pts; k++) {
        for (int add = 0; add < 2; add++) { /* those that stop holding, then those that start */
            size_t *from = add ? &at_lo : &at_hi;
            const uint32_t *order = add ? by_lo : by_hi;
            size_t end = add ? first_lo[k] : first_hi[k];
            for (; *from < end; (*from)++) {
                if (*from + 8 < end) { /* the jobs that stop at a point are far apart */
                    __builtin_prefetch(&acc->run[order[*from + 8]]);
                }
                const crun *r = &acc->run[order[*from]];
                for (uint32_t u = 0; u < r->n_g; u++) {
                    gpu_id g = r->n_g == 1 ? r->g : acc->gpus[r->g + u];
                    uint32_t before = held[g];
                    held[g] = add ? held[g] + r->milli : held[g] - r->milli;
                    busy += before == 0 && held[g] > 0;
                    busy -= before > 0 && held[g] == 0;
                    /* a GPU counts at most 1000 (several MIG or replica units on one GPU) */
                    alloc += held[g] < MILLI_PER_GPU ? held[g] : MILLI_PER_GPU;
                    alloc -= before < MILLI_PER_GPU ? before : MILLI_PER_GPU;
                }
            }
        }
        pts[k].gpu_alloc = (double)busy / n_gpus;
        pts[k].milli_alloc = (double)alloc / total;
    }
    free(by_lo);
    free(by_hi);
    free(first_lo);
    free(first_hi);
    free(held);
    free(at);
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
        *n_pts = curve_points(a, step, pts);
    }
    free(a->sub);
    free(a->run);
    free(a->gpus);
    free(a);
}
