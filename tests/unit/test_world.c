/* Unit tests for model/world: jobs run their stated durations through the fluid solver, FIFO
 * order and waits, gang placement, the OOM path, refused
 * requests (failRequestsGreaterThanOne, MPS), rate changes from the rate function, and the
 * validation of a buggy policy's decisions. The GPU type is a made-up fixture (no catalog data).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/physics_load.h"
#include "model/cluster/jobrate.h"
#include "model/physics/predict.h"
#include "model/cluster/world.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/worldfx.h"
#include "tests/unit/diagfx.h"

static job_id add(job_table *t, double submit_s, const char *res, uint32_t per, uint32_t workers,
                  double work_s, uint64_t mem)
{
    job_spec s = {.class_name = "c",
                  .req = {res, per, workers},
                  .submit = sim_time_from_s(submit_s),
                  .work_s = work_s,
                  .mem_bytes = mem};
    return job_table_add(t, &s);
}

typedef struct env {
    gpu_type g;
    cluster_gpu_cfg gpus[4];
    fx_node fx;
} env;

/* One node with n whole GPUs (or, when mig, one GPU with n 1g.x instances). */
static void env_init(env *e, uint32_t n, bool mig)
{
    memset(e, 0, sizeof *e);
    e->g = test_gpu();
    if (mig) {
        e->gpus[0] = (cluster_gpu_cfg){.type = &e->g, .mig_enabled = true, .n_mig = n};
        for (uint32_t i = 0; i < n; i++) {
            e->gpus[0].mig[i] = &e->g.profiles[0];
            e->gpus[0].mig_start[i] = (int)i;
        }
    } else {
        for (uint32_t i = 0; i < n; i++) {
            e->gpus[i] = (cluster_gpu_cfg){.type = &e->g};
        }
    }
    fx_node_init(&e->fx, "n0", e->gpus, mig ? 1 : n, "fifo", SIM_TIME_MAX);
}

static world *run(env *e, job_table *t)
{
    world *w = fx_world(&e->fx.wc, t);
    world_run(w);
    return w;
}

Test(world, jobs_take_their_stated_duration_in_fifo_order)
{
    env e;
    env_init(&e, 2, false);
    job_table *t = job_table_create();
    add(t, 0, "nvidia.com/gpu", 1, 1, 100, 0);
    add(t, 10, "nvidia.com/gpu", 2, 1, 50, 0); /* waits for job 0 */
    add(t, 20, "nvidia.com/gpu", 1, 1, 5, 0);  /* fits at once, but FIFO holds it */
    world *w = run(&e, t);
    cr_assert_float_eq(fx_end_s(w, 0), 100.0, 1e-9);
    cr_assert_float_eq(fx_start_s(w, 1), 100.0, 1e-9);
    cr_assert_float_eq(fx_end_s(w, 1), 150.0, 1e-9);
    cr_assert_float_eq(fx_start_s(w, 2), 150.0, 1e-9);
    cr_assert_eq(job_wait_ns(job_table_get(world_jobs(w), 2)), sim_time_from_s(130));
    world_totals tot = world_get_totals(w);
    cr_assert_eq(tot.n_done, 3);
    cr_assert_eq(tot.n_rejected, 0);
    cr_assert_eq(tot.end, sim_time_from_s(155));
    /* samples: the state after each change; at 100 both GPUs are held by job 1 */
    bool seen = false;
    for (size_t i = 0; i < world_n_samples(w); i++) {
        const world_sample *s = world_sample_get(w, i);
        if (s->t == sim_time_from_s(100)) {
            cr_assert_eq(s->running, 1);
            cr_assert_eq(s->units_used, 2);
            cr_assert_eq(s->queued, 1);
            cr_assert_eq(s->sms_busy, 200);
            seen = true;
        }
    }
    cr_assert(seen);
    world_destroy(w);
}

Test(world, oom_fails_at_start_and_frees_the_units)
{
    env e;
    env_init(&e, 2, true); /* 2 MIG instances of 1000 bytes */
    job_table *t = job_table_create();
    add(t, 0, "nvidia.com/mig-1g.x", 1, 1, 10, 1500); /* does not fit: OOM */
    add(t, 0, "nvidia.com/mig-1g.x", 2, 1, 10, 900);
    world *w = run(&e, t);
    const job *j0 = job_table_get(world_jobs(w), 0);
    cr_assert_eq(j0->state, JOB_FAILED_OOM);
    cr_assert_eq(j0->start, 0);
    cr_assert_eq(j0->end, 0);
    cr_assert_eq(j0->n_units, 1);
    cr_assert_eq(job_table_get(world_jobs(w), 1)->state, JOB_DONE);
    cr_assert_float_eq(fx_end_s(w, 1), 10.0, 1e-9);
    cr_assert_eq(world_get_totals(w).n_oom, 1);
    world_destroy(w);
}

/* One time-sliced GPU with 4 replicas; fail_gt1 sets failRequestsGreaterThanOne. Jobs: 2 replicas
 * at 0, 1 replica at 0 and at 5. */
static world *run_two_replica_request(env *e, cluster_share_rule *rule, cluster_sharing mode,
                                      bool fail_gt1)
{
    env_init(e, 1, false);
    *rule = (cluster_share_rule){.resource = "nvidia.com/gpu", .replicas = 4};
    e->gpus[0].sharing = mode;
    e->gpus[0].fail_requests_greater_than_one = fail_gt1;
    e->gpus[0].n_rules = 1;
    e->gpus[0].rules = rule;
    job_table *t = job_table_create();
    add(t, 0, "nvidia.com/gpu", 2, 1, 10, 0);
    add(t, 0, "nvidia.com/gpu", 1, 1, 10, 0);
    add(t, 5, "nvidia.com/gpu", 1, 1, 10, 0);
    return run(e, t);
}

static void check_two_replica_request_fails(cluster_sharing mode, bool fail_gt1)
{
    env e;
    cluster_share_rule rule;
    world *w = run_two_replica_request(&e, &rule, mode, fail_gt1);
    const job *j0 = job_table_get(world_jobs(w), 0);
    cr_assert_eq(j0->state, JOB_FAILED_REQUEST);
    cr_assert_str_eq(job_state_name(j0->state), "failed_request");
    cr_assert_eq(j0->start, 0);
    cr_assert_eq(j0->end, 0);
    /* the jobs behind it run, alone on their replicas (no rate function: rate 1) */
    cr_assert_eq(job_table_get(world_jobs(w), 1)->state, JOB_DONE);
    cr_assert_eq(job_table_get(world_jobs(w), 2)->state, JOB_DONE);
    cr_assert_float_eq(fx_start_s(w, 1), 0.0, 1e-9);
    cr_assert_float_eq(fx_start_s(w, 2), 5.0, 1e-9);
    cr_assert_float_eq(fx_end_s(w, 2), 15.0, 1e-9);
    world_totals tot = world_get_totals(w);
    cr_assert_eq(tot.n_failed_request, 1);
    cr_assert_eq(tot.n_done, 2);
    cr_assert_eq(tot.n_oom, 0);
    cr_assert_eq(tot.n_rejected, 0);
    /* it never held units: at time 0 only job 1's replica is in use */
    const world_sample *s = world_sample_get(w, 0);
    cr_assert_eq(s->t, 0);
    cr_assert_eq(s->units_used, 1);
    world_destroy(w);
}

Test(world, request_for_two_replicas_fails_with_fail_requests_greater_than_one)
{
    check_two_replica_request_fails(CLUSTER_SHARE_TIMESLICE, true);
}

Test(world, mps_refuses_a_request_for_two_replicas_whatever_the_flag)
{
    check_two_replica_request_fails(CLUSTER_SHARE_MPS, false);
}

Test(world, request_for_two_replicas_runs_without_the_flag)
{
    env e;
    cluster_share_rule rule;
    world *w = run_two_replica_request(&e, &rule, CLUSTER_SHARE_TIMESLICE, false);
    cr_assert_eq(job_table_get(world_jobs(w), 0)->state, JOB_DONE);
    cr_assert_eq(job_table_get(world_jobs(w), 0)->n_units, 2);
    cr_assert_float_eq(fx_end_s(w, 0), 10.0, 1e-9);
    world_totals tot = world_get_totals(w);
    cr_assert_eq(tot.n_failed_request, 0);
    cr_assert_eq(tot.n_done, 3);
    cr_assert_eq(world_sample_get(w, 0)->units_used, 3);
    world_destroy(w);
}

/* A rate function: every running job on a GPU runs at 1/k when k jobs share it. */
static double share_rate(void *ctx, const world *w, job_id j)
{
    (void)ctx;
    const job *me = job_table_get(world_jobs(w), j);
    const cluster_device *d = cluster_device_get(world_cluster(w), me->units[0]);
    return 1.0 / d->used;
}

Test(world, a_rate_function_slows_co_runners_and_the_fluid_follows)
{
    env e;
    env_init(&e, 1, false);
    cluster_share_rule rule = {.resource = "nvidia.com/gpu", .replicas = 2};
    e.gpus[0].sharing = CLUSTER_SHARE_TIMESLICE;
    e.gpus[0].n_rules = 1;
    e.gpus[0].rules = &rule;
    e.fx.wc.rate = share_rate;
    job_table *t = job_table_create();
    add(t, 0, "nvidia.com/gpu", 1, 1, 100, 0);
    add(t, 50, "nvidia.com/gpu", 1, 1, 100, 0);
    world *w = run(&e, t);
    /* job 0: 50 s alone, then 50 s of work at 1/2 -> ends at 150; job 1 then has 50 left */
    cr_assert_float_eq(fx_end_s(w, 0), 150.0, 1e-6);
    cr_assert_float_eq(fx_end_s(w, 1), 200.0, 1e-6);
    world_destroy(w);
}

/* A buggy policy: places every job on device 0 twice and on a device that does not exist. */
static int bad_init(void *self, const param_set *p, diag *d)
{
    (void)self, (void)p, (void)d;
    return 0;
}
static void bad_arrival(void *self, const cluster_view *cv, job_id j, decision_buf *out)
{
    (void)self, (void)cv;
    dev_id twice[2] = {0, 0};
    dev_id missing[1] = {99};
    pol_place(out, j, twice, 2);
    pol_place(out, j, missing, 1);
    pol_place(out, j + 1000, missing, 1);
}
static void bad_finish(void *self, const cluster_view *cv, job_id j, decision_buf *out)
{
    (void)self, (void)cv, (void)j, (void)out;
}
static const policy_ops bad_ops = {.name = "bad",
                                   .summary = "test",
                                   .init = bad_init,
                                   .on_arrival = bad_arrival,
                                   .on_finish = bad_finish};

Test(world, invalid_decisions_are_refused_and_counted)
{
    env e;
    env_init(&e, 2, false);
    e.fx.wc.policy = &bad_ops;
    job_table *t = job_table_create();
    add(t, 0, "nvidia.com/gpu", 2, 1, 10, 0);
    world *w = run(&e, t);
    world_totals tot = world_get_totals(w);
    cr_assert_eq(tot.n_rejected, 3);
    cr_assert_eq(tot.n_queued, 1);
    cr_assert_eq(job_table_get(world_jobs(w), 0)->state, JOB_QUEUED);
    cr_assert_eq(cluster_units_used(world_cluster(w)), 0);
    world_destroy(w);
}

Test(world, a_bad_cluster_is_reported_through_diag)
{
    env e;
    env_init(&e, 1, false);
    e.fx.cc.n_nodes = 0;
    diag *d = diag_create();
    world *w = NULL;
    cr_assert_eq(world_create(&e.fx.wc, job_table_create(), d, (src_loc){"s.yaml", 3, 1}, &w),
                 SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(d, 0), "s.yaml:3:1: error: cluster: the cluster has no nodes");
    diag_destroy(d);
}

/* The physics rate function: time-sliced co-runners each get eta(k)/k (eta from physics.yaml). */
Test(world, time_sliced_co_runners_share_the_gpu_with_eta)
{
    phys_params m;
    diag *d = diag_create();
    cr_assert_eq(physics_load_default(d, &m), 0);
    diag_destroy(d);
    env e;
    env_init(&e, 1, false);
    cluster_share_rule rule = {.resource = "nvidia.com/gpu", .replicas = 4};
    e.gpus[0].sharing = CLUSTER_SHARE_TIMESLICE;
    e.gpus[0].n_rules = 1;
    e.gpus[0].rules = &rule;
    jobrate_ctx rc = {.phys = &m, .ts_class = 0};
    e.fx.wc.rate = jobrate_rate;
    e.fx.wc.rate_ctx = &rc;
    job_table *t = job_table_create();
    add(t, 0, "nvidia.com/gpu", 1, 1, 100, 0);
    add(t, 50, "nvidia.com/gpu", 1, 1, 100, 0);
    world *w = run(&e, t);
    double r2 = phys_eta(&m, 0, 2) / 2;
    cr_assert(r2 > 0 && r2 < 1);
    double t1 = 50 + 50 / r2; /* job 0: 50 s alone, 50 s of work at eta(2)/2 */
    cr_assert_float_eq(fx_end_s(w, 0), t1, 1e-6);
    cr_assert_float_eq(fx_end_s(w, 1), t1 + 50, 1e-6); /* job 1 did 50 s of work meanwhile */
    world_destroy(w);
}

/* Two jobs of a made-up profile (host time equal to the GPU time of an iteration on the
 * catalog's A100-SXM4-40GB) share one GPU under `sharing` with 4 replicas: job 0 runs 50 s
 * alone, job 1 joins at t = 50 s. Their end times must follow the rate model/physics/speed.h gives two
 * peers on that partition, divided into the time alone; that rate is returned. */
static double profiled_pair(cluster_sharing sharing, share_mode mode)
{
    phys_params m;
    gpu_catalog cat;
    arena *a = arena_create();
    diag *d = diag_create();
    cr_assert_eq(physics_load_default(d, &m), 0);
    cr_assert_eq(catalog_load_default(a, &cat, d), 0);
    diag_destroy(d);
    const gpu_type *a100 = gpu_catalog_find(&cat, "A100-SXM4-40GB");
    cr_assert_not_null(a100);
    wl_profile p;
    memset(&p, 0, sizeof p);
    p.name = "made-up";
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 1.0;
    partition_cfg pc;
    partition_cfg_init(&pc, a100);
    speed_result alone, two;
    predict_unit_time(&p, 1, &pc, &m, &alone);
    cr_assert_eq(alone.outcome, SPEED_OK);
    p.host_s_fixed = alone.iter_gpu_s; /* H = G */
    if (mode == SHARE_MPS) { /* an MPS replica alone: capped at 100 / replicas % of the SMs */
        pc.sharing = SHARE_MPS;
        pc.mps_percent = 100 / 4;
    }
    predict_unit_time(&p, 1, &pc, &m, &alone);
    pc.sharing = mode;
    pc.peers = 2;
    predict_unit_time(&p, 1, &pc, &m, &two);
    cr_assert_eq(two.outcome, SPEED_OK);
    double r2 = alone.unit_time_s / two.unit_time_s;

    env e;
    env_init(&e, 1, false);
    e.gpus[0].type = a100;
    cluster_share_rule rule = {.resource = "nvidia.com/gpu", .replicas = 4};
    e.gpus[0].sharing = sharing;
    e.gpus[0].n_rules = 1;
    e.gpus[0].rules = &rule;
    jobrate_profile jp = {.name = "made-up", .p = &p, .batch = 1};
    jobrate_ctx rc = {.phys = &m, .ts_class = 0, .n_profiles = 1, .profiles = &jp};
    e.fx.wc.rate = jobrate_rate;
    e.fx.wc.rate_ctx = &rc;
    job_table *t = job_table_create();
    job_spec s = {
        .class_name = "c", .req = {"nvidia.com/gpu", 1, 1}, .work_s = 100, .profile = "made-up"};
    job_table_add(t, &s);
    s.submit = sim_time_from_s(50);
    job_table_add(t, &s);
    world *w = run(&e, t);
    cr_assert_float_eq(fx_end_s(w, 0), 50 + 50 / r2, 1e-6);
    cr_assert_float_eq(fx_end_s(w, 1), 50 + 50 / r2 + 50, 1e-6);
    world_destroy(w);
    arena_destroy(a);
    return r2;
}

/* Time-slicing with a profile: host phases overlap the other job's GPU phases, so two
 * co-runners lose less than eta(2)/2 each. */
Test(world, a_profiled_time_sliced_job_gets_its_rate_from_the_speed_model)
{
    phys_params m;
    diag *d = diag_create();
    cr_assert_eq(physics_load_default(d, &m), 0);
    diag_destroy(d);
    double r2 = profiled_pair(CLUSTER_SHARE_TIMESLICE, SHARE_TIMESLICE);
    cr_assert_gt(r2, phys_eta(&m, 0, 2) / 2);
    cr_assert_lt(r2, 1.0);
}

/* MPS with a profile: each client is capped at 25 % of the SMs (4 replicas) on disjoint SMs,
 * and they share only bandwidth; this profile moves no memory, so a second client costs the
 * first nothing (the world still follows the speed model's answer). */
Test(world, a_profiled_mps_job_gets_its_rate_from_the_speed_model)
{
    double r2 = profiled_pair(CLUSTER_SHARE_MPS, SHARE_MPS);
    cr_assert_float_eq(r2, 1.0, 1e-9);
}

/* A GPU type whose catalog entry leaves sms_total unsourced (0): every catalog GPU has one since
 * issue 22, but the catalog format allows it, and the totals must then say so (run prints SM
 * utilisation as n/a) rather than count zero SMs. */
Test(world, a_gpu_without_an_sm_count_is_counted_not_summed)
{
    env e;
    env_init(&e, 2, false);
    e.g.sms_total = 0;
    job_table *t = job_table_create();
    add(t, 0, "nvidia.com/gpu", 1, 1, 10, 0);
    world *w = run(&e, t);
    world_totals tot = world_get_totals(w);
    cr_assert_eq(tot.n_done, 1);
    cr_assert_eq(tot.n_gpus_no_sms, 2);
    cr_assert_eq(tot.sms_total, 0);
    cr_assert_str_eq(tot.no_sms_type, e.g.name);
    world_destroy(w);
}
