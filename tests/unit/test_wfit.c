/* Unit tests for model/wfit.h: recover known profile parameters from synthetic observations,
 * report unpinned parameters with the prior used, and fit OOM outcomes. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sim/err.h"
#include "tests/unit/phys_fixture.h"
#include "model/predict.h"
#include "model/wfit.h"

static wfit_obs observe(const wl_profile *truth, const gpu_type *g, const mig_profile *mig,
                        const phys_params *m)
{
    wfit_obs o = {.batch = 1, .gpu_util = -1};
    partition_cfg_init(&o.cfg, g);
    o.cfg.mig = mig;
    speed_result r;
    predict_unit_time(truth, 1, &o.cfg, m, &r);
    o.unit_time_s = r.unit_time_s;
    return o;
}

Test(wfit, recovers_host_and_compute_from_three_partitions)
{
    gpu_type g = fixture_gpu();
    phys_params m = fixture_params();
    wl_profile truth = {.name = "sim", .host_s_fixed = 3.0};
    truth.compute_sm_s_fixed[WL_CLASS_FP32] = 2500.0;
    wfit_obs obs[3] = {observe(&truth, &g, NULL, &m), observe(&truth, &g, &g.profiles[1], &m),
                       observe(&truth, &g, &g.profiles[0], &m)};
    wfit_spec s = {.n_profiles = 1, .model = m, .n_free = 2};
    s.profiles[0] = (wl_profile){.name = "sim", .host_s_fixed = 1.0};
    s.profiles[0].compute_sm_s_fixed[WL_CLASS_FP32] = 1000.0;
    s.free[0] = (wfit_free){.which = WL_P_HOST_S_FIXED};
    s.free[1] = (wfit_free){.which = WL_P_COMPUTE_FIXED};
    wfit_result r;
    cr_assert_eq(wfit_fit(&s, 3, obs, &r), 0);
    cr_assert_float_eq(r.params[0].value, 3.0, 1e-4);
    cr_assert_float_eq(r.params[1].value, 2500.0, 1e-2);
    cr_assert_str_eq(r.params[0].name, "sim.host_s_fixed");
    cr_assert(r.params[0].pinned && r.params[1].pinned);
    for (int i = 0; i < 3; i++) {
        cr_assert_lt(fabs(r.rel_residual[i]), 1e-6);
    }
    wfit_result_fini(&r);
}

Test(wfit, one_observation_cannot_pin_two_parameters)
{
    gpu_type g = fixture_gpu();
    phys_params m = fixture_params();
    wl_profile truth = {.name = "sim", .host_s_fixed = 3.0};
    truth.compute_sm_s_fixed[WL_CLASS_FP32] = 2500.0;
    wfit_obs obs[1] = {observe(&truth, &g, NULL, &m)};
    wfit_spec s = {.n_profiles = 1, .model = m, .n_free = 2};
    s.profiles[0] = truth;
    s.free[0] = (wfit_free){.which = WL_P_HOST_S_FIXED, .has_prior = true,
                            .prior = {.mean = 2.0, .rel_sd = 0.5, .source = "class prior"}};
    s.free[1] = (wfit_free){.which = WL_P_COMPUTE_FIXED};
    wfit_result r;
    cr_assert_eq(wfit_fit(&s, 1, obs, &r), 0);
    cr_assert_not(r.params[0].pinned);
    cr_assert_str_eq(r.params[0].assumed, "prior 2 (class prior)");
    /* the fit still reproduces the one observation */
    cr_assert_lt(fabs(r.rel_residual[0]), 1e-3);
    wfit_result_fini(&r);
}

Test(wfit, oom_outcome_pushes_footprint_above_memory)
{
    gpu_type g = fixture_gpu();
    phys_params m = fixture_params();
    wl_profile start = {.name = "big", .host_s_fixed = 1.0,
                        .mem_footprint_bytes_fixed = 1.0 * (1ull << 30)};
    start.compute_sm_s_fixed[WL_CLASS_FP32] = 100.0;
    wfit_obs obs[2];
    obs[0] = observe(&start, &g, &g.profiles[1], &m); /* ran on 3g.20gb */
    obs[1] = (wfit_obs){.batch = 1, .is_oom = true, .gpu_util = -1};
    partition_cfg_init(&obs[1].cfg, &g);
    obs[1].cfg.mig = &g.profiles[0]; /* failed on 1g.5gb */
    wfit_spec s = {.n_profiles = 1, .model = m, .n_free = 1};
    s.profiles[0] = start;
    s.free[0] = (wfit_free){.which = WL_P_MEM_FOOTPRINT_FIXED};
    wfit_result r;
    wfit_fit(&s, 2, obs, &r);
    double fp = r.params[0].value;
    cr_assert_gt(fp, 5.0 * (1ull << 30) * 0.999, "footprint %g", fp);
    cr_assert_leq(fp, 20.0 * (1ull << 30));
    cr_assert_float_eq(r.rel_residual[1], 0.0, 1e-12);
    wfit_result_fini(&r);
}

Test(wfit, rejects_unusable_spec)
{
    wfit_spec s = {.n_profiles = 1, .n_free = 1};
    s.free[0] = (wfit_free){.which = WL_P_COUNT};
    wfit_obs o = {.batch = 1, .unit_time_s = 1, .gpu_util = -1};
    wfit_result r;
    cr_assert_eq(wfit_fit(&s, 1, &o, &r), SIM_EINPUT);
    wfit_result_fini(&r);
}
