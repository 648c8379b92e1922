/* experiments/validation_published.c - how each published table maps onto the model: one builder
 * per table (CERN simpletrack, CHEP time-slicing, CERN MIG FLOPS and fine-tuning, MIGProfiler,
 * nos YOLOS). See validation_int.h; each builder's comment says which profile shape it assumes
 * and why. No published figure is written here: they are all read from the CSVs. */
#include "experiments/validation_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/cfg.h"
#include "model/physics/predict.h"

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
static void val_build_particles(builder *b, const csv_table *t, bool timeslice)
{
    b->spec.n_profiles = 1;
    if (!b->has_base) {
        wl_profile *p = &b->spec.profiles[0];
        *p = (wl_profile){.name = "simpletrack", .host_s_fixed = 1e-7};
        p->compute_sm_s_fixed[WL_CLASS_FP32] = 1e-4;
    }
    for (int r = 0; r < t->n_rows; r++) {
        double particles;
        if (!val_cell_double(t->rows[r][0], &particles)) {
            val_row_error(b, t, r, "bad particle count");
            return;
        }
        for (int c = 1; c < t->n_cols; c++) {
            double sec;
            int k = 1;
            if (!val_cell_double(t->rows[r][c], &sec) ||
                (timeslice && !val_shared_peers(t->header[c], &k))) {
                continue;
            }
            char label[64];
            snprintf(label, sizeof label, "%s/%s", t->rows[r][0], t->header[c]);
            fig_spec *f = val_add_fig(b, label, sec, "s");
            if (!f) {
                return;
            }
            if (timeslice) {
                f->cfg.sharing = k > 1 ? SHARE_TIMESLICE : SHARE_EXCLUSIVE;
                f->cfg.peers = k;
            } else {
                f->cfg.mig = val_find_part(b, t->header[c]);
            }
            f->work = particles;
        }
    }
    if (!b->has_base) {
        val_free_param(b, 0, WL_P_HOST_S_FIXED);
        val_free_param(b, 0, WL_P_COMPUTE_FIXED);
    }
    if (timeslice) {
        val_free_mparam(b, WFIT_M_ETA);
    }
}

void val_build_simpletrack(builder *b, const csv_table *t)
{
    val_build_particles(b, t, false);
}

void val_build_timeslicing(builder *b, const csv_table *t)
{
    val_build_particles(b, t, true);
}

/* cern-mig-flops: dcgmproftester TFLOPS per format (row) and partition (column). One profile per
 * format: a unit is 1 TFLOP of pure compute in that format's class (no host, no memory term), so
 * TFLOPS = 1 / unit time. Free: each format's SM-seconds per TFLOP (its per-SM efficiency at the
 * reference clock), the per-SM power of each class and the power exponent: the power cap is what
 * makes tensor-core FLOPS scale far from SM-linearly (DESIGN.md §3). */
void val_build_flops(builder *b, const csv_table *t)
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
        val_free_param(b, pi, WL_P_COMPUTE_FIXED);
        val_free_mparam(b, formats[fi].power);
        for (int c = 1; c < t->n_cols; c++) {
            double tf;
            if (!val_cell_double(t->rows[r][c], &tf)) {
                continue;
            }
            char label[64];
            snprintf(label, sizeof label, "%s/%s", t->rows[r][0], t->header[c]);
            fig_spec *f = val_add_fig(b, label, tf, "TFLOPS");
            if (!f) {
                return;
            }
            f->profile = pi;
            f->cfg.mig = val_find_part(b, t->header[c]);
            f->work = 1.0;
            f->is_rate = true;
        }
    }
    val_free_mparam(b, WFIT_M_POWER_ALPHA);
}

/* cern-finetune: seconds to fine-tune on `dataset_size` samples; each comparison pair used its own
 * batch and data-loader workers. One profile per sample for the whole table (same model, same
 * script): host time per sample and per iteration, fp32 compute per sample and per iteration
 * (optimizer step, small-batch kernels), memory traffic per
 * sample and the parallelism per sample (P ∝ B) are free, and so is the roofline exponent p: this
 * table, with both the whole-GPU/7g pair (SMs change, bandwidth does not) and the 4g/2g pair (both
 * halve), is what separates compute from memory time. */
void val_build_finetune(builder *b, const csv_table *t)
{
    int c_cmp = val_csv_col(t, "comparison"), c_n = val_csv_col(t, "dataset_size");
    int c_part = val_csv_col(t, "partition"), c_b = val_csv_col(t, "batch"),
        c_s = val_csv_col(t, "seconds");
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
        if (!val_cell_double(t->rows[r][c_n], &n) || !val_cell_double(t->rows[r][c_b], &batch) ||
            !val_cell_double(t->rows[r][c_s], &sec)) {
            val_row_error(b, t, r, "bad number");
            return;
        }
        char label[64];
        snprintf(label, sizeof label, "%s/%s/%s", t->rows[r][c_cmp], t->rows[r][c_n],
                 t->rows[r][c_part]);
        fig_spec *f = val_add_fig(b, label, sec, "s");
        if (!f) {
            return;
        }
        f->cfg.mig = val_find_part(b, t->rows[r][c_part]);
        f->batch = batch;
        f->work = n;
    }
    val_free_param(b, 0, WL_P_HOST_S_FIXED);
    val_free_param(b, 0, WL_P_HOST_S_PER_SAMPLE);
    val_free_param(b, 0, WL_P_COMPUTE_FIXED);
    val_free_param(b, 0, WL_P_COMPUTE_PER_SAMPLE);
    val_free_param(b, 0, WL_P_MEM_TRAFFIC_PER_SAMPLE);
    val_free_param(b, 0, WL_P_MAX_SMS_PER_SAMPLE);
    val_free_mparam(b, WFIT_M_ROOFLINE_P);
}

/* MIGProfiler (published-tables.md 1.1a, 1.1b): latency per iteration (ms) of one model at
 * batch B on one MIG instance. Profile per iteration, affine in B: host time H, compute
 * C = c0 + c1 B in the scenario's class, parallelism P = p0 + p1 B (small batches cannot fill a
 * large instance: the 7g latency is flat from batch 1 to 8), memory traffic per sample. Free:
 * H, c0, c1, p0, p1, M per sample. The class matters through power: PyTorch 1.12 runs convolutions
 * in TF32 on tensor cores (cudnn.allow_tf32 defaults to true) but fp32 matmuls on CUDA cores
 * (matmul.allow_tf32 defaults to false from 1.12), so ResNet-50 is `tensor`, ViT `fp32`. */
void val_build_batch_latency(builder *b, const csv_table *t)
{
    int c_prof = val_csv_col(t, "profile"), c_b = val_csv_col(t, "batch"),
        c_l = val_csv_col(t, "latency_ms");
    int c_model = val_csv_col(t, "model");
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
        if (!val_cell_double(t->rows[r][c_b], &batch) || !val_cell_double(t->rows[r][c_l], &ms)) {
            val_row_error(b, t, r, "bad number");
            return;
        }
        char label[64];
        snprintf(label, sizeof label, "%s/bs%s", t->rows[r][c_prof], t->rows[r][c_b]);
        fig_spec *f = val_add_fig(b, label, ms, "ms");
        if (!f) {
            return;
        }
        f->cfg.mig = val_find_part(b, t->rows[r][c_prof]);
        f->batch = batch;
        f->work = 1000.0; /* one iteration, in ms */
    }
    val_free_param(b, 0, WL_P_HOST_S_FIXED);
    val_free_param(b, 0, WL_P_COMPUTE_FIXED);
    val_free_param(b, 0, WL_P_COMPUTE_PER_SAMPLE);
    val_free_param(b, 0, WL_P_MAX_SMS_FIXED);
    val_free_param(b, 0, WL_P_MAX_SMS_PER_SAMPLE);
    val_free_param(b, 0, WL_P_MEM_TRAFFIC_PER_SAMPLE);
}

/* nos YOLOS (published-tables.md 2.1): seconds per request of each of N pods, batch 1, under
 * time-slicing (N processes on the whole GPU), MPS (N clients, no thread cap) and MIG (one
 * 1g.10gb instance per pod, N instances busy). Checked against the sources of the run
 * (github nebuly-ai/nos at c580d9b, demos/gpu-sharing-comparison; nos 0.1.0 and the Nebuly
 * device-plugin chart 0.13.0, Makefile:57-74; the plugin fork nebuly-ai/k8s-device-plugin as of
 * that day, c802950):
 * - each pod loops model(**inputs) and reads nothing back (client/main.py:9-11, 23-25), so no
 *   call synchronises: Python launches while the GPU runs and, once CUDA's launch queue is full,
 *   each timed call lasts one GPU period. Hence host_overlap = 1 (t = max(H, G)) and no
 *   kernels_per_iter (not a round ending in a synchronisation, model/physics/speed.h).
 * - MPS: the fork's Allocate gives a client only CUDA_MPS_PINNED_DEVICE_MEM_LIMIT and the pipe
 *   directory (cmd/nvidia-device-plugin/server.go:307-321), the server starts with no default
 *   thread percentage (deployments/mps-server/entrypoint.sh:5-9), and nos adds one gpu-10gb slice
 *   per pending pod (nos pkg/gpu/slicing/gpu.go:158-220 at 0.1.0): N uncapped clients.
 * - MIG: nos applies a known A100 80GB geometry holding N 1g.10gb (pkg/gpu/mig/gpu.go:141-195,
 *   known_configs.go:91-140 at 0.1.0); its other instances stay idle.
 * - CPU: each pod is limited to 1.5 CPUs (manifests/base/deployment-client.yaml:33-34), 10.5 of
 *   the node's 24 vCPUs at 7 pods, and runs no CPU operator (inputs on the GPU, main.py:20-21).
 * - The value is avg(sum(rate(inference_time_seconds_sum[2m])) / sum(rate(..._count[2m])))
 *   over all pods (README.md:54-57, 138): seconds per request over every pod's requests, which
 *   for identical pods is each pod's time per request.
 * Profile per request: host time H (hidden below G, so no row pins it), compute C (fp32: torch
 * 1.13 keeps fp32 matmuls off tensor cores), parallelism P, memory traffic M. Free: H, C, M and
 * P, the time-slice efficiency η of the profile's class, and the MPS bandwidth contention. */
void val_build_sharing(builder *b, const csv_table *t)
{
    int c_mode = val_csv_col(t, "sharing"), c_n = val_csv_col(t, "pods"), c_s = val_csv_col(t, "seconds");
    if (c_mode < 0 || c_n < 0 || c_s < 0) {
        snprintf(b->err, sizeof b->err, "missing a column (sharing, pods, seconds)");
        return;
    }
    wl_class cls = b->sc->cls ? wl_class_from_name(b->sc->cls) : WL_CLASS_FP32;
    b->spec.n_profiles = 1;
    wl_profile *p = &b->spec.profiles[0];
    *p = (wl_profile){.name = "yolos-small", .host_s_fixed = 0.02, .host_overlap = 1,
                      .max_sms_fixed = 50, .mem_traffic_bytes_fixed = 1e9};
    p->compute_sm_s_fixed[cls] = 5.0;
    for (int r = 0; r < t->n_rows; r++) {
        double pods, sec;
        if (!val_cell_double(t->rows[r][c_n], &pods) || !val_cell_double(t->rows[r][c_s], &sec) ||
            pods < 1 || pods > 64) {
            val_row_error(b, t, r, "bad number");
            return;
        }
        const char *mode = t->rows[r][c_mode];
        char label[64];
        snprintf(label, sizeof label, "%s/%s", mode, t->rows[r][c_n]);
        fig_spec *f = val_add_fig(b, label, sec, "s");
        if (!f) {
            return;
        }
        int k = (int)pods;
        if (!strcmp(mode, "mig")) {
            f->cfg.mig = val_find_part(b, "1g.10gb");
            f->cfg.mig_busy = k;
        } else if (!strcmp(mode, "mps") || !strcmp(mode, "timeslice")) {
            f->cfg.sharing = k == 1 ? SHARE_EXCLUSIVE
                                    : !strcmp(mode, "mps") ? SHARE_MPS : SHARE_TIMESLICE;
            f->cfg.peers = k;
        } else {
            val_row_error(b, t, r, "unknown sharing '%s'", mode);
            return;
        }
        f->work = 1.0;
    }
    val_free_param(b, 0, WL_P_HOST_S_FIXED);
    val_free_param(b, 0, WL_P_COMPUTE_FIXED);
    val_free_param(b, 0, WL_P_MEM_TRAFFIC_FIXED);
    val_free_param(b, 0, WL_P_MAX_SMS_FIXED);
    val_free_mparam(b, WFIT_M_ETA);
    val_free_mparam(b, WFIT_M_MPS_BW_CONTENTION);
}
