/* model/wfit.h - fit workload-profile parameters (and optionally loss factors) to observations.
 *
 * Non-linear least squares with GSL (gsl_multifit_nlinear, trust region + Levenberg-Marquardt).
 * Every free parameter is fitted in logarithm (it stays positive; the roofline exponent is fitted
 * as log(p - 1), so p >= 1), and every residual is relative:
 *   time observation:    log(predicted time / measured time) / rel_sd
 *   gpu_util:            (predicted - measured) / util_sd
 *   outcome = oom:       max(0, log(memory / footprint) + rel_sd) / rel_sd  (the footprint must
 *                        exceed the memory by the observation's uncertainty)
 *   outcome ok:          max(0, log(footprint / memory) + rel_sd) / rel_sd  (and stay below it)
 *   prior on parameter:  log(value / prior mean) / prior_rel_sd
 * A parameter is reported as NOT PINNED when the data leave it to its prior: its posterior
 * standard error (in log) exceeds half the prior's, or, with no prior, exceeds 1 (a factor e).
 * Several profiles may be fitted together (observations name their profile by index), which is
 * how loss factors shared by many workloads are fitted.
 * Ownership: wfit_fit copies what it needs; the result owns its residual array (wfit_result_fini).
 */
#ifndef SIMPROJ_MODEL_WFIT_H
#define SIMPROJ_MODEL_WFIT_H

#include <stdbool.h>

#include "model/speed.h"

#define WFIT_MAX_PROFILES 8
#define WFIT_MAX_PARAMS 48

/* Loss factors that a fit may free (model parameters, phys_params). */
typedef enum wfit_mparam {
    WFIT_M_ETA,              /* η(k) for every k >= 2 of time-slice class 0, tied */
    WFIT_M_ROOFLINE_P,
    WFIT_M_MIG_SM_EFF,
    WFIT_M_BW_STREAM_EFF,
    WFIT_M_BW_DRIVE_SM_FRAC,
    WFIT_M_POWER_ALPHA,
    WFIT_M_POWER_SM_W_FP32,  /* power_sm_w[class], in class order */
    WFIT_M_POWER_SM_W_FP64,
    WFIT_M_POWER_SM_W_FP16,
    WFIT_M_POWER_SM_W_TENSOR,
    WFIT_M_MPS_BW_CONTENTION,
    WFIT_M_COUNT
} wfit_mparam;

/* Name of a model parameter ("eta", "roofline_p", "power_sm_w.tensor", ...); static. */
const char *wfit_mparam_name(wfit_mparam p);

/* One measured run. */
typedef struct wfit_obs {
    int profile;           /* index into wfit_spec.profiles */
    partition_cfg cfg;     /* where it ran; pointers borrowed */
    double batch;
    bool is_oom;           /* outcome: out of memory (time ignored) */
    double unit_time_s;    /* measured wall time per unit of work; > 0 unless is_oom */
    double gpu_util;       /* measured GPU busy fraction, or < 0 when not measured */
    double rel_sd;         /* relative uncertainty of the time (0 = 0.02) */
} wfit_obs;

/* A prior for an under-determined parameter. */
typedef struct wfit_prior {
    double mean;           /* > 0 */
    double rel_sd;         /* standard deviation of log(value) */
    const char *source;    /* where the prior comes from (workload class, catalog); borrowed */
} wfit_prior;

typedef struct wfit_free {
    bool is_model;         /* false: profile parameter; true: model parameter */
    int profile;           /* profile index (profile parameters only) */
    int which;             /* wl_param or wfit_mparam */
    bool has_prior;
    wfit_prior prior;
} wfit_free;

typedef struct wfit_spec {
    int n_profiles;
    wl_profile profiles[WFIT_MAX_PROFILES]; /* starting values; non-free fields stay fixed */
    phys_params model;                      /* starting / fixed loss factors */
    int n_free;
    wfit_free free[WFIT_MAX_PARAMS];
    double util_sd;                         /* 0 = 0.05 */
} wfit_spec;

typedef struct wfit_param_result {
    char name[64];         /* "simpletrack.host_s_fixed" or "model.eta" */
    double value;
    double std_err;        /* absolute, from the covariance (delta method from log) */
    bool pinned;           /* false: the data leave it to its prior / start value */
    char assumed[96];      /* when not pinned: what was assumed ("prior 0.1 (class x)") */
} wfit_param_result;

typedef struct wfit_result {
    int status;                        /* 0 or SIM_ENOCONV */
    int iterations;
    wl_profile profiles[WFIT_MAX_PROFILES];
    phys_params model;
    int n_params;
    wfit_param_result params[WFIT_MAX_PARAMS];
    int n_obs;
    double *rel_residual;              /* per observation: predicted/measured - 1 (0 for oom
                                          rows that agree, 1 when they disagree); owned */
    double chisq;
    int dof;
} wfit_result;

/* Fit spec's free parameters to n_obs observations. Fills *out (caller releases it with
 * wfit_result_fini). Returns 0, SIM_EINPUT for an unusable spec (no observations, unknown
 * parameter, more parameters than allowed) or SIM_ENOCONV when GSL did not converge (the
 * result still holds the last iterate). */
int wfit_fit(const wfit_spec *spec, int n_obs, const wfit_obs *obs, wfit_result *out);

/* Free what the result owns; fini on a zeroed result is a no-op. */
void wfit_result_fini(wfit_result *r);

/* Read / write a model parameter of m (eta: class 0, k = 2 is read; all k >= 2 written). */
double wfit_mparam_get(const phys_params *m, wfit_mparam p);
void wfit_mparam_set(phys_params *m, wfit_mparam p, double v);

#endif
