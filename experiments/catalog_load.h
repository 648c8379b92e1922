/* experiments/catalog_load.h - load the GPU catalog (model/hw/catalog.h) from YAML.
 *
 * The format is model/hw/gpus.yaml's (its header comment describes it); that file is embedded in the
 * binary and is what catalog_load_default reads. Every figure keeps its source tags; a figure
 * that is absent must be listed under the entry's `unsourced:` (and one listed there must be
 * absent), so a value is never silently missing. Checks beyond the schema: profile names agree
 * with their compute slices ("3g.20gb" has 3), placements are well formed and fit the memory
 * slices, names, aliases and profile ids are unique, sms_mig_full equals the largest profile's
 * SMs, every src tag is defined under `sources:`, every validity rule id is one model/hw/mig.c
 * implements, and the catalog's fixed-size arrays are not overflowed.
 * Units are converted here (GB/s -> bytes/s, TFLOPS -> FLOP/s, GiB -> bytes, R510 -> 510).
 *
 * Errors: bad input is reported through diag as FILE:LINE:COL: error: FIELD.PATH: ...; the load
 * returns SIM_EINPUT. SIM_ENOENT / SIM_EIO when the file cannot be read (errno holds the cause).
 * Ownership: every pointer in *out (and the file name in its src_locs) lives in arena `a`.
 */
#ifndef SIMPROJ_EXPERIMENTS_CATALOG_LOAD_H
#define SIMPROJ_EXPERIMENTS_CATALOG_LOAD_H

#include <stddef.h>

#include "model/hw/catalog.h"
#include "sim/arena.h"
#include "sim/diag.h"

/* The GPU architectures a catalog entry's `arch` may name (NULL-terminated); also what
 * model/physics/comm.yaml's nvls_archs may list (experiments/comm_load.c). */
extern const char *const catalog_arch_names[];

/* Repository path of the embedded catalog, also its display name in messages. */
#define CATALOG_DEFAULT_PATH "model/hw/gpus.yaml"

/* Load the catalog compiled into the binary. Returns 0, or SIM_EINPUT (a bug in the shipped
 * file, reported to d). */
int catalog_load_default(arena *a, gpu_catalog *out, diag *d);
/* Load a catalog file. Returns 0, SIM_EINPUT (reported to d), or SIM_ENOENT / SIM_EIO. */
int catalog_load_file(const char *path, arena *a, gpu_catalog *out, diag *d);
/* Load a catalog from len bytes at buf, named `name` in messages. Returns 0 or SIM_EINPUT. */
int catalog_load_buffer(const char *name, const void *buf, size_t len, arena *a, gpu_catalog *out,
                        diag *d);

#endif
