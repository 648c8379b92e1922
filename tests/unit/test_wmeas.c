/* Unit tests for model/fit/wmeas.h: the split of a solo run's GPM and kernel-census measurements
 * into P, M and C, and the host time a run's time and utilisation imply. The GPU is the
 * synthetic TEST-GPU (100 SMs, 1 TB/s, every SM drives the whole bandwidth), so every expected
 * value is worked out by hand in the comment beside it. */
#include <criterion/criterion.h>

#include "model/fit/wmeas.h"
#include "tests/unit/phys_fixture.h"

/* The split of (t, u, b, a, d) on TEST-GPU; the call must succeed. */
static wmeas_split split_ok(double t, double u, double b, double a, double d)
{
    gpu_type g = fixture_gpu();
    phys_params m = fixture_params();
    wmeas_split s;
    cr_assert_eq(wmeas_split_solo(&g, &m,
                                  &(wmeas_solo){.iter_s = t, .gpu_util = u, .kernel_busy = b,
                                                .sm_activity = a, .dram_util = d},
                                  &s),
                 0);
    return s;
}

/* t = 0.1 s, u = 0.6, b = 0.5, a = 0.2, d = 0.25:
 *   P = a / b * s = 0.2 / 0.5 * 100 = 40 SMs
 *   M = d * BW * t = 0.25 * 1e12 * 0.1 = 2.5e10 bytes
 *   G = u t = 0.06 s; memory time M / BW = 0.025 s; compute time 0.035 s; C = 0.035 * 40 = 1.4 */
Test(wmeas, split_of_a_mixed_run)
{
    wmeas_split s = split_ok(0.1, 0.6, 0.5, 0.2, 0.25);
    cr_assert_float_eq(s.max_sms, 40.0, 1e-12);
    cr_assert_float_eq(s.mem_traffic_bytes, 2.5e10, 1e-3);
    cr_assert_float_eq(s.compute_sm_s, 1.4, 1e-12);
}

/* A memory-bound run whose DRAM time exceeds its GPU time, with more SM activity than busy
 * time: t = 0.1, u = 0.5 (G = 0.05 s), b = 0.4, a = 0.6, d = 0.9:
 *   P = min(0.6 / 0.4 * 100, 100) = 100
 *   M = 0.9 * 1e12 * 0.1 = 9e10 bytes (0.09 s > G)
 *   compute time = max(0.01 G, G - 0.09) = 0.0005 s (the fixture's 1 % floor); C = 0.0005 * 100 = 0.05 */
Test(wmeas, split_clamps_parallelism_and_compute)
{
    wmeas_split s = split_ok(0.1, 0.5, 0.4, 0.6, 0.9);
    cr_assert_float_eq(s.max_sms, 100.0, 1e-12);
    cr_assert_float_eq(s.mem_traffic_bytes, 9e10, 1e-3);
    cr_assert_float_eq(s.compute_sm_s, 0.05, 1e-12);
    /* a tiny activity keeps at least one SM: a = 0.001, b = 0.5 gives 0.2 SMs -> 1 */
    cr_assert_float_eq(split_ok(0.1, 0.5, 0.5, 0.001, 0.1).max_sms, 1.0, 1e-12);
}

/* Measurements outside their range are refused and leave the output untouched. */
Test(wmeas, split_refuses_out_of_range)
{
    gpu_type g = fixture_gpu();
    phys_params m = fixture_params();
    wmeas_split s = {.max_sms = -7};
    const wmeas_solo bad[] = {
        {.iter_s = 0, .gpu_util = 0.5, .kernel_busy = 0.5, .sm_activity = 0.5, .dram_util = 0.5},
        {.iter_s = 1, .gpu_util = 0, .kernel_busy = 0.5, .sm_activity = 0.5, .dram_util = 0.5},
        {.iter_s = 1, .gpu_util = 0.5, .kernel_busy = 1.2, .sm_activity = 0.5, .dram_util = 0.5},
        {.iter_s = 1, .gpu_util = 0.5, .kernel_busy = 0.5, .sm_activity = 50, .dram_util = 0.5},
        {.iter_s = 1, .gpu_util = 0.5, .kernel_busy = 0.5, .sm_activity = 0.5, .dram_util = 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(wmeas_split_solo(&g, &m, &bad[i], &s), -1, "case %zu", i);
        cr_assert_eq(s.max_sms, -7);
    }
}

/* H from t = (1 - o) H + max(o H, G), G = u t, at t = 1 s:
 *   o = 0,   u = 0.3: H = 0.7
 *   o = 0.5, u = 0.6: H = 0.4 / 0.5 = 0.8 (o H = 0.4 <= G = 0.6: consistent)
 *   o = 0.5, u = 0.3: 0.7 / 0.5 = 1.4 would give o H = 0.7 > G, so the host bounds: H = t = 1
 *   o = 1,   u = 0.4: H = t = 1
 *   o = 0,   u = 1:   H = 0, floored at the fixture's 1 % of t = 0.01 */
Test(wmeas, host_time_from_time_and_utilisation)
{
    phys_params m = fixture_params();
    cr_assert_float_eq(wmeas_host_s(&m, 1.0, 0.3, 0.0), 0.7, 1e-12);
    cr_assert_float_eq(wmeas_host_s(&m, 1.0, 0.6, 0.5), 0.8, 1e-12);
    cr_assert_float_eq(wmeas_host_s(&m, 1.0, 0.3, 0.5), 1.0, 1e-12);
    cr_assert_float_eq(wmeas_host_s(&m, 1.0, 0.4, 1.0), 1.0, 1e-12);
    cr_assert_float_eq(wmeas_host_s(&m, 1.0, 1.0, 0.0), 0.01, 1e-12);
    /* and the time model gives t back: o = 0.5, H = 0.8, G = 0.6 */
    cr_assert_float_eq(wl_iter_time(0.8, 0.5, 0.6), 1.0, 1e-12);
}
