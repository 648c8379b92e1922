/* Unit tests for model/reconf and the demand-driven re-partitioner: drain-and-reconfigure
 * timelines against hand-computed times (waiting for pods, evicting them, a MIG mode change with
 * its reset), the checks on a bad layout, and the policy choosing the layout that serves the
 * queue. One A100-SXM4-40GB from the catalog (its placements: 1g.5gb at 0..6, 3g.20gb at 0 and
 * 4, 7g.40gb at 0); jobs run at rate 1 (no rate function), so times are exact.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "model/reconf.h"
#include "model/world.h"
#include "sim/arena.h"
#include "sim/diag.h"

typedef struct env {
    arena *a;
    gpu_catalog cat;
    const gpu_type *t;
    cluster_gpu_cfg gpu;
    cluster_node_cfg node;
    cluster_cfg cc;
    world_cfg wc;
} env;

static const mig_profile *profile(const gpu_type *t, const char *name)
{
    for (int p = 0; p < t->n_profiles; p++) {
        if (!strcmp(t->profiles[p].name, name)) {
            return &t->profiles[p];
        }
    }
    cr_assert_fail("no profile %s", name);
    return NULL;
}

/* One node "n" with one reconfigurable A100 laid out as 7 x 1g.5gb. */
static void env_init(env *e, double until_s)
{
    memset(e, 0, sizeof *e);
    e->a = arena_create();
    diag *d = diag_create();
    cr_assert_eq(catalog_load_default(e->a, &e->cat, d), 0);
    diag_destroy(d);
    e->t = gpu_catalog_find(&e->cat, "A100-SXM4-40GB");
    cr_assert(e->t);
    e->gpu =
        (cluster_gpu_cfg){.type = e->t, .mig_enabled = true, .n_mig = 7, .reconfigurable = true};
    for (int i = 0; i < 7; i++) {
        e->gpu.mig[i] = profile(e->t, "1g.5gb");
        e->gpu.mig_start[i] = i;
    }
    e->node = (cluster_node_cfg){.name = "n", .n_gpus = 1, .gpus = &e->gpu};
    e->cc = (cluster_cfg){.n_nodes = 1, .nodes = &e->node};
    e->wc = (world_cfg){.cluster = &e->cc,
                        .policy = pol_find("fifo"),
                        .until = sim_time_from_s(until_s),
                        .verify_every = 1};
}

static void add(job_table *t, double submit_s, const char *res, double work_s)
{
    job_spec s = {.class_name = "c",
                  .req = {res, 1, 1},
                  .submit = sim_time_from_s(submit_s),
                  .work_s = work_s};
    job_table_add(t, &s);
}

static world *make(env *e, job_table *t)
{
    diag *d = diag_create();
    world *w = NULL;
    cr_assert_eq(world_create(&e->wc, t, d, (src_loc){"x", 1, 1}, &w), 0);
    diag_destroy(d);
    return w;
}

/* The device of GPU 0 with this profile (NULL: the whole GPU) at this start. */
static dev_id device(const world *w, const char *prof, int start)
{
    const cluster *c = world_cluster(w);
    for (dev_id d = 0; d < cluster_n_devices(c); d++) {
        const cluster_device *cd = cluster_device_get(c, d);
        if (prof ? cd->profile && !strcmp(cd->profile->name, prof) && cd->mig_start == start
                 : !cd->profile) {
            return d;
        }
    }
    cr_assert_fail("no device %s@%d", prof ? prof : "whole", start);
    return 0;
}

/* A test "policy" that asks for one reconfiguration at a given time. */
typedef struct ask {
    dev_id devs[8];
    uint32_t n;
    bool evict;
} ask;

static void ask_now(world *w, void *ctx, uint64_t tag)
{
    (void)tag;
    ask *a = ctx;
    pol_reconfigure(world_decisions(w), 0, a->devs, a->n, a->evict);
    world_settle(w);
}

static double t_start(const world *w, job_id j)
{
    return sim_time_to_s(job_table_get(world_jobs(w), j)->start);
}

static double t_end(const world *w, job_id j)
{
    return sim_time_to_s(job_table_get(world_jobs(w), j)->end);
}

/* 7 x 1g.5gb -> 1 x 7g.40gb asked at 50 s, delay 20 s, waiting for the pods:
 *   j0 (1g, 0..100) and j1 (1g, 0..300) keep running; the GPU is idle at 300 s and the 7g
 *   instance exists from 320 s, so j2 (7g, submitted at 70 s, 50 s of work) runs 320..370; j3
 *   (1g, submitted at 80 s) finds free 1g instances before 300 s but the GPU takes no pod from
 *   50 s, and after 320 s there is no 1g instance: it is never placed. Drain 250 s, apply 20 s,
 *   no mode change. */
Test(reconf, drain_then_apply_after_the_delay)
{
    env e;
    env_init(&e, 1000);
    job_table *t = job_table_create();
    add(t, 0, "nvidia.com/mig-1g.5gb", 100);
    add(t, 0, "nvidia.com/mig-1g.5gb", 300);
    add(t, 70, "nvidia.com/mig-7g.40gb", 50);
    add(t, 80, "nvidia.com/mig-1g.5gb", 10);
    world *w = make(&e, t);
    reconf *r = NULL;
    reconf_cfg rc = {.delay_s = 20, .reset_s = 30};
    cr_assert_eq(reconf_create(w, &rc, NULL, &r), 0);
    ask a = {.n = 1};
    a.devs[0] = device(w, "7g.40gb", 0);
    world_at(w, sim_time_from_s(50), world_timer_client(w, ask_now, &a), 0);
    world_run(w);
    cr_assert_float_eq(t_end(w, 0), 100.0, 1e-9);
    cr_assert_float_eq(t_end(w, 1), 300.0, 1e-9);
    cr_assert_eq(job_table_get(world_jobs(w), 3)->state, JOB_QUEUED);
    cr_assert_float_eq(t_start(w, 2), 320.0, 1e-9);
    cr_assert_float_eq(t_end(w, 2), 370.0, 1e-9);
    reconf_stats st = reconf_get_stats(r);
    cr_assert_eq(st.n_requested, 1);
    cr_assert_eq(st.n_applied, 1);
    cr_assert_eq(st.n_mode_changes, 0);
    cr_assert_float_eq(st.drain_gpu_s, 250.0, 1e-9);
    cr_assert_float_eq(st.apply_gpu_s, 20.0, 1e-9);
    const cluster *c = world_cluster(w);
    cr_assert(cluster_device_get(c, device(w, "7g.40gb", 0))->active);
    cr_assert_not(cluster_device_get(c, device(w, "1g.5gb", 3))->active);
    cr_assert_eq(cluster_units_total(c), 1);
    reconf_destroy(r);
    world_destroy(w);
    arena_destroy(e.a);
}

/* Evicting, and switching MIG off (a GPU reset): asked at 50 s, j0 and j1 are killed at once
 * (queued again behind j2, 50 s of work lost each on 1/7 of the GPU); the whole GPU exists from
 * 50 + 20 + 30 = 100 s, when j2 (nvidia.com/gpu, waiting since 40 s, 40 s of work) starts:
 * 100..140. j0 and j1 (1g.5gb) find no instance any more. */
Test(reconf, evict_and_mode_change_add_the_reset)
{
    env e;
    env_init(&e, 1000);
    job_table *t = job_table_create();
    add(t, 0, "nvidia.com/mig-1g.5gb", 100);
    add(t, 0, "nvidia.com/mig-1g.5gb", 300);
    add(t, 40, "nvidia.com/gpu", 40);
    world *w = make(&e, t);
    reconf *r = NULL;
    reconf_cfg rc = {.delay_s = 20, .reset_s = 30};
    cr_assert_eq(reconf_create(w, &rc, NULL, &r), 0);
    ask a = {.n = 1, .evict = true};
    a.devs[0] = device(w, NULL, -1);
    world_at(w, sim_time_from_s(50), world_timer_client(w, ask_now, &a), 0);
    world_run(w);
    for (job_id j = 0; j < 2; j++) {
        cr_assert_eq(job_table_get(world_jobs(w), j)->state, JOB_QUEUED);
        cr_assert_eq(job_table_get(world_jobs(w), j)->n_restarts, 1);
    }
    cr_assert_float_eq(t_start(w, 2), 100.0, 1e-9);
    cr_assert_float_eq(t_end(w, 2), 140.0, 1e-9);
    reconf_stats st = reconf_get_stats(r);
    cr_assert_eq(st.n_evicted, 2);
    cr_assert_float_eq(st.evicted_gpu_s, 2 * 50.0 / 7, 1e-9);
    cr_assert_eq(st.n_mode_changes, 1);
    cr_assert_float_eq(st.drain_gpu_s, 0.0, 1e-12);
    cr_assert_float_eq(st.apply_gpu_s, 50.0, 1e-9);
    cr_assert_not(cluster_gpu_get(world_cluster(w), 0)->mig_enabled);
    reconf_destroy(r);
    world_destroy(w);
    arena_destroy(e.a);
}

/* 3g.20gb@0 and 3g.20gb@4 with 1g.5gb@4 overlap on memory slice 4: refused, nothing drained. */
Test(reconf, an_invalid_layout_is_refused)
{
    env e;
    env_init(&e, 100);
    job_table *t = job_table_create();
    add(t, 10, "nvidia.com/mig-1g.5gb", 10);
    world *w = make(&e, t);
    reconf *r = NULL;
    reconf_cfg rc = {.delay_s = 20, .reset_s = 30};
    cr_assert_eq(reconf_create(w, &rc, NULL, &r), 0);
    ask a = {.n = 3};
    a.devs[0] = device(w, "3g.20gb", 0);
    a.devs[1] = device(w, "3g.20gb", 4);
    a.devs[2] = device(w, "1g.5gb", 4);
    world_at(w, sim_time_from_s(5), world_timer_client(w, ask_now, &a), 0);
    world_run(w);
    cr_assert_eq(reconf_get_stats(r).n_rejected, 1);
    cr_assert_eq(world_get_totals(w).n_rejected, 1);
    cr_assert_float_eq(t_start(w, 0), 10.0, 1e-9); /* the GPU was never cordoned */
    reconf_destroy(r);
    world_destroy(w);
    arena_destroy(e.a);
}

/* The demand policy every 60 s: two 3g.20gb jobs wait on an idle 7 x 1g.5gb GPU. The remaining
 * demand is 2 x 3g; the only maximal layout serving both is 3g.20gb@0 + 3g.20gb@4 (6 compute
 * slices, against 0 for the current layout). Asked at 60 s, idle, applied at 60 + 20 = 80 s:
 * both jobs run 80..180. */
Test(reconf, the_demand_policy_lays_out_what_the_queue_asks_for)
{
    env e;
    env_init(&e, 1000);
    job_table *t = job_table_create();
    add(t, 10, "nvidia.com/mig-3g.20gb", 100);
    add(t, 10, "nvidia.com/mig-3g.20gb", 100);
    world *w = make(&e, t);
    reconf *r = NULL;
    diag *d = diag_create();
    reconf_cfg rc = {
        .delay_s = 20, .reset_s = 30, .interval_s = 60, .policy = repart_find("demand")};
    cr_assert_eq(reconf_create(w, &rc, d, &r), 0);
    diag_destroy(d);
    world_run(w);
    cr_assert_float_eq(t_start(w, 0), 80.0, 1e-9);
    cr_assert_float_eq(t_start(w, 1), 80.0, 1e-9);
    cr_assert_float_eq(t_end(w, 1), 180.0, 1e-9);
    const cluster *c = world_cluster(w);
    cr_assert(cluster_device_get(c, device(w, "3g.20gb", 0))->active);
    cr_assert(cluster_device_get(c, device(w, "3g.20gb", 4))->active);
    cr_assert_eq(reconf_get_stats(r).n_applied, 1); /* hysteresis: no change once served */
    reconf_destroy(r);
    world_destroy(w);
    arena_destroy(e.a);
}
