/* model/fit/calfit.h - fit model parameters to calibration measurements (calib/ programs).
 *
 * The measurements arrive as plain structs (cal_data), filled by experiments/calib_json.h from
 * a calibration JSON; this module reads no file. Fits (GSL least squares), each with standard
 * errors and residuals:
 *   rate(s)  = r s (1 - k s)          per format; r = TFLOP/s per SM, k = roll-off per SM
 *                                     (linear least squares in s and s^2; k is kept only when it
 *                                     differs from 0 by more than 2 standard errors)
 *   BW(s)    soft minimum of b s and Bmax:  BW = (b s) / (1 + (b s / Bmax)^p)^(1/p)
 *            or saturating Michaelis-Menten: BW = Bmax s / (s + s_half)
 *            (gsl_multifit_nlinear, relative residuals; the form with the smaller residual sum
 *            of squares is chosen and both are reported)
 *   eta(k)   time-slice efficiency per kernel length: eta(k) = k T(1) / T(k), T = the makespan
 *            of k processes running the same work back to back; mean and standard error over
 *            repetitions; eta_mean = the weighted mean over k >= 2.
 *   MPS      per-client wall time predicted from SM shares (thread-percentage caps, shared in
 *            proportion when the caps add up to more than the GPU) and, for memory-bound
 *            clients, the fitted bandwidth curve; fitted: eta_compute, eta_memory (throughput
 *            scales) and gamma_mixed (slowdown of a client whose co-runners are of the other
 *            kind while the GPU is not oversubscribed).
 *   all-reduce  t(G) = 2(N-1) alpha + 2(N-1)/N G / beta   (weighted linear least squares,
 *            weights 1/t^2, i.e. relative errors; N = GPUs), constrained to alpha > 0 and
 *            beta > 0: a parameter is pinned when its estimate is positive and its standard
 *            error at most its value (at most 1 in log, the rule of model/fit/wfit.h without a
 *            prior). One the rows cannot pin (a flat latency-bound sweep gives a slope <= 0, i.e.
 *            a negative bandwidth) is held at an assumed value (cal_ar_assume: the ring's
 *            alpha or bus bandwidth from model/physics/comm.yaml) and the other is refitted with it
 *            held; without an assumed value such a sweep has no fit.
 * Hold-out: calfit_holdout fits on every other SM count and kernel length and predicts the rest.
 * Units: SMs, TFLOP/s, GB/s (1e9 bytes/s), seconds, bytes, as the field names say.
 * Ownership: plain values only; no pointers. No global state; deterministic.
 */
#ifndef SIMPROJ_MODEL_CALFIT_H
#define SIMPROJ_MODEL_CALFIT_H

#include <stdbool.h>

#define CAL_MAX_PTS 64       /* SM counts per series, sizes per all-reduce sweep */
#define CAL_MAX_FORMATS 10
#define CAL_MAX_BW 4         /* bandwidth kernels (copy, triad) */
#define CAL_MAX_LENGTHS 8    /* time-slice kernel lengths */
#define CAL_MAX_K 8          /* distinct process counts per length */
#define CAL_MAX_REPS 8
#define CAL_MAX_MPS 64       /* MPS groups */
#define CAL_MAX_CLIENTS 16
#define CAL_MAX_AR_RINGS 3   /* all-reduce sweeps of other ring sizes beside the node's own */
#define CAL_NAME_LEN 32

/* One measured point: x (SMs or bytes) and the median of `reps` samples with their range. */
typedef struct cal_sample {
    double x, median, min, max;
    int reps;
} cal_sample;

typedef struct cal_series {
    char name[CAL_NAME_LEN]; /* format ("fp32", "bf16_tensor") or kernel ("triad") */
    int n;
    cal_sample pts[CAL_MAX_PTS]; /* ascending x; y in TFLOP/s or GB/s */
} cal_series;

/* Time-slice makespans of one kernel length and gap mode: T[k][rep] in seconds. */
typedef struct cal_ts_length {
    double kernel_ms;   /* measured solo kernel length */
    double gap_ms;      /* host sleep after each kernel; 0 = back to back */
    long kernels;       /* kernels per process */
    int n_k;
    int k[CAL_MAX_K];   /* ascending, k[0] = 1 */
    int n_rep[CAL_MAX_K];
    double makespan_s[CAL_MAX_K][CAL_MAX_REPS];
} cal_ts_length;

typedef struct cal_mps_client {
    bool is_memory;
    int sms;        /* SMs the client was given (reported under its cap) */
    double wall_s;
    long kernels;   /* kernels it launched; 0 = not recorded */
} cal_mps_client;

typedef struct cal_mps_run {
    int pct;        /* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE */
    int n;
    cal_mps_client c[CAL_MAX_CLIENTS];
} cal_mps_run;

/* Everything a fit needs from one calibration file. */
typedef struct cal_data {
    char device[96], uuid[64], driver[32], date_utc[32];
    int sms_total;
    int n_rates;
    cal_series rates[CAL_MAX_FORMATS];  /* x = SMs, y = TFLOP/s */
    int n_bw;
    cal_series bw[CAL_MAX_BW];          /* x = SMs, y = GB/s */
    int n_ts;
    cal_ts_length ts[CAL_MAX_LENGTHS * 2];
    bool has_mps;
    double mps_solo_compute_s, mps_solo_memory_s; /* one uncapped client alone (100 %, mix c/m) */
    int n_mps;
    cal_mps_run mps[CAL_MAX_MPS];
    int ar_gpus;                        /* 0 = no all-reduce data */
    cal_series ar;                      /* x = bytes, y = ms */
    int ar_only_proto;                  /* allreduce.protocol: 0 not stated (both, cut where
                                           the tuner switches), 1 every row LL, 2 every row
                                           Simple (e.g. a framework's sweep whose small
                                           messages are host-bound and left out) */
} cal_data;

typedef struct cal_param {
    double value, se; /* se: standard error (0 when not estimated) */
} cal_param;

typedef struct cal_rate_fit {
    char name[CAL_NAME_LEN];
    cal_param per_sm;       /* TFLOP/s per SM */
    cal_param rolloff;      /* k in r s (1 - k s); 0 when not significant */
    bool has_rolloff;
    int n;
    double resid_rel[CAL_MAX_PTS]; /* (measured - fitted) / fitted */
    double rms_rel;
} cal_rate_fit;

typedef enum cal_bw_form { CAL_BW_SOFTMIN, CAL_BW_MM } cal_bw_form;

typedef struct cal_bw_fit {
    char name[CAL_NAME_LEN];
    cal_bw_form form;       /* the chosen one */
    cal_param bmax_gb_s;    /* both forms */
    cal_param per_sm_gb_s;  /* soft-min: b */
    cal_param sharpness;    /* soft-min: p */
    cal_param s_half;       /* Michaelis-Menten */
    cal_param mm_bmax_gb_s;
    double rss_softmin, rss_mm; /* sums of squared relative residuals */
    int n;
    double resid_rel[CAL_MAX_PTS]; /* of the chosen form */
    double rms_rel;
} cal_bw_fit;

typedef struct cal_ts_fit {
    double kernel_ms, gap_ms;
    int n_k;
    int k[CAL_MAX_K];
    cal_param eta[CAL_MAX_K]; /* eta[0] is k = 1 (= 1 by definition) */
    cal_param eta_mean;       /* over k >= 2 */
} cal_ts_fit;

typedef struct cal_mps_fit {
    cal_param eta_compute, eta_memory, gamma_mixed;
    int n;
    double rms_rel;   /* relative residual of the predicted wall times */
    double max_rel;
} cal_mps_fit;

typedef struct cal_ar_fit {
    int gpus;
    cal_param alpha_s;          /* per ring step; > 0 */
    cal_param beta_bytes_per_s; /* per-link bandwidth in the ring formula; > 0 */
    bool alpha_pinned, beta_pinned; /* false: the rows do not pin it; held at the assumed
                                       value (se 0) or, with none, a loose positive estimate */
    int n;
    double resid_rel[CAL_MAX_PTS];
    double rms_rel, max_rel;
} cal_ar_fit;

/* The all-reduce fit of one ring size: per protocol ([0] LL, [1] Simple) where measured. */
typedef struct cal_ar_ring {
    int gpus;
    bool has[2];
    cal_ar_fit proto[2];
    double ll_max_bytes; /* largest LL message when both protocols are fitted; else 0 */
} cal_ar_ring;

typedef struct cal_fit {
    int sms_total;
    int n_rates;
    cal_rate_fit rates[CAL_MAX_FORMATS];
    int n_bw;
    cal_bw_fit bw[CAL_MAX_BW];
    int n_ts;
    cal_ts_fit ts[CAL_MAX_LENGTHS * 2];
    bool has_mps;
    cal_mps_fit mps;
    bool has_ar;
    cal_ar_fit ar;              /* one alpha-beta over the whole sweep */
    bool has_ar_proto;          /* ar_proto holds a fit per NCCL protocol */
    double ar_ll_max_bytes;     /* largest message of the LL side (the tuner's switch point) */
    cal_ar_fit ar_proto[2];     /* [0] LL (messages <= ar_ll_max_bytes), [1] Simple (above) */
    /* All-reduce fits of rings of other sizes (`slicesim fit --allreduce-sweep`), each on its
     * own gpus (distinct, none equal to ar.gpus): per protocol where its sweep measured it. */
    int n_ar_rings;
    cal_ar_ring ar_rings[CAL_MAX_AR_RINGS];
} cal_fit;

/* Fit one rate series (>= 1 point: a MIG instance is measured whole, at one SM count; its
 * standard error is then 0). Returns 0, or SIM_EINPUT for an empty series. */
int calfit_rate(const cal_series *s, cal_rate_fit *out);
/* Rate in TFLOP/s on `sms` SMs. */
double calfit_rate_eval(const cal_rate_fit *f, double sms);

/* Fit one bandwidth series (>= 4 points) in both forms and choose. Returns 0 or SIM_EINPUT. */
int calfit_bw(const cal_series *s, cal_bw_fit *out);
/* Bandwidth (GB/s) on `sms` SMs under the chosen form. */
double calfit_bw_eval(const cal_bw_fit *f, double sms);

/* eta(k) of one time-slice length (needs k = 1 first). Returns 0 or SIM_EINPUT. */
int calfit_timeslice(const cal_ts_length *t, cal_ts_fit *out);

/* MPS parameters, using a bandwidth fit (triad) for memory-bound clients. Returns 0 or
 * SIM_EINPUT when the data hold no usable group. */
int calfit_mps(const cal_data *d, const cal_bw_fit *bw, cal_mps_fit *out);
/* Predicted wall time (s) of client i of run r under parameters f (and bandwidth fit bw). */
double calfit_mps_predict(const cal_data *d, const cal_bw_fit *bw, const cal_mps_fit *f,
                          const cal_mps_run *r, int i);

/* Values an all-reduce fit holds a parameter at when the rows cannot pin it (both > 0). */
typedef struct cal_ar_assume {
    double alpha_s, beta_bytes_per_s;
} cal_ar_assume;

/* alpha/beta of the all-reduce sweep (>= 3 points, gpus >= 2), constrained positive (see the
 * header); assume may be NULL. Standard errors are >= 0. Returns 0, or SIM_EINPUT for too few
 * points, or when a parameter's estimate is <= 0 and assume is NULL. */
int calfit_allreduce(const cal_series *ar, int gpus, const cal_ar_assume *assume,
                     cal_ar_fit *out);
/* Predicted all-reduce time (s) of `bytes` on f->gpus GPUs. */
double calfit_allreduce_eval(const cal_ar_fit *f, double bytes);

/* One alpha-beta per NCCL protocol: the sweep (sorted by size, as calib/ writes it) is cut
 * where NCCL's tuner leaves LL for Simple, which the sweep shows as a jump, not a smooth bend:
 * every cut leaving >= 3 rows on each side is tried, both sides fitted (calfit_allreduce, no
 * assumed values) and the cut with the least sum of squared relative residuals kept. out[0]
 * the LL side (messages <= *ll_max_bytes), out[1] Simple. Returns 0, or SIM_EINPUT when no
 * cut gives a positive alpha and beta on both sides (fewer than 6 rows, or no jump). */
int calfit_allreduce_protocols(const cal_series *ar, int gpus, cal_ar_fit out[2],
                               double *ll_max_bytes);

/* The fit of one ring size from a calibration's all-reduce sweep: one alpha-beta for the
 * protocol the sweep states (d->ar_only_proto), else one per protocol
 * (calfit_allreduce_protocols). Returns 0, or SIM_EINPUT when the sweep gives no fit. */
int calfit_allreduce_ring(const cal_data *d, cal_ar_ring *out);

/* Every fit the data allow. Sections without data are left out (n_* = 0, has_* = false). */
int calfit_all(const cal_data *d, cal_fit *out);

/* Hold-out check: fit rates and bandwidth on every other SM count (even indices), eta on every
 * other kernel length (back-to-back runs), and predict the other points: rates, bandwidths and
 * makespans T(k) = k T(1) / eta(k). *mape_pct and *max_pct get the mean and largest absolute
 * percentage error; *n_pred the number of predictions. Returns 0, or SIM_EINPUT when nothing
 * could be predicted. */
int calfit_holdout(const cal_data *d, double *mape_pct, double *max_pct, int *n_pred);

/* Check of the time-slicing model on the runs with host gaps: for each (length, gap) whose
 * back-to-back runs exist, predict the makespans T(k), k >= 2, with the exact MVA of
 * model/physics/share_ts.h (share_ts_mva: delay station = host time per kernel, GPU station = solo kernel
 * time with eta_mean of the back-to-back runs) and compare with the measured ones. Nothing is
 * fitted here. Outputs as calfit_holdout; SIM_EINPUT when there are no such runs. */
int calfit_ts_gap_check(const cal_data *d, double *mape_pct, double *max_pct, int *n_pred);

#endif
