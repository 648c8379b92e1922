/* experiments/timeslicing.h - the NVIDIA k8s device plugin's config file (sharing by time-slicing
 * or MPS replicas), as the GPU operator passes it in a ConfigMap.
 *
 * Format (k8s-device-plugin api/config/v1; GPU operator "Time-Slicing GPUs in Kubernetes"):
 *
 *   version: v1                          # optional, v1 when absent (as the plugin does)
 *   flags:                               # optional: the plugin's command-line flags
 *     migStrategy: none|single|mixed
 *     failOnInitError, restartOnDeviceUnhealthy, gdsEnabled, mofedEnabled: <bool>
 *     nvidiaDriverRoot, nvidiaDevRoot: <path>
 *     plugin: {passDeviceSpecs: <bool>, deviceListStrategy: envvar|volume-mounts|cdi-annotations
 *              |cdi-cri (or a list), deviceIDStrategy: uuid|index, cdiAnnotationPrefix,
 *              nvidiaCTKPath, containerDriverRoot}
 *     gfd: {oneshot, noTimestamp: <bool>, sleepInterval: <duration like 60s>, outputFile,
 *           machineTypeFile}
 *   resources: {gpus: [{pattern, name}], mig: [{pattern, name}]}   # optional, ignored by the plugin
 *   imex: {channelIDs: [<int>], required: <bool>}                    # optional
 *   sharing:
 *     timeSlicing:                       # or mps: (the two are mutually exclusive)
 *       renameByDefault: <bool>          # true: advertise <name>.shared
 *       failRequestsGreaterThanOne: <bool>
 *       resources:                       # at least one
 *         - name: nvidia.com/gpu         # or a mixed-strategy MIG resource nvidia.com/mig-1g.5gb
 *           replicas: <N >= 1>
 *           rename: <name>               # optional
 *           devices: all | <count> | [<index>, "<gpu>:<mig>", "GPU-<uuid>", "MIG-<uuid>"]
 *
 * Unknown keys are errors listing the valid ones; so are a resource name that is neither
 * nvidia.com/gpu nor nvidia.com/mig-<C>g.<M>gb[.me], a resource named twice, MPS on a MIG
 * resource (the plugin shares only full GPUs with MPS), and both timeSlicing and mps resources.
 * Semantics the simulator uses (KDP README): each GPU (or MIG device) of the named resource is
 * advertised `replicas` times and handed out indiscriminately; no memory or fault isolation.
 *
 * Errors: bad input through diag (FILE:LINE:COL: error: FIELD.PATH: ...), SIM_EINPUT; SIM_ENOENT /
 * SIM_EIO when the file cannot be read. Ownership: everything lives in the arena given to the
 * loader.
 */
#ifndef SIMPROJ_EXPERIMENTS_TIMESLICING_H
#define SIMPROJ_EXPERIMENTS_TIMESLICING_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/arena.h"
#include "sim/diag.h"

typedef enum timeslicing_mig_strategy {
    TIMESLICING_MIG_UNSET = 0, /* flags.migStrategy absent (the plugin's default is none) */
    TIMESLICING_MIG_NONE,
    TIMESLICING_MIG_SINGLE,
    TIMESLICING_MIG_MIXED,
} timeslicing_mig_strategy;

/* One replicated resource. */
typedef struct timeslicing_resource {
    const char *name;          /* "nvidia.com/gpu" or "nvidia.com/mig-<profile>" */
    const char *rename;        /* NULL unless given */
    int replicas;              /* >= 1 */
    bool all_devices;          /* devices: all (the default) */
    int device_count;          /* devices: N (first N devices), 0 otherwise */
    size_t n_device_refs;      /* devices: [...] */
    const char **device_refs;  /* "0", "0:1", "GPU-<uuid>", "MIG-<uuid>" */
    src_loc loc;               /* the rule's mapping */
    src_loc rename_loc, devices_loc; /* of those values; file NULL when absent */
} timeslicing_resource;

/* sharing.timeSlicing or sharing.mps. */
typedef struct timeslicing_replicated {
    bool present;
    bool rename_by_default;
    bool fail_requests_greater_than_one;
    size_t n_resources;
    timeslicing_resource *resources;
    src_loc loc;
} timeslicing_replicated;

typedef struct timeslicing_config {
    const char *file;          /* display name */
    const char *version;       /* "v1" */
    timeslicing_mig_strategy mig_strategy;
    timeslicing_replicated time_slicing, mps;
    src_loc loc;
} timeslicing_config;

/* Load a device-plugin config file. Returns 0, SIM_EINPUT (reported to d), SIM_ENOENT, SIM_EIO. */
int timeslicing_load(const char *path, arena *a, timeslicing_config *out, diag *d);
/* Load from len bytes at buf, named `name` in messages. Returns 0 or SIM_EINPUT. */
int timeslicing_load_buffer(const char *name, const void *buf, size_t len, arena *a,
                            timeslicing_config *out, diag *d);

/* The sharing in force: mps when it has resources, else timeSlicing; NULL when neither. */
const timeslicing_replicated *timeslicing_active(const timeslicing_config *c);
/* Replicas of one device of `resource` ("nvidia.com/gpu"...) under the active sharing: the rule's
 * replicas, or 1 when no rule names the resource. */
int timeslicing_replicas(const timeslicing_config *c, const char *resource);
/* Name the plugin advertises for rule r of rs: r->rename, else "<name>.shared" when
 * renameByDefault, else the name. Written into buf (NUL-terminated, truncated to n). */
const char *timeslicing_advertised(const timeslicing_replicated *rs, const timeslicing_resource *r,
                                   char *buf, size_t n);

#endif
