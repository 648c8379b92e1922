/* model/policy/kube.h - kube-scheduler's scheduling cycle, shared by the placement policies.
 *
 * Semantics (kube-scheduler, pkg/scheduler/schedule_one.go and framework/plugins; the
 * k8s-device-plugin for which devices a pod gets):
 *  - Queue: pods wait in priority order (PrioritySort: higher `priority` first, then earlier
 *    submission). One pod (here: one job, all its workers as a gang) is scheduled per cycle.
 *  - No head-of-line blocking: a job that does not fit stays queued and the next one is tried.
 *    It is tried again when something ends (kube moves unschedulable pods back to the active
 *    queue on cluster events); a newly arrived job is tried on arrival. Within one retry round a
 *    shape that failed is not tried again (capacity only shrinks during a round).
 *  - Filter: the node has the GPUs (whole units of the requested resource, or a shareable GPU
 *    with the pod's gpu_milli free), GPU types allowed by gpu_spec, and the CPU and host memory
 *    of the pod. Candidates come from the free-capacity index (model/cluster/cluster.h), so a full node
 *    costs nothing. With `sample`, the search stops after kube-scheduler's numFeasibleNodesToFind
 *    (percentageOfNodesToScore adaptive: 50% - nodes/125, at least 5%, at least 100 nodes) and
 *    starts where the previous cycle stopped; otherwise every feasible node is scored.
 *    With fixed-order ties and every node scored, the idle nodes of a class of nodes alike
 *    (policy.h pol_node_class) all pass or fail the filter alike and score alike, and the first
 *    of them in the run's order wins their tie: so only that one is scored, beside every node
 *    that is not idle (pol_next_busy_node), and a decision costs what the busy nodes and the
 *    classes cost, not what the idle nodes do. The same choice as scoring every node.
 *    Filter and score results are cached per pod shape (everything of the pod that they read)
 *    and node, and reused while the node's version (pol_node_version) and its affinity counts
 *    are unchanged: the same results, computed once per node change rather than per cycle.
 *  - Score: the policy's function; the highest wins. Ties (parameter `tie_break`, default the
 *    policy's reference, kube_policy.fixed_order):
 *    `random`: uniformly at random with the run's seed (k8s, binpack, random): the
 *    distribution of upstream selectHost's reservoir sampling, but the tied nodes are counted
 *    during the scan and one number is drawn per decision (the reservoir draws one per tied
 *    node after the first);
 *    `fixed-order`: the first node in an order of the nodes drawn once per run from the seed
 *    (stream "policy.order"). FGD's simulator (hkust-adsl/kubernetes-scheduler-simulator) forks
 *    selectHost to take the smallest node name among the best scores and prefixes the node
 *    names with a seeded rand.Perm once per run (pkg/simulator/simulator.go), which is this
 *    order (fgd, bestfit, dotprod, gpupacking, gpuclustering).
 *  - Bind: whole units go to the node's devices of the resource with the fewest units in use
 *    first, then lowest id (the device plugin hands out the replicas of time-sliced GPUs spread
 *    over the GPUs before stacking them); a fractional pod goes to the GPU the policy picks.
 *  - Gang: the workers of a job are placed one after another, each seeing what the previous
 *    ones took; if one fails, none is placed (the coscheduling plugin's all-or-nothing).
 *  - Preemption (with `preempt`): when a job does not fit, a node where evicting running jobs of
 *    lower priority makes room for a worker is sought (lowest-priority victims first, fewest
 *    victims; DefaultPreemption's PostFilter); the victims are preempted and the job is placed
 *    in the next cycle. Single-worker jobs only.
 * Ownership: the state lives in the policy's `self`; kube_fini frees what it allocated.
 */
#ifndef SIMPROJ_MODEL_POLICY_KUBE_H
#define SIMPROJ_MODEL_POLICY_KUBE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/policy/frag.h"
#include "model/policy/policy.h"
#include "sim/rng.h"

#define KUBE_TAGS 10 /* GPU affinity tags: none, share, 1..8 GPUs */
#define KUBE_MEMO 32 /* failed shapes remembered per retry round */

/* One worker (pod) of the job being scheduled. */
typedef struct kube_pod {
    frag_pod shape;   /* GPUs, milli per GPU, CPU, gpu_spec */
    bool whole;       /* whole units of `res` (else a share, or CPU-only) */
    res_id res;       /* requested resource, when whole */
    uint64_t mem_bytes; /* host memory */
    uint32_t tag;     /* GPU affinity tag (GpuClustering): 0 CPU-only, 1 share, 1 + k k GPUs */
} kube_pod;

/* A candidate node as the scorer sees it (after the gang's earlier workers). */
typedef struct kube_node {
    node_id id;
    frag_node fn;       /* free milli-GPU of each GPU, CPU left, GPU type */
    gpu_id first_gpu;   /* fn.milli_left[i] is GPU first_gpu + i */
    uint64_t cpu_cap;   /* 0 = not modelled */
    uint64_t mem_left, mem_cap;
    uint32_t res_free, res_cap; /* units of the pod's resource (whole pods) */
    const uint32_t *affinity;   /* KUBE_TAGS counts of running pods by tag on this node */
    const bool *gpu_ok; /* per GPU: may take this fractional pod (shareable, type allowed) */
} kube_node;

typedef struct kube kube;

typedef struct kube_policy {
    const char *name;
    /* Score of node n for pod p (higher is better). It must be a function of p and n alone
     * (it may use kube_frag, not kube_draw): the cycle caches it per node state and pod shape
     * and does not call it again while neither changed. */
    double (*score)(kube *k, const kube_pod *p, const kube_node *n);
    /* For a fractional pod: index (into n->fn.milli_left) of the GPU to use, among those with
     * enough free. NULL: best fit (least free that suffices, lowest index on ties). */
    int (*select_gpu)(kube *k, const kube_pod *p, const kube_node *n);
    bool sample;     /* kube-scheduler's adaptive percentage of nodes to score */
    bool preempt;    /* priority preemption */
    bool typical;    /* needs the workload's typical pods (kube_frag) */
    bool fixed_order; /* ties by default to the run's fixed node order (else a uniform draw) */
    bool uniform;    /* ties are the policy itself (random): only `tie_break: random` */
} kube_policy;

struct kube {
    const kube_policy *pol;
    job_id *queue; /* queued jobs in priority order */
    size_t n_queue, cap_queue;
    size_t cursor;      /* next queue position to try in this round */
    bool round;         /* a retry round is under way */
    bool has_new;       /* a job arrived: try it first */
    job_id new_job;
    pol_job failed_jobs[KUBE_MEMO]; /* jobs whose shapes failed in this round */
    size_t n_failed;
    struct kube_scratch *scratch; /* node states for filtering and scoring; owned */
    rng_stream *rng;      /* ties and random choices; opened from the run's seed */
    bool fixed_order;     /* ties to the lowest rank (tie_break: fixed-order) */
    uint32_t *rank;       /* fixed_order: each node's place in the run's node order */
    node_id next_start;   /* where the sampled search starts */
    uint32_t *affinity;   /* n_nodes * KUBE_TAGS */
    node_id **placed;     /* per job: node of each worker while running */
    int32_t *placed_prio; /* distinct priorities of the placed jobs, ascending */
    uint32_t *placed_count; /* placed jobs of each of them */
    size_t n_prio, cap_prio;
    uint32_t n_jobs, n_nodes;
    frag_typical typ;
    frag_memo memo;       /* fragmentation of node states under typ (kube_frag) */
    bool have_typ;
    struct kube_cache *cache; /* filter and score results per pod shape and node; owned */
    struct kube_idle *idle;   /* the idle nodes of each class in the run's order (fixed-order
                               * ties, every node scored), or NULL; owned */
    uint32_t n_empty_pods;    /* placed workers that hold nothing on their node (the cluster
                               * sees the node idle although the pod counts in its affinity) */
    dev_id *units;        /* placement scratch */
    node_id *nodes;
    size_t cap_units, cap_nodes;
};

/* The policy_ops callbacks shared by every kube policy; each policy's init calls kube_init,
 * which takes one parameter, `tie_break: fixed-order | random` (kube.h's Score). */
int kube_init(kube *k, const kube_policy *pol, const param_set *params, diag *d);
void kube_fini(void *self);
void kube_on_arrival(void *self, const cluster_view *cv, job_id j, decision_buf *out);
void kube_on_finish(void *self, const cluster_view *cv, job_id j, decision_buf *out);
void kube_on_capacity(void *self, const cluster_view *cv, decision_buf *out);
bool kube_pick(void *self, const cluster_view *cv, decision_buf *out);
/* policy_ops.cache_bytes of policy pol: the filter and score results of each pod shape on every
 * node (at most as many shapes as the cache takes), the nodes' affinity versions, and the
 * fragmentation memo when the policy scores by kube_frag (pol->typical). */
double kube_cache_bytes(const kube_policy *pol, uint32_t n_nodes, double n_shapes);

/* Fragmented milli-GPU of node state n under the workload's typical pods (FGD's, threshold
 * 95 %, built at the first cycle when the policy asks for them): frag_node_amount, cached
 * across cycles (k->memo). */
double kube_frag(kube *k, const frag_node *n);
/* A uniform draw in [0, n) from the policy's stream. */
uint64_t kube_draw(kube *k, uint64_t n);

/* Define `const policy_ops pol_NAME_ops` for the kube_policy NAME_desc of the including file. */
#define KUBE_POLICY(NAME, SUMMARY)                                                                 \
    static int NAME##_init(void *self, const param_set *params, diag *d)                          \
    {                                                                                              \
        return kube_init(self, &NAME##_desc, params, d);                                           \
    }                                                                                              \
    static double NAME##_cache_bytes(uint32_t n_nodes, double n_shapes)                            \
    {                                                                                              \
        return kube_cache_bytes(&NAME##_desc, n_nodes, n_shapes);                                  \
    }                                                                                              \
    const policy_ops pol_##NAME##_ops = {                                                          \
        .name = #NAME,                                                                             \
        .summary = SUMMARY,                                                                        \
        .state_size = sizeof(kube),                                                                \
        .init = NAME##_init,                                                                       \
        .fini = kube_fini,                                                                         \
        .on_arrival = kube_on_arrival,                                                             \
        .on_finish = kube_on_finish,                                                               \
        .on_capacity = kube_on_capacity,                                                           \
        .pick = kube_pick,                                                                         \
        .cache_bytes = NAME##_cache_bytes,                                                         \
    };

#endif
