/* model/cluster/fault.c - fault processes, blast radius and cost (see fault.h). */
#include "model/cluster/fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/xalloc.h"

static const char *const kind_names[FAULT_N_KINDS] = {"gpu", "instance", "node", "nvlink"};
static const char *const mode_names[FAULT_N_MODES] = {"whole", "mig", "timeslice", "mps"};

const char *fault_kind_name(fault_kind k)
{
    return k < FAULT_N_KINDS ? kind_names[k] : "unknown";
}

const char *fault_mode_name(fault_mode m)
{
    return m < FAULT_N_MODES ? mode_names[m] : "unknown";
}

bool fault_kind_find(const char *name, fault_kind *out)
{
    for (int k = 0; k < FAULT_N_KINDS; k++) {
        if (!strcmp(kind_names[k], name)) {
            *out = (fault_kind)k;
            return true;
        }
    }
    return false;
}

fault_mode fault_device_mode(const cluster *c, dev_id d)
{
    const cluster_device *cd = cluster_device_get(c, d);
    switch (cd->sharing) {
    case CLUSTER_SHARE_TIMESLICE:
        return FAULT_MODE_TIMESLICE;
    case CLUSTER_SHARE_MPS:
        return FAULT_MODE_MPS;
    case CLUSTER_SHARE_NONE:
        break;
    }
    return cd->profile ? FAULT_MODE_MIG : FAULT_MODE_WHOLE;
}

/* ---- the random process -------------------------------------------------------------------- */

static int cmp_event(const void *pa, const void *pb)
{
    const fault_event *a = pa, *b = pb;
    if (a->at != b->at) {
        return a->at < b->at ? -1 : 1;
    }
    if (a->kind != b->kind) {
        return a->kind < b->kind ? -1 : 1;
    }
    if (a->target != b->target) {
        return a->target < b->target ? -1 : 1;
    }
    return (a->repair_ns > b->repair_ns) - (a->repair_ns < b->repair_ns);
}

void fault_sort(fault_event *ev, size_t n)
{
    if (n > 1) {
        qsort(ev, n, sizeof *ev, cmp_event);
    }
}

typedef struct ev_buf {
    fault_event *ev;
    size_t n, cap;
} ev_buf;

static void push(ev_buf *b, fault_event e)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->ev = xrealloc(b->ev, b->cap * sizeof *b->ev, "fault events");
    }
    b->ev[b->n++] = e;
}

/* The device an instance fault on GPU g strikes: probability proportional to its SMs. */
static dev_id pick_device(const cluster *c, gpu_id g, rng_stream *s)
{
    const cluster_gpu *cg = cluster_gpu_get(c, g);
    double total = 0;
    for (uint32_t k = 0; k < cg->n_devs; k++) {
        total += cluster_device_get(c, cg->first_dev + k)->sms;
    }
    double u = rng_uniform01(s) * total;
    for (uint32_t k = 0; k < cg->n_devs; k++) {
        u -= cluster_device_get(c, cg->first_dev + k)->sms;
        if (u < 0) {
            return cg->first_dev + k;
        }
    }
    return cg->first_dev + cg->n_devs - 1;
}

/* Poisson failures of one component over [0, horizon). */
static void draw_component(const cluster *c, const fault_process *p, const rng_root *root,
                           fault_kind k, uint32_t comp, sim_time horizon, ev_buf *b)
{
    static const char *const streams[FAULT_N_KINDS] = {FAULT_STREAM_GPU, FAULT_STREAM_INSTANCE,
                                                       FAULT_STREAM_NODE, FAULT_STREAM_NVLINK};
    rng_stream *s = rng_stream_open(root, streams[k], comp);
    double t = 0;
    sim_time repair = sim_time_from_s(p->repair_s[k]);
    for (;;) {
        t += rng_exponential(s, p->mtbf_s[k]);
        /* compared in seconds before converting: an mtbf of centuries draws a t past sim_time's
         * range (+-292 years), which the conversion asserts on */
        if (t >= sim_time_to_s(horizon)) {
            break;
        }
        sim_time at = sim_time_from_s(t);
        if (at >= horizon) {
            break;
        }
        uint32_t target = k == FAULT_INSTANCE ? pick_device(c, comp, s) : comp;
        push(b, (fault_event){.at = at, .kind = k, .target = target, .repair_ns = repair});
    }
    rng_stream_close(s);
}

/* GPUs of node n: first .. first + count - 1 (GPUs are node-major). */
static void node_gpus(const cluster *c, node_id n, gpu_id *first, uint32_t *count)
{
    dev_id d0;
    uint32_t nd;
    cluster_node_devices(c, n, &d0, &nd);
    if (nd == 0) {
        *first = 0;
        *count = 0;
        return;
    }
    *first = cluster_device_get(c, d0)->gpu;
    *count = cluster_device_get(c, d0 + nd - 1)->gpu - *first + 1;
}

void fault_generate(const cluster *c, const fault_process *p, const rng_root *root,
                    sim_time horizon, fault_event **out, size_t *n)
{
    ev_buf b = {0};
    for (int k = 0; k < FAULT_N_KINDS; k++) {
        if (!(p->mtbf_s[k] > 0)) {
            continue;
        }
        if (k == FAULT_GPU || k == FAULT_INSTANCE) {
            for (gpu_id g = 0; g < cluster_n_gpus(c); g++) {
                draw_component(c, p, root, (fault_kind)k, g, horizon, &b);
            }
            continue;
        }
        for (node_id nd = 0; nd < cluster_n_nodes(c); nd++) {
            gpu_id g0;
            uint32_t ng;
            node_gpus(c, nd, &g0, &ng);
            if (k == FAULT_NODE || ng >= 2) {
                draw_component(c, p, root, (fault_kind)k, nd, horizon, &b);
            }
        }
    }
    fault_sort(b.ev, b.n);
    *out = b.ev;
    *n = b.n;
}

bool fault_resolve(const cluster *c, fault_kind k, const char *node, uint32_t gpu,
                   uint32_t instance, fault_event *out, char *why, size_t why_len)
{
    node_id nd = 0;
    while (nd < cluster_n_nodes(c) && strcmp(cluster_node_name(c, nd), node) != 0) {
        nd++;
    }
    if (nd == cluster_n_nodes(c)) {
        snprintf(why, why_len, "no node is named '%s'", node);
        return false;
    }
    out->kind = k;
    if (k == FAULT_NODE || k == FAULT_NVLINK) {
        out->target = nd;
        return true;
    }
    gpu_id g0;
    uint32_t ng;
    node_gpus(c, nd, &g0, &ng);
    if (gpu >= ng) {
        snprintf(why, why_len, "node '%s' has %u GPUs, no GPU %u", node, (unsigned)ng,
                 (unsigned)gpu);
        return false;
    }
    const cluster_gpu *cg = cluster_gpu_get(c, g0 + gpu);
    if (k == FAULT_GPU) {
        out->target = g0 + gpu;
        return true;
    }
    if (instance >= cg->n_devs) {
        snprintf(why, why_len, "GPU %u of node '%s' has %u device(s), no instance %u",
                 (unsigned)gpu, node, (unsigned)cg->n_devs, (unsigned)instance);
        return false;
    }
    out->target = cg->first_dev + instance;
    return true;
}

/* ---- blast radius -------------------------------------------------------------------------- */

/* Does a device fault e touch device d? */
static bool hits_device(const cluster *c, const fault_event *e, dev_id d)
{
    const cluster_device *cd = cluster_device_get(c, d);
    switch (e->kind) {
    case FAULT_GPU:
        return cd->gpu == e->target;
    case FAULT_INSTANCE:
        return d == e->target;
    case FAULT_NODE:
        return cd->node == e->target;
    case FAULT_NVLINK:
    case FAULT_N_KINDS:
        break;
    }
    return false;
}

/* Does job j talk over NVLink: units on two or more whole (non-MIG) GPUs of node n? */
static bool uses_nvlink(const cluster *c, const job *j, node_id n)
{
    bool found = false;
    gpu_id first = 0;
    for (uint32_t u = 0; u < j->n_units; u++) {
        const cluster_device *cd = cluster_device_get(c, j->units[u]);
        if (cd->node != n || cd->profile) {
            continue;
        }
        if (found && cd->gpu != first) {
            return true;
        }
        found = true;
        first = cd->gpu;
    }
    return false;
}

static bool hits_job(const cluster *c, const fault_event *e, const job *j)
{
    if (e->kind == FAULT_NVLINK) {
        return uses_nvlink(c, j, e->target);
    }
    for (uint32_t u = 0; u < j->n_units; u++) {
        if (hits_device(c, e, j->units[u])) {
            return true;
        }
    }
    return false;
}

static int cmp_job(const void *pa, const void *pb)
{
    job_id a = *(const job_id *)pa, b = *(const job_id *)pb;
    return (a > b) - (a < b);
}

size_t fault_victims(const world *w, const fault_event *e, job_id *out, size_t cap)
{
    const cluster *c = world_cluster(w);
    const job_table *jt = world_jobs(w);
    gpu_id g0;
    uint32_t ng;
    if (e->kind == FAULT_GPU) {
        g0 = e->target;
        ng = 1;
    } else if (e->kind == FAULT_INSTANCE) {
        g0 = cluster_device_get(c, e->target)->gpu;
        ng = 1;
    } else {
        node_gpus(c, e->target, &g0, &ng);
    }
    size_t n = 0;
    for (gpu_id g = g0; g < g0 + ng; g++) {
        uint32_t nj;
        const job_id *on = world_gpu_jobs(w, g, &nj);
        for (uint32_t i = 0; i < nj; i++) {
            bool dup = false;
            for (size_t k = 0; k < n && !dup; k++) {
                dup = out[k] == on[i];
            }
            if (!dup && hits_job(c, e, job_table_get(jt, on[i]))) {
                SIM_ASSERT(n < cap);
                out[n++] = on[i];
            }
        }
    }
    qsort(out, n, sizeof *out, cmp_job);
    return n;
}

/* ---- the injector -------------------------------------------------------------------------- */

struct fault_injector {
    world *w;
    fault_event *ev; /* sorted */
    size_t n;
    uint32_t client;
    uint32_t *down;        /* per device: repairs in progress */
    unsigned char *killed; /* per job: killed at least once */
    job_id *victims;       /* scratch, one per job */
    fault_stats st;
};

#define TAG_REPAIR (1ull << 63)

static void take_down(fault_injector *fi, const fault_event *e, size_t idx, bool on)
{
    const cluster *c = world_cluster(fi->w);
    for (dev_id d = 0; d < cluster_n_devices(c); d++) {
        if (!hits_device(c, e, d)) {
            continue;
        }
        if (on) {
            if (fi->down[d]++ == 0) {
                world_set_cordoned(fi->w, d, true);
            }
        } else {
            SIM_ASSERT(fi->down[d] > 0);
            if (--fi->down[d] == 0) {
                world_set_cordoned(fi->w, d, false);
            }
        }
    }
    if (on) {
        world_at(fi->w, world_now(fi->w) + e->repair_ns, fi->client, TAG_REPAIR | idx);
    }
}

static void fire(fault_injector *fi, size_t idx)
{
    world *w = fi->w;
    const cluster *c = world_cluster(w);
    const fault_event *e = &fi->ev[idx];
    fi->st.n_faults[e->kind]++;
    size_t nv = fault_victims(w, e, fi->victims, job_table_count(world_jobs(w)));
    for (size_t i = 0; i < nv; i++) {
        const job *j = job_table_get(world_jobs(w), fi->victims[i]);
        fault_mode m = fault_device_mode(c, j->units[0]);
        double share = 0;
        for (uint32_t u = 0; u < j->n_units; u++) {
            share += cluster_unit_gpu_share(c, j->units[u]);
        }
        world_kill_info info;
        world_kill(w, j->id, &info);
        fi->st.n_kills[m]++;
        fi->st.n_affected[m] += !fi->killed[j->id];
        fi->killed[j->id] = 1;
        fi->st.lost_gpu_s[m] += info.lost_wall_s * share;
        fi->st.lost_work_s[m] += info.lost_work_s;
    }
    if (e->kind != FAULT_NVLINK && e->repair_ns > 0) {
        take_down(fi, e, idx, true);
    }
    world_settle(w);
}

static void on_timer(world *w, void *ctx, uint64_t tag)
{
    fault_injector *fi = ctx;
    size_t idx = (size_t)(tag & ~TAG_REPAIR);
    SIM_ASSERT(idx < fi->n);
    if (tag & TAG_REPAIR) {
        take_down(fi, &fi->ev[idx], idx, false);
        world_settle(w);
        return;
    }
    fire(fi, idx);
    if (idx + 1 < fi->n) {
        world_at(w, fi->ev[idx + 1].at, fi->client, idx + 1);
    }
}

fault_injector *fault_injector_create(world *w, const fault_event *events, size_t n)
{
    fault_injector *fi = xcalloc(1, sizeof *fi, "fault injector");
    fi->w = w;
    fi->n = n;
    fi->ev = xcalloc(n ? n : 1, sizeof *fi->ev, "fault events");
    if (n) {
        memcpy(fi->ev, events, n * sizeof *fi->ev);
    }
    fault_sort(fi->ev, n);
    size_t n_jobs = job_table_count(world_jobs(w));
    fi->down = xcalloc(cluster_n_devices(world_cluster(w)) + 1, sizeof(uint32_t), "fault down");
    fi->killed = xcalloc(n_jobs + 1, 1, "fault killed");
    fi->victims = xcalloc(n_jobs + 1, sizeof(job_id), "fault victims");
    fi->client = world_timer_client(w, on_timer, fi);
    if (n) {
        world_at(w, fi->ev[0].at, fi->client, 0);
    }
    return fi;
}

void fault_injector_destroy(fault_injector *fi)
{
    if (!fi) {
        return;
    }
    free(fi->ev);
    free(fi->down);
    free(fi->killed);
    free(fi->victims);
    free(fi);
}

const fault_stats *fault_injector_stats(const fault_injector *fi)
{
    return &fi->st;
}
