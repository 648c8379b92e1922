/* The rows of report.html's Gantt chart (tools/gantt.h) on a hand-built run with one layout
 * change. Node "n": GPU 0 a whole A100-SXM4-40GB (MIG off, a fixed layout); GPU 1 a
 * reconfigurable A100-SXM4-40GB laid out as 7 x 1g.5gb. At 100 s a timer kills the job on
 * 1g.5gb@1, withdraws 1g.5gb@0..5 and makes 4g.20gb@0 and 2g.10gb@4 exist (slices 0-3 and 4-5;
 * 1g.5gb@6 stays); the run ends at 300 s. Jobs run at rate 1 (no rate function), no
 * checkpoints, FIFO, first fit:
 *   j0 (1g.5gb, at 0 s, 50 s of work)    on 1g.5gb@0, 0..50
 *   j1 (whole GPU, at 0 s, 200 s)        on GPU 0, 0..200
 *   j2 (1g.5gb, at 0 s, 300 s)           on 1g.5gb@1 from 0 s, killed at 100 s, queued again,
 *                                        restarts from zero on 1g.5gb@6 at 100 s and is still
 *                                        running at 300 s
 *   j3 (2g.10gb, at 10 s, 60 s)          waits for its instance: on 2g.10gb@4, 100..160
 * Hand-derived chart: GPU 0 is one row (row 0). GPU 1 changed at 100 s and had at most seven
 * devices at once, so its lane is rows 1..7: the 1g.5gb instances, first seen at 0 s, take rows
 * 1..7 in placement order (their intervals all overlap [0, 100)); then, first seen at 100 s, in
 * device id order (the candidates follow the catalog's profile order, 2g.10gb before 4g.20gb)
 * 2g.10gb@4 takes the lowest row free from 100 s on, row 1 (1g.5gb@0's [0, 100) ends when it
 * begins), and 4g.20gb@0 the next one, row 2. Nine bands, one mark at 100 s. Bars: j1 on row 0,
 * j0 on row 1, j2's killed run on row 2 over [0, 100), j2's last run on row 7, j3 on row 1.
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
    dev_id on[2]; /* the devices that exist from 100 s: 4g.20gb@0, 2g.10gb@4 */
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

/* The timer at 100 s: j2 killed, the new layout, then the scheduler's turn. */
static void relayout(world *w, void *ctx, uint64_t tag)
{
    (void)tag;
    hand_run *h = ctx;
    world_kill(w, 2, NULL);
    for (int k = 0; k < 6; k++) {
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
    fx_add(jt, 0, "nvidia.com/mig-1g.5gb", 1, 1, 300);
    fx_add(jt, 10, "nvidia.com/mig-2g.10gb", 1, 1, 60);
    h->w = fx_world(&h->fx.wc, jt);
    h->on[0] = instance(h->w, "4g.20gb", 0);
    h->on[1] = instance(h->w, "2g.10gb", 4);
    world_at(h->w, sim_time_from_s(100), world_timer_client(h->w, relayout, h), 0);
    world_run(h->w);
    cr_assert_float_eq(fx_end_s(h->w, 0), 50.0, 1e-9);
    cr_assert_float_eq(fx_end_s(h->w, 1), 200.0, 1e-9);
    cr_assert_float_eq(fx_start_s(h->w, 3), 100.0, 1e-9);
    cr_assert_float_eq(fx_end_s(h->w, 3), 160.0, 1e-9);
    const job *j2 = job_table_get(world_jobs(h->w), 2);
    cr_assert_eq(j2->state, JOB_RUNNING);
    cr_assert_eq(j2->n_restarts, 1);
    cr_assert_eq(j2->run_start, sim_time_from_s(100));
    cr_assert_eq(j2->units[0], instance(h->w, "1g.5gb", 6));
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

/* The devlog's spans (one per unit of a run, sorted by GPU, start, device, job; 1g.5gb@6 comes
 * before 2g.10gb@4 in id order) against the list in the header, and each span on GPU 1 inside an
 * existence band of its device. */
static void expect_spans(const hand_run *h, const gantt *g)
{
    const sim_time never = SIM_TIME_MAX;
    const struct {
        job_id job;
        dev_id dev;
        sim_time from, to;
    } want[] = {
        {1, 0, 0, sim_time_from_s(200)},
        {0, instance(h->w, "1g.5gb", 0), 0, sim_time_from_s(50)},
        {2, instance(h->w, "1g.5gb", 1), 0, sim_time_from_s(100)},
        {2, instance(h->w, "1g.5gb", 6), sim_time_from_s(100), never},
        {3, h->on[1], sim_time_from_s(100), sim_time_from_s(160)},
    };
    const uint32_t rows[] = {0, 1, 2, 7, 1};
    cr_assert_eq(h->log.n, 5);
    for (size_t i = 0; i < 5; i++) {
        const devlog_span *sp = &h->log.spans[i];
        cr_expect_eq(sp->job, want[i].job, "span %zu: job", i);
        cr_expect_eq(sp->dev, want[i].dev, "span %zu: device", i);
        cr_expect_eq(sp->start, want[i].from, "span %zu: start", i);
        cr_expect_eq(sp->end, want[i].to, "span %zu: end", i);
        cr_expect_eq(g->dev_row[sp->dev], rows[i], "span %zu: row", i);
        bool inside = i == 0; /* GPU 0 has no bands */
        for (size_t k = 0; k < g->n_bands && !inside; k++) {
            const gantt_band *b = &g->bands[k];
            sim_time end = sp->end < h->log.end ? sp->end : h->log.end;
            inside = b->dev == sp->dev && b->from <= sp->start && end <= b->to;
        }
        cr_expect(inside, "span %zu outside its device's lifetime", i);
    }
}

Test(gantt, a_re_partitioned_gpu_is_a_lane_of_its_devices_over_their_lifetimes)
{
    hand_run h;
    hand_run_init(&h);
    const cluster *c = world_cluster(h.w);
    dev_id g4 = h.on[0], g2 = h.on[1];
    cr_assert_lt(g2, g4, "premise: 2g.10gb candidates come before 4g.20gb");
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
    expect_band(&g, 1, 1, g2, 100, 300);
    expect_band(&g, 2, 2, instance(h.w, "1g.5gb", 1), 0, 100);
    expect_band(&g, 3, 2, g4, 100, 300);
    for (int k = 2; k < 6; k++) {
        expect_band(&g, (size_t)k + 2, (uint32_t)k + 1, instance(h.w, "1g.5gb", k), 0, 100);
    }
    expect_band(&g, 8, 7, instance(h.w, "1g.5gb", 6), 0, 300);
    expect_spans(&h, &g);
    /* devices that never existed are on no row: GPU 1's whole-GPU device, 3g.20gb, 7g.40gb, ... */
    const cluster_gpu *g1 = cluster_gpu_get(c, 1);
    uint32_t drawn = 0;
    for (dev_id d = g1->first_dev; d < g1->first_dev + g1->n_devs; d++) {
        drawn += g.dev_row[d] != GANTT_NO_ROW;
    }
    cr_expect_eq(drawn, 9, "7 x 1g.5gb, 4g.20gb@0, 2g.10gb@4");
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
