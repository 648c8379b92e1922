/* Unit tests for scheduling: utilisation up to the horizon, the free-capacity index
 * (model/capidx.h), fractional-GPU and node CPU/memory bookkeeping (model/cluster.h).
 * Expected values are worked out by hand in each test. The GPU type is the made-up fixture
 * TEST-GPU (tests/unit/fixtures.h), not catalog data. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "model/capidx.h"
#include "model/cluster.h"
#include "model/world.h"
#include "sim/diag.h"
#include "tests/unit/fixtures.h"
#include "tools/out.h"

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
    cr_assert_float_eq(out_time_mean(w, offsetof(world_sample, gpus_busy), 2), 0.25, 1e-12);
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
    cr_assert_eq(capidx_max(ix), 4);
    cr_assert_eq(capidx_next_ge(ix, 0, 1), 0);
    cr_assert_eq(capidx_next_ge(ix, 1, 1), 2);
    cr_assert_eq(capidx_next_ge(ix, 0, 3), 2);
    cr_assert_eq(capidx_next_ge(ix, 3, 3), 4);
    cr_assert_eq(capidx_next_ge(ix, 0, 5), 5); /* none */
    cr_assert_eq(capidx_next_ge(ix, 5, 0), 5);
    capidx_set(ix, 4, 0);
    cr_assert_eq(capidx_max(ix), 3);
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
    cr_assert_eq(cluster_shareable_gpus(c), 4);
    /* 300 + 500 milli on GPU 0 of node a: it holds one unit; 200 milli are left on it */
    cluster_take_share(c, 0, 300, 10);
    cluster_take_share(c, 0, 500, 10);
    cr_assert_eq(cluster_share_free(c, 0), 200);
    cr_assert_eq(cluster_free(c, 0, r), 1); /* GPU 1 only */
    cr_assert_eq(cluster_gpus_busy(c), 1);
    cr_assert_eq(cluster_milli_used(c), 800);
    /* a whole unit on GPU 1 holds 1000: node a has no 2-unit room, node b has */
    cluster_take(c, 1, 0);
    cr_assert_eq(cluster_milli_used(c), 1800);
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
