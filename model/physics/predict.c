/* model/physics/predict.c - one prediction entry point: checks, solo speed, sharing, range (see
 * predict.h). */
#include "model/physics/predict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/physics/power.h"
#include "model/physics/share.h"
#include "model/physics/share_mps.h"
#include "model/physics/share_ts.h"
#include "sim/err.h"
#include "sim/xalloc.h"

static void set_invalid(speed_result *out, speed_outcome o, const char *why)
{
    out->outcome = o;
    snprintf(out->reason, sizeof out->reason, "%s", why);
}

/* SMs this job's kernels use on the partition, before sharing. */
static double job_sms(const wl_profile *p, double batch, const partition_cfg *c,
                      const phys_params *m)
{
    double s = speed_client_sms(c, m);
    double pmax = wl_max_sms(p, batch);
    return s < pmax ? s : pmax;
}

/* Clock factor when `sms` SMs of this job's class mix are busy, times the identical busy MIG
 * instances on the GPU (c->mig_busy; at most the GPU's SMs), each weighted by how busy its GPU
 * is: an instance whose job has GPU work for G of every iteration t (host phases, launch gaps
 * between) draws its SMs' power in those phases only, and the cap sees that power averaged over
 * its window, so its SMs count power_busy_weight(G, t, window) times (power.h: G / t for windows
 * much longer than t, 1 once G outlasts the window). G and t are the job's solo phases at the
 * clock it gets, found by a short fixed-point iteration. */
static double job_clock(const wl_profile *p, double batch, const partition_cfg *c, double sms,
                        const phys_params *m)
{
    double concurrent = c->mig && c->mig_busy > 1 ? c->mig_busy : 1;
    double total = wl_compute_total_sm_s(p, batch);
    double cap = c->mig && c->gpu->sms_mig_full > 0 ? c->gpu->sms_mig_full : c->gpu->sms_total;
    double f = 1.0;
    for (int it = 0; it < 4; it++) {
        speed_result r;
        double t = speed_solo_iter(p, batch, c, sms, f, 1.0, m, &r);
        double u = power_busy_weight(r.iter_gpu_s, t, m->power_window_s);
        double n = fmin(sms * concurrent, cap) * u;
        double busy[WL_CLASS_COUNT] = {0};
        for (int k = 0; k < WL_CLASS_COUNT; k++) {
            busy[k] = total > 0 ? n * wl_compute_sm_s(p, (wl_class)k, batch) / total : 0;
        }
        double nf = power_clock_factor(c->gpu, m, busy);
        if (fabs(nf - f) < 1e-12) {
            break;
        }
        f = nf;
    }
    return f;
}

/* Solo iteration time of p on c (no sharing) on the SMs it may use, at the clock its GPU's
 * busy instances leave it; fills the breakdown of *out. */
static double solo_iter(const wl_profile *p, double batch, const partition_cfg *c,
                        const phys_params *m, speed_result *out)
{
    if (!p) { /* GPU-bound, without a profile: 1 s of GPU work, no host phase (predict.h) */
        out->iter_gpu_s = 1.0;
        out->gpu_util = 1.0;
        return 1.0;
    }
    double sms = job_sms(p, batch, c, m);
    double f = job_clock(p, batch, c, sms, m);
    return speed_solo_iter(p, batch, c, sms, f, 1.0, m, out);
}

/* Clients of co-runner i of c (with_n, 0 = 1). */
static int with_n(const partition_cfg *c, int i)
{
    return c->with_n[i] > 0 ? c->with_n[i] : 1;
}

/* Units of work per iteration: the profile's, one for a job without a profile. */
static double units_per_iter(const wl_profile *p, double batch)
{
    return p ? wl_units_per_iter(p, batch) : 1.0;
}

/* Time per iteration of p under MPS with its co-runners (share_mps_solve); *out's utilisation
 * becomes the device's. NAN (with the reason in *out) when the solve does not settle. */
static double mps_iter(const wl_profile *p, double batch, const partition_cfg *c,
                       const phys_params *m, speed_result *out)
{
    share_mps_class cls[SHARE_MAX_CLASSES];
    cls[0] = (share_mps_class){p, batch, c->peers};
    for (int i = 0; i < c->n_with; i++) {
        cls[i + 1] = (share_mps_class){c->with[i], c->with_batch[i], with_n(c, i)};
    }
    double iter[SHARE_MAX_CLASSES], frac[SHARE_MAX_CLASSES];
    if (share_mps_solve(1 + c->n_with, cls, c, m, iter, frac) != 0) {
        set_invalid(out, SPEED_INVALID, "the MPS solve did not converge for these clients");
        return (double)NAN;
    }
    /* NVML's utilisation is the device's: the share of time at least one client has GPU
     * work; with the clients' phases independent (the solve's mean field) that is
     * 1 - prod_c (1 - frac_c)^n_c */
    double idle = 1.0;
    for (int i = 0; i < 1 + c->n_with; i++) {
        idle *= pow(1.0 - frac[i], cls[i].n);
    }
    out->gpu_util = 1.0 - idle;
    return iter[0];
}

void predict_lowest_eta(int n_cls, int k, predict_eta_fn eta_of, const void *ctx, double *eta)
{
    SIM_ASSERT(n_cls >= 1 && k <= SHARE_MAX_JOBS);
    for (int n = 0; n <= k; n++) {
        double e = eta_of(ctx, 0, n);
        for (int i = 1; i < n_cls; i++) {
            e = fmin(e, eta_of(ctx, i, n));
        }
        eta[n] = e;
    }
}

/* The time-slice classes of a prediction: p (class 0) and c->with[i] (class i + 1). */
typedef struct ts_eta_src {
    const wl_profile *p;
    const partition_cfg *c;
    const phys_params *m;
} ts_eta_src;

/* predict_eta_fn: eta(n) of a prediction's class cls, from its profile's time-slice class
 * (without a profile: the class partition_cfg names for it). */
static double profile_eta(const void *ctx, int cls, int n)
{
    const ts_eta_src *s = ctx;
    const wl_profile *w = cls == 0 ? s->p : s->c->with[cls - 1];
    int ts = w ? w->ts_class : cls == 0 ? s->c->ts_class : s->c->with_ts_class[cls - 1];
    return speed_eta(s->c->gpu, s->m, ts, n);
}

/* Time per iteration of p time-sliced with its co-runners, from its solo breakdown in *out (one
 * context at a time, each at its solo speed while it holds the GPU); *out's utilisation becomes
 * the device's. NAN when the solve is out of range, or (with the reason in *out) when the mean
 * field does not settle. */
static double ts_iter(const wl_profile *p, const partition_cfg *c, const phys_params *m,
                      speed_result *out)
{
    int k = c->peers;
    share_ts_class cls[SHARE_MAX_CLASSES];
    cls[0] = (share_ts_class){c->peers, out->iter_host_s, out->iter_gpu_s,
                              p ? p->host_overlap : 0.0, p && speed_iter_is_round(p), c->share};
    for (int i = 0; i < c->n_with; i++) {
        speed_result tmp = {0};
        const wl_profile *w = c->with[i];
        solo_iter(w, c->with_batch[i], c, m, &tmp);
        cls[i + 1] = (share_ts_class){with_n(c, i),       tmp.iter_host_s,
                                      tmp.iter_gpu_s,     w ? w->host_overlap : 0.0,
                                      w && speed_iter_is_round(w), c->with_share[i]};
        k += with_n(c, i);
    }
    /* Mixed kernel-length classes: the lowest η at each k */
    double eta[SHARE_MAX_JOBS + 1];
    const ts_eta_src src = {p, c, m};
    predict_lowest_eta(1 + c->n_with, k < SHARE_MAX_JOBS ? k : SHARE_MAX_JOBS, profile_eta, &src,
                       eta);
    double x[SHARE_MAX_CLASSES], busy = 0;
    share_ts_rr rr = {m->ts_quantum_s, m->ts_switch_s};
    if (c->n_with == 0 && !(cls[0].overlap > 0)) {
        /* rounds that alternate with host time: a switch per GPU phase (share_ts.h) */
        double eta_ph[SHARE_MAX_JOBS + 1];
        share_ts_eta_phases(k, eta, out->iter_host_s, out->iter_gpu_s,
                            cls[0].rounds ? &rr : NULL, eta_ph);
        x[0] = share_ts_mva(k, out->iter_host_s, out->iter_gpu_s, eta_ph, &busy);
    } else {
        /* (also identical peers that overlap host and GPU time: the mean-field solution) */
        int rc = share_ts_solve_rr(1 + c->n_with, cls, eta, &rr, x, &busy);
        if (rc == SIM_ENOCONV) {
            set_invalid(out, SPEED_INVALID,
                        "the time-slice mean field did not converge for these clients");
        }
        if (rc != 0) {
            return (double)NAN;
        }
    }
    out->gpu_util = busy;
    return x[0] > 0 ? 1.0 / x[0] : HUGE_VAL;
}

/* Time per iteration with sharing applied, under parameters m. */
static double shared_iter(const wl_profile *p, double batch, const partition_cfg *c,
                          const phys_params *m, speed_result *out)
{
    double solo = solo_iter(p, batch, c, m, out);
    if ((c->peers <= 1 && c->n_with == 0) || c->sharing == SHARE_EXCLUSIVE) {
        return solo;
    }
    return c->sharing == SHARE_MPS ? mps_iter(p, batch, c, m, out) : ts_iter(p, c, m, out);
}

/* Parameters moved by `dir` (-1 optimistic, +1 pessimistic) times their relative uncertainty. */
static void perturb(const phys_params *m, int dir, phys_params *q)
{
    *q = *m;
    double r = 1.0 + dir * m->param_rel_sd;
    q->bw_stream_eff = m->bw_stream_eff / r;
    q->mig_sm_eff = fmin(1.0, m->mig_sm_eff / r);
    for (int c = 0; c < WL_CLASS_COUNT; c++) {
        q->power_sm_w[c] = m->power_sm_w[c] * r;
    }
    for (int i = 0; i < q->n_ts; i++) {
        for (int k = 2; k <= PHYS_MAX_K; k++) {
            q->ts[i].eta[k] = fmin(1.0, m->ts[i].eta[k] / r);
        }
    }
}

#define PREDICT_STR2(x) #x
#define PREDICT_STR(x) PREDICT_STR2(x)

const char *predict_cfg_invalid(const partition_cfg *c)
{
    int jobs = c->peers;
    for (int i = 0; c->n_with > 0 && i < c->n_with && i < PART_MAX_WITH; i++) {
        jobs += with_n(c, i);
    }
    if (c->peers < 1 || c->n_with < 0 || c->n_with > PART_MAX_WITH || jobs > SHARE_MAX_JOBS) {
        return "peers must be >= 1 and at most " PREDICT_STR(SHARE_MAX_JOBS) " jobs per partition";
    }
    if (c->sharing == SHARE_EXCLUSIVE && jobs > 1) {
        return "exclusive partition cannot hold several jobs";
    }
    if (c->mps_percent < 0 || c->mps_percent > 100) {
        return "mps_percent must be in 0..100";
    }
    if (c->mig && c->mig_busy > c->gpu->max_mig_instances && c->gpu->max_mig_instances > 0) {
        return "mig_busy exceeds the instances a GPU can hold";
    }
    if (speed_partition_sms(c) <= 0) {
        return "partition has no SMs in the catalog";
    }
    return NULL;
}

/* The checks and the estimate; *out's range is left at the estimate. */
static void estimate(const wl_profile *p, double batch, const partition_cfg *c,
                     const phys_params *m, speed_result *out)
{
    memset(out, 0, sizeof *out);
    out->outcome = SPEED_OK;
    if (!c->gpu) {
        set_invalid(out, SPEED_INVALID, "no GPU type given");
        return;
    }
    if (c->mig && c->gpu->compute_slices <= 0) {
        set_invalid(out, SPEED_INVALID, "GPU type has no MIG");
        return;
    }
    if (p && (!(batch >= 1) || !isfinite(batch))) {
        set_invalid(out, SPEED_INVALID, "batch must be >= 1");
        return;
    }
    const char *bad = predict_cfg_invalid(c);
    if (bad) {
        set_invalid(out, SPEED_INVALID, bad);
        return;
    }
    bool bound = !p; /* someone without a profile: time-slicing only */
    for (int i = 0; i < c->n_with; i++) {
        bound = bound || !c->with[i];
    }
    if (bound && c->sharing == SHARE_MPS) {
        set_invalid(out, SPEED_INVALID, "MPS needs every client's profile");
        return;
    }
    if (p && wl_compute_total_sm_s(p, batch) <= 0 && wl_mem_traffic_bytes(p, batch) <= 0 &&
        wl_host_s(p, batch) <= 0) {
        set_invalid(out, SPEED_INVALID, "profile has no work");
        return;
    }
    double need = 0;
    if (p && !share_mem_fits(p, batch, c, &need)) {
        snprintf(out->reason, sizeof out->reason,
                 "footprint %.3g GiB exceeds the partition's %.3g GiB", need / 1073741824.0,
                 speed_partition_mem_bytes(c) * (c->share > 0 ? c->share : 1) / 1073741824.0);
        out->outcome = SPEED_OOM;
        return;
    }
    double iter = shared_iter(p, batch, c, m, out);
    if (!isfinite(iter) || iter <= 0) {
        if (out->outcome == SPEED_OK) { /* else the solver said why (mps_iter, ts_iter) */
            set_invalid(out, SPEED_INVALID, "no finite time (too many co-runners to solve)");
        }
        return;
    }
    double units = units_per_iter(p, batch);
    out->unit_time_s = iter / units;
    out->throughput = units / iter;
    out->unit_time_lo_s = out->unit_time_hi_s = out->unit_time_s;
}

void predict_unit_estimate(const wl_profile *p, double batch, const partition_cfg *c,
                           const phys_params *m, speed_result *out)
{
    estimate(p, batch, c, m, out);
}

void predict_unit_time(const wl_profile *p, double batch, const partition_cfg *c,
                       const phys_params *m, speed_result *out)
{
    estimate(p, batch, c, m, out);
    if (out->outcome != SPEED_OK) {
        return;
    }
    double units = units_per_iter(p, batch);
    speed_result tmp;
    phys_params q;
    perturb(m, -1, &q);
    double lo = shared_iter(p, batch, c, &q, &tmp) / units;
    perturb(m, +1, &q);
    double hi = shared_iter(p, batch, c, &q, &tmp) / units;
    out->unit_time_lo_s = fmin(out->unit_time_s, fmin(lo, hi));
    out->unit_time_hi_s = fmax(out->unit_time_s, fmax(lo, hi));
}

void predict_family_time(const wl_profile *p, int n_family, const wl_profile *family,
                         double batch, const partition_cfg *c, const phys_params *m,
                         speed_result *out)
{
    predict_unit_time(p, batch, c, m, out);
    if (out->outcome != SPEED_OK) {
        return;
    }
    for (int i = 0; i < n_family; i++) {
        speed_result r;
        predict_unit_estimate(&family[i], batch, c, m, &r);
        if (r.outcome == SPEED_OK) {
            out->unit_time_lo_s = fmin(out->unit_time_lo_s, r.unit_time_s);
            out->unit_time_hi_s = fmax(out->unit_time_hi_s, r.unit_time_s);
        }
    }
}
