/* model/fit/wfit.h - fit workload-profile parameters (and optionally loss factors) to observations.
 *
 * Non-linear least squares with GSL (gsl_multifit_nlinear, trust region + Levenberg-Marquardt).
 * Every free parameter is fitted in logarithm (it stays positive; the roofline exponent is fitted
 * as log(p - 1), so p >= 1), and every residual is relative:
 *   time observation:    log(predicted time / measured time) / rel_sd
 *   gpu_util:            (predicted - measured) / util_sd
 *   footprint (FB used): log(predicted footprint / measured) / WFIT_MEM_REL_SD
 *   outcome = oom:       max(0, log(memory / footprint) + rel_sd) / rel_sd  (the footprint must
 *                        exceed the memory by the observation's uncertainty)
 *   outcome ok:          max(0, log(footprint / memory) + rel_sd) / rel_sd  (and stay below it)
 *   prior on parameter:  log(value / prior mean) / prior_rel_sd
 * A parameter is reported as NOT PINNED when the data leave it to its prior: its posterior
 * standard error (in log) exceeds half the prior's, or, with no prior, exceeds 1 (a factor e).
 *
 * GPU utilisation. NVML's `utilization.gpu` (and DCGM_FI_DEV_GPU_UTIL) is the fraction of its
 * sample periods (1/6 s to 1 s) during which one or more kernels was executing on the GPU,
 * whatever number of SMs they occupy. The model's counterpart is the share of the wall time
 * that the job's GPU phase G (kernels, memory traffic) is active: solo, u = G / t
 * (model/physics/speed.h), so a measured u pins the host/kernel split (kernel-busy time = u t); it says
 * nothing about how many SMs the kernels fill.
 *
 * Parallelism. A free parallelism parameter (max_sms_fixed or max_sms_per_sample of a profile)
 * enters only through min(s, P): at P >= the largest SM count observed, the data no longer move
 * it, so a single start there can stop on that plateau. The fit is therefore started several
 * times, with P at points spread geometrically over the observed SM range (the others at the
 * best fit so far), in a fixed order, and the start with the lowest chi^2 (priors included) is
 * kept; a later start must beat it by a relative 1e-9 (deterministic ties).
 *
 * Family of profiles. The local covariance cannot see a trade-off that runs over the kink of
 * min(s, P) (two observations on two partitions are fitted equally well by host time + full
 * parallelism and by no host time + kernels that fill only part of the larger partition), nor
 * over the kink of max(H, G) of a loop that overlaps host and GPU work (one timed run of it is
 * fitted by H = t as well as by G = t with any smaller H). So each free parallelism parameter is
 * held at points of the observed SM range, and each free fixed host time at points of
 * [t/16, t] (t: its shortest observed iteration), and at the boundaries of the consistent set
 * (found by bisection), while everything else is refitted: every profile whose data chi^2 is
 * within `family_dchisq` of the best is a member of the family. A parameter
 * that moves across the family by more than its standard error says is reported with the
 * family's spread (std_err at least half its range) and NOT PINNED when that spread exceeds the
 * limit above; predict spans the members (model/physics/predict.h predict_family_time).
 * Several profiles may be fitted together (observations name their profile by index), which is
 * how loss factors shared by many workloads are fitted.
 * Ownership: wfit_fit copies what it needs; the result owns its residual and family arrays
 * (wfit_result_fini).
 */
#ifndef SIMPROJ_MODEL_WFIT_H
#define SIMPROJ_MODEL_WFIT_H

#include <stdbool.h>

#include "model/physics/speed.h"

/* Default noise of an observation, where the caller states none (validate and fit-workload
 * state none today, so every fit uses these): a fitting choice, not physics (no GPU measurement
 * sets them; the physics is in model/physics/physics.yaml). They weight the residuals: the best fit
 * depends on their ratios to each other and to the priors' sds, and chi^2 (so the family's
 * width and NOT PINNED) on their size.
 * WFIT_TIME_REL_SD: sd of log(time) of a timed run, an assumed noise (a time known to about
 * 2 %); the oom / ok footprint margins use it too.
 * WFIT_UTIL_SD: sd of a gpu_util reading, 5 percentage points: NVML's busy fraction counts whole
 * sample periods (above), so it is coarser than a timed run. */
#define WFIT_TIME_REL_SD 0.02
#define WFIT_UTIL_SD 0.05
/* WFIT_MEM_REL_SD: sd of log(footprint) of a device-memory reading: the frame buffer in use
 * counts the CUDA context (some hundred MiB) and what a caching allocator keeps reserved beyond
 * the live tensors, so it stands for the footprint to about 10 % (an assumption, as above). */
#define WFIT_MEM_REL_SD 0.10

#define WFIT_MAX_PROFILES 8
#define WFIT_MAX_PARAMS 48
#define WFIT_DEFAULT_STARTS 4 /* starts per free parallelism parameter */
#define WFIT_FAMILY_GRID 8    /* points of a scanned parameter's range */
/* Most members a family can have: the best fit, and per scanned parameter its grid points, the
 * best value and a boundary between each pair of neighbours. */
#define WFIT_FAMILY_PER_PARAM (2 * WFIT_FAMILY_GRID + 1)

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
    double footprint_bytes; /* measured device memory in use (DCGM_FI_DEV_FB_USED, nvidia-smi
                             * memory.used), or <= 0 when not measured */
    double rel_sd;         /* relative uncertainty of the time (0 = WFIT_TIME_REL_SD) */
    double host_s;         /* measured host time per iteration: a host clock around the loop's
                            * own work, without its wait for the GPU at a synchronisation
                            * (speed_result.iter_host_s, relative sd WFIT_TIME_REL_SD), or <= 0
                            * when not measured */
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
    double util_sd;                         /* 0 = WFIT_UTIL_SD */
    int par_starts;       /* starts per free parallelism parameter over the observed SM range:
                             0 = WFIT_DEFAULT_STARTS, 1 = only the given start */
    double family_dchisq; /* data chi^2 above the best that a family member may have:
                             0 = 1 (one standard deviation), < 0 = no family scan */
} wfit_spec;

/* One profile set of the family (see the header note). */
typedef struct wfit_member {
    wl_profile profiles[WFIT_MAX_PROFILES];
    phys_params model;
    double data_chisq; /* chi^2 of the observations only (no prior terms) */
    int held;          /* index into wfit_spec.free of the parameter held, or -1 (best fit) */
    double held_value; /* its value */
} wfit_member;

typedef struct wfit_param_result {
    char name[64];         /* "simpletrack.host_s_fixed" or "model.eta" */
    double value;
    double std_err;        /* absolute, from the covariance (delta method from log) */
    bool pinned;           /* false: the data leave it to its prior / start value, or the
                              family of profiles spreads it too wide */
    double family_lo, family_hi; /* its range over the family (= value without one) */
    bool family_open;      /* a parallelism that fits from family_lo up to any larger value
                              (it fits at the largest SM count observed) */
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
    double chisq;                      /* at the best fit, prior terms included */
    double data_chisq;                 /* the observations' part of chisq */
    int dof;
    int n_starts;                      /* fits run from different starts */
    int n_family;                      /* members of the family (the best fit included) */
    wfit_member *family;               /* owned; [0] is the best fit; at most
                                          1 + WFIT_FAMILY_PER_PARAM per free parameter */
} wfit_result;

/* Fit spec's free parameters to n_obs observations (several starts, then the family scan; see
 * the header note). Fills *out (caller releases it with wfit_result_fini). Returns 0,
 * SIM_EINPUT for an unusable spec (no observations, unknown parameter, more parameters than
 * allowed) or SIM_ENOCONV when GSL did not converge (the result still holds the last iterate). */
int wfit_fit(const wfit_spec *spec, int n_obs, const wfit_obs *obs, wfit_result *out);

/* Free what the result owns; fini on a zeroed result is a no-op. */
void wfit_result_fini(wfit_result *r);

/* Read / write a model parameter of m (eta: class 0, k = 2 is read; all k >= 2 written). */
double wfit_mparam_get(const phys_params *m, wfit_mparam p);
void wfit_mparam_set(phys_params *m, wfit_mparam p, double v);

#endif
