/* model/policy/policy.c - decision buffer and the policy registry. */
#include "model/policy/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
}

void pol_scratch_give(pol_scratch *s, dev_id d)
{
    if (s->n_given == s->cap_given) {
        s->cap_given = s->cap_given ? 2 * s->cap_given : 64;
        s->given = xrealloc(s->given, s->cap_given * sizeof(dev_id), "scratch given");
    }
    s->given[s->n_given++] = d;
}

void pol_scratch_fini(pol_scratch *s)
{
    free(s->taken);
    free(s->given);
    s->taken = NULL;
    s->given = NULL;
    s->n = s->cap = 0;
    s->n_given = s->cap_given = 0;
}

static void scratch_take(pol_scratch *s, dev_id d)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->taken = xrealloc(s->taken, s->cap * sizeof(dev_id), "policy scratch");
    }
    s->taken[s->n++] = d;
}

uint32_t pol_scratch_free(const pol_scratch *s, const cluster_view *cv, dev_id d)
{
    pol_device pd;
    pol_device_get(cv, d, &pd);
    uint32_t free_units = pd.free;
    for (size_t i = 0; i < s->n_given; i++) {
        free_units += s->given[i] == d;
    }
    for (size_t i = 0; i < s->n; i++) {
        free_units -= s->taken[i] == d;
    }
    return free_units;
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

bool pol_first_fit(const cluster_view *cv, pol_scratch *s, const pol_job *j, dev_id *units)
{
    res_id r;
    if (!pol_resource_find(cv, j->resource, &r)) {
        return false;
    }
    uint32_t n_units = j->per_worker * j->n_workers;
    uint32_t got = 0;
    for (uint32_t w = 0; w < j->n_workers; w++) {
        /* the free-capacity index skips nodes without per_worker free units, unless the scratch
         * counts held units as free (pol_scratch_give): then every node is looked at */
        node_id n = s->n_given ? 0 : pol_next_node(cv, r, j->per_worker, 0);
        while (n < pol_n_nodes(cv) && node_free(cv, s, n, r) < j->per_worker) {
            n = s->n_given ? n + 1 : pol_next_node(cv, r, j->per_worker, n + 1);
        }
        if (n == pol_n_nodes(cv)) {
            s->n -= got; /* undo this job's records */
            return false;
        }
        dev_id first;
        uint32_t count;
        pol_node_devices(cv, n, &first, &count);
        for (uint32_t need = j->per_worker; need > 0; need--) {
            /* the device plugin's spread: the device with the fewest units in use first */
            dev_id best = first + count;
            uint32_t best_used = 0;
            for (dev_id d = first; d < first + count; d++) {
                pol_device pd;
                pol_device_get(cv, d, &pd);
                uint32_t f = pd.resource == r ? pol_scratch_free(s, cv, d) : 0;
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
