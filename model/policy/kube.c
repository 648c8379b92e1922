/* model/policy/kube.c - kube-scheduler's scheduling cycle (see kube.h). */
#include "model/policy/kube.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/xalloc.h"

/* Devices of one node with what is free on them for the pod being scheduled. */
typedef struct nstate {
    kube_node kn;
    dev_id first_dev;
    uint32_t n_devs;
    uint32_t *dev_free; /* free units of each device (whole pods), after the gang's overlay */
    uint32_t *dev_used; /* units in use (to spread) */
    bool *dev_ok;       /* the device advertises the pod's resource and its GPU type is allowed */
    uint32_t *dev_gpu;  /* index of its GPU in kn.fn.milli_left */
    bool gpu_ok[FRAG_MAX_GPUS]; /* shareable and of an allowed type (fractional pods) */
} nstate;

/* Scratch for two node states (candidate, best) and the preemption search. */
struct kube_scratch {
    nstate cand, best, trial;
    uint32_t max_devs;
    uint32_t *taken; /* units taken per device while binding */
    node_id *tied;   /* nodes tied for the best score so far (tie_break: random), n_nodes */
};
typedef struct kube_scratch kscratch;

/* The cached filter and score of one node for one pod shape. */
typedef struct centry {
    uint64_t ver;  /* pol_node_version + 1 when filled; 0: empty */
    uint32_t aver; /* the node's affinity version when filled */
    bool fits;
    double score;
} centry;

/* Filter and score results per pod shape and node (the cycle's cache, kube.h). At most
 * CACHE_ENTRIES entries in all: shapes past that are not cached. */
#define CACHE_SHAPES 256
#define CACHE_ENTRIES (1u << 21)
struct kube_cache {
    uint32_t *aver; /* per node: changes of its affinity counts */
    kube_pod shapes[CACHE_SHAPES];
    centry *entries[CACHE_SHAPES]; /* per shape: n_nodes entries */
    size_t n_shapes, max_shapes;
};

/* The idle nodes of each class (pol_node_class) in the run's order: a bit per position of the
 * nodes sorted by class, then rank, kept up to date from the cluster's log of idle changes. */
struct kube_idle {
    uint32_t n_classes, n_pos;
    uint32_t *off;    /* n_classes + 1: class c's positions are off[c] .. off[c+1]-1 */
    node_id *node;    /* node at each position */
    uint32_t *pos;    /* position of each node, or UINT32_MAX (a node of no class) */
    uint64_t *bits;   /* idle nodes by position */
    uint64_t *words;  /* bit w: bits[w] has a bit set */
    size_t n_bits, n_words;
    uint64_t seen;    /* idle changes read (pol_idle_seq) */
};

static void nstate_alloc(nstate *s, uint32_t n)
{
    s->dev_free = xcalloc(n, sizeof(uint32_t), "node state");
    s->dev_used = xcalloc(n, sizeof(uint32_t), "node state");
    s->dev_ok = xcalloc(n, sizeof(bool), "node state");
    s->dev_gpu = xcalloc(n, sizeof(uint32_t), "node state");
}

static void nstate_free(nstate *s)
{
    free(s->dev_free);
    free(s->dev_used);
    free(s->dev_ok);
    free(s->dev_gpu);
}

/* ---- setup ---------------------------------------------------------------------------------- */

static void idle_set(struct kube_idle *x, uint32_t pos, bool on)
{
    uint64_t bit = UINT64_C(1) << (pos % 64);
    size_t w = pos / 64;
    x->bits[w] = on ? x->bits[w] | bit : x->bits[w] & ~bit;
    bit = UINT64_C(1) << (w % 64);
    x->words[w / 64] = x->bits[w] ? x->words[w / 64] | bit : x->words[w / 64] & ~bit;
}

/* The first position >= from whose node is idle, or n_pos. */
static uint32_t idle_next(const struct kube_idle *x, uint32_t from)
{
    if (from >= x->n_pos) {
        return x->n_pos;
    }
    size_t w = from / 64;
    uint64_t b = x->bits[w] & (~UINT64_C(0) << (from % 64));
    if (!b) { /* the next word after w with a bit set, through the summary */
        size_t v = (w + 1) / 64;
        uint64_t m = x->words[v] & (~UINT64_C(0) << ((w + 1) % 64));
        while (!m) {
            if (++v >= x->n_words) {
                return x->n_pos;
            }
            m = x->words[v];
        }
        w = v * 64 + (size_t)__builtin_ctzll(m);
        b = x->bits[w];
    }
    uint32_t p = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(b));
    return p < x->n_pos ? p : x->n_pos;
}

/* Node n's bit as the cluster has it. */
static void idle_read(struct kube_idle *x, const cluster_view *cv, node_id n)
{
    if (x->pos[n] != UINT32_MAX) {
        idle_set(x, x->pos[n], pol_node_idle(cv, n));
    }
}

/* Bring the idle bits up to date with the cluster: the changes logged since the last look, or
 * every node when the log no longer holds them all. */
static void idle_sync(struct kube_idle *x, const cluster_view *cv)
{
    uint64_t seq = pol_idle_seq(cv);
    node_id n;
    if (x->seen < seq && !pol_idle_changed(cv, x->seen, &n)) {
        for (n = 0; n < pol_n_nodes(cv); n++) {
            idle_read(x, cv, n);
        }
        x->seen = seq;
    }
    for (; x->seen < seq; x->seen++) {
        bool kept = pol_idle_changed(cv, x->seen, &n); /* the first one was, so all are */
        SIM_ASSERT(kept);
        idle_read(x, cv, n);
    }
}

/* The nodes of each class in the run's order (k->rank), every bit read from the cluster. */
static void idle_setup(kube *k, const cluster_view *cv)
{
    struct kube_idle *x = xcalloc(1, sizeof *x, "idle classes");
    x->n_classes = pol_n_classes(cv);
    x->off = xcalloc(x->n_classes + 1, sizeof(uint32_t), "idle classes");
    x->pos = xcalloc(k->n_nodes, sizeof(uint32_t), "idle classes");
    for (node_id n = 0; n < k->n_nodes; n++) {
        uint32_t c = pol_node_class(cv, n);
        x->off[c == POL_NO_CLASS ? x->n_classes : c] += c != POL_NO_CLASS;
    }
    for (uint32_t c = 0, sum = 0; c <= x->n_classes; c++) { /* counts to offsets */
        uint32_t m = x->off[c];
        x->off[c] = sum;
        sum += m;
    }
    x->n_pos = x->off[x->n_classes];
    x->node = xcalloc(x->n_pos ? x->n_pos : 1, sizeof(node_id), "idle classes");
    uint32_t *by_rank = xcalloc(k->n_nodes, sizeof(uint32_t), "idle classes");
    for (node_id n = 0; n < k->n_nodes; n++) {
        by_rank[k->rank[n]] = n;
    }
    uint32_t *fill = xcalloc(x->n_classes + 1, sizeof(uint32_t), "idle classes");
    memcpy(fill, x->off, (x->n_classes + 1) * sizeof(uint32_t));
    for (uint32_t r = 0; r < k->n_nodes; r++) { /* class-major, in rank order within a class */
        node_id n = by_rank[r];
        uint32_t c = pol_node_class(cv, n);
        x->pos[n] = c == POL_NO_CLASS ? UINT32_MAX : fill[c]++;
        if (c != POL_NO_CLASS) {
            x->node[x->pos[n]] = n;
        }
    }
    free(fill);
    free(by_rank);
    x->n_bits = (x->n_pos + 63) / 64 + 1;
    x->n_words = (x->n_bits + 63) / 64 + 1;
    x->bits = xcalloc(x->n_bits, sizeof(uint64_t), "idle classes");
    x->words = xcalloc(x->n_words, sizeof(uint64_t), "idle classes");
    x->seen = pol_idle_seq(cv);
    for (node_id n = 0; n < k->n_nodes; n++) {
        idle_read(x, cv, n);
    }
    k->idle = x;
}

static void idle_free(struct kube_idle *x)
{
    if (x) {
        free(x->off);
        free(x->node);
        free(x->pos);
        free(x->bits);
        free(x->words);
        free(x);
    }
}

static void pod_of(const cluster_view *cv, const pol_job *j, kube_pod *p, bool *known_res)
{
    memset(p, 0, sizeof *p);
    *known_res = true;
    p->shape = frag_pod_make(j->per_worker, j->pod.gpu_milli, j->pod.cpu_milli, j->pod.gpu_spec);
    p->mem_bytes = j->pod.host_mem_bytes;
    if (p->shape.n_gpu == 0) {
        p->tag = 0;
    } else if (p->shape.milli < MILLI_PER_GPU) {
        p->tag = 1;
    } else {
        p->whole = true;
        p->tag = j->per_worker <= KUBE_TAGS - 2 ? 1 + j->per_worker : KUBE_TAGS - 1;
        *known_res = pol_resource_find(cv, j->resource, &p->res);
    }
}

/* Job j's pod shape and worker count. */
static uint32_t job_pod_of(const cluster_view *cv, job_id j, kube_pod *p)
{
    pol_job pj;
    bool known;
    pol_job_get(cv, j, &pj);
    pod_of(cv, &pj, p, &known);
    return pj.n_workers;
}

static void setup(kube *k, const cluster_view *cv)
{
    if (k->affinity) {
        return;
    }
    k->n_nodes = pol_n_nodes(cv);
    k->n_jobs = pol_n_jobs(cv);
    k->affinity = xcalloc((size_t)k->n_nodes * KUBE_TAGS, sizeof(uint32_t), "affinity");
    k->placed = xcalloc(k->n_jobs ? k->n_jobs : 1, sizeof(node_id *), "placed jobs");
    rng_root root = rng_root_make(pol_seed(cv));
    k->rng = rng_stream_open(&root, "policy", 0);
    if (k->fixed_order) { /* rand.Perm's node prefixes: node n is rank[n]-th */
        k->rank = xcalloc(k->n_nodes ? k->n_nodes : 1, sizeof(uint32_t), "node order");
        rng_stream *s = rng_stream_open(&root, "policy.order", 0);
        for (uint32_t i = 0; i < k->n_nodes; i++) {
            k->rank[i] = i;
        }
        for (uint32_t i = k->n_nodes; i > 1; i--) { /* Fisher-Yates */
            uint32_t j = (uint32_t)rng_uniform_int(s, i), t = k->rank[i - 1];
            k->rank[i - 1] = k->rank[j];
            k->rank[j] = t;
        }
        rng_stream_close(s);
    }
    uint32_t max_devs = 1;
    for (node_id n = 0; n < k->n_nodes; n++) {
        dev_id first;
        uint32_t count;
        pol_node_devices(cv, n, &first, &count);
        max_devs = count > max_devs ? count : max_devs;
    }
    kscratch *s = xcalloc(1, sizeof *s, "kube scratch");
    s->max_devs = max_devs;
    nstate_alloc(&s->cand, max_devs);
    nstate_alloc(&s->best, max_devs);
    nstate_alloc(&s->trial, max_devs);
    s->taken = xcalloc(max_devs, sizeof(uint32_t), "kube scratch");
    s->tied = xcalloc(k->n_nodes ? k->n_nodes : 1, sizeof(node_id), "kube scratch");
    k->scratch = s;
    struct kube_cache *c = xcalloc(1, sizeof *c, "kube cache");
    c->aver = xcalloc(k->n_nodes ? k->n_nodes : 1, sizeof(uint32_t), "kube cache");
    c->max_shapes = k->n_nodes ? CACHE_ENTRIES / k->n_nodes : 0;
    c->max_shapes = c->max_shapes < CACHE_SHAPES ? c->max_shapes : CACHE_SHAPES;
    k->cache = c;
    if (k->fixed_order && !k->pol->sample && pol_n_classes(cv) > 0) {
        idle_setup(k, cv);
    }
    if (k->pol->typical) { /* from the pods before inflation (clones left out), as FGD's */
        size_t n = 0;
        for (job_id j = 0; j < k->n_jobs; j++) {
            pol_job pj;
            pol_job_get(cv, j, &pj);
            n += pj.pod.clone ? 0 : pj.n_workers;
        }
        frag_pod *pods = xcalloc(n ? n : 1, sizeof *pods, "workload pods");
        size_t i = 0;
        for (job_id j = 0; j < k->n_jobs; j++) {
            kube_pod kp;
            pol_job pj;
            pol_job_get(cv, j, &pj);
            uint32_t n_workers = pj.pod.clone ? 0 : job_pod_of(cv, j, &kp);
            for (uint32_t w = 0; w < n_workers; w++) {
                pods[i++] = kp.shape;
            }
        }
        frag_typical_build(pods, n, FRAG_TYPICAL_SHARE, &k->typ);
        free(pods);
    }
}


int kube_init(kube *k, const kube_policy *pol, const param_set *params, diag *d)
{
    k->pol = pol;
    k->fixed_order = pol->fixed_order;
    int rc = 0;
    for (size_t i = 0; params && i < params->n; i++) {
        const pol_param *p = &params->items[i];
        char path[256];
        snprintf(path, sizeof path, "%s.%s", params->path ? params->path : "policy.params",
                 p->key);
        if (strcmp(p->key, "tie_break") != 0) {
            diag_error(d, p->at, path, "unknown parameter; expected one of [tie_break], got '%s'",
                       p->key);
            rc = SIM_EINPUT;
        } else if (!strcmp(p->value, "random")) {
            k->fixed_order = false;
        } else if (!strcmp(p->value, "fixed-order") && !pol->uniform) {
            k->fixed_order = true;
        } else {
            diag_error(d, p->value_at, path, "unknown value; expected one of [%s], got '%s'",
                       pol->uniform ? "random" : "fixed-order, random", p->value);
            rc = SIM_EINPUT;
        }
    }
    return rc;
}

void kube_fini(void *self)
{
    kube *k = self;
    free(k->queue);
    free(k->affinity);
    for (uint32_t j = 0; k->placed && j < k->n_jobs; j++) {
        free(k->placed[j]);
    }
    free(k->placed);
    free(k->placed_prio);
    free(k->placed_count);
    free(k->rank);
    rng_stream_close(k->rng);
    frag_typical_fini(&k->typ);
    frag_memo_fini(&k->memo);
    free(k->units);
    free(k->nodes);
    idle_free(k->idle);
    struct kube_cache *c = k->cache;
    if (c) {
        for (size_t i = 0; i < c->n_shapes; i++) {
            free(c->entries[i]);
        }
        free(c->aver);
        free(c);
    }
    kscratch *s = k->scratch;
    if (s) {
        nstate_free(&s->cand);
        nstate_free(&s->best);
        nstate_free(&s->trial);
        free(s->taken);
        free(s->tied);
        free(s);
    }
}

double kube_cache_bytes(const kube_policy *pol, uint32_t n_nodes, double n_shapes)
{
    double most = n_nodes ? (double)(CACHE_ENTRIES / n_nodes) : 0; /* as setup caps it */
    most = most < CACHE_SHAPES ? most : CACHE_SHAPES;
    double shapes = n_shapes < most ? n_shapes : most;
    return shapes * n_nodes * sizeof(centry) + (double)n_nodes * sizeof(uint32_t) +
           (pol->typical ? (double)frag_memo_bytes() : 0);
}

double kube_frag(kube *k, const frag_node *n)
{
    return frag_memo_amount(&k->memo, n, &k->typ);
}

uint64_t kube_draw(kube *k, uint64_t n)
{
    return n <= 1 ? 0 : rng_uniform_int(k->rng, n);
}

/* ---- the queue ------------------------------------------------------------------------------ */

/* a goes before b: higher priority, then earlier submission (lower id). */
static bool before(const cluster_view *cv, job_id a, job_id b)
{
    pol_job x, y;
    pol_job_get(cv, a, &x);
    pol_job_get(cv, b, &y);
    if (x.pod.priority != y.pod.priority) {
        return x.pod.priority > y.pod.priority;
    }
    return a < b;
}

static void enqueue(kube *k, const cluster_view *cv, job_id j)
{
    if (k->n_queue == k->cap_queue) {
        k->cap_queue = k->cap_queue ? 2 * k->cap_queue : 64;
        k->queue = xrealloc(k->queue, k->cap_queue * sizeof(job_id), "queue");
    }
    size_t i = k->n_queue;
    while (i > 0 && before(cv, j, k->queue[i - 1])) {
        i--;
    }
    memmove(k->queue + i + 1, k->queue + i, (k->n_queue - i) * sizeof(job_id));
    k->queue[i] = j;
    k->n_queue++;
    if (k->round && i < k->cursor) {
        k->cursor++; /* keep pointing at the same job */
    }
}

static void dequeue_at(kube *k, size_t i)
{
    memmove(k->queue + i, k->queue + i + 1, (k->n_queue - i - 1) * sizeof(job_id));
    k->n_queue--;
}

static void unbook(kube *k, const cluster_view *cv, job_id j);

/* One more (delta 1) or one fewer (-1) placed job of priority prio. */
static void count_placed(kube *k, int32_t prio, int delta)
{
    size_t i = 0;
    while (i < k->n_prio && k->placed_prio[i] < prio) {
        i++;
    }
    if (i == k->n_prio || k->placed_prio[i] != prio) {
        SIM_ASSERT(delta > 0);
        if (k->n_prio == k->cap_prio) {
            k->cap_prio = k->cap_prio ? 2 * k->cap_prio : 4;
            k->placed_prio = xrealloc(k->placed_prio, k->cap_prio * sizeof(int32_t), "priorities");
            k->placed_count =
                xrealloc(k->placed_count, k->cap_prio * sizeof(uint32_t), "priorities");
        }
        memmove(k->placed_prio + i + 1, k->placed_prio + i, (k->n_prio - i) * sizeof(int32_t));
        memmove(k->placed_count + i + 1, k->placed_count + i, (k->n_prio - i) * sizeof(uint32_t));
        k->placed_prio[i] = prio;
        k->placed_count[i] = 0;
        k->n_prio++;
    }
    SIM_ASSERT(delta > 0 || k->placed_count[i] > 0);
    k->placed_count[i] += (uint32_t)delta;
    if (k->placed_count[i] == 0) {
        memmove(k->placed_prio + i, k->placed_prio + i + 1, (k->n_prio - i - 1) * sizeof(int32_t));
        memmove(k->placed_count + i, k->placed_count + i + 1,
                (k->n_prio - i - 1) * sizeof(uint32_t));
        k->n_prio--;
    }
}

void kube_on_arrival(void *self, const cluster_view *cv, job_id j, decision_buf *out)
{
    (void)out;
    kube *k = self;
    setup(k, cv);
    unbook(k, cv, j); /* a job killed by a fault comes back this way */
    enqueue(k, cv, j);
    k->has_new = true;
    k->new_job = j;
}

/* Does pod p hold nothing on node n: no GPU, and no CPU or host memory that the node counts?
 * The cluster then sees the node idle (pol_node_idle) while the pod is in its affinity. */
static bool holds_nothing(const cluster_view *cv, const kube_pod *p, node_id n)
{
    return p->shape.n_gpu == 0 && (p->shape.cpu_milli == 0 || !pol_node_cpu_capacity(cv, n)) &&
           (p->mem_bytes == 0 || !pol_node_mem_capacity(cv, n));
}

/* Forget where job j runs (it ended or is preempted). */
static void unbook(kube *k, const cluster_view *cv, job_id j)
{
    node_id *nodes = k->placed[j];
    if (nodes) {
        kube_pod kp;
        uint32_t n_workers = job_pod_of(cv, j, &kp);
        for (uint32_t w = 0; w < n_workers; w++) {
            k->affinity[(size_t)nodes[w] * KUBE_TAGS + kp.tag]--;
            k->cache->aver[nodes[w]]++;
            k->n_empty_pods -= holds_nothing(cv, &kp, nodes[w]);
        }
        pol_job pj;
        pol_job_get(cv, j, &pj);
        count_placed(k, pj.pod.priority, -1);
        free(nodes);
        k->placed[j] = NULL;
    }
}

/* Something was freed: try every queued job again. */
static void start_round(kube *k)
{
    k->round = true;
    k->cursor = 0;
    k->n_failed = 0;
}

void kube_on_capacity(void *self, const cluster_view *cv, decision_buf *out)
{
    (void)out;
    setup(self, cv);
    start_round(self);
}

void kube_on_finish(void *self, const cluster_view *cv, job_id j, decision_buf *out)
{
    (void)out;
    kube *k = self;
    setup(k, cv);
    unbook(k, cv, j);
    start_round(k);
}

/* ---- filter --------------------------------------------------------------------------------- */

/* Load node n's state for pod p, less what this job's earlier workers (units[0..n_units),
 * nodes[0..w)) took there. */
static void load_node(const cluster_view *cv, const kube *k, node_id n, const kube_pod *p,
                      const pol_job *j, uint32_t w, nstate *s)
{
    kube_node *kn = &s->kn;
    memset(kn, 0, sizeof *kn);
    kn->id = n;
    kn->affinity = &k->affinity[(size_t)n * KUBE_TAGS];
    kn->gpu_ok = s->gpu_ok;
    kn->cpu_cap = pol_node_cpu_capacity(cv, n);
    kn->mem_cap = pol_node_mem_capacity(cv, n);
    kn->fn.cpu_left = pol_node_cpu_free(cv, n);
    kn->mem_left = pol_node_mem_free(cv, n);
    gpu_id g0;
    uint32_t n_gpus;
    pol_node_gpus(cv, n, &g0, &n_gpus);
    kn->first_gpu = g0;
    kn->fn.n_gpus = n_gpus < FRAG_MAX_GPUS ? n_gpus : FRAG_MAX_GPUS;
    for (uint32_t i = 0; i < kn->fn.n_gpus; i++) {
        pol_gpu pg;
        pol_gpu_get(cv, g0 + i, &pg);
        kn->fn.milli_left[i] = pg.milli_free;
        kn->fn.gpu_type = kn->fn.gpu_type ? kn->fn.gpu_type : pg.type_name;
        s->gpu_ok[i] = pg.shareable && frag_type_allowed(p->shape.gpu_spec, pg.type_name);
    }
    pol_node_devices(cv, n, &s->first_dev, &s->n_devs);
    for (uint32_t i = 0; i < s->n_devs; i++) {
        pol_device pd;
        pol_device_get(cv, s->first_dev + i, &pd);
        uint32_t gi = pd.gpu - g0;
        s->dev_gpu[i] = gi;
        s->dev_free[i] = pd.free;
        s->dev_used[i] = pd.slots - pd.free;
        pol_gpu pg;
        pol_gpu_get(cv, pd.gpu, &pg);
        s->dev_ok[i] = p->whole && pd.resource == p->res &&
                       frag_type_allowed(p->shape.gpu_spec, pg.type_name);
        if (p->whole && pd.resource == p->res) {
            kn->res_cap += pd.slots;
            kn->res_free += pd.free;
        }
    }
    /* the gang's earlier workers on this node */
    uint32_t per = p->whole || p->shape.n_gpu ? p->shape.n_gpu : 0;
    for (uint32_t v = 0; v < w; v++) {
        if (k->nodes[v] != n) {
            continue;
        }
        kn->fn.cpu_left -= kn->cpu_cap ? p->shape.cpu_milli : 0;
        kn->mem_left -= kn->mem_cap ? p->mem_bytes : 0;
        for (uint32_t u = v * per; u < (v + 1) * per; u++) {
            uint32_t i = k->units[u] - s->first_dev;
            uint32_t gi = s->dev_gpu[i];
            if (p->whole) {
                s->dev_free[i]--;
                s->dev_used[i]++;
                kn->res_free--;
                if (gi < kn->fn.n_gpus) {
                    kn->fn.milli_left[gi] = 0;
                }
            } else if (gi < kn->fn.n_gpus) {
                kn->fn.milli_left[gi] -= p->shape.milli;
            }
        }
    }
    (void)j;
}

/* Does pod p fit node state s? */
static bool fits(const kube_pod *p, const nstate *s)
{
    const kube_node *kn = &s->kn;
    if (kn->fn.cpu_left < p->shape.cpu_milli || kn->mem_left < p->mem_bytes) {
        return false;
    }
    if (p->whole) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < s->n_devs && n < p->shape.n_gpu; i++) {
            n += s->dev_ok[i] ? s->dev_free[i] : 0;
        }
        return n >= p->shape.n_gpu;
    }
    if (p->shape.n_gpu == 0) {
        return true;
    }
    for (uint32_t i = 0; i < kn->fn.n_gpus; i++) {
        if (s->gpu_ok[i] && kn->fn.milli_left[i] >= p->shape.milli) {
            return true;
        }
    }
    return false;
}

/* ---- bind ----------------------------------------------------------------------------------- */

/* Best fit: the GPU with the least free share that suffices, lowest index on ties. */
static int best_fit_gpu(const kube_pod *p, const nstate *s)
{
    int best = -1;
    for (uint32_t i = 0; i < s->kn.fn.n_gpus; i++) {
        uint32_t left = s->kn.fn.milli_left[i];
        if (s->gpu_ok[i] && left >= p->shape.milli &&
            (best < 0 || left < s->kn.fn.milli_left[best])) {
            best = (int)i;
        }
    }
    return best;
}

/* Devices for one worker of p on node state s, appended to k->units at *n_units. */
static void bind(kube *k, const kube_pod *p, const nstate *s, uint32_t *n_units)
{
    if (p->whole) {
        uint32_t *taken = k->scratch->taken;
        memset(taken, 0, s->n_devs * sizeof *taken);
        for (uint32_t u = 0; u < p->shape.n_gpu; u++) {
            int best = -1;
            for (uint32_t i = 0; i < s->n_devs; i++) {
                if (!s->dev_ok[i] || s->dev_free[i] <= taken[i]) {
                    continue;
                }
                if (best < 0 ||
                    s->dev_used[i] + taken[i] < s->dev_used[best] + taken[(uint32_t)best]) {
                    best = (int)i;
                }
            }
            SIM_ASSERT(best >= 0);
            taken[best]++;
            k->units[(*n_units)++] = s->first_dev + (dev_id)best;
        }
    } else if (p->shape.n_gpu > 0) {
        int gi = k->pol->select_gpu ? k->pol->select_gpu(k, p, &s->kn) : best_fit_gpu(p, s);
        SIM_ASSERT(gi >= 0 && (uint32_t)gi < s->kn.fn.n_gpus && s->gpu_ok[gi]);
        for (uint32_t i = 0; i < s->n_devs; i++) {
            if (s->dev_gpu[i] == (uint32_t)gi) {
                k->units[(*n_units)++] = s->first_dev + i;
                break;
            }
        }
    }
}

/* ---- one cycle ------------------------------------------------------------------------------ */

/* kube-scheduler's numFeasibleNodesToFind with the default adaptive percentage. */
static uint32_t feasible_to_find(uint32_t n_nodes)
{
    if (n_nodes < 100) {
        return n_nodes;
    }
    int64_t pct = 50 - (int64_t)n_nodes / 125;
    pct = pct < 5 ? 5 : pct;
    uint64_t n = (uint64_t)n_nodes * (uint64_t)pct / 100;
    return n < 100 ? 100 : (uint32_t)n;
}

/* Next candidate node >= from for pod p (the free-capacity index skips full nodes). */
static node_id next_candidate(const cluster_view *cv, const kube_pod *p, bool known, node_id from)
{
    if (!known) {
        return pol_n_nodes(cv);
    }
    if (p->whole) {
        return pol_next_node(cv, p->res, p->shape.n_gpu, from);
    }
    if (p->shape.n_gpu > 0) {
        return pol_next_node_share(cv, p->shape.milli, from);
    }
    return from;
}

static bool same_spec(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b)) || (!a && !*b) || (!b && !*a);
}

/* Do pods p and q look the same to the filter and to every score (kube_pod's fields)? */
static bool same_pod(const kube_pod *p, const kube_pod *q)
{
    return p->shape.n_gpu == q->shape.n_gpu && p->shape.milli == q->shape.milli &&
           p->shape.cpu_milli == q->shape.cpu_milli && p->whole == q->whole &&
           (!p->whole || p->res == q->res) && p->mem_bytes == q->mem_bytes && p->tag == q->tag &&
           same_spec(p->shape.gpu_spec, q->shape.gpu_spec);
}

/* The cache entries of pod shape p (n_nodes of them), or NULL when it is not cached. */
static centry *cache_of(kube *k, const kube_pod *p)
{
    struct kube_cache *c = k->cache;
    for (size_t i = 0; i < c->n_shapes; i++) {
        if (same_pod(&c->shapes[i], p)) {
            return c->entries[i];
        }
    }
    if (c->n_shapes == c->max_shapes) {
        return NULL;
    }
    c->shapes[c->n_shapes] = *p;
    c->entries[c->n_shapes] = xcalloc(k->n_nodes, sizeof(centry), "kube cache");
    return c->entries[c->n_shapes++];
}

/* Did one of the job's earlier workers (0..w-1) go to node n? (its state then differs from the
 * cluster's, so the cache does not apply) */
static bool gang_on(const kube *k, node_id n, uint32_t w)
{
    for (uint32_t v = 0; v < w; v++) {
        if (k->nodes[v] == n) {
            return true;
        }
    }
    return false;
}

/* Filter and score node n for worker w of job j: true when it fits, its score in *score.
 * From the cache when the node and its affinity are as they were when the entry was filled. */
static bool filter_score(kube *k, const cluster_view *cv, const pol_job *j, const kube_pod *p,
                         uint32_t w, centry *ce, node_id n, double *score)
{
    centry *e = ce && !gang_on(k, n, w) ? &ce[n] : NULL;
    uint64_t ver = e ? pol_node_version(cv, n) + 1 : 0;
    uint32_t aver = k->cache->aver[n];
    if (e && e->ver == ver && e->aver == aver) {
        *score = e->score;
        return e->fits;
    }
    nstate *cand = &k->scratch->cand;
    load_node(cv, k, n, p, j, w, cand);
    bool ok = fits(p, cand);
    *score = ok ? k->pol->score(k, p, &cand->kn) : 0;
    if (e) {
        *e = (centry){.ver = ver, .aver = aver, .fits = ok, .score = *score};
    }
    return ok;
}

/* The best node so far of one decision: fewest untolerated PreferNoSchedule taints, then the
 * highest score, then (fixed order) the lowest rank, or (random) the nodes tied for it. */
typedef struct pick {
    uint32_t found, ties, best_pen;
    double best;
    node_id chosen;
} pick;

/* Filter and score node n for worker w of job j and keep it in *b if it is the best so far. */
static void consider(kube *k, const cluster_view *cv, const pol_job *j, const kube_pod *p,
                     uint32_t w, centry *ce, node_id n, pick *b)
{
    double sc;
    if (!pol_node_admits(cv, j, n) || !filter_score(k, cv, j, p, w, ce, n, &sc)) {
        return;
    }
    b->found++;
    /* fewer untolerated PreferNoSchedule taints first (policy.h), then the score */
    uint32_t pen = pol_node_prefer_penalty(cv, j, n);
    if (pen < b->best_pen || (pen == b->best_pen && sc > b->best)) {
        b->best = sc;
        b->best_pen = pen;
        b->ties = 0;
        k->scratch->tied[b->ties++] = n;
        b->chosen = n;
    } else if (pen > b->best_pen || sc < b->best) {
        return;
    } else if (k->fixed_order) {
        b->chosen = k->rank[n] < k->rank[b->chosen] ? n : b->chosen; /* first in the run's order */
    } else {
        k->scratch->tied[b->ties++] = n; /* drawn from once the scan is done */
    }
}

/* Next node >= from for pod p that is not idle (as next_candidate, idle nodes left out). */
static node_id next_busy(const cluster_view *cv, const kube_pod *p, node_id from)
{
    if (p->whole) {
        return pol_next_busy_node(cv, p->res, p->shape.n_gpu, from);
    }
    if (p->shape.n_gpu > 0) {
        return pol_next_busy_node_share(cv, p->shape.milli, from);
    }
    return pol_next_busy(cv, from);
}

/* Every node scored, fixed-order ties: the nodes that are not idle, the idle nodes the job's
 * earlier workers took (their state is not their class's), and of each class the first idle
 * node in the run's order that no earlier worker took; the others of its class would pass or
 * fail alike, score alike and lose the tie to it (kube.h). */
static void scan_by_class(kube *k, const cluster_view *cv, const pol_job *j, const kube_pod *p,
                          uint32_t w, centry *ce, pick *b)
{
    struct kube_idle *x = k->idle;
    uint32_t n_nodes = pol_n_nodes(cv);
    idle_sync(x, cv);
    for (node_id n = next_busy(cv, p, 0); n < n_nodes; n = next_busy(cv, p, n + 1)) {
        consider(k, cv, j, p, w, ce, n, b);
    }
    for (uint32_t v = 0; v < w; v++) {
        node_id g = k->nodes[v];
        if (x->pos[g] != UINT32_MAX && pol_node_idle(cv, g) && !gang_on(k, g, v)) {
            consider(k, cv, j, p, w, ce, g, b);
        }
    }
    for (uint32_t q = idle_next(x, 0); q < x->n_pos;) {
        uint32_t end = x->off[pol_node_class(cv, x->node[q]) + 1];
        while (q < end && gang_on(k, x->node[q], w)) {
            q = idle_next(x, q + 1);
        }
        if (q < end) {
            consider(k, cv, j, p, w, ce, x->node[q], b);
        }
        q = idle_next(x, end);
    }
}

/* Choose a node for worker w of job j; true and the chosen state in scratch->best. */
static bool choose_node(kube *k, const cluster_view *cv, const pol_job *j, const kube_pod *p,
                        bool known, uint32_t w)
{
    kscratch *s = k->scratch;
    uint32_t n_nodes = pol_n_nodes(cv);
    bool sample = k->pol->sample;
    uint32_t want = sample ? feasible_to_find(n_nodes) : n_nodes;
    node_id start = sample ? k->next_start % n_nodes : 0;
    pick b = {.best_pen = UINT32_MAX, .best = -INFINITY};
    node_id last = start;
    centry *ce = known ? cache_of(k, p) : NULL;
    if (k->idle && known && !j->pod.node_pin && k->n_empty_pods == 0) {
        scan_by_class(k, cv, j, p, w, ce, &b);
    } else {
        for (int pass = 0; pass < (sample && start > 0 ? 2 : 1) && b.found < want; pass++) {
            node_id lo = pass == 0 ? start : 0, hi = pass == 0 ? n_nodes : start;
            for (node_id n = next_candidate(cv, p, known, lo); n < hi && b.found < want;
                 n = next_candidate(cv, p, known, n + 1)) {
                last = n;
                consider(k, cv, j, p, w, ce, n, &b);
            }
        }
    }
    if (!k->fixed_order && b.ties > 1) { /* uniform over the tied nodes: one draw per decision */
        b.chosen = s->tied[kube_draw(k, b.ties)];
    }
    if (sample) {
        k->next_start = (last + 1) % n_nodes;
    }
    if (b.found > 0) {
        load_node(cv, k, b.chosen, p, j, w, &s->best);
    }
    return b.found > 0;
}

static void grow_scratch(kube *k, const pol_job *j)
{
    size_t nu = (size_t)j->per_worker * j->n_workers;
    if (nu > k->cap_units) {
        k->cap_units = nu;
        k->units = xrealloc(k->units, nu * sizeof(dev_id), "placement");
    }
    if (j->n_workers > k->cap_nodes) {
        k->cap_nodes = j->n_workers;
        k->nodes = xrealloc(k->nodes, j->n_workers * sizeof(node_id), "placement nodes");
    }
}

/* Try to place job j; on success append the decision and book it. */
static bool try_place(kube *k, const cluster_view *cv, const pol_job *j, decision_buf *out)
{
    kube_pod p;
    bool known;
    pod_of(cv, j, &p, &known);
    grow_scratch(k, j);
    uint32_t n_units = 0;
    for (uint32_t w = 0; w < j->n_workers; w++) {
        if (!choose_node(k, cv, j, &p, known, w)) {
            return false;
        }
        k->nodes[w] = k->scratch->best.kn.id;
        bind(k, &p, &k->scratch->best, &n_units);
    }
    pol_place_on(out, j->id, k->units, n_units, k->nodes, j->n_workers);
    node_id *nodes = xcalloc(j->n_workers, sizeof(node_id), "placed nodes");
    memcpy(nodes, k->nodes, j->n_workers * sizeof(node_id));
    for (uint32_t w = 0; w < j->n_workers; w++) {
        k->affinity[(size_t)nodes[w] * KUBE_TAGS + p.tag]++;
        k->cache->aver[nodes[w]]++;
        k->n_empty_pods += holds_nothing(cv, &p, nodes[w]);
    }
    if (!k->placed[j->id]) {
        count_placed(k, j->pod.priority, 1);
    }
    free(k->placed[j->id]);
    k->placed[j->id] = nodes;
    return true;
}

/* Add back to node state s what running job v holds on it (a preemption trial). */
static void add_back(const cluster_view *cv, kube *k, job_id v, nstate *s)
{
    pol_job vj;
    kube_pod vp;
    bool known, running;
    const dev_id *units;
    pol_job_get(cv, v, &vj);
    pod_of(cv, &vj, &vp, &known);
    uint32_t n = pol_job_placement(cv, v, &units, &running);
    for (uint32_t w = 0; w < vj.n_workers; w++) {
        if (k->placed[v][w] == s->kn.id) {
            s->kn.fn.cpu_left += s->kn.cpu_cap ? vj.pod.cpu_milli : 0;
            s->kn.mem_left += s->kn.mem_cap ? vj.pod.host_mem_bytes : 0;
        }
    }
    for (uint32_t u = 0; u < n; u++) {
        if (units[u] < s->first_dev || units[u] >= s->first_dev + s->n_devs) {
            continue;
        }
        uint32_t i = units[u] - s->first_dev, gi = s->dev_gpu[i];
        if (vp.whole) {
            s->dev_free[i]++;
            s->dev_used[i]--;
            if (gi < s->kn.fn.n_gpus && s->gpu_ok[gi]) {
                s->kn.fn.milli_left[gi] = MILLI_PER_GPU;
            }
        } else if (gi < s->kn.fn.n_gpus) {
            s->kn.fn.milli_left[gi] += vp.shape.milli;
        }
    }
}

/* A possible victim: running job `job` of priority `prio` with a worker on `node`. */
typedef struct victim {
    node_id node;
    int32_t prio;
    job_id job;
} victim;

/* By node, then lowest priority first, then latest submitted first. */
static int by_node_priority(const void *pa, const void *pb)
{
    const victim *a = pa, *b = pb;
    if (a->node != b->node) {
        return a->node < b->node ? -1 : 1;
    }
    if (a->prio != b->prio) {
        return a->prio < b->prio ? -1 : 1;
    }
    return a->job > b->job ? -1 : a->job < b->job;
}

/* DefaultPreemption for a single-worker job j that does not fit: find the node where evicting
 * lowest-priority running jobs first makes room with the lowest highest-victim priority, then the
 * fewest victims; append their preemptions. One pass over the running jobs collects the possible
 * victims (lower priority than j), so a workload of one priority costs O(jobs) per attempt. */
static bool try_preempt(kube *k, const cluster_view *cv, const pol_job *j, decision_buf *out)
{
    if (j->n_workers != 1) {
        return false;
    }
    kube_pod p;
    bool known;
    pod_of(cv, j, &p, &known);
    if (!known || k->n_prio == 0 || k->placed_prio[0] >= j->pod.priority) {
        return false; /* no running job of lower priority: no victim */
    }
    size_t nv = 0, cap = 0;
    victim *vs = NULL;
    for (job_id v = 0; v < k->n_jobs; v++) {
        if (!k->placed[v]) {
            continue;
        }
        pol_job vj;
        pol_job_get(cv, v, &vj);
        if (vj.pod.priority >= j->pod.priority) {
            continue;
        }
        for (uint32_t w = 0; w < vj.n_workers; w++) {
            bool seen = false; /* one entry per job and node */
            for (uint32_t x = 0; x < w && !seen; x++) {
                seen = k->placed[v][x] == k->placed[v][w];
            }
            if (seen) {
                continue;
            }
            if (nv == cap) {
                cap = cap ? 2 * cap : 64;
                vs = xrealloc(vs, cap * sizeof *vs, "victims");
            }
            vs[nv++] = (victim){k->placed[v][w], vj.pod.priority, v};
        }
    }
    if (nv == 0) {
        return false;
    }
    qsort(vs, nv, sizeof *vs, by_node_priority);
    kscratch *s = k->scratch;
    size_t best_first = 0, best_n = 0;
    int32_t best_top = INT32_MAX;
    bool found = false;
    for (size_t first = 0; first < nv;) {
        size_t end = first;
        while (end < nv && vs[end].node == vs[first].node) {
            end++;
        }
        if (!pol_node_admits(cv, j, vs[first].node)) {
            first = end;
            continue;
        }
        load_node(cv, k, vs[first].node, &p, j, 0, &s->trial);
        size_t used = 0;
        while (first + used < end && !fits(&p, &s->trial)) {
            add_back(cv, k, vs[first + used].job, &s->trial);
            used++;
        }
        if (used > 0 && fits(&p, &s->trial)) {
            int32_t top = vs[first + used - 1].prio;
            if (!found || top < best_top || (top == best_top && used < best_n)) {
                found = true;
                best_top = top;
                best_n = used;
                best_first = first;
            }
        }
        first = end;
    }
    for (size_t i = 0; found && i < best_n; i++) {
        job_id v = vs[best_first + i].job;
        pol_preempt(out, v);
        unbook(k, cv, v);
        enqueue(k, cv, v); /* lower priority: queued behind j */
    }
    free(vs);
    return found;
}

static bool same_shape(const pol_job *a, const pol_job *b)
{
    /* the numbers first: the resource names are compared only when everything else agrees */
    return a->per_worker == b->per_worker && a->n_workers == b->n_workers &&
           a->pod.gpu_milli == b->pod.gpu_milli && a->pod.cpu_milli == b->pod.cpu_milli &&
           a->pod.host_mem_bytes == b->pod.host_mem_bytes && a->pod.gpu_spec == b->pod.gpu_spec &&
           a->pod.priority == b->pod.priority && a->pod.node_pin == b->pod.node_pin &&
           taint_pod_same(a->pod.place, b->pod.place) &&
           (a->resource == b->resource ||
            !strcmp(a->resource ? a->resource : "", b->resource ? b->resource : ""));
}

/* Remember the shape of j as failed in this round (a bounded memo of the jobs' copies). */
static void remember_failed(kube *k, const pol_job *j)
{
    if (k->n_failed < KUBE_MEMO) {
        k->failed_jobs[k->n_failed++] = *j;
    }
}

static bool failed_before(const kube *k, const pol_job *j)
{
    for (size_t i = 0; i < k->n_failed; i++) {
        if (same_shape(&k->failed_jobs[i], j)) {
            return true;
        }
    }
    return false;
}

/* Schedule job at queue position i: place it (dequeue), or preempt for it; false if neither. */
static bool cycle(kube *k, const cluster_view *cv, size_t i, decision_buf *out)
{
    pol_job j;
    pol_job_get(cv, k->queue[i], &j);
    if (try_place(k, cv, &j, out)) {
        dequeue_at(k, i);
        return true;
    }
    if (k->pol->preempt && try_preempt(k, cv, &j, out)) {
        return true; /* the job stays queued and is placed in the next cycle */
    }
    return false;
}

bool kube_pick(void *self, const cluster_view *cv, decision_buf *out)
{
    kube *k = self;
    setup(k, cv);
    if (k->has_new) {
        k->has_new = false;
        for (size_t i = 0; i < k->n_queue; i++) {
            if (k->queue[i] == k->new_job) {
                if (cycle(k, cv, i, out)) {
                    if (k->round && i < k->cursor) {
                        k->cursor--;
                    }
                    /* preempted for it: still queued, placed in the next cycle */
                    k->has_new = i < k->n_queue && k->queue[i] == k->new_job;
                    return true;
                }
                break;
            }
        }
    }
    while (k->round && k->cursor < k->n_queue) {
        pol_job j;
        pol_job_get(cv, k->queue[k->cursor], &j);
        if (!failed_before(k, &j)) {
            if (cycle(k, cv, k->cursor, out)) {
                return true; /* placed (the queue moved up) or preempted (retry it next) */
            }
            remember_failed(k, &j);
        }
        k->cursor++;
    }
    k->round = false;
    return false;
}
