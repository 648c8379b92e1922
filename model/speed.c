/* model/speed.c - solo speed of a workload on a partition, and dispatch to the sharing models.
 *
 * Formula (DESIGN.md §4): t = H + g(C / (min(s, P) f e_mig), M / BW(s, slices)).
 * g is the smooth roofline (a^p + b^p)^(1/p). Its exponent is a model parameter
 * (model/physics.yaml roofline_p), chosen by fitting the published tables; the validation
 * scenarios (experiments/validation/README.md) record which table decided it.
 */
#include "model/speed.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/power.h"
#include "model/share.h"

static const char *const class_names[WL_CLASS_COUNT] = {"fp32", "fp64", "fp16", "tensor"};

const char *wl_class_name(wl_class c)
{
    return (unsigned)c < WL_CLASS_COUNT ? class_names[c] : "?";
}

wl_class wl_class_from_name(const char *name)
{
    for (int c = 0; c < WL_CLASS_COUNT; c++) {
        if (!strcmp(name, class_names[c])) {
            return (wl_class)c;
        }
    }
    return WL_CLASS_COUNT;
}

static const char *const param_names[WL_P_COUNT] = {
    "host_s_fixed",           "host_s_per_sample",           "compute_sm_s_fixed",
    "compute_sm_s_per_sample", "max_sms_fixed",               "max_sms_per_sample",
    "mem_traffic_bytes_fixed", "mem_traffic_bytes_per_sample", "mem_footprint_bytes_fixed",
    "mem_footprint_bytes_per_sample",
};

const char *wl_param_name(wl_param p)
{
    return (unsigned)p < WL_P_COUNT ? param_names[p] : "?";
}

wl_param wl_param_from_name(const char *name)
{
    for (int i = 0; i < WL_P_COUNT; i++) {
        if (!strcmp(name, param_names[i])) {
            return (wl_param)i;
        }
    }
    return WL_P_COUNT;
}

wl_class wl_dominant_class(const wl_profile *p)
{
    wl_class best = WL_CLASS_FP32;
    double best_v = 0;
    for (int c = 0; c < WL_CLASS_COUNT; c++) {
        double v = p->compute_sm_s_fixed[c] + p->compute_sm_s_per_sample[c];
        if (v > best_v) {
            best_v = v;
            best = (wl_class)c;
        }
    }
    return best;
}

static double *param_slot(wl_profile *p, wl_param which)
{
    wl_class c = wl_dominant_class(p);
    switch (which) {
    case WL_P_HOST_S_FIXED: return &p->host_s_fixed;
    case WL_P_HOST_S_PER_SAMPLE: return &p->host_s_per_sample;
    case WL_P_COMPUTE_FIXED: return &p->compute_sm_s_fixed[c];
    case WL_P_COMPUTE_PER_SAMPLE: return &p->compute_sm_s_per_sample[c];
    case WL_P_MAX_SMS_FIXED: return &p->max_sms_fixed;
    case WL_P_MAX_SMS_PER_SAMPLE: return &p->max_sms_per_sample;
    case WL_P_MEM_TRAFFIC_FIXED: return &p->mem_traffic_bytes_fixed;
    case WL_P_MEM_TRAFFIC_PER_SAMPLE: return &p->mem_traffic_bytes_per_sample;
    case WL_P_MEM_FOOTPRINT_FIXED: return &p->mem_footprint_bytes_fixed;
    case WL_P_MEM_FOOTPRINT_PER_SAMPLE: return &p->mem_footprint_bytes_per_sample;
    case WL_P_COUNT: break;
    }
    return NULL;
}

double wl_param_get(const wl_profile *p, wl_param which)
{
    const double *v = param_slot((wl_profile *)p, which);
    return v ? *v : 0.0;
}

void wl_param_set(wl_profile *p, wl_param which, double v)
{
    double *slot = param_slot(p, which);
    if (slot) {
        *slot = v;
    }
}

double wl_host_s(const wl_profile *p, double batch)
{
    return p->host_s_fixed + p->host_s_per_sample * batch;
}

double wl_compute_sm_s(const wl_profile *p, wl_class c, double batch)
{
    return p->compute_sm_s_fixed[c] + p->compute_sm_s_per_sample[c] * batch;
}

double wl_compute_total_sm_s(const wl_profile *p, double batch)
{
    double t = 0;
    for (int c = 0; c < WL_CLASS_COUNT; c++) {
        t += wl_compute_sm_s(p, (wl_class)c, batch);
    }
    return t;
}

double wl_max_sms(const wl_profile *p, double batch)
{
    double v = p->max_sms_fixed + p->max_sms_per_sample * batch;
    return v > 0 ? v : HUGE_VAL;
}

double wl_mem_traffic_bytes(const wl_profile *p, double batch)
{
    return p->mem_traffic_bytes_fixed + p->mem_traffic_bytes_per_sample * batch;
}

double wl_mem_footprint_bytes(const wl_profile *p, double batch)
{
    return p->mem_footprint_bytes_fixed + p->mem_footprint_bytes_per_sample * batch;
}

double wl_units_per_iter(const wl_profile *p, double batch)
{
    return p->unit_is_sample ? batch : 1.0;
}

static const char *const share_names[SHARE_COUNT] = {"exclusive", "timeslice", "mps"};

const char *share_mode_name(share_mode m)
{
    return (unsigned)m < SHARE_COUNT ? share_names[m] : "?";
}

share_mode share_mode_from_name(const char *name)
{
    for (int i = 0; i < SHARE_COUNT; i++) {
        if (!strcmp(name, share_names[i])) {
            return (share_mode)i;
        }
    }
    return SHARE_COUNT;
}

void partition_cfg_init(partition_cfg *c, const gpu_type *g)
{
    memset(c, 0, sizeof *c);
    c->gpu = g;
    c->sharing = SHARE_EXCLUSIVE;
    c->peers = 1;
}

_Static_assert(GPU_MEAS_MAX_TS == PHYS_MAX_TS_CLASSES && GPU_MEAS_MAX_K == PHYS_MAX_K,
               "gpu_measured mirrors phys_params' time-slice table");

double speed_eta(const gpu_type *g, const phys_params *m, int cls, int k)
{
    if (g && k >= 2 && cls >= 0 && cls < GPU_MEAS_MAX_TS && cls < m->n_ts && g->meas.has_eta[cls]) {
        return g->meas.eta[cls][k > PHYS_MAX_K ? PHYS_MAX_K : k];
    }
    return phys_eta(m, cls, k);
}

double phys_eta(const phys_params *m, int cls, int k)
{
    if (k <= 1) {
        return 1.0;
    }
    if (cls < 0 || cls >= m->n_ts) {
        cls = 0;
    }
    if (m->n_ts <= 0) {
        return 1.0;
    }
    return m->ts[cls].eta[k > PHYS_MAX_K ? PHYS_MAX_K : k];
}

int phys_ts_class_index(const phys_params *m, const char *name)
{
    for (int i = 0; i < m->n_ts; i++) {
        if (!strcmp(m->ts[i].name, name)) {
            return i;
        }
    }
    return -1;
}

static const char *const outcome_names[] = {"ok", "oom", "invalid"};

const char *speed_outcome_name(speed_outcome o)
{
    return (unsigned)o <= SPEED_INVALID ? outcome_names[o] : "?";
}

int speed_partition_sms(const partition_cfg *c)
{
    return c->mig ? c->mig->sms : c->gpu->sms_total;
}

int speed_partition_mem_slices(const partition_cfg *c, int *gpu_slices)
{
    int total = c->gpu->memory_slices > 0 ? c->gpu->memory_slices : 1;
    if (gpu_slices) {
        *gpu_slices = total;
    }
    return c->mig ? c->mig->mem_slices : total;
}

double speed_partition_mem_bytes(const partition_cfg *c)
{
    return c->mig ? (double)c->mig->mem_bytes : (double)c->gpu->mem_bytes;
}

double speed_roofline(double a, double b, double p)
{
    if (a <= 0) {
        return b;
    }
    if (b <= 0) {
        return a;
    }
    if (p >= 64) {
        return a > b ? a : b;
    }
    /* scale by the larger term so that pow() cannot overflow */
    double mx = a > b ? a : b;
    return mx * pow(pow(a / mx, p) + pow(b / mx, p), 1.0 / p);
}

/* Measured bandwidth curve of g (gpu_type.meas) at s SMs, bytes/s: the formulas of
 * calfit_bw_eval (model/calfit.h) on the parameters calapply copied; test_calapply checks both
 * give the same value. */
static double measured_bw(const gpu_measured *ms, double s)
{
    if (ms->bw_is_mm) {
        return ms->bw_max_bytes_per_s * s / (s + ms->bw_s_half);
    }
    double lin = ms->bw_per_sm_bytes_per_s * s, p = ms->bw_sharpness;
    return lin / pow(1.0 + pow(lin / ms->bw_max_bytes_per_s, p), 1.0 / p);
}

double speed_bandwidth(const gpu_type *g, double sms, int slices, int gpu_slices,
                       const phys_params *m)
{
    if (g->meas.has_bw && g->sms_total > 0) {
        /* calibrated (model/calapply.h): the soft-minimum / Michaelis-Menten fit of calfit.h */
        double whole = measured_bw(&g->meas, (double)g->sms_total);
        double share = whole * (double)slices / (double)(gpu_slices > 0 ? gpu_slices : 1);
        double drive = measured_bw(&g->meas, sms);
        return drive < share ? drive : share;
    }
    double full = g->mem_bw_bytes_per_s * m->bw_stream_eff;
    double part = full * (double)slices / (double)(gpu_slices > 0 ? gpu_slices : 1);
    if (m->bw_drive_sm_frac <= 0 || g->sms_total <= 0) {
        return part;
    }
    /* What `sms` SMs can drive: saturating in the SM count (H100 probe, green contexts),
     * normalised so that every SM of the GPU drives the whole GPU's bandwidth. */
    double s0 = m->bw_drive_sm_frac * g->sms_total;
    double drive = full * (1.0 - exp(-sms / s0)) / (1.0 - exp(-(double)g->sms_total / s0));
    return drive < part ? drive : part;
}

double speed_solo_iter(const wl_profile *p, double batch, const partition_cfg *c, double sms,
                       double clock_factor, double bw_share, const phys_params *m,
                       speed_result *out)
{
    double mig_eff = c->mig ? m->mig_sm_eff : 1.0;
    double comp = wl_compute_total_sm_s(p, batch) / (sms * clock_factor * mig_eff);
    int gpu_slices = 1;
    int slices = speed_partition_mem_slices(c, &gpu_slices);
    double bw = speed_bandwidth(c->gpu, sms, slices, gpu_slices, m) * bw_share;
    double bytes = wl_mem_traffic_bytes(p, batch);
    double mem = bytes > 0 ? bytes / bw : 0.0;
    double gpu = speed_roofline(comp, mem, m->roofline_p);
    double host = wl_host_s(p, batch);
    if (out) {
        out->iter_host_s = host;
        out->iter_compute_s = comp;
        out->iter_mem_s = mem;
        out->iter_gpu_s = gpu;
        out->sms_used = sms;
        out->clock_factor = clock_factor;
        out->bw_bytes_per_s = bw;
    }
    return host + gpu;
}

static void set_invalid(speed_result *out, speed_outcome o, const char *why)
{
    out->outcome = o;
    snprintf(out->reason, sizeof out->reason, "%s", why);
}

/* SMs this job's kernels use on the partition, before sharing. */
static double job_sms(const wl_profile *p, double batch, const partition_cfg *c)
{
    double s = speed_partition_sms(c);
    if (c->sharing == SHARE_MPS && c->mps_percent > 0 && c->mps_percent < 100) {
        s = ceil(s * c->mps_percent / 100.0);
    }
    double pmax = wl_max_sms(p, batch);
    return s < pmax ? s : pmax;
}

/* Clock factor when `sms` SMs of this job's class mix are busy, times the identical busy MIG
 * instances on the GPU (at most the GPU's SMs). */
static double job_clock(const wl_profile *p, double batch, const partition_cfg *c, double sms,
                        double concurrent, const phys_params *m)
{
    double busy[WL_CLASS_COUNT] = {0};
    double total = wl_compute_total_sm_s(p, batch);
    double n = sms * concurrent;
    double cap = c->mig && c->gpu->sms_mig_full > 0 ? c->gpu->sms_mig_full : c->gpu->sms_total;
    if (n > cap) {
        n = cap;
    }
    for (int k = 0; k < WL_CLASS_COUNT; k++) {
        busy[k] = total > 0 ? n * wl_compute_sm_s(p, (wl_class)k, batch) / total : 0;
    }
    return power_clock_factor(c->gpu, m, busy);
}

/* Time per iteration with sharing applied, under parameters m. */
static double shared_iter(const wl_profile *p, double batch, const partition_cfg *c,
                          const phys_params *m, speed_result *out)
{
    double sms = job_sms(p, batch, c);
    double busy_instances = c->mig && c->mig_busy > 1 ? c->mig_busy : 1;
    double f = job_clock(p, batch, c, sms, busy_instances, m);
    double solo = speed_solo_iter(p, batch, c, sms, f, 1.0, m, out);
    int k = c->peers + c->n_with;
    if (k <= 1 || c->sharing == SHARE_EXCLUSIVE) {
        out->gpu_util = solo > 0 ? out->iter_gpu_s / solo : 0;
        return solo;
    }
    if (c->sharing == SHARE_MPS) {
        share_mps_class cls[SHARE_MAX_CLASSES];
        cls[0] = (share_mps_class){p, batch, c->peers};
        for (int i = 0; i < c->n_with; i++) {
            cls[i + 1] = (share_mps_class){c->with[i], c->with_batch[i], 1};
        }
        double iter[SHARE_MAX_CLASSES];
        share_mps_solve(1 + c->n_with, cls, c, m, iter);
        out->gpu_util = iter[0] > 0 ? (iter[0] - out->iter_host_s) / iter[0] : 0;
        return iter[0];
    }
    /* time-slicing: one context at a time, each at its solo speed while it holds the GPU */
    share_ts_class cls[SHARE_MAX_CLASSES];
    cls[0] = (share_ts_class){c->peers, out->iter_host_s, out->iter_gpu_s};
    int ts_cls = p->ts_class;
    for (int i = 0; i < c->n_with; i++) {
        speed_result tmp;
        const wl_profile *w = c->with[i];
        double ws = job_sms(w, c->with_batch[i], c);
        double wf = job_clock(w, c->with_batch[i], c, ws, busy_instances, m);
        speed_solo_iter(w, c->with_batch[i], c, ws, wf, 1.0, m, &tmp);
        cls[i + 1] = (share_ts_class){1, tmp.iter_host_s, tmp.iter_gpu_s};
    }
    /* Mixed kernel-length classes: take the lower η at each k (switching cost is paid by all). */
    double eta[SHARE_MAX_JOBS + 1];
    for (int n = 0; n <= k && n <= SHARE_MAX_JOBS; n++) {
        double e = speed_eta(c->gpu, m, ts_cls, n);
        for (int i = 0; i < c->n_with; i++) {
            double ew = speed_eta(c->gpu, m, c->with[i]->ts_class, n);
            e = ew < e ? ew : e;
        }
        eta[n] = e;
    }
    double x[SHARE_MAX_CLASSES], busy = 0;
    if (c->n_with == 0) {
        x[0] = share_ts_mva(k, out->iter_host_s, out->iter_gpu_s, eta, &busy);
    } else if (share_ts_solve(1 + c->n_with, cls, eta, x, &busy) != 0) {
        return (double)NAN;
    }
    out->gpu_util = busy;
    return x[0] > 0 ? 1.0 / x[0] : HUGE_VAL;
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

void speed_unit_time(const wl_profile *p, double batch, const partition_cfg *c,
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
    if (!(batch >= 1) || !isfinite(batch)) {
        set_invalid(out, SPEED_INVALID, "batch must be >= 1");
        return;
    }
    if (c->peers < 1 || c->n_with < 0 || c->n_with > PART_MAX_WITH ||
        c->peers + c->n_with > SHARE_MAX_JOBS) {
        set_invalid(out, SPEED_INVALID, "peers must be >= 1 and at most 64 jobs per partition");
        return;
    }
    if (c->sharing == SHARE_EXCLUSIVE && c->peers + c->n_with > 1) {
        set_invalid(out, SPEED_INVALID, "exclusive partition cannot hold several jobs");
        return;
    }
    if (c->mps_percent < 0 || c->mps_percent > 100) {
        set_invalid(out, SPEED_INVALID, "mps_percent must be in 0..100");
        return;
    }
    if (c->mig && c->mig_busy > c->gpu->max_mig_instances && c->gpu->max_mig_instances > 0) {
        set_invalid(out, SPEED_INVALID, "mig_busy exceeds the instances a GPU can hold");
        return;
    }
    if (speed_partition_sms(c) <= 0) {
        set_invalid(out, SPEED_INVALID, "partition has no SMs in the catalog");
        return;
    }
    if (wl_compute_total_sm_s(p, batch) <= 0 && wl_mem_traffic_bytes(p, batch) <= 0 &&
        wl_host_s(p, batch) <= 0) {
        set_invalid(out, SPEED_INVALID, "profile has no work");
        return;
    }
    double need = 0;
    if (!share_mem_fits(p, batch, c, &need)) {
        snprintf(out->reason, sizeof out->reason,
                 "footprint %.3g GiB exceeds the partition's %.3g GiB", need / 1073741824.0,
                 speed_partition_mem_bytes(c) / 1073741824.0);
        out->outcome = SPEED_OOM;
        return;
    }
    double iter = shared_iter(p, batch, c, m, out);
    if (!isfinite(iter) || iter <= 0) {
        set_invalid(out, SPEED_INVALID, "no finite time (too many co-runners to solve)");
        return;
    }
    double units = wl_units_per_iter(p, batch);
    out->unit_time_s = iter / units;
    out->throughput = units / iter;
    speed_result tmp;
    phys_params q;
    perturb(m, -1, &q);
    double lo = shared_iter(p, batch, c, &q, &tmp) / units;
    perturb(m, +1, &q);
    double hi = shared_iter(p, batch, c, &q, &tmp) / units;
    out->unit_time_lo_s = fmin(out->unit_time_s, fmin(lo, hi));
    out->unit_time_hi_s = fmax(out->unit_time_s, fmax(lo, hi));
}
