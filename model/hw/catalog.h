/* model/hw/catalog.h - the GPU hardware catalog: GPU types and their MIG GPU-instance profiles.
 *
 * Plain data, filled by a loader (experiments/catalog_load.h) from model/hw/gpus.yaml, which
 * carries every figure's source. This module only looks things up; it reads no file.
 * Units: bytes, bytes/s, FLOP/s, watts. Placement starts and sizes are in memory-slice units
 * (nvidia-smi mig -lgipp notation {starts}:size).
 * Ownership: every pointer inside a gpu_catalog is owned by the arena that the loader was given;
 * lookups return borrowed pointers valid while that arena lives.
 * A field whose value is unsourced in the data file is 0 (numbers) or NULL (strings), and
 * `unsourced` lists its name.
 */
#ifndef SIMPROJ_MODEL_CATALOG_H
#define SIMPROJ_MODEL_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/arena.h"

#define GPU_MAX_SLICES 8     /* memory slices on any catalog GPU */
#define GPU_MAX_PROFILES 16  /* GPU-instance profiles per GPU type */

/* Numeric formats with a datasheet peak rate. Dense rates. */
typedef enum gpu_format {
    GPU_FMT_FP64,
    GPU_FMT_FP32,
    GPU_FMT_FP16,        /* CUDA cores (non-tensor) */
    GPU_FMT_FP64_TENSOR,
    GPU_FMT_TF32_TENSOR,
    GPU_FMT_FP16_TENSOR,
    GPU_FMT_BF16_TENSOR,
    GPU_FMT_FP8_TENSOR,
    GPU_FMT_INT8_TENSOR, /* ops/s */
    GPU_FMT_COUNT
} gpu_format;

/* Format by name; returns GPU_FMT_COUNT when unknown. */
gpu_format gpu_format_from_name(const char *name);

typedef struct mig_profile {
    const char *name;        /* e.g. "1g.5gb", "1g.5gb+me" */
    int id;                  /* nvidia-smi GPU-instance profile id; -1 = unsourced */
    int compute_slices;      /* g in "Ng.XXgb" */
    int mem_slices;          /* placement size in memory slices */
    int sms;                 /* SMs of the instance */
    uint64_t mem_bytes;      /* usable memory as nvidia-smi -lgip reports it */
    int copy_engines, nvdec, nvenc, jpeg, ofa;
    int max_instances;       /* per GPU */
    int n_starts;
    int starts[GPU_MAX_SLICES]; /* allowed placement starts, ascending */
    int min_driver;          /* first driver branch that offers it (e.g. 470), 0 = any */
    bool is_media_extension; /* "+me": at most one per GPU */
    const char *src;         /* source tags, space separated */
    const char *unsourced;   /* comma-separated names of fields left 0, or NULL */
    const char *note;        /* assumption or caveat stated in the data file, or NULL */
} mig_profile;

#define GPU_MAX_ALIASES 4
#define GPU_MAX_PCI_IDS 4
#define GPU_MAX_LAYOUT_COUNTS 6

/* An expected number of layouts, recorded in the data file with its source, that the
 * enumeration (model/hw/mig.h) must reproduce; tests compare the two. */
typedef struct gpu_layout_count {
    bool all_profiles; /* false: classic profiles (mig_profile_is_classic) */
    bool maximal_only; /* false: every non-empty valid layout */
    int driver;        /* driver branch the count holds for, 0 = newest */
    long count;
    const char *src;   /* source tags, space separated */
} gpu_layout_count;

#define GPU_MEAS_MAX_TS 4 /* = PHYS_MAX_TS_CLASSES (model/physics/speed.h), checked there */
#define GPU_MEAS_MAX_K 8  /* = PHYS_MAX_K */

/* One measured all-reduce ring size of a GPU type's NVLink (gpu_measured.ar). */
#define GPU_MEAS_MAX_AR 4
typedef struct gpu_meas_ar {
    int gpus;
    bool has[2]; /* the protocol was measured at this size */
    double latency_s[2];
    double busbw_bytes_per_s[2];
    double ll_max_bytes;
} gpu_meas_ar;

/* Figures measured on a node (calib/ + `slicesim fit`) that replace the physics defaults for this
 * GPU type; model/fit/calapply.h fills them. All false/0 in the catalog as loaded.
 * Bandwidth that s SMs drive, whole GPU (bytes/s):
 *   soft minimum:      BW(s) = b s / (1 + (b s / Bmax)^p)^(1/p)
 *   Michaelis-Menten:  BW(s) = Bmax s / (s + s_half)          (bw_is_mm) */
typedef struct gpu_measured {
    bool has_bw;
    bool bw_is_mm;
    double bw_max_bytes_per_s;    /* Bmax */
    double bw_per_sm_bytes_per_s; /* b (soft minimum) */
    double bw_sharpness;          /* p (soft minimum) */
    double bw_s_half;             /* s_half (Michaelis-Menten) */
    bool has_eta[GPU_MEAS_MAX_TS];                 /* per physics time-slice class index */
    double eta[GPU_MEAS_MAX_TS][GPU_MEAS_MAX_K + 1]; /* eta[cls][k], k = 2..GPU_MEAS_MAX_K */
    /* NCCL all-reduce sweeps over this type's NVLink (model/fit/calapply.h), one per measured
     * ring size, ascending in gpus: per protocol ([0] LL, [1] Simple) where measured, the latency of one
     * all-reduce on `gpus` ranks and the bus bandwidth; ll_max_bytes the largest LL message
     * (0: model/physics/comm.yaml's). */
    int n_ar;                          /* 0 = none */
    gpu_meas_ar ar[GPU_MEAS_MAX_AR];
} gpu_measured;

typedef struct gpu_type {
    const char *name;            /* catalog key, e.g. "A100-SXM4-40GB" */
    const char *arch;            /* "Ampere", "Hopper", "Blackwell" */
    int sms_total;               /* SMs with MIG disabled */
    int sms_mig_full;            /* SMs usable with MIG on (the largest profile); 0 = no MIG */
    int compute_slices;          /* 7, or 4 on A30; 0 = no MIG */
    int memory_slices;           /* 8, or 4 on A30 */
    int max_mig_instances;
    uint64_t mem_bytes;
    double mem_bw_bytes_per_s;
    double l2_bytes;
    double peak_flops[GPU_FMT_COUNT]; /* dense, whole GPU, MIG disabled; 0 = unsourced */
    double sm_clock_boost_hz;         /* 0 = unsourced */
    double tdp_w;
    double nvlink_bytes_per_s;        /* total, both directions; 0 = none/unsourced */
    double pcie_bytes_per_s;          /* per direction */
    int n_profiles;
    mig_profile profiles[GPU_MAX_PROFILES];
    const char *unsourced;       /* comma-separated names of fields left 0/NULL, or NULL */
    const char *src;             /* source tags, space separated */
    int n_aliases;
    const char *aliases[GPU_MAX_ALIASES]; /* other names gpu_catalog_find accepts */
    int n_pci_ids;
    uint16_t pci_device_ids[GPU_MAX_PCI_IDS]; /* PCI device ids (vendor 0x10DE), for mig-parted
                                                 device-filter matching */
    int mig_min_driver;          /* first driver branch with MIG on this GPU, 0 = any */
    int pair_4g_3g_min_driver;   /* branch from which a 4g and a 3g instance may coexist; 0 = any */
    int n_layout_counts;
    gpu_layout_count layout_counts[GPU_MAX_LAYOUT_COUNTS];
    const char *note;            /* assumptions stated in the data file, or NULL */
    gpu_measured meas;           /* calibration of a measured node; zero = none */
} gpu_type;

typedef struct gpu_catalog {
    size_t n_gpus;
    gpu_type *gpus;                 /* arena-owned */
    size_t n_sources;
    const char **source_tags;       /* parallel arrays: tag -> citation */
    const char **source_texts;
    size_t n_rules;                 /* validity rules as the data file states them */
    const char **rule_ids;          /* parallel arrays: id (a mig_rule_ids name), text, sources */
    const char **rule_texts;
    const char **rule_srcs;
} gpu_catalog;

/* GPU type by catalog name or alias (exact, then case-insensitive); NULL when absent. Borrowed. */
const gpu_type *gpu_catalog_find(const gpu_catalog *c, const char *name);
/* MIG profile of g by name ("1g.5gb"); NULL when absent. Borrowed. */
const mig_profile *gpu_find_profile(const gpu_type *g, const char *name);
/* Index of g's profile by name, or -1 when absent. */
int gpu_profile_index(const gpu_type *g, const char *name);
/* *out = c with each GPU type named like one of types[0..n) replaced by it (a calibrated copy,
 * experiments/calib_json.h calmodel_apply): a new array of types from `a`, every other pointer
 * shared with c, which is not changed. A type of `types` that c lacks is ignored. */
void gpu_catalog_with(const gpu_catalog *c, const gpu_type *types, size_t n, arena *a,
                      gpu_catalog *out);
/* Write the catalog's GPU names, comma-separated, into buf (always NUL-terminated, truncated to
 * n). Returns buf. */
const char *gpu_catalog_names(const gpu_catalog *c, char *buf, size_t n);

#endif
