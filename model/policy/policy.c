/* model/policy/policy.c - decision buffer and the policy registry. */
#include "model/policy/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/policy/frag.h"
#include "sim/err.h"
#include "sim/xalloc.h"

/* The registry, in name order (pol_at and pol_names list them so). Add a policy here. */
extern const policy_ops pol_backfill_ops, pol_bestfit_ops, pol_binpack_ops, pol_dotprod_ops,
    pol_fgd_ops, pol_fifo_ops, pol_gpuclustering_ops, pol_gpupacking_ops, pol_k8s_ops,
    pol_random_ops;

static const policy_ops *const registry[] = {
    &pol_backfill_ops, &pol_bestfit_ops, &pol_binpack_ops,       &pol_dotprod_ops,
    &pol_fgd_ops,      &pol_fifo_ops,    &pol_gpuclustering_ops, &pol_gpupacking_ops,
    &pol_k8s_ops,      &pol_random_ops,
};

#define N_REGISTRY (sizeof registry / sizeof registry[0])

const policy_ops *pol_find(const char *name)
{
    for (size_t i = 0; i < N_REGISTRY; i++) {
        if (!strcmp(registry[i]->name, name)) {
            return registry[i];
        }
    }
    return NULL;
}

const policy_ops *pol_at(size_t i)
{
    return i < N_REGISTRY ? registry[i] : NULL;
}

const char *pol_names(char *buf, size_t len)
{
    size_t used = 0;
    if (len == 0) {
        return buf;
    }
    buf[0] = '\0';
    for (size_t i = 0; i < N_REGISTRY && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", registry[i]->name);
        if (n < 0) {
            break;
        }
        used += (size_t)n;
    }
    return buf;
}

int pol_reject_params(const char *policy, const param_set *params, diag *d)
{
    if (!params || params->n == 0) {
        return 0;
    }
    for (size_t i = 0; i < params->n; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s.%s", params->path ? params->path : "policy.params",
                 params->items[i].key);
        diag_error(d, params->items[i].at, path,
                   "unknown parameter; policy '%s' takes no parameters, got '%s'", policy,
                   params->items[i].key);
    }
    return SIM_EINPUT;
}

/* ---- decision buffer ---- */

typedef struct stored_decision {
    pol_decision_kind kind;
    job_id job;
    uint32_t n_units, n_nodes;
    size_t first, first_node; /* indices into units and nodes */
    gpu_id gpu;               /* POL_RECONFIGURE */
    bool evict;               /* POL_RECONFIGURE */
} stored_decision;

struct decision_buf {
    stored_decision *d;
    size_t n, cap;
    dev_id *units;
    size_t n_units, cap_units;
    node_id *nodes;
    size_t n_nodes, cap_nodes;
};

decision_buf *decision_buf_create(void)
{
    return xcalloc(1, sizeof(decision_buf), "decision buffer");
}

void decision_buf_destroy(decision_buf *b)
{
    if (!b) {
        return;
    }
    free(b->d);
    free(b->units);
    free(b->nodes);
    free(b);
}

void decision_buf_clear(decision_buf *b)
{
    b->n = 0;
    b->n_units = 0;
    b->n_nodes = 0;
}

void pol_place_on(decision_buf *b, job_id j, const dev_id *units, uint32_t n, const node_id *nodes,
                  uint32_t n_workers)
{
    pol_place(b, j, units, n);
    while (b->n_nodes + n_workers > b->cap_nodes) {
        b->cap_nodes = b->cap_nodes ? 2 * b->cap_nodes : 64;
        b->nodes = xrealloc(b->nodes, b->cap_nodes * sizeof(node_id), "decision nodes");
    }
    if (n_workers) {
        memcpy(b->nodes + b->n_nodes, nodes, n_workers * sizeof(node_id));
    }
    b->d[b->n - 1].n_nodes = n_workers;
    b->d[b->n - 1].first_node = b->n_nodes;
    b->n_nodes += n_workers;
}

void pol_preempt(decision_buf *b, job_id j)
{
    pol_place(b, j, NULL, 0);
    b->d[b->n - 1].kind = POL_PREEMPT;
}

void pol_reconfigure(decision_buf *b, gpu_id g, const dev_id *devs, uint32_t n, bool evict)
{
    pol_place(b, 0, devs, n);
    b->d[b->n - 1].kind = POL_RECONFIGURE;
    b->d[b->n - 1].gpu = g;
    b->d[b->n - 1].evict = evict;
}

void pol_place(decision_buf *b, job_id j, const dev_id *units, uint32_t n)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 16;
        b->d = xrealloc(b->d, b->cap * sizeof *b->d, "decisions");
    }
    while (b->n_units + n > b->cap_units) {
        b->cap_units = b->cap_units ? 2 * b->cap_units : 64;
        b->units = xrealloc(b->units, b->cap_units * sizeof(dev_id), "decision units");
    }
    if (n) {
        memcpy(b->units + b->n_units, units, n * sizeof(dev_id));
    }
    b->d[b->n++] = (stored_decision){POL_PLACE, j, n, 0, b->n_units, 0, 0, false};
    b->n_units += n;
}

size_t decision_buf_count(const decision_buf *b)
{
    return b->n;
}

void decision_buf_get(const decision_buf *b, size_t i, pol_decision *out)
{
    SIM_ASSERT(i < b->n);
    const stored_decision *s = &b->d[i];
    out->kind = s->kind;
    out->job = s->job;
    out->n_units = s->n_units;
    out->units = b->units + s->first;
    out->n_nodes = s->n_nodes;
    out->nodes = s->n_nodes ? b->nodes + s->first_node : NULL;
    out->gpu = s->gpu;
    out->evict = s->evict;
}

/* ---- placement helpers ---- */

void pol_scratch_load(pol_scratch *s, const cluster_view *cv)
{
    (void)cv;
    s->n = 0;
    s->n_given = 0;
    s->n_used = 0;
    s->n_returned = 0;
}

void pol_scratch_give(pol_scratch *s, dev_id d)
{
    if (s->n_given == s->cap_given) {
        s->cap_given = s->cap_given ? 2 * s->cap_given : 64;
        s->given = xrealloc(s->given, s->cap_given * sizeof(dev_id), "scratch given");
    }
    s->given[s->n_given++] = d;
}

/* Append a node's CPU and memory to a list of pol_node_use. */
static void add_use(pol_node_use **a, size_t *n, size_t *cap, pol_node_use u)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *a = xrealloc(*a, *cap * sizeof **a, "scratch node use");
    }
    (*a)[(*n)++] = u;
}

void pol_scratch_give_node(pol_scratch *s, node_id n, uint64_t cpu_milli, uint64_t mem_bytes)
{
    add_use(&s->returned, &s->n_returned, &s->cap_returned,
            (pol_node_use){n, cpu_milli, mem_bytes});
}

void pol_scratch_copy_taken(pol_scratch *dst, const pol_scratch *src)
{
    if (src->n > dst->cap) {
        dst->cap = src->n;
        dst->taken = xrealloc(dst->taken, dst->cap * sizeof(dev_id), "policy scratch");
    }
    if (src->n_used > dst->cap_used) {
        dst->cap_used = src->n_used;
        dst->used = xrealloc(dst->used, dst->cap_used * sizeof(pol_node_use), "policy scratch");
    }
    if (src->n) {
        memcpy(dst->taken, src->taken, src->n * sizeof(dev_id));
    }
    if (src->n_used) {
        memcpy(dst->used, src->used, src->n_used * sizeof(pol_node_use));
    }
    dst->n = src->n;
    dst->n_used = src->n_used;
}

void pol_scratch_fini(pol_scratch *s)
{
    free(s->taken);
    free(s->given);
    free(s->used);
    free(s->returned);
    memset(s, 0, sizeof *s);
}

static void scratch_take(pol_scratch *s, dev_id d)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->taken = xrealloc(s->taken, s->cap * sizeof(dev_id), "policy scratch");
    }
    s->taken[s->n++] = d;
}

/* Free units of device pd (as pol_device_get gave it), less those recorded in s. */
static uint32_t scratch_free_of(const pol_scratch *s, const pol_device *pd)
{
    uint32_t free_units = pd->free;
    for (size_t i = 0; i < s->n_given; i++) {
        free_units += s->given[i] == pd->id;
    }
    for (size_t i = 0; i < s->n; i++) {
        free_units -= s->taken[i] == pd->id;
    }
    return free_units;
}

uint32_t pol_scratch_free(const pol_scratch *s, const cluster_view *cv, dev_id d)
{
    pol_device pd;
    pol_device_get(cv, d, &pd);
    return scratch_free_of(s, &pd);
}

/* Units of resource r free on node n, less those recorded in s. */
static uint32_t node_free(const cluster_view *cv, const pol_scratch *s, node_id n, res_id r)
{
    uint32_t total = pol_node_free(cv, n, r);
    for (size_t i = 0; i < s->n_given; i++) {
        pol_device pd;
        pol_device_get(cv, s->given[i], &pd);
        total += pd.node == n && pd.resource == r;
    }
    for (size_t i = 0; i < s->n; i++) {
        pol_device pd;
        pol_device_get(cv, s->taken[i], &pd);
        total -= pd.node == n && pd.resource == r;
    }
    return total;
}

/* May job j's workers use device pd (its resource is r; its GPU's type is allowed by
 * gpu_spec)? */
static bool device_allowed(const cluster_view *cv, const pol_job *j, res_id r,
                           const pol_device *pd)
{
    if (pd->resource != r) {
        return false;
    }
    if (!j->pod.gpu_spec || !*j->pod.gpu_spec) {
        return true;
    }
    pol_gpu pg;
    pol_gpu_get(cv, pd->gpu, &pg);
    return frag_type_allowed(j->pod.gpu_spec, pg.type_name);
}

/* Free units of r on node n that job j may use (its gpu_spec), less those recorded in s. */
static uint32_t node_free_for(const cluster_view *cv, const pol_scratch *s, node_id n, res_id r,
                              const pol_job *j)
{
    if (!j->pod.gpu_spec || !*j->pod.gpu_spec) {
        return node_free(cv, s, n, r);
    }
    dev_id first;
    uint32_t count, total = 0;
    pol_node_devices(cv, n, &first, &count);
    for (dev_id d = first; d < first + count; d++) {
        pol_device pd;
        pol_device_get(cv, d, &pd);
        total += device_allowed(cv, j, r, &pd) ? pol_scratch_free(s, cv, d) : 0;
    }
    return total;
}

/* Does node n have one more worker of j's CPU and host memory free, after what s records? A
 * node that does not state one of them has no limit on it. */
static bool node_room(const cluster_view *cv, const pol_scratch *s, node_id n, const pol_job *j)
{
    uint64_t cpu = pol_node_cpu_free(cv, n), mem = pol_node_mem_free(cv, n);
    if (cpu == UINT64_MAX && mem == UINT64_MAX) {
        return true;
    }
    uint64_t cpu_used = j->pod.cpu_milli, mem_used = j->pod.host_mem_bytes;
    for (size_t i = 0; i < s->n_used; i++) {
        cpu_used += s->used[i].node == n ? s->used[i].cpu_milli : 0;
        mem_used += s->used[i].node == n ? s->used[i].mem_bytes : 0;
    }
    for (size_t i = 0; i < s->n_returned; i++) {
        cpu += cpu != UINT64_MAX && s->returned[i].node == n ? s->returned[i].cpu_milli : 0;
        mem += mem != UINT64_MAX && s->returned[i].node == n ? s->returned[i].mem_bytes : 0;
    }
    return (cpu == UINT64_MAX || cpu_used <= cpu) && (mem == UINT64_MAX || mem_used <= mem);
}

/* Does node n take one more worker of j (its constraints, free units, CPU and memory)? */
static bool worker_fits(const cluster_view *cv, const pol_scratch *s, const pol_job *j, res_id r,
                        node_id n)
{
    return pol_node_admits(cv, j, n) &&
           (j->per_worker == 0 || node_free_for(cv, s, n, r, j) >= j->per_worker) &&
           node_room(cv, s, n, j);
}

/* The node for the next worker of j: the lowest-numbered one where it fits among those with the
 * fewest PreferNoSchedule taints it does not tolerate; pol_n_nodes when none. */
static node_id fit_node(const cluster_view *cv, const pol_scratch *s, const pol_job *j, res_id r)
{
    uint32_t n_nodes = pol_n_nodes(cv), best_pen = UINT32_MAX;
    node_id best = n_nodes;
    /* the free-capacity index skips nodes without per_worker free units, unless the scratch
     * counts held units as free (pol_scratch_give) or the worker holds no GPU unit: then every
     * node is looked at */
    bool scan = s->n_given || j->per_worker == 0;
    for (node_id n = scan ? 0 : pol_next_node(cv, r, j->per_worker, 0); n < n_nodes;
         n = scan ? n + 1 : pol_next_node(cv, r, j->per_worker, n + 1)) {
        if (j->pod.node_pin && n < j->pod.node_pin - 1) { /* straight to its node */
            n = j->pod.node_pin - 1;
            if (!scan && pol_next_node(cv, r, j->per_worker, n) != n) {
                break;
            }
        }
        if (!worker_fits(cv, s, j, r, n)) {
            if (j->pod.node_pin) {
                break;
            }
            continue;
        }
        uint32_t pen = pol_node_prefer_penalty(cv, j, n);
        if (pen < best_pen) {
            best = n;
            best_pen = pen;
        }
        if (pen == 0 || j->pod.node_pin) {
            break;
        }
    }
    return best;
}

bool pol_first_fit(const cluster_view *cv, pol_scratch *s, const pol_job *j, dev_id *units,
                   node_id *nodes)
{
    res_id r = 0;
    if (j->per_worker > 0 && !pol_resource_find(cv, j->resource, &r)) {
        return false;
    }
    uint32_t n_units = j->per_worker * j->n_workers, n_nodes = pol_n_nodes(cv);
    uint32_t got = 0;
    size_t used0 = s->n_used;
    for (uint32_t w = 0; w < j->n_workers; w++) {
        node_id n = fit_node(cv, s, j, r);
        if (n == n_nodes) {
            s->n -= got; /* undo this job's records */
            s->n_used = used0;
            return false;
        }
        nodes[w] = n;
        add_use(&s->used, &s->n_used, &s->cap_used,
                (pol_node_use){n, j->pod.cpu_milli, j->pod.host_mem_bytes});
        dev_id first;
        uint32_t count;
        pol_node_devices(cv, n, &first, &count);
        for (uint32_t need = j->per_worker; need > 0; need--) {
            /* the device plugin's spread: the device with the fewest units in use first */
            dev_id best = first + count;
            uint32_t best_used = 0;
            for (dev_id d = first; d < first + count; d++) {
                if (pol_device_resource(cv, d) != r) { /* not allowed: no need to look further */
                    continue;
                }
                pol_device pd;
                pol_device_get(cv, d, &pd);
                uint32_t f = device_allowed(cv, j, r, &pd) ? scratch_free_of(s, &pd) : 0;
                if (f > 0 && (best == first + count || pd.slots - f < best_used)) {
                    best = d;
                    best_used = pd.slots - f;
                }
            }
            SIM_ASSERT(best < first + count);
            scratch_take(s, best);
            units[got++] = best;
        }
    }
    SIM_ASSERT(got == n_units);
    return true;
}

