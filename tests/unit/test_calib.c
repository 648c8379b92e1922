/* Unit tests for calibration reading and fitting (experiments/calib_json.h, model/fit/calfit.h) and
 * `slicesim fit`. They run the fits on the files recorded on real GPUs (calib/results/), on
 * synthetic data with known parameters, and on ../shared/validation/h100-probe.csv when present.
 * Bounds on fitted values are sanity bounds (physically possible per-SM rates and bandwidths),
 * not published figures. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "experiments/calib_json.h"
#include "model/fit/calfit.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "sh.h"
#include "tests/unit/diagfx.h"

#define H100_FILE "calib/results/2026-11-22-h100-sxm.json"
#define H200_FILE "calib/results/2026-11-22-h200-sxm-x2.json"
#define H100_RUN2 "calib/results/2026-11-22-h100-sxm-run2.json"

static cal_data *load(const char *path)
{
    cal_data *d = xcalloc(1, sizeof *d, "test data");
    diag *dg = diag_create();
    int rc = calib_json_load_file(path, d, dg);
    if (rc) {
        diag_print(dg, stderr);
    }
    cr_assert_eq(rc, 0, "loading %s: %s", path, sim_strerror(rc));
    diag_destroy(dg);
    return d;
}

static const cal_rate_fit *rate(const cal_fit *f, const char *name)
{
    for (int i = 0; i < f->n_rates; i++) {
        if (!strcmp(f->rates[i].name, name)) {
            return &f->rates[i];
        }
    }
    cr_assert_fail("no rate fit for %s", name);
    return NULL;
}

static const cal_bw_fit *bwfit(const cal_fit *f, const char *name)
{
    for (int i = 0; i < f->n_bw; i++) {
        if (!strcmp(f->bw[i].name, name)) {
            return &f->bw[i];
        }
    }
    cr_assert_fail("no bandwidth fit for %s", name);
    return NULL;
}

/* ------------------------------------------------------------------ recorded files */

Test(calib, recorded_h100_reads_every_section)
{
    cal_data *d = load(H100_FILE);
    cr_assert_eq(d->sms_total, 132);
    cr_assert_str_eq(d->device, "NVIDIA H100 80GB HBM3");
    cr_assert_eq(d->n_rates, 5);
    for (int i = 0; i < d->n_rates; i++) {
        cr_assert_eq(d->rates[i].n, 17, "%s", d->rates[i].name);
        cr_assert_eq(d->rates[i].pts[0].x, 8);
        cr_assert_eq(d->rates[i].pts[16].x, 132);
    }
    cr_assert_eq(d->n_bw, 2);
    cr_assert_eq(d->n_ts, 6, "3 kernel lengths x 2 gap modes");
    for (int i = 0; i < d->n_ts; i++) {
        cr_assert_eq(d->ts[i].n_k, 4);
        cr_assert_eq(d->ts[i].k[3], 8);
        cr_assert_eq(d->ts[i].n_rep[0], 2);
    }
    cr_assert(d->has_mps);
    cr_assert_eq(d->n_mps, 21);
    cr_assert_gt(d->mps_solo_compute_s, 0.0);
    cr_assert_gt(d->mps_solo_memory_s, 0.0);
    cr_assert_eq(d->mps[0].c[0].kernels, 202, "the first run's compute client launched 202");
    cr_assert_eq(d->ar_gpus, 0, "one GPU: no all-reduce");
    free(d);
}

Test(calib, recorded_h100_fits_are_sane_and_hold_out)
{
    cal_data *d = load(H100_FILE);
    cal_fit *f = xcalloc(1, sizeof *f, "fit");
    cr_assert_eq(calfit_all(d, f), 0);
    const cal_rate_fit *fp32 = rate(f, "fp32"), *bf16 = rate(f, "bf16_tensor");
    /* 128 FMA lanes x 2 FLOP x 1-2.2 GHz: 0.26..0.56 TFLOP/s per SM is possible at all */
    cr_assert(fp32->per_sm.value > 0.26 && fp32->per_sm.value < 0.57, "%g", fp32->per_sm.value);
    cr_assert_lt(fp32->per_sm.se, 0.05 * fp32->per_sm.value);
    cr_assert_lt(fp32->rms_rel, 0.05);
    cr_assert(bf16->per_sm.value > 8 * fp32->per_sm.value, "tensor cores well above FMA");
    cr_assert_lt(bf16->per_sm.value, 16.0);
    const cal_bw_fit *tr = bwfit(f, "triad");
    cr_assert_eq(tr->form, CAL_BW_SOFTMIN, "the corner needs the soft minimum");
    cr_assert_lt(tr->rss_softmin, tr->rss_mm);
    cr_assert(tr->bmax_gb_s.value > 1000 && tr->bmax_gb_s.value < 5000, "%g", tr->bmax_gb_s.value);
    cr_assert(tr->per_sm_gb_s.value > 20 && tr->per_sm_gb_s.value < 400);
    cr_assert_lt(tr->rms_rel, 0.05);
    int n_b2b = 0;
    for (int i = 0; i < f->n_ts; i++) {
        if (f->ts[i].gap_ms == 0) {
            n_b2b++;
            cr_assert_eq(f->ts[i].k[1], 2);
            cr_assert(f->ts[i].eta[1].value > 0.7 && f->ts[i].eta[1].value <= 1.0,
                      "eta(2) = %g at %g ms", f->ts[i].eta[1].value, f->ts[i].kernel_ms);
            cr_assert_float_eq(f->ts[i].eta[0].value, 1.0, 1e-12);
        }
    }
    cr_assert_eq(n_b2b, 3);
    cr_assert(f->has_mps);
    cr_assert(f->mps.eta_compute.value > 0.8 && f->mps.eta_compute.value < 1.2);
    cr_assert(f->mps.eta_memory.value > 0.8 && f->mps.eta_memory.value < 1.2);
    cr_assert_lt(f->mps.rms_rel, 0.1);
    cr_assert(!f->has_ar);
    double mape = 0, mx = 0;
    int n = 0;
    cr_assert_eq(calfit_holdout(d, &mape, &mx, &n), 0);
    cr_assert_geq(n, 40);
    cr_assert_lt(mape, 5.0, "holdout mape %g%%", mape);
    free(f);
    free(d);
}

Test(calib, repeated_h100_runs_give_the_same_parameters)
{
    cal_data *a = load(H100_FILE), *b = load(H100_RUN2);
    cal_fit *fa = xcalloc(1, sizeof *fa, "fit"), *fb = xcalloc(1, sizeof *fb, "fit");
    calfit_all(a, fa);
    calfit_all(b, fb);
    const char *fmts[] = {"fp64", "fp32", "fp16", "fp16_tensor", "bf16_tensor"};
    for (int i = 0; i < 5; i++) {
        double x = calfit_rate_eval(rate(fa, fmts[i]), 132);
        double y = calfit_rate_eval(rate(fb, fmts[i]), 132);
        cr_assert_lt(fabs(x - y) / x, 0.03, "%s: %g vs %g TFLOP/s", fmts[i], x, y);
    }
    double ba = bwfit(fa, "triad")->bmax_gb_s.value, bb = bwfit(fb, "triad")->bmax_gb_s.value;
    cr_assert_lt(fabs(ba - bb) / ba, 0.03, "Bmax %g vs %g", ba, bb);
    for (int i = 0; i < fa->n_ts; i++) {
        for (int j = 0; j < fb->n_ts; j++) {
            if (fa->ts[i].gap_ms == 0 && fb->ts[j].gap_ms == 0 &&
                fabs(fa->ts[i].kernel_ms / fb->ts[j].kernel_ms - 1) < 0.1) {
                cr_assert_lt(fabs(fa->ts[i].eta[1].value - fb->ts[j].eta[1].value), 0.01);
            }
        }
    }
    free(fb);
    free(fa);
    free(b);
    free(a);
}

Test(calib, recorded_gap_runs_are_checked_against_mva)
{
    cal_data *d = load(H100_FILE);
    double mape = 0, mx = 0;
    int n = 0;
    cr_assert_eq(calfit_ts_gap_check(d, &mape, &mx, &n), 0);
    cr_assert_eq(n, 9, "3 lengths x k = 2, 4, 8");
    cr_assert(mape > 0 && mape < 100, "%g", mape);
    cr_assert_geq(mx, mape);
    free(d);
}

Test(calib, recorded_h200_allreduce_alpha_beta)
{
    cal_data *d = load(H200_FILE);
    cr_assert_eq(d->ar_gpus, 2);
    cr_assert_eq(d->ar.n, 28, "8 B .. 1 GiB, doubling");
    cr_assert_eq(d->ar.pts[0].x, 8);
    cal_fit *f = xcalloc(1, sizeof *f, "fit");
    calfit_all(d, f);
    cr_assert(f->has_ar);
    cr_assert(f->ar.alpha_s.value > 1e-7 && f->ar.alpha_s.value < 1e-4, "%g", f->ar.alpha_s.value);
    cr_assert(f->ar.beta_bytes_per_s.value > 1e10 && f->ar.beta_bytes_per_s.value < 2e12);
    double mape = 0, mx = 0;
    int n = 0;
    cr_assert_eq(calfit_holdout(d, &mape, &mx, &n), 0);
    cr_assert_lt(mape, 5.0, "holdout mape %g%%", mape);
    free(f);
    free(d);
}

/* ------------------------------------------------------------------ synthetic data */

Test(calib, rate_fit_recovers_proportional_rate)
{
    cal_series s = {.name = "fp32"};
    for (int i = 0; i < 10; i++) {
        double x = 8.0 * (i + 1), y = 0.5 * x;
        s.pts[s.n++] = (cal_sample){x, y, y, y, 5};
    }
    cal_rate_fit f;
    cr_assert_eq(calfit_rate(&s, &f), 0);
    cr_assert_float_eq(f.per_sm.value, 0.5, 1e-9);
    cr_assert(!f.has_rolloff);
    cr_assert_float_eq(calfit_rate_eval(&f, 100), 50.0, 1e-7);
}

Test(calib, rate_fit_keeps_a_real_rolloff)
{
    cal_series s = {.name = "bf16_tensor"};
    for (int i = 0; i < 12; i++) {
        double x = 8.0 * (i + 1), y = 5.0 * x * (1 - 1e-3 * x) * (1 + ((i % 2) ? 1e-4 : -1e-4));
        s.pts[s.n++] = (cal_sample){x, y, y, y, 5};
    }
    cal_rate_fit f;
    cr_assert_eq(calfit_rate(&s, &f), 0);
    cr_assert(f.has_rolloff);
    cr_assert_float_eq(f.rolloff.value, 1e-3, 5e-5);
    cr_assert_float_eq(f.per_sm.value, 5.0, 5e-3);
}

Test(calib, bandwidth_fit_recovers_softmin_parameters)
{
    cal_series s = {.name = "triad"};
    for (int i = 0; i < 17; i++) {
        double x = i < 16 ? 8.0 * (i + 1) : 132, b = 110 * x;
        double y = b / pow(1 + pow(b / 3000.0, 4.0), 0.25);
        s.pts[s.n++] = (cal_sample){x, y, y, y, 5};
    }
    cal_bw_fit f;
    cr_assert_eq(calfit_bw(&s, &f), 0);
    cr_assert_eq(f.form, CAL_BW_SOFTMIN);
    cr_assert_float_eq(f.bmax_gb_s.value, 3000, 1e-3);
    cr_assert_float_eq(f.per_sm_gb_s.value, 110, 1e-5);
    cr_assert_float_eq(f.sharpness.value, 4.0, 1e-5);
}

Test(calib, bandwidth_fit_prefers_michaelis_menten_when_it_fits)
{
    cal_series s = {.name = "copy"};
    for (int i = 0; i < 12; i++) {
        double x = 8.0 * (i + 1), y = 4000 * x / (x + 30);
        s.pts[s.n++] = (cal_sample){x, y, y, y, 5};
    }
    cal_bw_fit f;
    cr_assert_eq(calfit_bw(&s, &f), 0);
    cr_assert_eq(f.form, CAL_BW_MM);
    cr_assert_float_eq(f.mm_bmax_gb_s.value, 4000, 1e-3);
    cr_assert_float_eq(f.s_half.value, 30, 1e-6);
}

Test(calib, allreduce_fit_recovers_alpha_beta)
{
    cal_series s = {.name = "allreduce"};
    double alpha = 4e-6, beta = 3e11;
    for (int i = 0; i < 20; i++) {
        double b = pow(2, 3 + 1.5 * i), t = 2 * alpha + b / beta; /* 2 GPUs */
        s.pts[s.n++] = (cal_sample){b, 1e3 * t, 1e3 * t, 1e3 * t, 7};
    }
    cal_ar_fit f;
    cr_assert_eq(calfit_allreduce(&s, 2, NULL, &f), 0);
    cr_assert_float_eq(f.alpha_s.value, alpha, 1e-12);
    cr_assert_float_eq(f.beta_bytes_per_s.value, beta, 1e2);
    cr_assert(f.alpha_pinned && f.beta_pinned);
    cr_assert_float_eq(calfit_allreduce_eval(&f, 1e9), 2 * alpha + 1e9 / beta, 1e-12);
}

/* A sweep with NCCL's protocol switch: LL (2 GPUs, alpha 3 us, beta 100 GB/s) up to 1 MiB,
 * Simple (alpha 8 us, beta 300 GB/s) from 2 MiB: at 2 MiB Simple's 2 x 8 + 2097152 / 3e5 =
 * 23.0 us is slower than LL's 1 MiB at 6 + 1048576 / 1e5 = 16.5 us, the jump a real sweep shows.
 * Both sides are exact alpha-beta lines, so the cut at 1 MiB leaves no residual and is found;
 * each side's fit recovers its own alpha and beta. */
Test(calib, allreduce_protocols_are_cut_at_the_jump)
{
    cal_series s = {.name = "allreduce"};
    for (int i = 0; i < 28; i++) {
        double b = pow(2, 3 + i);
        bool ll = b <= 1048576;
        double t = ll ? 2 * 3e-6 + b / 1e11 : 2 * 8e-6 + b / 3e11;
        s.pts[s.n++] = (cal_sample){b, 1e3 * t, 1e3 * t, 1e3 * t, 7};
    }
    cal_ar_fit f[2];
    double ll_max = 0;
    cr_assert_eq(calfit_allreduce_protocols(&s, 2, f, &ll_max), 0);
    cr_assert_eq(ll_max, 1048576);
    cr_assert_eq(f[0].n, 18);
    cr_assert_eq(f[1].n, 10);
    cr_assert_float_eq(f[0].alpha_s.value, 3e-6, 1e-12);
    cr_assert_float_eq(f[0].beta_bytes_per_s.value, 1e11, 1e3);
    cr_assert_float_eq(f[1].alpha_s.value, 8e-6, 1e-12);
    cr_assert_float_eq(f[1].beta_bytes_per_s.value, 3e11, 1e3);
    /* five rows cannot be cut into two sides of three */
    s.n = 5;
    cr_assert_eq(calfit_allreduce_protocols(&s, 2, f, &ll_max), SIM_EINPUT);
}

/* Rows whose time falls as the message grows (a latency-bound sweep with noise): unconstrained
 * least squares gives a negative slope, i.e. a negative bandwidth. 2 GPUs: t = 2 alpha + G/beta.
 * x = 1e5, 2e5, 3e5 B with t = 49, 48, 47 us (slope -1e-11 s/B). The bandwidth is not pinned:
 * held at the assumed 1e11 B/s, so the rest t - G/1e11 = 48, 46, 44 us is fitted by a constant
 * 2 alpha, its weighted mean with weights 1/t^2. Without an assumed value there is no fit. */
Test(calib, allreduce_fit_holds_a_negative_bandwidth_at_the_assumed_value)
{
    cal_series s = {.name = "allreduce", .n = 3};
    double t_us[3] = {49, 48, 47}, rest_us[3] = {48, 46, 44};
    double sw = 0, swr = 0;
    for (int i = 0; i < 3; i++) {
        s.pts[i] = (cal_sample){1e5 * (i + 1), 1e-3 * t_us[i], 1e-3 * t_us[i], 1e-3 * t_us[i], 5};
        double w = 1 / (t_us[i] * t_us[i]);
        sw += w;
        swr += w * rest_us[i];
    }
    cal_ar_fit f;
    cr_assert_eq(calfit_allreduce(&s, 2, NULL, &f), SIM_EINPUT);
    cal_ar_assume as = {3e-6, 1e11};
    cr_assert_eq(calfit_allreduce(&s, 2, &as, &f), 0);
    cr_assert(!f.beta_pinned);
    cr_assert_float_eq(f.beta_bytes_per_s.value, 1e11, 1e-3);
    cr_assert_eq(f.beta_bytes_per_s.se, 0);
    cr_assert(f.alpha_pinned);
    cr_assert_float_eq(f.alpha_s.value, 1e-6 * swr / sw / 2, 1e-15);
    cr_assert_gt(f.alpha_s.se, 0);
    cr_assert_lt(f.alpha_s.se, f.alpha_s.value);
}

/* A negative intercept: t = G/1e11 - 1 us at G = 1, 2, 3 MB (9, 19, 29 us). The latency is held
 * at the assumed 2 us (2 alpha = 4 us) and the slope refitted through the origin on the rest
 * r = t - 4 us = 5, 15, 25 us: c1 = sum(w G r) / sum(w G^2), w = 1/t^2; beta = 1/c1. */
Test(calib, allreduce_fit_holds_a_negative_latency_at_the_assumed_value)
{
    cal_series s = {.name = "allreduce", .n = 3};
    double t_us[3] = {9, 19, 29}, r_us[3] = {5, 15, 25};
    double sxr = 0, sxx = 0;
    for (int i = 0; i < 3; i++) {
        double g = 1e6 * (i + 1);
        s.pts[i] = (cal_sample){g, 1e-3 * t_us[i], 1e-3 * t_us[i], 1e-3 * t_us[i], 5};
        double w = 1 / (t_us[i] * t_us[i]);
        sxr += w * g * r_us[i] * 1e-6;
        sxx += w * g * g;
    }
    cal_ar_fit f;
    cr_assert_eq(calfit_allreduce(&s, 2, NULL, &f), SIM_EINPUT);
    cal_ar_assume as = {2e-6, 5e10};
    cr_assert_eq(calfit_allreduce(&s, 2, &as, &f), 0);
    cr_assert(!f.alpha_pinned);
    cr_assert_float_eq(f.alpha_s.value, 2e-6, 1e-18);
    cr_assert_eq(f.alpha_s.se, 0);
    cr_assert(f.beta_pinned);
    cr_assert_float_eq(f.beta_bytes_per_s.value, sxx / sxr, 1e2);
    cr_assert_geq(f.beta_bytes_per_s.se, 0);
}

Test(calib, timeslice_eta_is_k_t1_over_tk)
{
    cal_ts_length t = {.kernel_ms = 1, .gap_ms = 0, .kernels = 200, .n_k = 3, .k = {1, 2, 4},
                       .n_rep = {2, 2, 2}};
    t.makespan_s[0][0] = 0.2, t.makespan_s[0][1] = 0.2;
    t.makespan_s[1][0] = 0.5, t.makespan_s[1][1] = 0.5; /* eta(2) = 2 * 0.2 / 0.5 = 0.8 */
    t.makespan_s[2][0] = 1.0, t.makespan_s[2][1] = 1.0;  /* eta(4) = 0.8 */
    cal_ts_fit f;
    cr_assert_eq(calfit_timeslice(&t, &f), 0);
    cr_assert_float_eq(f.eta[1].value, 0.8, 1e-12);
    cr_assert_float_eq(f.eta[2].value, 0.8, 1e-12);
    cr_assert_float_eq(f.eta_mean.value, 0.8, 1e-12);
    cr_assert_float_eq(f.eta_mean.se, 0.0, 1e-12);
    t.k[0] = 2;
    cr_assert_eq(calfit_timeslice(&t, &f), SIM_EINPUT, "needs the solo run first");
}

/* ------------------------------------------------------------------ bad input */

static const char *first_error(const char *text, int *rc)
{
    static char msg[512];
    cal_data *d = xcalloc(1, sizeof *d, "test data");
    diag *dg = diag_create();
    *rc = calib_json_load_buffer("c.json", text, strlen(text), d, dg);
    snprintf(msg, sizeof msg, "%s", diag_error_count(dg) ? fx_diag_message(dg, 0) : "");
    diag_destroy(dg);
    free(d);
    return msg;
}

Test(calib, bad_json_message_is_exact)
{
    int rc = 0;
    const char *m = first_error("{\n  \"schema\": \"slicesim-calib\",\n  \"x\": [1, 2,, 3]\n}", &rc);
    cr_assert_eq(rc, SIM_EINPUT);
    cr_assert_str_eq(m, "c.json:3:14: error: invalid JSON; expected a JSON value, got ','");
    m = first_error("", &rc);
    cr_assert_str_eq(m, "c.json:1:1: error: invalid JSON; expected a JSON value, got 'end of file'");
    m = first_error("{\"a\": tru}", &rc);
    cr_assert_str_eq(m, "c.json:1:7: error: invalid JSON; expected a JSON value, got 't'");
    /* cJSON stops after the first value: text after it was once ignored */
    m = first_error("{\"schema\": \"slicesim-calib\"} x", &rc);
    cr_assert_eq(rc, SIM_EINPUT);
    cr_assert_str_eq(m, "c.json:1:30: error: invalid JSON; expected the end of the file after the "
                        "JSON value, got 'x'");
    /* a number is shown as written: cJSON reads 1e400 as inf */
    m = first_error("{\"schema\": \"slicesim-calib\", \"schema_version\": 1e400}", &rc);
    cr_assert_str_eq(m, "c.json:1:48: error: schema_version: expected 1 (the version this build "
                        "reads), got '1e400'");
}

Test(calib, schema_errors_name_the_field)
{
    int rc = 0;
    const char *m = first_error("{\"schema\": \"other\", \"schema_version\": 1}", &rc);
    cr_assert_eq(rc, SIM_EINPUT);
    cr_assert_str_eq(m, "c.json:1:12: error: schema: expected \"slicesim-calib\", got '\"other\"'");
    m = first_error("{\"schema\": \"slicesim-calib\", \"schema_version\": 2}", &rc);
    cr_assert_str_eq(m, "c.json:1:48: error: schema_version: expected 1 (the version this build "
                        "reads), got '2'");
    m = first_error("{\"schema\": \"slicesim-calib\", \"schema_version\": 1, \"flops\": {\"device\": "
                    "{\"sms\": 132}, \"runs\": [{\"format\": \"fp32\", \"sms\": \"x\", "
                    "\"tflops_median\": 1, \"tflops_min\": 1, \"tflops_max\": 1, \"reps\": 3}]}}",
                    &rc);
    cr_assert_str_eq(m, "c.json:1:120: error: flops.runs[0].sms: expected a number in [1, 100000], "
                        "got "
                        "'\"x\"'");
    m = first_error("[1]", &rc);
    cr_assert_str_eq(m, "c.json:1:1: error: (root): expected an object, got 'an array'");
    /* an MPS worker's kernel count may be absent (0: not recorded), but not anything else */
    m = first_error("{\"schema\": \"slicesim-calib\", \"schema_version\": 1, \"flops\": {\"device\": "
                    "{\"sms\": 132}, \"runs\": []}, \"mps\": {\"runs\": [{\"thread_percentage\": 100, "
                    "\"mix\": \"c\", \"ok\": true, \"workers\": [{\"kind\": \"compute\", "
                    "\"sms_reported\": 132, \"wall_s\": 0.2, \"kernels\": \"x\"}]}]}}",
                    &rc);
    cr_assert_eq(rc, SIM_EINPUT);
    cr_assert_str_eq(m, "c.json:1:245: error: mps.runs[0].workers[0].kernels: expected a number in "
                        "[1, "
                        "1e+12], got '\"x\"'");
}

Test(calib, cli_bad_json_exits_2_with_the_message)
{
    const char *path = "build/test-calib-bad.json";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\n  \"schema\": \"slicesim-calib\",\n  \"x\": [1, 2,, 3]\n}", f);
    fclose(f);
    FILE *p = popen("./slicesim fit build/test-calib-bad.json -o build/test-calib-out.json 2>&1", "r");
    cr_assert_not_null(p);
    char line[512] = "";
    cr_assert_not_null(fgets(line, sizeof line, p));
    int st = pclose(p);
    cr_assert(WIFEXITED(st));
    cr_assert_eq(WEXITSTATUS(st), 2);
    cr_assert_str_eq(line, "build/test-calib-bad.json:3:14: error: invalid JSON; expected a JSON "
                           "value, got ','\n");
    remove(path);
}

/* An option's value given twice or missing is a usage error (exit 2) naming both values, before
 * any file is read (fit's -o, --gpu, --catalog, --mig-device once took the last and an -o at the
 * end was an "unexpected argument"; fit-workload and predict share the rule, cli_option_value). */
Test(calib, cli_option_twice_or_without_value_exits_2)
{
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"fit c.json -o a.json -o b.json",
         "slicesim fit: error: option '-o' given twice; expected one value, got 'a.json' and "
         "'b.json'\n"},
        {"fit c.json -o", "slicesim fit: error: option '-o' needs a value\n"},
        {"fit c.json --gpu H100 --gpu A100",
         "slicesim fit: error: option '--gpu' given twice; expected one value, got 'H100' and "
         "'A100'\n"},
        {"fit-workload o.yaml -o a.yaml -o b.yaml",
         "slicesim fit-workload: error: option '-o' given twice; expected one value, got "
         "'a.yaml' and 'b.yaml'\n"},
        {"fit-workload o.yaml --calibration m.json --calibration n.json -o p.yaml",
         "slicesim fit-workload: error: option '--calibration' given twice; expected one value, "
         "got 'm.json' and 'n.json'\n"},
        {"predict p.yaml q.yaml --calibration-gpu",
         "slicesim predict: error: option '--calibration-gpu' needs a value\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[256], out[512];
        snprintf(cmd, sizeof cmd, "./slicesim %s 2>&1 >/dev/null", cases[i].args);
        cr_assert_eq(test_sh(cmd, out, sizeof out), 2, "%s", cases[i].args);
        cr_assert_str_eq(out, cases[i].message, "%s", cases[i].args);
    }
}

/* ------------------------------------------------------------------ model file round trip */

Test(calib, model_file_round_trips_through_calmodel_load_source)
{
    const char *out = "build/test-calib-model.json";
    int st = system("./slicesim fit " H200_FILE " -o build/test-calib-model.json > /dev/null");
    cr_assert(WIFEXITED(st));
    cr_assert_eq(WEXITSTATUS(st), 0);
    cal_data *d = load(H200_FILE);
    cal_fit *f = xcalloc(1, sizeof *f, "fit"), *m = xcalloc(1, sizeof *m, "model");
    calfit_all(d, f);
    diag *dg = diag_create();
    calapply_source src;
    int rc = calmodel_load_source(out, m, &src, dg);
    diag_print(dg, stderr);
    cr_assert_eq(rc, 0);
    cr_assert_eq(m->sms_total, 132);
    cr_assert_eq(m->n_rates, f->n_rates);
    for (int i = 0; i < f->n_rates; i++) {
        cr_assert_str_eq(m->rates[i].name, f->rates[i].name);
        cr_assert_float_eq(m->rates[i].per_sm.value, f->rates[i].per_sm.value, 1e-12);
        cr_assert_float_eq(calfit_rate_eval(&m->rates[i], 64), calfit_rate_eval(&f->rates[i], 64),
                           1e-9);
    }
    cr_assert_eq(m->n_bw, f->n_bw);
    cr_assert_float_eq(calfit_bw_eval(&m->bw[1], 40), calfit_bw_eval(&f->bw[1], 40), 1e-6);
    cr_assert_eq(m->n_ts, f->n_ts);
    cr_assert_float_eq(m->ts[0].eta[1].value, f->ts[0].eta[1].value, 1e-12);
    cr_assert(m->has_mps && m->has_ar);
    cr_assert_eq(m->ar.gpus, 2);
    cr_assert_float_eq(m->ar.beta_bytes_per_s.value, f->ar.beta_bytes_per_s.value, 1e-3);
    cr_assert(m->has_ar_proto && f->has_ar_proto);
    cr_assert_eq(m->ar_ll_max_bytes, f->ar_ll_max_bytes);
    for (int pr = 0; pr < 2; pr++) {
        cr_assert_float_eq(m->ar_proto[pr].alpha_s.value, f->ar_proto[pr].alpha_s.value, 1e-15);
        cr_assert_float_eq(m->ar_proto[pr].beta_bytes_per_s.value,
                           f->ar_proto[pr].beta_bytes_per_s.value, 1e-3);
    }
    diag_destroy(dg);
    free(m);
    free(f);
    free(d);
    remove(out);
}

/* Room for the path of load_model_text's temporary model file. */
#define MODEL_PATH_LEN 96

/* Load the model text t from a file in a fresh temporary directory (the file's name into path,
 * MODEL_PATH_LEN bytes) into m, reporting to dg; the directory is removed. Returns
 * calmodel_load_source's status. */
static int load_model_text(const char *t, char path[MODEL_PATH_LEN], cal_fit *m, diag *dg)
{
    char dir[64];
    cr_assert(test_tmpdir(dir, sizeof dir, "calmodel"));
    snprintf(path, MODEL_PATH_LEN, "%s/model.json", dir);
    cr_assert(test_write_text(path, t));
    calapply_source src;
    int rc = calmodel_load_source(path, m, &src, dg);
    cr_assert(test_rm_rf(dir));
    return rc;
}

Test(calib, model_file_with_wrong_form_is_rejected)
{
    const char *t = "{\"schema\": \"slicesim-calmodel\", \"schema_version\": 1, \"sms_total\": 8, "
                    "\"compute\": [], \"bandwidth\": [{\"kernel\": \"triad\", \"form\": \"cubic\"}], "
                    "\"timeslice\": [], \"mps\": null, \"allreduce\": null, "
                    "\"source\": {\"device\": \"NVIDIA H200\"}}";
    cal_fit *m = xcalloc(1, sizeof *m, "model");
    diag *dg = diag_create();
    char path[MODEL_PATH_LEN];
    cr_assert_eq(load_model_text(t, path, m, dg), SIM_EINPUT);
    char want[256];
    snprintf(want, sizeof want,
             "%s:1:127: error: bandwidth[0].form: expected \"softmin\" or \"michaelis-menten\", "
             "got '\"cubic\"'",
             path);
    cr_assert_str_eq(fx_diag_message(dg, 0), want);
    diag_destroy(dg);
    free(m);
}

/* An all-reduce fit whose per-protocol part is malformed is refused at its field. */
Test(calib, model_file_with_a_bad_protocol_fit_is_rejected)
{
    const char *t = "{\"schema\": \"slicesim-calmodel\", \"schema_version\": 1, \"sms_total\": 8, "
                    "\"compute\": [], \"bandwidth\": [], \"timeslice\": [], \"mps\": null, "
                    "\"allreduce\": {\"gpus\": 2, \"alpha_s\": 1e-5, \"alpha_s_se\": 0, "
                    "\"beta_bytes_per_s\": 3e11, \"beta_bytes_per_s_se\": 0, "
                    "\"ll_max_bytes\": 1048576, \"protocols\": {\"ll\": {\"alpha_s\": 5e-6, "
                    "\"alpha_s_se\": 0, \"beta_bytes_per_s\": 1e11, \"beta_bytes_per_s_se\": 0}, "
                    "\"simple\": {\"alpha_s\": 1e-5, \"alpha_s_se\": 0, "
                    "\"beta_bytes_per_s\": -3, \"beta_bytes_per_s_se\": 0}}}, "
                    "\"source\": {\"device\": \"NVIDIA H200\"}}";
    cal_fit *m = xcalloc(1, sizeof *m, "model");
    diag *dg = diag_create();
    char path[MODEL_PATH_LEN];
    cr_assert_eq(load_model_text(t, path, m, dg), SIM_EINPUT);
    cr_assert(strstr(fx_diag_message(dg, 0),
                     "allreduce.protocols.simple.beta_bytes_per_s: expected a number in [1, "
                     "1e+15], got '-3'"),
              "%s", fx_diag_message(dg, 0));
    cr_assert(!m->has_ar_proto);
    diag_destroy(dg);
    free(m);
}

/* ------------------------------------------------------------------ independent probe */

Test(calib, h100_probe_fits_the_same_forms)
{
    FILE *f = fopen("../shared/validation/h100-probe.csv", "r");
    if (!f) {
        cr_skip_test("../shared/validation/h100-probe.csv absent");
    }
    cal_series fma = {.name = "fp32"}, triad = {.name = "triad"};
    char line[256];
    while (fgets(line, sizeof line, f)) {
        char *end;
        double sms = strtod(line, &end);
        if (line[0] == '#' || end == line || *end != ',') {
            continue;
        }
        double v[4];
        char *p = end + 1;
        for (int i = 0; i < 4; i++) {
            v[i] = strtod(p, &end);
            p = end + 1;
        }
        fma.pts[fma.n++] = (cal_sample){sms, v[1], v[1], v[1], 1};
        triad.pts[triad.n++] = (cal_sample){sms, v[3], v[3], v[3], 1};
    }
    fclose(f);
    cr_assert_geq(fma.n, 8);
    cal_rate_fit r;
    cal_bw_fit b;
    cr_assert_eq(calfit_rate(&fma, &r), 0);
    cr_assert_lt(r.rms_rel, 0.05, "the probe's FMA rate is proportional to SMs too");
    cr_assert_eq(calfit_bw(&triad, &b), 0);
    cr_assert_lt(b.rms_rel, 0.06);
    cr_assert(b.bmax_gb_s.value > 1000 && b.bmax_gb_s.value < 5000);
}

/* ------------------------------------------------------------------ MIG devices */

#include <cjson/cJSON.h>

/* A calibration document as a node with MIG on writes it: the top-level sections null, one
 * MIG device holding the H100 file's flops runs at 64 SMs (measured whole) and its time-slice
 * section. */
static char *mig_document(void)
{
    FILE *f = fopen(H100_FILE, "rb");
    cr_assert_not_null(f);
    /* on the heap: a static one lies in every test process's .bss, which LeakSanitizer
     * reads through at each exit (the ASan tests' time) */
    char *text = malloc(1 << 20);
    cr_assert_not_null(text);
    size_t n = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    text[n] = 0;
    cJSON *src = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(src);
    cJSON *flops = cJSON_DetachItemFromObject(src, "flops");
    cJSON *ts = cJSON_DetachItemFromObject(src, "timeslice");
    cJSON *runs = cJSON_GetObjectItem(flops, "runs"), *keep = cJSON_CreateArray();
    for (int i = cJSON_GetArraySize(runs) - 1; i >= 0; i--) {
        if (cJSON_GetObjectItem(cJSON_GetArrayItem(runs, i), "sms")->valuedouble == 64) {
            cJSON_AddItemToArray(keep, cJSON_DetachItemFromArray(runs, i));
        }
    }
    cJSON_ReplaceItemInObject(flops, "runs", keep);
    cJSON_SetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(flops, "device"), "sms"), 64);
    cJSON *dev = cJSON_CreateObject();
    cJSON_AddStringToObject(dev, "profile", "4g.40gb");
    cJSON_AddStringToObject(dev, "uuid", "MIG-0000");
    cJSON_AddItemToObject(dev, "flops", flops);
    cJSON_AddItemToObject(dev, "timeslice", ts);
    cJSON_AddNullToObject(src, "flops");
    cJSON_AddNullToObject(src, "timeslice");
    cJSON_ReplaceItemInObject(src, "mps", cJSON_CreateNull());
    cJSON *migs = cJSON_CreateArray();
    cJSON_AddItemToArray(migs, dev);
    cJSON_ReplaceItemInObject(src, "mig_devices", migs);
    char *out = cJSON_PrintUnformatted(src);
    cJSON_Delete(src);
    return out;
}

Test(calib, mig_device_sections_are_fitted)
{
    char *doc = mig_document();
    cal_data *d = xcalloc(1, sizeof *d, "data");
    cal_fit *f = xcalloc(1, sizeof *f, "fit");
    diag *dg = diag_create();
    cr_assert_eq(calib_json_load_buffer_mig("m.json", doc, strlen(doc), 0, d, dg), 0);
    cr_assert_str_eq(d->device, "NVIDIA H100 80GB HBM3 MIG 4g.40gb");
    cr_assert_str_eq(d->uuid, "MIG-0000");
    cr_assert_eq(d->sms_total, 64);
    cr_assert_eq(d->n_rates, 5);
    cr_assert_eq(d->rates[0].n, 1, "an instance is measured whole");
    calfit_all(d, f);
    const cal_rate_fit *fp32 = rate(f, "fp32");
    for (int i = 0; i < d->n_rates; i++) {
        if (!strcmp(d->rates[i].name, "fp32")) {
            cr_assert_float_eq(calfit_rate_eval(fp32, 64), d->rates[i].pts[0].median, 1e-9);
        }
    }
    cr_assert_eq(f->n_ts, 6);
    cr_assert_eq(calib_json_load_buffer_mig("m.json", doc, strlen(doc), 1, d, dg), SIM_EINPUT);
    /* reported where the mig_devices array starts: its line and column in the printed doc */
    const char *at = strchr(strstr(doc, "\"mig_devices\""), '[');
    int line = 1;
    const char *bol = doc;
    for (const char *c = doc; c < at; c++) {
        if (*c == '\n') {
            line++;
            bol = c + 1;
        }
    }
    char want[160];
    snprintf(want, sizeof want,
             "m.json:%d:%d: error: mig_devices: expected a MIG device at index 1, got 'an array'",
             line, (int)(at - bol) + 1);
    cr_assert_str_eq(fx_diag_message(dg, 0), want);
    diag_clear(dg);
    cr_assert_eq(calib_json_load_buffer("m.json", doc, strlen(doc), d, dg), 0);
    cr_assert_eq(d->n_rates, 0, "the top level has no flops");
    diag_destroy(dg);
    free(f);
    free(d);
    cJSON_free(doc);
}

/* cJSON keeps both values of a repeated key and lookups see only the first: a duplicate with
 * another value is an error, at any depth, before any field is read; a repeat of the same value
 * (older calib/ output repeated "reps") loses nothing and loads. */
Test(calib, duplicate_keys_with_other_values_are_refused)
{
    int rc = 0;
    const char *m = first_error("{\"schema\": \"slicesim-calib\", \"schema\": \"other\"}", &rc);
    cr_assert_eq(rc, SIM_EINPUT);
    cr_assert_str_eq(m, "c.json:1:40: error: schema: duplicate key with another value; expected "
                        "each "
                        "key once in an object, got '\"slicesim-calib\"' and '\"other\"'");
    m = first_error("{\"schema\": \"slicesim-calib\", \"schema_version\": 1, \"flops\": {\"runs\": "
                    "[{\"sms\": 1}, {\"sms\": 2, \"reps\": 3, \"sms\": 4}]}}",
                    &rc);
    cr_assert_str_eq(m, "c.json:1:111: error: flops.runs[1].sms: duplicate key with another value; "
                        "expected each key once in an object, got '2' and '4'");
    m = first_error("{\"schema\": \"slicesim-calib\", \"schema\": \"slicesim-calib\", "
                    "\"schema_version\": 2}",
                    &rc);
    cr_assert_str_eq(m, "c.json:1:76: error: schema_version: expected 1 (the version this build "
                        "reads), got '2'",
                     "a repeated equal value is no error: the next check reports");
}

/* ------------------------------------------------------------------ ring sizes */

/* The 4-GPU sweep (calib/ddp's framework rows from 16 MiB, `protocol: simple`) fits one
 * alpha-beta, Simple only; `slicesim fit --allreduce-sweep` writes it as allreduce.rings and the
 * model reads it back; a sweep of the node's own size is refused. */
Test(calib, a_sweep_of_another_ring_size_joins_the_model)
{
    const char *x4 = "calib/results/2026-11-28-h200-sxm-x4-allreduce.json";
    cal_data *s = load(x4);
    cr_assert_eq(s->ar_gpus, 4);
    cr_assert_eq(s->ar_only_proto, 2);
    cal_ar_ring g;
    cr_assert_eq(calfit_allreduce_ring(s, &g), 0);
    cr_assert(!g.has[0] && g.has[1]);
    cr_assert_eq(g.gpus, 4);
    cal_fit *f = xcalloc(1, sizeof *f, "fit");
    calfit_all(s, f);
    cr_assert(f->has_ar && !f->has_ar_proto, "one protocol: no cut");
    const char *out = "build/test-calib-rings.json";
    int st = system("./slicesim fit " H200_FILE " --allreduce-sweep "
                    "calib/results/2026-11-28-h200-sxm-x4-allreduce.json -o "
                    "build/test-calib-rings.json > /dev/null");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    cal_fit *m = xcalloc(1, sizeof *m, "model");
    diag *dg = diag_create();
    calapply_source src;
    cr_assert_eq(calmodel_load_source(out, m, &src, dg), 0);
    cr_assert_eq(m->ar.gpus, 2);
    cr_assert_eq(m->n_ar_rings, 1);
    cr_assert_eq(m->ar_rings[0].gpus, 4);
    cr_assert(!m->ar_rings[0].has[0] && m->ar_rings[0].has[1]);
    cr_assert_float_eq(m->ar_rings[0].proto[1].beta_bytes_per_s.value,
                       g.proto[1].beta_bytes_per_s.value, 1e-3);
    cr_assert_float_eq(m->ar_rings[0].proto[1].alpha_s.value, g.proto[1].alpha_s.value, 1e-15);
    remove(out);
    st = system("./slicesim fit " H200_FILE " --allreduce-sweep " H200_FILE " -o "
                "build/test-calib-rings.json > /dev/null 2>&1");
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "the node's own size again: exit 2");
    diag_destroy(dg);
    free(m);
    free(f);
    free(s);
}

/* A model's allreduce.rings entry: a ring size the model already has, or no protocol, is
 * refused at its field with its line and column. */
Test(calib, model_file_with_a_bad_ring_is_rejected)
{
    static const struct {
        const char *ring, *want;
    } cases[] = {
        {"{\"gpus\": 2, \"protocols\": {\"simple\": {\"alpha_s\": 1e-5, \"alpha_s_se\": 0, "
         "\"beta_bytes_per_s\": 3e11, \"beta_bytes_per_s_se\": 0}}}",
         ":1:262: error: allreduce.rings[0].gpus: expected a whole number of GPUs that no other "
         "all-reduce fit of the model has, got '2'"},
        {"{\"gpus\": 4, \"protocols\": {}}",
         ":1:278: error: allreduce.rings[0].protocols: expected an object holding ll, simple or "
         "both, got 'an object'"},
        {"{\"gpus\": 4, \"protocols\": {\"simple\": {\"alpha_s\": 1e-5, \"alpha_s_se\": 0, "
         "\"beta_bytes_per_s\": 0.5, \"beta_bytes_per_s_se\": 0}}}",
         ":1:344: error: allreduce.rings[0].protocols.simple.beta_bytes_per_s: expected a number "
         "in [1, 1e+15], got '0.5'"},
        {"7", ":1:253: error: allreduce.rings[0]: expected an object {gpus, protocols}, got '7'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char t[1024];
        snprintf(t, sizeof t,
                 "{\"schema\": \"slicesim-calmodel\", \"schema_version\": 1, \"sms_total\": 8, "
                 "\"compute\": [], \"bandwidth\": [], \"timeslice\": [], \"mps\": null, "
                 "\"allreduce\": {\"gpus\": 2, \"alpha_s\": 1e-5, \"alpha_s_se\": 0, "
                 "\"beta_bytes_per_s\": 3e11, \"beta_bytes_per_s_se\": 0, \"rings\": [%s]}, "
                 "\"source\": {\"device\": \"NVIDIA H200\"}}",
                 cases[i].ring);
        cal_fit *m = xcalloc(1, sizeof *m, "model");
        diag *dg = diag_create();
        char path[MODEL_PATH_LEN];
        cr_assert_eq(load_model_text(t, path, m, dg), SIM_EINPUT, "case %zu", i);
        char want[512];
        snprintf(want, sizeof want, "%s%s", path, cases[i].want);
        cr_assert_str_eq(fx_diag_message(dg, 0), want, "case %zu", i);
        cr_assert_eq(m->n_ar_rings, 0);
        diag_destroy(dg);
        free(m);
    }
}

/* A calibration's allreduce.protocol names the one protocol of every row; anything else is an
 * error at the field. */
Test(calib, allreduce_protocol_is_ll_or_simple)
{
    const char *t = "{\"schema\": \"slicesim-calib\", \"schema_version\": 1, \"allreduce\": "
                    "{\"gpus\": 4, \"protocol\": \"tree\", \"runs\": [{\"bytes\": 16777216, "
                    "\"ms_median\": 0.1, \"ms_min\": 0.1, \"ms_max\": 0.1, \"reps\": 1, "
                    "\"correct\": true}]}}";
    cal_data *d = xcalloc(1, sizeof *d, "data");
    diag *dg = diag_create();
    cr_assert_eq(calib_json_load_buffer("p.json", t, strlen(t), d, dg), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(dg, 0),
                     "p.json:1:88: error: allreduce.protocol: expected \"ll\" or \"simple\" (the "
                     "one protocol of every row), or null, got '\"tree\"'");
    diag_destroy(dg);
    free(d);
}
