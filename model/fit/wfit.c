/* model/fit/wfit.c - GSL non-linear least squares for workload profiles (see wfit.h). */
#include "model/fit/wfit.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fit/nlsq.h"
#include "model/physics/predict.h"
#include "model/physics/share.h"
#include "sim/err.h"
#include "sim/xalloc.h"

static const char *const mparam_names[WFIT_M_COUNT] = {
    "eta",           "roofline_p",       "mig_sm_eff",        "bw_stream_eff",
    "bw_drive_sm_frac", "power_alpha",   "power_sm_w.fp32",   "power_sm_w.fp64",
    "power_sm_w.fp16", "power_sm_w.tensor", "mps_bw_contention",
};

const char *wfit_mparam_name(wfit_mparam p)
{
    return (unsigned)p < WFIT_M_COUNT ? mparam_names[p] : "?";
}

double wfit_mparam_get(const phys_params *m, wfit_mparam p)
{
    switch (p) {
    case WFIT_M_ETA: return m->n_ts > 0 ? m->ts[0].eta[2] : 1.0;
    case WFIT_M_ROOFLINE_P: return m->roofline_p;
    case WFIT_M_MIG_SM_EFF: return m->mig_sm_eff;
    case WFIT_M_BW_STREAM_EFF: return m->bw_stream_eff;
    case WFIT_M_BW_DRIVE_SM_FRAC: return m->bw_drive_sm_frac;
    case WFIT_M_POWER_ALPHA: return m->power_alpha;
    case WFIT_M_POWER_SM_W_FP32:
    case WFIT_M_POWER_SM_W_FP64:
    case WFIT_M_POWER_SM_W_FP16:
    case WFIT_M_POWER_SM_W_TENSOR: return m->power_sm_w[p - WFIT_M_POWER_SM_W_FP32];
    case WFIT_M_MPS_BW_CONTENTION: return m->mps_bw_contention;
    case WFIT_M_COUNT: break;
    }
    return 0;
}

void wfit_mparam_set(phys_params *m, wfit_mparam p, double v)
{
    switch (p) {
    case WFIT_M_ETA:
        if (m->n_ts > 0) {
            for (int k = 2; k <= PHYS_MAX_K; k++) {
                m->ts[0].eta[k] = v;
            }
        }
        break;
    case WFIT_M_ROOFLINE_P: m->roofline_p = v; break;
    case WFIT_M_MIG_SM_EFF: m->mig_sm_eff = v; break;
    case WFIT_M_BW_STREAM_EFF: m->bw_stream_eff = v; break;
    case WFIT_M_BW_DRIVE_SM_FRAC: m->bw_drive_sm_frac = v; break;
    case WFIT_M_POWER_ALPHA: m->power_alpha = v; break;
    case WFIT_M_POWER_SM_W_FP32:
    case WFIT_M_POWER_SM_W_FP64:
    case WFIT_M_POWER_SM_W_FP16:
    case WFIT_M_POWER_SM_W_TENSOR: m->power_sm_w[p - WFIT_M_POWER_SM_W_FP32] = v; break;
    case WFIT_M_MPS_BW_CONTENTION: m->mps_bw_contention = v; break;
    case WFIT_M_COUNT: break;
    }
}

/* Working state handed to GSL. */
typedef struct fit_ctx {
    const wfit_spec *spec;
    int n_obs;
    const wfit_obs *obs;
    wl_profile prof[WFIT_MAX_PROFILES];
    phys_params model;
    double util_sd;
    double start[WFIT_MAX_PARAMS]; /* log of the starting values */
} fit_ctx;

#define NO_PRIOR_SD 1000.0 /* log-sd of the implicit weak prior on a free parameter with none */

/* Search choices of the fit, not physics (none is measured; model/physics/physics.yaml holds the
 * physics):
 * UNPLACED_RESIDUAL: the time residual of a trial point where predict cannot place the profile
 *   (invalid, or no positive time). Finite, because GSL needs finite residuals; large beside any
 *   a placeable profile gives (a time off by a factor e is 1 / 0.02 = 50 at WFIT_TIME_REL_SD),
 *   so the trust region steps back from such a point.
 * PAR_RANGE_FACTOR: the scanned parallelism range reaches down to at least a quarter of the
 *   largest SM count observed: with one SM count (or counts close together) observed, P below it
 *   trades against the compute time, so the starts and the family must look below the
 *   partitions observed; a quarter is a choice of how far.
 * PAR_PER_SAMPLE_MIN: a per-sample parallelism's range is the SM range less the fixed part,
 *   kept at no less than this share of the SM value so that it stays positive (a log grid)
 *   where the fixed part covers the observed partitions.
 * HOST_RANGE_FACTOR: see host_range. */
#define UNPLACED_RESIDUAL 1e3
#define PAR_RANGE_FACTOR 4.0
#define PAR_PER_SAMPLE_MIN 0.05
#define HOST_RANGE_FACTOR 16.0

/* Fit variable x_i is log(value - floor): the roofline exponent is kept >= 1 (p < 1 would make
 * g(a, b) exceed a + b), every other parameter > 0. */
static double floor_of(const wfit_free *f)
{
    return f->is_model && f->which == WFIT_M_ROOFLINE_P ? 1.0 : 0.0;
}

/* Install parameter vector x (logs) into ctx's working profiles and model. */
static void install(fit_ctx *ctx, const gsl_vector *x)
{
    const wfit_spec *s = ctx->spec;
    memcpy(ctx->prof, s->profiles, sizeof ctx->prof);
    ctx->model = s->model;
    for (int i = 0; i < s->n_free; i++) {
        const wfit_free *f = &s->free[i];
        double v = floor_of(f) + exp(gsl_vector_get(x, (size_t)i));
        if (f->is_model) {
            wfit_mparam_set(&ctx->model, (wfit_mparam)f->which, v);
        } else {
            wl_param_set(&ctx->prof[f->profile], (wl_param)f->which, v);
        }
    }
}

/* Has observation o a measured footprint row? */
static bool has_footprint(const wfit_obs *o)
{
    return o->footprint_bytes > 0 && !o->is_oom;
}

/* Has observation o a measured host-time row? */
static bool has_host(const wfit_obs *o)
{
    return o->host_s > 0 && !o->is_oom;
}

/* Residuals of one observation: [time or oom, util, footprint, host]; the util, footprint and
 * host rows exist only when measured (the others are 0). */
static void obs_residuals(const fit_ctx *ctx, const wfit_obs *o, double *r_time, double *r_util,
                          double *r_mem, double *r_host)
{
    *r_host = 0;
    const wl_profile *p = &ctx->prof[o->profile];
    double sd = o->rel_sd > 0 ? o->rel_sd : WFIT_TIME_REL_SD;
    double mem = speed_partition_mem_bytes(&o->cfg);
    double need = 0;
    share_mem_fits(p, o->batch, &o->cfg, &need);
    double fp = wl_mem_footprint_bytes(p, o->batch);
    *r_mem = has_footprint(o) && fp > 0 ? log(fp / o->footprint_bytes) / WFIT_MEM_REL_SD : 0.0;
    if (o->is_oom) {
        *r_time = mem > 0 && need > 0 ? fmax(0.0, log(mem / need) + sd) / sd : 0.0;
        *r_util = 0;
        return;
    }
    double over = mem > 0 && need > 0 ? fmax(0.0, log(need / mem) + sd) / sd : 0.0;
    /* the time itself is predicted as if memory sufficed; the footprint term pulls it below */
    partition_cfg cfg = o->cfg;
    speed_result res;
    wl_profile tmp = *p;
    tmp.mem_footprint_bytes_fixed = 0;
    tmp.mem_footprint_bytes_per_sample = 0;
    predict_unit_estimate(&tmp, o->batch, &cfg, &ctx->model, &res);
    if (res.outcome != SPEED_OK || !(res.unit_time_s > 0)) {
        *r_time = UNPLACED_RESIDUAL + over;
        *r_util = 0;
        return;
    }
    *r_time = log(res.unit_time_s / o->unit_time_s) / sd + over;
    *r_util = o->gpu_util >= 0 ? (res.gpu_util - o->gpu_util) / ctx->util_sd : 0.0;
    *r_host = has_host(o) && res.iter_host_s > 0 ? log(res.iter_host_s / o->host_s) /
                                                       WFIT_TIME_REL_SD
                                                 : 0.0;
}

static int resid_f(const gsl_vector *x, void *params, gsl_vector *f)
{
    fit_ctx *ctx = params;
    install(ctx, x);
    size_t row = 0;
    for (int i = 0; i < ctx->n_obs; i++) {
        double rt, ru, rm, rh;
        obs_residuals(ctx, &ctx->obs[i], &rt, &ru, &rm, &rh);
        gsl_vector_set(f, row++, rt);
        if (ctx->obs[i].gpu_util >= 0 && !ctx->obs[i].is_oom) {
            gsl_vector_set(f, row++, ru);
        }
        if (has_footprint(&ctx->obs[i])) {
            gsl_vector_set(f, row++, rm);
        }
        if (has_host(&ctx->obs[i])) {
            gsl_vector_set(f, row++, rh);
        }
    }
    const wfit_spec *s = ctx->spec;
    for (int i = 0; i < s->n_free; i++) {
        const wfit_free *fr = &s->free[i];
        double xi = gsl_vector_get(x, (size_t)i);
        double r = fr->has_prior ? (xi - log(fr->prior.mean - floor_of(fr))) / fr->prior.rel_sd
                                 : (xi - ctx->start[i]) / NO_PRIOR_SD;
        gsl_vector_set(f, row++, r);
    }
    return GSL_SUCCESS;
}

static int data_rows(int n_obs, const wfit_obs *obs)
{
    int n = 0;
    for (int i = 0; i < n_obs; i++) {
        n += 1 + (obs[i].gpu_util >= 0 && !obs[i].is_oom ? 1 : 0) + has_footprint(&obs[i]) +
             has_host(&obs[i]);
    }
    return n;
}

static void name_param(const wfit_spec *s, int i, char *buf, size_t n)
{
    const wfit_free *f = &s->free[i];
    if (f->is_model) {
        snprintf(buf, n, "model.%s", wfit_mparam_name((wfit_mparam)f->which));
    } else {
        const char *pn = s->profiles[f->profile].name;
        snprintf(buf, n, "%s.%s", pn ? pn : "profile", wl_param_name((wl_param)f->which));
    }
}

static int check_spec(const wfit_spec *spec, int n_obs, const wfit_obs *obs)
{
    if (n_obs < 1 || spec->n_free < 0 || spec->n_free > WFIT_MAX_PARAMS ||
        spec->n_profiles < 1 || spec->n_profiles > WFIT_MAX_PROFILES) {
        return SIM_EINPUT;
    }
    for (int i = 0; i < spec->n_free; i++) {
        const wfit_free *f = &spec->free[i];
        if (f->is_model ? (unsigned)f->which >= WFIT_M_COUNT
                        : ((unsigned)f->which >= WL_P_COUNT || f->profile < 0 ||
                           f->profile >= spec->n_profiles)) {
            return SIM_EINPUT;
        }
        if (f->has_prior && !(f->prior.mean > 0 && f->prior.rel_sd > 0)) {
            return SIM_EINPUT;
        }
    }
    for (int i = 0; i < n_obs; i++) {
        if (obs[i].profile < 0 || obs[i].profile >= spec->n_profiles ||
            (!obs[i].is_oom && !(obs[i].unit_time_s > 0))) {
            return SIM_EINPUT;
        }
    }
    return 0;
}

/* Log of the spec's value of free parameter i (less its floor), for starts and implicit priors. */
static double spec_start(const wfit_spec *spec, int i)
{
    const wfit_free *f = &spec->free[i];
    double v = f->is_model ? wfit_mparam_get(&spec->model, (wfit_mparam)f->which)
                           : wl_param_get(&spec->profiles[f->profile], (wl_param)f->which);
    v -= floor_of(f);
    if (!(v > 0)) {
        v = f->has_prior ? f->prior.mean - floor_of(f) : floor_of(f) > 0 ? 1.0 : 1e-3;
    }
    return log(v);
}

typedef struct solve_out {
    double chisq, data_chisq;
    int iterations;
} solve_out;

/* One local fit from the start in x (logs); x receives the solution; so (may be NULL) its chi^2.
 * With iterate false x is only evaluated. cov (p x p, may be NULL) receives the covariance of
 * the logs from the Jacobian at the end point. Returns the GSL status. */
static int solve(fit_ctx *ctx, size_t n_data, gsl_vector *x, bool iterate, gsl_matrix *cov,
                 solve_out *so)
{
    size_t p = x->size, n = n_data + p;
    gsl_multifit_nlinear_fdf fdf = {.f = resid_f, .df = NULL, .fvv = NULL, .n = n, .p = p,
                                    .params = ctx};
    gsl_multifit_nlinear_workspace *w = nlsq_start(&fdf, x);
    int status = GSL_SUCCESS;
    if (iterate) {
        status = nlsq_iterate(w);
        gsl_vector_memcpy(x, gsl_multifit_nlinear_position(w));
    }
    if (cov) {
        gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 1e-12, cov);
    }
    if (so) {
        so->iterations = (int)gsl_multifit_nlinear_niter(w);
        gsl_vector *fres = gsl_multifit_nlinear_residual(w);
        so->chisq = 0;
        so->data_chisq = 0;
        for (size_t i = 0; i < n; i++) {
            double r = gsl_vector_get(fres, i);
            so->chisq += r * r;
            so->data_chisq += i < n_data ? r * r : 0.0;
        }
        if (!isfinite(so->chisq)) {
            so->chisq = so->data_chisq = HUGE_VAL;
        }
    }
    gsl_multifit_nlinear_free(w);
    return status;
}

static bool is_parallelism(const wfit_free *f)
{
    return !f->is_model &&
           (f->which == WL_P_MAX_SMS_FIXED || f->which == WL_P_MAX_SMS_PER_SAMPLE);
}

/* The SM range over which free parameter i (a parallelism parameter) is started and scanned:
 * [lo, hi] of P values, from the SM counts of its profile's observations (with a single SM count,
 * or counts within a factor 4 = PAR_RANGE_FACTOR, from a quarter of the largest: below the one
 * partition observed P trades against C freely). For a per-sample P, values are P at the largest
 * batch observed, less the fixed part (at least PAR_PER_SAMPLE_MIN of it), per sample. Returns
 * false when the profile has no timed observation. */
static bool par_range(const wfit_spec *spec, int n_obs, const wfit_obs *obs, int i, double *lo,
                      double *hi)
{
    const wfit_free *f = &spec->free[i];
    double smin = HUGE_VAL, smax = 0, bmax = 0;
    for (int k = 0; k < n_obs; k++) {
        if (obs[k].profile != f->profile || obs[k].is_oom) {
            continue;
        }
        double s = speed_client_sms(&obs[k].cfg, &spec->model);
        smin = fmin(smin, s);
        smax = fmax(smax, s);
        bmax = fmax(bmax, obs[k].batch);
    }
    if (!(smax > 0)) {
        return false;
    }
    *lo = fmin(smin, smax / PAR_RANGE_FACTOR);
    *hi = smax;
    if (f->which == WL_P_MAX_SMS_PER_SAMPLE) {
        double p0 = spec->profiles[f->profile].max_sms_fixed;
        *lo = fmax(*lo - p0, PAR_PER_SAMPLE_MIN * *lo) / bmax;
        *hi = fmax(*hi - p0, PAR_PER_SAMPLE_MIN * *hi) / bmax;
    }
    return *hi > 0 && *lo > 0;
}

/* The range over which a free fixed host time H is scanned for the family: [t/16, t] (16 =
 * HOST_RANGE_FACTOR) with t the shortest iteration observed of its profile (H cannot exceed an
 * iteration; below t/16 a sixteenth of the time would move between host and GPU, which no
 * observation separates).
 * Returns false when the parameter is not a fixed host time or has no timed observation. */
static bool host_range(const wfit_spec *spec, int n_obs, const wfit_obs *obs, int i, double *lo,
                       double *hi)
{
    const wfit_free *f = &spec->free[i];
    if (f->is_model || f->which != WL_P_HOST_S_FIXED) {
        return false;
    }
    double tmin = HUGE_VAL;
    for (int k = 0; k < n_obs; k++) {
        if (obs[k].profile == f->profile && !obs[k].is_oom) {
            tmin = fmin(tmin, obs[k].unit_time_s *
                                  wl_units_per_iter(&spec->profiles[f->profile], obs[k].batch));
        }
    }
    *lo = tmin / HOST_RANGE_FACTOR;
    *hi = tmin;
    return isfinite(tmin) && tmin > 0;
}

/* Point j of n spread geometrically over [lo, hi] (both ends included). */
static double grid_point(double lo, double hi, int j, int n)
{
    return n > 1 ? lo * pow(hi / lo, (double)j / (n - 1)) : hi;
}

/* Best fit of ctx's spec from its own start and from every parallelism start (see wfit.h).
 * x receives the best solution; returns its GSL status. */
static int multi_start(fit_ctx *ctx, size_t n_data, gsl_vector *x, solve_out *best, int *n_runs)
{
    const wfit_spec *s = ctx->spec;
    size_t p = x->size;
    int n_starts = s->par_starts > 0 ? s->par_starts : WFIT_DEFAULT_STARTS;
    for (size_t i = 0; i < p; i++) {
        gsl_vector_set(x, i, ctx->start[i]);
    }
    int status = solve(ctx, n_data, x, true, NULL, best);
    *n_runs = 1;
    if (n_starts < 2) {
        return status;
    }
    gsl_vector *y = gsl_vector_alloc(p);
    for (int i = 0; i < s->n_free; i++) {
        double lo, hi;
        if (!is_parallelism(&s->free[i]) ||
            !par_range(s, ctx->n_obs, ctx->obs, i, &lo, &hi)) {
            continue;
        }
        for (int j = 0; j < n_starts; j++) {
            gsl_vector_memcpy(y, x);
            gsl_vector_set(y, (size_t)i, log(grid_point(lo, hi, j, n_starts)));
            solve_out so;
            int st = solve(ctx, n_data, y, true, NULL, &so);
            (*n_runs)++;
            if (so.chisq < best->chisq * (1 - 1e-9) - 1e-12) {
                *best = so;
                status = st;
                gsl_vector_memcpy(x, y);
            }
        }
    }
    gsl_vector_free(y);
    return status;
}

/* Refit with free parameter `held` fixed at value v, starting from the best solution xb; fills
 * member *mb. Returns false when that refit cannot be evaluated. */
static bool refit_held(const fit_ctx *ctx, size_t n_data, const gsl_vector *xb, int held, double v,
                       wfit_member *mb)
{
    const wfit_spec *s = ctx->spec;
    wfit_spec *sub = xmalloc(sizeof *sub, "wfit family spec");
    *sub = *s;
    /* start from the best fit: its values are the sub-fit's starting profile and model */
    fit_ctx tmp = *ctx;
    install(&tmp, xb);
    memcpy(sub->profiles, tmp.prof, sizeof sub->profiles);
    sub->model = tmp.model;
    const wfit_free *hf = &s->free[held];
    wl_param_set(&sub->profiles[hf->profile], (wl_param)hf->which, v);
    sub->n_free = 0;
    fit_ctx c2 = {.spec = sub, .n_obs = ctx->n_obs, .obs = ctx->obs, .util_sd = ctx->util_sd};
    /* without a free model parameter the profiles are fitted independently: only the held
     * parameter's profile is refitted (the others' data chi^2 stays at the best fit's) */
    bool coupled = false;
    for (int i = 0; i < s->n_free; i++) {
        coupled |= s->free[i].is_model;
    }
    for (int i = 0; i < s->n_free; i++) {
        if (i == held || (!coupled && s->free[i].profile != hf->profile)) {
            continue;
        }
        sub->free[sub->n_free] = s->free[i];
        c2.start[sub->n_free] = ctx->start[i]; /* the implicit priors stay where they were */
        sub->n_free++;
    }
    size_t p = (size_t)sub->n_free;
    bool ok = true;
    if (p > 0) {
        gsl_vector *x = gsl_vector_alloc(p);
        for (int i = 0, k = 0; i < s->n_free; i++) {
            if (i != held && (coupled || s->free[i].profile == hf->profile)) {
                gsl_vector_set(x, (size_t)k++, gsl_vector_get(xb, (size_t)i));
            }
        }
        solve_out so;
        solve(&c2, n_data, x, true, NULL, &so);
        install(&c2, x);
        mb->data_chisq = so.data_chisq;
        ok = isfinite(so.data_chisq);
        gsl_vector_free(x);
    } else {
        gsl_vector *x = gsl_vector_alloc(1);
        install(&c2, x);
        gsl_vector_free(x);
        mb->data_chisq = 0;
        for (int k = 0; k < ctx->n_obs; k++) {
            double rt, ru, rm, rh;
            obs_residuals(&c2, &ctx->obs[k], &rt, &ru, &rm, &rh);
            mb->data_chisq += rt * rt + ru * ru + rm * rm + rh * rh;
        }
    }
    memcpy(mb->profiles, c2.prof, sizeof mb->profiles);
    mb->model = c2.model;
    mb->held = held;
    mb->held_value = v;
    free(sub);
    return ok;
}

/* The family scan of the free parallelism parameters and fixed host times (wfit.h); members go
 * to out->family. */
static void family_scan(const fit_ctx *ctx, size_t n_data, const gsl_vector *xb, double dchisq,
                        wfit_result *out, double *open_above)
{
    const wfit_spec *s = ctx->spec;
    enum { N_GRID = WFIT_FAMILY_GRID, N_BISECT = 8 };
    double limit = out->data_chisq + dchisq;
    wfit_member *mb = xmalloc(sizeof *mb, "wfit member");
    for (int i = 0; i < s->n_free; i++) {
        double lo, hi;
        bool par = is_parallelism(&s->free[i]);
        if (par ? !par_range(s, ctx->n_obs, ctx->obs, i, &lo, &hi)
                : !host_range(s, ctx->n_obs, ctx->obs, i, &lo, &hi)) {
            continue;
        }
        /* the best value joins the grid so that the consistent set is seen around it */
        double best_v = exp(gsl_vector_get(xb, (size_t)i));
        double g[N_GRID + 1];
        bool ok[N_GRID + 1];
        int n = 0;
        for (int j = 0; j < N_GRID; j++) {
            g[n++] = grid_point(lo, hi, j, N_GRID);
        }
        for (int j = 0; j < n; j++) {
            if (fabs(g[j] / best_v - 1) < 1e-9) {
                best_v = -1; /* already a grid point */
            }
        }
        if (best_v > 0) {
            int j = n;
            while (j > 0 && g[j - 1] > best_v) {
                g[j] = g[j - 1];
                j--;
            }
            g[j] = best_v;
            n++;
        }
        for (int j = 0; j < n; j++) {
            ok[j] = refit_held(ctx, n_data, xb, i, g[j], mb) && mb->data_chisq <= limit;
            if (ok[j]) {
                out->family[out->n_family++] = *mb;
            }
        }
        /* consistent at the largest SM count observed: any larger P fits as well */
        open_above[i] = par && ok[n - 1] ? g[n - 1] : 0;
        /* boundaries of the consistent set: bisect (in log) between a consistent grid point and
         * an inconsistent neighbour */
        for (int j = 0; j + 1 < n; j++) {
            if (ok[j] == ok[j + 1]) {
                continue;
            }
            double a = log(g[j]), b = log(g[j + 1]); /* ok side: a if ok[j] */
            if (!ok[j]) {
                double t = a;
                a = b;
                b = t;
            }
            wfit_member edge;
            bool have = false;
            for (int it = 0; it < N_BISECT; it++) {
                double mid = 0.5 * (a + b);
                if (refit_held(ctx, n_data, xb, i, exp(mid), mb) && mb->data_chisq <= limit) {
                    a = mid;
                    edge = *mb;
                    have = true;
                } else {
                    b = mid;
                }
            }
            if (have) {
                out->family[out->n_family++] = edge;
            }
        }
    }
    free(mb);
}

/* Value of free parameter f in a member (the held one included). */
static double member_value(const wfit_member *mb, const wfit_free *f)
{
    return f->is_model ? wfit_mparam_get(&mb->model, (wfit_mparam)f->which)
                       : wl_param_get(&mb->profiles[f->profile], (wl_param)f->which);
}

/* The report of free parameter i: its value from the best fit's log x_log (less its floor), the
 * standard error from the covariance's se_log, widened by the family's spread (out->family),
 * pinned or not (wfit.h), and what was assumed when not; open_above as family_scan gave it. */
static void param_result(const fit_ctx *ctx, const wfit_result *out, int i, double x_log,
                         double se_log, double open_above, wfit_param_result *pr)
{
    const wfit_spec *spec = ctx->spec;
    const wfit_free *f = &spec->free[i];
    name_param(spec, i, pr->name, sizeof pr->name);
    double fl = floor_of(f);
    double ex = exp(x_log);
    pr->value = fl + ex;
    pr->std_err = ex * se_log;
    pr->family_lo = pr->family_hi = pr->value;
    for (int k = 1; k < out->n_family; k++) {
        double v = member_value(&out->family[k], f);
        pr->family_lo = fmin(pr->family_lo, v);
        pr->family_hi = fmax(pr->family_hi, v);
    }
    /* the family's spread, as a standard error: half its range */
    double fam_log = 0.5 * log((pr->family_hi - fl) / (pr->family_lo - fl));
    double prior_sd = f->has_prior ? f->prior.rel_sd : NO_PRIOR_SD;
    double limit = f->has_prior ? 0.5 * prior_sd : 1.0;
    /* the family's words only where the local standard error alone would pin it */
    bool by_family = se_log <= limit;
    if (isfinite(fam_log) && fam_log > se_log) {
        se_log = fam_log;
        pr->std_err = fmax(pr->std_err, 0.5 * (pr->family_hi - pr->family_lo));
    }
    /* a parallelism that fits at the largest SM count observed is bounded from below only:
     * pinned when that bound is within the limit of the top ("fills every partition
     * observed"), else open */
    bool open = open_above > 0 && pr->family_lo < open_above * exp(-limit);
    pr->family_open = open_above > 0;
    pr->pinned = se_log <= limit && !open;
    if (pr->pinned) {
        return;
    }
    if (open && by_family) {
        snprintf(pr->assumed, sizeof pr->assumed,
                 "best chi^2 kept; the data fit %.4g and above alike (family)", pr->family_lo);
    } else if (by_family) {
        snprintf(pr->assumed, sizeof pr->assumed,
                 "best chi^2 kept; the data fit %.4g..%.4g alike (family)", pr->family_lo,
                 pr->family_hi);
    } else if (f->has_prior) {
        snprintf(pr->assumed, sizeof pr->assumed, "prior %.4g (%s)", f->prior.mean,
                 f->prior.source ? f->prior.source : "unsourced");
    } else {
        snprintf(pr->assumed, sizeof pr->assumed, "start value %.4g", fl + exp(ctx->start[i]));
    }
}

int wfit_fit(const wfit_spec *spec, int n_obs, const wfit_obs *obs, wfit_result *out)
{
    memset(out, 0, sizeof *out);
    if (check_spec(spec, n_obs, obs) != 0) {
        return SIM_EINPUT;
    }
    fit_ctx ctx = {.spec = spec, .n_obs = n_obs, .obs = obs};
    ctx.util_sd = spec->util_sd > 0 ? spec->util_sd : WFIT_UTIL_SD;
    size_t p = (size_t)spec->n_free;
    size_t n_data = (size_t)data_rows(n_obs, obs);
    out->n_obs = n_obs;
    out->rel_residual = xcalloc((size_t)n_obs, sizeof(double), "wfit residuals");
    gsl_vector *x = gsl_vector_alloc(p > 0 ? p : 1);
    for (size_t i = 0; i < p; i++) {
        ctx.start[i] = spec_start(spec, (int)i);
        gsl_vector_set(x, i, ctx.start[i]);
    }
    int status = 0;
    if (p > 0) {
        solve_out best;
        status = multi_start(&ctx, n_data, x, &best, &out->n_starts);
        gsl_matrix *cov = gsl_matrix_alloc(p, p);
        solve(&ctx, n_data, x, false, cov, NULL);
        out->iterations = best.iterations;
        out->chisq = best.chisq;
        out->data_chisq = best.data_chisq;
        out->dof = (int)n_data - (int)p;
        install(&ctx, x);
        out->family = xcalloc(1 + WFIT_FAMILY_PER_PARAM * p, sizeof *out->family, "wfit family");
        wfit_member *m0 = &out->family[out->n_family++];
        memcpy(m0->profiles, ctx.prof, sizeof m0->profiles);
        m0->model = ctx.model;
        m0->data_chisq = out->data_chisq;
        m0->held = -1;
        double dchisq = spec->family_dchisq != 0 ? spec->family_dchisq : 1.0;
        double open_above[WFIT_MAX_PARAMS] = {0};
        if (dchisq > 0) {
            family_scan(&ctx, n_data, x, dchisq, out, open_above);
        }
        install(&ctx, x);
        for (size_t i = 0; i < p; i++) {
            param_result(&ctx, out, (int)i, gsl_vector_get(x, i),
                         sqrt(gsl_matrix_get(cov, i, i)), open_above[i], &out->params[i]);
        }
        out->n_params = (int)p;
        gsl_matrix_free(cov);
        status = status == GSL_SUCCESS ? 0 : SIM_ENOCONV;
    } else {
        install(&ctx, x);
    }
    gsl_vector_free(x);
    memcpy(out->profiles, ctx.prof, sizeof out->profiles);
    out->model = ctx.model;
    for (int i = 0; i < n_obs; i++) {
        const wfit_obs *o = &obs[i];
        speed_result res;
        predict_unit_estimate(&ctx.prof[o->profile], o->batch, &o->cfg, &ctx.model, &res);
        if (o->is_oom) {
            out->rel_residual[i] = res.outcome == SPEED_OOM ? 0.0 : 1.0;
        } else {
            out->rel_residual[i] = res.outcome == SPEED_OK ? res.unit_time_s / o->unit_time_s - 1
                                                           : 1.0;
        }
    }
    out->status = status;
    return status;
}

void wfit_result_fini(wfit_result *r)
{
    free(r->rel_residual);
    r->rel_residual = NULL;
    free(r->family);
    r->family = NULL;
    r->n_family = 0;
}
