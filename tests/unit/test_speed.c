/* Unit tests for model/physics/speed.h, model/physics/power.h and experiments/physics_load.h.
 * The GPU here is synthetic (a made-up "TEST-GPU"), so the formulas are checked on round numbers;
 * the published tables are checked by tests/unit/test_validate.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "experiments/physics_load.h"
#include "tests/unit/phys_fixture.h"
#include "model/physics/power.h"
#include "model/physics/predict.h"
#include "model/physics/speed.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "tests/unit/diagfx.h"

Test(physics, default_file_loads_with_sources)
{
    diag *d = diag_create();
    phys_params m;
    cr_assert_eq(physics_load_default(d, &m), 0);
    cr_assert_eq(diag_error_count(d), 0);
    cr_assert_geq(m.n_ts, 1);
    cr_assert(m.roofline_p >= 1);
    cr_assert(m.mps_sm_granule >= 1 && m.mps_min_sms >= 1);
    cr_assert(m.meas_prior_rel_sd > 0);
    cr_assert(m.meas_compute_floor >= 0 && m.meas_compute_floor < 1);
    cr_assert(m.meas_host_floor >= 0 && m.meas_host_floor < 1);
    cr_assert(m.ts[0].eta[2] > 0 && m.ts[0].eta[2] <= 1);
    cr_assert_eq(phys_ts_class_index(&m, m.ts[0].name), 0);
    diag_destroy(d);
}

/* Each bad file's first error, exactly. A prior's log-sd of 0 would pin P and M to the GPM split
 * (model/fit/wmeas.h): the loader refuses it. */
Test(physics, bad_file_gives_exact_message)
{
    static const struct {
        const char *yaml, *first;
    } cases[] = {
        {"version: 1\nroofline_p: {value: 0.5, src: x}\n",
         "p.yaml:2:21: error: roofline_p.value: out of range; expected a number from 1 to 64, "
         "got '0.5'"},
        {"version: 1\nmeas_prior_rel_sd: {value: 0, src: x}\n",
         "p.yaml:2:28: error: meas_prior_rel_sd.value: out of range; expected a number above 0 "
         "and at most 10, got '0'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        diag *d = diag_create();
        phys_params m;
        cr_assert_eq(physics_load_buffer("p.yaml", cases[i].yaml, strlen(cases[i].yaml), d, &m),
                     SIM_EINPUT, "case %zu", i);
        cr_assert_geq(diag_error_count(d), 1);
        cr_assert_str_eq(fx_diag_message(d, 0), cases[i].first);
        diag_destroy(d);
    }
}

Test(speed, compute_only_is_host_plus_work_over_sms)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile p = {.name = "c", .host_s_fixed = 1.0};
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 200.0;
    speed_result r;
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    cr_assert_eq(r.outcome, SPEED_OK);
    cr_assert_float_eq(r.unit_time_s, 1.0 + 200.0 / 100, 1e-12);
    f.c.mig = &f.g.profiles[0];
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    cr_assert_float_eq(r.unit_time_s, 1.0 + 200.0 / 14, 1e-12);
    cr_assert_float_eq(r.throughput, 1.0 / r.unit_time_s, 1e-12);
}

Test(speed, parallelism_caps_sms_and_scales_with_batch)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile p = {.name = "b", .unit_is_sample = true, .max_sms_per_sample = 10};
    p.compute_sm_s_per_sample[WL_CLASS_TENSOR] = 1.0;
    speed_result r;
    predict_unit_time(&p, 4, &f.c, &f.m, &r); /* P = 40 SMs < 100 */
    cr_assert_float_eq(r.sms_used, 40, 1e-12);
    cr_assert_float_eq(r.unit_time_s, (4.0 / 40) / 4, 1e-12);
    predict_unit_time(&p, 20, &f.c, &f.m, &r); /* P = 200 > 100 */
    cr_assert_float_eq(r.sms_used, 100, 1e-12);
    cr_assert_float_eq(r.unit_time_s, (20.0 / 100) / 20, 1e-12);
}

Test(speed, roofline_sum_and_max)
{
    cr_assert_float_eq(speed_roofline(2, 3, 1), 5, 1e-12);
    cr_assert_float_eq(speed_roofline(2, 3, 64), 3, 1e-12);
    cr_assert_float_eq(speed_roofline(3, 4, 2), 5, 1e-12);
    cr_assert_float_eq(speed_roofline(0, 4, 2), 4, 1e-12);
}

Test(speed, bandwidth_follows_slices_and_drive_curve)
{
    gpu_type g = fixture_gpu();
    phys_params m = fixture_params();
    cr_assert_float_eq(speed_bandwidth(&g, 100, 8, 8, &m), 1e12, 1);
    cr_assert_float_eq(speed_bandwidth(&g, 14, 1, 8, &m), 1e12 / 8, 1);
    m.bw_drive_sm_frac = 0.5; /* s0 = 50 SMs */
    double full = speed_bandwidth(&g, 100, 8, 8, &m);
    cr_assert_float_eq(full, 1e12, 1);
    double few = speed_bandwidth(&g, 10, 8, 8, &m);
    cr_assert_float_eq(few, 1e12 * (1 - exp(-0.2)) / (1 - exp(-2.0)), 1);
}

/* MPS thread percentage -> SMs (speed_mps_sms): p % of the SMs rounded DOWN to whole TPCs of 2
 * SMs, at least 8, at most the partition's. By hand on 132 SMs: 25 % = 33 SMs -> 16 TPCs = 32;
 * 50 % = 66 -> 66; 75 % = 99 -> 98; 10 % = 13.2 -> 12; 5 % = 6.6 -> 6, below the minimum -> 8;
 * 0 and 100 % -> all 132. On a 6-SM partition 50 % (3 -> 2 -> 8) is clamped to its 6 SMs. */
Test(speed, mps_thread_percentage_gives_whole_tpcs_rounded_down)
{
    phys_params m = fixture_params();
    m.mps_sm_granule = 2;
    m.mps_min_sms = 8;
    cr_assert_eq(speed_mps_sms(132, 25, &m), 32);
    cr_assert_eq(speed_mps_sms(132, 50, &m), 66);
    cr_assert_eq(speed_mps_sms(132, 75, &m), 98);
    cr_assert_eq(speed_mps_sms(132, 10, &m), 12);
    cr_assert_eq(speed_mps_sms(132, 5, &m), 8);
    cr_assert_eq(speed_mps_sms(132, 0, &m), 132);
    cr_assert_eq(speed_mps_sms(132, 100, &m), 132);
    cr_assert_eq(speed_mps_sms(6, 50, &m), 6);
    m.mps_sm_granule = 0; /* not stated: single SMs, no minimum */
    m.mps_min_sms = 0;
    cr_assert_eq(speed_mps_sms(132, 25, &m), 33);
}

Test(speed, oom_and_invalid_are_reported)
{
    phys_fx f;
    phys_fx_init(&f);
    wl_profile p = {.name = "m", .mem_footprint_bytes_fixed = 6.0 * (1ull << 30)};
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 1;
    speed_result r;
    f.c.mig = &f.g.profiles[0];
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    cr_assert_eq(r.outcome, SPEED_OOM);
    cr_assert_str_eq(speed_outcome_name(r.outcome), "oom");
    f.c.mig = NULL;
    f.c.sharing = SHARE_TIMESLICE;
    f.c.peers = 7; /* 7 x 6 GiB > 40 GiB: co-runners share one memory */
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    cr_assert_eq(r.outcome, SPEED_OOM);
    f.c.peers = 6;
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    cr_assert_eq(r.outcome, SPEED_OK);
    f.c.peers = 0;
    predict_unit_time(&p, 1, &f.c, &f.m, &r);
    cr_assert_eq(r.outcome, SPEED_INVALID);
    cr_assert_neq(r.reason[0], '\0');
}

Test(power, cap_lowers_clock_as_alpha_says)
{
    gpu_type g = fixture_gpu();
    g.tdp_w = 200;
    phys_params m = fixture_params();
    m.power_sm_w[WL_CLASS_TENSOR] = 4; /* 100 SMs demand 400 W at f = 1 */
    m.power_sm_w[WL_CLASS_FP32] = 1;
    double busy[WL_CLASS_COUNT] = {0};
    busy[WL_CLASS_TENSOR] = 100;
    cr_assert_float_eq(power_clock_factor(&g, &m, busy), pow(0.5, 1.0 / 3), 1e-12);
    busy[WL_CLASS_TENSOR] = 40; /* 160 W: under the cap */
    cr_assert_float_eq(power_clock_factor(&g, &m, busy), 1.0, 1e-12);
    busy[WL_CLASS_TENSOR] = 0;
    busy[WL_CLASS_FP32] = 100; /* CUDA-core work draws less */
    cr_assert_float_eq(power_clock_factor(&g, &m, busy), 1.0, 1e-12);
}

/* Reported board power (power_board_w) by hand: TDP 200 W, idle 0.2 x 200 = 40 W, so the SMs'
 * draw D maps to P = 40 + 160 D / 200. fp32 at 1 W per SM: 100 SMs busy in the busy phases
 * (100 W < 200 W: full clock) and 50 on average (busy half of the time): D = 50 W, P = 80 W.
 * Tensor at 4 W per SM: the busy phases want 400 W, the clock drops to f = 0.5^(1/3) (alpha 3),
 * so they draw the budget and 50 SMs on average draw D = 50 x 4 x 0.5 = 100 W: P = 120 W, idle
 * plus half the range to the TDP. No SM busy: the idle 40 W; an unsourced TDP: 0. */
Test(power, board_power_at_a_known_busy_fraction)
{
    gpu_type g = fixture_gpu();
    g.tdp_w = 200;
    phys_params m = fixture_params();
    m.power_board_idle_frac = 0.2;
    m.power_sm_w[WL_CLASS_FP32] = 1;
    m.power_sm_w[WL_CLASS_TENSOR] = 4;
    double busy[WL_CLASS_COUNT] = {0}, peak[WL_CLASS_COUNT] = {0};
    cr_assert_float_eq(power_board_w(&g, &m, busy, peak), 40.0, 1e-12);
    busy[WL_CLASS_FP32] = 50;
    peak[WL_CLASS_FP32] = 100;
    cr_assert_float_eq(power_board_w(&g, &m, busy, peak), 80.0, 1e-12);
    busy[WL_CLASS_FP32] = peak[WL_CLASS_FP32] = 0;
    busy[WL_CLASS_TENSOR] = 50;
    peak[WL_CLASS_TENSOR] = 100;
    cr_assert_float_eq(power_board_w(&g, &m, busy, peak), 120.0, 1e-9);
    g.tdp_w = 0;
    cr_assert_float_eq(power_board_w(&g, &m, busy, peak), 0.0, 1e-12);
}

Test(power, busy_mig_instances_share_the_budget)
{
    gpu_type g = fixture_gpu();
    g.tdp_w = 200;
    phys_params m = fixture_params();
    m.power_sm_w[WL_CLASS_TENSOR] = 4;
    wl_profile p = {.name = "t"};
    p.compute_sm_s_fixed[WL_CLASS_TENSOR] = 14;
    partition_cfg c;
    partition_cfg_init(&c, &g);
    c.mig = &g.profiles[0];
    speed_result alone, seven;
    predict_unit_time(&p, 1, &c, &m, &alone);
    c.mig_busy = 7;
    predict_unit_time(&p, 1, &c, &m, &seven);
    cr_assert_float_eq(alone.clock_factor, 1.0, 1e-12);
    /* 7 x 14 = 98 SMs x 4 W = 392 W against 200 W */
    cr_assert_float_eq(seven.clock_factor, pow(200.0 / 392.0, 1.0 / 3), 1e-12);
    cr_assert_float_eq(seven.unit_time_s, 1.0 / seven.clock_factor, 1e-12);
}

/* Power weighted by busyness: 100 SMs of fp32 at 2 W each demand 200 W against a 100 W budget
 * when busy all the time, so a GPU-only job (C = 100 SM-s) runs at f = (100/200)^(1/3) and takes
 * 1 / f s. A job with H = 1 s and the same C is busy half of the time at f = 1 (u = 1 / (1 + 1)),
 * drawing 100 SMs x 0.5 x 2 W = 100 W: exactly the budget, so f = 1 and it takes 1 + 1 = 2 s
 * (without the weighting it would throttle to 1 + 1 / f = 2.26 s). The cap's window, 2000 s, holds
 * exactly 1000 such iterations, so the weight is exactly u = 1/2 (power_busy_weight). Under a cap
 * whose window (0.5 s) is shorter than the busy phase (G = 1 s), the window's average reaches the
 * full busy power: the SMs count fully and the job throttles as the GPU-only one does,
 * f = (100 / 200)^(1/3), t = 1 + 1 / f. */
Test(power, idle_phases_do_not_draw_the_sms_power)
{
    gpu_type g = fixture_gpu();
    g.tdp_w = 100;
    phys_params m = fixture_params();
    m.power_sm_w[WL_CLASS_FP32] = 2;
    m.power_window_s = 2000;
    partition_cfg c;
    partition_cfg_init(&c, &g);
    wl_profile busy = {.name = "busy"};
    busy.compute_sm_s_fixed[WL_CLASS_FP32] = 100.0;
    speed_result r;
    predict_unit_time(&busy, 1, &c, &m, &r);
    cr_assert_float_eq(r.unit_time_s, 1.0 / pow(0.5, 1.0 / 3), 1e-9);
    wl_profile half = busy;
    half.host_s_fixed = 1.0;
    predict_unit_time(&half, 1, &c, &m, &r);
    cr_assert_float_eq(r.unit_time_s, 2.0, 1e-9);
    cr_assert_float_eq(r.clock_factor, 1.0, 1e-12);
    m.power_window_s = 0.5;
    predict_unit_time(&half, 1, &c, &m, &r);
    double f = pow(0.5, 1.0 / 3);
    cr_assert_float_eq(r.clock_factor, f, 1e-12);
    cr_assert_float_eq(r.unit_time_s, 1.0 + 1.0 / f, 1e-9);
}

/* The peak of the window's moving average of a square wave (busy G of every period t), by hand:
 * n = floor(window / t) whole periods hold n G; the rest r = window - n t holds at most min(G, r). */
Test(power, busy_weight_is_the_windowed_peak)
{
    /* G >= window: a window fits inside one busy phase */
    cr_assert_float_eq(power_busy_weight(0.06, 0.1, 0.05), 1.0, 1e-15);
    cr_assert_float_eq(power_busy_weight(0.05, 0.2, 0.05), 1.0, 1e-15);
    /* window >> t: 50 whole periods of 20 ms, 10 ms busy each: 0.5 = G / t */
    cr_assert_float_eq(power_busy_weight(0.01, 0.02, 1.0), 0.5, 1e-12);
    /* and 10 ms more, all of it busy: (50 x 0.01 + 0.01) / 1.01 */
    cr_assert_float_eq(power_busy_weight(0.01, 0.02, 1.01), 0.51 / 1.01, 1e-12);
    /* intermediate: t = 23 ms, G = 13 ms, window 50 ms: n = 2, r = 4 ms < G:
     * (2 x 13 + 4) / 50 = 0.6 (G / t = 0.565) */
    cr_assert_float_eq(power_busy_weight(0.013, 0.023, 0.05), 0.6, 1e-12);
    /* t = 30 ms, G = 20 ms, window 50 ms: n = 1, r = 20 ms: (20 + 20) / 50 = 0.8 */
    cr_assert_float_eq(power_busy_weight(0.02, 0.03, 0.05), 0.8, 1e-12);
    /* never idle, never busy, an instantaneous cap */
    cr_assert_float_eq(power_busy_weight(0.03, 0.03, 0.05), 1.0, 1e-15);
    cr_assert_float_eq(power_busy_weight(0.0, 0.03, 0.05), 0.0, 1e-15);
    cr_assert_float_eq(power_busy_weight(0.01, 0.03, 0.0), 1.0, 1e-15);
}
