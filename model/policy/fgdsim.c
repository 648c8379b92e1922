/* model/policy/fgdsim.c - the baseline policies of FGD's simulator, behind the kube scheduling
 * cycle (kube.h): `bestfit`, `dotprod`, `gpupacking`, `gpuclustering`, `random`.
 *
 * Source: hkust-adsl/kubernetes-scheduler-simulator (the artifact of Weng et al., USENIX ATC
 * '23), pkg/simulator/plugin/{best_fit,dot_product,gpu_packing,gpu_clustering,random}_score.go,
 * with the GPU selection each uses in its experiments (experiments/run_scripts/
 * generate_run_scripts.py: Random with random GPU selection, DotProd with best-fit GPUs and
 * "merge"/"max" vectors, the others best-fit); written anew here. Normalisers as there:
 * MaxSpecCpu 128 cores, MaxSpecGpu 8 GPUs. Scores are integers as there: GpuPacking and
 * GpuClustering compute in integers (their scores are bands), BestFit is int64(score) and
 * DotProduct int64(100 * score), in the simulator's order of operations so that the truncation
 * falls where it falls there (BestFit's NormalizeScore keeps the best node's score the highest,
 * so it changes no choice and is left out). Every feasible node is scored; ties go by default to
 * the run's fixed node order, as the simulator's selectHost does (kube.h), except under Random,
 * whose every node ties and is drawn uniformly. A node that does not state its CPU counts 0 CPU
 * left in these formulas.
 */
#include <math.h>

#include "model/policy/kube.h"

#define MAX_SPEC_CPU 128000.0 /* milli-cores */
#define MAX_SPEC_GPU 8000     /* milli-GPU */

static double cpu_left(const kube_node *n)
{
    return n->cpu_cap ? (double)n->fn.cpu_left : 0.0;
}

static double pod_gpu(const kube_pod *p)
{
    return (double)p->shape.milli * p->shape.n_gpu;
}

/* BestFit: 1 - mean over (CPU, GPU) of what is left after the pod, normalised by the largest
 * node; the tightest node wins. */
static double bestfit_score(kube *k, const kube_pod *p, const kube_node *n)
{
    (void)k;
    double left = (cpu_left(n) - (n->cpu_cap ? (double)p->shape.cpu_milli : 0)) / MAX_SPEC_CPU *
                  0.5;
    left += ((double)frag_idle(&n->fn) - pod_gpu(p)) / MAX_SPEC_GPU * 0.5;
    return trunc((1.0 - left) * 100);
}

/* DotProduct ("merge" GPU dimension, "max" normalisation): 1 - the dot product of the node's
 * free (CPU, total milli-GPU) and the pod's request, each divided by the largest node. */
static double dotprod_score(kube *k, const kube_pod *p, const kube_node *n)
{
    (void)k;
    double dot = cpu_left(n) / MAX_SPEC_CPU *
                 ((n->cpu_cap ? (double)p->shape.cpu_milli : 0) / MAX_SPEC_CPU);
    dot += (double)frag_idle(&n->fn) / MAX_SPEC_GPU * (pod_gpu(p) / MAX_SPEC_GPU);
    return trunc(100 * (1 - dot / 2));
}

static uint32_t fully_free(const kube_node *n)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n->fn.n_gpus; i++) {
        k += n->fn.milli_left[i] == MILLI_PER_GPU;
    }
    return k;
}

static int64_t imax(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* GpuPacking: prefer (high band) nodes whose partly used GPUs can take the pod, then (middle)
 * partly used nodes where it needs idle GPUs, then (low) idle nodes; within a band, less free
 * share on the GPUs used scores higher. */
static double gpupacking_score(kube *k, const kube_pod *p, const kube_node *n)
{
    (void)k;
    if (p->shape.n_gpu == 0) {
        return 0;
    }
    int64_t full = fully_free(n);
    if (full == n->fn.n_gpus) {
        return (double)imax(100 / 3 - full, full);
    }
    /* GPUs by ascending free share (stable), the first that fit */
    uint32_t order[FRAG_MAX_GPUS], m = 0;
    for (uint32_t i = 0; i < n->fn.n_gpus; i++) {
        uint32_t j = m++;
        while (j > 0 && n->fn.milli_left[order[j - 1]] > n->fn.milli_left[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    uint32_t need = p->shape.n_gpu, use_full = 0;
    int64_t freeratio = 0;
    for (uint32_t x = 0; x < m && need > 0; x++) {
        uint32_t left = n->fn.milli_left[order[x]];
        if (left >= p->shape.milli) {
            need--;
            use_full += left == MILLI_PER_GPU;
            freeratio += (int64_t)left * 100 / MILLI_PER_GPU;
        }
    }
    if (use_full > 0) {
        return (double)imax(100 / 2 - use_full, 100 / 3);
    }
    return (double)imax(100 - freeratio / 10, 100 / 2);
}

/* GpuClustering: prefer nodes running only pods of the same GPU-count class, then mixed nodes
 * with that class, then idle nodes, then others; within a band, less free GPU scores higher. */
static double gpuclustering_score(kube *k, const kube_pod *p, const kube_node *n)
{
    (void)k;
    if (p->tag == 0) {
        return 0;
    }
    int64_t left = (int64_t)frag_idle(&n->fn);
    int64_t base = 100 / 4 * (MAX_SPEC_GPU - left) / MAX_SPEC_GPU;
    uint32_t kinds = 0;
    for (uint32_t t = 1; t < KUBE_TAGS; t++) {
        kinds += n->affinity[t] > 0;
    }
    if (n->affinity[p->tag] > 0) {
        return (double)(base + (kinds == 1 ? 100 * 3 / 4 : 100 * 2 / 4));
    }
    return (double)(base + (kinds == 0 ? 100 / 4 : 0));
}

/* Random: every feasible node scores the same: the random tie-break picks one uniformly. */
static double random_score(kube *k, const kube_pod *p, const kube_node *n)
{
    (void)k;
    (void)p;
    (void)n;
    return 0;
}

/* A uniformly random GPU among those with enough free share. */
static int random_gpu(kube *k, const kube_pod *p, const kube_node *n)
{
    uint32_t ok = 0;
    for (uint32_t i = 0; i < n->fn.n_gpus; i++) {
        ok += n->gpu_ok[i] && n->fn.milli_left[i] >= p->shape.milli;
    }
    uint64_t pick = kube_draw(k, ok);
    for (uint32_t i = 0; i < n->fn.n_gpus; i++) {
        if (n->gpu_ok[i] && n->fn.milli_left[i] >= p->shape.milli && pick-- == 0) {
            return (int)i;
        }
    }
    return -1;
}

static const kube_policy bestfit_desc = {
    .name = "bestfit", .score = bestfit_score, .fixed_order = true};
static const kube_policy dotprod_desc = {
    .name = "dotprod", .score = dotprod_score, .fixed_order = true};
static const kube_policy gpupacking_desc = {
    .name = "gpupacking", .score = gpupacking_score, .fixed_order = true};
static const kube_policy gpuclustering_desc = {
    .name = "gpuclustering", .score = gpuclustering_score, .fixed_order = true};
static const kube_policy random_desc = {
    .name = "random", .score = random_score, .select_gpu = random_gpu, .uniform = true};

KUBE_POLICY(bestfit, "FGD simulator's BestFit: the node left with the least CPU and GPU")
KUBE_POLICY(dotprod, "FGD simulator's DotProduct: least dot product of free and requested "
                       "(CPU, GPU)")
KUBE_POLICY(gpupacking, "FGD simulator's GpuPacking: partly used GPUs first, then partly "
                          "used nodes, idle nodes last")
KUBE_POLICY(gpuclustering, "FGD simulator's GpuClustering: nodes running pods of the same "
                             "GPU count first")
KUBE_POLICY(random, "FGD simulator's Random: a feasible node and GPU uniformly at random")
