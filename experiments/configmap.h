/* experiments/configmap.h - a config file as the NVIDIA GPU operator holds it: either the config
 * itself, or a Kubernetes ConfigMap that carries it in `data`.
 *
 *   apiVersion: v1                   # required when kind is ConfigMap: v1
 *   kind: ConfigMap
 *   metadata: {name: nvidia-mig-config}        # any mapping, not read
 *   data:
 *     config.yaml: |                 # exactly one entry, a literal block scalar (|, |-, |+)
 *       version: v1
 *       mig-configs: ...
 *
 * Allowed top-level keys of a ConfigMap: apiVersion, kind, metadata, data, binaryData, immutable.
 * The embedded config is parsed where it sits, so every location reported for it (node or syntax
 * error) is a line and column of the ConfigMap file. Used by the mig-parted
 * (experiments/migparted.h) and device-plugin (experiments/timeslicing.h) loaders.
 *
 * Ownership: the returned document is the caller's (yamlx_destroy); names live in `names`.
 * No units.
 */
#ifndef SIMPROJ_EXPERIMENTS_CONFIGMAP_H
#define SIMPROJ_EXPERIMENTS_CONFIGMAP_H

#include <stddef.h>

#include "experiments/yamlx.h"

/* Load `len` bytes at `buf` under display name `name`: the document itself, or the config a
 * ConfigMap holds. Returns 0 and sets *out; SIM_EINPUT after reporting to d. */
int configmap_load_buffer(const char *name, const void *buf, size_t len, arena *names, diag *d,
                          yamlx_doc **out);
/* Same for the file at `path`; SIM_ENOENT / SIM_EIO as yamlx_load_file. */
int configmap_load_file(const char *path, arena *names, diag *d, yamlx_doc **out);

#endif
