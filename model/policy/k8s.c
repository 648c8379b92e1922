/* model/policy/k8s.c - kube-scheduler's default scoring: `k8s` (LeastAllocated, spread) and
 * `binpack` (MostAllocated), behind the kube scheduling cycle (kube.h).
 *
 * Source: Kubernetes pkg/scheduler/framework/plugins/noderesources (least_allocated.go,
 * most_allocated.go; the NodeResourcesFit scoring strategies, documented at
 * kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing). LeastAllocated scores a
 * node by the mean over resources of (capacity - requested after placement) / capacity;
 * MostAllocated by requested / capacity. Resources scored here: the GPU resource the pod asks
 * for (units of it, or milli-GPU of the node's GPUs for a fractional pod, as if configured as an
 * extended resource with weight 1), and CPU and memory when the node states them (the default
 * weights, 1 each). `k8s` samples nodes as kube-scheduler does by default
 * (percentageOfNodesToScore adaptive); `binpack` scores every feasible node. A fractional pod
 * goes to the GPU with the most free share under `k8s` (spread), the least that suffices under
 * `binpack`.
 */
#include "model/policy/kube.h"

/* Mean over the scored resources of the fraction left free after placing p on n. */
static double free_after(const kube_pod *p, const kube_node *n)
{
    double sum = 0;
    int dims = 0;
    if (p->whole && n->res_cap > 0) {
        sum += (double)(n->res_free - p->shape.n_gpu) / n->res_cap;
        dims++;
    } else if (p->shape.n_gpu > 0 && n->fn.n_gpus > 0) {
        sum += ((double)frag_idle(&n->fn) - p->shape.milli) / (MILLI_PER_GPU * (double)n->fn.n_gpus);
        dims++;
    }
    if (n->cpu_cap > 0) {
        sum += (double)(n->fn.cpu_left - p->shape.cpu_milli) / (double)n->cpu_cap;
        dims++;
    }
    if (n->mem_cap > 0) {
        sum += (double)(n->mem_left - p->mem_bytes) / (double)n->mem_cap;
        dims++;
    }
    return dims ? sum / dims : 0;
}

static double least_allocated(kube *k, const kube_pod *p, const kube_node *n)
{
    (void)k;
    return 100 * free_after(p, n);
}

static double most_allocated(kube *k, const kube_pod *p, const kube_node *n)
{
    (void)k;
    return 100 * (1 - free_after(p, n));
}

/* The GPU with the most free share that suffices (spread), lowest index on ties. */
static int worst_fit_gpu(kube *k, const kube_pod *p, const kube_node *n)
{
    (void)k;
    int best = -1;
    for (uint32_t i = 0; i < n->fn.n_gpus; i++) {
        uint32_t left = n->fn.milli_left[i];
        if (n->gpu_ok[i] && left >= p->shape.milli &&
            (best < 0 || left > n->fn.milli_left[best])) {
            best = (int)i;
        }
    }
    return best;
}

static const kube_policy k8s_desc = {
    .name = "k8s", .score = least_allocated, .select_gpu = worst_fit_gpu, .sample = true,
    .preempt = true};
static const kube_policy binpack_desc = {
    .name = "binpack", .score = most_allocated, .preempt = true};

KUBE_POLICY(k8s, "kube-scheduler default: priority queue, no head-of-line blocking, "
                 "LeastAllocated (spread), preemption")
KUBE_POLICY(binpack, "kube-scheduler with MostAllocated scoring (bin-packing), preemption")
