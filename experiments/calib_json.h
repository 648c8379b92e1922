/* experiments/calib_json.h - read calibration JSON (calib/run-all.sh output, schema
 * "slicesim-calib" v1) into plain structs for model/calfit.h, and load fitted model files
 * (`slicesim fit` output, schema "slicesim-calmodel" v1) for scenarios (`calibration:` key).
 * Both schemas are documented in calib/README.md.
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

#include "model/calfit.h"
#include "sim/diag.h"

#define CALIB_JSON_SCHEMA "slicesim-calib"
#define CALMODEL_SCHEMA "slicesim-calmodel"
#define CALMODEL_SCHEMA_VERSION 1

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
 * left zero). Returns 0, SIM_EINPUT (reported to d), SIM_ENOENT or SIM_EIO. */
int calmodel_load(const char *path, cal_fit *out, diag *d);
/* Same from a buffer. */
int calmodel_load_buffer(const char *name, const char *buf, size_t len, cal_fit *out, diag *d);

#endif
