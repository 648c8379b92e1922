/* model/policy/fgd.c - `fgd`: Fragmentation Gradient Descent (Weng et al., "Beware of
 * Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX
 * ATC '23, section 4), behind the kube scheduling cycle (kube.h).
 *
 * As its simulator defines it (hkust-adsl/kubernetes-scheduler-simulator,
 * pkg/simulator/plugin/fgd_score.go; written anew here): a node's score is
 * int64(sigmoid((F_before - F_after) / 1000) * 100), where F is the node's fragmentation under
 * the workload's typical pods (model/policy/frag.h; from the pods before inflation) before and
 * after placing the pod; the node that grows the fragmentation least wins. The score is
 * truncated to an integer as there, so most feasible nodes tie and the tie rule (kube.h; default
 * the simulator's fixed node order) decides most placements. A fractional pod goes to the GPU
 * with the highest such integer score, the lowest index among equal ones (as
 * calculateGpuShareFragExtendScore); whole GPUs are the lowest-numbered idle ones. Every
 * feasible node is scored (the simulator scores all).
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "model/policy/kube.h"

/* Node n after pod p takes GPU `gi` (a share), or its idle GPUs in ascending order of free share
 * (frag.go's NodeResource.Sub, for whole GPUs), and its CPU. */
static frag_node after(const kube_pod *p, const kube_node *n, int gi)
{
    frag_node a = n->fn;
    if (a.cpu_left != UINT64_MAX) {
        a.cpu_left -= p->shape.cpu_milli;
    }
    if (gi >= 0) {
        a.milli_left[gi] -= p->shape.milli;
        return a;
    }
    uint32_t need = p->shape.n_gpu;
    while (need > 0) { /* the least free GPU that suffices, each in turn */
        int best = -1;
        for (uint32_t i = 0; i < a.n_gpus; i++) {
            if (a.milli_left[i] >= p->shape.milli &&
                (best < 0 || a.milli_left[i] < a.milli_left[best])) {
                best = (int)i;
            }
        }
        if (best < 0) {
            break;
        }
        a.milli_left[best] -= p->shape.milli;
        need--;
    }
    return a;
}

/* int64(sigmoid(d) * 100) in the simulator's order of operations (plugin_utils.go's sigmoid). */
static double sigmoid_score(kube *k, double before, const frag_node *a)
{
    double d = (before - kube_frag(k, a)) / (double)MILLI_PER_GPU; /* in GPUs, as the Go code */
    return trunc(1.0 / (1.0 + exp(-d)) * 100.0);
}

/* Does an earlier usable GPU than i have the same free share? The fragmentation depends on the
 * multiset of free shares (frag.h), so taking either leaves equal measures: the earlier one
 * scores the same and wins the tie (lowest index), and i need not be evaluated. */
static bool same_as_earlier(const kube_pod *p, const kube_node *n, uint32_t i)
{
    for (uint32_t e = 0; e < i; e++) {
        if (n->gpu_ok[e] && n->fn.milli_left[e] >= p->shape.milli &&
            n->fn.milli_left[e] == n->fn.milli_left[i]) {
            return true;
        }
    }
    return false;
}

/* Best score over the GPUs a share may take (index into *gpu), or over the whole-GPU placement. */
static double fgd_eval(kube *k, const kube_pod *p, const kube_node *n, int *gpu)
{
    double before = kube_frag(k, &n->fn);
    *gpu = -1;
    if (p->whole || p->shape.n_gpu == 0) {
        frag_node a = after(p, n, -1);
        return sigmoid_score(k, before, &a);
    }
    double best = -INFINITY;
    for (uint32_t i = 0; i < n->fn.n_gpus; i++) {
        if (!n->gpu_ok[i] || n->fn.milli_left[i] < p->shape.milli || same_as_earlier(p, n, i)) {
            continue;
        }
        frag_node a = after(p, n, (int)i);
        double s = sigmoid_score(k, before, &a);
        if (s > best) {
            best = s;
            *gpu = (int)i;
        }
    }
    return best;
}

static double fgd_score(kube *k, const kube_pod *p, const kube_node *n)
{
    int g;
    return fgd_eval(k, p, n, &g);
}

static int fgd_gpu(kube *k, const kube_pod *p, const kube_node *n)
{
    int g;
    fgd_eval(k, p, n, &g);
    return g;
}

static const kube_policy fgd_desc = {.name = "fgd",
                                     .score = fgd_score,
                                     .select_gpu = fgd_gpu,
                                     .typical = true,
                                     .fixed_order = true};

KUBE_POLICY(fgd, "Fragmentation Gradient Descent (Weng et al., ATC '23): least growth of "
                 "fragmentation under the typical pods")
