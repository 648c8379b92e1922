/* experiments/telemetry.h - GPU telemetry read as an observation's measurements.
 *
 * Three forms of what a cluster already records:
 *  - TEL_PROM: a dcgm-exporter scrape, Prometheus text exposition / OpenMetrics
 *    (`NAME{label="v",...} VALUE [TIMESTAMP]`, `# HELP`/`# TYPE`/`# EOF` lines; several scrapes
 *    may follow one another, each sample with its timestamp in milliseconds);
 *  - TEL_PROM_JSON: a Prometheus range query's answer (`/api/v1/query_range`: status success,
 *    data.resultType matrix, result[].metric with __name__ and labels, result[].values
 *    [[unix_s, "value"], ...]), or an instant query's (resultType vector, result[].value);
 *  - TEL_SMI_CSV: `nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,power.draw
 *    --format=csv -l N` (header `timestamp, index, utilization.gpu [%], memory.used [MiB],
 *    power.draw [W]`, rows `2024/05/01 10:00:00.123, 0, 87 %, 20381 MiB, 245.10 W`; with
 *    `,nounits` the units stay in the header only). Columns are found by name; timestamp, index
 *    and utilization.gpu are required, and every value needs its unit, in the header or beside it.
 * From the samples of one GPU (`gpu` label / `index` column), or of one MIG instance of it
 * (`GPU_I_ID` label), whose time lies in [from, to] (unix seconds; a sample without a timestamp is
 * taken as in the window), it averages:
 *   gpu_util   DCGM_FI_DEV_GPU_UTIL / 100 or utilization.gpu / 100 (whole GPU); for a MIG
 *              instance, whose utilisation DCGM does not report, DCGM_FI_PROF_GR_ENGINE_ACTIVE;
 *              and GR_ENGINE_ACTIVE too when the file has no GPU_UTIL
 *   gr_engine_active, sm_active, dram_active   DCGM_FI_PROF_GR_ENGINE_ACTIVE, _SM_ACTIVE,
 *              _DRAM_ACTIVE (fractions)
 *   fb_used_bytes  the largest DCGM_FI_DEV_FB_USED / memory.used (MiB) in the window
 *   power_w        DCGM_FI_DEV_POWER_USAGE / power.draw
 * Figures without a sample are NaN. Errors (FILE:LINE:COL and the field, or the JSON path):
 * a malformed line or document, a missing column or unit, and no utilisation sample of the GPU
 * or instance in the window.
 * Ownership: the result holds no pointer into the input; strings are static or in `model`.
 */
#ifndef SIMPROJ_EXPERIMENTS_TELEMETRY_H
#define SIMPROJ_EXPERIMENTS_TELEMETRY_H

#include <stddef.h>

#include "sim/diag.h"

typedef enum tel_format {
    TEL_AUTO,      /* '{' first: JSON; a first line naming utilization.gpu: CSV; else text */
    TEL_PROM,      /* Prometheus text exposition / OpenMetrics (dcgm-exporter's /metrics) */
    TEL_PROM_JSON, /* Prometheus HTTP API query answer */
    TEL_SMI_CSV,   /* nvidia-smi --query-gpu ... --format=csv */
} tel_format;

/* The format named "auto", "dcgm", "prometheus-json" or "nvidia-smi" (-1 when unknown). */
int tel_format_find(const char *name);

typedef struct tel_query {
    tel_format format;
    int gpu;       /* GPU index (dcgm-exporter's gpu label, nvidia-smi's index) */
    int instance;  /* MIG GPU instance id (GPU_I_ID), or -1: the whole GPU */
    double from_s; /* window, unix seconds; -HUGE_VAL / HUGE_VAL: open */
    double to_s;
} tel_query;

typedef struct tel_result {
    size_t n_util;           /* samples behind gpu_util */
    double gpu_util;         /* fraction */
    const char *util_source; /* the metric or column gpu_util comes from (static) */
    double gr_engine_active, sm_active, dram_active; /* fractions */
    double fb_used_bytes;                            /* largest in the window */
    double power_w;                                  /* mean */
    double first_s, last_s; /* time of the first and last sample used (NaN: none had one) */
    char model[64];         /* modelName label / name column, or "" */
} tel_result;

/* Read the file at `path` (display name for messages) and reduce it for q. Returns 0; SIM_EINPUT
 * after reporting to d; SIM_ENOENT / SIM_EIO when it cannot be read (errno holds the cause). */
int tel_load_file(const char *path, const tel_query *q, diag *d, tel_result *out);
/* Same for len bytes at buf under display name `name`. */
int tel_load_buffer(const char *name, const char *buf, size_t len, const tel_query *q, diag *d,
                    tel_result *out);

#endif
