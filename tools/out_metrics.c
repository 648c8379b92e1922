/* tools/out_metrics.c - metrics.om in OpenMetrics text with DCGM exporter names (see
 * out_metrics.h). */
#include "tools/out_metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/power.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/devlog.h"

#define NS_PER_S ((sim_time)1000000000)
#define MIB (1024.0 * 1024.0)

typedef enum fam_kind { FAM_GPU_UTIL, FAM_GR_ACTIVE, FAM_FB_USED, FAM_FB_FREE, FAM_POWER } fam_kind;

/* Names and HELP texts as dcgm-exporter's default-counters.csv gives them. */
static const struct family {
    fam_kind kind;
    const char *name, *help;
    bool per_instance; /* one series per MIG instance on a MIG GPU */
} families[] = {
    {FAM_GPU_UTIL, "DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", false},
    {FAM_GR_ACTIVE, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.",
     true},
    {FAM_FB_USED, "DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", true},
    {FAM_FB_FREE, "DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", true},
    {FAM_POWER, "DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", false},
};

typedef struct om_ctx {
    FILE *f;
    const cluster *c;
    const devlog *log;
    const phys_params *phys;
    sim_time interval, end; /* end: the last sample's time */
    bool whole_s;           /* timestamps as integer seconds */
} om_ctx;

/* A label value with '\\', '"' and newlines escaped (OpenMetrics ABNF). */
static void put_label(FILE *f, const char *key, const char *v, bool first)
{
    fprintf(f, "%s%s=\"", first ? "" : ",", key);
    for (; *v; v++) {
        if (*v == '\\' || *v == '"') {
            fputc('\\', f);
            fputc(*v, f);
        } else if (*v == '\n') {
            fputs("\\n", f);
        } else {
            fputc(*v, f);
        }
    }
    fputc('"', f);
}

static void put_labels(const om_ctx *x, gpu_id g, const cluster_device *inst)
{
    const cluster_gpu *cg = cluster_gpu_get(x->c, g);
    char buf[128];
    fputc('{', x->f);
    snprintf(buf, sizeof buf, "%" PRIu32, cg->index);
    put_label(x->f, "gpu", buf, true);
    snprintf(buf, sizeof buf, "nvidia%" PRIu32, cg->index);
    put_label(x->f, "device", buf, false);
    snprintf(buf, sizeof buf, "NVIDIA %s", cg->type->name);
    put_label(x->f, "modelName", buf, false);
    put_label(x->f, "Hostname", cluster_node_name(x->c, cg->node), false);
    if (inst) {
        put_label(x->f, "GPU_I_PROFILE", inst->profile->name, false);
        snprintf(buf, sizeof buf, "%" PRIu32, inst->index);
        put_label(x->f, "GPU_I_ID", buf, false);
    }
    fputc('}', x->f);
}

static void put_timestamp(const om_ctx *x, sim_time t)
{
    if (x->whole_s) {
        fprintf(x->f, " %" PRId64 "\n", t / NS_PER_S);
    } else {
        fprintf(x->f, " %" PRId64 ".%03" PRId64 "\n", t / NS_PER_S, (t % NS_PER_S) / 1000000);
    }
}

/* Board power (W) of the GPU in the cursor's current state. */
static double power_now(const om_ctx *x, const devlog_cursor *cur, const gpu_type *type)
{
    double busy[WL_CLASS_COUNT] = {0};
    for (uint32_t d = 0; d < cur->n_devs; d++) {
        if (cur->used[d] > 0) {
            busy[WL_CLASS_FP32] += cluster_device_get(x->c, cur->first_dev + d)->sms;
        }
    }
    double f = power_clock_factor(type, x->phys, busy);
    return type->tdp_w * x->phys->power_idle_frac + power_sm_demand_w(x->phys, busy, f);
}

/* One series: device index `d` on the GPU (-1: the GPU as a whole), every sample. On a
 * re-partitioned GPU (lay non-NULL) a sample is written only while DCGM would show the series:
 * an instance's while it exists, the GPU-level utilisation and memory while MIG is off (power
 * always). GPU_I_ID is the device's index on its GPU: on a re-partitioned GPU every placement it
 * may have has its own (model/cluster.h candidates), so a label set is one instance, and the
 * series of one instance is written in one piece (OpenMetrics: a metric's points together). */
static void put_series(const om_ctx *x, const struct family *fam, gpu_id g, int d,
                       devlog_layout *lay)
{
    const cluster_gpu *cg = cluster_gpu_get(x->c, g);
    const cluster_device *dev = d < 0 ? NULL : cluster_device_get(x->c, cg->first_dev + (dev_id)d);
    devlog_cursor cur;
    devlog_cursor_init(&cur, x->log, x->c, g);
    sim_time t = 0, prev = 0, busy_prev = 0;
    double energy_j = 0; /* integral of power over (prev, cur.t] */
    do {
        bool show = true;
        if (lay) {
            devlog_layout_advance(lay, t);
            show = d >= 0 ? lay->on[d] : fam->kind == FAM_POWER || !devlog_layout_mig(lay);
        }
        double value = 0;
        if (fam->kind == FAM_POWER) {
            while (devlog_cursor_next_time(&cur) <= t) {
                sim_time nt = devlog_cursor_next_time(&cur);
                energy_j += power_now(x, &cur, cg->type) * sim_time_to_s(nt - cur.t);
                devlog_cursor_advance(&cur, nt);
            }
            energy_j += power_now(x, &cur, cg->type) * sim_time_to_s(t - cur.t);
            devlog_cursor_advance(&cur, t);
            value = t > prev ? energy_j / sim_time_to_s(t - prev) : power_now(x, &cur, cg->type);
            energy_j = 0;
        } else {
            devlog_cursor_advance(&cur, t);
        }
        sim_time busy = d < 0 ? cur.gpu_busy_ns : cur.busy_ns[d];
        double frac;
        if (t == prev) { /* the first sample: the state at that instant */
            bool busy_now = false;
            for (uint32_t k = 0; k < cur.n_devs; k++) {
                busy_now = busy_now || ((d < 0 || (int)k == d) && cur.used[k] > 0);
            }
            frac = busy_now ? 1 : 0;
        } else {
            frac = (double)(busy - busy_prev) / (double)(t - prev);
        }
        uint64_t used = 0;
        for (uint32_t k = 0; k < cur.n_devs; k++) {
            used += d < 0 || (int)k == d ? cur.mem_bytes[k] : 0;
        }
        uint64_t cap = dev ? dev->mem_bytes : cg->type->mem_bytes;
        if (!show) {
            busy_prev = busy;
            prev = t;
            continue;
        }
        fputs(fam->name, x->f);
        put_labels(x, g, dev);
        switch (fam->kind) {
        case FAM_GPU_UTIL:
            fprintf(x->f, " %.0f", 100 * frac);
            break;
        case FAM_GR_ACTIVE:
            fprintf(x->f, " %.6f", frac);
            break;
        case FAM_FB_USED:
            fprintf(x->f, " %.0f", ceil((double)used / MIB));
            break;
        case FAM_FB_FREE:
            fprintf(x->f, " %.0f", used >= cap ? 0.0 : floor((double)(cap - used) / MIB));
            break;
        case FAM_POWER:
            fprintf(x->f, " %.3f", value);
            break;
        }
        put_timestamp(x, t);
        busy_prev = busy;
        prev = t;
    } while (devlog_next_sample(&t, x->interval, x->end));
    devlog_cursor_fini(&cur);
}

double out_energy_j(const world *w, const phys_params *phys)
{
    devlog log;
    devlog_build(w, &log);
    om_ctx x = {.c = world_cluster(w), .log = &log, .phys = phys};
    double e = 0;
    for (gpu_id g = 0; g < cluster_n_gpus(x.c); g++) {
        const cluster_gpu *cg = cluster_gpu_get(x.c, g);
        devlog_cursor cur;
        devlog_cursor_init(&cur, &log, x.c, g);
        while (devlog_cursor_next_time(&cur) <= log.end) {
            sim_time nt = devlog_cursor_next_time(&cur);
            e += power_now(&x, &cur, cg->type) * sim_time_to_s(nt - cur.t);
            devlog_cursor_advance(&cur, nt);
        }
        e += power_now(&x, &cur, cg->type) * sim_time_to_s(log.end - cur.t);
        devlog_cursor_fini(&cur);
    }
    devlog_fini(&log);
    return e;
}

int out_metrics_om(FILE *f, const world *w, const phys_params *phys, sim_time interval_ns)
{
    SIM_ASSERT(interval_ns > 0);
    devlog log;
    devlog_build(w, &log);
    om_ctx x = {.f = f,
                .c = world_cluster(w),
                .log = &log,
                .phys = phys,
                .interval = interval_ns,
                .end = log.end,
                .whole_s = interval_ns % NS_PER_S == 0};
    if (x.whole_s && x.end % NS_PER_S != 0) {
        x.end += NS_PER_S - x.end % NS_PER_S;
    }
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        const struct family *fam = &families[i];
        fprintf(f, "# TYPE %s gauge\n# HELP %s %s\n", fam->name, fam->name, fam->help);
        for (gpu_id g = 0; g < cluster_n_gpus(x.c); g++) {
            const cluster_gpu *cg = cluster_gpu_get(x.c, g);
            if (fam->kind == FAM_POWER && cg->type->tdp_w <= 0) {
                continue;
            }
            if (cg->reconfigurable) { /* its instances come and go: each series while it exists */
                devlog_layout lay;
                devlog_layout_init(&lay, &log, x.c, g);
                put_series(&x, fam, g, -1, &lay);
                for (uint32_t d = 0; fam->per_instance && d < cg->n_devs; d++) {
                    if (cluster_device_get(x.c, cg->first_dev + d)->profile) {
                        devlog_layout_init(&lay, &log, x.c, g);
                        put_series(&x, fam, g, (int)d, &lay);
                    }
                }
            } else if (fam->kind == FAM_GPU_UTIL && cg->mig_enabled) {
                continue; /* DCGM has no GPU_UTIL for a GPU in MIG mode */
            } else if (fam->per_instance && cg->mig_enabled) {
                for (uint32_t d = 0; d < cg->n_devs; d++) {
                    put_series(&x, fam, g, (int)d, NULL);
                }
            } else {
                put_series(&x, fam, g, -1, NULL);
            }
        }
    }
    fputs("# EOF\n", f);
    devlog_fini(&log);
    return ferror(f) ? SIM_EIO : 0;
}
