/* Unit tests for scheduling: utilisation up to the horizon, the free-capacity index
 * (model/cluster/capidx.h), fractional-GPU and node CPU/memory bookkeeping (model/cluster/cluster.h).
 * Expected values are worked out by hand in each test. The GPU type is the made-up fixture
 * TEST-GPU (tests/unit/fixtures.h), not catalog data. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model/cluster/capidx.h"
#include "model/cluster/fragstat.h"
#include "model/cluster/cluster.h"
#include "model/cluster/world.h"
#include "sim/diag.h"
#include "sim/rng.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/sh.h"
#include "tools/out.h"
#include "tests/unit/oracle_curve.h"
#include "tests/unit/oracle_frag.h"

Test(sched, utilisation_is_time_weighted_up_to_the_horizon)
{
    /* One node, 2 GPUs; two 1-GPU jobs of 100 s at t = 0; the run is observed until 400 s.
     * GPUs busy: 2 during [0, 100), 0 during [100, 400): mean 2 * 100 / 400 = 0.5 GPUs, i.e.
     * 0.25 of the 2 GPUs, not 1.0 (the mean up to the last event at 100 s). */
    gpu_type g = test_gpu();
    cluster_gpu_cfg gpus[2] = {{.type = &g}, {.type = &g}};
    cluster_node_cfg node = {.name = "n0", .n_gpus = 2, .gpus = gpus};
    cluster_cfg cc = {.n_nodes = 1, .nodes = &node};
    world_cfg wc = {.cluster = &cc,
                    .policy = pol_find("fifo"),
                    .until = sim_time_from_s(400),
                    .verify_every = 1};
    job_table *t = job_table_create();
    for (int i = 0; i < 2; i++) {
        job_spec s = {.class_name = "c", .req = {"nvidia.com/gpu", 1, 1}, .work_s = 100};
        job_table_add(t, &s);
    }
    diag *d = diag_create();
    world *w = NULL;
    cr_assert_eq(world_create(&wc, t, d, (src_loc){"x", 1, 1}, &w), 0);
    world_run(w);
    world_totals tot = world_get_totals(w);
    cr_assert_eq(tot.end, sim_time_from_s(100));
    cr_assert_eq(tot.horizon, sim_time_from_s(400));
    out_means tm;
    out_time_means(w, &tm);
    cr_assert_float_eq(tm.gpus / 2, 0.25, 1e-12);
    world_destroy(w);
    diag_destroy(d);
}

Test(sched, capacity_index_finds_the_next_slot_with_enough)
{
    capidx *ix = capidx_create(5); /* padded to 8 leaves */
    uint32_t v[5] = {1, 0, 3, 2, 4};
    for (uint32_t i = 0; i < 5; i++) {
        capidx_set(ix, i, v[i]);
    }
    cr_assert_eq(capidx_next_ge(ix, 0, 4), 4); /* the largest, 4, in slot 4 */
    cr_assert_eq(capidx_next_ge(ix, 0, 1), 0);
    cr_assert_eq(capidx_next_ge(ix, 1, 1), 2);
    cr_assert_eq(capidx_next_ge(ix, 0, 3), 2);
    cr_assert_eq(capidx_next_ge(ix, 3, 3), 4);
    cr_assert_eq(capidx_next_ge(ix, 0, 5), 5); /* none */
    cr_assert_eq(capidx_next_ge(ix, 5, 0), 5);
    capidx_set(ix, 4, 0);
    cr_assert_eq(capidx_next_ge(ix, 0, 4), 5); /* none is 4 any more */
    cr_assert_eq(capidx_next_ge(ix, 3, 3), 5);
    cr_assert_eq(capidx_next_ge(ix, 0, 2), 2);
    /* a brute-force scan agrees on every (from, k) */
    uint32_t w[5] = {1, 0, 3, 2, 0};
    for (uint32_t from = 0; from <= 5; from++) {
        for (uint32_t k = 0; k <= 4; k++) {
            uint32_t want = from;
            while (want < 5 && w[want] < k) {
                want++;
            }
            cr_assert_eq(capidx_next_ge(ix, from, k), want, "from %u k %u", from, k);
        }
    }
    capidx_destroy(ix);
}

Test(sched, fractional_shares_and_node_cpu_are_booked)
{
    gpu_type g = test_gpu();
    cluster_gpu_cfg gpus[2] = {{.type = &g}, {.type = &g}};
    cluster_node_cfg nodes[2] = {
        {.name = "a", .n_gpus = 2, .gpus = gpus, .cpu_milli = 8000, .host_mem_bytes = 1000},
        {.name = "b", .n_gpus = 2, .gpus = gpus}};
    cluster_cfg cc = {.n_nodes = 2, .nodes = nodes};
    cluster *c = NULL;
    char why[128];
    cr_assert_eq(cluster_create(&cc, &c, why, sizeof why), 0);
    res_id r;
    cr_assert(cluster_resource_find(c, "nvidia.com/gpu", &r));
    /* 300 + 500 milli on GPU 0 of node a: it holds one unit; 200 milli are left on it */
    cluster_take_share(c, 0, 300, 10);
    cluster_take_share(c, 0, 500, 10);
    cr_assert_eq(cluster_share_free(c, 0), 200);
    cr_assert_eq(cluster_free(c, 0, r), 1); /* GPU 1 only */
    cr_assert_eq(cluster_gpus_busy(c), 1);
    /* a whole unit on GPU 1 holds 1000: node a has no 2-unit room, node b has */
    cluster_take(c, 1, 0);
    cr_assert_eq(cluster_gpus_busy(c), 2);
    cr_assert_eq(cluster_next_node(c, r, 1, 0), 1);
    cr_assert_eq(cluster_next_node_share(c, 200, 0), 0);
    cr_assert_eq(cluster_next_node_share(c, 201, 0), 1);
    cr_assert_eq(cluster_next_node_share(c, 1, 2), 2);
    cluster_give_share(c, 0, 300, 10);
    cluster_give_share(c, 0, 500, 10);
    cr_assert_eq(cluster_share_free(c, 0), 1000);
    cr_assert_eq(cluster_gpus_busy(c), 1);
    cr_assert_eq(cluster_free(c, 0, r), 1);
    /* CPU and host memory: stated on node a, unlimited on node b */
    cluster_node_take(c, 0, 6000, 400);
    cr_assert_eq(cluster_node_cpu_free(c, 0), 2000);
    cr_assert_eq(cluster_node_mem_free(c, 0), 600);
    cr_assert_eq(cluster_node_cpu_free(c, 1), CLUSTER_UNLIMITED);
    cluster_node_give(c, 0, 6000, 400);
    cr_assert_eq(cluster_node_cpu_free(c, 0), 8000);
    cluster_destroy(c);
}

Test(sched, node_version_changes_exactly_when_the_node_does)
{
    /* Two nodes of one whole GPU each (devices 0 and 1), node 0 stating CPU and memory. Every
     * change to a node moves its version and leaves the other's alone; a cordon that is
     * already in place changes nothing. */
    gpu_type g = test_gpu();
    cluster_gpu_cfg gpus[1] = {{.type = &g}};
    cluster_node_cfg nodes[2] = {
        {.name = "a", .n_gpus = 1, .gpus = gpus, .cpu_milli = 8000, .host_mem_bytes = 1000},
        {.name = "b", .n_gpus = 1, .gpus = gpus}};
    cluster_cfg cc = {.n_nodes = 2, .nodes = nodes};
    cluster *c = NULL;
    char why[128];
    cr_assert_eq(cluster_create(&cc, &c, why, sizeof why), 0);
    uint64_t a = cluster_node_version(c, 0), b = cluster_node_version(c, 1);
    cluster_take_share(c, 0, 300, 0); /* node a's GPU */
    cr_assert_neq(cluster_node_version(c, 0), a);
    cr_assert_eq(cluster_node_version(c, 1), b);
    a = cluster_node_version(c, 0);
    cluster_take_share(c, 0, 200, 0); /* a second share: the unit was already held */
    cr_assert_neq(cluster_node_version(c, 0), a);
    a = cluster_node_version(c, 0);
    cluster_give_share(c, 0, 200, 0);
    cr_assert_neq(cluster_node_version(c, 0), a);
    a = cluster_node_version(c, 0);
    cluster_node_take(c, 0, 1000, 100); /* CPU and memory only */
    cr_assert_neq(cluster_node_version(c, 0), a);
    a = cluster_node_version(c, 0);
    cluster_node_give(c, 0, 1000, 100);
    cr_assert_neq(cluster_node_version(c, 0), a);
    a = cluster_node_version(c, 0);
    cr_assert_eq(cluster_node_version(c, 1), b);
    cluster_take(c, 1, 0); /* node b's GPU, whole */
    cr_assert_neq(cluster_node_version(c, 1), b);
    b = cluster_node_version(c, 1);
    cluster_give(c, 1, 0);
    cr_assert_neq(cluster_node_version(c, 1), b);
    b = cluster_node_version(c, 1);
    cluster_set_cordoned(c, 1, true);
    cr_assert_neq(cluster_node_version(c, 1), b);
    b = cluster_node_version(c, 1);
    cluster_set_cordoned(c, 1, true); /* no change */
    cr_assert_eq(cluster_node_version(c, 1), b);
    cr_assert_eq(cluster_node_version(c, 0), a);
    cluster_destroy(c);
}

/* ---- policies on hand-solved small clusters ---------------------------------------------- */

typedef struct senv {
    gpu_type g;
    cluster_gpu_cfg gpus[8];
    cluster_node_cfg nodes[4];
    cluster_cfg cc;
    world_cfg wc;
    job_table *t;
} senv;

/* Nodes with the given GPU counts (whole, shareable GPUs of TEST-GPU). */
static void senv_init(senv *e, const char *policy, uint32_t n_nodes, const uint32_t *gpus_per)
{
    memset(e, 0, sizeof *e);
    e->g = test_gpu();
    for (uint32_t i = 0; i < 8; i++) {
        e->gpus[i] = (cluster_gpu_cfg){.type = &e->g};
    }
    static const char *names[4] = {"n0", "n1", "n2", "n3"};
    for (uint32_t n = 0; n < n_nodes; n++) {
        e->nodes[n] = (cluster_node_cfg){.name = names[n], .n_gpus = gpus_per[n], .gpus = e->gpus};
    }
    e->cc = (cluster_cfg){.n_nodes = n_nodes, .nodes = e->nodes};
    e->wc = (world_cfg){.cluster = &e->cc,
                        .policy = pol_find(policy),
                        .until = SIM_TIME_MAX,
                        .verify_every = 1,
                        .seed = 7};
    cr_assert_not_null(e->wc.policy, "%s", policy);
    e->t = job_table_create();
}

static job_id sadd(senv *e, double submit_s, uint32_t per, uint32_t workers, double work_s,
                   uint32_t milli, int32_t prio)
{
    job_spec s = {.class_name = "c",
                  .req = {"nvidia.com/gpu", per, workers},
                  .submit = sim_time_from_s(submit_s),
                  .work_s = work_s,
                  .pod = {.priority = prio, .gpu_milli = milli}};
    return job_table_add(e->t, &s);
}

/* Run to the end (or until `until_s` > 0) and return the world (caller destroys). */
static world *srun(senv *e, double until_s)
{
    if (until_s > 0) {
        e->wc.until = sim_time_from_s(until_s);
    }
    diag *d = diag_create();
    world *w = NULL;
    cr_assert_eq(world_create(&e->wc, e->t, d, (src_loc){"x", 1, 1}, &w), 0);
    diag_destroy(d);
    world_run(w);
    cr_assert_eq(world_get_totals(w).n_rejected, 0);
    return w;
}

static const job *sjob(const world *w, job_id j)
{
    return job_table_get(world_jobs(w), j);
}

static node_id node_of(const world *w, job_id j, uint32_t unit)
{
    return cluster_device_get(world_cluster(w), sjob(w, j)->units[unit])->node;
}

Test(sched, time_sliced_replicas_spread_over_the_gpus_before_stacking)
{
    /* One node, 4 GPUs time-sliced with 4 replicas each (16 units). Four 1-unit jobs at t = 0:
     * the device plugin hands out a replica of each GPU before a second of any, so the jobs run
     * on GPUs 0, 1, 2, 3 (not all four on GPU 0 while three GPUs idle). */
    gpu_type g = test_gpu();
    cluster_share_rule rule = {.resource = NULL, .replicas = 4};
    cluster_gpu_cfg gpus[4];
    for (int i = 0; i < 4; i++) {
        gpus[i] = (cluster_gpu_cfg){
            .type = &g, .sharing = CLUSTER_SHARE_TIMESLICE, .n_rules = 1, .rules = &rule};
    }
    cluster_node_cfg node = {.name = "ts-0", .n_gpus = 4, .gpus = gpus};
    cluster_cfg cc = {.n_nodes = 1, .nodes = &node};
    const char *policies[2] = {"fifo", "k8s"};
    for (int p = 0; p < 2; p++) {
        world_cfg wc = {.cluster = &cc,
                        .policy = pol_find(policies[p]),
                        .until = SIM_TIME_MAX,
                        .verify_every = 1};
        job_table *t = job_table_create();
        for (int i = 0; i < 4; i++) {
            job_spec s = {.class_name = "c", .req = {"nvidia.com/gpu", 1, 1}, .work_s = 10};
            job_table_add(t, &s);
        }
        diag *d = diag_create();
        world *w = NULL;
        cr_assert_eq(world_create(&wc, t, d, (src_loc){"x", 1, 1}, &w), 0);
        world_run(w);
        for (job_id j = 0; j < 4; j++) {
            cr_assert_eq(cluster_device_get(world_cluster(w), sjob(w, j)->units[0])->gpu, j,
                         "%s: job %u", policies[p], (unsigned)j);
        }
        world_destroy(w);
        diag_destroy(d);
    }
}

Test(sched, k8s_spreads_over_nodes_and_binpack_stacks)
{
    /* 2 nodes x 2 GPUs; two 1-GPU jobs at t = 0. LeastAllocated: after the first on n0 (tie:
     * either node; then) the other node has 2/2 free against 1/2: the jobs land on different
     * nodes. MostAllocated: the node already used scores 1/2 used against 0: both on one node. */
    uint32_t per[2] = {2, 2};
    senv e;
    senv_init(&e, "k8s", 2, per);
    sadd(&e, 0, 1, 1, 10, 0, 0);
    sadd(&e, 0, 1, 1, 10, 0, 0);
    world *w = srun(&e, 0);
    cr_assert_neq(node_of(w, 0, 0), node_of(w, 1, 0));
    world_destroy(w);
    senv_init(&e, "binpack", 2, per);
    sadd(&e, 0, 1, 1, 10, 0, 0);
    sadd(&e, 0, 1, 1, 10, 0, 0);
    w = srun(&e, 0);
    cr_assert_eq(node_of(w, 0, 0), node_of(w, 1, 0));
    world_destroy(w);
}

Test(sched, a_job_that_does_not_fit_does_not_block_later_ones)
{
    /* 1 node x 2 GPUs. A: 1 GPU for 100 s at 0. B: 2 GPUs at 1 (waits for A). C: 1 GPU for
     * 50 s at 2: fits beside A. k8s starts C at 2 (no head-of-line blocking); B starts when A
     * ends at 100 (C ended at 52). FIFO holds C behind B: B runs 100..110, then C. */
    uint32_t per[1] = {2};
    senv e;
    senv_init(&e, "k8s", 1, per);
    sadd(&e, 0, 1, 1, 100, 0, 0);
    sadd(&e, 1, 2, 1, 10, 0, 0);
    sadd(&e, 2, 1, 1, 50, 0, 0);
    world *w = srun(&e, 0);
    cr_assert_eq(sjob(w, 2)->start, sim_time_from_s(2));
    cr_assert_eq(sjob(w, 1)->start, sim_time_from_s(100));
    world_destroy(w);
    senv_init(&e, "fifo", 1, per);
    sadd(&e, 0, 1, 1, 100, 0, 0);
    sadd(&e, 1, 2, 1, 10, 0, 0);
    sadd(&e, 2, 1, 1, 50, 0, 0);
    w = srun(&e, 0);
    cr_assert_eq(sjob(w, 1)->start, sim_time_from_s(100)); /* B at 100, ends 110 */
    cr_assert_eq(sjob(w, 2)->start, sim_time_from_s(110));
    world_destroy(w);
}

/* Node of the single 1-GPU job placed by `policy` on n0 (2 GPUs) and n1 (4 GPUs). */
static node_id first_choice(const char *policy, uint64_t seed)
{
    uint32_t per[2] = {2, 4};
    senv e;
    senv_init(&e, policy, 2, per);
    e.wc.seed = seed;
    sadd(&e, 0, 1, 1, 10, 0, 0);
    world *w = srun(&e, 0);
    node_id n = node_of(w, 0, 0);
    world_destroy(w);
    return n;
}

Test(sched, each_policy_picks_the_hand_solved_node)
{
    /* n0: 2 idle GPUs, n1: 4 idle GPUs (no CPU stated: 0 CPU in the simulator's formulas);
     * one pod asking for 1 whole GPU.
     * k8s LeastAllocated: free after: n0 1/2, n1 3/4 -> n1.
     * binpack MostAllocated: used after: n0 1/2, n1 1/4 -> n0.
     * bestfit: 1 - 0.5 * (idle - 1000) / 8000: n0 0.9375, n1 0.8125 -> n0.
     * dotprod: 1 - (idle / 8000 * 1000 / 8000) / 2: n0 0.984375, n1 0.96875 -> n0.
     * gpupacking: idle nodes score max(33 - idle GPUs, idle GPUs): n0 31, n1 29 -> n0.
     * gpuclustering: no pods yet: 25 * (8000 - idle) / 8000 + 25 (integers): n0 18 + 25,
     *   n1 12 + 25 -> n0.
     * fgd: one typical pod (1 GPU): F before 0 on both; after, n0 has 1 idle GPU (fits: 0),
     *   n1 3 (0): equal scores, the seeded tie-break decides (checked below with random). */
    cr_assert_eq(first_choice("k8s", 1), 1);
    cr_assert_eq(first_choice("binpack", 1), 0);
    cr_assert_eq(first_choice("bestfit", 1), 0);
    cr_assert_eq(first_choice("dotprod", 1), 0);
    cr_assert_eq(first_choice("gpupacking", 1), 0);
    cr_assert_eq(first_choice("gpuclustering", 1), 0);
    /* random (and a tie): every feasible node is equally likely: over 20 seeds both occur
     * (all 20 the same has probability 2 * 2^-20) */
    uint32_t on0 = 0, on0_fgd = 0;
    for (uint64_t s = 1; s <= 20; s++) {
        on0 += first_choice("random", s) == 0;
        on0_fgd += first_choice("fgd", s) == 0;
    }
    cr_assert(on0 > 0 && on0 < 20, "random chose n0 %u of 20 times", on0);
    cr_assert(on0_fgd > 0 && on0_fgd < 20, "fgd chose n0 %u of 20 times", on0_fgd);
}

/* Nodes of 10 one-GPU pods of `policy` under tie rule `tie` on 2 nodes x 1 GPU, each pod ending
 * before the next arrives, so each sees both nodes idle: a tie. Bit n of the result: a pod went
 * to node n. */
static unsigned tie_nodes(const char *policy, const char *tie, uint64_t seed)
{
    uint32_t per[2] = {1, 1};
    senv e;
    senv_init(&e, policy, 2, per);
    e.wc.seed = seed;
    pol_param item = {"tie_break", tie, {"x", 1, 1}, {"x", 1, 12}};
    param_set ps = {1, &item, "policy.params", {"x", 1, 1}};
    e.wc.params = &ps;
    for (int i = 0; i < 10; i++) {
        sadd(&e, 10 * i, 1, 1, 5, 0, 0);
    }
    world *w = srun(&e, 0);
    unsigned used = 0;
    for (job_id j = 0; j < 10; j++) {
        cr_assert_eq(sjob(w, j)->state, JOB_DONE);
        used |= 1u << node_of(w, j, 0);
    }
    world_destroy(w);
    return used;
}

Test(sched, fixed_order_ties_go_to_one_node_per_run_random_ties_to_both)
{
    /* fixed-order (FGD's simulator: the smallest rand.Perm-prefixed node name): every tie of a
     * run goes to the same node, the first in that run's order, and over 20 seeds that node is
     * n0 in some runs and n1 in others (all 20 alike: probability 2 * 2^-20). random: each tie
     * is a fresh draw, so within a run both nodes occur (one node for all 10: 2 * 2^-10 per
     * run; checked over 3 seeds). Both hold for a score that ties every node (gpupacking: 33 -
     * idle GPUs on both) and for FGD's (one typical pod, 1 GPU: F 0 before and after). */
    static const char *const pols[] = {"gpupacking", "fgd", "bestfit"};
    for (size_t p = 0; p < sizeof pols / sizeof pols[0]; p++) {
        unsigned seen = 0;
        for (uint64_t s = 1; s <= 20; s++) {
            unsigned u = tie_nodes(pols[p], "fixed-order", s);
            cr_assert(u == 1 || u == 2, "%s seed %lu: nodes %u", pols[p], (unsigned long)s, u);
            seen |= u;
        }
        cr_assert_eq(seen, 3, "%s", pols[p]);
        for (uint64_t s = 1; s <= 3; s++) {
            cr_assert_eq(tie_nodes(pols[p], "random", s), 3, "%s seed %lu", pols[p],
                         (unsigned long)s);
        }
    }
}

Test(sched, random_ties_are_one_draw_per_decision_over_the_tied_nodes)
{
    /* 4 nodes x 1 GPU, k8s (tie_break random), 40 one-GPU pods each ending before the next
     * arrives: every decision sees the 4 idle nodes tied (LeastAllocated scores them alike). The tied nodes are counted in scan order (n0..n3: under 100 nodes every node is
     * scored from n0) and one number in [0, 4) is drawn per decision from the policy's stream,
     * so pod i goes to node draw_i; reservoir sampling would draw 3 numbers per decision. */
    uint32_t per[4] = {1, 1, 1, 1};
    senv e;
    senv_init(&e, "k8s", 4, per);
    for (int i = 0; i < 40; i++) {
        sadd(&e, 10 * i, 1, 1, 5, 0, 0);
    }
    world *w = srun(&e, 0);
    rng_root root = rng_root_make(e.wc.seed);
    rng_stream *s = rng_stream_open(&root, "policy", 0);
    unsigned seen = 0;
    for (job_id j = 0; j < 40; j++) {
        node_id want = (node_id)rng_uniform_int(s, 4);
        cr_assert_eq(node_of(w, j, 0), want, "pod %u", (unsigned)j);
        seen |= 1u << want;
    }
    cr_assert_eq(seen, 15); /* every node drawn at least once in 40 (uniform over the ties) */
    rng_stream_close(s);
    world_destroy(w);
}

Test(sched, fgd_packs_shares_to_keep_a_whole_gpu_and_k8s_spreads_them)
{
    /* 1 node x 2 GPUs. Pods: 500 milli at 0, 500 milli at 1, 1 whole GPU at 2 (all long).
     * Typical pods: {500 m: 2/3, 1 GPU: 1/3}.
     * FGD, pod 2: on GPU 0 (500 left -> 0): F before = 1/3 * 500 (the 1-GPU pod fits GPU 1 but
     * GPU 0's 500 are too small for it), after = 0 -> +166.7; on GPU 1 (1000 -> 500): the
     * 1-GPU pod no longer fits: F after = 1/3 * 1000 -> -166.7. FGD takes GPU 0, and the whole
     * pod then fits GPU 1. k8s puts each share on the GPU with most free (GPU 0, then GPU 1):
     * the whole-GPU pod finds no idle GPU and stays queued. */
    uint32_t per[1] = {2};
    senv e;
    senv_init(&e, "fgd", 1, per);
    sadd(&e, 0, 1, 1, 1000, 500, 0);
    sadd(&e, 1, 1, 1, 1000, 500, 0);
    sadd(&e, 2, 1, 1, 1000, 0, 0);
    world *w = srun(&e, 10);
    cr_assert_eq(sjob(w, 0)->units[0], 0);
    cr_assert_eq(sjob(w, 1)->units[0], 0);
    cr_assert_eq(sjob(w, 2)->state, JOB_RUNNING);
    cr_assert_eq(sjob(w, 2)->units[0], 1);
    cr_assert_eq(cluster_share_free(world_cluster(w), 0) + cluster_share_free(world_cluster(w), 1), 0,
                 "all 2000 milli held");
    world_destroy(w);
    senv_init(&e, "k8s", 1, per);
    sadd(&e, 0, 1, 1, 1000, 500, 0);
    sadd(&e, 1, 1, 1, 1000, 500, 0);
    sadd(&e, 2, 1, 1, 1000, 0, 0);
    w = srun(&e, 10);
    cr_assert_eq(sjob(w, 0)->units[0], 0);
    cr_assert_eq(sjob(w, 1)->units[0], 1);
    cr_assert_eq(sjob(w, 2)->state, JOB_QUEUED);
    cr_assert_eq(cluster_share_free(world_cluster(w), 0) + cluster_share_free(world_cluster(w), 1),
                 1000, "1000 of 2000 milli held");
    world_destroy(w);
}

Test(sched, best_fit_shares_fill_the_fullest_gpu_that_fits)
{
    /* 1 node x 2 GPUs, bestfit GPU selection: 600 -> GPU 0 (both idle: lowest index; 400 left),
     * 300 -> GPU 0 (400 is the least that suffices; 100 left), 500 -> GPU 1. */
    uint32_t per[1] = {2};
    senv e;
    senv_init(&e, "bestfit", 1, per);
    sadd(&e, 0, 1, 1, 1000, 600, 0);
    sadd(&e, 1, 1, 1, 1000, 300, 0);
    sadd(&e, 2, 1, 1, 1000, 500, 0);
    world *w = srun(&e, 10);
    cr_assert_eq(sjob(w, 0)->units[0], 0);
    cr_assert_eq(sjob(w, 1)->units[0], 0);
    cr_assert_eq(sjob(w, 2)->units[0], 1);
    cr_assert_eq(cluster_share_free(world_cluster(w), 0), 100);
    cr_assert_eq(cluster_share_free(world_cluster(w), 1), 500);
    world_destroy(w);
}

Test(sched, cached_scores_follow_the_nodes_as_they_fill_and_empty)
{
    /* bestfit on 2 nodes x 1 GPU, pods of one shape (300 milli, the same cache entries), all
     * long but pod 1 (ends at 10 s). BestFit prefers the node with the least idle share left.
     * Pod 0: both idle, a tie: node X (random). Pods 1 and 2: X has less left (700, then 400):
     * X, which must be seen from X's new state, not the cached idle one. Pod 3: X has 100 left,
     * too small: node Y; pods 4 and 5: Y (700, 400 left; X cannot). At 10 s pod 1 ends: X has
     * 400 free, Y 100. Pod 6 at 20 s: only X fits. Pod 7 at 21 s: 100 left on each: queued. */
    uint32_t per[2] = {1, 1};
    senv e;
    senv_init(&e, "bestfit", 2, per);
    for (int i = 0; i < 6; i++) {
        sadd(&e, i, 1, 1, i == 1 ? 9 : 1000, 300, 0);
    }
    sadd(&e, 20, 1, 1, 1000, 300, 0);
    sadd(&e, 21, 1, 1, 1000, 300, 0);
    world *w = srun(&e, 100);
    node_id x = node_of(w, 0, 0), y = 1 - x;
    cr_assert_eq(node_of(w, 2, 0), x);
    cr_assert_eq(sjob(w, 1)->state, JOB_DONE);
    for (job_id j = 3; j < 6; j++) {
        cr_assert_eq(node_of(w, j, 0), y, "pod %u", j);
    }
    cr_assert_eq(node_of(w, 6, 0), x);
    cr_assert_eq(sjob(w, 7)->state, JOB_QUEUED);
    cr_assert_eq(cluster_share_free(world_cluster(w), x), 100);
    cr_assert_eq(cluster_share_free(world_cluster(w), y), 100);
    world_destroy(w);
}

Test(sched, a_gang_spans_nodes_all_or_nothing)
{
    /* 2 nodes x 2 GPUs. Job 0: 2 workers x 2 GPUs: one worker per node (each node holds one).
     * Job 1 (after job 0 ends at 10): 3 workers x 2 GPUs: only 2 nodes: never placed, and it
     * holds nothing meanwhile; job 2 (1 GPU at 20) runs at once. */
    uint32_t per[2] = {2, 2};
    senv e;
    senv_init(&e, "k8s", 2, per);
    sadd(&e, 0, 2, 2, 10, 0, 0);
    sadd(&e, 11, 2, 3, 10, 0, 0);
    sadd(&e, 20, 1, 1, 10, 0, 0);
    world *w = srun(&e, 100);
    cr_assert_eq(sjob(w, 0)->state, JOB_DONE);
    cr_assert_neq(node_of(w, 0, 0), node_of(w, 0, 2));
    cr_assert_eq(node_of(w, 0, 0), node_of(w, 0, 1));
    cr_assert_eq(sjob(w, 1)->state, JOB_QUEUED);
    cr_assert_eq(sjob(w, 2)->start, sim_time_from_s(20));
    world_destroy(w);
}

Test(sched, a_higher_priority_job_preempts_a_lower_one)
{
    /* 1 node x 2 GPUs. L (priority 0): 2 GPUs, 100 s, at 0. H (priority 10): 1 GPU, 10 s, at 5:
     * nothing is free, so L is preempted at 5 and queued again; H runs 5..15; L restarts from
     * the beginning (no checkpoints) at 15 and ends at 115 (its `start` stays its first start,
     * 0). A job of equal priority would not preempt. */
    uint32_t per[1] = {2};
    senv e;
    senv_init(&e, "k8s", 1, per);
    sadd(&e, 0, 2, 1, 100, 0, 0);
    sadd(&e, 5, 1, 1, 10, 0, 10);
    world *w = srun(&e, 0);
    cr_assert_eq(sjob(w, 1)->start, sim_time_from_s(5));
    cr_assert_eq(sjob(w, 1)->end, sim_time_from_s(15));
    cr_assert_eq(sjob(w, 0)->n_preempted, 1);
    cr_assert_eq(sjob(w, 0)->n_restarts, 1);
    cr_assert_eq(sjob(w, 0)->start, 0);
    cr_assert_eq(sjob(w, 0)->end, sim_time_from_s(115));
    cr_assert_eq(world_get_totals(w).n_preemptions, 1);
    world_destroy(w);
    senv_init(&e, "k8s", 1, per);
    sadd(&e, 0, 2, 1, 100, 0, 0);
    sadd(&e, 5, 1, 1, 10, 0, 0);
    w = srun(&e, 0);
    cr_assert_eq(sjob(w, 1)->start, sim_time_from_s(100));
    cr_assert_eq(world_get_totals(w).n_preemptions, 0);
    world_destroy(w);
}

Test(sched, priority_orders_the_queue)
{
    /* 1 node x 1 GPU, fgd (no preemption). A runs 0..10; B (prio 0) at 1, C (prio 5) at 2 wait;
     * at 10 the queue is tried in priority order: C first (10..20), then B (20..30). */
    uint32_t per[1] = {1};
    senv e;
    senv_init(&e, "fgd", 1, per);
    sadd(&e, 0, 1, 1, 10, 0, 0);
    sadd(&e, 1, 1, 1, 10, 0, 0);
    sadd(&e, 2, 1, 1, 10, 0, 5);
    world *w = srun(&e, 0);
    cr_assert_eq(sjob(w, 2)->start, sim_time_from_s(10));
    cr_assert_eq(sjob(w, 1)->start, sim_time_from_s(20));
    world_destroy(w);
}

Test(sched, fgd_fragmentation_measure_by_hand)
{
    /* A node with GPUs of 500 and 1000 milli free, CPU not modelled. Typical pods: 500 m (2/3)
     * and one whole GPU (1/3). For the 500 m pod both GPUs can take one: fragment = the GPUs too
     * small for it: none, 0. For the whole-GPU pod it fits GPU 1; GPU 0's 500 are too small:
     * fragment 500. A CPU-only pod uses no GPU: all 1500 idle are fragment for it.
     * Node amount = 2/3 * 0 + 1/3 * 500 = 166.67 of 1500 idle. */
    frag_pod shapes[3] = {frag_pod_make(1, 500, 0, NULL), frag_pod_make(1, 500, 0, NULL),
                          frag_pod_make(1, 0, 0, NULL)};
    frag_typical t;
    frag_typical_build(shapes, 3, 0.95, &t);
    cr_assert_eq(t.n, 2);
    cr_assert_float_eq(t.freq[0], 2.0 / 3, 1e-12);
    frag_node n = {.n_gpus = 2, .milli_left = {500, 1000}, .cpu_left = UINT64_MAX};
    cr_assert_float_eq(frag_for_pod(&n, &t.pods[0]), 0, 1e-12);
    cr_assert_float_eq(frag_for_pod(&n, &t.pods[1]), 500, 1e-12);
    frag_pod cpu_only = frag_pod_make(0, 0, 1000, NULL);
    cr_assert_float_eq(frag_for_pod(&n, &cpu_only), 1500, 1e-12);
    cr_assert_float_eq(frag_node_amount(&n, &t), 500.0 / 3, 1e-9);
    /* the one-pass node amount is the definition pod by pod, weighted, on every free-share pair */
    for (uint32_t a = 0; a <= 1000; a += 125) {
        for (uint32_t b = 0; b <= 1000; b += 250) {
            frag_node m = {.n_gpus = 2, .milli_left = {a, b}, .cpu_left = UINT64_MAX};
            double want = 0;
            for (size_t i = 0; i < t.n; i++) {
                want += t.freq[i] * frag_for_pod(&m, &t.pods[i]);
            }
            cr_assert_float_eq(frag_node_amount(&m, &t), want, 1e-9, "free %u, %u", a, b);
        }
    }
    /* a pod whose gpu_spec excludes the node, or whose CPU does not fit: all idle */
    frag_pod t4 = frag_pod_make(1, 500, 0, "T4|P100");
    n.gpu_type = "G2";
    cr_assert_float_eq(frag_for_pod(&n, &t4), 1500, 1e-12);
    n.cpu_left = 10;
    frag_pod cpu = frag_pod_make(1, 500, 11, NULL);
    cr_assert_float_eq(frag_for_pod(&n, &cpu), 1500, 1e-12);
    frag_typical_fini(&t);
}

Test(sched, fgd_fragmentation_cache_by_hand)
{
    /* The typical pods of fgd_fragmentation_measure_by_hand (500 m 2/3, one whole GPU 1/3).
     * GPUs free {500, 1000}: 1/3 * 500 (as there). {1000, 1000}: both pods fit with no GPU too
     * small: 0. {500, 500}: the 500 m pod fits (0); the whole GPU does not: all 1000 idle, 1/3 of
     * it 333.33. Asked again, each comes from the cache; a state differing only past n_gpus is
     * the same state; three states are kept. */
    frag_pod shapes[3] = {frag_pod_make(1, 500, 0, NULL), frag_pod_make(1, 500, 0, NULL),
                          frag_pod_make(1, 0, 0, NULL)};
    frag_typical t;
    frag_typical_build(shapes, 3, 0.95, &t);
    frag_memo m = {0};
    frag_node a = {.n_gpus = 2, .milli_left = {500, 1000}, .cpu_left = UINT64_MAX};
    frag_node b = {.n_gpus = 2, .milli_left = {1000, 1000}, .cpu_left = UINT64_MAX};
    frag_node c = {.n_gpus = 2, .milli_left = {500, 500}, .cpu_left = UINT64_MAX};
    for (int round = 0; round < 2; round++) {
        cr_assert_float_eq(frag_memo_amount(&m, &a, &t), 500.0 / 3, 1e-9);
        cr_assert_float_eq(frag_memo_amount(&m, &b, &t), 0, 1e-12);
        cr_assert_float_eq(frag_memo_amount(&m, &c, &t), 1000.0 / 3, 1e-9);
    }
    a.milli_left[2] = 7;
    cr_assert_float_eq(frag_memo_amount(&m, &a, &t), 500.0 / 3, 1e-9);
    cr_assert_eq(m.n, 3);
    frag_memo_fini(&m);
    frag_typical_fini(&t);
}

/* The typical pods from shapes counted as they come (frag_shapes: a hash that grows, a job's
 * workers added at once) against counting by hand: 2 000 pods of 300 shapes (names in gpu_spec
 * given as different pointers to equal strings, equal counts whose ties keep the order of first
 * appearance), added one by one and in runs. */
Test(sched, typical_pods_counted_as_they_come)
{
    enum { N = 2000, SHAPES = 300 };
    static char spec_a[2][8] = {"T4|P100", "T4|P100"};
    frag_pod *pods = malloc(N * sizeof *pods);
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t k = (uint32_t)(x % (i < 600 ? 40 : SHAPES)); /* a few shapes much more often */
        pods[i] = frag_pod_make(1 + k % 3, k % 2 ? 250 * (1 + k % 3) : 0, (k / 6) * 100,
                                k % 5 == 0 ? spec_a[i % 2] : NULL);
    }
    /* by hand: distinct shapes with their count and first pod, by count down, then first */
    size_t n_d = 0, *cnt = calloc(N, sizeof *cnt), *first = calloc(N, sizeof *first);
    frag_pod *d = calloc(N, sizeof *d);
    for (int i = 0; i < N; i++) {
        size_t j = 0;
        while (j < n_d && !(d[j].n_gpu == pods[i].n_gpu && d[j].milli == pods[i].milli &&
                            d[j].cpu_milli == pods[i].cpu_milli &&
                            !d[j].gpu_spec == !pods[i].gpu_spec &&
                            (!d[j].gpu_spec || !strcmp(d[j].gpu_spec, pods[i].gpu_spec)))) {
            j++;
        }
        if (j == n_d) {
            d[n_d] = pods[i], first[n_d++] = (size_t)i;
        }
        cnt[j]++;
    }
    cr_assert_gt(n_d, 64, "the hash grows past its first size");
    size_t *ord = calloc(n_d, sizeof *ord);
    for (size_t i = 0; i < n_d; i++) {
        size_t at = i; /* insertion sort on (count down, first up) */
        while (at > 0 && (cnt[ord[at - 1]] < cnt[i] ||
                          (cnt[ord[at - 1]] == cnt[i] && first[ord[at - 1]] > first[i]))) {
            ord[at] = ord[at - 1];
            at--;
        }
        ord[at] = i;
    }
    size_t keep = 0, covered = 0;
    while (keep < n_d && (double)covered < 0.95 * N) {
        covered += cnt[ord[keep++]];
    }
    frag_typical one, runs;
    frag_typical_build(pods, N, 0.95, &one);
    frag_shapes *sh = frag_shapes_create();
    for (int i = 0; i < N;) { /* equal neighbours added as one run */
        int j = i + 1;
        while (j < N && pods[j].n_gpu == pods[i].n_gpu && pods[j].milli == pods[i].milli &&
               pods[j].cpu_milli == pods[i].cpu_milli && pods[j].gpu_spec == pods[i].gpu_spec) {
            j++;
        }
        frag_shapes_add(sh, &pods[i], (size_t)(j - i));
        frag_shapes_add(sh, &pods[i], 0); /* nothing */
        i = j;
    }
    frag_shapes_finish(sh, 0.95, &runs);
    cr_assert_eq(one.n, keep);
    cr_assert_eq(runs.n, keep);
    for (size_t i = 0; i < keep; i++) {
        const frag_pod *w = &d[ord[i]];
        for (int v = 0; v < 2; v++) {
            const frag_typical *t = v ? &runs : &one;
            cr_assert(t->pods[i].n_gpu == w->n_gpu && t->pods[i].milli == w->milli &&
                          t->pods[i].cpu_milli == w->cpu_milli && !t->pods[i].gpu_spec == !w->gpu_spec,
                      "typical pod %zu", i);
            cr_assert_float_eq(t->freq[i], (double)cnt[ord[i]] / (double)covered, 0);
        }
    }
    frag_typical_fini(&one);
    frag_typical_fini(&runs);
    free(pods), free(cnt), free(first), free(d), free(ord);
}

Test(sched, fgd_figures_of_a_run)
{
    /* FGD's figures after the fgd run of fgd_packs_shares...: GPU 0 holds 500 + 500, GPU 1 a
     * whole pod: both GPUs allocated (100 %), 2000 of 2000 milli-GPU, nothing idle (ratio 0).
     * The curve: arrived after each pod 0.25, 0.5, 1.0 of 2000 milli; allocated the same
     * (every pod placed at arrival); with step 0.05 every arrival crosses a step. */
    uint32_t per[1] = {2};
    senv e;
    senv_init(&e, "fgd", 1, per);
    sadd(&e, 0, 1, 1, 1000, 500, 0);
    sadd(&e, 1, 1, 1, 1000, 500, 0);
    sadd(&e, 2, 1, 1, 1000, 0, 0);
    world *w = srun(&e, 10);
    frag_typical typ;
    fragstat_typical(world_jobs(w), &typ);
    fragstat fs;
    fragstat_measure(world_cluster(w), &typ, &fs);
    cr_assert_eq(fs.gpus_alloc, 2);
    cr_assert_eq(fs.milli_alloc, 2000);
    cr_assert_eq(fs.milli_idle, 0);
    cr_assert_float_eq(fs.frag_ratio, 0, 1e-12);
    fragstat_point *pts;
    size_t n;
    fragstat_acc *acc = fragstat_acc_create(world_cluster(w), job_table_count(world_jobs(w)));
    for (job_id j = 0; j < job_table_count(world_jobs(w)); j++) {
        fragstat_acc_add(acc, job_table_get(world_jobs(w), j));
    }
    fragstat_acc_finish(acc, NULL, 0.05, &pts, &n);
    cr_assert_eq(n, 3);
    double want[3][3] = {{0.25, 0.5, 0.25}, {0.5, 0.5, 0.5}, {1.0, 1.0, 1.0}};
    for (size_t i = 0; i < 3; i++) {
        cr_assert_float_eq(pts[i].arrived, want[i][0], 1e-12);
        cr_assert_float_eq(pts[i].gpu_alloc, want[i][1], 1e-12);
        cr_assert_float_eq(pts[i].milli_alloc, want[i][2], 1e-12);
    }
    free(pts);
    frag_typical_fini(&typ);
    world_destroy(w);
}

/* The allocation curve from its points' states (fragstat_acc) against the sweep over every
 * event (tests/unit/oracle_curve.c): shared and whole GPUs, jobs of one to three workers, many
 * events at the same whole seconds, submissions out of id order, and a horizon that leaves jobs
 * running, queued and not yet submitted; steps fine and coarse, every point's bits. */
static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The curve of jobs[0..n) (job j the j-th) by fragstat_acc against the oracle, every point's
 * bits. */
static void curve_as_oracle(const cluster *c, const job *const *jobs, size_t n, double step)
{
    fragstat_point *want, *got;
    size_t n_want = oracle_curve(c, jobs, n, step, &want), n_got;
    fragstat_acc *acc = fragstat_acc_create(c, n);
    for (size_t j = 0; j < n; j++) {
        fragstat_acc_add(acc, jobs[j]);
    }
    fragstat_acc_finish(acc, NULL, step, &got, &n_got);
    cr_assert_eq(n_got, n_want, "points at step %g", step);
    cr_assert_geq(n_got, 3);
    for (size_t i = 0; i < n_got; i++) {
        cr_assert(memcmp(&got[i], &want[i], sizeof got[i]) == 0,
                  "point %zu: %g %g %g, the sweep %g %g %g", i, got[i].arrived, got[i].gpu_alloc,
                  got[i].milli_alloc, want[i].arrived, want[i].gpu_alloc, want[i].milli_alloc);
    }
    free(want);
    free(got);
}

/* The allocation curve from its points' states (fragstat_acc) against the sweep over every
 * event (tests/unit/oracle_curve.c): shared and whole GPUs, jobs of one to three workers, many
 * events at the same whole seconds, a horizon that leaves jobs running, queued and not yet
 * submitted; the same jobs again numbered in another order (submissions out of id order); steps
 * fine and coarse. */
Test(sched, curve_at_its_points_is_the_sweep_over_every_event)
{
    static const double steps[] = {0.05, 0.013, 0.4};
    for (int v = 0; v < 3; v++) {
        uint32_t per[4] = {8, 8, 4, 2};
        senv e;
        senv_init(&e, v == 1 ? "fifo" : "fgd", 4, per);
        uint64_t x = 0x2545F4914F6CDD1DULL + (uint64_t)v;
        double submit[500];
        for (int i = 0; i < 500; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            submit[i] = (double)(x % 400) + (i % 5 == 0 ? 0.5 : 0); /* many at equal times */
        }
        qsort(submit, 500, sizeof submit[0], by_double); /* a run's jobs arrive in id order */
        for (int i = 0; i < 500; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t share = x % 3 == 0 ? (uint32_t)(100 * (1 + x / 3 % 9)) : 0;
            uint32_t workers = share ? 1 : 1 + (uint32_t)(x / 7 % 3);
            double work = (double)(1 + x / 11 % 60) + (x % 4 == 0 ? 0 : 0.25);
            sadd(&e, submit[i], share ? 1 : 1 + (uint32_t)(x / 13 % 2), workers, work, share, 0);
        }
        world *w = srun(&e, 380);
        const job_table *t = world_jobs(w);
        size_t n = job_table_count(t), n_state[JOB_FAILED_REQUEST + 1] = {0};
        const job **jobs = calloc(n, sizeof *jobs);
        job *shuffled = calloc(n, sizeof *shuffled);
        const job **by_shuffle = calloc(n, sizeof *by_shuffle);
        for (job_id j = 0; j < n; j++) {
            jobs[j] = job_table_get(t, j);
            n_state[jobs[j]->state]++;
        }
        cr_assert(n_state[JOB_DONE] > 50 && n_state[JOB_RUNNING] > 0 && n_state[JOB_PENDING] > 0,
                  "done, running and unsubmitted jobs");
        for (size_t j = 0; j < n; j++) { /* job (7 j) mod n as job j: 7 and 500 coprime */
            shuffled[j] = *jobs[(7 * j) % n];
            shuffled[j].id = (job_id)j;
            by_shuffle[j] = &shuffled[j];
        }
        for (int k = 0; k < 3; k++) {
            curve_as_oracle(world_cluster(w), jobs, n, steps[k]);
            curve_as_oracle(world_cluster(w), by_shuffle, n, steps[k]);
        }
        free(jobs);
        free(shuffled);
        free(by_shuffle);
        world_destroy(w);
    }
}

Test(sched, fgd_held_share_and_node_type_rules)
{
    /* The rules run.json and report.html share: a shareable device holds its shares (capped at
     * 1000); any other device (a MIG instance, a time-slice replica) a whole GPU while a unit is
     * held, whatever share of its replicas that is. A node's GPU type is its first GPU's label,
     * else its model's name; GPUs past FRAG_MAX_GPUS are not looked at. */
    cr_assert_eq(fragstat_dev_held(true, 300, 1), 300);
    cr_assert_eq(fragstat_dev_held(true, 1500, 2), 1000);
    cr_assert_eq(fragstat_dev_held(false, 250, 1), 1000);
    cr_assert_eq(fragstat_dev_held(false, 0, 0), 0);
    gpu_type a100 = {.name = "A100"};
    cluster_gpu plain = {.type = &a100}, g2 = {.type = &a100, .label = "G2"};
    frag_node fn = {.cpu_left = UINT64_MAX};
    fragstat_node_add(&fn, &plain, 250);
    fragstat_node_add(&fn, &g2, 0);
    cr_assert_eq(fn.n_gpus, 2);
    cr_assert_eq(fn.milli_left[0], 750);
    cr_assert_eq(fn.milli_left[1], 1000);
    cr_assert_str_eq(fn.gpu_type, "A100");
    frag_node fl = {.cpu_left = UINT64_MAX};
    fragstat_node_add(&fl, &g2, 0);
    cr_assert_str_eq(fl.gpu_type, "G2");
    for (int i = 0; i < FRAG_MAX_GPUS + 3; i++) {
        fragstat_node_add(&fl, &plain, 0);
    }
    cr_assert_eq(fl.n_gpus, FRAG_MAX_GPUS);
}

/* 2 nodes x 1 GPU under POLICY: n0 has 4000 milli-CPU, n1 16000 and its GPU labelled "G2" (g2,
 * owned by the caller, must outlive the world). */
static void senv_cpu_g2(senv *e, const char *policy, cluster_gpu_cfg *g2)
{
    uint32_t per[2] = {1, 1};
    senv_init(e, policy, 2, per);
    *g2 = (cluster_gpu_cfg){.type = &e->g, .label = "G2"};
    e->nodes[0].cpu_milli = 4000;
    e->nodes[1].cpu_milli = 16000;
    e->nodes[1].gpus = g2;
}

static job_id cadd(senv *e, double submit_s, uint32_t per, double work_s, uint64_t cpu_milli,
                   const char *gpu_spec)
{
    job_spec s = {.class_name = "c",
                  .req = {per ? "nvidia.com/gpu" : NULL, per, 1},
                  .submit = sim_time_from_s(submit_s),
                  .work_s = work_s,
                  .pod = {.cpu_milli = cpu_milli, .gpu_spec = gpu_spec}};
    return job_table_add(e->t, &s);
}

Test(sched, cpu_and_memory_filter_and_gpu_spec_labels)
{
    /* 2 nodes x 1 GPU; n0 has 4000 milli-CPU, n1 16000; n1's GPU is labelled "G2".
     * Pod A: 1 GPU, 8000 milli-CPU: only n1 has the CPU. Pod B: a CPU-only pod of 3000: n0
     * (k8s: n1 has 8000 of 16000 left after A, n0 4000 of 4000; LeastAllocated over CPU:
     * n0 (4000-3000)/4000 = 0.25 vs n1 (8000-3000)/16000 = 0.3125 -> n1? both CPU only: n1).
     * Pod C: gpu_spec "G2": n1's GPU is taken by A, n0's GPU is not G2: stays queued. */
    senv e;
    cluster_gpu_cfg g2;
    senv_cpu_g2(&e, "k8s", &g2);
    cadd(&e, 0, 1, 100, 8000, NULL);
    cadd(&e, 1, 0, 100, 3000, NULL);
    cadd(&e, 2, 1, 100, 0, "G2|T4");
    world *w = srun(&e, 10);
    cr_assert_eq(node_of(w, 0, 0), 1);
    cr_assert_eq(sjob(w, 1)->state, JOB_RUNNING);
    cr_assert_eq(sjob(w, 1)->n_units, 0);
    cr_assert_eq(cluster_node_cpu_free(world_cluster(w), 1), 16000 - 8000 - 3000);
    cr_assert_eq(sjob(w, 2)->state, JOB_QUEUED);
    world_destroy(w);
}

Test(sched, fifo_places_by_cpu_memory_and_gpu_spec_and_keeps_cpu_pods_in_line)
{
    /* fifo, 2 nodes x 1 GPU; n0 has 4000 milli-CPU, n1 16000 and its GPU is labelled G2.
     * j0 (0 s, 1 GPU, 8000 CPU, 10 s): n0 lacks the CPU, n1. j1 (1 s, CPU-only, 2000): the
     * lowest node with the CPU, n0. j2 (2 s, 1 GPU, 4000 CPU): n0 has 2000 CPU left, n1's GPU
     * is held: it waits at the head. j3 (3 s, CPU-only, 1000) fits n0 but waits behind j2 (one
     * queue). j4 (4 s, 1 GPU of type G2): after them. At 10 s j0 ends: j2 takes n1 (16000 CPU),
     * j3 n0 (2000 left >= 1000); j4 needs G2, whose GPU j2 now holds (n0's is not G2): it waits.
     * Every placement is one the model accepts (srun checks that none is rejected). */
    senv e;
    cluster_gpu_cfg g2;
    senv_cpu_g2(&e, "fifo", &g2);
    cadd(&e, 0, 1, 10, 8000, NULL);
    cadd(&e, 1, 0, 1000, 2000, NULL);
    cadd(&e, 2, 1, 1000, 4000, NULL);
    cadd(&e, 3, 0, 1000, 1000, NULL);
    cadd(&e, 4, 1, 1000, 0, "G2");
    world *w = srun(&e, 100);
    cr_assert_eq(node_of(w, 0, 0), 1);
    cr_assert_eq(sjob(w, 0)->state, JOB_DONE);
    cr_assert_eq(sjob(w, 1)->start, sim_time_from_s(1));
    cr_assert_eq(sjob(w, 2)->start, sim_time_from_s(10));
    cr_assert_eq(node_of(w, 2, 0), 1);
    cr_assert_eq(sjob(w, 3)->start, sim_time_from_s(10));
    cr_assert_eq(sjob(w, 4)->state, JOB_QUEUED);
    /* n0: j1 2000 + j3 1000 of 4000; n1: j2 4000 of 16000 */
    cr_assert_eq(cluster_node_cpu_free(world_cluster(w), 0), 1000);
    cr_assert_eq(cluster_node_cpu_free(world_cluster(w), 1), 12000);
    world_destroy(w);
}

Test(sched, backfill_reserves_for_a_head_short_of_cpu)
{
    /* backfill, 1 node x 2 GPUs, 8000 milli-CPU. j0 (0 s, 1 GPU, 6000 CPU, 100 s). j1 (1 s,
     * 2 GPUs, 4000 CPU, 50 s): the head; it fits once j0 has ended and given back its GPU and
     * its CPU: shadow time 100 s, both GPUs reserved. j2 (2 s, 1 GPU, 1000 CPU, 500 s) fits now
     * but would end at 502 s > 100 s on a reserved GPU: it waits. j1 runs 100..150 s, then j2.
     * (Counting only the GPUs, the head would never fit, have no reservation, and j2 would
     * start at 2 s and delay it to 502 s.) */
    uint32_t per[1] = {2};
    senv e;
    senv_init(&e, "backfill", 1, per);
    e.nodes[0].cpu_milli = 8000;
    cadd(&e, 0, 1, 100, 6000, NULL);
    job_spec h = {.class_name = "c", .req = {"nvidia.com/gpu", 2, 1},
                  .submit = sim_time_from_s(1), .work_s = 50, .pod = {.cpu_milli = 4000}};
    job_table_add(e.t, &h);
    cadd(&e, 2, 1, 500, 1000, NULL);
    world *w = srun(&e, 0);
    cr_assert_eq(sjob(w, 1)->start, sim_time_from_s(100));
    cr_assert_eq(sjob(w, 2)->start, sim_time_from_s(150));
    world_destroy(w);
}

Test(sched, backfill_with_a_job_that_never_ends_starts_a_cpu_pod)
{
    /* backfill, 1 node x 1 GPU. j0 holds the GPU for 1e15 s (a trace's open-ended pod: past
     * what simulated time holds). j1 (1 s, 1 GPU) waits at the head with no reservation (it
     * fits only when j0 ends: never). j2 (2 s, CPU-only) starts at once. */
    uint32_t per[1] = {1};
    senv e;
    senv_init(&e, "backfill", 1, per);
    cadd(&e, 0, 1, 1e15, 0, NULL);
    cadd(&e, 1, 1, 10, 0, NULL);
    cadd(&e, 2, 0, 10, 100, NULL);
    world *w = srun(&e, 100);
    cr_assert_eq(sjob(w, 1)->state, JOB_QUEUED);
    cr_assert_eq(sjob(w, 2)->start, sim_time_from_s(2));
    cr_assert_eq(sjob(w, 2)->state, JOB_DONE);
    world_destroy(w);
}

Test(sched, check_and_run_agree_on_what_can_never_be_placed)
{
    /* 4-GPU nodes and a job class asking for 16 GPUs on one worker: no node can ever hold it.
     * `check` must refuse it as `run` does, with the same message and exit status 2. */
    char dir[64], path[128], cmd[512], check_out[1024], run_out[1024];
    cr_assert(test_tmpdir(dir, sizeof dir, "sched"));
    snprintf(path, sizeof path, "%s/big.yaml", dir);
    cr_assert(test_write_text(path, "name: big\nseed: 1\nhorizon: 1h\ncluster:\n  nodes:\n"
                                    "    - name: a\n      gpu: A100-SXM4-40GB\n"
                                    "      gpus_per_node: 4\nworkload:\n  jobs:\n"
                                    "    - name: j\n      rate: 2/h\n      duration: 10m\n"
                                    "      request: {nvidia.com/gpu: 16}\n"));
    snprintf(cmd, sizeof cmd, "./slicesim check %s 2>&1", path);
    int rc_check = test_sh(cmd, check_out, sizeof check_out);
    snprintf(cmd, sizeof cmd, "./slicesim run %s -o %s/out 2>&1", path, dir);
    int rc_run = test_sh(cmd, run_out, sizeof run_out);
    cr_assert_eq(rc_check, 2, "%s", check_out);
    cr_assert_eq(rc_run, 2, "%s", run_out);
    cr_assert_str_eq(check_out, run_out);
    cr_assert_not_null(strstr(check_out, "workload.jobs[0].request: no node can hold it"));
    test_rm_rf(dir);
}

Test(sched, preemption_picks_the_node_with_the_lowest_priority_victims)
{
    /* 2 nodes x 1 GPU. L5 (priority 5) at 0 lands on one node, L0 (priority 0) at 1 on the
     * other. H (priority 10, 1 GPU) at 2: evicting L0 suffices, and its highest victim priority
     * (0) is lower than L5's (5): L0 is preempted, H runs on L0's node; L5 keeps running. */
    uint32_t per[2] = {1, 1};
    senv e;
    senv_init(&e, "k8s", 2, per);
    sadd(&e, 0, 1, 1, 100, 0, 5);
    sadd(&e, 1, 1, 1, 100, 0, 0);
    sadd(&e, 2, 1, 1, 100, 0, 10);
    world *w = srun(&e, 50);
    cr_assert_eq(sjob(w, 0)->state, JOB_RUNNING);
    cr_assert_eq(sjob(w, 0)->n_preempted, 0);
    cr_assert_eq(sjob(w, 1)->state, JOB_QUEUED);
    cr_assert_eq(sjob(w, 1)->n_preempted, 1);
    cr_assert_eq(sjob(w, 2)->state, JOB_RUNNING);
    cr_assert_eq(sjob(w, 2)->start, sim_time_from_s(2));
    cr_assert_neq(node_of(w, 2, 0), node_of(w, 0, 0));
    world_destroy(w);
}
