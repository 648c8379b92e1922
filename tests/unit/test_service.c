/* Unit tests for model/service: one replica with a deterministic service time and Poisson
 * arrivals against the M/D/1 closed form, a hand-worked batching timeline, a replica killed
 * mid-batch, and the diurnal process's mean rate. The GPU is a made-up fixture; the replica is a
 * pod like any job (placed by FIFO at t = 0).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/cluster/fault.h"
#include "model/cluster/service.h"
#include "model/cluster/world.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/worldfx.h"

typedef struct env {
    gpu_type g;
    cluster_gpu_cfg gpu;
    fx_node fx;
} env;

/* One node "n" with one whole GPU; job 0 is the replica (runs past the horizon). */
static world *make(env *e, double horizon_s)
{
    memset(e, 0, sizeof *e);
    e->g = test_gpu();
    e->gpu = (cluster_gpu_cfg){.type = &e->g};
    fx_node_init(&e->fx, "n", &e->gpu, 1, "fifo", sim_time_from_s(horizon_s));
    e->fx.wc.verify_every = 0;
    job_table *t = job_table_create();
    job_spec rs = {.class_name = "svc", .req = {"nvidia.com/gpu", 1, 1}, .work_s = 1e12};
    job_table_add(t, &rs);
    return fx_world(&e->fx.wc, t);
}

/* Service time D(b) = base + per_req * b seconds. */
typedef struct lin_time {
    double base, per_req;
} lin_time;

static double linear(void *ctx, const world *w, job_id r, uint32_t b)
{
    (void)w;
    (void)r;
    const lin_time *lt = ctx;
    return lt->base + lt->per_req * b;
}

/* A service "s" of one replica with service time lt, arrivals of kind a up to end_s; the
 * arrival parameters are the caller's to set. */
static service_spec spec(service_arrival a, double end_s, uint32_t max_batch, double slo_s,
                         lin_time *lt)
{
    return (service_spec){.name = "s",
                          .n_replicas = 1,
                          .arrival = a,
                          .end = sim_time_from_s(end_s),
                          .max_batch = max_batch,
                          .slo_s = slo_s,
                          .batch_time = linear,
                          .batch_ctx = lt};
}

/* Start sp on w with the master seed `seed`. */
static service *start(world *w, const service_spec *sp, uint64_t seed)
{
    rng_root root = rng_root_make(seed);
    return service_create(w, sp, &root);
}

/* M/D/1 (Pollaczek-Khinchine with zero service-time variance): mean wait in queue
 * Wq = rho D / (2 (1 - rho)); mean latency D + Wq. lambda = 0.5/s, D = 1 s: rho = 0.5,
 * Wq = 0.5 s, latency 1.5 s. Over 4e5 s (about 2e5 requests) seeds 1-6 and 11 gave errors from
 * -0.71 % to +0.37 %; the bound is 0.02 s (1.3 %). The utilisation (GPU-seconds are the
 * replica's whole life, so check it through n_done * D) is rho. */
Test(service, one_replica_matches_the_md1_closed_form)
{
    env e;
    const double horizon = 4e5, lambda = 0.5, D = 1.0;
    world *w = make(&e, horizon);
    lin_time lt = {D, 0};
    service_spec sp = spec(SERVICE_POISSON, horizon, 1, 2.0, &lt);
    sp.rate_per_s = lambda;
    service *s = start(w, &sp, 1);
    world_run(w);
    service_stats st = service_get_stats(s);
    double rho = lambda * D, want = D + rho * D / (2 * (1 - rho));
    fprintf(stderr, "service-md1 requests=%llu mean_latency=%.4f closed_form=%.4f error=%+.2f%%\n",
            (unsigned long long)st.n_done, st.mean_s, want, 100 * (st.mean_s - want) / want);
    cr_assert_float_eq(st.mean_s, want, 0.02, "mean latency %.4f, M/D/1 %.4f", st.mean_s, want);
    cr_assert_float_eq((double)st.n_done * D / horizon, rho, 0.01);
    cr_assert_float_eq((double)st.n_arrived / horizon, lambda, 0.01);
    cr_assert(st.p50_s >= D && st.p99_s > st.p95_s && st.max_s >= st.p99_s);
    cr_assert_float_eq(st.gpu_s, horizon, 1e-6); /* one whole GPU for the whole run */
    service_destroy(s);
    world_destroy(w);
}

/* Five requests at t = 0, batches of at most 2, D(b) = 1 + b: batches {2} 0..3, {2} 3..6,
 * {1} 6..8. Latencies 3, 3, 6, 6, 8: mean 5.2, max 8; SLO 5 s met by 2 of 5. */
Test(service, dynamic_batching_timeline_by_hand)
{
    env e;
    world *w = make(&e, 100);
    static const double arrivals[] = {0, 0, 0, 0, 0};
    lin_time lt = {1, 1};
    service_spec sp = spec(SERVICE_TRACE, 100, 2, 5.0, &lt);
    sp.trace_s = arrivals;
    sp.n_trace = 5;
    service *s = start(w, &sp, 1);
    world_run(w);
    service_stats st = service_get_stats(s);
    cr_assert_eq(st.n_arrived, 5);
    cr_assert_eq(st.n_done, 5);
    cr_assert_eq(st.n_batches, 3);
    cr_assert_float_eq(st.mean_s, 5.2, 1e-9);
    cr_assert_float_eq(st.max_s, 8.0, 1e-9);
    cr_assert_eq(st.n_met, 2);
    cr_assert_float_eq(st.attainment, 0.4, 1e-12);
    cr_assert_float_eq(st.mean_batch, 5.0 / 3, 1e-12);
    cr_assert_float_eq(st.p50_s, 6.0, 6.0 * 0.0012); /* third of five: 6 s, to a bin */
    service_destroy(s);
    world_destroy(w);
}

/* One request at 0 with D = 10 s; the GPU's device fails at 5 s (no repair time): the replica
 * restarts at once and serves the request again from 5 s: latency 15 s, one request put back. */
Test(service, a_killed_replica_puts_its_batch_back)
{
    env e;
    world *w = make(&e, 100);
    static const double arrivals[] = {0};
    lin_time lt = {10, 0};
    service_spec sp = spec(SERVICE_TRACE, 100, 4, 1.0, &lt);
    sp.trace_s = arrivals;
    sp.n_trace = 1;
    service *s = start(w, &sp, 1);
    fault_event ev = {.at = sim_time_from_s(5), .kind = FAULT_INSTANCE, .target = 0};
    fault_injector *fi = fault_injector_create(w, &ev, 1);
    world_run(w);
    service_stats st = service_get_stats(s);
    cr_assert_eq(st.n_done, 1);
    cr_assert_eq(st.n_requeued, 1);
    cr_assert_float_eq(st.mean_s, 15.0, 1e-9);
    cr_assert_eq(st.n_met, 0);
    cr_assert_float_eq(st.gpu_s, 100.0, 1e-6); /* 0..5 and 5..100 on one GPU */
    fault_injector_destroy(fi);
    service_destroy(s);
    world_destroy(w);
}

/* The diurnal process's rate averages to its mean over whole periods: 2/s over 20 periods of
 * 1000 s is 40000 expected (Poisson sd 200; 4 sd = 800). */
Test(service, the_diurnal_process_keeps_its_mean)
{
    env e;
    world *w = make(&e, 20000);
    lin_time lt = {1e-6, 0};
    service_spec sp = spec(SERVICE_DIURNAL, 20000, 64, 1.0, &lt);
    sp.rate_per_s = 2;
    sp.amplitude = 0.8;
    sp.period_s = 1000;
    sp.peak_s = 500;
    service *s = start(w, &sp, 5);
    world_run(w);
    service_stats st = service_get_stats(s);
    cr_assert(fabs((double)st.n_arrived - 40000) < 800, "%llu arrivals",
              (unsigned long long)st.n_arrived);
    service_destroy(s);
    world_destroy(w);
}

/* Queue rule, target 2 queued requests per replica, 1..3 replicas, every 10 s, stabilization
 * 30 s (a scale-down goes to the highest recommendation of the window); replica pods: job 0
 * submitted at 0, jobs 1 and 2 spares. Six requests at 0, D = 100 s, batches of 1, four whole GPUs:
 *   0 s: replica 0 takes request 1; five wait.
 *   10 s: desired ceil(5 / 2) = 3: spares 1 and 2 start at once and take requests 2 and 3.
 *   20 s: three wait: desired 2 < 3, a window opens (highest recommendation 2); 100 s: replica 0
 *   takes request 4 (desired 1); 110 s: replicas 1 and 2 take 5 and 6 (queue empty).
 *   From 50 s the window has lasted 30 s, but every replica is busy until 200 s, when replica 0
 *   (request 4 done) ends: 2 replicas, the window's highest recommendation.
 *   210 s: desired 1 < 2 opens a new window; 240 s: replica 2 (newest idle) ends.
 * Latencies 100, 110, 110, 200, 210, 210: mean 940 / 6, three within 150 s. Running replicas over
 * [0, 300]: replica 0 0..200, 1 10..300, 2 10..240: 720 GPU-seconds, mean 2.4, at most 3. */
Test(service, queue_autoscaling_timeline_by_hand)
{
    env e;
    memset(&e, 0, sizeof e);
    e.g = test_gpu();
    cluster_gpu_cfg gpus[4];
    for (int i = 0; i < 4; i++) {
        gpus[i] = (cluster_gpu_cfg){.type = &e.g};
    }
    fx_node_init(&e.fx, "n", gpus, 4, "fifo", sim_time_from_s(300));
    job_table *t = job_table_create();
    job_spec rs = {.class_name = "svc", .req = {"nvidia.com/gpu", 1, 1}, .work_s = 1e12};
    job_table_add(t, &rs);
    rs.submit = sim_time_from_s(1e6); /* spares: never submitted by the clock */
    job_table_add(t, &rs);
    job_table_add(t, &rs);
    world *w = fx_world(&e.fx.wc, t);
    static const double arrivals[] = {0, 0, 0, 0, 0, 0};
    lin_time lt = {100, 0};
    service_spec sp = spec(SERVICE_TRACE, 300, 1, 150, &lt);
    sp.n_replicas = 3;
    sp.n_start = 1;
    sp.autoscale = (service_autoscale){SERVICE_SCALE_QUEUE, 2, 1, 3, 10, 30};
    sp.trace_s = arrivals;
    sp.n_trace = 6;
    service *s = start(w, &sp, 1);
    world_run(w);
    service_stats st = service_get_stats(s);
    cr_assert_eq(st.n_done, 6);
    cr_assert_float_eq(st.mean_s, 940.0 / 6, 1e-9);
    cr_assert_eq(st.n_met, 3);
    cr_assert_eq(st.n_scale_up, 2);
    cr_assert_eq(st.n_scale_down, 2);
    cr_assert_eq(st.max_running, 3);
    cr_assert_float_eq(st.gpu_s, 720.0, 1e-6);
    cr_assert_float_eq(st.mean_running, 2.4, 1e-9);
    const job_table *jt = world_jobs(w);
    cr_assert_eq(job_table_get(jt, 0)->state, JOB_DONE);
    cr_assert_float_eq(sim_time_to_s(job_table_get(jt, 0)->end), 200.0, 1e-9);
    cr_assert_eq(job_table_get(jt, 1)->state, JOB_RUNNING);
    cr_assert_float_eq(sim_time_to_s(job_table_get(jt, 2)->end), 240.0, 1e-9);
    cr_assert_float_eq(sim_time_to_s(job_table_get(jt, 1)->start), 10.0, 1e-9);
    service_destroy(s);
    world_destroy(w);
}

/* Steps arrivals, evenly spaced (need 1 each): levels 1 from 0, 2 from 4, 1 from 8, 0 from 10,
 * 1 from 12 at 1/s per unit of level. L(t) = t to 4, then slope 2 to 8 (L = 12), slope 1 to 10
 * (L = 14), flat to 12, slope 1 after: L = k at 1, 2, 3, 4, 4.5, ..., 8, 9, 10, 13, 14. An
 * arrival where L reaches k at a step's edge is at the edge (4; 10, not 12, before the flat). */
Test(service, steps_arrivals_by_hand)
{
    const double st[] = {0, 4, 8, 10, 12}, lv[] = {1, 2, 1, 0, 1};
    const double want[] = {1, 2, 3, 4, 4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8, 9, 10, 13, 14};
    size_t k = 0;
    double t = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        t = service_steps_next(st, lv, 5, 1.0, t, 1.0, &k);
        cr_assert_float_eq(t, want[i], 1e-12, "arrival %zu at %g, by hand %g", i, t, want[i]);
    }
    /* twice the rate halves the need: 2 units at 0.5 s per unit of L */
    k = 0;
    cr_assert_float_eq(service_steps_next(st, lv, 5, 2.0, 0, 1.0, &k), 0.5, 1e-12);
    /* a level that ends at 0: no arrival after the last instance leaves */
    const double lz[] = {1, 0};
    k = 0;
    cr_assert(isinf(service_steps_next(st, lz, 2, 1.0, 3.5, 1.0, &k)));
}

/* Poisson steps: the count over a window has mean integral of the rate. Level 3 on [0, 1000),
 * 1 on [1000, 3000) at 0.5/s per unit: expected 0.5 (3000 + 2000) = 2500 arrivals, sd 50. */
Test(service, steps_poisson_mean_count)
{
    env e;
    const double horizon = 3000;
    world *w = make(&e, horizon);
    lin_time lt = {1e-3, 0};
    const double st[] = {0, 1000}, lv[] = {3, 1};
    service_spec sp = spec(SERVICE_STEPS, horizon, 1, 1.0, &lt);
    sp.rate_per_s = 0.5;
    sp.step_t = st;
    sp.step_level = lv;
    sp.n_steps = 2;
    service *s = start(w, &sp, 4);
    world_run(w);
    service_stats sts = service_get_stats(s);
    /* 4 standard deviations */
    cr_assert(fabs((double)sts.n_arrived - 2500) < 200, "%llu arrivals, expected 2500",
              (unsigned long long)sts.n_arrived);
    service_destroy(s);
    world_destroy(w);
}
