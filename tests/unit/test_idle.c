/* Unit tests for the classes of nodes alike and the log of idle nodes (model/cluster/cluster.h),
 * and for the kube cycle that scores one idle node per class (model/policy/kube.h): hand-worked
 * cluster states, and runs held decision by decision to the same runs on a cluster whose nodes
 * are all distinct (each its own, empty, labels), where every node is scored. The GPU type is
 * the made-up fixture TEST-GPU (tests/unit/fixtures.h). */
#include <criterion/criterion.h>
#include <string.h>

#include "model/cluster/cluster.h"
#include "model/cluster/world.h"
#include "model/policy/policy.h"
#include "sim/diag.h"
#include "sim/rng.h"
#include "tests/unit/fixtures.h"

Test(idle, classes_group_nodes_alike_and_the_log_follows_idleness)
{
    /* Five nodes of one shareable GPU: n0, n1 and n4 alike; n2 like them but with labels of its
     * own (another pointer, though empty) and n3 with CPU stated: both alike to no other. So one
     * class {n0, n1, n4}, all idle at the start, and n2 and n3 never idle. */
    gpu_type g = test_gpu();
    cluster_gpu_cfg gpus[1] = {{.type = &g}};
    taint_node own = {0};
    cluster_node_cfg nodes[5] = {{.name = "n0", .n_gpus = 1, .gpus = gpus},
                                 {.name = "n1", .n_gpus = 1, .gpus = gpus},
                                 {.name = "n2", .n_gpus = 1, .gpus = gpus, .meta = &own},
                                 {.name = "n3", .n_gpus = 1, .gpus = gpus, .cpu_milli = 8000},
                                 {.name = "n4", .n_gpus = 1, .gpus = gpus}};
    cluster_cfg cc = {.n_nodes = 5, .nodes = nodes};
    cluster *c = NULL;
    char why[128];
    cr_assert_eq(cluster_create(&cc, &c, why, sizeof why), 0);
    res_id r;
    cr_assert(cluster_resource_find(c, "nvidia.com/gpu", &r));
    cr_assert_eq(cluster_n_classes(c), 1);
    uint32_t want_class[5] = {0, 0, CLUSTER_NO_CLASS, CLUSTER_NO_CLASS, 0};
    bool want_idle[5] = {true, true, false, false, true};
    for (node_id n = 0; n < 5; n++) {
        cr_assert_eq(cluster_node_class(c, n), want_class[n], "n%u", n);
        cr_assert_eq(cluster_node_idle(c, n), want_idle[n], "n%u", n);
    }
    cr_assert_eq(cluster_idle_seq(c), 0);
    /* the busy indexes see n2 and n3 only */
    cr_assert_eq(cluster_next_busy(c, 0), 2);
    cr_assert_eq(cluster_next_busy(c, 4), 5);
    cr_assert_eq(cluster_next_busy_node(c, r, 1, 0), 2);
    cr_assert_eq(cluster_next_busy_node_share(c, 500, 3), 3);
    cr_assert_eq(cluster_next_node(c, r, 1, 0), 0); /* the free index sees every node */

    /* a share on n1 (device 1): busy, logged as change 0; n1 has 700 left */
    cluster_take_share(c, 1, 300, 0);
    cr_assert_not(cluster_node_idle(c, 1));
    cr_assert_eq(cluster_idle_seq(c), 1);
    node_id n = 99;
    cr_assert(cluster_idle_changed(c, 0, &n));
    cr_assert_eq(n, 1);
    cr_assert_eq(cluster_next_busy_node_share(c, 700, 0), 1);
    cr_assert_eq(cluster_next_busy_node_share(c, 701, 0), 2);
    cr_assert_eq(cluster_next_busy_node(c, r, 1, 0), 2); /* a held share holds the unit */
    cluster_take_share(c, 1, 200, 0); /* still busy: nothing logged */
    cr_assert_eq(cluster_idle_seq(c), 1);
    cluster_give_share(c, 1, 200, 0);
    cluster_give_share(c, 1, 300, 0); /* idle again: change 1 */
    cr_assert(cluster_node_idle(c, 1));
    cr_assert_eq(cluster_idle_seq(c), 2);
    cr_assert(cluster_idle_changed(c, 1, &n));
    cr_assert_eq(n, 1);
    cr_assert_eq(cluster_next_busy(c, 0), 2);

    /* a whole unit on n4, CPU and memory on n0 (not modelled there: nothing held, still idle),
     * a cordon on n0's GPU */
    cluster_take(c, 4, 0);
    cr_assert_eq(cluster_next_busy_node(c, r, 1, 3), 3); /* n3 free */
    cr_assert_eq(cluster_next_busy_node(c, r, 1, 4), 5); /* n4 busy but full */
    cr_assert_eq(cluster_next_busy(c, 3), 3);
    cr_assert_eq(cluster_next_busy(c, 4), 4);
    cluster_node_take(c, 0, 1000, 100);
    cr_assert(cluster_node_idle(c, 0));
    cluster_set_cordoned(c, 0, true);
    cr_assert_not(cluster_node_idle(c, 0));
    cr_assert_eq(cluster_next_busy_node(c, r, 1, 0), 2); /* n0 busy, but nothing free */
    cr_assert_eq(cluster_next_busy(c, 0), 0);
    cr_assert_eq(cluster_idle_seq(c), 4);
    node_id log[2];
    cr_assert(cluster_idle_changed(c, 2, &log[0]) && cluster_idle_changed(c, 3, &log[1]));
    cr_assert(log[0] == 4 && log[1] == 0);

    /* the log keeps the last 5 changes (one per node): six more, and change 4 is gone */
    for (int i = 0; i < 3; i++) {
        cluster_set_cordoned(c, 0, false);
        cluster_set_cordoned(c, 0, true);
    }
    cr_assert_eq(cluster_idle_seq(c), 10);
    cr_assert_not(cluster_idle_changed(c, 4, &n));
    cr_assert(cluster_idle_changed(c, 5, &n));
    cr_assert_eq(n, 0);
    cluster_destroy(c);
}

/* A run of the policy on 12 nodes (six of 4 GPUs, six of 2, shareable TEST-GPUs) under a mix
 * of whole pods, gangs, shares and a few CPU-only pods; `distinct` gives every node labels of
 * its own (empty), so no two are alike and every node is scored. Caller destroys the world. */
static world *mixed_run(const char *policy, bool distinct, taint_node own[12])
{
    static gpu_type g;
    g = test_gpu();
    static cluster_gpu_cfg gpus[4];
    for (int i = 0; i < 4; i++) {
        gpus[i] = (cluster_gpu_cfg){.type = &g};
    }
    static cluster_node_cfg nodes[12];
    static const char *names[12] = {"a0", "a1", "a2", "a3", "a4", "a5",
                                    "b0", "b1", "b2", "b3", "b4", "b5"};
    for (int n = 0; n < 12; n++) {
        memset(&own[n], 0, sizeof own[n]);
        nodes[n] = (cluster_node_cfg){
            .name = names[n], .n_gpus = n < 6 ? 4 : 2, .gpus = gpus, .meta = distinct ? &own[n] : NULL};
    }
    static cluster_cfg cc;
    cc = (cluster_cfg){.n_nodes = 12, .nodes = nodes};
    job_table *t = job_table_create();
    rng_root root = rng_root_make(11);
    rng_stream *s = rng_stream_open(&root, "test.idle", 0);
    double at = 0;
    for (int i = 0; i < 300; i++) {
        at += 20.0 * rng_uniform01(s);
        uint32_t kind = (uint32_t)rng_uniform_int(s, 10), per = 1, workers = 1, milli = 0;
        uint64_t cpu = 0;
        if (kind < 4) { /* whole GPUs */
            per = 1u << rng_uniform_int(s, 3);
        } else if (kind < 6) { /* a gang */
            per = 1 + (uint32_t)rng_uniform_int(s, 2);
            workers = 2 + (uint32_t)rng_uniform_int(s, 2);
        } else if (kind < 9) { /* a share */
            milli = 100 * (1 + (uint32_t)rng_uniform_int(s, 9));
        } else if (i % 50 == 9) { /* now and then a CPU-only pod (holds nothing here) */
            per = 0;
            cpu = 1000;
        }
        job_spec js = {.class_name = "c",
                       .req = {per ? "nvidia.com/gpu" : NULL, per, workers},
                       .submit = sim_time_from_s(at),
                       .work_s = 50 + 400 * rng_uniform01(s),
                       .pod = {.gpu_milli = milli, .cpu_milli = cpu}};
        job_table_add(t, &js);
    }
    rng_stream_close(s);
    world_cfg wc = {.cluster = &cc,
                    .policy = pol_find(policy),
                    .until = SIM_TIME_MAX,
                    .verify_every = 1,
                    .seed = 7};
    cr_assert_not_null(wc.policy, "%s", policy);
    diag *d = diag_create();
    world *w = NULL;
    cr_assert_eq(world_create(&wc, t, d, (src_loc){"x", 1, 1}, &w), 0);
    diag_destroy(d);
    world_run(w);
    cr_assert_eq(cluster_n_classes(world_cluster(w)), distinct ? 0 : 2);
    return w;
}

Test(idle, one_idle_node_per_class_chooses_as_scoring_every_node)
{
    /* Every fixed-order policy: the same devices, start and end for every job whether the idle
     * nodes are scored one per class or all (the nodes made distinct). */
    static const char *policies[] = {"fgd", "bestfit", "dotprod", "gpupacking", "gpuclustering"};
    for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
        taint_node own_a[12], own_b[12];
        world *a = mixed_run(policies[p], false, own_a);
        world *b = mixed_run(policies[p], true, own_b);
        uint32_t started = 0, gangs = 0;
        for (job_id j = 0; j < 300; j++) {
            const job *x = job_table_get(world_jobs(a), j), *y = job_table_get(world_jobs(b), j);
            cr_assert_eq(x->state, y->state, "%s job %u", policies[p], j);
            cr_assert_eq(x->start, y->start, "%s job %u", policies[p], j);
            cr_assert_eq(x->end, y->end, "%s job %u", policies[p], j);
            cr_assert_eq(x->n_units, y->n_units, "%s job %u", policies[p], j);
            for (uint32_t u = 0; u < x->n_units; u++) {
                cr_assert_eq(x->units[u], y->units[u], "%s job %u unit %u", policies[p], j, u);
            }
            started += x->start >= 0;
            gangs += x->start >= 0 && x->spec.req.n_workers > 1;
        }
        cr_assert_gt(started, 250, "%s: %u of 300 jobs placed", policies[p], started);
        cr_assert_gt(gangs, 30, "%s: %u gangs placed", policies[p], gangs);
        world_destroy(a);
        world_destroy(b);
    }
}
