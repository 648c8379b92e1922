/* model/wfit.c - GSL non-linear least squares for workload profiles (see wfit.h). */
#include "model/wfit.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/predict.h"
#include "model/share.h"
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

/* Residuals of one observation: [time or oom, util]; n_util rows exist only when measured. */
static void obs_residuals(const fit_ctx *ctx, const wfit_obs *o, double *r_time, double *r_util)
{
    const wl_profile *p = &ctx->prof[o->profile];
    double sd = o->rel_sd > 0 ? o->rel_sd : 0.02;
    double mem = speed_partition_mem_bytes(&o->cfg);
    double need = 0;
    share_mem_fits(p, o->batch, &o->cfg, &need);
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
        *r_time = 1e3 + over;
        *r_util = 0;
        return;
    }
    *r_time = log(res.unit_time_s / o->unit_time_s) / sd + over;
    *r_util = o->gpu_util >= 0 ? (res.gpu_util - o->gpu_util) / ctx->util_sd : 0.0;
}

static int resid_f(const gsl_vector *x, void *params, gsl_vector *f)
{
    fit_ctx *ctx = params;
    install(ctx, x);
    size_t row = 0;
    for (int i = 0; i < ctx->n_obs; i++) {
        double rt, ru;
        obs_residuals(ctx, &ctx->obs[i], &rt, &ru);
        gsl_vector_set(f, row++, rt);
        if (ctx->obs[i].gpu_util >= 0 && !ctx->obs[i].is_oom) {
            gsl_vector_set(f, row++, ru);
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
        n += 1 + (obs[i].gpu_util >= 0 && !obs[i].is_oom ? 1 : 0);
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

int wfit_fit(const wfit_spec *spec, int n_obs, const wfit_obs *obs, wfit_result *out)
{
    memset(out, 0, sizeof *out);
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
    fit_ctx ctx = {.spec = spec, .n_obs = n_obs, .obs = obs};
    ctx.util_sd = spec->util_sd > 0 ? spec->util_sd : 0.05;
    size_t p = (size_t)spec->n_free;
    size_t n_data = (size_t)data_rows(n_obs, obs);
    size_t n = n_data + p;
    out->n_obs = n_obs;
    out->rel_residual = xcalloc((size_t)n_obs, sizeof(double), "wfit residuals");
    gsl_vector *x = gsl_vector_alloc(p > 0 ? p : 1);
    for (size_t i = 0; i < p; i++) {
        const wfit_free *f = &spec->free[i];
        double v = f->is_model ? wfit_mparam_get(&spec->model, (wfit_mparam)f->which)
                               : wl_param_get(&spec->profiles[f->profile], (wl_param)f->which);
        v -= floor_of(f);
        if (!(v > 0)) {
            v = f->has_prior ? f->prior.mean - floor_of(f) : floor_of(f) > 0 ? 1.0 : 1e-3;
        }
        ctx.start[i] = log(v);
        gsl_vector_set(x, i, log(v));
    }
    int status = 0;
    if (p > 0) {
        gsl_multifit_nlinear_fdf fdf = {.f = resid_f, .df = NULL, .fvv = NULL, .n = n, .p = p,
                                        .params = &ctx};
        gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
        gsl_multifit_nlinear_workspace *w =
            gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, n, p);
        gsl_multifit_nlinear_init(x, &fdf, w);
        int info = 0;
        status = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-12, NULL, NULL, &info, w);
        out->iterations = (int)gsl_multifit_nlinear_niter(w);
        gsl_vector_memcpy(x, gsl_multifit_nlinear_position(w));
        gsl_matrix *J = gsl_multifit_nlinear_jac(w);
        gsl_matrix *cov = gsl_matrix_alloc(p, p);
        gsl_multifit_nlinear_covar(J, 1e-12, cov);
        gsl_vector *fres = gsl_multifit_nlinear_residual(w);
        double chisq;
        gsl_blas_ddot(fres, fres, &chisq);
        out->chisq = chisq;
        out->dof = (int)n_data - (int)p;
        install(&ctx, x);
        for (size_t i = 0; i < p; i++) {
            const wfit_free *f = &spec->free[i];
            wfit_param_result *pr = &out->params[i];
            name_param(spec, (int)i, pr->name, sizeof pr->name);
            double ex = exp(gsl_vector_get(x, i));
            double se_log = sqrt(gsl_matrix_get(cov, i, i));
            pr->value = floor_of(f) + ex;
            pr->std_err = ex * se_log;
            double prior_sd = f->has_prior ? f->prior.rel_sd : NO_PRIOR_SD;
            double limit = f->has_prior ? 0.5 * prior_sd : 1.0;
            pr->pinned = se_log <= limit;
            if (!pr->pinned) {
                if (f->has_prior) {
                    snprintf(pr->assumed, sizeof pr->assumed, "prior %.4g (%s)", f->prior.mean,
                             f->prior.source ? f->prior.source : "unsourced");
                } else {
                    snprintf(pr->assumed, sizeof pr->assumed, "start value %.4g",
                             floor_of(f) + exp(ctx.start[i]));
                }
            }
        }
        out->n_params = (int)p;
        gsl_matrix_free(cov);
        gsl_multifit_nlinear_free(w);
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
}
