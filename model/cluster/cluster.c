/* model/cluster/cluster.c - cluster state and its bookkeeping (see cluster.h). */
#include "model/cluster/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cluster/capidx.h"
#include "model/hw/mig.h"
#include "sim/err.h"
#include "sim/xalloc.h"

struct cluster {
    uint32_t n_nodes, n_gpus, n_devs, n_res;
    char **node_names;
    const taint_node **node_meta; /* per node, borrowed (cluster_node_cfg.meta) */
    dev_id *node_first; /* n_nodes + 1: devices of node n are node_first[n] .. [n+1]-1 */
    cluster_gpu *gpus;
    cluster_device *devs;
    res_id *dev_res; /* each device's resource, packed (a node's devices in two cache lines) */
    char **res_names; /* n_res, in order of first advertisement */
    uint32_t *cap;    /* n_nodes * n_res: units advertised */
    uint32_t *used;   /* n_nodes * n_res: units in use */
    uint32_t units_total, units_used;
    uint32_t *gpu_busy_devs; /* per GPU: devices with a unit held */
    uint32_t *res_used;      /* per resource: units held */
    uint32_t gpus_busy, sms_busy;
    gpu_id *node_first_gpu;                            /* n_nodes + 1 */
    uint64_t *cpu_cap, *cpu_used, *mem_cap, *mem_used; /* per node */
    uint64_t *node_ver; /* per node: bumped on every change a policy can see (cluster_node_version) */
    capidx **free_ix;                                  /* per resource: free units per node */
    capidx *share_ix; /* per node: the largest free milli-GPU of its shareable GPUs */

    /* Idle nodes of a class (cluster_node_class) left out: the same indexes with 0 for them,
     * and busy_any_ix 1 for every node that is not such an idle node. */
    uint32_t *node_class; /* per node: its class, or CLUSTER_NO_CLASS */
    uint32_t n_classes;
    bool *idle;           /* per node: of a class and holding nothing (cluster_node_idle) */
    capidx **busy_ix, *busy_share_ix, *busy_any_ix;
    node_id *idle_log;    /* ring of idle_log_cap: the nodes whose idleness changed, in order */
    uint64_t idle_seq;    /* changes logged since creation */
    uint32_t idle_log_cap;

    /* n_nodes * n_res: units neither held nor free (free slots of cordoned devices) */
    uint32_t *blocked;
};

/* Refresh node n's entries of the free-capacity index for resource r. */
static void index_node_res(cluster *c, node_id n, res_id r)
{
    size_t i = (size_t)n * c->n_res + r;
    uint32_t v = c->cap[i] - c->used[i] - c->blocked[i];
    capidx_set(c->free_ix[r], n, v);
    capidx_set(c->busy_ix[r], n, c->idle[n] ? 0 : v);
}

static void index_node_share(cluster *c, node_id n)
{
    uint32_t best = 0;
    for (gpu_id g = c->node_first_gpu[n]; g < c->node_first_gpu[n + 1]; g++) {
        const cluster_gpu *cg = &c->gpus[g];
        for (dev_id d = cg->first_dev; d < cg->first_dev + cg->n_devs; d++) {
            uint32_t f = cluster_share_free(c, d);
            best = f > best ? f : best;
        }
    }
    capidx_set(c->share_ix, n, best);
    capidx_set(c->busy_share_ix, n, c->idle[n] ? 0 : best);
}

/* Does node n hold nothing (no unit, share or memory, nothing cordoned, no CPU or host memory)? */
static bool holds_nothing(const cluster *c, node_id n)
{
    if (c->cpu_used[n] || c->mem_used[n]) {
        return false;
    }
    for (res_id r = 0; r < c->n_res; r++) { /* units held: one line, not the node's devices */
        if (c->used[(size_t)n * c->n_res + r]) {
            return false;
        }
    }
    for (dev_id d = c->node_first[n]; d < c->node_first[n + 1]; d++) {
        const cluster_device *cd = &c->devs[d];
        if (cd->used || cd->milli_used || cd->mem_used_bytes || cd->cordoned || !cd->active) {
            return false;
        }
    }
    return true;
}

/* Node n changed: when it became idle or stopped being idle, move it out of or into the busy
 * indexes and log it (cluster_idle_changed). */
static void refresh_idle(cluster *c, node_id n)
{
    bool idle = c->node_class[n] != CLUSTER_NO_CLASS && holds_nothing(c, n);
    if (idle == c->idle[n]) {
        return;
    }
    c->idle[n] = idle;
    c->idle_log[c->idle_seq++ % c->idle_log_cap] = n;
    capidx_set(c->busy_any_ix, n, !idle);
    for (res_id r = 0; r < c->n_res; r++) {
        index_node_res(c, n, r);
    }
    index_node_share(c, n);
}

/* Do nodes a and b look alike to a policy whenever both hold nothing: the same labels and taints
 * (by pointer), CPU and memory, GPUs (type, label, MIG, sharing) and devices? A node with a
 * reconfigurable GPU is like no other (its layout may change). */
static bool same_node_cfg(const cluster *c, node_id a, node_id b)
{
    gpu_id ga = c->node_first_gpu[a], gb = c->node_first_gpu[b];
    dev_id da = c->node_first[a], db = c->node_first[b];
    uint32_t n_gpus = c->node_first_gpu[a + 1] - ga, n_devs = c->node_first[a + 1] - da;
    if (c->node_meta[a] != c->node_meta[b] || c->cpu_cap[a] != c->cpu_cap[b] ||
        c->mem_cap[a] != c->mem_cap[b] || n_gpus != c->node_first_gpu[b + 1] - gb ||
        n_devs != c->node_first[b + 1] - db) {
        return false;
    }
    for (uint32_t i = 0; i < n_gpus; i++) {
        const cluster_gpu *x = &c->gpus[ga + i], *y = &c->gpus[gb + i];
        if (x->reconfigurable || y->reconfigurable || x->type != y->type ||
            x->mig_enabled != y->mig_enabled || x->sharing != y->sharing ||
            x->n_devs != y->n_devs || x->first_dev - da != y->first_dev - db ||
            !(x->label == y->label || (x->label && y->label && !strcmp(x->label, y->label)))) {
            return false;
        }
    }
    for (uint32_t i = 0; i < n_devs; i++) {
        const cluster_device *x = &c->devs[da + i], *y = &c->devs[db + i];
        if (x->gpu - ga != y->gpu - gb || x->index != y->index || x->profile != y->profile ||
            x->mig_start != y->mig_start || x->resource != y->resource ||
            x->sharing != y->sharing || x->slots != y->slots ||
            x->one_per_request != y->one_per_request || x->sms != y->sms ||
            x->mem_bytes != y->mem_bytes || x->shareable != y->shareable ||
            x->active != y->active) {
            return false;
        }
    }
    return true;
}

/* A hash of what same_node_cfg compares, numbers only (no pointer values: STYLE 6). */
static uint64_t node_cfg_hash(const cluster *c, node_id n)
{
    uint64_t h = 1469598103934665603u;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211u)
    MIX(c->cpu_cap[n]);
    MIX(c->mem_cap[n]);
    MIX(c->node_first_gpu[n + 1] - c->node_first_gpu[n]);
    for (dev_id d = c->node_first[n]; d < c->node_first[n + 1]; d++) {
        MIX(c->devs[d].resource);
        MIX(c->devs[d].slots);
        MIX(c->devs[d].mem_bytes);
        MIX(c->devs[d].sms);
    }
#undef MIX
    return h;
}

/* Group the nodes into classes of nodes alike (same_node_cfg) in order of their first node,
 * through an open-addressing table of each class's first node; a node alike to no other gets
 * CLUSTER_NO_CLASS. Every node starts idle when its class has one. */
static void make_classes(cluster *c)
{
    uint32_t cap = 16;
    while (cap < 2 * c->n_nodes) {
        cap *= 2;
    }
    node_id *slot = xcalloc(cap, sizeof(node_id), "node classes"); /* first node + 1; 0 empty */
    uint32_t *members = xcalloc(c->n_nodes, sizeof(uint32_t), "node classes");
    c->node_class = xcalloc(c->n_nodes, sizeof(uint32_t), "node classes");
    uint32_t n_raw = 0;
    for (node_id n = 0; n < c->n_nodes; n++) {
        uint32_t i = (uint32_t)(node_cfg_hash(c, n) & (cap - 1));
        while (slot[i] && !same_node_cfg(c, slot[i] - 1, n)) {
            i = (i + 1) & (cap - 1);
        }
        if (!slot[i]) {
            slot[i] = n + 1;
            c->node_class[n] = n_raw++;
        } else {
            c->node_class[n] = c->node_class[slot[i] - 1];
        }
        members[c->node_class[n]]++;
    }
    uint32_t *renum = slot; /* reused: raw class -> class (classes of one node dropped) */
    for (uint32_t r = 0; r < n_raw; r++) {
        renum[r] = members[r] > 1 ? c->n_classes++ : CLUSTER_NO_CLASS;
    }
    for (node_id n = 0; n < c->n_nodes; n++) {
        c->node_class[n] = renum[c->node_class[n]];
        c->idle[n] = c->node_class[n] != CLUSTER_NO_CLASS && holds_nothing(c, n);
        capidx_set(c->busy_any_ix, n, !c->idle[n]);
    }
    free(slot);
    free(members);
}

bool cluster_resource_name_for(const mig_profile *profile, bool shared, char *buf, size_t len)
{
    int n;
    if (!profile) {
        n = snprintf(buf, len, "%s%s", CLUSTER_RES_GPU, shared ? CLUSTER_SHARED_SUFFIX : "");
    } else {
        n = snprintf(buf, len, "%s%s%s", CLUSTER_RES_MIG_PREFIX, profile->name,
                     shared ? CLUSTER_SHARED_SUFFIX : "");
        /* k8s-device-plugin internal/rm/rm.go: "mig-" + profile with '+' replaced by '.' */
        for (char *p = buf; n > 0 && (size_t)n < len && *p; p++) {
            if (*p == '+') {
                *p = '.';
            }
        }
    }
    return n > 0 && (size_t)n < len;
}

static res_id intern(cluster *c, const char *name)
{
    for (res_id r = 0; r < c->n_res; r++) {
        if (!strcmp(c->res_names[r], name)) {
            return r;
        }
    }
    c->res_names = xrealloc(c->res_names, (c->n_res + 1) * sizeof(char *), "resource names");
    c->res_names[c->n_res] = xstrdup(name, "resource name");
    return c->n_res++;
}

/* Replicas of a device advertising `base` under g's sharing rules; 0 when no rule names it
 * (the device stays exclusive). */
static uint32_t replicas_for(const cluster_gpu_cfg *g, const char *base)
{
    if (g->sharing == CLUSTER_SHARE_NONE) {
        return 0;
    }
    for (uint32_t i = 0; i < g->n_rules; i++) {
        if (!g->rules[i].resource || !strcmp(g->rules[i].resource, base)) {
            return g->rules[i].replicas;
        }
    }
    return 0;
}

static int check_cfg(const cluster_cfg *cfg, char *why, size_t why_len)
{
    if (cfg->n_nodes == 0) {
        snprintf(why, why_len, "the cluster has no nodes");
        return SIM_EINPUT;
    }
    for (uint32_t n = 0; n < cfg->n_nodes; n++) {
        const cluster_node_cfg *nc = &cfg->nodes[n];
        for (uint32_t i = 0; i < nc->n_gpus; i++) {
            const cluster_gpu_cfg *g = &nc->gpus[i];
            if (g->mig_enabled && g->type->compute_slices == 0) {
                snprintf(why, why_len, "node %s gpu %u: %s does not support MIG", nc->name, i,
                         g->type->name);
                return SIM_EINPUT;
            }
            if (g->mig_enabled && g->sharing == CLUSTER_SHARE_MPS) {
                snprintf(why, why_len, "node %s gpu %u: MPS sharing is not supported on MIG",
                         nc->name, i);
                return SIM_EINPUT;
            }
            if (g->n_mig > GPU_MAX_SLICES || (!g->mig_enabled && g->n_mig > 0)) {
                snprintf(why, why_len, "node %s gpu %u: MIG instances without MIG mode", nc->name,
                         i);
                return SIM_EINPUT;
            }
            if (g->ts_replicas == 1 || (g->ts_replicas > 1 && !g->reconfigurable)) {
                snprintf(why, why_len,
                         "node %s gpu %u: a time-sliced candidate needs a reconfigurable GPU "
                         "and at least 2 replicas",
                         nc->name, i);
                return SIM_EINPUT;
            }
            if (g->reconfigurable && (g->type->compute_slices == 0 ||
                                      g->sharing != CLUSTER_SHARE_NONE || g->mig_single)) {
                snprintf(why, why_len,
                         "node %s gpu %u: a reconfigurable GPU needs MIG support, exclusive "
                         "sharing and the mixed strategy",
                         nc->name, i);
                return SIM_EINPUT;
            }
            for (uint32_t k = 0; g->reconfigurable && k < g->n_mig; k++) {
                if (!mig_profile_is_classic(g->mig[k])) {
                    snprintf(why, why_len,
                             "node %s gpu %u: a reconfigurable GPU's layout uses classic "
                             "profiles only, got %s",
                             nc->name, i, g->mig[k]->name);
                    return SIM_EINPUT;
                }
            }
            for (uint32_t r = 0; r < g->n_rules; r++) {
                if (g->rules[r].replicas < 1) {
                    snprintf(why, why_len, "node %s gpu %u: replicas must be >= 1", nc->name, i);
                    return SIM_EINPUT;
                }
            }
        }
    }
    return 0;
}

/* Devices of a reconfigurable GPU: the whole GPU, every classic placement, and the
 * time-sliced whole GPU when it has one. */
static uint32_t n_candidates(const cluster_gpu_cfg *g)
{
    const gpu_type *t = g->type;
    uint32_t n = g->ts_replicas > 1 ? 2 : 1;
    for (int p = 0; p < t->n_profiles; p++) {
        n += mig_profile_is_classic(&t->profiles[p]) ? (uint32_t)t->profiles[p].n_starts : 0;
    }
    return n;
}

/* The candidate devices of reconfigurable GPU g: whole first, then profiles in catalog order,
 * each at its starts, then the time-sliced whole GPU; those of g's configuration active. */
static void add_candidates(cluster *c, const cluster_gpu_cfg *g, node_id node, gpu_id gid);

static void add_device(cluster *c, const cluster_gpu_cfg *g, node_id node, gpu_id gid,
                       uint32_t index, const mig_profile *p, int start)
{
    char base[96], name[112];
    const mig_profile *named = g->mig_single ? NULL : p; /* single strategy: nvidia.com/gpu */
    SIM_ASSERT(cluster_resource_name_for(named, false, base, sizeof base));
    uint32_t replicas = replicas_for(g, base);
    bool shared = replicas > 0;
    if (!shared) {
        replicas = 1;
    }
    SIM_ASSERT(cluster_resource_name_for(named, shared && g->rename_by_default, name, sizeof name));
    cluster_device *d = &c->devs[c->n_devs++];
    d->node = node;
    d->gpu = gid;
    d->index = index;
    d->profile = p;
    d->mig_start = p ? start : -1;
    d->resource = intern(c, name);
    c->dev_res[c->n_devs - 1] = d->resource;
    d->sharing = shared ? g->sharing : CLUSTER_SHARE_NONE;
    d->slots = replicas;
    d->one_per_request =
        shared && (g->sharing == CLUSTER_SHARE_MPS || g->fail_requests_greater_than_one);
    d->used = 0;
    d->sms = p ? p->sms : g->type->sms_total;
    d->mem_bytes = p ? p->mem_bytes : g->type->mem_bytes;
    d->mem_used_bytes = 0;
    d->shareable = !p && !shared && !g->reconfigurable;
    d->milli_used = 0;
    d->active = true;
}

static void add_candidates(cluster *c, const cluster_gpu_cfg *g, node_id node, gpu_id gid)
{
    uint32_t index = 0;
    add_device(c, g, node, gid, index++, NULL, -1);
    c->devs[c->n_devs - 1].active = !g->mig_enabled;
    for (int p = 0; p < g->type->n_profiles; p++) {
        const mig_profile *mp = &g->type->profiles[p];
        for (int k = 0; mig_profile_is_classic(mp) && k < mp->n_starts; k++) {
            add_device(c, g, node, gid, index++, mp, mp->starts[k]);
            bool on = false;
            for (uint32_t i = 0; g->mig_enabled && i < g->n_mig && !on; i++) {
                on = g->mig[i] == mp && g->mig_start[i] == mp->starts[k];
            }
            c->devs[c->n_devs - 1].active = on;
        }
    }
    if (g->ts_replicas > 1) { /* device-plugin timeSlicing, renameByDefault: gpu.shared x N */
        static const cluster_share_rule ts_rule = {CLUSTER_RES_GPU, 0};
        cluster_share_rule rule = ts_rule;
        rule.replicas = g->ts_replicas;
        cluster_gpu_cfg ts = *g;
        ts.sharing = CLUSTER_SHARE_TIMESLICE;
        ts.rename_by_default = true;
        ts.mig_single = false;
        ts.n_rules = 1;
        ts.rules = &rule;
        add_device(c, &ts, node, gid, index, NULL, -1);
        c->devs[c->n_devs - 1].active = false;
    }
}

int cluster_create(const cluster_cfg *cfg, cluster **out, char *why, size_t why_len)
{
    int rc = check_cfg(cfg, why, why_len);
    if (rc) {
        return rc;
    }
    cluster *c = xcalloc(1, sizeof *c, "cluster");
    uint32_t n_gpus = 0, n_devs = 0;
    for (uint32_t n = 0; n < cfg->n_nodes; n++) {
        n_gpus += cfg->nodes[n].n_gpus;
        for (uint32_t i = 0; i < cfg->nodes[n].n_gpus; i++) {
            const cluster_gpu_cfg *g = &cfg->nodes[n].gpus[i];
            n_devs += g->reconfigurable ? n_candidates(g) : g->mig_enabled ? g->n_mig : 1;
        }
    }
    c->n_nodes = cfg->n_nodes;
    c->node_names = xcalloc(cfg->n_nodes, sizeof(char *), "node names");
    c->node_meta = xcalloc(cfg->n_nodes, sizeof *c->node_meta, "node labels");
    c->node_first = xcalloc(cfg->n_nodes + 1, sizeof(dev_id), "node devices");
    c->node_first_gpu = xcalloc(cfg->n_nodes + 1, sizeof(gpu_id), "node gpus");
    c->cpu_cap = xcalloc(cfg->n_nodes, sizeof(uint64_t), "node cpu");
    c->cpu_used = xcalloc(cfg->n_nodes, sizeof(uint64_t), "node cpu");
    c->mem_cap = xcalloc(cfg->n_nodes, sizeof(uint64_t), "node memory");
    c->mem_used = xcalloc(cfg->n_nodes, sizeof(uint64_t), "node memory");
    c->node_ver = xcalloc(cfg->n_nodes, sizeof(uint64_t), "node versions");
    c->gpus = xcalloc(n_gpus ? n_gpus : 1, sizeof(cluster_gpu), "cluster gpus");
    c->devs = xcalloc(n_devs ? n_devs : 1, sizeof(cluster_device), "cluster devices");
    c->dev_res = xcalloc(n_devs ? n_devs : 1, sizeof(res_id), "cluster devices");
    for (node_id n = 0; n < cfg->n_nodes; n++) {
        const cluster_node_cfg *nc = &cfg->nodes[n];
        c->node_names[n] = xstrdup(nc->name, "node name");
        c->node_meta[n] = nc->meta;
        c->node_first[n] = c->n_devs;
        c->node_first_gpu[n] = c->n_gpus;
        c->cpu_cap[n] = nc->cpu_milli;
        c->mem_cap[n] = nc->host_mem_bytes;
        for (uint32_t i = 0; i < nc->n_gpus; i++) {
            const cluster_gpu_cfg *g = &nc->gpus[i];
            gpu_id gid = c->n_gpus++;
            cluster_gpu *cg = &c->gpus[gid];
            cg->node = n;
            cg->index = i;
            cg->type = g->type;
            cg->label = g->label;
            cg->mig_enabled = g->mig_enabled;
            cg->sharing = g->sharing;
            cg->first_dev = c->n_devs;
            cg->reconfigurable = g->reconfigurable;
            if (g->reconfigurable) {
                add_candidates(c, g, n, gid);
            } else if (g->mig_enabled) {
                for (uint32_t k = 0; k < g->n_mig; k++) {
                    add_device(c, g, n, gid, k, g->mig[k], g->mig_start[k]);
                }
            } else {
                add_device(c, g, n, gid, 0, NULL, -1);
            }
            cg->n_devs = c->n_devs - cg->first_dev;
        }
    }
    c->node_first[c->n_nodes] = c->n_devs;
    c->node_first_gpu[c->n_nodes] = c->n_gpus;
    c->gpu_busy_devs = xcalloc(c->n_gpus ? c->n_gpus : 1, sizeof(uint32_t), "busy devices");
    c->res_used = xcalloc(c->n_res ? c->n_res : 1, sizeof(uint32_t), "resources used");
    c->cap = xcalloc((size_t)c->n_nodes * (c->n_res ? c->n_res : 1), sizeof(uint32_t), "cap");
    c->used = xcalloc((size_t)c->n_nodes * (c->n_res ? c->n_res : 1), sizeof(uint32_t), "used");
    c->blocked =
        xcalloc((size_t)c->n_nodes * (c->n_res ? c->n_res : 1), sizeof(uint32_t), "blocked");
    for (dev_id d = 0; d < c->n_devs; d++) {
        uint32_t slots = c->devs[d].active ? c->devs[d].slots : 0;
        c->cap[(size_t)c->devs[d].node * c->n_res + c->devs[d].resource] += slots;
        c->units_total += slots;
    }
    c->idle = xcalloc(c->n_nodes, sizeof(bool), "idle nodes");
    c->idle_log_cap = c->n_nodes;
    c->idle_log = xcalloc(c->n_nodes, sizeof(node_id), "idle nodes");
    c->busy_any_ix = capidx_create(c->n_nodes);
    make_classes(c);
    c->free_ix = xcalloc(c->n_res ? c->n_res : 1, sizeof(capidx *), "free index");
    c->busy_ix = xcalloc(c->n_res ? c->n_res : 1, sizeof(capidx *), "free index");
    for (res_id r = 0; r < c->n_res; r++) {
        c->free_ix[r] = capidx_create(c->n_nodes);
        c->busy_ix[r] = capidx_create(c->n_nodes);
        for (node_id n = 0; n < c->n_nodes; n++) {
            index_node_res(c, n, r);
        }
    }
    c->share_ix = capidx_create(c->n_nodes);
    c->busy_share_ix = capidx_create(c->n_nodes);
    for (node_id n = 0; n < c->n_nodes; n++) {
        index_node_share(c, n);
    }
    *out = c;
    return 0;
}

void cluster_destroy(cluster *c)
{
    if (!c) {
        return;
    }
    for (uint32_t n = 0; n < c->n_nodes; n++) {
        free(c->node_names[n]);
    }
    for (uint32_t r = 0; r < c->n_res; r++) {
        free(c->res_names[r]);
        capidx_destroy(c->free_ix ? c->free_ix[r] : NULL);
        capidx_destroy(c->busy_ix ? c->busy_ix[r] : NULL);
    }
    free(c->free_ix);
    free(c->busy_ix);
    capidx_destroy(c->share_ix);
    capidx_destroy(c->busy_share_ix);
    capidx_destroy(c->busy_any_ix);
    free(c->node_class);
    free(c->idle);
    free(c->idle_log);
    free(c->node_first_gpu);
    free(c->cpu_cap);
    free(c->cpu_used);
    free(c->mem_cap);
    free(c->mem_used);
    free(c->node_ver);
    free(c->node_names);
    free(c->node_meta);
    free(c->node_first);
    free(c->gpu_busy_devs);
    free(c->res_used);
    free(c->res_names);
    free(c->gpus);
    free(c->devs);
    free(c->dev_res);
    free(c->cap);
    free(c->used);
    free(c->blocked);
    free(c);
}

uint32_t cluster_n_nodes(const cluster *c)
{
    return c->n_nodes;
}

uint32_t cluster_n_gpus(const cluster *c)
{
    return c->n_gpus;
}

uint32_t cluster_n_devices(const cluster *c)
{
    return c->n_devs;
}

uint32_t cluster_n_resources(const cluster *c)
{
    return c->n_res;
}

void cluster_node_devices(const cluster *c, node_id n, dev_id *first, uint32_t *count)
{
    SIM_ASSERT(n < c->n_nodes);
    *first = c->node_first[n];
    *count = c->node_first[n + 1] - c->node_first[n];
}

const taint_node *cluster_node_meta(const cluster *c, node_id n)
{
    SIM_ASSERT(n < c->n_nodes);
    return c->node_meta[n];
}

const char *cluster_node_name(const cluster *c, node_id n)
{
    SIM_ASSERT(n < c->n_nodes);
    return c->node_names[n];
}

const cluster_gpu *cluster_gpu_get(const cluster *c, gpu_id g)
{
    SIM_ASSERT(g < c->n_gpus);
    return &c->gpus[g];
}

const cluster_device *cluster_device_get(const cluster *c, dev_id d)
{
    SIM_ASSERT(d < c->n_devs);
    return &c->devs[d];
}

res_id cluster_device_resource(const cluster *c, dev_id d)
{
    SIM_ASSERT(d < c->n_devs);
    return c->dev_res[d];
}

const char *cluster_resource_name(const cluster *c, res_id r)
{
    SIM_ASSERT(r < c->n_res);
    return c->res_names[r];
}

bool cluster_resource_find(const cluster *c, const char *name, res_id *out)
{
    for (res_id r = 0; name && r < c->n_res; r++) {
        if (!strcmp(c->res_names[r], name)) {
            *out = r;
            return true;
        }
    }
    return false;
}

uint32_t cluster_capacity(const cluster *c, node_id n, res_id r)
{
    SIM_ASSERT(n < c->n_nodes && r < c->n_res);
    return c->cap[(size_t)n * c->n_res + r];
}

uint32_t cluster_free(const cluster *c, node_id n, res_id r)
{
    SIM_ASSERT(n < c->n_nodes && r < c->n_res);
    size_t i = (size_t)n * c->n_res + r;
    return c->cap[i] - c->used[i] - c->blocked[i];
}

uint32_t cluster_units_total(const cluster *c)
{
    return c->units_total;
}

uint32_t cluster_units_used(const cluster *c)
{
    return c->units_used;
}

uint32_t cluster_gpus_busy(const cluster *c)
{
    return c->gpus_busy;
}

uint32_t cluster_sms_busy(const cluster *c)
{
    return c->sms_busy;
}

uint32_t cluster_res_used(const cluster *c, res_id r)
{
    SIM_ASSERT(r < c->n_res);
    return c->res_used[r];
}

bool cluster_mem_fits(const cluster *c, dev_id id, uint64_t mem_bytes)
{
    const cluster_device *d = cluster_device_get(c, id);
    if (mem_bytes == 0) {
        return true;
    }
    switch (d->sharing) {
    case CLUSTER_SHARE_MPS:
        /* the MPS control daemon pins memory to total/replicas per client */
        return mem_bytes <= d->mem_bytes / d->slots;
    case CLUSTER_SHARE_TIMESLICE:
        /* co-runners share one capacity */
        return mem_bytes <= d->mem_bytes && d->mem_used_bytes <= d->mem_bytes - mem_bytes;
    case CLUSTER_SHARE_NONE:
        break;
    }
    return mem_bytes <= d->mem_bytes;
}

/* One unit of device d becomes held (whole unit, or the first share of a shareable GPU). */
static void hold_unit(cluster *c, cluster_device *d)
{
    SIM_ASSERT(d->used < d->slots && !d->cordoned && d->active);
    c->node_ver[d->node]++;
    if (d->used++ == 0) {
        c->sms_busy += (uint32_t)d->sms;
        c->gpus_busy += c->gpu_busy_devs[d->gpu]++ == 0;
    }
    c->res_used[d->resource]++;
    c->used[(size_t)d->node * c->n_res + d->resource]++;
    c->units_used++;
    index_node_res(c, d->node, d->resource);
}

static void release_unit(cluster *c, cluster_device *d)
{
    SIM_ASSERT(d->used > 0);
    c->node_ver[d->node]++;
    if (--d->used == 0) {
        c->sms_busy -= (uint32_t)d->sms;
        c->gpus_busy -= --c->gpu_busy_devs[d->gpu] == 0;
    }
    c->res_used[d->resource]--;
    c->used[(size_t)d->node * c->n_res + d->resource]--;
    c->blocked[(size_t)d->node * c->n_res + d->resource] += d->cordoned;
    c->units_used--;
    index_node_res(c, d->node, d->resource);
}

void cluster_take(cluster *c, dev_id id, uint64_t mem_bytes)
{
    SIM_ASSERT(id < c->n_devs);
    cluster_device *d = &c->devs[id];
    hold_unit(c, d);
    d->mem_used_bytes += mem_bytes;
    if (d->shareable) {
        d->milli_used = MILLI_PER_GPU;
        index_node_share(c, d->node);
    }
    refresh_idle(c, d->node);
}

void cluster_give(cluster *c, dev_id id, uint64_t mem_bytes)
{
    SIM_ASSERT(id < c->n_devs);
    cluster_device *d = &c->devs[id];
    SIM_ASSERT(d->mem_used_bytes >= mem_bytes);
    release_unit(c, d);
    d->mem_used_bytes -= mem_bytes;
    if (d->shareable) {
        SIM_ASSERT(d->milli_used == MILLI_PER_GPU);
        d->milli_used = 0;
        index_node_share(c, d->node);
    }
    refresh_idle(c, d->node);
}

void cluster_take_share(cluster *c, dev_id id, uint32_t milli, uint64_t mem_bytes)
{
    SIM_ASSERT(id < c->n_devs && milli > 0 && milli < MILLI_PER_GPU);
    cluster_device *d = &c->devs[id];
    SIM_ASSERT(d->shareable && !d->cordoned && d->milli_used + milli <= MILLI_PER_GPU);
    if (d->milli_used == 0) {
        hold_unit(c, d);
    }
    c->node_ver[d->node]++;
    d->milli_used += milli;
    d->mem_used_bytes += mem_bytes;
    index_node_share(c, d->node);
    refresh_idle(c, d->node);
}

void cluster_give_share(cluster *c, dev_id id, uint32_t milli, uint64_t mem_bytes)
{
    SIM_ASSERT(id < c->n_devs);
    cluster_device *d = &c->devs[id];
    SIM_ASSERT(d->shareable && d->milli_used >= milli && d->mem_used_bytes >= mem_bytes);
    c->node_ver[d->node]++;
    d->milli_used -= milli;
    d->mem_used_bytes -= mem_bytes;
    if (d->milli_used == 0) {
        release_unit(c, d);
    }
    index_node_share(c, d->node);
    refresh_idle(c, d->node);
}

bool cluster_share_mem_fits(const cluster *c, dev_id id, uint32_t milli, uint64_t mem_bytes)
{
    const cluster_device *d = cluster_device_get(c, id);
    return (double)mem_bytes <= (double)d->mem_bytes * milli / MILLI_PER_GPU;
}

uint32_t cluster_share_free(const cluster *c, dev_id id)
{
    const cluster_device *d = cluster_device_get(c, id);
    return d->shareable && !d->cordoned && d->active ? MILLI_PER_GPU - d->milli_used : 0;
}

void cluster_set_cordoned(cluster *c, dev_id id, bool on)
{
    SIM_ASSERT(id < c->n_devs);
    cluster_device *d = &c->devs[id];
    if (d->cordoned == on) {
        return;
    }
    size_t i = (size_t)d->node * c->n_res + d->resource;
    if (!d->active) { /* an inactive device has no capacity to block */
    } else if (on) {
        c->blocked[i] += d->slots - d->used;
    } else {
        SIM_ASSERT(c->blocked[i] >= d->slots - d->used);
        c->blocked[i] -= d->slots - d->used;
    }
    d->cordoned = on;
    c->node_ver[d->node]++;
    index_node_res(c, d->node, d->resource);
    if (d->shareable) {
        index_node_share(c, d->node);
    }
    refresh_idle(c, d->node);
}

void cluster_node_gpus(const cluster *c, node_id n, gpu_id *first, uint32_t *count)
{
    SIM_ASSERT(n < c->n_nodes);
    *first = c->node_first_gpu[n];
    *count = c->node_first_gpu[n + 1] - c->node_first_gpu[n];
}

uint64_t cluster_node_cpu_capacity(const cluster *c, node_id n)
{
    SIM_ASSERT(n < c->n_nodes);
    return c->cpu_cap[n];
}

uint64_t cluster_node_cpu_free(const cluster *c, node_id n)
{
    SIM_ASSERT(n < c->n_nodes);
    return c->cpu_cap[n] ? c->cpu_cap[n] - c->cpu_used[n] : CLUSTER_UNLIMITED;
}

uint64_t cluster_node_mem_capacity(const cluster *c, node_id n)
{
    SIM_ASSERT(n < c->n_nodes);
    return c->mem_cap[n];
}

uint64_t cluster_node_mem_free(const cluster *c, node_id n)
{
    SIM_ASSERT(n < c->n_nodes);
    return c->mem_cap[n] ? c->mem_cap[n] - c->mem_used[n] : CLUSTER_UNLIMITED;
}

void cluster_node_take(cluster *c, node_id n, uint64_t cpu_milli, uint64_t mem_bytes)
{
    SIM_ASSERT(cpu_milli <= cluster_node_cpu_free(c, n) &&
               mem_bytes <= cluster_node_mem_free(c, n));
    c->cpu_used[n] += c->cpu_cap[n] ? cpu_milli : 0;
    c->mem_used[n] += c->mem_cap[n] ? mem_bytes : 0;
    c->node_ver[n]++;
    refresh_idle(c, n);
}

void cluster_node_give(cluster *c, node_id n, uint64_t cpu_milli, uint64_t mem_bytes)
{
    SIM_ASSERT(n < c->n_nodes);
    cpu_milli = c->cpu_cap[n] ? cpu_milli : 0;
    mem_bytes = c->mem_cap[n] ? mem_bytes : 0;
    SIM_ASSERT(c->cpu_used[n] >= cpu_milli && c->mem_used[n] >= mem_bytes);
    c->cpu_used[n] -= cpu_milli;
    c->mem_used[n] -= mem_bytes;
    c->node_ver[n]++;
    refresh_idle(c, n);
}

node_id cluster_next_node(const cluster *c, res_id r, uint32_t k, node_id from)
{
    SIM_ASSERT(r < c->n_res);
    return capidx_next_ge(c->free_ix[r], from, k);
}

node_id cluster_next_node_share(const cluster *c, uint32_t milli, node_id from)
{
    return capidx_next_ge(c->share_ix, from, milli);
}

uint32_t cluster_n_classes(const cluster *c)
{
    return c->n_classes;
}

uint32_t cluster_node_class(const cluster *c, node_id n)
{
    SIM_ASSERT(n < c->n_nodes);
    return c->node_class[n];
}

bool cluster_node_idle(const cluster *c, node_id n)
{
    SIM_ASSERT(n < c->n_nodes);
    return c->idle[n];
}

uint64_t cluster_idle_seq(const cluster *c)
{
    return c->idle_seq;
}

bool cluster_idle_changed(const cluster *c, uint64_t i, node_id *n)
{
    SIM_ASSERT(i < c->idle_seq);
    if (c->idle_seq - i > c->idle_log_cap) {
        return false;
    }
    *n = c->idle_log[i % c->idle_log_cap];
    return true;
}

node_id cluster_next_busy_node(const cluster *c, res_id r, uint32_t k, node_id from)
{
    SIM_ASSERT(r < c->n_res);
    return capidx_next_ge(c->busy_ix[r], from, k);
}

node_id cluster_next_busy_node_share(const cluster *c, uint32_t milli, node_id from)
{
    return capidx_next_ge(c->busy_share_ix, from, milli);
}

node_id cluster_next_busy(const cluster *c, node_id from)
{
    return capidx_next_ge(c->busy_any_ix, from, 1);
}

double cluster_unit_gpu_share(const cluster *c, dev_id id)
{
    const cluster_device *d = cluster_device_get(c, id);
    double dev = 1.0;
    if (d->profile) {
        int total = c->gpus[d->gpu].type->compute_slices;
        dev = total > 0 ? (double)d->profile->compute_slices / total : 1.0;
    }
    return dev / d->slots;
}

void cluster_set_active(cluster *c, dev_id id, bool on)
{
    SIM_ASSERT(id < c->n_devs);
    cluster_device *d = &c->devs[id];
    SIM_ASSERT(c->gpus[d->gpu].reconfigurable && d->used == 0 && d->milli_used == 0);
    if (d->active == on) {
        return;
    }
    size_t i = (size_t)d->node * c->n_res + d->resource;
    if (on) {
        c->cap[i] += d->slots;
        c->units_total += d->slots;
        c->blocked[i] += d->cordoned ? d->slots : 0;
    } else {
        c->cap[i] -= d->slots;
        c->units_total -= d->slots;
        c->blocked[i] -= d->cordoned ? d->slots : 0;
    }
    d->active = on;
    if (on) {
        c->gpus[d->gpu].sharing = d->sharing;
    }
    c->node_ver[d->node]++;
    index_node_res(c, d->node, d->resource);
    index_node_share(c, d->node);
}

void cluster_set_mig_mode(cluster *c, gpu_id g, bool on)
{
    SIM_ASSERT(g < c->n_gpus && c->gpus[g].reconfigurable);
    c->gpus[g].mig_enabled = on;
    c->node_ver[c->gpus[g].node]++;
}

uint64_t cluster_node_version(const cluster *c, node_id n)
{
    SIM_ASSERT(n < c->n_nodes);
    return c->node_ver[n];
}
