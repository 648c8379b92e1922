/* The rows of report.html's Gantt chart (tools/gantt.h) on a hand-built run with one layout
 * change. Node "n": GPU 0 a whole A100-SXM4-40GB (MIG off, a fixed layout); GPU 1 a
 * reconfigurable A100-SXM4-40GB laid out as 7 x 1g.5gb. At 100 s a timer withdraws the seven
 * 1g.5gb instances and makes 4g.20gb@0 and 3g.20gb@4 (slices 0-3 and 4-7) exist; the run ends at
 * 300 s. Jobs run at rate 1 (no rate function), FIFO, first fit:
 *   j0 (1g.5gb, at 0 s, 50 s of work)    on 1g.5gb@0, 0..50
 *   j1 (whole GPU, at 0 s, 200 s)        on GPU 0, 0..200
 *   j2 (3g.20gb, at 10 s, 60 s)          waits for its instance: on 3g.20gb@4, 100..160
 * Hand-derived chart: GPU 0 is one row (row 0). GPU 1 changed at 100 s and had at most seven
 * devices at once, so its lane is rows 1..7: the 1g.5gb instances, first seen at 0 s, take rows
 * 1..7 in placement order (their intervals [0, 100) all overlap); then, first seen at 100 s, in
 * device id order (the candidates follow the catalog's profile order, 3g.20gb before 4g.20gb)
 * 3g.20gb@4 takes the lowest row free from 100 s on, row 1 (1g.5gb@0's [0, 100) ends when it
 * begins), and 4g.20gb@0 the next one, row 2. Nine bands, one mark at 100 s.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "tests/unit/worldfx.h"
#include "tools/devlog.h"
#include "tools/gantt.h"

typedef struct hand_run {
    arena *a;
    cluster_gpu_cfg gpus[2];
    fx_node fx;
    world *w;
    devlog log;
    dev_id on[2]; /* the devices that exist from 100 s: 4g.20gb@0, 3g.20gb@4 */
} hand_run;

/* GPU 1's device with this profile at this placement. */
static dev_id instance(const world *w, const char *profile, int start)
{
    const cluster *c = world_cluster(w);
    const cluster_gpu *g = cluster_gpu_get(c, 1);
    for (dev_id d = g->first_dev; d < g->first_dev + g->n_devs; d++) {
        const cluster_device *cd = cluster_device_get(c, d);
        if (cd->profile && cd->mig_start == start && !strcmp(cd->profile->name, profile)) {
            return d;
        }
    }
    cr_assert_fail("GPU 1 has no %s@%d", profile, start);
    return 0;
}

/* The timer at 100 s: the new layout, then the scheduler's turn. */
static void relayout(world *w, void *ctx, uint64_t tag)
{
    (void)tag;
    hand_run *h = ctx;
    for (int k = 0; k < 7; k++) {
        world_set_active(w, instance(w, "1g.5gb", k), false);
    }
    world_set_active(w, h->on[0], true);
    world_set_active(w, h->on[1], true);
    world_settle(w);
}

static void hand_run_init(hand_run *h)
{
    memset(h, 0, sizeof *h);
    h->a = arena_create();
    gpu_catalog cat;
    diag *d = diag_create();
    cr_assert_eq(catalog_load_default(h->a, &cat, d), 0);
    diag_destroy(d);
    const gpu_type *t = gpu_catalog_find(&cat, "A100-SXM4-40GB");
    cr_assert(t);
    h->gpus[0] = (cluster_gpu_cfg){.type = t};
    h->gpus[1] =
        (cluster_gpu_cfg){.type = t, .mig_enabled = true, .n_mig = 7, .reconfigurable = true};
    for (int i = 0; i < 7; i++) {
        h->gpus[1].mig[i] = gpu_find_profile(t, "1g.5gb");
        h->gpus[1].mig_start[i] = i;
    }
    fx_node_init(&h->fx, "n", h->gpus, 2, "fifo", sim_time_from_s(300));
    job_table *jt = job_table_create();
    fx_add(jt, 0, "nvidia.com/mig-1g.5gb", 1, 1, 50);
    fx_add(jt, 0, "nvidia.com/gpu", 1, 1, 200);
    fx_add(jt, 10, "nvidia.com/mig-3g.20gb", 1, 1, 60);
    h->w = fx_world(&h->fx.wc, jt);
    h->on[0] = instance(h->w, "4g.20gb", 0);
    h->on[1] = instance(h->w, "3g.20gb", 4);
    world_at(h->w, sim_time_from_s(100), world_timer_client(h->w, relayout, h), 0);
    world_run(h->w);
    cr_assert_float_eq(fx_end_s(h->w, 0), 50.0, 1e-9);
    cr_assert_float_eq(fx_end_s(h->w, 1), 200.0, 1e-9);
    cr_assert_float_eq(fx_start_s(h->w, 2), 100.0, 1e-9);
    cr_assert_float_eq(fx_end_s(h->w, 2), 160.0, 1e-9);
    devlog_build(h->w, &h->log);
}

static void hand_run_fini(hand_run *h)
{
    devlog_fini(&h->log);
    world_destroy(h->w);
    arena_destroy(h->a);
}

static void expect_band(const gantt *g, size_t i, uint32_t row, dev_id dev, double from_s,
                        double to_s)
{
    cr_assert_lt(i, g->n_bands);
    cr_expect_eq(g->bands[i].row, row, "band %zu: row %u, expected %u", i, g->bands[i].row, row);
    cr_expect_eq(g->bands[i].dev, dev, "band %zu: device %u, expected %u", i, g->bands[i].dev, dev);
    cr_expect_eq(g->bands[i].from, sim_time_from_s(from_s), "band %zu: from", i);
    cr_expect_eq(g->bands[i].to, sim_time_from_s(to_s), "band %zu: to", i);
}

static void expect_lane(const gantt *g, uint32_t i, gpu_id gpu, uint32_t first_row, uint32_t n_rows,
                        bool changed, size_t n_bands, size_t n_marks)
{
    const gantt_lane *l = &g->lanes[i];
    cr_expect_eq(l->gpu, gpu, "lane %u: GPU", i);
    cr_expect_eq(l->first_row, first_row, "lane %u: first row", i);
    cr_expect_eq(l->n_rows, n_rows, "lane %u: rows", i);
    cr_expect_eq(l->changed, changed, "lane %u: changed", i);
    cr_expect_eq(l->n_bands, n_bands, "lane %u: bands", i);
    cr_expect_eq(l->n_marks, n_marks, "lane %u: marks", i);
}

Test(gantt, a_re_partitioned_gpu_is_a_lane_of_its_devices_over_their_lifetimes)
{
    hand_run h;
    hand_run_init(&h);
    const cluster *c = world_cluster(h.w);
    dev_id g4 = h.on[0], g3 = h.on[1];
    cr_assert_lt(g3, g4, "premise: 3g.20gb candidates come before 4g.20gb");
    gantt g;
    gantt_build(c, &h.log, 48, &g);
    cr_assert_eq(g.n_lanes, 2);
    cr_assert_eq(g.n_rows, 8);
    expect_lane(&g, 0, 0, 0, 1, false, 0, 0);
    expect_lane(&g, 1, 1, 1, 7, true, 9, 1);
    cr_expect_eq(g.lanes[1].first_band, 0);
    cr_assert_eq(g.n_marks, 1);
    cr_expect_eq(g.lanes[1].first_mark, 0);
    cr_expect_eq(g.marks[0], sim_time_from_s(100));
    /* bands by row, then time */
    cr_assert_eq(g.n_bands, 9);
    expect_band(&g, 0, 1, instance(h.w, "1g.5gb", 0), 0, 100);
    expect_band(&g, 1, 1, g3, 100, 300);
    expect_band(&g, 2, 2, instance(h.w, "1g.5gb", 1), 0, 100);
    expect_band(&g, 3, 2, g4, 100, 300);
    for (int k = 2; k < 7; k++) {
        expect_band(&g, (size_t)k + 2, (uint32_t)k + 1, instance(h.w, "1g.5gb", k), 0, 100);
    }
    /* the rows the jobs' bars go on: through their devices */
    const job_table *jt = world_jobs(h.w);
    cr_expect_eq(g.dev_row[job_table_get(jt, 0)->units[0]], 1, "j0 on 1g.5gb@0");
    cr_expect_eq(g.dev_row[job_table_get(jt, 1)->units[0]], 0, "j1 on GPU 0");
    cr_expect_eq(job_table_get(jt, 2)->units[0], g3, "j2 ran on 3g.20gb@4");
    cr_expect_eq(g.dev_row[g3], 1);
    /* devices that never existed are on no row: GPU 1's whole-GPU device, 7g.40gb@0 */
    const cluster_gpu *g1 = cluster_gpu_get(c, 1);
    uint32_t drawn = 0;
    for (dev_id d = g1->first_dev; d < g1->first_dev + g1->n_devs; d++) {
        drawn += g.dev_row[d] != GANTT_NO_ROW;
    }
    cr_expect_eq(drawn, 9, "7 x 1g.5gb, 4g.20gb@0, 3g.20gb@4");
    gantt_fini(&g);
    hand_run_fini(&h);
}

/* A lane is never cut: with 7 rows, GPU 1's 7 rows do not fit after GPU 0's one. */
Test(gantt, the_row_cap_takes_whole_lanes)
{
    hand_run h;
    hand_run_init(&h);
    const cluster *c = world_cluster(h.w);
    gantt g;
    gantt_build(c, &h.log, 7, &g);
    cr_expect_eq(g.n_lanes, 1);
    cr_expect_eq(g.n_rows, 1);
    cr_expect_eq(g.n_bands, 0);
    cr_expect_eq(g.n_marks, 0);
    cr_expect_eq(g.dev_row[h.on[1]], GANTT_NO_ROW);
    gantt_fini(&g);
    gantt_build(c, &h.log, 8, &g);
    cr_expect_eq(g.n_lanes, 2);
    cr_expect_eq(g.n_rows, 8);
    gantt_fini(&g);
    hand_run_fini(&h);
}
