/* experiments/migparted.h - NVIDIA mig-parted configuration files, and their MIG layouts.
 *
 * Reads the format of NVIDIA mig-parted (api/spec/v1; e.g. deployments/systemd/config-default.yaml
 * in github.com/NVIDIA/mig-parted), as the GPU operator's MIG manager applies it:
 *
 *   version: v1                      # required, only v1
 *   mig-configs:                     # at least one named config
 *     all-balanced:                  # a config: a non-empty list of entries
 *       - device-filter: ["0x20B010DE", "0x20B110DE"]   # optional: PCI device id << 16 | vendor,
 *                                                        # one string or a list
 *         devices: all               # required: "all" or a list of GPU indices [0, 1]
 *         mig-enabled: true          # required
 *         mig-devices:               # required when mig-enabled, empty when not
 *           "1g.5gb": 2              # GPU-instance profile -> count (>= 0)
 *           "2g.10gb": 1
 *
 * Rules taken from mig-parted's own parser: version must be v1, unknown keys are errors, devices
 * and mig-enabled are required, mig-devices is required when mig-enabled is true and must be
 * empty when it is false. Profile names are checked for shape at load (<C>g.<M>gb with an
 * optional +me, +me.all, -me or +gfx suffix, or a compute-instance profile <c>c.<C>g.<M>gb) and
 * against a GPU type only when a config is applied.
 *
 * Applying a config to GPU number i of type g: the entries whose device-filter matches one of
 * g's PCI device ids (vendor 0x10DE) - or that have no filter - and whose devices include i
 * select that GPU; at most one entry may select it. Its instances are placed by mig_place
 * (model/hw/mig.h): largest profile first, each at its highest free allowed start, backtracking
 * until a layout fits. This is deterministic and reproduces the first choices that the MIG user
 * guide shows for the driver (1g@6, 2g@4, 3g@4 on an empty A100), whose full policy NVIDIA does
 * not document (gpus.yaml validity_rules auto_placement).
 *
 * Errors: bad input through diag as FILE:LINE:COL: error: FIELD.PATH: ..., returning SIM_EINPUT;
 * SIM_ENOENT / SIM_EIO when the file cannot be read. Ownership: everything in a migparted_config
 * lives in the arena given to the loader; results of apply are plain values.
 */
#ifndef SIMPROJ_EXPERIMENTS_MIGPARTED_H
#define SIMPROJ_EXPERIMENTS_MIGPARTED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/hw/catalog.h"
#include "model/hw/mig.h"
#include "sim/arena.h"
#include "sim/diag.h"

/* One `mig-devices` item: profile name -> count. */
typedef struct migparted_device {
    const char *profile;
    int count;
    bool is_compute_instance; /* "1c.2g.10gb": a CI profile, which slicesim does not model */
    src_loc loc;              /* of the key */
} migparted_device;

/* One entry of a named config. */
typedef struct migparted_entry {
    size_t n_filters;         /* 0 = no device-filter: any GPU */
    uint32_t *filters;        /* device id << 16 | vendor id, as written ("0x20B010DE") */
    bool all_devices;
    size_t n_devices;
    int *devices;             /* GPU indices when !all_devices */
    bool mig_enabled;
    size_t n_mig_devices;
    migparted_device *mig_devices;
    src_loc loc, mig_devices_loc, devices_loc, filter_loc;
} migparted_entry;

/* A named config (`mig-configs.NAME`). */
typedef struct migparted_named {
    const char *name;
    size_t n_entries;
    migparted_entry *entries;
    src_loc loc; /* of the name */
} migparted_named;

/* A whole mig-parted file. */
typedef struct migparted_config {
    const char *file;       /* display name */
    const char *version;    /* "v1" */
    size_t n_configs;
    migparted_named *configs; /* in file order */
    src_loc loc, configs_loc;
} migparted_config;

/* Load a mig-parted file. Returns 0, SIM_EINPUT (reported to d), SIM_ENOENT or SIM_EIO. */
int migparted_load(const char *path, arena *a, migparted_config *out, diag *d);
/* Load from len bytes at buf, named `name` in messages. Returns 0 or SIM_EINPUT. */
int migparted_load_buffer(const char *name, const void *buf, size_t len, arena *a,
                          migparted_config *out, diag *d);

/* Named config by exact name, or NULL. Borrowed. */
const migparted_named *migparted_find(const migparted_config *cfg, const char *name);

/* What a config makes of one GPU. */
typedef struct migparted_result {
    bool selected;      /* an entry selects this GPU; when false the GPU is left as it is */
    int entry;          /* index of that entry, -1 when none */
    bool mig_enabled;
    mig_layout layout;  /* instances with their starts (largest first); empty when MIG is off */
} migparted_result;

/* Apply config `config_name` of cfg to GPU number gpu_index (0-based) of type g, under driver
 * branch `driver` (0 = newest). Fills *out and returns 0; or reports to d and returns SIM_EINPUT:
 * unknown config name, two entries selecting the GPU, a profile g does not offer (the message
 * lists g's profiles), a compute-instance profile, counts that break a rule, or instances that
 * do not fit (the message says what runs out and gives a largest-first subset that fits).
 * `c` (may be NULL) is used to say which catalog GPU does offer an unknown profile. */
int migparted_apply(const gpu_catalog *c, const gpu_type *g, const migparted_config *cfg,
                    const char *config_name, int gpu_index, int driver, migparted_result *out,
                    diag *d);

/* Check that every entry of config `config_name` that applies to GPU type g (its device-filter
 * admits g) lists only GPU indices below n_gpus, the GPUs of a node: an index beyond them would
 * silently select nothing. Reports each one at its `devices`; returns 0 or SIM_EINPUT. */
int migparted_check_devices(const gpu_type *g, const migparted_config *cfg,
                            const char *config_name, int n_gpus, diag *d);

/* True when some entry of `n` that selects GPU gpu_index of type g names a profile g does not
 * offer; *profile (when non-NULL) gets the first such name. A config for other GPU families
 * (all-1g.5gb on an H100) is "not for" g. */
bool migparted_not_for(const gpu_type *g, const migparted_named *n, int gpu_index,
                       const char **profile);

#endif
