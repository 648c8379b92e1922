/* Unit tests for model/reconf and the demand-driven re-partitioner: drain-and-reconfigure
 * timelines against hand-computed times (waiting for pods, evicting them, a MIG mode change with
 * its reset), the checks on a bad layout, and the policy choosing the layout that serves the
 * queue. One A100-SXM4-40GB from the catalog (its placements: 1g.5gb at 0..6, 3g.20gb at 0 and
 * 4, 7g.40gb at 0); jobs run at rate 1 (no rate function), so times are exact.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/fileio.h"
#include "model/cluster/reconf.h"
#include "model/cluster/world.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "tools/run.h"
#include "tests/unit/sh.h"
#include "tests/unit/worldfx.h"

typedef struct env {
    arena *a;
    gpu_catalog cat;
    const gpu_type *t;
    cluster_gpu_cfg gpu;
    fx_node fx;
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
    fx_node_init(&e->fx, "n", &e->gpu, 1, "fifo", sim_time_from_s(until_s));
}

/* A one-pod job asking for one unit of res. */
static void add(job_table *t, double submit_s, const char *res, double work_s)
{
    fx_add(t, submit_s, res, 1, 1, work_s);
}

/* The re-partitioner of rc on w (created without errors). */
static reconf *reconf_start(world *w, reconf_cfg rc)
{
    reconf *r = NULL;
    diag *d = diag_create();
    cr_assert_eq(reconf_create(w, &rc, d, &r), 0);
    diag_destroy(d);
    return r;
}

static void env_done(env *e, world *w, reconf *r)
{
    reconf_destroy(r);
    world_destroy(w);
    arena_destroy(e->a);
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

/* Ask for a's reconfiguration at at_s. */
static void ask_at(world *w, double at_s, ask *a)
{
    world_at(w, sim_time_from_s(at_s), world_timer_client(w, ask_now, a), 0);
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
    world *w = fx_world(&e.fx.wc, t);
    reconf *r = reconf_start(w, (reconf_cfg){.delay_s = 20, .reset_s = 30});
    ask a = {.n = 1};
    a.devs[0] = device(w, "7g.40gb", 0);
    ask_at(w, 50, &a);
    world_run(w);
    cr_assert_float_eq(fx_end_s(w, 0), 100.0, 1e-9);
    cr_assert_float_eq(fx_end_s(w, 1), 300.0, 1e-9);
    cr_assert_eq(job_table_get(world_jobs(w), 3)->state, JOB_QUEUED);
    cr_assert_float_eq(fx_start_s(w, 2), 320.0, 1e-9);
    cr_assert_float_eq(fx_end_s(w, 2), 370.0, 1e-9);
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
    env_done(&e, w, r);
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
    world *w = fx_world(&e.fx.wc, t);
    reconf *r = reconf_start(w, (reconf_cfg){.delay_s = 20, .reset_s = 30});
    ask a = {.n = 1, .evict = true};
    a.devs[0] = device(w, NULL, -1);
    ask_at(w, 50, &a);
    world_run(w);
    for (job_id j = 0; j < 2; j++) {
        cr_assert_eq(job_table_get(world_jobs(w), j)->state, JOB_QUEUED);
        cr_assert_eq(job_table_get(world_jobs(w), j)->n_restarts, 1);
    }
    cr_assert_float_eq(fx_start_s(w, 2), 100.0, 1e-9);
    cr_assert_float_eq(fx_end_s(w, 2), 140.0, 1e-9);
    reconf_stats st = reconf_get_stats(r);
    cr_assert_eq(st.n_evicted, 2);
    cr_assert_float_eq(st.evicted_gpu_s, 2 * 50.0 / 7, 1e-9);
    cr_assert_eq(st.n_mode_changes, 1);
    cr_assert_float_eq(st.drain_gpu_s, 0.0, 1e-12);
    cr_assert_float_eq(st.apply_gpu_s, 50.0, 1e-9);
    cr_assert_not(cluster_gpu_get(world_cluster(w), 0)->mig_enabled);
    env_done(&e, w, r);
}

/* 3g.20gb@0 and 3g.20gb@4 with 1g.5gb@4 overlap on memory slice 4: refused, nothing drained. */
Test(reconf, an_invalid_layout_is_refused)
{
    env e;
    env_init(&e, 100);
    job_table *t = job_table_create();
    add(t, 10, "nvidia.com/mig-1g.5gb", 10);
    world *w = fx_world(&e.fx.wc, t);
    reconf *r = reconf_start(w, (reconf_cfg){.delay_s = 20, .reset_s = 30});
    ask a = {.n = 3};
    a.devs[0] = device(w, "3g.20gb", 0);
    a.devs[1] = device(w, "3g.20gb", 4);
    a.devs[2] = device(w, "1g.5gb", 4);
    ask_at(w, 5, &a);
    world_run(w);
    cr_assert_eq(reconf_get_stats(r).n_rejected, 1);
    cr_assert_eq(world_get_totals(w).n_rejected, 1);
    cr_assert_float_eq(fx_start_s(w, 0), 10.0, 1e-9); /* the GPU was never cordoned */
    env_done(&e, w, r);
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
    world *w = fx_world(&e.fx.wc, t);
    reconf *r = reconf_start(
        w, (reconf_cfg){
               .delay_s = 20, .reset_s = 30, .interval_s = 60, .policy = repart_find("demand")});
    world_run(w);
    cr_assert_float_eq(fx_start_s(w, 0), 80.0, 1e-9);
    cr_assert_float_eq(fx_start_s(w, 1), 80.0, 1e-9);
    cr_assert_float_eq(fx_end_s(w, 1), 180.0, 1e-9);
    const cluster *c = world_cluster(w);
    cr_assert(cluster_device_get(c, device(w, "3g.20gb", 0))->active);
    cr_assert(cluster_device_get(c, device(w, "3g.20gb", 4))->active);
    cr_assert_eq(reconf_get_stats(r).n_applied, 1); /* hysteresis: no change once served */
    env_done(&e, w, r);
}

/* ---- time-slicing as one of the GPU's choices ------------------------------------------------ */

/* The same A100, MIG off (a whole GPU), with a time-sliced candidate of 4 replicas. */
static void env_init_whole(env *e, double until_s)
{
    env_init(e, until_s);
    e->gpu.mig_enabled = false;
    e->gpu.n_mig = 0;
    e->gpu.ts_replicas = 4;
}

/* The time-sliced candidate: the whole-GPU device advertising nvidia.com/gpu.shared. */
static dev_id ts_device(const world *w)
{
    const cluster *c = world_cluster(w);
    for (dev_id d = 0; d < cluster_n_devices(c); d++) {
        const cluster_device *cd = cluster_device_get(c, d);
        if (!cd->profile && cd->sharing == CLUSTER_SHARE_TIMESLICE) {
            return d;
        }
    }
    cr_assert_fail("no time-sliced device");
    return 0;
}

/* Whole -> time-sliced -> whole, restart 10 s (delay 20 s and reset 30 s play no part: MIG stays
 * off), waiting for pods each time:
 *   j0 (gpu, 0..100); asked at 50 to go time-sliced: idle at 100, 4 x gpu.shared from 110;
 *   j1, j2 (gpu.shared, submitted 60, 40 s of work each, rate 1) run 110..150 side by side;
 *   j3 (gpu, submitted 70, 30 s) waits: no whole GPU while time-sliced;
 *   asked at 120 to go whole again: the replicas drain until 150, the whole GPU is back at 160,
 *   j3 runs 160..190; j4 (gpu.shared, submitted 130) finds no replica after 120: never placed.
 * Drain (100 - 50) + (150 - 120) = 80 s, apply 2 x 10 s, no MIG mode change. */
static ask ts_ask[2];

static void ask_second(world *w, void *ctx, uint64_t tag)
{
    (void)ctx;
    ask_now(w, &ts_ask[tag], 0);
}

Test(reconf, a_gpu_turns_time_sliced_and_back_after_the_plugin_restart)
{
    env e;
    env_init_whole(&e, 1000);
    job_table *t = job_table_create();
    add(t, 0, "nvidia.com/gpu", 100);
    add(t, 60, "nvidia.com/gpu.shared", 40);
    add(t, 60, "nvidia.com/gpu.shared", 40);
    add(t, 70, "nvidia.com/gpu", 30);
    add(t, 130, "nvidia.com/gpu.shared", 5);
    world *w = fx_world(&e.fx.wc, t);
    const cluster *c = world_cluster(w);
    cr_assert_eq(cluster_device_get(c, ts_device(w))->slots, 4);
    cr_assert_not(cluster_device_get(c, ts_device(w))->active);
    cr_assert_eq(cluster_units_total(c), 1);
    reconf *r = reconf_start(w, (reconf_cfg){.delay_s = 20, .reset_s = 30, .restart_s = 10});
    ts_ask[0] = (ask){.n = 1, .devs = {ts_device(w)}};
    ts_ask[1] = (ask){.n = 1, .devs = {device(w, NULL, -1)}};
    uint32_t client = world_timer_client(w, ask_second, NULL);
    world_at(w, sim_time_from_s(50), client, 0);
    world_at(w, sim_time_from_s(120), client, 1);
    world_run(w);
    cr_assert_float_eq(fx_end_s(w, 0), 100.0, 1e-9);
    cr_assert_float_eq(fx_start_s(w, 1), 110.0, 1e-9);
    cr_assert_float_eq(fx_start_s(w, 2), 110.0, 1e-9);
    cr_assert_float_eq(fx_end_s(w, 2), 150.0, 1e-9);
    cr_assert_float_eq(fx_start_s(w, 3), 160.0, 1e-9);
    cr_assert_float_eq(fx_end_s(w, 3), 190.0, 1e-9);
    cr_assert_eq(job_table_get(world_jobs(w), 4)->state, JOB_QUEUED);
    reconf_stats st = reconf_get_stats(r);
    cr_assert_eq(st.n_applied, 2);
    cr_assert_eq(st.n_mode_changes, 0);
    cr_assert_eq(st.n_timeslice_on, 1);
    cr_assert_eq(st.n_timeslice_off, 1);
    cr_assert_float_eq(st.drain_gpu_s, 80.0, 1e-9);
    cr_assert_float_eq(st.apply_gpu_s, 20.0, 1e-9);
    cr_assert(cluster_device_get(c, device(w, NULL, -1))->active);
    cr_assert_not(cluster_device_get(c, ts_device(w))->active);
    cr_assert_eq(cluster_gpu_get(c, 0)->sharing, CLUSTER_SHARE_NONE);
    cr_assert_eq(cluster_units_total(c), 1);
    env_done(&e, w, r);
}

/* From MIG (7 x 1g.5gb) to time-slicing is a MIG mode change: delay + reset = 50 s, not the
 * plugin restart. j0 (1g, 0..100) drains the GPU from 50 to 100; the replicas exist from 150;
 * j1 (gpu.shared, submitted 10, 10 s) runs 150..160 on a GPU that is now time-sliced. */
Test(reconf, mig_to_time_slicing_is_a_mode_change)
{
    env e;
    env_init(&e, 1000);
    e.gpu.ts_replicas = 4;
    job_table *t = job_table_create();
    add(t, 0, "nvidia.com/mig-1g.5gb", 100);
    add(t, 10, "nvidia.com/gpu.shared", 10);
    world *w = fx_world(&e.fx.wc, t);
    reconf *r = reconf_start(w, (reconf_cfg){.delay_s = 20, .reset_s = 30, .restart_s = 10});
    ask a = {.n = 1, .devs = {ts_device(w)}};
    ask_at(w, 50, &a);
    world_run(w);
    cr_assert_float_eq(fx_start_s(w, 1), 150.0, 1e-9);
    cr_assert_float_eq(fx_end_s(w, 1), 160.0, 1e-9);
    reconf_stats st = reconf_get_stats(r);
    cr_assert_eq(st.n_mode_changes, 1);
    cr_assert_eq(st.n_timeslice_on, 1);
    cr_assert_float_eq(st.apply_gpu_s, 50.0, 1e-9);
    const cluster_gpu *cg = cluster_gpu_get(world_cluster(w), 0);
    cr_assert_not(cg->mig_enabled);
    cr_assert_eq(cg->sharing, CLUSTER_SHARE_TIMESLICE);
    env_done(&e, w, r);
}

/* The demand policy (every 60 s, hold 600 s, min_gain 1) on the whole GPU with 4 replicas:
 *   4 x gpu.shared wait from 10 s (100 s each). At 60: the demand left to the GPU is 4 replicas;
 *   time-sliced serves 4 x 7/4 = 7 compute slices, the whole GPU and every MIG layout 0: switched,
 *   idle, replicas from 60 + 10 = 70; the four run 70..170 (rate 1).
 *   A whole-GPU job (submitted 100, 50 s) is served by the whole GPU (7 slices) but, while the
 *   replicas run, keeping them serves 7 too: no gain. From 180 the replicas are idle (gain 7) but
 *   the GPU was re-laid out at 60: hold until 60 + 600 = 660, whole from 670, the job runs
 *   670..720. */
Test(reconf, the_demand_policy_time_slices_for_replica_requests_then_goes_back)
{
    env e;
    env_init_whole(&e, 2000);
    job_table *t = job_table_create();
    for (int i = 0; i < 4; i++) {
        add(t, 10, "nvidia.com/gpu.shared", 100);
    }
    add(t, 100, "nvidia.com/gpu", 50);
    world *w = fx_world(&e.fx.wc, t);
    reconf *r = reconf_start(w, (reconf_cfg){.delay_s = 20,
                                             .reset_s = 30,
                                             .restart_s = 10,
                                             .interval_s = 60,
                                             .policy = repart_find("demand")});
    world_run(w);
    for (job_id j = 0; j < 4; j++) {
        cr_assert_float_eq(fx_start_s(w, j), 70.0, 1e-9);
        cr_assert_float_eq(fx_end_s(w, j), 170.0, 1e-9);
    }
    cr_assert_float_eq(fx_start_s(w, 4), 670.0, 1e-9);
    cr_assert_float_eq(fx_end_s(w, 4), 720.0, 1e-9);
    reconf_stats st = reconf_get_stats(r);
    cr_assert_eq(st.n_applied, 2);
    cr_assert_eq(st.n_timeslice_on, 1);
    cr_assert_eq(st.n_timeslice_off, 1);
    cr_assert_eq(st.n_mode_changes, 0);
    cr_assert_float_eq(st.drain_gpu_s, 0.0, 1e-12);
    cr_assert_float_eq(st.apply_gpu_s, 20.0, 1e-9);
    env_done(&e, w, r);
}

/* A scenario without `repartition.delay` gets model/physics/physics.yaml's mig_apply_s, 0.282 s (the
 * measured create + destroy of an A100's GPU instances): tests/reports/repart-default-delay.yaml
 * asks at 300 s for a layout on an idle GPU, so its 3g.20gb job starts at 300.282 s. */
Test(reconf, the_delay_defaults_to_the_measured_apply_time)
{
    char dir[64];
    cr_assert(test_tmpdir(dir, sizeof dir, "delay"));
    FILE *devnull = fopen("/dev/null", "w");
    run_opts o = {.scenario = "tests/reports/repart-default-delay.yaml",
                  .out_dir = dir,
                  .summary = devnull,
                  .errors = stderr};
    cr_assert_eq(run_scenario(&o), 0);
    fclose(devnull);
    char path[128], *csv = NULL;
    size_t len;
    snprintf(path, sizeof path, "%s/jobs.csv", dir);
    cr_assert_eq(fileio_read_all(path, FILEIO_MAX_BYTES, &csv, &len), 0);
    cr_expect_not_null(strstr(csv, ",1.000000000,300.282000000,"), "%s", csv);
    free(csv);
    cr_assert(test_rm_rf(dir));
}

/* ---- MISO (model/policy/repart_miso.c) ---------------------------------------------------------
 * Jobs asking for any MIG slice with made-up normalised speeds per compute-slice count (1g, 2g,
 * 3g, 4g, 7g), the same for the policy's prediction (the view's slice speed) and for the run
 * (the rate function: rate = v on the job's instance, as jobrate gives any-slice jobs). */

static const double speed_a[8] = {0, 0.20, 0.35, 0.55, 0.60, 0, 0, 1.0};
static const double speed_b[8] = {0, 0.30, 0.50, 0.70, 0.80, 0, 0, 1.0};

static double table_speed(void *ctx, const job_spec *js, const gpu_type *g, const mig_profile *p)
{
    (void)ctx;
    (void)g;
    return (js->class_name[0] == 'A' ? speed_a : speed_b)[p->compute_slices];
}

static double table_rate(void *ctx, const world *w, job_id j)
{
    const job *jb = job_table_get(world_jobs(w), j);
    const cluster_device *d = cluster_device_get(world_cluster(w), jb->units[0]);
    return table_speed(ctx, &jb->spec, NULL, d->profile);
}

static void add_any(job_table *t, const char *cls, double submit_s, double work_s)
{
    job_spec s = {.class_name = cls,
                  .req = {JOB_RES_MIG_ANY, 1, 1},
                  .submit = sim_time_from_s(submit_s),
                  .work_s = work_s};
    job_table_add(t, &s);
}

/* A MISO run on the env's idle 7 x 1g.5gb A100 (delay 20 s, interval 60 s) with the policy
 * parameters min_gain (compute slices), hold_s and evict. */
static reconf *miso_run(env *e, world **w, job_table *t, const char *min_gain, const char *hold_s,
                        const char *evict)
{
    e->fx.wc.slice_speed = table_speed;
    e->fx.wc.rate = table_rate;
    *w = fx_world(&e->fx.wc, t);
    pol_param items[] = {{"min_gain", min_gain, {"x", 1, 1}, {"x", 1, 11}},
                         {"hold_s", hold_s, {"x", 1, 1}, {"x", 1, 9}},
                         {"evict", evict, {"x", 1, 1}, {"x", 1, 8}}};
    param_set ps = {.n = 3, .items = items, .path = "repartition"};
    reconf_cfg rc = {.delay_s = 20,
                     .reset_s = 30,
                     .interval_s = 60,
                     .policy = repart_find("miso"),
                     .params = &ps};
    reconf *r = reconf_start(*w, rc);
    world_run(*w);
    return r;
}

/* Two jobs, A and B, arrive at 10 s on the idle GPU. By hand, over the pairs of instances the 19
 * maximal layouts of `slicesim layouts A100-SXM4-40GB` hold (7g.40gb holds one job only):
 *   4g+3g (layout 2): A4 + B3 = 0.60 + 0.70 = 1.30, A3 + B4 = 0.55 + 0.80 = 1.35
 *   3g+3g: 1.25; 4g+2g: 0.60 + 0.50 = 1.10, 0.35 + 0.80 = 1.15; 4g+1g: 0.90, 1.10;
 *   3g+2g: 1.05, 1.05; 3g+1g: 0.85, 0.90; 2g+2g: 0.85; 2g+1g: 0.65, 0.70; 1g+1g: 0.50.
 * The best is 4g.20gb@0 + 3g.20gb@4 with B on 4g and A on 3g (1.35), against 0.50 on the
 * current 7 x 1g: a gain of 0.85 >= 1/7 (min_gain 1 compute slice). Asked at 10 s on an idle
 * GPU, applied at 10 + 20 = 30 s; A (55 s of work on 7g) runs at 0.55: 100 s, B (80 s) at 0.80:
 * 100 s; both 30..130. No other layout is ever applied (nothing to gain when idle). */
Test(reconf, miso_picks_the_layout_a_hand_enumeration_says_maximises_throughput)
{
    env e;
    env_init(&e, 1000);
    job_table *t = job_table_create();
    add_any(t, "A", 10, 55);
    add_any(t, "B", 10, 80);
    world *w = NULL;
    reconf *r = miso_run(&e, &w, t, "1", "600", "0");
    const job *a = job_table_get(world_jobs(w), 0), *b = job_table_get(world_jobs(w), 1);
    cr_assert_eq(a->state, JOB_DONE);
    cr_assert_eq(b->state, JOB_DONE);
    cr_assert_eq(a->units[0], device(w, "3g.20gb", 4));
    cr_assert_eq(b->units[0], device(w, "4g.20gb", 0));
    cr_assert_float_eq(fx_start_s(w, 0), 30.0, 1e-9);
    cr_assert_float_eq(fx_start_s(w, 1), 30.0, 1e-9);
    cr_assert_float_eq(fx_end_s(w, 0), 130.0, 1e-9);
    cr_assert_float_eq(fx_end_s(w, 1), 130.0, 1e-9);
    reconf_stats st = reconf_get_stats(r);
    cr_assert_eq(st.n_applied, 1);
    cr_assert_float_eq(st.drain_gpu_s, 0.0, 1e-12);
    cr_assert_float_eq(st.apply_gpu_s, 20.0, 1e-9);
    cr_assert_eq(world_get_totals(w).n_rejected, 0);
    env_done(&e, w, r);
}

/* A leaves first (27.5 s of work at 0.55: 30..80 s). B alone would gain 1.0 - 0.80 = 0.20 on
 * 7g.40gb. With evict, hold 0 and min_gain 1 (0.20 >= 1/7) MISO migrates it at 80 s: B is
 * evicted (no checkpoints: its 50 s on a 4/7 share of the GPU are lost, 50 x 4/7 GPU-s), 7g
 * is in place at 100 s, and B runs its 80 s of work again at 1.0: 100..180. */
Test(reconf, miso_migrates_a_job_when_the_gain_pays_and_counts_the_cost)
{
    env e;
    env_init(&e, 1000);
    job_table *t = job_table_create();
    add_any(t, "A", 10, 27.5);
    add_any(t, "B", 10, 80);
    world *w = NULL;
    reconf *r = miso_run(&e, &w, t, "1", "0", "1");
    cr_assert_float_eq(fx_end_s(w, 0), 80.0, 1e-9);
    cr_assert_eq(job_table_get(world_jobs(w), 1)->n_restarts, 1);
    cr_assert_eq(job_table_get(world_jobs(w), 1)->units[0], device(w, "7g.40gb", 0));
    cr_assert_float_eq(fx_end_s(w, 1), 180.0, 1e-9);
    reconf_stats st = reconf_get_stats(r);
    cr_assert_eq(st.n_applied, 2);
    cr_assert_eq(st.n_evicted, 1);
    cr_assert_float_eq(st.evicted_gpu_s, 50.0 * 4 / 7, 1e-9);
    cr_assert_float_eq(st.apply_gpu_s, 40.0, 1e-9);
    env_done(&e, w, r);
}

/* The same run with hysteresis: min_gain 2 compute slices (0.20 < 2/7) keeps B on 4g.20gb, and
 * so does a hold of 600 s with min_gain 1 (the GPU was re-laid out at 10 s): B ends at 130 s,
 * one layout applied, nothing evicted. */
Test(reconf, miso_hysteresis_keeps_the_layout)
{
    const char *gain[2] = {"2", "1"}, *hold[2] = {"0", "600"};
    for (int k = 0; k < 2; k++) {
        env e;
        env_init(&e, 1000);
        job_table *t = job_table_create();
        add_any(t, "A", 10, 27.5);
        add_any(t, "B", 10, 80);
        world *w = NULL;
        reconf *r = miso_run(&e, &w, t, gain[k], hold[k], "1");
        cr_assert_float_eq(fx_end_s(w, 1), 130.0, 1e-9);
        cr_assert_eq(reconf_get_stats(r).n_applied, 1);
        cr_assert_eq(reconf_get_stats(r).n_evicted, 0);
        env_done(&e, w, r);
    }
}

/* No thrashing and determinism: 30 jobs of both kinds arriving every 7 s; hold 120 s, so MISO
 * applies at most one layout per 120 s after the first, up to the last job's end (a GPU without
 * jobs is never re-laid out); two runs give the same starts, ends and instances. */
Test(reconf, miso_does_not_thrash_and_is_deterministic)
{
    sim_time start[2][30], end[2][30];
    dev_id dev[2][30];
    uint64_t applied[2];
    for (int run = 0; run < 2; run++) {
        env e;
        env_init(&e, 5000);
        job_table *t = job_table_create();
        for (int i = 0; i < 30; i++) {
            add_any(t, i % 3 ? "A" : "B", 7.0 * i, 20 + 13 * (i % 5));
        }
        world *w = NULL;
        reconf *r = miso_run(&e, &w, t, "1", "120", "1");
        for (job_id j = 0; j < 30; j++) {
            const job *jb = job_table_get(world_jobs(w), j);
            cr_assert_eq(jb->state, JOB_DONE);
            start[run][j] = jb->start;
            end[run][j] = jb->end;
            dev[run][j] = jb->units[0];
        }
        applied[run] = reconf_get_stats(r).n_applied;
        sim_time last = 0; /* a GPU without jobs is never re-laid out: all changes by then */
        for (job_id j = 0; j < 30; j++) {
            last = end[run][j] > last ? end[run][j] : last;
        }
        cr_assert_geq(applied[run], 2); /* it did re-partition as the mix changed */
        cr_assert_leq((double)applied[run], 1 + sim_time_to_s(last) / 120);
        env_done(&e, w, r);
    }
    cr_assert_eq(applied[0], applied[1]);
    cr_assert_arr_eq(start[0], start[1], sizeof start[0]);
    cr_assert_arr_eq(end[0], end[1], sizeof end[0]);
    cr_assert_arr_eq(dev[0], dev[1], sizeof dev[0]);
}
