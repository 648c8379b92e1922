/* Unit tests for the EASY backfill policy (model/policy/backfill.c): hand-worked timelines on
 * whole GPUs at rate 1 (no rate function, so estimates are exact): a short job backfills before
 * the head's shadow time, a long one that would take a reserved GPU waits, a long one on a GPU
 * outside the reservation backfills, the head starts at its reservation (as under FIFO), and a
 * stream of arrivals does not move that reservation.
 * The GPU type is a made-up fixture (no catalog data).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "model/cluster/world.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/worldfx.h"

typedef struct env {
    gpu_type g;
    cluster_gpu_cfg gpus[4];
    fx_node fx;
} env;

static void add(job_table *t, double submit_s, uint32_t gpus, double work_s)
{
    fx_add(t, submit_s, "nvidia.com/gpu", gpus, 1, work_s);
}

/* One node with four whole GPUs under `policy`; runs the jobs. */
static world *run(env *e, const char *policy, job_table *t)
{
    memset(e, 0, sizeof *e);
    e->g = test_gpu();
    for (int i = 0; i < 4; i++) {
        e->gpus[i] = (cluster_gpu_cfg){.type = &e->g};
    }
    fx_node_init(&e->fx, "n", e->gpus, 4, policy, SIM_TIME_MAX);
    world *w = fx_world(&e->fx.wc, t);
    world_run(w);
    return w;
}

/* j0: 2 GPUs 0..100; j1: 1 GPU 0..300; j2 (4 GPUs, at 10 s) is the head: it fits once both have
 * ended, so its shadow time is 300 s and it reserves all four GPUs. j3 (1 GPU, 500 s, at 20 s)
 * would end at 520 > 300 on a reserved GPU: it waits. j4 (1 GPU, 200 s, at 30 s) ends at
 * 230 <= 300: it backfills at 30 s. Then j2 runs 300..350 and j3 from 350 s.
 * Under FIFO j2 also starts at 300 s and j4 only at 350 s. */
static job_table *jobs_short_and_long(void)
{
    job_table *t = job_table_create();
    add(t, 0, 2, 100);
    add(t, 0, 1, 300);
    add(t, 10, 4, 50);
    add(t, 20, 1, 500);
    add(t, 30, 1, 200);
    return t;
}

Test(backfill, a_short_job_backfills_and_the_head_keeps_its_reservation)
{
    env e;
    world *w = run(&e, "backfill", jobs_short_and_long());
    cr_assert_float_eq(fx_start_s(w, 4), 30.0, 1e-9);
    cr_assert_float_eq(fx_start_s(w, 2), 300.0, 1e-9);
    cr_assert_float_eq(fx_start_s(w, 3), 350.0, 1e-9);
    cr_assert_eq(world_get_totals(w).n_done, 5);
    world_destroy(w);
    world *f = run(&e, "fifo", jobs_short_and_long());
    cr_assert_float_eq(fx_start_s(f, 2), 300.0, 1e-9); /* the head: same start as FIFO's */
    cr_assert_float_eq(fx_start_s(f, 4), 350.0, 1e-9);
    world_destroy(f);
}

/* j0: 3 GPUs 0..100 (GPUs 0-2); j1 (2 GPUs, at 10 s) is the head: shadow time 100 s, and
 * first fit then reserves GPUs 0 and 1. j2 (1 GPU, 1000 s, at 20 s) fits now on GPU 3, which is
 * not reserved: it backfills at 20 s although it ends long after 100 s; j1 still starts at 100 s.
 */
Test(backfill, a_long_job_backfills_outside_the_reservation)
{
    env e;
    job_table *t = job_table_create();
    add(t, 0, 3, 100);
    add(t, 10, 2, 50);
    add(t, 20, 1, 1000);
    world *w = run(&e, "backfill", t);
    cr_assert_float_eq(fx_start_s(w, 2), 20.0, 1e-9);
    cr_assert_float_eq(fx_start_s(w, 1), 100.0, 1e-9);
    world_destroy(w);
}

/* The head's reservation holds against a stream of arrivals (strict EASY: arrivals never move
 * it). j0: 2 GPUs 0..100; j1 (4 GPUs, at 1 s) is the head: shadow time 100 s, all four GPUs
 * reserved. Then 40 one-GPU jobs arrive at 2, 4, ..., 80 s, job 1 + k (at 2k s) lasting
 * 99 - 2k + k % 3 s, so that started at once it would end at 99 + k % 3: 100, 101, 99, 100, ...
 * Two GPUs are free: job 2 (k 1, ends at 100 <= 100) backfills at 2 s, job 3 (k 2, would end
 * at 101 on a reserved GPU) waits, job 4 (k 3, ends at 99) backfills at 6 s; then no GPU is free
 * until 100 s, when j1 starts exactly at its shadow time (as under FIFO) and every other job
 * waits for its end at 150 s. */
Test(backfill, arrivals_never_delay_the_heads_reservation)
{
    env e;
    job_table *t = job_table_create();
    add(t, 0, 2, 100);
    add(t, 1, 4, 50);
    for (uint32_t k = 1; k <= 40; k++) {
        add(t, 2.0 * k, 1, 99 - 2.0 * k + k % 3);
    }
    world *w = run(&e, "backfill", t);
    cr_assert_float_eq(fx_start_s(w, 2), 2.0, 1e-9); /* ends by the shadow time: backfilled */
    cr_assert_float_eq(fx_end_s(w, 2), 100.0, 1e-9);
    cr_assert_float_eq(fx_start_s(w, 4), 6.0, 1e-9);
    cr_assert_float_eq(fx_start_s(w, 1), 100.0, 1e-9); /* the head at its shadow time */
    for (job_id j = 3; j < 42; j++) {
        if (j != 4) {
            cr_assert_geq(fx_start_s(w, j), 150.0, "job %u", (unsigned)j);
        }
    }
    cr_assert_eq(world_get_totals(w).n_done, 42);
    world_destroy(w);
}
