/* experiments/obs.h - the files of "bring your own model": observations, queries and profiles.
 *
 * observations.yaml (input of `slicesim fit-workload`) and queries.yaml (input of `slicesim
 * predict`) follow the contract of DESIGN.md §8 "Observation and query files": its keys, plus
 * the solo measurements of an observation (obs_entry) and `host_overlap`, `grad_bytes`,
 * `kernels_per_iter`, `mps_sm_growth` and DDP's step terms (obs_ddp_terms) at the top of
 * observations.yaml
 * (docs/bring-your-own-model.md, "What to measure for these accuracies"); an unknown key is an
 * error. profile.yaml is this project's format for a fitted workload profile (written by
 * obs_write_profile, read by predict and by scenarios); its layout is documented at
 * obs_write_profile and in workloads/library/README.md.
 *
 * Every file is walked with the declarative schemas of experiments/cfg.h, so every problem is
 * reported through diag as `FILE:LINE:COL: error: FIELD.PATH: PROBLEM; expected WHAT, got 'V'`
 * (exit status 2 in the CLI). Checks beyond the schema:
 *   observations: the GPU is in the catalog, every partition is `full` or a MIG profile of that
 *     GPU, `peers` >= 1, `mig_busy` >= 0, an ok observation gives either `throughput` or both
 *     `work` and `time_s` (never both forms), an oom observation gives no timing. The solo
 *     measurements (kernels_per_iter, kernel_busy, sm_activity, dram_util: obs_entry) are > 0,
 *     on at most one observation, an ok exclusive one-process run without DDP keys; kernel_busy,
 *     sm_activity and dram_util come together with gpu_util on a run with partition `full`;
 *     kernels_per_iter is not given both there and at the top.
 *   queries: the GPU is in the catalog. A partition unknown for that GPU, `peers` < 1 and the like
 *     are not load errors: predict answers such a query with outcome `invalid` and a reason.
 *   profiles: schema_version 1, every parameter >= 0, lo <= value <= hi.
 *   both (observations at the top, profiles): DDP's step terms (obs_ddp_terms) in range, the
 *     two fractions below 1, no more grad_buckets than grad_tensors.
 *
 * What `unit` means: the unit names "iteration", "iter", "step" and "batch" (and their plurals)
 * count iterations; any other name ("sample", "image", "particle", "token") counts samples, of
 * which an iteration processes `batch`.
 *
 * Units: seconds, units of work, units/s, bytes, SMs. Ownership: every struct, string and array
 * returned by a loader lives in the arena passed to it (the caller owns the arena); src_locs
 * point at file names copied into that arena. The gpu_catalog passed in is borrowed and must
 * outlive the returned structs (they keep gpu_type pointers into it).
 */
#ifndef SIMPROJ_EXPERIMENTS_OBS_H
#define SIMPROJ_EXPERIMENTS_OBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/hw/catalog.h"
#include "model/physics/comm.h"
#include "model/physics/ddp.h"
#include "model/physics/speed.h"
#include "sim/arena.h"
#include "sim/diag.h"

/* The `config:` mapping of an observation or a query (DESIGN.md §8). */
typedef struct obs_config {
    src_loc at;            /* the mapping */
    const char *partition; /* "full" or a MIG profile name */
    src_loc partition_at;
    int sharing;        /* share_mode; when absent: exclusive, or timeslice if shared */
    src_loc sharing_at; /* line 0 = absent */
    int64_t peers;      /* identical co-runners, itself included (default 1) */
    src_loc peers_at;
    size_t n_with;
    const char **with; /* other workloads by name */
    src_loc with_at;
    double mps_percent; /* 0 = absent (100 %) */
    src_loc mps_percent_at;
    int64_t mig_busy; /* busy MIG instances on the GPU, itself included; 0 = absent */
    src_loc mig_busy_at;
    /* DDP keys: accepted and kept; see obs_config_is_ddp */
    int64_t workers, per_gpu, nodes, gpus_per_node;
    size_t n_topology;
    int64_t *topology; /* workers per node */
    const char *interconnect;
    src_loc workers_at, per_gpu_at, topology_at, nodes_at, gpus_per_node_at, interconnect_at;
} obs_config;

typedef enum obs_outcome { OBS_OUTCOME_OK, OBS_OUTCOME_OOM } obs_outcome;

/* `telemetry:` of an observation: GPU telemetry recorded during the run (experiments/
 * telemetry.h) that gives its gpu_util (and, beside kernel_busy, its sm_activity and
 * dram_util). The file is resolved against the observations file's directory and read when the
 * observations are loaded from a file. */
typedef struct obs_telemetry {
    src_loc at;           /* line 0 = absent */
    const char *file;     /* as written; resolved path after loading */
    const char *format;   /* auto | dcgm | prometheus-json | nvidia-smi (default auto) */
    uint32_t gpu;         /* GPU index (default 0) */
    int instance;         /* MIG GPU instance id (GPU_I_ID), -1 = the whole GPU (default) */
    double from_s, to_s;  /* window, unix seconds; 0 = open */
    src_loc file_at;
    /* what it gave (after loading) */
    size_t n_util;
    const char *util_source;
    double gr_engine_active, sm_active, dram_active, fb_used_bytes, power_w; /* NaN: absent */
} obs_telemetry;

/* DDP's step terms of a profile (model/physics/speed.h wl_profile: grad_tensors, buffer_tensors,
 * grad_buckets, backward_frac, optimizer_frac, step_cv), as the top of an observations file and a
 * profile.yaml state them; 0 = not stated. Counts are at most OBS_MAX_TENSORS; the fractions and
 * step_cv are in [0, 1). */
typedef struct obs_ddp_terms {
    uint32_t grad_tensors, buffer_tensors, grad_buckets;
    double backward_frac, optimizer_frac, step_cv;
    src_loc grad_buckets_at, backward_frac_at, optimizer_frac_at, step_cv_at;
} obs_ddp_terms;

#define OBS_MAX_TENSORS 1000000 /* bound of a tensor or bucket count in a file */

/* Copy the stated terms t into p (the unstated stay 0). */
void obs_ddp_terms_apply(const obs_ddp_terms *t, wl_profile *p);

/* One measured run. */
typedef struct obs_entry {
    src_loc at;
    obs_config config;
    uint32_t batch;    /* default 1 */
    double work;       /* units processed; 0 = absent */
    double time_s;     /* wall time for `work`; 0 = absent */
    double throughput; /* units/s of one process; 0 = absent */
    double gpu_util;   /* fraction of time the GPU was busy; < 0 = absent */
    src_loc gpu_util_at;
    int outcome; /* obs_outcome */
    src_loc work_at, time_s_at, throughput_at, outcome_at;
    /* Measurements of a solo run (model/fit/wmeas.h; 0 = absent). At most one observation carries
     * them, an ok exclusive one-process run; the GPM three (kernel_busy, sm_activity,
     * dram_util) come together, beside gpu_util, on a run on the whole GPU. */
    double kernels_per_iter; /* CUDA kernels per iteration (torch.profiler or nsys census) */
    double kernel_busy;      /* share of the iteration some kernel of the process runs (census:
                                union of its kernel intervals / wall time), fraction */
    double sm_activity;      /* NVML GPM SM_UTIL / 100 or DCGM PROF_SM_ACTIVE, fraction */
    double dram_util;        /* NVML GPM DRAM_BW_UTIL / 100 or DCGM PROF_DRAM_ACTIVE, fraction */
    src_loc kernels_per_iter_at, kernel_busy_at, sm_activity_at, dram_util_at;
    obs_telemetry telemetry; /* `telemetry:`, or at.line 0 */
    /* resolved at load */
    const mig_profile *mig; /* NULL = whole GPU; borrowed from the catalog */
    double unit_time_s;     /* measured seconds per unit of work (ok outcomes) */
} obs_entry;

/* A whole observations.yaml. */
typedef struct obs_file {
    const char *path;
    const char *workload;
    const char *gpu_name;
    src_loc gpu_at;
    const char *unit;
    bool unit_is_sample;
    const gpu_type *gpu; /* borrowed from the catalog */
    double grad_bytes;   /* optional `grad_bytes:` (DDP gradient size); 0 = not given */
    double kernels_per_iter; /* optional `kernels_per_iter:` (CUDA kernels per iteration, for
                                MPS queueing, model/physics/share_mps.h); 0 = not given (an observation
                                may give it instead, obs_entry) */
    src_loc kernels_per_iter_at;
    double host_overlap; /* optional `host_overlap:` in [0, 1] (model/physics/speed.h): 1 for a loop that
                            launches asynchronously and synchronises once per iteration;
                            default 0 */
    double mps_sm_growth; /* optional `mps_sm_growth:` in [0, 1]: a of 1 + a ln k, the SM-time
                             an iteration of k identical MPS clients over one's
                             (model/physics/share_mps.h), copied into the fitted profile; 0 = not
                             given */
    obs_ddp_terms ddp;   /* optional DDP step terms, copied into the fitted profile */
    int measured; /* index of the observation with solo measurements, or -1 */
    size_t n;
    obs_entry *obs;
} obs_file;

/* One query. */
typedef struct obs_query {
    src_loc at;
    obs_config config;
    uint32_t batch; /* default 1 */
    double work;    /* default 1 */
    src_loc work_at;
} obs_query;

/* A whole queries.yaml. */
typedef struct obs_queries {
    const char *path;
    const char *gpu_name;
    src_loc gpu_at;
    const gpu_type *gpu; /* borrowed */
    size_t n;
    obs_query *q;
} obs_queries;

/* Where the value of a profile parameter came from. */
typedef enum obs_param_src {
    OBS_SRC_FIT,   /* pinned by the observations */
    OBS_SRC_PRIOR, /* under-determined: taken from a workload-class prior */
    OBS_SRC_FIXED, /* fixed by the model choice (e.g. no per-sample term at a single batch) */
    OBS_SRC_COUNT
} obs_param_src;

/* "fit", "prior", "fixed"; static storage. */
const char *obs_param_src_name(obs_param_src s);

#define OBS_MAX_VARIANTS 48

/* A fitted workload profile with its uncertainty. */
typedef struct obs_profile {
    wl_profile p;              /* central values; name/provenance point into the arena */
    const char *unit;          /* what a unit of work is */
    const char *gpu_name;      /* GPU the observations were taken on */
    const char *prior_class;   /* priors.yaml class used, or NULL */
    const char *fitted_on;     /* the observations: file and rows */
    const char *ts_class_name; /* time-slice class by name, or NULL (index 0) */
    double sd[WL_P_COUNT];     /* standard error of fitted parameters; 0 otherwise */
    double lo[WL_P_COUNT], hi[WL_P_COUNT]; /* range of prior-assumed parameters; = value else */
    int src[WL_P_COUNT];                   /* obs_param_src */
    double ref_batch; /* batch of the observations (the smallest when several) */
    /* The family of profiles along the parallelism P (refits that fit the observations as well,
     * model/fit/wfit.h) and refits with each other assumed parameter at the ends of its prior range:
     * predict evaluates all of them to carry the uncertainty into time_s_lo/time_s_hi. */
    int n_variants;
    wl_profile variants[OBS_MAX_VARIANTS];
    src_loc at;
} obs_profile;

/* A workload-class prior on a dimensionless quantity: log-normal with median `mean` and standard
 * deviation `rel_sd` of the logarithm. */
typedef struct obs_prior_value {
    src_loc at;
    double mean;
    double rel_sd;
    const char *src; /* provenance */
} obs_prior_value;

/* One class of workloads/priors.yaml. The quantities are dimensionless so that they transfer
 * between workloads of a class; fit-workload scales them by the observation on the largest
 * partition (see workloads/priors.yaml for their definitions). */
typedef struct obs_prior_class {
    src_loc at;
    const char *name, *summary;
    int work_class;                    /* wl_class */
    const char *ts_class;              /* time-slice class of model/physics/physics.yaml */
    obs_prior_value host_fraction;     /* H / solo iteration time on the whole GPU */
    obs_prior_value mem_fraction;      /* memory time / GPU time on the whole GPU */
    obs_prior_value parallel_fraction; /* P / SMs of the whole GPU (>= 1: no limit) */
    obs_prior_value footprint_gib;     /* device memory footprint at the observed batch, GiB */
    obs_prior_value batch_share;       /* share of H, C, M, footprint that grows with batch */
} obs_prior_class;

/* A whole priors.yaml. */
typedef struct obs_priors {
    int64_t schema_version;
    size_t n;
    obs_prior_class *classes;
} obs_priors;

/* Load a priors file; same conventions as obs_load_observations. */
int obs_load_priors(const char *path, const void *buf, size_t len, arena *a, diag *d,
                    obs_priors **out);
/* Class by name, or NULL. Borrowed. */
const obs_prior_class *obs_priors_find(const obs_priors *p, const char *name);

/* True when `unit` counts samples (see the header note), false when it counts iterations. */
bool obs_unit_counts_samples(const char *unit);

/* Resolve a partition name on GPU g: "full" gives *mig = NULL; a MIG profile name gives its
 * profile. Returns 0, or SIM_ENOTFOUND with a message "unknown partition for GPU; expected one
 * of ..., got 'X'" in why (size n). */
int obs_resolve_partition(const gpu_type *g, const char *name, const mig_profile **mig, char *why,
                          size_t n);

/* One fitted parameter, as fit-workload prints it. */
typedef struct obs_fit_param {
    wl_param which;
    double value, std_err;
    bool pinned;         /* false: the data left it to its prior */
    char assumed[128];   /* what was assumed when not pinned (wfit's words) */
    double prior_median; /* its prior: median and one-sd range (median * e^(+-rel_sd)) */
    double prior_lo, prior_hi;
    double family_lo, family_hi; /* its range over the family of profiles (model/fit/wfit.h) */
    bool family_open;            /* the family fits it from family_lo upwards (parallelism) */
    const char *prior_src; /* provenance of its prior; borrowed */
} obs_fit_param;

/* One observation's line of the fit report. */
typedef struct obs_fit_row {
    bool used;
    int fit_index;
    const char *note; /* why it was not used; static storage */
    double measured_unit_s, predicted_unit_s, rel_residual;
} obs_fit_row;

#define OBS_MAX_FIT_PARAMS 16

/* What obs_fit found. */
typedef struct obs_fit_report {
    int status; /* 0, or SIM_ENOCONV (the profile holds the last iterate) */
    int iterations;
    double chisq;
    double data_chisq; /* the observations' part of chisq (no prior terms) */
    int dof;
    int n_params;
    obs_fit_param params[OBS_MAX_FIT_PARAMS];
    size_t n_rows;     /* = observations */
    obs_fit_row *rows; /* arena-owned */
    int n_ddp;         /* DDP observations used by obs_fit_ddp */
    bool grad_fitted;  /* obs_fit_ddp fitted grad_bytes (the file gave none) */
    bool grad_pinned;  /* ... and the DDP observations pin it (no size a factor 2 or more away
                          fits them within one more unit of chi^2) */
    double grad_alt_bytes; /* when not pinned: the other gradient size (bytes) that fits as
                              well (with its own solo time from DDP runs alone); 0 = none */
    bool derived_last; /* obs_fit_from_ddp: the last row is the one-process run the DDP
                          observations imply, not a measurement */
    char error[256];   /* why obs_fit returned SIM_EINPUT */
} obs_fit_report;

/* A fit whose observations disagree with the model far beyond their noise: the data chi^2
 * (residuals in units of the noise the fit assumes, WFIT_TIME_REL_SD of a time and WFIT_UTIL_SD
 * of a gpu_util) is refused when it would be improbable, p < OBS_POOR_FIT_P, even were that
 * noise OBS_POOR_FIT_NOISE_FACTOR times larger, with max(dof, 1) degrees of freedom. Why so
 * loose: the stated noise is a timer's (2 % of a time), but the model itself misses real runs by
 * a few per cent (validate's lines: 1-5 %), so a chi^2 test at the stated noise would refuse
 * honest fits; 5 x the noise (10 % of a time) at p = 0.001 still refuses contradictions (one
 * residual above ~33 % of a time at 1 degree of freedom: chi^2 > 25 x 10.8 = 271; the issue's
 * +100 % residual is chi^2 ~1e3-1e6) while the shipped examples (chi^2 <= 0.07) pass. */
#define OBS_POOR_FIT_NOISE_FACTOR 5.0
#define OBS_POOR_FIT_P 1e-3

/* The largest data chi^2 rep's fit may have (see OBS_POOR_FIT_P), for its degrees of freedom. */
double obs_fit_chisq_limit(const obs_fit_report *rep);

/* Fit a profile to the observations of f under class prior pc and model parameters m.
 * On success returns 0 (or SIM_ENOCONV when the fit did not converge; *out is still set) and
 * sets *out (arena-owned). Returns SIM_EINPUT with rep->error set when the observations cannot
 * be fitted (no timed single-process run). All inputs borrowed. */
int obs_fit(const obs_file *f, const obs_prior_class *pc, const phys_params *m, arena *a,
            obs_profile **out, obs_fit_report *rep);

/* True when f has no timed one-process run (obs_fit's reference) but at least one timed ok DDP
 * observation: obs_fit_from_ddp then fits it. */
bool obs_fit_needs_ddp(const obs_file *f);

/* Fit a profile to DDP observations alone (obs_fit_needs_ddp): the one-process run they imply
 * is derived through the DDP model (model/physics/ddp.h) and fitted as obs_fit fits a timed run. The
 * derived run is the first timed DDP observation's partition and batch, exclusive, one worker;
 * its time per unit t is chosen with the gradient size G (the file's grad_bytes, or fitted at
 * each t) to minimise the DDP observations' squared log residuals: the profile that obs_fit
 * makes from a run of t per unit, with its host, compute and memory traffic scaled together, is
 * stepped through model/physics/ddp.h (scan of log t below the observations' perfect-scaling time, then
 * golden section). *f_out is f with the derived run appended (arena a; the report's last row,
 * rep->derived_last); the caller then runs obs_fit_ddp on it. The other parameters are the
 * priors' (one timed run pins one quantity), reported NOT PINNED. Returns as obs_fit (with
 * cm: a DDP observation whose job or ring cannot be built is not used). */
int obs_fit_from_ddp(const obs_file *f, const obs_prior_class *pc, const phys_params *m,
                     const comm_params *cm, arena *a, const obs_file **f_out, obs_profile **out,
                     obs_fit_report *rep);

/* Use the DDP observations of f (obs_config_is_ddp) with the profile p that obs_fit made from
 * the single-process runs, under communication model cm. When f gives no grad_bytes, fit the
 * gradient size G (the one profile quantity DDP adds) to the ok DDP observations, minimising the
 * sum of squared log residuals of the job's time per unit: a scan of log G over 1 kB..1 TB, then
 * golden section around the best point (the cost is not monotone in G: bucket sizes change with
 * it), and store it in p; with grad_bytes given, only predict them. Either way each DDP row of
 * rep gets its measured and predicted time per unit of the whole job (oom rows: whether the
 * model agrees), and rep->n_ddp counts them. Returns 0 (also with no DDP observation). */
int obs_fit_ddp(const obs_file *f, obs_profile *p, const phys_params *m, const comm_params *cm,
                obs_fit_report *rep);

/* The DDP observations of f that name a sharing key (sharing, peers, mps_percent, mig_busy) as
 * `predict` reads the same config: an error in d at the key concerned (config.peers,
 * config.mps_percent, config.mig_busy, else config.sharing) for each that predict refuses as
 * invalid whatever the profile (model/physics/predict.h predict_cfg_invalid: e.g. sharing:
 * exclusive with peers 2). A run with `with:` is not checked (not fitted). obs_load_observations
 * runs it on a file whose other checks passed. Returns 0 or SIM_EINPUT. */
int obs_check_ddp_sharing(const obs_file *f, diag *d);

/* A prediction of one query. */
typedef struct obs_prediction {
    speed_outcome outcome;
    char reason[512];  /* for invalid and oom */
    double time_s;     /* wall time for the query's work */
    double throughput; /* units/s of one process */
    double time_lo_s, time_hi_s;
} obs_prediction;

/* Answer query qi of qs with profile p; `others` (n_others, borrowed) are the profiles that
 * `with:` may name (by workload name). Never fails: a configuration that cannot be evaluated
 * gives outcome invalid with a reason. A DDP query (obs_config_is_ddp) is answered by
 * model/physics/ddp.h under the communication model cm (NULL: invalid): `workers` (default: the sum of
 * `topology`, else 1), `per_gpu` (default 1), `topology` or `nodes` (default: as few nodes as
 * hold the workers), `gpus_per_node` (default: enough for the fullest node of `topology`, else
 * 8), `interconnect` (a network of model/physics/comm.yaml; default its default_network); the profile's
 * grad_bytes is the all-reduced size. time_s is for `work` units of the whole job (all workers
 * together) and throughput is the job's units/s. A DDP query's sharing keys apply to every
 * worker's GPU (model/physics/ddp.h ddp_job.share): `sharing`, `mps_percent`, `mig_busy` (default: the
 * job's own instances on the GPU, per_gpu), `with` (single-process co-runners beside each
 * worker), `peers` (k identical gangs on the same GPUs, one worker of each per GPU, whose k
 * rings share the links max-min fairly). */
void obs_predict(const obs_profile *p, const obs_profile *const *others, size_t n_others,
                 const obs_queries *qs, size_t qi, const phys_params *m, const comm_params *cm,
                 obs_prediction *out);

/* The DDP job configuration cf describes on GPU g (model/physics/ddp.h), with the defaults of
 * obs_predict; cm (may be NULL: the shape only) resolves `interconnect`. Returns 0, or -1 with the
 * reason in why (an unknown partition or interconnect, or a shape ddp_shape refuses). The
 * profile, batch and grad_bytes are left for the caller. */
int obs_ddp_job(const obs_config *cf, const gpu_type *g, const comm_params *cm, ddp_job *job,
                char *why, size_t why_len);

/* True when the configuration names any DDP key (workers, per_gpu, topology, nodes,
 * gpus_per_node, interconnect). */
bool obs_config_is_ddp(const obs_config *c);

/* Load observations from the file at `path` (or from `len` bytes at `buf` under the display
 * name `path` when buf is not NULL). Returns 0 and sets *out (arena-owned); SIM_EINPUT after
 * reporting to d; SIM_ENOENT/SIM_EIO when the file cannot be read (errno holds the cause,
 * nothing reported to d). */
int obs_load_observations(const char *path, const void *buf, size_t len, const gpu_catalog *cat,
                          arena *a, diag *d, obs_file **out);

/* Load queries; same conventions as obs_load_observations. */
int obs_load_queries(const char *path, const void *buf, size_t len, const gpu_catalog *cat,
                     arena *a, diag *d, obs_queries **out);

/* Load a profile.yaml; same conventions. `m` (borrowed, may be NULL) names the time-slice
 * classes that `ts_class` must be one of; with NULL the class index is 0. */
int obs_load_profile(const char *path, const void *buf, size_t len, const phys_params *m, arena *a,
                     diag *d, obs_profile **out);

/* Write `p` as profile.yaml to `path` atomically: the text goes to a temporary file beside it
 * which is renamed over `path` only when complete, so an error never leaves a half-written
 * file. `comment` (may be NULL) is written as leading `# ` lines. Returns 0, or SIM_EIO with
 * errno set (nothing is left behind). */
int obs_write_profile(const char *path, const obs_profile *p, const char *comment);

/* The device-memory footprint one process of observation e showed: its telemetry's largest
 * frame buffer in use (FB used) over its identical peers; 0 when it has none (no telemetry or
 * no FB reading, an oom outcome, co-location with other workloads). */
double obs_footprint_bytes(const obs_entry *e);

#endif
