/* model/physics/speed.c - solo speed of a workload on a partition (sharing is model/physics/share_ts.c and
 * model/physics/share_mps.c, the one prediction entry point model/physics/predict.c).
 *
 * Formula (DESIGN.md §4 has it with o = 0): t = (1 - o) H + max(o H, G),
 * G = g(C / (min(s, P) f e_mig), M / BW(s, slices)) (speed.h says what each symbol is). g is the
 * smooth roofline (a^p + b^p)^(1/p). Its exponent is a model parameter (model/physics/physics.yaml
 * roofline_p), chosen by fitting the published tables; the validation scenarios
 * (docs/validation.md) record which table decided it.
 */
#include "model/physics/speed.h"

#include <math.h>
#include <string.h>


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

double wl_iter_time(double host_s, double overlap, double gpu_s)
{
    return wl_iter_time_tail(host_s, overlap, gpu_s, 0.0);
}

double wl_iter_time_tail(double host_s, double overlap, double gpu_s, double tail_s)
{
    double o = overlap < 0 ? 0 : overlap > 1 ? 1 : overlap;
    double ov = o * host_s + (tail_s > 0 ? tail_s : 0.0);
    return (host_s - o * host_s) + (ov > gpu_s ? ov : gpu_s);
}

double wl_kernel_share(const wl_profile *p)
{
    return p->kernel_busy_frac > 0 && p->kernel_busy_frac < 1 ? p->kernel_busy_frac : 1.0;
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

int speed_mps_sms(int part_sms, double pct, const phys_params *m)
{
    if (!(pct > 0 && pct < 100)) {
        return part_sms;
    }
    int unit = m->mps_sm_granule >= 1 ? (int)m->mps_sm_granule : 1;
    /* the small tolerance keeps an exact product (50 % of 132 = 66 SMs, 33 TPCs) from rounding
     * below */
    int s = unit * (int)floor(part_sms * pct / 100.0 / unit + 1e-9);
    int lo = (int)ceil(m->mps_min_sms);
    s = s < lo ? lo : s;
    return s > part_sms ? part_sms : s;
}

int speed_client_sms(const partition_cfg *c, const phys_params *m)
{
    int s = speed_partition_sms(c);
    return c->sharing == SHARE_MPS ? speed_mps_sms(s, c->mps_percent, m) : s;
}

/* Memory slices of the partition and of the GPU (whole GPU: both = gpu->memory_slices, or 1). */
static int partition_mem_slices(const partition_cfg *c, int *gpu_slices)
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
 * calfit_bw_eval (model/fit/calfit.h) on the parameters calapply copied; test_calapply checks both
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
        /* calibrated (model/fit/calapply.h): the soft-minimum / Michaelis-Menten fit of calfit.h */
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

double speed_partition_bandwidth(const partition_cfg *c, double sms, const phys_params *m)
{
    int gpu_slices = 1;
    int slices = partition_mem_slices(c, &gpu_slices);
    return speed_bandwidth(c->gpu, sms, slices, gpu_slices, m);
}

/* p's GPU time per iteration on c with sms SMs at clock factor clock_factor and bw_share of the
 * bandwidth those SMs drive: the roofline of its compute and memory times, which *comp, *mem and
 * *bw receive (the one formula of the solo and of the tail's reference, speed_tail_excess_s). */
static double solo_gpu_s(const wl_profile *p, double batch, const partition_cfg *c, double sms,
                         double clock_factor, double bw_share, const phys_params *m, double *comp,
                         double *mem, double *bw)
{
    double mig_eff = c->mig ? m->mig_sm_eff : 1.0;
    *comp = wl_compute_total_sm_s(p, batch) / (sms * clock_factor * mig_eff);
    *bw = speed_partition_bandwidth(c, sms, m) * bw_share;
    double bytes = wl_mem_traffic_bytes(p, batch);
    *mem = bytes > 0 ? bytes / *bw : 0.0;
    return speed_roofline(*comp, *mem, m->roofline_p);
}

double speed_solo_iter(const wl_profile *p, double batch, const partition_cfg *c, double sms,
                       double clock_factor, double bw_share, const phys_params *m,
                       speed_result *out)
{
    double comp, mem, bw;
    double gpu = solo_gpu_s(p, batch, c, sms, clock_factor, bw_share, m, &comp, &mem, &bw);
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
    double tail = speed_tail_excess_s(p, batch, c, gpu, clock_factor, m);
    double t = wl_iter_time_tail(host, p->host_overlap, gpu, tail);
    if (out) {
        out->gpu_util = t > 0 ? gpu / t : 0;
    }
    return t;
}

double speed_tail_excess_s(const wl_profile *p, double batch, const partition_cfg *c,
                           double gpu_s, double clock_factor, const phys_params *m)
{
    double tau = p->gpu_tail_frac;
    if (!(tau > 0)) {
        return 0.0;
    }
    /* G_ref: the solo the census measured tau on (the whole GPU, every SM the kernels can use),
     * at the same clock, so that only fewer SMs and less bandwidth stretch the tail */
    partition_cfg whole;
    partition_cfg_init(&whole, c->gpu);
    double sms = fmin((double)c->gpu->sms_total, wl_max_sms(p, batch));
    double f = clock_factor > 0 ? clock_factor : 1.0;
    double comp, mem, bw;
    double ref = solo_gpu_s(p, batch, &whole, sms, f, 1.0, m, &comp, &mem, &bw);
    /* tail(s) = tau phi g(s): the last kernels are a share tau of the kernel time and stretch as
     * the kernels do; H holds tau phi G_ref of it (the solo it was fitted on) */
    double excess = tau * wl_kernel_share(p) * (gpu_s - ref);
    return excess > 0 ? excess : 0.0;
}
