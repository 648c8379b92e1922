/* tests/unit/phys_fixture.h - a synthetic GPU and plain loss factors for the physics unit tests.
 * "TEST-GPU" is made up (round numbers), so formulas can be checked by hand; the published tables
 * are checked by test_validate.c. */
#ifndef SIMPROJ_TESTS_PHYS_FIXTURE_H
#define SIMPROJ_TESTS_PHYS_FIXTURE_H

#include <string.h>

#include "model/physics/predict.h"
#include "model/physics/speed.h"

static inline gpu_type fixture_gpu(void)
{
    gpu_type g;
    memset(&g, 0, sizeof g);
    g.name = "TEST-GPU";
    g.sms_total = 100;
    g.sms_mig_full = 98;
    g.compute_slices = 7;
    g.memory_slices = 8;
    g.max_mig_instances = 7;
    g.mem_bytes = 40ull << 30;
    g.mem_bw_bytes_per_s = 1e12;
    g.tdp_w = 0; /* no power cap unless a test sets one */
    g.n_profiles = 2;
    g.profiles[0] = (mig_profile){.name = "1g.5gb",
                                  .compute_slices = 1,
                                  .mem_slices = 1,
                                  .sms = 14,
                                  .mem_bytes = 5ull << 30,
                                  .max_instances = 7};
    g.profiles[1] = (mig_profile){.name = "3g.20gb",
                                  .compute_slices = 3,
                                  .mem_slices = 4,
                                  .sms = 42,
                                  .mem_bytes = 20ull << 30,
                                  .max_instances = 2};
    return g;
}

/* Sum roofline, full bandwidth, no MIG loss, no power cap, η = 0.8; a measured split's compute
 * and host floors of 1 % and a prior log-sd of 0.25 (model/fit/wmeas.h). */
static inline phys_params fixture_params(void)
{
    phys_params m;
    memset(&m, 0, sizeof m);
    m.roofline_p = 1;
    m.bw_stream_eff = 1;
    m.mig_sm_eff = 1;
    m.power_alpha = 3;
    m.clock_min_frac = 0.1;
    m.meas_prior_rel_sd = 0.25;
    m.meas_compute_floor = 0.01;
    m.meas_host_floor = 0.01;
    m.n_ts = 1;
    for (int k = 0; k <= PHYS_MAX_K; k++) {
        m.ts[0].eta[k] = k < 2 ? 1.0 : 0.8;
    }
    return m;
}

/* The start of most physics tests: the fixture GPU, its loss factors and a partition of it (the
 * whole GPU alone; tests change its sharing). c points at g: init in place, never copy. */
typedef struct phys_fx {
    gpu_type g;
    phys_params m;
    partition_cfg c;
} phys_fx;

static inline void phys_fx_init(phys_fx *f)
{
    f->g = fixture_gpu();
    f->m = fixture_params();
    partition_cfg_init(&f->c, &f->g);
}

/* The time per unit of p at batch 1 on f's partition (predict_unit_time's central value). */
static inline double phys_fx_time(const phys_fx *f, const wl_profile *p)
{
    speed_result r;
    predict_unit_time(p, 1, &f->c, &f->m, &r);
    return r.unit_time_s;
}

#endif
