/* Unit tests for model/physics/share_ts.h and model/physics/share_mps.h: exact time-slicing solutions against
 * each other and against a birth-death chain, the per-iteration round-robin simulation against
 * the fluid mode, MPS. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/physics/predict.h"
#include "model/physics/share.h"
#include "model/physics/share_mps.h"
#include "model/physics/share_ts.h"
#include "sim/err.h"
#include "tests/unit/oracle_share_rr.h"
#include "tests/unit/phys_fixture.h"

/* Machine-repairman birth-death chain: state n = jobs at the GPU; up rate (k-n)/H, down rate
 * eta(n)/G. Independent check of the MVA. Returns the throughput of one job. */
static double birth_death(int k, double h, double g, const double *eta)
{
    double p[SHARE_MAX_JOBS + 1];
    p[0] = 1;
    double z = 1;
    for (int n = 1; n <= k; n++) {
        double down = (n == 1 ? 1.0 : eta[n]) / g;
        p[n] = p[n - 1] * ((k - n + 1) / h) / down;
        z += p[n];
    }
    double x = 0;
    for (int n = 1; n <= k; n++) {
        x += p[n] / z * (n == 1 ? 1.0 : eta[n]) / g;
    }
    return x / k;
}

static void eta_table(double *eta, double e)
{
    for (int n = 0; n <= SHARE_MAX_JOBS; n++) {
        eta[n] = n < 2 ? 1.0 : e;
    }
}

Test(share, mva_matches_birth_death_and_product_form)
{
    double eta[SHARE_MAX_JOBS + 1];
    eta_table(eta, 0.725);
    const double ratios[] = {0.05, 0.3, 1, 3};
    for (int k = 1; k <= 8; k++) {
        for (size_t i = 0; i < sizeof ratios / sizeof ratios[0]; i++) {
            double h = ratios[i], g = 1.0;
            double x_mva = share_ts_mva(k, h, g, eta, NULL);
            double x_bd = birth_death(k, h, g, eta);
            share_ts_class cls = {k, h, g, 0.0, false, 0.0};
            double x_pf;
            cr_assert_eq(share_ts_solve(1, &cls, eta, &x_pf, NULL), 0);
            cr_assert_float_eq(x_mva, x_bd, 1e-10 * x_bd, "k=%d h=%g", k, h);
            cr_assert_float_eq(x_pf, x_bd, 1e-10 * x_bd, "k=%d h=%g", k, h);
        }
    }
}

Test(share, saturated_gpu_gives_eta_over_k)
{
    double eta[SHARE_MAX_JOBS + 1];
    eta_table(eta, 0.725);
    /* no host phase: the GPU always has k contexts */
    for (int k = 2; k <= 8; k++) {
        cr_assert_float_eq(share_ts_mva(k, 0, 2.0, eta, NULL), 0.725 / (2.0 * k), 1e-12);
    }
    cr_assert_float_eq(share_ts_mva(1, 0.5, 2.0, eta, NULL), 1 / 2.5, 1e-12);
}

Test(share, mixed_classes_split_by_product_form)
{
    double eta[SHARE_MAX_JOBS + 1];
    eta_table(eta, 1.0);
    /* two GPU-only jobs with different G under ideal PS: each completes eta/(n) of capacity */
    share_ts_class cls[2] = {{1, 0, 1.0, 0.0, false, 0.0}, {1, 0, 3.0, 0.0, false, 0.0}};
    double x[2];
    cr_assert_eq(share_ts_solve(2, cls, eta, x, NULL), 0);
    cr_assert_float_eq(x[0], 0.5 / 1.0, 1e-12);
    cr_assert_float_eq(x[1], 0.5 / 3.0, 1e-12);
}

/* The agreement test of DESIGN.md §2: the per-iteration round-robin simulation against the fluid
 * (MVA) mode, over H/G in {0.02, 0.1, 0.3, 1, 3} and k = 1..8, with η = 0.725 and random phases
 * (CV 1). Prints every figure; each must agree within 2 %. */
Test(share, round_robin_simulation_agrees_with_mva, .timeout = 120)
{
    double eta[SHARE_MAX_JOBS + 1];
    eta_table(eta, 0.725);
    const double ratios[] = {0.02, 0.1, 0.3, 1, 3};
    double worst = 0;
    for (int k = 1; k <= 8; k++) {
        for (size_t i = 0; i < sizeof ratios / sizeof ratios[0]; i++) {
            double g = 1.0, h = ratios[i] * g;
            share_rr_cfg c = {.k = k, .host_s = h, .gpu_s = g, .eta = eta, .quantum_s = 0.1,
                              .phase_cv = 1.0, .n_iters = 100000, .seed = 1234u + (unsigned)k};
            double x_sim, busy;
            cr_assert_eq(share_rr_simulate(&c, &x_sim, &busy), 0);
            double x_mva = share_ts_mva(k, h, g, eta, NULL);
            double err = fabs(x_sim / x_mva - 1);
            worst = fmax(worst, err);
            printf("share-agreement k=%d H/G=%g mva=%.5f rr=%.5f diff=%.2f%%\n", k, ratios[i],
                   x_mva, x_sim, 100 * (x_sim / x_mva - 1));
            cr_expect_lt(err, 0.02, "k=%d H/G=%g: mva %g rr %g", k, ratios[i], x_mva, x_sim);
        }
    }
    printf("share-agreement worst=%.2f%%\n", 100 * worst);
}

Test(share, rr_rejects_bad_config)
{
    double eta[SHARE_MAX_JOBS + 1];
    eta_table(eta, 0.9);
    share_rr_cfg c = {.k = 0, .host_s = 1, .gpu_s = 1, .eta = eta, .quantum_s = 0.1,
                      .n_iters = 100};
    double x;
    cr_assert_eq(share_rr_simulate(&c, &x, NULL), SIM_EINPUT);
}

/* With deterministic phases (CV 0) the processes fall into lock-step, which the product-form
 * (mean-value) solution does not describe. k = 2, H = G = 1 s, η = 1, both starting together:
 * MVA gives 0.4 iterations/s per job (p0 = 1/5). A quantum shorter than G keeps the two in step
 * (both at the GPU, then both at the host): 1/3 per job, 16.7 % below MVA. A quantum of G or more
 * serves them one after the other and they interleave perfectly: 0.5 per job, 25 % above. The
 * test pins these figures so docs/physics.md's statement stays true. */
Test(share, deterministic_phases_lock_step)
{
    double eta[SHARE_MAX_JOBS + 1];
    eta_table(eta, 1.0);
    share_rr_cfg c = {.k = 2, .host_s = 1, .gpu_s = 1, .eta = eta, .quantum_s = 0.1,
                      .phase_cv = 0, .n_iters = 2000, .seed = 7};
    double x_sim;
    cr_assert_float_eq(share_ts_mva(2, 1, 1, eta, NULL), 0.4, 1e-12);
    cr_assert_eq(share_rr_simulate(&c, &x_sim, NULL), 0);
    cr_assert_float_eq(x_sim, 1.0 / 3.0, 0.01);
    c.quantum_s = 1.0;
    cr_assert_eq(share_rr_simulate(&c, &x_sim, NULL), 0);
    cr_assert_float_eq(x_sim, 0.5, 0.01);
}

/* MPS: clients that fit side by side (P small) do not slow each other; memory-bound clients
 * share the bandwidth and do. */
Test(share, mps_compute_clients_fit_side_by_side)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile p = {.name = "small", .max_sms_fixed = 20};
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 20.0; /* 1 s on its 20 SMs */
    f.c.sharing = SHARE_MPS;
    f.c.peers = 5; /* 5 x 20 SMs = the whole GPU */
    speed_result r;
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    cr_assert_eq(r.outcome, SPEED_OK);
    cr_assert_float_eq(r.unit_time_s, 1.0, 1e-9);
    f.c.peers = 10; /* 200 SMs wanted of 100: each gets half */
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    cr_assert_float_eq(r.unit_time_s, 2.0, 1e-6);
}

Test(share, mps_memory_bound_clients_split_bandwidth)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile p = {.name = "stream", .max_sms_fixed = 10, .mem_traffic_bytes_fixed = 1e12};
    speed_result solo, four;
    predict_unit_time(&p, 1, &f.c, &f.m, &solo);
    cr_assert_float_eq(solo.unit_time_s, 1.0, 1e-9); /* 1 TB at 1 TB/s */
    f.c.sharing = SHARE_MPS;
    f.c.peers = 4;
    predict_unit_time(&p, 1, &f.c, &f.m, &four);
    cr_assert_float_eq(four.unit_time_s, 4.0, 1e-6);
    f.m.mps_bw_contention = 0.1; /* a further 10 % per co-runner */
    predict_unit_time(&p, 1, &f.c, &f.m, &four);
    cr_assert_float_eq(four.unit_time_s, 4.0 * 1.3, 1e-6);
}

Test(share, mps_thread_percentage_caps_sms)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile p = {.name = "wide"};
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 100.0;
    f.c.sharing = SHARE_MPS;
    f.c.peers = 2;
    f.c.mps_percent = 25; /* 25 SMs each: both fit */
    speed_result r;
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    cr_assert_float_eq(r.unit_time_s, 4.0, 1e-9);
    cr_assert_float_eq(r.sms_used, 25, 1e-9);
}

/* Co-location of different workloads under time-slicing: a host-heavy job beside a GPU-only one
 * gains from the overlap; the exact product form gives each its share. */
Test(share, timeslice_colocation_of_different_workloads)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile gpu_only = {.name = "g"};
    gpu_only.compute_sm_s_fixed[WL_CLASS_FP32] = 100.0; /* G = 1 s */
    wl_profile host_heavy = {.name = "h", .host_s_fixed = 3.0};
    host_heavy.compute_sm_s_fixed[WL_CLASS_FP32] = 100.0; /* H = 3 s, G = 1 s */
    f.c.sharing = SHARE_TIMESLICE;
    f.c.n_with = 1;
    f.c.with[0] = &host_heavy;
    f.c.with_batch[0] = 1;
    speed_result r;
    predict_unit_time(&gpu_only, 1, &f.c, &f.m, &r);
    cr_assert_eq(r.outcome, SPEED_OK);
    /* states (n_g, n_h) at the GPU: weights from the product form with eta(2) = 0.8 */
    double w10 = 1.0 * 3.0, w11 = 2.0 * 1.0 / 0.8;
    double x_g = (w10 * 1.0 + w11 * 0.8 * 0.5) / (w10 + w11);
    cr_assert_float_eq(r.unit_time_s, 1.0 / x_g, 1e-9);
    cr_assert_gt(r.unit_time_s, 1.0);
    cr_assert_lt(r.unit_time_s, 1.0 / (0.8 * 0.5));
}

/* A compute-only client (fp32, compute_sm_s SM-s per iteration) whose kernels can use all 100
 * SMs of the fixture, in `kernels` kernels per iteration, no host time. */
static wl_profile wide_client(const char *name, double compute_sm_s, double kernels)
{
    wl_profile p = {.name = name, .max_sms_fixed = 100, .kernels_per_iter = kernels};
    p.compute_sm_s_fixed[WL_CLASS_FP32] = compute_sm_s;
    return p;
}

/* Clients a and b, one each, under MPS on f's partition: expect[] = iteration time of a and b
 * (s), then the share of time their kernels run, each within 1e-9. */
static void expect_mps_pair(phys_fx *f, const wl_profile *a, const wl_profile *b,
                            const double *expect)
{
    f->c.sharing = SHARE_MPS;
    share_mps_class cls[2] = {{a, 1, 1}, {b, 1, 1}};
    double iter[2], frac[2];
    cr_assert_eq(share_mps_solve(2, cls, &f->c, &f->m, iter, frac), 0);
    cr_assert_float_eq(iter[0], expect[0], 1e-9);
    cr_assert_float_eq(iter[1], expect[1], 1e-9);
    cr_assert_float_eq(frac[0], expect[2], 1e-9);
    cr_assert_float_eq(frac[1], expect[3], 1e-9);
}

/* MPS, two clients, one host-bound (hand-solved with the model of share_mps.h). GPU of 100 SMs.
 * A: GPU only, C = 100 SM-s, any parallelism (1 s alone). B: H = 3 s, C = 50 SM-s, P = 50 SMs
 * (4 s alone). A always has GPU work (b_A = 1), so while B is in its GPU phase the SMs are
 * water-filled: min(50, L) + min(100, L) = 100 gives L = 50: B keeps its 50 SMs and takes
 * 3 + 1 = 4 s, b_B = 1/4. While A runs, B is there a quarter of the time: L + 0.25 * 50 = 100,
 * L = 87.5 SMs, so A takes 100 / 87.5 = 8/7 s: the host-bound client loses nothing and the
 * other gets the SMs it leaves idle. */
Test(share, mps_two_clients_one_host_bound)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile a = {.name = "a"};
    a.compute_sm_s_fixed[WL_CLASS_FP32] = 100.0;
    wl_profile b = {.name = "b", .host_s_fixed = 3.0, .max_sms_fixed = 50};
    b.compute_sm_s_fixed[WL_CLASS_FP32] = 50.0;
    expect_mps_pair(&f, &a, &b, (double[4]){8.0 / 7.0, 4.0, 1.0, 0.25});
}

/* MPS gains from host phases: two identical clients, H = 1 s, C = 100 SM-s on 100 SMs (2 s per
 * iteration alone, half of it on the GPU). With b the share of time a client has GPU work,
 * the active client gets L = 100 / (1 + b) SMs, so G = 1 + b and b = G / (1 + G): b^2 + b = 1,
 * b = (sqrt 5 - 1) / 2, iteration 2 + b = 2.618 s. Each client is slower than alone (2 s) but
 * together they do 2 / 2.618 = 0.764 iterations/s, above one process alone (0.5). */
Test(share, mps_identical_host_bound_clients_raise_throughput)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile p = {.name = "h", .host_s_fixed = 1.0};
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 100.0;
    f.c.sharing = SHARE_MPS;
    f.c.peers = 2;
    speed_result r;
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    double bb = (sqrt(5.0) - 1.0) / 2.0;
    cr_assert_float_eq(r.unit_time_s, 2.0 + bb, 1e-8);
    cr_assert_gt(2.0 / r.unit_time_s, 1.0 / 2.0);
}

/* Launch gaps hold no SMs (share_mps.h): k = 4 identical GPU-only clients, C = 10 SM-s on up to
 * 100 SMs (0.1 s alone), no host time, no kernel count (identical clients only share SMs).
 * Without gaps (phi = 1) each gets 25 SMs all the time: t = 0.4 s, the aggregate 1 / G = 10 /s.
 * With phi = 1/2 a client's GPU time is its solo's gaps 0.05 s plus half of g(L), L = 100 / (1 +
 * 3 b) the SMs water-filled against 3 others running their kernels a share b = 0.5 g / t of the
 * time: x = 0.5 g = 0.05 (1 + 3 b), t = 0.05 + x, b = x / t, so 3 b^2 - b - 1 = 0, b = (1 +
 * sqrt 13) / 6 and t = 0.1 + 0.15 b = 0.21514 s: the aggregate 18.6 /s, near 100 / (phi C) = 20,
 * the SM-time the kernels conserve. Alone the gaps change nothing (0.1 s); a profile with
 * kernel_busy_frac 0 or 1 is phi = 1. */
Test(share, mps_launch_gaps_hold_no_sms)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile p = wide_client("gappy", 10.0, 0);
    f.c.sharing = SHARE_MPS;
    speed_result r;
    f.c.peers = 4;
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    cr_assert_float_eq(r.unit_time_s, 0.4, 1e-8);
    p.kernel_busy_frac = 1.0;
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    cr_assert_float_eq(r.unit_time_s, 0.4, 1e-8);
    p.kernel_busy_frac = 0.5;
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    double b = (1.0 + sqrt(13.0)) / 6.0;
    cr_assert_float_eq(r.unit_time_s, 0.1 + 0.15 * b, 1e-8);
    f.c.peers = 1;
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    cr_assert_float_eq(r.unit_time_s, 0.1, 1e-9);
}

/* SM-time beside measured MPS peers (share_mps.h, mps_sm_growth a): k = 4 identical GPU-only
 * clients, C = 8 SM-s on up to 100 SMs and M = 20 GB at 1 TB/s (0.08 + 0.02 = 0.1 s alone, p = 1,
 * no drive curve), no host time, no kernel count: each holds 25 SMs all the time. Unmeasured (a
 * = 0): the SM-count curve, 8 / 25 + 0.02 = 0.34 s (the pool, 4 x 0.2 TB/s, fits). Measured: the
 * SMs the peers take stretch the memory part too, 0.32 + 0.02 x 4 = 0.4 s (the kernels keep the
 * solo's 10 SM-s an iteration), times 1 + a ln 4: with a = 0.1, 0.4 x 1.13863 s, so the aggregate
 * is 100 SMs / (10 SM-s x 1.13863). A lone client, capped or not, has ln 1 = 0 and keeps the
 * SM-count curve: 0.1 s, and 8 / 25 + 0.02 s capped at 25 % (25 SMs: the fixture's granule is
 * one SM). */
/* The time per unit of p with `peers` identical MPS clients on f's partition, and *sms its SMs. */
static double mps_unit_time(phys_fx *f, const wl_profile *p, int peers, double *sms)
{
    f->c.sharing = SHARE_MPS;
    f->c.peers = peers;
    speed_result r;
    predict_unit_time(p, 1, &f->c, &f->m, &r);
    *sms = r.sms_used;
    return r.unit_time_s;
}

Test(share, mps_measured_growth_keeps_and_grows_the_sm_time)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile p = wide_client("grows", 8.0, 0);
    p.mem_traffic_bytes_fixed = 0.02e12;
    double sms;
    cr_assert_float_eq(mps_unit_time(&f, &p, 4, &sms), 0.34, 1e-9);
    p.mps_sm_growth = 0.1;
    cr_assert_float_eq(mps_unit_time(&f, &p, 4, &sms), 0.4 * (1.0 + 0.1 * log(4.0)), 1e-9);
    cr_assert_float_eq(mps_unit_time(&f, &p, 1, &sms), 0.1, 1e-9);
    f.c.mps_percent = 25;
    cr_assert_float_eq(mps_unit_time(&f, &p, 1, &sms), 8.0 / 25.0 + 0.02, 1e-9);
    cr_assert_float_eq(sms, 25.0, 1e-9);
}

/* The loop of the tail tests: H = 1 s, all of it overlapping its GPU work (o = 1), C = 50 SM-s
 * on up to 100 SMs (G = 0.5 s alone), no tail stated. */
static wl_profile tailed_client(void)
{
    wl_profile p = wide_client("tailed", 50.0, 0);
    p.host_s_fixed = 1.0;
    p.host_overlap = 1.0;
    return p;
}

/* The exposed GPU tail (speed_tail_excess_s, NOTES-h200.md 'captail'): H = 1 s, all of it
 * overlapping (o = 1), C = 50 SM-s on up to 100 SMs (G = 0.5 s alone), tail tau = 0.2 of the
 * kernel time. Alone on the whole GPU nothing changes (t = H = 1 s: H holds the solo's tail).
 * Capped at 50 % (50 SMs) G = 1 s: without the tail t = max(H, G) = 1 s; with it the last kernels
 * stretch by 0.2 x (1 - 0.5) = 0.1 s beyond what H holds, t = 1.1 s; with half of G launch gaps
 * (phi = 0.5) only the kernels' half stretches: 1.05 s. At 25 % (G = 2 s) the GPU binds and
 * already holds the tail: 2 s, as without. */
Test(share, mps_cap_exposes_the_stretched_gpu_tail)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile p = tailed_client();
    cr_assert_float_eq(phys_fx_time(&f, &p), 1.0, 1e-12);
    f.c.sharing = SHARE_MPS;
    f.c.mps_percent = 50;
    cr_assert_float_eq(phys_fx_time(&f, &p), 1.0, 1e-12); /* no tail stated */
    p.gpu_tail_frac = 0.2;
    cr_assert_float_eq(phys_fx_time(&f, &p), 1.1, 1e-12);
    p.kernel_busy_frac = 0.5;
    cr_assert_float_eq(phys_fx_time(&f, &p), 1.05, 1e-12);
    f.c.mps_percent = 25;
    cr_assert_float_eq(phys_fx_time(&f, &p), 2.0, 1e-12);
    f.c.mps_percent = 0;
    cr_assert_float_eq(phys_fx_time(&f, &p), 1.0, 1e-12);
    f.c.sharing = SHARE_EXCLUSIVE;
    cr_assert_float_eq(phys_fx_time(&f, &p), 1.0, 1e-12);
}

/* The tail stretches beside MPS peers too: two identical clients as above (H = 1 s, G = 0.5 s
 * alone, no kernel count: they only share the SMs). Without the tail each runs its kernels a
 * share b of the time on 100 / (1 + b) SMs: g = 0.5 (1 + b), t = max(1, g), so b = 1 and t = 1 s.
 * With tau = 0.2: t = 1 + 0.2 (g - 0.5) = 0.9 + 0.2 g and g = 0.5 (1 + g / t), so
 * 0.2 g^2 + 0.3 g - 0.45 = 0: g = (sqrt(0.45) - 0.3) / 0.4 and t = 0.9 + 0.2 g = 1.0854 s. */
Test(share, mps_peers_stretch_the_gpu_tail)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile p = tailed_client();
    f.c.sharing = SHARE_MPS;
    f.c.peers = 2;
    speed_result r;
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    cr_assert_float_eq(r.unit_time_s, 1.0, 1e-8);
    p.gpu_tail_frac = 0.2;
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    double g = (sqrt(0.45) - 0.3) / 0.4;
    cr_assert_float_eq(r.unit_time_s, 0.9 + 0.2 * g, 1e-8);
    cr_assert_gt(r.unit_time_s, 1.08);
}

/* A capped client alone follows the SM-count curve of its kernels, not p % of its speed:
 * C = 10 SM-s with parallelism P = 20 and M = 0.5 TB at 1 TB/s: 0.5 + 0.5 = 1 s on the whole
 * GPU. A 25 % cap (25 SMs) still holds its 20 SMs: 1 s, not 4 s. A 10 % cap (10 SMs):
 * 10 / 10 + 0.5 = 1.5 s, not 10 s. */
Test(share, mps_cap_alone_follows_the_sm_curve)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile p = {.name = "narrow", .max_sms_fixed = 20, .mem_traffic_bytes_fixed = 0.5e12};
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 10.0;
    cr_assert_float_eq(phys_fx_time(&f, &p), 1.0, 1e-9);
    f.c.sharing = SHARE_MPS;
    f.c.mps_percent = 25;
    cr_assert_float_eq(phys_fx_time(&f, &p), 1.0, 1e-9);
    f.c.mps_percent = 10;
    cr_assert_float_eq(phys_fx_time(&f, &p), 1.5, 1e-9);
}

/* A capped client alone on whole TPCs (speed_mps_sms, 2 SMs per TPC, at least 8 SMs), by hand on
 * the 100-SM fixture: compute-only C = 12 SM-s runs 0.12 s on the whole GPU; at 25 % (25 SMs ->
 * 12 TPCs = 24 SMs) 12 / 24 = 0.5 s, not the 0.48 s of 25 SMs; at 5 % (5 -> 4, below the
 * minimum: 8 SMs) 1.5 s. Two clients at 50 % each get 50 SMs side by side: 0.24 s each. */
Test(share, mps_cap_alone_runs_on_whole_tpcs)
{
    gpu_type g = fixture_gpu();
    phys_params m = fixture_params();
    m.mps_sm_granule = 2;
    m.mps_min_sms = 8;
    wl_profile p = {.name = "wide"};
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 12.0;
    partition_cfg c;
    partition_cfg_init(&c, &g);
    speed_result r;
    predict_unit_time(&p, 1, &c, &m, &r);
    cr_assert_float_eq(r.unit_time_s, 0.12, 1e-9);
    c.sharing = SHARE_MPS;
    c.mps_percent = 25;
    predict_unit_time(&p, 1, &c, &m, &r);
    cr_assert_float_eq(r.unit_time_s, 0.5, 1e-9);
    cr_assert_float_eq(r.sms_used, 24, 1e-9);
    c.mps_percent = 5;
    predict_unit_time(&p, 1, &c, &m, &r);
    cr_assert_float_eq(r.unit_time_s, 1.5, 1e-9);
    c.mps_percent = 50;
    c.peers = 2;
    predict_unit_time(&p, 1, &c, &m, &r);
    cr_assert_float_eq(r.unit_time_s, 0.24, 1e-9);
}

/* Time-slicing of loops that launch asynchronously (host_overlap 1: t = max(H, G)), two
 * identical processes, H = 1 s, eta = 0.8 (interpolated: eta(1 + b) = 1 - 0.2 b), mean field of
 * share_ts.h. G = 0.25 s: b = 0.25 S, S = (1 + b) / (1 - 0.2 b) gives 0.2 b^2 - 0.75 b + 0.25 = 0,
 * b = 0.3698, G S = 0.37 s < H: each runs at its solo speed (1 s). G = 0.5 s: the same equation
 * (0.2 b^2 - 0.5 b + 0.5 = 0) has no root in [0, 1], so the GPU saturates: b = 1, S = 2 / 0.8,
 * iteration G S = 1.25 s. */
Test(share, timeslice_overlapping_host_time)
{
    double eta[SHARE_MAX_JOBS + 1];
    eta_table(eta, 0.8);
    share_ts_class cls = {2, 1.0, 0.25, 1.0, false, 0.0};
    double x, busy;
    cr_assert_eq(share_ts_solve(1, &cls, eta, &x, &busy), 0);
    cr_assert_float_eq(1.0 / x, 1.0, 1e-9);
    double b = (0.75 - sqrt(0.75 * 0.75 - 4 * 0.2 * 0.25)) / 0.4;
    cr_assert_float_eq(busy, 1.0 - (1.0 - b) * (1.0 - b), 1e-6);
    cls.gpu_s = 0.5;
    cr_assert_eq(share_ts_solve(1, &cls, eta, &x, NULL), 0);
    cr_assert_float_eq(1.0 / x, 1.25, 1e-9);
}

/* MPS kernel queueing (share_mps.h), hand-solved. GPU of 100 SMs, 1 TB/s, mps_kernel_wait 1/2.
 * Stream S: M = 0.1 TB in 10 kernels that fill the GPU (no P limit), no host time: 0.1 s alone,
 * kernels of d_S = 0.01 s, all issued back to back (beta_S = 1).
 * Launch-bound A: H = 0.2 s overlapping its GPU work (o = 1), C = 1 SM-s on at most 10 SMs in
 * 100 kernels: 0.1 s of kernels of d_A = 0.001 s on 10 % of the SMs, 0.2 s per iteration
 * alone; its kernels run half of its launching window, so beta_A = 0.1 / 0.2 = 1/2.
 * S issues every kernel back to back: each waits for the whole of the A kernel started
 * meanwhile, weighted by the SMs it holds (0.1 x 0.001 s), at most one per S kernel; A starts
 * 100 / t_A kernels per second, 100 t_S / t_A > 10 of them while S is in flight, so
 * t_S = 0.1 + 10 x 1e-4 = 0.101 s and S runs alone (b_S = 0.1 / 0.101).
 * A: the random half of its kernels waits b_S x 0.5 x 0.01 s each: 50 x 0.005 b_S = 0.25 b_S;
 * the back-to-back half waits 0.01 s for each of the 10 / t_S kernels S starts while A has
 * kernels in flight (G' = its GPU time with waits), at most one per A kernel, 1/2 of them:
 * G' = 0.1 + 0.25 b_S + 0.5 x 0.01 x (10 / t_S) G', so
 * G' = (0.1 + 0.025 / 0.101) / (1 - 0.05 / 0.101) = 0.0351 / 0.051 = 0.68823529 s = t_A
 * (A 3.4 times slower, S 1 % slower). A's SMs are untouched: 10 of the 90 S leaves. */
Test(share, mps_launch_bound_client_queues_behind_a_saturating_stream)
{
    phys_fx f;
    phys_fx_init(&f);
    f.m.mps_kernel_wait = 0.5;
    wl_profile s = {.name = "stream", .mem_traffic_bytes_fixed = 0.1e12, .kernels_per_iter = 10};
    wl_profile a = {.name = "launch-bound", .host_s_fixed = 0.2, .host_overlap = 1,
                    .max_sms_fixed = 10, .kernels_per_iter = 100};
    a.compute_sm_s_fixed[WL_CLASS_TENSOR] = 1.0;
    f.c.sharing = SHARE_MPS;
    share_mps_class cls[2] = {{&a, 1, 1}, {&s, 1, 1}};
    double iter[2], frac[2];
    cr_assert_eq(share_mps_solve(2, cls, &f.c, &f.m, iter, frac), 0);
    cr_assert_float_eq(iter[0], 0.0351 / 0.051, 1e-7);
    cr_assert_float_eq(iter[1], 0.101, 1e-9);
    cr_assert_float_eq(frac[0], 0.1 * 0.051 / 0.0351, 1e-7); /* running share: waiting excluded */
    cr_assert_float_eq(frac[1], 0.1 / 0.101, 1e-9);
    /* half of A's host time CPU work before its first launch (o = 1/2, as calib/coloc's
     * host_loop: 4 ms of CPU work, then its kernels), H = 0.4 s: the launching window is still
     * 0.2 s (beta_A = 1/2). The CPU part follows the previous iteration's synchronisation and
     * hides none of the queueing: alone A takes 0.2 + max(0.2, 0.1) = 0.4 s; beside S,
     * t_A = 0.2 + G' with G' as above (S still meets 100 x 0.101 / 0.888 > 10 A kernels). */
    a.host_s_fixed = 0.4;
    a.host_overlap = 0.5;
    cr_assert_eq(share_mps_solve(2, cls, &f.c, &f.m, iter, frac), 0);
    cr_assert_float_eq(iter[0], 0.2 + 0.0351 / 0.051, 1e-7);
    cr_assert_float_eq(iter[1], 0.101, 1e-9);
    speed_result r;
    predict_unit_estimate(&a, 1, &(partition_cfg){.gpu = &f.g, .peers = 1}, &f.m, &r);
    cr_assert_float_eq(r.unit_time_s, 0.4, 1e-9);
    /* without the kernel counts neither waits: A keeps its solo time, S too */
    a.host_s_fixed = 0.2;
    a.host_overlap = 1;
    a.kernels_per_iter = 0;
    cr_assert_eq(share_mps_solve(2, cls, &f.c, &f.m, iter, frac), 0);
    cr_assert_float_eq(iter[0], 0.2, 1e-9);
    cr_assert_float_eq(iter[1], 0.1, 1e-9);
}

/* Kernels queue only where both cannot hold the SMs they ask for at once (share_mps.h); the MPS
 * calibration's `cm` runs (calib/results/2026-11-22-h100-sxm*.json) show it: a compute and a
 * memory client capped at 50 % each take their capped solo time (0.391-0.398 s and 0.201 s,
 * c alone at 50 %: 0.391-0.395 s), while uncapped both take ~1.93x their solo time.
 * Hand-solved on the 100-SM fixture: X and Y each C = 10 SM-s on up to 100 SMs in 100 kernels,
 * no host time (0.1 s alone, kernels of 1 ms, all issued back to back).
 * Capped at 50 %: 50 SMs each, 50 + 50 <= 100, so no wait: t = 10 / 50 = 0.2 s each.
 * Uncapped: the kernels alternate whole. Each X kernel waits for the whole Y kernel that Y queued
 * meanwhile and then runs alone on the 100 SMs: t = 100 x (1 + 1) ms = 0.2 s each, the sum of
 * the solo times, whatever mps_kernel_wait (the mean wait of a kernel arriving at random).
 * With different kernel counts they still alternate kernel by kernel: Y in 200 kernels of
 * 0.5 ms (same C), a round X, Y takes 1.5 ms, so X's iteration takes 100 rounds, 0.15 s, and
 * Y's 200, 0.3 s: X meets 200 / 0.3 x 0.15 = 100 Y kernels (one per kernel of its own), Y meets
 * 100 / 0.15 x 0.3 = 200 X kernels. */
Test(share, mps_back_to_back_clients_alternate_unless_capped_side_by_side)
{
    phys_fx f;
    phys_fx_init(&f);
    f.m.mps_kernel_wait = 0.5;
    wl_profile x = wide_client("x", 10.0, 100), y = wide_client("y", 10.0, 100);
    f.c.sharing = SHARE_MPS;
    share_mps_class cls[2] = {{&x, 1, 1}, {&y, 1, 1}};
    double iter[2], frac[2];
    f.c.mps_percent = 50;
    cr_assert_eq(share_mps_solve(2, cls, &f.c, &f.m, iter, NULL), 0);
    cr_assert_float_eq(iter[0], 0.2, 1e-9);
    cr_assert_float_eq(iter[1], 0.2, 1e-9);
    f.c.mps_percent = 0;
    for (int k = 0; k < 2; k++) {
        f.m.mps_kernel_wait = k ? 0.25 : 0.5;
        cr_assert_eq(share_mps_solve(2, cls, &f.c, &f.m, iter, frac), 0);
        cr_assert_float_eq(iter[0], 0.2, 1e-9);
        cr_assert_float_eq(iter[1], 0.2, 1e-9);
        cr_assert_float_eq(frac[0], 0.5, 1e-9); /* each runs alone half of the time */
    }
    y.kernels_per_iter = 200;
    cr_assert_eq(share_mps_solve(2, cls, &f.c, &f.m, iter, frac), 0);
    cr_assert_float_eq(iter[0], 0.15, 1e-9);
    cr_assert_float_eq(iter[1], 0.3, 1e-9);
    cr_assert_float_eq(frac[0], 0.1 / 0.15, 1e-9);
    cr_assert_float_eq(frac[1], 0.1 / 0.3, 1e-9);
}

/* Strict alternation where it takes long to settle: short kernels beside long ones, both issued
 * back to back, by hand on the 100-SM fixture. A: C = 1 SM-s in 2000 kernels of 5 us (0.01 s
 * alone); S: C = 1 SM-s in 10 kernels of 1 ms (0.01 s alone). They alternate one kernel each, so
 * A's iteration takes 2000 x (5 us + 1 ms) = 2.01 s and S's 10 x 1.005 ms = 0.01005 s; A waits
 * whenever S runs (99.5 % of the time), t_A = 0.01 / (1 - 0.01 / 0.01005). */
Test(share, mps_short_kernels_beside_long_ones_alternate)
{
    phys_fx f;
    phys_fx_init(&f);
    f.m.mps_kernel_wait = 0.5;
    wl_profile a = wide_client("a", 1.0, 2000), s = wide_client("s", 1.0, 10);
    expect_mps_pair(&f, &a, &s, (double[4]){2.01, 0.01005, 0.01 / 2.01, 0.01 / 0.01005});
}

/* A host-bound client beside a back-to-back one, by hand on the 100-SM fixture,
 * mps_kernel_wait 1/2. A: no host time, C = 10 SM-s on up to 100 SMs in 100 kernels (0.1 s alone,
 * kernels of 1 ms, beta_A = 1). B: H = 0.1 s overlapping its GPU work (o = 1), C = 1 SM-s on up
 * to 100 SMs in 10 kernels (0.01 s of kernels of 1 ms: beta_B = 0.01 / 0.1 = 0.1).
 * A issues back to back: it runs alone on the 100 SMs and waits for each B kernel started
 * while it is in flight: B starts 10 / t_B of them, so t_A = 0.1 + 0.001 x (10 / t_B) t_A.
 * B stays host-bound (checked below), t_B = 0.1 s: t_A = 0.1 / 0.9 s, b_A = 0.9.
 * B: its back-to-back tenth runs alone; its random 0.9 shares the SMs with A's running kernel,
 * weight 0.9 b_A = 0.81: L = 100 / 1.81 SMs, g_B = 1 / L = 0.0181 s, b_B = 0.181. Its waits:
 * 0.1 x 10 x 0.001 (A starts 900 kernels/s, more than one per B kernel) + 0.9 x 10 x 0.5 x
 * b_A x 0.001 = 0.00505 s, so G'_B = 0.02315 s < H: B loses nothing. */
Test(share, mps_host_bound_client_beside_a_back_to_back_one)
{
    phys_fx f;
    phys_fx_init(&f);
    f.m.mps_kernel_wait = 0.5;
    wl_profile a = wide_client("a", 10.0, 100), b = wide_client("b", 1.0, 10);
    b.host_s_fixed = 0.1;
    b.host_overlap = 1;
    expect_mps_pair(&f, &a, &b, (double[4]){0.1 / 0.9, 0.1, 0.9, 0.181});
}

/* Identical clients do not queue behind each other's kernels (their kernels alternate, which
 * the SM and bandwidth split already is): two streams of the test above take 0.2 s each, with or
 * without their kernel counts. */
Test(share, mps_identical_clients_do_not_queue)
{
    phys_fx f;
    phys_fx_init(&f);
    f.m.mps_kernel_wait = 0.5;
    wl_profile s = {.name = "stream", .mem_traffic_bytes_fixed = 0.1e12, .kernels_per_iter = 10};
    f.c.sharing = SHARE_MPS;
    f.c.peers = 2;
    speed_result r;
    predict_unit_estimate(&s, 1, &f.c, &f.m, &r);
    cr_assert_float_eq(r.unit_time_s, 0.2, 1e-9);
}

/* Bandwidth is water-filled by what a client's kernels draw unhindered, and a client short of
 * bandwidth still computes: C = 20 SM-s, M = 0.8 TB, sum roofline: 0.2 + 0.8 = 1 s alone,
 * drawing 0.8 TB/s. Two MPS clients: 50 SMs each (compute 0.4 s) and 1.6 TB/s wanted of 1 TB/s,
 * so 0.5 TB/s each (memory 1.6 s): 2.0 s, exactly twice the solo time, as two kernels that each
 * saturate the memory cannot overlap. */
Test(share, mps_bandwidth_bound_clients_gain_nothing)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile p = {.name = "bw", .mem_traffic_bytes_fixed = 0.8e12};
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 20.0;
    speed_result r;
    predict_unit_estimate(&p, 1, &f.c, &f.m, &r);
    cr_assert_float_eq(r.unit_time_s, 1.0, 1e-9);
    f.c.sharing = SHARE_MPS;
    f.c.peers = 2;
    predict_unit_estimate(&p, 1, &f.c, &f.m, &r);
    cr_assert_float_eq(r.unit_time_s, 2.0, 1e-6);
}

/* The time-slice scheduler's round robin (share_ts.h), q = 1 s, s = 0.1 s, eta = 0.8.
 * Switch per phase: a phase of G = 0.1 s costs G + s = 0.2 s while others wait, efficiency
 * min(0.8, 0.1 / 0.2) = 0.5; a phase of 1 s keeps 0.8 (1 / 1.1 = 0.909 is above it); without
 * host time (never leaves) or without rr nothing changes.
 * Return wait: a holder with G = 3 s runs slices of D = min(1, 3) = 1 s: back after 0.5 s
 * (inside the slice it began when we left) 1 - 0.5 = 0.5 s; after 2 s a random point of its
 * slices, D^2 / (2 G) = 1/6 s. A holder with G = 0.4 s runs whole phases, D = 0.4: back after
 * 0.1 s 0.3 s, after 1 s 0.4 / 2 = 0.2 s. */
Test(share, timeslice_scheduler_terms)
{
    share_ts_rr rr = {1.0, 0.1};
    double eta[SHARE_MAX_JOBS + 1], out[SHARE_MAX_JOBS + 1];
    eta_table(eta, 0.8);
    share_ts_eta_phases(4, eta, 0.2, 0.1, &rr, out);
    cr_assert_float_eq(out[1], 1.0, 1e-15);
    cr_assert_float_eq(out[2], 0.5, 1e-15);
    cr_assert_float_eq(out[4], 0.5, 1e-15);
    share_ts_eta_phases(4, eta, 0.2, 1.0, &rr, out);
    cr_assert_float_eq(out[3], 0.8, 1e-15);
    share_ts_eta_phases(4, eta, 0.0, 0.1, &rr, out);
    cr_assert_float_eq(out[2], 0.8, 1e-15);
    share_ts_eta_phases(4, eta, 0.2, 0.1, NULL, out);
    cr_assert_float_eq(out[2], 0.8, 1e-15);
    cr_assert_float_eq(share_ts_return_wait(0.5, 3.0, &rr), 0.5, 1e-15);
    cr_assert_float_eq(share_ts_return_wait(2.0, 3.0, &rr), 1.0 / 6.0, 1e-15);
    cr_assert_float_eq(share_ts_return_wait(0.1, 0.4, &rr), 0.3, 1e-15);
    cr_assert_float_eq(share_ts_return_wait(1.0, 0.4, &rr), 0.2, 1e-15);
    cr_assert_float_eq(share_ts_return_wait(1.0, 0.4, NULL), 0.0, 1e-15);
    /* two identical jobs, H = 0.2 s, G = 0.1 s, efficiency 0.5 at the GPU: MVA by hand,
     * alone p(1) = G / (H + G) = 1/3; R(2) = G p(0) + 2 (G / 0.5) p(1) = 0.1 x 2/3 + 0.4 / 3
     * = 0.2 s; X(2) = 2 / (0.2 + 0.2) = 5 iterations/s, 2.5 each (1 / 0.3 = 3.33 alone) */
    share_ts_eta_phases(2, eta, 0.2, 0.1, &rr, out);
    cr_assert_float_eq(share_ts_mva(2, 0.2, 0.1, out, NULL), 2.5, 1e-12);
}

/* Return wait in the mean field, hand-solved (q = 1 s, s = 0.1 s, eta = 0.8). B never leaves the
 * GPU (H = 0, G = 3 s): b_B = 1. A: H = 4 s, half of it serial (o = 1/2: 2 s of CPU work after
 * its synchronisation, then 2 s of launching over its G = 0.5 s of kernels). A comes back after
 * 2 s, beyond B's first slice: it waits 1^2 / (2 x 3) + 0.1 = 4/15 s. Sharing with B
 * (n = 1 + b_B = 2) its GPU time stretches to 0.5 x 2 / 0.8 = 1.25 s, still under its 2 s of
 * launching: t_A = 2 + 2 + 4/15 = 64/15 s, b_A = 1.25 / t_A = 75/256. B never waits; its GPU
 * time stretches by n / eta(n) at n = 1 + b_A, eta linear between 1 and 0.8, and each of A's
 * visits (1 / t_A per second, B holding the GPU, b_B = 1) costs B two switches, a share
 * 2 x 0.1 / t_A = 3/64 of its time: t_B = 3 (1 + b_A) / (1 - 0.2 b_A) / (1 - 3/64).
 * Without rr, or when A's iteration is a fluid unit (rounds false), A keeps 4 s. */
Test(share, timeslice_return_wait_behind_a_busy_context)
{
    share_ts_rr rr = {1.0, 0.1};
    double eta[SHARE_MAX_JOBS + 1], x[2];
    eta_table(eta, 0.8);
    share_ts_class cls[2] = {{1, 4.0, 0.5, 0.5, true, 0.0}, {1, 0.0, 3.0, 0.0, true, 0.0}};
    cr_assert_eq(share_ts_solve_rr(2, cls, eta, &rr, x, NULL), 0);
    double b_a = 75.0 / 256.0;
    cr_assert_float_eq(1.0 / x[0], 64.0 / 15.0, 1e-9);
    cr_assert_float_eq(1.0 / x[1], 3.0 * (1 + b_a) / (1 - 0.2 * b_a) / (1 - 3.0 / 64), 1e-9);
    cr_assert_eq(share_ts_solve_rr(2, cls, eta, NULL, x, NULL), 0);
    cr_assert_float_eq(1.0 / x[0], 4.0, 1e-9);
    cls[0].rounds = false;
    cr_assert_eq(share_ts_solve_rr(2, cls, eta, &rr, x, NULL), 0);
    cr_assert_float_eq(1.0 / x[0], 4.0, 1e-9);
}

/* predict applies the switch per phase to a profile whose iteration is a real round (it states
 * kernels_per_iter) and not to a fluid unit: two time-sliced copies of a job of H = 0.2 s and
 * G = 0.1 s on the fixture GPU, q = 1 s, s = 0.1 s, take 1 / 2.5 s per iteration (the MVA
 * above); without the kernel count the processor-sharing MVA at eta 0.8:
 * R(2) = 0.1 x 2/3 + 2 x 0.125 / 3, one iteration per 0.2 + R(2) s each. */
Test(share, predict_switches_only_real_rounds)
{
    phys_fx f;
    phys_fx_init(&f);
    f.m.ts_quantum_s = 1.0;
    f.m.ts_switch_s = 0.1;
    wl_profile p = {.name = "rounds", .host_s_fixed = 0.2, .max_sms_fixed = 100};
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 1.0;
    speed_result r;
    predict_unit_estimate(&p, 1, &f.c, &f.m, &r);
    double g = r.iter_gpu_s; /* the fixture's solo GPU time of 1 SM-s */
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 0.1 / g;
    f.c.sharing = SHARE_TIMESLICE;
    f.c.peers = 2;
    predict_unit_estimate(&p, 1, &f.c, &f.m, &r);
    double r2 = 0.1 * 2.0 / 3.0 + 2 * 0.125 / 3.0;
    cr_assert_float_eq(r.unit_time_s, 0.2 + r2, 1e-9);
    p.kernels_per_iter = 1;
    predict_unit_estimate(&p, 1, &f.c, &f.m, &r);
    cr_assert_float_eq(r.unit_time_s, 1 / 2.5, 1e-9);
}

/* A fold of the time-slice mean field (share_ts.h): k identical jobs, o > 0, flat eta e (eta(x)
 * = 1 + (e - 1)(x - 1) for x in 1..2). With b the share of time a job has GPU work, x = 1 +
 * (k - 1) b contexts share the GPU, u = G x / eta(x), and (while u > o H) the map is f(b) =
 * u / (A + u), A = (1 - o) H. At a fixed point A = u (1 - b) / b, and f'(b) = u' (1 - b) b / u,
 * with u' / u = (k - 1) (2 - e) / (x eta(x)). f' = 1 (the fixed point is a double root of
 * f(b) - b, which the damped iteration approaches like 1/round, never within SHARE_TS_TOL in
 * SHARE_TS_MAX_ITER rounds) where (2 - e) y (1 - y / (k - 1)) = (1 + y)(1 + (e - 1) y), y = x - 1:
 * for k = 8, e = 0.3 a root lies in 0.3..0.9 (the two sides differ in sign there). Returns the
 * host time H that puts the fixed point on the fold, for GPU time g; *b_fold gets b. */
static double fold_host_s(int k, double e, double g, double o, double *b_fold)
{
    double lo = 0.3, hi = 0.9;
    for (int it = 0; it < 200; it++) {
        double y = 0.5 * (lo + hi);
        double d = (2 - e) * y * (1 - y / (k - 1)) - (1 + y) * (1 + (e - 1) * y);
        if (d < 0) {
            lo = y;
        } else {
            hi = y;
        }
    }
    double y = 0.5 * (lo + hi), b = y / (k - 1);
    double u = g * (1 + y) / (1 + (e - 1) * y);
    *b_fold = b;
    return u * (1 - b) / b / (1 - o);
}

/* On the fold the mean field does not settle: SIM_ENOCONV, not its last iterate. 10 % more host
 * time moves the fixed point off the fold: it settles, and b from the returned throughput
 * (t = 1/x = (1 - o) H + G S while G S > o H, b = G S / t) satisfies G S = G x / eta(x), x = 1 +
 * 7 b. */
Test(share, timeslice_mean_field_reports_a_fold_as_not_settled)
{
    double eta[SHARE_MAX_JOBS + 1], x, busy = -1, b_fold;
    eta_table(eta, 0.3);
    double h = fold_host_s(8, 0.3, 1.0, 0.01, &b_fold);
    cr_assert(b_fold > 0 && b_fold < 1.0 / 7, "the fold lies where 1 <= x <= 2: b %g", b_fold);
    share_ts_class cls = {8, h, 1.0, 0.01, true, 0.0};
    cr_assert_eq(share_ts_solve_rr(1, &cls, eta, NULL, &x, &busy), SIM_ENOCONV);
    cr_assert_eq(busy, -1, "nothing is written when the mean field does not settle");
    cls.host_s = 1.1 * h;
    cr_assert_eq(share_ts_solve_rr(1, &cls, eta, NULL, &x, &busy), 0);
    double t = 1.0 / x, gs = t - 0.99 * cls.host_s, b = gs / t;
    cr_assert(gs > 0.01 * cls.host_s, "G S %g beyond o H", gs);
    double xc = 1 + 7 * b, e = xc >= 2 ? 0.3 : 1 + (0.3 - 1) * (xc - 1);
    cr_assert_float_eq(gs, xc / e, 1e-9);
}

/* predict reports the fold as it reports an MPS solve that does not settle: invalid, with the
 * reason. Eight time-sliced copies of a job of G = the fixture's solo GPU time, o = 0.01, eta
 * 0.3, H on the fold. */
Test(share, predict_reports_a_time_slice_mean_field_that_does_not_settle)
{
    phys_fx f;
    phys_fx_init(&f);
    for (int k = 2; k <= PHYS_MAX_K; k++) {
        f.m.ts[0].eta[k] = 0.3;
    }
    wl_profile p = {.name = "fold", .host_s_fixed = 1.0, .host_overlap = 0.01,
                    .max_sms_fixed = 100};
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 1.0;
    speed_result r;
    predict_unit_estimate(&p, 1, &f.c, &f.m, &r);
    double b_fold;
    p.host_s_fixed = fold_host_s(8, 0.3, r.iter_gpu_s, 0.01, &b_fold);
    f.c.sharing = SHARE_TIMESLICE;
    f.c.peers = 8;
    predict_unit_estimate(&p, 1, &f.c, &f.m, &r);
    cr_assert_eq(r.outcome, SPEED_INVALID);
    cr_assert_str_eq(r.reason, "the time-slice mean field did not converge for these clients");
    p.host_s_fixed *= 1.1;
    predict_unit_estimate(&p, 1, &f.c, &f.m, &r);
    cr_assert_eq(r.outcome, SPEED_OK, "%s", r.reason);
}
