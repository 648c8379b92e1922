/* model/fit/calapply.h - put a measured node (a `slicesim fit` model, model/fit/calfit.h) in place of a
 * catalog GPU type's defaults.
 *
 * What a calibration replaces, on the GPU type it was measured on and nowhere else:
 *  - peak_flops[f] of every measured format f (fp64, fp32, fp16, fp16_tensor, bf16_tensor):
 *    the fitted rate at the measured SM count, r S (1 - k S) x 1e12 FLOP/s. The speed model
 *    counts compute in SM-seconds (model/physics/speed.h), so these are the GPU's effective peaks for
 *    reports and comparisons; they do not rescale a profile's compute time.
 *  - the bandwidth curve (gpu_type.meas): the fitted bandwidth-vs-SMs curve of the `triad`
 *    kernel (the first kernel when there is no triad) replaces datasheet x bw_stream_eff and the
 *    physics' drive curve (bw_drive_sm_frac) in speed_bandwidth; a MIG partition gets its
 *    memory-slice share of the curve's whole-GPU value, capped by what its SMs drive.
 *  - η(k) of each physics time-slice class that states a kernel length (phys_ts_class.kernel_ms):
 *    the back-to-back (no host gap) measurement whose kernel length is nearest to it on a log
 *    scale; k between measured counts is interpolated linearly, k past the last measured count
 *    takes the last value. Classes without a kernel length keep their physics η: it was fitted
 *    to a workload (host phases, OpenCL kernels) that a plain FMA probe does not measure.
 *  - sms_total, when the catalog leaves it unsourced (0): the measured SM count.
 *  - the NVLink of a type that has one (nvlink_bytes_per_s > 0), from the all-reduce fit
 *    (gpu_type.meas.ar): per protocol (the fit per protocol when the model holds one, else its
 *    one alpha-beta for both) the latency of one all-reduce on the measured ranks, 2(n-1)
 *    alpha, and the bus bandwidth beta, with the LL/Simple switch point; and the same for each
 *    other ring size the model holds (`allreduce.rings`, per protocol where measured).
 *    model/physics/comm.h costs every ring whose hops cross that NVLink with the size nearest
 *    to the ring's (comm_nvl_cal_pick), splitting the latency into a fixed per-call cost and
 *    a per-step latency as NCCL's tuner does (comm_node).
 * Everything else (datasheet bandwidth, memory, MIG profiles, the other loss factors) stays.
 * Its MPS fit
 * maps onto no parameter because it measures none the physics lacks: eta_compute and eta_memory
 * (aggregate throughput of k identical clients over one alone; 1.010 and 1.004 on the H100) are
 * 1 in model/physics/share_mps.h, which loses nothing to the SM split or the bandwidth pool, and the
 * recorded runs (compute/memory clients, mixes c .. cm, caps 100/50/25 %) are predicted by
 * share_mps_solve from the solo runs alone (`slicesim validate`, table calib-h100-mps).
 * The lo/hi ranges of model/physics/speed.h do not perturb measured figures.
 *
 * Matching: a model records the device name as nvidia-smi prints it ("NVIDIA H100 80GB HBM3");
 * calapply_match_gpu maps it to the catalog key, using the measured SM count to tell apart
 * types that share a name (H100 SXM5 132 SMs, PCIe 114); a type whose SM count is unsourced
 * (0) accepts any count.
 * Pure functions on plain data; no file I/O (the loader is experiments/calib_json.h).
 * Ownership: the gpu_type written by calapply_gpu shares every pointer of its input (borrowed).
 */
#ifndef SIMPROJ_MODEL_CALAPPLY_H
#define SIMPROJ_MODEL_CALAPPLY_H

#include <stddef.h>

#include "model/fit/calfit.h"
#include "model/hw/catalog.h"
#include "model/physics/speed.h"
#include "sim/diag.h"

/* Identity of the measured node, from the model file's `source`. */
typedef struct calapply_source {
    char file[256];  /* calibration JSON the model was fitted from */
    char device[96]; /* nvidia-smi name */
    char uuid[64];
    char driver[32];
    char date_utc[32];
    src_loc device_at; /* where the model file gives `device` (its name borrowed from the
                        * loader's caller); line 0 when not read from a file */
} calapply_source;

/* Catalog GPU type measured as `device` with `sms_total` SMs (0 = unknown), or NULL.
 * Tried in order: the name (without a leading "NVIDIA ") as a catalog key or alias; then the
 * catalog types whose key or alias holds every token of the name that names a chip or a memory
 * size ("H100", "80GB"), kept only when exactly one of them has sms_total SMs. Borrowed. */
const gpu_type *calapply_match_gpu(const gpu_catalog *cat, const char *device, int sms_total);

/* *out = *in with the calibration f applied (see top). m gives the time-slice classes.
 * Returns 0, or SIM_EINPUT with the reason in why (size n) when f cannot describe in:
 * its whole-GPU SM count differs from in->sms_total (unless that is 0, unsourced). */
int calapply_gpu(const gpu_type *in, const cal_fit *f, const phys_params *m, gpu_type *out,
                 char *why, size_t n);

/* Index into f->bw of the curve calapply_gpu uses, or -1 when f has none. */
int calapply_bw_index(const cal_fit *f);
/* Index into f->ts of the back-to-back measurement used for a class of kernel length
 * kernel_ms (> 0), or -1 when f has none. */
int calapply_ts_index(const cal_fit *f, double kernel_ms);

#endif
