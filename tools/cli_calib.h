/* tools/cli_calib.h - the `--calibration MODEL.json [--calibration-gpu NAME]` options of
 * `slicesim fit-workload` and `slicesim predict`: a measured node (`slicesim fit` output) in place
 * of a catalog GPU type's defaults (model/fit/calapply.h says what it replaces).
 * Ownership: every pointer is borrowed; the calibrated type lives in the catalog cli_calib_apply
 * returns (its arena).
 */
#ifndef SIMPROJ_TOOLS_CLI_CALIB_H
#define SIMPROJ_TOOLS_CLI_CALIB_H

#include <stdbool.h>

#include "model/fit/calapply.h"
#include "model/hw/catalog.h"
#include "model/physics/speed.h"
#include "sim/arena.h"
#include "sim/diag.h"

/* What the options asked for and what they changed. */
typedef struct cli_calib {
    const char *path;        /* --calibration, or NULL */
    const char *gpu;         /* --calibration-gpu, or NULL (the measured device's match) */
    const gpu_type *applied; /* the calibrated type in cli_calib_apply's catalog */
    calapply_source src;
} cli_calib;

/* If argv[*i] is --calibration or --calibration-gpu, take its value (argv[*i + 1]) into c and
 * advance *i. Returns 1 when taken, 0 when argv[*i] is another argument, or -1 after printing a
 * usage error (missing value, or the option given twice) for command `cmd`. */
int cli_calib_arg(const char *cmd, int argc, char **argv, int *i, cli_calib *c);

/* *out = cat with c->path (when set) applied to a copy of its GPU type (calmodel_apply, under the
 * time-slice classes of m; the new array of types from `a`); cat is not changed. Returns
 * CLI_EXIT_OK, CLI_EXIT_INPUT (diag printed to stderr) or CLI_EXIT_ENV (message printed). */
int cli_calib_apply(const char *cmd, cli_calib *c, const gpu_catalog *cat, const phys_params *m,
                    arena *a, diag *d, gpu_catalog *out);

/* With a calibration applied, the input's GPU (`have`, from field `field` at `at`) must be the
 * calibrated type; otherwise reports to d and returns false. True without a calibration. */
bool cli_calib_check_gpu(const cli_calib *c, const gpu_type *have, src_loc at, const char *field,
                         diag *d);

#endif
