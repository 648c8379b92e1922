/* experiments/calib_json.h - read calibration JSON (calib/run-all.sh output, schema
 * "slicesim-calib" v1) into plain structs for model/fit/calfit.h, and load fitted model files
 * (`slicesim fit` output, schema "slicesim-calmodel" v1) for scenarios (`calibration:` key).
 * Both schemas, and the time-slice probe's (calib/tslice.cu), are documented in calib/README.md.
 *
 * Errors: text that is not JSON is reported at its position, converted from cJSON's byte offset
 * to 1-based line:col (cJSON_ParseWithOpts; the global cJSON_GetErrorPtr is never used):
 *   FILE:LINE:COL: error: invalid JSON; expected a JSON value, got 'X'
 * Schema problems are reported with their field path (cJSON keeps no positions):
 *   FILE: error: flops.runs[3].sms: expected a positive number, got '"x"'
 * The load returns SIM_EINPUT after reporting to d; SIM_ENOENT / SIM_EIO when the file cannot
 * be read (errno holds the cause).
 * Sections a file does not hold (null, or absent) are left empty: the fits skip them.
 * Ownership: *out is a plain value filled by the call; the file name is only borrowed for
 * messages (diag keeps it, so it must outlive d).
 */
#ifndef SIMPROJ_EXPERIMENTS_CALIB_JSON_H
#define SIMPROJ_EXPERIMENTS_CALIB_JSON_H

#include <stddef.h>

#include "model/fit/calapply.h"
#include "model/fit/calfit.h"
#include "model/hw/catalog.h"
#include "model/fit/tsprobe.h"
#include "sim/diag.h"

#define CALIB_JSON_SCHEMA "slicesim-calib"
#define CALMODEL_SCHEMA "slicesim-calmodel"
#define CALMODEL_SCHEMA_VERSION 1
#define TSLICE_JSON_SCHEMA "slicesim-tslice"

/* Read a calibration file. Returns 0, SIM_EINPUT (reported to d), SIM_ENOENT or SIM_EIO. */
int calib_json_load_file(const char *path, cal_data *out, diag *d);
/* Same from len bytes at buf (need not be NUL-terminated), named `name` in messages. */
int calib_json_load_buffer(const char *name, const char *buf, size_t len, cal_data *out, diag *d);
/* Read the sections of MIG device `mig_device` (index into mig_devices[]) instead of the top
 * level: a node measured with MIG on. out->device gets " MIG <profile>" appended and out->uuid
 * the MIG device's UUID. An index past the list is bad input. */
int calib_json_load_file_mig(const char *path, int mig_device, cal_data *out, diag *d);
int calib_json_load_buffer_mig(const char *name, const char *buf, size_t len, int mig_device,
                               cal_data *out, diag *d);

/* Load a model file written by `slicesim fit` into *out (parameters only: residual arrays are
 * left zero) and the identity of the measured node into *src (`source`; `source.device`
 * required). Returns 0, SIM_EINPUT (reported to d), SIM_ENOENT or SIM_EIO. */
int calmodel_load_source(const char *path, cal_fit *out, calapply_source *src, diag *d);
/* Same from len bytes at buf, named `name` in messages. */
int calmodel_load_source_buffer(const char *name, const char *buf, size_t len, cal_fit *out,
                                calapply_source *src, diag *d);

/* Catalog GPU type a loaded model applies to: `gpu` (a catalog name or alias) when not NULL,
 * checked against the measured SM count, else the type calapply_match_gpu finds for the
 * measured device. NULL with the problem in why (size n), phrased "PROBLEM; expected X, got 'Y'"
 * for a diag message. Borrowed from cat. */
const gpu_type *calmodel_target(const cal_fit *f, const calapply_source *src, const char *gpu,
                                const gpu_catalog *cat, char *why, size_t n);

/* Where a calibration is named, for its messages (every one file:line:col + field path): the
 * model file's reference and, when the GPU type is named, that name's. */
typedef struct calmodel_site {
    const char *gpu;       /* GPU type named (catalog name or alias), or NULL: the measured
                            * device's match */
    src_loc file_at;       /* where the model file is named (or its source.device) */
    const char *file_path; /* field path there: "calibration", "calibration[1].file" */
    src_loc gpu_at;        /* where `gpu` is written (when not NULL) */
    const char *gpu_path;  /* its field path: "calibration.gpu" */
} calmodel_site;

/* The one way a calibration is applied: model f, measured on the node src, applied to a copy of
 * its catalog GPU type (calmodel_target; m gives the time-slice classes). *out gets the copy
 * (model/fit/calapply.h says what it replaces; its pointers are borrowed from cat); cat is not
 * changed. Returns 0, or SIM_EINPUT after reporting to d: no such type, or one the model was
 * not measured on, at the GPU name when one is given, else at the model file's site. */
int calmodel_apply(const cal_fit *f, const calapply_source *src, const calmodel_site *at,
                   const gpu_catalog *cat, const phys_params *m, diag *d, gpu_type *out);

/* Read a time-slice probe file (calib/tslice.cu, schema "slicesim-tslice" v1), len bytes at buf
 * named `name` in messages, into *out for
 * tsp_analyse: the timelines of the groups that ran ("ok"), the return series. Groups that
 * failed on the GPU are skipped. Timer readings are integers of ns; JSON numbers are doubles,
 * so readings near 2^61 ns keep a resolution of 256 ns, far below the slices and switches
 * measured. Returns 0 (free with tsp_free) or SIM_EINPUT (reported to d; nothing to free). */
int tslice_json_load_buffer(const char *name, const char *buf, size_t len, tsp_data *out,
                            diag *d);

#endif
