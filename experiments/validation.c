/* experiments/validation.c - the validation scenarios: tables -> observations -> fit -> predict.
 * See validation.h. Each table's mapping onto the model is one builder function below; its
 * comment says which profile shape it assumes and why. No published figure is written here: they
 * are all read from the CSVs. */
#include "experiments/validation.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/calib_json.h"
#include "experiments/comm_load.h"
#include "experiments/cfg.h"
#include "experiments/fileio.h"
#include "experiments/yamlx.h"
#include "model/calapply.h"
#include "model/calfit.h"
#include "model/comm.h"
#include "model/ddp.h"
#include "model/predict.h"
#include "model/speed.h"
#include "model/wmeas.h"
#include "sim/arena.h"
#include "sim/err.h"
#include "sim/xalloc.h"

/* ---- scenario file ---- */

typedef struct val_exclude {
    const char *figure;
    const char *reason;
    src_loc at, figure_at;
} val_exclude;

typedef struct val_scenario {
    const char *table, *csv, *gpu, *note, *base;
    const char *calibration; /* a `slicesim fit` model file, relative to the scenario's dir */
    const char **calib_runs; /* calibration recordings (calib/run-all.sh JSON) replayed instead
                                of a CSV, relative to the scenario's dir */
    size_t n_calib_runs;
    const char *model;   /* row filter on a `model` column, or NULL */
    const char *cls;     /* precision class of the workload's compute, or NULL (fp32) */
    int ranks;           /* all-reduce tables: ranks of the sweep (0 = a workload table) */
    int gpus_per_node;   /* all-reduce tables: ranks per node (0 = all on one node) */
    const char *interconnect; /* all-reduce tables: the nodes' network (model/comm.yaml) */
    val_exclude *fd_exclude;  /* all-reduce tables: rows left out of the from-data errors */
    size_t n_fd_exclude;
    double ll_max_bytes; /* all-reduce tables: largest message NCCL sent with LL in the sweep */
    double min_bytes;    /* all-reduce tables: smaller messages are shown, not counted */
    double target;
    const char **fit;
    size_t n_fit;
    val_exclude *exclude;
    size_t n_exclude;
    src_loc table_at, gpu_at, fit_at, interconnect_at, calib_runs_at;
} val_scenario;

static const char *const class_names[] = {"fp32", "fp64", "fp16", "tensor", NULL};

static const cfg_field exclude_fields[] = {
    CFG_SELF(val_exclude, at),
    {"figure", CFG_STRING, .required = true, .off = offsetof(val_exclude, figure),
     CFG_LOC(val_exclude, figure_at)},
    {"reason", CFG_STRING, .required = true, .off = offsetof(val_exclude, reason)},
    {0},
};

static const cfg_field scenario_fields[] = {
    {"table", CFG_STRING, .required = true, .off = offsetof(val_scenario, table),
     CFG_LOC(val_scenario, table_at)},
    {"csv", CFG_STRING, .off = offsetof(val_scenario, csv)}, /* or calib_runs (run_table) */
    {"gpu", CFG_STRING, .required = true, .off = offsetof(val_scenario, gpu),
     CFG_LOC(val_scenario, gpu_at)},
    {"target_mape_pct", CFG_DOUBLE, .required = true, CFG_MIN(0), CFG_MAX(100),
     .off = offsetof(val_scenario, target)},
    {"fit", CFG_SEQ, .required = true, CFG_MIN(1), .elem = CFG_STRING,
     .off = offsetof(val_scenario, fit), .count_off = offsetof(val_scenario, n_fit),
     CFG_LOC(val_scenario, fit_at)},
    {"exclude", CFG_SEQ, CFG_SEQ_OF(val_scenario, exclude, n_exclude, val_exclude, exclude_fields)},
    {"note", CFG_STRING, .off = offsetof(val_scenario, note)},
    {"base", CFG_STRING, .off = offsetof(val_scenario, base)},
    {"calibration", CFG_STRING, .off = offsetof(val_scenario, calibration)},
    {"model", CFG_STRING, .off = offsetof(val_scenario, model)},
    {"class", CFG_STRING, .names = class_names, .off = offsetof(val_scenario, cls)},
    {"ranks", CFG_INT, CFG_MIN(2), CFG_MAX(DDP_MAX_WORKERS), .off = offsetof(val_scenario, ranks)},
    {"gpus_per_node", CFG_INT, CFG_MIN(1), CFG_MAX(64),
     .off = offsetof(val_scenario, gpus_per_node)},
    {"interconnect", CFG_STRING, .off = offsetof(val_scenario, interconnect),
     CFG_LOC(val_scenario, interconnect_at)},
    {"from_data_exclude", CFG_SEQ,
     CFG_SEQ_OF(val_scenario, fd_exclude, n_fd_exclude, val_exclude, exclude_fields)},
    {"ll_max_bytes", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1e15),
     .off = offsetof(val_scenario, ll_max_bytes)},
    {"min_bytes", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1e15), .off = offsetof(val_scenario, min_bytes)},
    {"calib_runs", CFG_SEQ, CFG_MIN(1), CFG_MAX(WFIT_MAX_PROFILES / 2), .elem = CFG_STRING,
     .off = offsetof(val_scenario, calib_runs), .count_off = offsetof(val_scenario, n_calib_runs),
     CFG_LOC(val_scenario, calib_runs_at)},
    {0},
};

/* ---- CSV ---- */

#define CSV_MAX_COLS 16

typedef struct csv_table {
    int n_cols;
    char *header[CSV_MAX_COLS];
    int n_rows;
    char *(*rows)[CSV_MAX_COLS];
    char *text; /* owned buffer that the cells point into */
} csv_table;

static void csv_free(csv_table *t)
{
    free(t->rows);
    free(t->text);
    memset(t, 0, sizeof *t);
}

/* Split `line` at commas in place into at most CSV_MAX_COLS cells; returns the count. */
static int split(char *line, char **cells)
{
    int n = 0;
    char *p = line;
    while (n < CSV_MAX_COLS) {
        cells[n++] = p;
        char *c = strchr(p, ',');
        if (!c) {
            break;
        }
        *c = '\0';
        p = c + 1;
    }
    return n;
}

static int csv_read(const char *path, csv_table *t)
{
    memset(t, 0, sizeof *t);
    size_t len;
    int rc = fileio_read_all(path, FILEIO_MAX_BYTES, &t->text, &len);
    if (rc) {
        return rc;
    }
    int cap_rows = 64;
    t->rows = xcalloc((size_t)cap_rows, sizeof *t->rows, "csv rows");
    char *save = NULL;
    for (char *line = strtok_r(t->text, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        if (line[0] == '#' || line[0] == '\0') {
            continue;
        }
        if (t->n_cols == 0) {
            t->n_cols = split(line, t->header);
            continue;
        }
        if (t->n_rows == cap_rows) {
            cap_rows *= 2;
            t->rows = xrealloc(t->rows, (size_t)cap_rows * sizeof *t->rows, "csv rows");
        }
        char **cells = t->rows[t->n_rows];
        int n = split(line, cells);
        for (int i = n; i < CSV_MAX_COLS; i++) {
            cells[i] = NULL;
        }
        t->n_rows++;
    }
    return 0;
}

static int csv_col(const csv_table *t, const char *name)
{
    for (int i = 0; i < t->n_cols; i++) {
        if (!strcmp(t->header[i], name)) {
            return i;
        }
    }
    return -1;
}

/* Co-runners of a time-slicing column "shared_x<K>" (K >= 1); false for any other header. */
static bool shared_peers(const char *header, int *k)
{
    static const char prefix[] = "shared_x";
    int64_t v;
    char problem[64];
    if (!header || strncmp(header, prefix, sizeof prefix - 1) != 0 ||
        !cfg_parse_i64(header + sizeof prefix - 1, &v, problem, sizeof problem) || v < 1 ||
        v > 64) {
        return false;
    }
    *k = (int)v;
    return true;
}

static bool cell_double(const char *s, double *out)
{
    char problem[64];
    return s && cfg_parse_double(s, out, problem, sizeof problem);
}

/* ---- figures ---- */

typedef struct fig_spec {
    val_figure f;
    int profile;
    partition_cfg cfg;
    double batch;
    double work;  /* value = work * unit_time (time) or work / unit_time (rate) */
    bool is_rate;
    double util;  /* measured GPU utilisation (fitted with the figure), or < 0 */
    int with;     /* profile index of a co-runner (cfg.with[0] at prediction), or -1 */
    int with_n;   /* clients of that co-runner (cfg.with[0 .. with_n - 1]); 1 unless stated */
} fig_spec;

typedef struct builder {
    const val_scenario *sc;
    const gpu_type *gpu;
    const phys_params *m;
    wfit_spec spec;
    bool has_base; /* profile 0 comes from another scenario's fit: keep it fixed */
    int n;
    fig_spec figs[256];
    char err[200];
    char names[WFIT_MAX_PROFILES][32]; /* profile names a builder made (the CSV is freed first) */
    gpu_type calibrated;               /* the scenario's GPU with its calibration applied */
    cal_data *runs;                    /* the scenario's calib_runs, loaded (owned) */
    int n_runs;
    bool by_kind;                      /* labels are WORKLOAD/KIND[:WITH] (val_table.by_kind) */
} builder;

static const mig_profile *find_part(builder *b, const char *name)
{
    if (!strcmp(name, "full")) {
        return NULL;
    }
    const mig_profile *p = gpu_find_profile(b->gpu, name);
    if (!p) {
        snprintf(b->err, sizeof b->err, "partition '%s' is not a profile of %s", name,
                 b->gpu->name);
    }
    return p;
}

static fig_spec *add_fig(builder *b, const char *label, double published, const char *unit)
{
    if (b->n >= (int)(sizeof b->figs / sizeof b->figs[0])) {
        snprintf(b->err, sizeof b->err, "too many figures");
        return NULL;
    }
    fig_spec *f = &b->figs[b->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->f.label, sizeof f->f.label, "%s", label);
    snprintf(f->f.unit, sizeof f->f.unit, "%s", unit);
    f->f.published = published;
    f->batch = 1;
    f->util = -1;
    f->with = -1;
    f->with_n = 1;
    partition_cfg_init(&f->cfg, b->gpu);
    return f;
}

static void free_param(builder *b, int profile, wl_param which)
{
    b->spec.free[b->spec.n_free++] = (wfit_free){.profile = profile, .which = (int)which};
}

static void free_mparam(builder *b, wfit_mparam which)
{
    b->spec.free[b->spec.n_free++] = (wfit_free){.is_model = true, .which = (int)which};
}

/* The simpletrack tables: a wide matrix ROW x COLUMN of seconds for ROW particles per process.
 * Profile per particle: host time H and fp32 compute C (seed: "heavy on GPU usage, low on
 * CPU-to-GPU communication and memory accesses", so no memory term): t = H + C / s.
 *
 * cern-simpletrack: COLUMN is a partition (full or a MIG profile). Free: H, C.
 * chep-timeslicing: COLUMN shared_xN = seconds until N identical processes all finish on one
 * time-sliced whole GPU; a process's time = work / its steady throughput from the mean-value
 * analysis. The profile is cern-simpletrack's (same code, GPU model and driver): with
 * `base: cern-simpletrack.yaml` it is taken from that scenario's fit (its fitted rows, not this
 * table's), because the x1 rows alone cannot split host from GPU time. The time-slice efficiency
 * η (one value for every k >= 2, as the paper measured) is free. */
static void build_particles(builder *b, const csv_table *t, bool timeslice)
{
    b->spec.n_profiles = 1;
    if (!b->has_base) {
        wl_profile *p = &b->spec.profiles[0];
        *p = (wl_profile){.name = "simpletrack", .host_s_fixed = 1e-7};
        p->compute_sm_s_fixed[WL_CLASS_FP32] = 1e-4;
    }
    for (int r = 0; r < t->n_rows; r++) {
        double particles;
        if (!cell_double(t->rows[r][0], &particles)) {
            snprintf(b->err, sizeof b->err, "row %d: bad particle count", r + 1);
            return;
        }
        for (int c = 1; c < t->n_cols; c++) {
            double sec;
            int k = 1;
            if (!cell_double(t->rows[r][c], &sec) ||
                (timeslice && !shared_peers(t->header[c], &k))) {
                continue;
            }
            char label[64];
            snprintf(label, sizeof label, "%s/%s", t->rows[r][0], t->header[c]);
            fig_spec *f = add_fig(b, label, sec, "s");
            if (!f) {
                return;
            }
            if (timeslice) {
                f->cfg.sharing = k > 1 ? SHARE_TIMESLICE : SHARE_EXCLUSIVE;
                f->cfg.peers = k;
            } else {
                f->cfg.mig = find_part(b, t->header[c]);
            }
            f->work = particles;
        }
    }
    if (!b->has_base) {
        free_param(b, 0, WL_P_HOST_S_FIXED);
        free_param(b, 0, WL_P_COMPUTE_FIXED);
    }
    if (timeslice) {
        free_mparam(b, WFIT_M_ETA);
    }
}

static void build_simpletrack(builder *b, const csv_table *t)
{
    build_particles(b, t, false);
}

static void build_timeslicing(builder *b, const csv_table *t)
{
    build_particles(b, t, true);
}

/* cern-mig-flops: dcgmproftester TFLOPS per format (row) and partition (column). One profile per
 * format: a unit is 1 TFLOP of pure compute in that format's class (no host, no memory term), so
 * TFLOPS = 1 / unit time. Free: each format's SM-seconds per TFLOP (its per-SM efficiency at the
 * reference clock), the per-SM power of each class and the power exponent: the power cap is what
 * makes tensor-core FLOPS scale far from SM-linearly (DESIGN.md §3). */
static void build_flops(builder *b, const csv_table *t)
{
    static const struct {
        const char *row;
        wl_class cls;
        wfit_mparam power;
    } formats[] = {
        {"fp32_cuda_cores", WL_CLASS_FP32, WFIT_M_POWER_SM_W_FP32},
        {"fp64_cuda_cores", WL_CLASS_FP64, WFIT_M_POWER_SM_W_FP64},
        {"fp16_cuda_cores", WL_CLASS_FP16, WFIT_M_POWER_SM_W_FP16},
        {"fp16_tensor_cores", WL_CLASS_TENSOR, WFIT_M_POWER_SM_W_TENSOR},
    };
    b->spec.n_profiles = 0;
    for (int r = 0; r < t->n_rows; r++) {
        int fi = -1;
        for (int i = 0; i < 4; i++) {
            if (!strcmp(t->rows[r][0], formats[i].row)) {
                fi = i;
            }
        }
        if (fi < 0) {
            snprintf(b->err, sizeof b->err, "unknown format row '%s'", t->rows[r][0]);
            return;
        }
        int pi = b->spec.n_profiles++;
        wl_profile *p = &b->spec.profiles[pi];
        *p = (wl_profile){.name = formats[fi].row};
        p->compute_sm_s_fixed[formats[fi].cls] = 1.0;
        free_param(b, pi, WL_P_COMPUTE_FIXED);
        free_mparam(b, formats[fi].power);
        for (int c = 1; c < t->n_cols; c++) {
            double tf;
            if (!cell_double(t->rows[r][c], &tf)) {
                continue;
            }
            char label[64];
            snprintf(label, sizeof label, "%s/%s", t->rows[r][0], t->header[c]);
            fig_spec *f = add_fig(b, label, tf, "TFLOPS");
            if (!f) {
                return;
            }
            f->profile = pi;
            f->cfg.mig = find_part(b, t->header[c]);
            f->work = 1.0;
            f->is_rate = true;
        }
    }
    free_mparam(b, WFIT_M_POWER_ALPHA);
}

/* cern-finetune: seconds to fine-tune on `dataset_size` samples; each comparison pair used its own
 * batch and data-loader workers. One profile per sample for the whole table (same model, same
 * script): host time per sample and per iteration, fp32 compute per sample and per iteration
 * (optimizer step, small-batch kernels), memory traffic per
 * sample and the parallelism per sample (P ∝ B) are free, and so is the roofline exponent p: this
 * table, with both the whole-GPU/7g pair (SMs change, bandwidth does not) and the 4g/2g pair (both
 * halve), is what separates compute from memory time. */
static void build_finetune(builder *b, const csv_table *t)
{
    int c_cmp = csv_col(t, "comparison"), c_n = csv_col(t, "dataset_size");
    int c_part = csv_col(t, "partition"), c_b = csv_col(t, "batch"), c_s = csv_col(t, "seconds");
    if (c_cmp < 0 || c_n < 0 || c_part < 0 || c_b < 0 || c_s < 0) {
        snprintf(b->err, sizeof b->err, "missing a column (comparison, dataset_size, partition, "
                                        "batch, seconds)");
        return;
    }
    b->spec.n_profiles = 1;
    wl_profile *p = &b->spec.profiles[0];
    *p = (wl_profile){.name = "finetune", .unit_is_sample = true, .host_s_fixed = 0.01,
                      .host_s_per_sample = 0.001, .mem_traffic_bytes_per_sample = 1e9,
                      .max_sms_per_sample = 4};
    p->compute_sm_s_per_sample[WL_CLASS_FP32] = 1.0;
    p->compute_sm_s_fixed[WL_CLASS_FP32] = 1.0;
    for (int r = 0; r < t->n_rows; r++) {
        double n, batch, sec;
        if (!cell_double(t->rows[r][c_n], &n) || !cell_double(t->rows[r][c_b], &batch) ||
            !cell_double(t->rows[r][c_s], &sec)) {
            snprintf(b->err, sizeof b->err, "row %d: bad number", r + 1);
            return;
        }
        char label[64];
        snprintf(label, sizeof label, "%s/%s/%s", t->rows[r][c_cmp], t->rows[r][c_n],
                 t->rows[r][c_part]);
        fig_spec *f = add_fig(b, label, sec, "s");
        if (!f) {
            return;
        }
        f->cfg.mig = find_part(b, t->rows[r][c_part]);
        f->batch = batch;
        f->work = n;
    }
    free_param(b, 0, WL_P_HOST_S_FIXED);
    free_param(b, 0, WL_P_HOST_S_PER_SAMPLE);
    free_param(b, 0, WL_P_COMPUTE_FIXED);
    free_param(b, 0, WL_P_COMPUTE_PER_SAMPLE);
    free_param(b, 0, WL_P_MEM_TRAFFIC_PER_SAMPLE);
    free_param(b, 0, WL_P_MAX_SMS_PER_SAMPLE);
    free_mparam(b, WFIT_M_ROOFLINE_P);
}

/* MIGProfiler (published-tables.md 1.1a, 1.1b): latency per iteration (ms) of one model at
 * batch B on one MIG instance. Profile per iteration, affine in B: host time H, compute
 * C = c0 + c1 B in the scenario's class, parallelism P = p0 + p1 B (small batches cannot fill a
 * large instance: the 7g latency is flat from batch 1 to 8), memory traffic per sample. Free:
 * H, c0, c1, p0, p1, M per sample. The class matters through power: PyTorch 1.12 runs convolutions
 * in TF32 on tensor cores (cudnn.allow_tf32 defaults to true) but fp32 matmuls on CUDA cores
 * (matmul.allow_tf32 defaults to false from 1.12), so ResNet-50 is `tensor`, ViT `fp32`. */
static void build_batch_latency(builder *b, const csv_table *t)
{
    int c_prof = csv_col(t, "profile"), c_b = csv_col(t, "batch"), c_l = csv_col(t, "latency_ms");
    int c_model = csv_col(t, "model");
    if (c_prof < 0 || c_b < 0 || c_l < 0 || (b->sc->model && c_model < 0)) {
        snprintf(b->err, sizeof b->err, "missing a column (profile, batch, latency_ms%s)",
                 b->sc->model ? ", model" : "");
        return;
    }
    wl_class cls = b->sc->cls ? wl_class_from_name(b->sc->cls) : WL_CLASS_FP32;
    b->spec.n_profiles = 1;
    wl_profile *p = &b->spec.profiles[0];
    *p = (wl_profile){.name = b->sc->model ? b->sc->model : b->sc->table, .host_s_fixed = 0.005,
                      .max_sms_fixed = 10, .max_sms_per_sample = 5,
                      .mem_traffic_bytes_per_sample = 1e7};
    p->compute_sm_s_fixed[cls] = 0.1;
    p->compute_sm_s_per_sample[cls] = 0.05;
    for (int r = 0; r < t->n_rows; r++) {
        if (b->sc->model && strcmp(t->rows[r][c_model], b->sc->model) != 0) {
            continue;
        }
        double batch, ms;
        if (!cell_double(t->rows[r][c_b], &batch) || !cell_double(t->rows[r][c_l], &ms)) {
            snprintf(b->err, sizeof b->err, "row %d: bad number", r + 1);
            return;
        }
        char label[64];
        snprintf(label, sizeof label, "%s/bs%s", t->rows[r][c_prof], t->rows[r][c_b]);
        fig_spec *f = add_fig(b, label, ms, "ms");
        if (!f) {
            return;
        }
        f->cfg.mig = find_part(b, t->rows[r][c_prof]);
        f->batch = batch;
        f->work = 1000.0; /* one iteration, in ms */
    }
    free_param(b, 0, WL_P_HOST_S_FIXED);
    free_param(b, 0, WL_P_COMPUTE_FIXED);
    free_param(b, 0, WL_P_COMPUTE_PER_SAMPLE);
    free_param(b, 0, WL_P_MAX_SMS_FIXED);
    free_param(b, 0, WL_P_MAX_SMS_PER_SAMPLE);
    free_param(b, 0, WL_P_MEM_TRAFFIC_PER_SAMPLE);
}

/* nos YOLOS (published-tables.md 2.1): seconds per request of each of N pods, batch 1, under
 * time-slicing (N processes on the whole GPU), MPS (N clients, no thread cap) and MIG (one
 * 1g.10gb instance per pod, N instances busy). Profile per request: host time H, compute C
 * (fp32: torch 1.13 keeps fp32 matmuls off tensor cores), parallelism P, memory traffic M.
 * Free: H, C, M and P, the time-slice efficiency η of the profile's class, and the MPS bandwidth
 * contention. */
static void build_sharing(builder *b, const csv_table *t)
{
    int c_mode = csv_col(t, "sharing"), c_n = csv_col(t, "pods"), c_s = csv_col(t, "seconds");
    if (c_mode < 0 || c_n < 0 || c_s < 0) {
        snprintf(b->err, sizeof b->err, "missing a column (sharing, pods, seconds)");
        return;
    }
    wl_class cls = b->sc->cls ? wl_class_from_name(b->sc->cls) : WL_CLASS_FP32;
    b->spec.n_profiles = 1;
    wl_profile *p = &b->spec.profiles[0];
    *p = (wl_profile){.name = "yolos-small", .host_s_fixed = 0.02, .max_sms_fixed = 50,
                      .mem_traffic_bytes_fixed = 1e9};
    p->compute_sm_s_fixed[cls] = 5.0;
    for (int r = 0; r < t->n_rows; r++) {
        double pods, sec;
        if (!cell_double(t->rows[r][c_n], &pods) || !cell_double(t->rows[r][c_s], &sec) ||
            pods < 1 || pods > 64) {
            snprintf(b->err, sizeof b->err, "row %d: bad number", r + 1);
            return;
        }
        const char *mode = t->rows[r][c_mode];
        char label[64];
        snprintf(label, sizeof label, "%s/%s", mode, t->rows[r][c_n]);
        fig_spec *f = add_fig(b, label, sec, "s");
        if (!f) {
            return;
        }
        int k = (int)pods;
        if (!strcmp(mode, "mig")) {
            f->cfg.mig = find_part(b, "1g.10gb");
            f->cfg.mig_busy = k;
        } else if (!strcmp(mode, "mps") || !strcmp(mode, "timeslice")) {
            f->cfg.sharing = k == 1 ? SHARE_EXCLUSIVE
                                    : !strcmp(mode, "mps") ? SHARE_MPS : SHARE_TIMESLICE;
            f->cfg.peers = k;
        } else {
            snprintf(b->err, sizeof b->err, "row %d: unknown sharing '%s'", r + 1, mode);
            return;
        }
        f->work = 1.0;
    }
    free_param(b, 0, WL_P_HOST_S_FIXED);
    free_param(b, 0, WL_P_COMPUTE_FIXED);
    free_param(b, 0, WL_P_MEM_TRAFFIC_FIXED);
    free_param(b, 0, WL_P_MAX_SMS_FIXED);
    free_mparam(b, WFIT_M_ETA);
    free_mparam(b, WFIT_M_MPS_BW_CONTENTION);
}

/* h100-coloc (calib/coloc, this project's H100 measurement; data/h100-coloc.csv): throughput of
 * one process of each PyTorch workload alone (with its NVML utilisation), time-sliced with k
 * identical processes, as k MPS clients, alone under a 25 / 50 % MPS thread cap, and beside
 * another workload under time-slicing and MPS. One profile per workload, a unit = one
 * iteration. Every loop launches its kernels asynchronously and synchronises once per
 * iteration (calib/coloc/coloc.py), so host_overlap = 1: t = max(H, G), except for the CPU time
 * a loop spends before its first launch (column serial_host_s, from the workload's definition:
 * host_loop's 4 ms of CPU work), which follows the previous iteration's synchronisation and so
 * cannot overlap its own GPU work: o = 1 - serial_host_s / H. Free per workload: H, C
 * (tensor class; fp32 for the memory stream), M and P. The solo time and utilisation pin H and
 * G = C/min(s, P) + M/BW(s). How G splits into compute, memory and parallelism: where the table
 * has the solo run's measurements (calib/coloc/table.py: kernel census and NVML GPM), P, M and C
 * start at model/wmeas.h's split of them (the one `fit-workload` uses for an observation's
 * sm_activity, dram_util and kernel_busy): P at the SMs with a resident warp while a kernel runs,
 * M at the bytes GPM's DRAM utilisation gives, C at what the GPU time leaves, with priors of
 * WMEAS_PRIOR_REL_SD (log sd) on P and M; the
 * profile's kernels_per_iter is the census count (MPS kernel queueing, model/share.h). The
 * utilisation fitted stays NVML's: with the census' kernel-busy fraction instead, the
 * time-sliced rows' error rose from 4.6 to 8.4 % (NVML's counter also covers copies and the
 * launch gaps inside a busy sample). Without those columns: weak priors (P at the GPU's SM
 * count, M at a class share of G, below), reported NOT PINNED. Figures are labelled WORKLOAD/KIND[:WITH], and validate prints the error per KIND. The
 * scenario's `calibration:` (the H100 calibration of calib/results) gives the bandwidth-vs-SMs
 * curve and the time-slice efficiency (kernel-8ms class: the measured back-to-back eta of the
 * nearest kernel length); nothing of the time-sliced or MPS rows is fitted, also when a 2-way
 * time-sliced row is (h100-coloc-ts2: it then moves only the workload's own H, C, M, P). */
static void build_coloc(builder *b, const csv_table *t)
{
    int c_w = csv_col(t, "workload"), c_k = csv_col(t, "kind"), c_with = csv_col(t, "with"),
        c_r = csv_col(t, "rate_per_s"), c_u = csv_col(t, "gpu_util"), c_f = csv_col(t, "figure");
    if (c_w < 0 || c_k < 0 || c_with < 0 || c_r < 0 || c_u < 0 || c_f < 0) {
        snprintf(b->err, sizeof b->err,
                 "missing a column (figure, workload, kind, with, rate_per_s, gpu_util)");
        return;
    }
    const char *names[WFIT_MAX_PROFILES];
    double solo_sd[WFIT_MAX_PROFILES]; /* rel_sd of each workload's solo row (0 = not stated) */
    double solo_util[WFIT_MAX_PROFILES]; /* the utilisation each solo row is fitted with */
    int c_sd = csv_col(t, "rel_sd");    /* optional: the measured noise of a row */
    /* optional measurements of the solo rows (calib/coloc/table.py): kernel-busy fraction and
     * kernels per iteration (torch.profiler census), GPM SM activity and DRAM utilisation */
    int c_busy = csv_col(t, "busy_frac"), c_kern = csv_col(t, "kernels");
    int c_sm = csv_col(t, "sm_active"), c_dram = csv_col(t, "dram_util");
    /* optional: CPU seconds per iteration before the first kernel launch (workload definition) */
    int c_ser = csv_col(t, "serial_host_s");
    int n_prof = 0;
    int ts8 = phys_ts_class_index(b->m, "kernel-8ms");
    double sms = b->gpu->sms_total;
    /* profiles from the solo rows */
    for (int r = 0; r < t->n_rows; r++) {
        if (strcmp(t->rows[r][c_k], "solo") != 0) {
            continue;
        }
        double rate, util;
        if (!cell_double(t->rows[r][c_r], &rate) || !cell_double(t->rows[r][c_u], &util) ||
            !(rate > 0) || !(util > 0 && util <= 1)) {
            snprintf(b->err, sizeof b->err, "row %d: a solo row needs rate_per_s and gpu_util",
                     r + 1);
            return;
        }
        if (n_prof == WFIT_MAX_PROFILES) {
            snprintf(b->err, sizeof b->err, "more than %d workloads", WFIT_MAX_PROFILES);
            return;
        }
        /* prior share of G that is memory time, by what the workload is (calib/coloc/coloc.py):
         * the fp32 stream does 8 axpy passes over 256 MiB (12 bytes per 2 flops, far below the
         * H100's machine balance): 0.95; transformers 0.58 and CNNs / the MLP 0.3, the
         * transformer-training and cnn-training classes of workloads/priors.yaml */
        const char *wn = t->rows[r][c_w];
        bool stream = strstr(wn, "stream") != NULL;
        double mem_share = stream ? 0.95 : !strncmp(wn, "tfm", 3) ? 0.58 : 0.3;
        wl_class cls = stream ? WL_CLASS_FP32 : WL_CLASS_TENSOR;
        wl_profile *p = &b->spec.profiles[n_prof];
        double busy, kern, sm_act, dram;
        bool census = c_busy >= 0 && cell_double(t->rows[r][c_busy], &busy) && busy > 0 &&
                      busy <= 1 && c_kern >= 0 && cell_double(t->rows[r][c_kern], &kern) &&
                      kern > 0;
        bool gpm = census && c_sm >= 0 && cell_double(t->rows[r][c_sm], &sm_act) && sm_act > 0 &&
                   c_dram >= 0 && cell_double(t->rows[r][c_dram], &dram) && dram > 0;
        double it = 1.0 / rate, g = util * it;
        snprintf(b->names[n_prof], sizeof b->names[n_prof], "%s", t->rows[r][c_w]);
        double serial, overlap = 1.0;
        if (c_ser >= 0 && cell_double(t->rows[r][c_ser], &serial) && serial > 0) {
            /* that CPU time follows the previous iteration's synchronisation: it cannot overlap
             * the loop's own GPU work, so o = 1 - serial / H, with H the solo iteration time
             * (host-bound: the only loop with such CPU work, host_loop, is) */
            overlap = fmax(0.0, 1.0 - serial / it);
        }
        *p = (wl_profile){.name = b->names[n_prof],
                          .host_s_fixed = wmeas_host_s(it, util, overlap),
                          .host_overlap = overlap,
                          .max_sms_fixed = sms, .ts_class = ts8 > 0 ? ts8 : 0,
                          .kernels_per_iter = census ? kern : 0};
        int gs = 1;
        int sl = speed_partition_mem_slices(&(partition_cfg){.gpu = b->gpu}, &gs);
        double bw = speed_bandwidth(b->gpu, sms, sl, gs, b->m);
        p->compute_sm_s_fixed[cls] = (1.0 - mem_share) * g * sms;
        p->mem_traffic_bytes_fixed = mem_share * g * bw;
        double sd_p = 1.0, sd_m = 1.0;
        const char *src = "h100-coloc: scale of the solo row (weak)";
        wmeas_split ms;
        if (gpm && wmeas_split_solo(b->gpu, b->m,
                                    &(wmeas_solo){.iter_s = it, .gpu_util = util,
                                                  .kernel_busy = busy, .sm_activity = sm_act,
                                                  .dram_util = dram},
                                    &ms) == 0) {
            /* measured: the split of model/wmeas.h, the one fit-workload uses */
            p->max_sms_fixed = ms.max_sms;
            p->mem_traffic_bytes_fixed = ms.mem_traffic_bytes;
            p->compute_sm_s_fixed[cls] = ms.compute_sm_s;
            sd_p = sd_m = WMEAS_PRIOR_REL_SD;
            src = "h100-coloc: " WMEAS_SOURCE;
        }
        names[n_prof] = t->rows[r][c_w];
        solo_util[n_prof] = util;
        solo_sd[n_prof] = 0;
        if (c_sd >= 0 && !cell_double(t->rows[r][c_sd], &solo_sd[n_prof])) {
            solo_sd[n_prof] = 0;
        }
        const wl_param fr[] = {WL_P_HOST_S_FIXED, WL_P_COMPUTE_FIXED, WL_P_MEM_TRAFFIC_FIXED,
                               WL_P_MAX_SMS_FIXED};
        for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++) {
            wfit_free *w = &b->spec.free[b->spec.n_free++];
            double v = wl_param_get(p, fr[i]);
            double sd = fr[i] == WL_P_HOST_S_FIXED ? 2.0
                        : fr[i] == WL_P_COMPUTE_FIXED ? 1.0
                        : fr[i] == WL_P_MAX_SMS_FIXED ? sd_p : sd_m;
            *w = (wfit_free){.profile = n_prof, .which = (int)fr[i], .has_prior = true,
                             .prior = {v, sd, sd < 1.0 && fr[i] != WL_P_COMPUTE_FIXED
                                                  ? src
                                                  : "h100-coloc: scale of the solo row (weak)"}};
        }
        n_prof++;
    }
    b->spec.n_profiles = n_prof;
    b->by_kind = true;
    for (int r = 0; r < t->n_rows; r++) {
        int pi = -1, wi = -1;
        for (int i = 0; i < n_prof; i++) {
            pi = !strcmp(names[i], t->rows[r][c_w]) ? i : pi;
            wi = !strcmp(names[i], t->rows[r][c_with]) ? i : wi;
        }
        double rate;
        const char *kind = t->rows[r][c_k];
        if (pi < 0 || !cell_double(t->rows[r][c_r], &rate) || !(rate > 0)) {
            snprintf(b->err, sizeof b->err, "row %d: unknown workload or bad rate_per_s", r + 1);
            return;
        }
        fig_spec *f = add_fig(b, t->rows[r][c_f], rate, "it/s");
        if (!f) {
            return;
        }
        f->profile = pi;
        f->is_rate = true;
        f->work = 1.0;
        /* noise of the row: its own sub-window spread and, for a predicted row, the spread of
         * the solo run its prediction is built from (independent, so in quadrature) */
        double sd = 0;
        if (c_sd >= 0 && !cell_double(t->rows[r][c_sd], &sd)) {
            sd = 0;
        }
        bool solo = !strcmp(kind, "solo");
        f->f.noise_pct = 100.0 * sqrt(sd * sd + (solo ? 0.0 : solo_sd[pi] * solo_sd[pi]));
        int k = 1;
        if (solo) {
            f->util = solo_util[pi];
        } else if (sscanf(kind, "ts%d", &k) == 1 || sscanf(kind, "mps%d", &k) == 1) {
            f->cfg.sharing = kind[0] == 't' ? SHARE_TIMESLICE : SHARE_MPS;
            f->cfg.peers = k;
        } else if (sscanf(kind, "cap%d", &k) == 1) {
            f->cfg.sharing = SHARE_MPS;
            f->cfg.mps_percent = k;
        } else if (!strncmp(kind, "pair-", 5) && wi >= 0) {
            f->cfg.sharing = !strcmp(kind, "pair-ts") ? SHARE_TIMESLICE : SHARE_MPS;
            f->with = wi;
        } else {
            snprintf(b->err, sizeof b->err, "row %d: unknown kind '%s'", r + 1, kind);
            return;
        }
    }
}

/* Clients of each kind in an MPS run of a calibration. */
static void mps_counts(const cal_mps_run *g, int *n_c, int *n_m)
{
    *n_c = *n_m = 0;
    for (int i = 0; i < g->n; i++) {
        *n_m += g->c[i].is_memory;
        *n_c += !g->c[i].is_memory;
    }
}

/* Mean wall time and kernel count of the clients of kind is_memory in every MPS run of d with
 * thread percentage pct and n_c / n_m clients (repetitions pooled); 0 when there is none. */
static double mps_mean_wall(const cal_data *d, int pct, int n_c, int n_m, bool is_memory,
                            double *kernels)
{
    double sum = 0, sum_k = 0;
    int n = 0;
    for (int g = 0; g < d->n_mps; g++) {
        int c, m;
        mps_counts(&d->mps[g], &c, &m);
        if (d->mps[g].pct != pct || c != n_c || m != n_m) {
            continue;
        }
        for (int i = 0; i < d->mps[g].n; i++) {
            if (d->mps[g].c[i].is_memory == is_memory) {
                sum += d->mps[g].c[i].wall_s;
                sum_k += (double)d->mps[g].c[i].kernels;
                n++;
            }
        }
    }
    if (kernels) {
        *kernels = n > 0 ? sum_k / n : 0;
    }
    return n > 0 ? sum / n : 0;
}

/* calib-h100-mps: the MPS runs of this project's node calibrations (calib/mps.cu through
 * calib/run-all.sh; the scenario's calib_runs, read by experiments/calib_json.h). Each recording
 * has two kinds of client, each launching about 200 kernels of ~1 ms (alone) back to back with a
 * grid of 8 blocks per SM of the whole GPU, so a client fills every SM it is given, in whole
 * waves: a compute-bound one (fp32 FMA chains) and a memory-bound one (float4 streaming
 * passes). One profile per recording and kind, a unit = the client's whole run: the compute
 * client is C fp32 SM-seconds on up to all the GPU's SMs, the memory client M bytes and no
 * compute (its time on s SMs is M over the bandwidth-vs-SMs curve of the scenario's
 * calibration), both without host time and with the kernels they launched (kernels_per_iter:
 * MPS kernel queueing, model/share.h). Free: C and M, fitted on the recording's uncapped solo
 * runs, as `slicesim fit` takes them (model/calfit.h); every other run is predicted by the
 * sharing physics: k identical clients (mpsK), one client or k identical ones under a thread
 * cap of P % (capP, capP-mpsK), a compute and a memory client side by side (pair-mps,
 * capP-pair-mps; other mixes mix-cNmM). A figure is the mean wall time of the clients of one
 * kind in the runs of one thread percentage and mix (repetitions pooled), labelled
 * runR-KIND/RUN[:WITH], R = the recording's place in calib_runs. */
static void build_calib_mps(builder *b, const csv_table *t)
{
    (void)t;
    double sms = b->gpu->sms_total;
    int gs = 1;
    int sl = speed_partition_mem_slices(&(partition_cfg){.gpu = b->gpu}, &gs);
    double bw = speed_bandwidth(b->gpu, sms, sl, gs, b->m);
    b->by_kind = true;
    b->spec.n_profiles = 2 * b->n_runs;
    for (int ri = 0; ri < b->n_runs; ri++) {
        const cal_data *d = &b->runs[ri];
        int pc = 2 * ri, pm = pc + 1;
        double kc = 0, km = 0;
        double solo_c = mps_mean_wall(d, 100, 1, 0, false, &kc);
        double solo_m = mps_mean_wall(d, 100, 0, 1, true, &km);
        if (!(solo_c > 0) || !(solo_m > 0)) {
            snprintf(b->err, sizeof b->err,
                     "calib_runs[%d]: the fit needs an uncapped compute and an uncapped memory "
                     "client alone (mps mixes c and m at 100 %%)", ri);
            return;
        }
        snprintf(b->names[pc], sizeof b->names[pc], "run%d-compute", ri + 1);
        snprintf(b->names[pm], sizeof b->names[pm], "run%d-memory", ri + 1);
        wl_profile *p = &b->spec.profiles[pc];
        *p = (wl_profile){.name = b->names[pc], .max_sms_fixed = sms, .kernels_per_iter = kc};
        p->compute_sm_s_fixed[WL_CLASS_FP32] = solo_c * sms;
        p = &b->spec.profiles[pm];
        *p = (wl_profile){.name = b->names[pm], .max_sms_fixed = sms, .kernels_per_iter = km,
                          .mem_traffic_bytes_fixed = solo_m * bw};
        free_param(b, pc, WL_P_COMPUTE_FIXED);
        free_param(b, pm, WL_P_MEM_TRAFFIC_FIXED);
        for (int g = 0; g < d->n_mps; g++) {
            int n_c, n_m, pct = d->mps[g].pct;
            mps_counts(&d->mps[g], &n_c, &n_m);
            bool first = true; /* repetitions of a run are pooled at its first */
            for (int h = 0; h < g; h++) {
                int c, m;
                mps_counts(&d->mps[h], &c, &m);
                first &= !(d->mps[h].pct == pct && c == n_c && m == n_m);
            }
            for (int mem = 0; first && mem < 2; mem++) {
                int own = mem ? n_m : n_c, other = mem ? n_c : n_m;
                if (own == 0) {
                    continue;
                }
                if (other > PART_MAX_WITH) {
                    snprintf(b->err, sizeof b->err,
                             "calib_runs[%d]: mps run with %d clients of the other kind; at "
                             "most %d", ri, other, PART_MAX_WITH);
                    return;
                }
                char cap[16] = "", run[64];
                if (pct < 100) {
                    snprintf(cap, sizeof cap, "cap%d%s", pct, own + other > 1 ? "-" : "");
                }
                if (other == 0 && own == 1) {
                    snprintf(run, sizeof run, "%s", pct < 100 ? cap : "solo");
                } else if (other == 0) {
                    snprintf(run, sizeof run, "%smps%d", cap, own);
                } else if (n_c == 1 && n_m == 1) {
                    snprintf(run, sizeof run, "%spair-mps:run%d-%s", cap, ri + 1,
                             mem ? "compute" : "memory");
                } else {
                    snprintf(run, sizeof run, "%smix-c%dm%d", cap, n_c, n_m);
                }
                char label[128]; /* at most 40 bytes for up to WFIT_MAX_PROFILES / 2 runs */
                snprintf(label, sizeof label, "run%d-%s/%s", ri + 1, mem ? "memory" : "compute",
                         run);
                fig_spec *f = add_fig(b, label, mps_mean_wall(d, pct, n_c, n_m, mem, NULL), "s");
                if (!f) {
                    return;
                }
                f->profile = mem ? pm : pc;
                f->work = 1.0;
                f->cfg.sharing = own + other > 1 || pct < 100 ? SHARE_MPS : SHARE_EXCLUSIVE;
                f->cfg.mps_percent = pct < 100 ? pct : 0;
                f->cfg.peers = own;
                if (other > 0) {
                    f->with = mem ? pc : pm;
                    f->with_n = other;
                }
            }
        }
    }
}

/* Mean makespan of the runs of k processes in t (0 when t has none). */
static double ts_makespan(const cal_ts_length *t, int k)
{
    for (int j = 0; j < t->n_k; j++) {
        if (t->k[j] == k && t->n_rep[j] > 0) {
            double sum = 0;
            for (int r = 0; r < t->n_rep[j]; r++) {
                sum += t->makespan_s[j][r];
            }
            return sum / t->n_rep[j];
        }
    }
    return 0;
}

/* Time-slice class of the physics for kernels of kernel_ms: the class stating the nearest
 * kernel length on a log scale (the one a calibration sets from its measured eta), else 0. */
static int ts_class_for(const phys_params *m, double kernel_ms)
{
    int best = 0;
    double best_d = HUGE_VAL;
    for (int i = 0; i < m->n_ts; i++) {
        double d = m->ts[i].kernel_ms > 0 ? fabs(log(m->ts[i].kernel_ms / kernel_ms)) : HUGE_VAL;
        if (d < best_d) {
            best = i;
            best_d = d;
        }
    }
    return best;
}

/* calib-h100-timeslice(-run2): the time-slice runs of a node calibration (calib/timeslice.cu
 * through calib/run-all.sh; the scenario's calib_runs, one recording per table: two profiles per
 * kernel length). k = 1, 2, 4, 8 processes each run N fp32 FMA kernels of ~0.1, 1 or 10 ms
 * (grids for the whole GPU), back to back or each followed by a host sleep as long as the kernel
 * (it synchronises first, so host and GPU alternate: host_overlap 0). A unit is one kernel, a
 * figure the makespan of the k processes (mean of the repetitions) = N x the unit time. Per
 * kernel length: the back-to-back profile, C fp32 SM-seconds per kernel on up to all SMs, free C
 * fitted on the solo run (`solo`); the profile with gaps, the same C (the solo back-to-back time,
 * as calfit_ts_gap_check takes it) and the host time per kernel H, free H fitted on its solo run
 * (`gap-solo`). Predicted: k >= 2 processes time-sliced (`tsK`, `gap-tsK`) by the exact MVA of
 * model/share.h with eta(k) of the physics class nearest to the kernel length, which the
 * scenario's calibration sets from its measured back-to-back eta (model/calapply.h): rows that
 * calibration was measured on must be excluded by the scenario. Labels LEN/KIND (LENms: the
 * measured solo kernel length to one digit), runR-LEN/KIND with several recordings. */
static void build_calib_ts(builder *b, const csv_table *t)
{
    (void)t;
    double sms = b->gpu->sms_total;
    b->by_kind = true;
    for (int ri = 0; ri < b->n_runs; ri++) {
        const cal_data *d = &b->runs[ri];
        if (d->n_ts == 0) {
            snprintf(b->err, sizeof b->err,
                     "calib_runs[%d]: the recording has no timeslice runs to replay", ri);
            return;
        }
        for (int li = 0; li < d->n_ts; li++) {
            const cal_ts_length *bb = &d->ts[li], *gp = NULL;
            if (bb->gap_ms > 0) {
                continue;
            }
            for (int j = 0; j < d->n_ts; j++) {
                gp = d->ts[j].gap_ms > 0 && d->ts[j].kernel_ms == bb->kernel_ms ? &d->ts[j] : gp;
            }
            double t1 = ts_makespan(bb, 1), t1g = gp ? ts_makespan(gp, 1) : 0;
            if (!(t1 > 0) || (gp && !(t1g > 0))) {
                snprintf(b->err, sizeof b->err,
                         "calib_runs[%d]: timeslice kernel length %g ms has no run of one process",
                         ri, bb->kernel_ms);
                return;
            }
            if (b->spec.n_profiles + (gp ? 2 : 1) > WFIT_MAX_PROFILES) {
                snprintf(b->err, sizeof b->err,
                         "calib_runs: more than %d kernel lengths and gap modes in all; expected "
                         "fewer recordings per table", WFIT_MAX_PROFILES);
                return;
            }
            char wname[64]; /* the figures' WORKLOAD part */
            if (b->n_runs > 1) {
                snprintf(wname, sizeof wname, "run%d-", ri + 1);
            } else {
                wname[0] = '\0';
            }
            snprintf(wname + strlen(wname), sizeof wname - strlen(wname),
                     bb->kernel_ms < 1 ? "%.1gms" : "%.0fms", bb->kernel_ms);
            for (int gap = 0; gap < (gp ? 2 : 1); gap++) {
                const cal_ts_length *s = gap ? gp : bb;
                int pi = b->spec.n_profiles++;
                char *name = b->names[pi];
                snprintf(name, sizeof b->names[pi], "%.27s%s", wname, gap ? "-gap" : "");
                wl_profile *p = &b->spec.profiles[pi];
                *p = (wl_profile){.name = name, .max_sms_fixed = sms,
                                  .ts_class = ts_class_for(b->m, bb->kernel_ms),
                                  .host_s_fixed = gap ? fmax(1e-7, (t1g - t1) / s->kernels) : 0};
                p->compute_sm_s_fixed[WL_CLASS_FP32] = t1 / (double)bb->kernels * sms;
                free_param(b, pi, gap ? WL_P_HOST_S_FIXED : WL_P_COMPUTE_FIXED);
                for (int j = 0; j < s->n_k; j++) {
                    int k = s->k[j];
                    char label[128];
                    snprintf(label, sizeof label, "%s/%s%s", wname, gap ? "gap-" : "",
                             k == 1 ? "solo" : "ts");
                    if (k > 1) {
                        snprintf(label + strlen(label), sizeof label - strlen(label), "%d", k);
                    }
                    fig_spec *f = add_fig(b, label, ts_makespan(s, k), "s");
                    if (!f) {
                        return;
                    }
                    f->profile = pi;
                    f->work = (double)s->kernels;
                    f->cfg.sharing = k > 1 ? SHARE_TIMESLICE : SHARE_EXCLUSIVE;
                    f->cfg.peers = k;
                }
            }
        }
    }
}

typedef void build_fn(builder *b, const csv_table *t);

static const struct {
    const char *table;
    build_fn *fn;
} builders[] = {
    {"cern-simpletrack", build_simpletrack},
    {"chep-timeslicing", build_timeslicing},
    {"cern-mig-flops", build_flops},
    {"cern-finetune", build_finetune},
    {"migprofiler-resnet50-train", build_batch_latency},
    {"migprofiler-vit-infer", build_batch_latency},
    {"migprofiler-resnet50-infer", build_batch_latency},
    {"nos-yolos-sharing", build_sharing},
    {"h100-coloc", build_coloc},
    {"h100-coloc-ts2", build_coloc},
    {"calib-h100-mps", build_calib_mps},
    {"calib-h100-timeslice", build_calib_ts},
    {"calib-h100-timeslice-run2", build_calib_ts},
};

/* ---- all-reduce sweeps ---- */

/* The sweep's ring as model/comm.yaml and the catalog see it: `ranks` whole GPUs of the table's
 * type, gpus_per_node of them per node (one node when the scenario does not say), the nodes
 * joined by the scenario's interconnect (model/comm.yaml's default network when it names none),
 * placed and ordered as model/ddp.h places a job's workers. Returns 0, or SIM_EINPUT reported
 * to d. */
static int sweep_ring(const val_scenario *sc, const gpu_type *g, const comm_params *cp, diag *d,
                      comm_ring *ring)
{
    ddp_job job;
    memset(&job, 0, sizeof job);
    job.gpu = g;
    job.workers = sc->ranks;
    job.per_gpu = 1;
    job.gpus_per_node = sc->gpus_per_node > 0 ? sc->gpus_per_node : sc->ranks;
    int net = comm_load_net(cp, sc->interconnect, sc->interconnect_at, "interconnect", d);
    if (net < 0) {
        return SIM_EINPUT;
    }
    job.nic_bytes_per_s = cp->nets[net].line_bytes_per_s;
    job.nics = cp->nets[net].nics;
    char why[256];
    if (ddp_shape(&job, why, sizeof why) != 0 || ddp_ring(&job, cp, ring, why, sizeof why) != 0) {
        diag_error(d, sc->table_at, "ranks", "%s; expected a ring of whole GPUs, got %d ranks",
                   why, sc->ranks);
        return SIM_EINPUT;
    }
    return 0;
}

/* Error statistics of a table's predicted figures (neither fitted nor excluded). */
static void table_errors(val_table *t)
{
    double sum = 0;
    t->n_fitted = t->n_predicted = 0;
    t->max_pct = 0;
    for (int k = 0; k < t->n_figures; k++) {
        const val_figure *f = &t->figures[k];
        if (f->excluded) {
            continue;
        }
        if (f->fitted) {
            t->n_fitted++;
            continue;
        }
        double e = fabs(f->predicted / f->published - 1) * 100;
        e = isfinite(e) ? e : 100;
        t->n_predicted++;
        sum += e;
        t->max_pct = fmax(t->max_pct, e);
    }
    t->mape_pct = t->n_predicted ? sum / t->n_predicted : 0;
}

/* An NCCL all-reduce sweep (columns bytes, algbw_gb_s), two ways.
 * Fitted: the ring alpha-beta model of model/comm.h, t = 2(n-1) alpha + 2(n-1)/n S / beta,
 * fitted per protocol (LL up to ll_max_bytes, where the sweep shows NCCL's tuner switching;
 * Simple above) on the scenario's fitted rows with the calibration fit (model/calfit.h: weighted
 * least squares in relative error, alpha and beta positive; a parameter the rows cannot pin is
 * held at the ring's model/comm.yaml value), every row predicted as algbw = S / t.
 * From data (out->from_data, table NAME-from-data): nothing fitted; every row predicted by
 * model/comm.h on the ring the catalog and model/comm.yaml make (sweep_ring: link line rates and
 * efficiencies, alpha and LL switch point per link class, ring or tree as the tuner would pick),
 * exactly as a run costs a data-parallel job's all-reduce. Rows that model/comm.yaml's own
 * numbers were computed from are excluded there (from_data_exclude, with the reason).
 * Rows below min_bytes are shown but excluded in both. */
static int run_comm_table(const val_scenario *sc, const gpu_type *g, const csv_table *t,
                          const char *csv_path, diag *d, val_table *out)
{
    int cb = csv_col(t, "bytes"), ca = csv_col(t, "algbw_gb_s");
    if (cb < 0 || ca < 0) {
        diag_error(d, (src_loc){csv_path, 0, 0}, sc->table,
                   "an all-reduce table needs the columns bytes and algbw_gb_s");
        return SIM_EINPUT;
    }
    comm_params cp;
    comm_ring ring;
    if (comm_load_default(d, &cp) != 0 || sweep_ring(sc, g, &cp, d, &ring) != 0) {
        return SIM_EINPUT;
    }
    double rate = comm_ring_alone_rate(&ring);
    val_table *fd = xcalloc(1, sizeof *fd, "validation table");
    out->from_data = fd;
    snprintf(fd->name, sizeof fd->name, "%.37s-from-data", sc->table);
    fd->target_mape_pct = sc->target;
    out->figures = xcalloc((size_t)t->n_rows + 1, sizeof *out->figures, "validation figures");
    fd->figures = xcalloc((size_t)t->n_rows + 1, sizeof *fd->figures, "validation figures");
    double bytes[256];
    int n = 0;
    for (int r = 0; r < t->n_rows && n < 256; r++) {
        double b, a;
        if (!cell_double(t->rows[r][cb], &b) || !cell_double(t->rows[r][ca], &a) || !(a > 0) ||
            !(b > 0)) {
            diag_error(d, (src_loc){csv_path, 0, 0}, sc->table,
                       "row %d: bytes and algbw_gb_s must be positive numbers", r + 1);
            comm_ring_fini(&ring);
            return SIM_EINPUT;
        }
        val_figure *f = &out->figures[n], *fp = &fd->figures[n];
        snprintf(f->label, sizeof f->label, "%.0f/algbw", b);
        snprintf(f->unit, sizeof f->unit, "GB/s");
        f->published = a;
        *fp = *f;
        for (size_t i = 0; i < sc->n_fit; i++) {
            f->fitted |= !strcmp(f->label, sc->fit[i]);
        }
        f->excluded = b < sc->min_bytes && !f->fitted;
        fp->excluded = b < sc->min_bytes;
        fp->predicted = b / comm_ring_allreduce_time(&cp, &ring, b, rate) / 1e9;
        bytes[n++] = b;
    }
    out->n_figures = fd->n_figures = n;
    for (size_t i = 0; i < sc->n_fit; i++) {
        bool found = false;
        for (int k = 0; k < n; k++) {
            found |= !strcmp(out->figures[k].label, sc->fit[i]);
        }
        if (!found) {
            diag_error(d, sc->fit_at, "fit",
                       "no such figure in the table; expected BYTES/algbw, got '%s'", sc->fit[i]);
        }
    }
    for (size_t i = 0; i < sc->n_fd_exclude; i++) {
        const val_exclude *x = &sc->fd_exclude[i];
        bool found = false;
        for (int k = 0; k < n; k++) {
            val_figure *fp = &fd->figures[k];
            if (!strcmp(fp->label, x->figure)) {
                fp->excluded = found = true;
                snprintf(fp->reason, sizeof fp->reason, "%s", x->reason);
            }
        }
        if (!found) {
            char path[64];
            snprintf(path, sizeof path, "from_data_exclude[%zu].figure", i);
            diag_error(d, x->figure_at, path,
                       "no such figure in the table; expected BYTES/algbw, got '%s'", x->figure);
        }
    }
    if (diag_error_count(d) > 0) {
        comm_ring_fini(&ring);
        return SIM_EINPUT;
    }
    cal_ar_fit fit[COMM_PROTO_COUNT];
    for (int pr = 0; pr < COMM_PROTO_COUNT; pr++) {
        cal_series s;
        memset(&s, 0, sizeof s);
        for (int k = 0; k < n && s.n < CAL_MAX_PTS; k++) {
            bool ll = bytes[k] <= sc->ll_max_bytes;
            if (out->figures[k].fitted && ll == (pr == COMM_PROTO_LL)) {
                s.pts[s.n].x = bytes[k];
                s.pts[s.n].median = bytes[k] / (out->figures[k].published * 1e9) * 1e3; /* ms */
                s.n++;
            }
        }
        /* held where the rows cannot pin them: the ring's own model/comm.yaml values */
        cal_ar_assume as = {ring.alpha_s[pr],
                            pr == COMM_PROTO_LL ? rate * cp.ll_bw_frac : rate};
        const char *proto = pr == COMM_PROTO_LL ? "ll" : "simple";
        if (calfit_allreduce(&s, sc->ranks, &as, &fit[pr]) != 0) {
            diag_error(d, (src_loc){csv_path, 0, 0}, sc->table,
                       "protocol %s: fit needs at least 3 fitted rows on its side of "
                       "ll_max_bytes, got %d", pr == COMM_PROTO_LL ? "LL" : "Simple", s.n);
            comm_ring_fini(&ring);
            return SIM_EINPUT;
        }
        const struct {
            const char *what;
            cal_param v;
            bool pinned;
        } ps[2] = {{"alpha_s", fit[pr].alpha_s, fit[pr].alpha_pinned},
                   {"busbw_bytes_per_s", fit[pr].beta_bytes_per_s, fit[pr].beta_pinned}};
        for (int i = 0; i < 2; i++) {
            wfit_param_result *pa = &out->fit.params[out->fit.n_params++];
            snprintf(pa->name, sizeof pa->name, "%s.%s", proto, ps[i].what);
            pa->value = ps[i].v.value;
            pa->std_err = ps[i].v.se;
            pa->pinned = ps[i].pinned;
            snprintf(pa->assumed, sizeof pa->assumed,
                     "this ring's model/comm.yaml value (these rows cannot pin it)");
        }
    }
    for (int k = 0; k < n; k++) {
        const cal_ar_fit *ft = &fit[bytes[k] <= sc->ll_max_bytes ? COMM_PROTO_LL : COMM_PROTO_SIMPLE];
        out->figures[k].predicted = bytes[k] / calfit_allreduce_eval(ft, bytes[k]) / 1e9;
    }
    comm_ring_fini(&ring);
    table_errors(out);
    table_errors(fd);
    if (sc->min_bytes > 0) {
        snprintf(out->excluded_reason, sizeof out->excluded_reason,
                 "messages below %.0f bytes are latency-bound rows outside the >= 1 MiB target",
                 sc->min_bytes);
        snprintf(fd->excluded_reason, sizeof fd->excluded_reason, "%s", out->excluded_reason);
    }
    return 0;
}

/* ---- running ---- */

static double fig_value(const fig_spec *f, double unit_time)
{
    return f->is_rate ? f->work / unit_time : f->work * unit_time;
}

/* f's lo..hi over the fit's family of profiles (members 1..: the refits along the parameters
 * the observations could not pin; each member moves its co-runner's profile too). */
static void family_range(const wfit_result *fit, fig_spec *f)
{
    f->f.lo = f->f.hi = f->f.predicted;
    for (int i = 1; i < fit->n_family; i++) {
        const wfit_member *mb = &fit->family[i];
        partition_cfg c = f->cfg;
        for (int w = 0; f->with >= 0 && w < c.n_with; w++) {
            c.with[w] = &mb->profiles[f->with];
        }
        speed_result r;
        predict_unit_estimate(&mb->profiles[f->profile], f->batch, &c, &mb->model, &r);
        if (r.outcome == SPEED_OK) {
            double v = fig_value(f, r.unit_time_s);
            f->f.lo = fmin(f->f.lo, v);
            f->f.hi = fmax(f->f.hi, v);
        }
    }
}

static void builder_free(builder *b)
{
    free(b->runs);
    free(b);
}

/* The path `rel`, relative to the directory of the scenario at scen_path, into buf. */
static void beside(const char *scen_path, const char *rel, char *buf, size_t n)
{
    const char *slash = strrchr(scen_path, '/');
    int dir_len = slash ? (int)(slash - scen_path) : 0;
    snprintf(buf, n, "%.*s%s%s", dir_len, scen_path, slash ? "/" : "", rel);
}

/* Load the scenario's calib_runs into *out (owned by the caller, also on failure), each a
 * recording of the scenario's GPU g. Returns 0 or SIM_EINPUT (reported to d). */
static int load_runs(const val_scenario *sc, const char *scen_path, const gpu_catalog *cat,
                     const gpu_type *g, diag *d, cal_data **out)
{
    *out = xcalloc(sc->n_calib_runs, sizeof **out, "calibration recordings");
    for (size_t i = 0; i < sc->n_calib_runs; i++) {
        char path[1024], field[48];
        beside(scen_path, sc->calib_runs[i], path, sizeof path);
        snprintf(field, sizeof field, "calib_runs[%zu]", i);
        cal_data *r = &(*out)[i];
        int rc = calib_json_load_file(path, r, d);
        if (rc == SIM_ENOENT || rc == SIM_EIO) {
            diag_error(d, sc->calib_runs_at, field,
                       "cannot read the recording; expected a calib/run-all.sh JSON, got '%s' (%s)",
                       path, sim_strerror(rc));
        }
        if (rc != 0) {
            return SIM_EINPUT;
        }
        const gpu_type *mg = calapply_match_gpu(cat, r->device, r->sms_total);
        if (!mg || strcmp(mg->name, g->name) != 0) {
            diag_error(d, sc->calib_runs_at, field,
                       "recorded on another GPU (%d SMs); expected %s, got '%s'", r->sms_total,
                       g->name, r->device);
            return SIM_EINPUT;
        }
    }
    return 0;
}

static int run_table(const val_scenario *sc, const char *scen_path, const char *shared_dir,
                        const gpu_catalog *cat, const phys_params *m, diag *d, val_table *out)
{
    snprintf(out->name, sizeof out->name, "%s", sc->table);
    out->target_mape_pct = sc->target;
    build_fn *fn = NULL;
    for (size_t i = 0; sc->ranks == 0 && i < sizeof builders / sizeof builders[0]; i++) {
        if (!strcmp(builders[i].table, sc->table)) {
            fn = builders[i].fn;
        }
    }
    if (!fn && sc->ranks == 0) {
        diag_error(d, sc->table_at, "table",
                   "no model mapping for this table; expected one of cern-simpletrack, "
                   "chep-timeslicing, cern-mig-flops, cern-finetune, migprofiler-*, "
                   "nos-yolos-sharing, h100-coloc, h100-coloc-ts2, calib-h100-mps, "
                   "calib-h100-timeslice, calib-h100-timeslice-run2, got '%s'", sc->table);
        return SIM_EINPUT;
    }
    const gpu_type *g = gpu_catalog_find(cat, sc->gpu);
    if (!g) {
        diag_error(d, sc->gpu_at, "gpu",
                   "unknown GPU; expected a catalog name, got '%s'", sc->gpu);
        return SIM_EINPUT;
    }
    if ((sc->csv != NULL) == (sc->n_calib_runs > 0)) {
        diag_error(d, sc->table_at, "csv",
                   "a table reads a CSV or calibration recordings; expected one of csv and "
                   "calib_runs, got %s", sc->csv ? "both" : "neither");
        return SIM_EINPUT;
    }
    cal_data *runs = NULL;
    if (sc->n_calib_runs > 0) {
        int rc = load_runs(sc, scen_path, cat, g, d, &runs);
        if (rc != 0) {
            free(runs);
            return rc;
        }
    }
    /* the seed tables live in the shared dir; the others ship in data/ beside the scenario */
    char csv_path[1024];
    csv_table t;
    memset(&t, 0, sizeof t);
    snprintf(csv_path, sizeof csv_path, "%s", scen_path);
    int rc = 0;
    if (sc->csv) {
        snprintf(csv_path, sizeof csv_path, "%s/%s", shared_dir, sc->csv);
        rc = csv_read(csv_path, &t);
    }
    if (rc == SIM_ENOENT) {
        char rel[600], local[1024];
        snprintf(rel, sizeof rel, "data/%s", sc->csv);
        beside(scen_path, rel, local, sizeof local);
        if (csv_read(local, &t) == 0) {
            snprintf(csv_path, sizeof csv_path, "%s", local);
            rc = 0;
        }
    }
    if (rc != 0) {
        snprintf(out->skipped, sizeof out->skipped, "%s not readable (%s): table skipped",
                 csv_path, sim_strerror(rc));
        return 0;
    }
    if (sc->ranks > 0) {
        free(runs);
        rc = run_comm_table(sc, g, &t, csv_path, d, out);
        csv_free(&t);
        return rc;
    }
    builder *b = xcalloc(1, sizeof *b, "validation builder");
    b->sc = sc;
    b->gpu = g;
    b->runs = runs;
    b->n_runs = (int)sc->n_calib_runs;
    if (sc->calibration) {
        char cal_path[1024], why[256];
        beside(scen_path, sc->calibration, cal_path, sizeof cal_path);
        cal_fit cf;
        rc = calmodel_load(cal_path, &cf, d);
        if (rc == 0 && calapply_gpu(g, &cf, m, &b->calibrated, why, sizeof why) != 0) {
            diag_error(d, (src_loc){scen_path, 0, 0}, "calibration", "%s", why);
            rc = SIM_EINPUT;
        }
        if (rc == SIM_ENOENT || rc == SIM_EIO) {
            diag_error(d, (src_loc){scen_path, 0, 0}, "calibration",
                       "cannot read the model file; expected a `slicesim fit` output, got '%s' (%s)",
                       cal_path, sim_strerror(rc));
            rc = SIM_EINPUT;
        }
        if (rc != 0) {
            builder_free(b);
            csv_free(&t);
            return rc;
        }
        b->gpu = &b->calibrated;
    }
    b->m = m;
    b->spec.model = *m;
    if (sc->base) {
        /* the base scenario's path is relative to this scenario's directory */
        char base_path[1024];
        beside(scen_path, sc->base, base_path, sizeof base_path);
        val_table base;
        rc = val_run_file(base_path, shared_dir, cat, m, d, &base);
        if (rc != 0 || base.skipped[0]) {
            snprintf(out->skipped, sizeof out->skipped, "base scenario %s: %s", base_path,
                     rc != 0 ? sim_strerror(rc) : "its table was skipped");
            val_table_fini(&base);
            builder_free(b);
            csv_free(&t);
            return rc;
        }
        b->spec.profiles[0] = base.fit.profiles[0];
        b->has_base = true;
        val_table_fini(&base);
    }
    fn(b, &t);
    csv_free(&t);
    if (b->err[0]) {
        diag_error(d, (src_loc){csv_path, 0, 0}, sc->table, "%s", b->err);
        builder_free(b);
        return SIM_EINPUT;
    }
    /* mark fitted and excluded figures */
    for (size_t i = 0; i < sc->n_fit; i++) {
        bool found = false;
        for (int k = 0; k < b->n; k++) {
            if (!strcmp(b->figs[k].f.label, sc->fit[i])) {
                b->figs[k].f.fitted = true;
                found = true;
            }
        }
        if (!found) {
            diag_error(d, sc->fit_at, "fit",
                       "no such figure in the table; expected ROW/COLUMN, got '%s'", sc->fit[i]);
        }
    }
    for (size_t i = 0; i < sc->n_exclude; i++) {
        bool found = false;
        for (int k = 0; k < b->n; k++) {
            if (!strcmp(b->figs[k].f.label, sc->exclude[i].figure)) {
                b->figs[k].f.excluded = true;
                snprintf(b->figs[k].f.reason, sizeof b->figs[k].f.reason, "%s",
                         sc->exclude[i].reason);
                b->figs[k].f.fitted = false;
                found = true;
            }
        }
        if (!found) {
            char path[64];
            snprintf(path, sizeof path, "exclude[%zu].figure", i);
            diag_error(d, sc->exclude[i].figure_at, path,
                       "no such figure in the table; expected ROW/COLUMN, got '%s'",
                       sc->exclude[i].figure);
        }
    }
    if (diag_error_count(d) > 0) {
        builder_free(b);
        return SIM_EINPUT;
    }
    /* fit on the fitted figures */
    wfit_obs *obs = xcalloc((size_t)b->n, sizeof *obs, "validation observations");
    int n_obs = 0;
    for (int k = 0; k < b->n; k++) {
        fig_spec *f = &b->figs[k];
        if (!f->f.fitted) {
            continue;
        }
        wfit_obs *o = &obs[n_obs++];
        o->profile = f->profile;
        o->cfg = f->cfg;
        o->batch = f->batch;
        o->gpu_util = f->util;
        o->unit_time_s = f->is_rate ? f->work / f->f.published : f->f.published / f->work;
    }
    wfit_fit(&b->spec, n_obs, obs, &out->fit);
    free(obs);
    /* predict every figure with the fitted profiles and model */
    out->figures = xcalloc((size_t)b->n, sizeof *out->figures, "validation figures");
    out->n_figures = b->n;
    double sum = 0;
    for (int k = 0; k < b->n; k++) {
        fig_spec *f = &b->figs[k];
        speed_result r;
        if (f->with >= 0) {
            /* the co-runner as fitted (the spec held its start values) */
            f->cfg.n_with = f->with_n;
            for (int w = 0; w < f->with_n; w++) {
                f->cfg.with[w] = &out->fit.profiles[f->with];
                f->cfg.with_batch[w] = 1;
            }
        }
        predict_unit_estimate(&out->fit.profiles[f->profile], f->batch, &f->cfg, &out->fit.model,
                              &r);
        f->f.predicted = r.outcome == SPEED_OK ? fig_value(f, r.unit_time_s) : nan("");
        family_range(&out->fit, f);
        out->figures[k] = f->f;
        if (f->f.excluded) {
            continue;
        }
        if (f->f.fitted) {
            out->n_fitted++;
            continue;
        }
        out->n_in_range += f->f.published >= f->f.lo && f->f.published <= f->f.hi;
        double e = fabs(f->f.predicted / f->f.published - 1) * 100;
        if (!isfinite(e)) {
            e = 100;
        }
        out->n_predicted++;
        sum += e;
        out->max_pct = fmax(out->max_pct, e);
    }
    out->mape_pct = out->n_predicted > 0 ? sum / out->n_predicted : 0;
    out->by_kind = b->by_kind;
    for (int i = 0; i < WFIT_MAX_PROFILES; i++) {
        /* names a builder made live in b, which goes now */
        for (int k = 0; k < WFIT_MAX_PROFILES; k++) {
            if (out->fit.profiles[i].name == b->names[k]) {
                out->fit.profiles[i].name = NULL;
            }
        }
    }
    builder_free(b);
    return 0;
}

int val_run_file(const char *scenario_path, const char *shared_dir, const gpu_catalog *cat,
                 const phys_params *m, diag *d, val_table *out)
{
    memset(out, 0, sizeof *out);
    arena *a = arena_create();
    yamlx_doc *doc = NULL;
    int rc = yamlx_load_file(scenario_path, a, d, &doc);
    if (rc != 0) {
        arena_destroy(a);
        return rc;
    }
    val_scenario sc;
    memset(&sc, 0, sizeof sc);
    cfg_walker w;
    cfg_walker_init(&w, doc, a, d, NULL);
    bool ok = cfg_walk_root(&w, scenario_fields, &sc);
    cfg_walker_fini(&w);
    yamlx_destroy(doc);
    if (!ok) {
        arena_destroy(a);
        return SIM_EINPUT;
    }
    rc = run_table(&sc, scenario_path, shared_dir, cat, m, d, out);
    arena_destroy(a);
    return rc;
}

void val_table_fini(val_table *t)
{
    if (t->from_data) {
        val_table_fini(t->from_data);
        free(t->from_data);
        t->from_data = NULL;
    }
    free(t->figures);
    t->figures = NULL;
    wfit_result_fini(&t->fit);
}
