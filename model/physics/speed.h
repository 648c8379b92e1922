/* model/physics/speed.h - how fast one unit of a workload runs on a GPU partition (DESIGN.md §3, §4).
 *
 * A workload profile (wl_profile) gives, per iteration at batch B, the host time H, the compute
 * work C per precision class (SM-seconds at the reference clock), the largest number of SMs the
 * kernels can use P, the bytes moved to/from device memory M and the memory footprint. Each of
 * these is affine in the batch: X(B) = X_fixed + X_per_sample * B, which covers "C ∝ B, P ∝ B,
 * activations ∝ B" (fixed part 0) and quantities that do not scale (per-sample part 0).
 *
 * Solo time of one iteration on a partition with s SMs and `slices` memory slices:
 *     t = (1 - o) H + max(o H, G),   G = g(C / (min(s, P) * f), M / BW(s, slices))
 * where o (host_overlap) is the share of the host time that overlaps the job's own GPU work: 0
 * for a loop that waits for each GPU phase (t = H + G, the CERN codes), 1 for a loop that
 * launches kernels asynchronously and synchronises once per iteration (eager PyTorch: the
 * GPU runs while Python launches, t = max(H, G); calib/coloc measured this).
 * with f the clock factor of the power model (model/physics/power.h), BW the partition's bandwidth share
 * capped by what s SMs can drive, and g(a, b) = (a^p + b^p)^(1/p) the smooth roofline whose
 * exponent p is a fitted model parameter (p = 1 is "sum", large p is "max"; see speed.c for the
 * table that chose it). A loop whose kernels run on fewer SMs than its solo's (an MPS cap, a MIG
 * instance) also waits longer for the GPU work after its last launch (gpu_tail_frac):
 * t = (1 - o) H + max(o H + the tail's excess, G) (speed_tail_excess_s); H, fitted to the solo,
 * holds the solo's tail. Sharing (time-slicing, MPS, co-location) is in model/physics/share_ts.h and
 * model/physics/share_mps.h and the one prediction entry point (solo -> sharing -> range) in
 * model/physics/predict.h; this module calls neither.
 *
 * Model parameters (phys_params) come from model/physics/physics.yaml (loaded by
 * experiments/physics_load.h) or from a calibration; this module does no I/O.
 * Units: seconds, SM-seconds, bytes, bytes/s, watts. Ownership: every pointer in these structs is
 * borrowed; the caller keeps the pointees alive while it uses the struct.
 */
#ifndef SIMPROJ_MODEL_SPEED_H
#define SIMPROJ_MODEL_SPEED_H

#include <stdbool.h>
#include <stddef.h>

#include "model/hw/catalog.h"

/* Precision classes of compute work; they differ in power drawn per SM (tensor > CUDA cores). */
typedef enum wl_class {
    WL_CLASS_FP32,   /* CUDA cores, fp32/int */
    WL_CLASS_FP64,   /* CUDA cores, fp64 */
    WL_CLASS_FP16,   /* CUDA cores, fp16 */
    WL_CLASS_TENSOR, /* tensor cores (tf32, fp16, bf16, int8) */
    WL_CLASS_COUNT
} wl_class;

/* Data-file name of a class ("fp32", "fp64", "fp16", "tensor"); static storage. */
const char *wl_class_name(wl_class c);
/* Class by name; WL_CLASS_COUNT when unknown. */
wl_class wl_class_from_name(const char *name);

/* A workload profile per iteration (DESIGN.md §4 table). Plain data; strings borrowed. */
typedef struct wl_profile {
    const char *name;       /* workload class name, e.g. "simpletrack" */
    const char *provenance; /* where the numbers came from (free text), or NULL */
    bool unit_is_sample;    /* true: a unit of work is one sample (B units per iteration);
                               false: a unit is one iteration */
    double host_s_fixed, host_s_per_sample;                        /* H */
    double compute_sm_s_fixed[WL_CLASS_COUNT];                     /* C, per class */
    double compute_sm_s_per_sample[WL_CLASS_COUNT];
    double max_sms_fixed, max_sms_per_sample;                      /* P; both 0 = unlimited */
    double mem_traffic_bytes_fixed, mem_traffic_bytes_per_sample; /* M */
    double mem_footprint_bytes_fixed, mem_footprint_bytes_per_sample; /* weights.., activations */
    int ts_class;           /* time-slice efficiency class (index into phys_params.ts) */
    double host_overlap;    /* o in [0, 1]: share of H that overlaps the job's own GPU work
                               (kernels launched asynchronously, one synchronisation per
                               iteration); 0 = host and GPU phases alternate (see top) */
    double grad_bytes;      /* DDP: gradient bytes all-reduced per iteration (model/physics/ddp.h);
                               0 = not stated */
    double kernels_per_iter; /* CUDA kernels launched per iteration (torch.profiler, nsys):
                                under MPS each waits for the kernels of other clients that hold
                                the SMs (model/physics/share_mps.h); 0 = not stated, no such wait.
                                Stated also marks the iteration as a round that ends in a
                                synchronisation (speed_iter_is_round) */
    double kernel_busy_frac; /* phi in (0, 1]: the share of the solo's GPU time (NVML busy)
                                in which its kernels run (a kernel census' union of kernel
                                intervals over NVML utilisation); the rest are launch gaps that
                                hold no SMs and keep their length under MPS
                                (model/physics/share_mps.h); 0 = not stated, taken as 1 */
    double gpu_tail_frac;    /* tau in [0, 1]: the GPU work still to run when the host has
                                issued an iteration's last launch (the wait in its closing
                                synchronisation), over the kernel time, measured alone on the
                                whole GPU (calib/coloc/coloc.py tail_census). No host time hides
                                it, and it stretches with the kernels (speed_tail_excess_s);
                                0 = not stated, no such term */
    double mps_sm_growth;    /* a: beside k - 1 identical MPS peers (k clients on the partition)
                                an iteration's kernels take 1 + a ln k times their SM-time alone
                                (their working sets share the L2), a fitted on a 2-client MPS
                                record's GPM SM activity (calib/coloc/table.py sm_growth;
                                model/physics/share_mps.h); 0 = not stated, no growth */
    /* DDP's step terms (model/physics/ddp.h), each 0 = not stated: */
    double grad_tensors;    /* parameter tensors with a gradient (DDP copies each into its
                               bucket and back: two launches each on the host) */
    double buffer_tensors;  /* buffer tensors DDP broadcasts before each forward (BatchNorm's
                               running statistics); a copy-back launch each */
    double grad_buckets;    /* DDP's buckets (its logging data's num_buckets_reduced); 0 =
                               G / bucket_bytes, at most one per gradient tensor */
    double backward_frac;   /* backward / (forward + backward) of the GPU time (CUDA events or
                               torch.profiler); 0 = model/physics/comm.yaml's ddp.backward_frac */
    double optimizer_frac;  /* optimiser step / G_t: it runs after the last all-reduce */
    double step_cv;         /* relative sd of one process's iteration time from step to step,
                               measured on its solo run: the gang waits at every step for that
                               step's slowest worker (model/physics/ddp.h); 0 = not stated */
    double ddp_host_s;      /* DDP's own host time per step (dH) as fitted to a measured DDP
                               run (validate's tables that fit a 2-worker row); 0 = from
                               model/physics/comm.yaml's per-launch and per-collective costs */
} wl_profile;

/* Whether an iteration of p is a round that ends in a synchronisation, so that time-slicing's
 * switch per GPU phase and the scheduler's return wait apply (model/physics/share_ts.h). A profile
 * whose kernels were counted per iteration (kernels_per_iter stated) is such a loop; without it
 * (e.g. per-particle work units) the terms stay off. */
static inline bool speed_iter_is_round(const wl_profile *p)
{
    return p->kernels_per_iter > 0;
}

/* Named scalar parameters of a profile, for fitting and for files. */
typedef enum wl_param {
    WL_P_HOST_S_FIXED,
    WL_P_HOST_S_PER_SAMPLE,
    WL_P_COMPUTE_FIXED,       /* of the profile's dominant class (wl_dominant_class) */
    WL_P_COMPUTE_PER_SAMPLE,
    WL_P_MAX_SMS_FIXED,
    WL_P_MAX_SMS_PER_SAMPLE,
    WL_P_MEM_TRAFFIC_FIXED,
    WL_P_MEM_TRAFFIC_PER_SAMPLE,
    WL_P_MEM_FOOTPRINT_FIXED,
    WL_P_MEM_FOOTPRINT_PER_SAMPLE,
    WL_P_COUNT
} wl_param;

/* Name of a profile parameter ("host_s_fixed", "compute_sm_s_per_sample", ...); static. */
const char *wl_param_name(wl_param p);
/* Class holding the most compute work (fixed + per-sample at batch 1); FP32 when none. */
wl_class wl_dominant_class(const wl_profile *p);
/* Value of parameter `which` (compute: of the dominant class). */
double wl_param_get(const wl_profile *p, wl_param which);
/* Set parameter `which` (compute: of the dominant class). */
void wl_param_set(wl_profile *p, wl_param which, double v);

/* Iteration time from host time H, overlap o and GPU time G: (1 - o) H + max(o H, G). */
double wl_iter_time(double host_s, double overlap, double gpu_s);
/* The same with an exposed GPU tail beyond the one H already holds (tail_s >= 0, seconds;
 * speed_tail_excess_s): (1 - o) H + max(o H + tail_s, G). The tail follows the last launch, so
 * it adds to the host's path; where the GPU binds, G already holds it. */
double wl_iter_time_tail(double host_s, double overlap, double gpu_s, double tail_s);
/* phi of a profile: its kernel_busy_frac where stated (in (0, 1)), else 1 (no launch gaps). */
double wl_kernel_share(const wl_profile *p);

/* Per-iteration quantities of a profile at batch B (B >= 1). */
double wl_host_s(const wl_profile *p, double batch);
double wl_compute_sm_s(const wl_profile *p, wl_class c, double batch);
double wl_compute_total_sm_s(const wl_profile *p, double batch);
/* P at batch B; +infinity when the profile sets no limit. */
double wl_max_sms(const wl_profile *p, double batch);
double wl_mem_traffic_bytes(const wl_profile *p, double batch);
double wl_mem_footprint_bytes(const wl_profile *p, double batch);
/* Units of work per iteration: B when unit_is_sample, else 1. */
double wl_units_per_iter(const wl_profile *p, double batch);

/* How a partition is shared. */
typedef enum share_mode { SHARE_EXCLUSIVE, SHARE_TIMESLICE, SHARE_MPS, SHARE_COUNT } share_mode;
/* "exclusive", "timeslice", "mps"; static storage. */
const char *share_mode_name(share_mode m);

#define PART_MAX_WITH 8 /* other co-located workloads on one partition */

/* Where and with whom a job runs. */
typedef struct partition_cfg {
    const gpu_type *gpu;    /* borrowed; required */
    const mig_profile *mig; /* borrowed; NULL = whole GPU with MIG disabled */
    share_mode sharing;     /* exclusive when peers == 1 and n_with == 0 */
    int peers;              /* identical co-runners on the partition, itself included (>= 1) */
    int n_with;             /* other workloads sharing the partition */
    const wl_profile *with[PART_MAX_WITH]; /* borrowed. NULL (time-slicing only): a co-runner
                               without a profile, taken to be GPU-bound (no host phase; always
                               wanting the GPU), of time-slice class with_ts_class[i] */
    double with_batch[PART_MAX_WITH];
    int with_n[PART_MAX_WITH]; /* clients (contexts) of with[i]; 0 = 1 */
    int with_ts_class[PART_MAX_WITH]; /* time-slice class of with[i] when it is NULL */
    int ts_class;           /* time-slice class of the job itself when predicted without a
                               profile (predict.h: p NULL, a GPU-bound job) */
    double share;           /* time-slicing on a fractional GPU (openb's gpu_milli / 1000):
                               each of the job's contexts is guaranteed this share of the GPU's
                               time (model/physics/share_ts.h: weighted, work-conserving) and holds this
                               share of its memory (model/physics/share.h); 0 = plain time-slicing
                               (equal shares, one memory capacity) */
    double with_share[PART_MAX_WITH]; /* the same for each context of with[i] */
    double mps_percent;     /* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE of every client; 0 = 100 */
    int mig_busy;           /* busy MIG instances on the GPU, itself included; 0 or 1 = alone.
                               The others are taken to be of the same size and work class. */
} partition_cfg;

/* Fill *c with a whole, exclusive GPU of type g. */
void partition_cfg_init(partition_cfg *c, const gpu_type *g);

#define PHYS_MAX_TS_CLASSES 4
#define PHYS_MAX_K 8 /* η is given for k = 2..PHYS_MAX_K contexts; larger k uses η(PHYS_MAX_K) */
#define PHYS_NAME_MAX 24

/* Time-slice efficiency of one kernel-length class: with k >= 2 contexts wanting the GPU, the
 * GPU delivers η(k) of its time as useful work (the rest is context switching). */
typedef struct phys_ts_class {
    char name[PHYS_NAME_MAX];
    double kernel_ms;           /* kernel length the class stands for (ms); 0 = not stated, and
                                   then a calibration leaves the class alone (model/fit/calapply.h) */
    double eta[PHYS_MAX_K + 1]; /* eta[k], k = 2..PHYS_MAX_K; eta[0], eta[1] unused (1) */
} phys_ts_class;

/* Loss factors of the hardware model. Defaults come from model/physics/physics.yaml (every value with
 * its source there); a calibration may replace them. Plain data. */
typedef struct phys_params {
    double roofline_p;        /* exponent of g(a, b) = (a^p + b^p)^(1/p); >= 1 */
    double bw_stream_eff;     /* achievable / datasheet memory bandwidth (STREAM-like) */
    double bw_drive_sm_frac;  /* s0 / sms_total of the drive curve BW(s) ∝ 1 - exp(-s / s0) */
    double mig_sm_eff;        /* per-SM throughput with MIG on relative to off (beyond the SM
                                 count the catalog already removes); 1 = none */
    double power_alpha;       /* SM power ∝ f^alpha at clock factor f */
    double power_idle_frac;   /* board power not available to SMs, fraction of TDP */
    double power_board_idle_frac; /* board power with no SM busy, fraction of TDP (reported power
                                   * and energy only: power_board_w) */
    double power_sm_w[WL_CLASS_COUNT]; /* watts per busy SM at the reference clock, per class */
    double clock_min_frac;    /* lowest clock factor the power cap can force */
    double power_window_s;    /* window over which the power cap averages the board power (s) */
    double mps_bw_contention; /* extra slowdown of memory time per co-running MPS client */
    double mps_kernel_wait;   /* MPS: mean wait of a kernel for another client's kernel that
                                 holds the SMs, as a fraction of that kernel's duration */
    double mps_sm_granule;    /* MPS: SMs a thread-percentage cap allocates in (the TPC) */
    double mps_min_sms;       /* MPS: fewest SMs a capped client gets */
    double param_rel_sd;      /* relative uncertainty of the loss factors, for lo/hi ranges */
    double mig_apply_s;       /* s to replace an idle GPU's MIG layout (destroy its GPU instances,
                               * create the next's): the default reconfiguration delay */
    double meas_prior_rel_sd; /* log-sd of the priors on P and M that a solo run's GPM and
                                 kernel-census split gives (model/fit/wmeas.h) */
    double meas_compute_floor; /* least share of the GPU time that split leaves as compute */
    double meas_host_floor;   /* least share of the iteration time wmeas_host_s gives as host */
    double ts_quantum_s;      /* time-slicing: a context's slice while another waits (s) */
    double ts_switch_s;       /* time-slicing: GPU time lost per context switch (s) */
    int n_ts;
    phys_ts_class ts[PHYS_MAX_TS_CLASSES];
} phys_params;

/* η(k) of time-slice class `cls` (k >= 1; 1 for k <= 1). */
double phys_eta(const phys_params *m, int cls, int k);
/* η(k) of class `cls` on GPU g: the GPU's measured η (gpu_type.meas, model/fit/calapply.h) when it
 * has one for that class, else phys_eta. g may be NULL. */
double speed_eta(const gpu_type *g, const phys_params *m, int cls, int k);
/* Index of the time-slice class named `name`, or -1. */
int phys_ts_class_index(const phys_params *m, const char *name);

typedef enum speed_outcome { SPEED_OK, SPEED_OOM, SPEED_INVALID } speed_outcome;
/* "ok", "oom", "invalid"; static storage. */
const char *speed_outcome_name(speed_outcome o);

/* Result of a prediction (model/physics/predict.h) and the breakdown of a solo iteration. */
typedef struct speed_result {
    speed_outcome outcome;
    char reason[128];        /* why oom/invalid; "" when ok */
    double unit_time_s;      /* wall time per unit of work for this job (0 unless ok) */
    double throughput;       /* units/s of this job */
    double unit_time_lo_s, unit_time_hi_s; /* range from the parameters' uncertainty */
    /* breakdown of one solo iteration (before sharing) */
    double iter_host_s, iter_compute_s, iter_mem_s, iter_gpu_s;
    double sms_used;         /* SMs the job uses */
    double clock_factor;     /* f / f_ref from the power model */
    double bw_bytes_per_s;   /* effective bandwidth */
    double gpu_util;         /* what NVML's utilization.gpu (DCGM_FI_DEV_GPU_UTIL) measures:
                                the fraction of wall time at least one kernel runs on the
                                partition, however many SMs it fills. Solo: G / t; shared
                                (model/physics/predict.h): at least one co-runner in its GPU phase */
} speed_result;

/* SMs of the partition (MIG profile SMs, or the whole GPU's). */
int speed_partition_sms(const partition_cfg *c);
/* SMs one MPS client may use on a partition of part_sms SMs under
 * CUDA_MPS_ACTIVE_THREAD_PERCENTAGE pct (pct <= 0 or >= 100: all of them): pct % of the SMs rounded
 * DOWN to whole units of m->mps_sm_granule SMs (a TPC), at least m->mps_min_sms, at most
 * part_sms. Measured on the H100 (132 SMs; calib/coloc/2026-11-24-h100-mpscap.json): 1-7 % -> 8,
 * 10 % -> 12, 25 % -> 32, 33 % -> 42, 50 % -> 66, 75 % -> 98 SMs. The one place that maps a
 * thread percentage to SMs (solo speed, MPS sharing and the fitter all call it). */
int speed_mps_sms(int part_sms, double pct, const phys_params *m);
/* SMs one job on partition c may use: the partition's, under MPS capped by c->mps_percent
 * (speed_mps_sms); the job's own parallelism P is not applied. */
int speed_client_sms(const partition_cfg *c, const phys_params *m);
/* Memory capacity of the partition in bytes. */
double speed_partition_mem_bytes(const partition_cfg *c);
/* Effective memory bandwidth for a job using `sms` SMs of a partition with `slices` of
 * `gpu_slices` memory slices on GPU g (bytes/s): the smaller of what `sms` SMs drive and the
 * partition's share of the whole GPU's. With a measured curve (g->meas.has_bw) that curve gives
 * both; otherwise datasheet x bw_stream_eff and the physics' drive curve. */
double speed_bandwidth(const gpu_type *g, double sms, int slices, int gpu_slices,
                       const phys_params *m);
/* speed_bandwidth for a job using `sms` SMs of partition c (its memory slices of its GPU's). */
double speed_partition_bandwidth(const partition_cfg *c, double sms, const phys_params *m);
/* Smooth roofline g(a, b) = (a^p + b^p)^(1/p). */
double speed_roofline(double a, double b, double p);

/* Solo iteration time (no sharing) with `sms` usable SMs, clock factor f and a fraction
 * bw_share of the partition's bandwidth, filling the breakdown fields of *out (may be NULL;
 * iter_gpu_s is G, gpu_util G / t). */
double speed_solo_iter(const wl_profile *p, double batch, const partition_cfg *c, double sms,
                       double clock_factor, double bw_share, const phys_params *m,
                       speed_result *out);

/* The GPU tail a slower GPU part exposes (s): tau phi (gpu_s - G_ref), at least 0, for a profile
 * with gpu_tail_frac tau (else 0). G_ref is p's GPU time alone on the whole GPU of c (all the SMs
 * its kernels can use, min(SMs, P), at clock factor clock_factor, all the bandwidth): where tau
 * was measured, so the host time fitted to that solo holds tau phi G_ref of tail already. gpu_s
 * is p's GPU time now (fewer SMs under an MPS cap or beside MPS peers, less bandwidth), without
 * launch gaps or queueing waits; the tail is a share tau of the kernel time phi gpu_s and
 * stretches as the kernels do (calib/coloc/NOTES-h200.md 'captail'). */
double speed_tail_excess_s(const wl_profile *p, double batch, const partition_cfg *c,
                           double gpu_s, double clock_factor, const phys_params *m);

#endif
