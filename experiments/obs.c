/* experiments/obs.c - loaders of observations.yaml, queries.yaml, profile.yaml and priors.yaml,
 * and the profile.yaml writer (see obs.h). */
#include "experiments/obs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/cfg.h"
#include "experiments/fileio.h"
#include "experiments/telemetry.h"
#include "experiments/yamlx.h"
#include "model/physics/ddp.h"
#include "sim/err.h"
#include "sim/xalloc.h"

/* ---- shared schema of `config:` (DESIGN.md §8) ------------------------------------------------
 */

static const char *const sharing_names[] = {"exclusive", "timeslice", "mps", NULL};
static const char *const outcome_names[] = {"ok", "oom", NULL};
static const char *const work_class_names[] = {"fp32", "fp64", "fp16", "tensor", NULL};
static const char *const src_names[] = {"fit", "prior", "fixed", NULL};

/* peers and mig_busy carry no bounds here: a query with `peers: 0` is answered `invalid` by
 * predict, and observations check them after the walk. */
static const cfg_field config_fields[] = {
    CFG_SELF(obs_config, at),
    {"partition", CFG_STRING, .required = true, .off = offsetof(obs_config, partition),
     .expect = "full or a MIG profile name like 1g.5gb", CFG_LOC(obs_config, partition_at)},
    {"sharing", CFG_ENUM, .names = sharing_names, .off = offsetof(obs_config, sharing),
     CFG_LOC(obs_config, sharing_at)},
    {"peers", CFG_I64, .dflt = "1", .off = offsetof(obs_config, peers),
     CFG_LOC(obs_config, peers_at)},
    {"with", CFG_SEQ, .elem = CFG_STRING, CFG_MIN(1), CFG_MAX(PART_MAX_WITH),
     .off = offsetof(obs_config, with), .count_off = offsetof(obs_config, n_with),
     CFG_LOC(obs_config, with_at)},
    {"mps_percent", CFG_DOUBLE, CFG_MIN(1), CFG_MAX(100), .off = offsetof(obs_config, mps_percent),
     CFG_LOC(obs_config, mps_percent_at)},
    {"mig_busy", CFG_I64, .off = offsetof(obs_config, mig_busy), CFG_LOC(obs_config, mig_busy_at)},
    {"workers", CFG_I64, CFG_MIN(1), .off = offsetof(obs_config, workers),
     CFG_LOC(obs_config, workers_at)},
    {"per_gpu", CFG_I64, CFG_MIN(1), .off = offsetof(obs_config, per_gpu),
     CFG_LOC(obs_config, per_gpu_at)},
    {"topology", CFG_SEQ, .elem = CFG_I64, CFG_MIN(1), .off = offsetof(obs_config, topology),
     .count_off = offsetof(obs_config, n_topology), CFG_LOC(obs_config, topology_at)},
    {"nodes", CFG_I64, CFG_MIN(1), .off = offsetof(obs_config, nodes),
     CFG_LOC(obs_config, nodes_at)},
    {"gpus_per_node", CFG_I64, CFG_MIN(1), .off = offsetof(obs_config, gpus_per_node),
     CFG_LOC(obs_config, gpus_per_node_at)},
    {"interconnect", CFG_STRING, .off = offsetof(obs_config, interconnect),
     CFG_LOC(obs_config, interconnect_at)},
    {0},
};

/* ---- observations.yaml --------------------------------------------------------------------- */

/* the solo measurements' fractions (GPM and DCGM print percent) */
#define FRACTION "a fraction above 0 and at most 1 (a percentage / 100)"

/* DDP's step terms (obs_ddp_terms) at member `m` of `type`: the same keys at the top of an
 * observations file and of a profile. The fractions' upper end (below 1) is checked after the
 * walk (check_ddp_terms). */
#define DDP_FRACTION "a fraction from 0 (not stated) to below 1"
#define DDP_STEP_CV "a relative sd from 0 (not stated) to below 1"
#define DDP_TERM_COUNT(type, member, key)                                                          \
    key, CFG_U32, CFG_MIN(0), CFG_MAX(OBS_MAX_TENSORS), .off = offsetof(type, member)
#define DDP_TERM_FIELDS(type, m)                                                                   \
    {DDP_TERM_COUNT(type, m.grad_tensors, "grad_tensors")},                                        \
    {DDP_TERM_COUNT(type, m.buffer_tensors, "buffer_tensors")},                                    \
    {DDP_TERM_COUNT(type, m.grad_buckets, "grad_buckets"), CFG_LOC(type, m.grad_buckets_at)},      \
    {"backward_frac", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1), .expect = DDP_FRACTION,                  \
     .off = offsetof(type, m.backward_frac), CFG_LOC(type, m.backward_frac_at)},                   \
    {"optimizer_frac", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1), .expect = DDP_FRACTION,                 \
     .off = offsetof(type, m.optimizer_frac), CFG_LOC(type, m.optimizer_frac_at)},                 \
    {"step_cv", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1), .expect = DDP_STEP_CV,                         \
     .off = offsetof(type, m.step_cv), CFG_LOC(type, m.step_cv_at)}

static const cfg_field telemetry_fields[] = {
    CFG_SELF(obs_telemetry, at),
    {"file", CFG_STRING, .required = true, .off = offsetof(obs_telemetry, file),
     .expect = "a dcgm-exporter scrape, a Prometheus query answer or an nvidia-smi CSV log",
     CFG_LOC(obs_telemetry, file_at)},
    {"format", CFG_STRING, .names = (const char *const[]){"auto", "dcgm", "prometheus-json",
                                                           "nvidia-smi", NULL},
     .dflt = "auto", .off = offsetof(obs_telemetry, format)},
    {"gpu", CFG_U32, CFG_MAX(1024), .dflt = "0", .off = offsetof(obs_telemetry, gpu)},
    {"instance", CFG_INT, CFG_MIN(-1), CFG_MAX(64), .dflt = "-1",
     .off = offsetof(obs_telemetry, instance)},
    {"from", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1e11), .off = offsetof(obs_telemetry, from_s)},
    {"to", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1e11), .off = offsetof(obs_telemetry, to_s)},
    {0},
};

static const cfg_field obs_entry_fields[] = {
    CFG_SELF(obs_entry, at),
    {"config", CFG_MAP, .required = true, .sub = config_fields, .off = offsetof(obs_entry, config)},
    {"batch", CFG_U32, CFG_MIN(1), .dflt = "1", .off = offsetof(obs_entry, batch)},
    {"work", CFG_DOUBLE, .off = offsetof(obs_entry, work), CFG_LOC(obs_entry, work_at)},
    {"time_s", CFG_DOUBLE, .off = offsetof(obs_entry, time_s), CFG_LOC(obs_entry, time_s_at)},
    {"throughput", CFG_DOUBLE, .off = offsetof(obs_entry, throughput),
     CFG_LOC(obs_entry, throughput_at)},
    {"gpu_util", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1), .off = offsetof(obs_entry, gpu_util),
     CFG_LOC(obs_entry, gpu_util_at)},
    {"outcome", CFG_ENUM, .names = outcome_names, .off = offsetof(obs_entry, outcome),
     CFG_LOC(obs_entry, outcome_at)},
    {"kernels_per_iter", CFG_DOUBLE, CFG_ABOVE(0), CFG_MAX(1e9),
     .off = offsetof(obs_entry, kernels_per_iter), CFG_LOC(obs_entry, kernels_per_iter_at)},
    {"kernel_busy", CFG_DOUBLE, CFG_ABOVE(0), CFG_MAX(1), .expect = FRACTION,
     .off = offsetof(obs_entry, kernel_busy), CFG_LOC(obs_entry, kernel_busy_at)},
    {"sm_activity", CFG_DOUBLE, CFG_ABOVE(0), CFG_MAX(1), .expect = FRACTION,
     .off = offsetof(obs_entry, sm_activity), CFG_LOC(obs_entry, sm_activity_at)},
    {"dram_util", CFG_DOUBLE, CFG_ABOVE(0), CFG_MAX(1), .expect = FRACTION,
     .off = offsetof(obs_entry, dram_util), CFG_LOC(obs_entry, dram_util_at)},
    {"telemetry", CFG_MAP, .sub = telemetry_fields, .off = offsetof(obs_entry, telemetry)},
    {0},
};

static const cfg_field obs_file_fields[] = {
    {"workload", CFG_STRING, .required = true, .off = offsetof(obs_file, workload)},
    {"gpu", CFG_STRING, .required = true, .off = offsetof(obs_file, gpu_name),
     .expect = "a GPU name of the catalog like A100-SXM4-40GB", CFG_LOC(obs_file, gpu_at)},
    {"unit", CFG_STRING, .dflt = "sample", .off = offsetof(obs_file, unit)},
    {"grad_bytes", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1e15), .off = offsetof(obs_file, grad_bytes)},
    {"kernels_per_iter", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1e9),
     .off = offsetof(obs_file, kernels_per_iter), CFG_LOC(obs_file, kernels_per_iter_at)},
    {"host_overlap", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1), .off = offsetof(obs_file, host_overlap)},
    {"mps_sm_growth", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1),
     .off = offsetof(obs_file, mps_sm_growth)},
    DDP_TERM_FIELDS(obs_file, ddp),
    {"observations", CFG_SEQ, .required = true, CFG_MIN(1),
     CFG_SEQ_OF(obs_file, obs, n, obs_entry, obs_entry_fields)},
    {0},
};

/* ---- queries.yaml -------------------------------------------------------------------------- */

static const cfg_field query_fields[] = {
    CFG_SELF(obs_query, at),
    {"config", CFG_MAP, .required = true, .sub = config_fields, .off = offsetof(obs_query, config)},
    {"batch", CFG_U32, CFG_MIN(1), .dflt = "1", .off = offsetof(obs_query, batch)},
    {"work", CFG_DOUBLE, .dflt = "1", .off = offsetof(obs_query, work),
     CFG_LOC(obs_query, work_at)},
    {0},
};

static const cfg_field queries_fields[] = {
    {"gpu", CFG_STRING, .required = true, .off = offsetof(obs_queries, gpu_name),
     .expect = "a GPU name of the catalog like A100-SXM4-40GB", CFG_LOC(obs_queries, gpu_at)},
    {"queries", CFG_SEQ, .required = true, CFG_MIN(1),
     CFG_SEQ_OF(obs_queries, q, n, obs_query, query_fields)},
    {0},
};

/* ---- profile.yaml -------------------------------------------------------------------------- */

/* One entry of `params:`. */
typedef struct param_doc {
    src_loc at;
    double value, sd, lo, hi;
    int from;
    src_loc lo_at, hi_at;
} param_doc;

static const cfg_field param_fields[] = {
    CFG_SELF(param_doc, at),
    {"value", CFG_DOUBLE, .required = true, CFG_MIN(0), .off = offsetof(param_doc, value)},
    {"sd", CFG_DOUBLE, CFG_MIN(0), .off = offsetof(param_doc, sd)},
    {"lo", CFG_DOUBLE, CFG_MIN(0), .off = offsetof(param_doc, lo), CFG_LOC(param_doc, lo_at)},
    {"hi", CFG_DOUBLE, CFG_MIN(0), .off = offsetof(param_doc, hi), CFG_LOC(param_doc, hi_at)},
    {"from", CFG_ENUM, .names = src_names, .dflt = "fit", .off = offsetof(param_doc, from)},
    {0},
};

/* The parameter names in wl_param order (model/physics/speed.h); checked against wl_param_name. */
#define PROFILE_PARAMS(X)                                                                          \
    X(host_s_fixed)                                                                                \
    X(host_s_per_sample) X(compute_sm_s_fixed) X(compute_sm_s_per_sample) X(max_sms_fixed)         \
        X(max_sms_per_sample) X(mem_traffic_bytes_fixed) X(mem_traffic_bytes_per_sample)           \
            X(mem_footprint_bytes_fixed) X(mem_footprint_bytes_per_sample)

typedef struct params_doc {
#define X(n) param_doc n;
    PROFILE_PARAMS(X)
#undef X
} params_doc;

static const cfg_field params_fields[] = {
#define X(n) {#n, CFG_MAP, .sub = param_fields, .off = offsetof(params_doc, n)},
    PROFILE_PARAMS(X)
#undef X
        {0},
};

/* One entry of `variants:`: any parameter may be given; absent ones keep the central value. */
typedef struct variant_doc {
#define X(n) double n;
    PROFILE_PARAMS(X)
#undef X
#define X(n) src_loc n##_at;
    PROFILE_PARAMS(X)
#undef X
} variant_doc;

static const cfg_field variant_fields[] = {
#define X(n)                                                                                       \
    {#n, CFG_DOUBLE, CFG_MIN(0), .off = offsetof(variant_doc, n), CFG_LOC(variant_doc, n##_at)},
    PROFILE_PARAMS(X)
#undef X
        {0},
};

typedef struct profile_doc {
    int64_t schema_version;
    const char *workload, *unit, *gpu, *prior_class, *fitted_on, *provenance, *ts_class;
    src_loc ts_class_at;
    int work_class;
    uint32_t ref_batch;
    double grad_bytes, kernels_per_iter, kernel_busy_frac, gpu_tail_frac, mps_sm_growth, host_overlap;
    obs_ddp_terms ddp;
    params_doc params;
    size_t n_variants;
    variant_doc *variants;
    src_loc variants_at;
} profile_doc;

static const cfg_field profile_fields[] = {
    {"schema_version", CFG_I64, .required = true, CFG_MIN(1), CFG_MAX(1),
     .off = offsetof(profile_doc, schema_version)},
    {"workload", CFG_STRING, .required = true, .off = offsetof(profile_doc, workload)},
    {"unit", CFG_STRING, .dflt = "sample", .off = offsetof(profile_doc, unit)},
    {"gpu", CFG_STRING, .off = offsetof(profile_doc, gpu)},
    {"class", CFG_STRING, .off = offsetof(profile_doc, prior_class)},
    {"fitted_on", CFG_STRING, .off = offsetof(profile_doc, fitted_on)},
    {"provenance", CFG_STRING, .off = offsetof(profile_doc, provenance)},
    {"work_class", CFG_ENUM, .names = work_class_names, .dflt = "fp32",
     .off = offsetof(profile_doc, work_class)},
    {"ts_class", CFG_STRING, .off = offsetof(profile_doc, ts_class),
     CFG_LOC(profile_doc, ts_class_at)},
    {"ref_batch", CFG_U32, CFG_MIN(1), .dflt = "1", .off = offsetof(profile_doc, ref_batch)},
    {"grad_bytes", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1e15), .off = offsetof(profile_doc, grad_bytes)},
    {"kernels_per_iter", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1e9),
     .off = offsetof(profile_doc, kernels_per_iter)},
    {"kernel_busy_frac", CFG_DOUBLE, CFG_ABOVE(0), CFG_MAX(1), .expect = FRACTION,
     .off = offsetof(profile_doc, kernel_busy_frac)},
    {"gpu_tail_frac", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1),
     .off = offsetof(profile_doc, gpu_tail_frac)},
    {"mps_sm_growth", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1),
     .off = offsetof(profile_doc, mps_sm_growth)},
    {"host_overlap", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1),
     .off = offsetof(profile_doc, host_overlap)},
    DDP_TERM_FIELDS(profile_doc, ddp),
    {"params", CFG_MAP, .required = true, .sub = params_fields,
     .off = offsetof(profile_doc, params)},
    {"variants", CFG_SEQ, CFG_MAX(OBS_MAX_VARIANTS),
     CFG_SEQ_OF(profile_doc, variants, n_variants, variant_doc, variant_fields),
     CFG_LOC(profile_doc, variants_at)},
    {0},
};

/* ---- priors.yaml --------------------------------------------------------------------------- */

static const cfg_field prior_value_fields[] = {
    CFG_SELF(obs_prior_value, at),
    {"mean", CFG_DOUBLE, .required = true, CFG_MIN(0), .off = offsetof(obs_prior_value, mean)},
    {"rel_sd", CFG_DOUBLE, .required = true, CFG_MIN(0.01), CFG_MAX(10),
     .off = offsetof(obs_prior_value, rel_sd)},
    {"src", CFG_STRING, .required = true, .off = offsetof(obs_prior_value, src)},
    {0},
};

static const cfg_field prior_class_fields[] = {
    CFG_SELF(obs_prior_class, at),
    {"name", CFG_STRING, .required = true, .off = offsetof(obs_prior_class, name)},
    {"summary", CFG_STRING, .required = true, .off = offsetof(obs_prior_class, summary)},
    {"work_class", CFG_ENUM, .required = true, .names = work_class_names,
     .off = offsetof(obs_prior_class, work_class)},
    {"ts_class", CFG_STRING, .required = true, .off = offsetof(obs_prior_class, ts_class)},
    {"host_fraction", CFG_MAP, .required = true, .sub = prior_value_fields,
     .off = offsetof(obs_prior_class, host_fraction)},
    {"mem_fraction", CFG_MAP, .required = true, .sub = prior_value_fields,
     .off = offsetof(obs_prior_class, mem_fraction)},
    {"parallel_fraction", CFG_MAP, .required = true, .sub = prior_value_fields,
     .off = offsetof(obs_prior_class, parallel_fraction)},
    {"footprint_gib", CFG_MAP, .required = true, .sub = prior_value_fields,
     .off = offsetof(obs_prior_class, footprint_gib)},
    {"batch_share", CFG_MAP, .required = true, .sub = prior_value_fields,
     .off = offsetof(obs_prior_class, batch_share)},
    {0},
};

static const cfg_field priors_fields[] = {
    {"schema_version", CFG_I64, .required = true, CFG_MIN(1), CFG_MAX(1),
     .off = offsetof(obs_priors, schema_version)},
    {"classes", CFG_SEQ, .required = true, CFG_MIN(1),
     CFG_SEQ_OF(obs_priors, classes, n, obs_prior_class, prior_class_fields)},
    {0},
};

/* ---- helpers ------------------------------------------------------------------------------- */

void obs_ddp_terms_apply(const obs_ddp_terms *t, wl_profile *p)
{
    p->grad_tensors = t->grad_tensors;
    p->buffer_tensors = t->buffer_tensors;
    p->grad_buckets = t->grad_buckets;
    p->backward_frac = t->backward_frac;
    p->optimizer_frac = t->optimizer_frac;
    p->step_cv = t->step_cv;
}

/* Checks of DDP's step terms beyond the schema: each fraction below 1 (forward and backward take
 * some of the GPU time), step_cv below 1 (a step's spread below its mean), no more buckets than
 * gradient tensors (DDP puts whole tensors in its buckets). */
static void check_ddp_terms(const obs_ddp_terms *t, diag *d)
{
    const struct {
        const char *key;
        double v;
        src_loc at;
        const char *expect;
    } fr[] = {{"backward_frac", t->backward_frac, t->backward_frac_at, DDP_FRACTION},
              {"optimizer_frac", t->optimizer_frac, t->optimizer_frac_at, DDP_FRACTION},
              {"step_cv", t->step_cv, t->step_cv_at, DDP_STEP_CV}};
    for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++) {
        if (fr[i].v >= 1) {
            diag_error(d, fr[i].at, fr[i].key, "out of range; expected %s, got '%g'",
                       fr[i].expect, fr[i].v);
        }
    }
    if (t->grad_tensors > 0 && t->grad_buckets > t->grad_tensors) {
        diag_error(d, t->grad_buckets_at, "grad_buckets",
                   "more buckets than gradient tensors; expected at most grad_tensors (%u), "
                   "got '%u'",
                   (unsigned)t->grad_tensors, (unsigned)t->grad_buckets);
    }
}

const char *obs_param_src_name(obs_param_src s)
{
    return (unsigned)s < OBS_SRC_COUNT ? src_names[s] : "?";
}

int obs_ddp_job(const obs_config *cf, const gpu_type *g, const comm_params *cm,
                           ddp_job *job, char *why, size_t why_len)
{
    memset(job, 0, sizeof *job);
    job->gpu = g;
    if (obs_resolve_partition(g, cf->partition, &job->mig, why, why_len)) {
        return -1;
    }
    long long tsum = 0; /* each term capped, so the sum cannot overflow */
    for (size_t i = 0; i < cf->n_topology && i <= DDP_MAX_NODES; i++) {
        int64_t t = cf->topology[i];
        tsum += t < 0 ? 0 : t > DDP_MAX_WORKERS ? DDP_MAX_WORKERS + 1 : t;
    }
    if (cf->n_topology > DDP_MAX_NODES || cf->nodes > DDP_MAX_NODES ||
        cf->workers > DDP_MAX_WORKERS || tsum > DDP_MAX_WORKERS || cf->per_gpu > 64 ||
        cf->gpus_per_node > 64) {
        snprintf(why, why_len, "DDP shape too large; expected at most %d nodes, %d workers, "
                 "64 GPUs per node, per_gpu 64", DDP_MAX_NODES, DDP_MAX_WORKERS);
        return -1;
    }
    long long sum = 0, fullest = 0;
    for (size_t i = 0; i < cf->n_topology; i++) {
        sum += cf->topology[i];
        fullest = cf->topology[i] > fullest ? cf->topology[i] : fullest;
        job->topology[i] = (int)cf->topology[i];
    }
    job->workers = cf->workers_at.line ? (int)cf->workers : cf->n_topology ? (int)sum : 1;
    job->per_gpu = cf->per_gpu_at.line ? (int)cf->per_gpu : 1;
    if (cf->nodes_at.line && cf->n_topology && (size_t)cf->nodes != cf->n_topology) {
        snprintf(why, why_len, "nodes = %lld but topology lists %zu nodes; expected the same",
                 (long long)cf->nodes, cf->n_topology);
        return -1;
    }
    job->n_nodes = cf->n_topology ? (int)cf->n_topology : cf->nodes_at.line ? (int)cf->nodes : 0;
    job->gpus_per_node = cf->gpus_per_node_at.line
                             ? (int)cf->gpus_per_node
                             : cf->n_topology ? (int)((fullest + job->per_gpu - 1) / job->per_gpu)
                                              : 8;
    if (!cm) {
        return ddp_shape(job, why, why_len);
    }
    int net = cm->default_net;
    if (cf->interconnect) {
        net = comm_net_find(cm, cf->interconnect);
        if (net < 0) {
            char names[256];
            comm_net_names(cm, names, sizeof names);
            snprintf(why, why_len, "unknown interconnect; expected one of %s, got '%s'", names,
                     cf->interconnect);
            return -1;
        }
    }
    job->nic_bytes_per_s = cm->nets[net].line_bytes_per_s;
    job->nics = cm->nets[net].nics;
    return ddp_shape(job, why, why_len);
}

bool obs_config_is_ddp(const obs_config *c)
{
    return c->workers_at.line || c->per_gpu_at.line || c->topology_at.line || c->nodes_at.line ||
           c->gpus_per_node_at.line || c->interconnect_at.line;
}

bool obs_unit_counts_samples(const char *unit)
{
    static const char *const iter_units[] = {"iteration", "iterations", "iter",    "iters", "step",
                                             "steps",     "batch",      "batches", NULL};
    for (size_t i = 0; iter_units[i]; i++) {
        if (!strcmp(unit, iter_units[i])) {
            return false;
        }
    }
    return true;
}

/* Parse the document (file or buffer) and walk its root with `table` into dst. Returns 0,
 * SIM_EINPUT, or SIM_ENOENT/SIM_EIO. */
static int walk_file(const char *path, const void *buf, size_t len, const cfg_field *table,
                     void *dst, arena *a, diag *d, void *user)
{
    yamlx_doc *doc = NULL;
    int rc =
        buf ? yamlx_load_buffer(path, buf, len, a, d, &doc) : yamlx_load_file(path, a, d, &doc);
    if (rc != 0) {
        return rc;
    }
    cfg_walker w;
    cfg_walker_init(&w, doc, a, d, user);
    bool ok = cfg_walk_root(&w, table, dst);
    cfg_walker_fini(&w);
    yamlx_destroy(doc);
    return ok ? 0 : SIM_EINPUT;
}

/* Comma-separated partition names of g ("full, 1g.5gb, ..."), for messages. */
static void partition_list(const gpu_type *g, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "full");
    for (int i = 0; i < g->n_profiles && used < n; i++) {
        used += (size_t)snprintf(buf + used, n - used, ", %s", g->profiles[i].name);
    }
}

/* Resolve the GPU name against the catalog, reporting an unknown one. */
static const gpu_type *resolve_gpu(const gpu_catalog *cat, const char *name, src_loc at, diag *d)
{
    const gpu_type *g = gpu_catalog_find(cat, name);
    if (!g) {
        char names[512];
        diag_error(d, at, "gpu", "unknown GPU; expected one of %s, got '%s'",
                   gpu_catalog_names(cat, names, sizeof names), name);
    }
    return g;
}

/* The figures fit-workload and predict compute with that the catalog may leave unsourced
 * (model/hw/gpus.yaml `unsourced:`): each missing one is an error naming the field and where to give
 * it, instead of a fit that fails later with "invalid input". A --calibration run measures the SM
 * count (model/fit/calapply.h); the datasheet bandwidth comes from the catalog only. */
static void check_gpu_figures(const gpu_type *g, src_loc at, diag *d)
{
    if (g->sms_total <= 0) {
        diag_error(d, at, "gpu",
                   "the catalog has no whole-GPU SM count (gpus[%s].sms_total); expected it "
                   "from --calibration MODEL.json (calib/ measures it) or in the catalog "
                   "(model/hw/gpus.yaml), got none",
                   g->name);
    }
    if (!(g->mem_bw_bytes_per_s > 0)) {
        diag_error(d, at, "gpu",
                   "the catalog has no memory bandwidth (gpus[%s].mem_bandwidth_gb_s, the "
                   "datasheet figure); expected it in the catalog (model/hw/gpus.yaml), got none",
                   g->name);
    }
}

/* A MIG partition an observation runs on needs its SMs and memory (nvidia-smi mig -lgip). */
static void check_profile_figures(const gpu_type *g, const mig_profile *p, src_loc at,
                                  const char *path, diag *d)
{
    if (p->sms <= 0 || p->mem_bytes == 0) {
        diag_error(d, at, path,
                   "the catalog has no %s for MIG profile %s of %s (gpus[%s].profiles[%s].%s); "
                   "expected it in the catalog (model/hw/gpus.yaml, from nvidia-smi mig -lgip), got "
                   "none",
                   p->sms <= 0 ? "SM count" : "memory size", p->name, g->name, g->name, p->name,
                   p->sms <= 0 ? "sms" : "mem_gib");
    }
}

int obs_resolve_partition(const gpu_type *g, const char *name, const mig_profile **mig, char *why,
                          size_t n)
{
    *mig = NULL;
    if (!strcmp(name, "full")) {
        return 0;
    }
    const mig_profile *p = gpu_find_profile(g, name);
    if (!p) {
        char list[512];
        partition_list(g, list, sizeof list);
        snprintf(why, n, "unknown partition for %s; expected one of %s, got '%s'", g->name, list,
                 name);
        return SIM_ENOTFOUND;
    }
    *mig = p;
    return 0;
}

/* ---- observation checks -------------------------------------------------------------------- */

static void field_path(char *buf, size_t n, size_t i, const char *rest)
{
    snprintf(buf, n, "observations[%zu].%s", i, rest);
}

static void check_observation(obs_file *f, size_t i, diag *d)
{
    obs_entry *e = &f->obs[i];
    char path[128];
    char why[768];
    if (f->gpu && obs_resolve_partition(f->gpu, e->config.partition, &e->mig, why, sizeof why)) {
        field_path(path, sizeof path, i, "config.partition");
        diag_error(d, e->config.partition_at, path, "%s", why);
    } else if (e->mig) {
        field_path(path, sizeof path, i, "config.partition");
        check_profile_figures(f->gpu, e->mig, e->config.partition_at, path, d);
    }
    if (e->config.peers_at.line && e->config.peers < 1) {
        field_path(path, sizeof path, i, "config.peers");
        diag_error(d, e->config.peers_at, path,
                   "out of range; expected an integer of at least 1, got '%lld'",
                   (long long)e->config.peers);
    }
    bool resolved = e->mig || (e->config.partition && !strcmp(e->config.partition, "full"));
    if (f->gpu && resolved && obs_config_is_ddp(&e->config)) {
        ddp_job job;
        if (obs_ddp_job(&e->config, f->gpu, NULL, &job, why, sizeof why)) {
            field_path(path, sizeof path, i, "config");
            diag_error(d, e->config.at, path, "%s", why);
        }
    }
    if (e->config.mig_busy_at.line && e->config.mig_busy < 0) {
        field_path(path, sizeof path, i, "config.mig_busy");
        diag_error(d, e->config.mig_busy_at, path,
                   "out of range; expected an integer of at least 0, got '%lld'",
                   (long long)e->config.mig_busy);
    }
    const struct {
        const char *key;
        double v;
        src_loc at;
    } pos[] = {{"work", e->work, e->work_at},
               {"time_s", e->time_s, e->time_s_at},
               {"throughput", e->throughput, e->throughput_at}};
    for (size_t k = 0; k < sizeof pos / sizeof pos[0]; k++) {
        if (pos[k].at.line && !(pos[k].v > 0)) {
            field_path(path, sizeof path, i, pos[k].key);
            diag_error(d, pos[k].at, path, "not positive; expected a number > 0, got '%g'",
                       pos[k].v);
        }
    }
    bool has_work = e->work_at.line, has_time = e->time_s_at.line, has_tp = e->throughput_at.line;
    if (!e->gpu_util_at.line) {
        e->gpu_util = -1;
    }
    if (e->outcome == OBS_OUTCOME_OOM) {
        if (has_time || has_tp) {
            field_path(path, sizeof path, i, has_time ? "time_s" : "throughput");
            diag_error(d, has_time ? e->time_s_at : e->throughput_at, path,
                       "timing on an oom observation; expected no time_s or throughput with "
                       "outcome: oom, got '%g'",
                       has_time ? e->time_s : e->throughput);
        }
        return;
    }
    if (has_tp && (has_work || has_time)) {
        field_path(path, sizeof path, i, has_time ? "time_s" : "work");
        diag_error(d, has_time ? e->time_s_at : e->work_at, path,
                   "both forms of timing; expected either throughput or time_s (with work), got "
                   "'%g' beside throughput",
                   has_time ? e->time_s : e->work);
    } else if (!has_tp && !has_time) {
        snprintf(path, sizeof path, "observations[%zu]", i);
        diag_error(d, e->at, path,
                   "no timing; expected throughput, or time_s (with work), or outcome: oom, got "
                   "%s",
                   has_work ? "work only" : "neither");
    } else if (has_tp && e->throughput > 0) {
        e->unit_time_s = 1.0 / e->throughput;
    } else if (has_time && e->time_s > 0) {
        /* time_s is the wall time of `work` units; without work, of one unit */
        e->unit_time_s = e->time_s / (has_work ? e->work : 1.0);
    }
    if (has_work && !(e->work > 0)) {
        e->unit_time_s = 0;
    }
}

/* The solo measurements of observation e in key order: value and location (line 0 = absent). */
typedef struct measured_key {
    const char *key;
    double v;
    src_loc at;
} measured_key;

enum { MEAS_KERNELS, MEAS_BUSY, MEAS_SM, MEAS_DRAM, MEAS_COUNT };

static void measured_keys(const obs_entry *e, measured_key k[MEAS_COUNT])
{
    k[MEAS_KERNELS] = (measured_key){"kernels_per_iter", e->kernels_per_iter,
                                     e->kernels_per_iter_at};
    k[MEAS_BUSY] = (measured_key){"kernel_busy", e->kernel_busy, e->kernel_busy_at};
    k[MEAS_SM] = (measured_key){"sm_activity", e->sm_activity, e->sm_activity_at};
    k[MEAS_DRAM] = (measured_key){"dram_util", e->dram_util, e->dram_util_at};
}

/* The rules of the solo measurements (obs.h); sets f->measured. */
static void check_measured(obs_file *f, diag *d)
{
    f->measured = -1;
    for (size_t i = 0; i < f->n; i++) {
        obs_entry *e = &f->obs[i];
        measured_key k[MEAS_COUNT];
        measured_keys(e, k);
        int first = -1;
        char path[128];
        for (int j = MEAS_COUNT - 1; j >= 0; j--) {
            first = k[j].at.line ? j : first; /* the schema checked the values */
        }
        if (first < 0) {
            continue;
        }
        field_path(path, sizeof path, i, k[first].key);
        const obs_config *c = &e->config;
        bool shared = c->peers > 1 || c->n_with > 0 ||
                      (c->sharing_at.line && c->sharing != SHARE_EXCLUSIVE);
        if (e->outcome != OBS_OUTCOME_OK || shared || obs_config_is_ddp(c)) {
            diag_error(d, k[first].at, path,
                       "solo measurement on a run that is not solo; expected it on an ok, "
                       "exclusive, one-process run without DDP keys, got '%g' on a%s run",
                       k[first].v,
                       e->outcome != OBS_OUTCOME_OK ? "n oom"
                       : shared                     ? " shared"
                                                    : " DDP");
        }
        if (f->measured >= 0) {
            diag_error(d, k[first].at, path,
                       "solo measurements on a second run; expected them on one observation "
                       "(observations[%d] has them), got '%g'",
                       f->measured, k[first].v);
        } else {
            f->measured = (int)i;
        }
        if (k[MEAS_KERNELS].at.line && f->kernels_per_iter_at.line) {
            field_path(path, sizeof path, i, "kernels_per_iter");
            diag_error(d, k[MEAS_KERNELS].at, path,
                       "given twice; expected kernels_per_iter either at the top (line %d) or "
                       "on one observation, got '%g'",
                       f->kernels_per_iter_at.line, k[MEAS_KERNELS].v);
        }
        bool gpm = k[MEAS_BUSY].at.line || k[MEAS_SM].at.line || k[MEAS_DRAM].at.line;
        if (!gpm) {
            continue;
        }
        for (int j = MEAS_BUSY; j < MEAS_COUNT; j++) {
            if (!k[j].at.line) {
                field_path(path, sizeof path, i, k[j].key);
                diag_error(d, e->at, path,
                           "missing; expected kernel_busy, sm_activity and dram_util together "
                           "(with gpu_util), got only %s",
                           k[k[MEAS_BUSY].at.line ? MEAS_BUSY : k[MEAS_SM].at.line ? MEAS_SM
                                                                                  : MEAS_DRAM]
                               .key);
            }
        }
        if (!e->gpu_util_at.line) {
            field_path(path, sizeof path, i, "gpu_util");
            diag_error(d, e->at, path,
                       "missing beside the GPM measurements; expected the run's NVML "
                       "utilisation (a fraction in (0, 1]), got none");
        } else if (!(e->gpu_util > 0)) {
            field_path(path, sizeof path, i, "gpu_util");
            diag_error(d, e->gpu_util_at, path,
                       "not positive beside the GPM measurements; expected a fraction in (0, 1], "
                       "got '%g'",
                       e->gpu_util);
        }
        if (e->mig) {
            field_path(path, sizeof path, i, "config.partition");
            diag_error(d, c->partition_at, path,
                       "GPM measurements on a MIG instance; expected them on a run on the whole "
                       "GPU (partition: full), got '%s'",
                       c->partition);
        }
    }
}

/* Observation i's `telemetry:` (a file loaded from disk only: a buffer has no directory to
 * resolve it against): its gpu_util, and its sm_activity and dram_util when the observation
 * gives kernel_busy (the three come together). A figure given both ways is an error. */
static void read_telemetry(obs_file *f, size_t i, arena *a, diag *d)
{
    obs_entry *e = &f->obs[i];
    obs_telemetry *t = &e->telemetry;
    if (!t->at.line) {
        return;
    }
    char path[128];
    const char *slash = strrchr(f->path, '/');
    char *file = (char *)t->file;
    if (t->file[0] != '/' && slash) {
        size_t n = (size_t)(slash - f->path) + 1;
        file = arena_alloc(a, n + strlen(t->file) + 1);
        memcpy(file, f->path, n);
        strcpy(file + n, t->file);
    }
    t->file = file;
    tel_query q = {.format = (tel_format)tel_format_find(t->format),
                   .gpu = (int)t->gpu,
                   .instance = t->instance,
                   .from_s = t->from_s > 0 ? t->from_s : -HUGE_VAL,
                   .to_s = t->to_s > 0 ? t->to_s : HUGE_VAL};
    tel_result r;
    int rc = tel_load_file(file, &q, d, &r);
    if (rc == SIM_ENOENT || rc == SIM_EIO) {
        field_path(path, sizeof path, i, "telemetry.file");
        diag_error(d, t->file_at, path,
                   "cannot read the file (%s); expected a readable file, got '%s'", strerror(errno),
                   file);
    }
    if (rc) {
        return;
    }
    if (e->gpu_util_at.line) {
        field_path(path, sizeof path, i, "gpu_util");
        diag_error(d, e->gpu_util_at, path,
                   "given twice; expected gpu_util or telemetry, got '%g' beside telemetry",
                   e->gpu_util);
        return;
    }
    e->gpu_util = r.gpu_util > 1 ? 1 : r.gpu_util;
    e->gpu_util_at = t->at;
    if (e->kernel_busy_at.line && !e->sm_activity_at.line && r.sm_active > 0 &&
        !e->dram_util_at.line && r.dram_active > 0) {
        e->sm_activity = r.sm_active;
        e->sm_activity_at = t->at;
        e->dram_util = r.dram_active;
        e->dram_util_at = t->at;
    }
    t->n_util = r.n_util;
    t->util_source = r.util_source;
    t->gr_engine_active = r.gr_engine_active;
    t->sm_active = r.sm_active;
    t->dram_active = r.dram_active;
    t->fb_used_bytes = r.fb_used_bytes;
    t->power_w = r.power_w;
}

int obs_load_observations(const char *path, const void *buf, size_t len, const gpu_catalog *cat,
                          arena *a, diag *d, obs_file **out)
{
    *out = NULL;
    obs_file *f = arena_alloc(a, sizeof *f);
    f->path = arena_strdup(a, path);
    int rc = walk_file(path, buf, len, obs_file_fields, f, a, d, NULL);
    if (rc != 0 && rc != SIM_EINPUT) {
        return rc;
    }
    if (f->gpu_name) {
        f->gpu = resolve_gpu(cat, f->gpu_name, f->gpu_at, d);
        if (f->gpu && rc == 0) {
            check_gpu_figures(f->gpu, f->gpu_at, d);
        }
    }
    if (f->unit) {
        f->unit_is_sample = obs_unit_counts_samples(f->unit);
    }
    for (size_t i = 0; rc == 0 && !buf && i < f->n; i++) {
        read_telemetry(f, i, a, d);
    }
    /* Checks beyond the schema run on a clean walk only, so that a value the walk rejected
     * (and left zero) is not reported a second time. */
    for (size_t i = 0; rc == 0 && i < f->n; i++) {
        check_observation(f, i, d);
    }
    if (rc == 0) {
        check_measured(f, d);
        check_ddp_terms(&f->ddp, d);
    }
    /* on configs that passed the checks above (their partitions resolve) */
    if (rc == 0 && f->gpu && diag_error_count(d) == 0) {
        obs_check_ddp_sharing(f, d);
    }
    if (rc != 0 || diag_error_count(d) > 0) {
        return SIM_EINPUT;
    }
    *out = f;
    return 0;
}

int obs_load_queries(const char *path, const void *buf, size_t len, const gpu_catalog *cat,
                     arena *a, diag *d, obs_queries **out)
{
    *out = NULL;
    obs_queries *q = arena_alloc(a, sizeof *q);
    q->path = arena_strdup(a, path);
    int rc = walk_file(path, buf, len, queries_fields, q, a, d, NULL);
    if (rc != 0 && rc != SIM_EINPUT) {
        return rc;
    }
    if (q->gpu_name) {
        q->gpu = resolve_gpu(cat, q->gpu_name, q->gpu_at, d);
        if (q->gpu && rc == 0) {
            check_gpu_figures(q->gpu, q->gpu_at, d);
        }
    }
    for (size_t i = 0; rc == 0 && i < q->n; i++) {
        if (!(q->q[i].work > 0)) {
            char fp[64];
            snprintf(fp, sizeof fp, "queries[%zu].work", i);
            diag_error(d, q->q[i].work_at.line ? q->q[i].work_at : q->q[i].at, fp,
                       "not positive; expected a number > 0, got '%g'", q->q[i].work);
        }
    }
    if (rc != 0 || diag_error_count(d) > 0) {
        return SIM_EINPUT;
    }
    *out = q;
    return 0;
}

/* ---- profile.yaml -------------------------------------------------------------------------- */

/* params_doc member i (wl_param order). */
static param_doc *param_at(params_doc *pd, int i)
{
    return (param_doc *)((char *)pd + (size_t)i * sizeof(param_doc));
}

static double variant_value(const variant_doc *v, int i, bool *given)
{
    const double *vals = (const double *)v;
    const src_loc *locs = (const src_loc *)((const char *)v + WL_P_COUNT * sizeof(double));
    *given = locs[i].line != 0;
    return vals[i];
}

int obs_load_profile(const char *path, const void *buf, size_t len, const phys_params *m, arena *a,
                     diag *d, obs_profile **out)
{
    _Static_assert(sizeof(params_doc) == WL_P_COUNT * sizeof(param_doc), "params_doc layout");
    _Static_assert(sizeof(variant_doc) == WL_P_COUNT * (sizeof(double) + sizeof(src_loc)),
                   "variant_doc layout");
    *out = NULL;
    profile_doc doc;
    memset(&doc, 0, sizeof doc);
    int rc = walk_file(path, buf, len, profile_fields, &doc, a, d, NULL);
    if (rc != 0) {
        return rc;
    }
    obs_profile *p = arena_alloc(a, sizeof *p);
    p->at = (src_loc){arena_strdup(a, path), 1, 1};
    p->p.name = doc.workload;
    p->p.provenance = doc.provenance;
    p->unit = doc.unit;
    p->p.unit_is_sample = obs_unit_counts_samples(doc.unit);
    p->gpu_name = doc.gpu;
    p->prior_class = doc.prior_class;
    p->fitted_on = doc.fitted_on;
    p->ref_batch = doc.ref_batch;
    p->p.grad_bytes = doc.grad_bytes;
    p->p.kernels_per_iter = doc.kernels_per_iter;
    p->p.kernel_busy_frac = doc.kernel_busy_frac;
    p->p.gpu_tail_frac = doc.gpu_tail_frac;
    p->p.mps_sm_growth = doc.mps_sm_growth;
    p->p.host_overlap = doc.host_overlap;
    obs_ddp_terms_apply(&doc.ddp, &p->p);
    check_ddp_terms(&doc.ddp, d);
    p->ts_class_name = doc.ts_class;
    if (doc.ts_class && m) {
        p->p.ts_class = phys_ts_class_index(m, doc.ts_class);
        if (p->p.ts_class < 0) {
            char names[256];
            size_t used = 0;
            names[0] = '\0';
            for (int i = 0; i < m->n_ts && used < sizeof names; i++) {
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                         m->ts[i].name);
            }
            diag_error(d, doc.ts_class_at, "ts_class",
                       "unknown time-slice class; expected one of %s, got '%s'", names,
                       doc.ts_class);
            p->p.ts_class = 0;
        }
    }
    wl_class wc = (wl_class)doc.work_class;
    for (int i = 0; i < WL_P_COUNT; i++) {
        param_doc *pd = param_at(&doc.params, i);
        const char *name = wl_param_name((wl_param)i);
        SIM_ASSERT(!strcmp(name, params_fields[i].key));
        if (!pd->at.line) {
            p->src[i] = OBS_SRC_FIXED;
            p->lo[i] = p->hi[i] = 0;
            continue;
        }
        p->src[i] = pd->from;
        p->sd[i] = pd->sd;
        p->lo[i] = pd->lo_at.line ? pd->lo : pd->value;
        p->hi[i] = pd->hi_at.line ? pd->hi : pd->value;
        if (p->lo[i] > pd->value || p->hi[i] < pd->value) {
            char fp[96];
            snprintf(fp, sizeof fp, "params.%s", name);
            diag_error(d, pd->lo_at.line ? pd->lo_at : pd->at, fp,
                       "range excludes the value; expected lo <= value <= hi, got '%g <= %g <= %g'",
                       p->lo[i], pd->value, p->hi[i]);
        }
        if (i == WL_P_COMPUTE_FIXED || i == WL_P_COMPUTE_PER_SAMPLE) {
            double *dst =
                i == WL_P_COMPUTE_FIXED ? p->p.compute_sm_s_fixed : p->p.compute_sm_s_per_sample;
            dst[wc] = pd->value;
        } else {
            wl_param_set(&p->p, (wl_param)i, pd->value);
        }
    }
    p->n_variants = (int)doc.n_variants;
    for (int v = 0; v < p->n_variants; v++) {
        wl_profile *w = &p->variants[v];
        *w = p->p;
        for (int i = 0; i < WL_P_COUNT; i++) {
            bool given = false;
            double val = variant_value(&doc.variants[v], i, &given);
            if (!given) {
                continue;
            }
            if (i == WL_P_COMPUTE_FIXED) {
                w->compute_sm_s_fixed[wc] = val;
            } else if (i == WL_P_COMPUTE_PER_SAMPLE) {
                w->compute_sm_s_per_sample[wc] = val;
            } else {
                wl_param_set(w, (wl_param)i, val);
            }
        }
    }
    if (diag_error_count(d) > 0) {
        return SIM_EINPUT;
    }
    *out = p;
    return 0;
}

/* Shortest "%.17g"-exact text is not needed: %.17g round-trips every double. */
static void put_num(FILE *f, double v)
{
    fprintf(f, "%.17g", v);
}

/* Write a YAML double-quoted scalar. */
static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            fprintf(f, "\\%c", *c);
        } else if (*c < 0x20) {
            fprintf(f, "\\x%02x", *c);
        } else {
            fputc(*c, f);
        }
    }
    fputc('"', f);
}

static double profile_param(const wl_profile *p, wl_class wc, int i)
{
    if (i == WL_P_COMPUTE_FIXED) {
        return p->compute_sm_s_fixed[wc];
    }
    if (i == WL_P_COMPUTE_PER_SAMPLE) {
        return p->compute_sm_s_per_sample[wc];
    }
    return wl_param_get(p, (wl_param)i);
}

static void write_profile_text(FILE *f, const obs_profile *p, const char *comment)
{
    if (comment) {
        const char *line = comment;
        while (*line) {
            const char *nl = strchr(line, '\n');
            size_t n = nl ? (size_t)(nl - line) : strlen(line);
            fprintf(f, "# %.*s\n", (int)n, line);
            line += n + (nl ? 1 : 0);
        }
    }
    wl_class wc = wl_dominant_class(&p->p);
    fprintf(f, "schema_version: 1\nworkload: ");
    put_str(f, p->p.name ? p->p.name : "unnamed");
    fprintf(f, "\nunit: ");
    put_str(f, p->unit ? p->unit : (p->p.unit_is_sample ? "sample" : "iteration"));
    if (p->gpu_name) {
        fprintf(f, "\ngpu: ");
        put_str(f, p->gpu_name);
    }
    if (p->prior_class) {
        fprintf(f, "\nclass: ");
        put_str(f, p->prior_class);
    }
    if (p->fitted_on) {
        fprintf(f, "\nfitted_on: ");
        put_str(f, p->fitted_on);
    }
    if (p->p.provenance) {
        fprintf(f, "\nprovenance: ");
        put_str(f, p->p.provenance);
    }
    fprintf(f, "\nwork_class: %s\n", wl_class_name(wc));
    if (p->ts_class_name) {
        fprintf(f, "ts_class: ");
        put_str(f, p->ts_class_name);
        fputc('\n', f);
    }
    fprintf(f, "ref_batch: %.0f\n", p->ref_batch >= 1 ? p->ref_batch : 1.0);
    const struct {
        const char *key;
        double v;
    } opt[] = {{"grad_bytes", p->p.grad_bytes},         {"kernels_per_iter", p->p.kernels_per_iter},
               {"kernel_busy_frac", p->p.kernel_busy_frac}, {"gpu_tail_frac", p->p.gpu_tail_frac},
               {"mps_sm_growth", p->p.mps_sm_growth},
               {"host_overlap", p->p.host_overlap},     {"grad_tensors", p->p.grad_tensors},
               {"buffer_tensors", p->p.buffer_tensors}, {"grad_buckets", p->p.grad_buckets},
               {"backward_frac", p->p.backward_frac},   {"optimizer_frac", p->p.optimizer_frac},
               {"step_cv", p->p.step_cv}};
    /* the optional keys, each written only where stated (> 0) */
    for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++) {
        if (opt[i].v > 0) {
            fprintf(f, "%s: ", opt[i].key);
            put_num(f, opt[i].v);
            fputc('\n', f);
        }
    }
    fprintf(f, "params:   # value; sd = standard error of a fitted value; lo..hi = prior range\n");
    for (int i = 0; i < WL_P_COUNT; i++) {
        fprintf(f, "  %s: {value: ", wl_param_name((wl_param)i));
        double v = profile_param(&p->p, wc, i);
        put_num(f, v);
        if (p->sd[i] > 0) {
            fprintf(f, ", sd: ");
            put_num(f, p->sd[i]);
        }
        if (p->src[i] == OBS_SRC_PRIOR) {
            fprintf(f, ", lo: ");
            put_num(f, p->lo[i] < v ? p->lo[i] : v);
            fprintf(f, ", hi: ");
            put_num(f, p->hi[i] > v ? p->hi[i] : v);
        }
        fprintf(f, ", from: %s}\n", obs_param_src_name((obs_param_src)p->src[i]));
    }
    if (p->n_variants > 0) {
        fprintf(f,
                "variants:   # the family of profiles along P and refits at the prior ends\n");
        for (int v = 0; v < p->n_variants; v++) {
            const char *sep = "  - {";
            for (int i = 0; i < WL_P_COUNT; i++) {
                double x = profile_param(&p->variants[v], wc, i);
                if (x == profile_param(&p->p, wc, i)) {
                    continue;
                }
                fprintf(f, "%s%s: ", sep, wl_param_name((wl_param)i));
                put_num(f, x);
                sep = ", ";
            }
            fprintf(f, "%s}\n", sep[0] == ' ' ? "  - {" : "");
        }
    }
}

typedef struct profile_text {
    const obs_profile *p;
    const char *comment;
} profile_text;

static void write_profile_file(FILE *f, const void *arg)
{
    const profile_text *t = arg;
    write_profile_text(f, t->p, t->comment);
}

int obs_write_profile(const char *path, const obs_profile *p, const char *comment)
{
    profile_text t = {p, comment};
    return fileio_write_atomic(path, write_profile_file, &t);
}

/* ---- priors.yaml --------------------------------------------------------------------------- */

int obs_load_priors(const char *path, const void *buf, size_t len, arena *a, diag *d,
                    obs_priors **out)
{
    *out = NULL;
    obs_priors *p = arena_alloc(a, sizeof *p);
    int rc = walk_file(path, buf, len, priors_fields, p, a, d, NULL);
    if (rc != 0) {
        return rc;
    }
    for (size_t i = 0; i < p->n; i++) {
        for (size_t j = 0; j < i; j++) {
            if (!strcmp(p->classes[i].name, p->classes[j].name)) {
                char fp[64];
                snprintf(fp, sizeof fp, "classes[%zu].name", i);
                diag_error(d, p->classes[i].at, fp,
                           "duplicate class (first at line %d); expected each name once, got '%s'",
                           p->classes[j].at.line, p->classes[i].name);
            }
        }
    }
    if (diag_error_count(d) > 0) {
        return SIM_EINPUT;
    }
    *out = p;
    return 0;
}

const obs_prior_class *obs_priors_find(const obs_priors *p, const char *name)
{
    for (size_t i = 0; p && i < p->n; i++) {
        if (!strcmp(p->classes[i].name, name)) {
            return &p->classes[i];
        }
    }
    return NULL;
}

double obs_footprint_bytes(const obs_entry *e)
{
    const obs_telemetry *t = &e->telemetry;
    if (!t->at.line || !(t->fb_used_bytes > 0) || e->outcome == OBS_OUTCOME_OOM ||
        e->config.n_with) {
        return 0;
    }
    /* identical co-runners (peers) share the frame buffer: each holds an equal part */
    return t->fb_used_bytes / (double)(e->config.peers > 1 ? e->config.peers : 1);
}
